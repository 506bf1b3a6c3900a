"""highest_die: the exact model against the real pipeline and the seed's counting rule."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

from vtt_bridge.odds import compute_odds

from .helpers import assert_agree, real_host, tokens_of

ruleset = pytest.importorskip("vtt_highest_die.ruleset")
from vtt_highest_die.odds import exchange, soak_roll  # noqa: E402
from vtt_highest_die.rules import count_successes  # noqa: E402

EXAMPLES = Path(ruleset.__file__).parent / "examples"


@pytest.fixture(scope="module")
def host():
    return real_host()


def _brute(attack, defense, counter):
    out: dict = {}
    sizes = attack + defense
    each = Fraction(1, __import__("math").prod(sizes))
    for faces in itertools.product(*(range(1, s + 1) for s in sizes)):
        a, d = faces[: len(attack)], faces[len(attack):]
        key = (count_successes(a, d), count_successes(d, a) if counter else 0)
        out[key] = out.get(key, 0) + each
    return out


@pytest.mark.parametrize(
    "attack, defense, counter",
    [((8, 6, 4), (6, 6), False), ((10, 8), (8, 6), True), ((6,), (), False), ((12, 4), (10,), True)],
)
def test_exchange_against_brute_force(attack, defense, counter):
    assert dict(exchange(attack, defense, counter=counter).items()) == _brute(attack, defense, counter)


def test_soak_roll_botch_is_every_die_a_one():
    roll = soak_roll((6, 4))
    assert roll[(0, True)] == Fraction(1, 24)
    assert roll[(2, False)] == Fraction(3, 6) * Fraction(1, 4)
    assert roll.total() == 1


def sample(host):
    return tokens_of(host, "highest_die", ruleset.sample_tokens())


def request(attacker, target, **declaration):
    return {"ruleset": "highest_die", "attacker": attacker, "targets": [target], "declaration": declaration}


CASES = {
    "Brannoc's longsword against the ogre (parry by default)": (request("brannoc", "ogre"), None),
    "the ogre against Brannoc, who counters": (request("ogre", "brannoc"), {"defense": "counter"}),
    "Ysolde's bow (critical) against the goblin, who dodges": (request("ysolde", "goblin", weapon="bow"), None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_exact_agrees_with_the_real_pipeline(host, case):
    req, answers = CASES[case]
    assert_agree(host, req, sample(host), answers=answers)


@pytest.mark.parametrize("example", ["overkill.json", "counter.json"])
def test_exact_agrees_on_the_shipped_examples(host, example):
    data = json.loads((EXAMPLES / example).read_text())
    tokens = tokens_of(host, "highest_die", data["tokens"])
    assert_agree(host, data, tokens, answers=data.get("answers"))


def test_a_counter_can_strike_the_attacker(host):
    result = compute_odds(host, request("ogre", "brannoc"), sample(host), answers={"defense": "counter"}, method="exact")
    assert result.condition_probability("ogre", "reeling") > 0  # the Counter's hit makes the ogre Reeling
    assert result.condition_probability("brannoc", "reeling") > 0
