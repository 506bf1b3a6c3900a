"""vtt_bridge.testing: what a pack author tests a pack with, exercised on the duel ruleset."""

import pytest

from vtt_bridge import InvalidRequest, PluginError, Token, hookimpl
from vtt_bridge import testing as vt

RULES = "tests.kit.packs.duel_rules"
KEEN = "tests.kit.packs.keen_edge"
GUARD = "tests.kit.packs.steel_guard"

FIGHTERS = {"a": {"hp": 10, "rerolls": 1}, "b": {"hp": 10}}


@pytest.fixture(scope="module")
def host():
    return vt.host(RULES, KEEN, GUARD, entry_points=False)


# -- tokens -------------------------------------------------------------------


def test_tokens_from_system_dicts_are_validated_snapshots_with_defaults(host):
    toks = vt.tokens("duel", {"a": {"hp": 10}, "b": {"hp": 7, "rerolls": 2}}, host=host)
    assert set(toks) == {"a", "b"}
    assert toks["a"].system == {"hp": 10, "rerolls": 0}  # the schema's default filled in
    assert toks["b"].ruleset == "duel" and toks["b"].name == "b"
    with pytest.raises(TypeError):
        toks["b"].system["hp"] = 1


def test_tokens_from_full_token_dicts_keep_name_and_ownership(host):
    toks = vt.tokens(
        "duel",
        [{"id": "a", "name": "Anoria", "ownership": {"alice": 3}, "system": {"hp": 4}}],
        host=host,
    )
    assert toks["a"].name == "Anoria"
    assert dict(toks["a"].ownership) == {"alice": 3}


def test_a_bad_token_is_refused_with_the_schemas_message(host):
    with pytest.raises(InvalidRequest) as err:
        vt.tokens("duel", {"a": {"hp": "lots"}}, host=host)
    assert err.value.details == {"token": {"hp": ["Not a valid integer."]}}
    with pytest.raises(InvalidRequest):
        vt.make_token("duel", "a", {"hp": 3, "mana": 9}, host=host)  # unknown field


# -- resolving ----------------------------------------------------------------


def test_resolve_uses_the_scripted_dice_and_the_given_answers(host):
    res = vt.resolve("duel", FIGHTERS, dice=[6, 5], answers={"defense": "none"}, host=host)
    assert res.rolls("roll") == [[6, 5]]
    assert res.decision("defense").chosen == "none"
    assert res.decision("defense").how == "given"
    assert res.hit is True
    assert res.token_after("b") == {"hp": 8, "rerolls": 0}
    assert res.token_changes == {"b": {"before": {"hp": 10, "rerolls": 0}, "after": {"hp": 8, "rerolls": 0}}}


def test_first_token_attacks_the_second_by_default_and_others_can_be_named(host):
    three = {**FIGHTERS, "c": {"hp": 5}}
    res = vt.resolve("duel", three, dice=[6, 6], answers={"defense": "none"}, host=host)
    assert res.record["attacker"] == "a" and res.record["targets"] == ["b"]
    res = vt.resolve(
        "duel", three, attacker="c", targets=["a", "b"], dice=[6, 6], answers={"defense": "none"}, host=host
    )
    assert [s.item for s in res.steps if s.name == "wound"] == ["a", "b"]


def test_unanswered_decisions_take_the_rules_default_and_strict_refuses_them(host):
    res = vt.resolve("duel", FIGHTERS, dice=[6, 6, 6, 6], host=host)
    defense = res.decision("defense")
    assert defense.chosen == "block" and defense.how == "default"
    assert defense.options == ["steel-guard", "block", "none"]  # the pack offers its option first
    with pytest.raises(AssertionError, match="'defense'.*left to the rules. default.*steel-guard, block, none"):
        vt.resolve("duel", FIGHTERS, dice=[6, 6], strict=True, host=host)


def test_a_policy_answers_by_key_in_turn_then_falls_back(host):
    # a has one reroll: answer "all" the first time the reroll decision is asked
    decide = vt.policy({"defense": "none", "reroll": ["all"]}, default="last")
    res = vt.resolve("duel", FIGHTERS, dice=[1, 1, 6, 6], policy=decide, host=host)
    assert [(a.key, a.chosen, a.how) for a in res.decisions] == [
        ("defense", "none", "answered"),
        ("reroll", "all", "answered"),
    ]
    assert res.rolls("roll") == [[1, 1], [6, 6]]
    assert [s.name for s in res.steps][:6] == ["declare", "defend", "roll", "reroll", "roll", "reroll"]
    assert res.step("roll", nth=1).faces == [[6, 6]]
    with pytest.raises(AssertionError, match="not answered"):
        vt.policy({}, strict=True)(res.decision("defense").decision)


def test_seeded_resolutions_repeat_exactly(host):
    one = vt.resolve("duel", FIGHTERS, seed=11, answers={"defense": "none"}, host=host)
    two = vt.resolve("duel", FIGHTERS, seed=11, answers={"defense": "none"}, host=host)
    assert one.record == two.record
    assert one.record["seed"] == 11


# -- reading the trace ----------------------------------------------------------


def test_which_plugin_changed_which_number(host):
    res = vt.resolve(
        "duel",
        FIGHTERS,
        declaration={"charms": [{"id": "keen-edge"}]},
        dice=[6, 6, 2],
        answers={"defense": "steel-guard"},
        host=host,
    )
    assert [str(c) for c in res.changes_by(KEEN)] == [f"roll: pool 2 -> 3 by {KEEN}"]
    res.assert_changed("pool", by=KEEN, step="roll", delta=+1, to=3)
    res.assert_changed("block", by=GUARD, step="defend", to=2)
    assert res.step("roll").notes == [("Keen Edge: +1 die", KEEN)]
    assert res.step("roll").value("pool") == 3
    assert res.numbers["pool"] == 3
    # two successes, two blocked by Steel Guard: no hit left
    assert res.numbers["hits"] == 0


