"""A table's attack lease held by a process killed with kill -9 is free again within 3 s."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from vtt_bridge.state import RedisStore, TableInfo

pytestmark = pytest.mark.slow

HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from vtt_bridge.state import RedisStore

    async def main():
        store = RedisStore(sys.argv[1], prefix="handover:")
        await store.open()
        async with store.lease("t1"):
            print("held", flush=True)
            await asyncio.sleep(60)

    asyncio.run(main())
    """
)


async def test_a_lease_of_a_process_killed_with_kill_9_is_taken_over_within_3_s(redis_url):
    store = RedisStore(redis_url, prefix="handover:")  # the default lease time
    await store.open()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, redis_url], stdout=subprocess.PIPE, text=True)
    try:
        await store.create_table(TableInfo(id="t1", name="t", created=0.0, settings={}))
        assert holder.stdout.readline().strip() == "held"
        time.sleep(2.5)  # the holder renews its lease past the lease time
        assert await store.link.call("GET", "handover:t:{t1}:lease") is not None
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        killed = time.monotonic()
        async with store.lease("t1"):
            waited = time.monotonic() - killed
        assert waited <= 3.0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        await store.close()
