"""Inside a sandbox process: the loop that runs third-party hooks for the pool (:mod:`.pool`).

A sandbox process is forked from the server (:func:`fork_child`), so it
inherits the loaded plugin host; it reads typed messages (one ``NamedTuple``
per kind, below) framed as :func:`frame` writes them, works on one job at a
time (an attack's resolution, kept between its decisions, or one
``attack.odds``) and answers each with one message. On ``SIGUSR1`` it says
where the job in hand is stuck (plugin, hook, step) or that it has none.
Nothing here imports the event loop's side: :mod:`.pool` imports this module.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import pickle
import signal
import socket
import struct
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ..engine.tokens import Token
from ..errors import InternalError, PluginError, VTTError
from ..odds import compute_odds
from ..whatif import run_what_if
from ..state import codec
from .attackwire import attack_payload

log = logging.getLogger("vtt_bridge.server")

HEADER = struct.Struct("!I")


def frame(message: Any) -> bytes:
    """The one framing of every message between the event loop and a pool process:
    its pickle's length (:data:`HEADER`), then the pickle."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


# The longest a resolver holds a finished job's reply to send it with the next ones.
_HOLD = 0.002
# A resolver moves what it allocated out of its collector's sight at most this often (after
# a job), and collects everything this often. Its young collections otherwise walked every
# token snapshot received since the last one (the server's thresholds, inherited: a freed old
# snapshot counts against a new one), up to 0.1 s of CPU each at 2,000 tables, while its jobs
# waited; and in play it makes no cyclic garbage (not one object freed in 30 such collections).
# The same reasoning as the server's (runner.Collector), on a resolver's own clock.
_FREEZE_EVERY = 0.05
_COLLECT_EVERY = 1800.0


def send_blocking(sock: socket.socket, message: Any) -> None:
    sock.sendall(frame(message))


def unframe(buffer: bytearray, handle: Callable[[Any], Any]) -> None:
    """Hand each whole message at the start of ``buffer`` (as :func:`frame` wrote it) to
    ``handle``, in order; what was handed over leaves ``buffer``, a message not whole yet stays."""
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


class Frames:
    """Messages from a blocking socket, read in large chunks (several messages per system call)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.whole: deque[Any] = deque()  # messages read, not handed out yet

    def next(self) -> Any:
        """The next message, or ``None`` once the other side has closed."""
        while not self.whole and self.read(0):
            pass
        return self.whole.popleft() if self.whole else None

    def ready(self) -> bool:
        """Whether a whole message (or the end) can be read without waiting."""
        return bool(self.whole) or not self.read(socket.MSG_DONTWAIT) or bool(self.whole)

    def read(self, flags: int) -> bool:
        """Read what there is (``flags``: 0 waits for it); false once the other side has closed."""
        try:
            chunk = self.sock.recv(1 << 16, flags)
        except (BlockingIOError, InterruptedError):
            return True
        if not chunk:
            return False
        self.buffer += chunk
        unframe(self.buffer, self.whole.append)
        return True


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


def where_in(frame: Any, host: Any) -> dict[str, Any]:
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


class Worker:
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
        self.frozen_at = self.collected_at = time.monotonic()  # see _FREEZE_EVERY

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
                send_blocking(self.sock, Stuck("stuck", None, {"idle": True}))
            else:
                send_blocking(self.sock, Stuck("stuck", self.current, where_in(frame, self.host)))

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
        frames = Frames(self.sock)
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
            now = time.monotonic()
            if not self.held:
                self.held_since = now
            self.held.append(frame(reply))
            if now - self.frozen_at >= _FREEZE_EVERY:
                self.frozen_at = now
                if now - self.collected_at >= _COLLECT_EVERY:
                    self.collected_at = now
                    gc.unfreeze()  # (what it inherited too: its pages are copied, once in a while)
                    gc.collect()
                gc.freeze()

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
            # The table's packs (issue 28): a host per pack set, made once in this process.
            res = self.host.for_packs(spec.get("packs")).start(spec["ruleset"], tokens, **spec["args"])
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
            plan = request.get("whatif")
            if plan is not None:  # attack.whatif: a logged attack again, on the tokens just before it
                return OddsDone("odds", job_id, run_what_if(self.host, plan, request["record"], snapshot).to_dict())
            result = compute_odds(
                self.host.for_packs(request.get("packs")),
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
    worker = Worker(sock, host)
    signal.signal(signal.SIGUSR1, worker.report)
    signal.signal(signal.SIGALRM, worker.overdue)
    worker.run()


def fork_child(host: Any) -> tuple[int, socket.socket]:
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
