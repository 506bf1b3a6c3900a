"""The pure rules of vtt_exalted2e.rules, seed 002's examples first."""

import pytest

from vtt_bridge import Dice, roll_to_foundry
from vtt_exalted2e import rules
from vtt_exalted2e.rules import HealthTrack, apply_damage, default_track


# -- dice ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "faces, damage, expected",
    [
        ([7, 8, 9], False, 3),
        ([10, 1, 6], False, 2),  # a 10 counts twice on an attack
        ([10, 1, 6], True, 1),  # ...but once on damage
        ([6, 5, 1], False, 0),
        ([], False, 0),
    ],
)
def test_successes(faces, damage, expected):
    assert rules.successes(faces, damage=damage) == expected


@pytest.mark.parametrize(
    "faces, expected", [([1, 4, 6], True), ([1, 7], False), ([2, 3], False), ([], False)]
)
def test_botch_needs_no_successes_and_a_one(faces, expected):
    assert rules.is_botch(faces, rules.successes(faces)) is expected


def test_roll_pool_is_a_foundry_d10_success_pool():
    dice = Dice(script=[10, 7, 3, 10, 2])
    attack = rules.roll_pool(dice, 3, label="attack")
    damage = rules.roll_pool(dice, 2, label="damage", damage=True)
    assert attack.successes == 3 and damage.successes == 1
    a, d = roll_to_foundry(attack), roll_to_foundry(damage)
    assert a["formula"] == "3d10cs>=7dbl10" and d["formula"] == "2d10cs>=7"  # a damage 10 counts once
    assert [r["count"] for r in a["terms"][0]["results"]] == [2, 1, 0]
    assert [r["count"] for r in d["terms"][0]["results"]] == [1, 0]
    assert rules.roll_pool(dice, 0, label="none").faces == []


# -- defense values (seed 002) ------------------------------------------------


@pytest.mark.parametrize(
    "who, dex, dodge, essence, divine, dv",
    [
        ("mortal soldier", 2, 3, 1, False, 2),
        ("Anoria", 4, 4, 5, True, 7),
        ("Essence 1 adds nothing, Exalt rounds up", 2, 3, 1, True, 3),
        ("Essence 2 adds", 2, 3, 2, False, 3),
    ],
)
def test_dodge_dv_seed_examples(who, dex, dodge, essence, divine, dv):
    assert rules.dodge_dv(dex, dodge, essence, divine=divine) == dv


@pytest.mark.parametrize(
    "weapon, defense, divine, dv",
    [("fist", 2, True, 5), ("seven-section staff", 3, True, 5), ("fist, as a mortal", 2, False, 4),
     ("sledge", -3, False, 2)],
)
def test_parry_dv_seed_examples(weapon, defense, divine, dv):
    # the Immaculate monk: Dexterity 3, Martial Arts 4
    assert rules.parry_dv(3, 4, defense, divine=divine) == dv


@pytest.mark.parametrize("value, divine, half", [(9, True, 5), (9, False, 4), (8, True, 4), (0, False, 0)])
def test_halve_rounds_up_for_the_divine_only(value, divine, half):
    assert rules.halve(value, divine=divine) == half


@pytest.mark.parametrize(
    "shield, cover, ranged, bonus",
    [
        ("buckler", None, False, 1),
        ("buckler", None, True, 0),
        ("target", None, True, 1),
        ("tower", None, True, 2),
        (None, "25", False, 0),
        (None, "25", True, 1),
        (None, "50", True, 2),
        (None, "75", True, 3),
        (None, "90", False, 2),
        (None, "90", True, 4),
        ("tower", "90", True, 4),  # not cumulative: the greater applies
        ("tower", "25", True, 2),
        (None, None, False, 0),
    ],
)
def test_shield_and_cover_table(shield, cover, ranged, bonus):
    assert rules.cover_bonus(shield, cover, ranged=ranged) == bonus


