"""Shared pieces for the exalted2e tests: sample tokens with overrides, one-call resolution."""

from __future__ import annotations

import copy
from typing import Any

from vtt_bridge import Token
from vtt_exalted2e import sample_tokens

SAMPLES = {t["id"]: t for t in sample_tokens()}


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def tokens(host, **overrides: dict[str, Any]) -> dict[str, Token]:
    """The sample tokens, validated; ``soldier={"dv_penalty": 2}`` merges into that token's system."""
    out = {}
    for token_id, raw in SAMPLES.items():
        system = merge(raw["system"], overrides.get(token_id, {}))
        out[token_id] = Token.from_dict({**raw, "system": host.load_system("exalted2e", system)})
    return out


def start(host, attacker: str, target: str, declaration: dict | None = None, *, toks=None, **kw):
    return host.start(
        "exalted2e",
        toks if toks is not None else tokens(host),
        attacker=attacker,
        targets=[target],
        declaration=declaration or {},
        **kw,
    )


def resolve(host, attacker: str, target: str, declaration: dict | None = None, **kw) -> dict[str, Any]:
    """Resolve with defaults for unanswered decisions; the record in wire form."""
    res = start(host, attacker, target, declaration, **kw)
    res.run()
    return res.record


def step(record: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in record["steps"] if s["step"] == name)


def changes(record: dict[str, Any], name: str) -> dict[str, tuple[Any, Any]]:
    """``{number: (from, to)}`` changed at step ``name`` (last change wins)."""
    out: dict[str, tuple[Any, Any]] = {}
    for c in step(record, name)["changes"]:
        first = out.get(c["number"], (c["from"], None))[0]
        out[c["number"]] = (first, c["to"])
    return out


def after(record: dict[str, Any], token_id: str) -> dict[str, Any]:
    return record["changes"][token_id]["after"]


def track(health: dict[str, Any]) -> str:
    return "".join(d or "." for d in health["damage"])
