"""What crosses the socket: packets checked once on the way in, limits per connection.

Everything a client sends arrives as a socket.io packet, and every packet is
decoded by :class:`BridgePacket`, so this is the one place where odd input is
caught before any handler sees it:

- text that is not JSON (truncated, a 5,000-digit number, nesting deep enough
  to overflow a parser), strings that are not valid Unicode (a lone surrogate),
  numbers a JSON client cannot keep exactly (beyond ±2**53-1), binary
  attachments, nesting deeper than :data:`~vtt_bridge.state.codec.MAX_DEPTH`;
- events named like socket.io's own (``connect``, ``disconnect``, ...), which
  python-socketio would otherwise hand to the connection handlers;
- packets larger than the documented payload limit.

An event packet that fails is turned into an event carrying a :class:`Refused`
marker instead of its name, so the namespace answers it with the error (when
the client asked for an acknowledgement) and nothing else runs. An answer to a
decision that fails becomes an answer naming no option, which the rules settle
with their default (``how: invalid``).

:class:`BridgeSocketServer` adds the outgoing side: on a websocket every
packet is written to the connection as it is sent, without engine.io's queue
and writer task (:class:`_DirectSocket`), a broadcast framed once for all its
listeners; and a client that stops reading is dropped once more than a byte
limit waits unsent for it (in the transport's buffer, or a long-polling
client's queue), instead of letting the server buffer broadcasts for it until
the ping timeout.
:class:`RateLimiter` is the per-connection token bucket the namespace consults.
"""

from __future__ import annotations

import asyncio
import logging
import re
import struct
import time
from collections.abc import Iterable, Mapping
from typing import Any

import aiohttp
import engineio
import socketio
from aiohttp import web
from engineio.async_drivers import aiohttp as aiohttp_driver
from socketio import packet as sio_packet

from ..errors import InvalidRequest, PayloadTooLarge, RateLimited, VTTError
from ..state.codec import Unacceptable, check_value, dumps, loads_request
from .logs import fields

__all__ = [
    "INVALID_ANSWER",
    "MAX_ATTACHMENTS",
    "RESERVED_EVENTS",
    "BridgePacket",
    "BridgeSocketServer",
    "RateLimiter",
    "Refused",
    "packet_class",
]

log = logging.getLogger("vtt_bridge.server")

# Names socket.io keeps for itself; a client emitting one is refused.
RESERVED_EVENTS = frozenset(
    {"connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener"}
)
# A packet may announce this many binary attachments at most (they are refused anyway).
MAX_ATTACHMENTS = 10
# What a garbled answer to a decision becomes: it names no option, so the rules' default applies.
INVALID_ANSWER = {"option": None, "invalid": "the answer was not valid JSON, Unicode or numbers"}
# The packet types a client may send (CONNECT_ERROR and unknown types are server-only or nonsense).
_FROM_CLIENTS = frozenset(
    {
        sio_packet.CONNECT,
        sio_packet.DISCONNECT,
        sio_packet.EVENT,
        sio_packet.ACK,
        sio_packet.BINARY_EVENT,
        sio_packet.BINARY_ACK,
    }
)
# How much of an oversized packet is read to find its acknowledgement id.
_HEADER = 256


class Refused:
    """Stands in for the event name of a packet that was refused while decoding."""

    __slots__ = ("error",)

    def __init__(self, error: VTTError) -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"<refused {self.error.code}>"


def _details(path: tuple[str, ...], message: str) -> dict[str, Any]:
    """Marshmallow-shaped details for a problem at ``path`` inside an event's arguments."""
    if not path:
        return {"_schema": [message]}
    head, rest = path[0], path[1:]
    if head == "0":
        return {"event": [message]}
    if head != "1":
        return {"_schema": [f"An event carries one payload object; argument {head}: {message}"]}
    if not rest:
        return {"_schema": [message]}
    out: Any = [message]
    for part in reversed(rest):
        out = {part: out}
    return out


