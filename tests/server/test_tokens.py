"""Tokens over the wire: create, read, patch with versions, delete, broadcasts."""

from __future__ import annotations

import asyncio

from vtt_bridge.state import replay

from .kit import ignore


async def test_create_get_list_update_delete(seat):
    gm = await seat.join("gm")
    carol = await seat.join("carol")
    made = (
        await gm.ok(
            "token.create", {"name": "Ogre", "ruleset": "duel", "system": {"hp": 20}, "ownership": {"carol": 3}}
        )
    )["token"]
    assert made["id"].startswith("tok-") and made["version"] == 1
    assert made["system"] == {"hp": 20, "rerolls": 0}  # the ruleset's schema filled the default
    assert (await carol.ok("token.get", {"id": made["id"]}))["token"] == made
    listed = (await carol.ok("token.list"))["tokens"]
    assert [t["id"] for t in listed] == sorted(["a", "b", "c", made["id"]])
    patched = (await carol.ok("token.update", {"id": made["id"], "version": 1, "system": {"hp": 15}}))["token"]
    assert patched["system"] == {"hp": 15, "rerolls": 0} and patched["version"] == 2 and patched["name"] == "Ogre"
    gone = await carol.ok("token.delete", {"id": made["id"]})
    assert gone["deleted"] is True and gone["token"] == patched
    assert (await carol.call("token.get", {"id": made["id"]}))["error"]["code"] == "not_found"
    await carol.wait_for("token.deleted")
    assert [n for n, _ in carol.events] == ["token.created", "token.updated", "token.deleted"]
    assert carol.named("token.created")[0]["token"] == made
    assert carol.named("token.updated")[0]["token"] == patched
    assert carol.named("token.deleted")[0] == {"id": made["id"]}
    assert replay(await seat.audit()) == await seat.tokens()


async def test_a_stale_version_is_a_conflict_and_the_patch_is_not_applied(seat):
    alice = await seat.join("alice")
    await alice.ok("token.update", {"id": "a", "system": {"hp": 9}})
    before = await seat.state()
    ack = await alice.call("token.update", {"id": "a", "version": 1, "system": {"hp": 1}})
    assert ack["error"]["code"] == "conflict"
    assert ack["error"]["details"] == {"token": "a", "expected": 1, "version": 2}
    assert await seat.state() == before


async def test_system_patches_merge_and_are_checked_by_the_ruleset(seat):
    gm = await seat.join("gm")
    token = (await gm.ok("token.update", {"id": "a", "system": {"rerolls": 2}}))["token"]
    assert token["system"] == {"hp": 10, "rerolls": 2}
    bad = await gm.call("token.update", {"id": "a", "system": {"rerolls": "many"}})
    assert bad["error"]["code"] == "invalid_request"
    assert bad["error"]["details"] == {"token": {"rerolls": ["Not a valid integer."]}}


async def test_an_update_that_changes_nothing_keeps_the_version(seat):
    gm = await seat.join("gm")
    entries = len(await seat.audit())
    token = (await gm.ok("token.update", {"id": "a", "system": {"hp": 10}}))["token"]
    assert token["version"] == 1 and len(await seat.audit()) == entries


async def test_tokens_in_an_attack_waiting_for_an_answer_cannot_be_edited(server):
    from .kit import seat_table

    seat = await seat_table(server, settings={"decision_timeout": 60})
    try:
        release = asyncio.Event()

        async def later(decision):
            await release.wait()
            return "none"

        bob = await seat.join("bob", later)
        gm = await seat.join("gm")
        pending = asyncio.ensure_future(
            gm.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]})
        )
        while not bob.decisions:
            await asyncio.sleep(0.01)
        busy = await gm.call("token.update", {"id": "b", "system": {"hp": 1}})
        assert busy["error"]["code"] == "conflict"
        assert busy["error"]["details"]["attack"] == bob.decisions[0]["attack"]["id"]
        assert (await gm.call("token.delete", {"id": "a"}))["error"]["code"] == "conflict"
        # A token outside the attack is free.
        await gm.ok("token.update", {"id": "c", "system": {"hp": 1}})
        release.set()
        assert (await pending)["attack"]["tokens"]["b"]["after"]["system"]["hp"] == 8
        await gm.ok("token.update", {"id": "b", "system": {"hp": 1}})
    finally:
        await seat.close()


async def test_ownership_default_gives_every_player_a_level(seat):
    gm = await seat.join("gm")
    await gm.ok(
        "token.create",
        {"id": "shared", "name": "Cart", "ruleset": "duel", "system": {"hp": 4}, "ownership": {"default": 3}},
    )
    carol = await seat.join("carol")
    assert (await carol.ok("token.update", {"id": "shared", "name": "Wagon"}))["token"]["name"] == "Wagon"
    await carol.ok("attack", {"ruleset": "duel", "attacker": "shared", "targets": ["c"]})


async def test_events_in_auth_choose_the_broadcasts(seat):
    gm = await seat.join("gm")
    tokens_only = await seat.join("carol", events=["token.updated"])
    everything = await seat.join("carol")
    await seat.join("bob", ignore)
    await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]})
    await everything.wait_for("token.updated")
    await tokens_only.wait_for("token.updated")
    assert {n for n, _ in tokens_only.events} == {"token.updated"}
    # bob is asked (and ignores it): the table hears the question go out and settle.
    assert {n for n, _ in everything.events} == {
        "attack.step",
        "attack.resolved",
        "token.updated",
        "decision.asked",
        "decision.settled",
    }
