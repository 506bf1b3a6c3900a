"""The engine compiled by Cython, and as plain Python: the same records either way.

Installing the project compiles the engine's modules (``setup.py``); they run
from their source when nothing was compiled, with ``VTT_BRIDGE_NO_EXTENSIONS=1``,
or when a module was edited after it was compiled.
"""

import ast
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import vtt_bridge
from vtt_bridge import engine

from .golden import GOLDEN, records

ENGINE = Path(engine.__file__).parent
BUILT = all(any(ENGINE.glob(f"{name}.*.so")) for name in engine.COMPILED)


def _run(code: str, *, env: dict[str, str] | None = None, path: Path | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "VTT_BRIDGE_NO_EXTENSIONS"}
    if path is not None:
        environ["PYTHONPATH"] = str(path)
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path or Path(__file__).parents[2],
    )


def test_an_installed_engine_runs_compiled():
    if not BUILT:
        if os.environ.get("VTT_BRIDGE_REQUIRE_ALL"):
            pytest.fail("the engine was not compiled at install time (see setup.py): is Cython or a C compiler missing?")
        pytest.skip("the engine was not compiled here (no C compiler at install time)")
    assert engine.compiled() == dict.fromkeys(engine.COMPILED, True)


def test_setup_py_compiles_the_modules_the_engine_knows_of():
    """``setup.py`` cannot import the package it builds: its own list must match ``engine.COMPILED``."""
    text = (Path(__file__).parents[2] / "setup.py").read_text()
    listed = re.search(r"^COMPILED = (\(.*?\))$", text, re.M)
    assert listed is not None
    assert ast.literal_eval(listed.group(1)) == engine.COMPILED


def test_plain_python_on_request_gives_the_pinned_records():
    """VTT_BRIDGE_NO_EXTENSIONS=1: every module from its source, every golden record as pinned."""
    code = (
        "import json, sys\n"
        "from vtt_bridge import engine, make_host\n"
        "from tests.engine.golden import records\n"
        "json.dump({'compiled': engine.compiled(), 'records': records(make_host())}, sys.stdout)\n"
    )
    done = _run(code, env={"VTT_BRIDGE_NO_EXTENSIONS": "1"})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["compiled"] == dict.fromkeys(engine.COMPILED, False)
    pinned = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    assert _text(out["records"]) == _text(pinned)  # as JSON text: true is not 1
    # And the process running these tests (compiled where it was built) gives the same.
    assert _text(records(vtt_bridge.make_host())) == _text(pinned)


def _text(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@pytest.mark.skipif(not BUILT, reason="the engine was not compiled here")
def test_an_engine_module_edited_after_installing_runs_its_edit(tmp_path):
    """A contributor's edit is never shadowed by the module compiled before it: that module
    runs from source (with a warning saying to install again), the others stay compiled."""
    copy = tmp_path / "vtt_bridge"
    shutil.copytree(Path(vtt_bridge.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    dice = copy / "engine" / "dice.py"
    dice.write_text(dice.read_text() + "\nEDITED = True\n")
    code = (
        "import json, sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "import vtt_bridge\n"
        "from vtt_bridge.engine import compiled, dice\n"
        "print(json.dumps({'file': vtt_bridge.__file__, 'edited': getattr(dice, 'EDITED', False), 'compiled': compiled()}))\n"
    )
    done = _run(code, path=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["file"].startswith(str(tmp_path))
    assert out["edited"] is True
    assert out["compiled"] == {**dict.fromkeys(engine.COMPILED, True), "dice": False}
    assert "vtt_bridge.engine.dice changed since it was compiled" in done.stderr
