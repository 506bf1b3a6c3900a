"""The server bench runs (``--quick``), prints every target beside its figure, and the load average."""

from __future__ import annotations

import os
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
    assert "failed: 0]" in out and "plugin_error" not in out
    # The round trip's floor with the attack's own resolution in it, and that job hot and in its resolver.
    assert "floor with the resolution:" in out and "the duel job in its resolver process:" in out
