"""bench/redis_clients.py --quick: the clients compared on the store's operation mix against a real Redis."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "bench" / "redis_clients.py"


def test_the_redis_client_bench_measures_each_installed_client_on_each_operation():
    pytest.importorskip("redis")
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "redis-py" in report["clients"]  # the one the store uses is always measured
    assert "commit+WAIT" in report["clients"]["redis-py"]  # its cost with a replica confirming
    for name, ops in report["clients"].items():
        assert {"commit", "reads", "pubsub"} <= set(ops), name
        for op, figures in ops.items():
            assert 0 < figures["median_us"] <= figures["p99_us"], (name, op)
            assert figures["client_cpu_us"] > 0 and figures["server_cpu_us"] >= 0, (name, op)
