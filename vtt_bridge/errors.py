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


class VTTError(Exception):
    """Base of every error with a stable wire code."""

    code = "internal"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

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
