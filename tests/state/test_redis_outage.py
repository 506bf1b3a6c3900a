"""Redis going away while serving: a retryable error, one log line each way, then back to work.

A real redis-server is stopped and started again on the same port; without
persistence it comes back empty, which the store's epoch check notices.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time

import pytest

from vtt_bridge.errors import StoreUnavailable
from vtt_bridge.state import RedisStore, TableInfo
from vtt_bridge.state.redis_link import Subscriber

from .redis_server import redis_process

pytestmark = pytest.mark.slow


async def _until(check, seconds: float):
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await check()
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_an_outage_is_store_unavailable_logged_once_and_the_store_comes_back(caplog):
    caplog.set_level(logging.INFO, logger="vtt_bridge.state")
    with redis_process() as redis:
        store = RedisStore(redis.url, prefix="outage:")
        await store.open()
        try:
            await store.create_table(TableInfo(id="t1", name="t", created=0.0, settings={}))
            heard = []
            await store.subscriber.subscribe("outage:news", heard.append)
            redis.stop()
            errors = []
            started = time.monotonic()
            for _ in range(20):
                with pytest.raises(StoreUnavailable) as caught:
                    await store.get_table("t1")
                errors.append(caught.value)
                store.question_settled("t1", "a/b")  # a fire-and-forget send fails quietly
            assert time.monotonic() - started < 5  # no waiting on a dead Redis
            assert errors[0].code == "store_unavailable" and errors[0].details["retry_after"] > 0
            await asyncio.sleep(0.3)
            down = [r for r in caplog.records if "Redis unavailable" in r.getMessage()]
            # One line for the commands, one for pub/sub; no tracebacks.
            assert len(down) <= 2 and any("(commands)" in r.getMessage() for r in down), down
            assert not any(r.exc_info for r in caplog.records)

            redis.start()  # empty: no persistence
            assert await _until(lambda: store.get_table("t1"), 5) is None
            back = [r for r in caplog.records if "Redis is back" in r.getMessage()]
            assert any("(commands)" in r.getMessage() for r in back)
            # The pub/sub side subscribed again by itself.
            deadline = time.monotonic() + 5
            while not heard and time.monotonic() < deadline:
                await store.link.call("PUBLISH", "outage:news", "hello")
                await asyncio.sleep(0.1)
            assert heard and heard[-1] == "hello"
            # ... and the store knows it was wiped under it.
            with pytest.raises(StoreUnavailable, match="wiped"):
                await store.ping()
        finally:
            await store.close()


async def test_a_store_restarted_with_its_data_is_healthy_again():
    with redis_process("--appendonly", "yes", "--appendfsync", "always") as redis:
        store = RedisStore(redis.url, prefix="kept:")
        await store.open()
        try:
            await store.ping()
            redis.stop()
            with pytest.raises(StoreUnavailable):
                await store.ping()
            redis.start()
            await _until(store.ping, 5)
        finally:
            await store.close()


async def test_a_redis_that_stops_answering_without_closing_is_noticed_by_pub_sub(caplog, monkeypatch):
    # A host gone without a goodbye (a network cut, a frozen machine): the connection stays open
    # and silent. A quiet pub/sub connection is pinged; no answer in time means lost: one log
    # line, and once Redis answers again the channels are subscribed again (the bus then
    # catches up from the tables' logs).
    monkeypatch.setattr(Subscriber, "IDLE", 0.3)
    caplog.set_level(logging.INFO, logger="vtt_bridge.state")
    with redis_process() as redis:
        store = RedisStore(redis.url, prefix="silent:")
        await store.open()
        try:
            heard, resubscribed = [], []
            store.subscriber.on_resubscribed.append(lambda: resubscribed.append(1))
            await store.subscriber.subscribe("silent:news", heard.append)
            assert redis.proc is not None
            redis.proc.send_signal(signal.SIGSTOP)
            try:
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline and not any(
                    "Redis unavailable (pub/sub)" in r.getMessage() for r in caplog.records
                ):
                    await asyncio.sleep(0.05)
                assert any("Redis unavailable (pub/sub)" in r.getMessage() for r in caplog.records)
            finally:
                redis.proc.send_signal(signal.SIGCONT)
            deadline = time.monotonic() + 10
            while not (heard and resubscribed) and time.monotonic() < deadline:
                await store.link.call("PUBLISH", "silent:news", "hello")
                await asyncio.sleep(0.1)
            assert resubscribed and heard and heard[-1] == "hello"
            assert not any(r.exc_info for r in caplog.records)
        finally:
            await store.close()
