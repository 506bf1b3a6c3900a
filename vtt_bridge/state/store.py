"""The store interface every backend implements (SQLite, Redis).

A store keeps tables, their keys, their tokens and their append-only audit
log. Token rows change only through :meth:`Store.commit`, which writes a set
of token changes and the one audit entry describing them in a single
transaction, after checking that every token still has the version the change
was computed from — otherwise nothing is written and ``Conflict`` is raised.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ..engine.tokens import Token
from ..errors import Conflict
from .records import AuditDraft, AuditEntry, KeyInfo, TableInfo

__all__ = ["AUDIT_KEEP", "AUDIT_KEEPS", "BROADCAST_KEEP", "BROADCAST_KEEPS", "HISTORY_SCAN", "HistoryPage", "Locks", "StaleVersion", "Store", "locked", "stale"]

# Audit entries a table keeps by default (its ``audit_keep`` setting overrides it; 0: all).
AUDIT_KEEP = 1000
AUDIT_KEEPS = (0, 10_000_000)

# Batches of broadcasts a table's log keeps for processes catching up (a shared store;
# ``serve --broadcast-keep``), and the range that option takes.
BROADCAST_KEEP = 100
BROADCAST_KEEPS = (1, 100_000)

# The most audit entries one history call looks at (token edits between attacks included).
HISTORY_SCAN = 5000


class HistoryPage(NamedTuple):
    """One page of history: the entries, newest first, and the ``before`` of the next page."""

    entries: list[AuditEntry]
    next: int | None


class StaleVersion(Conflict):
    """A commit found a token at another version than its change was computed from."""


def stale(token_id: str, expected: int | None, found: int | None) -> StaleVersion:
    """The ``conflict`` raised when a token changed under a commit."""
    if found is None:
        message = f"token {token_id!r} no longer exists"
    elif expected is None:
        message = f"token {token_id!r} already exists"
    else:
        message = f"token {token_id!r} changed meanwhile (version {found}, expected {expected})"
    return StaleVersion(message, details={"token": token_id, "expected": expected, "version": found})


def locked(token_id: str, attack: str) -> Conflict:
    """The ``conflict`` raised when an edit touches a token an attack being resolved holds."""
    return Conflict(
        f"token {token_id!r} is in an attack being resolved; try again when it is over",
        details={"token": token_id, "attack": attack},
    )


class Locks(NamedTuple):
    """What taking an attack's token locks found (:meth:`Store.lock_tokens`)."""

    revision: int | None  # the table's revision once they were taken (None: not a shared store)
    landed: AuditEntry | None  # the entry the attack's request_id already landed as, if it did
    # With ``known`` (a shared store): what :meth:`Store.changed_since` answers for that revision.
    changed: tuple[int, dict[str, Token | None]] | None = None
    known: int | None = None


