"""Warmachine rules remembered per token snapshot (``vtt_bridge.per_snapshot``) answer as the rules do."""

from __future__ import annotations

from vtt_bridge import freeze
from vtt_warmachine_mk3 import geometry, rules


def test_remembered_rules_answer_as_the_rule_does():
    jack = freeze({"MAT": 7, "position": {"x": 0, "y": 0}, "base": 30,
                   "weapons": [{"name": "Fist", "kind": "melee", "PS": 14}]})  # fmt: skip
    target = freeze({"DEF": 12, "position": {"x": 3, "y": 4}, "base": 30})
    fist = rules.weapon_of(jack, "Fist")
    assert fist is rules.weapon_of(jack, "Fist")  # shared: frozen
    assert rules.weapon_of(jack, "Axe") is None and rules.weapon_of(jack, "Axe") is None
    assert geometry.gap(jack, target) == geometry.edge_distance(
        geometry.point_of(jack), 30, geometry.point_of(target), 30
    )
    numbers = rules.attack_numbers(jack, target, fist, freeze({}))
    assert (numbers.modifier, numbers.defense) == (7, 12)
    jack_with_focus = freeze({"kind": "warjack", "focus": 2})
    assert rules.boost_cost(jack_with_focus) is rules.boost_cost(freeze({"kind": "warjack", "focus": 2}))  # shared
