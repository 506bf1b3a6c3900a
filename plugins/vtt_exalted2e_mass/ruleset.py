"""Exalted 2e mass combat: the WoA Order of War Attack Events (seed 000).

Reads like the rulebook page: the ten steps in order (step 8 with its parts
A–E), each ``trylast`` implementation short and named after its step. The
rules live in :mod:`.rules` and, where mass combat uses the individual rules
(dice, a solo unit's DVs and soak, the health track), in
:mod:`vtt_exalted2e.rules`. What the steps share is one slotted
:class:`_Attack` under a stash key.

Every step's own implementation *adds* to the working numbers rather than
setting them, so a pack that runs first (an extra die, an automatic success,
+1 Magnitude from a Charm) keeps its change.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple

from vtt_bridge import Ask, InvalidRequest, Option, Param, Roll, Ruleset, StashKey, Step, hookimpl, per_snapshot
from vtt_exalted2e import rules as exalted
from vtt_exalted2e.rules import HealthTrack

from . import hookspecs, rules
from .schemas import Declaration, TokenSystem

__all__ = ["ATTACK_ROLL", "DEFENSE_ROLL", "RULESET", "STEPS", "sample_tokens"]

WAR = "war"
DODGE = "dodge"
PARRY = "parry"
# The same id as exalted2e's "Do nothing and accept the attack".
NOTHING = Option(id="nothing", label="Do nothing")
NO_REROLL = Option(id="decline", label="Keep the roll")
NO_COUNTER = Option(id="decline", label="No counterattack")
NO_STUNT = Option(id="decline", label="No stunt")
# Same ids as exalted2e's step-5 stunts: "1", "2", "3" dice.
STUNTS = [
    Option(id=str(n), label=f"{word} stunt: roll {n} {'die' if n == 1 else 'dice'}, successes add to DV (no Essence)")
    for n, word in ((1, "One-die"), (2, "Two-die"), (3, "Three-die"))
]
# A unit (or solo unit) in one of these states no longer fights.
BROKEN = ("routed", "destroyed", "incapacitated", "unconscious", "dying", "dead")

ATTACK_ROLL: StashKey[Roll] = StashKey("exalted2e_mass.attack_roll")
"""The attack roll that counts (after step 4, the better of roll and reroll)."""
DEFENSE_ROLL: StashKey[Roll] = StashKey("exalted2e_mass.defense_roll")
"""The defender's stunt and Charm dice rolled at step 5, if any were."""


class _Attack:
    """What the steps of one attack share (kept under :data:`_ATTACK` in ``ctx.stash``)."""

    __slots__ = ("me", "foe", "solo", "foe_solo", "ranged", "damage_type", "defense", "extra", "mark", "past_penalty")

    def __init__(self, me, foe, ranged: bool) -> None:
        self.me = me  # attacker's system data as the attack began
        self.foe = foe  # defender's
        self.solo = me["solo"]  # None for a unit led by a commander
        self.foe_solo = foe["solo"]
        self.ranged = ranged
        self.damage_type = me["damage_type"]
        self.defense: _Defenses | None = None  # the defender's responses and their DVs, on first need
        self.extra = 0  # successes packs added at step 3, before the Magnitude difference
        self.mark = 0  # rolls recorded up to the attack (or defense) roll
        self.past_penalty = 0  # successes left after the external penalties, before DV (step 5)


_ATTACK: StashKey[_Attack] = StashKey("exalted2e_mass.attack")


def _state(ctx) -> _Attack:
    return ctx.stash[_ATTACK]


def setup(ctx) -> None:
    me, foe = ctx.current(ctx.attacker.id), ctx.current(ctx.defender.id)
    st = ctx.stash[_ATTACK] = _Attack(me, foe, ctx.declaration["attack"] == "ranged")
    outcome = ctx.outcome
    outcome["hit"] = False
    outcome["damage"] = 0
    outcome["conditions"] = {}
    outcome["attack"] = ctx.declaration["attack"]
    outcome["damage_type"] = st.damage_type


def _miss(ctx, reason: str) -> None:
    ctx.outcome["hit"] = False
    ctx.outcome["damage"] = 0
    ctx.end(reason)


