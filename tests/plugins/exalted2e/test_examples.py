"""The request files in plugins/vtt_exalted2e/examples resolve, and show what they are named for."""

import json
from pathlib import Path

import pytest

import vtt_exalted2e
from vtt_bridge import make_host
from vtt_bridge.cli.card import render
from vtt_bridge.cli.resolve import resolve_request

EXAMPLES = Path(vtt_exalted2e.__file__).parent / "examples"


@pytest.fixture(scope="module")
def host():
    return make_host()


def load(name):
    return json.loads((EXAMPLES / name).read_text())


def test_there_are_examples():
    assert {p.name for p in EXAMPLES.glob("*.json")} >= {
        "sword_vs_soldier.json",
        "excellencies_anoria_vs_monk.json",
        "solar_counterattack.json",
        "brigand_automatic_defense.json",
        "bow_at_range.json",
        "skin_of_bronze_hardness.json",
        "sledge_leaves_no_hand_to_parry.json",
        "stunted_parry_after_the_roll.json",
        "unaware_sentry.json",
        "coordinated_wolves.json",
        "closed_ranks_cannot_dodge.json",
        "venom_after_soak.json",
        "botch_strikes_a_bystander.json",
        "flurry_second_strike.json",
    }


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_example_resolves_the_same_way_twice_and_renders(host, path):
    data = json.loads(path.read_text())
    assert data["ruleset"] == "exalted2e" and "seed" in data
    first = resolve_request(host, data)
    assert first == resolve_request(host, data)
    card = render(first)
    assert card.startswith(f"exalted2e attack: {data['attacker']} → {data['targets'][0]}")
    assert "1. Declaration of attack" in card


@pytest.mark.parametrize(
    "name, check",
    [
        ("sword_vs_soldier.json", lambda r: r["outcome"]["hit"] and r["outcome"]["damage_type"] == "L"),
        ("excellencies_anoria_vs_monk.json", lambda r: r["outcome"]["motes"] == {"anoria": 3, "monk": 2}),
        ("solar_counterattack.json", lambda r: r["steps"][8]["children"][0]["kind"] == "counterattack"),
        ("brigand_automatic_defense.json", lambda r: r["ended"] == "automatic defense" and r["dice_used"] == 0),
        ("bow_at_range.json", lambda r: r["steps"][0]["changes"][1] == {"number": "external_penalty", "from": 0, "to": 1, "plugin": "exalted2e"}),
        ("skin_of_bronze_hardness.json", lambda r: r["ended"] == "hardness" and r["outcome"]["raw_damage"] == 6),
        # the sledge takes both hands: Parry DV (2 + Melee 3 - 3) / 2 = 1, not the fist's 3
        ("sledge_leaves_no_hand_to_parry.json", lambda r: r["steps"][1]["changes"][1] == {"number": "parry_dv", "from": 0, "to": 1, "plugin": "exalted2e"}),
        # asked after the attack roll: 6 successes past Parry DV 5, the stunt's dice add 1
        ("stunted_parry_after_the_roll.json", lambda r: r["decisions"][-1]["key"] == "defense_stunt" and r["outcome"]["dv"] == 6),
        ("unaware_sentry.json", lambda r: r["decisions"][0]["key"] != "defense" and r["outcome"]["defense"] == "nothing"),
        ("coordinated_wolves.json", lambda r: r["changes"]["soldier"]["after"]["onslaught"] == {"group:wolves": 3}),
        ("closed_ranks_cannot_dodge.json", lambda r: r["outcome"]["defense"] == "dodge" and r["outcome"]["dv"] == 0),
        ("botch_strikes_a_bystander.json", lambda r: r["ended"] == "botch" and r["outcome"]["bystander"]["token"] == "monk"),
        # the second of three attacks: 10 dice − 4, against Parry DV 3 − onslaught 1
        ("flurry_second_strike.json", lambda r: r["steps"][0]["changes"][0]["to"] == 6 and r["outcome"]["dv"] == 2
         and r["changes"]["soldier"]["after"]["onslaught"] == {"anoria": 2}),
        ("venom_after_soak.json", lambda r: any(c["number"] == "post_soak" and c["to"] == 2 for c in r["steps"][7]["changes"])),
    ],
)
def test_each_example_shows_its_point(host, name, check):
    assert check(resolve_request(host, load(name)))


def test_scripted_dice_and_answers_override_the_file(host):
    record = resolve_request(host, load("sword_vs_soldier.json"), dice=[10, 10, 10] + [1] * 8 + [7] * 9, answers={"defense": "dodge"})
    assert record["dice"] == "scripted" and record["outcome"]["defense"] == "dodge"
    assert record["outcome"]["damage"] == 9
