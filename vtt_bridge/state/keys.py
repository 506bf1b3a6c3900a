"""Table keys: made here, stored only as digests, checked in constant time.

A key is 32 random bytes (URL-safe text). Because it is random and long, a
plain SHA-256 digest is enough to store it safely (the same reasoning as API
tokens); a slow password hash would only add latency to every connect.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable

from .records import KeyInfo

__all__ = ["GM_USER", "digest", "match_key", "new_key", "new_id"]

# The user name the table's GM key is bound to; no player may take it.
GM_USER = "gm"


def new_key() -> str:
    return secrets.token_urlsafe(32)


def new_id(prefix: str) -> str:
    """A short random id (``t-3f9a2c1b0d4e``) for tables, attacks and tokens."""
    return f"{prefix}-{secrets.token_hex(6)}"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def match_key(key: str, stored: Iterable[KeyInfo]) -> KeyInfo | None:
    """The stored key ``key`` opens, or ``None``.

    Every stored digest is compared, each with ``hmac.compare_digest``, and the
    loop never stops early, so the time taken says nothing about which (if any)
    key came close.
    """
    wanted = digest(key)
    found = None
    for info in stored:
        if hmac.compare_digest(wanted, info.digest):
            found = info
    return found
