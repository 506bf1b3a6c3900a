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


def page_files() -> list:
    """The page's own files (the vendored socket.io client aside)."""
    return sorted(
        p for p in STATIC_DIR.rglob("*") if p.suffix in (".html", ".js", ".css") and p.name != "socket.io.min.js"
    )


def test_no_file_loads_anything_from_the_network():
    files = page_files()
    assert len(files) > 5, files
    for path in files:
        text = path.read_text(encoding="utf-8")
        # Module paths and comments may mention a URL-like token; only real URLs count.
        urls = set(re.findall(r"(?:https?:)//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'`)]*", text))
        assert urls <= ALLOWED_URLS, (path.name, urls - ALLOWED_URLS)
        assert "@import" not in text, path.name


IMPORT = re.compile(r"^import\s+(?:[^\"']*?\s+from\s+)?[\"']([^\"']+)[\"'];", re.M)


async def test_every_module_the_page_imports_is_served(server):
    """index.html loads web/main.js as a module; every import it reaches is a file the bridge serves."""
    seen: set[str] = set()
    todo = ["/static/web/main.js"]
    async with aiohttp.ClientSession() as http:
        while todo:
            url = todo.pop()
            if url in seen:
                continue
            seen.add(url)
            async with http.get(f"{server.url}{url}") as response:
                assert response.status == 200, url
                assert response.content_type in ("application/javascript", "text/javascript"), url
                body = await response.text()
            for target in IMPORT.findall(body):
                assert target.startswith("."), (url, target)
                base = url.rsplit("/", 1)[0]
                parts = f"{base}/{target}".split("/")
                resolved: list[str] = []
                for part in parts:
                    if part == "..":
                        resolved.pop()
                    elif part != ".":
                        resolved.append(part)
                todo.append("/".join(resolved))
    assert {"/static/common/schema-form.js", "/static/common/card.js", "/static/common/odds.js", "/static/web/chat.js"} <= seen


def test_the_vendored_socketio_client_keeps_its_license():
    script = (STATIC_DIR / "socket.io.min.js").read_text(encoding="utf-8")
    assert script.startswith("/*!\n * Socket.IO v4."), script[:80]
    assert "Released under the MIT License." in script[:300]
    license_text = (STATIC_DIR / "socket.io.LICENSE.md").read_text(encoding="utf-8")
    assert "Permission is hereby granted, free of charge" in license_text
