"""highest_die, step by step, with scripted dice (seed 003).

Default combatants (helpers): the attacker swings a Blade (d8 d8 d6, Damage +0,
normal, melee); the defender parries or counters with a Staff (d6 d6 d6) and
dodges with its Body d6; each soaks with its Body d6. Scripted faces are drawn:
attack dice, defense dice, soak dice.
"""

from __future__ import annotations

import json

import pytest

from vtt_bridge import InvalidRequest, NotFound

from .helpers import BLADE, BOW, STAFF, attacker, changes, conditions, defender, fighter, run, start, step

PARRY = {"defense": "parry"}


# -- every example of the seed, through the whole sequence -------------------------------


@pytest.mark.parametrize(
    ("attack", "parry", "successes", "marks", "after"),
    [
        ([7, 6, 4], [5, 3, 1], 2, [True, True, False], ["reeling", "hurt", "afraid"]),
        ([7, 5, 4], [5, 3, 1], 1, [True, False, False], ["reeling", "hurt"]),
    ],
)
def test_seed_examples_of_dice_beating_the_highest_die(attack, parry, successes, marks, after):
    record = run(dice=[*attack, *parry, 2], answers=PARRY)
    assert record["outcome"]["successes"] == successes
    assert record["outcome"]["damage"] == successes  # "That's two points of Damage."
    roll = step(record, "roll")["rolls"][0]
    assert roll["formula"] == "2d8cs>=6 + 1d6cs>=6"  # strictly above the highest 5
    assert [r["success"] for t in roll["terms"] if t["class"] == "Die" for r in t["results"]] == marks
    assert conditions(record, "d") == after


@pytest.mark.parametrize(("successes", "damage"), [(1, 1), (2, 3), (3, 4), (4, 6)])
def test_seed_critical_table_through_the_sequence(successes, damage):
    keen = fighter({"id": "keen", "dice": [8, 8, 8, 8], "kind": "critical"})
    faces = [8] * successes + [1] * (4 - successes)
    record = run(keen, dice=[*faces, 2, 1, 1, 2], answers=PARRY)
    assert changes(record, "damage") == {"damage": (0, damage)}


def test_slaying_doubles_the_damage_per_success_then_adds_the_bonus():
    slayer = fighter({"id": "axe", "dice": [8, 8, 6], "kind": "slaying", "damage": 1})
    record = run(slayer, dice=[7, 6, 4, 5, 3, 1, 2], answers=PARRY)
    assert record["outcome"]["damage"] == 5


# -- 1. Declare -------------------------------------------------------------------------


def test_the_declared_weapon_is_used_and_defaults_to_the_first():
    two = fighter(BLADE, {"id": "dagger", "dice": [4, 4]})
    assert changes(run(two, dice=[1, 1, 1, 1, 1, 2], answers=PARRY), "declare_attack") == {
        "attack_dice": ([], [8, 8, 6])
    }
    record = run(two, declaration={"weapon": "dagger"}, dice=[1, 1, 1, 1, 1], answers=PARRY)
    assert changes(record, "declare_attack") == {"attack_dice": ([], [4, 4])}


@pytest.mark.parametrize(
    ("a", "d", "declaration", "message"),
    [
        (attacker(conditions=["afraid"]), None, {}, "afraid and cannot Attack"),
        (attacker(conditions=["dying"]), None, {}, "dying and cannot Attack"),
        (None, defender(conditions=["dead"]), {}, "already dead"),
        (None, None, {"weapon": "halberd"}, "no weapon 'halberd'"),
        (fighter(), None, {}, "has no weapon"),
    ],
)
def test_attacks_the_rules_forbid_are_refused(a, d, declaration, message):
    with pytest.raises(InvalidRequest) as err:
        run(a, d, declaration=declaration, dice=[1] * 9)
    assert message in err.value.message
    assert err.value.details["step"] == "declare_attack"


def test_an_afraid_defender_may_still_counter():
    res = start(d=defender(conditions=["afraid"]), dice=[1] * 9)
    assert [o.id for o in res.advance().options] == ["parry", "dodge", "counter"]


