"""The sandbox pool: the processes every third-party hook runs in, for attacks and odds.

No hook code runs on a server's event loop. Two uses of the same forked
process (the plugin host inherited, loaded), one framing (:func:`frame`),
one way to find where a stuck hook is (``SIGUSR1``, :data:`REPORT_GRACE`)
and to kill and replace it: resolver processes for attacks, and odds
processes for ``attack.odds`` (:class:`OddsRunner`, described further down).

**Resolver processes** (:class:`Resolvers`). No hook code runs on a server's
event loop. A server forks a small pool of resolver processes when it starts
(the plugin host is inherited, already loaded). An attack is a *job*: the
event loop sends the job to the first resolver that keeps up (the least
busy one when none does: see ``Resolvers._pick``), which starts the
engine's :class:`~vtt_bridge.Resolution` and advances it until it asks a
Decision or ends. The event loop asks the decider, sends the answer back,
and the resolver advances the same generator again: the resolution lives in
the resolver between decisions, so it is never rebuilt. A resolver holds
many parked jobs at once and works on one at a time, in the order they
arrive.

Each job has a time budget (the table's ``attack_budget``): the seconds its
hooks may run, decisions not counted. A per-resolver watchdog times the job
at the head of that resolver's queue; past its budget the resolver is asked
(``SIGUSR1``) which plugin, hook and step it is in, then killed with
``SIGKILL`` and replaced by a fresh fork. The job fails with
``plugin_timeout`` and nothing is applied. The other jobs that were queued
on or parked in the killed resolver are *replayed* on another one: the
engine is deterministic given its seed (or scripted dice), its tokens, its
declaration and the answers given so far, so starting it again and feeding
it the recorded answers reaches the same point — they notice a delay, not a
failure. Why processes and not threads: a thread stuck in a hook cannot be
stopped, keeps its share of the GIL if it spins, and every stuck thread
would be lost for good; a process is killed and its memory returned, so a
hook that never returns costs one attack and one fork.

**Server processes** (:func:`.runner.serve_workers`). ``vtt-bridge serve --workers N``
starts N server processes that listen on the same port (``SO_REUSEPORT``:
the kernel spreads connections over them) and share one Redis, which is
their store and their bus (:mod:`.bus`: a table's broadcasts as one message
per batch, cross-process questions and their answers over socket.io's own
channel). What makes N processes —
on one machine or many — behave as one server lives in the Redis store and
the bridge: each process re-reads a table's tokens when the table's change
counter moved; a table's attacks run under a per-table lease in Redis, so
they apply in one order whichever process received them; a ``request_id`` is
looked up under that lease, so a retry sent to any process returns the
first result; a decision whose decider is connected to another process is
asked through that process (:class:`~.prompts.Prompter`). The parent
process only supervises: it restarts a worker that dies and stops them all
on SIGINT/SIGTERM. SQLite stays single-process (it is the embedded default).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import itertools
import logging
import os
import pickle
import signal
import socket
import struct
import sys
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ..engine.tokens import Token
from ..errors import (
    InternalError,
    PluginError,
    PluginTimeout,
    RateLimited,
    ServerStopping,
    VTTError,
    error_from_dict,
)
from ..odds import compute_odds
from ..state import codec
from ..state.records import token_wire
from .attackwire import attack_payload
from .logs import fields

if TYPE_CHECKING:  # for annotations only: the pool is below the tables
    from .session import Caller
    from .tables import TableRuntime

__all__ = [
    "DEFAULT_BUDGET",
    "HEADER",
    "ODDS_IDLE",
    "REPORT_GRACE",
    "Job",
    "OddsRunner",
    "RemoteDecision",
    "Resolvers",
    "budget_of",
    "frame",
]

log = logging.getLogger("vtt_bridge.server")

# Seconds of hook time an attack may use when its table sets no attack_budget.
DEFAULT_BUDGET = 5.0
# How long a resolver past its budget has to say where it is stuck.
REPORT_GRACE = 0.2
HEADER = struct.Struct("!I")


async def where_stuck(proc: Any) -> dict[str, Any]:
    """Ask a pool process past its budget (``SIGUSR1``) which plugin, hook and step it is in;
    ``{}`` when it does not say within :data:`REPORT_GRACE` seconds. ``proc``: a resolver's
    or an odds process's handle (``pid``; ``stuck``, the future its :class:`Stuck` reply sets)."""
    proc.stuck = asyncio.get_running_loop().create_future()
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGUSR1)
    with contextlib.suppress(TimeoutError):
        return await asyncio.wait_for(asyncio.shield(proc.stuck), REPORT_GRACE)
    return {}


