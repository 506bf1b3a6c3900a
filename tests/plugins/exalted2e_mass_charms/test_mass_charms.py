"""The mass Charm pack: steps 4, 6 and 9 of the WoA Order of War Attack Events, scripted dice.

Units as in tests/plugins/exalted2e_mass/mass.py: ``a`` (Magnitude 5, Might 1, 7 attack
dice, raw 4 + successes, soak 2L, 3 health levels) attacks ``b`` (Magnitude 3, War DV 5,
soak 1L, elite); ``SOLO`` a solo Exalt (8 attack dice, Parry DV 6).
"""

from __future__ import annotations

import pytest

from vtt_bridge import InvalidRequest
from vtt_bridge import testing as vt

from ..exalted2e_mass.mass import A, B, PLUGIN, SOLO, merged

HOST = vt.host(PLUGIN, "vtt_exalted2e_mass_charms", entry_points=False)
RICH = {"motes": 10}


def resolve(a=A, b=B, **kw):
    return vt.resolve("exalted2e_mass", {"a": a, "b": b}, attacker="a", targets=["b"], host=HOST, **kw)


def test_essence_resurgent_rerolls_the_commanders_attack_and_keeps_the_better():
    """Seed 000, step 4: "Attacker may activate any Charms or effects that grant a reroll."
    7 dice [1 2 3 4 5 6 6] fail (+2 Magnitude = 2, all stopped by DV 5); rerolled
    [10 9 8 7 1 2 3] = 5 + 2 = 7, − DV 5 = 2: raw 2 + 2 + 2 = 6, − soak 1 = 5 dice."""
    res = resolve(merged(A, commander=RICH), dice=[1, 2, 3, 4, 5, 6, 6] + [10, 9, 8, 7, 1, 2, 3] + [7] * 5,
                  answers={"defense": "war", "attack_reroll": "war-resurgent", "defense_stunt": "decline"})  # fmt: skip
    asked = res.decision("attack_reroll")
    assert asked.decision.token == "a" and asked.options == ["war-resurgent", "decline"]
    assert res.step("attack_reroll").value("successes") == 7
    assert res.outcome["raw_damage"] == 6
    assert res.token_after("a")["commander"]["motes"] == 6


def test_without_the_motes_nothing_is_offered():
    res = resolve(dice=[10, 9, 8, 7, 1, 2, 3] + [7] * 5, answers={"defense": "war", "defense_stunt": "decline"})
    assert [d.key for d in res.decisions] == ["defense", "defense_stunt"]


def test_essence_resurgent_rerolls_the_defenders_stunt_dice():
    """Seed 000, step 6: "Defender may activate any Charms or effects that grant a reroll to
    defense." 7 − DV 5 = 2; the stunt [7 1] = 1: DV 6, 1 left; rerolled [8 9] = 2: DV 7, a miss."""
    res = resolve(b=merged(B, commander=RICH), dice=[10, 9, 8, 7, 1, 2, 3] + [7, 1, 8, 9],
                  answers={"defense": "war", "defense_stunt": "2", "defense_reroll": "war-resurgent"})  # fmt: skip
    asked = res.decision("defense_reroll")
    assert asked.decision.token == "b" and asked.options == ["war-resurgent", "decline"]
    assert res.step("defense_reroll").value("dv") == 7
    assert res.ended == "miss"
    assert res.token_after("b")["commander"]["motes"] == 6


def test_no_defense_reroll_without_step_5_dice():
    res = resolve(b=merged(B, commander=RICH), dice=[10, 9, 8, 7, 1, 2, 3] + [7] * 5,
                  answers={"defense": "war", "defense_stunt": "decline"})  # fmt: skip
    assert "defense_reroll" not in [d.key for d in res.decisions]


def test_a_solo_unit_counterattacks_with_solar_counterattack():
    """Seed 000, step 9: "If the defender elects to use any Counterattack effects, those are
    resolved at this point, reapplying Steps 1 – 8." a's 7 dice [10 9 8 7 1 2 3] = 5, +5
    Magnitude = 10, − Parry DV 6 = 4: raw 2 + 2 + 4 = 8 − soak 3 = 5 dice [1 1 1 1 1] (the
    solo's 8 levels are untouched), Might 1. The counter: 8 dice [10 10 10 1 ...] = 6, −5
    Magnitude = 1, a does nothing: raw Strength 3 + 2 + 1 = 6 − soak 2 = 4 dice (not below the
    ping floor, Overwhelming 4): [7 7 7 7] = 4 levels: a is destroyed."""
    solo = merged(SOLO, commander=RICH)
    res = resolve(b=solo, dice=[10, 9, 8, 7, 1, 2, 3] + [1] * 5 + [10, 10, 10, 1, 1, 1, 1, 1] + [7] * 4,
                  answers={"defense": "parry", "defense_stunt": "decline", "counterattack": "solar-counterattack",
                           "counterattack/defense": "nothing"})  # fmt: skip
    asked = res.decision("counterattack")
    assert asked.decision.token == "b" and asked.options == ["solar-counterattack", "decline"]
    counter = res.step("counterattack").children[0]
    assert counter.record["attacker"] == "b" and counter.record["declaration"]["charms"] == [{"id": "solar-counterattack"}]
    assert counter.outcome["damage"] == 4
    assert res.token_after("a")["conditions"] == ["destroyed"]
    assert res.token_after("b")["commander"]["motes"] == 7
    assert "counterattack/counterattack" not in [d.key for d in res.decisions]


