"""The GODSGLOOM Attack Test, step by step, with scripted dice (seed 004).

Default units (helpers.unit): statline 3🟥 2🟦, Guard 2🟥 2🟦, 5 health. Scripted
faces are drawn attacker 🟥, attacker 🟦, defender 🟥 (melee only), defender 🟦,
then rerolls as chosen, then Critical Effects' extra dice.
"""

from __future__ import annotations

import json

import pytest

from vtt_bridge import InvalidRequest, Option, hookimpl

from .helpers import active, after, changes, rolls, run, start, steps, unit

MISS_9 = [2] * 9  # every die of a default melee test fails


# -- ATC.10 Roll ---------------------------------------------------------------------


def test_melee_both_roll_everything_and_each_pool_is_its_own_roll():
    record = run(dice=[3, 4, 1, 5, 2, 6, 1, 3, 2])
    assert list(rolls(record)) == ["attacker 🟥", "attacker 🟦", "defender 🟥", "defender 🟦"]
    assert [s["step"] for s in record["steps"] if s["rolls"]] == ["roll"]
    assert changes(record, "roll") == {
        "attacker_hits": (0, 2),
        "attacker_blocks": (0, 1),
        "defender_hits": (0, 1),
        "defender_blocks": (0, 1),
    }
    foundry = steps(record, "roll")[0]["rolls"][0]
    assert foundry["formula"] == "3d6cs>=3" and foundry["total"] == 2


def test_ranged_defender_rolls_only_guard_defence_dice():
    record = run(declaration={"attack": "ranged"}, dice=[6, 5, 4, 3, 3, 3, 1])
    assert list(rolls(record)) == ["attacker 🟥", "attacker 🟦", "defender 🟦"]
    outcome = record["outcome"]
    assert (outcome["attacker_hits"], outcome["attacker_blocks"]) == (3, 2)
    assert (outcome["defender_hits"], outcome["defender_blocks"]) == (0, 1)
    assert (outcome["damage"], outcome["attacker_wounds"]) == (2, 0)
    assert "a" not in record["changes"]


def test_declared_modifiers_change_the_pools():
    record = run(
        declaration={"modifiers": {"attack": 1, "defence": -1}, "defender_modifiers": {"attack": -2, "defence": 1}},
        dice=[2] * 8,
    )
    assert {label: len(dice) for label, dice in rolls(record).items()} == {
        "attacker 🟥": 4,
        "attacker 🟦": 1,
        "defender 🟦": 3,  # Guard 🟥 2 − 2: no roll at all
    }


def test_boost_adds_a_die_of_each_colour_and_is_spent_weak_too():
    record = run(unit(boost=2), unit(boost=1, weak=1), dice=[2] * 13)
    assert {label: len(dice) for label, dice in rolls(record).items()} == {
        "attacker 🟥": 5,
        "attacker 🟦": 4,
        "defender 🟥": 2,
        "defender 🟦": 2,
    }
    assert changes(record, "roll")["attacker_attack_dice"] == (3, 5)
    assert (after(record, "a")["boost"], after(record, "d")["boost"], after(record, "d")["weak"]) == (0, 0, 0)


def test_weak_takes_a_die_of_each_colour_then_is_discarded():
    record = run(unit(weak=1), dice=[2] * 7)
    assert {label: len(dice) for label, dice in rolls(record).items()} == {
        "attacker 🟥": 2,
        "attacker 🟦": 1,
        "defender 🟥": 2,
        "defender 🟦": 2,
    }
    assert record["changes"]["a"]["before"]["weak"] == 1 and after(record, "a")["weak"] == 0


def test_a_ranged_defender_spends_its_weak_on_the_defence_dice_alone():
    record = run(defender=unit(weak=1), declaration={"attack": "ranged"}, dice=[2] * 6)
    assert len(rolls(record)["defender 🟦"]) == 1
    assert changes(record, "roll")["defender_defence_dice"] == (2, 1)
    assert after(record, "d")["weak"] == 0


