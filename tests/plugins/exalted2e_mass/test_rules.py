"""The mass-combat rules as pure functions (seed 000)."""

import pytest

from vtt_exalted2e.rules import HealthTrack, apply_damage
from vtt_exalted2e_mass import rules


# Seed-derived example: "War DV: Intelligence + War + Unit Defense, divided by 2",
# rounded as individual DVs are (Exalted up, mortals down).
@pytest.mark.parametrize(
    ("exalted", "expected"),
    [(True, 5), (False, 4)],
    ids=["exalted commander rounds 4.5 up", "mortal commander rounds 4.5 down"],
)
def test_war_dv_seed_example(exalted, expected):
    dv = rules.war_dv(intelligence=3, war=4, unit_defense=2, divine=exalted)
    assert dv.base == dv.total == expected


@pytest.mark.parametrize(
    ("formation", "accuracy", "dv"),
    [("unordered", -1, -1), ("relaxed", 0, 0), ("close", -2, 2)],
)
def test_formation_modifiers(formation, accuracy, dv):
    form = rules.FORMATIONS[formation]
    assert (form.accuracy, form.dv) == (accuracy, dv)
    war = rules.war_dv(intelligence=3, war=3, unit_defense=2, divine=False, formation=formation)
    assert war.total == 4 + dv
    pool = rules.commander_pool(wits=3, war=3, unit_accuracy=1, formation=formation)
    assert pool.dice == 7 + accuracy


def test_shield_and_cover_do_not_stack_and_height_counts_only_in_close_combat():
    # a target shield: +1 close, +1 ranged; 50% cover: +1 close, +2 ranged — the greater applies
    close = rules.war_dv(intelligence=2, war=2, unit_defense=0, divine=False, shield="target", cover="50", height=2)
    assert (close.cover, close.height, close.total) == (1, 2, 5)
    ranged = rules.war_dv(
        intelligence=2, war=2, unit_defense=0, divine=False, shield="target", cover="50", height=2, ranged=True
    )
    assert (ranged.cover, ranged.height, ranged.total) == (2, 0, 4)


@pytest.mark.parametrize(
    ("attacker", "target", "bonus"),
    [(5, 3, 2), (3, 5, -2), (9, 0, 9), (0, 9, -9), (4, 4, 0)],
)
def test_the_magnitude_difference_has_no_cap(attacker, target, bonus):
    assert rules.magnitude_bonus(attacker, target) == bonus


def test_a_negative_difference_leaves_no_fewer_than_no_successes():
    assert rules.attack_successes(3, -2) == 1
    assert rules.attack_successes(3, -5) == 0
    assert rules.attack_successes(0, 9) == 9


def test_a_solo_unit_counts_no_more_ability_dots_than_its_war():
    capped = rules.solo_pool(dexterity=4, ability=5, war=3, accuracy=1)
    assert capped.dice == 8
    assert ("Ability", 3) in capped.parts
    assert rules.solo_pool(dexterity=4, ability=2, war=3, accuracy=1).dice == 7
    assert rules.solo_pool(dexterity=4, ability=5, war=3, accuracy=1, stunt=2, wound_penalty=-1).dice == 9


def test_raw_damage():
    assert rules.unit_raw_damage(charisma=2, unit_damage=3, successes=4) == 9
    assert rules.solo_raw_damage(strength=3, weapon_damage=5, successes=2) == 10
    assert rules.solo_raw_damage(strength=3, weapon_damage=5, successes=2, uses_strength=False) == 7


def test_ping_floor_is_magnitude_or_for_a_solo_the_greater_of_overwhelming_and_essence():
    assert rules.ping_floor(magnitude=6, solo=False, overwhelming=9, essence=9) == 6
    assert rules.ping_floor(magnitude=0, solo=True, overwhelming=4, essence=3) == 4
    assert rules.ping_floor(magnitude=0, solo=True, overwhelming=1, essence=3) == 3


def test_ping_raises_the_pool_even_above_the_raw_damage():
    # raw damage 4 against soak 6: no dice left; Magnitude 7 rolls 7 — more than the raw 4
    result = rules.ping(4 - 6, 7)
    assert (result.post_soak, result.pool, result.did_ping) == (0, 7, True)
    assert rules.ping(7, 7).did_ping is False
    assert rules.ping(9, 7).pool == 9


def test_unit_tracks():
    extras = rules.unit_track(elite=False)
    assert extras.penalties == (0, -1, "I")
    elite = rules.unit_track(elite=True)
    assert len(elite.penalties) == 7 and elite.penalties[-1] == "I"
    assert elite.damage == (None,) * 7


@pytest.mark.parametrize(
    ("hits", "expected"),
    [
        ([(2, "L")], frozenset()),
        ([(3, "L")], {"destroyed"}),
        ([(3, "B")], {"routed"}),
        ([(2, "L"), (1, "B")], {"routed"}),  # the level that broke it held bashing
        ([(3, "B"), (1, "B")], {"routed"}),  # bashing past the end turns one level lethal
        ([(3, "B"), (3, "B")], {"destroyed"}),
        ([(1, "A"), (5, "B")], {"destroyed"}),
    ],
)
def test_a_full_track_routs_or_destroys_the_unit(hits, expected):
    track = rules.unit_track(elite=False)
    for levels, kind in hits:
        track = apply_damage(track, levels, kind)
    assert rules.unit_conditions(track) == expected


def test_frozen_values():
    dv = rules.war_dv(intelligence=3, war=4, unit_defense=2, divine=True)
    with pytest.raises(AttributeError):
        dv.total = 9
    assert isinstance(rules.unit_track(elite=False), HealthTrack)
