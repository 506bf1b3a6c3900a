"""A pack that writes to a token snapshot instead of using ctx.update."""

from vtt_bridge import hookimpl


@hookimpl
def duel_wound(ctx):
    if ctx.declared("vorpal") is not None:
        ctx.token(ctx.item).system["hp"] = 0
