"""Every highest_die hook is declared, documented in the one layout, in rulebook order."""

from __future__ import annotations

import inspect

import pytest

from vtt_highest_die import RULESET, hookspecs

SPECS = {
    name: fn for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, "vtt_bridge_spec")
}


def test_every_hook_the_ruleset_calls_has_a_spec_and_no_spec_is_unused():
    assert set(SPECS) == set(RULESET.hook_names())


def test_specs_follow_the_order_of_the_steps():
    in_source = sorted(SPECS, key=lambda n: inspect.getsourcelines(SPECS[n])[1])
    step_hooks = [f"highest_die_{s.name}" for s in RULESET.steps]
    assert [n for n in in_source if n in step_hooks] == step_hooks
    assert [s.title for s in RULESET.steps] == [
        "1. Declare", "2. Defense", "3. Roll", "4. Successes", "5. Damage", "6. Soak", "7. Effects",
    ]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_docstring_layout(name):
    doc = inspect.getdoc(SPECS[name])
    assert doc.split(".")[0] in {f"Step {n}" for n in range(1, 8)}
    assert "The ruleset's own implementation" in doc
    assert ":param ctx:" in doc and ":return:" in doc
    signature = inspect.signature(SPECS[name])
    assert list(signature.parameters) == ["ctx"]
    assert signature.return_annotation != inspect.Signature.empty
