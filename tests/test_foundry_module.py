"""The Foundry VTT module in clients/foundry builds, passes its own tests, type-checks and packages.

``npm ci`` (the committed package-lock.json), ``npm test`` (node:test: the module's logic,
a whole attack through a real ``vtt-bridge serve`` answered from the module's code, and
the Foundry harness — the built bundle in jsdom with Foundry 12/13/14 simulated, against
a real bridge — whose line coverage of ``src/foundry/`` must be at least 90%),
``npm run typecheck`` (tsc against the Foundry v13 types, the example attacks' recorded
rolls included) and ``npm run package`` (the zip with module.json at its root).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[1] / "clients" / "foundry"


def _npm(*args: str, timeout: float) -> str:
    env = dict(os.environ)
    # The connection tests start this interpreter's `vtt-bridge serve`.
    env["VTT_BRIDGE_BIN"] = str(Path(sys.executable).with_name("vtt-bridge"))
    env.setdefault("npm_config_update_notifier", "false")
    proc = subprocess.run(
        ["npm", *args], cwd=MODULE, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"npm {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.slow
def test_the_foundry_module_installs_tests_typechecks_and_packages():
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the Foundry module")
    _npm("ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", timeout=300)
    out = _npm("test", timeout=600)
    assert "# fail 0" in out and "# pass" in out
    coverage = re.search(r"src/foundry line coverage: ([\d.]+)%", out)
    assert coverage, out[-2000:]
    assert float(coverage.group(1)) >= 90
    _npm("run", "typecheck", timeout=300)
    _npm("run", "package", timeout=120)
    with zipfile.ZipFile(MODULE / "dist" / "vtt-bridge.zip") as zf:
        assert zf.testzip() is None
        names = set(zf.namelist())
    assert {"module.json", "dist/vtt-bridge.js", "lang/en.json", "styles/vtt-bridge.css"} <= names
