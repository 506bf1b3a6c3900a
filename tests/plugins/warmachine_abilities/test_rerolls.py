"""Reroll sources (steps 5e and 9e): a model's own ability, and one granted by a friendly model.

The jack (alice's; RAT 5, no focus, 50 mm base at (0, 0)) shoots its Cannon (POW 12) at grunt a
(bob's; DEF 12, ARM 14, one box) 8" away. The sergeant (alice's) stands at (0, 3):
3 − (50 + 30) / 2 / 25.4 = 1.43" from the jack, base edge to base edge.
"""

from __future__ import annotations

from ..warmachine_mk3.kit import after, at, attack, grunt, jack, run, tokens


def table(*, jack_rules=None, sarge=None):
    sergeant = grunt("sarge", owner="alice", position=at(0, 3), **(sarge if sarge is not None else {"grants_reroll": 5.0}))
    # no focus: no boost decisions, only the rerolls
    return tokens(jack(focus=0, **(jack_rules or {})), grunt("a", position=at(0, 8)), sergeant)


def keys(record):
    return [(d["key"], [o["id"] for o in d["options"]], d["answer"]["option"]) for d in record["decisions"]]


def test_a_models_own_ability_rerolls_its_missed_attack_roll_once():
    """Seed 001, step 5e: "Resolve effects that cause the attack roll to be rerolled. Return to
    step b if needed." [3 3] + 5 = 11 misses DEF 12; rerolled [2 1] + 5 = 8 misses again, and
    the ability rerolls each roll once: not offered again."""
    record = run(table(jack_rules={"reroll_attack": True}, sarge={}), dice=[3, 3, 2, 1],
                 answers={"reroll_attack": "reroll:self"}, pack=True)  # fmt: skip
    assert keys(record) == [("reroll_attack[a]", ["reroll:self", "decline"], "reroll:self")]
    assert record["decisions"][0]["token"] == "jack"
    assert record["outcome"]["hit"] is False


def test_a_hit_is_not_rerolled_by_a_missed_rolls_ability():
    record = run(table(jack_rules={"reroll_attack": True}, sarge={}), dice=[5, 3, 1, 1], pack=True)
    assert record["outcome"]["hit"] is True and keys(record) == []


def test_a_friendly_models_grant_rerolls_one_roll_per_attack():
    """The sergeant grants one reroll per attack within 5": the missed [3 3] is rerolled to
    [5 3] = 13, a hit; the damage roll [1 1] + 12 − 14 is no damage, but the grant is spent,
    so the damage reroll is not offered."""
    record = run(table(), dice=[3, 3, 5, 3, 1, 1], answers={"reroll_attack": "reroll:sarge"}, pack=True)
    assert keys(record) == [("reroll_attack[a]", ["reroll:sarge", "decline"], "reroll:sarge")]
    assert record["outcome"]["hit"] is True and record["outcome"]["damage"] == 0


def test_the_grant_may_be_kept_for_the_damage_roll():
    """Not needed at 5e (the roll hit), the grant rerolls the damage: [1 1] → [6 6] + 12 = 24
    against ARM 14: 10 damage."""
    res = attack(table(), dice=[5, 3, 1, 1, 6, 6], pack=True)
    seen = []
    while (decision := res.advance()) is not None:
        seen.append((decision.key, [o.id for o in decision.options]))
        res.answer("reroll:sarge" if decision.name == "reroll_damage" else "decline")
    assert seen == [("reroll_damage[a]", ["reroll:sarge", "decline"])]
    assert res.record["outcome"]["models"]["a"]["damage_roll"] == 24  # 10 damage past ARM 14
    assert after(res.record, "a")["destroyed"] is True  # its one box is marked


def test_no_grant_from_afar_or_from_an_enemy():
    far = table(sarge={"grants_reroll": 1.0})  # 1.43" away
    assert keys(run(far, dice=[3, 3], pack=True)) == []
    enemy = table()
    enemy["sarge"] = grunt("sarge", owner="bob", position=at(0, 3), grants_reroll=5.0)
    assert keys(run(enemy, dice=[3, 3], pack=True)) == []


def test_the_models_own_damage_reroll():
    """Seed 001, step 9e: "Resolve effects that cause the damage roll to be rerolled." The
    jack's own ability rerolls its damage roll [1 1] → [6 6]: 24 against ARM 14."""
    record = run(table(jack_rules={"reroll_damage": True}, sarge={}), dice=[5, 3, 1, 1, 6, 6],
                 answers={"reroll_damage": "reroll:self"}, pack=True)  # fmt: skip
    assert keys(record) == [("reroll_damage[a]", ["reroll:self", "decline"], "reroll:self")]
    assert record["outcome"]["models"]["a"]["damage_roll"] == 24
    assert record["outcome"]["conditions"] == {"a": ["disabled", "boxed", "destroyed"]}


def test_the_reroll_abilities_may_come_from_the_packs_token_flags():
    """``flags.warmachine_abilities``: ``reroll_attack`` on the jack and ``grants_reroll`` on the
    sergeant, read by the pack as the ruleset's own fields are: [3 3] + 5 = 11 misses DEF 12;
    both sources are offered, the jack's own first. Rerolled [2 1] + 5 = 8 misses again: the
    grant is still there (declined by default), the jack's own ability is spent."""
    from vtt_bridge import Token

    t = table(sarge={})
    for token_id, mine in (("jack", {"reroll_attack": True}), ("sarge", {"grants_reroll": 5.0})):
        t[token_id] = Token.from_dict({**t[token_id].to_dict(), "flags": {"warmachine_abilities": mine}})
    record = run(t, dice=[3, 3, 2, 1], answers={"reroll_attack": "reroll:self"}, pack=True)
    assert keys(record) == [
        ("reroll_attack[a]", ["reroll:self", "reroll:sarge", "decline"], "reroll:self"),
        ("reroll_attack[a]", ["reroll:sarge", "decline"], "decline"),
    ]
    assert record["outcome"]["hit"] is False
