"""Token and declaration schemas."""

import pytest
from marshmallow import ValidationError

from vtt_warmachine_mk3.schemas import Declaration, System

from .kit import HEAVY_GRID


def load(**system):
    return System().load({"kind": "warrior", "DEF": 12, "ARM": 14, **system})


def test_defaults_a_gm_can_rely_on():
    data = load()
    assert (data["base"], data["position"], data["marked"], data["focus"], data["knocked_down"]) == (
        30, {"x": 0.0, "y": 0.0}, 0, 0, False,
    )
    assert load(grid=HEAVY_GRID)["marked"] == [0] * 6
    assert load(spiral=[5] * 6)["marked"] == [0] * 6


def test_a_melee_weapon_has_the_standard_half_inch_range():
    data = load(weapons=[{"name": "Sword", "kind": "melee", "POW": 4}])
    assert data["weapons"][0]["RNG"] == 0.5


@pytest.mark.parametrize(
    ("system", "field"),
    [
        ({"kind": "tank"}, "kind"),
        ({"base": 35}, "base"),
        ({"boxes": 5, "spiral": [5] * 6}, "spiral"),
        ({"grid": HEAVY_GRID[:5]}, "grid"),
        ({"grid": ["-----l"] * 6}, "grid"),
        ({"grid": HEAVY_GRID, "marked": 3}, "marked"),
        ({"boxes": 5, "marked": [1, 2]}, "marked"),
        ({"boxes": 5, "marked": True}, "marked"),
        ({"weapons": [{"name": "Gun", "kind": "ranged"}]}, "weapons"),
        ({"weapons": [{"name": "Gun", "kind": "ranged", "RNG": 8, "spray": True, "AOE": 3}]}, "weapons"),
        ({"weapons": [{"name": "A", "kind": "melee"}, {"name": "A", "kind": "melee"}]}, "weapons"),
        ({"wings": 2}, "wings"),
    ],
)
def test_refused(system, field):
    with pytest.raises(ValidationError) as err:
        load(**system)
    assert field in err.value.messages


def test_declaration_defaults_and_charms():
    data = Declaration().load({"weapon": "Cannon", "charms": [{"id": "arcane-shield", "extra": 1}]})
    assert data["modifiers"]["aiming"] is False and data["models_under_template"] == []
    assert data["charms"] == [{"id": "arcane-shield", "extra": 1}]
    with pytest.raises(ValidationError):
        Declaration().load({})
