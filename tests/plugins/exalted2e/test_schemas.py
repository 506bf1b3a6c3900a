"""Token and declaration schemas: defaults, and bad values refused as invalid_request."""

import pytest

from vtt_bridge import InvalidRequest, make_host
from vtt_exalted2e import sample_tokens


@pytest.fixture(scope="module")
def host():
    return make_host(block=["excellencies"])


def test_every_sample_token_is_valid(host):
    for token in sample_tokens():
        system = host.load_system("exalted2e", token["system"])
        assert system["attributes"]["dexterity"] >= 1
    assert {t["id"] for t in sample_tokens()} >= {"anoria", "soldier", "monk"}


def test_defaults():
    from vtt_exalted2e.schemas import TokenSystem

    system = TokenSystem().load({"attributes": {"strength": 2, "dexterity": 3, "stamina": 4}})
    assert system["health"] == {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D", "D", "D"], "damage": [None] * 11}
    assert system["abilities"]["dodge"] == 0 and system["essence"] == 1
    assert system["divine"] is False and system["motes"] == 0 and system["onslaught"] == {}
    assert system["weapons"] == [] and system["armor"] is None and system["dv_penalty"] == 0


def test_declaration_defaults(host):
    assert host.load_declaration("exalted2e", {}) == {
        "type": None, "weapon": None, "stunt": 0, "undodgeable": False, "unblockable": False,
        "range_band": None, "distance": None, "off_hand": False, "cover": "none", "height": 0,
        "terrain": 0, "new_action": False, "unaware": False, "coordinated": None,
        "dodge_inapplicable": False, "post_soak": 0, "bystanders": [], "charms": [], "flurry": None,
    }  # fmt: skip


@pytest.mark.parametrize(
    "declaration, field",
    [
        ({"stunt": 4}, "stunt"),
        ({"stunt": "2"}, "stunt"),
        ({"type": "kick"}, "type"),
        ({"cover": "60"}, "cover"),
        ({"height": 4}, "height"),
        ({"terrain": 4}, "terrain"),
        ({"range_band": "far"}, "range_band"),
        ({"distance": -1}, "distance"),
        ({"charms": [{"dice": 3}]}, "charms"),
        ({"flurry": True}, "flurry"),
        ({"flurry": {"attacks": 1}}, "flurry"),
        ({"flurry": {"attack": 2}}, "flurry"),
        ({"flurry": {"attacks": 3, "attack": 4}}, "flurry"),
        ({"flurry": {"attacks": 3, "atack": 2}}, "flurry"),
        ({"flurry": {"attacks": 3, "penalty": -1}}, "flurry"),
        ({"flurry": {"attacks": 3, "attack": 2}, "new_action": True}, "flurry"),
    ],
)
def test_bad_declarations_are_invalid_requests_naming_the_field(host, declaration, field):
    with pytest.raises(InvalidRequest) as err:
        host.load_declaration("exalted2e", declaration)
    assert err.value.code == "invalid_request"
    assert field in err.value.details["declaration"]


BASE = {"attributes": {"strength": 2, "dexterity": 2, "stamina": 2}}


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"attributes": {"strength": 2}}, "attributes"),
        ({"health": {"penalties": [0, -1, "X"], "damage": [None, None, None]}}, "health"),
        ({"health": {"penalties": [0, -1], "damage": [None]}}, "health"),
        ({"health": {"penalties": [0, -1], "damage": ["Q", None]}}, "health"),
        ({"weapons": [{"name": "axe", "ability": "melee", "damage_type": "X"}]}, "weapons"),
        ({"weapons": [{"name": "axe", "ability": "axes"}]}, "weapons"),
        ({"weapons": [{"name": "axe", "ability": "melee"}, {"name": "axe", "ability": "melee"}]}, "weapons"),
        ({"shield": "kite"}, "shield"),
        ({"hardness": {"Z": 3}}, "hardness"),
        ({"motes": -1}, "motes"),
        ({"abilities": {"swordplay": 3}}, "abilities"),
    ],
)
def test_bad_token_data_is_refused(host, extra, field):
    with pytest.raises(InvalidRequest) as err:
        host.load_system("exalted2e", {**BASE, **extra})
    assert field in err.value.details["token"]


def test_the_health_track_may_also_be_written_level_by_level(host):
    levels = [{"penalty": p, "damage": d} for p, d in zip([0, -1, -1, -2, -2, -4, "I", "D", "D"], ["L", "B"] + [None] * 7)]
    system = host.load_system("exalted2e", {**BASE, "health": {"levels": levels}})
    assert system["health"] == {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["L", "B"] + [None] * 7}
    with pytest.raises(InvalidRequest) as err:
        host.load_system("exalted2e", {**BASE, "health": {"levels": [{"damage": "L"}]}})
    assert "health" in err.value.details["token"]
