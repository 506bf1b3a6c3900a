"""Sending a table's broadcasts to its rooms.

With one server process, a batch is written straight to the participants'
Engine.IO sockets: each event is encoded once, then queued on every
listener's socket in order, without the task per recipient that a plain
``emit`` creates — so each socket's writer wakes once for the whole batch.
That is what python-socketio's own manager does for a room, minus the
bookkeeping; rooms nobody listens to cost nothing. With the bridge's Redis
bus (:mod:`.bus`) the batch is also published to the other processes as one
message, and they deliver it the same way; with any other manager every
broadcast goes through ``emit``, one after another.
"""

from __future__ import annotations

from typing import Any

import engineio
import socketio

__all__ = ["Broadcaster"]


class Broadcaster:
    def __init__(self, sio: socketio.AsyncServer, namespace: str = "/") -> None:
        self.sio = sio
        self.namespace = namespace

    async def __call__(self, batch: list[tuple[str, Any, str]]) -> None:
        """Send ``(event, data, room)`` broadcasts in order."""
        sio = self.sio
        manager = sio.manager
        publish = getattr(manager, "publish_batch", None)
        if publish is not None:
            publish(batch)
        elif type(manager) is not socketio.AsyncManager:
            for event, data, room in batch:
                await sio.emit(event, data, to=room, namespace=self.namespace)
            return
        await self.local(batch)

    async def local(self, batch: list[tuple[str, Any, str]]) -> None:
        """Send ``(event, data, room)`` broadcasts in order to this process's own listeners."""
        sio = self.sio
        manager = sio.manager
        eio = sio.eio
        for event, data, room in batch:
            listeners = list(manager.get_participants(self.namespace, room))
            if not listeners:
                continue
            encoded = sio.packet_class(socketio.packet.EVENT, namespace=self.namespace, data=[event, data]).encode()
            message = engineio.packet.Packet(engineio.packet.MESSAGE, encoded)
            for _sid, eio_sid in listeners:
                # Queues the packet on the socket (a socket already gone is skipped).
                await eio.send_packet(eio_sid, message)


def plain_websockets(sio: socketio.AsyncServer) -> None:
    """Answer websocket upgrades without per-message deflate.

    Browsers and aiohttp clients offer permessage-deflate, and aiohttp's
    server accepts by default: every frame is then zlib-compressed, which
    was the largest single cost of an attack's broadcasts (about a fifth of
    the server's CPU under load). The bridge's messages are small JSON;
    a reverse proxy can compress the link instead where bandwidth matters
    (docs/deploy.md).
    """
    drivers = sio.eio._async
    base = drivers["websocket"]

    class Uncompressed(base):  # type: ignore[misc, valid-type]
        async def __call__(self, environ):
            from aiohttp.web import WebSocketResponse

            request = environ["aiohttp.request"]
            self._sock = WebSocketResponse(max_msg_size=self.server.max_http_buffer_size, compress=False)
            await self._sock.prepare(request)
            self.environ = environ
            await self.handler(self)
            return self._sock

    sio.eio._async = {**drivers, "websocket": Uncompressed}
