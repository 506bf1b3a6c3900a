"""Putting a decision to the person who makes it, over socket.io ``call``.

The deciders are the connected owners of the token the rules name (the GM
when none is connected; see :meth:`TableRuntime.deciders`). Each of their
connections gets a ``decision`` event; the first acknowledgement wins. The
outcome is reported to the engine explicitly: an answer, or the rules'
default with why — ``timeout`` (nobody answered in time), ``disconnect``
(nobody to ask, or everyone asked went away), ``invalid`` (the answer was
not one of the options). The others who were asked get ``decision.closed``.

Restart fairness: for one reconnect grace after this server started, a
question about a token none of whose players is connected yet waits for one
of them (they were likely connected before the restart, and their page is
reconnecting) before it goes to the GM's default, as a dropped connection would.

With several server processes on one Redis, a question to a connection on
another process travels as a bus command (``decision.ask``); that process
asks its client, keeps the answer in the store under the question's identity
(the attack's ``request_id`` and the question's place in it) and sends it
back (``decision.answer``). If the asking process died meanwhile, the answer
waits there: the process that resolves the retried request asks the same
question again and takes the kept answer instead of asking anew, and the
user who sent it gets ``decision.closed`` once it is settled (or, when no
process asks again, when the answer is given up).
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import socketio

from ..state import RedisStore
from ..state.keys import new_id
from ..state.records import dumps
from ..state.store import Store
from .bus import RedisBus
from .logs import fields
from .tables import TableRuntime
from .sandbox import RemoteDecision

__all__ = [
    "ANSWER_KEEP", "DROPPED", "RECONNECT_GRACE", "TRANSITIONS", "Audience", "Event", "Prompter", "Question", "State",
]

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
# Seconds an answer to a question asked by another process is kept past that question's
# timeout, for a process that asks it again when the asking one died (the retry of its
# request through another process, after the table's lease expires).
ANSWER_KEEP = 30.0

log = logging.getLogger("vtt_bridge.server")


class Audience(NamedTuple):
    """Who a question went to: what :meth:`Prompter.closed` needs to tell them it is settled."""

    sids: list[str]  # the connections asked
    winner: str | None  # the one whose answer settled it
    ident: str | None  # the question's identity across processes (None: no request_id, or one process)
    earlier: dict[str, Any] | None  # an answer kept for this question, sent to a process that died


def sight(decision: RemoteDecision) -> str:
    """A digest of the question as its decider sees it (all but its timeout): an answer kept
    for it is taken only by the same question."""
    wire = {k: v for k, v in decision.to_dict().items() if k != "timeout"}
    return hashlib.sha256(dumps(wire).encode()).hexdigest()


def _announce(runtime: TableRuntime, decision: RemoteDecision, payload: Mapping[str, Any], users: list[str]) -> None:
    """``decision.asked`` to the whole table: whom the question waits for, and for how long."""
    runtime.outbox.put(
        "decision.asked",
        {
            "attack": payload["attack"].get("id"),
            "key": decision.key,
            "prompt": payload.get("prompt"),
            "token": decision.token,
            "default": payload.get("default"),
            "options": payload.get("options", []),
            "timeout": payload["timeout"],
            "users": users,
            # A question for the faces of real dice: how many of which size, and what for.
            **({"dice": payload["dice"]} if "dice" in payload else {}),
        },
    )


class Prompter:
    def __init__(self, sio: socketio.AsyncServer, store: Store) -> None:
        self.sio = sio
        self.reconnect_grace = RECONNECT_GRACE
        self.store = store
        #: When this server started: players not back yet within a grace of it are waited for.
        self.started = time.monotonic()
        # The user of a connection to this process (set by the bridge).
        self.local_user: Callable[[str], str | None] = lambda sid: None
        # Questions this process put to connections on other processes: ask id → the answer.
        self.there: dict[str, asyncio.Future[Any]] = {}
        # Questions other processes put to this process's connections: ask id → the call.
        self.here: dict[str, asyncio.Future[Any]] = {}
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def bus(self) -> RedisBus | None:
        manager = self.sio.manager
        return manager if isinstance(manager, RedisBus) and isinstance(self.store, RedisStore) else None

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def ask(
        self, runtime: TableRuntime, decision: RemoteDecision, attack: Mapping[str, Any], ident: str | None = None
    ) -> tuple[Any, str, Audience]:
        """Put ``decision`` to its deciders: ``(answer, how, who was asked)``.

        ``how`` is ``answered``, ``timeout`` or ``disconnect``; the resolver checks
        the answer against the options and may still settle it as ``invalid``.
        ``ident`` names the question across processes (its attack's request_id
        and its place in the attack): an answer a user sent to this same
        question, asked by a process that died, is taken instead of asking.
        """
        timeout = decision.timeout if decision.timeout is not None else runtime.decision_timeout
        # With several server processes the decider may be connected to another
        # one: the bus carries the question there and the answer back (call_there).
        everyone = await self.store.sessions(runtime.id)
        sids = runtime.deciders(decision.token, everyone)
        absent = self._not_back_yet(runtime, decision.token, everyone)
        if absent:
            sids = []  # not the GM's connections: the player's question waits for the player
        elif not sids:
            return None, "disconnect", Audience([], None, None, None)
        payload = {**decision.to_dict(), "timeout": timeout, "attack": dict(attack)}
        seen = sight(decision)
        if self.bus is None:
            ident = None
        earlier = await self.store.answer_taken(runtime.id, ident) if ident is not None else None
        if earlier is not None and earlier.get("sight") == seen:
            users = {runtime.sessions[sid].user if sid in runtime.sessions else everyone.get(sid) for sid in sids}
            if earlier.get("user") in users | set(absent):
                # Answered already, to a process that died before it could take the answer.
                _announce(runtime, decision, payload, [earlier["user"]])
                return earlier.get("answer"), "answered", Audience([], None, None, earlier)
        handle = runtime.prompt_out(payload, sids, timeout, everyone, waiting_for=absent)  # for table.sync
        ref = f"{attack.get('id')}/{decision.key}"
        if isinstance(self.store, RedisStore):
            # table.sync on any process lists it (sent without waiting, before decision.asked).
            entry = {"payload": payload, "users": runtime.asked_users(handle), "deadline": time.time() + timeout}
            self.store.question_out(runtime.id, ref, entry, timeout)
        early = runtime.early[(str(attack.get("id")), decision.key)] = asyncio.get_running_loop().create_future()
        # The whole table sees whom it waits for, and for how long.
        _announce(runtime, decision, payload, runtime.asked_users(handle))
        # The steps before the question, and decision.asked, reach the table before the
        # question does: in one message to each connection that takes batches.
        await runtime.outbox.drain()
        # The question runs through TRANSITIONS (see Question); sids grows by the connections
        # of users asked who came back during a reconnect grace.
        question = Question(self, runtime, sids, payload, timeout, early, everyone, absent, (ident, seen))
        try:
            answer, how, winner = await question.run()
        finally:
            question.close()
            runtime.prompt_settled(handle)
            if isinstance(self.store, RedisStore):
                self.store.question_settled(runtime.id, ref)
            runtime.early.pop((str(attack.get("id")), decision.key), None)
        return answer, how, Audience(sids, winner, ident, earlier)

    def _not_back_yet(self, runtime: TableRuntime, token_id: str | None, everyone: Mapping[str, str] | None) -> list[str]:
        """Soon after this server started: the players owning ``token_id`` when none of them is
        connected yet (the question waits for them); else ``[]`` (asked as usual)."""
        grace = self.reconnect_grace
        if token_id is None or grace <= 0 or time.monotonic() - self.started >= grace:
            return []
        owners = runtime.player_owners(token_id)
        connected = set(everyone.values()) if everyone is not None else set(runtime.users())
        if not owners or connected & set(owners):
            return []
        return owners

    async def closed(
        self,
        runtime: TableRuntime,
        asked: Audience,
        attack: Mapping[str, Any],
        decision: RemoteDecision,
        how: str,
    ) -> None:
        """Tell everyone else who was asked that the decision is settled, and how.

        Also whoever sent an answer to this question that the process asking
        it then could not take (it had died; or the question was settled
        first): their ``decision.closed`` names the attack they were asked in.
        """
        sids, winner, ident, earlier = asked
        closed = {"attack": attack.get("id"), "key": decision.key, "how": how}
        runtime.outbox.put("decision.settled", closed)
        for sid in sids:
            if sid != winner:
                await self.sio.emit("decision.closed", closed, to=sid)
        late = None
        if ident is not None:
            try:
                late = await self.store.answer_taken(runtime.id, ident)
            except Exception:
                log.warning("taking a kept answer failed", exc_info=True, extra=fields(table=runtime.id))
        for entry in (earlier, late):
            if entry is None or not isinstance(entry.get("sid"), str):
                continue
            if entry.get("attack") == attack.get("id") and entry["sid"] in sids:
                continue  # asked here, and told above (or it won)
            told = {"attack": entry.get("attack"), "key": decision.key, "how": how}
            await self.sio.emit("decision.closed", told, to=entry["sid"])
        log.debug(
            "decision settled",
            extra=fields(table=runtime.id, attack=attack.get("id"), decision=decision.key, how=how),
        )

    # -- questions across processes (a shared store) ---------------------------------

    def call_there(
        self, runtime: TableRuntime, sid: str, payload: dict[str, Any], seconds: float, question: tuple[str | None, str]
    ) -> asyncio.Future[Any]:
        """Put ``payload`` to ``sid``, a connection on another process: its answer, as ``sio.call``
        would give it (raises socket.io's ``TimeoutError`` after ``seconds``)."""
        bus = self.bus
        assert bus is not None
        ask = new_id("ask")
        future = self.there[ask] = asyncio.get_running_loop().create_future()
        ident, seen = question
        bus.command(
            runtime.room,
            "decision.ask",
            {
                "table": runtime.id, "room": runtime.room, "sid": sid, "ask": ask, "from": bus.host_id,
                "payload": payload, "timeout": seconds, "ident": ident, "sight": seen,
            },
        )
        return asyncio.ensure_future(self._answer_from_there(bus, runtime.room, ask, future, seconds))

    async def _answer_from_there(
        self, bus: RedisBus, room: str, ask: str, future: asyncio.Future[Any], seconds: float
    ) -> Any:
        try:
            async with asyncio.timeout(seconds):
                return await future
        except TimeoutError:
            raise socketio.exceptions.TimeoutError() from None
        except asyncio.CancelledError:
            bus.command(room, "decision.cancel", {"ask": ask})  # settled: the other process stops asking
            raise
        finally:
            self.there.pop(ask, None)

    def asked_here(self, data: Any) -> None:
        """Bus command ``decision.ask``: another process puts a question to a connection, maybe this process's."""
        sid = data.get("sid") if isinstance(data, dict) else None
        if isinstance(sid, str) and self.sio.manager.is_connected(sid, "/"):
            self._later(self._ask_here(data))

    async def _ask_here(self, data: dict[str, Any]) -> None:
        sid, ask, seconds = data["sid"], data["ask"], float(data["timeout"])
        call = self.here[ask] = asyncio.ensure_future(
            self.sio.call("decision", data["payload"], to=sid, timeout=seconds, ignore_queue=True)
        )
        try:
            await asyncio.wait([call])
        finally:
            self.here.pop(ask, None)
        if call.cancelled() or call.exception() is not None:
            return  # settled elsewhere, timed out (the asker times out too) or gone
        answer = call.result()
        bus, table, ident = self.bus, data["table"], data.get("ident")
        assert bus is not None
        keep = seconds + ANSWER_KEEP
        payload = data["payload"]
        entry = {
            "answer": answer, "sid": sid, "user": self.local_user(sid), "ask": ask, "sight": data.get("sight"),
            "attack": payload.get("attack", {}).get("id"), "key": payload.get("key"),
        }
        if ident is not None:
            # Kept before it is sent: a process that asks again finds it if the asker died.
            self.store.answer_kept(table, ident, entry, keep + 5)
        bus.command(
            data["room"],
            "decision.answer",
            {"to": data["from"], "ask": ask, "answer": answer, "table": table, "ident": ident},
        )
        if ident is None:
            return
        await asyncio.sleep(keep)
        # Nobody took it: the asker died and nobody asked again. Its sender is told it is over.
        kept = await self.store.answer(table, ident)
        if kept is not None and kept.get("ask") == ask:
            kept = await self.store.answer_taken(table, ident)
            if kept is not None and kept.get("ask") == ask:
                told = {"attack": entry["attack"], "key": entry["key"], "how": "disconnect"}
                await self.sio.emit("decision.closed", told, to=sid, ignore_queue=True)

    def answered_there(self, data: Any) -> None:
        """Bus command ``decision.answer``: an answer to a question, maybe one this process asked."""
        bus = self.bus
        if bus is None or not isinstance(data, dict) or data.get("to") != bus.host_id:
            return
        future = self.there.get(data.get("ask"))
        if future is not None and not future.done():
            future.set_result(data.get("answer"))
        elif data.get("ident") is not None:
            # Settled before it arrived (its sender was told so): nobody needs it kept.
            self._later(self.store.answer_taken(data["table"], data["ident"]))

    def cancelled_there(self, data: Any) -> None:
        """Bus command ``decision.cancel``: a question put to a connection here is settled."""
        call = self.here.get(data.get("ask")) if isinstance(data, dict) else None
        if call is not None:
            call.cancel()

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


# -- a question as a state machine -------------------------------------------------------


class State(enum.Enum):
    """Where a question stands."""

    ASKING = "asking"  # out to at least one connection that has neither answered nor gone
    GRACE = "grace"  # everyone asked is gone, one by a dropped connection: waiting for a user to return
    ANSWERED = "answered"
    DEFAULTED = "default"  # the GM took the rules' default (decision.default)
    TIMED_OUT = "timeout"
    DISCONNECTED = "disconnect"


class Event(enum.Enum):
    """What can happen to a question."""

    ANSWER = "a connection asked answered"
    GM_DEFAULT = "the GM took the rules' default"
    SOME_OUT = "a connection timed out or left; others are still asked"
    ALL_OUT_DROPPED = "everyone asked is out, one dropped: a user may come back"
    ALL_TIMED_OUT = "everyone asked is out, one without answering in time"
    ALL_LEFT = "everyone asked left"
    CAME_BACK = "a user asked connected again"
    NOT_BACK_YET = "soon after a restart, none of the players asked has reconnected yet"
    GRACE_OVER = "the reconnect grace ran out"


# (state, event) -> next state. A pair not listed cannot happen (a bug if it does).
TRANSITIONS: dict[tuple[State, Event], State] = {
    (State.ASKING, Event.ANSWER): State.ANSWERED,
    (State.ASKING, Event.GM_DEFAULT): State.DEFAULTED,
    (State.ASKING, Event.SOME_OUT): State.ASKING,
    (State.ASKING, Event.ALL_OUT_DROPPED): State.GRACE,
    (State.ASKING, Event.ALL_TIMED_OUT): State.TIMED_OUT,
    (State.ASKING, Event.ALL_LEFT): State.DISCONNECTED,
    (State.ASKING, Event.NOT_BACK_YET): State.GRACE,
    (State.GRACE, Event.CAME_BACK): State.ASKING,
    (State.GRACE, Event.GRACE_OVER): State.DISCONNECTED,
    (State.GRACE, Event.GM_DEFAULT): State.DEFAULTED,
    (State.GRACE, Event.ANSWER): State.ANSWERED,  # a call still out to a connection that went
    # Calls to connections already gone ending meanwhile change nothing (one grace per drop).
    (State.GRACE, Event.SOME_OUT): State.GRACE,
    (State.GRACE, Event.ALL_OUT_DROPPED): State.GRACE,
    (State.GRACE, Event.ALL_TIMED_OUT): State.GRACE,
    (State.GRACE, Event.ALL_LEFT): State.GRACE,
}
OPEN = frozenset({State.ASKING, State.GRACE})


class Question:
    """One decision put to its deciders: the data :data:`TRANSITIONS` runs on.

    Every future it waits for is one of: a ``call`` to a connection asked
    (:attr:`calls`), that connection's end (:attr:`gone`), the GM taking the
    default (``early``), a user asked coming back (:attr:`back`) and the end
    of the reconnect grace (:attr:`grace`). Each one done is turned into one
    :class:`Event` (:meth:`event`) and the state moves by the table.

    With several server processes (``everyone``: every connection to the
    table, ``{sid: user}``), a connection on another process is watched from
    here (:meth:`Prompter._watch`): its end is noticed as a local one is, with
    the reason it ended there, and a user asked who connects again on any
    process is asked there.
    """

    def __init__(
        self,
        prompter: Prompter,
        runtime: TableRuntime,
        sids: list[str],
        payload: dict[str, Any],
        timeout: float,
        early: asyncio.Future[None],
        everyone: Mapping[str, str],
        absent: list[str] | None = None,
        identity: tuple[str | None, str] = (None, ""),
    ) -> None:
        self.prompter, self.runtime, self.sids, self.payload, self.early = prompter, runtime, sids, payload, early
        #: Players waited for from the start (see :meth:`Prompter._not_back_yet`).
        self.absent = list(absent or ())
        self.identity = identity
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time() + timeout
        self.state = State.ASKING
        self.users = self.absent or sorted(
            {runtime.sessions[sid].user if sid in runtime.sessions else everyone.get(sid, "") for sid in sids} - {""}
        )
        self.calls: dict[asyncio.Future[Any], str] = {}
        self.gone: dict[asyncio.Future[Any], str] = {}
        self.waiting: set[asyncio.Future[Any]] = {early}
        self.remote: dict[str, asyncio.Future[str | None]] = {}  # connections asked on other processes → their end
        self.returned: list[str] = []  # users asked back on other processes, not asked yet
        self.timed_out: set[str] = set()
        self.left: set[str] = set()
        self.dropped = False  # a connection asked was lost (not closed) since the last grace
        self.back: asyncio.Future[str] | None = None
        self.grace: asyncio.Future[Any] | None = None
        self.answer: tuple[Any, str | None] = (None, None)
        for sid in sids:
            self.ask(sid, timeout)
        self.watcher: asyncio.Task[None] | None = None
        if prompter.store.shared:
            seen = set(everyone) | set(sids)
            self.watcher = asyncio.ensure_future(prompter._watch(runtime, self.remote, self.users, seen, self.arrived))

    def ask(self, sid: str, seconds: float) -> None:
        prompter, runtime = self.prompter, self.runtime
        payload = {**self.payload, "timeout": round(seconds, 3)}
        if sid in runtime.sessions or not prompter.store.shared or prompter.bus is None:
            call = asyncio.ensure_future(prompter.sio.call("decision", payload, to=sid, timeout=seconds))
            departure = runtime.departure(sid, local=sid in runtime.sessions)
        else:  # a connection on another process: asked there (Prompter.call_there)
            call = prompter.call_there(runtime, sid, payload, seconds, self.identity)
            departure = self.remote[sid] = self.loop.create_future()
        self.calls[call] = sid
        self.gone[departure] = sid
        self.waiting.update((call, departure))

    def arrived(self, sid: str) -> None:
        """A user asked connected again on another process (from :meth:`Prompter._watch`)."""
        if self.back is not None and not self.back.done():
            self.back.set_result(sid)
        else:
            self.returned.append(sid)

    async def run(self) -> tuple[Any, str, str | None]:
        if self.absent:
            await self.fire(Event.NOT_BACK_YET)
        while self.state in OPEN and self.waiting:
            done, self.waiting = await asyncio.wait(self.waiting, return_when=asyncio.FIRST_COMPLETED)
            # The GM's default wins over anything that arrived with it.
            for future in sorted(done, key=lambda f: f is not self.early):
                await self.fire(self.event(future))
                if self.state not in OPEN:
                    break
        if self.state in OPEN:  # nothing left to wait for
            self.state = State.TIMED_OUT if self.timed_out - self.left else State.DISCONNECTED
        answer, winner = self.answer
        return answer, self.state.value, winner

    async def fire(self, event: Event) -> None:
        before = self.state
        self.state = TRANSITIONS[(before, event)]
        if before is State.ASKING and self.state is State.GRACE:
            self.start_grace()
        elif before is State.GRACE and self.state is State.ASKING:
            await self.ask_again()

    def event(self, future: asyncio.Future[Any]) -> Event:
        if future is self.early:
            return Event.GM_DEFAULT
        if future is self.grace:
            return Event.GRACE_OVER
        if future is self.back:
            return Event.CAME_BACK
        if future in self.calls:
            error = future.exception()
            if error is None:
                self.answer = (future.result(), self.calls[future])
                return Event.ANSWER
            if not isinstance(error, socketio.exceptions.TimeoutError):
                log.warning("asking a decider failed: %r", error, extra=fields(sid=self.calls[future]))
            self.timed_out.add(self.calls[future])
        else:  # a connection asked has ended
            self.left.add(self.gone[future])
            self.dropped = self.dropped or future.result() in DROPPED
        return self.out()

    def out(self) -> Event:
        """The event for one more connection asked being out (timed out or gone)."""
        if not self.timed_out | self.left >= set(self.sids):
            return Event.SOME_OUT
        remaining = self.deadline - self.loop.time()
        grace = self.prompter.reconnect_grace
        if self.dropped and not self.timed_out - self.left and remaining > 0 and grace > 0 and self.users:
            return Event.ALL_OUT_DROPPED
        return Event.ALL_TIMED_OUT if self.timed_out - self.left else Event.ALL_LEFT

    def start_grace(self) -> None:
        self.dropped = False  # one grace per drop
        self.back = self.runtime.arrival(self.users)
        if self.returned:  # already back on another process
            self.back.set_result(self.returned.pop(0))
        seconds = min(self.prompter.reconnect_grace, self.deadline - self.loop.time())
        self.grace = asyncio.ensure_future(asyncio.sleep(seconds))
        self.waiting.update((self.back, self.grace))

    async def ask_again(self) -> None:
        """A user asked is back on a new connection: the question goes there."""
        assert self.back is not None and self.grace is not None
        sid, self.back = self.back.result(), None
        self.grace.cancel()
        self.waiting.discard(self.grace)
        self.grace = None
        self.sids.append(sid)
        here = sid in self.runtime.sessions or not self.prompter.store.shared
        if not here or await self.prompter._connected(self.runtime, sid, self.deadline):
            self.ask(sid, max(0.05, self.deadline - self.loop.time()))
        else:
            self.left.add(sid)
            await self.fire(self.out())

    def close(self) -> None:
        for future in self.calls:
            if not future.done():
                future.cancel()
        for future, sid in self.gone.items():
            self.runtime.forget(sid, future)
        if self.back is not None:
            self.runtime.forget_arrival(self.back)
        if self.grace is not None:
            self.grace.cancel()
        if self.watcher is not None:
            self.watcher.cancel()
