"""The engine tests' duel ruleset as a module plugin, loadable by path or entry point."""

from tests.engine.duel import DuelRules

_rules = DuelRules()

vtt_bridge_rulesets = _rules.vtt_bridge_rulesets
vtt_bridge_declarables = _rules.vtt_bridge_declarables
duel_declare = _rules.duel_declare
duel_defense_options = _rules.duel_defense_options
duel_defend = _rules.duel_defend
duel_roll = _rules.duel_roll
duel_reroll_options = _rules.duel_reroll_options
duel_reroll = _rules.duel_reroll
duel_wounds = _rules.duel_wounds
duel_wound = _rules.duel_wound
duel_counter = _rules.duel_counter
