"""What the pack tells the host: the abilities it offers and the flags it keeps on tokens.

Neither ability is declared with an attack: each is offered as an option of a
decision (Shield Guard at ``redirect``, damage transference at
``transfer_damage``), so both are listed as ``kind: "option"`` for players to
see. Both are ``inert``: at the rules' default answers ("decline") they change nothing.

The flags (``flags.warmachine_abilities``) say which models have which ability:

- ``shield_guard``: the model has Shield Guard (the ruleset's own
  ``system.shield_guard`` still counts, for tokens made before flags existed);
- ``transference``: a warlock may transfer damage to its battlegroup (default
  true; false when an effect denies it).
"""

from __future__ import annotations

from typing import Any

from vtt_bridge import Declarable, hookimpl
from marshmallow import fields

from vtt_bridge import StrictSchema

__all__ = ["DECLARABLES", "Flags", "PLUGIN", "flags_of", "vtt_bridge_declarables", "vtt_bridge_token_flags"]

PLUGIN = "warmachine_abilities"  # the entry point's name: the key of this pack's token flags
RULESET = "warmachine_mk3"

DECLARABLES = [
    Declarable(
        id="shield_guard",
        label="Shield Guard",
        plugin=PLUGIN,
        kind="option",
        description="a friendly model within 3\" may be hit instead of the model directly hit by a ranged attack",
    ),
    Declarable(
        id="transference",
        label="Damage transference",
        plugin=PLUGIN,
        kind="option",
        description="a warlock spends 1 fury to have a warbeast of its battlegroup suffer the damage",
    ),
]


class Flags(StrictSchema):
    """``flags.warmachine_abilities`` on a warmachine_mk3 token."""

    shield_guard = fields.Boolean(load_default=False, metadata={"description": "the model has Shield Guard"})
    transference = fields.Boolean(
        load_default=True, metadata={"description": "a warlock may transfer damage to its warbeasts"}
    )


def flags_of(token: Any) -> dict[str, Any]:
    """The pack's flags on ``token``, the defaults when it has none."""
    mine = token.flags.get(PLUGIN)
    return {"shield_guard": False, "transference": True, **(mine or {})}


@hookimpl
def vtt_bridge_declarables(ruleset: str):
    return DECLARABLES if ruleset == RULESET else None


@hookimpl
def vtt_bridge_token_flags(ruleset: str):
    return Flags if ruleset == RULESET else None
