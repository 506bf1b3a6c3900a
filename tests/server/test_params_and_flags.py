"""Typed parameters, declarables and token flags over a real socket (issues 10, 13, 14)."""

from __future__ import annotations

import os

from vtt_bridge import Declarable, hookimpl
from vtt_bridge.server import BridgeServer

from . import duel_plugin
from .conftest import config
from .kit import seat_table
from .test_exalted2e import default, exalted  # noqa: F401  (the fixture)

REQUEST = {"ruleset": "exalted2e", "attacker": "anoria", "targets": ["monk"], "declaration": {"weapon": "fist"}}


async def test_an_out_of_range_answer_is_the_default_recorded_invalid_and_the_attack_resolves(exalted):
    """Issue 14, item 6: a defender answering ``second_excellency: 99`` (or a parameter never offered)
    cannot veto the attack: the rules' default stands, ``how: invalid``, nothing unchecked kept."""
    seat = exalted
    junk = "x" * 10_000

    async def cheat(decision):
        if decision["key"] == "defense":
            return {"option": "parry", "params": {"second_excellency": 99, "junk": junk}}
        return decision["default"]

    bob = await seat.join("bob", cheat)
    alice = await seat.join("alice", default)
    ack = await alice.call("attack", REQUEST)
    assert ack["ok"] is True, ack
    attack = ack["attack"]
    defense = attack["decisions"][0]
    assert defense["key"] == "defense" and defense["how"] == "invalid"
    assert defense["answer"] == {"option": bob.decisions[0]["default"]}
    assert junk not in str(attack)
    # the option a defender is offered says what it takes, as JSON Schema
    parry = next(o for o in bob.decisions[0]["options"] if o["id"] == "parry")
    assert parry["params"]["properties"]["second_excellency"] == {
        "type": "integer", "title": "Essence Triumphant DV", "minimum": 0, "maximum": 10, "default": 0,
        "description": "points of DV (2 motes each)",
    }  # fmt: skip
    assert "stunt" not in parry["params"]["properties"]  # the stunt is its own decision, after the roll
    assert parry["params"]["additionalProperties"] is False
    nothing = next(o for o in bob.decisions[0]["options"] if o["id"] == "nothing")
    assert "params" not in nothing


async def test_a_gm_answer_given_in_advance_out_of_range_is_invalid_request(exalted):
    gm = await exalted.join("gm")
    answers = {"defense": {"option": "nothing", "params": {"stunt": 2}}}
    ack = await gm.call("attack", {**REQUEST, "answers": answers})
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"
    assert ack["error"]["details"]["answers"] == {"defense": {"params": {"stunt": [
        "Unknown parameter; this one takes: none."
    ]}}}  # fmt: skip


async def test_an_unknown_charm_or_param_is_invalid_request_naming_the_field(exalted):
    alice = await exalted.join("alice", default)
    cases = [
        ([{"id": "frist-excellency", "dice": 1}], {"0": {"id": [
            "Unknown Charm 'frist-excellency'; known: first-excellency, second-excellency"]}}),
        ([{"id": "first-excellency", "dice": 99}], {"0": {"dice": ["Must be between 0 and 20."]}}),
        ([{"id": "first-excellency", "die": 1}], {"0": {"die": ["Unknown parameter; this one takes: dice."]}}),
    ]  # fmt: skip
    for charms, details in cases:
        request = {**REQUEST, "declaration": {"weapon": "fist", "charms": charms}}
        ack = await alice.call("attack", request)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid_request", ack
        assert ack["error"]["details"] == {"declaration": {"charms": details}}
    assert (await exalted.tokens())["anoria"]["version"] == 1  # nothing changed


async def test_rulesets_list_carries_declarables_and_flags(exalted):
    gm = await exalted.join("gm")
    listed = {r["id"]: r for r in (await gm.ok("rulesets.list"))["rulesets"]}
    ex = listed["exalted2e"]
    first = next(d for d in ex["declarables"] if d["id"] == "first-excellency")
    assert first["plugin"] == "excellencies" and first["kind"] == "charm" and first["inert"] is True
    assert first["params"]["properties"]["dice"] == {
        "type": "integer", "title": "Dice", "minimum": 0, "maximum": 20, "default": 0
    }  # fmt: skip
    assert {d["id"]: d["kind"] for d in ex["declarables"]}["third-excellency"] == "option"
    assert ex["flags"]["excellencies"]["properties"]["charms"]["type"] == "array"


