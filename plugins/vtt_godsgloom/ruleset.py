"""GODSGLOOM: the Attack Test procedure (ATC), with the RDP and the CEP (seed 004).

Read it like the rulebook page: ATC.10 Roll, ATC.20 Reroll (the Reroll Dice
Procedure, one sub-step per player and kind of reroll), ATC.30 Criticals (the
Critical Effects Procedure), ATC.40 Auto-Successes, ATC.50 Cancel, ATC.60 Inflict.
The attacker is the active player, the defender the inactive one.

Scripted dice are drawn in this order: ATC.10 attacker 🟥, attacker 🟦, defender
🟥 (melee only), defender 🟦; then each reroll as it is chosen; then ATC.30 extra
dice: attacker 🟥, attacker 🟦, defender 🟥, defender 🟦.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import Any

from vtt_bridge import AttackContext, Ask, InvalidRequest, Option, Roll, Ruleset, StashKey, Step, hookimpl

from . import hookspecs
from .rules import (
    COLOURS,
    SUCCESS,
    adjusted_pool,
    cancel,
    critical_effects,
    parse_reroll,
    status_check,
)
from .schemas import Declaration, Unit

__all__ = ["RULESET", "sample_tokens"]

SIDES = ("attacker", "defender")
ICON = {"attack": "🟥", "defence": "🟦"}
DONE = Option(id="decline", label="Done: no more rerolls")

# Each side's working numbers (see NUMBERS), by what they count.
DICE = {(side, colour): f"{side}_{colour}_dice" for side in SIDES for colour in COLOURS}
REROLLS = {(side, kind): f"{side}_{kind}_rerolls" for side in SIDES for kind in ("pool", "single")}
HITS = {side: f"{side}_hits" for side in SIDES}
BLOCKS = {side: f"{side}_blocks" for side in SIDES}
#: What spending (boost held, weak held) sets on the unit's token.
_SPENT = {(boost, weak): {"boost": 0} if not weak else {"boost": 0, "weak": 0} if boost else {"weak": 0}
          for boost in (False, True) for weak in (False, True)}
#: The label of each side's roll of each colour at ATC.10.
LABEL = {(side, colour): f"{side} {ICON[colour]}" for side in SIDES for colour in COLOURS}


class _Pool:
    """One rolled pool of one side: the die standing at each position, and extra dice.

    ATC.10's roll stays on the card as it was judged there. A reroll is a roll of
    its own under the RDP step that chose it (:func:`_reroll`); ``faces[p]`` is
    the newest result at position ``p``. Extra dice from Critical Effects are a
    roll of their own under ATC.30: they count, but can't be rerolled.
    """

    __slots__ = ("roll", "faces", "extra")

    def __init__(self, roll: Roll) -> None:
        self.roll = roll
        self.faces = list(roll.faces)
        self.extra: list[int] = []

    def standing(self) -> list[int]:
        return list(self.faces)

    @property
    def successes(self) -> int:
        hits = 0
        for face in self.faces:
            if face >= SUCCESS:
                hits += 1
        for face in self.extra:
            if face >= SUCCESS:
                hits += 1
        return hits


def _reroll(ctx: AttackContext, pool: _Pool, label: str, slots: list[int]) -> None:
    """Reroll the dice at ``slots`` as a roll of the current step.

    The roll shows the results it replaces as ``rerolled`` and the new results
    after them (Foundry's own way of writing a reroll), so the card reads the
    reroll under the step that made it and the earlier roll stays as judged.
    """
    roll = Roll(label, 6, [pool.faces[s] for s in slots], target=SUCCESS, step=ctx.dice.step)
    ctx.dice.rolls.append(roll)
    for i, slot in enumerate(slots):
        pool.faces[slot] = roll.faces[ctx.dice.reroll(roll, i)]


#: The dice of this test, by (side, colour).
POOLS: StashKey[dict[tuple[str, str], _Pool]] = StashKey("godsgloom.pools")


def _melee(ctx: AttackContext) -> bool:
    return ctx.declaration["attack"] == "melee"


def _tally(ctx: AttackContext) -> None:
    """Count each side's ⚔️ Hits and 🛡️ Blocks from the dice as they stand."""
    get = ctx.stash[POOLS].get
    pool = get(("attacker", "attack"))
    ctx.attacker_hits = pool.successes if pool is not None else 0
    pool = get(("attacker", "defence"))
    ctx.attacker_blocks = pool.successes if pool is not None else 0
    pool = get(("defender", "attack"))
    ctx.defender_hits = pool.successes if pool is not None else 0
    pool = get(("defender", "defence"))
    ctx.defender_blocks = pool.successes if pool is not None else 0


def _rerolls(unit: Any) -> tuple[int, int]:
    """The (Pool, Single-Die) rerolls a unit holds for a test."""
    rerolls = unit.get("rerolls") or {}
    return rerolls.get("pool", 0), rerolls.get("single", 0)


def setup(ctx: AttackContext) -> None:
    """Base pools from the statline and Guard, and the rerolls each unit holds for a test."""
    attacker, defender = ctx.current(ctx.attacker.id), ctx.current(ctx.defender.id)
    ctx.attacker_attack_dice = attacker["statline"]["attack"]
    ctx.attacker_defence_dice = attacker["statline"]["defence"]
    ctx.defender_attack_dice = defender["guard"]["attack"] if _melee(ctx) else 0
    ctx.defender_defence_dice = defender["guard"]["defence"]
    ctx.attacker_pool_rerolls, ctx.attacker_single_rerolls = _rerolls(attacker)
    ctx.defender_pool_rerolls, ctx.defender_single_rerolls = _rerolls(defender)
    ctx.stash[POOLS] = {}
    outcome = ctx.outcome  # one store per field: made on every test, and cheaper than an update call
    outcome["hit"] = False
    outcome["damage"] = 0
    outcome["conditions"] = {}
    outcome["attack"] = ctx.declaration["attack"]
    outcome["attacker_wounds"] = 0


# -- ATC.10 Roll -------------------------------------------------------------------


@hookimpl(trylast=True)
def godsgloom_roll(ctx: AttackContext) -> None:
    pools = ctx.stash[POOLS]
    declaration = ctx.declaration
    melee = declaration["attack"] == "melee"
    for side, token_id in (("attacker", ctx.attacker.id), ("defender", ctx.defender.id)):
        unit = ctx.current(token_id)
        boost, weak = unit.get("boost", 0), unit.get("weak", 0)
        modifiers = declaration["modifiers" if side == "attacker" else "defender_modifiers"]
        # The defender rolls only Guard's 🟦 against a ranged attack.
        colours = COLOURS if side == "attacker" or melee else ("defence",)
        sizes = []
        for colour in colours:
            name = DICE[side, colour]
            dice = adjusted_pool(getattr(ctx, name), modifier=modifiers[colour], boost=boost, weak=weak)
            setattr(ctx, name, dice)
            sizes.append((colour, dice))
        # Boost and Weak are spent on this test even when only 🟦 is rolled (ranged Guard).
        if boost or weak:
            ctx.update(token_id, **_SPENT[bool(boost), bool(weak)])
            if ctx.tracing:
                signs = "".join(f" {ICON[c]}" for c in colours)
                if boost:
                    ctx.note(f"{side} spends {boost} 🟡 Boost: +{boost} on{signs}")
                if weak:
                    ctx.note(f"{side} discards {weak} 🟣 Weak: −{weak} on{signs}")
        for colour, dice in sizes:
            if dice > 0:
                roll = ctx.dice.roll(dice, 6, label=LABEL[side, colour], target=SUCCESS)
                pools[(side, colour)] = _Pool(roll)
    _tally(ctx)


# -- ATC.20 Reroll (RDP) --------------------------------------------------------------


@hookimpl(trylast=True)
def godsgloom_reroll(ctx: AttackContext) -> None:
    if not ctx.tracing:
        return  # a note only
    for side in SIDES:
        pool, single = getattr(ctx, REROLLS[side, "pool"]), getattr(ctx, REROLLS[side, "single"])
        if pool or single:
            ctx.note("{} holds {} Pool Reroll(s) and {} Single-Die Reroll(s) for this test", side, pool, single)


def _pool_options(ctx: AttackContext, side: str) -> list[Option]:
    if getattr(ctx, REROLLS[side, "pool"]) <= 0:
        return []
    pools = ctx.stash[POOLS]
    rolled = []
    for colour in COLOURS:
        pool = pools.get((side, colour))
        if pool is not None:
            rolled.append((colour, tuple(pool.faces)))
    if not rolled:
        return []
    return [_pool_option(tuple(rolled))]


# The options are frozen, so the same dice showing the same faces get the same
# option objects, made once (the same question then reads as the same question).


@lru_cache(maxsize=4096)
def _pool_option(rolled: tuple[tuple[str, tuple[int, ...]], ...]) -> Option:
    shown = ", ".join(f"{ICON[colour]} {list(faces)}" for colour, faces in rolled)
    # What it gives: the chance the rerolled dice show more successes (3+) than now.
    dice = sum(len(faces) for _, faces in rolled)
    now = sum(1 for _, faces in rolled for face in faces if face >= SUCCESS)
    p = Fraction(7 - SUCCESS, 6)  # d6: faces SUCCESS..6
    better = sum(comb(dice, k) * p**k * (1 - p) ** (dice - k) for k in range(now + 1, dice + 1))
    return Option(
        id="pool",
        label=f"Pool Reroll: reroll every die, both colours, successes too ({shown})",
        detail=f"{round(100 * better)}% to beat {now} {'success' if now == 1 else 'successes'}",
    )


def _single_options(ctx: AttackContext, side: str) -> list[Option]:
    if getattr(ctx, REROLLS[side, "single"]) <= 0:
        return []
    pools = ctx.stash[POOLS]
    options: list[Option] = []
    for colour in COLOURS:
        pool = pools.get((side, colour))
        if pool is not None:
            options += _die_options(colour, tuple(pool.faces))
    return options


@lru_cache(maxsize=4096)
def _die_options(colour: str, faces: tuple[int, ...]) -> tuple[Option, ...]:
    """One option per die of a pool showing ``faces``."""
    return tuple(_die_option(colour, position, face) for position, face in enumerate(faces, start=1))


@lru_cache(maxsize=1024)
def _die_option(colour: str, position: int, face: int) -> Option:
    mark = " ✓" if face >= SUCCESS else ""
    # A 3+ succeeds: 4 faces in 6 turn a miss into a success, 2 in 6 lose one.
    keeps = Fraction(7 - SUCCESS, 6)
    detail = f"{round(100 * (1 - keeps))}% to lose this success" if face >= SUCCESS else f"{round(100 * keeps)}% to make it a success"
    return Option(id=f"die:{colour}:{position}", label=f"Reroll {ICON[colour]} die {position} (shows {face}{mark})", detail=detail)


def _spend(ctx: AttackContext, side: str, kind: str) -> None:
    name = REROLLS[side, kind]
    left = getattr(ctx, name)
    if left <= 0:
        raise InvalidRequest(f"the {side} has no {kind} reroll left", details={"reroll": [f"No {kind} reroll left."]})
    setattr(ctx, name, left - 1)


def _pool_reroll(ctx: AttackContext, side: str, decision: str) -> None:
    answer = ctx.answer(decision)
    choice = parse_reroll(answer.option) if answer is not None else None
    if choice is None or choice.kind != "pool":
        return  # "decline", not asked, or a pack's own option
    pools = ctx.stash[POOLS]
    rolled = [(colour, pools[(side, colour)]) for colour in COLOURS if (side, colour) in pools]
    if not rolled:
        raise InvalidRequest(f"the {side} rolled no dice to reroll", details={"reroll": [answer.option]})
    _spend(ctx, side, "pool")
    # RDP.10: every die of the pool, both colours, successes too; new results replace old.
    for colour, pool in rolled:
        before = pool.standing()
        _reroll(ctx, pool, f"{side} {ICON[colour]} Pool Reroll", list(range(len(pool.faces))))
        if ctx.tracing:
            ctx.note(f"{side} Pool Reroll on {ICON[colour]}: {before} → {pool.standing()}")
    _tally(ctx)


def _single_reroll(ctx: AttackContext, side: str, decision: str) -> None:
    answer = ctx.answer(decision)
    choice = parse_reroll(answer.option) if answer is not None else None
    if choice is None or choice.kind != "die":
        return
    pool = ctx.stash[POOLS].get((side, choice.colour))
    if pool is None or choice.position > len(pool.faces):
        raise InvalidRequest(f"the {side} has no such die to reroll", details={"reroll": [answer.option]})
    _spend(ctx, side, "single")
    slot = choice.position - 1
    before = pool.faces[slot]
    _reroll(ctx, pool, f"{side} {ICON[choice.colour]} die {choice.position} reroll", [slot])
    after = pool.faces[slot]
    ctx.note("{} rerolls {} die {}: {} → {}", side, ICON[choice.colour], choice.position, before, after)
    _tally(ctx)


@hookimpl(trylast=True)
def godsgloom_active_pool_reroll_options(ctx: AttackContext) -> list[Option]:
    return _pool_options(ctx, "attacker")


@hookimpl(trylast=True)
def godsgloom_active_pool_reroll(ctx: AttackContext) -> None:
    _pool_reroll(ctx, "attacker", "active_pool_reroll")


@hookimpl(trylast=True)
def godsgloom_active_single_reroll_options(ctx: AttackContext) -> list[Option]:
    return _single_options(ctx, "attacker")


@hookimpl(trylast=True)
def godsgloom_active_single_reroll(ctx: AttackContext) -> None:
    _single_reroll(ctx, "attacker", "active_single_reroll")


@hookimpl(trylast=True)
def godsgloom_inactive_pool_reroll_options(ctx: AttackContext) -> list[Option]:
    return _pool_options(ctx, "defender")


@hookimpl(trylast=True)
def godsgloom_inactive_pool_reroll(ctx: AttackContext) -> None:
    _pool_reroll(ctx, "defender", "inactive_pool_reroll")


@hookimpl(trylast=True)
def godsgloom_inactive_single_reroll_options(ctx: AttackContext) -> list[Option]:
    return _single_options(ctx, "defender")


@hookimpl(trylast=True)
def godsgloom_inactive_single_reroll(ctx: AttackContext) -> None:
    _single_reroll(ctx, "defender", "inactive_single_reroll")


# -- ATC.30 Criticals (CEP) ------------------------------------------------------------


@hookimpl(trylast=True)
def godsgloom_criticals(ctx: AttackContext) -> None:
    pools = ctx.stash[POOLS]
    for side in SIDES:
        attack, defence = pools.get((side, "attack")), pools.get((side, "defence"))
        crit = critical_effects(attack.faces if attack else (), defence.faces if defence else ())
        if crit.extra_attack:
            _extra_die(ctx, side, "attack", attack, "two or more 6s")
        if crit.extra_defence:
            _extra_die(ctx, side, "defence", defence, "two or more 1s")
    _tally(ctx)


def _extra_die(ctx: AttackContext, side: str, colour: str, pool: _Pool, why: str) -> None:
    """One extra die of ``colour``: it counts at once and is never judged again."""
    (face,) = ctx.dice.roll(1, 6, label=f"{side} {ICON[colour]} critical extra die", target=SUCCESS).faces
    pool.extra.append(face)
    ctx.note("{0}: {1} on {2} — one extra {2} rolled: {3}", side, why, ICON[colour], face)


# -- ATC.40 Apply Auto-Successes --------------------------------------------------------

_NO_AUTO: dict[str, int] = {}


@hookimpl(trylast=True)
def godsgloom_auto_successes(ctx: AttackContext) -> None:
    declared = ctx.declaration["auto"]
    for side, token_id in (("attacker", ctx.attacker.id), ("defender", ctx.defender.id)):
        auto = ctx.current(token_id).get("auto") or _NO_AUTO
        hits, blocks = auto.get("hits", 0), auto.get("blocks", 0)
        if side == "attacker":
            hits += declared["hits"]
            blocks += declared["blocks"]
        elif not _melee(ctx):
            hits = 0  # a ranged defender inflicts no wounds (seed 004, ATC.60)
        if hits:
            setattr(ctx, HITS[side], getattr(ctx, HITS[side]) + hits)
            if ctx.tracing:
                ctx.note(f"{side}: +{hits} Auto-⚔️")
        if blocks:
            setattr(ctx, BLOCKS[side], getattr(ctx, BLOCKS[side]) + blocks)
            if ctx.tracing:
                ctx.note(f"{side}: +{blocks} Auto-🛡️")


# -- ATC.50 Cancel ---------------------------------------------------------------------


@hookimpl(trylast=True)
def godsgloom_cancel(ctx: AttackContext) -> None:
    melee = _melee(ctx)
    left = cancel(
        attacker_hits=ctx.attacker_hits,
        attacker_blocks=ctx.attacker_blocks,
        defender_hits=ctx.defender_hits,
        defender_blocks=ctx.defender_blocks,
        melee=melee,
    )
    if ctx.tracing:
        ctx.note(f"defender's {ctx.defender_blocks} 🛡️ against attacker's {ctx.attacker_hits} ⚔️: {left.attacker_hits} left")
        if melee:
            ctx.note(f"attacker's {ctx.attacker_blocks} 🛡️ against defender's {ctx.defender_hits} ⚔️: {left.defender_hits} left")
    ctx.wounds = left.attacker_hits
    ctx.attacker_wounds = left.defender_hits


# -- ATC.60 Inflict ---------------------------------------------------------------------


@hookimpl(trylast=True)
def godsgloom_inflict(ctx: AttackContext) -> None:
    # Wounds land on both units at the same time, so both statuses come from the
    # health each had before this step.
    checks = []
    for token_id, wounds in ((ctx.defender.id, ctx.wounds), (ctx.attacker.id, ctx.attacker_wounds)):
        unit = ctx.current(token_id)
        checks.append((token_id, unit, status_check(unit["health"]["current"], wounds)))
    conditions: dict[str, list[str]] = {}
    for token_id, unit, status in checks:
        name = ctx.token(token_id).name
        if status.wounds:
            ctx.update(token_id, health={**unit["health"], "current": status.health})
            ctx.note("{} suffers {} 🩸: health {} → {}", name, status.wounds, unit["health"]["current"], status.health)
        if status.decimated:
            ctx.update(token_id, weak=unit.get("weak", 0) + 1)
            ctx.note("{} is Decimated and gains a 🟣 Weak token", name)
            conditions[token_id] = ["decimated"]
        if status.destroyed:
            ctx.note("{} is Destroyed", name)
            conditions[token_id] = ["destroyed"]
    outcome = ctx.outcome
    outcome["hit"] = ctx.wounds > 0
    outcome["damage"] = ctx.wounds
    outcome["attacker_wounds"] = ctx.attacker_wounds
    outcome["attacker_hits"] = ctx.attacker_hits
    outcome["attacker_blocks"] = ctx.attacker_blocks
    outcome["defender_hits"] = ctx.defender_hits
    outcome["defender_blocks"] = ctx.defender_blocks
    outcome["conditions"] = conditions


# -- the ruleset --------------------------------------------------------------------------


def _reroll_ask(name: str, prompt: str, who: str) -> Ask:
    return Ask(name=name, prompt=prompt, who=who, default=DONE.id, decline=DONE, repeat=True)


STEPS = (
    Step(name="roll", title="ATC.10 Roll"),
    Step(
        name="reroll",
        title="ATC.20 Reroll",
        steps=(
            Step(
                name="active_pool_reroll",
                title="RDP.10 Active player: Pool Reroll",
                ask=_reroll_ask("active_pool_reroll", "Use a Pool Reroll?", "attacker"),
            ),
            Step(
                name="active_single_reroll",
                title="RDP.10 Active player: Single-Die Reroll",
                ask=_reroll_ask("active_single_reroll", "Reroll a single die?", "attacker"),
            ),
            Step(
                name="inactive_pool_reroll",
                title="RDP.20 Inactive player: Pool Reroll",
                ask=_reroll_ask("inactive_pool_reroll", "Use a Pool Reroll?", "defender"),
            ),
            Step(
                name="inactive_single_reroll",
                title="RDP.20 Inactive player: Single-Die Reroll",
                ask=_reroll_ask("inactive_single_reroll", "Reroll a single die?", "defender"),
            ),
        ),
    ),
    Step(name="criticals", title="ATC.30 Criticals"),
    Step(name="auto_successes", title="ATC.40 Apply Auto-Successes"),
    Step(name="cancel", title="ATC.50 Cancel"),
    Step(name="inflict", title="ATC.60 Inflict"),
)

NUMBERS = (
    "attacker_attack_dice",
    "attacker_defence_dice",
    "defender_attack_dice",
    "defender_defence_dice",
    "attacker_pool_rerolls",
    "attacker_single_rerolls",
    "defender_pool_rerolls",
    "defender_single_rerolls",
    "attacker_hits",
    "attacker_blocks",
    "defender_hits",
    "defender_blocks",
    "wounds",
    "attacker_wounds",
)


def sample_tokens() -> list[dict[str, Any]]:
    """Two warbands for the demo table."""
    return [
        {
            "id": "hearthguard",
            "name": "Hearthguard Shieldwall",
            "ruleset": "godsgloom",
            "ownership": {"alice": 3},
            "system": {
                "statline": {"attack": 3, "defence": 2},
                "guard": {"attack": 1, "defence": 3},
                "health": {"current": 4, "max": 4},
                "boost": 1,
                "weak": 0,
                "rerolls": {"pool": 0, "single": 1},
                "auto": {"hits": 0, "blocks": 1},
                "traits": [],
            },
        },
        {
            "id": "ashen-raiders",
            "name": "Ashen Raiders",
            "ruleset": "godsgloom",
            "ownership": {"bob": 3},
            "system": {
                "statline": {"attack": 4, "defence": 1},
                "guard": {"attack": 2, "defence": 2},
                "health": {"current": 3, "max": 3},
                "boost": 0,
                "weak": 0,
                "rerolls": {"pool": 1, "single": 0},
                "auto": {"hits": 0, "blocks": 0},
                "traits": ["momentum"],
            },
        },
        {
            "id": "bone-archers",
            "name": "Bone Archers",
            "ruleset": "godsgloom",
            "ownership": {"bob": 3},
            "system": {
                "statline": {"attack": 3, "defence": 1},
                "guard": {"attack": 1, "defence": 1},
                "health": {"current": 2, "max": 2},
                "boost": 0,
                "weak": 0,
                "rerolls": {"pool": 0, "single": 0},
                "auto": {"hits": 0, "blocks": 0},
                "traits": [],
            },
        },
    ]


RULESET = Ruleset(
    id="godsgloom",
    title="GODSGLOOM — Attack Test",
    description="The ATC procedure with the Reroll Dice Procedure and the Critical Effects Procedure (seed 004).",
    steps=STEPS,
    hookspecs=hookspecs,
    token_schema=Unit,
    declaration_schema=Declaration,
    numbers=NUMBERS,
    setup=setup,
    sample_tokens=sample_tokens,
    damage_unit="wounds",
)


@hookimpl
def vtt_bridge_rulesets() -> list[Ruleset]:
    return [RULESET]