def _invalid(path: tuple[str, ...], message: str) -> InvalidRequest:
    where = ".".join(path[1:]) if len(path) > 1 and path[0] == "1" else ""
    text = f"invalid request: {where}: {message}" if where else f"invalid request: {message}"
    return InvalidRequest(text, details=_details(path, message))


class _RequestJSON:
    """The ``json`` module shape socket.io packets use: checked loads, orjson dumps."""

    dumps = staticmethod(dumps)
    loads = staticmethod(loads_request)


class BridgePacket(socketio.packet.Packet):
    """Socket.IO packets that are never binary on the way out and checked on the way in.

    Everything the bridge sends is JSON; python-socketio would otherwise walk
    every outgoing payload recursively looking for ``bytes`` (a tenth of a
    millisecond for an attack record). Incoming packets are checked as the
    module docstring says.
    """

    uses_binary_events = False
    json = _RequestJSON  # orjson: an attack record encodes ~20x faster than with the json module
    max_payload = 1_000_000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        encoded = kwargs.get("encoded_packet")
        if encoded is not None and not encoded:
            # python-socketio skips decoding an empty packet and would treat it as an event without data.
            self.attachment_count = self.decode(encoded)

    def decode(self, encoded_packet: Any) -> int:
        self.id = None
        if not isinstance(encoded_packet, str):
            # A binary frame that no packet announced.
            self.namespace = None
            self._refuse(InvalidRequest("unexpected binary frame", details={"_schema": ["No packet expected it."]}))
            return 0
        too_large = len(encoded_packet) > self.max_payload
        problem: VTTError | None = None
        count = 0
        try:
            count = super().decode(encoded_packet[:_HEADER] if too_large else encoded_packet) or 0
        except Unacceptable as exc:
            problem = _invalid(exc.path, exc.message) if exc.path else _invalid(("1",), exc.message)
        except (ValueError, TypeError, IndexError, KeyError):
            problem = InvalidRequest("not a socket.io packet", details={"_schema": ["Not a socket.io packet."]})
        if too_large:
            problem = PayloadTooLarge(
                f"the packet is {len(encoded_packet)} bytes; the limit is {self.max_payload}",
                details={"size": len(encoded_packet), "limit": self.max_payload},
            )
        elif problem is None:
            if self.packet_type not in _FROM_CLIENTS:
                problem = InvalidRequest(
                    "not a packet a client sends", details={"_schema": ["Not a packet a client sends."]}
                )
            elif count > MAX_ATTACHMENTS:
                problem = InvalidRequest(
                    "binary values are not accepted", details={"_schema": ["Binary values are not accepted."]}
                )
            elif self.packet_type in (sio_packet.EVENT, sio_packet.BINARY_EVENT) and not count:
                problem = _event_problem(self.data, walk=False)  # loads_request walked it already
        if problem is not None:
            self._refuse(problem)
            return 0
        return count

    def add_attachment(self, attachment: Any) -> bool:
        done = super().add_attachment(attachment)
        if done:
            # The placeholders are filled in: whatever binary arrived is refused here.
            is_event = self.packet_type == sio_packet.BINARY_EVENT
            problem = _event_problem(self.data) if is_event else _answer_problem(self.data)
            if problem is not None:
                self.data = [Refused(problem)] if is_event else [INVALID_ANSWER]
        return done

    def _refuse(self, problem: VTTError) -> None:
        kind = self.packet_type
        if kind in (sio_packet.ACK, sio_packet.BINARY_ACK):
            self.packet_type, self.data = sio_packet.ACK, [INVALID_ANSWER]
        elif kind == sio_packet.CONNECT:
            self.data = Refused(problem)  # the connect handler refuses with this reason
        elif kind == sio_packet.DISCONNECT:
            self.data = None
        else:
            # An event (or something that is no packet at all): answered with the error if it has an id.
            self.packet_type, self.data = sio_packet.EVENT, [Refused(problem)]


# An event for the default namespace, without attachments: "2", its acknowledgement id, its JSON array.
_PLAIN_EVENT = re.compile(r"2([0-9]{0,100})\[")


