"""The odds of one attack, as reported: exact values or estimates with standard errors."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from .distribution import Distribution
from .model import AttackOutcome

__all__ = ["Estimate", "ModelOdds", "OddsResult", "Method", "summarise_exact", "summarise_samples"]

Method = Literal["exact", "monte_carlo"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """A probability or an expectation.

    :ivar value: the number, as a float.
    :ivar se: its standard error (Monte Carlo), ``None`` when exact.
    :ivar exact: the exact value as a fraction, when known.
    """

    value: float
    se: float | None = None
    exact: Fraction | None = None

    @classmethod
    def of_fraction(cls, p: Fraction | float) -> Estimate:
        return cls(value=float(p), exact=p if isinstance(p, Fraction) else None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "se": self.se}
        if self.exact is not None:
            out["exact"] = f"{self.exact.numerator}/{self.exact.denominator}"
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelOdds:
    """One model's chances: hit, and the damage it takes (an AOE's blast, a spray).

    :ivar token: the model's token id.
    :ivar hit: probability that the attack hits this model (directly or by a blast).
    :ivar damage: ``(damage, probability)`` for every amount this model can take,
        0 (missed, or no damage) included, ascending.
    :ivar expected_damage: the mean damage this model takes.
    """

    token: str
    hit: Estimate
    damage: tuple[tuple[int, Estimate], ...]
    expected_damage: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "hit": self.hit.to_dict(),
            "expected_damage": self.expected_damage.to_dict(),
            "damage": [{"damage": d, **est.to_dict()} for d, est in self.damage],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class OddsResult:
    """The chance of an attack before it is rolled.

    :ivar method: ``"exact"`` (the ruleset's model) or ``"monte_carlo"`` (the real pipeline).
    :ivar reason: why that method was used, in a sentence.
    :ivar hit: probability that the attack hits any model (for an AOE or a spray,
        any model under it).
    :ivar target_hit: probability that the attack hits the target (the first of
        ``targets``), directly or by a blast; ``hit`` for a one-model attack.
    :ivar damage: ``(damage, probability)`` for every damage value the target can
        take, ascending.
    :ivar conditions: ``(token_id, condition, probability)`` for every condition that can
        be reached, ordered by token then condition.
    :ivar expected_damage: the target's mean damage (0 counted for a miss).
    :ivar models: every model the attack can hit or damage, target first, then
        by token id: each one's hit chance and damage.
    :ivar unit: what damage counts ("health levels", "damage points", "wounds").
    :ivar samples: resolutions run (Monte Carlo), else ``None``.
    :ivar seed: the Monte Carlo seed, else ``None``.
    :ivar plugins: plugins other than the ruleset's own that implement its hooks.
    :ivar notes: what a model assumes or approximates.
    """

    ruleset: str
    attacker: str
    targets: tuple[str, ...]
    method: Method
    reason: str
    hit: Estimate
    damage: tuple[tuple[int, Estimate], ...]
    conditions: tuple[tuple[str, str, Estimate], ...]
    expected_damage: Estimate
    target_hit: Estimate
    models: tuple[ModelOdds, ...] = ()
    unit: str = "damage"
    samples: int | None = None
    seed: int | None = None
    answers: Mapping[str, str] = field(default_factory=dict)
    plugins: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def damage_probability(self, value: int) -> float:
        for d, est in self.damage:
            if d == value:
                return est.value
        return 0.0

    def condition_probability(self, token_id: str, condition: str) -> float:
        for t, c, est in self.conditions:
            if (t, c) == (token_id, condition):
                return est.value
        return 0.0

    def to_dict(self) -> dict[str, Any]:
        """The wire form (the ``attack.odds`` acknowledgement's ``odds``)."""
        return {
            "ruleset": self.ruleset,
            "attacker": self.attacker,
            "targets": list(self.targets),
            "method": self.method,
            "reason": self.reason,
            "samples": self.samples,
            "seed": self.seed,
            "answers": dict(self.answers),
            "unit": self.unit,
            "hit": self.hit.to_dict(),
            "target_hit": self.target_hit.to_dict(),
            "expected_damage": self.expected_damage.to_dict(),
            "damage": [{"damage": d, **est.to_dict()} for d, est in self.damage],
            "models": [m.to_dict() for m in self.models],
            "conditions": [{"token": t, "condition": c, **est.to_dict()} for t, c, est in self.conditions],
            "plugins": list(self.plugins),
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """The numbers of an :class:`OddsResult`, before the method and reason are attached."""

    hit: Estimate
    target_hit: Estimate
    damage: tuple[tuple[int, Estimate], ...]
    conditions: tuple[tuple[str, str, Estimate], ...]
    expected_damage: Estimate
    models: tuple[ModelOdds, ...]


def _model_ids(outcomes: Iterable[AttackOutcome], target: str) -> list[str]:
    """The target, then every other model any outcome names, by token id."""
    others = {m for o in outcomes for m, _, _ in o.models} - {target}
    return [target, *sorted(others)]


def summarise_exact(outcomes: Distribution[AttackOutcome], target: str) -> Summary:
    """Hit chances, damage distributions, condition chances and means of an exact distribution.

    :param target: the first target's token id (``hit the target``, ``damage``).
    """
    reached = sorted({pair for o in outcomes for pair in o.conditions})
    models = []
    for token in _model_ids(outcomes, target):
        per = outcomes.map(lambda o, token=token: o.target(token))
        damage = per.map(lambda hd: hd[1])
        models.append(
            ModelOdds(
                token=token,
                hit=Estimate.of_fraction(per.prob(lambda hd: hd[0])),
                damage=tuple((d, Estimate.of_fraction(p)) for d, p in damage.sorted_items()),
                expected_damage=Estimate.of_fraction(damage.mean()),
            )
        )
    damage = outcomes.map(lambda o: o.damage)
    return Summary(
        hit=Estimate.of_fraction(outcomes.prob(lambda o: o.hit)),
        target_hit=models[0].hit,
        damage=tuple((d, Estimate.of_fraction(p)) for d, p in damage.sorted_items()),
        conditions=tuple(
            (t, c, Estimate.of_fraction(outcomes.prob(lambda o, pair=(t, c): pair in o.conditions)))
            for t, c in reached
        ),
        expected_damage=Estimate.of_fraction(outcomes.mean(lambda o: o.damage)),
        models=tuple(models),
    )


def _proportion(count: int, n: int) -> Estimate:
    p = count / n
    return Estimate(value=p, se=math.sqrt(p * (1 - p) / n))


def _mean(by_value: Mapping[int, int], n: int) -> Estimate:
    """The mean of counted values, with the sample standard deviation over ``sqrt(n)``."""
    total = sum(d * c for d, c in by_value.items())
    squares = sum(d * d * c for d, c in by_value.items())
    mean = total / n
    variance = (squares - n * mean * mean) / (n - 1) if n > 1 else 0.0
    return Estimate(value=mean, se=math.sqrt(max(variance, 0.0) / n))


def summarise_samples(samples: Mapping[AttackOutcome, int] | Iterable[AttackOutcome], target: str) -> Summary:
    """The same numbers estimated from resolutions, each with its standard error.

    ``samples`` are the outcomes, or how often each came (a ``Counter``). A
    proportion's standard error is ``sqrt(p(1-p)/n)``; the mean's is the
    sample standard deviation over ``sqrt(n)``.
    """
    counts = Counter(samples) if not isinstance(samples, Mapping) else Counter(dict(samples))
    n = sum(counts.values())
    if n == 0:
        raise ValueError("no samples")
    hits = sum(c for o, c in counts.items() if o.hit)
    by_damage: Counter[int] = Counter()
    by_condition: Counter[tuple[str, str]] = Counter()
    for o, c in counts.items():
        by_damage[o.damage] += c
        for pair in o.conditions:
            by_condition[pair] += c
    models = []
    for token in _model_ids(counts, target):
        hit_count = 0
        taken: Counter[int] = Counter()
        for o, c in counts.items():
            hit, damage = o.target(token)
            hit_count += c if hit else 0
            taken[damage] += c
        models.append(
            ModelOdds(
                token=token,
                hit=_proportion(hit_count, n),
                damage=tuple((d, _proportion(k, n)) for d, k in sorted(taken.items())),
                expected_damage=_mean(taken, n),
            )
        )
    return Summary(
        hit=_proportion(hits, n),
        target_hit=models[0].hit,
        damage=tuple((d, _proportion(c, n)) for d, c in sorted(by_damage.items())),
        conditions=tuple((t, c, _proportion(k, n)) for (t, c), k in sorted(by_condition.items())),
        expected_damage=_mean(by_damage, n),
        models=tuple(models),
    )
