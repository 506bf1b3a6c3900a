"""What goes out on a websocket: the same bytes everywhere an attack appears; silent clients dropped.

The server encodes an attack once (in the resolver) and writes those bytes
into the acknowledgement, into ``attack.resolved`` (one by one and in a
``batch``) and into the audit entry. These tests read the raw frames a
client receives, as a browser would, so any re-encoding that changed a byte
would show.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

import aiohttp

from vtt_bridge.server import BridgeServer
from vtt_bridge.state import codec

from .conftest import config
from .kit import StalledClient, seat_table

ATTACK = {
    "ruleset": "duel",
    "attacker": "a",
    "targets": ["b", "c"],
    "dice": [6, 6, 6, 6, 6, 6],
    "answers": {"defense": "none", "reroll": "decline"},
    "request_id": "same-bytes",
}


async def _raw_client(http: aiohttp.ClientSession, url: str, auth: dict) -> aiohttp.ClientWebSocketResponse:
    ws = await http.ws_connect(url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket")
    assert (await ws.receive_str()).startswith("0")
    await ws.send_str("40" + json.dumps(auth))
    assert (await ws.receive_str()).startswith("40")
    return ws


async def _frame(ws: aiohttp.ClientWebSocketResponse, start: str) -> str:
    """The first frame that starts with ``start`` (bounded: 10 s)."""
    async with asyncio.timeout(10):
        while not (text := await ws.receive_str()).startswith(start):
            pass
    return text


def _inner(text: str, before: str) -> str:
    """The JSON text of the value that follows ``before`` up to the frame's closing ``}]``."""
    start = text.index(before) + len(before)
    assert text.endswith("}]"), text[-20:]
    return text[start:-2]


async def test_the_ack_the_broadcasts_and_the_audit_entry_carry_the_same_attack_bytes(tmp_path):
    async with BridgeServer(config(tmp_path, rate_limit=0)) as server:
        seat = await seat_table(server)
        async with aiohttp.ClientSession() as http:
            gm = await _raw_client(http, server.url, seat.auth("gm"))
            plain = await _raw_client(http, server.url, seat.auth("carol"))
            batched = await _raw_client(http, server.url, {**seat.auth("bob"), "batch": True})
            await gm.send_str("421" + json.dumps(["attack", ATTACK]))
            ack = await _frame(gm, "431[")
            resolved = await _frame(plain, '42["attack.resolved"')
            batch = await _frame(batched, '42["batch"')
            for ws in (gm, plain, batched):
                await ws.close()
    attack = _inner(ack, '431[{"ok":true,"attack":').removesuffix(',"retried":false')  # a request_id's flag
    # Each broadcast ends with its broadcast_seq, after the attack's bytes.
    resolved, numbered = re.subn(r',"broadcast_seq":\d+}]$', "}]", resolved)
    assert numbered == 1
    assert _inner(resolved, '42["attack.resolved",{"attack":') == attack
    assert re.match(re.escape('42["batch",[["attack.resolved",{"attack":' + attack) + r',"broadcast_seq":\d+}]', batch)
    # The attack ends with its seq; the audit entry keeps it without (the row has its own seq).
    seq = json.loads(attack)["seq"]
    assert attack.endswith(f',"seq":{seq}}}')
    with sqlite3.connect(Path(tmp_path) / "bridge.sqlite") as db:
        row_seq, data = db.execute("SELECT seq, data FROM audit WHERE kind = 'attack'").fetchone()
    assert row_seq == seq
    assert data.startswith('{"attack":' + attack[: -len(f',"seq":{seq}}}')] + '},"request":')
    # The order of the fields is the protocol's: the attack's head, the record, its tokens.
    keys = list(json.loads(attack))
    assert keys[:8] == ["id", "ruleset", "attacker", "targets", "user", "table", "at", "request_id"]
    assert keys[-2:] == ["tokens", "seq"]


async def test_token_updated_and_the_audit_entry_carry_each_token_as_the_attack_does(tmp_path):
    """Each changed token's wire form is encoded once (in the resolver): ``token.updated``
    and the audit entry's changes carry the bytes the attack's ``tokens`` has for it."""
    async with BridgeServer(config(tmp_path, rate_limit=0)) as server:
        seat = await seat_table(server)
        async with aiohttp.ClientSession() as http:
            gm = await _raw_client(http, server.url, seat.auth("gm"))
            plain = await _raw_client(http, server.url, seat.auth("carol"))
            await gm.send_str("421" + json.dumps(["attack", ATTACK]))
            ack = await _frame(gm, "431[")
            attack = json.loads(_inner(ack, '431[{"ok":true,"attack":').removesuffix(',"retried":false'))
            changed = list(attack["changes"])
            assert changed, attack
            updates = [await _frame(plain, '42["token.updated"') for _ in changed]
            for ws in (gm, plain):
                await ws.close()
    wire = attack["tokens"]
    unnumbered = [re.sub(r',"broadcast_seq":\d+}]$', "}]", u) for u in updates]
    assert [_inner(u, '42["token.updated",{"token":') for u in unnumbered] == [
        codec.dumps(wire[tid]["after"]) for tid in changed
    ]
    with sqlite3.connect(Path(tmp_path) / "bridge.sqlite") as db:
        (changes,) = db.execute("SELECT changes FROM audit WHERE kind = 'attack'").fetchone()
        rows = dict(db.execute("SELECT id, system FROM tokens"))
    pairs = {tid: {"before": wire[tid]["before"], "after": wire[tid]["after"]} for tid in changed}
    assert changes == codec.dumps(pairs)
    assert {tid: json.loads(rows[tid]) for tid in changed} == {tid: wire[tid]["after"]["system"] for tid in changed}


async def test_a_websocket_client_that_falls_silent_is_dropped_after_the_ping_timeout(tmp_path):
    async with BridgeServer(config(tmp_path, rate_limit=0, ping_interval=0.3, ping_timeout=0.3)) as server:
        seat = await seat_table(server)
        silent = await StalledClient().connect(server.port, seat.auth("carol"))  # never answers a ping
        try:
            assert [c.user for c in server.bridge.callers.values()] == ["carol"]
            async with asyncio.timeout(5):  # interval + timeout is 0.6 s
                while server.bridge.callers:
                    await asyncio.sleep(0.05)
        finally:
            silent.close()


async def test_websockets_are_not_deflated_unless_the_server_is_told_to(tmp_path):
    """``ServerConfig.ws_compression`` (off by default: zlib on every small frame costs more
    CPU than it saves): a client offering permessage-deflate gets it only when it is on."""
    for on in (False, True):
        async with BridgeServer(config(tmp_path / str(on), ws_compression=on)) as server:
            url = server.url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket"
            async with aiohttp.ClientSession() as http:
                ws = await http.ws_connect(url, compress=15)
                try:
                    assert (await ws.receive_str()).startswith("0")  # engine.io's open packet
                    assert bool(ws.compress) is on
                finally:
                    await ws.close()
