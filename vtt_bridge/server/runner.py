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
import gc
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..plugins import Host, make_host
from ..state import RedisStore, SQLiteStore, Store
from .app import ServerConfig, build
from .bridge import Bridge
from .logs import fields

__all__ = ["BridgeServer", "serve_forever"]

log = logging.getLogger("vtt_bridge.server")


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
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    async def start(self) -> None:
        config = self.config
        if self.host is None:
            self.host = make_host(plugins=list(config.plugins), entry_points=config.entry_points)
        if self.store is None:
            self.store = (
                RedisStore(config.redis, prefix=config.redis_prefix, lease_ttl=config.lease_ttl)
                if config.redis else SQLiteStore(config.db)
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
    eio = sio.eio
    for socket in list(eio.sockets.values()):
        # abort=True: run the server's disconnect handlers, send nothing.
        await socket.close(wait=False, abort=True, reason=eio.reason.SERVER_DISCONNECT)
        # A websocket is closed; on long-polling, None in the queue answers a
        # waiting poll with an empty payload (or ends engine.io's websocket writer).
        end = getattr(socket, "end", None)
        if end is None or not end():
            socket.queue.put_nowait(None)
    # Let the writers run, so the websockets are closed before aiohttp's
    # cleanup (which would otherwise wait for them until its timeout).
    await asyncio.sleep(0)


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
    gc.set_threshold(20_000, 20, 20)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    server = BridgeServer(config, host=host)
    await server.start()
    try:
        if ready is not None:
            await ready(server)
        await stop.wait()
        log.info("signal received, stopping")
    finally:
        await server.stop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
