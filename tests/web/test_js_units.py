"""The browser modules' unit tests (``tests/js``, plain ``node:test``) run with the suite.

``common/schema-form.js``, ``common/card.js`` and ``common/odds.js`` have no DOM and no socket, so Node runs
their tests directly; the web table and the Foundry module import the same files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS_TESTS = ROOT / "tests" / "js"

#: The records the card tests read (``tests/js/fixtures``), one or more per ruleset, each
#: the ``vtt-bridge resolve --json`` of a shipped example. Rewrite them after a ruleset
#: changes what it records: ``python tests/web/test_js_units.py --write``.
FIXTURES = {
    "exalted2e_counterattack.json": "plugins/vtt_exalted2e/examples/solar_counterattack.json",
    "exalted2e_mass_routs.json": "plugins/vtt_exalted2e_mass/examples/talon_routs_spears.json",
    "warmachine_reroll.json": "plugins/vtt_warmachine_mk3/examples/reroll_granted.json",
    "highest_die_parry.json": "plugins/vtt_highest_die/examples/seed_example_parry.json",
    "godsgloom_rerolls.json": "plugins/vtt_godsgloom/examples/rerolls_and_criticals.json",
}


#: The ``attack.odds`` answers the odds tests read (``tests/js/fixtures``): the exact odds
#: (``vtt-bridge odds --json``) of a shipped example, an AOE and a one-model attack.
ODDS_FIXTURES = {
    "warmachine_aoe_odds.json": "plugins/vtt_warmachine_mk3/examples/aoe_deviation_blast.json",
    "warmachine_melee_odds.json": "plugins/vtt_warmachine_mk3/examples/melee_jack_punch.json",
}


def _odds(example: str) -> dict:
    from vtt_bridge import make_host
    from vtt_bridge.cli.resolve import load_tokens
    from vtt_bridge.odds import compute_odds

    host = make_host()
    data = json.loads((ROOT / example).read_text())
    result = compute_odds(host, data, load_tokens(host, data), method="exact")
    return json.loads(json.dumps(result.to_dict()))


def _record(example: str) -> dict:
    from vtt_bridge import make_host
    from vtt_bridge.cli.resolve import resolve_request

    return json.loads(json.dumps(resolve_request(make_host(), json.loads((ROOT / example).read_text()))))


def test_node_unit_tests_of_the_shared_modules_pass():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed for the JavaScript unit tests")
    files = sorted(str(p) for p in JS_TESTS.glob("*.test.mjs"))
    assert files, f"no *.test.mjs under {JS_TESTS}"
    proc = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout, proc.stdout[-3000:]


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_the_card_fixtures_are_what_the_rulesets_record_today(fixture):
    recorded = json.loads((JS_TESTS / "fixtures" / fixture).read_text())
    assert recorded == _record(FIXTURES[fixture]), f"stale: run python {Path(__file__).relative_to(ROOT)} --write"


@pytest.mark.parametrize("fixture", sorted(ODDS_FIXTURES))
def test_the_odds_fixtures_are_what_the_odds_answer_today(fixture):
    recorded = json.loads((JS_TESTS / "fixtures" / fixture).read_text())
    assert recorded == _odds(ODDS_FIXTURES[fixture]), f"stale: run python {Path(__file__).relative_to(ROOT)} --write"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    for name, example in FIXTURES.items():
        (JS_TESTS / "fixtures" / name).write_text(json.dumps(_record(example), indent=1, ensure_ascii=False) + "\n")
    for name, example in ODDS_FIXTURES.items():
        (JS_TESTS / "fixtures" / name).write_text(json.dumps(_odds(example), indent=1, ensure_ascii=False) + "\n")


def test_the_cli_card_shows_each_roll_under_the_step_that_made_it():
    """`vtt-bridge resolve` prints the same truth as the web and Foundry cards: Warmachine's
    missed roll as 5b judged it, the reroll under the 5b it returned to (seed 001, 5e)."""
    from vtt_bridge.cli.card import render

    text = render(json.loads((JS_TESTS / "fixtures" / "warmachine_reroll.json").read_text()))
    lines = [line.strip() for line in text.splitlines()]
    first = lines.index("5b. Roll the dice [caster]")
    again = lines.index("5b. Roll the dice [caster]", first + 1)
    assert lines[first + 1] == "🎲 attack roll: 2d6 + 7 → [1 2] = 10"
    assert "5e. Rerolls [caster]" in lines[first:again]
    assert lines[again + 1] == "🎲 attack roll (reroll): 2d6 + 7 → [5 4] = 16"
