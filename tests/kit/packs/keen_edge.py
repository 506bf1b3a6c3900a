"""Keen Edge: one more die in the duel's attack roll, when declared."""

from vtt_bridge import Declarable, hookimpl


@hookimpl
def vtt_bridge_declarables(ruleset):
    return [Declarable(id="keen-edge", label="Keen Edge", plugin="")] if ruleset == "duel" else None


@hookimpl
def duel_roll(ctx):
    if ctx.declared("keen-edge") is not None:
        ctx.pool += 1
        ctx.note("Keen Edge: +1 die")
