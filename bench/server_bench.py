"""Benchmark the bridge server: round trips, throughput, 1 vs 2 server processes, memory.

    .venv/bin/python bench/server_bench.py            # the full run
    .venv/bin/python bench/server_bench.py --quick    # a short smoke run (a test runs it)

The server runs as its own processes (``vtt-bridge serve`` on 127.0.0.1 with
its resolver processes; a fresh SQLite file, or a fresh ``redis-server`` on
loopback for the multi-process runs), so the clients do not share its event
loop. The clients speak the socket.io protocol directly over an aiohttp
websocket (open, ``40{auth}`` connect, ``42<id>[event, data]`` requests,
``43<id>[ack]`` acknowledgements, pings; a ``decision`` is answered with its
default) and do not decode the broadcasts they receive: a full client
library's own cost per message would otherwise be measured instead of the
server's. Measured:

1. the ``attack`` round trip (``duel``, GM client, answers given, so no
   prompts; the SQLite commit included) against the bare ``echo`` round trip,
   on the same server and connection, interleaved: p50, p99 and the ratio;
   and the server's CPU per request; and their floor, what an attack must
   add to an echo however lean the rest: a bare hop to a resolver process
   and back and a bare SQLite commit, each measured alone on the server's
   event loop (:func:`floor_main`); and the floor with the attack's own
   resolution in it: duel jobs sent one at a time to a real resolver
   process as the server sends them, and the same jobs resolved back to back
   in one process (what waking a resolver for each job costs);
2. committed attacks per second with 50 concurrent clients over 10 tables
   (5 per table) for the light ``duel`` ruleset and the real ``exalted2e``
   and ``warmachine_mk3`` (their example attacks, the Excellency and
   Warmachine packs loaded): every client receiving every broadcast, one
   message each (a client that does not ask for batches); every broadcast in
   ``batch`` messages (``auth.batch``); and only results (``auth.events``),
   batched. Latency p50/p99, messages received per attack, and the server's
   CPU per committed attack — every process of the server counted (its
   resolvers too; the event loop's share and the resolvers' are shown),
   broadcasts included (the count waits until they have all arrived), after
   one warm-up request per client (a resolver is sent a table's tokens once).
   Each client attacks with pairs of tokens of its own at its table; a
   Warmachine model its attacks wreck is put back by the client (as its
   table's GM, ``token.update``) before it attacks that model again, so every
   attack is one the rules resolve (how many were put back is printed; their
   updates' CPU is in the figure);
4. the same load over Redis with ``--workers 1`` and ``--workers 2``; and, side
   by side with each duel run (alternated ``--rounds`` times), the same duel
   load on one process over SQLite: the CPU per committed attack over Redis
   (every server process and redis-server) against one process's over SQLite
   (``--only redis`` runs just this section, ``--workers 2`` only that count);
3. the server's resident memory once 100 tables of 50 tokens each are loaded.

Every figure is printed beside its target. Every loop is bounded by a count
and a time limit. The machine's load average is printed before and after:
other processes on the same cores change every wall-clock figure (the CPU
per attack much less).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vtt_bridge.engine.tokens import Token  # noqa: E402
from vtt_bridge.server import create_table  # noqa: E402
from vtt_bridge.state import AuditDraft, RedisStore, SQLiteStore, Store, TokenChange  # noqa: E402

PAIRS = 25  # 50 tokens a table: a0..a24 attack b0..b24
RESULTS_ONLY = ["attack.resolved", "token.updated"]
# The throughput runs: (label, auth.events, auth.batch). "one by one" is what a client
# that does not ask for batches receives; the targets apply to the batched run.
RUNS = (
    ("every broadcast, one by one", None, False),
    ("every broadcast, batched", None, True),
    ("results only, batched", RESULTS_ONLY, True),
)
EXAMPLES = {
    "exalted2e": ROOT / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json",
    "warmachine_mk3": ROOT / "plugins/vtt_warmachine_mk3/examples/melee_jack_punch.json",
}

# Targets (issues 12 and 14).
T_CPU = 0.6  # ms of server CPU per committed attack, duel, every broadcast
T_RATE_1 = 1200  # attacks/s, one process, duel, every broadcast
T_RATE_2 = 1500  # attacks/s, two workers, every broadcast
T_P99 = 50.0  # ms, two workers
T_RATIO = 2.0  # attack p50 / echo p50
T_MEMORY = 200.0  # MB with 100 tables loaded
T_REDIS_RATIO = 1.5  # CPU per duel attack over Redis (servers + redis-server) / one process over SQLite (issue 27)


_HOSTS: list[Any] = []


def _host() -> Any:
    if not _HOSTS:
        from vtt_bridge.plugins import make_host

        _HOSTS.append(make_host())
    return _HOSTS[0]


class Ruleset:
    """How to seat a table for one ruleset and what each attack sends."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "duel":
            self.attacker_system: dict[str, Any] = {"hp": 10**9, "rerolls": 0}
            self.target_system: dict[str, Any] = {"hp": 10**9, "rerolls": 0}
            self.request: dict[str, Any] = {"ruleset": "duel", "declaration": {}, "answers": {"defense": "none"}}
            return
        example = json.loads(EXAMPLES[name].read_text())
        tokens = {t["id"]: t for t in example["tokens"]}
        self.attacker_system = tokens[example["attacker"]]["system"]
        self.target_system = tokens[example["targets"][0]]["system"]
        self.request = {k: v for k, v in example.items() if k in ("ruleset", "declaration", "answers")}
        # Answers given for every question the example asks (the rules' defaults), as the
        # duel's are: the figures are the server's, not a prompt's round trips.
        host = _host()
        loaded = {t["id"]: Token.from_dict({"ruleset": name, **t, "system": host.load_system(name, t["system"])}) for t in tokens.values()}
        res = host.start(
            name,
            loaded,
            attacker=example["attacker"],
            targets=example["targets"],
            declaration=example["declaration"],
            seed=1,
            answers=example.get("answers"),
        )
        record = res.run()
        given = dict(example.get("answers") or {})
        for decision in record["decisions"]:
            given.setdefault(decision["key"], decision["answer"]["option"])
        self.request["answers"] = given

    @functools.cached_property
    def seated(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The attacker's and the target's ``system`` as a server stores them: loaded by the ruleset's schema (defaults filled)."""
        if self.name == "duel":
            return self.attacker_system, self.target_system
        return _host().load_system(self.name, self.attacker_system), _host().load_system(self.name, self.target_system)

    def tokens(self) -> list[Token]:
        """The table's tokens, as seated (:attr:`seated`)."""
        attacker, target = self.seated
        out = []
        for i in range(PAIRS):
            out.append(Token(f"a{i}", f"a{i}", self.name, attacker, ownership={f"p{i}": 3}))
            out.append(Token(f"b{i}", f"b{i}", self.name, target, ownership={f"q{i}": 3}))
        return out

    def attack(self, i: int) -> dict[str, Any]:
        k = i % PAIRS
        return {**self.request, "attacker": f"a{k}", "targets": [f"b{k}"]}

    def wrecked(self, attack: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The tokens ``attack`` (its wire form) took off the table, each with its ``system`` as seated.

        A duel token never leaves (its hp is 10**9); a Warmachine model does once
        its boxes are all marked, after a handful of hits, and attacking it then is
        an ``invalid_request``. The bench puts such a model back as the GM would,
        so every attack of a run is one the rules resolve.
        """
        if self.name == "duel":
            return {}
        out = {}
        for token_id, change in (attack.get("changes") or {}).items():
            after = change.get("after") or {}
            if after.get("destroyed") or after.get("removed"):
                out[token_id] = self.seated[0 if token_id.startswith("a") else 1]
        return out


class Client:
    """A minimal socket.io client: requests with acknowledgements, broadcasts counted, decisions defaulted."""

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
            elif data.startswith("42") and data[2:3].isdigit():
                # A server call: a decision. Answer with the rules' default.
                end = 2
                while data[end].isdigit():
                    end += 1
                event, payload = json.loads(data[end:])[:2]
                await self.ws.send_str(f"43{data[2:end]}" + json.dumps([payload.get("default")]))
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


async def prepare(store: Store, tables: int, rulesets: list[Ruleset]) -> dict[str, list[tuple[str, str]]]:
    """Create the tables and tokens straight in the store: per ruleset, (table id, GM key)."""
    await store.open()
    seats: dict[str, list[tuple[str, str]]] = {}
    for ruleset in rulesets:
        for n in range(tables):
            table, key = await create_table(store, f"bench {ruleset.name} {n}")
            changes = {t.id: TokenChange(before=None, after=t) for t in ruleset.tokens()}
            await store.commit(table.id, AuditDraft(kind="token.create", user="gm", at=time.time(), changes=changes))
            seats.setdefault(ruleset.name, []).append((table.id, key))
    await store.close()
    return seats


PROFILE: list[str] = []  # --profile FILE: the server's event-loop process runs under cProfile
SAMPLE: list[str] = []  # --sample FILE: its stacks sampled every millisecond of its CPU time


def sample_cpu(path: str, interval: float = 0.001) -> None:
    """Sample this process's main thread every ``interval`` seconds of its CPU time (``ITIMER_PROF``).

    Unlike cProfile, the sampled program runs at its own speed, and unlike a
    wall-clock sampler, time spent waiting for a core (the machine is shared)
    is not counted. At exit the stacks go to ``path``, one collapsed stack per
    line with its count (flamegraph.pl's input).
    """
    import atexit
    import collections
    import gc
    import signal

    counts: collections.Counter[str] = collections.Counter()

    def take(signum: int, frame: Any) -> None:
        names = []
        while frame is not None:
            code = frame.f_code
            names.append(f"{code.co_qualname} ({Path(code.co_filename).name}:{frame.f_lineno})")
            frame = frame.f_back
        counts[";".join(reversed(names))] += 1

    # The cyclic garbage collector runs inside whatever allocated last: its time is
    # counted apart, as a stack of its own ("gc generation N"), in samples' units.
    started = [0.0]

    def collecting(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.process_time()
        else:
            counts[f"gc generation {info['generation']}"] += round((time.process_time() - started[0]) / interval)

    gc.callbacks.append(collecting)

    def dump() -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        Path(path).write_text("".join(f"{stack} {n}\n" for stack, n in counts.items()))

    os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGPROF, signal.SIG_IGN))
    signal.signal(signal.SIGPROF, take)
    signal.setitimer(signal.ITIMER_PROF, interval, interval)
    atexit.register(dump)


def start_server(
    *args: str, wrap: Sequence[str] = (), env: Mapping[str, str] | None = None, wait: float = 120
) -> tuple[subprocess.Popen, str]:
    """A server of the duel plugin on a free port, ``args`` added to ``serve``; ``wrap``: a command
    it runs under (``valgrind ...``), ``env``: variables added, ``wait``: seconds it may take to listen."""
    code = "import sys; from vtt_bridge.cli import main; sys.exit(main(sys.argv[1:]))"
    if PROFILE:
        # The stats of the server process (not its resolvers: a forked child stops profiling).
        code = (
            "import cProfile, sys; from vtt_bridge.cli import main;"
            " import time; p = cProfile.Profile(time.process_time); p.enable();"
            " code = main(sys.argv[1:]); p.disable(); p.dump_stats(" + repr(PROFILE[0]) + "); sys.exit(code)"
        )
    if SAMPLE:
        code = f"from bench.server_bench import sample_cpu; sample_cpu({SAMPLE[0]!r}); {code}"
    argv = [*wrap, sys.executable, "-c", code, "--plugin", "tests.server.duel_plugin", "serve", "--port", "0", *args]
    argv += ["--log-level", "warning", "--rate-limit", "0"]  # one client may go flat out
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.Popen(argv, cwd=ROOT, env=environ, stdout=subprocess.PIPE, text=True)
    return proc, listening(proc, wait)


def listening(proc: subprocess.Popen, wait: float) -> str:
    """The URL a starting ``serve`` prints within ``wait`` seconds (it is killed if it prints none);
    what it prints after that is read and dropped, so a full pipe never blocks it."""
    assert proc.stdout is not None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if match:
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return match.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("the server did not start")


def stop_server(proc: subprocess.Popen, grace: float = 30) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    break
            if time.monotonic() > deadline:
                raise SystemExit("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def tree(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    out, todo = [], [pid]
    for _ in range(10_000):  # bounded: /proc can change under us
        if not todo:
            break
        current = todo.pop(0)
        out.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in (task / "children").read_text().split())
    return out


def cpu_seconds(pid: int, *, alone: bool = False, system: bool = False) -> float:
    """CPU time of the server: the process, every process under it, and those already reaped.

    ``alone``: the process ``pid`` only (with one server process: its event loop, without the resolvers);
    ``system``: only the time spent in the kernel (sockets, the database file).
    """
    total = 0
    for n, member in enumerate(tree(pid)):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (0 if system else int(fields[11])) + int(fields[12])
            if alone:
                break
            if n == 0:
                total += int(fields[13]) + int(fields[14])
    return total / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int, *, alone: bool = False) -> float:
    """The server's memory: the proportional set size (Pss) of every process of it.

    Resolvers are forked and share most pages with the server; Pss counts a
    shared page once in all, where adding up each process's RSS would count it
    in every process. ``alone``: the process ``pid`` only.
    """
    total = 0
    for member in tree(pid)[:1] if alone else tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
    return total / 1024


def auth(seat: tuple[str, str], events: list[str] | None = None, batch: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"table": seat[0], "key": seat[1]}
    if events is not None:
        out["events"] = events
    if batch:
        out["batch"] = True
    return out


async def settle(clients: list[Client]) -> int:
    """Wait until no more broadcasts arrive; returns how many arrived in all."""
    seen = -1
    for _ in range(100):
        now = sum(c.broadcasts for c in clients)
        if now == seen:
            break
        seen = now
        await asyncio.sleep(0.3)
    return seen


async def cpu_per_call(http, url: str, pid: int, seat, ruleset: Ruleset, event: str, count: int) -> float:
    """The server's CPU milliseconds per request, for one client alone (broadcasts to it included)."""
    client = await Client().connect(http, url, auth(seat))
    try:
        await settle([client])
        cpu0 = cpu_seconds(pid)
        for i in range(count):
            await client.call(event, ruleset.attack(i) if event == "attack" else {"n": i})
        await settle([client])
        return (cpu_seconds(pid) - cpu0) / count * 1000
    finally:
        await client.close()


async def round_trips(http, url: str, seat, ruleset: Ruleset, count: int, limit: float) -> dict[str, list[float]]:
    client = await Client().connect(http, url, auth(seat))
    times: dict[str, list[float]] = {"echo": [], "attack": []}
    try:
        for i in range(min(200, count)):  # warm up both paths
            await client.call("echo", {"n": i})
            await client.call("attack", ruleset.attack(i))
        deadline = time.monotonic() + limit
        for i in range(count):
            if time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            ack = await client.call("echo", {"n": i})
            t1 = time.perf_counter()
            assert ack["ok"], ack
            ack = await client.call("attack", ruleset.attack(i))
            t2 = time.perf_counter()
            assert ack["ok"], ack
            times["echo"].append((t1 - t0) * 1000)
            times["attack"].append((t2 - t1) * 1000)
    finally:
        await client.close()
    return times


async def throughput(
    http, url: str, pid: int, seats, ruleset: Ruleset, args, events, batch=False, event="attack"
) -> dict[str, Any]:
    """``event`` requests (attacks, or bare echoes) from ``args.clients`` clients at once, each waiting for its ack."""
    clients = args.clients
    connected = [await Client().connect(http, url, auth(seats[n % len(seats)], events, batch)) for n in range(clients)]
    latencies: list[float] = []
    failures: dict[str, int] = {}
    restored = 0
    go = asyncio.Event()
    # Each client attacks with pairs of its own at its table, as a player moves their own
    # models: no two clients attack the same model, so a model one wrecked is back (see
    # ``restore``) before anyone attacks it again.
    per = max(1, PAIRS // -(-clients // len(seats)))

    def request(n: int, i: int) -> dict[str, Any]:
        return ruleset.attack((n // len(seats)) * per + (n * 7 + i) % per)

    async def restore(client: Client, wrecked: dict[str, dict[str, Any]]) -> None:
        """Put wrecked models back as seated (each client is its table's GM), retrying while the
        model is still in an attack being resolved (``conflict``)."""
        nonlocal restored
        for token_id, system in wrecked.items():
            for _ in range(50):
                reply = await client.call("token.update", {"id": token_id, "system": system})
                if reply["ok"]:
                    restored += 1
                    break
                if reply["error"]["code"] != "conflict":
                    raise RuntimeError(f"could not put {token_id} back: {reply['error']}")
                await asyncio.sleep(0.005)

    async def run(client: Client, n: int) -> None:
        await go.wait()
        deadline = time.monotonic() + args.seconds
        for i in range(args.per_client):
            if time.monotonic() > deadline:
                break
            t0 = time.perf_counter()
            ack = await client.call(event, request(n, i) if event == "attack" else {"n": i})
            if ack["ok"]:
                latencies.append((time.perf_counter() - t0) * 1000)
                if event == "attack":
                    wrecked = ruleset.wrecked(ack["attack"])
                    if wrecked:
                        await restore(client, wrecked)
            else:
                code = ack["error"]["code"]
                failures[code] = failures.get(code, 0) + 1

    # Warm up: one request per client first, so each resolver holds the tables' tokens
    # (sent once per resolver and table) and the figures are the steady state's.
    warm = await asyncio.gather(
        *(c.call(event, request(n, 400) if event == "attack" else {}) for n, c in enumerate(connected))
    )
    assert all(ack["ok"] for ack in warm), [ack for ack in warm if not ack["ok"]][:1]
    await settle(connected)
    tasks = [asyncio.create_task(run(c, n)) for n, c in enumerate(connected)]
    await asyncio.sleep(0.2)
    base = sum(c.broadcasts for c in connected)
    cpu0, loop0, sys0 = cpu_seconds(pid), cpu_seconds(pid, alone=True), cpu_seconds(pid, alone=True, system=True)
    t0 = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - t0
    seen = await settle(connected)  # count the server's CPU until the last broadcast has arrived
    cpu, loop = cpu_seconds(pid) - cpu0, cpu_seconds(pid, alone=True) - loop0
    kernel = cpu_seconds(pid, alone=True, system=True) - sys0
    for client in connected:
        await client.close()
    committed = len(latencies)
    return {
        "committed": committed,
        "failed": failures,
        "restored": restored,
        "rate": committed / elapsed,
        "p50": percentile(latencies, 50),
        "p99": percentile(latencies, 99),
        "cpu_ms": cpu / max(1, committed) * 1000,
        "loop_ms": loop / max(1, committed) * 1000,
        "loop_sys_ms": kernel / max(1, committed) * 1000,
        "messages": (seen - base) / max(1, committed),
    }


def line(
    label: str,
    r: dict[str, Any],
    *,
    rate_target: float | None = None,
    p99_target: float | None = None,
    split: bool = True,
) -> str:
    failed = ", ".join(f"{n} {c}" for c, n in r["failed"].items()) or "0"
    text = (
        f"   {label:34s} {r['rate']:7,.0f} attacks/s"
        + (f" (target >= {rate_target:,.0f})" if rate_target else "")
        + f"  p50 {r['p50']:6.2f} ms  p99 {r['p99']:7.2f} ms"
        + (f" (target <= {p99_target:g})" if p99_target else "")
        + f"  CPU {r['cpu_ms']:.2f} ms/attack"
        + (f" (target <= {T_CPU})" if rate_target == T_RATE_1 else "")
        + (
            f" [loop {r['loop_ms']:.2f} (kernel {r['loop_sys_ms']:.2f}), resolvers {r['cpu_ms'] - r['loop_ms']:.2f}]"
            if split
            else ""
        )
        + f"  {r['messages']:.1f} msgs/attack  [{r['committed']} committed, failed: {failed}"
        + (f"; {r['restored']} wrecked models put back by the GM, their updates' CPU included" if r.get("restored") else "")
        + "]"
    )
    return text


def floor_main(count: int) -> None:
    """The floor of an attack's round trip and server CPU, measured bare (run in a process of its own).

    What every attack does beyond an echo, each piece alone on the event loop
    the server runs on (uvloop when installed), with the server's own code:
    a hop to a resolver process and back (a job the size of a duel attack's
    ``start`` message out, a reply the size of its ``done`` reply back,
    pickled and framed as :mod:`vtt_bridge.server.pool` does, the child
    echoing it through its ``_Frames``), and a commit to a SQLite file
    (``SQLiteStore.commit``: one token changed, one audit entry with an attack
    record's size, WAL, ``synchronous=NORMAL``). Prints JSON: for each, the
    p50 wall milliseconds and the CPU milliseconds per operation (the hop's
    CPU counts both processes); and, under ``resolved``, duel attacks resolved
    by a real resolver process (see ``resolved`` below).
    """
    import pickle
    import signal

    from vtt_bridge.server import pool as workers
    from vtt_bridge.server import sandbox
    from vtt_bridge.server.runner import run

    duel = Ruleset("duel")
    # A duel job as Resolvers sends it (one changed token as a delta), and its "done" reply.
    token = {"id": "b0", "system": {"hp": 10**9, "rerolls": 0}, "version": 7}
    job = sandbox.Start("start", 1, "table", None, [token], _duel_spec(duel, 1), [], 0)
    wire = (
        b'{"id":"b0","name":"b0","ruleset":"duel","ownership":{"q0":3},'
        b'"system":{"hp":999999997,"rerolls":0},"flags":{},"version":8}'
    )
    reply = sandbox.Done("done", 1, b"x" * 2400, {"b0": ({"hp": 10**9 - 3, "rerolls": 0}, wire, wire)}, time.time(), True, None)

    def child(sock: socket.socket) -> None:
        frames = sandbox.Frames(sock)
        while frames.next() is not None:
            sandbox.send_blocking(sock, reply)

    async def hops() -> tuple[float, float]:
        parent, other = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            parent.close()
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            child(other)
            os._exit(0)
        other.close()
        loop = asyncio.get_running_loop()
        waiting: list[asyncio.Future[Any]] = []
        writer, pipe = await loop.create_connection(
            lambda: workers.Replies(lambda m: waiting.pop(0).set_result(m)), sock=parent
        )
        times = []
        cpu0, child0 = time.process_time(), _cpu_ns(pid)
        for _ in range(count):
            t0 = time.perf_counter()
            future = loop.create_future()
            waiting.append(future)
            body = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
            writer.write(sandbox.HEADER.pack(len(body)) + body)
            await future
            times.append((time.perf_counter() - t0) * 1000)
        cpu = time.process_time() - cpu0 + _cpu_ns(pid) - child0
        writer.close()
        await pipe.lost
        os.waitpid(pid, 0)
        return percentile(times, 50), cpu / count * 1000

    async def commits(tmp: str) -> tuple[float, float]:
        store = SQLiteStore(Path(tmp) / "floor.sqlite")
        await store.open()
        table, _key = await create_table(store, "floor")
        token = Token("b0", "b0", "duel", {"hp": 10**9, "rerolls": 0}, ownership={"q0": 3})
        await store.commit(table.id, AuditDraft(kind="token.create", user="gm", at=time.time(),
                                                changes={"b0": TokenChange(before=None, after=token)}))
        record = {"attack": "x" * 2400}
        times = []
        cpu0 = time.process_time()
        for n in range(count):
            after = Token("b0", "b0", "duel", {"hp": 10**9 - n, "rerolls": 0}, ownership=token.ownership,
                          version=token.version + 1)
            draft = AuditDraft(kind="attack", user="gm", at=time.time(), ref=f"atk_{n}",
                               changes={"b0": TokenChange(before=token, after=after)}, data=record)
            t0 = time.perf_counter()
            await store.commit(table.id, draft)
            times.append((time.perf_counter() - t0) * 1000)
            token = after
        cpu = time.process_time() - cpu0
        await store.close()
        return percentile(times, 50), cpu / count * 1000

    async def resolved() -> tuple[float, float, float, float]:
        """Duel attacks resolved by a real resolver process, sent as the server sends them.

        The jobs go through :class:`workers.Pool` (one process, forked
        with the server's plugins) one at a time, as one client's attacks
        arrive, on a table of 50 tokens; each reply's changed tokens are the
        next job's (as the server commits them). Returns the p50 wall
        milliseconds of a round (the hop and the job), the CPU milliseconds of
        both processes per job, the resolver process's alone, and the CPU of the
        same jobs resolved back to back in this process by the resolver's own
        code (hot caches; no hop).
        """
        from vtt_bridge.plugins import make_host

        host = make_host(plugins=["tests.server.duel_plugin"])

        def spec(i: int) -> dict[str, Any]:
            return _duel_spec(duel, i)

        def applied(tokens: dict[str, Token], reply: tuple) -> dict[str, Token]:
            assert reply[0] == "done", reply
            for token_id, (system, _before, _after) in reply[3].items():
                old = tokens[token_id]
                tokens = {**tokens, token_id: Token(old.id, old.name, old.ruleset, system, ownership=old.ownership,
                                                    version=old.version + 1, flags=old.flags)}  # fmt: skip
            return tokens

        tokens = {t.id: t for t in duel.tokens()}
        pool = workers.Pool(host, size=1)
        await pool.start()
        try:
            pid = pool.procs[0].pid
            for i in range(min(200, count)):  # warm up
                tokens = applied(tokens, await pool.begin(pool.job("t", spec(i), tokens, 5.0)))
            times = []
            cpu0, child0 = time.process_time(), _cpu_ns(pid)
            for i in range(count):
                t0 = time.perf_counter()
                reply = await pool.begin(pool.job("t", spec(i), tokens, 5.0))
                times.append((time.perf_counter() - t0) * 1000)
                tokens = applied(tokens, reply)
            child = _cpu_ns(pid) - child0
            both = time.process_time() - cpu0 + child
        finally:
            await pool.close()
        worker, held = sandbox.Worker(None, host), workers.Held()  # what a resolver runs per job
        hot = 0.0
        for i in range(count):
            _forget, refs, new = held.hand_off("t", tokens)
            t0 = time.process_time()
            reply = worker.start(i, "t", refs, new, spec(i), [], 0)
            hot += time.process_time() - t0
            tokens = applied(tokens, reply)
        return percentile(times, 50), both / count * 1000, child / count * 1000, hot / count * 1000

    async def both() -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            hop = await hops()
            commit = await commits(tmp)
        return {"hop": hop, "commit": commit, "resolved": await resolved()}

    print(json.dumps(run(both())))


def _duel_spec(duel: Ruleset, i: int) -> dict[str, Any]:
    """The job spec of duel attack ``i`` as ``Attacks`` sends it to a resolver (seed ``i``)."""
    request = duel.attack(i)
    about = {"id": f"atk_{i:020d}", "ruleset": "duel", "attacker": request["attacker"],
             "targets": request["targets"], "user": "gm"}  # fmt: skip
    args = {"attacker": request["attacker"], "targets": request["targets"], "seed": i, "dice": None,
            "declaration": request["declaration"], "answers": request["answers"]}  # fmt: skip
    return {"ruleset": "duel", "args": args, "wire": {"about": about, "table": "t", "request_id": None}}


def _cpu_ns(pid: int) -> float:
    """Seconds of CPU a process has used, every thread, from the scheduler's nanoseconds."""
    tasks = Path(f"/proc/{pid}/task")
    return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks.iterdir()) / 1e9


def floor(count: int) -> dict[str, tuple[float, ...]]:
    """:func:`floor_main` in a process of its own (the server's event loop, not the bench's)."""
    code = f"from bench.server_bench import floor_main; floor_main({count})"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"the floor measurement failed: {out.stderr[-2000:]}")
    return {k: tuple(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def single_process(args, tmp: Path, rulesets: list[Ruleset]) -> None:
    db = tmp / "bench.sqlite"
    # Each run gets tables of its own: the real rulesets' tokens wear out (a wrecked
    # warjack is no longer a valid target), so a second run must not inherit the first's.
    seats = await prepare(SQLiteStore(db), len(RUNS) * args.tables, rulesets)
    memory = await prepare(SQLiteStore(db), args.memory_tables, [rulesets[0]]) if args.memory_tables else {}
    proc, url = start_server("--db", str(db), "--resolvers", str(args.resolvers))
    duel = rulesets[0]
    try:
        async with aiohttp.ClientSession() as http:
            print(f"server {url} (pid {proc.pid}, {args.resolvers} resolver processes); SQLite")
            if args.only != "throughput":
                await measure_round_trips(args, http, url, proc, seats, duel)
            if args.only != "round-trips":
                await measure_throughput(args, http, url, proc, seats, rulesets)
            if memory:
                await measure_memory(http, url, proc, memory)
    finally:
        stop_server(proc)


async def measure_round_trips(args, http, url: str, proc, seats, duel: Ruleset) -> None:
    rt = await round_trips(http, url, seats["duel"][0], duel, args.round_trips, args.seconds * 4)
    echo, atk = rt["echo"], rt["attack"]
    e50, e99 = percentile(echo, 50), percentile(echo, 99)
    a50, a99 = percentile(atk, 50), percentile(atk, 99)
    print(f"\n1. round trip, duel, one client, {len(atk)} of each, interleaved")
    print(f"   echo    p50 {e50:6.3f} ms   p99 {e99:6.3f} ms")
    print(f"   attack  p50 {a50:6.3f} ms   p99 {a99:6.3f} ms")
    print(f"   ratio   p50 {a50 / e50:6.2f} (target <= {T_RATIO:g})")
    n = min(1000, args.round_trips)
    echo_cpu = await cpu_per_call(http, url, proc.pid, seats["duel"][1], duel, "echo", n)
    attack_cpu = await cpu_per_call(http, url, proc.pid, seats["duel"][1], duel, "attack", n)
    print(
        f"   server CPU per request: echo {echo_cpu:.3f} ms, attack {attack_cpu:.3f} ms"
        " (its broadcasts to its own client included; every server process counted)"
    )
    # The floor: what an attack must add to an echo however lean the rest, measured bare.
    bare = floor(n)
    (hop, hop_cpu), (commit, commit_cpu) = bare["hop"], bare["commit"]
    job, job_cpu, resolver_cpu, hot_cpu = bare["resolved"]
    print(
        f"   floor (measured bare, same event loop): echo p50 {e50:.3f} + resolver hop {hop:.3f}"
        f" + SQLite commit {commit:.3f} = {e50 + hop + commit:.3f} ms, ratio floor {(e50 + hop + commit) / e50:.2f};"
        f" CPU: echo {echo_cpu:.3f} + hop {hop_cpu:.3f} (both processes) + commit {commit_cpu:.3f}"
        f" = {echo_cpu + hop_cpu + commit_cpu:.3f} ms"
    )
    # With the attack's own resolution in it: the duel job in a real resolver, nothing else around it.
    print(
        f"   floor with the resolution: echo p50 {e50:.3f} + resolver hop and duel job {job:.3f}"
        f" + SQLite commit {commit:.3f} = {e50 + job + commit:.3f} ms, ratio floor {(e50 + job + commit) / e50:.2f};"
        f" CPU: echo {echo_cpu:.3f} + hop and job {job_cpu:.3f} + commit {commit_cpu:.3f}"
        f" = {echo_cpu + job_cpu + commit_cpu:.3f} ms"
    )
    print(
        f"   the duel job in its resolver process: {resolver_cpu:.3f} ms CPU (woken for each job); the same jobs"
        f" back to back in one process: {hot_cpu:.3f} ms (caches warm)"
    )


async def measure_throughput(args, http, url: str, proc, seats, rulesets: list[Ruleset]) -> None:
    runs = f"{args.clients} clients over {args.tables} tables, up to {args.seconds:g} s each run"
    print(f"\n2. throughput, one server process (SQLite): {runs}")
    # The floor: a bare round trip (one message in, its ack out) under the same load.
    r = await throughput(http, url, proc.pid, seats["duel"][: args.tables], rulesets[0], args, None, event="echo")
    print(line("echo, no broadcasts (the floor)", r).replace("attacks/s", "echoes/s ").replace("ms/attack", "ms/echo"))
    for ruleset in rulesets:
        for n, (label, events, batch) in enumerate(RUNS):
            tables = seats[ruleset.name][n * args.tables : (n + 1) * args.tables]
            r = await throughput(http, url, proc.pid, tables, ruleset, args, events, batch)
            light = ruleset.name == "duel" and events is None and batch
            print(line(f"{ruleset.name}, {label}", r, rate_target=T_RATE_1 if light else None))


async def measure_memory(http, url: str, proc, memory) -> None:
    tables = memory["duel"]
    empty = memory_mb(proc.pid)
    for seat in tables:
        client = await Client().connect(http, url, auth(seat))
        await client.call("token.list", {})
        await client.close()
    size, own = memory_mb(proc.pid), memory_mb(proc.pid, alone=True)
    print(f"\n3. memory with {len(tables)} more tables of {2 * PAIRS} tokens loaded")
    print(
        f"   server memory (Pss) {size:.1f} MB, resolvers included (target < {T_MEMORY:g} MB):"
        f" the event loop's process {own:.1f} MB, its resolvers {size - own:.1f} MB;"
        f" {(size - empty) / len(tables) * 1000:.0f} KB per table loaded"
    )


class RedisWatch:
    """What Redis does: its CPU, and (``count``) the commands it runs per attack.

    The commands are counted with ``MONITOR`` over a short run of their own
    (MONITOR costs Redis more than the commands it shows): those a server
    sends count once each (a script is one), those a script runs inside Redis
    apart. These counts do not depend on the machine's load.
    """

    def __init__(self, url: str) -> None:
        self.host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
        self.port = int(port)
        self.pid = 0

    async def start(self) -> None:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(b"INFO server\r\n")
        await writer.drain()
        header = await reader.readline()  # $<length>
        info = (await reader.readexactly(int(header[1:]) + 2)).decode()
        writer.close()
        match = re.search(r"process_id:(\d+)", info)
        assert match is not None, info
        self.pid = int(match.group(1))

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    async def count(self, run: Any) -> tuple[dict[str, Any], int, int]:
        """``await run()`` with MONITOR on: its result, commands sent, commands run inside scripts."""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(b"MONITOR\r\n")
        await writer.drain()
        assert (await reader.readline()).startswith(b"+OK")
        counts = [0, 0]

        async def tally() -> None:
            while line := await reader.readline():
                # Not counted: a connection's own bookkeeping (keys checked, session listed),
                # which the short run's connects and disconnects would spread over few attacks.
                if b":sessions" not in line and b":keys" not in line:
                    counts[b" lua] " in line] += 1

        task = asyncio.create_task(tally())
        try:
            result = await run()
            await asyncio.sleep(0.2)
        finally:
            writer.close()
            await asyncio.gather(task, return_exceptions=True)
        return result, counts[0], counts[1]


def processes(pid: int, count: int) -> list[int]:
    """The server processes of ``serve --workers N`` (the process itself when N is 1)."""
    if count == 1:
        return [pid]
    kids = [k for k in tree(pid)[1:] if "resource_tracker" not in Path(f"/proc/{k}/cmdline").read_text()]
    return [k for k in kids if Path(f"/proc/{k}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid)]


async def workers(args, rulesets: list[Ruleset]) -> None:
    runs = f"{args.clients} clients over {args.tables} tables, every broadcast, up to {args.seconds:g} s each run"
    print(f"\n4. server processes over one Redis (serve --workers N): {runs}")
    print("   then: CPU per committed attack of each server process (its resolvers included) and of redis-server;")
    print("   Redis commands per attack (a short run under MONITOR; connecting not counted): sent by the servers")
    print("   (a script counts one), and run inside scripts; and, side by side with each duel run (alternated")
    print(f"   {args.rounds} time(s)), the same duel load on one process over SQLite: CPU per committed attack,")
    print("   every server process and redis-server counted, against that")
    duel = rulesets[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "side.sqlite"
        side_seats = (await prepare(SQLiteStore(db), args.tables, [duel]))[duel.name]
        side, side_url = start_server("--db", str(db), "--resolvers", str(args.resolvers))
        try:
            for count in args.workers:
                await _workers(args, rulesets, count, (side, side_url, side_seats))
        finally:
            stop_server(side)


def _cpu_text(n: int, before: tuple, after: tuple) -> str:
    each = ", ".join(f"{(a - b) / n * 1000:.2f}" for a, b in zip(after[0], before[0], strict=True))
    redis_ms, clients_ms = ((after[i] - before[i]) / n * 1000 for i in (1, 2))
    total = sum(after[0]) - sum(before[0]) + (after[1] - before[1]) + (after[2] - before[2])
    return (
        f"CPU ms/attack: server processes {each}; redis-server {redis_ms:.2f}; the bench's clients"
        f" {clients_ms:.2f} (all on {os.cpu_count()} cores: at most"
        f" {(os.cpu_count() or 1) * n / max(total, 1e-9):,.0f} attacks/s)"
    )


async def _workers(args, rulesets: list[Ruleset], count: int, side: tuple) -> None:
    """Section 4 for ``serve --workers count``; the duel runs alternated with ``side``'s (the SQLite server)."""
    side_proc, side_url, side_seats = side
    with redis_server() as url:
        seats = await prepare(RedisStore(url), 2 * args.tables, rulesets)
        resolvers = max(1, args.resolvers // count)
        proc, server = start_server("--redis", url, "--workers", str(count), "--resolvers", str(resolvers))
        watch = RedisWatch(url)
        await watch.start()
        label = f"{count} worker{'s' if count > 1 else ''} x {resolvers} resolvers"
        try:
            async with aiohttp.ClientSession() as http:
                members = processes(proc.pid, count)
                for ruleset in rulesets:
                    light = ruleset.name == "duel"
                    tables = seats[ruleset.name][: args.tables]
                    ratios = []
                    for _round in range(args.rounds if light else 1):
                        if light:
                            alone = await throughput(http, side_url, side_proc.pid, side_seats, ruleset, args, None)
                        before = [cpu_seconds(pid) for pid in members], watch.cpu(), time.process_time()
                        r = await throughput(http, server, proc.pid, tables, ruleset, args, None)
                        after = [cpu_seconds(pid) for pid in members], watch.cpu(), time.process_time()
                        print(
                            line(
                                f"{label}, {ruleset.name}",
                                r,
                                rate_target=T_RATE_2 if light and count == 2 else None,
                                p99_target=T_P99 if light and count == 2 else None,
                                split=False,
                            )
                        )
                        n = max(1, r["committed"])
                        print(f"   {'':34s} {_cpu_text(n, before, after)}")
                        if light:
                            redis_ms = (sum(after[0]) - sum(before[0]) + after[1] - before[1]) / n * 1000
                            ratios.append(redis_ms / alone["cpu_ms"])
                            print(
                                f"   {'':34s} side by side: one process over SQLite {alone['cpu_ms']:.2f} ms/attack"
                                f" ({alone['committed']} committed, failed: {sum(alone['failed'].values())});"
                                f" over Redis, {label}, servers and redis-server {redis_ms:.2f} ms/attack:"
                                f" {ratios[-1]:.2f}x"
                                + (f" (target <= {T_REDIS_RATIO:g})" if args.rounds == 1 else "")
                            )
                    if len(ratios) > 1:
                        print(
                            f"   {'':34s} Redis / SQLite CPU per duel attack, {label}, {len(ratios)} rounds: "
                            + ", ".join(f"{x:.2f}x" for x in ratios)
                            + f"; median {statistics.median(ratios):.2f}x (target <= {T_REDIS_RATIO:g})"
                        )
                    if light:
                        short = argparse.Namespace(**{**vars(args), "seconds": min(args.seconds, 1.0)})
                        tables = seats[ruleset.name][args.tables :]
                        counted, sent, inner = await watch.count(
                            lambda: throughput(http, server, proc.pid, tables, ruleset, short, None)
                        )
                        k = max(1, counted["committed"])
                        print(
                            f"   {'':34s} Redis commands/attack {sent / k:.1f} sent, {inner / k:.1f} in scripts"
                        )
        finally:
            stop_server(proc)


async def main(args) -> int:
    print(f"load average before: {load_average()} on {os.cpu_count()} cores")
    rulesets = [Ruleset(name) for name in args.rulesets]
    if args.only != "redis":
        with tempfile.TemporaryDirectory() as tmp:
            await single_process(args, Path(tmp), rulesets)
    if not args.no_workers:
        await workers(args, rulesets if not args.quick else rulesets[:1])
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
    parser.add_argument("--resolvers", type=int, default=2, help="resolver processes per server (default 2)")
    parser.add_argument(
        "--rulesets", nargs="+", default=["duel", "exalted2e", "warmachine_mk3"], choices=["duel", *EXAMPLES]
    )
    parser.add_argument("--no-workers", action="store_true", help="skip the Redis runs with 1 and 2 workers")
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2], choices=[1, 2, 3, 4],
        help="section 4: the serve --workers counts run (default 1 2)",
    )
    parser.add_argument("--quick", action="store_true", help="a short run: 200 round trips, 1 s of load per run")
    parser.add_argument("--profile", metavar="FILE", help="run the server under cProfile; its stats go to FILE")
    parser.add_argument(
        "--sample", metavar="FILE", help="sample the server's event-loop process by its CPU time; stacks go to FILE"
    )
    parser.add_argument(
        "--only",
        choices=["round-trips", "throughput", "redis"],
        help="measure only this part of the single-process run; redis: only section 4 (Redis, and SQLite beside it)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="section 4: duel runs over SQLite and over Redis, alternated (default 1)"
    )
    args = parser.parse_args(argv)
    if args.profile:
        PROFILE.append(str(Path(args.profile).resolve()))
    if args.sample:
        SAMPLE.append(str(Path(args.sample).resolve()))
    if args.rulesets[0] != "duel":
        args.rulesets = ["duel", *[r for r in args.rulesets if r != "duel"]]
    if args.quick:
        args.round_trips, args.seconds, args.per_client, args.memory_tables = 200, 1.0, 30, 10
    return args


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(parse())))
