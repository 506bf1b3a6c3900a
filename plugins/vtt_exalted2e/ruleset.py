"""Exalted 2nd edition, individual combat: the ten Order of Attack Events (seed 002).

Reads like the rulebook page: the steps in order, each ``trylast``
implementation short and named after its step; the rules themselves live in
:mod:`.rules`. Token data is read straight from the snapshots (no schema work
on the hot path) and what the steps share is kept in one slotted
:class:`_Attack` under a stash key. What a step works out from frozen data
alone — the weapon, the pool and the card's lines, the defender's DVs, the
wounded track — is a pure function remembered per snapshot (``vtt_bridge.per_snapshot``):
the odds resolve the same tokens thousands of times.

Where the brief and the seed differ, the seed wins:

- Parry DV: the brief says the "best weapon counts"; the seed says Parry DV
  uses "the currently equipped weapon with the highest Defense" (and "cannot
  use a hand for parrying if they are holding a weapon in it"). So the held
  weapon with the highest Defense parries, even when another held weapon's
  Ability would give a higher DV; between equal Defenses, the higher DV.
- Flurries: the seed gives a flurry's DV cost ("each attack the character
  makes reduces both DVs by one") and its onslaught ("only against the attacks
  of an individual flurry"), and says its attacks "degrade in effectiveness",
  but not by how much nor its Speed. The multiple-action penalty is a
  [decision] (``rules.flurry_penalty``); ticks and Speed are the table's, so a
  flurry's first attack is the attacker's new action (``new_action``).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain
from typing import Any, NamedTuple

from vtt_bridge import Ask, InvalidRequest, Option, PluginError, Ruleset, StashKey, Step, hookimpl, per_snapshot

from . import hookspecs, rules
from .rules import HealthTrack
from .schemas import ATTACK_TYPES, Declaration, TokenSystem

__all__ = ["RULESET", "STEPS", "FIST", "sample_tokens"]

FIST: dict[str, Any] = {
    # A bare hand, when a token lists no weapons: Accuracy +1, damage +0B, Defense +2.
    "name": "fist", "ability": "martial_arts", "accuracy": 1, "damage": 0, "damage_type": "B",
    "strength": True, "defense": 2, "minimum": 1, "piercing": False, "reach": False,
    "range": None, "two_handed": False, "unarmed": True,
}  # fmt: skip
_TYPE_OF_ABILITY = {ability: kind for kind, ability in ATTACK_TYPES.items()}
_BANDS = {"within": 0, "double": 1, "triple": 2}

DODGE = Option(id="dodge", label="Dodge")
PARRY = Option(id="parry", label="Parry")
NOTHING = Option(id="nothing", label="Do nothing and accept the attack")
KEEP = Option(id="decline", label="Keep the roll")
NO_COUNTER = Option(id="decline", label="No counterattack")
NO_STUNT = Option(id="decline", label="No stunt")
STUNTS = [
    Option(id="1", label="One-die stunt: roll 1 die, successes add to DV"),
    Option(id="2", label="Two-die stunt: roll 2 dice, successes add to DV"),
    Option(id="3", label="Three-die stunt: roll 3 dice, successes add to DV"),
]
NO_EFFECT = Option(id="decline", label="No effect")
NO_BYSTANDER = Option(id="decline", label="No: it strikes no one")


class _Attack:
    """What the steps of one attack share (kept under :data:`ATTACK` in ``ctx.stash``)."""

    __slots__ = (
        "me", "foe", "weapon", "ranged", "damage_type", "roll", "mark", "defense", "counter", "aware", "acted", "stray",
        "counts_as",
    )  # fmt: skip

    def __init__(self, me, foe, weapon, ranged: bool, counter: bool) -> None:
        self.me = me  # attacker's system data as the attack began
        self.foe = foe  # defender's
        self.weapon = weapon
        self.ranged = ranged
        self.damage_type = weapon["damage_type"]
        self.roll = None
        self.mark = 0
        self.counter = counter
        self.defense: _Defense | None = None  # the defender's DVs, worked out on first need
        self.aware = True  # the defender sees the attack coming and is in the fight
        self.acted = False  # the attacker's DV penalty and the onslaught are recorded
        self.stray = 0  # a botch with bystanders about: the 1s rolled, the GM to rule
        self.counts_as: dict[str, str] = {}  # a pack's defense option → the defense it said it is


ATTACK: StashKey[_Attack] = StashKey("exalted2e.attack")
COUNTER: StashKey[Any] = StashKey("exalted2e.counterattack")
"""On an attack's context: the context of the counterattack launched against it (step 9)."""


def _wound(system) -> int:
    return rules.wound_penalty_json(system["health"])


