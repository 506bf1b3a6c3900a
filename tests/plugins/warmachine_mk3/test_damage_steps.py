"""Steps 9 (damage rolls, 9a–g) and 10 (damage application, 10a–e)."""

import pytest

from vtt_bridge import Option, hookimpl

from .kit import after, at, attack, faces, grunt, jack, model, run, step, steps, tokens

# -- 9 and 9d: POW or P+S plus dice against ARM -------------------------------------


@pytest.mark.parametrize(
    ("weapon", "modifiers", "arm_bonus", "expected"),
    [
        ("Cannon", {}, 0, (12, 14, 21, 7)),  # POW 12 + 5+4 - ARM 14
        ("Cannon", {"damage_bonus": 2}, 3, (14, 17, 23, 6)),
        ("Fist", {}, 0, (14, 14, 23, 9)),  # P+S 14 from the card
        ("Hammer", {}, 0, (17, 14, 26, 12)),  # no P+S printed: POW 6 + STR 11
    ],
)
def test_the_damage_roll_is_2d6_plus_pow_or_p_plus_s_against_arm(weapon, modifiers, arm_bonus, expected):
    pow_, arm, total, points = expected
    record = run(tokens(jack(focus=0), grunt("a", boxes=20, arm_bonus=arm_bonus)), weapon=weapon,
                 dice=[5, 5, 5, 4], modifiers=modifiers)
    result = record["outcome"]["models"]["a"]
    assert (result["pow"], result["arm"], result["damage_roll"], result["damage"]) == (pow_, arm, total, points)
    assert after(record, "a")["marked"] == points


def test_the_per_model_damage_step_sets_its_numbers():
    record = run(tokens(jack(focus=0), grunt("a", boxes=20)), dice=[5, 5, 5, 4], modifiers={"damage_bonus": 1})
    entry = step(record, "damage_roll", "a")
    assert [(c["number"], c["to"]) for c in entry["changes"]] == [
        ("damage_dice", 2), ("damage_pow", 13), ("target_arm", 14), ("damage_to", "a"),
    ]
    assert entry["notes"][0]["text"] == "against A: 2d6 + POW 12 + bonus 1 against ARM 14"


# -- 9a: boost and extra dice --------------------------------------------------------


def test_the_damage_boost_is_the_attackers_decision_and_costs_focus():
    res = attack(tokens(jack(focus=1), grunt("a", boxes=20)), dice=[5, 5, 5, 4, 3])
    decision = res.advance()
    assert decision.key == "boost_attack[a]"
    res.answer("decline")
    decision = res.advance()
    assert decision.key == "boost_damage[a]" and decision.token == "jack" and decision.step == "damage_roll_dice_count"
    res.answer("boost")
    assert res.advance() is None
    assert faces(step(res.record, "damage_roll_dice", "a")["rolls"][0]) == [5, 4, 3]
    assert res.record["outcome"]["models"]["a"]["damage"] == 10  # 12 + 12 - 14
    assert after(res.record, "jack")["focus"] == 0


def test_a_charge_boosts_the_melee_damage_roll_for_free():
    record = run(tokens(jack(focus=3), grunt("a", boxes=20)), weapon="Fist", dice=[5, 5, 5, 4, 3],
                 modifiers={"charge": True})
    assert [d["key"] for d in record["decisions"]] == ["boost_attack[a]"]
    assert faces(step(record, "damage_roll_dice", "a")["rolls"][0]) == [5, 4, 3]
    assert step(record, "damage_roll_dice_count", "a")["notes"][0]["text"] == "boosted (charge)"
    assert "jack" not in record["changes"]


def test_extra_damage_dice_are_added():
    record = run(tokens(jack(focus=0), grunt("a", boxes=20)), dice=[5, 5, 1, 1, 1], modifiers={"extra_damage_dice": 1})
    assert faces(step(record, "damage_roll_dice", "a")["rolls"][0]) == [1, 1, 1]


# -- 9c and 9e: removal, rerolls ---------------------------------------------------------


class Lucky:
    @hookimpl
    def warmachine_mk3_reroll_damage_options(self, ctx):
        return [Option(id="lucky", label="Reroll (Lucky)")]


LUCKY = Lucky()


