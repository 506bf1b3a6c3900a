"""A lean Redis connection for the hot path: every command pipelined, replies matched in order.

redis-py's asyncio client costs about 180 µs of CPU a command (a connection
taken from a pool and given back, a lock, instrumentation); an attack needs a
few commands and a broadcast one more, so that was most of what the Redis
store added to an attack. A :class:`Link` is one connection that any number of
coroutines share: a command is packed and queued, everything queued in one
turn of the event loop goes out in one write, and a reader task matches the
replies to the waiting callers in order (Redis answers a connection's commands
in the order it sent them). Commands sent one after another by one coroutine
therefore also reach Redis in that order, which is what keeps a table's
broadcasts in order behind its commits.

A :class:`Subscriber` is the pub/sub side: its own connection, channels added
at any time (``await subscribe(...)`` returns once Redis has confirmed, so a
message published after it is not missed), every message handed to the
channel's handler in the order Redis sent them. Both reconnect after the
connection drops; a :class:`Subscriber` subscribes again to all its channels
(messages published while it was away are lost, as with any Redis pub/sub).

Replies are parsed by ``hiredis`` (part of the ``redis`` extra). URLs:
``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` (TLS) and
``unix:///path?db=N``.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
import ssl as ssl_module
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

__all__ = ["Link", "RedisReplyError", "RedisUnavailable", "Subscriber"]

log = logging.getLogger("vtt_bridge.state")


class RedisReplyError(Exception):
    """An error reply from Redis (``NOSCRIPT ...``, ``WRONGTYPE ...``)."""


class RedisUnavailable(ConnectionError):
    """Redis cannot be reached (its ``strerror`` says so on one line, for the CLI)."""

    def __init__(self, why: object) -> None:
        super().__init__(0, f"Redis: {why} (check the --redis URL and that the server runs)")


def _pack(args: tuple[Any, ...]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _address(url: str) -> dict[str, Any]:
    parsed = urlparse(url)
    query = parse_qs(parsed.query)
    db = query.get("db", [""])[0] or (parsed.path.lstrip("/") if parsed.scheme != "unix" else "")
    where: dict[str, Any] = {
        "db": int(db or 0),
        "username": unquote(parsed.username) if parsed.username else None,
        "password": unquote(parsed.password) if parsed.password else None,
    }
    if parsed.scheme == "unix":
        where["path"] = parsed.path
    elif parsed.scheme in ("redis", "rediss"):
        where["host"], where["port"] = parsed.hostname or "127.0.0.1", parsed.port or 6379
        where["ssl"] = parsed.scheme == "rediss"
    else:
        raise ValueError(f"unsupported Redis URL scheme {parsed.scheme!r}: use redis://, rediss:// or unix://")
    return where


class _Connection:
    """One socket to Redis, a reader task, and what to do with each reply."""

    def __init__(self, url: str, on_reply: Callable[[Any], None], on_lost: Callable[[BaseException], None]) -> None:
        self.where = _address(url)
        self._on_reply = on_reply
        self._on_lost = on_lost
        self.writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._out: list[bytes] = []
        self._flushing = False

    async def open(self, hello: list[tuple[Any, ...]]) -> None:
        try:
            import hiredis
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError("the Redis store needs hiredis: pip install 'vtt-bridge[redis]'") from exc
        where = self.where
        try:
            if "path" in where:
                reader, writer = await asyncio.open_unix_connection(where["path"])
            else:
                context = ssl_module.create_default_context() if where["ssl"] else None
                reader, writer = await asyncio.open_connection(where["host"], where["port"], ssl=context)
        except OSError as exc:
            raise RedisUnavailable(exc.strerror or exc) from exc
        sock = writer.get_extra_info("socket")
        if sock is not None and "path" not in where:
            import socket

            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.writer = writer
        parser = hiredis.Reader(encoding="utf-8", replyError=RedisReplyError)
        self._reader_task = asyncio.get_running_loop().create_task(self._read(reader, parser), name="redis reader")
        for command in hello:
            self.send(command)

    def send(self, args: tuple[Any, ...]) -> None:
        self._out.append(_pack(args))
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flushing = False
        out, self._out = self._out, []
        if self.writer is not None and out:
            self.writer.write(b"".join(out))

    async def _read(self, reader: asyncio.StreamReader, parser: Any) -> None:
        error: BaseException = RedisUnavailable("it closed the connection")
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    break
                parser.feed(data)
                while (reply := parser.gets()) is not False:
                    self._on_reply(reply)
        except asyncio.CancelledError:
            error = RedisUnavailable("the connection was closed")
            raise
        except Exception as exc:  # a reset, a protocol error
            error = RedisUnavailable(f"lost the connection: {exc}")
        finally:
            self.close()
            self._on_lost(error)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        self._out.clear()

    async def stop(self) -> None:
        self.close()
        if self._reader_task is not None:
            self._reader_task.cancel()
            await asyncio.gather(self._reader_task, return_exceptions=True)


def _hello(where: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if where["password"] is not None:
        out.append(("AUTH", where["username"], where["password"]) if where["username"] else ("AUTH", where["password"]))
    if where["db"]:
        out.append(("SELECT", where["db"]))
    return out


class Link:
    """One pipelined connection to Redis, shared by every caller (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: _Connection | None = None
        self._waiting: collections.deque[asyncio.Future[Any] | None] = collections.deque()
        self._opening: asyncio.Future[None] | None = None
        self._scripts: dict[str, str] = {}  # sha → source

    async def open(self) -> None:
        if self._conn is not None:
            return
        if self._opening is not None:
            return await asyncio.shield(self._opening)
        self._opening = asyncio.get_running_loop().create_future()
        try:
            conn = _Connection(self.url, self._reply, self._lost)
            hello = _hello(conn.where)
            await conn.open(hello)
            self._conn = conn
            # The hello's replies come first; a wrong password fails the open.
            replies = [self._expect() for _ in hello]
            for reply in replies:
                await reply
            self._opening.set_result(None)
        except BaseException as exc:
            if self._conn is not None:
                await self._conn.stop()
                self._conn = None
            self._opening.set_exception(exc)
            self._opening.exception()
            raise
        finally:
            self._opening = None

    def _expect(self) -> asyncio.Future[Any]:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        return future

    def _reply(self, reply: Any) -> None:
        future = self._waiting.popleft()
        if future is None or future.done():  # nobody waits for it (a fire-and-forget send, a timed-out caller)
            if isinstance(reply, RedisReplyError):
                log.warning("redis command failed", extra={"error": str(reply)})
            return
        if isinstance(reply, RedisReplyError):
            future.set_exception(reply)
        else:
            future.set_result(reply)

    def _lost(self, error: BaseException) -> None:
        self._conn = None
        waiting, self._waiting = self._waiting, collections.deque()
        for future in waiting:
            if future is not None and not future.done():
                future.set_exception(error)

    async def call(self, *args: Any) -> Any:
        """Send one command and wait for its reply (a :class:`RedisReplyError` is raised)."""
        if self._conn is None:
            await self.open()
        assert self._conn is not None
        future = self._expect()
        self._conn.send(args)
        return await future

    def send(self, *args: Any) -> None:
        """Send one command without waiting for its reply (an error reply is logged).

        Queued behind every command sent before it, so it still reaches Redis
        in order; when the connection is down it is sent once it is back.
        """
        conn = self._conn
        if conn is None:
            task = asyncio.get_running_loop().create_task(self.call(*args))
            task.add_done_callback(_log_failure)
            return
        self._waiting.append(None)
        conn.send(args)

    def script(self, source: str) -> str:
        """Register a Lua script; returns its SHA-1 for :meth:`evalsha`."""
        sha = hashlib.sha1(source.encode()).hexdigest()
        self._scripts[sha] = source
        return sha

    async def evalsha(self, sha: str, keys: list[str], args: list[Any]) -> Any:
        """Run a registered script (loading it when Redis does not have it yet)."""
        try:
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)
        except RedisReplyError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        await self.call("SCRIPT", "LOAD", self._scripts[sha])
        return await self.call("EVALSHA", sha, len(keys), *keys, *args)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.stop()


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("redis command failed", extra={"error": str(task.exception())})