def setup(ctx) -> None:
    """Settle what the declaration names before step 1: weapon, Ability, damage type."""
    decl = ctx.declaration
    attacker = ctx.attacker
    me = ctx.current(attacker.id)
    foe = ctx.current(ctx.defender.id)
    weapon = _wielded(attacker, me, decl)
    for i, bystander in enumerate(decl.get("bystanders", ())):
        if bystander not in ctx.tokens or bystander in (attacker.id, ctx.defender.id):
            raise InvalidRequest(
                f"bystander {bystander!r} is not another token on this table",
                details={"declaration": {"bystanders": {str(i): ["Not a token on this table, or the attacker or target."]}}},
            )
    ability = weapon["ability"]
    kind = decl.get("type")
    if kind is not None and ATTACK_TYPES[kind] != ability:
        raise InvalidRequest(
            f"the {weapon['name']} is wielded with {ability}, not a {kind} attack",
            details={"declaration": {"type": [f"The {weapon['name']} makes {_TYPE_OF_ABILITY[ability]} attacks."]}},
        )
    ranged = ability == "archery" or ability == "thrown"
    ctx.stash[ATTACK] = _Attack(me, foe, weapon, ranged, ctx.is_counterattack)
    if ctx.parent is not None and ctx.kind == "counterattack":
        ctx.parent.stash[COUNTER] = ctx
    outcome = ctx.outcome
    outcome["hit"] = False
    outcome["damage"] = 0
    outcome["conditions"] = {}
    outcome["weapon"] = weapon["name"]
    outcome["ability"] = ability
    outcome["attack_type"] = kind or _TYPE_OF_ABILITY[ability]
    outcome["damage_type"] = weapon["damage_type"]


@per_snapshot
def _wielded(attacker, me, decl):
    """The weapon the declaration names (else the default one), once the attacker is seen able to strike with it."""
    out = rules.out_of_the_fight(me["health"])
    if out is not None:
        # Past Incapacitated a character passes out (bashing) or is dying (lethal): no attacks.
        raise InvalidRequest(
            f"{attacker.name} is {out} and cannot attack",
            details={"attacker": [f"{attacker.name} is {out} (past Incapacitated)."]},
        )
    name = decl.get("weapon")
    weapons = me["weapons"]
    if name is None:
        weapon = _default_weapon(weapons, me.get("equipped"))
    else:
        weapon = next((w for w in weapons or (FIST,) if w["name"] == name), None)
        if weapon is None:
            raise InvalidRequest(
                f"{attacker.name} has no weapon {name!r}",
                details={"declaration": {"weapon": [f"Must be one of: {', '.join(w['name'] for w in weapons or (FIST,))}."]}},
            )
    _check_in_hand(attacker, me, weapon)
    return weapon


def _default_weapon(weapons, equipped):
    """The first weapon held, else the first listed (a bare fist if none is)."""
    if equipped is not None:
        for w in weapons:
            if w["name"] in equipped:
                return w
    return weapons[0] if weapons else FIST


def _check_in_hand(attacker, me, weapon) -> None:
    """A weapon attacks only from a hand: held (``equipped``), or a natural weapon with a hand free for it."""
    equipped = me.get("equipped")
    name = weapon["name"]
    if not weapon["unarmed"]:
        if equipped is not None and name not in equipped:
            raise InvalidRequest(
                f"{attacker.name} is not holding the {name}",
                details={"declaration": {"weapon": [f"Not equipped; held: {', '.join(equipped) or 'nothing'}."]}},
            )
        return
    free = rules.free_hands(me["weapons"], equipped=equipped, hands=me.get("hands", 2), shield=me["shield"])
    if rules.weapon_hands(weapon) > free:
        raise InvalidRequest(
            f"{attacker.name} has no hand free to strike with the {name}",
            details={"declaration": {"weapon": [f"The {name} needs a free hand."]}},
        )


def _new_action(decl) -> bool:
    """The attacker's tick has come: declared, or the first attack of a declared flurry.

    A flurry is "a series of attacks" on one tick: its first attack starts it,
    and "the onslaught penalty is reset to 0 at the start of the second series
    of attacks" (seed 002, "DV Penalties").
    """
    flurry = decl.get("flurry")
    return bool(decl.get("new_action")) or (flurry is not None and flurry.get("attack", 1) == 1)


def _miss(ctx, reason: str) -> None:
    """The attack misses: the attempt still costs DV and counts for onslaught; the cycle ends."""
    outcome = ctx.outcome
    outcome["hit"] = False
    outcome["damage"] = 0
    _record_actions(ctx)
    ctx.end(reason)


def _record_actions(ctx) -> None:
    """The attacker's action DV penalty (−1, −2 more on a botch) and the defender's onslaught.

    A counterattack is reflexive: it costs no action DV penalty and is no part
    of a flurry, so it adds no onslaught ([decision]); its botch still costs −2.
    With ``new_action`` (or a flurry's first attack) the attacker's own DV has
    refreshed and its flurry against this defender restarts (seed 002, "DV
    Penalties"). Every attack of a flurry costs its −1: "each attack the
    character makes reduces both DVs by one".
    """
    st = ctx.stash[ATTACK]
    if st.acted:
        return
    st.acted = True
    decl = ctx.declaration
    new_action = _new_action(decl)
    added = (0 if st.counter else 1) + (2 if ctx.outcome.get("botch") else 0)
    if added or new_action:
        attacker = ctx.attacker.id
        if new_action:
            ctx.update(attacker, dv_penalty=added, onslaught={})
        else:
            ctx.update(attacker, dv_penalty=ctx.current(attacker).get("dv_penalty", 0) + added)
    if not st.counter:
        defender = ctx.defender.id
        key = rules.onslaught_key(ctx.attacker.id, decl.get("coordinated"))
        onslaught = dict(ctx.current(defender).get("onslaught", {}))
        onslaught[key] = (0 if new_action else onslaught.get(key, 0)) + 1
        ctx.update(defender, onslaught=onslaught)


