"""The embedded store: one SQLite file in WAL mode.

The server uses one connection from the event-loop thread. Every statement is
a short indexed read or a small transaction (tens of microseconds at these
sizes), which is cheaper than handing the work to a thread and back; WAL
mode lets the ``vtt-bridge table`` command write keys from another process
meanwhile. ``synchronous=NORMAL`` keeps a committed transaction through a
crash of the process (the WAL is in the OS before the ack goes out); pass
``synchronous="FULL"`` to also survive losing power, at an fsync per commit.
Checkpoints (copying the WAL into the database file, with an fsync) run in a
thread of their own on their own connection, twice a second, instead of
inside whichever commit crosses SQLite's automatic threshold: the event loop
never waits for the disk.

The audit table refuses UPDATE through a trigger, and DELETE of any entry
above its table's ``audit_trimmed`` mark: entries are appended, and leave only
from the oldest end, when a commit takes its table past its ``audit_keep``
(the commit raises the mark, then deletes up to it — an index range on
``(table_id, seq)``; in batches of a 64th of ``audit_keep``, so up to that
many more entries stay for a while). A table's ``audit_count`` (entries
kept) moves with each commit, so no commit counts the log. Since a table's newest entry is
never dropped, the next rowid is always one past the highest ever written and
``seq`` needs no ``AUTOINCREMENT``, which spares each commit the write of
SQLite's ``sqlite_sequence`` table (stores made before keep their
``AUTOINCREMENT``; both number the same way). An entry's request_id and ref
go with it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..engine.tokens import Token
from ..errors import Conflict, NotFound
from .records import AuditDraft, AuditEntry, KeyInfo, TableInfo, dumps
from .store import AUDIT_KEEP, HISTORY_SCAN, HistoryPage, Store, stale

__all__ = ["SQLiteStore"]

log = logging.getLogger("vtt_bridge.state")

# Seconds between two checkpoints of the WAL (see the module docstring).
CHECKPOINT_INTERVAL = 0.5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created REAL NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',
    broadcast_seq INTEGER NOT NULL DEFAULT 0,
    audit_keep INTEGER,
    audit_count INTEGER NOT NULL DEFAULT 0,
    audit_trimmed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS keys (
    table_id TEXT NOT NULL REFERENCES tables(id),
    user TEXT NOT NULL,
    digest TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (table_id, user)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tokens (
    table_id TEXT NOT NULL REFERENCES tables(id),
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    ruleset TEXT NOT NULL,
    ownership TEXT NOT NULL,
    system TEXT NOT NULL,
    version INTEGER NOT NULL,
    flags TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (table_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL REFERENCES tables(id),
    kind TEXT NOT NULL,
    user TEXT NOT NULL,
    at REAL NOT NULL,
    ref TEXT,
    request_id TEXT,
    changes TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_table ON audit (table_id, seq);
CREATE INDEX IF NOT EXISTS audit_by_ref ON audit (table_id, ref) WHERE ref IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS audit_by_request ON audit (table_id, request_id) WHERE request_id IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"""

# Created after the columns they read exist (see SQLiteStore.open).
_TRIGGERS = """
DROP TRIGGER IF EXISTS audit_no_delete;
CREATE TRIGGER IF NOT EXISTS audit_trim_only BEFORE DELETE ON audit
    WHEN OLD.seq > (SELECT audit_trimmed FROM tables WHERE id = OLD.table_id)
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only; only entries past audit_keep leave'); END;
CREATE TRIGGER IF NOT EXISTS audit_trimmed_rises BEFORE UPDATE OF audit_trimmed ON tables
    WHEN NEW.audit_trimmed < OLD.audit_trimmed
    BEGIN SELECT RAISE(ABORT, 'audit_trimmed only rises'); END;
"""

# Entries one commit drops beyond its own, at most: a table whose audit_keep was
# lowered a long way sheds its surplus over several commits, none of them long.
TRIM_STEP = 1000

# A table holds up to audit_keep >> TRIM_BATCH_SHIFT entries past its audit_keep
# before they go together (see SQLiteStore._trim).
TRIM_BATCH_SHIFT = 6

_INSERT_COLUMNS = "table_id, kind, user, at, ref, request_id, changes, data"
_AUDIT_COLUMNS = "seq, " + _INSERT_COLUMNS