def frame(message: Any) -> bytes:
    """The one framing of every message between the event loop and a pool process:
    its pickle's length (:data:`HEADER`), then the pickle."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body
# A resolver whose current job has run this long is passed over for new jobs.
_SLOW = 0.25
# A new job goes to the first resolver with fewer jobs than this waiting on it whose job in
# hand began less than _BRIEF seconds ago; the least busy one when none does (see _pick).
# 32 duel jobs are about 5 ms of work; with 8, a fifth of a steady load still went to a
# second, cold resolver (docs/deploy.md, "Measured").
_KEEPS_UP = 32
_BRIEF = 0.005
# The longest a resolver holds a finished job's reply to send it with the next ones.
_HOLD = 0.002
# A resolver forked as a spare (every resolver was held up by a slow hook) is retired
# once it has had no job for this many seconds, while more than ``size`` are running.
SPARE_IDLE = 30.0
# The tables whose tokens a resolver (or odds process) keeps between jobs: the least
# recently used beyond this many are forgotten (sent again in full if used again).
TABLES_HELD = 64
# How often the event loop's heartbeat runs (see :class:`Lateness`).
BEAT = 0.05


class Lateness:
    """How late the event loop runs: a ``call_later`` heartbeat notes how much later than
    asked it ran. A job's time in a resolver is charged without the time the loop itself
    was late (a garbage collection, a burst of messages, a fork): the resolver's replies
    were waiting unread in its socket meanwhile, so no resolver looks slow, no spare is
    forked and no job is charged for the loop's own delay."""

    def __init__(self) -> None:
        self.total = 0.0  # seconds the heartbeat ran late, summed since it started
        self.recent = 0.0  # how late its last beat ran
        self.timer: asyncio.TimerHandle | None = None
        self.due = 0.0

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.due = loop.time() + BEAT
        self.timer = loop.call_at(self.due, self.beat)

    def beat(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.recent = max(0.0, now - self.due)
        self.total += self.recent
        self.due = now + BEAT
        self.timer = loop.call_at(self.due, self.beat)

    def since(self, mark: float, now: float) -> float:
        """Lateness summed since ``mark`` (an earlier ``total``), the beat due now included."""
        return self.total - mark + max(0.0, now - self.due)

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


# -- framing (both sides) ---------------------------------------------------------


def _send_blocking(sock: socket.socket, message: Any) -> None:
    sock.sendall(frame(message))


class _Frames:
    """Messages from a blocking socket, read in large chunks (several messages per system call)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def next(self) -> Any:
        """The next message, or ``None`` once the other side has closed."""
        buffer, size = self.buffer, HEADER.size
        while True:
            if len(buffer) >= size:
                end = size + HEADER.unpack_from(buffer)[0]
                if len(buffer) >= end:
                    message = pickle.loads(bytes(buffer[size:end]))
                    del buffer[:end]
                    return message
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return None
            buffer += chunk

    def ready(self) -> bool:
        """Whether a whole message can be read without waiting."""
        buffer, size = self.buffer, HEADER.size
        if len(buffer) < size or len(buffer) < size + HEADER.unpack_from(buffer)[0]:
            try:
                chunk = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return False
            if not chunk:
                return True  # closed: next() says so at once
            buffer += chunk
        return len(buffer) >= size and len(buffer) >= size + HEADER.unpack_from(buffer)[0]


# -- the resolver process -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemoteDecision:
    """A Decision as the event loop sees it: who decides, how long, and its wire form."""

    key: str
    token: str | None
    timeout: float | None
    wire: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.wire


# -- the messages (typed; each a tuple with its kind first, pickled as such) ---------


class Start(NamedTuple):
    """Event loop → process: begin a job (tokens as a delta against what it holds, see :class:`Held`)."""

    kind: Literal["start"]
    job: int
    table: str
    refs: list[str] | None
    new: list[dict[str, Any]]
    spec: dict[str, Any]
    settled: list[tuple[Any, str]]
    sent: int


class Settle(NamedTuple):
    """Event loop → process: the answer to the decision a parked job asked."""

    kind: Literal["settle"]
    job: int
    answer: Any
    how: str


class Drop(NamedTuple):
    """Event loop → process: forget a parked job (its attack ended elsewhere)."""

    kind: Literal["drop"]
    job: int


class Forget(NamedTuple):
    """Event loop → process: forget a table's tokens (the least recently used, see :class:`Held`)."""

    kind: Literal["forget"]
    job: int  # 0: no job
    table: str


class Odds(NamedTuple):
    """Event loop → process: compute ``attack.odds`` within ``budget`` seconds."""

    kind: Literal["odds"]
    job: int
    table: str
    refs: list[str] | None
    new: list[dict[str, Any]]
    request: dict[str, Any]
    budget: float


class Asked(NamedTuple):
    """Process → event loop: the job asks a decision (the steps finished before it)."""

    kind: Literal["decision"]
    job: int
    steps: list[Any]
    decision: RemoteDecision
    how: str | None  # how the previous decision was settled (None before the first)


class Done(NamedTuple):
    """Process → event loop: the job's attack resolved; ``encoded``: its wire form, as JSON."""

    kind: Literal["done"]
    job: int
    encoded: bytes
    changed: Any
    at: float
    hit: Any
    how: str


class Failed(NamedTuple):
    """Process → event loop: the job failed; ``error`` is the error's dict."""

    kind: Literal["error"]
    job: int
    steps: list[Any]
    started: bool
    error: dict[str, Any]


class OddsDone(NamedTuple):
    """Process → event loop: the odds computed."""

    kind: Literal["odds"]
    job: int
    odds: dict[str, Any]


class Stuck(NamedTuple):
    """Process → event loop (on ``SIGUSR1``): where the job in hand is stuck."""

    kind: Literal["stuck"]
    job: int | None
    where: dict[str, Any]


Request = Start | Settle | Drop | Forget | Odds
Reply = Asked | Done | Failed | OddsDone | Stuck
# What an odds request's future holds when its process ended before replying.
ENDED: Any = object()


def _error(exc: BaseException, host: Any) -> dict[str, Any]:
    """A resolver-side exception as data the event loop turns back into the same error."""
    if isinstance(exc, VTTError):
        return exc.to_dict()
    if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit)):
        # A pack that raised SystemExit/KeyboardInterrupt ends its attack, never the process.
        plugin = _plugin_in_traceback(exc, host)
        return PluginError(
            f"plugin {plugin or '?'} raised {type(exc).__name__}",
            details={"plugin": plugin, "exception": type(exc).__name__},
        ).to_dict()
    log.error("resolution failed: %s", "".join(traceback.format_exception(exc)).rstrip())
    return InternalError("internal server error").to_dict()


def _plugin_in_traceback(exc: BaseException, host: Any) -> str | None:
    plugin = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        name = host.plugin_of(frame.f_globals.get("__name__", ""))
        if name is not None:
            plugin = name
    return plugin


def _where(frame: Any, host: Any) -> dict[str, Any]:
    """Which plugin, hook and step the resolver's main thread is in.

    The plugin is the innermost frame's that belongs to one; the hook, the
    innermost hook implementation on the stack (found by its code, whatever
    the engine's caller around it).
    """
    plugin = hook = None
    hooks = _hook_codes(host)
    while frame is not None:
        if plugin is None:
            plugin = host.plugin_of(frame.f_globals.get("__name__", ""))
        if hook is None:
            hook = hooks.get(frame.f_code)
        frame = frame.f_back
    step = None
    if hook is not None:
        for ruleset in host.rulesets.values():
            step = "setup" if hook == f"{ruleset.id} setup" else _step_of(ruleset.id, ruleset.steps, hook)
            if step is not None:
                break
    return {"plugin": plugin, "hook": hook, "step": step}


def _hook_codes(host: Any) -> dict[Any, str]:
    """The code of every hook implementation registered → the hook's name; each ruleset's
    ``setup`` → ``"<ruleset> setup"`` (as a plugin error names it)."""
    codes: dict[Any, str] = {}
    for ruleset in host.rulesets.values():
        code = getattr(ruleset.setup, "__code__", None)
        if code is not None:
            codes[code] = f"{ruleset.id} setup"
    for name in dir(host.pm.hook):
        caller = getattr(host.pm.hook, name, None)
        for impl in getattr(caller, "get_hookimpls", list)():
            code = getattr(impl.function, "__code__", None)
            if code is not None:
                codes.setdefault(code, name)
    return codes


def _step_of(ruleset_id: str, steps: Any, hook: str) -> str | None:
    """The step whose hook (or whose decision's options hook) is ``hook``, nested steps included."""
    for step in steps:
        if hook == f"{ruleset_id}_{step.name}" or (step.ask and hook == f"{ruleset_id}_{step.ask.name}_options"):
            return step.name
        found = _step_of(ruleset_id, step.steps, hook)
        if found is not None:
            return found
    return None


