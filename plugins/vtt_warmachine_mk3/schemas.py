"""What a Warmachine MkIII token and an attack declaration hold.

Stats as printed on the card are upper case (``MAT``, ``DEF``, ``FURY``); the
state a GM writes during play is lower case (``focus``, ``marked``,
``knocked_down``). Positions are inches, bases millimetres.
"""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from vtt_bridge import CharmUse, StrictSchema

__all__ = ["Declaration", "Modifiers", "Position", "System", "WeaponSchema"]

KINDS = ("warrior", "warjack", "warbeast", "warcaster", "warlock", "solo")
BASES = (30, 40, 50, 80, 100, 120)


class Position(StrictSchema):
    """The centre of the model's base, in inches (x right, y down, as on the VTT canvas)."""

    x = fields.Float(required=True)
    y = fields.Float(required=True)


class WeaponSchema(StrictSchema):
    """A weapon or attack spell from the card."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    kind = fields.String(required=True, validate=validate.OneOf(("melee", "ranged", "magic")))
    RNG = fields.Float(load_default=None, validate=validate.Range(min=0))
    POW = fields.Integer(load_default=0, validate=validate.Range(min=0))
    PS = fields.Integer(load_default=None, validate=validate.Range(min=0))
    AOE = fields.Float(load_default=None, validate=validate.Range(min=0))
    spray = fields.Boolean(load_default=False)
    blast = fields.Integer(load_default=None, validate=validate.Range(min=0))
    critical = fields.String(load_default=None)

    @validates_schema
    def _check(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("RNG") is None and data.get("kind") != "melee":
            raise ValidationError("a ranged weapon or spell needs an RNG", "RNG")
        if data.get("spray") and data.get("AOE"):
            raise ValidationError("a spray has no AOE", "AOE")

    @post_load
    def _melee_range(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if data.get("RNG") is None:
            data["RNG"] = 0.5  # the standard melee range
        return data


class System(StrictSchema):
    """A model's ``system`` data: its card and its state on the table."""

    kind = fields.String(required=True, validate=validate.OneOf(KINDS))
    MAT = fields.Integer(load_default=0)
    RAT = fields.Integer(load_default=0)
    DEF = fields.Integer(required=True)
    ARM = fields.Integer(required=True)
    STR = fields.Integer(load_default=0)
    FOCUS = fields.Integer(load_default=None, validate=validate.Range(min=0))
    FURY = fields.Integer(load_default=None, validate=validate.Range(min=0))
    base = fields.Integer(load_default=30, validate=validate.OneOf(BASES))
    position = fields.Nested(Position, load_default=lambda: {"x": 0.0, "y": 0.0})
    facing = fields.Float(load_default=0.0)
    # Damage capacity: exactly one of these (none: a single box).
    boxes = fields.Integer(load_default=None, validate=validate.Range(min=1, max=100))
    grid = fields.List(
        fields.String(validate=validate.Regexp(r"^[-.A-Z]{0,10}$")),
        load_default=None,
        validate=validate.Length(equal=6),
    )
    spiral = fields.List(
        fields.Integer(validate=validate.Range(min=0, max=10)), load_default=None, validate=validate.Length(equal=6)
    )
    systems = fields.Dict(keys=fields.String(validate=validate.Regexp(r"^[A-Z]$")), values=fields.String(), load_default=dict)
    # State written during play.
    marked = fields.Raw(load_default=None)
    crippled = fields.List(fields.String(), load_default=list, validate=validate.Length(max=50))
    focus = fields.Integer(load_default=0, validate=validate.Range(min=0))
    fury = fields.Integer(load_default=0, validate=validate.Range(min=0))
    arm_bonus = fields.Integer(load_default=0)
    knocked_down = fields.Boolean(load_default=False)
    stationary = fields.Boolean(load_default=False)
    disabled = fields.Boolean(load_default=False)
    boxed = fields.Boolean(load_default=False)
    destroyed = fields.Boolean(load_default=False)
    removed = fields.Boolean(load_default=False)
    # Special rules the ruleset itself applies.
    tough = fields.Boolean(load_default=False)
    stealth = fields.Boolean(load_default=False)
    # Special rules the warmachine_abilities pack applies.
    shield_guard = fields.Boolean(load_default=False)
    shield_guard_used = fields.Boolean(load_default=False)
    battlegroup = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100))
    reroll_attack = fields.Boolean(load_default=False)  # may reroll its missed attack rolls (each once)
    reroll_damage = fields.Boolean(load_default=False)  # may reroll its damage rolls (each once)
    grants_reroll = fields.Float(load_default=None, allow_none=True, validate=validate.Range(min=0, max=24))
    # ^ friendly models within this many inches may reroll one attack or damage roll per attack
    weapons = fields.List(fields.Nested(WeaponSchema), load_default=list, validate=validate.Length(max=50))

    @validates_schema
    def _check(self, data: dict[str, Any], **kwargs: Any) -> None:
        given = [k for k in ("boxes", "grid", "spiral") if data.get(k) is not None]
        if len(given) > 1:
            raise ValidationError(f"give one damage capacity, not {' and '.join(given)}", given[1])
        marked = data.get("marked")
        if marked is not None:
            if given and given[0] != "boxes":
                ok = isinstance(marked, list) and len(marked) == 6
                ok = ok and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in marked)
                if not ok:
                    raise ValidationError("six numbers: boxes marked in each column or branch", "marked")
            elif isinstance(marked, bool) or not isinstance(marked, int) or marked < 0:
                raise ValidationError("the number of boxes marked", "marked")
        names = [w["name"] for w in data.get("weapons", [])]
        if len(set(names)) != len(names):
            raise ValidationError("weapon names must be unique", "weapons")

    @post_load
    def _nothing_marked(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if data.get("marked") is None:
            data["marked"] = [0] * 6 if data.get("grid") or data.get("spiral") else 0
        return data


class Modifiers(StrictSchema):
    """Modifiers declared with the attack."""

    aiming = fields.Boolean(load_default=False)
    back_strike = fields.Boolean(load_default=False)
    charge = fields.Boolean(load_default=False)
    auto_hit = fields.Boolean(load_default=False)
    attack_bonus = fields.Integer(load_default=0)
    damage_bonus = fields.Integer(load_default=0)
    extra_attack_dice = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5))
    extra_damage_dice = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5))
    discard_lowest_attack = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5))
    discard_lowest_damage = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5))
    boosted_attack = fields.Boolean(load_default=False)
    boosted_damage = fields.Boolean(load_default=False)


_NO_MODIFIERS = Modifiers().load({})


class Declaration(StrictSchema):
    """Step 1: the attack and its target (the target is the request's first target).

    :ivar models_under_template: for a spray or a Thresher-style attack, every model
        the template or attack covers besides the target; each gets its own attack roll.
    :ivar application_order: the active player's order for applying damage (step 10);
        models not named follow in the order they were hit.
    """

    weapon = fields.String(required=True, validate=validate.Length(min=1, max=100))
    modifiers = fields.Nested(Modifiers, load_default=lambda: dict(_NO_MODIFIERS))
    models_under_template = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100))
    application_order = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
