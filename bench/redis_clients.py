"""Redis clients side by side on the store's own operation mix: which one the Redis store uses.

Candidates: redis-py's asyncio client with hiredis, coredis, valkey-glide (each
measured when installed). Against a real redis-server on 127.0.0.1 started
here (or ``--redis URL``), each client runs, one after another and alternated
over ``--rounds`` rounds:

- **commit**: the store's kind of Lua commit (``EVALSHA``: a token version
  check, the token written, an audit entry of ``--entry`` bytes appended, the
  revision bumped), one at a time;
- **reads**: three reads pipelined in one round trip (the table's tokens,
  its revision, an audit entry), as the store reads before an attack;
- **pubsub**: a ``PUBLISH`` of a broadcast-sized message, timed until the
  client's own subscriber hands it over;
- **commit+WAIT** (redis-py, the client chosen): the commit followed by
  ``WAIT 1`` in the same pipeline, against a replica started here — what a
  commit costs with ``?wait=1`` (docs/deploy.md).

Per operation it prints the median and 99th-percentile latency and the CPU
time of this process (the client's cost) and of redis-server (``INFO cpu``),
in microseconds. The machine is shared: figures are noisy, compare the
clients within one run. ``--quick`` is a short run for tests.

    python bench/redis_clients.py [--quick] [--ops N] [--rounds R] [--redis URL] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

COMMIT = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
local found = ''
if current then found = tostring(cjson.decode(current)['version']) end
if found ~= ARGV[2] then return {'conflict', ARGV[1], found} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
local seq = redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('LTRIM', KEYS[2], -200, -1)
local rev = redis.call('INCR', KEYS[3])
return {'ok', tostring(seq), tostring(rev)}
"""
SHA = hashlib.sha1(COMMIT.encode()).hexdigest()
# Client CPU per commit the store's client should stay under (µs): 1.5 x the ~50 µs the
# hand-written pipelined link it replaced cost, measured the same way (43-66 µs, noisy).
CLIENT_CPU_TARGET_US = 75
KEYS = ["bench:t:{b}:tokens", "bench:t:{b}:audit", "bench:t:{b}:rev"]
CHANNEL = "bench:t:{b}:news"


def _token(version: int) -> str:
    return json.dumps({"id": "x", "version": version, "system": {"hp": 10, "motes": 30}})


# -- one adapter per client: connect, evalsha, pipelined reads, publish + subscriber --------


class Adapter:
    name = ""

    async def open(self, host: str, port: int) -> None: ...
    async def close(self) -> None: ...
    async def evalsha(self, args: list[str]) -> Any: ...
    async def reads(self) -> list[Any]: ...
    async def publish(self, message: str) -> None: ...
    async def received(self) -> str: ...


class RedisPy(Adapter):
    name = "redis-py"

    async def open(self, host: str, port: int) -> None:
        import redis.asyncio as aioredis

        self.client = aioredis.Redis(host=host, port=port, decode_responses=True)
        await self.client.script_load(COMMIT)
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        await self.pubsub.subscribe(CHANNEL)
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while True:
            message = await self.pubsub.get_message(timeout=5.0)
            if message is not None:
                self.inbox.put_nowait(message["data"])

    async def close(self) -> None:
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)
        await self.pubsub.aclose()
        await self.client.aclose()

    async def evalsha(self, args: list[str]) -> Any:
        return await self.client.evalsha(SHA, len(KEYS), *KEYS, *args)

    async def reads(self) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(KEYS[0])
        pipe.get(KEYS[2])
        pipe.lindex(KEYS[1], -1)
        return await pipe.execute()

    async def publish(self, message: str) -> None:
        await self.client.publish(CHANNEL, message)

    async def received(self) -> str:
        return await self.inbox.get()

    async def evalsha_wait(self, args: list[str]) -> Any:
        pipe = self.client.pipeline(transaction=False)
        pipe.evalsha(SHA, len(KEYS), *KEYS, *args)
        pipe.execute_command("WAIT", 1, 500)
        reply, confirmed = await pipe.execute()
        if confirmed < 1:
            raise RuntimeError("the replica did not confirm a commit within 500 ms")
        return reply


