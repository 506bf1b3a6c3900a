"""No silent gaps (issue 27): ``broadcast_seq`` across two server processes on one real Redis.

Clients here follow the documented rule (docs/protocol.md, "Broadcast order"; the same as
common/sequence.js): apply ``last + 1``, drop what is not newer, and on a gap, a numbering
that starts again or ``table.resync`` call ``table.sync`` and go on from its ``broadcast_seq``.
Each test ends with every client's tokens equal to the store's, without reconnecting.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from pathlib import Path
from typing import Any

import pytest
import socketio

from vtt_bridge.server import BridgeServer, tables

from ..state.redis_server import ask, redis_process
from .conftest import config
from .kit import DUEL_TOKENS, seat_table

_prefixes = itertools.count()
ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}}


class Follower:
    """A python-socketio client that keeps a table's tokens by the broadcast_seq rule."""

    def __init__(self, url: str, auth: dict[str, str]) -> None:
        self.url, self.auth = url, auth
        self.sio = socketio.AsyncClient(reconnection=False)
        self.tokens: dict[str, dict] = {}
        self.last: int | None = None
        self.applied: list[int] = []
        self.syncs = 0
        self.resyncs = 0
        self._sync: asyncio.Task[None] | None = None
        self.missed: int | None = None
        self.sio.on("*", self._event)

    async def start(self) -> Follower:
        await self.sio.connect(self.url, auth=self.auth, transports=["websocket"])
        await self._do_sync()
        return self

    async def _do_sync(self) -> None:
        self.syncs += 1
        ack = await self.sio.call("table.sync", {"since": 0}, timeout=20)
        assert ack["ok"], ack
        self.tokens = {t["id"]: t for t in ack["tokens"]}
        self.last = ack["broadcast_seq"]
        self._sync = None
        missed, self.missed = self.missed, None
        if missed is not None and missed > self.last:  # dropped while the sync was out, and newer
            self._gap()

    def _gap(self) -> None:
        if self._sync is None:
            self._sync = asyncio.get_running_loop().create_task(self._do_sync())

    async def _event(self, event: str, data: Any = None) -> None:
        if event == "table.resync":
            self.resyncs += 1
            self._gap()
            return
        seq = data.get("broadcast_seq") if isinstance(data, dict) else None
        if seq is None or self.last is None:
            return
        if self._sync is not None:
            self.missed = max(self.missed or 0, seq)
            return
        if seq == self.last + 1:
            self.last = seq
            self.applied.append(seq)
            if event in ("token.updated", "token.created"):
                self.tokens[data["token"]["id"]] = data["token"]
            elif event == "token.deleted":
                self.tokens.pop(data["id"], None)
        elif seq > self.last + 1 or (seq == 1 and self.last > 1):
            self._gap()

    async def settled(self, newest: int, seconds: float = 10) -> None:
        async with asyncio.timeout(seconds):
            while self._sync is not None or self.last != newest:
                await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._sync is not None:
            await asyncio.gather(self._sync, return_exceptions=True)
        if self.sio.connected:
            await self.sio.disconnect()


@contextlib.asynccontextmanager
async def _play(tmp_path, redis, **overrides):
    """Two servers on one Redis; the GM on server two, followers on both."""
    prefix = f"bseq{next(_prefixes)}:"
    one = BridgeServer(config(tmp_path / "one", redis=redis.url, redis_prefix=prefix, **overrides))
    two = BridgeServer(config(tmp_path / "two", redis=redis.url, redis_prefix=prefix, **overrides))
    await one.start()
    await two.start()
    seat = await seat_table(one)
    followers: list[Follower] = []
    try:
        seat.server = two
        gm = await seat.join("gm")
        for server, user in ((one, "carol"), (one, "bob"), (two, "carol")):
            followers.append(await Follower(server.url, seat.auth(user)).start())
        yield one, two, seat, gm, followers
    finally:
        for follower in followers:
            await follower.close()
        await seat.close()
        await one.stop()
        await two.stop()


async def _attack(gm, n: int, deadline: float) -> None:
    """One attack, sent again with its request_id while the store answers store_unavailable."""
    request = {**ATTACK, "request_id": f"r{n}"}
    while True:
        assert time.monotonic() < deadline
        ack = await gm.call("attack", request, timeout=10)
        if ack["ok"]:
            return
        assert ack["error"]["code"] == "store_unavailable", ack
        await asyncio.sleep(0.1)


async def _converged(one, seat, followers) -> int:
    """Every follower's tokens equal the store's once the numbering is quiet; returns the newest seq."""
    newest = await one.store.broadcast_seq(seat.id)
    stored = await seat.tokens()
    for follower in followers:
        try:
            await follower.settled(newest)
        except TimeoutError:
            state = [(f.last, f.syncs, f.resyncs, f.applied[-5:]) for f in followers]
            raise AssertionError(f"newest {newest}; followers (last, syncs, resyncs, applied): {state}") from None
        assert follower.tokens == stored
    return newest


