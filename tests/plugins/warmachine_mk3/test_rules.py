"""The pure rule functions (vtt_warmachine_mk3.rules)."""

import dataclasses

import pytest

from vtt_warmachine_mk3 import rules
from vtt_warmachine_mk3.rules import Weapon

CANNON = Weapon(name="Cannon", kind="ranged", rng=10, pow=12)
FIST = Weapon(name="Fist", kind="melee", rng=0.5, pow=0, ps=14)
HAMMER = Weapon(name="Hammer", kind="melee", rng=2, pow=6)
BOMBARD = Weapon(name="Bombard", kind="ranged", rng=10, pow=13, aoe=3)


def test_results_are_frozen_slotted_and_keyword_only():
    result = rules.judge_attack([3, 4], 5, 12)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.did_hit = False
    assert not hasattr(result, "__dict__")
    with pytest.raises(TypeError):
        rules.AttackResult((3, 4), 12, 12, True, False, "")


@pytest.mark.parametrize(
    ("faces", "mod", "needed", "hit", "critical", "why"),
    [
        ((3, 4), 5, 12, True, False, "12 ≥ DEF 12"),
        ((3, 3), 5, 12, False, False, "11 < DEF 12"),
        ((1, 1), 20, 12, False, False, "all dice show 1: a miss"),
        ((1,), 20, 12, False, False, "all dice show 1: a miss"),
        ((6, 6), 0, 30, True, True, "all dice show 6: a hit"),
        ((6,), 0, 30, False, False, "6 < DEF 30"),
        ((2, 5, 2), 5, 12, True, True, "14 ≥ DEF 12"),
        ((1, 1), 0, 30, True, True, "hits automatically"),
    ],
)
def test_judge_attack(faces, mod, needed, hit, critical, why):
    result = rules.judge_attack(faces, mod, needed, auto_hit=why == "hits automatically")
    assert (result.did_hit, result.critical, result.why) == (hit, critical, why)
    assert result.total == sum(faces) + mod


def test_attack_numbers_by_weapon_kind_and_target_state():
    jack = {"MAT": 7, "RAT": 5, "FOCUS": None}
    assert rules.attack_numbers(jack, {"DEF": 12}, CANNON, {"aiming": True, "back_strike": True}).describe() == (
        "RAT 5 + aiming 2 + back strike 2 = 9 against DEF 12"
    )
    assert rules.attack_numbers(jack, {"DEF": 12}, FIST, {"aiming": True}).modifier == 7
    down = rules.attack_numbers(jack, {"DEF": 12, "knocked_down": True}, CANNON, {})
    assert (down.defense, down.defense_note) == (5, "knocked down: DEF 5")
    assert rules.attack_numbers(jack, {"DEF": 12, "knocked_down": True}, FIST, {}).defense == 12
    caster = {"FOCUS": 7, "FURY": None}
    assert rules.attack_stat(caster, Weapon(name="Bolt", kind="magic", rng=10, pow=12)) == ("FOCUS", 7)
    assert rules.attack_stat({"FURY": 6}, Weapon(name="Bolt", kind="magic", rng=10, pow=12)) == ("FURY", 6)


@pytest.mark.parametrize(
    ("model", "weapon", "mods", "distance", "expected"),
    [
        ({"stealth": True}, CANNON, {}, 5.5, (False, False)),
        ({"stealth": True}, CANNON, {}, 5.0, None),
        ({"stealth": True}, FIST, {}, 0.2, None),
        ({}, CANNON, {"auto_hit": True}, 3, (True, False)),
        ({"knocked_down": True}, FIST, {}, 0, (True, True)),
        ({"stationary": True}, FIST, {}, 0, (True, True)),
        ({"knocked_down": True}, CANNON, {}, 4, None),
    ],
)
def test_automatic(model, weapon, mods, distance, expected):
    verdict = rules.automatic({}, model, weapon, mods, distance)
    assert (None if verdict is None else (verdict.did_hit, verdict.roll)) == expected


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        ({"kind": "warjack", "focus": 2}, ("focus", 2, 1)),
        ({"kind": "warjack", "focus": 0}, None),
        ({"kind": "warcaster", "focus": 1, "fury": 5}, ("focus", 1, 0)),
        ({"kind": "warlock", "fury": 1, "focus": 3}, ("fury", 1, 0)),
        ({"kind": "warlock", "fury": 0}, None),
        ({"kind": "warbeast", "fury": 2, "FURY": 3}, ("fury", 2, 3)),
        ({"kind": "warbeast", "fury": 3, "FURY": 3}, None),
        ({"kind": "warbeast", "fury": 0, "FURY": None}, None),
        ({"kind": "warrior"}, None),
    ],
)
def test_boost_cost(system, expected):
    cost = rules.boost_cost(system)
    assert (None if cost is None else (cost.resource, cost.before, cost.after)) == expected


def test_damage_pow():
    assert rules.damage_pow(CANNON, {"STR": 11}) == ("POW", 12)
    assert rules.damage_pow(FIST, {"STR": 11}) == ("P+S", 14)
    assert rules.damage_pow(HAMMER, {"STR": 11}) == ("P+S", 17)
    assert rules.damage_pow(BOMBARD, {}, blast=True) == ("blast POW", 7)  # 13 / 2 rounded up
    assert rules.blast_pow(dataclasses.replace(BOMBARD, pow=14)) == 7
    assert rules.blast_pow(dataclasses.replace(BOMBARD, blast=4)) == 4


def test_judge_damage_and_arm():
    assert rules.target_arm({"ARM": 14, "arm_bonus": 3}) == 17
    assert rules.judge_damage([6, 5], 12, 17) == rules.DamageResult(faces=(6, 5), total=23, arm=17, points=6)
    assert rules.judge_damage([1, 1], 12, 17).points == 0


@pytest.mark.parametrize(("face", "recovers"), [(1, False), (4, False), (5, True), (6, True)])
def test_tough(face, recovers):
    assert rules.tough_recovers(face) is recovers


def test_weapon_of_reads_the_card():
    system = {"STR": 11, "weapons": [{"name": "Fist", "kind": "melee", "PS": 14}, {"name": "Gun", "kind": "ranged",
                                                                                  "RNG": 8, "POW": 10, "spray": True}]}
    assert rules.weapon_of(system, "Fist") == Weapon(name="Fist", kind="melee", rng=0.5, pow=0, ps=14)
    assert rules.weapon_of(system, "Gun").describe() == "ranged, RNG SP 8, POW 10"
    assert rules.weapon_of(system, "Axe") is None