def test_a_damage_reroll_returns_to_9b_with_the_removed_dice_added_back():
    record = run(
        tokens(jack(focus=0), grunt("a", boxes=20)),
        # damage: 1,1,2 - the lowest 1 removed - 1+2 + 12 = 15: 1; reroll 3 dice 6,6,2 - 2 removed - 24: 10
        dice=[5, 5, 1, 1, 2, 6, 6, 2],
        modifiers={"extra_damage_dice": 1, "discard_lowest_damage": 1},
        packs=(LUCKY,),
        answers={"reroll_damage": ["lucky", "decline"]},
    )
    first = step(record, "damage_roll_dice", "a", 0)["rolls"][0]
    second = step(record, "damage_roll_dice", "a", 1)["rolls"][0]
    assert first["formula"] == "3d6dl1 + 12" and first["total"] == 15  # as judged at 9d, not folded into the reroll
    assert not any(r.get("rerolled") for r in first["terms"][0]["results"])
    assert faces(second) == [6, 6, 2] and second["options"]["flavor"] == "damage roll (reroll)"
    assert record["outcome"]["models"]["a"]["damage"] == 10
    assert steps(record).count("damage_roll_would_damage[a]") == 2


# -- 9f: a roll that fails to exceed ARM --------------------------------------------------


class Spiked:
    """A test pack with a trigger on a damage roll failing to exceed ARM."""

    @hookimpl
    def warmachine_mk3_fails_to_exceed_arm(self, ctx):
        if ctx.damage_points == 0:
            ctx.note("spikes!")


def test_a_roll_at_arm_triggers_9f_and_ends_that_models_damage_sequence():
    # 1+1 + 12 = 14: exactly ARM 14, no damage
    record = run(tokens(jack(focus=0), grunt("a")), dice=[5, 5, 1, 1], packs=(Spiked(),))
    entry = step(record, "fails_to_exceed_arm", "a")
    assert entry["notes"][0]["text"] == "spikes!"
    assert entry["ended"] == "the damage roll fails to exceed A's ARM"
    assert "damage_transfer[a]" not in steps(record)
    assert [s for s in steps(record) if s.startswith("apply_damage")] == []
    assert record["outcome"]["hit"] is True and record["outcome"]["damage"] == 0
    assert record["changes"] == {}


# -- 9g: would suffer damage --------------------------------------------------------------


class Sponge:
    """A test pack moving the damage to "s" at 9g."""

    @hookimpl
    def warmachine_mk3_damage_transfer(self, ctx):
        ctx.damage_to = "s"


def test_damage_moved_at_9g_is_suffered_by_the_other_model_and_what_it_cannot_hold_comes_back():
    # 6+6 + 12 - 14 = 10 damage; the sponge has 3 of 4 boxes free: 3 to it, 7 back to a (20 boxes)
    table = tokens(jack(focus=0), grunt("a", boxes=20), grunt("s", boxes=4, marked=1, position=at(5, 5)))
    record = run(table, dice=[5, 5, 6, 6], packs=(Sponge(),))
    assert step(record, "damage_transfer", "a")["notes"][0]["text"] == (
        "S will suffer 3 damage instead of A; 7 it has no boxes for comes back to A"
    )
    assert after(record, "s")["marked"] == 4 and after(record, "s")["destroyed"] is True
    assert after(record, "a")["marked"] == 7
    assert record["outcome"]["models"]["a"]["transferred_to"] == "s"
    assert record["outcome"]["damage"] == 7


# -- 10: damage application -----------------------------------------------------------------


def test_damaged_models_are_applied_in_the_active_players_order():
    spray = tokens(jack(focus=0), grunt("a", position=at(0, 3)), grunt("b", position=at(0.8, 4)))
    kw = dict(weapon="Flamer", models_under_template=["b"], dice=[4, 3, 4, 3, 6, 6, 6, 6])
    assert [s for s in steps(run(spray, **kw)) if s.startswith("apply_damage")] == ["apply_damage[a]", "apply_damage[b]"]
    record = run(spray, application_order=["b"], **kw)
    assert [s for s in steps(record) if s.startswith("apply_damage")] == ["apply_damage[b]", "apply_damage[a]"]
    assert record["outcome"]["conditions"] == {"b": ["disabled", "boxed", "destroyed"],
                                               "a": ["disabled", "boxed", "destroyed"]}


def test_a_row_of_boxes_fills_in_order_and_a_model_with_boxes_left_is_not_disabled():
    solo = grunt("a", kind="solo", boxes=8, marked=2)
    record = run(tokens(jack(focus=0), solo), dice=[5, 5, 4, 3])  # 7 + 12 - 14 = 5
    assert after(record, "a")["marked"] == 7
    assert step(record, "disabled", "a")["ended"] == "boxes left: not disabled"
    assert step(record, "suffered_damage", "a")["notes"][0]["text"] == "A suffers 5 damage; 1 of 8 boxes left"
    assert record["outcome"]["conditions"] == {}


def test_damage_beyond_the_last_box_is_lost():
    solo = grunt("a", kind="solo", boxes=8, marked=6)
    record = run(tokens(jack(focus=0), solo), dice=[5, 5, 4, 3])
    assert after(record, "a")["marked"] == 8
    assert record["outcome"]["damage"] == 2
    assert record["outcome"]["conditions"] == {"a": ["disabled", "boxed", "destroyed"]}


