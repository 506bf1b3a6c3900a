"""The bridge's services: tables, keys and tokens (attacks live in :mod:`.attacks`).

Everything here takes a :class:`~.session.Caller` and a raw payload, checks
the payload with its message schema, checks the caller's rights, and returns
the acknowledgement's fields — or raises a ``VTTError``, which the namespace
turns into an error acknowledgement. Nothing here knows any ruleset: token
``system`` data is checked by whatever ruleset the host has under that id.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import socketio

from ..engine.tokens import Token, thaw
from ..errors import Conflict, Forbidden, InvalidRequest, NotFound
from ..plugins import Host
from ..state import RedisStore, messages
from ..state.keys import GM_USER, digest, match_key, new_id, new_key
from ..state.records import AuditDraft, AuditEntry, KeyInfo, TableInfo, TokenChange
from ..state.store import Locks, StaleVersion, Store, locked
from .attacks import Attacks
from .broadcast import Broadcaster
from .bus import RedisBus
from .describe import describe_rulesets
from .logs import fields
from .session import Caller, require_gm, require_owner
from .tables import BROADCASTS, TableRuntime, pending
from .pool import Pool

__all__ = ["Bridge", "merge"]

log = logging.getLogger("vtt_bridge.server")

T = TypeVar("T")

# How many times a token edit is made over a shared store when attacks through other
# processes keep committing the token between its read and its commit (Bridge._edit), and
# the pause before each new try (times the tries so far: 0.2 s in all at most).
_EDIT_TRIES = 20
_EDIT_PAUSE = 0.001

# Seconds a server process counts as alive after its last heartbeat.
_NODE_TTL = 6.0


def merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``patch`` merged in, nested objects merged key by key (as Foundry's updates)."""
    out = dict(base)
    for key, value in patch.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = merge(current, value)
        else:
            out[key] = thaw(value)
    return out


