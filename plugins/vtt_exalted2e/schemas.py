"""Token and declaration schemas of the ``exalted2e`` ruleset.

A token's ``system`` (what :class:`TokenSystem` loads)::

    {
      "attributes": {"strength": 3, "dexterity": 4, "stamina": 3, ...},   # others default to 1
      "abilities": {"melee": 3, "martial_arts": 5, "dodge": 4, ...},       # unlisted ones are 0
      "essence": 5,
      "divine": true,          # Exalted, spirits: round DVs up, natural lethal soak
      "extra": false,          # an extra: automatic defense applies against its attacks
      "motes": 40,             # one pool of Essence motes (personal and peripheral together)
      "weapons": [{"name": "fist", "ability": "martial_arts", "accuracy": 1, "damage": 0,
                   "damage_type": "B", "defense": 2, "unarmed": true}, ...],
      "armor": {"name": "chain shirt", "bashing": 4, "lethal": 2, "mobility": 0,
                "hardness": {"B": 0, "L": 0, "A": 0}} | null,
      "hardness": {"B": 12, "L": 6, "A": 0},   # from magic (Invulnerable Skin of Bronze)
      "natural_armor": false,  # exempt from "the unarmed cannot parry lethal or ranged"
      "shield": "buckler" | "target" | "tower" | null,   # a shield takes a hand
      "hands": 2,              # hands to hold weapons and shield with
      "equipped": ["daiklave"] | null,  # weapons held (null: every weapon listed that is
                               # not a natural one); natural weapons need a free hand

      "health": {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"],
                 "damage": ["L", "B", null, ...]},     # default: an empty track from Stamina
      "dv_penalty": 0,         # −N to both DVs from actions taken since the token last acted
      "onslaught": {"attacker-id": 2,   # −N to both DVs against that attacker's flurry
                    "group:wolves": 1}  # ... and against a coordinated attack's group
    }

A weapon's ``defense`` of ``null`` (the default) means it cannot parry (a bow);
``strength: false`` means Strength does not add to its damage (a crossbow);
``hands`` is how many hands it takes (default 1, 2 when ``two_handed``; a
kick takes 0). Parry DV comes from the held weapon with the highest Defense,
or a natural weapon (``unarmed``) when a hand is free for it: "Characters
cannot use a hand for parrying if they are holding a weapon in it" (seed 002).
"""

from __future__ import annotations

from marshmallow import ValidationError, post_load, pre_load, validates_schema

from vtt_bridge import CharmUse, StrictSchema, field_help
from vtt_bridge.schemas import fields, validate

from .rules import COVER, DAMAGE_TYPES, DYING, INCAPACITATED, SHIELDS, default_track, free_hands

__all__ = ["ABILITIES", "ATTACK_TYPES", "Declaration", "HealthTrackSchema", "TokenSystem", "Weapon"]

ATTRIBUTES = (
    "strength", "dexterity", "stamina",
    "charisma", "manipulation", "appearance",
    "perception", "intelligence", "wits",
)  # fmt: skip
ABILITIES = (
    "archery", "martial_arts", "melee", "thrown", "war",
    "integrity", "performance", "presence", "resistance", "survival",
    "craft", "investigation", "lore", "medicine", "occult",
    "athletics", "awareness", "dodge", "larceny", "stealth",
    "bureaucracy", "linguistics", "ride", "sail", "socialize",
)  # fmt: skip
ATTACK_ABILITIES = ("archery", "martial_arts", "melee", "thrown")
# The declaration names the attack type; "ranged" is an Archery attack.
ATTACK_TYPES = {"melee": "melee", "martial_arts": "martial_arts", "ranged": "archery", "thrown": "thrown"}

_rating = validate.Range(min=0, max=10)


def _int(**kw):
    return fields.Integer(strict=True, **kw)


def _hardness(**kw):
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(DAMAGE_TYPES)),
        values=_int(validate=validate.Range(min=0, max=100)),
        load_default=dict,
        **kw,
    )




class Attributes(StrictSchema):
    strength = _int(required=True, validate=_rating)
    dexterity = _int(required=True, validate=_rating)
    stamina = _int(required=True, validate=_rating)
    charisma = _int(load_default=1, validate=_rating)
    manipulation = _int(load_default=1, validate=_rating)
    appearance = _int(load_default=1, validate=_rating)
    perception = _int(load_default=1, validate=_rating)
    intelligence = _int(load_default=1, validate=_rating)
    wits = _int(load_default=1, validate=_rating)


