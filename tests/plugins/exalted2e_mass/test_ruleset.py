"""The ten War Events with scripted dice: every number worked out by hand (see mass.py).

The standard attack, ``a`` (Magnitude 5, Might 1) on ``b`` (Magnitude 3, War DV 5, soak 1L):
7 attack dice [10 9 8 7 1 2 3] = 5 successes + 2 Magnitude = 7; − DV 5 = 2;
raw damage Charisma 2 + Damage 2 + 2 = 6; − soak 1 = 5 dice (not below Magnitude 5);
5 damage dice [10 8 7 2 1] = 3 levels (the 10 counts once) + Might 1 = 4 lethal.
"""

import pytest

from vtt_bridge import InvalidRequest, Option, hookimpl
from vtt_exalted2e.rules import roll_pool
from vtt_exalted2e_mass import ATTACK_ROLL, DEFENSE_ROLL, RULESET

from .mass import A, B, SOLO, merged, resolve

HITS = [10, 9, 8, 7, 1, 2, 3]
DAMAGE = [10, 8, 7, 2, 1]
FAILS = [1, 2, 3, 4, 5, 6, 6]


def test_the_steps_follow_the_seed_in_order():
    names = [s.name for s in RULESET.all_steps()]
    assert names == [
        "declare_attack", "declare_defense", "attack_roll", "attack_reroll", "apply_defense",
        "defense_reroll", "raw_damage", "damage", "hardness", "soak", "ping", "damage_roll",
        "might", "counterattack", "apply_results",
    ]  # fmt: skip


def test_the_standard_attack_step_by_step():
    res = resolve(dice=HITS + DAMAGE, answers={"defense": "war"})
    assert res.outcome == {
        "hit": True,
        "damage": 4,
        "conditions": {},
        "attack": "close",
        "damage_type": "L",
        "defense": "war",
        "war_dv": 5,
        "botch": False,
        "successes": 7,
        "magnitude_bonus": 2,
        "raw_damage": 6,
        "ping": False,
        "might": 1,
    }
    assert res.step("declare_attack").value("attack_pool") == 7
    assert res.step("declare_defense").value("dv") == 5
    assert res.rolls("attack_roll") == [HITS]
    assert res.step("attack_roll").value("magnitude_bonus") == 2
    assert res.step("attack_roll").value("successes") == 7
    assert res.step("apply_defense").value("successes") == 2
    assert res.step("raw_damage").value("raw_damage") == 6
    assert res.step("damage").value("soak") == 1
    assert res.step("soak").value("damage_pool") == 5
    assert res.step("ping").value("ping_floor") == 5
    assert res.rolls("damage_roll") == [DAMAGE]
    assert res.step("damage_roll").value("levels") == 3
    assert res.step("might").value("damage") == 4
    # no reroll or counterattack on offer; 2 successes remain past DV, so a stunt is
    assert [d.key for d in res.decisions] == ["defense", "defense_stunt"]
    after = res.token_after("b")["health"]
    assert after["damage"] == ["L", "L", "L", "L", None, None, None]
    assert list(res.token_changes) == ["b"]


# -- 1. Declaration -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formation", "dice"),
    [("unordered", 6), ("relaxed", 7), ("close", 5)],
)
def test_formation_changes_the_attack_pool(formation, dice):
    res = resolve(merged(A, formation=formation), dice=[1] * dice, answers={"defense": "war"})
    assert res.rolls("attack_roll") == [[1] * dice]


def test_stunt_dice_join_the_commanders_pool():
    res = resolve(declaration={"stunt": 2}, dice=[1] * 9, answers={"defense": "war"})
    assert res.step("declare_attack").value("attack_pool") == 9


def test_a_routed_unit_cannot_attack():
    with pytest.raises(InvalidRequest) as err:
        resolve(merged(A, conditions=["routed"]), dice=HITS)
    assert "routed" in err.value.message


# -- 2. Defender declares response --------------------------------------------------------


def test_the_defender_is_asked_war_dv_or_nothing():
    res = resolve(dice=HITS + DAMAGE, answers={"defense": "war"})
    asked = res.decision("defense")
    assert asked.decision.token == "b"
    assert asked.options == ["war", "nothing"]
    assert asked.decision.options[0].label == "War DV 5"
    assert asked.how == "given"


