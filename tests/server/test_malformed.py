"""Malformed payloads for every event: a clear error, nothing changed, the server alive."""

from __future__ import annotations

import pytest

from vtt_bridge.server import EVENTS

ATTACK = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "answers": {"defense": "none"}}

# (event, payload, expected code, a field named in details)
BAD = [
    ("rulesets.list", {"x": 1}, "invalid_request", "x"),
    ("rulesets.list", "text", "invalid_request", "_schema"),
    ("table.get", [1, 2], "invalid_request", "_schema"),
    ("table.update", {}, "invalid_request", "decision_timeout"),
    ("table.update", {"decision_timeout": -1}, "invalid_request", "decision_timeout"),
    ("table.update", {"decision_timeout": "soon"}, "invalid_request", "decision_timeout"),
    ("table.update", {"packs": "excellencies"}, "invalid_request", "packs"),
    ("table.update", {"packs": ["nope"]}, "invalid_request", "packs"),
    ("attack.whatif", {}, "invalid_request", "attack"),
    ("attack.whatif", {"attack": "atk-nope"}, "not_found", "attack"),
    ("attack.whatif", {"attack": "atk-nope", "with": "p"}, "invalid_request", "with"),
    ("attack.whatif.apply", {}, "invalid_request", "attack"),
    ("attack.whatif.apply", {"attack": "atk-nope", "answers": []}, "invalid_request", "answers"),
    ("attack.whatif.apply", {"attack": "atk-nope"}, "not_found", "attack"),
    ("key.create", {"user": "gm"}, "invalid_request", "user"),
    ("key.create", {"user": "two words"}, "invalid_request", "user"),
    ("key.create", 42, "invalid_request", "_schema"),
    ("key.revoke", {"user": "gm"}, "invalid_request", "user"),
    ("key.revoke", {"user": "nobody"}, "not_found", "user"),
    ("key.revoke", {}, "invalid_request", "user"),
    ("token.create", {"name": "x", "ruleset": "duel"}, "invalid_request", "system"),
    ("token.create", {"name": "x", "ruleset": "duel", "system": "hp"}, "invalid_request", "system"),
    ("token.create", {"name": "x", "ruleset": "duel", "system": {"hp": "lots"}}, "invalid_request", "token"),
    ("token.create", {"name": "x", "ruleset": "duel", "system": {"hp": 1, "mana": 3}}, "invalid_request", "token"),
    (
        "token.create",
        {"name": "x", "ruleset": "duel", "system": {"hp": 1}, "ownership": {"al": 7}},
        "invalid_request",
        "ownership",
    ),
    ("token.create", {"name": "x", "ruleset": "chess", "system": {"hp": 1}}, "unknown_ruleset", "ruleset"),
    ("token.create", {"id": "a", "name": "x", "ruleset": "duel", "system": {"hp": 1}}, "conflict", "token"),
    ("token.get", {}, "invalid_request", "id"),
    ("token.get", {"id": ""}, "invalid_request", "id"),
    ("token.get", {"id": "zz"}, "not_found", "token"),
    ("token.list", {"ruleset": "duel"}, "invalid_request", "ruleset"),
    ("token.update", {"system": {"hp": 1}}, "invalid_request", "id"),
    ("token.update", {"id": "b", "version": "new"}, "invalid_request", "version"),
    ("token.update", {"id": "b", "system": {"hp": "lots"}}, "invalid_request", "token"),
    ("token.update", {"id": "b", "colour": "red"}, "invalid_request", "colour"),
    ("token.update", {"id": "b", "version": 99, "name": "x"}, "conflict", "version"),
    ("token.update", {"id": "zz", "name": "x"}, "not_found", "token"),
    ("token.delete", {"id": 5}, "invalid_request", "id"),
    ("token.delete", {"id": "zz"}, "not_found", "token"),
    ("attack", {}, "invalid_request", "ruleset"),
    ("attack", {**ATTACK, "targets": "b"}, "invalid_request", "targets"),
    ("attack", {**ATTACK, "targets": []}, "invalid_request", "targets"),
    ("attack", {**ATTACK, "targets": ["b", "c", "a", "b"]}, "invalid_request", "targets"),
    ("attack", {**ATTACK, "targets": ["a"]}, "invalid_request", "targets"),
    ("attack", {**ATTACK, "targets": ["zz"]}, "not_found", "token"),
    ("attack", {**ATTACK, "attacker": "zz"}, "not_found", "token"),
    ("attack", {**ATTACK, "ruleset": "chess"}, "unknown_ruleset", "ruleset"),
    ("attack", {**ATTACK, "declaration": {"bonus": "big"}}, "invalid_request", "declaration"),
    ("attack", {**ATTACK, "declaration": [1]}, "invalid_request", "declaration"),
    ("attack", {**ATTACK, "seed": -1}, "invalid_request", "seed"),
    ("attack", {**ATTACK, "seed": 1.5}, "invalid_request", "seed"),
    ("attack", {**ATTACK, "seed": 2**70}, "invalid_request", "seed"),  # too big for orjson: still a field error
    ("attack", {**ATTACK, "dice": [0, 7]}, "invalid_request", "dice"),
    ("attack", {**ATTACK, "dice": [5]}, "dice_exhausted", "given"),
    ("attack", {**ATTACK, "answers": {"defense": "flee"}}, "invalid_request", "answers"),
    ("attack", {**ATTACK, "answers": {"defense": 7}}, "invalid_request", "answer"),
    ("attack", {**ATTACK, "request_id": ""}, "invalid_request", "request_id"),
    ("attack", {**ATTACK, "extra": True}, "invalid_request", "extra"),
    ("attack.odds", {}, "invalid_request", "ruleset"),
    ("attack.odds", {**ATTACK, "samples": 5}, "invalid_request", "samples"),
    ("attack.odds", {**ATTACK, "method": "guess"}, "invalid_request", "method"),
    ("attack.odds", {**ATTACK, "method": "exact"}, "invalid_request", "method"),
    ("attack.odds", {**ATTACK, "attacker": "zz"}, "not_found", "token"),
    ("attack.odds", {**ATTACK, "ruleset": "chess"}, "unknown_ruleset", "ruleset"),
    ("attack.odds", {**ATTACK, "answers": {"defense": "flee"}}, "invalid_request", "answers"),
    ("attack.history", {"limit": 0}, "invalid_request", "limit"),
    ("attack.history", {"before": "x"}, "invalid_request", "before"),
    ("attack.get", {}, "invalid_request", "id"),
    ("attack.get", {"id": ["x"]}, "invalid_request", "id"),
    ("attack.get", {"id": "atk-nope"}, "not_found", "attack"),
    ("attack.undo", {"id": 3}, "invalid_request", "id"),
    ("attack.undo", {"id": "atk-nope"}, "not_found", "attack"),
    ("table.export", {"x": 1}, "invalid_request", "x"),
    ("tokens.import", {}, "invalid_request", "tokens"),
    ("tokens.import", {"tokens": "all"}, "invalid_request", "tokens"),
    ("tokens.import", {"tokens": [{"id": "d", "name": "x", "ruleset": "duel", "system": {"hp": "lots"}}]}, "invalid_request", "tokens"),
    ("tokens.import", {"tokens": [{"name": "x", "ruleset": "duel", "system": {"hp": 1}}]}, "invalid_request", "tokens"),
    ("tokens.import", {"tokens": [], "format": "foundry"}, "invalid_request", "format"),
    ("table.sync", {"since": -1}, "invalid_request", "since"),
    ("decision.default", {"attack": "atk-x"}, "invalid_request", "key"),
    ("decision.default", {"attack": "atk-x", "key": "defense", "how": "now"}, "invalid_request", "how"),
    ("table.sync", {"sinse": 1}, "invalid_request", "sinse"),
]


