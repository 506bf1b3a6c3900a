"""Measuring on the table: ranges, AOE deviation, who is under a template.

Positions are table coordinates in inches as a VTT canvas has them: ``x`` to
the right, ``y`` downward. "Clockwise" is therefore clockwise as seen on the
screen. Warmachine measures between base edges, so every distance here takes
the base sizes (millimetres, as printed on the card) into account.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vtt_bridge import per_snapshot

__all__ = [
    "Deviation",
    "Point",
    "base_radius",
    "deviate",
    "distance",
    "edge_distance",
    "gap",
    "point_of",
    "toward",
    "under_template",
]

MM_PER_INCH = 25.4
# Measured distances are floats; anything closer than this counts as touching.
EPSILON = 1e-9


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """A point on the table, in inches."""

    x: float
    y: float

    def to_dict(self) -> dict[str, float]:
        return {"x": self.x, "y": self.y}


@dataclass(frozen=True, slots=True, kw_only=True)
class Deviation:
    """Where a missed AOE lands.

    :ivar direction: the d6 rolled for the direction (1 = directly away from the attacker).
    :ivar rolled: the d6 rolled for the distance, in inches.
    :ivar distance: the distance actually moved, after the cap.
    :ivar cap: the most it may move: half the distance to the target, or half the
        weapon's range when the target was out of range.
    :ivar origin: the intended point of impact.
    :ivar landing: where the AOE is centred after deviating.
    """

    direction: int
    rolled: int
    distance: float
    cap: float
    origin: Point
    landing: Point

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "rolled": self.rolled,
            "distance": self.distance,
            "cap": self.cap,
            "from": self.origin.to_dict(),
            "to": self.landing.to_dict(),
        }


def _tidy(value: float) -> float:
    """Round to a thousandth of an inch (what a GM can place), never ``-0.0``."""
    return round(value, 3) + 0.0


@per_snapshot
def point_of(system: Mapping[str, Any]) -> Point:
    """A token's position (its base's centre)."""
    pos = system.get("position") or {}
    return Point(x=float(pos.get("x", 0.0)), y=float(pos.get("y", 0.0)))


def base_radius(base_mm: float) -> float:
    """The radius of a round base, in inches (a 30 mm base: 0.59")."""
    return base_mm / 2 / MM_PER_INCH


def distance(a: Point, b: Point) -> float:
    """Centre to centre."""
    return math.hypot(b.x - a.x, b.y - a.y)


def edge_distance(a: Point, a_base: float, b: Point, b_base: float) -> float:
    """Base edge to base edge (0 when the bases touch or overlap)."""
    return max(0.0, distance(a, b) - base_radius(a_base) - base_radius(b_base))


@per_snapshot
def gap(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Base edge to base edge between two models, from their ``system`` data."""
    return edge_distance(point_of(a), a.get("base", 30), point_of(b), b.get("base", 30))


def toward(a: Point, b: Point, length: float) -> Point:
    """The point ``length`` inches from ``a`` on the line towards ``b``."""
    d = distance(a, b)
    if d < EPSILON:
        return Point(x=_tidy(a.x), y=_tidy(a.y - length))  # no line to follow: straight up the table
    return Point(x=_tidy(a.x + (b.x - a.x) * length / d), y=_tidy(a.y + (b.y - a.y) * length / d))


def deviate(origin: Point, attacker: Point, direction: int, rolled: int, cap: float) -> Deviation:
    """Move a missed AOE: ``direction`` 1 points directly away from the attacker,
    2–6 follow clockwise at 60° steps; it moves ``rolled`` inches, at most ``cap``."""
    if not 1 <= direction <= 6:
        raise ValueError(f"a deviation direction is a d6, not {direction}")
    moved = _tidy(min(float(rolled), cap))
    d = distance(attacker, origin)
    ux, uy = ((origin.x - attacker.x) / d, (origin.y - attacker.y) / d) if d >= EPSILON else (0.0, -1.0)
    angle = math.radians(60 * (direction - 1))
    cos, sin = math.cos(angle), math.sin(angle)
    # With y growing downward, this rotation turns clockwise on the screen.
    vx, vy = ux * cos - uy * sin, ux * sin + uy * cos
    landing = Point(x=_tidy(origin.x + vx * moved), y=_tidy(origin.y + vy * moved))
    return Deviation(direction=direction, rolled=rolled, distance=moved, cap=_tidy(cap), origin=origin, landing=landing)


def under_template(centre: Point, aoe: float, position: Point, base_mm: float) -> bool:
    """Is any part of the base under an AOE of ``aoe`` inches (diameter) centred on ``centre``?"""
    return distance(centre, position) <= aoe / 2 + base_radius(base_mm) + EPSILON