def test_unanswered_the_defender_takes_war_dv():
    res = resolve(dice=HITS + DAMAGE)
    asked = res.decision("defense")
    assert (asked.chosen, asked.how) == ("war", "default")
    assert res.damage == 4


def test_no_defense_means_no_dv():
    # 7 successes stand: raw 2 + 2 + 7 = 11, − soak 1 = 10 dice
    res = resolve(dice=HITS + [7] * 10, answers={"defense": "nothing"})
    assert res.numbers["dv"] == 0
    assert res.outcome["raw_damage"] == 11
    assert res.outcome["war_dv"] == 5  # still reported
    assert res.damage == 10 + 1


@pytest.mark.parametrize(
    ("formation", "war_dv"),
    [("unordered", 4), ("relaxed", 5), ("close", 7)],
)
def test_formation_changes_war_dv(formation, war_dv):
    res = resolve(b=merged(B, formation=formation), dice=[1] * 7, answers={"defense": "war"})
    assert res.outcome["war_dv"] == war_dv


@pytest.mark.parametrize(("formation", "kept"), [("unordered", -1), ("relaxed", 0), ("close", 2)])
def test_doing_nothing_says_the_dv_that_still_counts_and_gets_it(formation, kept):
    # "DV 0, then what the normal DV rules still apply": a close formation's +2 (seed 000).
    res = resolve(b=merged(B, formation=formation), dice=HITS + [2] * 20, answers={"defense": "nothing"})
    option = res.decision("defense").decision.options[-1]
    assert (option.id, option.label) == ("nothing", "Do nothing")
    assert option.detail.startswith(f"DV {kept} ")
    assert res.numbers["dv"] == kept


def test_a_mortal_commander_rounds_war_dv_down():
    res = resolve(b=merged(B, commander={"exalted": False}), dice=[1] * 7, answers={"defense": "war"})
    assert res.outcome["war_dv"] == 4


def test_a_solo_defender_may_use_its_own_dvs_and_takes_the_best_by_default():
    res = resolve(b=SOLO, seed=1)
    asked = res.decision("defense")
    assert asked.options == ["war", "dodge", "parry", "nothing"]
    assert [o.label for o in asked.decision.options[:3]] == ["War DV 3", "Dodge DV 5", "Parry DV 6"]
    assert (asked.chosen, asked.how) == ("parry", "default")
    assert res.numbers["dv"] == 6


def test_undodgeable_and_unblockable_bind_only_the_solos_own_dvs():
    res = resolve(b=SOLO, declaration={"undodgeable": True, "unblockable": True}, seed=1)
    labels = [o.label for o in res.decision("defense").decision.options]
    assert labels[:3] == ["War DV 3", "Dodge DV 0", "Parry DV 0"]
    assert res.decision("defense").chosen == "war"


def test_a_solo_defenders_wounds_lower_its_own_dvs():
    wounded = merged(SOLO, health={"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"],
                                   "damage": ["L", "L", None, None, None, None, None, None, None, None]})
    res = resolve(b=wounded, seed=1)
    assert [o.label for o in res.decision("defense").decision.options[:3]] == ["War DV 3", "Dodge DV 4", "Parry DV 5"]


def test_a_defensive_stunt_is_asked_at_step_5_and_adds_to_dv():
    """Seed 000, step 5: "Apply any external penalties to attack roll, ending with DV. If
    successes remain, defender rolls extra dice derived from stunts (which do not award
    Essence)". 7 successes − DV 5 = 2; the stunt's 2 dice [7 10] = 3 successes: DV 8, a miss."""
    res = resolve(dice=HITS + [7, 10], answers={"defense": "war", "defense_stunt": "2"})
    asked = res.decision("defense_stunt")
    assert asked.decision.token == "b" and asked.decision.step == "apply_defense"
    assert asked.options == ["1", "2", "3", "decline"] and asked.decision.default == "decline"
    assert res.rolls("apply_defense") == [[7, 10]]
    assert res.step("apply_defense").value("dv") == 8
    assert res.ended == "miss" and res.hit is False and res.damage == 0


def test_no_stunt_is_asked_when_no_successes_remain():
    # 7 successes, but an external penalty of 3 and War DV 5: none remain, nothing to stunt for
    res = resolve(declaration={"penalty": 3}, dice=HITS, answers={"defense": "war"})
    assert [d.key for d in res.decisions] == ["defense"] and res.ended == "miss"