# ---------------------------------------------------------------------------
# 1. Declaration of attack
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_declare_attack(ctx) -> None:
    st = ctx.stash[ATTACK]
    pool, penalty, notes = _declared(ctx.attacker, ctx.defender, st.me, st.weapon, ctx.declaration)
    ctx.attack_pool = pool
    if ctx.tracing:
        for text in notes:
            ctx.note(text)
    if penalty:
        ctx.external_penalty += penalty


@per_snapshot
def _declared(attacker, defender, me, weapon, decl) -> tuple[int, int, tuple[str, ...]]:
    """The attack pool, the range's external penalty, and the card's lines about the declaration."""
    ability = weapon["ability"]
    pool = me["attributes"]["dexterity"] + me["abilities"][ability] + weapon["accuracy"]
    stunt = decl.get("stunt", 0)
    pool += stunt + _wound(me)
    if decl.get("off_hand") and not weapon["unarmed"]:
        pool -= 1  # "This does not apply to unarmed fighting maneuvers" (seed 002, Off Hand)
    notes = [
        "{} attacks {} with the {w[name]} ({}, Accuracy {w[accuracy]:+d}, damage {w[damage]:+d}{w[damage_type]})".format(
            attacker.name, defender.name, ability.replace("_", " "), w=weapon
        )
    ]
    flurry = decl.get("flurry")
    if flurry is not None:  # a flurry's attacks "degrade in effectiveness" (seed 002, Automatic Defense)
        attacks, attack = flurry["attacks"], flurry.get("attack", 1)
        penalty = flurry.get("penalty")
        penalty = rules.flurry_penalty(attacks, attack) if penalty is None else penalty
        pool -= penalty
        notes.append(
            f"attack {attack} of a flurry of {attacks}: −{penalty} {'die' if penalty == 1 else 'dice'}"
            + (" (a new action)" if attack == 1 else "")
        )
    ranged = ability == "archery" or ability == "thrown"
    external = _range_penalty(defender, decl, weapon) if ranged else 0
    if decl.get("undodgeable"):
        notes.append("undodgeable: Dodge DV is 0")
    elif decl.get("dodge_inapplicable"):
        notes.append("Dodge is inapplicable (no ground to give): Dodge DV is 0 unless a stunt circumvents it")
    if decl.get("unblockable"):
        notes.append("unblockable: Parry DV is 0")
    if decl.get("unaware"):
        notes.append(f"{defender.name} is unaware of the attack and cannot defend")
    if decl.get("coordinated"):
        notes.append(f"a coordinated attack ({decl['coordinated']}): the group's onslaught penalty applies")
    return (pool if pool > 0 else 0), external, tuple(notes)


def _range_penalty(defender, decl, weapon) -> int:
    band = decl.get("range_band")
    if band is not None:
        return _BANDS[band]
    distance, reach = decl.get("distance"), weapon["range"]
    if distance is None or reach is None:
        return 0
    penalty = rules.range_penalty(distance, reach)
    if penalty is None:
        raise InvalidRequest(
            f"{defender.name} is {distance} yards away, beyond three times the {weapon['name']}'s range of {reach}",
            details={"declaration": {"distance": [f"Must be at most {3 * reach} for the {weapon['name']}."]}},
        )
    return penalty


# ---------------------------------------------------------------------------
# 2. Defender declares response
# ---------------------------------------------------------------------------


class _Defense(NamedTuple):
    """The defender's DVs against one attack, as its snapshot and the declaration make them."""

    out: str | None  # why it cannot defend: past Incapacitated
    aware: bool  # sees the attack coming and is in the fight
    dodge_ability: int
    dodge_base: int | None  # None: inapplicable
    dodge_stunted: int | None  # with a stunt circumventing a mundane inapplicability
    parry_base: int | None
    parry_ability: int
    parry_stunted: int | None
    stunted_ability: int
    defended: tuple[int, int]  # (Dodge DV, Parry DV) with bonuses and penalties, defending
    undefended: tuple[int, int]  # the same, not defending or unable to
    parry_with: str | None  # the weapon (or hand) the Parry DV comes from
    options: tuple[Option, ...]  # dodge, parry and nothing, each saying the DV it gives (see _described)


