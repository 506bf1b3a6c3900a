"""GODSGLOOM (seed 004): the Attack Test procedure as a vtt_bridge ruleset.

The ``godsgloom`` entry point names this module; importing it brings in the
ruleset's own (``trylast``) step implementations and its registration hook.
"""

from .ruleset import (
    RULESET,
    godsgloom_active_pool_reroll,
    godsgloom_active_pool_reroll_options,
    godsgloom_active_single_reroll,
    godsgloom_active_single_reroll_options,
    godsgloom_auto_successes,
    godsgloom_cancel,
    godsgloom_criticals,
    godsgloom_inactive_pool_reroll,
    godsgloom_inactive_pool_reroll_options,
    godsgloom_inactive_single_reroll,
    godsgloom_inactive_single_reroll_options,
    godsgloom_inflict,
    godsgloom_reroll,
    godsgloom_roll,
    vtt_bridge_rulesets,
)

__all__ = [
    "RULESET",
    "godsgloom_active_pool_reroll",
    "godsgloom_active_pool_reroll_options",
    "godsgloom_active_single_reroll",
    "godsgloom_active_single_reroll_options",
    "godsgloom_auto_successes",
    "godsgloom_cancel",
    "godsgloom_criticals",
    "godsgloom_inactive_pool_reroll",
    "godsgloom_inactive_pool_reroll_options",
    "godsgloom_inactive_single_reroll",
    "godsgloom_inactive_single_reroll_options",
    "godsgloom_inflict",
    "godsgloom_reroll",
    "godsgloom_roll",
    "vtt_bridge_rulesets",
]

from .odds import vtt_bridge_exact_odds  # noqa: E402,F401 -- exact odds model (vtt_bridge.odds), answers the host hook
