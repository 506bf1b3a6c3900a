"""A pack with a bug: it raises whenever its Charm is declared."""

from vtt_bridge import hookimpl


@hookimpl
def duel_roll(ctx):
    if ctx.declared("cursed-blade") is not None:
        return {}["no such key"]
    return None
