"""Finding packs: entry points, --plugin paths, the block list, the hook trace, `vtt-bridge plugins`."""

import json
import logging

import pytest

from vtt_bridge import InvalidRequest, PluginError, make_host
from vtt_bridge import testing as vt
from vtt_bridge.cli import main
from vtt_bridge.plugins import BLOCK_ENV, PLUGINS_ENV, TRACE_ENV

from .conftest import BUILTINS

RULES = "tests.kit.packs.duel_rules"
KEEN = "tests.kit.packs.keen_edge"
GUARD = "tests.kit.packs.steel_guard"
FIGHTERS = {"a": {"hp": 10}, "b": {"hp": 10}}
KEEN_ATTACK = dict(declaration={"charms": [{"id": "keen-edge"}]}, dice=[6, 6, 2], answers={"defense": "none"})


@pytest.fixture
def packs(install):
    install("vtt-kit-packs", "1.2.3", duel=RULES, keen=KEEN, steel=GUARD)


def test_an_installed_pack_is_found_through_its_entry_point(packs):
    host = make_host(block=BUILTINS, environ={})
    info = {p.name: p for p in host.plugins()}
    assert info["keen"].distribution == "vtt-kit-packs"
    assert info["keen"].version == "1.2.3"
    assert info["keen"].module == KEEN
    res = vt.resolve("duel", FIGHTERS, host=host, **KEEN_ATTACK)
    # the pack is named by its entry point, and can be asked about by its module too
    assert [c.plugin for c in res.changes_by("keen")] == ["keen"]
    assert res.changes_by(KEEN) == res.changes_by("keen")


def test_the_block_variable_keeps_a_pack_out(packs):
    host = make_host(block=BUILTINS, environ={BLOCK_ENV: " keen , nothing-by-that-name"})
    assert "keen" not in {p.name for p in host.plugins()}
    # Its Charm is unknown with it: declaring it is refused, naming the Charm.
    with pytest.raises(InvalidRequest) as err:
        vt.resolve("duel", FIGHTERS, host=host, **KEEN_ATTACK)
    assert err.value.details == {"declaration": {"charms": {"0": {"id": ["Unknown Charm 'keen-edge'; known: riposte"]}}}}
    res = vt.resolve("duel", FIGHTERS, host=host, **{**KEEN_ATTACK, "declaration": {}})
    assert res.changes_by(KEEN) == [] and res.numbers["pool"] == 2


def test_a_module_path_loads_a_pack_in_development():
    host = vt.host(RULES, KEEN, entry_points=False)
    res = vt.resolve("duel", FIGHTERS, host=host, **KEEN_ATTACK)
    res.assert_changed("pool", by=KEEN, delta=1)
    info = {p.name: p for p in host.plugins()}
    assert info[KEEN].distribution is None


def test_a_pack_both_installed_and_named_by_path_loads_once_as_installed(packs):
    host = make_host(plugins=[KEEN], block=BUILTINS, environ={PLUGINS_ENV: KEEN})
    assert [p.name for p in host.plugins() if p.module == KEEN] == ["keen"]
    assert host.call_order("duel_roll") == ["keen", "duel"]


def test_the_plugins_variable_loads_module_paths():
    host = make_host(entry_points=False, environ={PLUGINS_ENV: f"{RULES},{KEEN}"})
    assert host.call_order("duel_roll") == [KEEN, RULES]


def test_tracing_logs_plugin_hook_arguments_and_result(packs, caplog):
    host = make_host(block=BUILTINS, environ={TRACE_ENV: "1"})
    with caplog.at_level(logging.INFO, logger="vtt_bridge.hooks"):
        vt.resolve("duel", FIGHTERS, host=host, **KEEN_ATTACK)
    lines = [r.getMessage() for r in caplog.records if r.name == "vtt_bridge.hooks"]
    call = next(line for line in lines if line.startswith("call duel_roll "))
    done = next(line for line in lines if line.startswith("done duel_roll "))
    assert "plugins=['keen', 'duel']" in call
    assert "ctx=<DuelContext a -> ['b']> pool=2 hits=0" in call  # the arguments, numbers before
    assert "result=[]" in done and "pool=3 hits=2" in done  # the result, numbers after
    options = next(line for line in lines if line.startswith("done duel_defense_options "))
    assert "Option(id='steel-guard'" in options and "Option(id='block'" in options
    assert sum(line.startswith("call ") for line in lines) == sum(line.startswith("done ") for line in lines)


