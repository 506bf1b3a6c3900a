"""GODSGLOOM's Attack Test rules as small pure functions (seed 004, brief godsgloom.md).

Nothing here rolls or touches a context: the step implementations in
``ruleset.py`` feed these functions faces and numbers and record what they return.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "COLOURS",
    "SUCCESS",
    "Cancelled",
    "Criticals",
    "RerollChoice",
    "Status",
    "adjusted_pool",
    "cancel",
    "critical_effects",
    "parse_reroll",
    "status_check",
    "successes",
]

#: "A 3+ is always a success" — a ⚔️ Hit on an Attack die, a 🛡️ Block on a Defence die.
SUCCESS = 3

#: The two colours rolled in an attack test, as used in option ids ("die:attack:2").
COLOURS = ("attack", "defence")


def successes(faces: Sequence[int]) -> int:
    """How many of these faces are successes (3+)."""
    return sum(1 for face in faces if face >= SUCCESS)


def adjusted_pool(dice: int, *, modifier: int = 0, boost: int = 0, weak: int = 0) -> int:
    """A colour's dice for this test: modifiers, +1 per 🟡 Boost, −1 per 🟣 Weak, never below 0.

    Weak's −1 🟥 and −1 🟦 is the brief's [decision]; the seed only says the token
    "applies its penalty to a roll" (seed 004, ATC.60).
    """
    return max(0, dice + modifier + boost - weak)


# -- ATC.20 Reroll Dice Procedure ----------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RerollChoice:
    """A reroll answer taken apart: ``pool`` or ``die:<colour>:<position>``.

    A Pool Reroll rerolls every die of the player's pool, both colours,
    successes too (RDP.10), so it names no colour.

    :ivar colour: the die's colour; ``None`` for a Pool Reroll.
    :ivar position: the die's place in its pool, 1-based; ``None`` for a Pool Reroll.
    """

    kind: str
    colour: str | None = None
    position: int | None = None


@lru_cache(maxsize=256)
def parse_reroll(option: str) -> RerollChoice | None:
    """Read a reroll option id; ``None`` for ids that are not the ruleset's (a pack's own).

    The answer is frozen, so each option id is read once and the answer shared.
    """
    if option == "pool":
        return RerollChoice(kind="pool")
    parts = option.split(":")
    if len(parts) == 3 and parts[0] == "die" and parts[1] in COLOURS and parts[2].isdigit():
        position = int(parts[2])
        if position >= 1:
            return RerollChoice(kind="die", colour=parts[1], position=position)
    return None


# -- ATC.30 Critical Effects Procedure ------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Criticals:
    """One player's Critical Effects: which extra dice it rolls."""

    extra_attack: bool
    extra_defence: bool


def critical_effects(attack_faces: Sequence[int], defence_faces: Sequence[int]) -> Criticals:
    """Two or more 6s on the 🟥 give one extra 🟥; two or more 1s on the 🟦 give one extra 🟦.

    Judged on the dice as they stand after rerolls; the extra dice themselves
    are never judged again (they "count immediately", seed 004, ATC.30).
    """
    return _CRITICALS[list(attack_faces).count(6) >= 2, list(defence_faces).count(1) >= 2]


#: The four possible answers, made once (they are frozen).
_CRITICALS = {
    (attack, defence): Criticals(extra_attack=attack, extra_defence=defence)
    for attack in (False, True)
    for defence in (False, True)
}


# -- ATC.50 Cancel ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancelled:
    """The ⚔️ Hits left standing on each side after the Blocks cancelled theirs."""

    attacker_hits: int
    defender_hits: int


@lru_cache(maxsize=1024)
def cancel(
    *, attacker_hits: int, attacker_blocks: int, defender_hits: int, defender_blocks: int, melee: bool
) -> Cancelled:
    """Each defender 🛡️ cancels one attacker ⚔️; in melee each attacker 🛡️ cancels one defender ⚔️.

    Against a ranged attack the defender rolled no 🟥, so it has no Hits to cancel
    and inflicts none; its count is reported as 0. The answer is frozen, so it is
    worked out once for each set of counts and shared.
    """
    return Cancelled(
        attacker_hits=max(0, attacker_hits - defender_blocks),
        defender_hits=max(0, defender_hits - attacker_blocks) if melee else 0,
    )


# -- ATC.60 Inflict ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """A unit after the 🩸 Wounds of one test and the Status Check.

    :ivar health: Current Health after the wounds, never stored below 0.
    :ivar decimated: reduced to exactly 1: it gains a 🟣 Weak token.
    :ivar destroyed: reduced to 0 or less.
    """

    health: int
    wounds: int
    decimated: bool
    destroyed: bool


@lru_cache(maxsize=1024)
def status_check(current: int, wounds: int) -> Status:
    """Apply the wounds, then check: exactly 1 left → Decimated; 0 or less → Destroyed.

    Only a unit whose health was *reduced* by this test is checked ("when a Unit's
    Current Health is reduced to exactly 1", seed 004, ATC.60): a unit already at 1
    and unhurt does not gain a second Weak token. The answer is frozen, so it is
    worked out once for each (health, wounds) and shared.
    """
    left = current - wounds
    hurt = wounds > 0
    return Status(
        health=max(0, left),
        wounds=wounds,
        decimated=hurt and left == 1,
        destroyed=hurt and left <= 0,
    )
