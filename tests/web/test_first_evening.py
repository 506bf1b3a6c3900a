"""The first evening's frictions, in Chromium: a player on a phone (390×844) attacks with a
short form whose situational fields are folded under "More options" by their plain names;
the cards sit right under the form and one tap away; the defender's question says the DV
each choice gives; attacking a token already out of the fight asks first; the GM's token
form explains Hardness, Onslaught and the wound penalties, and takes the penalties as a
line of values.
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
SAMPLES = {t["id"]: t for t in sample_tokens()}
# The soldier (alice's) attacks Anoria (bob's): Anoria's Dodge DV 7 (Dex 4 + Dodge 4 +
# Essence 5, halved, up), Parry DV 5 with the daiklave (Dex 4 + Melee 3 + Defense 2, halved,
# up) — seed 002, "Dodge DV" and "Parry DV". The brigand has every level marked, down to
# Incapacitated.
TOKENS = [
    {**SAMPLES["soldier"], "ownership": {"alice": 3}},
    {**SAMPLES["anoria"], "ownership": {"bob": 3}},
    {
        **SAMPLES["brigand"],
        "system": {
            **SAMPLES["brigand"]["system"],
            "health": {"penalties": [0, -1, -1, -2, -2, -4, "I"], "damage": ["L"] * 7},
        },
    },
]
RAW_NAMES = ("post soak", "post_soak", "dodge inapplicable", "dodge_inapplicable", "off hand", "coordinated")


@pytest.fixture
def table(live_server, browser, expect):
    contexts: list[Any] = []
    errors: list[str] = []
    seat = live_server.run(seat_table(live_server.server, name="first evening", users=("alice", "bob"), tokens=TOKENS, settings={"decision_timeout": 20}))

    def open_page(user: str, viewport: dict | None = None) -> Any:
        context = browser.new_context(viewport=viewport or {"width": 1440, "height": 900}, is_mobile=viewport == PHONE, has_touch=viewport == PHONE)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{user}: {error}"))
        page.goto(f"{live_server.url}/#table={seat.id}&key={seat.keys[user]}")
        expect(page.locator("#status")).to_have_text("online")
        return page

    yield seat, open_page, errors
    for context in contexts:
        context.close()


def top(page: Any, selector: str) -> float:
    """Where an element starts, in the viewport (0: the top of the screen)."""
    return page.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top")


def test_a_phone_attacks_with_a_short_form_and_the_defender_sees_each_dv(expect, live_server, table, artifacts):
    seat, open_page, errors = table
    alice = open_page("alice", PHONE)
    bob = open_page("bob")
    alice.select_option("#attack-ruleset", "exalted2e")
    expect(alice.locator("#attack-attacker")).to_have_value("soldier")
    alice.click('#attack-targets [data-token="anoria"]')

    # The form: what most attacks set, by plain names with their help; the rest folded.
    declaration = alice.locator("#declaration")
    expect(declaration.locator('.field[for="decl-stunt"]')).to_contain_text("Stunt dice")
    expect(declaration.locator('.field[for="decl-stunt"] .help')).to_contain_text("for describing the attack well")
    more = declaration.locator("details.more-options")
    expect(more).not_to_have_attribute("open", "")
    expect(more.locator("> summary")).to_have_text(re.compile(r"^More options \(\d+\)"))
    shown = declaration.evaluate("el => el.innerText.toLowerCase()")
    assert not [raw for raw in RAW_NAMES if raw in shown], shown
    more.locator("> summary").click()
    for label, help_text in (
        ("Damage after soak +/-", "after soak"),
        ("No room to dodge", "closed ranks"),
        ("Off hand", "off hand"),
        ("Coordinated with (group)", "share one onslaught penalty"),
    ):
        field = more.locator(".field", has_text=label).first
        expect(field).to_be_visible()
        expect(field.locator(".help")).to_contain_text(help_text)
    # What is set there is not forgotten once folded: the summary counts it.
    more.locator('input[data-field="unaware"]').check()
    more.locator("> summary").click()
    expect(more.locator("> summary")).to_contain_text("· 1 set")
    more.locator("> summary").click()
    more.locator('input[data-field="unaware"]').uncheck()
    expect(more.locator("> summary")).not_to_contain_text("set")
    more.locator("> summary").click()

    # On the phone: the cards right under the form, and a tap brings either to the top.
    bar = alice.locator("#views")
    expect(bar).to_be_visible()
    gap = alice.evaluate(
        "document.getElementById('chat-column').getBoundingClientRect().top"
        " - document.getElementById('attack-form').getBoundingClientRect().bottom"
    )
    assert 0 <= gap < 40, gap
    chat_at = alice.evaluate("document.getElementById('chat-column').getBoundingClientRect().top + scrollY")
    print(f"phone 390x844: the chat starts {chat_at:.0f} px down the page")
    bar.get_by_role("button", name="Chat").click()
    alice.wait_for_function("Math.abs(document.getElementById('chat-column').getBoundingClientRect().top) < 120")
    bar.get_by_role("button", name="Attack").click()
    alice.wait_for_function("Math.abs(document.getElementById('attack-form').getBoundingClientRect().top) < 120")
    expect(bar).to_be_in_viewport()
    assert alice.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    alice.screenshot(path=str(artifacts / "first-evening-phone-form.png"))

    # The defender's question says what each choice gives.
    alice.click("#attack-button")
    dialog = bob.locator("dialog#decision")
    expect(dialog).to_be_visible()
    expect(dialog.locator('[data-option="dodge"] .option-detail')).to_have_text("Dodge DV 7")
    expect(dialog.locator('[data-option="parry"] .option-detail')).to_have_text("Parry DV 5 (daiklave)")
    expect(dialog.locator('[data-option="nothing"] .option-detail')).to_have_text(re.compile(r"^DV \d+$"))
    bob.screenshot(path=str(artifacts / "first-evening-defender.png"))
    bob.click('dialog#decision [data-option="parry"]')
    card = alice.locator("#chat .card").first
    settle([alice, bob], card)
    # Rolled from the phone: its card is on screen.
    alice.wait_for_function("(() => { const r = document.getElementById('chat-column').getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; })()")
    record = server_request(live_server, seat.auth("gm"), "attack.get", {"id": card.get_attribute("data-attack")})["attack"]
    asked = next(d for d in record["decisions"] if d["key"] == "defense")
    assert asked["answer"]["option"] == "parry"
    assert {o["id"]: o.get("detail") for o in asked["options"]}["parry"] == "Parry DV 5 (daiklave)"
    # The card says how the target defended, under its summary line.
    expect(card.locator(".summary-detail")).to_contain_text("Anoria defended: Parry")
    if record["outcome"].get("hit"):
        expect(card.locator(".summary-detail")).to_contain_text("struck Anoria")
    assert errors == []


def test_attacking_a_token_out_of_the_fight_asks_first(expect, live_server, table):
    seat, open_page, errors = table
    alice = open_page("alice")
    alice.select_option("#attack-ruleset", "exalted2e")
    chip = alice.locator('#attack-targets [data-token="brigand"]')
    expect(chip).to_contain_text("(incapacitated)")
    chip.click()
    before = len(server_request(live_server, seat.auth("gm"), "attack.history")["attacks"])
    alice.click("#attack-button")
    confirm = alice.locator("dialog#confirm")
    expect(confirm).to_be_visible()
    expect(alice.locator("#confirm-text")).to_have_text("Brigand is already out of the fight (incapacitated). Attack anyway?")
    alice.click("#confirm-cancel")
    expect(confirm).to_be_hidden()
    expect(alice.locator("#chat .card")).to_have_count(0)
    assert len(server_request(live_server, seat.auth("gm"), "attack.history")["attacks"]) == before
    # Attack anyway: the rules resolve it (the brigand cannot defend).
    alice.click("#attack-button")
    alice.click("#confirm-ok")
    card = alice.locator("#chat .card").first
    settle([alice], card)
    expect(card.locator(".summary-line")).to_contain_text("Brigand")
    assert errors == []


def test_the_token_form_explains_its_numbers_and_takes_penalties_as_a_line(expect, live_server, table):
    seat, open_page, errors = table
    gm = open_page("gm")
    gm.click('#scene [data-token="brigand"] .disc')
    gm.locator('#inspector [data-action="edit"]').click()
    editor = gm.locator("#token-editor")
    expect(editor.locator('details[data-path="hardness"] > summary .help')).to_contain_text("an attack whose raw damage is no more than it deals none")
    expect(editor.locator('details[data-path="onslaught"] > summary .help')).to_contain_text("-N to both DVs against it")
    expect(editor.locator('.field[data-for="dv_penalty"] .help')).to_contain_text("since it last acted")
    health = editor.locator('details[data-path="health"]')
    if health.get_attribute("open") is None:
        health.locator("> summary").click()
    penalties = editor.locator('[data-path="health.penalties"]')
    expect(penalties).to_have_js_property("tagName", "INPUT")
    expect(penalties).to_have_value("0 -1 -1 -2 -2 -4 I")
    expect(editor.locator('.field[data-for="health.penalties"] .help')).to_contain_text("I (Incapacitated), D (Dying)")
    expect(editor.locator("textarea")).to_have_count(0)
    # A tougher brigand: his fifth level's penalty -3 rather than -4, written as a line of values.
    penalties.fill("0 -1 -1 -2 -2 -3 I")
    gm.click("#token-save")
    expect(editor).to_be_hidden()
    brigand = next(t for t in server_request(live_server, seat.auth("gm"), "token.list")["tokens"] if t["id"] == "brigand")
    assert brigand["system"]["health"]["penalties"] == [0, -1, -1, -2, -2, -3, "I"]
    assert errors == []
