"""Warmachine MkIII: Appendix A, the attack sequence (seed 001), as a vtt_bridge ruleset.

The steps below follow the appendix in order. Three of them loop: step 5 runs
5a–e for each model potentially hit, step 9 runs 9a–g for each model hit,
step 10 runs 10a–e for each damaged model in the active player's order. Each
loop opens with a per-model step (5, 9, 10) that sets that model's numbers or
marks its damage. Rerolls go back to step b (``goto``); a model whose sequence
is over leaves its loop with ``ctx.skip``.

A miss does not end the attack: steps 6–8 (Shield Guard, AOE deviation, miss
triggers) and 11–14 (after the attack) still happen; the damage loops simply
have no model to run for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vtt_bridge import AttackContext, Ask, FrozenDict, InvalidRequest, Option, Roll, Ruleset, StashKey, Step, hookimpl

from . import damage, geometry, hookspecs, rules
from .rules import Weapon
from .schemas import Declaration, System

__all__ = ["RULESET", "STEPS"]


# -------------------------------------------------------------------------
# Per-attack state
# -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """How a model came to be hit (steps 5–7).

    :ivar how: ``"roll"``, ``"automatic"``, ``"redirected"`` or ``"blast"``.
    :ivar direct: hit directly by a single-target attack (an AOE centres on it).
    """

    how: str
    direct: bool = False
    blast: bool = False
    critical: bool = False


#: The hits an attack roll makes, by (direct, critical): frozen, so made once.
ROLLED = {
    (direct, critical): Hit(how="roll", direct=direct, critical=critical)
    for direct in (False, True)
    for critical in (False, True)
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Booked:
    """Damage a model is to suffer, booked at step 9g and marked at step 10.

    :ivar source: the model the damage roll was against.
    :ivar moved: the damage was moved to or back from another model: it cannot move again.
    """

    model: str
    points: int
    source: str
    moved: bool = False


@lru_cache(maxsize=1024)
def _booked(model: str, points: int, source: str, moved: bool = False) -> Booked:
    """A booking (frozen, so each is made once and shared)."""
    return Booked(model=model, points=points, source=source, moved=moved)


@dataclass(slots=True, kw_only=True, init=False)
class AttackState:
    """The ruleset's working state for one attack (``ctx.stash[STATE]``)."""

    weapon: Weapon
    potential: list[str]
    #: The declaration's modifiers, and whether the attack targets one model only (a
    #: single-target attack hits "directly"): fixed for the attack, so read once.
    modifiers: Mapping[str, Any] = field(default_factory=dict)
    single: bool = False
    distance: float = 0.0
    out_of_range: bool = False
    aim: geometry.Point | None = None
    auto: dict[str, rules.Automatic] = field(default_factory=dict)
    attack_rolls: dict[str, Roll] = field(default_factory=dict)
    damage_rolls: dict[str, Roll] = field(default_factory=dict)
    boosted: set[tuple[str, str]] = field(default_factory=set)
    hits: dict[str, Hit] = field(default_factory=dict)
    booked: list[Booked] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    pending: list[str] | None = None
    marked_boxes: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    crippled_before: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __init__(self, weapon: Weapon, potential: list[str], modifiers: Mapping[str, Any]) -> None:
        # Written out, positional: one is made per attack, and the generated one costs twice as much.
        self.weapon = weapon
        self.potential = potential
        self.modifiers = modifiers
        # Only a single-target attack hits "directly"; a spray's or Thresher's hits do not.
        self.single = not weapon.spray and len(potential) == 1
        self.distance = 0.0
        self.out_of_range = False
        self.aim = None
        self.auto = {}
        self.attack_rolls = {}
        self.damage_rolls = {}
        self.boosted = set()
        self.hits = {}
        self.booked = []
        self.order = []
        self.pending = None
        self.marked_boxes = {}
        self.crippled_before = {}


STATE: StashKey[AttackState] = StashKey("warmachine_mk3")


def _name(ctx: AttackContext, token_id: str) -> str:
    return ctx.token(token_id).name


def _record(ctx: AttackContext, model: str) -> dict[str, Any]:
    """What the outcome says about one model: ``_record(ctx, model).update(hit=True, ...)``."""
    return ctx.outcome["models"].setdefault(model, {})


def _condition(ctx: AttackContext, model: str, condition: str, *, reached: bool = True) -> None:
    reached_list = ctx.outcome["conditions"].setdefault(model, [])
    if reached and condition not in reached_list:
        reached_list.append(condition)
    elif not reached and condition in reached_list:
        reached_list.remove(condition)


_NO_MODIFIERS: Mapping[str, Any] = FrozenDict()


def _modifiers(ctx: AttackContext) -> Mapping[str, Any]:
    # A nested attack's declaration (ctx.nest) is not loaded through the schema: no defaults.
    return ctx.declaration.get("modifiers") or _NO_MODIFIERS


def _pay(ctx: AttackContext, cost: rules.Boost) -> None:
    ctx.update(ctx.attacker.id, **{cost.resource: cost.after})


def _on_table(system: Mapping[str, Any]) -> bool:
    return not (system.get("destroyed") or system.get("removed"))


def _discard_lowest(roll: Roll, count: int) -> list[int]:
    """Discard the ``count`` lowest dice still counting, always leaving one."""
    active = sorted((roll.faces[i], i) for i in range(len(roll.faces)) if roll.is_active(i))
    picked = [i for _, i in active[: max(0, min(count, len(active) - 1))]]
    for i in picked:
        roll.mark(i, "discarded")
    return picked


