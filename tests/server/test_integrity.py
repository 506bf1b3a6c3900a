"""All of an attack or none of it: plugin faults, invalid results and failed commits."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from vtt_bridge import hookimpl
from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from . import duel_plugin
from .conftest import config
from .kit import answer, seat_table


class BrokenCounter:
    """A pack with a bug in the last step."""

    @hookimpl
    def duel_counter(self, ctx):
        raise ZeroDivisionError("oops")


class Vandal:
    """A pack that leaves the defender's stats invalid for the ruleset's schema."""

    @hookimpl
    def duel_counter(self, ctx):
        ctx.update(ctx.defender.id, hp="lots")


@pytest.fixture
async def broken(tmp_path, request):
    pack = request.param()
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), pack))) as running:
        seat = await seat_table(running)
        yield seat
        await seat.close()


@pytest.mark.parametrize("broken", [BrokenCounter], indirect=True)
async def test_a_plugin_fault_applies_nothing_and_names_the_plugin(broken):
    seat = broken
    await seat.join("bob", answer("none"))
    carol = await seat.join("carol")
    gm = await seat.join("gm")
    before = await seat.state()
    ack = await gm.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]})
    assert ack["ok"] is False
    error = ack["error"]
    assert error["code"] == "plugin_error"
    assert error["details"]["hook"] == "duel_counter" and error["details"]["step"] == "counter"
    assert error["details"]["plugin"] == "BrokenCounter"
    assert await seat.state() == before
    # Watchers saw steps before the question; they are told the attack failed.
    [failed] = await carol.wait_for("attack.failed")
    assert failed["error"]["code"] == "plugin_error"
    assert failed["id"] == carol.named("attack.step")[0]["attack"]
    assert carol.named("attack.resolved") == [] and carol.named("token.updated") == []
    assert (await gm.call("echo", 1))["ok"] is True
    # The table's broadcasts go on (the failed attack's hold on its last phase is over).
    await gm.ok("token.update", {"id": "a", "name": "Alice again"})
    [updated] = await carol.wait_for("token.updated")
    assert updated["token"]["name"] == "Alice again"


@pytest.mark.parametrize("broken", [Vandal], indirect=True)
async def test_a_result_the_rulesets_schema_refuses_is_not_committed(broken):
    seat = broken
    gm = await seat.join("gm")
    before = await seat.state()
    ack = await gm.call(
        "attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}}
    )
    assert ack["error"]["code"] == "plugin_error"
    assert ack["error"]["details"]["token"] == "b"
    assert ack["error"]["details"]["errors"] == {"token": {"hp": ["Not a valid integer."]}}
    assert await seat.state() == before


async def test_a_commit_that_fails_part_way_leaves_every_token_as_it_was(server, seat):
    """b is written first, then c turns out to have changed: b must be rolled back too."""
    release = asyncio.Event()

    async def later(decision):
        await release.wait()
        return "none"

    await seat.join("bob", later)
    gm = await seat.join("gm")
    pending = asyncio.ensure_future(
        gm.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b", "c"], "dice": [5, 6]}, timeout=10)
    )
    while not seat.clients[0].decisions:
        await asyncio.sleep(0.01)
    # Someone changes c behind the server's back (another process, say).
    other = sqlite3.connect(server.config.db, isolation_level=None)
    other.execute("UPDATE tokens SET version = version + 1 WHERE table_id = ? AND id = 'c'", (seat.id,))
    other.close()
    before = await seat.state()
    release.set()
    ack = await pending
    assert ack["ok"] is False and ack["error"]["code"] == "conflict"
    assert ack["error"]["details"]["token"] == "c"
    assert await seat.state() == before


async def test_the_audit_log_replays_to_the_tokens_after_a_busy_session(seat):
    gm = await seat.join("gm")
    alice = await seat.join("alice")
    await seat.join("bob", answer("none"))
    await gm.ok("token.create", {"id": "d", "name": "Dog", "ruleset": "duel", "system": {"hp": 3}})
    attacks = []
    for n in range(6):
        attacks.append((await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"])
        await gm.ok("attack", {"ruleset": "duel", "attacker": "d", "targets": ["c"], "seed": n})
    await gm.ok("attack.undo", {"id": attacks[-1]["id"]})
    await alice.ok("token.update", {"id": "a", "system": {"rerolls": 1}})
    await gm.ok("token.delete", {"id": "d"})
    assert replay(await seat.audit()) == await seat.tokens()


async def test_the_audit_log_refuses_to_be_rewritten(server, seat):
    db = sqlite3.connect(server.config.db, isolation_level=None)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("UPDATE audit SET user = 'mallory'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("DELETE FROM audit")
    finally:
        db.close()
