"""Pure rules remembered per token snapshot.

The odds resolve one attack thousands of times over the same token snapshots:
the attacker's weapon, the distance between two bases, the attack roll's fixed
part come out the same every time. A rule decorated with :func:`per_snapshot`
is worked out once for the same arguments, compared by identity: safe because
a snapshot (:class:`~vtt_bridge.FrozenDict`) cannot change, and the cache holds
every argument it keeps an answer for, so two live objects with the same ids are
the same objects. A call with a mutable argument (a plain dict, list or set) is
never remembered.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

__all__ = ["per_snapshot"]

F = TypeVar("F", bound=Callable[..., Any])

_MUTABLE = frozenset({dict, list, set, bytearray})
SIZE = 512  # entries per rule; the cache starts over when full


def per_snapshot(function: F) -> F:
    """``function`` (positional arguments only), remembered for identical read-only arguments."""
    cache: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}

    @wraps(function)
    def remembered(*args: Any) -> Any:
        key = tuple(map(id, args))
        hit = cache.get(key)
        if hit is not None:  # the same ids, held alive by the entry: the same objects
            return hit[1]
        value = function(*args)
        if _MUTABLE.isdisjoint(map(type, args)):
            if len(cache) >= SIZE:
                cache.clear()
            cache[key] = (args, value)
        return value

    remembered.cache_clear = cache.clear  # type: ignore[attr-defined]
    return remembered  # type: ignore[return-value]
