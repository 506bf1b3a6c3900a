"""Exalted 2nd edition combat rules as small pure functions (seed 002).

Nothing here knows about hooks or the context: each function takes plain
numbers (or a :class:`HealthTrack`) and returns a number or a frozen value, so
the step implementations in ``ruleset.py`` only wire them in, and other
Exalted rulesets (mass combat) reuse them. Damage types are the letters
``"B"`` (bashing), ``"L"`` (lethal) and ``"A"`` (aggravated).

Sign convention: DV and pool *penalties* are passed and returned as
non-negative amounts to subtract (``dv_penalty=2`` means −2), except
:func:`wound_penalty`, which returns the track's own value (0, −1, −2, −4)
so it can be added as written on the character sheet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BASHING",
    "LETHAL",
    "AGGRAVATED",
    "DAMAGE_TYPES",
    "POOL_TARGET",
    "SHIELDS",
    "COVER",
    "DEFAULT_PENALTIES",
    "INCAPACITATED",
    "DYING",
    "DamagePool",
    "HealthTrack",
    "Soak",
    "apply_damage",
    "armored_soak",
    "automatic_defense",
    "better_defense",
    "cover_bonus",
    "damage_dice",
    "damage_pool",
    "default_track",
    "dodge_dv",
    "halve",
    "hardness_stops",
    "height_bonus",
    "is_botch",
    "minimum_damage",
    "natural_soak",
    "new_conditions",
    "out_of_the_fight",
    "parry_dv",
    "parrying_weapons",
    "best_parry",
    "weapon_hands",
    "free_hands",
    "onslaught_key",
    "range_penalty",
    "roll_pool",
    "keep_better",
    "kept_note",
    "soak",
    "successes",
    "total_soak",
    "track_conditions",
    "wound_penalty",
    "wound_penalty_json",
]

BASHING, LETHAL, AGGRAVATED = "B", "L", "A"
DAMAGE_TYPES = (BASHING, LETHAL, AGGRAVATED)
_SERIOUSNESS = {AGGRAVATED: 0, LETHAL: 1, BASHING: 2}

# ---------------------------------------------------------------------------
# Dice
# ---------------------------------------------------------------------------

POOL_TARGET = 7
"""A d10 showing 7 or more is a success."""


def successes(faces: Sequence[int], *, damage: bool = False) -> int:
    """Successes among ``faces``: 7+ succeeds; a 10 counts twice, except on damage rolls."""
    count = 0
    for face in faces:
        if face >= POOL_TARGET:
            count += 1 if damage or face != 10 else 2
    return count


def is_botch(faces: Sequence[int], successes: int) -> bool:
    """A botch: no successes and at least one 1 (judged on the dice, before external penalties)."""
    return successes <= 0 and 1 in faces


def roll_pool(dice: Any, n: int, *, label: str, damage: bool = False) -> Any:
    """Roll ``n`` d10 through the engine's dice as an Exalted pool.

    Recorded with ``target=7`` and ``double=10`` (``None`` on a damage roll), so
    the Foundry JSON reads ``Nd10cs>=7`` and an attack's 10 carries ``count: 2``.
    A pool below one die rolls nothing.
    """
    return dice.roll(n, 10, label=label, target=POOL_TARGET, double=None if damage else 10)


# ---------------------------------------------------------------------------
# Defense values
# ---------------------------------------------------------------------------


def keep_better(rolls: Sequence[Any]) -> Any:
    """After a reroll the better result is final (seed 002, step 4); the others are set aside.

    Better means more successes; between two failures, one without a 1 is better
    than a botch. ``rolls[0]`` is the first roll, the others the rerolls made at
    the reroll step. Rerolls set aside are marked discarded, so the card shows them
    struck through under that step; the first roll stays as it was judged at its
    own step (the caller notes when it is set aside). Returns the roll that counts.
    """
    best = rolls[0]
    rank = best.successes, 1 not in best.active
    for roll in rolls[1:]:
        mine = roll.successes, 1 not in roll.active
        if mine > rank:
            best, rank = roll, mine
    for roll in rolls[1:]:
        if roll is not best:
            roll.discard_all()
    return best


def kept_note(first: Any, best: Any) -> str:
    """The card's line after a reroll: which roll counts (seed 002, step 4)."""
    def n(roll: Any) -> str:
        return f"{roll.successes} success{'' if roll.successes == 1 else 'es'}"

    if best is first:
        return f"the first roll stands ({n(first)}); the reroll is set aside"
    return f"the reroll counts ({n(best)}); the first roll ({n(first)}) is set aside"