def _plain_event(encoded: str, max_payload: int) -> tuple[int | None, list[Any]] | None:
    """``(ack id, [name, payload...])`` of an event packet in the shape clients send (``2<id>[...]``)
    when :class:`BridgePacket` would take it as it is; ``None``: anything else, left to
    :class:`BridgePacket` (which decodes it, or says what is wrong with it).

    The same result as decoding it with :class:`BridgePacket`, without the packet
    object and python-socketio's general parsing (namespace, attachments).
    """
    match = _PLAIN_EVENT.match(encoded)
    if match is None or len(encoded) > max_payload:
        return None
    head = match.end() - 1
    try:
        data = loads_request(encoded[head:])
    except Unacceptable:
        return None
    if type(data) is not list or not data or type(data[0]) is not str or data[0] in RESERVED_EVENTS:
        return None
    digits = match.group(1)
    return (int(digits) if digits else None), data


def _event_problem(data: Any, *, walk: bool = True) -> VTTError | None:
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        return InvalidRequest(
            "an event is [name, payload]", details={"event": ["An event is a JSON array starting with its name."]}
        )
    if data[0] in RESERVED_EVENTS:
        return InvalidRequest(
            f"{data[0]!r} is a name socket.io reserves; clients may not send it",
            details={"event": [f"Reserved: {', '.join(sorted(RESERVED_EVENTS))}."]},
        )
    if not walk:
        return None
    try:
        check_value(data)
    except Unacceptable as exc:
        return _invalid(exc.path, exc.message)
    return None


def _answer_problem(data: Any) -> VTTError | None:
    try:
        check_value(data)
    except Unacceptable as exc:
        return _invalid(exc.path, exc.message)
    return None


def packet_class(max_payload: int) -> type[BridgePacket]:
    """The packet class of one server, with its payload limit."""
    return type("BridgePacket", (BridgePacket,), {"max_payload": max_payload})


