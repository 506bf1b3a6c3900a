"""The whole sequence, steps 1–4, 6, 8 and 11–14 (seed 001, Appendix A)."""

import pytest

from vtt_bridge import InvalidRequest, NotFound, hookimpl

from .kit import after, at, attack, grunt, jack, run, step, steps, tokens

FULL_HIT = [
    "declare_attack", "targeted", "range_check", "auto_hit_miss",
    "attack_rolls", "attack_roll[a]", "attack_roll_dice_count[a]", "attack_roll_dice[a]",
    "attack_roll_remove_dice[a]", "attack_roll_hit_or_miss[a]", "attack_roll_reroll[a]",
    "redirect", "aoe", "hit_triggers",
    "damage_rolls", "damage_roll[a]", "damage_roll_dice_count[a]", "damage_roll_dice[a]",
    "damage_roll_remove_dice[a]", "damage_roll_would_damage[a]", "damage_roll_reroll[a]",
    "fails_to_exceed_arm[a]", "damage_transfer[a]",
    "damage_application", "apply_damage[a]", "suffered_damage[a]", "disabled[a]", "boxed[a]",
    "destroyed[a]", "remove[a]",
    "attack_resolved", "after_active", "after_inactive", "after_active_attacks",
]


def test_a_hit_that_destroys_a_grunt_walks_every_step_in_order():
    # RAT 5 + 4+3 = 12 against DEF 12: hit; POW 12 + 3+2 = 17 against ARM 14: 3 damage, one box.
    record = run(tokens(jack(), grunt("a")), dice=[4, 3, 3, 2])
    assert steps(record) == FULL_HIT
    assert record["outcome"]["hit"] is True
    assert record["outcome"]["damage"] == 1
    assert record["outcome"]["conditions"] == {"a": ["disabled", "boxed", "destroyed"]}
    assert record["outcome"]["models"]["a"] == {
        "hit": True, "how": "roll", "roll": 12, "needed": 12, "critical": False,
        "pow": 12, "damage_roll": 17, "arm": 14, "damage": 1,
    }
    changed = after(record, "a")
    assert (changed["marked"], changed["disabled"], changed["boxed"], changed["destroyed"], changed["removed"]) == (
        1, True, True, True, True,
    )
    # The jack has focus: both boosts were offered and took the rules' default.
    assert [(d["key"], d["answer"]["option"], d["how"]) for d in record["decisions"]] == [
        ("boost_attack[a]", "decline", "default"),
        ("boost_damage[a]", "decline", "default"),
    ]


def test_the_card_numbers_the_steps_as_the_appendix_does():
    record = run(tokens(jack(), grunt("a")), dice=[4, 3, 3, 2])
    top = [s["title"] for s in record["steps"] if not s.get("item")]
    numbers = [t.split(".")[0] for t in top]
    assert numbers == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14"]
    subs = [s["title"].split(".")[0] for s in record["steps"] if s.get("item")]
    assert subs[:6] == ["5", "5a", "5b", "5c", "5d", "5e"]
    assert subs[6:14] == ["9", "9a", "9b", "9c", "9d", "9e", "9f", "9g"]
    assert subs[14:] == ["10", "10a", "10b", "10c", "10d", "10e"]


def test_a_miss_still_runs_steps_6_to_14_and_changes_nothing():
    record = run(tokens(jack(), grunt("a")), dice=[2, 3])
    assert steps(record)[11:] == [
        "redirect", "aoe", "hit_triggers", "damage_rolls", "damage_application",
        "attack_resolved", "after_active", "after_inactive", "after_active_attacks",
    ]
    assert record["outcome"]["hit"] is False and record["outcome"]["damage"] == 0
    assert record["outcome"]["conditions"] == {}
    assert record["changes"] == {}
    assert record["ended"] is None


# -- step 1 -------------------------------------------------------------------


def test_declaring_a_weapon_the_attacker_does_not_have_is_refused_with_its_weapons():
    with pytest.raises(InvalidRequest) as err:
        attack(tokens(jack(), grunt("a")), weapon="Railgun").run()
    assert "Railgun" in err.value.message
    assert "Fist" in err.value.details["declaration"]["weapon"][0]


def test_attacking_a_destroyed_model_is_refused():
    with pytest.raises(InvalidRequest):
        attack(tokens(jack(), grunt("a", destroyed=True))).run()


def test_a_model_under_the_template_must_be_on_the_table():
    with pytest.raises(NotFound):
        attack(tokens(jack(), grunt("a")), weapon="Flamer", models_under_template=["ghost"]).run()


def test_the_declaration_is_written_on_the_card():
    record = run(tokens(jack(), grunt("a")), dice=[2, 3])
    notes = [n["text"] for n in step(record, "declare_attack")["notes"]]
    assert notes[0] == "Jack makes a ranged attack with Cannon (ranged, RNG 10, POW 12)"
    assert notes[1] == "target: A"


