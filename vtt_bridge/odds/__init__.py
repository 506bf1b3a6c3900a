"""Odds before you roll: the chance to hit, the damage distribution, the conditions.

The host's odds engine knows no ruleset. For an attack request it either asks
the ruleset's plugin for an exact model (the host hook ``vtt_bridge_exact_odds``,
answered with an :class:`ExactOdds`) or resolves the attack N times through the
real pipeline (Monte Carlo); :mod:`vtt_bridge.odds.method` says which and why.

Exact models are written with :class:`Distribution` and the dice blocks of
:mod:`vtt_bridge.odds.dice`; plugins import them from here::

    from vtt_bridge.odds import AttackOutcome, Distribution, ExactOdds, dice

The server and the CLI call :func:`compute_odds`, which returns an
:class:`OddsResult` (``to_dict()`` is its wire form) and :func:`render` prints.
"""

from . import dice
from .compute import DEFAULT_SAMPLES, compute_odds, odds_request
from .distribution import Distribution, Prob
from .method import Choice, choose_method, exact_model, foreign_plugins, ruleset_owner
from .model import AttackOutcome, ExactOdds, OddsRequest, Probe, outcome_from
from .montecarlo import monte_carlo, sample_seeds
from .render import render
from .result import Estimate, ModelOdds, OddsResult, summarise_exact, summarise_samples

__all__ = [
    "DEFAULT_SAMPLES",
    "AttackOutcome",
    "Choice",
    "Distribution",
    "Estimate",
    "ModelOdds",
    "ExactOdds",
    "OddsRequest",
    "OddsResult",
    "Prob",
    "Probe",
    "choose_method",
    "compute_odds",
    "dice",
    "exact_model",
    "foreign_plugins",
    "monte_carlo",
    "odds_request",
    "outcome_from",
    "render",
    "ruleset_owner",
    "sample_seeds",
    "summarise_exact",
    "summarise_samples",
]
