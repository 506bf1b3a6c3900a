"""The resolver pool's housekeeping: what resolvers hold, spares retired, nothing kept for good.

The pool itself (budgets, kills, replays) is tested in ``test_budget.py``;
here: the tables' tokens a resolver holds are sent as deltas and the least
recently used tables are forgotten (the attacks stay right), a spare forked
while every resolver was held up ends once idle, and forking leaves the
server's garbage collector as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time

import pytest

from vtt_bridge.engine.tokens import Token
from vtt_bridge.server import BridgeServer, attackwire
from vtt_bridge.server import pool as workers
from vtt_bridge.server import sandbox
from vtt_bridge.server.pool import Held
from vtt_bridge.state.records import token_wire

from . import duel_plugin
from .conftest import config
from .kit import seat_table
from .test_budget import HANG, PLAIN, TOKENS, _seat


def _token(token_id: str, hp: int = 10) -> Token:
    return Token(token_id, token_id, "duel", {"hp": hp, "rerolls": 0})


def test_a_table_is_sent_whole_once_then_only_what_changed():
    held = Held()
    a, b = _token("a"), _token("b")
    forget, refs, new = held.hand_off("t1", {"a": a, "b": b})
    assert (forget, refs, [t["id"] for t in new]) == ([], ["a", "b"], ["a", "b"])
    # The same snapshots again: nothing but the job.
    assert held.hand_off("t1", {"a": a, "b": b}) == ([], None, [])
    # One changed: only it; the ids are the ones held.
    b2 = _token("b", 7)
    forget, refs, new = held.hand_off("t1", {"a": a, "b": b2})
    assert refs is None and [(t["id"], t["system"]["hp"]) for t in new] == [("b", 7)]
    # One deleted: the ids in order go again.
    assert held.hand_off("t1", {"b": b2}) == ([], ["b"], [])
    # Cleared (a process that failed): everything again.
    held.clear()
    forget, refs, new = held.hand_off("t1", {"b": b2})
    assert refs == ["b"] and [t["id"] for t in new] == ["b"]


def test_the_same_snapshots_in_another_order_send_the_ids_again():
    held = Held()
    a, b = _token("a"), _token("b")
    held.hand_off("t1", {"a": a, "b": b})
    assert held.hand_off("t1", {"b": b, "a": a}) == ([], ["b", "a"], [])
    assert held.hand_off("t1", {"b": b, "a": a}) == ([], None, [])


def test_a_resolver_reuses_the_wire_form_of_the_snapshots_it_holds():
    """The attack's record carries each token before and after as ``token_wire`` makes
    them: those a resolver made for an earlier attack are the same bytes."""
    from vtt_bridge.plugins import make_host
    from vtt_bridge.state import codec

    host = make_host(plugins=[duel_plugin.rules()], entry_points=False)
    worker = sandbox.Worker(None, host)
    a, b = _token("a"), _token("b", 30)
    _forget, refs, new = Held().hand_off("t1", {"a": a, "b": b})
    spec = {
        "ruleset": "duel",
        "args": {"attacker": "a", "targets": ["b"], "declaration": {}, "seed": 3, "dice": None,
                 "answers": {"defense": "none"}},
        "wire": {"about": {"id": "atk_1", "ruleset": "duel", "attacker": "a", "targets": ["b"], "user": "gm"},
                 "table": "t1", "request_id": None},
    }  # fmt: skip
    reply = worker.start(1, "t1", refs, new, spec, [], 0)
    assert reply[0] == "done" and reply[3], reply
    tokens = worker.tables["t1"]
    after = {
        tid: Token(tid, tid, "duel", system, ownership=tokens[tid].ownership, version=2, flags=tokens[tid].flags)
        for tid, (system, _before, _after) in reply[3].items()
    }
    fresh = attackwire.attack_payload(spec["wire"], reply[4], {}, tokens, after)  # token_wire throughout
    reused = attackwire.attack_payload(spec["wire"], reply[4], {}, tokens, after, worker.wires["t1"])
    assert codec.encode(reused) == codec.encode(fresh)
    assert reused["tokens"]["a"]["before"] is worker.wires["t1"]["a"][1]  # the one the attack made
    assert codec.loads(reply[2])["tokens"] == codec.loads(codec.encode(fresh))["tokens"]
    # Each changed token's wire form before and after comes encoded: the bytes the event
    # loop would make of the tokens it has (the audit entry and token.updated carry them).
    for tid, (_system, before, after_json) in reply[3].items():
        assert before == codec.encode(token_wire({"a": a, "b": b}[tid]))
        assert after_json == codec.encode(token_wire(after[tid]))


def test_the_least_recently_used_table_is_forgotten(monkeypatch):
    monkeypatch.setattr(workers, "TABLES_HELD", 2)
    held = Held()
    a = _token("a")
    held.hand_off("t1", {"a": a})
    held.hand_off("t2", {"a": a})
    held.hand_off("t1", {"a": a})  # t1 used last: t2 is the oldest now
    forget, refs, _new = held.hand_off("t3", {"a": a})
    assert forget == ["t2"] and refs == ["a"]
    assert list(held.tables) == ["t1", "t3"]
    # t2 again: sent whole, t1 forgotten in turn.
    forget, refs, new = held.hand_off("t2", {"a": a})
    assert forget == ["t1"] and refs == ["a"] and len(new) == 1


async def test_attacks_stay_right_on_more_tables_than_a_resolver_holds(tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "TABLES_HELD", 2)
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(),), resolvers=1)) as server:
        seats = [await seat_table(server, name=f"table {n}") for n in range(4)]
        gms = [await seat.join("gm") for seat in seats]
        last: dict[int, dict] = {}
        for round_ in range(3):
            for n, gm in enumerate(gms):
                ack = await gm.call("attack", {**PLAIN, "seed": 5})
                assert ack["ok"], ack
                target = ack["attack"]["tokens"]["b"]
                # Each attack starts from the token as the table's last attack left it,
                # though its resolver forgot the table in between.
                assert target["before"]["version"] == round_ + 1
                if n in last:
                    assert target["before"] == last[n]
                assert target["after"]["system"]["hp"] < target["before"]["system"]["hp"]
                last[n] = target["after"]
        (proc,) = server.bridge.resolvers.procs
        assert len(proc.known.tables) == 2
        for seat in seats:
            await seat.close()


async def test_attacks_go_to_the_first_resolver_that_keeps_up_and_past_one_held_up(tmp_path, monkeypatch):
    """Attacks that arrive together queue on one resolver while it keeps up (it runs them
    back to back, caches warm, rather than two resolvers each woken per job); an attack
    arriving while that resolver's job in hand has run a while goes to the other at once."""
    monkeypatch.setattr(workers, "_BRIEF", 0.5)  # "a while" made long: a loaded machine may stall a job for ms
    picked: list[int] = []
    dispatch = workers.Pool._dispatch

    async def spy(self, job, proc, **kwargs):
        picked.append(proc.pid)
        return await dispatch(self, job, proc, **kwargs)

    monkeypatch.setattr(workers.Pool, "_dispatch", spy)
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=2)) as server:
        first, second = (proc.pid for proc in server.bridge.resolvers.procs)
        seats = [await seat_table(server, name=f"table {n}", tokens=TOKENS) for n in range(4)]
        gms = [await seat.join("gm") for seat in seats]
        for round_ in range(4):
            acks = await asyncio.gather(*(gm.call("attack", PLAIN, timeout=10) for gm in gms))
            assert all(ack["ok"] for ack in acks), acks
        assert picked == [first] * 16  # the least busy would have been the second for about half
        # The first is held up by a hook that sleeps: the next attack goes to the second, at once.
        await gms[0].ok("table.update", {"attack_budget": 3.0})
        stuck = asyncio.ensure_future(gms[0].call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))
        await asyncio.sleep(0.7)
        ack = await gms[1].call("attack", PLAIN, timeout=10)
        assert ack["ok"], ack
        assert not stuck.done()
        assert picked[16:] == [first, second]
        assert (await stuck)["error"]["code"] == "plugin_timeout"
        for seat in seats:
            await seat.close()