# ---------------------------------------------------------------------------
# 1. Declaration of attack
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_declare_attack(ctx) -> None:
    st = _state(ctx)
    me, decl = st.me, ctx.declaration
    broken = [c for c in me["conditions"] if c in BROKEN]
    if broken:
        raise InvalidRequest(
            f"{ctx.attacker.name} is {broken[0]} and cannot attack",
            details={"attacker": [f"{ctx.attacker.id} is {broken[0]}."]},
        )
    pool = _pool(me, decl)
    solo, war = st.solo, me["commander"]["war"]
    if solo is not None and solo["ability"] > war:
        ctx.note("Ability {} counts only up to War {}", solo["ability"], war)
    ctx.attack_pool += pool.dice
    ctx.penalty += decl["penalty"]
    if ctx.tracing:
        ctx.note(f"{decl['attack']} attack: {pool.describe()}")
    for note in ("undodgeable", "unblockable"):
        if decl[note]:
            ctx.note("{}: binds a solo defender's {} DV", note, "Dodge" if note == "undodgeable" else "Parry")


@per_snapshot
def _pool(me, decl) -> rules.AttackPool:
    """The attack pool: the commander's, or a solo unit's own."""
    commander, solo = me["commander"], me["solo"]
    if solo is None:
        return rules.commander_pool(
            wits=commander["wits"],
            war=commander["war"],
            unit_accuracy=me["accuracy"],
            formation=me["formation"],
            stunt=decl["stunt"],
        )
    return rules.solo_pool(
        dexterity=solo["dexterity"],
        ability=solo["ability"],
        war=commander["war"],
        accuracy=solo["weapon"]["accuracy"],
        stunt=decl["stunt"],
        wound_penalty=exalted.wound_penalty_json(me["health"]),
    )


# ---------------------------------------------------------------------------
# 2. Defender declares response
# ---------------------------------------------------------------------------


class _Defenses(NamedTuple):
    """The defender's own responses against one attack, as its snapshot and the declaration make them."""

    war: rules.WarDV
    dvs: Mapping[str, int]  # option id → DV (read-only)
    options: list[Option]  # the responses on offer, with their DVs, and doing nothing
    best: str  # the best DV on offer; a tie keeps War DV
    note: str  # the card's line on War DV


def _defenses(ctx, st: _Attack) -> _Defenses:
    """The defender's own responses and their DVs (worked out once per attack)."""
    if st.defense is None:
        st.defense = _defense_values(st.foe, ctx.declaration, st.ranged)
    return st.defense


@per_snapshot
def _defense_values(foe, decl, ranged: bool) -> _Defenses:
    commander = foe["commander"]
    divine = commander["exalted"]
    war = rules.war_dv(
        intelligence=commander["intelligence"],
        war=commander["war"],
        unit_defense=foe["defense"],
        divine=divine,
        formation=foe["formation"],
        shield=foe["shield"],
        cover=decl["cover"],
        height=decl["height"],
        ranged=ranged,
    )
    dvs = {WAR: war.total}
    solo = foe["solo"]
    if solo is not None:
        # A solo unit may use its normal DVs (seed 000, step 2), with their normal rules:
        # an inapplicable DV is 0 before bonuses and penalties; wounds count.
        common = war.cover + war.height + exalted.wound_penalty_json(foe["health"])
        dodge = exalted.dodge_dv(solo["dexterity"], solo["dodge"], commander["essence"], divine=divine)
        dvs[DODGE] = (0 if decl["undodgeable"] else dodge) + common
        defense = solo["weapon"]["defense"]
        if defense is not None:
            parry = exalted.parry_dv(solo["dexterity"], solo["ability"], defense, divine=divine)
            dvs[PARRY] = (0 if decl["unblockable"] else parry) + common
    return _Defenses(
        war=war,
        dvs=MappingProxyType(dvs),
        options=[_defense_option(key, dv) for key, dv in dvs.items()] + [_nothing_option(war.modifiers + (exalted.wound_penalty_json(foe["health"]) if solo is not None else 0))],
        best=max(dvs, key=dvs.__getitem__),
        note=(
            f"War DV ({commander['intelligence']} + {commander['war']} + {foe['defense']}) ÷ 2"
            f" = {war.base}; formation {war.formation:+d}, shield/cover {war.cover:+d}, height {war.height:+d}"
        ),
    )


def _default_defense(ctx, options) -> str:
    """The best DV on offer; a tie keeps War DV."""
    return _defenses(ctx, _state(ctx)).best


@hookimpl(trylast=True)
def exalted2e_mass_defense_options(ctx) -> list[Option]:
    return _defenses(ctx, _state(ctx)).options


_DV_LABELS = {WAR: "War DV", DODGE: "Dodge DV", PARRY: "Parry DV"}