def test_a_defensive_stunt_of_four_dice_is_refused():
    with pytest.raises(InvalidRequest):
        resolve(dice=HITS, answers={"defense": "war", "defense_stunt": "4"})


def test_doing_nothing_keeps_fortifications_formation_and_height():
    """Seed 000, step 2: "Shields, terrain and fortifications can modify this DV, as per the
    normal DV rules"; seed 002: "bonuses and penalties apply to inapplicable DVs after the
    reduction to zero". b in close formation (+2) behind 50% cover (+1), on a slope (+1):
    DV 0 + 4; 7 − 4 = 3 successes: raw 2 + 2 + 3 = 7, − soak 1 = 6 dice."""
    res = resolve(b=merged(B, formation="close"), declaration={"cover": "50", "height": 1},
                  dice=HITS + [7] * 6, answers={"defense": "nothing", "defense_stunt": "decline"})  # fmt: skip
    assert res.numbers["dv"] == 4
    assert res.outcome["raw_damage"] == 7


def test_a_negative_war_dv_is_filled_first_by_the_stunts_successes():
    """Seed 002, "Putting it all together": "track the character's negative DV if there is any
    possibility that DV-enhancing effects might be applied, as the true DV is still negative."
    b's commander has no Intelligence or War and the unit no Defense (War DV 0), unordered
    (−1) on lower ground (−2): DV −3 blocks as 0; 7 successes remain.
    A stunt's 3 successes [10 7] bring DV to 0, so all 7 remain: raw 2 + 2 + 7 = 11."""
    res = resolve(b=merged(B, formation="unordered", commander={"intelligence": 0, "war": 0}, defense=0),
                  declaration={"height": -2}, dice=HITS + [10, 7] + [1] * 10,
                  answers={"defense": "war", "defense_stunt": "2"})  # fmt: skip
    assert res.step("declare_defense").value("dv") == -3
    assert res.step("apply_defense").value("dv") == 0
    assert res.numbers["successes"] == 7  # unchanged at step 5: DV 0 blocks none
    assert res.outcome["raw_damage"] == 11


def test_no_defense_takes_no_stunt():
    """Issue 13 "Parameters belong to their option": no defense, no stunt dice."""
    with pytest.raises(InvalidRequest) as err:
        resolve(dice=HITS, answers={"defense": {"option": "nothing", "params": {"stunt": 2}}})
    assert "stunt" in err.value.details["answers"]["defense"]["params"]


# -- 3. Attack roll -----------------------------------------------------------------------


def test_magnitude_9_against_a_solo_unit_adds_9_successes():
    # no success rolled, yet 9 stand; raw 2 + 2 + 9 = 13, − soak 3 = 10 dice
    res = resolve(merged(A, magnitude=9), SOLO, dice=FAILS + [1] * 10, answers={"defense": "nothing"})
    assert res.outcome["magnitude_bonus"] == 9
    assert res.outcome["successes"] == 9
    assert res.outcome["botch"] is False
    assert res.outcome["raw_damage"] == 13
    assert res.step("soak").value("damage_pool") == 10


def test_a_smaller_unit_loses_successes_and_may_miss():
    res = resolve(merged(A, magnitude=1), merged(B, magnitude=9), dice=HITS, answers={"defense": "nothing"})
    assert res.outcome["magnitude_bonus"] == -8
    assert res.outcome["successes"] == 0
    assert res.ended == "miss"


def test_a_botch_needs_failed_dice_a_one_and_no_magnitude_rescue():
    botched = resolve(merged(A, magnitude=3), dice=FAILS, answers={"defense": "war"})
    assert botched.outcome["botch"] is True and botched.ended == "botch"
    rescued = resolve(dice=FAILS, answers={"defense": "war"})  # Magnitude +2: two successes
    assert rescued.outcome["botch"] is False and rescued.ended == "miss"


def test_a_solo_attacker_counts_no_more_ability_than_its_war():
    # Dexterity 4 + Ability 5 capped at War 3 + Accuracy 1 = 8 dice; Magnitude 0 − 3 = −3
    dice = [10, 9, 8, 7, 7, 1, 1, 1]
    res = resolve(SOLO, B, dice=dice + [1] * 7, answers={"defense": "nothing"})
    assert res.rolls("attack_roll") == [dice]
    assert res.outcome["successes"] == 6 - 3
    # normal damage: Strength 3 + weapon 2 + 3 = 8; − soak 1 = 7 dice
    assert res.outcome["raw_damage"] == 8
    assert res.step("soak").value("damage_pool") == 7


