"""Packs per table and what-if replay on the command line (issue 28).

A logged attack is written to a real SQLite store the way the server logs one
(token creations, then the attack's audit entry holding its record and request),
with a fixed seed, so every number below is exact.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from vtt_bridge import make_host
from vtt_bridge.cli import main
from vtt_bridge.cli.resolve import load_tokens
from vtt_bridge.state import AuditDraft, SQLiteStore, TableInfo, TokenChange

ROOT = Path(__file__).resolve().parents[2]
MONK = json.loads((ROOT / "plugins/vtt_exalted2e/examples/excellencies_anoria_vs_monk.json").read_text())
DECLARATION = {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 3}]}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def _log_attack(db: Path, *, seed: int, answers: dict) -> str:
    host = make_host()
    store = SQLiteStore(db)
    await store.open()
    try:
        await store.create_table(TableInfo(id="t-night", name="night", created=time.time(), settings={"packs": ["excellencies"]}))
        tokens = load_tokens(host, MONK)
        for token in tokens.values():
            await store.commit("t-night", AuditDraft(kind="token.create", user="gm", at=time.time(), changes={token.id: TokenChange(before=None, after=token)}))
        record = host.for_packs(["excellencies"]).start(
            "exalted2e", tokens, attacker="anoria", targets=["monk"], declaration=DECLARATION, seed=seed, answers=answers
        ).run().to_dict()
        changes = {
            tid: TokenChange(before=tokens[tid], after=host.changed_token(tokens[tid], change["after"]))
            for tid, change in record["changes"].items()
        }
        request = {"ruleset": "exalted2e", "attacker": "anoria", "targets": ["monk"], "declaration": DECLARATION, "seed": seed}
        await store.commit(
            "t-night",
            AuditDraft(kind="attack", user="alice", at=time.time(), ref="atk-1", changes=changes, data={"attack": record, "request": request}),
        )
        return record
    finally:
        await store.close()


@pytest.fixture
def logged(tmp_path):
    db = tmp_path / "night.sqlite"
    record = asyncio.run(_log_attack(db, seed=2, answers={"defense": "parry"}))
    return str(db), record


def test_table_packs_lists_and_changes_the_tables_packs(capsys, logged):
    db, _ = logged
    code, out, err = run(capsys, "table", "packs", "t-night", "--db", db)
    assert code == 0, err
    assert "  on  excellencies" in out and "  off mass_charms" in out and "exalted2e 0.1.0 (ruleset: always on)" in out
    code, out, _ = run(capsys, "table", "packs", "t-night", "--db", db, "--disable", "excellencies", "--enable", "mass_charms")
    assert code == 0 and "  off excellencies" in out and "  on  mass_charms" in out
    code, out, _ = run(capsys, "table", "packs", "t-night", "--db", db, "--json")
    assert json.loads(out)["packs"] == ["mass_charms"]
    code, _, err = run(capsys, "table", "packs", "t-night", "--db", db, "--enable", "excelencies")
    assert code == 2 and "no installed pack 'excelencies'; did you mean 'excellencies'?" in err


def test_table_create_takes_its_packs(capsys, tmp_path):
    db = str(tmp_path / "new.sqlite")
    code, out, err = run(capsys, "table", "create", "game", "--db", db, "--packs", "none")
    assert code == 0, err and "packs:   none" in out
    code, out, _ = run(capsys, "table", "list", "--db", db, "--json")
    assert json.loads(out)[0]["settings"]["packs"] == []


def test_replaying_with_nothing_changed_gives_the_logged_card(capsys, logged):
    db, record = logged
    code, out, err = run(capsys, "replay", "--table", "t-night", "--attack", "atk-1", "--db", db, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["same"] and result["whatif"]["steps"] == record["steps"]
    assert result["whatif"]["packs"] == record["packs"]


def test_what_if_without_the_pack(capsys, logged):
    db, record = logged
    assert record["outcome"]["damage"] == 2 and record["outcome"]["motes"] == {"anoria": 3}
    code, out, err = run(capsys, "replay", "--table", "t-night", "--attack", "atk-1", "--db", db, "--without", "excellencies", "--width", "200")
    assert code == 0, err
    assert "without excellencies — nothing is applied" in out
    assert "packs: exalted2e, excellencies  →  exalted2e" in out
    assert "left out of the declaration (their pack is disabled): first-excellency" in out
    lines = out.splitlines()
    # Same seed: the same faces come up, three fewer dice without the First Excellency (seed 2).
    roll = next(line for line in lines if "🎲 attack" in line)
    assert roll.startswith("≠ ") and "13d10cs>=7dbl10 → [4 4 8* 3 7* 4 7* 1 7* 10** 5 4 4] = 6" in roll
    assert roll.endswith("10d10cs>=7dbl10 → [4 4 8* 3 7* 4 7* 1 7* 10**] = 6")
    assert any(line.startswith("    2. Defender declares response") for line in lines)  # unchanged: unmarked
    assert "≠ outcome damage: 2 → 1" in lines
    # Nothing was applied: the log still holds one attack and the tokens as it left them.
    code, out, _ = run(capsys, "table", "check", "t-night", "--db", db)
    assert code == 0 and "ok: 3 audit entries" in out


def test_what_if_a_question_answered_otherwise(capsys, logged):
    db, _ = logged
    code, out, err = run(capsys, "replay", "--table", "t-night", "--attack", "3", "--db", db, "--answer", "defense=nothing", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["changed"]["answers"] == {"defense": "nothing"}
    assert result["outcome"]["dv"] == {"original": 5, "whatif": 0}
    assert not result["same"] and result["request"]["answers"]["defense"] == ["nothing"]


def test_a_what_if_names_what_it_cannot_find(capsys, logged):
    db, _ = logged
    code, _, err = run(capsys, "replay", "--table", "t-night", "--attack", "atk-9", "--db", db)
    assert code == 2 and "no attack 'atk-9'" in err
    code, _, err = run(capsys, "replay", "--table", "t-night", "--attack", "atk-1", "--db", db, "--with", "excelencies")
    assert code == 2 and "no installed pack 'excelencies'" in err