@lru_cache(maxsize=64)
def _nothing_option(kept: int) -> Option:
    """Doing nothing: DV 0, then what still applies (formation, shield or cover, height; a solo's wounds)."""
    return Option(id=NOTHING.id, label=NOTHING.label, detail=f"DV {kept} (0, then shields, fortifications and terrain still count)")


@lru_cache(maxsize=256)
def _defense_option(defense: str, dv: int) -> Option:
    """A response on offer with its DV (frozen, so made once and shared)."""
    return Option(id=defense, label=f"{_DV_LABELS[defense]} {dv}")


@hookimpl(trylast=True)
def exalted2e_mass_declare_defense(ctx) -> None:
    st = _state(ctx)
    defenses = _defenses(ctx, st)
    war, dvs = defenses.war, defenses.dvs
    ctx.war_dv += war.total
    if ctx.tracing:
        ctx.note(defenses.note)
    answer = ctx.answer("defense")
    choice = answer.option
    if choice in dvs:
        ctx.dv += dvs[choice]
    elif choice == NOTHING.id:
        # DV 0, then what the normal DV rules still apply after the reduction to zero.
        kept = war.modifiers + (exalted.wound_penalty_json(st.foe["health"]) if st.foe_solo is not None else 0)
        ctx.dv += kept
        ctx.note("no defense: DV 0, {:+d} from formation, shield or fortifications and height", kept)
    ctx.outcome["defense"] = choice
    ctx.outcome["war_dv"] = ctx.war_dv


# ---------------------------------------------------------------------------
# 3. Attack roll
# ---------------------------------------------------------------------------


def _count_attack(ctx, st: _Attack, roll: Roll) -> None:
    """Successes = rolled (+ packs' automatic ones) + the Magnitude difference, at least 0."""
    rolled = roll.successes
    ctx.successes = rules.attack_successes(rolled + st.extra, ctx.magnitude_bonus)
    ctx.stash[ATTACK_ROLL] = roll
    # The dice botch when nothing succeeds, not even after the Magnitude difference.
    ctx.outcome["botch"] = exalted.is_botch(roll.active, rolled) and ctx.successes == 0
    ctx.outcome["successes"] = ctx.successes


@hookimpl(trylast=True)
def exalted2e_mass_attack_roll(ctx) -> None:
    st = _state(ctx)
    roll = exalted.roll_pool(ctx.dice, ctx.attack_pool, label="attack")
    st.mark = len(ctx.dice.rolls)
    # Solo units count as Magnitude 0 (the schema keeps them there); no cap (seed 000).
    ctx.magnitude_bonus += rules.magnitude_bonus(st.me["magnitude"], st.foe["magnitude"])
    st.extra = ctx.successes
    _count_attack(ctx, st, roll)
    ctx.outcome["magnitude_bonus"] = ctx.magnitude_bonus
    ctx.note(
        "{} rolled, Magnitude {} against {}: {:+d} successes",
        roll.successes, st.me["magnitude"], st.foe["magnitude"], ctx.magnitude_bonus,
    )


# ---------------------------------------------------------------------------
# 4. Attack reroll
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_attack_reroll_options(ctx) -> list[Option]:
    return []


@hookimpl(trylast=True)
def exalted2e_mass_attack_reroll(ctx) -> None:
    st = _state(ctx)
    rerolls = ctx.dice.rolls[st.mark :]
    if rerolls:
        first = ctx.stash[ATTACK_ROLL]
        best = exalted.keep_better([first, *rerolls])
        if ctx.tracing:
            ctx.note(exalted.kept_note(first, best))
        _count_attack(ctx, st, best)


# ---------------------------------------------------------------------------
# 5. Subtract external penalties, apply special defenses
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_defense_stunt_options(ctx) -> list[Option]:
    # "If successes remain, defender rolls extra dice derived from stunts" (seed 000, step 5).
    if ctx.outcome.get("defense") == NOTHING.id:
        return []
    return STUNTS if rules.past_dv(rules.past_dv(ctx.successes, ctx.penalty), ctx.dv) > 0 else []


