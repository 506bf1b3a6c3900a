"""Limits over a real connection (issue 14: items 8, 9 and "Limits").

Rate limits and the payload limit answer with a clear code; ``attack.odds`` is
bounded per user and in time and stops when its requester leaves; history is
bounded in every store.
"""

from __future__ import annotations

import asyncio

import pytest

from vtt_bridge.server import BridgeServer

from ..state.redis_server import redis_server
from .conftest import config
from .kit import StalledClient, seat_table

ODDS = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "method": "monte_carlo", "samples": 20_000}


async def test_a_connection_past_its_rate_limit_is_told_when_to_retry(tmp_path):
    async with BridgeServer(config(tmp_path, rate_limit=5, rate_burst=5)) as server:
        seat = await seat_table(server)
        try:
            alice = await seat.join("alice")
            bob = await seat.join("bob")
            acks = [await alice.call("echo", n) for n in range(6)]
            assert [a["ok"] for a in acks] == [True] * 5 + [False]
            error = acks[-1]["error"]
            assert error["code"] == "rate_limited"
            assert 0 < error["details"]["retry_after"] <= 0.2
            assert (error["details"]["rate"], error["details"]["burst"]) == (5, 5)
            # the others are not slowed, and the connection stays open
            assert (await bob.call("echo", 1))["ok"] is True
            await asyncio.sleep(error["details"]["retry_after"] + 0.01)
            assert (await alice.call("echo", 7)) == {"ok": True, "data": 7}
        finally:
            await seat.close()


async def test_a_flood_of_answers_is_rate_limited_and_the_awaited_answer_still_counts(tmp_path):
    """Answers to decisions (socket.io acknowledgements) spend from the connection's rate
    limit like events; answers to nothing are dropped, and the client is told once."""
    from socketio import packet

    async with BridgeServer(config(tmp_path, rate_limit=5, rate_burst=5, decision_timeout=10)) as server:
        seat = await seat_table(server)
        release = asyncio.Event()

        async def later(decision):
            await release.wait()
            return "none"

        try:
            bob = await seat.join("bob", later)
            alice = await seat.join("alice")
            pending = asyncio.ensure_future(
                alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}, timeout=15)
            )
            await bob.wait_for("decision")
            # 50 answers to questions never asked (id 0 is python-socketio's own counter)
            for n in range(50):
                ack = packet.Packet(packet.ACK, namespace="/", data=[{"option": "block"}], id=n * 7)
                await bob.sio._send_packet(ack)
            [notice] = await bob.wait_for("rate_limited")
            assert notice["code"] == "rate_limited", notice
            assert 0 < notice["details"]["retry_after"] <= 0.2
            assert (notice["details"]["rate"], notice["details"]["burst"]) == (5, 5)
            # the same bucket holds bob's events back
            refused = await bob.call("echo", 1)
            assert refused["ok"] is False and refused["error"]["code"] == "rate_limited"
            # the answer the server waits for counts, past the limit
            release.set()
            done = await pending
            assert done["ok"] is True, done
            [decision] = done["attack"]["decisions"]
            assert decision["how"] == "answered" and decision["answer"] == {"option": "none"}
            assert len(bob.named("rate_limited")) == 1  # told once, not once per answer
            # and bob is asked again normally afterwards
            await asyncio.sleep(0.3)
            again = await alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}, timeout=15)
            assert again["attack"]["decisions"][0]["how"] == "answered", again
        finally:
            await seat.close()


async def test_a_packet_over_the_payload_limit_is_answered_and_changes_nothing(tmp_path):
    async with BridgeServer(config(tmp_path, max_payload=10_000)) as server:
        seat = await seat_table(server)
        try:
            gm = await seat.join("gm")
            before = await seat.state()
            ack = await gm.call("token.update", {"id": "a", "name": "x" * 12_000})
            assert ack["ok"] is False and ack["error"]["code"] == "payload_too_large", ack
            assert ack["error"]["details"]["limit"] == 10_000 and ack["error"]["details"]["size"] > 12_000
            assert await seat.state() == before
            assert (await gm.call("echo", "still here"))["ok"] is True
            # Past twice the limit the transport itself closes the socket; the server and the others carry on.
            bob = await seat.join("bob")
            with pytest.raises(Exception):
                await gm.call("echo", "y" * 30_000, timeout=2)
            assert (await bob.call("echo", 1))["ok"] is True
        finally:
            await seat.close()


