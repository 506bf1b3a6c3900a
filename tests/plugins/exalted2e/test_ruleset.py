"""The exalted2e ruleset step by step, with scripted dice (the core alone: the pack is blocked).

The sample tokens (seed 002's examples): Anoria (Solar: Dex 4, Dodge 4, Ess 5,
Martial Arts 5, Melee 3, Str 3; fist, kick, daiklave +3 Acc 5L), the mortal
soldier (Dex 2, Dodge 3, Ess 1, Melee 2; spear 3L, short bow; 4B/2L armor,
target shield), the Immaculate monk (Dex 3, MA 4, Dodge 2, Ess 2, Sta 3; fist
+2, seven-section staff +3), a brigand (an extra), a sorcerer (Hardness 6L/12B).
"""

import pytest

from vtt_bridge import InvalidRequest, Option, hookimpl, make_host

from .helpers import after, changes, resolve, start, step, tokens, track

FIST = {"name": "fist", "ability": "martial_arts", "accuracy": 1, "damage": 0, "damage_type": "B", "defense": 2, "unarmed": True}


@pytest.fixture(scope="module")
def host():
    return make_host(block=["excellencies"])


# -- a whole attack, every step --------------------------------------------------


def test_daiklave_on_the_soldier_every_step_with_exact_numbers(host):
    record = resolve(
        host,
        "anoria",
        "soldier",
        {"weapon": "daiklave"},
        dice=[10, 9, 8, 7, 1, 2, 3, 4, 5, 6] + [10, 7, 7, 1, 2, 3, 4, 5],
    )
    assert [s["step"] for s in record["steps"]] == [
        "declare_attack", "declare_defense", "attack_roll", "attack_reroll", "apply_defense",
        "defense_reroll", "raw_damage", "damage", "counterattack", "apply_results",
    ]  # fmt: skip
    # 1. Dexterity 4 + Melee 3 + Accuracy 3
    assert changes(record, "declare_attack") == {"attack_pool": (0, 10)}
    # 2. mortal, rounds down: Dodge (2+3)/2 = 2, Parry (2+2+1)/2 = 2; target shield +1 each; tie -> parry
    assert changes(record, "declare_defense") == {
        "dodge_dv": (0, 3), "parry_dv": (0, 3), "defense_ability": (0, 2), "dv": (0, 3),
    }  # fmt: skip
    assert record["decisions"][0]["answer"] == {"option": "parry"} and record["decisions"][0]["how"] == "default"
    # 3. 10 counts twice: 2 + 1 + 1 + 1
    assert changes(record, "attack_roll") == {"attack_successes": (0, 5)}
    # 5. 5 - DV 3
    assert changes(record, "apply_defense") == {"net_successes": (0, 2)}
    # 7. Strength 3 + 5 + 2
    assert changes(record, "raw_damage") == {"raw_damage": (0, 10)}
    # 8. a mortal has no natural lethal soak; the armor's 2L; pool 8 (minimum Essence 5 is lower); 10 counts once
    assert changes(record, "damage") == {"soak": (0, 2), "damage_pool": (0, 8), "damage": (0, 3)}
    assert record["outcome"] == {
        "hit": True, "damage": 3, "conditions": {}, "weapon": "daiklave", "ability": "melee",
        "attack_type": "melee", "damage_type": "L", "defense": "parry", "successes": 5, "botch": False,
        "dv": 3, "raw_damage": 10, "soak": 2,
    }  # fmt: skip
    # 10. three lethal levels, the attacker's -1 DV, the defender's onslaught
    soldier = after(record, "soldier")
    assert track(soldier["health"]) == "LLL......"
    assert soldier["onslaught"] == {"anoria": 1}
    assert after(record, "anoria")["dv_penalty"] == 1
    assert set(record["changes"]) == {"anoria", "soldier"}
    assert record["dice_used"] == 18
    assert {c["plugin"] for s in record["steps"] for c in s["changes"]} == {"exalted2e"}


def test_foundry_roll_json_attack_10s_count_two_damage_10s_count_one(host):
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, dice=[10, 9, 8, 7, 1, 2, 3, 4, 5, 6] + [10, 7, 7, 1, 2, 3, 4, 5])
    attack = step(record, "attack_roll")["rolls"][0]
    damage = step(record, "damage")["rolls"][0]
    assert attack["formula"] == "10d10cs>=7dbl10" and attack["total"] == 5
    assert damage["formula"] == "8d10cs>=7" and damage["total"] == 3
    assert attack["terms"][0]["results"][0] == {"result": 10, "active": True, "success": True, "count": 2}
    assert damage["terms"][0]["results"][0] == {"result": 10, "active": True, "success": True, "count": 1}
    assert attack["terms"][0]["results"][4] == {"result": 1, "active": True, "success": False, "count": 0}
    assert attack["options"] == {"flavor": "attack"}


