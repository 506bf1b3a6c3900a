"""highest_die (seed 003): opposed mixed-size pools as a vtt_bridge ruleset.

The ``highest_die`` entry point names this module; importing it brings in the
ruleset's own (``trylast``) step implementations and its registration hook.
"""

from .ruleset import (
    RULESET,
    highest_die_damage,
    highest_die_declare_attack,
    highest_die_declare_defense,
    highest_die_defense_options,
    highest_die_effects,
    highest_die_roll,
    highest_die_soak,
    highest_die_successes,
    vtt_bridge_rulesets,
)

__all__ = [
    "RULESET",
    "highest_die_damage",
    "highest_die_declare_attack",
    "highest_die_declare_defense",
    "highest_die_defense_options",
    "highest_die_effects",
    "highest_die_roll",
    "highest_die_soak",
    "highest_die_successes",
    "vtt_bridge_rulesets",
]

from .odds import vtt_bridge_exact_odds  # noqa: E402,F401 -- exact odds model (vtt_bridge.odds), answers the host hook
