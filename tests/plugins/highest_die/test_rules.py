"""highest_die's pure rules, with every example of seed 003."""

from __future__ import annotations

import dataclasses

import pytest

from vtt_highest_die.rules import (
    chance_to_be_hit,
    allowed_defenses,
    base_damage,
    conditions_for,
    count_successes,
    damage_for,
    merge_conditions,
    soak,
    soak_dice,
    within,
)


@pytest.mark.parametrize(
    ("dice", "against", "expected"),
    [
        ([7, 6, 4], [5, 3, 1], 2),  # seed 003: "you have two dice (7 and 6) higher than ... (5)"
        ([7, 5, 4], [5, 3, 1], 1),  # seed 003: "you'd only have one point of Damage" — a tie is no success
        ([5, 5], [5], 0),
        ([2, 1], [], 2),  # nothing rolled against: every die beats 0
        ([], [3], 0),
    ],
)
def test_dice_strictly_higher_than_the_single_highest_die(dice, against, expected):
    assert count_successes(dice, against) == expected


@pytest.mark.parametrize(("successes", "damage"), [(0, 0), (1, 1), (2, 3), (3, 4), (4, 6), (5, 7), (6, 9)])
def test_critical_damage_table(successes, damage):
    # seed 003: "+1 Damage for one success, +3 for two successes, +4 for three successes, +6 for four"
    assert base_damage(successes, "critical") == damage


@pytest.mark.parametrize(("kind", "successes", "damage"), [("normal", 3, 3), ("slaying", 1, 2), ("slaying", 3, 6)])
def test_normal_and_slaying_damage(kind, successes, damage):
    assert base_damage(successes, kind) == damage


@pytest.mark.parametrize(
    ("held", "expected"),
    [((), 3), (("hurt",), 4), (("injured",), 4), (("hurt", "injured", "reeling"), 5)],
)
def test_weapon_bonus_and_hurt_and_injured_add(held, expected):
    damage = damage_for(successes=2, kind="normal", weapon_bonus=1, conditions=held)
    assert damage.total == expected


def test_a_negative_bonus_never_makes_negative_damage():
    assert damage_for(successes=1, kind="normal", weapon_bonus=-3, conditions=()).total == 0


@pytest.mark.parametrize(
    ("system", "dice"),
    [
        ({"body": [8, 6]}, (8, 6)),
        ({"body": [8, 6], "will": [10], "armor": [4]}, (8, 6, 4)),  # Will only with the Gift of Resolve
        ({"body": [8, 6], "will": [10], "armor": [4], "gifts": ["resolve"]}, (8, 6, 10, 4)),
    ],
)
def test_soak_dice(system, dice):
    assert soak_dice(system) == dice


@pytest.mark.parametrize(
    ("faces", "soaked", "botch", "left_of_5"),
    [
        ([4, 3, 6], 2, False, 3),  # each 4+ soaks one point
        ([3, 2], 0, False, 5),
        ([1, 1, 1], 0, True, 6),  # all 1s: Botch, +1 damage
        ([1, 2], 0, False, 5),
        ([1], 0, True, 6),
        ([], 0, False, 5),
        ([6, 6, 6, 6, 6, 6], 6, False, 0),
    ],
)
def test_soak(faces, soaked, botch, left_of_5):
    result = soak(faces)
    assert (result.soaked, result.botch, result.apply(5)) == (soaked, botch, left_of_5)


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (0, ("reeling",)),  # "Even if an attack fails to cause any Damage ... still be sent Reeling"
        (1, ("reeling", "hurt")),
        (2, ("reeling", "hurt", "afraid")),
        (3, ("reeling", "hurt", "afraid", "injured")),
        (4, ("reeling", "hurt", "afraid", "injured", "dying")),
        (5, ("reeling", "hurt", "afraid", "injured", "dead")),
        (6, ("reeling", "hurt", "afraid", "injured", "dead", "overkilled")),
        (9, ("reeling", "hurt", "afraid", "injured", "dead", "overkilled")),
    ],
)
def test_conditions_by_damage(damage, expected):
    assert conditions_for(damage) == expected


def test_conditions_accumulate_and_dead_replaces_dying():
    assert merge_conditions(["hurt"], ["reeling"]) == ("reeling", "hurt")
    assert merge_conditions(["dying", "hurt"], conditions_for(5)) == ("reeling", "hurt", "afraid", "injured", "dead")
    assert "overkilled" not in merge_conditions([], conditions_for(6))


@pytest.mark.parametrize(
    ("ranged", "melee_weapon", "reeling", "expected"),
    [
        (False, True, False, ("parry", "dodge", "counter")),
        (False, True, True, ("parry", "dodge")),  # "they cannot Counter, only Parry or Dodge"
        (True, True, False, ("dodge",)),
        (False, False, False, ("dodge",)),
    ],
)
def test_allowed_defenses(ranged, melee_weapon, reeling, expected):
    assert allowed_defenses(ranged_attack=ranged, melee_weapon=melee_weapon, reeling=reeling) == expected


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ({"x": 0, "y": 0}, {"x": 4, "y": 0}, True),  # "within 4 paces" includes 4
        ({"x": 0, "y": 0}, {"x": 3, "y": 3}, False),  # 4.24 paces
        ({"x": 1, "y": 1}, {"x": 3.5, "y": 3.5}, True),
        (None, {"x": 0, "y": 0}, False),
    ],
)
def test_within_four_paces(a, b, near):
    assert within(a, b) is near


def test_results_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        soak([4]).soaked = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("attack", "defense"),
    [((8, 8, 6), (6, 6, 6)), ((8, 8, 6), (6,)), ((6,), (12, 4)), ((4, 4), (10,)), ((8,), ()), ((), (6,))],
)
def test_the_chance_to_be_hit_is_the_share_of_rolls_with_a_success(attack, defense):
    # Counted die by die over every roll of both pools (count_successes is seed 003's rule).
    import itertools
    from fractions import Fraction

    rolls = list(itertools.product(*[range(1, s + 1) for s in attack + defense]))
    hits = sum(1 for faces in rolls if count_successes(faces[: len(attack)], faces[len(attack):]) > 0)
    expected = Fraction(hits, len(rolls)) if attack else Fraction(0)
    assert chance_to_be_hit(attack, defense) == expected