@hookimpl(trylast=True)
def exalted2e_mass_apply_defense(ctx) -> None:
    st = _state(ctx)
    st.past_penalty = ctx.successes = rules.past_dv(ctx.successes, ctx.penalty)
    ctx.successes = rules.past_dv(st.past_penalty, ctx.dv)  # DV last; a negative DV blocks as 0
    if ctx.successes <= 0:
        _miss(ctx, "botch" if ctx.outcome["botch"] else "miss")
    ctx.defense_dice += exalted.defensive_stunt(ctx.answer("defense_stunt"))
    if ctx.defense_dice > 0:
        roll = exalted.roll_pool(ctx.dice, ctx.defense_dice, label="defense stunt and Charm dice")
        st.mark = len(ctx.dice.rolls)
        ctx.stash[DEFENSE_ROLL] = roll
        # A negative DV stays negative: these successes fill it first.
        ctx.dv += roll.successes
        ctx.successes = rules.past_dv(st.past_penalty, ctx.dv)
        if ctx.successes <= 0:
            _miss(ctx, "miss")


# ---------------------------------------------------------------------------
# 6. Defender reroll
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_defense_reroll_options(ctx) -> list[Option]:
    return []


@hookimpl(trylast=True)
def exalted2e_mass_defense_reroll(ctx) -> None:
    st = _state(ctx)
    first = ctx.stash.get(DEFENSE_ROLL)
    rerolls = ctx.dice.rolls[st.mark :] if first is not None else []
    if rerolls:
        before = first.successes
        best = exalted.keep_better([first, *rerolls])
        if ctx.tracing:
            ctx.note(exalted.kept_note(first, best))
        ctx.stash[DEFENSE_ROLL] = best
        ctx.dv += best.successes - before
    ctx.successes = rules.past_dv(st.past_penalty, ctx.dv)  # a pack may have raised DV too
    if ctx.successes <= 0:
        _miss(ctx, "miss")


# ---------------------------------------------------------------------------
# 7. Calculate raw damage
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_raw_damage(ctx) -> None:
    st = _state(ctx)
    me = st.me
    ctx.outcome["hit"] = True
    if st.solo is None:
        raw = rules.unit_raw_damage(
            charisma=me["commander"]["charisma"], unit_damage=me["damage"], successes=ctx.successes
        )
    else:
        weapon = st.solo["weapon"]
        raw = rules.solo_raw_damage(
            strength=st.solo["strength"],
            weapon_damage=weapon["damage"],
            successes=ctx.successes,
            uses_strength=weapon["strength"],
        )
    ctx.raw_damage += raw
    ctx.outcome["raw_damage"] = ctx.raw_damage


# ---------------------------------------------------------------------------
# 8. Apply Hardness and soak, roll damage
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_damage(ctx) -> None:
    st = _state(ctx)
    foe, kind = st.foe, st.damage_type
    ctx.hardness += foe["hardness"].get(kind, 0)
    solo = st.foe_solo
    if solo is None:
        ctx.soak += foe["soak"].get(kind, 0)
    else:
        armor = solo["armor"]
        ctx.soak += exalted.total_soak(
            solo["stamina"],
            kind,
            divine=foe["commander"]["exalted"],
            armor_bashing=armor["bashing"],
            armor_lethal=armor["lethal"],
            natural_bonus=foe["soak"].get(kind, 0),
        )


@hookimpl(trylast=True)
def exalted2e_mass_hardness(ctx) -> None:
    if exalted.hardness_stops(ctx.raw_damage, ctx.hardness):
        # Struck, but no damage — and no Might either: the cycle ends here (seed 000, 8A).
        ctx.outcome["hit"] = True
        ctx.outcome["damage"] = 0
        ctx.note("Hardness {} ≥ raw damage {}: struck, no damage", ctx.hardness, ctx.raw_damage)
        ctx.end("hardness")
    ctx.note("Hardness {} < raw damage {}", ctx.hardness, ctx.raw_damage)


@hookimpl(trylast=True)
def exalted2e_mass_soak(ctx) -> None:
    left = ctx.raw_damage - ctx.soak
    ctx.damage_pool += left if left > 0 else 0
    ctx.note("{} raw − {} soak ({}) = {} dice", ctx.raw_damage, ctx.soak, _state(ctx).damage_type, left if left > 0 else 0)


@hookimpl(trylast=True)
def exalted2e_mass_ping(ctx) -> None:
    st = _state(ctx)
    me = st.me
    weapon = st.solo["weapon"] if st.solo is not None else None
    ctx.ping_floor += rules.ping_floor(
        magnitude=me["magnitude"],
        solo=weapon is not None,
        overwhelming=weapon["overwhelming"] if weapon is not None else 1,
        essence=me["commander"]["essence"],
    )
    result = rules.ping(ctx.damage_pool, ctx.ping_floor)
    ctx.damage_pool = result.pool
    ctx.outcome["ping"] = result.did_ping
    if result.did_ping:
        ctx.note("ping: {0.post_soak} dice are below {0.floor}; roll {0.pool}", result)
    else:
        ctx.note("{0.post_soak} dice are not below {0.floor}: no ping", result)