def test_same_seed_same_attack(host):
    a = resolve(host, "anoria", "monk", {"weapon": "fist"}, seed=1234)
    b = resolve(host, "anoria", "monk", {"weapon": "fist"}, seed=1234)
    assert a == b and a["dice"] == "seeded" and a["seed"] == 1234


# -- step 1: declaration -----------------------------------------------------------


@pytest.mark.parametrize(
    "declaration, pool",
    [
        ({"weapon": "daiklave"}, 10),
        ({"weapon": "fist"}, 10),  # Dex 4 + MA 5 + 1
        ({"weapon": "fist", "stunt": 2}, 12),
        ({"weapon": "daiklave", "off_hand": True}, 9),
        ({"weapon": "fist", "off_hand": True}, 10),  # not for unarmed maneuvers
        ({}, 10),  # default: the first weapon, the fist
    ],
)
def test_attack_pool(host, declaration, pool):
    res = start(host, "anoria", "soldier", declaration, dice=[1] * 20, answers={"defense": "parry"})
    res.run()
    assert res.ctx.attack_pool == pool


def test_wound_penalty_lowers_the_attack_pool(host):
    toks = tokens(host, anoria={"health": {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"], "damage": ["L", "L"] + [None] * 8}})
    res = start(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks, dice=[1] * 9)
    res.run()
    assert res.ctx.attack_pool == 9


@pytest.mark.parametrize(
    "declaration, message",
    [
        ({"weapon": "halberd"}, "no weapon"),
        ({"weapon": "fist", "type": "melee"}, "martial_arts"),
    ],
)
def test_declarations_the_attacker_cannot_make_are_refused(host, declaration, message):
    with pytest.raises(InvalidRequest) as err:
        start(host, "anoria", "soldier", declaration, dice=[]).run()
    assert message in err.value.message
    assert "declaration" in err.value.details


@pytest.mark.parametrize(
    "declaration, external",
    [
        ({"weapon": "short bow", "distance": 150}, 0),
        ({"weapon": "short bow", "distance": 151}, 1),
        ({"weapon": "short bow", "distance": 300}, 1),
        ({"weapon": "short bow", "distance": 450}, 2),
        ({"weapon": "short bow", "range_band": "double"}, 1),
        ({"weapon": "short bow", "range_band": "triple"}, 2),
        ({"weapon": "spear", "distance": 1000}, 0),  # range only matters to ranged attacks
    ],
)
def test_range_penalty_is_an_external_penalty(host, declaration, external):
    res = start(host, "soldier", "monk", declaration, dice=[1] * 10)
    res.run()
    assert res.ctx.external_penalty == external


def test_beyond_three_times_range_is_refused(host):
    with pytest.raises(InvalidRequest) as err:
        start(host, "soldier", "monk", {"weapon": "short bow", "distance": 451}, dice=[]).run()
    assert err.value.code == "invalid_request"
    assert err.value.details["declaration"]["distance"] == ["Must be at most 450 for the short bow."]


def test_range_penalty_removes_successes_before_dv(host):
    # bow: Dex 2 + Archery 1 + 1 = 4 dice, 4 successes; "nothing": DV 0; -2 at three times range
    record = resolve(host, "soldier", "monk", {"weapon": "short bow", "range_band": "triple"},
                     dice=[7, 7, 7, 7] + [1] * 5, answers={"defense": "nothing"})  # fmt: skip
    assert changes(record, "apply_defense") == {"net_successes": (0, 2)}


# -- step 2: defense values ----------------------------------------------------------


def dvs(host, attacker, target, declaration, answer=None, **overrides):
    res = start(host, attacker, target, declaration, toks=tokens(host, **overrides), dice=[1] * 30,
                answers={"defense": answer} if answer else None)  # fmt: skip
    res.run()
    return res.ctx.dodge_dv, res.ctx.parry_dv, res.ctx.dv, res.ctx.outcome["defense"]


@pytest.mark.parametrize(
    "attacker, target, declaration, overrides, expected",
    [
        # seed 002: the monk rounds up: Dodge (3+2+2)/2 -> 4; Parry fist (3+4+2)/2 -> 5, staff (3+4+3)/2 -> 5
        ("anoria", "monk", {"weapon": "fist"}, {}, (4, 5, 5, "parry")),
        ("anoria", "monk", {"weapon": "fist"}, {"monk": {"weapons": [FIST]}}, (4, 5, 5, "parry")),
        # unarmed parry is inapplicable against lethal...
        ("anoria", "monk", {"weapon": "daiklave"}, {"monk": {"weapons": [FIST]}}, (4, 0, 4, "dodge")),
        # ...unless the defender has natural armor
        ("anoria", "monk", {"weapon": "daiklave"}, {"monk": {"weapons": [FIST], "natural_armor": True}}, (4, 5, 5, "parry")),
        # ...and armed, the staff parries the daiklave
        ("anoria", "monk", {"weapon": "daiklave"}, {}, (4, 5, 5, "parry")),
        # ...and against ranged attacks, even bashing ones
        ("soldier", "monk", {"weapon": "short bow"}, {"monk": {"weapons": [FIST]}}, (4, 0, 4, "dodge")),
        # seed 002: Anoria's Dodge DV is 7
        ("soldier", "anoria", {"weapon": "spear"}, {}, (7, 5, 7, "dodge")),
        # the soldier: Dodge 2, Parry 2, target shield +1; tie goes to parry
        ("anoria", "soldier", {"weapon": "daiklave"}, {}, (3, 3, 3, "parry")),
        ("anoria", "monk", {"weapon": "fist", "undodgeable": True}, {}, (0, 5, 5, "parry")),
        ("anoria", "monk", {"weapon": "fist", "unblockable": True}, {}, (4, 0, 4, "dodge")),
        # bonuses apply after the reduction to 0: cover helps an undodgeable attack's Dodge DV
        ("anoria", "monk", {"weapon": "fist", "unblockable": True, "cover": "90"}, {}, (6, 2, 6, "dodge")),
        # shield and cover: the greater applies (close combat: target shield +1, 90% cover +2)
        ("anoria", "soldier", {"weapon": "daiklave", "cover": "90"}, {}, (4, 4, 4, "parry")),
        ("anoria", "soldier", {"weapon": "daiklave", "cover": "25"}, {}, (3, 3, 3, "parry")),
        # ranged column: 90% hard cover +4
        ("soldier", "monk", {"weapon": "short bow", "cover": "90"}, {}, (8, 9, 9, "parry")),
        # height: close combat only, negated by reach, negative when lower
        ("anoria", "soldier", {"weapon": "daiklave", "height": 2}, {}, (5, 5, 5, "parry")),
        ("monk", "soldier", {"weapon": "seven-section staff", "height": 2}, {}, (3, 3, 3, "parry")),
        ("soldier", "monk", {"weapon": "short bow", "height": 2}, {}, (4, 5, 5, "parry")),
        ("anoria", "soldier", {"weapon": "daiklave", "height": -1}, {}, (2, 2, 2, "parry")),
        # action DV penalty, onslaught from this attacker (not another's), both DVs
        ("anoria", "soldier", {"weapon": "daiklave"}, {"soldier": {"dv_penalty": 1, "onslaught": {"anoria": 2, "monk": 5}}}, (0, 0, 0, "parry")),
        # a new action: the attacker's flurry against this defender restarts
        ("anoria", "soldier", {"weapon": "daiklave", "new_action": True}, {"soldier": {"dv_penalty": 1, "onslaught": {"anoria": 2}}}, (2, 2, 2, "parry")),
        # armor mobility and terrain: Dodge only
        ("anoria", "soldier", {"weapon": "daiklave", "terrain": 1}, {"soldier": {"armor": {"mobility": 2}}}, (0, 3, 3, "parry")),
        # wound penalty: both DVs
        ("anoria", "soldier", {"weapon": "daiklave"}, {"soldier": {"health": {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["B"] * 4 + [None] * 5}}}, (1, 1, 1, "parry")),
        # negative DVs are tracked
        ("anoria", "soldier", {"weapon": "daiklave"}, {"soldier": {"dv_penalty": 6}}, (-3, -3, -3, "parry")),
    ],
)
def test_defense_values_by_default(host, attacker, target, declaration, overrides, expected):
    assert dvs(host, attacker, target, declaration, **overrides) == expected


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("dodge", (4, 5, 4, "dodge")),
        ("parry", (4, 5, 5, "parry")),
        ("nothing", (0, 0, 0, "nothing")),
    ],
)
def test_defense_decision_answered(host, answer, expected):
    assert dvs(host, "anoria", "monk", {"weapon": "fist"}, answer) == expected


def test_doing_nothing_still_gets_cover(host):
    assert dvs(host, "anoria", "monk", {"weapon": "fist", "cover": "50"}, "nothing") == (1, 1, 1, "nothing")


def test_defense_decision_goes_to_the_defender_and_defaults_to_the_better_dv(host):
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[1] * 10)
    decision = res.advance()
    assert decision.key == "defense" and decision.token == "monk"
    assert [o.id for o in decision.options] == ["dodge", "parry", "nothing"]
    assert not decision.option("parry").params  # the stunt is asked after the attack roll (step 5)
    assert decision.default == "parry"
    res.default("timeout")
    assert res.advance() is None
    assert res.record["decisions"][0]["how"] == "timeout"
    assert res.record["decisions"][0]["answer"] == {"option": "parry"}
    assert res.ctx.dv == 5


