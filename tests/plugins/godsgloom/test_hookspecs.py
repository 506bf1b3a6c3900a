"""Every GODSGLOOM hook is declared, documented in the one layout, in rulebook order."""

from __future__ import annotations

import inspect

import pytest

from vtt_godsgloom import RULESET, hookspecs

SPECS = {
    name: fn for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, "vtt_bridge_spec")
}


def test_every_hook_the_ruleset_calls_has_a_spec_and_no_spec_is_unused():
    assert set(SPECS) == set(RULESET.hook_names())


def test_step_specs_follow_the_order_of_the_steps():
    in_source = sorted(SPECS, key=lambda n: inspect.getsourcelines(SPECS[n])[1])
    step_hooks = [f"godsgloom_{s.name}" for s in RULESET.all_steps()]
    assert [n for n in in_source if n in step_hooks] == step_hooks


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_docstring_layout(name):
    doc = inspect.getdoc(SPECS[name])
    assert doc.startswith(("Step ATC.", "Step RDP."))
    assert "The ruleset's own implementation" in doc or "As RDP.10" in doc
    assert ":param ctx:" in doc and ":return:" in doc
    assert list(inspect.signature(SPECS[name]).parameters) == ["ctx"]
    assert inspect.signature(SPECS[name]).return_annotation != inspect.Signature.empty


def test_titles_carry_the_rulebook_numbers():
    assert [s.title.split()[0] for s in RULESET.all_steps()] == [
        "ATC.10", "ATC.20", "RDP.10", "RDP.10", "RDP.20", "RDP.20", "ATC.30", "ATC.40", "ATC.50", "ATC.60",
    ]
