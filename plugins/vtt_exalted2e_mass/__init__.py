"""Exalted 2nd edition mass combat, the WoA Order of War Attack Events (seed 000).

The entry point ``exalted2e_mass`` names this module: it carries the
ruleset's own (``trylast``) step implementations. The pieces:

- :mod:`.hookspecs` — one documented hook per War Event (step 8 with its parts A–E);
- :mod:`.rules` — what mass combat adds, as pure functions; dice, solo DVs,
  soak and health tracks come from :mod:`vtt_exalted2e.rules`, shared;
- :mod:`.schemas` — unit token and declaration schemas;
- :mod:`.ruleset` — the steps, the :class:`~vtt_bridge.Ruleset`, sample tokens.
"""

from .ruleset import (
    ATTACK_ROLL,
    DEFENSE_ROLL,
    RULESET,
    exalted2e_mass_apply_defense,
    exalted2e_mass_apply_results,
    exalted2e_mass_attack_reroll,
    exalted2e_mass_attack_reroll_options,
    exalted2e_mass_attack_roll,
    exalted2e_mass_counterattack,
    exalted2e_mass_counterattack_options,
    exalted2e_mass_damage,
    exalted2e_mass_damage_roll,
    exalted2e_mass_declare_attack,
    exalted2e_mass_declare_defense,
    exalted2e_mass_defense_options,
    exalted2e_mass_defense_reroll,
    exalted2e_mass_defense_reroll_options,
    exalted2e_mass_defense_stunt_options,
    exalted2e_mass_hardness,
    exalted2e_mass_might,
    exalted2e_mass_ping,
    exalted2e_mass_raw_damage,
    exalted2e_mass_soak,
    sample_tokens,
    vtt_bridge_rulesets,
)

__all__ = ["ATTACK_ROLL", "DEFENSE_ROLL", "RULESET", "sample_tokens"]

from .odds import vtt_bridge_exact_odds  # noqa: E402,F401 -- exact odds model (vtt_bridge.odds), answers the host hook