def test_defense_default_is_dodge_when_dodge_is_better(host):
    res = start(host, "soldier", "anoria", {"weapon": "spear"}, dice=[1] * 5)
    assert res.advance().default == "dodge"


def test_a_stunt_lets_the_unarmed_parry_lethal_and_its_dice_add_to_dv(host):
    """Seed 002: "even the Exalted cannot parry attacks that inflict lethal ... if they are not
    armed, unless they augment their block with a stunt"; "Dice awarded for stunts can
    temporarily inflate one of the two DVs ... the defender's player rolls the stunt dice
    separately and adds any successes to the character's DV."
    """
    toks = tokens(host, monk={"weapons": [FIST]})
    res = start(host, "anoria", "monk", {"weapon": "daiklave"}, toks=toks,
                dice=[10, 10, 10, 10, 1, 1, 1, 1, 1, 1] + [10, 8],  # fmt: skip
                answers={"defense": "parry", "defense_stunt": "2"})
    res.run()
    record = res.record
    # step 2: the bare fist cannot parry the daiklave: Parry DV 0
    assert changes(record, "declare_defense") == {"dodge_dv": (0, 4)}
    assert [d["key"] for d in record["decisions"]] == ["defense", "defense_stunt"]
    defense = step(record, "apply_defense")
    assert defense["decisions"] == ["defense_stunt"]
    assert defense["rolls"][0]["formula"] == "2d10cs>=7dbl10" and defense["rolls"][0]["options"]["flavor"] == "defense dice"
    # the stunt lets the fist parry: DV (3 + 4 + 2) / 2 -> 5, then its dice [10 8] add 3
    # 8 successes - DV 8 = 0: a miss
    assert changes(record, "apply_defense") == {"dv": (0, 8), "defense_ability": (0, 4), "defense_dice": (0, 2)}
    assert res.ctx.net_successes == 0
    assert record["ended"] == "miss" and record["outcome"]["dv"] == 8