# -- ATC.20 Reroll (RDP) ----------------------------------------------------------------


def test_no_reroll_decision_when_nobody_holds_rerolls():
    record = run(dice=MISS_9)
    assert record["decisions"] == []
    assert [s["step"] for s in record["steps"]] == [
        "roll", "reroll", "active_pool_reroll", "active_single_reroll", "inactive_pool_reroll",
        "inactive_single_reroll", "criticals", "auto_successes", "cancel", "inflict",
    ]


def test_pool_reroll_rerolls_every_die_both_colours_successes_too_and_the_new_results_replace_the_old():
    """Brief RDP.10: "Pool Reroll (reroll every die, successes too; new results replace old)" —
    every die of the pool, 🟥 and 🟦 alike: 🟥 [6 5 1] → [1 2 2], 🟦 [2 2] → [4 1]."""
    res = start(unit(rerolls={"pool": 1}), dice=[6, 5, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 4, 1])
    decision = res.advance()
    assert decision.key == "active_pool_reroll" and decision.token == "a"
    assert [o.id for o in decision.options] == ["pool", "decline"]
    assert decision.option("pool").label == "Pool Reroll: reroll every die, both colours, successes too (🟥 [6, 5, 1], 🟦 [2, 2])"
    # What it gives: 5 dice, each a success on 3+ (4 in 6), beat the 2 showing — 192/243.
    assert decision.option("pool").detail == "79% to beat 2 successes"
    assert decision.default == "decline"
    res.answer("pool")
    assert res.advance() is None  # the only Pool Reroll is spent: not asked again
    record = res.record
    # ATC.10 shows the dice as judged there; the reroll is a roll of its own under RDP.10,
    # the replaced dice marked rerolled and the new results after them.
    assert rolls(record)["attacker 🟥"] == [(6, True), (5, True), (1, True)]
    assert rolls(record)["attacker 🟥 Pool Reroll"] == [(6, False), (5, False), (1, False), (1, True), (2, True), (2, True)]
    assert rolls(record)["attacker 🟦 Pool Reroll"] == [(2, False), (2, False), (4, True), (1, True)]
    (reroll_step,) = [s for s in steps(record, "active_pool_reroll") if s["rolls"]]
    red = reroll_step["rolls"][0]
    assert red["formula"] == "3d6cs>=3" and red["total"] == 0
    assert all(r.get("rerolled") for r in red["terms"][0]["results"][:3])
    assert steps(record, "roll")[0]["rolls"][0]["total"] == 2
    assert changes(record, "active_pool_reroll") == {
        "attacker_pool_rerolls": (1, 0), "attacker_hits": (2, 0), "attacker_blocks": (0, 1),
    }  # fmt: skip
    assert record["outcome"]["hit"] is False