class _Worker:
    """The loop inside a resolver process: messages in, one answer each out.

    Jobs that arrive together are answered together: while another message
    is already waiting, a reply is held and the held replies go out in one
    write — each system call, and each wake-up of the event loop, then
    carries several attacks. A reply is held ``_HOLD`` seconds at most: a
    timer signal (``SIGALRM``), set only while replies are held over another
    job, sends them even while that job's hooks run.
    """

    def __init__(self, sock: socket.socket, host: Any) -> None:
        self.sock = sock
        self.host = host
        # The tables' tokens as the event loop last sent them (see ``Held``): table → id → snapshot.
        self.tables: dict[str, dict[str, Token]] = {}
        # The wire form of the snapshots held that an attack's record carried (table → id →
        # (snapshot, token_wire)): the next attack that involves one need not make it again.
        self.wires: dict[str, dict[str, tuple[Token, dict[str, Any]]]] = {}
        self.live: dict[int, tuple[Any, int, dict, str]] = {}  # job id → (resolution, steps sent, spec, table)
        self.current: int | None = None
        self.sending = False
        self.held: list[bytes] = []  # framed replies not sent yet
        self.held_since = 0.0
        self.armed = False  # the timer (SIGALRM) that sends held replies is set

    def report(self, signum: int, frame: Any) -> None:
        """SIGUSR1: say where the current job is stuck (the event loop will kill us next).

        Replies held back go first: the jobs they answer are done, and the
        event loop must not take one of them for the one that is stuck. Not
        while replies are being written: the report would land inside them;
        the event loop sees those replies instead.
        """
        if self.sending:
            return
        with contextlib.suppress(Exception):
            self.flush()
            if self.current is None:  # no job in hand: say so, lest a job not read yet look stuck
                _send_blocking(self.sock, Stuck("stuck", None, {"idle": True}))
            else:
                _send_blocking(self.sock, Stuck("stuck", self.current, _where(frame, self.host)))

    def overdue(self, signum: int, frame: Any) -> None:
        """SIGALRM: replies held ``_HOLD`` seconds go out, whatever the job running now does."""
        self.armed = False
        if self.sending:
            return
        with contextlib.suppress(Exception):
            self.flush()

    def flush(self) -> None:
        if self.armed:
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
        if not self.held:
            return
        self.sending = True
        try:
            data = b"".join(self.held)
            self.held.clear()
            self.sock.sendall(data)
        finally:
            self.sending = False

    def run(self) -> None:
        frames = _Frames(self.sock)
        while True:
            if self.held:
                if time.monotonic() - self.held_since > _HOLD or not frames.ready():
                    self.flush()
                elif not self.armed:
                    # Held over the next job: the timer sends them if its hooks take long.
                    self.armed = True
                    signal.setitimer(signal.ITIMER_REAL, _HOLD)
            message = frames.next()
            if message is None:
                return
            kind, job_id = message.kind, message.job
            if kind == "drop":
                self.live.pop(job_id, None)
                continue
            if kind == "forget":
                self.tables.pop(message.table, None)
                self.wires.pop(message.table, None)
                continue
            self.current = job_id
            try:
                if kind == "odds":
                    reply = self.odds(*message[1:])
                else:
                    reply = self.start(*message[1:]) if kind == "start" else self.settle(*message[1:])
            finally:
                self.current = None
            if not self.held:
                self.held_since = time.monotonic()
            self.held.append(frame(reply))

    def table(self, table: str, refs: list[str] | None, new: list[dict[str, Any]]) -> dict[str, Token]:
        """The table's tokens for a job: those held, with ``new`` (the snapshots not held yet)
        in; ``refs``: the table's token ids in order when they are not the ones held (see ``Held``)."""
        held = self.tables.get(table)
        if held is None:
            held = self.tables[table] = {}
        wires = self.wires.get(table)
        if wires is None:
            wires = self.wires[table] = {}
        for data in new:
            held[data["id"]] = Token.from_dict(data)
            wires.pop(data["id"], None)  # that snapshot's is made when an attack needs it
        if refs is not None:
            held = self.tables[table] = {token_id: held[token_id] for token_id in refs}
            if len(wires) > len(held):
                self.wires[table] = {token_id: wires[token_id] for token_id in refs if token_id in wires}
        return dict(held)  # the resolution's own: a later job's snapshots do not reach it

    def start(self, job_id: int, table: str, refs: list | None, new: list, spec: dict, settled: list, sent: int) -> Reply:
        tokens = self.table(table, refs, new)
        res = None
        try:
            res = self.host.start(spec["ruleset"], tokens, **spec["args"])
            for answer, how in settled:
                # Replaying on a fresh resolver: the same inputs reach the same decisions.
                if res.advance() is None:
                    break
                self._apply(res, answer, how)
            return self.step(job_id, res, sent, spec, table)
        except BaseException as exc:
            return Failed("error", job_id, [], bool(res is not None and (res.decisions or sent)), _error(exc, self.host))

    def settle(self, job_id: int, answer: Any, how: str) -> Reply:
        res, sent, spec, table = self.live.pop(job_id)
        try:
            how = self._apply(res, answer, how)
            return self.step(job_id, res, sent, spec, table, how=how)
        except BaseException as exc:
            return Failed("error", job_id, [], True, _error(exc, self.host))

    @staticmethod
    def _apply(res: Any, answer: Any, how: str) -> str:
        if how != "answered":
            res.default(how)
            return how
        try:
            if isinstance(answer, Mapping) and "params" in answer:
                res.answer(answer.get("option"), answer.get("params"))
            else:
                res.answer(answer)
        except VTTError:
            res.default("invalid")
            return "invalid"
        return how

    def step(
        self, job_id: int, res: Any, sent: int, spec: Mapping[str, Any], table: str, *, how: str | None = None
    ) -> Reply:
        try:
            decision = res.advance()
        except BaseException as exc:
            return Failed("error", job_id, [], bool(sent or res.decisions), _error(exc, self.host))
        if decision is not None:
            trace = res.ctx.trace
            # The last entry is the step asking: not finished yet.
            done = max(sent, len(trace) - 1)
            steps = [trace[i].to_dict() for i in range(sent, done)]
            self.live[job_id] = (res, done, spec, table)
            wire = RemoteDecision(decision.key, decision.token, decision.timeout, decision.to_dict())
            return Asked("decision", job_id, steps, wire, how)
        record = res.record
        try:
            after = self.checked(res, record)
            at = time.time()
            payload = attack_payload(spec["wire"], at, record, res.tokens, after, self.wires.get(table))
            encoded = codec.encode(payload)
        except BaseException as exc:
            return Failed("error", job_id, [], bool(sent or res.decisions), _error(exc, self.host))
        # Each changed token: its new system (plain: it pickles faster than a frozen one) and
        # its wire form before and after, encoded once here for the audit entry and token.updated.
        wire, enc = payload["tokens"], codec.encode
        changed = {
            token_id: (token.plain(), enc(wire[token_id]["before"]), enc(wire[token_id]["after"]))
            for token_id, token in after.items()
        }
        return Done("done", job_id, encoded, changed, at, record["outcome"].get("hit"), how)

    def checked(self, res: Any, record: Mapping[str, Any]) -> dict[str, Token]:
        """Every changed token as the attack leaves it: clamped to its ruleset's ranges, then checked
        (:meth:`Host.changed_token`: anything else invalid names the plugin that wrote it)."""
        writers = res.ctx.changes.writers
        return {
            token_id: self.host.changed_token(res.tokens[token_id], change["after"], writers=writers)
            for token_id, change in record["changes"].items()
        }

    # -- attack.odds (see OddsRunner below) ------------------------------------------------

    def odds(self, job_id: int, table: str, refs: list | None, new: list, request: dict, budget: float) -> Reply:
        """Compute one ``attack.odds`` with the table's tokens ``refs`` (``new``: those this
        process does not hold in their current version); a Monte Carlo run stops ``budget``
        seconds from now and reports the samples it ran. Everything here is hook code (the
        probe, the exact model, the samples), which is why it runs in a process the event
        loop can kill."""
        deadline = time.monotonic() + budget
        try:
            snapshot = self.table(table, refs, new)
            result = compute_odds(
                self.host,
                request,
                snapshot,
                mc_samples=request["samples"],
                method=request["method"],
                stop=lambda: time.monotonic() > deadline,
            )
            return OddsDone("odds", job_id, result.to_dict())
        except BaseException as exc:
            return Failed("error", job_id, [], False, _error(exc, self.host))


