"""Damage transference at step 9g: the warlock's owner moves damage to a warbeast."""

import pytest

from tests.plugins.warmachine_mk3 import kit
from tests.plugins.warmachine_mk3.kit import after, at, jack, model, step, tokens


def attack(*args, **kw):
    return kit.attack(*args, pack=True, **kw)


def run(*args, **kw):
    return kit.run(*args, pack=True, **kw)


def warlock(**kw):
    base = dict(kind="warlock", owner="bob", MAT=6, RAT=5, DEF=12, ARM=14, FURY=7, fury=2, boxes=16,
                position=at(0, 3), battlegroup=["w"])
    return model("k", **{**base, **kw})


def warbeast(**kw):
    base = dict(kind="warbeast", owner="bob", MAT=7, DEF=12, ARM=16, FURY=3, base=50, spiral=[4] * 6,
                position=at(4, 3))
    return model("w", **{**base, **kw})


def table(k=None, w=None):
    return tokens(jack(focus=0), k or warlock(), w or warbeast())


# 4+3 + RAT 5 hits DEF 12; 5+3 + POW 12 - ARM 14 = 6 damage


def test_the_warlocks_owner_is_asked():
    res = attack(table(), target="k", dice=[4, 3, 5, 3, 2])
    decision = res.advance()
    assert decision.key == "transfer_damage[k]" and decision.step == "damage_transfer"
    assert decision.token == "k"
    assert [o.id for o in decision.options] == ["transfer:w", "decline"]
    assert decision.default == "decline"
    assert decision.options[0].label == "Spend 1 fury: W suffers the 6 damage"


def test_transferred_damage_is_marked_on_the_warbeast_and_costs_a_fury():
    record = run(table(), target="k", dice=[4, 3, 5, 3, 2], answers={"transfer_damage": "transfer:w"})
    assert after(record, "k")["fury"] == 1
    assert after(record, "k")["marked"] == 0
    assert after(record, "w")["marked"] == [0, 4, 2, 0, 0, 0]  # branch 2, then clockwise
    assert record["outcome"]["damage"] == 0
    assert record["outcome"]["models"]["k"]["transferred_to"] == "w"
    assert record["outcome"]["models"]["w"]["damage"] == 6
    assert [s["item"] for s in record["steps"] if s["step"] == "apply_damage"] == ["w"]
    assert step(record, "damage_transfer", "k")["notes"][0] == {
        "text": "damage transference: K spends 1 fury (2 → 1)", "plugin": "warmachine_abilities",
    }


def test_damage_the_warbeast_cannot_hold_comes_back_to_the_warlock():
    record = run(table(w=warbeast(marked=[4, 4, 4, 4, 4, 2])), target="k", dice=[4, 3, 5, 3, 6],
                 answers={"transfer_damage": "transfer:w"})
    assert after(record, "w")["marked"] == [4] * 6 and after(record, "w")["destroyed"] is True
    assert after(record, "k")["marked"] == 4
    assert record["outcome"]["damage"] == 4
    assert [s["item"] for s in record["steps"] if s["step"] == "apply_damage"] == ["w", "k"]


def test_unanswered_the_warlock_suffers_the_damage():
    res = attack(table(), target="k", dice=[4, 3, 5, 3])
    res.advance()
    res.default("disconnect")
    assert res.advance() is None
    assert after(res.record, "k")["marked"] == 6 and "w" not in res.record["changes"]


@pytest.mark.parametrize(
    ("k", "w"),
    [
        ({"fury": 0}, {}),
        ({}, {"position": at(20, 3)}),  # beyond twice FURY 7
        ({"battlegroup": []}, {}),
        ({}, {"destroyed": True, "removed": True}),
        ({"kind": "warcaster"}, {}),
    ],
)
def test_no_transference(k, w):
    record = run(table(warlock(**k), warbeast(**w)), target="k", dice=[4, 3, 5, 3])
    assert record["decisions"] == []
    assert after(record, "k")["marked"] == 6


def test_damage_that_fails_to_exceed_arm_is_never_offered():
    record = run(table(), target="k", dice=[4, 3, 1, 1])
    assert record["decisions"] == [] and record["changes"] == {}
