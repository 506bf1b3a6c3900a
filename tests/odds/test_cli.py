"""``vtt-bridge odds REQUEST.json`` (the host is the duel's, patched in)."""

from __future__ import annotations

import json

import pytest

from vtt_bridge import make_host
from vtt_bridge.cli import main

from . import duel_odds


@pytest.fixture
def request_file(tmp_path, monkeypatch):
    def fake_make_host(plugins=()):
        return make_host(plugins=[duel_odds.ScoredDuelRules(), duel_odds.DuelExact()], entry_points=False, environ={})

    monkeypatch.setattr("vtt_bridge.cli.odds.make_host", fake_make_host)
    data = {
        "ruleset": "duel",
        "tokens": [t.to_dict() for t in duel_odds.tokens().values()],
        "attacker": "a",
        "targets": ["b"],
        "declaration": {"bonus": 2},
        "seed": 99,
    }
    path = tmp_path / "duel.json"
    path.write_text(json.dumps(data))
    return path


def test_table_and_bar_chart(request_file, capsys):
    assert main(["odds", str(request_file), "--answer", "defense=none"]) == 0
    out = capsys.readouterr().out
    assert "method: exact" in out and "answers: defense=none" in out
    assert "hit:              93.75%" in out  # 1 − (1/2)⁴
    assert "b: down" in out and "█" in out


def test_json_is_the_payload(request_file, capsys):
    assert main(["odds", str(request_file), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["method"] == "exact" and payload["hit"]["exact"] == "11/16"


def test_monte_carlo_on_request(request_file, capsys):
    assert main(["odds", str(request_file), "--method", "monte-carlo", "--samples", "300", "--seed", "4", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["method"] == "monte_carlo" and payload["samples"] == 300 and payload["seed"] == 4


def test_bad_answer_flag_is_an_error(request_file, capsys):
    assert main(["odds", str(request_file), "--answer", "defense"]) == 2
    assert "KEY=OPTION" in capsys.readouterr().err


def test_the_tail_that_rounds_to_nothing_is_one_line(capsys):
    """A real Exalted attack: damage up to 25 levels is possible, but past 11 all of it rounds to 0.00%."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json"
    assert main(["odds", str(example)]) == 0
    out = capsys.readouterr().out
    assert any(line.split() == ["≥", "12", "<", "0.01%"] for line in out.splitlines())
    assert " 0.00%  " not in out.split("condition")[0]


def test_an_aoe_prints_the_target_any_model_and_each_model(capsys):
    """A Warmachine AOE (seed 001, step 7: "All models within the AOE at its final position
    are now hit by it"): the chance to hit the target and to hit any model, then each
    model's chance and damage — in the same unit whichever method answers."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "plugins/vtt_warmachine_mk3/examples/aoe_deviation_blast.json"
    assert main(["odds", str(example), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "method: exact" in out
    assert "hit any model:    84.57%" in out  # 137/162
    assert "hit the target:   81.48%" in out  # 22/27
    assert "expected damage: 0.776 damage points to trencher1" in out
    rows = {line.split()[0]: line.split()[1:4] for line in out.splitlines() if line.strip().startswith("trencher") and "%" in line and ":" not in line}
    assert rows["trencher2"][:2] == ["3.86%", "0.023"]
    assert main(["odds", str(example), "--method", "monte-carlo", "--samples", "300", "--workers", "1"]) == 0
    mc = capsys.readouterr().out
    assert "expected damage:" in mc and "damage points to trencher1" in mc and "hit the target:" in mc
