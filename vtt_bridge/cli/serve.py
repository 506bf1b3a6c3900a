"""``vtt-bridge serve``: run the socket.io bridge server.

It prints where it listens, the store it uses, the URL players open
(``--public-url`` when a proxy or another name is in front, see
docs/deploy.md) and the next step. ``--demo`` creates (or reuses) a table
holding every installed ruleset's sample tokens and prints the table id, its
keys and a link per user — the same keys on every run on the same store
(see :mod:`vtt_bridge.server.demo`).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import signal
import socket

from ..plugins import make_host
from ..server import BridgeServer, ServerConfig, serve_forever
from ..errors import InvalidRequest
from ..server.demo import demo_table, keys_file_for
from ..server.runner import run as run_loop
from ..server.runner import serve_workers
from ..server.logs import configure
from ..state.store import AUDIT_KEEP, AUDIT_KEEPS, BROADCAST_KEEP, BROADCAST_KEEPS
from .store import DEFAULT_PACKS_ENV, URL_ENV, add_store_options, pack_list, resolved, store_flag, where


def register(sub) -> None:
    parser = sub.add_parser("serve", help="run the socket.io bridge server")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only; 0.0.0.0: every interface)",
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    add_store_options(parser)
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help=f"the URL players open, e.g. behind a reverse proxy: printed in links (default: ${URL_ENV})",
    )
    parser.add_argument("--demo", action="store_true", help="create or reuse a demo table and print its keys")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port (needs --redis; default: 1). See docs/deploy.md",
    )
    parser.add_argument(
        "--resolvers",
        type=int,
        default=2,
        metavar="N",
        help=(
            "sandbox processes per server that run attacks' hooks (default: 2); up to as many spares"
            " again while hooks are slow, plus odds_concurrency (1) for attack.odds"
        ),
    )
    parser.add_argument(
        "--lease-ttl",
        type=float,
        default=2.0,
        metavar="S",
        help="with --redis: seconds before a table held by a process that died is taken over "
        "(default: 2; renewed every third of that while held)",
    )
    parser.add_argument(
        "--audit-keep",
        type=int,
        default=AUDIT_KEEP,
        metavar="N",
        help=f"audit entries (attacks and edits) a table keeps unless its own audit_keep setting says "
        f"otherwise; older ones are dropped and can no longer be undone (0: keep all; default: {AUDIT_KEEP})",
    )
    parser.add_argument(
        "--broadcast-keep",
        type=int,
        default=BROADCAST_KEEP,
        metavar="N",
        help=f"with --redis: batches of broadcasts each table's log keeps, for a process whose Redis feed "
        f"dropped to catch up from; past that its clients resync ({BROADCAST_KEEPS[0]}-{BROADCAST_KEEPS[1]}, "
        f"default: {BROADCAST_KEEP}). See docs/deploy.md",
    )
    parser.add_argument(
        "--decision-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a player has to answer a decision, unless the table sets its own (default: 30)",
    )
    parser.add_argument(
        "--default-packs",
        metavar="P,Q",
        default=os.environ.get(DEFAULT_PACKS_ENV),
        help=f"the installed packs a table runs with until its GM chooses, comma separated, 'none' for none "
        f"(default: ${DEFAULT_PACKS_ENV}, else every installed pack)",
    )
    parser.add_argument(
        "--reconnect-grace",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a question waits for a player whose connection dropped to come back (default: 10; 0: none)",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="browser origin allowed to connect (repeatable; default: any — keys guard the tables)",
    )
    parser.add_argument(
        "--rate-limit", type=float, default=200.0, metavar="N",
        help="events a second one connection may send (burst 5 x N; 0: no limit; default: 200)",
    )
    parser.add_argument(
        "--max-payload", type=int, default=1_000_000, metavar="BYTES",
        help="largest socket.io packet a client may send (default: 1000000)",
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as key=value or JSON")
    parser.add_argument("--log-level", default=None, help="debug, info (default), warning, error")
    parser.set_defaults(func=run)


def run(args) -> int:
    level = (args.log_level or ("debug" if args.verbose else "info")).upper()
    configure(as_json=args.log_format == "json", level=getattr(logging, level, logging.INFO))
    db, redis = resolved(args)
    public = (args.public_url or os.environ.get(URL_ENV) or "").rstrip("/") or None
    config = ServerConfig(
        host=args.host,
        port=args.port,
        db=db,
        redis=redis,
        decision_timeout=args.decision_timeout,
        default_packs=tuple(pack_list(args.default_packs)) if args.default_packs is not None else None,
        reconnect_grace=max(0.0, args.reconnect_grace),
        plugins=tuple(args.plugin),
        cors_origins=tuple(args.cors_origin) if args.cors_origin else "*",
        rate_limit=args.rate_limit,
        rate_burst=max(1, int(5 * args.rate_limit)),
        max_payload=args.max_payload,
        resolvers=args.resolvers,
        lease_ttl=args.lease_ttl,
        broadcast_keep=args.broadcast_keep,
        audit_keep=args.audit_keep,
    )
    if args.workers < 1 or args.resolvers < 1:
        raise InvalidRequest("--workers and --resolvers take a number of at least 1", details={})
    if not 0 <= args.audit_keep <= AUDIT_KEEPS[1]:
        raise InvalidRequest(
            f"--audit-keep takes 0 (keep all) to {AUDIT_KEEPS[1]} entries, not {args.audit_keep}",
            details={"audit_keep": args.audit_keep},
        )
    if not BROADCAST_KEEPS[0] <= args.broadcast_keep <= BROADCAST_KEEPS[1]:
        raise InvalidRequest(
            f"--broadcast-keep takes {BROADCAST_KEEPS[0]} to {BROADCAST_KEEPS[1]} batches, not {args.broadcast_keep}",
            details={"broadcast_keep": args.broadcast_keep},
        )
    if redis:
        # Reachable, the password right, TLS matching: said before the plugins load (seconds).
        asyncio.run(_check_redis(redis))
    if args.workers > 1:
        return _run_workers(args, config)
    host = make_host(plugins=args.plugin)

    async def ready(server: BridgeServer) -> None:
        assert server.store is not None and server.port is not None
        print(f"vtt-bridge listening on {server.url} (store: {where(db, redis)})", flush=True)
        url = players_url(args.host, server.port, public)
        print(_reach_text(args.host, url, public), flush=True)
        if args.demo:
            keys_file = None if redis else keys_file_for(db)
            demo = await demo_table(host, server.store, keys_file=keys_file)
            print(_demo_text(url, demo), flush=True)
        else:
            print(await _next_text(server.store, url, db, redis), flush=True)
        print("stop with Ctrl-C: clients reconnect by themselves when it is started again", flush=True)
        say_what_a_stop_waits_for(config.shutdown_grace)

    try:
        run_loop(serve_forever(config, host=host, ready=ready))
    except OSError as exc:
        hint = {
            errno.EADDRINUSE: "is another server on that port? choose another --port",
            errno.EACCES: "a port below 1024 needs root: use a higher one behind a proxy, see docs/deploy.md",
            errno.EADDRNOTAVAIL: "this machine has no such address: try --host 0.0.0.0",
        }.get(exc.errno or 0, "check --host and --port")
        raise InvalidRequest(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc} ({hint})", details={}
        ) from None
    return 0


def say_what_a_stop_waits_for(grace: float) -> None:
    """On Ctrl-C, say what the stop waits for before it waits (then stop as SIGTERM does)."""
    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        print(
            f"stopping: attacks in progress get up to {grace:g} s to finish, a question still open "
            "included; one not done by then commits nothing, and its page sends it again when the "
            "server is back",
            flush=True,
        )
        signal.raise_signal(signal.SIGTERM)

    loop.add_signal_handler(signal.SIGINT, interrupted)


WILDCARDS = ("0.0.0.0", "::", "")


def players_url(host: str, port: int, public: str | None) -> str:
    """The URL to put in players' links: the public URL, else this server as reachable from here."""
    if public:
        return public
    if host in WILDCARDS:
        return f"http://{socket.gethostname()}:{port}"
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


