"""The sandbox pool: the processes every third-party hook runs in, attacks and odds alike.

No hook code runs on a server's event loop. A server forks its sandbox
processes when it starts (the plugin host is inherited, already loaded; the
loop inside each is :mod:`.sandbox`). This module is the event loop's side:
one :class:`Pool`, one fork (:meth:`Pool.fork`), one framing
(:func:`.sandbox.frame`), one watchdog (``Pool._arm``) that kills and
replaces a process whose job in hand ran past its budget, whichever kind of
job it was, and two lanes:

- **attacks** (``procs``: ``serve --resolvers`` of them, and as many spares
  again at most). An attack is a *job*: the event loop sends it to the
  first resolver that keeps up (the least busy one when none does: see
  ``Pool._pick``), which starts the engine's :class:`~vtt_bridge.Resolution`
  and advances it until it asks a Decision or ends. The event loop asks the
  decider, sends the answer back, and the resolver advances the same
  generator again: the resolution lives in the resolver between decisions.
  A resolver holds many parked jobs and works on one at a time, in order.
- **odds** (:class:`OddsRunner`: ``odds_concurrency`` processes, one by
  default, reserved for ``attack.odds``, one request at a time each), so a
  long Monte Carlo run never holds up a table's attack.

So a server never has more than ``2 × resolvers + odds_concurrency``
processes under it.

Each job has a time budget (an attack: its table's ``attack_budget``, the
seconds its hooks may run, decisions not counted; odds: ``odds_budget`` and a
grace). The time charged leaves out the event loop's own lateness
(:class:`Lateness`). Past its budget the process is asked (``SIGUSR1``) which
plugin, hook and step it is in, then killed with ``SIGKILL`` and replaced by a
fresh fork; the job fails with ``plugin_timeout`` and nothing is applied. The
other attacks queued on or parked in the killed resolver are *replayed* on
another one: the engine is deterministic given its seed (or scripted dice),
its tokens, its declaration and the answers so far, so starting it again and
feeding it the recorded answers reaches the same point — they notice a delay,
not a failure. Why processes and not threads: a thread stuck in a hook cannot
be stopped, keeps its share of the GIL if it spins, and every stuck thread
would be lost for good; a process is killed and its memory returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import os
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING, Any

from ..engine.tokens import Token
from ..errors import (
    InternalError,
    PluginError,
    PluginTimeout,
    RateLimited,
    ServerStopping,
    error_from_dict,
)
from ..state.records import token_wire
from .logs import fields
from .sandbox import Drop, Forget, Odds, Reply, Request, Settle, Start, fork_child, frame, unframe

if TYPE_CHECKING:  # for annotations only: the pool is below the tables
    from .session import Caller
    from .tables import TableRuntime

__all__ = ["DEFAULT_BUDGET", "ODDS_IDLE", "REPORT_GRACE", "Held", "Job", "OddsRunner", "Pool", "Replies", "budget_of"]

log = logging.getLogger("vtt_bridge.server")

# Seconds of hook time an attack may use when its table sets no attack_budget.
DEFAULT_BUDGET = 5.0
# How long a resolver past its budget has to say where it is stuck.
REPORT_GRACE = 0.2


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


# A resolver whose current job has run this long is passed over for new jobs.
_SLOW = 0.25
# A new job goes to the first resolver with fewer jobs than this waiting on it whose job in
# hand began less than _BRIEF seconds ago; the least busy one when none does (see _pick).
# 32 duel jobs are about 5 ms of work; with 8, a fifth of a steady load still went to a
# second, cold resolver (docs/deploy.md, "Measured").
_KEEPS_UP = 32
_BRIEF = 0.005
# A resolver forked as a spare (every resolver was held up by a slow hook) is retired
# once it has had no job for this many seconds, while more than ``size`` are running.
SPARE_IDLE = 30.0
# The tables whose tokens a resolver (or odds process) keeps between jobs: the least
# recently used beyond this many are forgotten (sent again in full if used again). A table
# forgotten costs its next attack all its tokens pickled, sent and rebuilt (with 64, at
# 2,000 tables taking turns, every attack did: ~15% of the server's CPU); each table held
# costs the resolver holding it ~7 KB per token, and a table's jobs stay on one resolver
# while it keeps up (_pick), so each table is held about once.
TABLES_HELD = 4096
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
        self.minute: deque[float] = deque(maxlen=int(60 / BEAT))  # the last minute's beats (/healthz)

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.due = loop.time() + BEAT
        self.timer = loop.call_at(self.due, self.beat)

    def beat(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.recent = max(0.0, now - self.due)
        self.total += self.recent
        self.minute.append(self.recent)
        self.due = now + BEAT
        self.timer = loop.call_at(self.due, self.beat)

    def last_minute(self) -> dict[str, float]:
        """How late the heartbeat ran over the last minute, in ms: its median, 99th percentile
        and worst beat (a loop late by more than its share of a core keeps its clients waiting)."""
        beats = sorted(self.minute) or [0.0]
        ms = {"p50": beats[len(beats) // 2], "p99": beats[min(len(beats) - 1, len(beats) * 99 // 100)], "max": beats[-1]}
        return {name: round(late * 1000, 1) for name, late in ms.items()}

    def since(self, mark: float, now: float) -> float:
        """Lateness summed since ``mark`` (an earlier ``total``), the beat due now included."""
        return self.total - mark + max(0.0, now - self.due)

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class Replies(asyncio.Protocol):
    """The event loop's end of a resolver's socket: each whole message is handled in the
    callback that read it (:meth:`Pool._reply`), with no reader task to wake first, so
    a reply completes its job's future one turn of the event loop sooner."""

    def __init__(self, handle: Callable[[Any], Any]) -> None:
        self.handle = handle
        self.buffer = bytearray()
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        unframe(self.buffer, self.handle)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)


