"""The engine's test ruleset ``duel`` as a loadable plugin module, with sample tokens.

``vtt-bridge --plugin tests.server.duel_plugin serve --demo`` loads it; the
server tests pass :func:`rules` (a plugin object) instead.
"""

from __future__ import annotations

import dataclasses

from tests.engine.duel import RULESET, DuelRules
from vtt_bridge import hookimpl


def sample_tokens() -> list[dict]:
    return [
        {
            "id": "a",
            "name": "Attacker",
            "ruleset": "duel",
            "ownership": {"alice": 3},
            "system": {"hp": 10, "rerolls": 0},
        },
        {"id": "b", "name": "Defender", "ruleset": "duel", "ownership": {"bob": 3}, "system": {"hp": 10, "rerolls": 0}},
        {"id": "c", "name": "Bystander", "ruleset": "duel", "ownership": {}, "system": {"hp": 5, "rerolls": 0}},
    ]


DEMO_RULESET = dataclasses.replace(RULESET, sample_tokens=sample_tokens)


class DemoDuelRules(DuelRules):
    @hookimpl
    def vtt_bridge_rulesets(self):
        return [DEMO_RULESET]


def rules() -> DemoDuelRules:
    return DemoDuelRules()


# Registered as a module (``--plugin tests.server.duel_plugin``), pluggy finds
# the hook implementations among the module's attributes: bind them here.
_RULES = DemoDuelRules()
vtt_bridge_rulesets = _RULES.vtt_bridge_rulesets
duel_declare = _RULES.duel_declare
duel_defense_options = _RULES.duel_defense_options
duel_defend = _RULES.duel_defend
duel_roll = _RULES.duel_roll
duel_reroll_options = _RULES.duel_reroll_options
duel_reroll = _RULES.duel_reroll
duel_wounds = _RULES.duel_wounds
duel_wound = _RULES.duel_wound
duel_counter = _RULES.duel_counter
