"""Two server processes' worth of servers sharing one Redis: store and message bus."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time

import pytest
from socketio import packet

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


@contextlib.asynccontextmanager
async def _servers(tmp_path, redis_url, **settings):
    """Two servers on one Redis (a fresh key prefix), as two processes would be."""
    prefix = f"srv{next(_prefixes)}:"
    one = BridgeServer(config(tmp_path / "one", redis=redis_url, redis_prefix=prefix, **settings))
    two = BridgeServer(config(tmp_path / "two", redis=redis_url, redis_prefix=prefix, **settings))
    await one.start()
    await two.start()
    try:
        yield one, two
    finally:
        await one.stop()
        await two.stop()


@pytest.fixture
async def pair(tmp_path, redis_url):
    async with _servers(tmp_path, redis_url) as servers:
        yield servers


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


@pytest.fixture
async def patient_pair(tmp_path, redis_url):
    """Two servers on one Redis whose questions wait long and whose grace is 3 s."""
    async with _servers(tmp_path, redis_url, decision_timeout=20, reconnect_grace=3.0) as servers:
        yield servers


async def _never(decision):
    await asyncio.Event().wait()


ASK_BOB = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}


async def test_a_decider_who_says_goodbye_on_the_other_server_is_noticed_at_once(patient_pair):
    one, two = patient_pair
    seat = await seat_table(one)
    try:
        bob = await seat.join("bob", _never)  # on server one
        seat.server = two
        gm = await seat.join("gm")  # the attack resolves on server two
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        await bob.wait_for("decision")
        started = time.monotonic()
        # A goodbye (socket.io's DISCONNECT packet): the rules' default at once, no grace.
        await bob.sio._send_packet(packet.Packet(packet.DISCONNECT, namespace="/"))
        ack = await pending
        assert ack["ok"] is True, ack
        assert ack["attack"]["decisions"][0]["how"] == "disconnect"
        assert time.monotonic() - started < 2.0  # the question's timeout is 20 s
        await bob.close()
    finally:
        await seat.close()


async def test_a_decider_dropped_on_the_other_server_is_asked_again_when_back(patient_pair):
    """The reconnect grace applies to a connection on another process as to a local one,
    and the question follows the user to the new connection, whichever server it is on."""
    one, two = patient_pair
    seat = await seat_table(one)
    try:
        bob = await seat.join("bob", _never)  # on server one
        seat.server = two
        gm = await seat.join("gm")
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        [asked] = await bob.wait_for("decision")
        started = time.monotonic()
        await bob.close()  # python-socketio's client: reads as a dropped connection
        await asyncio.sleep(0.6)
        assert not pending.done()  # within the grace, waiting for bob
        seat.server = one
        back = await seat.join("bob", answer("none"))  # back on server one
        [again] = await back.wait_for("decision")
        assert again["key"] == asked["key"] and again["timeout"] < asked["timeout"]
        ack = await pending
        assert ack["ok"] is True, ack
        assert ack["attack"]["decisions"][0]["how"] == "answered"
        assert ack["attack"]["decisions"][0]["answer"] == {"option": "none"}
        assert time.monotonic() - started < 5.0
    finally:
        await seat.close()


async def test_a_decider_dropped_on_the_other_server_for_good_gets_the_default_after_the_grace(patient_pair):
    one, two = patient_pair
    seat = await seat_table(one)
    try:
        bob = await seat.join("bob", _never)
        seat.server = two
        gm = await seat.join("gm")
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        await bob.wait_for("decision")
        started = time.monotonic()
        await bob.close()
        ack = await pending
        took = time.monotonic() - started
        assert ack["attack"]["decisions"][0]["how"] == "disconnect"
        assert 3.0 <= took < 6.0, took  # the 3 s grace, not the 20 s timeout
    finally:
        await seat.close()


async def test_a_question_asked_by_the_other_server_is_pending_and_named_everywhere(patient_pair):
    """The table's view of what it waits for is the same on every process: a question
    from an attack resolving on server two, put to bob on server one, is in bob's
    table.sync there, and decision.asked names bob on both servers."""
    one, two = patient_pair
    seat = await seat_table(one)
    try:
        bob = await seat.join("bob", _never)  # the decider, on server one
        carol = await seat.join("carol")  # a watcher on server one
        seat.server = two
        gm = await seat.join("gm")  # the attack resolves on server two
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        [asked] = await bob.wait_for("decision")
        [seen_one] = await carol.wait_for("decision.asked")
        [seen_two] = await gm.wait_for("decision.asked")
        assert seen_one["users"] == seen_two["users"] == ["bob"]
        assert seen_one["key"] == "defense" and seen_one["token"] == "b"
        sync = await bob.ok("table.sync", {"since": 0})
        [waiting] = sync["pending"]
        assert waiting["key"] == "defense" and waiting["attack"]["id"] == asked["attack"]["id"]
        assert waiting["options"] == asked["options"] and waiting["waiting"] == ["bob"]
        assert 15 < waiting["remaining"] <= 20  # the question's 20 s timeout
        # Nobody else is asked: carol on server one and the GM on server two see nothing pending.
        assert (await carol.ok("table.sync", {"since": 0}))["pending"] == []
        assert (await gm.ok("table.sync", {"since": 0}))["pending"] == []
        # bob, also connected to server two, sees the same question there.
        again = await seat.join("bob", _never)
        assert [p["key"] for p in (await again.ok("table.sync", {"since": 0}))["pending"]] == ["defense"]
        await bob.sio._send_packet(packet.Packet(packet.DISCONNECT, namespace="/"))  # a goodbye
        await again.close()
        ack = await pending
        assert ack["attack"]["decisions"][0]["how"] == "disconnect"
        await carol.wait_for("decision.settled")
        assert (await carol.ok("table.sync", {"since": 0}))["pending"] == []
        seat.server = one
        bob_back = await seat.join("bob")
        assert (await bob_back.ok("table.sync", {"since": 0}))["pending"] == []
        await bob.close()
    finally:
        await seat.close()


async def test_the_gm_takes_the_default_of_a_question_another_server_asks(patient_pair):
    one, two = patient_pair
    seat = await seat_table(one)
    try:
        referee = await seat.join("gm")  # the GM's page, on server one
        seat.server = two
        bob = await seat.join("bob", _never)  # the decider, on server two
        gm = await seat.join("gm")  # the attack resolves on server two
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        [asked] = await bob.wait_for("decision")
        started = time.monotonic()
        ref = {"attack": asked["attack"]["id"], "key": "defense"}
        assert await referee.ok("decision.default", ref) == {"ok": True, **ref, "how": "default"}
        ack = await pending
        assert ack["attack"]["decisions"][0]["how"] == "default"
        assert time.monotonic() - started < 2.0  # the question's timeout is 20 s
        [closed] = await bob.wait_for("decision.closed")
        assert closed["how"] == "default"
        [settled] = await referee.wait_for("decision.settled")
        assert settled == {**ref, "how": "default"}
        # Once settled, no process knows the question.
        again = await referee.call("decision.default", ref)
        assert again["ok"] is False and again["error"]["code"] == "not_found", again
    finally:
        await seat.close()


async def _health(server):
    import aiohttp

    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server.url}/healthz") as response:
            return response.status, await response.json()


async def test_healthz_says_so_when_the_redis_store_was_wiped_under_the_server(tmp_path, redis_url):
    async with _servers(tmp_path, redis_url) as (one, _two):
        status, body = await _health(one)
        assert status == 200 and body["ok"] is True
        # What a Redis restarted without persistence looks like: every key gone.
        for key in await one.store.link.call("KEYS", f"{one.store.prefix}*"):
            await one.store.link.call("DEL", key)
        status, body = await _health(one)
        assert status == 503 and body["ok"] is False
        assert "wiped" in body["error"] and "epoch key is missing" in body["error"]


async def test_a_server_with_other_packs_is_refused_by_a_deployment_running(tmp_path, redis_url):
    from vtt_bridge.errors import Conflict

    prefix = f"srv{next(_prefixes)}:"
    one = BridgeServer(config(tmp_path / "one", redis=redis_url, redis_prefix=prefix))
    other = BridgeServer(config(tmp_path / "two", redis=redis_url, redis_prefix=prefix, entry_points=True))
    await one.start()
    try:
        with pytest.raises(Conflict, match="packs differ") as refused:
            await other.start()
        assert "only here" in refused.value.message  # the built-in packs the first one lacks
    finally:
        if other.store is not None:
            await other.store.close()
        await one.stop()


@pytest.mark.slow
async def test_a_redis_outage_mid_play_answers_store_unavailable_and_logs_one_line_each_way(tmp_path, caplog):
    import logging

    from ..state.redis_server import redis_process

    caplog.set_level(logging.INFO)
    with redis_process("--appendonly", "yes", "--appendfsync", "always") as redis:
        async with _servers(tmp_path, redis.url) as (one, _two):
            seat = await seat_table(one)
            try:
                gm = await seat.join("gm")
                request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6],
                           "answers": {"defense": "none"}}
                await gm.ok("attack", {**request, "request_id": "before"})
                redis.stop()
                codes = []
                for n in range(5):
                    ack = await gm.call("attack", {**request, "request_id": f"during{n}"}, timeout=10)
                    codes.append(ack["error"]["code"])
                    assert ack["error"]["details"]["retry_after"] > 0
                assert codes == ["store_unavailable"] * 5  # not internal: a retryable outage
                redis.start()  # with its data (AOF)
                async with asyncio.timeout(10):
                    while not (ack := await gm.call("attack", {**request, "request_id": "after"}, timeout=10))["ok"]:
                        assert ack["error"]["code"] == "store_unavailable"
                        await asyncio.sleep(0.2)
                text = [r.getMessage() for r in caplog.records]
                starts = [t for t in text if t.startswith("Redis unavailable (commands)")]
                ends = [t for t in text if t.startswith("Redis is back (commands)")]
                # one line each way per server process that noticed (two processes, one Redis)
                assert 1 <= len(starts) <= 2 and len(ends) == len(starts), text
                assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]
            finally:
                await seat.close()


async def test_the_gm_sets_a_table_s_audit_keep_and_older_attacks_go(pair):
    one, _two = pair
    seat = await seat_table(one)
    try:
        gm = await seat.join("gm")
        await gm.ok("table.update", {"audit_keep": 2})
        bad = await gm.call("table.update", {"audit_keep": -1})
        assert bad["error"]["code"] == "invalid_request" and "audit_keep" in bad["error"]["details"]
        request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}}
        ids = [(await gm.ok("attack", request))["attack"]["id"] for _ in range(4)]
        history = (await gm.ok("attack.history", {"limit": 10}))["attacks"]
        assert [a["id"] for a in history] == ids[:1:-1]  # the two newest, newest first
    finally:
        await seat.close()
