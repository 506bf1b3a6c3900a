"""Attacks over the wire: resolve, ask, commit, broadcast; history; undo.

An attack on a table runs under that table's ``attack_lock``, so a table's
attacks are applied in the order they arrive while other tables go on
independently. Inside it the engine's :class:`~vtt_bridge.Resolution` is
driven in a resolver process (:mod:`.pool`) on the attack's time budget,
and a Decision goes to a person (:class:`~.prompts.Prompter`). The steps
that finish before a decision are broadcast while it waits; the rest travel
in ``attack.resolved``. Every changed token's new ``system`` is checked by
its ruleset's schema (in the resolver), and the token rows and the one audit
entry are committed in a single transaction — or, on any error, nothing is.

A ``request_id`` makes the request idempotent: a retry (while the first is
still running, or after) gets the first result and nothing is applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..engine.tokens import Token, thaw
from ..errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    ServerStopping,
    error_envelope,
    error_from_dict,
)
from ..state import codec, messages
from ..state.keys import new_id
from ..state.records import AuditDraft, AuditEntry, TokenChange, dumps, token_wire
from ..whatif import find_attack, plan_what_if, tokens_before
from .logs import fields
from .pool import OddsRunner, budget_of
from .prompts import Prompter
from .sandbox import Asked, Done, Failed
from .session import Caller, require_gm, require_owner
from .tables import TableRuntime

if TYPE_CHECKING:  # pragma: no cover
    from .bridge import Bridge

__all__ = ["Attacks", "fingerprint", "rebase"]

log = logging.getLogger("vtt_bridge.server")

GM_ONLY = ("seed", "dice", "answers")


def fingerprint(request: dict[str, Any]) -> str:
    """What a retry must repeat exactly: the request without its ``request_id``."""
    body = {k: v for k, v in request.items() if k != "request_id"}
    return hashlib.sha256(dumps(_sorted(body)).encode()).hexdigest()


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


_MISSING = object()


def rebase(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any], path: str = "") -> dict[str, Any]:
    """A three-way merge of token ``system`` data: an attack took ``base`` to ``ours``,
    an edit took ``base`` to ``theirs``; the result has both.

    A field only one side changed takes that side's value. A number both
    changed gets the attack's change added to the edited value (3 damage
    transferred to a warbeast the GM just healed to 8 leaves it at 5). Objects
    merge field by field. Anything else both set differently raises ``Conflict``.
    """
    out = dict(theirs)
    for key in base.keys() | ours.keys():
        was, now = base.get(key, _MISSING), ours.get(key, _MISSING)
        if now == was:
            continue
        edited = theirs.get(key, _MISSING)
        if edited == was or edited == now:
            if now is _MISSING:
                out.pop(key, None)
            else:
                out[key] = now
        elif isinstance(was, dict) and isinstance(now, dict) and isinstance(edited, dict):
            out[key] = rebase(was, now, edited, f"{path}{key}.")
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (was, now, edited)):
            out[key] = edited + (now - was)
        else:
            raise Conflict(f"both changed {path}{key}", details={"field": f"{path}{key}"})
    return out


def with_seq(entry: AuditEntry) -> dict[str, Any]:
    return {**entry.data["attack"], "seq": entry.seq}


def _server_stopping() -> ServerStopping:
    return ServerStopping(
        "the server stopped before this attack finished; nothing was applied. "
        "Send it again once reconnected: it is applied once"
    )


def _seed_plain(token: Token, plain: dict[str, Any]) -> None:
    """Give ``token`` the plain copy of its ``system`` it would otherwise make (``Token.plain``):
    ``plain``, which nothing else holds (the resolver's, unpickled here)."""
    object.__setattr__(token, "_plain", plain)


# Where a committed attack's seq goes in the JSON of its broadcasts when its commit publishes
# them (Outbox.publishing): a byte JSON never holds raw (orjson escapes it in strings).
_SEQ = b"\x00"


class _Already(Exception):
    """The request_id was resolved already (through another process)."""

    def __init__(self, entry: AuditEntry) -> None:
        super().__init__(entry.ref)
        self.entry = entry


class Attacks:
    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.prompter = Prompter(bridge.sio, bridge.store)
        self.odds_runner = OddsRunner()
        # Attacks in progress, so a stopping server can cut short those
        # still waiting for an answer (they commit nothing).
        self.running: set[asyncio.Task[Any]] = set()
        self.stopping = False

    async def cancel_running(self) -> None:
        """Cut short the attacks still running (a stopping server): each fails with the
        retryable ``server_stopping``, told to its requester and, when its steps were
        broadcast, to its table (``attack.failed``) before the connections drop."""
        self.stopping = True
        tasks = list(self.running)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    for runtime in list(self.bridge.tables.values()):
                        await runtime.outbox.drain()

    def _stopped(self, exc: BaseException) -> BaseException:
        """A cancellation by :meth:`cancel_running`, said as what it is; any other ``exc`` as is."""
        if self.stopping and isinstance(exc, asyncio.CancelledError):
            return _server_stopping()
        return exc

    # -- attack -------------------------------------------------------------------

    async def attack(self, caller: Caller, data: Any) -> dict[str, Any]:
        if self.stopping:  # its connections drop next: the resend goes to the server that comes back
            raise _server_stopping()
        request = self.bridge.messages.load(messages.AttackRequest, data)
        if not caller.is_gm:
            for name in GM_ONLY:
                if name in request:
                    raise Forbidden(f"only the GM may give {name}", details={"field": name})
        try:
            runtime = self._table_for(caller, request, "attack with it")
        except (NotFound, Forbidden):
            if not self.bridge.store.shared:
                raise
            # Another process may have just created the attacker or given it to the caller.
            await self.bridge.fresh(self.bridge.runtime(caller))
            runtime = self._table_for(caller, request, "attack with it")
        request_id = request.get("request_id")
        if request_id is None:
            return {"attack": await self._run(caller, runtime, request)}
        return await self._once(caller, runtime, request, request_id)

    def _table_for(self, caller: Caller, request: dict[str, Any], doing: str) -> TableRuntime:
        """The caller's table, once the ruleset exists and the caller may use the attacker."""
        self.bridge.host.ruleset(request["ruleset"])
        runtime = self.bridge.runtime(caller)
        attacker = runtime.tokens.get(request["attacker"])
        if attacker is None:
            raise NotFound(f"no token {request['attacker']!r} on this table", details={"token": request["attacker"]})
        require_owner(caller, attacker, doing)
        return runtime

    # -- odds ---------------------------------------------------------------------

    async def odds(self, caller: Caller, data: Any) -> dict[str, Any]:
        """The chances of an attack before it is rolled: exact where a model exists, else Monte Carlo.

        Read-only: it rolls nothing on the table and changes nothing. The work runs
        in a resolver process, bounded per user, per server and in time (:mod:`.pool`).
        """
        request = self.bridge.messages.load(messages.OddsRequest, data)
        runtime = self._table_for(caller, request, "ask the odds of its attack")
        request["packs"] = list(self.bridge.packs(runtime.info))  # the table's packs only
        return await self.odds_runner.run(self.bridge.resolvers, caller, runtime, request, dict(runtime.tokens))

    # -- what if ------------------------------------------------------------------

    async def _what_if(self, caller: Caller, data: Any) -> tuple[TableRuntime, dict[str, Any], AuditEntry, dict[str, Any]]:
        """The caller's table, the request, the logged attack and the plan of its what-if."""
        request = self.bridge.messages.load(messages.WhatIfRequest, data)
        runtime = self.bridge.runtime(caller)
        entries = await self.bridge.store.audit(runtime.id)
        entry = find_attack(entries, request["attack"])
        if not caller.is_gm and entry.user != caller.user:
            raise Forbidden(
                "a player asks what if only of their own attacks", details={"attack": request["attack"]}
            )
        plan = plan_what_if(
            self.bridge.host,
            entry,
            enable=request["with_"],
            disable=request["without"],
            answers=request["answers"],
            add_charms=request["add_charms"],
            remove_charms=request["remove_charms"],
            table_packs=self.bridge.packs(runtime.info),
        )
        plan["tokens"] = tokens_before(entries, entry.seq)
        return runtime, request, entry, plan

    async def what_if(self, caller: Caller, data: Any) -> dict[str, Any]:
        """``attack.whatif``: a logged attack again under its recorded dice with packs, Charms or
        answers changed, side by side with the logged one; to the requester only, nothing applied.
        The hooks run in an odds process (bounded per user and in time, like ``attack.odds``)."""
        runtime, _request, entry, plan = await self._what_if(caller, data)
        tokens = plan.pop("tokens")
        job = {"whatif": plan, "record": dict(entry.data["attack"])}
        done = await self.odds_runner.run(self.bridge.resolvers, caller, runtime, job, tokens)
        return {"whatif": done["odds"]}

    async def what_if_apply(self, caller: Caller, data: Any) -> dict[str, Any]:
        """``attack.whatif.apply`` (GM only): the what-if committed as a new attack on the tokens
        as they are now, with its own record (``whatif``: what it replays) and undo."""
        require_gm(caller, "apply a what-if")
        if self.stopping:
            raise _server_stopping()
        runtime, request, entry, plan = await self._what_if(caller, data)
        attack = {
            **plan["request"],
            "packs": plan["packs"],
            "whatif": {"of": entry.ref, "seq": entry.seq, **plan["changed"]},
        }
        request_id = request.get("request_id")
        if request_id is None:
            return {"attack": await self._run(caller, runtime, attack)}
        attack["request_id"] = request_id
        return await self._once(caller, runtime, attack, request_id)

    async def _once(
        self, caller: Caller, runtime: TableRuntime, request: dict[str, Any], request_id: str
    ) -> dict[str, Any]:
        mark = fingerprint(request)
        running = runtime.inflight.get(request_id)
        if running is not None:
            user, their_mark, future = running
            self._same(request_id, user, their_mark, caller.user, mark)
            return {"attack": await asyncio.shield(future), "retried": True}
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        # Registered before the first await, so a retry arriving meanwhile waits for this one.
        runtime.inflight[request_id] = (caller.user, mark, future)
        try:
            entry = await self.bridge.store.by_request(runtime.id, request_id)
            if entry is not None:
                self._same(request_id, entry.user, entry.data.get("fingerprint"), caller.user, mark)
                payload, retried = with_seq(entry), True
            else:
                try:
                    payload, retried = await self._run(caller, runtime, request, mark=mark), False
                except _Already as already:
                    entry = already.entry
                    self._same(request_id, entry.user, entry.data.get("fingerprint"), caller.user, mark)
                    payload, retried = with_seq(entry), True
            future.set_result(payload)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # waiting retries get it; nobody else needs to
            raise
        finally:
            del runtime.inflight[request_id]
        return {"attack": payload, "retried": retried}

    @staticmethod
    def _same(request_id: str, user: str, mark: str | None, caller_user: str, caller_mark: str) -> None:
        if user != caller_user or mark != caller_mark:
            raise Conflict(
                f"request_id {request_id!r} was already used for a different request",
                details={"request_id": request_id},
            )

    async def _run(
        self, caller: Caller, runtime: TableRuntime, request: dict[str, Any], *, mark: str | None = None
    ) -> codec.Fragment:
        """Resolve and commit the attack; its wire form (``attack.resolved``'s ``attack``), encoded."""
        task = asyncio.current_task()
        assert task is not None
        self.running.add(task)
        try:
            return await self._locked(caller, runtime, request, mark)
        except asyncio.CancelledError as exc:
            stopped = self._stopped(exc)
            if stopped is exc:
                raise
            task.uncancel()  # the requester gets an answer: server_stopping
            raise stopped from None
        finally:
            runtime.outbox.release(task)  # the hold on its last phase's broadcasts (_locked)
            self.running.discard(task)

    async def _locked(
        self, caller: Caller, runtime: TableRuntime, request: dict[str, Any], mark: str | None
    ) -> codec.Fragment:
        bridge = self.bridge
        # One attack at a time per table: in this process, and across processes (the lease,
        # which a commit keeps for the table's next attack when one waits here: see RedisStore).
        lock = runtime.attack_lock
        async with lock, bridge.store.lease(runtime.id, queued=lambda: lock.waiting > 0, with_locks=True) as lease:
            started = time.perf_counter()
            await runtime.outbox.drain()
            attack_id = new_id("atk")
            request_id = request.get("request_id")
            involved = [request["attacker"], *request["targets"]]
            # Over a shared store the attacker and targets are locked there too, so an edit
            # through another process is refused as one through this process is (``busy``);
            # the same step reads the revision the attack starts from and whether the
            # request_id was resolved through another process meanwhile.
            shared = bridge.store.shared
            locks = await bridge.store.lock_tokens(
                runtime.id, lease, attack_id, involved, request_id=request_id if shared else None,
                known=runtime.rev if shared else None,
            )
            rev = locks.revision if locks.revision is not None else getattr(lease, "revision", None)
            await bridge.fresh(runtime, rev=rev, locks=locks)
            if locks.landed is not None:
                raise _Already(locks.landed)
            seed, dice = request.get("seed"), request.get("dice")
            if seed is None and dice is None:
                seed = secrets.randbits(53)  # JSON clients keep integers exactly up to 2**53-1
            tokens = dict(runtime.tokens)
            attacker = tokens.get(request["attacker"])
            if attacker is None:
                raise NotFound(
                    f"no token {request['attacker']!r} on this table", details={"token": request["attacker"]}
                )
            require_owner(caller, attacker, "attack with it")
            about = {
                "id": attack_id,
                "ruleset": request["ruleset"],
                "attacker": request["attacker"],
                "targets": list(request["targets"]),
                "user": caller.user,
            }
            if "whatif" in request:  # an applied what-if: the attack it replays and what changed
                about["whatif"] = request["whatif"]
            # The hooks run in a resolver process (see pool.py), never on this loop.
            spec = {
                "ruleset": request["ruleset"],
                "args": {
                    "attacker": request["attacker"],
                    "targets": list(request["targets"]),
                    "declaration": request["declaration"],
                    "seed": seed,
                    "dice": dice,
                    "answers": request.get("answers"),
                    # Whose rolls are asked for as faces of real dice (attacker, targets, and
                    # any token a nested attack may bring in); the GM's scripted dice ask nobody.
                    "physical": (runtime.physical_tokens(tokens) or None) if dice is None else None,
                },
                # The installed packs it runs with: the table's (or an applied what-if's).
                "packs": request["packs"] if "packs" in request else list(bridge.packs(runtime.info)),
                # The resolver builds the attack's wire form (attackwire.attack_payload); it starts so.
                "wire": {"about": about, "table": caller.table, "request_id": request.get("request_id")},
            }
            resolvers = bridge.resolvers
            job = resolvers.job(runtime.id, spec, tokens, budget_of(runtime.info.settings))
            for token_id in involved:
                runtime.busy[token_id] = attack_id
            try:
                reply = await resolvers.begin(job)
                questions = 0
                while isinstance(reply, Asked):
                    decision = reply.decision
                    self._steps(runtime, about, job.sent - len(reply.steps), reply.steps)
                    # A retry of the request (after this process died) asks the same question again.
                    ident = f"{request_id}/{questions}" if request_id is not None else None
                    questions += 1
                    answer, how, asked = await self.prompter.ask(runtime, decision, about, ident)
                    reply = await resolvers.settle(job, answer, how)
                    if not isinstance(reply, Asked):
                        # The last phase: its decision.settled, steps and result (after the
                        # commit) go out together; _run releases the hold, whatever happens.
                        runtime.outbox.hold(asyncio.current_task())
                    await self.prompter.closed(runtime, asked, about, decision, how if isinstance(reply, Failed) else reply.how)
                if isinstance(reply, Failed):
                    self._steps(runtime, about, job.sent, reply.steps)
                    job.sent += len(reply.steps)
                    raise error_from_dict(reply.error)
                # The attack's wire form comes encoded (JSON bytes, without its seq): it is
                # written as is into the audit entry, the acknowledgement and attack.resolved.
                assert isinstance(reply, Done), reply
                encoded, changed, at, hit = reply.encoded, reply.changed, reply.at, reply.hit
                changes = self._changes(changed, tokens)
                async with runtime.write_lock:
                    # Tokens the attack changed but did not lock (neither attacker nor
                    # target, e.g. a warbeast taking transferred damage) may have been
                    # edited while a question was out: the attack's change goes on top.
                    encoded, changes = await self._rebase(runtime, encoded, changes, involved)
                    draft = AuditDraft(
                        kind="attack",
                        user=caller.user,
                        at=at,
                        ref=attack_id,
                        request_id=request.get("request_id"),
                        changes=changes,
                        # The fingerprint lets a retry of this request_id be told from a reuse.
                        data={"attack": codec.Fragment(encoded), "request": request, "fingerprint": mark},
                    )
                    # Over Redis the attack's broadcasts go out with its commit (its own script):
                    # one round trip less. Their JSON holds _SEQ where the entry's seq goes.
                    publish = runtime.outbox.publishing(
                        lambda: self._announced(codec.with_raw_field(encoded, "seq", _SEQ), changes), _SEQ
                    )
                    entry = await bridge.commit(runtime, draft, lease=lease, publish=publish)
            except BaseException as exc:
                resolvers.drop(job)
                if job.sent or job.settled:
                    # With its request_id: the card of the attack sent again (same request_id,
                    # a new attack id) takes this one's place.
                    failed = {"id": attack_id, "request_id": request.get("request_id"), **error_envelope(self._stopped(exc))}
                    runtime.outbox.put("attack.failed", failed)
                raise
            finally:
                for token_id in involved:
                    if runtime.busy.get(token_id) == attack_id:
                        del runtime.busy[token_id]
        encoded = codec.with_field(encoded, "seq", entry.seq)
        payload = codec.Fragment(encoded)
        announced = self._announced(encoded, changes)
        if publish is not None and publish.first is not None:
            runtime.outbox.put_published(announced, publish.first)
        else:
            for event, data in announced:
                runtime.outbox.put(event, data)
        if log.isEnabledFor(logging.INFO):  # the fields are built only for a log that keeps them
            log.info(
                "attack resolved",
                extra=fields(
                    table=runtime.id,
                    attack=attack_id,
                    user=caller.user,
                    ruleset=request["ruleset"],
                    hit=hit,
                    ms=round((time.perf_counter() - started) * 1000, 2),
                ),
            )
        return payload

    @staticmethod
    def _announced(encoded: bytes, changes: Mapping[str, TokenChange]) -> list[tuple[str, Any]]:
        """What a committed attack broadcasts: ``attack.resolved`` (``encoded``: the attack's wire
        form, with its seq; the steps that finished with it travel inside) and each ``token.updated``."""
        out: list[tuple[str, Any]] = [("attack.resolved", {"attack": codec.Fragment(encoded)})]
        for change in changes.values():
            if change.after is not None:
                pair = change.encoded  # (before, after) as the resolver encoded them
                wire = codec.Fragment(pair[1]) if pair is not None else token_wire(change.after)
                out.append(("token.updated", {"token": wire}))
        return out

    @staticmethod
    def _steps(runtime: TableRuntime, about: dict[str, Any], first: int, steps: list[dict[str, Any]]) -> None:
        """Broadcast the steps that finished while the attack waits on a decision (or failed)."""
        for offset, step in enumerate(steps):
            runtime.outbox.put(
                "attack.step", {**about, "attack": about["id"], "index": first + offset, "step": step}
            )

    @staticmethod
    def _changes(
        changed: Mapping[str, tuple[dict[str, Any], bytes, bytes]], tokens: Mapping[str, Token]
    ) -> dict[str, TokenChange]:
        """The attack's token changes: each changed token's new ``system`` (clamped and checked
        in the resolver, ``Host.changed_token``) on the token as it was, with the token's wire
        form before and after as the resolver encoded them (``TokenChange.encoded``)."""
        changes: dict[str, TokenChange] = {}
        for token_id, (system, before_json, after_json) in changed.items():
            before = tokens[token_id]
            after = Token(
                before.id, before.name, before.ruleset, system, ownership=before.ownership,
                version=before.version + 1, flags=before.flags,
            )
            _seed_plain(after, system)
            changes[token_id] = TokenChange(before=before, after=after, encoded=(before_json, after_json))
        return changes

    async def _rebase(
        self,
        runtime: TableRuntime,
        encoded: bytes,
        changes: dict[str, TokenChange],
        involved: list[str],
    ) -> tuple[bytes, dict[str, TokenChange]]:
        """``changes`` moved onto the current version of every unlocked token edited meanwhile.

        The attacker and targets are locked for the whole attack (``busy``); a
        token the rules reach beyond them is not, so a GM may edit it while a
        question is out. Its change is then re-applied to the token as it is now
        (:func:`rebase`): the edit stands, and the attack's effect — damage
        transferred, a counter spent — is added on top. A token deleted meanwhile,
        or a field both set to different non-numeric values, is a ``conflict``.
        """
        outside = [tid for tid, c in changes.items() if tid not in involved and c.before is not None]
        if not outside:
            return encoded, changes
        await self.bridge.fresh(runtime)  # re-read only where other processes write too
        moved = [
            tid
            for tid in outside
            if runtime.tokens.get(tid) is None or runtime.tokens[tid].version != changes[tid].before.version
        ]
        if not moved:
            return encoded, changes
        payload = codec.loads(encoded)
        changes = dict(changes)
        wire = dict(payload["tokens"])
        record_changes = dict(payload.get("changes") or {})
        host = self.bridge.host
        for tid in moved:
            change = changes[tid]
            assert change.before is not None and change.after is not None
            now = runtime.tokens.get(tid)
            if now is None:
                raise Conflict(
                    f"token {tid!r} was deleted while the attack was resolved; nothing was applied",
                    details={"token": tid},
                )
            try:
                merged = rebase(thaw(change.before.system), thaw(change.after.system), thaw(now.system))
                system = host.load_system(now.ruleset, merged)
            except (Conflict, InvalidRequest) as exc:
                raise Conflict(
                    f"token {tid!r} was edited while the attack was resolved and the attack's change"
                    " no longer applies; nothing was applied",
                    details={"token": tid, "reason": exc.message},
                ) from None
            after = Token(now.id, now.name, now.ruleset, system, ownership=now.ownership, version=now.version + 1)
            changes[tid] = TokenChange(before=now, after=after)
            wire[tid] = {"before": token_wire(now), "after": token_wire(after)}
            record_changes[tid] = {"before": thaw(now.system), "after": thaw(system)}
        return codec.encode({**payload, "tokens": wire, "changes": record_changes}), changes

    # -- history, get, undo -----------------------------------------------------------

    async def history(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.bridge.messages.load(messages.History, data)
        entries, following = await self.bridge.store.history(
            caller.table, limit=request["limit"], before=request.get("before")
        )
        items = []
        for entry in entries:
            item: dict[str, Any] = {
                "seq": entry.seq,
                "kind": entry.kind,
                "id": entry.ref,
                "user": entry.user,
                "at": entry.at,
            }
            if entry.kind == "attack":
                attack = entry.data["attack"]
                for key in ("ruleset", "attacker", "targets", "outcome", "ended"):
                    item[key] = attack.get(key)
            items.append(item)
        return {"attacks": items, "next": following}

    async def _entries(self, caller: Caller, attack_id: str) -> tuple[AuditEntry, AuditEntry | None]:
        entries = await self.bridge.store.by_ref(caller.table, attack_id)
        attack = next((e for e in entries if e.kind == "attack"), None)
        if attack is None:
            trimmed = await self.bridge.store.audit_trimmed(caller.table)
            if trimmed:
                # Its entry may be one the table no longer keeps: say so rather than "never was".
                raise NotFound(
                    f"no attack {attack_id!r} among the audit entries this table keeps (from seq {trimmed + 1};"
                    " older attacks went with the table's audit_keep and can no longer be looked up or undone)",
                    details={"attack": attack_id, "audit_trimmed": trimmed},
                )
            raise NotFound(f"no attack {attack_id!r} on this table", details={"attack": attack_id})
        undo = next((e for e in entries if e.kind == "undo"), None)
        return attack, undo

    @staticmethod
    def _undo_summary(undo: AuditEntry | None) -> dict[str, Any] | None:
        if undo is None:
            return None
        return {"seq": undo.seq, "user": undo.user, "at": undo.at}

    async def get(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.bridge.messages.load(messages.AttackRef, data)
        attack, undo = await self._entries(caller, request["id"])
        return {"attack": with_seq(attack), "undone": self._undo_summary(undo)}

    async def take_default(self, caller: Caller, data: Any) -> dict[str, Any]:
        """``decision.default``: the GM settles a question out now with the rules' default."""
        request = self.bridge.messages.load(messages.DecisionRef, data)
        require_gm(caller, "take a decision's default")
        if not await self.bridge.take_default(self.bridge.runtime(caller), request["attack"], request["key"]):
            raise NotFound(
                f"no question {request['key']!r} of attack {request['attack']!r} is waiting",
                details={"attack": request["attack"], "key": request["key"]},
            )
        return {"attack": request["attack"], "key": request["key"], "how": "default"}

    async def undo(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.bridge.messages.load(messages.AttackRef, data)
        require_gm(caller, "undo an attack")
        bridge = self.bridge
        runtime = bridge.runtime(caller)
        async with runtime.attack_lock, bridge.store.lease(runtime.id):
            attack, undone = await self._entries(caller, request["id"])
            if undone is not None:
                raise Conflict(
                    f"attack {request['id']!r} was already undone",
                    details={"attack": request["id"], "undone": self._undo_summary(undone)},
                )
            async with runtime.write_lock:
                await bridge.fresh(runtime)
                changes: dict[str, TokenChange] = {}
                moved = []
                for token_id, change in attack.changes.items():
                    was, now = change["before"], change["after"]
                    current = runtime.tokens.get(token_id)
                    if was is None or now is None or current is None or current.version != now["version"]:
                        moved.append(token_id)
                        continue
                    restored = Token(
                        token_id,
                        was["name"],
                        was["ruleset"],
                        was["system"],
                        ownership=was.get("ownership"),
                        version=current.version + 1,
                        flags=was.get("flags"),
                    )
                    changes[token_id] = TokenChange(before=current, after=restored)
                if moved:
                    raise Conflict(
                        "tokens changed since the attack; undo them by hand",
                        details={"attack": request["id"], "tokens": sorted(moved)},
                    )
                entry = await bridge.commit(
                    runtime,
                    AuditDraft(
                        kind="undo",
                        user=caller.user,
                        at=time.time(),
                        ref=request["id"],
                        changes=changes,
                        data={"attack": request["id"], "undoes": attack.seq},
                    ),
                )
        tokens = {
            tid: {"before": c.before.to_dict(), "after": c.after.to_dict()}
            for tid, c in changes.items()
            if c.before and c.after
        }
        undo = {"attack": request["id"], "seq": entry.seq, "user": caller.user, "at": entry.at, "tokens": tokens}
        runtime.outbox.put("attack.undone", {"undo": undo})
        for change in changes.values():
            assert change.after is not None
            runtime.outbox.put("token.updated", {"token": change.after.to_dict()})
        log.info("attack undone", extra=fields(table=runtime.id, attack=request["id"], user=caller.user))
        return {"undo": undo}
