"""A table's campaign as a file, and catching up after a reconnect.

- :func:`export_document` is what ``vtt-bridge tokens export`` writes and the
  ``table.export`` event returns: the table's name and settings and every
  token as on the wire. Scene positions are token data (``system.position``
  in the rulesets that place tokens), so they travel with the tokens.
- :func:`plan_import` checks every token of such a file the way
  ``token.create`` checks one (the message schema, then the host's token
  validation) and turns the file into one set of token changes; a single bad
  token refuses the whole file, each bad one named with its fields.
  ``vtt-bridge tokens import`` and the ``tokens.import`` event both commit the
  plan as one audit entry (``tokens.import``): all of it or nothing.
- :class:`Campaign` serves the three events ``table.export``,
  ``tokens.import`` (GM only) and ``table.sync`` (anyone: the tokens, the
  attacks after the last seq the client saw, and the questions waiting for
  this user).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..engine.tokens import Token
from ..errors import Conflict, InvalidRequest, VTTError
from ..plugins import Host
from ..state import messages
from ..state.keys import GM_USER
from ..state.records import AuditDraft, TableInfo, TokenChange
from .attacks import with_seq
from .bridge import build_token
from .session import Caller, require_gm

if TYPE_CHECKING:  # pragma: no cover
    from .bridge import Bridge

__all__ = ["SYNC_LIMIT", "Campaign", "commit_import", "export_document", "import_draft", "plan_import", "summary"]

# At most this many attacks in one table.sync answer; ``more`` says to ask again.
SYNC_LIMIT = 200


def export_document(table: TableInfo, tokens: Mapping[str, Token], *, at: float | None = None) -> dict[str, Any]:
    """A table's tokens as a file that :func:`plan_import` takes back (ids sorted, so files diff well)."""
    return {
        "format": messages.EXPORT_FORMAT,
        "version": 1,
        "exported": time.time() if at is None else at,
        "table": {"id": table.id, "name": table.name, "settings": dict(table.settings)},
        "tokens": [tokens[token_id].to_dict() for token_id in sorted(tokens)],
    }


def _comparable(token: Token) -> dict[str, Any]:
    return {k: v for k, v in token.to_dict().items() if k != "version"}


def plan_import(
    host: Host, document: Any, current: Mapping[str, Token], *, replace: bool | None = None
) -> tuple[dict[str, TokenChange], dict[str, Any]]:
    """The token changes that importing ``document`` makes, and the request as loaded.

    ``document`` is an export (or ``{"tokens": [...]}``). A token whose id is on
    the table replaces it (its version goes on from the table's); a new id is
    created; an identical token is left alone; with ``replace`` the table's
    tokens missing from the file are deleted.

    :raises InvalidRequest: naming every bad token (``details.tokens.<index>``
        with the token's field messages); nothing is to be applied then.
    """
    request = messages.load(messages.TokensImport(), document)
    if replace is not None:
        request["replace"] = replace
    built: dict[str, Token] = {}
    errors: dict[str, Any] = {}
    named: list[str] = []
    for index, raw in enumerate(request["tokens"]):
        label = raw.get("id") if isinstance(raw, Mapping) and isinstance(raw.get("id"), str) else None
        try:
            token = build_token(host, messages.load(messages.TokenImport(), raw))
        except VTTError as exc:
            details = exc.details if isinstance(exc, InvalidRequest) else {"ruleset": [exc.message]}
            # The host calls the ruleset-checked part "token"; in a token it is its "system".
            if "token" in details and "system" not in details:
                details = {("system" if k == "token" else k): v for k, v in details.items()}
            errors[str(index)] = details
            named.append(_name(index, label, details))
            continue
        if token.id in built:
            details = {"id": [f"Duplicate id {token.id!r}: each token appears once in a file."]}
            errors[str(index)] = details
            named.append(_name(index, label, details))
            continue
        built[token.id] = token
    if errors:
        total = len(request["tokens"])
        raise InvalidRequest(
            f"nothing imported: {len(errors)} of {total} tokens {'is' if len(errors) == 1 else 'are'} invalid — "
            + "; ".join(named),
            details={"tokens": errors},
        )
    changes: dict[str, TokenChange] = {}
    for token_id, token in built.items():
        before = current.get(token_id)
        if before is None:
            changes[token_id] = TokenChange(before=None, after=token)
        elif _comparable(before) != _comparable(token):
            after = Token.from_dict({**token.to_dict(), "version": before.version + 1})
            changes[token_id] = TokenChange(before=before, after=after)
    if request["replace"]:
        for token_id, before in current.items():
            if token_id not in built:
                changes[token_id] = TokenChange(before=before, after=None)
    return changes, request


