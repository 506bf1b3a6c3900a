"""Warmachine MkIII attack sequence hooks, one per step of Appendix A in order (seed 001).

Every step is called as ``warmachine_mk3_<step>(ctx)``. The ruleset's own
implementation is ``trylast``: a pack's implementation runs before it, or wraps
it (``wrapper=True``) to act on its result. Three per-model steps that open a
loop (``attack_roll``, ``damage_roll``; marked *tryfirst* below) are the
exception: the ruleset sets that model's numbers first, so a pack's
implementation of the same hook can change them.

Working numbers, each change traced on the card with the plugin that made it:

- ``ctx.weapon_rng`` — the weapon's RNG in inches (step 3 measures against it);
- ``ctx.attack_dice``, ``ctx.attack_mod``, ``ctx.target_def`` — the current model's
  attack roll: dice, what is added to them (MAT/RAT + modifiers), the DEF to reach;
- ``ctx.direct_hit`` — the token id of the model the attack directly hit ("" if none;
  a spray's or Thresher's hits are not "direct");
- ``ctx.redirect_to`` — set at step 6 to the token id that is hit instead;
- ``ctx.damage_dice``, ``ctx.damage_pow``, ``ctx.target_arm`` — the current model's
  damage roll: dice, POW or P+S (+ bonuses), ARM (+ shields and such);
- ``ctx.damage_points`` — damage the current roll would deal (step 9), or damage
  marked on the current model (step 10);
- ``ctx.damage_to`` — set at step 9g to the token id that suffers the damage instead.

While the attack resolves, ``ctx.outcome["models"][token_id]`` holds what the
ruleset has found out about each model so far (``hit``, ``how``, ``critical``,
``roll``, ``needed``, ``direct``, ``blast``, ``pow``, ``damage``...). The
current attack or damage roll is the last in ``ctx.dice.rolls`` from step b on.

Decisions (``<name>_options`` hooks list their options; the engine adds the
"decline" option where a decision has one):

- ``boost_attack`` (5a) and ``boost_damage`` (9a): the attacker's owner, offered
  only when the model can pay; default: no boost;
- ``reroll_attack`` (5e) and ``reroll_damage`` (9e): options only from packs;
- ``redirect`` (6): options only from packs (Shield Guard), each naming the token
  whose owner decides; default: no;
- ``transfer_damage`` (9g): options only from packs (damage transference), asked
  to the owner of the model that would suffer the damage; default: no.
"""

from __future__ import annotations

from vtt_bridge import AttackContext, Option, hookspec

# -------------------------------------------------------------------------
# Target (steps 1–4)
# -------------------------------------------------------------------------