async def test_an_attack_sent_behind_a_hook_that_hangs_is_replayed_once_and_applied_once(tmp_path, monkeypatch):
    """An attack queued on a resolver behind a job that then hangs (likelier now that a busy
    resolver takes more jobs) finishes on another once the hung one is stopped at its budget:
    late, not failed, and its changes applied exactly once."""
    monkeypatch.setattr(workers, "_BRIEF", 10.0)  # the second attack surely queues behind the first
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=2)) as server:
        resolvers = server.bridge.resolvers
        hung, hung_gm = await _seat(server, 0.5)
        other = await seat_table(server, name="other table", tokens=TOKENS)
        other_gm = await other.join("gm")
        tokens_before, entries_before = await other.state()
        stuck = asyncio.ensure_future(hung_gm.call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))
        await asyncio.sleep(0.05)  # the first resolver is asleep in the hook now
        started = time.monotonic()
        ack = await other_gm.call("attack", {**PLAIN, "seed": 5}, timeout=10)  # seed 5: a hit
        waited = time.monotonic() - started
        assert (await stuck)["error"]["code"] == "plugin_timeout"
        assert resolvers.replaced == 1
        assert waited > 0.3, waited  # it was sent behind the hung job and waited for its budget
        assert ack["ok"], ack
        target = ack["attack"]["tokens"]["b"]
        assert target["before"]["system"] == tokens_before["b"]["system"]
        assert target["after"]["system"]["hp"] < target["before"]["system"]["hp"]
        tokens_after, entries_after = await other.state()
        assert entries_after == entries_before + 1  # one attack in the log
        assert tokens_after["b"]["version"] == tokens_before["b"]["version"] + 1
        assert tokens_after["b"]["system"] == target["after"]["system"]
        await hung.close()
        await other.close()


