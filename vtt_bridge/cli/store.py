"""Which store a command works on: one option set and one default for every command.

``serve``, ``table`` and ``tokens`` all take ``--db FILE`` (environment
``VTT_BRIDGE_DB``, default ``./vtt_bridge.sqlite``) and ``--redis URL``
(environment ``VTT_BRIDGE_REDIS``), so ``export VTT_BRIDGE_DB=game.sqlite``
once makes every later command use the same file. An option given on the
command line wins over the environment.

With ``--redis``, the TLS and timeout options (``--redis-ca``,
``--redis-cert``, ``--redis-key``, ``--redis-timeout``, ``--redis-wait``; or
``VTT_BRIDGE_REDIS_CA`` and so on) are written into the URL's query, so
every process of a ``--workers`` group gets them with the URL.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import InvalidRequest, NotFound
from ..state import Store, open_store

__all__ = ["DEFAULT_PACKS_ENV", "DB_ENV", "pack_list", "DEFAULT_DB", "REDIS_ENV", "URL_ENV", "add_store_options", "resolved", "store_flag", "store_from", "where"]

DB_ENV = "VTT_BRIDGE_DB"
REDIS_ENV = "VTT_BRIDGE_REDIS"
# The URL players open (serve --public-url; table create/key print links on it).
URL_ENV = "VTT_BRIDGE_PUBLIC_URL"
DEFAULT_DB = "vtt_bridge.sqlite"
# The packs a new table starts with (serve --default-packs, table create): comma separated, "none" for none.
DEFAULT_PACKS_ENV = "VTT_BRIDGE_DEFAULT_PACKS"
# --redis-X → (the URL query's name, its environment variable, what it takes).
REDIS_OPTIONS = {
    "ca": ("ca", "VTT_BRIDGE_REDIS_CA", "FILE", "CA bundle (PEM) to check Redis's TLS certificate with (rediss://)"),
    "cert": ("cert", "VTT_BRIDGE_REDIS_CERT", "FILE", "client certificate (PEM) for a Redis that asks for one"),
    "key": ("key", "VTT_BRIDGE_REDIS_KEY", "FILE", "the client certificate's private key (PEM)"),
    "timeout": ("timeout", "VTT_BRIDGE_REDIS_TIMEOUT", "S",
                "seconds to connect to Redis, and again for any one command (default: 2)"),
    "wait": ("wait", "VTT_BRIDGE_REDIS_WAIT", "N",
             "acknowledge a commit only once N Redis replicas have it (WAIT; default: 0). See docs/deploy.md"),
}


def add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="FILE",
        help=f"SQLite file (default: ${DB_ENV}, else ./{DEFAULT_DB}); the same for serve, table and tokens",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help=f"use the Redis store at URL instead (default: ${REDIS_ENV}, if set): redis://, rediss:// (TLS), "
        "unix://, redis+sentinel://HOST:PORT,.../SERVICE, redis+cluster://HOST:PORT,...",
    )
    for name, (_query, env, metavar, text) in REDIS_OPTIONS.items():
        parser.add_argument(f"--redis-{name}", metavar=metavar, help=f"{text} (default: ${env})")


def pack_list(text: str) -> list[str]:
    """``P,Q`` (``--packs``, ``--default-packs``) as pack names; ``none`` (or nothing) for none."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    return [] if names == ["none"] else names


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
    if redis:
        redis = _with_options(redis, args, env)
    return db, redis


def _with_options(url: str, args: argparse.Namespace, env: Mapping[str, str]) -> str:
    """The URL with the --redis-* options (or their environment variables) in its query."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    for name, (key, variable, _metavar, _text) in REDIS_OPTIONS.items():
        value = getattr(args, f"redis_{name}", None) or env.get(variable)
        if value:
            if name in ("ca", "cert", "key"):
                if not Path(value).is_file():
                    raise NotFound(f"--redis-{name}: no such file {value!r}", details={})
                value = str(Path(value).resolve())
            query[key] = value
    if not query:
        return url
    if "timeout" in query:
        query.setdefault("connect_timeout", query["timeout"])
    from ..state.redis_link import parse_url

    full = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))
    try:
        parse_url(full)
    except ValueError as exc:
        raise InvalidRequest(f"--redis: {exc}", details={}) from None
    return full


def where(db: str, redis: str | None) -> str:
    """The store in words, for messages: ``Redis at URL`` or the SQLite file's absolute path."""
    if redis:
        from ..state.redis_link import parse_url

        try:
            return f"Redis at {parse_url(redis).describe()}"  # without its password
        except ValueError:
            return "Redis"
    return f"SQLite file {Path(db).resolve()}"


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