# -- 4. Attack reroll ---------------------------------------------------------------------


class SecondChance:
    """A test pack: the attacker may reroll the whole attack once."""

    @hookimpl
    def exalted2e_mass_attack_reroll_options(self, ctx):
        return [Option(id="second-chance", label="Reroll the attack")]

    @hookimpl
    def exalted2e_mass_attack_reroll(self, ctx):
        if ctx.answer("attack_reroll").option == "second-chance":
            roll_pool(ctx.dice, len(ctx.stash[ATTACK_ROLL].faces), label="second chance")


def test_the_attacker_is_asked_only_when_a_reroll_exists():
    res = resolve(dice=FAILS, packs=[SecondChance()], answers={"defense": "war"})
    asked = res.decision("attack_reroll")
    assert asked.decision.token == "a"
    assert asked.options == ["second-chance", "decline"]
    assert (asked.chosen, asked.how) == ("decline", "default")
    assert res.ended == "miss"  # 0 rolled + 2 Magnitude − DV 5


def test_a_reroll_is_counted_again_with_the_magnitude_difference():
    res = resolve(
        dice=FAILS + HITS + DAMAGE, packs=[SecondChance()], answers={"defense": "war", "attack_reroll": "second-chance"}
    )
    assert res.rolls("attack_reroll") == [HITS]
    assert res.step("attack_reroll").value("successes") == 7
    assert res.damage == 4
    first = res.record["steps"][2]["rolls"][0]["terms"][0]["results"]
    assert all(r["active"] for r in first)  # the first roll stays as judged at step 3; step 4 sets it aside
    assert res.step("attack_reroll").notes[0][0] == "the reroll counts (5 successes); the first roll (0 successes) is set aside"  # dice only: +2 Magnitude


def test_a_worse_reroll_leaves_the_first_roll_standing():
    res = resolve(
        dice=HITS + FAILS + DAMAGE, packs=[SecondChance()], answers={"defense": "war", "attack_reroll": "second-chance"}
    )
    assert res.outcome["successes"] == 7 and res.damage == 4


# -- 5. External penalties, special defenses ------------------------------------------------


def test_external_penalties_come_off_before_dv():
    # 7 − penalty 1 − DV 5 = 1; raw 5, − soak 1 = 4 dice, pinged up to Magnitude 5
    res = resolve(declaration={"penalty": 1}, dice=HITS + [7] * 5, answers={"defense": "war"})
    changes = [(c.before, c.after) for c in res.changed("successes", step="apply_defense")]
    assert changes == [(7, 6), (6, 1)]
    assert res.outcome["raw_damage"] == 5


def test_no_successes_left_is_a_miss_that_changes_nothing():
    res = resolve(merged(A, magnitude=3), dice=[10, 9, 1, 2, 3, 4, 5], answers={"defense": "war"})
    assert res.ended == "miss"
    assert res.outcome["hit"] is False and res.outcome["damage"] == 0
    assert res.token_changes == {}
    assert not res.ran("raw_damage")


# -- 6. Defender reroll -------------------------------------------------------------------


class SteadyWall:
    """A test pack: the defender may reroll its stunt and Charm dice."""

    @hookimpl
    def exalted2e_mass_defense_reroll_options(self, ctx):
        if DEFENSE_ROLL in ctx.stash:
            return [Option(id="steady-wall", label="Reroll the defense dice")]
        return []

    @hookimpl
    def exalted2e_mass_defense_reroll(self, ctx):
        answer = ctx.answer("defense_reroll")
        if answer is not None and answer.option == "steady-wall":
            roll_pool(ctx.dice, len(ctx.stash[DEFENSE_ROLL].faces), label="steady wall")


