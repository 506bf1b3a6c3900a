"""Every ruleset's token and declaration forms read plainly (issue 28, "the attack form").

The web table and the Foundry module label a field with the ``title`` and one-line
``description`` that ``rulesets.list`` carries, and fold ``situational`` fields under
"More options"; a field without them shows its raw name (``near_target``, ``RNG``).
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from vtt_bridge import make_host
from vtt_bridge.server.describe import describe_ruleset

HOST = make_host()
#: exalted2e titles the fields whose names do not say it (its forms were checked first).
RULESETS = ["exalted2e_mass", "warmachine_mk3", "highest_die", "godsgloom"]
#: Declared through the declarables, which carry their own labels.
LISTED_APART = {"charms"}


def _fields(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for name, prop in schema.get("properties", {}).items():
        if name in LISTED_APART:
            continue
        here = f"{path}{name}"
        yield here, prop
        if prop.get("type") == "object" and "properties" in prop:
            yield from _fields(prop, f"{here}.")
        items = prop.get("items")
        if isinstance(items, dict) and "properties" in items:
            yield from _fields(items, f"{here}[].")


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("form", ["token_schema", "declaration_schema"])
def test_every_field_has_a_plain_title_and_one_line_help(ruleset: str, form: str) -> None:
    described = describe_ruleset(HOST.rulesets[ruleset], HOST)[form]
    bare = [path for path, prop in _fields(described) if not prop.get("title") or not prop.get("description")]
    assert bare == [], f"{ruleset} {form}: no title or help for {bare}"
    for path, prop in _fields(described):
        assert "\n" not in prop["description"] and len(prop["description"]) <= 120, (path, prop["description"])


@pytest.mark.parametrize(
    ("ruleset", "situational", "main"),
    [
        ("exalted2e_mass", {"undodgeable", "unblockable", "penalty", "cover", "height"}, {"attack", "stunt"}),
        ("warmachine_mk3", {"models_under_template", "application_order"}, {"weapon", "modifiers"}),
        ("highest_die", {"near_target", "near_attacker"}, {"weapon"}),
        ("godsgloom", {"modifiers", "defender_modifiers", "auto"}, {"attack"}),
    ],
)
def test_the_attack_form_folds_only_what_some_attacks_need(ruleset: str, situational: set[str], main: set[str]) -> None:
    properties = describe_ruleset(HOST.rulesets[ruleset], HOST)["declaration_schema"]["properties"]
    assert {name for name, prop in properties.items() if prop.get("situational")} == situational
    assert main <= {name for name, prop in properties.items() if not prop.get("situational")}
