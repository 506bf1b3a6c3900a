"""highest_die hooks, one per step in rulebook order (seed 003).

Every step is called as ``highest_die_<step>(ctx)``. The ruleset's own
implementation is ``trylast``: a pack's implementation runs before it (or wraps
it). Working numbers a pack may read or change: ``ctx.attack_dice``,
``ctx.defense_dice``, ``ctx.successes``, ``ctx.counter_successes``,
``ctx.damage``, ``ctx.soak_dice``, ``ctx.soaked``; every change is traced.

"The struck" below is whoever a hit lands on: the target, or the attacker when
the target's Counter wins.
"""

from __future__ import annotations

from vtt_bridge import AttackContext, Option, hookspec

# -------------------------------------------------------------------------
# 1. Declare
# -------------------------------------------------------------------------


@hookspec
def highest_die_declare_attack(ctx: AttackContext) -> None:
    """Step 1. The attacker declares its target and weapon (Damage bonus; normal, slaying or
    critical; melee or ranged). An Afraid combatant may not Attack.

    The ruleset's own implementation picks the declared weapon (default: the
    attacker's first), refuses an Afraid, Dying or Dead attacker or a Dead target
    (``invalid_request``), and sets ``ctx.attack_dice`` to the weapon's dice.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# 2. Defense
# -------------------------------------------------------------------------


@hookspec
def highest_die_defense_options(ctx: AttackContext) -> list[Option]:
    """Step 2. The defenses offered to the target, each naming the dice it rolls.

    The ruleset's own implementation offers Parry and Counter (its first melee
    weapon's dice) against a melee attack when it holds a melee weapon, Counter only
    if it is not Reeling, and Dodge (its ``dodge`` dice, else its Body dice) always;
    nothing to a Dying target, which is helpless and not asked.

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def highest_die_declare_defense(ctx: AttackContext) -> None:
    """Step 2. The defender chooses how to defend: Parry, Dodge or Counter, as its weapon
    and state allow.

    The ruleset's own implementation sets ``ctx.defense_dice`` to the chosen
    defense's dice; with no answer (a helpless target) it rolls none. The rules'
    default is Parry when offered, else Dodge. An option it does not know (a
    pack's) is left to that pack, which should set ``ctx.defense_dice`` itself.

    :param ctx: the attack context; ``ctx.answer("defense")`` holds the choice.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# 3. Roll
# -------------------------------------------------------------------------


@hookspec
def highest_die_roll(ctx: AttackContext) -> None:
    """Step 3. Both roll their pools; a Reeling target gives the attacker a bonus d8.

    The ruleset's own implementation adds the bonus d8 to ``ctx.attack_dice``, then
    rolls ``ctx.attack_dice`` ("attack") and ``ctx.defense_dice`` (named after the
    defense). A pack adds dice by changing those numbers before it runs.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# 4. Successes
# -------------------------------------------------------------------------


@hookspec
def highest_die_successes(ctx: AttackContext) -> None:
    """Step 4. Each attacker die strictly higher than the defender's single highest die is
    one success; none is a miss. On a Counter, defender dice strictly higher than the
    attacker's highest die are successes against the attacker, with the defender's weapon.

    The ruleset's own implementation sets ``ctx.successes`` and
    ``ctx.counter_successes``, marks the winning dice on the card, and ends the
    cycle as a miss when neither side succeeded.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# 5. Damage
# -------------------------------------------------------------------------


@hookspec
def highest_die_damage(ctx: AttackContext) -> None:
    """Step 5. Damage per success: 1 (normal), 2 (slaying), or s + ⌊s/2⌋ in total
    (critical); plus the weapon's Damage bonus; plus 1 if the struck is Hurt and 1 if Injured.

    The ruleset's own implementation sets ``ctx.damage``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# 6. Soak
# -------------------------------------------------------------------------


@hookspec
def highest_die_soak(ctx: AttackContext) -> None:
    """Step 6. The struck rolls its Soak dice (Body, + Will with the Gift of Resolve,
    + Armor): each die showing 4+ soaks one point; all 1s is a botch, +1 damage.

    The ruleset's own implementation puts the struck's soak dice before any a pack
    already added to ``ctx.soak_dice``, rolls them ("soak"), and sets ``ctx.soaked``
    and the final ``ctx.damage``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# 7. Effects
# -------------------------------------------------------------------------


@hookspec
def highest_die_effects(ctx: AttackContext) -> None:
    """Step 7. Any hit makes the struck Reeling, even at 0 damage. The final damage adds
    conditions, which accumulate: 1 Hurt · 2 + Afraid · 3 + Injured · 4 + Dying · 5 Dead ·
    6+ Overkilled, and the struck's allies within 4 paces become Afraid.

    The ruleset's own implementation updates the struck's (and frightened allies')
    ``conditions`` and fills the outcome.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """
