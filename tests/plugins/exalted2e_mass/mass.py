"""Tokens and hosts for the exalted2e_mass tests.

Two units with round numbers, so every expected figure can be worked out by hand:

- ``a``, the attacker: Magnitude 5, Might 1; commander Wits 3 + War 3, Unit Accuracy 1
  → 7 dice; Charisma 2 + Unit Damage 2 → raw damage 4 + successes. Mortal commander,
  Intelligence 2 + War 3 + Defense 1 → War DV 3. Three health levels; soak 2L.
- ``b``, the defender: Magnitude 3, elite (seven health levels); Exalted commander,
  Intelligence 3 + War 4 + Defense 2 → War DV 4.5 → 5 (seed-derived example); soak 1L;
  commander Wits 2 + War 4 → 6 dice, Charisma 3 + Damage 0 → raw damage 3 + successes.
"""

from __future__ import annotations

import copy
from typing import Any

from vtt_bridge import testing as vt

RULESET = "exalted2e_mass"
PLUGIN = "vtt_exalted2e_mass"

A: dict[str, Any] = {
    "magnitude": 5,
    "might": 1,
    "accuracy": 1,
    "damage": 2,
    "defense": 1,
    "damage_type": "L",
    "soak": {"L": 2},
    "commander": {"wits": 3, "intelligence": 2, "charisma": 2, "war": 3},
}
B: dict[str, Any] = {
    "magnitude": 3,
    "accuracy": 0,
    "damage": 0,
    "defense": 2,
    "damage_type": "L",
    "soak": {"L": 1, "B": 3},
    "elite": True,
    "commander": {"wits": 2, "intelligence": 3, "charisma": 3, "war": 4, "essence": 2, "exalted": True},
}
SOLO: dict[str, Any] = {
    # a solo Exalt: Dexterity 4 + Ability 5 (War 3 caps it) + Accuracy 1 → 8 dice;
    # Dodge DV (4 + 3 + Essence 3) ÷ 2 = 5, Parry DV (4 + 5 + 2) ÷ 2 = 5.5 → 6;
    # soak 3L (Stamina 3 halved, rounded down, + armor 2); raw damage Strength 3 + 2.
    "magnitude": 0,
    "damage_type": "L",
    "commander": {"wits": 3, "intelligence": 3, "charisma": 3, "war": 3, "essence": 3, "exalted": True},
    "solo": {
        "dexterity": 4,
        "strength": 3,
        "stamina": 3,
        "ability": 5,
        "dodge": 3,
        "weapon": {"accuracy": 1, "damage": 2, "defense": 2, "overwhelming": 4},
        "armor": {"bashing": 2, "lethal": 2},
    },
}


def merged(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``base`` with top-level fields replaced, nested dicts updated."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


def host(*packs: object):
    """Only this ruleset (and the given test packs): other plugins cannot disturb these tests."""
    return vt.host(PLUGIN, *packs, entry_points=False)


HOST = host()


def resolve(a=A, b=B, *, packs=(), **kw) -> vt.Result:
    """Resolve ``a`` attacking ``b``; owners: alice owns a, bob owns b."""
    h = host(*packs) if packs else HOST
    tokens = {
        "a": {"name": "Attackers", "system": a, "ownership": {"alice": 3}},
        "b": {"name": "Defenders", "system": b, "ownership": {"bob": 3}},
    }
    return vt.resolve(RULESET, tokens, attacker="a", targets=["b"], host=h, **kw)
