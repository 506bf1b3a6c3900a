"""Capacity at game-night load: one ``vtt-bridge serve`` process holding many tables at once.

    .venv/bin/python bench/capacity_bench.py                  # 2,000 tables, 60 s of play
    .venv/bin/python bench/capacity_bench.py --tables 1000    # another size
    .venv/bin/python bench/capacity_bench.py --quick          # 20 tables, ~10 s (a test runs it)

What a host of many groups sees on a game night. One server process (SQLite,
started for real as ``vtt-bridge serve`` on 127.0.0.1, its default
configuration: two resolvers, 30 s questions, its rate limit), ``--tables``
tables of Exalted 2e (``exalted2e``: the example daiklave attack), each with
five websocket connections: the GM and four players. Each player owns two
tokens (an attacker and a defender). About once per 10 s (8-12 s apart, each
table starting at a random moment of the first 10 s) one player of the table
attacks the next player's defender; the rules then ask the defender (defence,
defence stunt) and the attacker (reroll), and every question is answered with
its default after the player "thinks" for 0.5-3 s. Every connection asks for
``batch`` messages, as the web table does.

Printed:

- attack latency p50/p99/max: from the request to its acknowledgement as the
  attacking player sees it, **minus the time the players spent thinking**
  (from each question's arrival to its answer leaving), so it is the time the
  players waited for the server; and the same figure per 10 s of the run
  (its p99 climbing from window to window means the server falls behind);
- how long a question took to reach the player (from the request, or from the
  previous answer, to the ``decision`` call's arrival): p50/p99;
- the server: CPU as a % of one core (the event loop alone and with its
  resolvers), RSS and Pss of the server and every process under it (its
  resolvers and odds process), the most processes seen under it at once
  (sampled every second) and the resolvers its configuration allows;
- the server's garbage collections during play (count, time and CPU time
  per generation, objects freed) and, at the end of play, how many objects
  its collector tracks (frozen ones included) and what a full collection of
  all of them costs (the event loop stops for each) and frees: the cyclic
  garbage a server that freezes its objects keeps until its next full one;
- the websocket messages the clients were sent per committed attack;
- failed attacks (a refused acknowledgement, with the error codes) and lost
  ones (no acknowledgement within ``--ack-timeout``, or a connection closed
  under it), refused or dropped connections;
- the load generator's own CPU (all its processes, as a % of one core) and
  the machine's load average before and after, so a reader can tell which
  side saturated: the clients run on the same two cores as the server.

The clients speak socket.io over aiohttp websockets (see docs/protocol.md:
``0`` open, ``40{auth}`` connect, ``42<id>[event, data]`` requests,
``43<id>[ack]`` acknowledgements, ``2``/``3`` pings, a ``decision`` is a call
from the server answered with ``43<id>[answer]``) and do not decode
broadcasts, only count them: python-socketio's client would cost more than the
server at 10,000 connections on two cores. They run in ``--procs`` processes
(each with its share of the tables, a table's five clients in one process).
Every loop is bounded by a count and a time limit; everything binds 127.0.0.1.
``CAPACITY_GC_DETAIL=1`` also prints each of the server's collections over
20 ms as it happens, the slowest 1% of attacks with when they were sent, and
the cyclic garbage the clients left behind; ``CAPACITY_GC_DETAIL=census``
what each collection walked (see ``time_collections``).

``--source DIR`` runs the server from another checkout (its ``vtt_bridge/``)
with the same clients, to measure a change against the code before it, one
run after the other. ``--db FILE`` keeps the seated store for the next run.
Results of past runs: bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.server_bench import listening, stop_server, tree  # noqa: E402

EXAMPLE = ROOT / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json"
PLAYERS = ("p1", "p2", "p3", "p4")
WINDOW = 10.0  # seconds per row of the latency trend
# Targets (issue 26): one process holds 2,000 tables at p99 <= 100 ms, and never runs more
# resolvers than its configuration allows (2 x --resolvers while slow hooks hold them up).
T_P99 = 100.0
RESOLVERS = 2  # serve's default --resolvers


# -- seating the tables (straight in the store, before the server starts) --------------


def seated_systems() -> tuple[dict[str, Any], dict[str, Any]]:
    """The example's attacker and defender ``system`` as the server stores them (schema defaults filled)."""
    from vtt_bridge.plugins import make_host

    example = json.loads(EXAMPLE.read_text())
    tokens = {t["id"]: t for t in example["tokens"]}
    host = make_host()
    return (
        host.load_system("exalted2e", tokens[example["attacker"]]["system"]),
        host.load_system("exalted2e", tokens[example["targets"][0]]["system"]),
    )


