"""The Excellency pack: what it changes, where, what it costs, and what it refuses.

Anoria: 40 motes, Dex 4, Martial Arts 5, Melee 3, Dodge 4. The monk: 15 motes,
Dex 3, Martial Arts 4 (Parry DV 5, Dodge DV 4). The soldier has no motes.
"""

import pytest

from vtt_bridge import InvalidRequest, make_host

from ..exalted2e.helpers import after, changes, resolve, start, step, tokens, track

CLAIMED = {
    "exalted2e_declare_attack",
    "exalted2e_attack_roll",
    "exalted2e_defense_options",
    "exalted2e_declare_defense",
    "exalted2e_attack_reroll_options",
    "exalted2e_attack_reroll",
    "exalted2e_defense_reroll_options",
    "exalted2e_defense_reroll",
    "exalted2e_counterattack_options",
    "exalted2e_counterattack",
}


@pytest.fixture(scope="module")
def host():
    return make_host()


def by_pack(record, plugin="excellencies"):
    """``{step: {number: (from, to)}}`` of the changes ``plugin`` made."""
    out = {}
    for s in record["steps"]:
        for c in s["changes"]:
            if c["plugin"] == plugin:
                out.setdefault(s["step"], {})[c["number"]] = (c["from"], c["to"])
    return out


def test_the_pack_implements_only_the_steps_it_claims(host):
    ruleset = host.ruleset("exalted2e")
    implemented = {name for name in ruleset.hook_names() if "excellencies" in host.call_order(name)}
    assert implemented == CLAIMED
    # a pack runs before the ruleset's own (trylast) implementation; its step-2 work wraps it
    assert host.call_order("exalted2e_attack_roll") == ["excellencies", "exalted2e"]
    assert host.call_order("exalted2e_declare_defense")[0] == "excellencies"


# -- attacking -------------------------------------------------------------------------


def test_first_excellency_adds_dice_at_step_3_for_a_mote_each(host):
    record = resolve(host, "anoria", "monk", {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 3}]},
                     dice=[2] * 13, answers={"defense": "parry"})  # fmt: skip
    assert by_pack(record) == {"attack_roll": {"attack_pool": (10, 13)}}
    assert step(record, "attack_roll")["rolls"][0]["formula"] == "13d10cs>=7dbl10"
    assert after(record, "anoria")["motes"] == 37
    assert record["outcome"]["motes"] == {"anoria": 3}
    assert "spends 3 motes on Essence Overwhelming" in step(record, "declare_attack")["notes"][0]["text"]


def test_second_excellency_adds_automatic_successes_for_two_motes_each(host):
    record = resolve(host, "anoria", "monk", {"weapon": "fist", "charms": [{"id": "second-excellency", "successes": 2}]},
                     dice=[2] * 10, answers={"defense": "parry"})  # fmt: skip
    assert by_pack(record) == {"attack_roll": {"auto_successes": (0, 2)}}
    assert record["outcome"]["successes"] == 2 and record["outcome"]["botch"] is False
    assert after(record, "anoria")["motes"] == 36
    assert record["ended"] == "miss"  # 2 successes against Parry DV 5


@pytest.mark.parametrize(
    "charms, spent",
    [
        ([{"id": "first-excellency", "dice": 9}], 9),  # Dex 4 + Martial Arts 5
        ([{"id": "first-excellency", "dice": 5}, {"id": "second-excellency", "successes": 2}], 9),
    ],
)
def test_up_to_the_cap_is_allowed(host, charms, spent):
    record = resolve(host, "anoria", "monk", {"weapon": "fist", "charms": charms}, dice=[2] * 20, answers={"defense": "parry"})
    assert after(record, "anoria")["motes"] == 40 - spent


