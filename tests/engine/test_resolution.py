import pytest

from vtt_bridge import (
    DiceExhausted,
    InvalidRequest,
    PluginError,
    PluginValidationError,
    Token,
    hookimpl,
    make_host,
)

from . import duel


def host(*packs):
    return make_host(plugins=[duel.DuelRules(), *packs], entry_points=False, environ={})


def start(h, tokens=None, targets=("b",), declaration=None, **kw):
    return h.start(
        "duel",
        tokens or duel.tokens(),
        attacker="a",
        targets=list(targets),
        declaration=declaration or {},
        **kw,
    )


def test_defender_is_asked_and_the_answer_is_used():
    res = start(host(), dice=[5, 6])
    decision = res.advance()
    assert decision.key == "defense" and decision.token == "b"
    assert [o.id for o in decision.options] == ["block", "none"]
    res.answer("none")
    assert res.advance() is None
    assert res.record["outcome"] == {"hit": True}
    assert res.record["changes"]["b"] == {"before": {"hp": 10, "rerolls": 0}, "after": {"hp": 8, "rerolls": 0}}
    assert res.record["decisions"][0]["how"] == "answered"


def test_unanswered_decision_takes_the_rules_default_and_says_so():
    res = start(host(), dice=[5, 6])
    res.advance()
    res.default("timeout")
    res.advance()
    assert res.record["decisions"][0]["answer"] == {"option": "block"}
    assert res.record["decisions"][0]["how"] == "timeout"
    assert res.record["changes"]["b"]["after"]["hp"] == 9


def test_an_option_not_offered_is_refused_and_changes_nothing():
    res = start(host(), dice=[5, 6])
    res.advance()
    with pytest.raises(InvalidRequest):
        res.answer("flee")
    res.answer("none")
    res.advance()
    assert res.record["outcome"]["hit"] is True


def test_miss_ends_the_cycle_and_changes_no_token():
    record = start(host(), dice=[1, 2], answers={"defense": "block"}).run()
    assert record["ended"] == "miss"
    assert record["changes"] == {}
    assert [s["step"] for s in record["steps"]] == ["declare", "defend", "roll"]
    assert record["steps"][-1]["ended"] == "miss"


def test_scripted_dice_running_out_is_dice_exhausted():
    with pytest.raises(DiceExhausted) as err:
        start(host(), dice=[5], answers={"defense": "none"}).run()
    assert err.value.code == "dice_exhausted"


def test_same_seed_same_everything():
    a = start(host(), seed=42).run()
    b = start(host(), seed=42).run()
    c = start(host(), seed=43, declaration={"bonus": 8}).run()
    assert a == b
    assert a != c


def test_repeated_decision_and_goto_back():
    toks = duel.tokens()
    toks["a"] = Token("a", "Attacker", "duel", {"hp": 10, "rerolls": 2})
    res = start(host(), toks, dice=[1, 1, 1, 2, 6, 6], answers={"defense": "none"})
    d = res.advance()
    assert d.key == "reroll" and [o.id for o in d.options] == ["all", "decline"]
    res.answer("all")  # back to roll: 1,2 -> still nothing
    d = res.advance()
    assert d.key == "reroll"
    res.answer("all")  # 6,6
    d = res.advance()
    assert d is None  # no rerolls left: not asked again
    record = res.record
    assert record["changes"]["a"]["after"]["rerolls"] == 0
    assert record["changes"]["b"]["after"]["hp"] == 8
    rolls = [s["rolls"][0]["terms"][0]["results"] for s in record["steps"] if s["step"] == "roll"]
    assert [[r["result"] for r in rs] for rs in rolls] == [[1, 1], [1, 2], [6, 6]]


def test_each_target_runs_the_sub_steps():
    record = start(host(), targets=("b", "c"), dice=[6, 6], answers={"defense": "none"}).run()
    wounds = [s for s in record["steps"] if s["step"] == "wound"]
    assert [w["item"] for w in wounds] == ["b", "c"]
    assert record["changes"]["c"]["after"]["hp"] == 3


def test_counterattack_is_nested_with_roles_swapped():
    record = start(
        host(), dice=[6, 6, 5, 5], answers={"defense": "none", "counterattack/defense": "none"},
        declaration={"charms": [{"id": "riposte"}]},
    ).run()
    counter = record["steps"][-1]["children"][0]
    assert counter["kind"] == "counterattack" and counter["attacker"] == "b"
    assert record["changes"]["a"]["after"]["hp"] == 8
    assert record["changes"]["b"]["after"]["hp"] == 8
    assert [d["key"] for d in record["decisions"]] == ["defense", "counterattack/defense"]


