"""Shield Guard at step 6: the guard's owner decides to take a ranged hit."""

import pytest

from tests.plugins.warmachine_mk3.kit import after, at, attack, grunt, jack, run, step, tokens

# The jack (alice's) shoots Bob's grunt "a" 8" away; Bob's guard "g" stands 1.5" beside it.


def table(**guard):
    return tokens(
        jack(focus=0),
        grunt("a", position=at(0, 8)),
        grunt("g", **{"position": at(1.5, 8), "ARM": 16, "boxes": 5, "shield_guard": True, **guard}),
    )


def test_the_guards_owner_is_asked_and_no_is_the_default():
    res = attack(table(), dice=[4, 3, 6, 6], pack=True)
    decision = res.advance()
    assert decision.key == "redirect" and decision.step == "redirect"
    assert decision.token == "g"  # the guard's owner decides, not the target's
    assert [o.id for o in decision.options] == ["shield_guard:g", "decline"]
    assert decision.default == "decline"


def test_a_guard_that_steps_in_is_hit_and_suffers_the_damage_instead():
    # 4+3 + 5 hits; 6+6 + 12 - ARM 16 = 8 damage on the guard's 5 boxes
    record = run(table(), dice=[4, 3, 6, 6], pack=True, answers={"redirect": "shield_guard:g"})
    models = record["outcome"]["models"]
    assert models["a"]["hit"] is False and models["a"]["how"] == "redirected to g"
    assert (models["g"]["how"], models["g"]["damage"]) == ("redirected", 5)
    assert after(record, "g")["shield_guard_used"] is True
    assert after(record, "g")["destroyed"] is True
    assert "a" not in record["changes"]
    assert record["outcome"]["damage"] == 0
    notes = [n["text"] for n in step(record, "redirect")["notes"]]
    assert notes == ["Shield Guard: G steps in", "G is hit automatically instead of A"]
    assert {"number": "redirect_to", "from": "", "to": "g", "plugin": "warmachine_abilities"} in (
        step(record, "redirect")["changes"]
    )


def test_unanswered_the_target_takes_the_hit():
    res = attack(table(), dice=[4, 3, 6, 6], pack=True)
    res.advance()
    res.default("timeout")
    assert res.advance() is None
    record = res.record
    assert after(record, "a")["destroyed"] is True and "g" not in record["changes"]
    assert record["decisions"][0]["how"] == "timeout"


@pytest.mark.parametrize(
    ("guard", "kw"),
    [
        ({"position": at(0, 13)}, {}),  # 5 - 1.18 = 3.82" from the target
        ({"shield_guard_used": True}, {}),  # once per round
        ({"knocked_down": True}, {}),
        ({"stationary": True}, {}),
        ({"shield_guard": False}, {}),
        ({}, {"weapon": "Flamer"}),  # not against sprays
        ({}, {"weapon": "Hammer"}),  # ranged attacks only
        ({}, {"dice": [1, 2]}),  # the target was not hit
    ],
)
def test_no_shield_guard(guard, kw):
    t = table(**guard)
    if kw.get("weapon") == "Hammer":
        t["a"] = grunt("a", position=at(0, 1.5))
        t["g"] = grunt("g", position=at(1.5, 1.5), shield_guard=True)
    record = run(t, pack=True, **{"dice": [4, 3, 1, 1], **kw})
    assert [d["key"] for d in record["decisions"]] == []


def test_an_enemy_guard_or_a_friendly_attack_gets_no_shield_guard():
    t = table()
    t["g"] = grunt("g", owner="alice", position=at(1.5, 8), shield_guard=True)
    assert run(t, dice=[4, 3, 1, 1], pack=True)["decisions"] == []
    t = table()
    t["jack"] = jack(focus=0, owner="bob")
    assert run(t, dice=[4, 3, 1, 1], pack=True)["decisions"] == []


def test_two_guards_are_asked_in_turn_nearest_first():
    t = table()
    t["h"] = grunt("h", position=at(-2, 8), shield_guard=True)
    res = attack(t, dice=[4, 3, 6, 6], pack=True)
    first = res.advance()
    assert (first.token, [o.id for o in first.options]) == ("g", ["shield_guard:g", "decline"])
    res.answer("decline")
    second = res.advance()
    assert (second.token, [o.id for o in second.options]) == ("h", ["shield_guard:h", "decline"])
    res.answer("shield_guard:h")
    assert res.advance() is None
    assert after(res.record, "h")["shield_guard_used"] is True and "g" not in res.record["changes"]


def test_an_aoe_guarded_centres_on_the_guard():
    t = table()
    t["b"] = grunt("b", position=at(3.2, 8))  # 1.7" from the guard: under a 3" AOE on it, not on a
    record = run(t, weapon="Bombard", dice=[4, 3, 1, 1, 1, 1, 1, 1], pack=True,
                 answers={"redirect": "shield_guard:g"})
    models = record["outcome"]["models"]
    assert models["g"]["direct"] is True and models["g"]["pow"] == 13
    assert models["b"]["blast"] is True and models["a"]["how"] == "blast"  # a is 1.5" from g: under it too


def test_the_ability_may_come_from_the_packs_token_flags():
    """``flags.warmachine_abilities.shield_guard``: the model has Shield Guard, read by the pack."""
    from vtt_bridge import Token

    t = table(shield_guard=False)
    g = t["g"].to_dict()
    t["g"] = Token.from_dict({**g, "flags": {"warmachine_abilities": {"shield_guard": True}}})
    res = attack(t, dice=[4, 3, 6, 6], pack=True)
    assert [o.id for o in res.advance().options][0] == "shield_guard:g"
