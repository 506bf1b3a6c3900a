"""Typed parameters: ``Param``, an option's params on the wire, answers checked against them."""

from __future__ import annotations

import pytest

from vtt_bridge import Answer, Decision, Declarable, InvalidRequest, Option, Param

STUNT = Param("integer", label="Stunt dice", minimum=0, maximum=3, default=0, description="rolled at step 5")


@pytest.mark.parametrize(
    "param, good, bad",
    [
        (STUNT, [0, 3], [(4, "Must be between 0 and 3."), (-1, "Must be between 0 and 3."),
                         ("2", "Not a valid integer."), (1.0, "Not a valid integer."), (True, "Not a valid integer.")]),
        (Param("number", minimum=0.5), [0.5, 2, 7.25], [(0.25, "Must be at least 0.5."), (float("nan"), "Not a valid number."),
                                                         (float("inf"), "Not a valid number.")]),
        (Param("number", maximum=1), [1, -3.5], [(1.5, "Must be at most 1.")]),
        (Param("boolean"), [True, False], [(1, "Not a valid boolean."), ("true", "Not a valid boolean.")]),
        (Param("string", choices=("a", "b")), ["a"], [("c", "Must be one of: a, b."), (None, "Not a valid string.")]),
        (Param("string"), ["x" * 200], [("x" * 201, "Longer than 200 characters.")]),
    ],
)  # fmt: skip
def test_a_param_takes_its_type_in_range_and_names_the_field_otherwise(param, good, bad):
    for value in good:
        assert param.validate(value, name="v") == value
    for value, message in bad:
        with pytest.raises(InvalidRequest) as err:
            param.validate(value, name="stunt")
        assert err.value.details == {"stunt": [message]}


def test_a_param_is_json_schema_on_the_wire():
    assert STUNT.to_schema() == {
        "type": "integer", "title": "Stunt dice", "minimum": 0, "maximum": 3, "default": 0,
        "description": "rolled at step 5",
    }  # fmt: skip
    assert Param("string", choices=("x", "y")).to_schema() == {"type": "string", "maxLength": 200, "enum": ["x", "y"]}


@pytest.mark.parametrize(
    "kwargs", [dict(type="text"), dict(type="integer", minimum=3, maximum=1), dict(type="integer", maximum=3, default=5)]
)
def test_a_param_that_cannot_be_right_is_refused_when_the_pack_loads(kwargs):
    with pytest.raises(ValueError):
        Param(**kwargs)


def test_an_options_params_are_a_json_schema_object_and_plain_strings_still_work():
    option = Option(id="parry", label="Parry", params={"stunt": STUNT, "note": "a free note (old packs)"})
    assert option.params["note"] == Param("string", label="a free note (old packs)")
    assert option.to_dict() == {
        "id": "parry",
        "label": "Parry",
        "params": {
            "type": "object",
            "properties": {"stunt": STUNT.to_schema(), "note": {"type": "string", "title": "a free note (old packs)", "maxLength": 200}},
            "required": [],
            "additionalProperties": False,
        },
    }  # fmt: skip
    assert "params" not in Option(id="nothing", label="Do nothing").to_dict()


def decision() -> Decision:
    return Decision(
        key="defense", name="defense", step="defend", prompt="?", token="b", default="parry",
        options=(Option(id="parry", label="Parry", params={"stunt": STUNT}), Option(id="nothing", label="Nothing")),
    )  # fmt: skip


@pytest.mark.parametrize(
    "answer, details",
    [
        (Answer(option="dodge"), {"option": ["Must be one of: parry, nothing."]}),
        (Answer(option="parry", params={"stunt": 99}), {"params": {"stunt": ["Must be between 0 and 3."]}}),
        (Answer(option="parry", params={"stunt": 1, "junk": "x"}), {"params": {"junk": ["Unknown parameter; this one takes: stunt."]}}),
        (Answer(option="nothing", params={"stunt": 1}), {"params": {"stunt": ["Unknown parameter; this one takes: none."]}}),
    ],
)  # fmt: skip
def test_an_answer_is_checked_against_the_option_it_names(answer, details):
    with pytest.raises(InvalidRequest) as err:
        decision().check(answer)
    assert err.value.details == details


def test_a_valid_answer_passes_unchanged():
    answer = Answer(option="parry", params={"stunt": 2})
    assert decision().check(answer) is answer
    assert decision().check(Answer(option="nothing")).option == "nothing"


def test_a_required_param_must_be_given():
    d = Decision(key="k", name="k", step="s", prompt="?", token=None, default="go",
                 options=(Option(id="go", label="Go", params={"n": Param("integer", required=True)}),))  # fmt: skip
    with pytest.raises(InvalidRequest) as err:
        d.check(Answer(option="go"))
    assert err.value.details == {"params": {"n": ["Missing data for required field."]}}


def test_a_declarable_is_typed_and_has_a_known_kind():
    fang = Declarable(id="fang", label="Fang", plugin="p", params={"motes": Param("integer", minimum=0)})
    assert fang.to_dict() == {
        "id": "fang", "label": "Fang", "plugin": "p", "kind": "charm", "description": "", "inert": True,
        "params": {"type": "object", "properties": {"motes": {"type": "integer", "minimum": 0}}, "required": [],
                   "additionalProperties": False},
    }  # fmt: skip
    with pytest.raises(ValueError):
        Declarable(id="x", label="X", plugin="p", kind="spell")


def test_a_decline_option_has_the_one_shared_id():
    from vtt_bridge import Ask

    Ask(name="reroll", prompt="?", decline=Option(id="decline", label="Keep the roll"))
    with pytest.raises(ValueError, match="'decline' in every ruleset"):
        Ask(name="reroll", prompt="?", decline=Option(id="keep", label="Keep the roll"))
