"""highest_die token and declaration schemas, sample tokens and example requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vtt_highest_die
from vtt_bridge import InvalidRequest
from vtt_bridge.cli.resolve import resolve_request

from .helpers import BLADE, host

EXAMPLES = sorted((Path(vtt_highest_die.__file__).parent / "examples").glob("*.json"))


def test_a_minimal_combatant_gets_its_defaults():
    system = host().load_system("highest_die", {"body": [8, 6], "weapons": [BLADE]})
    assert system["weapons"][0] == {**BLADE, "damage": 0, "kind": "normal", "range": "melee", "name": "Blade"}
    assert (system["will"], system["armor"], system["dodge"], system["gifts"]) == ([], [], [], [])
    assert (system["conditions"], system["side"], system["position"]) == ([], "", None)


@pytest.mark.parametrize(
    "bad",
    [
        {"body": [7]},  # no d7
        {"body": [6], "conditions": ["sleepy"]},
        {"body": [6], "weapons": [{"id": "x", "dice": [6], "kind": "vorpal"}]},
        {"body": [6], "weapons": [{"id": "x", "dice": []}]},
        {"body": [6], "position": {"x": 1}},
        {"will": [6]},  # Body dice are required
    ],
)
def test_bad_combatants_are_refused(bad):
    with pytest.raises(InvalidRequest) as err:
        host().load_system("highest_die", bad)
    assert err.value.details["token"]


def test_declaration_defaults():
    assert host().load_declaration("highest_die", {}) == {
        "weapon": None, "near_target": [], "near_attacker": [], "charms": [],
    }
    with pytest.raises(InvalidRequest):
        host().load_declaration("highest_die", {"weapon": ""})


def test_sample_tokens_are_valid():
    tokens = vtt_highest_die.RULESET.sample_tokens()
    assert len({t["system"]["side"] for t in tokens}) == 2
    for token in tokens:
        host().load_system("highest_die", token["system"])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_requests_resolve(path):
    data = json.loads(path.read_text())
    record = resolve_request(host(), data)
    assert record["ruleset"] == "highest_die"
    assert record["outcome"]["hit"] or record["outcome"]["counter_hit"]
    if "dice" in data:
        assert record["dice_used"] == len(data["dice"])
    assert record == resolve_request(host(), data)


def test_there_are_examples():
    assert len(EXAMPLES) >= 3
