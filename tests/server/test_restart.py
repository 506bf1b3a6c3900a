"""A stopped and restarted server has everything it acknowledged."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil

import pytest
import socketio

from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from .conftest import config
from .kit import Client, answer, seat_table
from .test_node import NODE_DIR, _npm_install


async def test_stop_and_restart_keeps_tables_keys_tokens_history_and_idempotency(tmp_path):
    settings = config(tmp_path)
    async with BridgeServer(settings) as first:
        seat = await seat_table(first)
        await seat.join("bob", answer("none"))
        alice = await seat.join("alice")
        attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "request_id": "r1"}))[
            "attack"
        ]
        gm = await seat.join("gm")
        dave_key = (await gm.ok("key.create", {"user": "dave"}))["key"]
        await gm.ok("token.update", {"id": "c", "name": "Renamed", "system": {"hp": 4}})
        await gm.ok("token.delete", {"id": "c"})
        await gm.ok("token.create", {"id": "e", "name": "Extra", "ruleset": "duel", "system": {"hp": 2}})
        await gm.ok("table.update", {"decision_timeout": 2.5})
        tokens = (await gm.ok("token.list"))["tokens"]
        history = (await gm.ok("attack.history"))["attacks"]
        await seat.close()

    async with BridgeServer(settings) as second:
        gm = await Client(second.url).connect({"table": seat.id, "key": seat.keys["gm"]})
        dave = await Client(second.url).connect({"table": seat.id, "key": dave_key})
        alice = await Client(second.url).connect({"table": seat.id, "key": seat.keys["alice"]})
        try:
            assert (await gm.ok("token.list"))["tokens"] == tokens
            assert (await gm.ok("attack.history"))["attacks"] == history
            assert (await gm.ok("attack.get", {"id": attack["id"]}))["attack"] == attack
            assert (await gm.ok("table.get"))["table"]["settings"]["decision_timeout"] == 2.5
            assert (await dave.ok("table.get"))["user"] == "dave"
            retry = await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "request_id": "r1"})
            assert retry["retried"] is True and retry["attack"] == attack
            audit = await second.store.audit(seat.id)
            assert replay(audit) == {t["id"]: t for t in tokens}
        finally:
            for client in (gm, dave, alice):
                await client.close()


async def test_stopping_during_a_prompt_commits_nothing(tmp_path):
    settings = config(tmp_path, decision_timeout=60, shutdown_grace=0.2)
    server = BridgeServer(settings)
    await server.start()
    seat = await seat_table(server)

    async def never(decision):
        await asyncio.Event().wait()

    bob = await seat.join("bob", never)
    alice = await seat.join("alice")
    pending = asyncio.ensure_future(
        alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}, timeout=10)
    )
    while not bob.decisions:
        await asyncio.sleep(0.01)
    before = await seat.state()
    await server.stop()
    assert server.bridge.attacks.running == set()
    pending.cancel()
    await seat.close()
    async with BridgeServer(settings) as again:
        assert {t: v.to_dict() for t, v in (await again.store.tokens(seat.id)).items()} == before[0]
        assert len(await again.store.audit(seat.id)) == before[1]


async def test_an_attack_cut_short_by_a_stop_says_so_and_its_resend_resolves_once(tmp_path):
    """Issue 14: the attack a stop cuts short fails with the retryable ``server_stopping``
    (to its requester and to the table that saw its steps), not ``internal``; the
    requester's resend with the same request_id after the restart applies it once."""
    settings = config(tmp_path, decision_timeout=60, shutdown_grace=0.2)
    server = BridgeServer(settings)
    await server.start()
    seat = await seat_table(server)

    async def never(decision):
        await asyncio.Event().wait()

    await seat.join("bob", never)
    carol = await seat.join("carol")
    alice = await seat.join("alice")
    request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "request_id": "r-stop"}
    pending = asyncio.ensure_future(alice.call("attack", request, timeout=10))
    await carol.wait_for("decision.asked")
    before = await seat.state()
    await server.stop()
    ack = await pending
    assert ack["ok"] is False and ack["error"]["code"] == "server_stopping", ack
    assert ack["error"]["message"].endswith("Send it again once reconnected: it is applied once")
    assert "request_id" not in ack["error"]["message"]  # players read it
    [failed] = carol.named("attack.failed")
    assert failed["error"]["code"] == "server_stopping" and failed["request_id"] == "r-stop"
    assert failed["id"] == carol.named("decision.asked")[0]["attack"]
    await seat.close()
    async with BridgeServer(settings) as again:
        assert await seat_state(again, seat.id) == before
        bob = await Client(again.url, answer("none")).connect(seat.auth("bob"))
        alice = await Client(again.url).connect(seat.auth("alice"))
        try:
            first = await alice.call("attack", request, timeout=10)
            assert first["ok"] is True and first["retried"] is False, first
            second = await alice.ok("attack", request)
            assert second["retried"] is True and second["attack"] == first["attack"]
            audit = await again.store.audit(seat.id)
            assert [e.request_id for e in audit[before[1]:]] == ["r-stop"]
        finally:
            await alice.close()
            await bob.close()