def test_no_trace_without_the_variable(packs, caplog):
    host = make_host(block=BUILTINS, environ={TRACE_ENV: "0"})
    with caplog.at_level(logging.INFO, logger="vtt_bridge.hooks"):
        vt.resolve("duel", FIGHTERS, host=host, **KEEN_ATTACK)
    assert not [r for r in caplog.records if r.name == "vtt_bridge.hooks"]


def test_a_failing_hook_is_traced_with_its_exception(install, caplog):
    install("vtt-kit-broken", "0.1", duel=RULES, broken="tests.kit.packs.broken")
    host = make_host(block=BUILTINS, environ={TRACE_ENV: "yes"})
    with caplog.at_level(logging.INFO, logger="vtt_bridge.hooks"), pytest.raises(PluginError):
        vt.resolve("duel", FIGHTERS, host=host, declaration={"charms": [{"id": "cursed-blade"}]}, dice=[6, 6])
    assert any(r.getMessage().startswith("done duel_roll raised KeyError('no such key')") for r in caplog.records)


# -- vtt-bridge plugins ---------------------------------------------------------


@pytest.fixture
def only_packs(packs, monkeypatch):
    monkeypatch.setenv(BLOCK_ENV, ",".join(BUILTINS))


def test_plugins_command_shows_distribution_version_and_steps_in_call_order(only_packs, capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    keen = next(i for i, line in enumerate(lines) if line.strip().startswith("keen "))
    assert "vtt-kit-packs 1.2.3" in lines[keen] and f"[{KEEN}]" in lines[keen]
    assert lines[keen + 1].split() == ["duel:", "roll"]
    steel = next(i for i, line in enumerate(lines) if line.strip().startswith("steel "))
    assert lines[steel + 1].split() == ["duel:", "defend,", "defense_options"]
    assert "duel — Duel (engine test) (from duel)" in out
    roll = next(line for line in lines if line.strip().startswith("3. Roll"))
    assert roll.split()[2:] == ["keen", "→", "duel"]
    defend = next(line for line in lines if line.strip().startswith("2. Defend"))
    assert defend.split()[2:] == ["steel", "(wrapper)", "→", "duel"]
    assert "asks 'defense': options from steel → duel" in out
    assert "Blocked: " + ", ".join(BUILTINS) in out


def test_plugins_command_json_and_one_ruleset(only_packs, capsys):
    assert (
        main(["--plugin", "tests.kit.packs.cheat", "plugins", "--json", "--ruleset", "duel", "--block", "steel"]) == 0
    )
    info = json.loads(capsys.readouterr().out)
    by_name = {p["name"]: p for p in info["plugins"]}
    assert by_name["keen"]["distribution"] == "vtt-kit-packs" and by_name["keen"]["version"] == "1.2.3"
    assert by_name["keen"]["steps"] == {"duel": ["roll"]}
    assert by_name["duel"]["rulesets"] == ["duel"]
    assert by_name["tests.kit.packs.cheat"]["distribution"] is None
    assert "steel" in info["blocked"] and "steel" not in by_name
    assert list(info["rulesets"]) == ["duel"]
    wound = next(s for s in info["rulesets"]["duel"]["steps"] if s["step"] == "wound")
    assert wound["plugins"] == ["tests.kit.packs.cheat", "duel"]
    assert wound["impls"][-1] == {"plugin": "duel", "wrapper": False, "tryfirst": False, "trylast": True}


def test_cli_resolve_loads_a_pack_by_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(BLOCK_ENV, ",".join(BUILTINS))
    request = tmp_path / "keen.json"
    request.write_text(
        json.dumps(
            {
                "ruleset": "duel",
                "tokens": [
                    {"id": "a", "name": "A", "system": {"hp": 10}},
                    {"id": "b", "name": "B", "system": {"hp": 10}},
                ],
                "attacker": "a",
                "targets": ["b"],
                "declaration": {"charms": [{"id": "keen-edge"}]},
                "dice": [6, 6, 2],
                "answers": {"defense": "none"},
            }
        )
    )
    assert main(["--plugin", RULES, "--plugin", KEEN, "resolve", str(request)]) == 0
    out = capsys.readouterr().out
    assert f"pool: 2 → 3 ({KEEN})" in out
    assert "b: hp: 10 → 8" in out
    # A typo is an error, never silence: in a top-level key, a Charm id, a parameter.
    good = json.loads(request.read_text())
    typos = [
        ({**good, "seeed": 3}, "unknown key 'seeed' in the request"),
        ({"declaraton": good.pop("declaration"), **good}, "unknown key 'declaraton' in the request"),
        ({**good, "declaration": {"charms": [{"id": "keen-egde"}]}}, "Unknown Charm 'keen-egde'; known: keen-edge, riposte"),
        ({**good, "declaration": {"charms": [{"id": "riposte", "times": 2}]}}, "times: Unknown parameter"),
    ]
    for data, message in typos:
        request.write_text(json.dumps(data))
        assert main(["--plugin", RULES, "--plugin", KEEN, "resolve", str(request)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error [invalid_request]") and message in err, err


def test_packs_run_in_the_same_order_in_the_kit_the_server_and_the_cli(install, capsys):
    """Issue 10: one order everywhere. Entry points register sorted by name (here
    duel, keen, steel, whatever order the distribution lists them in), and a hook
    runs the last registered first, the ruleset's own trylast step after them."""
    install("vtt-kit-packs", "1.2.3", steel=GUARD, keen=KEEN, duel=RULES)
    kit = vt.host(block=BUILTINS)
    server = make_host(block=BUILTINS, environ={})
    names = [p.name for p in kit.plugins()]
    assert names == ["duel", "keen", "steel"] == [p.name for p in server.plugins()]
    assert kit.call_order("duel_defense_options") == server.call_order("duel_defense_options") == ["steel", "duel"]
    assert main(["plugins", "--json", *(arg for name in BUILTINS for arg in ("--block", name))]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in listed["plugins"]] == names
    # a pack given by path comes after the installed ones, so it runs first
    extra = vt.host("tests.kit.packs.broken", block=BUILTINS)
    assert [p.name for p in extra.plugins()][-1] == "tests.kit.packs.broken"
    assert extra.call_order("duel_roll")[0] == "tests.kit.packs.broken"


def test_a_host_built_from_module_paths_keys_flags_as_the_packs_read_them():
    """Without entry points, an installed pack named by module path (or passed as the module)
    is registered under its entry-point name: its token flags are keyed ``excellencies``,
    the key the pack reads (``flags.excellencies.charms``), not ``vtt_excellencies``."""
    import vtt_excellencies

    from pathlib import Path

    example = json.loads((Path(__file__).resolve().parents[2] / "plugins/vtt_exalted2e/examples/excellencies_anoria_vs_monk.json").read_text())
    for extra in ("vtt_excellencies", vtt_excellencies):
        host = vt.host("vtt_exalted2e", extra, entry_points=False)
        assert set(host.flag_schemas("exalted2e")) == {"excellencies"}
        assert {p.name for p in host.plugins()} == {"exalted2e", "excellencies"}
        # Anoria knows only the Second Excellency: the pack refuses her First, as it does on the server.
        tokens = {t["id"]: t for t in example["tokens"]}
        tokens["anoria"] = {**tokens["anoria"], "flags": {"excellencies": {"charms": ["second-excellency"]}}}
        with pytest.raises(InvalidRequest, match="does not know Essence Overwhelming"):
            vt.resolve("exalted2e", vt.tokens("exalted2e", tokens, host=host), host=host, attacker="anoria", targets=["monk"],
                       declaration=example["declaration"], seed=example["seed"], answers=example["answers"])
