"""Physical dice: a roll for a token whose owner rolls real dice is asked for as a
``faces`` decision, validated, recorded as entered (Foundry's "manual" fulfilment);
on timeout the bridge rolls and says so; a replay takes the recorded faces.

The attack is the README's Anoria (daiklave, Dex 5 + Melee 5 + Accuracy 1... = 11
dice with the stunt) against the mortal soldier, seed 1.
"""

import json
from pathlib import Path

import pytest

from vtt_bridge import InvalidRequest, make_host, roll_to_foundry
from vtt_bridge.cli.resolve import load_tokens

EXAMPLE = json.loads(
    (Path(__file__).resolve().parents[2] / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json").read_text()
)
ATTACK_FACES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1]  # 7, 8, 9 and a 10 (two): 5 successes


@pytest.fixture(scope="module")
def host():
    return make_host()


def start(host, **kw):
    return host.start(
        "exalted2e",
        load_tokens(host, EXAMPLE),
        attacker="anoria",
        targets=["soldier"],
        declaration=EXAMPLE["declaration"],
        seed=1,
        **kw,
    )


def until_faces(res, answers=None):
    """Advance, answering every other question from ``answers`` (else its default), to the next faces question."""
    answers = answers or {}
    while (q := res.advance()) is not None:
        if q.dice is not None:
            return q
        if q.key in answers:
            res.answer(answers[q.key])
        else:
            res.default("timeout")
    return None


def rolls(record, label):
    return [r for s in record["steps"] for r in s["rolls"] if r["options"]["flavor"] == label]


def test_the_attackers_roll_is_asked_for_with_how_many_dice_of_which_size_and_why(host):
    q = until_faces(start(host, physical=["anoria"]))
    assert q.key == "faces-1" and q.name == "faces" and q.token == "anoria"
    assert q.dice == {"label": "attack", "number": 11, "sides": 10}
    assert q.prompt == "Your attack roll (Anoria), 11d10: roll real dice and enter the faces"
    assert [o.id for o in q.options] == ["enter", "roll"] and q.default == "roll"
    wire = q.to_dict()
    assert wire["dice"] == {"label": "attack", "number": 11, "sides": 10}
    assert wire["options"][0]["detail"] == "11d10"


def test_entered_faces_are_the_roll_and_are_recorded_as_physical(host):
    res = start(host, physical=["anoria"])
    until_faces(res)
    res.answer("enter", {"faces": " ".join(map(str, ATTACK_FACES))})
    q = until_faces(res)
    assert q.key == "faces-2" and q.dice == {"label": "damage", "number": 8, "sides": 10}
    res.answer("enter", {"faces": [1, 2, 3, 4, 5, 6, 7, 8]})  # a list works too
    assert until_faces(res) is None
    record = res.record
    (attack,) = rolls(record, "attack")
    assert [r["result"] for r in attack["terms"][0]["results"]] == ATTACK_FACES
    assert attack["total"] == 5 and record["outcome"]["successes"] == 5
    assert attack["options"]["physical"] == "entered" and attack["terms"][0]["method"] == "manual"
    (damage,) = rolls(record, "damage")
    assert damage["total"] == 2 and record["outcome"]["damage"] == 2
    assert record["physical"] == {"tokens": ["anoria"], "faces": [ATTACK_FACES, [1, 2, 3, 4, 5, 6, 7, 8]]}
    faces = [d for d in record["decisions"] if d["name"] == "faces"]
    assert [(d["key"], d["how"]) for d in faces] == [("faces-1", "answered"), ("faces-2", "answered")]
    assert faces[0]["answer"] == {"option": "enter", "params": {"faces": ATTACK_FACES}}
    # every other question was asked once and answered once, in order, despite the runs from the start
    assert [d["key"] for d in record["decisions"]] == [
        "defense", "faces-1", "attack_reroll", "defense_stunt", "faces-2",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("faces", "problem"),
    [
        ("1 2 3", "11 faces needed (11d10), 3 given."),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "Die 11 shows 11: a d10 shows 1-10."),
        ("1 2 3 4 5 6 7 8 9 ten 1", "Die 10 shows 'ten': a d10 shows 1-10."),
        ([0] * 11, "Die 1 shows 0: a d10 shows 1-10."),
        ({"a": 1}, "The faces are a list of numbers, one per die."),
    ],
)
def test_bad_faces_are_refused_naming_the_problem_and_the_question_stays_open(host, faces, problem):
    res = start(host, physical=["anoria"])
    q = until_faces(res)
    with pytest.raises(InvalidRequest) as err:
        res.answer("enter", {"faces": faces})
    assert err.value.details["answer"]["params"]["faces"][0] == problem
    assert res.advance() is q  # asked again, nothing changed
    res.answer("enter", {"faces": ATTACK_FACES})
    assert until_faces(res).key == "faces-2"


