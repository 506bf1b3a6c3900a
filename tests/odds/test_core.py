"""The odds engine against the engine's ``duel`` ruleset: methods, agreement, payload."""

from __future__ import annotations

import json
import math
import os
import time
from fractions import Fraction

import pytest

from vtt_bridge import InvalidRequest, PluginError, hookimpl, make_host
from vtt_bridge.odds import (
    AttackOutcome,
    Distribution,
    ExactOdds,
    compute_odds,
    foreign_plugins,
    outcome_from,
    render,
    ruleset_owner,
    sample_seeds,
    summarise_samples,
)

from . import duel_odds
from .agreement import disagreements

SAMPLES = 3000


def host(*plugins):
    return make_host(plugins=[duel_odds.ScoredDuelRules(), *plugins], entry_points=False, environ={})


def request(targets=("b",), **declaration):
    return {"ruleset": "duel", "attacker": "a", "targets": list(targets), "declaration": declaration}


def test_exact_when_only_the_ruleset_and_its_model_are_loaded():
    result = compute_odds(host(duel_odds.DuelExact()), request(), duel_odds.tokens())
    assert result.method == "exact" and result.samples is None
    # 2d6 at 4+, the default block takes one: a hit needs both dice, 1/4, for 1 hit
    assert result.hit.exact == Fraction(1, 4) and result.hit.se is None
    assert [(d, e.exact) for d, e in result.damage] == [(0, Fraction(3, 4)), (1, Fraction(1, 4))]
    assert result.expected_damage.exact == Fraction(1, 4)
    assert result.unit == "damage"  # the ruleset's damage_unit, whichever method


def test_answers_replace_the_default():
    result = compute_odds(host(duel_odds.DuelExact()), request(), duel_odds.tokens(), answers={"defense": "none"})
    assert result.hit.exact == Fraction(3, 4)
    assert result.condition_probability("b", "down") == pytest.approx(1 / 4)  # 2 hits on 2 hp
    assert result.answers == {"defense": "none"}


@pytest.mark.parametrize(
    "req, answers",
    [
        (request(), None),
        (request(bonus=3), None),
        (request(targets=("b", "c"), bonus=2), {"defense": "none"}),
    ],
)
def test_exact_agrees_with_the_real_pipeline(req, answers):
    h = host(duel_odds.DuelExact())
    exact = compute_odds(h, req, duel_odds.tokens(), answers=answers)
    mc = compute_odds(h, req, duel_odds.tokens(), answers=answers, method="monte_carlo", mc_samples=SAMPLES, seed=11)
    assert disagreements(exact, mc) == []


def test_agreement_catches_a_wrong_model():
    h = host(duel_odds.SkewedExact())
    req = request(bonus=2)
    exact = compute_odds(h, req, duel_odds.tokens())
    mc = compute_odds(h, req, duel_odds.tokens(), method="monte_carlo", mc_samples=SAMPLES, seed=11)
    assert exact.method == "exact"
    assert any(p.startswith("damage=") for p in disagreements(exact, mc))


def test_no_model_means_monte_carlo_with_standard_errors():
    result = compute_odds(host(), request(bonus=1), duel_odds.tokens(), mc_samples=2000, seed=3)
    assert result.method == "monte_carlo"
    assert result.reason == "no exact model covers this duel attack"
    assert result.samples == 2000 and result.seed == 3
    p = result.hit.value
    assert result.hit.se == pytest.approx(math.sqrt(p * (1 - p) / 2000))
    assert result.expected_damage.se is not None and result.expected_damage.se > 0
    assert sum(e.value for _, e in result.damage) == pytest.approx(1)


def test_monte_carlo_is_reproducible_and_depends_on_the_seed():
    h = host()
    one = compute_odds(h, request(bonus=2), duel_odds.tokens(), mc_samples=500, seed=5)
    two = compute_odds(h, request(bonus=2), duel_odds.tokens(), mc_samples=500, seed=5)
    other = compute_odds(h, request(bonus=2), duel_odds.tokens(), mc_samples=500, seed=6)
    assert one == two
    assert one.to_dict()["damage"] != other.to_dict()["damage"]


def test_a_pack_on_the_rulesets_hooks_switches_to_monte_carlo():
    h = host(duel_odds.DuelExact(), duel_odds.ExtraDie())
    assert foreign_plugins(h, "duel") == {"ExtraDie": ("duel_roll",)}
    result = compute_odds(h, request(), duel_odds.tokens(), mc_samples=500)
    assert result.method == "monte_carlo"
    assert result.reason == "plugin ExtraDie implements duel_roll, which the exact model does not account for"
    assert result.plugins == ("ExtraDie",)


