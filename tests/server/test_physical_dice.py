"""Physical dice over the wire: the GM turns them on for the table (or per player), the
player whose token rolls is asked for the faces through the usual ``decision`` call, and
the attack's record and card say the roll was physical; a timeout lets the bridge roll."""

from __future__ import annotations

import asyncio

from .kit import answer

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"]}


def faces_policy(faces):
    """alice: enters ``faces`` for the faces question (and records it)."""

    async def policy(decision):
        if decision["name"] == "faces":
            return {"option": "enter", "params": {"faces": faces}}
        return decision["default"]

    return policy


def attack_roll(attack):
    return next(r for s in attack["steps"] for r in s["rolls"] if r["options"]["flavor"] == "attack")


async def test_only_the_gm_turns_physical_dice_on_and_the_table_says_so(seat):
    gm, alice = await seat.join("gm"), await seat.join("alice")
    refused = await alice.call("table.update", {"physical_dice": True})
    assert refused["ok"] is False and refused["error"]["code"] == "forbidden"
    table = (await gm.ok("table.update", {"physical_dice": True}))["table"]
    assert table["settings"]["physical_dice"] is True and table["settings"]["physical_dice_players"] == {}
    table = (await gm.ok("table.update", {"physical_dice_players": {"bob": False}}))["table"]
    table = (await gm.ok("table.update", {"physical_dice_players": {"carol": True}}))["table"]
    assert table["settings"]["physical_dice_players"] == {"bob": False, "carol": True}  # one switch at a time
    table = (await gm.ok("table.update", {"physical_dice_players": {"bob": None}}))["table"]
    assert table["settings"]["physical_dice_players"] == {"carol": True}
    bad = await gm.call("table.update", {"physical_dice": "yes please"})
    assert bad["ok"] is False and bad["error"]["details"] == {"physical_dice": ["Not a valid boolean."]}
    assert (await alice.ok("table.get"))["table"]["settings"]["physical_dice"] is True


async def test_the_attacker_enters_the_faces_of_their_attack_roll(seat):
    gm = await seat.join("gm")
    await gm.ok("table.update", {"physical_dice": True, "decision_timeout": 5})
    await seat.join("bob", answer("none"))
    alice = await seat.join("alice", faces_policy("6 4"))
    attack = (await alice.ok("attack", ATTACK))["attack"]
    [asked] = [d for d in alice.decisions if d["name"] == "faces"]
    assert asked["key"] == "faces-1" and asked["token"] == "a"
    assert asked["dice"] == {"label": "attack", "number": 2, "sides": 6}
    assert asked["prompt"] == "Your attack roll (Attacker), 2d6: roll real dice and enter the faces"
    assert asked["default"] == "roll" and asked["timeout"] == 5
    roll = attack_roll(attack)
    assert [r["result"] for r in roll["terms"][0]["results"]] == [6, 4] and roll["total"] == 2
    assert roll["options"]["physical"] == "entered" and roll["terms"][0]["method"] == "manual"
    assert attack["physical"] == {"tokens": ["a", "b"], "faces": [[6, 4]]}  # bob rolls by hand too (not here)
    faces = next(d for d in attack["decisions"] if d["name"] == "faces")
    assert faces["how"] == "answered" and faces["answer"] == {"option": "enter", "params": {"faces": [6, 4]}}
    # the table saw whom it waited for, and for what dice
    shown = next(e for e in gm.named("decision.asked") if e["key"] == "faces-1")
    assert shown["users"] == ["alice"] and shown["dice"] == {"label": "attack", "number": 2, "sides": 6}


async def test_on_timeout_the_bridge_rolls_and_the_record_says_so(seat):
    gm = await seat.join("gm")
    await gm.ok("table.update", {"physical_dice": True, "decision_timeout": 0.3})
    await seat.join("bob", answer("none"))

    async def silent(decision):
        if decision["name"] == "faces":
            await asyncio.Event().wait()
        return decision["default"]

    alice = await seat.join("alice", silent)
    attack = (await alice.ok("attack", ATTACK))["attack"]
    roll = attack_roll(attack)
    assert roll["options"]["physical"] == "rolled" and "method" not in roll["terms"][0]
    faces = next(d for d in attack["decisions"] if d["name"] == "faces")
    assert faces["how"] == "timeout" and faces["answer"] == {"option": "roll"}
    assert attack["physical"]["faces"] == [None]


async def test_faces_that_do_not_fit_the_dice_let_the_bridge_roll_and_say_invalid(seat):
    gm = await seat.join("gm")
    await gm.ok("table.update", {"physical_dice": True, "decision_timeout": 5})
    await seat.join("bob", answer("none"))
    alice = await seat.join("alice", faces_policy([7, 1]))  # a d6 shows no 7
    attack = (await alice.ok("attack", ATTACK))["attack"]
    faces = next(d for d in attack["decisions"] if d["name"] == "faces")
    assert faces["how"] == "invalid" and attack_roll(attack)["options"]["physical"] == "rolled"


async def test_the_gm_switches_physical_dice_per_player(seat):
    gm = await seat.join("gm")
    await gm.ok("table.update", {"physical_dice": True, "physical_dice_players": {"alice": False}, "decision_timeout": 5})
    await seat.join("bob", answer("none"))
    alice = await seat.join("alice", faces_policy("6 6"))
    attack = (await alice.ok("attack", ATTACK))["attack"]
    assert not [d for d in alice.decisions if d["name"] == "faces"] and attack["physical"]["tokens"] == ["b"]
    assert "physical" not in attack_roll(attack)["options"]
    # off for the table, on for alice alone
    await gm.ok("table.update", {"physical_dice": False, "physical_dice_players": {"alice": True}})
    attack = (await alice.ok("attack", ATTACK))["attack"]
    assert attack["physical"] == {"tokens": ["a"], "faces": [[6, 6]]}


async def test_odds_ask_nobody_for_faces_and_are_the_same_with_physical_dice_on(seat):
    gm = await seat.join("gm")
    alice = await seat.join("alice", faces_policy("6 6"))
    before = await alice.ok("attack.odds", {**ATTACK, "answers": {"defense": "none"}})
    await gm.ok("table.update", {"physical_dice": True})
    after = await alice.ok("attack.odds", {**ATTACK, "answers": {"defense": "none"}})
    assert after == before and alice.decisions == []
