"""Benchmark the odds: time to the exact answer, and 10,000 Monte Carlo resolutions.

    .venv/bin/python bench/odds_bench.py            # the issue's figures
    .venv/bin/python bench/odds_bench.py --quick    # 1,000 Monte Carlo resolutions, 3 warm exact calls

For one typical attack per ruleset (a shipped example request), measured in
this process with every installed plugin loaded, as ``vtt-bridge odds`` runs:

1. the exact answer: ``compute_odds(..., method="exact")`` end to end —
   validating the request (one probe resolution), the method choice, the
   model's probes and its convolutions, the summary. *Cold* is a call with
   the odds' dice caches emptied (median of 5) (in a process that has imported
   icepool: its one-time import is printed apart); *warm* the median of
   repeated calls. Target: under 20 ms.
2. Monte Carlo: 10,000 seeded resolutions of the same request through the real
   pipeline (:func:`vtt_bridge.odds.monte_carlo`), in one process, then shared
   between one process per core (this one and forked workers: what
   ``vtt-bridge odds`` does by default; the counts are the same either way,
   which is checked). Target: the shared run's wall time, 10,000 in at most
   1 s. Beside it: the CPU time per resolution in one process (the figure to
   compare between runs), the CPU of all processes of the shared run (what
   sharing costs), and what the shared run would take on an idle machine
   (one-process CPU × samples ÷ cores).

The machine's load average is printed with the figures: other processes on a
2-core box slow the wall-clock figures down in proportion, not the CPU ones.

    .venv/bin/python bench/odds_bench.py --instructions [--n 100]

counts instead the instructions of one Monte Carlo resolution per ruleset
under callgrind (valgrind), a figure the machine's load does not move: to
compare two versions of the code, run it in each.

    .venv/bin/python bench/odds_bench.py --hooks --only warmachine_mk3 [--n 10]

splits that count: the instructions spent inside each step hook, options hook
and the setup of the ruleset and its packs (each call made through
``sys.call_tracing``, the one C function callgrind is told to count in), per
resolution, biggest first; the rest of the resolution is the engine's and the
odds driver's.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vtt_bridge import make_host  # noqa: E402
from vtt_bridge.cli.resolve import load_tokens  # noqa: E402
from vtt_bridge.odds import compute_odds, dice, monte_carlo, odds_request  # noqa: E402
from vtt_bridge.odds.montecarlo import cores as usable_cores  # noqa: E402

TYPICAL = {
    "exalted2e": "plugins/vtt_exalted2e/examples/sword_vs_soldier.json",
    "exalted2e_mass": "plugins/vtt_exalted2e_mass/examples/talon_vs_cinder.json",
    "warmachine_mk3": "plugins/vtt_warmachine_mk3/examples/melee_jack_punch.json",
    "highest_die": "plugins/vtt_highest_die/examples/seed_example_parry.json",
    "godsgloom": "plugins/vtt_godsgloom/examples/melee_shieldwall.json",
}
EXACT_TARGET_MS = 20.0
MC_TARGET_S = 1.0


def _clear() -> None:
    dice.clear_caches()
    try:
        from vtt_godsgloom.odds import pool_successes

        pool_successes.cache_clear()
    except ImportError:  # pragma: no cover - the ruleset is not installed
        pass


def exact_times(host, data, tokens, repeats: int) -> tuple[float, float]:
    """(cold, warm median) seconds to the exact answer."""
    odds_request(host, data, tokens)  # the host's one-time work for this ruleset (plans, schemas)
    colds = []
    for _ in range(5):
        _clear()
        start = time.perf_counter()
        compute_odds(host, data, tokens, method="exact")
        colds.append(time.perf_counter() - start)
    cold = statistics.median(colds)
    warm = []
    for _ in range(repeats):
        start = time.perf_counter()
        compute_odds(host, data, tokens, method="exact")
        warm.append(time.perf_counter() - start)
    return cold, statistics.median(warm)


def _cpu() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def mc_time(host, data, tokens, samples: int, workers: int = 1):
    """(wall seconds, CPU seconds of every process, counts) of ``samples`` Monte Carlo resolutions over ``workers`` processes."""
    request = odds_request(host, data, tokens)
    start, cpu = time.perf_counter(), _cpu()
    counts = monte_carlo(host, request, samples=samples, seed=1, workers=workers)
    return time.perf_counter() - start, _cpu() - cpu, counts


def _marker() -> None:
    """Where callgrind dumps its counters (``--dump-before=getppid``): around each ruleset's samples."""
    os.getppid()


