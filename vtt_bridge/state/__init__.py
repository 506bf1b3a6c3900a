"""Persistent state: tables, keys, tokens and the append-only audit log.

Two stores share one interface (:class:`Store`): :class:`SQLiteStore`, the
embedded default, and :class:`RedisStore` for several server processes.
The marshmallow schemas of every socket message live in :mod:`.messages`.
"""

from __future__ import annotations

from .keys import GM_USER, digest, match_key, new_id, new_key
from .records import AuditDraft, AuditEntry, KeyInfo, TableInfo, TokenChange
from .redis import Published, RedisStore
from .replay import ReplayMismatch, replay
from .sqlite import SQLiteStore
from .store import Store

__all__ = [
    "GM_USER",
    "AuditDraft",
    "AuditEntry",
    "KeyInfo",
    "Published",
    "RedisStore",
    "ReplayMismatch",
    "SQLiteStore",
    "Store",
    "TableInfo",
    "TokenChange",
    "digest",
    "match_key",
    "new_id",
    "new_key",
    "open_store",
    "replay",
]


def open_store(*, db: str | None = None, redis: str | None = None) -> Store:
    """The store a command line asks for: Redis when a URL is given, else SQLite."""
    if redis:
        return RedisStore(redis)
    return SQLiteStore(db or "vtt_bridge.sqlite")
