"""``vtt-bridge resolve REQUEST.json``: resolve one attack and print its card.

A request file holds the tokens inline::

    {"ruleset": "exalted2e", "tokens": [...], "attacker": "anoria",
     "targets": ["soldier"], "declaration": {...},
     "seed": 7, "dice": [7, 10, 3], "answers": {"defense": "parry"}}
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..engine.tokens import Token
from ..errors import InvalidRequest
from ..plugins import make_host


def register(sub) -> None:
    parser = sub.add_parser("resolve", help="resolve an attack request file and print it step by step")
    parser.add_argument("request", help="path to a request JSON file ('-' for standard input)")
    parser.add_argument("--json", action="store_true", help="print the full resolution record as JSON")
    parser.add_argument("--seed", type=int, help="seed for the dice (default: the file's, else random)")
    parser.add_argument("--dice", help="scripted faces, comma separated: 7,10,3,...")
    parser.add_argument(
        "--answer", action="append", default=[], metavar="KEY=OPTION", help="answer a decision in advance"
    )
    parser.set_defaults(func=run)


def load_request(path: str) -> dict[str, Any]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"{path} is not JSON: {exc}", details={"request": [str(exc)]}) from None
    if not isinstance(data, dict):
        raise InvalidRequest("a request is a JSON object", details={"request": ["Not an object."]})
    return data


def load_tokens(host: Any, data: Mapping[str, Any]) -> dict[str, Token]:
    """The request's inline tokens, each ``system`` validated by its ruleset's schema."""
    ruleset = data.get("ruleset")
    if not isinstance(ruleset, str):
        raise InvalidRequest("the request names no ruleset", details={"ruleset": ["Missing data for required field."]})
    host.ruleset(ruleset)
    tokens = {}
    for raw in data.get("tokens", []):
        if not isinstance(raw, Mapping):
            raise InvalidRequest("a token is an object", details={"tokens": ["Not a valid mapping."]})
        owner = raw.get("ruleset", ruleset)
        system = host.load_system(owner, raw.get("system", {}))
        token = Token.from_dict({**raw, "ruleset": owner, "system": system})
        tokens[token.id] = token
    return tokens


def parse_answers(items: list[str]) -> dict[str, str]:
    answers = {}
    for item in items:
        key, _, option = item.partition("=")
        if not key or not option:
            raise InvalidRequest(f"--answer takes KEY=OPTION, got {item!r}", details={"answer": [item]})
        answers[key] = option
    return answers


def resolve_request(host, data: dict[str, Any], *, seed=None, dice=None, answers=None):
    """Validate the inline tokens and resolve the request with defaults for unanswered decisions."""
    tokens = load_tokens(host, data)
    ruleset = data["ruleset"]
    given = dict(data.get("answers") or {})
    given.update(answers or {})
    if dice is None:
        dice = data.get("dice")
    if seed is None:
        seed = data.get("seed")
    if seed is None and dice is None:
        seed = secrets.randbits(53)  # as the server: exact in every JSON client
    res = host.start(
        ruleset,
        tokens,
        attacker=data.get("attacker", ""),
        targets=list(data.get("targets", [])),
        declaration=data.get("declaration", {}),
        seed=seed,
        dice=dice,
        answers=given,
    )
    res.run()
    return res.record


def run(args) -> int:
    from .card import render

    host = make_host(plugins=args.plugin)
    data = load_request(args.request)
    dice = [int(x) for x in args.dice.split(",") if x.strip()] if args.dice else None
    record = resolve_request(host, data, seed=args.seed, dice=dice, answers=parse_answers(args.answer))
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print(render(record))
    return 0
