"""Test kit for the server: real servers on loopback, real socket.io clients.

``Client`` wraps python-socketio's ``AsyncClient``: it records every event the
server sends, answers ``decision`` prompts with a policy (or ignores them),
and ``call``s events with an acknowledgement. ``seat_table`` creates a table
with the duel tokens and keys for the GM, alice (owns ``a``) and bob (owns ``b``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import socketio

from vtt_bridge.server import BridgeServer, create_table, issue_key

Policy = Callable[[dict], Awaitable[Any]]

DUEL_TOKENS = [
    {"id": "a", "name": "Attacker", "ruleset": "duel", "ownership": {"alice": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "b", "name": "Defender", "ruleset": "duel", "ownership": {"bob": 3}, "system": {"hp": 10, "rerolls": 0}},
    {"id": "c", "name": "Bystander", "ruleset": "duel", "ownership": {"carol": 2}, "system": {"hp": 5, "rerolls": 0}},
]


async def ignore(decision: dict) -> Any:
    """A player who never answers (the prompt times out)."""
    await asyncio.Event().wait()


def answer(option: Any) -> Policy:
    async def policy(decision: dict) -> Any:
        return option

    return policy


class Client:
    def __init__(
        self,
        url: str,
        policy: Policy | None = None,
        *,
        transports: tuple[str, ...] = ("websocket",),
        source: str | None = None,
    ) -> None:
        self.url = url
        self.policy = policy
        self.transports = list(transports)
        # ``source``: the local address the client connects from (another 127.x.y.z looks
        # like another player's machine to a load balancer that hashes the client's address).
        self.session = (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0))) if source else None
        )
        self.sio = socketio.AsyncClient(reconnection=False, http_session=self.session)
        self.events: list[tuple[str, Any]] = []
        self.seqs: list[int] = []
        self.decisions: list[dict] = []
        self.refused: Any = None
        self._changed = asyncio.Event()
        self.sio.on("*", self._record)
        self.sio.on("decision", self._decide)
        self.sio.on("connect_error", self._refused)

    async def _record(self, event: str, data: Any = None) -> None:
        # Each broadcast's broadcast_seq goes to ``seqs`` (tests of the numbering read it there);
        # ``events`` holds the payloads as the rest of the protocol defines them.
        if event == "batch" and isinstance(data, list):
            data = [[name, self._numbered(payload)] for name, payload in data]
        else:
            data = self._numbered(data)
        self.events.append((event, data))
        self._changed.set()

    def _numbered(self, data: Any) -> Any:
        if isinstance(data, dict) and "broadcast_seq" in data:
            data = dict(data)
            self.seqs.append(data.pop("broadcast_seq"))
        return data

    async def _refused(self, data: Any) -> None:
        self.refused = data

    async def _decide(self, data: dict) -> Any:
        self.decisions.append(data)
        self.events.append(("decision", data))
        self._changed.set()
        if self.policy is None:
            return None
        return await self.policy(data)

    async def connect(self, auth: Any) -> Client:
        await self.sio.connect(self.url, auth=auth, transports=self.transports, wait_timeout=5)
        return self

    async def try_connect(self, auth: Any) -> bool:
        """Connect, or record why the server refused (``self.refused``)."""
        try:
            await self.connect(auth)
        except socketio.exceptions.ConnectionError:
            return False
        return True

    async def call(self, event: str, data: Any = None, *, timeout: float = 5) -> Any:
        if data is None:
            return await self.sio.call(event, timeout=timeout)
        return await self.sio.call(event, data, timeout=timeout)

    async def ok(self, event: str, data: Any = None) -> dict:
        ack = await self.call(event, data)
        assert ack["ok"] is True, ack
        return ack

    def named(self, event: str) -> list[Any]:
        return [data for name, data in self.events if name == event]

    async def wait_for(self, event: str, count: int = 1, *, timeout: float = 5) -> list[Any]:
        async with asyncio.timeout(timeout):
            while len(self.named(event)) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.named(event)

    async def close(self) -> None:
        if self.sio.connected:
            await self.sio.disconnect()
        if self.session is not None:
            await self.session.close()


@dataclass
class Seat:
    """A table and the keys to it."""

    server: BridgeServer
    id: str
    keys: dict[str, str]
    clients: list[Client] = field(default_factory=list)

    def auth(self, user: str) -> dict[str, str]:
        return {"table": self.id, "key": self.keys[user]}

    async def join(self, user: str, policy: Policy | None = None, **auth: Any) -> Client:
        client = await Client(self.server.url, policy).connect({**self.auth(user), **auth})
        self.clients.append(client)
        return client

    async def tokens(self) -> dict[str, dict]:
        """The table's tokens as stored (read behind the server's back)."""
        return {tid: t.to_dict() for tid, t in (await self.server.store.tokens(self.id)).items()}

    async def audit(self) -> list:
        return await self.server.store.audit(self.id)

    async def state(self) -> tuple[dict, int]:
        """What must not change when a request is refused: tokens and audit length."""
        return await self.tokens(), len(await self.audit())

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def seat_table(
    server: BridgeServer,
    *,
    name: str = "test table",
    users: tuple[str, ...] = ("alice", "bob", "carol"),
    tokens: list[dict] | None = None,
    settings: dict | None = None,
) -> Seat:
    """A table with the duel tokens, created as a user would: GM key, then events."""
    table, gm_key = await create_table(server.store, name, settings=settings)
    keys = {"gm": gm_key}
    for user in users:
        keys[user] = await issue_key(server.store, table.id, user)
    seat = Seat(server, table.id, keys)
    gm = await Client(server.url).connect(seat.auth("gm"))
    for token in DUEL_TOKENS if tokens is None else tokens:
        await gm.ok("token.create", token)
    await gm.close()
    return seat


class StalledClient:
    """A websocket client written by hand that connects to a table and then never reads again."""

    def __init__(self) -> None:
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self, port: int, auth: dict) -> StalledClient:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        self.reader, self.writer = await asyncio.open_connection(sock=sock, limit=4096)
        key = base64.b64encode(os.urandom(16)).decode()
        self.writer.write(
            (
                "GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        await self.reader.readuntil(b"\r\n\r\n")
        assert (await self._frame()).startswith("0")  # engine.io open
        self._send("40" + json.dumps(auth))
        assert (await self._frame()).startswith("40")  # socket.io connected
        return self

    async def _frame(self) -> str:
        head = await self.reader.readexactly(2)
        size = head[1] & 0x7F
        if size == 126:
            size = int.from_bytes(await self.reader.readexactly(2), "big")
        elif size == 127:
            size = int.from_bytes(await self.reader.readexactly(8), "big")
        return (await self.reader.readexactly(size)).decode()

    def _send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        size = len(data)
        head = bytes([0x81, 0x80 | size]) if size < 126 else bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
        self.writer.write(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.transport.abort()
