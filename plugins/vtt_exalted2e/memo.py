"""What the rules work out from read-only snapshots, worked out once per snapshot.

Token snapshots (``ctx.current``, ``ctx.attacker``), declarations
(``ctx.declaration``) and a pack's module-level options are frozen: what a
pure function computes from them holds as long as they live. The odds' Monte
Carlo runs and the benches resolve the same snapshots thousands of times, so a
step asks :func:`per_snapshot` functions for its DVs, pool and soak instead of
working them out again. A table's attacks change their tokens, so there each
entry is used once: the lookup is then the whole cost (a dictionary probe).

Entries are keyed by the arguments' identities and keep the arguments alive,
so an identity is never reused while its entry stands; the cache is bounded
(emptied when full). Only immutable arguments may be passed, and only results
that nobody changes may be returned (frozen values, tuples, strings).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, TypeVar

__all__ = ["MEMO_SIZE", "per_snapshot"]

F = TypeVar("F", bound=Callable[..., Any])

MEMO_SIZE = 256
"""Entries each function keeps (emptied when full): snapshots in play at once, with room to spare."""


def per_snapshot(function: F) -> F:
    """``function`` remembered per identity of its (positional, immutable) arguments.

    An exception is not remembered: a refused declaration is refused again.
    """
    cache: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}

    def remembered(*args: Any) -> Any:
        key = tuple(map(id, args))
        hit = cache.get(key)
        if hit is not None:
            return hit[1]
        value = function(*args)
        if len(cache) >= MEMO_SIZE:
            cache.clear()
        cache[key] = (args, value)  # the arguments kept alive: their ids stay theirs
        return value

    update_wrapper(remembered, function)
    remembered.cache_clear = cache.clear  # type: ignore[attr-defined]
    return remembered  # type: ignore[return-value]