@pytest.mark.parametrize(
    "height, close, reach, bonus", [(2, True, False, 2), (2, False, False, 0), (3, True, True, 0), (-1, True, False, -1)]
)
def test_height_close_combat_only_negated_by_reach(height, close, reach, bonus):
    assert rules.height_bonus(height, close=close, reach=reach) == bonus


@pytest.mark.parametrize("distance, penalty", [(50, 0), (51, 1), (100, 1), (101, 2), (150, 2), (151, None)])
def test_range_bands(distance, penalty):
    assert rules.range_penalty(distance, 50) == penalty


def test_automatic_defense_only_against_extras_and_only_when_dv_is_greater():
    assert rules.automatic_defense(5, 4, extra=True)
    assert not rules.automatic_defense(5, 5, extra=True)
    assert not rules.automatic_defense(5, 4, extra=False)


@pytest.mark.parametrize("dodge, parry, better", [(7, 5, "dodge"), (4, 5, "parry"), (5, 5, "parry")])
def test_better_defense_ties_go_to_parry(dodge, parry, better):
    assert rules.better_defense(dodge, parry) == better


# -- hardness, soak, minimum damage --------------------------------------------


@pytest.mark.parametrize(
    "raw, damage_type, stops",
    [(6, "L", True), (7, "L", False), (12, "B", True), (13, "B", False), (1, "A", False)],
)
def test_invulnerable_skin_of_bronze_6L_12B(raw, damage_type, stops):
    hardness = {"L": 6, "B": 12}.get(damage_type, 0)
    assert rules.hardness_stops(raw, hardness) is stops


@pytest.mark.parametrize(
    "stamina, damage_type, divine, natural",
    [(4, "B", False, 4), (4, "L", False, 0), (5, "L", True, 2), (5, "A", True, 0), (3, "B", True, 3)],
)
def test_natural_soak(stamina, damage_type, divine, natural):
    assert rules.natural_soak(stamina, damage_type, divine=divine) == natural


@pytest.mark.parametrize(
    "damage_type, piercing, armored",
    [("B", False, 4), ("L", False, 2), ("A", False, 2), ("B", True, 2), ("L", True, 1), ("A", True, 1)],
)
def test_armor_4B_2L_aggravated_as_lethal_piercing_halves(damage_type, piercing, armored):
    assert rules.armored_soak(4, 2, damage_type, piercing=piercing) == armored


def test_piercing_halves_only_armored_soak():
    s = rules.soak(4, "L", divine=True, armor_bashing=7, armor_lethal=5, piercing=True)
    assert (s.natural, s.armored, s.total) == (2, 2, 4)
    assert rules.total_soak(4, "L", divine=True, armor_bashing=7, armor_lethal=5, piercing=True) == 4
    assert rules.total_soak(2, "B", divine=False, armor_bashing=4, armor_lethal=2) == 6


@pytest.mark.parametrize(
    "raw, soak, weapon_min, essence, final",
    [
        (10, 4, 1, 1, 6),
        (5, 5, 1, 1, 1),  # minimum 1
        (5, 6, 1, 3, 3),  # Essence overcomes soak
        (2, 6, 1, 5, 2),  # ...but never above raw damage
        (8, 7, 4, 2, 4),  # a weapon's own minimum
    ],
)
def test_damage_pool_minimum_capped_by_raw(raw, soak, weapon_min, essence, final):
    pool = rules.damage_pool(raw, soak, minimum=rules.minimum_damage(weapon_min, essence))
    assert pool.final == final
    assert pool.post_soak == max(raw - soak, 0)


# -- health track ---------------------------------------------------------------


def track(marks, stamina=2):
    t = default_track(stamina)
    return HealthTrack(penalties=t.penalties, damage=tuple(marks) + (None,) * (len(t.penalties) - len(marks)))


def test_default_track_has_dying_levels_equal_to_stamina():
    t = default_track(3)
    assert t.penalties == (0, -1, -1, -2, -2, -4, "I", "D", "D", "D")
    assert t.damage == (None,) * 10


