"""Packs per table and what-if replay over the wire (issue 28), with real socket.io clients.

The GM enables and disables installed packs for the table (``table.update``);
``table.get`` and ``rulesets.list`` say which are active; attacks and odds use only
those; every record names the packs it ran with. ``attack.whatif`` runs a logged
attack again under its recorded dice with something changed, to the requester only;
``attack.whatif.apply`` (GM) commits it as a new attack, undoable like any other.
"""

from __future__ import annotations

import pytest

from vtt_bridge import make_host
from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from .conftest import config
from .kit import seat_table

OTHERS = ["exalted2e_mass", "warmachine_mk3", "warmachine_abilities", "highest_die", "godsgloom", "godsgloom_momentum"]
FIST = {"ruleset": "exalted2e", "attacker": "anoria", "targets": ["monk"], "declaration": {"weapon": "fist"}}
CHARMED = {**FIST, "declaration": {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 3}]}}


@pytest.fixture
async def table(tmp_path):
    host = make_host(block=OTHERS, environ={})
    if "excellencies" not in host.packs():
        pytest.skip("the excellencies pack is not installed")
    samples = host.rulesets["exalted2e"].sample_tokens()
    async with BridgeServer(config(tmp_path, plugins=(), entry_points=True), host=host) as running:
        seat = await seat_table(running, users=("alice", "bob"), tokens=samples)
        yield seat
        await seat.close()


async def default(decision):
    return decision["default"]


async def parry(decision):
    return "parry" if decision["key"] == "defense" else decision["default"]


def charms(listing):
    exalted = next(r for r in listing["rulesets"] if r["id"] == "exalted2e")
    return {d["id"] for d in exalted["declarables"]}


async def test_the_gm_disables_a_pack_and_attacks_and_odds_run_without_it(table):
    gm = await table.join("gm")
    alice = await table.join("alice", default)
    await table.join("bob", parry)
    got = await gm.ok("table.get")
    assert "excellencies" in got["table"]["settings"]["packs"]  # never chosen: every installed pack
    assert {"name": "excellencies", "version": got["table"]["packs"][0]["version"], "active": True} in got["table"]["packs"]
    assert "first-excellency" in charms(await alice.ok("rulesets.list"))

    # Only the GM changes the packs; an unknown one is named.
    refused = await alice.call("table.update", {"packs": []})
    assert refused["error"]["code"] == "forbidden"
    refused = await gm.call("table.update", {"packs": ["excelencies"]})
    assert refused["error"]["code"] == "invalid_request" and refused["error"]["details"]["pack"] == "excelencies"
    assert "did you mean 'excellencies'" in refused["error"]["message"]

    updated = await gm.ok("table.update", {"packs": []})
    assert updated["table"]["settings"]["packs"] == []
    assert not any(p["active"] for p in updated["table"]["packs"])
    assert (await alice.wait_for("table.updated"))[0]["table"]["settings"]["packs"] == []
    listing = await alice.ok("rulesets.list")
    assert listing["packs"]["active"] == [] and "excellencies" in listing["packs"]["installed"]
    assert "first-excellency" not in charms(listing)

    # The pack's Charm is no longer there to declare, for the attack and its odds alike.
    refused = await alice.call("attack", CHARMED)
    assert refused["error"]["code"] == "invalid_request" and "Unknown Charm 'first-excellency'" in refused["error"]["message"]
    refused = await alice.call("attack.odds", CHARMED)
    assert refused["error"]["code"] == "invalid_request"
    odds = (await alice.ok("attack.odds", FIST))["odds"]
    assert odds["method"] == "exact" and 0 < odds["hit"]["value"] < 1
    attack = (await alice.ok("attack", FIST))["attack"]
    assert list(attack["packs"]) == ["exalted2e"]
    assert not any(c.get("plugin") == "excellencies" for s in attack["steps"] for c in s["changes"] + s["notes"])

    await gm.ok("table.update", {"packs": ["excellencies"]})
    charmed = (await alice.ok("attack.odds", CHARMED))["odds"]
    assert "(it accounts for excellencies)" in charmed["reason"] and "excellencies" not in odds["reason"]
    assert charmed["hit"]["value"] > odds["hit"]["value"]  # three more dice
    attack = (await alice.ok("attack", CHARMED))["attack"]
    assert sorted(attack["packs"]) == ["exalted2e", "excellencies"] and attack["outcome"]["motes"]["anoria"] == 3


