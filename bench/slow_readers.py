"""Memory of a server whose clients stop reading, with and without the outgoing limit.

    .venv/bin/python bench/slow_readers.py            # 5 stalled clients, 400 attacks
    .venv/bin/python bench/slow_readers.py --quick    # a short smoke run

A server (in this process, SQLite in a temporary directory, the test ruleset
``duel``) gets a table with a GM and ``--stalled`` clients that connect and
then never read again (each on a socket with a small receive buffer, and the
server's send buffer to it made small too, as on a slow network). The GM
resolves ``--attacks`` attacks; every one is broadcast to every client. The
run prints the server process's resident memory before the flood, after it, and
after the stalled clients are gone and a garbage collection, once with the
server's ``max_outgoing`` limit (dropping the stalled clients) and once with
the limit out of reach (what the server did before: buffer everything until
the ping timeout). Bounded: the attack count, and 120 s per run.
"""

from __future__ import annotations

import argparse
import os
import asyncio
import gc
import json
import resource
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.server.conftest import config  # noqa: E402
from tests.server.kit import StalledClient, seat_table  # noqa: E402
from vtt_bridge.server import BridgeServer  # noqa: E402

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "answers": {"defense": "none"}}


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


async def run(max_outgoing: int, stalled_count: int, attacks: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        async with BridgeServer(config(Path(tmp), max_outgoing=max_outgoing, rate_limit=0)) as server:
            seat = await seat_table(server, users=tuple(f"p{n}" for n in range(stalled_count)))
            stalled = [await StalledClient().connect(server.port, seat.auth(f"p{n}")) for n in range(stalled_count)]
            # A slow network: small kernel send buffers, so the backlog is the server's own.
            sio = server._sio
            for sid, caller in server.bridge.callers.items():
                if caller.user != "gm":
                    request = sio.environ[sio.manager.eio_sid_from_sid(sid, "/")]["aiohttp.request"]
                    request.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            gm = await seat.join("gm", events=[])  # the flooding client (in this process) records nothing
            gc.collect()
            before = rss_mb()
            async with asyncio.timeout(120):
                for _ in range(attacks // 20):
                    await asyncio.gather(*(gm.ok("attack", ATTACK) for _ in range(20)))
            after = rss_mb()
            queued = sum(s.queue.qsize() for s in server._sio.eio.sockets.values())
            dropped = server._sio.dropped
            for client in stalled:
                client.close()
            await seat.close()
            await asyncio.sleep(0.5)
            gc.collect()
            released = rss_mb()
    return {"before": before, "after": after, "released": released, "queued": queued, "dropped": dropped}


def main(args: argparse.Namespace) -> None:
    if args.limit is not None:
        print(json.dumps(asyncio.run(run(args.limit, args.stalled, args.attacks))))
        return
    print(f"{args.stalled} stalled clients, {args.attacks} attacks broadcast to everyone; each run in its own process")
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("target: with the limit, every stalled client dropped and nothing left queued for it (issue 14, item 13)")
    for label, limit in (("limit 1 MB", 1_000_000), ("no limit (before)", 0)):
        argv = [sys.executable, __file__, "--limit", str(limit), "--stalled", str(args.stalled)]
        out = subprocess.run([*argv, "--attacks", str(args.attacks)], capture_output=True, text=True, timeout=300)
        if out.returncode:
            raise SystemExit(out.stderr)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{label:18s} RSS before {r['before']:6.1f} MB  after flood {r['after']:6.1f} MB  "
            f"after clients gone {r['released']:6.1f} MB  packets still queued {r['queued']:5d}  "
            f"dropped {r['dropped']}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stalled", type=int, default=5)
    parser.add_argument("--attacks", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="2 stalled clients, 100 attacks")
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)  # one run, in this process
    ns = parser.parse_args()
    if ns.quick:
        ns.stalled, ns.attacks = 2, 100
    main(ns)
