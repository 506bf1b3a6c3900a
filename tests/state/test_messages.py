"""``attack`` requests checked by hand give exactly what the schema gives (messages._plain_attack)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtt_bridge.errors import InvalidRequest
from vtt_bridge.state import messages

SCHEMA = messages.AttackRequest()
FAST = messages.Messages()

names = st.one_of(st.text(min_size=0, max_size=3), st.text(min_size=99, max_size=101), st.integers(), st.none())
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6,
)
requests = st.fixed_dictionaries(
    {},
    optional={
        "ruleset": names,
        "attacker": names,
        "targets": st.one_of(st.lists(names, max_size=3), names),
        "declaration": st.one_of(st.dictionaries(st.text(max_size=4), json_values, max_size=3), json_values),
        "request_id": st.one_of(names, st.text(min_size=199, max_size=201)),
        "seed": st.one_of(st.integers(-2, 3), st.just(2**53 - 1), st.just(2**53), st.booleans(), st.floats()),
        "dice": st.one_of(st.lists(st.one_of(st.integers(-1, 1001), st.booleans()), max_size=4), names),
        "answers": st.one_of(st.dictionaries(st.one_of(st.text(max_size=3)), json_values, max_size=3), json_values),
        "targetz": st.just("typo"),
    },
)


def schema_answer(data):
    try:
        return messages.load(SCHEMA, data)
    except InvalidRequest as exc:
        return ("refused", exc.details)


def fast_answer(data):
    try:
        return FAST.load(messages.AttackRequest, data)
    except InvalidRequest as exc:
        return ("refused", exc.details)


@settings(max_examples=400, deadline=None)
@given(requests)
def test_what_the_hand_check_accepts_the_schema_loads_the_same(data):
    answer = fast_answer(data)
    assert answer == schema_answer(data)
    if not isinstance(answer, tuple):
        assert list(answer) == list(schema_answer(data))  # the same order of fields too


@pytest.mark.parametrize(
    "data",
    [
        {"ruleset": "duel", "attacker": "a", "targets": ["b"]},
        {"ruleset": "duel", "attacker": "a", "targets": ["b", "c"], "declaration": {"x": [1]}, "answers": {"d": "n"}},
        {"ruleset": "duel", "attacker": "a", "targets": ["b"], "seed": 7, "dice": [1, 6], "request_id": "r1"},
    ],
)
def test_plain_requests_take_the_hand_checked_path(data):
    assert messages._plain_attack(data) == messages.load(SCHEMA, data)
