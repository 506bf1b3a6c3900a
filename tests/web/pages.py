"""Helpers for the browser tests: a request straight to the server, and a page that
answers whatever the rules still ask with the default."""

from __future__ import annotations

import time
from typing import Any

from tests.server.kit import Client


def server_request(live: Any, auth: dict, event: str, data: Any = None) -> dict:
    """One event over a real socket.io client (as the user `auth` names); the whole acknowledgement."""

    async def ask() -> dict:
        client = await Client(live.url).connect(auth)
        try:
            return await client.call(event, data, timeout=30)
        finally:
            await client.close()

    return live.run(ask(), timeout=40)


def answer_defaults_until(pages: list[Any], done: Any, deadline: float = 40) -> None:
    """Click "Take the default now" on any question these pages are asked until ``done()``."""
    end = time.monotonic() + deadline
    while not done():
        assert time.monotonic() < end, "the table did not settle"
        for page in pages:
            button = page.locator("dialog#decision[open] #decision-default")
            if button.count() and button.is_visible():
                button.click()
        time.sleep(0.1)


def settle(pages: list[Any], card: Any, deadline: float = 40) -> None:
    """Answer whatever else the rules ask (Charm dice, rerolls) with the default, until the card resolves."""
    answer_defaults_until(pages, lambda: card.get_attribute("data-status") == "resolved", deadline)
