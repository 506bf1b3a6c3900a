"""An attack's token locks in Redis: taken under the table's lease, checked by every commit
script, ended by the attack's own commit, lapsing with the lease that took them."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.errors import Conflict
from vtt_bridge.state import AuditDraft, RedisStore, TableInfo, TokenChange
from vtt_bridge.state.store import StaleVersion

from .redis_server import redis_cluster

_prefixes = itertools.count()


@contextlib.asynccontextmanager
async def _stores(url):
    """Two processes' stores on one Redis (or Cluster), a table with tokens a, b and c."""
    prefix = f"locks{next(_prefixes)}:"
    stores = [RedisStore(url, prefix=prefix, lease_ttl=0.5) for _ in range(2)]
    for store in stores:
        await store.open()
    try:
        await stores[0].create_table(TableInfo(id="t1", name="t", created=0.0, settings={}))
        for token_id in "abc":
            token = Token(token_id, token_id, "duel", {"hp": 10}, version=1)
            await stores[0].commit("t1", _draft(token_id, None, token, kind="token.create"))
        yield stores
    finally:
        for store in stores:
            await store.close()


@pytest.fixture
async def two(redis_url):
    async with _stores(redis_url) as stores:
        yield stores


def _draft(token_id, before, after, *, kind="token.update", ref=None, request_id=None):
    return AuditDraft(
        kind=kind, user="gm", at=0.0, ref=ref, request_id=request_id,
        changes={token_id: TokenChange(before=before, after=after)},
    )


async def _edit(store, token_id, hp):
    """A GM's edit through ``store``: the token as that store reads it now, its hp changed."""
    token = (await store.tokens("t1"))[token_id]
    after = Token(token_id, token.name, "duel", {"hp": hp}, version=token.version + 1)
    return await store.commit("t1", _draft(token_id, token, after))


async def test_locked_tokens_refuse_every_other_commit_and_the_attack_s_own_commit_ends_them(two):
    await _locks_refuse_and_end(*two)


@pytest.mark.slow
async def test_the_locks_work_alike_on_a_cluster():
    with redis_cluster() as cluster:
        async with _stores(cluster.url) as (one, other):
            await _locks_refuse_and_end(one, other)


async def _locks_refuse_and_end(one, other):
    async with one.lease("t1") as lease:
        locks = await one.lock_tokens("t1", lease, "atk-1", ["a", "b"], request_id="r1")
        assert locks.revision == await other.revision("t1") and locks.landed is None
        for token_id in "ab":
            with pytest.raises(Conflict) as refused:
                await _edit(other, token_id, 1)
            assert refused.value.details == {"token": token_id, "attack": "atk-1"}
            assert "in an attack being resolved" in refused.value.message
        token = (await other.tokens("t1"))["b"]
        with pytest.raises(Conflict, match="in an attack being resolved"):
            await other.commit("t1", _draft("b", token, None, kind="token.delete"))
        # Also through the holder's own store, when the commit is not the attack's.
        with pytest.raises(Conflict, match="in an attack being resolved"):
            await _edit(one, "a", 1)
        await _edit(other, "c", 3)  # not locked
        # The attack's commit (under its lease) is not refused, and ends the locks.
        tokens = await one.tokens("t1")
        hit = Token("b", "b", "duel", {"hp": 8}, version=tokens["b"].version + 1)
        await one.commit("t1", _draft("b", tokens["b"], hit, kind="attack", ref="atk-1", request_id="r1"), lease=lease)
    await _edit(other, "b", 20)
    await _edit(other, "a", 20)
    assert {t: v.system["hp"] for t, v in (await one.tokens("t1")).items()} == {"a": 20, "b": 20, "c": 3}
    # The request_id's landing is read with the next attack's locks.
    async with one.lease("t1") as lease:
        locks = await one.lock_tokens("t1", lease, "atk-2", ["a"], request_id="r1")
        assert locks.landed is not None and locks.landed.ref == "atk-1"


async def test_a_lease_given_back_without_a_commit_ends_its_locks(two):
    """An attack that failed (plugin error, dice run out, cut short) commits nothing."""
    one, other = two
    async with one.lease("t1") as lease:
        await one.lock_tokens("t1", lease, "atk-1", ["a", "b"])
        with pytest.raises(Conflict, match="in an attack being resolved"):
            await _edit(other, "b", 1)
    await _edit(other, "b", 1)
    # Nor does a lease handed over to the next waiter carry the old locks.
    async with one.lease("t1") as lease:
        await one.lock_tokens("t1", lease, "atk-2", ["a", "b"])
        waiting = asyncio.ensure_future(other.lease("t1").__aenter__())
        await asyncio.sleep(0.05)
    taken = await asyncio.wait_for(waiting, 5)
    try:
        await _edit(one, "b", 2)  # the locks' hash is still there; the lease is another's
    finally:
        await taken.__aexit__(None, None, None)


async def test_the_locks_of_a_process_that_died_lapse_with_its_lease(two, redis_url):
    one, other = two
    dying = RedisStore(redis_url, prefix=one.prefix, lease_ttl=0.5)
    await dying.open()
    lease = await dying.lease("t1").__aenter__()
    await dying.lock_tokens("t1", lease, "atk-1", ["a", "b"])
    # Still renewed while the process lives: held past the lease's time to live.
    await asyncio.sleep(0.8)
    with pytest.raises(Conflict, match="in an attack being resolved"):
        await _edit(other, "b", 1)
    await dying.close()  # its process dies: nothing renews the lease, nobody gives it back
    died = time.monotonic()
    while True:
        try:
            await _edit(other, "b", 1)
            break
        except Conflict as exc:
            assert not isinstance(exc, StaleVersion) and exc.details["attack"] == "atk-1"
            assert time.monotonic() - died < 5
            await asyncio.sleep(0.02)
    assert time.monotonic() - died < 1.0  # the lease's 0.5 s, and scheduling


