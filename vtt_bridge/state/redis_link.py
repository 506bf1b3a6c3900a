"""The store's connection to Redis, on redis-py's asyncio client (hiredis parses the replies).

One Redis, a Sentinel-watched primary or a Cluster, all behind one small
interface the store and the server's message bus use:

- :meth:`Link.call` sends one command and waits for its reply;
- :meth:`Link.send` sends one without waiting;
- :meth:`Link.evalsha` runs a registered Lua script, optionally followed by
  ``WAIT`` on the same connection (the commit's replication check);
- :meth:`Link.publish` publishes without waiting;
- a :class:`Subscriber` is the pub/sub side: channels added at any time,
  subscribed again after a reconnect. Under Cluster a table's channels are
  sharded (``SPUBLISH``/``SSUBSCRIBE``, Redis ≥ 7): a message goes to the
  shard serving the table's slot, not to every node.

Calls and sends are queued, and one task sends the queue in order, as one
write on one connection with the replies read back in order: whatever every
coroutine queued while the previous batch was out goes in the next
(auto-pipelining). With one Redis or a Sentinel's primary that connection is
the link's own, written to and read with redis-py's connection methods (no
pipeline object, no per-command timer: one time bound per batch); with a
Cluster each batch is a redis-py cluster pipeline, which routes each command
to its node. Commands therefore reach Redis in the
order they were made — a table's broadcasts stay behind its commits — and
under load many tables' commands share a write and a read. (A commit with
``WAIT`` goes on a pipeline of its own: it may take up to its timeout.)

Nothing waits forever: connecting has ``connect_timeout``, every command
``command_timeout``; a pub/sub connection's reads have no bound of their own
(no timer per message) but a quiet one is pinged, and lost when the ``PONG``
does not come (:attr:`Subscriber.IDLE`). When Redis cannot be reached, a call raises
:class:`~vtt_bridge.errors.StoreUnavailable` (retryable, with
``retry_after``); the first such failure logs one line, and the first success
after it another (how long it lasted). At start-up (:meth:`Link.open`) a
wrong password, a TLS mismatch or an unreachable Redis is one
:class:`RedisUnavailable` saying which.

URLs (see :func:`parse_url`)::

    redis://[[user]:password@]host[:port][/db]       one Redis
    rediss://...                                     the same over TLS
    unix:///path/to/redis.sock[?db=N]                a local socket
    redis+sentinel://[[user]:password@]h1:p1,h2:p2/service[/db]   Sentinel
    redis+cluster://[[user]:password@]h1:p1,h2:p2    Cluster (any of its nodes)

``rediss+sentinel://`` and ``rediss+cluster://`` use TLS. The query may add
what :class:`RedisOptions` holds: ``ca=FILE``, ``cert=FILE``, ``key=FILE``
(TLS), ``connect_timeout=S``, ``timeout=S`` (the CLI's ``--redis-ca``,
``--redis-cert``, ``--redis-key``, ``--redis-timeout`` write them there), and
for Sentinel ``sentinel_password=...`` (the sentinels' own password).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import redis.asyncio as aioredis
from redis import exceptions as rexc
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff, NoBackoff

from ..errors import StoreUnavailable

try:  # hiredis (the ``redis`` extra) encodes commands in C: see _packed
    from hiredis import pack_command as _pack_command
except ImportError:  # pragma: no cover - redis-py without hiredis
    _pack_command = None

__all__ = ["Link", "RedisOptions", "RedisReplyError", "RedisUnavailable", "Subscriber", "parse_url"]

log = logging.getLogger("vtt_bridge.state")

# How long a client is told to wait before retrying while Redis is away (seconds).
RETRY_AFTER = 1.0


class RedisReplyError(Exception):
    """An error reply from Redis (``NOSCRIPT ...``, ``WRONGTYPE ...``)."""


class RedisUnavailable(StoreUnavailable):
    """Redis cannot be used at start-up: unreachable, a wrong password, a TLS mismatch (one line)."""


@dataclass(frozen=True)
class RedisOptions:
    """How to reach Redis beyond its URL.

    :ivar ca: a CA bundle (PEM) to check the server's TLS certificate with (default: the system's).
    :ivar cert: a client certificate (PEM), for a Redis with ``tls-auth-clients yes``.
    :ivar key: its private key (PEM).
    :ivar connect_timeout: seconds to connect (TCP, TLS handshake, AUTH).
    :ivar command_timeout: seconds any one command may take.
    """

    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    connect_timeout: float = 2.0
    command_timeout: float = 2.0

    @classmethod
    def from_query(cls, query: dict[str, list[str]]) -> RedisOptions:
        """The options a URL's query gives (``ca``, ``cert``, ``key``, ``connect_timeout``, ``timeout``)."""
        def one(name: str) -> str | None:
            return query.get(name, [None])[0] or None

        try:
            connect = float(one("connect_timeout") or cls.connect_timeout)
            command = float(one("timeout") or cls.command_timeout)
        except ValueError:
            raise ValueError("connect_timeout and timeout in a Redis URL are seconds") from None
        if not (0 < connect <= 60 and 0 < command <= 60):
            raise ValueError("connect_timeout and timeout in a Redis URL are 0 to 60 seconds")
        return cls(ca=one("ca"), cert=one("cert"), key=one("key"), connect_timeout=connect, command_timeout=command)