def test_single_die_rerolls_one_at_a_time_the_same_die_twice():
    res = start(unit(rerolls={"single": 2}), dice=[1, 4, 4, 2, 2, 2, 2, 2, 2, 2, 5])
    first = res.advance()
    assert first.key == "active_single_reroll"
    assert [o.id for o in first.options] == [
        "die:attack:1", "die:attack:2", "die:attack:3", "die:defence:1", "die:defence:2", "decline",
    ]
    assert "shows 1" in first.option("die:attack:1").label
    # A 3+ succeeds: a 1 rerolled becomes a success on 4 faces in 6; a 4 loses it on 2 in 6.
    assert first.option("die:attack:1").detail == "67% to make it a success"
    assert first.option("die:attack:2").detail == "33% to lose this success"
    res.answer("die:attack:1")
    second = res.advance()  # asked again after seeing the new result
    assert second.key == "active_single_reroll"
    assert "shows 2" in second.option("die:attack:1").label
    res.answer("die:attack:1")
    assert res.advance() is None
    record = res.record
    assert rolls(record)["attacker 🟥"] == [(1, True), (4, True), (4, True)]  # as judged at ATC.10
    rerolled = [s["rolls"] for s in steps(record, "active_single_reroll") if s["rolls"]]
    assert [[(r["options"]["flavor"], r["formula"], r["total"]) for r in rs] for rs in rerolled] == [
        [("attacker 🟥 die 1 reroll", "1d6cs>=3", 0)],
        [("attacker 🟥 die 1 reroll", "1d6cs>=3", 1)],
    ]
    assert [[(x["result"], x["active"]) for x in rs[0]["terms"][0]["results"]] for rs in rerolled] == [
        [(1, False), (2, True)],
        [(2, False), (5, True)],
    ]
    assert [(d["key"], d["answer"]["option"], d["how"]) for d in record["decisions"]] == [
        ("active_single_reroll", "die:attack:1", "answered"),
        ("active_single_reroll", "die:attack:1", "answered"),
    ]
    assert (record["outcome"]["attacker_hits"], record["outcome"]["damage"]) == (3, 3)
    assert after(record, "d")["health"] == {"current": 2, "max": 5}


def test_single_die_rerolls_given_in_advance_as_a_list():
    record = run(
        unit(rerolls={"single": 2}),
        dice=[1, 4, 4, 2, 2, 2, 2, 2, 2, 2, 5],
        answers={"active_single_reroll": ["die:attack:1", "die:attack:1"]},
    )
    assert active(record, "attacker 🟥") == [5, 4, 4]  # die 1: 1 → 2 → 5
    assert [d["how"] for d in record["decisions"]] == ["given", "given"]


def test_unanswered_reroll_defaults_to_done_and_rerolls_nothing():
    record = run(unit(rerolls={"pool": 1, "single": 2}), dice=[1, 4, 4, 2, 2, 2, 2, 2, 2])
    assert [(d["key"], d["answer"]["option"], d["how"]) for d in record["decisions"]] == [
        ("active_pool_reroll", "decline", "default"),
        ("active_single_reroll", "decline", "default"),
    ]
    assert active(record, "attacker 🟥") == [1, 4, 4]
    assert "a" not in record["changes"]  # rerolls held per test are not token resources


def test_the_inactive_player_rerolls_after_the_active_one():
    record = run(
        unit(rerolls={"single": 1}),
        unit(rerolls={"pool": 1, "single": 1}),
        # the defender's Pool Reroll: 🟥 [2 2] → [2 2], 🟦 [1 2] → [5 6]; then its 🟥 die 1 → 4
        dice=[2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 5, 6, 4],
        answers={"inactive_pool_reroll": "pool", "inactive_single_reroll": "die:attack:1"},
    )
    assert [(d["key"], d["token"], d["answer"]["option"]) for d in record["decisions"]] == [
        ("active_single_reroll", "a", "decline"),
        ("inactive_pool_reroll", "d", "pool"),
        ("inactive_single_reroll", "d", "die:attack:1"),
    ]
    assert active(record, "defender 🟦") == [5, 6]
    assert active(record, "defender 🟥") == [4, 2]
    outcome = record["outcome"]
    assert (outcome["defender_hits"], outcome["defender_blocks"], outcome["attacker_wounds"]) == (1, 2, 1)
    assert after(record, "a")["health"]["current"] == 4


def test_a_pack_offering_a_reroll_the_player_does_not_hold_is_refused():
    class Generous:
        @hookimpl
        def godsgloom_active_single_reroll_options(self, ctx):
            return [Option(id="die:attack:1", label="free reroll?")]

    from vtt_bridge import Token, make_host

    from .helpers import host

    h = make_host(plugins=["vtt_godsgloom", Generous()], entry_points=False, environ={})
    system = host().load_system("godsgloom", unit())
    tokens = {"a": Token("a", "A", "godsgloom", system), "d": Token("d", "D", "godsgloom", system)}
    res = h.start("godsgloom", tokens, attacker="a", targets=["d"], declaration={}, dice=MISS_9 + [6])
    assert res.advance().key == "active_single_reroll"
    res.answer("die:attack:1")
    with pytest.raises(InvalidRequest) as err:
        res.advance()
    assert err.value.details["step"] == "active_single_reroll"


