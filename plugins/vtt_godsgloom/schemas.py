"""GODSGLOOM token and attack-declaration schemas.

A unit token::

    {"statline": {"attack": 3, "defence": 2},   # 🟥 / 🟦 rolled when it attacks
     "guard": {"attack": 1, "defence": 3},      # 🟥 / 🟦 rolled when it is attacked
     "health": {"current": 4, "max": 4},
     "boost": 0, "weak": 0,                      # 🟡 / 🟣 tokens held
     "rerolls": {"pool": 1, "single": 1},       # rerolls it may use in each test
     "auto": {"hits": 0, "blocks": 1},          # Auto-⚔️ / Auto-🛡️ its rules grant
     "traits": ["momentum"]}                     # named abilities packs look for

An attack declaration::

    {"attack": "melee",                          # or "ranged"
     "modifiers": {"attack": 1, "defence": 0},  # active Modifiers on the attacker's pool
     "defender_modifiers": {"attack": 0, "defence": -1},
     "auto": {"hits": 1, "blocks": 0},          # Auto-successes this attack grants the attacker
     "charms": [{"id": "momentum"}]}
"""

from __future__ import annotations

from vtt_bridge import CharmUse, StrictSchema
from vtt_bridge.schemas import fields, validate

__all__ = ["Declaration", "Unit"]

_DICE = validate.Range(min=0, max=40)
_MODIFIER = validate.Range(min=-40, max=40)


class DicePool(StrictSchema):
    """A Characteristic of 🟥 Attack and 🟦 Defence dice."""

    attack = fields.Integer(load_default=0, validate=_DICE)
    defence = fields.Integer(load_default=0, validate=_DICE)


class Modifiers(StrictSchema):
    """Dice added (or, negative, removed) by active Modifiers."""

    attack = fields.Integer(load_default=0, validate=_MODIFIER)
    defence = fields.Integer(load_default=0, validate=_MODIFIER)


class Health(StrictSchema):
    current = fields.Integer(required=True, validate=validate.Range(min=0, max=100))
    max = fields.Integer(required=True, validate=validate.Range(min=1, max=100))


class Rerolls(StrictSchema):
    """Rerolls a unit may use in each test (RDP): Pool Rerolls and Single-Die Rerolls."""

    pool = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10))
    single = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20))


class AutoSuccesses(StrictSchema):
    """Auto-⚔️ Hits and Auto-🛡️ Blocks added at ATC.40."""

    hits = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20))
    blocks = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20))


def _zero_dice() -> dict[str, int]:
    return {"attack": 0, "defence": 0}


class Unit(StrictSchema):
    """A unit token's ``system`` data."""

    statline = fields.Nested(DicePool, required=True)
    guard = fields.Nested(DicePool, required=True)
    health = fields.Nested(Health, required=True)
    boost = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20))
    weak = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20))
    rerolls = fields.Nested(Rerolls, load_default=lambda: {"pool": 0, "single": 0})
    auto = fields.Nested(AutoSuccesses, load_default=lambda: {"hits": 0, "blocks": 0})
    traits = fields.List(fields.String(validate=validate.Length(min=1, max=100)), load_default=list, validate=validate.Length(max=50))


class Declaration(StrictSchema):
    """What the attacking player declares for one Attack Test."""

    attack = fields.String(load_default="melee", validate=validate.OneOf(["melee", "ranged"]))
    modifiers = fields.Nested(Modifiers, load_default=_zero_dice)
    defender_modifiers = fields.Nested(Modifiers, load_default=_zero_dice)
    auto = fields.Nested(AutoSuccesses, load_default=lambda: {"hits": 0, "blocks": 0})
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
