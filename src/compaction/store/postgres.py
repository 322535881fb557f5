"""`PostgresStore`: the session store in PostgreSQL, so several proxy replicas share
sessions, logs, archive and recall.

The rows and the view are those of every store (`compaction.store.base`). Each write is one
transaction. Writes to a session first lock its row (`UPDATE sessions … RETURNING`), so two
replicas appending to the same session, or one appending while the other records a
compaction, take turns: seqs and compaction numbers stay contiguous and nothing is lost.
A view is read in one REPEATABLE READ transaction, so it is the view before a compaction or
after it, never a mix.

Recall searches a `tsvector` of each archived original ('simple' configuration: every word,
lowercased, no stemming, no stop words) through a GIN index; every query word must match
the start of a word, best matches first (`ts_rank`), the snippet marked by `ts_headline`.
When no word matches, the query is looked for as a substring, as in SQLite.

The schema is this module's `MIGRATIONS`, applied under a transaction-level advisory lock so
replicas starting together apply each one once. One connection serves all threads behind a
lock (the proxy runs store calls in worker threads); a broken connection is replaced on the
next call. Messages name the URL without its password. This module must never decide what
to compact: it records what the compactor did.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final, LiteralString

import psycopg
from psycopg import conninfo

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
    redact_url,
    session_info,
    substring_snippet,
    view_entries,
)
from compaction.store.text import fingerprint, searchable_text

__all__ = ["MIGRATIONS", "PostgresStore", "migrate"]

# How long opening a connection may take before the store gives up (unless the URL says).
CONNECT_TIMEOUT_S = 10
# Any constant shared by every process that migrates this schema; it names the advisory lock.
_MIGRATION_LOCK: Final = 0x636F6D70616374  # "compact"
# A tsvector holds at most 1 MB; the words past this many characters of one original are
# found by the substring search only.
_INDEXED_CHARS: Final = 262_144
_HEADLINE: Final = (
    "StartSel=[, StopSel=], MaxWords=16, MinWords=6, ShortWord=0, "
    'MaxFragments=2, FragmentDelimiter=" … "'
)

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        "001_sessions_and_messages",
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            agent TEXT,
            model TEXT,
            dialect TEXT,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            digest TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        """,
    ),
    (
        "002_compactions",
        """
        CREATE TABLE compactions (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            number INTEGER NOT NULL,
            after_seq INTEGER NOT NULL,
            view TEXT NOT NULL,
            replaced TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            tokens_before INTEGER,
            tokens_after INTEGER,
            receipt TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (session_id, number)
        );
        CREATE INDEX sessions_by_update ON sessions (updated_at DESC);
        """,
    ),
    (
        "003_archive_tsvector",
        f"""
        CREATE TABLE archive (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL,
            words TSVECTOR GENERATED ALWAYS AS
                (to_tsvector('simple'::regconfig, left(text, {_INDEXED_CHARS}))) STORED,
            PRIMARY KEY (session_id, seq),
            FOREIGN KEY (session_id, seq) REFERENCES messages (session_id, seq)
        );
        CREATE INDEX archive_words ON archive USING GIN (words);
        """,
    ),
)