def count_run(rulesets: list[str], n: int) -> None:
    """What ``--instructions`` runs under callgrind: for each ruleset, ``n`` resolutions between two markers."""
    host = make_host()
    for ruleset in rulesets:
        data = json.loads((ROOT / TYPICAL[ruleset]).read_text())
        request = odds_request(host, data, load_tokens(host, data))
        monte_carlo(host, request, samples=20, seed=1)  # the host's one-time work for this ruleset
        _marker()
        monte_carlo(host, request, samples=n, seed=1)
        _marker()


def _count_hooks(host, ruleset: str, n: int) -> None:
    """What ``--hooks`` runs under callgrind: ``n`` resolutions with every hook called through
    ``sys.call_tracing``; the names of the calls, in order, go to ``$ODDS_BENCH_HOOKS``."""
    data = json.loads((ROOT / TYPICAL[ruleset]).read_text())
    request = odds_request(host, data, load_tokens(host, data))
    names: list[str] = []
    through = sys.call_tracing

    def counted(function, name):
        def call(ctx):
            names.append(name)
            return through(function, (ctx,))

        return call

    def wrap(steps) -> None:
        for step in steps:
            step.call = counted(step.call, f"{step.hook_name} (all implementations)")
            step.walk = (*step.walk[:4], step.call, *step.walk[5:])
            if step.options is not None:
                step.options = counted(step.options, f"{step.options_hook} (all implementations)")
            wrap(step.children)

    plan = host.engine.plan(ruleset)
    wrap(plan.steps)
    if plan.ruleset.setup is not None:
        object.__setattr__(plan.ruleset, "setup", counted(plan.ruleset.setup, f"{ruleset} setup"))
    monte_carlo(host, request, samples=20, seed=1)  # the host's one-time work, and the wrappers warmed
    names.clear()
    monte_carlo(host, request, samples=n, seed=1)
    Path(os.environ["ODDS_BENCH_HOOKS"]).write_text(json.dumps(names))