class Coredis(Adapter):
    name = "coredis"

    async def open(self, host: str, port: int) -> None:
        import coredis

        self.stack = contextlib.AsyncExitStack()
        self.client = await self.stack.enter_async_context(coredis.Redis(host=host, port=port, decode_responses=True))
        await self.client.script_load(COMMIT)
        self.pubsub = await self.stack.enter_async_context(self.client.pubsub(ignore_subscribe_messages=True))
        await self.pubsub.subscribe(CHANNEL)
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for message in self.pubsub:
            if message is not None and message.get("type") == "message":
                self.inbox.put_nowait(message["data"])

    async def close(self) -> None:
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)
        await self.stack.aclose()

    async def evalsha(self, args: list[str]) -> Any:
        return await self.client.evalsha(SHA, keys=KEYS, args=args)

    async def reads(self) -> list[Any]:
        async with self.client.pipeline(transaction=False) as pipe:
            results = [pipe.hgetall(KEYS[0]), pipe.get(KEYS[2]), pipe.lindex(KEYS[1], -1)]
        return [await r for r in results]

    async def publish(self, message: str) -> None:
        await self.client.publish(CHANNEL, message)

    async def received(self) -> str:
        return await self.inbox.get()


class Glide(Adapter):
    name = "valkey-glide"

    async def open(self, host: str, port: int) -> None:
        from glide import Batch, GlideClient, GlideClientConfiguration, NodeAddress

        self.batch_type = Batch
        address = [NodeAddress(host, port)]
        self.client = await GlideClient.create(GlideClientConfiguration(address))
        modes = GlideClientConfiguration.PubSubChannelModes
        subscriptions = GlideClientConfiguration.PubSubSubscriptions(
            channels_and_patterns={modes.Exact: {CHANNEL}}, callback=None, context=None
        )
        self.listener = await GlideClient.create(GlideClientConfiguration(address, pubsub_subscriptions=subscriptions))
        await self.client.custom_command(["SCRIPT", "LOAD", COMMIT])

    async def close(self) -> None:
        await self.listener.close()
        await self.client.close()

    async def evalsha(self, args: list[str]) -> Any:
        return await self.client.custom_command(["EVALSHA", SHA, str(len(KEYS)), *KEYS, *args])

    async def reads(self) -> list[Any]:
        batch = self.batch_type(is_atomic=False)
        batch.hgetall(KEYS[0])
        batch.get(KEYS[2])
        batch.lindex(KEYS[1], -1)
        return await self.client.exec(batch, raise_on_error=True)

    async def publish(self, message: str) -> None:
        await self.client.publish(message, CHANNEL)

    async def received(self) -> str:
        message = await self.listener.get_pubsub_message()
        return message.message.decode() if isinstance(message.message, bytes) else message.message


ADAPTERS: dict[str, type[Adapter]] = {"redis-py": RedisPy, "coredis": Coredis, "valkey-glide": Glide}
MODULES = {"redis-py": "redis", "coredis": "coredis", "valkey-glide": "glide"}


# -- measuring ----------------------------------------------------------------------------


def _server_cpu(host: str, port: int) -> float:
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(b"INFO cpu\r\n")
        data = b""
        while b"used_cpu_user:" not in data or not data.endswith(b"\r\n"):
            data += conn.recv(65536)
    info = dict(line.split(":", 1) for line in data.decode().splitlines() if ":" in line)
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


async def _timed(op: Callable[[int], Awaitable[Any]], n: int, host: str, port: int) -> dict[str, float]:
    latencies = []
    server_before, cpu_before = _server_cpu(host, port), time.process_time()
    for i in range(n):
        started = time.perf_counter()
        await op(i)
        latencies.append(time.perf_counter() - started)
    cpu = time.process_time() - cpu_before
    server = _server_cpu(host, port) - server_before
    latencies.sort()
    return {
        "median_us": statistics.median(latencies) * 1e6,
        "p99_us": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e6,
        "client_cpu_us": cpu / n * 1e6,
        "server_cpu_us": server / n * 1e6,
    }


async def measure(
    name: str, host: str, port: int, ops: int, entry: int, *, replica: bool = False
) -> dict[str, dict[str, float]]:
    adapter = ADAPTERS[name]()
    await adapter.open(host, port)
    try:
        # Start from a known token version, whatever ran before.
        version = {"v": 0}
        payload = json.dumps({"kind": "attack", "data": "x" * entry})
        message = json.dumps([["attack.step", {"text": "y" * 400}, "t"]] * 3)

        async def commit(_i: int) -> None:
            expected = str(version["v"]) if version["v"] else ""
            reply = await adapter.evalsha(["x", expected, _token(version["v"] + 1), payload])
            status = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
            if status != "ok":
                raise RuntimeError(f"{name}: commit answered {reply!r}")
            version["v"] += 1

        async def commit_wait(_i: int) -> None:
            expected = str(version["v"]) if version["v"] else ""
            await adapter.evalsha_wait(["x", expected, _token(version["v"] + 1), payload])  # type: ignore[attr-defined]
            version["v"] += 1

        async def reads(_i: int) -> None:
            await adapter.reads()

        async def pubsub(i: int) -> None:
            await adapter.publish(message)
            await adapter.received()

        await _reset(host, port)
        for op in (commit, reads, pubsub):  # warm up
            for i in range(min(50, ops)):
                await op(i)
        out = {
            "commit": await _timed(commit, ops, host, port),
            "reads": await _timed(reads, ops, host, port),
            "pubsub": await _timed(pubsub, ops, host, port),
        }
        if replica and hasattr(adapter, "evalsha_wait"):
            for i in range(min(50, ops)):
                await commit_wait(i)
            out["commit+WAIT"] = await _timed(commit_wait, ops, host, port)
        return out
    finally:
        await adapter.close()