def migrate(connection: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations the database has not seen yet; return their names. Each runs in
    one transaction with the row that records it, holding an advisory lock that any other
    process migrating the same database waits for."""
    applied: list[str] = []
    for number, (name, sql) in enumerate(MIGRATIONS, start=1):
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            # Under the lock: CREATE TABLE IF NOT EXISTS itself races when two processes
            # create the same table at once.
            connection.execute(
                "CREATE TABLE IF NOT EXISTS _migrations ("
                "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
                " applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = connection.execute("SELECT 1 FROM _migrations WHERE name = %s", (name,))
            if done.fetchone():
                continue
            for statement in _statements(sql):
                connection.execute(statement)
            connection.execute(
                "INSERT INTO _migrations (id, name, applied_at) VALUES (%s, %s, %s)",
                (number, name, time.time()),
            )
        applied.append(name)
    return applied


class PostgresStore:
    """The PostgreSQL session store at `url` (`postgresql://user:pass@host:port/db`, any
    libpq URL). Thread-safe; see the module docstring."""

    def __init__(self, url: str) -> None:
        self._url = url
        self.path = redact_url(url)
        self._lock = threading.RLock()
        self._closed = False
        self._db = self._connect()
        try:
            migrate(self._db)
        except psycopg.Error as e:
            self._db.close()
            raise self._error("cannot migrate", e) from e

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> psycopg.Connection[Any]:
        options: dict[str, Any] = {"autocommit": True, "application_name": "compaction"}
        try:
            if "connect_timeout" not in conninfo.conninfo_to_dict(self._url):
                options["connect_timeout"] = CONNECT_TIMEOUT_S
            return psycopg.connect(self._url, **options)
        except psycopg.Error as e:
            raise self._error("cannot open", e) from e

    def _connection(self) -> psycopg.Connection[Any]:
        """The connection, opened again when the last one broke (a server restart, a
        network cut); the call that saw it break has failed with a `StoreError`."""
        if self._closed:
            raise StoreError(f"the session store {self.path} is closed")
        if self._db.closed:
            self._db = self._connect()
        return self._db

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        with self._lock:
            db = self._connection()
            try:
                with db.transaction():
                    yield db
            except psycopg.Error as e:
                raise self._error("cannot write", e) from e

    @contextmanager
    def _snapshot(self) -> Iterator[psycopg.Connection[Any]]:
        """Several reads that see one state of the database."""
        with self._lock:
            db = self._connection()
            try:
                with db.transaction():
                    db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    yield db
            except psycopg.Error as e:
                raise self._error("cannot read", e) from e

    def _read(self, sql: LiteralString, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            db = self._connection()
            try:
                return db.execute(sql, params).fetchall()
            except psycopg.Error as e:
                raise self._error("cannot read", e) from e

    def _error(self, doing: str, error: psycopg.Error) -> StoreError:
        detail = str(error).strip()
        password = _password(self._url)
        if password:
            detail = detail.replace(password, "***")
        return StoreError(f"{doing} the session store {self.path}: {detail}")

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
            created = db.execute(
                "INSERT INTO sessions (id, created_at, updated_at, agent, model, dialect, meta)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
                (sid, now, now, agent, model, dialect, json.dumps(dict(meta or {}))),
            ).fetchone()
        if created is None:
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
        """The session with this id, created when missing."""
        check_session_id(session_id)
        now = time.time()
        with self._write() as db:
            db.execute(
                "INSERT INTO sessions (id, created_at, updated_at, agent, model, dialect, meta)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (session_id, now, now, agent, model, dialect, json.dumps(dict(meta or {}))),
            )
        return self.session(session_id)

    def session(self, session_id: str) -> SessionInfo:
        rows = self._read(
            "SELECT id, created_at, updated_at, agent, model, dialect, meta,"
            " (SELECT count(*) FROM messages m WHERE m.session_id = s.id),"
            " (SELECT count(*) FROM compactions c WHERE c.session_id = s.id)"
            " FROM sessions s WHERE id = %s",
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
            " FROM sessions s ORDER BY updated_at DESC, id LIMIT %s",
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
            last = self._lock_session(db, session_id, now)
            check_expected_last(session_id, expected_last, last)
            seqs = list(range(last + 1, last + 1 + len(rows)))
            with db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO messages (session_id, seq, role, digest, data, created_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (session_id, s, r, d, data, now)
                        for s, (r, d, data) in zip(seqs, rows, strict=True)
                    ],
                )
        return seqs

    def digests(self, session_id: str) -> list[str]:
        """The fingerprint of every logged message, in order."""
        rows = self._read(
            "SELECT digest FROM messages WHERE session_id = %s ORDER BY seq", (session_id,)
        )
        return [d for (d,) in rows]

    def messages(self, session_id: str) -> list[tuple[int, Message]]:
        """Every logged message with its seq, in order (the full, uncompacted history)."""
        self.session(session_id)
        rows = self._read(
            "SELECT seq, data FROM messages WHERE session_id = %s ORDER BY seq", (session_id,)
        )
        return [(seq, load_message(data, session_id, seq)) for seq, data in rows]

    def message(self, session_id: str, seq: int) -> Message:
        """The exact original message `seq` of the session."""
        rows = self._read(
            "SELECT data FROM messages WHERE session_id = %s AND seq = %s", (session_id, seq)
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
            last = self._lock_session(db, session_id, now)
            seen = check_compaction(
                session_id, last=last, after_seq=after_seq, view=entries, replaced=replaced
            )
            number = db.execute(
                "INSERT INTO compactions (session_id, number, after_seq, view, replaced,"
                " summary, tokens_before, tokens_after, receipt, created_at)"
                " SELECT %s, coalesce(max(number), 0) + 1, %s, %s, %s, %s, %s, %s, %s, %s"
                " FROM compactions WHERE session_id = %s RETURNING number",
                (
                    session_id,
                    seen,
                    dumps(entries),
                    json.dumps(sorted(set(replaced))),
                    summary,
                    receipt.tokens_before,
                    receipt.tokens_after,
                    dumps(receipt.to_dict(include_archive=False)),
                    now,
                    session_id,
                ),
            ).fetchone()
            assert number is not None  # an INSERT … SELECT of an aggregate yields one row
            fresh = db.execute(
                "SELECT m.seq, m.data FROM messages m WHERE m.session_id = %s"
                " AND m.seq = ANY(%s) AND NOT EXISTS (SELECT 1 FROM archive a"
                " WHERE a.session_id = m.session_id AND a.seq = m.seq) ORDER BY m.seq",
                (session_id, sorted(set(replaced))),
            ).fetchall()
            archived = []
            for seq, data in fresh:
                message = load_message(data, session_id, seq)
                # PostgreSQL text cannot hold NUL; a tool output may.
                text = searchable_text(message).replace("\x00", " ")
                archived.append((session_id, seq, message.role, text))
            with db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO archive (session_id, seq, role, text) VALUES (%s, %s, %s, %s)",
                    archived,
                )
        return int(number[0])

    def compactions(self, session_id: str) -> list[CompactionRecord]:
        self.session(session_id)
        rows = self._read(
            "SELECT number, after_seq, view, replaced, summary, tokens_before, tokens_after,"
            " receipt, created_at FROM compactions WHERE session_id = %s ORDER BY number",
            (session_id,),
        )
        return [compaction_record(session_id, row) for row in rows]

    def view(self, session_id: str) -> tuple[tuple[Message, ...], tuple[int | None, ...]]:
        """The model-visible messages and their seqs (None for messages a compaction made):
        the latest compaction's view, then every message logged after it."""
        with self._snapshot() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone() is None:
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
            latest = db.execute(
                "SELECT number, after_seq, view, replaced, summary, tokens_before,"
                " tokens_after, receipt, created_at FROM compactions WHERE session_id = %s"
                " ORDER BY number DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            record = None if latest is None else compaction_record(session_id, latest)
            after = 0 if record is None else record.after_seq
            refs = [] if record is None else sorted({v for v in record.view if isinstance(v, int)})
            kept: dict[int, str] = dict(
                db.execute(
                    "SELECT seq, data FROM messages WHERE session_id = %s AND seq = ANY(%s)",
                    (session_id, refs),
                ).fetchall()
            )
            tail = db.execute(
                "SELECT seq, data FROM messages WHERE session_id = %s AND seq > %s ORDER BY seq",
                (session_id, after),
            ).fetchall()
        return assemble_view(session_id, record, kept, [(int(s), d) for s, d in tail])

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
        scope = "" if session_id is None else " AND a.session_id = %s"
        params: list[Any] = [] if session_id is None else [session_id]
        words = query_words(query)
        if words:
            # Each word quoted, so nothing in it reads as a tsquery operator; `:*` matches
            # the words it starts.
            match = " & ".join(f"'{w}':*" for w in words)
            rows = self._read(
                "WITH q AS (SELECT to_tsquery('simple', %s) AS q),"
                " hits AS (SELECT a.session_id, a.seq, a.role, a.text,"
                " ts_rank(a.words, q.q) AS rank FROM archive a, q WHERE a.words @@ q.q"
                + scope
                + " ORDER BY rank DESC, a.session_id, a.seq LIMIT %s)"
                " SELECT h.session_id, h.seq, h.role,"
                f" ts_headline('simple', h.text, q.q, '{_HEADLINE}'), h.rank, h.text"
                " FROM hits h, q ORDER BY h.rank DESC, h.session_id, h.seq",
                [match, *params, limit],
            )
            hits = [
                RecallHit(s, int(q), r, snip, float(score), text)
                for s, q, r, snip, score, text in rows
            ]
            if hits:
                return hits
        # No word matched (or the query has no words, only punctuation such as `": "`).
        rows = self._read(
            "SELECT a.session_id, a.seq, a.role, a.text FROM archive a"
            " WHERE strpos(lower(a.text), lower(%s)) > 0"
            + scope
            + " ORDER BY a.session_id, a.seq LIMIT %s",
            [needle.replace("\x00", " "), *params, limit],
        )
        return [
            RecallHit(s, int(q), r, substring_snippet(text, needle), 0.0, text)
            for s, q, r, text in rows
        ]

    # -- helpers ---------------------------------------------------------------------------

    def _lock_session(self, db: psycopg.Connection[Any], session_id: str, now: float) -> int:
        """Lock the session's row until the transaction ends (so writers of one session, in
        any process, take turns) and return its last seq."""
        locked = db.execute(
            "UPDATE sessions SET updated_at = %s WHERE id = %s RETURNING id", (now, session_id)
        ).fetchone()
        if locked is None:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
        # READ COMMITTED: this statement sees what the previous holder of the lock committed.
        row = db.execute(
            "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = %s", (session_id,)
        ).fetchone()
        assert row is not None
        return int(row[0])

    def integrity(self) -> list[str]:
        """Sessions whose messages or compactions are not numbered 1, 2, … without a gap
        (empty when the store is sound; the database guards everything else itself)."""
        problems = [
            f"session {sid!r}: {n} messages numbered up to {top}"
            for sid, n, top in self._read(
                "SELECT session_id, count(*), max(seq) FROM messages GROUP BY session_id"
                " HAVING count(*) <> max(seq) OR min(seq) <> 1 ORDER BY session_id"
            )
        ]
        problems += [
            f"session {sid!r}: {n} compactions numbered up to {top}"
            for sid, n, top in self._read(
                "SELECT session_id, count(*), max(number) FROM compactions GROUP BY session_id"
                " HAVING count(*) <> max(number) OR min(number) <> 1 ORDER BY session_id"
            )
        ]
        return problems


def _password(url: str) -> str | None:
    try:
        password = conninfo.conninfo_to_dict(url).get("password")
    except psycopg.Error:  # a URL libpq cannot parse, whose message may quote it
        userinfo = url.partition("://")[2].partition("/")[0].rpartition("@")[0]
        password = userinfo.partition(":")[2]
    return str(password) if password else None


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
