"""Token and declaration schemas of the ``exalted2e_mass`` ruleset.

A token's ``system`` is one unit (what :class:`TokenSystem` loads)::

    {
      "magnitude": 5,            # 0 for a solo unit … 9
      "drill": 2, "might": 0,    # Drill is kept for the sheet; no attack step reads it
      "accuracy": 1, "damage": 3, "defense": 1,        # Unit Accuracy, Damage, Defense
      "damage_type": "L",        # the unit's attacks: "B", "L" or "A"
      "soak": {"B": 4, "L": 3, "A": 0},     # per type; a solo unit: added to its own soak
      "hardness": {"L": 0},
      "formation": "relaxed",    # "unordered" (−1 Acc/−1 DV), "relaxed", "close" (−2 Acc/+2 DV)
      "shield": "target" | null, # as for a character: the greater of shield and cover counts
      "elite": false,            # non-extras: the full seven health levels, not three
      "health": {"levels": [{"penalty": 0, "damage": null}, ...]},   # default from elite/solo
      "conditions": [],          # "routed", "destroyed", a solo's "incapacitated"...
      "commander": {"wits": 3, "intelligence": 3, "charisma": 3, "war": 3,
                    "essence": 1, "exalted": false,
                    "motes": 0},        # a solo unit: the character itself
      "solo": null | {           # a solo unit's individual-combat stats
        "dexterity": 5, "strength": 3, "stamina": 3,
        "ability": 5,            # dots of the Ability the weapon is used with
        "dodge": 4,
        "weapon": {"accuracy": 3, "damage": 5, "strength": true, "defense": 2,
                   "overwhelming": 1},
        "armor": {"bashing": 7, "lethal": 7}
      }
    }
"""

from __future__ import annotations

from marshmallow import ValidationError, post_load, validates_schema

from vtt_bridge import CharmUse, StrictSchema, field_help
from vtt_bridge.schemas import fields, validate
from vtt_exalted2e.rules import DAMAGE_TYPES, LETHAL, SHIELDS, COVER, default_track
from vtt_exalted2e.schemas import HealthTrackSchema

from .rules import FORMATIONS, unit_track

__all__ = ["ATTACKS", "Commander", "Declaration", "Solo", "TokenSystem"]

ATTACKS = ("close", "ranged")

_rating = validate.Range(min=0, max=10)


def _int(**kw):
    return fields.Integer(strict=True, **kw)


def _per_type(**kw):
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(DAMAGE_TYPES)),
        values=_int(validate=validate.Range(min=0, max=100)),
        load_default=dict,
        **kw,
    )


class Commander(StrictSchema):
    """The unit's commander: the traits the War Events read, and how its DVs round."""

    wits = _int(required=True, validate=_rating, **field_help("Wits", "the commander's: adds to the attack roll"))
    intelligence = _int(required=True, validate=_rating, **field_help("Intelligence", "the commander's: adds to War DV"))
    charisma = _int(required=True, validate=_rating, **field_help("Charisma", "the commander's: adds to raw damage"))
    war = _int(required=True, validate=_rating, **field_help("War", "the commander's: adds to the attack roll and War DV"))
    essence = _int(load_default=1, validate=validate.Range(min=1, max=10), **field_help("Essence", "the commander's"))
    exalted = fields.Boolean(load_default=False, **field_help("Exalted commander", "an Exalted commander rounds War DV up, a mortal down"))
    motes = _int(load_default=0, validate=validate.Range(min=0, max=500), **field_help("Motes", "the commander's Essence for Charm packs"))


class SoloWeapon(StrictSchema):
    accuracy = _int(load_default=0, validate=validate.Range(min=-10, max=10), **field_help("Accuracy", "dice added to the attack roll"))
    damage = _int(load_default=0, validate=validate.Range(min=-10, max=50), **field_help("Damage", "added to raw damage"))
    strength = fields.Boolean(load_default=True, **field_help("Adds Strength", "off for a crossbow: Strength does not add to its damage"))
    defense = _int(load_default=None, allow_none=True, validate=validate.Range(min=-10, max=10), **field_help("Defense", "added to Parry DV; none: it cannot parry"))
    overwhelming = _int(load_default=1, validate=validate.Range(min=0, max=20), **field_help("Overwhelming", "its minimum damage pool (or Essence, if higher)"))


class SoloArmor(StrictSchema):
    bashing = _int(load_default=0, validate=validate.Range(min=0, max=50), **field_help("Bashing soak", "from armor"))
    lethal = _int(load_default=0, validate=validate.Range(min=0, max=50), **field_help("Lethal soak", "from armor"))


class Solo(StrictSchema):
    """A solo unit's individual-combat stats (seed 000: "normal attack roll", "normal combat DVs")."""

    dexterity = _int(required=True, validate=_rating, **field_help("Dexterity", "in the attack roll and the DVs"))
    strength = _int(required=True, validate=_rating, **field_help("Strength", "adds to damage"))
    stamina = _int(required=True, validate=_rating, **field_help("Stamina", "adds to soak; sets the health track"))
    ability = _int(required=True, validate=_rating, **field_help("Ability", "dots of the Ability the weapon is used with; at most its War rating of them count"))
    dodge = _int(load_default=0, validate=_rating, **field_help("Dodge", "in its Dodge DV"))
    weapon = fields.Nested(SoloWeapon, load_default=lambda: SoloWeapon().load({}), **field_help("Weapon", "the solo unit's weapon"))
    armor = fields.Nested(SoloArmor, load_default=lambda: SoloArmor().load({}), **field_help("Armor", "the solo unit's armor"))


