"""The request files in examples/ resolve to the outcomes their names promise, and read as a card."""

import json
import pathlib

import pytest

from vtt_bridge.cli.card import render
from vtt_bridge.cli.resolve import resolve_request

import vtt_warmachine_mk3

from .kit import host

EXAMPLES = pathlib.Path(vtt_warmachine_mk3.__file__).parent / "examples"


def resolve(name):
    return resolve_request(host(pack=True), json.loads((EXAMPLES / f"{name}.json").read_text()))


def test_every_example_is_tested():
    assert sorted(p.stem for p in EXAMPLES.glob("*.json")) == sorted(EXPECTED)


EXPECTED = {
    "melee_jack_punch": lambda r: (
        r["outcome"]["damage"] == 11
        and r["outcome"]["critical"] is True
        and r["outcome"]["conditions"] == {"juggernaut": ["crippled:cortex", "crippled:movement"]}
        and r["changes"]["juggernaut"]["after"]["marked"] == [0, 0, 6, 6, 2, 0]
        and r["changes"]["ironclad"]["after"]["focus"] == 0
    ),
    "aoe_deviation_blast": lambda r: (
        r["outcome"]["deviation"]["to"] == {"x": 7.402, "y": 19.5}
        and r["outcome"]["models"]["trencher1"]["hit"] is False
        and [r["outcome"]["models"][t]["pow"] for t in ("trencher2", "trencher3")] == [7, 7]
        and r["outcome"]["conditions"] == {"trencher2": ["knocked_down"]}  # Tough saved it
    ),
    "spray_two_models": lambda r: (
        [m["hit"] for m in r["outcome"]["models"].values()] == [True, False]
        and r["outcome"]["conditions"] == {"bane1": ["disabled", "boxed", "destroyed"]}
        and r["outcome"]["critical_effects"] == {"bane1": "Critical Fire"}
    ),
    "warbeast_spiral": lambda r: (
        r["changes"]["warpwolf"]["after"]["marked"] == [0, 0, 5, 5, 3, 2]
        and r["outcome"]["conditions"] == {"warpwolf": ["crippled:body"]}
    ),
    "shield_guard": lambda r: (
        r["outcome"]["damage"] == 0
        and r["changes"]["redeemer"]["after"]["shield_guard_used"] is True
        and r["changes"]["redeemer"]["after"]["marked"] == [0, 2, 0, 0, 0, 0]
    ),
    # the AOE's critical knockdown reaches the blasted trencher too; the attacker picks trencher2 first
    "aoe_critical_knockdown": lambda r: (
        r["outcome"]["critical"] is True
        and all("knocked_down" in r["outcome"]["conditions"][t] for t in ("trencher1", "trencher2"))
        and [s.get("item") for s in r["steps"] if s["step"] == "apply_damage"] == ["trencher2", "trencher1"]
    ),
    "reroll_own_ability": lambda r: (
        [d["key"] for d in r["decisions"] if d["answer"]["option"] == "reroll:self"]
        == ["reroll_attack[juggernaut]", "reroll_damage[juggernaut]"]
        and r["outcome"]["models"]["juggernaut"]["damage"] == 7
    ),
    "reroll_granted": lambda r: (
        r["decisions"][0]["key"] == "reroll_attack[caster]" and r["outcome"]["hit"] is True
    ),
    "damage_transference": lambda r: (
        r["changes"]["kaya"]["after"]["fury"] == 3
        and r["changes"]["warpwolf"]["after"]["marked"] == [5, 0, 0, 0, 5, 5]
        and r["outcome"]["conditions"] == {"warpwolf": ["crippled:spirit"]}
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example(name):
    record = resolve(name)
    assert EXPECTED[name](record), json.dumps(record["outcome"], indent=1)
    card = render(record)
    assert card.splitlines()[0].startswith("warmachine_mk3 attack: ")
    assert "  14. Active player's attacks" in card
    json.dumps(record)  # the wire form is plain JSON