async def prepare(path: Path, tables: int) -> list[dict[str, str]]:
    """Create the tables, their keys and tokens in a SQLite store: per table, user → key (and ``id``)."""
    from vtt_bridge.engine.tokens import Token
    from vtt_bridge.server import create_table, issue_key
    from vtt_bridge.state import AuditDraft, SQLiteStore, TokenChange

    attacker, defender = seated_systems()
    store = SQLiteStore(path)
    await store.open()
    seats = []
    try:
        for n in range(tables):
            table, gm_key = await create_table(store, f"game night {n}")
            seat = {"id": table.id, "gm": gm_key}
            for user in PLAYERS:
                seat[user] = await issue_key(store, table.id, user)
            tokens = []
            for user in PLAYERS:
                tokens.append(Token(f"{user}-hero", f"{user}'s hero", "exalted2e", attacker, ownership={user: 3}))
                tokens.append(Token(f"{user}-guard", f"{user}'s guard", "exalted2e", defender, ownership={user: 3}))
            changes = {t.id: TokenChange(before=None, after=t) for t in tokens}
            await store.commit(table.id, AuditDraft(kind="token.create", user="gm", at=time.time(), changes=changes))
            seats.append(seat)
    finally:
        await store.close()
    return seats


# -- the server ---------------------------------------------------------------------------


