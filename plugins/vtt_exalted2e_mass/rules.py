"""Exalted 2e mass combat (WoA, seed 000) as small pure functions.

Only what mass combat adds lives here: War DV, formations, the Magnitude
difference, unit pools and damage, ping damage, Might, unit health tracks.
Dice, DVs of solo units, soak and the health track itself are the
individual-combat rules of :mod:`vtt_exalted2e.rules`, shared, not copied.

The seed is a house variant: no ±3 cap on the Magnitude difference, ping is
not capped by the raw damage, and Might is added after the damage roll.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vtt_exalted2e.rules import (
    BASHING,
    INCAPACITATED,
    HealthTrack,
    cover_bonus,
    default_track,
    halve,
    height_bonus,
    minimum_damage,
    track_conditions,
)

__all__ = [
    "FORMATIONS",
    "UNIT_LEVELS",
    "AttackPool",
    "Formation",
    "Ping",
    "WarDV",
    "attack_successes",
    "commander_pool",
    "magnitude_bonus",
    "ping",
    "ping_floor",
    "solo_pool",
    "solo_raw_damage",
    "unit_conditions",
    "unit_raw_damage",
    "unit_track",
    "war_dv",
]

# ---------------------------------------------------------------------------
# Formations
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Formation:
    """A formation's modifiers to the unit's Accuracy and to its War DV."""

    name: str
    accuracy: int
    dv: int


FORMATIONS: Mapping[str, Formation] = {
    "unordered": Formation(name="unordered", accuracy=-1, dv=-1),
    "relaxed": Formation(name="relaxed", accuracy=0, dv=0),
    "close": Formation(name="close", accuracy=-2, dv=2),
}


# ---------------------------------------------------------------------------
# Step 2. War DV
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WarDV:
    """War DV taken apart: ``base + formation + cover + height = total``."""

    base: int
    formation: int
    cover: int
    height: int
    total: int

    @property
    def modifiers(self) -> int:
        """Formation, shield or fortification, and height: what still counts when DV is 0.

        "Shields, terrain and fortifications can modify this DV, as per the
        normal DV rules" (seed 000, step 2), and by those rules bonuses and
        penalties apply "after the reduction to zero" (seed 002).
        """
        return self.formation + self.cover + self.height


def war_dv(
    *,
    intelligence: int,
    war: int,
    unit_defense: int,
    divine: bool,
    formation: str = "relaxed",
    shield: str | None = None,
    cover: str | None = None,
    height: int = 0,
    ranged: bool = False,
) -> WarDV:
    """War DV = (Intelligence + War + Unit Defense) ÷ 2, then the defender's situation.

    It rounds as the commander's own DVs do (Exalted up, mortals down). Shields,
    cover (fortifications) and height modify it "as per the normal DV rules"
    (seed 000, step 2), so the greater of shield and cover applies; the
    formation's DV modifier comes last.
    """
    base = halve(intelligence + war + unit_defense, divine=divine)
    form = FORMATIONS[formation].dv
    bonus = cover_bonus(shield, cover, ranged=ranged)
    rise = height_bonus(height, close=not ranged, reach=False)
    return WarDV(base=base, formation=form, cover=bonus, height=rise, total=base + form + bonus + rise)


# ---------------------------------------------------------------------------
# Step 3. Attack roll
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AttackPool:
    """The dice of an attack roll and where they come from, for the chat card."""

    dice: int
    parts: tuple[tuple[str, int], ...]

    def describe(self) -> str:
        return " + ".join(f"{name} {value}" for name, value in self.parts if value) or "0"


def commander_pool(*, wits: int, war: int, unit_accuracy: int, formation: str, stunt: int = 0) -> AttackPool:
    """A commander rolls Wits + War + the unit's Accuracy (its formation's modifier included)."""
    parts = (
        ("Wits", wits),
        ("War", war),
        ("Accuracy", unit_accuracy),
        ("formation", FORMATIONS[formation].accuracy),
        ("stunt", stunt),
    )
    total = sum(value for _, value in parts)
    return AttackPool(dice=max(total, 0), parts=parts)


def solo_pool(
    *, dexterity: int, ability: int, war: int, accuracy: int, stunt: int = 0, wound_penalty: int = 0
) -> AttackPool:
    """A solo unit rolls its normal attack: Dexterity + Ability + weapon Accuracy.

    "This roll is limited by the attacker's War rating" (seed 000, step 3): we
    read it as the Ability dots counted in the pool being at most War [decision].
    """
    counted = min(ability, war)
    parts = (
        ("Dexterity", dexterity),
        ("Ability", counted),
        ("Accuracy", accuracy),
        ("stunt", stunt),
        ("wounds", wound_penalty),
    )
    total = sum(value for _, value in parts)
    return AttackPool(dice=max(total, 0), parts=parts)


def past_dv(successes: int, dv: int) -> int:
    """Successes left past the DV (at least 0); a negative DV blocks as 0.

    The DV itself stays negative — "track the character's negative DV ... as
    the true DV is still negative" (seed 002) — so stunt and Charm successes
    added to it first fill the negative part.
    """
    left = successes - (dv if dv > 0 else 0)
    return left if left > 0 else 0


def magnitude_bonus(attacker_magnitude: int, target_magnitude: int) -> int:
    """The difference of the Magnitudes, added to the attack's successes — no cap (seed 000)."""
    return attacker_magnitude - target_magnitude


