"""Broadcast order on the web table: a gap in ``broadcast_seq`` is one ``table.sync``, and the
page ends up showing what the store holds (docs/protocol.md, "Broadcast order")."""

from __future__ import annotations

import json

import pytest

from tests.server.kit import seat_table
from tests.web.pages import server_request

pytestmark = pytest.mark.slow

TOKENS = [
    {
        "id": "hero", "name": "Hero", "ruleset": "exalted2e", "ownership": {"alice": 3},
        "system": {"attributes": {"strength": 3, "dexterity": 3, "stamina": 3}, "abilities": {"melee": 3}},
    },
    {
        "id": "brute", "name": "Brute", "ruleset": "exalted2e", "ownership": {},
        "system": {"attributes": {"strength": 2, "dexterity": 2, "stamina": 2}, "abilities": {"melee": 2}},
    },
]  # fmt: skip


def _syncs(frames: list[str]) -> int:
    return sum(1 for f in frames if f.startswith("42") and '"table.sync"' in f[:40])


def test_a_gap_in_the_broadcasts_is_one_table_sync_and_the_page_catches_up(expect, live_server, browser):
    live = live_server
    seat = live.run(seat_table(live.server, name="order", users=("alice",), tokens=TOKENS))
    context = browser.new_context()
    try:
        page = context.new_page()
        sent: list[str] = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
        page.goto(f"{live.url}/#table={seat.id}&key={seat.keys['alice']}")
        expect(page.locator("#status")).to_have_text("online")
        expect(page.locator("#app")).to_be_visible()
        page.wait_for_timeout(300)
        before = _syncs(sent)
        # An update in order: applied, no sync.
        assert server_request(live, seat.auth("gm"), "token.update", {"id": "brute", "name": "Brute II"})["ok"]
        expect(page.get_by_text("Brute II").first).to_be_visible()
        assert _syncs(sent) == before
        # Forge a gap: three broadcast_seq numbers are used up that this page never receives.
        live.run(live.server.store.broadcast(seat.id, "", b"", 3))
        assert server_request(live, seat.auth("gm"), "token.update", {"id": "brute", "name": "Brute III"})["ok"]
        # The page drops the event after the gap, asks table.sync once, and shows the store's state.
        expect(page.get_by_text("Brute III").first).to_be_visible()
        page.wait_for_timeout(500)
        assert _syncs(sent) == before + 1, [f for f in sent if "table.sync" in f]
        # And goes on from the sync's broadcast_seq: the next update applies without another sync.
        assert server_request(live, seat.auth("gm"), "token.update", {"id": "brute", "name": "Brute IV"})["ok"]
        expect(page.get_by_text("Brute IV").first).to_be_visible()
        page.wait_for_timeout(300)
        assert _syncs(sent) == before + 1
        assert json.dumps(sent)  # frames were seen at all
    finally:
        context.close()
