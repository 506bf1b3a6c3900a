from fractions import Fraction

import pytest

from vtt_bridge.odds import Distribution


def test_equal_outcomes_merge_and_zeros_drop():
    d = Distribution([(1, Fraction(1, 4)), (1, Fraction(1, 4)), (2, Fraction(1, 2)), (3, Fraction(0))])
    assert d.sorted_items() == [(1, Fraction(1, 2)), (2, Fraction(1, 2))]
    assert 3 not in d and d[3] == 0
    assert d.total() == 1


def test_negative_probability_is_refused():
    with pytest.raises(ValueError):
        Distribution({1: -0.1})


def test_a_distribution_cannot_be_changed():
    d = Distribution.certain(1)
    with pytest.raises(AttributeError):
        d._p = {}


def test_uniform_map_mean_and_prob():
    d6 = Distribution.uniform(range(1, 7))
    assert d6.mean() == Fraction(7, 2)
    assert d6.prob(lambda f: f >= 4) == Fraction(1, 2)
    parity = d6.map(lambda f: f % 2)
    assert parity.sorted_items() == [(0, Fraction(1, 2)), (1, Fraction(1, 2))]


def test_add_is_convolution():
    d6 = Distribution.uniform(range(1, 7))
    two = d6.add(d6)
    assert two[7] == Fraction(1, 6) and two[2] == Fraction(1, 36) and two.total() == 1


def test_bind_follows_each_outcome_with_a_dependent_roll():
    coin = Distribution.uniform([1, 2])
    # roll that many d2s and add them up
    d2 = Distribution.uniform([1, 2])
    total = coin.bind(lambda n: d2 if n == 1 else d2.add(d2))
    assert total[1] == Fraction(1, 4)
    assert total[2] == Fraction(1, 4) + Fraction(1, 8)
    assert total[4] == Fraction(1, 8)
    assert total.total() == 1


def test_from_icepool_die_is_exact():
    import icepool

    d = Distribution.from_die(2 @ icepool.d6)
    assert d[7] == Fraction(1, 6) and isinstance(d[7], Fraction)


def test_joint_and_floats_taken_exactly():
    a = Distribution.uniform("xy")
    j = a.joint(Distribution.certain(1))
    assert j[("x", 1)] == Fraction(1, 2)
    f = Distribution({"a": 0.25, "b": 0.75})
    assert f["a"] == Fraction(1, 4) and f.total() == 1


def test_equal_distributions_compare_equal_however_built():
    d6 = Distribution.uniform(range(1, 7))
    assert d6.map(lambda f: f > 3) == Distribution({True: Fraction(1, 2), False: Fraction(1, 2)})
    assert Distribution.certain(2) == Distribution.uniform([2, 2])
