"""Binding the app to a port, and stopping it gracefully.

:class:`BridgeServer` is what ``vtt-bridge serve``, the tests and the
benchmark all run: ``await server.start()`` opens the store, loads the
plugins and listens; ``await server.stop()`` stops accepting connections,
gives attacks in progress ``shutdown_grace`` seconds to finish (an attack cut
short commits nothing), drops the clients' connections and closes the store.

How the clients are dropped matters. A socket.io ``DISCONNECT`` packet
(``sio.disconnect(sid)``) reads as "io server disconnect" to every socket.io
client, and an Engine.IO ``CLOSE`` packet as a deliberate close to
python-socketio's: both are final, and the client never reconnects. A stop
is not that: the server will usually be back in a moment (a restart to
install a pack). So the transports are ended the way a network drop ends
them — the websocket closes, a pending long-poll returns empty and the next
one fails — which every socket.io client answers with its own reconnection
(backing off until the server is back), re-sending its ``auth``; a client
then asks ``table.sync`` for what it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import gc
import itertools
import logging
import multiprocessing
import os
import resource
import signal
import socket
import time
from multiprocessing.connection import wait
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..plugins import Host, make_host
from ..state import RedisStore, SQLiteStore, Store
from .app import ServerConfig, build
from .bridge import Bridge
from .logs import configure, fields
from .wire import Connections

__all__ = ["BridgeServer", "run", "serve_forever", "serve_workers"]

log = logging.getLogger("vtt_bridge.server")

# Seconds a stop lets engine.io's writers send what they hold before the connections end.
FLUSH = 0.05


class BridgeServer:
    """One server on one port. Usable as ``async with BridgeServer(config) as server``.

    :param host: a ready plugin host (default: built from ``config.plugins``).
    :param store: a store (default: from ``config.redis`` / ``config.db``).
    """

    def __init__(self, config: ServerConfig, *, host: Host | None = None, store: Store | None = None) -> None:
        self.config = config
        self.host = host
        self.store = store
        self.bridge: Bridge | None = None
        self._runner: web.AppRunner | None = None
        self._sio: Any = None
        self.port: int | None = None

    @property
    def connections(self) -> Connections | None:
        """The TCP connections of socket.io's requests (once started)."""
        return None if self._sio is None else self._sio.connections

    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    async def start(self) -> None:
        config = self.config
        if self.host is None:
            self.host = make_host(plugins=list(config.plugins), entry_points=config.entry_points)
        if self.store is None:
            self.store = (
                RedisStore(
                    config.redis,
                    prefix=config.redis_prefix,
                    lease_ttl=config.lease_ttl,
                    broadcast_keep=config.broadcast_keep,
                    audit_keep=config.audit_keep,
                )
                if config.redis else SQLiteStore(config.db, audit_keep=config.audit_keep)
            )
        await self.store.open()
        app, self._sio, self.bridge = build(config, self.host, self.store)
        # One pack set per deployment: refused here when another live process runs other packs.
        await self.store.announce(self.bridge.node, {p.name: p.version for p in self.host.plugins()})
        await self.bridge.start()
        # No access log: every socket.io poll would be a line, and it costs on the hot path.
        # A short shutdown timeout: by the time cleanup runs, attacks are done and the
        # clients were told to go; only their websockets linger.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.25)
        await runner.setup()
        site = web.TCPSite(runner, config.host, config.port, reuse_port=config.reuse_port or None)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        log.info(
            "listening",
            extra=fields(url=self.url, store=self.store.kind, rulesets=",".join(sorted(self.host.rulesets))),
        )

    async def stop(self) -> None:
        runner, bridge = self._runner, self.bridge
        if runner is None or bridge is None:
            return
        self._runner = None
        for site in list(runner.sites):
            await site.stop()
        deadline = time.monotonic() + self.config.shutdown_grace
        for runtime in list(bridge.tables.values()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                async with asyncio.timeout(remaining):
                    async with runtime.attack_lock:
                        await runtime.outbox.drain()
            except TimeoutError:
                log.warning(
                    "stopping with an attack still in progress; it commits nothing", extra=fields(table=runtime.id)
                )
        await bridge.attacks.cancel_running()
        await drop_transports(self._sio)
        await self._sio.shutdown()
        await bridge.close()
        await runner.cleanup()
        if self.store is not None:
            await self.store.close()
        log.info("stopped", extra=fields(url=self.url))

    async def __aenter__(self) -> BridgeServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def drop_transports(sio: Any) -> None:
    """End every Engine.IO connection of this process without a close packet (see the module docstring)."""
    # engine.io's writer tasks first send what is queued (the answers of attacks cut short).
    await asyncio.sleep(FLUSH)
    sio.connections.end_all()
    # Let engine.io and socket.io notice, so their disconnect handlers run before the cleanup.
    await asyncio.sleep(0)


# -- the garbage collector -------------------------------------------------------------


def _peak_rss() -> int:
    """The most memory this process has held so far (KB on Linux): it only grows."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class Collector:
    """When the server's cyclic garbage collector runs: after connections closed, not after allocations.

    CPython starts a young collection when allocations outnumber frees by a
    threshold, but it counts every free, old objects' included. A server in
    its stride frees about as much as it allocates, so that count hardly
    moves: the young collections came seconds to minutes apart and each
    walked everything born since and still alive — the wait for every
    connection's next message (engine.io re-creates its ``wait_for`` for each
    one), the attacks in flight, the new token snapshots: 0.1–0.4 s with the
    event loop stopped at 1,000–2,000 tables, each freeing nothing.
    Collecting young objects every 0.1 s instead bounds the pause but walks
    each of them once: ~0.5 ms of CPU per attack.

    The collector is there for garbage reference counting cannot free
    (cycles), and in play the server makes none: after a minute of play at
    1,000 tables, not one unreachable object among 1 M (``bench/
    capacity_bench.py`` measures it). The cycle it does make is a closed
    websocket's: engine.io keeps the error that ended it in a cycle with its
    handler's frame, ~60 objects and ~11 KB. So every :attr:`FREEZE_EVERY`
    seconds what was allocated since is moved out of the collector's sight
    (``gc.freeze()``: O(1); reference counting frees those objects as
    before), and a full collection of everything (``gc.unfreeze()``,
    ``gc.collect()``, ``gc.freeze()``) runs once :attr:`AFTER_CLOSED` websockets
    (or half of those open, if more) closed since the last one; for whatever
    else might make cycles, at least every :attr:`AT_LEAST_EVERY` seconds and
    when the process's peak memory grew :attr:`GROWTH` times since, more
    than more connections explain (the memory noted whenever the open
    connections reach a new high). Its pause is about a second per million
    objects (1,000 tables), so it is rare, and its cost per closed connection
    is bounded.
    """

    FREEZE_EVERY = 0.05
    AFTER_CLOSED = 1000
    AT_LEAST_EVERY = 1800.0
    GROWTH = 2.0

    def __init__(self, connections: Connections | None = None) -> None:
        self.connections = connections
        self.mark = 0
        self.closed = 0
        self.swept = 0.0
        self.most = 0  # the most connections open since the last full collection
        self.sweeps = 0

    def due(self, *, memory: bool = True) -> bool:
        connections = self.connections
        if connections is not None:
            closed = connections.closed - self.closed
            if closed >= max(self.AFTER_CLOSED, len(connections.open) // 2):
                return True
        if time.monotonic() - self.swept >= self.AT_LEAST_EVERY:
            return True
        if not memory:
            return False
        peak = _peak_rss()
        if connections is not None and len(connections.open) > self.most:
            # More connections than ever since the last collection: growth they explain.
            self.most, self.mark = len(connections.open), max(self.mark, peak)
            return False
        return peak > self.mark * self.GROWTH

    async def run(self) -> None:
        self.mark, self.swept = _peak_rss(), time.monotonic()
        if self.connections is not None:
            self.closed = self.connections.closed
        for tick in itertools.count():
            await asyncio.sleep(self.FREEZE_EVERY)
            gc.freeze()
            if self.due(memory=tick % 20 == 0):  # the peak memory looked at once a second
                self.sweep()

    def sweep(self) -> int:
        """A full collection of everything, frozen or not; how many unreachable objects it freed."""
        started = time.perf_counter()
        if self.connections is not None:
            self.closed = self.connections.closed
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        self.sweeps += 1
        self.mark, self.swept = _peak_rss(), time.monotonic()
        self.most = 0 if self.connections is None else len(self.connections.open)
        log.info(
            "garbage collected",
            extra=fields(freed=freed, ms=round((time.perf_counter() - started) * 1000, 1), peak_rss_kb=self.mark),
        )
        return freed


async def serve_forever(
    config: ServerConfig,
    *,
    host: Host | None = None,
    ready: Callable[[BridgeServer], Awaitable[None]] | None = None,
) -> None:
    """Run until SIGINT or SIGTERM, then stop gracefully."""
    # A server allocates many short-lived containers per message; the garbage collector's
    # default (a young collection every 700 allocations) ran ~3% of its CPU. Reference
    # counting frees nearly all of them; collect cycles less often (resolvers inherit this).
    # In this process the Collector freezes what survives long before 20,000 accumulate.
    gc.set_threshold(20_000, 20, 20)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    server = BridgeServer(config, host=host)
    await server.start()
    settle = loop.create_task(Collector(server.connections).run())
    try:
        if ready is not None:
            await ready(server)
        await stop.wait()
        log.info("signal received, stopping")
    finally:
        settle.cancel()
        await server.stop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


# -- the event loop -------------------------------------------------------------------


def run(main: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (``pip install 'vtt-bridge[fast]'``), else asyncio's loop."""
    # The loop runs outside the ``except`` block: an exception raised anywhere in the server
    # (a resolver's traceback included) would otherwise carry this ImportError as its context.
    try:
        import uvloop
    except ImportError:
        uvloop = None
    if uvloop is None:
        return asyncio.run(main)
    return uvloop.run(main)