def _child(sock: socket.socket, host: Any) -> None:
    sys.setprofile(None)  # a profiler watching the server (bench/server_bench.py --profile) stays there
    # Everything inherited from the server is moved out of this process's collector's sight:
    # its collections then never write to those objects, so their pages stay shared with
    # the server (see docs/deploy.md, "memory"). Done here, not in the server before each
    # fork: there it would keep the server's own garbage of the moment for good.
    gc.freeze()
    # The event loop's signal plumbing belongs to the parent.
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):  # Linux: die with the server, even while stuck in a hook
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    # Inherited listening sockets and the store's files are not ours to hold open.
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
    worker = _Worker(sock, host)
    signal.signal(signal.SIGUSR1, worker.report)
    signal.signal(signal.SIGALRM, worker.overdue)
    worker.run()


async def fork_process(host: Any, handle: Callable[[Any], Any]) -> tuple[int, Any, asyncio.Future[None]]:
    """Fork a pool process (it inherits ``host``): its pid, the event loop's end of its socket
    (every message the process writes goes to ``handle``, see :class:`Replies`) and a future
    done once that socket closes (the process ended, or was told to by closing it)."""
    pid, sock = _fork_child(host)
    transport, pipe = await asyncio.get_running_loop().create_connection(lambda: Replies(handle), sock=sock)
    return pid, transport, pipe.lost


def _fork_child(host: Any) -> tuple[int, socket.socket]:
    """Fork a resolver process (it inherits ``host``); its pid and the parent's end of its socket."""
    parent, child = socket.socketpair()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            parent.close()
            _child(child, host)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    child.close()
    return pid, parent


# -- the event loop's side ------------------------------------------------------------


def _unframe(buffer: bytearray, handle: Callable[[Any], Any]) -> None:
    """Hand each whole message at the start of ``buffer`` (framed, pickled) to ``handle``, in
    order; what was handed over leaves ``buffer``, a message not whole yet stays."""
    size, unpack, start, length = HEADER.size, HEADER.unpack_from, 0, len(buffer)
    try:
        while length - start >= size:
            end = start + size + unpack(buffer, start)[0]
            if length < end:
                break
            message = pickle.loads(buffer[start + size : end])
            start = end
            handle(message)
    finally:
        del buffer[:start]


class Replies(asyncio.Protocol):
    """The event loop's end of a resolver's socket: each whole message is handled in the
    callback that read it (:meth:`Resolvers._reply`), with no reader task to wake first, so
    a reply completes its job's future one turn of the event loop sooner."""

    def __init__(self, handle: Callable[[Any], Any]) -> None:
        self.handle = handle
        self.buffer = bytearray()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        _unframe(self.buffer, self.handle)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)


class Held:
    """The tables' tokens one child process holds, as the event loop sees them.

    A job is sent with its table's tokens as a delta against what the process
    holds from earlier jobs (:meth:`hand_off`): the snapshots it does not hold
    in their current version, and the ids in order only when they are not the
    ones held (a token created or deleted since; the first job of a table).
    The child applies the same steps (``_Worker.table``), so both sides keep
    the same dicts in the same order. At most :data:`TABLES_HELD` tables are
    held: the least recently used is forgotten on both sides.
    """

    __slots__ = ("tables",)

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Token]] = {}  # table → token id → snapshot (by identity)

    def clear(self) -> None:
        """Hold nothing: the next job of every table sends all its tokens (the child's are replaced)."""
        self.tables.clear()

    def hand_off(
        self, table: str, tokens: Mapping[str, Token]
    ) -> tuple[list[str], list[str] | None, list[dict[str, Any]]]:
        """``(tables to forget first, ids or None, new snapshots' wire form)`` for a job on ``table``."""
        tables = self.tables
        held = tables.pop(table, None)
        forget: list[str] = []
        fresh = held is None
        if held is None:
            held = {}
            while len(tables) >= TABLES_HELD:
                oldest = next(iter(tables))
                del tables[oldest]
                forget.append(oldest)
        tables[table] = held  # the most recently used last
        if not fresh and len(held) == len(tokens) and list(held) == list(tokens):
            # The same ids in the same order (the usual case): find the snapshots that moved
            # without a Python-level step per token.
            moved = list(compress(tokens, map(is_not, tokens.values(), held.values())))
            for token_id in moved:
                held[token_id] = tokens[token_id]
            return forget, None, [token_wire(held[token_id]) for token_id in moved]
        new = []
        for token_id, token in tokens.items():
            if held.get(token_id) is not token:
                held[token_id] = token
                new.append(token_wire(token))
        if fresh or len(held) != len(tokens) or list(held) != list(tokens):
            tables[table] = dict(tokens)
            return forget, list(tokens), new
        return forget, None, new


@dataclass(eq=False)
class Job:
    """One attack being resolved (see the module docstring).

    :ivar spec: ``{"ruleset", "args"}``: what ``host.start`` is called with.
    :ivar tokens: the table's tokens when the attack began (a replay needs them).
    :ivar settled: ``(answer, how)`` for every decision so far, in order.
    :ivar sent: how many finished steps the table has been sent.
    :ivar budget: seconds of hook time; ``used`` so far.
    """

    table: str
    spec: dict[str, Any]
    tokens: Mapping[str, Token]
    budget: float
    id: int = 0
    settled: list[tuple[Any, str]] = field(default_factory=list)
    sent: int = 0
    used: float = 0.0
    worker: _Proc | None = None
    future: asyncio.Future[tuple] | None = None