def test_a_defense_reroll_can_turn_a_hit_into_a_miss():
    # 7 − DV 5 = 2; stunt [7 1] = 1: DV 6, 1 left; rerolled [8 9] = 2: DV 7, none left
    res = resolve(
        dice=HITS + [7, 1, 8, 9], packs=[SteadyWall()],
        answers={"defense": "war", "defense_stunt": "2", "defense_reroll": "steady-wall"},
    )
    asked = res.decision("defense_reroll")
    assert asked.decision.token == "b" and asked.options == ["steady-wall", "decline"]
    assert res.step("defense_reroll").value("dv") == 7
    assert res.ended == "miss"


def test_the_defense_reroll_defaults_to_keeping_the_dice():
    res = resolve(dice=HITS + [7, 1] + [7] * 5, packs=[SteadyWall()], answers={"defense": "war", "defense_stunt": "2"})
    assert res.decision("defense_reroll").how == "default"
    assert res.outcome["raw_damage"] == 5  # 1 success left


def test_without_defense_dice_no_defense_reroll_is_offered():
    res = resolve(dice=HITS + DAMAGE, packs=[SteadyWall()], answers={"defense": "war"})
    assert [d.key for d in res.decisions] == ["defense", "defense_stunt"]


# -- 8. Hardness, soak, ping, damage roll, Might -----------------------------------------------


def test_hardness_equal_to_raw_damage_stops_it_and_might_is_not_added():
    res = resolve(b=merged(B, hardness={"L": 6}), dice=HITS, answers={"defense": "war"})
    assert res.ended == "hardness"
    assert res.hit is True and res.damage == 0
    assert "might" not in res.outcome
    assert not res.ran("might")
    assert res.token_changes == {}


def test_hardness_below_raw_damage_lets_it_through():
    res = resolve(b=merged(B, hardness={"L": 5}), dice=HITS + DAMAGE, answers={"defense": "war"})
    assert res.ended is None and res.damage == 4


def test_hardness_of_another_type_does_not_count():
    res = resolve(b=merged(B, hardness={"B": 20}), dice=HITS + DAMAGE, answers={"defense": "war"})
    assert res.damage == 4


def test_ping_raises_the_pool_above_the_raw_damage():
    # Magnitude 9: 1 rolled + 6 = 7 − DV 5 = 2; raw 6 against soak 20: no dice; ping rolls 9
    res = resolve(merged(A, magnitude=9), merged(B, soak={"L": 20}), dice=[7, 1, 1, 1, 1, 1, 1] + [7] * 9)
    assert res.outcome["raw_damage"] == 6
    assert res.outcome["ping"] is True
    assert res.step("ping").value("damage_pool") == 9
    assert res.rolls("damage_roll") == [[7] * 9]
    assert res.damage == 9 + 1
    assert res.outcome["conditions"] == {"b": ["destroyed"]}


def test_a_solo_attacker_pings_with_the_greater_of_overwhelming_and_essence():
    # raw 8 against soak 10: nothing left; Overwhelming 4 beats Essence 3
    dice = [10, 9, 8, 7, 7, 1, 1, 1]
    res = resolve(SOLO, merged(B, soak={"L": 10}), dice=dice + [1] * 4, answers={"defense": "nothing"})
    assert res.step("ping").value("ping_floor") == 4
    assert res.rolls("damage_roll") == [[1] * 4]


def test_a_solo_defender_soaks_with_stamina_and_armor():
    # 5 rolled + Magnitude 5 = 10; raw 2 + 2 + 10 = 14; lethal soak: Stamina 3 halved
    # (Exalted) + armor 2 = 3; 11 dice
    res = resolve(b=SOLO, dice=HITS + [1] * 11, answers={"defense": "nothing"})
    assert res.step("damage").value("soak") == 3


def test_damage_tens_count_once():
    res = resolve(dice=HITS + [10, 10, 10, 10, 10], answers={"defense": "war"})
    assert res.step("damage_roll").value("levels") == 5


def test_might_is_added_after_the_roll():
    res = resolve(dice=HITS + [1, 2, 3, 4, 5], answers={"defense": "war"})
    assert not res.step("damage_roll").changes  # no levels rolled
    assert [(c.number, c.after) for c in res.step("might").changes] == [("might", 1), ("damage", 1)]
    assert res.damage == 1
    assert res.token_after("b")["health"]["damage"][:2] == ["L", None]


# -- 9. Counterattacks --------------------------------------------------------------------


class Riposte:
    """A test pack offering a counterattack — naively, even against a counterattack."""

    @hookimpl
    def exalted2e_mass_counterattack_options(self, ctx):
        return [Option(id="riposte", label="Riposte")]


