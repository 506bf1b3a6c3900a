"""Damage tracks (vtt_warmachine_mk3.damage)."""

import pytest

from vtt_warmachine_mk3 import damage

GRID = [".----L", "----LL", "---MMC", "---MCC", "----RR", ".----R"]


def test_tracks_from_the_token():
    assert damage.track_of({}).lanes == (("",),)
    assert damage.track_of({"boxes": 3}).capacity == 3
    grid = damage.track_of({"grid": GRID})
    assert grid.kind == "grid" and grid.capacity == 34
    assert grid.lanes[0] == ("", "", "", "", "left_arm")  # "." is no box
    spiral = damage.track_of({"spiral": [2, 2, 3, 3, 1, 1]})
    assert spiral.lanes[2] == ("body",) * 3 and spiral.capacity == 12


def test_marked_is_read_tolerantly_and_written_back_in_the_tokens_shape():
    grid = damage.track_of({"grid": GRID})
    assert damage.marked_of({}, grid) == (0,) * 6
    assert damage.marked_of({"marked": [9, 1]}, grid) == (5, 1, 0, 0, 0, 0)
    boxes = damage.track_of({"boxes": 5})
    assert damage.marked_of({"marked": 2}, boxes) == (2,)
    assert damage.to_token(boxes, (2,)) == 2 and damage.to_token(grid, (1,) * 6) == [1] * 6


@pytest.mark.parametrize(
    ("start", "points", "before", "after", "crippled"),
    [
        (3, 4, (0,) * 6, (0, 0, 4, 0, 0, 0), ()),
        (3, 6, (0,) * 6, (0, 0, 6, 0, 0, 0), ()),
        (6, 7, (0,) * 6, (2, 0, 0, 0, 0, 5), ()),  # 6 wraps to 1
        (5, 3, (0, 0, 0, 0, 4, 4), (0, 0, 0, 0, 6, 5), ("right_arm",)),
        (1, 40, (0,) * 6, (5, 6, 6, 6, 6, 5), ("cortex", "left_arm", "movement", "right_arm")),
    ],
)
def test_grid_marking(start, points, before, after, crippled):
    grid = damage.track_of({"grid": GRID})
    marking = damage.mark(grid, before, points, start)
    assert (marking.marked, marking.crippled) == (after, crippled)
    assert marking.points == min(points, 34 - sum(before))


def test_marking_lists_the_boxes_in_order_and_heal_last_unmarks_the_last():
    spiral = damage.track_of({"spiral": [2] * 6})
    marking = damage.mark(spiral, (0, 0, 0, 0, 0, 1), 3, 6)
    assert marking.boxes == ((5, 1), (0, 0), (0, 1))
    assert marking.marked == (2, 0, 0, 0, 0, 2) and marking.crippled == ()  # branch 5 is spirit too
    assert damage.heal_last(marking.marked, marking.boxes) == (1, 0, 0, 0, 0, 2)
    assert damage.heal_last((0, 3, 0), ()) == (0, 2, 0)


def test_boxes_ignore_the_start_and_lose_the_overflow():
    boxes = damage.track_of({"boxes": 5})
    marking = damage.mark(boxes, (3,), 4, 6)
    assert (marking.marked, marking.points, damage.remaining(boxes, marking.marked)) == ((5,), 2, 0)


def test_crippled_needs_every_box_of_the_system():
    grid = damage.track_of({"grid": GRID})
    assert damage.crippled(grid, (0, 6, 0, 0, 0, 0)) == ()
    assert damage.crippled(grid, (5, 6, 0, 0, 0, 0)) == ("left_arm",)
    assert damage.crippled(damage.track_of({"spiral": [1, 1, 0, 0, 0, 0]}), (1, 1, 0, 0, 0, 0)) == ("mind",)
