"""Common mass-combat Charms — a Charm pack for ``exalted2e_mass`` (entry point ``mass_charms``).

The WoA Order of War Attack Events leaves three steps to Charms: step 4
(attack reroll), step 6 (defender reroll) and step 9 (counterattacks). The
ruleset asks those decisions only when a pack offers something; this pack
offers the Charms most often used there, as the Excellencies pack does for
individual combat. Motes come from the commander's ``motes`` (a solo unit's
commander is the character itself); too few motes and the Charm is simply
not offered.

- ``war-resurgent`` at the ``attack_reroll`` decision (step 4, the attacker):
  Essence Resurgent on the commander's War roll — 4 motes, the whole attack
  pool rolled again, the better roll kept (the ruleset keeps it).
- ``war-resurgent`` at the ``defense_reroll`` decision (step 6, the defender):
  Essence Resurgent on the defense — 4 motes, the stunt and Charm dice rolled
  at step 5 rolled again, the better kept. Offered only when such dice were
  rolled.
- ``solar-counterattack`` at the ``counterattack`` decision (step 9, the
  defender): a solo unit struck in close combat strikes back — 3 motes; the
  counterattack is resolved as steps 1–8 with roles swapped (the ruleset nests
  it; no counterattack against a counterattack).

Each Charm is used at most once per attack and per token.

What is listed — ``vtt_bridge_declarables`` gives ``rulesets.list`` both
Charms as ``kind: "option"`` (chosen at a decision, never declared). What a
token knows — ``flags.mass_charms.charms`` (``vtt_bridge_token_flags``) lists
the Charms the commander knows; without it, both. A Charm the commander does
not know is not offered.
"""

from .hooks import (
    exalted2e_mass_attack_reroll,
    exalted2e_mass_attack_reroll_options,
    exalted2e_mass_counterattack,
    exalted2e_mass_counterattack_options,
    exalted2e_mass_defense_reroll,
    exalted2e_mass_defense_reroll_options,
)

from .listing import COUNTER, RESURGENT, vtt_bridge_declarables, vtt_bridge_token_flags

__all__ = ["COUNTER", "RESURGENT", "vtt_bridge_declarables", "vtt_bridge_token_flags"]
