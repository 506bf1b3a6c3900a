"""Record parts made once and shared: what they hold decides, written out exactly.

A step that rolled and nested nothing is looked up by its content
(``TraceEntry.to_dict``); values that compare equal but read differently in JSON
(1, True, 1.0) must never find each other's wire form.
"""

import json

import pytest

from vtt_bridge.engine.context import TraceEntry
from vtt_bridge.engine.dice import Roll
from vtt_bridge.engine.foundry import roll_to_foundry


def entry(step="declare", changes=(), notes=(), decisions=(), item=None, ended=None):
    e = TraceEntry(step, f"1. {step.title()}", item)
    if changes:
        e.changes = list(changes)
    if notes:
        e.notes = list(notes)
    if decisions:
        e.decisions = list(decisions)
    e.ended = ended
    return e


@pytest.mark.parametrize("first, second", [(1, True), (True, 1), (1, 1.0), (0, False), (0.0, -0.0), (0, 0.0)])
def test_equal_values_written_differently_keep_their_own_step(first, second):
    a = entry(changes=[("pool", 0, first, "p")]).to_dict()
    b = entry(changes=[("pool", 0, second, "p")]).to_dict()
    assert json.dumps(a["changes"][0]["to"]) == json.dumps(first)
    assert json.dumps(b["changes"][0]["to"]) == json.dumps(second)
    assert entry(notes=[(first, "p")]).to_dict()["notes"][0]["text"] is first
    assert entry(notes=[(second, "p")]).to_dict()["notes"][0]["text"] is second
    assert entry(item=first).to_dict()["item"] is first
    assert entry(item=second).to_dict()["item"] is second


def test_the_same_step_again_is_the_same_wire_form_and_another_is_not():
    made = dict(changes=[("pool", 0, 7, "p"), ("dv", 0, 3, "p")], notes=[("hit", "p")], decisions=["defense"])
    first = entry(**made).to_dict()
    assert entry(**made).to_dict() is first
    assert first == {
        "step": "declare",
        "title": "1. Declare",
        "rolls": [],
        "changes": [
            {"number": "pool", "from": 0, "to": 7, "plugin": "p"},
            {"number": "dv", "from": 0, "to": 3, "plugin": "p"},
        ],
        "notes": [{"text": "hit", "plugin": "p"}],
        "decisions": ["defense"],
    }
    # A note moved into the changes' place, a decision more, another item: other steps.
    assert entry(**{**made, "decisions": ["defense", "stunt"]}).to_dict()["decisions"] == ["defense", "stunt"]
    assert entry(**{**made, "item": "b"}).to_dict()["item"] == "b"
    assert entry(**{**made, "ended": "miss"}).to_dict()["ended"] == "miss"
    assert entry(**{**made, "notes": ()}).to_dict()["notes"] == []


def test_a_step_holding_a_mapping_is_made_each_time():
    frozen = entry(changes=[("state", None, {"a": [1]}, "p")])
    first, second = frozen.to_dict(), frozen.to_dict()
    assert first == second and first is not second
    assert first["changes"][0]["to"] == {"a": [1]}


def test_a_success_pool_of_another_label_or_size_gets_its_own_shape():
    attack = roll_to_foundry(Roll("attack", 10, [7, 10, 2], target=7, double=10))
    damage = roll_to_foundry(Roll("damage", 10, [7, 10, 2], target=7))
    more = roll_to_foundry(Roll("attack", 10, [7, 10, 2, 9], target=7, double=10))
    again = roll_to_foundry(Roll("attack", 10, [1, 1, 1], target=7, double=10))
    assert (attack["formula"], attack["total"], attack["options"]) == ("3d10cs>=7dbl10", 3, {"flavor": "attack"})
    assert (damage["formula"], damage["total"], damage["options"]) == ("3d10cs>=7", 2, {"flavor": "damage"})
    assert (more["formula"], more["total"], more["terms"][0]["number"]) == ("4d10cs>=7dbl10", 4, 4)
    assert again["total"] == 0 and [r["result"] for r in again["terms"][0]["results"]] == [1, 1, 1]
    assert [r["result"] for r in attack["terms"][0]["results"]] == [7, 10, 2]
    assert list(attack) == ["class", "options", "formula", "terms", "total", "evaluated"]
    assert list(attack["terms"][0]) == ["class", "options", "number", "faces", "modifiers", "results"]