def test_every_event_but_echo_has_malformed_cases():
    assert {event for event, *_ in BAD} == set(EVENTS) - {"echo"}


@pytest.mark.parametrize("event,data,code,field", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
async def test_a_malformed_request_is_refused_clearly_and_changes_nothing(seat, event, data, code, field):
    gm = await seat.join("gm")
    before = await seat.state()
    ack = await gm.call(event, data)
    assert ack["ok"] is False
    error = ack["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    assert field in repr(error["details"]), error
    assert await seat.state() == before
    assert (await gm.call("echo", {"still": "here"})) == {"ok": True, "data": {"still": "here"}}


@pytest.mark.parametrize("event", ["nope", "token.destroy", "attack.step"])
async def test_an_unknown_event_gets_an_error_acknowledgement(seat, event):
    gm = await seat.join("gm")
    ack = await gm.call(event, {})
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"
    assert "event" in ack["error"]["details"]


async def test_an_event_with_several_arguments_is_refused(seat):
    gm = await seat.join("gm")
    ack = await gm.sio.call("token.get", ({"id": "a"}, {"id": "b"}), timeout=5)
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"


async def test_an_event_without_an_acknowledgement_is_handled_and_harmless(seat):
    gm = await seat.join("gm")
    before = await seat.state()
    await gm.sio.emit("token.delete", {"id": "zz"})
    await gm.sio.emit("attack", "garbage")
    assert (await gm.call("echo", 1)) == {"ok": True, "data": 1}
    assert await seat.state() == before
