"""marshmallow pieces shared by the host and the rulesets.

Rulesets build their token and declaration schemas from these; the server
builds its message schemas from them too.
"""

from __future__ import annotations

from marshmallow import EXCLUDE, RAISE, Schema, fields, validate

__all__ = ["CharmUse", "StrictSchema", "TokenSchema", "fields", "validate"]


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
