"""Serpent-Sting Fang, an example Charm pack for the ``exalted2e`` ruleset.

Serpent-Sting Fang is made up for this example: declared with an attack
(``"charms": [{"id": "serpent-sting-fang"}]``), it adds 1 to the attack's raw
damage at step 7. The pack changes that one step and nothing else.
"""

from vtt_bridge import Declarable, hookimpl

CHARM = "serpent-sting-fang"


@hookimpl
def vtt_bridge_declarables(ruleset):
    """What an attacker may declare: the Charm, listed in ``rulesets.list`` for players to pick.

    ``inert``: the pack changes nothing unless the Charm is declared, so the exact odds
    of an attack without it stay exact while the pack is installed.
    """
    if ruleset != "exalted2e":
        return None
    return [
        Declarable(
            id=CHARM,
            label="Serpent-Sting Fang",
            plugin="serpent_sting_fang",
            description="+1 raw damage at step 7",
            inert=True,
        )
    ]


@hookimpl(wrapper=True)
def exalted2e_raw_damage(ctx):
    """Step 7: after the ruleset has computed raw damage, add 1 if the Charm was declared."""
    result = yield  # the ruleset's own implementation runs here
    if ctx.declared(CHARM) is not None:
        ctx.raw_damage += 1  # traced: "raw_damage: 10 → 11 (serpent_sting_fang)"
        ctx.note("Serpent-Sting Fang: +1 raw damage")
    return result
