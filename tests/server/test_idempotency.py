"""``request_id``: a retried attack returns the first result and applies nothing twice."""

from __future__ import annotations

import asyncio

from .kit import answer

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "request_id": "swing-1"}


async def test_a_retry_returns_the_first_result_and_changes_nothing(seat):
    alice = await seat.join("alice")
    first = await alice.ok("attack", ATTACK)
    after_first = await seat.state()
    second = await alice.ok("attack", ATTACK)
    assert second["attack"] == first["attack"]
    assert first["retried"] is False and second["retried"] is True
    assert await seat.state() == after_first
    history = (await alice.ok("attack.history"))["attacks"]
    assert [h["id"] for h in history] == [first["attack"]["id"]]


async def test_a_retry_while_the_first_is_still_waiting_for_an_answer_joins_it(seat):
    release = asyncio.Event()

    async def slow(decision):
        await release.wait()
        return "none"

    bob = await seat.join("bob", slow)
    alice = await seat.join("alice")
    first = asyncio.ensure_future(alice.call("attack", ATTACK))
    while not bob.decisions:
        await asyncio.sleep(0.01)
    retry = asyncio.ensure_future(alice.call("attack", ATTACK))
    await asyncio.sleep(0.05)
    release.set()
    one, two = await asyncio.gather(first, retry)
    assert one["ok"] and two["ok"]
    assert one["attack"] == two["attack"]
    assert len(bob.decisions) == 1
    assert len([e for e in await seat.audit() if e.kind == "attack"]) == 1


async def test_a_request_id_reused_for_another_request_is_a_conflict(seat):
    alice = await seat.join("alice")
    await alice.ok("attack", ATTACK)
    before = await seat.state()
    ack = await alice.call("attack", {**ATTACK, "declaration": {"bonus": 2}})
    assert ack["ok"] is False and ack["error"]["code"] == "conflict"
    assert ack["error"]["details"] == {"request_id": "swing-1"}
    assert await seat.state() == before


async def test_another_user_cannot_claim_a_request_id(seat):
    alice = await seat.join("alice")
    await alice.ok("attack", ATTACK)
    gm = await seat.join("gm")
    ack = await gm.call("attack", ATTACK)
    assert ack["ok"] is False and ack["error"]["code"] == "conflict"


async def test_a_failed_request_can_be_retried_and_then_applies_once(seat):
    gm = await seat.join("gm")
    request = {**ATTACK, "dice": [5], "answers": {"defense": "none"}}
    failed = await gm.call("attack", request)
    assert failed["error"]["code"] == "dice_exhausted"
    retried = await gm.call("attack", request)
    assert retried["error"]["code"] == "dice_exhausted"  # still nothing applied, nothing remembered
    assert await seat.audit() == [e for e in await seat.audit() if e.kind != "attack"]
    ok = await gm.ok("attack", {**request, "dice": [5, 6]})
    assert ok["retried"] is False


async def test_distinct_request_ids_are_distinct_attacks(seat):
    await seat.join("bob", answer("none"))
    alice = await seat.join("alice")
    one = await alice.ok("attack", ATTACK)
    two = await alice.ok("attack", {**ATTACK, "request_id": "swing-2"})
    assert one["attack"]["id"] != two["attack"]["id"]