class _Proc:
    """One resolver process, seen from the event loop."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.writer: asyncio.Transport | Any = None  # the event loop's end of its socket
        self.lost: asyncio.Future[None] | None = None  # done once that socket is closed
        # The snapshots it holds (compared by identity: a token deleted and created
        # again starts at version 1 again, with other stats).
        self.known = Held()
        self.spare = False  # forked beyond the pool's size, retired once idle (SPARE_IDLE)
        self.used = 0.0  # when it was last given a job or answered one (the event loop's clock)
        self.queue: deque[tuple[Job, float]] = deque()  # (job, budget left) awaiting an answer, in order
        self.parked: set[Job] = set()
        self.head_since = 0.0
        self.head_lag = 0.0  # the loop's lateness (``Lateness.total``) when the head job began
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at = 0.0  # when ``timer`` fires (the event loop's clock)
        self.deadline = 0.0  # when the head job's budget runs out
        self.stuck: asyncio.Future[dict] | None = None
        self.task: asyncio.Task[None] | None = None
        self.outgoing: list[bytes] = []
        self.dead = False

    @property
    def load(self) -> int:
        return len(self.queue)


class Resolvers:
    """A pool of resolver processes (see the module docstring).

    :param host: the plugin host; forked into each process.
    :param size: how many processes.
    """

    def __init__(self, host: Any, *, size: int = 2) -> None:
        self.host = host
        self.size = max(1, size)
        self.procs: list[_Proc] = []
        self._ids = itertools.count(1)
        self._closed = False
        self.replaced = 0
        self._forking_spares = 0  # spares being forked (not in ``procs`` until connected)
        self.spares = 0  # forked as spares so far; ``retired``: those ended once idle
        self.retired = 0
        self.lateness = Lateness()

    def _ran(self, proc: _Proc, now: float) -> float:
        """How long ``proc``'s head job has run, the event loop's own lateness taken out."""
        return max(0.0, now - proc.head_since - self.lateness.since(proc.head_lag, now))

    async def start(self) -> None:
        # What the server has built so far (modules, the plugin host, schemas) lives as long
        # as it does: moved out of the garbage collector's sight, a resolver's collections do
        # not write to those objects, so their pages stay shared with the server instead of
        # being copied into every resolver (see docs/deploy.md, "memory").
        gc.collect()
        gc.freeze()
        for _ in range(self.size):
            self.procs.append(await self._fork())
        self.lateness.start()

    async def _fork(self) -> _Proc:
        """A new resolver process (it freezes what it inherits itself: see ``_child``)."""
        # ``proc`` is set before the event loop runs again, so before any reply is handled.
        pid, writer, lost = await fork_process(self.host, lambda reply: self._reply(proc, reply))
        proc = _Proc(pid)
        proc.writer, proc.lost = writer, lost
        proc.task = asyncio.get_running_loop().create_task(self._read(proc), name=f"resolver {proc.pid}")
        return proc

    async def close(self) -> None:
        self._closed = True
        self.lateness.stop()
        procs, self.procs = self.procs, []
        for proc in procs:
            proc.dead = True
            if proc.timer is not None:
                proc.timer.cancel()
            proc.writer.close()
            if proc.task is not None:
                proc.task.cancel()
                await asyncio.gather(proc.task, return_exceptions=True)
            self._fail_all(proc, InternalError("the server is stopping"))
        for proc in procs:
            await self.reap(proc.pid, grace=1.0)

    # -- running jobs ------------------------------------------------------------

    def job(self, table: str, spec: dict[str, Any], tokens: Mapping[str, Token], budget: float) -> Job:
        return Job(table=table, spec=spec, tokens=tokens, budget=budget, id=next(self._ids))

    async def begin(self, job: Job) -> Reply:
        """Start ``job``; returns the resolver's first reply (``decision``, ``done`` or ``error``)."""
        return await self._dispatch(job, await self._pick(), fresh=True)

    async def settle(self, job: Job, answer: Any, how: str) -> Reply:
        """Give the parked ``job`` its decision's outcome; returns the next reply."""
        job.settled.append((answer, how))
        proc = job.worker
        if proc is None or proc.dead:
            # Its resolver is gone: replay it (with every answer so far) on another.
            return await self._dispatch(job, await self._pick(), fresh=True)
        proc.parked.discard(job)
        return await self._dispatch(job, proc, fresh=False, message=Settle("settle", job.id, answer, how))

    def drop(self, job: Job) -> None:
        """Forget a parked job (its attack was abandoned)."""
        proc = job.worker
        job.worker = None
        if proc is not None and not proc.dead and job in proc.parked:
            proc.parked.discard(job)
            self._write(proc, Drop("drop", job.id))

    async def _pick(self) -> _Proc:
        """A resolver for a new job: one not held up by a slow hook, forking a spare if need be.

        Spares are bounded (as many again as ``size``), so hooks that hang
        everywhere cost a bounded number of processes, each retired at its budget.
        """
        now = asyncio.get_running_loop().time()
        live = [p for p in self.procs if not p.dead]
        free = [p for p in live if not p.queue or self._ran(p, now) < _SLOW]
        if free:
            # The first resolver that keeps up takes the job (a short queue, its job in hand
            # begun moments ago): one that works through jobs in a row runs them with its
            # caches warm, while one woken for each job runs it about twice as slow
            # (bench/server_bench.py measures both). Another takes jobs once it falls behind.
            for proc in free:
                if not proc.queue or (len(proc.queue) < _KEEPS_UP and self._ran(proc, now) < _BRIEF):
                    return proc
            return min(free, key=lambda p: p.load)
        if self.lateness.recent >= _SLOW:
            return self._least_busy()  # the loop itself is late: the resolvers' replies wait unread
        if len(live) + self._forking_spares < 2 * self.size and not self._closed:
            # Counted while it is forked: jobs that arrive meanwhile must not fork spares of their own.
            self._forking_spares += 1
            try:
                proc = await self._fork()
            finally:
                self._forking_spares -= 1
            self.procs.append(proc)
            self.spares += 1
            proc.spare = True
            proc.used = now
            asyncio.get_running_loop().call_later(SPARE_IDLE, self._idle_spare, proc)
            return proc
        return self._least_busy()

    def _idle_spare(self, proc: _Proc) -> None:
        """A spare that had no job for ``SPARE_IDLE`` seconds ends, unless the pool needs it
        to keep ``size`` processes (another was retired meanwhile)."""
        if proc.dead or self._closed:
            return
        loop = asyncio.get_running_loop()
        idle = loop.time() - proc.used
        if proc.queue or proc.parked or idle < SPARE_IDLE:
            loop.call_later(max(0.1, SPARE_IDLE - (0 if proc.queue or proc.parked else idle)), self._idle_spare, proc)
            return
        if sum(1 for p in self.procs if not p.dead) <= self.size:
            proc.spare = False  # one of the pool now
            return
        proc.dead = True
        self.procs.remove(proc)
        self.retired += 1
        if proc.timer is not None:
            proc.timer.cancel()
        proc.writer.close()  # the process reads the end of its socket and exits
        if proc.task is not None:
            proc.task.cancel()
        loop.create_task(self.reap(proc.pid, grace=1.0))

    def _least_busy(self) -> _Proc:
        live = [p for p in self.procs if not p.dead]
        if not live:
            raise InternalError("no resolver is running")
        return min(live, key=lambda p: p.load)

    async def _dispatch(self, job: Job, proc: _Proc, *, fresh: bool, message: Request | None = None) -> Reply:
        left = job.budget - job.used
        if left <= 0:
            raise self._timeout(job, {"plugin": None, "hook": None, "step": None})
        if fresh:
            message = self._start_message(job, proc)  # written right below: what the process holds changes
        assert message is not None
        loop = asyncio.get_running_loop()
        job.worker = proc
        job.future = loop.create_future()
        proc.used = loop.time()
        proc.queue.append((job, left))
        self._write(proc, message)
        if len(proc.queue) == 1:
            # The resolver has nothing else to do: it is woken now, not a turn of the loop later.
            self._arm(proc)
            self._flush(proc)
        reply = await job.future
        return reply

    def _start_message(self, job: Job, proc: _Proc) -> Start:
        forget, refs, new = proc.known.hand_off(job.table, job.tokens)
        for table in forget:
            self._write(proc, Forget("forget", 0, table))
        return Start("start", job.id, job.table, refs, new, job.spec, list(job.settled), job.sent)

    def _write(self, proc: _Proc, message: tuple) -> None:
        """Queue ``message`` for ``proc``; what one loop turn queues goes out in one write.

        Waking another process costs more than the bytes: several tables'
        attacks dispatched together reach a busy resolver with one system call
        (a job for an idle one is written at once: see :meth:`_dispatch`).
        """
        if not proc.outgoing:
            asyncio.get_running_loop().call_soon(self._flush, proc)
        proc.outgoing.append(frame(message))

    @staticmethod
    def _flush(proc: _Proc) -> None:
        if not proc.outgoing:
            return  # written already
        data, proc.outgoing = b"".join(proc.outgoing), []
        if not proc.dead:
            proc.writer.write(data)

    # -- the watchdog --------------------------------------------------------------

    def _arm(self, proc: _Proc) -> None:
        """Time the job now at the head of ``proc``'s queue.

        A timer already set to fire no later is kept (jobs follow each other far
        faster than budgets run out): when it fires, :meth:`_expired` sets it
        again for the head job's own deadline. One timer then serves many jobs.
        """
        if not proc.queue:
            return  # a timer still set finds no job when it fires
        loop = asyncio.get_running_loop()
        proc.head_since = loop.time()
        proc.head_lag = self.lateness.total
        _job, left = proc.queue[0]
        proc.deadline = deadline = proc.head_since + left
        if proc.timer is not None:
            if proc.timer_at <= deadline:
                return
            proc.timer.cancel()
        proc.timer_at = deadline
        proc.timer = loop.call_at(deadline, self._expired, proc)

    def _expired(self, proc: _Proc) -> None:
        proc.timer = None
        if proc.dead or not proc.queue:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        # Set for an earlier head job (answered since), or the loop ran late meanwhile (not charged).
        left = proc.queue[0][1] - self._ran(proc, now)
        if left > 0:
            proc.deadline = proc.timer_at = now + left
            proc.timer = loop.call_at(proc.deadline, self._expired, proc)
            return
        loop.create_task(self._retire(proc))

    async def _retire(self, proc: _Proc) -> None:
        """The head job ran past its budget: find out where, kill the resolver, replace it."""
        job, _left = proc.queue[0]
        where = {"plugin": None, "hook": None, "step": None, **await where_stuck(proc)}
        if proc.dead or not proc.queue or proc.queue[0][0] is not job:
            return  # it answered just in time after all (its reply re-armed the watchdog)
        if where.pop("idle", False):
            # It has no job in hand: the job's message has not reached it yet (the loop was late
            # writing it). Not stuck: the watchdog times the job again.
            proc.timer = None
            self._arm(proc)
            return
        self._kill(proc)
        job.used = job.budget
        proc.queue.popleft()
        if job.future is not None and not job.future.done():
            job.future.set_exception(self._timeout(job, where))
        log.warning(
            "attack past its budget: resolver replaced",
            extra=fields(table=job.table, budget=job.budget, **{k: v for k, v in where.items() if v}),
        )
        self._orphan(proc)
        if not self._closed:
            # A spare is not replaced (unless the pool is short of ``size``): its replacement,
            # forked as one of the pool, was never retired, and the pool grew for good.
            if not proc.spare or sum(1 for p in self.procs if not p.dead) < self.size:
                self.replaced += 1
                self.procs.append(await self._fork())
            self._reroute(proc)

    def _timeout(self, job: Job, where: Mapping[str, Any]) -> PluginTimeout:
        plugin, step = where.get("plugin"), where.get("step")
        return PluginTimeout(
            f"plugin {plugin or '?'} ran past the attack's {job.budget:g} s budget"
            + (f" in step {step}" if step else "")
            + "; nothing was applied",
            details={"plugin": plugin, "hook": where.get("hook"), "step": step, "budget": job.budget},
        )

    def _kill(self, proc: _Proc) -> None:
        proc.dead = True
        if proc.timer is not None:
            proc.timer.cancel()
            proc.timer = None
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        if proc in self.procs:
            self.procs.remove(proc)
        proc.writer.close()
        asyncio.get_running_loop().create_task(self.reap(proc.pid, grace=0))

    def _orphan(self, proc: _Proc) -> None:
        """Jobs parked in a dead resolver will be replayed when their answer comes."""
        for job in proc.parked:
            job.worker = None
        proc.parked.clear()

    def _reroute(self, proc: _Proc) -> None:
        """Jobs queued behind the one that timed out: replay each on a live resolver."""
        waiting = list(proc.queue)
        proc.queue.clear()
        for job, _left in waiting:
            future = job.future
            if future is None or future.done():
                continue
            target = self._least_busy()
            job.worker = target
            target.queue.append((job, job.budget - job.used))
            if len(target.queue) == 1:
                self._arm(target)
            self._write(target, self._start_message(job, target))

    async def _read(self, proc: _Proc) -> None:
        """Wait for ``proc``'s socket to close (its replies are handled as they arrive: ``Replies``)."""
        assert proc.lost is not None
        try:
            await asyncio.shield(proc.lost)
        except asyncio.CancelledError:
            return  # the pool is closing
        if not proc.dead and not self._closed:
            # The resolver died by itself (a C extension crashed it, the OOM killer...).
            log.error("a resolver process died; replacing it", extra=fields(pid=proc.pid))
            self._kill(proc)
            self._orphan(proc)
            self.replaced += 1
            self.procs.append(await self._fork())
            self._reroute(proc)

    def _reply(self, proc: _Proc, reply: Reply) -> None:
        """A resolver's reply: the answer to the job at the head of its queue (or where it is stuck)."""
        if reply.kind == "stuck":
            if proc.stuck is not None and not proc.stuck.done():
                proc.stuck.set_result(reply.where)
            return
        if not proc.queue:
            return
        job, _left = proc.queue.popleft()
        now = proc.used = asyncio.get_running_loop().time()
        job.used += self._ran(proc, now)
        if reply.kind == "decision":
            proc.parked.add(job)
            job.sent += len(reply.steps)
        self._arm(proc)
        if job.future is not None and not job.future.done():
            job.future.set_result(reply)

    def _fail_all(self, proc: _Proc, exc: Exception) -> None:
        for job, _left in proc.queue:
            if job.future is not None and not job.future.done():
                job.future.set_exception(exc)
                job.future.exception()
        proc.queue.clear()

    @staticmethod
    async def reap(pid: int, *, grace: float) -> None:
        deadline = time.monotonic() + grace
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return
            if done:
                return
            if time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                grace = 10.0
                deadline = time.monotonic() + grace
            await asyncio.sleep(0.01)


