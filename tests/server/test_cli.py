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


async def _serve(db: Path, *extra: str) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
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
        *extra,
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
    found["text"] = text
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

    # The same command again reuses the table and its keys: the links given out keep working.
    keys_file = Path(f"{db}.demo-keys.json")
    assert keys_file.stat().st_mode & 0o777 == 0o600
    proc, again = await _serve(db)
    try:
        assert again["table"] == found["table"]
        assert {u: again[u] for u in ("gm", "alice", "bob")} == {u: found[u] for u in ("gm", "alice", "bob")}
        gm = await Client(again["url"]).connect({"table": again["table"], "key": again["gm"]})
        history = (await gm.ok("attack.history"))["attacks"]
        assert [h["id"] for h in history] == [attack["id"]]
        await gm.close()
    finally:
        await _stop(proc)

    # A key replaced by hand no longer opens the table: that one user gets a fresh key.
    assert await asyncio.to_thread(main, ["table", "key", found["table"], "bob", "--db", str(db)]) == 0
    proc, third = await _serve(db, "--public-url", "https://vtt.example.org/")
    try:
        assert third["gm"] == found["gm"] and third["bob"] != found["bob"]
        # The links players get are on the public URL.
        assert f"bob:     https://vtt.example.org/#table={third['table']}&key={third['bob']}" in third["text"]
        bob = await Client(third["url"]).connect({"table": third["table"], "key": third["bob"]})
        await bob.close()
    finally:
        await _stop(proc)


# -- one store for every command ----------------------------------------------------


