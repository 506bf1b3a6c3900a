"""The example pack: its own tests pass, and it uses nothing but the public API."""

from __future__ import annotations

import ast
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vtt_bridge
import vtt_bridge.testing
from vtt_bridge.cli import main

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


# -- the tutorial shows what really happens ---------------------------------------

DOC = PACK.parents[2] / "docs" / "plugins.md"


def _plain_blocks(start: str) -> list[str]:
    """The tutorial's fenced blocks without a language whose first line starts with ``start``."""
    blocks, current = [], None
    for line in DOC.read_text().splitlines():
        if current is None:
            if line == "```":
                current = []
            elif line.startswith("```"):
                current = False  # a block with a language: skip it
        elif line.startswith("```"):
            if current and current[0].startswith(start):
                blocks.append("\n".join(current))
            current = None
        elif current is not False:
            current.append(line)
    assert blocks, f"no block starting {start!r} in {DOC.name}"
    return blocks


def _shown_in(excerpt: str, actual: str) -> None:
    """Every line of the excerpt appears, in order, in the output; '…' stands for anything."""
    lines = [" ".join(line.split()) for line in actual.splitlines()]
    at = 0
    for wanted in excerpt.splitlines():
        pieces = [" ".join(p.split()) for p in wanted.split("…")]
        pieces = [p for p in pieces if p]
        if not pieces:
            continue
        while at < len(lines) and not _pieces_in(pieces, lines[at]):
            at += 1
        assert at < len(lines), f"the tutorial shows {wanted!r}, the output has no such line:\n{actual}"
        at += 1


def _pieces_in(pieces: list[str], line: str) -> bool:
    start = 0
    for piece in pieces:
        found = line.find(piece, start)
        if found < 0:
            return False
        start = found + len(piece)
    return True


@pytest.fixture
def pack_on_path(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # whatever the commands add is undone
    monkeypatch.delenv("VTT_BRIDGE_BLOCK_PLUGINS", raising=False)
    monkeypatch.delenv("VTT_BRIDGE_TRACE_HOOKS", raising=False)


def test_the_tutorials_card_is_what_plugin_by_path_prints(pack_on_path, monkeypatch, capsys):
    monkeypatch.chdir(PACK)  # step 5: from the pack's directory, not installed
    assert main(["--plugin", "vtt_pack_example", "resolve", "examples/fang.json"]) == 0
    _shown_in(_plain_blocks("exalted2e attack:")[0], capsys.readouterr().out)


def test_the_tutorials_listing_card_and_trace_are_what_the_installed_pack_gives(
    pack_on_path, install, monkeypatch, capsys, caplog
):
    monkeypatch.syspath_prepend(str(PACK))
    install("vtt-pack-example", "0.1.0", serpent_sting_fang="vtt_pack_example")
    assert main(["plugins"]) == 0
    _shown_in(_plain_blocks("Plugins (")[0], capsys.readouterr().out)
    assert main(["resolve", str(PACK / "examples" / "fang.json")]) == 0
    assert "raw_damage: 11 → 12 (serpent_sting_fang)" in capsys.readouterr().out
    monkeypatch.setenv("VTT_BRIDGE_TRACE_HOOKS", "1")
    with caplog.at_level(logging.INFO, logger="vtt_bridge.hooks"):
        assert main(["resolve", str(PACK / "examples" / "fang.json")]) == 0
    trace = "\n".join(r.getMessage() for r in caplog.records if r.name == "vtt_bridge.hooks")
    _shown_in(_plain_blocks("call exalted2e_raw_damage")[0], trace)
