"""Bounded memory: a table keeps its newest audit entries (audit_keep), on Redis and on
SQLite alike, and the request_ids and refs of the entries it drops go with them; what
is kept reads as before. Then what only SQLite does (one numbering for all tables, the
trim mark its triggers guard, batches, stores made before)."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.errors import Conflict
from vtt_bridge.state import AuditDraft, RedisStore, SQLiteStore, TableInfo, TokenChange, replay

_prefixes = itertools.count()


@pytest.fixture(params=["sqlite", "redis"])
async def store(request, tmp_path):
    if request.param == "sqlite":
        made = SQLiteStore(tmp_path / "keep.sqlite", audit_keep=5)
    else:
        made = RedisStore(request.getfixturevalue("redis_url"), prefix=f"keep{next(_prefixes)}:", audit_keep=5)
    await made.open()
    yield made
    await made.close()


@pytest.fixture
async def sqlite_store(tmp_path):
    made = SQLiteStore(tmp_path / "keep.sqlite", audit_keep=5)
    await made.open()
    yield made
    await made.close()


async def _hits(store, table_id: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        tokens = await store.tokens(table_id)
        before = tokens.get("x")
        after = Token("x", "x", "duel", {"hp": 100 - i}, version=(before.version + 1) if before else 1)
        await store.commit(table_id, AuditDraft(
            kind="attack", user="gm", at=float(i), ref=f"a{i}", request_id=f"r{i}",
            changes={"x": TokenChange(before=before, after=after)},
        ))


async def test_a_table_keeps_its_newest_entries_and_forgets_the_requests_of_the_others(store):
    await store.create_table(TableInfo(id="t1", name="t", created=0.0, settings={}))
    await _hits(store, "t1", 12)
    entries = await store.audit("t1")
    assert [e.seq for e in entries] == [8, 9, 10, 11, 12]  # the server default here: 5
    assert await store.audit_trimmed("t1") == 7
    assert await store.last_seq("t1") == 12
    assert (await store.by_request("t1", "r11")).seq == 12
    assert await store.by_request("t1", "r2") is None and await store.by_ref("t1", "a2") == []
    assert [e.seq for e in await store.by_ref("t1", "a10")] == [11]
    assert [e.seq for e in (await store.history("t1", limit=10)).entries] == [12, 11, 10, 9, 8]
    assert (await store.history("t1", limit=10)).next is None
    assert [e.seq for e in await store.since("t1", 3, limit=10)] == [8, 9, 10, 11, 12]
    assert [e.seq for e in await store.since("t1", 10, limit=10)] == [11, 12]
    # A kept request_id is still refused twice; the kept log replays to the stored token.
    with pytest.raises(Conflict):
        await store.commit("t1", AuditDraft(kind="attack", user="gm", at=0.0, request_id="r11", changes={}))
    assert replay(entries, trimmed=True)["x"] == (await store.tokens("t1"))["x"].to_dict()
    if isinstance(store, RedisStore):
        sizes = {k: await store.link.call("HLEN", store.table_key("t1", k)) for k in ("requests", "refs")}
        assert sizes == {"requests": 5, "refs": 5}
    else:
        rows = store.db.execute("SELECT COUNT(*), COUNT(request_id), COUNT(ref) FROM audit WHERE table_id = 't1'")
        assert rows.fetchone() == (5, 5, 5)
    # A dropped request_id could be used again.
    await store.commit("t1", AuditDraft(kind="attack", user="gm", at=0.0, request_id="r2", changes={}))


async def test_the_table_s_own_setting_wins_and_can_change(store):
    await store.create_table(TableInfo(id="t2", name="t", created=0.0, settings={"audit_keep": 3}))
    await _hits(store, "t2", 6)
    assert [e.seq for e in await store.audit("t2")] == [4, 5, 6]
    await store.update_settings("t2", {"audit_keep": 0})  # 0: keep everything from now on
    await _hits(store, "t2", 4, start=6)
    assert len(await store.audit("t2")) == 7
    await store.update_settings("t2", {"audit_keep": 2})
    await _hits(store, "t2", 1, start=10)
    assert [e.seq for e in await store.audit("t2")] == [10, 11]


# -- SQLite only ----------------------------------------------------------------------


async def test_tables_interleaved_each_keep_their_own_newest(sqlite_store):
    # SQLite numbers all tables' entries in one sequence: trimming one table leaves the other's.
    for table_id, keep in (("a", 2), ("b", 4)):
        await sqlite_store.create_table(TableInfo(id=table_id, name=table_id, created=0.0, settings={"audit_keep": keep}))
    for i in range(6):
        await _hits(sqlite_store, "a", 1, start=i)
        await _hits(sqlite_store, "b", 1, start=i)
    assert [e.seq for e in await sqlite_store.audit("a")] == [9, 11]
    assert [e.seq for e in await sqlite_store.audit("b")] == [6, 8, 10, 12]
    assert (await sqlite_store.audit_trimmed("a"), await sqlite_store.audit_trimmed("b")) == (7, 4)


async def test_a_lowered_keep_sheds_its_surplus_a_step_at_a_time(sqlite_store, monkeypatch):
    from vtt_bridge.state import sqlite as module

    monkeypatch.setattr(module, "TRIM_STEP", 3)  # a small step, so the test stays small
    await sqlite_store.create_table(TableInfo(id="t", name="t", created=0.0, settings={"audit_keep": 0}))
    await _hits(sqlite_store, "t", 12)
    await sqlite_store.update_settings("t", {"audit_keep": 2})
    await _hits(sqlite_store, "t", 1, start=12)
    assert len(await sqlite_store.audit("t")) == 13 - 4  # its own entry and the step
    await _hits(sqlite_store, "t", 3, start=13)
    assert [e.seq for e in await sqlite_store.audit("t")] == [15, 16]


async def test_only_a_trim_may_delete_and_only_below_the_mark(sqlite_store):
    await sqlite_store.create_table(TableInfo(id="t", name="t", created=0.0, settings={}))
    await _hits(sqlite_store, "t", 7)
    db = sqlite3.connect(sqlite_store.path, isolation_level=None)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("DELETE FROM audit")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("UPDATE audit SET user = 'mallory'")
        with pytest.raises(sqlite3.DatabaseError, match="only rises"):
            db.execute("UPDATE tables SET audit_trimmed = 0")
    finally:
        db.close()
    assert [e.seq for e in await sqlite_store.audit("t")] == [3, 4, 5, 6, 7]


async def test_a_store_made_before_audit_keep_counts_its_tables_once_and_trims_on_the_next_commit(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript("""
        CREATE TABLE tables (id TEXT PRIMARY KEY, name TEXT NOT NULL, created REAL NOT NULL,
                             settings TEXT NOT NULL DEFAULT '{}');
        CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, table_id TEXT NOT NULL REFERENCES tables(id),
                            kind TEXT NOT NULL, user TEXT NOT NULL, at REAL NOT NULL, ref TEXT, request_id TEXT,
                            changes TEXT NOT NULL, data TEXT NOT NULL);
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
        INSERT INTO tables VALUES ('t', 't', 0, '{"audit_keep": 3}');
    """)
    for i in range(8):
        old.execute("INSERT INTO audit (table_id, kind, user, at, request_id, changes, data)"
                    " VALUES ('t', 'attack', 'gm', 0, ?, '{}', '{}')", (f"old{i}",))
    old.close()
    store = SQLiteStore(path)
    await store.open()
    try:
        assert len(await store.audit("t")) == 8  # nothing goes at start-up
        await store.commit("t", AuditDraft(kind="attack", user="gm", at=0.0, request_id="new", changes={}))
        assert [e.seq for e in await store.audit("t")] == [7, 8, 9]
        assert await store.by_request("t", "old0") is None
    finally:
        await store.close()


async def test_a_large_keep_drops_in_batches_of_a_64th(sqlite_store):
    await sqlite_store.create_table(TableInfo(id="t", name="t", created=0.0, settings={"audit_keep": 128}))
    await _hits(sqlite_store, "t", 130)
    assert len(await sqlite_store.audit("t")) == 130  # up to 128 + 128 // 64 stay
    await _hits(sqlite_store, "t", 1, start=130)
    assert [e.seq for e in await sqlite_store.audit("t")][:1] == [4] and len(await sqlite_store.audit("t")) == 128
