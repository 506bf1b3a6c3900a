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

from vtt_bridge import CharmUse, StrictSchema
from vtt_bridge.schemas import fields, validate
from vtt_exalted2e.rules import DAMAGE_TYPES, LETHAL, SHIELDS, COVER, default_track
from vtt_exalted2e.schemas import HealthTrackSchema

from .rules import FORMATIONS, unit_track

__all__ = ["ATTACKS", "Commander", "Declaration", "Solo", "TokenSystem"]

ATTACKS = ("close", "ranged")

_rating = validate.Range(min=0, max=10)


def _int(**kw):
    return fields.Integer(strict=True, **kw)


def _per_type():
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(DAMAGE_TYPES)),
        values=_int(validate=validate.Range(min=0, max=100)),
        load_default=dict,
    )


class Commander(StrictSchema):
    """The unit's commander: the traits the War Events read, and how its DVs round."""

    wits = _int(required=True, validate=_rating)
    intelligence = _int(required=True, validate=_rating)
    charisma = _int(required=True, validate=_rating)
    war = _int(required=True, validate=_rating)
    essence = _int(load_default=1, validate=validate.Range(min=1, max=10))
    exalted = fields.Boolean(load_default=False)
    motes = _int(load_default=0, validate=validate.Range(min=0, max=500))  # Essence for Charm packs


class SoloWeapon(StrictSchema):
    accuracy = _int(load_default=0, validate=validate.Range(min=-10, max=10))
    damage = _int(load_default=0, validate=validate.Range(min=-10, max=50))
    strength = fields.Boolean(load_default=True)  # false: Strength does not add (a crossbow)
    defense = _int(load_default=None, allow_none=True, validate=validate.Range(min=-10, max=10))
    overwhelming = _int(load_default=1, validate=validate.Range(min=0, max=20))


class SoloArmor(StrictSchema):
    bashing = _int(load_default=0, validate=validate.Range(min=0, max=50))
    lethal = _int(load_default=0, validate=validate.Range(min=0, max=50))


class Solo(StrictSchema):
    """A solo unit's individual-combat stats (seed 000: "normal attack roll", "normal combat DVs")."""

    dexterity = _int(required=True, validate=_rating)
    strength = _int(required=True, validate=_rating)
    stamina = _int(required=True, validate=_rating)
    ability = _int(required=True, validate=_rating)
    dodge = _int(load_default=0, validate=_rating)
    weapon = fields.Nested(SoloWeapon, load_default=lambda: SoloWeapon().load({}))
    armor = fields.Nested(SoloArmor, load_default=lambda: SoloArmor().load({}))


class TokenSystem(StrictSchema):
    """A unit or a solo unit (see the module docstring for the JSON)."""

    magnitude = _int(required=True, validate=validate.Range(min=0, max=9))
    drill = _int(load_default=0, validate=validate.Range(min=0, max=5))
    might = _int(load_default=0, validate=validate.Range(min=0, max=10))
    accuracy = _int(load_default=0, validate=validate.Range(min=-10, max=10))
    damage = _int(load_default=0, validate=validate.Range(min=-10, max=20))
    defense = _int(load_default=0, validate=validate.Range(min=-10, max=10))
    damage_type = fields.String(load_default=LETHAL, validate=validate.OneOf(DAMAGE_TYPES))
    soak = _per_type()
    hardness = _per_type()
    formation = fields.String(load_default="relaxed", validate=validate.OneOf(tuple(FORMATIONS)))
    shield = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(tuple(SHIELDS)))
    elite = fields.Boolean(load_default=False)
    health = fields.Nested(HealthTrackSchema, load_default=None, allow_none=True)
    conditions = fields.List(fields.String(validate=validate.Length(min=1, max=50)), load_default=list, validate=validate.Length(max=50))
    commander = fields.Nested(Commander, required=True)
    solo = fields.Nested(Solo, load_default=None, allow_none=True)

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

    attack = fields.String(load_default="close", validate=validate.OneOf(ATTACKS))
    stunt = _int(load_default=0, validate=validate.Range(min=0, max=3))
    undodgeable = fields.Boolean(load_default=False)
    unblockable = fields.Boolean(load_default=False)
    penalty = _int(load_default=0, validate=validate.Range(min=0, max=50))
    cover = fields.String(load_default="none", validate=validate.OneOf(tuple(COVER)))
    height = _int(load_default=0, validate=validate.Range(min=-3, max=3))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
