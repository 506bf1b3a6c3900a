"""The web table end to end: real server, real socket.io, Debian's Chromium headless.

A GM browser and a player browser sit at the same table. The player attacks, the
GM (who runs the defending NPC) answers the prompt in their browser, and both
browsers must show the same card — the same steps and the same dice as the
server's record — and the same updated track on the scene. A screenshot of each
browser goes to ``test-artifacts/``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.server.kit import Client, seat_table
from vtt_bridge.server.describe import describe_rulesets

pytestmark = pytest.mark.slow

expect: Any = None  # playwright's expect, imported with the browser fixture


@pytest.fixture(autouse=True)
def _expect(browser):
    global expect
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=10_000)
    expect = playwright_expect


# An Exalted 2e attack that cannot fail to mark the target's track: 20+ attack dice and
# 30+ damage dice against an unarmoured mortal who accepts the blow (the chance that it
# leaves the track clean is below 1e-6). Nobody is asked anything but the defense.
EXALTED_TOKENS = [
    {
        "id": "hero",
        "name": "Hero",
        "ruleset": "exalted2e",
        "ownership": {"alice": 3},
        "system": {
            "attributes": {"strength": 6, "dexterity": 10, "stamina": 4},
            "abilities": {"melee": 10, "dodge": 3},
            "weapons": [{"name": "grand goremaul", "ability": "melee", "accuracy": 3, "damage": 20, "damage_type": "L", "defense": 0}],
        },
    },
    {
        "id": "brute",
        "name": "Brute",
        "ruleset": "exalted2e",
        "ownership": {},
        "system": {
            "attributes": {"strength": 3, "dexterity": 2, "stamina": 2},
            "abilities": {"melee": 2, "dodge": 1},
            "weapons": [{"name": "club", "ability": "melee", "accuracy": 1, "damage": 3, "damage_type": "B", "defense": 0}],
        },
    },
]

# Two Warmachine models in base contact: positions matter, and the scene lets them move.
WARMACHINE_TOKENS = [
    {
        "id": "scout",
        "name": "Scout",
        "ruleset": "warmachine_mk3",
        "ownership": {"alice": 3},
        "system": {
            "kind": "warrior", "MAT": 6, "RAT": 5, "DEF": 13, "ARM": 13, "base": 30, "boxes": 5,
            "position": {"x": 4, "y": 4}, "weapons": [{"name": "Sword", "kind": "melee", "POW": 4}],
        },
    },
    {
        "id": "raider",
        "name": "Raider",
        "ruleset": "warmachine_mk3",
        "ownership": {},
        "system": {
            "kind": "warrior", "MAT": 7, "RAT": 4, "DEF": 12, "ARM": 14, "base": 40, "boxes": 8,
            "position": {"x": 4.5, "y": 5}, "weapons": [{"name": "Axe", "kind": "melee", "POW": 5}],
        },
    },
]  # fmt: skip


@dataclass
class Browser:
    """One person's browser at the table."""

    user: str
    page: Any
    errors: list[str] = field(default_factory=list)

    def card(self, attack_id: str) -> Any:
        return self.page.locator(f'#chat .card[data-attack="{attack_id}"]')

    def card_content(self, attack_id: str) -> dict[str, Any]:
        """What the card shows: each step's text, titles, and each roll's faces."""
        return self.card(attack_id).evaluate(
            """card => {
                const steps = [...card.querySelectorAll(':scope > details.fold > ol.steps > li.step')];
                return {
                    text: steps.map(li => li.innerText),
                    titles: steps.map(li => li.querySelector('.step-title').textContent),
                    rolls: steps.map(li => [...li.querySelectorAll(':scope > .roll')].map(
                        roll => [...roll.querySelectorAll('.die')].map(d => Number(d.dataset.face)))),
                };
            }"""
        )

    def marked(self, token: str, track: str) -> Any:
        return self.page.locator(f'#scene [data-token="{token}"] [data-track="{track}"] .box.marked')


def faces(roll: dict[str, Any]) -> list[int]:
    """Every die of a recorded roll, in order (a pool's dice are those of its rolls)."""
    out = []
    for term in roll["terms"]:
        if term["class"] == "PoolTerm":
            out += [f for inner in term["rolls"] for f in faces(inner)]
        else:
            out += [r["result"] for r in term.get("results", ())]
    return out


