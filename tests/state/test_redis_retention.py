"""Bounded memory in Redis: a table keeps its newest audit entries (audit_keep), and the
request_ids and refs of the entries it drops go with them; what is kept reads as before."""

from __future__ import annotations

import itertools

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.errors import Conflict
from vtt_bridge.state import AuditDraft, RedisStore, TableInfo, TokenChange, replay

_prefixes = itertools.count()


@pytest.fixture
async def store(redis_url):
    made = RedisStore(redis_url, prefix=f"keep{next(_prefixes)}:", audit_keep=5)
    await made.open()
    yield made
    await made.close()


async def _hits(store: RedisStore, table_id: str, n: int, start: int = 0) -> None:
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
    keys = {"requests", "refs"}
    sizes = {k: await store.link.call("HLEN", store.table_key("t1", k)) for k in keys}
    assert sizes == {"requests": 5, "refs": 5}


async def test_the_table_s_own_setting_wins_and_can_change(store):
    await store.create_table(TableInfo(id="t2", name="t", created=0.0, settings={"audit_keep": 3}))
    await _hits(store, "t2", 6)
    assert [e.seq for e in await store.audit("t2")] == [4, 5, 6]
    await store.update_settings("t2", {"audit_keep": 0})  # 0: keep everything from now on
    await _hits(store, "t2", 4, start=6)
    assert len(await store.audit("t2")) == 7
