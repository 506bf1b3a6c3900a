"""The aiohttp application: socket.io, ``/healthz``, and the web table's files.

:func:`build` wires a plugin host and a store into a socket.io server and an
aiohttp app. Nothing is listening yet; :class:`~.runner.BridgeServer` binds it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import socketio
from aiohttp import web

from .. import __version__
from ..plugins import Host
from ..state.codec import JSON
from ..state.store import Store
from .bridge import Bridge
from .broadcast import plain_websockets
from .namespace import TableNamespace

__all__ = ["STATIC_DIR", "ServerConfig", "build"]

log = logging.getLogger("vtt_bridge.server")

# The bridge's own web table, when installed (served at / and /static/).
STATIC_DIR = Path(__file__).parent / "static"

BRIDGE_KEY: web.AppKey[Bridge] = web.AppKey("bridge", Bridge)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """How to run a server.

    :ivar db: SQLite file (ignored when ``redis`` is set).
    :ivar redis: ``redis://`` URL: Redis is then the store and, through
        python-socketio's ``AsyncRedisManager``, the bus between processes.
    :ivar decision_timeout: seconds a decider has, unless the table says otherwise.
    :ivar plugins: extra plugins (module paths or objects) besides the entry points.
    :ivar cors_origins: origins allowed to connect from a browser (``"*"``: any;
        the key, not the origin, is what guards a table).
    :ivar shutdown_grace: seconds a stop waits for attacks in progress.
    :ivar resolvers: resolver processes that run the hooks (see ``server/workers.py``).
    :ivar lease_ttl: seconds a table's attack lease outlives a process that died holding it (Redis).
    :ivar ws_compression: accept permessage-deflate on websockets (off: it costs more CPU than
        the bridge's small messages save; let a reverse proxy compress if bandwidth matters).
    :ivar reuse_port: listen with ``SO_REUSEPORT`` (``serve --workers N`` shares one port).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    db: str = "vtt_bridge.sqlite"
    redis: str | None = None
    redis_prefix: str = "vtt:"
    decision_timeout: float = 30.0
    plugins: tuple[Any, ...] = ()
    entry_points: bool = True
    cors_origins: str | tuple[str, ...] = "*"
    shutdown_grace: float = 5.0
    resolvers: int = 2
    reuse_port: bool = False
    lease_ttl: float = 10.0
    ws_compression: bool = False
    static_dir: Path | None = field(default=STATIC_DIR)


class JsonPacket(socketio.packet.Packet):
    """Socket.IO packets that are never binary.

    Everything the bridge sends is JSON; python-socketio would otherwise walk
    every outgoing payload recursively looking for ``bytes`` (a tenth of a
    millisecond for an attack record). Incoming packets decode as usual.
    """

    uses_binary_events = False
    json = JSON  # orjson: an attack record encodes ~20x faster than with the json module


def build(config: ServerConfig, host: Host, store: Store) -> tuple[web.Application, socketio.AsyncServer, Bridge]:
    """The aiohttp app with socket.io attached, and the bridge behind it."""
    manager = None
    if config.redis:
        manager = socketio.AsyncRedisManager(config.redis, channel=f"{config.redis_prefix}socketio")
    cors = config.cors_origins if isinstance(config.cors_origins, str) else list(config.cors_origins)
    sio = socketio.AsyncServer(
        async_mode="aiohttp",
        client_manager=manager,
        serializer=JsonPacket,
        cors_allowed_origins=cors,
        logger=False,
        engineio_logger=False,
    )
    if not config.ws_compression:
        plain_websockets(sio)
    bridge = Bridge(host, store, sio, decision_timeout=config.decision_timeout, resolvers=config.resolvers)
    sio.register_namespace(TableNamespace(bridge))
    app = web.Application()
    app[BRIDGE_KEY] = bridge
    sio.attach(app)
    app.router.add_get("/healthz", healthz)
    static = config.static_dir
    if static is not None and static.is_dir():
        index = static / "index.html"
        if index.is_file():
            app.router.add_get("/", _file(index))
        app.router.add_static("/static", static)
    return app, sio, bridge


def _file(path: Path):
    async def handler(request: web.Request) -> web.FileResponse:
        return web.FileResponse(path)

    return handler


async def healthz(request: web.Request) -> web.Response:
    """``200 {ok: true, ...}`` when the store answers, ``503`` when it does not."""
    bridge = request.app[BRIDGE_KEY]
    body: dict[str, Any] = {
        "ok": True,
        "version": __version__,
        "store": bridge.store.kind,
        "rulesets": sorted(bridge.host.rulesets),
        "tables": len(bridge.tables),
        "connections": len(bridge.callers),
    }
    try:
        await bridge.store.ping()
    except Exception:
        log.exception("health check: the store does not answer")
        return web.json_response({**body, "ok": False, "error": "store unavailable"}, status=503)
    return web.json_response(body)