@pytest.mark.parametrize("stunt", ["4", "0", "stunt"])
def test_a_bad_defensive_stunt_is_refused(host, stunt):
    res = start(host, "anoria", "monk", {}, dice=[10] * 10, answers={"defense": "parry", "defense_stunt": stunt})
    with pytest.raises(InvalidRequest) as err:
        res.run()
    assert err.value.details == {"answers": {"defense_stunt": {"option": ["Must be one of: 1, 2, 3, decline."]}}}


def test_doing_nothing_takes_no_stunt(host):
    """Issue 13: "Choosing not to defend leaves both Dodge DV and Parry DV at 0" (seed 002): the
    option offers no stunt, so an answer carrying one is refused before any hook sees it."""
    res = start(host, "anoria", "monk", {}, dice=[1] * 10)
    assert res.advance().key == "defense"
    with pytest.raises(InvalidRequest) as err:
        res.answer({"option": "nothing", "params": {"stunt": 3}})
    assert err.value.details == {"answer": {"params": {"stunt": ["Unknown parameter; this one takes: none."]}}}
    res.default("invalid")  # what the server does with a refused answer
    res.run()
    assert res.record["decisions"][0]["how"] == "invalid"
    assert res.record["decisions"][0]["answer"] == {"option": "parry"}


# -- steps 3 and 4: attack roll, botch, automatic defense ---------------------------------


