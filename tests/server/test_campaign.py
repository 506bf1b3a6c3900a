"""``table.export``, ``tokens.import`` and ``table.sync`` over a real socket."""

from __future__ import annotations

import asyncio

from vtt_bridge.server import campaign

from .kit import DUEL_TOKENS, answer, ignore

BAD = {"id": "d", "name": "Broken", "ruleset": "duel", "system": {"hp": "lots", "rerolls": 0}}


async def test_export_is_the_gms_and_holds_every_token_and_the_settings(seat):
    gm = await seat.join("gm")
    alice = await seat.join("alice")
    await gm.ok("table.update", {"decision_timeout": 4})
    doc = (await gm.ok("table.export"))["export"]
    assert doc["format"] == "vtt-bridge.tokens" and doc["version"] == 1
    assert doc["table"] == {"id": seat.id, "name": "test table", "settings": {"decision_timeout": 4}}
    assert doc["tokens"] == [t for _, t in sorted((await seat.tokens()).items())]
    refused = await alice.call("table.export")
    assert refused["ok"] is False and refused["error"]["code"] == "forbidden"


async def test_an_import_with_one_bad_token_changes_nothing_and_names_it(seat):
    gm = await seat.join("gm")
    before = await seat.state()
    good = {**DUEL_TOKENS[0], "name": "Renamed"}
    unknown = {"id": "e", "name": "Elsewhere", "ruleset": "nope", "system": {}}
    ack = await gm.call("tokens.import", {"tokens": [good, BAD, unknown, {**BAD, "colour": 1, "id": "f"}]})
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"
    error = ack["error"]
    assert set(error["details"]["tokens"]) == {"1", "2", "3"}
    assert error["details"]["tokens"]["1"] == {"system": {"hp": ["Not a valid integer."]}}
    assert "ruleset" in error["details"]["tokens"]["2"]
    assert error["details"]["tokens"]["3"] == {"colour": ["Unknown field."]}
    assert error["message"].startswith("nothing imported: 3 of 4 tokens are invalid")
    assert "token 'd' (#2): system.hp" in error["message"] and "token 'f' (#4): colour" in error["message"]
    assert await seat.state() == before
    gm.events.clear()
    # Players may not import at all.
    bob = await seat.join("bob")
    refused = await bob.call("tokens.import", {"tokens": [good]})
    assert refused["ok"] is False and refused["error"]["code"] == "forbidden"
    assert await seat.state() == before


async def test_an_import_applies_everything_in_one_entry_and_broadcasts_it(seat):
    gm = await seat.join("gm")
    carol = await seat.join("carol")
    doc = (await gm.ok("table.export"))["export"]
    tokens = {t["id"]: t for t in doc["tokens"]}
    tokens["a"] = {**tokens["a"], "system": {"hp": 3, "rerolls": 1}}
    tokens["n"] = {"id": "n", "name": "Newcomer", "ruleset": "duel", "ownership": {"carol": 3}, "system": {"hp": 6}}
    del tokens["c"]
    audit = len(await seat.audit())
    ack = await gm.ok("tokens.import", {**doc, "tokens": list(tokens.values()), "replace": True})
    assert (ack["created"], ack["updated"], ack["deleted"], ack["unchanged"]) == (["n"], ["a"], ["c"], ["b"])
    stored = await seat.tokens()
    assert sorted(stored) == ["a", "b", "n"] and ack["tokens"] == [stored[k] for k in sorted(stored)]
    assert stored["a"]["version"] == 2 and stored["a"]["system"] == {"hp": 3, "rerolls": 1}
    assert stored["n"]["system"] == {"hp": 6, "rerolls": 0}  # the ruleset's defaults filled in
    entries = await seat.audit()
    assert len(entries) == audit + 1 and entries[-1].kind == "tokens.import"
    await carol.wait_for("token.deleted")
    assert [e for e, _ in carol.events if e.startswith("token.")] == ["token.updated", "token.created", "token.deleted"]
    # The same file again changes nothing.
    again = await gm.ok("tokens.import", {**doc, "tokens": list(tokens.values())})
    assert again["unchanged"] == ["a", "b", "n"] and len(await seat.audit()) == audit + 1


async def test_sync_gives_tokens_the_attacks_after_a_seq_and_undos(seat, monkeypatch):
    await seat.join("bob", answer("none"))
    alice = await seat.join("alice")
    gm = await seat.join("gm")
    first = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
    second = (await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))["attack"]
    everything = await alice.ok("table.sync")
    assert [a["id"] for a in everything["attacks"]] == [first["id"], second["id"]]
    assert everything["attacks"][1] == second
    assert everything["more"] is False and everything["seq"] == second["seq"]
    assert everything["user"] == "alice" and everything["role"] == "player" and everything["pending"] == []
    assert everything["tokens"] == [t for _, t in sorted((await seat.tokens()).items())]
    undo = (await gm.ok("attack.undo", {"id": second["id"]}))["undo"]
    later = await alice.ok("table.sync", {"since": first["seq"]})
    assert [a["id"] for a in later["attacks"]] == [second["id"]]
    assert later["undone"] == [{"attack": second["id"], "seq": undo["seq"], "user": "gm", "at": undo["at"]}]
    assert later["seq"] == undo["seq"]
    assert (await alice.ok("table.sync", {"since": later["seq"]}))["attacks"] == []
    # At most SYNC_LIMIT entries at a time; `next` is where to go on from.
    monkeypatch.setattr(campaign, "SYNC_LIMIT", 1)
    page = await alice.ok("table.sync")
    assert [a["id"] for a in page["attacks"]] == [first["id"]] and page["more"] is True
    assert page["next"] == first["seq"]
    bad = await alice.call("table.sync", {"sinse": 3})
    assert bad["ok"] is False and bad["error"]["details"] == {"sinse": ["Unknown field."]}


async def test_sync_lists_the_question_out_for_this_user(seat):
    bob = await seat.join("bob", ignore)
    alice = await seat.join("alice")
    pending = asyncio.ensure_future(alice.call("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]}))
    try:
        await bob.wait_for("decision")
        synced = await bob.ok("table.sync")
        [question] = synced["pending"]
        assert question["key"] == "defense" and question["waiting"] == ["bob"]
        assert question["attack"]["attacker"] == "a" and 0 < question["remaining"] <= question["timeout"]
        assert (await alice.ok("table.sync"))["pending"] == []
        await pending
        assert (await bob.ok("table.sync"))["pending"] == []
    finally:
        pending.cancel()


async def test_a_campaign_moves_from_a_sqlite_server_to_a_redis_one_over_the_wire(server, seat, tmp_path):
    from vtt_bridge.server import BridgeServer

    from ..state.redis_server import redis_server
    from .conftest import config
    from .kit import seat_table

    await seat.join("bob", answer("none"))
    alice = await seat.join("alice")
    await alice.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"]})
    export = (await (await seat.join("gm")).ok("table.export"))["export"]
    with redis_server() as url:
        async with BridgeServer(config(tmp_path / "redis", redis=url, redis_prefix="move:")) as other:
            moved = await seat_table(other, name="moved", tokens=[])
            try:
                gm = await moved.join("gm")
                ack = await gm.ok("tokens.import", export)
                assert ack["created"] == ["a", "b", "c"]
                synced = await gm.ok("table.sync")
                # Everything but the version, which a new table's history starts again at 1.
                plain = [{k: v for k, v in t.items() if k != "version"} for t in export["tokens"]]
                assert [{k: v for k, v in t.items() if k != "version"} for t in synced["tokens"]] == plain
                assert synced["attacks"] == [] and synced["seq"] == 1
            finally:
                await moved.close()