@pytest.mark.parametrize(
    "declaration, charm",
    [
        ({"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 10}]}, "first-excellency"),
        ({"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 6}, {"id": "second-excellency", "successes": 2}]}, "second-excellency"),
        ({"weapon": "daiklave", "charms": [{"id": "first-excellency", "dice": 8}]}, "first-excellency"),  # Dex 4 + Melee 3
    ],
)
def test_over_the_cap_is_refused_naming_the_charm(host, declaration, charm):
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", declaration, dice=[2] * 30)
    assert err.value.details["charm"] == charm
    assert "exceed the cap" in err.value.message
    assert err.value.details["step"] == "declare_attack"


def test_without_the_motes_it_is_refused(host):
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "soldier", "monk", {"charms": [{"id": "first-excellency", "dice": 1}]}, dice=[2] * 10)
    assert err.value.details == {
        "charm": "first-excellency", "token": "soldier", "motes": 0, "cost": 1,
        "hook": "exalted2e_declare_attack", "step": "declare_attack",
    }  # fmt: skip
    assert err.value.message == "Mortal soldier has 0 motes; Essence Overwhelming (First Excellency) needs 1"


@pytest.mark.parametrize(
    "charms, index",
    [
        ([{"id": "third-excellency"}], "0"),
        ([{"id": "third-excellency"}, {"id": "first-excellency", "dice": 1}], "0"),
        ([{"id": "second-excellency", "successes": 1}, {"id": "third-excellency"}], "1"),
    ],
)
def test_essence_resurgent_is_a_reroll_effect_not_a_declaration(host, charms, index):
    """Seed 002, step 4: a reroll effect is chosen at the reroll, never declared with the attack."""
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", {"charms": charms}, dice=[2] * 20)
    assert err.value.details == {
        "declaration": {"charms": {index: {"id": [
            "Essence Resurgent (Third Excellency) ('third-excellency') is chosen at a decision, not declared"
        ]}}}
    }  # fmt: skip


@pytest.mark.parametrize(
    "use, message",
    [
        ({"dice": -1}, "Must be between 0 and 20."),
        ({"dice": "3"}, "Not a valid integer."),
        ({"dice": 1.5}, "Not a valid integer."),
        ({"dice": 2, "motes": 2}, "Unknown parameter; this one takes: dice."),
    ],
)
def test_bad_charm_params_are_refused_naming_the_param(host, use, message):
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", {"charms": [{"id": "first-excellency", **use}]}, dice=[2] * 20)
    (name, messages), = err.value.details["declaration"]["charms"]["0"].items()
    assert messages == [message] and name in use


def test_an_unknown_charm_is_refused_naming_it_and_the_known_ones(host):
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", {"weapon": "fist", "charms": [{"id": "some-other-charm"}]}, dice=[2] * 10)
    assert err.value.details == {"declaration": {"charms": {"0": {"id": [
        "Unknown Charm 'some-other-charm'; known: first-excellency, second-excellency"
    ]}}}}  # fmt: skip


def test_a_character_uses_only_the_excellencies_its_token_knows(host):
    """``flags.excellencies.charms``: a known list leaves the others unoffered and undeclarable."""
    toks = tokens(host)
    anoria = toks["anoria"].to_dict()
    anoria["flags"] = {"excellencies": {"charms": ["second-excellency"]}}
    toks["anoria"] = host.validate_token(anoria)
    with pytest.raises(InvalidRequest) as err:
        host.start("exalted2e", toks, attacker="anoria", targets=["monk"],
                   declaration={"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 1}]}, dice=[2] * 20).run()
    assert err.value.details["charm"] == "first-excellency"
    # Defending, she is offered only the Second Excellency's points of DV, and no Essence Resurgent.
    res = host.start("exalted2e", toks, attacker="monk", targets=["anoria"], declaration={}, dice=[2] * 20)
    decision = res.advance()
    assert list(decision.option("parry").params) == ["second_excellency"]  # the stunt is its own decision, after the roll

# -- step 4: Essence Resurgent on the attack ---------------------------------------------


def test_attack_reroll_is_offered_with_the_motes_and_defaults_to_keep(host):
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[2] * 10, answers={"defense": "parry"})
    decision = res.advance()
    assert decision.key == "attack_reroll" and decision.token == "anoria"
    assert [o.id for o in decision.options] == ["third-excellency", "decline"]
    assert decision.default == "decline"
    res.default("timeout")
    assert res.advance() is None
    assert res.record["ended"] == "miss"
    assert "anoria" not in res.record["changes"] or after(res.record, "anoria")["motes"] == 40


def test_the_attack_reroll_says_its_exact_chance_of_more_successes(host):
    # Anoria's fist: Dexterity 4 + Martial Arts 5 + Accuracy 1 = 10 dice, every one a 2:
    # no success. A reroll of 10 dice shows one or more unless all ten fail:
    # 1 - 0.6**10 = 99.4% (seed 002: 7-9 one success, a 10 two).
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[2] * 10, answers={"defense": "parry"})
    option = res.advance().option("third-excellency")
    assert option.detail == "over 99% chance of more successes"


@pytest.mark.parametrize(
    "pool, have, chance",
    [(1, 0, 0.4), (2, 1, 0.28), (2, 0, 1 - 0.36), (1, 2, 0.0), (0, 0, 0.0)],
)
def test_more_successes_is_exact(pool, have, chance):
    from vtt_excellencies.hooks import more_successes

    # two dice: 0 successes 0.36, 1 success 2 x 0.6 x 0.3 = 0.36, so 2 or more 0.28
    assert more_successes(pool, have) == pytest.approx(chance)


@pytest.mark.parametrize(
    "overrides, declaration",
    [
        ({"anoria": {"motes": 3}}, {"weapon": "fist"}),
        ({}, {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 1}]}),
    ],
    ids=["too few motes", "another Excellency on the roll"],
)
def test_attack_reroll_not_offered(host, overrides, declaration):
    record = resolve(host, "anoria", "monk", declaration, toks=tokens(host, **overrides), dice=[2] * 11, answers={"defense": "parry"})
    assert "attack_reroll" not in [d["key"] for d in record["decisions"]]


def test_essence_resurgent_rerolls_and_keeps_the_better(host):
    record = resolve(
        host, "anoria", "monk", {"weapon": "fist"},
        dice=[2] * 10 + [10, 10, 10, 7, 1, 1, 1, 1, 1, 1] + [1] * 5,
        answers={"defense": "parry", "attack_reroll": "third-excellency"},
    )  # fmt: skip
    reroll = step(record, "attack_reroll")
    assert reroll["rolls"][0]["options"]["flavor"] == "attack reroll (Essence Resurgent)"
    assert reroll["rolls"][0]["total"] == 7
    assert changes(record, "attack_reroll") == {"attack_successes": (0, 7)}
    assert after(record, "anoria")["motes"] == 36
    # 7 - Parry 5 = 2; raw 3 + 2 = 5; soak 3; Essence 5 minimum capped at raw 5
    assert record["outcome"]["raw_damage"] == 5 and changes(record, "damage")["damage_pool"] == (0, 5)


# -- defending ----------------------------------------------------------------------------


def test_defense_options_carry_the_excellency_params_once(host):
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[2] * 10)
    decision = res.advance()
    assert [o.id for o in decision.options] == ["dodge", "parry", "nothing"]
    assert set(decision.option("parry").params) == {"first_excellency", "second_excellency"}
    assert set(decision.option("dodge").params) == {"first_excellency", "second_excellency"}
    assert decision.option("parry").label == "Parry"


