"""The Solar Excellencies and Solar Counterattack — a Charm pack for ``exalted2e``.

An ordinary plugin (entry point ``excellencies``) using only the public API.
Motes come from the token's ``motes``; a token that lacks them, a purchase
over the cap, or Essence Resurgent combined with another Excellency on the
same roll or DV is refused with ``invalid_request`` naming the Charm
(``details["charm"]``).

Attacking — declared in the declaration's ``charms`` (step 1, paid then):

- ``{"id": "first-excellency", "dice": 3}`` — Essence Overwhelming: 1 mote
  per die added to the attack roll (step 3);
- ``{"id": "second-excellency", "successes": 2}`` — Essence Triumphant: 2
  motes per automatic success (step 3);
- together at most Dexterity + the attack's Ability dice, a success counting
  as two;
- Essence Resurgent (4 motes) is a reroll effect, so it is never declared: it
  is offered at the ``attack_reroll`` decision (step 4, option
  ``third-excellency``) when no other Excellency aids the roll, rerolls the
  whole pool and keeps the better roll.

Defending — carried by the defender's answer to the ``defense`` decision
(step 2), whose ``dodge`` and ``parry`` options list these params::

    {"option": "parry", "params": {"first_excellency": 2, "second_excellency": 1}}

- ``first_excellency``: dice rolled at step 5 with any stunt dice (the
  ``defense_stunt`` answer, asked after the attack roll), successes
  adding to DV (1 mote each);
- ``second_excellency``: points of DV (2 motes each);
- together at most Dexterity + the DV's Ability (Dodge, or the parry weapon's);
- Essence Resurgent on a DV is offered at the ``defense_reroll`` decision
  (step 6, when DV did not stop the attack and no other Excellency aided it):
  4 motes, + half the Ability (rounded down) to DV.

What is listed — ``vtt_bridge_declarables`` gives ``rulesets.list`` the two
declarable Excellencies with their typed ``dice`` / ``successes`` parameters,
and Essence Resurgent and Solar Counterattack as ``kind: "option"`` (chosen at
a decision, never declared). All are ``inert``: an attack declaring none of
them is unchanged at the rules' default answers.

What a token knows — ``flags.excellencies.charms`` (``vtt_bridge_token_flags``)
lists the Excellencies a character knows; without it a token knows them all.
A Charm the character does not know is not offered, and declaring it is
``invalid_request``.

Counterattacking — ``solar-counterattack`` is offered at the
``counterattack`` decision (step 9) against a close-combat attack when the
defender has 3 motes: the defender strikes back with a close-combat weapon
(answer param ``weapon``) as a nested ``counterattack`` resolution.
"""

from .hooks import (
    exalted2e_attack_reroll,
    exalted2e_attack_reroll_options,
    exalted2e_attack_roll,
    exalted2e_counterattack,
    exalted2e_counterattack_options,
    exalted2e_declare_attack,
    exalted2e_declare_defense,
    exalted2e_defense_options,
    exalted2e_defense_reroll,
    exalted2e_defense_reroll_options,
    vtt_bridge_declarables,
    vtt_bridge_token_flags,
)

__all__: list[str] = []