def test_a_grid_column_fills_from_the_top_overflows_right_and_wraps_from_6_to_1():
    # grid columns (top down): .----L / ----LL / ---MMC / ---MCC / ----RR / .----R
    target = jack("a", owner="bob", marked=[0, 0, 0, 0, 4, 4], position=at(0, 3))
    # hit 4+3 + 5 = 12; 6+5 + 12 - ARM 18 = 5 damage; column 5: R, R, then column 6: R, then column 1: 2 blanks
    record = run(tokens(jack(focus=0), target), dice=[4, 3, 6, 5, 5])
    assert [r["options"]["flavor"] for r in step(record, "apply_damage", "a")["rolls"]] == ["damage grid column"]
    assert after(record, "a")["marked"] == [2, 0, 0, 0, 6, 5]
    assert after(record, "a")["crippled"] == ["right_arm"]
    assert record["outcome"]["conditions"] == {"a": ["crippled:right_arm"]}


def test_a_system_is_crippled_only_when_all_its_boxes_are_marked():
    target = jack("a", owner="bob", position=at(0, 3))
    # 6+6 + 12 - 18 = 6 damage from column 2: four blanks and L, L; the L in column 1 is left
    record = run(tokens(jack(focus=0), target), dice=[4, 3, 6, 6, 2])
    assert after(record, "a")["marked"] == [0, 6, 0, 0, 0, 0]
    assert after(record, "a")["crippled"] == []


def test_systems_can_be_named_by_the_token():
    target = jack("a", owner="bob", position=at(0, 3), grid=["AA----", "------", "------", "------", "------", "------"],
                  systems={"A": "arc_node_prime"})
    record = run(tokens(jack(focus=0), target), dice=[4, 3, 1, 6, 1])  # 7 + 12 - 18 = 1... a single box
    assert after(record, "a")["marked"] == [1, 0, 0, 0, 0, 0]
    record = run(tokens(jack(focus=0), target), dice=[4, 3, 6, 2, 1])  # 2 damage: both A boxes
    assert record["outcome"]["conditions"] == {"a": ["crippled:arc_node_prime"]}


def test_a_full_grid_disables_the_warjack():
    target = jack("a", owner="bob", position=at(0, 3), marked=[5, 6, 6, 6, 6, 4])
    record = run(tokens(jack(focus=0), target), dice=[4, 3, 4, 4, 3])  # 2 damage, column 3: overflows to 6, 6 full
    assert after(record, "a")["marked"] == [5, 6, 6, 6, 6, 5]
    assert after(record, "a")["destroyed"] is True
    assert record["outcome"]["damage"] == 1


def spiral_beast(**kw):
    base = dict(kind="warbeast", owner="bob", MAT=7, RAT=4, DEF=12, ARM=16, FURY=3, base=50,
                spiral=[4, 4, 4, 4, 4, 4], position=at(0, 3))
    return model("a", **{**base, **kw})


@pytest.mark.parametrize(
    ("marked", "branch", "after_", "crippled"),
    [
        ([0, 0, 0, 0, 4, 0], 6, [2, 0, 0, 0, 4, 4], ["spirit"]),  # branch 6, overflow clockwise to 1
        ([0, 0, 0, 0, 0, 0], 1, [4, 2, 0, 0, 0, 0], []),  # mind needs both branches
        ([0, 0, 0, 4, 0, 0], 3, [0, 0, 4, 4, 2, 0], ["body"]),  # branch 3, 4 is full: on to 5
        ([4, 2, 0, 0, 0, 0], 2, [4, 4, 4, 0, 0, 0], ["mind"]),
    ],
)
def test_a_life_spiral_fills_a_branch_outside_in_and_overflows_clockwise(marked, branch, after_, crippled):
    # hit 4+3 + 5 = 12; 6+4 + 12 - ARM 16 = 6 damage
    record = run(tokens(jack(focus=0), spiral_beast(marked=marked)), dice=[4, 3, 6, 4, branch])
    assert step(record, "apply_damage", "a")["rolls"][0]["options"]["flavor"] == "life spiral branch"
    assert after(record, "a")["marked"] == after_
    assert after(record, "a")["crippled"] == crippled
    assert record["outcome"]["conditions"].get("a", []) == [f"crippled:{c}" for c in crippled]


