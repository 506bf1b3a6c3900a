"""One loaded table in this process: its token mirror, its queue, its people.

A :class:`TableRuntime` is created the first time someone connects to a
table and lives until the server stops. It holds

- ``tokens``, the table's tokens as read-only snapshots, kept equal to the
  store's rows by applying each committed change (for a store shared with
  other processes it is re-read before it is trusted);
- ``attack_lock``, which makes the table's attacks (and undos) run one after
  another, prompts included — other tables have their own;
- ``write_lock``, held for the short read-check-commit of any write;
- ``busy``, the tokens of the attack in progress: edits to them are refused
  with ``conflict`` rather than made to wait for a player's answer (over a
  shared store the attack locks them in the store too, so an edit through
  another process is refused alike: ``Store.lock_tokens``);
- the connected sessions, so a decision can find its decider;
- ``prompts``, the decisions out right now and whom they wait for, so a
  client that reconnects (``table.sync``) learns what it is being asked;
- the :class:`Outbox`, which sends the table's broadcasts in order.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from ..engine.tokens import Token
from ..state.keys import GM_USER
from ..state.records import TableInfo, TokenChange
from .logs import fields
from .session import OWNER, Caller, level
from .pool import budget_of

__all__ = ["BROADCASTS", "Outbox", "TableRuntime", "pending"]

log = logging.getLogger("vtt_bridge.server")

# Sends a batch of broadcasts, ``(event, data, room)``, in order; and to each
# batch room (``{room: events}``) the batch's events it wants, as one message.
Emit = Callable[[list[tuple[str, Any, str]], Mapping[str, frozenset[str]]], Awaitable[None]]

# Every event the server broadcasts to a table. A connection receives all of
# them unless it names the ones it wants (``auth.events``); each event has its
# own room per table, so nobody is sent what they did not ask for.
BROADCASTS = (
    "attack.step",
    "attack.resolved",
    "attack.failed",
    "attack.undone",
    "token.created",
    "token.updated",
    "token.deleted",
    "table.updated",
    "decision.asked",
    "decision.settled",
)


class Outbox:
    """A table's broadcasts, sent one after another by a single task.

    ``put`` never waits, so a handler can queue its broadcasts and return its
    acknowledgement at once; the order clients see is the order of ``put``.
    An attack drains the outbox before it starts, so broadcasts never fall
    more than one attack behind. Over the Redis bus an attack's own
    broadcasts may go out with its commit (:meth:`publishing`): they are then
    queued already numbered (:meth:`put_published`), to be delivered here in
    their turn.
    """

    def __init__(self, room: str, emit: Emit) -> None:
        self.room = room
        self.rooms = {event: f"{room}/{event}" for event in BROADCASTS}
        # Connections that take their broadcasts in batches (``auth.batch``), one
        # room per choice of events: the room's name → the events it receives.
        self.batch_rooms: dict[str, frozenset[str]] = {}
        self._emit = emit
        self._queue: asyncio.Queue[tuple[str | None, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._unsent = 0  # broadcasts put and not yet handed on
        self._holds: set[object] = set()  # see hold()
        self._open = asyncio.Event()
        self._open.set()

    def put(self, event: str, data: Any) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"outbox {self.room}")
        self._unsent += 1
        self._queue.put_nowait((event, data))

    def publishing(self, events: Callable[[], list[tuple[str, Any]]], mark: bytes) -> Any:
        """The events ``events()`` makes, ``(event, data)``, as a commit publishes them with itself
        (:class:`~vtt_bridge.state.Published`), where the emitter can (the Redis bus) and
        nothing put before is still to go out (they would overtake it); else ``None`` (and
        ``events`` is not called). ``mark`` stands once in their JSON, where the commit's
        audit seq goes."""
        if self._unsent or not getattr(self._emit, "publishes", False):
            return None
        return self._emit.prepare(  # type: ignore[attr-defined]
            self.room.removeprefix("table:"), [(e, d, self.rooms[e]) for e, d in events()], mark
        )

    def put_published(self, events: list[tuple[str, Any]], first: int) -> None:
        """Queue ``events`` that a commit published numbered ``first``… (see :meth:`publishing`)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"outbox {self.room}")
        self._unsent += 1
        batch = [(e, d, self.rooms[e]) for e, d in events]
        self._emit.expect(batch, first)  # type: ignore[attr-defined]  # the feed may bring it first
        self._queue.put_nowait((None, (batch, first)))

    def hold(self, key: object) -> None:
        """Keep what is put from going out until :meth:`release` of ``key``: an attack's last
        steps, its ``decision.settled`` and its result then reach each connection as one
        message, though its commit is awaited between them (one message per connection
        fewer per attack). Never held while a question is out (``drain`` would wait)."""
        self._holds.add(key)
        self._open.clear()

    def release(self, key: object) -> None:
        """End ``hold(key)`` (again: nothing); what was put meanwhile goes out together."""
        self._holds.discard(key)
        if not self._holds:
            self._open.set()

    async def drain(self) -> None:
        """Wait until everything queued so far has been handed to the sockets."""
        if self._task is not None:
            await self._queue.join()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        queue = self._queue
        while True:
            # Whatever is queued goes out as one batch: an attack's steps,
            # result and token updates reach each socket's writer together.
            items = [await queue.get()]
            if self._holds:
                await self._open.wait()
            while not queue.empty():
                items.append(queue.get_nowait())
            try:
                for published, group in itertools.groupby(items, key=lambda item: item[0] is None):
                    if published:
                        for _none, (batch, first) in group:
                            await self._send(self._emit.published(batch, first), batch)  # type: ignore[attr-defined]
                    else:
                        batch = [(event, data, self.rooms[event]) for event, data in group]
                        await self._send(self._emit(batch, self.batch_rooms), batch)
            finally:
                self._unsent -= len(items)
                for _ in items:
                    queue.task_done()

    async def _send(self, sending: Awaitable[None], batch: list[tuple[str, Any, str]]) -> None:
        try:
            await sending
        except Exception:
            log.exception("broadcast failed", extra=fields(room=self.room, events=[e for e, _d, _r in batch]))