def test_the_declaration_schema_refuses_unknown_modifiers():
    with pytest.raises(InvalidRequest) as err:
        attack(tokens(jack(), grunt("a")), modifiers={"aimng": True})
    assert "aimng" in err.value.details["declaration"]["modifiers"]


# -- step 2 -------------------------------------------------------------------


class Targeted:
    """A pack reacting to the model being targeted (before any roll)."""

    @hookimpl
    def warmachine_mk3_targeted(self, ctx):
        ctx.note(f"{ctx.defender.name} is targeted")
        ctx.target_def = 99  # overwritten at step 5: DEF is set per model there


TARGETED = Targeted()


def test_step_2_is_where_packs_react_to_targeting():
    record = run(tokens(jack(), grunt("a")), dice=[2, 3], packs=(TARGETED,))
    assert step(record, "targeted")["notes"][0]["text"] == "A is targeted"
    assert step(record, "targeted")["notes"][0]["plugin"] == "Targeted"


# -- step 3 -------------------------------------------------------------------


def test_out_of_range_misses_without_rolls_and_goes_to_step_6():
    # 50 mm and 30 mm bases, centres 12" apart: 12 - 0.984 - 0.591 = 10.43" > RNG 10.
    record = run(tokens(jack(), grunt("a", position=at(0, 12))), dice=[])
    assert steps(record)[:4] == ["declare_attack", "targeted", "range_check", "redirect"]
    assert "ended" not in step(record, "range_check")
    assert record["outcome"]["models"]["a"] == {"hit": False, "how": "out of range"}
    assert record["dice_used"] == 0


def test_at_exactly_the_weapon_range_the_target_is_in_range():
    # 10" between the base edges: 10 + 0.984 + 0.591 between the centres.
    centre = 10 + 25 / 25.4 + 15 / 25.4
    record = run(tokens(jack(), grunt("a", position=at(0, centre))), dice=[2, 3])
    assert "attack_rolls" in steps(record)


class LongRange:
    """A pack extending the weapon's range by 3" at step 3."""

    @hookimpl
    def warmachine_mk3_range_check(self, ctx):
        ctx.weapon_rng += 3


LONG_RANGE = LongRange()


def test_a_pack_extends_the_range_before_the_ruleset_measures():
    record = run(tokens(jack(), grunt("a", position=at(0, 12))), dice=[2, 3], packs=(LONG_RANGE,))
    assert "attack_rolls" in steps(record)
    assert {"number": "weapon_rng", "from": 10.0, "to": 13.0, "plugin": "LongRange"} in step(record, "range_check")["changes"]


# -- step 4 -------------------------------------------------------------------


def test_stealth_makes_a_ranged_attack_from_beyond_5_inches_miss_without_a_roll():
    # 8 - 0.984 - 0.591 = 6.43" away
    record = run(tokens(jack(), grunt("a", position=at(0, 8), stealth=True)), dice=[])
    assert step(record, "attack_roll", "a")["ended"] == "missed automatically: no attack roll"
    assert record["outcome"]["models"]["a"]["how"] == "automatic"
    assert record["outcome"]["hit"] is False
    assert record["dice_used"] == 0


def test_stealth_does_not_help_within_5_inches():
    record = run(tokens(jack(), grunt("a", position=at(0, 6), stealth=True)), dice=[4, 3, 1, 1])
    assert record["outcome"]["models"]["a"]["how"] == "roll"
    assert record["outcome"]["hit"] is True


def test_a_declared_automatic_hit_needs_no_attack_roll():
    # only the damage roll is rolled: 6+6 + 12 - 14 = 10
    record = run(tokens(jack(), grunt("a")), dice=[6, 6], modifiers={"auto_hit": True})
    assert record["outcome"]["models"]["a"]["how"] == "automatic"
    assert record["outcome"]["models"]["a"]["damage_roll"] == 24
    assert "attack_roll_dice[a]" not in steps(record)


# -- step 6 (the ruleset's own part; Shield Guard is in the pack's tests) -------


class Bodyguard:
    """A test pack that has the model "g" hit instead, whatever happened."""

    @hookimpl
    def warmachine_mk3_redirect(self, ctx):
        ctx.redirect_to = "g"


BODYGUARD = Bodyguard()


def test_without_a_pack_step_6_asks_nothing_and_changes_nothing():
    record = run(tokens(jack(focus=0), grunt("a"), grunt("g", position=at(1, 1.5))), dice=[4, 3, 1, 1])
    assert record["decisions"] == []
    assert record["outcome"]["models"]["a"]["hit"] is True
    assert "g" not in record["outcome"]["models"]


