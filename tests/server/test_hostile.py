"""Hostile input over a real connection (issue 14, items 1, 2 and 10).

Whatever a client sends, it gets an acknowledgement (when it asked for one),
never ``internal``, keeps its connection, and a refused request changes nothing.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from .kit import Client

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "answers": {"defense": "none"}}
LONE = "\ud800"


async def raw(client: Client, frame: str, *, ack: bool = False, timeout: float = 3) -> tuple:
    """Send one socket.io frame as text (``2`` + data; an ack id is put after the ``2``) and wait for its ack."""
    if not ack:
        await client.sio.eio.send(frame)
        return ()
    future = asyncio.get_running_loop().create_future()
    ack_id = client.sio._generate_ack_id("/", lambda *args: future.set_result(args))
    await client.sio.eio.send(f"{frame[0]}{ack_id}{frame[1:]}")
    return await asyncio.wait_for(future, timeout)


async def alive(client: Client) -> None:
    assert client.sio.connected
    assert await client.call("echo", {"still": "here"}) == {"ok": True, "data": {"still": "here"}}


# (event, payload, field the error names) — item 1: lone surrogates anywhere, integers past 2**53
SURROGATES = [
    ("echo", {"text": LONE}, "text"),
    ("token.get", {"id": LONE}, "id"),
    ("token.create", {"id": LONE, "name": "x", "ruleset": "duel", "system": {"hp": 1}}, "id"),
    ("token.create", {"name": "x", "ruleset": "duel", "system": {"hp": 1}, "ownership": {LONE: 3}}, "ownership"),
    ("token.update", {"id": "b", "name": "a" + LONE}, "name"),
    ("attack", {**ATTACK, "request_id": LONE}, "request_id"),
    ("attack", {**ATTACK, "declaration": {"charms": [{"id": LONE}]}}, "declaration"),
    ("key.create", {"user": LONE}, "user"),
    ("echo", {"n": 2**53}, "n"),
    ("echo", {"n": -(2**64)}, "n"),
    ("attack", {**ATTACK, "seed": 2**63 - 1}, "seed"),
    ("token.update", {"id": "b", "version": 2**80}, "version"),
    ("attack.history", {"before": 10**30}, "before"),
    ("echo", {"bin": b"\x00\x01"}, "bin"),
    ("attack", {**ATTACK, "request_id": b"r1"}, "request_id"),
]


@pytest.mark.parametrize("event,payload,field", SURROGATES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SURROGATES)])
async def test_invalid_text_numbers_and_binary_are_refused_naming_the_field(seat, event, payload, field):
    gm = await seat.join("gm")
    before = await seat.state()
    ack = await gm.call(event, payload)
    assert ack["ok"] is False, ack
    assert ack["error"]["code"] == "invalid_request", ack
    assert field in ack["error"]["details"], ack
    assert await seat.state() == before
    await alive(gm)


async def test_a_player_gets_the_same_answer(seat):
    bob = await seat.join("bob")
    ack = await bob.call("token.update", {"id": "b", "name": LONE})
    assert ack["error"]["code"] == "invalid_request" and "name" in ack["error"]["details"]
    await alive(bob)


# item 10: frames that are not proper socket.io JSON
FRAMES = [
    ('2["echo",' + "1" * 5000 + "]", "_schema"),  # a 5,000-digit integer
    ('2["echo",{"a":', "_schema"),  # truncated JSON
    ("2" + "[" * 1000 + "]" * 1000, "event"),  # 1,000-deep nesting
    ('2["echo",{"a":' + "[" * 1000 + "]" * 1000 + "}]", "a"),
    ('2["echo",' + "[" * 100_000 + "]" * 100_000 + "]", "_schema"),  # deeper than any parser's stack
    ('2["echo",NaN]', "_schema"),
    ('2["echo",{"a":Infinity}]', "a"),
    ('2["echo",{"a":1e400}]', "a"),
    ('2{"event":"echo"}', "event"),
    ("2[]", "event"),
    ('2[5,{"a":1}]', "event"),
]


@pytest.mark.parametrize("frame,field", FRAMES, ids=[f"frame-{i}" for i in range(len(FRAMES))])
async def test_a_malformed_frame_is_answered_and_costs_nothing(seat, frame, field):
    gm = await seat.join("gm")
    other = await seat.join("alice")
    (ack,) = await raw(gm, frame, ack=True)
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request", ack
    assert field in ack["error"]["details"], ack
    await alive(gm)
    await alive(other)


async def test_frames_without_an_ack_id_are_harmless(seat):
    gm = await seat.join("gm")
    before = await seat.state()
    for frame in ['2["echo",{"a":', '2["token.delete",{"id":"a\\ud800"}]', "7", "4{}", "9garbage", '3["x"]']:
        await raw(gm, frame)
    await alive(gm)
    assert await seat.state() == before


@pytest.mark.parametrize("garbage", [{"option": LONE}, b"none", {"option": "none", "n": 2**60}, [[[[]]]] * 1])
async def test_a_garbled_decision_answer_is_the_rules_default(server, garbage):
    from .kit import seat_table

    seat = await seat_table(server)
    try:
        gm = await seat.join("gm")

        async def garbled(decision):
            # text that is not Unicode, binary, an inexact number: the answer counts as invalid
            return garbage

        bob = await seat.join("bob", garbled)
        ack = await gm.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [6, 1, 1, 1]})
        assert ack["ok"] is True, ack
        decisions = ack["attack"]["decisions"]
        assert decisions and decisions[0]["how"] == "invalid", decisions
        await alive(bob)
    finally:
        await seat.close()


# item 2: reserved names
@pytest.mark.parametrize("event", ["connect", "disconnect", "connect_error", "disconnecting", "newListener"])
async def test_reserved_event_names_are_refused_and_touch_nothing(seat, event, caplog):
    caplog.set_level(logging.DEBUG)
    alice = await seat.join("alice")
    other = await Client(seat.server.url).connect(seat.auth("gm"))
    seat.clients.append(other)
    users_before = (await alice.ok("table.get"))["users"]
    # connect with another table's auth, disconnect with a reason, or bare
    for payload in ({"table": "t-other", "key": "k"}, "io client disconnect", None):
        ack = await alice.call(event, payload)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid_request", ack
        assert "event" in ack["error"]["details"]
    await alive(alice)
    assert (await alice.ok("table.get"))["users"] == users_before
    # still signed in and still receiving the table's broadcasts
    await other.ok("token.update", {"id": "a", "name": "Renamed"})
    await alice.wait_for("token.updated")
    await asyncio.sleep(0.05)
    assert not [r for r in caplog.records if "exception" in r.getMessage().lower() or r.exc_info]


async def test_frames_that_are_no_engine_io_packet_cost_nothing(seat, caplog):
    gm = await seat.join("gm")
    caplog.set_level(logging.WARNING)
    for frame in ["4", "9zz", "4/", "42", "4" + "[" * 5]:
        await gm.sio.eio.ws.send_str(frame)
        await alive(gm)
    # A frame that does not even start with an engine.io packet type ends that one
    # connection (python-engineio's own behaviour), without a traceback; the table goes on.
    for frame in ["x", ""]:
        other = await seat.join("bob")
        await other.sio.eio.ws.send_str(frame)
        async with asyncio.timeout(5):
            while any(c.user == "bob" for c in seat.server.bridge.callers.values()):
                await asyncio.sleep(0.02)
        await other.close()
        await alive(gm)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


PACKETS = [
    '2["echo",{}]',
    '217["attack",{"ruleset":"duel","targets":["b"]}]',
    "2007[\"echo\",1,2]",
    "2" + "9" * 100 + '["echo",{}]',
    "2" + "9" * 101 + '["echo",{}]',  # an id too long
    '2["connect",{}]',  # a reserved name
    '2[1,{}]',
    "2[]",
    '2{"a":1}',
    '2/admin,3["echo",{}]',  # another namespace
    '21-["echo",{"_placeholder":true,"num":0}]',  # an attachment announced
    '23["echo",{"n":12345678901234567}]',  # past 2**53
    '23["echo","\\ud800"]',  # a lone surrogate
    '23["echo",{"n":1e400}]',
    '23["echo",',  # truncated
    "2١[\"echo\",{}]",  # a digit that is not ASCII
    '2["echo",{"x":"' + "y" * 300 + '"}]',
]


@pytest.mark.parametrize("encoded", PACKETS)
def test_a_packet_decodes_to_an_event_or_a_refusal_never_an_exception(encoded):
    """Each packet in the shape clients send decodes to an event with a name, or to an
    event carrying a :class:`Refused` marker (answered with the error); none raises."""
    from vtt_bridge.server.wire import Refused, packet_class

    cls = packet_class(200)
    pkt = cls(encoded_packet=encoded)
    assert pkt.packet_type == 2, encoded
    name = pkt.data[0]
    assert isinstance(name, (str, Refused)), (encoded, pkt.data)
    if encoded in PACKETS[:4]:
        assert isinstance(name, str), encoded
    if encoded in PACKETS[5:9] or encoded in PACKETS[11:15]:
        assert isinstance(name, Refused), encoded