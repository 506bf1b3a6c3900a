"""README's "Using it" block works when copied line by line, in order."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from vtt_bridge.cli import main

ROOT = Path(__file__).resolve().parents[2]


def using_it() -> list[str]:
    """The command lines of README's "Using it" block (continuations joined, comments dropped)."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Using it\n.*?```sh\n(.*?)```", text, re.S).group(1)
    lines = []
    for raw in block.replace("\\\n", " ").splitlines():
        line = raw.split("  #")[0].strip()
        if line:
            lines.append(line)
    return lines


@pytest.mark.slow
async def test_the_using_it_lines_work_in_order(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plugins").symlink_to(ROOT / "plugins")  # the example requests, as in a checkout
    table = None
    lines = using_it()
    assert lines[0].startswith("export VTT_BRIDGE_DB=")
    for line in lines:
        argv = shlex.split(line)
        if argv[0] == "export":
            name, _, value = argv[1].partition("=")
            monkeypatch.setenv(name, value)
            continue
        assert argv[0] == "vtt-bridge", line
        argv = [table if a == "TABLE" else a for a in argv[1:]]
        if argv[0] == "docs":
            continue  # it rewrites docs/plugins.md of a checkout: tests/test_docs.py checks that
        if argv[0] == "serve":
            await _serve_sees(argv, table, tmp_path)
            continue
        code = await asyncio.to_thread(main, argv)
        out, err = capsys.readouterr()
        assert code == 0, f"{line}\n{err}"
        if argv[:2] == ["table", "create"]:
            table = re.search(r"table:\s+(t-\w+)", out).group(1)
    assert (tmp_path / os.environ["VTT_BRIDGE_DB"]).exists()
    assert not (tmp_path / "vtt_bridge.sqlite").exists()


async def _serve_sees(argv: list[str], table: str, cwd: Path) -> None:
    """`serve` finds the table the earlier lines made: the same store."""
    argv = ["0" if prev == "--port" else a for prev, a in zip([None, *argv], argv)]
    code = "import sys; from vtt_bridge.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, *argv, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    seen = []
    try:
        async with asyncio.timeout(60):
            while not any("stop with Ctrl-C" in s for s in seen):
                line = (await proc.stdout.readline()).decode()
                assert line, "serve exited:\n" + "".join(seen)
                seen.append(line)
    finally:
        proc.terminate()
        await proc.wait()
    text = "".join(seen)
    assert f"{table}  'Thursday game'  keys: alice, gm" in text, text
