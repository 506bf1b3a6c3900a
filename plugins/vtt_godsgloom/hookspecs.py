"""GODSGLOOM Attack Test (ATC) hooks, one per step in rulebook order (seed 004).

Every step is called as ``godsgloom_<step>(ctx)``. The ruleset's own
implementation is ``trylast``: a pack's implementation runs before it (or
wraps it). The working numbers a pack may read or change are listed on the
ruleset (``ctx.attacker_attack_dice``, ``ctx.defender_blocks``, ``ctx.wounds``...);
every change is traced with the plugin that made it.

The active player is the attacker, the inactive player the defender.
"""

from __future__ import annotations

from vtt_bridge import AttackContext, Option, hookspec

# -------------------------------------------------------------------------
# ATC.10 Roll
# -------------------------------------------------------------------------


@hookspec
def godsgloom_roll(ctx: AttackContext) -> None:
    """Step ATC.10. Both players roll at once: the attacker its whole statline (🟥 and 🟦)
    plus modifiers; the defender its whole Guard in melee, only Guard's 🟦 against ranged.

    The ruleset's own implementation applies the declared modifiers and each unit's
    🟡 Boost (+1 🟥 +1 🟦) and 🟣 Weak (−1 🟥 −1 🟦) tokens to
    ``ctx.<side>_<colour>_dice`` (spending those tokens), then rolls every non-empty
    pool as its own d6 roll ("attacker 🟥", "defender 🟦"...) and counts Hits and Blocks.
    A pack adds dice by changing ``ctx.<side>_<colour>_dice`` before it runs.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# ATC.20 Reroll: the Reroll Dice Procedure (RDP)
# -------------------------------------------------------------------------


@hookspec
def godsgloom_reroll(ctx: AttackContext) -> None:
    """Step ATC.20. Resolve the Reroll Dice Procedure: the active player, then the inactive one.

    The ruleset's own implementation notes the rerolls each player holds for this
    test (``ctx.<side>_pool_rerolls``, ``ctx.<side>_single_rerolls``, read from the
    tokens). A pack grants a player rerolls for this test by adding to those numbers
    here; the four RDP sub-steps that follow offer and spend them.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


@hookspec
def godsgloom_active_pool_reroll_options(ctx: AttackContext) -> list[Option]:
    """Step RDP.10. The options of the active player's Pool Reroll decision.

    The ruleset's own implementation offers ``pool`` — reroll every die the
    attacker rolled, 🟥 and 🟦 alike, successes too — while
    ``ctx.attacker_pool_rerolls`` is above 0.
    The engine adds "decline"; with no options at all the decision is not asked.

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option` (every implementation's lists are
        joined); ``[]`` or None offers nothing.
    """


@hookspec
def godsgloom_active_pool_reroll(ctx: AttackContext) -> None:
    """Step RDP.10. The active player may reroll every die of its pool — 🟥 and 🟦,
    successes too; the new results replace the old. Asked again until it answers "decline".

    The ruleset's own implementation rerolls every die the attacker rolled, both
    colours, as a roll of this step per colour ("attacker 🟥 Pool Reroll": the
    replaced results ``rerolled``, the new ones after them; ATC.10's roll stays as
    judged), and spends one of
    ``ctx.attacker_pool_rerolls``; answer None or "decline" does
    nothing. Ids it does not know (a pack's own options) are left to that pack.

    :param ctx: the attack context; ``ctx.answer("active_pool_reroll")`` holds the choice.
    :return: None; the result is ignored.
    """


@hookspec
def godsgloom_active_single_reroll_options(ctx: AttackContext) -> list[Option]:
    """Step RDP.10. The options of the active player's next Single-Die Reroll.

    The ruleset's own implementation offers ``die:<colour>:<position>`` (position
    1-based within that pool) for every die the attacker may still reroll, while
    ``ctx.attacker_single_rerolls`` is above 0. Dice added by Critical Effects come
    later and are never offered.

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option`; ``[]`` or None offers nothing.
    """


@hookspec
def godsgloom_active_single_reroll(ctx: AttackContext) -> None:
    """Step RDP.10. The active player rerolls one die it picks, one at a time, each
    after seeing the last result; the same die may be rerolled again.

    The ruleset's own implementation rerolls the chosen die as a roll of this step
    ("attacker 🟥 die 2 reroll") and spends one of
    ``ctx.attacker_single_rerolls``; answer None or "decline" does nothing.

    :param ctx: the attack context; ``ctx.answer("active_single_reroll")`` holds the choice.
    :return: None; the result is ignored.
    """


