"""Momentum and Onslaught: a GODSGLOOM pack intercepting ATC.20 and ATC.40 only.

It talks to the ruleset only through the public context: the working numbers
``ctx.<side>_single_rerolls`` (which the RDP steps offer and spend) and
``ctx.<side>_hits`` (which ATC.50 cancels).
"""

from __future__ import annotations

from vtt_bridge import AttackContext, Declarable, hookimpl

from .rules import MOMENTUM, ONSLAUGHT, holds, onslaught_applies

__all__ = ["godsgloom_auto_successes", "godsgloom_reroll", "vtt_bridge_declarables"]

# Not inert: a unit holding a trait in its token's ``traits`` has it undeclared too.
DECLARABLES = [
    Declarable(
        id=MOMENTUM,
        label="Momentum",
        plugin="godsgloom_momentum",
        kind="ability",
        description="one Single-Die Reroll in this attack test (ATC.20)",
        inert=False,
    ),
    Declarable(
        id=ONSLAUGHT,
        label="Onslaught",
        plugin="godsgloom_momentum",
        kind="ability",
        description="one Auto-⚔️ at ATC.40 where the attacker's Hits can wound",
        inert=False,
    ),
]


@hookimpl
def vtt_bridge_declarables(ruleset: str):
    return DECLARABLES if ruleset == "godsgloom" else None


# The ruleset's documented working numbers this pack changes, per side.
SINGLE_REROLLS = {"attacker": "attacker_single_rerolls", "defender": "defender_single_rerolls"}
HITS = {"attacker": "attacker_hits", "defender": "defender_hits"}


def _holders(ctx: AttackContext, trait: str) -> list[str]:
    """The sides ("attacker", "defender") whose unit holds ``trait`` in this test."""
    sides = []
    for side, token in (("attacker", ctx.attacker), ("defender", ctx.defender)):
        declared = side == "attacker" and ctx.declared(trait) is not None
        if holds(trait, ctx.current(token.id).get("traits", ()), declared=declared):
            sides.append(side)
    return sides


@hookimpl
def godsgloom_reroll(ctx: AttackContext) -> None:
    """ATC.20: a Momentum holder gets one Single-Die Reroll for this attack test."""
    for side in _holders(ctx, MOMENTUM):
        name = SINGLE_REROLLS[side]
        setattr(ctx, name, getattr(ctx, name) + 1)
        if ctx.tracing:
            ctx.note(f"{side}: Momentum grants one Single-Die Reroll")


@hookimpl
def godsgloom_auto_successes(ctx: AttackContext) -> None:
    """ATC.40: an Onslaught holder adds one Auto-⚔️ where its Hits can wound."""
    melee = ctx.declaration["attack"] == "melee"
    for side in _holders(ctx, ONSLAUGHT):
        if onslaught_applies(side=side, melee=melee):
            name = HITS[side]
            setattr(ctx, name, getattr(ctx, name) + 1)
            if ctx.tracing:
                ctx.note(f"{side}: Onslaught adds one Auto-⚔️")
