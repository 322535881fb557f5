"""`SQLiteStore`: the append-only session log in SQLite (WAL), with full-text recall (FTS5).

Archived originals are rows of an ordinary table, indexed by (session, seq), so a
compaction's lookups cost the same however much the store holds; their words are indexed
by an FTS5 table that reads its text from there (external content), kept in step by every
write that archives (`_index_archived`).

The rows and the view are described in `compaction.store.base`. Each write is one
transaction, so a process killed at any point leaves the log as
it was before the write or after it, never between; the view read back is either the one
before a compaction or the one after it.

A new store is created private to its owner: directory 0700, files 0600.

One connection serves all threads behind a lock (the proxy runs compaction in worker
threads); WAL lets other processes read while one writes. This module must never decide
what to compact: it records what the compactor did.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from compaction.exceptions import StoreError
from compaction.store._sql import Connection, SQLStore, in_session
from compaction.store.base import RecallHit
from compaction.store.migrations import migrate

__all__ = ["BUSY_TIMEOUT_S", "SQLiteStore"]

# How long a writer waits for another process's write lock before giving up.
BUSY_TIMEOUT_S = 10.0


class SQLiteStore(SQLStore):
    """The SQLite session store. Thread-safe; see the module docstring."""

    _INSERT_SESSION = (
        "INSERT OR IGNORE INTO sessions (id, created_at, updated_at, agent, model, dialect, meta)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    # The list arrives as one JSON array (a view may keep more seqs than SQLite takes
    # parameters).
    _SEQ_IN = "seq IN (SELECT value FROM json_each(?))"
    _CONTAINS = "instr(lower(text), lower(?)) > 0"
    _INSERT_HANDLE = (
        "INSERT OR IGNORE INTO handles (session_id, handle, seq, data) VALUES (?, ?, ?, ?)"
    )

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        if self.path != ":memory:":
            _create_private(Path(self.path).expanduser())
        try:
            self._db = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,  # transactions are explicit: BEGIN … COMMIT
                check_same_thread=False,
            )
            _enable_wal(self._db)
            # NORMAL in WAL mode survives any process crash; only a power loss may lose the
            # last transactions (never corrupt the file).
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db)
        except sqlite3.DatabaseError as e:
            raise StoreError(f"cannot open the session store {self.path}: {e}") from e

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- the hooks of SQLStore ---------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the database's write lock before the first read, so the last seq
        # read cannot change before this transaction writes after it; writers in other
        # processes wait here, up to the busy timeout.
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:
                raise StoreError(f"the session store {self.path} is busy: {e}") from e
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.DatabaseError as e:
                raise StoreError(f"cannot read the session store {self.path}: {e}") from e

    def _snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        # Plain reads under the thread lock, which keeps this process's writers out. Rows are
        # only ever added, so the latest compaction read first and the messages read after it
        # make the view before any compaction another process records meanwhile.
        return self._reading()

    @staticmethod
    def _seq_list(seqs: list[int]) -> str:
        return json.dumps(seqs)

    def _word_hits(self, words: list[str], session_id: str | None, limit: int) -> list[RecallHit]:
        # FTS5: each word quoted, so nothing in it reads as an operator; `*` matches the words
        # it starts. bm25 is lower for better matches.
        match = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
        scope, params = in_session(session_id)
        rows = self._read(
            "SELECT session_id, seq, role, snippet(archive_words, 0, '[', ']', '…', 16),"
            " bm25(archive_words), archive.text FROM archive_words"
            " JOIN archive ON archive.id = archive_words.rowid WHERE archive_words MATCH ?"
            + scope
            + " ORDER BY bm25(archive_words) LIMIT ?",
            [match, *params, limit],
        )
        return [
            RecallHit(s, int(q), r, snip, -float(score), text)
            for s, q, r, snip, score, text in rows
        ]

    def _index_archived(self, db: Connection, session_id: str, seqs: list[int]) -> None:
        # The full-text index has external content: it learns of new rows only when told.
        db.execute(
            "INSERT INTO archive_words (rowid, text) SELECT id, text FROM archive"
            " WHERE session_id = ? AND " + self._SEQ_IN,
            (session_id, self._seq_list(seqs)),
        )

    def integrity(self) -> list[str]:
        """Problems SQLite finds in the file (empty when it is sound)."""
        rows = self._read("PRAGMA integrity_check")
        return [r[0] for r in rows if r[0] != "ok"]


def _create_private(path: Path) -> None:
    """Create the store's directory (0700) and file (0600) when they do not exist yet, so
    sessions (which quote the users' words) are readable by their owner only, whatever the
    umask. SQLite creates the `-wal` and `-shm` files with the database file's mode. An
    existing file or directory keeps the mode it has."""
    parent = path.parent
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the store directory {parent}: {e}") from e
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError as e:
        raise StoreError(f"cannot create the session store {path}: {e}") from e


def _enable_wal(db: sqlite3.Connection) -> None:
    """Switch a connection to WAL. Switching needs a moment of exclusive access, and SQLite
    does not wait for it (no busy handler), so when several processes create the same store
    at once the losers see "database is locked": try again until the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
