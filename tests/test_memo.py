"""``per_snapshot``: a rule worked out once per snapshot, never a stale or a changed answer."""

from __future__ import annotations

import pytest

from vtt_bridge import InvalidRequest, freeze, per_snapshot
from vtt_bridge.memo import SIZE


@pytest.mark.parametrize("arity", [1, 2, 3, 4, 5, 6])
def test_a_snapshot_is_worked_out_once_whatever_the_arity(arity):
    calls = []

    def rule(*args):
        calls.append(args)
        return sum(a["w"] for a in args)

    names = ", ".join(f"a{i}" for i in range(arity))
    namespace = {"rule": rule}
    exec(f"def fixed({names}):\n    return rule({names})", namespace)  # a rule with this many parameters
    remembered = per_snapshot(namespace["fixed"])
    snapshots = [freeze({"w": i}) for i in range(arity)]
    expected = sum(range(arity))
    assert remembered(*snapshots) == remembered(*snapshots) == expected
    assert len(calls) == 1
    twins = [freeze({"w": i}) for i in range(arity)]  # equal, but other snapshots: worked out again
    assert remembered(*twins) == expected and len(calls) == 2
    assert remembered.__name__ == "fixed"


def test_a_mutable_argument_is_worked_out_every_time():
    calls = []

    @per_snapshot
    def weight(system, extra):
        calls.append(system)
        return system.get("w", 0) + extra

    plain = {"w": 2}
    assert weight(plain, 1) == 3
    plain["w"] = 5  # a plain dict can change under the cache: never remembered
    assert weight(plain, 1) == 6 and len(calls) == 2


def test_a_refusal_is_not_remembered():
    calls = []

    @per_snapshot
    def refuse(system):
        calls.append(system)
        raise InvalidRequest("no", details={})

    sheet = freeze({})
    for _ in range(2):
        with pytest.raises(InvalidRequest):
            refuse(sheet)
    assert len(calls) == 2


def test_bounded_and_cleared():
    calls = []

    @per_snapshot
    def same(value):
        calls.append(value)
        return value

    kept = [object() for _ in range(SIZE + 10)]
    assert [same(v) for v in kept] == kept  # past the bound the cache starts over: still right
    assert same(kept[-1]) is kept[-1] and len(calls) == SIZE + 10  # the newest is remembered
    same.cache_clear()
    assert same(kept[-1]) is kept[-1] and len(calls) == SIZE + 11


@pytest.mark.parametrize("arity", [1, 2, 6])
def test_snapshots_in_turn_and_a_plain_dict_between_them_each_get_their_own_answer(arity):
    # The last call's answer is found again by comparing arguments by identity: a call with
    # other snapshots, or with a plain dict (never remembered), must not be given it.
    calls = []

    def rule(*args):
        calls.append(args)
        return sum(a["w"] for a in args)

    names = ", ".join(f"a{i}" for i in range(arity))
    namespace = {"rule": rule}
    exec(f"def fixed({names}):\n    return rule({names})", namespace)
    weight = per_snapshot(namespace["fixed"])
    a = [freeze({"w": 1})] * arity
    b = [freeze({"w": 2})] * arity
    assert [weight(*a), weight(*b), weight(*a), weight(*a), weight(*b)] == [arity, 2 * arity, arity, arity, 2 * arity]
    assert len(calls) == 2
    plain = [{"w": 3}] * arity
    assert weight(*plain) == 3 * arity
    plain[0]["w"] = 4  # the same dict, changed: worked out again, not the last answer
    assert weight(*plain) == 4 * arity and len(calls) == 4
    assert weight(*b) == 2 * arity and len(calls) == 4