# -- ATC.30 Criticals (CEP) ----------------------------------------------------------------


def test_two_sixes_on_attack_and_two_ones_on_defence_each_roll_one_extra_die():
    record = run(dice=[6, 6, 1, 1, 1, 2, 2, 2, 2, 5, 4])
    assert active(record, "attacker 🟥") == [6, 6, 1, 5]
    assert active(record, "attacker 🟦") == [1, 1, 4]
    assert changes(record, "criticals") == {"attacker_hits": (2, 3), "attacker_blocks": (0, 1)}
    assert (record["outcome"]["damage"], after(record, "d")["health"]["current"]) == (3, 2)


def test_the_defender_has_critical_effects_too():
    record = run(dice=[2, 2, 2, 2, 2, 6, 6, 1, 1, 3, 3])
    assert active(record, "defender 🟥") == [6, 6, 3]
    assert active(record, "defender 🟦") == [1, 1, 3]
    assert record["outcome"]["attacker_wounds"] == 3
    assert after(record, "a")["health"]["current"] == 2


def test_an_extra_die_does_not_trigger_another_critical():
    # A third 6 from the extra die rolls nothing more: a chained effect would run out of dice.
    record = run(dice=[6, 6, 2, 2, 2, 2, 2, 2, 2, 6])
    assert active(record, "attacker 🟥") == [6, 6, 2, 6]
    assert record["outcome"]["damage"] == 3


def test_criticals_read_the_dice_as_they_stand_after_rerolls():
    record = run(
        unit(rerolls={"single": 2}),
        dice=[2, 2, 3, 2, 2, 2, 2, 2, 2, 6, 6, 1],
        answers={"active_single_reroll": ["die:attack:1", "die:attack:2"]},
    )
    assert active(record, "attacker 🟥") == [6, 6, 3, 1]  # dice 1 and 2 rerolled to 6s, then the extra die
    assert [n["text"] for n in steps(record, "criticals")[0]["notes"]][0].startswith("attacker: two or more 6s")