def test_a_botch_misses_and_costs_two_more_dv(host):
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, dice=[1, 2, 3, 4, 5, 6, 6, 6, 6, 6])
    assert record["ended"] == "botch"
    assert record["steps"][-1]["step"] == "attack_reroll"
    assert record["outcome"]["hit"] is False and record["outcome"]["botch"] is True
    assert after(record, "anoria")["dv_penalty"] == 3
    assert after(record, "soldier")["onslaught"] == {"anoria": 1}
    assert record["changes"]["soldier"]["after"]["health"] == record["changes"]["soldier"]["before"]["health"]


def test_no_successes_without_a_one_is_a_plain_miss(host):
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, dice=[2] * 10)
    assert record["ended"] == "miss" and record["outcome"]["botch"] is False
    assert after(record, "anoria")["dv_penalty"] == 1


def test_dv_penalties_accumulate_on_the_attacker(host):
    toks = tokens(host, anoria={"dv_penalty": 2})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks, dice=[1] * 10)
    assert after(record, "anoria")["dv_penalty"] == 5


def test_a_new_action_refreshes_the_attackers_own_dv(host):
    toks = tokens(host, anoria={"dv_penalty": 2, "onslaught": {"soldier": 3}}, soldier={"onslaught": {"anoria": 2, "monk": 1}})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "new_action": True}, toks=toks, dice=[2] * 10)
    assert after(record, "anoria")["dv_penalty"] == 1 and after(record, "anoria")["onslaught"] == {}
    assert after(record, "soldier")["onslaught"] == {"anoria": 1, "monk": 1}


def test_automatic_defense_against_an_extra_rolls_nothing_and_counts_for_onslaught(host):
    # brigand: Dex 2 + Melee 2 + club 1 = 5 dice; the monk's Parry 5 + height 1 = 6 > 5
    record = resolve(host, "brigand", "monk", {"height": 1}, dice=[], answers={"defense": "parry"})
    assert record["ended"] == "automatic defense"
    assert record["dice_used"] == 0 and step(record, "attack_roll")["rolls"] == []
    assert record["outcome"]["hit"] is False
    assert after(record, "monk")["onslaught"] == {"brigand": 1}
    assert after(record, "brigand")["dv_penalty"] == 1


def test_no_automatic_defense_when_dv_only_equals_the_pool_or_against_a_hero(host):
    record = resolve(host, "brigand", "monk", {}, dice=[1] * 5)
    assert record["dice_used"] == 5 and record["ended"] == "botch"
    toks = tokens(host, brigand={"extra": False})
    record = resolve(host, "brigand", "monk", {"height": 1}, toks=toks, dice=[1] * 5)
    assert record["dice_used"] == 5


def test_onslaught_grows_with_every_attack_in_the_flurry(host):
    toks = tokens(host, soldier={"onslaught": {"anoria": 2}})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks, dice=[2] * 10)
    assert after(record, "soldier")["onslaught"] == {"anoria": 3}


# -- steps 5 and 6: DV ------------------------------------------------------------------------


def test_dv_stops_the_attack_when_no_successes_remain(host):
    # fist vs the monk's Parry 5: exactly 5 successes is a miss
    record = resolve(host, "anoria", "monk", {"weapon": "fist"}, dice=[10, 10, 7, 2, 2, 2, 2, 2, 2, 2])
    assert record["ended"] == "miss" and record["steps"][-1]["step"] == "apply_defense"
    assert step(record, "apply_defense")["ended"] == "miss"
    assert record["outcome"]["dv"] == 5


def test_a_negative_dv_blocks_as_zero(host):
    toks = tokens(host, soldier={"dv_penalty": 6})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks,
                     dice=[7, 2, 2, 2, 2, 2, 2, 2, 2, 2] + [1] * 8)  # fmt: skip
    assert record["outcome"]["dv"] == -3
    assert changes(record, "apply_defense") == {"net_successes": (0, 1)}


# -- steps 7 and 8: raw damage, Hardness, soak, minimum, damage roll ----------------------