def budget_of(settings: Mapping[str, Any]) -> float:
    value = settings.get("attack_budget")
    return float(value) if value is not None else DEFAULT_BUDGET


# -- attack.odds: warm odds processes ------------------------------------------------
#
# ``attack.odds`` on a budget, in warm odds processes.
#
# Odds are pure computation, but all of it is hook code: the probe resolution
# that validates the request, the ruleset's exact model, and up to 20,000 Monte
# Carlo resolutions. So nothing of it runs in the server process. The server
# forks its *odds processes* when it starts (``odds_concurrency`` of them, one
# by default: on a two-core machine one core is the event loop's and the
# resolvers', the other the odds'), each a resolver process
# (above) that inherits the loaded plugin host. One computes one
# request at a time and then waits for the next, its caches warm (the exact
# models' dice distributions, the compiled step plans): a request costs its
# computation plus two messages on a socket, not a fork. What goes wrong costs
# that process, never the server:
#
# - **a stuck hook** (a busy loop, a sleep, an exact model too slow): still
#   running ``grace`` seconds past the budget, the process is asked where it
#   is (``SIGUSR1``: plugin, hook, step), killed and replaced by a new fork;
#   the request is answered ``plugin_timeout`` naming them;
# - **a requester who leaves**: the process computing for them is killed at
#   once and replaced (its CPU goes back to the tables), the result dropped;
#   one still waiting for its turn gives the turn up;
# - **a process that dies** (a pack calling ``os._exit``, a crashing C
#   extension, the OOM killer): the request is answered ``plugin_error``
#   (``details.exit`` says how it ended) and the process replaced; one that
#   dies while idle is replaced too.
#
# An odds process that has had no request for ``idle`` seconds (``ODDS_IDLE``)
# ends, and the next request forks a fresh one (it pays the fork, a few
# milliseconds, and finds the caches cold): what a used one holds (its caches,
# the tokens of the tables it was sent) goes back to the machine while nobody
# asks for odds. A fresh, never used one costs little (≈4 MB of Pss: it shares
# its pages with the server and the resolvers).
#
# Three bounds apply:
#
# - **per user**: at most ``per_user`` odds requests of one user on one table
#   run at once; another is answered ``rate_limited`` (``details.retry_after``);
# - **per server**: at most ``concurrency`` computations run at once (one per
#   odds process); the rest wait their turn, first come first served, so odds
#   never crowd out the resolutions of every table (the wait is bounded: each
#   user has at most ``per_user`` waiting);
# - **time**: a Monte Carlo run stops ``budget`` seconds after its turn came
#   and reports the samples it ran (``notes`` says so); anything still running
#   ``grace`` seconds later is killed as above.

