"""Warmachine MkIII: published hit chances, and the exact model against the real pipeline."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from vtt_bridge.odds import compute_odds

from .helpers import assert_agree, real_host, tokens_of

ruleset = pytest.importorskip("vtt_warmachine_mk3.ruleset")
from vtt_warmachine_mk3.odds import hit_chance  # noqa: E402

EXAMPLES = Path(ruleset.__file__).parent / "examples"

# The chance to hit by the number needed on the dice (DEF − MAT/RAT − modifiers),
# boosted (3d6) or not (2d6), as the community's tables print them (percent, 2 places).
PUBLISHED = {
    7: ("58.33", "90.74"),
    8: ("41.67", "83.80"),
    10: ("16.67", "62.50"),
    11: ("8.33", "50.00"),
}


@pytest.mark.parametrize("needed", sorted(PUBLISHED))
def test_published_hit_chances(needed):
    two, three = PUBLISHED[needed]
    assert f"{float(hit_chance(2, needed)) * 100:.2f}" == two
    assert f"{float(hit_chance(3, needed)) * 100:.2f}" == three


def test_all_ones_miss_and_all_sixes_hit():
    assert hit_chance(2, 2) == Fraction(35, 36)  # needing 2 or less: only 1+1 misses
    assert hit_chance(2, -5) == Fraction(35, 36)
    assert hit_chance(2, 13) == Fraction(1, 36)  # needing 13+: only 6+6 hits
    assert hit_chance(2, 30) == Fraction(1, 36)
    assert hit_chance(3, 19) == Fraction(1, 216)
    assert hit_chance(1, 7) == 0  # a single 6 is no automatic hit
    assert hit_chance(1, 6) == Fraction(1, 6)


def test_the_exact_model_gives_the_published_chance(host, tokens):
    # Trencher RAT 6 against a Trencher's DEF 13: needs 7 on 2d6; aiming (+2) needs 5.
    req = request("trencher1", "trencher2", weapon="Rifle")
    assert compute_odds(host, req, tokens, method="exact").hit.exact == Fraction(21, 36)
    aimed = request("trencher1", "trencher2", weapon="Rifle", modifiers={"aiming": True})
    assert compute_odds(host, aimed, tokens, method="exact").hit.exact == Fraction(30, 36)
    boosted = request("trencher1", "trencher2", weapon="Rifle", modifiers={"boosted_attack": True})
    assert compute_odds(host, boosted, tokens, method="exact").hit.exact == Fraction(196, 216)


@pytest.fixture(scope="module")
def host():
    return real_host()


@pytest.fixture(scope="module")
def tokens(host):
    raw = ruleset.sample_tokens()
    for t in raw:
        if t["id"] == "trencher1":
            t["system"] = {**t["system"], "position": {"x": 10, "y": 12}}  # in the Ironclad's melee range
        if t["id"] == "trencher2":
            t["system"] = {**t["system"], "position": {"x": 17, "y": 12}}  # 7" from trencher1: in rifle range
        if t["id"] == "warpwolf":
            t["system"] = {**t["system"], "position": {"x": 12, "y": 12}, "marked": [4, 4, 3, 4, 4, 4]}
    return tokens_of(host, "warmachine_mk3", raw)


def request(attacker, target, **declaration):
    return {"ruleset": "warmachine_mk3", "attacker": attacker, "targets": [target], "declaration": declaration}


CASES = {
    "rifle against a Tough trencher": (request("trencher1", "trencher2", weapon="Rifle"), None),
    "hammer (critical knockdown) against a Tough trencher": (
        request("ironclad", "trencher1", weapon="Hammer", modifiers={"attack_bonus": -4}),
        None,
    ),
    "boosted hammer against the juggernaut's grid": (
        request("ironclad", "juggernaut", weapon="Hammer"),
        {"boost_attack": "boost", "boost_damage": "boost"},
    ),
    "hammer against a battered warpwolf's spiral, extra and removed dice": (
        request("ironclad", "warpwolf", weapon="Hammer", modifiers={"extra_damage_dice": 1, "discard_lowest_damage": 1}),
        None,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_exact_agrees_with_the_real_pipeline(host, tokens, case):
    req, answers = CASES[case]
    result = assert_agree(host, req, tokens, answers=answers)
    assert result.unit == "damage points"
    assert 0 < result.hit.value < 1 and result.conditions  # a case that exercises the model


def test_exact_agrees_on_the_shipped_example(host):
    data = json.loads((EXAMPLES / "melee_jack_punch.json").read_text())
    assert_agree(host, data, tokens_of(host, "warmachine_mk3", data["tokens"]), answers=data.get("answers"))


def test_grid_column_decides_crippling(host, tokens):
    result = compute_odds(host, request("ironclad", "warpwolf", weapon="Hammer"), tokens, method="exact")
    crippled = {c for t, c, _ in result.conditions if c.startswith("crippled:")}
    assert crippled  # the spiral branch rolled decides which aspect goes
    assert result.method == "exact"


def test_aoe_goes_to_monte_carlo(host, tokens):
    result = compute_odds(host, request("ironclad", "juggernaut", weapon="Bombard"), tokens, mc_samples=200)
    assert result.method == "monte_carlo"
    assert result.reason == "no exact model covers this warmachine_mk3 attack"


def test_melee_against_a_knocked_down_model_always_hits(host, tokens):
    down = dict(tokens)
    from vtt_bridge import Token

    t = tokens["trencher1"]
    down["trencher1"] = Token(t.id, t.name, t.ruleset, {**t.system, "knocked_down": True})
    req = request("ironclad", "trencher1", weapon="Hammer", modifiers={"attack_bonus": -10})
    result = assert_agree(host, req, down, samples=1500)
    assert result.hit.value == 1


def test_an_answer_that_is_no_option_is_refused_not_a_plugin_error(host, tokens):
    from vtt_bridge import InvalidRequest

    with pytest.raises(InvalidRequest):
        compute_odds(host, request("ironclad", "juggernaut", weapon="Hammer"), tokens, answers={"boost_attack": "twice"})
