"""What ends or holds back a session, said plainly on the page: a key replaced or revoked
(`session.closed`), and too many requests at once (`rate_limited`)."""

from __future__ import annotations

import pytest

from tests.server.kit import seat_table
from tests.web.pages import server_request

pytestmark = pytest.mark.slow

TOKENS = [
    {
        "id": "hero", "name": "Hero", "ruleset": "exalted2e", "ownership": {"alice": 3},
        "system": {
            "attributes": {"strength": 3, "dexterity": 3, "stamina": 3}, "abilities": {"melee": 3},
            "weapons": [{"name": "sword", "ability": "melee", "accuracy": 2, "damage": 3, "damage_type": "L", "defense": 0}],
        },
    },
    {
        "id": "brute", "name": "Brute", "ruleset": "exalted2e", "ownership": {},
        "system": {"attributes": {"strength": 2, "dexterity": 2, "stamina": 2}, "abilities": {"melee": 2}},
    },
]  # fmt: skip


def test_a_replaced_or_revoked_key_ends_the_page_session_and_says_why(expect, restartable, browser):
    live = restartable()
    seat = live.run(seat_table(live.server, name="keys", users=("alice",), tokens=TOKENS))
    gm_context, phone = browser.new_context(), browser.new_context(viewport={"width": 390, "height": 844})
    try:
        gm, alice = gm_context.new_page(), phone.new_page()
        gm.goto(f"{live.url}/#table={seat.id}&key={seat.keys['gm']}")
        alice.goto(f"{live.url}/#table={seat.id}&key={seat.keys['alice']}")
        for page in (gm, alice):
            expect(page.locator("#status")).to_have_text("online")
        # The GM issues alice a new key from the GM tools: her open page's key is replaced.
        gm.fill("#key-user", "alice")
        gm.click('#key-form button[type="submit"]')
        expect(gm.locator("#key-result")).to_contain_text("Key for alice")
        new_key = gm.locator("#key-result code").text_content()
        banner = alice.locator("#banner")
        expect(banner).to_contain_text("A new key was issued for this user")
        expect(banner).to_contain_text("Ask the GM for a new key")
        expect(alice.locator("#status")).to_have_text("closed")
        # It stays closed: no reconnecting with the old key.
        alice.wait_for_timeout(2500)
        expect(alice.locator("#status")).to_have_text("closed")
        expect(alice.locator("#banner")).not_to_contain_text("reconnecting")
        # She joins with the new key from the banner's button; then the GM revokes it.
        banner.get_by_role("button", name="Join with a new key").click()
        expect(alice.locator("#join")).to_be_visible()
        expect(alice.locator("#join-error")).to_contain_text("A new key was issued")
        alice.goto(f"{live.url}/#table={seat.id}&key={new_key}")
        alice.reload()
        expect(alice.locator("#app")).to_be_visible()
        expect(alice.locator("#status")).to_have_text("online")
        assert server_request(live, seat.auth("gm"), "key.revoke", {"user": "alice"})["ok"]
        expect(alice.locator("#banner")).to_contain_text("The GM revoked this page's key")
        expect(alice.locator("#status")).to_have_text("closed")
    finally:
        gm_context.close()
        phone.close()


def test_too_many_requests_at_once_is_said_plainly(expect, restartable, browser):
    # Enough for the page to load (table.get, rulesets.list, attack.history, table.sync,
    # the odds); then one event every 20 s.
    live = restartable(rate_limit=0.05, rate_burst=8)
    seat = live.run(seat_table(live.server, name="busy", users=("alice",), tokens=TOKENS, settings={"decision_timeout": 1}))
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        alice = phone.new_page()
        alice.goto(f"{live.url}/#table={seat.id}&key={seat.keys['alice']}")
        expect(alice.locator("#status")).to_have_text("online")
        alice.select_option("#attack-ruleset", "exalted2e")
        alice.click('#attack-targets [data-token="brute"]')
        said = "Too many requests from this page at once: nothing was done. Try again in "
        refused = alice.locator("#attack-error", has_text=said)
        for _ in range(10):
            if refused.count():
                break
            alice.click("#attack-button")
            if alice.locator("dialog#confirm[open]").count():  # Brute is down: attack anyway
                alice.click("#confirm-ok")
            expect(alice.locator("#attack-button")).to_be_enabled(timeout=15_000)
        expect(refused).to_have_count(1)
        expect(refused).to_contain_text(" s.")
    finally:
        phone.close()
