"""Warmachine MkIII: exact odds of an attack, AOEs and sprays included (seed 001, Appendix A).

Every die of an attack is in the model: each attack roll (2d6, +1 boosted,
extra dice, lowest removed; all 1s miss, all 6s hit with two dice or more, a
pair is a critical hit), an AOE's deviation (a d6 for the direction, a d6 for
the distance) when it misses, each damage roll (2d6 + POW, blast POW or P+S −
ARM, same dice handling), the d6 choosing the grid column or spiral branch
where the damage starts — which decides which systems or aspects are crippled
— and Tough's d6 (5–6: heal one box, no longer disabled, knocked down; no roll
for a model that is knocked down, a critical knockdown included).

The model **walks the real pipeline** with scripted dice and never repeats its
bookkeeping. Where the pipeline wants a die, the walk branches:

- an attack roll (step 5b): the faces are grouped by what the rules make of
  them — miss, hit, critical hit — and the walk goes on once per group with
  one representative set of faces, weighted by the group's chance;
- an AOE's deviation (step 7): the 36 (direction, distance) pairs, each
  probed for the models under the template where it lands (tokens' positions
  are in the request: the blast is a fixed set of models per landing), and
  the landings that hit the same models share what follows;
- the damage rolls (step 9): every model hit has its own damage roll and its
  own step 10 (grid column, Tough), independent of the others, so each
  model's damage and conditions are convolved on their own and combined.

The numbers each roll is made with — dice (boosts as answered, declared extra
dice), MAT/RAT and modifiers, DEF, POW or P+S or blast POW, ARM, critical
knockdowns, which models a blast catches — are read from the probes.

Answers to boosts, Shield Guard (``redirect``), rerolls, damage transference
and the order of step 10 (``apply_next``) are followed by the probes: whether
they are asked depends on who was hit, or whether a roll damages at all (the
pack's rerolls are of *missed* attack rolls and of any damage roll; a
transfer is offered for any damage), never on the faces, and an answer given
in advance is taken whatever the roll showed — a rerolled attack roll is
branched on again, a rerolled damage roll replaces the first, and transferred
damage goes to the other model up to its unmarked boxes, the rest coming back
(step 9g). Not modelled (Monte Carlo instead): damage moved to a model that
rolls its own damage in the same attack. The ``warmachine_abilities`` pack is
accounted for: the probes see everything it does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from vtt_bridge import hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, Probe, dice, outcome_from

from . import damage, rules
from .ruleset import STATE
from .ruleset import _room as ruleset_room

__all__ = ["attack_roll", "damage_points", "hit_chance", "vtt_bridge_exact_odds", "warmachine_outcomes"]

ABILITIES = "vtt_warmachine_abilities"
#: Decisions the walk follows through the pipeline whatever the answer: whether they
#: are asked, and what they do, depends on who was hit, never on the faces rolled.
FOLLOWED = ("boost_attack", "boost_damage", "redirect", "apply_next", "reroll_attack", "reroll_damage", "transfer_damage")
DECLINES: dict[str, str] = {}

_D6 = Distribution.uniform(range(1, 7))
_UNHARMED: Distribution[Any] = Distribution.certain((0, frozenset()))


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


def _hit_classes(ctx: Any, discard: int) -> dict[tuple[bool, bool], tuple[Fraction, tuple[int, ...]]]:
    """The attack roll being made: ``(hit, critical)`` → (chance, one set of faces giving it)."""
    state = ctx.stash[STATE]
    verdict = state.auto.get(ctx.item or "")
    auto = verdict is not None and verdict.did_hit  # rolled only for a critical (seed 001, step 4)
    out: dict[tuple[bool, bool], tuple[Fraction, tuple[int, ...]]] = {}
    for faces, p in dice.faces(ctx.attack_dice, 6).items():
        result = rules.judge_attack(_kept(faces, discard), ctx.attack_mod, ctx.target_def, auto_hit=auto)
        key = (result.did_hit, result.critical)
        chance, example = out.get(key, (Fraction(0), faces))
        out[key] = (chance + p, example)
    return out


class _Walk:
    """The outcome distribution of one request, found by probing the pipeline branch by branch."""

    def __init__(self, request: OddsRequest) -> None:
        self.request = request
        self.mods = request.declaration.get("modifiers") or {}
        self.applied: dict[Any, Distribution[Any]] = {}
        self.transfers = self.request.answer("transfer_damage") not in (None, "decline")

    def outcomes(self, prefix: tuple[int, ...] = (), probe: Probe | None = None) -> Distribution[AttackOutcome] | None:
        """What follows the scripted ``prefix``; ``None`` for a roll the model does not know."""
        probe = probe if probe is not None else self.request.probe(prefix)
        if not probe.exhausted:  # settled without another die: a miss, out of range, Stealth...
            return Distribution.certain(outcome_from(probe.ctx.outcome))
        if probe.step == "attack_roll_dice":
            return self._attack_roll(prefix, probe)
        if probe.step == "aoe":
            return self._deviation(prefix)
        if probe.step == "damage_roll_dice":
            return self._damage(prefix, probe)
        return None

    def _attack_roll(self, prefix: tuple[int, ...], probe: Probe) -> Distribution[AttackOutcome] | None:
        classes = _hit_classes(probe.ctx, self.mods.get("discard_lowest_attack", 0))
        branches = {key: self.outcomes(prefix + faces) for key, (_, faces) in classes.items()}
        if any(b is None for b in branches.values()):
            return None
        return Distribution({key: p for key, (p, _) in classes.items()}).bind(lambda key: branches[key])

    def _deviation(self, prefix: tuple[int, ...]) -> Distribution[AttackOutcome] | None:
        landings: dict[Any, Distribution[AttackOutcome] | None] = {}
        weights: dict[Any, int] = {}
        for direction in range(1, 7):
            for distance in range(1, 7):
                here = prefix + (direction, distance)
                probe = self.request.probe(here)
                ctx = probe.ctx
                state = ctx.stash[STATE]
                # What follows depends on which models the blast caught, not on where it landed.
                key = (probe.exhausted, probe.step, tuple(state.hits.items()), outcome_from(ctx.outcome).models)
                if key not in landings:
                    landings[key] = self.outcomes(here, probe)
                weights[key] = weights.get(key, 0) + 1
        if any(d is None for d in landings.values()):
            return None
        return Distribution({key: Fraction(w, 36) for key, w in weights.items()}).bind(lambda key: landings[key])

    def _marked(self, model: str, system: Mapping[str, Any], points: int, knocked: bool) -> Distribution[Any]:
        """Step 10 for ``points`` on a model, once per (model, its state, points, knocked down)."""
        if points <= 0:
            return _UNHARMED
        key = (model, json.dumps(system, sort_keys=True, default=str), points, knocked)
        found = self.applied.get(key)
        if found is None:
            found = self.applied[key] = _applied(system, model, points, knocked)
        return found

    def _damage(self, prefix: tuple[int, ...], probe: Probe) -> Distribution[AttackOutcome] | None:
        """Steps 9–10: each model hit rolls its own damage and marks its own boxes."""
        before = outcome_from(probe.ctx.outcome)  # who was hit, and the critical knockdowns
        rolls = []
        prefix_of: dict[str, tuple[int, ...]] = {}
        while probe.exhausted and probe.step == "damage_roll_dice":
            at = probe.ctx
            model = at.item or ""
            numbers = (model, at.damage_dice, at.damage_pow, at.target_arm, at.current(model))
            prefix_of[model] = prefix
            if rolls and rolls[-1][0] == model:
                rolls[-1] = numbers  # rerolled (step 9e): the new roll replaces the old, whatever it showed
            else:
                rolls.append(numbers)
            if model == list(at.stash[STATE].hits)[-1] and not ({"reroll_damage", "transfer_damage"} & set(self.request.answers)):
                break  # the last model hit, and no reroll to come: step 9 is over
            prefix = prefix + (1,) * at.damage_dice  # the lowest roll: on to the next model's numbers
            probe = self.request.probe(prefix)
        if probe.exhausted and probe.step not in ("apply_damage", "disabled", "damage_roll_dice"):
            return None
        discard = self.mods.get("discard_lowest_damage", 0)
        combined: Distribution[tuple[tuple[tuple[str, int], ...], frozenset[tuple[str, str]]]] = Distribution.certain(((), frozenset()))
        for model, n, power, arm, system in rolls:
            transfer = self._transfer(prefix_of[model], model, n, {m for m, *_ in rolls}) if self.transfers else None
            if transfer is False:
                return None
            per = damage_points(n, power, arm, discard=discard).bind(
                lambda p, model=model, system=system, transfer=transfer: self._suffered(model, system, p, transfer)
            )
            combined = combined.joint(per).map(lambda pair: ((*pair[0][0], *pair[1][0]), pair[0][1] | pair[1][1]))
        target = self.request.targets[0]

        def outcome(taken: tuple[tuple[tuple[str, int], ...], frozenset[tuple[str, str]]]) -> AttackOutcome:
            damage = dict(taken[0])
            listed = {m: h for m, h, _ in before.models}
            # A model that took moved damage without being hit is listed once it was marked.
            listed.update({m: False for m, d in taken[0] if m not in listed and d > 0})
            return AttackOutcome(
                hit=before.hit,
                damage=damage.get(target, 0),
                conditions=before.conditions | taken[1],
                models=tuple(sorted((m, h, damage.get(m, 0)) for m, h in listed.items())),
            )

        return combined.map(outcome)

    def _suffered(self, model: str, system: Mapping[str, Any], points: int, transfer: Any) -> Distribution[Any]:
        """``((model, damage), ...), conditions`` of one damage roll's ``points``, moved or not (step 9g)."""
        knocked = bool(system.get("knocked_down"))
        if transfer is None or points <= 0:
            return self._marked(model, system, points, knocked).map(lambda dc: (((model, dc[0]),), dc[1]))
        to, their_system, room = transfer
        moved = min(points, max(0, room))  # what the beast has no boxes for comes back (step 9g)
        back = points - moved
        theirs = self._marked(to, their_system, moved, bool(their_system.get("knocked_down")))
        mine = self._marked(model, system, back, knocked)
        return theirs.joint(mine).map(lambda tm: (((to, tm[0][0]), (model, tm[1][0])), tm[0][1] | tm[1][1]))

    def _transfer(self, prefix: tuple[int, ...], model: str, n: int, rolled: set[str]) -> Any:
        """Where a damaging roll on ``model`` goes at step 9g: ``None`` (it stays), or
        ``(to, its state, its room)``; ``False``: not a case the model follows.

        Whether the transfer is offered and taken depends on the roll damaging at
        all, not on how much: one probe with the highest faces shows it.
        """
        probe = self.request.probe(prefix + (6,) * n)
        state = probe.ctx.stash[STATE]
        moved = [b for b in state.booked if b.source == model and b.moved]
        if not moved:
            return None
        to = next((b.model for b in moved if b.model != model), None)
        if to is None or to in rolled:
            return False  # moved to a model that rolls its own damage, or all of it came back
        at = self.request.probe(prefix)  # the state just before this roll: what is booked so far
        return to, at.ctx.current(to), ruleset_room(at.ctx, to)


def warmachine_outcomes(request: OddsRequest) -> Distribution[AttackOutcome] | None:
    """The outcome distribution of an attack (AOE and spray included), or ``None``."""
    return _Walk(request).outcomes()


def _understood(request: OddsRequest) -> bool:
    for key in request.answers:
        if key in FOLLOWED:
            continue  # the probes pay for a boost, guard a model, order step 10 as the pipeline does
        if DECLINES.get(key) is None or request.answer(key) != DECLINES[key]:
            return False
    return True


@hookimpl
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """The exact model for ``warmachine_mk3``; ``None`` for an answer it does not know."""
    if ruleset != "warmachine_mk3" or not _understood(request):
        return None
    outcomes = warmachine_outcomes(request)
    if outcomes is None:
        return None
    return ExactOdds(outcomes=outcomes, accounts_for=frozenset({ABILITIES}))
