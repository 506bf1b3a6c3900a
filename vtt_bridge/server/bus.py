"""The message bus between server processes sharing one Redis.

python-socketio's ``AsyncRedisManager`` publishes every ``emit`` on its own:
an attack's three or four broadcasts were as many Redis round trips through
redis-py, each also checked for binary data, delivered through a task per
recipient, and received back by every process (its own included) on one
channel for all tables. :class:`RedisBus` keeps that manager's protocol for
what is rare — an event to one connection on another process (a
``decision.closed``), a disconnect — and carries a table's broadcasts
its own way:

- one message per batch (the :class:`~.tables.Outbox` sends whatever an
  attack queued together: its steps, result and token updates), published
  without waiting on the store's pipelined :class:`~vtt_bridge.state.redis_link.Link`,
  so the publish shares a write with the commit before it; the batch goes
  as its broadcasts' socket.io packets, encoded by the publisher but for
  their ``broadcast_seq`` (each packet's last field, its value unknown until
  the store numbers the batch): two lines per broadcast, its room and its
  packet cut before the seq's value. A process receiving another's batch
  neither parses nor encodes it: it appends each seq and hands the packets
  to its sockets (:meth:`.broadcast.Broadcaster.forward`);
- one channel per table (``<prefix>socketio:table:{<id>}``), which a process
  subscribes to when a client of that table first connects to it: a process
  receives only the tables its clients sit at (under Redis Cluster it is a
  sharded channel, in the table's slot: only the table's shard carries it);
- every batch is numbered per table (``broadcast_seq``), logged in the
  table's capped Stream and published by one script
  (:meth:`~vtt_bridge.state.RedisStore.broadcast`); each process delivers
  the table's batches from its feed in that order, its own included (kept
  in hand, not parsed again), skips what it delivered already, and after a
  gap — or pub/sub coming back after it dropped — reads the missed batches
  from the log and delivers them first; what the log no longer holds is a
  ``table.resync`` to its connections;
- the same channel carries the few commands one process sends the table's
  others (:meth:`RedisBus.command`): a ``decision`` put to a client
  connected to another process, its answer and its cancelling (see
  :mod:`.prompts`), and the GM's ``decision.default`` for a question
  another process asks.

Every message, batches and socket.io's own alike, arrives through the store's
:class:`~vtt_bridge.state.redis_link.Subscriber` (one connection; under Cluster
one more per node serving followed tables) and is handled by one task in the
order it arrived, a table's messages in the order Redis sent them. A process
publishes over one connection, so the other processes see its broadcasts and
its questions in the order it sent them (the steps before a question reach
the table before the question does).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from socketio.async_pubsub_manager import AsyncPubSubManager

from ..errors import StoreUnavailable
from ..state import Published, RedisStore
from .broadcast import numbered
from .wire import AnswerLimit

__all__ = ["RedisBus"]

log = logging.getLogger("vtt_bridge.server")

Batch = list[tuple[str, Any, str]]


class RedisBus(AnswerLimit, AsyncPubSubManager):
    """A socket.io client manager over the Redis store's own connections (see the module docstring).

    :param store: the (open) Redis store; its link publishes, its subscriber listens.
    :param channel: socket.io's own channel; each table's is ``<channel>:<table room>``.
    """

    name = "vtt-redis"
    # Seconds a table's outbox waits for its own batch to come back on the feed.
    OWN_WAIT = 2.0
    # Seconds a table's log may stay unreadable (a failover, a restart) before its catch-up gives
    # up with table.resync; counted from the first failed read, for every table at once.
    CATCH_UP_PATIENCE = 5.0

    def __init__(self, store: RedisStore, channel: str) -> None:
        super().__init__(channel=channel)
        self.store = store
        # This process's own delivery of a batch (Broadcaster.local); set by the app.
        self.deliver: Callable[[Batch], Awaitable[None]] | None = None
        # A batch's broadcasts as their rooms and encoded packets but for their seqs (Broadcaster.encoded),
        # and this process's delivery of such (Broadcaster.forward); set by the app.
        self.encode: Callable[[Batch], list[tuple[str, str]]] | None = None
        self.forward: Callable[[list[tuple[str, str]], int, int], Awaitable[None]] | None = None
        # What to do with a command another process sends a table (:meth:`command`), by name.
        self.commands: dict[str, Callable[[Any], None]] = {}
        # This process's delivery of ``table.resync`` to a table's connections (Broadcaster.resync).
        self.resync: Callable[[str, int | None], Awaitable[None]] | None = None
        self._inbox: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
        # Per followed table: the newest broadcast_seq delivered to its connections here.
        self._delivered: dict[str, int] = {}
        # Batches this process published, by (table, first seq), until its feed brings them back.
        self._own: dict[tuple[str, int], tuple[Batch, asyncio.Future[None]]] = {}
        # Per table, the batch its attack here prepared for its commit to publish (prepare_batch); once
        # it landed, by (table, first seq), its packets as published, for delivery here (expect_batch).
        self._prepared: dict[str, Published] = {}
        self._encoded: dict[tuple[str, int], list[tuple[str, str]]] = {}
        # Held while a batch is handed to this process's sockets: one batch at a time, in order.
        self._delivering = asyncio.Lock()
        # Batches delivered from a table's log rather than the feed, and table.resyncs sent (for /metrics-minded tests).
        self.caught_up = 0
        self.resyncs = 0
        self._mark = self.host_id + "\n"
        self._mark_bytes = self._mark.encode()
        self._following: set[str] = set()
        # Since when the tables' logs could not be read (None: readable), for CATCH_UP_PATIENCE.
        self._unreadable_since: float | None = None

    def _table_channel(self, room: str) -> str:
        # The table id as a hash tag: under Cluster the channel is sharded, in the table's slot.
        table_id = room.split("/", 1)[0].removeprefix("table:")
        return f"{self.channel}:table:{{{table_id}}}"

    # -- broadcasts -------------------------------------------------------------------

    async def publish_batch(self, table_id: str, batch: Batch, ident: str = "") -> None:
        """Number, log and publish a table's batch of ``(event, data, room)`` (one script).

        This process delivers it at once when it is next in the table's order
        here; otherwise from its feed, in order (see :meth:`_numbered`), with
        the batch in hand rather than parsed again. This returns once it is
        delivered (at most :attr:`OWN_WAIT` seconds), so the table's outbox
        drained means handed to this process's sockets, as with one process
        (the steps before a question reach the table before it). ``ident``:
        the batch's id, the same when it is sent again after a failure (it is
        then numbered once: :meth:`~vtt_bridge.state.RedisStore.broadcast`).
        """
        first = await self.store.broadcast(
            table_id,
            self._table_channel(f"table:{table_id}"),
            self._body(batch),
            len(batch),
            sender=self.host_id,
            ident=ident,
        )
        await self.published_batch(table_id, batch, first)

    def prepare_batch(self, table_id: str, batch: Batch, mark: bytes) -> Published:
        """A batch for a commit to publish (:class:`~vtt_bridge.state.Published`): ``batch``'s JSON
        holds ``mark`` once, where the commit's audit seq goes (:meth:`published_batch` then
        delivers it here, with the packets encoded for the others: :meth:`expect_batch`)."""
        assert self.encode is not None
        items = self.encode(batch)
        head, tail = self._joined(items).split(mark)
        published = Published(self._table_channel(f"table:{table_id}"), self.host_id, len(batch), head, tail)
        published.kept = (items, mark.decode())
        # The table's attack here that publishes next (one at a time: its commit, then expect_batch).
        self._prepared[table_id] = published
        return published

    def _body(self, batch: Batch) -> bytes:
        """How a batch goes to the other processes and the table's log: for each broadcast its room
        and its socket.io packet but for the seq (:meth:`Broadcaster.encoded
        <.broadcast.Broadcaster.encoded>`), one line each: a process delivers it without parsing it
        or encoding it again."""
        assert self.encode is not None
        return self._joined(self.encode(batch))

    @staticmethod
    def _joined(items: list[tuple[str, str]]) -> bytes:
        return "\n".join(f"{room}\n{prefix}" for room, prefix in items).encode()

    def expect_batch(self, table_id: str, batch: Batch, first: int) -> None:
        """This process's own batch, numbered ``first``… by its commit: kept in hand (not parsed)
        should the feed bring it before :meth:`published_batch` is called for it. When its commit
        published it, the packets encoded for the other processes are delivered here too (with the
        commit's audit seq where the mark stood): the batch is not encoded twice."""
        prepared = self._prepared.pop(table_id, None)
        if prepared is not None and prepared.first == first and prepared.seq is not None:
            items, mark = prepared.kept
            seq = str(prepared.seq)
            self._encoded[(table_id, first)] = [(room, prefix.replace(mark, seq)) for room, prefix in items]
        delivered = self._delivered.get(table_id)
        if delivered is not None and delivered < first and (table_id, first) not in self._own:
            self._own[(table_id, first)] = (batch, asyncio.get_running_loop().create_future())

    async def published_batch(self, table_id: str, batch: Batch, first: int) -> None:
        """Deliver this process's own batch, numbered ``first``…, in the table's order here
        (see :meth:`publish_batch`)."""
        try:
            if self._delivered.get(table_id) == first - 1:
                # Next in order: delivered now (its copy on the feed is then skipped as delivered).
                self._delivered[table_id] = first + len(batch) - 1
                own = self._own.pop((table_id, first), None)
                try:
                    async with self._delivering:
                        await self._in_hand(table_id, batch, first)
                finally:
                    if own and not own[1].done():
                        own[1].set_result(None)
                return
            if table_id in self._delivered and self._delivered[table_id] < first:
                own = self._own.get((table_id, first))
                if own is None:
                    own = self._own[(table_id, first)] = (batch, asyncio.get_running_loop().create_future())
                try:
                    await asyncio.wait_for(asyncio.shield(own[1]), self.OWN_WAIT)
                except TimeoutError:
                    pass  # the feed is away: the bus delivers it from the log when it is back
        finally:
            self._encoded.pop((table_id, first), None)

    async def _in_hand(self, table_id: str, batch: Batch, first: int, skip: int = 0) -> None:
        """Deliver this process's own batch numbered ``first``… here (the first ``skip`` left out):
        as the packets its commit published, when kept (:meth:`expect_batch`); else encoded now."""
        items = self._encoded.get((table_id, first))
        if items is not None:
            assert self.forward is not None
            await self.forward(items, first, skip)
        else:
            assert self.deliver is not None
            await self.deliver(numbered(batch, first, skip=skip))

    def command(self, room: str, name: str, data: Any) -> None:
        """Send ``name`` with ``data`` to the other processes following the table of ``room``.

        Each runs its handler from :attr:`commands`, in order with the table's
        broadcasts; not waited for. (A batch is a JSON array, a command an object.)
        """
        message = self._mark_bytes + orjson.dumps({"command": name, "data": data})
        self.store.link.publish(self._table_channel(room), message, sharded=True)

    def _resubscribed(self) -> None:
        self._inbox.put_nowait(("catch-up", "", ""))

    async def enter_room(self, sid: str, namespace: str, room: str, eio_sid: Any = None) -> Any:
        if self.is_connected(sid, namespace) or self.is_pre_connected(sid, namespace):
            table = room.split("/", 1)[0]
            if table not in self._following:
                # Subscribed (and confirmed by Redis) before the client hears it is connected;
                # numbered batches up to the table's newest seq then are in what it reads.
                table_id = table.removeprefix("table:")
                await self.store.subscriber.subscribe(
                    self._table_channel(table), functools.partial(self._arrived, table_id), sharded=True
                )
                self._following.add(table)
                self._delivered[table_id] = await self.store.broadcast_seq(table_id)
        return await super().enter_room(sid, namespace, room, eio_sid=eio_sid)

    def _arrived(self, table_id: str, message: str) -> None:
        """A message on a table's channel, queued for :meth:`_table` in turn; but a batch delivered
        here already (this process's own, mostly) is dropped at once, as :meth:`_table` would."""
        cut = message.find("\n") + 1
        if cut and not message.startswith("{", cut):
            end = message.find("\n", cut)
            delivered = self._delivered.get(table_id)
            if end > cut and delivered is not None and message[cut:end].isdigit():
                first = int(message[cut:end])
                if first != 1 and first <= delivered:
                    return
        self._inbox.put_nowait(("table", table_id, message))

    async def _table(self, table_id: str, message: str) -> None:
        """A message on a table's channel: a numbered batch, or a command from another process."""
        sender, rest = message.split("\n", 1)
        if rest.startswith("{"):
            if sender != self.host_id:
                parsed = orjson.loads(rest)
                handler = self.commands.get(parsed.get("command"))
                if handler is not None:
                    handler(parsed.get("data"))
            return
        head, body = rest.split("\n", 1)
        first = int(head)
        if first != 1 and first <= self._delivered.get(table_id, first):
            # Delivered already (this process's own batch, mostly): a table's mark only ever
            # stands at the end of a batch, so all of it was; not parsed (1: a wiped store).
            return
        own = self._own.pop((table_id, first), None) if sender == self.host_id else None
        try:
            await self._numbered(table_id, first, own[0] if own else None, body)
        finally:
            if own and not own[1].done():
                own[1].set_result(None)

    async def _numbered(
        self, table_id: str, first: int, batch: Batch | None, body: str, *, catching_up: bool = False
    ) -> None:
        """Deliver the batch numbered ``first``… unless delivered already; a gap is caught up first.

        ``batch``: this process's own, in hand; else ``body`` (:meth:`_body`) is sent as it is."""
        delivered = self._delivered.get(table_id)
        if delivered is None:  # no client here sits at that table
            return
        if batch is None and body.startswith("["):
            # A batch logged by an earlier version as JSON (a log kept across an upgrade).
            batch = [tuple(item) for item in orjson.loads(body)]  # type: ignore[misc]
        if batch is None:
            lines = body.split("\n")
            items = list(zip(lines[::2], lines[1::2], strict=True))
            count = len(items)
        else:
            count = len(batch)
        last = first + count - 1
        if first == 1 and delivered > 0:
            delivered = 0  # the store was wiped: numbering starts again (clients see it go back and resync)
        if last <= delivered:
            return  # delivered already (a catch-up and the feed overlap)
        if first > delivered + 1 and not catching_up:
            delivered = await self._catch_up(table_id, delivered, first - 1)
            if last <= delivered:
                return
        skip = max(0, delivered + 1 - first)
        async with self._delivering:
            if batch is not None:
                await self._in_hand(table_id, batch, first, skip)
            else:
                assert self.forward is not None
                await self.forward(items, first, skip)
        self._delivered[table_id] = last

    async def _catch_up(self, table_id: str, delivered: int, upto: int | None) -> int:
        """Deliver what the table's log holds after ``delivered``; ``table.resync`` if it is gone. Returns the new mark."""
        while True:
            try:
                entries = await self.store.broadcasts_since(table_id, delivered, limit=500)
            except StoreUnavailable:
                now = time.monotonic()
                if self._unreadable_since is None:
                    self._unreadable_since = now
                if now - self._unreadable_since >= self.CATCH_UP_PATIENCE:
                    break
                await asyncio.sleep(0.25)  # a failover, a restart: the log is likely back soon
                continue
            self._unreadable_since = None
            if entries is None:
                break
            for first, message in entries:
                _sender, _head, body = message.split("\n", 2)
                own = self._own.pop((table_id, first), None)
                self.caught_up += 1
                await self._numbered(table_id, first, own[0] if own else None, body, catching_up=True)
                if own and not own[1].done():
                    own[1].set_result(None)
                delivered = self._delivered[table_id]
            if len(entries) < 500 or (upto is not None and delivered >= upto):
                return delivered
        # Trimmed past us (or Redis away too long): our clients must sync.
        mark = upto if upto is not None else await self._newest(table_id, delivered)
        log.warning("broadcasts missed beyond the table's log: table.resync", extra={"table": table_id})
        self._delivered[table_id] = mark
        self._drop_own(table_id, mark)
        assert self.resync is not None
        self.resyncs += 1
        await self.resync(table_id, mark)
        return mark

    async def _newest(self, table_id: str, otherwise: int) -> int:
        try:
            return await self.store.broadcast_seq(table_id)
        except StoreUnavailable:
            return otherwise  # a later message's gap catches up once Redis is back

    def _drop_own(self, table_id: str, upto: int) -> None:
        for key in [k for k in self._own if k[0] == table_id and k[1] <= upto]:
            _batch, done = self._own.pop(key)
            if not done.done():
                done.set_result(None)

    async def _catch_up_all(self) -> None:
        """After pub/sub came back: every followed table from where its delivery stopped."""
        for table_id, delivered in list(self._delivered.items()):
            try:
                newest = await self.store.broadcast_seq(table_id)
            except StoreUnavailable:
                newest = delivered + 1  # try the log; a failure there resyncs
            if newest < delivered:  # wiped: numbering starts again
                self._delivered[table_id] = newest
                self._drop_own(table_id, delivered)
                assert self.resync is not None
                self.resyncs += 1
                await self.resync(table_id, newest)
            elif newest > delivered:
                await self._catch_up(table_id, delivered, None)

    # -- socket.io's own messages -------------------------------------------------------

    async def _publish(self, data: Any) -> None:
        await self.store.link.call("PUBLISH", self.channel, self.json.dumps(data))

    async def _listen(self):  # type: ignore[override]
        """socket.io's messages for the base class's loop; tables' messages are handled here, in turn."""
        subscriber = self.store.subscriber
        subscriber.on_resubscribed.append(self._resubscribed)
        await subscriber.subscribe(self.channel, lambda message: self._inbox.put_nowait(("socketio", "", message)))
        while True:
            kind, table_id, message = await self._inbox.get()
            if kind == "socketio":
                yield message
                continue
            try:
                if kind == "catch-up":
                    await self._catch_up_all()
                else:
                    await self._table(table_id, message)
            except Exception:
                log.exception("a message from another process failed")
