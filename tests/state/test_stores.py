"""The store contract, for SQLite and for Redis (a real redis-server)."""

from __future__ import annotations

import time

import pytest

from vtt_bridge import Conflict, NotFound, Token
from vtt_bridge.state import AuditDraft, KeyInfo, TableInfo, TokenChange, replay


def token(token_id: str, hp: int, version: int = 1) -> Token:
    return Token(token_id, token_id.upper(), "duel", {"hp": hp}, ownership={"alice": 3}, version=version)


def draft(
    kind: str = "token.create", request_id: str | None = None, ref: str | None = None, **changes: TokenChange
) -> AuditDraft:
    return AuditDraft(
        kind=kind, user="gm", at=time.time(), changes=changes, request_id=request_id, ref=ref, data={"n": 1}
    )


async def table(store, name: str = "t") -> str:
    info = TableInfo(id=f"t-{name}", name=name, created=time.time(), settings={"decision_timeout": 3})
    await store.create_table(info)
    return info.id


async def test_tables_and_settings(store):
    tid = await table(store)
    assert (await store.get_table(tid)).settings == {"decision_timeout": 3}
    assert await store.get_table("t-none") is None
    updated = await store.update_settings(tid, {"decision_timeout": 9})
    assert updated.settings == {"decision_timeout": 9} == (await store.get_table(tid)).settings
    assert [t.id for t in await store.list_tables()] == [tid]
    with pytest.raises(NotFound):
        await store.update_settings("t-none", {"decision_timeout": 1})


async def test_a_users_new_key_replaces_the_old(store):
    tid = await table(store)
    await store.set_key(tid, KeyInfo(user="alice", digest="d1", created=1.0))
    await store.set_key(tid, KeyInfo(user="alice", digest="d2", created=2.0))
    await store.set_key(tid, KeyInfo(user="gm", digest="g", created=1.0))
    keys = {k.user: k.digest for k in await store.keys(tid)}
    assert keys == {"alice": "d2", "gm": "g"}


async def test_commit_writes_tokens_and_the_entry_together(store):
    tid = await table(store)
    entry = await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 10))))
    assert entry.seq == 1 and entry.kind == "token.create"
    assert (await store.tokens(tid))["a"].to_dict() == token("a", 10).to_dict()
    second = await store.commit(
        tid, draft("attack", ref="atk-1", request_id="r1", a=TokenChange(before=token("a", 10), after=token("a", 7, 2)))
    )
    assert second.seq == 2
    assert (await store.tokens(tid))["a"].system == {"hp": 7}
    assert (await store.by_request(tid, "r1")).seq == 2
    assert [e.seq for e in await store.by_ref(tid, "atk-1")] == [2]
    assert await store.by_request(tid, "nope") is None


async def test_a_stale_change_writes_nothing_at_all(store):
    tid = await table(store)
    await store.commit(
        tid, draft(a=TokenChange(before=None, after=token("a", 10)), b=TokenChange(before=None, after=token("b", 10)))
    )
    stale_b = token("b", 10, version=5)
    with pytest.raises(Conflict) as err:
        await store.commit(
            tid,
            draft(
                "attack",
                a=TokenChange(before=token("a", 10), after=token("a", 1, 2)),
                b=TokenChange(before=stale_b, after=token("b", 1, 6)),
            ),
        )
    assert err.value.details == {"token": "b", "expected": 5, "version": 1}
    tokens = await store.tokens(tid)
    assert tokens["a"].system == {"hp": 10} and tokens["a"].version == 1
    assert len(await store.audit(tid)) == 1


async def test_creating_an_existing_token_or_changing_a_missing_one_conflicts(store):
    tid = await table(store)
    await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 10))))
    with pytest.raises(Conflict):
        await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 3))))
    with pytest.raises(Conflict):
        await store.commit(tid, draft("token.update", z=TokenChange(before=token("z", 1), after=token("z", 2, 2))))


async def test_a_request_id_is_used_once_per_table(store):
    tid = await table(store)
    other = await table(store, "u")
    await store.commit(tid, draft("attack", request_id="r1"))
    with pytest.raises(Conflict):
        await store.commit(tid, draft("attack", request_id="r1"))
    await store.commit(other, draft("attack", request_id="r1"))
    assert len(await store.audit(tid)) == 1


