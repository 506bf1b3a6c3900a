"""Putting a decision to the person who makes it, over socket.io ``call``.

The deciders are the connected owners of the token the rules name (the GM
when none is connected; see :meth:`TableRuntime.deciders`). Each of their
connections gets a ``decision`` event; the first acknowledgement wins. The
outcome is reported to the engine explicitly: an answer, or the rules'
default with why — ``timeout`` (nobody answered in time), ``disconnect``
(nobody to ask, or everyone asked went away), ``invalid`` (the answer was
not one of the options). The others who were asked get ``decision.closed``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import socketio

from ..state.store import Store
from .logs import fields
from .tables import TableRuntime
from .workers import RemoteDecision

__all__ = ["Prompter"]

log = logging.getLogger("vtt_bridge.server")


class Prompter:
    def __init__(self, sio: socketio.AsyncServer, store: Store) -> None:
        self.sio = sio
        self.store = store

    async def ask(
        self, runtime: TableRuntime, decision: RemoteDecision, attack: Mapping[str, Any]
    ) -> tuple[Any, str, tuple[list[str], str | None]]:
        """Put ``decision`` to its deciders: ``(answer, how, (who was asked, who answered))``.

        ``how`` is ``answered``, ``timeout`` or ``disconnect``; the resolver checks
        the answer against the options and may still settle it as ``invalid``.
        """
        timeout = decision.timeout if decision.timeout is not None else runtime.decision_timeout
        # With several server processes the decider may be connected to another
        # one: socket.io's Redis manager carries the question there and the answer back.
        sids = runtime.deciders(decision.token, await self.store.sessions(runtime.id))
        if not sids:
            return None, "disconnect", ([], None)
        # The steps before the question reach the table before the question does.
        await runtime.outbox.drain()
        payload = {**decision.to_dict(), "timeout": timeout, "attack": dict(attack)}
        answer, how, winner = await self._ask(runtime, sids, payload, timeout)
        return answer, how, (sids, winner)

    async def closed(
        self,
        runtime: TableRuntime,
        asked: tuple[list[str], str | None],
        attack: Mapping[str, Any],
        decision: RemoteDecision,
        how: str,
    ) -> None:
        """Tell everyone else who was asked that the decision is settled, and how."""
        sids, winner = asked
        closed = {"attack": attack.get("id"), "key": decision.key, "how": how}
        for sid in sids:
            if sid != winner:
                await self.sio.emit("decision.closed", closed, to=sid)
        log.debug(
            "decision settled",
            extra=fields(table=runtime.id, attack=attack.get("id"), decision=decision.key, how=how),
        )

    async def _ask(
        self, runtime: TableRuntime, sids: list[str], payload: dict[str, Any], timeout: float
    ) -> tuple[Any, str, str | None]:
        """``(answer, how, who answered)``; ``how`` is ``answered``, ``timeout`` or ``disconnect``."""
        calls: dict[asyncio.Future[Any], str] = {
            asyncio.ensure_future(self.sio.call("decision", payload, to=sid, timeout=timeout)): sid for sid in sids
        }
        gone: dict[asyncio.Future[None], str] = {
            runtime.departure(sid, local=sid in runtime.sessions): sid for sid in sids
        }
        waiting: set[asyncio.Future[Any]] = set(calls) | set(gone)
        timed_out: set[str] = set()
        left: set[str] = set()
        try:
            while waiting:
                done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    if future in calls:
                        error = future.exception()
                        if error is None:
                            return future.result(), "answered", calls[future]
                        if not isinstance(error, socketio.exceptions.TimeoutError):
                            log.warning("asking a decider failed: %r", error, extra=fields(sid=calls[future]))
                        timed_out.add(calls[future])
                    else:
                        left.add(gone[future])
                if timed_out | left >= set(sids):
                    break
            return None, ("timeout" if timed_out - left else "disconnect"), None
        finally:
            for future in calls:
                if not future.done():
                    future.cancel()
            for future, sid in gone.items():
                runtime.forget(sid, future)
