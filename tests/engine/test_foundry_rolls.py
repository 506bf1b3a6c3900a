"""Recorded rolls as Foundry roll JSON mean, to Foundry, what the rules did.

``foundry_total`` below reads a roll's terms the way Foundry does (a dice term's
total is the sum of its active results, each result's ``count`` where set, else its
face; a pool term's total the sum of its active results; operators between terms),
so every check "Foundry would show the total the engine recorded" is made without
trusting the ``total`` field.
"""

import json
import re
from pathlib import Path

import pytest

from vtt_bridge import make_host, roll_to_foundry
from vtt_bridge.cli.resolve import resolve_request
from vtt_bridge.engine.dice import Dice

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(ROOT.glob("plugins/*/examples/*.json"))
DIE_FORMULA = re.compile(r"^(\d+)d(\d+)((?:cs>=\d+|dbl\d+|kh|dl\d+)*)$")


def term_total(term):
    if term["class"] == "NumericTerm":
        return term["number"]
    total = 0
    for r in term["results"]:
        if r["active"]:
            total += r["count"] if "count" in r else r["result"]
    return total


def foundry_total(roll):
    total, sign = 0, 1
    for term in roll["terms"]:
        if term["class"] == "OperatorTerm":
            sign = 1 if term["operator"] == "+" else -1
        else:
            total += sign * term_total(term)
    return total


def term_formula(t):
    if t["class"] == "OperatorTerm":
        return f" {t['operator']} "
    if t["class"] == "NumericTerm":
        return str(t["number"])
    if t["class"] == "PoolTerm":
        return "{" + ",".join(t["terms"]) + "}" + "".join(t["modifiers"])
    return f"{t['number']}d{t['faces']}" + "".join(t["modifiers"])


def foundry_formula(roll):
    return "".join(term_formula(t) for t in roll["terms"])


def rolls_of(steps):
    for step in steps:
        yield from step["rolls"]
        for child in step.get("children") or []:
            yield from rolls_of(child["steps"])


@pytest.fixture(scope="module")
def host():
    return make_host()


@pytest.fixture(scope="module")
def examples(host):
    return {p.name: resolve_request(host, json.loads(p.read_text())) for p in EXAMPLES}


def test_there_are_examples_of_every_shipped_ruleset(examples):
    assert {r["ruleset"] for r in examples.values()} == {
        "exalted2e", "exalted2e_mass", "warmachine_mk3", "highest_die", "godsgloom",
    }  # fmt: skip


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_roll_reads_in_foundry_as_recorded(examples, path):
    rolls = list(rolls_of(examples[path.name]["steps"]))
    assert rolls or path.name == "brigand_automatic_defense.json"  # an automatic defense rolls nothing
    for roll in rolls:
        assert roll["class"] == "Roll" and roll["evaluated"] is True
        assert foundry_total(roll) == roll["total"], roll
        assert roll["formula"] == foundry_formula(roll)
        for term in roll["terms"]:
            if term["class"] == "Die":
                assert DIE_FORMULA.match(term_formula(term))  # only modifiers Foundry (or the module) knows
                assert term["number"] >= 1  # never "0d6"
                assert "r" not in term["modifiers"]  # no Foundry "reroll on a face"
                assert len(term["results"]) >= term["number"]  # the dice first thrown, then replacements


# -- highest-die pools: keep highest, not a sum ---------------------------------------------


def test_a_highest_die_parry_of_one_size_is_keep_highest(examples):
    # seed 003: "Each die strictly higher than the opponent's single highest die is one success":
    # the parry 2d6 showing 5 and 3 counts for its 5, not for 8.
    parry = examples["seed_example_parry.json"]["steps"]
    roll = next(r for r in rolls_of(parry) if r["options"]["flavor"] == "parry")
    assert roll["formula"] == "2d6kh" and roll["total"] == 5
    assert [(r["result"], r["active"]) for r in roll["terms"][0]["results"]] == [(5, True), (3, False)]
    assert roll["terms"][0]["results"][1]["discarded"] is True


def test_a_mixed_highest_die_pool_is_a_pool_term_keeping_the_highest(examples):
    steps = examples["seeded_duel.json"]["steps"]
    roll = next(r for r in rolls_of(steps) if r["options"]["flavor"] == "parry")
    assert roll["formula"] == "{1d10,1d8}kh" and roll["total"] == 7
    (pool,) = roll["terms"]
    assert pool["class"] == "PoolTerm" and pool["modifiers"] == ["kh"] and pool["terms"] == ["1d10", "1d8"]
    assert [(r["result"], r["active"]) for r in pool["results"]] == [(3, False), (7, True)]
    assert [inner["total"] for inner in pool["rolls"]] == [3, 7]


def test_a_highest_die_attack_counts_dice_beating_the_defenders_highest(examples):
    steps = examples["seed_example_parry.json"]["steps"]
    attack = next(r for r in rolls_of(steps) if r["options"]["flavor"] == "attack")
    assert attack["formula"] == "2d8cs>=6 + 1d6cs>=6" and attack["total"] == 2  # 7, 6 beat the 5; 4 does not


