"""docs/plugins.md: every hook documented, the generated reference fresh, the generator honest."""

from __future__ import annotations

from pathlib import Path

import pytest

from vtt_bridge import docs, make_host
from vtt_bridge import hookspecs as host_hookspecs
from vtt_bridge.cli import main

from .engine import duel

ROOT = Path(__file__).resolve().parents[1]
PLUGINS_MD = ROOT / "docs" / "plugins.md"


@pytest.fixture(scope="module")
def installed():
    """The host of this environment, as ``vtt-bridge docs --write`` builds it."""
    return make_host(environ={})


@pytest.fixture(scope="module")
def dueling():
    return make_host(plugins=[duel.DuelRules()], entry_points=False, environ={})


def _all_specs(host):
    yield from docs.hookspec_functions(host_hookspecs).items()
    for ruleset in host.rulesets.values():
        yield from docs.hookspec_functions(ruleset.hookspecs).items()


# -- the contract every ruleset keeps ---------------------------------------------


def test_every_hookspec_of_every_installed_ruleset_has_a_docstring(installed):
    assert installed.rulesets, "no ruleset is installed"
    assert docs.missing_docstrings(installed) == []


def test_firstresult_hooks_and_only_they_say_so(installed):
    wrong = []
    for name, spec in _all_specs(installed):
        first = bool(getattr(spec, docs.SPEC_ATTR).get("firstresult"))
        says = "Stops at first non-None result." in (spec.__doc__ or "")
        if first != says:
            wrong.append(name)
    assert wrong == [], "firstresult specs must end 'Stops at first non-None result.', others must not"


def test_the_hook_reference_in_docs_plugins_md_is_fresh(installed):
    stale = docs.check(PLUGINS_MD, installed)
    assert stale == [], f"docs/plugins.md is stale ({', '.join(stale)}): run `vtt-bridge docs --write`"


def test_the_reference_covers_every_installed_ruleset_and_step(installed):
    text = PLUGINS_MD.read_text()
    for ruleset in installed.rulesets.values():
        assert f"### `{ruleset.id}` — {ruleset.title}" in text
        for hook in ruleset.hook_names():
            assert f"`{hook}`" in text, hook


# -- the generator ----------------------------------------------------------------


def test_a_missing_docstring_is_reported(dueling, monkeypatch):
    monkeypatch.setattr(duel.duel_roll, "__doc__", None)
    assert docs.missing_docstrings(dueling) == ["duel_roll"]


def test_reference_lists_steps_in_order_with_signature_docstring_and_decisions(dueling):
    text = docs.reference(dueling)
    section = text[text.index("### `duel` — Duel (engine test)") :]
    order = [
        section.index(f"— `duel_{name}`")
        for name in ("declare", "defend", "roll", "reroll", "wounds", "wound", "counter")
    ]
    assert order == sorted(order)
    assert "```python\nduel_roll(ctx) -> None\n```\n\nStep 3. Roll." in section
    assert "| 2. Defend | `duel_defend` | `defense` (options: `duel_defense_options`) |" in section
    assert "| ↳ 5a. Wound | `duel_wound` |  |" in section
    assert "asks the defender's owner: “Block or take it?”" in section
    assert "##### options of `defense` — `duel_defense_options`" in section
    assert (
        "Default: `decline` (Done). `decline` (Done) is added to whatever is offered. "
        "Asked again after the hook until the answer is `decline`." in section
    )
    # a default the ruleset works out is stated as the rule its function's docstring gives
    assert "Block or take it?” Not asked when nothing is offered. Default: picked by the ruleset" in section
    assert "runs `wound` once for each item it selects" in section
    assert "May send the sequence back to `roll` with `ctx.goto(...)`." in section
    assert "Working numbers (traced on change, `ctx.<name>`): `pool`, `hits`, `block`." in section
    assert "| `hp` | integer | required |" in section
    assert "| `rerolls` | integer | default `0` |" in section
    assert "#### `vtt_bridge_rulesets`" in text  # the host's own hooks come first


def test_docstrings_are_turned_into_markdown():
    def spec(ctx):
        """Step 9. Do it.

        See :class:`~vtt_bridge.Option` and :func:`vtt_bridge.make_host`.

        :param ctx: the attack context.
        :return: nothing.
        """

    assert docs._doc(spec) == (
        "Step 9. Do it.\n\nSee `Option` and `vtt_bridge.make_host`.\n\n"
        "- **`ctx`**: the attack context.\n- **returns**: nothing."
    )


def test_update_rewrites_generated_regions_and_leaves_prose_alone(dueling, tmp_path):
    (tmp_path / "snippet.py").write_text("print('hi')\n")
    text = (
        "# Title\n\nProse stays.\n\n"
        "<!-- generated: include snippet.py -->\nold\n<!-- end generated -->\n\n"
        "More prose.\n\n<!-- generated: reference -->\n<!-- end generated -->\n"
    )
    fresh = docs.update(text, dueling, tmp_path)
    assert fresh.startswith(
        "# Title\n\nProse stays.\n\n<!-- generated: include snippet.py -->\n```python\nprint('hi')\n```\n"
    )
    assert "\n\nMore prose.\n\n<!-- generated: reference -->\n\n## Hook reference\n" in fresh
    assert fresh.endswith("<!-- end generated -->\n")
    assert docs.update(fresh, dueling, tmp_path) == fresh  # regenerating changes nothing


def test_check_names_the_stale_region(dueling, tmp_path):
    (tmp_path / "snippet.py").write_text("x = 1\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- generated: include snippet.py -->\n<!-- end generated -->\n"
        "<!-- generated: reference -->\n<!-- end generated -->\n"
    )
    doc.write_text(docs.update(doc.read_text(), dueling, tmp_path))
    assert docs.check(doc, dueling) == []
    (tmp_path / "snippet.py").write_text("x = 2\n")
    assert docs.check(doc, dueling) == ["include snippet.py"]


def test_an_unknown_region_is_an_error(dueling, tmp_path):
    with pytest.raises(ValueError, match="unknown generated region 'toc'"):
        docs.update("<!-- generated: toc -->\n<!-- end generated -->\n", dueling, tmp_path)


# -- vtt-bridge docs --------------------------------------------------------------


def test_docs_command_writes_checks_and_prints(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VTT_BRIDGE_BLOCK_PLUGINS", "highest_die")  # --write/--check ignore the environment
    doc = tmp_path / "plugins.md"
    doc.write_text("Intro.\n\n<!-- generated: reference -->\n<!-- end generated -->\n")
    assert main(["docs", "--check", str(doc)]) == 1
    assert f"{doc} is stale (reference); run: vtt-bridge docs --write {doc}" in capsys.readouterr().err
    assert main(["docs", "--write", str(doc)]) == 0
    assert main(["docs", "--check", str(doc)]) == 0
    written = doc.read_text()
    assert written.startswith("Intro.\n\n<!-- generated: reference -->\n\n## Hook reference")
    assert "### `highest_die`" in written
    capsys.readouterr()
    assert main(["docs"]) == 0  # printing honours the environment: what is loaded here
    printed = capsys.readouterr().out
    assert printed.startswith("## Hook reference") and "### `highest_die`" not in printed
