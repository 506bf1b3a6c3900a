"""Exalted 2e mass combat (WoA, seed 000): exact odds by convolving the d10 pools.

As for individual combat, the random part is the attack roll (7+, a 10 counts
twice), the defender's step-5 dice (Charm dice, and the ``defense_stunt``
answer's, asked only while successes remain; their successes add to DV) and the
damage roll (7+, a 10 once). The model **probes** the real pipeline up to the
attack roll — the commander's or solo unit's pool, War DV or a solo DV and the
default choice between them, formation, external penalties, Charm dice are all
settled there — and follows the steps after it with ``rules.py``'s functions:

- step 3: rolled successes (+ any a pack added) + the Magnitude difference, at least 0;
- step 5: minus the external penalties, minus DV (a negative DV blocks as 0);
  nothing left → miss; else the step-5 dice's successes add to the DV (filling
  a negative DV first) and what is past it remains;
- step 7: raw damage = (commander Charisma + Unit Damage) or the solo unit's
  (Strength +) weapon damage, + the successes left;
- step 8: A Hardness ≥ raw → struck, no damage; B soak; C ping up to the floor
  (Magnitude; solo: Overwhelming or Essence); D roll; E + Might;
- step 10: the levels on the target's track; a unit newly filled to its last
  level is routed (bashing) or destroyed, a solo unit gains the individual
  conditions.
"""

from __future__ import annotations

from vtt_bridge import hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, dice, outcome_from
from vtt_exalted2e import rules as exalted
from vtt_exalted2e.rules import HealthTrack

from . import rules

__all__ = ["exalted2e_mass_outcomes", "vtt_bridge_exact_odds"]

#: The mass Charm pack (by module): it only offers reroll and counterattack
#: options whose defaults ("decline") change nothing; answering one is not modelled.
MASS_CHARMS = "vtt_exalted2e_mass_charms"

DECLINES = {"attack_reroll": "decline", "defense_stunt": "decline", "defense_reroll": "decline", "counterattack": "decline"}


def exalted2e_mass_outcomes(request: OddsRequest) -> Distribution[AttackOutcome] | None:
    probe = request.probe()
    if not probe.exhausted:
        return Distribution.certain(outcome_from(probe.ctx.outcome))
    if probe.step != "attack_roll":
        return None
    ctx = probe.ctx
    target = request.targets[0]
    me, foe = request.tokens[request.attacker].system, request.tokens[target].system
    solo, foe_solo = me["solo"], foe["solo"]
    kind = me["damage_type"]

    # Steps 3-5.
    extra = ctx.successes
    bonus = ctx.magnitude_bonus + rules.magnitude_bonus(me["magnitude"], foe["magnitude"])
    penalty, dv = ctx.penalty, ctx.dv
    stunt = exalted.STUNT_DICE.get(request.answer("defense_stunt") or "decline", 0) if ctx.outcome.get("defense") != "nothing" else 0
    defense = dice.success_pool(ctx.defense_dice + stunt, 10, 7, 10)

    def left(rolled: int) -> Distribution[int]:
        past = rules.past_dv(rules.attack_successes(rolled + extra, bonus), penalty)
        if rules.past_dv(past, dv) <= 0:
            return Distribution.certain(0)  # a miss: no step-5 dice are rolled
        return defense.map(lambda successes: rules.past_dv(past, dv + successes))

    attack = dice.success_pool(ctx.attack_pool, 10, 7, 10)
    nets = attack.bind(left)

    # Steps 7-8.
    hardness = ctx.hardness + foe["hardness"].get(kind, 0)
    if foe_solo is None:
        soak = ctx.soak + foe["soak"].get(kind, 0)
    else:
        armor = foe_solo["armor"]
        soak = ctx.soak + exalted.total_soak(
            foe_solo["stamina"],
            kind,
            divine=foe["commander"]["exalted"],
            armor_bashing=armor["bashing"],
            armor_lethal=armor["lethal"],
            natural_bonus=foe["soak"].get(kind, 0),
        )
    weapon = solo["weapon"] if solo is not None else None
    floor = ctx.ping_floor + rules.ping_floor(
        magnitude=me["magnitude"],
        solo=weapon is not None,
        overwhelming=weapon["overwhelming"] if weapon is not None else 1,
        essence=me["commander"]["essence"],
    )

    def raw_damage(successes: int) -> int:
        if solo is None:
            raw = rules.unit_raw_damage(charisma=me["commander"]["charisma"], unit_damage=me["damage"], successes=successes)
        else:
            raw = rules.solo_raw_damage(
                strength=solo["strength"], weapon_damage=weapon["damage"], successes=successes, uses_strength=weapon["strength"]
            )
        return ctx.raw_damage + raw

    def damage_pool(net: int) -> int | None:
        """``None``: a miss; -1: Hardness stops it; else the dice rolled for damage."""
        if net <= 0:
            return None
        raw = raw_damage(net)
        if exalted.hardness_stops(raw, hardness):
            return -1
        post = raw - soak
        return rules.ping(ctx.damage_pool + (post if post > 0 else 0), floor).pool

    # Step 8D: the levels rolled (None: a miss).
    def rolled(pool: int | None) -> Distribution[int | None]:
        if pool is None:
            return Distribution.certain(None)
        if pool < 0:
            return Distribution.certain(-1)  # Hardness: struck, no damage, no Might
        return dice.success_pool(pool, 10, 7, None)

    # Steps 8E and 10.
    track = HealthTrack.from_json(foe["health"])
    might = ctx.might + me["might"]

    def landed(levels: int | None) -> AttackOutcome:
        if levels is None:
            return AttackOutcome.miss()
        if levels < 0:
            return AttackOutcome(hit=True, damage=0)
        damage = ctx.damage + ctx.levels + levels + might
        if damage <= 0:
            return AttackOutcome(hit=True, damage=damage)
        after = exalted.apply_damage(track, damage, kind)
        if foe_solo is not None:
            gained = exalted.new_conditions(track, after)
        else:
            gained = sorted(rules.unit_conditions(after) - rules.unit_conditions(track))
        return AttackOutcome(hit=True, damage=damage, conditions=frozenset((target, c) for c in gained))

    return nets.map(damage_pool).bind(rolled).map(landed)


def _defaults_only(request: OddsRequest) -> bool:
    for key in request.answers:
        if key == "defense":
            continue  # applied by the probe exactly as the pipeline applies it
        if key == "defense_stunt" and request.answer(key) in exalted.STUNT_DICE:
            continue  # stunt dice: modelled at step 5
        if DECLINES.get(key) is None or request.answer(key) != DECLINES[key]:
            return False
    return True


@hookimpl
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """The exact model for ``exalted2e_mass``; ``None`` when a reroll or counterattack is answered."""
    if ruleset != "exalted2e_mass" or not _defaults_only(request):
        return None
    outcomes = exalted2e_mass_outcomes(request)
    if outcomes is None:
        return None
    return ExactOdds(outcomes=outcomes, accounts_for=frozenset({MASS_CHARMS}))
