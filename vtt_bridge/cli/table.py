"""``vtt-bridge table``: create tables, issue and revoke keys, list tables, choose packs, check a log.

Works on the same store the server uses (``--db`` or ``--redis``, or the
``VTT_BRIDGE_DB`` / ``VTT_BRIDGE_REDIS`` environment variables), also while
the server runs: keys are read from the store on every connect, and a running
server closes the connections of a replaced or revoked key within its
``key_check_interval``. Keys are printed once and stored only as digests.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from marshmallow import ValidationError

from ..errors import InvalidRequest, NotFound
from ..plugins import make_host
from ..server.bridge import create_table, issue_key
from ..state import Store, replay
from ..state.store import AUDIT_KEEPS
from ..state.messages import USER_NAME
from .store import DEFAULT_PACKS_ENV, URL_ENV, add_store_options, pack_list, resolved, store_from, where


def register(sub) -> None:
    parser = sub.add_parser("table", help="create tables and keys, list tables, check a table's audit log")
    actions = parser.add_subparsers(dest="action", required=True)

    create = actions.add_parser("create", help="create a table; prints its id and the GM key")
    create.add_argument("name")
    create.add_argument("--decision-timeout", type=float, metavar="S", help="seconds players have to answer")
    create.add_argument(
        "--audit-keep", type=int, metavar="N",
        help="audit entries the table keeps, the oldest going first (0: all; default: the server's, 1000)",
    )
    create.add_argument("--public-url", metavar="URL", help=f"the URL players open, to print links on (default: ${URL_ENV})")
    create.add_argument(
        "--packs",
        metavar="P,Q",
        help=f"the installed packs enabled at the table, comma separated, 'none' for none "
        f"(default: ${DEFAULT_PACKS_ENV}, else the server's --default-packs when it first opens the table)",
    )
    add_store_options(create)
    create.set_defaults(func=lambda args: _run(args, _create))

    key = actions.add_parser("key", help="issue (or replace) a player's key; 'gm' replaces the GM key")
    key.add_argument("table")
    key.add_argument("user")
    key.add_argument("--public-url", metavar="URL", help=f"the URL players open, to print links on (default: ${URL_ENV})")
    add_store_options(key)
    key.set_defaults(func=lambda args: _run(args, _key))

    revoke = actions.add_parser(
        "revoke", help="revoke a player's key; a running server closes their connections within seconds"
    )
    revoke.add_argument("table")
    revoke.add_argument("user")
    add_store_options(revoke)
    revoke.set_defaults(func=lambda args: _run(args, _revoke))

    listing = actions.add_parser("list", help="list the tables")
    listing.add_argument("--json", action="store_true")
    add_store_options(listing)
    listing.set_defaults(func=lambda args: _run(args, _list))

    packs = actions.add_parser(
        "packs", help="list the installed packs and which are enabled at a table; --enable/--disable change it"
    )
    packs.add_argument("table")
    packs.add_argument("--enable", action="append", default=[], metavar="PACK", help="enable an installed pack; repeatable")
    packs.add_argument("--disable", action="append", default=[], metavar="PACK", help="disable a pack; repeatable")
    packs.add_argument("--json", action="store_true")
    add_store_options(packs)
    packs.set_defaults(func=lambda args: _run(args, _packs))

    check = actions.add_parser("check", help="replay a table's audit log and compare it with its tokens")
    check.add_argument("table")
    add_store_options(check)
    check.set_defaults(func=lambda args: _run(args, _check))


def _run(args, action) -> int:
    async def go() -> int:
        store = store_from(args, create=action is _create)
        await store.open()
        try:
            return await action(store, args)
        finally:
            await store.close()

    return asyncio.run(go())


async def _create(store: Store, args) -> int:
    settings: dict[str, Any] = {}
    if args.decision_timeout is not None:
        if not 0.05 <= args.decision_timeout <= 3600:
            raise InvalidRequest("--decision-timeout is 0.05 to 3600 seconds", details={})
        settings["decision_timeout"] = args.decision_timeout
    chosen = args.packs if args.packs is not None else os.environ.get(DEFAULT_PACKS_ENV)
    if chosen is not None:
        settings["packs"] = list(make_host(plugins=args.plugin).check_packs(pack_list(chosen), field="--packs"))
    if args.audit_keep is not None:
        if not AUDIT_KEEPS[0] <= args.audit_keep <= AUDIT_KEEPS[1]:
            raise InvalidRequest("--audit-keep is 0 (all) to 10000000 entries", details={})
        settings["audit_keep"] = args.audit_keep
    table, key = await create_table(store, args.name, settings=settings)
    print(f"table:   {table.id}")
    print(f"name:    {table.name}")
    print(f"GM key:  {key}")
    if "packs" in settings:
        print(f"packs:   {', '.join(settings['packs']) or 'none'}")
    print(f"store:   {where(*resolved(args))}")
    print(f"GM link: {player_link(args, table.id, key)}")
    print("(the key is shown once; `vtt-bridge table key TABLE gm` issues a new one)")
    print(f"next: a key per player, `vtt-bridge table key {table.id} NAME`")
    return 0


async def _key(store: Store, args) -> int:
    try:
        USER_NAME(args.user)
    except ValidationError as exc:
        raise InvalidRequest(f"{args.user!r} cannot be a user name: {exc.messages[0]}", details={}) from None
    if args.user == "default":
        raise InvalidRequest("'default' is reserved for everyone's ownership level", details={})
    key = await issue_key(store, args.table, args.user)
    print(f"key for {args.user} at {args.table}: {key}")
    print(f"link:   {player_link(args, args.table, key)}")
    return 0


def player_link(args, table_id: str, key: str) -> str:
    """The web table's link for a key, on the server's public URL when one is known."""
    base = (args.public_url or os.environ.get(URL_ENV) or "").rstrip("/")
    return f"{base or '<server URL>'}/#table={table_id}&key={key}"


async def _revoke(store: Store, args) -> int:
    if await store.get_table(args.table) is None:
        raise NotFound(f"no table {args.table!r}", details={})
    if not await store.delete_key(args.table, args.user):
        raise NotFound(f"{args.user!r} has no key at {args.table}", details={})
    print(f"revoked the key of {args.user} at {args.table}")
    return 0


async def _list(store: Store, args) -> int:
    tables = await store.list_tables()
    if args.json:
        print(json.dumps([t.to_dict() for t in tables], indent=2))
        return 0
    if not tables:
        print("no tables yet: vtt-bridge table create NAME")
    for table in tables:
        tokens = len(await store.tokens(table.id))
        users = sorted(k.user for k in await store.keys(table.id))
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(table.created))
        print(f"{table.id}  {table.name!r:24s} created {created}  {tokens} tokens  keys: {', '.join(users)}")
    return 0


async def _packs(store: Store, args) -> int:
    table = await store.get_table(args.table)
    if table is None:
        raise NotFound(f"no table {args.table!r}", details={})
    host = make_host(plugins=args.plugin)
    installed = host.packs()
    host.check_packs(args.enable, field="--enable")
    host.check_packs(args.disable, field="--disable")
    both = sorted(set(args.enable) & set(args.disable))
    if both:
        raise InvalidRequest(f"{both[0]!r} is both enabled and disabled", details={})
    chosen = table.packs
    if args.enable or args.disable:
        start = chosen if chosen is not None else default_packs(host)
        wanted = [p for p in installed if (p in start or p in args.enable) and p not in args.disable]
        table = await store.update_settings(args.table, {"packs": wanted})
        chosen = table.packs
    versions = {p.name: p.version for p in host.plugins()}
    if args.json:
        print(json.dumps({"table": table.id, "packs": chosen, "installed": list(installed), "rulesets": list(host.ruleset_plugins())}))
        return 0
    if chosen is None:
        print(f"{table.id}: no packs chosen yet: the server's default applies (serve --default-packs, else every installed pack)")
    enabled = chosen if chosen is not None else ()
    for name in installed:
        mark = "on " if name in enabled else ("?  " if chosen is None else "off")
        print(f"  {mark} {name} {versions.get(name) or ''}".rstrip())
    for name in host.ruleset_plugins():
        print(f"  on  {name} {versions.get(name) or ''} (ruleset: always on)".rstrip())
    return 0


def default_packs(host) -> tuple[str, ...]:
    """The operator's default packs: ``$VTT_BRIDGE_DEFAULT_PACKS``, else every installed pack."""
    text = os.environ.get(DEFAULT_PACKS_ENV)
    return host.check_packs(pack_list(text), field=DEFAULT_PACKS_ENV) if text is not None else host.packs()


async def _check(store: Store, args) -> int:
    if await store.get_table(args.table) is None:
        raise NotFound(f"no table {args.table!r}", details={})
    entries = await store.audit(args.table)
    trimmed = await store.audit_trimmed(args.table) > 0
    replayed = replay(entries, trimmed=trimmed)
    stored = {tid: t.to_dict() for tid, t in (await store.tokens(args.table)).items()}
    if trimmed:
        # Tokens no kept entry touches cannot be checked.
        touched = {tid for entry in entries for tid in entry.changes}
        stored = {tid: t for tid, t in stored.items() if tid in touched or tid in replayed}
    if replayed == stored:
        kept = f" (entries {entries[0].seq}–{entries[-1].seq}: older ones trimmed by audit_keep)" if trimmed else ""
        print(f"ok: {len(entries)} audit entries{kept} replay to the {len(stored)} stored tokens")
        return 0
    differ = sorted(set(replayed) ^ set(stored) | {t for t in replayed if t in stored and replayed[t] != stored[t]})
    print(f"MISMATCH: tokens {', '.join(differ)} differ from the replayed audit log")
    return 1
