"""What `SQLiteStore` and `PostgresStore` share: every `SessionStore` method written once, in
the SQL both databases speak, and the runner of their migrations.

The shared statements use `?` placeholders (sqlite3's; the PostgreSQL store's connection
turns them into psycopg's `%s`). Where the two databases really differ, a backend fills in
one of these hooks:

- `_write()`: one write transaction, taken so that writers of one session, in any process,
  take turns (SQLite: `BEGIN IMMEDIATE`, the database's write lock; PostgreSQL: the
  session's row, locked by the UPDATE in `_touch_session`);
- `_reading()` and `_snapshot()`: one read, and the reads of a view;
- `_INSERT_SESSION`: a session's row, unless one with its id exists;
- `_INSERT_HANDLE`: an archive handle's row, unless the session has that handle already;
- `_SEQ_IN` and `_seq_list()`: "seq is one of these", with the list as one parameter;
- `_CONTAINS`: "`text` contains the parameter, in any case";
- `_word_hits()`: the full-text search of `recall`, and `_index_archived()`: the words of
  newly archived originals indexed for it;
- `_storable()`: text as the database can hold it.

This module must never import a database driver: every backend imports it.
"""

from __future__ import annotations

import dataclasses
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, LiteralString, Protocol, Self

from compaction.compactor import Receipt
from compaction.exceptions import SessionNotFoundError, StoreError
from compaction.messages import Message
from compaction.recall import handles_in
from compaction.serialize import message_from_dict, message_to_dict
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
from compaction.store.text import fingerprint, searchable_text

__all__ = ["Connection", "SQLStore", "apply_migrations", "in_session"]

_SESSION_COLUMNS: LiteralString = (
    "SELECT id, created_at, updated_at, agent, model, dialect, meta,"
    " (SELECT count(*) FROM messages m WHERE m.session_id = s.id),"
    " (SELECT count(*) FROM compactions c WHERE c.session_id = s.id),"
    " requests, last_tokens_before, last_tokens_after,"
    " (SELECT coalesce(sum(tokens_before), 0) FROM compactions c WHERE c.session_id = s.id),"
    " (SELECT coalesce(sum(tokens_after), 0) FROM compactions c WHERE c.session_id = s.id)"
    " FROM sessions s"
)
_COMPACTION_COLUMNS: LiteralString = (
    "SELECT number, after_seq, view, replaced, summary, tokens_before, tokens_after,"
    " receipt, created_at FROM compactions"
)


class Rows(Protocol):
    """What a statement returns (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    """A connection taking the shared statements: `sqlite3.Connection` as it is, psycopg's
    behind `compaction.store.postgres`'s placeholder rewrite."""

    def execute(self, sql: LiteralString, params: Sequence[Any] = ..., /) -> Rows: ...

    def executemany(self, sql: LiteralString, params: Iterable[Sequence[Any]], /) -> object: ...


