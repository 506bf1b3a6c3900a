"""The values the stores keep: tables, keys and audit entries, all frozen.

Tokens are kept as the engine's own read-only :class:`~vtt_bridge.Token`
snapshots, so a store hands the engine what it needs without copying, and a
token that has not changed (same id, same version) is never rebuilt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.tokens import Token, thaw
from . import codec

__all__ = [
    "AUDIT_KINDS",
    "AuditDraft",
    "AuditEntry",
    "KeyInfo",
    "TableInfo",
    "TokenChange",
    "dumps",
    "token_from_dict",
    "token_wire",
]

# Every kind of audit entry; each one carries the token changes it made.
AUDIT_KINDS = ("token.create", "token.update", "token.delete", "tokens.import", "attack", "undo")


def dumps(value: Any) -> str:
    """Compact JSON, the one encoding every store writes."""
    return codec.dumps(value)


def token_wire(token: Token) -> dict[str, Any]:
    """``token.to_dict()`` for JSON and pickles: its ``system`` is the snapshot's own plain copy.

    ``Token.plain()`` is made once per snapshot, so a token that goes out several
    times (the attack's record, the audit entry, ``token.updated``, a resolver)
    is copied once, not each time. Read the result; never change it.
    """
    return {
        "id": token.id,
        "name": token.name,
        "ruleset": token.ruleset,
        "ownership": thaw(token.ownership),
        "system": token.plain(),
        "flags": thaw(token.flags),
        "version": token.version,
    }


def token_from_dict(data: Mapping[str, Any]) -> Token:
    return Token(
        data["id"],
        data["name"],
        data["ruleset"],
        data["system"],
        ownership=data.get("ownership") or {},
        version=int(data["version"]),
        flags=data.get("flags"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TableInfo:
    """One game table. ``settings`` holds per-table options (``decision_timeout``, ``packs``...)."""

    id: str
    name: str
    created: float
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def packs(self) -> tuple[str, ...] | None:
        """The installed packs enabled at the table (its ``packs`` setting); ``None`` when its GM
        never chose (the server's default applies, see ``serve --default-packs``)."""
        value = self.settings.get("packs")
        return tuple(value) if isinstance(value, (list, tuple)) else None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "created": self.created, "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableInfo:
        return cls(
            id=data["id"], name=data["name"], created=float(data["created"]), settings=data.get("settings") or {}
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyInfo:
    """A user's key, as stored: only its digest, never the key itself."""

    user: str
    digest: str
    created: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenChange:
    """One token before and after a change; ``None`` means absent (created / deleted).

    The store checks that the stored token still has ``before``'s version and
    writes ``after`` (its version one higher) — the same pair goes into the
    audit log, so the log and the token rows cannot disagree.

    ``encoded``: ``(before, after)`` as JSON already (each one :func:`token_wire`'s
    bytes), when whoever made the change had them (an attack's resolver): the
    stores write them as they are (:meth:`wire`) instead of encoding the tokens again.
    """

    before: Token | None
    after: Token | None
    encoded: tuple[bytes, bytes] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.before is None and self.after is None:
            raise ValueError("a token change needs a before or an after")
        if self.before is not None and self.after is not None and self.after.version != self.before.version + 1:
            raise ValueError("a changed token's version goes up by one")
        if self.before is None and self.after is not None and self.after.version != 1:
            raise ValueError("a created token starts at version 1")

    @property
    def token_id(self) -> str:
        token = self.after if self.after is not None else self.before
        assert token is not None
        return token.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": token_wire(self.before) if self.before is not None else None,
            "after": token_wire(self.after) if self.after is not None else None,
        }

    def wire(self) -> dict[str, Any]:
        """:meth:`to_dict` for encoding: each token as the JSON it came ``encoded`` in, if it did
        (a :data:`~.codec.Fragment`: the same bytes once encoded)."""
        if self.encoded is None:
            return self.to_dict()
        before, after = self.encoded
        return {"before": codec.Fragment(before), "after": codec.Fragment(after)}


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditDraft:
    """An audit entry about to be committed together with its token changes.

    :ivar kind: one of :data:`AUDIT_KINDS`.
    :ivar user: who asked for it (``"gm"`` or a player's user name).
    :ivar ref: the attack id, for ``attack`` and ``undo`` entries.
    :ivar request_id: the client's idempotency key, unique per table.
    :ivar changes: token id → change; committed in the same transaction.
    :ivar data: what else to keep (the attack record, the request).
    """

    kind: str
    user: str
    at: float
    changes: Mapping[str, TokenChange]
    data: Mapping[str, Any] = field(default_factory=dict)
    ref: str | None = None
    request_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in AUDIT_KINDS:
            raise ValueError(f"unknown audit kind {self.kind!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEntry:
    """A committed audit entry. ``seq`` orders a table's entries (1, 2, 3 ...).

    ``changes`` is kept in wire form (``{id: {"before": token|None, "after": token|None}}``)
    so replaying the log needs nothing but JSON. (The entry a store's ``commit``
    returns holds a token that came ``encoded`` (:class:`TokenChange`) as that
    JSON, a :data:`~.codec.Fragment`; one read back from a store holds it decoded.)
    """

    seq: int
    table: str
    kind: str
    user: str
    at: float
    changes: Mapping[str, Mapping[str, Any]]
    data: Mapping[str, Any]
    ref: str | None = None
    request_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "table": self.table,
            "kind": self.kind,
            "user": self.user,
            "at": self.at,
            "ref": self.ref,
            "request_id": self.request_id,
            "changes": dict(self.changes),
            "data": dict(self.data),
        }