@per_snapshot
def _defense(foe, decl, weapon, attacker_id: str) -> _Defense:
    """Base DVs, whether they apply, bonuses and penalties."""
    attrs, abilities = foe["attributes"], foe["abilities"]
    dex, divine = attrs["dexterity"], foe["divine"]
    out = rules.out_of_the_fight(foe["health"])
    dodge_ability = abilities["dodge"]
    dodge = rules.dodge_dv(dex, dodge_ability, foe["essence"], divine=divine)
    # Parry DV: the held weapon with the highest Defense, or a hand free of
    # weapons and shield (seed 002, "Parry DV"). Even the Exalted cannot parry
    # lethal, aggravated or ranged attacks unarmed; natural armor is exempt
    # (seed 002, "Inapplicable Defense").
    able = rules.parrying_weapons(
        foe["weapons"] or (FIST,), equipped=foe.get("equipped"), hands=foe.get("hands", 2), shield=foe["shield"]
    )
    ability = weapon["ability"]
    ranged = ability == "archery" or ability == "thrown"
    limited = (weapon["damage_type"] != "B" or ranged) and not foe["natural_armor"]
    armed = [w for w in able if not w["unarmed"]] if limited else able
    parry = rules.best_parry(armed, dex, abilities, divine=divine)
    parry_with = _parrying_with(armed, dex, abilities, divine=divine) if parry is not None else None
    # A stunt may circumvent a mundane inapplicability (seed 002, "DV Penalties"):
    # with one the best hand parries, a bare one against a blade included.
    stunted = rules.best_parry(able, dex, abilities, divine=divine) if limited else parry
    dodge_stunted = dodge
    if decl.get("undodgeable"):  # magic: not even a stunt
        dodge = dodge_stunted = None
    elif decl.get("dodge_inapplicable"):
        dodge = None
    if decl.get("unblockable"):
        parry = stunted = None
    parry, parry_ability = parry if parry is not None else (None, 0)
    stunted, stunted_ability = stunted if stunted is not None else (None, 0)
    bonus = rules.cover_bonus(foe["shield"], decl.get("cover"), ranged=ranged) + rules.height_bonus(
        decl.get("height", 0), close=not ranged, reach=weapon["reach"]
    )
    key = rules.onslaught_key(attacker_id, decl.get("coordinated"))
    onslaught = 0 if _new_action(decl) else foe["onslaught"].get(key, 0)
    penalty = foe["dv_penalty"] - _wound(foe) + onslaught
    armor = foe["armor"]
    dodge_penalty = (armor["mobility"] if armor else 0) + decl.get("terrain", 0)
    # Inapplicable DVs, and both when not defending, are 0 *before* bonuses and
    # penalties: cover and the other bonuses still apply after the reduction to zero.
    common = bonus - penalty
    defended = ((dodge or 0) + common - dodge_penalty, (parry or 0) + common)
    undefended = (common - dodge_penalty, common)
    parry_with = parry_with if parry is not None else None
    return _Defense(
        out=out,
        aware=out is None and not decl.get("unaware"),
        dodge_ability=dodge_ability,
        dodge_base=dodge,
        dodge_stunted=dodge_stunted,
        parry_base=parry,
        parry_ability=parry_ability,
        parry_stunted=stunted,
        stunted_ability=stunted_ability,
        defended=defended,
        undefended=undefended,
        parry_with=parry_with,
        options=_described(*defended, max(undefended), dodge is not None, parry is not None, parry_with),
    )


def _parrying_with(weapons, dex: int, abilities, *, divine: bool) -> str | None:
    """The name of the weapon :func:`rules.best_parry` parries with (the same ranking)."""
    ranked = [
        ((w["defense"], rules.parry_dv(dex, abilities[w["ability"]], w["defense"], divine=divine), abilities[w["ability"]]), w)
        for w in weapons
    ]
    if not ranked:
        return None
    return max(ranked, key=lambda pair: pair[0])[1].get("name")


def _defense_values(ctx, st: _Attack) -> _Defense:
    """The defender's DVs against this attack, worked out on first need (and noted if it cannot defend)."""
    d = st.defense
    if d is None:
        d = st.defense = _defense(st.foe, ctx.declaration, st.weapon, ctx.attacker.id)
        st.aware = d.aware
        if d.out is not None:
            ctx.note("{} is {} and cannot defend", ctx.defender.name, d.out)
    return d


def _dvs(d: _Defense, choice: str) -> tuple[int, int]:
    """(Dodge DV, Parry DV): both at their bases' 0 when not defending, or unable to (unaware, out of the fight)."""
    return d.undefended if choice == "nothing" or not d.aware else d.defended


def _circumvented(d: _Defense, choice: str) -> tuple[int, int | None]:
    """What a stunt adds to the chosen DV by circumventing a mundane inapplicability, and the Ability then used."""
    if choice == "parry":
        gain = (d.parry_stunted or 0) - (d.parry_base or 0)
        return (gain, d.stunted_ability) if gain > 0 else (0, None)
    if choice == "dodge":
        gain = (d.dodge_stunted or 0) - (d.dodge_base or 0)
        return (gain, None) if gain > 0 else (0, None)
    return 0, None


def _default_defense(ctx, options) -> str:
    """The better of Dodge DV and Parry DV; a tie goes to parry."""
    st = ctx.stash[ATTACK]
    d = st.defense or _defense_values(ctx, st)  # (worked out when the options were)
    if not d.aware:
        return "nothing"
    dodge, parry = d.defended
    return rules.better_defense(dodge, parry)


_DEFENSES = [DODGE, PARRY, NOTHING]
_DEFENSE_IDS = frozenset(o.id for o in _DEFENSES)


@lru_cache(maxsize=512)
def _described(dodge: int, parry: int, nothing: int, dodge_ok: bool, parry_ok: bool, parry_with: str | None) -> tuple[Option, ...]:
    """Dodge, Parry and Do nothing, each with the DV it gives (the same objects for the same DVs)."""
    return (
        Option(id=DODGE.id, label=DODGE.label, detail=f"Dodge DV {dodge}" + ("" if dodge_ok else " (cannot dodge this)")),
        Option(
            id=PARRY.id,
            label=PARRY.label,
            detail=f"Parry DV {parry}"
            + (f" ({parry_with})" if parry_ok and parry_with else "" if parry_ok else " (cannot parry this)"),
        ),
        Option(id=NOTHING.id, label=NOTHING.label, detail=f"DV {nothing}"),
    )