# -- 2. Defense -------------------------------------------------------------------------


def test_the_defender_chooses_and_each_option_names_its_dice():
    res = start(dice=[7, 6, 4, 5, 3, 1, 2])
    decision = res.advance()
    assert (decision.key, decision.token, decision.default) == ("defense", "d", "parry")
    assert [(o.id, o.label) for o in decision.options] == [
        ("parry", "Parry with Staff: d6 d6 d6"),
        ("dodge", "Dodge: d6"),
        ("counter", "Counter with Staff: d6 d6 d6"),
    ]
    # What each gives: the chance the Blade's d8 d8 d6 beats the defense's highest die.
    assert [o.detail for o in decision.options] == [
        "64% to be hit by d8 d8 d6",
        "81% to be hit by d8 d8 d6",
        "64% to be hit by d8 d8 d6",
    ]
    res.answer("parry")
    assert res.advance() is None
    assert res.record["decisions"][0]["how"] == "answered"
    assert res.record["outcome"]["defense"] == "parry"


def test_unanswered_the_defender_parries():
    record = run(dice=[7, 6, 4, 5, 3, 1, 2])
    assert (record["decisions"][0]["answer"]["option"], record["decisions"][0]["how"]) == ("parry", "default")
    assert changes(record, "declare_defense") == {"defense_dice": ([], [6, 6, 6])}


def test_dodge_rolls_the_dodge_dice_or_else_the_body_dice():
    record = run(dice=[7, 6, 4, 5, 2], answers={"defense": "dodge"})
    assert changes(record, "declare_defense") == {"defense_dice": ([], [6])}
    record = run(d=defender(dodge=[8, 4]), dice=[7, 6, 4, 5, 3, 2], answers={"defense": "dodge"})
    assert changes(record, "declare_defense") == {"defense_dice": ([], [8, 4])}
    assert step(record, "roll")["rolls"][1]["options"]["flavor"] == "dodge"


def test_a_ranged_attack_can_only_be_dodged_and_that_is_the_default():
    res = start(fighter(BOW), defender(dodge=[8, 6]), dice=[7, 6, 5, 3, 2])
    decision = res.advance()
    assert [(o.id, o.label) for o in decision.options] == [("dodge", "Dodge: d8 d6")]
    assert decision.default == "dodge"


def test_a_defender_without_a_melee_weapon_can_only_dodge():
    res = start(d=fighter(BOW), dice=[7, 6, 4, 5, 2])
    assert [o.id for o in res.advance().options] == ["dodge"]


def test_a_reeling_target_cannot_counter_and_gives_the_attacker_a_bonus_d8():
    res = start(d=defender(conditions=["reeling"]), dice=[7, 6, 4, 8, 5, 3, 1, 2])
    assert [o.id for o in res.advance().options] == ["parry", "dodge"]
    res.answer("parry")
    res.advance()
    record = res.record
    assert changes(record, "roll") == {"attack_dice": ([8, 8, 6], [8, 8, 6, 8])}
    assert record["outcome"]["successes"] == 3


def test_a_dying_target_is_helpless_every_die_succeeds():
    record = run(d=defender(conditions=["dying"]), dice=[1, 1, 1, 2])
    assert record["decisions"] == []
    assert len(step(record, "roll")["rolls"]) == 1
    assert record["outcome"]["successes"] == 3
    assert record["outcome"]["defense"] is None


# -- 4. Successes and the Counter ---------------------------------------------------------


def test_no_success_is_a_miss_and_changes_nothing():
    record = run(dice=[5, 2, 1, 5, 3, 1], answers=PARRY)
    assert record["ended"] == "miss"
    assert [s["step"] for s in record["steps"]][-1] == "successes"
    assert record["changes"] == {}
    assert (record["outcome"]["hit"], record["outcome"]["damage"], record["outcome"]["conditions"]) == (False, 0, {})