def test_without_motes_the_defense_options_are_the_rulesets(host):
    res = start(host, "anoria", "soldier", {"weapon": "fist"}, dice=[2] * 10)
    decision = res.advance()
    assert not decision.option("parry").params


def test_first_excellency_on_a_dv_rolls_at_step_5(host):
    record = resolve(
        host, "anoria", "monk", {"weapon": "fist"},
        dice=[10, 10, 10, 10, 1, 1, 1, 1, 1, 1] + [7, 7] + [1] * 4,
        answers={"defense": {"option": "parry", "params": {"first_excellency": 2}}, "attack_reroll": "decline"},
    )  # fmt: skip
    assert by_pack(record) == {"declare_defense": {"defense_dice": (0, 2)}}
    assert step(record, "apply_defense")["rolls"][0]["formula"] == "2d10cs>=7dbl10"
    assert changes(record, "apply_defense") == {"dv": (5, 7), "net_successes": (0, 1)}
    assert after(record, "monk")["motes"] == 13
    # the DV already has an Excellency: no Essence Resurgent at step 6
    assert "defense_reroll" not in [d["key"] for d in record["decisions"]]


def test_second_excellency_on_a_dv_adds_points(host):
    record = resolve(
        host, "anoria", "monk", {"weapon": "fist"},
        dice=[10, 10, 10, 10, 1, 1, 1, 1, 1, 1] + [1] * 4,
        answers={"defense": {"option": "parry", "params": {"second_excellency": 2}}},
    )  # fmt: skip
    assert by_pack(record) == {"declare_defense": {"dv": (5, 7)}}
    assert after(record, "monk")["motes"] == 11
    assert record["outcome"]["dv"] == 7


@pytest.mark.parametrize(
    "answer, detail",
    [
        ({"option": "parry", "params": {"first_excellency": 8}}, ("charm", "first-excellency")),  # Dex 3 + MA 4 = 7
        ({"option": "dodge", "params": {"second_excellency": 3}}, ("charm", "second-excellency")),  # Dex 3 + Dodge 2 = 5
    ],
)
def test_defense_excellencies_refused(host, answer, detail):
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", {"weapon": "fist"}, dice=[2] * 20, answers={"defense": answer})
    key, value = detail
    assert err.value.details[key] == value


@pytest.mark.parametrize(
    "answer, param",
    [
        ({"option": "nothing", "params": {"first_excellency": 1}}, "first_excellency"),  # doing nothing takes none
        ({"option": "parry", "params": {"third_excellency": True}}, "third_excellency"),  # offered at step 6 instead
        ({"option": "parry", "params": {"first_excellency": 1, "third_excellency": True}}, "third_excellency"),
        ({"option": "parry", "params": {"first_excellency": "2"}}, "first_excellency"),
        ({"option": "parry", "params": {"first_excellency": -1}}, "first_excellency"),
    ],
)
def test_defense_params_the_option_does_not_offer_are_refused_before_the_pack_runs(host, answer, param):
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", {"weapon": "fist"}, dice=[2] * 20, answers={"defense": answer})
    assert list(err.value.details["answers"]["defense"]["params"]) == [param]


def test_defense_excellency_without_motes_is_refused(host):
    toks = tokens(host, monk={"motes": 1})
    with pytest.raises(InvalidRequest) as err:
        resolve(host, "anoria", "monk", {"weapon": "fist"}, toks=toks, dice=[2] * 20,
                answers={"defense": {"option": "parry", "params": {"second_excellency": 1}}})  # fmt: skip
    assert err.value.details["charm"] == "second-excellency" and err.value.details["cost"] == 2


def test_essence_resurgent_on_a_dv_adds_half_the_ability_at_step_6(host):
    # 6 successes against Parry 5 get through; +MA 4 // 2 = 2 DV stops them
    res = start(host, "anoria", "monk", {"weapon": "fist"}, dice=[10, 10, 10, 1, 1, 1, 1, 1, 1, 1],
                answers={"defense": "parry", "attack_reroll": "decline", "defense_stunt": "decline"})  # fmt: skip
    decision = res.advance()
    assert decision.key == "defense_reroll" and decision.token == "monk"
    assert [o.id for o in decision.options] == ["third-excellency", "decline"]
    assert decision.option("third-excellency").detail == "DV 5 → 7"  # what choosing it gives
    res.answer("third-excellency")
    assert res.advance() is None
    record = res.record
    assert by_pack(record) == {"defense_reroll": {"dv": (5, 7)}}
    assert record["ended"] == "miss" and step(record, "defense_reroll")["ended"] == "miss"
    assert after(record, "monk")["motes"] == 11


