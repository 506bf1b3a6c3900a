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
from .store import AUDIT_KEEPS

__all__ = [
    "AttackRef",
    "DecisionRef",
    "AttackRequest",
    "EXPORT_FORMAT",
    "Empty",
    "History",
    "KeyCreate",
    "TableUpdate",
    "TokenCreate",
    "TokenRef",
    "TokenUpdate",
    "WhatIfRequest",
    "USER_NAME",
    "Messages",
    "RequestFile",
    "Sync",
    "TokenImport",
    "TokensImport",
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
    flags = fields.Dict(keys=fields.String(), values=fields.Dict(), load_default=dict)


class TokenRef(StrictSchema):
    id = fields.String(required=True, validate=ID)


class TokenUpdate(StrictSchema):
    """A patch: ``name`` and ``ownership`` replace, ``system`` and ``flags`` are merged in (nested objects too)."""

    id = fields.String(required=True, validate=ID)
    version = fields.Integer(strict=True, validate=validate.Range(min=1))
    name = fields.String(validate=validate.Length(min=1, max=200))
    ownership = fields.Dict(
        keys=fields.String(validate=USER_NAME), values=fields.Integer(strict=True, validate=validate.Range(0, 3))
    )
    system = fields.Dict()
    flags = fields.Dict(keys=fields.String(), values=fields.Dict())


class AttackRequest(StrictSchema):
    ruleset = fields.String(required=True, validate=ID)
    attacker = fields.String(required=True, validate=ID)
    targets = fields.List(fields.String(validate=ID), required=True, validate=validate.Length(min=1, max=100))
    declaration = fields.Dict(load_default=dict)
    request_id = fields.String(validate=validate.Length(min=1, max=200))
    # GM only: fixed seed, scripted faces, answers given in advance.
    seed = fields.Integer(strict=True, validate=validate.Range(0, 2**53 - 1))
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


class WhatIfRequest(StrictSchema):
    """``attack.whatif`` (and ``attack.whatif.apply``): a logged attack again, something changed."""

    attack = fields.String(required=True, validate=ID)
    with_ = fields.List(fields.String(validate=ID), data_key="with", load_default=list, validate=validate.Length(max=50))
    without = fields.List(fields.String(validate=ID), load_default=list, validate=validate.Length(max=50))
    answers = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=200)), values=fields.Raw(), load_default=dict)
    add_charms = fields.List(fields.Dict(), load_default=list, validate=validate.Length(max=50))
    remove_charms = fields.List(fields.String(validate=ID), load_default=list, validate=validate.Length(max=50))
    # attack.whatif.apply only: the new attack's idempotency key.
    request_id = fields.String(validate=validate.Length(min=1, max=200))


class History(StrictSchema):
    limit = fields.Integer(strict=True, load_default=50, validate=validate.Range(1, 500))
    before = fields.Integer(strict=True, validate=validate.Range(min=1, max=2**53 - 1))


class AttackRef(StrictSchema):
    id = fields.String(required=True, validate=ID)


class DecisionRef(StrictSchema):
    """A question out now: the attack it belongs to and the decision's key."""

    attack = fields.String(required=True, validate=ID)
    key = fields.String(required=True, validate=validate.Length(min=1, max=200))


class KeyCreate(StrictSchema):
    user = fields.String(required=True, validate=USER_NAME)


MAX_PACKS = 200  # packs a table may enable


class TableUpdate(StrictSchema):
    decision_timeout = fields.Float(allow_nan=False, validate=validate.Range(0.05, 3600))
    # Seconds of hook time one attack may use (decisions not counted); see server/pool.py.
    attack_budget = fields.Float(allow_nan=False, validate=validate.Range(0.05, 60))
    # The installed packs enabled at the table (rulesets are always on); the names are
    # checked against the installed packs by whoever holds the plugin host.
    packs = fields.List(fields.String(validate=validate.Length(min=1, max=100)), validate=validate.Length(max=MAX_PACKS))
    # Audit entries the table keeps in a Redis store, the oldest going first (0: all); see docs/deploy.md.
    audit_keep = fields.Integer(strict=True, validate=validate.Range(*AUDIT_KEEPS))
    # Physical dice: players roll real dice and enter the faces (see docs/protocol.md).
    physical_dice = fields.Boolean()
    # The GM's switch per user, over the table's: {"alice": false, "gm": true}; null forgets it.
    physical_dice_players = fields.Dict(
        keys=fields.String(validate=validate.Length(1, 64)),
        values=fields.Boolean(allow_none=True),
        validate=validate.Length(max=200),
    )

    @validates_schema
    def _something(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError(f"Give at least one setting to change: {', '.join(self.fields)}.", "_schema")


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


class RequestFile(AttackRequest):
    """A request file for ``vtt-bridge resolve`` / ``odds``: an ``attack`` request with its tokens inline.

    The same strict schema as the socket's ``attack``, so ``declaraton`` or
    ``seeed`` in a file is refused exactly as it would be over the wire.
    """

    tokens = fields.List(fields.Dict(), load_default=list, validate=validate.Length(max=10_000))


# The file ``vtt-bridge tokens export`` writes and ``table.export`` returns.
EXPORT_FORMAT = "vtt-bridge.tokens"


class TokenImport(TokenCreate):
    """One token of an import: as exported. Its ``version`` is ignored (the table numbers its own)."""

    id = fields.String(required=True, validate=ID)
    version = fields.Integer(strict=True, validate=validate.Range(min=1))


class TokensImport(StrictSchema):
    """``tokens.import``: an export document (or just its ``tokens``), applied all or nothing.

    Each token is checked by :class:`TokenImport` and its ruleset, one by one,
    so every bad token is named; ``replace`` also deletes the table's tokens
    the file does not have.
    """

    tokens = fields.List(fields.Raw(), required=True, validate=validate.Length(max=10_000))
    replace = fields.Boolean(load_default=False)
    format = fields.String(validate=validate.Equal(EXPORT_FORMAT))
    version = fields.Integer(strict=True, validate=validate.Equal(1))
    table = fields.Dict()
    exported = fields.Float()


class Sync(StrictSchema):
    """``table.sync``: what happened after the seq the client saw last (none: from the start)."""

    since = fields.Integer(strict=True, load_default=0, validate=validate.Range(min=0))
