"""``vtt-bridge odds REQUEST.json``: the odds of an attack before it is rolled.

The request file is the one ``vtt-bridge resolve`` reads (tokens inline); its
``dice`` and ``seed`` are ignored, since nothing is rolled for real::

    {"ruleset": "exalted2e", "tokens": [...], "attacker": "anoria",
     "targets": ["soldier"], "declaration": {...}, "answers": {"defense": "parry"}}

Prints the method used and why, the hit chance, the expected damage, the
damage distribution as a table with a bar chart, and each condition's chance.
For an attack on several models (an AOE, a spray) it prints the chance to hit
the target and to hit any model, and a line per model: its chance to be hit,
its mean damage and its chance to take any. Damage is in the ruleset's unit,
whichever method gives the odds.
"""

from __future__ import annotations

import argparse
import json

from ..plugins import make_host
from .resolve import add_answer_option


def _processes(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return n


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
        type=_processes,
        default=None,
        help="processes for Monte Carlo (default: one per usable core; the result does not depend on it)",
    )
    add_answer_option(parser)
    parser.add_argument("--width", type=int, default=40, help="width of the bars in characters (default 40)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..odds import compute_odds, render
    from ..odds.montecarlo import cores
    from .resolve import check_answer_keys, load_request, load_tokens, parse_answers

    host = make_host(plugins=args.plugin)
    data = load_request(args.request)
    tokens = load_tokens(host, data)
    answers = parse_answers(args.answer)
    check_answer_keys(host, data["ruleset"], {**(data.get("answers") or {}), **answers})
    result = compute_odds(
        host,
        data,
        tokens,
        answers=answers,
        mc_samples=args.samples,
        seed=args.seed,
        method=args.method.replace("-", "_"),
        workers=args.workers if args.workers is not None else cores(),
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render(result, width=args.width))
    return 0
