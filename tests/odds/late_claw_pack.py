"""The same Charm as ``claw_pack``, but adding 2 to the attack's successes after the
roll (step 4): the exact model cannot know what a hook there does with the dice, so the
odds of an attack declaring it are Monte Carlo's."""

from vtt_bridge import Declarable, hookimpl

CHARM = "late-claw-strike"


@hookimpl
def vtt_bridge_declarables(ruleset):
    if ruleset != "exalted2e":
        return None
    return [Declarable(id=CHARM, label="Late Claw Strike", plugin="tests.odds.late_claw_pack", description="+2 successes", inert=True)]


@hookimpl
def exalted2e_attack_reroll(ctx) -> None:
    if ctx.declared(CHARM) is not None:
        ctx.attack_successes += 2
