"""``attack.odds``: the chances of an attack before it is rolled, over the wire."""

from __future__ import annotations

from fractions import Fraction

import pytest

from vtt_bridge import make_host
from vtt_bridge.server import BridgeServer

from .conftest import config
from .kit import seat_table

OTHERS = ["exalted2e_mass", "warmachine_mk3", "warmachine_abilities", "highest_die", "godsgloom", "godsgloom_momentum"]
REQUEST = {"ruleset": "exalted2e", "attacker": "anoria", "targets": ["monk"], "declaration": {"weapon": "fist"}}


@pytest.fixture
async def exalted(tmp_path):
    host = make_host(block=OTHERS, environ={})
    samples = host.rulesets["exalted2e"].sample_tokens()
    async with BridgeServer(config(tmp_path, plugins=(), entry_points=True), host=host) as running:
        seat = await seat_table(running, users=("alice", "bob"), tokens=samples)
        yield seat
        await seat.close()


async def test_the_owner_gets_exact_odds_and_nothing_changes(exalted):
    before = await exalted.state()
    alice = await exalted.join("alice")
    odds = (await alice.ok("attack.odds", REQUEST))["odds"]
    assert odds["method"] == "exact" and odds["samples"] is None
    assert 0 < odds["hit"]["value"] < 1
    # the damage distribution is a distribution, and hitting is the part of it above a miss
    assert sum(Fraction(row["exact"]) for row in odds["damage"]) == 1
    assert odds["unit"] == "health levels"
    assert await exalted.state() == before  # no roll, no audit record, no token change


async def test_a_hypothetical_answer_changes_the_odds(exalted):
    alice = await exalted.join("alice")
    parry = (await alice.ok("attack.odds", {**REQUEST, "answers": {"defense": "parry"}}))["odds"]
    nothing = (await alice.ok("attack.odds", {**REQUEST, "answers": {"defense": "nothing"}}))["odds"]
    assert nothing["hit"]["value"] > parry["hit"]["value"]
    assert nothing["answers"]["defense"] == "nothing"


async def test_monte_carlo_on_request_reports_its_error(exalted):
    gm = await exalted.join("gm")
    odds = (await gm.ok("attack.odds", {**REQUEST, "method": "monte_carlo", "samples": 400}))["odds"]
    assert odds["method"] == "monte_carlo" and odds["samples"] == 400
    assert odds["hit"]["se"] > 0


async def test_odds_follow_the_attack_rules_for_who_may_ask(exalted):
    bob = await exalted.join("bob")
    ack = await bob.call("attack.odds", REQUEST)  # anoria is alice's
    assert ack["ok"] is False and ack["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    "payload, field",
    [
        ({**REQUEST, "samples": 5}, "samples"),
        ({**REQUEST, "method": "guess"}, "method"),
        ({k: v for k, v in REQUEST.items() if k != "targets"}, "targets"),
        ({**REQUEST, "declaration": {"stunt": 9}}, "declaration"),
    ],
)
async def test_a_bad_odds_request_is_invalid_with_field_details(exalted, payload, field):
    gm = await exalted.join("gm")
    ack = await gm.call("attack.odds", payload)
    assert ack["ok"] is False and ack["error"]["code"] == "invalid_request"
    assert field in str(ack["error"]["details"])
