"""Broadcasts in batches (``auth.batch``): what leaves together arrives as one ``batch`` message."""

from __future__ import annotations

import asyncio

from vtt_bridge.server import BridgeServer

from .kit import Client, ignore, seat_table


def unbatched(client) -> list[tuple[str, object]]:
    """A batch client's broadcasts, one by one, in the order they arrived."""
    out = []
    for name, data in client.events:
        if name == "batch":
            out.extend((event, payload) for event, payload in data)
        else:
            out.append((name, data))
    return out


async def test_a_batch_client_gets_the_same_broadcasts_in_the_same_order_in_fewer_messages(seat):
    gm = await seat.join("gm")
    plain = await seat.join("carol")
    batched = await seat.join("carol", batch=True)
    await seat.join("bob", ignore)
    # bob is asked (and ignores it): the steps before the question go out with decision.asked;
    # the attack's last phase, its decision.settled, result and token update, together (though
    # the attack's commit is awaited between the first and the others): two messages in all.
    ack = await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]})
    await plain.wait_for("token.updated")
    await batched.wait_for("batch", 2)
    assert unbatched(batched) == plain.events
    assert {name for name, _ in batched.events} == {"batch"}
    assert len(batched.events) < len(plain.events)
    first = [event for event, _ in batched.events[0][1]]
    assert first[-1] == "decision.asked" and set(first[:-1]) == {"attack.step"}, first
    assert len(batched.events) == 2
    last = batched.events[-1][1]
    assert [event for event, _ in last] == ["decision.settled", "attack.resolved", "token.updated"]
    assert last[1][1] == {"attack": ack["attack"]}
    assert last[2][1]["token"]["id"] == "b" and last[2][1]["token"]["system"]["hp"] == 9
    # Every broadcast is numbered, consecutively, the same for both connections.
    assert plain.seqs == list(range(plain.seqs[0], plain.seqs[0] + len(plain.events)))
    assert batched.seqs == plain.seqs


async def test_a_batch_client_gets_only_the_events_it_asked_for(seat):
    gm = await seat.join("gm")
    results = await seat.join("carol", batch=True, events=["attack.resolved"])
    await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}})
    await gm.ok("token.update", {"id": "c", "name": "Carol's cart"})
    await results.wait_for("batch")
    await gm.ok("echo", {})  # anything more would have been queued before this answer
    assert [[event for event, _ in data] for _, data in results.events] == [["attack.resolved"]]


async def test_batch_must_be_a_boolean(seat):
    client = Client(seat.server.url)
    assert not await client.try_connect({**seat.auth("gm"), "batch": "yes"})
    assert client.refused["data"]["code"] == "invalid_request" and "batch" in client.refused["data"]["details"]


async def test_a_batch_room_is_forgotten_when_its_last_connection_leaves(seat):
    gm = await seat.join("gm")
    first = await seat.join("carol", batch=True, events=["token.updated"])
    second = await seat.join("carol", batch=True, events=["token.updated"])
    outbox = seat.server.bridge.tables[seat.id].outbox
    assert len(outbox.batch_rooms) == 1
    await first.close()
    await gm.ok("token.update", {"id": "c", "name": "Cart"})
    await second.wait_for("batch")
    await second.close()
    async with asyncio.timeout(5):
        while outbox.batch_rooms:
            await asyncio.sleep(0.01)


async def test_over_redis_a_batch_client_gets_the_single_events(tmp_path):
    # Several processes share their broadcasts through the bus, one by one (docs/protocol.md, "Batches").
    from ..state.redis_server import redis_server
    from .conftest import config

    with redis_server() as url:
        one = BridgeServer(config(tmp_path / "one", redis=url, redis_prefix="batch:"))
        two = BridgeServer(config(tmp_path / "two", redis=url, redis_prefix="batch:"))
        await one.start()
        await two.start()
        try:
            seat = await seat_table(one)
            seat.server = two
            batched = await seat.join("carol", batch=True)
            seat.server = one
            gm = await seat.join("gm")
            attack = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}}
            await gm.ok("attack", attack)
            await batched.wait_for("token.updated")
            assert [name for name, _ in batched.events] == ["attack.resolved", "token.updated"]
            await seat.close()
        finally:
            await one.stop()
            await two.stop()
