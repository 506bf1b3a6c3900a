"""What a client may send (``loads_request``): the quick path on the text agrees with the full walk."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtt_bridge.state.codec import MAX_DEPTH, Unacceptable, check_value, loads_request


@pytest.mark.parametrize(
    "text,path",
    [
        ("[12345678901234567]", ("0",)),
        ("[9007199254740992]", ("0",)),
        ("[-9007199254740992]", ("0",)),
        ('{"a": 1e16}', ("a",)),
        ('{"a": 1E+400}', ("a",)),
        ('{"a": NaN}', ("a",)),
        ('{"a": -Infinity}', ("a",)),
        ('{"a": ["\\ud800"]}', ("a", "0")),
        ('{"\\udfff": 1}', ("\\udfff",)),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), ("0",) * MAX_DEPTH),
    ],
)
def test_refused_with_the_place_named(text, path):
    with pytest.raises(Unacceptable) as err:
        loads_request(text)
    assert err.value.path == path


@pytest.mark.parametrize(
    "text",
    [
        "[9007199254740991, -9007199254740991, 1e15, 1.5e3, 0.1]",
        '["12345678901234567890", "exalted2e", "1e400"]',  # digits and exponents inside strings
        '["' + "[" * 100 + '"]',  # brackets inside a string
        "[" * MAX_DEPTH + "]" * MAX_DEPTH,
        '{"é": "🎲", "a": [true, false, null]}',
    ],
)
def test_accepted(text):
    assert loads_request(text) == json.loads(text)


@pytest.mark.parametrize("text", ['["a",', "1" * 5000, "[" * 100_000, "", "nope"])
def test_not_json_at_all(text):
    with pytest.raises(Unacceptable) as err:
        loads_request(text)
    assert err.value.path == () and "Not valid JSON" in err.value.message


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_quick_path_agrees_with_the_walk(value):
    text = json.dumps(value)
    try:
        check_value(value)
        expected = None
    except Unacceptable as exc:
        expected = exc.path
    try:
        loads_request(text)
        got = None
    except Unacceptable as exc:
        got = exc.path
    assert got == expected