async def test_history_is_newest_first_and_pages(store):
    tid = await table(store)
    await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 10))))
    for n in range(5):
        await store.commit(tid, draft("attack", ref=f"atk-{n}"))
    await store.commit(tid, draft("undo", ref="atk-4"))
    page, following = await store.history(tid, limit=3)
    assert [(e.kind, e.ref) for e in page] == [("undo", "atk-4"), ("attack", "atk-4"), ("attack", "atk-3")]
    assert following == page[-1].seq
    rest, following = await store.history(tid, limit=10, before=page[-1].seq)
    assert [e.ref for e in rest] == ["atk-2", "atk-1", "atk-0"]
    assert following is None
    # a before far past the end counts from the end, at once
    assert [e.ref for e in (await store.history(tid, limit=2, before=2**53 - 1)).entries] == ["atk-4", "atk-4"]
    assert [e.kind for e in await store.by_ref(tid, "atk-4")] == ["attack", "undo"]


async def test_history_looks_at_a_bounded_stretch_of_the_log(store, monkeypatch):
    """However many token edits sit between attacks, one call scans HISTORY_SCAN entries at most."""
    from vtt_bridge.state import redis as redis_store
    from vtt_bridge.state import sqlite as sqlite_store

    monkeypatch.setattr(redis_store, "HISTORY_SCAN", 4)
    monkeypatch.setattr(sqlite_store, "HISTORY_SCAN", 4)
    tid = await table(store)
    await store.commit(tid, draft("attack", ref="atk-old"))
    for n in range(6):
        await store.commit(tid, draft("token.update", ref=None))
    page, following = await store.history(tid, limit=5)
    assert page == [] and following is not None
    seen = []
    while following is not None:
        page, following = await store.history(tid, limit=5, before=following)
        seen += [e.ref for e in page]
    assert seen == ["atk-old"]


async def test_deleting_and_replaying(store):
    tid = await table(store)
    await store.commit(
        tid, draft(a=TokenChange(before=None, after=token("a", 10)), b=TokenChange(before=None, after=token("b", 4)))
    )
    await store.commit(tid, draft("attack", a=TokenChange(before=token("a", 10), after=token("a", 8, 2))))
    await store.commit(tid, draft("token.delete", b=TokenChange(before=token("b", 4), after=None)))
    stored = {k: v.to_dict() for k, v in (await store.tokens(tid)).items()}
    assert list(stored) == ["a"]
    assert replay(await store.audit(tid)) == stored


async def test_tables_do_not_share_tokens(store):
    one, two = await table(store, "one"), await table(store, "two")
    await store.commit(one, draft(a=TokenChange(before=None, after=token("a", 10))))
    assert await store.tokens(two) == {}
    await store.commit(two, draft(a=TokenChange(before=None, after=token("a", 1))))
    assert (await store.tokens(one))["a"].system == {"hp": 10}


async def test_since_gives_what_a_client_missed_oldest_first(store):
    tid = await table(store)
    assert await store.last_seq(tid) == 0 and await store.since(tid, 0, limit=10) == []
    await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 10))))
    hp = 10
    for n in range(5):
        before = token("a", hp, n + 1)
        hp -= 1
        await store.commit(tid, draft("attack", ref=f"atk-{n}", a=TokenChange(before=before, after=token("a", hp, n + 2))))
    await store.commit(tid, draft("token.update", a=TokenChange(before=token("a", hp, 6), after=token("a", 1, 7))))
    assert await store.last_seq(tid) == 7
    # seq 1 (the create) and 7 (an edit) are not attacks; 2..6 are.
    assert [e.seq for e in await store.since(tid, 0, limit=10)] == [2, 3, 4, 5, 6]
    assert [e.ref for e in await store.since(tid, 3, limit=2)] == ["atk-2", "atk-3"]
    assert await store.since(tid, 6, limit=10) == []
    assert [e.seq for e in await store.since(tid, 0, limit=10, kinds=("token.create", "token.update"))] == [1, 7]


