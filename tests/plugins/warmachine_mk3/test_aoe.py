"""Step 7 (AOE hit or deviation, blast damage) and multi-model attacks (sprays, Thresher)."""

import pytest

from vtt_bridge import hookimpl

from .kit import after, at, grunt, jack, run, step, steps, tokens

# The jack (50 mm base) stands at (0, 0); the target (30 mm) 8" down the table.
# Base edge to base edge: 8 - 0.984 - 0.591 = 6.425", so a deviation moves at most 3.213".


def table(**extra):
    return tokens(
        jack(focus=3),
        grunt("a", position=at(0, 8)),
        grunt("b", position=at(1.5, 8)),  # centre 1.5" from a: under a 3" AOE on a
        grunt("c", position=at(2.2, 8)),  # 2.2" > 1.5 + 0.591: not under
        grunt("d", position=at(0, 10.05)),  # 2.05" < 2.091: under
        *extra.values(),
    )


def test_an_aoe_hit_centres_on_the_target_and_blasts_the_models_under_it():
    # hit 4+3 + 5 = 12; a: POW 13 + 3+3 - 14 = 5; b: blast POW 7 + 4+4 - 14 = 1; d: 7 + 1+1 - 14: none
    record = run(table(), weapon="Bombard", dice=[4, 3, 3, 3, 4, 4, 1, 1])
    models = record["outcome"]["models"]
    assert models["a"]["direct"] is True and models["a"]["pow"] == 13
    assert (models["b"]["blast"], models["b"]["pow"], models["b"]["damage"]) == (True, 7, 1)
    assert (models["d"]["blast"], models["d"]["pow"], models["d"].get("damage")) == (True, 7, None)
    assert "c" not in models
    assert [s for s in steps(record) if s.startswith("damage_roll[")] == ["damage_roll[a]", "damage_roll[b]", "damage_roll[d]"]
    assert "deviation" not in record["outcome"]
    assert step(record, "aoe")["notes"][-1]["text"] == 'under the 3" AOE: B, D (blast POW 7)'


def test_blast_damage_is_never_boosted():
    record = run(table(), weapon="Bombard", dice=[4, 3, 3, 3, 4, 4, 4, 1, 1],
                 answers={"boost_damage": "boost"}, modifiers={"boosted_damage": True})
    # the declared boost is the direct hit's (3 dice); the blasts roll 2 dice and are asked nothing
    # (a and b are damaged: the attacker picks which has its damage applied first, step 10)
    assert [d["key"] for d in record["decisions"]] == ["boost_attack[a]", "apply_next"]
    rolls = [s["rolls"][0] for s in record["steps"] if s["step"] == "damage_roll_dice"]
    assert [len(r["terms"][0]["results"]) for r in rolls] == [3, 2, 2]


def test_the_blast_pow_printed_on_the_card_wins_over_half_pow():
    weapons = [{"name": "Mortar", "kind": "ranged", "RNG": 10, "POW": 15, "AOE": 4, "blast": 5}]
    t = table()
    t["jack"] = jack(focus=0, weapons=weapons)
    record = run(t, weapon="Mortar", dice=[4, 3] + [1] * 8)
    assert [m["pow"] for m in record["outcome"]["models"].values()] == [15, 5, 5, 5]  # a; b, d, c under 4"


@pytest.mark.parametrize(
    ("direction", "distance", "landing", "moved"),
    [
        (1, 3, (0.0, 11.0), 3.0),  # directly away from the attacker
        (4, 2, (0.0, 6.0), 2.0),  # straight back
        (2, 2, (-1.732, 9.0), 2.0),  # 60° clockwise from "away" (y grows down the table)
        (6, 2, (1.732, 9.0), 2.0),
        (3, 2, (-1.732, 7.0), 2.0),
        (5, 2, (1.732, 7.0), 2.0),
        (4, 6, (0.0, 4.787), 3.213),  # capped at half the distance to the target
    ],
)
def test_a_missed_aoe_deviates_d6_inches_in_a_d6_direction(direction, distance, landing, moved):
    # miss: 1+2 + 5 = 8 against DEF 12
    record = run(table(), weapon="Bombard", dice=[1, 2, direction, distance] + [1] * 10)
    deviation = record["outcome"]["deviation"]
    assert (deviation["to"]["x"], deviation["to"]["y"]) == landing
    assert deviation["from"] == {"x": 0.0, "y": 8.0}
    assert (deviation["direction"], deviation["rolled"], deviation["distance"], deviation["cap"]) == (
        direction, distance, moved, 3.213,
    )
    rolls = step(record, "aoe")["rolls"]
    assert [r["options"]["flavor"] for r in rolls] == ["deviation direction", "deviation distance"]


def test_after_a_deviation_no_model_is_hit_directly_and_everything_under_it_takes_blast_damage():
    # lands 3" away at (0, 11): d at (0, 10.05) is under it, the target is not
    record = run(table(), weapon="Bombard", dice=[1, 2, 1, 3, 4, 4])
    models = record["outcome"]["models"]
    assert models["a"] == {"hit": False, "how": "roll", "roll": 8, "needed": 12, "critical": False}
    assert models["d"]["how"] == "blast" and models["d"]["pow"] == 7 and models["d"]["damage"] == 1
    assert record["outcome"]["hit"] is True and record["outcome"]["damage"] == 0
    assert after(record, "d")["destroyed"] is True


