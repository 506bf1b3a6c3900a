"""The odds before the roll in the browser: a Warmachine AOE from a phone.

A blast that can deviate onto other models has two chances to hit (the target, any
model) and a line per model it can catch (docs/protocol.md, ``attack.odds``): the
player on a phone in portrait (390×844) sees them all, without scrolling sideways.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.server.kit import seat_table
from tests.web.pages import server_request

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "plugins/vtt_warmachine_mk3/examples/aoe_deviation_blast.json").read_text())


def test_a_phone_shows_the_target_any_model_and_each_model_of_an_aoe(expect, live_server, browser, artifacts):
    """aoe_deviation_blast.json, aiming: the Defender's Heavy Barrel (AOE 3) at Trencher 1 with
    two Trenchers close by. Exact odds: hit the target 22/27, any model 137/162; Trencher 2
    is hit 25/648 and damaged 175/7776, Trencher 3 hit 5/162 and damaged 35/1944."""
    tokens = [{**t, "ruleset": EXAMPLE["ruleset"]} for t in EXAMPLE["tokens"]]
    seat = live_server.run(seat_table(live_server.server, name="odds", users=("alice", "bob"), tokens=tokens))
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{live_server.url}/#table={seat.id}&key={seat.keys['alice']}")
        expect(page.locator("#status")).to_have_text("online")
        page.select_option("#attack-ruleset", "warmachine_mk3")
        page.select_option("#attack-attacker", "defender")
        page.click('#attack-targets [data-token="trencher1"]')
        expect(page.locator('#declaration select[data-field="weapon"]')).to_have_value("Heavy Barrel")
        page.locator("#declaration details.group > summary", has_text="modifiers").click()
        page.check('#declaration input[data-field="modifiers.aiming"]')

        odds = page.locator("#odds-body")
        expect(odds.locator('.hit-line[data-chance="target"]')).to_have_text("Hit the target 81% · mean 0.78 damage points to Trencher 1")
        expect(odds.locator('.hit-line[data-chance="any"]')).to_have_text("Hit any model 85%")
        expect(odds).to_contain_text("damage points dealt to Trencher 1")
        rows = odds.locator(".odds-models tbody tr")
        expect(rows).to_have_count(3)
        seen = rows.evaluate_all("rows => rows.map(r => [r.dataset.token, ...[...r.cells].map(c => c.textContent)])")
        assert seen == [
            ["trencher1", "Trencher 1 (target)", "81%", "0.78", "78%"],
            ["trencher2", "Trencher 2", "3.9%", "0.02", "2.3%"],
            ["trencher3", "Trencher 3", "3.1%", "0.02", "1.8%"],
        ]
        # The same figures the server answers for the same request.
        answer = server_request(
            live_server,
            seat.auth("alice"),
            "attack.odds",
            {"ruleset": "warmachine_mk3", "attacker": "defender", "targets": ["trencher1"], "declaration": EXAMPLE["declaration"]},
        )["odds"]
        assert (answer["target_hit"]["exact"], answer["hit"]["exact"]) == ("22/27", "137/162")
        assert [m["token"] for m in answer["models"]] == ["trencher1", "trencher2", "trencher3"]

        # Readable on the phone: the whole table inside the screen, nothing to scroll sideways.
        table = odds.locator(".odds-models")
        table.scroll_into_view_if_needed()
        box = table.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.locator("#odds").screenshot(path=str(artifacts / "odds-aoe-phone.png"))
        assert errors == []
    finally:
        context.close()


def test_a_one_model_attack_shows_one_chance_to_hit_and_no_model_lines(expect, live_server, browser):
    """The same Defender at Trencher 1 with its fist: one model only, so the odds look as before."""
    tokens = [{**t, "ruleset": EXAMPLE["ruleset"]} for t in EXAMPLE["tokens"][:2]]
    tokens[0]["system"] = {**tokens[0]["system"], "weapons": [{"name": "Fist", "kind": "melee", "POW": 14}]}
    tokens[1]["system"] = {**tokens[1]["system"], "position": {"x": 10, "y": 11.5}}
    seat = live_server.run(seat_table(live_server.server, name="odds one", users=("alice", "bob"), tokens=tokens))
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page: Any = context.new_page()
        page.goto(f"{live_server.url}/#table={seat.id}&key={seat.keys['alice']}")
        expect(page.locator("#status")).to_have_text("online")
        page.select_option("#attack-ruleset", "warmachine_mk3")
        page.select_option("#attack-attacker", "defender")
        page.click('#attack-targets [data-token="trencher1"]')
        odds = page.locator("#odds-body")
        expect(odds.locator(".hit-line")).to_have_count(1)
        expect(odds.locator('.hit-line[data-chance="hit"] .hit-chance')).to_have_text(re.compile(r"^Hit \d+(\.\d)?%$"))
        expect(odds.locator(".odds-models")).to_have_count(0)
        expect(odds).not_to_contain_text("any model")
    finally:
        context.close()