def _buses(*servers):
    return [server.bridge.sio.manager for server in servers]


async def test_pubsub_killed_mid_play_every_client_gets_every_event_once_in_order(tmp_path):
    with redis_process() as redis:
        async with _play(tmp_path, redis) as (one, two, seat, gm, followers):
            start = [f.last for f in followers]
            deadline = time.monotonic() + 60
            for n in range(24):
                if n % 4 == 1:
                    ask(redis.port, "CLIENT", "KILL", "TYPE", "pubsub")  # both processes lose their feed
                await _attack(gm, n, deadline)
            newest = await _converged(one, seat, followers)
            for follower, first in zip(followers, start, strict=True):
                # Every broadcast once, in order, with no sync beyond the first and no resync.
                assert follower.applied == list(range(first + 1, newest + 1))
                assert (follower.syncs, follower.resyncs) == (1, 0)
            assert sum(bus.caught_up for bus in _buses(one, two)) > 0  # the feed was lost for real
            assert sum(bus.resyncs for bus in _buses(one, two)) == 0


async def test_a_log_trimmed_past_a_process_is_table_resync_and_clients_converge(tmp_path):
    with redis_process("--stream-node-max-entries", "1") as redis:
        # serve --broadcast-keep 1: a tiny log, so a lost feed is past it at once
        async with _play(tmp_path, redis, broadcast_keep=1) as (one, two, seat, gm, followers):
            seat.server = one
            gm_one = await seat.join("gm")  # both processes publish while the feeds are away
            deadline = time.monotonic() + 60
            for n in range(40):
                if n % 4 == 1:
                    ask(redis.port, "CLIENT", "KILL", "TYPE", "pubsub")
                await asyncio.gather(_attack(gm, n, deadline), gm_one.ok("token.update", {"id": "c", "name": f"c{n}"}))
                if n > 8 and sum(bus.resyncs for bus in _buses(one, two)):
                    break
            assert sum(bus.resyncs for bus in _buses(one, two)) > 0
            await _converged(one, seat, followers)
            assert sum(f.resyncs for f in followers) > 0
            # And the numbering goes on: one more attack reaches everyone in order.
            marks = [f.last for f in followers]
            await _attack(gm, 99, deadline)
            newest = await _converged(one, seat, followers)
            for follower, mark in zip(followers, marks, strict=True):
                assert follower.applied[-(newest - mark):] == list(range(mark + 1, newest + 1))


async def test_serve_broadcast_keep_sets_how_many_batches_each_table_s_log_holds(tmp_path):
    with redis_process("--stream-node-max-entries", "1") as redis:  # trims exactly, not by whole nodes
        async with _play(tmp_path, redis, broadcast_keep=6) as (one, _two, seat, gm, _followers):
            deadline = time.monotonic() + 60
            for n in range(10):
                await _attack(gm, n, deadline)
            newest = await one.store.broadcast_seq(seat.id)
            kept = await one.store.broadcasts_since(seat.id, newest - 20)
            assert kept is None  # older than the log: a process this far behind resyncs its clients
            log = one.store.table_key(seat.id, "log")
            assert int(ask(redis.port, "XLEN", log).strip(b":\r\n")) == 6
            within = await one.store.broadcasts_since(seat.id, newest - 3)
            assert within and within[-1][0] <= newest  # a few batches behind: caught up from the log


@pytest.mark.parametrize("persistence", ["aof", "none"])
async def test_a_redis_restart_mid_play_ends_with_every_client_seeing_the_store(tmp_path, persistence):
    extra = ("--appendonly", "yes", "--appendfsync", "always") if persistence == "aof" else ()
    with redis_process(*extra) as redis:
        async with _play(tmp_path, redis) as (one, two, seat, gm, followers):
            deadline = time.monotonic() + 60
            for n in range(6):
                await _attack(gm, n, deadline)
            redis.stop()
            await asyncio.sleep(0.3)
            redis.start()
            if persistence == "none":
                # A wiped store (its epoch key gone: /healthz says so). The GM puts the
                # tokens back; the numbering starts again at 1, which every client takes
                # as a cue to sync, on both processes.
                async with asyncio.timeout(20):
                    while not (await gm.call("token.create", DUEL_TOKENS[0], timeout=10))["ok"]:
                        await asyncio.sleep(0.1)
                for token in DUEL_TOKENS[1:]:
                    await gm.ok("token.create", token)
            for n in range(6, 14):
                await _attack(gm, n, deadline)
            await _converged(one, seat, followers)


def test_the_clients_list_of_broadcasts_is_the_servers():
    """The web table and the Foundry module listen for (and number) exactly the events the server
    broadcasts: the list in static/common/sequence.js is tables.BROADCASTS, in order."""
    source = (Path(tables.__file__).parent / "static" / "common" / "sequence.js").read_text()
    block = re.search(r"BROADCASTS = Object\.freeze\(\[(.*?)\]\)", source, re.S)
    assert block is not None
    assert tuple(re.findall(r'"([^"]+)"', block.group(1))) == tables.BROADCASTS
