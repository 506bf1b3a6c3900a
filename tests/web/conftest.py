"""Fixtures for the web table's tests: a real server on loopback, Debian's Chromium.

The server runs in a thread with its own event loop, so the browser tests can
drive Playwright's synchronous API while the server (and any setup coroutine,
through :meth:`LiveServer.run`) goes on in the background. One server and one
Chromium serve a whole module; every test gets its own table and its own
browser contexts.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from vtt_bridge.server import BridgeServer, ServerConfig
from vtt_bridge.server.app import STATIC_DIR

T = TypeVar("T")

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Flags for a headless Chromium in a container: no sandbox (root), no GPU, and none of
# the background traffic a fresh profile starts (the tests run without internet).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    for candidate in ("chromium", "chromium-browser"):
        found = shutil.which(candidate)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


class LiveServer:
    """A :class:`BridgeServer` running in a background thread's event loop."""

    def __init__(self, config: ServerConfig) -> None:
        self.server = BridgeServer(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="bridge server", daemon=True)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        """Run a coroutine in the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @staticmethod
    async def _cancel_leftovers() -> None:
        # Connections' ping tasks can outlive the server by a beat; end them before the loop.
        current = asyncio.current_task()
        tasks = [t for t in asyncio.all_tasks() if t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> None:
        self.thread.start()
        self.run(self.server.start())

    def stop(self) -> None:
        try:
            self.run(self.server.stop())
            self.run(self._cancel_leftovers())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("web") / "bridge.sqlite"
    config = ServerConfig(port=0, db=str(db), static_dir=STATIC_DIR, shutdown_grace=1.0, decision_timeout=10.0)
    live = LiveServer(config)
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium not found: apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed: pip install -e '.[dev]'")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[Any]:
    """Start a server that the test may stop and start again, on the same port and store."""
    db = str(tmp_path / "game.sqlite")
    servers: list[LiveServer] = []

    def start(port: int = 0, **settings: Any) -> LiveServer:
        config = ServerConfig(**{"port": port, "db": db, "static_dir": STATIC_DIR, "shutdown_grace": 1.0, "decision_timeout": 10.0, **settings})
        live = LiveServer(config)
        live.start()
        servers.append(live)
        return live

    yield start
    for live in servers:
        if live.thread.is_alive():
            live.stop()


@pytest.fixture
def expect(browser: Any) -> Any:
    """Playwright's ``expect``, waiting up to 10 s."""
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=10_000)
    return playwright_expect
