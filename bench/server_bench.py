"""Benchmark the bridge server: round trips, throughput and memory, in one run.

    .venv/bin/python bench/server_bench.py            # the full run
    .venv/bin/python bench/server_bench.py --quick    # a short smoke run

The server runs as its own process (``vtt-bridge serve`` on 127.0.0.1, a
fresh SQLite file, the engine's test ruleset ``duel``), so the clients do not
share its event loop. The clients speak the socket.io protocol directly over
an aiohttp websocket (open, ``40{auth}`` connect, ``42<id>[event, data]``
requests, ``43<id>[ack]`` acknowledgements, pings) and do not decode the
broadcasts they receive: a full client library's own cost per message would
otherwise be measured instead of the server's. Measured:

1. the ``attack`` round trip (GM client, answers given, so no prompts; the
   SQLite commit included) against the bare ``echo`` round trip, on the same
   server and connection, interleaved: p50, p99 and the ratios;
2. committed attacks per second with 50 concurrent clients over 10 tables
   (5 per table), and their latency: once with every client receiving every
   broadcast (the default), once with clients subscribed only to
   ``attack.resolved`` and ``token.updated`` (``auth.events``); with the
   server's CPU time per attack (broadcasts included: the count waits until
   they have all arrived);
3. the server's resident memory once 100 tables of 50 tokens each are loaded.

Every loop is bounded by a count and a time limit. The machine's load average
is printed too: other processes on the same cores change every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vtt_bridge.engine.tokens import Token  # noqa: E402
from vtt_bridge.server import create_table  # noqa: E402
from vtt_bridge.state import AuditDraft, SQLiteStore, TokenChange  # noqa: E402

PAIRS = 25  # 50 tokens a table: a0..a24 attack b0..b24
RESULTS_ONLY = ["attack.resolved", "token.updated"]


class Client:
    """A minimal socket.io client: requests with acknowledgements, broadcasts counted."""

    def __init__(self) -> None:
        self.acks: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.broadcasts = 0
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.reader: asyncio.Task[None] | None = None

    async def connect(self, http: aiohttp.ClientSession, url: str, auth: dict[str, Any]) -> Client:
        self.ws = await http.ws_connect(url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket")
        opened = await self.ws.receive_str()
        assert opened.startswith("0"), opened
        await self.ws.send_str("40" + json.dumps(auth))
        reply = await self.ws.receive_str()
        if not reply.startswith("40"):
            raise RuntimeError(f"refused: {reply}")
        self.reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        async for message in self.ws:
            data = message.data
            if data.startswith("43"):
                end = 2
                while data[end].isdigit():
                    end += 1
                future = self.acks.pop(int(data[2:end]), None)
                if future is not None and not future.done():
                    future.set_result(json.loads(data[end:])[0])
            elif data == "2":
                await self.ws.send_str("3")
            else:
                self.broadcasts += 1

    async def call(self, event: str, data: Any) -> Any:
        assert self.ws is not None
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.acks[self.next_id] = future
        await self.ws.send_str(f"42{self.next_id}" + json.dumps([event, data]))
        return await asyncio.wait_for(future, 30)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


async def prepare(db: Path, tables: int) -> list[tuple[str, str]]:
    """Create the tables and tokens straight in the store; returns (table id, GM key)."""
    store = SQLiteStore(db)
    await store.open()
    seats = []
    for n in range(tables):
        table, key = await create_table(store, f"bench {n}")
        changes = {}
        for i in range(PAIRS):
            for side, owner in (("a", f"p{i}"), ("b", f"q{i}")):
                token = Token(f"{side}{i}", f"{side}{i}", "duel", {"hp": 10**9, "rerolls": 0}, ownership={owner: 3})
                changes[token.id] = TokenChange(before=None, after=token)
        await store.commit(table.id, AuditDraft(kind="token.create", user="gm", at=time.time(), changes=changes))
        seats.append((table.id, key))
    await store.close()
    return seats


def start_server(db: Path) -> tuple[subprocess.Popen, str]:
    code = "import sys; from vtt_bridge.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "--plugin", "tests.server.duel_plugin", "serve", "--port", "0"]
    argv += ["--db", str(db), "--log-level", "warning", "--rate-limit", "0"]  # one client may go flat out
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if match:
            return proc, match.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("the server did not start")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def attack(i: int) -> dict[str, Any]:
    k = i % PAIRS
    return {"ruleset": "duel", "attacker": f"a{k}", "targets": [f"b{k}"], "answers": {"defense": "none"}}


def auth(seat: tuple[str, str], events: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"table": seat[0], "key": seat[1]}
    if events is not None:
        out["events"] = events
    return out


async def cpu_per_call(http, url: str, pid: int, seat: tuple[str, str], event: str, count: int) -> float:
    """The server's CPU milliseconds per request, for one client alone (broadcasts to it included)."""
    client = await Client().connect(http, url, auth(seat))
    try:
        cpu0 = cpu_seconds(pid)
        for i in range(count):
            await client.call(event, attack(i) if event == "attack" else {"n": i})
        seen = -1
        while client.broadcasts != seen:
            seen = client.broadcasts
            await asyncio.sleep(0.3)
        return (cpu_seconds(pid) - cpu0) / count * 1000
    finally:
        await client.close()


