"""Shared pieces of the per-ruleset odds tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtt_bridge import Token, make_host
from vtt_bridge.odds import OddsResult, compute_odds

from .agreement import disagreements

#: Resolutions per Monte Carlo agreement run: enough for 4.5σ bounds to bite, fast enough to run often.
SAMPLES = 4000


def real_host(*extra: str):
    """The host a user gets: every installed entry point (rulesets, packs, their odds models)."""
    return make_host(plugins=list(extra), environ={})


def tokens_of(host: Any, ruleset: str, raw: list[Mapping[str, Any]]) -> dict[str, Token]:
    """Tokens validated by the ruleset's schema, as the CLI and the server load them."""
    out = {}
    for t in raw:
        system = host.load_system(ruleset, t["system"])
        out[t["id"]] = Token(t["id"], t.get("name", t["id"]), ruleset, system, ownership=t.get("ownership"))
    return out


def exact_and_mc(host, request, tokens, *, answers=None, samples=SAMPLES, seed=1) -> tuple[OddsResult, OddsResult]:
    exact = compute_odds(host, request, tokens, answers=answers, method="exact")
    mc = compute_odds(host, request, tokens, answers=answers, method="monte_carlo", mc_samples=samples, seed=seed)
    return exact, mc


def assert_agree(host, request, tokens, *, answers=None, samples=SAMPLES, seed=1) -> OddsResult:
    exact, mc = exact_and_mc(host, request, tokens, answers=answers, samples=samples, seed=seed)
    assert disagreements(exact, mc) == []
    return exact
