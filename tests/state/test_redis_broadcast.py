"""Broadcast numbering over a real redis-server: once per batch, even when a reply is lost,
and an attack's broadcasts published by its own commit script, with its seq in them."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from vtt_bridge import Conflict
from vtt_bridge.errors import StoreUnavailable
from vtt_bridge.state import Published, RedisStore, TokenChange

from .test_stores import draft, table, token

_prefixes = itertools.count()


class ReplyEater:
    """A TCP proxy in front of Redis that, once armed, lets the next command holding
    ``word`` through to Redis, swallows Redis's reply and drops the connection —
    as when a network fails after a script ran."""

    def __init__(self, port: int, word: bytes) -> None:
        self.port, self.word = port, word
        self.armed = False
        self.eaten = 0
        self.server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        eat = asyncio.Event()

        async def upstream() -> None:
            while chunk := await reader.read(65536):
                if self.armed and self.word in chunk:
                    self.armed = False
                    eat.set()
                up_writer.write(chunk)
                await up_writer.drain()

        async def downstream() -> None:
            while chunk := await up_reader.read(65536):
                if eat.is_set():
                    self.eaten += 1
                    writer.close()  # the reply never arrives: the connection is gone
                    up_writer.close()
                    return
                writer.write(chunk)
                await writer.drain()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        self._tasks.update(tasks)
        with contextlib.suppress(Exception):
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        writer.close()
        up_writer.close()

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def _listener(url: str, channel: str) -> AsyncIterator[list[str]]:
    """Every message published on ``channel``, straight from Redis, while the block runs."""
    client = aioredis.Redis.from_url(url, decode_responses=True)
    pubsub = client.pubsub()
    await pubsub.subscribe(channel)
    got: list[str] = []

    async def read() -> None:
        async for message in pubsub.listen():
            if message["type"] == "message":
                got.append(message["data"])

    reader = asyncio.create_task(read())
    try:
        yield got
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await client.aclose()


async def _settled(got: list[str], n: int) -> None:
    for _ in range(100):
        if len(got) >= n:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)  # and nothing more comes


async def test_a_batch_whose_reply_was_lost_is_numbered_and_published_once(redis_url):
    port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    eater = ReplyEater(port, b"EVALSHA")
    proxied = f"redis://127.0.0.1:{await eater.start()}/0"
    prefix = f"lost{next(_prefixes)}:"
    store = RedisStore(proxied, prefix=prefix)
    await store.open()
    try:
        async with _listener(redis_url, prefix + "ch") as got:
            tid = await table(store)
            assert await store.broadcast(tid, prefix + "ch", b'["a"]', 2, sender="p1", ident="1") == 1
            eater.armed = True
            with pytest.raises(StoreUnavailable):
                await store.broadcast(tid, prefix + "ch", b'["b"]', 3, sender="p1", ident="2")
            assert eater.eaten == 1  # the script ran: its reply was lost
            # Sent again under the same id (as the server's broadcaster retries): the numbers it was given.
            assert await store.broadcast(tid, prefix + "ch", b'["b"]', 3, sender="p1", ident="2") == 3
            assert await store.broadcast_seq(tid) == 5
            # Another process's batch with the same id is its own; this process's next batch follows.
            assert await store.broadcast(tid, prefix + "ch", b'["c"]', 1, sender="p2", ident="2") == 6
            assert await store.broadcast(tid, prefix + "ch", b'["d"]', 1, sender="p1", ident="3") == 7
            await _settled(got, 4)
            assert got == ['p1\n1\n["a"]', 'p1\n3\n["b"]', 'p2\n6\n["c"]', 'p1\n7\n["d"]']
            assert [first for first, _m in await store.broadcasts_since(tid, 0)] == [1, 3, 6, 7]
    finally:
        await store.close()
        await eater.close()


async def test_a_commit_publishes_the_attacks_broadcasts_with_its_seq_once(redis_url):
    prefix = f"cpub{next(_prefixes)}:"
    store = RedisStore(redis_url, prefix=prefix)
    await store.open()
    try:
        async with _listener(redis_url, prefix + "ch") as got:
            tid = await table(store)
            await store.commit(tid, draft(a=TokenChange(before=None, after=token("a", 10))))
            assert await store.broadcast(tid, prefix + "ch", b'["created"]', 1, sender="p1", ident="1") == 1

            def hit(request_id: str):
                return draft("attack", request_id=request_id, ref="atk-1", a=TokenChange(before=token("a", 10), after=token("a", 7, 2)))

            publish = Published(prefix + "ch", "p1", 2, b'[["attack.resolved",{"seq":', b'}],["token.updated",{}]]')
            entry = await store.commit(tid, hit("r1"), publish=publish)
            assert entry.seq == 2 and publish.first == 2
            assert await store.broadcast_seq(tid) == 3
            # The same request_id again (a client's retry): refused before anything is numbered or published.
            again = Published(prefix + "ch", "p1", 2, b"[", b"]")
            with pytest.raises(Conflict):
                await store.commit(tid, hit("r1"), publish=again)
            assert again.first is None and await store.broadcast_seq(tid) == 3
            # A commit refused for a stale token publishes nothing either.
            stale = Published(prefix + "ch", "p1", 1, b"[", b"]")
            with pytest.raises(Conflict):
                await store.commit(tid, hit("r2"), publish=stale)
            assert stale.first is None and await store.broadcast_seq(tid) == 3
            await _settled(got, 2)
            message = 'p1\n2\n[["attack.resolved",{"seq":2}],["token.updated",{}]]'
            assert got == ['p1\n1\n["created"]', message]
            assert (await store.broadcasts_since(tid, 1)) == [(2, message)]  # logged as published
    finally:
        await store.close()


async def test_a_process_behind_reads_only_the_tokens_changed_since(redis_url):
    from vtt_bridge.state.redis import CHANGES_KEEP

    prefix = f"changed{next(_prefixes)}:"
    store = RedisStore(redis_url, prefix=prefix)
    await store.open()
    try:
        tid = await table(store)
        created = {k: TokenChange(before=None, after=token(k, 10)) for k in ("a", "b", "c")}
        await store.commit(tid, draft(**created))
        start = await store.revision(tid)
        assert await store.changed_since(tid, start) == (start, {})  # nothing moved
        await store.commit(tid, draft("attack", a=TokenChange(before=token("a", 10), after=token("a", 7, 2))))
        await store.commit(tid, draft("token.delete", c=TokenChange(before=token("c", 10), after=None)))
        rev, changed = await store.changed_since(tid, start)
        assert rev == start + 2 and await store.revision(tid) == rev
        assert set(changed) == {"a", "c"}  # b was not touched: not read again
        assert changed["a"].system == {"hp": 7} and changed["a"].version == 2
        assert changed["c"] is None  # deleted
        # A settings change moves the revision with no tokens named: the table is read whole.
        await store.update_settings(tid, {"decision_timeout": 5})
        assert await store.changed_since(tid, start) is None
        settled = await store.revision(tid)
        now = token("a", 7, 2)
        for n in range(CHANGES_KEEP + 1):
            after = token("a", 6 - n, 3 + n)
            await store.commit(tid, draft("attack", a=TokenChange(before=now, after=after)))
            now = after
        assert await store.changed_since(tid, settled) is None  # too far behind: read whole
        rev, changed = await store.changed_since(tid, settled + 1)
        assert list(changed) == ["a"] and changed["a"].version == now.version
    finally:
        await store.close()