async def test_odds_stop_at_the_time_budget_and_say_so(tmp_path):
    async with BridgeServer(config(tmp_path, odds_budget=0.05)) as server:
        seat = await seat_table(server)
        try:
            alice = await seat.join("alice")
            odds = (await alice.ok("attack.odds", ODDS))["odds"]
            assert 1 <= odds["samples"] < 20_000
            assert any("time budget" in note for note in odds["notes"]), odds["notes"]
        finally:
            await seat.close()


async def test_one_odds_request_per_user_at_a_time(tmp_path):
    async with BridgeServer(config(tmp_path, odds_budget=5)) as server:
        seat = await seat_table(server)
        try:
            alice = await seat.join("alice")
            alice2 = await seat.join("alice")
            gm = await seat.join("gm")
            first = asyncio.ensure_future(alice.call("attack.odds", ODDS, timeout=30))
            await asyncio.sleep(0.05)
            second = await alice2.call("attack.odds", {**ODDS, "samples": 100})
            assert second["ok"] is False and second["error"]["code"] == "rate_limited", second
            assert second["error"]["details"]["limit"] == "odds_per_user"
            # another user is not refused (it waits its turn for the odds worker)
            assert (await gm.call("attack.odds", {**ODDS, "samples": 100}, timeout=30))["ok"] is True
            assert (await first)["ok"] is True
            assert (await alice2.call("attack.odds", {**ODDS, "samples": 100}))["ok"] is True
        finally:
            await seat.close()


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


@pytest.mark.parametrize("store", ["sqlite", "redis"])
async def test_history_with_a_huge_before_answers_at_once(tmp_path, request, store):
    extra = {"redis": request.getfixturevalue("redis_url"), "redis_prefix": "hist:"} if store == "redis" else {}
    async with BridgeServer(config(tmp_path, **extra)) as server:
        seat = await seat_table(server)
        try:
            gm = await seat.join("gm")
            for n in range(3):
                await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6],
                                       "answers": {"defense": "none"}})
            for before in (2**53 - 1, 10**12, None):
                payload = {"limit": 2} if before is None else {"limit": 2, "before": before}
                page = await gm.ok("attack.history", payload)
                assert len(page["attacks"]) == 2 and page["next"] is not None
                rest = await gm.ok("attack.history", {"before": page["next"]})
                assert len(rest["attacks"]) == 1 and rest["next"] is None
            bad = await gm.call("attack.history", {"before": 2**53})
            assert bad["error"]["code"] == "invalid_request" and "before" in bad["error"]["details"]
        finally:
            await seat.close()


async def test_a_client_that_stops_reading_is_dropped_and_its_buffer_freed(tmp_path):
    async with BridgeServer(config(tmp_path, max_outgoing=100_000, rate_limit=0)) as server:
        seat = await seat_table(server)
        stalled = await StalledClient().connect(server.port, seat.auth("carol"))
        try:
            gm = await seat.join("gm")
            watcher = await seat.join("bob")
            sio = server._sio
            assert len(server.bridge.callers) == 3
            # A slow network: the server's kernel buffer for this client is small, so the
            # backlog builds up in the server's own queue after a few kilobytes.
            import socket

            (sid,) = [s for s, c in server.bridge.callers.items() if c.user == "carol"]
            request = sio.environ[sio.manager.eio_sid_from_sid(sid, "/")]["aiohttp.request"]
            request.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            attack = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "answers": {"defense": "none"}}
            sent = 0
            # Bounded: at most 1,000 attacks or 60 s, whichever comes first.
            async with asyncio.timeout(60):
                while sio.dropped == 0 and sent < 1000:
                    await asyncio.gather(*(gm.ok("attack", attack) for _ in range(20)))
                    sent += 20
            assert sio.dropped == 1, f"not dropped after {sent} attacks"
            assert "carol" not in (await gm.ok("table.get"))["users"]
            # nothing waits in any queue for the dropped client; the others keep up and stay connected
            queued = {sid: s.queue.qsize() for sid, s in sio.eio.sockets.items()}
            assert all(n < 100 for n in queued.values()), queued
            await watcher.ok("echo", 1)
            await watcher.wait_for("attack.resolved", sent, timeout=30)
        finally:
            stalled.close()
            await seat.close()
