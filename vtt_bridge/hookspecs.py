"""The host's own hooks.

The host knows no ruleset. A plugin provides rulesets through
:func:`vtt_bridge_rulesets`; each :class:`~vtt_bridge.Ruleset` carries the
module of its step hookspecs, which the host registers at start-up. Packs
implement those step hooks; a hook that no installed ruleset declares is
refused when the plugin manager is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from marshmallow import Schema

    from .engine.steps import Declarable, Ruleset
    from .odds.model import ExactOdds, OddsRequest

hookspec = pluggy.HookspecMarker("vtt_bridge")
hookimpl = pluggy.HookimplMarker("vtt_bridge")

# -------------------------------------------------------------------------
# Registering rulesets
# -------------------------------------------------------------------------


@hookspec
def vtt_bridge_rulesets() -> list[Ruleset]:
    """Called once at start-up. Return the rulesets this plugin provides.

    The host registers each ruleset's ``hookspecs`` module, so packs can
    implement its step hooks. A plugin that provides no ruleset need not
    implement this hook.

    :return: a list of :class:`~vtt_bridge.Ruleset`; ``None`` or ``[]`` for none.
        Two plugins providing the same ruleset id is a start-up error.
    """


# -------------------------------------------------------------------------
# What an attacker may declare, what a token carries for a pack
# -------------------------------------------------------------------------


@hookspec
def vtt_bridge_declarables(ruleset: str) -> list[Declarable] | None:
    """Called once per ruleset when the host is built. Return what an attacker
    may declare in ``declaration.charms`` for ``ruleset`` through this plugin.

    The host refuses a declaration naming a Charm no plugin lists
    (``invalid_request`` at ``declaration.charms.<n>.id``), and a parameter the
    Charm does not list or of the wrong type or range (at
    ``declaration.charms.<n>.<param>``), before any hook runs; ``rulesets.list``
    shows them to players. A :class:`~vtt_bridge.Declarable` of kind
    ``"option"`` is listed only: it is chosen at a decision, and declaring it is
    refused. ``inert=True`` promises that an attack declaring none of this
    plugin's declarables is not changed by it at the rules' default answers, so
    the exact odds stay exact while it is installed (see
    :mod:`vtt_bridge.odds.method`).

    :param ruleset: the ruleset id asked about.
    :return: a list of :class:`~vtt_bridge.Declarable`; ``None`` or ``[]`` when
        this plugin adds nothing to ``ruleset``. Two plugins listing the same
        id for one ruleset is a start-up error. Each entry's ``plugin`` is set
        to the name this plugin was loaded under.
    """


@hookspec
def vtt_bridge_token_flags(ruleset: str) -> type[Schema] | Schema | None:
    """Called once per ruleset when the host is built. Return the marshmallow
    schema of the data this plugin keeps on tokens of ``ruleset``.

    A token carries it as ``flags[<plugin name>]`` (like Foundry's
    ``flags.<module>``): checked with this schema whenever a token is created,
    updated or imported, shown in the token form (``rulesets.list`` →
    ``flags``), and read in hooks as ``token.flags.get("<plugin name>")``.
    Flags under a plugin that returns no schema, or that is not installed, are
    refused (``invalid_request`` at ``flags.<plugin>``).

    :param ruleset: the ruleset id asked about.
    :return: a schema class or instance; ``None`` when this plugin keeps no data
        on tokens of ``ruleset``.
    """


# -------------------------------------------------------------------------
# Odds before the roll
# -------------------------------------------------------------------------


@hookspec(firstresult=True)
def vtt_bridge_exact_odds(ruleset: str, request: OddsRequest) -> ExactOdds | None:
    """Called when someone asks for the odds of an attack (``attack.odds``,
    ``vtt-bridge odds``). Return the exact distribution of its outcomes.

    A ruleset's plugin answers for its own ruleset: the distribution of
    ``AttackOutcome(hit, damage, conditions, models)`` that the ruleset's steps
    produce with the rules' default for every decision not answered in
    ``request.answers``. The host uses it only when every other plugin that
    implements one of the ruleset's hooks is named in the answer's
    ``accounts_for``, implements only hooks in its ``probed`` (those the model
    runs for real through ``request.probe()``), or is inert and not declared;
    otherwise it resolves the attack N times through the real pipeline (Monte
    Carlo). See :mod:`vtt_bridge.odds.method` and "Keeping exact odds exact".

    :param ruleset: the ruleset id of the attack.
    :param request: the validated request (:class:`~vtt_bridge.OddsRequest`):
        tokens, attacker, targets, declaration, answers.
    :return: an :class:`~vtt_bridge.ExactOdds`, or ``None`` when this plugin
        has no exact model for that ruleset or that request (an unknown
        declaration, an answer it does not model): the odds then use Monte
        Carlo.

    Stops at first non-None result.
    """
