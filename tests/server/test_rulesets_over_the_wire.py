"""Every shipped example attack, of every ruleset, over a real socket.

Each example's tokens go on a fresh table; every owner connects and answers
each question with the rules' default. The attack must ask each question of the
owner of the token the rules name (the GM when nobody owns it), and end exactly
as the same request resolved from the command line does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtt_bridge import make_host
from vtt_bridge.cli.resolve import resolve_request
from vtt_bridge.server import BridgeServer

from .conftest import config
from .kit import seat_table

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(ROOT.glob("plugins/vtt_*/examples/*.json"))
HOST = make_host(environ={})


async def take_default(decision: dict) -> str:
    return decision["default"]


def owners(token: dict) -> set[str]:
    return {user for user, level in (token.get("ownership") or {}).items() if level >= 3}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
async def test_an_example_attack_asks_the_owners_and_ends_as_on_the_command_line(tmp_path, path):
    data = json.loads(path.read_text())
    ruleset = data["ruleset"]
    tokens = [{**t, "ruleset": t.get("ruleset", ruleset)} for t in data["tokens"]]
    by_id = {t["id"]: t for t in tokens}
    users = sorted(set().union(*(owners(t) for t in tokens)) - {"gm"})
    request = {k: data[k] for k in ("ruleset", "attacker", "targets", "declaration") if k in data}
    # Seeded, with no answers given: every question the rules ask goes to a player.
    # (An example's scripted faces fit its own answers, so they are left out here.)
    request["seed"] = data.get("seed", 1)
    expected = resolve_request(HOST, {**{k: v for k, v in data.items() if k != "dice"}, **request, "answers": {}})

    settings = config(tmp_path, plugins=(), entry_points=True, decision_timeout=10)
    async with BridgeServer(settings, host=HOST) as running:
        seat = await seat_table(running, users=tuple(users), tokens=tokens)
        players = {user: await seat.join(user, take_default) for user in users}
        gm = await seat.join("gm", take_default)
        attack = (await gm.ok("attack", request))["attack"]
        stored = await seat.tokens()
        await seat.close()

    asked = attack["decisions"]
    assert all(d["how"] == "answered" for d in asked), asked
    for user, client in players.items():
        assert all(user in owners(by_id[d["token"]]) for d in client.decisions), (user, client.decisions)
    for decision in gm.decisions:  # the GM is asked only what no connected player owns
        token = by_id.get(decision["token"]) if decision["token"] else None
        assert token is None or not (owners(token) & set(users))
    assert sum(len(c.decisions) for c in (*players.values(), gm)) == len(asked)
    assert attack["outcome"] == expected["outcome"]
    changed = {
        tid: change["after"]["system"]
        for tid, change in attack["tokens"].items()
        if change["after"]["system"] != change["before"]["system"]
    }
    assert changed == {tid: change["after"] for tid, change in expected["changes"].items()}
    for tid, change in attack["tokens"].items():
        assert stored[tid] == change["after"]
