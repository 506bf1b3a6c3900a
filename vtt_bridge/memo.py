"""A pure rule remembered per token snapshot: :func:`per_snapshot`.

The odds resolve one attack thousands of times over the same snapshots, and
the steps of one attack read the same snapshots again and again: a weapon's
profile, a DV, the distance between two bases come out the same every time.
A rule decorated with :func:`per_snapshot` is worked out once for the same
arguments, compared by identity. That is safe because a snapshot
(:class:`~vtt_bridge.FrozenDict`, a tuple, a string) cannot change, and the
cache holds every argument it keeps an answer for, so a live object's id is
never another object's. A call with a mutable argument (a plain dict, list or
set) is worked out every time; an exception is never remembered.

On a table every attack brings new snapshots of the tokens it changed, so
there a lookup mostly misses: keep it for rules that cost more than a few
dictionary lookups (remembering costs about one small function call).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from operator import is_
from typing import Any, TypeVar

__all__ = ["per_snapshot"]

F = TypeVar("F", bound=Callable[..., Any])

_MUTABLE = frozenset({dict, list, set, bytearray})
SIZE = 512
"""Answers each rule keeps; its cache starts over when full."""
_NOTHING = object()  # no argument is this: the last call's arguments before any call


def per_snapshot(function: F) -> F:
    """``function`` (positional arguments only), remembered for identical read-only arguments.

    The result is shared by every caller, so it must be read-only too (a frozen
    value, a tuple, a NamedTuple). ``rule.cache_clear()`` forgets every answer.
    """
    cache: dict[Any, tuple[tuple[Any, ...], Any]] = {}
    # The last call's arguments and answer, when remembered: the same snapshots come back
    # call after call (an odds run, the steps of one attack), and comparing them by
    # identity costs far less than making the key (an ``id`` per argument).
    last: tuple[Any, ...] = (_NOTHING,) * 6

    def keep(key: Any, args: tuple[Any, ...], value: Any) -> Any:
        nonlocal last
        if _MUTABLE.isdisjoint(map(type, args)):
            if len(cache) >= SIZE:
                cache.clear()
            cache[key] = (args, value)  # the arguments held alive: their ids stay theirs
            last = (*args, value)
        return value

    def found(args: tuple[Any, ...], value: Any) -> Any:
        nonlocal last
        last = (*args, value)
        return value

    # One small wrapper per common arity: the key is made without packing the arguments.
    arity = function.__code__.co_argcount
    if arity == 1:

        def remembered(a: Any) -> Any:
            if a is last[0]:
                return last[1]
            hit = cache.get(id(a))
            return found((a,), hit[1]) if hit is not None else keep(id(a), (a,), function(a))

    elif arity == 2:

        def remembered(a: Any, b: Any) -> Any:  # type: ignore[misc]
            if a is last[0] and b is last[1]:
                return last[2]
            key = (id(a), id(b))
            hit = cache.get(key)
            return found((a, b), hit[1]) if hit is not None else keep(key, (a, b), function(a, b))

    elif arity == 3:

        def remembered(a: Any, b: Any, c: Any) -> Any:  # type: ignore[misc]
            if a is last[0] and b is last[1] and c is last[2]:
                return last[3]
            key = (id(a), id(b), id(c))
            hit = cache.get(key)
            return found((a, b, c), hit[1]) if hit is not None else keep(key, (a, b, c), function(a, b, c))

    elif arity == 4:

        def remembered(a: Any, b: Any, c: Any, d: Any) -> Any:  # type: ignore[misc]
            if a is last[0] and b is last[1] and c is last[2] and d is last[3]:
                return last[4]
            key = (id(a), id(b), id(c), id(d))
            hit = cache.get(key)
            return found((a, b, c, d), hit[1]) if hit is not None else keep(key, (a, b, c, d), function(a, b, c, d))

    elif arity == 5:

        def remembered(a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:  # type: ignore[misc]
            if a is last[0] and b is last[1] and c is last[2] and d is last[3] and e is last[4]:
                return last[5]
            key = (id(a), id(b), id(c), id(d), id(e))
            hit = cache.get(key)
            args = (a, b, c, d, e)
            return found(args, hit[1]) if hit is not None else keep(key, args, function(a, b, c, d, e))

    else:

        def remembered(*args: Any) -> Any:  # type: ignore[misc]
            n = len(args)
            if len(last) == n + 1 and all(map(is_, args, last)):
                return last[n]
            key = tuple(map(id, args))
            hit = cache.get(key)
            return found(args, hit[1]) if hit is not None else keep(key, args, function(*args))

    def cache_clear() -> None:
        nonlocal last
        cache.clear()
        last = (_NOTHING,) * 6

    update_wrapper(remembered, function)
    remembered.cache_clear = cache_clear  # type: ignore[attr-defined]
    return remembered  # type: ignore[return-value]
