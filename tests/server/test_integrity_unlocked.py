"""Issue 14, item 11: a token the attack changes but does not lock (neither attacker nor
target — a warbeast taking transferred damage) edited while a question is out."""

from __future__ import annotations

import asyncio

import pytest

from vtt_bridge import hookimpl
from vtt_bridge.errors import Conflict
from vtt_bridge.server import BridgeServer
from vtt_bridge.server.attacks import rebase

from . import duel_plugin
from .conftest import config
from .kit import seat_table


class SharedPain:
    """A test pack: every wound dealt to ``b`` also costs its bonded token ``c`` 1 hp."""

    @hookimpl
    def duel_wound(self, ctx):
        if ctx.item == "b":
            ctx.update("c", hp=ctx.current("c")["hp"] - 1)


@pytest.fixture
async def bonded(tmp_path):
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), SharedPain()), decision_timeout=5)) as server:
        seat = await seat_table(server)
        yield seat
        await seat.close()


async def test_an_edit_to_a_bonded_token_during_a_question_keeps_both_changes(bonded):
    seat = bonded
    gm = await seat.join("gm")
    asked = asyncio.Event()
    go = asyncio.Event()

    async def slow_take_it(decision):
        asked.set()
        await go.wait()
        return "none"

    await seat.join("bob", slow_take_it)
    attack = asyncio.ensure_future(gm.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}, timeout=10))
    await asyncio.wait_for(asked.wait(), 5)
    # The GM heals the bonded token and renames it while bob thinks.
    edited = await gm.ok("token.update", {"id": "c", "name": "Warbeast", "system": {"hp": 8}})
    assert edited["token"]["version"] == 2
    go.set()
    ack = await attack
    assert ack["ok"] is True, ack
    record = ack["attack"]
    after = record["tokens"]["c"]["after"]
    # the edit stands (name, hp 8) and the attack's 1 transferred damage comes on top
    assert (after["name"], after["system"]["hp"], after["version"]) == ("Warbeast", 7, 3)
    assert record["tokens"]["c"]["before"]["version"] == 2
    stored = (await seat.tokens())["c"]
    assert (stored["name"], stored["system"]["hp"], stored["version"]) == ("Warbeast", 7, 3)
    # the audit log still replays to the stored tokens
    from vtt_bridge.state import replay

    assert replay(await seat.audit()) == await seat.tokens()


async def test_a_bonded_token_deleted_meanwhile_is_a_conflict_and_nothing_is_applied(bonded):
    seat = bonded
    gm = await seat.join("gm")
    asked, go = asyncio.Event(), asyncio.Event()

    async def slow(decision):
        asked.set()
        await go.wait()
        return "none"

    await seat.join("bob", slow)
    attack = asyncio.ensure_future(gm.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}, timeout=10))
    await asyncio.wait_for(asked.wait(), 5)
    await gm.ok("token.delete", {"id": "c"})
    before = await seat.state()
    go.set()
    ack = await attack
    assert ack["ok"] is False and ack["error"]["code"] == "conflict" and ack["error"]["details"]["token"] == "c"
    assert await seat.state() == before


def test_rebase_rules():
    base = {"hp": 10, "fury": 2, "state": "ok", "boxes": {"spirit": 3, "mind": 2}}
    ours = {"hp": 7, "fury": 2, "state": "disabled", "boxes": {"spirit": 1, "mind": 2}}
    theirs = {"hp": 12, "fury": 0, "state": "ok", "boxes": {"spirit": 3, "mind": 5}}
    assert rebase(base, ours, theirs) == {"hp": 9, "fury": 0, "state": "disabled", "boxes": {"spirit": 1, "mind": 5}}
    with pytest.raises(Conflict) as err:
        rebase({"state": "ok"}, {"state": "disabled"}, {"state": "fled"})
    assert err.value.details == {"field": "state"}
