"""highest_die: opposed pools where only dice beating the other side's highest die count (seed 003).

Read it like the rulebook page: 1 Declare, 2 Defense (the defender's decision),
3 Roll, 4 Successes, 5 Damage, 6 Soak, 7 Effects. Pools mix die sizes (d4-d12).

A Counter is resolved inside the same sequence rather than as a nested attack:
the one roll decides who strikes whom (both sides cannot succeed at once, since
the winner's highest die beats the loser's), so from step 5 on "the struck" is
the target or, when the Counter wins, the attacker, hit with the defender's weapon.

Scripted dice are drawn in this order: the attacker's dice (weapon dice, any a
pack added, then the Reeling bonus d8), the defender's dice, then the soak dice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from vtt_bridge import AttackContext, Ask, InvalidRequest, Option, Roll, Ruleset, StashKey, Step, hookimpl

from . import hookspecs
from .rules import (
    REELING_BONUS_DIE,
    SOAK_TARGET,
    Soak,
    allowed_defenses,
    chance_to_be_hit,
    conditions_for,
    count_successes,
    damage_for,
    merge_conditions,
    soak,
    soak_dice,
    within,
)
from .schemas import Combatant, Declaration

__all__ = ["RULESET", "sample_tokens"]


class _Exchange:
    """This attack's state between steps: weapons, the defense, the rolls, who is struck."""

    __slots__ = ("weapon", "defense", "defense_weapon", "attack_roll", "defense_roll", "struck", "striker_weapon", "soak")

    def __init__(self) -> None:
        self.weapon: Mapping[str, Any] | None = None
        self.defense: str | None = None
        self.defense_weapon: Mapping[str, Any] | None = None
        self.attack_roll: Roll | None = None
        self.defense_roll: Roll | None = None
        self.struck: str | None = None
        self.striker_weapon: Mapping[str, Any] | None = None
        self.soak: Soak | None = None


EXCHANGE: StashKey[_Exchange] = StashKey("highest_die.exchange")


def _conditions(ctx: AttackContext, token_id: str) -> tuple[str, ...]:
    return tuple(ctx.current(token_id).get("conditions", ()))


def _dice(dice: Sequence[int]) -> str:
    return " ".join(f"d{size}" for size in dice) or "no dice"


def _weapon_name(weapon: Mapping[str, Any]) -> str:
    return weapon.get("name") or weapon["id"]


