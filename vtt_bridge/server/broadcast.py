"""Sending a table's broadcasts to its rooms.

With one server process, a batch is written straight to the participants'
Engine.IO sockets: each event is encoded and framed once, then written to
every listener's websocket in order (queued for a long-polling one), without
the task per recipient that a plain ``emit`` creates
(:meth:`~.wire._EngineServer.broadcast`). That is what python-socketio's own
manager does for a room, minus the bookkeeping; rooms nobody listens to cost
nothing. Connections that asked
for batches (``auth.batch``) sit in a room per choice of events and are sent
the whole batch as one ``batch`` message (one server process only). With the
bridge's Redis bus (:mod:`.bus`) the batch is also published to the other
processes as one message, and they deliver it the same way; with any other
manager every broadcast goes through ``emit``, one after another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import socketio

__all__ = ["Broadcaster"]


class Broadcaster:
    def __init__(self, sio: socketio.AsyncServer, namespace: str = "/") -> None:
        self.sio = sio
        self.namespace = namespace

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
        publish = getattr(manager, "publish_batch", None)
        if publish is not None:
            publish(batch)
        elif type(manager) is not socketio.AsyncManager:
            for event, data, room in batch:
                await sio.emit(event, data, to=room, namespace=self.namespace)
            return
        await self.local(batch, batch_rooms)

    async def local(
        self, batch: list[tuple[str, Any, str]], batch_rooms: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        """Send ``(event, data, room)`` broadcasts in order to this process's own listeners.

        Each event is encoded and framed once; each listener's websocket is
        written to once, with every frame of the batch it receives.
        """
        sends: list[tuple[list[str], str]] = []
        for event, data, room in batch:
            self._add(sends, room, event, data)
        for room, events in (batch_rooms or {}).items():
            items = [[event, data] for event, data, _room in batch if event in events]
            if items:
                self._add(sends, room, "batch", items)
        if sends:
            await self.sio.eio.broadcast_many(sends)

    def _add(self, sends: list[tuple[list[str], str]], room: str, event: str, data: Any) -> None:
        """``event`` for every listener of ``room``, encoded once, added to ``sends``."""
        sio = self.sio
        listeners = [eio_sid for _sid, eio_sid in sio.manager.get_participants(self.namespace, room)]
        if listeners:
            encoded = sio.packet_class(socketio.packet.EVENT, namespace=self.namespace, data=[event, data]).encode()
            sends.append((listeners, encoded))
