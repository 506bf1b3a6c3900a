"""highest_die: exact odds for opposed mixed pools (seed 003).

The random part of an attack is three mixed pools: the attacker's dice, the
defender's dice and the struck token's soak dice. The model **probes** the real
pipeline up to the roll, where the ruleset has settled both pools (weapon dice,
the Reeling bonus d8, the chosen defense's dice, whatever a pack added), then:

- step 4: the attacker's successes are its dice strictly above the defender's
  highest die. Conditioning on that highest die ``h``, each attacker die of
  size ``s`` beats it with probability ``(s − h)/s``: a sum of independent
  Bernoulli dice. On a Counter the defender's successes are found the same way
  against the attacker's highest die; both cannot be positive at once (the
  winner's highest die beats the loser's), so the two halves add up.
- steps 5–6: damage from the successes (normal, slaying, critical), the
  weapon's bonus and the struck token's Hurt/Injured; soak dice at 4+, a botch
  (every die a 1) adding 1.
- step 7: conditions by final damage (any hit: Reeling), only those the token
  did not hold; Overkilled frightens the struck token's allies within 4 paces.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import prod
from typing import Any

from vtt_bridge import hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, dice, outcome_from

from .rules import conditions_for, damage_for, soak_dice, within

__all__ = ["exchange", "highest_die_outcomes", "soak_roll", "vtt_bridge_exact_odds"]


def exchange(attack: tuple[int, ...], defense: tuple[int, ...], *, counter: bool) -> Distribution[tuple[int, int]]:
    """``(attacker successes, counter successes)`` of two mixed pools (counter 0 unless ``counter``)."""
    wins = dice.highest(defense).bind(lambda h: dice.count_above(attack, h))
    pairs: dict[tuple[int, int], Fraction | float] = {(k, 0): p for k, p in wins.items() if k > 0}
    if counter and defense:
        back = dice.highest(attack).bind(lambda g: dice.count_above(defense, g))
        pairs.update(((0, m), p) for m, p in back.items() if m > 0)
    pairs[(0, 0)] = 1 - sum(pairs.values(), Fraction(0))
    return Distribution(pairs)


def soak_roll(sizes: tuple[int, ...]) -> Distribution[tuple[int, bool]]:
    """``(points soaked, botched)``: each die 4+ soaks one; every die a 1 is a botch."""
    if not sizes:
        return Distribution.certain((0, False))
    soaked = dice.count_at_least(sizes, 4)
    botch = Fraction(1, prod(sizes))
    pairs: dict[tuple[int, bool], Fraction | float] = {(k, False): p for k, p in soaked.items()}
    pairs[(0, False)] -= botch
    pairs[(0, True)] = botch
    return Distribution(pairs)


def _weapon(system: Mapping[str, Any], wanted: str | None) -> Mapping[str, Any]:
    weapons = system.get("weapons", ())
    return next(w for w in weapons if w["id"] == wanted) if wanted else weapons[0]


def _melee_weapon(system: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((w for w in system.get("weapons", ()) if w.get("range", "melee") == "melee"), None)


def _allies_near(request: OddsRequest, struck: str) -> list[str]:
    """The struck token's side within 4 paces, or named by the client (as ``ruleset.py`` finds them)."""
    tokens = request.tokens
    system = tokens[struck].system
    side = system.get("side")
    if not side:
        return []
    named = request.declaration["near_target" if struck == request.targets[0] else "near_attacker"]
    out = []
    for token in tokens.values():
        if token.id == struck or token.ruleset != request.ruleset:
            continue
        other = token.system
        if other.get("side") == side and (token.id in named or within(system.get("position"), other.get("position"))):
            out.append(token.id)
    return out


def highest_die_outcomes(request: OddsRequest) -> Distribution[AttackOutcome] | None:
    probe = request.probe()
    if not probe.exhausted:
        return Distribution.certain(outcome_from(probe.ctx.outcome))
    if probe.step != "roll":
        return None
    ctx = probe.ctx
    attacker_id, defender_id = request.attacker, request.targets[0]
    attacker, defender = request.tokens[attacker_id].system, request.tokens[defender_id].system
    defense = ctx.outcome.get("defense")
    if defense not in (None, "parry", "dodge", "counter"):
        return None  # a pack's own defense
    weapons = {
        defender_id: _weapon(attacker, request.declaration.get("weapon")),
        attacker_id: _melee_weapon(defender),
    }
    extra_soak = tuple(ctx.soak_dice)

    def struck_by(pair: tuple[int, int]) -> tuple[str, int] | None:
        if pair[0]:
            return defender_id, pair[0]
        if pair[1]:
            return attacker_id, pair[1]
        return None

    def resolve(hit: tuple[str, int] | None) -> Distribution[AttackOutcome]:
        if hit is None:
            return Distribution.certain(AttackOutcome.miss())
        struck, successes = hit
        system = request.tokens[struck].system
        held = tuple(system.get("conditions", ()))
        weapon = weapons[struck]
        damage = damage_for(
            successes=successes, kind=weapon.get("kind", "normal"), weapon_bonus=weapon.get("damage", 0), conditions=held
        ).total
        allies = [a for a in _allies_near(request, struck) if not {"afraid", "dead"} & set(request.tokens[a].system.get("conditions", ()))]

        def effects(roll: tuple[int, bool]) -> AttackOutcome:
            soaked, botch = roll
            final = max(0, damage - soaked) + (1 if botch else 0)
            gained = conditions_for(final)
            reached = {(struck, c) for c in gained if c not in held}
            if "overkilled" in gained:
                reached |= {(a, "afraid") for a in allies}
            countered = struck == attacker_id
            return AttackOutcome(hit=not countered, damage=0 if countered else final, conditions=frozenset(reached))

        return soak_roll(soak_dice(system) + extra_soak).map(effects)

    pools = exchange(tuple(ctx.attack_dice), tuple(ctx.defense_dice), counter=defense == "counter")
    return pools.map(struck_by).bind(resolve)


@hookimpl
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """The exact model for ``highest_die``; any defense answer is modelled (through the probe)."""
    if ruleset != "highest_die" or request.unknown_answers({"defense"}):
        return None
    outcomes = highest_die_outcomes(request)
    if outcomes is None:
        return None
    return ExactOdds(outcomes=outcomes)