class Store(ABC):
    """Where tables, keys, tokens and the audit log live.

    :ivar shared: other server processes may write to this store too, so
        in-memory copies must be refreshed before they are trusted.
    """

    kind: str = ""
    shared: bool = False

    @abstractmethod
    async def open(self) -> None:
        """Connect and create the schema if needed."""

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def ping(self) -> None:
        """Raise if the store cannot be reached."""

    # -- tables and keys ----------------------------------------------------

    @abstractmethod
    async def create_table(self, table: TableInfo) -> None: ...

    @abstractmethod
    async def get_table(self, table_id: str) -> TableInfo | None: ...

    @abstractmethod
    async def list_tables(self) -> list[TableInfo]: ...

    @abstractmethod
    async def update_settings(self, table_id: str, settings: Mapping[str, Any]) -> TableInfo: ...

    @abstractmethod
    async def set_key(self, table_id: str, key: KeyInfo) -> None:
        """Store ``key`` for its user, replacing (revoking) the user's previous key."""

    @abstractmethod
    async def keys(self, table_id: str) -> list[KeyInfo]: ...

    @abstractmethod
    async def delete_key(self, table_id: str, user: str) -> bool:
        """Revoke ``user``'s key at the table; ``False`` when they had none."""

    # -- tokens and the audit log -------------------------------------------

    @abstractmethod
    async def tokens(self, table_id: str) -> dict[str, Token]: ...

    @abstractmethod
    async def commit(self, table_id: str, draft: AuditDraft, *, lease: Any = None, publish: Any = None) -> AuditEntry:
        """Apply ``draft.changes`` and append ``draft`` — all of it, or nothing.

        ``lease``: the table's attack lease held by the caller; a shared store may
        release it in the same round trip as a successful commit. ``publish``:
        broadcasts to publish with the commit (only the Redis store is given
        any: ``RedisStore.commit``; others get ``None``).

        :raises Conflict: a token is not at the version a change expects, or
            ``draft.request_id`` was already used on this table.
        """

    @abstractmethod
    async def by_request(self, table_id: str, request_id: str) -> AuditEntry | None: ...

    @abstractmethod
    async def by_ref(self, table_id: str, ref: str) -> list[AuditEntry]:
        """The entries about one attack (the attack, then its undo if any), oldest first."""

    @abstractmethod
    async def history(
        self, table_id: str, *, limit: int, before: int | None = None, kinds: tuple[str, ...] = ("attack", "undo")
    ) -> HistoryPage:
        """The newest ``limit`` entries of ``kinds`` with ``seq < before``, newest first.

        Bounded work whatever the arguments: at most :data:`HISTORY_SCAN` audit
        entries are looked at per call (a ``before`` past the end counts from the
        end). ``next`` is the ``before`` of the following page, ``None`` at the
        start of the log; a page may hold fewer than ``limit`` entries and still
        have a ``next`` when the scan stopped at its bound.
        """

    @abstractmethod
    async def since(
        self, table_id: str, after: int, *, limit: int, kinds: tuple[str, ...] = ("attack", "undo")
    ) -> list[AuditEntry]:
        """The oldest ``limit`` entries of ``kinds`` with ``seq > after``, oldest first (a resync)."""

    @abstractmethod
    async def last_seq(self, table_id: str) -> int:
        """The seq of the table's newest audit entry (0 when it has none)."""

    @abstractmethod
    async def audit(self, table_id: str) -> list[AuditEntry]:
        """The table's audit entries still kept, oldest first."""

    async def audit_trimmed(self, table_id: str) -> int:
        """The seq of the newest entry the table no longer keeps (its ``audit_keep``; 0: none dropped)."""
        return 0

    # -- broadcast sequence numbers (docs/protocol.md, "Broadcast order") --------
    #
    # The defaults serve a store that one process uses: a counter per table in
    # this process (a store may persist it, see SQLiteStore). A shared store
    # numbers, logs and publishes a batch in one atomic step (RedisStore).

    async def broadcast(self, table_id: str, channel: str, message: bytes, n: int) -> int:
        """Number ``n`` broadcasts of ``table_id`` (publishing ``message`` where shared); returns the first's seq."""
        counters = self.__dict__.setdefault("_broadcast_seqs", {})
        if table_id not in counters:
            counters[table_id] = await self.stored_broadcast_seq(table_id)
        first = counters[table_id] + 1
        counters[table_id] += n
        # The tables whose counter moved since a store that persists them last wrote them.
        self.__dict__.setdefault("_broadcast_seqs_moved", set()).add(table_id)
        return first

    def moved_broadcast_seqs(self) -> dict[str, int]:
        """The tables whose counter moved since :meth:`broadcast_seqs_stored`, with their newest
        seq: what a store that persists the counters writes (SQLiteStore, with each commit)."""
        moved = self.__dict__.get("_broadcast_seqs_moved")
        if not moved:
            return {}
        counters = self.__dict__["_broadcast_seqs"]
        return {table_id: counters[table_id] for table_id in moved}

    def broadcast_seqs_stored(self) -> None:
        """What :meth:`moved_broadcast_seqs` answered is written (its transaction committed; no
        await between the two)."""
        self.__dict__.get("_broadcast_seqs_moved", set()).clear()

    async def stored_broadcast_seq(self, table_id: str) -> int:
        """Where a table's numbering continues after a restart (0: from the start)."""
        return 0

    async def broadcast_seq(self, table_id: str) -> int:
        """The newest ``broadcast_seq`` assigned to ``table_id`` (0: none yet)."""
        counters = self.__dict__.setdefault("_broadcast_seqs", {})
        if table_id not in counters:
            counters[table_id] = await self.stored_broadcast_seq(table_id)
        return int(counters[table_id])

    async def broadcasts_since(self, table_id: str, after: int, limit: int = 1000) -> list[tuple[int, str]] | None:
        """The published batches numbered after ``after`` as ``(first seq, message)``, oldest first.

        ``None`` when some of them are no longer kept (the caller tells its
        clients to resync). A store that publishes nothing keeps nothing.
        """
        return None

    # -- several server processes (a shared store only) -------------------------
    #
    # A store that only one process uses needs none of this: the defaults say
    # "nothing changes behind your back, and every connection is local".

    async def revision(self, table_id: str) -> int | None:
        """A number that changes whenever the table's tokens or settings do (``None``: not shared)."""
        return None

    def committed_revision(self, table_id: str) -> int | None:
        """The revision this process's last commit to the table left it at (``None``: not shared)."""
        return None

    async def changed_since(self, table_id: str, rev: int) -> tuple[int, dict[str, Token | None]] | None:
        """The table's revision now and each token changed since revision ``rev`` (``None``:
        deleted), when the store can tell; ``None`` when it cannot (the settings changed too,
        or too much since): read the table whole."""
        return None

    def lease(
        self, table_id: str, *, queued: Callable[[], bool] | None = None, with_locks: bool = False
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        """Hold the table's attack lease: one attack at a time per table, across processes.

        ``queued()`` says whether this process has the table's next attack waiting
        (a shared store may then keep the lease for it). ``with_locks``: the holder's
        first step is :meth:`lock_tokens`, and a shared store may take the lease only
        then, with the locks (nothing read before that step may count on holding it)."""
        return contextlib.nullcontext()

    async def lock_tokens(
        self,
        table_id: str,
        lease: Any,
        attack: str,
        token_ids: list[str],
        *,
        request_id: str | None = None,
        known: int | None = None,
    ) -> Locks:
        """Lock ``token_ids`` for ``attack``, whose process holds the table's ``lease``.

        Until the attack's commit (or until the lease is given back, or lapses
        with a process that died), a commit of any other change to one of those
        tokens, through any process, raises ``Conflict`` naming the attack
        (:func:`locked`). ``request_id``: also look up whether it landed
        already, in the same step; ``known``: the revision this process's copy
        of the table is at, to read in the same step what changed since
        (``Locks.changed``, as :meth:`changed_since` answers). A store that only
        one process uses needs none of it (the server's own ``busy`` map refuses
        those edits).
        """
        return Locks(None, None)

    async def join(self, table_id: str, sid: str, user: str, node: str) -> None:
        """Record that connection ``sid`` of ``user`` is open on server process ``node``."""

    async def leave(self, table_id: str, sid: str) -> None:
        """Forget connection ``sid``."""

    async def sessions(self, table_id: str) -> dict[str, str] | None:
        """Every open connection to the table on a live process, ``{sid: user}`` (``None``: not shared)."""
        return None

    async def heartbeat(self, node: str, ttl: float) -> None:
        """Say that server process ``node`` is alive for the next ``ttl`` seconds."""

    async def announce(self, node: str, packs: Mapping[str, str | None], ttl: float = 6.0) -> None:
        """Join the deployment as server process ``node`` running ``packs`` (name → version).

        A shared store refuses (``Conflict``) when a live process runs other packs:
        every process of a deployment must resolve a request the same way.
        """

    async def depart(self, table_id: str, sid: str, reason: str | None) -> None:
        """Forget connection ``sid``, noting for a while why it ended (socket.io's reason),
        for a process that asked it a question (:meth:`departed`)."""
        await self.leave(table_id, sid)

    async def departed(self, table_id: str, sids: list[str]) -> dict[str, str]:
        """Why each of ``sids`` that ended lately ended (``""``: no reason was given)."""
        return {}
