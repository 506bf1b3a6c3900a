"""Dice owned by the engine: seeded or scripted, every roll recorded.

Seeded faces come from BLAKE2b in counter mode (keyed with the seed), so a seed
gives the same faces on every platform and Python version, the engine never
imports ``random``, and the random bytes are made in C, 64 at a time: a die
costs one byte comparison, not a bignum multiply. Faces are unbiased
(rejection sampling).
Rolls are recorded compactly (faces plus a sparse map of inactive dice); the
Foundry roll JSON is built only when a resolution is serialized.

Physical dice (Foundry's "manual" fulfilment method): a roll made for a token
whose owner rolls real dice takes the faces they entered. The dice do not wait:
a roll whose faces were not entered yet raises :class:`FacesNeeded`, the
resolution asks the owner, and runs again from the start with the faces
(hooks are pure, so the run is the same up to that roll).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import DiceExhausted, InvalidRequest

__all__ = ["Dice", "FacesNeeded", "Physical", "Roll"]

_MASK = (1 << 64) - 1
_blake2b = hashlib.blake2b

# Per die size: byte → face, or 0 for a byte at or over the rejection limit
# (those would favour low faces).
_TABLES: dict[int, bytes] = {}


def _table(sides: int) -> bytes:
    limit = 256 - 256 % sides
    table = _TABLES[sides] = bytes(b % sides + 1 if b < limit else 0 for b in range(256))
    return table


class Roll:
    """One recorded roll: a pool of dice, all of one size or mixed.

    :ivar label: what the roll is for, as shown on the chat card ("attack", "soak").
    :ivar sides: the die size for every die, or a tuple of sizes for a mixed pool.
    :ivar faces: every result in order, including dice later rerolled or discarded.
    :ivar target: a die showing at least this counts as a success (``None``: a sum roll).
    :ivar double: a face that counts as two successes (Exalted's non-damage 10).
    :ivar modifier: a flat number added to a sum roll's total.
    :ivar physical: ``None`` for dice the bridge rolled unasked; ``"entered"`` for faces a
        person entered from real dice; ``"rolled"`` when they were asked but the bridge
        rolled (no faces in time, or they let it).
    :ivar appended: for each face added after the first throw, in order, the index of
        the die it replaced (:meth:`Dice.reroll`) or ``-1`` for an extra die
        (:meth:`Dice.add`); ``None`` when nothing was added. The Foundry JSON needs it
        to tell the dice first thrown from their replacements and from extra dice.
    """

    __slots__ = (
        "label", "sides", "faces", "target", "double", "modifier", "inactive", "step", "appended", "physical", "_wire",
        "_counted",
    )  # fmt: skip

    def __init__(
        self,
        label: str,
        sides: int | tuple[int, ...],
        faces: list[int],
        target: int | None = None,
        double: int | None = None,
        modifier: int = 0,
        step: str = "",
    ) -> None:
        self.label = label
        self.sides = sides
        self.faces = faces
        self.target = target
        self.double = double
        self.modifier = modifier
        self.inactive: dict[int, str] | None = None
        self.step = step
        self.appended: list[int] | None = None
        self.physical: str | None = None
        #: The Foundry roll JSON last built, with the state it was built from (see ``TraceEntry``).
        self._wire: tuple[tuple[Any, ...], dict[str, Any]] | None = None
        #: The successes last counted, with the state they were counted in (see ``successes``).
        self._counted: tuple[tuple[Any, ...], int] | None = None

    def die_sides(self, index: int) -> int:
        sides = self.sides
        return sides if isinstance(sides, int) else sides[index]

    def is_active(self, index: int) -> bool:
        return self.inactive is None or index not in self.inactive

    @property
    def active(self) -> list[int]:
        """Faces of the dice that still count."""
        if self.inactive is None:
            return self.faces
        return [f for i, f in enumerate(self.faces) if i not in self.inactive]

    @property
    def successes(self) -> int:
        """Dice at or over ``target``, a ``double`` face counting twice.

        Counted once per state of the roll: the steps after a roll read its successes
        again and again (the roll itself, a reroll's offer, the reroll keeping the
        better), and they change only when a die is added, rerolled, discarded or
        restored, or its target is set (read as for the roll's Foundry JSON).
        """
        target, double, inactive = self.target, self.double, self.inactive
        if target is None:
            return 0
        state = (len(self.faces), target, double, tuple(inactive) if inactive else None)
        counted = self._counted
        if counted is not None and counted[0] == state:
            return counted[1]
        count = 0
        for face in self.faces if inactive is None else self.active:
            if face >= target:
                count += 2 if face == double else 1
        self._counted = (state, count)
        return count

    @property
    def total(self) -> int:
        """Successes for a success roll; otherwise the sum of active dice plus modifier."""
        if self.target is not None:
            return self.successes
        return sum(self.active) + self.modifier

    @property
    def highest(self) -> int:
        active = self.active
        return max(active) if active else 0

    def count(self, face: int) -> int:
        return self.active.count(face)

    def mark(self, index: int, how: str) -> None:
        """Mark die ``index`` inactive: ``"rerolled"`` or ``"discarded"``."""
        if not 0 <= index < len(self.faces):
            raise InvalidRequest(f"roll {self.label!r} has no die {index}", details={"die": index})
        if self.inactive is None:
            self.inactive = {}
        self.inactive[index] = how

    def restore(self, index: int) -> None:
        """Make a discarded die count again (Warmachine's "add removed dice back")."""
        if self.inactive is not None:
            self.inactive.pop(index, None)

    def discard_all(self) -> None:
        for i in range(len(self.faces)):
            self.mark(i, "discarded")

    def __repr__(self) -> str:
        return f"Roll({self.label!r}, d{self.sides}, {self.faces})"


#: Rolls that are the defender's, by the first word of their label (lower case);
#: every other roll is the attacker's (it is they who roll it at the table).
DEFENDER_ROLLS = frozenset({"defense", "defence", "defender", "dodge", "parry", "soak", "tough", "block"})


class FacesNeeded(BaseException):
    """A roll needs faces from real dice that were not entered yet (see :class:`Physical`).

    A ``BaseException`` on purpose, like ``ctx.end``: a plugin's ``except Exception``
    cannot swallow it. The resolution turns it into a question to the token's owner.

    :ivar index: which physical roll of the resolution this is (0, 1, ...).
    :ivar token: the token whose owner rolls it.
    :ivar label: what the roll is for ("attack").
    :ivar number: how many dice.
    :ivar sides: the die size, or one size per die for a mixed pool.
    :ivar step: the step rolling it.
    """

    def __init__(self, index: int, token: str, label: str, number: int, sides: int | tuple[int, ...], step: str) -> None:
        super().__init__(f"faces needed for {label}: {dice_text(number, sides)}")
        self.index = index
        self.token = token
        self.label = label
        self.number = number
        self.sides = sides
        self.step = step


def dice_text(number: int, sides: int | tuple[int, ...]) -> str:
    """``12d10``, or ``1d8 + 1d6`` for a mixed pool."""
    if isinstance(sides, int):
        return f"{number}d{sides}"
    counts: dict[int, int] = {}
    for size in sides:
        counts[size] = counts.get(size, 0) + 1
    return " + ".join(f"{n}d{size}" for size, n in counts.items())


class Physical:
    """Whose rolls are entered from real dice, and the faces entered so far.

    :ivar tokens: the tokens whose rolls are asked for (their owners roll real dice).
    :ivar entered: one entry per physical roll, in the order they come: the faces
        entered, or ``None`` when the bridge rolled instead (timeout, or they let it).
    :ivar asked: physical rolls met so far in this run.
    :ivar ctx: the context of the step rolling now (whose attacker and defender roll).
    :ivar log: where each entry's question and answer go as it is used (the resolution's
        decision log), with :attr:`questions` holding them by index.
    """

    __slots__ = ("tokens", "entered", "asked", "ctx", "log", "questions")

    def __init__(self, tokens: Iterable[str], entered: Iterable[list[int] | None] = ()) -> None:
        self.tokens = frozenset(tokens)
        self.entered: list[list[int] | None] = list(entered)
        self.asked = 0
        self.ctx: Any = None
        self.log: list[Any] | None = None
        self.questions: list[Any] = []

    def roller(self, label: str) -> str | None:
        """The token rolling a roll labelled ``label`` in the current step."""
        ctx = self.ctx
        if ctx is None:
            return None
        word = label.split(" ", 1)[0].lower()
        if word in DEFENDER_ROLLS:
            defender = ctx.defender
            return defender.id if defender is not None else None
        return ctx.attacker.id

    def faces(self, number: int, sides: int | tuple[int, ...], label: str, step: str) -> tuple[list[int] | None, str | None]:
        """The entered faces for this roll and how it was fulfilled (``"entered"``, ``"rolled"``);
        ``(None, None)`` for a roll nobody rolls by hand. Raises :class:`FacesNeeded` when the
        faces are still to be asked for."""
        token = self.roller(label)
        if token is None or token not in self.tokens or number <= 0:
            return None, None
        index = self.asked
        if index >= len(self.entered):
            raise FacesNeeded(index, token, label, number, sides, step)
        self.asked += 1
        if self.log is not None and index < len(self.questions):
            self.log.append(self.questions[index])
        faces = self.entered[index]
        return (list(faces), "entered") if faces is not None else (None, "rolled")


class Dice:
    """Rolls dice for one resolution, from a seed or a scripted list of faces.

    Hooks roll only through ``ctx.dice``; every roll lands in :attr:`rolls`.
    """

    __slots__ = ("seed", "_key", "_counter", "_buffer", "_pos", "_script", "_used", "rolls", "step", "physical")

    def __init__(
        self, seed: int | None = None, script: Sequence[int] | None = None, physical: Physical | None = None
    ) -> None:
        if seed is None and script is None:
            raise ValueError("dice need a seed or a script")
        self.seed = seed
        self._key = ((seed or 0) & _MASK).to_bytes(8, "little")
        self._counter = 0
        self._buffer = b""
        self._pos = 0
        self._script = list(script) if script is not None else None
        self._used = 0
        self.rolls: list[Roll] = []
        self.step = ""
        #: Whose rolls are entered from real dice (``None``: the bridge rolls every one).
        self.physical = physical

    def fresh(self, physical: Physical | None) -> Dice:
        """The same dice from the first throw again (the same seed or script), with ``physical``."""
        return Dice(self.seed, self._script, physical)

    @property
    def scripted(self) -> bool:
        return self._script is not None

    @property
    def used(self) -> int:
        """How many faces have been drawn so far."""
        return self._used

    def _face(self, sides: int) -> int:
        if self._script is not None:
            if self._used >= len(self._script):
                raise DiceExhausted(
                    f"the scripted dice ran out: {len(self._script)} given, more needed",
                    details={"given": len(self._script), "step": self.step},
                )
            face = self._script[self._used]
            self._used += 1
            if not 1 <= face <= sides:
                raise InvalidRequest(
                    f"scripted face {face} does not fit a d{sides}",
                    details={"dice": [f"face {self._used} is {face}, a d{sides} shows 1-{sides}"]},
                )
            return face
        return self._seeded(1, sides)[0]

    def _seeded(self, n: int, sides: int) -> list[int]:
        """``n`` faces of a ``sides``-sided die from the keyed BLAKE2b stream.

        Each byte below the rejection limit becomes a face (``byte % sides + 1``),
        in order; the bytes are mapped by a translation table and the rejected
        ones dropped in C, not one byte at a time.
        """
        self._used += n
        if sides > 255:
            if sides > 256:
                return [1 + self._wide(sides) for _ in range(n)]
            return [1 + self._byte() for _ in range(n)]
        table = _TABLES.get(sides) or _table(sides)
        buffer, pos = self._buffer, self._pos
        if len(buffer) - pos < n:
            buffer, pos = buffer[pos:], 0
            while len(buffer) < n:
                buffer += self._block()
        end = pos + n
        chunk = buffer[pos:end].translate(table)
        if 0 not in chunk:  # the common case: no byte among the next n rejected
            self._buffer, self._pos = buffer, end
            return list(chunk)
        chunk = buffer[pos:].translate(table)
        k = n  # bytes to take: n faces plus every rejected byte among them
        while True:
            rejected = chunk.count(0, 0, k)
            if k - rejected == n:
                break
            k = n + rejected
            while k > len(chunk):
                buffer = buffer + self._block()
                chunk = buffer[pos:].translate(table)
        self._buffer, self._pos = buffer, pos + k
        return list(chunk[:k].replace(b"\0", b"") if rejected else chunk[:k])

    def _block(self) -> bytes:
        block = _blake2b(self._counter.to_bytes(8, "little"), key=self._key).digest()  # 64 bytes: the default size
        self._counter += 1
        return block

    def _byte(self) -> int:
        if self._pos >= len(self._buffer):
            self._buffer, self._pos = self._block(), 0
        self._pos += 1
        return self._buffer[self._pos - 1]

    def _wide(self, sides: int) -> int:
        limit = (1 << 32) - (1 << 32) % sides
        while True:
            if self._pos + 4 > len(self._buffer):
                self._buffer, self._pos = self._block(), 0
            value = int.from_bytes(self._buffer[self._pos : self._pos + 4], "little")
            self._pos += 4
            if value < limit:
                return value % sides

    def roll(
        self,
        n: int,
        sides: int,
        *,
        label: str,
        target: int | None = None,
        double: int | None = None,
        modifier: int = 0,
    ) -> Roll:
        """Roll ``n`` dice of ``sides`` sides (``n`` below 0 rolls none) and record it."""
        if self.physical is not None:
            entered, how = self.physical.faces(n, sides, label, self.step)
            if how is not None:
                faces = entered if entered is not None else self._thrown(n, sides)
                roll = Roll(label, sides, faces, target, double, modifier, self.step)
                roll.physical = how
                self.rolls.append(roll)
                return roll
        if n <= 0:
            faces = []
        elif self._script is None:
            faces = self._seeded(n, sides)
        else:
            face = self._face
            faces = [face(sides) for _ in range(n)]
        roll = Roll(label, sides, faces, target, double, modifier, self.step)
        self.rolls.append(roll)
        return roll

    def last(self, label: str) -> Roll | None:
        """The latest roll made with ``label`` (``"attack"``), rerolls included; None if none yet.

        A reroll changes its roll in place, so this stays the roll to read after one.
        """
        for roll in reversed(self.rolls):
            if roll.label == label:
                return roll
        return None

    def pool(self, sides: Iterable[int], *, label: str, target: int | None = None) -> Roll:
        """Roll a mixed pool such as ``[8, 6, 4]`` (one d8, one d6, one d4)."""
        sizes = tuple(sides)
        how = None
        if self.physical is not None:
            entered, how = self.physical.faces(len(sizes), sizes, label, self.step)
        faces = entered if how is not None and entered is not None else [self._face(s) for s in sizes]
        roll = Roll(label, sizes, faces, target=target, step=self.step)
        roll.physical = how
        self.rolls.append(roll)
        return roll

    def _thrown(self, n: int, sides: int) -> list[int]:
        """``n`` faces as an unasked roll would get them (seeded or scripted)."""
        if self._script is None:
            return self._seeded(n, sides)
        return [self._face(sides) for _ in range(n)]

    def _one(self, roll: Roll, sides: int, why: str) -> int:
        """One more die for ``roll`` (a reroll, an extra die): entered by hand if its roller rolls real dice."""
        if self.physical is not None:
            entered, how = self.physical.faces(1, sides, f"{roll.label} {why}", self.step)
            if entered is not None:
                return entered[0]
        return self._face(sides)

    def reroll(self, roll: Roll, index: int) -> int:
        """Reroll one die: the old result is marked rerolled and a new one appended.

        Returns the index of the new result.
        """
        sides = roll.die_sides(index)
        face = self._one(roll, sides, "(reroll)")
        roll.mark(index, "rerolled")
        roll.faces.append(face)
        if not isinstance(roll.sides, int):
            roll.sides = roll.sides + (sides,)
        if roll.appended is None:
            roll.appended = []
        roll.appended.append(index)
        return len(roll.faces) - 1

    def add(self, roll: Roll, n: int = 1, sides: int | None = None) -> list[int]:
        """Add ``n`` more dice to a roll already made (GODSGLOOM's critical extra die)."""
        size = sides if sides is not None else roll.die_sides(0)
        start = len(roll.faces)
        for _ in range(n):
            roll.faces.append(self._one(roll, size, "(extra die)"))
            if not isinstance(roll.sides, int):
                roll.sides = roll.sides + (size,)
            if roll.appended is None:
                roll.appended = []
            roll.appended.append(-1)
        return list(range(start, len(roll.faces)))
