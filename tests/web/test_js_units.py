"""The browser modules' unit tests (``tests/js``, plain ``node:test``) run with the suite.

``common/schema-form.js`` and ``common/card.js`` have no DOM and no socket, so Node runs
their tests directly; the web table and the Foundry module import the same files.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

JS_TESTS = Path(__file__).resolve().parents[1] / "js"


def test_node_unit_tests_of_the_shared_modules_pass():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed for the JavaScript unit tests")
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert files, f"no *.test.mjs under {JS_TESTS}"
    proc = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout, proc.stdout[-3000:]
