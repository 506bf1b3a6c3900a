"""Issue 14, item 12: values a ruleset writes stay within its own token schema.

"Each attack the character makes reduces both DVs by one" (seed 002): a character who
never declares a new action piles up DV penalty and onslaught past the schema's cap of
50. The host clamps what a resolution writes to the schema's ranges, so the fifty-first
attack commits like the first instead of failing every time with ``plugin_error``.
"""

from vtt_bridge import make_host

from .helpers import resolve, tokens


def test_dv_penalty_and_onslaught_past_the_cap_are_clamped_not_a_plugin_error():
    host = make_host(environ={})
    toks = tokens(host, soldier={"dv_penalty": 50}, monk={"onslaught": {"soldier": 50}})
    record = resolve(host, "soldier", "monk", {}, toks=toks, dice=[2] * 20)
    assert record["changes"]["soldier"]["after"]["dv_penalty"] == 51  # what the rules say
    assert record["changes"]["monk"]["after"]["onslaught"] == {"soldier": 51}
    soldier = host.changed_token(toks["soldier"], record["changes"]["soldier"]["after"])
    monk = host.changed_token(toks["monk"], record["changes"]["monk"]["after"])
    assert soldier.system["dv_penalty"] == 50 and soldier.version == toks["soldier"].version + 1
    assert monk.system["onslaught"] == {"soldier": 50}
    # and the next attack from the clamped state commits too
    again = resolve(host, "soldier", "monk", {}, toks={**toks, "soldier": soldier, "monk": monk}, dice=[2] * 20)
    assert host.changed_token(soldier, again["changes"]["soldier"]["after"]).system["dv_penalty"] == 50
