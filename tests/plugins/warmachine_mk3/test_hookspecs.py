"""Contract: one documented hookspec per step, in order; the ruleset's own impls; every hook exercised."""

import inspect
import re

import pytest

from vtt_bridge import hookimpl

import vtt_warmachine_mk3
from vtt_warmachine_mk3 import hookspecs, ruleset

from .kit import at, grunt, jack, model, run, tokens

RULESET = ruleset.RULESET
STEP_OF = {f"warmachine_mk3_{s.name}": s for s in RULESET.all_steps()}
ASK_OF = {f"warmachine_mk3_{s.ask.name}_options": s for s in RULESET.all_steps() if s.ask}
SPECS = [name for name, fn in vars(hookspecs).items() if name.startswith("warmachine_mk3_") and callable(fn)]


def test_one_spec_per_hook_in_rulebook_order():
    expected = []
    for s in RULESET.all_steps():
        if s.ask:
            expected.append(f"warmachine_mk3_{s.ask.name}_options")
        expected.append(f"warmachine_mk3_{s.name}")
    assert SPECS == expected
    assert sorted(SPECS) == sorted(RULESET.hook_names())


@pytest.mark.parametrize("name", SPECS)
def test_every_spec_is_typed_and_documented_in_one_layout(name):
    fn = getattr(hookspecs, name)
    assert list(inspect.signature(fn).parameters) == ["ctx"]
    assert fn.__annotations__ == {"ctx": "AttackContext", "return": "list[Option]" if name in ASK_OF else "None"}
    doc = inspect.getdoc(fn)
    step = STEP_OF.get(name) or ASK_OF[name]
    number = step.title.split(".")[0]
    assert re.match(rf"Step {number}[.,] ", doc), doc.splitlines()[0]
    assert "The ruleset's own implementation" in doc
    assert ":param ctx:" in doc and ":return:" in doc
    assert "Stops at first non-None result." not in doc  # no hook here is firstresult


def test_the_rulesets_own_implementations_run_last_except_the_per_model_numbers():
    for name in SPECS:
        opts = getattr(vtt_warmachine_mk3, name).vtt_bridge_impl
        if name in ("warmachine_mk3_attack_roll", "warmachine_mk3_damage_roll"):
            assert opts["tryfirst"] and not opts["trylast"], name
        else:
            assert opts["trylast"] and not opts["tryfirst"], name


def test_the_package_exports_every_implementation():
    assert sorted(vtt_warmachine_mk3.__all__) == sorted(["RULESET", "vtt_bridge_rulesets", *SPECS])


class Recorder:
    """Implements every hook and records which ran."""

    def __init__(self):
        self.seen = set()


def _recorder():
    rec = Recorder()
    for name in SPECS:
        def impl(self, ctx, _name=name):
            self.seen.add(_name)
        setattr(Recorder, name, hookimpl(impl))
    return rec


RECORDER = _recorder()


def test_every_hook_is_called_by_some_attack():
    packs = (RECORDER,)
    # a grunt destroyed: every step but the AOE branch
    run(tokens(jack(focus=3), grunt("a")), dice=[4, 3, 3, 2], packs=packs)
    # an AOE miss that deviates onto a model
    run(tokens(jack(focus=0), grunt("a", position=at(0, 8)), grunt("d", position=at(0, 10))),
        weapon="Bombard", dice=[1, 2, 1, 2, 6, 6, 1, 1], packs=packs)
    # a tough model that recovers, a warjack grid
    run(tokens(jack(focus=0), grunt("a", tough=True)), dice=[4, 3, 3, 2, 6], packs=packs)
    run(tokens(jack(focus=0), jack("a", owner="bob", position=at(0, 3))), dice=[4, 3, 6, 6, 2], packs=packs)
    run(tokens(jack(focus=0), model("a", kind="warbeast", DEF=12, ARM=16, spiral=[3] * 6, position=at(0, 3))),
        dice=[4, 3, 6, 6, 2], packs=packs)
    assert RECORDER.seen == set(SPECS)