@dataclass
class Where:
    """A parsed Redis URL."""

    kind: str  # "single", "sentinel" or "cluster"
    tls: bool = False
    hosts: list[tuple[str, int]] = field(default_factory=list)
    path: str | None = None  # unix socket
    service: str | None = None  # Sentinel's name of the primary
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None
    query: dict[str, list[str]] = field(default_factory=dict)

    def describe(self) -> str:
        """The URL without its password, for messages."""
        scheme = {"single": "redis", "sentinel": "redis+sentinel", "cluster": "redis+cluster"}[self.kind]
        if self.tls:
            scheme = "rediss" + scheme[5:]
        if self.path:
            return f"unix://{self.path}"
        hosts = ",".join(f"{h}:{p}" for h, p in self.hosts)
        user = f"{self.username}@" if self.username else ""
        tail = f"/{self.service}" if self.service else ""
        return f"{scheme}://{user}{hosts}{tail}"


def parse_url(url: str) -> Where:
    """A Redis URL of any form the module docstring lists (``ValueError`` when it is none)."""
    parsed = urlparse(url)
    scheme = parsed.scheme
    query = parse_qs(parsed.query)
    username = unquote(parsed.username) if parsed.username else None
    password = unquote(parsed.password) if parsed.password else None
    if scheme == "unix":
        return Where(
            "single", path=parsed.path, db=int(query.get("db", ["0"])[0] or 0),
            username=username, password=password, query=query,
        )
    kinds = {
        "redis": ("single", False), "rediss": ("single", True),
        "redis+sentinel": ("sentinel", False), "rediss+sentinel": ("sentinel", True),
        "redis+cluster": ("cluster", False), "rediss+cluster": ("cluster", True),
    }
    if scheme not in kinds:
        raise ValueError(
            f"unsupported Redis URL scheme {scheme!r}: use redis://, rediss://, unix://, "
            "redis+sentinel:// or redis+cluster://"
        )
    kind, tls = kinds[scheme]
    netloc = parsed.netloc.rsplit("@", 1)[-1]
    hosts = []
    for part in filter(None, netloc.split(",")):
        host, sep, port = part.rpartition(":")
        if not sep or part.endswith("]"):
            host, port = part, ""
        host = host.strip("[]") or "127.0.0.1"
        try:
            hosts.append((host, int(port) if port else (26379 if kind == "sentinel" else 6379)))
        except ValueError:
            raise ValueError(f"bad port in Redis URL: {part!r}") from None
    if not hosts:
        hosts = [("127.0.0.1", 26379 if kind == "sentinel" else 6379)]
    where = Where(kind, tls=tls, hosts=hosts, username=username, password=password, query=query)
    parts = [p for p in parsed.path.split("/") if p]
    if kind == "sentinel":
        if not parts:
            raise ValueError("a redis+sentinel:// URL names the primary's service: redis+sentinel://host:port,.../mymaster[/db]")
        where.service = parts.pop(0)
        where.sentinel_password = query.get("sentinel_password", [None])[0]
    if parts:
        try:
            where.db = int(parts[0])
        except ValueError:
            raise ValueError(f"the database in a Redis URL is a number, not {parts[0]!r}") from None
    if "db" in query:
        where.db = int(query["db"][0])
    if kind == "cluster" and where.db:
        raise ValueError("a Redis Cluster has database 0 only")
    return where


def _client_kwargs(where: Where, options: RedisOptions) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "username": where.username,
        "password": where.password,
        "socket_connect_timeout": options.connect_timeout,
        "socket_timeout": options.command_timeout,
        "decode_responses": True,
        # No retry inside the client: a commit must not run twice, and the caller
        # reports an outage (the client retries the request, with its request_id).
        "retry": Retry(NoBackoff(), 0),
        "health_check_interval": 15,
    }
    if where.tls:
        kwargs.update(
            ssl=True,
            ssl_ca_certs=options.ca,
            ssl_certfile=options.cert,
            ssl_keyfile=options.key,
            ssl_cert_reqs="required",
        )
    return kwargs


def _why(exc: BaseException, where: Where) -> str:
    """A failure to reach Redis in words, for one line."""
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "noauth" in lowered or "authentication required" in lowered:
        return "Redis asks for a password and the URL gives none: redis://:PASSWORD@host:port"
    if isinstance(exc, rexc.AuthenticationError) or "wrongpass" in lowered or "invalid username-password" in lowered:
        return "wrong user name or password (Redis refused the AUTH): check the user and password in the URL"
    if "noperm" in lowered or "no permissions" in lowered:
        return f"the Redis user may not run a command the store needs ({text}): check its ACL"
    if isinstance(exc, ssl.SSLError) or "ssl" in lowered or "certificate" in lowered or "wrong version number" in lowered:
        if where.tls:
            return f"TLS failed ({text}): is the port a TLS port, and do --redis-ca/--redis-cert match?"
        return f"TLS problem ({text})"
    if isinstance(exc, (rexc.TimeoutError, asyncio.TimeoutError, TimeoutError)):
        hint = " (a TLS port spoken to without rediss://?)" if not where.tls else " (rediss:// to a port without TLS?)"
        return f"no answer in time{hint}"
    if "connection refused" in lowered or "connect call failed" in lowered or "error 111" in lowered:
        return "connection refused: is redis-server running on that host and port?"
    if "closed" in lowered and where.tls:
        return f"the connection closed during TLS ({text}): is the port a TLS port?"
    return text


