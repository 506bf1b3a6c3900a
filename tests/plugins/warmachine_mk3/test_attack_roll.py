"""Step 5: the attack roll sequence 5a–e against each model potentially hit."""

import pytest

from vtt_bridge import Option, hookimpl

from .kit import active, after, attack, faces, grunt, jack, model, run, step, steps, tokens

# -- 5 and 5d: the numbers and the verdict ---------------------------------------


@pytest.mark.parametrize(
    ("dice", "modifiers", "total", "hit"),
    [
        ([4, 3], {}, 12, True),  # RAT 5 + 7 = 12 reaches DEF 12
        ([4, 2], {}, 11, False),
        ([1, 2], {"aiming": True, "back_strike": True}, 12, True),  # RAT 5 + 2 + 2 + 3
        ([2, 2], {"aiming": True}, 11, False),
        ([2, 2], {"attack_bonus": 1, "back_strike": True}, 12, True),
    ],
)
def test_2d6_plus_rat_and_modifiers_against_def(dice, modifiers, total, hit):
    record = run(tokens(jack(), grunt("a", ARM=30)), dice=[*dice, 1, 1], modifiers=modifiers)
    result = record["outcome"]["models"]["a"]
    assert (result["roll"], result["needed"], result["hit"]) == (total, 12, hit)


def test_the_per_model_step_sets_the_three_numbers_and_says_where_they_come_from():
    record = run(tokens(jack(), grunt("a", ARM=30)), dice=[1, 2, 1, 1], modifiers={"aiming": True, "back_strike": True})
    entry = step(record, "attack_roll", "a")
    assert [(c["number"], c["to"]) for c in entry["changes"]] == [("attack_dice", 2), ("attack_mod", 9), ("target_def", 12)]
    assert entry["notes"][0]["text"] == "against A: 2d6 + RAT 5 + aiming 2 + back strike 2 = 9 against DEF 12"


def test_aiming_counts_only_for_ranged_attacks():
    record = run(tokens(jack(), grunt("a", ARM=30)), weapon="Fist", dice=[2, 2, 1, 1], modifiers={"aiming": True})
    assert record["outcome"]["models"]["a"]["roll"] == 11  # MAT 7 + 4, no aiming bonus


def test_a_magic_attack_uses_the_casters_focus_stat():
    caster = model("jack", kind="warcaster", owner="alice", FOCUS=7, RAT=3, DEF=15, ARM=15,
                   boxes=17, weapons=[{"name": "Bolt", "kind": "magic", "RNG": 10, "POW": 12}])
    record = run(tokens(caster, grunt("a", ARM=30)), weapon="Bolt", dice=[3, 2, 1, 1])
    assert record["outcome"]["models"]["a"]["roll"] == 12  # FOCUS 7 + 5


class OneDie:
    """A test pack that takes a die away at 5a (the roll is made with one die)."""

    @hookimpl
    def warmachine_mk3_attack_roll_dice_count(self, ctx):
        ctx.attack_dice -= 1


class DropHighest:
    """A test pack removing the highest die at 5c, through the public roll."""

    @hookimpl
    def warmachine_mk3_attack_roll_remove_dice(self, ctx):
        roll = ctx.dice.rolls[-1]
        best = max((f, i) for i, f in enumerate(roll.faces) if roll.is_active(i))
        roll.mark(best[1], "discarded")


ONE_DIE, DROP_HIGHEST = OneDie(), DropHighest()


@pytest.mark.parametrize(
    ("rat", "dice", "kw", "hit"),
    [
        (12, [1, 1], {}, False),  # 2 + 12 = 14 would reach DEF 12, but all dice show 1
        (12, [1, 1, 1], {"modifiers": {"boosted_attack": True}}, False),
        (12, [1, 1, 2], {"modifiers": {"boosted_attack": True}}, True),
        (12, [1], {"packs": (ONE_DIE,)}, False),  # one die showing 1 is "all dice 1"
        (12, [1, 1, 6], {"packs": (DROP_HIGHEST,), "modifiers": {"extra_attack_dice": 1}}, False),  # after removal
    ],
)
def test_all_ones_miss(rat, dice, kw, hit):
    record = run(tokens(jack(RAT=rat, focus=0), grunt("a", ARM=40)), dice=[*dice, 1, 1], **kw)
    assert record["outcome"]["models"]["a"]["hit"] is hit


