"""An attack's token locks hold across server processes on one Redis (docs/protocol.md, "Locked tokens").

While an attack is resolved its attacker and targets are locked: an edit or
delete of them is refused with ``conflict`` naming the attack, whichever
process the edit goes through — not only the one resolving the attack. Two
servers in this test process, each with its own Redis connection, as two
processes would be; the kill -9 and load tests start real ``serve`` processes.
"""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from vtt_bridge.server import BridgeServer
from vtt_bridge.state import RedisStore, replay

from ..state.redis_server import redis_server
from .conftest import config
from .kit import Client, answer, seat_table
from .processes import Node, servers

_prefixes = itertools.count()

ASK_BOB = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}
HIT = {**ASK_BOB, "answers": {"defense": "none"}}


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


@pytest.fixture
async def pair(tmp_path, redis_url):
    """Two servers on one Redis (a fresh key prefix) whose questions wait 20 s."""
    prefix = f"locks{next(_prefixes)}:"
    settings = dict(redis=redis_url, redis_prefix=prefix, decision_timeout=20)
    one = BridgeServer(config(tmp_path / "one", **settings))
    two = BridgeServer(config(tmp_path / "two", **settings))
    await one.start()
    await two.start()
    try:
        yield one, two
    finally:
        await one.stop()
        await two.stop()


async def _never(decision):
    await asyncio.Event().wait()


def _refused_for(ack: dict, attack: str, token: str) -> bool:
    error = ack.get("error") or {}
    return error.get("code") == "conflict" and error.get("details") == {"token": token, "attack": attack}


async def test_an_edit_through_the_other_server_is_refused_while_the_attack_waits_then_goes_through(pair):
    one, two = pair
    seat = await seat_table(one)
    try:
        bob = await seat.join("bob", _never)  # the decider, on server one
        referee = await seat.join("gm")  # the GM's page, on server one
        seat.server = two
        gm = await seat.join("gm")  # the attack resolves on server two
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        [asked] = await bob.wait_for("decision")
        attack = asked["attack"]["id"]
        before = await seat.state()
        # Through server one, which does not resolve the attack: every edit of the
        # attacker or the target is refused, naming the attack, and changes nothing.
        for event, data, token in (
            ("token.update", {"id": "b", "system": {"hp": 3}}, "b"),
            ("token.update", {"id": "a", "name": "Renamed"}, "a"),
            ("token.delete", {"id": "b"}, "b"),
        ):
            ack = await referee.call(event, data)
            assert _refused_for(ack, attack, token), ack
            assert "in an attack being resolved" in ack["error"]["message"]
        owner = await seat.join("bob")  # the target's owner, editing on server one
        ack = await owner.call("token.update", {"id": "b", "name": "Bob's"})
        assert _refused_for(ack, attack, "b"), ack
        ack = await referee.call(
            "tokens.import", {"tokens": [{"id": "b", "name": "B", "ruleset": "duel", "system": {"hp": 1, "rerolls": 0}}]}
        )
        assert ack["ok"] is False and ack["error"]["code"] == "conflict" and ack["error"]["details"]["attack"] == attack
        assert await seat.state() == before
        # A token the attack does not involve is not locked.
        await referee.ok("token.update", {"id": "c", "name": "Onlooker"})
        # The GM settles the question (on server one); the attack commits, nothing refused it.
        await referee.ok("decision.default", {"attack": attack, "key": "defense"})
        done = await pending
        assert done["ok"] is True, done
        assert done["attack"]["decisions"][0]["how"] == "default"
        assert done["attack"]["tokens"]["b"]["after"]["system"]["hp"] == 9  # two hits, one blocked
        # Once it is over the same edits go through, on either server.
        await referee.ok("token.update", {"id": "b", "system": {"hp": 3}})
        await gm.ok("token.update", {"id": "a", "name": "Renamed"})
        tokens = await seat.tokens()
        assert tokens["b"]["system"]["hp"] == 3 and tokens["a"]["name"] == "Renamed"
        assert replay(await seat.audit()) == tokens
        await bob.close()
    finally:
        await seat.close()


async def test_the_locks_end_with_an_attack_that_fails_and_after_an_undo(pair):
    one, two = pair
    seat = await seat_table(one)
    try:
        editor = await seat.join("gm")  # on server one
        seat.server = two
        gm = await seat.join("gm")  # attacks on server two
        # Scripted dice that run out fail the attack (dice_exhausted): nothing applied,
        # and its locks go with it, at once.
        failed = await gm.call("attack", {**HIT, "dice": [5]})
        assert failed["ok"] is False and failed["error"]["code"] == "dice_exhausted", failed
        await editor.ok("token.update", {"id": "b", "name": "After a failure"})
        # A committed attack, undone through the other server: edits go through after both.
        done = await gm.ok("attack", HIT)
        await editor.ok("token.update", {"id": "a", "name": "After an attack"})
        await editor.ok("attack.undo", {"id": done["attack"]["id"]})
        await gm.ok("token.update", {"id": "b", "name": "After an undo"})
        # A question the decider leaves by disconnecting ends the attack with the default.
        seat.server = one
        bob = await seat.join("bob", _never)
        pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
        [asked] = await bob.wait_for("decision")
        ack = await editor.call("token.update", {"id": "b", "name": "Too soon"})
        assert _refused_for(ack, asked["attack"]["id"], "b"), ack
        await bob.close()
        assert (await pending)["ok"] is True
        await editor.ok("token.update", {"id": "b", "name": "After a disconnect"})
        tokens = await seat.tokens()
        assert tokens["b"]["name"] == "After a disconnect"
        assert replay(await seat.audit()) == tokens
    finally:
        await seat.close()