class _Outage:
    """One log line when Redis goes away, one when it is back (once armed: a failure while the
    store opens is the start-up's one line, not a log line)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.since: float | None = None
        self.armed = False

    def failed(self, why: str) -> None:
        if self.since is None and self.armed:
            self.since = time.monotonic()
            log.warning(
                f"Redis unavailable ({self.what}): {why}; requests answer store_unavailable until it is back",
                extra={"error": why},
            )

    def ok(self) -> None:
        if self.since is not None:
            lasted = time.monotonic() - self.since
            self.since = None
            log.warning(f"Redis is back ({self.what}) after {lasted:.1f} s", extra={"seconds": round(lasted, 1)})


# Redis cannot do it now (or, NOPERM, for this user): the caller answers store_unavailable.
_UNAVAILABLE = (rexc.ConnectionError, rexc.TimeoutError, OSError, asyncio.TimeoutError, rexc.ClusterError,
                rexc.RedisClusterException, rexc.ReadOnlyError, rexc.TryAgainError, rexc.MasterDownError,
                rexc.NoPermissionError)


class Link:
    """The store's commands to Redis (see the module docstring)."""

    def __init__(self, url: str, options: RedisOptions | None = None) -> None:
        self.url = url
        self.where = parse_url(url)
        self.options = options or RedisOptions.from_query(self.where.query)
        self.client: Any = None
        # One Redis or a Sentinel's primary: the queue goes out over one connection of its own
        # (see _send), of a client without a socket timeout (one bound covers a whole batch).
        self._direct: Any = None
        self._connection: Any = None
        self.sentinel: Sentinel | None = None
        self._scripts: dict[str, str] = {}  # sha → source
        self._queue: collections.deque[tuple[tuple[Any, ...], asyncio.Future[Any] | None]] = collections.deque()
        self._sender: asyncio.Task[None] | None = None
        self.outage = _Outage("commands")
        self.replication = _Outage("replicas")

    @property
    def cluster(self) -> bool:
        return self.where.kind == "cluster"

    def make_client(self, **overrides: Any) -> Any:
        """A new client for :attr:`where` (the pub/sub side makes its own); ``overrides``: its
        connections' settings that differ (not for a Cluster)."""
        where, kwargs = self.where, {**_client_kwargs(self.where, self.options), **overrides}
        if where.kind == "cluster":
            return RedisCluster(
                startup_nodes=[ClusterNode(h, p) for h, p in where.hosts],
                require_full_coverage=True,
                **{k: v for k, v in kwargs.items() if k != "health_check_interval"},
            )
        if where.kind == "sentinel":
            if self.sentinel is None:
                sentinel_kwargs = {
                    "socket_connect_timeout": self.options.connect_timeout,
                    "socket_timeout": self.options.command_timeout,
                    "password": where.sentinel_password,
                    "decode_responses": True,
                }
                if where.tls:
                    sentinel_kwargs.update({k: v for k, v in kwargs.items() if k.startswith("ssl")})
                self.sentinel = Sentinel(where.hosts, sentinel_kwargs=sentinel_kwargs, **kwargs)
            return self.sentinel.master_for(where.service, db=where.db, **overrides)
        if where.path:
            return aioredis.Redis(unix_socket_path=where.path, db=where.db, **{
                k: v for k, v in kwargs.items() if not k.startswith("ssl")})
        host, port = where.hosts[0]
        return aioredis.Redis(host=host, port=port, db=where.db, **kwargs)

    async def open(self) -> None:
        """Connect and check (``PING``), within the connect and command timeouts.

        :raises RedisUnavailable: one line saying what is wrong.
        """
        if self.client is not None:
            return
        client = self.make_client()
        bound = self.options.connect_timeout + self.options.command_timeout
        try:
            async with asyncio.timeout(bound):
                if self.cluster:
                    await client.initialize()
                    await self._check_sharded(client)
                await client.ping()
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line
            await _close_client(client)
            if isinstance(exc, RedisUnavailable):
                raise
            raise RedisUnavailable(
                f"cannot use Redis at {self.where.describe()}: {_why(exc, self.where)}",
                details={"retry_after": RETRY_AFTER},
            ) from None
        self.client = client
        if not self.cluster:
            self._direct = self.make_client(socket_timeout=None, health_check_interval=0)

    async def _check_sharded(self, client: Any) -> None:
        """A Cluster's tables use sharded pub/sub: refuse, in one line, a Cluster without it (Redis < 7)."""
        try:
            await client.execute_command("SPUBLISH", "vtt-bridge:probe", "")  # nobody listens: a no-op
        except rexc.RedisError as exc:
            # Redis's own 'unknown command', or redis-py's, which routes by the Cluster's COMMAND table
            text = str(exc).lower()
            if "unknown command" not in text and "doesn't exist" not in text:
                raise
            raise RedisUnavailable(
                f"cannot use Redis at {self.where.describe()}: a Redis Cluster needs Redis 7 or later "
                "(the bridge publishes a table's broadcasts with SPUBLISH, sharded pub/sub), and this one "
                "does not know SPUBLISH: upgrade it, or use one Redis per shard",
                details={"retry_after": RETRY_AFTER},
            ) from None

    def arm(self) -> None:
        """Log outages from now on (the store is open)."""
        self.outage.armed = self.replication.armed = True

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        why = _why(exc, self.where)
        self.outage.failed(why)
        error = StoreUnavailable(f"the store is unavailable ({why}); try again shortly",
                                 details={"retry_after": RETRY_AFTER})
        error.why = why  # type: ignore[attr-defined]  # for the start-up line (RedisStore.open)
        return error

    async def call(self, *args: Any) -> Any:
        """Send one command and wait for its reply (a :class:`RedisReplyError` is raised).

        :raises StoreUnavailable: Redis cannot be reached (or did not answer in time).
        """
        self._client()  # raises when closed
        future = asyncio.get_running_loop().create_future()
        self._queue.append((args, future))
        self._kick()
        return await future

    def _client(self) -> Any:
        if self.client is None:
            raise RuntimeError("the Redis link is not open")
        return self.client

    def send(self, *args: Any) -> None:
        """Send one command without waiting for its reply (an error reply is logged).

        Queued behind every command sent before it; the queue goes out as one
        pipeline. While Redis is away the queued commands are dropped (the
        outage is logged once).
        """
        self._queue.append((args, None))
        self._kick()

    def publish(self, channel: str, message: Any, *, sharded: bool = False) -> None:
        """Publish ``message`` on ``channel`` without waiting, as :meth:`send` does.

        ``sharded``: the channel is one table's (its name carries the table's hash
        tag): under Cluster it goes by ``SPUBLISH`` to the shard serving that slot
        only (see :class:`Subscriber`).
        """
        self.send("SPUBLISH" if sharded and self.cluster else "PUBLISH", channel, message)

    def _kick(self) -> None:
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._drain(), name="redis commands")

    async def _drain(self) -> None:
        """Send what is queued, in order: one command alone, more as one pipeline (everything
        queued while the previous batch was out goes in the next)."""
        client = self.client
        if client is None:
            error = RuntimeError("the Redis link is closed")
            while self._queue:
                _args, future = self._queue.popleft()
                if future is not None and not future.done():
                    future.set_exception(error)
            return
        while self._queue:
            if self._direct is not None:
                batch = list(self._queue)
                self._queue.clear()
                await self._deliver(batch, self._send([args for args, _future in batch]))
                continue
            if len(self._queue) == 1:  # the usual case, a publish: no pipeline object needed
                args, future = self._queue[0]
                try:
                    reply = await client.execute_command(*args)
                except Exception as exc:  # noqa: BLE001 - a sender must not die
                    reply = exc
                else:
                    self.outage.ok()
                self._queue.popleft()
                self._settle(args, future, reply)
                continue
            batch = list(self._queue)
            self._queue.clear()
            pipe = client.pipeline(transaction=False)
            for args, _future in batch:
                pipe.execute_command(*args)
            await self._deliver(batch, pipe.execute(raise_on_error=False))

    async def _deliver(self, batch: list[tuple[tuple[Any, ...], Any]], replies: Awaitable[list[Any]]) -> None:
        """Settle each queued command of ``batch`` with its reply, once ``replies`` (sent together) come;
        an outage fails them all as unavailable, any other failure each with it."""
        try:
            answers = await replies
        except _UNAVAILABLE as exc:
            error = self._unavailable(exc)
            for _args, future in batch:
                if future is not None and not future.done():
                    future.set_exception(error)
            return
        except Exception as exc:  # noqa: BLE001 - a sender must not die
            answers = [exc] * len(batch)
        else:
            self.outage.ok()
        for (args, future), reply in zip(batch, answers, strict=True):
            self._settle(args, future, reply)

    async def _send(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Commands written together on the link's own connection, their replies read in order,
        as a pipeline does but without building one per batch (one Redis or a Sentinel's
        primary): one buffer written (:func:`_packed`), one time bound for the batch, an
        error reply in its place, redis-py's own reply conversions (``HGETALL`` → dict …).
        The connection is dropped on any failure and made again for the next batch."""
        if self._connection is None:
            async with asyncio.timeout(self.options.connect_timeout + self.options.command_timeout):
                self._connection = await self._direct.connection_pool.get_connection()
        connection, callbacks = self._connection, self._direct.response_callbacks
        replies: list[Any] = []
        try:
            async with asyncio.timeout(self.options.connect_timeout + self.options.command_timeout):
                if not connection.is_connected:
                    await connection.connect()  # (a Sentinel's asks for the primary anew)
                await connection.send_packed_command(_packed(commands), check_health=False)
                for args in commands:
                    try:
                        reply = await connection.read_response()
                    except rexc.ResponseError as exc:
                        reply = exc
                    else:
                        callback = callbacks.get(args[0])
                        if callback is not None:
                            reply = callback(reply)
                    replies.append(reply)
        except BaseException:
            await connection.disconnect(nowait=True)
            raise
        return replies

    def _settle(self, args: tuple[Any, ...], future: asyncio.Future[Any] | None, reply: Any) -> None:
        """Hand a queued command's reply to its caller (an error of a fire-and-forget send is logged)."""
        if isinstance(reply, Exception):
            error: BaseException = self._unavailable(reply) if isinstance(reply, _UNAVAILABLE) else _reply_error(reply)
            if future is None:
                if not isinstance(error, StoreUnavailable):
                    log.warning("redis command failed", extra={"command": str(args[0]), "error": str(reply)})
            elif not future.done():
                future.set_exception(error)
        elif future is not None and not future.done():
            future.set_result(reply)

    def script(self, source: str) -> str:
        """Register a Lua script; returns its SHA-1 for :meth:`evalsha`."""
        sha = hashlib.sha1(source.encode()).hexdigest()
        self._scripts[sha] = source
        return sha

    async def evalsha(self, sha: str, keys: list[str], args: list[Any], *, wait: tuple[int, int] | None = None) -> Any:
        """Run a registered script (loading it when Redis does not have it yet).

        ``wait=(replicas, ms)``: then ``WAIT replicas ms`` on the same
        connection; fewer replicas confirming raises :class:`StoreUnavailable`
        (the script's writes happened on the primary but may not survive its loss).
        """
        try:
            return await self._eval(("EVALSHA", sha), keys, args, wait)
        except RedisReplyError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        # Not in this node's script cache (a new Redis, a promoted replica): EVAL caches it there.
        return await self._eval(("EVAL", self._scripts[sha]), keys, args, wait)

    async def _eval(self, how: tuple[str, str], keys: list[str], args: list[Any], wait: tuple[int, int] | None) -> Any:
        if wait is None:
            return await self.call(*how, len(keys), *keys, *args)
        client = self._client()
        pipe = client.pipeline(transaction=False)
        pipe.execute_command(*how, len(keys), *keys, *args)
        if self.cluster:
            pipe.execute_command("WAIT", *wait, target_nodes=client.get_node_from_key(keys[0]))
        else:
            pipe.execute_command("WAIT", *wait)
        try:
            reply, confirmed = await pipe.execute(raise_on_error=False)
        except _UNAVAILABLE as exc:
            raise self._unavailable(exc) from None
        if isinstance(reply, Exception):
            if isinstance(reply, _UNAVAILABLE):
                raise self._unavailable(reply)
            raise _reply_error(reply)
        self.outage.ok()
        if isinstance(confirmed, Exception) or int(confirmed) < wait[0]:
            self.replication.failed(f"{confirmed} of {wait[0]} replica(s) confirmed a write within {wait[1]} ms")
            raise StoreUnavailable(
                f"the store could not confirm the change on {wait[0]} replica(s) within {wait[1]} ms; "
                "send the same request (same request_id) again",
                details={"retry_after": RETRY_AFTER},
            )
        self.replication.ok()
        return reply

    async def close(self) -> None:
        if self._sender is not None:
            await asyncio.gather(self._sender, return_exceptions=True)
            self._sender = None
        client, self.client = self.client, None
        if client is not None:
            await _close_client(client)
        direct, self._direct, connection, self._connection = self._direct, None, self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.disconnect()
        if direct is not None:
            await _close_client(direct)


def _packed(commands: list[tuple[Any, ...]]) -> bytes:
    """Commands in Redis's wire protocol (RESP: an array of bulk strings each), one buffer for
    them all. Arguments are bytes, str (UTF-8) or numbers. With hiredis installed (the ``redis``
    extra), its public ``pack_command`` encodes each command, in C."""
    if _pack_command is not None:
        return b"".join([_pack_command(args) for args in commands])
    out = bytearray()
    for args in commands:
        out += b"*%d\r\n" % len(args)
        for arg in args:
            if isinstance(arg, bytes):
                data = arg
            elif isinstance(arg, str):
                data = arg.encode()
            elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
                data = repr(arg).encode()
            else:
                raise TypeError(f"a Redis command argument is bytes, str or a number, not {type(arg).__name__}")
            out += b"$%d\r\n" % len(data)
            out += data
            out += b"\r\n"
    return bytes(out)


def _reply_error(exc: BaseException) -> RedisReplyError:
    """redis-py's error reply as ours (redis-py drops the NOSCRIPT word from its text)."""
    if isinstance(exc, rexc.NoScriptError):
        return RedisReplyError(f"NOSCRIPT {exc}")
    return RedisReplyError(str(exc))


async def _close_client(client: Any) -> None:
    try:
        await client.aclose()
    except Exception:  # noqa: BLE001 - closing a broken client
        pass


class Subscriber:
    """The pub/sub side: channels with a handler each, subscribed again after a reconnect.

    Plain channels (:meth:`subscribe`) share one connection: to the primary
    under Sentinel; to any node of a Cluster, whose nodes pass every plain
    message on to each other. When it drops, it reconnects after 0.05 s,
    doubling to at most 1 s between tries, and subscribes to every channel
    again; messages published meanwhile are lost, as with any Redis pub/sub.

    A *sharded* channel (``sharded=True``: a table's own, whose name carries
    the table's hash tag) is, under Cluster, one of Redis 7's sharded
    channels: ``SSUBSCRIBE`` on the node serving the channel's slot, where
    :meth:`Link.publish` and the store's scripts ``SPUBLISH`` it, so a
    message reaches that shard only instead of every node. There is one
    connection per such node (:class:`_Shard`); a node that answers ``MOVED``
    passes the channel on to the node it names, and one that is lost
    (``kill -9``, a failover) hands its channels to another node after the
    same pauses, until the promoted replica takes them. Without Cluster a
    sharded channel is a plain one. (redis-py's asyncio ``PubSub`` has no
    ``ssubscribe()``: ``SSUBSCRIBE`` goes through its public
    ``execute_command``, and ``get_message`` reads ``smessage`` replies.)

    :attr:`on_resubscribed` is called once channels are subscribed again after
    a loss (messages meanwhile were lost: the bus catches up from the tables' logs).
    """

    _RETRY = (0.05, 1.0)
    # Seconds without a message before the plain channels' connection is pinged; as long again
    # without its answer, it is lost (a peer gone without closing it): reconnected.
    IDLE = 5.0

    def __init__(self, link: Link) -> None:
        self.link = link
        self._handlers: dict[str, Callable[[str], None]] = {}
        self._confirmed: dict[str, asyncio.Future[None]] = {}
        self._pubsub: Any = None
        self._keeper: asyncio.Task[None] | None = None
        self._closed = False
        self.outage = _Outage("pub/sub")
        self._node = 0
        # Called once every channel is subscribed again after a reconnect (messages meanwhile were lost).
        self.on_resubscribed: list[Callable[[], None]] = []
        # Under Cluster: the sharded channels, and a connection per node serving some of them.
        self._sharded: set[str] = set()
        self._shards: dict[tuple[str, int], _Shard] = {}
        self._shard_delay = self._RETRY[0]
        self._ever: set[str] = set()  # sharded channels confirmed at least once
        self._resubscribed_soon = self._again = False
        self._tasks: set[asyncio.Task[Any]] = set()

    async def subscribe(self, channel: str, handler: Callable[[str], None], *, sharded: bool = False) -> None:
        """Hand every message on ``channel`` to ``handler``, from the moment this returns.

        ``sharded``: the channel is one table's (its name carries the table's hash
        tag): under Cluster, a sharded channel (``SSUBSCRIBE``, Redis ≥ 7).

        :raises StoreUnavailable: Redis did not confirm the subscription in time.
        """
        self._handlers[channel] = handler
        loop = asyncio.get_running_loop()
        confirmed = self._confirmed.get(channel)
        if sharded and self.link.cluster:
            self._sharded.add(channel)
            if confirmed is None:
                confirmed = self._confirmed[channel] = loop.create_future()
                self._place(channel, self._owner(channel))
        else:
            if self._keeper is None:
                self._keeper = loop.create_task(self._keep(), name="redis subscriber")
            if confirmed is None:
                confirmed = self._confirmed[channel] = loop.create_future()
                if self._pubsub is not None:
                    try:
                        await self._pubsub.subscribe(channel)
                    except _UNAVAILABLE:
                        pass  # the keeper reconnects and subscribes again
        options = self.link.options
        try:
            async with asyncio.timeout(options.connect_timeout + options.command_timeout):
                await asyncio.shield(confirmed)
        except TimeoutError:
            raise StoreUnavailable(
                "the store is unavailable (pub/sub did not confirm a subscription in time); try again shortly",
                details={"retry_after": RETRY_AFTER},
            ) from None

    def _nodes(self) -> list[tuple[str, int]]:
        """Every Cluster node the link knows of (its start-up nodes when it knows none)."""
        client = self.link.client
        nodes = client.get_nodes() if client is not None else []
        return [(n.host, int(n.port)) for n in nodes] or list(self.link.where.hosts)

    def _client(self) -> Any:
        link = self.link
        if link.cluster:
            # Any node carries every plain message: try them in turn.
            hosts = self._nodes()
            host, port = hosts[self._node % len(hosts)]
            self._node += 1
            return aioredis.Redis(host=host, port=port, **{**_client_kwargs(link.where, link.options), **_READER})
        return link.make_client(**_READER)

    async def _keep(self) -> None:
        delay = self._RETRY[0]
        reconnected = False
        while not self._closed:
            client = self._client()
            pubsub = client.pubsub()
            try:
                channels = self._plain()
                if channels:
                    await pubsub.subscribe(*channels)
                self._pubsub = pubsub
                # Channels added while that subscribe was on its way (later ones subscribe themselves).
                missing = [channel for channel in self._plain() if channel not in channels]
                if missing:
                    await pubsub.subscribe(*missing)
                if reconnected:
                    for callback in self.on_resubscribed:
                        callback()
                reconnected = True

                def handle(message: dict[str, Any]) -> None:
                    nonlocal delay
                    self.outage.ok()
                    delay = self._RETRY[0]
                    self._message(message)

                await _read(pubsub, handle, self.IDLE)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - reconnect whatever broke
                self.outage.failed(_why(exc, self.link.where))
            finally:
                self._pubsub = None
                await _close_pubsub(pubsub, client)
            if self._closed:
                break
            for channel in self._plain():
                self._unconfirm(channel)
            await asyncio.sleep(delay)
            delay = min(self._RETRY[1], delay * 2)

    def _plain(self) -> list[str]:
        return [channel for channel in self._handlers if channel not in self._sharded]

    def _unconfirm(self, channel: str) -> None:
        future = self._confirmed.get(channel)
        if future is not None and future.done():
            self._confirmed[channel] = asyncio.get_running_loop().create_future()

    def _message(self, message: dict[str, Any]) -> None:
        kind, channel = message.get("type"), message.get("channel")
        if kind in ("message", "smessage"):
            handler = self._handlers.get(channel)
            if handler is not None:
                try:
                    handler(message["data"])
                except Exception:
                    log.exception("pub/sub handler failed", extra={"channel": channel})
        elif kind in ("subscribe", "ssubscribe"):
            future = self._confirmed.get(channel)
            if future is not None and not future.done():
                future.set_result(None)
            if kind == "ssubscribe":
                self._shard_delay = self._RETRY[0]
                if channel in self._ever:
                    self._resubscribed()
                self._ever.add(channel)

    def _resubscribed(self) -> None:
        """Tell :attr:`on_resubscribed` now, and at most once more per 0.2 s however many
        sharded channels come back after it (each is told after it was confirmed)."""
        if self._resubscribed_soon:
            self._again = True
            return
        self._resubscribed_soon = True
        for callback in self.on_resubscribed:
            callback()

        def quiet() -> None:
            self._resubscribed_soon = False
            if self._again:
                self._again = False
                self._resubscribed()

        asyncio.get_running_loop().call_later(0.2, quiet)

    # -- sharded channels (Cluster) ----------------------------------------------------

    def _owner(self, channel: str, *, not_at: tuple[str, int] | None = None) -> tuple[str, int]:
        """Where to ``SSUBSCRIBE`` ``channel``: the node the link's slot map names, else another
        node (which answers ``MOVED`` to the right one once the Cluster knows)."""
        client = self.link.client
        if client is not None:
            try:
                node = client.get_node_from_key(channel)
            except rexc.RedisError:
                node = None
            if node is not None and (node.host, int(node.port)) != not_at:
                return node.host, int(node.port)
        hosts = [address for address in self._nodes() if address != not_at] or self._nodes()
        self._node += 1
        return hosts[self._node % len(hosts)]

    def _place(self, channel: str, address: tuple[str, int]) -> None:
        if self._closed or channel not in self._sharded:
            return
        shard = self._shards.get(address)
        if shard is None or shard.task.done():
            shard = self._shards[address] = _Shard(self, address)
        shard.add(channel)

    def _moved(self, shard: _Shard, slot: int, address: tuple[str, int]) -> None:
        """``shard``'s node does not serve ``slot``: its channels there go to ``address``."""
        client = self.link.client
        moving = [c for c in shard.channels if client is not None and client.keyslot(c) == slot]
        for channel in moving:
            shard.channels.discard(channel)
        if address == shard.address:  # named itself (a slot in flux): try again after a pause
            self._later(self._replace(moving, None))
            return
        for channel in moving:
            self._place(channel, address)

    def _lost(self, shard: _Shard) -> None:
        """``shard``'s node is gone or refuses: after a pause, its channels go to another node."""
        if self._shards.get(shard.address) is shard:
            del self._shards[shard.address]
        channels, shard.channels = list(shard.channels), set()
        for channel in channels:
            self._unconfirm(channel)
        if channels and not self._closed:
            self._later(self._replace(channels, shard.address))

    async def _replace(self, channels: list[str], not_at: tuple[str, int] | None) -> None:
        delay = self._shard_delay
        self._shard_delay = min(self._RETRY[1], delay * 2)
        await asyncio.sleep(delay)
        for channel in channels:
            self._place(channel, self._owner(channel, not_at=not_at))

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        self._closed = True
        tasks = [t for t in (self._keeper, *self._tasks, *(s.task for s in self._shards.values())) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._keeper = None
        self._shards.clear()
        for future in self._confirmed.values():
            if not future.done():
                future.cancel()
        self._confirmed.clear()
        self._handlers.clear()


class _Shard:
    """One connection to a Cluster node, ``SSUBSCRIBE``d to the sharded channels of its slots."""

    # Seconds without a message before the node is pinged; as long again without its answer, it is lost.
    IDLE = 5.0

    def __init__(self, subscriber: Subscriber, address: tuple[str, int]) -> None:
        self.subscriber = subscriber
        self.address = address
        self.channels: set[str] = set()
        self.pubsub: Any = None
        self.task = asyncio.get_running_loop().create_task(self._keep(), name=f"redis shard {address[0]}:{address[1]}")

    def add(self, channel: str) -> None:
        if channel in self.channels:
            return
        self.channels.add(channel)
        if self.pubsub is not None:  # connected: subscribe now (else the keeper does, once connected)
            self.subscriber._later(self._ssubscribe(self.pubsub, channel))

    @staticmethod
    async def _ssubscribe(pubsub: Any, channel: str) -> None:
        try:
            await pubsub.execute_command("SSUBSCRIBE", channel)
        except Exception:  # noqa: BLE001 - the keeper's read sees the connection fail, and moves on
            pass

    async def _keep(self) -> None:
        subscriber, link = self.subscriber, self.subscriber.link
        host, port = self.address
        # No health check inside redis-py: on a connection subscribed by SSUBSCRIBE alone it would
        # read a pushed message as its PING's reply. An idle connection is pinged here instead.
        kwargs = {**_client_kwargs(link.where, link.options), **_READER, "health_check_interval": 0}
        client = aioredis.Redis(host=host, port=port, **kwargs)
        pubsub = client.pubsub()
        try:
            sent: set[str] = set()
            while self.channels - sent:  # one channel a command: they may lie in different slots
                channel = next(iter(self.channels - sent))
                await pubsub.execute_command("SSUBSCRIBE", channel)
                sent.add(channel)
            self.pubsub = pubsub
            await _read(pubsub, self._handle, self.IDLE, moved=self._moved, until=lambda: not self.channels)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever broke, the channels find another node
            subscriber.outage.failed(_why(exc, link.where))
        finally:
            self.pubsub = None
            await _close_pubsub(pubsub, client)
        subscriber._lost(self)


    def _handle(self, message: dict[str, Any]) -> None:
        subscriber = self.subscriber
        subscriber.outage.ok()
        if message.get("type") == "sunsubscribe" and message.get("channel") in self.channels:
            # Not asked for: this node no longer serves the channel's slot.
            channel = message["channel"]
            self.channels.discard(channel)
            subscriber._unconfirm(channel)
            subscriber._later(subscriber._replace([channel], None))
            return
        subscriber._message(message)

    def _moved(self, moved: rexc.AskError) -> None:
        self.subscriber._moved(self, moved.slot_id, (moved.host, int(moved.port)))


# A pub/sub connection's settings: no time bound on its reads (a message may be minutes away;
# :func:`_read` finds a dead connection by pinging it when it has been quiet).
_READER: dict[str, Any] = {"socket_timeout": None}


async def _read(
    pubsub: Any,
    handle: Callable[[dict[str, Any]], None],
    idle: float,
    *,
    moved: Callable[[rexc.AskError], None] | None = None,
    until: Callable[[], bool] = lambda: False,
) -> None:
    """Hand every message ``pubsub`` reads to ``handle`` until its connection fails (raised).

    The reads wait without a time bound: no timer per message (redis-py's
    ``get_message`` with a timeout sets one for each). Instead, every ``idle``
    seconds without a message the connection is sent a ``PING``, whose
    ``pong`` is a message too; when ``idle`` passes again without one, the
    connection is lost (a peer gone without closing it). ``moved``: called with
    a ``MOVED``/``ASK`` error reply (a sharded channel's slot served elsewhere);
    ``until``: checked after each message, ``True`` ends the reading.
    """
    count = 0

    async def reader() -> None:
        nonlocal count
        # Read from the subscribed connection itself (its public ``read_response``): a message
        # costs one parse, not get_message's layers (retry wrapper, metrics hooks, handler lookup)
        # — the feed carries every broadcast batch of the followed tables.
        connection = pubsub.connection
        while not until():
            try:
                if connection is None:  # (nothing subscribed yet)
                    message = await pubsub.get_message(timeout=None)
                else:
                    message = _pushed(await connection.read_response())
            except rexc.AskError as exc:  # MOVED too
                if moved is None:
                    raise
                moved(exc)
                continue
            count += 1
            if message is not None:
                handle(message)

    task = asyncio.get_running_loop().create_task(reader())
    try:
        seen, pinged = count, False
        while True:
            done, _pending = await asyncio.wait((task,), timeout=idle)
            if done:
                task.result()  # the connection's failure, if any
                return
            if count != seen:
                seen, pinged = count, False
            elif pinged:
                raise rexc.ConnectionError(f"no answer to PING in {idle:g} s")
            else:
                await pubsub.ping()
                pinged = True
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _pushed(reply: Any) -> dict[str, Any] | None:
    """A reply read on a subscribed connection as redis-py's ``get_message`` gives it: ``type``,
    ``channel``, ``data`` (``["message", channel, data]``, ``["subscribe", channel, count]``,
    ``["pong", ""]`` …)."""
    if isinstance(reply, (bytes, str)):  # a PING's reply outside subscribed mode
        return {"type": "pong", "channel": None, "data": reply}
    if not isinstance(reply, (list, tuple)) or not reply:
        return None
    kind = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
    if kind == "pong":
        return {"type": kind, "channel": None, "data": reply[1] if len(reply) > 1 else ""}
    return {"type": kind, "channel": reply[1] if len(reply) > 1 else None, "data": reply[2] if len(reply) > 2 else None}


async def _close_pubsub(pubsub: Any, client: Any) -> None:
    try:
        await pubsub.aclose()
    except Exception:  # noqa: BLE001
        pass
    await _close_client(client)
