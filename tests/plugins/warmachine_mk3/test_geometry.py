"""Measuring (vtt_warmachine_mk3.geometry)."""

import math

import pytest

from vtt_warmachine_mk3 import geometry
from vtt_warmachine_mk3.geometry import Point


def test_bases_are_measured_edge_to_edge():
    assert geometry.base_radius(30) == pytest.approx(0.5906, abs=1e-4)
    assert geometry.base_radius(50) == pytest.approx(0.9843, abs=1e-4)
    assert geometry.edge_distance(Point(x=0, y=0), 30, Point(x=3, y=4), 30) == pytest.approx(5 - 30 / 25.4)
    assert geometry.edge_distance(Point(x=0, y=0), 120, Point(x=1, y=0), 30) == 0.0


def test_toward():
    assert geometry.toward(Point(x=0, y=0), Point(x=3, y=4), 10) == Point(x=6.0, y=8.0)
    assert geometry.toward(Point(x=1, y=1), Point(x=1, y=1), 2) == Point(x=1.0, y=-1.0)


@pytest.mark.parametrize(
    ("direction", "landing"),
    [(1, (4.0, 0.0)), (2, (3.5, 0.866)), (3, (2.5, 0.866)), (4, (2.0, 0.0)), (5, (2.5, -0.866)), (6, (3.5, -0.866))],
)
def test_deviation_direction_1_is_away_from_the_attacker_then_clockwise(direction, landing):
    # the attacker is to the left of the target: "away" is +x; clockwise on a y-down canvas turns to +y
    deviation = geometry.deviate(Point(x=3, y=0), Point(x=0, y=0), direction, 1, 5)
    assert (deviation.landing.x, deviation.landing.y) == landing


def test_deviation_is_capped():
    deviation = geometry.deviate(Point(x=0, y=4), Point(x=0, y=0), 1, 6, 1.5)
    assert (deviation.distance, deviation.landing) == (1.5, Point(x=0.0, y=5.5))
    with pytest.raises(ValueError):
        geometry.deviate(Point(x=0, y=4), Point(x=0, y=0), 7, 1, 1)


def test_under_a_template_means_any_part_of_the_base():
    centre = Point(x=0, y=0)
    edge = 1.5 + geometry.base_radius(30)
    assert geometry.under_template(centre, 3, Point(x=edge, y=0), 30)
    assert not geometry.under_template(centre, 3, Point(x=edge + 0.001, y=0), 30)
    assert geometry.under_template(centre, 5, Point(x=edge / math.sqrt(2) + 0.7, y=edge / math.sqrt(2) + 0.7), 30)
