"""Every hook of the ruleset is declared, documented in one layout, and in rulebook order."""

import inspect

from vtt_bridge.docs import hookspec_functions
from vtt_exalted2e_mass import RULESET, hookspecs

from .mass import HOST


def test_one_spec_per_step_and_decision_in_rulebook_order():
    declared = list(hookspec_functions(hookspecs))
    assert sorted(declared) == sorted(RULESET.hook_names())
    steps = [f"exalted2e_mass_{s.name}" for s in RULESET.all_steps()]
    assert [name for name in declared if name in steps] == steps


def test_every_spec_is_typed_and_documented_in_one_layout():
    for name, spec in hookspec_functions(hookspecs).items():
        doc = inspect.getdoc(spec)
        assert doc.startswith("Step "), name
        assert "The ruleset's own implementation" in doc, name
        assert ":param ctx:" in doc and ":return:" in doc, name
        assert "ctx" in spec.__annotations__ and "return" in spec.__annotations__, name


def test_the_host_accepts_the_ruleset():
    assert "exalted2e_mass" in HOST.rulesets
    assert HOST.call_order("exalted2e_mass_attack_roll") == ["exalted2e_mass"]  # its entry-point name, loaded by module path
