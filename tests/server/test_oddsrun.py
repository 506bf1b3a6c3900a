"""``attack.odds`` in warm odds processes (``vtt_bridge/server/pool.py``, ``OddsRunner``).

The server forks its odds process when it starts and reuses it for every
request; a process that is stuck past the budget, that dies, or whose
requester leaves is killed and replaced, and the next request is answered as
usual. Processes are watched from outside, as an operator would (the test
server's children in ``/proc``, their CPU time).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vtt_bridge import hookimpl
from vtt_bridge.server import BridgeServer

from . import duel_plugin, processes, test_odds
from .conftest import config
from .kit import DUEL_TOKENS, seat_table

ROOT = Path(__file__).resolve().parents[2]
HANG = "tests.server.hang_plugin"
ODDS = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "method": "monte_carlo", "samples": 100}
TOKENS = [
    *DUEL_TOKENS,
    {"id": "spin1", "name": "Spinner", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "crash1", "name": "Crasher", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
]
exalted = test_odds.exalted  # a table of exalted2e's sample tokens (fixture)


class Crash:
    """A pack whose roll hook ends the process it runs in, ``os._exit(7)``, for attackers named ``crash…``."""

    @hookimpl
    def duel_roll(self, ctx) -> None:
        if ctx.attacker.id.startswith("crash"):
            os._exit(7)


def children() -> set[int]:
    """The live child processes of this (the test server's) process."""
    return set(processes.children(os.getpid()))


def cpu(pid: int) -> float:
    """Seconds of CPU ``pid``'s threads have used, to the nanosecond (``/proc/<pid>/stat`` counts
    whole clock ticks: a few milliseconds of work may not show there)."""
    tasks = Path(f"/proc/{pid}/task")
    return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks.iterdir()) / 1e9


def odds_pids(server) -> set[int]:
    return {proc.pid for proc in server.bridge.attacks.odds_runner.procs}