def test_numbers_are_traced_with_the_plugin_that_changed_them():
    class Bonus:
        @hookimpl
        def duel_roll(self, ctx):
            ctx.pool += 3

    record = start(host(Bonus()), dice=[6] * 5, answers={"defense": "block"}).run()
    roll = next(s for s in record["steps"] if s["step"] == "roll")
    assert {"number": "pool", "from": 2, "to": 5, "plugin": "Bonus"} in roll["changes"]


def test_a_note_template_is_filled_in_only_when_the_trace_is_kept():
    formatted = []

    class Counted:
        """A value that records each time a note formats it."""

        def __format__(self, spec):
            formatted.append(spec)
            return format(7, spec)

    class Notes:
        @hookimpl
        def duel_roll(self, ctx):
            ctx.note("pool {} + {bonus:+d}, tracing {}", ctx.pool, ctx.tracing, bonus=Counted())
            ctx.note("a {literal} line")  # no arguments: printed as it is

    traced = start(host(Notes()), dice=[6] * 5, answers={"defense": "block"}).run()
    roll = next(s for s in traced["steps"] if s["step"] == "roll")
    assert [n["text"] for n in roll["notes"]] == ["pool 2 + +7, tracing True", "a {literal} line"]
    assert roll["notes"][0]["plugin"] == "Notes"
    assert formatted == ["+d"]
    h = host(Notes())
    declaration = h._declaration("duel", {})
    kw = dict(attacker="a", targets=["b"], declaration=declaration, dice=[6] * 5, answers={"defense": "block"})
    lean = h.engine.start("duel", duel.tokens(), **kw, trace=False).run()
    assert lean["steps"] == [] and lean.outcome == traced.outcome
    assert formatted == ["+d"]  # the untraced run formatted nothing


def test_a_packs_number_write_changes_the_outcome_traced_or_not():
    """A pack reads and writes ``ctx.<number>`` the same way whether the trace is kept or not (the odds)."""
    seen = []

    class Blunt:
        @hookimpl(tryfirst=True)
        def duel_roll(self, ctx):
            seen.append((ctx.tracing, ctx.pool, ctx.hits))
            ctx.pool += 3  # five dice instead of two

        @hookimpl
        def duel_wound(self, ctx):
            ctx.hits *= 2

    def run(trace, pack=True):
        h = host(Blunt()) if pack else host()
        declaration = h._declaration("duel", {})
        res = h.engine.start(
            "duel", duel.tokens(), attacker="a", targets=["b"], declaration=declaration,
            dice=[6, 6, 6, 6, 6], answers={"defense": "block"}, trace=trace,
        )  # fmt: skip
        return res.run()

    plain = run(False, pack=False)
    assert plain.changes["b"]["after"]["hp"] == 9  # 2 successes − 1 blocked
    traced, lean = run(True), run(False)
    # 5 successes − 1 blocked = 4 hits, doubled by the pack: hp 10 → 2, traced or not.
    assert traced.changes["b"]["after"]["hp"] == lean.changes["b"]["after"]["hp"] == 2
    assert seen == [(True, 2, 0), (False, 2, 0)]
    assert lean.ctx.pool == 5 and lean.ctx.hits == 8 and type(lean.ctx).__name__ == "UntracedDuelContext"


def test_current_shows_every_write_and_an_earlier_read_stays_as_it_was():
    seen = []

    class Writes:
        @hookimpl
        def duel_roll(self, ctx):
            seen.append(ctx.current("b"))
            ctx.update("b", hp=9, scars=["left arm"])
            seen.append(ctx.current("b"))
            assert ctx.current("b") is seen[-1]  # read again without a write: the same snapshot
            ctx.update("b", rerolls=1)
            seen.append(ctx.current("b"))

    start(host(Writes()), dice=[6] * 5, answers={"defense": "block"}).run()
    assert [dict(s) for s in seen] == [
        {"hp": 10, "rerolls": 0},
        {"hp": 9, "rerolls": 0, "scars": ("left arm",)},
        {"hp": 9, "rerolls": 1, "scars": ("left arm",)},
    ]


def test_wrapper_sees_the_ruleset_result():
    class Wrap:
        @hookimpl(wrapper=True)
        def duel_roll(self, ctx):
            result = yield
            ctx.hits += 1
            return result

    # 2 successes - 1 block = 1 hit; the wrapper adds one after the ruleset's own step
    record = start(host(Wrap()), dice=[6, 6], answers={"defense": "block"}).run()
    assert record["changes"]["b"]["after"]["hp"] == 8
    # an ended cycle reaches the wrapper as an exception, never as a result
    record = start(host(Wrap()), dice=[1, 1], answers={"defense": "block"}).run()
    assert record["ended"] == "miss" and record["changes"] == {}