def _fresh_roll(ctx: AttackContext, rolls: dict[str, Roll], n: int, label: str, modifier: int) -> Roll:
    """Steps 5b/9b: roll; coming back from a reroll, the removed dice return first.

    A reroll is a roll of its own under this step; the roll it replaces stays on
    the card as it was judged (removed dice and all).
    """
    model = ctx.item or ""
    previous = rolls.get(model)
    if previous is not None:  # seed 001, 5e/9e: "add all dice removed in step c back to the roll"
        removed = [i for i in range(len(previous.faces)) if not previous.is_active(i)]
        if removed:
            ctx.note("the {} removed {} added back", len(removed), "die is" if len(removed) == 1 else "dice are")
        label += " (reroll)"
    roll = ctx.dice.roll(n, 6, label=label, modifier=modifier)
    rolls[model] = roll
    return roll


def _faces(roll: Roll) -> str:
    return "+".join(str(f) for f in roll.active) or "no dice"


def _models_potentially_hit(ctx: AttackContext) -> list[str]:
    """The target first, then every other model the declaration says the template covers."""
    out = [ctx.defender.id]
    for model in ctx.declaration.get("models_under_template", ()):
        if model not in out and model != ctx.attacker.id:
            out.append(model)
    return out


# -------------------------------------------------------------------------
# The sequence
# -------------------------------------------------------------------------

NO_BOOST = Option(id="decline", label="Don't boost")
KEEP = Option(id="decline", label="Keep the roll")
NO = Option(id="decline", label="No")


def _attack_items(ctx: AttackContext) -> list[str]:
    return list(ctx.stash[STATE].potential)


def _damage_items(ctx: AttackContext) -> list[str]:
    return list(ctx.stash[STATE].hits)


def _application_items(ctx: AttackContext) -> list[str]:
    return list(ctx.stash[STATE].order)


def _pending(ctx: AttackContext) -> list[str]:
    """Damaged models still to apply, in the declaration's order, then the order they were hit."""
    state = ctx.stash[STATE]
    if state.pending is None:
        damaged: list[str] = []
        for booked in state.booked:
            if booked.points > 0 and booked.model not in damaged:
                damaged.append(booked.model)
        order = ctx.declaration.get("application_order")
        chosen = [m for m in order if m in damaged] if order else ()
        state.pending = list(dict.fromkeys([*chosen, *damaged])) if chosen else damaged
    return state.pending


def _next_by_declaration(ctx: AttackContext, options: tuple[Option, ...]) -> str:
    return _pending(ctx)[0]


STEPS = (
    Step(name="declare_attack", title="1. Declare the attack"),
    Step(name="targeted", title="2. Targeted"),
    Step(name="range_check", title="3. Range check", goto=("redirect",)),
    Step(name="auto_hit_miss", title="4. Automatic hit or miss"),
    Step(
        name="attack_rolls",
        title="5. Attack rolls",
        each=_attack_items,
        steps=(
            Step(name="attack_roll", title="5. Attack roll"),
            Step(
                name="attack_roll_dice_count",
                title="5a. Number of dice",
                ask=Ask(name="boost_attack", prompt="Boost the attack roll?", who="attacker", decline=NO_BOOST),
            ),
            Step(name="attack_roll_dice", title="5b. Roll the dice"),
            Step(name="attack_roll_remove_dice", title="5c. Remove dice"),
            Step(name="attack_roll_hit_or_miss", title="5d. Hit or miss"),
            Step(
                name="attack_roll_reroll",
                title="5e. Rerolls",
                ask=Ask(name="reroll_attack", prompt="Reroll the attack roll?", who="attacker", decline=KEEP),
                goto=("attack_roll_dice",),
            ),
        ),
    ),
    Step(
        name="redirect",
        title="6. Hit another model",
        ask=Ask(name="redirect", prompt="Have this model hit instead?", who="defender", decline=NO),
    ),
    Step(name="aoe", title="7. AOE hit or deviation"),
    Step(name="hit_triggers", title="8. Hit and miss triggers"),
    Step(
        name="damage_rolls",
        title="9. Damage rolls",
        each=_damage_items,
        steps=(
            Step(name="damage_roll", title="9. Damage roll"),
            Step(
                name="damage_roll_dice_count",
                title="9a. Number of dice",
                ask=Ask(name="boost_damage", prompt="Boost the damage roll?", who="attacker", decline=NO_BOOST),
            ),
            Step(name="damage_roll_dice", title="9b. Roll the dice"),
            Step(name="damage_roll_remove_dice", title="9c. Remove dice"),
            Step(name="damage_roll_would_damage", title="9d. Would it damage?"),
            Step(
                name="damage_roll_reroll",
                title="9e. Rerolls",
                ask=Ask(name="reroll_damage", prompt="Reroll the damage roll?", who="attacker", decline=KEEP),
                goto=("damage_roll_dice",),
            ),
            Step(name="fails_to_exceed_arm", title="9f. Fails to exceed ARM"),
            Step(
                name="damage_transfer",
                title="9g. Would suffer damage",
                ask=Ask(name="transfer_damage", prompt="Have another model suffer this damage?", who="item", decline=NO),
            ),
        ),
    ),
    Step(
        name="damage_application",
        title="10. Damage application",
        ask=Ask(
            name="apply_next",
            prompt="Which damaged model has its damage applied next?",
            who="attacker",
            default=_next_by_declaration,
            repeat=True,
        ),
        each=_application_items,
        steps=(
            Step(name="apply_damage", title="10. Apply damage"),
            Step(name="suffered_damage", title="10a. Suffered damage"),
            Step(name="disabled", title="10b. Disabled"),
            Step(name="boxed", title="10c. Boxed"),
            Step(name="destroyed", title="10d. Destroyed"),
            Step(name="remove", title="10e. Remove"),
        ),
    ),
    Step(name="attack_resolved", title="11. Attack resolved"),
    Step(name="after_active", title="12. Active player's effects"),
    Step(name="after_inactive", title="13. Inactive player's effects"),
    Step(name="after_active_attacks", title="14. Active player's attacks"),
)

