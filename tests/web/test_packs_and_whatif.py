"""Packs per table and What if… in Chromium (issue 28), on a desktop and on a 390×844 phone.

The GM switches a pack off in the table's settings: the next attack's form no longer
offers its Charms, its odds and its record run without it. From a logged attack's
card the GM asks what if that pack had been off: the logged card and the what-if
side by side, step by step, differences marked; then applied as a new attack, and
undone.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.server.kit import seat_table
from tests.web.pages import server_request, settle
from vtt_exalted2e import sample_tokens

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
SAMPLES = {t["id"]: t for t in sample_tokens()}
TOKENS = [{**SAMPLES["anoria"], "ownership": {"alice": 3}}, {**SAMPLES["monk"], "ownership": {"bob": 3}}]
CHARMED = {
    "ruleset": "exalted2e",
    "attacker": "anoria",
    "targets": ["monk"],
    "declaration": {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 3}]},
}


@pytest.fixture
def table(live_server, browser, expect):
    contexts: list[Any] = []
    errors: list[str] = []
    seat = live_server.run(seat_table(live_server.server, name="packs", users=("alice", "bob"), tokens=TOKENS, settings={"decision_timeout": 20}))

    def open_page(user: str, viewport: dict) -> Any:
        phone = viewport == PHONE
        context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{user}: {error}"))
        page.goto(f"{live_server.url}/#table={seat.id}&key={seat.keys[user]}")
        expect(page.locator("#status")).to_have_text("online")
        return page

    yield seat, open_page, errors
    for context in contexts:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_gm_switches_a_pack_off_and_the_next_attack_and_its_odds_run_without_it(expect, live_server, table, artifacts, viewport):
    seat, open_page, errors = table
    gm = open_page("gm", viewport)
    alice = open_page("alice", viewport)
    alice.select_option("#attack-ruleset", "exalted2e")
    expect(alice.locator("#attack-attacker")).to_have_value("anoria")
    alice.click('#attack-targets [data-token="monk"]')
    charm = alice.locator('#declaration [data-declarable="first-excellency"]')
    expect(charm).to_have_count(1)
    odds = alice.locator("#odds-body strong")
    expect(odds).to_have_text(re.compile(r"^Hit \d+%"))
    base = odds.inner_text()
    # With the pack on: three Excellency dice make the hit likelier.
    charm.locator('input[data-charm="first-excellency"]').check()
    charm.locator('input[type="number"]').first.fill("3")
    expect(odds).not_to_have_text(base)
    charmed = odds.inner_text()
    assert int(charmed[4:-1]) > int(base[4:-1]), (charmed, base)

    switch = gm.locator('#packs-list input[data-pack="excellencies"]')
    expect(switch).to_be_checked()
    switch.scroll_into_view_if_needed()
    switch.uncheck()
    expect(gm.locator('#packs-list input[data-pack="excellencies"]')).not_to_be_checked()
    gm.screenshot(path=str(artifacts / f"packs-gm-{'phone' if viewport == PHONE else 'desktop'}.png"))
    got = server_request(live_server, seat.auth("gm"), "table.get")["table"]
    assert "excellencies" not in got["settings"]["packs"]

    # Alice's form follows at once: no Excellency to declare; the odds without the pack.
    expect(charm).to_have_count(0)
    expect(odds).to_have_text(base)
    fist = {k: v for k, v in CHARMED.items() if k != "declaration"} | {"declaration": {"weapon": "fist"}}
    assert server_request(live_server, seat.auth("alice"), "attack.odds", fist)["odds"]["method"] == "exact"
    alice.click("#attack-button")
    bob = open_page("bob", DESKTOP)
    card = alice.locator("#chat .card").first
    settle([alice, bob], card)
    record = server_request(live_server, seat.auth("gm"), "attack.get", {"id": card.get_attribute("data-attack")})["attack"]
    assert list(record["packs"]) == ["exalted2e"]
    assert not any(c.get("plugin") == "excellencies" for s in record["steps"] for c in s["changes"] + s["notes"])
    if viewport == PHONE:
        assert alice.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_what_if_a_logged_attack_had_run_without_a_pack_then_applied_and_undone(expect, live_server, table, artifacts, viewport):
    seat, open_page, errors = table
    logged = server_request(live_server, seat.auth("gm"), "attack", {**CHARMED, "seed": 2, "answers": {"defense": "parry"}})
    assert logged["ok"], logged
    logged = logged["attack"]
    gm = open_page("gm", viewport)
    card = gm.locator(f'#chat .card[data-attack="{logged["id"]}"]')
    expect(card).to_have_attribute("data-status", "resolved")

    card.get_by_role("button", name="What if…").click()
    panel = gm.locator(f'.whatif[data-attack="{logged["id"]}"]')
    expect(panel).to_be_visible()
    box = panel.locator('input[data-pack="excellencies"]')
    expect(box).to_be_checked()  # as the attack ran
    box.uncheck()
    panel.get_by_role("button", name="Show what if").click()
    view = panel.locator(".whatif-view")
    expect(view).to_contain_text("without excellencies — same dice, nothing applied; left out: first-excellency")
    rows = view.locator(".side-by-side tbody tr")
    expect(rows.first).to_be_visible()
    # The attack roll differs (three dice fewer, the same faces); the defender's step does not.
    roll = view.locator("tr.differs", has_text="Attack roll").first
    expect(roll.locator("th.mark")).to_have_text("≠")
    expect(view.locator("tr.same", has_text="Defender declares response")).to_have_count(1)
    expect(view.locator(".outcome-diff")).to_contain_text("motes")
    panel.screenshot(path=str(artifacts / f"whatif-{'phone' if viewport == PHONE else 'desktop'}.png"))
    if viewport == PHONE:
        assert gm.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert len(server_request(live_server, seat.auth("gm"), "attack.history")["attacks"]) == 1  # nothing applied

    # Undo the logged attack, then apply the what-if: a new card, its own record, undoable.
    card.locator("button.undo").click()
    gm.click("#confirm-ok")
    expect(card).to_have_attribute("data-status", "undone")
    panel.get_by_role("button", name="Apply as a new attack").click()
    applied = gm.locator("#chat .card").first
    expect(applied).not_to_have_attribute("data-attack", logged["id"])
    settle([gm], applied)  # what the rules ask that nobody had answered: the default
    expect(applied.locator(".whatif-of")).to_have_text(f" · what if of #{logged['seq']}")
    record = server_request(live_server, seat.auth("gm"), "attack.get", {"id": applied.get_attribute("data-attack")})["attack"]
    assert record["whatif"]["of"] == logged["id"] and record["whatif"]["without"] == ["excellencies"]
    assert list(record["packs"]) == ["exalted2e"]
    applied.locator("button.undo").click()
    gm.click("#confirm-ok")
    expect(applied).to_have_attribute("data-status", "undone")
    tokens = {t["id"]: t for t in server_request(live_server, seat.auth("gm"), "token.list")["tokens"]}
    assert tokens["monk"]["system"] == logged["tokens"]["monk"]["before"]["system"]
    assert errors == []
