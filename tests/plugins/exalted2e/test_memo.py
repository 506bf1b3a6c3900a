"""What the steps remember per snapshot: the same answers, never a stale one."""

import pytest

from vtt_bridge import InvalidRequest, make_host
from vtt_exalted2e.memo import MEMO_SIZE, per_snapshot

from .helpers import after, changes, resolve, tokens, track


def test_remembered_per_identity_not_per_value():
    calls = []

    @per_snapshot
    def dexterity(system):
        calls.append(system)
        return system["dexterity"]

    sheet = {"dexterity": 3}
    assert dexterity(sheet) == dexterity(sheet) == 3
    assert len(calls) == 1
    twin = {"dexterity": 3}  # equal, but another snapshot: worked out again
    assert dexterity(twin) == 3 and len(calls) == 2


def test_a_refusal_is_not_remembered():
    calls = []

    @per_snapshot
    def refuse(system):
        calls.append(system)
        raise InvalidRequest("no", details={})

    sheet = {}
    for _ in range(2):
        with pytest.raises(InvalidRequest):
            refuse(sheet)
    assert len(calls) == 2


def test_bounded():
    @per_snapshot
    def same(value):
        return value

    kept = [object() for _ in range(MEMO_SIZE + 10)]
    assert [same(v) for v in kept] == kept
    assert same(kept[0]) is kept[0]


@pytest.fixture(scope="module")
def host():
    return make_host(block=["excellencies"])


def test_the_same_snapshots_resolve_the_same_attack_again(host):
    toks = tokens(host)
    first = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "stunt": 1}, toks=toks, seed=7)
    again = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "stunt": 1}, toks=toks, seed=7)
    fresh = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "stunt": 1}, toks=tokens(host), seed=7)
    assert first == again == fresh


def test_a_changed_token_is_worked_out_afresh(host):
    # The soldier's Parry DV 2 + target shield 1 = 3; then hurt (−1 wounds) and with −1 DV from acting: 1.
    decl = {"weapon": "daiklave"}
    toks = tokens(host)
    resolve(host, "anoria", "soldier", decl, toks=toks, seed=1)
    assert changes(resolve(host, "anoria", "soldier", decl, toks=toks, seed=1), "declare_defense")["dv"] == (0, 3)
    hurt = {"health": {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["L", "L"] + [None] * 7}}
    toks = tokens(host, soldier={**hurt, "dv_penalty": 1})
    # 4 successes − DV 1 = 3; raw 5 + 3 + 3 = 11, soak 2: 9 dice, one success.
    record = resolve(host, "anoria", "soldier", decl, toks=toks, dice=[7] * 4 + [2] * 6 + [7] + [2] * 8)
    assert changes(record, "declare_defense")["dv"] == (0, 1)
    assert changes(record, "damage")["damage"] == (0, 1)
    # The level lands on the track the soldier has now, not on the one remembered before.
    assert track(after(record, "soldier")["health"]) == "LLL......"
