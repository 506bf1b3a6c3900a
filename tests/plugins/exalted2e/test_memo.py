"""What the exalted2e steps remember per snapshot (``vtt_bridge.per_snapshot``): the same answers, never a stale one."""

import pytest

from vtt_bridge import make_host

from .helpers import after, changes, resolve, tokens, track


@pytest.fixture(scope="module")
def host():
    return make_host(block=["excellencies"])


def test_the_same_snapshots_resolve_the_same_attack_again(host):
    toks = tokens(host)
    first = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "stunt": 1}, toks=toks, seed=7)
    again = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "stunt": 1}, toks=toks, seed=7)
    fresh = resolve(host, "anoria", "soldier", {"weapon": "daiklave", "stunt": 1}, toks=tokens(host), seed=7)
    assert first == again == fresh


def test_a_changed_token_is_worked_out_afresh(host):
    # The soldier's Parry DV 2 + target shield 1 = 3; then hurt (−1 wounds) and with −1 DV from acting: 1.
    decl = {"weapon": "daiklave"}
    toks = tokens(host)
    resolve(host, "anoria", "soldier", decl, toks=toks, seed=1)
    assert changes(resolve(host, "anoria", "soldier", decl, toks=toks, seed=1), "declare_defense")["dv"] == (0, 3)
    hurt = {"health": {"penalties": [0, -1, -1, -2, -2, -4, "I", "D", "D"], "damage": ["L", "L"] + [None] * 7}}
    toks = tokens(host, soldier={**hurt, "dv_penalty": 1})
    # 4 successes − DV 1 = 3; raw 5 + 3 + 3 = 11, soak 2: 9 dice, one success.
    record = resolve(host, "anoria", "soldier", decl, toks=toks, dice=[7] * 4 + [2] * 6 + [7] + [2] * 8)
    assert changes(record, "declare_defense")["dv"] == (0, 1)
    assert changes(record, "damage")["damage"] == (0, 1)
    # The level lands on the track the soldier has now, not on the one remembered before.
    assert track(after(record, "soldier")["health"]) == "LLL......"
