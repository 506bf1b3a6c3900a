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
  so the publish shares a write with the commit before it;
- one channel per table (``<prefix>socketio:table:<id>``), which a process
  subscribes to when a client of that table first connects to it: a process
  receives only the tables its clients sit at;
- a process skips its own messages by their first line (its id), unparsed;
- the same channel carries the few commands one process sends the table's
  others (:meth:`RedisBus.command`): a ``decision`` put to a client
  connected to another process, its answer and its cancelling (see
  :mod:`.prompts`), and the GM's ``decision.default`` for a question
  another process asks.

Every message, batches and socket.io's own alike, arrives over the store's
one :class:`~vtt_bridge.state.redis_link.Subscriber` connection and is handled
by one task in the order Redis sent it; a process publishes over one
connection, so the other processes see its broadcasts and its questions in
the order it sent them (the steps before a question reach the table before
the question does).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from socketio.async_pubsub_manager import AsyncPubSubManager

from ..state import RedisStore
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

    def __init__(self, store: RedisStore, channel: str) -> None:
        super().__init__(channel=channel)
        self.store = store
        # This process's own delivery of a batch (Broadcaster.local); set by the app.
        self.deliver: Callable[[Batch], Awaitable[None]] | None = None
        # What to do with a command another process sends a table (:meth:`command`), by name.
        self.commands: dict[str, Callable[[Any], None]] = {}
        self._inbox: asyncio.Queue[tuple[bool, str]] = asyncio.Queue()
        self._mark = self.host_id + "\n"
        self._mark_bytes = self._mark.encode()
        self._following: set[str] = set()

    def _table_channel(self, room: str) -> str:
        return f"{self.channel}:{room.split('/', 1)[0]}"

    # -- broadcasts -------------------------------------------------------------------

    def publish_batch(self, batch: Batch) -> None:
        """Send a table's batch of ``(event, data, room)`` to the other processes: one message.

        Queued on the store's link behind everything this process sent
        before it; not waited for (a failure is logged).
        """
        channel = self._table_channel(batch[0][2])
        if any(self._table_channel(room) != channel for _event, _data, room in batch):
            for event, data, room in batch:  # not one table's batch: one message per broadcast
                self.store.link.send("PUBLISH", self._table_channel(room), self._encode([(event, data, room)]))
            return
        self.store.link.send("PUBLISH", channel, self._encode(batch))

    def command(self, room: str, name: str, data: Any) -> None:
        """Send ``name`` with ``data`` to the other processes following the table of ``room``.

        Each runs its handler from :attr:`commands`, in order with the table's
        broadcasts; not waited for. (A batch is a JSON array, a command an object.)
        """
        message = self._mark_bytes + orjson.dumps({"command": name, "data": data})
        self.store.link.send("PUBLISH", self._table_channel(room), message)

    def _encode(self, batch: Batch) -> bytes:
        return self._mark_bytes + orjson.dumps(batch)

    def _batch_arrived(self, message: str) -> None:
        if not message.startswith(self._mark):  # this process's own: delivered already
            self._inbox.put_nowait((True, message))

    async def enter_room(self, sid: str, namespace: str, room: str, eio_sid: Any = None) -> Any:
        if self.is_connected(sid, namespace) or self.is_pre_connected(sid, namespace):
            table = room.split("/", 1)[0]
            if table not in self._following:
                # Subscribed (and confirmed by Redis) before the client hears it is connected.
                await self.store.subscriber.subscribe(self._table_channel(table), self._batch_arrived)
                self._following.add(table)
        return await super().enter_room(sid, namespace, room, eio_sid=eio_sid)

    # -- socket.io's own messages -------------------------------------------------------

    async def _publish(self, data: Any) -> None:
        await self.store.link.call("PUBLISH", self.channel, self.json.dumps(data))

    async def _listen(self):  # type: ignore[override]
        """socket.io's messages for the base class's loop; batches are delivered here, in turn."""
        await self.store.subscriber.subscribe(self.channel, lambda message: self._inbox.put_nowait((False, message)))
        while True:
            batch, message = await self._inbox.get()
            if not batch:
                yield message
                continue
            try:
                parsed = orjson.loads(message.split("\n", 1)[1])
                if isinstance(parsed, dict):
                    handler = self.commands.get(parsed.get("command"))
                    if handler is not None:
                        handler(parsed.get("data"))
                    continue
                assert self.deliver is not None
                await self.deliver(parsed)
            except Exception:
                log.exception("a message from another process failed")