def _melee_weapon(system: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The weapon a target parries and counters with: its first melee weapon."""
    return next((w for w in system.get("weapons", ()) if w.get("range", "melee") == "melee"), None)


def _defense_dice(system: Mapping[str, Any], defense: str) -> tuple[int, ...]:
    """Parry and Counter roll the melee weapon's dice; Dodge the ``dodge`` dice, else the Body dice."""
    if defense == "dodge":
        return tuple(system.get("dodge") or system.get("body", ()))
    weapon = _melee_weapon(system)
    return tuple(weapon["dice"]) if weapon is not None else ()


def setup(ctx: AttackContext) -> None:
    ctx.attack_dice = ()
    ctx.defense_dice = ()
    ctx.soak_dice = ()
    ctx.stash[EXCHANGE] = _Exchange()
    ctx.outcome.update(
        hit=False,
        damage=0,
        conditions={},
        defense=None,
        successes=0,
        counter_successes=0,
        counter_hit=False,
        counter_damage=0,
        soaked=0,
        botch=False,
    )


# -- 1. Declare ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def highest_die_declare_attack(ctx: AttackContext) -> None:
    attacker = ctx.current(ctx.attacker.id)
    weapons = attacker.get("weapons", ())
    wanted = ctx.declaration.get("weapon")
    weapon = next((w for w in weapons if w["id"] == wanted), None) if wanted else next(iter(weapons), None)
    if weapon is None:
        raise InvalidRequest(
            f"{ctx.attacker.name} has no weapon {wanted!r}" if wanted else f"{ctx.attacker.name} has no weapon",
            details={"weapon": ["Not one of the attacker's weapons."]},
        )
    for condition in ("afraid", "dying", "dead"):
        if condition in attacker.get("conditions", ()):
            # "Afraid targets may not take the Attack action" (seed 003); the Dying and Dead are out of the fight.
            raise InvalidRequest(
                f"{ctx.attacker.name} is {condition} and cannot Attack", details={"attacker": [f"Is {condition}."]}
            )
    if "dead" in _conditions(ctx, ctx.defender.id):
        raise InvalidRequest(f"{ctx.defender.name} is already dead", details={"targets": ["Is dead."]})
    ctx.stash[EXCHANGE].weapon = weapon
    ctx.attack_dice = tuple(weapon["dice"]) + ctx.attack_dice
    bonus = weapon.get("damage", 0)
    if ctx.tracing:
        ctx.note(
            f"{ctx.attacker.name} attacks {ctx.defender.name} with {_weapon_name(weapon)}: "
            f"{_dice(weapon['dice'])}, Damage {bonus:+d}, {weapon.get('kind', 'normal')}, {weapon.get('range', 'melee')}"
        )


# -- 2. Defense -------------------------------------------------------------------------------

_LABELS = {"parry": "Parry with {weapon}: {dice}", "dodge": "Dodge: {dice}", "counter": "Counter with {weapon}: {dice}"}


@hookimpl(trylast=True)
def highest_die_defense_options(ctx: AttackContext) -> list[Option]:
    target = ctx.current(ctx.defender.id)
    held = target.get("conditions", ())
    if "dying" in held or "dead" in held:
        # Helpless ("Dying targets are out of the fight", seed 003): not asked, rolls nothing,
        # so every attack die beats its highest die of 0 ([decision]).
        return []
    weapon = _melee_weapon(target)
    attack = ctx.stash[EXCHANGE].weapon or {}
    allowed = allowed_defenses(
        ranged_attack=attack.get("range") == "ranged", melee_weapon=weapon is not None, reeling="reeling" in held
    )
    name = _weapon_name(weapon) if weapon else ""
    # The attack's dice as the roll will have them (a Reeling target gives a bonus d8).
    attack_dice = tuple(ctx.attack_dice) + ((REELING_BONUS_DIE,) if "reeling" in held else ())
    return [_defense_option(defense, name, _defense_dice(target, defense), attack_dice) for defense in allowed]


@lru_cache(maxsize=256)
def _defense_option(defense: str, weapon: str, dice: tuple[int, ...], attack_dice: tuple[int, ...]) -> Option:
    """A defense on offer with the dice it rolls and the chance it lets the attack through
    (frozen, so made once and shared)."""
    chance = chance_to_be_hit(attack_dice, dice)
    return Option(
        id=defense,
        label=_LABELS[defense].format(weapon=weapon, dice=_dice(dice)),
        detail=f"{round(100 * chance)}% to be hit by {_dice(attack_dice)}",
    )


def _default_defense(ctx: AttackContext, options: tuple[Option, ...]) -> str:
    """The rules' default: Parry when offered, else Dodge; never the riskier Counter.

    The seed names no default; a defender who does not answer in time keeps its guard
    up rather than gambling on a Counter ([decision]).
    """
    ids = [o.id for o in options]
    for choice in ("parry", "dodge"):
        if choice in ids:
            return choice
    return ids[0]


@hookimpl(trylast=True)
def highest_die_declare_defense(ctx: AttackContext) -> None:
    answer = ctx.answer("defense")
    if answer is None:
        ctx.note("{} is helpless and does not defend", ctx.defender.name)
        return
    if answer.option not in ("parry", "dodge", "counter"):
        return  # a pack's own defense
    target = ctx.current(ctx.defender.id)
    exchange = ctx.stash[EXCHANGE]
    exchange.defense = answer.option
    if answer.option != "dodge":
        exchange.defense_weapon = _melee_weapon(target)
    ctx.defense_dice = _defense_dice(target, answer.option) + ctx.defense_dice
    ctx.outcome["defense"] = answer.option


# -- 3. Roll ------------------------------------------------------------------------------------


@hookimpl(trylast=True)
def highest_die_roll(ctx: AttackContext) -> None:
    exchange = ctx.stash[EXCHANGE]
    if "reeling" in _conditions(ctx, ctx.defender.id):
        ctx.attack_dice += (REELING_BONUS_DIE,)
        ctx.note("{} is Reeling: the attacker claims a bonus d{}", ctx.defender.name, REELING_BONUS_DIE)
    exchange.attack_roll = ctx.dice.pool(ctx.attack_dice, label="attack")
    if ctx.defense_dice:
        exchange.defense_roll = ctx.dice.pool(ctx.defense_dice, label=exchange.defense or "defense")


# -- 4. Successes ----------------------------------------------------------------------------------


@hookimpl(trylast=True)
def highest_die_successes(ctx: AttackContext) -> None:
    exchange = ctx.stash[EXCHANGE]
    attack = exchange.attack_roll.active
    defense = exchange.defense_roll.active if exchange.defense_roll is not None else []
    ctx.successes = count_successes(attack, defense)
    # "Strictly higher than the highest die" is "at least highest + 1": the card marks the winners.
    exchange.attack_roll.target = max(defense, default=0) + 1
    if ctx.tracing:
        ctx.note(f"attack {sorted(attack, reverse=True)} against highest {max(defense, default=0)}: {ctx.successes} success(es)")
    if exchange.defense == "counter":
        ctx.counter_successes = count_successes(defense, attack)
        exchange.defense_roll.target = max(attack, default=0) + 1
        if ctx.tracing:
            ctx.note(f"counter {sorted(defense, reverse=True)} against highest {max(attack, default=0)}: "
                     f"{ctx.counter_successes} success(es)")
    ctx.outcome.update(successes=ctx.successes, counter_successes=ctx.counter_successes)
    if ctx.successes:
        exchange.struck, exchange.striker_weapon = ctx.defender.id, exchange.weapon
    elif ctx.counter_successes:
        exchange.struck, exchange.striker_weapon = ctx.attacker.id, exchange.defense_weapon
        if ctx.tracing:
            ctx.note(f"the Counter wins: {ctx.defender.name} strikes {ctx.attacker.name} with {_weapon_name(exchange.defense_weapon)}")
    else:
        ctx.end("miss")


# -- 5. Damage ---------------------------------------------------------------------------------------


@hookimpl(trylast=True)
def highest_die_damage(ctx: AttackContext) -> None:
    exchange = ctx.stash[EXCHANGE]
    weapon = exchange.striker_weapon
    successes = ctx.successes if exchange.struck == ctx.defender.id else ctx.counter_successes
    damage = damage_for(
        successes=successes,
        kind=weapon.get("kind", "normal"),
        weapon_bonus=weapon.get("damage", 0),
        conditions=_conditions(ctx, exchange.struck),
    )
    if ctx.tracing:
        parts = [f"{successes} {weapon.get('kind', 'normal')} success(es): {damage.base}", f"Damage {damage.weapon_bonus:+d}"]
        if damage.hurt:
            parts.append("Hurt +1")
        if damage.injured:
            parts.append("Injured +1")
        ctx.note(", ".join(parts))
    ctx.damage = damage.total


# -- 6. Soak -------------------------------------------------------------------------------------------


@hookimpl(trylast=True)
def highest_die_soak(ctx: AttackContext) -> None:
    exchange = ctx.stash[EXCHANGE]
    ctx.soak_dice = soak_dice(ctx.current(exchange.struck)) + ctx.soak_dice
    if ctx.soak_dice:
        result = soak(ctx.dice.pool(ctx.soak_dice, label="soak", target=SOAK_TARGET).active)
    else:
        result = Soak(soaked=0, botch=False)
    exchange.soak = result
    ctx.soaked = result.soaked
    if result.botch:
        ctx.note("every soak die shows 1: Botch, +1 damage")
    ctx.damage = result.apply(ctx.damage)


# -- 7. Effects ------------------------------------------------------------------------------------------


def _allies_near(ctx: AttackContext, struck: str) -> list[str]:
    """Tokens on the struck's side within 4 paces of it, or named near it by the client."""
    side = ctx.current(struck).get("side")
    if not side:
        return []
    named = ctx.declaration["near_target" if struck == ctx.defender.id else "near_attacker"]
    for token_id in named:
        ctx.token(token_id)  # an unknown id is not_found, not silently ignored
    where = ctx.current(struck).get("position")
    allies = []
    for token in ctx.tokens.values():
        if token.id == struck or token.ruleset != ctx.ruleset.id:
            continue
        system = ctx.current(token.id)
        if system.get("side") == side and (token.id in named or within(where, system.get("position"))):
            allies.append(token.id)
    return allies


@hookimpl(trylast=True)
def highest_die_effects(ctx: AttackContext) -> None:
    exchange = ctx.stash[EXCHANGE]
    struck = exchange.struck
    held = _conditions(ctx, struck)
    gained = conditions_for(ctx.damage)
    ctx.update(struck, conditions=list(merge_conditions(held, gained)))
    reached = {struck: [c for c in gained if c not in held]}
    if ctx.tracing:
        ctx.note(f"{ctx.token(struck).name} takes {ctx.damage} damage: {', '.join(gained)}")
    if "overkilled" in gained:
        for ally in _allies_near(ctx, struck):
            ally_held = _conditions(ctx, ally)
            if "afraid" in ally_held or "dead" in ally_held:
                continue
            ctx.update(ally, conditions=list(merge_conditions(ally_held, ["afraid"])))
            reached[ally] = ["afraid"]
            ctx.note("{} sees it and becomes Afraid", ctx.token(ally).name)
    countered = struck == ctx.attacker.id
    ctx.outcome.update(
        hit=not countered,
        damage=0 if countered else ctx.damage,
        counter_hit=countered,
        counter_damage=ctx.damage if countered else 0,
        soaked=ctx.soaked,
        botch=exchange.soak.botch if exchange.soak else False,
        conditions={token_id: new for token_id, new in reached.items() if new},
    )


# -- the ruleset ------------------------------------------------------------------------------------------

STEPS = (
    Step(name="declare_attack", title="1. Declare"),
    Step(
        name="declare_defense",
        title="2. Defense",
        ask=Ask(name="defense", prompt="How do you defend?", who="defender", default=_default_defense),
    ),
    Step(name="roll", title="3. Roll"),
    Step(name="successes", title="4. Successes"),
    Step(name="damage", title="5. Damage"),
    Step(name="soak", title="6. Soak"),
    Step(name="effects", title="7. Effects"),
)

NUMBERS = ("attack_dice", "defense_dice", "successes", "counter_successes", "damage", "soak_dice", "soaked")


def sample_tokens() -> list[dict[str, Any]]:
    """A sellsword company against marsh raiders, placed in paces."""
    return [
        {
            "id": "brannoc",
            "name": "Brannoc the Sellsword",
            "ruleset": "highest_die",
            "ownership": {"alice": 3},
            "system": {
                "body": [8, 6],
                "will": [6],
                "armor": [6],
                "dodge": [6, 6],
                "gifts": ["resolve"],
                "weapons": [
                    {"id": "longsword", "name": "Longsword", "dice": [8, 8, 6], "damage": 1, "kind": "normal", "range": "melee"}
                ],
                "conditions": [],
                "side": "company",
                "position": {"x": 0, "y": 0},
            },
        },
        {
            "id": "ysolde",
            "name": "Ysolde Quickbow",
            "ruleset": "highest_die",
            "ownership": {"alice": 3},
            "system": {
                "body": [6, 6],
                "will": [8],
                "armor": [4],
                "dodge": [8, 6],
                "gifts": [],
                "weapons": [
                    {"id": "bow", "name": "Hunting Bow", "dice": [8, 6], "damage": 1, "kind": "critical", "range": "ranged"},
                    {"id": "dagger", "name": "Dagger", "dice": [6, 4], "damage": 0, "kind": "normal", "range": "melee"},
                ],
                "conditions": [],
                "side": "company",
                "position": {"x": 6, "y": 2},
            },
        },
        {
            "id": "ogre",
            "name": "Marsh Ogre",
            "ruleset": "highest_die",
            "ownership": {"gm": 3},
            "system": {
                "body": [10, 8],
                "will": [4],
                "armor": [],
                "dodge": [6],
                "gifts": [],
                "weapons": [
                    {"id": "maul", "name": "Bog-oak Maul", "dice": [10, 8], "damage": 2, "kind": "slaying", "range": "melee"}
                ],
                "conditions": [],
                "side": "marsh",
                "position": {"x": 1, "y": 0},
            },
        },
        {
            "id": "goblin",
            "name": "Goblin Spearman",
            "ruleset": "highest_die",
            "ownership": {"gm": 3},
            "system": {
                "body": [6],
                "will": [4],
                "armor": [4],
                "dodge": [6, 4],
                "gifts": [],
                "weapons": [{"id": "spear", "name": "Spear", "dice": [6, 6], "damage": 0, "kind": "normal", "range": "melee"}],
                "conditions": [],
                "side": "marsh",
                "position": {"x": 3, "y": 1},
            },
        },
    ]


RULESET = Ruleset(
    id="highest_die",
    title="Highest Die — opposed pools",
    description="Dice beating the defender's highest die are successes; soak, then conditions (seed 003).",
    steps=STEPS,
    hookspecs=hookspecs,
    token_schema=Combatant,
    declaration_schema=Declaration,
    numbers=NUMBERS,
    setup=setup,
    sample_tokens=sample_tokens,
    damage_unit="damage",
)


@hookimpl
def vtt_bridge_rulesets() -> list[Ruleset]:
    return [RULESET]