def test_wrappers_nest_as_pluggy_documents_and_one_can_swallow_an_exception():
    log = []

    class Outer:
        @hookimpl(wrapper=True, tryfirst=True)
        def duel_roll(self, ctx):
            log.append("outer in")
            try:
                result = yield
            except ZeroDivisionError:
                log.append("outer caught")
                return []
            log.append("outer out")
            return result

    class Inner:
        @hookimpl(wrapper=True)
        def duel_roll(self, ctx):
            log.append("inner in")
            result = yield
            log.append("inner out")
            return result

    class Plain:
        def __init__(self, fail):
            self.fail = fail

        @hookimpl
        def duel_roll(self, ctx):
            log.append("plain")
            if self.fail:
                raise ZeroDivisionError("swallowed by Outer")

    # Every wrapper runs to its yield before the first plain implementation; then innermost first.
    start(host(Outer(), Inner(), Plain(False)), dice=[6, 6], answers={"defense": "block"}).run()
    assert log == ["outer in", "inner in", "plain", "inner out", "outer out"]
    # An exception passes through the inner wrapper (which does not catch it) to the outer one,
    # which returns instead: the attack goes on without a roll (the ruleset's was not called), a miss.
    log.clear()
    record = start(host(Outer(), Inner(), Plain(True)), dice=[6, 6], answers={"defense": "block"}).run()
    assert log == ["outer in", "inner in", "plain", "outer caught"]
    assert record.ended == "miss"


def test_plugin_exception_names_plugin_and_hook():
    class Broken:
        @hookimpl
        def duel_roll(self, ctx):
            raise ZeroDivisionError("oops")

    with pytest.raises(PluginError) as err:
        start(host(Broken()), dice=[6, 6], answers={"defense": "block"}).run()
    assert err.value.details["hook"] == "duel_roll"
    assert err.value.details["plugin"] is not None


def test_mutating_a_snapshot_is_caught():
    class Cheat:
        @hookimpl
        def duel_roll(self, ctx):
            ctx.defender.system["hp"] = 0

    with pytest.raises(PluginError) as err:
        start(host(Cheat()), dice=[6, 6], answers={"defense": "block"}).run()
    assert err.value.details["exception"] == "SnapshotMutation"


def test_illegal_jump_is_refused():
    class Jumper:
        @hookimpl
        def duel_declare(self, ctx):
            ctx.goto("counter")

    with pytest.raises(PluginError) as err:
        start(host(Jumper()), dice=[6, 6], answers={"defense": "block"}).run()
    assert "may not go to" in err.value.message


def test_unknown_hook_is_refused_at_start_up_with_a_suggestion():
    class Typo:
        @hookimpl
        def duel_rol(self, ctx):
            pass

    with pytest.raises(PluginValidationError) as err:
        host(Typo())
    assert err.value.details["hook"] == "duel_rol"
    assert err.value.details["suggestion"] == "duel_roll"


def test_bad_declaration_is_invalid_request_with_field_messages():
    with pytest.raises(InvalidRequest) as err:
        start(host(), declaration={"bonus": "lots"}, seed=1)
    assert err.value.details == {"declaration": {"bonus": ["Not a valid integer."]}}


def test_a_declaration_is_validated_once_and_cannot_be_changed_afterwards():
    h = host()
    first = start(h, declaration={"bonus": 1}, dice=[6, 6, 6], answers={"defense": "none"})
    again = start(h, declaration={"bonus": 1}, dice=[6, 6, 6], answers={"defense": "none"})
    assert first.ctx.declaration is again.ctx.declaration  # the cached, frozen form
    with pytest.raises(Exception):
        first.ctx.declaration["bonus"] = 9
    assert first.run().to_dict() == again.run().to_dict()
    # a bad declaration is still refused every time, and never cached
    for _ in range(2):
        with pytest.raises(InvalidRequest):
            start(h, declaration={"bonus": "lots"}, seed=1)


def test_a_starter_starts_each_resolution_as_start_would_with_its_own_given_answers():
    h = host()
    declaration = h._declaration("duel", {})
    kw = dict(attacker="a", targets=["b"], declaration=declaration, answers={"defense": ["none"]})
    begin = h.engine.starter("duel", duel.tokens(), **kw)
    for seed in (1, 2, 3):
        # The given answer is taken in every resolution, not used up by the first.
        assert begin(seed).run().to_dict() == h.engine.start("duel", duel.tokens(), **kw, seed=seed).run().to_dict()
        assert begin(seed).run().to_dict()["decisions"][0]["how"] == "given"
    with pytest.raises(InvalidRequest):
        h.engine.starter("duel", duel.tokens(), attacker="a", targets=["a"], declaration=declaration)
