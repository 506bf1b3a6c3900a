"""``attack.odds`` on a budget, in warm odds processes.

Odds are pure computation, but all of it is hook code: the probe resolution
that validates the request, the ruleset's exact model, and up to 20,000 Monte
Carlo resolutions. So nothing of it runs in the server process. The server
forks its *odds processes* when it starts (``odds_concurrency`` of them, one
by default: on a two-core machine one core is the event loop's and the
resolvers', the other the odds'), each a resolver process
(:mod:`.workers`) that inherits the loaded plugin host. One computes one
request at a time and then waits for the next, its caches warm (the exact
models' dice distributions, the compiled step plans): a request costs its
computation plus two messages on a socket, not a fork. What goes wrong costs
that process, never the server:

- **a stuck hook** (a busy loop, a sleep, an exact model too slow): still
  running ``grace`` seconds past the budget, the process is asked where it
  is (``SIGUSR1``: plugin, hook, step), killed and replaced by a new fork;
  the request is answered ``plugin_timeout`` naming them;
- **a requester who leaves**: the process computing for them is killed at
  once and replaced (its CPU goes back to the tables), the result dropped;
  one still waiting for its turn gives the turn up;
- **a process that dies** (a pack calling ``os._exit``, a crashing C
  extension, the OOM killer): the request is answered ``plugin_error``
  (``details.exit`` says how it ended) and the process replaced; one that
  dies while idle is replaced too.

An odds process that has had no request for ``idle`` seconds (``ODDS_IDLE``)
ends, and the next request forks a fresh one (it pays the fork, a few
milliseconds, and finds the caches cold): what a used one holds (its caches,
the tokens of the tables it was sent) goes back to the machine while nobody
asks for odds. A fresh, never used one costs little (≈4 MB of Pss: it shares
its pages with the server and the resolvers).

Three bounds apply:

- **per user**: at most ``per_user`` odds requests of one user on one table
  run at once; another is answered ``rate_limited`` (``details.retry_after``);
- **per server**: at most ``concurrency`` computations run at once (one per
  odds process); the rest wait their turn, first come first served, so odds
  never crowd out the resolutions of every table (the wait is bounded: each
  user has at most ``per_user`` waiting);
- **time**: a Monte Carlo run stops ``budget`` seconds after its turn came
  and reports the samples it ran (``notes`` says so); anything still running
  ``grace`` seconds later is killed as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import signal
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..engine.tokens import Token
from ..errors import PluginError, PluginTimeout, RateLimited, ServerStopping, VTTError, error_from_dict
from .logs import fields
from .session import Caller
from .tables import TableRuntime
from .workers import HEADER, REPORT_GRACE, Held, Resolvers, fork_resolver, read_messages

__all__ = ["OddsRunner"]

log = logging.getLogger("vtt_bridge.server")

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

    def __init__(self, pid: int, writer: asyncio.StreamWriter) -> None:
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
        # A resolver process: its loop answers ("odds", ...) messages as well as attacks.
        pid, reader, writer = await fork_resolver(self._host)
        proc = _OddsProcess(pid, writer)
        proc.task = asyncio.get_running_loop().create_task(self._read(proc, reader), name=f"odds {pid}")
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

    async def _read(self, proc: _OddsProcess, reader: asyncio.StreamReader) -> None:
        def handle(message: Any) -> None:
            if message[0] == "stuck":
                if proc.stuck is not None and not proc.stuck.done():
                    proc.stuck.set_result(message[2])
            elif proc.reply is not None and not proc.reply.done():
                proc.reply.set_result(message)

        if not await read_messages(reader, handle):
            return
        # The process has ended: killed by us, or by itself (os._exit, a crash, the OOM killer).
        if proc.reply is not None and not proc.reply.done():
            proc.reply.set_result(("ended",))
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
            messages = [("forget", 0, name) for name in forget]
            messages.append(("odds", next(self._ids), table, refs, new, dict(request), self.budget))
            for message in messages:
                body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
                proc.writer.write(HEADER.pack(len(body)) + body)
            await asyncio.wait({reply, departure}, timeout=self.budget + self.grace, return_when=asyncio.FIRST_COMPLETED)
            if not reply.done():
                if departure.done():
                    return None  # nobody is left to read it: the process is killed (finally)
                where = await self._where(proc)
                if not reply.done():
                    raise self._timeout(where)
            answer = reply.result()
            if answer[0] == "ended":
                raise await self._ended(proc)
            keep = True
            if answer[0] == "error":
                proc.known.clear()  # whatever failed, the next request sends every token again
                raise error_from_dict(answer[-1])
            return answer[2]
        finally:
            proc.busy, proc.reply = False, None
            if keep and not proc.retired:
                proc.served += 1
                self._idle.put_nowait(proc)
            else:
                # Stuck, crashed, abandoned or cancelled mid-way: a fresh process takes its place.
                self._retire(proc)

    async def _where(self, proc: _OddsProcess) -> Mapping[str, Any]:
        """Ask a process past its budget which plugin, hook and step it is in."""
        proc.stuck = asyncio.get_running_loop().create_future()
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGUSR1)
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(asyncio.shield(proc.stuck), REPORT_GRACE)
        return {}

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
