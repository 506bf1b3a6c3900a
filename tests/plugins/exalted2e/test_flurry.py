"""A flurry declared as such: several attacks on one tick (seed 002, "DV Penalties").

What the seed says of a flurry, each quoted in the test that checks it:

- "each attack the character makes reduces both DVs by one" — every attack of
  the flurry costs the attacker its −1;
- "Onslaught penalties apply only when defending against the character that
  imposed them and only against the attacks of an individual flurry. If an
  attacker acts a second time before the defender's DV refreshes, the onslaught
  penalty is reset to 0 at the start of the second series of attacks";
- an extra "who lacks sufficient dice to pierce a character's defenses with his
  first attack will only degrade in effectiveness if he launches a flurry" —
  the flurry's multiple-action penalty comes off the pool (its size is the
  ruleset's [decision], ``rules.flurry_penalty``).

Anoria's daiklave pool is Dexterity 4 + Melee 3 + Accuracy 3 = 10 dice; the
soldier's Parry DV against it is 3 (target shield included).
"""

import pytest

from vtt_bridge import make_host
from vtt_exalted2e import rules

from .helpers import after, changes, resolve, tokens

DAIKLAVE = {"weapon": "daiklave"}
NOTHING = [2] * 10  # no success, no 1: a plain miss, whatever the pool
ONE = [7] + [2] * 9  # one success: DV decides (a miss against any DV of 1 or more)


@pytest.fixture(scope="module")
def host():
    return make_host(block=["excellencies"])


def flurry(attacks: int, attack: int = 1, **more) -> dict:
    return {**DAIKLAVE, "flurry": {"attacks": attacks, "attack": attack, **more}}


def test_the_multiple_action_penalty_grows_through_the_flurry(host):
    """Seed 002: an attacker "will only degrade in effectiveness if he launches a flurry".
    [decision] The first of three attacks loses 3 dice, the second 4, the third 5."""
    assert [rules.flurry_penalty(3, k) for k in (1, 2, 3)] == [3, 4, 5]
    pools = []
    for k in (1, 2, 3):
        record = resolve(host, "anoria", "soldier", flurry(3, k), dice=NOTHING)
        pools.append(changes(record, "declare_attack")["attack_pool"])
        assert record["dice_used"] == 10 - (2 + k)
    assert pools == [(0, 7), (0, 6), (0, 5)]


def test_a_flurry_without_multiple_action_penalties_declares_its_own(host):
    """An extra-action Charm's flurry bears no multiple-action penalty: ``penalty: 0``."""
    record = resolve(host, "anoria", "soldier", flurry(3, 2, penalty=0), dice=NOTHING)
    assert changes(record, "declare_attack") == {"attack_pool": (0, 10)}


def test_a_flurry_on_the_soldier_step_by_step(host):
    """Seed 002: "each attack the character makes reduces both DVs by one" and "the onslaught
    penalty is reset to 0 at the start of the second series of attacks".

    Anoria comes to her tick with −2 DV from her last action, and the soldier with an
    onslaught of 2 from it. The flurry's first attack starts a new series: her own
    penalty lapses (0, then −1 for this attack) and the soldier meets it at his full
    DV 3; the second attack meets DV 3 − 1 = 2, the third 3 − 2 = 1.
    """
    anoria, soldier = {"dv_penalty": 2}, {"onslaught": {"anoria": 2}}
    seen = []
    for k in (1, 2, 3):
        record = resolve(host, "anoria", "soldier", flurry(3, k), dice=ONE,
                         toks=tokens(host, anoria=anoria, soldier=soldier))  # fmt: skip
        seen.append((record["outcome"]["dv"], after(record, "anoria")["dv_penalty"], after(record, "soldier")["onslaught"]))
        anoria = {"dv_penalty": after(record, "anoria")["dv_penalty"]}
        soldier = {"onslaught": after(record, "soldier")["onslaught"]}
    assert seen == [(3, 1, {"anoria": 1}), (2, 2, {"anoria": 2}), (1, 3, {"anoria": 3})]
    # The same first attack, not declared as a flurry: the old series goes on (DV 3 − 2).
    record = resolve(host, "anoria", "soldier", DAIKLAVE, dice=ONE,
                     toks=tokens(host, anoria={"dv_penalty": 2}, soldier={"onslaught": {"anoria": 2}}))  # fmt: skip
    assert record["outcome"]["dv"] == 1 and after(record, "anoria")["dv_penalty"] == 3


def test_a_hit_in_the_flurry_rolls_the_smaller_pool(host):
    """The second attack of two: 10 − 3 = 7 dice, 7 + 10 + 8 → 4 successes (a 10 counts twice);
    Parry DV 3 − onslaught 1 = 2 leaves 2; raw damage Strength 3 + 5 + 2 = 10."""
    toks = tokens(host, soldier={"onslaught": {"anoria": 1}}, anoria={"dv_penalty": 1})
    record = resolve(host, "anoria", "soldier", flurry(2, 2), toks=toks,
                     dice=[7, 10, 8, 2, 2, 2, 2] + [1] * 8)  # fmt: skip
    assert changes(record, "declare_attack") == {"attack_pool": (0, 7)}
    assert changes(record, "attack_roll") == {"attack_successes": (0, 4)}
    assert record["outcome"]["dv"] == 2
    assert changes(record, "apply_defense") == {"net_successes": (0, 2)}
    assert changes(record, "raw_damage") == {"raw_damage": (0, 10)}
    assert after(record, "anoria")["dv_penalty"] == 2 and after(record, "soldier")["onslaught"] == {"anoria": 2}


def test_an_extra_short_of_dice_meets_automatic_defense_sooner(host):
    """Seed 002: an extra "who lacks sufficient dice to pierce a character's defenses with his
    first attack will only degrade in effectiveness if he launches a flurry", and "This
    automatic miss still counts toward imposing the onslaught penalty".

    The brigand's 5 dice against the monk's DV 5: no automatic defense alone (5 is not
    more than 5), but the first of two attacks has 5 − 2 = 3 dice: a miss without a roll.
    """
    alone = resolve(host, "brigand", "monk", {}, dice=[2] * 5)
    assert alone["dice_used"] == 5
    record = resolve(host, "brigand", "monk", {"flurry": {"attacks": 2}}, dice=[2] * 5)
    assert changes(record, "declare_attack") == {"attack_pool": (0, 3)}
    assert record["dice_used"] == 0 and record["outcome"]["hit"] is False
    assert after(record, "monk")["onslaught"] == {"brigand": 1}
