"""The abilities pack as a plugin: what it implements and how it loads."""

import pytest

from vtt_bridge import InvalidRequest, make_host

import vtt_warmachine_abilities


def test_the_pack_changes_only_steps_5e_6_9e_and_9g():
    host = make_host(plugins=["vtt_warmachine_mk3", "vtt_warmachine_abilities"], entry_points=False, environ={})
    hooks = {c.name for c in host.pm.get_hookcallers(vtt_warmachine_abilities)}
    assert hooks == {
        "warmachine_mk3_reroll_attack_options", "warmachine_mk3_attack_roll_reroll",
        "warmachine_mk3_redirect_options", "warmachine_mk3_redirect",
        "warmachine_mk3_reroll_damage_options", "warmachine_mk3_damage_roll_reroll",
        "warmachine_mk3_transfer_damage_options", "warmachine_mk3_damage_transfer",
        "vtt_bridge_declarables", "vtt_bridge_token_flags",  # what it lists, what it keeps on tokens
    }
    steps = {s.name: s for s in host.ruleset("warmachine_mk3").all_steps()}
    assert steps["redirect"].title.startswith("6.") and steps["damage_transfer"].title.startswith("9g.")
    assert steps["attack_roll_reroll"].title.startswith("5e.") and steps["damage_roll_reroll"].title.startswith("9e.")


def test_the_pack_runs_before_the_rulesets_own_step():
    host = make_host(plugins=["vtt_warmachine_mk3", "vtt_warmachine_abilities"], entry_points=False, environ={})
    assert host.call_order("warmachine_mk3_redirect") == ["warmachine_abilities", "warmachine_mk3"]
    assert host.call_order("warmachine_mk3_damage_transfer") == ["warmachine_abilities", "warmachine_mk3"]


def test_without_the_ruleset_the_pack_still_loads():
    host = make_host(plugins=["vtt_warmachine_abilities"], entry_points=False, environ={})
    assert "warmachine_mk3" not in host.rulesets


def test_the_pack_imports_only_the_public_api():
    import ast
    import pathlib

    for path in pathlib.Path(vtt_warmachine_abilities.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                # marshmallow: the flags schema (a pack's token data is a marshmallow schema)
                allowed = ("vtt_bridge", "__future__", "collections.abc", "functools", "typing", "marshmallow")
                assert node.module in allowed, (path, node.module)
            elif isinstance(node, ast.Import):
                assert all(a.name in ("math",) for a in node.names), (path, [a.name for a in node.names])


def test_the_pack_lists_its_abilities_and_the_flags_it_keeps():
    host = make_host(plugins=["vtt_warmachine_mk3", "vtt_warmachine_abilities"], entry_points=False, environ={})
    listed = {d.id: d for d in host.declarables("warmachine_mk3")}
    assert set(listed) == {"reroll", "grants_reroll", "shield_guard", "transference"}
    assert all(d.kind == "option" and d.inert for d in listed.values())
    flags = host.load_flags("warmachine_mk3", {"warmachine_abilities": {"shield_guard": True}})
    assert flags == {
        "warmachine_abilities": {
            "reroll_attack": False, "reroll_damage": False, "grants_reroll": None,
            "shield_guard": True, "transference": True,
        }
    }  # fmt: skip
    with pytest.raises(InvalidRequest) as err:
        host.load_flags("warmachine_mk3", {"warmachine_abilities": {"grants_reroll": 30}})
    assert list(err.value.details["flags"]["warmachine_abilities"]) == ["grants_reroll"]
    with pytest.raises(InvalidRequest) as err:
        host.load_flags("warmachine_mk3", {"warmachine_abilities": {"sheild_guard": True}})
    assert err.value.details == {"flags": {"warmachine_abilities": {"sheild_guard": ["Unknown field."]}}}