async def test_a_spare_resolver_ends_once_idle_and_forking_freezes_nothing_here(tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "SPARE_IDLE", 0.3)
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=1)) as server:
        resolvers = server.bridge.resolvers
        hung, hung_gm = await _seat(server, 1.0)
        other = await seat_table(server, name="other table", tokens=TOKENS)
        other_gm = await other.join("gm")
        frozen = gc.get_freeze_count()
        stuck = asyncio.ensure_future(hung_gm.call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))
        await asyncio.sleep(0.4)  # the only resolver is held up: the next attack gets a spare
        ack = await other_gm.call("attack", PLAIN, timeout=10)
        assert ack["ok"], ack
        assert resolvers.spares == 1
        assert (await stuck)["error"]["code"] == "plugin_timeout"
        assert resolvers.replaced == 1
        # The server's collector keeps collecting what it held when the spare was forked:
        # nothing joined the frozen objects (a few of them may have been freed meanwhile).
        assert gc.get_freeze_count() <= frozen
        for _ in range(100):
            if resolvers.retired:
                break
            await asyncio.sleep(0.05)
        assert resolvers.retired == 1
        assert len([p for p in resolvers.procs if not p.dead]) == 1
        ack = await other_gm.call("attack", PLAIN, timeout=10)
        assert ack["ok"], ack
        await hung.close()
        await other.close()


@pytest.mark.parametrize("tables", [3])
async def test_odds_processes_forget_tables_too(tmp_path, monkeypatch, tables):
    monkeypatch.setattr(workers, "TABLES_HELD", 2)
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(),), resolvers=1)) as server:
        seats = [await seat_table(server, name=f"table {n}") for n in range(tables)]
        gms = [await seat.join("gm") for seat in seats]
        first = None
        for _ in range(2):
            for gm in gms:
                ack = await gm.call("attack.odds", {"ruleset": "duel", "attacker": "a", "targets": ["b"]})
                assert ack["ok"], ack
                first = first or ack["odds"]
                assert ack["odds"] == first
        for proc in server.bridge.attacks.odds_runner.procs:
            assert len(proc.known.tables) <= 2
        for seat in seats:
            await seat.close()


async def test_replies_are_handled_whole_however_the_socket_cuts_them():
    """A resolver's replies are handled as they arrive, in order, each once it is whole:
    several in one read, or one spread over several reads."""
    import pickle

    seen: list = []
    pipe = workers.Replies(seen.append)
    messages = [("done", n, b"x" * (n * 1000)) for n in range(1, 5)]
    data = b"".join(
        sandbox.HEADER.pack(len(body)) + body
        for body in (pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL) for m in messages)
    )
    pipe.data_received(data[:3])  # not even a header yet
    assert seen == []
    cut = len(data) // 3
    pipe.data_received(data[3:cut])
    pipe.data_received(data[cut:])
    assert seen == messages
    assert not pipe.buffer
    pipe.connection_lost(None)
    assert pipe.lost.done()


def test_a_stuck_report_names_the_hook_or_setup_on_the_stack_whatever_runs_the_engine():
    """The resolver's SIGUSR1 report finds the hook by the implementation's code on the stack,
    not by the engine's frames (a compiled engine has none): a step hook, and a ruleset's setup."""
    import dataclasses
    import sys

    from vtt_bridge import hookimpl, make_host

    seen = {}

    def stuck_setup(ctx):
        duel_plugin.DEMO_RULESET.setup(ctx)
        seen["setup"] = sandbox.where_in(sys._getframe(), host)

    class StuckSetup(duel_plugin.DemoDuelRules):
        @hookimpl
        def vtt_bridge_rulesets(self):
            return [dataclasses.replace(duel_plugin.DEMO_RULESET, setup=stuck_setup)]

    class StuckRoll:
        @hookimpl
        def duel_roll(self, ctx):
            seen["roll"] = sandbox.where_in(sys._getframe(), host)

    host = make_host(plugins=[StuckSetup(), StuckRoll()], entry_points=False)
    tokens = {t["id"]: Token.from_dict(t) for t in duel_plugin.sample_tokens()}
    host.start("duel", tokens, attacker="a", targets=["b"], declaration={}, seed=1).run()
    assert seen["setup"]["hook"] == "duel setup" and seen["setup"]["step"] == "setup"
    assert seen["roll"]["hook"] == "duel_roll" and seen["roll"]["step"] == "roll"