class TokenSystem(StrictSchema):
    """A unit or a solo unit (see the module docstring for the JSON)."""

    magnitude = _int(required=True, validate=validate.Range(min=0, max=9), **field_help("Magnitude", "0 (a solo unit) to 9: the difference adds to the attack's successes"))
    drill = _int(load_default=0, validate=validate.Range(min=0, max=5), **field_help("Drill", "0-5: how well trained the unit is"))
    might = _int(load_default=0, validate=validate.Range(min=0, max=10), **field_help("Might", "health levels added to every hit it lands"))
    accuracy = _int(load_default=0, validate=validate.Range(min=-10, max=10), **field_help("Unit Accuracy", "dice added to its attack roll"))
    damage = _int(load_default=0, validate=validate.Range(min=-10, max=20), **field_help("Unit Damage", "added to its raw damage"))
    defense = _int(load_default=0, validate=validate.Range(min=-10, max=10), **field_help("Unit Defense", "added to War DV"))
    damage_type = fields.String(load_default=LETHAL, validate=validate.OneOf(DAMAGE_TYPES), **field_help("Damage type", "B, L or A: of the health levels its hits deal"))
    soak = _per_type(**field_help("Soak", "per damage type (B, L, A): subtracted from the damage pool"))
    hardness = _per_type(**field_help("Hardness", "per damage type (B, L, A): an attack whose raw damage is no more than it deals none"))
    formation = fields.String(load_default="relaxed", validate=validate.OneOf(tuple(FORMATIONS)), **field_help("Formation", "unordered -1 Accuracy and DV, relaxed 0, close -2 Accuracy +2 DV"))
    shield = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(tuple(SHIELDS)), **field_help("Shield", "adds to War DV"))
    elite = fields.Boolean(load_default=False, **field_help("Elite", "not extras: the full seven health levels"))
    health = fields.Nested(HealthTrackSchema, load_default=None, allow_none=True, **field_help("Health track", "levels and their damage; default: 3 levels for extras, 7 for elite"))
    conditions = fields.List(fields.String(validate=validate.Length(min=1, max=50)), load_default=list, validate=validate.Length(max=50), **field_help("Conditions", "e.g. routed"))
    commander = fields.Nested(Commander, required=True, **field_help("Commander", "the traits the War Events read"))
    solo = fields.Nested(Solo, load_default=None, allow_none=True, **field_help("Solo unit", "a single character's stats; empty for a unit"))

    @validates_schema
    def _solo_is_one_character(self, data, **kwargs):
        if data.get("solo") is None:
            return
        # "with Solo Units counting as Magnitude 0" (seed 000, step 3); a Charm that
        # changes that acts on the attack's Magnitude difference, not on the sheet.
        if data.get("magnitude") != 0:
            raise ValidationError("A solo unit has Magnitude 0.", field_name="magnitude")
        if data.get("formation", "relaxed") != "relaxed":
            raise ValidationError("A solo unit keeps no formation.", field_name="formation")

    @post_load
    def _default_health(self, data, **kwargs):
        if data.get("health") is None:
            solo = data.get("solo")
            track = default_track(solo["stamina"]) if solo is not None else unit_track(elite=data["elite"])
            data["health"] = track.to_json()
        return data


class Declaration(StrictSchema):
    """An attack declaration (step 1).

    ``attack``: ``close`` or ``ranged``. ``stunt``: the attacker's stunt dice
    (0–3). ``undodgeable`` / ``unblockable``: which defense cannot stop the
    attack — it binds a solo defender's Dodge or Parry DV; War DV still
    applies [decision]. ``penalty``: external penalties to the attack's
    successes (step 5). ``cover`` (``none``, ``25``…``90`` % hard cover, a
    fortification) and ``height`` (the defender's height advantage, −3…+3,
    close attacks only) describe the defender's ground. ``charms``:
    ``[{"id": ..., ...params}]`` for the installed packs (not reroll effects:
    those are decisions).
    """

    attack = fields.String(load_default="close", validate=validate.OneOf(ATTACKS), **field_help("Attack", "close or ranged"))
    stunt = _int(load_default=0, validate=validate.Range(min=0, max=3), **field_help("Stunt dice", "0-3 dice the GM awards for describing the attack well"))
    undodgeable = fields.Boolean(load_default=False, **field_help("Undodgeable (magic)", "a solo defender cannot use its Dodge DV; War DV still applies", situational=True))
    unblockable = fields.Boolean(load_default=False, **field_help("Unblockable (magic)", "a solo defender cannot use its Parry DV; War DV still applies", situational=True))
    penalty = _int(load_default=0, validate=validate.Range(min=0, max=50), **field_help("External penalty", "successes taken from the attack roll before DV", situational=True))
    cover = fields.String(load_default="none", validate=validate.OneOf(tuple(COVER)), **field_help("Defender's cover", "hard cover or a fortification: a bonus to War DV", situational=True))
    height = _int(load_default=0, validate=validate.Range(min=-3, max=3), **field_help("Height advantage", "the defender's, -3 to +3 (close attacks only)", situational=True))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
