"""GODSGLOOM's pure rules (seed 004)."""

from __future__ import annotations

import dataclasses

import pytest

from vtt_godsgloom.rules import (
    RerollChoice,
    adjusted_pool,
    cancel,
    critical_effects,
    parse_reroll,
    status_check,
    successes,
)


@pytest.mark.parametrize(
    ("faces", "expected"),
    [([1, 2], 0), ([3], 1), ([3, 4, 5, 6], 4), ([1, 2, 3, 6], 2), ([], 0)],
)
def test_a_3_or_more_is_always_a_success(faces, expected):
    assert successes(faces) == expected


@pytest.mark.parametrize(
    ("dice", "kw", "expected"),
    [
        (3, {}, 3),
        (3, {"modifier": 2}, 5),
        (3, {"boost": 1}, 4),
        (3, {"weak": 1}, 2),
        (3, {"boost": 1, "weak": 1}, 3),
        (1, {"weak": 2}, 0),  # never below no dice
        (2, {"modifier": -1, "boost": 2}, 3),
    ],
)
def test_adjusted_pool(dice, kw, expected):
    assert adjusted_pool(dice, **kw) == expected


@pytest.mark.parametrize(
    ("attack", "defence", "extra_attack", "extra_defence"),
    [
        ([6, 6, 2], [3], True, False),  # two 6s on 🟥 → one extra 🟥
        ([6, 6, 6], [4], True, False),  # three 6s still give one extra die
        ([6, 5], [1, 1], False, True),  # two 1s on 🟦 → one extra 🟦
        ([6], [1], False, False),  # one of each is not enough
        ([1, 1], [6, 6], False, False),  # 1s on 🟥 and 6s on 🟦 do nothing
        ([6, 6], [1, 1, 2], True, True),
        ([], [], False, False),
    ],
)
def test_critical_effects(attack, defence, extra_attack, extra_defence):
    crit = critical_effects(attack, defence)
    assert (crit.extra_attack, crit.extra_defence) == (extra_attack, extra_defence)


@pytest.mark.parametrize(
    ("hits", "blocks", "def_hits", "def_blocks", "melee", "left"),
    [
        (3, 1, 2, 1, True, (2, 1)),  # each side's Blocks cancel the other's Hits
        (1, 0, 0, 4, True, (0, 0)),  # never below zero
        (3, 5, 2, 1, False, (2, 0)),  # ranged: the attacker's Blocks cancel nothing, the defender inflicts nothing
        (2, 2, 2, 2, True, (0, 0)),
    ],
)
def test_cancel(hits, blocks, def_hits, def_blocks, melee, left):
    result = cancel(
        attacker_hits=hits, attacker_blocks=blocks, defender_hits=def_hits, defender_blocks=def_blocks, melee=melee
    )
    assert (result.attacker_hits, result.defender_hits) == left


@pytest.mark.parametrize(
    ("current", "wounds", "health", "decimated", "destroyed"),
    [
        (5, 4, 1, True, False),  # reduced to exactly 1: Decimated
        (2, 1, 1, True, False),
        (5, 3, 2, False, False),
        (2, 2, 0, False, True),  # 0: Destroyed
        (2, 5, 0, False, True),  # less than 0: Destroyed, stored as 0
        (1, 0, 1, False, False),  # already at 1 and not reduced: no second Weak
        (4, 0, 4, False, False),
    ],
)
def test_status_check(current, wounds, health, decimated, destroyed):
    status = status_check(current, wounds)
    assert (status.health, status.decimated, status.destroyed) == (health, decimated, destroyed)


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("pool", RerollChoice(kind="pool")),
        ("pool:attack", None),  # a Pool Reroll takes every die, both colours (RDP.10)
        ("pool:defence", None),
        ("die:attack:3", RerollChoice(kind="die", colour="attack", position=3)),
        ("die:defence:1", RerollChoice(kind="die", colour="defence", position=1)),
        ("die:attack:0", None),
        ("die:fire:1", None),
        ("pool:attack:2", None),
        ("decline", None),
        ("momentum:die:attack:1", None),
    ],
)
def test_parse_reroll(option, expected):
    assert parse_reroll(option) == expected


def test_results_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        status_check(3, 1).health = 9  # type: ignore[misc]