def pending(payload: Mapping[str, Any], users: list[str], remaining: float) -> dict[str, Any]:
    """A question out, as ``table.sync`` lists it: the ``decision`` payload, whom it waits for, seconds left."""
    return {**payload, "waiting": users, "remaining": round(max(0.0, remaining), 3)}


class AttackLock:
    """An asyncio lock that knows how many wait for it (the Redis lease is kept for the next one)."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.waiting = 0

    def locked(self) -> bool:
        return self.lock.locked()

    async def __aenter__(self) -> None:
        self.waiting += 1
        try:
            await self.lock.acquire()
        finally:
            self.waiting -= 1

    async def __aexit__(self, *exc: object) -> None:
        self.lock.release()


class TableRuntime:
    """A table loaded in this process (see the module docstring)."""

    def __init__(self, info: TableInfo, tokens: Mapping[str, Token], emit: Emit, *, decision_timeout: float) -> None:
        self.info = info
        self.tokens: dict[str, Token] = dict(tokens)
        self.default_timeout = decision_timeout
        self.attack_lock = AttackLock()
        self.write_lock = asyncio.Lock()
        self.busy: dict[str, str] = {}
        self.inflight: dict[str, tuple[str, str, asyncio.Future[Any]]] = {}
        self.sessions: dict[str, Caller] = {}
        self._departures: dict[str, list[asyncio.Future[str | None]]] = {}
        # The store's revision the token mirror was read at (shared stores only).
        self.rev: int | None = None
        self._arrivals: list[tuple[frozenset[str], asyncio.Future[str]]] = []
        self.prompts: dict[int, tuple[dict[str, Any], list[str], float]] = {}
        # A question out now, by (attack id, decision key): the future the GM's
        # ``decision.default`` completes to take the rules' default at once.
        self.early: dict[tuple[str, str], asyncio.Future[None]] = {}
        self._prompt_ids = itertools.count()
        self.outbox = Outbox(self.room, emit)
        # Connections taking batches: by batch room, and each one's room.
        self._batched: dict[str, set[str]] = {}
        self._batch_room: dict[str, str] = {}

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def room(self) -> str:
        return f"table:{self.info.id}"

    def rooms(self, events: Iterable[str], *, batch: str | None = None) -> list[str]:
        """The rooms a connection joins to receive ``events``.

        ``batch``: the sid of a connection that takes them together, as
        ``batch`` messages; its room (one per choice of events) is the
        outbox's while someone is in it (see :meth:`leave`).
        """
        if batch is None:
            return [self.outbox.rooms[event] for event in events]
        wanted = frozenset(events)
        room = f"{self.room}/batch:{','.join(sorted(wanted))}"
        self.outbox.batch_rooms.setdefault(room, wanted)
        self._batched.setdefault(room, set()).add(batch)
        self._batch_room[batch] = room
        return [room]

    @property
    def decision_timeout(self) -> float:
        """Seconds a decider has to answer: the table's setting, else the server's."""
        value = self.info.settings.get("decision_timeout")
        return float(value) if value is not None else self.default_timeout

    def rolls_by_hand(self, user: str) -> bool:
        """Whether ``user`` rolls real dice here: the GM's switch for them, else the table's
        setting (for players; the GM rolls by hand only when switched on for ``gm``)."""
        settings = self.info.settings
        switch = (settings.get("physical_dice_players") or {}).get(user)
        if switch is not None:
            return bool(switch)
        return user != GM_USER and bool(settings.get("physical_dice"))

    def physical_tokens(self, token_ids: Iterable[str]) -> list[str]:
        """Of ``token_ids``, those whose rolls are asked for as faces of real dice: a token
        with a player owner (level 3) who rolls by hand; an unowned token when the GM does."""
        settings = self.info.settings
        if not settings.get("physical_dice") and not any((settings.get("physical_dice_players") or {}).values()):
            return []  # the common case: nobody rolls by hand
        out = []
        for token_id in token_ids:
            token = self.tokens.get(token_id)
            if token is None:
                continue
            owners = self.player_owners(token_id)
            if any(self.rolls_by_hand(u) for u in owners) or (not owners and self.rolls_by_hand(GM_USER)):
                out.append(token_id)
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.info.id,
            "name": self.info.name,
            "settings": {
                **self.info.settings,
                "decision_timeout": self.decision_timeout,
                "attack_budget": budget_of(self.info.settings),
                "physical_dice": bool(self.info.settings.get("physical_dice")),
                "physical_dice_players": dict(self.info.settings.get("physical_dice_players") or {}),
            },
        }

    # -- tokens ---------------------------------------------------------------

    def apply(self, changes: Iterable[TokenChange]) -> None:
        """Make the mirror match a commit that just succeeded."""
        for change in changes:
            if change.after is None:
                self.tokens.pop(change.token_id, None)
            else:
                self.tokens[change.token_id] = change.after

    def replace_tokens(self, tokens: Mapping[str, Token]) -> None:
        self.tokens = dict(tokens)

    # -- people ---------------------------------------------------------------

    def join(self, caller: Caller) -> None:
        self.sessions[caller.sid] = caller
        for users, future in list(self._arrivals):
            if caller.user in users and not future.done():
                future.set_result(caller.sid)

    def leave(self, sid: str, reason: str | None = None) -> None:
        """``sid`` is gone; ``reason`` is socket.io's (``"transport close"``, ``"client disconnect"``, ...)."""
        self.sessions.pop(sid, None)
        room = self._batch_room.pop(sid, None)
        if room is not None:
            members = self._batched.get(room)
            if members is not None:
                members.discard(sid)
                if not members:
                    del self._batched[room]
                    self.outbox.batch_rooms.pop(room, None)
        for future in self._departures.pop(sid, ()):
            if not future.done():
                future.set_result(reason)

    def departure(self, sid: str, *, local: bool = True) -> asyncio.Future[str | None]:
        """A future that completes with the reason when ``sid`` disconnects (``None`` if it already has).

        ``local=False``: a connection to another server process; this one does
        not see it leave, so the future completes only if it was local after all.
        """
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        if sid not in self.sessions and local:
            future.set_result(None)
        else:
            self._departures.setdefault(sid, []).append(future)
        return future

    def arrival(self, users: Iterable[str]) -> asyncio.Future[str]:
        """A future that completes with the sid of the next connection of one of ``users``."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._arrivals.append((frozenset(users), future))
        return future

    def forget_arrival(self, future: asyncio.Future[str]) -> None:
        self._arrivals = [(u, f) for u, f in self._arrivals if f is not future]

    def forget(self, sid: str, future: asyncio.Future[str | None]) -> None:
        waiting = self._departures.get(sid)
        if waiting and future in waiting:
            waiting.remove(future)
            if not waiting:
                del self._departures[sid]

    # -- decisions out --------------------------------------------------------

    def take_default(self, attack_id: str, key: str) -> bool:
        """Settle the question ``key`` of ``attack_id`` with the rules' default now, if this process asks it."""
        early = self.early.get((attack_id, key))
        if early is None:
            return False
        if not early.done():
            early.set_result(None)
        return True

    def prompt_out(
        self,
        payload: dict[str, Any],
        sids: Iterable[str],
        timeout: float,
        everyone: Mapping[str, str] | None = None,
        *,
        waiting_for: Iterable[str] = (),
    ) -> int:
        """Note a decision put to ``sids`` (until :meth:`prompt_settled`); returns its handle.

        ``everyone``: every connection to the table on every server process,
        ``{sid: user}`` (a shared store), so a decider connected to another
        process is named among the users asked.
        """
        others = everyone or {}
        users = sorted(
            {self.sessions[sid].user if sid in self.sessions else others.get(sid, "") for sid in sids} - {""}
            | set(waiting_for)  # players waited for who are not connected yet (after a restart)
        )
        handle = next(self._prompt_ids)
        self.prompts[handle] = (payload, users, time.monotonic() + timeout)
        return handle

    def prompt_settled(self, handle: int) -> None:
        self.prompts.pop(handle, None)

    def asked_users(self, handle: int) -> list[str]:
        """The users a question noted by :meth:`prompt_out` was put to."""
        entry = self.prompts.get(handle)
        return list(entry[1]) if entry is not None else []

    def pending_for(self, user: str) -> list[dict[str, Any]]:
        """The decisions out now that were put to ``user``, with whom they wait for and the seconds left."""
        now = time.monotonic()
        return [pending(p, users, deadline - now) for p, users, deadline in self.prompts.values() if user in users]

    def users(self) -> list[str]:
        return sorted({c.user for c in self.sessions.values()})

    def player_owners(self, token_id: str) -> list[str]:
        """The players (not the GM) who own ``token_id`` (level 3), connected or not."""
        token = self.tokens.get(token_id)
        if token is None:
            return []
        return sorted(u for u in token.ownership if u not in (GM_USER, "default") and level(token, u) >= OWNER)

    def deciders(self, token_id: str | None, everyone: Mapping[str, str] | None = None) -> list[str]:
        """The sockets to ask about a decision on ``token_id``.

        The token's owners (level 3; the GM's ownership is implicit, not
        counted) who are connected; when none is, the GM's connections.
        ``everyone`` (``{sid: user}``) is every connection to the table on
        every server process; by default, this process's.
        """
        if everyone is None:
            everyone = {sid: caller.user for sid, caller in self.sessions.items()}
        if token_id is not None:
            token = self.tokens.get(token_id)
            if token is not None:
                owners = [
                    sid for sid, user in everyone.items() if user != GM_USER and level(token, user) >= OWNER
                ]
                if owners:
                    return owners
        return [sid for sid, user in everyone.items() if user == GM_USER]
