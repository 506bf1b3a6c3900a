"""The demo table ``vtt-bridge serve --demo`` creates (or reuses).

Its tokens are every installed ruleset's ``sample_tokens()`` (rulesets
without samples are skipped). The store keeps keys only hashed, so the demo's
keys in plain text are kept in a file of their own beside the store
(``<db>.demo-keys.json``, readable by its owner only: mode 0600). A later run
on the same store reads them back and prints the same keys and links, so the
links given to players keep working; a key is issued afresh only when it is
missing from that file or no longer opens the table (replaced by
``vtt-bridge table key``). Without a keys file (the Redis store), every run
issues fresh keys.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.tokens import Token
from ..plugins import Host
from ..state.keys import GM_USER, match_key
from ..state.records import AuditDraft, TableInfo, TokenChange
from ..state.store import Store
from .bridge import build_token, create_table, issue_key

__all__ = ["DEMO_NAME", "Demo", "demo_table", "keys_file_for"]

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


def keys_file_for(db: str | os.PathLike[str]) -> Path:
    """Where the demo keeps its plain-text keys: beside the SQLite file."""
    return Path(f"{os.fspath(db)}.demo-keys.json")


def _read_keys(path: Path | None, table_id: str) -> dict[str, str]:
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("table") != table_id or not isinstance(data.get("keys"), dict):
        return {}
    return {u: k for u, k in data["keys"].items() if isinstance(u, str) and isinstance(k, str)}


def _write_keys(path: Path, table_id: str, keys: dict[str, str]) -> None:
    """Write the keys so that only the file's owner can read them (created 0600, then written)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # also when the file existed with other permissions
    with os.fdopen(fd, "w") as out:
        json.dump({"table": table_id, "keys": keys}, out, indent=2)
        out.write("\n")


async def _key_for(store: Store, table_id: str, user: str, saved: dict[str, str]) -> str:
    """The saved key of ``user`` if it still opens the table, else a new one."""
    key = saved.get(user)
    if key is not None and match_key(key, [k for k in await store.keys(table_id) if k.user == user]) is not None:
        return key
    return await issue_key(store, table_id, user)


async def demo_table(host: Host, store: Store, *, keys_file: Path | None = None) -> Demo:
    """Create the demo table (or reuse it, adding samples of newly installed rulesets).

    :param keys_file: where the demo's plain-text keys are kept between runs
        (see the module docstring); ``None``: fresh keys on every run.
    """
    existing = [t for t in await store.list_tables() if t.name == DEMO_NAME]
    if existing:
        table = existing[0]
        saved = _read_keys(keys_file, table.id)
        keys = {GM_USER: await _key_for(store, table.id, GM_USER, saved)}
    else:
        table, gm_key = await create_table(store, DEMO_NAME)
        saved = {}
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
        keys[user] = await _key_for(store, table.id, user, saved)
    if keys_file is not None and keys != saved:
        _write_keys(keys_file, table.id, keys)
    examples = {}
    for ruleset_id, tokens in placed.items():
        example = _example(host, ruleset_id, tokens)
        if example is not None:
            examples[ruleset_id] = example
    return Demo(table=table, keys=keys, tokens=placed, skipped=tuple(skipped), examples=examples)
