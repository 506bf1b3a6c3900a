"""Sending a table's broadcasts to its rooms.

With one server process, each event of a batch is encoded once (the server's
packet class, an orjson encoding where a record encoded already goes in as it
is) and handed to every listener's engine.io socket with engine.io's public
``send_packet``, in order, without the task per recipient that a plain ``emit``
creates; rooms nobody listens to cost nothing. Connections that asked for
batches (``auth.batch``) sit in a room per choice of events and are sent the
whole batch as one ``batch`` message (one server process only). With the
bridge's Redis bus (:mod:`.bus`) the batch is also published to the other
processes as one message, and they deliver it the same way; with any other
manager every broadcast goes through ``emit``, one after another.

Every broadcast carries ``broadcast_seq``, numbered per table by the store
(:meth:`~vtt_bridge.state.Store.broadcast`): with the Redis bus the store
numbers, logs and publishes a batch in one step and every process, this one
included, delivers it from its feed in order (:mod:`.bus`) — an attack's
results and token updates by its commit's own script, when nothing else of
the table is waiting to go out (:meth:`Broadcaster.prepare`); otherwise the
batch is numbered here and delivered at once. A batch the store cannot
number (Redis away) is not sent: the table's connections here are sent
``table.resync`` instead, and ``table.sync`` brings them up to date.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Mapping
from typing import Any

import engineio
import socketio

from ..errors import StoreUnavailable
from ..state import Published, Store
from .wire import LocalManager

__all__ = ["Broadcaster", "numbered", "table_of"]

log = logging.getLogger("vtt_bridge.server")


def table_of(room: str) -> str:
    """The table id of a broadcast room (``table:<id>/<event>``)."""
    return room.split("/", 1)[0].removeprefix("table:")


def numbered(batch: list[tuple[str, Any, str]], first: int, skip: int = 0) -> list[tuple[str, Any, str]]:
    """``batch`` with ``broadcast_seq`` first, first + 1, … in each event (the first ``skip`` left out)."""
    return [
        (event, {**data, "broadcast_seq": first + n}, room)
        for n, (event, data, room) in enumerate(batch)
        if n >= skip
    ]


class Broadcaster:
    # Pauses between tries of a batch the Redis store could not publish (≈ 6 s in all), then table.resync.
    RETRY = (0.1, 0.2, 0.4, 0.8, 1.5, 3.0)

    def __init__(self, sio: socketio.AsyncServer, store: Store, namespace: str = "/") -> None:
        self.sio = sio
        self.store = store
        self.namespace = namespace
        self._idents = itertools.count(1)  # the id of each batch published through the Redis bus

    async def __call__(
        self, batch: list[tuple[str, Any, str]], batch_rooms: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        """Send ``(event, data, room)`` broadcasts in order.

        ``batch_rooms`` (room → the events its connections receive): each
        such room is sent one ``batch`` message, ``[[event, data], ...]``,
        with the events of ``batch`` it wants, in order — encoded once for
        all its listeners. (Only with one server process: connections ask
        for batches only there, see ``Bridge.authenticate``.)
        """
        sio = self.sio
        manager = sio.manager
        table_id = table_of(batch[0][2])
        publish = getattr(manager, "publish_batch", None)
        if publish is not None:
            # Numbered, logged and published by the store; delivered here from the feed. While
            # Redis is away, tried again for a while (every process's clients get it then),
            # under one id: a try whose reply was lost after it landed is not numbered twice.
            ident = str(next(self._idents))
            for pause in (*self.RETRY, None):
                try:
                    await publish(table_id, batch, ident)
                    return
                except StoreUnavailable as exc:
                    if pause is None:
                        log.warning("broadcasts not sent: %s", exc.message, extra={"table": table_id})
                        await self.resync(table_id)
                        return
                    await asyncio.sleep(pause)
        batch = numbered(batch, await self.store.broadcast(table_id, "", b"", len(batch)))
        if not isinstance(manager, LocalManager):
            for event, data, room in batch:
                await sio.emit(event, data, to=room, namespace=self.namespace)
            return
        await self.local(batch, batch_rooms)

    @property
    def publishes(self) -> bool:
        """Whether a commit can publish its broadcasts with itself (the manager is the Redis bus)."""
        return hasattr(self.sio.manager, "prepare_batch")

    def prepare(self, table_id: str, batch: list[tuple[str, Any, str]], mark: bytes) -> Published:
        """``batch`` for a commit to publish with itself (``mark``: where the commit's seq goes in
        its JSON); only where :attr:`publishes`."""
        return self.sio.manager.prepare_batch(table_id, batch, mark)

    def expect(self, batch: list[tuple[str, Any, str]], first: int) -> None:
        """A batch its commit published, numbered ``first``…, is on its way here (see :meth:`published`)."""
        self.sio.manager.expect_batch(table_of(batch[0][2]), batch, first)

    async def published(self, batch: list[tuple[str, Any, str]], first: int) -> None:
        """Deliver here a batch its commit published, numbered ``first``… (see :meth:`prepare`)."""
        await self.sio.manager.published_batch(table_of(batch[0][2]), batch, first)

    async def resync(self, table_id: str, seq: int | None = None) -> None:
        """Tell this process's connections to ``table_id`` that they missed broadcasts: ``table.resync``."""
        await self._send(f"table:{table_id}", "table.resync", {"broadcast_seq": seq})

    async def local(
        self, batch: list[tuple[str, Any, str]], batch_rooms: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        """Send ``(event, data, room)`` broadcasts in order to this process's own listeners.

        Each event is encoded once for all the listeners of its room.
        """
        for event, data, room in batch:
            await self._send(room, event, data)
        for room, events in (batch_rooms or {}).items():
            items = [[event, data] for event, data, _room in batch if event in events]
            if items:
                await self._send(room, "batch", items)

    def encoded(self, batch: list[tuple[str, Any, str]]) -> list[tuple[str, str]]:
        """Each ``(event, data, room)`` of ``batch`` as its room and its socket.io packet's text
        cut before the value of its ``broadcast_seq`` (the packet's last field): ``prefix + str(seq)
        + "}]"`` is the broadcast numbered ``seq`` (:meth:`forward`), with no encoding left to do."""
        packet_class, namespace = self.sio.packet_class, self.namespace
        out = []
        for event, data, room in batch:
            last = dict(data)
            last.pop("broadcast_seq", None)
            last["broadcast_seq"] = 0
            text = packet_class(socketio.packet.EVENT, namespace=namespace, data=[event, last]).encode()
            if not text.endswith(_SEQ_LAST) or "\n" in text:  # (orjson writes no raw line break)
                raise ValueError(f"a {event} broadcast did not encode on one line with broadcast_seq last")
            out.append((room, text[: -len(_SEQ_CUT)]))
        return out

    async def forward(self, items: list[tuple[str, str]], first: int, skip: int = 0) -> None:
        """Send broadcasts :meth:`encoded` (by this or another process), numbered ``first``…, to
        this process's listeners of their rooms, in order (the first ``skip`` left out)."""
        for n, (room, prefix) in enumerate(items):
            if n >= skip:
                listeners = self._listeners(room)
                if listeners:
                    await self._to(listeners, f"{prefix}{first + n}}}]")

    async def _send(self, room: str, event: str, data: Any) -> None:
        """``event`` to every listener of ``room`` in this process, encoded once."""
        listeners = self._listeners(room)
        if listeners:
            packet = self.sio.packet_class(socketio.packet.EVENT, namespace=self.namespace, data=[event, data])
            await self._to(listeners, packet.encode())

    def _listeners(self, room: str) -> list[str]:
        """The engine.io sessions of ``room``'s listeners in this process."""
        return [eio_sid for _sid, eio_sid in self.sio.manager.get_participants(self.namespace, room)]

    async def _to(self, listeners: list[str], encoded: str) -> None:
        """An encoded socket.io packet to each of ``listeners``."""
        # One engine.io packet for every listener, as python-socketio's own manager sends a room's.
        message = engineio.packet.Packet(engineio.packet.MESSAGE, data=encoded)
        send = self.sio.eio.send_packet
        for eio_sid in listeners:
            await send(eio_sid, message)


# How a broadcast's packet ends once :meth:`Broadcaster.encoded` put ``broadcast_seq`` last (as 0),
# and the part of that cut off (the seq's value goes there instead).
_SEQ_LAST = '"broadcast_seq":0}]'
_SEQ_CUT = "0}]"
