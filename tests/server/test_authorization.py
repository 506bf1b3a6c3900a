"""Who may do what, checked by the server: every event × GM, owner, non-owner,
another table's GM, and a bad key.

alice owns token ``a``; carol only observes ``c``. A refused request changes
nothing.
"""

from __future__ import annotations

import pytest
import socketio

from vtt_bridge.server import EVENTS

from .kit import Client, seat_table

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"]}

# (event, payload, allowed for: gm, owner (alice), non-owner (carol))
CASES = [
    ("echo", {"x": 1}, (True, True, True)),
    ("rulesets.list", None, (True, True, True)),
    ("table.get", None, (True, True, True)),
    ("table.update", {"decision_timeout": 2}, (True, False, False)),
    ("key.create", {"user": "dave"}, (True, False, False)),
    ("key.revoke", {"user": "bob"}, (True, False, False)),
    ("token.create", {"id": "d", "name": "New", "ruleset": "duel", "system": {"hp": 3}}, (True, False, False)),
    ("token.get", {"id": "a"}, (True, True, True)),
    ("token.list", None, (True, True, True)),
    ("token.update", {"id": "a", "system": {"hp": 7}}, (True, True, False)),
    ("token.update", {"id": "a", "name": "Renamed"}, (True, True, False)),
    ("token.update", {"id": "a", "ownership": {"carol": 3}}, (True, False, False)),
    ("token.delete", {"id": "a"}, (True, True, False)),
    ("attack", ATTACK, (True, True, False)),
    ("attack", {**ATTACK, "seed": 5}, (True, False, False)),
    ("attack", {**ATTACK, "dice": [5, 6]}, (True, False, False)),
    ("attack", {**ATTACK, "answers": {"defense": "none"}}, (True, False, False)),
    ("attack.odds", {**ATTACK, "samples": 200}, (True, True, False)),
    ("attack.odds", {**ATTACK, "samples": 200, "answers": {"defense": "none"}}, (True, True, False)),
    # What if: the GM of any attack, a player of their own (the first attack is the GM's).
    ("attack.whatif", "WHATIF", (True, False, False)),
    ("attack.whatif.apply", "WHATIF", (True, False, False)),
    ("table.update", {"packs": []}, (True, False, False)),
    ("attack.history", None, (True, True, True)),
    ("attack.get", "FIRST", (True, True, True)),
    ("attack.undo", "FIRST", (True, False, False)),
    ("table.export", None, (True, False, False)),
    ("tokens.import", {"tokens": [{"id": "d", "name": "New", "ruleset": "duel", "system": {"hp": 3}}]}, (True, False, False)),
    ("table.sync", {"since": 0}, (True, True, True)),
    # No question is out: the GM passes the check and hears there is nothing to settle.
    ("decision.default", {"attack": "atk-none", "key": "defense"}, ("not_found", False, False)),
]
ROLES = ("gm", "alice", "carol")


def test_every_event_is_in_the_matrix():
    assert {event for event, _, _ in CASES} == set(EVENTS)


@pytest.fixture
async def table(server):
    seat = await seat_table(server)
    gm = await seat.join("gm")
    # One attack on record, for attack.get and attack.undo.
    first = (await gm.ok("attack", {**ATTACK, "dice": [5, 6], "answers": {"defense": "none"}}))["attack"]
    seat.first = first["id"]
    yield seat
    await seat.close()


def payload(data, seat):
    if data == "WHATIF":
        return {"attack": seat.first}
    return {"id": seat.first} if data == "FIRST" else data


@pytest.mark.parametrize("role", range(3), ids=ROLES)
@pytest.mark.parametrize("event,data,allowed", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
async def test_the_matrix(table, event, data, allowed, role):
    client = await table.join(ROLES[role])
    before = await table.state()
    ack = await client.call(event, payload(data, table))
    if allowed[role] == "not_found":
        assert ack["error"]["code"] == "not_found", ack
    elif allowed[role]:
        assert ack["ok"] is True, ack
    else:
        assert ack == {"ok": False, "error": ack["error"]}
        assert ack["error"]["code"] == "forbidden", ack
        assert ack["error"]["message"]
        assert await table.state() == before


@pytest.mark.parametrize("event,data,allowed", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
async def test_another_tables_gm_cannot_reach_this_table(server, table, event, data, allowed):
    other = await seat_table(server, name="other", tokens=[])
    try:
        intruder = await other.join("gm")
        before = await table.state()
        ack = await intruder.call(event, payload(data, table))
        assert await table.state() == before
        if ack["ok"]:
            # Whatever succeeded happened on the intruder's own table.
            text = repr(ack)
            assert table.id not in text and table.first not in text
            assert "Attacker" not in text and "Defender" not in text
        else:
            assert ack["error"]["code"] in ("not_found", "invalid_request"), ack
    finally:
        await other.close()


async def test_another_table_hears_none_of_this_tables_broadcasts(server, table):
    other = await seat_table(server, name="other", tokens=[])
    try:
        listener = await other.join("gm")
        here = await table.join("carol")
        gm = await table.join("gm")
        await gm.ok("attack", {**ATTACK, "dice": [5, 6], "answers": {"defense": "none"}})
        await gm.ok("token.update", {"id": "c", "name": "Renamed"})
        await here.wait_for("token.updated", 2)
        assert listener.events == []
    finally:
        await other.close()


@pytest.mark.parametrize(
    "auth",
    [
        "BAD KEY",
        "OTHER TABLE KEY",
        "NO SUCH TABLE",
    ],
)
async def test_a_bad_key_is_refused_with_a_reason_and_reaches_no_event(server, table, auth):
    other = await seat_table(server, name="other", tokens=[])
    try:
        credentials = {
            "BAD KEY": {"table": table.id, "key": "not-a-key"},
            "OTHER TABLE KEY": {"table": table.id, "key": other.keys["gm"]},
            "NO SUCH TABLE": {"table": "t-000000000000", "key": table.keys["gm"]},
        }[auth]
        client = Client(server.url)
        assert await client.try_connect(credentials) is False
        assert client.refused["message"] == "the key does not open this table"
        assert client.refused["data"]["code"] == "forbidden"
        for event in EVENTS:
            with pytest.raises(socketio.exceptions.BadNamespaceError):
                await client.call(event, {}, timeout=1)
    finally:
        await other.close()


@pytest.mark.parametrize(
    "auth,field",
    [
        (None, "auth"),
        ("a string", "auth"),
        ({"table": "t-1"}, "auth"),
        ({"table": 5, "key": "k"}, "auth"),
        ({"table": "t-1", "key": "k", "events": ["nope"]}, "events"),
    ],
)
async def test_malformed_auth_is_refused_as_invalid(server, auth, field):
    client = Client(server.url)
    assert await client.try_connect(auth) is False
    assert client.refused["data"]["code"] == "invalid_request"
    assert field in client.refused["data"]["details"]


async def test_a_reissued_key_replaces_the_old_one(table):
    gm = await table.join("gm")
    new = (await gm.ok("key.create", {"user": "alice"}))["key"]
    old = Client(table.server.url)
    assert await old.try_connect(table.auth("alice")) is False
    fresh = await Client(table.server.url).connect({"table": table.id, "key": new})
    assert (await fresh.ok("table.get"))["user"] == "alice"
    await fresh.close()
