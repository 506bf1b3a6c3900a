"""What lets several server processes share one Redis: revisions, the attack lease, sessions."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.errors import Conflict
from vtt_bridge.state import AuditDraft, RedisStore, TableInfo, TokenChange

_prefixes = itertools.count()


@pytest.fixture
async def two(redis_url):
    prefix = f"shared{next(_prefixes)}:"
    stores = [RedisStore(redis_url, prefix=prefix, lease_ttl=0.5) for _ in range(2)]
    for store in stores:
        await store.open()
    await stores[0].create_table(TableInfo(id="t1", name="t", created=0.0, settings={}))
    yield stores
    for store in stores:
        await store.close()


def _create(token_id: str) -> AuditDraft:
    token = Token(token_id, token_id, "duel", {"hp": 1}, version=1)
    return AuditDraft(kind="token.create", user="gm", at=0.0, changes={token_id: TokenChange(before=None, after=token)})


async def test_a_commit_or_settings_change_through_one_store_moves_the_revision_the_other_reads(two):
    one, other = two
    start = await other.revision("t1")
    await one.commit("t1", _create("x"))
    assert await other.revision("t1") == start + 1 == one.committed_revision("t1")
    await one.update_settings("t1", {"attack_budget": 2.0})
    assert await other.revision("t1") == start + 2


async def test_the_lease_is_held_by_one_process_at_a_time_and_a_release_wakes_the_next(two, monkeypatch):
    one, other = two
    # A waiter's fallback retry made slow, so only a release's wake-up can pass the ten holds quickly.
    monkeypatch.setattr(type(one.lease("t1")), "_RETRY", 5.0)
    order = []

    async def hold(store, name):
        async with store.lease("t1") as lease:
            assert lease.revision is not None
            order.append(f"{name} in")
            await asyncio.sleep(0.05)
            order.append(f"{name} out")

    started = time.monotonic()
    await asyncio.gather(*(hold(s, f"{n}{i}") for i in range(5) for n, s in (("a", one), ("b", other))))
    assert all(order[i].endswith("in") and order[i + 1] == order[i].replace("in", "out") for i in range(0, 20, 2))
    # Ten holds of 50 ms: a release wakes the next waiter at once (a missed wake-up costs 5 s).
    assert time.monotonic() - started < 4.0


async def test_a_lease_left_by_a_dead_process_expires(two, redis_url):
    one, other = two
    # A holder that never releases (its process died): the key simply stays until its TTL.
    await one.link.call("SET", f"{one.prefix}t:{{t1}}:lease", "dead", "PX", 300)
    started = time.monotonic()
    async with other.lease("t1"):
        waited = time.monotonic() - started
    assert 0.2 < waited < 2


async def test_sessions_list_connections_of_live_processes_only(two):
    one, other = two
    await one.heartbeat("n1", 5)
    await other.heartbeat("n2", 0.2)
    await one.join("t1", "s1", "alice", "n1")
    await other.join("t1", "s2", "bob", "n2")
    assert await one.sessions("t1") == {"s1": "alice", "s2": "bob"}
    await asyncio.sleep(0.3)  # n2 stopped beating
    assert await one.sessions("t1") == {"s1": "alice"}
    await one.leave("t1", "s1")
    assert await other.sessions("t1") == {}


async def test_a_token_deleted_and_created_again_elsewhere_is_not_read_from_a_stale_copy(two):
    one, other = two
    await one.commit("t1", _create("x"))
    assert (await other.tokens("t1"))["x"].system["hp"] == 1
    gone = (await one.tokens("t1"))["x"]
    await one.commit("t1", AuditDraft(kind="token.delete", user="gm", at=0.0, changes={"x": TokenChange(before=gone, after=None)}))
    again = Token("x", "x", "duel", {"hp": 7}, version=1)
    await one.commit("t1", AuditDraft(kind="token.create", user="gm", at=0.0, changes={"x": TokenChange(before=None, after=again)}))
    assert (await other.tokens("t1"))["x"].system["hp"] == 7


async def test_a_commit_made_under_the_lease_gives_it_back_in_the_same_round_trip(two):
    one, other = two
    async with one.lease("t1") as lease:
        await one.commit("t1", _create("y"), lease=lease)
        assert lease.released
        # Already free for the other process, before this block even ends.
        async with asyncio.timeout(1):
            async with other.lease("t1") as theirs:
                assert theirs.revision == await one.revision("t1")


async def test_a_lease_held_past_its_time_to_live_is_renewed_and_stays_held(two):
    one, other = two  # lease_ttl 0.5 s
    async with one.lease("t1"):
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.5):
                async with other.lease("t1"):
                    pass
    # Given back: the other process takes it at once.
    async with asyncio.timeout(1):
        async with other.lease("t1"):
            pass


async def test_a_commit_keeps_the_lease_for_this_process_s_next_attack_unless_another_waits(two):
    one, other = two
    async with one.lease("t1", queued=lambda: True) as lease:
        await one.commit("t1", _create("k1"), lease=lease)
        assert lease.kept == await one.revision("t1") and not lease.released
    # The next attack here starts at once, from the revision the commit left.
    async with one.lease("t1", queued=lambda: True) as lease:
        assert lease.revision == one.committed_revision("t1")
        theirs = asyncio.ensure_future(other.lease("t1").__aenter__())
        await asyncio.sleep(0.05)
        assert not theirs.done()  # held meanwhile; the other process now waits for it
        await one.commit("t1", _create("k2"), lease=lease)
        assert lease.released  # not kept: someone else waits
    async with asyncio.timeout(1):
        taken = await theirs
    # Handed straight over, with the revision the commit left.
    assert taken.revision == one.committed_revision("t1")
    await taken.__aexit__(None, None, None)


async def test_a_kept_lease_nobody_picks_up_is_given_back(two):
    one, other = two
    async with one.lease("t1", queued=lambda: True) as lease:
        await one.commit("t1", _create("k3"), lease=lease)
        assert lease.kept is not None
    await asyncio.sleep(0.2)  # the attack that was waiting went away
    started = time.monotonic()
    async with other.lease("t1"):
        assert time.monotonic() - started < 0.1  # free at once, not after the lease's time to live


async def test_a_released_lease_goes_to_the_process_that_waited_not_to_the_holder_asking_again(two):
    one, other = two
    order = []
    first = await one.lease("t1").__aenter__()
    waiting = asyncio.ensure_future(other.lease("t1").__aenter__())
    await asyncio.sleep(0.05)  # the other process has tried, and waits
    await first.__aexit__(None, None, None)
    again = asyncio.ensure_future(one.lease("t1").__aenter__())  # asks again at once
    async with asyncio.timeout(2):
        theirs = await waiting
        order.append("other")
        await theirs.__aexit__(None, None, None)
        mine = await again
        order.append("one")
        await mine.__aexit__(None, None, None)
    assert order == ["other", "one"]


async def test_a_waiter_that_gives_up_does_not_keep_the_lease_from_the_next(two):
    one, other = two
    held = await one.lease("t1").__aenter__()
    gives_up = asyncio.ensure_future(other.lease("t1").__aenter__())
    await asyncio.sleep(0.05)  # it has claimed the lease as the first waiter
    gives_up.cancel()
    await asyncio.gather(gives_up, return_exceptions=True)
    await asyncio.sleep(0.05)
    await held.__aexit__(None, None, None)
    started = time.monotonic()
    async with asyncio.timeout(1):
        async with other.lease("t1"):
            assert time.monotonic() - started < 0.3


async def test_a_lease_handed_over_while_the_waiter_s_next_try_is_on_its_way_is_held_once(two):
    one, other = two
    key, want = f"{one.prefix}t:{{t1}}:lease", f"{one.prefix}t:{{t1}}:lease:want"
    keys = [key, f"{one.prefix}t:{{t1}}:rev", want]
    held = await one.lease("t1").__aenter__()
    assert await other.link.evalsha(other._acquire, keys, ["w", 5000, 500]) == -1  # "w" waits, first
    await held.__aexit__(None, None, None)  # handed over to "w"
    assert await other.link.call("GET", key) == "w"
    # w's retry, sent before it heard of the handover, finds the lease already its own.
    assert await other.link.evalsha(other._acquire, keys, ["w", 5000, 500]) >= 0
    assert await other.link.call("GET", want) is None  # no stale claim of its own left behind
    table_keys = [f"{one.prefix}t:{{t1}}:{w}" for w in ("lease:next", "locked", "requests", "tokens", "changes")]
    await other.link.evalsha(other._release, [key, want, keys[1], *table_keys], ["w", other._channel, 5000])
    assert await other.link.call("GET", key) is None


async def test_a_process_with_other_packs_is_refused_while_one_with_the_same_joins(two):
    one, other = two
    await one.announce("n1", {"exalted2e": "0.1.0", "excellencies": "0.1.0"})
    await other.announce("n2", {"excellencies": "0.1.0", "exalted2e": "0.1.0"})  # same set, any order
    with pytest.raises(Conflict) as refused:
        await other.announce("n3", {"exalted2e": "0.2.0", "mass_charms": "0.1.0"})
    message = refused.value.message
    assert "exalted2e 0.2.0 here, 0.1.0 there" in message and "mass_charms only here" in message
    assert "excellencies only there" in message
    # Once the others stop, another pack set may start.
    await one.close()
    await other.link.call("HDEL", f"{other.prefix}packs", "n2")
    await other.announce("n3", {"exalted2e": "0.2.0"})


async def test_a_store_written_before_hash_tags_is_renamed_to_them_on_open(redis_url):
    old = RedisStore(redis_url, prefix="legacy:")
    await old.open()
    try:
        token = '{"id":"x","name":"x","ruleset":"duel","ownership":{},"system":{"hp":3},"flags":{},"version":2}'
        await old.link.call("DEL", "legacy:layout")  # as an earlier version left it: no marker
        await old.link.call("HSET", "legacy:t:t9:tokens", "x", token)
        await old.link.call("RPUSH", "legacy:t:t9:audit", '{"kind":"token.create","user":"gm","at":0,"ref":null,'
                            '"request_id":null,"changes":{},"data":{}}')
    finally:
        await old.close()
    store = RedisStore(redis_url, prefix="legacy:")
    await store.open()
    try:
        assert (await store.tokens("t9"))["x"].system["hp"] == 3
        assert await store.last_seq("t9") == 1
        assert await store.link.call("EXISTS", "legacy:t:t9:tokens") == 0
    finally:
        await store.close()