# -- server processes (serve --workers N) ---------------------------------------------


def _serve_child(config: Any, log_setup: tuple[bool, int], ready: Any) -> None:
    """One server process of ``serve --workers N`` (spawned: a fresh interpreter)."""

    configure(as_json=log_setup[0], level=log_setup[1])
    with contextlib.suppress(Exception):  # Linux: stop with the supervisor, even if it is killed
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    async def announce(server: Any) -> None:
        with contextlib.suppress(OSError):  # a restarted process has nobody waiting to hear it
            ready.send(server.url)
            ready.close()

    run(serve_forever(config, ready=announce))


def serve_workers(
    config: Any,
    count: int,
    *,
    log_setup: tuple[bool, int] = (False, logging.INFO),
    ready: Any = None,
    start_timeout: float = 120.0,
) -> int:
    """Run ``count`` server processes on one port over one Redis, until SIGINT/SIGTERM.

    Each is a whole server (its own event loop and resolvers) listening with
    ``SO_REUSEPORT``; the kernel spreads connections over them. A process
    that dies is started again; its clients reconnect to the others meanwhile.
    ``ready(url)`` is called once all are listening. Returns the exit status.
    """

    if not config.redis:
        raise ValueError("several server processes need a shared store: give --redis URL")
    port = config.port or _free_port(config.host)
    config = dataclasses.replace(config, port=port, reuse_port=True)
    context = multiprocessing.get_context("spawn")
    stop_r, stop_w = os.pipe()
    os.set_blocking(stop_w, False)
    stopping = False

    def on_signal(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        with contextlib.suppress(OSError):
            os.write(stop_w, b"x")

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    procs: dict[int, Any] = {}  # slot → process
    started: dict[int, float] = {}

    def launch(slot: int) -> Any:
        reader, writer = context.Pipe(duplex=False)
        proc = context.Process(
            target=_serve_child, args=(config, log_setup, writer), name=f"vtt-bridge worker {slot}", daemon=False
        )
        proc.start()
        writer.close()
        procs[slot], started[slot] = proc, time.monotonic()
        return reader

    try:
        pipes = {slot: launch(slot) for slot in range(count)}
        deadline = time.monotonic() + start_timeout
        url = None
        for slot, pipe in pipes.items():
            if not pipe.poll(max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"server process {slot} did not start")
            url = pipe.recv()
            pipe.close()
        log.info("listening", extra=fields(url=url, workers=count, pids=",".join(str(p.pid) for p in procs.values())))
        if ready is not None:
            ready(url)
        while not stopping:
            sentinels = {procs[slot].sentinel: slot for slot in procs}
            for sentinel in wait([*sentinels, stop_r]):
                if sentinel == stop_r or stopping:
                    break
                slot = sentinels[sentinel]
                proc = procs[slot]
                proc.join()
                log.error("server process died; starting another", extra=fields(pid=proc.pid, code=proc.exitcode))
                if time.monotonic() - started[slot] < 5:
                    time.sleep(1)  # crashing at start: do not spin
                launch(slot).close()
        return 0
    finally:
        for proc in procs.values():
            if proc.is_alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)
        grace = time.monotonic() + config.shutdown_grace + 10
        for proc in procs.values():
            proc.join(max(0.1, grace - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.close(stop_r)
        os.close(stop_w)


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]