async def test_a_spare_killed_at_its_budget_is_not_replaced_and_the_pool_returns_to_its_size(tmp_path, monkeypatch):
    """Issue 26: a loaded run ended with 10 server processes. A spare resolver whose hook
    hung was replaced by a fresh resolver of the pool, which was never retired: the pool
    grew by one for every spare killed. Now the pool never holds more than twice its size
    (spares while every resolver is held up) and is back to its size once they are idle."""
    monkeypatch.setattr(workers, "SPARE_IDLE", 0.3)
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=1)) as server:
        resolvers = server.bridge.resolvers
        first, first_gm = await _seat(server, 1.0)
        second, second_gm = await _seat(server, 1.0)
        hung = asyncio.ensure_future(first_gm.call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))
        await asyncio.sleep(0.4)  # the only resolver is held up: the next attack gets a spare, which hangs too
        also = asyncio.ensure_future(second_gm.call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))
        most = 0
        for _ in range(60):
            most = max(most, len([p for p in resolvers.procs if not p.dead]))
            if hung.done() and also.done():
                break
            await asyncio.sleep(0.05)
        assert (await hung)["error"]["code"] == "plugin_timeout"
        assert (await also)["error"]["code"] == "plugin_timeout"
        assert resolvers.spares == 1 and most <= 2
        for _ in range(40):
            if len([p for p in resolvers.procs if not p.dead]) == 1:
                break
            await asyncio.sleep(0.05)
        assert len([p for p in resolvers.procs if not p.dead]) == 1
        assert (await second_gm.call("attack", PLAIN, timeout=10))["ok"]
        await first.close()
        await second.close()


def _children() -> set[int]:
    """The pids of this process's live children (zombies, killed and not reaped yet, left out)."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as listing:
            found.update(int(pid) for pid in listing.read().split())
    live = set()
    for pid in found:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
            if stat.read().rpartition(")")[2].split()[0] != "Z":
                live.add(pid)
    return live


async def test_a_burst_behind_a_hung_hook_never_runs_more_sandbox_processes_than_configured(tmp_path):
    """Issue 26: one loaded run ended with 62 processes under one server. With ``--resolvers 1``
    and one odds process, a hook that hangs and twenty attacks arriving at once behind it
    never make more than 2 × resolvers + odds processes, counted by the kernel."""
    allowed = 2 * 1 + 1
    others_before = _children()  # what earlier tests left running (a Redis server...)
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), HANG), resolvers=1)) as server:
        hung, hung_gm = await _seat(server, 1.0)
        others = [await _seat(server, 1.0) for _ in range(4)]
        stuck = asyncio.ensure_future(hung_gm.call("attack", {**PLAIN, "attacker": "sleep1"}, timeout=10))
        await asyncio.sleep(0.4)  # the only resolver is held up
        burst = [
            asyncio.ensure_future(gm.call("attack", {**PLAIN, "seed": n}, timeout=20))
            for n in range(5)
            for _seat_, gm in others
        ]
        most = len(_children() - others_before)
        for _ in range(400):
            most = max(most, len(_children() - others_before))
            if stuck.done() and all(ack.done() for ack in burst):
                break
            await asyncio.sleep(0.01)
        assert (await stuck)["error"]["code"] == "plugin_timeout"
        for ack in burst:
            assert (await ack)["ok"]
        assert most <= allowed, most
        await hung.close()
        for seat, _gm in others:
            await seat.close()


async def test_an_idle_resolver_asked_where_it_is_stuck_says_it_is_idle(tmp_path):
    """A resolver with no job in hand answers ``SIGUSR1`` at once that it is idle, so the watchdog
    does not kill one whose job's message had not reached it yet (the event loop ran late)."""
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(),), resolvers=1)) as server:
        (proc,) = server.bridge.resolvers.procs
        started = time.monotonic()
        assert await workers.where_stuck(proc) == {"idle": True}
        assert time.monotonic() - started < workers.REPORT_GRACE


async def test_the_event_loop_lateness_is_measured_not_charged():
    lateness = workers.Lateness()
    lateness.start()
    try:
        await asyncio.sleep(2 * workers.BEAT)
        mark = lateness.total
        time.sleep(0.3)  # the loop held up: a long collection, a fork
        assert lateness.since(mark, asyncio.get_running_loop().time()) >= 0.25
        await asyncio.sleep(0)
        await asyncio.sleep(2 * workers.BEAT)
        assert lateness.total - mark >= 0.25
    finally:
        lateness.stop()
