"""Two server processes' worth of servers sharing one Redis: store and message bus."""

from __future__ import annotations

import itertools

import pytest

from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from ..state.redis_server import redis_server
from .conftest import config
from .kit import answer, seat_table

_prefixes = itertools.count()


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


@pytest.fixture
async def pair(tmp_path, redis_url):
    prefix = f"srv{next(_prefixes)}:"
    one = BridgeServer(config(tmp_path / "one", redis=redis_url, redis_prefix=prefix))
    two = BridgeServer(config(tmp_path / "two", redis=redis_url, redis_prefix=prefix))
    await one.start()
    await two.start()
    yield one, two
    await one.stop()
    await two.stop()


async def test_clients_on_two_servers_share_tables_tokens_and_broadcasts(pair):
    one, two = pair
    seat = await seat_table(one)
    try:
        assert one.store.kind == two.store.kind == "redis"
        seat.server = one
        bob = await seat.join("bob", answer("none"))
        seat.server = two
        watcher = await seat.join("carol")
        gm = await seat.join("gm")
        # An attack resolved on server two; bob, the defender's owner, is asked
        # on server one, where he is connected — not the GM.
        gm.policy = answer("block")
        attack = (await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}))[
            "attack"
        ]
        assert [d["key"] for d in bob.decisions] == ["defense"] and gm.decisions == []
        assert attack["decisions"][0]["answer"] == {"option": "none"}
        assert attack["tokens"]["b"]["after"]["system"]["hp"] == 8
        # The broadcast crossed the bus to bob's server.
        [resolved] = await bob.wait_for("attack.resolved")
        assert resolved["attack"]["id"] == attack["id"]
        await watcher.wait_for("token.updated")
        # Server one sees the change server two committed.
        assert (await bob.ok("token.get", {"id": "b"}))["token"] == attack["tokens"]["b"]["after"]
        # A write on server one is seen by the next attack on server two.
        await bob.ok("token.update", {"id": "b", "system": {"hp": 20}})
        again = (
            await gm.ok(
                "attack",
                {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}},
            )
        )["attack"]
        assert again["tokens"]["b"]["before"]["system"]["hp"] == 20
        assert replay(await two.store.audit(seat.id)) == await seat.tokens()
    finally:
        await seat.close()


async def test_a_retry_on_the_other_server_returns_the_first_result(pair):
    one, two = pair
    seat = await seat_table(one)
    try:
        request = {
            "ruleset": "duel",
            "attacker": "a",
            "targets": ["b"],
            "dice": [5, 6],
            "answers": {"defense": "none"},
            "request_id": "x1",
        }
        first = await seat.join("gm")
        ack = await first.ok("attack", request)
        seat.server = two
        second = await seat.join("gm")
        retry = await second.ok("attack", request)
        assert retry["retried"] is True and retry["attack"] == ack["attack"]
        assert len([e for e in await seat.audit() if e.kind == "attack"]) == 1
    finally:
        await seat.close()
