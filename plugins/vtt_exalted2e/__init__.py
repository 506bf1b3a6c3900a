"""Exalted 2nd edition, individual combat (seed 002) — the ``exalted2e`` ruleset.

The entry point ``exalted2e`` names this module: it carries the ruleset's
own (``trylast``) step implementations. The pieces:

- :mod:`.hookspecs` — one documented hook per Order of Attack Event;
- :mod:`.rules` — the rules as pure functions (also used by ``exalted2e_mass``);
- :mod:`.schemas` — token and declaration schemas;
- :mod:`.ruleset` — the steps, the :class:`~vtt_bridge.Ruleset`, sample tokens.
"""

from .ruleset import (
    RULESET,
    exalted2e_apply_defense,
    exalted2e_apply_results,
    exalted2e_attack_reroll,
    exalted2e_attack_reroll_options,
    exalted2e_attack_roll,
    exalted2e_bystander_options,
    exalted2e_counterattack,
    exalted2e_counterattack_options,
    exalted2e_damage,
    exalted2e_damage_effect_options,
    exalted2e_declare_attack,
    exalted2e_declare_defense,
    exalted2e_defense_options,
    exalted2e_defense_reroll,
    exalted2e_defense_reroll_options,
    exalted2e_defense_stunt_options,
    exalted2e_raw_damage,
    exalted2e_stray_blow,
    sample_tokens,
    vtt_bridge_rulesets,
)

__all__ = ["RULESET", "sample_tokens"]

from .odds import vtt_bridge_exact_odds  # noqa: E402,F401 -- exact odds model (vtt_bridge.odds), answers the host hook