def test_on_timeout_the_bridge_rolls_and_says_so(host):
    plain = start(host).run(lambda q: None)
    res = start(host, physical=["anoria"])
    until_faces(res)
    res.default("timeout")
    until_faces(res)
    res.default("timeout")
    assert res.advance() is None
    record = res.record
    (attack,) = rolls(record, "attack")
    # the bridge's roll is the one the seed gives when nobody rolls by hand
    assert attack["terms"][0]["results"] == rolls(plain.to_dict(), "attack")[0]["terms"][0]["results"]
    assert attack["options"]["physical"] == "rolled" and "method" not in attack["terms"][0]
    assert record["physical"]["faces"] == [None, None]
    assert [(d["key"], d["answer"], d["how"]) for d in record["decisions"] if d["name"] == "faces"] == [
        ("faces-1", {"option": "roll"}, "timeout"),
        ("faces-2", {"option": "roll"}, "timeout"),
    ]
    assert record["outcome"] == plain.outcome


def test_a_replay_takes_the_recorded_faces_and_asks_nothing(host):
    res = start(host, physical=["anoria"])
    until_faces(res)
    res.answer("enter", {"faces": ATTACK_FACES})
    until_faces(res)
    res.answer("enter", {"faces": [10, 10, 9, 1, 1, 1, 1, 1]})
    until_faces(res)
    original = res.record
    answers = {d["key"]: d["answer"] for d in original["decisions"] if d["name"] != "faces"}
    replay = start(host, physical=["anoria"], faces=original["physical"]["faces"], answers=answers).run()
    assert replay["outcome"] == original["outcome"] and replay["outcome"]["damage"] == 3
    assert replay["changes"] == original["changes"]
    # and the faces may come as given answers too, by key
    given = {d["key"]: d["answer"] for d in original["decisions"]}
    assert start(host, physical=["anoria"], answers=given).run()["outcome"] == original["outcome"]


def test_the_defenders_own_dice_are_asked_of_the_defender(host):
    res = start(host, physical=["soldier"])
    q = until_faces(res, {"defense": "dodge", "defense_stunt": "2"})
    assert q.token == "soldier" and q.dice == {"label": "defense dice", "number": 2, "sides": 10}
    res.answer("enter", {"faces": "10 7"})
    until_faces(res, {"defense": "dodge", "defense_stunt": "2"})
    (defense,) = rolls(res.record, "defense dice")
    assert defense["total"] == 3 and defense["options"]["physical"] == "entered"
    assert not rolls(res.record, "attack")[0]["options"].get("physical")


def test_a_run_answering_everything_on_the_spot_lets_the_bridge_roll(host):
    record = start(host, physical=["anoria"]).run()
    assert record["physical"]["faces"] == [None, None]
    assert record["outcome"] == start(host).run()["outcome"]


def test_roll_json_of_an_unasked_roll_is_unchanged(host):
    record = start(host).run()
    attack = record.dice.rolls[0]
    assert attack.physical is None and "physical" not in roll_to_foundry(attack)["options"]
    assert "physical" not in record.to_dict()
