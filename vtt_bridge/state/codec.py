"""JSON encoding for the wire and the stores: orjson, with the standard library behind it.

An attack record is ~10 KB of JSON and goes out several times per attack (the
acknowledgement, ``attack.resolved``, the audit record); orjson encodes it
about twenty times faster than ``json``. Anything orjson refuses (an integer
beyond 64 bits from a client, a non-string key) falls back to ``json``, so the
request still reaches schema validation and gets a clear error.

What a *client* sends is decoded by :func:`loads_request`, which also checks
it (:func:`check_value`): valid Unicode, exact integers, no binary, bounded
nesting. The socket server's packet class calls it for every incoming packet.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = [
    "JSON",
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "Fragment",
    "Unacceptable",
    "check_value",
    "dumps",
    "encode",
    "loads",
    "loads_request",
    "with_field",
]


def dumps(value: Any, **_ignored: Any) -> str:
    """Compact JSON text (keyword arguments meant for ``json.dumps`` are ignored)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode(value: Any) -> bytes:
    """:func:`dumps` as UTF-8 bytes (what a :class:`Fragment` holds)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# JSON encoded already, written as is wherever it sits inside a value given to
# :func:`dumps` or :func:`encode`: a value encoded once goes out several times.
Fragment = orjson.Fragment


def with_field(encoded: bytes, name: str, value: int) -> bytes:
    """The encoded non-empty object ``encoded`` with one more integer field at its end,
    the same bytes as encoding ``{**obj, name: value}``."""
    return b"%s,%s:%d}" % (encoded[:-1], orjson.dumps(name), value)


def with_raw_field(encoded: bytes, name: str, raw: bytes) -> bytes:
    """:func:`with_field` with the field's value as the bytes ``raw`` (a placeholder filled in later)."""
    return b"%s,%s:%s}" % (encoded[:-1], orjson.dumps(name), raw)


def loads(text: str | bytes, **_ignored: Any) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


class JSON:
    """The ``json``-module shape python-socketio's packets expect."""

    dumps = staticmethod(dumps)
    loads = staticmethod(loads)


# -- what a client may send ---------------------------------------------------------

# The largest integer every JSON client (JavaScript's numbers) and both stores keep exactly.
MAX_SAFE_INTEGER = 2**53 - 1
# Objects and arrays nested deeper than this are refused: no message of the protocol
# needs more than a handful of levels, and deep trees cost stack and time everywhere.
MAX_DEPTH = 32


class Unacceptable(ValueError):
    """A decoded client value the bridge will not take: ``path`` names where (``()`` for the whole)."""

    def __init__(self, path: tuple[str, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def check_value(value: Any, root: tuple[str, ...] = ()) -> None:
    """Raise :class:`Unacceptable` unless ``value`` is plain JSON a client may send.

    Every string (keys included) must be valid Unicode (no lone surrogates), every
    number finite and within ±(2**53-1), no binary anywhere, nesting at most
    :data:`MAX_DEPTH` deep. Walks iteratively, so a deep tree cannot overflow the stack.
    """
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, root)]
    base = len(root)
    while stack:
        item, path = stack.pop()
        kind = type(item)
        if kind is str:
            _check_text(item, path)
        elif kind is bool or item is None:
            continue
        elif kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                raise Unacceptable(path, f"Integers are limited to ±{MAX_SAFE_INTEGER} (2**53-1).")
        elif kind is float:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:  # also false for nan and infinities
                raise Unacceptable(path, f"Numbers must be finite and within ±{MAX_SAFE_INTEGER} (2**53-1).")
        elif kind is dict or kind is list:
            if len(path) - base >= MAX_DEPTH:
                raise Unacceptable(path, f"Nested more than {MAX_DEPTH} levels deep.")
            if kind is dict:
                for key, child in item.items():
                    if type(key) is not str:
                        raise Unacceptable(path, "Object keys must be strings.")
                    _check_text(key, (*path, _printable(key)))
                    stack.append((child, (*path, key)))
            else:
                stack.extend((child, (*path, str(i))) for i, child in enumerate(item))
        elif isinstance(item, (bytes, bytearray, memoryview)):
            raise Unacceptable(path, "Binary values are not accepted; send text.")
        else:
            raise Unacceptable(path, f"Not a JSON value ({kind.__name__}).")


def _plain(value: Any, texts: bool) -> bool:
    """A quick yes for :func:`check_value` (no paths kept): ``True`` when it would pass.

    ``texts=False`` skips the Unicode check, for values orjson decoded (it
    refuses invalid Unicode itself). Only a ``False`` costs the full walk.
    """
    stack = [(value, 0)]
    pop, push, extend = stack.pop, stack.append, stack.extend
    limit = MAX_SAFE_INTEGER
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind is str:
            if texts and not item.isascii():
                return False  # let the full walk decide, and name the place
        elif kind is dict:
            if depth >= MAX_DEPTH:
                return False
            depth += 1
            for key, child in item.items():
                if type(key) is not str or (texts and not key.isascii()):
                    return False
                push((child, depth))
        elif kind is list:
            if depth >= MAX_DEPTH:
                return False
            depth += 1
            extend([(child, depth) for child in item])
        elif kind is int or kind is float:
            if not -limit <= item <= limit:
                return False
        elif item is not None and kind is not bool:
            return False
    return True


def _check_text(text: str, path: tuple[str, ...]) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Unacceptable(path, "Not valid Unicode (a lone surrogate such as \\ud800).") from None


def _printable(text: str) -> str:
    """``text`` with any lone surrogate spelt out, so an error can name the key safely."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def loads_request(text: str | bytes) -> Any:
    """Decode a client's JSON text: :func:`loads`, then :func:`check_value`.

    Raises :class:`Unacceptable` for text that is not JSON at all (``path == ()``)
    and for values outside what :func:`check_value` allows.
    """
    texts = False
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        # A lone surrogate, an integer past 64 bits, NaN, deep nesting: the standard
        # library decodes more, and the check below says what is wrong and where.
        texts = True
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as exc:
            # ValueError: bad JSON, or an integer of more than 4,300 digits.
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
            raise Unacceptable((), f"Not valid JSON ({reason}).") from None
    if not texts and isinstance(text, str) and _plainly_fine(text):
        return value
    if not _plain(value, texts):
        check_value(value)
    return value


# A number that may be past 2**53 in JSON text: 16 digits in a row, or an exponent.
_SUSPECT_NUMBER = re.compile(r"[0-9](?:[0-9]{15}|[eE][+-]?[0-9])")


def _plainly_fine(text: str) -> bool:
    """Whether JSON text that orjson decoded needs no walk at all (checked on the text, in C).

    orjson has already refused invalid Unicode; no number can reach 2**53 without
    16 digits in a row or an exponent; nesting cannot pass MAX_DEPTH with fewer
    brackets than that. Digits or brackets inside strings only cost a walk.
    """
    return text.count("[") + text.count("{") < MAX_DEPTH and _SUSPECT_NUMBER.search(text) is None
