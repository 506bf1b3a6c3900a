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

from vtt_bridge import CharmUse, StrictSchema, field_help
from vtt_bridge.schemas import fields, validate

from .rules import CONDITIONS, DIE_SIZES, KINDS

__all__ = ["Combatant", "Declaration", "Weapon"]

def _dice(title: str, help: str) -> fields.List:
    """An optional list of die sizes (d4-d12)."""
    return fields.List(
        fields.Integer(validate=validate.OneOf(DIE_SIZES)), load_default=list, validate=validate.Length(max=20),
        **field_help(title, help),
    )


class Weapon(StrictSchema):
    """A weapon: the dice its wielder rolls with it, its Damage bonus, kind and reach."""

    id = fields.String(required=True, validate=validate.Length(min=1, max=100), **field_help("Id", "a short name the attack form picks it by"))
    name = fields.String(load_default=None, validate=validate.Length(max=200), **field_help("Name", "as the players call it"))
    dice = fields.List(
        fields.Integer(validate=validate.OneOf(DIE_SIZES)), required=True, validate=validate.Length(min=1, max=20),
        **field_help("Dice", "die sizes rolled with it (4-12), e.g. 8, 6, 6; also its Parry and Counter dice"),
    )
    damage = fields.Integer(load_default=0, validate=validate.Range(min=-10, max=20), **field_help("Damage bonus", "added to the damage of every hit with it"))
    kind = fields.String(load_default="normal", validate=validate.OneOf(KINDS), **field_help("Kind", "normal: 1 damage per success; slaying: 2; critical: s + s/2 in all"))
    range = fields.String(load_default="melee", validate=validate.OneOf(["melee", "ranged"]), **field_help("Reach", "melee or ranged"))


class Position(StrictSchema):
    """Where a token stands, in paces."""

    x = fields.Float(required=True, **field_help("x", "paces to the right"))
    y = fields.Float(required=True, **field_help("y", "paces down"))


class Combatant(StrictSchema):
    """A combatant token's ``system`` data."""

    body = fields.List(
        fields.Integer(validate=validate.OneOf(DIE_SIZES)), required=True, validate=validate.Length(max=20),
        **field_help("Body dice", "die sizes (4-12), e.g. 8, 6: rolled to soak, and to Dodge unless Dodge dice are given"),
    )
    will = _dice("Will dice", "die sizes: added to the soak with the Gift of Resolve")
    armor = _dice("Armor dice", "die sizes added to the soak roll")
    dodge = _dice("Dodge dice", "die sizes rolled to Dodge; none: the Body dice")
    gifts = fields.List(
        fields.String(validate=validate.Length(min=1, max=100)), load_default=list, validate=validate.Length(max=50),
        **field_help("Gifts", "named gifts, e.g. resolve (Will dice soak too)"),
    )
    weapons = fields.List(fields.Nested(Weapon), load_default=list, validate=validate.Length(max=50), **field_help("Weapons", "the first is the default in the attack form"))
    conditions = fields.List(
        fields.String(validate=validate.OneOf(CONDITIONS)), load_default=list, validate=validate.Length(max=50),
        **field_help("Conditions", "reeling (a bonus d8 to hit it, no Counter), hurt and injured (+1 damage each), afraid, dying, dead"),
    )
    side = fields.String(load_default="", validate=validate.Length(max=100), **field_help("Side", "allies share a side: an overkill within 4 paces frightens them"))
    position = fields.Nested(Position, load_default=None, allow_none=True, **field_help("Position (paces)", "where it stands, to find allies within 4 paces"))


class Declaration(StrictSchema):
    """What the attacker declares (step 1)."""

    weapon = fields.String(load_default=None, validate=validate.Length(min=1, max=100), **field_help("Weapon", "the attacker's weapon id; default: its first"))
    near_target = fields.List(
        fields.String(), load_default=list, validate=validate.Length(max=100),
        **field_help("Allies near the target", "tokens within 4 paces of the target, if the table has no positions", situational=True),
    )
    near_attacker = fields.List(
        fields.String(), load_default=list, validate=validate.Length(max=100),
        **field_help("Allies near the attacker", "tokens within 4 paces of the attacker, should a Counter overkill it", situational=True),
    )
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
