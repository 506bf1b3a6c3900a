"""The published hit chances, by exhaustive enumeration through the real pipeline.

Every combination of faces (36 for 2d6, 216 for a boosted 3d6) is scripted into
a real attack — the boost answered through the decision, the verdict made by
step 5d — and the hits counted. No sampling: the chances are exact fractions.
"""

from fractions import Fraction
from functools import lru_cache
from itertools import product

import pytest

from vtt_warmachine_mk3 import rules

from .kit import RULESET, grunt, host, jack, tokens

# needing N on the dice (DEF minus RAT): 2d6, 3d6 boosted
PUBLISHED = [
    (7, 58.33, 90.74),
    (8, 41.67, 83.80),
    (10, 16.67, 62.50),
    (11, 8.33, 50.00),
]


@lru_cache(maxsize=None)
def chance(need: int, dice: int) -> Fraction:
    """The share of all face combinations that step 5d judges a hit."""
    h = host()
    table = tokens(jack(RAT=5, focus=1), grunt("a", DEF=5 + need, ARM=40))
    answers = {"boost_attack": "boost" if dice == 3 else "decline"}
    hits = 0
    combos = list(product(range(1, 7), repeat=dice))
    for faces in combos:
        res = h.start(RULESET, table, attacker="jack", targets=["a"], declaration={"weapon": "Cannon"},
                      dice=[*faces, 1, 1], answers=answers)
        record = res.run()
        rolled = record.ctx.dice.rolls[0]
        assert rolled.faces == list(faces)  # the combination really was the attack roll
        hits += record.outcome["models"]["a"]["hit"]
    return Fraction(hits, len(combos))


@pytest.mark.parametrize(("need", "two", "three"), PUBLISHED)
def test_published_chances_to_hit(need, two, three):
    assert round(float(chance(need, 2)) * 100, 2) == two
    assert round(float(chance(need, 3)) * 100, 2) == three


def test_the_exact_fractions_behind_the_table():
    assert chance(7, 2) == Fraction(21, 36)
    assert chance(7, 3) == Fraction(196, 216)
    assert chance(11, 3) == Fraction(108, 216)


@pytest.mark.parametrize(
    ("need", "dice", "expected"),
    [
        (2, 2, Fraction(35, 36)),  # everything but 1,1
        (1, 2, Fraction(35, 36)),  # even needing nothing, all ones miss
        (13, 2, Fraction(1, 36)),  # only 6,6
        (20, 2, Fraction(1, 36)),
        (3, 3, Fraction(215, 216)),
        (19, 3, Fraction(1, 216)),
    ],
)
def test_all_ones_and_all_sixes_set_the_extremes(need, dice, expected):
    assert chance(need, dice) == expected


@pytest.mark.parametrize(("need", "two", "three"), PUBLISHED)
def test_the_boost_question_says_the_chance_to_hit_now_and_boosted(need, two, three):
    # The attacker's question gives the same chances the pipeline makes (issue 28).
    res = host().start(RULESET, tokens(jack(RAT=5, focus=1), grunt("a", DEF=5 + need, ARM=40)),
                       attacker="jack", targets=["a"], declaration={"weapon": "Cannon"}, dice=[1] * 6)
    boost = res.advance().options[0]
    assert boost.id == "boost"
    assert boost.detail == f"to hit {round(two)}% → {round(three)}%"
    assert rules.attack_hit_chance(2, 5, 5 + need) == chance(need, 2)
    assert rules.attack_hit_chance(3, 5, 5 + need) == chance(need, 3)