def attack_successes(rolled: int, bonus: int) -> int:
    """Successes after the Magnitude difference; a negative difference cannot go below none."""
    total = rolled + bonus
    return total if total > 0 else 0


# ---------------------------------------------------------------------------
# Step 7. Raw damage
# ---------------------------------------------------------------------------


def unit_raw_damage(*, charisma: int, unit_damage: int, successes: int) -> int:
    """A unit's raw damage: commander's Charisma + Unit Damage + the remaining successes."""
    return charisma + unit_damage + successes


def solo_raw_damage(*, strength: int, weapon_damage: int, successes: int, uses_strength: bool = True) -> int:
    """A solo unit's raw damage "as normal": (Strength +) weapon damage + remaining successes."""
    return (strength if uses_strength else 0) + weapon_damage + successes


# ---------------------------------------------------------------------------
# Step 8C. Ping damage
# ---------------------------------------------------------------------------


def ping_floor(*, magnitude: int, solo: bool, overwhelming: int = 1, essence: int = 1) -> int:
    """The least damage pool an attack rolls: the attacking unit's Magnitude; a solo
    unit's is the greater of its weapon's Overwhelming rating and its Essence."""
    return minimum_damage(overwhelming, essence) if solo else magnitude


@dataclass(frozen=True, slots=True, kw_only=True)
class Ping:
    """Step 8C: the post-soak pool, the floor, and the pool rolled."""

    post_soak: int
    floor: int
    pool: int

    @property
    def did_ping(self) -> bool:
        return self.pool > self.post_soak


def ping(post_soak: int, floor: int) -> Ping:
    """A pool below the floor becomes the floor — even above the raw damage (seed 000, step 8C)."""
    post = post_soak if post_soak > 0 else 0
    return Ping(post_soak=post, floor=floor, pool=floor if post < floor else post)


# ---------------------------------------------------------------------------
# Step 10. Unit health
# ---------------------------------------------------------------------------

UNIT_LEVELS: tuple[int | str, ...] = (0, -1, INCAPACITATED)
"""A unit of extras has three health levels; the last one filled breaks it [decision]."""


def unit_track(*, elite: bool) -> HealthTrack:
    """An empty unit track: three levels for extras, the full seven for an elite unit of non-extras."""
    if elite:
        return default_track(0)  # −0, −1, −1, −2, −2, −4, Incapacitated
    return HealthTrack(penalties=UNIT_LEVELS, damage=(None,) * len(UNIT_LEVELS))


def unit_conditions(track: HealthTrack) -> frozenset[str]:
    """A unit whose track is filled to its last level is broken: ``routed`` if that
    level holds bashing damage (beaten and scattered), ``destroyed`` if lethal or
    aggravated [decision, after the individual rule: bashing past Incapacitated
    knocks out, lethal kills]."""
    if "incapacitated" not in track_conditions(track):
        return frozenset()
    last = track.penalties.index(INCAPACITATED)
    return frozenset({"routed" if track.damage[last] == BASHING else "destroyed"})