def test_solar_counterattack_is_for_a_solo_unit_in_close_combat():
    def offered(b, declaration):
        res = resolve(b=b, declaration=declaration, seed=3, answers={"defense": "nothing"})
        return [d.key for d in res.decisions if d.key == "counterattack"]

    assert offered(merged(B, commander=RICH), {"attack": "close"}) == []  # a unit, not a character
    assert offered(merged(SOLO, commander=RICH), {"attack": "ranged"}) == []
    assert offered(merged(SOLO, commander={"motes": 2}), {"attack": "close"}) == []


def test_a_reroll_answer_given_without_the_motes_changes_nothing():
    # with 3 motes the reroll is not on offer, so a pre-given answer for it is never used
    res = resolve(merged(A, commander={"motes": 3}), dice=[1] * 7, answers={"defense": "war", "attack_reroll": "war-resurgent"})
    assert "attack_reroll" not in [d.key for d in res.decisions] and res.ended == "miss"
    assert res.token_changes == {}


def test_spending_more_than_the_commander_has_is_refused():
    from vtt_exalted2e_mass_charms import hooks

    class Ctx:
        def __init__(self):
            self.updates = []

        def current(self, token_id):
            return {"commander": {"motes": 2}}

        def token(self, token_id):
            return type("T", (), {"name": "Talon"})()

    with pytest.raises(InvalidRequest) as err:
        hooks._spend(Ctx(), "b", hooks.RESURGENT, hooks.RESURGENT_COST)
    assert err.value.message == "Talon has 2 motes; Essence Resurgent needs 4"


def test_the_shipped_example_strikes_back():
    import json
    from pathlib import Path

    from vtt_bridge import make_host
    from vtt_bridge.cli.resolve import resolve_request

    path = Path(__file__).resolve().parents[3] / "plugins/vtt_exalted2e_mass_charms/examples/cinder_strikes_back.json"
    record = resolve_request(make_host(), json.loads(path.read_text()))
    counter = next(s for s in record["steps"] if s["step"] == "counterattack")
    assert counter["children"][0]["attacker"] == "cinder"
    assert record["changes"]["cinder"]["after"]["commander"]["motes"] == 17


def test_without_the_ruleset_the_pack_still_loads():
    from vtt_bridge import make_host

    host = make_host(plugins=["vtt_exalted2e_mass_charms"], entry_points=False, environ={})
    assert "exalted2e_mass" not in host.rulesets


def test_the_pack_lists_its_charms_and_the_flags_it_keeps():
    """``rulesets.list`` shows both Charms as options of a decision; ``flags.mass_charms.charms``
    says which the commander knows, and a typo is refused naming the field."""
    from vtt_bridge import make_host

    host = make_host(environ={})  # installed: the pack's entry point is ``mass_charms``
    listed = {d.id: d for d in host.declarables("exalted2e_mass") if d.plugin == "mass_charms"}
    assert set(listed) == {"war-resurgent", "solar-counterattack"}
    assert all(d.kind == "option" and d.inert for d in listed.values())
    assert host.load_flags("exalted2e_mass", {"mass_charms": {"charms": ["war-resurgent"]}}) == {
        "mass_charms": {"charms": ["war-resurgent"]}
    }
    with pytest.raises(InvalidRequest) as err:
        host.load_flags("exalted2e_mass", {"mass_charms": {"charms": ["war-resurgant"]}})
    assert list(err.value.details["flags"]["mass_charms"]) == ["charms"]


def test_a_commander_is_offered_only_the_charms_it_knows():
    """With ``flags.mass_charms.charms`` listing only Solar Counterattack, the rich commander's
    failed attack is not offered Essence Resurgent: the roll stands (as in the first test's
    opening roll: 2 successes, all stopped by DV 5)."""
    from vtt_bridge import Token

    rich = vt.make_token("exalted2e_mass", "a", merged(A, commander=RICH), host=HOST).to_dict()
    a = Token.from_dict({**rich, "flags": {"mass_charms": {"charms": ["solar-counterattack"]}}})
    res = vt.resolve("exalted2e_mass", {"a": a, "b": B}, attacker="a", targets=["b"], host=HOST,
                     dice=[1, 2, 3, 4, 5, 6, 6], answers={"defense": "war"})  # fmt: skip
    assert [d.key for d in res.decisions] == ["defense"] and res.ended == "miss"
