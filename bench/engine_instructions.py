"""Instructions per exalted2e resolution, counted by callgrind: a figure that does not swing.

CPU time on these shared machines changes by ±40% between runs; instruction
counts do not. Each workload runs twice under callgrind (0 and N times, so
start-up cancels out) and the difference per run is printed. Both runs first
resolve one warm-up attack (seed ``WARM_UP``, outside the counted seeds), as a
resolver has before its first job: what is built once per process — the
ruleset's step plan, the pluggy floor's first calls — is start-up on both
sides and cancels out too, so the figures are the steady state. The workloads:

- exalted2e with the Excellency pack loaded, and with it blocked (the
  benchmark attack of ``bench/engine_bench.py``, full trace);
- the same with the wire record built (Foundry roll JSON included);
- the pack loaded, each resolution with snapshots and a declaration of its own,
  as a table's attacks have (nothing remembered per snapshot is found again;
  the snapshots are made before counting, in both runs);
- the pluggy floor: the ten exalted2e step hooks with two no-op
  implementations each, called through pluggy — the yardstick, here in
  instructions, so "within 2.2× of the floor" (issue 26's budget) can be
  checked without noise;
- the same no-op hooks run as a ruleset by this engine (its own cost per
  resolution: context, trace entries, callers, driver).

    .venv/bin/python bench/engine_instructions.py [--n 300]
    .venv/bin/python bench/engine_instructions.py --quick   # the workloads once each, natively
    .venv/bin/python bench/engine_instructions.py --only pack --only floor   # chosen workloads only

Needs valgrind (Debian package ``valgrind``) except with ``--quick``, which
only checks that every workload still runs (a counting run takes minutes).

``--cache`` counts under cachegrind's cache and branch simulation instead: per
resolution, the instructions with the level-1 instruction and data cache
misses and the mispredicted branches, and each as a multiple of the pluggy
floor's. Instructions are not time: a workload that misses the caches and
mispredicts more than the floor runs more slowly per instruction, which is
why ``bench/engine_bench.py``'s time ratio to the floor is above this
bench's instruction ratio. The simulated caches are the ones valgrind
configures for this host; the counts do not depend on the machine's load.

    .venv/bin/python bench/engine_instructions.py --cache --only pack --only floor
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

# Figures from before issue 12's engine work (commit da31bee, --n 300; +record: --n 200), for comparison.
BEFORE = {"pack": 581_428, "blocked": 506_368, "record": 944_270}
TARGET_FLOOR_RATIO = 2.2  # issue 26's budget (issue 12 aimed at 2.0 with the compiled engine)
WARM_UP = 1_000_000  # the warm-up resolution's seed: never one of the counted ones (0 .. n-1)

WORKLOADS = {
    "pack": "exalted2e, Excellency pack loaded",
    "blocked": "exalted2e, pack blocked",
    "record": "exalted2e, pack loaded +record",
    "fresh": "exalted2e, pack loaded, fresh snapshots",
    "floor": "floor: 10 hooks × 2 no-ops via pluggy",
    "engine-floor": "floor: the same no-ops via this engine",
}


def _settled() -> None:
    """Collect the set-up's garbage and move what is left out of the collector's sight.

    A resolver does the same once it is forked (``vtt_bridge/server/pool.py``),
    so resolutions meet only their own young objects. Without it, whether one
    collection of the set-up's objects (some 28,000) falls in the counted run or
    not moved the pack's figure by about 6,000 instructions per resolution.
    """
    gc.collect()
    gc.freeze()


def workload(name: str, n: int) -> None:
    """Run one workload ``n`` times (what callgrind counts)."""
    if name in ("floor", "engine-floor"):
        from engine_bench import floor
        from vtt_exalted2e.ruleset import STEPS

        through_pluggy, through_engine = floor([s.name for s in STEPS])
        run = through_pluggy if name == "floor" else through_engine
        run(WARM_UP)
        _settled()
        for i in range(n):
            run(i)
        return
    from engine_bench import load  # same tokens and attack as bench/engine_bench.py

    from vtt_bridge import freeze, make_host

    host = make_host(block=["excellencies"] if name == "blocked" else [])
    data, tokens = load(host)
    declaration = freeze(host.load_declaration("exalted2e", data["declaration"]))
    engine = host.engine
    sets = [(tokens, declaration)]
    if name == "fresh":
        from engine_bench import FRESH

        sets = [(load(host)[1], freeze(host.load_declaration("exalted2e", data["declaration"]))) for _ in range(FRESH)]

    def resolve(seed: int, tokens, declaration) -> None:
        res = engine.start(
            "exalted2e", tokens, attacker=data["attacker"], targets=data["targets"], declaration=declaration, seed=seed
        )
        res.run()
        if name == "record":
            res.record

    # Warm-up: its own snapshots for "fresh" (nothing remembered for the counted sets).
    resolve(WARM_UP, *(sets[0] if name != "fresh" else (load(host)[1], sets[0][1])))
    _settled()
    for seed in range(n):
        resolve(seed, *sets[seed % len(sets)])


# What ``--cache`` counts, as cachegrind's summary names each (its totals, reads and writes together).
CACHE_EVENTS = {
    "instructions": r"I\s+refs:\s+([\d,]+)",
    "L1i misses": r"I1\s+misses:\s+([\d,]+)",
    "L1d misses": r"D1\s+misses:\s+([\d,]+)",
    "mispredicts": r"Mispredicts:\s+([\d,]+)",
}


def counts(name: str, n: int, cache: bool = False) -> dict[str, int]:
    """What valgrind counted running workload ``name`` ``n`` times: the instructions, and with
    ``cache`` the cache misses and mispredicted branches too (:data:`CACHE_EVENTS`)."""
    with tempfile.TemporaryDirectory() as tmp:
        if cache:
            argv = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes"]
            argv += [f"--cachegrind-out-file={tmp}/out"]
        else:
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out"]
        argv += [sys.executable, str(HERE), "--run", name, "--n", str(n)]
        # A fixed hash seed: string hashes (and so dict probing) do not change the count between runs.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    return read_counts(done.stderr, cache)


def read_counts(stderr: str, cache: bool) -> dict[str, int]:
    """The counts in valgrind's summary (its standard error): callgrind's, or with ``cache`` cachegrind's."""
    patterns = CACHE_EVENTS if cache else {"instructions": r"Collected : (\d+)"}
    found = {event: re.search(pattern, stderr) for event, pattern in patterns.items()}
    missing = [event for event, match in found.items() if match is None]
    assert not missing, f"{missing} not in valgrind's output: {stderr[-2000:]}"
    return {event: int(match.group(1).replace(",", "")) for event, match in found.items()}  # type: ignore[union-attr]