# How long a dead odds process has to be reaped before its exit status is read as unknown.
_EXIT_WAIT = 0.5
# An odds process that could not be forked is tried again this many seconds later.
_FORK_RETRY = 1.0
# Odds processes end after this many seconds without a request (see the module docstring).
ODDS_IDLE = 30.0


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class _OddsProcess:
    """One odds process, seen from the event loop."""

    __slots__ = ("pid", "writer", "task", "reply", "stuck", "busy", "retired", "served", "known")

    def __init__(self, pid: int, writer: asyncio.BaseTransport | Any) -> None:
        self.pid = pid
        self.writer = writer
        self.task: asyncio.Task[None] | None = None
        self.reply: asyncio.Future[tuple] | None = None  # the request being computed
        self.stuck: asyncio.Future[dict] | None = None  # its answer to SIGUSR1
        self.busy = False
        self.retired = False
        self.served = 0
        # The token snapshots it holds, by (table, token): sent again only when replaced.
        self.known = Held()  # the tables' tokens the process holds


class OddsRunner:
    """The odds processes and the bounds above.

    :ivar running: odds requests being computed or waiting their turn, by ``(table, user)``.
    :ivar procs: the live odds processes (``pid``, ``served``: requests answered).
    :ivar forked: odds processes forked so far (the first ones included); ``replaced``:
        those forked to replace one that was killed or died.
    """

    def __init__(
        self,
        *,
        budget: float = 2.0,
        per_user: int = 1,
        concurrency: int = 1,
        grace: float = 1.0,
        idle: float | None = ODDS_IDLE,
    ) -> None:
        self.budget = budget
        self.idle = idle
        self.per_user = per_user
        self.grace = grace
        self.size = max(1, concurrency)
        self.running: Counter[tuple[str, str]] = Counter()
        self.procs: list[_OddsProcess] = []
        self.forked = 0
        self.replaced = 0
        self.rested = 0  # processes ended after ``idle`` seconds without a request
        self._forking = 0  # forks on their way (a replacement, or one for a request)
        self._used = 0.0  # when a request last ended (the event loop's clock)
        self._rest: asyncio.TimerHandle | None = None
        self._host: Any = None
        self._idle: asyncio.Queue[_OddsProcess] = asyncio.Queue()  # waiting requests take them in turn
        self._ids = itertools.count(1)
        self._background: set[asyncio.Task[Any]] = set()
        self._stopped: asyncio.Future[None] | None = None
        self._closed = False

    # -- the processes -----------------------------------------------------------

    async def start(self, host: Any) -> None:
        """Fork the odds processes (``host``, loaded, is inherited); they wait for requests."""
        self._host = host
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        while len(self.procs) < self.size:
            self._ready(await self._fork())
        self._used = loop.time()
        self._arm_rest()

    def _arm_rest(self) -> None:
        if self.idle is None or self._rest is not None or self._closed:
            return
        loop = asyncio.get_running_loop()
        self._rest = loop.call_at(self._used + self.idle, self._resting)

    def _resting(self) -> None:
        """``idle`` seconds after the last request: the odds processes end (the next request forks)."""
        self._rest = None
        if self._closed or self.idle is None:
            return
        if self.running or self._forking or any(p.busy for p in self.procs):
            self._used = asyncio.get_running_loop().time()
        elif asyncio.get_running_loop().time() - self._used >= self.idle:
            for proc in list(self.procs):
                self.rested += 1
                self._retire(proc, replace=False)
            return
        self._arm_rest()

    async def close(self) -> None:
        """Stop: requests being computed or waiting fail with ``server_stopping``; the processes end."""
        self._closed = True
        if self._rest is not None:
            self._rest.cancel()
            self._rest = None
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)
        procs = list(self.procs)
        for proc in procs:
            self._retire(proc)
            if proc.reply is not None and not proc.reply.done():
                proc.reply.set_exception(ServerStopping("the server stopped while computing these odds"))
        await asyncio.gather(*(p.task for p in procs if p.task is not None), return_exceptions=True)
        # A replacement being forked finds the runner closed and is killed; every process is reaped.
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def _fork(self) -> _OddsProcess:
        # A resolver process: its loop answers Odds messages as well as attacks.
        pid, writer, lost = await fork_process(self._host, lambda message: self._message(proc, message))
        proc = _OddsProcess(pid, writer)
        proc.task = asyncio.get_running_loop().create_task(self._read(proc, lost), name=f"odds {pid}")
        self.forked += 1
        return proc

    def _ready(self, proc: _OddsProcess) -> None:
        self.procs.append(proc)
        self._idle.put_nowait(proc)

    def _retire(self, proc: _OddsProcess, *, replace: bool = True) -> None:
        """Kill ``proc`` (whatever it is doing) and, unless stopping (or ``replace`` is false), fork its replacement."""
        if proc.retired:
            return
        proc.retired = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.writer.close()
        if proc in self.procs:
            self.procs.remove(proc)
        self._later(Resolvers.reap(proc.pid, grace=0))
        if not self._closed and replace:
            self.replaced += 1
            self._spawn()

    def _spawn(self) -> None:
        """Fork an odds process in the background; it joins the idle ones once forked."""
        self._forking += 1
        self._later(self._replace())

    async def _replace(self) -> None:
        try:
            while not self._closed:
                try:
                    proc = await self._fork()
                except OSError:
                    log.exception("could not fork an odds process; trying again")
                    await asyncio.sleep(_FORK_RETRY)
                    continue
                if self._closed:
                    self._retire(proc)
                else:
                    self._ready(proc)
                    self._arm_rest()
                return
        finally:
            self._forking -= 1

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    def _message(proc: _OddsProcess, message: Reply) -> None:
        if message.kind == "stuck":
            if proc.stuck is not None and not proc.stuck.done():
                proc.stuck.set_result(message.where)
        elif proc.reply is not None and not proc.reply.done():
            proc.reply.set_result(message)

    async def _read(self, proc: _OddsProcess, lost: asyncio.Future[None]) -> None:
        try:
            await asyncio.shield(lost)
        except asyncio.CancelledError:
            return
        # The process has ended: killed by us, or by itself (os._exit, a crash, the OOM killer).
        if proc.reply is not None and not proc.reply.done():
            proc.reply.set_result(ENDED)
        elif not proc.busy and not proc.retired:
            log.error("an idle odds process died; replacing it", extra=fields(pid=proc.pid))
            self._retire(proc)

    # -- a request -----------------------------------------------------------------

    async def run(
        self,
        resolvers: Resolvers,
        caller: Caller,
        runtime: TableRuntime,
        request: Mapping[str, Any],
        tokens: Mapping[str, Token],
    ) -> dict[str, Any]:
        who = (caller.table, caller.user)
        if self.running[who] >= self.per_user:
            raise RateLimited(
                f"{caller.user} already has {self.running[who]} odds request(s) running; wait for the answer",
                details={"limit": "odds_per_user", "per_user": self.per_user, "retry_after": self.budget},
            )
        self.running[who] += 1
        departure = runtime.departure(caller.sid)
        try:
            if self._host is None and not self._closed:
                await self.start(resolvers.host)  # a bridge that was not started through Bridge.start
            for _ in range(self.size - len(self.procs) - self._forking):
                self._spawn()  # they ended after a while without requests
            proc = await self._turn(departure)
            if proc is None:
                return {"odds": None}  # nobody is left to read it
            odds = await self._compute(proc, runtime.id, tokens, request, departure)
        finally:
            self._used = asyncio.get_running_loop().time()
            runtime.forget(caller.sid, departure)
            self.running[who] -= 1
            if not self.running[who]:
                del self.running[who]
        return {"odds": odds}

    async def _turn(self, departure: asyncio.Future[Any]) -> _OddsProcess | None:
        """An idle odds process, in the order requests arrived; ``None`` if the requester left first."""
        while True:
            if self._closed:
                raise ServerStopping("the server is stopping")
            if departure.done():
                return None
            taking = asyncio.ensure_future(self._idle.get())
            assert self._stopped is not None
            try:
                await asyncio.wait({taking, departure, self._stopped}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                self._give_back(taking)
                raise
            if not taking.done():
                self._give_back(taking)
                continue
            proc = taking.result()
            if proc.retired:
                continue  # died while idle: its replacement is on its way
            if departure.done() or self._closed:
                self._idle.put_nowait(proc)
                continue
            return proc

    def _give_back(self, taking: asyncio.Future[_OddsProcess]) -> None:
        """A turn not taken: a process already handed over goes back; a wait is cancelled
        (``Queue.get`` then leaves its process for the next in line)."""
        if not taking.done():
            taking.cancel()
        elif not taking.cancelled() and taking.exception() is None:
            self._idle.put_nowait(taking.result())

    async def _compute(
        self,
        proc: _OddsProcess,
        table: str,
        tokens: Mapping[str, Token],
        request: Mapping[str, Any],
        departure: asyncio.Future[Any],
    ) -> dict[str, Any] | None:
        """Send one request to ``proc`` and wait for its answer, the requester leaving, or the budget."""
        loop = asyncio.get_running_loop()
        proc.busy, proc.reply = True, loop.create_future()
        reply = proc.reply
        keep = False
        try:
            forget, refs, new = proc.known.hand_off(table, tokens)
            messages: list[Request] = [Forget("forget", 0, name) for name in forget]
            messages.append(Odds("odds", next(self._ids), table, refs, new, dict(request), self.budget))
            for message in messages:
                proc.writer.write(frame(message))
            await asyncio.wait({reply, departure}, timeout=self.budget + self.grace, return_when=asyncio.FIRST_COMPLETED)
            if not reply.done():
                if departure.done():
                    return None  # nobody is left to read it: the process is killed (finally)
                where = await where_stuck(proc)
                if not reply.done():
                    raise self._timeout(where)
            answer = reply.result()
            if answer is ENDED:
                raise await self._ended(proc)
            keep = True
            if answer.kind == "error":
                proc.known.clear()  # whatever failed, the next request sends every token again
                raise error_from_dict(answer.error)
            return answer.odds
        finally:
            proc.busy, proc.reply = False, None
            if keep and not proc.retired:
                proc.served += 1
                self._idle.put_nowait(proc)
            else:
                # Stuck, crashed, abandoned or cancelled mid-way: a fresh process takes its place.
                self._retire(proc)

    def _timeout(self, where: Mapping[str, Any]) -> VTTError:
        plugin, step = where.get("plugin"), where.get("step")
        log.warning("odds past their budget: process replaced", extra=fields(budget=self.budget, plugin=plugin))
        return PluginTimeout(
            f"plugin {plugin or '?'} ran past the {self.budget:g} s budget of attack.odds"
            + (f" in step {step}" if step else "")
            + "; no odds were computed",
            details={"plugin": plugin, "hook": where.get("hook"), "step": step, "budget": self.budget},
        )

    async def _ended(self, proc: _OddsProcess) -> VTTError:
        """The error for a process that died while computing (it is replaced: the caller retires it)."""
        how = "unknown"
        for _ in range(int(_EXIT_WAIT / 0.01)):
            try:
                pid, status = os.waitpid(proc.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                code = os.waitstatus_to_exitcode(status)
                how = f"exit status {code}" if code >= 0 else f"signal {_signal_name(-code)}"
                break
            await asyncio.sleep(0.01)
        log.error("an odds process died while computing; replacing it", extra=fields(pid=proc.pid, exit=how))
        return PluginError(
            f"the odds process ended while computing ({how}): a plugin's hook ended it; no odds were computed",
            details={"plugin": None, "hook": None, "step": None, "exit": how},
        )
