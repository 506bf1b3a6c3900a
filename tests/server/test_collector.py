"""The server's garbage collector: objects frozen as they are made, a full collection after connections close.

``serve`` moves what it allocates out of the collector's sight every
``Collector.FREEZE_EVERY`` seconds, so no collection walks the live
connections with the event loop stopped, and runs one full collection after
``Collector.AFTER_CLOSED`` websockets closed: the cycles a closed websocket
leaves (engine.io's) are freed then, not kept for good.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

from vtt_bridge.server.runner import Collector

from .kit import Client


class Node:
    """A cycle reference counting cannot free."""

    def __init__(self) -> None:
        self.me = self


async def _until(predicate, timeout: float = 5.0) -> bool:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


async def test_cycles_wait_for_closed_websockets_then_a_full_collection_frees_them(server, seat, monkeypatch):
    monkeypatch.setattr(Collector, "FREEZE_EVERY", 0.02)
    monkeypatch.setattr(Collector, "AFTER_CLOSED", 3)
    collector = Collector(server.connections)
    task = asyncio.get_running_loop().create_task(collector.run())
    try:
        clients = [await seat.join(user) for user in ("alice", "bob", "carol")]
        for client in clients:
            assert (await client.call("echo", {"n": 1}))["ok"]
        node = Node()
        gone = weakref.ref(node)
        del node
        await asyncio.sleep(0.1)  # frozen by now: an ordinary collection no longer sees it
        gc.collect()
        assert gone() is not None
        assert collector.sweeps == 0  # nothing closed yet: no full collection, no pause

        closed = server.connections.closed
        for client in clients[:2]:
            await client.close()
        await asyncio.sleep(0.2)
        assert collector.sweeps == 0 and gone() is not None  # two of three closed

        await clients[2].close()
        assert await _until(lambda: server.connections.closed >= closed + 3)
        assert await _until(lambda: collector.sweeps == 1)
        assert gone() is None  # the full collection freed the cycle
        # The clients still connected were not affected by the collection.
        other = await seat.join("gm")
        assert (await other.call("echo", {"n": 2}))["ok"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        gc.unfreeze()


async def test_a_full_collection_when_memory_doubled_even_without_closed_connections(monkeypatch):
    marks = iter([100_000, 150_000, 150_000, 210_000])
    monkeypatch.setattr("vtt_bridge.server.runner._peak_rss", lambda: next(marks, 210_000))
    monkeypatch.setattr(Collector, "FREEZE_EVERY", 0.002)
    collector = Collector(None)
    node = Node()
    gone = weakref.ref(node)
    del node
    task = asyncio.get_running_loop().create_task(collector.run())
    try:
        assert await _until(lambda: collector.sweeps >= 1)
        assert gone() is None
        assert collector.mark == 210_000
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        gc.unfreeze()


async def test_a_full_collection_at_least_every_so_often(monkeypatch):
    monkeypatch.setattr(Collector, "FREEZE_EVERY", 0.01)
    monkeypatch.setattr(Collector, "AT_LEAST_EVERY", 0.2)
    collector = Collector(None)
    task = asyncio.get_running_loop().create_task(collector.run())
    try:
        node = Node()
        gone = weakref.ref(node)
        del node
        await asyncio.sleep(0.1)
        assert collector.sweeps == 0 and gone() is not None  # frozen, waiting
        assert await _until(lambda: collector.sweeps == 1)
        assert gone() is None
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        gc.unfreeze()


async def test_memory_that_grew_with_the_connections_is_no_reason_for_a_full_collection(monkeypatch):
    """A server filling up with tables grows; a full collection then would stop it for nothing."""
    rss = [100_000]
    monkeypatch.setattr("vtt_bridge.server.runner._peak_rss", lambda: rss[0])
    monkeypatch.setattr(Collector, "FREEZE_EVERY", 0.002)

    class Open:  # what the collector reads of server.connections: websockets closed, transports open
        closed = 0
        open: dict = {}

    connections = Open()
    collector = Collector(connections)  # type: ignore[arg-type]
    task = asyncio.get_running_loop().create_task(collector.run())
    try:
        for n in range(1, 6):  # connections and memory grow together, 16-fold
            connections.open = {object(): True for _ in range(10 * 2**n)}
            rss[0] = 100_000 * 2**n
            await asyncio.sleep(0.1)
        assert collector.sweeps == 0
        rss[0] = 6_500_000  # then the memory doubles with no more connections
        assert await _until(lambda: collector.sweeps == 1)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        gc.unfreeze()
