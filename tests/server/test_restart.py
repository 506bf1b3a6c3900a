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


@pytest.mark.slow
async def test_node_socket_io_client_reconnects_by_itself_after_a_restart(tmp_path):
    """The official JavaScript client (long-polling, then websocket, as a browser) comes back on its own."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the JavaScript interop test")
    await _npm_install()
    settings = config(tmp_path)
    first = BridgeServer(settings)
    await first.start()
    seat = await seat_table(first)
    second = None
    proc = await asyncio.create_subprocess_exec(
        "node", "reconnect.mjs", first.url, seat.id, seat.keys["bob"], cwd=NODE_DIR, stdout=asyncio.subprocess.PIPE
    )
    try:

        async def line() -> dict:
            return json.loads(await asyncio.wait_for(proc.stdout.readline(), 15))

        assert await line() == {"event": "connect", "user": "bob"}
        await asyncio.sleep(0.5)  # let it upgrade to websocket, as a browser tab would have
        port = first.port
        await first.stop()
        gone = await line()
        # "io server disconnect" would be final: the client would never come back.
        assert gone["event"] == "disconnect" and gone["reason"] in ("transport close", "transport error")
        second = await _restarted(settings, port)
        assert await line() == {"event": "connect", "user": "bob"}
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        if second is not None:
            await second.stop()
        await first.stop()