async def test_locks_are_refused_to_a_holder_that_lost_the_lease(two):
    one, other = two
    async with one.lease("t1") as lease:
        # The lease lapsed under a stalled process and another took it.
        await one.link.call("SET", f"{one.prefix}t:{{t1}}:lease", "someone else", "PX", 5000)
        with pytest.raises(Exception, match="lost the table's attack lease"):
            await one.lock_tokens("t1", lease, "atk-1", ["a"])
        await one.link.call("DEL", f"{one.prefix}t:{{t1}}:lease")
    await _edit(other, "a", 1)


async def test_locks_taken_after_another_process_s_edits_bring_the_tokens_it_changed(two):
    # The lease often comes from the other process, whose attacks moved the table on: the same
    # round trip that locks the attack's tokens reads the tokens changed since this process's copy.
    one, other = two
    known = await one.revision("t1")
    await _edit(other, "b", 4)
    async with one.lease("t1") as lease:
        locks = await one.lock_tokens("t1", lease, "atk-1", ["a"], known=known)
        assert locks.revision == known + 1 and locks.known == known
        assert locks.changed is not None
        rev, changed = locks.changed
        assert rev == known + 1 and list(changed) == ["b"] and changed["b"].system == {"hp": 4}
        # The same answer as asking apart; without ``known`` nothing is read.
        assert await one.changed_since("t1", known) == locks.changed
        plain = await one.lock_tokens("t1", lease, "atk-1", ["a"])
        assert plain.changed is None and plain.known is None


async def test_a_waiter_that_tried_with_its_locks_is_handed_the_lease_with_them_taken(two, monkeypatch):
    # An attack's lease taken with its locks (lease(..., with_locks=True)): while another process
    # holds the lease, the holder's commit hands it over with the waiter's locks taken and what
    # changed since the waiter's copy: the waiting attack starts without a round trip of its own.
    one, other = two
    known = await other.revision("t1")
    sent = []
    evalsha = other.link.evalsha

    async def counted(sha, keys, args, **kwargs):
        sent.append(sha)
        return await evalsha(sha, keys, args, **kwargs)

    monkeypatch.setattr(other.link, "evalsha", counted)
    # A waiter's fallback retry made slow: only the hand-over can bring the lease in time.
    monkeypatch.setattr(type(one.lease("t1")), "_RETRY", 5.0)
    async with one.lease("t1") as held:
        await one.lock_tokens("t1", held, "atk-1", ["c"])
        async with other.lease("t1", with_locks=True) as lease:
            waiting = asyncio.ensure_future(
                other.lock_tokens("t1", lease, "atk-2", ["b"], request_id="r2", known=known)
            )
            await asyncio.sleep(0.05)  # it tried once, and waits as the first waiter
            assert not waiting.done() and sent == [other._take]
            token = (await one.tokens("t1"))["c"]
            after = Token("c", "c", "duel", {"hp": 3}, version=token.version + 1)
            await one.commit("t1", _draft("c", token, after, ref="atk-1"), lease=held)
            async with asyncio.timeout(1):
                locks = await waiting
            assert sent == [other._take]  # handed over with its locks: no second round trip
            assert locks.revision == known + 1 and locks.landed is None and locks.known == known
            rev, changed = locks.changed
            assert rev == known + 1 and list(changed) == ["c"] and changed["c"].system == {"hp": 3}
            # Taken: an edit of b through the other process is refused while atk-2 resolves.
            with pytest.raises(Conflict, match="attack being resolved") as refused:
                await _edit(one, "b", 1)
            assert refused.value.details["attack"] == "atk-2"
            token = (await other.tokens("t1"))["b"]
            after = Token("b", "b", "duel", {"hp": 8}, version=token.version + 1)
            await other.commit("t1", _draft("b", token, after, ref="atk-2"), lease=lease)
    await _edit(one, "b", 2)  # atk-2's commit ended its locks


async def test_a_free_lease_is_taken_with_the_locks_in_one_round_trip_and_given_up_leaves_none(two):
    one, other = two
    async with other.lease("t1", with_locks=True) as lease:
        locks = await other.lock_tokens("t1", lease, "atk-3", ["a"], known=await other.revision("t1"))
        assert locks.revision == await other.revision("t1") and locks.changed[1] == {}
        assert await one.link.call("GET", f"{one.prefix}t:{{t1}}:lease") == lease.holder
        with pytest.raises(Conflict, match="attack being resolved"):
            await _edit(one, "a", 1)
    # Given back without a commit (the attack failed): its locks lapse with it.
    await _edit(one, "a", 1)
    # A waiter that gives up before the lease is handed to it leaves neither lease nor locks.
    async with one.lease("t1") as held:
        async with other.lease("t1", with_locks=True) as lease:
            waiting = asyncio.ensure_future(other.lock_tokens("t1", lease, "atk-4", ["a"]))
            await asyncio.sleep(0.05)
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
        del held
    await asyncio.sleep(0.1)
    await _edit(one, "a", 5)
    async with asyncio.timeout(1):
        async with one.lease("t1"):
            pass