NUMBERS = (
    "weapon_rng",
    "attack_dice",
    "attack_mod",
    "target_def",
    "direct_hit",
    "redirect_to",
    "damage_dice",
    "damage_pow",
    "target_arm",
    "damage_points",
    "damage_to",
)


def setup(ctx: AttackContext) -> None:
    """Find the declared weapon on the attacker's card and start the attack's state."""
    name = ctx.declaration.get("weapon", "")
    weapon = rules.weapon_of(ctx.attacker.system, name)
    if weapon is None:
        have = [w.get("name") for w in ctx.attacker.system.get("weapons") or ()]
        raise InvalidRequest(
            f"{ctx.attacker.name} has no weapon {name!r}",
            details={"declaration": {"weapon": [f"Must be one of: {', '.join(have) or 'none'}."]}},
        )
    ctx.stash[STATE] = AttackState(weapon, _models_potentially_hit(ctx), _modifiers(ctx))
    ctx.weapon_rng = weapon.rng
    ctx.direct_hit = ""
    ctx.redirect_to = ""
    ctx.damage_to = ""
    outcome = ctx.outcome  # one store per field: made on every attack, and cheaper than an update call
    outcome["hit"] = False
    outcome["damage"] = 0
    outcome["conditions"] = {}
    outcome["critical"] = False
    outcome["weapon"] = weapon.name
    outcome["models"] = {}


# -------------------------------------------------------------------------
# Target (steps 1–4)
# -------------------------------------------------------------------------


@hookimpl
def vtt_bridge_rulesets() -> list[Ruleset]:
    return [RULESET]