def test_track_json_round_trip():
    t = apply_damage(default_track(2), 2, "L")
    data = t.to_json()
    assert data == {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["L", "L"] + [None] * 7}
    assert HealthTrack.from_json(data) == t


@pytest.mark.parametrize(
    "before, levels, damage_type, after",
    [
        ([], 2, "B", ["B", "B"]),
        (["B", "B"], 1, "L", ["L", "B", "B"]),  # lethal pushes bashing down
        (["L", "B"], 1, "A", ["A", "L", "B"]),
        (["B"] * 9, 1, "B", ["L"] + ["B"] * 8),  # full: bashing upgrades one for one
        (["B"] * 9, 2, "L", ["L"] * 4 + ["B"] * 5),
        (["L"] * 9, 3, "B", ["L"] * 9),
        (["L"] * 8 + ["B"], 2, "A", ["A", "A"] + ["L"] * 7),
        (["B"] * 3, 0, "L", ["B"] * 3),
    ],
)
def test_apply_damage(before, levels, damage_type, after):
    assert list(apply_damage(track(before), levels, damage_type).damage[: len(after)]) == after
    assert apply_damage(track(before), levels, damage_type).filled == len(after)


@pytest.mark.parametrize(
    "marks, penalty",
    [([], 0), (["B"], 0), (["B", "B"], -1), (["L"] * 4, -2), (["L"] * 6, -4), (["L"] * 8, -4)],
)
def test_wound_penalty_is_the_worst_filled_level(marks, penalty):
    assert rules.wound_penalty(track(marks)) == penalty


@pytest.mark.parametrize(
    "marks, conditions",
    [
        (["L"] * 6, set()),
        (["L"] * 7, {"incapacitated"}),
        (["L"] * 7 + ["B"], {"incapacitated", "unconscious"}),
        (["L"] * 8, {"incapacitated", "dying"}),
        (["L"] * 9, {"incapacitated", "dying", "dead"}),
        (["A"] * 2 + ["B"] * 7, {"incapacitated", "unconscious"}),
    ],
)
def test_track_conditions(marks, conditions):
    assert rules.track_conditions(track(marks)) == conditions


def test_new_conditions_lists_only_what_changed():
    assert rules.new_conditions(track(["L"] * 7), track(["L"] * 8)) == ["dying"]


@pytest.mark.parametrize(
    "faces, kept",
    [
        ([[7, 2], [8, 9]], 1),  # more successes wins
        ([[8, 9], [7, 2]], 0),  # the first roll stays when it is better
        ([[1, 2], [3, 4]], 1),  # both fail: a plain failure beats a botch
        ([[3, 4], [1, 2]], 0),
        ([[10, 1], [7, 8]], 1),  # a 10 counts twice: 2 against 2, and the roll without a 1 is kept
        ([[10, 3], [7, 1]], 0),
    ],
)
def test_keep_better_keeps_the_better_roll_and_sets_the_others_aside(faces, kept):
    from vtt_bridge import Dice

    flat = [f for roll in faces for f in roll]
    dice = Dice(script=flat)
    rolls = [rules.roll_pool(dice, len(r), label=f"roll {i}") for i, r in enumerate(faces)]
    best = rules.keep_better(rolls)
    assert best is rolls[kept]
    assert best.active == faces[kept]
    # Rerolls set aside are struck through; the first roll stays as judged at its own step.
    assert all(r.active == [] for r in rolls[1:] if r is not best)
    assert rolls[0].active == faces[0]


@pytest.mark.parametrize("option, dice", [("decline", 0), ("1", 1), ("2", 2), ("3", 3)])
def test_defensive_stunt_dice_come_with_the_step_5_answer(option, dice):
    from vtt_bridge import Answer

    assert rules.defensive_stunt(Answer(option=option)) == dice
    assert rules.defensive_stunt(None) == 0  # no successes remained: not asked