Abilities = StrictSchema.from_dict({name: _int(load_default=0, validate=_rating) for name in ABILITIES}, name="Abilities")


class Weapon(StrictSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    ability = fields.String(required=True, validate=validate.OneOf(ATTACK_ABILITIES))
    accuracy = _int(load_default=0, validate=validate.Range(min=-10, max=10))
    damage = _int(load_default=0, validate=validate.Range(min=-10, max=50))
    damage_type = fields.String(load_default="B", validate=validate.OneOf(DAMAGE_TYPES))
    strength = fields.Boolean(load_default=True)
    defense = _int(load_default=None, allow_none=True, validate=validate.Range(min=-10, max=10))
    minimum = _int(load_default=1, validate=validate.Range(min=0, max=20))
    piercing = fields.Boolean(load_default=False)
    reach = fields.Boolean(load_default=False)
    range = _int(load_default=None, allow_none=True, validate=validate.Range(min=1))
    two_handed = fields.Boolean(load_default=False)
    hands = _int(load_default=None, allow_none=True, validate=validate.Range(min=0, max=4))
    unarmed = fields.Boolean(load_default=False)


class Armor(StrictSchema):
    name = fields.String(load_default="armor")
    bashing = _int(load_default=0, validate=validate.Range(min=0, max=50))
    lethal = _int(load_default=0, validate=validate.Range(min=0, max=50))
    mobility = _int(load_default=0, validate=validate.Range(min=0, max=10))
    hardness = _hardness()


class _Penalty(fields.Field):
    """A level's penalty: an integer 0 … −10, ``"I"`` (Incapacitated) or ``"D"`` (Dying)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if value in (INCAPACITATED, DYING):
            return value
        if isinstance(value, int) and not isinstance(value, bool) and -10 <= value <= 0:
            return value
        raise ValidationError('A penalty is 0 to -10, "I" (Incapacitated) or "D" (Dying).')


class HealthTrackSchema(StrictSchema):
    """Two lists, top level first: each level's penalty and its damage (null, "B", "L", "A").

    Also accepted on input, one object per level (stored as the two lists)::

        {"levels": [{"penalty": 0, "damage": "L"}, ..., {"penalty": "I", "damage": null}]}
    """

    @pre_load
    def _from_levels(self, data, **kwargs):
        levels = data.get("levels") if isinstance(data, dict) else None
        if levels is None or set(data) != {"levels"}:
            return data
        if not isinstance(levels, list) or not all(isinstance(lv, dict) and "penalty" in lv for lv in levels):
            raise ValidationError('Each level is {"penalty": ..., "damage": ...}.', field_name="levels")
        return {"penalties": [lv["penalty"] for lv in levels], "damage": [lv.get("damage") for lv in levels]}

    penalties = fields.List(
        _Penalty(),
        required=True,
        validate=validate.Length(min=1, max=50),
        **field_help("Wound penalties", "each health level's penalty, top first: 0 to -10, I (Incapacitated), D (Dying)"),
    )
    damage = fields.List(
        fields.String(allow_none=True, validate=validate.OneOf(DAMAGE_TYPES)),
        required=True,
        validate=validate.Length(max=50),
        **field_help("Damage", "each level's damage, top first: B, L, A, or none"),
    )

    @validates_schema
    def _one_mark_per_level(self, data, **kwargs):
        if len(data["penalties"]) != len(data["damage"]):
            raise ValidationError("Give one damage entry (or null) per level.", field_name="damage")


class TokenSystem(StrictSchema):
    """An Exalted 2e character (see the module docstring for the JSON)."""

    attributes = fields.Nested(Attributes, required=True)
    abilities = fields.Nested(Abilities, load_default=lambda: Abilities().load({}))
    essence = _int(load_default=1, validate=validate.Range(min=1, max=10))
    divine = fields.Boolean(load_default=False)
    extra = fields.Boolean(load_default=False)
    motes = _int(load_default=0, validate=validate.Range(min=0, max=500))
    weapons = fields.List(fields.Nested(Weapon), load_default=list, validate=validate.Length(max=50))
    armor = fields.Nested(Armor, load_default=None, allow_none=True)
    hardness = _hardness(
        **field_help("Hardness", "from magic, per damage type (B, L, A): an attack whose raw damage is no more than it deals none")
    )
    natural_armor = fields.Boolean(load_default=False)
    shield = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(tuple(SHIELDS)))
    hands = _int(load_default=2, validate=validate.Range(min=0, max=8))
    equipped = fields.List(fields.String(), load_default=None, allow_none=True, validate=validate.Length(max=50))
    health = fields.Nested(HealthTrackSchema, load_default=None, allow_none=True)
    dv_penalty = _int(
        load_default=0,
        validate=validate.Range(min=0, max=50),
        **field_help("DV penalty", "-N to both DVs from the actions this token took since it last acted"),
    )
    onslaught = fields.Dict(
        keys=fields.String(),
        values=_int(validate=validate.Range(min=0, max=50)),
        load_default=dict,
        **field_help("Onslaught", "per attacker (token id, or group:NAME): -N to both DVs against it, from its attacks this action"),
    )

    @validates_schema
    def _weapon_names_unique(self, data, **kwargs):
        names = [w["name"] for w in data.get("weapons", ())]
        if len(names) != len(set(names)):
            raise ValidationError("Weapon names must be unique.", field_name="weapons")

    @validates_schema
    def _equipped_fits_the_hands(self, data, **kwargs):
        held = data.get("equipped")
        if held is None:
            return
        weapons = {w["name"]: w for w in data.get("weapons", ())}
        for name in held:
            weapon = weapons.get(name)
            if weapon is None:
                raise ValidationError(f"{name!r} is not one of the token's weapons.", field_name="equipped")
            if weapon["unarmed"]:
                raise ValidationError(f"{name!r} is a natural weapon: it is not held.", field_name="equipped")
        if len(held) != len(set(held)):
            raise ValidationError("Each weapon is held once.", field_name="equipped")
        hands = data.get("hands", 2)
        if free_hands(tuple(weapons.values()), equipped=held, hands=hands, shield=data.get("shield")) < 0:
            raise ValidationError(
                f"These weapons{' and the shield' if data.get('shield') else ''} need more than {hands} hands.",
                field_name="equipped",
            )

    @post_load
    def _default_health(self, data, **kwargs):
        if data.get("health") is None:
            data["health"] = default_track(data["attributes"]["stamina"]).to_json()
        return data


class Flurry(StrictSchema):
    """An attack declared as part of a flurry: several attacks on one tick.

    ``attacks``: how many attacks the flurry holds (2–10); ``attack``: which
    of them this one is (1, the default, is the first); ``penalty``: the dice
    this attack's pool loses to the flurry — by default ``attacks + attack −
    1`` (see ``rules.flurry_penalty``), 0 for a flurry without multiple-action
    penalties (an extra-action Charm's).
    """

    # ``attacks`` is checked below rather than ``required``: the declaration form
    # (built from this schema) leaves a group of empty fields out, and must not
    # insist on a flurry's size when no flurry is declared.
    attacks = _int(load_default=None, allow_none=True, validate=validate.Range(min=2, max=10))
    attack = _int(load_default=1, validate=validate.Range(min=1, max=10))
    penalty = _int(load_default=None, allow_none=True, validate=validate.Range(min=0, max=30))

    @validates_schema
    def _attack_within(self, data, **kwargs):
        attacks = data.get("attacks")
        if attacks is None:
            raise ValidationError("A flurry says how many attacks it holds (2-10).", field_name="attacks")
        if data.get("attack", 1) > attacks:
            raise ValidationError(f"Must be at most attacks ({attacks}).", field_name="attack")


class Declaration(StrictSchema):
    """An attack declaration (step 1).

    ``type``: melee, ranged (Archery), martial_arts or thrown — default: the
    weapon's Ability. ``weapon``: a weapon name on the attacker's token —
    default: its first weapon (a bare fist if it lists none). ``stunt``: attack
    stunt dice (0–3). ``range_band`` (``within``, ``double``, ``triple``) or
    ``distance`` (yards, against the weapon's Range) for ranged attacks.
    ``cover`` (``none``, ``25``, ``50``, ``75``, ``90`` % hard cover),
    ``height`` (the defender's height advantage, −3…+3; negative: lower) and
    ``terrain`` (0–3, unstable ground: a Dodge DV penalty) describe the
    defender's situation. ``new_action``: the attacker's tick has come — its
    own DV penalties and the onslaught against it lapse, and its onslaught on
    this defender restarts. ``charms``: ``[{"id": ..., ...params}]`` for the
    installed Charm packs (not reroll effects: those are decisions).

    What else the rules let a GM say: ``unaware`` (the target does not see the
    attack coming and cannot defend: both DVs 0 before bonuses);
    ``coordinated`` (a group name: attacks of one coordinated attack share one
    onslaught penalty); ``dodge_inapplicable`` (closed ranks, a narrow
    crevasse, terrain worse than −3: Dodge DV 0 unless a stunt circumvents
    it — unlike the magical ``undodgeable``); ``post_soak`` (effects that
    increase or decrease post-soak damage, −20…+20, applied to the final
    damage pool at step 8); ``bystanders`` (token ids in the general path of
    the attack: on a botch the GM rules whether it strikes one of them, with
    as many successes as 1s were rolled); ``flurry`` (``{"attacks": N,
    "attack": k, "penalty"?: P}``: this is the k-th of N attacks on one tick —
    its pool loses the multiple-action penalty, and the first attack starts
    the attacker's new action as ``new_action`` does).
    """

    type = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(tuple(ATTACK_TYPES)), **field_help('Attack type', "melee, ranged (Archery), martial arts or thrown; default: the weapon's Ability"))
    weapon = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=100), **field_help('Weapon', "one of the attacker's weapons; default: its first"))
    stunt = _int(load_default=0, validate=validate.Range(min=0, max=3), **field_help('Stunt dice', '0-3 dice the GM awards for describing the attack well'))
    undodgeable = fields.Boolean(load_default=False, **field_help('Undodgeable (magic)', 'the target cannot dodge it, not even with a stunt', situational=True))
    unblockable = fields.Boolean(load_default=False, **field_help('Unblockable (magic)', 'the target cannot parry it', situational=True))
    range_band = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(("within", "double", "triple")), **field_help('Range band', "ranged attacks: within the weapon's Range, double or triple it (fewer dice)", situational=True))
    distance = _int(load_default=None, allow_none=True, validate=validate.Range(min=0), **field_help('Distance (yards)', "ranged attacks: how far, measured against the weapon's Range", situational=True))
    off_hand = fields.Boolean(load_default=False, **field_help('Off hand', 'the attack is made with the off hand', situational=True))
    cover = fields.String(load_default="none", validate=validate.OneOf(tuple(COVER)), **field_help("Target's cover", "hard cover between attacker and target: a bonus to the target's DVs", situational=True))
    height = _int(load_default=0, validate=validate.Range(min=-3, max=3), **field_help('Height advantage', "the target's height advantage, -3 to +3 (negative: the target is lower)", situational=True))
    terrain = _int(load_default=0, validate=validate.Range(min=0, max=3), **field_help('Unstable ground', "0-3: a penalty to the target's Dodge DV for poor footing", situational=True))
    new_action = fields.Boolean(load_default=False, **field_help("Attacker's new action", "the attacker's tick has come: its DV penalties and the onslaught on it lapse", situational=True))
    unaware = fields.Boolean(load_default=False, **field_help('Target unaware', 'the target does not see it coming and cannot defend', situational=True))
    coordinated = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=100), **field_help('Coordinated with (group)', 'a group name: the attacks of one coordinated attack share one onslaught penalty', situational=True))
    dodge_inapplicable = fields.Boolean(load_default=False, **field_help('No room to dodge', 'closed ranks, a narrow ledge: Dodge DV 0 unless a stunt gets round it', situational=True))
    post_soak = _int(load_default=0, validate=validate.Range(min=-20, max=20), **field_help('Damage after soak +/-', 'effects adding to or taking from the damage dice after soak, -20 to +20', situational=True))
    bystanders = fields.List(fields.String(validate=validate.Length(min=1, max=200)), load_default=list, validate=validate.Length(max=20), **field_help('Bystanders in the way', 'on a botch the GM may rule that the blow strikes one of them', situational=True))
    charms = fields.List(fields.Nested(CharmUse), load_default=list, validate=validate.Length(max=20))
    flurry = fields.Nested(
        Flurry,
        load_default=None,
        allow_none=True,
        **field_help("Flurry", "this attack is one of several on one tick (a multiple-action penalty)", situational=True),
    )

    @validates_schema
    def _flurry_on_its_tick(self, data, **kwargs):
        flurry = data.get("flurry")
        if flurry and data.get("new_action") and flurry.get("attack", 1) > 1:
            # The attacker's tick comes once, at the flurry's first attack.
            raise ValidationError("A new action starts a flurry: only its first attack has new_action.", field_name="flurry")
