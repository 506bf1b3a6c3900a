"""``vtt-bridge serve``: run the socket.io bridge server.

``--demo`` creates (or reuses) a table holding every installed ruleset's
sample tokens and prints the URL, the table id and fresh keys — the quickest
way to connect a client and resolve an attack.
"""

from __future__ import annotations

import asyncio
import json
import logging

from ..plugins import make_host
from ..server import BridgeServer, ServerConfig, serve_forever
from ..server.demo import demo_table
from ..server.workers import run as run_loop
from ..server.workers import serve_workers
from ..server.logs import configure


def register(sub) -> None:
    parser = sub.add_parser("serve", help="run the socket.io bridge server")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    parser.add_argument("--db", default="vtt_bridge.sqlite", help="SQLite file (default: ./vtt_bridge.sqlite)")
    parser.add_argument("--redis", metavar="URL", help="use Redis as the store and the bus between processes")
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
        help="processes per server that run the rulesets' hooks (default: 2)",
    )
    parser.add_argument(
        "--lease-ttl",
        type=float,
        default=10.0,
        metavar="S",
        help="with --redis: seconds before a table held by a process that died is taken over (default: 10)",
    )
    parser.add_argument(
        "--decision-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a player has to answer a decision, unless the table sets its own (default: 30)",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="browser origin allowed to connect (repeatable; default: any — keys guard the tables)",
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as key=value or JSON")
    parser.add_argument("--log-level", default=None, help="debug, info (default), warning, error")
    parser.set_defaults(func=run)


def run(args) -> int:
    level = (args.log_level or ("debug" if args.verbose else "info")).upper()
    configure(as_json=args.log_format == "json", level=getattr(logging, level, logging.INFO))
    config = ServerConfig(
        host=args.host,
        port=args.port,
        db=args.db,
        redis=args.redis,
        decision_timeout=args.decision_timeout,
        plugins=tuple(args.plugin),
        cors_origins=tuple(args.cors_origin) if args.cors_origin else "*",
        resolvers=args.resolvers,
        lease_ttl=args.lease_ttl,
    )
    if args.workers < 1 or args.resolvers < 1:
        raise SystemExit("vtt-bridge serve: --workers and --resolvers must be at least 1")
    if args.workers > 1:
        return _run_workers(args, config)
    host = make_host(plugins=args.plugin)

    async def ready(server: BridgeServer) -> None:
        print(f"vtt-bridge listening on {server.url}", flush=True)
        if args.demo:
            assert server.store is not None and server.bridge is not None
            demo = await demo_table(host, server.store)
            print(_demo_text(server.url, demo), flush=True)

    run_loop(serve_forever(config, host=host, ready=ready))
    return 0


def _run_workers(args, config) -> int:
    """``--workers N``: N server processes on one port over one Redis (server/workers.py)."""
    if not args.redis:
        raise SystemExit("vtt-bridge serve: --workers needs --redis URL (SQLite is one process only)")

    def ready(url: str) -> None:
        print(f"vtt-bridge listening on {url} ({args.workers} server processes)", flush=True)
        if args.demo:
            print(_demo_text(url, asyncio.run(_demo(args))), flush=True)

    level = logging.getLogger().level
    return serve_workers(config, args.workers, log_setup=(args.log_format == "json", level), ready=ready)


async def _demo(args):
    from ..state import RedisStore

    store = RedisStore(args.redis)
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
