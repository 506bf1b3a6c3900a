"""What crosses the socket: packets checked once on the way in, limits per connection.

Everything a client sends arrives as a socket.io packet, and every packet is
decoded by :class:`BridgePacket` (python-socketio's ``serializer`` option: a
subclass of its ``Packet`` with its own ``decode``), so this is the one place
where odd input is caught before any handler sees it:

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

The outgoing side and the connections, on public ground only:

- :class:`AnswerLimit` (a client manager's ``trigger_callback``) spends an
  answer from the connection's rate limit, and tells a client past its limit
  with a ``rate_limited`` event;
- :class:`Connections` is an aiohttp middleware that knows the TCP
  transports socket.io's requests run on: it turns permessage-deflate off
  unless asked for, lets a websocket's transport buffer up to ``max_outgoing``
  bytes, drops a client once more than that waits unsent for it, and ends
  every connection the way a network drop does when the server stops.

:class:`RateLimiter` is the per-connection token bucket the namespace consults.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import socketio
from aiohttp import hdrs, web
from socketio import packet as sio_packet

from ..errors import InvalidRequest, PayloadTooLarge, RateLimited, VTTError
from ..state.codec import Unacceptable, check_value, dumps, loads_request
from .logs import fields

__all__ = [
    "INVALID_ANSWER",
    "MAX_ATTACHMENTS",
    "RESERVED_EVENTS",
    "AnswerLimit",
    "BridgePacket",
    "Connections",
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




class AnswerLimit:
    """Answers to decisions (socket.io acknowledgements) spend from the connection's rate limit.

    A mixin for a python-socketio client manager, before the manager class
    (``class M(AnswerLimit, socketio.AsyncManager)``): every acknowledgement
    a client sends reaches the manager's ``trigger_callback``. Each one
    takes a token from the connection's bucket (:attr:`limiter`, set when the
    namespace is registered); one past the limit tells the client so with a
    ``rate_limited`` event, at most once a second (an acknowledgement cannot
    be answered). The answer itself always goes on to python-socketio: the
    one the server waits for counts even past the limit, and one to a
    question not (or no longer) asked is ignored there.
    """

    limiter: RateLimiter | None = None

    async def trigger_callback(self, sid: str, id: int, data: Any) -> None:
        limiter = self.limiter
        wait = limiter.take(sid) if limiter is not None else None
        if wait is not None and limiter is not None and limiter.tell(sid):
            error = limiter.error(wait, "too many answers; slow down").to_dict()
            await self.server.emit("rate_limited", error, to=sid)  # type: ignore[attr-defined]
        # socket.io numbers questions from 1; python-socketio keeps its counter under id 0,
        # which an answer naming id 0 would take for a question.
        if type(id) is int and id > 0:
            await super().trigger_callback(sid, id, data)  # type: ignore[misc]


class LocalManager(AnswerLimit, socketio.AsyncManager):
    """The client manager of one server process."""


class Connections:
    """The TCP connections socket.io's requests run on, seen from an aiohttp middleware.

    Every request under socket.io's path passes :meth:`middleware` (a
    websocket's request lasts as long as the websocket). It:

    - drops the client's offer of permessage-deflate unless ``compress``
      (zlib on every small frame costs more CPU than it saves on a LAN);
    - lets a websocket's transport buffer up to ``max_outgoing`` bytes
      (asyncio's write-buffer limits): engine.io's writer waits only past
      that, so what waits unsent for a client that stopped reading sits in
      that buffer, where :meth:`sweep` measures it and drops the client
      (``slow reader``) once it is over the limit — its socket.io
      disconnect handlers run, its memory is freed;
    - :meth:`end_all`: ends every connection the way a network drop ends it
      (the TCP connection aborted, no close packet), which every socket.io
      client answers with its own reconnection.

    A long-polling client holds no connection between its polls: what waits
    for it is bounded by the ping timeout (a client that stops polling stops
    answering pings).
    """

    # Seconds between two looks at every websocket's unsent bytes (10,000 of them take ~2 ms).
    SWEEP = 0.2

    def __init__(self, path: str = "/socket.io/", *, max_outgoing: int = 8_000_000, compress: bool = False) -> None:
        self.path = path
        self.max_outgoing = max_outgoing
        self.compress = compress
        self.dropped = 0
        self.closed = 0  # websockets that ended, however (see runner.Collector)
        self.open: dict[Any, bool] = {}  # transport -> whether it carries a websocket
        self.sweeper: asyncio.Task[None] | None = None
        # Called with the request of a websocket engine.io gave up on (see :meth:`middleware`).
        self.broken: Callable[[web.Request], Awaitable[None]] | None = None

    @web.middleware
    async def middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if not request.path.startswith(self.path):
            return await handler(request)
        transport = request.transport
        websocket = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        if websocket:
            if not self.compress and hdrs.SEC_WEBSOCKET_EXTENSIONS in request.headers:
                headers = request.headers.copy()
                del headers[hdrs.SEC_WEBSOCKET_EXTENSIONS]
                request = request.clone(headers=headers)
            if transport is not None and self.max_outgoing > 0:
                transport.set_write_buffer_limits(high=self.max_outgoing)
        if transport is None:
            return await handler(request)
        self.open[transport] = websocket
        try:
            return await handler(request)
        except (ValueError, IndexError) as exc:
            if not websocket:
                raise
            # engine.io ends a websocket whose frame does not start with a packet type
            # (an empty frame, "x") by raising out of its reader: that client's connection
            # closes (its socket.io client reconnects); nothing else is affected.
            log.info("closed a websocket that sent a frame that is no engine.io packet", extra=fields(error=str(exc)))
            transport.abort()
            if self.broken is not None:
                await self.broken(request)
            return web.Response(status=400)
        finally:
            self.open.pop(transport, None)
            if websocket:
                self.closed += 1

    async def start(self) -> None:
        if self.max_outgoing > 0 and self.sweeper is None:
            self.sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def stop(self) -> None:
        sweeper, self.sweeper = self.sweeper, None
        if sweeper is not None:
            sweeper.cancel()
            await asyncio.gather(sweeper, return_exceptions=True)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.SWEEP)
            self.sweep()

    def sweep(self) -> int:
        """Drop every websocket client with more than ``max_outgoing`` bytes unsent; how many were dropped."""
        limit = self.max_outgoing
        over = [t for t, ws in self.open.items() if ws and t.get_write_buffer_size() > limit]
        for transport in over:
            self.dropped += 1
            log.warning(
                "dropping a client that stopped reading",
                extra=fields(queued_bytes=transport.get_write_buffer_size(), limit=limit, reason="slow reader"),
            )
            self.open.pop(transport, None)
            transport.abort()  # engine.io sees the websocket close; socket.io's disconnect handlers run
        return len(over)

    def end_all(self) -> None:
        """End every socket.io connection of this process as a network drop would (no close packet)."""
        for transport in list(self.open):
            transport.abort()
        self.open.clear()


class _QuietReceiveErrors(logging.Filter):
    """engine.io logs a frame it cannot take (a packet type it does not know) with a traceback:
    one line instead, at INFO, since a client's garbage is not a server error."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and "receive error" in record.getMessage():
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg, record.args = "dropped a websocket frame that is no engine.io packet", ()
        return True


engineio_log = logging.getLogger("vtt_bridge.engineio")
engineio_log.addFilter(_QuietReceiveErrors())
engineio_log.setLevel(logging.ERROR)


class BridgeSocketServer(socketio.AsyncServer):
    """python-socketio's server, and the :class:`Connections` its requests run on."""

    def __init__(self, *args: Any, connections: Connections, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connections = connections
        connections.broken = self.forget

    async def forget(self, request: web.Request) -> None:
        """Close the engine.io session a broken websocket carried, so socket.io's disconnect runs now."""
        eio_sid = request.query.get("sid")
        if eio_sid is None:
            eio_sid = next((s for s, env in self.environ.items() if env.get("aiohttp.request") is request), None)
        if eio_sid is not None:
            await self.eio.disconnect(eio_sid)

    @property
    def dropped(self) -> int:
        """How many clients were dropped for not reading."""
        return self.connections.dropped
