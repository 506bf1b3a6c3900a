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


# -- schemas with whole-object hooks: changed fields loaded, then validates_schema and post_load ------


def _examples():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "plugins"
    return sorted(root.glob("vtt_*/examples/*.json"))


@pytest.mark.parametrize("path", _examples(), ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_every_example_leaves_what_a_full_load_gives(host, path):
    """Types, order and nested values alike, for every ruleset's token schema (exalted2e's and
    warmachine_mk3's have schema validators and post-load hooks; exalted2e's health a pre-load)."""
    import json

    from vtt_bridge.cli.resolve import load_tokens

    data = json.loads(path.read_text())
    toks = load_tokens(host, data)
    res = host.start(
        data["ruleset"], toks, attacker=data["attacker"], targets=list(data["targets"]),
        declaration=data.get("declaration", {}), seed=data.get("seed", 1), dice=data.get("dice"),
        answers=dict(data.get("answers") or {}),
    )  # fmt: skip
    for token_id, change in res.run().to_dict()["changes"].items():
        checked = host.changed_token(toks[token_id], change["after"])
        full = host.load_system(data["ruleset"], change["after"])
        assert json.dumps(thaw(checked.system)) == json.dumps(full)


def _warjack(host):
    from vtt_bridge.engine.tokens import Token

    system = host.load_system("warmachine_mk3", {"kind": "warjack", "DEF": 12, "ARM": 18, "spiral": [3, 3, 3, 3, 3, 3]})
    return Token("j", "Jack", "warmachine_mk3", system, version=2)


@pytest.mark.parametrize(
    "change",
    [
        {"marked": 4},  # a spiral's damage is six numbers: the schema validator refuses a count
        {"marked": [1, 2, 3]},
        {"boxes": 5},  # two damage capacities
        {"focus": -1},  # a field's own range: clamped, so valid
        {"marked": None},  # the post-load fills it in again
        {"marked": [0, 0, 1, 0, 0, 6], "knocked_down": True},
    ],
)
def test_schema_hooks_see_the_changed_token_as_a_full_load_does(host, change):
    before = _warjack(host)
    after = {**thaw(before.system), **change}
    try:
        full = host.load_system("warmachine_mk3", host_clamped(host, after))
    except Exception as exc:
        with pytest.raises(PluginError) as raised:
            host.changed_token(before, after, writers={"j": ("a_pack", "damage")})
        assert raised.value.details["errors"]["token"] == exc.details["token"]
    else:
        import json

        assert json.dumps(thaw(host.changed_token(before, after).system)) == json.dumps(full)


def host_clamped(host, system):
    """The change as ``changed_token``'s whole load takes it: numbers clamped to their ranges."""
    from vtt_bridge.plugins import clamp

    return clamp(host._schema("warmachine_mk3", "token"), system)


def test_an_exalted_token_holding_what_it_does_not_have_is_refused(host):
    toks = tokens(host)
    token_id = next(iter(toks))
    after = {**thaw(toks[token_id].system), "equipped": ["no such blade"]}
    with pytest.raises(PluginError) as raised:
        host.changed_token(toks[token_id], after)
    assert "equipped" in raised.value.details["errors"]["token"]