def start_server(
    db: Path, extra: list[str], wait: float = 120, gc_log: Path | None = None, source: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """``vtt-bridge serve`` on a free loopback port, run from the checkout ``source``; returns the
    process and its URL."""
    # The server must run ``source``'s vtt_bridge: it says which it imported, and stops if not that.
    code = (
        "import os, sys, vtt_bridge; here = os.path.realpath(vtt_bridge.__file__);"
        f" here.startswith({str(Path(source).resolve()) + os.sep!r}) or sys.exit('vtt_bridge from ' + here);"
        " from vtt_bridge.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    if gc_log is not None:
        code = (
            f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); from gc_timing import time_collections;"
            f" del sys.path[0]; time_collections({str(gc_log)!r}); {code}"
        )
    argv = [sys.executable, "-c", code, "serve", "--db", str(db), "--host", "127.0.0.1", "--port", "0"]
    argv += ["--log-level", "warning", *extra]
    env = {**os.environ, "PYTHONPATH": str(source)}
    proc = subprocess.Popen(argv, cwd=source, env=env, stdout=subprocess.PIPE, text=True)
    return proc, listening(proc, wait)


def cpu_of(pid: int, *, children: bool = True) -> float:
    """CPU seconds of ``pid`` (and, with ``children``, of those it has reaped)."""
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
        return ticks / os.sysconf("SC_CLK_TCK")
    return 0.0


def memory_of(pid: int) -> tuple[float, float]:
    """(RSS, Pss) in MB of one process."""
    rss = pss = 0
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss / 1024, pss / 1024


def loop_lateness(url: str) -> dict[str, float] | None:
    """``loop_late_ms`` of the server's ``/healthz`` (None from a server without it)."""
    import urllib.request

    with contextlib.suppress(Exception), urllib.request.urlopen(url + "/healthz", timeout=10) as response:
        return json.loads(response.read()).get("loop_late_ms")
    return None


class Sampler:
    """The server's processes, CPU and memory, read once a second from /proc."""

    def __init__(self, server: int, load: list[int]) -> None:
        self.server = server
        self.load = load
        self.rows: list[dict[str, float]] = []
        self.most = 0
        self.pids: set[int] = set()

    def take(self) -> None:
        members = tree(self.server)
        self.pids.update(members[1:])
        self.most = max(self.most, len(members) - 1)
        cpu = cpu_of(self.server) + sum(cpu_of(p) for p in members[1:])
        rss = pss = 0.0
        for member in members:
            r, p = memory_of(member)
            rss, pss = rss + r, pss + p
        self.rows.append(
            {
                "at": time.monotonic(),
                "cpu": cpu,
                "loop": cpu_of(self.server, children=False),
                "load": sum(cpu_of(p) for p in self.load),
                "rss": rss,
                "pss": pss,
                "procs": len(members) - 1,
            }
        )


# -- the players (in the load processes) ------------------------------------------------------


class Player:
    """One websocket connection speaking socket.io: requests with acks, questions answered after thinking."""

    def __init__(self, table: Table, user: str) -> None:
        self.table = table
        self.user = user
        self.ws: Any = None
        self.reader: asyncio.Task[None] | None = None
        self.acks: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.broadcasts = 0
        self.received = 0
        self.thinking: set[asyncio.Task[None]] = set()

    async def connect(self, http: Any, url: str, key: str) -> None:
        self.ws = await http.ws_connect(url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket", autoping=True)
        opened = await asyncio.wait_for(self.ws.receive_str(), 60)
        if not opened.startswith("0"):
            raise RuntimeError(f"no engine.io open: {opened[:80]}")
        await self.ws.send_str("40" + json.dumps({"table": self.table.id, "key": key, "batch": True}))
        reply = await asyncio.wait_for(self.ws.receive_str(), 60)
        if not reply.startswith("40"):
            raise RuntimeError(f"refused: {reply[:200]}")
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                data = message.data
                if not isinstance(data, str):
                    continue
                self.received += 1
                if data.startswith("43"):
                    end = 2
                    while data[end].isdigit():
                        end += 1
                    future = self.acks.pop(int(data[2:end]), None)
                    if future is not None and not future.done():
                        future.set_result(json.loads(data[end:])[0])
                elif data == "2":
                    await self.ws.send_str("3")
                elif data.startswith("42") and data[2:3].isdigit():
                    end = 2
                    while data[end].isdigit():
                        end += 1
                    event, payload = json.loads(data[end:])[:2]
                    if event == "decision":
                        task = asyncio.create_task(self._answer(data[2:end], payload))
                        self.thinking.add(task)
                        task.add_done_callback(self.thinking.discard)
                else:
                    self.broadcasts += 1
        finally:
            self.table.dropped += 1 if not self.table.closing else 0
            for future in self.acks.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))
            self.acks.clear()

    async def _answer(self, call: str, decision: dict[str, Any]) -> None:
        """A player reads the question, thinks 0.5-3 s, and answers with the rules' default."""
        arrived = time.perf_counter()
        self.table.question_arrived(arrived)
        await asyncio.sleep(self.table.rng.uniform(*self.table.think))
        with contextlib.suppress(Exception):
            await self.ws.send_str(f"43{call}" + json.dumps([decision.get("default")]))
        self.table.answered(arrived, time.perf_counter())

    async def call(self, event: str, data: Any, timeout: float) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.acks[self.next_id] = future
        await self.ws.send_str(f"42{self.next_id}" + json.dumps([event, data]))
        return await asyncio.wait_for(future, timeout)

    async def close(self) -> None:
        for task in list(self.thinking):
            task.cancel()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 5)
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)


