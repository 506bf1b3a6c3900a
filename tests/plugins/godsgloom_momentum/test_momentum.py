"""The Momentum / Onslaught pack: it changes only ATC.20 and ATC.40, through the public context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vtt_godsgloom_momentum
from vtt_bridge.cli.resolve import resolve_request

from ..godsgloom.helpers import active, changes, host, run, start, steps, unit
from vtt_godsgloom_momentum.rules import holds, onslaught_applies

PACK = "vtt_godsgloom_momentum"
NAME = "godsgloom_momentum"  # its entry-point name: the host names it so, loaded by path too
MISS_9 = [2] * 9


def test_the_pack_implements_only_the_reroll_and_auto_success_steps():
    h = host(PACK)
    plugin = h.pm.get_plugin(NAME)
    assert {c.name for c in h.pm.get_hookcallers(plugin)} == {
        "godsgloom_reroll", "godsgloom_auto_successes", "vtt_bridge_declarables"
    }  # fmt: skip
    listed = {d.id: d for d in h.declarables("godsgloom")}
    assert set(listed) == {"momentum", "onslaught"}
    assert not any(d.inert for d in listed.values())  # a token's traits act undeclared
    assert h.call_order("godsgloom_reroll") == [NAME, "godsgloom"]  # before the ruleset's own


def test_momentum_offers_one_single_die_reroll_per_test_to_its_holder():
    res = start(unit(traits=["momentum"]), dice=[1, 2, 2, 2, 2, 2, 2, 2, 2, 4], packs=(PACK,))
    decision = res.advance()
    assert decision.key == "active_single_reroll" and decision.token == "a"
    res.answer("die:attack:1")
    assert res.advance() is None  # one per test: spent, not asked again
    record = res.record
    assert active(record, "attacker 🟥") == [4, 2, 2]
    reroll = steps(record, "reroll")[0]
    assert reroll["changes"] == [
        {"number": "attacker_single_rerolls", "from": 0, "to": 1, "plugin": NAME}
    ]
    assert "a" not in record["changes"]  # Momentum is not a token resource


def test_without_the_pack_momentum_is_just_a_name():
    record = run(unit(traits=["momentum"]), dice=MISS_9)
    assert record["decisions"] == []


def test_momentum_defaulted_rerolls_nothing():
    record = run(unit(traits=["momentum"]), dice=MISS_9, packs=(PACK,))
    assert [(d["key"], d["answer"]["option"], d["how"]) for d in record["decisions"]] == [
        ("active_single_reroll", "decline", "default")
    ]


def test_a_defending_holder_gets_its_reroll_in_rdp_20():
    record = run(
        defender=unit(traits=["momentum"]),
        dice=[*MISS_9, 5],
        answers={"inactive_single_reroll": "die:defence:2"},
        packs=(PACK,),
    )
    assert [d["token"] for d in record["decisions"]] == ["d"]
    assert active(record, "defender 🟦") == [2, 5]


def test_momentum_declared_as_a_charm_for_this_attack():
    record = run(declaration={"charms": [{"id": "momentum"}]}, dice=MISS_9, packs=(PACK,))
    assert [d["key"] for d in record["decisions"]] == ["active_single_reroll"]


def test_momentum_adds_to_rerolls_the_unit_already_holds():
    res = start(unit(traits=["momentum"], rerolls={"single": 1}), dice=MISS_9, packs=(PACK,))
    res.advance()
    assert res.ctx.attacker_single_rerolls == 2


@pytest.mark.parametrize(
    ("attack", "holder", "expected"),
    [
        ("melee", "attacker", {"attacker_hits": (0, 1)}),
        ("ranged", "attacker", {"attacker_hits": (0, 1)}),
        ("melee", "defender", {"defender_hits": (0, 1)}),
        ("ranged", "defender", {}),  # a ranged defender inflicts nothing: no Auto-⚔️
    ],
)
def test_onslaught_adds_an_auto_hit_at_atc_40(attack, holder, expected):
    who = {holder: unit(traits=["onslaught"])}
    dice = MISS_9 if attack == "melee" else [2] * 7
    record = run(who.get("attacker"), who.get("defender"), declaration={"attack": attack}, dice=dice, packs=(PACK,))
    assert changes(record, "auto_successes") == expected
    for change in steps(record, "auto_successes")[0]["changes"]:
        assert change["plugin"] == NAME


def test_the_onslaught_hit_is_cancelled_like_any_other():
    record = run(unit(traits=["onslaught"]), unit(guard={"attack": 2, "defence": 2}), dice=[2, 2, 2, 2, 2, 2, 2, 4, 2], packs=(PACK,))
    assert record["outcome"]["damage"] == 0  # the defender's one 🛡️ cancels it


def test_the_pack_changes_nothing_for_units_without_its_traits():
    plain = run(seed=11)
    with_pack = run(seed=11, packs=(PACK,))
    assert plain["outcome"] == with_pack["outcome"]
    assert plain["steps"] == with_pack["steps"]


def test_rules():
    assert holds("momentum", ["momentum"]) and holds("momentum", [], declared=True)
    assert not holds("momentum", ["onslaught"])
    assert onslaught_applies(side="attacker", melee=False)
    assert not onslaught_applies(side="defender", melee=False)


@pytest.mark.parametrize(
    "path", sorted((Path(vtt_godsgloom_momentum.__file__).parent / "examples").glob("*.json")), ids=lambda p: p.name
)
def test_example_requests_resolve(path):
    data = json.loads(path.read_text())
    record = resolve_request(host(PACK), data)
    assert record["dice_used"] == len(data["dice"])
    assert any(c["plugin"] == NAME for s in record["steps"] for c in s["changes"])