def test_a_model_that_accounts_for_the_pack_stays_exact_and_is_right():
    h = host(duel_odds.DuelExact(accounts_for=frozenset({"ExtraDie"})), duel_odds.ExtraDie())
    exact = compute_odds(h, request(bonus=1), duel_odds.tokens())
    assert exact.method == "exact" and "accounts for ExtraDie" in exact.reason
    mc = compute_odds(h, request(bonus=1), duel_odds.tokens(), method="monte_carlo", mc_samples=SAMPLES, seed=2)
    assert disagreements(exact, mc) == []
    # ...and declaring the pack's effect, which the model does not know, falls back
    declared = request(bonus=1, charms=[{"id": "extra"}])
    assert compute_odds(h, declared, duel_odds.tokens(), mc_samples=200).method == "monte_carlo"


def test_an_inert_pack_not_declared_keeps_the_odds_exact():
    """Issue 10: a pack that changes nothing unless declared (``Declarable(inert=True)``)
    does not turn every exact answer into Monte Carlo merely by being installed."""
    h = host(duel_odds.DuelExact(), duel_odds.ExtraDie(inert=True))
    exact = compute_odds(h, request(bonus=1), duel_odds.tokens())
    assert exact.method == "exact", exact.reason
    assert exact.reason == "the duel exact model covers this attack (ExtraDie: installed, nothing of it declared)"
    mc = compute_odds(h, request(bonus=1), duel_odds.tokens(), method="monte_carlo", mc_samples=SAMPLES, seed=2)
    assert disagreements(exact, mc) == []  # the promise holds: the real pipeline agrees
    declared = request(bonus=1, charms=[{"id": "extra"}])
    assert compute_odds(h, declared, duel_odds.tokens(), mc_samples=200).method == "monte_carlo"


def test_an_answer_the_model_does_not_know_falls_back_to_monte_carlo():
    h = host(duel_odds.DuelExact())
    result = compute_odds(h, request(), duel_odds.tokens(rerolls=1), answers={"reroll": "all"}, mc_samples=300)
    assert result.method == "monte_carlo"


def test_exact_can_be_required_and_refuses_when_unavailable():
    with pytest.raises(InvalidRequest) as err:
        compute_odds(host(), request(), duel_odds.tokens(), method="exact")
    assert err.value.code == "invalid_request"
    assert "no exact model" in err.value.message


def test_bad_requests_are_refused_like_live_attacks():
    h = host(duel_odds.DuelExact())
    with pytest.raises(InvalidRequest):
        compute_odds(h, request(bonus="many"), duel_odds.tokens())
    with pytest.raises(InvalidRequest):
        compute_odds(h, request(targets=()), duel_odds.tokens())
    with pytest.raises(InvalidRequest):
        compute_odds(h, request(), duel_odds.tokens(), answers={"defense": "flee"})
    with pytest.raises(InvalidRequest):
        compute_odds(h, request(), duel_odds.tokens(), mc_samples=0)
    with pytest.raises(InvalidRequest):
        compute_odds(h, request(), duel_odds.tokens(), method="guess")
    with pytest.raises(InvalidRequest):
        compute_odds(h, {**request(), "answers": ["none"]}, duel_odds.tokens())
    with pytest.raises(InvalidRequest):
        compute_odds(h, {**request(), "targets": "b"}, duel_odds.tokens())


class BrokenModel:
    @hookimpl
    def vtt_bridge_exact_odds(self, ruleset, request):
        return ExactOdds(outcomes=Distribution({AttackOutcome.miss(): Fraction(1, 2)}))


def test_a_model_whose_probabilities_do_not_sum_to_one_is_a_plugin_error():
    with pytest.raises(PluginError) as err:
        compute_odds(host(BrokenModel()), request(), duel_odds.tokens())
    assert err.value.details["hook"] == "vtt_bridge_exact_odds"


def test_owner_is_the_plugin_providing_the_ruleset():
    assert ruleset_owner(host(), "duel") == "ScoredDuelRules"
    assert ruleset_owner(host(), "nothing") is None


def test_outcome_conventions_are_read_leniently():
    assert outcome_from({}) == AttackOutcome(hit=False, damage=0)
    o = outcome_from({"hit": True, "damage": 3, "conditions": {"b": ["dying", "incapacitated"], "a": "reeling"}})
    assert o.conditions == frozenset({("b", "dying"), ("b", "incapacitated"), ("a", "reeling")})


def test_models_are_read_leniently_and_sorted_however_many():
    one = outcome_from({"hit": 1, "damage": 2.0, "models": {"b": {"hit": 1, "damage": 2, "roll": 9}}})
    assert one.models == (("b", True, 2),) and (one.hit, one.damage) == (True, 2)
    many = outcome_from({"models": {"c": {"hit": True}, "b": {"damage": 4}, "x": "not a mapping"}})
    assert many.models == (("b", False, 4), ("c", True, 0))
    assert outcome_from({"models": {"b": "not a mapping"}, "conditions": {}}) == AttackOutcome(hit=False)


