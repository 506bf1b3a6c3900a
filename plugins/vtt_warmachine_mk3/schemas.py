"""What a Warmachine MkIII token and an attack declaration hold.

Stats as printed on the card are upper case (``MAT``, ``DEF``, ``FURY``); the
state a GM writes during play is lower case (``focus``, ``marked``,
``knocked_down``). Positions are inches, bases millimetres.
"""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from vtt_bridge import CharmUse, StrictSchema, field_help

__all__ = ["Declaration", "Modifiers", "Position", "System", "WeaponSchema"]

KINDS = ("warrior", "warjack", "warbeast", "warcaster", "warlock", "solo")
BASES = (30, 40, 50, 80, 100, 120)


class Position(StrictSchema):
    """The centre of the model's base, in inches (x right, y down, as on the VTT canvas)."""

    x = fields.Float(required=True, **field_help("x", "inches to the right"))
    y = fields.Float(required=True, **field_help("y", "inches down"))


class WeaponSchema(StrictSchema):
    """A weapon or attack spell from the card."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=100), **field_help("Name", "as on the card"))
    kind = fields.String(required=True, validate=validate.OneOf(("melee", "ranged", "magic")), **field_help("Kind", "melee, ranged or magic (an attack spell)"))
    RNG = fields.Float(load_default=None, validate=validate.Range(min=0), **field_help("RNG", "range in inches; melee: 0.5 unless given"))
    POW = fields.Integer(load_default=0, validate=validate.Range(min=0), **field_help("POW", "added to the damage roll (ranged and magic)"))
    PS = fields.Integer(load_default=None, validate=validate.Range(min=0), **field_help("P+S", "a melee weapon's damage: POW plus the model's STR"))
    AOE = fields.Float(load_default=None, validate=validate.Range(min=0), **field_help("AOE", "blast template diameter in inches"))
    spray = fields.Boolean(load_default=False, **field_help("Spray", "an attack roll against every model under the spray template"))
    blast = fields.Integer(load_default=None, validate=validate.Range(min=0), **field_help("Blast POW", "the damage of the AOE's blast; default: half POW, rounded up"))
    critical = fields.String(load_default=None, **field_help("Critical effect", "what a critical hit adds, as the card says"))

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

    kind = fields.String(required=True, validate=validate.OneOf(KINDS), **field_help("Kind", "warrior, warjack, warbeast, warcaster, warlock or solo"))
    MAT = fields.Integer(load_default=0, **field_help("MAT", "melee attack: 2d6 + MAT must reach the target's DEF"))
    RAT = fields.Integer(load_default=0, **field_help("RAT", "ranged attack: 2d6 + RAT must reach the target's DEF"))
    DEF = fields.Integer(required=True, **field_help("DEF", "what an attack roll must reach to hit it"))
    ARM = fields.Integer(required=True, **field_help("ARM", "subtracted from each damage roll"))
    STR = fields.Integer(load_default=0, **field_help("STR", "added to its melee weapons' POW (P+S)"))
    FOCUS = fields.Integer(load_default=None, validate=validate.Range(min=0), **field_help("FOCUS", "a warcaster's FOCUS stat"))
    FURY = fields.Integer(load_default=None, validate=validate.Range(min=0), **field_help("FURY", "a warlock's or warbeast's FURY stat"))
    base = fields.Integer(load_default=30, validate=validate.OneOf(BASES), **field_help("Base (mm)", "30, 40, 50, 80, 100 or 120"))
    position = fields.Nested(Position, load_default=lambda: {"x": 0.0, "y": 0.0}, **field_help("Position (inches)", "the centre of its base on the table"))
    facing = fields.Float(load_default=0.0, **field_help("Facing (degrees)", "where its front arc points"))
    # Damage capacity: exactly one of these (none: a single box).
    boxes = fields.Integer(load_default=None, validate=validate.Range(min=1, max=100), **field_help("Damage boxes", "a row of this many boxes (none, grid or spiral: a single box)"))
    grid = fields.List(
        fields.String(validate=validate.Regexp(r"^[-.A-Z]{0,10}$")),
        load_default=None,
        validate=validate.Length(equal=6),
        **field_help("Damage grid", "a warjack's six columns, top down: '-' no box, '.' a box, a letter a system box"),
    )
    spiral = fields.List(
        fields.Integer(validate=validate.Range(min=0, max=10)), load_default=None, validate=validate.Length(equal=6),
        **field_help("Life spiral", "a warbeast's six branches: boxes in each"),
    )
    systems = fields.Dict(keys=fields.String(validate=validate.Regexp(r"^[A-Z]$")), values=fields.String(), load_default=dict, **field_help("Systems", "what each of the grid's system letters stands for"))
    # State written during play.
    marked = fields.Raw(load_default=None, **field_help("Damage marked", "boxes marked: a number, or six numbers for a grid or spiral"))
    crippled = fields.List(fields.String(), load_default=list, validate=validate.Length(max=50), **field_help("Crippled systems", "systems whose boxes are all marked"))
    focus = fields.Integer(load_default=0, validate=validate.Range(min=0), **field_help("Focus points", "spent to boost rolls"))
    fury = fields.Integer(load_default=0, validate=validate.Range(min=0), **field_help("Fury points", "spent to boost rolls"))
    arm_bonus = fields.Integer(load_default=0, **field_help("ARM bonus", "from shields, Arcane Shield and the like"))
    knocked_down = fields.Boolean(load_default=False, **field_help("Knocked down", "DEF 5 against ranged and magic; melee attacks hit it automatically"))
    stationary = fields.Boolean(load_default=False, **field_help("Stationary", "DEF 5 against ranged and magic; melee attacks hit it automatically"))
    disabled = fields.Boolean(load_default=False, **field_help("Disabled", "its last damage box is marked"))
    boxed = fields.Boolean(load_default=False, **field_help("Boxed", "disabled and not saved (Tough)"))
    destroyed = fields.Boolean(load_default=False, **field_help("Destroyed", "out of the game"))
    removed = fields.Boolean(load_default=False, **field_help("Removed from play", "taken off the table"))
    # Special rules the ruleset itself applies.
    tough = fields.Boolean(load_default=False, **field_help("Tough", "when disabled, a d6 roll of 5-6 saves it: 1 damage removed, knocked down"))
    stealth = fields.Boolean(load_default=False, **field_help("Stealth", "ranged and magic attacks from more than 5 inches away miss it"))
    # Special rules the warmachine_abilities pack applies.
    shield_guard = fields.Boolean(load_default=False, **field_help("Shield Guard", "once per round may take a ranged hit meant for a friendly model within 3 inches"))
    shield_guard_used = fields.Boolean(load_default=False, **field_help("Shield Guard used", "this round"))
    battlegroup = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100), **field_help("Battlegroup", "the ids of its battlegroup's models"))
    reroll_attack = fields.Boolean(load_default=False, **field_help("Rerolls missed attacks", "may reroll each missed attack roll once"))
    reroll_damage = fields.Boolean(load_default=False, **field_help("Rerolls damage", "may reroll each damage roll once"))
    grants_reroll = fields.Float(load_default=None, allow_none=True, validate=validate.Range(min=0, max=24), **field_help("Grants a reroll within (inches)", "friendly models this close may reroll one attack or damage roll per attack"))
    weapons = fields.List(fields.Nested(WeaponSchema), load_default=list, validate=validate.Length(max=50), **field_help("Weapons", "and attack spells, as on the card"))

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

    aiming = fields.Boolean(load_default=False, **field_help("Aiming", "+2 to a ranged attack roll"))
    back_strike = fields.Boolean(load_default=False, **field_help("Back strike", "+2 to the attack roll, from the target's back arc"))
    charge = fields.Boolean(load_default=False, **field_help("Charge", "a charge attack: its melee damage roll is boosted"))
    auto_hit = fields.Boolean(load_default=False, **field_help("Hits automatically", "the attack hits whatever the roll"))
    attack_bonus = fields.Integer(load_default=0, **field_help("Attack roll +/-", "from other rules"))
    damage_bonus = fields.Integer(load_default=0, **field_help("Damage roll +/-", "from other rules"))
    extra_attack_dice = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5), **field_help("Extra attack dice", "0-5 dice added to the attack roll"))
    extra_damage_dice = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5), **field_help("Extra damage dice", "0-5 dice added to the damage roll"))
    discard_lowest_attack = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5), **field_help("Drop lowest attack dice", "0-5 of the attack roll's lowest dice dropped"))
    discard_lowest_damage = fields.Integer(load_default=0, validate=validate.Range(min=0, max=5), **field_help("Drop lowest damage dice", "0-5 of the damage roll's lowest dice dropped"))
    boosted_attack = fields.Boolean(load_default=False, **field_help("Boost the attack roll", "+1 die"))
    boosted_damage = fields.Boolean(load_default=False, **field_help("Boost the damage roll", "+1 die"))


_NO_MODIFIERS = Modifiers().load({})


class Declaration(StrictSchema):
    """Step 1: the attack and its target (the target is the request's first target).

    :ivar models_under_template: for a spray or a Thresher-style attack, every model
        the template or attack covers besides the target; each gets its own attack roll.
    :ivar application_order: the active player's order for applying damage (step 10);
        models not named follow in the order they were hit.
    """

    weapon = fields.String(required=True, validate=validate.Length(min=1, max=100), **field_help("Weapon", "the name of the attacker's weapon or attack spell"))
    modifiers = fields.Nested(Modifiers, load_default=lambda: dict(_NO_MODIFIERS), **field_help("Modifiers", "aiming, back strike, charge, boosts and the like"))
    models_under_template = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100), **field_help("Models under the template", "every model a spray or AOE covers besides the target", situational=True))
    application_order = fields.List(fields.String(), load_default=list, validate=validate.Length(max=100), **field_help("Order of applying damage", "the active player's order; others follow in the order hit", situational=True))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
