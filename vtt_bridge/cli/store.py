"""Which store a command works on: one option set and one default for every command.

``serve``, ``table`` and ``tokens`` all take ``--db FILE`` (environment
``VTT_BRIDGE_DB``, default ``./vtt_bridge.sqlite``) and ``--redis URL``
(environment ``VTT_BRIDGE_REDIS``), so ``export VTT_BRIDGE_DB=game.sqlite``
once makes every later command use the same file. An option given on the
command line wins over the environment.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import InvalidRequest, NotFound
from ..state import Store, open_store

__all__ = ["DB_ENV", "DEFAULT_DB", "REDIS_ENV", "URL_ENV", "add_store_options", "resolved", "store_flag", "store_from", "where"]

DB_ENV = "VTT_BRIDGE_DB"
REDIS_ENV = "VTT_BRIDGE_REDIS"
# The URL players open (serve --public-url; table create/key print links on it).
URL_ENV = "VTT_BRIDGE_PUBLIC_URL"
DEFAULT_DB = "vtt_bridge.sqlite"


def add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="FILE",
        help=f"SQLite file (default: ${DB_ENV}, else ./{DEFAULT_DB}); the same for serve, table and tokens",
    )
    parser.add_argument(
        "--redis", metavar="URL", help=f"use the Redis store at URL instead (default: ${REDIS_ENV}, if set)"
    )


def resolved(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """``(db, redis)`` after options, then environment, then the default."""
    env = os.environ if environ is None else environ
    db = args.db or env.get(DB_ENV) or DEFAULT_DB
    redis = args.redis or env.get(REDIS_ENV) or None
    if redis and importlib.util.find_spec("redis") is None:
        raise InvalidRequest(
            "--redis needs the Redis extra: pip install 'vtt-bridge[redis]' (or leave out --redis for SQLite)",
            details={},
        )
    return db, redis


def where(db: str, redis: str | None) -> str:
    """The store in words, for messages: ``Redis at URL`` or the SQLite file's absolute path."""
    return f"Redis at {redis}" if redis else f"SQLite file {Path(db).resolve()}"


def store_flag(db: str, redis: str | None) -> str:
    """The option another command needs to reach this store (empty when the environment says it)."""
    if redis:
        return "" if os.environ.get(REDIS_ENV) == redis else f" --redis {redis}"
    return "" if os.environ.get(DB_ENV) == db or (db == DEFAULT_DB and not os.environ.get(DB_ENV)) else f" --db {db}"


def store_from(args: argparse.Namespace, *, create: bool = False) -> Store:
    """The store the options name. Unless ``create``, a SQLite file must exist already:
    a mistyped ``--db`` is an error, not a new empty store."""
    db, redis = resolved(args)
    if not redis and not create and not Path(db).exists():
        raise NotFound(
            f"no store at {Path(db).resolve()}: give --db FILE or set {DB_ENV} "
            "(`vtt-bridge table create NAME` makes a new one)",
            details={},
        )
    return open_store(db=db, redis=redis)