@pytest.mark.parametrize(
    "attack, expected",
    [
        # Hardness 6L: raw 2 + 3 + 1 = 6, equal, stops it
        ([10, 10, 7, 1, 2], {"ended": "hardness", "raw_damage": 6, "hardness": 6}),
        # raw 7 > 6: natural lethal soak of an Exalt, Stamina 2 // 2 = 1; pool 6
        ([10, 10, 10, 2, 2], {"ended": None, "raw_damage": 7, "hardness": 6, "soak": 1, "pool": 6}),
    ],
)
def test_hardness_equal_stops_greater_goes_through(host, attack, expected):
    record = resolve(host, "soldier", "sorcerer", {"weapon": "spear"}, dice=attack + [7, 7, 7, 1, 1, 1])
    assert record["ended"] == expected["ended"]
    assert record["outcome"]["raw_damage"] == expected["raw_damage"]
    assert changes(record, "damage")["hardness"] == (0, expected["hardness"])
    if expected["ended"] == "hardness":
        assert record["outcome"]["hit"] is True and record["outcome"]["damage"] == 0
        assert step(record, "damage")["rolls"] == []
        assert after(record, "soldier")["dv_penalty"] == 1
        assert after(record, "sorcerer")["onslaught"] == {"soldier": 1}
    else:
        assert changes(record, "damage")["soak"] == (0, expected["soak"])
        assert changes(record, "damage")["damage_pool"] == (0, expected["pool"])
        assert record["outcome"]["damage"] == 3


@pytest.mark.parametrize(
    "attack, raw, ended",
    [
        ([10] * 10, 23, None),
        ([10] * 5 + [1] * 5, 13, None),
        ([10] * 4 + [7, 7] + [1] * 4, 13, None),
        ([10] * 4 + [7] + [1] * 5, 12, "hardness"),
    ],
)
def test_bashing_hardness_12(host, attack, raw, ended):
    # fist: raw = Strength 3 + 0 + net; the sorcerer's Hardness 12B stops anything up to 12
    record = resolve(host, "anoria", "sorcerer", {"weapon": "fist"}, dice=attack + [1] * 30, answers={"defense": "nothing"})
    assert record["outcome"]["raw_damage"] == raw and record["ended"] == ended


@pytest.mark.parametrize(
    "piercing, soak",
    [(False, 1 + 4), (True, 1 + 2)],  # the monk's natural lethal 3 // 2 = 1, armor 6B/4L halved to 2
)
def test_piercing_halves_armored_soak_only(host, piercing, soak):
    toks = tokens(
        host,
        monk={"armor": {"bashing": 6, "lethal": 4}},
        soldier={"weapons": [{"name": "spear", "ability": "melee", "accuracy": 1, "damage": 3, "damage_type": "L", "defense": 1, "piercing": piercing}]},
    )
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[7, 1, 1, 1, 1] + [1] * 6, answers={"defense": "nothing"})
    assert record["outcome"]["soak"] == soak
    # raw 2 + 3 + 1 = 6
    assert changes(record, "damage")["damage_pool"] == (0, 6 - soak)


def test_aggravated_damage_meets_armor_lethal_soak_and_no_natural_soak(host):
    toks = tokens(
        host,
        monk={"armor": {"bashing": 6, "lethal": 4}},
        soldier={"weapons": [{"name": "blade", "ability": "melee", "damage": 3, "damage_type": "A", "defense": 1}]},
    )
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[7, 1, 1, 1] + [7] * 6, answers={"defense": "nothing"})
    assert record["outcome"]["soak"] == 4
    assert track(after(record, "monk")["health"]).startswith("AA..")  # raw 6 - 4 = 2 dice, both hit


@pytest.mark.parametrize(
    "attack, raw, pool",
    [
        # fist: raw = Str 3 + 0 + net; the monk soaks 3 bashing; Anoria's Essence 5 is the minimum...
        ([10, 10, 10, 7, 7, 7, 7, 1, 1, 1], 3 + 5, 5),
        # ...but never above the raw damage
        ([10, 10, 10, 1, 1, 1, 1, 1, 1, 1], 3 + 1, 4),
        ([10, 10, 10, 7, 7, 7, 7, 7, 7, 7], 3 + 8, 8),
    ],
)
def test_minimum_damage_is_essence_but_never_above_raw(host, attack, raw, pool):
    record = resolve(host, "anoria", "monk", {"weapon": "fist"}, dice=attack + [1] * pool)
    assert record["outcome"]["raw_damage"] == raw
    assert changes(record, "damage")["damage_pool"] == (0, pool)
    assert record["dice_used"] == 10 + pool


def test_a_weapons_own_minimum(host):
    toks = tokens(host, soldier={"weapons": [{"name": "grand goremaul", "ability": "melee", "damage": 3, "damage_type": "B", "defense": 0, "minimum": 4}]})
    record = resolve(host, "soldier", "anoria", {}, toks=toks, dice=[7, 1, 1, 1] + [1] * 4, answers={"defense": "nothing"})
    # raw 2 + 3 + 1 = 6 against Anoria's bashing soak 3: 3 left, raised to the goremaul's minimum 4
    assert changes(record, "damage")["damage_pool"] == (0, 4)


