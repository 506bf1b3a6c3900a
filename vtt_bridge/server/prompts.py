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
import time
from collections.abc import Callable, Mapping
from typing import Any

import socketio

from ..state import RedisStore
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
# With several server processes: how often a question out to a connection on
# another process looks whether it has ended, or a user asked has come back there.
REMOTE_POLL = 0.25

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
        everyone = await self.store.sessions(runtime.id)
        sids = runtime.deciders(decision.token, everyone)
        if not sids:
            return None, "disconnect", ([], None)
        # The steps before the question reach the table before the question does.
        await runtime.outbox.drain()
        payload = {**decision.to_dict(), "timeout": timeout, "attack": dict(attack)}
        handle = runtime.prompt_out(payload, sids, timeout, everyone)  # for table.sync
        ref = f"{attack.get('id')}/{decision.key}"
        if isinstance(self.store, RedisStore):
            # table.sync on any process lists it (sent without waiting, before decision.asked).
            entry = {"payload": payload, "users": runtime.asked_users(handle), "deadline": time.time() + timeout}
            self.store.question_out(runtime.id, ref, entry, timeout)
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
            answer, how, winner = await self._ask(runtime, sids, payload, timeout, early, everyone)
        finally:
            runtime.prompt_settled(handle)
            if isinstance(self.store, RedisStore):
                self.store.question_settled(runtime.id, ref)
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
        everyone: Mapping[str, str] | None = None,
    ) -> tuple[Any, str, str | None]:
        """``(answer, how, who answered)``; ``how`` is ``answered``, ``timeout`` or ``disconnect``.

        When everyone asked is gone and at least one lost the connection (not a
        goodbye: see :data:`DROPPED`), the question waits up to
        ``reconnect_grace`` seconds (within its own timeout) for one of the
        users asked to come back, and is put again to the new connection.
        ``sids`` grows by the connections asked that way.

        With several server processes (``everyone``: every connection to the
        table, ``{sid: user}``), a connection on another process is watched
        from here (:meth:`_watch`): its end is noticed as a local one is, with
        the reason it ended there, and a user asked who connects again on any
        process is asked there.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        everyone = everyone or {}
        users = sorted(
            {runtime.sessions[sid].user if sid in runtime.sessions else everyone.get(sid, "") for sid in sids} - {""}
        )
        calls: dict[asyncio.Future[Any], str] = {}
        gone: dict[asyncio.Future[Any], str] = {}
        waiting: set[asyncio.Future[Any]] = set()
        # Connections on other processes: asked → their end; came back → not asked yet.
        remote: dict[str, asyncio.Future[str | None]] = {}
        returned: list[str] = []
        watcher: asyncio.Task[None] | None = None

        def ask(sid: str, seconds: float) -> None:
            call = asyncio.ensure_future(
                self.sio.call("decision", {**payload, "timeout": round(seconds, 3)}, to=sid, timeout=seconds)
            )
            calls[call] = sid
            if sid in runtime.sessions or not self.store.shared:
                departure = runtime.departure(sid, local=sid in runtime.sessions)
            else:
                departure = remote[sid] = loop.create_future()
            gone[departure] = sid
            waiting.update((call, departure))

        def arrived(sid: str) -> None:
            if back is not None and not back.done():
                back.set_result(sid)
            else:
                returned.append(sid)

        for sid in sids:
            ask(sid, timeout)
        if early is not None:
            waiting.add(early)
        timed_out: set[str] = set()
        left: set[str] = set()
        dropped = False
        back: asyncio.Future[str] | None = None
        grace: asyncio.Future[Any] | None = None
        if self.store.shared:
            watcher = asyncio.ensure_future(self._watch(runtime, remote, users, set(everyone) | set(sids), arrived))
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
                        if sid not in runtime.sessions and self.store.shared or await self._connected(
                            runtime, sid, deadline
                        ):
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
                        if returned:  # already back on another process
                            back.set_result(returned.pop(0))
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
            if watcher is not None:
                watcher.cancel()

    async def _watch(
        self,
        runtime: TableRuntime,
        remote: Mapping[str, asyncio.Future[str | None]],
        users: list[str],
        seen: set[str],
        arrived: Callable[[str], None],
    ) -> None:
        """What happens on the other server processes while a question is out (shared stores).

        Every :data:`REMOTE_POLL` seconds: a connection asked on another
        process that is no longer open completes its future in ``remote``
        with the reason it ended there (a process that died: ``transport
        close``, its clients reconnect elsewhere), and a new connection of one
        of ``users`` on another process is passed to ``arrived``.
        """
        while True:
            await asyncio.sleep(REMOTE_POLL)
            try:
                present = await self.store.sessions(runtime.id) or {}
                ended = [sid for sid, future in remote.items() if not future.done() and sid not in present]
                reasons = await self.store.departed(runtime.id, ended) if ended else {}
            except Exception:
                log.warning("watching the deciders on other processes failed", exc_info=True)
                continue
            for sid in ended:
                if not remote[sid].done():
                    remote[sid].set_result(reasons.get(sid) or "transport close")
            for sid, user in present.items():
                if sid not in seen and user in users and sid not in runtime.sessions:
                    seen.add(sid)
                    arrived(sid)
