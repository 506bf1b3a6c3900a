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

__all__ = ["DROPPED", "RECONNECT_GRACE", "Prompter"]

# Why a connection ended, when it was lost rather than closed with a goodbye
# (socket.io's DISCONNECT): a question put to it waits a little for its user
# to reconnect. (python-socketio's client closes without its goodbye reaching
# the server, so its disconnect() reads as "transport close" too.)
DROPPED = frozenset({"transport close", "transport error", "ping timeout"})
# Seconds a question waits for a user whose connection dropped, by default
# (``ServerConfig.reconnect_grace``, ``serve --reconnect-grace``); never past its timeout.
RECONNECT_GRACE = 10.0

log = logging.getLogger("vtt_bridge.server")


class Prompter:
    def __init__(self, sio: socketio.AsyncServer, store: Store) -> None:
        self.sio = sio
        self.reconnect_grace = RECONNECT_GRACE
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
        handle = runtime.prompt_out(payload, sids, timeout)  # for table.sync
        early = runtime.early[(str(attack.get("id")), decision.key)] = asyncio.get_running_loop().create_future()
        # The whole table sees whom it waits for, and for how long.
        runtime.outbox.put(
            "decision.asked",
            {
                "attack": attack.get("id"),
                "key": decision.key,
                "prompt": payload.get("prompt"),
                "token": decision.token,
                "default": payload.get("default"),
                "options": payload.get("options", []),
                "timeout": timeout,
                "users": runtime.asked_users(handle),
            },
        )
        try:
            answer, how, winner = await self._ask(runtime, sids, payload, timeout, early)
        finally:
            runtime.prompt_settled(handle)
            runtime.early.pop((str(attack.get("id")), decision.key), None)
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
        runtime.outbox.put("decision.settled", closed)
        for sid in sids:
            if sid != winner:
                await self.sio.emit("decision.closed", closed, to=sid)
        log.debug(
            "decision settled",
            extra=fields(table=runtime.id, attack=attack.get("id"), decision=decision.key, how=how),
        )

    async def _connected(self, runtime: TableRuntime, sid: str, deadline: float) -> bool:
        """Wait (briefly) until ``sid`` has finished connecting: a connection is joined to its
        table inside the connect handler, before socket.io tells the client it is connected,
        and a question sent before that could reach a client not yet listening."""
        loop = asyncio.get_running_loop()
        end = min(deadline, loop.time() + 2.0)
        while not self.sio.manager.is_connected(sid, "/"):
            if sid not in runtime.sessions or loop.time() >= end:
                return False
            await asyncio.sleep(0.01)
        return True

    async def _ask(
        self,
        runtime: TableRuntime,
        sids: list[str],
        payload: dict[str, Any],
        timeout: float,
        early: asyncio.Future[None] | None = None,
    ) -> tuple[Any, str, str | None]:
        """``(answer, how, who answered)``; ``how`` is ``answered``, ``timeout`` or ``disconnect``.

        When everyone asked is gone and at least one lost the connection (not a
        goodbye: see :data:`DROPPED`), the question waits up to
        ``reconnect_grace`` seconds (within its own timeout) for one of the
        users asked to come back, and is put again to the new connection.
        ``sids`` grows by the connections asked that way.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        users = sorted({runtime.sessions[sid].user for sid in sids if sid in runtime.sessions})
        calls: dict[asyncio.Future[Any], str] = {}
        gone: dict[asyncio.Future[Any], str] = {}
        waiting: set[asyncio.Future[Any]] = set()

        def ask(sid: str, seconds: float) -> None:
            call = asyncio.ensure_future(
                self.sio.call("decision", {**payload, "timeout": round(seconds, 3)}, to=sid, timeout=seconds)
            )
            calls[call] = sid
            departure = runtime.departure(sid, local=sid in runtime.sessions)
            gone[departure] = sid
            waiting.update((call, departure))

        for sid in sids:
            ask(sid, timeout)
        if early is not None:
            waiting.add(early)
        timed_out: set[str] = set()
        left: set[str] = set()
        dropped = False
        back: asyncio.Future[str] | None = None
        grace: asyncio.Future[Any] | None = None
        try:
            while waiting:
                done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    if future is early:
                        return None, "default", None  # the GM took the rules' default now
                    if future in calls:
                        error = future.exception()
                        if error is None:
                            return future.result(), "answered", calls[future]
                        if not isinstance(error, socketio.exceptions.TimeoutError):
                            log.warning("asking a decider failed: %r", error, extra=fields(sid=calls[future]))
                        timed_out.add(calls[future])
                    elif future in gone:
                        left.add(gone[future])
                        dropped = dropped or future.result() in DROPPED
                    elif future is back:
                        # One of the users asked is back on a new connection: ask it there.
                        sid, back = future.result(), None
                        if grace is not None:
                            grace.cancel()
                            waiting.discard(grace)
                            grace = None
                        sids.append(sid)
                        if await self._connected(runtime, sid, deadline):
                            ask(sid, max(0.05, deadline - loop.time()))
                        else:
                            left.add(sid)
                if early is not None and early.done():
                    return None, "default", None
                if timed_out | left >= set(sids):
                    remaining = deadline - loop.time()
                    may_wait = dropped and not timed_out - left and remaining > 0 and self.reconnect_grace > 0
                    if grace is None and may_wait and users:
                        back = runtime.arrival(users)
                        grace = asyncio.ensure_future(asyncio.sleep(min(self.reconnect_grace, remaining)))
                        waiting.update((back, grace))
                        dropped = False  # one grace per drop
                        continue
                    if grace is not None and not grace.done():
                        continue  # still waiting for someone to come back
                    break
            return None, ("timeout" if timed_out - left else "disconnect"), None
        finally:
            for future in calls:
                if not future.done():
                    future.cancel()
            for future, sid in gone.items():
                runtime.forget(sid, future)
            if back is not None:
                runtime.forget_arrival(back)
            if grace is not None:
                grace.cancel()
