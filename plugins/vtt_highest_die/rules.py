"""The highest-die rules as small pure functions (seed 003, brief highest_die.md).

Nothing here rolls or touches a context: ``ruleset.py`` feeds these functions
faces and token data and records what they return.
"""

from __future__ import annotations

import math
from fractions import Fraction
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONDITIONS",
    "DIE_SIZES",
    "KINDS",
    "OVERKILL_PACES",
    "REELING_BONUS_DIE",
    "SOAK_TARGET",
    "Damage",
    "Soak",
    "allowed_defenses",
    "base_damage",
    "chance_to_be_hit",
    "conditions_for",
    "count_successes",
    "damage_for",
    "merge_conditions",
    "soak",
    "soak_dice",
    "within",
]

DIE_SIZES = (4, 6, 8, 10, 12)
KINDS = ("normal", "slaying", "critical")
#: Every condition a token can carry, in the order the seed introduces them.
CONDITIONS = ("reeling", "hurt", "afraid", "injured", "dying", "dead")
#: "Other combatants can claim a bonus d8 to hit them" (a Reeling target).
REELING_BONUS_DIE = 8
#: "Each die that comes up 4 or better Soaks one point of damage."
SOAK_TARGET = 4
#: Overkilling frightens the target's allies "Near the target (within 4 paces)".
OVERKILL_PACES = 4.0


# -- 2. Defense ---------------------------------------------------------------------


def allowed_defenses(*, ranged_attack: bool, melee_weapon: bool, reeling: bool) -> tuple[str, ...]:
    """Which defenses the target may choose, in the order offered.

    The seed's chart of attacker weapon against defender weapon is missing, so
    [decision]: anyone may Dodge; a melee attack may also be Parried, or
    Countered, by a target holding a melee weapon; an arrow is neither parried
    nor countered. A Reeling target "cannot Counter, only Parry or Dodge" (seed 003).
    """
    out = []
    if melee_weapon and not ranged_attack:
        out.append("parry")
    out.append("dodge")
    if melee_weapon and not ranged_attack and not reeling:
        out.append("counter")
    return tuple(out)


# -- 4. Successes -----------------------------------------------------------------------


def count_successes(dice: Sequence[int], against: Sequence[int]) -> int:
    """Each die strictly higher than the opponent's single highest die is one success.

    Seed 003: 7, 6, 4 against 5, 3, 1 → 2; 7, 5, 4 against 5, 3, 1 → 1. An opponent
    that rolled nothing (a helpless target) has highest 0, so every die succeeds.
    """
    highest = max(against, default=0)
    return sum(1 for face in dice if face > highest)


def chance_to_be_hit(attack: Sequence[int], defense: Sequence[int]) -> Fraction:
    """The chance that at least one attack die beats the defense's highest die (a hit).

    Exact: for each highest defense face m, the attack misses only when every attack
    die shows m or less. No defense dice (a helpless target): any attack die hits.
    """
    if not attack:
        return Fraction(0)
    if not defense:
        return Fraction(1)

    def at_most(m: int, sizes: Sequence[int]) -> Fraction:
        p = Fraction(1)
        for sides in sizes:
            p *= Fraction(min(m, sides), sides)
        return p

    hit = Fraction(0)
    for m in range(1, max(defense) + 1):
        highest_is_m = at_most(m, defense) - at_most(m - 1, defense)
        hit += highest_is_m * (1 - at_most(m, attack))
    return hit


# -- 5. Damage ------------------------------------------------------------------------------


def base_damage(successes: int, kind: str) -> int:
    """Damage from the successes alone.

    Normal: 1 per success. Slaying: 2 per success — the seed's "+2 damage per success
    – twice as much" read as twice a normal hit, the brief's figure. Critical:
    ``s + ⌊s/2⌋`` ("+1 Damage for one success, +3 for two, +4 for three, +6 for four").
    """
    if kind == "slaying":
        return 2 * successes
    if kind == "critical":
        return successes + successes // 2
    return successes


@dataclass(frozen=True, slots=True, kw_only=True)
class Damage:
    """A hit's damage before soak, in its parts."""

    successes: int
    base: int
    weapon_bonus: int
    hurt: int
    injured: int

    @property
    def total(self) -> int:
        return max(0, self.base + self.weapon_bonus + self.hurt + self.injured)


def damage_for(*, successes: int, kind: str, weapon_bonus: int, conditions: Iterable[str]) -> Damage:
    """The successes' damage, plus the weapon's bonus, plus 1 each for a Hurt and an Injured target."""
    held = set(conditions)
    return Damage(
        successes=successes,
        base=base_damage(successes, kind),
        weapon_bonus=weapon_bonus,
        hurt=1 if "hurt" in held else 0,
        injured=1 if "injured" in held else 0,
    )


# -- 6. Soak -------------------------------------------------------------------------------------


def soak_dice(system: Mapping[str, Any]) -> tuple[int, ...]:
    """Body dice, plus Will dice with the Gift of Resolve, plus Armor dice."""
    dice = list(system.get("body", ()))
    if "resolve" in system.get("gifts", ()):
        dice += system.get("will", ())
    dice += system.get("armor", ())
    return tuple(dice)


@dataclass(frozen=True, slots=True, kw_only=True)
class Soak:
    """A soak roll read: points soaked, and whether it botched (every die a 1)."""

    soaked: int
    botch: bool

    def apply(self, damage: int) -> int:
        """Damage left after soaking; a botch adds 1."""
        return max(0, damage - self.soaked) + (1 if self.botch else 0)


def soak(faces: Sequence[int]) -> Soak:
    """Each die showing 4+ soaks one point; all dice showing 1 is a botch (+1 damage)."""
    return Soak(
        soaked=sum(1 for face in faces if face >= SOAK_TARGET),
        botch=bool(faces) and all(face == 1 for face in faces),
    )


# -- 7. Effects -------------------------------------------------------------------------------------


def conditions_for(damage: int) -> tuple[str, ...]:
    """The conditions one hit inflicts: Reeling on any hit, then by its final damage.

    1 Hurt · 2 + Afraid · 3 + Injured · 4 + Dying · 5 Dead (Dead takes Dying's place)
    · 6+ also Overkilled. Reeling comes "even if an attack fails to cause any Damage".
    """
    out = ["reeling"]
    if damage >= 1:
        out.append("hurt")
    if damage >= 2:
        out.append("afraid")
    if damage >= 3:
        out.append("injured")
    if damage == 4:
        out.append("dying")
    if damage >= 5:
        out.append("dead")
    if damage >= 6:
        out.append("overkilled")
    return tuple(out)


def merge_conditions(held: Iterable[str], gained: Iterable[str]) -> tuple[str, ...]:
    """A token's conditions after a hit: they accumulate; a Dead token is no longer Dying.

    Overkilled is an event, not a state a token keeps, so it is not stored.
    """
    now = set(held) | (set(gained) - {"overkilled"})
    if "dead" in now:
        now.discard("dying")
    return tuple(c for c in CONDITIONS if c in now)


def within(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, paces: float = OVERKILL_PACES) -> bool:
    """Are two positions (``{"x", "y"}`` in paces) at most ``paces`` apart? Unknown → no."""
    if not a or not b:
        return False
    return math.hypot(a["x"] - b["x"], a["y"] - b["y"]) <= paces
