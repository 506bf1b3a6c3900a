"""Hook specifications of the ``exalted2e`` ruleset: the ten Order of Attack Events.

One hook per step, in rulebook order (seed 002), each followed by the options
hook of the decision asked before it. Every hook receives the attack context
``ctx`` (an :class:`~vtt_bridge.AttackContext`) and nothing else.

The ruleset's own implementation of every hook is ``trylast``: a pack's
implementation runs *before* it, so a pack prepares what the ruleset then
uses (more dice, a DV bonus), or wraps it (``wrapper=True``) to adjust what
it produced (raw damage). The working numbers a pack may change, all traced
with the plugin that changed them:

``attack_pool``
    dice in the attack roll (set at step 1, rolled at step 3);
``auto_successes``
    automatic successes added to the attack roll at step 3;
``attack_successes``
    successes of the attack roll that is kept (after step 4);
``external_penalty``
    successes removed before DV (range) at step 5;
``dodge_dv``, ``parry_dv``
    the defender's DVs with bonuses and penalties (step 2);
``dv``
    the DV applied (step 2; defense dice add at step 5; may be negative and
    then blocks as 0);
``dv_bonus``
    points added to the chosen DV at step 2 (defensive Charms);
``defense_dice``
    dice rolled for the defender at step 5, successes adding to DV (the
    stunt's dice join at step 5, Essence Overwhelming's at step 2);
``defense_ability``
    the Ability rating in the pool the DV came from (Dodge, or the parry
    weapon's Ability);
``net_successes``
    successes left after step 5 (and 6);
``raw_damage``, ``hardness``, ``soak``, ``damage_pool``, ``damage``
    step 7 and 8's numbers; ``damage`` is health levels;
``post_soak``
    effects that increase or decrease post-soak damage (step 8: added to the
    final damage pool, after the minimum; the declaration's ``post_soak``
    joins it there).

Facts about the attack the ruleset settles before step 1 are in
``ctx.outcome``: ``weapon``, ``ability`` (the attack's Ability), ``attack_type``,
``damage_type``; from step 2 on also ``defense`` (``"dodge"``, ``"parry"``,
``"nothing"``).

Decisions (answer keys): ``defense`` (defender, step 2; not asked of a
target unaware of the attack or out of the fight), ``attack_reroll``
(attacker, step 4), ``bystander`` (the GM, after a botch when the
declaration names ``bystanders``), ``defense_stunt`` (defender, step 5: ``1``, ``2``, ``3``
stunt dice or ``decline``, asked after the attack roll and only while successes
remain), ``defense_reroll`` (defender, step 6), ``damage_effect``
(attacker, step 7), ``counterattack`` (defender, step 9); in a
counterattack they are prefixed ``counterattack/``. The reroll, raw-damage
and counterattack decisions are asked only when a pack offers an option
for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtt_bridge import hookspec

if TYPE_CHECKING:  # pragma: no cover
    from vtt_bridge import AttackContext, Option

# ---------------------------------------------------------------------------
# Step 1. Declaration of attack
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_declare_attack(ctx: AttackContext) -> None:
    """Step 1. The attacker declares the attack: weapon and type, stunt dice,
    the Charms that enhance it (not reroll effects), and whether it cannot be
    dodged or parried.

    The ruleset's own implementation checks the range (beyond three times the
    weapon's Range is refused), sets ``ctx.attack_pool`` to Dexterity + Ability
    + Accuracy + stunt dice − off hand − wound penalty − a declared flurry's
    multiple-action penalty (``flurry``: the k-th of N attacks on one tick
    loses N + k − 1 dice unless it declares its own ``penalty``; its first
    attack is the attacker's new action) and ``ctx.external_penalty`` to the
    range penalty. A pack validates its
    declared Charms here (``ctx.declared(id)``), refuses with
    :class:`~vtt_bridge.InvalidRequest` what the token cannot afford, and
    spends motes with ``ctx.update``.

    :param ctx: the attack context.
    :return: ``None``; raise ``InvalidRequest`` to refuse the declaration.
    """


# ---------------------------------------------------------------------------
# Step 2. Defender declares response
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_defense_options(ctx: AttackContext) -> list[Option]:
    """Before step 2. The options the defender is offered: dodge, parry or nothing.

    The ruleset's own implementation offers ``dodge``, ``parry`` and
    ``nothing`` — none of them to a target unaware of the attack (declaration
    ``unaware``) or out of the fight (unconscious, dying, dead), who cannot
    defend without magic: only a pack's own options are then offered, and
    unanswered the target does nothing. Defensive stunts are not part of
    this answer: they come after the attack roll (``defense_stunt``, step
    5). Each of the ruleset's options says the DV it gives in its
    ``detail`` ("Dodge DV 7", "Parry DV 5 (daiklave)"). A pack adds answer
    params to those two by returning an :class:`~vtt_bridge.Option` with the
    same id (its ``params`` are merged into the ruleset's option, the option
    is not offered twice) — the way for a Charm that aids a parry or a dodge
    — or offers an option of its own, which must say the defense it is with
    ``counts_as="dodge"``, ``"parry"`` or ``"nothing"`` (that DV is used,
    and ``ctx.outcome["defense"]`` is that defense): one that does not is a
    ``plugin_error`` naming it, never a guessed DV. The answer arrives as
    ``ctx.answer("defense")`` (``option`` and ``params``). Unanswered, the
    defender falls back on the better DV (a tie goes to parry).

    :param ctx: the attack context.
    :return: a list of options (``[]`` adds none).
    """


@hookspec
def exalted2e_declare_defense(ctx: AttackContext) -> None:
    """Step 2. The defender declares the response — dodge, parry or nothing —
    and any defensive Charms not based on a reroll.

    The ruleset's own implementation sets ``ctx.dodge_dv`` and
    ``ctx.parry_dv``: base DVs (Exalted round up, mortals down; Parry DV
    from the held weapon with the highest Defense — seed 002's "currently
    equipped weapon with the highest Defense", not the brief's "best weapon":
    a held weapon whose Ability would give a higher DV but whose Defense is
    lower does not parry — or a natural weapon with a free hand — a
    two-handed weapon or weapon and shield leave none), 0
    when inapplicable (undodgeable, unblockable, ``dodge_inapplicable``,
    unarmed parry against lethal, aggravated or ranged attacks, no defense,
    unaware or out of the fight), then shield or cover and
    height, less action DV penalty, wound penalty, onslaught (the
    coordinated group's, for a ``coordinated`` attack) and (Dodge only)
    armor mobility and terrain. Then ``ctx.dv`` = the chosen DV +
    ``ctx.dv_bonus``, ``ctx.defense_ability`` and ``ctx.outcome["defense"]``.
    A pack reads ``ctx.answer("defense").params``, spends motes, and adds to
    ``ctx.dv_bonus`` or ``ctx.defense_dice`` before it.

    :param ctx: the attack context.
    :return: ``None``; raise ``InvalidRequest`` to refuse the defender's answer.
    """


# ---------------------------------------------------------------------------
# Step 3. Attack roll
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_attack_roll(ctx: AttackContext) -> None:
    """Step 3. Roll Dexterity + Ability at difficulty 1 (with Accuracy, stunt
    and Charm dice, less penalties); 7+ succeeds and a 10 counts twice.

    The ruleset's own implementation first applies automatic defense — an
    attacking extra whose pool is below the defender's DV misses without a
    roll, ending the cycle — then rolls ``ctx.attack_pool`` d10 and sets
    ``ctx.attack_successes`` (plus ``ctx.auto_successes``). A pack adds dice
    to ``ctx.attack_pool`` or successes to ``ctx.auto_successes`` before it.

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 4. Attack reroll
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_attack_reroll_options(ctx: AttackContext) -> list[Option]:
    """Before step 4. The reroll effects the attacker may use.

    The ruleset's own implementation offers none, so the decision is asked
    only when a pack offers a reroll effect (the ruleset then adds ``decline``,
    keeping the roll). The answer is ``ctx.answer("attack_reroll")``.

    :param ctx: the attack context.
    :return: a list of options (``[]`` when the pack has nothing to offer).
    """


@hookspec
def exalted2e_attack_reroll(ctx: AttackContext) -> None:
    """Step 4. An attacker with a reroll effect may reroll; no die is rerolled
    twice, the better result is final, and if both rolls fail the attack misses.

    A pack whose option was chosen rolls its new dice through ``ctx.dice``
    (a complete reroll: ``ctx.attack_pool`` d10, target 7, double 10). The
    ruleset's own implementation then keeps the best of the step-3 roll and
    every roll made at this step (rerolls set aside are marked discarded; the
    step-3 roll stays as judged there, and a note says which roll counts), sets
    ``ctx.attack_successes`` and ``ctx.outcome["botch"]``, and ends the cycle on
    a miss (no successes; a botch when a 1 shows).

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 4, on a botch: a bystander in the path (seed 002, "Botched Attacks")
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_bystander_options(ctx: AttackContext) -> list[Option]:
    """After step 4, on a botch. Asked only when the declaration names
    ``bystanders``: "If any bystanders stand in the general path of the
    attack, the Storyteller may also rule that the attack hits one of them".

    The ruleset's own implementation offers one option per bystander (its
    token id; the ruleset adds ``decline``, the default). The GM decides. The
    answer is ``ctx.answer("bystander")``.

    :param ctx: the attack context.
    :return: a list of options.
    """


@hookspec
def exalted2e_stray_blow(ctx: AttackContext) -> None:
    """After step 4, on a botch. With ``bystanders`` declared, the blow strikes
    the bystander the GM chose "with a number of 'successes' equal to the 1s
    rolled", then the attack ends as a botch.

    The ruleset's own implementation resolves steps 7–8 against that
    bystander (raw damage = base damage + those successes, Hardness, soak,
    minimum damage, the damage roll), marks its health track, reports
    ``ctx.outcome["bystander"]`` (``token``, ``successes``, ``raw_damage``,
    ``damage``) and ends the cycle (``"botch"``; the botch's DV penalty
    applies as usual).

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 5. Subtract external penalties, apply special defenses
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_defense_stunt_options(ctx: AttackContext) -> list[Option]:
    """Before step 5. The defensive stunts the defender may describe, once the
    attack roll is known: "Stunts to aid defense occur immediately after the
    attack roll, but before determining whether the attack actually hit."

    The ruleset's own implementation offers ``1``, ``2`` and ``3`` (stunt
    dice; the ruleset adds ``decline``) to a defender who dodges or parries while
    successes remain past the DV, and nothing otherwise (then it is not
    asked). The answer is ``ctx.answer("defense_stunt")``.

    :param ctx: the attack context.
    :return: a list of options (``[]`` adds none).
    """


@hookspec
def exalted2e_apply_defense(ctx: AttackContext) -> None:
    """Step 5. Remove successes for external penalties, the defender's DV last;
    dice from defensive stunts and Charms are rolled now and their successes
    add to DV. No successes left: the attack misses.

    The ruleset's own implementation adds the ``defense_stunt`` dice to
    ``ctx.defense_dice`` (a stunt circumventing a mundane inapplicability —
    an unarmed parry against a blade, ``dodge_inapplicable`` — first raises
    the DV to the value it would have had), rolls them as one pool, adds
    the successes to ``ctx.dv``, and sets
    ``ctx.net_successes`` = ``ctx.attack_successes`` − ``ctx.external_penalty``
    − DV (a negative DV blocks as 0), ending the cycle on a miss. A pack adds
    defense dice or an external penalty before it.

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 6. Defense reroll
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_defense_reroll_options(ctx: AttackContext) -> list[Option]:
    """Before step 6. The reroll effects the defender may use when DV did not stop the attack.

    The ruleset's own implementation offers none, so the decision is asked
    only when a pack offers one (the ruleset then adds ``decline``). The answer
    is ``ctx.answer("defense_reroll")``.

    :param ctx: the attack context.
    :return: a list of options (``[]`` when the pack has nothing to offer).
    """


@hookspec
def exalted2e_defense_reroll(ctx: AttackContext) -> None:
    """Step 6. A defender whose DV did not stop the attack may use a reroll
    effect (Essence Resurgent adds half the Ability to DV).

    A pack whose option was chosen changes ``ctx.dv``. The ruleset's own
    implementation then recomputes ``ctx.net_successes`` and ends the cycle
    when no successes remain.

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 7. Calculate raw damage
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_damage_effect_options(ctx: AttackContext) -> list[Option]:
    """Before step 7. Effects the attacker may use once the attack is known to
    hit — a Charm that waits until after the defense to modify raw damage.

    The ruleset's own implementation offers none, so the decision is asked
    only when a pack offers an effect (the ruleset then adds ``decline``). The
    answer is ``ctx.answer("damage_effect")``; the pack applies it in its
    ``exalted2e_raw_damage`` wrapper.

    :param ctx: the attack context.
    :return: a list of options (``[]`` when the pack has nothing to offer).
    """


@hookspec
def exalted2e_raw_damage(ctx: AttackContext) -> None:
    """Step 7. Raw damage = the weapon's base damage (usually Strength + its
    damage) + the successes remaining after step 5; the weapon gives the
    damage type (B, L or A).

    The ruleset's own implementation sets ``ctx.raw_damage`` and
    ``ctx.outcome["raw_damage"]``. A pack modifying raw damage wraps it
    (``wrapper=True``) and changes ``ctx.raw_damage`` after the ``yield``.

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 8. Apply Hardness and soak, roll damage
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_damage(ctx: AttackContext) -> None:
    """Step 8. Hardness equal to or greater than the raw damage absorbs the
    attack; otherwise subtract soak (natural + armored; piercing halves
    armored soak), raise the pool to the minimum damage (the weapon's minimum
    or the attacker's Essence, never above raw damage) and roll it: each
    success (a 10 counts once, no botch) is a health level of the damage type.

    The ruleset's own implementation sets ``ctx.hardness`` (ending the cycle
    when it stops the attack), ``ctx.soak``, ``ctx.damage_pool`` and
    ``ctx.damage``. A pack granting soak adds to ``ctx.soak`` before it (the
    ruleset adds natural and armored soak to it); a pack granting Hardness
    sets ``ctx.hardness`` before it (only the highest rating applies); a
    pack changing post-soak damage adds to ``ctx.post_soak`` before it.

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 9. Counterattack
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_counterattack_options(ctx: AttackContext) -> list[Option]:
    """Before step 9. The counterattacks the defender may launch.

    The ruleset's own implementation offers none, so the decision is asked
    only when a pack offers a counterattack (the ruleset then adds ``decline``).
    Within a counterattack, or when the defender is out of the fight, the
    decision is not asked and this hook is not called (the step's
    ``Ask.when``) — no counterattack against a counterattack. The answer is
    ``ctx.answer("counterattack")``.

    :param ctx: the attack context.
    :return: a list of options (``[]`` when the pack has nothing to offer).
    """


@hookspec
def exalted2e_counterattack(ctx: AttackContext) -> None:
    """Step 9. A defender who retaliates resolves steps 1–8 as a new attack
    against the attacker, simultaneous with the attack that triggered it.
    The attacker's own action DV penalty (and the defender's onslaught) is
    recorded by the ruleset's implementation at this step, so the
    counterattack meets the attacker's already reduced DV.

    A pack whose option was chosen calls ``ctx.nest(kind="counterattack",
    attacker=ctx.defender.id, targets=[ctx.attacker.id], declaration={...})``;
    the nested attack runs right after this step and reads the tokens as they
    were before this attack's damage (the blows land together). The
    ruleset's own implementation notes a declined counterattack.

    :param ctx: the attack context.
    :return: ``None``.
    """


# ---------------------------------------------------------------------------
# Step 10. Apply results
# ---------------------------------------------------------------------------


@hookspec
def exalted2e_apply_results(ctx: AttackContext) -> None:
    """Step 10. Apply the damage and the attack's other effects: health track,
    DV penalties, onslaught.

    The ruleset's own implementation marks ``ctx.damage`` levels on the
    defender's health track and reports the conditions newly reached in
    ``ctx.outcome["conditions"]`` — a counterattack's too, as its damage lands
    at the same time; the attacker's action DV penalty (−1; −2
    more on a botch) and the defender's onslaught against this attacker are
    already recorded at step 9 (an attack that ends early — a miss,
    Hardness — records them before it ends). A pack adds its own token changes
    with ``ctx.update``.

    :param ctx: the attack context.
    :return: ``None``.
    """
