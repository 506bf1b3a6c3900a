"""The Excellency pack's hook implementations (see the package docstring for how to use it).

Everything here goes through the public API and the ``exalted2e`` working
numbers documented in its hookspecs; per-attack state lives under
:data:`STATE` in ``ctx.stash``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from marshmallow import fields, validate

from vtt_bridge import Declarable, InvalidRequest, Option, Param, StashKey, StrictSchema, hookimpl

__all__ = ["COUNTER", "FIRST", "SECOND", "THIRD", "STATE", "Flags"]

PLUGIN = "excellencies"  # the entry point's name: the key of this pack's token flags

FIRST = "first-excellency"
SECOND = "second-excellency"
THIRD = "third-excellency"
COUNTER = "solar-counterattack"

NAMES = {
    FIRST: "Essence Overwhelming (First Excellency)",
    SECOND: "Essence Triumphant (Second Excellency)",
    THIRD: "Essence Resurgent (Third Excellency)",
    COUNTER: "Solar Counterattack",
}
DESCRIPTIONS = {
    FIRST: "1 mote per die added to the attack roll (step 3)",
    SECOND: "2 motes per automatic success on the attack roll (step 3)",
    THIRD: "4 motes: reroll the attack or a failed DV (offered at steps 4 and 6)",
    COUNTER: "3 motes: strike back at a close-combat attacker (offered at step 9)",
}
THIRD_COST = 4
COUNTER_COST = 3
_CLOSE = ("melee", "martial_arts")


class _Uses:
    """What this attack has bought: Excellencies on the roll and on the DV, motes spent."""

    __slots__ = ("attack", "defense", "spent")

    def __init__(self) -> None:
        self.attack: set[str] = set()
        self.defense: set[str] = set()
        self.spent: dict[str, int] = {}


STATE: StashKey[_Uses] = StashKey("excellencies")
_ATTACK_BUY: StashKey[tuple[int, int]] = StashKey("excellencies.attack")


def _uses(ctx) -> _Uses:
    uses = ctx.stash.get(STATE)
    if uses is None:
        uses = ctx.stash[STATE] = _Uses()
    return uses


def _spend(ctx, token, charm: str, cost: int) -> None:
    """Spend ``cost`` motes from ``token`` or refuse, naming the Charm."""
    have = ctx.current(token.id).get("motes", 0)
    if cost > have:
        raise InvalidRequest(
            f"{token.name} has {have} motes; {NAMES[charm]} needs {cost}",
            details={"charm": charm, "token": token.id, "motes": have, "cost": cost},
        )
    ctx.update(token.id, motes=have - cost)
    uses = _uses(ctx)
    uses.spent[token.id] = uses.spent.get(token.id, 0) + cost
    ctx.outcome["motes"] = dict(uses.spent)
    ctx.note("{} spends {} motes on {}", token.name, cost, NAMES[charm])


def _count(value: Any, charm: str, what: str) -> int:
    if type(value) is not int or value < 0:
        raise InvalidRequest(
            f"{NAMES[charm]}: {what} must be a whole number of at least 0",
            details={"charm": charm, what: ["Must be an integer of at least 0."]},
        )
    return value


def _buy(ctx, token, charm_params: Mapping[str, int], cap: int, where: str) -> tuple[int, int]:
    """Check and pay for First (dice) and Second (successes or DV) Excellencies on one roll or DV.

    The First costs 1 mote per die, the Second 2 per success; together they
    may not add more than Attribute + Ability dice, a success counting as two
    ([decision]: one dice cap for the pair).
    """
    dice = charm_params.get(FIRST, 0)
    points = charm_params.get(SECOND, 0)
    if dice + 2 * points > cap:
        charm = SECOND if points else FIRST
        raise InvalidRequest(
            f"{NAMES[charm]}: {dice} dice and {points} successes exceed the cap of {cap} "
            f"(Attribute + Ability) on {where}",
            details={"charm": charm, "cap": cap, "dice": dice, "successes": points},
        )
    if dice:
        _spend(ctx, token, FIRST, dice)
    if points:
        _spend(ctx, token, SECOND, 2 * points)
    return dice, points


def _no_resurgent_here(charm_ids, where: str, how: str) -> None:
    """Essence Resurgent is a reroll effect: never declared, never combined (seed 002, steps 4 and 6)."""
    if THIRD not in charm_ids:
        return
    others = [c for c in (FIRST, SECOND) if c in charm_ids]
    if others:
        raise InvalidRequest(
            f"{NAMES[THIRD]} cannot be combined with {NAMES[others[0]]} on the same {where}",
            details={"charm": THIRD, "combined_with": others},
        )
    raise InvalidRequest(
        f"{NAMES[THIRD]} is a reroll effect: choose it at the {how} decision instead",
        details={"charm": THIRD, "decision": how},
    )


# ---------------------------------------------------------------------------
# What may be declared, what a token knows
# ---------------------------------------------------------------------------

DECLARABLES = [
    Declarable(
        id=FIRST,
        label=NAMES[FIRST],
        plugin=PLUGIN,
        description=DESCRIPTIONS[FIRST],
        params={"dice": Param("integer", label="Dice", minimum=0, maximum=20, default=0)},
    ),
    Declarable(
        id=SECOND,
        label=NAMES[SECOND],
        plugin=PLUGIN,
        description=DESCRIPTIONS[SECOND],
        params={"successes": Param("integer", label="Successes", minimum=0, maximum=10, default=0)},
    ),
    # Chosen at a decision, never declared: listed so players know they exist.
    Declarable(id=THIRD, label=NAMES[THIRD], plugin=PLUGIN, kind="option", description=DESCRIPTIONS[THIRD]),
    Declarable(id=COUNTER, label=NAMES[COUNTER], plugin=PLUGIN, kind="option", description=DESCRIPTIONS[COUNTER]),
]


class Flags(StrictSchema):
    """What the pack keeps on an exalted2e token (``flags.excellencies``).

    ``charms``: the Excellencies the character knows. Without it a token knows
    them all; with it, the others are neither offered nor accepted.
    """

    charms = fields.List(fields.String(validate=validate.OneOf([FIRST, SECOND, THIRD, COUNTER])), validate=validate.Length(max=4))


@hookimpl
def vtt_bridge_declarables(ruleset):
    return DECLARABLES if ruleset == "exalted2e" else None


@hookimpl
def vtt_bridge_token_flags(ruleset):
    return Flags if ruleset == "exalted2e" else None


def knows(token, charm: str) -> bool:
    """Does the character know ``charm`` (``flags.excellencies.charms``; no list: every Excellency)?"""
    mine = token.flags.get(PLUGIN)
    known = mine.get("charms") if mine is not None else None
    return known is None or charm in known


def _must_know(token, charm: str) -> None:
    if not knows(token, charm):
        raise InvalidRequest(
            f"{token.name} does not know {NAMES[charm]}",
            details={"charm": charm, "token": token.id, "declaration": {"charms": [f"{token.name} does not know {charm!r}."]}},
        )


# ---------------------------------------------------------------------------
# Attacking: step 1 declares and pays, step 3 adds, step 4 rerolls
# ---------------------------------------------------------------------------


@hookimpl
def exalted2e_declare_attack(ctx) -> None:
    charms = ctx.declaration.get("charms")
    if not charms:
        return
    ids = {c["id"] for c in charms}
    _no_resurgent_here(ids, "attack roll", "attack_reroll")
    bought = {}
    for charm in (FIRST, SECOND):
        use = ctx.declared(charm)
        if use is not None:
            _must_know(ctx.attacker, charm)
            bought[charm] = _count(use.get("dice" if charm == FIRST else "successes", 0), charm, "dice" if charm == FIRST else "successes")
    if not bought:
        return
    me = ctx.attacker.system
    cap = me["attributes"]["dexterity"] + me["abilities"][ctx.outcome["ability"]]
    dice, points = _buy(ctx, ctx.attacker, bought, cap, "the attack roll")
    # Any Excellency declared on the roll bars Essence Resurgent from it.
    _uses(ctx).attack.update(bought)
    ctx.stash[_ATTACK_BUY] = (dice, points)


@hookimpl
def exalted2e_attack_roll(ctx) -> None:
    bought = ctx.stash.get(_ATTACK_BUY)
    if bought is None:
        return
    dice, points = bought
    if dice:
        ctx.attack_pool += dice
    if points:
        ctx.auto_successes += points


_REROLL_ATTACK = [Option(id=THIRD, label=f"{NAMES[THIRD]}: {THIRD_COST} motes, reroll the attack and keep the better")]


@hookimpl
def exalted2e_attack_reroll_options(ctx) -> list[Option]:
    uses = ctx.stash.get(STATE)
    if uses is not None and uses.attack:
        return []  # another Excellency already augments this roll (seed 002, step 4)
    if ctx.current(ctx.attacker.id).get("motes", 0) < THIRD_COST or not knows(ctx.attacker, THIRD):
        return []
    roll = ctx.dice.last("attack")
    if roll is None or not ctx.tracing:
        return _REROLL_ATTACK  # (the odds' own runs: nobody reads the detail)
    return [_reroll_attack(ctx.attack_pool, roll.successes)]


@lru_cache(maxsize=1024)
def _reroll_attack(pool: int, have: int) -> Option:
    """The reroll option saying its exact chance of a better roll (the same object for the same numbers)."""
    chance = more_successes(pool, have)
    return Option(id=THIRD, label=_REROLL_ATTACK[0].label, detail=f"{_percent(chance)} chance of more successes")


def more_successes(pool: int, have: int) -> float:
    """The chance that ``pool`` d10 show more than ``have`` successes (7+ one, a 10 two; seed 002).

    A reroll that ties keeps the first roll, so a tie does not count.
    """
    beyond = _beyond(max(0, pool))
    return beyond[have] if 0 <= have < len(beyond) else (1.0 if have < 0 else 0.0)


@lru_cache(maxsize=64)
def _beyond(pool: int) -> tuple[float, ...]:
    """For each count of successes ``s`` a pool can show, the chance of more than ``s``.

    Exact: the successes of the pool, die by die (0: 6 in 10, 1: 3 in 10, 2: 1 in 10),
    worked out once per pool size (a roll's successes vary far more than its pool).
    """
    dist = [1.0]
    for _ in range(pool):
        nxt = [0.0] * (len(dist) + 2)
        for s, p in enumerate(dist):
            nxt[s] += 0.6 * p
            nxt[s + 1] += 0.3 * p
            nxt[s + 2] += 0.1 * p
        dist = nxt
    tails = []
    for s in range(len(dist)):
        tails.append(sum(dist[s + 1 :]))
    return tuple(tails)


def _percent(p: float) -> str:
    if 0 < p < 0.01:
        return "under 1%"
    if 0.99 < p < 1:
        return "over 99%"
    return f"{p:.0%}"


@hookimpl
def exalted2e_attack_reroll(ctx) -> None:
    answer = ctx.answer("attack_reroll")
    if answer is None or answer.option != THIRD:
        return
    _spend(ctx, ctx.attacker, THIRD, THIRD_COST)
    _uses(ctx).attack.add(THIRD)
    # A complete reroll: every die once more, every bonus and penalty applies again.
    ctx.dice.roll(ctx.attack_pool, 10, label="attack reroll (Essence Resurgent)", target=7, double=10)


# ---------------------------------------------------------------------------
# Defending: offered with the defense decision, paid at step 2, Resurgent at step 6
# ---------------------------------------------------------------------------

# Attribute + Ability caps the purchase; neither is ever above 10, so 20 dice (10
# successes) bound any one; the token's own cap is checked when paying.
_DEFENSE_PARAMS = {
    "first_excellency": Param(
        "integer",
        label="Essence Overwhelming dice",
        minimum=0,
        maximum=20,
        default=0,
        description="dice rolled at step 5, successes add to DV (1 mote each)",
    ),
    "second_excellency": Param(
        "integer",
        label="Essence Triumphant DV",
        minimum=0,
        maximum=10,
        default=0,
        description="points of DV (2 motes each)",
    ),
}


# Same ids as the ruleset's options: the ruleset merges these params into its own.
_DEFENSE_OPTIONS = [
    Option(id="dodge", label="Dodge", params=_DEFENSE_PARAMS),
    Option(id="parry", label="Parry", params=_DEFENSE_PARAMS),
]
_PARAM_OF = {FIRST: "first_excellency", SECOND: "second_excellency"}


@hookimpl
def exalted2e_defense_options(ctx) -> list[Option]:
    defender = ctx.defender
    if ctx.current(defender.id).get("motes", 0) < 1:
        return []
    if knows(defender, FIRST) and knows(defender, SECOND):
        return _DEFENSE_OPTIONS
    params = {name: _DEFENSE_PARAMS[name] for charm, name in _PARAM_OF.items() if knows(defender, charm)}
    if not params:
        return []
    return [Option(id="dodge", label="Dodge", params=params), Option(id="parry", label="Parry", params=params)]


@hookimpl(wrapper=True)
def exalted2e_declare_defense(ctx):
    # After the ruleset: the chosen defense and its Ability are known, so the cap is.
    result = yield
    answer = ctx.answer("defense")
    params = answer.params if answer is not None else None
    if not params:
        return result
    _no_resurgent_here({k.replace("_", "-") for k in params}, "DV", "defense_reroll")
    bought = {}
    if "first_excellency" in params:
        bought[FIRST] = _count(params["first_excellency"], FIRST, "first_excellency")
    if "second_excellency" in params:
        bought[SECOND] = _count(params["second_excellency"], SECOND, "second_excellency")
    if not any(bought.values()):
        return result
    if ctx.outcome.get("defense") not in ("dodge", "parry"):
        raise InvalidRequest(
            "the Excellencies aid a dodge or a parry, not doing nothing",
            details={"charm": FIRST if bought.get(FIRST) else SECOND, "defense": ctx.outcome.get("defense")},
        )
    foe = ctx.defender.system
    cap = foe["attributes"]["dexterity"] + ctx.defense_ability
    dice, points = _buy(ctx, ctx.defender, bought, cap, "the DV")
    uses = _uses(ctx)
    uses.defense.update(c for c, n in bought.items() if n)
    if dice:
        ctx.defense_dice += dice  # rolled at step 5 with the stunt dice (seed 002, step 5)
    if points:
        ctx.dv += points  # Essence Triumphant adds directly as points of DV
    return result


@hookimpl
def exalted2e_defense_reroll_options(ctx) -> list[Option]:
    uses = ctx.stash.get(STATE)
    if uses is not None and uses.defense:
        return []  # another Excellency already enhances this DV (seed 002, step 6)
    if ctx.outcome.get("defense") not in ("dodge", "parry"):
        return []
    if ctx.current(ctx.defender.id).get("motes", 0) < THIRD_COST or not knows(ctx.defender, THIRD):
        return []
    bonus = ctx.defense_ability // 2
    if bonus < 1:
        return []
    return [Option(id=THIRD, label=f"{NAMES[THIRD]}: {THIRD_COST} motes, +{bonus} DV", detail=f"DV {ctx.dv} → {ctx.dv + bonus}")]


@hookimpl
def exalted2e_defense_reroll(ctx) -> None:
    answer = ctx.answer("defense_reroll")
    if answer is None or answer.option != THIRD:
        return
    _spend(ctx, ctx.defender, THIRD, THIRD_COST)
    _uses(ctx).defense.add(THIRD)
    # For Solars it adds half the Ability in the DV's pool, rounded down (seed 002, step 6).
    ctx.dv += ctx.defense_ability // 2


# ---------------------------------------------------------------------------
# Counterattacking: Solar Counterattack
# ---------------------------------------------------------------------------


def _counter_weapon(system, name: str | None):
    for w in system["weapons"]:
        if w["ability"] in _CLOSE and (name is None or w["name"] == name):
            return w
    return None


@hookimpl
def exalted2e_counterattack_options(ctx) -> list[Option]:
    if ctx.outcome.get("ability") not in _CLOSE:
        return []  # it answers close-combat attacks only
    system = ctx.current(ctx.defender.id)
    if system.get("motes", 0) < COUNTER_COST or not knows(ctx.defender, COUNTER):
        return []
    if system["weapons"] and _counter_weapon(system, None) is None:
        return []
    names = [w["name"] for w in system["weapons"] if w["ability"] in _CLOSE]
    return [
        Option(
            id=COUNTER,
            label=f"{NAMES[COUNTER]}: {COUNTER_COST} motes, strike back",
            params={
                "weapon": Param(
                    "string",
                    label="Weapon",
                    choices=names or None,
                    description="close-combat weapon to strike with (default: the first)",
                )
            },
        )
    ]


@hookimpl
def exalted2e_counterattack(ctx) -> None:
    answer = ctx.answer("counterattack")
    if answer is None or answer.option != COUNTER:
        return
    defender = ctx.defender
    name = answer.params.get("weapon")
    if name is not None and defender.system["weapons"] and _counter_weapon(defender.system, name) is None:
        raise InvalidRequest(
            f"{defender.name} has no close-combat weapon {name!r}",
            details={"charm": COUNTER, "weapon": [f"Not a melee or martial arts weapon of {defender.id}."]},
        )
    _spend(ctx, defender, COUNTER, COUNTER_COST)
    weapon = name if name is not None else (w["name"] if (w := _counter_weapon(defender.system, None)) else None)
    ctx.nest(
        kind="counterattack",
        attacker=defender.id,
        targets=[ctx.attacker.id],
        declaration={"weapon": weapon, "charms": []},
    )
