"""Every bench in bench/ still runs: each in its ``--quick`` mode, printing its targets and the load.

Performance goals live in the benches, never in timed tests: these check only
that a bench runs to the end and reports what it measures against what, so a
moved import or a renamed API cannot leave a bench broken until someone needs it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"

# bench file → arguments of its quick run
QUICK = {
    "engine_bench.py": ["--quick"],
    "engine_instructions.py": ["--quick"],
    "odds_bench.py": ["--quick"],
    "redis_memory.py": ["--quick"],
    "server_instructions.py": ["--quick"],
    "slow_readers.py": ["--quick"],
}
# Run by a test of their own, which checks more of what they print (one quick run is enough).
ELSEWHERE = {
    "server_bench.py": "tests/server/test_bench.py",
    "odds_latency.py": "tests/server/test_oddsrun.py",
    "capacity_bench.py": "tests/test_benches.py",  # below: test_capacity_bench_runs_quick
    "redis_clients.py": "tests/state/test_redis_bench.py",
}

# Not benches: code a bench loads elsewhere (gc_timing: into the server process it starts).
HELPERS = {"gc_timing.py"}


def test_every_bench_is_listed():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted([*QUICK, *ELSEWHERE, *HELPERS])
    root = BENCH.parent
    assert all("--quick" in (root / test).read_text() for test in ELSEWHERE.values())


@pytest.mark.slow
@pytest.mark.parametrize("bench", sorted(QUICK))
def test_bench_runs_quick(bench):
    done = subprocess.run(
        [sys.executable, str(BENCH / bench), *QUICK[bench]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout.lower()
    assert "target" in out, done.stdout
    assert "load average" in out, done.stdout


@pytest.mark.slow
def test_capacity_bench_runs_quick():
    """20 tables of five websocket players on a real ``serve`` process: every attack acknowledged,
    every figure printed beside its target, and no more processes under the server than it may fork."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "capacity_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "load average before" in out and "load average after" in out
    assert "20 tables x 5 connections (100 connected)" in out, out
    committed = re.search(r"attacks committed: (\d+)", out)
    assert committed and int(committed.group(1)) >= 10, out  # each table attacks within the first 10 s
    assert re.search(r"p50 [\d.]+ ms, p99 [\d.]+ ms \(target <= 100\)", out), out
    assert "p99 per 10 s, ms:" in out and "load generator CPU:" in out and "server CPU:" in out
    assert re.search(r"RSS \d+ MB .* Pss \d+ MB", out), out
    assert "failed: 0 " in out and "lost: 0 " in out and "refused connections: 0" in out, out
    most = re.search(r"at most (\d+) at once, \d+ seen in all \(target <= (\d+)", out)
    assert most and 2 <= int(most.group(1)) <= int(most.group(2)), out  # the resolvers, never more than allowed


# The summary cachegrind (valgrind 3.19) writes to standard error, as bench/engine_instructions.py --cache reads it.
CACHEGRIND_SUMMARY = """\
==30852== I   refs:      1,708,291,597
==30852== I1  misses:       16,826,014
==30852== LLi misses:          101,385
==30852== I1  miss rate:          0.98%
==30852== D   refs:        788,591,491  (522,202,445 rd   + 266,389,046 wr)
==30852== D1  misses:        9,528,022  (  7,573,689 rd   +   1,954,333 wr)
==30852== LLd misses:          364,996  (     55,575 rd   +     309,421 wr)
==30852== Branches:        282,098,094  (240,755,548 cond +  41,342,546 ind)
==30852== Mispredicts:      26,875,672  ( 14,979,446 cond +  11,896,226 ind)
==30852== Mispred rate:            9.5% (        6.2%     +        28.8%   )
"""


def test_engine_instructions_reads_what_valgrind_counted(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # sys.path as it was afterwards (the bench adds to it too)
    import engine_instructions
    assert engine_instructions.read_counts(CACHEGRIND_SUMMARY, cache=True) == {
        "instructions": 1_708_291_597,
        "L1i misses": 16_826_014,
        "L1d misses": 9_528_022,
        "mispredicts": 26_875_672,
    }
    assert engine_instructions.read_counts("==1== Collected : 941738858\n", cache=False) == {"instructions": 941_738_858}
    with pytest.raises(AssertionError, match="L1d misses"):
        engine_instructions.read_counts(CACHEGRIND_SUMMARY.replace("D1  misses", "D1 missed"), cache=True)
