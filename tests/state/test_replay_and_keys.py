from __future__ import annotations

import pytest

from vtt_bridge import Token
from vtt_bridge.state import AuditEntry, KeyInfo, ReplayMismatch, TokenChange, digest, match_key, new_key, replay


def entry(seq: int, **changes) -> AuditEntry:
    return AuditEntry(seq=seq, table="t", kind="attack", user="gm", at=0.0, changes=changes, data={})


def wire(hp: int, version: int) -> dict:
    return Token("a", "A", "duel", {"hp": hp}, version=version).to_dict()


def test_replay_folds_the_changes():
    log = [
        entry(1, a={"before": None, "after": wire(10, 1)}),
        entry(2, a={"before": wire(10, 1), "after": wire(7, 2)}),
    ]
    assert replay(log) == {"a": wire(7, 2)}
    assert replay(log + [entry(3, a={"before": wire(7, 2), "after": None})]) == {}


def test_replay_refuses_a_log_that_does_not_chain():
    log = [
        entry(1, a={"before": None, "after": wire(10, 1)}),
        entry(2, a={"before": wire(9, 1), "after": wire(7, 2)}),
    ]
    with pytest.raises(ReplayMismatch) as err:
        replay(log)
    assert err.value.seq == 2 and err.value.token_id == "a"


def test_token_change_checks_versions():
    with pytest.raises(ValueError):
        TokenChange(before=Token("a", "A", "duel", {}, version=1), after=Token("a", "A", "duel", {}, version=3))
    with pytest.raises(ValueError):
        TokenChange(before=None, after=Token("a", "A", "duel", {}, version=2))


def test_keys_are_random_stored_as_digests_and_matched():
    key = new_key()
    assert len(key) >= 40 and new_key() != key
    stored = [
        KeyInfo(user="gm", digest=digest(new_key()), created=0),
        KeyInfo(user="bob", digest=digest(key), created=0),
    ]
    assert key not in repr(stored)
    assert match_key(key, stored).user == "bob"
    assert match_key(key + "x", stored) is None
    assert match_key("", stored) is None
