"""A Charm pack as a new author writes it from docs/plugins.md: "Tiger Claw Strike"
(made up for the test) adds 2 dice to the attack roll when declared.

It acts only at ``exalted2e_attack_roll``, before the ruleset's own roll, through
``ctx.attack_pool``: a hook the exalted2e exact model runs for real (``probed``), so
the odds of an attack declaring it stay exact.
"""

from vtt_bridge import Declarable, hookimpl

CHARM = "tiger-claw-strike"


@hookimpl
def vtt_bridge_declarables(ruleset):
    if ruleset != "exalted2e":
        return None
    return [Declarable(id=CHARM, label="Tiger Claw Strike", plugin="tests.odds.claw_pack", description="+2 attack dice", inert=True)]


@hookimpl
def exalted2e_attack_roll(ctx) -> None:
    if ctx.declared(CHARM) is not None:
        ctx.attack_pool += 2
