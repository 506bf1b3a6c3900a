"""High availability for real: a Sentinel-watched primary and a Cluster of three primaries,
each losing a primary to kill -9 mid-play, with no acknowledged commit lost.

A commit is acknowledged once ``WAIT`` says a replica has it (``?wait=1`` in the
URL); one cut short by the failover raises ``store_unavailable`` and is sent again
with its request_id, as a client does — it then lands once.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.errors import Conflict, StoreUnavailable
from vtt_bridge.state import AuditDraft, RedisStore, TableInfo, TokenChange, replay

from .redis_server import redis_cluster, sentinel_group

pytestmark = pytest.mark.slow


def _hit(token: Token, request_id: str) -> AuditDraft:
    after = Token(token.id, token.name, token.ruleset, {"hp": token.system["hp"] - 1}, version=token.version + 1)
    return AuditDraft(
        kind="attack", user="gm", at=time.time(), ref=request_id, request_id=request_id,
        changes={token.id: TokenChange(before=token, after=after)},
    )


async def _play(store: RedisStore, table_id: str, attacks: int, kill, *, kill_at: int, budget: float) -> list[str]:
    """Commit ``attacks`` hits, retrying each like a client until acknowledged; ``kill()`` at ``kill_at``."""
    acknowledged: list[str] = []
    deadline = time.monotonic() + budget
    for n in range(attacks):
        if n == kill_at:
            kill()
        request_id = f"{table_id}-r{n}"
        while True:
            assert time.monotonic() < deadline, f"attack {n} not acknowledged in time"
            try:
                token = (await store.tokens(table_id))["x"]
                await store.commit(table_id, _hit(token, request_id))
            except StoreUnavailable as exc:
                await asyncio.sleep(min(0.2, exc.details["retry_after"]))
                continue
            except Conflict:
                # Landed before its answer was lost: the request_id says so (a client's retry sees the same).
                if await store.by_request(table_id, request_id) is None:
                    continue  # a version moved meanwhile: resolve again
            acknowledged.append(request_id)
            break
    return acknowledged


async def _seat(store: RedisStore, table_id: str) -> None:
    await store.create_table(TableInfo(id=table_id, name=table_id, created=0.0, settings={}))
    token = Token("x", "x", "duel", {"hp": 1000}, version=1)
    await store.commit(table_id, AuditDraft(kind="token.create", user="gm", at=0.0,
                                            changes={"x": TokenChange(before=None, after=token)}))


async def _check(store: RedisStore, table_id: str, acknowledged: list[str]) -> None:
    entries = await store.audit(table_id)
    landed = [e.request_id for e in entries if e.kind == "attack"]
    assert landed == acknowledged  # each once, in order, none lost
    tokens = await store.tokens(table_id)
    assert tokens["x"].system["hp"] == 1000 - len(acknowledged)
    assert replay(entries)["x"]["system"]["hp"] == tokens["x"].system["hp"]


async def test_a_sentinel_failover_mid_play_loses_no_acknowledged_commit():
    with sentinel_group() as group:
        store = RedisStore(group.url + "?wait=1&wait_ms=1000", prefix="ha:")
        await store.open()
        try:
            await _seat(store, "t1")
            old = group.primary_port()
            acknowledged = await _play(store, "t1", 30, group.primary.kill, kill_at=10, budget=40)
            assert group.primary_port() != old  # the replica was promoted
            await _check(store, "t1", acknowledged)
        finally:
            await store.close()


async def test_a_cluster_of_three_primaries_shards_tables_and_survives_losing_one():
    with redis_cluster() as cluster:
        store = RedisStore(cluster.url + "?wait=1&wait_ms=1000", prefix="ha:")
        await store.open()
        try:
            tables = [f"t{i}" for i in range(6)]
            for table_id in tables:
                await _seat(store, table_id)
            serving = {cluster.primary_of("{" + t + "}").port for t in tables}
            assert len(serving) >= 2  # the tables are spread over the primaries
            victim = cluster.primary_of("{t0}")
            # A sharded channel of table t0 (SSUBSCRIBE on t0's shard), and one of each other table.
            heard: list[str] = []
            resubscribed: list[int] = []
            store.subscriber.on_resubscribed.append(lambda: resubscribed.append(1))
            for table_id in tables:
                await store.subscriber.subscribe(f"ha:news:{{{table_id}}}", heard.append, sharded=True)
            assert cluster.shard_subscribers(victim.port, "ha:news:{t0}") == 1
            assert {n.port for n in cluster.live() if cluster.shard_subscribers(n.port, "ha:news:{t0}")} == {victim.port}

            acknowledged = await _play(store, "t0", 20, lambda: cluster.kill_primary_of("{t0}"), kill_at=5, budget=40)
            promoted = cluster.primary_of("{t0}")
            assert promoted is not victim  # its replica took over
            await _check(store, "t0", acknowledged)
            # The subscription moved to the promoted replica (the bus is told, to catch up from the
            # tables' logs), and what is published there now is heard.
            deadline = time.monotonic() + 10
            while "after" not in heard:
                assert time.monotonic() < deadline, heard
                store.link.publish("ha:news:{t0}", "after", sharded=True)
                await asyncio.sleep(0.2)
            assert resubscribed and cluster.shard_subscribers(promoted.port, "ha:news:{t0}") == 1
            for table_id in tables[1:]:
                store.link.publish(f"ha:news:{{{table_id}}}", table_id, sharded=True)
            async with asyncio.timeout(5):
                while not set(tables[1:]) <= set(heard):
                    await asyncio.sleep(0.05)
            for table_id in tables[1:]:  # the other tables play on
                await _check(store, table_id, await _play(store, table_id, 3, lambda: None, kill_at=-1, budget=20))
        finally:
            await store.close()
