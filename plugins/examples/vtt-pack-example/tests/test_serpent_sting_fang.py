"""Serpent-Sting Fang, tested with vtt_bridge.testing."""

from vtt_bridge.testing import resolve

PACK = "vtt_pack_example"  # by module: works whether the pack is installed or not

TOKENS = {
    "anoria": {
        "attributes": {"strength": 3, "dexterity": 4, "stamina": 3},
        "abilities": {"melee": 3},
        "weapons": [{"name": "daiklave", "ability": "melee", "accuracy": 3, "damage": 5, "damage_type": "L"}],
    },
    "soldier": {"attributes": {"strength": 2, "dexterity": 2, "stamina": 2}, "abilities": {"dodge": 3}},
}
FANG = {"charms": [{"id": "serpent-sting-fang"}]}
HITS = [10] * 10 + [7] * 30  # every attack die a 10; plenty of dice for the damage roll
MISSES = [1] * 40


def attack(declaration, dice):
    return resolve(
        "exalted2e",
        TOKENS,  # anoria attacks soldier
        declaration=declaration,
        dice=dice,
        answers={"defense": "dodge"},
        plugins=[PACK],
    )


def test_the_fang_adds_one_raw_damage_at_step_7():
    res = attack(FANG, HITS)
    res.assert_changed("raw_damage", by=PACK, step="raw_damage", delta=+1)
    assert res.step("raw_damage").notes[-1][0] == "Serpent-Sting Fang: +1 raw damage"


def test_the_attack_deals_one_more_raw_damage_than_without_it():
    with_fang, without = attack(FANG, HITS), attack({}, HITS)
    assert with_fang.numbers["raw_damage"] == without.numbers["raw_damage"] + 1


def test_not_declared_it_changes_nothing():
    assert attack({}, HITS).changes_by(PACK) == []


def test_a_miss_never_reaches_step_7():
    res = attack(FANG, MISSES)
    assert res.hit is False
    assert not res.ran("raw_damage")
    assert res.changes_by(PACK) == []
