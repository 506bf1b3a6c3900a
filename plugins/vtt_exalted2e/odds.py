"""Exalted 2e individual combat: exact odds by convolving the attack's d10 pools.

What is random in an attack with the rules' defaults is three pools of d10:
the attack roll (7+, a 10 counts twice), the defender's step-5 dice if any
(Charm dice, and the ``defense_stunt`` answer's dice, asked only while
successes remain; the same, their successes add to DV) and the damage roll
(7+, a 10 counts once). Everything else is bookkeeping the ruleset does before the first roll —
weapon, pool, wound penalties, Dodge or Parry DV and the default choice
between them, cover, height, onslaught, range — so the model **probes** the
real pipeline up to the attack roll and reads those working numbers rather
than repeating them. From there, with ``rules.py``'s own functions:

- steps 3–4: successes (plus automatic successes); none → miss (no reroll
  effect is offered by the ruleset itself, so the default is "decline", keep the roll);
- step 5: net = successes − external penalties − max(DV, 0); 0 or less → miss
  (no stunt is asked); otherwise the step-5 dice roll (with the stunt's, and
  the DV a stunt gains by circumventing a mundane inapplicability) and
  net = successes − external penalties − max(DV + their successes, 0);
- step 7: raw damage = weapon damage (+ Strength) + net;
- step 8: Hardness ≥ raw → a hit for no damage; otherwise the damage pool
  after soak, raised to the minimum but never above raw, rolled;
- step 10: the levels go on the defender's track; the conditions it newly shows
  (incapacitated, unconscious, dying, dead) are reported.
- a botch the GM sends to a bystander (``bystander`` answered): the botches'
  share of the misses, split by the 1s rolled, strikes the bystander instead
  (see :func:`_stray_blows`).

Because the probe runs every plugin's hooks up to the attack roll, a pack's
effects there are included as they really happen: the model says so in
``probed`` (see :data:`PROBED`), and any pack acting only there keeps the odds
exact. The Excellencies pack, which also offers options later, is accounted for
by name (see :data:`EXCELLENCIES`).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

from vtt_bridge import hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, dice, outcome_from

from . import rules
from .rules import HealthTrack
from .ruleset import ATTACK, COUNTER, _circumvented, _protection

__all__ = ["exalted2e_outcomes", "vtt_bridge_exact_odds"]

#: Decisions whose default the model assumes, and the answers that mean "the default".
DECLINES = {"attack_reroll": "decline", "defense_reroll": "decline", "damage_effect": "decline", "counterattack": "decline"}

#: The Excellencies pack (by module, however it is loaded). Everything it does
#: before the attack roll — First and Second Excellency dice, automatic
#: successes, DV dice and points — is in the working numbers the probe reads;
#: after it, it only offers options (Essence Resurgent, Solar Counterattack)
#: whose defaults ("decline") change nothing. Answering one of those is
#: not modelled (see :func:`_defaults_only`).
EXCELLENCIES = "vtt_excellencies"

#: The hooks the probe runs for real before the attack roll's dice: a pack's hook here
#: (every pack's runs before the ruleset's own, which is ``trylast``) is in the working
#: numbers the model reads — ``ctx.attack_pool``, ``ctx.auto_successes``, ``ctx.dv``,
#: ``ctx.defense_dice`` — so a Charm that only sets those keeps the odds exact.
PROBED = frozenset({"exalted2e_declare_attack", "exalted2e_declare_defense", "exalted2e_defense_options", "exalted2e_attack_roll"})


#: What an attack's levels distribution holds besides health levels: a miss,
#: and Hardness stopping a hit (the cycle ends before step 9).
MISSED, ABSORBED = None, -1


def _levels(ctx: Any, stunt_answer: str | None) -> Distribution[int | None]:
    """Health levels dealt, ``MISSED`` or ``ABSORBED``, from a context probed at its attack roll."""
    st = ctx.stash[ATTACK]
    me, foe, weapon = st.me, st.foe, st.weapon

    # Steps 3-5: net successes past the DV; the stunt only while successes remain.
    attack = dice.success_pool(ctx.attack_pool, 10, 7, 10)
    choice = ctx.outcome.get("defense")
    stunt = rules.STUNT_DICE.get(stunt_answer or "decline", 0) if choice in ("dodge", "parry") and st.aware else 0
    gain = _circumvented(st.defense, choice)[0] if stunt else 0
    defense = dice.success_pool(ctx.defense_dice + stunt, 10, 7, 10)
    auto, external, dv = ctx.auto_successes, ctx.external_penalty, ctx.dv
    blocked = dv if dv > 0 else 0

    def net(rolled: int) -> Distribution[int]:
        successes = rolled + auto
        if successes <= 0 or successes - external - blocked <= 0:
            return Distribution.certain(0)  # a miss, whatever DV dice would add

        def past(extra: int) -> int:
            final_dv = dv + gain + extra
            return successes - external - (final_dv if final_dv > 0 else 0)

        return defense.map(past)

    nets = attack.bind(net)

    # Steps 7-8: raw damage, Hardness, soak, minimum: a damage pool per net.
    base = weapon["damage"] + (me["attributes"]["strength"] if weapon["strength"] else 0)
    hardness, soak, minimum = _protection(foe, weapon, me)
    hardness, soak = max(ctx.hardness, hardness), ctx.soak + soak
    post_soak = ctx.post_soak + ctx.declaration.get("post_soak", 0)

    def rolled(n: int) -> Distribution[int | None]:
        if n <= 0:
            return Distribution.certain(MISSED)
        raw = base + n
        if rules.hardness_stops(raw, hardness):
            return Distribution.certain(ABSORBED)
        pool = rules.damage_pool(raw, soak, minimum=minimum, post_soak=post_soak).final
        return dice.success_pool(pool, 10, 7, None)

    return nets.bind(rolled)


def _landing(ctx: Any) -> Any:
    """Step 10 for a probed context: levels → the outcome it reports."""
    st = ctx.stash[ATTACK]
    foe_id, kind = ctx.defender.id, st.damage_type
    track = HealthTrack.from_json(st.foe["health"])

    def landed(levels: int | None) -> AttackOutcome:
        if levels is MISSED:
            return AttackOutcome.miss()
        if levels <= 0:
            return AttackOutcome(hit=True, damage=0)
        gained = rules.new_conditions(track, rules.apply_damage(track, levels, kind))
        return AttackOutcome(hit=True, damage=levels, conditions=frozenset((foe_id, c) for c in gained))

    return landed


def _counterattack(request: OddsRequest) -> Distribution[AttackOutcome] | None | bool:
    """The counterattack's outcomes when the attack reaches step 9; ``False``: none is launched.

    The counterattack's deterministic numbers do not depend on the attack's dice
    (its blows land together with the attack's), so one probe that reaches the
    counterattack's own attack roll gives them: every die of the attack a 10.
    ``None``: the model cannot tell (the counterattack ended before rolling).
    """
    if request.answer("counterattack") in (None, "decline"):
        return False
    if "defense_stunt" in request.answers and "counterattack/defense_stunt" not in request.answers:
        return None  # which stunt decision that answer meets depends on the dice
    for n in range(1, 200):
        probe = request.probe([10] * n)
        counter = probe.ctx.stash.get(COUNTER)
        if counter is not None:
            if not probe.exhausted or probe.step != "attack_roll" or ATTACK not in counter.stash:
                return None
            return _levels(counter, request.answer("counterattack/defense_stunt")).map(_landing(counter))
        if not probe.exhausted:
            return False  # the attack finished without one (not offered)
    return None


def _stray_blows(request: OddsRequest, ctx: Any) -> dict[AttackOutcome, Fraction] | None:
    """A botch struck on the bystander the GM named (``bystander`` answered): outcome → chance.

    Seed 002, "Botched Attacks": "the Storyteller may also rule that the attack
    hits one of them instead of the intended target with a number of
    "successes" equal to the 1s rolled". A botch is no success and some 1s: k
    ones among n dice with the rest 2–6, C(n, k)·(1/10)^k·(5/10)^(n−k). For
    each k one probe (k 1s, then 2s) reaches the bystander's damage roll and
    gives its pool; its levels land on the bystander's track. An empty dict:
    the attack cannot botch (automatic successes) or nobody is named.
    """
    victim = request.answer("bystander")
    if victim in (None, "decline") or ctx.auto_successes > 0:
        return {}
    n = ctx.attack_pool
    kind = ctx.stash[ATTACK].damage_type
    track = HealthTrack.from_json(request.tokens[victim].system["health"])
    out: dict[AttackOutcome, Fraction] = {}
    for k in range(1, n + 1):
        chance = Fraction(comb(n, k)) * Fraction(1, 10) ** k * Fraction(1, 2) ** (n - k)
        probe = request.probe([1] * k + [2] * (n - k) + [2] * 200)
        if probe.exhausted or probe.ctx.outcome.get("bystander", {}).get("token") != victim:
            return None
        roll = probe.ctx.dice.rolls[-1]
        pool = len(roll.faces) if roll.label.startswith("damage to") else 0  # none: Hardness took it

        def struck(levels: int) -> AttackOutcome:
            gained = rules.new_conditions(track, rules.apply_damage(track, levels, kind)) if levels else []
            return AttackOutcome(hit=False, damage=0, conditions=frozenset((victim, c) for c in gained))

        for outcome, p in dice.success_pool(pool, 10, 7, None).map(struck).items():
            out[outcome] = out.get(outcome, Fraction(0)) + chance * p
    return out


def exalted2e_outcomes(request: OddsRequest) -> Distribution[AttackOutcome] | None:
    """The outcome distribution, or ``None`` if the pipeline does something the model does not know."""
    probe = request.probe()
    if not probe.exhausted:  # decided before any die: automatic defense, an empty pool
        return Distribution.certain(outcome_from(probe.ctx.outcome))
    if probe.step != "attack_roll":
        return None
    ctx = probe.ctx
    levels = _levels(ctx, request.answer("defense_stunt"))
    landed = _landing(ctx)
    counter = _counterattack(request)
    stray = _stray_blows(request, ctx)
    if counter is None or stray is None:
        return None
    if stray:
        # The botches were misses in ``levels``: they go to the bystander instead.
        return _with_stray(levels.map(landed) if counter is False else levels.bind(_countered(landed, counter)), stray)
    if counter is False:
        return levels.map(landed)

    return levels.bind(_countered(landed, counter))


def _countered(landed: Any, counter: Distribution[AttackOutcome]) -> Any:
    """Levels → the outcomes with the counterattack's, when the attack reached step 9."""

    def with_counter(lv: int | None) -> Distribution[AttackOutcome]:
        mine = landed(lv)
        if lv is MISSED or lv == ABSORBED:
            return Distribution.certain(mine)  # the cycle ended before step 9
        return counter.map(lambda theirs: AttackOutcome(hit=True, damage=mine.damage, conditions=mine.conditions | theirs.conditions))

    return with_counter


def _with_stray(outcomes: Distribution[AttackOutcome], stray: dict[AttackOutcome, Fraction]) -> Distribution[AttackOutcome]:
    """Move the botches' share of the misses to what they do to the bystander."""
    moved = sum(stray.values(), Fraction(0))
    weights = dict(outcomes.items())
    miss = AttackOutcome.miss()
    weights[miss] = weights.get(miss, Fraction(0)) - moved
    for outcome, p in stray.items():
        weights[outcome] = weights.get(outcome, Fraction(0)) + p
    return Distribution(weights)


def _defaults_only(request: OddsRequest) -> bool:
    for key in request.answers:
        key = key.removeprefix("counterattack/")  # the counterattack's own decisions: the same
        if key in ("defense", "counterattack", "bystander"):
            continue  # any defense, counterattack or bystander: the probes apply them as the pipeline does
        if key == "defense_stunt" and request.answer(key) in ("decline", *rules.STUNT_DICE):
            continue  # stunt dice: modelled at step 5
        if DECLINES.get(key) is None or request.answer(key) != DECLINES[key]:
            return False
    return True


@hookimpl
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """The exact model for ``exalted2e``; ``None`` when a reroll or an effect is answered."""
    if ruleset != "exalted2e" or not _defaults_only(request):
        return None
    outcomes = exalted2e_outcomes(request)
    if outcomes is None:
        return None
    return ExactOdds(outcomes=outcomes, accounts_for=frozenset({EXCELLENCIES}), probed=PROBED)