def instructions(name: str, n: int) -> int:
    return counts(name, n)["instructions"]


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="resolutions to count per workload")
    parser.add_argument("--quick", action="store_true", help="run each workload a few times natively, count nothing")
    parser.add_argument(
        "--only", action="append", choices=list(WORKLOADS), metavar="WORKLOAD",
        help=f"count only this workload (repeatable; one of: {', '.join(WORKLOADS)})",
    )  # fmt: skip
    parser.add_argument(
        "--cache", action="store_true",
        help="simulate the caches and branch prediction (cachegrind): misses and mispredicts per resolution too",
    )  # fmt: skip
    parser.add_argument("--run", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    chosen = {name: label for name, label in WORKLOADS.items() if not args.only or name in args.only}
    if args.run is not None:
        workload(args.run, args.n)
        return 0
    print(f"load average before: {load_average()} (instruction counts do not depend on it)")
    if args.quick:
        for name, label in chosen.items():
            workload(name, 20)
            print(f"{label:40s} ran 20 times (quick: nothing counted)")
        print(f"target: ≤{TARGET_FLOOR_RATIO:g}× the pluggy floor's instructions with the pack loaded (a full run counts it)")
        print(f"load average after: {load_average()}")
        return 0
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found: apt-get install valgrind (or run with --quick)")
    if args.cache:
        return cache_main(chosen, args.n)
    per = {}
    for name, label in chosen.items():
        per[name] = (instructions(name, args.n) - instructions(name, 0)) / args.n
        before = f"   (before issue 12: {BEFORE[name]:,})" if name in BEFORE else ""
        print(f"{label:40s} {per[name]:12,.0f} instructions per resolution{before}")
    if "pack" in per and "floor" in per:
        ratio = per["pack"] / per["floor"]
        verdict = "met" if ratio <= TARGET_FLOOR_RATIO else "MISSED"
        print(f"target: ≤{TARGET_FLOOR_RATIO:g}× the pluggy floor with the pack loaded; measured {ratio:.2f}× ({verdict})")
    print(f"load average after: {load_average()}")
    return 0


def cache_main(chosen: dict[str, str], n: int) -> int:
    """``--cache``: each workload's counts per resolution, and each as a multiple of the floor's."""
    events = list(CACHE_EVENTS)
    per: dict[str, dict[str, float]] = {}
    width = max(len(label) for label in chosen.values()) + len(" ÷ floor")
    print(f"{'per resolution (cachegrind)':{width}s}" + "".join(f" {event:>13s}" for event in events))
    for name, label in chosen.items():
        none, some = counts(name, 0, cache=True), counts(name, n, cache=True)
        per[name] = {event: (some[event] - none[event]) / n for event in events}
        print(f"{label:{width}s}" + "".join(f" {per[name][event]:13,.0f}" for event in events))
    floor = per.get("floor")
    if floor is not None:
        for name, label in chosen.items():
            if name != "floor":
                ratios = [per[name][event] / floor[event] if floor[event] else float("inf") for event in events]
                print(f"{label + ' ÷ floor':{width}s}" + "".join(f" {ratio:12.2f}×" for ratio in ratios))
        print(
            "each miss and mispredict costs cycles an instruction count does not show: where a workload's"
            " multiples of the floor pass its instruction multiple, its time ratio (bench/engine_bench.py) does too"
        )
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
