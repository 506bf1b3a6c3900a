"""What an exact odds model receives and returns.

A ruleset's plugin provides its exact model through the host hook
``vtt_bridge_exact_odds(ruleset, request)``: given an :class:`OddsRequest` (the
tokens, the validated declaration, the answers given in advance) it returns an
:class:`ExactOdds` — the distribution of :class:`AttackOutcome` values the
real pipeline would produce with the rules' default for every unanswered
decision — or ``None`` when it cannot model that request exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.steps import Answer
from ..engine.tokens import Token
from .distribution import Distribution

__all__ = ["AttackOutcome", "ExactOdds", "OddsRequest", "Probe", "outcome_from"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AttackOutcome:
    """The part of ``ctx.outcome`` the odds report on (see "Outcome conventions").

    :ivar hit: the attack hit (any model: for an AOE or a spray, any model under it).
    :ivar damage: the ruleset's main damage measure dealt to the first target.
    :ivar conditions: ``(token_id, condition)`` pairs newly reached by the attack.
    :ivar models: ``(token_id, hit, damage)`` for every model the attack could hit
        and every model it damaged, sorted by token id — from the outcome's
        ``models`` (see "Outcome conventions"); empty when the ruleset reports
        none, and the first target then stands for itself (``hit``, ``damage``).
    """

    hit: bool
    damage: int = 0
    conditions: frozenset[tuple[str, str]] = frozenset()
    models: tuple[tuple[str, bool, int], ...] = ()

    @classmethod
    def miss(cls) -> AttackOutcome:
        return _MISS

    def __lt__(self, other: AttackOutcome) -> bool:  # frozensets do not order; compare sorted
        return _key(self) < _key(other)


    def target(self, token_id: str) -> tuple[bool, int]:
        """``(hit, damage)`` of one model: its ``models`` entry, else the attack's own figures.

        A ruleset that reports no ``models`` attacks one target: ``hit`` and
        ``damage`` are that target's. A model missing from a non-empty
        ``models`` was neither hit nor damaged.
        """
        if not self.models:
            return self.hit, self.damage
        for model, hit, damage in self.models:
            if model == token_id:
                return hit, damage
        return False, 0


def _key(o: AttackOutcome) -> tuple[bool, int, tuple[tuple[str, str], ...], tuple[tuple[str, bool, int], ...]]:
    return (o.hit, o.damage, tuple(sorted(o.conditions)), o.models)


_MISS = AttackOutcome(hit=False)


_NONE: frozenset[tuple[str, str]] = frozenset()


def conditions_of(raw: Any) -> frozenset[tuple[str, str]]:
    """``{token_id: [condition, ...]}`` as a frozenset of pairs (anything else: empty)."""
    if not raw or (type(raw) is not dict and not isinstance(raw, Mapping)):
        return _NONE
    pairs = []
    for token_id, names in raw.items():
        if isinstance(names, str):
            names = (names,)
        for name in names or ():
            pairs.append((str(token_id), str(name)))
    return frozenset(pairs)


def _number(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) else 0


def models_of(raw: Any) -> tuple[tuple[str, bool, int], ...]:
    """``{token_id: {"hit": ..., "damage": ...}}`` as sorted ``(token_id, hit, damage)`` triples."""
    if not raw or (type(raw) is not dict and not isinstance(raw, Mapping)):
        return ()
    if len(raw) == 1:  # one model (most attacks): nothing to sort
        ((token_id, entry),) = raw.items()
        if type(entry) is not dict and not isinstance(entry, Mapping):
            return ()
        damage = entry.get("damage", 0)
        return (
            (
                token_id if type(token_id) is str else str(token_id),
                bool(entry.get("hit", False)),
                damage if type(damage) is int else _number(damage),
            ),
        )
    return tuple(
        sorted(
            (str(token_id), bool(entry.get("hit", False)), _number(entry.get("damage", 0)))
            for token_id, entry in raw.items()
            if isinstance(entry, Mapping)
        )
    )


OutcomeKey = tuple[bool, int, frozenset[tuple[str, str]], tuple[tuple[str, bool, int], ...]]


def outcome_key(raw: Mapping[str, Any]) -> OutcomeKey:
    """The fields of :func:`outcome_from`'s answer as a plain tuple: cheap to hash and
    compare, for counting many outcomes (see :func:`outcome_of_key`)."""
    # Called once per Monte Carlo resolution: the common shapes (an int, nothing reached) without a call.
    damage, conditions, models = raw.get("damage", 0), raw.get("conditions"), raw.get("models")
    return (
        bool(raw.get("hit", False)),
        damage if type(damage) is int else _number(damage),
        conditions_of(conditions) if conditions else _NONE,
        models_of(models) if models else (),
    )


def outcome_of_key(key: OutcomeKey) -> AttackOutcome:
    """The :class:`AttackOutcome` an :func:`outcome_key` stands for."""
    hit, damage, conditions, models = key
    return AttackOutcome(hit=hit, damage=damage, conditions=conditions, models=models)


def outcome_from(raw: Mapping[str, Any]) -> AttackOutcome:
    """The odds' view of a finished resolution's ``ctx.outcome``.

    A missing ``hit`` reads as a miss, a missing ``damage`` as 0, missing
    ``conditions`` as none, missing ``models`` as none (one target);
    nested resolutions (``children``) are not counted.
    """
    return outcome_of_key(outcome_key(raw))


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """The real pipeline run once on scripted dice, for a model to read its numbers.

    :ivar ctx: the attack context as the run left it (working numbers, outcome, stash;
        no step trace is kept).
    :ivar exhausted: the script ran out: ``step`` asked for more dice.
    :ivar step: the step that wanted another die (``None`` when the run finished).
    """

    ctx: Any
    exhausted: bool
    step: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OddsRequest:
    """An attack as asked about: no dice, answers only where given in advance.

    :ivar ruleset: the ruleset id.
    :ivar tokens: the token snapshots, by id.
    :ivar attacker: the attacking token's id.
    :ivar targets: target token ids, the first being the defender.
    :ivar declaration: the declaration as validated by the ruleset's schema
        (defaults filled in).
    :ivar answers: decision key or name → the answers given, in turn.
    :ivar prober: runs the real pipeline on scripted faces; use :meth:`probe`.
    """

    ruleset: str
    tokens: Mapping[str, Token]
    attacker: str
    targets: tuple[str, ...]
    declaration: Mapping[str, Any]
    answers: Mapping[str, tuple[Answer, ...]] = field(default_factory=dict)
    prober: Callable[[Sequence[int]], Probe] | None = field(default=None, compare=False, repr=False)

    def probe(self, faces: Sequence[int] = ()) -> Probe:
        """Resolve this request on the real pipeline with scripted ``faces``.

        With no faces the run stops at the first roll, after every step before
        it has set its numbers (pools, DVs, penalties): a model reads the
        deterministic part of the attack from there instead of repeating the
        ruleset's bookkeeping, and convolves only the dice.
        """
        if self.prober is None:
            raise RuntimeError("this request has no pipeline to probe")
        return self.prober(faces)

    @property
    def attacker_token(self) -> Token:
        return self.tokens[self.attacker]

    @property
    def defender(self) -> Token:
        return self.tokens[self.targets[0]]

    def answer(self, name: str) -> str | None:
        """The option id first given for decision ``name`` (key or bare name), else ``None``."""
        given = self.answers.get(name)
        return given[0].option if given else None

    def unknown_answers(self, known: Iterable[str]) -> list[str]:
        """Answer keys a model does not understand (it should then return ``None``)."""
        allowed = set(known)
        return sorted(k for k in self.answers if k not in allowed)

    def declared(self, charm: str) -> Mapping[str, Any] | None:
        """The declaration's entry for ``charm`` in its ``charms`` list, if declared."""
        for use in self.declaration.get("charms", ()) or ():
            if isinstance(use, Mapping) and use.get("id") == charm:
                return use
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExactOdds:
    """An exact model's answer for one request.

    :ivar outcomes: the distribution of outcomes (exact Fractions).
    :ivar accounts_for: plugins other than the ruleset's own whose hooks the
        model has taken into account for this request (a pack that is inert
        unless declared, say). Any other plugin implementing one of the
        ruleset's hooks makes the odds fall back to Monte Carlo, unless all of
        those hooks are ``probed``.
    :ivar probed: the ruleset's hooks (``exalted2e_declare_attack``) that the
        model runs for real through :meth:`OddsRequest.probe` and reads only
        through the working numbers it reads there (pools, DVs, automatic
        successes): whatever any pack does in them is in the model already. A
        pack whose every hook of the ruleset is listed here keeps exact odds
        exact without being named in ``accounts_for``.
    :ivar unit: what ``damage`` counts; when given it must be the ruleset's
        ``damage_unit`` (the odds report that unit whichever method gives them).
    :ivar notes: anything the model approximates or assumes, shown with the odds.
    """

    outcomes: Distribution[AttackOutcome]
    accounts_for: frozenset[str] = frozenset()
    probed: frozenset[str] = frozenset()
    unit: str | None = None
    notes: tuple[str, ...] = ()
