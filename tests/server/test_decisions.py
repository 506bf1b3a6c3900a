"""Decisions over the wire: the defender's client is asked, and every way it can go."""

from __future__ import annotations

import asyncio

from .kit import answer, ignore

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}


async def test_the_defender_is_asked_and_their_answer_decides(seat):
    bob = await seat.join("bob", answer("none"))
    gm = await seat.join("gm")
    ack = await gm.ok("attack", ATTACK)
    attack = ack["attack"]
    [decision] = bob.decisions
    assert decision["key"] == "defense" and decision["token"] == "b"
    assert [o["id"] for o in decision["options"]] == ["block", "none"]
    assert decision["default"] == "block" and decision["timeout"] == 0.5
    assert decision["attack"] == {
        "id": attack["id"],
        "ruleset": "duel",
        "attacker": "a",
        "targets": ["b"],
        "user": "gm",
    }
    assert gm.decisions == []  # the owner was connected, so the GM was not asked
    assert attack["decisions"][0]["answer"] == {"option": "none"}
    assert attack["decisions"][0]["how"] == "answered"
    # Two successes, no block: two damage.
    assert attack["tokens"]["b"]["before"]["system"]["hp"] == 10
    assert attack["tokens"]["b"]["after"]["system"]["hp"] == 8
    assert (await seat.tokens())["b"]["system"]["hp"] == 8


async def test_an_ignored_prompt_takes_the_rules_default_on_timeout(seat):
    bob = await seat.join("bob", ignore)
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", ATTACK))["attack"]
    assert attack["decisions"][0]["how"] == "timeout"
    [closed] = await bob.wait_for("decision.closed")
    assert closed["how"] == "timeout" and closed["key"] == "defense"
    assert attack["decisions"][0]["answer"] == {"option": "block"}
    assert attack["tokens"]["b"]["after"]["system"]["hp"] == 9


async def test_nobody_to_ask_takes_the_default_at_once(seat):
    # bob (the defender's owner) and the GM are both away: alice attacks anyway.
    alice = await seat.join("alice")
    attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
    assert attack["decisions"][0]["how"] == "disconnect"
    assert attack["decisions"][0]["answer"] == {"option": "block"}


async def test_the_gm_decides_for_a_defender_whose_owner_is_away(seat):
    gm = await seat.join("gm", answer("none"))
    attack = (await gm.ok("attack", ATTACK))["attack"]
    assert [d["key"] for d in gm.decisions] == ["defense"]
    assert attack["decisions"][0]["how"] == "answered"
    assert attack["tokens"]["b"]["after"]["system"]["hp"] == 8


async def test_a_defender_who_disconnects_mid_prompt_gets_the_default_without_waiting(server):
    from .kit import seat_table

    # A long timeout: the test would time out (5 s) if disconnect were not noticed.
    seat = await seat_table(server, settings={"decision_timeout": 60})
    try:
        bob = await seat.join("bob")

        async def leave(decision):
            asyncio.get_running_loop().create_task(bob.sio.disconnect())
            await asyncio.Event().wait()

        bob.policy = leave
        alice = await seat.join("alice")
        attack = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
        assert len(bob.decisions) == 1
        assert attack["decisions"][0]["how"] == "disconnect"
        assert attack["decisions"][0]["answer"] == {"option": "block"}
    finally:
        await seat.close()


async def test_an_answer_that_is_not_an_option_takes_the_default_and_says_invalid(seat):
    await seat.join("bob", answer("flee"))
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", ATTACK))["attack"]
    assert attack["decisions"][0]["how"] == "invalid"
    assert attack["decisions"][0]["answer"] == {"option": "block"}


async def test_an_answer_may_carry_params_as_an_object(seat):
    await seat.join("bob", answer({"option": "none", "params": {}}))
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", ATTACK))["attack"]
    assert attack["decisions"][0]["how"] == "answered"
    assert attack["decisions"][0]["answer"] == {"option": "none"}


async def test_with_two_tabs_open_the_first_answer_wins(seat):
    async def slow(decision):
        await asyncio.sleep(0.2)
        return "block"

    fast = await seat.join("bob", answer("none"))
    other = await seat.join("bob", slow)
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", ATTACK))["attack"]
    assert len(fast.decisions) == len(other.decisions) == 1
    assert attack["decisions"][0]["answer"] == {"option": "none"}
    # The tab that was too late is told to close its dialog; the winner is not.
    [closed] = await other.wait_for("decision.closed")
    assert closed == {"attack": attack["id"], "key": "defense", "how": "answered"}
    assert fast.named("decision.closed") == []


