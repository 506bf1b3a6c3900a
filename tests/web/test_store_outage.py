"""Redis away for a moment, seen from the web table: the attack a player sends meanwhile
is answered ``store_unavailable``; the page says "store unavailable, retrying in N s",
sends the same request again by itself (common/retry.js) and it goes through once Redis
is back — once, without the player clicking again."""

from __future__ import annotations

import itertools

import pytest

from tests.server.kit import seat_table
from tests.state.redis_server import redis_process
from tests.web.pages import server_request
from tests.web.test_session import TOKENS

pytestmark = pytest.mark.slow

_prefixes = itertools.count()


def test_an_attack_sent_while_redis_is_down_goes_through_when_it_is_back(expect, restartable, browser):
    with redis_process("--appendonly", "yes", "--appendfsync", "always") as redis:
        live = restartable(redis=redis.url, redis_prefix=f"web{next(_prefixes)}:")
        seat = live.run(seat_table(live.server, name="outage", users=("alice",), tokens=TOKENS))
        phone = browser.new_context(viewport={"width": 390, "height": 844})
        try:
            alice = phone.new_page()
            alice.goto(f"{live.url}/#table={seat.id}&key={seat.keys['alice']}")
            expect(alice.locator("#status")).to_have_text("online")
            alice.select_option("#attack-ruleset", "exalted2e")
            alice.click('#attack-targets [data-token="brute"]')
            redis.stop()
            alice.click("#attack-button")
            if alice.locator("dialog#confirm[open]").count():
                alice.click("#confirm-ok")
            banner = alice.locator("#banner")
            expect(banner).to_contain_text("store unavailable, retrying in", timeout=15_000)
            expect(alice.locator("#attack-button")).to_be_disabled()  # still the one attack, waiting
            alice.wait_for_timeout(1500)
            redis.start()  # with its data (AOF)
            expect(alice.locator("#attack-button")).to_be_enabled(timeout=30_000)
            expect(alice.locator("#attack-error")).to_have_text("")
            expect(banner).not_to_contain_text("store unavailable")
            history = server_request(live, seat.auth("gm"), "attack.history", {"limit": 10})
            attacks = [a for a in history["attacks"] if a["kind"] == "attack"]
            assert [a["attacker"] for a in attacks] == ["hero"]  # applied once
        finally:
            phone.close()
