"""Typed errors with stable codes, and the one wire envelope that carries them.

Client faults (bad input, permissions, stale versions) and plugin faults are
``VTTError`` subclasses with a stable ``code``; anything else is an internal
bug and is reported as ``internal`` without leaking its text.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "VTTError",
    "InvalidRequest",
    "Forbidden",
    "NotFound",
    "UnknownRuleset",
    "Conflict",
    "PluginError",
    "PluginTimeout",
    "PluginValidationError",
    "DiceExhausted",
    "IllegalTransition",
    "SnapshotMutation",
    "InternalError",
    "PayloadTooLarge",
    "RateLimited",
    "ServerStopping",
    "StoreUnavailable",
    "error_envelope",
    "ok_envelope",
    "error_from_dict",
]


#: What an error's ``details`` keep, so an error reply stays small whatever the request held
#: (a list of 10,000 bad items): values kept, all levels together; characters kept of one
#: string (the message too); levels of nesting.
DETAILS_ITEMS = 100
DETAILS_TEXT = 500
DETAILS_DEPTH = 8
MESSAGE_TEXT = 1000  # characters kept of an error's message


def _cut(text: str, most: int = DETAILS_TEXT) -> str:
    return text if len(text) <= most else f"{text[:most]}… ({len(text) - most} more characters)"


def _bounded(value: Any, left: list[int], depth: int) -> Any:
    """``value`` within the bounds above (``left``: the values still to keep); the very object when it is."""
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, dict):
        if depth >= DETAILS_DEPTH and value:
            return "…"
        out: dict[Any, Any] = {}
        changed = False
        for index, (key, item) in enumerate(value.items()):
            if left[0] <= 0:
                out["…"] = f"{len(value) - index} more"
                return out
            left[0] -= 1
            kept_key = _cut(key) if isinstance(key, str) else key
            kept = _bounded(item, left, depth + 1)
            changed = changed or kept is not item or kept_key is not key
            out[kept_key] = kept
        return out if changed else value
    if isinstance(value, (list, tuple)):
        if depth >= DETAILS_DEPTH and value:
            return "…"
        items: list[Any] = []
        changed = False
        for index, item in enumerate(value):
            if left[0] <= 0:
                items.append(f"… {len(value) - index} more")
                return items
            left[0] -= 1
            kept = _bounded(item, left, depth + 1)
            changed = changed or kept is not item
            items.append(kept)
        return items if changed else value
    return value


def bounded_details(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` cut to :data:`DETAILS_ITEMS` values, :data:`DETAILS_TEXT` characters a string and
    :data:`DETAILS_DEPTH` levels, a ``"…"`` entry saying how much was left out; small ones as they are."""
    return _bounded(details, [DETAILS_ITEMS], 0)


class VTTError(Exception):
    """Base of every error with a stable wire code.

    Its ``message`` (:data:`MESSAGE_TEXT`) and ``details`` (:func:`bounded_details`) are bounded: an error
    reply stays small, whatever the request that caused it held.
    """

    code = "internal"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        message = _cut(message, MESSAGE_TEXT) if len(message) > MESSAGE_TEXT else message
        super().__init__(message)
        self.message = message
        self.details = bounded_details(details) if details else {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidRequest(VTTError):
    """The request is malformed; ``details`` holds marshmallow's field messages."""

    code = "invalid_request"


class Forbidden(VTTError):
    """The caller may not do this (not the token's owner, not the GM)."""

    code = "forbidden"


class NotFound(VTTError):
    """A table, token or attack named by the request does not exist (for this caller)."""

    code = "not_found"


class UnknownRuleset(VTTError):
    """The request names a ruleset no installed plugin provides."""

    code = "unknown_ruleset"


class Conflict(VTTError):
    """A version check failed or the state changed under the request."""

    code = "conflict"


class DiceExhausted(VTTError):
    """Scripted dice ran out before the resolution finished."""

    code = "dice_exhausted"


class PluginError(VTTError):
    """A plugin raised inside a hook; ``details`` names plugin, hook and step."""

    code = "plugin_error"


class PluginTimeout(VTTError):
    """A hook ran past the attack's time budget; ``details`` names plugin, hook and step.

    Nothing was applied; the table goes on with its next attack.
    """

    code = "plugin_timeout"


class PluginValidationError(VTTError):
    """A plugin cannot be loaded (e.g. it implements a hook no ruleset declares)."""

    code = "plugin_invalid"


class IllegalTransition(VTTError):
    """A step asked to jump somewhere its ruleset does not allow."""

    code = "illegal_transition"


class SnapshotMutation(VTTError, TypeError):
    """Code tried to change a read-only token snapshot instead of using the context."""

    code = "snapshot_mutation"


class RateLimited(VTTError):
    """The connection sent more events than its rate limit allows; ``details.retry_after`` says when to try again."""

    code = "rate_limited"


class PayloadTooLarge(VTTError):
    """A packet is larger than the server's payload limit; ``details`` gives its size and the limit."""

    code = "payload_too_large"


class StoreUnavailable(VTTError):
    """The store (Redis) cannot be reached just now; nothing was applied that was not confirmed.

    Retryable: wait ``details.retry_after`` seconds and send the same request
    again (an attack with the same ``request_id``, so it is resolved once).
    """

    code = "store_unavailable"


class ServerStopping(VTTError):
    """The server stopped while it was resolving this attack; nothing was applied.

    Retryable: once reconnected (to this server back up, or another process),
    send the same request again with the same ``request_id``; it is resolved
    once.
    """

    code = "server_stopping"


class InternalError(VTTError):
    """A bug on our side; the client sees only a generic message."""

    code = "internal"


def ok_envelope(**payload: Any) -> dict[str, Any]:
    """The acknowledgement of a request that succeeded."""
    return {"ok": True, **payload}


def error_envelope(exc: BaseException) -> dict[str, Any]:
    """The acknowledgement of a request that failed, for any exception.

    Only ``VTTError`` text reaches the client; other exceptions are bugs and
    become a generic ``internal`` error.
    """
    if isinstance(exc, VTTError):
        return {"ok": False, "error": exc.to_dict()}
    return {
        "ok": False,
        "error": {"code": "internal", "message": "internal server error", "details": {}},
    }


def error_from_dict(error: dict[str, Any]) -> VTTError:
    """The ``VTTError`` whose ``to_dict()`` is ``error`` (an error carried across processes)."""
    code = error.get("code", "internal")
    cls = _codes().get(code, VTTError)
    exc = cls(error.get("message", ""), details=dict(error.get("details") or {}))
    if exc.code != code:
        exc.code = code  # a code this process has no class for keeps its text
    return exc


def _codes() -> dict[str, type[VTTError]]:
    out: dict[str, type[VTTError]] = {}
    stack = list(VTTError.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        out.setdefault(cls.code, cls)
    out["internal"] = InternalError
    return out
