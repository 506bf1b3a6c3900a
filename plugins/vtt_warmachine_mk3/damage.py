"""Damage capacity: a single box, a row of boxes, a warjack grid, a warbeast spiral.

All four are one shape here, a *track*: lanes of boxes marked in order, damage
overflowing from one lane to the next. A single box or a row is one lane; a
damage grid is six columns, marked top down, overflowing to the right with
column 6 wrapping to column 1; a life spiral is six branches, marked from the
outer box inward, overflowing clockwise. Every box carries the name of what it
belongs to: a system ("movement", "cortex"...) on a grid, an aspect ("mind",
"body", "spirit") on a spiral, nothing for a blank box. A system or aspect is
crippled when all its boxes are marked.

On the token, the capacity is one of ``boxes`` (a number), ``grid`` (six
strings, one per column, top down: ``-`` a blank box, a letter a system box,
``.`` no box) or ``spiral`` (six numbers, the boxes of each branch); what is
marked is ``marked``: a number for boxes, six numbers (boxes marked in each
column or branch) for a grid or spiral.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "ASPECTS",
    "SYSTEM_NAMES",
    "Marking",
    "Track",
    "crippled",
    "heal_last",
    "mark",
    "marked_of",
    "remaining",
    "to_token",
    "track_of",
]

# Letters printed in warjack grid boxes. A token may name its own in ``systems``.
SYSTEM_NAMES: Mapping[str, str] = {
    "L": "left_arm",
    "R": "right_arm",
    "M": "movement",
    "C": "cortex",
    "H": "head",
    "A": "arc_node",
    "G": "field_generator",
}

# Branches 1–2 are Mind, 3–4 Body, 5–6 Spirit.
ASPECTS: tuple[str, ...] = ("mind", "mind", "body", "body", "spirit", "spirit")


@dataclass(frozen=True, slots=True, kw_only=True)
class Track:
    """A model's damage boxes.

    :ivar kind: ``"boxes"``, ``"grid"`` or ``"spiral"``.
    :ivar lanes: per lane (column, branch; one lane for boxes) the name of each box
        in marking order; ``""`` is a blank box.
    :ivar sizes: boxes per lane.
    :ivar capacity: boxes in all.
    :ivar last_boxes: per system or aspect, sorted by name, the ``(lane, index)`` of
        its last box in each lane it has boxes in. A lane is marked in order, so
        the system's boxes there are all marked once that one is.
    """

    kind: str
    lanes: tuple[tuple[str, ...], ...]
    sizes: tuple[int, ...] = field(init=False, repr=False, compare=False)
    capacity: int = field(init=False, repr=False, compare=False)
    last_boxes: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = field(init=False, repr=False, compare=False)
    #: ``marked`` → what :func:`crippled` answers for it (a track is shared, so each answer is worked out once).
    crippled_by: dict[tuple[int, ...], tuple[str, ...]] = field(init=False, repr=False, compare=False)
    #: A token's ``marked`` (a number or a tuple) → what :func:`marked_of` answers for it.
    marked_by: dict[Any, tuple[int, ...]] = field(init=False, repr=False, compare=False)
    #: ``(marked, points, start)`` → what :func:`mark` answers for it.
    marks: dict[tuple[tuple[int, ...], int, int], Marking] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sizes = tuple(len(lane) for lane in self.lanes)
        last: dict[str, dict[int, int]] = {}
        for lane, names in enumerate(self.lanes):
            for index, name in enumerate(names):
                if name:
                    last.setdefault(name, {})[lane] = index
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "capacity", sum(sizes))
        object.__setattr__(self, "last_boxes", tuple((name, tuple(last[name].items())) for name in sorted(last)))
        object.__setattr__(self, "crippled_by", {})
        object.__setattr__(self, "marked_by", {})
        object.__setattr__(self, "marks", {})

    @property
    def rolled(self) -> bool:
        """Is a d6 rolled to choose where damage starts (a column or branch)?"""
        return self.kind != "boxes"


@dataclass(frozen=True, slots=True, kw_only=True)
class Marking:
    """The result of marking damage.

    :ivar marked: boxes marked per lane afterwards.
    :ivar points: damage points actually marked (excess over the last box is lost).
    :ivar boxes: ``(lane, index)`` of every box marked, in order (lanes from 0).
    :ivar crippled: systems or aspects crippled by this damage, newly.
    """

    marked: tuple[int, ...]
    points: int
    boxes: tuple[tuple[int, int], ...]
    crippled: tuple[str, ...]


def track_of(system: Mapping[str, Any]) -> Track:
    """The damage track a token's capacity spec describes (one box if it gives none).

    A track is frozen, so each spec's track is made once and shared.
    """
    grid = system.get("grid")
    if grid:
        systems = system.get("systems")
        return _grid_track(tuple(grid), tuple(sorted(systems.items())) if systems else ())
    spiral = system.get("spiral")
    if spiral:
        return _spiral_track(tuple(spiral))
    return _box_track(int(system.get("boxes") or 1))


@lru_cache(maxsize=256)
def _grid_track(grid: tuple[str, ...], systems: tuple[tuple[str, str], ...]) -> Track:
    names = {**SYSTEM_NAMES, **dict(systems)}
    lanes = tuple(tuple("" if cell == "-" else names.get(cell, cell) for cell in column if cell != ".") for column in grid)
    return Track(kind="grid", lanes=lanes)


@lru_cache(maxsize=256)
def _spiral_track(spiral: tuple[int, ...]) -> Track:
    return Track(kind="spiral", lanes=tuple((ASPECTS[i],) * n for i, n in enumerate(spiral)))


@lru_cache(maxsize=256)
def _box_track(boxes: int) -> Track:
    return Track(kind="boxes", lanes=(("",) * boxes,))


def marked_of(system: Mapping[str, Any], track: Track) -> tuple[int, ...]:
    """Boxes marked per lane, from the token's ``marked`` (missing: nothing marked)."""
    raw = system.get("marked")
    if raw is None:
        return (0,) * len(track.lanes)
    known = track.marked_by if type(raw) is tuple or type(raw) is int else None  # a list is not a key
    if known is not None:
        marked = known.get(raw)
        if marked is not None:
            return marked
    counts = (raw,) if isinstance(raw, int) else raw
    counts = (*counts, *(0,) * (len(track.sizes) - len(counts)))
    marked = tuple([max(0, min(int(n), size)) for n, size in zip(counts, track.sizes)])
    if known is not None and len(known) < 4096:
        known[raw] = marked
    return marked


