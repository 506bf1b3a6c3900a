"""The example pack, installed with pip into a fresh virtual environment, runs where it claims.

Both distributions are built from copies of their sources (so the working tree
gets no ``build/``) and installed into a new venv with nothing else in it; the
commands then run from that venv, in a directory holding neither source, so the
pack can only be found through its entry point.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import socketio

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "plugins" / "examples" / "vtt-pack-example"
JUNK = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", ".pytest_cache")


def _copy_project(dest: Path) -> None:
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "vtt_bridge", dest / "vtt_bridge", ignore=JUNK)
    for plugin in (ROOT / "plugins").glob("vtt_*"):
        shutil.copytree(plugin, dest / "plugins" / plugin.name, ignore=JUNK)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("VTT_BRIDGE_", "PYTHON", "VIRTUAL_ENV"))}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """A new venv with vtt-bridge and vtt-pack-example pip-installed into it; returns its bin/."""
    root = tmp_path_factory.mktemp("install")
    _copy_project(root / "vtt-bridge")
    shutil.copytree(PACK, root / "vtt-pack-example", ignore=JUNK)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
         "--disable-pip-version-check", str(root / "vtt-bridge"), str(root / "vtt-pack-example")],
        capture_output=True, text=True, timeout=300, env=_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / "bin"


def _run(fresh: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(fresh / "vtt-bridge"), *args], capture_output=True, text=True, timeout=60, env=_env(), cwd=cwd
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_installed_pack_is_listed_with_its_distribution_and_step(fresh, tmp_path):
    info = json.loads(_run(fresh, "plugins", "--json", cwd=tmp_path).stdout)
    pack = next(p for p in info["plugins"] if p["name"] == "serpent_sting_fang")
    assert pack["distribution"] == "vtt-pack-example"
    assert pack["version"] == "0.1.0"
    assert pack["module"] == "vtt_pack_example"
    assert pack["steps"] == {"exalted2e": ["raw_damage"]}
    raw = next(s for s in info["rulesets"]["exalted2e"]["steps"] if s["step"] == "raw_damage")
    assert raw["impls"][0] == {"plugin": "serpent_sting_fang", "wrapper": True, "tryfirst": False, "trylast": False}
    # where it was installed from: the fresh venv, not this checkout
    where = subprocess.run(
        [str(fresh / "python"), "-c", "import vtt_pack_example as p, vtt_bridge as b; print(p.__file__, b.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=_env(), check=True,
    )  # fmt: skip
    assert all(path.startswith(str(fresh.parent)) for path in where.stdout.split())


def test_the_installed_pack_changes_raw_damage_at_step_7(fresh, tmp_path):
    request = tmp_path / "fang.json"
    shutil.copy(PACK / "examples" / "fang.json", request)
    record = json.loads(_run(fresh, "resolve", str(request), "--json", cwd=tmp_path).stdout)
    step = next(s for s in record["steps"] if s["step"] == "raw_damage")
    by_pack = [c for c in step["changes"] if c["plugin"] == "serpent_sting_fang"]
    assert len(by_pack) == 1 and by_pack[0]["number"] == "raw_damage"
    assert by_pack[0]["to"] == by_pack[0]["from"] + 1
    assert record["outcome"]["raw_damage"] == by_pack[0]["to"]
    # nobody else's step changed: the pack changed only the step it claims
    others = [c for s in record["steps"] for c in s["changes"] if c["plugin"] == "serpent_sting_fang" and s is not step]
    assert others == []


def test_the_installed_pack_is_inert_unless_declared_so_the_odds_stay_exact(fresh, tmp_path):
    """Issue 10: installing a pack that says ``inert`` does not turn exact odds into Monte Carlo."""
    data = json.loads((PACK / "examples" / "fang.json").read_text())
    request = tmp_path / "plain.json"
    request.write_text(json.dumps({**data, "declaration": {}}))
    plain = json.loads(_run(fresh, "odds", str(request), "--json", cwd=tmp_path).stdout)
    assert plain["method"] == "exact", plain["reason"]
    assert "serpent_sting_fang: installed, nothing of it declared" in plain["reason"]
    request.write_text(json.dumps(data))
    declared = json.loads(_run(fresh, "odds", str(request), "--json", "--samples", "200", cwd=tmp_path).stdout)
    assert declared["method"] == "monte_carlo"


async def test_the_server_loads_the_pack_through_its_entry_point(fresh, tmp_path):
    log = (tmp_path / "server.log").open("w")
    proc = await asyncio.create_subprocess_exec(
        str(fresh / "vtt-bridge"), "serve", "--demo", "--port", "0", "--db", str(tmp_path / "bridge.sqlite"),
        stdout=asyncio.subprocess.PIPE, stderr=log, cwd=tmp_path, env=_env(),
    )  # fmt: skip
    try:
        printed = ""
        async with asyncio.timeout(60):
            while "connect from JavaScript" not in printed:
                line = await proc.stdout.readline()
                assert line, "the server stopped:\n" + (tmp_path / "server.log").read_text()
                printed += line.decode()
        url = re.search(r"listening on (http://\S+)", printed)[1]
        table = re.search(r"demo table '([^']+)'", printed)[1]
        gm_key = re.search(r"key for gm:\s+(\S+)", printed)[1]

        request = json.loads((PACK / "examples" / "fang.json").read_text())
        gm = socketio.AsyncClient(reconnection=False)
        await gm.connect(url, auth={"table": table, "key": gm_key}, transports=["websocket"], wait_timeout=10)
        try:
            ids = {}
            for token in request["tokens"]:
                ids[token["id"]] = "fang-" + token["id"]  # the demo table has its own anoria
                ack = await gm.call(
                    "token.create", {**token, "id": ids[token["id"]], "ruleset": "exalted2e"}, timeout=10
                )
                assert ack["ok"], ack
            ack = await gm.call(
                "attack",
                {
                    "ruleset": "exalted2e",
                    "attacker": ids[request["attacker"]],
                    "targets": [ids[t] for t in request["targets"]],
                    "declaration": request["declaration"],
                    "seed": request["seed"],
                    "answers": request["answers"],
                },
                timeout=20,
            )
            assert ack["ok"], ack
            steps = ack["attack"]["steps"]
            by_pack = [(s["step"], c) for s in steps for c in s["changes"] if c["plugin"] == "serpent_sting_fang"]
            assert [(step, c["number"], c["to"] - c["from"]) for step, c in by_pack] == [
                ("raw_damage", "raw_damage", 1)
            ]
        finally:
            await gm.disconnect()
    finally:
        proc.terminate()
        await proc.wait()
        log.close()
