"""Token flags survive every store, and a store made before flags existed still opens."""

from __future__ import annotations

import sqlite3

from vtt_bridge import Token
from vtt_bridge.state import SQLiteStore, TokenChange, replay

from .test_stores import draft, table


def flagged(version: int = 1, **flags) -> Token:
    return Token("a", "A", "duel", {"hp": 10}, ownership={"alice": 3}, version=version, flags=flags)


async def test_flags_are_stored_updated_and_replayed(store):
    tid = await table(store)
    first = flagged(excellencies={"charms": ["first-excellency"]})
    await store.commit(tid, draft(a=TokenChange(before=None, after=first)))
    assert (await store.tokens(tid))["a"].to_dict()["flags"] == {"excellencies": {"charms": ["first-excellency"]}}
    second = flagged(2, excellencies={"charms": []})
    await store.commit(tid, draft("token.update", a=TokenChange(before=first, after=second)))
    stored = await store.tokens(tid)
    assert stored["a"].to_dict() == second.to_dict()
    assert replay(await store.audit(tid)) == {"a": second.to_dict()}


async def test_a_store_from_before_flags_opens_and_reads_tokens_without_flags(tmp_path):
    path = tmp_path / "old.sqlite"
    store = SQLiteStore(path)
    await store.open()
    tid = await table(store)
    await store.commit(tid, draft(a=TokenChange(before=None, after=flagged())))
    await store.close()
    # as an older version left it: no flags column
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE tokens DROP COLUMN flags")
    db.commit()
    db.close()
    again = SQLiteStore(path)
    await again.open()
    try:
        assert (await again.tokens(tid))["a"].to_dict()["flags"] == {}
    finally:
        await again.close()
