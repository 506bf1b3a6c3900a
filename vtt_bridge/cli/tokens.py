"""``vtt-bridge tokens export|import``: a table's tokens as a JSON file, and back.

``export`` writes every token of a table (scene positions included: they
are token data) with the table's name and settings; ``import`` checks every
token of such a file first — the same checks as ``token.create`` — and
applies all of them in one audit entry, or none, naming each bad token and
field. Together they move a campaign between servers::

    vtt-bridge tokens export --table t-3f9a2c1b0d4e --db old.sqlite -o campaign.json
    vtt-bridge table create "Thursday game" --db new.sqlite
    vtt-bridge tokens import campaign.json --table t-<new id> --db new.sqlite

Run ``import`` while no server uses the store, or send ``tokens.import`` as
the GM instead: a running server re-reads tokens only when a write of its
own finds them changed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import NotFound
from ..plugins import make_host
from ..server.campaign import commit_import, export_document, summary
from .files import read_json
from .store import add_store_options, store_from


def register(sub) -> None:
    parser = sub.add_parser("tokens", help="export a table's tokens to JSON, or import them (all or nothing)")
    actions = parser.add_subparsers(dest="action", required=True)

    export = actions.add_parser("export", help="write a table's tokens (and positions) as JSON")
    export.add_argument("--table", required=True, metavar="TABLE", help="the table id")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: standard output)")
    add_store_options(export)
    export.set_defaults(func=lambda args: _run(args, _export))

    imp = actions.add_parser("import", help="check every token of FILE, then apply all of them or none")
    imp.add_argument("file", help="a file `tokens export` wrote ('-' for standard input)")
    imp.add_argument("--table", required=True, metavar="TABLE", help="the table id")
    imp.add_argument(
        "--replace", action="store_true", help="also delete the table's tokens that are not in the file"
    )
    add_store_options(imp)
    imp.set_defaults(func=lambda args: _run(args, _import))


def _run(args, action) -> int:
    async def go() -> int:
        store = store_from(args)
        await store.open()
        try:
            table = await store.get_table(args.table)
            if table is None:
                names = ", ".join(t.id for t in await store.list_tables()) or "none yet"
                raise NotFound(
                    f"no table {args.table!r} in this store (tables: {names}; `vtt-bridge table list`)", details={}
                )
            return await action(store, table, args)
        finally:
            await store.close()

    return asyncio.run(go())


async def _export(store, table, args) -> int:
    document = export_document(table, await store.tokens(table.id))
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {len(document['tokens'])} tokens of {table.id} ({table.name}) to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _read(path: str) -> Any:
    data = read_json(path, what="a file `vtt-bridge tokens export` wrote")
    # A bare list of tokens is accepted as well as an export.
    return {"tokens": data} if isinstance(data, list) else data


async def _import(store, table, args) -> int:
    host = make_host(plugins=args.plugin)
    document = _read(args.file)
    changes, request = await commit_import(store, host, table.id, document, replace=args.replace or None)
    done = summary(changes, request["tokens"])
    parts = [f"{len(ids)} {what}" for what, ids in done.items() if ids]
    print(f"imported into {table.id} ({table.name}): {', '.join(parts) or 'nothing to change'}")
    return 0
