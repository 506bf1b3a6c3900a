"""Hostile answers and packs (issue 27): refused with a structured error, never a crash.

An answer whose ``params`` is not an object is refused as invalid (the server then
takes the decision's default with ``how: "invalid"``), in every ruleset.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtt_bridge import InvalidRequest, PluginError, VTTError, hookimpl, make_host
from vtt_bridge.cli.resolve import load_tokens

ROOT = Path(__file__).resolve().parents[2]


def _examples() -> dict[str, dict]:
    """The first example of each installed ruleset (by file name)."""
    out: dict[str, dict] = {}
    for path in sorted((ROOT / "plugins").glob("vtt_*/examples/*.json")):
        data = json.loads(path.read_text())
        out.setdefault(data["ruleset"], data)
    return out


EXAMPLES = _examples()


@pytest.fixture(scope="module")
def host():
    return make_host()


def test_every_ruleset_has_an_example_here(host):
    assert set(EXAMPLES) == set(host.rulesets)


@pytest.mark.parametrize("ruleset", sorted(EXAMPLES))
@pytest.mark.parametrize("params", ["x", "", ["parry"], [], 3, 0, 1.5, True])
def test_params_that_are_not_an_object_fall_to_the_default_as_invalid(host, ruleset, params):
    data = EXAMPLES[ruleset]
    res = host.start(
        ruleset,
        load_tokens(host, data),
        attacker=data["attacker"],
        targets=list(data["targets"]),
        declaration=data.get("declaration", {}),
        seed=7,
    )
    decision = res.advance()
    assert decision is not None, f"{ruleset}: the example asks nothing"
    option = decision.options[0].id
    # What the server does with an answer: any VTTError takes the default as "invalid".
    with pytest.raises(InvalidRequest) as err:
        res.answer(option, params)
    assert err.value.details == {"answer": {"params": ["Not a valid mapping type."]}}
    assert res.advance() is decision  # the refused answer changed nothing
    try:
        res.answer({"option": option, "params": params})
    except VTTError:
        res.default("invalid")
    res.run()
    first = res.record["decisions"][0]
    assert first["key"] == decision.key
    assert first["how"] == "invalid"
    assert first["answer"] == {"option": decision.default}


class Vandal:
    """A pack writing a field its ruleset's schema refuses, before the ruleset writes that token."""

    @hookimpl
    def exalted2e_declare_attack(self, ctx):
        ctx.update(ctx.defender.id, motes="a lot")


def test_the_pack_that_wrote_the_bad_field_is_named_not_the_last_writer():
    host = make_host(plugins=[Vandal()], block=["excellencies"])  # (it reads motes: it would fail first)
    data = json.loads((ROOT / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json").read_text())
    tokens = load_tokens(host, data)
    defender = data["targets"][0]
    res = host.start("exalted2e", tokens, attacker=data["attacker"], targets=[defender], declaration=data["declaration"], seed=2)
    res.run()
    writers = res.ctx.changes.writers[defender]
    assert writers["motes"] == ("Vandal", "declare_attack")
    assert list(writers)[-1] != "motes"  # the ruleset wrote this token after the pack (onslaught, health)
    after = res.record["changes"][defender]["after"]
    with pytest.raises(PluginError) as err:
        host.changed_token(tokens[defender], after, writers=res.ctx.changes.writers)
    assert err.value.details["plugin"] == "Vandal"
    assert (err.value.details["hook"], err.value.details["step"]) == ("exalted2e_declare_attack", "declare_attack")
    assert err.value.details["errors"] == {"token": {"motes": ["Not a valid integer."]}}
    assert err.value.message.startswith("plugin Vandal left token")


def _lists(schema, seen=None):
    """Every ``fields.List`` of a marshmallow schema, nested schemas followed: ``(path, field)``."""
    from marshmallow import fields

    seen = set() if seen is None else seen
    if id(schema) in seen:
        return
    seen.add(id(schema))
    for name, field in schema.load_fields.items():
        inner = field
        if isinstance(field, fields.List):
            yield name, field
            inner = field.inner
        if isinstance(inner, fields.Nested):
            nested = inner.schema
            for path, found in _lists(nested, seen):
                yield f"{name}.{path}", found


def _schemas(host):
    from marshmallow import Schema

    from vtt_bridge.state import messages

    for ruleset_id, ruleset in sorted(host.rulesets.items()):
        yield f"{ruleset_id} token", ruleset.token_schema()
        yield f"{ruleset_id} declaration", ruleset.declaration_schema()
        for plugin, schema in host.flag_schemas(ruleset_id).items():
            yield f"{ruleset_id} flags.{plugin}", schema
    for name in messages.__all__:
        value = getattr(messages, name)
        if isinstance(value, type) and issubclass(value, Schema):
            yield f"message {name}", value()


def test_every_list_in_the_schemas_is_bounded(host):
    from marshmallow import validate

    unbounded = []
    for where, schema in _schemas(host):
        for path, field in _lists(schema):
            if not any(isinstance(v, validate.Length) and (v.max is not None or v.equal is not None) for v in field.validators):
                unbounded.append(f"{where}: {path}")
    assert unbounded == []


def test_a_flag_list_of_ten_thousand_duplicates_is_refused_clearly(host):
    with pytest.raises(InvalidRequest) as err:
        host.load_flags("exalted2e", {"excellencies": {"charms": ["first-excellency"] * 10_000}})
    assert err.value.details == {"flags": {"excellencies": {"charms": ["Longer than maximum length 4."]}}}


def test_an_error_about_a_huge_request_stays_small(host):
    data = json.loads((ROOT / "plugins/vtt_exalted2e/examples/sword_vs_soldier.json").read_text())
    system = dict(data["tokens"][0]["system"])
    system["weapons"] = [{"name": "x" * 5_000, "damage": "lots"}] * 10_000  # ~50 MB of bad weapons
    with pytest.raises(InvalidRequest) as err:
        host.load_system("exalted2e", system)
    assert "weapons" in err.value.details["token"]
    assert len(json.dumps(err.value.to_dict())) < 16_000  # the socket's incoming limit is 1 MB


def test_small_error_details_are_kept_as_they_are():
    details = {"token": {"hp": ["Not a valid integer."]}, "installed": ["a", "b"]}
    assert InvalidRequest("bad", details=details).details is details
    many = InvalidRequest("bad", details={"answers": {f"k{i}": ["No."] for i in range(500)}}).details["answers"]
    kept = [key for key in many if key != "…"]
    assert kept == [f"k{i}" for i in range(len(kept))] and 0 < len(kept) < 100  # the first ones, in order
    assert many["…"] == f"{500 - len(kept)} more"