class SQLStore(ABC):
    """A `SessionStore` over a SQL database; each method does what `SessionStore` says.
    Subclasses connect, fill in the hooks (see the module docstring) and check `integrity`."""

    #: Where the store is, for messages: a file path, or a URL without its password.
    path: str

    _INSERT_SESSION: ClassVar[LiteralString]
    _INSERT_HANDLE: ClassVar[LiteralString]
    _SEQ_IN: ClassVar[LiteralString]
    _CONTAINS: ClassVar[LiteralString]

    # -- hooks -----------------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def integrity(self) -> list[str]: ...

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One transaction that commits when the block ends, or rolls back on an error."""

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Connection]:
        """The connection for one read; a database error in the block is a `StoreError`."""

    @abstractmethod
    def _snapshot(self) -> AbstractContextManager[Connection]:
        """The connection for the reads of one view, which must see it before a compaction
        or after it, never a mix."""

    @staticmethod
    @abstractmethod
    def _seq_list(seqs: list[int]) -> object:
        """`seqs` as the one parameter of `_SEQ_IN`."""

    @abstractmethod
    def _word_hits(self, words: list[str], session_id: str | None, limit: int) -> list[RecallHit]:
        """Archived originals in which every word starts a word, best first."""

    @staticmethod
    def _storable(text: str) -> str:
        return text

    @abstractmethod
    def _index_archived(self, db: Connection, session_id: str, seqs: list[int]) -> None:
        """Index the words of the archive rows of `session_id` just written, in the same
        transaction, when the database does not do it by itself."""

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, sql: LiteralString, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._reading() as db:
            return db.execute(sql, params).fetchall()

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
        sid = session_id or new_session_id()
        if not self._insert_session(sid, agent, model, dialect, meta):
            raise StoreError(f"session {sid!r} already exists")
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
        self._insert_session(session_id, agent, model, dialect, meta)
        return self.session(session_id)

    def session(self, session_id: str) -> SessionInfo:
        rows = self._read(_SESSION_COLUMNS + " WHERE id = ?", (session_id,))
        if not rows:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
        return session_info(rows[0])

    def sessions(self, limit: int = 50) -> list[SessionInfo]:
        rows = self._read(_SESSION_COLUMNS + " ORDER BY updated_at DESC, id LIMIT ?", (limit,))
        return [session_info(r) for r in rows]

    def record_request(
        self, session_id: str, *, tokens_before: int | None, tokens_after: int | None
    ) -> None:
        with self._write() as db:
            counted = db.execute(
                "UPDATE sessions SET requests = requests + 1, last_tokens_before = ?,"
                " last_tokens_after = ?, updated_at = ? WHERE id = ?",
                (tokens_before, tokens_after, time.time(), session_id),
            )
            if counted.rowcount == 0:
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")

    # -- messages --------------------------------------------------------------------------

    def append(
        self, session_id: str, messages: Sequence[Message], *, expected_last: int | None = None
    ) -> list[int]:
        if not messages:
            return []
        rows = [(m.role, fingerprint(m), dumps(message_to_dict(m))) for m in messages]
        now = time.time()
        with self._write() as db:
            last = self._touch_session(db, session_id, now)
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
        return seqs

    def digests(self, session_id: str) -> list[str]:
        rows = self._read(
            "SELECT digest FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [d for (d,) in rows]

    def messages(self, session_id: str) -> list[tuple[int, Message]]:
        self.session(session_id)
        rows = self._read(
            "SELECT seq, data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [(seq, load_message(data, session_id, seq)) for seq, data in rows]

    def message(self, session_id: str, seq: int) -> Message:
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
        handles: Mapping[str, int | Message] | None = None,
    ) -> int:
        entries = view_entries(view)
        summary = "\n\n".join(receipt.summaries)
        now = time.time()
        with self._write() as db:
            last = self._touch_session(db, session_id, now)
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
            # An original replaced again by a later compaction is archived once.
            archived = {
                seq
                for (seq,) in db.execute(
                    "SELECT seq FROM archive WHERE session_id = ?", (session_id,)
                ).fetchall()
            }
            originals = db.execute(
                "SELECT seq, data FROM messages WHERE session_id = ? AND "
                + self._SEQ_IN
                + " ORDER BY seq",
                (session_id, self._seq_list(sorted(set(replaced) - archived))),
            ).fetchall()
            rows = []
            for seq, data in originals:
                message = load_message(data, session_id, seq)
                text = self._storable(searchable_text(message))
                rows.append((session_id, seq, message.role, text))
            db.executemany(
                "INSERT INTO archive (session_id, seq, role, text) VALUES (?, ?, ?, ?)", rows
            )
            if rows:
                self._index_archived(db, session_id, [seq for _, seq, _, _ in rows])
            db.executemany(
                self._INSERT_HANDLE,
                self._handle_rows(
                    db,
                    session_id,
                    receipt.archive if handles is None else handles,
                    entries,
                    replaced,
                ),
            )
        return int(number)

    def _handle_rows(
        self,
        db: Connection,
        session_id: str,
        handles: Mapping[str, int | Message],
        view: Sequence[int | object],
        replaced: Sequence[int],
    ) -> list[tuple[str, str, int | None, str | None]]:
        """A row for each handle: the seq of the logged message it names, else the message
        itself (one an earlier compaction made). A message is first looked for among the
        logged messages this compaction saw (the ones it replaced or kept), by fingerprint.
        Costs what the compaction archived, whatever the store holds."""
        unresolved = [m for m in handles.values() if isinstance(m, Message)]
        logged: dict[str, int] = {}
        if unresolved:
            seen = sorted({*replaced, *(v for v in view if isinstance(v, int))})
            for seq, digest in db.execute(
                "SELECT seq, digest FROM messages WHERE session_id = ? AND "
                + self._SEQ_IN
                + " ORDER BY seq",
                (session_id, self._seq_list(seen)),
            ).fetchall():
                logged.setdefault(digest, int(seq))
        rows: list[tuple[str, str, int | None, str | None]] = []
        for handle, named in handles.items():
            if isinstance(named, int):
                rows.append((session_id, handle, named, None))
                continue
            seq = logged.get(fingerprint(named))
            data = None if seq is not None else dumps(message_to_dict(named))
            rows.append((session_id, handle, seq, data))
        return rows

    def compactions(self, session_id: str) -> list[CompactionRecord]:
        self.session(session_id)
        rows = self._read(
            _COMPACTION_COLUMNS + " WHERE session_id = ? ORDER BY number", (session_id,)
        )
        return [compaction_record(session_id, row) for row in rows]

    def latest_receipts(self, limit: int = 50) -> dict[str, dict[str, Any]]:
        rows = self._read(
            "SELECT c.session_id, c.receipt FROM compactions c"
            " JOIN (SELECT id FROM sessions ORDER BY updated_at DESC, id LIMIT ?) s"
            " ON s.id = c.session_id"
            " WHERE c.number = (SELECT max(number) FROM compactions d"
            " WHERE d.session_id = c.session_id)",
            (limit,),
        )
        return {sid: json.loads(receipt) for sid, receipt in rows}

    def view(self, session_id: str) -> tuple[tuple[Message, ...], tuple[int | None, ...]]:
        with self._snapshot() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
            latest = db.execute(
                _COMPACTION_COLUMNS + " WHERE session_id = ? ORDER BY number DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            record = None if latest is None else compaction_record(session_id, latest)
            after = 0 if record is None else record.after_seq
            refs = [] if record is None else sorted({v for v in record.view if isinstance(v, int)})
            kept: dict[int, str] = dict(
                db.execute(
                    "SELECT seq, data FROM messages WHERE session_id = ? AND " + self._SEQ_IN,
                    (session_id, self._seq_list(refs)),
                ).fetchall()
            )
            tail = db.execute(
                "SELECT seq, data FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, after),
            ).fetchall()
        return assemble_view(session_id, record, kept, [(int(s), d) for s, d in tail])

    # -- recall ----------------------------------------------------------------------------

    def recall(
        self, query: str, *, session_id: str | None = None, limit: int = 5
    ) -> list[RecallHit]:
        needle = query.strip()
        if not needle:
            return []
        handles = handles_in(query)
        if handles:
            return self._handle_hits(handles, session_id, limit)
        words = query_words(query)
        hits = self._word_hits(words, session_id, limit) if words else []
        if not hits:
            # No word matched (or the query has no words, only punctuation such as `": "`).
            scope, params = in_session(session_id)
            rows = self._read(
                "SELECT session_id, seq, role, text FROM archive WHERE "
                + self._CONTAINS
                + scope
                + " ORDER BY session_id, seq LIMIT ?",
                [self._storable(needle), *params, limit],
            )
            hits = [
                RecallHit(s, int(q), r, substring_snippet(text, needle), 0.0, text)
                for s, q, r, text in rows
            ]
        return self._with_originals(hits)

    def _handle_hits(
        self, handles: list[str], session_id: str | None, limit: int
    ) -> list[RecallHit]:
        """The originals kept under `handles`, in their order (a handle may be in several
        sessions when `session_id` is None), at most `limit`."""
        scope: LiteralString = "" if session_id is None else " AND h.session_id = ?"
        hits: list[RecallHit] = []
        for handle in handles:
            rows = self._read(
                "SELECT h.session_id, h.seq, coalesce(h.data, m.data) FROM handles h"
                " LEFT JOIN messages m ON m.session_id = h.session_id AND m.seq = h.seq"
                " WHERE h.handle = ?" + scope + " ORDER BY h.session_id LIMIT ?",
                [handle, *([] if session_id is None else [session_id]), limit - len(hits)],
            )
            for sid, logged, data in rows:
                seq = None if logged is None else int(logged)
                message = message_from_dict(json.loads(data), f"session {sid} {handle}")
                text = searchable_text(message)
                snippet = text[:120] + ("…" if len(text) > 120 else "")
                hits.append(RecallHit(sid, seq, message.role, snippet, 0.0, text, handle, message))
            if len(hits) >= limit:
                break
        return hits

    def _with_originals(self, hits: list[RecallHit]) -> list[RecallHit]:
        """Word hits with their original message and the handle its placeholder shows (one
        read of each per session among the hits)."""
        found: dict[str, tuple[dict[int, str], dict[int, str]]] = {}
        for sid in dict.fromkeys(h.session_id for h in hits):
            seqs = self._seq_list(sorted({h.seq for h in hits if h.session_id == sid and h.seq}))
            data = self._read(
                "SELECT seq, data FROM messages WHERE session_id = ? AND " + self._SEQ_IN,
                (sid, seqs),
            )
            handles = self._read(
                "SELECT seq, min(handle) FROM handles WHERE session_id = ? AND "
                + self._SEQ_IN
                + " GROUP BY seq",
                (sid, seqs),
            )
            found[sid] = ({int(q): d for q, d in data}, {int(q): h for q, h in handles})
        done: list[RecallHit] = []
        for hit in hits:
            stored, named = found[hit.session_id]
            if hit.seq is None or hit.seq not in stored:  # never: the archive names logged seqs
                continue
            message = load_message(stored[hit.seq], hit.session_id, hit.seq)
            text = searchable_text(message)
            handle = named.get(hit.seq)
            done.append(dataclasses.replace(hit, text=text, handle=handle, message=message))
        return done

    # -- helpers ---------------------------------------------------------------------------

    def _insert_session(
        self,
        session_id: str,
        agent: str | None,
        model: str | None,
        dialect: str | None,
        meta: Mapping[str, Any] | None,
    ) -> bool:
        """Add the session unless its id exists; whether it was added."""
        check_session_id(session_id)
        now = time.time()
        with self._write() as db:
            inserted = db.execute(
                self._INSERT_SESSION,
                (session_id, now, now, agent, model, dialect, json.dumps(dict(meta or {}))),
            )
            return inserted.rowcount > 0

    def _touch_session(self, db: Connection, session_id: str, now: float) -> int:
        """Mark the session updated and return its last seq. In PostgreSQL the UPDATE locks
        the session's row until the transaction ends, so that writers of one session, in any
        process, take turns (SQLite's `BEGIN IMMEDIATE` already holds the whole database)."""
        touched = db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
        if touched.rowcount == 0:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
        # PostgreSQL's READ COMMITTED: this sees what the previous holder of the lock committed.
        (last,) = db.execute(
            "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(last)


def in_session(session_id: str | None) -> tuple[LiteralString, list[Any]]:
    """The condition that keeps archive rows to one session (none: every session), to follow
    a WHERE clause, and its parameters."""
    if session_id is None:
        return "", []
    return " AND session_id = ?", [session_id]


def apply_migrations(
    db: Connection,
    migrations: Sequence[tuple[str, str]],
    locked: Callable[[], AbstractContextManager[object]],
    *,
    done: Collection[str] = (),
) -> list[str]:
    """Apply in order the `migrations` not yet recorded in the `_migrations` table; return
    their names. Each runs in one `locked()` transaction together with the row that records
    it, so it lands whole or not at all; `locked()` must also hold a lock that every process
    migrating the same database waits for. `done` names migrations seen applied already
    (skipped without taking the lock)."""
    applied: list[str] = []
    for number, (name, sql) in enumerate(migrations, start=1):
        if name in done:
            continue
        with locked():
            # Checked again under the lock: another process opening the same new store may
            # have applied this migration since we looked.
            if db.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            for statement in (s.strip() for s in sql.split(";")):
                if statement:
                    db.execute(statement)
            db.execute(
                "INSERT INTO _migrations (id, name, applied_at) VALUES (?, ?, ?)",
                (number, name, time.time()),
            )
        applied.append(name)
    return applied
