"""Statistical agreement between an exact answer and a Monte Carlo run.

Each probability ``p`` the exact model gives (hit any model, hit the target,
every damage value, every condition, and each model's hit and damage) must match the Monte Carlo frequency within ``k`` standard errors
``sqrt(p(1-p)/n)`` (computed from the exact ``p``, so an outcome the model
calls impossible must not be seen at all), and the mean damage within ``k``
of its estimated standard error. The runs use fixed seeds: deterministic.
"""

from __future__ import annotations

import math

from vtt_bridge.odds import OddsResult

K = 4.5


def _close(name: str, exact: float, observed: float, se: float, problems: list[str]) -> None:
    if abs(exact - observed) > K * se + 1e-12:
        problems.append(f"{name}: exact {exact:.5f}, Monte Carlo {observed:.5f} (se {se:.5f})")


def disagreements(exact: OddsResult, mc: OddsResult) -> list[str]:
    """Every quantity on which the two differ by more than ``K`` standard errors."""
    assert exact.method == "exact", exact.reason
    assert mc.method == "monte_carlo" and mc.samples
    n = mc.samples
    problems: list[str] = []

    def se(p: float) -> float:
        return math.sqrt(p * (1 - p) / n)

    _close("hit", exact.hit.value, mc.hit.value, se(exact.hit.value), problems)
    _close("target hit", exact.target_hit.value, mc.target_hit.value, se(exact.target_hit.value), problems)
    mine = {m.token: m for m in exact.models}
    theirs = {m.token: m for m in mc.models}
    if [m.token for m in exact.models][:1] != [m.token for m in mc.models][:1]:
        problems.append("the models are not listed target first in both")
    for token in sorted(set(mine) | set(theirs)):
        a, b = mine.get(token), theirs.get(token)
        if a is None or b is None:
            # A model only one side lists: the other must never hit or damage it.
            present = a or b
            assert present is not None
            if present.hit.value > 0 or any(d > 0 and e.value > 0 for d, e in present.damage):
                problems.append(f"{token}: listed by one method only")
            continue
        _close(f"{token} hit", a.hit.value, b.hit.value, se(a.hit.value), problems)
        amounts = {d for d, _ in a.damage} | {d for d, _ in b.damage}
        for d in sorted(amounts):
            p = next((e.value for x, e in a.damage if x == d), 0.0)
            q = next((e.value for x, e in b.damage if x == d), 0.0)
            _close(f"{token} damage={d}", p, q, se(p), problems)
    damages = {d for d, _ in exact.damage} | {d for d, _ in mc.damage}
    for d in sorted(damages):
        p = exact.damage_probability(d)
        _close(f"damage={d}", p, mc.damage_probability(d), se(p), problems)
    conditions = {(t, c) for t, c, _ in exact.conditions} | {(t, c) for t, c, _ in mc.conditions}
    for t, c in sorted(conditions):
        p = exact.condition_probability(t, c)
        _close(f"{t}:{c}", p, mc.condition_probability(t, c), se(p), problems)
    mean_se = mc.expected_damage.se or 0.0
    _close("expected damage", exact.expected_damage.value, mc.expected_damage.value, max(mean_se, 1 / n), problems)
    return problems
