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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import engineio
import socketio

from .wire import LocalManager

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
        elif not isinstance(manager, LocalManager):
            for event, data, room in batch:
                await sio.emit(event, data, to=room, namespace=self.namespace)
            return
        await self.local(batch, batch_rooms)

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

    async def _send(self, room: str, event: str, data: Any) -> None:
        """``event`` to every listener of ``room`` in this process, encoded once."""
        sio = self.sio
        listeners = [eio_sid for _sid, eio_sid in sio.manager.get_participants(self.namespace, room)]
        if listeners:
            encoded = sio.packet_class(socketio.packet.EVENT, namespace=self.namespace, data=[event, data]).encode()
            # One engine.io packet for every listener, as python-socketio's own manager sends a room's.
            message = engineio.packet.Packet(engineio.packet.MESSAGE, data=encoded)
            send = sio.eio.send_packet
            for eio_sid in listeners:
                await send(eio_sid, message)