@hookimpl(trylast=True)
def exalted2e_defense_options(ctx) -> list[Option]:
    # A target unaware of the attack, or out of the fight, cannot defend without magic.
    d = _defense_values(ctx, ctx.stash[ATTACK])
    return list(d.options) if d.aware else []


def _merge_defense_options(ctx, batches: list[list[Option]]) -> list[list[Option]]:
    """The defense question's options as offered (the step's ``Ask.combine``): a pack's option
    with a ruleset option's id adds its params to it; a pack's own option must say the defense
    it counts as; a target that cannot defend keeps only a pack's own magic."""
    st = ctx.stash[ATTACK]
    counts = st.counts_as
    offering = 0  # implementations offering anything
    for batch in batches:
        if batch:
            offering += 1
        for option in batch:
            if option.id in _DEFENSE_IDS:
                continue  # the ruleset's own, or a pack's params for it
            if option.counts_as not in _DEFENSE_IDS:
                raise _unsaid(option)
            counts[option.id] = option.counts_as
    d = st.defense or _defense_values(ctx, st)  # (worked out by the ruleset's own options hook)
    if not d.aware:  # only a pack's own magic may still defend
        return [[o for batch in batches for o in batch if o.id not in _DEFENSE_IDS]]
    if offering < 2:
        return batches  # one plugin's options alone: nothing to merge
    return [_merged(*d.options, *chain.from_iterable(batches))]


def _unsaid(option: Option) -> PluginError:
    """A pack's own option must say which defense it is: the DV it gives would otherwise be a guess."""
    return PluginError(
        f"option {option.id!r} at the defense decision does not say which defense it is: give it "
        "counts_as='dodge', 'parry' or 'nothing', or add params to the ruleset's own option "
        "(an Option with id 'parry' and your params) — see docs/plugins.md, 'Offer an option'",
        details={"plugin": option.plugin, "option": option.id, "counts_as": option.counts_as},
    )


@per_snapshot
def _merged(*options: Option) -> list[Option]:
    """The ruleset's options with the params of a pack's option of the same id, then the packs' own options.

    Remembered per set of offered options (packs offer module-level ones, the
    ruleset's come first, from :func:`_described`), so the merged options are
    the same objects attack after attack.
    """
    own: dict[str, Option] = {o.id: o for o in options[: len(_DEFENSES)]}
    extra: list[Option] = []
    for option in options[len(_DEFENSES) :]:
        mine = own.get(option.id)
        if mine is None:
            extra.append(option)
        elif option is not mine and option.params:
            own[option.id] = Option(id=mine.id, label=mine.label, detail=mine.detail, params={**mine.params, **option.params})
    return [*own.values(), *extra]


@hookimpl(trylast=True)
def exalted2e_declare_defense(ctx) -> None:
    st = ctx.stash[ATTACK]
    d = st.defense or _defense_values(ctx, st)  # (worked out when the question was asked)
    answer = ctx.answer("defense")
    choice = answer.option if answer is not None else _default_defense(ctx, ())
    # A pack's option is the defense it said it is (its counts_as): the outcome names that defense.
    kind = st.counts_as.get(choice, choice)
    dodge, parry = _dvs(d, kind)
    ctx.dodge_dv, ctx.parry_dv = dodge, parry
    if kind == "dodge":
        dv, ctx.defense_ability = dodge, d.dodge_ability
    elif kind == "parry":
        dv, ctx.defense_ability = parry, d.parry_ability
    else:  # "nothing": the better of the two, both at their bases' 0
        dv = dodge if dodge > parry else parry
    ctx.dv = dv + ctx.dv_bonus
    ctx.outcome["defense"] = kind


# ---------------------------------------------------------------------------
# 3. Attack roll
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_attack_roll(ctx) -> None:
    st = ctx.stash[ATTACK]
    pool = ctx.attack_pool
    if st.me["extra"] and rules.automatic_defense(ctx.dv, pool, extra=True):
        ctx.note("automatic defense: DV {} is greater than the extra's {} dice", ctx.dv, pool)
        _miss(ctx, "automatic defense")
    dice = ctx.dice
    st.roll = roll = rules.roll_pool(dice, pool, label="attack")
    st.mark = len(dice.rolls)
    ctx.attack_successes = roll.successes + ctx.auto_successes


# ---------------------------------------------------------------------------
# 4. Attack reroll
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_attack_reroll_options(ctx) -> list[Option]:
    return []


@hookimpl(trylast=True)
def exalted2e_attack_reroll(ctx) -> None:
    st = ctx.stash[ATTACK]
    best = st.roll
    rerolls = ctx.dice.rolls[st.mark :]
    if rerolls:
        first = best
        st.roll = best = rules.keep_better([first, *rerolls])
        if ctx.tracing:
            ctx.note(rules.kept_note(first, best))
    successes = best.successes + ctx.auto_successes
    ctx.attack_successes = successes
    outcome = ctx.outcome
    outcome["successes"] = successes
    botch = outcome["botch"] = successes <= 0 and rules.is_botch(best.active, successes)
    if botch and ctx.declaration.get("bystanders"):
        st.stray = best.active.count(1)  # the GM rules on it next (seed 002, "Botched Attacks")
        return
    if successes <= 0:
        _miss(ctx, "botch" if botch else "miss")


