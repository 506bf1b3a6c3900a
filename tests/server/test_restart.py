"""A stopped and restarted server has everything it acknowledged."""

from __future__ import annotations

import asyncio

from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from .conftest import config
from .kit import Client, answer, seat_table


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
