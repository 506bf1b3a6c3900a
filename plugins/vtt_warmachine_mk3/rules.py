"""The Warmachine MkIII attack rules as small pure functions (seed 001, Appendix A).

Nothing here rolls or changes a token: each function takes stats and faces and
returns a frozen value. The step hooks in :mod:`.ruleset` wire them in.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from vtt_bridge import per_snapshot

__all__ = [
    "attack_hit_chance",
    "AttackNumbers",
    "AttackResult",
    "Automatic",
    "Boost",
    "DamageResult",
    "Weapon",
    "attack_numbers",
    "automatic",
    "blast_pow",
    "boost_cost",
    "damage_pow",
    "is_critical",
    "judge_attack",
    "judge_damage",
    "target_arm",
    "tough_recovers",
    "weapon_of",
]

STEALTH_RANGE = 5.0  # inches: Stealth makes ranged and magic attacks from farther away miss
KNOCKED_DOWN_DEF = 5  # a knocked-down or stationary model's DEF against ranged and magic attacks


@dataclass(frozen=True, slots=True, kw_only=True)
class Weapon:
    """One weapon (or spell) from the attacker's card.

    :ivar kind: ``"melee"``, ``"ranged"`` or ``"magic"``.
    :ivar rng: RNG in inches (a spray's template length for a spray).
    :ivar ps: P+S for a melee weapon; ``None``: POW + the model's STR.
    :ivar aoe: AOE diameter in inches, or ``None``.
    :ivar blast: the blast damage POW when the card prints one; ``None``: half POW.
    :ivar critical: the weapon's critical effect ("knockdown"...), or ``None``.
    """

    name: str
    kind: str
    rng: float
    pow: int
    ps: int | None = None
    aoe: float | None = None
    spray: bool = False
    blast: int | None = None
    critical: str | None = None

    @property
    def ranged_or_magic(self) -> bool:
        return self.kind in ("ranged", "magic")

    def describe(self) -> str:
        parts = [self.kind, f"RNG {'SP ' if self.spray else ''}{self.rng:g}"]
        parts.append(f"P+S {self.ps}" if self.kind == "melee" and self.ps is not None else f"POW {self.pow}")
        if self.aoe:
            parts.append(f"AOE {self.aoe:g}")
        if self.critical:
            parts.append(f"critical {self.critical}")
        return ", ".join(parts)


@per_snapshot
def weapon_of(system: Mapping[str, Any], name: str) -> Weapon | None:
    """The attacker's weapon called ``name``, or ``None``."""
    for w in system.get("weapons") or ():
        if w.get("name") == name:
            rng = w.get("RNG")
            if rng is None:
                rng = 0.5 if w.get("kind") == "melee" else 0.0
            return Weapon(
                name=w["name"],
                kind=w.get("kind", "ranged"),
                rng=float(rng),
                pow=int(w.get("POW") or 0),
                ps=w.get("PS"),
                aoe=w.get("AOE"),
                spray=bool(w.get("spray", False)),
                blast=w.get("blast"),
                critical=w.get("critical"),
            )
    return None


# -------------------------------------------------------------------------
# Boost (5a, 9a)
# -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Boost:
    """What boosting a roll costs the model.

    :ivar resource: the token field paid from: ``"focus"`` or ``"fury"``.
    :ivar before, after: its value before and after paying.
    :ivar label: the cost as the option and the card say it.
    """

    resource: str
    before: int
    after: int
    label: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.after > self.before:
            label = f"force it: +1 fury, {self.before} → {self.after}"
        else:
            label = f"spend 1 {self.resource}, {self.before} → {self.after}"
        object.__setattr__(self, "label", label)


def boost_cost(system: Mapping[str, Any]) -> Boost | None:
    """How the model pays for a boost, or ``None`` when it cannot.

    A warbeast is forced: it *gains* 1 fury, up to its FURY stat. A warlock spends
    1 fury. Everything else spends 1 focus (warcasters, warjacks with allocated
    focus, solos with focus).
    """
    kind = system.get("kind")
    if kind == "warbeast":
        fury, cap = int(system.get("fury") or 0), system.get("FURY")
        return _boost("fury", fury, fury + 1) if cap is not None and fury < cap else None
    resource = "fury" if kind == "warlock" else "focus"
    have = int(system.get(resource) or 0)
    return _boost(resource, have, have - 1) if have >= 1 else None


@lru_cache(maxsize=256)
def _boost(resource: str, before: int, after: int) -> Boost:
    """A boost's cost (frozen, so each is made once and shared)."""
    return Boost(resource=resource, before=before, after=after)


# -------------------------------------------------------------------------
# Steps 4–5: automatic results and the attack roll
# -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Automatic:
    """An attack that hits or misses without needing its roll (step 4).

    :ivar roll: whether the attack roll is still made (melee against a knocked-down
        model: only to look for a critical hit).
    """

    did_hit: bool
    reason: str
    roll: bool = False


def automatic(
    attacker: Mapping[str, Any],
    model: Mapping[str, Any],
    weapon: Weapon,
    modifiers: Mapping[str, Any],
    distance: float,
) -> Automatic | None:
    """Step 4 for one model potentially hit: does the attack hit or miss automatically?"""
    if model.get("stealth") and weapon.ranged_or_magic and distance > STEALTH_RANGE:
        return Automatic(did_hit=False, reason=f"Stealth: attacked from more than {STEALTH_RANGE:g}\"")
    if modifiers.get("auto_hit"):
        return Automatic(did_hit=True, reason="declared to hit automatically")
    if weapon.kind == "melee" and (model.get("knocked_down") or model.get("stationary")):
        why = "knocked down" if model.get("knocked_down") else "stationary"
        return Automatic(did_hit=True, reason=f"melee against a {why} model", roll=True)
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class AttackNumbers:
    """The attack roll's fixed part against one model.

    :ivar modifier: what is added to the dice: the stat plus every modifier.
    :ivar parts: ``(name, value)`` of each piece of ``modifier``, for the card.
    :ivar defense: the DEF to reach; ``defense_note`` says why it is not the card's.
    """

    modifier: int
    parts: tuple[tuple[str, int], ...]
    defense: int
    defense_note: str = ""

    def describe(self) -> str:
        mod = " + ".join(f"{name} {value}" for name, value in self.parts)
        note = f" ({self.defense_note})" if self.defense_note else ""
        return f"{mod} = {self.modifier} against DEF {self.defense}{note}"


def attack_stat(attacker: Mapping[str, Any], weapon: Weapon) -> tuple[str, int]:
    """MAT for melee, RAT for ranged; a magic attack uses the caster's FOCUS or FURY."""
    if weapon.kind == "melee":
        return "MAT", int(attacker.get("MAT") or 0)
    if weapon.kind == "ranged":
        return "RAT", int(attacker.get("RAT") or 0)
    for stat in ("FOCUS", "FURY", "ARC"):
        if attacker.get(stat) is not None:
            return stat, int(attacker[stat])
    return "ARC", 0


@per_snapshot
def attack_numbers(
    attacker: Mapping[str, Any], model: Mapping[str, Any], weapon: Weapon, modifiers: Mapping[str, Any]
) -> AttackNumbers:
    """2d6 + MAT/RAT + aiming (+2, ranged only) + back strike (+2) + any other bonus, against DEF."""
    parts = [attack_stat(attacker, weapon)]
    if modifiers.get("aiming") and weapon.kind == "ranged":
        parts.append(("aiming", 2))
    if modifiers.get("back_strike"):
        parts.append(("back strike", 2))
    if modifiers.get("attack_bonus"):
        parts.append(("bonus", int(modifiers["attack_bonus"])))
    defense, note = int(model.get("DEF") or 0), ""
    if weapon.ranged_or_magic and (model.get("knocked_down") or model.get("stationary")):
        note = ("knocked down" if model.get("knocked_down") else "stationary") + f": DEF {KNOCKED_DOWN_DEF}"
        defense = KNOCKED_DOWN_DEF
    return AttackNumbers(modifier=sum(v for _, v in parts), parts=tuple(parts), defense=defense, defense_note=note)


def is_critical(faces: Sequence[int]) -> bool:
    """Any two dice show the same number."""
    return len(set(faces)) < len(faces)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttackResult:
    """The attack roll against one model, judged (step 5d).

    :ivar total: dice plus modifier.
    :ivar needed: the DEF it had to reach.
    :ivar why: how it was decided, for the card.
    """

    faces: tuple[int, ...]
    total: int
    needed: int
    did_hit: bool
    critical: bool
    why: str


def judge_attack(faces: Sequence[int], modifier: int, needed: int, *, auto_hit: bool = False) -> AttackResult:
    """Hit when the total reaches DEF. All dice 1: a miss; all dice 6: a hit unless only
    one die is rolled. Both judged on the dice left after removal. A hit where two dice
    match is a critical hit."""
    return _judge_attack(tuple(faces), modifier, needed, auto_hit)


@lru_cache(maxsize=4096, typed=True)
def _judge_attack(faces: tuple[int, ...], modifier: int, needed: int, auto_hit: bool) -> AttackResult:
    """:func:`judge_attack` (its result is frozen, so each is worked out once and shared)."""
    total = sum(faces) + modifier
    if auto_hit:
        did_hit, why = True, "hits automatically"
    elif faces and all(f == 1 for f in faces):
        did_hit, why = False, "all dice show 1: a miss"
    elif len(faces) > 1 and all(f == 6 for f in faces):
        did_hit, why = True, "all dice show 6: a hit"
    else:
        did_hit = total >= needed
        why = f"{total} {'≥' if did_hit else '<'} DEF {needed}"
    critical = did_hit and is_critical(faces)
    return AttackResult(faces=faces, total=total, needed=needed, did_hit=did_hit, critical=critical, why=why)


@lru_cache(maxsize=1024)
def attack_hit_chance(dice: int, modifier: int, needed: int, discard: int = 0) -> Fraction:
    """The chance an attack roll of ``dice`` d6 (the ``discard`` lowest removed, one
    always left) hits, judged by :func:`judge_attack`: for a boost's question, "what
    does one more die give?". Exact, over the rolls as sorted faces with their counts."""
    if dice <= 0:
        return Fraction(0)
    hits = 0
    for faces in itertools.combinations_with_replacement(range(1, 7), dice):
        kept = faces[max(0, min(discard, dice - 1)) :]
        if _judge_attack(kept, modifier, needed, False).did_hit:
            ways = math.factorial(dice)
            for face in set(faces):
                ways //= math.factorial(faces.count(face))
            hits += ways
    return Fraction(hits, 6**dice)


# -------------------------------------------------------------------------
# Step 9: damage rolls
# -------------------------------------------------------------------------


def blast_pow(weapon: Weapon) -> int:
    """Blast damage: the card's blast POW, else half the weapon's POW rounded up
    (brief [decision]; seed 001 is silent)."""
    return weapon.blast if weapon.blast is not None else math.ceil(weapon.pow / 2)


def damage_pow(weapon: Weapon, attacker: Mapping[str, Any], *, blast: bool = False) -> tuple[str, int]:
    """POW for ranged and magic, P+S for melee (POW + STR when the card gives no P+S)."""
    if blast:
        return "blast POW", blast_pow(weapon)
    if weapon.kind == "melee":
        return "P+S", weapon.ps if weapon.ps is not None else weapon.pow + int(attacker.get("STR") or 0)
    return "POW", weapon.pow


def target_arm(model: Mapping[str, Any]) -> int:
    """ARM plus whatever raises it for now (a shield, Arcane Shield...)."""
    return int(model.get("ARM") or 0) + int(model.get("arm_bonus") or 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class DamageResult:
    """A damage roll against one model (step 9d).

    :ivar points: damage the model would suffer: what the roll exceeds ARM by, at least 0.
    """

    faces: tuple[int, ...]
    total: int
    arm: int
    points: int


def judge_damage(faces: Sequence[int], power: int, arm: int) -> DamageResult:
    """Dice + POW (or P+S) − ARM; a positive result is the damage."""
    return _judge_damage(tuple(faces), power, arm)


@lru_cache(maxsize=4096, typed=True)
def _judge_damage(faces: tuple[int, ...], power: int, arm: int) -> DamageResult:
    """:func:`judge_damage` (its result is frozen, so each is worked out once and shared)."""
    total = sum(faces) + power
    return DamageResult(faces=tuple(faces), total=total, arm=arm, points=max(0, total - arm))


# -------------------------------------------------------------------------
# Step 10b: Tough
# -------------------------------------------------------------------------


def tough_recovers(face: int) -> bool:
    """Tough: on a 5 or 6 the disabled model heals 1 damage point and is knocked down."""
    return face >= 5