def _entry(row: tuple) -> AuditEntry:
    seq, table_id, kind, user, at, ref, request_id, changes, data = row
    return AuditEntry(
        seq=seq,
        table=table_id,
        kind=kind,
        user=user,
        at=at,
        ref=ref,
        request_id=request_id,
        changes=json.loads(changes),
        data=json.loads(data),
    )


class SQLiteStore(Store):
    """Tables, keys, tokens and the audit log in one SQLite file.

    :param path: the database file (``":memory:"`` for a throwaway store).
    :param synchronous: SQLite's ``synchronous`` pragma in WAL mode.
    :param audit_keep: audit entries a table keeps unless its ``audit_keep``
        setting says otherwise (0: all).
    """

    kind = "sqlite"
    shared = False

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", audit_keep: int = AUDIT_KEEP) -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"unknown synchronous mode {synchronous!r}")
        self.audit_keep = audit_keep
        self.path = str(path)
        self.synchronous = synchronous.upper()
        self._db: sqlite3.Connection | None = None
        # Token snapshots by (table, id) with the version they were built at:
        # an unchanged row is not parsed and frozen again.
        self._snapshots: dict[tuple[str, str], Token] = {}
        self._batch: list[tuple[str, AuditDraft, asyncio.Future[AuditEntry]]] = []
        self._checkpoints: tuple[threading.Thread, threading.Event] | None = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the store is not open")
        return self._db

    async def open(self) -> None:
        if self._db is not None:
            return
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self.synchronous}")
        db.execute("PRAGMA busy_timeout=5000")
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(_SCHEMA)
        if "flags" not in {row[1] for row in db.execute("PRAGMA table_info(tokens)")}:
            db.execute("ALTER TABLE tokens ADD COLUMN flags TEXT NOT NULL DEFAULT '{}'")  # stores made before flags
        columns = {row[1] for row in db.execute("PRAGMA table_info(tables)")}
        if "broadcast_seq" not in columns:
            # The last broadcast_seq numbered, written with each commit and at close (stores made before it: 0).
            db.execute("ALTER TABLE tables ADD COLUMN broadcast_seq INTEGER NOT NULL DEFAULT 0")
        if "audit_count" not in columns:
            # Stores made before audit_keep: each table's setting and count, once (and
            # once only, should another process open the store at the same moment).
            db.execute("BEGIN IMMEDIATE")
            if "audit_count" not in {row[1] for row in db.execute("PRAGMA table_info(tables)")}:
                db.execute("ALTER TABLE tables ADD COLUMN audit_keep INTEGER")
                db.execute("ALTER TABLE tables ADD COLUMN audit_count INTEGER NOT NULL DEFAULT 0")
                db.execute("ALTER TABLE tables ADD COLUMN audit_trimmed INTEGER NOT NULL DEFAULT 0")
                db.execute("UPDATE tables SET audit_keep = json_extract(settings, '$.audit_keep')")
                db.execute(
                    "UPDATE tables SET audit_count = (SELECT COUNT(*) FROM audit WHERE audit.table_id = tables.id)"
                )
            db.execute("COMMIT")
        db.executescript(_TRIGGERS)
        if self.path != ":memory:":
            db.execute("PRAGMA wal_autocheckpoint=0")
            stop = threading.Event()
            thread = threading.Thread(target=self._checkpoint, args=(stop,), name="sqlite checkpoints", daemon=True)
            thread.start()
            self._checkpoints = (thread, stop)
        self._db = db

    def _checkpoint(self, stop: threading.Event) -> None:
        """Copy the WAL into the database file now and then (a thread; see the module docstring)."""
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA busy_timeout=5000")
            while not stop.wait(CHECKPOINT_INTERVAL):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error:
                    log.warning("WAL checkpoint failed; trying again", exc_info=True)
        finally:
            db.close()

    async def stored_broadcast_seq(self, table_id: str) -> int:
        row = self.db.execute("SELECT broadcast_seq FROM tables WHERE id = ?", (table_id,)).fetchone()
        return int(row[0]) if row is not None else 0

    def _write_broadcast_seqs(self) -> None:
        """Write the broadcast_seq counters of the tables whose counter moved (inside a transaction).

        Only those: a look at every table's counter on each commit batch cost 5% of the
        event loop at 1,500 tables. They count as written once the transaction commits
        (``broadcast_seqs_stored``); one rolled back leaves them for the next.
        """
        moved = self.moved_broadcast_seqs()
        if moved:
            self.db.executemany("UPDATE tables SET broadcast_seq = ? WHERE id = ?", [(q, t) for t, q in moved.items()])

    async def close(self) -> None:
        if self._db is not None:
            with self._transaction():
                self._write_broadcast_seqs()
            self.broadcast_seqs_stored()
        if self._checkpoints is not None:
            thread, stop = self._checkpoints
            self._checkpoints = None
            stop.set()
            thread.join(timeout=10)
        if self._db is not None:
            self._db.close()
            self._db = None
        self._snapshots.clear()

    async def ping(self) -> None:
        self.db.execute("SELECT 1").fetchone()

    # -- tables and keys ----------------------------------------------------

    async def create_table(self, table: TableInfo) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT INTO tables (id, name, created, settings, audit_keep) VALUES (?, ?, ?, ?, ?)",
                (table.id, table.name, table.created, dumps(dict(table.settings)), table.settings.get("audit_keep")),
            )

    async def get_table(self, table_id: str) -> TableInfo | None:
        row = self.db.execute("SELECT id, name, created, settings FROM tables WHERE id = ?", (table_id,)).fetchone()
        return self._table(row) if row else None

    async def list_tables(self) -> list[TableInfo]:
        rows = self.db.execute("SELECT id, name, created, settings FROM tables ORDER BY created, id").fetchall()
        return [self._table(r) for r in rows]

    @staticmethod
    def _table(row: tuple) -> TableInfo:
        return TableInfo(id=row[0], name=row[1], created=row[2], settings=json.loads(row[3]))

    async def update_settings(self, table_id: str, settings: Mapping[str, Any]) -> TableInfo:
        with self._transaction():
            table = await self.get_table(table_id)
            if table is None:
                raise NotFound(f"no table {table_id!r}", details={"table": table_id})
            merged = {**table.settings, **settings}
            self.db.execute(
                "UPDATE tables SET settings = ?, audit_keep = ? WHERE id = ?",
                (dumps(merged), merged.get("audit_keep"), table_id),
            )
        return TableInfo(id=table.id, name=table.name, created=table.created, settings=merged)

    async def set_key(self, table_id: str, key: KeyInfo) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO keys (table_id, user, digest, created) VALUES (?, ?, ?, ?)",
                (table_id, key.user, key.digest, key.created),
            )

    async def delete_key(self, table_id: str, user: str) -> bool:
        with self._transaction():
            cursor = self.db.execute("DELETE FROM keys WHERE table_id = ? AND user = ?", (table_id, user))
        return cursor.rowcount > 0

    async def keys(self, table_id: str) -> list[KeyInfo]:
        rows = self.db.execute("SELECT user, digest, created FROM keys WHERE table_id = ?", (table_id,)).fetchall()
        return [KeyInfo(user=u, digest=d, created=c) for u, d, c in rows]

    # -- tokens and the audit log -------------------------------------------

    async def tokens(self, table_id: str) -> dict[str, Token]:
        rows = self.db.execute(
            "SELECT id, name, ruleset, ownership, system, version, flags FROM tokens WHERE table_id = ? ORDER BY id",
            (table_id,),
        ).fetchall()
        out = {}
        snapshots = self._snapshots
        for token_id, name, ruleset, ownership, system, version, flags in rows:
            cached = snapshots.get((table_id, token_id))
            if cached is None or cached.version != version:
                cached = Token(
                    token_id,
                    name,
                    ruleset,
                    json.loads(system),
                    ownership=json.loads(ownership),
                    version=version,
                    flags=json.loads(flags),
                )
                snapshots[(table_id, token_id)] = cached
            out[token_id] = cached
        return out

    async def commit(self, table_id: str, draft: AuditDraft, *, lease: Any = None, publish: Any = None) -> AuditEntry:
        """Commit ``draft`` (see :meth:`Store.commit`), in one transaction with the others that arrive together.

        Commits requested during one turn of the event loop (several tables'
        attacks finishing at once) are written by one ``BEGIN IMMEDIATE`` …
        ``COMMIT``, each inside its own savepoint, so one that fails its version
        check changes nothing and the others still commit. Each caller is
        answered only after the transaction holding its commit is committed.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[AuditEntry] = loop.create_future()
        if not self._batch:
            loop.call_soon(self._flush)
        self._batch.append((table_id, draft, future))
        return await future

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        db = self.db
        done: list[tuple[asyncio.Future[AuditEntry], Any]] = []
        try:
            # Every commit of the batch in one transaction; as they nearly always all
            # succeed, without a savepoint each. If one fails (a stale version, a reused
            # request_id), the transaction is rolled back and the batch written again,
            # each commit inside its own savepoint, so the others still commit.
            try:
                with self._transaction():
                    for table_id, draft, future in batch:
                        done.append((future, self._write(table_id, draft)))
                    self._write_broadcast_seqs()
                self.broadcast_seqs_stored()
            except Exception as first:  # a write or the COMMIT: either way nothing was written
                if len(batch) == 1 or len(done) == len(batch):
                    done = [(future, first) for _table, _draft, future in batch]
                else:
                    done = []
                    with self._transaction():
                        for n, (table_id, draft, future) in enumerate(batch):
                            db.execute(f"SAVEPOINT c{n}")
                            try:
                                entry = self._write(table_id, draft)
                            except Exception as failure:
                                db.execute(f"ROLLBACK TO c{n}")
                                done.append((future, failure))
                            else:
                                done.append((future, entry))
                            db.execute(f"RELEASE c{n}")
                        self._write_broadcast_seqs()
                    self.broadcast_seqs_stored()
        except Exception as exc:  # the COMMIT itself failed: nothing of the batch was written
            for _table, _draft, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (table_id, draft, _future), (future, result) in zip(batch, done, strict=True):
            if future.cancelled():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
                continue
            for token_id, change in draft.changes.items():
                if change.after is None:
                    self._snapshots.pop((table_id, token_id), None)
                else:
                    self._snapshots[(table_id, token_id)] = change.after
            future.set_result(result)

    def _write(self, table_id: str, draft: AuditDraft) -> AuditEntry:
        db = self.db
        changes = {}
        for token_id, change in draft.changes.items():
            before, after = change.before, change.after
            # The version check is part of each write: a row that is not
            # at the expected version is not touched, and rowcount says so.
            if before is None:
                assert after is not None
                cursor = db.execute(
                    "INSERT OR IGNORE INTO tokens (table_id, id, name, ruleset, ownership, system, version, flags)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        table_id,
                        token_id,
                        after.name,
                        after.ruleset,
                        dumps(after.ownership),
                        dumps(after.system),
                        after.version,
                        dumps(after.flags),
                    ),
                )
            elif after is None:
                cursor = db.execute(
                    "DELETE FROM tokens WHERE table_id = ? AND id = ? AND version = ?",
                    (table_id, token_id, before.version),
                )
            elif (
                after.name == before.name
                and after.ruleset == before.ruleset
                and (after.ownership is before.ownership or after.ownership == before.ownership)
                and (after.flags is before.flags or after.flags == before.flags)
            ):
                # Only the stats changed (an attack's change): the other columns stay as they are.
                cursor = db.execute(
                    "UPDATE tokens SET system = ?, version = ? WHERE table_id = ? AND id = ? AND version = ?",
                    (dumps(after.system), after.version, table_id, token_id, before.version),
                )
            else:
                cursor = db.execute(
                    "UPDATE tokens SET name = ?, ruleset = ?, ownership = ?, system = ?, version = ?, flags = ?"
                    " WHERE table_id = ? AND id = ? AND version = ?",
                    (
                        after.name,
                        after.ruleset,
                        dumps(after.ownership),
                        dumps(after.system),
                        after.version,
                        dumps(after.flags),
                        table_id,
                        token_id,
                        before.version,
                    ),
                )
            if cursor.rowcount != 1:
                row = db.execute(
                    "SELECT version FROM tokens WHERE table_id = ? AND id = ?", (table_id, token_id)
                ).fetchone()
                raise stale(token_id, before.version if before is not None else None, row[0] if row else None)
            changes[token_id] = change.wire()
        try:
            cursor = db.execute(
                f"INSERT INTO audit ({_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    table_id,
                    draft.kind,
                    draft.user,
                    draft.at,
                    draft.ref,
                    draft.request_id,
                    dumps(changes),
                    dumps(dict(draft.data)),
                ),
            )
        except sqlite3.IntegrityError as exc:
            if draft.request_id is not None and "request_id" in str(exc):
                raise Conflict(
                    f"request_id {draft.request_id!r} was already used on this table",
                    details={"request_id": draft.request_id},
                ) from None
            raise
        seq = cursor.lastrowid
        self._trim(table_id)
        return AuditEntry(
            seq=seq,
            table=table_id,
            kind=draft.kind,
            user=draft.user,
            at=draft.at,
            ref=draft.ref,
            request_id=draft.request_id,
            changes=changes,
            data=dict(draft.data),
        )

    def _trim(self, table_id: str) -> None:
        """Count the entry just written; past the table's audit_keep, drop the oldest (in the commit's transaction)."""
        db = self.db
        count, keep, trimmed = db.execute(
            "UPDATE tables SET audit_count = audit_count + 1 WHERE id = ?"
            " RETURNING audit_count, COALESCE(audit_keep, ?), audit_trimmed",
            (table_id, self.audit_keep),
        ).fetchone()
        # Dropped in batches of a 64th of audit_keep (one statement each costs as much as
        # the rows it frees): up to that many more entries stay for a while.
        if keep <= 0 or count <= keep + (keep >> TRIM_BATCH_SHIFT):
            return
        drop = min(count - keep, TRIM_STEP + 1 + (keep >> TRIM_BATCH_SHIFT))
        # The newest entry to drop: ``drop`` steps along the (table_id, seq) index from the mark.
        (bound,) = db.execute(
            "SELECT seq FROM audit WHERE table_id = ? AND seq > ? ORDER BY seq LIMIT 1 OFFSET ?",
            (table_id, trimmed, drop - 1),
        ).fetchone()
        db.execute(
            "UPDATE tables SET audit_trimmed = ?, audit_count = audit_count - ? WHERE id = ?", (bound, drop, table_id)
        )
        db.execute("DELETE FROM audit WHERE table_id = ? AND seq > ? AND seq <= ?", (table_id, trimmed, bound))

    async def audit_trimmed(self, table_id: str) -> int:
        row = self.db.execute("SELECT audit_trimmed FROM tables WHERE id = ?", (table_id,)).fetchone()
        return int(row[0]) if row is not None else 0

    async def by_request(self, table_id: str, request_id: str) -> AuditEntry | None:
        row = self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM audit WHERE table_id = ? AND request_id = ?", (table_id, request_id)
        ).fetchone()
        return _entry(row) if row else None

    async def by_ref(self, table_id: str, ref: str) -> list[AuditEntry]:
        rows = self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM audit WHERE table_id = ? AND ref = ? ORDER BY seq", (table_id, ref)
        ).fetchall()
        return [_entry(r) for r in rows]

    async def history(
        self, table_id: str, *, limit: int, before: int | None = None, kinds: tuple[str, ...] = ("attack", "undo")
    ) -> HistoryPage:
        # The newest HISTORY_SCAN entries below ``before`` (by the (table_id, seq) index), filtered by kind.
        marks = ",".join("?" * len(kinds))
        bound = before if before is not None else 2**62
        window = "SELECT * FROM audit WHERE table_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
        rows = self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM ({window}) WHERE kind IN ({marks}) ORDER BY seq DESC LIMIT ?",
            (table_id, bound, HISTORY_SCAN, *kinds, limit),
        ).fetchall()
        entries = [_entry(r) for r in rows]
        if len(entries) == limit:
            nxt: int | None = entries[-1].seq
        else:
            # Fewer than asked: either the scan reached the start of the log, or its bound.
            (lowest, count) = self.db.execute(
                f"SELECT MIN(seq), COUNT(*) FROM ({window})", (table_id, bound, HISTORY_SCAN)
            ).fetchone()
            nxt = lowest if count == HISTORY_SCAN else None
        if nxt is not None and not self.db.execute(
            "SELECT 1 FROM audit WHERE table_id = ? AND seq < ? LIMIT 1", (table_id, nxt)
        ).fetchone():
            nxt = None
        return HistoryPage(entries, nxt)

    async def since(
        self, table_id: str, after: int, *, limit: int, kinds: tuple[str, ...] = ("attack", "undo")
    ) -> list[AuditEntry]:
        marks = ",".join("?" * len(kinds))
        rows = self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM audit WHERE table_id = ? AND seq > ? AND kind IN ({marks})"
            " ORDER BY seq LIMIT ?",
            (table_id, after, *kinds, limit),
        ).fetchall()
        return [_entry(r) for r in rows]

    async def last_seq(self, table_id: str) -> int:
        row = self.db.execute("SELECT MAX(seq) FROM audit WHERE table_id = ?", (table_id,)).fetchone()
        return int(row[0] or 0)

    async def audit(self, table_id: str) -> list[AuditEntry]:
        rows = self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM audit WHERE table_id = ? ORDER BY seq", (table_id,)
        ).fetchall()
        return [_entry(r) for r in rows]

    # -- helpers ---------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db)


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception."""

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")