def test_a_full_spiral_destroys_the_warbeast():
    record = run(tokens(jack(focus=0), spiral_beast(marked=[4, 4, 4, 4, 4, 0])), dice=[4, 3, 6, 4, 3])
    assert after(record, "a")["marked"] == [4, 4, 4, 4, 4, 4]
    assert record["outcome"]["conditions"]["a"] == ["crippled:spirit", "disabled", "boxed", "destroyed"]


def test_disabled_then_boxed_then_destroyed_then_removed():
    record = run(tokens(jack(focus=0), grunt("a")), dice=[4, 3, 3, 2])
    notes = [step(record, name, "a")["notes"][0]["text"] for name in ("disabled", "boxed", "destroyed", "remove")]
    assert notes == ["every box is marked: A is disabled", "A is boxed", "A is destroyed", "A is removed from the table"]


class Saviour:
    """A test pack that clears "disabled" at 10c before the ruleset boxes the model."""

    @hookimpl
    def warmachine_mk3_boxed(self, ctx):
        ctx.update(ctx.item, disabled=False)


def test_a_model_no_longer_disabled_at_10c_is_not_boxed():
    record = run(tokens(jack(focus=0), grunt("a")), dice=[4, 3, 3, 2], packs=(Saviour(),))
    assert step(record, "boxed", "a")["ended"] == "no longer disabled"
    assert record["outcome"]["conditions"] == {"a": ["disabled"]}
    assert after(record, "a")["destroyed"] is False


# -- 10b: Tough ---------------------------------------------------------------------------


@pytest.mark.parametrize("face", [5, 6])
def test_tough_on_5_or_6_heals_one_point_and_the_model_is_knocked_down_instead(face):
    record = run(tokens(jack(focus=0), grunt("a", tough=True)), dice=[4, 3, 3, 2, face])
    assert step(record, "disabled", "a")["rolls"][0]["options"]["flavor"] == "Tough"
    assert step(record, "disabled", "a")["ended"] == f"Tough: {face}, heals 1 damage point, no longer disabled, knocked down"
    changed = after(record, "a")
    assert (changed["marked"], changed["disabled"], changed["knocked_down"], changed["destroyed"]) == (0, False, True, False)
    assert record["outcome"]["conditions"] == {"a": ["knocked_down"]}
    assert record["outcome"]["models"]["a"]["tough"] is True
    assert "boxed[a]" not in steps(record)


@pytest.mark.parametrize("face", [1, 4])
def test_tough_below_5_does_not_save_the_model(face):
    record = run(tokens(jack(focus=0), grunt("a", tough=True)), dice=[4, 3, 3, 2, face])
    assert step(record, "disabled", "a")["notes"][-1]["text"] == f"Tough: {face}, no recovery"
    assert record["outcome"]["conditions"] == {"a": ["disabled", "boxed", "destroyed"]}


def test_a_knocked_down_model_gets_no_tough_roll():
    record = run(tokens(jack(focus=0), grunt("a", tough=True, knocked_down=True)), dice=[1, 2, 3, 2])
    assert step(record, "disabled", "a")["rolls"] == []
    assert record["outcome"]["conditions"] == {"a": ["disabled", "boxed", "destroyed"]}


def test_a_critical_knockdown_at_step_8_takes_away_the_tough_roll():
    # Hammer: 3+3 + MAT 7 hits, a critical: knocked down; 1+1 + 17 - 14 = 5 damage
    record = run(tokens(jack(focus=0), grunt("a", tough=True)), weapon="Hammer", dice=[3, 3, 1, 1])
    assert record["dice_used"] == 4  # no Tough die
    assert record["outcome"]["conditions"] == {"a": ["knocked_down", "disabled", "boxed", "destroyed"]}


def test_tough_heals_the_box_marked_last():
    solo = grunt("a", kind="solo", boxes=5, marked=3, tough=True)
    record = run(tokens(jack(focus=0), solo), dice=[4, 3, 3, 3, 6])  # 4 damage, 2 boxes marked
    assert after(record, "a")["marked"] == 4
    assert record["outcome"]["models"]["a"]["damage"] == 2


def test_tough_on_a_warjack_heals_the_last_box_of_the_grid_and_may_lift_a_crippling():
    target = jack("a", owner="bob", position=at(0, 3), marked=[5, 6, 6, 6, 4, 5], tough=True)
    # 2 damage in column 5: R, R (right arm crippled, grid full); Tough 6 heals column 5's last box
    record = run(tokens(jack(focus=0), target), dice=[4, 3, 6, 2, 5, 6])
    assert after(record, "a")["marked"] == [5, 6, 6, 6, 5, 5]
    assert after(record, "a")["crippled"] == ["cortex", "left_arm", "movement"]  # full before this attack
    assert after(record, "a")["knocked_down"] is True
    assert record["outcome"]["conditions"] == {"a": ["knocked_down"]}  # the right arm works again