@pytest.mark.parametrize(
    ("dice", "kw", "hit"),
    [
        ([6, 6], {}, True),  # 12 + 5 = 17 is far below DEF 30, but all dice show 6
        ([6, 6, 6], {"modifiers": {"boosted_attack": True}}, True),
        ([6], {"packs": (ONE_DIE,)}, False),  # not on a single die
        ([6, 6, 1], {"modifiers": {"extra_attack_dice": 1, "discard_lowest_attack": 1}}, True),  # judged after removal
        ([6, 5, 6], {"modifiers": {"extra_attack_dice": 1, "discard_lowest_attack": 1}}, True),
        ([6, 6, 5], {"modifiers": {"extra_attack_dice": 1}}, False),  # 5 is not 6
    ],
)
def test_all_sixes_hit_unless_one_die(dice, kw, hit):
    record = run(tokens(jack(focus=0), grunt("a", DEF=30, ARM=40)), dice=[*dice, 1, 1], **kw)
    assert record["outcome"]["models"]["a"]["hit"] is hit


@pytest.mark.parametrize(
    ("dice", "kw", "hit", "critical"),
    [
        ([4, 4], {}, True, True),
        ([5, 3], {}, True, False),
        ([3, 3], {}, False, False),  # 11 misses: no critical without a hit
        ([2, 5, 2], {"modifiers": {"boosted_attack": True}}, True, True),  # any two dice
        ([1, 5, 6], {"modifiers": {"boosted_attack": True}}, True, False),
        ([4, 1, 4], {"modifiers": {"extra_attack_dice": 1, "discard_lowest_attack": 1}}, True, True),
        ([4, 4, 5], {"packs": (DROP_HIGHEST,), "modifiers": {"extra_attack_dice": 1}}, True, True),
        ([4, 5, 4], {"modifiers": {"extra_attack_dice": 1, "discard_lowest_attack": 1}}, True, False),  # a removed 4
    ],
)
def test_critical_hits_need_a_hit_and_two_dice_alike(dice, kw, hit, critical):
    record = run(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[*dice, 1, 1], **kw)
    result = record["outcome"]["models"]["a"]
    assert (result["hit"], result["critical"], record["outcome"]["critical"]) == (hit, critical, critical)


@pytest.mark.parametrize("condition", ["knocked_down", "stationary"])
def test_a_knocked_down_or_stationary_model_is_def_5_against_ranged_attacks(condition):
    # RAT 5 + 1+2 = 8: misses DEF 12 but hits DEF 5
    record = run(tokens(jack(focus=0), grunt("a", ARM=40, **{condition: True})), dice=[1, 2, 1, 1])
    assert record["outcome"]["models"]["a"]["needed"] == 5
    assert record["outcome"]["models"]["a"]["hit"] is True
    note = step(record, "attack_roll", "a")["notes"][0]["text"]
    assert note.endswith(f"against DEF 5 ({condition.replace('_', ' ')}: DEF 5)")


@pytest.mark.parametrize("condition", ["knocked_down", "stationary"])
def test_melee_hits_a_knocked_down_or_stationary_model_automatically_but_still_rolls(condition):
    record = run(tokens(jack(focus=0), grunt("a", ARM=40, **{condition: True})), weapon="Fist", dice=[1, 1, 1, 1])
    result = record["outcome"]["models"]["a"]
    assert (result["hit"], result["critical"], result["how"]) == (True, True, "roll")  # 1,1: a critical
    assert faces(step(record, "attack_roll_dice", "a")["rolls"][0]) == [1, 1]
    assert "for a critical hit" in step(record, "auto_hit_miss")["notes"][0]["text"]
    record = run(tokens(jack(focus=0), grunt("a", ARM=40, **{condition: True})), weapon="Fist", dice=[1, 2, 1, 1])
    assert record["outcome"]["models"]["a"]["critical"] is False


# -- 5a: boost ----------------------------------------------------------------


def test_the_boost_decision_goes_to_the_attacker_with_the_cost():
    res = attack(tokens(jack(focus=3), grunt("a", ARM=40)), dice=[4, 3, 1, 1, 1])
    decision = res.advance()
    assert decision.key == "boost_attack[a]" and decision.name == "boost_attack"
    assert decision.token == "jack" and decision.step == "attack_roll_dice_count"
    assert [o.id for o in decision.options] == ["boost", "decline"]
    assert decision.default == "decline"
    assert decision.options[0].label == "Boost the attack roll against A (spend 1 focus, 3 → 2)"


