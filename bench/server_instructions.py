"""Instructions per committed duel attack in the server's processes, counted by callgrind.

CPU time on these shared machines swings by 2× within minutes
(``bench/server_bench.py`` prints it, with its target); instruction counts
swing by a few percent. The server (one process, SQLite, two resolvers) runs
under callgrind twice, with the same clients attacking a few and then many
times each; the difference, per attack, is printed for the event loop's
process and for its resolvers, so start-up and warm-up cancel out. Kernel
work (system calls) is not counted.

The clients attack together (``--clients`` over ``--tables``, batched
broadcasts, every decision answered in the request), so how many commits
share a transaction varies between runs: two runs of the same code differ by
up to about 3%. Compare changes larger than that, or run each side twice.

    .venv/bin/python bench/server_instructions.py [--clients 10 --tables 5 --few 5 --many 25]
    .venv/bin/python bench/server_instructions.py --quick   # the same attacks natively: nothing counted

Needs valgrind (Debian package ``valgrind``) except with ``--quick``. A
counting run takes about two minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from bench import server_bench as sb  # noqa: E402

# Figures of 2026-11-27 (third session), for comparison: the event loop and the resolvers, per attack.
MEASURED = {"loop": (683_545, 703_180), "resolvers": (521_819, 539_057)}


async def _run(tmp: Path, per_client: int, args: argparse.Namespace, count: bool) -> dict[str, object]:
    """One server, ``args.clients`` clients attacking ``per_client`` times each; what each process counted."""
    db = tmp / f"attacks-{per_client}.sqlite"
    duel = sb.Ruleset("duel")
    seats = await sb.prepare(sb.SQLiteStore(db), args.tables, [duel])
    out = tmp / f"callgrind-{per_client}"
    out.mkdir()
    wrap = ["valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p"] if count else []
    # A fixed hash seed: string hashes (and so dict probing) do not change the count between runs.
    proc, url = sb.start_server("--db", str(db), "--resolvers", "2", wrap=wrap, env={"PYTHONHASHSEED": "0"}, wait=300)
    try:
        load = types.SimpleNamespace(clients=args.clients, seconds=600.0, per_client=per_client)
        async with aiohttp.ClientSession() as http:
            result = await sb.throughput(http, url, proc.pid, seats["duel"], duel, load, None, True)
    finally:
        sb.stop_server(proc, grace=300)  # callgrind writes its counts as the processes end
    counts = {}
    for path in out.glob("cg.*"):
        totals = re.search(r"^(?:summary|totals): (\d+)", path.read_text(errors="replace"), re.M)
        assert totals, f"no totals in {path}"
        counts[int(path.suffix[1:])] = int(totals.group(1))
    return {"committed": result["committed"], "failed": result["failed"], "server": proc.pid, "counts": counts}


def _split(run: dict[str, object]) -> tuple[int, int]:
    """(the event loop's count, every other process's together)."""
    counts = dict(run["counts"])  # type: ignore[call-overload]
    loop = counts.pop(run["server"])
    return loop, sum(counts.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--tables", type=int, default=5)
    parser.add_argument("--few", type=int, default=5, help="attacks per client in the first run")
    parser.add_argument("--many", type=int, default=25, help="attacks per client in the second run")
    parser.add_argument("--quick", action="store_true", help="run the attacks natively, count nothing")
    args = parser.parse_args(argv)
    print(f"load average before: {sb.load_average()} (instruction counts do not depend on it)")
    if not args.quick and shutil.which("valgrind") is None:
        sys.exit("valgrind not found: apt-get install valgrind (or run with --quick)")
    with tempfile.TemporaryDirectory() as tmp:
        few = asyncio.run(_run(Path(tmp), args.few, args, count=not args.quick))
        many = asyncio.run(_run(Path(tmp), args.many, args, count=not args.quick))
    attacks = int(many["committed"]) - int(few["committed"])  # type: ignore[call-overload]
    failed = {**few["failed"], **many["failed"]}  # type: ignore[dict-item]
    print(f"duel, {args.clients} clients over {args.tables} tables, batched: {attacks} attacks counted, failed: {failed or 0}")
    if args.quick:
        print("quick: the attacks ran natively, nothing counted")
    else:
        (loop_few, rest_few), (loop_many, rest_many) = _split(few), _split(many)
        loop, rest = (loop_many - loop_few) / attacks, (rest_many - rest_few) / attacks
        seen = ", ".join(f"{k} {lo:,}–{hi:,}" for k, (lo, hi) in MEASURED.items())
        print(f"event loop  {loop:12,.0f} instructions per committed attack")
        print(f"resolvers   {rest:12,.0f} instructions per committed attack (both, with the odds process if forked)")
        print(f"all         {loop + rest:12,.0f}   (2026-11-27: {seen})")
    print(
        "target: ≤ 0.6 ms of server CPU per committed duel attack (bench/server_bench.py measures it);"
        " these counts show a change's effect without the machine's noise"
    )
    print(f"load average after: {sb.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
