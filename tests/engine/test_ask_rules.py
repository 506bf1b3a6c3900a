"""A ruleset's own rule on a decision's options, without a wrapper: ``Ask.when`` and ``Ask.combine``.

A tiny ruleset ``guard``: one step, ``strike``, asks the defender whether to strike back;
the ruleset offers a plain strike, a pack offers the same option with a weapon to pick.
"""

from __future__ import annotations

import sys

import pluggy
import pytest

from vtt_bridge import Ask, Engine, Option, Param, PluginError, Ruleset, Step, Token, hookimpl, hookspec


@hookspec
def guard_strike_options(ctx) -> list[Option]:
    """Options of the strike decision."""


@hookspec
def guard_strike(ctx) -> None:
    """The defender strikes back, or not."""


STRIKE = Option(id="strike", label="Strike back")
WITH_WEAPON = Option(id="strike", label="Strike (pack)", params={"weapon": Param("string", "Weapon")})
NO = Option(id="decline", label="Let it be")


class Rules:
    @hookimpl(trylast=True)
    def guard_strike_options(self, ctx):
        return [STRIKE]

    @hookimpl(trylast=True)
    def guard_strike(self, ctx):
        answer = ctx.answer("strike")
        ctx.outcome["struck"] = answer is not None and answer.option == "strike"


class Pack:
    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def guard_strike_options(self, ctx):
        self.asked += 1
        return [WITH_WEAPON]


def engine(pack: Pack, **rules) -> Engine:
    ask = Ask(name="strike", prompt="Strike back?", who="defender", decline=NO, **rules)
    ruleset = Ruleset(
        id="guard",
        title="Guard (engine test)",
        steps=(Step(name="strike", title="1. Strike back", ask=ask),),
        hookspecs=sys.modules[__name__],
        token_schema=None,
        declaration_schema=None,
    )
    pm = pluggy.PluginManager("vtt_bridge")
    pm.add_hookspecs(sys.modules[__name__])
    pm.register(Rules(), name="guard")
    pm.register(pack, name="pack")
    return Engine(pm.hook, {"guard": ruleset})


def start(e: Engine, declaration=None):
    tokens = {t: Token(t, t.upper(), "guard", {}) for t in ("a", "b")}
    return e.start("guard", tokens, attacker="a", targets=["b"], declaration=declaration or {}, dice=[])


def merged(ctx, offered):
    """Every option of one id as one: the ruleset's label (offered last), every params."""
    out: dict[str, Option] = {}
    for batch in reversed(offered):
        for option in batch:
            mine = out.get(option.id)
            out[option.id] = option if mine is None else Option(id=mine.id, label=mine.label, params={**option.params, **mine.params})
    return [list(out.values())]


def test_when_false_asks_nothing_and_no_options_hook_runs():
    pack = Pack()
    e = engine(pack, when=lambda ctx: not ctx.declaration.get("stunned"))
    res = start(e, {"stunned": True})
    assert res.advance() is None  # not asked: the run went straight to the end
    assert pack.asked == 0
    assert res.record["outcome"] == {"struck": False} and res.record["decisions"] == []

    res = start(e)
    decision = res.advance()
    assert pack.asked == 1
    assert [o.id for o in decision.options] == ["strike", "strike", "decline"]  # as offered: no combine


def test_combine_gives_the_options_asked_with():
    pack = Pack()
    res = start(engine(pack, combine=merged))
    decision = res.advance()
    assert [(o.id, o.label) for o in decision.options] == [("strike", "Strike back"), ("decline", "Let it be")]
    assert list(decision.options[0].params) == ["weapon"]
    res.answer("strike", {"weapon": "dagger"})
    assert res.advance() is None
    assert res.record["outcome"] == {"struck": True}
    assert res.record["decisions"][0]["answer"] == {"option": "strike", "params": {"weapon": "dagger"}}


def test_a_combine_that_fails_is_a_plugin_error_naming_the_options_hook():
    def broken(ctx, offered):
        raise KeyError("weapon")

    with pytest.raises(PluginError) as err:
        start(engine(Pack(), combine=broken)).advance()
    assert err.value.details["hook"] == "guard_strike_options"
    assert err.value.details["step"] == "strike"
