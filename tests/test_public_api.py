"""The public API: what a ruleset or pack may import. Changing it is a decision, made here."""

import vtt_bridge
import vtt_bridge.testing

PUBLIC = [
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

TESTING = [
    "Asked",
    "Change",
    "HookCall",
    "HookRecorder",
    "Result",
    "StepView",
    "host",
    "make_token",
    "policy",
    "resolve",
    "sample_tokens",
    "tokens",
]


def test_the_package_exports_exactly_the_public_api():
    assert sorted(vtt_bridge.__all__) == PUBLIC


def test_every_exported_name_exists():
    for name in vtt_bridge.__all__:
        assert getattr(vtt_bridge, name, None) is not None, name


def test_the_test_kit_exports_exactly_its_api():
    assert sorted(vtt_bridge.testing.__all__) == TESTING
    for name in TESTING:
        member = getattr(vtt_bridge.testing, name)
        assert (member.__doc__ or "").strip(), f"vtt_bridge.testing.{name} has no docstring"


def test_star_import_gives_the_public_api_and_nothing_private():
    namespace: dict = {}
    exec("from vtt_bridge import *", namespace)
    assert sorted(k for k in namespace if not k.startswith("__")) == PUBLIC
