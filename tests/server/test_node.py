"""A JavaScript client with the official ``socket.io-client`` (npm) talks to the bridge."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


async def _npm_install() -> None:
    if (NODE_DIR / "node_modules" / "socket.io-client").is_dir():
        return
    proc = await asyncio.create_subprocess_exec(
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        cwd=NODE_DIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 180)
    if proc.returncode != 0:
        pytest.fail(f"npm install failed in {NODE_DIR}:\n{out.decode()}")


@pytest.mark.slow
async def test_node_socket_io_client_connects_attacks_answers_and_hears_broadcasts(server, seat):
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the JavaScript interop test")
    await _npm_install()
    proc = await asyncio.create_subprocess_exec(
        "node",
        "interop.mjs",
        server.url,
        seat.id,
        seat.keys["gm"],
        cwd=NODE_DIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    seen = json.loads(out)

    assert seen["refused"] == {"message": "the key does not open this table", "code": "forbidden"}
    assert seen["rulesets"] == ["duel"]
    ack = seen["ack"]
    assert ack["ok"] is True
    attack = ack["attack"]
    assert [d["key"] for d in seen["decisions"]] == ["defense"]
    assert attack["decisions"][0]["how"] == "answered" and attack["decisions"][0]["answer"] == {"option": "none"}
    assert attack["tokens"]["b"]["after"]["system"]["hp"] == 8
    names = [name for name, _ in seen["events"]]
    # Only the step before the question is its own message; the rest come in attack.resolved.
    assert names.count("attack.step") == 1
    assert names[-2:] == ["attack.resolved", "token.updated"]
    assert seen["events"][-2][1]["attack"] == attack
    assert seen["conflict"]["ok"] is False and seen["conflict"]["error"]["code"] == "conflict"
    assert (await seat.tokens())["b"]["system"]["hp"] == 8
