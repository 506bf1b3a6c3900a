"""Replaying the audit log: the token state is a fold over it.

Every entry carries each token it changed as ``{"before": token, "after":
token}`` (``None`` for absent), so replaying needs no knowledge of rulesets or
of what kind of entry it is. :func:`replay` also checks the chain: each
change's ``before`` must be exactly what the log had produced so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .records import AuditEntry

__all__ = ["ReplayMismatch", "replay"]


class ReplayMismatch(Exception):
    """The log does not chain: an entry's ``before`` is not what came before it."""

    def __init__(self, seq: int, token_id: str) -> None:
        super().__init__(f"audit entry {seq} changes token {token_id!r} from a state the log never produced")
        self.seq = seq
        self.token_id = token_id


def replay(entries: Iterable[AuditEntry], *, trimmed: bool = False) -> dict[str, dict[str, Any]]:
    """The tokens (wire form, by id) that the entries produce, oldest entry first.

    ``trimmed``: the log's oldest entries are gone (a table's ``audit_keep``); a
    token first seen in a later entry starts from the state that entry says it
    had, and every entry after it is checked as usual.
    """
    tokens: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for entry in entries:
        for token_id, change in entry.changes.items():
            if trimmed and token_id not in seen and change.get("before") is not None:
                tokens[token_id] = _plain(change["before"])
            seen.add(token_id)
            if tokens.get(token_id) != _plain(change.get("before")):
                raise ReplayMismatch(entry.seq, token_id)
            after = change.get("after")
            if after is None:
                tokens.pop(token_id, None)
            else:
                tokens[token_id] = _plain(after)
    return tokens


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
