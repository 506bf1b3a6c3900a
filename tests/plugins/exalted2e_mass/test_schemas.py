"""Unit tokens and attack declarations."""

import pytest
from marshmallow import ValidationError

from vtt_exalted2e_mass.schemas import Declaration, TokenSystem

from .mass import A, SOLO, merged


def load(data):
    return TokenSystem().load(data)


def test_a_unit_of_extras_gets_three_health_levels_and_the_defaults():
    unit = load(A)
    assert unit["health"] == {"penalties": [0, -1, "I"], "damage": [None, None, None]}
    assert unit["formation"] == "relaxed"
    assert unit["solo"] is None and unit["conditions"] == []
    assert unit["commander"]["exalted"] is False and unit["commander"]["essence"] == 1


def test_an_elite_unit_gets_the_full_seven():
    unit = load(merged(A, elite=True))
    assert unit["health"]["penalties"] == [0, -1, -1, -2, -2, -4, "I"]


def test_a_solo_unit_gets_a_characters_track_with_dying_levels_for_stamina():
    solo = load(SOLO)
    assert solo["health"]["penalties"] == [0, -1, -1, -2, -2, -4, "I", "D", "D", "D"]
    assert solo["solo"]["weapon"]["strength"] is True


def test_a_health_track_given_is_kept():
    track = {"penalties": [0, -1, "I"], "damage": ["B", None, None]}
    assert load(merged(A, health=track))["health"] == track


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"magnitude": 10}, "magnitude"),
        ({"formation": "wedge"}, "formation"),
        ({"damage_type": "X"}, "damage_type"),
        ({"soak": {"Q": 1}}, "soak"),
        ({"commander": {"war": 11}}, "commander"),
        ({"health": {"penalties": [0, "I"], "damage": [None]}}, "health"),
        ({"flying": True}, "flying"),
    ],
)
def test_bad_unit_data_is_refused_by_field(change, field):
    with pytest.raises(ValidationError) as err:
        load(merged(A, **change))
    assert field in err.value.messages


def test_a_solo_unit_is_magnitude_0_and_keeps_no_formation():
    with pytest.raises(ValidationError) as err:
        load(merged(SOLO, magnitude=2))
    assert "magnitude" in err.value.messages
    with pytest.raises(ValidationError) as err:
        load(merged(SOLO, formation="close"))
    assert "formation" in err.value.messages


def test_declaration_defaults_and_limits():
    decl = Declaration().load({})
    assert decl == {
        "attack": "close",
        "stunt": 0,
        "undodgeable": False,
        "unblockable": False,
        "penalty": 0,
        "cover": "none",
        "height": 0,
        "charms": [],
    }
    assert Declaration().load({"charms": [{"id": "x", "motes": 3}]})["charms"] == [{"id": "x", "motes": 3}]
    for bad in ({"attack": "melee"}, {"stunt": 4}, {"penalty": -1}, {"charms": [{}]}):
        with pytest.raises(ValidationError):
            Declaration().load(bad)
