"""Tokens, questions and cards in the browser: the GM edits, duplicates, heals, resets and
deletes tokens and sets who owns them; a player edits only her own; a question's typed
parameters are fields; GODSGLOOM's dice are told apart without emoji; a token at the
scene's edge is drawn whole; a page the server no longer lets in says so.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.server.kit import seat_table
from tests.web.pages import server_request, settle
from tests.web.test_table import EXALTED_TOKENS
from vtt_bridge.server.describe import describe_rulesets
from vtt_bridge.server import issue_key

pytestmark = pytest.mark.slow

GODSGLOOM_TOKENS = [
    {
        "id": "hearthguard",
        "name": "Hearthguard",
        "ruleset": "godsgloom",
        "ownership": {"alice": 3},
        "system": {"statline": {"attack": 4, "defence": 2}, "guard": {"attack": 1, "defence": 3}, "health": {"current": 4, "max": 4}},
    },
    {
        "id": "raiders",
        "name": "Ashen raiders",
        "ruleset": "godsgloom",
        "ownership": {"bob": 3},
        "system": {"statline": {"attack": 3, "defence": 3}, "guard": {"attack": 2, "defence": 2}, "health": {"current": 3, "max": 3}},
    },
]

# Two Warmachine models, one on the scene's very edge (x = 0, y = 0).
EDGE_TOKENS = [
    {
        "id": "edge",
        "name": "Model at the very edge of the table",
        "ruleset": "warmachine_mk3",
        "ownership": {"alice": 3},
        "system": {"kind": "warrior", "DEF": 13, "ARM": 13, "base": 50, "boxes": 5, "position": {"x": 0, "y": 0}},
    },
    {
        "id": "far",
        "name": "Far",
        "ruleset": "warmachine_mk3",
        "system": {"kind": "warrior", "DEF": 12, "ARM": 14, "base": 30, "boxes": 5, "position": {"x": 9, "y": 6}},
    },
]

@pytest.fixture
def seated(live_server, browser, expect):
    """A table with the given tokens, and pages onto it (desk-sized unless told)."""
    contexts: list[Any] = []
    errors: list[str] = []

    def make(tokens: list[dict], users: tuple[str, ...] = ("alice", "bob")) -> Any:
        return live_server.run(seat_table(live_server.server, name="sheets", users=users, tokens=tokens, settings={"decision_timeout": 10}))

    def open_page(seat: Any, user: str, viewport: dict | None = None) -> Any:
        context = browser.new_context(viewport=viewport or {"width": 1440, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{user}: {error}"))
        page.goto(f"{live_server.url}/#table={seat.id}&key={seat.keys[user]}")
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator("#status")).to_have_text("online")
        return page

    yield make, open_page, errors
    for context in contexts:
        context.close()


def ask(live_server, seat, event: str, data: Any = None, user: str = "gm") -> dict:
    return server_request(live_server, seat.auth(user), event, data)


def tokens_of(live_server, seat) -> dict[str, dict]:
    return {t["id"]: t for t in ask(live_server, seat, "token.list")["tokens"]}


def test_gm_edits_duplicates_heals_resets_and_deletes_player_edits_her_own(expect, live_server, seated, artifacts):
    make, open_page, errors = seated
    seat = make(GODSGLOOM_TOKENS)
    gm = open_page(seat, "gm")
    alice = open_page(seat, "alice")

    # Hurt the raiders (as an attack would), then heal one step and reset, from the GM's inspector.
    ask(live_server, seat, "token.update", {"id": "raiders", "system": {"health": {"current": 1}}})
    expect(gm.locator('#scene [data-token="raiders"] [data-track="health-points"]')).to_contain_text("1/3")
    gm.click('#scene [data-token="raiders"] .disc')
    inspector = gm.locator("#inspector")
    expect(inspector).to_contain_text("Ashen raiders")
    inspector.locator('[data-action="heal"]').click()
    expect(gm.locator('#scene [data-token="raiders"] [data-track="health-points"]')).to_contain_text("2/3")
    inspector.locator('[data-action="reset"]').click()
    expect(gm.locator('#scene [data-token="raiders"] [data-track="health-points"]')).to_contain_text("3/3")
    assert tokens_of(live_server, seat)["raiders"]["system"]["health"] == {"current": 3, "max": 3}
    # Alice sees the raiders whole again too (broadcast).
    expect(alice.locator('#scene [data-token="raiders"] [data-track="health-points"]')).to_contain_text("3/3")

    # Edit: the form starts from the token; ownership per user; errors at the field.
    inspector.locator('[data-action="edit"]').click()
    editor = gm.locator("#token-editor")
    expect(gm.locator('#token-editor [data-path="statline.attack"]')).to_have_value("3")
    gm.fill('#token-editor [data-path="statline.attack"]', "41")
    gm.click("#token-save")
    expect(gm.locator('#token-editor .field[data-for="statline.attack"] .field-error')).to_have_text("Must be at most 40.")
    gm.fill('#token-editor [data-path="statline.attack"]', "5")
    gm.select_option('#token-editor select[data-owner="alice"]', "2")
    gm.select_option('#token-editor select[data-owner="bob"]', "0")
    gm.fill('#token-editor [data-path="rerolls.pool"]', "2")
    gm.click('#token-editor [data-add="traits"]')
    gm.fill('#token-editor [data-path="traits.0"]', "Shieldwall")
    gm.click("#token-save")
    expect(editor).to_be_hidden()
    raiders = tokens_of(live_server, seat)["raiders"]
    assert raiders["system"]["statline"]["attack"] == 5
    assert raiders["system"]["rerolls"]["pool"] == 2 and raiders["system"]["traits"] == ["Shieldwall"]
    assert raiders["ownership"] == {"alice": 2}

    # Duplicate: a new token with the same sheet, its own id.
    gm.click('#scene [data-token="raiders"] .disc') if not inspector.is_visible() else None
    inspector.locator('[data-action="duplicate"]').click()
    expect(gm.locator("#token-name")).to_have_value("Ashen raiders (copy)")
    gm.fill("#token-id", "raiders2")
    gm.click("#token-save")
    expect(gm.locator('#scene [data-token="raiders2"]')).to_be_visible()
    copy = tokens_of(live_server, seat)["raiders2"]
    assert copy["system"] == raiders["system"] and copy["name"] == "Ashen raiders (copy)"

    # Delete asks first.
    inspector.locator('[data-action="delete"]').click()
    expect(gm.locator("#confirm-text")).to_contain_text("Delete Ashen raiders (copy)?")
    gm.click("#confirm-ok")
    expect(gm.locator('#scene [data-token="raiders2"]')).to_have_count(0)
    expect(alice.locator('#scene [data-token="raiders2"]')).to_have_count(0)
    assert "raiders2" not in tokens_of(live_server, seat)

    # Alice edits her own token (no ownership there), not the raiders (she only observes them).
    alice.click('#scene [data-token="raiders"] .disc')
    expect(alice.locator('#inspector [data-action="edit"]')).to_have_count(0)
    expect(alice.locator('#inspector [data-action="delete"]')).to_have_count(0)
    alice.click('#scene [data-token="hearthguard"] .disc')
    alice.locator('#inspector [data-action="edit"]').click()
    expect(alice.locator("#token-editor .ownership")).to_have_count(0)
    alice.fill("#token-name", "Hearthguard veterans")
    alice.fill('#token-editor [data-path="boost"]', "2")
    alice.click("#token-save")
    expect(alice.locator("#token-editor")).to_be_hidden()
    mine = tokens_of(live_server, seat)["hearthguard"]
    assert mine["name"] == "Hearthguard veterans" and mine["system"]["boost"] == 2 and mine["ownership"] == {"alice": 3}
    expect(gm.locator('#scene [data-token="hearthguard"] .label')).to_have_text("Hearthguard veterans")
    gm.screenshot(path=str(artifacts / "sheets-gm.png"), full_page=True)
    assert errors == []


def test_godsgloom_dice_are_red_and_blue_by_colour_and_name(expect, live_server, seated, artifacts):
    make, open_page, errors = seated
    seat = make(GODSGLOOM_TOKENS)
    alice = open_page(seat, "alice", {"width": 390, "height": 844})
    done = ask(
        live_server,
        seat,
        "attack",
        {"ruleset": "godsgloom", "attacker": "hearthguard", "targets": ["raiders"], "seed": 11, "answers": {}},
    )
    assert done["ok"], done
    card = alice.locator(f'#chat .card[data-attack="{done["attack"]["id"]}"]')
    expect(card).to_have_attribute("data-status", "resolved")
    card.locator("details.fold > summary").click()
    rolls = card.locator(".roll")
    expect(rolls.first).to_be_visible()
    colours = rolls.evaluate_all("rs => rs.map(r => r.dataset.colour || '')")
    assert "red" in colours and "blue" in colours, colours
    red = card.locator(".roll[data-colour='red'] .die").first
    blue = card.locator(".roll[data-colour='blue'] .die").first
    assert red.evaluate("d => getComputedStyle(d).borderColor") != blue.evaluate("d => getComputedStyle(d).borderColor")
    expect(card.locator(".roll[data-colour='red'] .flavor").first).to_contain_text("red")
    expect(card.locator(".roll[data-colour='blue'] .flavor").first).to_contain_text("blue")
    text = card.inner_text()
    for emoji in ("🟥", "🟦", "⚔", "🛡", "🩸"):
        assert emoji not in text, emoji
    assert "null" not in text
    alice.screenshot(path=str(artifacts / "godsgloom-card-phone.png"), full_page=True)
    assert errors == []


def test_a_token_at_the_scene_edge_is_drawn_whole(expect, live_server, seated, artifacts):
    make, open_page, errors = seated
    seat = make(EDGE_TOKENS)
    for viewport in ({"width": 1440, "height": 900}, {"width": 390, "height": 844}):
        page = open_page(seat, "alice", viewport)
        page.select_option("#scene-ruleset", "warmachine_mk3")
        token = page.locator('#scene [data-token="edge"]')
        expect(token).to_be_visible()
        page.locator("#scene-wrap").evaluate("w => { w.scrollLeft = 0; w.scrollTop = 0; }")
        scene = page.locator("#scene").bounding_box()
        for part in (".disc", ".label", ".tracks"):
            box = token.locator(part).bounding_box()
            assert box["x"] >= scene["x"] and box["y"] >= scene["y"], (viewport, part, box, scene)
            assert box["x"] + box["width"] <= scene["x"] + scene["width"], (viewport, part, box, scene)
        page.screenshot(path=str(artifacts / f"scene-edge-{viewport['width']}.png"))
    # Her model's sheet: fields the token leaves unset (FOCUS, grid, marked) read empty, never "null".
    page.click('#scene [data-token="edge"] .disc')
    page.click('#inspector [data-action="edit"]')
    editor = page.locator("#token-editor")
    expect(editor.locator('[data-path="kind"]')).to_have_value("warrior")
    shown = editor.locator("input, textarea, select").evaluate_all(
        "els => els.flatMap(e => [e.value, e.placeholder || ''])"
    )
    assert "null" not in shown, shown
    assert "null" not in editor.inner_text()
    assert errors == []


def test_a_questions_typed_parameters_are_fields(expect, live_server, seated, artifacts):
    make, open_page, errors = seated
    # Brute (the GM's NPC) has motes: the Excellencies pack offers DV bought with them on
    # the defense question, as typed parameters of Dodge and Parry.
    tokens = [{**t, "system": {**t["system"], "motes": 10}} if t["id"] == "brute" else t for t in EXALTED_TOKENS]
    seat = make(tokens)
    gm = open_page(seat, "gm", {"width": 390, "height": 844})
    alice = open_page(seat, "alice")
    alice.select_option("#attack-ruleset", "exalted2e")
    alice.click('#attack-targets [data-token="brute"]')
    alice.click("#attack-button")
    dialog = gm.locator("dialog#decision")
    expect(dialog).to_be_visible()
    points = gm.locator('dialog#decision [data-option-row="dodge"] [data-path="second_excellency"]')
    expect(points).to_be_visible()
    expect(gm.locator("#decision-countdown")).to_have_text(re.compile(r"^\d+ s, then: \S"))
    gm.screenshot(path=str(artifacts / "decision-phone.png"))
    # Typed (JSON Schema): a bounded whole number with − and +.
    assert points.get_attribute("type") == "number"
    assert (points.get_attribute("min"), points.get_attribute("max")) == ("0", "10")
    gm.click('dialog#decision [data-option-row="dodge"] [data-for="second_excellency"] .step-up')
    expect(points).to_have_value("1")
    gm.click('dialog#decision [data-option="dodge"]')
    card = alice.locator("#chat .card").first
    # Whatever else the rules ask afterwards (a stunt, a reroll) is answered with its default.
    settle([gm, alice], card)
    record = ask(live_server, seat, "attack.get", {"id": card.get_attribute("data-attack")})["attack"]
    defense = next(d for d in record["decisions"] if d["key"] == "defense")
    assert defense["answer"]["option"] == "dodge" and defense["answer"]["params"]["second_excellency"] == 1, defense
    assert record["outcome"]["motes"] == {"brute": 2}, record["outcome"]


def test_a_page_the_server_no_longer_lets_in_says_so(expect, restartable, browser):
    live = restartable()
    seat = live.run(seat_table(live.server, name="keys", users=("alice",), tokens=[]))
    port = live.server.port
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{live.url}/#table={seat.id}&key={seat.keys['alice']}")
        expect(page.locator("#app")).to_be_visible()
        live.stop()
        expect(page.locator("#banner")).to_contain_text("reconnecting")
        live = restartable(port)
        # The GM gave alice a new key meanwhile: the old one no longer opens the table.
        live.run(issue_key(live.server.store, seat.id, "alice"))
        expect(page.locator("#join-error")).to_contain_text("Could not join", timeout=20_000)
        expect(page.locator("#join")).to_be_visible()
        expect(page.locator("#banner")).to_contain_text("no longer lets this page in")
        # With the new key the page joins again.
        key = live.run(issue_key(live.server.store, seat.id, "alice"))
        page.fill("#join-key", key)
        page.click("#join-button")
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator("#banner")).to_be_hidden()
    finally:
        context.close()


def test_rulesets_list_still_describes_every_ruleset(expect, live_server):
    # The forms above are generated from these schemas; a ruleset without one would show nothing.
    for ruleset in describe_rulesets(live_server.server.host)["rulesets"]:
        assert ruleset["token_schema"]["type"] == "object" and ruleset["token_schema"]["properties"], ruleset["id"]
        assert re.match(r"^[a-z0-9_]+$", ruleset["id"])


def test_a_player_declares_a_charm_with_its_typed_parameters(expect, restartable, browser, artifacts):
    live = restartable()
    # Hero with motes to spend (1 mote a die).
    tokens = [{**t, "system": {**t["system"], "motes": 10}} if t["id"] == "hero" else t for t in EXALTED_TOKENS]
    seat = live.run(seat_table(live.server, name="charms", users=("alice",), tokens=tokens, settings={"decision_timeout": 10}))
    exalted = next(r for r in describe_rulesets(live.server.host)["rulesets"] if r["id"] == "exalted2e")
    # The Excellencies pack's First Excellency: dice bought with motes, 0–20 (the pack's bound).
    charm = next(d for d in exalted["declarables"] if d["id"] == "first-excellency")
    name, param = "dice", charm["params"]["properties"]["dice"]
    assert (param["type"], param["minimum"], param["maximum"]) == ("integer", 0, 20)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    gm_context = browser.new_context()
    try:
        alice = context.new_page()
        alice.goto(f"{live.url}/#table={seat.id}&key={seat.keys['alice']}")
        gm = gm_context.new_page()
        gm.goto(f"{live.url}/#table={seat.id}&key={seat.keys['gm']}")
        expect(alice.locator("#app")).to_be_visible()
        expect(gm.locator("#app")).to_be_visible()
        alice.select_option("#attack-ruleset", "exalted2e")
        alice.click('#attack-targets [data-token="brute"]')
        box = alice.locator(f'#declaration .declarable[data-declarable="{charm["id"]}"]')
        expect(box).to_contain_text(charm["label"])
        field = box.locator(f'input[data-path="{name}"]')
        expect(field).to_be_hidden()  # parameters show once the Charm is picked
        alice.check(f'#declaration [data-charm="{charm["id"]}"]')
        expect(field).to_be_visible()
        assert field.get_attribute("type") == "number"
        assert field.get_attribute("max") == str(param.get("maximum"))
        # Out of range: said at the field, nothing sent.
        field.fill(str(param["maximum"] + 5))
        alice.click("#attack-button")
        expect(box.locator(".field-error")).to_contain_text(f"at most {param['maximum']}")
        expect(alice.locator("#attack-error")).to_contain_text(charm["label"])
        expect(alice.locator("#chat .card")).to_have_count(0)
        # On a phone, − and + around the number: from blank, + is one above the default.
        field.fill("")
        box.locator(".step-up").click()
        expect(field).to_have_value(str(param["default"] + 1))
        box.locator(".step-up").click()
        box.locator(".step-down").click()
        expect(field).to_have_value(str(param["default"] + 1))
        want = int(field.input_value())
        alice.screenshot(path=str(artifacts / "charm-form-phone.png"), full_page=True)
        alice.click("#attack-button")
        dialog = gm.locator("dialog#decision")
        card = alice.locator("#chat .card").first
        expect(card).to_be_visible()
        # Answer whatever is asked with the defaults (the GM's NPC defends).
        settle([gm, alice], card)
        record = server_request(live, seat.auth("gm"), "attack.get", {"id": card.get_attribute("data-attack")})["attack"]
        assert record["declaration"]["charms"] == [{"id": charm["id"], name: want}], record["declaration"]
        assert record["outcome"]["motes"] == {"hero": want}, record["outcome"]
        assert dialog.count() == 1
    finally:
        context.close()
        gm_context.close()


def test_pack_data_the_server_refuses_is_named_and_nothing_is_created(restartable, browser, expect):
    """A pack's flags in the token form; a refusal names the pack and creates nothing.

    The server here is told about a pack that no installed plugin is (its flags schema is
    added to what ``rulesets.list`` says), so whatever the server's version, the write is
    refused: for want of a ``flags`` field, or because no plugin of that name declares flags.
    """
    live = restartable()
    seat = live.run(seat_table(live.server, name="flags", users=("alice",), tokens=[]))
    godsgloom = next(r for r in live.server.bridge.rulesets()["rulesets"] if r["id"] == "godsgloom")
    godsgloom.setdefault("flags", {})["not_installed_pack"] = {
        "type": "object",
        "properties": {"momentum": {"type": "integer", "minimum": 0, "maximum": 5, "default": 0, "title": "Momentum"}},
        "required": [],
        "additionalProperties": False,
    }
    context = browser.new_context()
    try:
        gm = context.new_page()
        gm.goto(f"{live.url}/#table={seat.id}&key={seat.keys['gm']}")
        expect(gm.locator("#app")).to_be_visible()
        gm.click("#new-token")
        gm.select_option("#token-ruleset", "godsgloom")
        gm.fill("#token-name", "Raiders")
        gm.fill('#token-editor [data-path="health.current"]', "3")
        gm.fill('#token-editor [data-path="health.max"]', "3")
        pack = gm.locator('#token-editor .pack[data-plugin="not_installed_pack"]')
        expect(pack.locator('[data-path="momentum"]')).to_be_hidden()
        gm.check('#token-editor [data-flags-on="not_installed_pack"]')
        gm.fill('#token-editor .pack[data-plugin="not_installed_pack"] [data-path="momentum"]', "2")
        gm.click("#token-save")
        expect(gm.locator("#token-editor")).to_be_visible()
        # Named at the pack (flags.<plugin>) or, where the server knows no flags at all, on top
        # (once the refusal has come back: the editor was open before the save too).
        gm.wait_for_function(
            "(document.querySelector('#token-editor .pack[data-plugin=\"not_installed_pack\"] .form-error')?.innerText || '').trim()"
            " || (document.getElementById('token-form-error')?.innerText || '').includes('flags')"
        )
        at_pack = pack.locator(".form-error").inner_text().strip()
        on_top = gm.locator("#token-form-error").inner_text()
        assert at_pack or "flags" in on_top, (at_pack, on_top)
        assert "null" not in gm.locator("#token-editor").inner_text()
        assert server_request(live, seat.auth("gm"), "token.list")["tokens"] == []
    finally:
        context.close()


def test_a_rerolled_warmachine_attack_shows_the_reroll_under_its_step(expect, live_server, seated, artifacts):
    """Seed 001, step 5e: "Resolve effects that cause the attack roll to be rerolled. Return to
    step b if needed." The missed roll [1 2] + 7 = 10 stays on the card as step 5b judged it;
    the reroll [5 4] + 7 = 16 is a roll under the 5b the sequence returned to, after the 5e
    step that chose it — on a page watching live and on one opened afterwards alike."""
    import json
    from pathlib import Path

    example = json.loads((Path(__file__).resolve().parents[2] / "plugins/vtt_warmachine_mk3/examples/reroll_granted.json").read_text())
    make, open_page, errors = seated
    seat = make([{**token, "ruleset": example["ruleset"]} for token in example["tokens"]])
    alice = open_page(seat, "alice")
    done = ask(
        live_server,
        seat,
        "attack",
        {k: example[k] for k in ("ruleset", "attacker", "targets", "declaration", "dice", "answers")},
    )
    assert done["ok"], done
    bob = open_page(seat, "bob")  # drawn from table.sync, not from the live steps
    for page in (alice, bob):
        card = page.locator(f'#chat .card[data-attack="{done["attack"]["id"]}"]')
        expect(card).to_have_attribute("data-status", "resolved")
        card.locator("details.fold > summary").click()
        steps = card.locator("li.step")
        expect(steps.first).to_be_visible()
        order = steps.evaluate_all("ls => ls.map(l => l.dataset.step)")
        first, again = [i for i, s in enumerate(order) if s == "attack_roll_dice"]
        assert "attack_roll_reroll" in order[first + 1 : again], order
        rolls = [steps.nth(i).locator(".roll") for i in (first, again)]
        for roll, flavor, faces, total in ((rolls[0], "attack roll", ["1", "2"], "= 10"), (rolls[1], "attack roll (reroll)", ["5", "4"], "= 16")):
            expect(roll).to_have_count(1)
            expect(roll.locator(".flavor")).to_have_text(flavor)
            expect(roll.locator("code")).to_have_text("2d6 + 7")
            assert roll.locator(".die").evaluate_all("ds => ds.map(d => d.dataset.face)") == faces
            assert roll.locator(".die.rerolled, .die.discarded").count() == 0
            expect(roll.locator(".total")).to_have_text(total)
        assert "superseded" not in (rolls[0].get_attribute("class") or "")
        reroll = steps.nth(order.index("attack_roll_reroll", first))
        expect(reroll.locator("[data-decision]")).to_contain_text("Reroll granted by Battlegroup captain")
    alice.screenshot(path=str(artifacts / "warmachine-reroll-card.png"), full_page=True)
    assert errors == []


def test_the_declaration_offers_only_the_charms_the_attacker_knows(expect, live_server, seated, artifacts):
    """The Excellencies pack: "``flags.excellencies.charms`` lists the Excellencies a character
    knows; without it a token knows them all" — and the server refuses the others. The form
    offers Hero (who knows only the Second Excellency) that one, Scout (no list) both, and
    lists the Excellencies chosen at a decision without a box."""
    make, open_page, errors = seated
    hero = next(t for t in EXALTED_TOKENS if t["id"] == "hero")
    tokens = [
        {**hero, "flags": {"excellencies": {"charms": ["second-excellency", "third-excellency"]}}},
        {**hero, "id": "scout", "name": "Scout"},
        *(t for t in EXALTED_TOKENS if t["id"] != "hero"),
    ]
    seat = make(tokens, users=("alice",))
    alice = open_page(seat, "alice")
    alice.select_option("#attack-ruleset", "exalted2e")
    alice.select_option("#attack-attacker", "hero")
    boxes = alice.locator("#declaration [data-charm]")
    expect(boxes).to_have_count(1)
    assert boxes.evaluate_all("bs => bs.map(b => b.dataset.charm)") == ["second-excellency"]
    listed = alice.locator("#declaration .declarable-options [data-option]")
    assert listed.evaluate_all("ls => ls.map(l => l.dataset.option)") == ["third-excellency"]
    alice.select_option("#attack-attacker", "scout")
    expect(boxes).to_have_count(2)
    assert boxes.evaluate_all("bs => bs.map(b => b.dataset.charm)") == ["first-excellency", "second-excellency"]
    assert listed.evaluate_all("ls => ls.map(l => l.dataset.option)") == ["third-excellency", "solar-counterattack"]
    # The GM teaches Scout nothing but the First Excellency: the open form follows.
    assert ask(live_server, seat, "token.update", {"id": "scout", "flags": {"excellencies": {"charms": ["first-excellency"]}}})["ok"]
    expect(boxes).to_have_count(1)
    assert boxes.evaluate_all("bs => bs.map(b => b.dataset.charm)") == ["first-excellency"]
    expect(listed).to_have_count(0)
    alice.screenshot(path=str(artifacts / "declaration-known-charms.png"), full_page=True)
    assert errors == []


def test_a_godsgloom_attack_form_reads_plainly_and_folds_the_modifiers(expect, live_server, seated):
    # Issue 28: every ruleset's form by plain names with one-line help, not raw field names.
    make, open_page, errors = seated
    seat = make(GODSGLOOM_TOKENS)
    alice = open_page(seat, "alice")
    alice.select_option("#attack-ruleset", "godsgloom")
    alice.click('#attack-targets [data-token="raiders"]')
    declaration = alice.locator("#declaration")
    expect(declaration.locator('.field[for="decl-attack"]')).to_contain_text("Attack")
    expect(declaration.locator('.field[for="decl-attack"] .help')).to_contain_text("the defender rolls only blue dice")
    more = declaration.locator("details.more-options")
    expect(more.locator("> summary")).to_have_text(re.compile(r"^More options \(3\)"))
    more.locator("> summary").click()
    expect(more).to_contain_text("Defender's modifiers")
    expect(more).to_contain_text("Auto-successes granted")
    shown = declaration.evaluate("el => el.innerText.toLowerCase()")
    assert not [raw for raw in ("defender_modifiers", "defender modifiers", "modifiers.attack") if raw in shown], shown
    assert errors == []
