"""The command line as a pack author meets it: answers with params, a key no question
uses, a broken pack, a raising hook, the declarables, and ``new-pack``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from vtt_bridge.cli import main

ROOT = Path(__file__).resolve().parents[2]
MONK = str(ROOT / "plugins/vtt_exalted2e/examples/excellencies_anoria_vs_monk.json")
RULESETS = ("exalted2e", "exalted2e_mass", "godsgloom", "highest_die", "warmachine_mk3")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- answers ----------------------------------------------------------------------


def test_an_answer_for_a_question_no_one_asks_is_refused_naming_the_questions(capsys):
    code, out, err = run(capsys, "resolve", MONK, "--answer", "defence=dodge")
    assert code == 2 and out == ""
    assert "no question of exalted2e is called 'defence'" in err
    assert "the questions are defense, attack_reroll," in err


@pytest.mark.parametrize(
    "answer",
    ['defense=parry:{"second_excellency": 1}', 'defense={"option": "parry", "params": {"second_excellency": 1}}'],
)
def test_an_answer_carries_params_and_the_card_shows_them(capsys, answer):
    code, out, err = run(capsys, "resolve", MONK, "--answer", answer)
    assert code == 0, err
    assert '→ parry {"second_excellency": 1} (given)' in out
    # Essence Triumphant adds a point of DV to the monk's Parry DV 5 (seed 002, Second Excellency)
    assert "dv: 5 → 6 (excellencies)" in out


def test_params_that_are_not_json_are_one_line(capsys):
    code, _, err = run(capsys, "resolve", MONK, "--answer", "defense=parry:{dice: 2}")
    assert code == 2 and err.count("\n") == 1 and "the params are not valid JSON" in err


def test_odds_print_the_answers_with_their_params(capsys):
    code, out, err = run(capsys, "odds", MONK, "--answer", 'defense=parry:{"second_excellency": 1}')
    assert code == 0, err
    assert 'answers: defense=parry:{"second_excellency": 1}' in out


def test_an_answer_to_a_question_not_asked_this_time_is_noted(capsys):
    # the attack misses at step 4 (every die a 2): no damage effect is asked
    code, out, err = run(capsys, "resolve", MONK, "--dice", ",".join(["2"] * 40), "--answer", "damage_effect=decline")
    assert code == 0
    assert "not asked in this attack, so not used: defense_stunt, damage_effect (asked: defense)" in err


# -- broken and raising packs -------------------------------------------------------


@pytest.fixture
def packs(tmp_path, monkeypatch):
    (tmp_path / "broken_pack.py").write_text('raise NameError("a typo at import")\n')
    (tmp_path / "raising_pack.py").write_text(
        "from vtt_bridge import hookimpl\n\n\n@hookimpl\ndef exalted2e_attack_roll(ctx):\n"
        '    raise ZeroDivisionError("bad maths")\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_broken_pack_does_not_hide_the_others_and_names_the_way_out(packs, capsys):
    code, out, _ = run(capsys, "--plugin", "broken_pack", "plugins", "--ruleset", "exalted2e")
    assert code == 0
    assert "excellencies" in out and "exalted2e — Exalted 2nd edition" in out
    assert "broken_pack: cannot import plugin 'broken_pack': NameError: a typo at import" in out
    assert "VTT_BRIDGE_BLOCK_PLUGINS=broken_pack vtt-bridge" in out
    # named on the command line: the way out is to leave it out (an installed one: see tests/kit)
    code, out, err = run(capsys, "--plugin", "broken_pack", "resolve", MONK)
    assert code == 2 and "loaded by --plugin or VTT_BRIDGE_PLUGINS: leave it out, or fix it" in err


def test_a_raising_hook_shows_its_traceback_with_v(packs, capsys):
    code, _, err = run(capsys, "--plugin", "raising_pack", "resolve", MONK)
    assert code == 2 and "Traceback" not in err
    assert "plugin raising_pack failed in hook exalted2e_attack_roll: ZeroDivisionError: bad maths" in err
    code, _, err = run(capsys, "-v", "--plugin", "raising_pack", "resolve", MONK)
    assert code == 2
    assert "Traceback" in err and 'raising_pack.py", line 6, in exalted2e_attack_roll' in err


def test_plugins_lists_the_declarables(capsys):
    code, out, _ = run(capsys, "plugins", "--ruleset", "exalted2e")
    assert code == 0
    assert "first-excellency {dice} — Essence Overwhelming (First Excellency) (charm, from excellencies)" in out
    info = json.loads(run(capsys, "plugins", "--json", "--ruleset", "exalted2e")[1])
    ids = {d["id"]: d for d in info["rulesets"]["exalted2e"]["declarables"]}
    assert ids["solar-counterattack"]["kind"] == "option"


# -- new-pack -------------------------------------------------------------------------


def _pack_tests(directory: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTT_BRIDGE_")}
    env.update(PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_new_pack_s_test_passes_as_generated(tmp_path, capsys, ruleset):
    target = tmp_path / "iron-guard"
    code, out, err = run(capsys, "new-pack", "iron-guard", "--ruleset", ruleset, "--dir", str(target))
    assert code == 0, err
    assert "iron_guard/__init__.py" in out and "python -m pytest" in out
    done = _pack_tests(target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_a_new_pack_declares_its_entry_point_and_lists_its_declarable(tmp_path, capsys, monkeypatch):
    target = tmp_path / "iron-guard"
    assert run(capsys, "new-pack", "iron-guard", "--ruleset", "exalted2e", "--dir", str(target))[0] == 0
    # what pip reads: the distribution, its package, and the entry point the host finds it by
    project = tomllib.loads((target / "pyproject.toml").read_text())
    assert project["project"]["name"] == "iron-guard"
    assert project["project"]["entry-points"]["vtt_bridge"] == {"iron_guard": "iron_guard"}
    assert project["tool"]["setuptools"]["packages"] == ["iron_guard"]
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    monkeypatch.chdir(target)
    code, out, _ = run(capsys, "--plugin", "iron_guard", "plugins", "--ruleset", "exalted2e")
    assert code == 0
    assert "iron-guard — Iron Guard (charm, from iron_guard)" in out


@pytest.mark.parametrize(
    "argv, says",
    [
        (["new-pack", "Iron Guard", "--ruleset", "exalted2e"], "a pack name is lower case letters"),
        (["new-pack", "iron-guard", "--ruleset", "exalted3e"], "exalted3e"),
        (["new-pack", "iron-guard", "--ruleset", "exalted2e", "--dir", "{full}"], "is not an empty directory"),
    ],
)
def test_new_pack_refusals_are_one_line(tmp_path, capsys, argv, says):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    code, out, err = run(capsys, *[str(tmp_path / "full") if a == "{full}" else a for a in argv])
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err


# -- stopping the server ----------------------------------------------------------------


def test_ctrl_c_says_what_the_stop_waits_for(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTT_BRIDGE_")}
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from vtt_bridge.cli import main; sys.exit(main())", "serve", "--port", "0", "--db", str(tmp_path / "t.sqlite")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("stop with Ctrl-C") or len(lines) > 50:
                break
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, "".join(lines) + out
    assert "stopping: attacks in progress get up to 5 s to finish, a question still open included" in out
