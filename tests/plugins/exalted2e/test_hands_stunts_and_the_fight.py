"""exalted2e: hands and Parry DV, stunts after the roll, the fight's edges (issue 13), scripted dice.

Core ruleset only (the Excellencies pack is blocked). Sample tokens as in
test_ruleset.py: Anoria (Solar, Dex 4, MA 5, Melee 3, Dodge 4, Ess 5), the
mortal soldier (Dex 2, Dodge 3, Melee 2; spear, short bow, target shield,
4B/2L armor), the Immaculate monk (Dex 3, MA 4, Dodge 2, Ess 2; fist +2,
seven-section staff +3).
"""

from __future__ import annotations

import pytest

from vtt_bridge import InvalidRequest, Option, hookimpl, make_host

from .helpers import after, changes, resolve, start, step, tokens

FIST = {"name": "fist", "ability": "martial_arts", "accuracy": 1, "damage": 0, "damage_type": "B", "defense": 2, "unarmed": True}
SLEDGE = {"name": "sledge", "ability": "melee", "accuracy": -1, "damage": 10, "damage_type": "B", "defense": -3, "two_handed": True}
SWORD = {"name": "sword", "ability": "melee", "accuracy": 2, "damage": 3, "damage_type": "L", "defense": 0}
TRACK = [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"]  # Anoria and the monk: Stamina 3


@pytest.fixture(scope="module")
def host():
    return make_host(block=["excellencies"])


def parry_of(host, monk: dict, declaration=None) -> int:
    """The monk's Parry DV against Anoria's fist (bashing: a bare hand may parry it)."""
    res = start(host, "anoria", "monk", declaration or {"weapon": "fist"}, toks=tokens(host, monk=monk), dice=[2] * 10)
    res.run()
    return res.ctx.parry_dv


# -- Parry needs a hand ---------------------------------------------------------------


@pytest.mark.parametrize(
    "monk, parry",
    [
        # the seed's own example: fist +2 -> (3 + 4 + 2) / 2 = 5 (rounded up), staff +3 -> still 5
        ({}, 5),
        # holding the two-handed sledge: no hand is free, so it parries: (3 + Melee 3 - 3) / 2 -> 2
        ({"abilities": {"melee": 3}, "weapons": [FIST, SLEDGE]}, 2),
        # ... the same held explicitly
        ({"abilities": {"melee": 3}, "weapons": [FIST, SLEDGE], "equipped": ["sledge"]}, 2),
        # the sledge set down: the fist parries again
        ({"abilities": {"melee": 3}, "weapons": [FIST, SLEDGE], "equipped": []}, 5),
        # a sword in one hand and a shield in the other: no bare hand; the sword (+0) parries,
        # (3 + 3 + 0) / 2 = 3, and the target shield adds +1
        ({"abilities": {"melee": 3}, "weapons": [FIST, SWORD], "shield": "target"}, 4),
        # a sword alone leaves a hand: the fist, with the higher Defense (+2), parries: 5
        ({"abilities": {"melee": 3}, "weapons": [FIST, SWORD]}, 5),
        # three hands (a god's): the sword, the shield and still a fist (+1 shield): 6
        ({"abilities": {"melee": 3}, "weapons": [FIST, SWORD], "shield": "target", "hands": 3}, 6),
    ],
)
def test_parry_dv_follows_what_the_hands_hold(host, monk, parry):
    """Seed 002, Parry DV: "the currently equipped weapon with the highest Defense" ...
    "Characters cannot use a hand for parrying if they are holding a weapon in it, so anyone
    wielding an extremely slow and ungainly two-handed weapon such as a sledge (Defense -3)
    must accept the negative impact this weapon choice has on Parry DV."
    """
    assert parry_of(host, monk) == parry


def test_the_highest_defense_counts_not_the_best_dv(host):
    """Seed 002: Parry DV uses "(Ability used to wield the currently equipped weapon with the
    highest Defense) + (the Defense of said weapon)": the staff (+3, Martial Arts 1) over the
    fist (+2), though the fist's Ability would be no worse: (3 + 1 + 3) / 2 -> 4."""
    staff = {"name": "staff", "ability": "melee", "accuracy": 1, "damage": 4, "damage_type": "B", "defense": 3}
    assert parry_of(host, {"abilities": {"martial_arts": 4, "melee": 1}, "weapons": [FIST, staff]}) == 4


@pytest.mark.parametrize(
    "system, message",
    [
        ({"weapons": [FIST, SLEDGE], "equipped": ["sledge"], "shield": "buckler"}, "need more than 2 hands"),
        ({"weapons": [FIST, SLEDGE], "equipped": ["club"]}, "not one of the token's weapons"),
        ({"weapons": [FIST, SLEDGE], "equipped": ["fist"]}, "natural weapon"),
    ],
)
def test_a_token_cannot_hold_more_than_its_hands(host, system, message):
    from marshmallow import ValidationError

    with pytest.raises((InvalidRequest, ValidationError)) as err:
        host.load_system("exalted2e", {"attributes": {"strength": 2, "dexterity": 2, "stamina": 2}, **system})
    assert message in str(getattr(err.value, "details", None) or err.value)


def test_attacking_needs_the_weapon_in_hand(host):
    toks = tokens(host, monk={"weapons": [FIST, SLEDGE], "equipped": ["sledge"]})
    with pytest.raises(InvalidRequest) as err:
        start(host, "monk", "anoria", {"weapon": "fist"}, toks=toks, dice=[]).run()
    assert err.value.message == "Immaculate monk has no hand free to strike with the fist"
    toks = tokens(host, anoria={"equipped": []})
    with pytest.raises(InvalidRequest) as err:
        start(host, "anoria", "monk", {"weapon": "daiklave"}, toks=toks, dice=[]).run()
    assert err.value.message == "Anoria is not holding the daiklave"
    assert err.value.details["declaration"] == {"weapon": ["Not equipped; held: nothing."]}


# -- Stunts come after the roll -------------------------------------------------------


def test_the_stunt_is_asked_after_the_attack_roll_when_successes_remain(host):
    """Seed 002: "Stunts to aid defense occur immediately after the attack roll, but before
    determining whether the attack actually hit." Anoria's fist: [10 10 10 1...] = 6
    successes against the monk's Parry DV 5: one remains, so he may stunt; his 2 dice
    [7 7] add 2: DV 7, a miss."""
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[10, 10, 10] + [1] * 7 + [7, 7])
    decision = res.advance()
    assert decision.key == "defense"
    res.answer("parry")
    decision = res.advance()
    assert decision.key == "defense_stunt" and decision.step == "apply_defense" and decision.token == "monk"
    assert [o.id for o in decision.options] == ["1", "2", "3", "decline"] and decision.default == "decline"
    assert res.ctx.attack_successes == 6  # the roll is known when the stunt is asked
    res.answer("2")
    assert res.advance() is None
    record = res.record
    assert changes(record, "apply_defense") == {"defense_dice": (0, 2), "dv": (5, 7), "net_successes": (0, -1)}
    assert record["ended"] == "miss"


