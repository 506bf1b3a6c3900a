"""What the engine's fast paths must keep: the same dice, the same records, no trace when asked for none."""

import json
import weakref
from pathlib import Path

import pytest

from vtt_bridge import Dice, make_host
from vtt_bridge.cli.resolve import load_tokens
from vtt_bridge.odds import monte_carlo, odds_request, outcome_from, sample_seeds

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "exalted2e": "plugins/vtt_exalted2e/examples/sword_vs_soldier.json",
    "exalted2e_mass": "plugins/vtt_exalted2e_mass/examples/talon_vs_cinder.json",
    "warmachine_mk3": "plugins/vtt_warmachine_mk3/examples/melee_jack_punch.json",
    "highest_die": "plugins/vtt_highest_die/examples/seed_example_parry.json",
    "godsgloom": "plugins/vtt_godsgloom/examples/melee_shieldwall.json",
}


@pytest.fixture(scope="module")
def host():
    return make_host()


def example(host, ruleset):
    data = json.loads((ROOT / EXAMPLES[ruleset]).read_text())
    return data, load_tokens(host, data)


def test_seeded_faces_are_the_stream_they_always_were():
    # Pinned from the byte-at-a-time implementation: every seed replays the same attack forever.
    dice = Dice(7)
    assert dice.roll(40, 10, label="a").faces == [
        9, 8, 7, 10, 5, 1, 1, 8, 6, 4, 8, 6, 6, 3, 2, 6, 8, 1, 9, 9,
        3, 6, 7, 2, 9, 6, 1, 10, 7, 9, 5, 7, 8, 2, 4, 10, 5, 2, 7, 8,
    ]  # fmt: skip
    assert dice.roll(5, 6, label="b").faces == [6, 2, 5, 1, 1]
    assert dice.roll(3, 256, label="c").faces == [170, 187, 55]
    assert dice.roll(2, 1000, label="d").faces == [43, 309]
    assert dice.roll(70, 3, label="e").faces[:12] == [1, 1, 3, 3, 1, 2, 1, 3, 1, 2, 3, 3]
    assert dice.used == 120


def test_faces_do_not_depend_on_how_the_pool_is_split():
    # One roll of 200 d10 draws what 200 single dice would, rejected bytes included.
    whole = Dice(11).roll(200, 10, label="x").faces
    one = Dice(11)
    assert [one.roll(1, 10, label="x").faces[0] for _ in range(200)] == whole


def test_pools_of_an_attack_draw_the_stream_whatever_the_bytes_rejected():
    # An attack's pools (9 dice, then 6) draw the next bytes directly when none is rejected,
    # and fall back to skipping the rejected ones: the same faces as one pool of 15, every seed.
    for seed in range(300):
        split = Dice(seed)
        faces = split.roll(9, 10, label="attack").faces + split.roll(6, 10, label="damage").faces
        assert faces == Dice(seed).roll(15, 10, label="both").faces, seed


@pytest.mark.parametrize("ruleset", sorted(EXAMPLES))
def test_without_a_trace_the_outcome_and_changes_are_the_same(host, ruleset):
    data, tokens = example(host, ruleset)
    declaration = host._declaration(ruleset, data["declaration"])
    for seed in range(40):
        kw = dict(attacker=data["attacker"], targets=data["targets"], declaration=declaration, seed=seed)
        traced = host.engine.start(ruleset, tokens, **kw).run()
        lean = host.engine.start(ruleset, tokens, **kw, trace=False).run()
        assert lean.outcome == traced.outcome
        assert lean.changes == traced.changes
        assert lean["steps"] == [] and traced["steps"]


@pytest.mark.parametrize("ruleset", ["exalted2e", "warmachine_mk3"])
def test_monte_carlo_counts_what_traced_resolutions_give(host, ruleset):
    data, tokens = example(host, ruleset)
    request = odds_request(host, data, tokens)
    counts = monte_carlo(host, request, samples=60, seed=5)
    expected = {}
    for seed in sample_seeds(5, 60):
        res = host.engine.start(
            ruleset,
            tokens,
            attacker=request.attacker,
            targets=list(request.targets),
            declaration=request.declaration,
            seed=seed,
            answers={key: list(given) for key, given in request.answers.items()},
        )
        outcome = outcome_from(res.run().outcome)
        expected[outcome] = expected.get(outcome, 0) + 1
    assert dict(counts) == expected


def test_a_record_outlives_its_resolution_and_needs_no_garbage_collector(host):
    data, tokens = example(host, "exalted2e")
    res = host.start(
        "exalted2e", tokens, attacker=data["attacker"], targets=data["targets"], declaration=data["declaration"], seed=3
    )
    record = res.run()
    gone = weakref.ref(res)
    del res
    assert gone() is None  # freed at once: no reference cycle through the record
    wire = record.to_dict()
    assert wire["seed"] == 3 and wire["dice"] == "seeded" and [d["key"] for d in wire["decisions"]][0] == "defense"


def test_records_of_the_same_question_are_equal_and_independent(host):
    data, tokens = example(host, "exalted2e")
    kw = dict(attacker=data["attacker"], targets=data["targets"], declaration=data["declaration"])
    first = host.start("exalted2e", tokens, **kw, seed=1)
    first.run()
    second = host.start("exalted2e", tokens, **kw, seed=1, answers={"defense": "dodge"})
    second.run()
    assert first.decisions[0][0] == second.decisions[0][0]  # the same question, asked twice
    assert first.record["decisions"][0]["how"] == "default"
    assert second.record["decisions"][0]["how"] == "given"
    assert first.record["decisions"][0]["answer"] == {"option": "parry"}
    assert second.record["decisions"][0]["answer"] == {"option": "dodge"}


def test_a_rolls_foundry_json_is_built_once_and_again_when_the_roll_changes():
    from vtt_bridge import roll_to_foundry
    from vtt_bridge.engine.context import TraceEntry

    dice = Dice(1)
    roll = dice.roll(3, 10, label="attack", target=7, double=10)
    entry = TraceEntry("attack_roll", "3. Attack roll")
    entry.rolls = [roll]
    first = entry.to_dict()["rolls"][0]
    assert first == roll_to_foundry(roll)
    assert entry.to_dict()["rolls"][0] is first  # the step broadcast and the record share it
    dice.reroll(roll, 0)
    again = entry.to_dict()["rolls"][0]
    assert again == roll_to_foundry(roll) and again != first
    assert again["terms"][0]["results"][0]["rerolled"] is True


def test_a_rolls_successes_follow_every_change_of_the_roll():
    # Counted once per state of the roll: a die rerolled, added, discarded or restored, or a
    # new target (highest_die sets one after the roll), counts again.
    dice = Dice(script=[10, 7, 3, 1, 9, 2])
    roll = dice.roll(3, 10, label="attack", target=7, double=10)
    assert roll.successes == roll.successes == 3  # 10 counts twice, 7 once, 3 none
    dice.reroll(roll, 2)  # the 3 becomes a 1
    assert roll.successes == 3
    dice.add(roll)  # a 9
    assert roll.successes == 4
    roll.mark(0, "discarded")  # the 10 goes
    assert roll.successes == 2
    roll.restore(0)
    assert roll.successes == 4
    roll.target = 10
    assert roll.successes == 2
    roll.discard_all()
    assert roll.successes == 0
