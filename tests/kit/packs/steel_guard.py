"""Steel Guard: a defense option that blocks two hits instead of one."""

from vtt_bridge import Option, hookimpl


@hookimpl
def duel_defense_options(ctx):
    return [Option(id="steel-guard", label="Steel Guard (block 2)")]


@hookimpl(wrapper=True)
def duel_defend(ctx):
    result = yield
    if ctx.answer("defense").option == "steel-guard":
        ctx.block = 2
    return result
