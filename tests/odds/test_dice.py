"""The dice blocks against closed forms and brute force."""

import itertools
from fractions import Fraction

import pytest

from vtt_bridge.odds import Distribution, dice

SIXTENTHS = Fraction(6, 10)
HALF = Fraction(1, 2)


@pytest.mark.parametrize("n", range(1, 11))
def test_exalted_attack_pool_closed_forms(n):
    # The closed forms hold for a roll where a 10 counts twice (attack and other
    # non-damage rolls): per die E = (3·1 + 1·2)/10 = 0.5, so the mean is 0.5·n.
    pool = dice.success_pool_botch(n, 10, 7, 10)
    assert pool.prob(lambda o: o[0] == 0) == SIXTENTHS**n          # P(no success) = 0.6ⁿ
    assert pool.prob(lambda o: o[1]) == SIXTENTHS**n - HALF**n     # P(botch) = 0.6ⁿ − 0.5ⁿ
    assert pool.mean(lambda o: o[0]) == HALF * n                   # mean successes = 0.5·n
    assert dice.success_pool(n, 10, 7, 10).mean() == HALF * n
    assert pool.total() == 1


@pytest.mark.parametrize("n", range(1, 11))
def test_exalted_damage_pool_closed_forms(n):
    # A damage roll: a 10 counts once, so the mean is 0.4·n; P(no success) is still 0.6ⁿ.
    # (Damage rolls never botch in the rules; the botch count here is only the dice's.)
    pool = dice.success_pool_botch(n, 10, 7, None)
    assert pool.prob(lambda o: o[0] == 0) == SIXTENTHS**n
    assert pool.prob(lambda o: o[1]) == SIXTENTHS**n - HALF**n
    assert pool.mean(lambda o: o[0]) == Fraction(4, 10) * n
    assert dice.success_pool(n, 10, 7).mean() == Fraction(4, 10) * n


def test_no_dice_no_successes():
    assert dice.success_pool(0).sorted_items() == [(0, 1)]
    assert dice.success_pool_botch(-2).sorted_items() == [((0, False), 1)]
    assert dice.sum_dice(0, 6, 3).sorted_items() == [(3, 1)]


def test_sum_dice_and_faces():
    assert dice.sum_dice(2, 6)[7] == Fraction(1, 6)
    assert dice.sum_dice(3, 6, -2)[1] == Fraction(1, 216)
    three = dice.faces(3, 6)
    assert three[(6, 6, 6)] == Fraction(1, 216) and three[(1, 2, 3)] == Fraction(6, 216)
    assert len(three) == 56 and three.total() == 1


def _brute(sizes):
    return itertools.product(*(range(1, s + 1) for s in sizes)), Fraction(1, __import__("math").prod(sizes))


@pytest.mark.parametrize("sizes", [(8, 6, 4), (12,), (6, 6), (10, 8, 8, 4)])
def test_highest_and_count_above_against_brute_force(sizes):
    rolls, each = _brute(sizes)
    rolls = list(rolls)
    high = dice.highest(sizes)
    for h in range(1, max(sizes) + 1):
        assert high[h] == sum(each for r in rolls if max(r) == h)
    for threshold in (0, 3, 5, 7):
        above = dice.count_above(sizes, threshold)
        for k in range(len(sizes) + 1):
            assert above[k] == sum(each for r in rolls if sum(f > threshold for f in r) == k)
    assert dice.count_at_least(sizes, 4) == dice.count_above(sizes, 3)
    assert dice.highest(()).sorted_items() == [(0, 1)]


@pytest.mark.parametrize("n", [0, 1, 3, 5])
def test_multinomial_against_brute_force(n):
    def counts(roll):  # d6 faces sorted into (1–2, 3–5, 6)
        return (sum(f <= 2 for f in roll), sum(3 <= f <= 5 for f in roll), sum(f == 6 for f in roll))

    want: dict = {}
    for roll in itertools.product(range(1, 7), repeat=n):
        want[counts(roll)] = want.get(counts(roll), 0) + Fraction(1, 6**n)
    assert dict(dice.multinomial(n, (2, 3, 1)).items()) == want


@pytest.mark.parametrize("double", [None, 10])
def test_success_pools_agree_with_icepool(double):
    import icepool

    die = icepool.d10.map(lambda f: 2 if f == double else int(f >= 7))
    for n in range(1, 16):
        assert dice.success_pool(n, 10, 7, double) == Distribution.from_die(n @ die), n
    d6 = icepool.d6.map(lambda f: int(f >= 4))
    assert dice.success_pool(7, 6, 4) == Distribution.from_die(7 @ d6)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_botch_against_brute_force(n):
    want = Fraction(0)
    for roll in itertools.product(range(1, 11), repeat=n):
        if not any(f >= 7 for f in roll) and 1 in roll:
            want += Fraction(1, 10**n)
    assert dice.success_pool_botch(n, 10, 7, 10).prob(lambda o: o[1]) == want