STUNT_DICE: Mapping[str, int] = {"1": 1, "2": 2, "3": 3}
"""The step-5 ``defense_stunt`` options: a stunt is worth one to three dice."""


def defensive_stunt(answer: Any) -> int:
    """The stunt dice a ``defense_stunt`` answer awards: 1–3, or 0 (``decline``, not asked).

    Stunts to aid defense occur immediately after the attack roll (seed 002,
    "Defense Value"), so the stunt is its own decision at step 5, asked only
    when successes remain, not a value of the step-2 defense.
    """
    if answer is None:
        return 0
    return STUNT_DICE.get(answer.option, 0)


def halve(value: int, *, divine: bool) -> int:
    """Half of ``value``: Exalted and other divine beings round up, mortals round down."""
    return -(-value // 2) if divine else value // 2


def dodge_dv(dexterity: int, dodge: int, essence: int, *, divine: bool) -> int:
    """Dodge DV = (Dexterity + Dodge (+ Essence, if 2 or more)) ÷ 2.

    Seed 002: a mortal with Dexterity 2, Dodge 3, Essence 1 has 2; Anoria
    (Solar) with Dexterity 4, Dodge 4, Essence 5 has 7.
    """
    return halve(dexterity + dodge + (essence if essence >= 2 else 0), divine=divine)


def parry_dv(dexterity: int, ability: int, weapon_defense: int, *, divine: bool) -> int:
    """Parry DV = (Dexterity + the weapon's Ability + its Defense) ÷ 2.

    Seed 002: the monk (Dexterity 3, Martial Arts 4) has 5 with his fist (+2),
    and still 5 with a seven-section staff (+3), because he rounds up.
    """
    return halve(dexterity + ability + weapon_defense, divine=divine)


def weapon_hands(weapon: Mapping[str, Any]) -> int:
    """Hands a weapon needs: its ``hands`` if given, else 2 for a two-handed weapon and 1 otherwise.

    A natural weapon that needs no hand (a kick) lists ``hands: 0``.
    """
    hands = weapon.get("hands")
    if hands is not None:
        return hands
    return 2 if weapon.get("two_handed") else 1


def free_hands(weapons: Sequence[Mapping[str, Any]], *, equipped: Sequence[str] | None, hands: int, shield: str | None) -> int:
    """Hands left over by the weapons held (``equipped``) and a shield (which takes one hand).

    ``equipped`` ``None`` (a token that does not say) means every weapon it lists
    that is not a natural weapon is held.
    """
    used = 1 if shield else 0
    for w in weapons:
        if w.get("unarmed"):
            continue
        if equipped is None or w["name"] in equipped:
            used += weapon_hands(w)
    return hands - used


def parrying_weapons(
    weapons: Sequence[Mapping[str, Any]], *, equipped: Sequence[str] | None, hands: int, shield: str | None
) -> tuple[Mapping[str, Any], ...]:
    """The weapons that can parry: those held, and natural weapons with a free hand to use.

    "Characters cannot use a hand for parrying if they are holding a weapon in
    it" (seed 002, Parry DV): a fist parries only when a hand is free of
    weapons and shield; a two-handed weapon leaves none. A weapon with no
    Defense (``None``: a bow) cannot parry.
    """
    free = free_hands(weapons, equipped=equipped, hands=hands, shield=shield)
    out = []
    for w in weapons:
        if w.get("defense") is None:
            continue
        if w.get("unarmed"):
            if weapon_hands(w) <= free:
                out.append(w)
        elif equipped is None or w["name"] in equipped:
            out.append(w)
    return tuple(out)


def best_parry(
    weapons: Sequence[Mapping[str, Any]], dexterity: int, abilities: Mapping[str, int], *, divine: bool
) -> tuple[int, int] | None:
    """(Parry DV, the Ability rating) from "the currently equipped weapon with the highest Defense".

    Between weapons of equal Defense the one giving the higher DV counts.
    ``None`` when no weapon can parry.
    """
    best: tuple[int, int, int] | None = None
    for w in weapons:
        rating = abilities[w["ability"]]
        value = parry_dv(dexterity, rating, w["defense"], divine=divine)
        rank = (w["defense"], value, rating)
        if best is None or rank > best:
            best = rank
    return None if best is None else (best[1], best[2])


def onslaught_key(attacker: str, coordinated: str | None) -> str:
    """Whose onslaught an attack adds to: the attacker's own, or its coordinated group's.

    The onslaught penalty "applies only against a single attacker, unless a
    group makes a coordinated attack" (seed 002, DV modifiers): attacks
    declared with the same ``coordinated`` group count as one attacker's.
    """
    return f"group:{coordinated}" if coordinated else attacker


def flurry_penalty(attacks: int, attack: int) -> int:
    """Dice the ``attack``-th attack of a flurry of ``attacks`` loses (a multiple-action penalty).

    The seed names the penalty — an opponent short of dice "will only degrade
    in effectiveness if he launches a flurry" (seed 002, "Automatic Defense") —
    but not its size. [decision] The first of N attacks loses N dice and each
    later one a die more (−3, −4, −5 for three attacks); a flurry that bears
    no such penalty (an extra-action Charm's) declares its own figure.
    """
    return attacks + attack - 1


SHIELDS: Mapping[str, tuple[int, int]] = {
    # name: (hand-to-hand bonus, ranged bonus) — seed 002, "Shields and Cover DV Bonuses"
    "buckler": (1, 0),
    "target": (1, 1),
    "tower": (1, 2),
}
COVER: Mapping[str, tuple[int, int]] = {
    "none": (0, 0),
    "25": (0, 1),  # shoulder and leg protected
    "50": (1, 2),  # half body protected
    "75": (1, 3),  # all but shoulder, arm and face
    "90": (2, 4),  # all but the eyes
}


def cover_bonus(shield: str | None, cover: str | None, *, ranged: bool) -> int:
    """The DV bonus of a shield or of hard cover: not cumulative, the greater applies."""
    column = 1 if ranged else 0
    from_shield = SHIELDS[shield][column] if shield else 0
    from_cover = COVER[cover][column] if cover else 0
    return from_shield if from_shield > from_cover else from_cover


def height_bonus(height: int, *, close: bool, reach: bool) -> int:
    """The height modifier to both DVs: close combat only, negated by a reach weapon.

    ``height`` is the defender's advantage (+1 steps/gentle slope/mounted,
    +2 steep slope/howdah, +3 too steep to climb without hands); a negative
    value is the defender standing lower, a DV penalty.
    """
    if not close or reach:
        return 0
    return height


def range_penalty(distance: int, weapon_range: int) -> int | None:
    """External penalty for shooting at ``distance``: 0 within range, 1 up to twice, 2 up to three times.

    ``None`` beyond three times the range: accurate shooting is impossible
    without magic.
    """
    if distance <= weapon_range:
        return 0
    if distance <= 2 * weapon_range:
        return 1
    if distance <= 3 * weapon_range:
        return 2
    return None


def automatic_defense(dv: int, accuracy_pool: int, *, extra: bool) -> bool:
    """An attacking extra whose accuracy pool is below the defender's DV misses without rolling."""
    return extra and dv > accuracy_pool


def better_defense(dodge: int, parry: int) -> str:
    """The defense a defender falls back on: the higher DV; a tie goes to parry.

    Ties go to parry because a parry needs no ground to give ([decision]).
    """
    return "dodge" if dodge > parry else "parry"


# ---------------------------------------------------------------------------
# Damage: Hardness, soak, minimum damage
# ---------------------------------------------------------------------------


def hardness_stops(raw_damage: int, hardness: int) -> bool:
    """Hardness equal to or greater than the raw damage absorbs the attack without effect."""
    return hardness > 0 and hardness >= raw_damage


def natural_soak(stamina: int, damage_type: str, *, divine: bool) -> int:
    """Natural soak: Stamina against bashing; ⌊Stamina/2⌋ against lethal for Exalted and spirits (0 for mortals); none against aggravated."""
    if damage_type == BASHING:
        return stamina
    if damage_type == LETHAL:
        return stamina // 2 if divine else 0
    return 0


def armored_soak(bashing: int, lethal: int, damage_type: str, *, piercing: bool = False) -> int:
    """Armored soak against one damage type: aggravated uses the lethal rating; piercing halves it (round down)."""
    value = bashing if damage_type == BASHING else lethal
    return value // 2 if piercing else value


@dataclass(frozen=True, slots=True, kw_only=True)
class Soak:
    """A soak rating taken apart: ``natural + armored = total``."""

    natural: int
    armored: int
    total: int


def soak(
    stamina: int,
    damage_type: str,
    *,
    divine: bool,
    armor_bashing: int = 0,
    armor_lethal: int = 0,
    piercing: bool = False,
    natural_bonus: int = 0,
) -> Soak:
    """Total soak = natural soak (+ soak-boosting magic) + armored soak; piercing halves only the armor."""
    natural = natural_soak(stamina, damage_type, divine=divine) + natural_bonus
    armored = armored_soak(armor_bashing, armor_lethal, damage_type, piercing=piercing)
    return Soak(natural=natural, armored=armored, total=natural + armored)


def total_soak(
    stamina: int,
    damage_type: str,
    *,
    divine: bool,
    armor_bashing: int = 0,
    armor_lethal: int = 0,
    piercing: bool = False,
    natural_bonus: int = 0,
) -> int:
    """The total soak as one number (see :func:`soak`)."""
    natural = natural_soak(stamina, damage_type, divine=divine) + natural_bonus
    return natural + armored_soak(armor_bashing, armor_lethal, damage_type, piercing=piercing)


def minimum_damage(weapon_minimum: int, essence: int) -> int:
    """The attack's minimum damage: the weapon's own minimum (1 if none is listed) or the attacker's permanent Essence, whichever is greater."""
    return weapon_minimum if weapon_minimum > essence else essence


@dataclass(frozen=True, slots=True, kw_only=True)
class DamagePool:
    """Step 8's numbers: ``raw - soak = post_soak``, raised to ``minimum`` but never above ``raw``: ``final``."""

    raw: int
    soak: int
    post_soak: int
    minimum: int
    final: int


def damage_dice(raw: int, soak: int, *, minimum: int, post_soak: int = 0) -> int:
    """The damage dice rolled after soak: Essence can overcome soak, not create damage.

    ``raw - soak``, raised to ``minimum`` but never above ``raw``.
    ``post_soak``: effects that increase or decrease post-soak damage apply to
    the final value, after the minimum (seed 002, step 8); never below 0.
    """
    post = raw - soak
    if post < 0:
        post = 0
    final = post if post >= minimum else minimum
    if final > raw:
        final = raw
    if post_soak:
        final = final + post_soak if final + post_soak > 0 else 0
    return final


def damage_pool(raw: int, soak: int, *, minimum: int, post_soak: int = 0) -> DamagePool:
    """Step 8's numbers taken apart; ``final`` is :func:`damage_dice`."""
    post = raw - soak
    final = damage_dice(raw, soak, minimum=minimum, post_soak=post_soak)
    return DamagePool(raw=raw, soak=soak, post_soak=post if post > 0 else 0, minimum=minimum, final=final)


# ---------------------------------------------------------------------------
# The health track
# ---------------------------------------------------------------------------

INCAPACITATED = "I"
DYING = "D"
DEFAULT_PENALTIES: tuple[int, ...] = (0, -1, -1, -2, -2, -4)


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthTrack:
    """A character's health levels, top (−0) to bottom (the last Dying level).

    ``penalties[i]`` is a level's wound penalty (0, −1, −2, −4), ``"I"`` for
    Incapacitated or ``"D"`` for a Dying level; ``damage[i]`` is ``None`` (empty),
    ``"B"``, ``"L"`` or ``"A"``.

    JSON form, stored on the token as ``system.health`` so a GM can edit it —
    the same two lists, top level first::

        {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"],
         "damage":    ["L", "B", null, null, null, null, null, null, null]}
    """

    penalties: tuple[int | str, ...]
    damage: tuple[str | None, ...]

    def __post_init__(self) -> None:
        if len(self.penalties) != len(self.damage):
            raise ValueError("a health track needs one damage entry per level")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HealthTrack:
        return cls(penalties=tuple(data["penalties"]), damage=tuple(data["damage"]))

    def to_json(self) -> dict[str, Any]:
        return {"penalties": list(self.penalties), "damage": list(self.damage)}

    def count(self, damage_type: str) -> int:
        return self.damage.count(damage_type)

    @property
    def filled(self) -> int:
        return len(self.damage) - self.damage.count(None)

    def notation(self) -> str:
        """Short form for chat cards: ``[L L B . . . . | I | D D]``."""
        return " ".join([d or "." for d in self.damage])


def default_track(stamina: int) -> HealthTrack:
    """The default track: −0, −1, −1, −2, −2, −4, Incapacitated, then Dying levels equal to Stamina ([decision])."""
    penalties: tuple[int | str, ...] = DEFAULT_PENALTIES + (INCAPACITATED,) + (DYING,) * max(stamina, 0)
    return HealthTrack(penalties=penalties, damage=(None,) * len(penalties))


def apply_damage(track: HealthTrack, levels: int, damage_type: str) -> HealthTrack:
    """Mark ``levels`` health levels of ``damage_type`` and return the new track.

    Damage fills from the top, aggravated above lethal above bashing, so more
    serious damage pushes bashing down. Bashing pushed past the last level
    upgrades a bashing level still on the track to lethal, one for one
    ([decision]); lethal or aggravated past the last level is lost (the
    character is already dead). A GM-edited track is put back in that order.
    """
    if levels <= 0:
        return track
    damage = track.damage
    n = len(damage)
    a = damage.count(AGGRAVATED)
    lethal = damage.count(LETHAL)
    b = damage.count(BASHING)
    if damage_type == AGGRAVATED:
        a += levels
    elif damage_type == LETHAL:
        lethal += levels
    else:
        b += levels
    if a >= n:
        a, lethal, b = n, 0, 0
    elif a + lethal >= n:
        lethal, b = n - a, 0
    else:
        room = n - a - lethal
        if b > room:
            upgraded = min(b - room, room)
            lethal += upgraded
            b = room - upgraded
    filled = (AGGRAVATED,) * a + (LETHAL,) * lethal + (BASHING,) * b
    return HealthTrack(penalties=track.penalties, damage=filled + (None,) * (n - len(filled)))


def wound_penalty_json(health: Mapping[str, Any]) -> int:
    """:func:`wound_penalty` of a track in its JSON form, without building the track."""
    worst = 0
    penalties = health["penalties"]
    for penalty, damage in zip(penalties, health["damage"]):
        if damage is None:
            continue
        if type(penalty) is not int:
            return min((p for p in penalties if type(p) is int), default=0)
        if penalty < worst:
            worst = penalty
    return worst


def wound_penalty(track: HealthTrack) -> int:
    """The wound penalty (0, −1, −2, −4): that of the worst filled level.

    Levels past the numbered ones (Incapacitated, Dying) keep the worst
    numbered penalty.
    """
    worst = 0
    for penalty, damage in zip(track.penalties, track.damage):
        if damage is None:
            continue
        if isinstance(penalty, int):
            if penalty < worst:
                worst = penalty
        else:
            numbered = [p for p in track.penalties if isinstance(p, int)]
            return min(numbered, default=0)
    return worst


def track_conditions(track: HealthTrack) -> frozenset[str]:
    """Conditions a track shows: ``incapacitated``, ``unconscious``, ``dying``, ``dead``.

    Incapacitated: the Incapacitated level is marked. Past it, bashing damage
    leaves the character unconscious, lethal or aggravated dying; every level
    marked with lethal or aggravated is dead.
    """
    out: set[str] = set()
    penalties, damage = track.penalties, track.damage
    past = False
    for penalty, mark in zip(penalties, damage):
        if penalty == INCAPACITATED:
            if mark is not None:
                out.add("incapacitated")
            past = True
        elif past and mark is not None:
            out.add("unconscious" if mark == BASHING else "dying")
    if damage and BASHING not in damage and None not in damage:
        out.add("dead")
    return frozenset(out)


def out_of_the_fight(health: Mapping[str, Any]) -> str | None:
    """Why a character past Incapacitated cannot act: ``dead``, ``dying``, ``unconscious`` or ``None``.

    Seed 002, damage types: characters beaten below Incapacitated with bashing
    damage pass out; with lethal damage they begin dying.
    """
    penalties, damage = health["penalties"], health["damage"]
    if INCAPACITATED in penalties:
        past = penalties.index(INCAPACITATED) + 1
        if past >= len(damage) or damage[past] is None:
            return None  # damage fills from the top: nothing is marked past Incapacitated
    conditions = track_conditions(HealthTrack.from_json(health))
    for condition in ("dead", "dying", "unconscious"):
        if condition in conditions:
            return condition
    return None


def new_conditions(before: HealthTrack, after: HealthTrack) -> list[str]:
    """Conditions ``after`` shows that ``before`` did not, in a stable order."""
    penalties = after.penalties
    if INCAPACITATED in penalties and after.damage[penalties.index(INCAPACITATED)] is None:
        return []  # damage fills from the top: an empty Incapacitated level means no condition yet
    gained = track_conditions(after) - track_conditions(before)
    return [c for c in ("incapacitated", "unconscious", "dying", "dead") if c in gained]