def _botched(ctx) -> list[None]:
    return [None] if ctx.stash[ATTACK].stray else []


@hookimpl(trylast=True)
def exalted2e_bystander_options(ctx) -> list[Option]:
    n = ctx.stash[ATTACK].stray
    return [
        Option(id=b, label=f"{ctx.token(b).name} is struck instead, with {n} successes (the 1s rolled)")
        for b in ctx.declaration["bystanders"]
    ]


@hookimpl(trylast=True)
def exalted2e_stray_blow(ctx) -> None:
    st = ctx.stash[ATTACK]
    answer = ctx.answer("bystander")
    if answer is not None and answer.option != NO_BYSTANDER.id:
        _strike_bystander(ctx, st, answer.option, st.stray)
    _miss(ctx, "botch")


def _strike_bystander(ctx, st: _Attack, token_id: str, successes: int) -> None:
    """The botched blow lands on a bystander with ``successes`` successes: steps 7-8 and its damage."""
    victim = ctx.current(token_id)
    weapon, kind = st.weapon, st.damage_type
    raw = weapon["damage"] + (st.me["attributes"]["strength"] if weapon["strength"] else 0) + successes
    hardness, soak, minimum = _protection(victim, weapon, st.me)
    name = ctx.token(token_id).name
    levels = 0
    if rules.hardness_stops(raw, hardness):
        ctx.note("the botched blow strikes {}: Hardness {}{} absorbs {} raw damage", name, hardness, kind, raw)
    else:
        pool = rules.damage_dice(raw, soak, minimum=minimum)
        levels = rules.roll_pool(ctx.dice, pool, label=f"damage to {name}", damage=True).successes
        before = HealthTrack.from_json(victim["health"])
        after = rules.apply_damage(before, levels, kind)
        if levels:
            ctx.update(token_id, health=after.to_json())
            gained = rules.new_conditions(before, after)
            if gained:
                ctx.outcome["conditions"] = {token_id: gained}
        ctx.note("the botched blow strikes {}: raw {}, soak {}, {} levels of {}", name, raw, soak, levels, kind)
    ctx.outcome["bystander"] = {"token": token_id, "successes": successes, "raw_damage": raw, "damage": levels}


# ---------------------------------------------------------------------------
# 5. Subtract external penalties, apply special defenses
# ---------------------------------------------------------------------------


def _net(ctx) -> int:
    dv = ctx.dv
    return ctx.attack_successes - ctx.external_penalty - (dv if dv > 0 else 0)


@hookimpl(trylast=True)
def exalted2e_defense_stunt_options(ctx) -> list[Option]:
    # Stunts to aid defense come after the attack roll, and only matter while successes remain;
    # a magically undodgeable (unblockable) attack "cannot be dodged, even with the aid of a stunt".
    choice, decl = ctx.outcome.get("defense"), ctx.declaration
    if choice == "dodge":
        barred = decl.get("undodgeable")
    elif choice == "parry":
        barred = decl.get("unblockable")
    else:
        return []
    if barred or not ctx.stash[ATTACK].aware:
        return []
    return STUNTS if _net(ctx) > 0 else []


@hookimpl(trylast=True)
def exalted2e_apply_defense(ctx) -> None:
    stunt = rules.defensive_stunt(ctx.answer("defense_stunt"))
    if stunt:
        gain, ability = _circumvented(ctx.stash[ATTACK].defense, ctx.outcome["defense"])
        if gain:
            ctx.note("the stunt circumvents the inapplicable {}: DV +{}", ctx.outcome["defense"], gain)
            ctx.dv += gain
            if ability is not None:
                ctx.defense_ability = ability
        ctx.defense_dice += stunt
    n = ctx.defense_dice
    if n > 0:
        ctx.dv += rules.roll_pool(ctx.dice, n, label="defense dice").successes
    net = ctx.net_successes = _net(ctx)
    ctx.outcome["dv"] = ctx.dv
    if net <= 0:
        _miss(ctx, "miss")
    ctx.outcome["hit"] = True


# ---------------------------------------------------------------------------
# 6. Defense reroll
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_defense_reroll_options(ctx) -> list[Option]:
    return []


@hookimpl(trylast=True)
def exalted2e_defense_reroll(ctx) -> None:
    if ctx.answer("defense_reroll") is None:
        return
    net = ctx.net_successes = _net(ctx)
    ctx.outcome["dv"] = ctx.dv
    if net <= 0:
        _miss(ctx, "miss")


# ---------------------------------------------------------------------------
# 7. Calculate raw damage
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_damage_effect_options(ctx) -> list[Option]:
    return []


@hookimpl(trylast=True)
def exalted2e_raw_damage(ctx) -> None:
    st = ctx.stash[ATTACK]
    weapon = st.weapon
    base = weapon["damage"] + (st.me["attributes"]["strength"] if weapon["strength"] else 0)
    ctx.raw_damage = base + ctx.net_successes