# -- rerolls the player chose: no "r", the dice first thrown counted ------------------------


def test_a_chosen_reroll_is_marked_rerolled_without_foundrys_r_modifier():
    dice = Dice(script=[1, 5, 3, 6])
    roll = dice.roll(3, 6, label="attacker", target=3)
    dice.reroll(roll, 0)  # the player rerolls the 1: it shows 6
    data = roll_to_foundry(roll)
    assert data["formula"] == "3d6cs>=3" and data["total"] == 3 == foundry_total(data)
    assert [(r["result"], r["active"], r.get("rerolled", False)) for r in data["terms"][0]["results"]] == [
        (1, False, True), (5, True, False), (3, True, False), (6, True, False),
    ]  # fmt: skip


def test_a_pool_reroll_and_an_extra_die_are_rolls_under_the_steps_that_made_them(examples):
    # GODSGLOOM: ATC.10's roll stays as judged; RDP.10's Pool Reroll and ATC.30's extra die
    # ("two or more 6s" on 🟥) are rolls of their own under those steps.
    steps = examples["rerolls_and_criticals.json"]["steps"]
    by_step = {(s["step"], r["options"]["flavor"]): r for s in steps for r in s["rolls"]}
    red = by_step[("roll", "attacker 🟥")]
    assert red["formula"] == "4d6cs>=3" and red["total"] == 1 == foundry_total(red)
    assert all(r["active"] for r in red["terms"][0]["results"])
    reroll = by_step[("active_pool_reroll", "attacker 🟥 Pool Reroll")]
    assert reroll["formula"] == "4d6cs>=3" and reroll["total"] == 4 == foundry_total(reroll)
    results = reroll["terms"][0]["results"]
    assert [r.get("rerolled", False) for r in results] == [True] * 4 + [False] * 4
    extra = by_step[("criticals", "attacker 🟥 critical extra die")]
    assert extra["formula"] == "1d6cs>=3" and [r["result"] for r in extra["terms"][0]["results"]] == [5]


def test_a_superseded_roll_keeps_its_dice_count():
    # Warmachine 5e: a reroll rolls the attack again; the first roll stays on the card, all dice struck.
    dice = Dice(script=[1, 2, 6, 5])
    first = dice.roll(2, 6, label="attack roll", modifier=7)
    for i in range(2):
        first.mark(i, "rerolled")
    dice.roll(2, 6, label="attack roll (reroll)", modifier=7)
    data = roll_to_foundry(first)
    assert data["formula"] == "2d6 + 7" and data["options"]["superseded"] is True
    assert all(not r["active"] and r["rerolled"] for r in data["terms"][0]["results"])
    assert foundry_total(data) == data["total"] == 7


def test_a_roll_set_aside_for_a_better_one_is_superseded_not_empty():
    # seed 002, step 4: "the better result is final" — the other roll is discarded whole.
    dice = Dice(script=[2, 1, 9])
    roll = dice.roll(3, 10, label="attack", target=7, double=10)
    roll.discard_all()
    data = roll_to_foundry(roll)
    assert data["formula"] == "3d10cs>=7dbl10" and data["total"] == 0 == foundry_total(data)
    assert data["options"]["superseded"] is True


def test_dice_discarded_as_the_lowest_read_as_drop_lowest():
    dice = Dice(script=[1, 4, 3])
    roll = dice.roll(3, 6, label="attack roll", modifier=5)
    roll.mark(0, "discarded")
    data = roll_to_foundry(roll)
    assert data["formula"] == "3d6dl1 + 5" and data["total"] == 12 == foundry_total(data)


# -- Exalted: doubled 10s --------------------------------------------------------------------


def test_exalted_attack_10s_count_twice_in_formula_and_results(examples):
    # seed 002: "each 10 counts as two successes" on every roll but damage.
    steps = examples["sword_vs_soldier.json"]["steps"]
    attack = next(r for r in rolls_of(steps) if r["options"]["flavor"] == "attack")
    damage = next(r for r in rolls_of(steps) if r["options"]["flavor"] == "damage")
    assert attack["formula"] == "11d10cs>=7dbl10" and attack["total"] == 6 == foundry_total(attack)
    assert [r["count"] for r in attack["terms"][0]["results"] if r["result"] == 10] == [2, 2]
    assert damage["formula"] == "9d10cs>=7" and damage["total"] == 2 == foundry_total(damage)
    assert [r["count"] for r in damage["terms"][0]["results"] if r["result"] == 10] == [1]


@pytest.mark.parametrize("target, double", [(7, 10), (7, None), (4, 3), (3, 6)])
def test_the_direct_success_pool_json_is_the_general_one(target, double):
    # A plain success pool is written out directly; the same roll with an (empty)
    # list of appended dice takes the general path, and must read the same.
    dice = Dice(5)
    for n in range(1, 25):
        roll = dice.roll(n, 10, label="attack", target=target, double=double)
        direct = roll_to_foundry(roll)
        roll.appended = []
        assert roll_to_foundry(roll) == direct
        assert json.dumps(roll_to_foundry(roll)) == json.dumps(direct)  # key order too
