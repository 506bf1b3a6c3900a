"""A pack whose hook name has a typo: ``duel_rol`` for ``duel_roll``."""

from vtt_bridge import hookimpl


@hookimpl
def duel_rol(ctx):
    ctx.pool += 1
