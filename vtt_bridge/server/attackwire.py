"""An attack's wire form: what ``attack.resolved`` carries, the acknowledgement and the audit entry.

Built once, in the resolver process that resolved the attack (:mod:`.pool`),
and encoded there: the event loop sends those bytes as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.tokens import Token
from ..state.records import token_wire

__all__ = ["attack_payload"]


def attack_payload(
    head: Mapping[str, Any],
    at: float,
    record: Mapping[str, Any],
    tokens: Mapping[str, Token],
    after: Mapping[str, Token],
    wires: dict[str, tuple[Token, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """An attack's wire form (``attack.resolved``'s ``attack`` without its ``seq``; the audit entry's).

    ``head``: ``{"about": {id, ruleset, attacker, targets, user}, "table", "request_id"}``
    (see ``Attacks``); ``record``: the resolution's; ``tokens``: the table's
    tokens before it; ``after``: each changed token as it leaves them. ``tokens``
    gives every token involved (attacker and targets first, then any other
    changed) before and after. ``wires``: token id → ``(snapshot, its token_wire)``
    made for an earlier attack (a resolver keeps them for the snapshots it holds),
    used for that snapshot only; those made here are added.
    """
    about = head["about"]
    wire: dict[str, Any] = {}
    for token_id in (about["attacker"], *about["targets"], *after):
        if token_id in wire:
            continue
        token = tokens[token_id]
        known = wires.get(token_id) if wires is not None else None
        if known is not None and known[0] is token:
            before = known[1]
        else:
            before = token_wire(token)
            if wires is not None:
                wires[token_id] = (token, before)
        changed = after.get(token_id)
        if changed is None:
            wire[token_id] = {"before": before, "after": before}
        elif changed.ownership is token.ownership and changed.flags is token.flags:
            # Host.changed_token keeps them: only system and version move (same keys, same order).
            wire[token_id] = {"before": before, "after": {**before, "system": changed.plain(), "version": changed.version}}
        else:
            wire[token_id] = {"before": before, "after": token_wire(changed)}
    return {**about, "table": head["table"], "at": at, "request_id": head["request_id"], **record, "tokens": wire}