@hookspec
def warmachine_mk3_declare_attack(ctx: AttackContext) -> None:
    """Step 1. The attacker declares the attack: the weapon and its target (and, for a
    spray or Thresher-style attack, the other models it covers).

    The ruleset's own implementation checks the declaration against the table (the
    target is still on it, the models under the template are Warmachine models) and
    writes the attack on the card.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_targeted(ctx: AttackContext) -> None:
    """Step 2. Resolve effects that occur when a model is targeted by an attack.

    The ruleset's own implementation does nothing: such effects are special rules,
    which packs implement here.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_range_check(ctx: AttackContext) -> None:
    """Step 3. Check the range to the target. Out of range, the attack misses
    automatically: no attack rolls are made, and the sequence goes to step 6.

    The ruleset's own implementation measures base edge to base edge against
    ``ctx.weapon_rng`` (a pack that extends range adds to it first); out of range it
    records every model potentially hit as missed and calls ``ctx.goto("redirect")``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_auto_hit_miss(ctx: AttackContext) -> None:
    """Step 4. Resolve effects that make the attack hit or miss automatically.

    The ruleset's own implementation applies, per model potentially hit: Stealth
    (a ranged or magic attack from more than 5" misses), a declared automatic hit,
    and melee against a knocked-down or stationary model (hits; the roll is still
    made, to look for a critical hit).

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# Attack roll (step 5, for each model potentially hit)
# -------------------------------------------------------------------------


@hookspec
def warmachine_mk3_attack_rolls(ctx: AttackContext) -> None:
    """Step 5. Make every attack roll the attack calls for: one sequence (5a–e) for each
    model potentially hit, the target first, then the other models a spray or
    Thresher-style attack covers.

    The ruleset's own implementation lists the models on the card; the engine then
    runs the sub-steps once per model with ``ctx.item`` set to it.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_attack_roll(ctx: AttackContext) -> None:
    """Step 5, for one model (``ctx.item``): the attack roll's numbers against it.

    The ruleset's own implementation runs first here (*tryfirst*): it sets
    ``ctx.attack_dice`` to 2, ``ctx.attack_mod`` to MAT or RAT plus aiming, back strike
    and declared bonuses, and ``ctx.target_def`` to the model's DEF (5 against ranged
    and magic attacks when it is knocked down or stationary). A model that step 4
    made hit or miss without a roll ends its sequence here (``ctx.skip``). A pack's
    implementation runs after it and may change the three numbers.

    :param ctx: the attack context; ``ctx.item`` is the model.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_boost_attack_options(ctx: AttackContext) -> list[Option]:
    """Step 5a. The options of the attacker's decision to boost this attack roll.

    The ruleset's own implementation offers ``boost`` when the attacker can pay (1
    focus; a warlock 1 fury; a warbeast is forced, gaining 1 fury up to its FURY) and
    the roll is not boosted already. The engine adds ``decline`` (the default).

    :param ctx: the attack context; ``ctx.item`` is the model.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_attack_roll_dice_count(ctx: AttackContext) -> None:
    """Step 5a. Resolve effects that change the number of dice rolled, such as boosting.

    The ruleset's own implementation adds the declared extra dice and one die for a
    boost: a declared free boost, or the attacker's ``boost`` answer, paid from its
    token. A roll is boosted at most once. A pack adds dice to ``ctx.attack_dice``.

    :param ctx: the attack context; ``ctx.answer("boost_attack")`` holds the choice.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_attack_roll_dice(ctx: AttackContext) -> None:
    """Step 5b. Roll the dice.

    The ruleset's own implementation rolls ``ctx.attack_dice`` d6. When the sequence
    came back from 5e, the dice removed at 5c are added back first and the reroll is
    a roll of its own ("attack roll (reroll)"); the earlier roll stays as it was judged.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_attack_roll_remove_dice(ctx: AttackContext) -> None:
    """Step 5c. Resolve effects that remove dice from the roll.

    The ruleset's own implementation discards the declared number of lowest dice.
    A pack removes dice with ``ctx.dice.rolls[-1].mark(index, "discarded")``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_attack_roll_hit_or_miss(ctx: AttackContext) -> None:
    """Step 5d. Determine whether the model is hit: the dice left plus
    ``ctx.attack_mod`` reach ``ctx.target_def``. All dice 1 misses; all dice 6 hits
    unless only one die is left. A hit with two dice alike is a critical hit.

    The ruleset's own implementation judges the roll and records ``hit``,
    ``critical``, ``roll`` and ``needed`` for the model; a target hit by a
    single-target attack becomes ``ctx.direct_hit``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_reroll_attack_options(ctx: AttackContext) -> list[Option]:
    """Step 5e. The options of the decision to reroll this attack roll.

    The ruleset's own implementation offers nothing: rerolls come from special rules,
    which packs offer here (the engine adds ``decline``, the default).

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_attack_roll_reroll(ctx: AttackContext) -> None:
    """Step 5e. Resolve effects that reroll the attack roll; return to step 5b if
    needed, adding back every die removed at 5c.

    The ruleset's own implementation goes back to 5b when ``reroll_attack`` was
    answered with anything but ``decline``. A pack that rerolls for its own reasons calls
    ``ctx.goto("attack_roll_dice")``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# Steps 6–8
# -------------------------------------------------------------------------


@hookspec
def warmachine_mk3_redirect_options(ctx: AttackContext) -> list[Option]:
    """Step 6. The options of the decision to have another model hit instead of the target.

    The ruleset's own implementation offers nothing. A pack (Shield Guard) offers an
    option per model that may take the hit, with ``Option.token`` set to that model so
    its owner decides; the engine adds ``decline`` (the default).

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_redirect(ctx: AttackContext) -> None:
    """Step 6. Resolve effects that make the attack automatically hit a model other than
    the target.

    The ruleset's own implementation applies ``ctx.redirect_to`` when a pack set it:
    the target is no longer hit, that model is hit automatically and directly instead
    (an AOE centres on it) and suffers the attack's damage.

    :param ctx: the attack context; ``ctx.answer("redirect")`` holds the choice.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_aoe(ctx: AttackContext) -> None:
    """Step 7. Resolve the AOE hit or deviation; every model within the AOE at its final
    position is hit.

    The ruleset's own implementation, for a weapon with an AOE: centred on the model
    directly hit, or else deviating from the target (from the point at maximum range
    when it was out of range) d6 inches (at most half the distance to the target, or
    half the RNG) in a d6 direction, 1 directly away from the attacker, clockwise. Every
    other model whose base is under it suffers a blast damage roll.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_hit_triggers(ctx: AttackContext) -> None:
    """Step 8. Resolve all other effects triggered by hitting or missing.

    The ruleset's own implementation settles ``outcome["hit"]`` and applies the
    weapon's critical effect to each model hit critically — with an AOE
    weapon, to every model the AOE hit (``knockdown``: it is knocked down;
    other effects are listed for the GM).

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# Damage roll (step 9, for each model hit)
# -------------------------------------------------------------------------


@hookspec
def warmachine_mk3_damage_rolls(ctx: AttackContext) -> None:
    """Step 9. Make every damage roll resulting from the attack: one sequence (9a–g) for
    each model hit, direct hits first, then blast hits.

    The ruleset's own implementation lists the models on the card; the engine then
    runs the sub-steps once per model with ``ctx.item`` set to it.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_damage_roll(ctx: AttackContext) -> None:
    """Step 9, for one model hit (``ctx.item``): the damage roll's numbers against it.

    The ruleset's own implementation runs first here (*tryfirst*): it sets
    ``ctx.damage_dice`` to 2, ``ctx.damage_pow`` to the weapon's POW (P+S in melee,
    blast POW for a blast) plus declared bonuses, ``ctx.target_arm`` to the model's ARM
    plus its ``arm_bonus``, and ``ctx.damage_to`` to the model. A pack's implementation
    runs after it and may change them.

    :param ctx: the attack context; ``ctx.item`` is the model.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_boost_damage_options(ctx: AttackContext) -> list[Option]:
    """Step 9a. The options of the attacker's decision to boost this damage roll.

    The ruleset's own implementation offers ``boost`` when the attacker can pay and the
    roll is neither blast damage (never boosted) nor boosted already (a charge, a
    declared boost). The engine adds ``decline`` (the default).

    :param ctx: the attack context; ``ctx.item`` is the model.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_damage_roll_dice_count(ctx: AttackContext) -> None:
    """Step 9a. Resolve effects that change the number of dice rolled, such as boosting.

    The ruleset's own implementation adds declared extra dice (not to blast damage)
    and one die for a boost: a charge attack's or declared free boost, or the
    attacker's ``boost`` answer, paid from its token.

    :param ctx: the attack context; ``ctx.answer("boost_damage")`` holds the choice.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_damage_roll_dice(ctx: AttackContext) -> None:
    """Step 9b. Roll the dice.

    The ruleset's own implementation rolls ``ctx.damage_dice`` d6. When the sequence
    came back from 9e, the dice removed at 9c are added back first and the reroll is
    a roll of its own ("damage roll (reroll)"); the earlier roll stays as it was judged.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_damage_roll_remove_dice(ctx: AttackContext) -> None:
    """Step 9c. Resolve effects that remove dice from the roll.

    The ruleset's own implementation discards the declared number of lowest dice.
    A pack removes dice with ``ctx.dice.rolls[-1].mark(index, "discarded")``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_damage_roll_would_damage(ctx: AttackContext) -> None:
    """Step 9d. Determine whether the roll would damage the model: the dice left plus
    ``ctx.damage_pow`` minus ``ctx.target_arm``; a positive result is damage.

    The ruleset's own implementation sets ``ctx.damage_points`` (0 when the roll fails
    to exceed ARM).

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_reroll_damage_options(ctx: AttackContext) -> list[Option]:
    """Step 9e. The options of the decision to reroll this damage roll.

    The ruleset's own implementation offers nothing: rerolls come from special rules,
    which packs offer here (the engine adds ``decline``, the default).

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_damage_roll_reroll(ctx: AttackContext) -> None:
    """Step 9e. Resolve effects that reroll the damage roll; return to step 9b if
    needed, adding back every die removed at 9c.

    The ruleset's own implementation goes back to 9b when ``reroll_damage`` was
    answered with anything but ``decline``. A pack that rerolls for its own reasons calls
    ``ctx.goto("damage_roll_dice")``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_fails_to_exceed_arm(ctx: AttackContext) -> None:
    """Step 9f. Resolve effects triggered by a damage roll that fails to exceed the ARM
    of a model hit.

    The ruleset's own implementation, when ``ctx.damage_points`` is 0, ends this
    model's damage sequence (``ctx.skip``): it suffers no damage. A pack's trigger runs
    before that.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_transfer_damage_options(ctx: AttackContext) -> list[Option]:
    """Step 9g. The options of the decision to have another model suffer this damage.

    The ruleset's own implementation offers nothing. A pack (damage transference)
    offers an option per model that may suffer it instead; the decision goes to the
    owner of the model that would suffer the damage (or of ``Option.token``); the
    engine adds ``decline`` (the default).

    :param ctx: the attack context; ``ctx.item`` would suffer ``ctx.damage_points``.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_damage_transfer(ctx: AttackContext) -> None:
    """Step 9g. Resolve effects that trigger when a model "would suffer damage", such as
    damage transference.

    The ruleset's own implementation books ``ctx.damage_points`` for the model
    ``ctx.damage_to`` (a pack changes it to move the damage). Damage moved to another
    model that exceeds its unmarked boxes comes back to the model that would have
    suffered it, and cannot be moved again.

    :param ctx: the attack context; ``ctx.answer("transfer_damage")`` holds the choice.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# Damage application (step 10, one damaged model at a time)
# -------------------------------------------------------------------------


@hookspec
def warmachine_mk3_apply_next_options(ctx: AttackContext) -> list[Option]:
    """Step 10, before each pass. The damaged models the active player may choose
    to apply damage to next: "choose one model, follow the damage application
    sequence below, then repeat for each other damaged model".

    The ruleset's own implementation offers every damaged model not yet applied
    (its token id) while two or more remain; with one left it offers nothing and
    the decision is not asked. Unanswered, the first in the declaration's
    ``application_order`` (then the order they were damaged) is taken. The
    answer is ``ctx.answer("apply_next")``, asked of the attacker again after
    each model's sequence.

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option`; ``[]`` or None offers nothing.
    """


@hookspec
def warmachine_mk3_damage_application(ctx: AttackContext) -> None:
    """Step 10. Apply all damage: one damaged model at a time, in the order the active
    player chooses, each through the sequence 10a–e.

    Run once per model. The ruleset's own implementation takes the model chosen at
    the ``apply_next`` decision (the last one left when it is not asked), lists it
    on the card, and the engine runs the sub-steps for it; then the decision is
    asked again for the models still to apply.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_apply_damage(ctx: AttackContext) -> None:
    """Step 10, for one damaged model (``ctx.item``): mark its damage.

    The ruleset's own implementation marks each damage booked for the model: a box or a
    row of boxes in order; on a damage grid from the top of a d6-rolled column,
    overflowing to the right (6 wraps to 1); on a life spiral from the outer box of a
    d6-rolled branch inward, overflowing clockwise. Systems and aspects whose boxes are
    all marked are crippled. ``ctx.damage_points`` is the damage marked.

    :param ctx: the attack context; ``ctx.item`` is the model.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_suffered_damage(ctx: AttackContext) -> None:
    """Step 10a. Resolve effects triggered by the model suffering damage.

    The ruleset's own implementation records the damage on the outcome.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_disabled(ctx: AttackContext) -> None:
    """Step 10b. If all of the model's damage boxes are marked, it is disabled; resolve
    effects triggered by it becoming disabled.

    The ruleset's own implementation marks it ``disabled``, or ends its sequence when it
    is not (``ctx.skip``). Then Tough: a model with Tough that is not knocked down rolls
    a d6; on 5–6 it heals 1 damage point, is no longer disabled and is knocked down,
    which ends its sequence. To react to the model being disabled, wrap this hook.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_boxed(ctx: AttackContext) -> None:
    """Step 10c. If the model is still disabled, it becomes boxed; resolve effects
    triggered by it becoming boxed.

    The ruleset's own implementation marks it ``boxed``, or ends its sequence when it is
    no longer disabled (a pack clears ``disabled`` before it to save the model).

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_destroyed(ctx: AttackContext) -> None:
    """Step 10d. If the model is still boxed, it is destroyed; resolve effects triggered
    by it being destroyed.

    The ruleset's own implementation marks it ``destroyed``, or ends its sequence when it
    is no longer boxed.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_remove(ctx: AttackContext) -> None:
    """Step 10e. Remove the destroyed model from the table, then return to the main
    sequence.

    The ruleset's own implementation marks it ``removed``.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# Resolution (steps 11–14)
# -------------------------------------------------------------------------


@hookspec
def warmachine_mk3_attack_resolved(ctx: AttackContext) -> None:
    """Step 11. The attack is now resolved.

    The ruleset's own implementation settles the outcome (``hit``, ``damage`` on the
    target, ``conditions``) and sums it up on the card.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_after_active(ctx: AttackContext) -> None:
    """Step 12. Resolve the active player's effects that trigger "after the attack is
    resolved" and do not make another attack.

    The ruleset's own implementation does nothing.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_after_inactive(ctx: AttackContext) -> None:
    """Step 13. Resolve all the inactive player's effects that trigger "after the attack
    is resolved".

    The ruleset's own implementation does nothing.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def warmachine_mk3_after_active_attacks(ctx: AttackContext) -> None:
    """Step 14. Resolve the active player's effects that trigger "after the attack is
    resolved" and make an attack (a pack calls ``ctx.nest``).

    The ruleset's own implementation does nothing.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """
