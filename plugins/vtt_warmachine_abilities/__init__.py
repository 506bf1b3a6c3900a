"""Warmachine MkIII abilities: Shield Guard and damage transference, as a pack.

An ordinary plugin for the ``warmachine_mk3`` ruleset (entry point
``warmachine_abilities``), written against the public API only. It changes two
steps and nothing else:

- step 6, ``redirect``: Shield Guard offers each eligible guard as an option of
  the ``redirect`` decision, asked to the guard's owner, and sets
  ``ctx.redirect_to`` when one steps in;
- step 9g, ``damage_transfer``: damage transference offers the warlock's owner
  each warbeast that may take the damage, and sets ``ctx.damage_to``.

It lists both abilities for ``rulesets.list`` (``vtt_bridge_declarables``, as
``kind: "option"``: offered at a decision, never declared) and keeps its own
token flags, ``flags.warmachine_abilities`` (``vtt_bridge_token_flags``):
``shield_guard`` (the model has Shield Guard) and ``transference`` (a warlock
may transfer damage; default true). It also reads the ruleset's
``shield_guard``, ``shield_guard_used`` and a warlock's ``battlegroup``.
"""

from .listing import vtt_bridge_declarables, vtt_bridge_token_flags
from .shield_guard import warmachine_mk3_redirect, warmachine_mk3_redirect_options
from .transference import warmachine_mk3_damage_transfer, warmachine_mk3_transfer_damage_options

__all__ = [
    "vtt_bridge_declarables",
    "vtt_bridge_token_flags",
    "warmachine_mk3_damage_transfer",
    "warmachine_mk3_redirect",
    "warmachine_mk3_redirect_options",
    "warmachine_mk3_transfer_damage_options",
]