# ---------------------------------------------------------------------------
# 8. Apply Hardness and soak, roll damage
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_damage(ctx) -> None:
    st = ctx.stash[ATTACK]
    raw = ctx.raw_damage
    outcome = ctx.outcome
    outcome["raw_damage"] = raw
    hardness, soak, minimum = _protection(st.foe, st.weapon, st.me)
    prior = ctx.hardness
    if hardness > prior:  # only the highest Hardness applies: a pack's, if higher
        ctx.hardness = hardness
    else:
        hardness = prior
    if rules.hardness_stops(raw, hardness):
        ctx.note("Hardness {}{} absorbs {} raw damage", hardness, st.damage_type, raw)
        _record_actions(ctx)
        ctx.end("hardness")
    ctx.soak = outcome["soak"] = soak = ctx.soak + soak
    post = ctx.declaration.get("post_soak", 0)
    if post:
        ctx.post_soak += post
    pool = rules.damage_dice(raw, soak, minimum=minimum, post_soak=ctx.post_soak)
    ctx.damage_pool = pool
    ctx.damage = outcome["damage"] = rules.roll_pool(ctx.dice, pool, label="damage", damage=True).successes


def _protection(foe, weapon, me) -> tuple[int, int, int]:
    """The defender's Hardness and soak against the weapon, and the attack's minimum damage."""
    kind = weapon["damage_type"]
    armor = foe["armor"]
    # Only the highest Hardness against a damage type applies (seed 002, step 8).
    hardness = max(foe["hardness"].get(kind, 0), armor["hardness"].get(kind, 0) if armor else 0)
    soak = rules.total_soak(
        foe["attributes"]["stamina"],
        kind,
        divine=foe["divine"],
        armor_bashing=armor["bashing"] if armor else 0,
        armor_lethal=armor["lethal"] if armor else 0,
        piercing=weapon["piercing"],
    )
    return hardness, soak, rules.minimum_damage(weapon["minimum"], me["essence"])


# ---------------------------------------------------------------------------
# 9. Counterattack
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_counterattack_options(ctx) -> list[Option]:
    return []


def _may_counter(ctx) -> bool:
    """No counterattack against a counterattack (seed 002, step 9), nor by a defender out of the
    fight: the counterattack decision is not asked then, whoever offers one (``Ask.when``)."""
    return not ctx.stash[ATTACK].counter and rules.out_of_the_fight(ctx.current(ctx.defender.id)["health"]) is None


@hookimpl(trylast=True)
def exalted2e_counterattack(ctx) -> None:
    # "Each attack the character makes reduces both DVs by one" from the moment
    # it is made: a counterattack meets the attacker's already reduced DV.
    _record_actions(ctx)
    answer = ctx.answer("counterattack")
    if answer is not None and answer.option == NO_COUNTER.id:
        ctx.note("{} does not counterattack", ctx.defender.name)


# ---------------------------------------------------------------------------
# 10. Apply results
# ---------------------------------------------------------------------------


@hookimpl(trylast=True)
def exalted2e_apply_results(ctx) -> None:
    _record_actions(ctx)  # (already recorded at step 9 unless a pack skipped it)
    levels = ctx.damage
    if levels > 0:
        _apply_levels(ctx, levels)
    _counter_conditions(ctx)


def _apply_levels(ctx, levels: int) -> None:
    defender = ctx.defender.id
    wounded = _wounded(ctx.current(defender)["health"], levels, ctx.stash[ATTACK].damage_type)
    ctx.update(defender, health=wounded.health)
    if wounded.gained:
        ctx.outcome["conditions"] = {defender: list(wounded.gained)}
    if ctx.tracing:
        ctx.note(f"{ctx.defender.name}: [{wounded.notation}], wound penalty {wounded.penalty}")


class _Wounded(NamedTuple):
    """A health track after damage: its JSON form, the conditions it newly shows, its card notation and wound penalty."""

    health: dict[str, Any]  # never changed: ctx.update stores a copy
    gained: tuple[str, ...]
    notation: str
    penalty: int


@per_snapshot
def _wounded(health, levels: int, kind: str) -> _Wounded:
    before = HealthTrack.from_json(health)
    after = rules.apply_damage(before, levels, kind)
    return _Wounded(after.to_json(), tuple(rules.new_conditions(before, after)), after.notation(), rules.wound_penalty(after))


def _counter_conditions(ctx) -> None:
    """The counterattack's effects land with this attack's (seed 002, step 10): its conditions join the outcome."""
    for child in ctx.outcome.get("children", ()):
        for token_id, gained in child.get("conditions", {}).items():
            mine = ctx.outcome["conditions"].setdefault(token_id, [])
            mine.extend(c for c in gained if c not in mine)


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
            prompt="Dodge, parry, or accept the attack?",
            who="defender",
            default=_default_defense,
            combine=_merge_defense_options,
        ),
    ),
    Step(name="attack_roll", title="3. Attack roll"),
    Step(
        name="attack_reroll",
        title="4. Attack reroll",
        ask=Ask(name="attack_reroll", prompt="Use a reroll effect?", who="attacker", decline=KEEP),
        each=_botched,
        steps=(
            Step(
                name="stray_blow",
                title="4. Botch: a bystander in the path",
                ask=Ask(
                    name="bystander",
                    prompt="The attack botched: does it strike a bystander instead?",
                    who="gm",
                    decline=NO_BYSTANDER,
                ),
            ),
        ),
    ),
    Step(
        name="apply_defense",
        title="5. External penalties and special defenses",
        ask=Ask(name="defense_stunt", prompt="Successes remain: describe your defense for a stunt?", who="defender", decline=NO_STUNT),
    ),
    Step(
        name="defense_reroll",
        title="6. Defense reroll",
        ask=Ask(name="defense_reroll", prompt="Your DV did not stop the attack: use a reroll effect?", who="defender", decline=KEEP),
    ),
    Step(
        name="raw_damage",
        title="7. Raw damage",
        ask=Ask(name="damage_effect", prompt="Use an effect on the attack's raw damage?", who="attacker", decline=NO_EFFECT),
    ),
    Step(name="damage", title="8. Hardness, soak and damage roll"),
    Step(
        name="counterattack",
        title="9. Counterattack",
        ask=Ask(name="counterattack", prompt="Counterattack?", who="defender", decline=NO_COUNTER, when=_may_counter),
    ),
    Step(name="apply_results", title="10. Apply results"),
)

