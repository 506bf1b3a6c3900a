"""Shield Guard (step 6): a guard takes a ranged hit meant for a friendly model.

Once per round, when a friendly model within 3" of this model is directly hit
by an enemy ranged attack (not a spray), this model may be hit instead: it is
hit automatically and suffers all damage and effects. A knocked-down,
stationary or destroyed model cannot guard. The guard's owner decides; the
guard's token remembers the round's use (``shield_guard_used``, which the GM
clears at the start of the round).
"""

from __future__ import annotations

from typing import Any

from vtt_bridge import AttackContext, Option, hookimpl

from .listing import flag, owners
from .measure import edge_distance

__all__ = ["RANGE", "eligible_guards", "warmachine_mk3_redirect", "warmachine_mk3_redirect_options"]

RANGE = 3.0  # inches (brief: within 3")
PREFIX = "shield_guard:"


def _weapon(ctx: AttackContext) -> dict[str, Any]:
    name = ctx.declaration.get("weapon")
    for weapon in ctx.attacker.system.get("weapons") or ():
        if weapon.get("name") == name:
            return weapon
    return {}


def eligible_guards(ctx: AttackContext) -> list[str]:
    """Tokens that may Shield Guard the model directly hit, nearest first."""
    hit = ctx.direct_hit
    if not hit:
        return []
    weapon = _weapon(ctx)
    if weapon.get("kind") != "ranged" or weapon.get("spray"):
        return []
    target = ctx.token(hit)
    friends = owners(target)
    if not friends or friends & owners(ctx.attacker):
        return []  # only against an enemy's attack on a friendly model
    there = ctx.current(hit)
    found = []
    for token_id, token in ctx.tokens.items():
        if token_id in (hit, ctx.attacker.id) or token.ruleset != ctx.ruleset.id:
            continue
        me = ctx.current(token_id)
        has_it = me.get("shield_guard") or flag(token, "shield_guard")
        if not has_it or me.get("shield_guard_used") or not (owners(token) & friends):
            continue
        if any(me.get(state) for state in ("knocked_down", "stationary", "destroyed", "removed")):
            continue
        gap = edge_distance(me, there)
        if gap <= RANGE + 1e-9:
            found.append((gap, token_id))
    return [token_id for _, token_id in sorted(found)]


@hookimpl(optionalhook=True)
def warmachine_mk3_redirect_options(ctx: AttackContext) -> list[Option]:
    guards = eligible_guards(ctx)
    if not guards:
        return []
    return [
        Option(
            id=f"{PREFIX}{guard}",
            label=f"{ctx.token(guard).name}: Shield Guard, be hit instead of {ctx.token(ctx.direct_hit).name}",
            token=guard,
        )
        for guard in guards
    ]


@hookimpl(optionalhook=True)
def warmachine_mk3_redirect(ctx: AttackContext) -> None:
    answer = ctx.answer("redirect")
    if answer is None or not answer.option.startswith(PREFIX):
        return
    guard = answer.option[len(PREFIX):]
    ctx.redirect_to = guard
    ctx.update(guard, shield_guard_used=True)
    ctx.note("Shield Guard: {} steps in", ctx.token(guard).name)
