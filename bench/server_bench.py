"""Benchmark the bridge server: round trips, throughput and memory, in one run.

    .venv/bin/python bench/server_bench.py            # defaults as the issue asks
    .venv/bin/python bench/server_bench.py --quick    # a short smoke run

The server runs as its own process (``vtt-bridge serve`` on 127.0.0.1, a
fresh SQLite file, the test ruleset ``duel``), so the clients measured here
do not share its core. Measured:

1. the ``attack`` round trip (GM client, answers given, so no prompts; the
   SQLite commit included) against the bare ``echo`` round trip on the same
   server and connection, interleaved — p50, p99 and the ratios;
2. committed attacks per second with 50 concurrent clients over 10 tables,
   with their latency p50/p99;
3. the server's resident memory once 100 tables of 50 tokens each are loaded.

Every loop is bounded by a count and a time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import socketio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vtt_bridge.engine.tokens import Token  # noqa: E402
from vtt_bridge.server import create_table  # noqa: E402
from vtt_bridge.state import AuditDraft, SQLiteStore, TokenChange  # noqa: E402

PAIRS = 25  # 50 tokens a table: a0..a24 attack b0..b24


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


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
    argv += ["--db", str(db), "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
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


async def connect(url: str, table: str, key: str) -> socketio.AsyncClient:
    client = socketio.AsyncClient(reconnection=False)
    await client.connect(url, auth={"table": table, "key": key}, transports=["websocket"], wait_timeout=10)
    return client


def attack(i: int) -> dict:
    k = i % PAIRS
    return {"ruleset": "duel", "attacker": f"a{k}", "targets": [f"b{k}"], "answers": {"defense": "none"}}


async def round_trips(url: str, seat: tuple[str, str], count: int, limit: float) -> dict[str, list[float]]:
    client = await connect(url, *seat)
    times: dict[str, list[float]] = {"echo": [], "attack": []}
    try:
        for i in range(min(200, count)):  # warm up both paths
            await client.call("echo", {"n": i}, timeout=10)
            await client.call("attack", attack(i), timeout=10)
        deadline = time.monotonic() + limit
        for i in range(count):
            if time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            ack = await client.call("echo", {"n": i}, timeout=10)
            t1 = time.perf_counter()
            assert ack["ok"], ack
            ack = await client.call("attack", attack(i), timeout=10)
            t2 = time.perf_counter()
            assert ack["ok"], ack
            times["echo"].append((t1 - t0) * 1000)
            times["attack"].append((t2 - t1) * 1000)
    finally:
        await client.disconnect()
    return times


async def throughput(url: str, seats: list[tuple[str, str]], clients: int, seconds: float, per_client: int):
    connected = [await connect(url, *seats[n % len(seats)]) for n in range(clients)]
    latencies: list[float] = []
    failures = 0
    start = asyncio.Event()

    async def run(client: socketio.AsyncClient, n: int) -> None:
        nonlocal failures
        await start.wait()
        deadline = time.monotonic() + seconds
        for i in range(per_client):
            if time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            ack = await client.call("attack", attack(n * 7 + i), timeout=30)
            latencies.append((time.perf_counter() - t0) * 1000)
            if not ack["ok"]:
                failures += 1

    tasks = [asyncio.create_task(run(c, n)) for n, c in enumerate(connected)]
    await asyncio.sleep(0.2)
    t0 = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - t0
    for client in connected:
        await client.disconnect()
    return latencies, failures, elapsed


async def load_tables(url: str, seats: list[tuple[str, str]]) -> int:
    """Connect to every table once (the server loads it) and read its tokens."""
    tokens = 0
    for seat in seats:
        client = await connect(url, *seat)
        ack = await client.call("token.list", timeout=10)
        tokens += len(ack["tokens"])
        await client.disconnect()
    return tokens


async def main(args) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        seats = await prepare(db, args.memory_tables)
        proc, url = start_server(db)
        try:
            print(f"server {url} (pid {proc.pid}), {args.memory_tables} tables of {2 * PAIRS} tokens in SQLite")
            rt = await round_trips(url, seats[0], args.round_trips, args.seconds * 4)
            echo, atk = rt["echo"], rt["attack"]
            e50, e99, a50, a99 = (percentile(echo, 50), percentile(echo, 99), percentile(atk, 50), percentile(atk, 99))
            print(f"\n1. round trip, one client, {len(atk)} of each, interleaved")
            print(f"   echo    p50 {e50:6.3f} ms   p99 {e99:6.3f} ms")
            print(f"   attack  p50 {a50:6.3f} ms   p99 {a99:6.3f} ms")
            print(f"   attack/echo p50 ratio {a50 / e50:.2f} (target <= 2)   attack p99 {a99:.2f} ms (target < 5)")

            cpu0 = cpu_seconds(proc.pid)
            lat, failed, elapsed = await throughput(url, seats[: args.tables], args.clients, args.seconds, args.per_client)
            cpu = cpu_seconds(proc.pid) - cpu0
            rate = (len(lat) - failed) / elapsed
            print(f"\n2. throughput, {args.clients} clients over {args.tables} tables, {elapsed:.2f} s")
            print(f"   {len(lat) - failed} attacks committed, {failed} failed: {rate:,.0f} attacks/s (target >= 1,500)")
            print(f"   latency p50 {percentile(lat, 50):.2f} ms   p99 {percentile(lat, 99):.2f} ms (target < 50)")
            print(f"   server CPU {cpu:.2f} s for {elapsed:.2f} s wall ({cpu / elapsed:.0%} of a core)")

            tokens = await load_tables(url, seats)
            print(f"\n3. memory with {len(seats)} tables loaded ({tokens} tokens)")
            print(f"   server resident memory {rss_mb(proc.pid):.1f} MB (target < 200)")
            print(f"   (mean echo {statistics.fmean(echo):.3f} ms over the run)")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=2000, help="echo/attack pairs measured (default 2000)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--memory-tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0, help="time limit of the throughput run")
    parser.add_argument("--per-client", type=int, default=400, help="attacks per client at most")
    parser.add_argument("--quick", action="store_true", help="a short run: 300 round trips, 1 s of load")
    args = parser.parse_args(argv)
    if args.quick:
        args.round_trips, args.seconds, args.per_client = 300, 1.0, 50
    return args


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(parse())))
