"""``vtt-bridge odds REQUEST.json``: the odds of an attack before it is rolled.

The request file is the one ``vtt-bridge resolve`` reads (tokens inline); its
``dice`` and ``seed`` are ignored, since nothing is rolled for real::

    {"ruleset": "exalted2e", "tokens": [...], "attacker": "anoria",
     "targets": ["soldier"], "declaration": {...}, "answers": {"defense": "parry"}}

Prints the method used and why, the hit chance, the expected damage, the
damage distribution as a table with a bar chart, and each condition's chance.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ..engine.tokens import Token
from ..errors import InvalidRequest
from ..plugins import make_host


def register(sub) -> None:
    parser = sub.add_parser(
        "odds",
        help="the chance to hit, the damage distribution and conditions of an attack, before rolling",
        description="Exact when the ruleset's model covers the attack, else Monte Carlo through the real pipeline.",
    )
    parser.add_argument("request", help="path to a request JSON file ('-' for standard input)")
    parser.add_argument("--json", action="store_true", help="print the odds as JSON (the attack.odds payload)")
    parser.add_argument(
        "--method",
        choices=("auto", "exact", "monte-carlo"),
        default="auto",
        help="auto (default): exact when available; exact: fail if not; monte-carlo: always simulate",
    )
    parser.add_argument("--samples", type=int, default=10_000, help="Monte Carlo resolutions (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the Monte Carlo resolutions (default 0)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes for Monte Carlo (default: one per core; the result does not depend on it)",
    )
    parser.add_argument(
        "--answer", action="append", default=[], metavar="KEY=OPTION", help="answer a decision in advance"
    )
    parser.add_argument("--width", type=int, default=40, help="width of the bars in characters (default 40)")
    parser.set_defaults(func=run)


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


def run(args) -> int:
    from ..odds import compute_odds, render
    from .resolve import load_request

    host = make_host(plugins=args.plugin)
    data = load_request(args.request)
    tokens = load_tokens(host, data)
    result = compute_odds(
        host,
        data,
        tokens,
        answers=parse_answers(args.answer),
        mc_samples=args.samples,
        seed=args.seed,
        method=args.method.replace("-", "_"),
        workers=args.workers,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render(result, width=args.width))
    return 0