async def until(check, *, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def test_the_odds_process_is_ready_when_the_server_starts_and_serves_every_request(tmp_path):
    async with BridgeServer(config(tmp_path)) as server:
        seat = await seat_table(server)
        try:
            (odds,) = odds_pids(server)
            before = children()
            assert odds in before  # forked with the server, next to the resolvers
            alice = await seat.join("alice")
            gm = await seat.join("gm")
            used = cpu(odds)
            first = (await alice.ok("attack.odds", ODDS))["odds"]
            second = (await gm.ok("attack.odds", {**ODDS, "samples": 200}))["odds"]
            assert first["samples"] == 100 and second["samples"] == 200
            # Both were computed by the same process, which did the work; nothing was forked.
            assert children() == before and odds_pids(server) == {odds}
            assert server.bridge.attacks.odds_runner.forked == 1
            assert [proc.served for proc in server.bridge.attacks.odds_runner.procs] == [2]
            await until(lambda: cpu(odds) > used, timeout=5)
        finally:
            await seat.close()


async def test_an_odds_process_unused_for_a_while_ends_and_the_next_request_forks_one(tmp_path):
    async with BridgeServer(config(tmp_path, odds_idle=0.5)) as server:
        seat = await seat_table(server)
        runner = server.bridge.attacks.odds_runner
        try:
            (first,) = odds_pids(server)
            gm = await seat.join("gm")
            assert (await gm.ok("attack.odds", ODDS))["odds"]["samples"] == 100
            # Each request moves the rest on: the process is still there just after one.
            await asyncio.sleep(0.3)
            assert (await gm.ok("attack.odds", ODDS))["odds"]["samples"] == 100
            assert odds_pids(server) == {first}
            await until(lambda: not odds_pids(server) and first not in children())
            assert runner.rested == 1 and runner.replaced == 0
            again = (await gm.ok("attack.odds", ODDS))["odds"]
            assert again["samples"] == 100
            (second,) = odds_pids(server)
            assert second != first and second in children() and runner.forked == 2
        finally:
            await seat.close()


async def test_a_stuck_odds_process_is_killed_and_replaced(tmp_path):
    cfg = config(tmp_path, plugins=(duel_plugin.rules(), HANG), odds_budget=0.3)
    async with BridgeServer(cfg) as server:
        seat = await seat_table(server, tokens=TOKENS)
        try:
            (stuck,) = odds_pids(server)
            alice = await seat.join("alice")
            ack = await alice.call("attack.odds", {**ODDS, "attacker": "spin1"}, timeout=15)
            assert ack["ok"] is False
            assert ack["error"]["code"] == "plugin_timeout"
            assert ack["error"]["details"] == {"plugin": HANG, "hook": "duel_roll", "step": "roll", "budget": 0.3}
            # The spinning process is gone; a fresh one waits in its place.
            await until(lambda: stuck not in children() and len(odds_pids(server)) == 1)
            (fresh,) = odds_pids(server)
            assert fresh != stuck and fresh in children()
            again = (await alice.ok("attack.odds", ODDS))["odds"]
            assert again["samples"] == 100
            assert odds_pids(server) == {fresh} and server.bridge.attacks.odds_runner.replaced == 1
        finally:
            await seat.close()


async def test_a_pack_ending_the_odds_process_is_a_plugin_error_and_the_next_request_works(tmp_path):
    cfg = config(tmp_path, plugins=(duel_plugin.rules(), Crash()))
    async with BridgeServer(cfg) as server:
        seat = await seat_table(server, tokens=TOKENS)
        try:
            (crashed,) = odds_pids(server)
            alice = await seat.join("alice")
            ack = await alice.call("attack.odds", {**ODDS, "attacker": "crash1"}, timeout=15)
            assert ack["ok"] is False, ack
            assert ack["error"]["code"] == "plugin_error"
            assert ack["error"]["details"]["exit"] == "exit status 7"
            assert "no odds were computed" in ack["error"]["message"]
            assert (await alice.ok("attack.odds", ODDS))["odds"]["samples"] == 100
            assert crashed not in odds_pids(server) and len(odds_pids(server)) == 1
            # Attacks never noticed: their resolvers are other processes.
            assert server.bridge.resolvers.replaced == 0
        finally:
            await seat.close()


async def test_an_odds_process_killed_while_idle_is_replaced(tmp_path):
    async with BridgeServer(config(tmp_path)) as server:
        seat = await seat_table(server)
        try:
            (killed,) = odds_pids(server)
            os.kill(killed, signal.SIGKILL)  # the OOM killer, an operator
            await until(lambda: killed not in odds_pids(server) and len(odds_pids(server)) == 1)
            alice = await seat.join("alice")
            assert (await alice.ok("attack.odds", ODDS))["odds"]["samples"] == 100
        finally:
            await seat.close()


async def test_odds_stop_when_the_requester_leaves(tmp_path):
    async with BridgeServer(config(tmp_path, odds_budget=60)) as server:
        seat = await seat_table(server)
        try:
            before = children()  # the resolvers and the odds process
            (odds,) = odds_pids(server)
            idle = cpu(odds)
            alice = await seat.join("alice")
            await alice.sio.emit("attack.odds", {**ODDS, "samples": 20_000})
            await until(lambda: cpu(odds) > idle)  # computing
            await alice.close()
            # Its work stops at once (the process is killed), and a fresh process takes its place.
            await until(lambda: odds not in children(), timeout=5)
            await until(lambda: len(children()) == len(before) and len(odds_pids(server)) == 1)
            assert not server.bridge.attacks.odds_runner.running
            bob = await seat.join("bob")
            assert (await bob.ok("attack.odds", {**ODDS, "attacker": "b", "targets": ["a"]}))["odds"]["samples"] == 100
        finally:
            await seat.close()


async def test_a_requester_who_leaves_while_waiting_gives_up_the_turn(tmp_path):
    cfg = config(tmp_path, plugins=(duel_plugin.rules(), HANG), odds_budget=0.3)
    async with BridgeServer(cfg) as server:
        seat = await seat_table(server, tokens=TOKENS)
        try:
            alice, bob, gm = await seat.join("alice"), await seat.join("bob"), await seat.join("gm")
            stuck = asyncio.ensure_future(alice.call("attack.odds", {**ODDS, "attacker": "spin1"}, timeout=15))
            await asyncio.sleep(0.05)
            await bob.sio.emit("attack.odds", {**ODDS, "attacker": "b", "targets": ["a"]})  # waits its turn
            await asyncio.sleep(0.05)
            await bob.close()
            after = asyncio.ensure_future(gm.call("attack.odds", ODDS, timeout=15))
            assert (await stuck)["error"]["code"] == "plugin_timeout"
            assert (await after)["odds"]["samples"] == 100
            runner = server.bridge.attacks.odds_runner
            # Only the stuck process was replaced; bob's turn cost nothing.
            assert runner.replaced == 1 and runner.forked == 2 and not runner.running
        finally:
            await seat.close()


async def test_the_odds_process_sees_a_token_changed_since_its_last_request(exalted):
    """The odds process keeps the tokens it was sent; a token changed on the table is sent again."""
    alice, gm = await exalted.join("alice"), await exalted.join("gm")
    asked = {**test_odds.REQUEST, "answers": {"defense": "dodge"}}
    first = (await alice.ok("attack.odds", asked))["odds"]
    monk = (await exalted.tokens())["monk"]["system"]
    await gm.ok("token.update", {"id": "monk", "system": {**monk, "abilities": {**monk["abilities"], "dodge": 5}}})
    nimbler = (await alice.ok("attack.odds", asked))["odds"]
    assert nimbler["hit"]["value"] < first["hit"]["value"]
    await gm.ok("token.update", {"id": "monk", "system": monk})
    assert (await alice.ok("attack.odds", asked))["odds"] == first


async def test_odds_requests_of_several_users_are_served_in_the_order_they_came(tmp_path):
    async with BridgeServer(config(tmp_path, odds_budget=5)) as server:
        seat = await seat_table(server)
        try:
            users = [await seat.join(user) for user in ("alice", "bob", "gm")]
            asked = [{**ODDS, "samples": 2000}, {**ODDS, "attacker": "b", "targets": ["a"], "samples": 2000}, ODDS]
            answered: list[int] = []

            async def ask(n: int) -> dict:
                ack = await users[n].call("attack.odds", asked[n], timeout=30)
                answered.append(n)
                return ack

            waiting = []
            for n in range(3):
                waiting.append(asyncio.ensure_future(ask(n)))
                await asyncio.sleep(0.05)
            acks = await asyncio.gather(*waiting)
            assert all(ack["ok"] for ack in acks), acks
            assert answered == [0, 1, 2]  # one odds process: first come, first served
            assert [ack["odds"]["attacker"] for ack in acks] == ["a", "b", "a"]
        finally:
            await seat.close()


async def test_with_two_odds_processes_two_users_are_served_at_once(tmp_path):
    cfg = config(tmp_path, plugins=(duel_plugin.rules(), HANG), odds_budget=0.3, odds_concurrency=2)
    async with BridgeServer(cfg) as server:
        seat = await seat_table(server, tokens=TOKENS)
        try:
            assert len(odds_pids(server)) == 2
            alice, bob = await seat.join("alice"), await seat.join("bob")
            # alice's request holds one process until its budget; bob's is answered meanwhile.
            stuck = asyncio.ensure_future(alice.call("attack.odds", {**ODDS, "attacker": "spin1"}, timeout=15))
            await asyncio.sleep(0.05)
            answer = await bob.ok("attack.odds", {**ODDS, "attacker": "b", "targets": ["a"]})
            assert answer["odds"]["samples"] == 100 and not stuck.done()
            assert (await stuck)["error"]["code"] == "plugin_timeout"
            await until(lambda: len(odds_pids(server)) == 2)
        finally:
            await seat.close()


@pytest.mark.slow
def test_the_odds_latency_bench_runs_quick():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "odds_latency.py"), "--quick"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "load average before" in out and "load average after" in out
    for ruleset in ("duel", "exalted2e"):
        line = next(line for line in out.splitlines() if line.strip().startswith(ruleset))
        assert "p50" in line and "p95" in line and "(target <= 10)" in line
    assert out.count("CPU per request: server") == 2
