"""`SQLiteStore`: the append-only session log in SQLite (WAL), with full-text recall (FTS5).

The rows and the view are described in `compaction.store.base`. Each write is one
transaction, so a process killed at any point leaves the log as
it was before the write or after it, never between; the view read back is either the one
before a compaction or the one after it.

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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compaction.compactor import Receipt
from compaction.exceptions import SessionNotFoundError, StoreError
from compaction.messages import Message
from compaction.serialize import message_to_dict
from compaction.store.base import (
    CompactionRecord,
    RecallHit,
    SessionInfo,
    assemble_view,
    check_compaction,
    check_expected_last,
    check_session_id,
    compaction_record,
    dumps,
    load_message,
    new_session_id,
    query_words,
    session_info,
    substring_snippet,
    view_entries,
)
from compaction.store.migrations import migrate
from compaction.store.text import fingerprint, searchable_text

__all__ = ["BUSY_TIMEOUT_S", "SQLiteStore"]

# How long a writer waits for another process's write lock before giving up.
BUSY_TIMEOUT_S = 10.0


class SQLiteStore:
    """The SQLite session store. Thread-safe; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        if self.path != ":memory:":
            parent = Path(self.path).expanduser().parent
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create the store directory {parent}: {e}") from e
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

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
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

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as e:
                raise StoreError(f"cannot read the session store {self.path}: {e}") from e

    # -- sessions --------------------------------------------------------------------------

    def create_session(
        self,
        session_id: str | None = None,
        *,
        agent: str | None = None,
        model: str | None = None,
        dialect: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """A new, empty session; an id is generated when none is given."""
        sid = session_id or new_session_id()
        check_session_id(sid)
        now = time.time()
        with self._write() as db:
            exists = db.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone()
            if exists:
                raise StoreError(f"session {sid!r} already exists")
            db.execute(
                "INSERT INTO sessions (id, created_at, updated_at, agent, model, dialect, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (sid, now, now, agent, model, dialect, json.dumps(dict(meta or {}))),
            )
        return self.session(sid)

    def ensure_session(
        self,
        session_id: str,
        *,
        agent: str | None = None,
        model: str | None = None,
        dialect: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """The session with this id, created when missing."""
        check_session_id(session_id)
        now = time.time()
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO sessions"
                " (id, created_at, updated_at, agent, model, dialect, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, now, now, agent, model, dialect, json.dumps(dict(meta or {}))),
            )
        return self.session(session_id)

    def session(self, session_id: str) -> SessionInfo:
        rows = self._read(
            "SELECT id, created_at, updated_at, agent, model, dialect, meta,"
            " (SELECT count(*) FROM messages m WHERE m.session_id = s.id),"
            " (SELECT count(*) FROM compactions c WHERE c.session_id = s.id)"
            " FROM sessions s WHERE id = ?",
            (session_id,),
        )
        if not rows:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
        return session_info(rows[0])

    def sessions(self, limit: int = 50) -> list[SessionInfo]:
        """Sessions, most recently updated first."""
        rows = self._read(
            "SELECT id, created_at, updated_at, agent, model, dialect, meta,"
            " (SELECT count(*) FROM messages m WHERE m.session_id = s.id),"
            " (SELECT count(*) FROM compactions c WHERE c.session_id = s.id)"
            " FROM sessions s ORDER BY updated_at DESC, id LIMIT ?",
            (limit,),
        )
        return [session_info(r) for r in rows]

    # -- messages --------------------------------------------------------------------------

    def append(
        self, session_id: str, messages: Sequence[Message], *, expected_last: int | None = None
    ) -> list[int]:
        """Log messages at the end of the session; return their seqs. With `expected_last`,
        only if the session still ends there (`LogConflictError` otherwise)."""
        if not messages:
            return []
        rows = [(m.role, fingerprint(m), dumps(message_to_dict(m))) for m in messages]
        now = time.time()
        with self._write() as db:
            last = self._last_seq(db, session_id)
            check_expected_last(session_id, expected_last, last)
            seqs = list(range(last + 1, last + 1 + len(rows)))
            db.executemany(
                "INSERT INTO messages (session_id, seq, role, digest, data, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (session_id, s, r, d, data, now)
                    for s, (r, d, data) in zip(seqs, rows, strict=True)
                ],
            )
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
        return seqs

    def digests(self, session_id: str) -> list[str]:
        """The fingerprint of every logged message, in order."""
        rows = self._read(
            "SELECT digest FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [d for (d,) in rows]

    def messages(self, session_id: str) -> list[tuple[int, Message]]:
        """Every logged message with its seq, in order (the full, uncompacted history)."""
        self.session(session_id)
        rows = self._read(
            "SELECT seq, data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [(seq, load_message(data, session_id, seq)) for seq, data in rows]

    def message(self, session_id: str, seq: int) -> Message:
        """The exact original message `seq` of the session."""
        rows = self._read(
            "SELECT data FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
        )
        if not rows:
            self.session(session_id)
            raise SessionNotFoundError(f"session {session_id!r} has no message {seq}")
        return load_message(rows[0][0], session_id, seq)

    # -- compactions -----------------------------------------------------------------------

    def record_compaction(
        self,
        session_id: str,
        *,
        view: Sequence[Message | int],
        replaced: Sequence[int],
        receipt: Receipt,
        after_seq: int | None = None,
    ) -> int:
        """Log one compaction: the view after it, the seqs it replaced (archived for recall)
        and its receipt. `after_seq` is the last logged message the compaction saw (default:
        the last one logged). Returns the compaction's number (1, 2, … per session)."""
        entries = view_entries(view)
        summary = "\n\n".join(receipt.summaries)
        now = time.time()
        with self._write() as db:
            last = self._last_seq(db, session_id)
            seen = check_compaction(
                session_id, last=last, after_seq=after_seq, view=entries, replaced=replaced
            )
            (number,) = db.execute(
                "SELECT coalesce(max(number), 0) + 1 FROM compactions WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            db.execute(
                "INSERT INTO compactions (session_id, number, after_seq, view, replaced,"
                " summary, tokens_before, tokens_after, receipt, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    number,
                    seen,
                    dumps(entries),
                    json.dumps(sorted(set(replaced))),
                    summary,
                    receipt.tokens_before,
                    receipt.tokens_after,
                    dumps(receipt.to_dict(include_archive=False)),
                    now,
                ),
            )
            archived = {
                seq
                for (seq,) in db.execute(
                    "SELECT seq FROM archive WHERE session_id = ?", (session_id,)
                )
            }
            fresh = sorted(set(replaced) - archived)
            for seq in fresh:
                (data,) = db.execute(
                    "SELECT data FROM messages WHERE session_id = ? AND seq = ?",
                    (session_id, seq),
                ).fetchone()
                message = load_message(data, session_id, seq)
                db.execute(
                    "INSERT INTO archive (text, session_id, seq, role) VALUES (?, ?, ?, ?)",
                    (searchable_text(message), session_id, seq, message.role),
                )
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
        return int(number)

    def compactions(self, session_id: str) -> list[CompactionRecord]:
        self.session(session_id)
        rows = self._read(
            "SELECT number, after_seq, view, replaced, summary, tokens_before, tokens_after,"
            " receipt, created_at FROM compactions WHERE session_id = ? ORDER BY number",
            (session_id,),
        )
        return [compaction_record(session_id, row) for row in rows]

    def view(self, session_id: str) -> tuple[tuple[Message, ...], tuple[int | None, ...]]:
        """The model-visible messages and their seqs (None for messages a compaction made):
        the latest compaction's view, then every message logged after it."""
        self.session(session_id)
        with self._lock:
            latest = self._db.execute(
                "SELECT number, after_seq, view, replaced, summary, tokens_before,"
                " tokens_after, receipt, created_at FROM compactions WHERE session_id = ?"
                " ORDER BY number DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            after = 0 if latest is None else int(latest[1])
            refs: set[int] = set()
            record = None
            if latest is not None:
                record = compaction_record(session_id, latest)
                refs = {v for v in record.view if isinstance(v, int)}
            kept = dict(
                self._db.execute(
                    "SELECT seq, data FROM messages WHERE session_id = ? AND seq IN "
                    "(SELECT value FROM json_each(?))",
                    (session_id, json.dumps(sorted(refs))),
                ).fetchall()
            )
            tail = self._db.execute(
                "SELECT seq, data FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, after),
            ).fetchall()
        return assemble_view(session_id, record, kept, tail)

    # -- recall ----------------------------------------------------------------------------

    def recall(
        self, query: str, *, session_id: str | None = None, limit: int = 5
    ) -> list[RecallHit]:
        """Search everything compacted away (in one session, or all): every word of the
        query must match (prefixes of words too); when no word-level match exists, the query
        is looked for as a substring. Best matches first."""
        needle = query.strip()
        if not needle:
            return []
        scope = "" if session_id is None else " AND session_id = ?"
        params: list[Any] = [] if session_id is None else [session_id]
        words = query_words(query)
        if words:
            match = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
            rows = self._read(
                "SELECT session_id, seq, role, snippet(archive, 0, '[', ']', '…', 16),"
                " bm25(archive), text FROM archive WHERE archive MATCH ?"
                + scope
                + " ORDER BY bm25(archive) LIMIT ?",
                [match, *params, limit],
            )
            hits = [
                RecallHit(s, int(q), r, snip, -float(score), text)
                for s, q, r, snip, score, text in rows
            ]
            if hits:
                return hits
        # No word matched (or the query has no words, only punctuation such as `": "`).
        rows = self._read(
            "SELECT session_id, seq, role, text FROM archive WHERE instr(lower(text), lower(?))"
            + scope
            + " ORDER BY session_id, seq LIMIT ?",
            [needle, *params, limit],
        )
        return [
            RecallHit(s, int(q), r, substring_snippet(text, needle), 0.0, text)
            for s, q, r, text in rows
        ]

    # -- helpers ---------------------------------------------------------------------------

    def _last_seq(self, db: sqlite3.Connection, session_id: str) -> int:
        row = db.execute(
            "SELECT (SELECT 1 FROM sessions WHERE id = ?),"
            " (SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?)",
            (session_id, session_id),
        ).fetchone()
        if row[0] is None:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
        return int(row[1])

    def integrity(self) -> list[str]:
        """Problems SQLite finds in the file (empty when it is sound)."""
        rows = self._read("PRAGMA integrity_check")
        return [r[0] for r in rows if r[0] != "ok"]


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
