"""Exact distributions of the rolls rulesets make, computed with icepool.

Ruleset-agnostic building blocks for the exact models: success pools (a face
that counts double, botches), sums of dice, the highest die of a mixed pool,
how many dice of a mixed pool beat a number, every sorted set of faces of a
small pool (for rules that read the faces themselves: Warmachine's all-1s,
all-6s and criticals), and multinomial class counts. Each result is cached:
distributions are immutable. Success pools and multinomials are computed here
(see :func:`_pool_counts`, :func:`multinomial`); the rest by icepool.

icepool is imported on first use, so loading a plugin stays cheap.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb

from .distribution import Distribution

__all__ = [
    "clear_caches",
    "count_above",
    "count_at_least",
    "faces",
    "highest",
    "multinomial",
    "success_pool",
    "success_pool_botch",
    "sum_dice",
]


def _icepool():
    import icepool

    return icepool


def _face_counts(sides: int, target: int, double: int | None) -> tuple[int, ...]:
    """How many faces of one die give 0, 1, 2 successes."""
    counts = [0, 0, 0]
    for face in range(1, sides + 1):
        counts[2 if face == double and face >= target else int(face >= target)] += 1
    return tuple(counts[:3] if counts[2] else counts[:2])


@lru_cache(maxsize=None)
def _pool_counts(n: int, sides: int, target: int, double: int | None) -> tuple[int, ...]:
    """Ways ``n`` dice give each number of successes, out of ``sides ** n``.

    Built one die at a time from the pool one die smaller (itself cached), so a
    request needing pools of many sizes pays one small convolution per new
    size. icepool computes the same (``n @ die``; the tests check they agree)
    but builds each size afresh, 2–5 ms a pool on a cold start.
    """
    if n <= 0:
        return (1,)
    previous = _pool_counts(n - 1, sides, target, double)
    die = _face_counts(sides, target, double)
    out = [0] * (len(previous) + len(die) - 1)
    for i, a in enumerate(previous):
        if a:
            for j, b in enumerate(die):
                out[i + j] += a * b
    return tuple(out)


@lru_cache(maxsize=4096)
def success_pool(n: int, sides: int = 10, target: int = 7, double: int | None = None) -> Distribution[int]:
    """Successes of ``n`` dice: each die ``>= target`` is one, a ``double`` face two.

    ``n <= 0`` rolls nothing: 0 successes for certain.
    """
    if n <= 0:
        return Distribution.certain(0)
    counts = _pool_counts(n, sides, target, double)
    return Distribution.of_weights(dict(enumerate(counts)), sides**n)


@lru_cache(maxsize=4096)
def success_pool_botch(
    n: int, sides: int = 10, target: int = 7, double: int | None = None, botch_face: int = 1
) -> Distribution[tuple[int, bool]]:
    """``(successes, botched)`` of ``n`` dice: a botch is no success and at least one ``botch_face``.

    ``P(botch) = P(no success) − P(no die a success or the botch face)``; for
    d10 at 7+ that is ``0.6ⁿ − 0.5ⁿ``.
    """
    plain = success_pool(n, sides, target, double)
    if n <= 0:
        return plain.map(lambda s: (s, False))
    neither = sum(1 for face in range(1, sides + 1) if face < target and face != botch_face)
    clean_failure = Fraction(neither**n, sides**n)
    botch = plain[0] - clean_failure
    pairs: list[tuple[tuple[int, bool], Fraction]] = [((s, False), p) for s, p in plain.items() if s]
    pairs += [((0, True), botch), ((0, False), clean_failure)]
    return Distribution(pairs)


@lru_cache(maxsize=4096)
def sum_dice(n: int, sides: int, modifier: int = 0) -> Distribution[int]:
    """The total of ``n`` dice of ``sides`` sides plus ``modifier``."""
    if n <= 0:
        return Distribution.certain(modifier)
    ip = _icepool()
    return Distribution.from_die(n @ ip.d(sides) + modifier)


@lru_cache(maxsize=4096)
def faces(n: int, sides: int) -> Distribution[tuple[int, ...]]:
    """Every multiset of faces ``n`` dice can show, sorted ascending, with its probability."""
    if n <= 0:
        return Distribution.certain(())
    ip = _icepool()
    return Distribution.from_die(ip.d(sides).pool(n).expand())


@lru_cache(maxsize=4096)
def highest(sizes: tuple[int, ...]) -> Distribution[int]:
    """The highest die of a mixed pool such as ``(8, 6, 4)``; 0 for no dice."""
    if not sizes:
        return Distribution.certain(0)
    if len(sizes) == 1:  # icepool.highest(x) with one argument reads x as outcomes
        return Distribution.uniform(range(1, sizes[0] + 1))
    ip = _icepool()
    return Distribution.from_die(ip.highest(*(ip.d(s) for s in sizes)))


@lru_cache(maxsize=4096)
def count_above(sizes: tuple[int, ...], threshold: int) -> Distribution[int]:
    """How many dice of a mixed pool show strictly more than ``threshold``."""
    out: Distribution[int] = Distribution.certain(0)
    for s in sizes:
        above = min(max(s - threshold, 0), s)
        out = out.add(Distribution({1: Fraction(above, s), 0: Fraction(s - above, s)}))
    return out


@lru_cache(maxsize=4096)
def count_at_least(sizes: tuple[int, ...], face: int) -> Distribution[int]:
    """How many dice of a mixed pool show ``face`` or more."""
    return count_above(sizes, face - 1)


@lru_cache(maxsize=4096)
def multinomial(n: int, weights: tuple[int, ...]) -> Distribution[tuple[int, ...]]:
    """How many of ``n`` dice fall in each class, a die's class having odds ``weights``.

    ``multinomial(4, (2, 3, 1))`` sorts 4d6 into (1–2, 3–5, 6): the counts of
    misses, plain successes and sixes. Written out here (multinomial
    coefficients) because icepool's vector outcomes are slow for this.
    """
    if n < 0 or not weights or any(w < 0 for w in weights) or sum(weights) == 0:
        raise ValueError("multinomial needs n >= 0 and non-negative weights")
    total = sum(weights)
    probs = [Fraction(w, total) for w in weights]

    def split(left: int, k: int) -> list[tuple[tuple[int, ...], Fraction]]:
        if k == len(weights) - 1:
            return [((left,), probs[k] ** left)]
        out = []
        for here in range(left + 1):
            p = comb(left, here) * probs[k] ** here
            if p:
                out.extend(((here, *rest), p * q) for rest, q in split(left - here, k + 1))
        return out

    return Distribution(split(n, 0))


def clear_caches() -> None:
    """Forget every cached distribution (benchmarks measure a cold start with it)."""
    for f in (
        _pool_counts,
        success_pool,
        success_pool_botch,
        sum_dice,
        faces,
        highest,
        count_above,
        count_at_least,
        multinomial,
    ):
        f.cache_clear()