def test_a_winning_counter_strikes_the_attacker_with_the_defenders_weapon():
    staff = fighter({**STAFF, "damage": 1})
    record = run(d=staff, dice=[3, 2, 1, 6, 5, 2, 2], answers={"defense": "counter"})
    outcome = record["outcome"]
    assert (outcome["successes"], outcome["counter_successes"]) == (0, 2)
    assert (outcome["hit"], outcome["damage"]) == (False, 0)
    assert (outcome["counter_hit"], outcome["counter_damage"]) == (True, 3)
    assert conditions(record, "a") == ["reeling", "hurt", "afraid", "injured"]
    assert "d" not in record["changes"]
    assert step(record, "roll")["rolls"][1]["formula"] == "3d6cs>=4"  # the counter's winners marked


def test_a_counter_the_attacker_beats_is_an_ordinary_hit():
    record = run(dice=[7, 6, 4, 5, 3, 1, 2], answers={"defense": "counter"})
    outcome = record["outcome"]
    assert (outcome["successes"], outcome["counter_successes"], outcome["counter_hit"]) == (2, 0, False)
    assert conditions(record, "d") == ["reeling", "hurt", "afraid"]


def test_a_counter_that_ties_is_a_miss_for_both():
    record = run(dice=[5, 2, 1, 5, 3, 1], answers={"defense": "counter"})
    assert record["ended"] == "miss" and record["changes"] == {}


# -- 5. Damage and 6. Soak ------------------------------------------------------------------


def test_a_hurt_and_injured_target_suffers_two_more():
    record = run(d=defender(conditions=["hurt", "injured"]), dice=[7, 1, 1, 5, 3, 1, 2], answers=PARRY)
    assert changes(record, "damage") == {"damage": (0, 3)}


def test_soak_rolls_body_will_with_resolve_and_armor_each_4_up_soaks_one():
    tough = defender(will=[8], armor=[4], gifts=["resolve"])
    record = run(d=tough, dice=[8, 8, 1, 5, 3, 1, 4, 8, 1], answers=PARRY)
    assert changes(record, "soak") == {"soak_dice": ([], [6, 8, 4]), "soaked": (0, 2), "damage": (2, 0)}
    assert step(record, "soak")["rolls"][0]["total"] == 2
    assert conditions(record, "d") == ["reeling"]  # "the target will still be sent Reeling"


def test_all_ones_on_the_soak_dice_is_a_botch_for_one_more_damage():
    record = run(d=defender(armor=[4]), dice=[7, 1, 1, 5, 3, 1, 1, 1], answers=PARRY)
    assert changes(record, "soak")["damage"] == (1, 2)
    assert record["outcome"]["botch"] is True


# -- 7. Effects ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bonus", "soak_face", "damage", "after", "reached"),
    [
        (0, 4, 0, ["reeling"], ["reeling"]),
        (0, 2, 1, ["reeling", "hurt"], ["reeling", "hurt"]),
        (1, 2, 2, ["reeling", "hurt", "afraid"], ["reeling", "hurt", "afraid"]),
        (2, 2, 3, ["reeling", "hurt", "afraid", "injured"], ["reeling", "hurt", "afraid", "injured"]),
        (3, 2, 4, ["reeling", "hurt", "afraid", "injured", "dying"], ["reeling", "hurt", "afraid", "injured", "dying"]),
        (4, 2, 5, ["reeling", "hurt", "afraid", "injured", "dead"], ["reeling", "hurt", "afraid", "injured", "dead"]),
        (
            5, 2, 6, ["reeling", "hurt", "afraid", "injured", "dead"],
            ["reeling", "hurt", "afraid", "injured", "dead", "overkilled"],
        ),
    ],
)
def test_each_damage_threshold_adds_its_conditions(bonus, soak_face, damage, after, reached):
    record = run(fighter({**BLADE, "damage": bonus}), dice=[7, 1, 1, 5, 3, 1, soak_face], answers=PARRY)
    assert record["outcome"]["damage"] == damage
    assert conditions(record, "d") == after
    assert record["outcome"]["conditions"] == {"d": reached}


