"""Damage transference (step 9g): a warlock passes damage to one of its warbeasts.

When a warlock would suffer damage, it may spend 1 fury to have a warbeast of
its battlegroup within its control range (twice its FURY, in inches) suffer
the damage instead. The warlock's owner decides. Damage the warbeast has no
boxes for comes back to the warlock; the ruleset's step 9g applies that.
"""

from __future__ import annotations

from vtt_bridge import AttackContext, Option, hookimpl

from .listing import flag, owners
from .measure import edge_distance

__all__ = ["eligible_warbeasts", "warmachine_mk3_damage_transfer", "warmachine_mk3_transfer_damage_options"]

PREFIX = "transfer:"


def eligible_warbeasts(ctx: AttackContext) -> list[str]:
    """Warbeasts the warlock ``ctx.item`` may transfer ``ctx.damage_points`` to."""
    warlock = ctx.item
    if warlock is None or ctx.damage_points <= 0 or ctx.damage_to != warlock:
        return []  # no damage, or already moved: moved damage does not move again
    me = ctx.current(warlock)
    if me.get("kind") != "warlock" or int(me.get("fury") or 0) < 1:
        return []
    if not flag(ctx.token(warlock), "transference"):
        return []  # an effect denies this warlock transference
    control = 2 * int(me.get("FURY") or 0)
    found = []
    for beast in me.get("battlegroup") or ():
        if beast not in ctx.tokens:
            continue
        them = ctx.current(beast)
        if them.get("kind") != "warbeast" or them.get("destroyed") or them.get("removed"):
            continue
        if edge_distance(me, them) <= control + 1e-9:
            found.append(beast)
    return found


@hookimpl(optionalhook=True)
def warmachine_mk3_transfer_damage_options(ctx: AttackContext) -> list[Option]:
    warlock = ctx.item or ""
    beasts = eligible_warbeasts(ctx)
    if not beasts:
        return []
    return [
        Option(
            id=f"{PREFIX}{beast}",
            label=f"Spend 1 fury: {ctx.token(beast).name} suffers the {ctx.damage_points} damage",
            token=warlock,
        )
        for beast in beasts
    ]


@hookimpl(optionalhook=True)
def warmachine_mk3_damage_transfer(ctx: AttackContext) -> None:
    answer = ctx.answer("transfer_damage")
    if answer is None or not answer.option.startswith(PREFIX):
        return
    warlock, beast = ctx.item or "", answer.option[len(PREFIX):]
    fury = int(ctx.current(warlock).get("fury") or 0)
    ctx.update(warlock, fury=fury - 1)
    ctx.damage_to = beast
    ctx.note("damage transference: {} spends 1 fury ({} → {})", ctx.token(warlock).name, fury, fury - 1)