def test_a_boost_answered_adds_a_die_and_spends_focus():
    res = attack(tokens(jack(focus=3), grunt("a", ARM=40)), dice=[4, 3, 1, 1, 1])
    res.advance()
    res.answer("boost")
    res.advance()  # damage boost
    res.answer("decline")
    assert res.advance() is None
    record = res.record
    assert faces(step(record, "attack_roll_dice", "a")["rolls"][0]) == [4, 3, 1]
    assert record["outcome"]["models"]["a"]["roll"] == 13
    assert record["outcome"]["models"]["a"]["boosted_attack"] is True
    assert after(record, "jack")["focus"] == 2
    assert record["decisions"][0]["how"] == "answered"


def test_a_boost_defaulted_rolls_two_dice_and_spends_nothing():
    res = attack(tokens(jack(focus=3), grunt("a", ARM=40)), dice=[4, 3, 1, 1])
    res.advance()
    res.default("timeout")
    res.advance()
    res.default("disconnect")
    assert res.advance() is None
    record = res.record
    assert faces(step(record, "attack_roll_dice", "a")["rolls"][0]) == [4, 3]
    assert "jack" not in record["changes"]
    assert [d["how"] for d in record["decisions"]] == ["timeout", "disconnect"]
    assert record["decisions"][0]["answer"] == {"option": "decline"}


def test_no_boost_is_offered_without_focus():
    res = attack(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[4, 3, 1, 1])
    assert res.advance() is None
    assert res.record["decisions"] == []
    assert "decisions" not in step(res.record, "attack_roll_dice_count", "a")


def test_with_one_focus_only_the_first_roll_can_be_boosted():
    record = run(tokens(jack(focus=1), grunt("a", ARM=20)), dice=[4, 3, 1, 6, 6],
                 answers={"boost_attack": "boost", "boost_damage": "boost"})
    assert [d["key"] for d in record["decisions"]] == ["boost_attack[a]"]
    assert after(record, "jack")["focus"] == 0


def test_a_warlock_boosts_with_fury():
    warlock = model("jack", kind="warlock", owner="alice", RAT=5, DEF=15, ARM=15, FURY=6, fury=2, boxes=17,
                    weapons=[{"name": "Cannon", "kind": "ranged", "RNG": 10, "POW": 12}])
    record = run(tokens(warlock, grunt("a", ARM=40)), dice=[4, 3, 1, 1, 1], answers={"boost_attack": "boost"})
    assert after(record, "jack")["fury"] == 1
    assert "spend 1 fury, 2 → 1" in record["decisions"][0]["options"][0]["label"]


def test_a_warbeast_is_forced_to_boost_gaining_fury_up_to_its_fury_stat():
    def beast(fury):
        return model("jack", kind="warbeast", owner="alice", RAT=4, DEF=12, ARM=17, FURY=3, fury=fury,
                     spiral=[4] * 6, weapons=[{"name": "Cannon", "kind": "ranged", "RNG": 10, "POW": 12}])

    record = run(tokens(beast(1), grunt("a", ARM=40)), dice=[4, 3, 1, 1, 1], answers={"boost_attack": "boost"})
    assert after(record, "jack")["fury"] == 2
    assert "force it: +1 fury, 1 → 2" in record["decisions"][0]["options"][0]["label"]
    record = run(tokens(beast(3), grunt("a", ARM=40)), dice=[4, 3, 1, 1])
    assert record["decisions"] == []


def test_a_declared_boost_is_free_and_not_asked_again():
    record = run(tokens(jack(focus=3), grunt("a", ARM=40)), dice=[4, 3, 1, 1, 1], modifiers={"boosted_attack": True})
    assert [d["key"] for d in record["decisions"]] == ["boost_damage[a]"]
    assert faces(step(record, "attack_roll_dice", "a")["rolls"][0]) == [4, 3, 1]
    assert "jack" not in record["changes"]


def test_declared_extra_dice_are_added_at_5a():
    record = run(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[1, 2, 3, 1, 1], modifiers={"extra_attack_dice": 1})
    assert {"number": "attack_dice", "from": 2, "to": 3, "plugin": "warmachine_mk3"} in (
        step(record, "attack_roll_dice_count", "a")["changes"]
    )


# -- 5c ------------------------------------------------------------------------


