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
   pipeline (:func:`vtt_bridge.odds.monte_carlo`), in one process and shared
   between one worker per core (what ``vtt-bridge odds`` does; the counts are
   the same either way, which is checked). Target: 10,000 in under 1 s.

The machine's load average is printed with the figures: other processes on a
2-core box slow the Monte Carlo figures down in proportion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vtt_bridge import make_host  # noqa: E402
from vtt_bridge.cli.resolve import load_tokens  # noqa: E402
from vtt_bridge.odds import compute_odds, dice, monte_carlo, odds_request  # noqa: E402

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


def mc_time(host, data, tokens, samples: int, workers: int = 1):
    """(seconds, CPU seconds of this process, counts) of ``samples`` Monte Carlo resolutions over ``workers`` processes."""
    request = odds_request(host, data, tokens)
    start, cpu = time.perf_counter(), time.process_time()
    counts = monte_carlo(host, request, samples=samples, seed=1, workers=workers)
    return time.perf_counter() - start, time.process_time() - cpu, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 Monte Carlo resolutions instead of 10,000")
    parser.add_argument("--repeats", type=int, default=None, help="warm exact calls per ruleset (default 30; 3 with --quick)")
    args = parser.parse_args(argv)
    samples = 1_000 if args.quick else 10_000
    repeats = args.repeats if args.repeats is not None else (3 if args.quick else 30)
    start = time.perf_counter()
    import icepool  # noqa: F401  -- once per process, on the first exact answer

    print(f"icepool import (once per process): {(time.perf_counter() - start) * 1e3:.0f} ms")
    host = make_host()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  (cores: {os.cpu_count()})")
    cores = os.cpu_count() or 1
    print(
        f"{'ruleset':16} {'exact cold':>11} {'exact warm':>11} {'vs 20 ms':>9}   "
        f"{'MC ' + format(samples, ',') + ' ×1':>14} {'res/s':>7} {'CPU µs/res':>10} {'×' + str(cores) + ' procs':>10} {'vs 1 s':>7}"
    )
    worst_exact, worst_mc = 0.0, 0.0
    for ruleset, path in TYPICAL.items():
        if not (ROOT / path).exists():
            print(f"{ruleset:16} (no {path}: skipped)")
            continue
        data = json.loads((ROOT / path).read_text())
        tokens = load_tokens(host, data)
        cold, warm = exact_times(host, data, tokens, repeats)
        (serial, cpu, counts), (parallel, _, shared) = mc_time(host, data, tokens, samples), mc_time(host, data, tokens, samples, cores)
        assert counts == shared, f"{ruleset}: Monte Carlo counts differ between 1 and {cores} processes"
        per_10k = min(serial, parallel) * 10_000 / samples
        worst_exact, worst_mc = max(worst_exact, cold), max(worst_mc, per_10k)
        print(
            f"{ruleset:16} {cold * 1e3:9.2f}ms {warm * 1e3:9.2f}ms {cold * 1e3 / EXACT_TARGET_MS:8.2f}x"
            f"   {serial:13.2f}s {samples / serial:7.0f} {cpu / samples * 1e6:10.0f} {parallel:9.2f}s {per_10k / MC_TARGET_S:6.2f}x"
        )
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"target: exact (cold) < {EXACT_TARGET_MS:g} ms; worst measured {worst_exact * 1e3:.2f} ms "
        f"({'met' if worst_exact * 1e3 < EXACT_TARGET_MS else 'MISSED'})"
    )
    print(
        f"target: 10,000 Monte Carlo resolutions ≤ {MC_TARGET_S:g} s for every ruleset; worst (best of 1 and {cores} "
        f"processes{', scaled from ' + format(samples, ',') if samples != 10_000 else ''}) {worst_mc:.2f} s "
        f"({'met' if worst_mc <= MC_TARGET_S else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
