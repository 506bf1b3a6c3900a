"""Warmachine MkIII abilities: rerolls, Shield Guard and damage transference, as a pack.

An ordinary plugin for the ``warmachine_mk3`` ruleset (entry point
``warmachine_abilities``), written against the public API only. It changes
four steps and nothing else:

- steps 5e and 9e, ``attack_roll_reroll`` and ``damage_roll_reroll``: the
  common reroll sources, offered to the attacker's owner at the
  ``reroll_attack`` / ``reroll_damage`` decisions — the attacking model's own
  ability (``reroll_attack``: its missed attack rolls; ``reroll_damage``: its
  damage rolls; each roll once), and a friendly model's ability granting one
  reroll per attack to models within ``grants_reroll`` inches;

- step 6, ``redirect``: Shield Guard offers each eligible guard as an option of
  the ``redirect`` decision, asked to the guard's owner, and sets
  ``ctx.redirect_to`` when one steps in;
- step 9g, ``damage_transfer``: damage transference offers the warlock's owner
  each warbeast that may take the damage, and sets ``ctx.damage_to``.

It lists its abilities for ``rulesets.list`` (``vtt_bridge_declarables``, as
``kind: "option"``: offered at a decision, never declared) and keeps its own
token flags, ``flags.warmachine_abilities`` (``vtt_bridge_token_flags``):
``reroll_attack``, ``reroll_damage``, ``grants_reroll`` (the reroll
sources), ``shield_guard`` (the model has Shield Guard) and ``transference``
(a warlock may transfer damage; default true). The ruleset's own
``reroll_attack``, ``reroll_damage``, ``grants_reroll`` and ``shield_guard``
still count; it also reads ``shield_guard_used`` and a warlock's
``battlegroup``.
"""

from .listing import vtt_bridge_declarables, vtt_bridge_token_flags

from .rerolls import (
    warmachine_mk3_attack_roll_reroll,
    warmachine_mk3_damage_roll_reroll,
    warmachine_mk3_reroll_attack_options,
    warmachine_mk3_reroll_damage_options,
)
from .shield_guard import warmachine_mk3_redirect, warmachine_mk3_redirect_options
from .transference import warmachine_mk3_damage_transfer, warmachine_mk3_transfer_damage_options

__all__ = [
    "vtt_bridge_declarables",
    "vtt_bridge_token_flags",
    "warmachine_mk3_attack_roll_reroll",
    "warmachine_mk3_damage_roll_reroll",
    "warmachine_mk3_reroll_attack_options",
    "warmachine_mk3_reroll_damage_options",
    "warmachine_mk3_damage_transfer",
    "warmachine_mk3_redirect",
    "warmachine_mk3_redirect_options",
    "warmachine_mk3_transfer_damage_options",
]
