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

from vtt_bridge import CharmUse, StrictSchema, field_help
from vtt_bridge.schemas import fields, validate

__all__ = ["Declaration", "Unit"]

_DICE = validate.Range(min=0, max=40)
_MODIFIER = validate.Range(min=-40, max=40)


class DicePool(StrictSchema):
    """A Characteristic of 🟥 Attack and 🟦 Defence dice."""

    attack = fields.Integer(load_default=0, validate=_DICE, **field_help("Attack dice (red)", "🟥 dice: each 3+ is a Hit"))
    defence = fields.Integer(load_default=0, validate=_DICE, **field_help("Defence dice (blue)", "🟦 dice: each 3+ is a Block"))


class Modifiers(StrictSchema):
    """Dice added (or, negative, removed) by active Modifiers."""

    attack = fields.Integer(load_default=0, validate=_MODIFIER, **field_help("Attack dice +/-", "🟥 dice added, or taken away when negative"))
    defence = fields.Integer(load_default=0, validate=_MODIFIER, **field_help("Defence dice +/-", "🟦 dice added, or taken away when negative"))


class Health(StrictSchema):
    current = fields.Integer(required=True, validate=validate.Range(min=0, max=100), **field_help("Current", "each Wound takes one; at exactly 1 the unit is Decimated, at 0 Destroyed"))
    max = fields.Integer(required=True, validate=validate.Range(min=1, max=100), **field_help("Maximum", "its Health when unhurt"))


class Rerolls(StrictSchema):
    """Rerolls a unit may use in each test (RDP): Pool Rerolls and Single-Die Rerolls."""

    pool = fields.Integer(load_default=0, validate=validate.Range(min=0, max=10), **field_help("Pool Rerolls", "each rerolls every die of the pool, successes too"))
    single = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20), **field_help("Single-Die Rerolls", "each rerolls one die of the player's choosing"))


class AutoSuccesses(StrictSchema):
    """Auto-⚔️ Hits and Auto-🛡️ Blocks added at ATC.40."""

    hits = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20), **field_help("Auto-Hits", "⚔️ added after the roll: not rolled, not rerolled"))
    blocks = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20), **field_help("Auto-Blocks", "🛡️ added after the roll: not rolled, not rerolled"))


def _zero_dice() -> dict[str, int]:
    return {"attack": 0, "defence": 0}


class Unit(StrictSchema):
    """A unit token's ``system`` data."""

    statline = fields.Nested(DicePool, required=True, **field_help("Statline", "the dice it rolls when it attacks"))
    guard = fields.Nested(DicePool, required=True, **field_help("Guard", "the dice it rolls when attacked (only the blue ones against a ranged attack)"))
    health = fields.Nested(Health, required=True, **field_help("Health", "Wounds it can take"))
    boost = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20), **field_help("Boost tokens", "🟡 one is spent on its next test: +1 red and +1 blue die"))
    weak = fields.Integer(load_default=0, validate=validate.Range(min=0, max=20), **field_help("Weak tokens", "🟣 one is spent on its next roll: -1 red and -1 blue die"))
    rerolls = fields.Nested(Rerolls, load_default=lambda: {"pool": 0, "single": 0}, **field_help("Rerolls", "rerolls it may use in each test"))
    auto = fields.Nested(AutoSuccesses, load_default=lambda: {"hits": 0, "blocks": 0}, **field_help("Auto-successes", "Hits and Blocks its rules grant in every test"))
    traits = fields.List(
        fields.String(validate=validate.Length(min=1, max=100)), load_default=list, validate=validate.Length(max=50),
        **field_help("Traits", "named abilities packs look for, e.g. momentum"),
    )


class Declaration(StrictSchema):
    """What the attacking player declares for one Attack Test."""

    attack = fields.String(load_default="melee", validate=validate.OneOf(["melee", "ranged"]), **field_help("Attack", "melee (both sides wound) or ranged (the defender rolls only blue dice)"))
    modifiers = fields.Nested(Modifiers, load_default=_zero_dice, **field_help("Attacker's modifiers", "dice active Modifiers add to the attacker's pool", situational=True))
    defender_modifiers = fields.Nested(Modifiers, load_default=_zero_dice, **field_help("Defender's modifiers", "dice active Modifiers add to the defender's Guard", situational=True))
    auto = fields.Nested(AutoSuccesses, load_default=lambda: {"hits": 0, "blocks": 0}, **field_help("Auto-successes granted", "Hits and Blocks this attack grants the attacker", situational=True))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