# -- counterattacking ---------------------------------------------------------------------


def test_solar_counterattack_strikes_back_as_a_nested_attack(host):
    res = start(
        host, "anoria", "monk", {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 3}]},
        dice=[10, 10, 10, 10, 10, 7, 1, 1, 1, 1, 1, 1, 1]  # 13 dice, 11 successes
        + [7, 1]  # the monk's Essence Overwhelming: DV 5 + 1
        + [7, 7, 1, 1, 1]  # raw 3 + 5 = 8 - soak 3 = 5 dice: 2 levels
        + [10, 10, 10, 10, 1, 1, 1, 1]  # the monk's fist: 8 dice, 8 successes vs Anoria's Dodge 7 - 1 (her attack)
        + [7, 7],  # raw 3 + 2 = 5 - soak 3 = 2 dice
        answers={
            "defense": {"option": "parry", "params": {"first_excellency": 2}},
            "counterattack": "solar-counterattack",
        },
    )  # fmt: skip
    decisions = []
    while (decision := res.advance()) is not None:
        decisions.append(decision.key)
        res.default()
    record = res.record
    # the counterattack's own reroll decisions are asked (both have motes); no counter to it;
    # successes remain past each DV, so each defender is asked for a stunt
    assert decisions == [
        "defense_stunt", "counterattack/defense", "counterattack/attack_reroll",
        "counterattack/defense_stunt", "counterattack/defense_reroll",
    ]  # fmt: skip
    child = step(record, "counterattack")["children"][0]
    assert child["kind"] == "counterattack" and child["attacker"] == "monk" and child["declaration"]["weapon"] == "fist"
    assert "counterattack/counterattack" not in [d["key"] for d in record["decisions"]]
    assert child["outcome"]["damage"] == 2 and record["outcome"]["damage"] == 2
    assert track(after(record, "anoria")["health"]) == "BB........"
    assert track(after(record, "monk")["health"]) == "BB........"
    assert after(record, "anoria")["motes"] == 37
    assert after(record, "monk")["motes"] == 15 - 2 - 3
    assert "spends 3 motes on Solar Counterattack" in step(record, "counterattack")["notes"][0]["text"]


def test_counterattack_offered_only_against_close_combat_with_the_motes(host):
    def offered(attacker, target, declaration, **overrides):
        res = start(host, attacker, target, declaration, toks=tokens(host, **overrides), seed=5,
                    answers={"defense": "nothing", "attack_reroll": "decline", "defense_reroll": "decline"})  # fmt: skip
        while (decision := res.advance()) is not None:
            if decision.name == "counterattack":
                return [o.id for o in decision.options]
            res.default()
        return None

    assert offered("soldier", "anoria", {"weapon": "spear", "stunt": 3}) == ["solar-counterattack", "decline"]
    assert offered("soldier", "anoria", {"weapon": "spear", "stunt": 3}, anoria={"motes": 2}) is None
    assert offered("soldier", "anoria", {"weapon": "short bow", "stunt": 3}) is None


def test_same_seed_same_attack_with_the_pack(host):
    declaration = {"weapon": "fist", "charms": [{"id": "first-excellency", "dice": 2}]}
    answers = {"defense": {"option": "parry", "params": {"first_excellency": 1}}}
    assert resolve(host, "anoria", "monk", declaration, seed=99, answers=answers) == resolve(
        host, "anoria", "monk", declaration, seed=99, answers=answers
    )


def test_blocking_the_pack_leaves_the_core():
    core = make_host(block=["excellencies"])
    assert "excellencies" not in core.call_order("exalted2e_attack_roll")
    record = resolve(core, "anoria", "monk", {"weapon": "fist"}, dice=[10, 10, 10] + [1] * 7 + [1] * 5)
    assert [d["key"] for d in record["decisions"]] == ["defense", "defense_stunt"]
    assert by_pack(record) == {}
