"""Every exalted2e hook is documented in one layout, in rulebook order, and implemented by the ruleset."""

import inspect
import re

import pytest

from vtt_bridge import make_host
from vtt_exalted2e import RULESET, hookspecs

SPECS = [
    obj
    for name, obj in vars(hookspecs).items()
    if name.startswith("exalted2e_") and inspect.isfunction(obj)
]


def test_one_spec_per_step_and_decision_in_rulebook_order():
    in_source = [f.__name__ for f in sorted(SPECS, key=lambda f: f.__code__.co_firstlineno)]
    # each options hook comes right before the step that asks it
    expected = []
    for step in RULESET.all_steps():
        if step.ask is not None:
            expected.append(f"exalted2e_{step.ask.name}_options")
        expected.append(f"exalted2e_{step.name}")
    assert in_source == expected
    assert sorted(in_source) == sorted(RULESET.hook_names())


@pytest.mark.parametrize("spec", SPECS, ids=lambda f: f.__name__)
def test_every_spec_is_typed_and_documented_in_one_layout(spec):
    doc = inspect.getdoc(spec)
    # a step's number is its top-level step's; a child step (the botch's bystander) runs after it
    number = {s.name: (i, s is not top) for i, top in enumerate(RULESET.steps, 1) for s in top.walk()}
    if spec.__name__.endswith("_options"):
        step = next(s for s in RULESET.all_steps() if s.ask and spec.__name__ == f"exalted2e_{s.ask.name}_options")
        at, child = number[step.name]
        assert doc.startswith(f"After step {at}, " if child else f"Before step {at}. ")
        assert spec.__annotations__["return"] == "list[Option]"
    else:
        at, child = number[spec.__name__.removeprefix("exalted2e_")]
        assert doc.startswith(f"After step {at}, ") if child else re.match(rf"Step {at}\. ", doc)
        assert spec.__annotations__["return"] == "None"
    assert spec.__annotations__["ctx"] == "AttackContext"
    assert "the ruleset's own implementation" in " ".join(doc.split()).lower()
    assert ":param ctx:" in doc and ":return:" in doc
    assert "Stops at first non-None result." not in doc  # none of them is firstresult


def test_the_ruleset_implements_every_hook_last():
    host = make_host()
    for name in RULESET.hook_names():
        order = host.call_order(name)
        assert order[-1] == "exalted2e" or (order[0] == "exalted2e" and name.endswith("_options")), (name, order)
        impls = getattr(host.pm.hook, name).get_hookimpls()
        own = [i for i in impls if i.plugin_name == "exalted2e" and not i.wrapper]
        assert len(own) == 1 and own[0].trylast, name
