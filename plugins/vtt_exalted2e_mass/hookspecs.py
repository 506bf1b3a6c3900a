"""Hooks of the ``exalted2e_mass`` ruleset: the WoA Order of War Attack Events (seed 000).

One spec per step, in the order of ``ruleset.steps``, and one per decision's
options hook. The ruleset's own implementation of every hook is ``trylast``:
a pack's implementation runs before it (and sees the numbers as the previous
step left them) or wraps it (``wrapper=True``) to adjust what it computed.

The working numbers a pack may change are the context's traced properties:
``attack_pool``, ``successes``, ``magnitude_bonus``, ``war_dv``, ``dv``,
``penalty``, ``defense_dice``, ``raw_damage``, ``hardness``, ``soak``,
``damage_pool``, ``ping_floor``, ``levels``, ``might``, ``damage``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtt_bridge import hookspec

if TYPE_CHECKING:  # pragma: no cover
    from vtt_bridge import AttackContext, Option

# -------------------------------------------------------------------------
# Step 1. Declaration of attack
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_declare_attack(ctx: AttackContext) -> None:
    """Step 1. The unit's commander (or a solo unit) declares the attack: close or
    ranged, the target, the Charms in use except reroll effects, and whether the
    attack cannot be dodged or blocked.

    The ruleset's own implementation refuses an attack by a unit that is routed
    or destroyed (a solo unit: incapacitated or worse), adds the attack pool to
    ``ctx.attack_pool`` (see step 3) and the declared external penalties to
    ``ctx.penalty``. A pack checks its Charm's cost here and raises
    ``InvalidRequest`` to refuse it.

    :param ctx: the attack context; ``ctx.declaration`` is validated and frozen.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 2. Defender declares response
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_defense_options(ctx: AttackContext) -> list[Option]:
    """Step 2, before the defender answers. Offer the defender's responses.

    The ruleset's own implementation offers ``war`` (War DV) and ``nothing``
    (no defense: DV 0, formation, shield or fortifications and height still
    count — the same id as ``exalted2e``'s), and to a solo unit also
    ``dodge`` and ``parry`` (its individual DVs); unanswered, the best DV is
    taken. Stunts are not part of this answer: they are asked at step 5,
    after the attack roll (``defense_stunt``). A pack adds options for its
    defensive Charms.

    :param ctx: the attack context.
    :return: options to add to the decision; ``[]`` or ``None`` for none.
    """


@hookspec
def exalted2e_mass_declare_defense(ctx: AttackContext) -> None:
    """Step 2. The defender declares its response: War DV or nothing (then no DV
    applies); a solo unit may use its normal Dodge or Parry DV instead. War DV is
    (Intelligence + War + Unit Defense) ÷ 2, rounded as the commander's own DVs
    are, then modified by formation and by shield or cover.

    The ruleset's own implementation adds War DV to ``ctx.war_dv`` and the DV
    of the response chosen (``ctx.answer("defense")``) to ``ctx.dv`` — for
    ``nothing`` only the formation, shield or fortification and height
    modifiers (a solo unit's wound penalty too), which apply after the
    reduction to zero. For a pack's own option it adds no DV: the pack adds
    to ``ctx.dv`` itself.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 3. Attack roll
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_attack_roll(ctx: AttackContext) -> None:
    """Step 3. Roll the attack at difficulty 1, 10s counting twice. A commander rolls
    Wits + War + Unit Accuracy; a solo unit its normal attack pool with no more
    Ability dots than its War. The difference between the two Magnitudes (a solo
    unit counts as 0) is then added to the successes, without a cap.

    The ruleset's own implementation rolls ``ctx.attack_pool``, adds the
    Magnitude difference to ``ctx.magnitude_bonus``, and sets ``ctx.successes``
    to the successes rolled plus any a pack added before, plus that bonus (at
    least 0). The roll is kept as ``ctx.stash[ATTACK_ROLL]``. A pack that runs
    first adds dice to ``ctx.attack_pool``, automatic successes to
    ``ctx.successes``, or Magnitude to ``ctx.magnitude_bonus``.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 4. Attack reroll
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_attack_reroll_options(ctx: AttackContext) -> list[Option]:
    """Step 4, before the attacker answers. Offer the attacker's reroll effects.

    The ruleset's own implementation offers none, so the decision is asked only
    when a pack offers a reroll; ``decline`` is then added as the default.

    :param ctx: the attack context.
    :return: options to add; ``[]`` or ``None`` for none.
    """


@hookspec
def exalted2e_mass_attack_reroll(ctx: AttackContext) -> None:
    """Step 4. The attacker may activate Charms or effects that reroll the attack.

    The pack whose option was chosen (``ctx.answer("attack_reroll")``) rolls its
    reroll through ``ctx.dice`` in this step (``vtt_exalted2e.rules.roll_pool``).
    The ruleset's own implementation keeps the better of the attack roll and the
    rolls made in this step, sets the others aside (a reroll struck through under
    this step; the first roll stays as judged, a note says it is set aside), and
    counts it again with the Magnitude difference.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 5. Subtract external penalties, apply special defenses
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_defense_stunt_options(ctx: AttackContext) -> list[Option]:
    """Step 5, before the defender answers. Offer the defensive stunts: "If
    successes remain, defender rolls extra dice derived from stunts".

    The ruleset's own implementation offers ``1``, ``2`` and ``3`` (stunt
    dice, the same ids as ``exalted2e``'s; ``decline`` is added as the default)
    when successes remain past the external penalties and the DV and the
    defender defends; otherwise nothing, and it is not asked.

    :param ctx: the attack context.
    :return: options to add; ``[]`` or ``None`` for none.
    """


@hookspec
def exalted2e_mass_apply_defense(ctx: AttackContext) -> None:
    """Step 5. Subtract external penalties from the successes, the DV last. If any
    remain, the defender rolls its stunt and Charm dice (the stunt awards no
    Essence); their successes add to the DV. No successes left: a miss, the
    cycle ends.

    The ruleset's own implementation subtracts ``ctx.penalty`` and ``ctx.dv``
    (a negative DV blocks as 0), rolls the ``defense_stunt`` dice plus
    ``ctx.defense_dice`` (a pack adds dice to it before), adds their successes
    to ``ctx.dv`` — a negative DV stays negative, so they fill it first — and
    ends the cycle on a miss.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 6. Defender reroll
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_defense_reroll_options(ctx: AttackContext) -> list[Option]:
    """Step 6, before the defender answers. Offer the defender's reroll effects.

    The ruleset's own implementation offers none, so the decision is asked only
    when a pack offers a reroll; ``decline`` is then added as the default.

    :param ctx: the attack context.
    :return: options to add; ``[]`` or ``None`` for none.
    """


