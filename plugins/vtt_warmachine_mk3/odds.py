"""Warmachine MkIII: exact odds for single-target attacks (seed 001, Appendix A).

Every die of such an attack is in the model: the attack roll (2d6, +1 boosted,
extra dice, lowest removed; all 1s miss, all 6s hit with two dice or more, a
pair is a critical hit), the damage roll (2d6 + POW or P+S − ARM, same dice
handling), the d6 choosing the grid column or spiral branch where the damage
starts — which decides which systems or aspects are crippled — and Tough's d6
(5–6: heal one box, no longer disabled, knocked down; no roll for a model that
is knocked down, a critical knockdown included).

The numbers the ruleset settles before each roll — dice count (boosts as
answered, declared extra dice), MAT/RAT and modifiers, DEF (5 against a
knocked-down model at range), POW or P+S, ARM — are read by **probing** the
real pipeline with scripted dice up to that roll, so the model never repeats
that bookkeeping. Automatic results (Stealth, out of range, declared auto-hit,
melee against a knocked-down model) come out of the same probes.

Not modelled (Monte Carlo instead): AOE weapons (deviation and blast depend on
the table's geometry), sprays and other attacks on several models, and any
answered reroll, Shield Guard or damage transference. The
``warmachine_abilities`` pack is accounted for: with its decisions at their
default ("decline") it changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from vtt_bridge import hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, dice, outcome_from

from . import damage, rules

__all__ = ["attack_roll", "damage_points", "hit_chance", "vtt_bridge_exact_odds", "warmachine_outcomes"]

ABILITIES = "vtt_warmachine_abilities"
#: Decisions whose answers the model understands: boosts (through the probes), and
#: the pack's and rerolls' declines.
DECLINES = {"reroll_attack": "decline", "reroll_damage": "decline", "redirect": "decline", "transfer_damage": "decline"}
BOOSTS = ("boost_attack", "boost_damage")

_D6 = Distribution.uniform(range(1, 7))


def _kept(faces: tuple[int, ...], discard: int) -> tuple[int, ...]:
    """The dice left after removing the ``discard`` lowest, always leaving one (faces sorted)."""
    return faces[max(0, min(discard, len(faces) - 1)) :]


def attack_roll(n: int, modifier: int, defense: int, *, discard: int = 0, auto_hit: bool = False) -> Distribution[tuple[bool, bool]]:
    """``(hit, critical)`` of an attack roll of ``n`` d6 judged by ``rules.judge_attack``."""

    def judge(faces: tuple[int, ...]) -> tuple[bool, bool]:
        result = rules.judge_attack(_kept(faces, discard), modifier, defense, auto_hit=auto_hit)
        return result.did_hit, result.critical

    return dice.faces(n, 6).map(judge)


def hit_chance(n: int, needed: int) -> Fraction:
    """The chance ``n`` d6 reach ``needed`` (all 1s miss, all 6s hit with two dice or more)."""
    return attack_roll(n, 0, needed).prob(lambda hc: hc[0])


def damage_points(n: int, power: int, arm: int, *, discard: int = 0) -> Distribution[int]:
    """Damage points of a damage roll: kept dice + POW − ARM, at least 0."""
    return dice.faces(n, 6).map(lambda faces: rules.judge_damage(_kept(faces, discard), power, arm).points)


def _critical_effect(weapon: rules.Weapon) -> str:
    return (weapon.critical or "").lower().replace("critical", "").strip(" _-")


def _applied(system: Mapping[str, Any], model: str, points: int, knocked_down: bool) -> Distribution[tuple[int, frozenset[tuple[str, str]]]]:
    """``(damage marked, conditions)`` of ``points`` damage on a model: step 10a–e."""
    track = damage.track_of(system)
    marked = damage.marked_of(system, track)
    starts = _D6 if track.rolled else Distribution.certain(1)
    tough = bool(system.get("tough"))

    def marking(start: int) -> Distribution[tuple[int, frozenset[tuple[str, str]]]]:
        m = damage.mark(track, marked, points, start)
        reached = {(model, f"crippled:{name}") for name in m.crippled}
        if damage.remaining(track, m.marked) > 0:
            return Distribution.certain((m.points, frozenset(reached)))
        down = reached | {(model, "disabled"), (model, "boxed"), (model, "destroyed")}
        if not tough or knocked_down:
            return Distribution.certain((m.points, frozenset(down)))
        recovered = reached | {(model, "knocked_down")}
        return _D6.map(lambda face: (m.points, frozenset(recovered if rules.tough_recovers(face) else down)))

    return starts.bind(marking)


def warmachine_outcomes(request: OddsRequest) -> Distribution[AttackOutcome] | None:
    """The outcome distribution of a single-target attack without AOE, or ``None``."""
    target = request.targets[0]
    decl = request.declaration
    mods = decl["modifiers"]
    weapon = rules.weapon_of(request.tokens[request.attacker].system, decl["weapon"])
    if weapon is None or weapon.aoe or weapon.spray or decl.get("models_under_template"):
        return None
    first = request.probe()
    if not first.exhausted:  # decided without a die: out of range, Stealth...
        return Distribution.certain(outcome_from(first.ctx.outcome))

    if first.step == "attack_roll_dice":
        n = first.ctx.attack_dice
        # Does the roll hit whatever it shows (melee against a knocked-down model)? The
        # verdicts that skip the roll never get here, so distance (Stealth) does not matter.
        me, them = request.tokens[request.attacker].system, request.tokens[target].system
        verdict = rules.automatic(me, them, weapon, mods, 0.0)
        auto = verdict is not None and verdict.roll and verdict.did_hit
        attacks = attack_roll(n, first.ctx.attack_mod, first.ctx.target_def, discard=mods["discard_lowest_attack"], auto_hit=auto)
        hitting = [faces for faces in dice.faces(n, 6) if rules.judge_attack(
            _kept(faces, mods["discard_lowest_attack"]), first.ctx.attack_mod, first.ctx.target_def, auto_hit=auto).did_hit]
        if not hitting:
            return Distribution.certain(AttackOutcome.miss())
        second = request.probe(hitting[0])
    elif first.step == "damage_roll_dice":  # hit without a roll: never a critical
        attacks = Distribution.certain((True, False))
        second = first
    else:
        return None
    if not second.exhausted or second.step != "damage_roll_dice":
        return None
    ctx = second.ctx
    points = damage_points(ctx.damage_dice, ctx.damage_pow, ctx.target_arm, discard=mods["discard_lowest_damage"])
    system = request.tokens[target].system
    knockdown = _critical_effect(weapon) == "knockdown"
    already_down = bool(system.get("knocked_down"))

    landings: dict[tuple[int, bool], Distribution[AttackOutcome]] = {}

    def landing(p: int, knocked: bool) -> Distribution[AttackOutcome]:
        """Step 10 for ``p`` points, once per (points, knocked down by a critical)."""
        key = (p, knocked)
        found = landings.get(key)
        if found is None:
            base = frozenset({(target, "knocked_down")}) if knocked else frozenset()
            if p <= 0:
                found = Distribution.certain(AttackOutcome(hit=True, damage=0, conditions=base))
            else:
                found = _applied(system, target, p, already_down or knocked).map(
                    lambda dc: AttackOutcome(hit=True, damage=dc[0], conditions=base | dc[1])
                )
            landings[key] = found
        return found

    def after_hit(critical: bool) -> Distribution[AttackOutcome]:
        knocked = critical and knockdown
        return points.bind(lambda p: landing(p, knocked))

    return attacks.bind(lambda hc: after_hit(hc[1]) if hc[0] else Distribution.certain(AttackOutcome.miss()))


def _understood(request: OddsRequest) -> bool:
    for key in request.answers:
        if key in BOOSTS:
            continue  # the probes pay for and roll a boost exactly as the pipeline does
        if DECLINES.get(key) is None or request.answer(key) != DECLINES[key]:
            return False
    return True


@hookimpl
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """The exact model for ``warmachine_mk3``; ``None`` for AOE, sprays, several models, rerolls answered."""
    if ruleset != "warmachine_mk3" or not _understood(request):
        return None
    outcomes = warmachine_outcomes(request)
    if outcomes is None:
        return None
    return ExactOdds(outcomes=outcomes, accounts_for=frozenset({ABILITIES}))
