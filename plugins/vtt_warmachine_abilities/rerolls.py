"""Rerolls (steps 5e and 9e): the common sources, offered to the attacker's owner.

Two kinds of source, both read from the models' tokens (the pack's flags,
``flags.warmachine_abilities``, or the ruleset's fields of the same names):

- a model's own ability: ``reroll_attack`` (it may reroll its missed attack
  rolls) and ``reroll_damage`` (it may reroll its damage rolls); each roll is
  rerolled once at most by the model's own ability;
- an ability of a friendly model, ``grants_reroll`` (inches): while the
  attacker stands within that distance of it (base edge to base edge), the
  attacker may reroll one attack or damage roll — once per attack, whoever
  grants it.

"Friendly" means a model with an owner in common with the attacker. The
option ids are ``reroll:self`` and ``reroll:<token id of the granting model>``;
the ruleset then goes back to step b (the dice removed at step c return).
"""

from __future__ import annotations

from vtt_bridge import AttackContext, Option, StashKey, hookimpl

from .listing import flag, owners
from .measure import edge_distance

__all__ = [
    "PREFIX",
    "warmachine_mk3_attack_roll_reroll",
    "warmachine_mk3_damage_roll_reroll",
    "warmachine_mk3_reroll_attack_options",
    "warmachine_mk3_reroll_damage_options",
]

PREFIX = "reroll:"
SELF = "reroll:self"
_GONE = ("destroyed", "removed")

#: What this attack has used: ("attack" | "damage", model) for a model's own
#: ability, and "granted" once a friendly model's reroll is spent.
USED: StashKey[set] = StashKey("warmachine_abilities.rerolls")


def _used(ctx: AttackContext) -> set:
    used = ctx.stash.get(USED)
    if used is None:
        used = ctx.stash[USED] = set()
    return used


def _granters(ctx: AttackContext) -> list[str]:
    """Friendly models whose ability grants the attacker a reroll, nearest first."""
    attacker = ctx.attacker
    friends = owners(attacker)
    me = None  # where the attacker stands, read once a friendly model might grant
    found = []
    for token_id, token in ctx.tokens.items():
        if token_id == attacker.id or token.ruleset != ctx.ruleset.id or not (owners(token) & friends):
            continue
        system = ctx.current(token_id)
        reach = _ability(ctx, token_id, "grants_reroll")
        if reach is None or any(system.get(state) for state in _GONE):
            continue
        if me is None:
            me = ctx.current(attacker.id)
        gap = edge_distance(system, me)
        if gap <= reach + 1e-9:
            found.append((gap, token_id))
    return [token_id for _, token_id in sorted(found)] if found else found


def _ability(ctx: AttackContext, token_id: str, name: str):
    """A reroll ability of a model: its token's system field, else the pack's flag."""
    mine = ctx.current(token_id).get(name)
    return mine if mine not in (None, False) else flag(ctx.token(token_id), name)


def _options(ctx: AttackContext, roll: str, own: bool) -> list[Option]:
    used = _used(ctx)
    model = ctx.item or ""
    options = []
    if own and (roll, model) not in used:
        what = "missed attack rolls" if roll == "attack" else "damage rolls"
        options.append(Option(id=SELF, label=f"Reroll: {ctx.attacker.name} may reroll its {what} (once per roll)"))
    if "granted" not in used:
        for granter in _granters(ctx):
            name = ctx.token(granter).name
            options.append(Option(id=f"{PREFIX}{granter}", label=f"Reroll granted by {name} (once per attack)"))
    return options


def _spend(ctx: AttackContext, decision: str, roll: str) -> None:
    answer = ctx.answer(decision)
    if answer is None or not answer.option.startswith(PREFIX):
        return
    used = _used(ctx)
    if answer.option == SELF:
        used.add((roll, ctx.item or ""))
        ctx.note("{}'s own ability: reroll", ctx.attacker.name)
    else:
        used.add("granted")
        ctx.note("{} grants the reroll", ctx.token(answer.option[len(PREFIX):]).name)


def _missed(ctx: AttackContext) -> bool:
    return not ctx.outcome.get("models", {}).get(ctx.item or "", {}).get("hit", False)


@hookimpl(optionalhook=True)
def warmachine_mk3_reroll_attack_options(ctx: AttackContext) -> list[Option]:
    if not _missed(ctx):
        return []  # these sources reroll missed attack rolls
    return _options(ctx, "attack", bool(_ability(ctx, ctx.attacker.id, "reroll_attack")))


@hookimpl(optionalhook=True)
def warmachine_mk3_attack_roll_reroll(ctx: AttackContext) -> None:
    _spend(ctx, "reroll_attack", "attack")


@hookimpl(optionalhook=True)
def warmachine_mk3_reroll_damage_options(ctx: AttackContext) -> list[Option]:
    return _options(ctx, "damage", bool(_ability(ctx, ctx.attacker.id, "reroll_damage")))


@hookimpl(optionalhook=True)
def warmachine_mk3_damage_roll_reroll(ctx: AttackContext) -> None:
    _spend(ctx, "reroll_damage", "damage")