def test_assert_changed_fails_with_every_change_of_that_number_and_the_card(host):
    res = vt.resolve("duel", FIGHTERS, dice=[6, 6, 2], answers={"defense": "none"}, host=host)
    with pytest.raises(AssertionError) as err:
        res.assert_changed("pool", by=KEEN)  # Keen Edge was not declared
    text = str(err.value)
    assert f"'pool' was not changed by {KEEN}" in text
    assert "3. Roll" in text  # the chat card follows
    res = vt.resolve(
        "duel",
        FIGHTERS,
        declaration={"charms": [{"id": "keen-edge"}]},
        dice=[6, 6, 2],
        answers={"defense": "none"},
        host=host,
    )
    with pytest.raises(AssertionError, match=r"'pool' changed by \+1, expected \+2"):
        res.assert_changed("pool", by=KEEN, delta=2)
    with pytest.raises(AssertionError, match="ended at 3, expected 4"):
        res.assert_changed("pool", by=KEEN, to=4)


def test_a_missing_step_is_reported_with_the_steps_that_ran(host):
    res = vt.resolve("duel", FIGHTERS, dice=[1, 1], answers={"defense": "none", "reroll": "decline"}, host=host)
    assert res.ended == "miss"
    assert res.step("reroll").ended == "miss"
    assert not res.ran("wounds")
    with pytest.raises(AssertionError, match="step 'wounds'.*did not run; steps run: declare, defend, roll, reroll"):
        res.step("wounds")


def test_nested_attacks_are_read_through_their_step(host):
    res = vt.resolve(
        "duel",
        FIGHTERS,
        declaration={"charms": [{"id": "riposte"}]},
        dice=[6, 6, 5, 5],
        answers={"defense": "none", "counterattack/defense": "none", "reroll": "decline"},
        host=host,
    )
    counter = res.step("counter").children
    assert [c.kind for c in counter] == ["counterattack"]
    assert counter[0].rolls() == [[5, 5]]
    assert [c.kind for c in res.changes if c.number == "hits"] == ["attack", "counterattack"]


def test_a_plugin_error_is_raised_as_the_server_would_report_it():
    class Faulty:
        @hookimpl
        def duel_wounds(self, ctx):
            raise ValueError("bad")

    with pytest.raises(PluginError) as err:
        vt.resolve("duel", FIGHTERS, dice=[6, 6], plugins=[RULES, Faulty()], answers={"defense": "none"})
    assert err.value.details["hook"] == "duel_wounds"


def test_card_reads_like_the_cli(host):
    res = vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, host=host)
    card = res.card()
    assert card.splitlines()[0] == "duel attack: a → b"
    assert "? Block or take it? → none (given)" in card
    assert "b: hp: 10 → 8" in card


def test_tokens_may_be_passed_as_snapshots(host):
    toks = {
        "a": Token("a", "A", "duel", {"hp": 3, "rerolls": 0}),
        "b": Token("b", "B", "duel", {"hp": 3, "rerolls": 0}),
    }
    res = vt.resolve("duel", toks, dice=[6, 6], answers={"defense": "none"}, host=host)
    assert res.token_after("b")["hp"] == 1


# -- recording hook calls ---------------------------------------------------------


def test_hook_recorder_sees_every_call_in_order_with_its_plugins():
    h = vt.host(RULES, KEEN, GUARD, entry_points=False)
    vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, host=h)  # compiled fast path first
    with vt.HookRecorder(h) as calls:
        vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, host=h)
    calls.assert_order("duel_defense_options", "duel_defend", "duel_roll", "duel_wound")
    roll = calls.assert_called("duel_roll", times=1)[0]
    assert roll.plugins == (KEEN, RULES)  # the pack runs before the ruleset's trylast step
    assert calls.get("duel_defend")[0].plugins == (GUARD, RULES)  # a wrapper enters first
    options = calls.get("duel_defense_options")[0].result
    assert sorted(o.id for batch in options for o in batch) == ["block", "none", "steel-guard"]
    calls.assert_not_called("duel_reroll_options_typo")
    with pytest.raises(AssertionError, match="duel_declare was not called after duel_roll"):
        calls.assert_order("duel_roll", "duel_declare")
    # closed: later attacks are not recorded
    vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, host=h)
    assert len(calls.get("duel_roll")) == 1


def test_hook_recorder_records_the_exception_of_a_failing_hook():
    class Faulty:
        @hookimpl
        def duel_roll(self, ctx):
            raise KeyError("x")

    h = vt.host(RULES, Faulty(), entry_points=False)
    calls = vt.HookRecorder(h)
    with pytest.raises(PluginError):
        vt.resolve("duel", FIGHTERS, dice=[6, 6], answers={"defense": "none"}, host=h)
    assert isinstance(calls.get("duel_roll")[0].exception, KeyError)
    assert calls.hooks[-1] == "duel_roll"


def test_tokens_carry_flags_checked_as_the_server_checks_them():
    from vtt_bridge import InvalidRequest

    excellent = vt.tokens("exalted2e", [{**s, "flags": {"excellencies": {"charms": ["first-excellency"]}}}
                                         for s in vt.host().ruleset("exalted2e").sample_tokens()][:1])  # fmt: skip
    (token,) = excellent.values()
    assert token.to_dict()["flags"] == {"excellencies": {"charms": ["first-excellency"]}}
    with pytest.raises(InvalidRequest) as err:
        vt.make_token("exalted2e", "x", token.plain(), flags={"nobody": {}})
    assert list(err.value.details["flags"]) == ["nobody"]
