"""What the pack tells the host: the abilities it offers and the flags it keeps on tokens.

No ability is declared with an attack: each is offered as an option of a
decision (rerolls at ``reroll_attack`` / ``reroll_damage``, Shield Guard at
``redirect``, damage transference at ``transfer_damage``), so all are listed
as ``kind: "option"`` for players to see. At the rules' default answers
("decline") they change nothing.

The flags (``flags.warmachine_abilities``) say which models have which ability
(the ruleset's own ``system`` fields of the same names still count, for tokens
made before flags existed):

- ``reroll_attack``: the model may reroll its missed attack rolls (each once);
- ``reroll_damage``: the model may reroll its damage rolls (each once);
- ``grants_reroll``: friendly models within this many inches may reroll one
  attack or damage roll per attack;

- ``shield_guard``: the model has Shield Guard (the ruleset's own
  ``system.shield_guard`` still counts, for tokens made before flags existed);
- ``transference``: a warlock may transfer damage to its battlegroup (default
  true; false when an effect denies it).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from marshmallow import fields, validate

from vtt_bridge import Declarable, hookimpl

from vtt_bridge import StrictSchema

__all__ = ["DECLARABLES", "Flags", "PLUGIN", "flag", "flags_of", "owners", "vtt_bridge_declarables", "vtt_bridge_token_flags"]

PLUGIN = "warmachine_abilities"  # the entry point's name: the key of this pack's token flags
RULESET = "warmachine_mk3"

DECLARABLES = [
    Declarable(
        id="reroll",
        label="Reroll (own ability)",
        plugin=PLUGIN,
        kind="option",
        description="the model may reroll its missed attack rolls or its damage rolls, each roll once (reroll:self)",
    ),
    Declarable(
        id="grants_reroll",
        label="Reroll granted by a friendly model",
        plugin=PLUGIN,
        kind="option",
        description="a model within the granting model's range may reroll one attack or damage roll per attack "
        "(reroll:<granting token id>)",
    ),
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

    reroll_attack = fields.Boolean(
        load_default=False, metadata={"description": "the model may reroll its missed attack rolls (each once)"}
    )
    reroll_damage = fields.Boolean(
        load_default=False, metadata={"description": "the model may reroll its damage rolls (each once)"}
    )
    grants_reroll = fields.Float(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, max=24),
        metadata={"description": "friendly models within this many inches may reroll one roll per attack"},
    )
    shield_guard = fields.Boolean(load_default=False, metadata={"description": "the model has Shield Guard"})
    transference = fields.Boolean(
        load_default=True, metadata={"description": "a warlock may transfer damage to its warbeasts"}
    )


DEFAULTS = {"reroll_attack": False, "reroll_damage": False, "grants_reroll": None, "shield_guard": False, "transference": True}


def flags_of(token: Any) -> dict[str, Any]:
    """The pack's flags on ``token``, the defaults when it has none."""
    mine = token.flags.get(PLUGIN)
    return {**DEFAULTS, **(mine or {})}


# A token snapshot cannot change, so what it says is read once per snapshot.


@lru_cache(maxsize=1024)
def flag(token: Any, name: str) -> Any:
    """One of the pack's flags on ``token`` (its default when the token has none)."""
    return flags_of(token)[name]


@lru_cache(maxsize=1024)
def owners(token: Any) -> frozenset[str]:
    """The users who own ``token`` (Foundry's owner level, 3)."""
    return frozenset(user for user, level in token.ownership.items() if level >= 3)


@hookimpl
def vtt_bridge_declarables(ruleset: str):
    return DECLARABLES if ruleset == RULESET else None


@hookimpl
def vtt_bridge_token_flags(ruleset: str):
    return Flags if ruleset == RULESET else None