def to_token(track: Track, marked: tuple[int, ...]) -> int | list[int]:
    """``marked`` as the token stores it: a number for boxes, a list otherwise."""
    return marked[0] if track.kind == "boxes" else list(marked)


def remaining(track: Track, marked: tuple[int, ...]) -> int:
    """Unmarked boxes."""
    return track.capacity - sum(marked)


def crippled(track: Track, marked: tuple[int, ...]) -> tuple[str, ...]:
    """Systems or aspects whose every box is marked, sorted."""
    known = track.crippled_by
    names = known.get(marked)
    if names is None:
        names = tuple([name for name, last in track.last_boxes if all(marked[lane] > index for lane, index in last)])
        if len(known) < 4096:
            known[marked] = names
    return names


def mark(track: Track, marked: tuple[int, ...], points: int, start: int = 1) -> Marking:
    """Mark ``points`` damage starting in lane ``start`` (the column or branch rolled,
    1–6; ignored for boxes), overflowing to the next lane, lane 6 wrapping to 1.

    A marking is frozen and a track shared, so each is worked out once per track.
    """
    known = track.marks
    marking = known.get((marked, points, start))
    if marking is None:
        marking = _mark(track, marked, points, start)
        if len(known) < 4096:
            known[(marked, points, start)] = marking
    return marking


def _mark(track: Track, marked: tuple[int, ...], points: int, start: int) -> Marking:
    before = crippled(track, marked)
    counts = list(marked)
    boxes: list[tuple[int, int]] = []
    left = points
    n = len(track.lanes)
    first = (start - 1) % n if track.rolled else 0
    for step in range(n):
        lane = (first + step) % n
        while left > 0 and counts[lane] < track.sizes[lane]:
            boxes.append((lane, counts[lane]))
            counts[lane] += 1
            left -= 1
    after = tuple(counts)
    newly = tuple(name for name in crippled(track, after) if name not in before)
    return Marking(marked=after, points=points - left, boxes=tuple(boxes), crippled=newly)


def heal_last(marked: tuple[int, ...], boxes: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """Remove the damage point marked last (Tough). ``boxes`` as in :class:`Marking`."""
    counts = list(marked)
    if boxes:
        lane, _ = boxes[-1]
    else:  # nothing marked by this attack: the last lane with a mark
        lane = max((i for i, c in enumerate(counts) if c), default=0)
    counts[lane] = max(0, counts[lane] - 1)
    return tuple(counts)