class RateLimiter:
    """A token bucket per connection: ``rate`` events a second, ``burst`` at once.

    :meth:`take` spends one token and returns ``None``, or returns the seconds
    until a token is free. ``rate <= 0`` turns the limit off.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = float(rate)
        self.burst = max(1.0, float(burst))
        self._buckets: dict[str, tuple[float, float]] = {}
        self._told: dict[str, float] = {}

    def take(self, sid: str) -> float | None:
        if self.rate <= 0:
            return None
        now = time.monotonic()
        tokens, then = self._buckets.get(sid, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[sid] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[sid] = (tokens - 1.0, now)
        return None

    def forget(self, sid: str) -> None:
        self._buckets.pop(sid, None)
        self._told.pop(sid, None)

    def error(self, wait: float, message: str = "too many events; slow down") -> RateLimited:
        """The ``rate_limited`` error for a connection that must wait ``wait`` seconds."""
        return RateLimited(
            message, details={"retry_after": max(0.001, round(wait, 3)), "rate": self.rate, "burst": self.burst}
        )

    def tell(self, sid: str) -> bool:
        """Whether to tell ``sid`` it is past its limit, when nothing else can (at most once a second)."""
        now = time.monotonic()
        if now - self._told.get(sid, -1.0) < 1.0:
            return False
        self._told[sid] = now
        return True


def ws_frame(data: str | bytes) -> bytes:
    """One websocket frame as a server sends it (final, unmasked, not deflated) carrying ``data``."""
    if isinstance(data, str):
        body, first = data.encode(), 0x81  # text
    else:
        body, first = bytes(data), 0x82  # binary
    size = len(body)
    if size < 126:
        return bytes((first, size)) + body
    if size < 65536:
        return _LENGTH_16.pack(first, 126, size) + body
    return _LENGTH_64.pack(first, 127, size) + body


_LENGTH_16 = struct.Struct("!BBH")
_LENGTH_64 = struct.Struct("!BBQ")


class _WebSocket(aiohttp_driver.WebSocket):
    """engine.io's aiohttp websocket: without per-message deflate unless asked, and the
    engine.io socket writing straight to it (:class:`_DirectSocket`).

    engine.io decodes a frame's first character as the packet type outside any
    error handling, so an empty frame or one starting with anything but a
    packet type a client sends (``1``-``6``) would end the connection; such a
    frame is dropped instead (the transport has no way to answer it).
    """

    compress = False

    async def __call__(self, environ: Mapping[str, Any]) -> Any:
        request = environ["aiohttp.request"]
        self._sock = web.WebSocketResponse(max_msg_size=self.server.max_http_buffer_size, compress=self.compress)
        await self._sock.prepare(request)
        self.environ = environ
        socket = getattr(self.handler, "__self__", None)
        if self.compress or type(socket) not in (engineio.async_socket.AsyncSocket, _DirectSocket):
            await self.handler(self)  # engine.io's own loop: a queue and a writer task
        else:
            socket.__class__ = _DirectSocket
            await socket.serve(self, request.transport)
        return self._sock

    async def wait(self) -> Any:
        while True:
            data = await super().wait()
            if _engineio_packet(data):
                return data
            log.debug("dropped a websocket frame that is no engine.io packet", extra=fields(size=len(data)))


_closing: set[asyncio.Task[Any]] = set()  # websockets being closed by end()
_events: set[asyncio.Task[Any]] = set()  # events being handled (BridgeSocketServer._event)


def _engineio_packet(data: Any) -> bool:
    return not isinstance(data, str) or (data != "" and data[0] in "123456")


class _DirectSocket(engineio.async_socket.AsyncSocket):
    """An engine.io socket on a websocket, written to as packets are sent.

    engine.io queues every outgoing packet and a writer task per socket sends
    them, waking once per packet (a task and a timer each time); and it reads
    each incoming frame in a task of its own. Here, once the websocket carries
    the connection (at once, or after the upgrade from long-polling), every
    packet is framed and handed to the TCP transport where it is sent — in the
    order sent, with no task and no queue — and frames are read in one loop.
    A broadcast's frame is built once for all its listeners
    (:meth:`_EngineServer.broadcast`). What the client receives is the same
    bytes. The transport's own buffer is what waits unsent: past
    ``max_outgoing`` bytes the client is dropped (``slow reader``).
    """

    transport: Any = None  # the TCP transport, once the websocket carries every packet
    websocket: Any = None
    heard = 0.0  # when the last frame arrived (the event loop's clock)
    watchdog: Any = None

    async def send(self, pkt: Any) -> None:
        if self.transport is None:
            await super().send(pkt)
        elif await self.check_ping_timeout():
            await self.write(ws_frame(pkt.encode()))

    def writable(self) -> bool:
        """Whether a packet may be written now without :meth:`send`'s checks (an open websocket, pings answered)."""
        if self.transport is None or self.closing or self.closed:
            return False
        last_ping = self.last_ping
        return not last_ping or time.time() - last_ping <= self.server.ping_timeout

    async def write(self, frame: bytes) -> None:
        """Hand ``frame`` to the transport, or drop the client if too much waits unsent already."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        server = self.server
        limit = server.max_outgoing
        if limit > 0:
            waiting = transport.get_write_buffer_size()
            if waiting + len(frame) > limit:
                await server._drop(self.sid, self, waiting + len(frame))
                return
        transport.write(frame)

    async def serve(self, ws: _WebSocket, transport: Any) -> None:
        """The websocket's life: the upgrade (if from long-polling), then read until it closes."""
        server = self.server
        if self.connected:
            if not await self._upgrade(ws):
                return
        else:
            self.connected = True
            self.upgraded = True
        # What was queued before (the open packet; polling's leftovers) goes first.
        queue = self.queue
        while not queue.empty():
            pkt = queue.get_nowait()
            queue.task_done()
            if pkt is None:  # dropped meanwhile (see runner.drop_transports)
                await ws.close()
                return
            transport.write(ws_frame(pkt.encode()))
        self.transport, self.websocket = transport, ws
        response = ws._sock
        timeout = server.ping_interval + server.ping_timeout
        largest = server.max_http_buffer_size
        on_message = server.handlers.get("message")
        text = aiohttp.WSMsgType.TEXT
        # A client that sends nothing (not even its pong) for ``timeout`` seconds is gone: one
        # timer per socket, moved on only when it fires, instead of a timeout per frame read.
        loop = asyncio.get_running_loop()
        self.heard = loop.time()
        self.watchdog = loop.call_at(self.heard + timeout, self._silence, loop, timeout)
        try:
            while True:
                try:
                    message = await response.receive()
                except (Exception, asyncio.CancelledError):  # a broken connection
                    break
                self.heard = loop.time()
                data = message.data
                if message.type is text:
                    if not _engineio_packet(data):
                        log.debug("dropped a websocket frame that is no engine.io packet", extra=fields(size=len(data)))
                        continue
                elif message.type is not aiohttp.WSMsgType.BINARY:
                    break  # closed
                if len(data) > largest:
                    break
                if on_message is not None and type(data) is str and data[0] == "4" and data[1:2].isnumeric():
                    # A socket.io packet (as engine.io would decode it: the text after the type).
                    try:
                        await on_message(self.sid, data[1:])
                    except Exception:
                        log.exception("message handler error", extra=fields(eio_sid=self.sid))
                    continue
                try:
                    await self.receive(engineio.packet.Packet(encoded_packet=data))
                except engineio.exceptions.UnknownPacketError:
                    pass
                except engineio.exceptions.SocketIsClosedError:
                    break
                except Exception:
                    log.exception("websocket receive error", extra=fields(eio_sid=self.sid))
        finally:
            self.watchdog.cancel()
            self.transport = self.websocket = None
        await ws.close()
        await self.close(wait=False, abort=True, reason=server.reason.TRANSPORT_CLOSE)

    def _silence(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        """The watchdog: the connection is cut after ``timeout`` seconds without a frame."""
        if loop.time() - self.heard < timeout:
            self.watchdog = loop.call_at(self.heard + timeout, self._silence, loop, timeout)
        elif self.transport is not None:
            log.info("websocket silent past the ping timeout; closing it", extra=fields(eio_sid=self.sid))
            self.transport.abort()

    def end(self) -> bool:
        """Close the websocket the way a network drop ends it (no engine.io ``CLOSE`` packet);
        ``False`` if this socket is not on a websocket (yet)."""
        if self.websocket is None:
            return False
        task = asyncio.get_running_loop().create_task(self.websocket.close())
        _closing.add(task)
        task.add_done_callback(_closing.discard)
        return True

    async def _upgrade(self, ws: _WebSocket) -> bool:
        """engine.io's upgrade from long-polling: ``2probe`` → ``3probe``, then ``5``."""
        self.upgrading = True
        try:
            probe = engineio.packet.Packet(encoded_packet=await ws.wait())
            if probe.packet_type != engineio.packet.PING or probe.data != "probe":
                return False
            await ws.send(engineio.packet.Packet(engineio.packet.PONG, data="probe").encode())
            await self.queue.put(engineio.packet.Packet(engineio.packet.NOOP))  # ends the pending long-poll
            if engineio.packet.Packet(encoded_packet=await ws.wait()).packet_type != engineio.packet.UPGRADE:
                return False
        except (OSError, ValueError):
            return False
        finally:
            self.upgrading = False
        self.upgraded = True
        return True


class _EngineServer(engineio.AsyncServer):
    """engine.io's server, writing to websockets directly and dropping clients that stop reading.

    Every packet for a client — an acknowledgement, a prompt, a broadcast —
    goes through :meth:`send_packet` (or :meth:`broadcast`). On a websocket
    (:class:`_DirectSocket`) it is written to the connection at once; on
    long-polling it waits in the socket's queue for the next poll. When more
    than ``max_outgoing`` bytes wait unsent for one client (in the
    transport's buffer, or the queue), the client is dropped: the socket is
    closed (socket.io's disconnect handlers run, reason ``slow reader``) and
    the TCP connection aborted.
    """

    # The bytes waiting in a long-polling queue are counted each time it reaches a multiple
    # of this many packets (a stalled queue grows by one packet at a time, so it passes
    # every multiple): amortized, a constant cost per packet.
    _QUICK = 32
    max_outgoing = 8_000_000
    dropped = 0
    # The socket.io server's environ per engine.io sid (to reach the aiohttp request).
    environs: Mapping[str, Any] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # This server's own copy of the driver table, with its websocket.
        self._async = {**self._async, "websocket": type("_WebSocket", (_WebSocket,), {})}

    def compress_websockets(self, on: bool) -> None:
        """Accept permessage-deflate (packets then go through engine.io's queue and writer)."""
        self._async["websocket"].compress = on

    async def broadcast(self, sids: Any, encoded: str) -> None:
        """The socket.io packet ``encoded`` to every engine.io socket of ``sids``: framed once for all."""
        await self.broadcast_many(((sids, encoded),))

    async def broadcast_many(self, sends: Iterable[tuple[Iterable[str], str]]) -> None:
        """Several socket.io packets, each ``(sids, encoded)``, in order: each framed once, and
        every websocket written to once, with all of its frames (one system call per client
        for a table's whole batch of broadcasts, not one per event)."""
        frames: dict[_DirectSocket, list[bytes]] = {}
        sockets = self.sockets
        for sids, encoded in sends:
            frame: bytes | None = None
            message: Any = None
            for sid in sids:
                socket = sockets.get(sid)
                if socket is None:
                    continue
                if type(socket) is _DirectSocket and socket.writable():
                    if frame is None:
                        frame = ws_frame("4" + encoded)
                    waiting = frames.get(socket)
                    if waiting is None:
                        frames[socket] = [frame]
                    else:
                        waiting.append(frame)
                else:
                    if message is None:
                        message = engineio.packet.Packet(engineio.packet.MESSAGE, encoded)
                    await self.send_packet(sid, message)
        for socket, waiting in frames.items():
            await socket.write(waiting[0] if len(waiting) == 1 else b"".join(waiting))

    async def send_packet(self, sid: str, pkt: Any) -> None:
        socket = self.sockets.get(sid)
        if socket is not None and self.max_outgoing > 0 and getattr(socket, "transport", None) is None:
            if socket.closing or socket.closed:
                return
            queue = socket.queue
            size = queue.qsize()
            if size and size % self._QUICK == 0:
                waiting = sum(len(p.data) for p in list(queue._queue) if p is not None and isinstance(p.data, (str, bytes)))
                if waiting > self.max_outgoing:
                    await self._drop(sid, socket, waiting)
                    return
        await super().send_packet(sid, pkt)

    async def _drop(self, sid: str, socket: Any, waiting: int) -> None:
        if socket.closing or socket.closed:
            return
        self.dropped += 1
        log.warning(
            "dropping a client that stopped reading",
            extra=fields(eio_sid=sid, queued_bytes=waiting, limit=self.max_outgoing),
        )
        queue = socket.queue
        while not queue.empty():
            queue.get_nowait()
            queue.task_done()
        request = (self.environs.get(sid) or {}).get("aiohttp.request")
        transport = getattr(request, "transport", None)
        if transport is not None:
            transport.abort()  # first: nothing more is written to it
        await socket.close(wait=False, abort=True, reason="slow reader")


class BridgeSocketServer(socketio.AsyncServer):
    """python-socketio's server on an engine.io server that drops clients that stop reading."""

    def __init__(self, *args: Any, max_outgoing: int = 8_000_000, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.eio.max_outgoing = max_outgoing
        self.eio.environs = self.environ

    @property
    def dropped(self) -> int:
        """How many clients were dropped for not reading."""
        return self.eio.dropped

    async def _handle_ack(self, eio_sid: str, namespace: str | None, id: int, data: Any) -> None:
        """An acknowledgement from a client: an answer to a decision it was asked.

        Answers spend from the connection's rate limit like events. The one
        answer the server is waiting for always counts, even past the limit
        (the first valid answer wins; socket.io forgets the question then).
        Anything else — an answer to a question not (or no longer) asked, a
        second answer, an id the server never used — is dropped; past the
        limit the connection is told so with a ``rate_limited`` event (at
        most once a second), since an acknowledgement cannot be answered.
        """
        namespace = namespace or "/"
        sid = self.manager.sid_from_eio_sid(eio_sid, namespace)
        awaited = sid is not None and isinstance(id, int) and id > 0 and id in self.manager.callbacks.get(sid, {})
        limiter = getattr(self.namespace_handlers.get(namespace), "limiter", None)
        wait = limiter.take(sid) if isinstance(limiter, RateLimiter) and sid is not None else None
        if awaited:
            await super()._handle_ack(eio_sid, namespace, id, data)
        elif wait is not None and limiter.tell(sid):
            await self.emit(
                "rate_limited",
                limiter.error(wait, "too many answers; slow down").to_dict(),
                to=sid,
                namespace=namespace,
            )

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        """A socket.io packet from a client; an event for the bridge's namespace goes straight to it.

        python-socketio routes each event through its generic handler lookup
        and builds an acknowledgement packet object for the answer. An event
        for the default namespace, when its only handler is the namespace class
        (the bridge's), is decoded (and checked) the same way and handed to the
        namespace in a task of its own, as python-socketio does; the
        acknowledgement is encoded as python-socketio encodes it (same bytes).
        Everything else takes python-socketio's way.
        """
        if type(data) is str and data[:1] == "2" and eio_sid not in self._binary_packet:
            fast = _plain_event(data, self.packet_class.max_payload)
            if fast is not None:
                namespace, (ack_id, args) = None, fast
            else:
                pkt = self.packet_class(encoded_packet=data)
                if pkt.packet_type != sio_packet.EVENT:  # pragma: no cover - "2…" decodes as an event
                    await super()._handle_eio_message(eio_sid, data)
                    return
                namespace, ack_id, args = pkt.namespace, pkt.id, pkt.data
            # Only the default namespace: the acknowledgement below is encoded without one.
            handler = self.namespace_handlers.get("/") if namespace is None or namespace == "/" else None
            if handler is None or "/" in self.handlers or "*" in self.handlers:
                await self._handle_event(eio_sid, namespace, ack_id, args)
                return
            sid = self.manager.sid_from_eio_sid(eio_sid, "/")
            if not self.manager.is_connected(sid, "/"):
                return
            if self.async_handlers:
                task = asyncio.get_running_loop().create_task(self._event(handler, sid, eio_sid, ack_id, args))
                _events.add(task)
                task.add_done_callback(_events.discard)
            else:
                await self._event(handler, sid, eio_sid, ack_id, args)
            return
        await super()._handle_eio_message(eio_sid, data)

    async def _event(self, handler: Any, sid: str, eio_sid: str, ack_id: int | None, data: list[Any]) -> None:
        """Run one event's handler; its answer goes back as the acknowledgement ``ack_id`` asked for."""
        try:
            answer = await handler.trigger_event(data[0], sid, *data[1:])
        except asyncio.CancelledError:  # as python-socketio: a cancelled handler answers nothing
            answer = None
        if ack_id is None or answer == self.not_handled:
            return
        if answer is None:
            args: list[Any] = []
        elif isinstance(answer, tuple):
            args = list(answer)
        else:
            args = [answer]
        # socket.io's ACK packet for the default namespace: "3" <id> <JSON args>.
        encoded = f"{sio_packet.ACK}{ack_id}" + self.packet_class.json.dumps(args, separators=(",", ":"))
        await self.eio.broadcast((eio_sid,), encoded)

    async def _send_packet(self, eio_sid: str, pkt: Any) -> None:
        """A socket.io packet (an acknowledgement, a ``call``, an event to one client), written
        straight to its websocket when it is on one (:meth:`_EngineServer.broadcast`)."""
        encoded = pkt.encode()
        if isinstance(encoded, str):
            await self.eio.broadcast((eio_sid,), encoded)
        else:
            await super()._send_packet(eio_sid, pkt)

    def _engineio_server_class(self) -> type[engineio.AsyncServer]:
        return _EngineServer