def test_removed_dice_do_not_count():
    record = run(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[1, 5, 3, 1, 1],
                 modifiers={"extra_attack_dice": 1, "discard_lowest_attack": 1})
    roll = step(record, "attack_roll_dice", "a")["rolls"][0]
    assert active(roll) == [5, 3]
    assert record["outcome"]["models"]["a"]["roll"] == 13
    assert step(record, "attack_roll_remove_dice", "a")["notes"][0]["text"] == "removed: 1"


def test_removing_dice_always_leaves_one():
    record = run(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[3, 4, 1, 1], modifiers={"discard_lowest_attack": 5})
    assert record["outcome"]["models"]["a"]["roll"] == 9  # 4 + RAT 5


# -- 5e: rerolls go back to 5b with removed dice restored ------------------------


class Lucky:
    """A test pack offering a reroll of any attack or damage roll."""

    @hookimpl
    def warmachine_mk3_reroll_attack_options(self, ctx):
        return [Option(id="lucky", label="Reroll (Lucky)")]

    @hookimpl
    def warmachine_mk3_reroll_damage_options(self, ctx):
        return [Option(id="lucky", label="Reroll (Lucky)")]


LUCKY = Lucky()


def test_an_attack_reroll_returns_to_5b_with_the_removed_dice_added_back():
    record = run(
        tokens(jack(focus=0), grunt("a", ARM=40)),
        # 3 dice 1,2,3; the 1 removed: 2+3 + 5 = 10 misses; reroll 3 dice 6,5,4; the 4 removed: 16 hits
        dice=[1, 2, 3, 6, 5, 4, 1, 1],
        modifiers={"extra_attack_dice": 1, "discard_lowest_attack": 1},
        packs=(LUCKY,),
        answers={"reroll_attack": ["lucky", "decline"]},
    )
    loop = [s for s in steps(record) if s.endswith("[a]")][:10]
    assert loop == [
        "attack_roll[a]", "attack_roll_dice_count[a]", "attack_roll_dice[a]", "attack_roll_remove_dice[a]",
        "attack_roll_hit_or_miss[a]", "attack_roll_reroll[a]",
        "attack_roll_dice[a]", "attack_roll_remove_dice[a]", "attack_roll_hit_or_miss[a]", "attack_roll_reroll[a]",
    ]
    first = step(record, "attack_roll_dice", "a", 0)["rolls"][0]
    second = step(record, "attack_roll_dice", "a", 1)["rolls"][0]
    # The first roll stays as judged at 5d (the 1 removed); the reroll is a roll of its own.
    assert [(r["result"], r["active"], r.get("discarded", False)) for r in first["terms"][0]["results"]] == [
        (1, False, True), (2, True, False), (3, True, False),
    ]
    assert first["formula"] == "3d6dl1 + 5" and first["total"] == 10 and "superseded" not in first["options"]
    assert faces(second) == [6, 5, 4] and active(second) == [6, 5]
    assert second["options"]["flavor"] == "attack roll (reroll)"
    assert step(record, "attack_roll_dice", "a", 1)["notes"][0]["text"] == "the 1 removed die is added back"
    assert record["outcome"]["models"]["a"]["roll"] == 16 and record["outcome"]["models"]["a"]["hit"] is True
    assert [(d["key"], d["answer"]["option"]) for d in record["decisions"]] == [
        ("reroll_attack[a]", "lucky"), ("reroll_attack[a]", "decline"), ("reroll_damage[a]", "decline"),
    ]


def test_an_attack_reroll_offered_but_not_taken_keeps_the_roll():
    res = attack(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[1, 2, 1, 1], packs=(LUCKY,))
    decision = res.advance()
    assert decision.key == "reroll_attack[a]" and [o.id for o in decision.options] == ["lucky", "decline"]
    assert decision.default == "decline" and decision.token == "jack"
    res.default("timeout")
    assert res.advance() is None  # missed: no damage roll to reroll
    assert steps(res.record).count("attack_roll_dice[a]") == 1


class Rerun:
    """A test pack sending the sequence back to 5b itself, once per model."""

    @hookimpl
    def warmachine_mk3_attack_roll_reroll(self, ctx):
        if len([r for r in ctx.dice.rolls if r.label.startswith("attack")]) == 1:
            ctx.goto("attack_roll_dice")


RERUN = Rerun()


def test_a_pack_may_go_back_to_5b_itself():
    record = run(tokens(jack(focus=0), grunt("a", ARM=40)), dice=[1, 2, 6, 6, 1, 1], packs=(RERUN,))
    assert steps(record).count("attack_roll_dice[a]") == 2
    assert record["outcome"]["models"]["a"]["hit"] is True
