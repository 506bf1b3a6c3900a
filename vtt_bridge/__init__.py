"""vtt_bridge — attack resolution for virtual tabletops.

The public API: everything a ruleset or a Charm pack needs is importable from
here, and only from here.
"""

from .engine.context import AttackContext, StashKey
from .engine.dice import Dice, Roll
from .engine.foundry import roll_to_foundry
from .engine.resolution import Engine, Resolution, parse_answer
from .engine.steps import Answer, Ask, Decision, Declarable, Option, Param, Ruleset, Step
from .engine.tokens import FrozenDict, Token, freeze, thaw
from .errors import (
    Conflict,
    DiceExhausted,
    Forbidden,
    IllegalTransition,
    InternalError,
    InvalidRequest,
    NotFound,
    PluginError,
    PluginValidationError,
    SnapshotMutation,
    UnknownRuleset,
    VTTError,
    error_envelope,
    ok_envelope,
)
from .hookspecs import hookimpl, hookspec
from .memo import per_snapshot
from .odds import AttackOutcome, Distribution, ExactOdds, OddsRequest, Probe, outcome_from
from .plugins import Host, PluginInfo, make_host
from .schemas import CharmUse, StrictSchema, TokenSchema, field_help

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Ask",
    "AttackContext",
    "AttackOutcome",
    "CharmUse",
    "Conflict",
    "Decision",
    "Declarable",
    "Dice",
    "DiceExhausted",
    "Distribution",
    "Engine",
    "ExactOdds",
    "Forbidden",
    "FrozenDict",
    "Host",
    "IllegalTransition",
    "InternalError",
    "InvalidRequest",
    "NotFound",
    "OddsRequest",
    "Option",
    "Param",
    "PluginError",
    "PluginInfo",
    "PluginValidationError",
    "Probe",
    "Resolution",
    "Roll",
    "Ruleset",
    "SnapshotMutation",
    "StashKey",
    "Step",
    "StrictSchema",
    "Token",
    "TokenSchema",
    "UnknownRuleset",
    "VTTError",
    "error_envelope",
    "field_help",
    "freeze",
    "hookimpl",
    "hookspec",
    "make_host",
    "ok_envelope",
    "outcome_from",
    "parse_answer",
    "per_snapshot",
    "roll_to_foundry",
    "thaw",
]
