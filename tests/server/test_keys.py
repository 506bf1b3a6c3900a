"""Keys (issue 14, item 5): replacing or revoking a key closes its connections with a reason;
keys never appear in logs."""

from __future__ import annotations

import asyncio
import logging

import pytest

from vtt_bridge.cli import main
from vtt_bridge.server import BridgeServer

from .conftest import config
from .kit import Client, seat_table


async def closed(client: Client, *, timeout: float = 5) -> dict:
    """Wait for the server to close ``client``; returns the ``session.closed`` it sent first."""
    (notice,) = await client.wait_for("session.closed", timeout=timeout)
    async with asyncio.timeout(timeout):
        while client.sio.connected:
            await asyncio.sleep(0.02)
    return notice


async def test_replacing_a_key_closes_the_connections_that_used_it(seat):
    gm = await seat.join("gm")
    alice = await seat.join("alice")
    alice2 = await seat.join("alice")
    bob = await seat.join("bob")
    ack = await gm.ok("key.create", {"user": "alice"})
    assert ack["closed"] == 2
    for client in (alice, alice2):
        notice = await closed(client)
        assert notice["code"] == "key_replaced" and "replaced" in notice["message"]
    # bob and the GM carry on; the new key opens the table, the old one does not
    await bob.ok("echo", 1)
    await gm.ok("echo", 1)
    fresh = await Client(seat.server.url).connect({"table": seat.id, "key": ack["key"]})
    assert (await fresh.ok("table.get"))["user"] == "alice"
    await fresh.close()
    assert await Client(seat.server.url).try_connect(seat.auth("alice")) is False
    # the broadcasts of the table no longer reach the closed connections
    assert "alice" not in (await gm.ok("table.get"))["users"]


async def test_revoking_a_key_closes_its_connections_and_refuses_it(seat):
    gm = await seat.join("gm")
    bob = await seat.join("bob")
    ack = await gm.ok("key.revoke", {"user": "bob"})
    assert ack == {"ok": True, "user": "bob", "revoked": True, "closed": 1}
    notice = await closed(bob)
    assert notice == {"code": "key_revoked", "message": "your key was revoked"}
    again = Client(seat.server.url)
    assert await again.try_connect(seat.auth("bob")) is False
    assert again.refused["data"]["code"] == "forbidden"
    # revoked twice: there is nothing left to revoke
    second = await gm.call("key.revoke", {"user": "bob"})
    assert second["error"]["code"] == "not_found"


async def test_a_player_may_not_revoke(seat):
    alice = await seat.join("alice")
    bob = await seat.join("bob")
    ack = await alice.call("key.revoke", {"user": "bob"})
    assert ack["error"]["code"] == "forbidden"
    await bob.ok("echo", 1)


async def test_the_cli_revokes_a_key_of_a_running_server(tmp_path):
    async with BridgeServer(config(tmp_path, key_check_interval=0.1)) as server:
        seat = await seat_table(server)
        try:
            carol = await seat.join("carol")
            alice = await seat.join("alice")
            db = server.config.db
            assert await asyncio.to_thread(main, ["table", "revoke", seat.id, "carol", "--db", db]) == 0
            assert (await closed(carol))["code"] == "key_revoked"
            # a key replaced through the CLI closes the old key's connection too
            assert await asyncio.to_thread(main, ["table", "key", seat.id, "alice", "--db", db]) == 0
            assert (await closed(alice))["code"] == "key_replaced"
            assert await asyncio.to_thread(main, ["table", "revoke", seat.id, "carol", "--db", db]) == 2
        finally:
            await seat.close()


async def test_keys_never_appear_in_the_logs(tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    async with BridgeServer(config(tmp_path, key_check_interval=0.1)) as server:
        seat = await seat_table(server)
        try:
            keys = list(seat.keys.values())
            gm = await seat.join("gm")
            await seat.join("alice")
            keys.append((await gm.ok("key.create", {"user": "dave"}))["key"])
            keys.append((await gm.ok("key.create", {"user": "alice"}))["key"])
            await gm.ok("key.revoke", {"user": "bob"})
            wrong = "x" * 43
            keys.append(wrong)
            for auth in ({"table": seat.id, "key": wrong}, {"table": seat.id, "key": seat.keys["bob"]}, {"key": wrong}):
                await Client(server.url).try_connect(auth)
            await asyncio.to_thread(main, ["table", "key", seat.id, "erin", "--db", server.config.db])
            printed = capsys.readouterr().out
            keys.append(printed.rsplit(": ", 1)[1].strip())
            await asyncio.sleep(0.3)
        finally:
            await seat.close()
    text = caplog.text + "".join(str(getattr(r, "fields", "")) for r in caplog.records)
    assert "connection refused" in text and "key revoked" in text  # the logs did record those events
    for key in keys:
        assert key not in text


def test_a_secret_named_log_field_is_redacted():
    from vtt_bridge.server.logs import fields

    assert fields(user="alice", key="s3cret", auth={"key": "s3cret"}) == {
        "fields": {"user": "alice", "key": "[redacted]", "auth": "[redacted]"}
    }


@pytest.mark.parametrize("argv", [["table", "revoke", "t-nope", "alice"]])
def test_the_cli_refuses_an_unknown_table(tmp_path, capsys, argv):
    assert main([*argv, "--db", str(tmp_path / "x.sqlite")]) == 2
    assert "[not_found]" in capsys.readouterr().err


async def test_a_key_replaced_through_another_process_closes_connections_here(tmp_path):
    """Two servers on one Redis: the key is replaced on one, the sweep on the other closes its connection."""
    from ..state.redis_server import redis_server

    with redis_server() as url:
        shared = {"redis": url, "redis_prefix": "keys:", "key_check_interval": 0.1}
        async with BridgeServer(config(tmp_path / "one", **shared)) as one, BridgeServer(
            config(tmp_path / "two", **shared)
        ) as two:
            seat = await seat_table(one)
            try:
                seat.server = two
                alice_on_two = await seat.join("alice")
                seat.server = one
                gm_on_one = await seat.join("gm")
                ack = await gm_on_one.ok("key.create", {"user": "alice"})
                assert ack["closed"] == 0  # alice is not connected to this process
                assert (await closed(alice_on_two))["code"] == "key_replaced"
            finally:
                await seat.close()