@hookimpl(trylast=True)
def exalted2e_mass_damage_roll(ctx) -> None:
    roll = exalted.roll_pool(ctx.dice, ctx.damage_pool, label="damage", damage=True)
    ctx.levels += roll.successes


@hookimpl(trylast=True)
def exalted2e_mass_might(ctx) -> None:
    ctx.might += _state(ctx).me["might"]
    ctx.damage += ctx.levels + ctx.might
    ctx.outcome["might"] = ctx.might
    ctx.outcome["damage"] = ctx.damage


# ---------------------------------------------------------------------------
# 9. Counterattacks
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_mass_counterattack_options(ctx) -> list[Option]:
    return []


def _may_counter(ctx) -> bool:
    """No counterattack against a counterattack (seed 000, step 9): in one, the counterattack
    decision is not asked, whoever offers one (``Ask.when``)."""
    return not ctx.is_counterattack


@hookimpl(trylast=True)
def exalted2e_mass_counterattack(ctx) -> None:
    answer = ctx.answer("counterattack")
    if answer is None or answer.option == NO_COUNTER.id:
        return
    declaration = Declaration().load(
        {"attack": ctx.declaration["attack"], "charms": [{**answer.params, "id": answer.option}]}
    )
    ctx.note(f"{ctx.defender.name} counterattacks ({answer.option})")
    ctx.nest(kind="counterattack", attacker=ctx.defender.id, targets=[ctx.attacker.id], declaration=declaration)


# ---------------------------------------------------------------------------
# 10. Apply results
# ---------------------------------------------------------------------------


class _Wounded(NamedTuple):
    """A track after damage: its JSON form, the conditions newly shown, the token's conditions then, the card's line."""

    health: dict[str, Any]  # never changed: ctx.update stores a copy
    gained: tuple[str, ...]
    conditions: tuple[str, ...]
    line: str  # after the token's name


@per_snapshot
def _wounded(health, conditions, levels: int, kind: str, solo: bool) -> _Wounded:
    before = HealthTrack.from_json(health)
    after = exalted.apply_damage(before, levels, kind)
    if solo:
        gained = exalted.new_conditions(before, after)
    else:
        gained = sorted(rules.unit_conditions(after) - rules.unit_conditions(before))
    return _Wounded(
        health=after.to_json(),
        gained=tuple(gained),
        conditions=(*conditions, *(c for c in gained if c not in conditions)),
        line=f"[{after.notation()}]" + (f" — {', '.join(gained)}" if gained else ""),
    )


@hookimpl(trylast=True)
def exalted2e_mass_apply_results(ctx) -> None:
    st = _state(ctx)
    target = ctx.defender.id
    conditions: dict[str, list[str]] = {}
    if ctx.damage > 0:
        current = ctx.current(target)
        wounded = _wounded(current["health"], current["conditions"], ctx.damage, st.damage_type, st.foe_solo is not None)
        if wounded.gained:
            conditions[target] = list(wounded.gained)
            ctx.update(target, health=wounded.health, conditions=wounded.conditions)
        else:
            ctx.update(target, health=wounded.health)
        if ctx.tracing:
            ctx.note(f"{ctx.defender.name}: {wounded.line}")
    # The counterattack's damage lands at the same moment (seed 000, step 10).
    for child in ctx.outcome.get("children", ()):
        for token_id, gained in child.get("conditions", {}).items():
            conditions.setdefault(token_id, []).extend(gained)
    ctx.outcome["conditions"] = conditions


# ---------------------------------------------------------------------------
# The ruleset
# ---------------------------------------------------------------------------