def shown(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps a card shows: those with a roll, a change, a note, a question, a nested attack or an end."""
    keys = ("rolls", "changes", "notes", "decisions", "children", "ended")
    return [step for step in steps if any(step.get(key) for key in keys)]


@pytest.fixture
def table(live_server):
    """A fresh table (decisions wait 10 s) and a way to open browsers onto it."""
    opened: list[Any] = []

    def make(tokens: list[dict]) -> Any:
        return live_server.run(
            seat_table(live_server.server, name="web table", users=("alice",), tokens=tokens, settings={"decision_timeout": 10})
        )

    def open_browser(browser: Any, seat: Any, user: str, *, via_form: bool = False) -> Browser:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        opened.append(context)
        page = context.new_page()
        person = Browser(user, page)
        page.on("pageerror", lambda error: person.errors.append(str(error)))
        if via_form:
            page.goto(f"{live_server.url}/")
            page.fill("#join-table", seat.id)
            page.fill("#join-key", seat.keys[user])
            page.click("#join-button")
        else:
            page.goto(f"{live_server.url}/#table={seat.id}&key={seat.keys[user]}")
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator("#status")).to_have_text("online")
        return person

    yield make, open_browser
    for context in opened:
        context.close()


def server_call(live_server, seat, event: str, data: Any = None) -> dict:
    """Ask the server directly, as the GM, over a real socket.io client."""

    async def ask() -> dict:
        client = await Client(live_server.url).connect(seat.auth("gm"))
        try:
            return await client.ok(event, data)
        finally:
            await client.close()

    return live_server.run(ask())


def test_player_attacks_gm_answers_both_browsers_agree(live_server, browser, table, artifacts):
    make, open_browser = table
    seat = make(EXALTED_TOKENS)
    gm = open_browser(browser, seat, "gm", via_form=True)
    alice = open_browser(browser, seat, "alice")
    prompt = next(
        s["decision"]["prompt"]
        for r in describe_rulesets(live_server.server.host)["rulesets"]
        if r["id"] == "exalted2e"
        for s in r["steps"]
        if s.get("decision", {}).get("name") == "defense"
    )

    # The player picks the ruleset, her token, the target; the declaration form is the ruleset's.
    page = alice.page
    page.select_option("#attack-ruleset", "exalted2e")
    page.select_option("#attack-attacker", "hero")
    page.click('#attack-targets [data-token="brute"]')
    expect(page.locator('#declaration [data-field="stunt"]')).to_have_value("0")
    expect(page.locator('#declaration select[data-field="weapon"] option[value="grand goremaul"]')).to_have_count(1)
    expect(page.locator("#gm-dice")).to_be_hidden()
    # Odds: the server offers attack.odds, so the chart shows the chance to hit.
    expect(page.locator("#odds-body")).to_contain_text(re.compile(r"Hit \d"))
    page.click("#attack-button")

    # The defender is the GM's NPC: the question goes to the GM's browser, with a countdown.
    dialog = gm.page.locator("dialog#decision")
    expect(dialog).to_be_visible()
    expect(gm.page.locator("#decision-prompt")).to_have_text(prompt)
    countdown = gm.page.locator("#decision-countdown")
    expect(countdown).to_have_text(re.compile(r"^\d+ s, then: \S"))
    first = int(countdown.inner_text().split()[0])
    gm.page.wait_for_function(
        "first => parseInt(document.getElementById('decision-countdown').textContent) < first", arg=first, timeout=3000
    )
    expect(alice.page.locator("dialog#decision")).to_be_hidden()
    # While the question waits, both cards already show the steps before it, and no more.
    # (The GM's socket got them before the question, on the same connection: count there.)
    running = gm.page.locator('#chat .card[data-status="running"]')
    expect(running).to_have_count(1)
    steps_before = running.locator("ol.steps > li.step").count()
    assert steps_before >= 1
    expect(alice.page.locator('#chat .card[data-status="running"] ol.steps > li.step')).to_have_count(steps_before)
    # Everyone sees whom the table waits for, and the countdown: here the GM, asked in this page.
    expect(gm.page.locator("#waiting .waiting-row")).to_contain_text(prompt)
    expect(gm.page.locator("#waiting .waiting-row .left")).to_contain_text(re.compile(r"\d+ s left"))
    gm.page.click('dialog#decision [data-option="nothing"]')
    expect(dialog).to_be_hidden()

    # Both browsers show the resolved card; it matches the server's record.
    card = alice.page.locator("#chat .card").first
    expect(card).to_have_attribute("data-status", "resolved")
    attack_id = card.get_attribute("data-attack")
    expect(gm.card(attack_id)).to_have_attribute("data-status", "resolved")
    record = server_call(live_server, seat, "attack.get", {"id": attack_id})["attack"]
    assert record["attacker"] == "hero" and record["targets"] == ["brute"]
    defense = next(d for d in record["decisions"] if d["key"] == "defense")
    assert defense["answer"]["option"] == "nothing" and defense["how"] == "answered"
    asking = next(i for i, step in enumerate(record["steps"]) if "defense" in step.get("decisions", ()))
    assert steps_before == len(shown(record["steps"][:asking]))

    seen = {person.user: person.card_content(attack_id) for person in (alice, gm)}
    assert seen["alice"] == seen["gm"]
    # The card shows every step with something in it, in order, each with the server's dice.
    assert seen["alice"]["titles"] == [step["title"] for step in shown(record["steps"])]
    assert seen["alice"]["rolls"] == [[faces(roll) for roll in step["rolls"]] for step in shown(record["steps"])]
    assert any(seen["alice"]["rolls"]), "the attack rolled no dice?"
    assert "null" not in " ".join(seen["alice"]["text"])
    for person in (alice, gm):
        card = person.card(attack_id)
        # One summary line: who, with what, hit or miss, damage; the steps folded under it.
        expect(card.locator(".summary-line")).to_contain_text(re.compile(r"Hero → Brute \(grand goremaul\) hit · \d+ damage"))
        expect(card.locator("ol.steps")).to_be_hidden()
        card.locator("details.fold > summary").click()
        expect(card.locator('.asked [data-decision="defense"]')).to_contain_text("accept the attack")
        expect(card.locator(".die.success").first).to_be_visible()

    # The target's health track is updated in both browsers, as the server committed it.
    damage = record["tokens"]["brute"]["after"]["system"]["health"]["damage"]
    levels = sum(1 for mark in damage if mark)
    assert levels > 0
    for person in (alice, gm):
        expect(person.marked("brute", "health-levels")).to_have_count(levels)

    alice.page.screenshot(path=str(artifacts / "web-table-player.png"), full_page=True)
    gm.page.screenshot(path=str(artifacts / "web-table-gm.png"), full_page=True)

    # GM tools: the GM undoes the attack; both browsers see the card undone and the track clean.
    expect(alice.card(attack_id).locator("button.undo")).to_have_count(0)
    gm.card(attack_id).locator("button.undo").click()
    # Undo asks first; "Cancel" leaves the attack as it is.
    expect(gm.page.locator("dialog#confirm")).to_be_visible()
    expect(gm.page.locator("#confirm-text")).to_contain_text("Undo Hero → Brute")
    gm.page.click("#confirm-cancel")
    expect(gm.page.locator("dialog#confirm")).to_be_hidden()
    expect(gm.card(attack_id)).to_have_attribute("data-status", "resolved")
    gm.card(attack_id).locator("button.undo").click()
    gm.page.click("#confirm-ok")
    for person in (alice, gm):
        expect(person.card(attack_id)).to_have_attribute("data-status", "undone")
        expect(person.marked("brute", "health-levels")).to_have_count(0)
    brute = server_call(live_server, seat, "token.get", {"id": "brute"})["token"]
    assert not any(brute["system"]["health"]["damage"])
    assert alice.errors == [] and gm.errors == []


def test_gm_scripted_dice_history_and_dragging_tokens(live_server, browser, table, artifacts):
    make, open_browser = table
    seat = make(WARMACHINE_TOKENS)
    gm = open_browser(browser, seat, "gm")
    alice = open_browser(browser, seat, "alice")

    # The GM rolls for the NPC with scripted dice: every die shows what the GM entered.
    page = gm.page
    page.select_option("#attack-ruleset", "warmachine_mk3")
    page.select_option("#attack-attacker", "raider")
    page.click('#attack-targets [data-token="scout"]')
    expect(page.locator('#declaration select[data-field="weapon"]')).to_have_value("Axe")
    page.fill("#attack-dice", "6 6 6 6")
    page.click("#attack-button")
    card = page.locator("#chat .card").first
    expect(card).to_have_attribute("data-status", "resolved")
    attack_id = card.get_attribute("data-attack")
    expect(card.locator("footer")).to_contain_text("scripted dice")
    dice = gm.card_content(attack_id)["rolls"]
    assert [f for step in dice for roll in step for f in roll] == [6, 6, 6, 6]
    expect(alice.card(attack_id)).to_have_attribute("data-status", "resolved")
    assert alice.card_content(attack_id) == gm.card_content(attack_id)
    record = server_call(live_server, seat, "attack.get", {"id": attack_id})["attack"]
    marked = record["tokens"]["scout"]["after"]["system"]["marked"]
    assert marked > 0
    expect(alice.marked("scout", "damage-boxes")).to_have_count(marked)

    # The audit history: everyone sees it; only the GM gets the undo buttons and the dice.
    for person in (alice, gm):
        expect(person.page.locator(f'#history li[data-attack="{attack_id}"]')).to_contain_text("Raider")
    expect(gm.page.locator(f'#history li[data-attack="{attack_id}"] button.undo')).to_have_count(1)
    expect(alice.page.locator("#history button.undo")).to_have_count(0)
    expect(alice.page.locator("#gm-tools")).to_be_hidden()
    expect(gm.page.locator("#gm-tools")).to_be_visible()

    # Dragging: the player cannot move the NPC, and moves her own model; the GM sees it move.
    def drag(person: Browser, token: str, units: float) -> None:
        p = person.page
        zoom = float(p.locator("#scene").evaluate("s => parseFloat(s.style.backgroundSize)"))
        box = p.locator(f'#scene [data-token="{token}"] .disc').bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        p.mouse.move(x, y)
        p.mouse.down()
        p.mouse.move(x + units * zoom / 2, y, steps=4)
        p.mouse.move(x + units * zoom, y, steps=4)
        p.mouse.up()

    gm_left = gm.page.locator('#scene [data-token="scout"]').evaluate("el => parseFloat(el.style.left)")
    expect(alice.page.locator('#scene [data-token="raider"]')).not_to_have_class(re.compile(r"\bmine\b"))
    drag(alice, "raider", 3)
    drag(alice, "scout", 3)
    deadline = time.monotonic() + 10
    while True:
        tokens = {t["id"]: t for t in server_call(live_server, seat, "token.list")["tokens"]}
        if tokens["scout"]["system"]["position"]["x"] != 4 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert tokens["scout"]["system"]["position"] == pytest.approx({"x": 7.0, "y": 4.0}, abs=0.11)
    assert tokens["raider"]["system"]["position"] == {"x": 4.5, "y": 5.0}
    gm_zoom = float(gm.page.locator("#scene").evaluate("s => parseFloat(s.style.backgroundSize)"))
    gm.page.wait_for_function(
        """([left, shift]) => Math.abs(parseFloat(document.querySelector('#scene [data-token="scout"]').style.left) - left - shift) < 5""",
        arg=[gm_left, 3 * gm_zoom],
        timeout=5000,
    )
    alice.page.screenshot(path=str(artifacts / "web-table-warmachine.png"), full_page=True)
    assert alice.errors == [] and gm.errors == []


def test_a_wrong_key_is_refused_with_the_reason(live_server, browser, table):
    make, open_browser = table
    seat = make([])
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/")
        page.fill("#join-table", seat.id)
        page.fill("#join-key", "not-the-key")
        page.click("#join-button")
        expect(page.locator("#join-error")).to_contain_text("Could not join: the key does not open this table")
        expect(page.locator("#app")).to_be_hidden()
    finally:
        context.close()
