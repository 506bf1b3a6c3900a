"""A pack with a bug: it raises whenever its Charm is declared."""

from vtt_bridge import Declarable, hookimpl


@hookimpl
def vtt_bridge_declarables(ruleset):
    return [Declarable(id="cursed-blade", label="Cursed Blade", plugin="")] if ruleset == "duel" else None


@hookimpl
def duel_roll(ctx):
    if ctx.declared("cursed-blade") is not None:
        return {}["no such key"]
    return None
