"""Instructions per exalted2e resolution, counted by callgrind: a figure that does not swing.

CPU time on these shared machines changes by ±40% between runs; instruction
counts do not. This runs the benchmark attack twice under callgrind (0 and N
resolutions, so start-up cancels out) and prints instructions per resolution,
with and without the Excellency pack — the number to compare before and after
an engine change.

    .venv/bin/python bench/engine_instructions.py [--n 1000]

Needs valgrind (Debian package ``valgrind``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()


def resolve(n: int, block: list[str]) -> None:
    from engine_bench import load  # same tokens and attack as bench/engine_bench.py

    from vtt_bridge import freeze, make_host

    host = make_host(block=block)
    data, tokens = load(host)
    declaration = freeze(host.load_declaration("exalted2e", data["declaration"]))
    engine = host.engine
    for seed in range(n):
        engine.start(
            "exalted2e", tokens, attacker=data["attacker"], targets=data["targets"], declaration=declaration, seed=seed
        ).run()


def instructions(n: int, block: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable, str(HERE), "--run", str(n)]
        argv += [f"--block={b}" for b in block]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found, done.stderr[-2000:]
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="resolutions to count")
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--block", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        sys.path.insert(0, str(HERE.parent))
        resolve(args.run, args.block)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found: apt-get install valgrind")
    for label, block in (("Excellency pack loaded", []), ("pack blocked", ["excellencies"])):
        per = (instructions(args.n, block) - instructions(0, block)) / args.n
        print(f"exalted2e, {label:24s} {per:12,.0f} instructions per resolution")


if __name__ == "__main__":
    main()
