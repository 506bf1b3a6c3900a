"""A pack's mistakes stay the pack's: one failed attack, a refused start-up, a caught write."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import socketio

from vtt_bridge import (
    InvalidRequest,
    PluginError,
    PluginValidationError,
    error_envelope,
    hookimpl,
    make_host,
)
from vtt_bridge import testing as vt
from vtt_bridge.cli import main
from vtt_bridge.plugins import BLOCK_ENV
from vtt_bridge.server import BridgeServer, ServerConfig, create_table

from .conftest import BUILTINS

RULES = "tests.kit.packs.duel_rules"
FIGHTERS = {"a": {"hp": 10}, "b": {"hp": 10}}


def _host(install, **packs):
    install("vtt-kit-packs", "0.3", duel=RULES, **packs)
    return make_host(block=BUILTINS, environ={})


# -- a pack that raises ---------------------------------------------------------


def test_a_raising_pack_fails_that_attack_with_plugin_error_naming_pack_and_hook(install):
    host = _host(install, cursed="tests.kit.packs.broken")
    toks = vt.tokens("duel", FIGHTERS, host=host)
    with pytest.raises(PluginError) as err:
        vt.resolve("duel", toks, declaration={"charms": [{"id": "cursed-blade"}]}, dice=[6, 6], host=host)
    envelope = error_envelope(err.value)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "plugin_error"
    assert envelope["error"]["details"] == {
        "plugin": "cursed",  # the entry point's name, as `vtt-bridge plugins` lists it
        "hook": "duel_roll",
        "step": "roll",
        "exception": "KeyError",
    }
    assert "plugin cursed failed in hook duel_roll" in envelope["error"]["message"]
    # no token changed, and the same host goes on resolving attacks
    assert toks["b"].system["hp"] == 10
    res = vt.resolve("duel", toks, dice=[6, 6], answers={"defense": "none"}, host=host)
    assert res.token_after("b")["hp"] == 8


@pytest.mark.parametrize("where", ["options", "wrapper", "setup_of_nested"])
def test_a_pack_raising_anywhere_in_a_step_is_still_plugin_error(where):
    class Faulty:
        if where == "options":

            @hookimpl
            def duel_defense_options(self, ctx):
                raise RuntimeError("no options today")

        elif where == "wrapper":

            @hookimpl(wrapper=True)
            def duel_wound(self, ctx):
                yield
                raise RuntimeError("after the ruleset")

        else:

            @hookimpl
            def duel_declare(self, ctx):
                if ctx.kind == "counterattack":
                    raise RuntimeError("in the counterattack")

    hook = {"options": "duel_defense_options", "wrapper": "duel_wound", "setup_of_nested": "duel_declare"}[where]
    with pytest.raises(PluginError) as err:
        vt.resolve(
            "duel",
            FIGHTERS,
            declaration={"charms": [{"id": "riposte"}]},
            dice=[6, 6, 6, 6],
            answers={"defense": "none"},
            plugins=[RULES, Faulty()],
        )
    assert err.value.details["hook"] == hook
    assert err.value.details["plugin"] == "Faulty"


@pytest.mark.parametrize("exc", [SystemExit, KeyboardInterrupt, SystemExit(0)])
@pytest.mark.parametrize("where", ["step", "options", "wrapper"])
def test_a_pack_raising_system_exit_or_keyboard_interrupt_is_a_plugin_error(exc, where):
    """Issue 14, item 7: no exception a pack raises ends the process."""

    class Quitter:
        if where == "options":

            @hookimpl
            def duel_defense_options(self, ctx):
                raise exc

        elif where == "wrapper":

            @hookimpl(wrapper=True)
            def duel_roll(self, ctx):
                yield
                raise exc

        else:

            @hookimpl
            def duel_wound(self, ctx):
                raise exc

    with pytest.raises(PluginError) as err:
        vt.resolve("duel", FIGHTERS, dice=[6, 6, 6, 6], answers={"defense": "none"}, plugins=[RULES, Quitter()])
    hook, step = {"options": ("duel_defense_options", "defend"), "wrapper": ("duel_roll", "roll"),
                  "step": ("duel_wound", "wound")}[where]  # fmt: skip
    name = exc.__name__ if isinstance(exc, type) else type(exc).__name__
    assert err.value.details == {"plugin": "Quitter", "hook": hook, "step": step, "exception": name}


def test_a_pack_leaving_a_token_invalid_is_named_with_its_hook_and_step():
    class Vandal:
        @hookimpl
        def duel_counter(self, ctx):
            ctx.update(ctx.defender.id, hp="lots")

    host = vt.host(RULES, Vandal(), entry_points=False)
    res = vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, host=host)
    before = res.ctx.tokens["b"]
    with pytest.raises(PluginError) as err:
        host.changed_token(before, res.token_after("b"), writers=res.ctx.changes.writers)
    assert err.value.details["plugin"] == "Vandal"
    assert (err.value.details["hook"], err.value.details["step"]) == ("duel_counter", "counter")
    assert err.value.details["errors"] == {"token": {"hp": ["Not a valid integer."]}}
    assert "Vandal" in err.value.message and "duel_counter" in err.value.message


def test_a_refusal_the_user_must_see_stays_invalid_request():
    class Costly:
        @hookimpl
        def duel_declare(self, ctx):
            raise InvalidRequest("not enough motes", details={"motes": ["Needs 3."]})

    with pytest.raises(InvalidRequest) as err:
        vt.resolve("duel", FIGHTERS, dice=[6, 6], plugins=[RULES, Costly()])
    assert err.value.code == "invalid_request"
    assert err.value.details == {"motes": ["Needs 3."], "hook": "duel_declare", "step": "declare"}


# -- a hook that matches no step --------------------------------------------------


def test_a_hook_matching_no_step_is_refused_at_start_up_with_the_nearest_name(install):
    with pytest.raises(PluginValidationError) as err:
        _host(install, typo="tests.kit.packs.typo")
    assert err.value.code == "plugin_invalid"
    assert err.value.message == (
        "plugin 'typo' implements 'duel_rol', which no installed ruleset declares; did you mean 'duel_roll'?"
    )
    assert err.value.details == {"plugin": "typo", "hook": "duel_rol", "suggestion": "duel_roll"}


def test_the_refusal_reaches_the_command_line(install, monkeypatch, capsys):
    install("vtt-kit-packs", "0.3", duel=RULES, typo="tests.kit.packs.typo")
    monkeypatch.setenv(BLOCK_ENV, ",".join(BUILTINS))
    assert main(["resolve", "request.json"]) == 2
    err = capsys.readouterr().err
    assert "error [plugin_invalid]: plugin 'typo' implements 'duel_rol'" in err
    assert "did you mean 'duel_roll'?" in err
    assert "to run without it: VTT_BRIDGE_BLOCK_PLUGINS=typo" in err
    # `plugins` still lists the others, and the broken one with the way out
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "duel" in out.split("Not loaded")[0]
    assert "typo: plugin 'typo' implements 'duel_rol'" in out
    assert "VTT_BRIDGE_BLOCK_PLUGINS=typo vtt-bridge" in out
    # blocking the faulty pack lets everything else start
    monkeypatch.setenv(BLOCK_ENV, ",".join([*BUILTINS, "typo"]))
    assert main(["plugins"]) == 0
    assert "Not loaded" not in capsys.readouterr().out


def test_a_hook_far_from_every_step_is_refused_without_a_guess():
    class Stranger:
        @hookimpl
        def teatime_brew(self, ctx):
            pass

    with pytest.raises(PluginValidationError) as err:
        vt.host(RULES, Stranger(), entry_points=False)
    assert err.value.message == "plugin 'Stranger' implements 'teatime_brew', which no installed ruleset declares"


def test_an_optional_hook_for_a_ruleset_not_installed_is_allowed():
    class Portable:
        @hookimpl(optionalhook=True)
        def warhammer_charge(self, ctx):
            pass

    vt.host(RULES, Portable(), entry_points=False)


# -- a pack that writes to a snapshot ---------------------------------------------


def test_writing_to_a_token_snapshot_is_caught_and_changes_nothing(install):
    host = _host(install, vorpal="tests.kit.packs.cheat")
    toks = vt.tokens("duel", FIGHTERS, host=host)
    with pytest.raises(PluginError) as err:
        vt.resolve(
            "duel",
            toks,
            declaration={"charms": [{"id": "vorpal"}]},
            dice=[6, 6],
            answers={"defense": "none"},
            host=host,
        )
    assert err.value.details == {
        "plugin": "vorpal",
        "hook": "duel_wound",
        "step": "wound",
        "exception": "SnapshotMutation",
    }
    assert toks["b"].system["hp"] == 10


@pytest.mark.parametrize(
    "write",
    [
        lambda ctx: ctx.defender.system.update(hp=0),
        lambda ctx: ctx.defender.system.pop("hp"),
        lambda ctx: setattr(ctx.defender, "name", "Victim"),
        lambda ctx: ctx.attacker.ownership.clear(),
        lambda ctx: ctx.current(ctx.defender.id).__setitem__("hp", 0),
        lambda ctx: ctx.declaration.__setitem__("bonus", 9),
        lambda ctx: ctx.declaration["charms"][0].__setitem__("id", "other"),
    ],
    ids=["update", "pop", "attribute", "ownership", "current", "declaration", "nested"],
)
def test_every_way_of_writing_to_a_snapshot_is_caught(write):
    class Cheat:
        @hookimpl
        def duel_roll(self, ctx):
            write(ctx)

    toks = vt.tokens("duel", FIGHTERS, host=vt.host(RULES, entry_points=False))
    with pytest.raises(PluginError) as err:
        vt.resolve(
            "duel",
            toks,
            declaration={"charms": [{"id": "riposte"}]},
            dice=[6, 6],
            answers={"defense": "none"},
            plugins=[RULES, Cheat()],
        )
    assert err.value.details["exception"] == "SnapshotMutation"
    assert err.value.details["plugin"] == "Cheat"
    assert toks["b"].system == {"hp": 10, "rerolls": 0} and toks["b"].name == "b"


def test_a_stray_attribute_on_the_context_fails_loudly():
    class Sloppy:
        @hookimpl
        def duel_roll(self, ctx):
            ctx.my_bonus = 2  # per-attack state belongs in ctx.stash[StashKey(...)]

    with pytest.raises(PluginError) as err:
        vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, plugins=[RULES, Sloppy()])
    assert err.value.details["exception"] == "AttributeError"


# -- the server keeps serving -------------------------------------------------------


async def test_on_the_server_a_raising_pack_fails_one_attack_and_nothing_else(tmp_path):
    host = vt.host(RULES, "tests.kit.packs.broken", entry_points=False)
    config = ServerConfig(
        port=0, db=str(tmp_path / "bridge.sqlite"), entry_points=False, static_dir=None,
        decision_timeout=0.5, shutdown_grace=1.0,
    )  # fmt: skip
    async with BridgeServer(config, host=host) as server:
        table, gm_key = await create_table(server.store, "safety")
        gm = socketio.AsyncClient(reconnection=False)
        await gm.connect(server.url, auth={"table": table.id, "key": gm_key}, transports=["websocket"], wait_timeout=5)
        try:
            for token_id in ("a", "b"):
                token = {"id": token_id, "name": token_id.upper(), "ruleset": "duel", "system": {"hp": 10}}
                assert (await gm.call("token.create", token, timeout=5))["ok"]
            attack = {
                "ruleset": "duel",
                "attacker": "a",
                "targets": ["b"],
                "dice": [6, 6],
                "answers": {"defense": "none"},
            }
            cursed = {**attack, "declaration": {"charms": [{"id": "cursed-blade"}]}}

            ack = await gm.call("attack", cursed, timeout=5)
            assert ack["ok"] is False
            assert ack["error"]["code"] == "plugin_error"
            assert ack["error"]["details"]["plugin"] == "tests.kit.packs.broken"
            assert ack["error"]["details"]["hook"] == "duel_roll"
            b = await gm.call("token.get", {"id": "b"}, timeout=5)
            assert b["token"]["system"]["hp"] == 10 and b["token"]["version"] == 1  # nothing applied

            ack = await gm.call("attack", attack, timeout=5)  # the next attack resolves as usual
            assert ack["ok"] is True, ack
            b = await gm.call("token.get", {"id": "b"}, timeout=5)
            assert b["token"]["system"]["hp"] == 8
        finally:
            await gm.disconnect()


def test_the_server_refuses_to_start_with_a_hook_that_matches_no_step(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTT_BRIDGE_")}
    env[BLOCK_ENV] = ",".join(BUILTINS)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "vtt-bridge"), "--plugin", RULES, "--plugin", "tests.kit.packs.typo",
         "serve", "--port", "0", "--db", str(tmp_path / "bridge.sqlite")],
        cwd=root, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error [plugin_invalid]: plugin 'tests.kit.packs.typo' implements 'duel_rol'" in done.stderr
    assert "did you mean 'duel_roll'?" in done.stderr
    assert "listening" not in done.stdout