def test_every_command_uses_the_same_store_from_the_environment(tmp_path, capsys, monkeypatch):
    """README's order: point VTT_BRIDGE_DB at a file once; table, tokens and serve all use it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VTT_BRIDGE_DB", "game.sqlite")
    code, out, _ = run(capsys, "table", "create", "Thursday game", "--public-url", "https://vtt.example.org/")
    assert code == 0 and f"store:   SQLite file {tmp_path / 'game.sqlite'}" in out
    table = re.search(r"table:\s+(t-\w+)", out).group(1)
    key = re.search(r"GM key:\s+(\S+)", out).group(1)
    assert f"GM link: https://vtt.example.org/#table={table}&key={key}" in out
    assert (tmp_path / "game.sqlite").exists() and not (tmp_path / "vtt_bridge.sqlite").exists()
    code, out, _ = run(capsys, "table", "key", table, "alice")
    assert code == 0 and "link:" in out
    assert run(capsys, "tokens", "export", "--table", table)[0] == 0
    # An option wins over the environment; a store that is not there is an error, not a new file.
    code, _, err = run(capsys, "table", "list", "--db", "other.sqlite")
    assert code == 2 and err.count("\n") == 1 and "no store at" in err and "--db" in err
    assert not (tmp_path / "other.sqlite").exists()
    from vtt_bridge.cli.serve import register  # noqa: F401 - serve reads the same options
    from vtt_bridge.cli import build_parser
    from vtt_bridge.cli.store import resolved

    for argv in (["serve"], ["table", "list"], ["tokens", "export", "--table", table]):
        assert resolved(build_parser().parse_args(argv)) == ("game.sqlite", None)


# -- errors: one line, what to do, non-zero ---------------------------------------------

SWORD = str(ROOT / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json")


def _request_with(tmp_path, **extra) -> str:
    import json

    data = json.loads(Path(SWORD).read_text())
    path = tmp_path / f"request-{'-'.join(extra)}.json"
    path.write_text(json.dumps({**data, **extra}))
    return str(path)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["resolve", "missing.json"], "no file 'missing.json': give the path of a JSON request"),
        (["odds", "missing.json"], "no file 'missing.json': give the path of a JSON request"),
        (["resolve", SWORD, "--dice", "7,x,3"], "--dice takes faces from 1 up"),
        (["resolve", SWORD, "--dice", "7,0"], "'0' is not one"),
        (["resolve", "{bad}"], "is not JSON"),
        (["resolve", "{declaraton}"], "declaraton: Unknown field."),
        (["odds", "{seeed}"], "seeed: Unknown field."),
        (["resolve", SWORD, "--answer", "defense"], "--answer takes KEY=OPTION"),
        (["table", "key", "t-nope", "alice", "--db", "{db}"], "no table 't-nope'"),
        (["tokens", "export", "--table", "t-nope", "--db", "{db}"], "no table 't-nope' in this store"),
        (["tokens", "import", "missing.json", "--table", "{table}", "--db", "{db}"], "no file 'missing.json'"),
        (["serve", "--redis", "redis://127.0.0.1:1/0"], "pip install 'vtt-bridge[redis]'"),
        (["serve", "--broadcast-keep", "0", "--db", "{db}"], "--broadcast-keep takes 1 to 100000 batches, not 0"),
        (["serve", "--audit-keep", "-1", "--db", "{db}"], "--audit-keep takes 0 (keep all) to 10000000 entries, not -1"),
        (["serve", "--broadcast-keep", "100001", "--db", "{db}"], "not 100001"),
        (["table", "list", "--redis", "redis://127.0.0.1:1/0"], "pip install 'vtt-bridge[redis]'"),
    ],
)
def test_cli_errors_are_one_line_and_say_what_to_do(tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "redis", None)  # as if the extra were not installed
    db = str(tmp_path / "t.sqlite")
    run(capsys, "table", "create", "x", "--db", db)
    table = re.search(r"(t-\w+)", run(capsys, "table", "list", "--db", db)[1]).group(1)
    (tmp_path / "bad.json").write_text("{not json")
    fill = {
        "{db}": db,
        "{table}": table,
        "{bad}": str(tmp_path / "bad.json"),
        "{declaraton}": _request_with(tmp_path, declaraton={}),
        "{seeed}": _request_with(tmp_path, seeed=4),
    }
    code, out, err = run(capsys, *[fill.get(a, a) for a in argv])
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and err.startswith("error") and "Traceback" not in err, err
    assert says in err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["serve", "--port", "x"], "argument --port: invalid int value: 'x' (see: vtt-bridge serve --help)"),
        (["serve", "--broadcast-keep", "1OO"], "argument --broadcast-keep: invalid int value: '1OO'"),
        (["tokens", "import"], "required: file, --table"),
        (["tablee"], "invalid choice: 'tablee'"),
    ],
)
def test_usage_mistakes_are_one_line_too(capsys, argv, says):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    _, err = capsys.readouterr()
    assert exited.value.code == 2 and err.count("\n") == 1 and says in err


def test_the_url_players_open(monkeypatch):
    from vtt_bridge.cli.serve import players_url

    monkeypatch.setattr("socket.gethostname", lambda: "gamebox")
    assert players_url("127.0.0.1", 8000, None) == "http://127.0.0.1:8000"
    assert players_url("0.0.0.0", 8000, None) == "http://gamebox:8000"
    assert players_url("::1", 8000, None) == "http://[::1]:8000"
    assert players_url("0.0.0.0", 8000, "https://vtt.example.org") == "https://vtt.example.org"


def test_a_redis_that_does_not_answer_is_one_line(capsys):
    pytest.importorskip("redis")
    code, _, err = run(capsys, "table", "list", "--redis", "redis://127.0.0.1:1/0")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error [store_unavailable]: cannot use Redis at redis://127.0.0.1:1") and "connection refused" in err


def test_a_port_in_use_is_one_line(tmp_path, capsys, monkeypatch):
    import socket

    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run(capsys, "serve", "--port", str(port), "--log-level", "error")
    assert code == 2 and err.count("\n") == 1
    assert f"cannot listen on 127.0.0.1:{port}" in err and "another --port" in err


# -- tokens export / import ---------------------------------------------------------------


def _warmachine_tokens() -> list[dict]:
    from vtt_bridge.plugins import make_host

    return [dict(t, ruleset="warmachine_mk3") for t in make_host().rulesets["warmachine_mk3"].sample_tokens()]


def test_a_campaign_moves_between_stores_with_export_and_import(tmp_path, capsys):
    import json

    old, new = str(tmp_path / "old.sqlite"), str(tmp_path / "new.sqlite")
    source = re.search(r"table:\s+(t-\w+)", run(capsys, "table", "create", "Old game", "--db", old)[1]).group(1)
    tokens = _warmachine_tokens()
    assert any("position" in t["system"] for t in tokens)  # scene positions are token data
    (tmp_path / "start.json").write_text(json.dumps(tokens))
    code, out, _ = run(capsys, "tokens", "import", str(tmp_path / "start.json"), "--table", source, "--db", old)
    assert code == 0 and f"{len(tokens)} created" in out
    code, _, err = run(capsys, "tokens", "export", "--table", source, "--db", old, "-o", str(tmp_path / "c.json"))
    assert code == 0 and f"wrote {len(tokens)} tokens" in err
    target = re.search(r"table:\s+(t-\w+)", run(capsys, "table", "create", "New game", "--db", new)[1]).group(1)
    code, out, _ = run(capsys, "tokens", "import", str(tmp_path / "c.json"), "--table", target, "--db", new)
    assert code == 0
    code, out, _ = run(capsys, "tokens", "export", "--table", target, "--db", new)
    moved, exported = json.loads(out), json.loads((tmp_path / "c.json").read_text())
    assert moved["tokens"] == exported["tokens"] and moved["table"]["name"] == "New game"
    assert run(capsys, "table", "check", target, "--db", new)[0] == 0
    # The same file again: nothing to change.
    code, out, _ = run(capsys, "tokens", "import", str(tmp_path / "c.json"), "--table", target, "--db", new)
    assert code == 0 and "nothing to change" not in out and f"{len(tokens)} unchanged" in out


def test_an_import_with_one_bad_token_changes_nothing_and_names_it(tmp_path, capsys):
    import json

    db = str(tmp_path / "t.sqlite")
    table = re.search(r"table:\s+(t-\w+)", run(capsys, "table", "create", "x", "--db", db)[1]).group(1)
    tokens = _warmachine_tokens()
    bad = json.loads(json.dumps(tokens[1]))
    bad["system"]["DEF"] = "high"
    (tmp_path / "bad.json").write_text(json.dumps({"tokens": [tokens[0], bad]}))
    code, out, err = run(capsys, "tokens", "import", str(tmp_path / "bad.json"), "--table", table, "--db", db)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"nothing imported: 1 of 2 tokens is invalid — token '{bad['id']}' (#2): system.DEF" in err
    code, out, _ = run(capsys, "tokens", "export", "--table", table, "--db", db)
    assert json.loads(out)["tokens"] == []
