"""The marshmallow schema of every client message.

Each socket event's payload is loaded through one of these before anything
else happens; a failure becomes ``invalid_request`` with marshmallow's field
messages as ``details``. Unknown fields are refused (``StrictSchema``), so a
misspelt option is an error rather than silently ignored. The ruleset-owned
parts (a token's ``system``, an attack's ``declaration``) are checked after
this, by the ruleset's own schemas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from ..errors import InvalidRequest
from ..schemas import StrictSchema

__all__ = [
    "AttackRef",
    "AttackRequest",
    "Empty",
    "History",
    "KeyCreate",
    "TableUpdate",
    "TokenCreate",
    "TokenRef",
    "TokenUpdate",
    "USER_NAME",
    "Messages",
    "load",
]

ID = validate.Length(min=1, max=100)
# User names appear in ownership maps and logs: keep them plain.
USER_NAME = validate.Regexp(r"^[A-Za-z0-9_.@-]{1,64}$", error="A user name is 1-64 letters, digits or _ . @ -.")


class Empty(StrictSchema):
    """Events that take no arguments (``rulesets.list``, ``token.list``, ``table.get``)."""


class TokenCreate(StrictSchema):
    id = fields.String(validate=ID)
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    ruleset = fields.String(required=True, validate=ID)
    ownership = fields.Dict(
        keys=fields.String(validate=USER_NAME),
        values=fields.Integer(strict=True, validate=validate.Range(0, 3)),
        load_default=dict,
    )
    system = fields.Dict(required=True)


class TokenRef(StrictSchema):
    id = fields.String(required=True, validate=ID)


class TokenUpdate(StrictSchema):
    """A patch: ``name`` and ``ownership`` replace, ``system`` is merged in (nested objects too)."""

    id = fields.String(required=True, validate=ID)
    version = fields.Integer(strict=True, validate=validate.Range(min=1))
    name = fields.String(validate=validate.Length(min=1, max=200))
    ownership = fields.Dict(
        keys=fields.String(validate=USER_NAME), values=fields.Integer(strict=True, validate=validate.Range(0, 3))
    )
    system = fields.Dict()


class AttackRequest(StrictSchema):
    ruleset = fields.String(required=True, validate=ID)
    attacker = fields.String(required=True, validate=ID)
    targets = fields.List(fields.String(validate=ID), required=True, validate=validate.Length(min=1, max=100))
    declaration = fields.Dict(load_default=dict)
    request_id = fields.String(validate=validate.Length(min=1, max=200))
    # GM only: fixed seed, scripted faces, answers given in advance.
    seed = fields.Integer(strict=True, validate=validate.Range(0, 2**63 - 1))
    dice = fields.List(
        fields.Integer(strict=True, validate=validate.Range(1, 1000)), validate=validate.Length(max=10_000)
    )
    answers = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=200)), values=fields.Raw())


class OddsRequest(StrictSchema):
    ruleset = fields.String(required=True, validate=ID)
    attacker = fields.String(required=True, validate=ID)
    targets = fields.List(fields.String(validate=ID), required=True, validate=validate.Length(min=1, max=100))
    declaration = fields.Dict(load_default=dict)
    # Hypothetical answers ("what if I parry?"): they change no state, so anyone may give them.
    answers = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=200)), values=fields.Raw())
    method = fields.String(load_default="auto", validate=validate.OneOf(["auto", "exact", "monte_carlo"]))
    samples = fields.Integer(strict=True, load_default=2000, validate=validate.Range(100, 20_000))


class History(StrictSchema):
    limit = fields.Integer(strict=True, load_default=50, validate=validate.Range(1, 500))
    before = fields.Integer(strict=True, validate=validate.Range(min=1))


class AttackRef(StrictSchema):
    id = fields.String(required=True, validate=ID)


class KeyCreate(StrictSchema):
    user = fields.String(required=True, validate=USER_NAME)


class TableUpdate(StrictSchema):
    decision_timeout = fields.Float(allow_nan=False, validate=validate.Range(0.05, 3600))
    # Seconds of hook time one attack may use (decisions not counted); see server/workers.py.
    attack_budget = fields.Float(allow_nan=False, validate=validate.Range(0.05, 60))

    @validates_schema
    def _something(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError("Give decision_timeout, attack_budget or both.", "_schema")


def load(schema: Schema, data: Any) -> dict[str, Any]:
    """Load ``data`` (``None`` counts as ``{}``) or raise ``invalid_request`` with field messages."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise InvalidRequest("the payload must be an object", details={"_schema": ["Not a valid mapping type."]})
    try:
        return schema.load(data)
    except ValidationError as err:
        raise InvalidRequest("invalid request", details=err.messages_dict) from None


class Messages:
    """One instance of each message schema, made on first use.

    Building a marshmallow schema deep-copies its fields (about a millisecond);
    loading with a built one is cheap. The server keeps one ``Messages``.
    """

    def __init__(self) -> None:
        self._schemas: dict[type[Schema], Schema] = {}

    def load(self, schema: type[Schema], data: Any) -> dict[str, Any]:
        instance = self._schemas.get(schema)
        if instance is None:
            instance = self._schemas[schema] = schema()
        return load(instance, data)