# The counterattack, b on a: 6 dice [10 10 10 1 1 1] = 6, Magnitude 3 − 5 = −2: 4; a takes
# no defense; raw 3 + 0 + 4 = 7, − soak 2 = 5 dice [7 7 7 7 7]: 5 levels, Might 0.
COUNTER = [10, 10, 10, 1, 1, 1] + [7] * 5


def test_a_counterattack_is_nested_with_roles_swapped_and_lands_with_the_attack():
    res = resolve(
        dice=HITS + DAMAGE + COUNTER,
        packs=[Riposte()],
        answers={"defense": "war", "counterattack": "riposte", "counterattack/defense": "nothing"},
    )
    counter = res.step("counterattack").children[0]
    assert counter.kind == "counterattack"
    assert counter.record["attacker"] == "b" and counter.record["targets"] == ["a"]
    assert counter.record["declaration"]["charms"] == [{"id": "riposte"}]
    assert counter.outcome["magnitude_bonus"] == -2
    assert counter.outcome["damage"] == 5
    assert res.decision("counterattack/defense").decision.token == "a"
    # no counter to a counter: the nested attack puts no counterattack decision
    assert [d.key for d in res.decisions] == ["defense", "defense_stunt", "counterattack", "counterattack/defense"]
    assert not counter.step("counterattack").children
    # both sides' damage is applied together
    assert res.token_after("a")["health"]["damage"] == ["L", "L", "L"]
    assert res.token_after("a")["conditions"] == ["destroyed"]
    assert res.token_after("b")["health"]["damage"][:5] == ["L", "L", "L", "L", None]
    assert res.outcome["conditions"] == {"a": ["destroyed"]}
    assert res.damage == 4


def test_the_counterattack_decision_defaults_to_none():
    res = resolve(dice=HITS + DAMAGE, packs=[Riposte()], answers={"defense": "war"})
    asked = res.decision("counterattack")
    assert asked.decision.token == "b" and asked.options == ["riposte", "decline"]
    assert (asked.chosen, asked.how) == ("decline", "default")
    assert not res.step("counterattack").children
    assert list(res.token_changes) == ["b"]


# -- 10. Apply results --------------------------------------------------------------------


def test_a_unit_of_extras_is_routed_by_bashing_and_keeps_its_conditions():
    # b as a unit of extras (three levels) hit by bashing: 4 levels fill and upgrade one
    res = resolve(
        merged(A, damage_type="B"), merged(B, elite=False, health=None), dice=HITS + [7] * 5, answers={"defense": "war"}
    )
    # bashing soak 3: raw 6 − 3 = 3 dice, pinged to 5; 5 levels + Might 1
    assert res.step("ping").value("damage_pool") == 5
    assert res.token_after("b")["health"]["damage"] == ["L", "L", "L"]
    assert res.outcome["conditions"] == {"b": ["destroyed"]}
    few = resolve(
        merged(A, damage_type="B"), merged(B, elite=False, health=None), dice=HITS + [7, 7, 1, 1, 1],
        answers={"defense": "war"},
    )
    assert few.token_after("b")["health"]["damage"] == ["B", "B", "B"]
    assert few.outcome["conditions"] == {"b": ["routed"]}
    assert few.token_after("b")["conditions"] == ["routed"]


def test_a_solo_unit_gains_individual_conditions():
    # 5 rolled + 9 = 14; raw 18 − soak 3 = 15 dice, one success + Might 1: two levels
    full = {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"], "damage": ["L"] * 6 + [None] * 4}
    wounded = merged(SOLO, health=full)
    res = resolve(merged(A, magnitude=9), wounded, dice=HITS + [7] + [1] * 14, answers={"defense": "nothing"})
    assert res.token_after("b")["health"]["damage"] == ["L"] * 8 + [None] * 2
    assert res.outcome["conditions"] == {"b": ["incapacitated", "dying"]}
    assert res.token_after("b")["conditions"] == ["incapacitated", "dying"]


# -- the whole -----------------------------------------------------------------------------


def test_the_same_seed_resolves_the_same_attack():
    first = resolve(seed=2024)
    again = resolve(seed=2024)
    other = resolve(seed=2025)
    assert first.record == again.record
    assert first.record != other.record
