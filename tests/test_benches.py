"""Every bench in bench/ still runs: each in its ``--quick`` mode, printing its targets and the load.

Performance goals live in the benches, never in timed tests: these check only
that a bench runs to the end and reports what it measures against what, so a
moved import or a renamed API cannot leave a bench broken until someone needs it.
"""

from __future__ import annotations

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
    "server_instructions.py": ["--quick"],
    "slow_readers.py": ["--quick"],
}
# Run by a test of their own, which checks more of what they print (one quick run is enough).
ELSEWHERE = {"server_bench.py": "tests/server/test_bench.py", "odds_latency.py": "tests/server/test_oddsrun.py"}


def test_every_bench_is_listed():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted([*QUICK, *ELSEWHERE])
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