class Table:
    """A table's five connections and its attacks, one at a time, about every 10 s."""

    def __init__(self, seat: dict[str, str], seed: int, think: tuple[float, float]) -> None:
        self.id = seat["id"]
        self.seat = seat
        self.rng = random.Random(seed)
        self.think = think
        self.players = {user: Player(self, user) for user in ("gm", *PLAYERS)}
        self.turn = self.rng.randrange(len(PLAYERS))
        self.dropped = 0
        self.closing = False
        # The attack in flight: when the players' last wait began, and the waits so far.
        self.waited = 0.0
        self.mark = 0.0
        self.think_total = 0.0
        self.question_waits: list[float] = []

    def question_arrived(self, at: float) -> None:
        if self.mark:
            self.waited += at - self.mark
            self.question_waits.append((at - self.mark) * 1000)
            self.mark = 0.0

    def answered(self, arrived: float, at: float) -> None:
        self.think_total += at - arrived
        self.mark = at

    async def connect(self, http: Any, url: str) -> None:
        for user, player in self.players.items():
            await player.connect(http, url, self.seat[user])

    async def play(self, start: float, seconds: float, ack_timeout: float, out: dict[str, Any]) -> None:
        attack = json.loads(EXAMPLE.read_text())
        request = {"ruleset": "exalted2e", "declaration": attack["declaration"]}
        at = start + self.rng.uniform(0, 10)
        for _ in range(int(seconds / 8) + 2):  # bounded: at most one attack per 8 s
            delay = at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if time.monotonic() >= start + seconds:
                return
            attacker = PLAYERS[self.turn % len(PLAYERS)]
            defender = PLAYERS[(self.turn + 1) % len(PLAYERS)]
            self.turn += 1
            body = {**request, "attacker": f"{attacker}-hero", "targets": [f"{defender}-guard"]}
            self.think_total, self.waited = 0.0, 0.0
            sent = time.perf_counter()
            self.mark = sent
            try:
                ack = await self.players[attacker].call("attack", body, ack_timeout)
            except Exception as exc:  # noqa: BLE001 (no ack in time, or the connection closed: counted as lost)
                out["lost"] += 1
                out["lost_why"][type(exc).__name__] = out["lost_why"].get(type(exc).__name__, 0) + 1
                self.mark = 0.0
            else:
                done = time.perf_counter()
                if ack.get("ok") and self.mark != sent:
                    out["finals"].append((done - self.mark) * 1000)
                self.mark = 0.0
                if ack.get("ok"):
                    latency = (done - sent - self.think_total) * 1000
                    out["attacks"].append((sent - out["t0"], latency))
                else:
                    code = ack.get("error", {}).get("code", "?")
                    out["failed"][code] = out["failed"].get(code, 0) + 1
            out["questions"].extend(self.question_waits)
            out["legs"].append(list(self.question_waits))
            self.question_waits.clear()
            at += self.rng.uniform(8, 12)

    async def close(self) -> None:
        self.closing = True
        for player in self.players.values():
            await player.close()


