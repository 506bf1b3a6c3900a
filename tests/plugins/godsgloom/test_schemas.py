"""GODSGLOOM token and declaration schemas, sample tokens and example requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vtt_godsgloom
from vtt_bridge import InvalidRequest, make_host
from vtt_bridge.cli.resolve import resolve_request

from .helpers import host, unit

EXAMPLES = sorted((Path(vtt_godsgloom.__file__).parent / "examples").glob("*.json"))


def test_a_minimal_unit_gets_its_defaults():
    system = host().load_system("godsgloom", unit())
    assert system["boost"] == 0 and system["weak"] == 0
    assert system["rerolls"] == {"pool": 0, "single": 0}
    assert system["auto"] == {"hits": 0, "blocks": 0}
    assert system["traits"] == []


@pytest.mark.parametrize(
    "bad",
    [
        {"statline": {"attack": -1, "defence": 2}},
        {"health": {"current": -1, "max": 3}},
        {"rerolls": {"pool": 1, "many": 2}},
        {"guard": {"attack": 1, "defense": 1}},  # 🟦 is spelled "defence", as in the rulebook
        {"boost": -1},
        {"armour": 2},
    ],
)
def test_bad_units_are_refused_with_field_messages(bad):
    with pytest.raises(InvalidRequest) as err:
        host().load_system("godsgloom", unit(**bad))
    assert err.value.details["token"]


def test_declaration_defaults_and_refusals():
    loaded = host().load_declaration("godsgloom", {})
    assert loaded == {
        "attack": "melee",
        "modifiers": {"attack": 0, "defence": 0},
        "defender_modifiers": {"attack": 0, "defence": 0},
        "auto": {"hits": 0, "blocks": 0},
        "charms": [],
    }
    with pytest.raises(InvalidRequest):
        host().load_declaration("godsgloom", {"attack": "thrown"})


def test_sample_tokens_are_valid_units():
    tokens = vtt_godsgloom.RULESET.sample_tokens()
    assert len(tokens) >= 2
    for token in tokens:
        assert token["ruleset"] == "godsgloom"
        host().load_system("godsgloom", token["system"])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_requests_resolve(path):
    data = json.loads(path.read_text())
    h = make_host(plugins=["vtt_godsgloom", "vtt_godsgloom_momentum"], entry_points=False, environ={})
    record = resolve_request(h, data)
    assert record["ruleset"] == "godsgloom" and not record["ended"]
    if "dice" in data:
        assert record["dice_used"] == len(data["dice"])  # the script is exactly what the example needs
    assert record == resolve_request(h, data)


def test_there_are_examples():
    assert len(EXAMPLES) >= 3
