"""SQLite: commits that arrive together share one transaction, each still all-or-nothing."""

from __future__ import annotations

import asyncio

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.errors import Conflict
from vtt_bridge.state import AuditDraft, SQLiteStore, TableInfo, TokenChange, replay


def _create(token_id: str) -> AuditDraft:
    token = Token(token_id, token_id, "duel", {"hp": 1}, version=1)
    return AuditDraft(kind="token.create", user="gm", at=0.0, changes={token_id: TokenChange(before=None, after=token)})


async def test_commits_arriving_together_share_one_transaction_and_a_conflict_spoils_only_its_own(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite")
    await store.open()
    for n in range(3):
        await store.create_table(TableInfo(id=f"t{n}", name="t", created=0.0, settings={}))
    await store.commit("t0", _create("dup"))
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    results = await asyncio.gather(
        store.commit("t0", _create("x")),
        store.commit("t0", _create("dup")),  # exists already: conflict
        store.commit("t1", _create("y")),
        store.commit("t2", _create("z")),
        return_exceptions=True,
    )
    store.db.set_trace_callback(None)
    # One transaction is committed: the first try, spoilt by the conflict, was rolled back.
    assert [s for s in statements if s in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")] == [
        "BEGIN IMMEDIATE", "ROLLBACK", "BEGIN IMMEDIATE", "COMMIT"
    ]
    assert isinstance(results[1], Conflict)
    assert [r.seq for r in results if not isinstance(r, Exception)] == [2, 3, 4]
    assert set(await store.tokens("t0")) == {"dup", "x"}
    for table in ("t0", "t1", "t2"):
        assert replay(await store.audit(table)) == {k: v.to_dict() for k, v in (await store.tokens(table)).items()}
    with pytest.raises(Conflict):
        await store.commit("t1", _create("y"))
    await store.close()


async def test_commits_that_all_succeed_are_one_transaction_without_savepoints(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite")
    await store.open()
    for n in range(3):
        await store.create_table(TableInfo(id=f"t{n}", name="t", created=0.0, settings={}))
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    entries = await asyncio.gather(*(store.commit(f"t{n}", _create("x")) for n in range(3)))
    store.db.set_trace_callback(None)
    assert [s.split()[0] for s in statements if not s.startswith(("INSERT", "UPDATE"))] == ["BEGIN", "COMMIT"]
    assert [e.seq for e in entries] == [1, 2, 3]
    await store.close()


async def test_a_lone_commit_that_conflicts_changes_nothing_and_says_so(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite")
    await store.open()
    await store.create_table(TableInfo(id="t0", name="t", created=0.0, settings={}))
    await store.commit("t0", _create("dup"))
    with pytest.raises(Conflict):
        await store.commit("t0", _create("dup"))
    assert len(await store.audit("t0")) == 1
    entry = await store.commit("t0", _create("next"))
    assert entry.seq == 2
    await store.close()


async def test_checkpoints_run_in_their_own_thread_not_inside_a_commit(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite")
    await store.open()
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    await store.create_table(TableInfo(id="t0", name="t", created=0.0, settings={}))
    for n in range(50):
        await store.commit("t0", _create(f"x{n}"))
    size = (tmp_path / "s.sqlite").stat().st_size
    # The checkpointer copies the WAL into the database file within an interval or two.
    async with asyncio.timeout(10):
        while (tmp_path / "s.sqlite").stat().st_size <= size:
            await asyncio.sleep(0.05)
    await store.close()
    assert store._checkpoints is None


async def test_audit_seqs_keep_rising_across_failed_commits_and_reopening_without_autoincrement(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite")
    await store.open()
    (sql,) = store.db.execute("SELECT sql FROM sqlite_master WHERE name = 'audit'").fetchone()
    assert "AUTOINCREMENT" not in sql
    await store.create_table(TableInfo(id="t", name="t", created=0.0, settings={}))
    seqs = [(await store.commit("t", _create(name))).seq for name in ("a", "b")]
    with pytest.raises(Conflict):
        await store.commit("t", _create("b"))
    await store.close()
    store = SQLiteStore(tmp_path / "s.sqlite")
    await store.open()
    seqs.append((await store.commit("t", _create("c"))).seq)
    assert seqs == [1, 2, 3]
    assert [e.seq for e in await store.audit("t")] == [1, 2, 3]
    await store.close()
