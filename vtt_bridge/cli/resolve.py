"""``vtt-bridge resolve REQUEST.json``: resolve one attack and print its card.

A request file holds the tokens inline::

    {"ruleset": "exalted2e", "tokens": [...], "attacker": "anoria",
     "targets": ["soldier"], "declaration": {...},
     "seed": 7, "dice": [7, 10, 3], "answers": {"defense": "parry"}}
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

from ..engine.tokens import Token
from ..errors import InvalidRequest
from ..plugins import make_host
from ..state import messages
from .files import read_json


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
    """A request file, checked with the schema the server uses for ``attack`` (plus inline ``tokens``)."""
    data = read_json(path, what="a JSON request")
    try:
        return messages.load(messages.RequestFile(), data)
    except InvalidRequest as exc:
        name = "standard input" if path == "-" else path
        unknown = sorted(str(k) for k, v in exc.details.items() if v == ["Unknown field."])
        what = f"unknown key {unknown[0]!r} in the request" if unknown else "not a valid request"
        raise InvalidRequest(f"{name}: {what}", details=exc.details) from None


def parse_dice(text: str | None) -> list[int] | None:
    """``--dice 7,10,3`` as faces; anything else is a one-line error saying what is expected."""
    if text is None:
        return None
    faces = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if not item.isdigit() or not 1 <= int(item) <= 1000:
            raise InvalidRequest(
                f"--dice takes faces from 1 up, separated by commas (e.g. --dice 7,10,3); {item!r} is not one",
                details={},
            )
        faces.append(int(item))
    return faces


def load_tokens(host: Any, data: Mapping[str, Any]) -> dict[str, Token]:
    """The request's inline tokens, each ``system`` and ``flags`` validated as the server does.

    The request's own keys are checked by :func:`load_request`.
    """
    ruleset = data.get("ruleset")
    if not isinstance(ruleset, str):
        raise InvalidRequest("the request names no ruleset", details={"ruleset": ["Missing data for required field."]})
    host.ruleset(ruleset)
    tokens = {}
    for raw in data.get("tokens", []):
        if not isinstance(raw, Mapping):
            raise InvalidRequest("a token is an object", details={"tokens": ["Not a valid mapping."]})
        owner = raw.get("ruleset", ruleset)
        token = host.validate_token({**raw, "ruleset": owner, "system": raw.get("system", {})})
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
    dice = parse_dice(args.dice)
    record = resolve_request(host, data, seed=args.seed, dice=dice, answers=parse_answers(args.answer))
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print(render(record))
    return 0
