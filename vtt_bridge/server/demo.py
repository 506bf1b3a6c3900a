"""The demo table ``vtt-bridge serve --demo`` creates (or reuses).

Its tokens are every installed ruleset's ``sample_tokens()`` (rulesets
without samples are skipped). Keys are stored hashed, so they cannot be shown
again: each run issues fresh keys for the GM and for every user who owns a
sample token, replacing the previous run's keys.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..engine.tokens import Token
from ..plugins import Host
from ..state.keys import GM_USER
from ..state.records import AuditDraft, TableInfo, TokenChange
from ..state.store import Store
from .bridge import build_token, create_table, issue_key

__all__ = ["DEMO_NAME", "Demo", "demo_table"]

DEMO_NAME = "demo"


@dataclass(frozen=True, slots=True, kw_only=True)
class Demo:
    table: TableInfo
    keys: dict[str, str]
    tokens: dict[str, list[Token]]
    skipped: tuple[str, ...]
    # An attack request per ruleset known to resolve with these tokens.
    examples: dict[str, dict[str, Any]]


def _example(host: Host, ruleset_id: str, tokens: list[Token]) -> dict[str, Any] | None:
    """A first attack to try: an owned token against another, checked by resolving it once."""
    if host.rulesets[ruleset_id].min_targets > 1:
        return None
    by_id = {t.id: t for t in tokens}
    owned = [t for t in tokens if any(lvl >= 3 for u, lvl in t.ownership.items() if u != "default")]
    for attacker in owned + [t for t in tokens if t not in owned]:
        for target in tokens:
            if target.id == attacker.id:
                continue
            try:
                res = host.start(ruleset_id, by_id, attacker=attacker.id, targets=[target.id], declaration={}, seed=1)
                res.run()
            except Exception:
                continue  # this pair needs a declaration we cannot guess; try another
            return {"ruleset": ruleset_id, "attacker": attacker.id, "targets": [target.id]}
    return None


def _samples(host: Host) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    found: dict[str, list[dict[str, Any]]] = {}
    skipped = []
    for ruleset_id in sorted(host.rulesets):
        ruleset = host.rulesets[ruleset_id]
        if ruleset.sample_tokens is None:
            skipped.append(ruleset_id)
            continue
        found[ruleset_id] = [dict(t, ruleset=t.get("ruleset", ruleset_id)) for t in ruleset.sample_tokens()]
    return found, skipped


async def demo_table(host: Host, store: Store) -> Demo:
    """Create the demo table (or reuse it, adding samples of newly installed rulesets)."""
    existing = [t for t in await store.list_tables() if t.name == DEMO_NAME]
    if existing:
        table = existing[0]
        keys = {GM_USER: await issue_key(store, table.id, GM_USER)}
    else:
        table, gm_key = await create_table(store, DEMO_NAME)
        keys = {GM_USER: gm_key}
    have = await store.tokens(table.id)
    samples, skipped = _samples(host)
    taken = set(have)
    placed: dict[str, list[Token]] = {}
    users: set[str] = set()
    for ruleset_id, tokens in samples.items():
        for raw in tokens:
            token_id = raw.get("id") or raw["name"]
            # Two rulesets may both ship a token "a": the later one gets a prefix.
            mine = [t for t in have.values() if t.ruleset == ruleset_id]
            existing_token = next((t for t in mine if t.id in (token_id, f"{ruleset_id}-{token_id}")), None)
            if existing_token is None:
                if token_id in taken:
                    token_id = f"{ruleset_id}-{token_id}"
                token = build_token(host, {**raw, "id": token_id})
                await store.commit(
                    table.id,
                    AuditDraft(
                        kind="token.create",
                        user=GM_USER,
                        at=time.time(),
                        changes={token.id: TokenChange(before=None, after=token)},
                    ),
                )
                taken.add(token.id)
            else:
                token = existing_token
            placed.setdefault(ruleset_id, []).append(token)
            users.update(u for u, lvl in token.ownership.items() if lvl >= 1 and u not in ("default", GM_USER))
    for user in sorted(users):
        keys[user] = await issue_key(store, table.id, user)
    examples = {}
    for ruleset_id, tokens in placed.items():
        example = _example(host, ruleset_id, tokens)
        if example is not None:
            examples[ruleset_id] = example
    return Demo(table=table, keys=keys, tokens=placed, skipped=tuple(skipped), examples=examples)