def _reach_text(host: str, url: str, public: str | None) -> str:
    if public:
        return f"players open: {url}  (--public-url; it must lead to this server, see docs/deploy.md)"
    if host in ("127.0.0.1", "localhost", "::1"):
        return (
            f"players open: {url}  — this machine only; for players on other machines "
            "use --host 0.0.0.0 (and --public-url behind a proxy), see docs/deploy.md"
        )
    return f"players open: {url}  (a guess from this machine's name; say it with --public-url URL)"


async def _next_text(store, url: str, db: str, redis: str | None) -> str:
    """What to do next, for the tables in this store."""
    tables = await store.list_tables()
    flag = store_flag(db, redis)
    if not tables:
        return (
            f"no tables in this store yet; next, in another terminal:\n"
            f'  vtt-bridge table create "Thursday game"{flag}\n'
            f"  vtt-bridge table key TABLE alice{flag} --public-url {url}"
        )
    lines = ["tables in this store:"]
    for table in tables:
        users = sorted(k.user for k in await store.keys(table.id))
        lines.append(f"  {table.id}  {table.name!r}  keys: {', '.join(users) or 'none'}")
    lines.append(f"each player opens {url}/#table=TABLE&key=THEIR_KEY; a key and its link:")
    lines.append(f"  vtt-bridge table key TABLE NAME{flag} --public-url {url}")
    return "\n".join(lines)