async def test_a_tables_packs_are_kept_with_it(store):
    """Packs per table (issue 28): the GM's choice is stored with the table's settings."""
    tid = await table(store)
    assert (await store.get_table(tid)).packs is None  # never chosen: the server's default applies
    await store.update_settings(tid, {"packs": ["excellencies"]})
    await store.update_settings(tid, {"decision_timeout": 4})
    again = await store.get_table(tid)
    assert again.packs == ("excellencies",) and again.settings["decision_timeout"] == 4
    await store.update_settings(tid, {"packs": []})
    assert (await store.get_table(tid)).packs == ()  # none enabled is a choice too


async def test_broadcasts_are_numbered_per_table_consecutively(store):
    one, two = await table(store, "one"), await table(store, "two")
    assert await store.broadcast_seq(one) == 0
    assert await store.broadcast(one, "ch", b"[]", 3) == 1
    assert await store.broadcast(one, "ch", b"[]", 1) == 4
    assert await store.broadcast(two, "ch", b"[]", 2) == 1  # each table its own numbering
    assert (await store.broadcast_seq(one), await store.broadcast_seq(two)) == (4, 2)


async def test_sqlite_continues_the_numbering_after_a_restart(tmp_path):
    from vtt_bridge.state import SQLiteStore

    store = SQLiteStore(tmp_path / "seq.sqlite")
    await store.open()
    tid = await table(store)
    assert await store.broadcast(tid, "", b"", 5) == 1
    await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 3))))  # written with a commit
    assert await store.broadcast(tid, "", b"", 2) == 6
    await store.close()  # and at close
    again = SQLiteStore(tmp_path / "seq.sqlite")
    await again.open()
    try:
        assert await again.broadcast_seq(tid) == 7
        assert await again.broadcast(tid, "", b"", 1) == 8
    finally:
        await again.close()


async def test_sqlite_keeps_a_counter_that_moved_before_a_refused_commit(tmp_path):
    """A commit refused (stale version) writes nothing, the table's broadcast counter included;
    the next commit that lands, on any table, writes it, so a crash after it keeps the numbering."""
    from vtt_bridge.state import SQLiteStore

    store = SQLiteStore(tmp_path / "seq.sqlite")
    await store.open()
    try:
        one, two = await table(store, "one"), await table(store, "two")
        await store.commit(one, draft(a=TokenChange(before=None, after=token("a", 3))))
        assert await store.broadcast(one, "", b"", 4) == 1
        with pytest.raises(Conflict):
            await store.commit(one, draft(a=TokenChange(before=token("a", 3, version=9), after=token("a", 1, 10))))
        await store.commit(two, draft(b=TokenChange(before=None, after=token("b", 3))))
        # Read by another connection without closing this store (as after kill -9).
        reader = SQLiteStore(tmp_path / "seq.sqlite")
        await reader.open()
        try:
            assert await reader.stored_broadcast_seq(one) == 4
            assert await reader.stored_broadcast_seq(two) == 0
        finally:
            await reader.close()
    finally:
        await store.close()


async def test_redis_keeps_a_log_of_batches_and_says_when_it_was_trimmed(redis_url):
    from vtt_bridge.state import RedisStore

    store = RedisStore(redis_url, prefix="logtest:", broadcast_keep=1000)
    await store.open()
    try:
        tid = await table(store)
        firsts = [await store.broadcast(tid, "logtest:ch", b'["x"]', n, sender="p1") for n in (2, 1, 3)]
        assert firsts == [1, 3, 4]
        assert [f for f, _m in await store.broadcasts_since(tid, 0)] == [1, 3, 4]
        # A batch half delivered comes again whole (the reader skips what it has).
        assert [f for f, _m in await store.broadcasts_since(tid, 1)] == [1, 3, 4]
        assert [f for f, _m in await store.broadcasts_since(tid, 3)] == [4]
        assert await store.broadcasts_since(tid, 6) == []
        assert (await store.broadcasts_since(tid, 3))[0][1] == 'p1\n4\n["x"]'
        await store.link.call("XTRIM", store.table_key(tid, "log"), "MAXLEN", "1")
        assert await store.broadcasts_since(tid, 0) is None  # 1..3 are gone: resync
        assert [f for f, _m in await store.broadcasts_since(tid, 3)] == [4]
    finally:
        await store.close()
