"""The engine's ``duel`` ruleset with an outcome, an exact odds model, and a pack.

``duel`` (tests/engine/duel.py) reports only ``hit``; :class:`ScoredDuelRules`
also reports ``damage`` (hits on the first target) and ``conditions``
(``"down"`` for a target brought to 0 hp), as every real ruleset does.
"""

from __future__ import annotations

from fractions import Fraction

from vtt_bridge import Declarable, Token, hookimpl
from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, dice

from ..engine.duel import DuelRules


class ScoredDuelRules(DuelRules):
    """``duel`` reporting damage and conditions per the outcome conventions."""

    @hookimpl(trylast=True)
    def duel_wounds(self, ctx):
        ctx.outcome["hit"] = True
        ctx.outcome["damage"] = ctx.hits
        ctx.outcome["conditions"] = {}

    @hookimpl(trylast=True)
    def duel_wound(self, ctx):
        hp = ctx.current(ctx.item)["hp"]
        ctx.update(ctx.item, hp=hp - ctx.hits)
        if hp > 0 >= hp - ctx.hits:
            ctx.outcome["conditions"][ctx.item] = ["down"]


def duel_outcomes(request: OddsRequest) -> Distribution[AttackOutcome]:
    """The duel's rules, exactly: (2 + bonus)d6 at 4+, minus 1 when the defender blocks."""
    block = 0 if request.answer("defense") == "none" else 1
    pool = 2 + request.declaration["bonus"]
    hp = {t: request.tokens[t].system["hp"] for t in request.targets}

    def outcome(successes: int) -> AttackOutcome:
        hits = successes - block
        if hits <= 0:
            return AttackOutcome.miss()
        down = frozenset((t, "down") for t, h in hp.items() if h > 0 >= h - hits)
        return AttackOutcome(hit=True, damage=hits, conditions=down)

    return dice.success_pool(pool, 6, 4).map(outcome)


class DuelExact:
    """The duel's exact odds model; it may claim to account for named packs."""

    def __init__(self, accounts_for: frozenset[str] = frozenset()) -> None:
        self.accounts_for = accounts_for

    @hookimpl
    def vtt_bridge_exact_odds(self, ruleset: str, request: OddsRequest):
        if ruleset != "duel" or request.unknown_answers({"defense"}):
            return None
        if request.declared("extra") is not None:
            return None  # the ExtraDie pack is at work: not modelled
        return ExactOdds(outcomes=duel_outcomes(request), accounts_for=self.accounts_for)


class ExtraDie:
    """A pack: a declared ``extra`` adds a die to the duel's pool.

    ``inert`` says whether it claims to change nothing when ``extra`` is not declared.
    """

    def __init__(self, *, inert: bool = False) -> None:
        self.inert = inert

    @hookimpl
    def vtt_bridge_declarables(self, ruleset):
        return [Declarable(id="extra", label="Extra die", plugin="", inert=self.inert)] if ruleset == "duel" else None

    @hookimpl
    def duel_roll(self, ctx):
        if ctx.declared("extra") is not None:
            ctx.pool += 1


class SkewedExact(DuelExact):
    """A wrong model (hits one more than the rules give): agreement must catch it."""

    @hookimpl
    def vtt_bridge_exact_odds(self, ruleset: str, request: OddsRequest):
        right = DuelExact.vtt_bridge_exact_odds(self, ruleset, request)
        if right is None:
            return None
        skewed = right.outcomes.map(
            lambda o: AttackOutcome(hit=o.hit, damage=o.damage + 1 if o.hit else 0, conditions=o.conditions)
        )
        return ExactOdds(outcomes=skewed)


def tokens(hp_b: int = 2, hp_c: int = 1, rerolls: int = 0) -> dict[str, Token]:
    return {
        "a": Token("a", "Attacker", "duel", {"hp": 10, "rerolls": rerolls}, ownership={"alice": 3}),
        "b": Token("b", "Defender", "duel", {"hp": hp_b, "rerolls": 0}, ownership={"bob": 3}),
        "c": Token("c", "Bystander", "duel", {"hp": hp_c, "rerolls": 0}),
    }


HALF = Fraction(1, 2)