@hookspec
def godsgloom_inactive_pool_reroll_options(ctx: AttackContext) -> list[Option]:
    """Step RDP.20. The options of the inactive player's Pool Reroll decision.

    As RDP.10 for the defender: ``pool`` (every die it rolled, both colours)
    while ``ctx.defender_pool_rerolls`` is above 0.

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option`; ``[]`` or None offers nothing.
    """


@hookspec
def godsgloom_inactive_pool_reroll(ctx: AttackContext) -> None:
    """Step RDP.20. The inactive player may reroll every die of its pool, both colours.

    As RDP.10 for the defender, spending ``ctx.defender_pool_rerolls``.

    :param ctx: the attack context; ``ctx.answer("inactive_pool_reroll")`` holds the choice.
    :return: None; the result is ignored.
    """


@hookspec
def godsgloom_inactive_single_reroll_options(ctx: AttackContext) -> list[Option]:
    """Step RDP.20. The options of the inactive player's next Single-Die Reroll.

    As RDP.10 for the defender, while ``ctx.defender_single_rerolls`` is above 0.

    :param ctx: the attack context.
    :return: a list of :class:`~vtt_bridge.Option`; ``[]`` or None offers nothing.
    """


@hookspec
def godsgloom_inactive_single_reroll(ctx: AttackContext) -> None:
    """Step RDP.20. The inactive player rerolls one die it picks, one at a time.

    As RDP.10 for the defender, spending ``ctx.defender_single_rerolls``.

    :param ctx: the attack context; ``ctx.answer("inactive_single_reroll")`` holds the choice.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# ATC.30 Criticals: the Critical Effects Procedure (CEP)
# -------------------------------------------------------------------------


@hookspec
def godsgloom_criticals(ctx: AttackContext) -> None:
    """Step ATC.30. Two or more 6s on a player's 🟥 → it rolls one extra 🟥; two or more
    1s on its 🟦 → one extra 🟦. Extra dice count at once and can't be rerolled.

    The ruleset's own implementation checks the attacker, then the defender (🟥
    before 🟦), rolls each extra die as a roll of this step ("attacker 🟥
    critical extra die"), adds it to its pool and recounts ``ctx.<side>_hits`` / ``ctx.<side>_blocks`` from the dice.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# ATC.40 Apply Auto-Successes
# -------------------------------------------------------------------------


@hookspec
def godsgloom_auto_successes(ctx: AttackContext) -> None:
    """Step ATC.40. Rules granting Auto-⚔️ or Auto-🛡️ add those successes to the results;
    they are not rolled, can't be rerolled and trigger no Critical Effects.

    The ruleset's own implementation adds each unit's ``auto`` hits and blocks and the
    declaration's ``auto`` (the attacker's) to ``ctx.<side>_hits`` / ``ctx.<side>_blocks``.
    A ranged defender's Auto-⚔️ are not added: it inflicts nothing. A pack adds its
    own with ``ctx.attacker_hits += 1`` and the like.

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# ATC.50 Cancel
# -------------------------------------------------------------------------


@hookspec
def godsgloom_cancel(ctx: AttackContext) -> None:
    """Step ATC.50. Each defender 🛡️ cancels one attacker ⚔️; in melee each attacker 🛡️
    also cancels one defender ⚔️.

    The ruleset's own implementation sets ``ctx.wounds`` (the attacker's uncancelled
    Hits) and ``ctx.attacker_wounds`` (the defender's, melee only).

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """


# -------------------------------------------------------------------------
# ATC.60 Inflict
# -------------------------------------------------------------------------


@hookspec
def godsgloom_inflict(ctx: AttackContext) -> None:
    """Step ATC.60. Each uncancelled ⚔️ is one 🩸 Wound: the attacker's on the defender and,
    in melee, the defender's on the attacker, at the same time. Then the Status Check on
    both: Current Health exactly 1 → Decimated, gains a 🟣 Weak token; 0 or less → Destroyed.

    The ruleset's own implementation lowers both units' ``health.current``, gives a
    Decimated unit its Weak token, and fills the outcome (``hit``, ``damage``,
    ``attacker_wounds``, ``conditions``, hits and blocks per side).

    :param ctx: the attack context.
    :return: None; the result is ignored.
    """
