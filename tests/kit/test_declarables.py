"""The host's side of declarables and token flags: collected per plugin, checked at start-up."""

from __future__ import annotations

import pytest
from marshmallow import fields

from vtt_bridge import Declarable, InvalidRequest, Param, PluginValidationError, StrictSchema, Token, hookimpl
from vtt_bridge import testing as vt

RULES = "tests.kit.packs.duel_rules"
FIGHTERS = {"a": {"hp": 10}, "b": {"hp": 10}}


class Lunge:
    @hookimpl
    def vtt_bridge_declarables(self, ruleset):
        return [Declarable(id="lunge", label="Lunge", plugin="whatever", params={"reach": Param("integer", minimum=1, maximum=2)})]


class Mark(StrictSchema):
    marked = fields.Boolean(load_default=False)


class Marks:
    @hookimpl
    def vtt_bridge_token_flags(self, ruleset):
        return Mark if ruleset == "duel" else None


def test_declarables_are_named_for_the_plugin_that_lists_them():
    host = vt.host(RULES, Lunge(), entry_points=False)
    listed = {d.id: d for d in host.declarables("duel")}
    assert set(listed) == {"riposte", "lunge"}
    assert listed["lunge"].plugin == "Lunge"  # the name it was loaded under, whatever it said


@pytest.mark.parametrize(
    "charms, details",
    [
        ([{"id": "lunge", "reach": 3}], {"0": {"reach": ["Must be between 1 and 2."]}}),
        ([{"id": "riposte"}, {"id": "lunge", "reach": 1, "power": 2}], {"1": {"power": ["Unknown parameter; this one takes: reach."]}}),
        ([{"reach": 1}], {"0": {"id": ["Missing data for required field."]}}),
    ],
)  # fmt: skip
def test_a_declaration_naming_a_bad_charm_is_refused_before_any_hook(charms, details):
    host = vt.host(RULES, Lunge(), entry_points=False)
    with pytest.raises(InvalidRequest) as err:
        vt.resolve("duel", FIGHTERS, host=host, declaration={"charms": charms}, dice=[6, 6])
    assert err.value.details == {"declaration": {"charms": details}}


def test_two_plugins_listing_one_id_is_a_start_up_error():
    class Again:
        @hookimpl
        def vtt_bridge_declarables(self, ruleset):
            return [Declarable(id="riposte", label="Riposte too", plugin="")]

    with pytest.raises(PluginValidationError) as err:
        vt.host(RULES, Again(), entry_points=False)
    assert err.value.details["plugins"] == ["Again", RULES] and err.value.details["id"] == "riposte"


@pytest.mark.parametrize("returned", [["not a declarable"], "oops"])
def test_a_plugin_returning_nonsense_is_a_start_up_error_naming_it(returned):
    class Nonsense:
        @hookimpl
        def vtt_bridge_declarables(self, ruleset):
            return returned

    with pytest.raises(PluginValidationError) as err:
        vt.host(RULES, Nonsense(), entry_points=False)
    assert err.value.details["plugin"] == "Nonsense"


def test_a_flags_hook_returning_no_schema_is_a_start_up_error():
    class Bad:
        @hookimpl
        def vtt_bridge_token_flags(self, ruleset):
            return {"marked": "bool"}

    with pytest.raises(PluginValidationError) as err:
        vt.host(RULES, Bad(), entry_points=False)
    assert err.value.details == {"plugin": "Bad", "hook": "vtt_bridge_token_flags"}


def test_flags_are_checked_per_plugin_and_read_in_hooks():
    seen = []

    class Reader:
        @hookimpl
        def duel_roll(self, ctx):
            seen.append(ctx.attacker.flags.get("Marks"))

    host = vt.host(RULES, Marks(), Reader(), entry_points=False)
    token = host.validate_token({"id": "a", "name": "A", "ruleset": "duel", "system": {"hp": 3}, "flags": {"Marks": {}}})
    assert token.to_dict()["flags"] == {"Marks": {"marked": False}}  # defaults filled in
    assert token.system["rerolls"] == 0
    with pytest.raises(InvalidRequest) as err:
        host.validate_token(Token("a", "A", "duel", {"hp": 3}, flags={"Marks": {"marked": "maybe"}, "Nobody": {}}))
    assert err.value.details == {"flags": {
        "Marks": {"marked": ["Not a valid boolean."]},
        "Nobody": ["No installed plugin keeps flags on duel tokens as 'Nobody'; known: Marks."],
    }}  # fmt: skip
    marked = host.validate_token(Token("a", "A", "duel", {"hp": 10}, flags={"Marks": {"marked": True}}))
    vt.resolve("duel", {"a": marked, "b": vt.make_token("duel", "b", {"hp": 10}, host=host)}, host=host,
               dice=[6, 6], answers={"defense": "none"})  # fmt: skip
    assert seen == [{"marked": True}]