async def load_main(
    seats: list[dict[str, str]], url: str, args: dict[str, Any], ready: Any, gates: Any, results: Any, index: int
) -> None:
    import aiohttp

    go, leave = gates
    think = (args["think_min"], args["think_max"])
    tables = [Table(seat, index * 1_000_003 + n, think) for n, seat in enumerate(seats)]
    out: dict[str, Any] = {
        "index": index,
        "attacks": [],
        "questions": [],
        "finals": [],
        "legs": [],
        "late": [],
        "failed": {},
        "lost": 0,
        "lost_why": {},
        "refused": 0,
        "refused_why": {},
        "dropped": 0,
        "broadcasts": 0,
        "received": 0,
        "connected": 0,
    }
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        gate = asyncio.Semaphore(args["connecting"])

        async def connect(table: Table) -> bool:
            async with gate:
                try:
                    await asyncio.wait_for(table.connect(http, url), 120)
                    return True
                except Exception as exc:  # noqa: BLE001 (counted and printed)
                    out["refused"] += 1
                    why = f"{type(exc).__name__}: {str(exc)[:60]}"
                    out["refused_why"][why] = out["refused_why"].get(why, 0) + 1
                    return False

        joined = await asyncio.gather(*(connect(t) for t in tables))
        playing = [t for t, ok in zip(tables, joined, strict=True) if ok]
        out["connected"] = sum(1 for t in playing for p in t.players.values() if p.reader is not None)
        ready.put(("ready", index, len(playing)))
        # Wait (bounded) for the parent's signal, so every process starts its clock together.
        loop = asyncio.get_running_loop()
        started = await loop.run_in_executor(None, go.wait, args["connect_limit"])
        if started:
            # These clients stand for browsers on thousands of machines: their collector's pauses
            # (a full one walks every connection here, ~0.6 s) are not the server's, so none runs
            # during play. Bounded: play lasts ``seconds``; the collector is back on after it.
            gc.freeze()
            gc.disable()
            start = time.monotonic()
            out["t0"] = time.perf_counter()
            beat = asyncio.create_task(heartbeat(out["late"], start + args["seconds"]))
            try:
                await asyncio.gather(
                    *(t.play(start, args["seconds"], args["ack_timeout"], out) for t in playing), return_exceptions=True
                )
            finally:
                beat.cancel()
                gc.enable()
                gc.unfreeze()
        # Every attack answered: the parent times a full collection of the server now (with
        # nothing in flight it would hold up), then lets the clients leave.
        ready.put(("played", index, 0))
        await loop.run_in_executor(None, leave.wait, args["ack_timeout"] + 60)
        out["dropped"] = sum(t.dropped for t in tables)
        out["broadcasts"] = sum(p.broadcasts for t in tables for p in t.players.values())
        out["received"] = sum(p.received for t in tables for p in t.players.values())
        for table in tables:
            await table.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu"] = usage.ru_utime + usage.ru_stime
    results.put(out)


async def heartbeat(late: list[float], until: float) -> None:
    """How late this load process's event loop runs (ms), every 50 ms of play: a question or an
    acknowledgement it reads late counts as the server's latency (bounded: play's length)."""
    loop = asyncio.get_running_loop()
    for _ in range(100_000):
        due = loop.time() + 0.05
        if due > until:
            return
        await asyncio.sleep(0.05)
        late.append((loop.time() - due) * 1000)


def load_process(seats, url, args, ready, gates, results, index) -> None:
    """One load process. Its clients run on uvloop when it is installed, as the server does:
    on asyncio's own loop they took about half a core more of the two the server needs."""
    raise_file_limit()
    main = load_main(seats, url, args, ready, gates, results, index)
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