async def test_what_if_to_the_requester_only_then_applied_and_undone(table):
    gm = await table.join("gm")
    alice = await table.join("alice", default)
    bob = await table.join("bob", parry)
    logged = (await gm.ok("attack", {**CHARMED, "seed": 2}))["attack"]
    before = len(await table.audit())

    same = (await gm.ok("attack.whatif", {"attack": logged["id"]}))["whatif"]
    assert same["same"] and same["whatif"]["steps"] == logged["steps"]

    result = (await gm.ok("attack.whatif", {"attack": logged["id"], "without": ["excellencies"]}))["whatif"]
    assert not result["same"] and result["dropped"] == ["first-excellency"]
    assert list(result["whatif"]["packs"]) == ["exalted2e"]
    assert result["outcome"]["motes"] == {"original": {"anoria": 3}, "whatif": None}
    roll = [s for s in result["steps"] if s["original"] is not False and logged["steps"][s["original"]]["step"] == "attack_roll"][0]
    assert roll["same"] is False
    # Same seed, same faces, three dice fewer.
    faces = [r["result"] for r in logged["steps"][roll["original"]]["rolls"][0]["terms"][0]["results"]]
    theirs = [r["result"] for r in result["whatif"]["steps"][roll["whatif"]]["rolls"][0]["terms"][0]["results"]]
    assert theirs == faces[: len(faces) - 3]
    assert not [e for e, _ in alice.events + bob.events if e.startswith("attack.whatif")]
    assert len(await table.audit()) == before  # nothing applied

    # The GM undoes the original and applies the what-if: a new attack, its own record.
    await gm.ok("attack.undo", {"id": logged["id"]})
    applied = (await gm.ok("attack.whatif.apply", {"attack": logged["id"], "without": ["excellencies"]}))["attack"]
    assert applied["id"] != logged["id"] and applied["whatif"]["of"] == logged["id"]
    assert applied["whatif"]["without"] == ["excellencies"]
    assert applied["outcome"] == result["whatif"]["outcome"] and applied["steps"] == result["whatif"]["steps"]
    assert list(applied["packs"]) == ["exalted2e"]
    stored = await table.tokens()
    assert stored["monk"]["system"] == applied["tokens"]["monk"]["after"]["system"]
    await gm.ok("attack.undo", {"id": applied["id"]})
    assert replay(await table.audit()) == await table.tokens()

    # A player asks only of their own attacks, and cannot apply.
    mine = (await alice.ok("attack", FIST))["attack"]
    assert (await alice.ok("attack.whatif", {"attack": mine["id"], "answers": {"defense": "nothing"}}))["whatif"]
    refused = await bob.call("attack.whatif", {"attack": mine["id"]})
    assert refused["error"]["code"] == "forbidden"
    refused = await alice.call("attack.whatif.apply", {"attack": mine["id"]})
    assert refused["error"]["code"] == "forbidden"
    refused = await gm.call("attack.whatif", {"attack": logged["id"], "with": ["nope"]})
    assert refused["error"]["code"] == "invalid_request" and refused["error"]["details"]["pack"] == "nope"


async def test_a_table_whose_gm_never_chose_runs_with_the_servers_default_packs(tmp_path):
    host = make_host(block=OTHERS, environ={})
    samples = host.rulesets["exalted2e"].sample_tokens()
    async with BridgeServer(config(tmp_path, plugins=(), entry_points=True, default_packs=()), host=host) as running:
        seat = await seat_table(running, users=("alice", "bob"), tokens=samples)
        try:
            alice = await seat.join("alice", default)
            await seat.join("bob", parry)
            assert (await alice.ok("table.get"))["table"]["settings"]["packs"] == []
            assert "first-excellency" not in charms(await alice.ok("rulesets.list"))
            attack = (await alice.ok("attack", FIST))["attack"]
            assert list(attack["packs"]) == ["exalted2e"]
        finally:
            await seat.close()
    with pytest.raises(Exception, match="no installed pack 'excelencies'"):
        async with BridgeServer(config(tmp_path, plugins=(), entry_points=True, default_packs=("excelencies",)), host=host):
            pass
