"""Exalted 2e mass combat: the exact model against the real pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtt_bridge.odds import compute_odds

from .helpers import assert_agree, real_host, tokens_of

ruleset = pytest.importorskip("vtt_exalted2e_mass.ruleset")
EXAMPLES = Path(ruleset.__file__).parent / "examples"


@pytest.fixture(scope="module")
def host():
    return real_host()


def load(name):
    return json.loads((EXAMPLES / name).read_text())


@pytest.mark.parametrize(
    "example", ["cinder_vs_spears.json", "spears_vs_talon.json", "talon_routs_spears.json", "talon_vs_cinder.json"]
)
def test_exact_agrees_on_the_shipped_examples(host, example):
    data = load(example)
    tokens = tokens_of(host, "exalted2e_mass", data["tokens"])
    result = assert_agree(host, data, tokens, answers=data.get("answers"))
    assert result.unit == "health levels"


def test_a_solo_defender_answering_with_a_stunt_agrees(host):
    data = load("talon_vs_cinder.json")
    tokens = tokens_of(host, "exalted2e_mass", data["tokens"])
    assert_agree(host, data, tokens, answers={"defense": "dodge", "defense_stunt": "2"})


def test_a_negative_dv_filled_by_a_stunt_agrees(host):
    data = load("talon_vs_cinder.json")
    tokens = tokens_of(host, "exalted2e_mass", data["tokens"])
    low = {**data, "declaration": {**data.get("declaration", {}), "height": -3}}
    assert_agree(host, low, tokens, answers={"defense": "nothing", "defense_stunt": "3"})
    assert_agree(host, low, tokens, answers={"defense": "war", "defense_stunt": "3"})


def test_rout_or_destruction_is_reported(host):
    data = load("talon_routs_spears.json")
    tokens = tokens_of(host, "exalted2e_mass", data["tokens"])
    result = compute_odds(host, data, tokens, method="exact")
    reached = {(t, c) for t, c, _ in result.conditions}
    assert reached and all(t == "spears" for t, _ in reached)