def raise_file_limit() -> int:
    """Raise this process's open-file limit to its hard limit (inherited by what it starts)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


# -- the report -----------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def report(
    args: argparse.Namespace,
    outs: list[dict[str, Any]],
    sampler: Sampler,
    span: tuple[float, float],
    collections: list[list[float]],
) -> bool:
    attacks = [a for o in outs for a in o["attacks"]]
    latencies = [lat for _, lat in attacks]
    questions = [q for o in outs for q in o["questions"]]
    finals = [q for o in outs for q in o.get("finals", [])]
    legs = [leg for o in outs for leg in o.get("legs", [])]
    failed: dict[str, int] = {}
    lost_why: dict[str, int] = {}
    for o in outs:
        for code, n in o["failed"].items():
            failed[code] = failed.get(code, 0) + n
        for code, n in o["lost_why"].items():
            lost_why[code] = lost_why.get(code, 0) + n
    lost = sum(o["lost"] for o in outs)
    refused = sum(o["refused"] for o in outs)
    dropped = sum(o["dropped"] for o in outs)
    connected = sum(o["connected"] for o in outs)
    p99 = percentile(latencies, 99)
    print(f"\n{args.tables:,} tables x 5 connections ({connected:,} connected), exalted2e, one attack per table per ~10 s")
    print(f"  attacks committed: {len(attacks):,} in {args.seconds:.0f} s ({len(attacks) / args.seconds:.1f}/s)")
    print(
        f"  attack latency (request to ack, players' thinking taken out): p50 {percentile(latencies, 50):.1f} ms,"
        f" p99 {p99:.1f} ms (target <= {T_P99:.0f}), max {max(latencies, default=float('nan')):.1f} ms"
    )
    received, broadcasts = sum(o["received"] for o in outs), sum(o["broadcasts"] for o in outs)
    print(
        f"  websocket messages to the clients (pings included): {received:,}, {received / max(1, len(attacks)):.1f}"
        f" per committed attack ({broadcasts / max(1, len(attacks)):.1f} of them broadcasts)"
    )
    print(f"  question reaching its player: p50 {percentile(questions, 50):.1f} ms, p99 {percentile(questions, 99):.1f} ms")
    for n in range(max((len(leg) for leg in legs), default=0)):
        nth = [leg[n] for leg in legs if len(leg) > n]
        print(f"    question {n + 1} ({len(nth):,} asked): p50 {percentile(nth, 50):.1f} ms, p99 {percentile(nth, 99):.1f} ms")
    if finals:
        print(f"  last answer to the acknowledgement: p50 {percentile(finals, 50):.1f} ms, p99 {percentile(finals, 99):.1f} ms")
    trend = []
    for w in range(int(args.seconds // WINDOW) + 1):
        inside = [lat for at, lat in attacks if w * WINDOW <= at < (w + 1) * WINDOW]
        if inside:
            trend.append(f"{percentile(inside, 99):.0f}")
    print(f"  p99 per {WINDOW:.0f} s, ms: {' -> '.join(trend)}")
    if os.environ.get("CAPACITY_GC_DETAIL"):
        slow = sorted(attacks, key=lambda a: -a[1])[: max(1, len(attacks) // 100)]
        print("  slowest 1% (sent at s: ms):", " ".join(f"{at:.1f}:{lat:.0f}" for at, lat in sorted(slow)))
    rows = [r for r in sampler.rows if span[0] <= r["at"] <= span[1]]
    per = []
    for w in range(int(args.seconds // WINDOW) + 1):
        inside = [r for r in rows if w * WINDOW <= r["at"] - span[0] <= (w + 1) * WINDOW]
        if len(inside) >= 2:
            per.append(f"{(inside[-1]['cpu'] - inside[0]['cpu']) / (inside[-1]['at'] - inside[0]['at']) * 100:.0f}")
    print(f"  server CPU per {WINDOW:.0f} s, % of a core: {' -> '.join(per)}")
    for c in collections:
        if c[1] == "full":
            print(
                f"  at the end of play the server's collector tracked {c[5]:,} objects (frozen ones included);"
                f" a full collection of them took {c[2] * 1000:.0f} ms (CPU {c[3] * 1000:.0f} ms) and freed {c[4]:,}"
            )
    for generation in (0, 1, 2):
        pauses = [c[2] * 1000 for c in collections if c[1] == generation]
        cpu = [c[3] * 1000 for c in collections if c[1] == generation]
        freed = sum(c[4] for c in collections if c[1] == generation)
        if pauses:
            print(
                f"  garbage collections in the server's event loop during play, generation {generation}: {len(pauses)},"
                f" {sum(pauses):.0f} ms in all (CPU {sum(cpu):.0f} ms), longest {max(pauses):.0f} ms"
                f" (CPU {max(cpu):.0f} ms), {freed:,} objects freed"
            )
    print(
        f"  failed: {sum(failed.values())} {failed or ''}  lost: {lost} {lost_why or ''}"
        f"  refused connections: {refused}  dropped connections: {dropped}"
    )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        wall = last["at"] - first["at"]
        cpu = (last["cpu"] - first["cpu"]) / wall * 100
        loop_cpu = (last["loop"] - first["loop"]) / wall * 100
        load_cpu = (last["load"] - first["load"]) / wall * 100
        print(f"  server CPU: {cpu:.0f}% of a core (event loop {loop_cpu:.0f}%, resolvers {cpu - loop_cpu:.0f}%)")
        print(f"  load generator CPU: {load_cpu:.0f}% of a core ({len(outs)} processes)")
    end = sampler.rows[-1] if sampler.rows else {"rss": 0, "pss": 0, "procs": 0}
    peak_rss = max((r["rss"] for r in sampler.rows), default=0)
    peak_pss = max((r["pss"] for r in sampler.rows), default=0)
    print(
        f"  server memory, every process of it: RSS {end['rss']:.0f} MB (peak {peak_rss:.0f}),"
        f" Pss {end['pss']:.0f} MB (peak {peak_pss:.0f}); {end['pss'] / max(1, args.tables) * 1024:.0f} KB Pss per table"
    )
    allowed = 2 * args.resolvers + 1  # resolvers with their spares, and the odds process
    print(
        f"  processes under the server: {end['procs']} at the end, at most {sampler.most} at once,"
        f" {len(sampler.pids)} seen in all (target <= {allowed}: {2 * args.resolvers} resolvers with spares, 1 odds)"
    )
    return p99 <= T_P99 and sampler.most <= allowed and not failed and not lost


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60.0, help="of play, after every table has connected")
    parser.add_argument("--procs", type=int, default=0, help="load processes (default: one per 500 tables, 1-4)")
    parser.add_argument("--resolvers", type=int, default=RESOLVERS, help="serve --resolvers")
    parser.add_argument("--think", type=float, nargs=2, default=(0.5, 3.0), metavar=("MIN", "MAX"))
    parser.add_argument("--ack-timeout", type=float, default=120.0, help="seconds an attack's ack may take, thinking included")
    parser.add_argument("--connecting", type=int, default=25, help="tables connecting at once, per load process")
    parser.add_argument("--serve-arg", action="append", default=[], help="one more argument for serve (repeatable)")
    parser.add_argument("--db", type=Path, help="a store seated by an earlier run with the same --tables (reused, its tokens as that run"
                        " left them: compare two versions on fresh stores)")
    parser.add_argument(
        "--source", type=Path, default=ROOT, help="run the server from this checkout (its vtt_bridge/), to compare two versions"
    )
    parser.add_argument("--quick", action="store_true", help="20 tables, 10 s")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.seconds = 20, 10.0
    procs = args.procs or max(1, min(4, -(-args.tables // 500)))
    limit = raise_file_limit()
    need = args.tables * 5 + 200
    if limit < need:
        raise SystemExit(f"{need} open files are needed; the hard limit is {limit} (ulimit -Hn)")

    print(f"load average before: {loadavg()}  (2-core machine shared with others: figures are noisy)")
    if args.source != ROOT:
        print(f"the server runs from {args.source}")
    with tempfile.TemporaryDirectory(prefix="capacity-") as tmp:
        db = args.db or Path(tmp) / "capacity.sqlite"
        seats_file = Path(str(db) + ".seats.json")
        t = time.monotonic()
        if args.db and seats_file.exists() and len(json.loads(seats_file.read_text())) == args.tables:
            seats = json.loads(seats_file.read_text())
            # Its tokens carry the damage of the runs before: attacks then take other paths
            # (fewer steps once a defender is down), so compare runs on fresh stores only.
            print(f"reusing {len(seats):,} tables seated in {db} (tokens as earlier runs left them:"
                  " not comparable with a run on a fresh store)")
        else:
            seats = asyncio.run(prepare(db, args.tables))
            seats_file.write_text(json.dumps(seats))
            print(f"seated {len(seats):,} tables in {time.monotonic() - t:.1f} s")
        gc_log = Path(tmp) / "collections.jsonl"
        server, url = start_server(db, ["--resolvers", str(args.resolvers), *args.serve_arg], gc_log=gc_log, source=args.source)
        ctx = multiprocessing.get_context("spawn")
        ready, results, go, leave = ctx.Queue(), ctx.Queue(), ctx.Event(), ctx.Event()
        settings = {
            "think_min": args.think[0],
            "think_max": args.think[1],
            "seconds": args.seconds,
            "ack_timeout": args.ack_timeout,
            "connecting": args.connecting,
            "connect_limit": 600.0,
        }
        workers = [
            ctx.Process(target=load_process, args=(seats[i::procs], url, settings, ready, (go, leave), results, i), daemon=True)
            for i in range(procs)
        ]
        outs: list[dict[str, Any]] = []
        late = None
        try:
            for w in workers:
                w.start()
            sampler = Sampler(server.pid, [w.pid for w in workers if w.pid])
            t = time.monotonic()
            waiting = procs
            while waiting and time.monotonic() - t < settings["connect_limit"]:
                with contextlib.suppress(Exception):
                    ready.get(timeout=1)
                    waiting -= 1
                sampler.take()
            print(f"connected in {time.monotonic() - t:.1f} s; load average {loadavg()}")
            go.set()
            sampler.take()
            begin, begun = sampler.rows[-1]["at"], time.time()
            stop = begin + args.seconds
            for _ in range(int(args.seconds) + 5):
                if time.monotonic() >= stop:
                    break
                time.sleep(min(1.0, max(0.0, stop - time.monotonic())))
                sampler.take()
            end = sampler.rows[-1]["at"]
            late = loop_lateness(url)
            deadline = time.monotonic() + args.ack_timeout + 60
            played = 0
            while played < procs and time.monotonic() < deadline:
                with contextlib.suppress(Exception):
                    if ready.get(timeout=1)[0] == "played":
                        played += 1
                sampler.take()
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGUSR2)  # a full collection, timed (time_collections)
            time.sleep(1.0)
            leave.set()
            while len(outs) < procs and time.monotonic() < deadline:
                with contextlib.suppress(Exception):
                    outs.append(results.get(timeout=1))
                sampler.take()
            if len(outs) < procs:
                print(f"  {procs - len(outs)} load processes did not report")
        finally:
            for w in workers:
                w.join(timeout=10)
                if w.is_alive():
                    w.kill()
            if os.environ.get("CAPACITY_GC_DETAIL"):
                time.sleep(2)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(server.pid, signal.SIGUSR1)
                time.sleep(2)
            stop_server(server)
        collections = [json.loads(line) for line in gc_log.read_text().splitlines()] if gc_log.exists() else []
        fulls = [c for c in collections if c[1] < 0]
        collections = [c for c in collections if begun <= c[0] <= begun + args.seconds and c[1] >= 0]
        collections += [[c[0], "full", *c[2:], -c[1]] for c in fulls]
    ok = report(args, outs, sampler, (begin, end), collections)
    client_late = [x for o in outs for x in o.get("late", [])]
    if client_late:
        print(
            f"  the load processes' event loops ran late (a 50 ms heartbeat in each, during play):"
            f" p50 {percentile(client_late, 50):.1f} ms, p99 {percentile(client_late, 99):.1f} ms,"
            f" max {max(client_late):.1f} ms"
        )
    if late:
        print(
            f"  the server's event loop ran late (its 50 ms heartbeat over the last minute of play, /healthz):"
            f" p50 {late['p50']:.1f} ms, p99 {late['p99']:.1f} ms, max {late['max']:.1f} ms"
        )
    print(f"  load generator, whole run: {sum(o['cpu'] for o in outs):.1f} CPU s")
    print(f"load average after: {loadavg()}")
    print("all targets met" if ok else "some target missed (see above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