async def seat_state(server: BridgeServer, table: str) -> tuple[dict, int]:
    tokens = {tid: t.to_dict() for tid, t in (await server.store.tokens(table)).items()}
    return tokens, len(await server.store.audit(table))


async def _restarted(settings, port: int) -> BridgeServer:
    """The same store, served again on the same port (as after `vtt-bridge serve` is run again)."""
    again = BridgeServer(dataclasses.replace(settings, port=port))
    await again.start()
    return again


@pytest.mark.parametrize("transport", ["websocket", "polling"])
async def test_clients_reconnect_by_themselves_after_a_restart(tmp_path, transport):
    """No app code: python-socketio's own reconnection brings the client back to the restarted server."""
    settings = config(tmp_path)
    first = BridgeServer(settings)
    await first.start()
    seat = await seat_table(first)
    client = socketio.AsyncClient(reconnection=True, reconnection_delay=0.1, reconnection_delay_max=0.5)
    reasons: list[str] = []
    connects = asyncio.Queue()
    client.on("connect", lambda: connects.put_nowait("connect"))
    client.on("disconnect", lambda reason=None: reasons.append(str(reason)))
    second = None
    try:
        await client.connect(first.url, auth=seat.auth("alice"), transports=[transport], wait_timeout=5)
        await asyncio.wait_for(connects.get(), 5)
        port = first.port
        await first.stop()
        async with asyncio.timeout(5):
            while not reasons:
                await asyncio.sleep(0.02)
        # Not "io server disconnect", which socket.io clients treat as final.
        assert reasons == ["transport error"]
        second = await _restarted(settings, port)
        await asyncio.wait_for(connects.get(), 10)
        ack = await client.call("table.get", timeout=5)
        assert ack["ok"] is True and ack["user"] == "alice"
    finally:
        # The server first: python-engineio's polling client, told to disconnect,
        # waits for its pending long-poll, which a stopping server answers at once.
        if second is not None:
            await second.stop()
        await first.stop()
        await client.shutdown()


class NodeScript:
    """A script of tests/node run with node, read one JSON line at a time (bounded waits)."""

    def __init__(self, script: str, *args: str) -> None:
        self.argv = ("node", script, *args)
        self.proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> NodeScript:
        if shutil.which("node") is None or shutil.which("npm") is None:
            pytest.skip("node and npm are needed for the JavaScript interop test")
        await _npm_install()
        self.proc = await asyncio.create_subprocess_exec(*self.argv, cwd=NODE_DIR, stdout=asyncio.subprocess.PIPE)
        return self

    async def line(self) -> dict:
        return json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 15))

    async def exit_code(self) -> int:
        return await asyncio.wait_for(self.proc.wait(), 10)

    async def __aexit__(self, *exc: object) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


@pytest.mark.slow
async def test_node_socket_io_client_reconnects_by_itself_after_a_restart(tmp_path):
    """The official JavaScript client (long-polling, then websocket, as a browser) comes back on its own."""
    settings = config(tmp_path)
    first = BridgeServer(settings)
    await first.start()
    seat = await seat_table(first)
    second = None
    try:
        async with NodeScript("reconnect.mjs", first.url, seat.id, seat.keys["bob"]) as node:
            assert await node.line() == {"event": "connect", "user": "bob"}
            await asyncio.sleep(0.5)  # let it upgrade to websocket, as a browser tab would have
            port = first.port
            await first.stop()
            gone = await node.line()
            # "io server disconnect" would be final: the client would never come back.
            assert gone["event"] == "disconnect" and gone["reason"] in ("transport close", "transport error")
            second = await _restarted(settings, port)
            assert await node.line() == {"event": "connect", "user": "bob"}
            assert await node.exit_code() == 0
    finally:
        if second is not None:
            await second.stop()
        await first.stop()


