"""Packs on a budget: a hook that never returns costs one attack, not the server.

The hooks run in resolver processes (``vtt_bridge/server/pool.py``). A
test pack loaded by module path (``tests.server.hang_plugin``) hangs in the
``duel`` roll step for attackers named ``spin…`` (a busy loop) or ``sleep…``.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from vtt_bridge.server import BridgeServer

from . import duel_plugin
from .conftest import config
from .kit import DUEL_TOKENS, seat_table

HANG = "tests.server.hang_plugin"
TOKENS = [
    *DUEL_TOKENS,
    {"id": "spin1", "name": "Spinner", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "sleep1", "name": "Sleeper", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "exit1", "name": "Quitter", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "exact1", "name": "Oracle", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
]
PLAIN = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "answers": {"defense": "none"}}


@pytest.fixture
async def server(tmp_path):
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=1)) as running:
        yield running


async def _seat(server, budget: float):
    seat = await seat_table(server, tokens=TOKENS)
    gm = await seat.join("gm")
    ack = await gm.ok("table.update", {"attack_budget": budget})
    assert ack["table"]["settings"]["attack_budget"] == budget
    return seat, gm


@pytest.mark.parametrize("attacker", ["spin1", "sleep1"])
async def test_a_hook_past_the_budget_fails_its_attack_and_the_table_takes_the_next(server, attacker):
    seat, gm = await _seat(server, 0.4)
    before = await seat.state()
    started = time.monotonic()
    ack = await gm.call("attack", {**PLAIN, "attacker": attacker}, timeout=10)
    took = time.monotonic() - started
    assert ack["ok"] is False
    error = ack["error"]
    assert error["code"] == "plugin_timeout"
    assert error["details"]["plugin"] == HANG
    assert error["details"]["hook"] == "duel_roll" and error["details"]["step"] == "roll"
    assert error["details"]["budget"] == 0.4
    assert HANG in error["message"] and "roll" in error["message"]
    assert 0.4 <= took < 5
    assert await seat.state() == before  # nothing applied
    # The same table takes its next attack, on a fresh resolver.
    ok = await gm.ok("attack", PLAIN)
    assert ok["attack"]["outcome"]["hit"] in (True, False)
    assert server.bridge.resolvers.replaced == 1
    assert len(server.bridge.resolvers.procs) == 1
    await seat.close()


async def test_other_tables_do_not_notice_a_hanging_pack(server):
    hung, hung_gm = await _seat(server, 3.0)
    other = await seat_table(server, name="other table")
    other_gm = await other.join("gm")
    stuck = asyncio.ensure_future(hung_gm.call("attack", {**PLAIN, "attacker": "spin1"}, timeout=15))
    await asyncio.sleep(0.2)  # the resolver is spinning now
    echoes = []
    attacks = 0
    while not stuck.done():
        t0 = time.perf_counter()
        await other_gm.ok("echo", {"n": len(echoes)})
        echoes.append(time.perf_counter() - t0)
        if len(echoes) % 10 == 0 and attacks < 3:
            # The other table's attacks go on too (on a replacement once the stuck one is retired).
            done = await other_gm.call("attack", PLAIN, timeout=10)
            assert done["ok"], done
            attacks += 1
        await asyncio.sleep(0.02)
    assert (await stuck)["error"]["code"] == "plugin_timeout"
    assert len(echoes) >= 20
    assert max(echoes) < 1.0, max(echoes)
    await hung.close()
    await other.close()


async def test_a_budget_counts_hook_time_not_the_time_people_take_to_decide(server):
    seat, gm = await _seat(server, 0.3)
    await gm.ok("table.update", {"decision_timeout": 3})

    async def slow(decision):
        await asyncio.sleep(0.8)
        return "none"

    await seat.join("bob", slow)
    ack = await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]})
    assert ack["attack"]["decisions"][0]["how"] == "answered"
    await seat.close()


async def test_an_attack_parked_on_a_killed_resolver_is_replayed_and_finishes(server):
    """Another table's attack waits on a decision in the resolver a hang then kills."""
    waiting, waiting_gm = await _seat(server, 5.0)
    await waiting_gm.ok("table.update", {"decision_timeout": 10})
    release = asyncio.Event()

    async def later(decision):
        await release.wait()
        return "none"

    bob = await waiting.join("bob", later)
    alice = await waiting.join("alice")
    parked = asyncio.ensure_future(
        alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}, timeout=15)
    )
    await bob.wait_for("decision")
    hung, hung_gm = await _seat(server, 0.3)
    assert (await hung_gm.call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))["error"]["code"] == (
        "plugin_timeout"
    )
    assert server.bridge.resolvers.replaced == 1
    release.set()
    ack = await parked
    assert ack["ok"], ack
    assert ack["attack"]["decisions"][0]["how"] == "answered"
    assert ack["attack"]["decisions"][0]["answer"] == {"option": "none"}
    await waiting.close()
    await hung.close()


