"""An AOE's critical effect on every model it hits; step 10's "choose one model" as a decision.

The table of test_aoe.py: the jack (RAT 5) 8" from grunt a (DEF 12, ARM 14, one box);
b and d stand under a 3" AOE centred on a, c does not.
"""

from __future__ import annotations

from .kit import after, at, attack, grunt, jack, run, steps, tokens

QUAKE = {"name": "Quake", "kind": "ranged", "RNG": 10, "POW": 13, "AOE": 3, "critical": "Critical Knockdown"}


def table():
    return tokens(
        jack(weapons=[QUAKE], focus=0),
        grunt("a", position=at(0, 8)),
        grunt("b", position=at(1.5, 8)),
        grunt("c", position=at(2.2, 8)),
        grunt("d", position=at(0, 10.05)),
    )


def test_an_aoe_critical_applies_its_effect_to_every_model_the_aoe_hits():
    """Brief (attack roll): "An AOE attack's critical effect applies to every model hit by the
    AOE." [4 4] + RAT 5 = 13 against DEF 12: a critical hit on a; b and d are under the AOE.
    Damage: a 13 + 1 + 1 − 14 = 1; b and d 7 + 1 + 1 − 14: none."""
    record = run(table(), weapon="Quake", dice=[4, 4] + [1] * 6)
    assert record["outcome"]["critical"] is True
    assert record["outcome"]["conditions"] == {
        "a": ["knocked_down", "disabled", "boxed", "destroyed"], "b": ["knocked_down"], "d": ["knocked_down"],
    }  # fmt: skip
    assert all(after(record, m)["knocked_down"] for m in ("a", "b", "d"))
    assert "c" not in record["changes"]


def test_an_aoe_hit_without_a_critical_knocks_nobody_down():
    record = run(table(), weapon="Quake", dice=[4, 3] + [1] * 6)
    assert record["outcome"]["critical"] is False
    assert not any("knocked_down" in c for c in record["outcome"]["conditions"].values())


# [4 3] + 5 = 12: a hit. a: 13 + 3 + 3 − 14 = 5; b: 7 + 4 + 4 − 14 = 1; d: 7 + 6 + 6 − 14 = 5.
THREE_DAMAGED = [4, 3, 3, 3, 4, 4, 6, 6]


def test_the_active_player_chooses_each_model_to_apply_damage_to_next():
    """Seed 001, step 10: "If an attack damaged more than one model, choose one model, follow
    the damage application sequence below, then repeat for each other damaged model." """
    res = attack(table(), weapon="Quake", dice=THREE_DAMAGED)
    seen = []
    while (decision := res.advance()) is not None:
        if decision.name != "apply_next":
            res.default()
            continue
        seen.append([o.id for o in decision.options])
        assert decision.token == "jack" and decision.default == decision.options[0].id
        res.answer({"a": "d", "b": "b"}[decision.options[0].id] if len(seen) == 1 else "b")
    assert seen == [["a", "b", "d"], ["a", "b"]]  # with one model left nothing is asked
    applied = [s for s in steps(res.record) if s.startswith("apply_damage[")]
    assert applied == ["apply_damage[d]", "apply_damage[b]", "apply_damage[a]"]


def test_unanswered_the_declarations_order_is_taken():
    record = run(table(), weapon="Quake", dice=THREE_DAMAGED, application_order=["b"])
    asked = [(d["key"], d["default"], d["how"]) for d in record["decisions"] if d["name"] == "apply_next"]
    assert asked == [("apply_next", "b", "default"), ("apply_next", "a", "default")]
    assert [s for s in steps(record) if s.startswith("apply_damage[")] == [
        "apply_damage[b]", "apply_damage[a]", "apply_damage[d]",
    ]  # fmt: skip


def test_one_damaged_model_is_not_asked_about():
    record = run(table(), weapon="Quake", dice=[4, 3] + [1] * 6)
    assert "apply_next" not in [d["name"] for d in record["decisions"]]