class Held:
    """The tables' tokens one child process holds, as the event loop sees them.

    A job is sent with its table's tokens as a delta against what the process
    holds from earlier jobs (:meth:`hand_off`): the snapshots it does not hold
    in their current version, and the ids in order only when they are not the
    ones held (a token created or deleted since; the first job of a table).
    The child applies the same steps (``Worker.table``), so both sides keep
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
    """One job for a sandbox process: an attack being resolved, or one ``attack.odds``.

    :ivar spec: ``{"ruleset", "args"}``: what ``host.start`` is called with.
    :ivar tokens: the table's tokens when the job began (a replay needs them).
    :ivar settled: ``(answer, how)`` for every decision so far, in order.
    :ivar sent: how many finished steps the table has been sent.
    :ivar budget: seconds of hook time; ``used`` so far; ``grace``: how much longer the
        watchdog waits before it kills (odds: a Monte Carlo run stops itself at ``budget``).
    """

    table: str
    spec: dict[str, Any]
    tokens: Mapping[str, Token]
    budget: float
    id: int = 0
    settled: list[tuple[Any, str]] = field(default_factory=list)
    sent: int = 0
    used: float = 0.0
    grace: float = 0.0
    odds: bool = False
    worker: _Proc | None = None
    future: asyncio.Future[Any] | None = None


class _Proc:
    """One sandbox process, seen from the event loop; ``lane``: ``"attacks"`` or ``"odds"``."""

    def __init__(self, pid: int, lane: str) -> None:
        self.pid = pid
        self.lane = lane
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
        self.replaced = False  # its lane was told it is gone (once)
        self.served = 0  # jobs answered (odds)



class Pool:
    """The sandbox processes (see the module docstring): ``procs``, the attacks' resolvers
    (``size`` of them, and as many spares again at most), and the odds lane's processes
    (:class:`OddsRunner`, ``odds_concurrency`` of them). One fork, one framing, one watchdog
    and one way to replace a process that is stuck or dies, for both.

    :param host: the plugin host; forked into each process.
    :param size: how many resolvers (``serve --resolvers``).
    """

    def __init__(self, host: Any, *, size: int = 2) -> None:
        self.host = host
        self.size = max(1, size)
        self.procs: list[_Proc] = []
        self.odds: OddsRunner | None = None  # the odds lane, once it started
        self._ids = itertools.count(1)
        self._closed = False
        self.replaced = 0
        self._forking = 0  # resolvers being forked (not in ``procs`` until connected)
        self.spares = 0  # forked as spares so far; ``retired``: those ended once idle
        self.retired = 0
        self.lateness = Lateness()
        self._background: set[asyncio.Task[Any]] = set()

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
            self.procs.append(await self.fork("attacks"))
        self.lateness.start()

    async def fork(self, lane: str) -> _Proc:
        """A new sandbox process (it freezes what it inherits itself: see ``sandbox._child``)."""
        pid, sock = fork_child(self.host)
        proc = _Proc(pid, lane)
        pipe = Replies(lambda reply: self._reply(proc, reply))
        counted = lane == "attacks"  # a resolver forked meanwhile counts it, so the bound holds
        self._forking += counted
        try:
            proc.writer, _ = await asyncio.get_running_loop().create_connection(lambda: pipe, sock=sock)
        finally:
            self._forking -= counted
        proc.lost = pipe.lost
        proc.task = asyncio.get_running_loop().create_task(self._read(proc), name=f"{lane} {proc.pid}")
        return proc

    async def close(self) -> None:
        self._closed = True
        self.lateness.stop()
        if self.odds is not None:
            await self.odds.close()
        procs, self.procs = self.procs, []
        for proc in procs:
            self.kill(proc, InternalError("the server is stopping"), signum=None, reap=False)
        for proc in procs:
            await self.reap(proc.pid, grace=1.0)
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- running jobs ------------------------------------------------------------

    def job(self, table: str, spec: dict[str, Any], tokens: Mapping[str, Token], budget: float) -> Job:
        return Job(table=table, spec=spec, tokens=tokens, budget=budget, id=next(self._ids))

    async def begin(self, job: Job) -> Reply:
        """Start ``job``; returns the resolver's first reply (``decision``, ``done`` or ``error``)."""
        return await self._dispatch(job, await self._pick(job.table), fresh=True)

    async def settle(self, job: Job, answer: Any, how: str) -> Reply:
        """Give the parked ``job`` its decision's outcome; returns the next reply."""
        job.settled.append((answer, how))
        proc = job.worker
        if proc is None or proc.dead:
            # Its resolver is gone: replay it (with every answer so far) on another.
            return await self._dispatch(job, await self._pick(job.table), fresh=True)
        proc.parked.discard(job)
        return await self._dispatch(job, proc, fresh=False, message=Settle("settle", job.id, answer, how))

    def drop(self, job: Job) -> None:
        """Forget a parked job (its attack was abandoned)."""
        proc = job.worker
        job.worker = None
        if proc is not None and not proc.dead and job in proc.parked:
            proc.parked.discard(job)
            self._write(proc, Drop("drop", job.id))

    async def compute_odds(self, proc: _Proc, job: Job, request: dict[str, Any]) -> Reply:
        """Run an odds ``job`` on the odds process ``proc``; its reply (``odds`` or ``error``)."""
        forget, refs, new = proc.known.hand_off(job.table, job.tokens)
        for table in forget:
            self._write(proc, Forget("forget", 0, table))
        message = Odds("odds", job.id, job.table, refs, new, request, job.budget)
        return await self._dispatch(job, proc, fresh=False, message=message)

    async def _pick(self, table: str | None = None) -> _Proc:
        """A resolver for a new job on ``table``: one not held up by a slow hook, forking a
        spare if need be; the one that holds the table's tokens when it keeps up.

        Spares are bounded (as many again as ``size``), so hooks that hang
        everywhere cost a bounded number of processes, each retired at its budget.
        """
        now = asyncio.get_running_loop().time()
        live = [p for p in self.procs if not p.dead]
        free = [p for p in live if not p.queue or self._ran(p, now) < _SLOW]
        if free:
            for proc in free:
                if table in proc.known.tables:
                    if not proc.queue or (len(proc.queue) < _KEEPS_UP and self._ran(proc, now) < _BRIEF):
                        return proc
                    break
            # The first resolver that keeps up takes the job (a short queue, its job in hand
            # begun moments ago): one that works through jobs in a row runs them with its
            # caches warm, while one woken for each job runs it about twice as slow
            # (bench/server_bench.py measures both). Another takes jobs once it falls behind.
            for proc in free:
                if not proc.queue or (len(proc.queue) < _KEEPS_UP and self._ran(proc, now) < _BRIEF):
                    return proc
            return min(free, key=lambda p: len(p.queue))
        if self.lateness.recent >= _SLOW:
            return self._least_busy()  # the loop itself is late: the resolvers' replies wait unread
        if len(live) + self._forking < 2 * self.size and not self._closed:
            # Counted while it is forked: jobs that arrive meanwhile must not fork spares of their own.
            proc = await self.fork("attacks")
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
        self.retired += 1
        self.kill(proc, signum=None)  # the process reads the end of its socket and exits

    def _least_busy(self) -> _Proc:
        live = [p for p in self.procs if not p.dead]
        if not live:
            raise InternalError("no resolver is running")
        return min(live, key=lambda p: len(p.queue))

    async def _dispatch(self, job: Job, proc: _Proc, *, fresh: bool, message: Request | None = None) -> Reply:
        left = job.budget + job.grace - job.used
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
            # The process has nothing else to do: it is woken now, not a turn of the loop later.
            self._arm(proc)
            self._flush(proc)
        return await job.future

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

    # -- the watchdog (every process, both lanes) ------------------------------------

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
        self.later(self._stuck(proc))

    async def _stuck(self, proc: _Proc) -> None:
        """The head job ran past its budget: find out where, kill the process, replace it."""
        job, _left = proc.queue[0]
        where = {"plugin": None, "hook": None, "step": None, **await where_stuck(proc)}
        if proc.dead or not proc.queue or proc.queue[0][0] is not job:
            return  # it answered just in time after all (its reply re-armed the watchdog)
        if where.pop("idle", False):
            # It has no job in hand: the job's message has not reached it yet (the loop was late
            # writing it). Not stuck: the watchdog times the job again.
            self._arm(proc)
            return
        job.used = job.budget + job.grace
        proc.queue.popleft()
        if job.future is not None and not job.future.done():
            job.future.set_exception(self._timeout(job, where))
        log.warning(
            "odds past their budget: process replaced" if job.odds else "attack past its budget: resolver replaced",
            extra=fields(table=job.table, budget=job.budget, **{k: v for k, v in where.items() if v}),
        )
        await self._replace(proc)

    def _timeout(self, job: Job, where: Mapping[str, Any]) -> PluginTimeout:
        plugin, step = where.get("plugin"), where.get("step")
        return PluginTimeout(
            f"plugin {plugin or '?'} ran past the "
            + (f"{job.budget:g} s budget of attack.odds" if job.odds else f"attack's {job.budget:g} s budget")
            + (f" in step {step}" if step else "")
            + ("; no odds were computed" if job.odds else "; nothing was applied"),
            details={"plugin": plugin, "hook": where.get("hook"), "step": step, "budget": job.budget},
        )

    def kill(self, proc: _Proc, error: Exception | None = None, *, signum: int | None = signal.SIGKILL, reap: bool = True) -> None:
        """End ``proc`` (``signum``; ``None``: close its socket, it exits by itself); its queued
        jobs fail with ``error`` (none: they stay queued, for :meth:`_replace` to reroute)."""
        if proc.dead:
            return
        proc.dead = True
        if proc.timer is not None:
            proc.timer.cancel()
            proc.timer = None
        if signum is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signum)
        if proc in self.procs:
            self.procs.remove(proc)
        proc.writer.close()
        if proc.task is not None:
            proc.task.cancel()
        if error is not None:
            for job, _left in proc.queue:
                if job.future is not None and not job.future.done():
                    job.future.set_exception(error)
                    job.future.exception()
            proc.queue.clear()
        if reap:
            self.later(self.reap(proc.pid, grace=0 if signum else 1.0))

    async def _replace(self, proc: _Proc) -> None:
        """``proc`` is stuck or ended: kill it, fork a process in its place (its lane's rule),
        and replay the jobs it held elsewhere (attacks: parked ones when their answer comes)."""
        self.kill(proc)
        if proc.replaced:
            return  # stuck and found dead at once: replaced already
        proc.replaced = True
        for job in proc.parked:
            job.worker = None
        proc.parked.clear()
        if self._closed:
            return
        if proc.lane == "odds":
            if self.odds is not None:
                self.odds.lost(proc)
            return
        # A spare is not replaced (unless the pool is short of ``size``): its replacement,
        # forked as one of the pool, was never retired, and the pool grew for good.
        if not proc.spare or sum(1 for p in self.procs if not p.dead) < self.size:
            self.replaced += 1
            self.procs.append(await self.fork("attacks"))
        waiting = list(proc.queue)
        proc.queue.clear()
        for job, _left in waiting:
            if job.future is None or job.future.done():
                continue
            target = self._least_busy()
            job.worker = target
            target.queue.append((job, job.budget + job.grace - job.used))
            if len(target.queue) == 1:
                self._arm(target)
            self._write(target, self._start_message(job, target))

    async def _read(self, proc: _Proc) -> None:
        """Wait for ``proc``'s socket to close (its replies are handled as they arrive: ``Replies``)."""
        assert proc.lost is not None
        try:
            await asyncio.shield(proc.lost)
        except asyncio.CancelledError:
            return  # killed, or the pool is closing
        if proc.dead or self._closed:
            return
        # It ended by itself (a pack calling os._exit, a C extension crashing it, the OOM killer).
        how = await self.reap(proc.pid, grace=_EXIT_WAIT)
        if proc.dead:
            return  # the watchdog killed it meanwhile, and replaces it
        log.error("a sandbox process died; replacing it", extra=fields(pid=proc.pid, lane=proc.lane, exit=how))
        if proc.lane == "odds":
            error = PluginError(
                f"the odds process ended while computing ({how}): a plugin's hook ended it; no odds were computed",
                details={"plugin": None, "hook": None, "step": None, "exit": how},
            )
            self.kill(proc, error, reap=False)
        self.later(self._replace(proc))  # not awaited: killing it cancels this task

    def _reply(self, proc: _Proc, reply: Reply) -> None:
        """A process's reply: the answer to the job at the head of its queue (or where it is stuck)."""
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

    @staticmethod
    async def reap(pid: int, *, grace: float) -> str:
        """Wait for ``pid`` to end (killed past ``grace`` seconds); how it ended."""
        deadline = time.monotonic() + grace
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return "unknown"
            if done:
                code = os.waitstatus_to_exitcode(status)
                return f"exit status {code}" if code >= 0 else f"signal {_signal_name(-code)}"
            if time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                grace = 10.0
                deadline = time.monotonic() + grace
            await asyncio.sleep(0.01)


