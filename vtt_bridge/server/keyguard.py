"""Closing the connections of a key that no longer opens its table.

A connection remembers the digest of the key it opened the table with
(:attr:`~.session.Caller.key_digest`). When that key is replaced
(``key.create``, ``vtt-bridge table key``) or revoked (``key.revoke``,
``vtt-bridge table revoke``), its connections are told why — a
``session.closed`` event ``{code, message}`` — and disconnected.

Changes made through this process act at once. Changes made elsewhere (the
CLI on the same store, another server process on the same Redis) are found
by a sweep that compares every connected session with the store's keys every
``interval`` seconds: the store is the truth.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from ..errors import InvalidRequest, NotFound
from ..state import messages
from ..state.keys import GM_USER
from .logs import fields
from .session import Caller, require_gm

if TYPE_CHECKING:  # pragma: no cover
    from .bridge import Bridge

__all__ = ["KeyGuard"]

log = logging.getLogger("vtt_bridge.server")

REASONS = {
    "key_replaced": "your key was replaced by a new one; ask the GM for it",
    "key_revoked": "your key was revoked",
}


class KeyGuard:
    """Keeps every open connection's key current (see the module docstring)."""

    def __init__(self, bridge: Bridge, *, interval: float = 5.0) -> None:
        self.bridge = bridge
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    # -- events -------------------------------------------------------------------

    async def key_create(self, caller: Caller, data: Any) -> dict[str, Any]:
        """``key.create``: a new key, and the user's connections with the old one closed."""
        result = await self.bridge.key_create(caller, data)
        result["closed"] = await self.close_stale(caller.table, result["user"], "key_replaced")
        return result

    async def key_revoke(self, caller: Caller, data: Any) -> dict[str, Any]:
        """``key.revoke {user}``: GM only; the user's key stops working and their connections close."""
        request = self.bridge.messages.load(messages.KeyCreate, data)
        require_gm(caller, "revoke keys")
        user = request["user"]
        if user == GM_USER:
            raise InvalidRequest(
                "the GM key is replaced, not revoked",
                details={"user": ["Issue a new GM key with `vtt-bridge table key TABLE gm`."]},
            )
        if not await self.bridge.store.delete_key(caller.table, user):
            raise NotFound(f"{user!r} has no key at this table", details={"user": user})
        log.info("key revoked", extra=fields(table=caller.table, user=user, by=caller.user))
        closed = await self.close_stale(caller.table, user, "key_revoked")
        return {"user": user, "revoked": True, "closed": closed}

    # -- closing ------------------------------------------------------------------

    async def close_stale(self, table_id: str, user: str | None = None, why: str | None = None) -> int:
        """Close this process's connections to ``table_id`` (of ``user``, if given) whose key is gone."""
        runtime = self.bridge.tables.get(table_id)
        if runtime is None:
            return 0
        sessions = [c for c in runtime.sessions.values() if user is None or c.user == user]
        if not sessions:
            return 0
        current = {k.user: k.digest for k in await self.bridge.store.keys(table_id)}
        closed = 0
        for caller in sessions:
            now = current.get(caller.user)
            if now == caller.key_digest:
                continue
            code = why or ("key_revoked" if now is None else "key_replaced")
            await self.close(caller, code)
            closed += 1
        return closed

    async def close(self, caller: Caller, code: str) -> None:
        sio = self.bridge.sio
        log.info("closing a connection", extra=fields(table=caller.table, user=caller.user, sid=caller.sid, code=code))
        # Signed out first, so nothing else reaches it on this table; then told why, then closed.
        self.bridge.leave(caller.sid)
        with contextlib.suppress(Exception):
            await sio.emit("session.closed", {"code": code, "message": REASONS[code]}, to=caller.sid)
            await sio.disconnect(caller.sid)

    # -- the sweep ----------------------------------------------------------------

    def start(self) -> None:
        if self._task is None and self.interval > 0:
            self._task = asyncio.get_running_loop().create_task(self._sweep(), name="key guard")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            for n, table_id in enumerate([t for t, r in self.bridge.tables.items() if r.sessions]):
                if n and n % 100 == 0:
                    await asyncio.sleep(0)  # many tables: let requests in between
                try:
                    await self.close_stale(table_id)
                except Exception:
                    log.exception("checking keys failed", extra=fields(table=table_id))