async def round_trips(http, url: str, seat: tuple[str, str], count: int, limit: float) -> dict[str, list[float]]:
    client = await Client().connect(http, url, auth(seat))
    times: dict[str, list[float]] = {"echo": [], "attack": []}
    try:
        for i in range(min(300, count)):  # warm up both paths
            await client.call("echo", {"n": i})
            await client.call("attack", attack(i))
        deadline = time.monotonic() + limit
        for i in range(count):
            if time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            ack = await client.call("echo", {"n": i})
            t1 = time.perf_counter()
            assert ack["ok"], ack
            ack = await client.call("attack", attack(i))
            t2 = time.perf_counter()
            assert ack["ok"], ack
            times["echo"].append((t1 - t0) * 1000)
            times["attack"].append((t2 - t1) * 1000)
    finally:
        await client.close()
    return times


async def throughput(http, url: str, pid: int, seats, clients: int, seconds: float, per_client: int, events):
    connected = [await Client().connect(http, url, auth(seats[n % len(seats)], events)) for n in range(clients)]
    latencies: list[float] = []
    failures = 0
    go = asyncio.Event()

    async def run(client: Client, n: int) -> None:
        nonlocal failures
        await go.wait()
        deadline = time.monotonic() + seconds
        for i in range(per_client):
            if time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            ack = await client.call("attack", attack(n * 7 + i))
            latencies.append((time.perf_counter() - t0) * 1000)
            if not ack["ok"]:
                failures += 1

    tasks = [asyncio.create_task(run(c, n)) for n, c in enumerate(connected)]
    await asyncio.sleep(0.2)
    cpu0 = cpu_seconds(pid)
    t0 = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - t0
    # Count the server's CPU until the last broadcast has arrived.
    seen = -1
    while sum(c.broadcasts for c in connected) != seen:
        seen = sum(c.broadcasts for c in connected)
        await asyncio.sleep(0.3)
    cpu = cpu_seconds(pid) - cpu0 - 0.0
    for client in connected:
        await client.close()
    committed = len(latencies) - failures
    return {
        "committed": committed,
        "failed": failures,
        "elapsed": elapsed,
        "rate": committed / elapsed,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "cpu_ms": cpu / max(1, committed) * 1000,
        "broadcasts": seen / max(1, committed),
    }


async def load_tables(http, url: str, seats: list[tuple[str, str]]) -> int:
    """Connect to every table once (the server loads it) and read its tokens."""
    tokens = 0
    for seat in seats:
        client = await Client().connect(http, url, auth(seat))
        tokens += len((await client.call("token.list", {}))["tokens"])
        await client.close()
    return tokens


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def main(args) -> int:
    print(f"load average before: {load_average()} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        seats = await prepare(db, args.memory_tables)
        proc, url = start_server(db)
        try:
            async with aiohttp.ClientSession() as http:
                print(f"server {url} (pid {proc.pid}); {args.memory_tables} tables of {2 * PAIRS} tokens in SQLite")
                rt = await round_trips(http, url, seats[0], args.round_trips, args.seconds * 4)
                echo, atk = rt["echo"], rt["attack"]
                e50, e99 = percentile(echo, 50), percentile(echo, 99)
                a50, a99 = percentile(atk, 50), percentile(atk, 99)
                print(f"\n1. round trip, one client, {len(atk)} of each, interleaved")
                print(f"   echo    p50 {e50:6.3f} ms   p99 {e99:6.3f} ms")
                print(f"   attack  p50 {a50:6.3f} ms   p99 {a99:6.3f} ms")
                print(
                    f"   ratio   p50 {a50 / e50:6.2f}      p99 {a99 / e99:6.2f}"
                    f"      (targets: p50 ratio <= 2, attack p99 < 5 ms)"
                )
                n = min(1000, args.round_trips)
                echo_cpu = await cpu_per_call(http, url, proc.pid, seats[1], "echo", n)
                attack_cpu = await cpu_per_call(http, url, proc.pid, seats[1], "attack", n)
                print(
                    f"   server CPU per request: echo {echo_cpu:.3f} ms, attack {attack_cpu:.3f} ms"
                    " (the attack's 9 broadcasts to its own client included)"
                )

                runs = f"{args.clients} clients over {args.tables} tables, up to {args.seconds:g} s each run"
                print(f"\n2. throughput: {runs}")
                for label, events in (("every broadcast", None), ("results only", RESULTS_ONLY)):
                    r = await throughput(
                        http, url, proc.pid, seats[: args.tables], args.clients, args.seconds, args.per_client, events
                    )
                    print(
                        f"   {label:16s} {r['rate']:7,.0f} attacks/s"
                        f"  ({r['committed']} committed, {r['failed']} failed)"
                        f"  p50 {r['p50']:6.2f} ms  p99 {r['p99']:6.2f} ms"
                        f"  server CPU {r['cpu_ms']:.2f} ms/attack  {r['broadcasts']:.0f} messages out/attack"
                    )
                print("   (targets: >= 1,500 attacks/s, p99 < 50 ms)")

                tokens = await load_tables(http, url, seats)
                print(f"\n3. memory with {len(seats)} tables loaded ({tokens} tokens)")
                print(f"   server resident memory {rss_mb(proc.pid):.1f} MB (target < 200 MB)")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"\nload average after: {load_average()}")
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=2000, help="echo/attack pairs measured (default 2000)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--memory-tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0, help="time limit of each throughput run")
    parser.add_argument("--per-client", type=int, default=400, help="attacks per client per run, at most")
    parser.add_argument("--quick", action="store_true", help="a short run: 300 round trips, 1 s of load")
    args = parser.parse_args(argv)
    if args.quick:
        args.round_trips, args.seconds, args.per_client = 300, 1.0, 40
    return args


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(parse())))
