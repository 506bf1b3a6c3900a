"""A tiny ruleset used to test the engine itself: not a real game."""

from __future__ import annotations

import sys

from vtt_bridge import Ask, Declarable, Option, Ruleset, Step, StrictSchema, hookimpl, hookspec
from vtt_bridge.schemas import fields


@hookspec
def duel_declare(ctx) -> None:
    """Step 1. Declare."""

@hookspec
def duel_defend(ctx) -> None:
    """Step 2. The defender chooses."""

@hookspec
def duel_defense_options(ctx) -> list[Option]:
    """Options for the defense decision."""

@hookspec
def duel_roll(ctx) -> None:
    """Step 3. Roll."""

@hookspec
def duel_reroll(ctx) -> None:
    """Step 4. Reroll, one die at a time."""

@hookspec
def duel_reroll_options(ctx) -> list[Option]:
    """Options for the reroll decision."""

@hookspec
def duel_wounds(ctx) -> None:
    """Step 5. Wounds per target."""

@hookspec
def duel_wound(ctx) -> None:
    """Step 5a. Wound one target."""

@hookspec
def duel_counter(ctx) -> None:
    """Step 6. Counterattack."""


class System(StrictSchema):
    hp = fields.Integer(required=True)
    rerolls = fields.Integer(load_default=0)


class Declaration(StrictSchema):
    bonus = fields.Integer(load_default=0)
    charms = fields.List(fields.Dict(), load_default=list)


STEPS = (
    Step(name="declare", title="1. Declare"),
    Step(
        name="defend",
        title="2. Defend",
        ask=Ask(name="defense", prompt="Block or take it?", who="defender", default=lambda ctx, o: "block"),
    ),
    Step(name="roll", title="3. Roll"),
    Step(
        name="reroll",
        title="4. Reroll",
        ask=Ask(
            name="reroll",
            prompt="Reroll a die?",
            who="attacker",
            decline=Option(id="decline", label="Done"),
            repeat=True,
        ),
        goto=("roll",),
    ),
    Step(
        name="wounds",
        title="5. Wounds",
        each=lambda ctx: [t.id for t in ctx.targets],
        steps=(Step(name="wound", title="5a. Wound"),),
    ),
    Step(name="counter", title="6. Counter"),
)


def setup(ctx):
    ctx.pool = 2 + ctx.declaration["bonus"]


RULESET = Ruleset(
    id="duel",
    title="Duel (engine test)",
    steps=STEPS,
    hookspecs=sys.modules[__name__],
    token_schema=System,
    declaration_schema=Declaration,
    numbers=("pool", "hits", "block"),
    setup=setup,
    max_targets=3,
)


class DuelRules:
    """The ruleset's own step implementations."""

    @hookimpl
    def vtt_bridge_rulesets(self):
        return [RULESET]

    @hookimpl
    def vtt_bridge_declarables(self, ruleset):
        if ruleset != "duel":
            return None
        return [Declarable(id="riposte", label="Riposte", plugin="duel", description="the defender strikes back")]

    @hookimpl(trylast=True)
    def duel_declare(self, ctx):
        ctx.note("declared")

    @hookimpl(trylast=True)
    def duel_defense_options(self, ctx):
        return [Option(id="block", label="Block"), Option(id="none", label="Take it")]

    @hookimpl(trylast=True)
    def duel_defend(self, ctx):
        ctx.block = 1 if ctx.answer("defense").option == "block" else 0

    @hookimpl(trylast=True)
    def duel_roll(self, ctx):
        roll = ctx.dice.roll(ctx.pool, 6, label="attack", target=4)
        ctx.stash["roll"] = roll
        ctx.hits = roll.successes - ctx.block
        if ctx.hits <= 0 and not ctx.current(ctx.attacker.id).get("rerolls"):
            ctx.outcome["hit"] = False
            ctx.end("miss")

    @hookimpl(trylast=True)
    def duel_reroll_options(self, ctx):
        left = ctx.current(ctx.attacker.id).get("rerolls", 0)
        if not left:
            return []
        return [Option(id="all", label="Reroll everything")]

    @hookimpl(trylast=True)
    def duel_reroll(self, ctx):
        answer = ctx.answer("reroll")
        if answer is not None and answer.option == "all":
            left = ctx.current(ctx.attacker.id)["rerolls"]
            ctx.update(ctx.attacker.id, rerolls=left - 1)
            ctx.goto("roll")
        elif ctx.hits <= 0:
            ctx.outcome["hit"] = False
            ctx.end("miss")

    @hookimpl(trylast=True)
    def duel_wounds(self, ctx):
        ctx.outcome["hit"] = True

    @hookimpl(trylast=True)
    def duel_wound(self, ctx):
        hp = ctx.current(ctx.item)["hp"]
        ctx.update(ctx.item, hp=hp - ctx.hits)

    @hookimpl(trylast=True)
    def duel_counter(self, ctx):
        if ctx.kind != "counterattack" and ctx.declared("riposte") is None:
            return
        if ctx.kind != "counterattack":
            ctx.nest(kind="counterattack", attacker=ctx.defender.id, targets=[ctx.attacker.id], declaration={"bonus": 0, "charms": []})


def tokens():
    from vtt_bridge import Token

    return {
        "a": Token("a", "Attacker", "duel", {"hp": 10, "rerolls": 0}, ownership={"alice": 3}),
        "b": Token("b", "Defender", "duel", {"hp": 10, "rerolls": 0}, ownership={"bob": 3}),
        "c": Token("c", "Bystander", "duel", {"hp": 5, "rerolls": 0}),
    }