# -- step 10: the health track ---------------------------------------------------------------


def test_lethal_into_the_dying_levels(host):
    health = {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["L"] * 5 + [None] * 4}
    toks = tokens(host, soldier={"health": health})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks,
                     dice=[7] + [1] * 9 + [7, 7, 7, 1, 1, 1, 1], answers={"defense": "nothing"})  # fmt: skip
    # raw 3 + 5 + 1 = 9, soak 2: 7 dice, 3 levels
    assert record["outcome"]["damage"] == 3
    assert track(after(record, "soldier")["health"]) == "LLLLLLLL."
    assert record["outcome"]["conditions"] == {"soldier": ["incapacitated", "dying"]}
    assert "wound penalty -4" in step(record, "apply_results")["notes"][0]["text"]


def test_bashing_past_incapacitated_knocks_out(host):
    health = {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"], "damage": ["B"] * 6 + [None] * 4}
    toks = tokens(host, monk={"health": health})
    record = resolve(host, "anoria", "monk", {"weapon": "fist"}, toks=toks,
                     dice=[7] + [1] * 9 + [7, 7, 1, 1], answers={"defense": "nothing"})  # fmt: skip
    assert track(after(record, "monk")["health"]) == "BBBBBBBB.."
    assert record["outcome"]["conditions"] == {"monk": ["incapacitated", "unconscious"]}


def test_lethal_pushes_bashing_down_and_a_full_track_upgrades_it(host):
    health = {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["B"] * 9}
    toks = tokens(host, soldier={"health": health})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks,
                     dice=[7] + [1] * 9 + [7, 7, 1, 1, 1, 1, 1], answers={"defense": "nothing"})  # fmt: skip
    assert track(after(record, "soldier")["health"]) == "LLLLBBBBB"


def test_every_level_lethal_is_dead(host):
    health = {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["L"] * 8 + [None]}
    toks = tokens(host, soldier={"health": health})
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks,
                     dice=[7] + [1] * 9 + [7, 1, 1, 1, 1, 1, 1], answers={"defense": "nothing"})  # fmt: skip
    assert record["outcome"]["conditions"] == {"soldier": ["dead"]}


# -- steps 4, 6, 9: decisions only when an effect exists --------------------------------------


def test_without_a_pack_only_the_defense_is_asked(host):
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, dice=[10] * 10 + [1] * 30)
    # successes remain past the DV, so the defensive stunt is asked too (after the roll)
    assert [d["key"] for d in record["decisions"]] == ["defense", "defense_stunt"]
    assert all(step(record, name)["rolls"] == [] for name in ("attack_reroll", "defense_reroll", "counterattack"))


class Riposte:
    """A test pack: a free counterattack whenever it is offered, and an always-offered reroll."""

    @hookimpl
    def exalted2e_counterattack_options(self, ctx):
        return [Option(id="riposte", label="Riposte")]

    @hookimpl
    def exalted2e_counterattack(self, ctx):
        answer = ctx.answer("counterattack")
        if answer is not None and answer.option == "riposte":
            ctx.nest(kind="counterattack", attacker=ctx.defender.id, targets=[ctx.attacker.id], declaration={"weapon": "fist"})

    @hookimpl
    def exalted2e_attack_reroll_options(self, ctx):
        return [Option(id="again", label="Reroll")]

    @hookimpl
    def exalted2e_attack_reroll(self, ctx):
        answer = ctx.answer("attack_reroll")
        if answer is not None and answer.option == "again":
            ctx.dice.roll(ctx.attack_pool, 10, label="attack reroll", target=7, double=10)


@pytest.fixture(scope="module")
def riposte_host():
    return make_host(block=["excellencies"], plugins=[Riposte()])


