"""``compute_odds``: the one entry point the server and the CLI call."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..engine.resolution import parse_answer
from ..engine.tokens import Token
from ..errors import DiceExhausted, InvalidRequest
from .method import Prefer, choose_method
from .model import OddsRequest, Probe
from .montecarlo import monte_carlo
from .result import OddsResult, summarise_exact, summarise_samples

__all__ = ["DEFAULT_SAMPLES", "compute_odds", "odds_request"]

DEFAULT_SAMPLES = 10_000
MAX_SAMPLES = 1_000_000


def odds_request(
    host: Any,
    request: Mapping[str, Any],
    tokens: Mapping[str, Token],
    *,
    answers: Mapping[str, Any] | None = None,
) -> OddsRequest:
    """Validate an attack request exactly as a live attack is validated.

    ``request`` holds ``ruleset``, ``attacker``, ``targets``, ``declaration`` and
    optionally ``answers``; ``answers`` (decision key or name → option, or a
    list for a repeated decision) add to and override the request's. One probe
    resolution (seed 0) is run and thrown away, so a request a live attack
    would refuse (an answer that is not an option, a Charm the token cannot
    pay for) is refused here too, whichever method then gives the odds.
    """
    if not isinstance(request, Mapping):
        raise InvalidRequest("an odds request is an object", details={"request": ["Not a valid mapping."]})
    ruleset = request.get("ruleset")
    if not isinstance(ruleset, str):
        raise InvalidRequest("the request names no ruleset", details={"ruleset": ["Missing data for required field."]})
    targets = request.get("targets", [])
    if not isinstance(targets, (list, tuple)) or not all(isinstance(t, str) for t in targets):
        raise InvalidRequest("targets is a list of token ids", details={"targets": ["Not a valid list."]})
    given_in_request = request.get("answers") or {}
    if not isinstance(given_in_request, Mapping) or not isinstance(answers or {}, Mapping):
        raise InvalidRequest("answers map decisions to options", details={"answers": ["Not a valid mapping."]})
    given = {**given_in_request, **(answers or {})}
    parsed = {
        key: tuple(parse_answer(v) for v in (value if isinstance(value, list) else [value]))
        for key, value in given.items()
    }
    probe = host.start(
        ruleset,
        tokens,
        attacker=str(request.get("attacker", "")),
        targets=list(targets),
        declaration=request.get("declaration", {}),
        seed=0,
        answers={key: list(value) for key, value in parsed.items()},
    )
    probe.run()
    ctx = probe.ctx
    return OddsRequest(
        ruleset=ruleset,
        tokens=dict(tokens),
        attacker=ctx.attacker.id,
        targets=tuple(t.id for t in ctx.targets),
        declaration=ctx.declaration,
        answers=parsed,
        prober=_prober(host, ruleset, dict(tokens), ctx.attacker.id, [t.id for t in ctx.targets], ctx.declaration, parsed),
    )


def _prober(host, ruleset, tokens, attacker, targets, declaration, answers) -> Callable[[Sequence[int]], Probe]:
    def probe(faces: Sequence[int]) -> Probe:
        res = host.engine.start(
            ruleset,
            tokens,
            attacker=attacker,
            targets=targets,
            declaration=declaration,
            dice=list(faces),
            answers={key: list(given) for key, given in answers.items()},
            trace=False,  # a model reads the working numbers, the outcome and the stash
        )
        try:
            res.run()
        except DiceExhausted as exc:
            return Probe(ctx=res.ctx, exhausted=True, step=exc.details.get("step"))
        return Probe(ctx=res.ctx, exhausted=False)

    return probe


def compute_odds(
    host: Any,
    request: Mapping[str, Any],
    tokens: Mapping[str, Token],
    *,
    answers: Mapping[str, Any] | None = None,
    mc_samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    method: Prefer = "auto",
    workers: int = 1,
    stop: Callable[[], bool] | None = None,
) -> OddsResult:
    """The odds of an attack before it is rolled.

    :param host: the :class:`~vtt_bridge.Host` (its plugins decide the method).
    :param request: ``{"ruleset", "attacker", "targets", "declaration", "answers"?}``.
    :param tokens: the token snapshots involved, by id.
    :param answers: decisions answered in advance (override the request's); every
        other decision takes the rules' default.
    :param mc_samples: resolutions to run when Monte Carlo is used.
    :param seed: base seed of the Monte Carlo resolutions.
    :param method: ``"auto"`` (see :mod:`vtt_bridge.odds.method`), ``"exact"``
        (refused with ``invalid_request`` when not available) or ``"monte_carlo"``.
    :param workers: processes for Monte Carlo (see :func:`~vtt_bridge.odds.monte_carlo`;
        keep 1 inside a threaded server).
    :param stop: see :func:`~vtt_bridge.odds.monte_carlo`; a Monte Carlo run it
        cuts short reports the samples it ran and says so in ``notes``.
    :raises InvalidRequest: a bad request, as a live attack would refuse it.
    """
    if method not in ("auto", "exact", "monte_carlo"):
        raise InvalidRequest(f"unknown odds method {method!r}", details={"method": ["Must be auto, exact or monte_carlo."]})
    if not isinstance(mc_samples, int) or not 1 <= mc_samples <= MAX_SAMPLES:
        raise InvalidRequest(
            f"samples must be 1-{MAX_SAMPLES}", details={"samples": [f"Must be between 1 and {MAX_SAMPLES}."]}
        )
    req = odds_request(host, request, tokens, answers=answers)
    choice = choose_method(host, req, prefer=method)
    unit = host.ruleset(req.ruleset).damage_unit  # the same whichever method answers
    notes = choice.exact.notes if choice.exact is not None and choice.method == "exact" else ()
    common: dict[str, Any] = {
        "ruleset": req.ruleset,
        "attacker": req.attacker,
        "targets": req.targets,
        "method": choice.method,
        "reason": choice.reason,
        "unit": unit,
        "answers": {key: "; ".join(answer_text(a) for a in given) for key, given in req.answers.items()},
        "plugins": tuple(choice.plugins),
        "notes": notes,
    }
    if choice.method == "exact":
        assert choice.exact is not None
        summary = summarise_exact(choice.exact.outcomes, req.targets[0])
        return OddsResult(**common, **_fields(summary))
    counts = monte_carlo(host, req, samples=mc_samples, seed=seed, workers=workers, stop=stop)
    summary = summarise_samples(counts, req.targets[0])
    ran = sum(counts.values())
    if ran < mc_samples:
        common["notes"] = (*notes, f"stopped at the time budget after {ran} of {mc_samples} samples")
    return OddsResult(**common, **_fields(summary), samples=ran, seed=seed)


def answer_text(answer: Any) -> str:
    """An answer as ``vtt-bridge resolve --answer`` takes it: ``parry`` or ``parry:{"first_excellency": 2}``."""
    if not answer.params:
        return answer.option
    return f"{answer.option}:{json.dumps(dict(answer.params), sort_keys=True, separators=(', ', ': '))}"


def _fields(summary: Any) -> dict[str, Any]:
    return {
        "hit": summary.hit,
        "target_hit": summary.target_hit,
        "damage": summary.damage,
        "conditions": summary.conditions,
        "expected_damage": summary.expected_damage,
        "models": summary.models,
    }
