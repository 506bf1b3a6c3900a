"""A finite probability distribution: outcome → probability, exactly.

:class:`Distribution` is an immutable value. It keeps integer weights over one
common denominator (as icepool does), so convolution is integer arithmetic and
every probability read out is an exact :class:`fractions.Fraction`. Rules are
chained with :meth:`Distribution.map` (a deterministic step) and
:meth:`Distribution.bind` (a step that rolls again, depending on what came
before): that is convolution written as the rulebook reads, one step at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from fractions import Fraction
from math import gcd, lcm
from typing import Any, Generic, TypeVar

__all__ = ["Distribution", "Prob"]

T = TypeVar("T")
U = TypeVar("U")

#: What a probability may be given as; it is read back as a Fraction.
Prob = Fraction | float | int


def _reduced(weights: dict[Any, int], denominator: int) -> tuple[dict[Any, int], int]:
    """Drop zero weights and divide everything by the common factor."""
    kept = {o: w for o, w in weights.items() if w}
    g = denominator
    for w in kept.values():
        g = gcd(g, w)
        if g == 1:
            return kept, denominator
    if g > 1:
        kept = {o: w // g for o, w in kept.items()}
        denominator //= g
    return kept, denominator


class Distribution(Generic[T]):
    """Outcomes and their probabilities; equal outcomes are merged, zeros dropped.

    Build one with :meth:`certain`, :meth:`uniform`, :meth:`from_die` (an
    icepool ``Die``) or from ``{outcome: probability}`` (Fractions, ints or
    floats — a float is taken at its exact binary value); combine with
    :meth:`map`, :meth:`bind`, :meth:`joint`, :meth:`add`; read with
    :meth:`prob`, :meth:`mean`, :meth:`items` (probabilities as Fractions).
    """

    __slots__ = ("_w", "_d")

    _w: dict[T, int]
    _d: int

    def __init__(self, pairs: Mapping[T, Prob] | Iterable[tuple[T, Prob]] = ()) -> None:
        items = list(pairs.items() if isinstance(pairs, Mapping) else pairs)
        probs = []
        for outcome, p in items:
            q = Fraction(p)
            if q < 0:
                raise ValueError(f"negative probability {p!r} for {outcome!r}")
            probs.append((outcome, q))
        denominator = lcm(*(q.denominator for _, q in probs)) if probs else 1
        weights: dict[T, int] = {}
        for outcome, q in probs:
            weights[outcome] = weights.get(outcome, 0) + q.numerator * (denominator // q.denominator)
        self._set(*_reduced(weights, denominator))

    def _set(self, weights: dict[T, int], denominator: int) -> None:
        object.__setattr__(self, "_w", weights)
        object.__setattr__(self, "_d", denominator)

    @classmethod
    def of_weights(cls, weights: dict[Any, int], denominator: int) -> Distribution[Any]:
        """Wrap integer weights over ``denominator`` (no checks: the hot path)."""
        out = object.__new__(cls)
        out._set(*_reduced(weights, denominator))
        return out

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Distribution is immutable")

    # -- building ------------------------------------------------------------

    @classmethod
    def certain(cls, outcome: T) -> Distribution[T]:
        """The outcome happens with probability 1."""
        return cls.of_weights({outcome: 1}, 1)

    @classmethod
    def uniform(cls, outcomes: Iterable[T]) -> Distribution[T]:
        """Each listed outcome equally likely (a die: ``uniform(range(1, 7))``)."""
        listed = list(outcomes)
        if not listed:
            raise ValueError("uniform over no outcomes")
        weights: dict[T, int] = {}
        for o in listed:
            weights[o] = weights.get(o, 0) + 1
        return cls.of_weights(weights, len(listed))

    @classmethod
    def from_die(cls, die: Any) -> Distribution[Any]:
        """An icepool ``Die`` as an exact distribution of its outcomes."""
        return cls.of_weights(dict(die.items()), die.denominator())

    # -- reading -------------------------------------------------------------

    def items(self) -> Iterator[tuple[T, Fraction]]:
        d = self._d
        return ((o, Fraction(w, d)) for o, w in self._w.items())

    def outcomes(self) -> list[T]:
        return list(self._w)

    def __getitem__(self, outcome: T) -> Fraction:
        return Fraction(self._w.get(outcome, 0), self._d)

    def __contains__(self, outcome: object) -> bool:
        return outcome in self._w

    def __iter__(self) -> Iterator[T]:
        return iter(self._w)

    def __len__(self) -> int:
        return len(self._w)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Distribution) and self._d == other._d and self._w == other._w

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{o!r}: {p}" for o, p in list(self.items())[:6])
        more = ", ..." if len(self._w) > 6 else ""
        return f"Distribution({{{shown}{more}}})"

    def total(self) -> Fraction:
        """The sum of the probabilities: 1 for a complete distribution."""
        return Fraction(sum(self._w.values()), self._d)

    def prob(self, predicate: Callable[[T], bool]) -> Fraction:
        """Probability that ``predicate(outcome)`` holds."""
        return Fraction(sum(w for o, w in self._w.items() if predicate(o)), self._d)

    def mean(self, value: Callable[[T], Any] | None = None) -> Fraction:
        """Expected value of ``value(outcome)`` (of the outcome itself by default)."""
        f = value if value is not None else (lambda o: o)
        return Fraction(sum(f(o) * w for o, w in self._w.items())) / self._d

    def sorted_items(self) -> list[tuple[T, Fraction]]:
        return sorted(self.items(), key=lambda item: item[0])  # type: ignore[arg-type, return-value]

    # -- combining -----------------------------------------------------------

    def map(self, f: Callable[[T], U]) -> Distribution[U]:
        """Apply a deterministic rule to every outcome; outcomes that meet are merged."""
        merged: dict[U, int] = {}
        get = merged.get
        for outcome, w in self._w.items():
            key = f(outcome)
            merged[key] = get(key, 0) + w
        return Distribution.of_weights(merged, self._d)

    def bind(self, f: Callable[[T], Distribution[U]]) -> Distribution[U]:
        """Follow each outcome with the distribution ``f(outcome)`` and mix the results.

        The next roll may depend on the one before: raw damage depends on the
        attack's successes, the damage roll on the raw damage, and so on.
        """
        nexts = [(w, f(o)) for o, w in self._w.items()]
        common = lcm(*(n._d for _, n in nexts)) if nexts else 1
        merged: dict[U, int] = {}
        get = merged.get
        for w, n in nexts:
            scale = w * (common // n._d)
            for o, v in n._w.items():
                merged[o] = get(o, 0) + scale * v
        return Distribution.of_weights(merged, self._d * common)

    def joint(self, other: Distribution[U]) -> Distribution[tuple[T, U]]:
        """The two independent distributions together, as pairs."""
        return Distribution.of_weights(
            {(a, b): v * w for a, v in self._w.items() for b, w in other._w.items()}, self._d * other._d
        )

    def add(self, other: Distribution[Any]) -> Distribution[Any]:
        """The sum of two independent numeric outcomes (convolution)."""
        merged: dict[Any, int] = {}
        get = merged.get
        for a, v in self._w.items():
            for b, w in other._w.items():
                key = a + b  # type: ignore[operator]
                merged[key] = get(key, 0) + v * w
        return Distribution.of_weights(merged, self._d * other._d)