def test_monte_carlo_counts_each_outcome_once_whatever_its_dicts_order():
    # Counted by plain keys, made into outcomes at the end: dicts in another order are the same outcome.
    from vtt_bridge.odds.model import outcome_key, outcome_of_key

    a = {"hit": True, "damage": 1, "conditions": {"b": ["dying"], "a": ["reeling"]}, "models": {"b": {}, "c": {}}}
    b = {"models": {"c": {}, "b": {}}, "conditions": {"a": ["reeling"], "b": ["dying"]}, "damage": 1, "hit": True}
    assert outcome_key(a) == outcome_key(b)
    assert outcome_of_key(outcome_key(a)) == outcome_from(a) == outcome_from(b)


def test_sample_summary_standard_errors():
    outcomes = [AttackOutcome(hit=True, damage=2)] * 3 + [AttackOutcome.miss()]
    s = summarise_samples(outcomes, "b")
    assert s.hit.value == 0.75 and s.hit.se == pytest.approx(math.sqrt(0.75 * 0.25 / 4))
    assert s.expected_damage.value == 1.5
    assert s.expected_damage.se == pytest.approx(math.sqrt(1.0 / 4))  # sample variance (n−1): 1.0


def test_seeds_are_distinct_and_deterministic():
    seeds = sample_seeds(0, 1000)
    assert len(set(seeds)) == 1000 and seeds == sample_seeds(0, 1000) and seeds != sample_seeds(1, 1000)
    assert all(0 <= s < 2**63 for s in seeds)


def test_payload_shape_is_json():
    result = compute_odds(host(duel_odds.DuelExact()), request(bonus=1), duel_odds.tokens(), answers={"defense": "none"})
    payload = json.loads(json.dumps(result.to_dict()))
    assert set(payload) == {
        "ruleset", "attacker", "targets", "method", "reason", "samples", "seed", "answers", "unit",
        "hit", "target_hit", "expected_damage", "damage", "models", "conditions", "plugins", "notes",
    }
    assert payload["method"] == "exact"
    # One target, no per-model outcome: the target's figures are the attack's.
    assert payload["target_hit"] == payload["hit"]
    assert [m["token"] for m in payload["models"]] == ["b"]
    assert payload["models"][0]["damage"] == payload["damage"]
    assert payload["hit"] == {"value": 7 / 8, "se": None, "exact": "7/8"}
    assert payload["damage"][0] == {"damage": 0, "value": 1 / 8, "se": None, "exact": "1/8"}
    assert payload["conditions"] == [{"token": "b", "condition": "down", "value": 0.5, "se": None, "exact": "1/2"}]
    mc = compute_odds(host(), request(), duel_odds.tokens(), mc_samples=100).to_dict()
    assert mc["method"] == "monte_carlo" and mc["samples"] == 100 and mc["hit"]["se"] is not None
    assert "exact" not in mc["hit"]


def test_render_shows_table_and_bars():
    result = compute_odds(host(duel_odds.DuelExact()), request(bonus=2), duel_odds.tokens(), answers={"defense": "none"})
    text = render(result, width=20)
    assert "method: exact" in text and "damage" in text and "b: down" in text
    assert "█" in text
    rows = [line for line in text.splitlines() if line.strip().startswith(("0 ", "1 ", "2 ", "3 ", "4 "))]
    assert len(rows) == len(result.damage)
    mc = render(compute_odds(host(), request(), duel_odds.tokens(), mc_samples=200, seed=1))
    assert "Monte Carlo" in mc and "±" in mc


def test_worker_processes_give_the_same_counts():
    h = host()
    one = compute_odds(h, request(bonus=2), duel_odds.tokens(), mc_samples=2000, seed=9, method="monte_carlo")
    two = compute_odds(h, request(bonus=2), duel_odds.tokens(), mc_samples=2000, seed=9, method="monte_carlo", workers=2)
    assert one == two


@pytest.mark.parametrize("samples", [60, 61, 62])
def test_the_counts_do_not_depend_on_how_the_samples_are_shared(monkeypatch, samples):
    from vtt_bridge.odds import montecarlo, odds_request

    monkeypatch.setattr(montecarlo, "MIN_PER_WORKER", 10)
    monkeypatch.setattr(montecarlo, "CHUNK", 7)  # chunks dealt to every process, the last one short
    h = host()
    req = odds_request(h, request(bonus=1), duel_odds.tokens())
    one = montecarlo.monte_carlo(h, req, samples=samples, seed=4)
    assert sum(one.values()) == samples and len(one) > 2
    for workers in (2, 3):  # this process and 1 or 2 forked ones; shares of unequal size when 3 does not divide
        assert montecarlo.monte_carlo(h, req, samples=samples, seed=4, workers=workers) == one
    assert montecarlo.monte_carlo(h, req, samples=samples, seed=5, workers=2) != one


