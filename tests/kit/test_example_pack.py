"""The example pack: its own tests pass, and it uses nothing but the public API."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import vtt_bridge
import vtt_bridge.testing

PACK = Path(__file__).resolve().parents[2] / "plugins" / "examples" / "vtt-pack-example"


def test_the_packs_own_tests_pass():
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTT_BRIDGE_")}
    env.update(PYTHONPATH=str(PACK), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"],
        cwd=PACK, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


def _imports(path: Path) -> list[tuple[str, str | None]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out += [(node.module or "", alias.name) for alias in node.names]
    return out


def test_the_pack_imports_only_the_public_api():
    sources = sorted((PACK / "vtt_pack_example").rglob("*.py"))
    assert sources
    for path in sources:
        for module, name in _imports(path):
            if module.startswith("vtt_bridge"):
                assert module == "vtt_bridge" and name in vtt_bridge.__all__, f"{path.name}: {module}.{name}"


def test_the_packs_tests_use_only_the_public_api_and_the_kit():
    for path in sorted((PACK / "tests").rglob("*.py")):
        for module, name in _imports(path):
            if module == "vtt_bridge.testing":
                assert name in vtt_bridge.testing.__all__, f"{path.name}: {module}.{name}"
            elif module.startswith("vtt_bridge"):
                assert module == "vtt_bridge" and name in vtt_bridge.__all__, f"{path.name}: {module}.{name}"
