"""Game night from nothing: the GM builds a table in the browser, a player attacks from a
phone, the server restarts mid-game and both pages carry on without a reload.

A server of its own (it is stopped and started again on the same port and store), Debian's
Chromium, the GM at a desk (1440×900) and the player on a phone in portrait (390×844).
Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re

import pytest

from tests.server.kit import seat_table
from tests.web.pages import answer_defaults_until, server_request, settle
from vtt_bridge.server.describe import describe_rulesets

pytestmark = pytest.mark.slow

def fresh_brute(gm, expect) -> None:
    """The GM puts Brute back on his feet (Reset track, when he is hurt), so he fights on:
    the dice may have left him dying, and a fallen token neither attacks nor is asked."""
    marked = gm.locator('#scene [data-token="brute"] .box.marked')
    if marked.count():
        if not gm.locator('#scene [data-token="brute"].selected').count():
            gm.click('#scene [data-token="brute"] .disc')  # select him (a second click unselects)
        gm.click('#inspector [data-action="reset"]')
    expect(marked).to_have_count(0)


def test_gm_builds_a_table_player_attacks_server_restarts(expect, restartable, browser, artifacts):
    live = restartable()
    seat = live.run(seat_table(live.server, name="Thursday game", users=("alice",), tokens=[], settings={"decision_timeout": 10}))
    described = {r["id"]: r for r in describe_rulesets(live.server.host)["rulesets"]}
    exalted = described["exalted2e"]
    url = live.url
    port = live.server.port
    errors: list[str] = []

    gm_context = browser.new_context(viewport={"width": 1440, "height": 900})
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        gm = gm_context.new_page()
        alice = phone.new_page()
        for page in (gm, alice):
            page.on("pageerror", lambda error: errors.append(str(error)))
        gm.goto(f"{url}/#table={seat.id}&key={seat.keys['gm']}")
        alice.goto(f"{url}/#table={seat.id}&key={seat.keys['alice']}")
        for page in (gm, alice):
            expect(page.locator("#app")).to_be_visible()
            expect(page.locator("#status")).to_have_text("online")
        expect(gm.locator("#scene .token")).to_have_count(0)
        expect(gm.locator("#attack-attacker")).to_contain_text("no token of this ruleset yet")

        # -- the GM makes Anoria from the exalted2e sheet, for alice ------------------------
        gm.click("#new-token")
        editor = gm.locator("#token-editor")
        expect(editor).to_be_visible()
        gm.select_option("#token-ruleset", "exalted2e")
        gm.fill("#token-name", "Anoria")
        gm.fill("#token-id", "anoria")
        for name, value in (("strength", "3"), ("dexterity", "5"), ("stamina", "3")):
            gm.fill(f'#token-editor [data-path="attributes.{name}"]', value)
        # Defaults are filled in: the other attributes start at 1, Essence at 1.
        expect(gm.locator('#token-editor [data-path="attributes.wits"]')).to_have_value("1")
        # The 25 abilities start folded.
        gm.click('#token-editor details[data-path="abilities"] > summary')
        gm.fill('#token-editor [data-path="abilities.melee"]', "5")
        gm.fill('#token-editor [data-path="essence"]', "3")
        gm.fill('#token-editor [data-path="motes"]', "40")
        # A list: add a weapon, fill it in; enums are selects.
        gm.click('#token-editor [data-add="weapons"]')
        gm.fill('#token-editor [data-path="weapons.0.name"]', "daiklave")
        gm.select_option('#token-editor [data-path="weapons.0.ability"]', "melee")
        gm.fill('#token-editor [data-path="weapons.0.accuracy"]', "3")
        gm.fill('#token-editor [data-path="weapons.0.damage"]', "12")
        gm.select_option('#token-editor [data-path="weapons.0.damage_type"]', "L")
        # A second weapon, added and removed again.
        gm.click('#token-editor [data-add="weapons"]')
        expect(gm.locator('#token-editor [data-path="weapons.1.name"]')).to_be_visible()
        gm.click('#token-editor [data-remove="weapons.1"]')
        expect(gm.locator('#token-editor [data-path="weapons.1.name"]')).to_have_count(0)
        expect(gm.locator('#token-editor [data-path="weapons.0.name"]')).to_have_value("daiklave")
        # Ownership: alice owns her character.
        gm.fill("#token-editor [data-new-owner]", "alice")
        gm.click('#token-editor [data-action="add-owner"]')
        expect(gm.locator('#token-editor select[data-owner="alice"]')).to_have_value("3")
        # The Excellencies pack's data on the token (its flags schema from rulesets.list):
        # which Excellencies Anoria knows. A Charm she does not know is refused when declared.
        assert "excellencies" in exalted["flags"], exalted["flags"]
        gm.check('#token-editor [data-flags-on="excellencies"]')
        pack = gm.locator('#token-editor .pack[data-plugin="excellencies"]')
        # The Charms she knows are checkboxes by name (the declarables' labels), not ids.
        names = {d["id"]: d["label"] for d in exalted["declarables"]}
        expect(pack.locator("[data-choice]")).to_have_count(len(names))
        expect(pack.locator(".choices")).to_contain_text(names["first-excellency"])
        expect(pack.locator(".choices")).not_to_contain_text("first-excellency")
        for known in ("first-excellency", "solar-counterattack"):
            pack.get_by_label(names[known]).check()
        gm.screenshot(path=str(artifacts / "game-night-token-form.png"), full_page=True)
        gm.click("#token-save")
        expect(editor).to_be_hidden()
        expect(gm.locator('#scene [data-token="anoria"]')).to_be_visible()

        # -- the GM makes the NPC; the form says where it is wrong -----------------------------
        gm.click("#new-token")
        # A new token starts with the players of the one made before; the NPC is the GM's.
        expect(gm.locator('#token-editor select[data-owner="alice"]')).to_have_value("3")
        gm.select_option('#token-editor select[data-owner="alice"]', "0")
        gm.select_option("#token-ruleset", "exalted2e")
        gm.fill("#token-name", "Brute")
        gm.fill("#token-id", "brute")
        gm.fill('#token-editor [data-path="attributes.strength"]', "3")
        gm.fill('#token-editor [data-path="attributes.dexterity"]', "2")
        gm.click("#token-save")
        # Checked in the page: a required field left blank is named at the field.
        stamina = gm.locator('#token-editor .field[data-for="attributes.stamina"]')
        expect(stamina).to_have_class(re.compile(r"\binvalid\b"))
        expect(stamina.locator(".field-error")).to_have_text("Missing data for required field.")
        gm.fill('#token-editor [data-path="attributes.stamina"]', "2")
        # Checked by the server: its invalid_request details land at the field they name.
        gm.click('#token-editor details[data-path="health"] > summary')
        gm.fill('#token-editor [data-path="health.penalties"]', "[]")
        gm.click("#token-save")
        penalties = gm.locator('#token-editor .field[data-for="health.penalties"] .field-error')
        expect(penalties).to_be_visible()
        expect(penalties).not_to_be_empty()
        tokens = server_request(live, seat.auth("gm"), "token.list")["tokens"]
        assert [t["id"] for t in tokens] == ["anoria"], "a refused token must not be created"
        gm.fill('#token-editor [data-path="health.penalties"]', "")
        # An optional group (armor), with a map inside it (Hardness by damage type): keys added in the form.
        gm.click('#token-editor details[data-path="armor"] > summary')
        gm.fill('#token-editor [data-path="armor.bashing"]', "2")
        gm.fill('#token-editor [data-new-key="armor.hardness"]', "L")
        gm.click('#token-editor [data-add="armor.hardness"]')
        gm.fill('#token-editor [data-path="armor.hardness.L"]', "1")
        gm.click("#token-save")
        expect(gm.locator("#token-editor")).to_be_hidden()
        expect(gm.locator('#scene [data-token="brute"]')).to_be_visible()

        tokens = {t["id"]: t for t in server_request(live, seat.auth("gm"), "token.list")["tokens"]}
        anoria = tokens["anoria"]
        assert anoria["ownership"] == {"alice": 3}
        assert anoria["system"]["attributes"]["dexterity"] == 5 and anoria["system"]["abilities"]["melee"] == 5
        assert anoria["system"]["weapons"][0]["name"] == "daiklave" and anoria["system"]["weapons"][0]["damage_type"] == "L"
        assert len(anoria["system"]["weapons"]) == 1
        assert anoria["flags"] == {"excellencies": {"charms": ["first-excellency", "solar-counterattack"]}}, anoria
        assert tokens["brute"]["ownership"] == {}
        assert tokens["brute"]["system"]["armor"]["bashing"] == 2 and tokens["brute"]["system"]["armor"]["hardness"] == {"L": 1}

        # -- alice, on her phone, sees both and attacks with what her sheet and the packs offer
        expect(alice.locator('#scene [data-token="anoria"]')).to_be_visible()
        alice.select_option("#attack-ruleset", "exalted2e")
        expect(alice.locator("#attack-attacker")).to_have_value("anoria")
        alice.click('#attack-targets [data-token="brute"]')
        expect(alice.locator('#declaration select[data-field="weapon"] option[value="daiklave"]')).to_have_count(1)
        alice.select_option('#declaration select[data-field="weapon"]', "daiklave")
        # Never a raw JSON box in the declaration: Charms are checkboxes with typed fields.
        expect(alice.locator("#declaration textarea")).to_have_count(0)
        # The Excellencies pack's Charms, offered from rulesets.list's declarables.
        declarables = {d["id"]: d for d in exalted["declarables"]}
        charm = declarables["first-excellency"]
        dice = charm["params"]["properties"]["dice"]
        alice.check(f'#declaration [data-charm="{charm["id"]}"]')
        box = alice.locator(f'#declaration .declarable[data-declarable="{charm["id"]}"]')
        field = box.locator('input[data-path="dice"]')
        expect(field).to_be_visible()
        assert field.get_attribute("max") == str(dice["maximum"])
        # The pack allows up to 20 dice for any character; Anoria's cap is Dexterity 5 +
        # Melee 5 = 10. Asking for the form's maximum is refused by the server, said plainly
        # on the page, and nothing is rolled; she then buys her cap, which she can afford.
        field.fill(str(dice["maximum"]))
        alice.click("#attack-button")
        expect(alice.locator("#attack-error")).to_contain_text("exceed the cap of 10")
        expect(alice.locator("#attack-button")).to_be_enabled()
        field.fill("10")
        alice.screenshot(path=str(artifacts / "game-night-phone-attack.png"), full_page=True)
        alice.click("#attack-button")

        # The GM runs Brute: the question comes to the GM, with a countdown, and the table waits.
        dialog = gm.locator("dialog#decision")
        expect(dialog).to_be_visible()
        expect(gm.locator("#decision-countdown")).to_have_text(re.compile(r"^\d+ s, then: \S"))
        expect(gm.locator("#waiting")).to_contain_text("The table waits for you")
        gm.click('dialog#decision [data-option="nothing"]')
        expect(dialog).to_be_hidden()
        first = alice.locator("#chat .card").first
        settle([alice, gm], first)
        expect(gm.locator("#waiting")).to_be_hidden()
        first_id = first.get_attribute("data-attack")
        expect(gm.locator(f'#chat .card[data-attack="{first_id}"]')).to_have_attribute("data-status", "resolved")
        expect(first.locator(".summary-line")).to_contain_text("Anoria → Brute (daiklave")
        record = server_request(live, seat.auth("gm"), "attack.get", {"id": first_id})["attack"]
        assert record["declaration"]["charms"] == [{"id": "first-excellency", "dice": 10}], record["declaration"]
        assert record["outcome"]["motes"] == {"anoria": 10}, record["outcome"]
        alice.screenshot(path=str(artifacts / "game-night-phone-card.png"), full_page=True)

        # -- Brute strikes back from the GM's page: alice is asked, the table sees it, and the
        # GM does not wait out her countdown but takes the rules' default now (decision.default).
        fresh_brute(gm, expect)
        gm.select_option("#attack-ruleset", "exalted2e")
        gm.select_option("#attack-attacker", "brute")
        gm.click('#attack-targets [data-token="anoria"]')
        gm.click("#attack-button")
        expect(alice.locator("dialog#decision")).to_be_visible()
        waiting = gm.locator("#waiting .waiting-row").first
        expect(waiting.locator(".who")).to_have_text("alice")
        expect(waiting).to_contain_text(re.compile(r"\d+ s left, then: \S"))
        expect(alice.locator("#waiting .waiting-row .who").first).to_have_text("you")
        gm.screenshot(path=str(artifacts / "game-night-gm-waiting.png"), full_page=True)
        took = gm.locator('#chat .card').first
        for _ in range(20):  # the defense, then whatever else the rules ask her (a counterattack)
            if took.get_attribute("data-status") == "resolved":
                break
            row = gm.locator('#waiting [data-action="take-default"]').first
            if row.count() and row.is_visible():
                row.click()
            gm.wait_for_timeout(200)
        expect(took).to_have_attribute("data-status", "resolved")
        expect(alice.locator("dialog#decision")).to_be_hidden()
        expect(gm.locator("#waiting")).to_be_hidden()
        gm_attack = took.get_attribute("data-attack")
        expect(alice.locator(f'#chat .card[data-attack="{gm_attack}"]')).to_have_attribute("data-status", "resolved")
        taken = server_request(live, seat.auth("gm"), "attack.get", {"id": gm_attack})["attack"]
        assert taken["decisions"] and {d["how"] for d in taken["decisions"]} == {"default"}, taken["decisions"]

        # -- the server restarts mid-game --------------------------------------------------------
        live.stop()
        for page in (gm, alice):
            expect(page.locator("#status")).not_to_have_text("online")
            expect(page.locator("#banner")).to_contain_text("reconnecting")
        live = restartable(port)
        # Something happens at once, perhaps before the pages are back: they catch up either way.
        missed = server_request(live, seat.auth("gm"), "attack",
            {"ruleset": "exalted2e", "attacker": "brute", "targets": ["anoria"], "answers": {"defense": "nothing"}, "seed": 7},
        )
        assert missed["ok"], missed
        missed_id = missed["attack"]["id"]
        for page in (gm, alice):
            expect(page.locator("#status")).to_have_text("online", timeout=20_000)
            expect(page.locator("#banner")).to_be_hidden(timeout=20_000)
            expect(page.locator(f'#chat .card[data-attack="{missed_id}"]')).to_have_attribute("data-status", "resolved")
            # The first card is still there: nothing was reloaded.
            expect(page.locator(f'#chat .card[data-attack="{first_id}"]')).to_have_count(1)
        after = missed["attack"]["tokens"]["anoria"]["after"]
        assert after["version"] >= anoria["version"]

        # Both carry on: alice attacks again (the form kept her choices), the GM answers.
        expect(alice.locator("#attack-attacker")).to_have_value("anoria")
        fresh_brute(gm, expect)
        alice.click("#attack-button")
        expect(dialog).to_be_visible()
        gm.click('dialog#decision [data-option="nothing"]')
        settle([alice, gm], alice.locator("#chat .card").first)
        cards = alice.locator('#chat .card[data-status="resolved"]')
        expect(cards).to_have_count(4)
        third = alice.locator("#chat .card").first.get_attribute("data-attack")
        assert third not in (first_id, gm_attack, missed_id)
        expect(gm.locator(f'#chat .card[data-attack="{third}"]')).to_have_attribute("data-status", "resolved")

        # The server restarts while a question is out: the attack applied nothing; alice's page
        # sends it again when it is back (same request id), the GM is asked again, and it resolves.
        fresh_brute(gm, expect)
        alice.click("#attack-button")
        expect(dialog).to_be_visible()
        live.stop()
        expect(dialog).to_be_hidden()
        live = restartable(port)
        expect(gm.locator("#status")).to_have_text("online", timeout=20_000)
        # (If alice's page is back before the GM's, nobody is there to ask and the rules'
        # default is taken at once; otherwise the GM is asked again: answer with the default.)
        answer_defaults_until([gm, alice], lambda: cards.count() == 5)
        expect(cards).to_have_count(5)
        # The cut-short attack's "failed" card gave way to the card of the attack sent again (issue 28).
        for page in (gm, alice):
            expect(page.locator('#chat .card[data-status="failed"]')).to_have_count(0)
        fourth = alice.locator("#chat .card").first.get_attribute("data-attack")
        expect(gm.locator(f'#chat .card[data-attack="{fourth}"]')).to_have_attribute("data-status", "resolved")
        history = server_request(live, seat.auth("gm"), "attack.history", {"limit": 50})["attacks"]
        assert sum(1 for e in history if e["kind"] == "attack") == 5, "the interrupted attack was applied twice or lost"
        gm.screenshot(path=str(artifacts / "game-night-gm.png"), full_page=True)
        alice.screenshot(path=str(artifacts / "game-night-phone.png"), full_page=True)

        # A page opened now (a reload, a late player) shows the recent cards at once.
        late = phone.new_page()
        late.goto(f"{url}/#table={seat.id}&key={seat.keys['alice']}")
        expect(late.locator("#chat .card")).to_have_count(5)
        expect(late.locator("#chat .card").first).to_have_attribute("data-attack", fourth)
        assert errors == [], errors
    finally:
        gm_context.close()
        phone.close()
