"""highest_die token and attack-declaration schemas.

A combatant token::

    {"body": [8, 6], "will": [6], "armor": [4],      # die sizes
     "dodge": [8, 6],                                  # dice rolled to Dodge (default: Body)
     "gifts": ["resolve"],
     "weapons": [{"id": "sword", "name": "Sword", "dice": [8, 6, 6],
                  "damage": 1, "kind": "normal", "range": "melee"}],
     "conditions": ["hurt"],
     "side": "players", "position": {"x": 3, "y": 4}}  # position in paces

An attack declaration::

    {"weapon": "sword",                  # the attacker's weapon id (default: its first)
     "near_target": ["ally-1"],          # tokens the client measured within 4 paces of the target
     "near_attacker": [],                # ... and of the attacker (should a Counter overkill it)
     "charms": []}

Allies within 4 paces are found from the tokens' ``side`` and ``position`` among
the tokens the resolution was given; ``near_target`` / ``near_attacker`` let a
client without positions name them instead (only those on the same side count).
"""

from __future__ import annotations

from vtt_bridge import CharmUse, StrictSchema
from vtt_bridge.schemas import fields, validate

from .rules import CONDITIONS, DIE_SIZES, KINDS

__all__ = ["Combatant", "Declaration", "Weapon"]

def _dice() -> fields.List:
    """An optional list of die sizes (d4-d12)."""
    return fields.List(
        fields.Integer(validate=validate.OneOf(DIE_SIZES)), load_default=list, validate=validate.Length(max=20)
    )


class Weapon(StrictSchema):
    """A weapon: the dice its wielder rolls with it, its Damage bonus, kind and reach."""

    id = fields.String(required=True, validate=validate.Length(min=1, max=100))
    name = fields.String(load_default=None, validate=validate.Length(max=200))
    dice = fields.List(
        fields.Integer(validate=validate.OneOf(DIE_SIZES)), required=True, validate=validate.Length(min=1, max=20)
    )
    damage = fields.Integer(load_default=0, validate=validate.Range(min=-10, max=20))
    kind = fields.String(load_default="normal", validate=validate.OneOf(KINDS))
    range = fields.String(load_default="melee", validate=validate.OneOf(["melee", "ranged"]))


class Position(StrictSchema):
    """Where a token stands, in paces."""

    x = fields.Float(required=True)
    y = fields.Float(required=True)


class Combatant(StrictSchema):
    """A combatant token's ``system`` data."""

    body = fields.List(
        fields.Integer(validate=validate.OneOf(DIE_SIZES)), required=True, validate=validate.Length(max=20)
    )
    will = _dice()
    armor = _dice()
    dodge = _dice()
    gifts = fields.List(fields.String(validate=validate.Length(min=1, max=100)), load_default=list, validate=validate.Length(max=50))
    weapons = fields.List(fields.Nested(Weapon), load_default=list, validate=validate.Length(max=50))
    conditions = fields.List(fields.String(validate=validate.OneOf(CONDITIONS)), load_default=list, validate=validate.Length(max=50))
    side = fields.String(load_default="", validate=validate.Length(max=100))
    position = fields.Nested(Position, load_default=None, allow_none=True)


class Declaration(StrictSchema):
    """What the attacker declares (step 1)."""

    weapon = fields.String(load_default=None, validate=validate.Length(min=1, max=100))
    near_target = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100))
    near_attacker = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
