"""``vtt-bridge replay --table T --attack N``: what if a logged attack had gone otherwise?

Runs the attack again under its recorded seed (or its recorded dice) with a
pack enabled (``--with``) or disabled (``--without``), a Charm added
(``--charm``) or removed (``--no-charm``), or a question answered differently
(``--answer``), and prints the logged card and the what-if side by side, step
by step, each line that differs marked. Nothing is applied: the GM applies a
what-if from the web table (or ``attack.whatif.apply``), as a new attack.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import unicodedata
from typing import Any

from ..errors import InvalidRequest, NotFound
from ..plugins import make_host
from ..whatif import what_if
from .card import step_lines
from .resolve import add_answer_option, json_object, parse_answers
from .store import add_store_options, store_from


def register(sub) -> None:
    parser = sub.add_parser(
        "replay",
        help="what if: a logged attack again under its recorded dice, with a pack, Charm or answer changed",
        description="Prints the logged card and the what-if side by side; nothing is applied.",
    )
    parser.add_argument("--table", required=True, help="the table's id")
    parser.add_argument("--attack", required=True, metavar="N", help="the attack's id (atk-...) or its audit number")
    parser.add_argument("--with", dest="enable", action="append", default=[], metavar="PACK", help="enable a pack; repeatable")
    parser.add_argument("--without", dest="disable", action="append", default=[], metavar="PACK", help="disable a pack; repeatable")
    parser.add_argument(
        "--charm", action="append", default=[], metavar="ID[:{PARAMS}]", help='add a Charm, e.g. first-excellency:{"dice": 3}; repeatable'
    )
    parser.add_argument("--no-charm", action="append", default=[], metavar="ID", help="take a declared Charm out; repeatable")
    add_answer_option(parser)
    parser.add_argument("--json", action="store_true", help="print the what-if as JSON (attack.whatif's reply)")
    parser.add_argument("--width", type=int, default=None, help="width of the printout (default: the terminal's)")
    add_store_options(parser)
    parser.set_defaults(func=run)


def parse_charm(text: str) -> dict[str, Any]:
    charm_id, sep, params = text.partition(":")
    if not charm_id.strip():
        raise InvalidRequest(f"--charm takes ID or ID:{{PARAMS JSON}}, got {text!r}", details={"charm": [text]})
    return {"id": charm_id.strip(), **(json_object(params, text, 'charm') if sep else {})}


def run(args) -> int:
    host = make_host(plugins=args.plugin)
    answers = parse_answers(args.answer)
    charms = [parse_charm(c) for c in args.charm]

    async def go():
        store = store_from(args)
        await store.open()
        try:
            table = await store.get_table(args.table)
            if table is None:
                raise NotFound(f"no table {args.table!r}", details={"table": args.table})
            return await store.audit(args.table), table.packs
        finally:
            await store.close()

    entries, table_packs = asyncio.run(go())
    result = what_if(
        host,
        entries,
        args.attack,
        enable=args.enable,
        disable=args.disable,
        answers=answers,
        add_charms=charms,
        remove_charms=args.no_charm,
        table_packs=table_packs,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    width = args.width or shutil.get_terminal_size((160, 40)).columns
    print(side_by_side(result, width))
    return 0


def _changed(result) -> str:
    c = result.changed
    parts = [f"with {p}" for p in c["with"]] + [f"without {p}" for p in c["without"]]
    parts += [f"answer {k}={_answer(v)}" for k, v in c["answers"].items()]
    parts += [f"Charm {ch['id']} added" for ch in c["add_charms"]] + [f"Charm {ch} removed" for ch in c["remove_charms"]]
    return ", ".join(parts) or "nothing changed"


def _answer(value: Any) -> str:
    if isinstance(value, dict):
        params = f":{json.dumps(value['params'], sort_keys=True)}" if value.get("params") else ""
        return f"{value['option']}{params}"
    return str(value)


def _cells(text: str, width: int) -> str:
    """``text`` cut or padded to ``width`` terminal cells (a wide emoji takes two)."""
    out, used = [], 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used + w > width:
            out.append("…" if used < width else "")
            used += 1
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * max(0, width - used)


def side_by_side(result, width: int = 160) -> str:
    """The logged card and the what-if in two columns; ``≠`` marks a step or outcome that differs."""
    col = max(30, (width - 5) // 2)
    original, new = result.original, result.record
    od = {d["key"]: d for d in original.get("decisions") or ()}
    nd = {d["key"]: d for d in new.get("decisions") or ()}
    lines = [
        f"what if: attack {result.attack} ({original['ruleset']}: {original['attacker']} → {', '.join(original['targets'])}),"
        f" {_changed(result)} — nothing is applied",
        f"packs: {', '.join(sorted(original.get('packs') or {})) or '(not recorded)'}  →  "
        f"{', '.join(sorted(new.get('packs') or {}))}",
    ]
    if result.dropped:
        lines.append(f"left out of the declaration (their pack is disabled): {', '.join(result.dropped)}")
    lines.append(f"  {_cells('logged', col)} │ what if")
    for a, b, same in result.steps:
        left = step_lines(a, od) if a is not None else ["  (not reached)"]
        right = step_lines(b, nd) if b is not None else ["  (not reached)"]
        mark = "  " if same else "≠ "
        for i in range(max(len(left), len(right))):
            l_text = left[i] if i < len(left) else ""
            r_text = right[i] if i < len(right) else ""
            flag = mark if i == 0 else ("≠ " if not same and l_text != r_text else "  ")
            lines.append(f"{flag}{_cells(l_text, col)} │ {r_text}")
    if result.outcome:
        for key, (a, b) in result.outcome.items():
            lines.append(f"≠ outcome {key}: {a} → {b}")
    else:
        lines.append("  outcome: the same")
    return "\n".join(lines)
