"""The mass Charm pack's hook implementations (see the package docstring).

Only the public API, the ``exalted2e_mass`` working numbers and stash keys its
hookspecs document, and the shared Exalted dice (``vtt_exalted2e.rules``).
"""

from __future__ import annotations

from vtt_bridge import InvalidRequest, Option, hookimpl
from vtt_exalted2e.rules import roll_pool
from vtt_exalted2e_mass import DEFENSE_ROLL

from .listing import COUNTER, RESURGENT, knows

__all__ = ["COUNTER", "COUNTER_COST", "RESURGENT", "RESURGENT_COST"]

RESURGENT_COST = 4
COUNTER_COST = 3
NAMES = {RESURGENT: "Essence Resurgent", COUNTER: "Solar Counterattack"}

_REROLL_ATTACK = [Option(id=RESURGENT, label=f"Essence Resurgent: {RESURGENT_COST} motes, roll the attack again, keep the better")]
_REROLL_DEFENSE = [
    Option(id=RESURGENT, label=f"Essence Resurgent: {RESURGENT_COST} motes, roll the stunt and Charm dice again, keep the better")
]
_COUNTER = [Option(id=COUNTER, label=f"Solar Counterattack: {COUNTER_COST} motes, strike back")]


def _motes(ctx, token_id: str) -> int:
    return ctx.current(token_id)["commander"].get("motes", 0)


def _can(ctx, token_id: str, charm: str, cost: int) -> bool:
    """The commander knows ``charm`` and has the motes for it."""
    return knows(ctx.token(token_id), charm) and _motes(ctx, token_id) >= cost


def _spend(ctx, token_id: str, charm: str, cost: int) -> None:
    """Take ``cost`` motes from the token's commander, or refuse naming the Charm."""
    commander = ctx.current(token_id)["commander"]
    have = commander.get("motes", 0)
    token = ctx.token(token_id)
    if cost > have:
        raise InvalidRequest(
            f"{token.name} has {have} motes; {NAMES[charm]} needs {cost}",
            details={"charm": charm, "token": token_id, "motes": have, "cost": cost},
        )
    ctx.update(token_id, commander={**commander, "motes": have - cost})
    ctx.note("{} spends {} motes on {}", token.name, cost, NAMES[charm])


def _chose(ctx, decision: str, charm: str) -> bool:
    answer = ctx.answer(decision)
    return answer is not None and answer.option == charm


# ---------------------------------------------------------------------------
# Step 4: the attacker's reroll
# ---------------------------------------------------------------------------


@hookimpl(optionalhook=True)
def exalted2e_mass_attack_reroll_options(ctx) -> list[Option]:
    return _REROLL_ATTACK if _can(ctx, ctx.attacker.id, RESURGENT, RESURGENT_COST) else []


@hookimpl(optionalhook=True)
def exalted2e_mass_attack_reroll(ctx) -> None:
    if not _chose(ctx, "attack_reroll", RESURGENT):
        return
    _spend(ctx, ctx.attacker.id, RESURGENT, RESURGENT_COST)
    # The ruleset keeps the better of the step-3 roll and this one (seed 000, step 4).
    roll_pool(ctx.dice, ctx.attack_pool, label="attack reroll (Essence Resurgent)")


# ---------------------------------------------------------------------------
# Step 6: the defender's reroll
# ---------------------------------------------------------------------------


@hookimpl(optionalhook=True)
def exalted2e_mass_defense_reroll_options(ctx) -> list[Option]:
    if DEFENSE_ROLL not in ctx.stash:
        return []  # no stunt or Charm dice were rolled at step 5: nothing to reroll
    return _REROLL_DEFENSE if _can(ctx, ctx.defender.id, RESURGENT, RESURGENT_COST) else []


@hookimpl(optionalhook=True)
def exalted2e_mass_defense_reroll(ctx) -> None:
    if not _chose(ctx, "defense_reroll", RESURGENT):
        return
    _spend(ctx, ctx.defender.id, RESURGENT, RESURGENT_COST)
    dice = len(ctx.stash[DEFENSE_ROLL].faces)
    roll_pool(ctx.dice, dice, label="defense reroll (Essence Resurgent)")


# ---------------------------------------------------------------------------
# Step 9: counterattacks
# ---------------------------------------------------------------------------


@hookimpl(optionalhook=True)
def exalted2e_mass_counterattack_options(ctx) -> list[Option]:
    foe = ctx.current(ctx.defender.id)
    if foe["solo"] is None or ctx.declaration["attack"] != "close":
        return []  # a character's close-combat answer to a close-combat blow
    return _COUNTER if _can(ctx, ctx.defender.id, COUNTER, COUNTER_COST) else []


@hookimpl(optionalhook=True)
def exalted2e_mass_counterattack(ctx) -> None:
    # The ruleset's own implementation then nests the counterattack (seed 000, step 9).
    if _chose(ctx, "counterattack", COUNTER):
        _spend(ctx, ctx.defender.id, COUNTER, COUNTER_COST)
