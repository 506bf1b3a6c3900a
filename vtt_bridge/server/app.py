"""The aiohttp application: socket.io, ``/healthz``, and the web table's files.

:func:`build` wires a plugin host and a store into a socket.io server and an
aiohttp app. Nothing is listening yet; :class:`~.runner.BridgeServer` binds it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import socketio
from aiohttp import web

from .. import __version__
from ..errors import VTTError
from ..plugins import Host
from ..state import RedisStore
from ..state.store import AUDIT_KEEP, BROADCAST_KEEP, Store
from .bridge import Bridge
from .bus import RedisBus
from .keyguard import KeyGuard
from .namespace import TableNamespace
from .pool import ODDS_IDLE, OddsRunner
from .wire import AnswerLimit, engineio_log, BridgeSocketServer, Connections, LocalManager, RateLimiter, packet_class

__all__ = ["STATIC_DIR", "ServerConfig", "build"]

log = logging.getLogger("vtt_bridge.server")

# The bridge's own web table, when installed (served at / and /static/).
STATIC_DIR = Path(__file__).parent / "static"

BRIDGE_KEY: web.AppKey[Bridge] = web.AppKey("bridge", Bridge)
STARTED_KEY: web.AppKey[float] = web.AppKey("started", float)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """How to run a server.

    :ivar db: SQLite file (ignored when ``redis`` is set).
    :ivar redis: ``redis://`` URL: Redis is then the store and the bus between
        processes (:mod:`.bus`, over the store's connections).
    :ivar decision_timeout: seconds a decider has, unless the table says otherwise.
    :ivar default_packs: the installed packs a table whose GM never chose runs with
        (``None``: every installed pack).
    :ivar plugins: extra plugins (module paths or objects) besides the entry points.
    :ivar cors_origins: origins allowed to connect from a browser (``"*"``: any;
        the key, not the origin, is what guards a table).
    :ivar shutdown_grace: seconds a stop waits for attacks in progress.
    :ivar reconnect_grace: seconds a question waits for a decider whose
        connection dropped to come back (then it is asked again); 0: the
        rules' default at once.
    :ivar max_payload: bytes a socket.io packet may have; a larger one is answered
        with ``payload_too_large`` (and past twice this the transport itself closes).
    :ivar max_outgoing: bytes that may wait unsent for one client before it is
        dropped as a reader that stopped reading (0: no limit).
    :ivar rate_limit: events a second one connection may send on average
        (0: no limit); past it an event is answered with ``rate_limited``.
    :ivar rate_burst: events one connection may send at once.
    :ivar odds_budget: seconds an ``attack.odds`` Monte Carlo run may take; it
        then answers with the samples it ran.
    :ivar odds_per_user: ``attack.odds`` requests one user may have running at once.
    :ivar odds_concurrency: ``attack.odds`` computations the server runs at once.
    :ivar odds_idle: seconds without an ``attack.odds`` request after which the odds
        processes end (the next request forks again); ``None``: they never do.
    :ivar key_check_interval: seconds between checks that every open connection's
        key is still its user's key (keys replaced or revoked through the CLI or
        another process); 0 turns the sweep off.
    :ivar resolvers: resolver processes that run the hooks (see ``server/pool.py``).
    :ivar lease_ttl: seconds a table's attack lease outlives a process that died holding it (Redis).
    :ivar broadcast_keep: batches of broadcasts each table's log keeps for a process that
        lost its Redis feed to catch up from (Redis; past that, its clients resync).
    :ivar audit_keep: audit entries a table keeps unless its own ``audit_keep`` setting
        says otherwise (0: all).
    :ivar ws_compression: accept permessage-deflate on websockets (off: it costs more CPU than
        the bridge's small messages save; let a reverse proxy compress if bandwidth matters).
    :ivar reuse_port: listen with ``SO_REUSEPORT`` (``serve --workers N`` shares one port).
    :ivar ping_interval: seconds between engine.io's pings to a client.
    :ivar ping_timeout: seconds a client has to answer a ping; one that does not is disconnected
        (a websocket that falls silent is gone after ``ping_interval + ping_timeout``).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    db: str = "vtt_bridge.sqlite"
    redis: str | None = None
    redis_prefix: str = "vtt:"
    decision_timeout: float = 30.0
    default_packs: tuple[str, ...] | None = None
    plugins: tuple[Any, ...] = ()
    entry_points: bool = True
    cors_origins: str | tuple[str, ...] = "*"
    shutdown_grace: float = 5.0
    reconnect_grace: float = 10.0
    resolvers: int = 2
    reuse_port: bool = False
    lease_ttl: float = 2.0
    broadcast_keep: int = BROADCAST_KEEP
    audit_keep: int = AUDIT_KEEP
    ws_compression: bool = False
    ping_interval: float = 25.0
    ping_timeout: float = 20.0
    static_dir: Path | None = field(default=STATIC_DIR)
    max_payload: int = 1_000_000
    max_outgoing: int = 8_000_000
    rate_limit: float = 200.0
    rate_burst: int = 1000
    key_check_interval: float = 5.0
    odds_budget: float = 2.0
    odds_per_user: int = 1
    odds_concurrency: int = 1
    odds_idle: float | None = ODDS_IDLE


def build(config: ServerConfig, host: Host, store: Store) -> tuple[web.Application, socketio.AsyncServer, Bridge]:
    """The aiohttp app with socket.io attached, and the bridge behind it."""
    manager: socketio.AsyncManager
    if isinstance(store, RedisStore):
        # The store's own connections carry the broadcasts too (see bus.py).
        manager = RedisBus(store, channel=f"{config.redis_prefix}socketio")
    elif config.redis:
        manager = RedisManager(config.redis, channel=f"{config.redis_prefix}socketio")
    else:
        manager = LocalManager()
    cors = config.cors_origins if isinstance(config.cors_origins, str) else list(config.cors_origins)
    connections = Connections(max_outgoing=config.max_outgoing, compress=config.ws_compression)
    sio = BridgeSocketServer(
        async_mode="aiohttp",
        client_manager=manager,
        connections=connections,
        serializer=packet_class(config.max_payload),
        # The transport reads up to twice the payload limit, so a packet over the
        # limit can still be answered with payload_too_large rather than a closed socket.
        max_http_buffer_size=2 * config.max_payload,
        cors_allowed_origins=cors,
        ping_interval=config.ping_interval,
        ping_timeout=config.ping_timeout,
        logger=False,
        engineio_logger=engineio_log,
    )
    bridge = Bridge(
        host,
        store,
        sio,
        decision_timeout=config.decision_timeout,
        resolvers=config.resolvers,
        default_packs=config.default_packs,
    )
    if isinstance(manager, RedisBus):
        manager.deliver = bridge.broadcast.local
        manager.encode = bridge.broadcast.encoded
        manager.forward = bridge.broadcast.forward
        manager.resync = bridge.broadcast.resync
    bridge.attacks.prompter.reconnect_grace = config.reconnect_grace
    bridge.attacks.odds_runner = OddsRunner(
        budget=config.odds_budget,
        per_user=config.odds_per_user,
        concurrency=config.odds_concurrency,
        idle=config.odds_idle,
    )
    keys = KeyGuard(bridge, interval=config.key_check_interval)
    limiter = RateLimiter(config.rate_limit, config.rate_burst)
    manager.limiter = limiter  # type: ignore[attr-defined]
    sio.register_namespace(TableNamespace(bridge, limiter, keys))
    app = web.Application(middlewares=[connections.middleware])
    app.on_startup.append(lambda _app: _start(keys, connections))
    app.on_cleanup.append(lambda _app: _stop(keys, connections))
    app[BRIDGE_KEY] = bridge
    app[STARTED_KEY] = time.monotonic()
    sio.attach(app)
    app.router.add_get("/healthz", healthz)
    static = config.static_dir
    if static is not None and static.is_dir():
        index = static / "index.html"
        if index.is_file():
            app.router.add_get("/", _file(index))
        app.router.add_static("/static", static)
    return app, sio, bridge


async def _start(keys: KeyGuard, connections: Connections) -> None:
    keys.start()
    await connections.start()


async def _stop(keys: KeyGuard, connections: Connections) -> None:
    await keys.stop()
    await connections.stop()


class RedisManager(AnswerLimit, socketio.AsyncRedisManager):
    """python-socketio's Redis manager (``--redis`` with another store), answers rate-limited."""


def _file(path: Path):
    async def handler(request: web.Request) -> web.FileResponse:
        return web.FileResponse(path)

    return handler


async def healthz(request: web.Request) -> web.Response:
    """``200 {ok: true, ...}`` when the store answers, ``503`` when it does not.

    ``tables`` counts the tables in the store (the query is the store check);
    ``tables_open``, ``connections`` and ``attacks_in_progress`` are this
    process's: tables with someone connected, signed-in connections, attacks
    being resolved. Behind a load balancer, sum them over the processes.
    ``loop_late_ms``: how late this process's event loop ran its 50 ms heartbeat
    over the last minute (median, 99th percentile, worst; see ``pool.Lateness``).
    """
    bridge = request.app[BRIDGE_KEY]
    body: dict[str, Any] = {
        "ok": True,
        "version": __version__,
        "store": bridge.store.kind,
        "rulesets": sorted(bridge.host.rulesets),
        "tables_open": sum(1 for runtime in bridge.tables.values() if runtime.sessions),
        "connections": len(bridge.callers),
        "attacks_in_progress": len(bridge.attacks.running),
        "loop_late_ms": bridge.resolvers.lateness.last_minute(),
        "uptime": round(time.monotonic() - request.app[STARTED_KEY], 1),
    }
    try:
        await bridge.store.ping()  # a shared store also checks it was not wiped meanwhile
        body["tables"] = len(await bridge.store.list_tables())
    except VTTError as exc:
        return web.json_response({**body, "ok": False, "error": exc.message}, status=503)
    except Exception:
        log.exception("health check: the store does not answer")
        return web.json_response({**body, "ok": False, "error": "store unavailable"}, status=503)
    return web.json_response(body)
