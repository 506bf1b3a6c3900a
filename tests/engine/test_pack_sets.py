"""Packs per table (issue 28): an attack runs with a given set of the installed packs,
its rulesets always on, and its record names the plugins and versions it ran with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtt_bridge import InvalidRequest, make_host
from vtt_bridge.cli.resolve import load_tokens

ROOT = Path(__file__).resolve().parents[2]
MONK = json.loads((ROOT / "plugins/vtt_exalted2e/examples/excellencies_anoria_vs_monk.json").read_text())


@pytest.fixture(scope="module")
def host():
    return make_host()


def resolve(host, declaration, seed=2):
    res = host.start(
        "exalted2e",
        load_tokens(host, MONK),
        attacker="anoria",
        targets=["monk"],
        declaration=declaration,
        seed=seed,
        answers={"defense": "parry"},
    )
    return res.run(lambda decision: decision.default)


def test_the_installed_packs_and_the_rulesets_always_on(host):
    assert "excellencies" in host.packs()
    assert "exalted2e" in host.ruleset_plugins() and "exalted2e" not in host.packs()
    assert host.for_packs(None) is host
    assert host.for_packs(host.packs()) is host


def test_a_pack_set_is_made_once_and_its_plans_are_its_own(host):
    bare = host.for_packs([])
    assert bare is host.for_packs([]) and bare is not host
    assert bare.packs() == () and bare.installed is host
    assert bare.engine.plan("exalted2e") is not host.engine.plan("exalted2e")
    assert bare.for_packs(["excellencies"]) is host.for_packs(["excellencies"])


def test_a_disabled_pack_takes_no_part_and_the_record_says_which_ran(host):
    plain = {"weapon": "fist"}
    with_pack = resolve(host, plain).to_dict()
    without = resolve(host.for_packs([]), plain).to_dict()
    version = {p.name: p.version for p in host.plugins()}
    assert version["excellencies"]  # an installed distribution's version
    assert with_pack["packs"] == {"exalted2e": version["exalted2e"], "excellencies": version["excellencies"]}
    assert without["packs"] == {"exalted2e": version["exalted2e"]}
    # Same seed, same dice: only what the pack adds differs (its notes, never a step of it).
    plugins = {c.get("plugin") for s in without["steps"] for c in s["changes"] + s["notes"]}
    assert "excellencies" not in plugins


def test_a_charm_of_a_disabled_pack_cannot_be_declared(host):
    charms = {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 3}]}
    assert resolve(host, charms).outcome["motes"]["anoria"] == 3
    with pytest.raises(InvalidRequest, match="Unknown Charm 'first-excellency'"):
        resolve(host.for_packs([]), charms)


def test_an_unknown_pack_is_refused_by_name(host):
    with pytest.raises(InvalidRequest) as err:
        host.for_packs(["excelencies"])
    assert err.value.details["pack"] == "excelencies"
    assert "did you mean 'excellencies'" in err.value.message
    with pytest.raises(InvalidRequest, match="provides a ruleset"):
        host.for_packs(["exalted2e"])
