"""Exalted 2e individual combat: the exact model against the real pipeline."""

from __future__ import annotations

from fractions import Fraction

import pytest

from vtt_bridge.odds import compute_odds

from .helpers import assert_agree, real_host, tokens_of

ruleset = pytest.importorskip("vtt_exalted2e.ruleset")


@pytest.fixture(scope="module")
def host():
    return real_host()


@pytest.fixture(scope="module")
def tokens(host):
    raw = ruleset.sample_tokens()
    raw.append(
        {
            "id": "frail",
            "system": {  # a mortal close to Incapacitated: conditions are likely
                "attributes": {"strength": 2, "dexterity": 1, "stamina": 1},
                "abilities": {"dodge": 0},
                "health": {
                    "levels": [
                        {"penalty": 0, "damage": "B"}, {"penalty": -1, "damage": "B"},
                        {"penalty": -1, "damage": "B"}, {"penalty": -2, "damage": None},
                        {"penalty": -2, "damage": None}, {"penalty": -4, "damage": None},
                        {"penalty": "I", "damage": None}, {"penalty": "D", "damage": None},
                    ]
                },
            },
        }
    )
    monk = next(t for t in raw if t["id"] == "monk")
    raw.append({**monk, "id": "unarmed monk", "system": {**monk["system"], "weapons": [monk["system"]["weapons"][0]]}})
    track = {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"], "damage": ["B"] * 6 + [None] * 4}
    raw.append({**monk, "id": "battered monk", "system": {**monk["system"], "health": track}})
    return tokens_of(host, "exalted2e", raw)


def request(attacker, target, **declaration):
    return {"ruleset": "exalted2e", "attacker": attacker, "targets": [target], "declaration": declaration}


CASES = {
    "Anoria's daiklave against the soldier": (request("anoria", "soldier", weapon="daiklave"), None),
    "the third attack of Anoria's flurry (−5 dice) against the soldier": (
        request("anoria", "soldier", weapon="daiklave", flurry={"attacks": 3, "attack": 3}),
        None,
    ),
    "Anoria kicks the monk, who parries with a stunt": (
        request("anoria", "monk", weapon="kick", stunt=2),
        {"defense": "parry", "defense_stunt": "2"},
    ),
    "the unarmed monk parries Anoria's daiklave with a stunt (circumventing, after the roll)": (
        request("anoria", "unarmed monk", weapon="daiklave"),
        {"defense": "parry", "defense_stunt": "3"},
    ),
    "an unaware soldier, a coordinated attack, post-soak damage": (
        request("anoria", "soldier", weapon="daiklave", unaware=True, coordinated="pack", post_soak=-2),
        None,
    ),
    "soldier shoots the frail mortal at double range": (request("soldier", "frail", weapon="short bow", range_band="double"), None),
    "brigand (an extra) clubs the frail mortal, who does nothing": (request("brigand", "frail"), {"defense": "nothing"}),
    "Anoria's fist against the sorcerer's Hardness": (request("anoria", "sorcerer", weapon="fist"), None),
    "the brigand botches on the monk: the blow strikes the frail mortal": (
        request("brigand", "monk", bystanders=["frail"]),
        {"bystander": "frail"},
    ),
    "Excellencies on both sides: attack dice and successes, DV dice and points": (
        request(
            "anoria", "monk", weapon="daiklave",
            charms=[{"id": "first-excellency", "dice": 3}, {"id": "second-excellency", "successes": 1}],
        ),
        {"defense": {"option": "dodge", "params": {"first_excellency": 2, "second_excellency": 1}}},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_exact_agrees_with_the_real_pipeline(host, tokens, case):
    req, answers = CASES[case]
    result = assert_agree(host, req, tokens, answers=answers)
    assert result.unit == "health levels"


def test_conditions_appear_on_a_weak_target(host, tokens):
    result = compute_odds(host, request("anoria", "frail", weapon="daiklave"), tokens, method="exact")
    assert result.condition_probability("frail", "incapacitated") > 0.3
    assert result.condition_probability("frail", "dying") > 0


def test_automatic_defense_is_a_certain_miss(host, tokens):
    # The brigand (an extra) has a tiny pool against Anoria's DV: it misses without rolling.
    result = compute_odds(host, request("brigand", "anoria"), tokens, method="exact")
    assert result.hit.value == 0 and result.expected_damage.value == 0


def test_the_excellencies_pack_is_accounted_for(host, tokens):
    result = compute_odds(host, request("anoria", "monk", weapon="daiklave"), tokens)
    assert result.method == "exact" and "excellencies" in result.reason


def test_an_answered_reroll_is_not_modelled(host, tokens):
    reroll = compute_odds(host, request("anoria", "soldier"), tokens, answers={"attack_reroll": "third-excellency"}, mc_samples=100)
    assert reroll.method == "monte_carlo"


@pytest.mark.parametrize(
    "attacker, target, answers",
    [
        ("monk", "anoria", {"counterattack": "solar-counterattack"}),
        # the battered monk's staff meets Anoria's counter: its conditions join the outcome
        ("battered monk", "anoria", {"counterattack": "solar-counterattack", "counterattack/defense": "nothing"}),
    ],
)
def test_an_answered_counterattack_is_modelled_exactly(host, tokens, attacker, target, answers):
    """Seed 002, step 9: "If the victim retaliates using a counterattack ..., apply steps 1-8
    to that attack"; step 10: "... as does the damage and effects from any counterattack"."""
    result = assert_agree(host, request(attacker, target), tokens, answers=answers)
    assert result.method == "exact"
    if attacker == "battered monk":
        assert result.condition_probability("battered monk", "incapacitated") > 0  # rare: it must hit first


def test_a_flurry_lowers_the_odds_exactly(host, tokens):
    """Seed 002: a flurry's attacks "degrade in effectiveness": the third of three attacks
    rolls 10 − 5 = 5 dice, and the exact odds of a hit fall with them."""
    alone = compute_odds(host, request("anoria", "soldier", weapon="daiklave"), tokens, method="exact")
    third = compute_odds(
        host, request("anoria", "soldier", weapon="daiklave", flurry={"attacks": 3, "attack": 3}), tokens, method="exact"
    )
    assert third.hit.exact < alone.hit.exact


def test_a_botch_strikes_the_bystander_the_gm_names(host, tokens):
    """Seed 002, "Botched Attacks": "the Storyteller may also rule that the attack hits one of
    them instead of the intended target with a number of "successes" equal to the 1s rolled".

    The brigand's 5 dice botch when none shows 7+ and some show 1: 0.6⁵ − 0.5⁵ = 4651/100000.
    Only that share of the misses can reach the bystander; the chance to hit the monk is
    the same whether the GM sends botches to a bystander or not."""
    plain = compute_odds(host, request("brigand", "monk", bystanders=["frail"]), tokens, method="exact")
    struck = compute_odds(
        host, request("brigand", "monk", bystanders=["frail"]), tokens, answers={"bystander": "frail"}, method="exact"
    )
    assert struck.method == "exact" and struck.hit.exact == plain.hit.exact
    botch = Fraction(6, 10) ** 5 - Fraction(5, 10) ** 5
    assert botch == Fraction(4651, 100000)
    frail = [e.exact for t, c, e in struck.conditions if t == "frail"]
    assert frail and 0 < max(frail) <= botch
    assert not any(t == "frail" for t, _, _ in plain.conditions)


# -- a pack's Charm keeps exact odds exact when it acts where the model probes ----------


@pytest.fixture(scope="module")
def packed():
    return real_host("tests.odds.claw_pack", "tests.odds.late_claw_pack")


@pytest.fixture(scope="module")
def packed_tokens(packed):
    return tokens_of(packed, "exalted2e", ruleset.sample_tokens())


def test_a_packs_charm_before_the_roll_keeps_the_odds_exact_with_the_excellencies(packed, packed_tokens):
    # Tiger Claw Strike (+2 attack dice at step 3, before the ruleset's roll) and the
    # First Excellency declared together: the model's probe runs both for real.
    req = request(
        "anoria", "monk", weapon="daiklave",
        charms=[{"id": "tiger-claw-strike"}, {"id": "first-excellency", "dice": 2}],
    )
    result = compute_odds(packed, req, packed_tokens)
    assert result.method == "exact", result.reason
    assert "tests.odds.claw_pack: acts only before the first roll" in result.reason
    assert "late_claw" in result.reason  # installed, nothing of it declared: inert
    assert_agree(packed, req, packed_tokens)
    # Two more dice hit more often than without the Charm.
    plain = compute_odds(packed, request("anoria", "monk", weapon="daiklave", charms=[{"id": "first-excellency", "dice": 2}]), packed_tokens)
    assert result.hit.value > plain.hit.value


def test_a_packs_charm_after_the_roll_falls_back_to_monte_carlo_and_says_which_hook(packed, packed_tokens):
    req = request("anoria", "monk", weapon="daiklave", charms=[{"id": "late-claw-strike"}])
    result = compute_odds(packed, req, packed_tokens, mc_samples=200)
    assert result.method == "monte_carlo"
    assert result.reason == (
        "plugin tests.odds.late_claw_pack implements exalted2e_attack_reroll, which the exact model does not account for"
    )