NUMBERS = (
    "attack_pool",
    "auto_successes",
    "attack_successes",
    "external_penalty",
    "dodge_dv",
    "parry_dv",
    "dv_bonus",
    "dv",
    "defense_dice",
    "defense_ability",
    "net_successes",
    "raw_damage",
    "hardness",
    "soak",
    "post_soak",
    "damage_pool",
    "damage",
)


def sample_tokens() -> list[dict[str, Any]]:
    """Ready tokens from seed 002's examples: Anoria, a mortal soldier, an Immaculate monk, a brigand, a sorcerer."""
    fist = {"name": "fist", "ability": "martial_arts", "accuracy": 1, "damage": 0, "damage_type": "B", "defense": 2, "unarmed": True}
    kick = {"name": "kick", "ability": "martial_arts", "accuracy": 0, "damage": 3, "damage_type": "B", "defense": -2, "unarmed": True, "hands": 0}
    return [
        {
            "id": "anoria",
            "name": "Anoria",
            "ruleset": "exalted2e",
            "ownership": {"alice": 3},
            "system": {
                # "Anoria, the glorious Solar martial artist with Dexterity 4, Dodge 4 and Essence 5"
                "attributes": {"strength": 3, "dexterity": 4, "stamina": 3, "wits": 3},
                "abilities": {"martial_arts": 5, "melee": 3, "dodge": 4, "athletics": 2},
                "essence": 5,
                "divine": True,
                "motes": 40,
                "weapons": [
                    fist,
                    kick,
                    {"name": "daiklave", "ability": "melee", "accuracy": 3, "damage": 5, "damage_type": "L", "defense": 2, "minimum": 1},
                ],
            },
        },
        {
            "id": "soldier",
            "name": "Mortal soldier",
            "ruleset": "exalted2e",
            "system": {
                # "a mortal soldier with Dexterity 2, Dodge 3 and Essence 1"
                "attributes": {"strength": 2, "dexterity": 2, "stamina": 2},
                "abilities": {"melee": 2, "dodge": 3, "archery": 1},
                "essence": 1,
                "weapons": [
                    {"name": "spear", "ability": "melee", "accuracy": 1, "damage": 3, "damage_type": "L", "defense": 1, "reach": True},
                    {"name": "short bow", "ability": "archery", "accuracy": 1, "damage": 2, "damage_type": "L", "range": 150},
                ],
                "armor": {"name": "chain shirt", "bashing": 4, "lethal": 2, "mobility": 0},  # 4B/2L
                "shield": "target",
            },
        },
        {
            "id": "monk",
            "name": "Immaculate monk",
            "ruleset": "exalted2e",
            "ownership": {"bob": 3},
            "system": {
                # "an Immaculate monk with Dexterity 3 and Martial Arts 4 ... his fist has Defense +2"
                "attributes": {"strength": 3, "dexterity": 3, "stamina": 3},
                "abilities": {"martial_arts": 4, "dodge": 2},
                "essence": 2,
                "divine": True,
                "motes": 15,
                "weapons": [
                    fist,
                    {"name": "seven-section staff", "ability": "martial_arts", "accuracy": 1, "damage": 7, "damage_type": "B", "defense": 3, "reach": True},
                ],
            },
        },
        {
            "id": "brigand",
            "name": "Brigand",
            "ruleset": "exalted2e",
            "system": {
                "attributes": {"strength": 2, "dexterity": 2, "stamina": 2},
                "abilities": {"melee": 2, "dodge": 1},
                "extra": True,
                "weapons": [{"name": "club", "ability": "melee", "accuracy": 1, "damage": 3, "damage_type": "B", "defense": 0}],
            },
        },
        {
            "id": "sorcerer",
            "name": "Sorcerer",
            "ruleset": "exalted2e",
            "system": {
                "attributes": {"strength": 1, "dexterity": 2, "stamina": 2},
                "abilities": {"dodge": 2, "occult": 5},
                "essence": 3,
                "divine": True,
                "motes": 20,
                "hardness": {"L": 6, "B": 12},  # Invulnerable Skin of Bronze: Hardness 6L/12B
            },
        },
    ]


RULESET = Ruleset(
    id="exalted2e",
    title="Exalted 2nd edition — individual combat",
    description="The ten Order of Attack Events: Dodge/Parry DV, rerolls, Hardness and soak, counterattacks.",
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

