"""``rulesets.list`` describes the rules for a client; ``/healthz`` and the web table's files."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from vtt_bridge.server import BridgeServer

from .conftest import config
from .kit import seat_table


async def test_rulesets_list_describes_steps_decisions_schemas_and_plugins(seat):
    player = await seat.join("carol")
    ack = await player.ok("rulesets.list")
    [duel] = ack["rulesets"]
    assert duel["id"] == "duel" and duel["title"] == "Duel (engine test)"
    assert duel["targets"] == {"min": 1, "max": 3}
    steps = {s["name"]: s for s in duel["steps"]}
    assert list(steps) == ["declare", "defend", "roll", "reroll", "wounds", "counter"]
    assert steps["defend"]["decision"] == {
        "name": "defense",
        "prompt": "Block or take it?",
        "who": "defender",
        "default": None,  # the rules choose it at the time
        "repeat": False,
        "decline": None,
        "timeout": None,
    }
    assert steps["reroll"]["decision"]["who"] == "attacker"
    assert steps["reroll"]["decision"]["decline"] == {"id": "decline", "label": "Done"}
    assert steps["reroll"]["goto"] == ["roll"]
    assert steps["wounds"]["each"] is True and steps["wounds"]["steps"][0]["name"] == "wound"
    assert duel["token_schema"] == {
        "type": "object",
        "properties": {"hp": {"type": "integer"}, "rerolls": {"type": "integer", "default": 0}},
        "required": ["hp"],
        "additionalProperties": False,
    }
    declaration = duel["declaration_schema"]["properties"]
    assert declaration["bonus"] == {"type": "integer", "default": 0}
    assert declaration["charms"]["type"] == "array" and declaration["charms"]["default"] == []
    plugins = {p["name"]: p for p in ack["plugins"]}
    assert any("duel_roll" in p["hooks"] for p in plugins.values())


async def _health(server) -> dict:
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/healthz") as response:
            assert response.status == 200
            return await response.json()


async def test_healthz_reports_the_server_and_its_store(server, seat):
    await seat_table(server, name="nobody here yet")
    gm = await seat.join("gm")
    alice = await seat.join("alice")
    body = await _health(server)
    assert body["ok"] is True and body["store"] == "sqlite" and body["rulesets"] == ["duel"]
    # Two tables in the store, one with people at it, two connections, nothing being resolved.
    assert (body["tables"], body["tables_open"], body["connections"], body["attacks_in_progress"]) == (2, 1, 2, 0)
    assert body["uptime"] >= 0
    # How late the event loop ran over the last minute: a 300 ms stall of it shows.
    assert set(body["loop_late_ms"]) == {"p50", "p99", "max"}
    time.sleep(0.3)  # the server runs on this test's event loop: this stops it
    await asyncio.sleep(0.1)
    late = (await _health(server))["loop_late_ms"]
    assert 250 <= late["max"] < 2000 and late["p50"] < 250, late
    await alice.close()
    await gm.close()
    async with asyncio.timeout(5):
        while (body := await _health(server))["connections"]:
            await asyncio.sleep(0.02)
    assert (body["tables"], body["tables_open"], body["connections"]) == (2, 0, 0)


async def test_healthz_says_503_when_the_store_is_gone(server):
    await server.store.close()
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/healthz") as response:
            assert response.status == 503
            assert (await response.json())["ok"] is False


async def test_the_web_tables_files_are_served_when_present(tmp_path):
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<h1>table</h1>")
    (static / "app.js").write_text("console.log(1)")
    async with BridgeServer(config(tmp_path, static_dir=static)) as running:
        async with aiohttp.ClientSession() as http:
            async with http.get(running.url + "/") as response:
                assert response.status == 200 and "table" in await response.text()
            async with http.get(running.url + "/static/app.js") as response:
                assert response.status == 200
            async with http.get(running.url + "/static/../bridge.sqlite") as response:
                assert response.status in (403, 404)
