"""How much Redis memory a table and an attack take: the figures docs/deploy.md sizes Redis with.

Starts a redis-server and a bridge server on it (127.0.0.1, every installed
ruleset), seats the demo table, and has its GM send each ruleset's example
attack ``--attacks`` times over socket.io (answering every question with its
default). It prints, per ruleset, Redis's ``used_memory`` growth per
committed attack and the average audit entry's size, and for the table each
of its keys' ``MEMORY USAGE``. The audit list is what grows: a table keeps
``audit_keep`` entries (default 1000), so a table's ceiling is about that
many times the per-attack figure. ``--quick``: a few attacks, for tests.

    python bench/redis_memory.py [--quick] [--attacks N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redis_clients import _redis  # noqa: E402  (a sibling bench: its redis-server starter)

from vtt_bridge.state.redis import AUDIT_KEEP  # noqa: E402

# A table's audit list at its default ceiling should fit in this much Redis memory.
CEILING_MB = 32


async def _info_memory(link: Any) -> int:
    info = await link.call("INFO", "memory")
    return int(info["used_memory"]) if isinstance(info, dict) else int(str(info).split("used_memory:")[1].split()[0])


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import socketio

    from vtt_bridge.server import BridgeServer, ServerConfig
    from vtt_bridge.server.demo import demo_table

    report: dict[str, Any] = {"attacks_per_ruleset": args.attacks, "rulesets": {}, "table_keys": {}}
    async with _redis(None) as (host, port):
        url = f"redis://{host}:{port}/0"
        config = ServerConfig(port=0, redis=url, static_dir=None, decision_timeout=5.0, reconnect_grace=0.0)
        async with BridgeServer(config) as server:
            store = server.store
            link = store.link
            before_table = await _info_memory(link)
            demo = await demo_table(server.host, store)
            report["table_bytes"] = await _info_memory(link) - before_table
            client = socketio.AsyncClient()

            @client.on("decision")
            async def decide(data: dict[str, Any]) -> Any:
                return {"option": data.get("default")} if not isinstance(data.get("default"), dict) else data["default"]

            await client.connect(server.url, auth={"table": demo.table.id, "key": demo.keys["gm"]}, transports=["websocket"])
            try:
                audit = store.table_key(demo.table.id, "audit")
                for ruleset_id, example in sorted(demo.examples.items()):
                    length = await link.call("LLEN", audit)
                    before = await _info_memory(link)
                    ok = failed = 0
                    for n in range(args.attacks):
                        reply = await client.call(
                            "attack", {**example, "request_id": f"mem-{ruleset_id}-{n}"}, timeout=60
                        )
                        if isinstance(reply, dict) and reply.get("ok"):
                            ok += 1
                        else:
                            failed += 1
                    grown = await _info_memory(link) - before
                    entries = await link.call("LRANGE", audit, length, -1)
                    attacks = [e for e in entries if json.loads(e)["kind"] == "attack"]
                    report["rulesets"][ruleset_id] = {
                        "committed": ok,
                        "refused": failed,
                        "used_memory_per_attack": round(grown / ok) if ok else None,
                        "audit_entry_bytes": round(sum(map(len, attacks)) / len(attacks)) if attacks else None,
                    }
            finally:
                await client.disconnect()
            for what in ("tokens", "audit", "requests", "refs", "meta", "keys", "sessions"):
                usage = await link.call("MEMORY", "USAGE", store.table_key(demo.table.id, what))
                report["table_keys"][what] = int(usage or 0)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attacks", type=int, default=200, help="attacks per ruleset (default: 200)")
    parser.add_argument("--quick", action="store_true", help="a short run (for tests)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.attacks = min(args.attacks, 5)
    load = os.getloadavg()
    report = asyncio.run(run(args))
    report["load_average_before"] = load
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"demo table created: {report['table_bytes']} bytes of used_memory")
    print(f"{'ruleset':16s} {'committed':>9s} {'refused':>7s} {'bytes/attack':>12s} {'audit entry':>11s} "
          f"{'table ceiling':>13s}")
    for ruleset_id, row in report["rulesets"].items():
        ceiling = (row["audit_entry_bytes"] or 0) * AUDIT_KEEP / 1e6
        print(
            f"{ruleset_id:16s} {row['committed']:9d} {row['refused']:7d} "
            f"{row['used_memory_per_attack'] or 0:12d} {row['audit_entry_bytes'] or 0:11d} "
            f"{ceiling:10.1f} MB (target <= {CEILING_MB} MB)"
        )
    print(f"(table ceiling: the audit entries of {AUDIT_KEEP} attacks, the default audit_keep; "
          "bytes/attack is noisy for few attacks: Redis's allocator grows in steps)")
    print("the table's keys, MEMORY USAGE in bytes: " + ", ".join(f"{k} {v}" for k, v in report["table_keys"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
