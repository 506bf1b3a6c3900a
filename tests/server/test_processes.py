"""Several real server processes: one Redis, one table, as if one server.

Each test starts real ``vtt-bridge serve`` processes on loopback over a real
``redis-server`` (and, for the crash test, a real SQLite file), and drives
them with real socket.io clients. Every load loop is bounded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import urllib.request

import pytest

from vtt_bridge.state import RedisStore, SQLiteStore, replay

from ..state.redis_server import redis_server
from .kit import Client, answer, ignore, seat_table
from .processes import ServerProcess, children, servers

pytestmark = pytest.mark.slow

HIT = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "answers": {"defense": "none"}}
BIG = [
    {"id": "a", "name": "Attacker", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "b", "name": "Defender", "ruleset": "duel", "ownership": {"bob": 3}, "system": {"hp": 100000, "rerolls": 0}},
]


@dataclasses.dataclass
class Node:
    """What ``seat_table`` needs of a server: its URL and the (shared) store."""

    url: str
    store: object


def _cmdline(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode()


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


@pytest.fixture
async def store(redis_url):
    opened = RedisStore(redis_url)
    await opened.open()
    yield opened
    await opened.close()


async def _never(decision: dict) -> None:
    await asyncio.Event().wait()


def _args(redis_url: str, *extra: str) -> tuple[str, ...]:
    return ("--redis", redis_url, "--port", "0", "--lease-ttl", "1", "--decision-timeout", "5", *extra)


async def test_two_processes_see_each_others_writes_ask_across_and_broadcast_once(redis_url, store):
    with servers(_args(redis_url), _args(redis_url)) as (one, two):
        seat = await seat_table(Node(one.url, store))
        try:
            # bob is connected to process one only; the GM and carol to two, carol to one too.
            bob = await seat.join("bob", answer("block"))
            carol_one = await seat.join("carol")
            seat.server = Node(two.url, store)
            gm = await seat.join("gm")
            carol_two = await seat.join("carol")
            # A token created through one process is at once usable through the other.
            gm_one = await Client(one.url).connect(seat.auth("gm"))
            seat.clients.append(gm_one)
            await gm_one.ok("token.create", {**BIG[0], "id": "x", "ownership": {}})
            ok = await gm.ok("attack", {**HIT, "attacker": "x"})
            assert ok["attack"]["attacker"] == "x"
            # The decision is bob's: process two resolves, bob is asked on process one.
            attack = (await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}))[
                "attack"
            ]
            [decision] = bob.decisions
            assert decision["key"] == "defense" and decision["attack"]["id"] == attack["id"]
            assert attack["decisions"][0]["how"] == "answered"
            assert attack["decisions"][0]["answer"] == {"option": "block"}
            assert gm.decisions == []
            # Every watcher gets each broadcast once, whichever process it is on.
            for watcher in (carol_one, carol_two, bob):
                await watcher.wait_for("attack.resolved", 2)
            await asyncio.sleep(0.3)
            for watcher in (carol_one, carol_two, bob):
                ids = [r["attack"]["id"] for r in watcher.named("attack.resolved")]
                assert ids == [ok["attack"]["id"], attack["id"]]
            assert replay(await store.audit(seat.id)) == await seat.tokens()
        finally:
            await seat.close()


async def test_attacks_on_one_table_through_two_processes_apply_in_one_order(redis_url, store):
    with servers(_args(redis_url), _args(redis_url)) as (one, two):
        seat = await seat_table(Node(one.url, store), tokens=BIG)
        try:
            first = await seat.join("gm")
            seat.server = Node(two.url, store)
            second = await seat.join("gm")

            async def fire(client: Client, n: int) -> list[dict]:
                return [await client.call("attack", HIT, timeout=20) for _ in range(n)]

            acks = [a for batch in await asyncio.gather(fire(first, 15), fire(second, 15)) for a in batch]
            assert all(a["ok"] for a in acks), [a["error"] for a in acks if not a["ok"]]
            # One order: each attack saw the previous one's result, none was lost or doubled.
            befores = sorted(a["attack"]["tokens"]["b"]["before"]["version"] for a in acks)
            assert befores == list(range(befores[0], befores[0] + 30))
            seqs = sorted(a["attack"]["seq"] for a in acks)
            assert seqs == list(range(seqs[0], seqs[0] + 30))
            tokens = await seat.tokens()
            assert tokens["b"]["system"]["hp"] == 100000 - 2 * 30
            assert replay(await store.audit(seat.id)) == tokens
        finally:
            await seat.close()


async def test_a_request_id_sent_to_both_processes_at_once_is_resolved_once(redis_url, store):
    with servers(_args(redis_url), _args(redis_url)) as (one, two):
        seat = await seat_table(Node(one.url, store), tokens=BIG)
        try:
            first = await seat.join("gm")
            seat.server = Node(two.url, store)
            second = await seat.join("gm")
            for n in range(5):
                request = {**HIT, "request_id": f"swing-{n}"}
                a, b = await asyncio.gather(first.call("attack", request), second.call("attack", request))
                assert a["ok"] and b["ok"], (a, b)
                assert a["attack"] == b["attack"]
                assert sorted([a["retried"], b["retried"]]) == [False, True]
            attacks = [e for e in await store.audit(seat.id) if e.kind == "attack"]
            assert len(attacks) == 5
        finally:
            await seat.close()


async def test_a_process_killed_mid_attack_loses_nothing_acknowledged_and_its_clients_go_on(redis_url, store):
    # A long decision timeout: on a loaded machine the rules' default must not settle the
    # question (and commit the attack) before the kill.
    slow = ("--decision-timeout", "60")
    with servers(_args(redis_url, *slow), _args(redis_url, *slow)) as (one, two):
        seat = await seat_table(Node(one.url, store), tokens=BIG)
        try:
            gm = await seat.join("gm")
            acknowledged = [(await gm.ok("attack", {**HIT, "request_id": f"r{n}"}))["attack"] for n in range(5)]
            # An attack waiting for bob's answer holds the table's lease on process one.
            bob = await seat.join("bob", _never)  # never answers (no policy would answer None at once)
            pending = asyncio.ensure_future(gm.call("attack", {**HIT, "answers": {}}, timeout=20))
            await bob.wait_for("decision")
            before = await seat.state()
            one.kill()
            with pytest.raises(Exception):
                await pending
            assert await seat.state() == before  # the cut-short attack applied nothing
            # The client carries on through the other process (the lease expires after 1 s).
            seat.server = Node(two.url, store)
            again = await Client(two.url).connect(seat.auth("gm"))
            seat.clients.append(again)
            started = time.monotonic()
            done = await again.ok("attack", {**HIT, "request_id": "after"})
            assert time.monotonic() - started < 10
            for old in acknowledged:
                retry = await again.ok("attack", {**HIT, "request_id": old["request_id"]})
                assert retry["retried"] is True and retry["attack"]["id"] == old["id"]
            tokens = await seat.tokens()
            assert tokens["b"]["system"]["hp"] == 100000 - 2 * 6
            assert done["attack"]["seq"] == acknowledged[-1]["seq"] + 1
            assert replay(await store.audit(seat.id)) == tokens
        finally:
            await seat.close()


async def test_serve_workers_runs_processes_that_share_one_port(redis_url, store):
    with servers(_args(redis_url, "--workers", "2")) as (supervisor,):
        # Two server processes (multiprocessing's resource tracker aside), each with its
        # resolvers (two) and its odds process.
        workers = [pid for pid in children(supervisor.pid) if "resource_tracker" not in _cmdline(pid)]
        assert len(workers) == 2
        assert all(len(children(pid)) == 3 for pid in workers)
        seat = await seat_table(Node(supervisor.url, store), tokens=BIG)
        try:
            clients = [await seat.join("gm") for _ in range(6)]
            acks = await asyncio.gather(*(c.call("attack", HIT, timeout=20) for c in clients))
            assert all(a["ok"] for a in acks)
            with urllib.request.urlopen(supervisor.url + "/healthz", timeout=5) as response:
                assert response.status == 200
            assert (await seat.tokens())["b"]["system"]["hp"] == 100000 - 2 * 6
        finally:
            await seat.close()


async def test_kill_9_under_load_loses_no_acknowledged_attack(tmp_path):
    """SQLite, one process: attacks stream in, the server is killed -9, restarted; every ack holds."""
    db = tmp_path / "crash.sqlite"
    prepare = SQLiteStore(db)
    await prepare.open()
    first = ServerProcess("--db", str(db), "--port", "0")
    try:
        seat = await seat_table(Node(first.url, prepare), tokens=BIG)
        clients = [await seat.join("gm") for _ in range(4)]
        acknowledged: list[dict] = []

        async def stream(client: Client, n: int) -> None:
            for i in range(200):
                try:
                    ack = await client.call("attack", {**HIT, "request_id": f"c{n}-{i}"}, timeout=5)
                except Exception:
                    return
                if ack.get("ok"):
                    acknowledged.append(ack["attack"])

        runs = [asyncio.ensure_future(stream(c, n)) for n, c in enumerate(clients)]
        deadline = time.monotonic() + 10
        while len(acknowledged) < 40 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        first.kill()
        await asyncio.gather(*runs)
        await seat.close()
    finally:
        first.stop()
        await prepare.close()
    assert len(acknowledged) >= 40
    second = ServerProcess("--db", str(db), "--port", "0")
    try:
        store = SQLiteStore(db)
        await store.open()
        audit = await store.audit(seat.id)
        kept = {e.request_id for e in audit if e.kind == "attack"}
        assert {a["request_id"] for a in acknowledged} <= kept
        assert replay(audit) == {t: v.to_dict() for t, v in (await store.tokens(seat.id)).items()}
        gm = await Client(second.url).connect(seat.auth("gm"))
        retry = await gm.ok("attack", {**HIT, "request_id": acknowledged[0]["request_id"]})
        assert retry["retried"] is True and retry["attack"]["id"] == acknowledged[0]["id"]
        await gm.close()
        await store.close()
    finally:
        second.stop()


async def test_an_answer_sent_to_a_process_that_died_is_taken_by_the_process_that_asks_again(redis_url, store):
    """kill -9 of the process asking bob: his answer, sent after, settles the retried attack."""
    slow = ("--decision-timeout", "30")
    with servers(_args(redis_url, *slow), _args(redis_url, *slow)) as (one, two):
        seat = await seat_table(Node(one.url, store), tokens=BIG)
        try:
            gm = await seat.join("gm")
            seat.server = Node(two.url, store)
            # bob, on process two, answers the first question he is asked once told to, and no other.
            release = asyncio.Event()
            asked: list[dict] = []

            async def bob_answers_once(decision: dict) -> str:
                asked.append(decision)
                if len(asked) > 1:
                    await asyncio.Event().wait()
                await release.wait()
                return "block"

            bob = await seat.join("bob", bob_answers_once)
            request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "request_id": "swing"}
            # (A call cut short by the server's death ends only at its timeout, in python-socketio.)
            pending = asyncio.ensure_future(gm.call("attack", request, timeout=8))
            [question] = await bob.wait_for("decision", timeout=8)
            before = await seat.state()
            one.kill()  # the process asking bob dies; then bob answers
            release.set()
            with pytest.raises(Exception):
                await pending
            assert await seat.state() == before
            # The GM, reconnected through process two, sends the request again.
            again = await Client(two.url).connect(seat.auth("gm"))
            seat.clients.append(again)
            ack = await again.call("attack", request, timeout=20)
            assert ack["ok"], ack
            assert ack["retried"] is False  # resolved anew (the first never committed)
            [decision] = ack["attack"]["decisions"]
            assert decision["how"] == "answered" and decision["answer"] == {"option": "block"}
            assert len(asked) == 1  # taken, not asked again
            # bob is told his question is over: the attack he was asked in, settled by his answer.
            [closed] = await bob.wait_for("decision.closed", timeout=5)
            assert closed == {"attack": question["attack"]["id"], "key": "defense", "how": "answered"}
            tokens = await seat.tokens()
            assert tokens["b"]["version"] == 2
            assert replay(await store.audit(seat.id)) == tokens
        finally:
            await seat.close()


async def test_an_answer_nobody_asks_for_again_ends_with_decision_closed_to_its_sender(redis_url, store):
    """kill -9 of the process asking bob, no retry: bob's answer is given up and he is told so."""
    quick = ("--decision-timeout", "3")
    with servers(_args(redis_url, *quick), _args(redis_url, *quick)) as (one, two):
        seat = await seat_table(Node(one.url, store), tokens=BIG)
        try:
            gm = await seat.join("gm")
            seat.server = Node(two.url, store)
            release = asyncio.Event()

            async def bob_answers_when_told(decision: dict) -> str:
                await release.wait()
                return "block"

            bob = await seat.join("bob", bob_answers_when_told)
            request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6], "request_id": "lost"}
            pending = asyncio.ensure_future(gm.call("attack", request, timeout=5))
            [question] = await bob.wait_for("decision", timeout=5)
            one.kill()
            release.set()
            with pytest.raises(Exception):
                await pending
            # Kept for the question's timeout (3 s) and 30 s more, then given up: bob is told.
            [closed] = await bob.wait_for("decision.closed", timeout=45)
            assert closed == {"attack": question["attack"]["id"], "key": "defense", "how": "disconnect"}
            assert (await seat.tokens())["b"]["version"] == 1
        finally:
            await seat.close()
