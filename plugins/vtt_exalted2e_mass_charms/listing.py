"""What the mass Charm pack tells the host: the Charms it offers and what a token knows.

Neither Charm is declared with an attack: each is offered as an option of a
decision (Essence Resurgent at ``attack_reroll`` / ``defense_reroll``, Solar
Counterattack at ``counterattack``), so both are listed as ``kind: "option"``
for players to see. At the rules' default answers ("decline") they change
nothing.

The flags (``flags.mass_charms``): ``charms``, the Charms the unit's commander
knows. Without it the commander knows both; with it, the others are not
offered.
"""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from vtt_bridge import Declarable, StrictSchema, hookimpl

__all__ = ["COUNTER", "DECLARABLES", "Flags", "PLUGIN", "RESURGENT", "knows", "vtt_bridge_declarables", "vtt_bridge_token_flags"]

PLUGIN = "mass_charms"  # the entry point's name: the key of this pack's token flags
RULESET = "exalted2e_mass"
RESURGENT = "war-resurgent"
COUNTER = "solar-counterattack"

DECLARABLES = [
    Declarable(
        id=RESURGENT,
        label="Essence Resurgent",
        plugin=PLUGIN,
        kind="option",
        description="4 motes: roll the commander's attack again (step 4), or the defender's stunt and Charm dice "
        "(step 6), and keep the better",
    ),
    Declarable(
        id=COUNTER,
        label="Solar Counterattack",
        plugin=PLUGIN,
        kind="option",
        description="3 motes: a solo unit struck in close combat strikes back (step 9)",
    ),
]


class Flags(StrictSchema):
    """``flags.mass_charms`` on an exalted2e_mass token."""

    charms = fields.List(
        fields.String(validate=validate.OneOf([RESURGENT, COUNTER])),
        validate=validate.Length(max=2),
        metadata={"description": "the Charms the commander knows (none listed: both)"},
    )


def knows(token: Any, charm: str) -> bool:
    """Does the unit's commander know ``charm`` (``flags.mass_charms.charms``; no list: both)?"""
    mine = token.flags.get(PLUGIN)
    known = mine.get("charms") if mine is not None else None
    return known is None or charm in known


@hookimpl
def vtt_bridge_declarables(ruleset: str):
    return DECLARABLES if ruleset == RULESET else None


@hookimpl
def vtt_bridge_token_flags(ruleset: str):
    return Flags if ruleset == RULESET else None