def _name(index: int, label: str | None, details: Mapping[str, Any]) -> str:
    fields = ", ".join(_paths(details)) or "?"
    who = f"token {label!r} (#{index + 1})" if label else f"token #{index + 1}"
    return f"{who}: {fields}"


def _paths(details: Any, path: str = "") -> list[str]:
    if isinstance(details, Mapping):
        out = []
        for key, value in details.items():
            out.extend(_paths(value, f"{path}.{key}" if path else str(key)))
        return out
    return [path] if path else []


def import_draft(changes: Mapping[str, TokenChange], *, user: str, replace: bool) -> AuditDraft:
    """The one audit entry an import commits."""
    return AuditDraft(
        kind="tokens.import", user=user, at=time.time(), changes=dict(changes), data={"replace": replace}
    )


def summary(changes: Mapping[str, TokenChange], document_tokens: Sequence[Any]) -> dict[str, list[str]]:
    """Which ids an import created, updated, deleted and left unchanged."""
    created = sorted(t for t, c in changes.items() if c.before is None)
    updated = sorted(t for t, c in changes.items() if c.before is not None and c.after is not None)
    deleted = sorted(t for t, c in changes.items() if c.after is None)
    ids = [t["id"] for t in document_tokens if isinstance(t, Mapping)]
    unchanged = sorted(t for t in ids if t not in changes)
    return {"created": created, "updated": updated, "deleted": deleted, "unchanged": unchanged}


async def commit_import(store: Any, host: Host, table_id: str, document: Any, *, replace: bool | None = None):
    """Import straight into a store (the CLI): plan against the stored tokens, commit as the GM."""
    current = await store.tokens(table_id)
    changes, request = plan_import(host, document, current, replace=replace)
    if changes:
        await store.commit(table_id, import_draft(changes, user=GM_USER, replace=request["replace"]))
    return changes, request


class Campaign:
    """The ``table.export``, ``tokens.import`` and ``table.sync`` events."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    async def export(self, caller: Caller, data: Any) -> dict[str, Any]:
        self.bridge.messages.load(messages.Empty, data)
        require_gm(caller, "export the table")
        runtime = await self.bridge.fresh(self.bridge.runtime(caller))
        return {"export": export_document(runtime.info, runtime.tokens)}

    async def import_tokens(self, caller: Caller, data: Any) -> dict[str, Any]:
        require_gm(caller, "import tokens")
        bridge = self.bridge
        runtime = bridge.runtime(caller)
        async with runtime.write_lock:
            await bridge.fresh(runtime)
            changes, request = plan_import(bridge.host, data, runtime.tokens)
            busy = sorted(t for t in changes if t in runtime.busy)
            if busy:
                raise Conflict(
                    f"tokens {', '.join(busy)} are in an attack being resolved; import again when it is over",
                    details={"tokens": busy},
                )
            if changes:
                await bridge.commit(runtime, import_draft(changes, user=caller.user, replace=request["replace"]))
        for token_id, change in changes.items():
            if change.before is None:
                runtime.outbox.put("token.created", {"token": change.after.to_dict()})
            elif change.after is None:
                runtime.outbox.put("token.deleted", {"id": token_id})
            else:
                runtime.outbox.put("token.updated", {"token": change.after.to_dict()})
        return {
            **summary(changes, request["tokens"]),
            "tokens": [runtime.tokens[k].to_dict() for k in sorted(runtime.tokens)],
        }

    async def sync(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.bridge.messages.load(messages.Sync, data)
        bridge = self.bridge
        store = bridge.store
        # Read before the state: what the answer holds is at least this far along.
        broadcast_seq = await store.broadcast_seq(caller.table)
        runtime = await bridge.fresh(bridge.runtime(caller))
        entries = await store.since(caller.table, request["since"], limit=SYNC_LIMIT + 1)
        more = len(entries) > SYNC_LIMIT
        entries = entries[:SYNC_LIMIT]
        attacks = [with_seq(e) for e in entries if e.kind == "attack"]
        undone = [{"attack": e.ref, "seq": e.seq, "user": e.user, "at": e.at} for e in entries if e.kind == "undo"]
        latest = await store.last_seq(caller.table)
        return {
            "table": runtime.describe(),
            "user": caller.user,
            "role": caller.role,
            "users": runtime.users(),
            "tokens": [runtime.tokens[k].to_dict() for k in sorted(runtime.tokens)],
            "attacks": attacks,
            "undone": undone,
            "more": more,
            "next": entries[-1].seq if more else None,
            "seq": latest,
            "broadcast_seq": broadcast_seq,
            "pending": await bridge.pending(runtime, caller.user),
        }