@pytest.mark.parametrize(
    "dice, answers",
    [
        ([10, 10] + [1] * 8, {"defense": "parry"}),  # 4 successes, Parry 5: none remain
        ([10] * 10, {"defense": "nothing"}),  # no defense to aid
        ([10] * 10, {"defense": "parry"}),  # the unblockable attack: not even with a stunt
    ],
    ids=["no successes remain", "nothing", "unblockable"],
)
def test_no_stunt_is_asked_when_it_cannot_help(host, dice, answers):
    """Seed 000, step 5: "If successes remain, defender rolls extra dice derived from stunts";
    seed 002: "The same goes for magically unblockable attacks." """
    declaration = {"weapon": "fist", "unblockable": answers["defense"] == "parry" and dice[2] == 10}
    res = start(host, "anoria", "monk", declaration, dice=dice + [1] * 30, answers=answers)
    res.run()
    assert [d["key"] for d in res.record["decisions"]] == ["defense"]


# -- The attacker's own DV penalty before a counterattack ------------------------------------


class Riposte:
    """A test pack: a free counterattack with the fist."""

    @hookimpl
    def exalted2e_counterattack_options(self, ctx):
        return [Option(id="riposte", label="Riposte")]

    @hookimpl
    def exalted2e_counterattack(self, ctx):
        answer = ctx.answer("counterattack")  # None inside the counterattack: not asked there
        if answer is not None and answer.option == "riposte":
            ctx.nest(kind="counterattack", attacker=ctx.defender.id, targets=[ctx.attacker.id], declaration={"weapon": "fist"})


def test_a_counterattack_meets_the_attackers_reduced_dv():
    """Seed 002: "each attack the character makes reduces both DVs by one" — so at step 9
    Anoria, having attacked, parries the monk's riposte with Parry DV 6 - 1 = 5."""
    host = make_host(block=["excellencies"], plugins=[Riposte()])
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[10] * 3 + [1] * 7 + [1] * 5 + [2] * 8,
                answers={"counterattack": "riposte", "counterattack/defense": "parry"})  # fmt: skip
    res.run()
    child = step(res.record, "counterattack")["children"][0]
    assert changes(child, "declare_defense")["parry_dv"] == (0, 5)
    assert after(res.record, "anoria")["dv_penalty"] == 1


