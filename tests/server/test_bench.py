"""The server bench runs (``--quick``), prints every target beside its figure, and the load average."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_the_server_bench_runs_quick_and_prints_targets_beside_figures():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "server_bench.py"), "--quick", "--clients", "10", "--tables", "2"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "load average before" in out and "load average after" in out
    for ruleset in ("duel", "exalted2e", "warmachine_mk3"):
        assert f"{ruleset}, every broadcast" in out
    assert "(target >= 1,200)" in out and "(target <= 0.6)" in out and "(target <= 2)" in out
    assert "1 worker x" in out and "2 workers x" in out and "(target >= 1,500)" in out
    # Over Redis against one process over SQLite, side by side, for 1 and 2 workers (issue 27).
    ratios = re.findall(r"side by side: one process over SQLite [\d.]+ ms/attack .*: ([\d.]+)x \(target <= 1.5\)", out)
    assert len(ratios) == 2, out
    assert "failed: 0" in out and "plugin_error" not in out
    # Warmachine models wrecked by the attacks are put back, so no attack of a run fails for want of a target.
    warmachine = [row for row in out.splitlines() if "warmachine_mk3" in row and "attacks/s" in row]
    assert len(warmachine) >= 3, warmachine  # one process (and, in a full run, over Redis)
    assert all("failed: 0" in row for row in warmachine), warmachine
    assert any("wrecked models put back by the GM" in row for row in warmachine), warmachine
    # The round trip's floor with the attack's own resolution in it, and that job hot and in its resolver.
    assert "floor with the resolution:" in out and "the duel job in its resolver process:" in out
