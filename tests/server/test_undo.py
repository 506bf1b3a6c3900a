"""``attack.undo``: GM only, a compensating audit entry, refused when tokens moved on."""

from __future__ import annotations

from vtt_bridge.server import BridgeServer
from vtt_bridge.state import replay

from .conftest import config
from .kit import seat_table

HIT = {"ruleset": "duel", "attacker": "a", "targets": ["b", "c"], "dice": [5, 6], "answers": {"defense": "none"}}


async def test_undo_restores_the_tokens_and_appends_a_record(seat):
    gm = await seat.join("gm")
    carol = await seat.join("carol")
    before = await seat.tokens()
    attack = (await gm.ok("attack", HIT))["attack"]
    assert (await seat.tokens())["b"]["system"]["hp"] == 8
    entries = len(await seat.audit())
    undo = (await gm.ok("attack.undo", {"id": attack["id"]}))["undo"]
    now = await seat.tokens()
    for token_id in ("b", "c"):
        assert now[token_id]["system"] == before[token_id]["system"]
        assert now[token_id]["version"] == attack["tokens"][token_id]["after"]["version"] + 1
    assert undo["attack"] == attack["id"] and undo["seq"] > attack["seq"]
    assert set(undo["tokens"]) == {"b", "c"}
    audit = await seat.audit()
    assert len(audit) == entries + 1 and audit[-1].kind == "undo" and audit[-1].ref == attack["id"]
    assert replay(audit) == now
    got = await gm.ok("attack.get", {"id": attack["id"]})
    assert got["attack"] == attack
    assert got["undone"] == {"seq": undo["seq"], "user": "gm", "at": undo["at"]}
    await carol.wait_for("attack.undone")
    await carol.wait_for("token.updated", 4)
    assert carol.named("attack.undone")[0]["undo"] == undo
    assert [t["token"] for t in carol.named("token.updated")[2:]] == [now["b"], now["c"]]
    history = (await gm.ok("attack.history"))["attacks"]
    assert [(h["kind"], h["id"]) for h in history] == [("undo", attack["id"]), ("attack", attack["id"])]


async def test_undo_refuses_when_a_token_changed_since(seat):
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", HIT))["attack"]
    await gm.ok("token.update", {"id": "c", "system": {"hp": 1}})
    before = await seat.state()
    ack = await gm.call("attack.undo", {"id": attack["id"]})
    assert ack["ok"] is False and ack["error"]["code"] == "conflict"
    assert ack["error"]["details"]["tokens"] == ["c"]
    assert await seat.state() == before


async def test_undo_twice_is_a_conflict(seat):
    gm = await seat.join("gm")
    attack = (await gm.ok("attack", HIT))["attack"]
    await gm.ok("attack.undo", {"id": attack["id"]})
    before = await seat.state()
    ack = await gm.call("attack.undo", {"id": attack["id"]})
    assert ack["error"]["code"] == "conflict" and ack["error"]["details"]["undone"]["user"] == "gm"
    assert await seat.state() == before


async def test_a_miss_undoes_to_no_change(seat):
    gm = await seat.join("gm")
    miss = (await gm.ok("attack", {**HIT, "dice": [1, 1]}))["attack"]
    assert miss["ended"] == "miss" and miss["changes"] == {}
    before = await seat.tokens()
    undo = (await gm.ok("attack.undo", {"id": miss["id"]}))["undo"]
    assert undo["tokens"] == {} and await seat.tokens() == before


async def test_history_pages_newest_first(seat):
    gm = await seat.join("gm")
    ids = [(await gm.ok("attack", {**HIT, "targets": ["b"]}))["attack"]["id"] for _ in range(5)]
    page = await gm.ok("attack.history", {"limit": 2})
    assert [h["id"] for h in page["attacks"]] == ids[::-1][:2]
    rest = await gm.ok("attack.history", {"limit": 10, "before": page["next"]})
    assert [h["id"] for h in rest["attacks"]] == ids[::-1][2:]
    assert rest["next"] is None
    assert rest["attacks"][0]["outcome"] == {"hit": True} and rest["attacks"][0]["user"] == "gm"


async def test_a_table_s_audit_keep_on_sqlite_drops_old_attacks_and_their_undo_says_why(seat):
    gm = await seat.join("gm")
    await gm.ok("table.update", {"audit_keep": 2})
    bad = await gm.call("table.update", {"audit_keep": "lots"})
    assert bad["error"]["code"] == "invalid_request" and "audit_keep" in bad["error"]["details"]
    ids = [(await gm.ok("attack", HIT))["attack"]["id"] for _ in range(4)]
    history = (await gm.ok("attack.history", {"limit": 10}))["attacks"]
    assert [a["id"] for a in history] == ids[:1:-1]  # the two newest, newest first
    gone = await gm.call("attack.undo", {"id": ids[0]})
    assert gone["error"]["code"] == "not_found"
    assert "audit_keep" in gone["error"]["message"] and gone["error"]["details"]["audit_trimmed"] > 0
    never = await gm.call("attack.undo", {"id": "no-such-attack"})
    assert "audit_keep" in never["error"]["message"]  # once trimmed, the server cannot tell the two apart
    assert (await gm.ok("attack.undo", {"id": ids[-1]}))["undo"]["attack"] == ids[-1]


async def test_serve_audit_keep_is_the_default_of_tables_without_their_own(tmp_path):
    # `serve --audit-keep 3`: a table with no setting keeps three entries; one that sets its own keeps that.
    async with BridgeServer(config(tmp_path, audit_keep=3)) as server:
        seat = await seat_table(server)
        try:
            gm = await seat.join("gm")
            ids = [(await gm.ok("attack", HIT))["attack"]["id"] for _ in range(5)]
            gone = await gm.call("attack.undo", {"id": ids[0]})
            assert gone["error"]["code"] == "not_found" and "audit_keep" in gone["error"]["message"]
            assert len(await seat.audit()) <= 3 + 3 // 64 + 1
            await gm.ok("table.update", {"audit_keep": 0})  # this table keeps everything from now on
            more = [(await gm.ok("attack", HIT))["attack"]["id"] for _ in range(5)]
            assert [e.ref for e in await seat.audit() if e.kind == "attack"][-5:] == more
            assert (await gm.ok("attack.get", {"id": more[0]}))["attack"]["id"] == more[0]
        finally:
            await seat.close()