def budget_of(settings: Mapping[str, Any]) -> float:
    value = settings.get("attack_budget")
    return float(value) if value is not None else DEFAULT_BUDGET


# -- the odds lane -----------------------------------------------------------------
#
# ``attack.odds`` is pure computation, but all of it is hook code (the probe
# resolution that validates the request, the ruleset's exact model, up to 20,000
# Monte Carlo resolutions), so it runs in the pool's processes too: in
# ``concurrency`` of them (``odds_concurrency``, one by default) reserved for
# odds, so a long Monte Carlo run never holds up a table's attack, and the
# pool never has more than ``2 × resolvers + odds_concurrency`` processes.
# One computes one request at a time, its caches warm (the exact models' dice
# distributions, the compiled step plans). The pool's watchdog times it:
# still running ``grace`` seconds past the budget (a Monte Carlo run stops
# itself at the budget and reports the samples it ran), it is killed and
# replaced like a resolver, the request answered ``plugin_timeout``; one that
# dies while computing answers ``plugin_error`` (``details.exit``). A requester
# who leaves has their process killed at once and replaced (its CPU goes back
# to the tables); one still waiting for a turn gives it up. Bounds: at most
# ``per_user`` requests of one user on one table at once (else
# ``rate_limited``), and the processes' turns first come, first served. After
# ``idle`` seconds without a request (``ODDS_IDLE``) the odds processes end and
# the next request forks one (a few milliseconds; what a used one held goes
# back to the machine meanwhile).