def hook_instructions(ruleset: str, n: int) -> list[tuple[str, float, float]]:
    """``(hook, instructions per resolution, calls per resolution)`` inside each hook, biggest first."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            "valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=sys_call_tracing",
            "--dump-after=sys_call_tracing", f"--callgrind-out-file={tmp}/cg.%p",
            sys.executable, __file__, "--count-run", str(n), "--hooks", f"--only={ruleset}",
        ]  # fmt: skip
        env = {**os.environ, "PYTHONHASHSEED": "0", "ODDS_BENCH_HOOKS": f"{tmp}/names.json"}
        subprocess.run(argv, capture_output=True, check=True, env=env)
        names = json.loads(Path(f"{tmp}/names.json").read_text())
        dumps = sorted(glob.glob(f"{tmp}/cg.*.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        totals = [int(re.search(r"^totals: (\d+)", Path(f).read_text(), re.M).group(1)) for f in dumps]
    # One dump after each hook call (nothing is counted outside them): the last ones are the counted run's.
    calls = [t for t in totals if t > 0][-len(names):]
    spent: dict[str, int] = {}
    made: dict[str, int] = {}
    for name, count in zip(names, calls, strict=True):
        spent[name] = spent.get(name, 0) + count
        made[name] = made.get(name, 0) + 1
    return sorted(((name, spent[name] / n, made[name] / n) for name in spent), key=lambda row: -row[1])


def instructions(rulesets: list[str], n: int) -> dict[str, float]:
    """Instructions per Monte Carlo resolution of each ruleset, counted by callgrind in one run."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={tmp}/cg.%p"]
        argv += [sys.executable, __file__, "--count-run", str(n), *(f"--only={r}" for r in rulesets)]
        # A fixed hash seed: string hashes (and so dict probing) do not change the count between runs.
        subprocess.run(argv, capture_output=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        # Dumps cg.PID.1, cg.PID.2, ... (each up to a marker), then cg.PID (the rest): start-up,
        # then per ruleset its samples and the gap before the next ruleset's.
        dumps = sorted(glob.glob(f"{tmp}/cg.*.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        totals = [int(re.search(r"^totals: (\d+)", Path(f).read_text(), re.M).group(1)) for f in dumps]
    return {ruleset: totals[1 + 2 * i] / n for i, ruleset in enumerate(rulesets)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 Monte Carlo resolutions instead of 10,000")
    parser.add_argument("--repeats", type=int, default=None, help="warm exact calls per ruleset (default 30; 3 with --quick)")
    parser.add_argument("--workers", type=int, default=None, help="processes for the shared Monte Carlo run (default: one per usable core)")
    parser.add_argument("--only", action="append", choices=list(TYPICAL), help="only this ruleset (repeatable; default: all)")
    parser.add_argument("--instructions", action="store_true", help="count instructions per Monte Carlo resolution (callgrind)")
    parser.add_argument("--n", type=int, default=100, help="resolutions per ruleset to count with --instructions (default 100)")
    parser.add_argument("--hooks", action="store_true", help="instructions inside each hook per resolution (callgrind)")
    parser.add_argument("--count-run", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rulesets = [r for r in TYPICAL if not args.only or r in args.only]
    if args.count_run is not None:
        if args.hooks:
            _count_hooks(make_host(), rulesets[0], args.count_run)
        else:
            count_run(rulesets, args.count_run)
        return 0
    if args.hooks:
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (instruction counts do not depend on it)")
        n = args.n if args.n != 100 else 10
        for ruleset in rulesets:
            rows = hook_instructions(ruleset, n)
            print(f"{ruleset}: {sum(r[1] for r in rows):,.0f} instructions per resolution inside hooks "
                  f"({sum(r[2] for r in rows):.0f} calls); the rest is the engine's and the driver's")
            for name, per, calls in rows:
                print(f"  {per:10,.0f}  {calls:5.2f}×  {name}")
        return 0
    if args.instructions:
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (instruction counts do not depend on it)")
        for ruleset, per in instructions(rulesets, args.n).items():
            print(f"{ruleset:16} {per:12,.0f} instructions per Monte Carlo resolution")
        return 0
    samples = 1_000 if args.quick else 10_000
    repeats = args.repeats if args.repeats is not None else (3 if args.quick else 30)
    cores = args.workers or usable_cores()
    start = time.perf_counter()
    import icepool  # noqa: F401  -- once per process, on the first exact answer

    print(f"icepool import (once per process): {(time.perf_counter() - start) * 1e3:.0f} ms")
    host = make_host()
    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
        f"(cores: {os.cpu_count()}, usable: {usable_cores()}; Monte Carlo shared over {cores} processes)"
    )
    print(
        f"{'':16} {'---------- exact ----------':>33}   {'MC ' + format(samples, ',') + ': 1 process':>22}"
        f"   {'shared, ' + str(cores) + ' processes':>30}"
    )
    print(
        f"{'ruleset':16} {'cold':>9} {'warm':>9} {'vs 20 ms':>9}   {'wall':>7} {'CPU µs/res':>12}"
        f"   {'wall':>7} {'CPU µs/res':>12} {'idle est.':>9} {'vs 1 s':>7}"
    )
    worst_exact, worst_mc, worst_idle = 0.0, 0.0, 0.0
    for ruleset in rulesets:
        path = TYPICAL[ruleset]
        if not (ROOT / path).exists():
            print(f"{ruleset:16} (no {path}: skipped)")
            continue
        data = json.loads((ROOT / path).read_text())
        tokens = load_tokens(host, data)
        cold, warm = exact_times(host, data, tokens, repeats)
        serial, cpu1, counts = mc_time(host, data, tokens, samples)
        shared, cpu_n, counts_n = mc_time(host, data, tokens, samples, cores)
        assert counts == counts_n, f"{ruleset}: Monte Carlo counts differ between 1 and {cores} processes"
        per_10k = shared * 10_000 / samples
        idle = cpu1 * 10_000 / samples / cores
        worst_exact, worst_mc, worst_idle = max(worst_exact, cold), max(worst_mc, per_10k), max(worst_idle, idle)
        print(
            f"{ruleset:16} {cold * 1e3:7.2f}ms {warm * 1e3:7.2f}ms {cold * 1e3 / EXACT_TARGET_MS:8.2f}x"
            f"   {serial:6.2f}s {cpu1 / samples * 1e6:12.0f}"
            f"   {shared:6.2f}s {cpu_n / samples * 1e6:12.0f} {idle:8.2f}s {per_10k / MC_TARGET_S:6.2f}x"
        )
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"target: exact (cold) < {EXACT_TARGET_MS:g} ms; worst measured {worst_exact * 1e3:.2f} ms "
        f"({'met' if worst_exact * 1e3 < EXACT_TARGET_MS else 'MISSED'})"
    )
    scaled = f", scaled from {samples:,}" if samples != 10_000 else ""
    print(
        f"target: 10,000 Monte Carlo resolutions ≤ {MC_TARGET_S:g} s for every ruleset, shared over {cores} processes; "
        f"worst wall {worst_mc:.2f} s{scaled} ({'met' if worst_mc <= MC_TARGET_S else 'MISSED'}); "
        f"on an idle machine (1-process CPU ÷ {cores}) {worst_idle:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
