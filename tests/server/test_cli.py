"""The commands a user types: ``vtt-bridge table ...`` and ``vtt-bridge serve --demo``."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from vtt_bridge.cli import main

from .kit import Client, answer

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_create_key_list_and_check(tmp_path, capsys):
    db = str(tmp_path / "t.sqlite")
    code, out, _ = run(capsys, "table", "create", "Friday game", "--decision-timeout", "20", "--db", db)
    assert code == 0
    table = re.search(r"table:\s+(t-\w+)", out).group(1)
    assert re.search(r"GM key:\s+\S{40,}", out)
    code, out, _ = run(capsys, "table", "key", table, "alice", "--db", db)
    assert code == 0 and re.search(rf"key for alice at {table}: \S{{40,}}", out)
    code, out, _ = run(capsys, "table", "list", "--db", db)
    assert table in out and "'Friday game'" in out and "keys: alice, gm" in out
    code, out, _ = run(capsys, "table", "check", table, "--db", db)
    assert code == 0 and out.startswith("ok: 0 audit entries")


def test_table_commands_refuse_clearly(tmp_path, capsys):
    db = str(tmp_path / "t.sqlite")
    code, _, err = run(capsys, "table", "key", "t-nope", "alice", "--db", db)
    assert code == 2 and "[not_found]" in err
    run(capsys, "table", "create", "x", "--db", db)
    table = re.search(r"(t-\w+)", run(capsys, "table", "list", "--db", db)[1]).group(1)
    code, _, err = run(capsys, "table", "key", table, "two words", "--db", db)
    assert code == 2 and "[invalid_request]" in err


async def _read_until(stream: asyncio.StreamReader, pattern: str, seen: list[str]) -> re.Match:
    async with asyncio.timeout(60):
        while True:
            line = (await stream.readline()).decode()
            if not line:
                raise AssertionError("the server exited:\n" + "".join(seen))
            seen.append(line)
            match = re.search(pattern, line)
            if match:
                return match


async def _serve(db: Path) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; from vtt_bridge.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        "--plugin",
        "tests.server.duel_plugin",
        "serve",
        "--demo",
        "--port",
        "0",
        "--db",
        str(db),
        "--decision-timeout",
        "5",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    seen: list[str] = []
    found = {"url": (await _read_until(proc.stdout, r"listening on (http://\S+)", seen)).group(1)}
    start = len(seen)
    await _read_until(proc.stdout, r"const socket = io\(", seen)
    text = "".join(seen[start:])
    found["table"] = re.search(r"demo table '(t-\w+)'", text).group(1)
    found.update(re.findall(r"key for (\w+):\s+(\S+)", text))
    await _read_until(proc.stdout, r'emitWithAck\("attack", \{"ruleset"', seen)
    return proc, found


async def _stop(proc: asyncio.subprocess.Process) -> str:
    proc.send_signal(signal.SIGINT)
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    return out.decode()


@pytest.mark.slow
async def test_serve_demo_then_connect_with_the_printed_keys_and_resolve_an_attack(tmp_path):
    db = tmp_path / "demo.sqlite"
    proc, found = await _serve(db)
    bob = alice = None
    try:
        assert set(found) >= {"url", "table", "gm", "alice", "bob"}
        bob = await Client(found["url"], answer("none")).connect({"table": found["table"], "key": found["bob"]})
        alice = await Client(found["url"]).connect({"table": found["table"], "key": found["alice"]})
        tokens = {t["id"] for t in (await alice.ok("token.list"))["tokens"]}
        assert {"a", "b", "c"} <= tokens
        attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
        assert bob.decisions[0]["key"] == "defense"
        assert attack["decisions"][0]["how"] == "answered"
    finally:
        for client in (bob, alice):
            if client is not None:
                await client.close()
        log = await _stop(proc)
    assert "stopped" in log

    # The same command again reuses the table, with fresh keys.
    proc, again = await _serve(db)
    try:
        assert again["table"] == found["table"] and again["gm"] != found["gm"]
        gm = await Client(again["url"]).connect({"table": again["table"], "key": again["gm"]})
        history = (await gm.ok("attack.history"))["attacks"]
        assert [h["id"] for h in history] == [attack["id"]]
        stale = Client(again["url"])
        assert await stale.try_connect({"table": found["table"], "key": found["gm"]}) is False
        await gm.close()
    finally:
        await _stop(proc)
