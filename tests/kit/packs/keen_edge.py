"""Keen Edge: one more die in the duel's attack roll, when declared."""

from vtt_bridge import hookimpl


@hookimpl
def duel_roll(ctx):
    if ctx.declared("keen-edge") is not None:
        ctx.pool += 1
        ctx.note("Keen Edge: +1 die")
