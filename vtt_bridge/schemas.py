"""marshmallow pieces shared by the host and the rulesets.

Rulesets build their token and declaration schemas from these; the server
builds its message schemas from them too.
"""

from __future__ import annotations

from typing import Any

from marshmallow import EXCLUDE, RAISE, Schema, fields, validate

__all__ = ["CharmUse", "StrictSchema", "TokenSchema", "field_help", "fields", "validate"]


def field_help(title: str, help: str, *, situational: bool = False) -> dict[str, Any]:
    """A field's plain title and one-line help, as keyword arguments for a marshmallow field.

    ``fields.Integer(load_default=0, **field_help("Stunt dice", "0-3 dice the GM awards"))``:
    ``rulesets.list`` describes the field with ``title`` and ``description``, and the web
    table and the Foundry module label it so. ``situational=True`` marks a field only some
    attacks need (cover, range, a flurry): the web table folds it under "More options".
    """
    about: dict[str, Any] = {"title": title, "description": help}
    if situational:
        about["situational"] = True
    return {"metadata": about}


class StrictSchema(Schema):
    """A schema that refuses unknown fields, so a typo is an error, not silence."""

    class Meta:
        unknown = RAISE


class CharmUse(Schema):
    """One Charm (or ability) declared for an attack or a defense: ``{"id": ..., ...}``.

    Extra keys are the Charm's own parameters (``{"id": "first-excellency", "dice": 3}``);
    the pack that implements the Charm validates them.
    """

    class Meta:
        unknown = "include"

    id = fields.String(required=True, validate=validate.Length(min=1, max=100))


class TokenSchema(StrictSchema):
    """A token as stored and sent on the wire; ``system`` is checked by the ruleset's schema,
    ``flags`` by the schemas the packs declare."""

    id = fields.String(required=True, validate=validate.Length(min=1, max=100))
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    ruleset = fields.String(required=True)
    ownership = fields.Dict(
        keys=fields.String(), values=fields.Integer(validate=validate.Range(0, 3)), load_default=dict
    )
    system = fields.Dict(required=True)
    # {plugin name: data}; each plugin's part is checked by the schema it declares
    # (``vtt_bridge_token_flags``), see ``Host.load_flags``.
    flags = fields.Dict(keys=fields.String(), values=fields.Dict(), load_default=dict)
    version = fields.Integer(dump_only=True)


# Re-exported so rulesets need nothing but the public API.
_ = EXCLUDE
