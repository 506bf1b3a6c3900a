"""Two real ``vtt-bridge serve`` processes on highly available Redis, playing a game
through ``kill -9`` of the primary serving the table: a Redis Cluster of three
primaries (a replica each), and a Sentinel-watched primary (two replicas).

A commit is acknowledged once ``WAIT`` says a replica has it (``?wait=1`` in the
URL); an attack cut short by the failover answers ``store_unavailable`` and is sent
again with its request_id, as a client does. Under Cluster the table's broadcasts
travel on a sharded channel (``SPUBLISH``/``SSUBSCRIBE``) of the table's shard.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from vtt_bridge.errors import StoreUnavailable
from vtt_bridge.state import RedisStore, replay

from ..state.redis_server import redis_cluster, sentinel_group
from .kit import Seat, answer, seat_table
from .processes import servers
from .test_processes import BIG, Node

pytestmark = pytest.mark.slow


def _args(url: str) -> tuple[str, ...]:
    return ("--redis", url, "--port", "0", "--lease-ttl", "1", "--decision-timeout", "5")


async def _subscribed(cluster, port: int, channel: str, count: int, within: float) -> None:
    """Wait until ``count`` connections hold ``channel`` (a sharded channel) on the node at ``port``."""
    deadline = time.monotonic() + within
    while (found := cluster.shard_subscribers(port, channel)) != count:
        assert time.monotonic() < deadline, f"{found} subscriber(s) of {channel} on port {port}, not {count}"
        await asyncio.sleep(0.1)


async def _settled(read):
    """``read()`` once the test's own store is through the failover (its first command may meet
    a connection the kill closed: store_unavailable, as for any client)."""
    async with asyncio.timeout(10):
        while True:
            try:
                return await read()
            except StoreUnavailable:
                await asyncio.sleep(0.2)


async def _game(url: str, kill: Callable[[str], None], settle: Callable[[Seat], Awaitable[None]] | None = None) -> None:
    """Two serve processes on ``url``, clients on both, twelve attacks whose defender is asked
    across processes; ``kill(table_id)`` before the fifth. ``settle(seat)`` runs once the seat
    is up (and again at the end)."""
    store = RedisStore(url)
    await store.open()
    try:
        with servers(_args(url), _args(url)) as (one, two):
            seat = await seat_table(Node(one.url, store), tokens=BIG)
            try:
                # bob (the defender's owner) and carol on process one; the GM and carol on two:
                # every attack is resolved on two and asks bob on one.
                bob = await seat.join("bob", answer("block"))
                carol_one = await seat.join("carol")
                seat.server = Node(two.url, store)
                gm = await seat.join("gm")
                carol_two = await seat.join("carol")
                if settle is not None:
                    await settle(seat)

                acknowledged, refused, hows = [], [], []
                deadline = time.monotonic() + 60
                for n in range(12):
                    if n == 4:
                        kill(seat.id)  # kill -9 of the table's primary, mid-play
                    request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6],
                               "request_id": f"r{n}"}
                    while True:  # as a client does: the same request again after store_unavailable
                        assert time.monotonic() < deadline, (acknowledged, refused)
                        ack = await gm.call("attack", request, timeout=20)
                        if ack["ok"]:
                            acknowledged.append(ack["attack"]["id"])
                            hows.append(ack["attack"]["decisions"][0]["how"])
                            break
                        refused.append(ack["error"]["code"])
                        assert ack["error"]["code"] == "store_unavailable", ack  # retryable, not internal
                        await asyncio.sleep(ack["error"]["details"]["retry_after"] / 4)
                assert refused  # the failover was felt, as a retryable error

                # No acknowledged attack lost: each in the promoted primary's log, once, in order.
                audit = await _settled(lambda: store.audit(seat.id))
                assert [e.ref for e in audit if e.kind == "attack"] == acknowledged
                assert replay(audit) == await seat.tokens()
                # bob was asked across processes, and answered, on every attack after the failover too.
                assert hows[-4:] == ["answered"] * 4
                if settle is not None:
                    await settle(seat)
                # No silent gap: each watcher got every acknowledged attack's attack.resolved once,
                # in order, with consecutive broadcast_seq — or was told table.resync.
                for watcher in (carol_one, carol_two, bob):
                    async with asyncio.timeout(15):
                        while True:
                            resolved = [r["attack"]["id"] for r in watcher.named("attack.resolved")]
                            if resolved[-len(acknowledged):] == acknowledged or watcher.named("table.resync"):
                                break
                            await asyncio.sleep(0.1)
                    assert len(resolved) == len(set(resolved))
                    if not watcher.named("table.resync"):
                        assert watcher.seqs == list(range(watcher.seqs[0], watcher.seqs[0] + len(watcher.seqs)))
            finally:
                await seat.close()
    finally:
        await store.close()


async def test_two_serve_processes_on_a_cluster_play_through_a_kill_of_the_table_s_primary():
    with redis_cluster(node_timeout_ms=1000) as cluster:
        victims = []

        def kill(table_id: str) -> None:
            victims.append(cluster.kill_primary_of("{" + table_id + "}"))

        async def sharded(seat: Seat) -> None:
            # Sharded pub/sub: both processes hold the table's channel on the node serving the
            # table's slot (the promoted replica, after the kill), and no other node carries it.
            slot_key = "{" + seat.id + "}"
            channel = f"vtt:socketio:table:{slot_key}"
            primary = cluster.primary_of(slot_key)
            assert primary is not None and primary not in victims  # the replica took over
            await _subscribed(cluster, primary.port, channel, 2, 10)
            others = [n for n in cluster.live() if n is not primary]
            assert all(cluster.shard_subscribers(n.port, channel) == 0 for n in others)

        await _game(cluster.url + "?wait=1&wait_ms=1000", kill, sharded)


async def test_two_serve_processes_on_sentinel_play_through_a_kill_of_the_primary():
    with sentinel_group() as group:
        old = group.primary_port()
        await _game(group.url + "?wait=1&wait_ms=1000", lambda _table: group.primary.kill())
        assert group.primary_port() != old  # a replica was promoted