def test_a_pool_reroll_can_undo_a_critical():
    record = run(
        unit(rerolls={"pool": 1}),
        dice=[6, 6, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
        answers={"active_pool_reroll": "pool"},
    )
    assert active(record, "attacker 🟥") == [2, 2, 2]
    assert steps(record, "criticals")[0]["notes"] == []


# -- ATC.40 Auto-successes ----------------------------------------------------------------


def test_auto_successes_are_added_after_the_dice():
    record = run(
        unit(auto={"hits": 1, "blocks": 1}),
        unit(auto={"hits": 2, "blocks": 1}),
        declaration={"auto": {"hits": 1}},
        dice=MISS_9,
    )
    assert changes(record, "auto_successes") == {
        "attacker_hits": (0, 2),
        "attacker_blocks": (0, 1),
        "defender_hits": (0, 2),
        "defender_blocks": (0, 1),
    }
    assert (record["outcome"]["damage"], record["outcome"]["attacker_wounds"]) == (1, 1)


def test_a_ranged_defender_adds_no_auto_hits():
    record = run(defender=unit(auto={"hits": 2, "blocks": 1}), declaration={"attack": "ranged"}, dice=[2] * 7)
    assert changes(record, "auto_successes") == {"defender_blocks": (0, 1)}


def test_auto_successes_are_never_offered_for_reroll():
    res = start(unit(auto={"hits": 2}, rerolls={"single": 1}), dice=MISS_9)
    decision = res.advance()
    assert [o.id for o in decision.options if o.id.startswith("die:")] == [
        "die:attack:1", "die:attack:2", "die:attack:3", "die:defence:1", "die:defence:2",
    ]


# -- ATC.50 Cancel and ATC.60 Inflict ------------------------------------------------------


def test_melee_cancels_both_ways_and_wounds_land_on_both_at_once():
    two_three_one = {"statline": {"attack": 3, "defence": 1}, "guard": {"attack": 3, "defence": 1}}
    record = run(unit(**two_three_one), unit(**two_three_one), dice=[5, 5, 5, 2, 4, 4, 4, 3])
    assert changes(record, "cancel") == {"wounds": (0, 2), "attacker_wounds": (0, 3)}
    assert after(record, "d")["health"]["current"] == 3
    assert after(record, "a")["health"]["current"] == 2


def test_a_destroyed_defender_still_wounds_the_attacker():
    fighters = {"statline": {"attack": 3, "defence": 1}, "guard": {"attack": 3, "defence": 1}, "health": {"current": 2, "max": 3}}
    record = run(unit(**fighters), unit(**fighters), dice=[5, 5, 5, 2, 4, 4, 4, 3])
    assert record["outcome"]["conditions"] == {"d": ["destroyed"], "a": ["destroyed"]}
    assert after(record, "d")["health"]["current"] == 0 and after(record, "a")["health"]["current"] == 0


@pytest.mark.parametrize(
    ("health", "hits", "left", "conditions", "weak"),
    [
        (3, [3, 3, 2], 1, ["decimated"], 1),  # exactly 1: Decimated, gains a Weak token
        (4, [3, 3, 2], 2, [], 0),
        (2, [3, 3, 2], 0, ["destroyed"], 0),  # 0: Destroyed
        (2, [3, 3, 3], 0, ["destroyed"], 0),  # below 0: Destroyed
    ],
)
def test_status_check_after_the_wounds(health, hits, left, conditions, weak):
    record = run(defender=unit(health={"current": health, "max": 5}), dice=[*hits, 2, 2, 2, 2, 2, 2])
    assert after(record, "d")["health"]["current"] == left
    assert after(record, "d").get("weak", 0) == weak
    assert record["outcome"]["conditions"] == ({"d": conditions} if conditions else {})


def test_a_unit_decimated_in_the_test_it_spent_weak_on_keeps_the_new_weak_token():
    record = run(defender=unit(health={"current": 3, "max": 5}, weak=1), dice=[3, 3, 2, 2, 2, 2, 2])
    assert changes(record, "roll")["defender_attack_dice"] == (2, 1)
    assert after(record, "d")["health"]["current"] == 1
    assert after(record, "d")["weak"] == 1  # the old one discarded, a new one gained


def test_outcome_follows_the_conventions():
    outcome = run(dice=[3, 4, 1, 5, 2, 6, 1, 3, 2])["outcome"]
    assert outcome == {
        "hit": True,
        "damage": 1,
        "conditions": {},
        "attack": "melee",
        "attacker_wounds": 0,
        "attacker_hits": 2,
        "attacker_blocks": 1,
        "defender_hits": 1,
        "defender_blocks": 1,
    }


def test_same_seed_same_attack_and_the_record_is_json():
    attacker = unit(rerolls={"pool": 1, "single": 1}, boost=1)
    first = run(attacker, seed=2024)
    assert first == run(attacker, seed=2024)
    json.dumps(first)
    assert any(run(attacker, seed=s)["steps"] != first["steps"] for s in (1, 2, 3))


def test_seeded_attacks_resolve_whatever_the_dice():
    for seed in range(40):
        record = run(unit(rerolls={"pool": 1, "single": 2}), unit(rerolls={"single": 1}), seed=seed)
        outcome = record["outcome"]
        assert outcome["damage"] == max(0, outcome["attacker_hits"] - outcome["defender_blocks"])
        assert outcome["hit"] is (outcome["damage"] > 0)
