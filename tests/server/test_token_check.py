"""The check of what an attack leaves (``Host.changed_token``, run in the resolver) loads only what changed.

A stored token passed its ruleset's schema when it was written; an attack changes a
few of its fields. The nested objects it leaves as they were (a character's
abilities, weapons, armor) are taken as they are; whatever changed is loaded in full,
and a ruleset or pack that leaves a changed field invalid is still a ``plugin_error``.
"""

from __future__ import annotations

import pytest

from vtt_bridge import make_host
from vtt_bridge.engine.tokens import thaw
from vtt_bridge.errors import PluginError

from ..plugins.exalted2e.helpers import resolve, tokens


@pytest.fixture(scope="module")
def host():
    return make_host(environ={})


def test_the_checked_token_is_what_a_full_load_gives(host):
    toks = tokens(host)
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[8] * 30)
    for token_id, change in record["changes"].items():
        after = host.changed_token(toks[token_id], change["after"])
        assert thaw(after.system) == host.load_system("exalted2e", change["after"])
        assert after.version == toks[token_id].version + 1


def test_an_invalid_change_to_a_nested_field_is_still_refused(host):
    toks = tokens(host)
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[8] * 30)
    token_id, change = next(iter(record["changes"].items()))
    broken = {**change["after"], "health": {**change["after"]["health"], "damage": ["X"]}}
    with pytest.raises(PluginError) as raised:
        host.changed_token(toks[token_id], broken)
    assert "health" in raised.value.details["errors"]["token"]
    weapons = [{"name": "sword", "ability": "juggling"}]  # not an attack Ability
    with pytest.raises(PluginError):
        host.changed_token(toks[token_id], {**change["after"], "weapons": weapons})


# -- a schema without whole-object hooks is checked field by field (the duel's) ------------


@pytest.fixture(scope="module")
def duel_host():
    from . import duel_plugin

    return make_host(plugins=[duel_plugin.rules()], entry_points=False, environ={})


def _duel_token(system):
    from vtt_bridge.engine.tokens import Token

    return Token("b", "Defender", "duel", system, ownership={"bob": 3}, version=4)


@pytest.mark.parametrize(
    "after",
    [
        {"hp": 3, "rerolls": 0},
        {"hp": -7, "rerolls": 2},
        {"rerolls": 1, "hp": 10},  # another order: the schema's order comes out
        {"hp": 3.0, "rerolls": 0},  # an integral float, as a full load takes it
        {"hp": 10, "rerolls": 0},  # nothing changed
    ],
)
def test_a_field_by_field_check_is_what_a_full_load_gives(duel_host, after):
    before = _duel_token({"hp": 10, "rerolls": 0})
    checked = duel_host.changed_token(before, after)
    full = duel_host.load_system("duel", after)
    assert thaw(checked.system) == full
    assert list(checked.system) == list(full)
    assert [type(v) for v in checked.system.values()] == [type(v) for v in full.values()]
    assert checked.version == 5 and checked.ownership == before.ownership


@pytest.mark.parametrize(
    ("after", "field"),
    [
        ({"hp": "lots", "rerolls": 0}, "hp"),  # a bad value in a changed field
        ({"hp": 3, "rerolls": True}, "rerolls"),
        ({"hp": 3}, "rerolls"),  # a field dropped: the whole load says what it makes of it
        ({"hp": 3, "rerolls": 0, "mana": 2}, "mana"),  # a key the schema does not know
        ({"hp": None, "rerolls": 0}, "hp"),
    ],
)
def test_a_hook_leaving_a_bad_field_still_gets_a_structured_error(duel_host, after, field):
    before = _duel_token({"hp": 10, "rerolls": 0})
    try:
        full = duel_host.load_system("duel", after)
    except Exception as exc:  # the full load refuses: so must the check, naming the field
        with pytest.raises(PluginError) as raised:
            duel_host.changed_token(before, after, writers={"b": ("some_pack", "wound")})
        error = raised.value
        assert error.code == "plugin_error"
        assert error.details["plugin"] == "some_pack" and error.details["step"] == "wound"
        assert field in error.details["errors"]["token"]
        assert error.details["errors"]["token"] == exc.details["token"]
    else:  # the full load fills a default in: so does the check
        assert thaw(duel_host.changed_token(before, after).system) == full
