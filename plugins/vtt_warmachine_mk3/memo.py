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
from functools import update_wrapper
from typing import Any, TypeVar

__all__ = ["per_snapshot"]

F = TypeVar("F", bound=Callable[..., Any])

_MUTABLE = frozenset({dict, list, set, bytearray})
SIZE = 512  # entries per rule; the cache starts over when full


def per_snapshot(function: F) -> F:
    """``function`` (positional arguments only), remembered for identical read-only arguments.

    Worth it for a rule that costs more than a few dictionary lookups: remembering
    costs about as much as one small function call.
    """
    cache: dict[Any, tuple[tuple[Any, ...], Any]] = {}

    def keep(key: Any, args: tuple[Any, ...], value: Any) -> Any:
        if _MUTABLE.isdisjoint(map(type, args)):
            if len(cache) >= SIZE:
                cache.clear()
            cache[key] = (args, value)  # the arguments held alive: their ids stay theirs
        return value

    # One small wrapper per arity: the key is made without packing and unpacking arguments.
    arity = function.__code__.co_argcount
    if arity == 1:

        def remembered(a: Any) -> Any:
            hit = cache.get(id(a))
            return hit[1] if hit is not None else keep(id(a), (a,), function(a))

    elif arity == 2:

        def remembered(a: Any, b: Any) -> Any:  # type: ignore[misc]
            key = (id(a), id(b))
            hit = cache.get(key)
            return hit[1] if hit is not None else keep(key, (a, b), function(a, b))

    elif arity == 4:

        def remembered(a: Any, b: Any, c: Any, d: Any) -> Any:  # type: ignore[misc]
            key = (id(a), id(b), id(c), id(d))
            hit = cache.get(key)
            return hit[1] if hit is not None else keep(key, (a, b, c, d), function(a, b, c, d))

    elif arity == 5:

        def remembered(a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:  # type: ignore[misc]
            key = (id(a), id(b), id(c), id(d), id(e))
            hit = cache.get(key)
            return hit[1] if hit is not None else keep(key, (a, b, c, d, e), function(a, b, c, d, e))

    else:

        def remembered(*args: Any) -> Any:  # type: ignore[misc]
            key = tuple(map(id, args))
            hit = cache.get(key)
            return hit[1] if hit is not None else keep(key, args, function(*args))

    update_wrapper(remembered, function)
    remembered.cache_clear = cache.clear  # type: ignore[attr-defined]
    return remembered  # type: ignore[return-value]
