"""The web table's files: served by the bridge, and nothing fetched from elsewhere."""

from __future__ import annotations

import re

import aiohttp
import pytest

from vtt_bridge.server import BridgeServer, ServerConfig
from vtt_bridge.server.app import STATIC_DIR

# The one absolute URL the page may contain: the SVG namespace (an identifier, never fetched).
ALLOWED_URLS = {"http://www.w3.org/2000/svg"}


@pytest.fixture
async def server(tmp_path):
    config = ServerConfig(port=0, db=str(tmp_path / "bridge.sqlite"), static_dir=STATIC_DIR, shutdown_grace=1.0)
    async with BridgeServer(config) as running:
        yield running


async def test_the_page_and_its_files_are_served(server):
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{server.url}/") as response:
            assert response.status == 200
            assert response.content_type == "text/html"
            page = await response.text()
        sources = re.findall(r'(?:src|href)="([^"]+)"', page)
        assert "/static/socket.io.min.js" in sources
        for source in sources:
            if source.startswith("data:"):
                continue
            assert source.startswith("/static/"), source
            async with http.get(f"{server.url}{source}") as response:
                assert response.status == 200, source
                body = await response.text()
                assert body.strip(), source
            if source.endswith(".js"):
                assert response.content_type in ("application/javascript", "text/javascript"), source


def test_no_file_loads_anything_from_the_network():
    for name in ("index.html", "app.js", "style.css"):
        text = (STATIC_DIR / name).read_text(encoding="utf-8")
        urls = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'`)]*", text))
        assert urls <= ALLOWED_URLS, (name, urls - ALLOWED_URLS)
        assert "@import" not in text, name


def test_the_vendored_socketio_client_keeps_its_license():
    script = (STATIC_DIR / "socket.io.min.js").read_text(encoding="utf-8")
    assert script.startswith("/*!\n * Socket.IO v4."), script[:80]
    assert "Released under the MIT License." in script[:300]
    license_text = (STATIC_DIR / "socket.io.LICENSE.md").read_text(encoding="utf-8")
    assert "Permission is hereby granted, free of charge" in license_text