# How long a dead odds process has to be reaped before its exit status is read as unknown.
_EXIT_WAIT = 0.5
# An odds process that could not be forked is tried again this many seconds later.
_FORK_RETRY = 1.0
# Odds processes end after this many seconds without a request (see above).
ODDS_IDLE = 30.0


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class OddsRunner:
    """The odds lane of the pool and its bounds (see above).

    :ivar running: odds requests being computed or waiting their turn, by ``(table, user)``.
    :ivar procs: the live odds processes (``pid``, ``served``: requests answered).
    :ivar forked: odds processes forked so far (the first ones included); ``replaced``:
        those forked to replace one that was killed or died; ``rested``: ended after ``idle``.
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
        self.procs: list[_Proc] = []
        self.forked = 0
        self.replaced = 0
        self.rested = 0
        self._forking = 0  # forks on their way (a replacement, or one for a request)
        self._used = 0.0  # when a request last ended (the event loop's clock)
        self._rest: asyncio.TimerHandle | None = None
        self._pool: Pool | None = None
        self._idle: asyncio.Queue[_Proc] = asyncio.Queue()  # waiting requests take them in turn
        self._stopped: asyncio.Future[None] | None = None
        self._closed = False

    async def start(self, pool: Pool) -> None:
        """Fork the odds processes in ``pool``; they wait for requests."""
        self._pool = pool
        pool.odds = self
        loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        while len(self.procs) < self.size:
            self._ready(await self._fork())
        self._used = loop.time()
        self._arm_rest()

    async def _fork(self) -> _Proc:
        assert self._pool is not None
        proc = await self._pool.fork("odds")
        self.forked += 1
        return proc

    def _ready(self, proc: _Proc) -> None:
        self.procs.append(proc)
        self._idle.put_nowait(proc)

    def _arm_rest(self) -> None:
        if self.idle is None or self._rest is not None or self._closed:
            return
        self._rest = asyncio.get_running_loop().call_at(self._used + self.idle, self._resting)

    def _resting(self) -> None:
        """``idle`` seconds after the last request: the odds processes end (the next request forks)."""
        self._rest = None
        if self._closed or self.idle is None:
            return
        now = asyncio.get_running_loop().time()
        if self.running or self._forking or any(p.queue for p in self.procs):
            self._used = now
        elif now - self._used >= self.idle:
            for proc in list(self.procs):
                self.rested += 1
                self._end(proc)
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
        for proc in list(self.procs):
            self._end(proc, ServerStopping("the server stopped while computing these odds"))

    def _end(self, proc: _Proc, error: Exception | None = None) -> None:
        if proc in self.procs:
            self.procs.remove(proc)
        if self._pool is not None:
            self._pool.kill(proc, error)

    def lost(self, proc: _Proc) -> None:
        """The pool killed ``proc`` (stuck) or saw it end: a fresh one takes its place."""
        self._end(proc)
        if not self._closed:
            self.replaced += 1
            self._spawn()

    def _spawn(self) -> None:
        """Fork an odds process in the background; it joins the idle ones once forked."""
        assert self._pool is not None
        self._forking += 1
        self._pool.later(self._replace())

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
                    self._end(proc)
                else:
                    self._ready(proc)
                    self._arm_rest()
                return
        finally:
            self._forking -= 1

    # -- a request -----------------------------------------------------------------

    async def run(
        self,
        pool: Pool,
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
            if self._pool is None and not self._closed:
                await self.start(pool)  # a bridge that was not started through Bridge.start
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

    async def _turn(self, departure: asyncio.Future[Any]) -> _Proc | None:
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
            if proc.dead:
                continue  # died while idle: its replacement is on its way
            if departure.done() or self._closed:
                self._idle.put_nowait(proc)
                continue
            return proc

    def _give_back(self, taking: asyncio.Future[_Proc]) -> None:
        """A turn not taken: a process already handed over goes back; a wait is cancelled
        (``Queue.get`` then leaves its process for the next in line)."""
        if not taking.done():
            taking.cancel()
        elif not taking.cancelled() and taking.exception() is None:
            self._idle.put_nowait(taking.result())

    async def _compute(
        self,
        proc: _Proc,
        table: str,
        tokens: Mapping[str, Token],
        request: Mapping[str, Any],
        departure: asyncio.Future[Any],
    ) -> dict[str, Any] | None:
        """Run one request on ``proc``: its answer, or ``None`` once the requester left."""
        assert self._pool is not None
        job = self._pool.job(table, {}, tokens, self.budget)
        job.grace, job.odds = self.grace, True
        computing = asyncio.ensure_future(self._pool.compute_odds(proc, job, dict(request)))
        keep = False
        try:
            await asyncio.wait({computing, departure}, return_when=asyncio.FIRST_COMPLETED)
            if not computing.done():
                return None  # nobody is left to read it: the process is killed (finally)
            answer = computing.result()  # plugin_timeout, plugin_error (it ended), server_stopping
            keep = True
            if answer.kind == "error":
                proc.known.clear()  # whatever failed, the next request sends every token again
                raise error_from_dict(answer.error)
            return answer.odds
        finally:
            if keep and not proc.dead:
                proc.served += 1
                self._idle.put_nowait(proc)
            elif not proc.dead:
                # Abandoned or cancelled mid-way: a fresh process takes its place.
                self._pool.kill(proc, InternalError("the odds were abandoned"))
                self.lost(proc)
            if not computing.done():
                computing.cancel()
            elif not computing.cancelled():
                computing.exception()  # retrieved: the requester left, or it was raised above
