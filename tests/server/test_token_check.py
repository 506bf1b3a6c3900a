"""The check of what an attack leaves (``Host.changed_token``, run in the resolver) loads only what changed.

A stored token passed its ruleset's schema when it was written; an attack changes a
few of its fields. The nested objects it leaves as they were (a character's
abilities, weapons, armor) are taken as they are; whatever changed is loaded in full,
and a ruleset or pack that leaves a changed field invalid is still a ``plugin_error``.
"""

from __future__ import annotations

import pytest

from vtt_bridge import make_host
from vtt_bridge.engine.tokens import thaw
from vtt_bridge.errors import PluginError

from ..plugins.exalted2e.helpers import resolve, tokens


@pytest.fixture(scope="module")
def host():
    return make_host(environ={})


def test_the_checked_token_is_what_a_full_load_gives(host):
    toks = tokens(host)
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[8] * 30)
    for token_id, change in record["changes"].items():
        after = host.changed_token(toks[token_id], change["after"])
        assert thaw(after.system) == host.load_system("exalted2e", change["after"])
        assert after.version == toks[token_id].version + 1


def test_an_invalid_change_to_a_nested_field_is_still_refused(host):
    toks = tokens(host)
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[8] * 30)
    token_id, change = next(iter(record["changes"].items()))
    broken = {**change["after"], "health": {**change["after"]["health"], "damage": ["X"]}}
    with pytest.raises(PluginError) as raised:
        host.changed_token(toks[token_id], broken)
    assert "health" in raised.value.details["errors"]["token"]
    weapons = [{"name": "sword", "ability": "juggling"}]  # not an attack Ability
    with pytest.raises(PluginError):
        host.changed_token(toks[token_id], {**change["after"], "weapons": weapons})
