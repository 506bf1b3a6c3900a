"""What the defender's question says about each choice, and a pack's own defense option.

Anoria: Dex 4, Dodge 4, Essence 3 → Dodge DV 7 (Exalted round up); Melee 3 with the
daiklave (Defense 2) → Parry DV 5. The soldier: Dodge DV 3, Parry DV 3 with the spear.
"""

import pytest

from vtt_bridge import Option, PluginError, hookimpl, make_host

from .helpers import changes, start


@pytest.fixture(scope="module")
def host():
    return make_host()


def asked(host, attacker, target, declaration=None):
    res = start(host, attacker, target, declaration, dice=[2] * 20)
    decision = res.advance()
    assert decision.key == "defense"
    return {o.id: o.to_dict().get("detail") for o in decision.options}


def test_each_defense_says_the_dv_it_gives(host):
    # seed 002, "Parry DV": the held weapon with the highest Defense — the daiklave
    assert asked(host, "soldier", "anoria") == {
        "dodge": "Dodge DV 7",
        "parry": "Parry DV 5 (daiklave)",
        "nothing": "DV 0",
    }
    assert asked(host, "anoria", "soldier")["parry"] == "Parry DV 3 (spear)"


def test_an_inapplicable_defense_says_so(host):
    details = asked(host, "anoria", "soldier", {"dodge_inapplicable": True})
    assert details["dodge"].endswith("(cannot dodge this)")
    assert details["parry"] == "Parry DV 3 (spear)"


class _Guess:
    """A pack's Parry Charm offered as an option of its own, not saying which defense it is."""

    @hookimpl
    def exalted2e_defense_options(self, ctx):
        return [Option(id="guess:iron-guard", label="Iron Guard")]


class _Said:
    @hookimpl
    def exalted2e_defense_options(self, ctx):
        return [Option(id="said:iron-guard", label="Iron Guard", counts_as="parry")]


def test_a_pack_option_that_does_not_say_which_defense_is_refused_not_guessed():
    host = make_host(plugins=[_Guess()])
    with pytest.raises(PluginError) as err:
        start(host, "soldier", "anoria", dice=[2] * 20).advance()
    assert err.value.details["option"] == "guess:iron-guard"
    assert "counts_as='dodge', 'parry' or 'nothing'" in err.value.message


def test_a_pack_option_that_counts_as_parry_gets_the_parry_dv():
    host = make_host(plugins=[_Said()])
    # Dodge DV 7 is the better: the old guess would have given 7, not the Parry DV 5 asked for
    res = start(host, "soldier", "anoria", dice=[2] * 20, answers={"defense": "said:iron-guard"})
    res.run()
    assert res.record["outcome"]["defense"] == "parry"
    assert changes(res.record, "declare_defense")["dv"][1] == 5