STEPS = (
    Step(name="declare_attack", title="1. Declaration of attack"),
    Step(
        name="declare_defense",
        title="2. Defender declares response",
        ask=Ask(
            name="defense",
            prompt="Defend with War DV, your own DV, or not at all?",
            who="defender",
            default=_default_defense,
        ),
    ),
    Step(name="attack_roll", title="3. Attack roll"),
    Step(
        name="attack_reroll",
        title="4. Attack reroll",
        ask=Ask(name="attack_reroll", prompt="Use a reroll effect?", who="attacker", decline=NO_REROLL),
    ),
    Step(
        name="apply_defense",
        title="5. External penalties and special defenses",
        ask=Ask(name="defense_stunt", prompt="Successes remain: describe your defense for a stunt?", who="defender", decline=NO_STUNT),
    ),
    Step(
        name="defense_reroll",
        title="6. Defender reroll",
        ask=Ask(
            name="defense_reroll",
            prompt="Your DV did not stop the attack: use a reroll effect?",
            who="defender",
            decline=NO_REROLL,
        ),
    ),
    Step(name="raw_damage", title="7. Raw damage"),
    Step(
        name="damage",
        title="8. Hardness, soak, damage",
        steps=(
            Step(name="hardness", title="8A. Hardness"),
            Step(name="soak", title="8B. Soak"),
            Step(name="ping", title="8C. Ping damage"),
            Step(name="damage_roll", title="8D. Roll damage"),
            Step(name="might", title="8E. Might"),
        ),
    ),
    Step(
        name="counterattack",
        title="9. Counterattacks",
        ask=Ask(name="counterattack", prompt="Launch a counterattack?", who="defender", decline=NO_COUNTER, when=_may_counter),
    ),
    Step(name="apply_results", title="10. Apply results"),
)

NUMBERS = (
    "attack_pool",
    "successes",
    "magnitude_bonus",
    "war_dv",
    "dv",
    "penalty",
    "defense_dice",
    "raw_damage",
    "hardness",
    "soak",
    "damage_pool",
    "ping_floor",
    "levels",
    "might",
    "damage",
)


def sample_tokens() -> list[dict[str, Any]]:
    """A mortal spear unit, an elite Dragon-Blooded talon and a solo Solar, ready for the demo table."""
    return [
        {
            "id": "spears",
            "name": "Nexus spear militia (Magnitude 5)",
            "ruleset": "exalted2e_mass",
            "ownership": {"bob": 3},
            "system": {
                "magnitude": 5,
                "drill": 2,
                "might": 0,
                "accuracy": 1,
                "damage": 3,
                "defense": 1,
                "damage_type": "L",
                "soak": {"B": 5, "L": 3},
                "formation": "close",
                "shield": "target",
                "commander": {"wits": 3, "intelligence": 3, "charisma": 2, "war": 3, "essence": 1},
            },
        },
        {
            "id": "talon",
            "name": "Dragon-Blooded talon (Magnitude 3, elite)",
            "ruleset": "exalted2e_mass",
            "ownership": {"alice": 3},
            "system": {
                "magnitude": 3,
                "drill": 4,
                "might": 1,
                "accuracy": 2,
                "damage": 4,
                "defense": 2,
                "damage_type": "L",
                "soak": {"B": 9, "L": 7, "A": 2},
                "hardness": {"L": 2},
                "formation": "relaxed",
                "elite": True,
                # The seed-derived War DV: (Intelligence 3 + War 4 + Defense 2) ÷ 2 = 4.5 → 5.
                "commander": {"wits": 3, "intelligence": 3, "charisma": 4, "war": 4, "essence": 3, "exalted": True},
            },
        },
        {
            "id": "cinder",
            "name": "Swift Cinder (solo Solar)",
            "ruleset": "exalted2e_mass",
            "ownership": {"carol": 3},
            "system": {
                "magnitude": 0,
                "might": 0,
                "damage_type": "L",
                "commander": {"wits": 4, "intelligence": 3, "charisma": 4, "war": 3, "essence": 3, "exalted": True},
                "solo": {
                    "dexterity": 5,
                    "strength": 4,
                    "stamina": 3,
                    "ability": 5,
                    "dodge": 4,
                    "weapon": {"accuracy": 3, "damage": 5, "defense": 2, "overwhelming": 3},
                    "armor": {"bashing": 7, "lethal": 7},
                },
            },
        },
    ]


RULESET = Ruleset(
    id="exalted2e_mass",
    title="Exalted 2nd edition — mass combat (WoA Order of War Attack Events)",
    description="Units and solo units: War DV, Magnitude, Might, formations, ping damage, unit health tracks.",
    steps=STEPS,
    hookspecs=hookspecs,
    token_schema=TokenSystem,
    declaration_schema=Declaration,
    numbers=NUMBERS,
    setup=setup,
    sample_tokens=sample_tokens,
    damage_unit="health levels",
)


@hookimpl
def vtt_bridge_rulesets() -> list[Ruleset]:
    return [RULESET]
