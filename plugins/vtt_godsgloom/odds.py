"""GODSGLOOM's exact odds: the Attack Test as convolution of its four pools.

The model follows ``ruleset.py`` step by step, with the rules' defaults:

- ATC.10: each side's pools from statline (attacker) or Guard (defender; only
  🟦 against a ranged attack), plus the declaration's modifiers, +1 per 🟡
  Boost, −1 per 🟣 Weak, never below 0. A 3+ is a success.
- ATC.20: every reroll decision defaults to "decline" — no reroll. A reroll
  answered in advance (a Pool Reroll, ``pool``, or a Single-Die Reroll of a
  named die, ``die:<colour>:<n>``) is chosen without seeing the faces, so each
  rerolled die is simply a fresh die: the pools' distributions are those of no
  reroll, and the model is the same (the probe that validated the request has
  already refused a reroll the unit does not hold or a die it did not roll).
  A pack's own reroll option is not modelled (Monte Carlo).
- ATC.30: two or more 6s on a 🟥 pool add one 🟥 die (a success on 3+, 4 in 6);
  two or more 1s on a 🟦 pool add one 🟦 die. Each pool is classified exactly
  by a multinomial over its faces (misses, plain successes, the critical face).
- ATC.40–60: auto-successes (a ranged defender's Auto-⚔️ count for nothing),
  cancel, wounds on both sides, and the status check: a unit reduced to exactly
  1 is Decimated, to 0 or less Destroyed.

The Momentum pack (``vtt_godsgloom_momentum``) is accounted for when neither unit
holds Onslaught: Momentum only grants a Single-Die Reroll, which the defaults
do not use. Onslaught adds an Auto-⚔️ this model leaves to Monte Carlo.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from vtt_bridge import hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, dice

from .rules import parse_reroll

__all__ = ["godsgloom_outcomes", "pool_successes", "vtt_bridge_exact_odds"]

REROLL_DECISIONS = ("active_pool_reroll", "active_single_reroll", "inactive_pool_reroll", "inactive_single_reroll")
MOMENTUM_PACK = "vtt_godsgloom_momentum"  # the pack's module: matches however it is loaded

_EXTRA_SUCCESS = Distribution({1: Fraction(4, 6), 0: Fraction(2, 6)})


@lru_cache(maxsize=512)
def pool_successes(n: int, colour: str) -> Distribution[int]:
    """Successes of ``n`` dice of one colour after the Critical Effects Procedure.

    🟥: faces (1–2, 3–5, 6); two or more 6s roll one more 🟥.
    🟦: faces (1, 2, 3–6); two or more 1s roll one more 🟦.
    """
    if n <= 0:
        return Distribution.certain(0)
    if colour == "attack":
        split = dice.multinomial(n, (2, 3, 1)).map(lambda c: (c[1] + c[2], c[2] >= 2))
    else:
        split = dice.multinomial(n, (1, 1, 4)).map(lambda c: (c[2], c[0] >= 2))
    return split.bind(lambda sc: _EXTRA_SUCCESS.map(lambda x: sc[0] + x) if sc[1] else Distribution.certain(sc[0]))


def _pool(unit: Mapping[str, Any], base: int, colour: str, modifiers: Mapping[str, Any]) -> int:
    return max(0, base + modifiers[colour] + unit.get("boost", 0) - unit.get("weak", 0))


def _status(token_id: str, health: int, wounds: int) -> frozenset[tuple[str, str]]:
    if wounds <= 0:
        return frozenset()
    left = health - wounds
    if left <= 0:
        return frozenset({(token_id, "destroyed")})
    if left == 1:
        return frozenset({(token_id, "decimated")})
    return frozenset()


def godsgloom_outcomes(request: OddsRequest) -> Distribution[AttackOutcome]:
    """The outcome distribution of one Attack Test (rerolls answered in advance change nothing)."""
    decl = request.declaration
    melee = decl["attack"] == "melee"
    a_id, d_id = request.attacker, request.targets[0]
    a, d = request.tokens[a_id].system, request.tokens[d_id].system
    a_mod, d_mod = decl["modifiers"], decl["defender_modifiers"]

    a_hits = pool_successes(_pool(a, a["statline"]["attack"], "attack", a_mod), "attack")
    a_blocks = pool_successes(_pool(a, a["statline"]["defence"], "defence", a_mod), "defence")
    d_blocks = pool_successes(_pool(d, d["guard"]["defence"], "defence", d_mod), "defence")
    d_hits = pool_successes(_pool(d, d["guard"]["attack"], "attack", d_mod), "attack") if melee else Distribution.certain(0)

    a_auto, d_auto = a.get("auto") or {}, d.get("auto") or {}
    a_auto_hits = a_auto.get("hits", 0) + decl["auto"]["hits"]
    a_auto_blocks = a_auto.get("blocks", 0) + decl["auto"]["blocks"]
    d_auto_hits = d_auto.get("hits", 0) if melee else 0
    d_auto_blocks = d_auto.get("blocks", 0)

    # What reaches the defender depends on (attacker hits, defender blocks); what
    # reaches the attacker on (defender hits, attacker blocks): two independent halves.
    wounds = a_hits.joint(d_blocks).map(lambda hb: max(0, hb[0] + a_auto_hits - hb[1] - d_auto_blocks))
    if melee:
        back = d_hits.joint(a_blocks).map(lambda hb: max(0, hb[0] + d_auto_hits - hb[1] - a_auto_blocks))
    else:
        back = Distribution.certain(0)
    a_health, d_health = a["health"]["current"], d["health"]["current"]

    def outcome(pair: tuple[int, int]) -> AttackOutcome:
        dealt, taken = pair
        return AttackOutcome(
            hit=dealt > 0,
            damage=dealt,
            conditions=_status(d_id, d_health, dealt) | _status(a_id, a_health, taken),
        )

    return wounds.joint(back).map(outcome)


def _holds(request: OddsRequest, trait: str) -> bool:
    units = (request.tokens[request.attacker].system, request.tokens[request.targets[0]].system)
    return request.declared(trait) is not None or any(trait in (u.get("traits") or ()) for u in units)


@hookimpl
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """The exact model for ``godsgloom``; ``None`` for other rulesets or a pack's reroll answered."""
    if ruleset != "godsgloom":
        return None
    if request.unknown_answers(REROLL_DECISIONS):
        return None
    for name in REROLL_DECISIONS:
        for given in request.answers.get(name, ()):
            if given.option != "decline" and parse_reroll(given.option) is None:
                return None  # a pack's own reroll: not the ruleset's fresh die
    accounts = frozenset() if _holds(request, "onslaught") else frozenset({MOMENTUM_PACK})
    return ExactOdds(outcomes=godsgloom_outcomes(request), accounts_for=accounts)
