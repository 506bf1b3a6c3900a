"""Hypothesis fuzzing of every event's payload, over a real connection (issue 14).

For every event, generated payloads — the event's own field names and a few
strangers, with values that are valid, wrong-typed, huge, nested, binary, or
not valid Unicode — must each get an acknowledgement that is never
``internal``; the connection must stay open; and a refused request must leave
the store exactly as it was (a hash of every token and of the audit log).
Raw frames of garbage text get the same promise.

The server and its clients run on their own event loop in a thread, so
hypothesis drives plain synchronous tests. Bounded: ``max_examples`` per
event, a deadline-free run, a 10 s acknowledgement timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from vtt_bridge.server import EVENTS, BridgeServer  # noqa: E402

from .conftest import config  # noqa: E402
from .kit import Client, answer, seat_table  # noqa: E402

EXAMPLES = 60

# The fields each event knows (a payload draws from these and from strangers).
FIELDS: dict[str, list[str]] = {
    "echo": ["data", "n"],
    "rulesets.list": [],
    "table.get": [],
    "table.update": ["decision_timeout", "attack_budget", "packs"],
    "table.sync": ["since"],
    "table.export": [],
    "tokens.import": ["tokens", "replace", "format", "version", "table"],
    "key.create": ["user"],
    "key.revoke": ["user"],
    "token.create": ["id", "name", "ruleset", "ownership", "system", "flags"],
    "token.get": ["id"],
    "token.list": [],
    "token.update": ["id", "version", "name", "ownership", "system", "flags"],
    "token.delete": ["id"],
    "attack": ["ruleset", "attacker", "targets", "declaration", "request_id", "seed", "dice", "answers"],
    "attack.odds": ["ruleset", "attacker", "targets", "declaration", "answers", "method", "samples"],
    "attack.whatif": ["attack", "with", "without", "answers", "add_charms", "remove_charms"],
    "attack.whatif.apply": ["attack", "with", "without", "answers", "add_charms", "remove_charms", "request_id"],
    "attack.history": ["limit", "before"],
    "attack.get": ["id"],
    "attack.undo": ["id"],
    "decision.default": ["attack", "key"],
}
KNOWN = ["a", "b", "c", "duel", "none", "block", "hp", "rerolls", "defense", "carol", "x" * 300]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 3, 2**53 - 1, 2**53, -(2**53), 2**63, 2**64 + 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(KNOWN),
    st.sampled_from(["\ud800", "a\udfff", "\x00", "é", "🎲", "\ud83c"]),
    st.binary(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(KNOWN + ["\ud800"])), inner, max_size=4),
    ),
    max_leaves=12,
)


def payloads(event: str) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(FIELDS[event] or ["x"]) | st.text(max_size=10)
    objects = st.dictionaries(keys, values, max_size=6)
    return st.one_of(objects, objects, values)


class Harness:
    """A server with one seated table, on an event loop of its own."""

    def __init__(self, tmp_path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tmp_path = tmp_path

    def run(self, coro, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def start(self) -> None:
        cfg = config(self.tmp_path, rate_limit=0, odds_budget=0.1, decision_timeout=0.2, key_check_interval=0)
        self.server = BridgeServer(cfg)
        await self.server.start()
        self.seat = await seat_table(self.server)
        self.gm = await self.seat.join("gm", answer(None))
        self.alice = await self.seat.join("alice", answer(None))

    async def digest(self) -> str:
        store, table = self.server.store, self.seat.id
        tokens = {tid: t.to_dict() for tid, t in (await store.tokens(table)).items()}
        audit = [(e.seq, e.kind) for e in await store.audit(table)]
        keys = sorted((k.user, k.digest) for k in await store.keys(table))
        text = json.dumps([tokens, audit, keys], sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()

    async def send(self, client: Client, event: str, payload: Any) -> tuple[Any, str, str]:
        before = await self.digest()
        ack = await client.sio.call(event, payload, timeout=10)
        return ack, before, await self.digest()

    async def send_raw(self, client: Client, text: str) -> Any:
        future = self.loop.create_future()
        ack_id = client.sio._generate_ack_id("/", lambda *args: future.set_result(args))
        await client.sio.eio.send(f"2{ack_id} {text}")
        return (await asyncio.wait_for(future, 10))[0]

    async def stop(self) -> None:
        await self.seat.close()
        await self.server.stop()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def close(self) -> None:
        self.run(self.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Iterator[Harness]:
    made = Harness(tmp_path_factory.mktemp("fuzz"))
    made.run(made.start())
    yield made
    made.close()


def check(harness: Harness, client: Client, event: str, payload: Any) -> None:
    ack, before, after = harness.run(harness.send(client, event, payload))
    assert isinstance(ack, dict) and isinstance(ack.get("ok"), bool), ack
    if not ack["ok"]:
        assert ack["error"]["code"] != "internal", (event, payload, ack)
        assert before == after, (event, payload, ack)
    assert client.sio.connected, (event, payload)


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


def test_every_event_is_fuzzed():
    assert set(FIELDS) == set(EVENTS)


@pytest.mark.parametrize("event", sorted(FIELDS))
def test_fuzzed_payloads_are_answered_never_internal_and_refusals_change_nothing(harness, event):
    # The GM may do everything, so the most code runs; key.revoke fuzzes as a player
    # (refused), so a fuzzed user name cannot close the fuzzing connections.
    client = harness.alice if event == "key.revoke" else harness.gm

    @FUZZ
    @given(payload=payloads(event))
    def fuzz(payload):
        check(harness, client, event, payload)

    fuzz()


@pytest.mark.parametrize("event", ["token.update", "attack", "attack.odds", "attack.undo"])
def test_fuzzed_payloads_from_a_player(harness, event):
    """A player (alice) reaches the permission checks with the same payloads."""

    @settings(FUZZ, max_examples=EXAMPLES // 2)
    @given(payload=payloads(event))
    def fuzz(payload):
        check(harness, harness.alice, event, payload)

    fuzz()


@FUZZ
@given(text=st.text(max_size=60) | st.sampled_from(['["echo",{"a":', '["echo",' + "9" * 5000 + "]", "[" * 900]))
def test_fuzzed_frames_are_answered_never_internal(harness, text):
    ack = harness.run(harness.send_raw(harness.gm, text))
    assert isinstance(ack, dict) and isinstance(ack.get("ok"), bool), ack
    if not ack["ok"]:
        assert ack["error"]["code"] != "internal", (text, ack)
    assert harness.gm.sio.connected