class FailsAt:
    """A pack with a bug that one sample's dice reach (a probe's scripted dice do not)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    @hookimpl
    def duel_wounds(self, ctx):
        if ctx.dice.seed == self.seed:
            raise ZeroDivisionError("the bug")


class DiesWhenForked:
    """A pack that kills any process but the one that loaded it (a worker dying mid-share)."""

    def __init__(self) -> None:
        self.pid = os.getpid()

    @hookimpl
    def duel_wounds(self, ctx):
        if os.getpid() != self.pid:
            os._exit(1)


def test_a_failure_in_a_forked_share_is_raised_here_as_in_one_process(monkeypatch):
    from vtt_bridge.odds import montecarlo, odds_request

    monkeypatch.setattr(montecarlo, "MIN_PER_WORKER", 10)
    monkeypatch.setattr(montecarlo, "CHUNK", 7)  # chunks dealt to every process, the last one short
    h = host(FailsAt(montecarlo.sample_seeds(3, 40)[30]))  # sample 30: in chunk 4 of 6, whichever process takes it
    req = odds_request(h, request(bonus=3), duel_odds.tokens())
    with pytest.raises(PluginError) as one:
        montecarlo.monte_carlo(h, req, samples=40, seed=3)
    with pytest.raises(PluginError) as two:
        montecarlo.monte_carlo(h, req, samples=40, seed=3, workers=2)
    assert one.value.details == two.value.details and "ZeroDivisionError" in str(two.value)


def test_a_worker_that_starts_late_takes_fewer_chunks_and_the_counts_stay(monkeypatch):
    from vtt_bridge.odds import montecarlo, odds_request

    monkeypatch.setattr(montecarlo, "MIN_PER_WORKER", 10)
    monkeypatch.setattr(montecarlo, "CHUNK", 5)
    h = host()
    req = odds_request(h, request(bonus=2), duel_odds.tokens())
    one = montecarlo.monte_carlo(h, req, samples=80, seed=6)
    dealt: list[int] = []
    real = montecarlo._chunks

    def slow_child(host_, request_, seed, samples, claim, done):
        if os.getpid() != parent:
            time.sleep(0.3)  # forked late, or on a busy core: this process deals out the rest meanwhile
        keys = real(host_, request_, seed, samples, claim, done)
        if os.getpid() == parent:
            dealt.extend(done)
        return keys

    parent = os.getpid()
    monkeypatch.setattr(montecarlo, "_chunks", slow_child)
    two = montecarlo.monte_carlo(h, req, samples=80, seed=6, workers=2)
    assert two == one and list(two) == sorted(one)  # same counts, in the outcomes' order
    assert len(dealt) > 8  # of 16 chunks: this process took more than its half


def test_a_share_whose_worker_died_is_resolved_here(monkeypatch):
    from vtt_bridge.odds import montecarlo, odds_request

    monkeypatch.setattr(montecarlo, "MIN_PER_WORKER", 10)
    monkeypatch.setattr(montecarlo, "CHUNK", 7)  # chunks dealt to every process, the last one short
    h = host(DiesWhenForked())
    req = odds_request(h, request(bonus=3), duel_odds.tokens())
    one = montecarlo.monte_carlo(h, req, samples=40, seed=3)
    assert montecarlo.monte_carlo(h, req, samples=40, seed=3, workers=2) == one


def test_a_probe_stops_at_the_first_roll_with_the_numbers_set():
    from vtt_bridge.odds import odds_request

    req = odds_request(host(), request(bonus=3), duel_odds.tokens())
    stopped = req.probe()
    assert stopped.exhausted and stopped.step == "roll" and stopped.ctx.pool == 5
    done = req.probe([6, 6, 6, 1, 1])
    assert not done.exhausted and done.ctx.outcome["damage"] == 2  # three hits, one blocked


class RefusingModel:
    @hookimpl
    def vtt_bridge_exact_odds(self, ruleset, request):
        raise InvalidRequest("not enough motes", details={"charm": "x"})


class CrashingModel:
    @hookimpl
    def vtt_bridge_exact_odds(self, ruleset, request):
        return {}["nothing"]


def test_a_refusal_passes_through_and_a_crash_is_a_plugin_error():
    with pytest.raises(InvalidRequest) as refused:
        compute_odds(host(RefusingModel()), request(), duel_odds.tokens())
    assert refused.value.code == "invalid_request"
    with pytest.raises(PluginError) as crashed:
        compute_odds(host(CrashingModel()), request(), duel_odds.tokens())
    assert crashed.value.details["exception"] == "KeyError"