# -- Out of the fight ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage, state",
    [(["B"] * 8, "unconscious"), (["L"] * 8, "dying"), (["L"] * 10, "dead")],
)
def test_a_character_past_incapacitated_cannot_attack(host, damage, state):
    """Seed 002: "Characters who are beaten below their Incapacitated health level with bashing
    damage pass out"; "Characters reduced below Incapacitated with lethal damage begin dying"."""
    toks = tokens(host, anoria={"health": {"penalties": TRACK, "damage": damage + [None] * (10 - len(damage))}})
    with pytest.raises(InvalidRequest) as err:
        start(host, "anoria", "monk", {"weapon": "fist"}, toks=toks, dice=[10] * 30).run()
    assert err.value.message == f"Anoria is {state} and cannot attack"
    assert err.value.details["attacker"] == [f"Anoria is {state} (past Incapacitated)."]


def test_an_unconscious_target_is_not_asked_to_defend(host):
    """The unconscious soldier (8 bashing of 9 levels) cannot defend: both DVs 0, then the
    target shield's +1 and the -4 wound penalty: DV -3."""
    toks = tokens(host, soldier={"health": {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["B"] * 8 + [None]}})
    res = start(host, "anoria", "soldier", {"weapon": "daiklave"}, toks=toks, dice=[2] * 10)
    res.run()
    assert res.record["decisions"] == [] and res.record["outcome"]["defense"] == "nothing"
    assert res.ctx.dv == -3
    assert step(res.record, "declare_defense")["notes"][0]["text"] == "Mortal soldier is unconscious and cannot defend"


def test_an_unaware_target_cannot_defend_but_keeps_its_cover(host):
    """Seed 002: "Targets who are unaware of an attack cannot defend against it without the aid
    of magic", and "bonuses and penalties apply to inapplicable DVs after the reduction to
    zero": the soldier's target shield still gives +1."""
    res = start(host, "anoria", "soldier", {"weapon": "daiklave", "unaware": True}, dice=[2] * 10)
    res.run()
    assert res.record["decisions"] == [] and res.ctx.dv == 1 and res.record["outcome"]["defense"] == "nothing"


# -- Reachable from a request -----------------------------------------------------------


def test_a_coordinated_attack_shares_one_onslaught(host):
    """Seed 002, DV modifiers: the onslaught penalty "applies only against a single attacker,
    unless a group makes a coordinated attack". Two earlier attacks of the pack: -2."""
    toks = tokens(host, soldier={"onslaught": {"group:wolves": 2, "monk": 4}})
    res = start(host, "anoria", "soldier", {"weapon": "daiklave", "coordinated": "wolves"}, toks=toks, dice=[2] * 10)
    res.run()
    assert res.ctx.dv == 1  # 3 - 2
    assert after(res.record, "soldier")["onslaught"] == {"group:wolves": 3, "monk": 4}


@pytest.mark.parametrize("declaration, dv", [({"dodge_inapplicable": True}, 4), ({"undodgeable": True}, 0)])
def test_a_stunt_circumvents_a_mundane_inapplicability_of_dodge_only(host, declaration, dv):
    """Seed 002: "Dodge also becomes inapplicable for characters who are unable or unwilling to
    give ground ... Any such mundane inapplicability may be circumvented by a stunt or Charm.
    However ... If a description of a magical effect states that an attack cannot be dodged,
    it cannot be dodged, even with the aid of a stunt." The monk dodges (Dodge DV 4) with a
    one-die stunt showing 1."""
    res = start(host, "anoria", "monk", {"weapon": "fist", **declaration}, dice=[10] * 10 + [1] * 40,
                answers={"defense": "dodge", "defense_stunt": "1"})  # fmt: skip
    res.run()
    assert res.ctx.dodge_dv == 0 and res.ctx.dv == dv


def test_post_soak_effects_apply_to_the_final_damage(host):
    """Seed 002, step 8: "Apply any effects that increase or decrease post-soak damage to the
    final value." The daiklave on the soldier: raw 10 - soak 2 = 8 dice, -3: 5 dice [10 7 7 1 2]."""
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "post_soak": -3},
                     dice=[10, 9, 8, 7, 1, 2, 3, 4, 5, 6] + [10, 7, 7, 1, 2])  # fmt: skip
    assert changes(record, "damage") == {"soak": (0, 2), "post_soak": (0, -3), "damage_pool": (0, 5), "damage": (0, 3)}


class Fury:
    """A test pack: a Charm used after the defense, adding 2 raw damage at step 7."""

    @hookimpl
    def exalted2e_damage_effect_options(self, ctx):
        return [Option(id="fury", label="Fury: +2 raw damage")]

    @hookimpl(wrapper=True)
    def exalted2e_raw_damage(self, ctx):
        result = yield
        if ctx.answer("damage_effect").option == "fury":
            ctx.raw_damage += 2
        return result


