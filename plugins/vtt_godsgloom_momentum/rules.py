"""The pack's rules as small pure functions: who holds Momentum or Onslaught.

- **Momentum**: the holder gets one Single-Die Reroll in each attack test, used in
  its own RDP step like any other single-die reroll.
- **Onslaught**: the holder adds one Auto-⚔️ at ATC.40 in each test where its Hits
  can wound (always as the attacker; as the defender only in melee, since a ranged
  defender rolls no 🟥 and inflicts nothing — seed 004, ATC.10 and ATC.60).

A unit holds a trait through its token's ``traits`` list; the attacker may also
declare it for this attack as a charm (``{"id": "momentum"}``).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MOMENTUM", "ONSLAUGHT", "holds", "onslaught_applies"]

MOMENTUM = "momentum"
ONSLAUGHT = "onslaught"


def holds(trait: str, traits: Iterable[str], *, declared: bool = False) -> bool:
    """Does a unit with these traits (or this declared charm) hold ``trait``?"""
    return declared or trait in traits


def onslaught_applies(*, side: str, melee: bool) -> bool:
    """Onslaught adds its Auto-⚔️ for the attacker always, for the defender only in melee."""
    return side == "attacker" or melee
