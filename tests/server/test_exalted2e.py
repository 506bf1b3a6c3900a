"""A real ruleset over the wire: an Exalted 2e attack whose defender is asked."""

from __future__ import annotations

import pytest

from vtt_bridge import make_host
from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from .conftest import config
from .kit import seat_table

OTHERS = ["exalted2e_mass", "warmachine_mk3", "warmachine_abilities", "highest_die", "godsgloom", "godsgloom_momentum"]


@pytest.fixture
async def exalted(tmp_path):
    host = make_host(block=OTHERS, environ={})
    if "exalted2e" not in host.rulesets:
        pytest.skip("the exalted2e ruleset is not installed")
    samples = host.rulesets["exalted2e"].sample_tokens()
    async with BridgeServer(config(tmp_path, plugins=(), entry_points=True), host=host) as running:
        seat = await seat_table(running, users=("alice", "bob"), tokens=samples)
        yield seat
        await seat.close()


async def dodge_else_default(decision):
    return "dodge" if decision["key"] == "defense" else decision["default"]


async def default(decision):
    return decision["default"]


async def test_an_exalted_attack_asks_the_defender_and_the_attacker(exalted):
    seat = exalted
    bob = await seat.join("bob", dodge_else_default)
    alice = await seat.join("alice", default)
    watcher = await seat.join("gm")
    request = {"ruleset": "exalted2e", "attacker": "anoria", "targets": ["monk"], "declaration": {"weapon": "fist"}}
    attack = (await alice.ok("attack", request))["attack"]
    # The defender (monk, bob's) chooses the defense; the attacker (anoria,
    # alice's) is asked about rerolls; whatever else the dice lead to is asked
    # of the right owner too.
    assert bob.decisions[0]["key"] == "defense"
    assert {o["id"] for o in bob.decisions[0]["options"]} >= {"dodge", "parry"}
    assert "attack_reroll" in [d["key"] for d in alice.decisions]
    assert all(d["token"] == "monk" for d in bob.decisions)
    assert all(d["token"] == "anoria" for d in alice.decisions)
    assert all(d["attack"]["id"] == attack["id"] for d in bob.decisions + alice.decisions)
    assert len(attack["decisions"]) == len(bob.decisions) + len(alice.decisions)
    assert all(d["how"] == "answered" for d in attack["decisions"])
    assert attack["decisions"][0]["key"] == "defense" and attack["decisions"][0]["answer"] == {"option": "dodge"}
    assert attack["outcome"]["defense"] == "dodge"
    rolls = [r for s in attack["steps"] for r in s["rolls"]]
    assert rolls and all(r["class"] == "Roll" and r["evaluated"] for r in rolls)
    assert any("d10" in r["formula"] for r in rolls)
    await watcher.wait_for("attack.resolved")
    stored = await seat.tokens()
    for token_id, change in attack["tokens"].items():
        assert stored[token_id] == change["after"]
    assert replay(await seat.audit()) == stored