class Bridge:
    """The server's state and services, shared by every connection.

    :param host: the plugin host (rulesets, schemas, engine).
    :param store: where everything is kept.
    :param sio: the socket server, used to broadcast and to ask deciders.
    :param decision_timeout: seconds to wait for a decision when the table
        has no setting of its own.
    :param resolvers: how many resolver processes run the hooks (started by
        :meth:`start`; see :mod:`.pool`).
    :param default_packs: the installed packs a table runs with until its GM
        chooses (``None``: every installed pack); an unknown one is refused here.
    """

    def __init__(
        self,
        host: Host,
        store: Store,
        sio: socketio.AsyncServer,
        *,
        decision_timeout: float = 30.0,
        resolvers: int = 2,
        default_packs: tuple[str, ...] | None = None,
    ) -> None:
        self.host = host
        self.default_packs = host.check_packs(default_packs, field="default_packs") if default_packs is not None else None
        self.store = store
        self.sio = sio
        self.decision_timeout = decision_timeout
        self.tables: dict[str, TableRuntime] = {}
        self.callers: dict[str, Caller] = {}
        self._loading: dict[str, asyncio.Lock] = {}
        self._rulesets: dict[tuple[str, ...], dict[str, Any]] = {}
        self.broadcast = Broadcaster(sio, store)
        self.messages = messages.Messages()
        self.resolvers = Pool(host, size=resolvers)
        # This process among several sharing a store (see pool.py).
        self.node = getattr(sio.manager, "host_id", None) or new_id("node")
        self._heartbeat: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self.attacks = Attacks(self)
        prompter = self.attacks.prompter
        prompter.local_user = lambda sid: caller.user if (caller := self.callers.get(sid)) is not None else None
        if isinstance(sio.manager, RedisBus):
            sio.manager.commands["decision.default"] = self._default_from_elsewhere
            # Questions put to connections on other processes, and their answers (see prompts.py).
            sio.manager.commands["decision.ask"] = prompter.asked_here
            sio.manager.commands["decision.answer"] = prompter.answered_there
            sio.manager.commands["decision.cancel"] = prompter.cancelled_there

    async def start(self) -> None:
        await self.resolvers.start()
        await self.attacks.odds_runner.start(self.resolvers)  # the pool's odds lane (pool.py)
        if self.store.shared:
            await self.store.heartbeat(self.node, _NODE_TTL)
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat(), name="heartbeat")

    async def _beat(self) -> None:
        """Keep this process listed as alive, so its connections count as deciders."""
        while True:
            await asyncio.sleep(_NODE_TTL / 3)
            try:
                await self.store.heartbeat(self.node, _NODE_TTL)
            except Exception:
                log.warning("heartbeat to the store failed", exc_info=True)

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- tables and connections -----------------------------------------------

    async def table(self, table_id: str) -> TableRuntime:
        """The loaded table, loading it from the store on first use."""
        runtime = self.tables.get(table_id)
        if runtime is not None:
            return runtime
        lock = self._loading.setdefault(table_id, asyncio.Lock())
        async with lock:
            runtime = self.tables.get(table_id)
            if runtime is None:
                rev = await self.store.revision(table_id)
                info = await self.store.get_table(table_id)
                if info is None:
                    raise NotFound(f"no table {table_id!r}", details={"table": table_id})
                tokens = await self.store.tokens(table_id)
                runtime = TableRuntime(info, tokens, self.broadcast, decision_timeout=self.decision_timeout)
                runtime.rev = rev
                self.tables[table_id] = runtime
        self._loading.pop(table_id, None)
        return runtime

    async def fresh(self, runtime: TableRuntime, *, rev: int | None = None, locks: Locks | None = None) -> TableRuntime:
        """The table as the store has it, when other processes may have written to it.

        One read of the table's revision (none when ``rev`` was just read,
        as taking the attack lease does); the tokens and settings are re-read
        only when it moved since this process last read or wrote them — only
        the tokens changed since, when the store can tell (another process's
        attacks), else the whole table. ``locks``: an attack's token locks,
        taken with what changed since the revision this process knew then
        (not read again while that is still the one it knows).
        """
        store = self.store
        if store.shared:
            if rev is None:
                rev = await store.revision(runtime.id)
            if rev != runtime.rev and runtime.rev is not None:
                if locks is not None and locks.known is not None and locks.known == runtime.rev:
                    changed = locks.changed
                else:
                    changed = await store.changed_since(runtime.id, runtime.rev)
                if changed is not None:
                    rev, tokens = changed
                    for token_id, token in tokens.items():
                        if token is None:
                            runtime.tokens.pop(token_id, None)
                        else:
                            runtime.tokens[token_id] = token
                    runtime.rev = rev
            if rev != runtime.rev:
                info = await store.get_table(runtime.id)
                if info is not None:
                    runtime.info = info
                runtime.replace_tokens(await store.tokens(runtime.id))
                runtime.rev = rev
        return runtime

    async def authenticate(self, sid: str, auth: Any) -> tuple[Caller, TableRuntime, list[str], bool]:
        """Check ``auth = {table, key, events?, batch?}`` and register the connection.

        Returns the caller, its table, the broadcast events it receives
        (``events`` if given, else all) and whether it receives them in
        ``batch`` messages (asked for, and this server is one process: over a
        shared store the broadcasts travel one by one through the bus). An
        unknown table and a wrong key get the same answer, so a key cannot be
        used to discover which tables exist.
        """
        if (
            not isinstance(auth, Mapping)
            or not isinstance(auth.get("table"), str)
            or not isinstance(auth.get("key"), str)
        ):
            raise InvalidRequest(
                "connect with auth: {table, key}",
                details={"auth": ["Expected an object with string fields table and key."]},
            )
        events = auth.get("events", BROADCASTS)
        if not isinstance(events, (list, tuple)) or not all(isinstance(e, str) and e in BROADCASTS for e in events):
            raise InvalidRequest(
                "auth.events lists the broadcasts to receive",
                details={"events": [f"Each must be one of: {', '.join(BROADCASTS)}."]},
            )
        batch = auth.get("batch", False)
        if not isinstance(batch, bool):
            raise InvalidRequest("auth.batch is true or false", details={"batch": ["Not a valid boolean."]})
        refused = Forbidden("the key does not open this table", details={})
        table_id, key = auth["table"], auth["key"]
        if not table_id or len(table_id) > 100 or not key or len(key) > 200:
            raise refused
        keys = await self.store.keys(table_id)
        found = match_key(key, keys)
        if found is None:
            raise refused
        runtime = await self.table(table_id)
        caller = Caller(sid, table_id, found.user, found.digest)
        self.callers[sid] = caller
        runtime.join(caller)
        if self.store.shared:
            await self.store.join(table_id, sid, found.user, self.node)
        return caller, runtime, list(dict.fromkeys(events)), batch and not self.store.shared

    async def pending(self, runtime: TableRuntime, user: str) -> list[dict[str, Any]]:
        """The questions out at the table that were put to ``user``, oldest first (``table.sync``'s ``pending``).

        One process: the ones it asks. Several on one Redis: every process's,
        as noted in the store when asked (one read).
        """
        store = self.store
        if not isinstance(store, RedisStore):
            return runtime.pending_for(user)
        now = time.time()
        out = [entry for entry in (await store.questions(runtime.id)).values() if entry["deadline"] > now]
        out.sort(key=lambda entry: entry["deadline"])
        return [pending(e["payload"], e["users"], e["deadline"] - now) for e in out if user in e["users"]]

    async def take_default(self, runtime: TableRuntime, attack_id: str, key: str) -> bool:
        """``decision.default``: settle a question out now with the rules' default; ``False``: none such is out.

        A question another process asks (several on one Redis) is found in the
        store and the command is carried there over the bus: that process
        settles it as if the GM were connected to it, unless it was settled
        first (``decision.settled`` says how).
        """
        if runtime.take_default(attack_id, key):
            return True
        store, bus = self.store, self.sio.manager
        if not isinstance(store, RedisStore) or not isinstance(bus, RedisBus):
            return False
        entry = (await store.questions(runtime.id)).get(f"{attack_id}/{key}")
        if entry is None or entry["deadline"] <= time.time():
            return False
        bus.command(runtime.room, "decision.default", {"table": runtime.id, "attack": attack_id, "key": key})
        return True

    def _default_from_elsewhere(self, data: Any) -> None:
        """Another process passed on a GM's ``decision.default``: settle the question if it is this process's."""
        runtime = self.tables.get(data["table"])
        if runtime is not None:
            runtime.take_default(data["attack"], data["key"])

    def leave(self, sid: str, reason: str | None = None) -> Caller | None:
        caller = self.callers.pop(sid, None)
        if caller is not None:
            runtime = self.tables.get(caller.table)
            if runtime is not None:
                runtime.leave(sid, reason)
            if self.store.shared:
                self._later(self.store.depart(caller.table, sid, reason))
        return caller

    def caller(self, sid: str) -> Caller:
        caller = self.callers.get(sid)
        if caller is None:
            raise Forbidden("this connection is not signed in to a table", details={})
        return caller

    def runtime(self, caller: Caller) -> TableRuntime:
        return self.tables[caller.table]

    async def close(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        for runtime in self.tables.values():
            await runtime.outbox.close()
        await self.attacks.prompter.close()
        await self.resolvers.close()  # the odds lane's processes too

    # -- table events ------------------------------------------------------------

    def packs(self, info: TableInfo) -> tuple[str, ...]:
        """The installed packs active at a table: its GM's choice (a pack since uninstalled left
        out), else the server's default (``serve --default-packs``), else every installed pack."""
        installed = self.host.packs()
        chosen = info.packs
        if chosen is None:
            return self.default_packs if self.default_packs is not None else installed
        return tuple(name for name in installed if name in chosen)

    def table_host(self, info: TableInfo) -> Host:
        """The host a table's attacks and odds run through: its rulesets and active packs."""
        return self.host.for_packs(self.packs(info))

    def describe(self, runtime: TableRuntime) -> dict[str, Any]:
        """A table as ``table.get`` and ``table.updated`` show it: its settings (``packs``: the
        active packs), and each installed pack with its version and whether it is active."""
        described = runtime.describe()
        active = self.packs(runtime.info)
        described["settings"]["packs"] = list(active)
        versions = {p.name: p.version for p in self.host.plugins()}
        described["packs"] = [
            {"name": name, "version": versions.get(name), "active": name in active} for name in self.host.packs()
        ]
        described["ruleset_plugins"] = list(self.host.ruleset_plugins())
        return described

    def rulesets(self, caller: Caller | None = None) -> dict[str, Any]:
        """``rulesets.list``: the rulesets as the caller's table runs them (declarables, plugins and
        steps of its active packs only; ``packs``: which are active)."""
        active = self.packs(self.runtime(caller).info) if caller is not None else self.host.packs()
        found = self._rulesets.get(active)
        if found is None:
            found = self._rulesets[active] = {
                **describe_rulesets(self.host.for_packs(active)),
                "packs": {"active": list(active), "installed": list(self.host.packs())},
            }
        return found

    async def table_get(self, caller: Caller, data: Any) -> dict[str, Any]:
        self.messages.load(messages.Empty, data)
        runtime = self.runtime(caller)
        return {"table": self.describe(runtime), "user": caller.user, "role": caller.role, "users": runtime.users()}

    async def table_update(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.messages.load(messages.TableUpdate, data)
        require_gm(caller, "change the table's settings")
        if "packs" in request:
            request["packs"] = list(self.host.check_packs(request["packs"]))
        runtime = self.runtime(caller)
        if "physical_dice_players" in request:
            # The per-user switches change one by one; the others stay (None forgets one).
            players = {**runtime.info.settings.get("physical_dice_players", {}), **request["physical_dice_players"]}
            request["physical_dice_players"] = {user: on for user, on in players.items() if on is not None}
        runtime.info = await self.store.update_settings(caller.table, request)
        described = self.describe(runtime)
        runtime.outbox.put("table.updated", {"table": described})
        return {"table": described}

    async def key_create(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.messages.load(messages.KeyCreate, data)
        require_gm(caller, "create player keys")
        user = request["user"]
        if user == GM_USER or user == "default":
            raise InvalidRequest(
                f"{user!r} is reserved", details={"user": [f"{user!r} is reserved; choose another user name."]}
            )
        key = await issue_key(self.store, caller.table, user)
        log.info("player key issued", extra=fields(table=caller.table, user=user, by=caller.user))
        return {"user": user, "key": key}

    # -- token events ------------------------------------------------------------

    def _token(self, runtime: TableRuntime, token_id: str) -> Token:
        token = runtime.tokens.get(token_id)
        if token is None:
            raise NotFound(f"no token {token_id!r} on this table", details={"token": token_id})
        return token

    def _not_busy(self, runtime: TableRuntime, token_id: str) -> None:
        attack = runtime.busy.get(token_id)
        if attack is not None:
            raise locked(token_id, attack)

    async def commit(
        self, runtime: TableRuntime, draft: AuditDraft, *, lease: Any = None, publish: Any = None
    ) -> AuditEntry:
        """Commit ``draft`` and bring the table's token mirror up to date (``lease``: see ``Store.commit``;
        ``publish``: broadcasts the Redis store publishes with the commit, see ``RedisStore.commit``)."""
        try:
            entry = await self.store.commit(runtime.id, draft, lease=lease, publish=publish)
        except StaleVersion:
            # Another process (a second server, or a CLI import) wrote first:
            # re-read, so the next try sees its change.
            runtime.replace_tokens(await self.store.tokens(runtime.id))
            raise
        runtime.apply(draft.changes.values())
        rev = self.store.committed_revision(runtime.id)
        if rev is not None and runtime.rev is not None and rev == runtime.rev + 1:
            runtime.rev = rev  # nobody else wrote meanwhile: the mirror is current
        return entry

    async def token_list(self, caller: Caller, data: Any) -> dict[str, Any]:
        self.messages.load(messages.Empty, data)
        runtime = await self.fresh(self.runtime(caller))
        return {"tokens": [runtime.tokens[k].to_dict() for k in sorted(runtime.tokens)]}

    async def token_get(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.messages.load(messages.TokenRef, data)
        runtime = await self.fresh(self.runtime(caller))
        return {"token": self._token(runtime, request["id"]).to_dict()}

    async def token_create(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.messages.load(messages.TokenCreate, data)
        require_gm(caller, "create tokens")
        runtime = self.runtime(caller)
        token = build_token(self.host, request)
        async with runtime.write_lock:
            await self.fresh(runtime)
            if token.id in runtime.tokens:
                raise Conflict(f"token {token.id!r} already exists", details={"token": token.id})
            await self._commit_token(runtime, caller, "token.create", None, token)
        wire = token.to_dict()
        runtime.outbox.put("token.created", {"token": wire})
        return {"token": wire}

    async def _commit_token(
        self, runtime: TableRuntime, caller: Caller, kind: str, before: Token | None, after: Token | None
    ) -> None:
        """Commit one token's change with its audit record (a GM's or owner's edit)."""
        token_id = (after or before).id
        draft = AuditDraft(
            kind=kind, user=caller.user, at=time.time(), changes={token_id: TokenChange(before=before, after=after)}
        )
        await self.commit(runtime, draft)

    async def _edit(self, edit: Callable[[], Awaitable[T]], *, versioned: bool = False) -> T:
        """Run ``edit`` (a read-check-commit of a token edit) and return what it does.

        Over a shared store an attack through another process may commit the
        token between this process's read and its commit (the attack's locks
        keep edits out only while it resolves): the edit is then made again on
        the token as it is now, as it would have been had it come a moment
        later — unless it named the ``version`` it applies to (``versioned``).
        """
        for tries in itertools.count(1):
            try:
                return await edit()
            except StaleVersion:
                if versioned or not self.store.shared or tries >= _EDIT_TRIES:
                    raise
                await asyncio.sleep(_EDIT_PAUSE * tries)
        raise AssertionError("unreachable")

    async def token_update(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.messages.load(messages.TokenUpdate, data)
        return await self._edit(lambda: self._token_update(caller, request), versioned="version" in request)

    async def _token_update(self, caller: Caller, request: dict[str, Any]) -> dict[str, Any]:
        runtime = self.runtime(caller)
        async with runtime.write_lock:
            await self.fresh(runtime)
            token = self._token(runtime, request["id"])
            require_owner(caller, token, "edit it")
            if "ownership" in request:
                require_gm(caller, "change a token's ownership")
            self._not_busy(runtime, token.id)
            expected = request.get("version")
            if expected is not None and expected != token.version:
                raise Conflict(
                    f"token {token.id!r} is at version {token.version}, not {expected}",
                    details={"token": token.id, "expected": expected, "version": token.version},
                )
            system = thaw(token.system)
            if "system" in request:
                system = self.host.load_system(token.ruleset, merge(system, request["system"]))
            flags = thaw(token.flags)
            if "flags" in request:
                flags = self.host.load_flags(token.ruleset, merge(flags, request["flags"]))
            name = request.get("name", token.name)
            ownership = request.get("ownership", thaw(token.ownership))
            if (
                name == token.name
                and ownership == thaw(token.ownership)
                and system == thaw(token.system)
                and flags == thaw(token.flags)
            ):
                return {"token": token.to_dict()}
            after = Token(
                token.id, name, token.ruleset, system, ownership=ownership, version=token.version + 1, flags=flags
            )
            await self._commit_token(runtime, caller, "token.update", token, after)
        wire = after.to_dict()
        runtime.outbox.put("token.updated", {"token": wire})
        return {"token": wire}

    async def token_delete(self, caller: Caller, data: Any) -> dict[str, Any]:
        request = self.messages.load(messages.TokenRef, data)
        return await self._edit(lambda: self._token_delete(caller, request))

    async def _token_delete(self, caller: Caller, request: dict[str, Any]) -> dict[str, Any]:
        runtime = self.runtime(caller)
        async with runtime.write_lock:
            await self.fresh(runtime)
            token = self._token(runtime, request["id"])
            require_owner(caller, token, "delete it")
            self._not_busy(runtime, token.id)
            await self._commit_token(runtime, caller, "token.delete", token, None)
        runtime.outbox.put("token.deleted", {"id": token.id})
        return {"token": token.to_dict(), "deleted": True}


def build_token(host: Host, request: Mapping[str, Any]) -> Token:
    """A new token (version 1) from a ``token.create`` payload, its ``system`` and ``flags`` checked."""
    ruleset = request["ruleset"]
    host.ruleset(ruleset)
    return host.validate_token(
        Token(
            request.get("id") or new_id("tok"),
            request["name"],
            ruleset,
            request["system"],
            ownership=request.get("ownership") or {},
            version=1,
            flags=request.get("flags"),
        )
    )


async def create_table(store: Store, name: str, *, settings: Mapping[str, Any] | None = None) -> tuple[TableInfo, str]:
    """Create a table and its GM key; returns the table and the key (shown once, stored hashed)."""
    table = TableInfo(id=new_id("t"), name=name, created=time.time(), settings=dict(settings or {}))
    await store.create_table(table)
    key = await issue_key(store, table.id, GM_USER)
    return table, key


async def issue_key(store: Store, table_id: str, user: str) -> str:
    """A new key for ``user`` at the table, replacing any previous one."""
    if await store.get_table(table_id) is None:
        raise NotFound(f"no table {table_id!r}", details={"table": table_id})
    key = new_key()
    await store.set_key(table_id, KeyInfo(user=user, digest=digest(key), created=time.time()))
    return key