async def test_a_pack_raising_system_exit_fails_its_attack_and_ends_no_process(server):
    seat, gm = await _seat(server, 2.0)
    pids = [p.pid for p in server.bridge.resolvers.procs]
    ack = await gm.call("attack", {**PLAIN, "attacker": "exit1"})
    assert ack["ok"] is False and ack["error"]["code"] == "plugin_error"
    assert ack["error"]["details"]["plugin"] == HANG and ack["error"]["details"]["exception"] == "SystemExit"
    assert (await gm.ok("attack", PLAIN))["attack"]["outcome"]["hit"] in (True, False)
    assert [p.pid for p in server.bridge.resolvers.procs] == pids and server.bridge.resolvers.replaced == 0
    await seat.close()


async def test_the_budget_is_a_validated_table_setting(server):
    seat, gm = await _seat(server, 1.0)
    for bad in (0, -1, 61, "soon", None):
        ack = await gm.call("table.update", {"attack_budget": bad})
        assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"
        assert "attack_budget" in ack["error"]["details"]
    ack = await gm.call("table.update", {})
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"
    alice = await seat.join("alice")
    ack = await alice.call("table.update", {"attack_budget": 2})
    assert ack["error"]["code"] == "forbidden"
    assert (await gm.ok("table.get"))["table"]["settings"]["attack_budget"] == 1.0
    await seat.close()


def test_the_server_runs_on_asyncio_when_uvloop_is_not_installed(monkeypatch):
    import sys

    from vtt_bridge.server.runner import run

    async def which():
        return type(asyncio.get_running_loop()).__module__

    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop → ImportError
    assert run(which()).startswith("asyncio")


@pytest.mark.parametrize("attacker", ["spin1", "sleep1"])
async def test_a_hook_that_hangs_in_the_odds_costs_that_request_only(tmp_path, attacker):
    """attack.odds runs hook code too (the probe, the exact model, every sample): in a
    process of its own, killed past the odds budget; the server and the pool carry on."""
    cfg = config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=1, odds_budget=0.5)
    async with BridgeServer(cfg) as server:
        hung, hung_gm = await _seat(server, 5.0)
        other = await seat_table(server, name="other table")
        other_gm = await other.join("gm")
        pool = [p.pid for p in server.bridge.resolvers.procs]
        asked = {"ruleset": "duel", "attacker": attacker, "targets": ["b"], "method": "monte_carlo", "samples": 2000}
        started = time.monotonic()
        stuck = asyncio.ensure_future(hung_gm.call("attack.odds", asked, timeout=15))
        echoes = []
        while not stuck.done():
            t0 = time.perf_counter()
            await other_gm.ok("echo", {"n": len(echoes)})
            echoes.append(time.perf_counter() - t0)
            await asyncio.sleep(0.02)
        took = time.monotonic() - started
        ack = await stuck
        assert ack["ok"] is False, ack
        error = ack["error"]
        assert error["code"] == "plugin_timeout"
        assert error["details"] == {"plugin": HANG, "hook": "duel_roll", "step": "roll", "budget": 0.5}
        assert "attack.odds" in error["message"] and HANG in error["message"]
        assert 0.5 <= took < 5
        # The other table did not notice, not even a busy loop holding a CPU.
        assert len(echoes) >= 10
        assert max(echoes) < 0.5, max(echoes)
        # The pool that resolves attacks was not touched; attacks and the next odds work.
        assert [p.pid for p in server.bridge.resolvers.procs] == pool and server.bridge.resolvers.replaced == 0
        assert (await other_gm.ok("attack", PLAIN))["attack"]["outcome"]["hit"] in (True, False)
        odds = (await hung_gm.ok("attack.odds", {**asked, "attacker": "a", "samples": 200}))["odds"]
        # (all 200 samples, or on a loaded machine those that fit in the 0.5 s budget)
        assert 1 <= odds["samples"] <= 200 and odds["method"] == "monte_carlo"
        exact = (await hung_gm.ok("attack.odds", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["odds"]
        assert 0 < exact["hit"]["value"] < 1
        await hung.close()
        await other.close()


async def test_an_exact_odds_model_that_never_returns_is_killed_at_the_budget(tmp_path):
    cfg = config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=1, odds_budget=0.3)
    async with BridgeServer(cfg) as server:
        seat, gm = await _seat(server, 5.0)
        alice = await seat.join("alice")
        started = time.monotonic()
        ack = await alice.call("attack.odds", {"ruleset": "duel", "attacker": "exact1", "targets": ["b"]}, timeout=15)
        assert ack["ok"] is False and ack["error"]["code"] == "plugin_timeout", ack
        assert ack["error"]["details"]["plugin"] == HANG and ack["error"]["details"]["budget"] == 0.3
        assert 0.3 <= time.monotonic() - started < 5
        # the same user's next request has its slot back
        again = await alice.ok("attack.odds", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "samples": 200})
        assert again["odds"]["attacker"] == "a"
        await seat.close()