async def _reset(host: str, port: int) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    for key in KEYS:
        writer.write(f"DEL {key}\r\n".encode())
        await reader.readline()
    writer.close()
    await writer.wait_closed()


@contextlib.asynccontextmanager
async def _redis(url: str | None) -> AsyncIterator[tuple[str, int]]:
    if url:
        from urllib.parse import urlparse

        parsed = urlparse(url)
        yield parsed.hostname or "127.0.0.1", parsed.port or 6379
        return
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (apt-get install redis-server), or give --redis URL")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as workdir:
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            await _up(port)
            yield "127.0.0.1", port
        finally:
            proc.terminate()
            proc.wait(timeout=10)


async def _up(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"redis-server did not start on port {port}")


@contextlib.asynccontextmanager
async def _replica(port: int) -> AsyncIterator[None]:
    """A replica of the Redis on ``port``, started here, once it has caught up."""
    binary = shutil.which("redis-server") or "redis-server"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        own = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as workdir:
        proc = subprocess.Popen(
            [binary, "--port", str(own), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--replicaof", "127.0.0.1", str(port)],
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            await _up(own)
            for _ in range(200):
                reader, writer = await asyncio.open_connection("127.0.0.1", own)
                writer.write(b"INFO replication\r\n")
                data = await reader.read(65536)
                writer.close()
                if b"master_link_status:up" in data:
                    break
                await asyncio.sleep(0.05)
            yield
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def available(names: list[str]) -> list[str]:
    import importlib.util

    return [n for n in names if importlib.util.find_spec(MODULES[n]) is not None]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    names = available(args.clients)
    results: dict[str, list[dict[str, dict[str, float]]]] = {n: [] for n in names}
    async with _redis(args.redis) as (host, port), contextlib.AsyncExitStack() as stack:
        if not args.redis:
            await stack.enter_async_context(_replica(port))
        for _round in range(args.rounds):
            for name in names:  # alternated, so a busy moment of the machine hits each
                measured = await measure(name, host, port, args.ops, args.entry, replica=not args.redis)
                results[name].append(measured)
    summary: dict[str, Any] = {}
    for name, rounds in results.items():
        summary[name] = {
            op: {field: statistics.median(r[op][field] for r in rounds) for field in rounds[0][op]}
            for op in rounds[0]
        }
    return {"ops": args.ops, "rounds": args.rounds, "entry_bytes": args.entry, "missing": sorted(set(args.clients) - set(names)), "clients": summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (for tests)")
    parser.add_argument("--ops", type=int, default=2000, help="operations of each kind per round (default: 2000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, clients alternated (default: 3)")
    parser.add_argument("--entry", type=int, default=4000, help="bytes of the committed audit entry (default: 4000)")
    parser.add_argument("--clients", nargs="+", default=list(ADAPTERS), choices=list(ADAPTERS))
    parser.add_argument("--redis", metavar="URL", help="an existing Redis (default: start a redis-server here)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.ops, args.rounds = min(args.ops, 100), 1
    load = os.getloadavg()
    report = asyncio.run(run(args))
    report["load_average_before"] = load
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"{report['ops']} operations of each kind, median of {report['rounds']} round(s); µs; noisy on a shared machine")
    print(f"{'client':14s} {'operation':11s} {'median':>8s} {'p99':>8s} {'client CPU':>11s} {'redis CPU':>10s}")
    for name, ops in report["clients"].items():
        for op, figures in ops.items():
            print(
                f"{name:14s} {op:11s} {figures['median_us']:8.0f} {figures['p99_us']:8.0f} "
                f"{figures['client_cpu_us']:11.0f} {figures['server_cpu_us']:10.0f}"
            )
    chosen = report["clients"].get("redis-py")
    if chosen:
        print(
            f"redis-py: client CPU per commit {chosen['commit']['client_cpu_us']:.0f} µs "
            f"(target <= {CLIENT_CPU_TARGET_US} µs, 1.5 x the hand-written link it replaced)"
        )
        if "commit+WAIT" in chosen:
            ratio = chosen["commit+WAIT"]["median_us"] / chosen["commit"]["median_us"]
            print(f"WAIT 1 on the commit: median latency x{ratio:.2f} (target <= 2)")
    if report["missing"]:
        print(f"not installed, not measured: {', '.join(report['missing'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
