"""``vtt-bridge resolve REQUEST.json``: resolve one attack and print its card.

A request file holds the tokens inline::

    {"ruleset": "exalted2e", "tokens": [...], "attacker": "anoria",
     "targets": ["soldier"], "declaration": {...},
     "seed": 7, "dice": [7, 10, 3], "answers": {"defense": "parry"}}

An answer given in advance (in the file or with ``--answer``) is an option id or
``{"option": ..., "params": {...}}``; on the command line ``KEY=OPTION``,
``KEY=OPTION:{PARAMS JSON}`` or ``KEY={"option": ..., "params": ...}``. A key no
question of the ruleset uses is refused, naming the questions there are.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Mapping
from typing import Any

from ..engine.steps import Step
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
    add_answer_option(parser)
    parser.set_defaults(func=run)


ANSWER_HELP = (
    "answer a decision in advance: KEY=OPTION, KEY=OPTION:{PARAMS JSON} "
    """(e.g. 'defense=parry:{"first_excellency": 2}') or KEY={"option": ..., "params": {...}}; repeatable"""
)


def add_answer_option(parser) -> None:
    parser.add_argument("--answer", action="append", default=[], metavar="KEY=OPTION", help=ANSWER_HELP)


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


def parse_answers(items: list[str]) -> dict[str, Any]:
    """``--answer`` values as the answers a request carries: an option id, or ``{"option", "params"}``."""
    answers: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not key or not value:
            raise InvalidRequest(
                f"--answer takes KEY=OPTION or KEY=OPTION:{{PARAMS JSON}}, got {item!r}", details={"answer": [item]}
            )
        answers[key] = _answer_value(key, value, item)
    return answers


def _answer_value(key: str, value: str, item: str) -> Any:
    if value.startswith("{"):
        data = json_object(value, item)
        if not isinstance(data.get("option"), str) or not isinstance(data.get("params", {}), dict):
            raise InvalidRequest(
                f'--answer {key}={{...}} takes {{"option": ID, "params": {{...}}}}, got {value!r}',
                details={"answer": [item]},
            )
        return {"option": data["option"], **({"params": data["params"]} if data.get("params") else {})}
    at = value.find(":{")  # option ids may hold a colon ("my-pack:iron-skin"); params start at ":{"
    if at < 0:
        return value
    option, params = value[:at], json_object(value[at + 1 :], item)
    if not option:
        raise InvalidRequest(f"--answer {key}=: name the option before its params, got {item!r}", details={"answer": [item]})
    return {"option": option, "params": params}


def json_object(text: str, item: str, option: str = "answer") -> dict[str, Any]:
    """``text`` as a JSON object, else a one-line error naming ``--option item``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"--{option} {item!r}: the params are not valid JSON ({exc.msg})", details={option: [item]}) from None
    if not isinstance(data, dict):
        raise InvalidRequest(f"--{option} {item!r}: the params are a JSON object", details={option: [item]})
    return data


def decision_names(steps: tuple[Step, ...] | list[Step]) -> list[str]:
    """The names of the questions a ruleset's steps may ask, in rulebook order."""
    names: list[str] = []
    for step in steps:
        if step.ask is not None and step.ask.name not in names:
            names.append(step.ask.name)
        names.extend(n for n in decision_names(step.steps) if n not in names)
    return names


def check_answer_keys(host, ruleset: str, given: Mapping[str, Any]) -> None:
    """Refuse an answer for a key no question of ``ruleset`` uses (a typo answers nothing), naming those there are.

    A key is a question's name (``defense``) or a key of one asked in a nested
    attack or per item (``counterattack/defense``, ``boost_attack[w2]``).
    """
    names = decision_names(host.ruleset(ruleset).steps)
    unknown = [key for key in given if _base_name(key) not in names]
    if unknown:
        raise InvalidRequest(
            f"no question of {ruleset} is called {unknown[0]!r}: the questions are {', '.join(names) or 'none'}",
            details={"answers": {key: ["No question uses this key."] for key in unknown}},
        )


def _base_name(key: str) -> str:
    return key.rsplit("/", 1)[-1].split("[", 1)[0]


def unused_answers(record: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """The given answers' keys no question of this attack asked (it ended before them, say)."""
    asked = set()
    for d in record.get("decisions", ()):
        asked.update((d["key"], d["name"]))
    return [key for key in given if key not in asked]


def resolve_request(host, data: dict[str, Any], *, seed=None, dice=None, answers=None):
    """Validate the inline tokens and resolve the request with defaults for unanswered decisions."""
    tokens = load_tokens(host, data)
    ruleset = data["ruleset"]
    given = dict(data.get("answers") or {})
    given.update(answers or {})
    check_answer_keys(host, ruleset, given)
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
    answers = parse_answers(args.answer)
    record = resolve_request(host, data, seed=args.seed, dice=dice, answers=answers)
    given = {**(data.get("answers") or {}), **answers}
    unused = unused_answers(record, given)
    if unused:
        asked = ", ".join(dict.fromkeys(d["key"] for d in record.get("decisions", ()))) or "none"
        print(f"note: not asked in this attack, so not used: {', '.join(unused)} (asked: {asked})", file=sys.stderr)
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print(render(record))
    return 0