async def test_the_gm_may_give_answers_in_advance_and_nobody_is_asked(seat):
    bob = await seat.join("bob", answer("block"))
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", {**ATTACK, "answers": {"defense": "none"}}))["attack"]
    assert bob.decisions == []
    assert attack["decisions"][0]["how"] == "given"
    assert attack["tokens"]["b"]["after"]["system"]["hp"] == 8


async def test_steps_reach_the_table_before_the_question_and_the_rest_with_the_result(seat):
    bob = await seat.join("bob", answer("none"))
    carol = await seat.join("carol")
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", ATTACK))["attack"]
    await carol.wait_for("token.updated")
    await bob.wait_for("token.updated")
    # bob saw step 0 (declare) before being asked at step 1 (defend).
    names = [name for name, _ in bob.events]
    assert names.index("attack.step") < names.index("decision")
    for client in (bob, carol):
        events = [(n, d) for n, d in client.events if n != "decision"]
        steps = [d for n, d in events if n == "attack.step"]
        # The step finished before the question goes out on its own; the steps that
        # finish together with the attack travel inside attack.resolved (one message).
        assert [s["index"] for s in steps] == [0]
        assert [s["step"] for s in steps] == attack["steps"][:1]
        # each step says whose attack it is, so a watcher can title its card at once
        assert {(s["attacker"], tuple(s["targets"]), s["user"], s["ruleset"]) for s in steps} == {("a", ("b",), "gm", "duel")}
        assert [n for n, _ in events][-2:] == ["attack.resolved", "token.updated"]
        assert client.named("attack.resolved")[0]["attack"] == attack
        assert client.named("token.updated")[0]["token"] == attack["tokens"]["b"]["after"]


async def test_the_acknowledgement_carries_the_whole_resolution(seat):
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", {**ATTACK, "answers": {"defense": "none"}}))["attack"]
    assert attack["id"].startswith("atk-") and attack["seq"] >= 1
    assert attack["dice"] == "scripted" and attack["dice_used"] == 2
    assert attack["outcome"] == {"hit": True}
    roll = next(s for s in attack["steps"] if s["step"] == "roll")["rolls"][0]
    assert roll["class"] == "Roll" and roll["formula"] == "2d6cs>=4" and roll["total"] == 2
    assert [r["result"] for r in roll["terms"][0]["results"]] == [5, 6]
    assert attack["tokens"]["a"]["before"] == attack["tokens"]["a"]["after"]
    assert attack["tokens"]["b"]["after"]["version"] == attack["tokens"]["b"]["before"]["version"] + 1
    assert attack["changes"] == {"b": {"before": {"hp": 10, "rerolls": 0}, "after": {"hp": 8, "rerolls": 0}}}


async def test_a_seeded_attack_is_reproducible(seat):
    gm = await seat.join("gm")
    request = {"ruleset": "duel", "attacker": "a", "targets": ["c"], "seed": 1234, "answers": {"defense": "none"}}
    first = (await gm.ok("attack", request))["attack"]
    second = (await gm.ok("attack", request))["attack"]
    assert first["seed"] == second["seed"] == 1234
    assert first["steps"] == second["steps"]
    unseeded = (await gm.ok("attack", {k: v for k, v in request.items() if k != "seed"}))["attack"]
    assert isinstance(unseeded["seed"], int)


async def test_other_tables_keep_working_while_one_waits_for_an_answer(server):
    from .kit import seat_table

    slow = await seat_table(server, name="slow", settings={"decision_timeout": 60})
    quick = await seat_table(server, name="quick")
    try:
        answered = asyncio.Event()

        async def wait_then_answer(decision):
            await answered.wait()
            return "none"

        await slow.join("bob", wait_then_answer)
        slow_gm = await slow.join("gm")
        pending = asyncio.ensure_future(slow_gm.call("attack", ATTACK, timeout=10))
        quick_gm = await quick.join("gm")
        for _ in range(3):
            await quick_gm.ok("attack", {**ATTACK, "answers": {"defense": "none"}})
        assert not pending.done()  # the slow table is still waiting for bob
        answered.set()
        ack = await pending
        assert ack["ok"] and ack["attack"]["decisions"][0]["how"] == "answered"
    finally:
        await slow.close()
        await quick.close()


