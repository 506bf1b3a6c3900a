"""What ``rulesets.list`` tells a client: steps, decisions, schemas, plugins.

The token and declaration schemas are described as JSON Schema (the subset a
form builder needs: types, required fields, defaults, ranges, choices), so a
JavaScript module can build a token sheet or an attack dialog without
knowing marshmallow.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from marshmallow import RAISE, Schema, fields, missing, validate

from ..engine.steps import Ruleset, Step
from ..plugins import Host

__all__ = ["describe_rulesets", "describe_schema", "describe_steps"]

_TYPES: tuple[tuple[type[fields.Field], dict[str, Any]], ...] = (
    (fields.Boolean, {"type": "boolean"}),
    (fields.Integer, {"type": "integer"}),
    (fields.Number, {"type": "number"}),
    (fields.Email, {"type": "string", "format": "email"}),
    (fields.Url, {"type": "string", "format": "uri"}),
    (fields.UUID, {"type": "string", "format": "uuid"}),
    (fields.DateTime, {"type": "string", "format": "date-time"}),
    (fields.String, {"type": "string"}),
    (fields.Dict, {"type": "object"}),
    (fields.List, {"type": "array"}),
    (fields.Tuple, {"type": "array"}),
)


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _field(field: fields.Field) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for cls, shape in _TYPES:
        if isinstance(field, cls):
            out.update(shape)
            break
    if isinstance(field, fields.Nested):
        nested = field.schema
        inner = describe_schema(nested)
        out.update({"type": "array", "items": inner} if getattr(field, "many", False) else inner)
    elif isinstance(field, fields.List):
        out["items"] = _field(field.inner)
    elif isinstance(field, fields.Tuple):
        out["prefixItems"] = [_field(f) for f in field.tuple_fields]
    elif isinstance(field, fields.Dict) and field.value_field is not None:
        out["additionalProperties"] = _field(field.value_field)
    elif isinstance(field, fields.Enum):
        out["enum"] = [_plain(m.value if field.by_value else m.name) for m in field.enum]
    elif isinstance(field, fields.Constant):
        out["const"] = _plain(field.constant)
    for validator in field.validators:
        _constrain(out, validator)
    default = field.load_default
    if default is not missing:
        value = default() if callable(default) else default
        out["default"] = _plain(value)
    if field.allow_none:
        out["nullable"] = True
    description = field.metadata.get("description")
    if description:
        out["description"] = str(description)
    title = field.metadata.get("title")
    if title:
        out["title"] = str(title)
    if field.metadata.get("situational"):
        out["situational"] = True  # a form puts it under "More options"
    return out


def _constrain(out: dict[str, Any], validator: Callable[..., Any]) -> None:
    array = out.get("type") in ("array", "object")
    if isinstance(validator, validate.Range):
        if validator.min is not None:
            out["minimum" if validator.min_inclusive else "exclusiveMinimum"] = validator.min
        if validator.max is not None:
            out["maximum" if validator.max_inclusive else "exclusiveMaximum"] = validator.max
    elif isinstance(validator, validate.Length):
        low, high = ("minItems", "maxItems") if array else ("minLength", "maxLength")
        if validator.equal is not None:
            out[low] = out[high] = validator.equal
        else:
            if validator.min is not None:
                out[low] = validator.min
            if validator.max is not None:
                out[high] = validator.max
    elif isinstance(validator, validate.OneOf):
        out["enum"] = _plain(list(validator.choices))
    elif isinstance(validator, validate.Regexp):
        out["pattern"] = validator.regex.pattern


def describe_schema(schema: Schema | type[Schema]) -> dict[str, Any]:
    """A JSON Schema (object) for a marshmallow schema's load side."""
    instance = schema() if isinstance(schema, type) else schema
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in instance.load_fields.items():
        key = field.data_key or name
        properties[key] = _field(field)
        if field.required:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = instance.unknown != RAISE
    return out


def _who(who: Any) -> str:
    return who if isinstance(who, str) else "rules"


def describe_steps(steps: tuple[Step, ...]) -> list[dict[str, Any]]:
    out = []
    for step in steps:
        entry: dict[str, Any] = {"name": step.name, "title": step.title}
        ask = step.ask
        if ask is not None:
            entry["decision"] = {
                "name": ask.name,
                "prompt": ask.prompt,
                # "rules": the ruleset works out who decides at the time.
                "who": _who(ask.who),
                # None: the rules pick the default from the situation.
                "default": ask.default if isinstance(ask.default, str) and ask.default else None,
                "repeat": ask.repeat,
                "decline": ask.decline.to_dict() if ask.decline is not None else None,
                "timeout": ask.timeout,
            }
        if step.goto:
            entry["goto"] = list(step.goto)
        if step.steps:
            entry["each"] = step.each is not None
            entry["steps"] = describe_steps(step.steps)
        out.append(entry)
    return out


def describe_ruleset(ruleset: Ruleset, host: Host | None = None) -> dict[str, Any]:
    """One ruleset for ``rulesets.list``; with ``host``, what its plugins add (declarables, flags)."""
    out = {
        "id": ruleset.id,
        "title": ruleset.title,
        "description": ruleset.description,
        "targets": {"min": ruleset.min_targets, "max": ruleset.max_targets},
        "numbers": list(ruleset.numbers),
        "steps": describe_steps(ruleset.steps),
        "token_schema": describe_schema(ruleset.token_schema),
        "declaration_schema": describe_schema(ruleset.declaration_schema),
        "sample_tokens": ruleset.sample_tokens is not None,
    }
    if host is not None:
        out["declarables"] = [d.to_dict() for d in host.declarables(ruleset.id)]
        out["flags"] = {plugin: describe_schema(schema) for plugin, schema in host.flag_schemas(ruleset.id).items()}
    return out


def describe_rulesets(host: Host) -> dict[str, Any]:
    """The ``rulesets.list`` acknowledgement's fields."""
    return {
        "rulesets": [describe_ruleset(host.rulesets[rid], host) for rid in sorted(host.rulesets)],
        "plugins": [p.to_dict() for p in host.plugins()],
    }
