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


def _example(host, name):
    data = json.loads((EXAMPLES / name).read_text())
    return data, tokens_of(host, "warmachine_mk3", data["tokens"])


def test_aoe_odds_hit_the_target_and_hit_any_model(host):
    """Seed 001, step 7: "Resolve the AOE hit or deviation. All models within the AOE at its
    final position are now hit by it."

    The Defender's Heavy Barrel (RAT 5, aiming +2) against Trencher 1 (DEF 13) needs 6 on
    2d6: 26/36 hit directly. A miss deviates d6 inches, at most half the 6.4" to the target;
    a deviation of 1 or 2 still leaves the 3" AOE over Trencher 1's base: 1/3 of the misses.
    So the target is hit 26/36 + 10/36 · 1/3 = 22/27; Trencher 2 and 3 only by a deviated
    blast. Units are the ruleset's, exact or Monte Carlo.
    """
    data, tokens = _example(host, "aoe_deviation_blast.json")
    exact = assert_agree(host, data, tokens, answers=data.get("answers"))
    assert exact.method == "exact"
    assert exact.target_hit.exact == Fraction(26, 36) + Fraction(10, 36) * Fraction(1, 3) == Fraction(22, 27)
    assert exact.hit.exact == Fraction(137, 162)  # any of the three trenchers
    by_model = {m.token: m for m in exact.models}
    assert [m.token for m in exact.models] == ["trencher1", "trencher2", "trencher3"]
    assert by_model["trencher2"].hit.exact == Fraction(25, 648)
    assert by_model["trencher3"].hit.exact == Fraction(5, 162)
    # Damage is per model hit: the target's own figures are the attack's damage.
    assert by_model["trencher1"].expected_damage.exact == exact.expected_damage.exact == Fraction(503, 648)
    mc = compute_odds(host, data, tokens, method="monte_carlo", mc_samples=200)
    assert exact.unit == mc.unit == "damage points"
    assert [m.token for m in mc.models][0] == "trencher1"


def test_spray_rolls_against_each_model(host):
    """Seed 001, step 5: "a spray attack ... must go through the attack roll sequence for each
    model potentially hit before proceeding to step 6."

    The Flame Thrower (RAT 5) against two Bane Thralls (DEF 13) needs 8 on 2d6 against
    each: 15/36 = 5/12 apiece, so at least one is hit 1 − (7/12)² = 95/144. POW 12 + 2d6
    always beats ARM 13, and a Bane Thrall has one box: every hit disables it, and Tough
    (5–6) saves a third of them — boxed 5/12 · 2/3 = 5/18 each.
    """
    data, tokens = _example(host, "spray_two_models.json")
    exact = assert_agree(host, data, tokens)
    assert exact.hit.exact == 1 - Fraction(7, 12) ** 2 == Fraction(95, 144)
    assert exact.target_hit.exact == Fraction(5, 12)
    assert [(m.token, m.hit.exact, m.expected_damage.exact) for m in exact.models] == [
        ("bane1", Fraction(5, 12), Fraction(5, 12)),
        ("bane2", Fraction(5, 12), Fraction(5, 12)),
    ]
    boxed = {t: e.exact for t, c, e in exact.conditions if c == "boxed"}
    assert boxed == {"bane1": Fraction(5, 18), "bane2": Fraction(5, 18)}


def test_aoe_critical_knockdown_reaches_every_model_hit(host):
    """Seed 001, step 8: "Resolve all other effects triggered by hitting or missing." — the
    brief's decision: "An AOE attack's critical effect applies to every model hit by the
    AOE"; the application order answered (step 10) changes nobody's damage."""
    data, tokens = _example(host, "aoe_critical_knockdown.json")
    exact = assert_agree(host, data, tokens, answers=data.get("answers"))
    assert exact.method == "exact"
    down = {t: e.value for t, c, e in exact.conditions if c == "knocked_down"}
    assert down["trencher2"] > 0 and set(down) >= {"trencher1", "trencher2"}


def test_shield_guard_answered_is_followed_exactly(host):
    """Seed 001, step 6: "Resolve effects that cause the attack to automatically hit a model
    other than the target." — the guard is hit in the target's place; the target never is.
    Chain Gun RAT 5 + aiming 2 against Kreoss's DEF 15 needs 8: 15/36."""
    data, tokens = _example(host, "shield_guard.json")
    exact = assert_agree(host, data, tokens, answers=data.get("answers"))
    assert exact.target_hit.exact == 0 and exact.hit.exact == Fraction(15, 36)
    assert [m.token for m in exact.models] == ["caster", "redeemer"]


def test_a_granted_reroll_of_a_missed_attack_is_exact(host):
    """Seed 001, step 5e: "Resolve effects that cause the attack roll to be rerolled. Return to
    step b if needed." The Chain Gun (RAT 5, aiming +2) against DEF 15 needs 8: 5/12; the
    captain's reroll of a miss gives a second 5/12 chance: 1 − (7/12)² = 95/144."""
    data, tokens = _example(host, "reroll_granted.json")
    exact = assert_agree(host, data, tokens, answers=data.get("answers"))
    assert exact.hit.exact == 1 - Fraction(7, 12) ** 2 == Fraction(95, 144)


def test_own_rerolls_of_attack_and_damage_are_exact(host):
    """Seed 001, step 9e: "Resolve effects that cause the damage roll to be rerolled" — taken
    in advance, the reroll replaces the first damage roll whatever it showed. The Fist needs
    4 on 2d6 (33/36); a missed roll is rerolled: 1 − (3/36)² = 143/144."""
    data, tokens = _example(host, "reroll_own_ability.json")
    exact = assert_agree(host, data, tokens, answers=data.get("answers"))
    assert exact.hit.exact == 1 - Fraction(3, 36) ** 2 == Fraction(143, 144)


def test_damage_transference_is_exact(host):
    """Seed 001, step 9g: "Resolve effects that trigger when a model "would suffer damage" such
    as damage transference." Kaya (DEF 16) is hit by the charging Quake Hammer (MAT 7) on 9+
    of 2d6: 10/36 = 5/18; every damaging hit goes to the Warpwolf, which is never hit itself.
    With only two boxes left on the Warpwolf, the rest comes back to Kaya."""
    data, tokens = _example(host, "damage_transference.json")
    exact = assert_agree(host, data, tokens, answers=data.get("answers"))
    by_model = {m.token: m for m in exact.models}
    assert exact.target_hit.exact == Fraction(5, 18) and by_model["kaya"].expected_damage.exact == 0
    assert by_model["warpwolf"].hit.exact == 0 and by_model["warpwolf"].expected_damage.exact > 0
    for t in data["tokens"]:
        if t["id"] == "warpwolf":
            t["system"]["marked"] = [5, 5, 5, 5, 5, 3]
    full = tokens_of(host, "warmachine_mk3", data["tokens"])
    exact = assert_agree(host, data, full, answers=data.get("answers"))
    by_model = {m.token: m for m in exact.models}
    assert by_model["warpwolf"].expected_damage.exact <= 2 * Fraction(5, 18)  # two boxes at most
    assert by_model["kaya"].expected_damage.exact > 0


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
