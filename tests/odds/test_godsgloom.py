"""GODSGLOOM: the exact model against the real pipeline and against hand counts."""

from __future__ import annotations

from fractions import Fraction

import pytest

from vtt_bridge.odds import compute_odds

from .helpers import assert_agree, real_host, tokens_of

pytest.importorskip("vtt_godsgloom.ruleset")
from vtt_godsgloom.odds import pool_successes  # noqa: E402


def unit(uid, *, statline=(3, 2), guard=(1, 3), health=4, boost=0, weak=0, auto=(0, 0), traits=(), rerolls=(0, 0)):
    return {
        "id": uid,
        "system": {
            "statline": {"attack": statline[0], "defence": statline[1]},
            "guard": {"attack": guard[0], "defence": guard[1]},
            "health": {"current": health, "max": max(health, 1)},
            "boost": boost,
            "weak": weak,
            "auto": {"hits": auto[0], "blocks": auto[1]},
            "traits": list(traits),
            "rerolls": {"pool": rerolls[0], "single": rerolls[1]},
        },
    }


@pytest.fixture(scope="module")
def host():
    return real_host()


def request(**declaration):
    return {"ruleset": "godsgloom", "attacker": "a", "targets": ["d"], "declaration": declaration}


def test_one_die_pool_by_hand():
    assert pool_successes(1, "attack")[1] == Fraction(4, 6)
    # two dice: both 6 (1/36) → a third 🟥, a success 4 times in 6
    two = pool_successes(2, "attack")
    assert two[3] == Fraction(1, 36) * Fraction(4, 6)
    assert two.total() == 1
    # 🟦: two 1s (1/36) → one extra 🟦; successes 0 or 1
    blocks = pool_successes(2, "defence")
    assert blocks[0] == Fraction(4, 36) - Fraction(1, 36) * Fraction(4, 6)


CASES = {
    "melee, default units": (
        [unit("a", statline=(4, 2), health=4), unit("d", guard=(2, 2), health=3)],
        {},
    ),
    "ranged, boost and weak": (
        [unit("a", statline=(5, 1), boost=1, health=2), unit("d", guard=(3, 3), weak=1, health=2)],
        {"attack": "ranged"},
    ),
    "melee, auto successes and modifiers, low health both sides": (
        [unit("a", statline=(3, 3), auto=(1, 0), health=2), unit("d", guard=(3, 1), auto=(1, 1), health=2)],
        {"modifiers": {"attack": 1, "defence": -1}, "defender_modifiers": {"attack": 1, "defence": 0}, "auto": {"hits": 1, "blocks": 1}},
    ),
    "momentum holder with rerolls in hand, defaults unused": (
        [unit("a", statline=(4, 2), traits=("momentum",), rerolls=(1, 1)), unit("d", guard=(2, 3), rerolls=(1, 0))],
        {},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_exact_agrees_with_the_real_pipeline(host, case):
    raw, declaration = CASES[case]
    result = assert_agree(host, request(**declaration), tokens_of(host, "godsgloom", raw))
    assert result.unit == "wounds"


def test_momentum_pack_is_accounted_for_unless_onslaught(host):
    raw = [unit("a", statline=(4, 2)), unit("d")]
    plain = compute_odds(host, request(), tokens_of(host, "godsgloom", raw))
    assert plain.method == "exact"
    onslaught = [unit("a", statline=(4, 2), traits=("onslaught",)), unit("d")]
    mc = compute_odds(host, request(), tokens_of(host, "godsgloom", onslaught), mc_samples=200)
    assert mc.method == "monte_carlo" and "godsgloom_momentum" in mc.reason


def test_a_reroll_answered_in_advance_is_a_fresh_die(host):
    """Seed 004, ATC.20: "Resolve the Reroll Dice Procedure (RDP)" — a Pool Reroll rerolls
    every die, "new results replace old" (brief, RDP.10). Chosen before the dice are seen, a
    rerolled die is a fresh die: the odds are exactly those without the reroll, and agree
    with the real pipeline taking it."""
    raw = [unit("a", statline=(4, 2), rerolls=(1, 2)), unit("d", rerolls=(0, 1))]
    toks = tokens_of(host, "godsgloom", raw)
    plain = compute_odds(host, request(), toks, method="exact")
    answers = {"active_pool_reroll": "pool", "active_single_reroll": ["die:attack:2", "die:attack:2"],
               "inactive_single_reroll": "die:defence:1"}  # fmt: skip
    rerolled = assert_agree(host, request(), toks, answers=answers)
    assert rerolled.hit.exact == plain.hit.exact
    assert [(d, e.exact) for d, e in rerolled.damage] == [(d, e.exact) for d, e in plain.damage]