def test_counterattack_is_nested_with_roles_swapped_and_never_countered(riposte_host):
    """Seed 002, DV penalties: "each attack the character makes reduces both DVs by one" —
    so the counterattack (step 9) meets Anoria's Dodge DV 7 already at 6."""
    res = start(
        riposte_host,
        "anoria",
        "monk",
        {"weapon": "fist"},
        dice=[10, 10, 10, 10, 1, 1, 1, 1, 1, 1] + [7, 7, 7, 7, 7]  # Anoria: 8 successes vs Parry 5, raw 6, 5 dice (Essence)
        + [10, 10, 10, 10, 10, 10, 10, 1]  # the monk's fist: Dex 3 + MA 4 + 1 = 8 dice, 14 successes vs Dodge 7 - 1
        + [7] * 8,  # raw 3 + 8 = 11 - Anoria's bashing soak 3 = 8 dice (10 counts once)
        answers={"attack_reroll": "decline", "counterattack": "riposte", "counterattack/defense": "dodge"},
    )
    res.run()
    record = res.record
    counter = step(record, "counterattack")
    assert len(counter["children"]) == 1
    child = counter["children"][0]
    assert child["kind"] == "counterattack" and child["attacker"] == "monk" and child["targets"] == ["anoria"]
    assert [s["step"] for s in child["steps"]][-1] == "apply_results"
    keys = [d["key"] for d in record["decisions"]]
    assert "counterattack/defense" in keys and "counterattack/counterattack" not in keys
    assert step(child, "counterattack").get("decisions", []) == []
    assert changes(child, "declare_defense")["dv"] == (0, 6)
    assert child["outcome"]["damage"] == 8 and record["outcome"]["damage"] == 5
    assert track(after(record, "anoria")["health"]) == "BBBBBBBB.."
    assert track(after(record, "monk")["health"]) == "BBBBB....."
    # the counterattack is reflexive: no action DV penalty, no onslaught
    assert after(record, "monk").get("dv_penalty") == 0
    assert "onslaught" not in record["changes"]["anoria"]["after"] or after(record, "anoria")["onslaught"] == {}
    assert after(record, "monk")["onslaught"] == {"anoria": 1}
    assert res.ctx.outcome["children"][0]["damage"] == 8


def test_counterattack_declined_is_noted(riposte_host):
    record = resolve(riposte_host, "anoria", "monk", {"weapon": "fist"}, dice=[10] * 10 + [1] * 30)
    counter = step(record, "counterattack")
    assert "children" not in counter
    assert counter["notes"][0]["text"] == "Immaculate monk does not counterattack"


def test_reroll_keeps_the_better_roll_and_both_failing_misses(riposte_host):
    # both fail: a miss; a failure without 1s is the better of the two, so no botch
    for dice in ([2] * 10 + [1] * 10, [1] * 10 + [2] * 10):
        record = resolve(riposte_host, "anoria", "monk", {"weapon": "fist"}, dice=dice, answers={"attack_reroll": "again"})
        assert record["ended"] == "miss" and record["outcome"]["botch"] is False
    record = resolve(riposte_host, "anoria", "monk", {"weapon": "fist"}, dice=[1] * 20, answers={"attack_reroll": "again"})
    assert record["ended"] == "botch"
    record = resolve(riposte_host, "anoria", "monk", {"weapon": "fist"},
                     dice=[2] * 10 + [10] * 3 + [1] * 7 + [1] * 6, answers={"attack_reroll": "again", "counterattack": "decline"})  # fmt: skip
    rolls = step(record, "attack_reroll")["rolls"]
    assert len(rolls) == 1 and rolls[0]["total"] == 6
    first = step(record, "attack_roll")["rolls"][0]
    assert first["total"] == 0 and all(r["active"] for r in first["terms"][0]["results"])  # as judged at step 3
    assert step(record, "attack_reroll")["notes"][-1]["text"] == "the reroll counts (6 successes); the first roll (0 successes) is set aside"
    assert changes(record, "attack_reroll") == {"attack_successes": (0, 6)}


@pytest.mark.parametrize(
    "stunt, dv, ability",
    [
        # against the lethal spear her fists cannot parry: the daiklave, (4 + Melee 3 + 2) / 2 -> 5
        ("decline", 5, 3),
        # a stunt lets the best weapon parry, her fist: (4 + Martial Arts 5 + 2) / 2 -> 6
        ("1", 6, 5),
    ],
)
def test_a_parry_stunt_uses_the_best_weapon_and_its_ability(host, stunt, dv, ability):
    """Seed 002: "Any such mundane inapplicability may be circumvented by a stunt or Charm."
    The spear's 10 successes leave 5 past Parry DV 5, so the stunt is asked; its die shows 1."""
    res = start(host, "soldier", "anoria", {"weapon": "spear"}, dice=[10] * 5 + [1] + [1] * 10,
                answers={"defense": "parry", "defense_stunt": stunt})  # fmt: skip
    res.run()
    assert res.ctx.parry_dv == 5
    assert res.ctx.dv == dv and res.ctx.defense_ability == ability