def test_a_deviation_landing_on_the_target_is_still_only_blast_damage():
    # direction 1, 1": lands on (0, 9), 1" from the target's centre
    record = run(table(), weapon="Bombard", dice=[1, 2, 1, 1, 6, 1] + [1] * 4)
    models = record["outcome"]["models"]
    assert (models["a"]["hit"], models["a"]["how"], models["a"]["pow"]) == (True, "blast", 7)
    assert "direct" not in models["a"]
    assert record["outcome"]["damage"] == 0  # 6+1 + 7 = 14 does not exceed ARM 14


def test_out_of_range_the_aoe_deviates_from_the_point_at_maximum_range_at_most_half_the_range():
    far = tokens(jack(focus=3), grunt("a", position=at(0, 20)), grunt("e", position=at(0, 16)))
    record = run(far, weapon="Bombard", dice=[1, 6, 4, 4])
    assert "attack_rolls" not in steps(record)
    assert record["outcome"]["deviation"] == {
        "direction": 1, "rolled": 6, "distance": 5.0, "cap": 5.0,
        "from": {"x": 0.0, "y": 10.984},  # the jack's base edge + RNG 10
        "to": {"x": 0.0, "y": 15.984},
    }
    assert record["outcome"]["models"]["e"]["how"] == "blast"
    assert record["outcome"]["models"]["a"] == {"hit": False, "how": "out of range"}


def test_destroyed_models_and_other_rulesets_tokens_are_not_under_the_template():
    from vtt_bridge import Token

    t = table()
    t["b"] = grunt("b", position=at(1.5, 8), removed=True, destroyed=True)
    t["x"] = Token("x", "Exalt", "exalted2e", {"position": {"x": 0, "y": 8.5}})
    record = run(t, weapon="Bombard", dice=[4, 3, 1, 1, 1, 1])
    assert set(record["outcome"]["models"]) == {"a", "d"}


class Bodyguard:
    @hookimpl
    def warmachine_mk3_redirect(self, ctx):
        ctx.redirect_to = "c"


def test_an_aoe_centres_on_the_model_hit_instead_at_step_6():
    # c at (2.2, 8): the AOE on c covers b (0.7" away), not a (2.2" away)
    record = run(table(), weapon="Bombard", dice=[4, 3, 1, 1, 1, 1], packs=(Bodyguard(),))
    models = record["outcome"]["models"]
    assert models["c"]["direct"] is True and models["c"]["pow"] == 13
    assert models["b"]["blast"] is True
    assert models["a"]["hit"] is False


# -- sprays and Thresher: an attack roll per model --------------------------------


def spray_table():
    return tokens(jack(focus=0), grunt("a", position=at(0, 3)), grunt("b", position=at(0.8, 4), DEF=14))


def test_a_spray_rolls_to_hit_each_model_under_the_template():
    # a: 4+3 + 5 = 12 hits DEF 12; b: 4+4 + 5 = 13 misses DEF 14; damage on a: 6+5 + 12 - 14 = 9
    record = run(spray_table(), weapon="Flamer", models_under_template=["b"], dice=[4, 3, 4, 4, 6, 5])
    attack_loop = [s for s in steps(record) if s.split("[")[0].startswith("attack_roll")]
    assert [s for s in attack_loop if s.startswith("attack_roll[")] == ["attack_roll[a]", "attack_roll[b]"]
    models = record["outcome"]["models"]
    assert (models["a"]["roll"], models["a"]["hit"]) == (12, True)
    assert (models["b"]["roll"], models["b"]["needed"], models["b"]["hit"]) == (13, 14, False)
    assert "direct" not in models["a"]  # spray hits are not "direct"
    assert [s for s in steps(record) if s.startswith("damage_roll[")] == ["damage_roll[a]"]
    assert after(record, "a")["destroyed"] is True and "b" not in record["changes"]


def test_a_spray_asks_for_a_boost_per_model():
    t = spray_table()
    t["jack"] = jack(focus=2)
    record = run(t, weapon="Flamer", models_under_template=["b"], dice=[4, 3, 1, 4, 4, 1, 1, 1, 1, 1],
                 answers={"boost_attack": ["boost", "boost"]})
    # the focus is spent on the attack rolls: no damage boost is offered
    assert [d["key"] for d in record["decisions"]] == ["boost_attack[a]", "boost_attack[b]"]
    assert after(record, "jack")["focus"] == 0
    assert [m["roll"] for m in record["outcome"]["models"].values()] == [13, 14]


def test_each_model_hit_by_a_spray_gets_its_own_damage_roll_and_application():
    # a: 12 hits; b: 5+5 + 5 = 15 hits; damage a 3+3+12 = 18 (4), b 1+1 +12 = 14: none
    record = run(spray_table(), weapon="Flamer", models_under_template=["b"], dice=[4, 3, 5, 5, 3, 3, 1, 1])
    assert [s for s in steps(record) if s.startswith("damage_roll[")] == ["damage_roll[a]", "damage_roll[b]"]
    assert step(record, "fails_to_exceed_arm", "b")["ended"] == "the damage roll fails to exceed B's ARM"
    assert [s for s in steps(record) if s.startswith("apply_damage[")] == ["apply_damage[a]"]


def test_a_thresher_style_melee_attack_rolls_against_every_model_named():
    near = tokens(jack(focus=0), grunt("a", position=at(0, 1.5)), grunt("b", position=at(1.5, 0)))
    record = run(near, weapon="Fist", models_under_template=["b", "a", "jack"], dice=[4, 1, 6, 1, 1, 1, 1, 1])
    assert [s for s in steps(record) if s.startswith("attack_roll[")] == ["attack_roll[a]", "attack_roll[b]"]
    assert [m["roll"] for m in record["outcome"]["models"].values()] == [12, 14]
