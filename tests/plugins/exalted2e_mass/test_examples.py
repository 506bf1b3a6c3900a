"""The request files in examples/ and the sample tokens: they resolve and print a card."""

import importlib.metadata
import json
from pathlib import Path

import pytest

from vtt_bridge import testing as vt
from vtt_bridge.cli import main
from vtt_bridge.plugins import BLOCK_ENV
from vtt_exalted2e_mass import sample_tokens

from .mass import HOST, RULESET

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "plugins" / "vtt_exalted2e_mass" / "examples").glob("*.json"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 3


# The other installed plugins stay out, so their state cannot disturb (or slow) these tests.
OTHERS = sorted(
    ep.name
    for ep in importlib.metadata.distribution("vtt-bridge").entry_points
    if ep.group == "vtt_bridge" and ep.name != RULESET
)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_resolves_to_a_readable_card(path, capsys, monkeypatch):
    monkeypatch.setenv(BLOCK_ENV, ",".join(OTHERS))
    assert main(["resolve", str(path)]) == 0
    card = capsys.readouterr().out
    assert card.startswith("exalted2e_mass attack:")
    assert "1. Declaration of attack" in card and "3. Attack roll" in card
    assert "outcome: hit=" in card


def test_the_examples_show_the_rules_they_are_named_for():
    def outcome(name):
        data = json.loads((EXAMPLES[0].parent / f"{name}.json").read_text())
        res = vt.resolve(
            RULESET, data["tokens"], attacker=data["attacker"], targets=data["targets"],
            declaration=data["declaration"], seed=data["seed"], answers=data.get("answers"), host=HOST,
        )
        return res.outcome

    assert outcome("spears_vs_talon")["ping"] is True
    assert outcome("talon_vs_cinder")["defense"] == "dodge"
    assert outcome("talon_routs_spears")["conditions"] == {"spears": ["destroyed"]}
    assert outcome("cinder_vs_spears")["magnitude_bonus"] == -5
    # doing nothing, the spears keep close formation (+2) and 75% cover against arrows (+3)
    assert outcome("spears_do_nothing_behind_walls")["hit"] is False
    # the stunt, asked after the talon's roll, turns its hit into a miss
    assert outcome("spears_stunt_after_the_roll")["hit"] is False


def test_sample_tokens_load():
    tokens = vt.tokens(RULESET, sample_tokens(), host=HOST)
    assert set(tokens) == {"spears", "talon", "cinder"}
    # the seed-derived War DV sits on the talon: (3 + 4 + 2) ÷ 2 = 4.5 → 5
    res = vt.resolve(RULESET, tokens, attacker="spears", targets=["talon"], seed=1, host=HOST)
    assert res.outcome["war_dv"] == 5
