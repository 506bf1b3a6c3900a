"""A pack that writes to a token snapshot instead of using ctx.update."""

from vtt_bridge import Declarable, hookimpl


@hookimpl
def vtt_bridge_declarables(ruleset):
    return [Declarable(id="vorpal", label="Vorpal", plugin="")] if ruleset == "duel" else None


@hookimpl
def duel_wound(ctx):
    if ctx.declared("vorpal") is not None:
        ctx.token(ctx.item).system["hp"] = 0