async def test_token_flags_are_validated_stored_and_merged(exalted):
    gm = await exalted.join("gm")
    anoria = (await exalted.tokens())["anoria"]
    assert anoria["flags"] == {}
    base = {"name": "Kai", "ruleset": "exalted2e", "system": anoria["system"]}
    bad = await gm.call("token.create", {**base, "id": "kai", "flags": {"excelencies": {"charms": []}}})
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_request"
    assert list(bad["error"]["details"]["flags"]) == ["excelencies"]
    bad = await gm.call("token.create", {**base, "id": "kai", "flags": {"excellencies": {"charms": ["fourth"]}}})
    assert bad["error"]["details"]["flags"] == {"excellencies": {"charms": {"0": ["Must be one of: "
        "first-excellency, second-excellency, third-excellency, solar-counterattack."]}}}  # fmt: skip
    made = (await gm.ok("token.create", {**base, "id": "kai", "flags": {"excellencies": {"charms": [
        "first-excellency"]}}}))["token"]  # fmt: skip
    assert made["flags"] == {"excellencies": {"charms": ["first-excellency"]}}
    updated = (await gm.ok("token.update", {"id": "kai", "flags": {"excellencies": {"charms": [
        "second-excellency"]}}}))["token"]  # fmt: skip
    assert updated["flags"] == {"excellencies": {"charms": ["second-excellency"]}}
    assert (await exalted.tokens())["kai"]["flags"] == updated["flags"]
    bad = await gm.call("token.update", {"id": "kai", "flags": {"nobody": {}}})
    assert bad["error"]["code"] == "invalid_request" and list(bad["error"]["details"]["flags"]) == ["nobody"]


class Quitter:
    """A pack that ends the process when its Charm is declared (or tries to)."""

    @hookimpl
    def vtt_bridge_declarables(self, ruleset):
        return [Declarable(id="quit", label="Quit", plugin="")] if ruleset == "duel" else None

    @hookimpl
    def duel_roll(self, ctx):
        if ctx.declared("quit") is not None:
            raise SystemExit(3)


async def test_a_pack_raising_system_exit_is_a_plugin_error_and_the_server_lives(tmp_path):
    plugins = (duel_plugin.rules(), Quitter())
    async with BridgeServer(config(tmp_path, plugins=plugins)) as running:
        seat = await seat_table(running)
        try:
            gm = await seat.join("gm")
            attack = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [6, 6], "answers": {"defense": "none"}}
            ack = await gm.call("attack", {**attack, "declaration": {"charms": [{"id": "quit"}]}})
            assert ack["ok"] is False and ack["error"]["code"] == "plugin_error"
            details = ack["error"]["details"]
            assert (details["plugin"], details["hook"], details["step"]) == ("Quitter", "duel_roll", "roll")
            assert details["exception"] == "SystemExit"
            assert (await gm.call("echo", {"still": "here"})) == {"ok": True, "data": {"still": "here"}}
            assert (await gm.ok("attack", attack))["attack"]["outcome"]["hit"] is True
            assert os.getpid()  # still this process
        finally:
            await seat.close()


class Vandal:
    """A pack that leaves the defender's hit points invalid when ``vandal`` is declared."""

    @hookimpl
    def vtt_bridge_declarables(self, ruleset):
        return [Declarable(id="vandal", label="Vandal", plugin="")] if ruleset == "duel" else None

    @hookimpl
    def duel_counter(self, ctx):
        if ctx.declared("vandal") is not None:
            ctx.update(ctx.defender.id, hp="lots")


async def test_a_pack_leaving_a_token_invalid_is_named_with_hook_and_step_and_nothing_applies(tmp_path):
    """Issue 14, item 7: the plugin_error names plugin, hook and step."""
    async with BridgeServer(config(tmp_path, plugins=(duel_plugin.rules(), Vandal()))) as running:
        seat = await seat_table(running)
        try:
            gm = await seat.join("gm")
            attack = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [6, 6], "answers": {"defense": "none"},
                      "declaration": {"charms": [{"id": "vandal"}]}}  # fmt: skip
            ack = await gm.call("attack", attack)
            assert ack["ok"] is False and ack["error"]["code"] == "plugin_error"
            details = ack["error"]["details"]
            assert (details["plugin"], details["hook"], details["step"]) == ("Vandal", "duel_counter", "counter")
            assert details["token"] == "b" and details["errors"] == {"token": {"hp": ["Not a valid integer."]}}
            assert (await seat.tokens())["b"]["version"] == 1  # nothing applied
        finally:
            await seat.close()