# -- real processes ------------------------------------------------------------------


@pytest.fixture
async def store(redis_url):
    opened = RedisStore(redis_url)
    await opened.open()
    yield opened
    await opened.close()


def _args(redis_url: str, *extra: str) -> tuple[str, ...]:
    return ("--redis", redis_url, "--port", "0", "--lease-ttl", "1", "--decision-timeout", "60", *extra)


@pytest.mark.slow
async def test_kill_9_of_the_process_resolving_frees_its_locks_within_the_lease(redis_url, store):
    with servers(_args(redis_url), _args(redis_url)) as (one, two):
        seat = await seat_table(Node(one.url, store))
        try:
            bob = await seat.join("bob", _never)  # the decider, on process one
            gm = await seat.join("gm")  # the attack resolves on process one
            pending = asyncio.ensure_future(gm.call("attack", ASK_BOB, timeout=30))
            [asked] = await bob.wait_for("decision")
            seat.server = Node(two.url, store)
            editor = await seat.join("gm")  # process two
            ack = await editor.call("token.update", {"id": "b", "name": "Too soon"})
            assert _refused_for(ack, asked["attack"]["id"], "b"), ack
            one.kill()  # kill -9, mid-attack, holding the lease and the locks
            killed = time.monotonic()
            while True:  # bounded: the lease (1 s) lapses, and the locks with it
                ack = await editor.call("token.update", {"id": "b", "name": "After the kill"})
                if ack["ok"]:
                    break
                assert _refused_for(ack, asked["attack"]["id"], "b"), ack
                assert time.monotonic() - killed < 10, "the locks outlived the killed process"
                await asyncio.sleep(0.05)
            freed = time.monotonic() - killed
            assert freed <= 3.0, freed
            pending.cancel()  # its process is gone: no answer comes
            await asyncio.gather(pending, return_exceptions=True)
            assert (await seat.tokens())["b"]["system"]["hp"] == 10  # the cut-short attack applied nothing
        finally:
            await seat.close()


@pytest.mark.slow
async def test_200_attacks_with_edits_through_the_other_process_meanwhile_none_fails_on_a_changed_token(
    redis_url, store
):
    big = [
        {"id": "a", "name": "A", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
        {"id": "b", "name": "B", "ruleset": "duel", "ownership": {"bob": 3}, "system": {"hp": 100000, "rerolls": 0}},
    ]
    with servers(_args(redis_url), _args(redis_url)) as (one, two):
        seat = await seat_table(Node(one.url, store), tokens=big)
        try:
            attackers = [await seat.join("gm") for _ in range(2)]  # on process one
            seat.server = Node(two.url, store)
            editors = [await seat.join("gm") for _ in range(2)]  # on process two
            results: list[dict] = []
            edits: list[dict] = []
            done = asyncio.Event()
            deadline = time.monotonic() + 120

            async def attack(client: Client) -> None:
                for _ in range(100):
                    if time.monotonic() > deadline:
                        return
                    results.append(await client.call("attack", HIT, timeout=20))

            async def edit(client: Client, token: str) -> None:
                for n in range(5000):
                    if done.is_set() or time.monotonic() > deadline:
                        return
                    edits.append(await client.call("token.update", {"id": token, "name": f"{token}{n}"}, timeout=20))

            editing = [asyncio.ensure_future(edit(c, t)) for c, t in zip(editors, "ab", strict=True)]
            await asyncio.gather(*(attack(c) for c in attackers))
            done.set()
            await asyncio.gather(*editing)
            failures = [r["error"] for r in results if not r["ok"]]
            assert len(results) == 200
            assert failures == []  # no "token changed meanwhile", nor anything else
            refused = [e for e in edits if not e["ok"]]
            # Every edit either went through or was refused naming the attack that held the token.
            odd = [e for e in refused if e["error"]["code"] != "conflict" or "attack" not in e["error"]["details"]]
            assert odd == [], odd[:3]
            assert refused and len(edits) > len(refused)  # edits met attacks, and went through between them
            tokens = await seat.tokens()
            assert tokens["b"]["system"]["hp"] == 100000 - 200 * 2
            assert replay(await store.audit(seat.id)) == tokens
        finally:
            await seat.close()