def test_conditions_accumulate_and_only_new_ones_are_reported():
    record = run(d=defender(conditions=["hurt"]), dice=[7, 1, 1, 5, 3, 1, 2], answers=PARRY)
    assert record["outcome"]["damage"] == 2  # 1 success + Hurt
    assert conditions(record, "d") == ["reeling", "hurt", "afraid"]
    assert record["outcome"]["conditions"] == {"d": ["reeling", "afraid"]}


def test_dead_takes_the_place_of_dying():
    record = run(fighter({**BLADE, "damage": 2}), defender(conditions=["dying"]), dice=[7, 1, 1, 2])
    assert conditions(record, "d") == ["reeling", "hurt", "afraid", "injured", "dead"]


def _company(**others):
    return {
        "near": defender(side="company", position={"x": 3, "y": 0}),
        "far": defender(side="company", position={"x": 5, "y": 0}),
        "foe": defender(side="raiders", position={"x": 1, "y": 0}),
        "told": defender(side="company"),
        "scared": defender(side="company", position={"x": 1, "y": 1}, conditions=["afraid"]),
        **others,
    }


def test_overkill_frightens_the_targets_allies_within_four_paces():
    record = run(
        fighter({**BLADE, "damage": 5}, side="raiders", position={"x": -1, "y": 0}),
        defender(side="company", position={"x": 0, "y": 0}),
        others=_company(),
        declaration={"near_target": ["told"]},
        dice=[7, 1, 1, 5, 3, 1, 2],
        answers=PARRY,
    )
    assert record["outcome"]["conditions"] == {
        "d": ["reeling", "hurt", "afraid", "injured", "dead", "overkilled"],
        "near": ["afraid"],
        "told": ["afraid"],  # no position, but the client measured it near
    }
    assert set(record["changes"]) == {"d", "near", "told"}
    assert conditions(record, "near") == ["afraid"]


def test_an_overkilled_attacker_frightens_its_own_allies():
    record = run(
        fighter(BLADE, side="raiders", position={"x": 0, "y": 0}),
        fighter({**STAFF, "damage": 6}, side="company"),
        others={"pal": defender(side="raiders", position={"x": 2, "y": 2})},
        dice=[3, 2, 1, 6, 1, 1, 2],
        answers={"defense": "counter"},
    )
    assert record["outcome"]["conditions"]["pal"] == ["afraid"]
    assert record["outcome"]["counter_damage"] == 7


def test_naming_an_unknown_token_near_the_target_is_not_found():
    with pytest.raises(NotFound):
        run(
            fighter({**BLADE, "damage": 5}),
            defender(side="company"),
            declaration={"near_target": ["ghost"]},
            dice=[7, 1, 1, 5, 3, 1, 2],
            answers=PARRY,
        )


def test_no_overkill_no_fear():
    record = run(
        d=defender(side="company", position={"x": 0, "y": 0}), others=_company(), dice=[7, 1, 1, 5, 3, 1, 2],
        answers=PARRY,
    )
    assert set(record["changes"]) == {"d"}


# -- the whole ---------------------------------------------------------------------------------


def test_outcome_follows_the_conventions():
    assert run(dice=[7, 6, 4, 5, 3, 1, 4], answers=PARRY)["outcome"] == {
        "hit": True,
        "damage": 1,
        "conditions": {"d": ["reeling", "hurt"]},
        "defense": "parry",
        "successes": 2,
        "counter_successes": 0,
        "counter_hit": False,
        "counter_damage": 0,
        "soaked": 1,
        "botch": False,
    }


def test_same_seed_same_attack_and_the_record_is_json():
    first = run(seed=77)
    assert first == run(seed=77)
    json.dumps(first)
    assert any(run(seed=s)["steps"] != first["steps"] for s in (1, 2, 3))


def test_seeded_attacks_resolve_whatever_the_dice():
    for seed in range(60):
        outcome = run(seed=seed, answers={"defense": "counter"})["outcome"]
        assert not (outcome["hit"] and outcome["counter_hit"])
        assert outcome["successes"] == 0 or outcome["counter_successes"] == 0