@hookspec
def exalted2e_mass_defense_reroll(ctx: AttackContext) -> None:
    """Step 6. The defender may activate Charms or effects that reroll its defense.
    No successes left: a miss, the cycle ends.

    The pack whose option was chosen (``ctx.answer("defense_reroll")``) rolls its
    reroll of ``ctx.stash[DEFENSE_ROLL]`` through ``ctx.dice`` in this step.
    The ruleset's own implementation keeps the better roll, moves ``ctx.dv``
    and ``ctx.successes`` by the difference, and ends the cycle on a miss.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 7. Calculate raw damage
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_raw_damage(ctx: AttackContext) -> None:
    """Step 7. Raw damage is the unit's damage (commander's Charisma + Unit Damage;
    a solo unit's normal weapon damage) plus the remaining successes. Effects that
    modify raw damage apply now.

    The ruleset's own implementation adds that to ``ctx.raw_damage``; a pack
    adds its own before (or wraps it).

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 8. Apply Hardness and soak, roll damage (sub-steps 8A–8E)
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_damage(ctx: AttackContext) -> None:
    """Step 8. Look up the target's Hardness and soak of the attack's damage type.

    The ruleset's own implementation adds the target's Hardness to
    ``ctx.hardness`` and its soak to ``ctx.soak`` (a solo unit's: natural plus
    armored, as in individual combat, plus the token's ``soak``); sub-steps
    8A–8E follow.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


@hookspec
def exalted2e_mass_hardness(ctx: AttackContext) -> None:
    """Step 8A. Hardness equal to or above the raw damage: the target is struck but
    takes no damage (and no Might), and the cycle ends.

    The ruleset's own implementation compares ``ctx.hardness`` with
    ``ctx.raw_damage`` and ends the cycle.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


@hookspec
def exalted2e_mass_soak(ctx: AttackContext) -> None:
    """Step 8B. Every point of soak removes one die from the raw damage.

    The ruleset's own implementation adds ``ctx.raw_damage − ctx.soak`` (at
    least 0) to ``ctx.damage_pool``.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


@hookspec
def exalted2e_mass_ping(ctx: AttackContext) -> None:
    """Step 8C. A pool below the attacking unit's Magnitude (a solo unit: the greater
    of its weapon's Overwhelming rating and its Essence) becomes that number, even
    when that is more than the raw damage.

    The ruleset's own implementation adds that number to ``ctx.ping_floor``,
    raises ``ctx.damage_pool`` to it, and reports ``outcome["ping"]``.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


@hookspec
def exalted2e_mass_damage_roll(ctx: AttackContext) -> None:
    """Step 8D. Effects on post-soak damage apply; then roll the pool. Each success
    (a 10 counts once) is one health level of the attack's type.

    The ruleset's own implementation rolls ``ctx.damage_pool`` (a pack changes it
    before) and adds the successes to ``ctx.levels``.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


@hookspec
def exalted2e_mass_might(ctx: AttackContext) -> None:
    """Step 8E. Add the attacking unit's Might to the health levels rolled.

    The ruleset's own implementation adds the unit's Might to ``ctx.might`` and
    ``ctx.levels + ctx.might`` to ``ctx.damage``, the health levels dealt.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 9. Counterattacks
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_counterattack_options(ctx: AttackContext) -> list[Option]:
    """Step 9, before the defender answers. Offer the defender's counterattack effects.

    The ruleset's own implementation offers none, so the decision is asked only
    when a pack offers one; ``decline`` is then added as the default. There is no
    counter to a counterattack: within one, the decision is not asked and this
    hook is not called (the step's ``Ask.when``).

    :param ctx: the attack context.
    :return: options to add; ``[]`` or ``None`` for none.
    """


@hookspec
def exalted2e_mass_counterattack(ctx: AttackContext) -> None:
    """Step 9. A counterattack the defender chose is resolved now: steps 1–8 again
    with the roles swapped. A counterattack draws no counterattack.

    The ruleset's own implementation nests the counterattack
    (``ctx.nest(kind="counterattack")``) with a declaration of the same attack
    kind naming the chosen option as its Charm, so the offering pack finds
    itself declared there.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """


# -------------------------------------------------------------------------
# Step 10. Apply results
# -------------------------------------------------------------------------


@hookspec
def exalted2e_mass_apply_results(ctx: AttackContext) -> None:
    """Step 10. Damage and other effects land, at the same time as those of any
    counterattack the defender launched.

    The ruleset's own implementation writes the target's new health track and
    the conditions it reached (``routed``, ``destroyed``; a solo unit's
    ``incapacitated``, ``dying``...) to the token, and reports them in
    ``ctx.outcome["conditions"]`` together with the counterattack's.

    :param ctx: the attack context.
    :return: nothing; the value is ignored.
    """