async def test_a_tables_attacks_apply_in_order(seat):
    clients = [await seat.join("gm") for _ in range(4)]
    request = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "answers": {"defense": "none"}}
    acks = await asyncio.gather(*(c.call("attack", {**request, "seed": n}) for n, c in enumerate(clients * 5)))
    assert all(a["ok"] for a in acks)
    attacks = sorted((a["attack"] for a in acks), key=lambda a: a["seq"])
    # Each attack started from the state the one before it left.
    for before, after in zip(attacks, attacks[1:], strict=False):
        assert after["tokens"]["b"]["before"] == before["tokens"]["b"]["after"]
    assert (await seat.tokens())["b"] == attacks[-1]["tokens"]["b"]["after"]


async def test_long_polling_clients_are_asked_and_hear_broadcasts_too(seat):
    from .kit import Client

    bob = await Client(seat.server.url, answer("none"), transports=("polling",)).connect(seat.auth("bob"))
    gm = await Client(seat.server.url, transports=("polling",)).connect(seat.auth("gm"))
    try:
        attack = (await gm.ok("attack", ATTACK))["attack"]
        assert attack["decisions"][0]["how"] == "answered"
        await bob.wait_for("token.updated")
        assert bob.named("attack.resolved")[0]["attack"] == attack
    finally:
        # python-socketio's client waits for its pending long-poll (up to the
        # 25 s ping interval) when it disconnects; the server hanging up is instant.
        server = seat.server.bridge
        for sid in list(server.callers):
            await server.sio.disconnect(sid)
        await bob.close()
        await gm.close()


async def test_the_table_sees_whom_it_waits_for_and_the_gm_takes_the_default_now(server):
    from .kit import seat_table

    # A long timeout: only the GM's "take the default now" can end this question in time.
    seat = await seat_table(server, settings={"decision_timeout": 60})
    try:
        bob = await seat.join("bob", ignore)
        carol = await seat.join("carol")
        gm = await seat.join("gm")
        alice = await seat.join("alice")
        attacking = asyncio.ensure_future(alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))
        [asked] = await carol.wait_for("decision.asked")
        assert asked["key"] == "defense" and asked["token"] == "b" and asked["users"] == ["bob"]
        assert asked["default"] == "block" and asked["timeout"] == 60
        # A player may not cut another player's question short.
        refused = await alice.call("decision.default", {"attack": asked["attack"], "key": "defense"})
        assert refused["error"]["code"] == "forbidden"
        taken = await gm.ok("decision.default", {"attack": asked["attack"], "key": "defense"})
        assert taken["how"] == "default"
        ack = await asyncio.wait_for(attacking, 5)
        decision = ack["attack"]["decisions"][0]
        assert decision["how"] == "default" and decision["answer"] == {"option": "block"}
        [closed] = await bob.wait_for("decision.closed")
        assert closed["how"] == "default"
        [settled] = await carol.wait_for("decision.settled")
        assert settled == {"attack": asked["attack"], "key": "defense", "how": "default"}
        # Once settled there is nothing left to take.
        gone = await gm.call("decision.default", {"attack": asked["attack"], "key": "defense"})
        assert gone["error"]["code"] == "not_found"
    finally:
        await seat.close()


def test_a_question_ends_only_in_a_named_outcome_and_every_open_state_takes_an_answer_or_the_default():
    """prompts.TRANSITIONS, the question's state table: from every open state an answer
    and the GM's default are taken; a settled question moves no more; every outcome the
    table reaches is one the protocol names (``how``)."""
    from vtt_bridge.server.prompts import OPEN, TRANSITIONS, Event, State

    for state in OPEN:
        assert TRANSITIONS[(state, Event.ANSWER)] is State.ANSWERED
        assert TRANSITIONS[(state, Event.GM_DEFAULT)] is State.DEFAULTED
    assert not [pair for pair in TRANSITIONS if pair[0] not in OPEN]
    outcomes = {target for target in TRANSITIONS.values() if target not in OPEN}
    assert {s.value for s in outcomes} == {"answered", "default", "timeout", "disconnect"}
    # Only a drop (not a goodbye, not a timeout), or players not back yet from a restart,
    # lead to the reconnect grace.
    into_grace = {event for (state, event), target in TRANSITIONS.items() if state is State.ASKING and target is State.GRACE}
    assert into_grace == {Event.ALL_OUT_DROPPED, Event.NOT_BACK_YET}
