"""Monte Carlo odds: the attack resolved N times through the real pipeline.

Every resolution is an ordinary one — the same host, plugins, steps and
decisions as a live attack — with its own seed and the rules' default for
every decision not answered in advance. Seeds are derived from one base seed,
so a run is reproducible.
"""

from __future__ import annotations

from typing import Any

from .model import AttackOutcome, OddsRequest, outcome_from

__all__ = ["monte_carlo", "sample_seeds"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def sample_seeds(seed: int, n: int) -> list[int]:
    """``n`` well-spread dice seeds derived from ``seed`` (SplitMix64 outputs)."""
    base = seed & _MASK
    return [_mix((base + (i + 1) * _GOLDEN) & _MASK) >> 1 for i in range(n)]


def monte_carlo(host: Any, request: OddsRequest, *, samples: int, seed: int) -> list[AttackOutcome]:
    """Resolve ``request`` ``samples`` times with derived seeds; the outcome of each.

    :param host: the :class:`~vtt_bridge.Host` whose plugins resolve the attack.
    :param request: a validated request (see :func:`~vtt_bridge.odds.compute_odds`).
    :param samples: how many resolutions (at least 1).
    :param seed: the base seed.
    """
    if samples < 1:
        raise ValueError("Monte Carlo needs at least one sample")
    engine = host.engine
    ruleset = request.ruleset
    tokens = request.tokens
    attacker = request.attacker
    targets = list(request.targets)
    declaration = request.declaration
    answers = {key: list(given) for key, given in request.answers.items()} or None
    out = []
    append = out.append
    for s in sample_seeds(seed, samples):
        res = engine.start(
            ruleset, tokens, attacker=attacker, targets=targets, declaration=declaration, seed=s, answers=answers
        )
        append(outcome_from(res.run().outcome))
    return out
