"""A finite probability distribution: outcome → probability, exact or not.

:class:`Distribution` is an immutable value. Its probabilities are
:class:`fractions.Fraction` when every piece was built from dice (exact), or
floats when some input was a float (an estimate, a rounded number). Rules are
chained with :meth:`Distribution.map` (a deterministic step) and
:meth:`Distribution.bind` (a step that rolls again, depending on what came
before): that is convolution written as the rulebook reads, one step at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any, Generic, TypeVar

__all__ = ["Distribution", "Prob"]

T = TypeVar("T")
U = TypeVar("U")

Prob = Fraction | float

_ONE = Fraction(1)


class Distribution(Generic[T]):
    """Outcomes and their probabilities; equal outcomes are merged, zeros dropped.

    Build one with :meth:`certain`, :meth:`uniform`, :meth:`from_die` (an
    icepool ``Die``) or from ``{outcome: probability}``; combine with
    :meth:`map`, :meth:`bind`, :meth:`joint`; read with :meth:`prob`,
    :meth:`mean`, :meth:`items`.
    """

    __slots__ = ("_p",)

    _p: dict[T, Prob]

    def __init__(self, pairs: Mapping[T, Prob] | Iterable[tuple[T, Prob]] = ()) -> None:
        merged: dict[T, Prob] = {}
        items = pairs.items() if isinstance(pairs, Mapping) else pairs
        for outcome, p in items:
            if p < 0:
                raise ValueError(f"negative probability {p!r} for {outcome!r}")
            if p:
                merged[outcome] = merged.get(outcome, 0) + p
        object.__setattr__(self, "_p", merged)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Distribution is immutable")

    # -- building ------------------------------------------------------------

    @classmethod
    def certain(cls, outcome: T) -> Distribution[T]:
        """The outcome happens with probability 1."""
        return cls(((outcome, _ONE),))

    @classmethod
    def uniform(cls, outcomes: Iterable[T]) -> Distribution[T]:
        """Each listed outcome equally likely (a die: ``uniform(range(1, 7))``)."""
        listed = list(outcomes)
        if not listed:
            raise ValueError("uniform over no outcomes")
        share = Fraction(1, len(listed))
        return cls((o, share) for o in listed)

    @classmethod
    def from_die(cls, die: Any) -> Distribution[Any]:
        """An icepool ``Die`` as an exact distribution of its outcomes."""
        denominator = die.denominator()
        return cls((outcome, Fraction(quantity, denominator)) for outcome, quantity in die.items())

    # -- reading -------------------------------------------------------------

    def items(self) -> Iterator[tuple[T, Prob]]:
        return iter(self._p.items())

    def outcomes(self) -> list[T]:
        return list(self._p)

    def __getitem__(self, outcome: T) -> Prob:
        return self._p.get(outcome, 0)

    def __contains__(self, outcome: object) -> bool:
        return outcome in self._p

    def __iter__(self) -> Iterator[T]:
        return iter(self._p)

    def __len__(self) -> int:
        return len(self._p)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Distribution) and self._p == other._p

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{o!r}: {p}" for o, p in list(self._p.items())[:6])
        more = ", ..." if len(self._p) > 6 else ""
        return f"Distribution({{{shown}{more}}})"

    @property
    def exact(self) -> bool:
        """Every probability is a Fraction (no float came in)."""
        return all(isinstance(p, Fraction) for p in self._p.values())

    def total(self) -> Prob:
        """The sum of the probabilities: 1 for a complete distribution."""
        return sum(self._p.values(), Fraction(0))

    def prob(self, predicate: Callable[[T], bool]) -> Prob:
        """Probability that ``predicate(outcome)`` holds."""
        return sum((p for o, p in self._p.items() if predicate(o)), Fraction(0))

    def mean(self, value: Callable[[T], Any] | None = None) -> Prob:
        """Expected value of ``value(outcome)`` (of the outcome itself by default)."""
        if value is None:
            return sum((o * p for o, p in self._p.items()), Fraction(0))  # type: ignore[operator]
        return sum((value(o) * p for o, p in self._p.items()), Fraction(0))

    def sorted_items(self) -> list[tuple[T, Prob]]:
        return sorted(self._p.items(), key=lambda item: item[0])  # type: ignore[arg-type, return-value]

    # -- combining -----------------------------------------------------------

    def map(self, f: Callable[[T], U]) -> Distribution[U]:
        """Apply a deterministic rule to every outcome; outcomes that meet are merged."""
        merged: dict[U, Prob] = {}
        for outcome, p in self._p.items():
            key = f(outcome)
            merged[key] = merged.get(key, 0) + p
        return Distribution(merged)

    def bind(self, f: Callable[[T], Distribution[U]]) -> Distribution[U]:
        """Follow each outcome with the distribution ``f(outcome)`` and mix the results.

        The next roll may depend on the one before: raw damage depends on the
        attack's successes, the damage roll on the raw damage, and so on.
        """
        merged: dict[U, Prob] = {}
        for outcome, p in self._p.items():
            for nxt, q in f(outcome)._p.items():
                merged[nxt] = merged.get(nxt, 0) + p * q
        return Distribution(merged)

    def joint(self, other: Distribution[U]) -> Distribution[tuple[T, U]]:
        """The two independent distributions together, as pairs."""
        return Distribution(((a, b), p * q) for a, p in self._p.items() for b, q in other._p.items())

    def add(self, other: Distribution[Any]) -> Distribution[Any]:
        """The sum of two independent numeric outcomes (convolution)."""
        merged: dict[Any, Prob] = {}
        for a, p in self._p.items():
            for b, q in other._p.items():
                key = a + b  # type: ignore[operator]
                merged[key] = merged.get(key, 0) + p * q
        return Distribution(merged)

    def to_float(self) -> Distribution[T]:
        """The same distribution with float probabilities."""
        return Distribution((o, float(p)) for o, p in self._p.items())