def _run_workers(args, config) -> int:
    """``--workers N``: N server processes on one port over one Redis (server/runner.py)."""
    if not config.redis:
        raise InvalidRequest(
            "--workers needs --redis URL (or VTT_BRIDGE_REDIS): SQLite is served by one process", details={}
        )
    # Redis and the pack set checked once here, so a wrong URL or password, or packs that
    # differ from a running process's, is one line, not a traceback per worker.
    packs = {p.name: p.version for p in make_host(plugins=args.plugin).plugins()}
    asyncio.run(_check_redis(config.redis, packs))

    def ready(url: str) -> None:
        print(f"vtt-bridge listening on {url} ({args.workers} server processes)", flush=True)
        if args.demo:
            print(_demo_text(url, asyncio.run(_demo(args))), flush=True)

    level = logging.getLogger().level
    return serve_workers(config, args.workers, log_setup=(args.log_format == "json", level), ready=ready)


async def _check_redis(url: str, packs: dict[str, str | None] | None = None) -> None:
    """Open the Redis store once (one line when it cannot be used); with ``packs``, also check
    that no running process of the deployment runs other packs."""
    from ..state import RedisStore

    store = RedisStore(url)
    await store.open()
    try:
        if packs is not None:
            await store.announce(f"check-{os.getpid()}", packs)  # dropped again by close()
    finally:
        await store.close()


async def _demo(args):
    from ..state import RedisStore

    store = RedisStore(resolved(args)[1])
    await store.open()
    try:
        return await demo_table(make_host(plugins=args.plugin), store)
    finally:
        await store.close()


def _demo_text(url: str, demo) -> str:
    lines = [f"demo table {demo.table.id!r} ({demo.table.name})"]
    for user, key in demo.keys.items():
        lines.append(f"  key for {user + ':':8s} {key}")
    lines.append("open the web table in a browser, as one of them:")
    for user, key in demo.keys.items():
        lines.append(f"  {user + ':':8s} {url}/#table={demo.table.id}&key={key}")
    for ruleset_id, tokens in demo.tokens.items():
        names = ", ".join(
            f"{t.id} ({', '.join(u for u, lvl in t.ownership.items() if lvl >= 3) or 'GM'})" for t in tokens
        )
        lines.append(f"  {ruleset_id} tokens: {names}")
    if demo.skipped:
        lines.append(f"  (no sample tokens from: {', '.join(demo.skipped)})")
    if not demo.tokens:
        lines.append("  no installed ruleset provides sample tokens yet")
    auth = json.dumps({"table": demo.table.id, "key": demo.keys["gm"]})
    lines.append("connect from JavaScript (socket.io-client), as the GM:")
    lines.append(f'  const socket = io("{url}", {{ auth: {auth} }});')
    lines.append('  socket.on("decision", (d, reply) => { console.log(d.prompt, d.options); reply(d.default); });')
    for request in list(demo.examples.values())[:1]:
        # Nobody owning the target is connected, so the GM is asked its questions.
        lines.append(f'  const ack = await socket.timeout(60000).emitWithAck("attack", {json.dumps(request)});')
    lines.append("protocol: docs/protocol.md")
    return "\n".join(lines)