class Subscriber:
    """The pub/sub side: channels with a handler each, subscribed again after a reconnect."""

    _RETRY = (0.1, 5.0)  # seconds between reconnection attempts: first, most

    def __init__(self, url: str) -> None:
        self.url = url
        self._handlers: dict[str, Callable[[str], None]] = {}
        self._confirmed: dict[str, asyncio.Future[None]] = {}
        self._conn: _Connection | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._hello_left = 0
        self._closed = False

    async def subscribe(self, channel: str, handler: Callable[[str], None]) -> None:
        """Hand every message on ``channel`` to ``handler``, from the moment this returns."""
        self._handlers[channel] = handler
        if self._keeper is None:
            self._keeper = asyncio.get_running_loop().create_task(self._keep(), name="redis subscriber")
        confirmed = self._confirmed.get(channel)
        if confirmed is None:
            confirmed = self._confirmed[channel] = asyncio.get_running_loop().create_future()
            if self._conn is not None:
                self._conn.send(("SUBSCRIBE", channel))
        await asyncio.shield(confirmed)

    async def _keep(self) -> None:
        delay = self._RETRY[0]
        while not self._closed:
            lost: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()
            conn = _Connection(self.url, self._message, lambda exc: lost.done() or lost.set_result(exc))
            hello = _hello(conn.where)
            self._hello_left = len(hello)
            try:
                await conn.open(hello)
            except OSError as exc:
                log.warning("cannot reach Redis for pub/sub; retrying", extra={"error": str(exc), "in": delay})
                await asyncio.sleep(delay)
                delay = min(self._RETRY[1], delay * 2)
                continue
            self._conn = conn
            delay = self._RETRY[0]
            if self._handlers:
                conn.send(("SUBSCRIBE", *self._handlers))
            try:
                error = await lost
            finally:
                self._conn = None
                await conn.stop()
            if not self._closed:
                log.warning("pub/sub connection to Redis lost; reconnecting", extra={"error": str(error)})
                # Messages published meanwhile are lost; every channel is subscribed again.
                for channel, future in list(self._confirmed.items()):
                    if future.done():
                        self._confirmed[channel] = asyncio.get_running_loop().create_future()

    def _message(self, reply: Any) -> None:
        if self._hello_left:  # the AUTH / SELECT replies
            self._hello_left -= 1
            if isinstance(reply, RedisReplyError):
                log.error("pub/sub connection refused by Redis", extra={"error": str(reply)})
            return
        if isinstance(reply, RedisReplyError) or not isinstance(reply, list) or len(reply) < 3:
            log.warning("unexpected pub/sub reply from Redis", extra={"reply": repr(reply)[:200]})
            return
        kind, channel = reply[0], reply[1]
        if kind == "message":
            handler = self._handlers.get(channel)
            if handler is not None:
                try:
                    handler(reply[2])
                except Exception:
                    log.exception("pub/sub handler failed", extra={"channel": channel})
        elif kind == "subscribe":
            future = self._confirmed.get(channel)
            if future is not None and not future.done():
                future.set_result(None)

    async def close(self) -> None:
        self._closed = True
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
            self._keeper = None
        for future in self._confirmed.values():
            if not future.done():
                future.cancel()
        self._confirmed.clear()
        self._handlers.clear()