@hookimpl(trylast=True)
def warmachine_mk3_declare_attack(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    for model in state.potential:
        token = ctx.token(model)
        if token.ruleset != ctx.ruleset.id:
            raise InvalidRequest(
                f"{token.name} is not a Warmachine model", details={"declaration": {"models_under_template": [model]}}
            )
        if not _on_table(ctx.current(model)):
            raise InvalidRequest(f"{token.name} is no longer on the table", details={"targets": [model]})
    if not ctx.tracing:
        return
    what = "spray" if state.weapon.spray else "attack"
    ctx.note(f"{ctx.attacker.name} makes a {state.weapon.kind} {what} with {state.weapon.name} ({state.weapon.describe()})")
    ctx.note(f"target: {ctx.defender.name}")
    others = state.potential[1:]
    if others:
        ctx.note("also under the template: " + ", ".join(_name(ctx, m) for m in others))


@hookimpl(trylast=True)
def warmachine_mk3_targeted(ctx: AttackContext) -> None:
    return None  # no rule of the ruleset's own: special rules live in packs


@hookimpl(trylast=True)
def warmachine_mk3_range_check(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    me, target = ctx.current(ctx.attacker.id), ctx.current(ctx.defender.id)
    state.distance = geometry.gap(me, target)
    state.aim = geometry.point_of(target)
    if state.distance <= ctx.weapon_rng + geometry.EPSILON:
        if ctx.tracing:
            ctx.note(f'{state.distance:.2f}" to {ctx.defender.name}: within RNG {ctx.weapon_rng:g}')
        return
    state.out_of_range = True
    # A missed AOE deviates from the point at maximum range (brief, seed 001 step 3).
    state.aim = geometry.toward(
        geometry.point_of(me), state.aim, geometry.base_radius(me.get("base", 30)) + ctx.weapon_rng
    )
    for model in state.potential:
        _record(ctx, model).update(hit=False, how="out of range")
    ctx.note('{:.2f}" to {}: beyond RNG {:g}, the attack misses', state.distance, ctx.defender.name, ctx.weapon_rng)
    ctx.goto("redirect")  # seed 001, step 3: no attack rolls, go to step 6


@hookimpl(trylast=True)
def warmachine_mk3_auto_hit_miss(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    me = ctx.current(ctx.attacker.id)
    for model in state.potential:
        them = ctx.current(model)
        verdict = rules.automatic(me, them, state.weapon, state.modifiers, geometry.gap(me, them))
        if verdict is None:
            continue
        state.auto[model] = verdict
        if ctx.tracing:
            result = "hits" if verdict.did_hit else "misses"
            also = " (the roll is still made, for a critical hit)" if verdict.roll else ""
            ctx.note(f"{_name(ctx, model)}: the attack {result} automatically, {verdict.reason}{also}")


# -------------------------------------------------------------------------
# Attack roll (step 5)
# -------------------------------------------------------------------------


@hookimpl(trylast=True)
def warmachine_mk3_attack_rolls(ctx: AttackContext) -> None:
    if ctx.tracing:
        ctx.note("attack rolls against: " + ", ".join(_name(ctx, m) for m in ctx.stash[STATE].potential))


@hookimpl(tryfirst=True)
def warmachine_mk3_attack_roll(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    verdict = state.auto.get(model)
    if verdict is not None and not verdict.roll:  # seed 001, step 3/4: no attack roll is made
        _record(ctx, model).update(hit=verdict.did_hit, how="automatic", critical=False)
        if verdict.did_hit:
            state.hits[model] = Hit(how="automatic", direct=state.single)
            if state.single:
                ctx.direct_hit = model
        ctx.skip(f"{'hit' if verdict.did_hit else 'missed'} automatically: no attack roll")
    numbers = rules.attack_numbers(ctx.current(ctx.attacker.id), ctx.current(model), state.weapon, state.modifiers)
    ctx.attack_dice = 2
    ctx.attack_mod = numbers.modifier
    ctx.target_def = numbers.defense
    if ctx.tracing:
        ctx.note(f"against {_name(ctx, model)}: 2d6 + {numbers.describe()}")


@lru_cache(maxsize=256)
def _boost_option(roll: str, model: str, cost: str, detail: str | None = None) -> Option:
    """Steps 5a/9a: boosting the roll against a model, at ``cost``; ``detail``: what it
    gives (frozen, so made once and shared)."""
    return Option(id="boost", label=f"Boost the {roll} roll against {model} ({cost})", detail=detail)


def _boost_cost(ctx: AttackContext) -> rules.Boost | None:
    """What boosting a roll costs the attacker now (``None``: it cannot pay)."""
    return rules.boost_cost(ctx.current(ctx.attacker.id))


@hookimpl(trylast=True)
def warmachine_mk3_boost_attack_options(ctx: AttackContext) -> list[Option]:
    if ctx.stash[STATE].modifiers.get("boosted_attack"):
        return []  # boosted for free: nothing to decide
    cost = _boost_cost(ctx)
    if cost is None:
        return []
    mods = ctx.stash[STATE].modifiers
    if mods.get("auto_hit"):
        return [_boost_option("attack", _name(ctx, ctx.item or ""), cost.label)]
    # What one more die gives, where the rules know it: the chance to hit now and boosted.
    dice = ctx.attack_dice + mods.get("extra_attack_dice", 0)
    discard = mods.get("discard_lowest_attack", 0)
    now = rules.attack_hit_chance(dice, ctx.attack_mod, ctx.target_def, discard)
    boosted = rules.attack_hit_chance(dice + 1, ctx.attack_mod, ctx.target_def, discard)
    detail = f"to hit {_percent(now)} → {_percent(boosted)}"
    return [_boost_option("attack", _name(ctx, ctx.item or ""), cost.label, detail)]


def _percent(p: Any) -> str:
    return f"{round(100 * p)}%"


@hookimpl(trylast=True)
def warmachine_mk3_attack_roll_dice_count(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    extra = state.modifiers.get("extra_attack_dice", 0)
    if extra:
        ctx.attack_dice += extra
        ctx.note("+{} declared extra {}", extra, "die" if extra == 1 else "dice")
    answer = ctx.answer("boost_attack")
    if state.modifiers.get("boosted_attack"):
        ctx.attack_dice += 1
        ctx.note("boosted (declared)")
    elif answer is not None and answer.option == "boost" and (cost := _boost_cost(ctx)) is not None:
        _pay(ctx, cost)
        ctx.attack_dice += 1
        if ctx.tracing:
            ctx.note(f"boosted: {cost.label}")
    else:
        return
    state.boosted.add(("attack", model))
    _record(ctx, model).update(boosted_attack=True)


@hookimpl(trylast=True)
def warmachine_mk3_attack_roll_dice(ctx: AttackContext) -> None:
    _fresh_roll(ctx, ctx.stash[STATE].attack_rolls, ctx.attack_dice, "attack roll", ctx.attack_mod)


@hookimpl(trylast=True)
def warmachine_mk3_attack_roll_remove_dice(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    count = state.modifiers.get("discard_lowest_attack", 0)
    if count:
        roll = state.attack_rolls[ctx.item or ""]
        picked = _discard_lowest(roll, count)
        if ctx.tracing:
            ctx.note("removed: " + (", ".join(str(roll.faces[i]) for i in picked) or "nothing (one die must stay)"))


@hookimpl(trylast=True)
def warmachine_mk3_attack_roll_hit_or_miss(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    roll = state.attack_rolls[model]
    roll.modifier = ctx.attack_mod
    verdict = state.auto.get(model)
    result = rules.judge_attack(roll.active, ctx.attack_mod, ctx.target_def, auto_hit=verdict is not None and verdict.did_hit)
    single = state.single
    _record(ctx, model).update(
        hit=result.did_hit, how="roll", roll=result.total, needed=result.needed, critical=result.critical
    )
    if ctx.tracing:
        crit = " — a critical hit" if result.critical else ""
        ctx.note(f"{_faces(roll)} + {ctx.attack_mod} = {result.total}: {result.why}; {_name(ctx, model)} is "
                 f"{'hit' if result.did_hit else 'missed'}{crit}")
    if result.did_hit:
        state.hits[model] = ROLLED[single, result.critical]
        if single:
            ctx.direct_hit = model
    else:
        state.hits.pop(model, None)
        if ctx.direct_hit == model:
            ctx.direct_hit = ""


@hookimpl(trylast=True)
def warmachine_mk3_reroll_attack_options(ctx: AttackContext) -> list[Option]:
    return []  # rerolls come from special rules (packs)


@hookimpl(trylast=True)
def warmachine_mk3_attack_roll_reroll(ctx: AttackContext) -> None:
    answer = ctx.answer("reroll_attack")
    if answer is not None and answer.option != KEEP.id:
        ctx.note("rerolled ({}): back to step 5b", answer.option)
        ctx.goto("attack_roll_dice")


# -------------------------------------------------------------------------
# Steps 6–8
# -------------------------------------------------------------------------


@hookimpl(trylast=True)
def warmachine_mk3_redirect_options(ctx: AttackContext) -> list[Option]:
    return []  # only special rules (Shield Guard...) make another model hit


@hookimpl(trylast=True)
def warmachine_mk3_redirect(ctx: AttackContext) -> None:
    to = ctx.redirect_to
    if not to:
        return
    state = ctx.stash[STATE]
    ctx.token(to)  # a pack naming a token not in this attack is a fault
    was = ctx.direct_hit or ctx.defender.id
    if was in state.hits:
        del state.hits[was]
    _record(ctx, was).update(hit=False, how=f"redirected to {to}")
    state.hits = {to: Hit(how="redirected", direct=True), **state.hits}
    _record(ctx, to).update(hit=True, how="redirected", direct=True, critical=False)
    ctx.direct_hit = to
    if ctx.tracing:
        ctx.note(f"{_name(ctx, to)} is hit automatically instead of {_name(ctx, was)}")


@hookimpl(trylast=True)
def warmachine_mk3_aoe(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    weapon = state.weapon
    if not weapon.aoe:
        ctx.note("no AOE")
        return
    if ctx.direct_hit:
        centre = geometry.point_of(ctx.current(ctx.direct_hit))
        _record(ctx, ctx.direct_hit).update(direct=True)
        if ctx.tracing:
            ctx.note(f"the AOE is centred on {_name(ctx, ctx.direct_hit)}")
    else:
        origin = state.aim or geometry.point_of(ctx.current(ctx.defender.id))
        # At most half the distance to the target; out of range, half the weapon's range.
        cap = weapon.rng / 2 if state.out_of_range else state.distance / 2
        direction = ctx.dice.roll(1, 6, label="deviation direction").total
        rolled = ctx.dice.roll(1, 6, label="deviation distance").total
        deviation = geometry.deviate(origin, geometry.point_of(ctx.current(ctx.attacker.id)), direction, rolled, cap)
        ctx.outcome["deviation"] = deviation.to_dict()
        centre = deviation.landing
        ctx.note(
            'the AOE deviates {:g}" (rolled {}, at most {:g}") in direction {} to ({:g}, {:g})',
            deviation.distance, rolled, deviation.cap, direction, centre.x, centre.y,
        )
    under = []
    for token_id, token in ctx.tokens.items():
        system = ctx.current(token_id)
        if token.ruleset != ctx.ruleset.id or token_id == ctx.direct_hit or not _on_table(system):
            continue
        where = geometry.point_of(system)
        if geometry.under_template(centre, weapon.aoe, where, system.get("base", 30)):
            under.append((geometry.distance(centre, where), token_id))
    for _, token_id in sorted(under):
        state.hits[token_id] = Hit(how="blast", blast=True)
        _record(ctx, token_id).update(hit=True, how="blast", blast=True)
    if ctx.tracing:
        ctx.note(
            f"under the {weapon.aoe:g}\" AOE: "
            + (", ".join(_name(ctx, t) for _, t in sorted(under)) or "no other model")
            + (f" (blast POW {rules.blast_pow(weapon)})" if under else "")
        )


@lru_cache(maxsize=256)
def _critical_effect(critical: str | None) -> str:
    """A weapon's critical effect without the word: "Critical Fire" → "fire"."""
    return (critical or "").lower().replace("critical", "").strip(" _-")


@hookimpl(trylast=True)
def warmachine_mk3_hit_triggers(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    ctx.outcome["hit"] = bool(state.hits)
    critical = []
    for model, hit in state.hits.items():
        if hit.critical:
            critical.append(model)
    ctx.outcome["critical"] = bool(critical)
    if critical and state.weapon.aoe:
        # A critical hit with an AOE attack: its critical effect applies to every model hit by the AOE.
        critical = list(state.hits)
    effect = _critical_effect(state.weapon.critical) if critical else ""
    for model in critical:
        if effect == "knockdown":
            ctx.update(model, knocked_down=True)
            _condition(ctx, model, "knocked_down")
            ctx.note("critical knockdown: {} is knocked down", ctx.token(model).name)
        elif effect:
            ctx.outcome.setdefault("critical_effects", {})[model] = state.weapon.critical
            ctx.note("critical {}: {} (resolve the effect)", effect, ctx.token(model).name)
    if not state.hits:
        ctx.note("the attack hit nothing")


# -------------------------------------------------------------------------
# Damage roll (step 9)
# -------------------------------------------------------------------------


@hookimpl(trylast=True)
def warmachine_mk3_damage_rolls(ctx: AttackContext) -> None:
    hits = ctx.stash[STATE].hits
    if ctx.tracing:
        ctx.note("damage rolls against: " + (", ".join(_name(ctx, m) for m in hits) or "nobody"))


@hookimpl(tryfirst=True)
def warmachine_mk3_damage_roll(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    hit = state.hits[model]
    name, power = rules.damage_pow(state.weapon, ctx.current(ctx.attacker.id), blast=hit.blast)
    bonus = state.modifiers.get("damage_bonus", 0)
    ctx.damage_dice = 2
    ctx.damage_pow = power + bonus
    ctx.target_arm = rules.target_arm(ctx.current(model))
    ctx.damage_points = 0
    ctx.damage_to = model
    _record(ctx, model).update(pow=ctx.damage_pow)
    if ctx.tracing:
        plus = f" + bonus {bonus}" if bonus else ""
        ctx.note(f"against {_name(ctx, model)}: 2d6 + {name} {power}{plus} against ARM {ctx.target_arm}")


def _free_damage_boost(state: AttackState) -> bool:
    """Declared boosted, or a charge attack's melee damage roll."""
    mods = state.modifiers
    return bool(mods.get("boosted_damage") or (mods.get("charge") and state.weapon.kind == "melee"))


@hookimpl(trylast=True)
def warmachine_mk3_boost_damage_options(ctx: AttackContext) -> list[Option]:
    state, model = ctx.stash[STATE], ctx.item or ""
    if state.hits[model].blast or _free_damage_boost(state):
        return []  # blast damage is never boosted (brief); a free boost asks nothing
    cost = _boost_cost(ctx)
    if cost is None:
        return []
    return [_boost_option("damage", _name(ctx, model), cost.label)]


@hookimpl(trylast=True)
def warmachine_mk3_damage_roll_dice_count(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    blast = state.hits[model].blast
    extra = state.modifiers.get("extra_damage_dice", 0)
    if extra and not blast:
        ctx.damage_dice += extra
        ctx.note("+{} declared extra {}", extra, "die" if extra == 1 else "dice")
    if blast:
        return  # blast damage is never boosted (brief)
    answer = ctx.answer("boost_damage")
    if _free_damage_boost(state):
        ctx.damage_dice += 1
        ctx.note("boosted (charge)" if state.modifiers.get("charge") else "boosted (declared)")
    elif answer is not None and answer.option == "boost" and (cost := _boost_cost(ctx)) is not None:
        _pay(ctx, cost)
        ctx.damage_dice += 1
        if ctx.tracing:
            ctx.note(f"boosted: {cost.label}")
    else:
        return
    state.boosted.add(("damage", model))
    _record(ctx, model).update(boosted_damage=True)


@hookimpl(trylast=True)
def warmachine_mk3_damage_roll_dice(ctx: AttackContext) -> None:
    _fresh_roll(ctx, ctx.stash[STATE].damage_rolls, ctx.damage_dice, "damage roll", ctx.damage_pow)


@hookimpl(trylast=True)
def warmachine_mk3_damage_roll_remove_dice(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    count = state.modifiers.get("discard_lowest_damage", 0)
    if count:
        roll = state.damage_rolls[ctx.item or ""]
        picked = _discard_lowest(roll, count)
        if ctx.tracing:
            ctx.note("removed: " + (", ".join(str(roll.faces[i]) for i in picked) or "nothing (one die must stay)"))


@hookimpl(trylast=True)
def warmachine_mk3_damage_roll_would_damage(ctx: AttackContext) -> None:
    model = ctx.item or ""
    roll = ctx.stash[STATE].damage_rolls[model]
    roll.modifier = ctx.damage_pow
    result = rules.judge_damage(roll.active, ctx.damage_pow, ctx.target_arm)
    ctx.damage_points = result.points
    _record(ctx, model).update(damage_roll=result.total, arm=result.arm)
    if ctx.tracing:
        ctx.note(f"{_faces(roll)} + {ctx.damage_pow} = {result.total} − ARM {result.arm}: "
                 + (f"{result.points} damage" if result.points else "no damage"))


@hookimpl(trylast=True)
def warmachine_mk3_reroll_damage_options(ctx: AttackContext) -> list[Option]:
    return []  # rerolls come from special rules (packs)


@hookimpl(trylast=True)
def warmachine_mk3_damage_roll_reroll(ctx: AttackContext) -> None:
    answer = ctx.answer("reroll_damage")
    if answer is not None and answer.option != KEEP.id:
        ctx.note("rerolled ({}): back to step 9b", answer.option)
        ctx.goto("damage_roll_dice")


@hookimpl(trylast=True)
def warmachine_mk3_fails_to_exceed_arm(ctx: AttackContext) -> None:
    if ctx.damage_points <= 0:  # nothing "would suffer damage" (9g), nothing to apply (10)
        ctx.skip(f"the damage roll fails to exceed {_name(ctx, ctx.item or '')}'s ARM")


@hookimpl(trylast=True)
def warmachine_mk3_transfer_damage_options(ctx: AttackContext) -> list[Option]:
    return []  # only special rules (damage transference...) move damage


def _room(ctx: AttackContext, model: str) -> int:
    """Unmarked boxes of a model, less the damage already booked for it."""
    system = ctx.current(model)
    track = damage.track_of(system)
    booked = sum(b.points for b in ctx.stash[STATE].booked if b.model == model)
    return damage.remaining(track, damage.marked_of(system, track)) - booked


@hookimpl(trylast=True)
def warmachine_mk3_damage_transfer(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    points, to = ctx.damage_points, ctx.damage_to or model
    if to == model:
        state.booked.append(_booked(model, points, model))
        if ctx.tracing:
            ctx.note(f"{_name(ctx, model)} will suffer {points} damage")
        return
    # Damage moved to another model that it has no boxes for comes back (Hordes:
    # damage transference); moved damage does not move again.
    moved = min(points, max(0, _room(ctx, to)))
    back = points - moved
    if moved:
        state.booked.append(_booked(to, moved, model, True))
    if back:
        state.booked.append(_booked(model, back, model, True))
    _record(ctx, model).update(transferred_to=to, transferred=moved)
    if ctx.tracing:
        ctx.note(f"{_name(ctx, to)} will suffer {moved} damage instead of {_name(ctx, model)}"
                 + (f"; {back} it has no boxes for comes back to {_name(ctx, model)}" if back else ""))


# -------------------------------------------------------------------------
# Damage application (step 10)
# -------------------------------------------------------------------------


@hookimpl(trylast=True)
def warmachine_mk3_apply_next_options(ctx: AttackContext) -> list[Option]:
    pending = _pending(ctx)
    if len(pending) < 2:
        return []  # one damaged model (or none): nothing to choose
    points = {}
    for booked in ctx.stash[STATE].booked:
        if booked.model in pending:
            points[booked.model] = points.get(booked.model, 0) + booked.points
    return [Option(id=m, label=f"{_name(ctx, m)} ({points[m]} damage)") for m in pending]


@hookimpl(trylast=True)
def warmachine_mk3_damage_application(ctx: AttackContext) -> None:
    # seed 001, step 10: "choose one model, follow the damage application sequence below,
    # then repeat for each other damaged model" — the active player chooses each time.
    state = ctx.stash[STATE]
    pending = _pending(ctx)
    answer = ctx.answer("apply_next")
    if answer is not None and answer.option in pending:
        state.order = [answer.option]
    else:  # not asked: the last model (or none) is left
        state.order = list(pending)
    for model in state.order:
        pending.remove(model)
    if ctx.tracing:
        ctx.note("damage applied to: " + (", ".join(_name(ctx, m) for m in state.order) or "nobody"))


@hookimpl(trylast=True)
def warmachine_mk3_apply_damage(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    system = ctx.current(model)
    track = damage.track_of(system)
    marked = damage.marked_of(system, track)
    before = tuple(system.get("crippled") or ())
    state.crippled_before[model] = before
    total, boxes, newly = 0, [], []
    for booked in state.booked:
        if booked.model != model:
            continue
        start = 1
        if track.rolled:
            label = "damage grid column" if track.kind == "grid" else "life spiral branch"
            start = ctx.dice.roll(1, 6, label=label).total
        marking = damage.mark(track, marked, booked.points, start)
        marked, total = marking.marked, total + marking.points
        boxes.extend(marking.boxes)
        newly.extend(marking.crippled)
        if ctx.tracing:
            where = {"grid": f" from column {start}", "spiral": f" from branch {start}"}.get(track.kind, "")
            ctx.note(f"{marking.points} damage marked{where}")
    now = damage.crippled(track, marked)  # sorted, each once
    crippled = sorted({*before, *now}) if before else list(now)
    ctx.update(model, marked=damage.to_token(track, marked), crippled=crippled)
    for name in newly:
        _condition(ctx, model, f"crippled:{name}")
        ctx.note("{} crippled", name.replace("_", " "))
    state.marked_boxes[model] = tuple(boxes)
    ctx.damage_points = total
    done = ctx.outcome["models"].setdefault(model, {})
    done["damage"] = done.get("damage", 0) + total
    if model == ctx.defender.id:
        ctx.outcome["damage"] += total


@hookimpl(trylast=True)
def warmachine_mk3_suffered_damage(ctx: AttackContext) -> None:
    if not ctx.tracing:  # a note only
        return
    system = ctx.current(ctx.item or "")
    track = damage.track_of(system)
    left = damage.remaining(track, damage.marked_of(system, track))
    ctx.note(f"{_name(ctx, ctx.item or '')} suffers {ctx.damage_points} damage; {left} of {track.capacity} boxes left")


@hookimpl(trylast=True)
def warmachine_mk3_disabled(ctx: AttackContext) -> None:
    state, model = ctx.stash[STATE], ctx.item or ""
    system = ctx.current(model)
    track = damage.track_of(system)
    marked = damage.marked_of(system, track)
    if damage.remaining(track, marked) > 0:
        ctx.skip("boxes left: not disabled")
    ctx.update(model, disabled=True)
    _condition(ctx, model, "disabled")
    ctx.note("every box is marked: {} is disabled", ctx.token(model).name)
    if not system.get("tough"):
        return
    if system.get("knocked_down"):
        ctx.note("Tough: no roll, the model is knocked down")
        return
    face = ctx.dice.roll(1, 6, label="Tough").total
    if not rules.tough_recovers(face):
        ctx.note("Tough: {}, no recovery", face)
        return
    healed = damage.heal_last(marked, state.marked_boxes.get(model, ()))
    still = damage.crippled(track, healed)
    crippled = sorted(set(state.crippled_before.get(model, ())) | set(still))
    ctx.update(model, marked=damage.to_token(track, healed), crippled=crippled, disabled=False, knocked_down=True)
    _condition(ctx, model, "disabled", reached=False)
    for name in set(damage.crippled(track, marked)) - set(still):
        _condition(ctx, model, f"crippled:{name}", reached=False)
    _condition(ctx, model, "knocked_down")
    _record(ctx, model).update(tough=True)
    ctx.skip(f"Tough: {face}, heals 1 damage point, no longer disabled, knocked down")


@hookimpl(trylast=True)
def warmachine_mk3_boxed(ctx: AttackContext) -> None:
    model = ctx.item or ""
    if not ctx.current(model).get("disabled"):
        ctx.skip("no longer disabled")
    ctx.update(model, boxed=True)
    _condition(ctx, model, "boxed")
    ctx.note("{} is boxed", ctx.token(model).name)


@hookimpl(trylast=True)
def warmachine_mk3_destroyed(ctx: AttackContext) -> None:
    model = ctx.item or ""
    if not ctx.current(model).get("boxed"):
        ctx.skip("no longer boxed")
    ctx.update(model, destroyed=True)
    _condition(ctx, model, "destroyed")
    ctx.note("{} is destroyed", ctx.token(model).name)


@hookimpl(trylast=True)
def warmachine_mk3_remove(ctx: AttackContext) -> None:
    model = ctx.item or ""
    if ctx.current(model).get("destroyed"):
        ctx.update(model, removed=True)
        ctx.note("{} is removed from the table", ctx.token(model).name)


# -------------------------------------------------------------------------
# Resolution (steps 11–14)
# -------------------------------------------------------------------------


@hookimpl(trylast=True)
def warmachine_mk3_attack_resolved(ctx: AttackContext) -> None:
    state = ctx.stash[STATE]
    ctx.outcome["hit"] = bool(state.hits)
    conditions = ctx.outcome["conditions"]
    if conditions:  # models whose conditions all went again (Tough) are left out
        ctx.outcome["conditions"] = {m: c for m, c in conditions.items() if c}
    if state.hits:
        if ctx.tracing:
            ctx.note("hit: " + ", ".join(_name(ctx, m) for m in state.hits) + f"; damage to the target: {ctx.outcome['damage']}")
    else:
        ctx.note("the attack missed")


@hookimpl(trylast=True)
def warmachine_mk3_after_active(ctx: AttackContext) -> None:
    return None  # only special rules trigger here


@hookimpl(trylast=True)
def warmachine_mk3_after_inactive(ctx: AttackContext) -> None:
    return None  # only special rules trigger here


@hookimpl(trylast=True)
def warmachine_mk3_after_active_attacks(ctx: AttackContext) -> None:
    return None  # only special rules trigger here


# -------------------------------------------------------------------------
# The ruleset
# -------------------------------------------------------------------------

HEAVY_GRID = [".----L", "----LL", "---MMC", "---MCC", "----RR", ".----R"]


def sample_tokens() -> list[dict[str, Any]]:
    """A small battle for the demo table: two warjacks, a warbeast, a warlock and a unit."""
    melee = {"name": "Hammer", "kind": "melee", "RNG": 2, "PS": 17, "critical": "knockdown"}
    cannon = {"name": "Bombard", "kind": "ranged", "RNG": 10, "POW": 14, "AOE": 3}
    return [
        {"id": "ironclad", "name": "Ironclad", "ruleset": "warmachine_mk3", "ownership": {"alice": 3}, "system": {
            "kind": "warjack", "MAT": 7, "RAT": 5, "DEF": 12, "ARM": 18, "STR": 11, "base": 50,
            "position": {"x": 10, "y": 10}, "grid": HEAVY_GRID, "focus": 3, "weapons": [melee, cannon]}},
        {"id": "juggernaut", "name": "Juggernaut", "ruleset": "warmachine_mk3", "ownership": {"bob": 3}, "system": {
            "kind": "warjack", "MAT": 7, "RAT": 4, "DEF": 11, "ARM": 20, "STR": 12, "base": 50,
            "position": {"x": 10, "y": 12.2}, "grid": HEAVY_GRID, "weapons": [melee]}},
        {"id": "kaya", "name": "Kaya", "ruleset": "warmachine_mk3", "ownership": {"bob": 3}, "system": {
            "kind": "warlock", "MAT": 6, "RAT": 5, "DEF": 16, "ARM": 14, "FURY": 7, "fury": 4, "base": 30,
            "position": {"x": 16, "y": 20}, "boxes": 16, "battlegroup": ["warpwolf"]}},
        {"id": "warpwolf", "name": "Warpwolf", "ruleset": "warmachine_mk3", "ownership": {"bob": 3}, "system": {
            "kind": "warbeast", "MAT": 7, "RAT": 4, "DEF": 12, "ARM": 17, "STR": 11, "FURY": 3, "base": 50,
            "position": {"x": 18, "y": 20}, "spiral": [5, 5, 5, 5, 5, 5],
            "weapons": [{"name": "Claw", "kind": "melee", "PS": 16}]}},
        *[
            {"id": f"trencher{i}", "name": f"Trencher {i}", "ruleset": "warmachine_mk3", "ownership": {"alice": 3},
             "system": {"kind": "warrior", "MAT": 6, "RAT": 6, "DEF": 13, "ARM": 13, "base": 30, "tough": True,
                        "position": {"x": 20 + i, "y": 14}, "boxes": 1,
                        "weapons": [{"name": "Rifle", "kind": "ranged", "RNG": 10, "POW": 10}]}}
            for i in (1, 2)
        ],
    ]


RULESET = Ruleset(
    id="warmachine_mk3",
    title="Warmachine / Hordes MkIII — attack sequence (Appendix A)",
    steps=STEPS,
    hookspecs=hookspecs,
    token_schema=System,
    declaration_schema=Declaration,
    numbers=NUMBERS,
    setup=setup,
    sample_tokens=sample_tokens,
    min_targets=1,
    max_targets=1,
    description=(
        "2d6 + MAT/RAT against DEF, boosts, criticals, AOE deviation and blast, sprays, "
        "damage boxes, warjack grids, warbeast spirals, Tough."
    ),
    damage_unit="damage points",
)