async def test_a_question_waits_for_a_player_whose_connection_dropped(tmp_path):
    """A dropped connection (not a goodbye) mid-question: the question is put again when the player is back."""
    server = BridgeServer(config(tmp_path, reconnect_grace=10.0))
    await server.start()
    seat = await seat_table(server, settings={"decision_timeout": 20})
    bob = socketio.AsyncClient(reconnection=True, reconnection_delay=0.1, reconnection_delay_max=0.3)
    asked: list[dict] = []
    release = asyncio.Event()

    async def decide(decision):
        asked.append(decision)
        if len(asked) == 1:
            # The network goes: the websocket closes under the client, which says no goodbye.
            asyncio.get_running_loop().create_task(bob.eio.ws.close())
            await asyncio.Event().wait()
        await release.wait()
        return "none"

    bob.on("decision", decide)
    try:
        await bob.connect(server.url, auth=seat.auth("bob"), transports=["websocket"], wait_timeout=5)
        alice = await seat.join("alice")
        pending = asyncio.ensure_future(alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))
        async with asyncio.timeout(10):
            while len(asked) < 2:
                await asyncio.sleep(0.02)
        # Back on a new connection, bob is asked again, with the time that is left.
        assert asked[1]["key"] == "defense" and asked[1]["timeout"] < 20
        synced = await bob.call("table.sync", {}, timeout=5)
        assert [(q["key"], q["waiting"]) for q in synced["pending"]] == [("defense", ["bob"])]
        release.set()
        attack = (await asyncio.wait_for(pending, 10))["attack"]
        assert attack["decisions"][0]["how"] == "answered" and attack["decisions"][0]["answer"] == {"option": "none"}
    finally:
        release.set()
        await bob.shutdown()
        await seat.close()
        await server.stop()


async def test_a_dropped_player_who_does_not_come_back_gets_the_default_after_the_grace(server):
    server.bridge.attacks.prompter.reconnect_grace = 0.3
    seat = await seat_table(server, settings={"decision_timeout": 20})
    bob = await seat.join("bob")

    async def vanish(decision):
        asyncio.get_running_loop().create_task(bob.sio.eio.ws.close())  # no goodbye, and no reconnection
        await asyncio.Event().wait()

    bob.policy = vanish
    alice = await seat.join("alice")
    try:
        async with asyncio.timeout(5):
            attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
        assert attack["decisions"][0]["how"] == "disconnect"
    finally:
        await seat.close()


@pytest.mark.slow
async def test_node_client_is_asked_again_after_its_connection_drops(tmp_path):
    """socket.io-client (as in a browser tab whose wifi blinks) gets the question again and answers it."""
    async with BridgeServer(config(tmp_path, reconnect_grace=10.0)) as server:
        seat = await seat_table(server, settings={"decision_timeout": 20})
        try:
            async with NodeScript("redecide.mjs", server.url, seat.id, seat.keys["bob"]) as node:
                assert await node.line() == {"event": "connect"}
                alice = await seat.join("alice")
                attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
                seen = [await node.line() for _ in range(4)]
                assert [s["event"] for s in seen] == ["decision", "disconnect", "connect", "decision"]
                # The engine closed under the client ("forced close"): no goodbye, so it reconnects.
                assert not seen[1]["reason"].startswith("io ") and seen[3]["timeout"] < seen[0]["timeout"] == 20
                decision = attack["decisions"][0]
                assert decision["how"] == "answered" and decision["answer"] == {"option": "none"}
                assert await node.exit_code() == 0
        finally:
            await seat.close()


async def test_after_a_restart_the_defender_gets_the_grace_before_their_question_defaults(tmp_path):
    """Issue 28: alice's page re-sends her attack as soon as it is back, before bob's page
    is; bob (connected before the restart) is still asked, not defaulted by "disconnect"."""
    settings = config(tmp_path, decision_timeout=20, reconnect_grace=5.0)
    async with BridgeServer(settings) as first:
        seat = await seat_table(first)
        await seat.join("bob", answer("none"))
        await seat.join("alice")
        await seat.close()
    async with BridgeServer(settings) as again:
        gm = await Client(again.url).connect(seat.auth("gm"))
        alice = await Client(again.url).connect(seat.auth("alice"))
        bob = Client(again.url, answer("none"))
        try:
            pending = asyncio.ensure_future(
                alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "request_id": "r-late"})
            )
            [asked] = await gm.wait_for("decision.asked")
            # The table sees whom it waits for: bob, though he is not back yet (not the GM).
            assert asked["key"] == "defense" and asked["users"] == ["bob"]
            await asyncio.sleep(0.3)  # bob's tab reconnects 300 ms after alice's attack arrived
            assert not pending.done()
            await bob.connect(seat.auth("bob"))
            attack = (await asyncio.wait_for(pending, 10))["attack"]
            assert [d["key"] for d in bob.decisions] == ["defense"]
            assert attack["decisions"][0]["how"] == "answered" and attack["decisions"][0]["answer"] == {"option": "none"}
        finally:
            for client in (gm, alice, bob):
                await client.close()


async def test_long_after_a_restart_an_absent_player_defaults_at_once(tmp_path):
    """The wait is for players coming back from a restart, not for ever: once the grace since
    the server started is over, nobody to ask means the rules' default, as before."""
    settings = config(tmp_path, decision_timeout=20, reconnect_grace=0.3)
    async with BridgeServer(settings) as server:
        seat = await seat_table(server)
        alice = await seat.join("alice")
        await asyncio.sleep(0.4)
        try:
            async with asyncio.timeout(2):
                attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
            assert attack["decisions"][0]["how"] == "disconnect"
        finally:
            await seat.close()
