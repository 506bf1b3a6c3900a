"""Measuring between models, base edge to base edge.

The pack uses only the public API, so it measures for itself rather than
reaching into the ruleset: positions in inches (the token's ``position``),
round bases in millimetres (``base``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["edge_distance"]

MM_PER_INCH = 25.4


def edge_distance(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Base edge to base edge between two models' ``system`` data (0 when touching)."""
    pa, pb = a.get("position") or {}, b.get("position") or {}
    centres = math.hypot(pb.get("x", 0.0) - pa.get("x", 0.0), pb.get("y", 0.0) - pa.get("y", 0.0))
    radii = (a.get("base", 30) + b.get("base", 30)) / 2 / MM_PER_INCH
    return max(0.0, centres - radii)