def test_a_model_set_as_redirect_to_is_hit_directly_instead_of_the_target():
    table = tokens(jack(focus=0), grunt("a"), grunt("g", position=at(1, 1.5)))
    # hit a (4+3 +5 = 12), then the damage goes to g: 3+2 + 12 - 14 = 3
    record = run(table, dice=[4, 3, 3, 2], packs=(BODYGUARD,))
    models = record["outcome"]["models"]
    assert models["a"]["hit"] is False and models["a"]["how"] == "redirected to g"
    assert models["g"] == {"hit": True, "how": "redirected", "direct": True, "critical": False, "pow": 12,
                           "damage_roll": 17, "arm": 14, "damage": 1}
    assert record["outcome"]["damage"] == 0  # nothing reached the target
    assert after(record, "g")["destroyed"] is True
    assert "a" not in record["changes"]


# -- step 8 -------------------------------------------------------------------


def test_a_critical_knockdown_knocks_the_model_down_at_step_8():
    # Hammer: MAT 7 + 3+3 = 13 hits DEF 12, a critical; POW 6 + STR 11 + 1+1 = 19 - ARM 20 = no damage
    record = run(tokens(jack(), grunt("a", ARM=20)), weapon="Hammer", dice=[3, 3, 1, 1])
    assert record["outcome"]["critical"] is True
    assert record["outcome"]["conditions"] == {"a": ["knocked_down"]}
    assert after(record, "a")["knocked_down"] is True
    assert "knocked down" in step(record, "hit_triggers")["notes"][0]["text"]


def test_a_critical_without_a_critical_effect_changes_nothing():
    record = run(tokens(jack(), grunt("a", ARM=30)), dice=[4, 4, 1, 1])
    assert record["outcome"]["critical"] is True
    assert record["changes"] == {}


def test_other_critical_effects_are_listed_for_the_gm():
    fire = {"name": "Torch", "kind": "ranged", "RNG": 8, "POW": 10, "critical": "Critical Fire"}
    record = run(tokens(jack(weapons=[fire]), grunt("a", ARM=30)), weapon="Torch", dice=[4, 4, 1, 1])
    assert record["outcome"]["critical_effects"] == {"a": "Critical Fire"}


# -- steps 11–14 ------------------------------------------------------------------


class Afterwards:
    """A pack with an effect at each of steps 12, 13 and 14."""

    @hookimpl
    def warmachine_mk3_after_active(self, ctx):
        ctx.note("12")

    @hookimpl
    def warmachine_mk3_after_inactive(self, ctx):
        ctx.note("13")

    @hookimpl
    def warmachine_mk3_after_active_attacks(self, ctx):
        ctx.note("14")


AFTERWARDS = Afterwards()


def test_after_the_attack_the_active_then_inactive_then_attacking_effects_run_even_after_a_miss():
    record = run(tokens(jack(), grunt("a")), dice=[1, 2], packs=(AFTERWARDS,))
    ran = [(s["step"], [n["text"] for n in s["notes"]]) for s in record["steps"][-3:]]
    assert ran == [("after_active", ["12"]), ("after_inactive", ["13"]), ("after_active_attacks", ["14"])]
    assert step(record, "attack_resolved")["notes"][0]["text"] == "the attack missed"


# -- a pack's follow-up attack at step 14, nested ----------------------------------


class FollowUp:
    """A test pack: after a hit, the attacker makes one more attack at "b" (step 14)."""

    @hookimpl
    def warmachine_mk3_after_active_attacks(self, ctx):
        if ctx.kind == "attack" and ctx.outcome["hit"]:
            ctx.nest(kind="follow_up", attacker=ctx.attacker.id, targets=["b"], declaration={"weapon": "Fist"})


FOLLOW_UP = FollowUp()


def test_an_attack_made_after_the_attack_is_a_nested_resolution_sharing_the_changes():
    table = tokens(jack(focus=0), grunt("a"), grunt("b", position=at(1.5, 0)))
    # first attack: hit a and destroy it; follow-up: MAT 7 + 3+3 hits b, 1+1 + 14 = 16 - 14 = 2
    record = run(table, dice=[4, 3, 3, 2, 3, 3, 1, 1], packs=(FOLLOW_UP,))
    child = step(record, "after_active_attacks")["children"][0]
    assert child["kind"] == "follow_up" and child["targets"] == ["b"]
    assert child["outcome"]["conditions"] == {"b": ["disabled", "boxed", "destroyed"]}
    assert set(record["changes"]) == {"a", "b"}


# -- the demo table ------------------------------------------------------------------


def test_the_sample_tokens_are_valid_and_a_seeded_attack_is_replayable():
    from vtt_bridge import Token

    from vtt_warmachine_mk3 import RULESET
    from vtt_warmachine_mk3.schemas import System

    table = {}
    for raw in RULESET.sample_tokens():
        table[raw["id"]] = Token.from_dict({**raw, "system": System().load(raw["system"])})
    from .kit import host

    def once():
        res = host().start("warmachine_mk3", table, attacker="ironclad", targets=["juggernaut"],
                           declaration={"weapon": "Hammer"}, seed=2024)
        res.run()
        return res.record

    first, second = once(), once()
    assert first == second
    assert first["dice"] == "seeded" and first["dice_used"] >= 2