def test_step_7_asks_the_attacker_when_a_pack_offers_an_effect():
    """Seed 002, step 7: "Effects modifying the raw damage of an attack apply accordingly.";
    step 2: a defensive Charm may "wait for the results of the attack roll" — so may one of
    the attacker's, once the attack is known to hit."""
    host = make_host(block=["excellencies"], plugins=[Fury()])
    res = start(host, "anoria", "soldier", {"weapon": "daiklave"}, dice=[10, 9, 8, 7, 1, 2, 3, 4, 5, 6] + [1] * 10,
                answers={"defense": "parry", "defense_stunt": "decline"})  # fmt: skip
    decision = res.advance()
    assert decision.key == "damage_effect" and decision.token == "anoria" and decision.step == "raw_damage"
    assert [o.id for o in decision.options] == ["fury", "decline"] and decision.default == "decline"
    res.answer("fury")
    res.run()
    assert changes(res.record, "raw_damage") == {"raw_damage": (0, 12)}  # 3 + 5 + 2 net, then +2


# -- A botch striking a bystander -------------------------------------------------------


def test_a_botch_may_strike_a_bystander_the_gm_chooses(host):
    """Seed 002, Botched Attacks: "If any bystanders stand in the general path of the attack,
    the Storyteller may also rule that the attack hits one of them instead of the intended
    target with a number of "successes" equal to the 1s rolled." Anoria's daiklave botches
    with three 1s on the soldier; the monk is struck: raw 5 + 3 + 3 = 11, soak 1 (Stamina 3,
    lethal, rounded down), 10 dice [7 7 7 1 ...]: 3 lethal levels."""
    res = start(host, "anoria", "soldier", {"weapon": "daiklave", "bystanders": ["monk", "brigand"]},
                dice=[1, 1, 1, 2, 3, 4, 5, 6, 6, 6] + [7, 7, 7] + [1] * 7)  # fmt: skip
    decision = res.advance()
    assert decision.key == "defense"
    res.default()
    decision = res.advance()
    assert decision.key == "bystander" and decision.token is None and decision.step == "stray_blow"
    assert [o.id for o in decision.options] == ["monk", "brigand", "decline"] and decision.default == "decline"
    assert decision.options[0].label == "Immaculate monk is struck instead, with 3 successes (the 1s rolled)"
    res.answer("monk")
    assert res.advance() is None
    record = res.record
    assert record["ended"] == "botch"
    assert record["outcome"]["bystander"] == {"token": "monk", "successes": 3, "raw_damage": 11, "damage": 3}
    assert after(record, "monk")["health"]["damage"][:4] == ["L", "L", "L", None]
    assert after(record, "anoria")["dv_penalty"] == 3  # the botch's -2 more, as always
    assert "soldier" not in record["changes"] or after(record, "soldier")["health"] == record["changes"]["soldier"]["before"]["health"]


def test_without_bystanders_or_a_botch_the_gm_is_not_asked(host):
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "bystanders": ["monk"]}, dice=[2] * 10)
    assert [d["key"] for d in record["decisions"]] == ["defense"] and record["ended"] == "miss"
    record = resolve(host, "anoria", "soldier", {"weapon": "daiklave"}, dice=[1] * 10)
    assert [d["key"] for d in record["decisions"]] == ["defense"] and record["ended"] == "botch"
    assert "stray_blow" not in [s["step"] for s in record["steps"]]


def test_a_bystander_must_be_another_token(host):
    with pytest.raises(InvalidRequest) as err:
        start(host, "anoria", "soldier", {"weapon": "daiklave", "bystanders": ["soldier"]}, dice=[]).run()
    assert err.value.details["declaration"] == {"bystanders": {"0": ["Not a token on this table, or the attacker or target."]}}


def test_the_counterattacks_conditions_land_with_the_attack():
    """Seed 002, step 10: "Any non-damage effects of the attack also occur at this stage, as does
    the damage and effects from any counterattack launched by the defender." The monk's riposte:
    [10 × 8] = 16 successes − Anoria's Parry DV 5 = 11; raw 3 + 11 = 14 − soak 3 = 11 dice,
    all 7s: 11 bashing levels on her 10-level track — incapacitated and unconscious."""
    host = make_host(block=["excellencies"], plugins=[Riposte()])
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[10] * 3 + [1] * 7 + [1] * 4 + [10] * 8 + [7] * 11,
                answers={"counterattack": "riposte", "counterattack/defense": "parry"})  # fmt: skip
    res.run()
    assert res.record["outcome"]["damage"] == 0  # Anoria's own blow: 4 dice, all 1s
    assert res.record["outcome"]["conditions"] == {"anoria": ["incapacitated", "unconscious"]}
