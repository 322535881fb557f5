"""`PostgresStore`: the session store in PostgreSQL, so several proxy replicas share
sessions, logs, archive and recall.

The rows and the view are those of every store (`compaction.store.base`). Each write is one
transaction. Writes to a session first lock its row (`UPDATE sessions …`), so two
replicas appending to the same session, or one appending while the other records a
compaction, take turns: seqs and compaction numbers stay contiguous and nothing is lost.
A view is read in one REPEATABLE READ transaction, so it is the view before a compaction or
after it, never a mix.

Recall searches a `tsvector` of each archived original ('simple' configuration: every word,
lowercased, no stemming, no stop words) through a GIN index; every query word must match
the start of a word, best matches first (`ts_rank`), the snippet marked by `ts_headline`.
When no word matches, the query is looked for as a substring, as in SQLite. A query naming
archive handles is answered from the `handles` table, by its primary key.

The schema is this module's `MIGRATIONS`, applied under a transaction-level advisory lock so
replicas starting together apply each one once. One connection serves all threads behind a
lock (the proxy runs store calls in worker threads); a broken connection is replaced on the
next call. Messages name the URL without its password. This module must never decide what
to compact: it records what the compactor did.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, LiteralString

import psycopg
from psycopg import conninfo

from compaction.exceptions import StoreError
from compaction.store._sql import Connection, SQLStore, apply_migrations, in_session
from compaction.store.base import RecallHit, redact_url

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
    (
        # The archive handle (`m-…`) each compaction's placeholders show, so recall finds
        # an original by it: the logged seq, or the message itself when a compaction made it.
        # No index beyond the key, as every compaction writes these rows: the lookups (a
        # handle, the handles of a few seqs) are within one session, the key's prefix; only
        # the library's recall across every session reads the whole table.
        "004_handles",
        """
        CREATE TABLE handles (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            handle TEXT NOT NULL,
            seq INTEGER,
            data TEXT,
            PRIMARY KEY (session_id, handle),
            FOREIGN KEY (session_id, seq) REFERENCES messages (session_id, seq),
            CHECK ((seq IS NULL) <> (data IS NULL))
        );
        """,
    ),
    (
        # Requests counted in the store, so every proxy replica on one database reports the
        # same figures for a session (`SessionStore.record_request`).
        "005_session_requests",
        """
        ALTER TABLE sessions ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN last_tokens_before INTEGER;
        ALTER TABLE sessions ADD COLUMN last_tokens_after INTEGER;
        """,
    ),
)


def migrate(connection: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations the database has not seen yet; return their names. Each runs in
    one transaction with the row that records it, holding an advisory lock that any other
    process migrating the same database waits for."""

    @contextmanager
    def locked() -> Iterator[None]:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            # Under the lock: CREATE TABLE IF NOT EXISTS itself races when two processes
            # create the same table at once.
            connection.execute(
                "CREATE TABLE IF NOT EXISTS _migrations ("
                "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
                " applied_at DOUBLE PRECISION NOT NULL)"
            )
            yield

    return apply_migrations(_Placeholders(connection), MIGRATIONS, locked)


class _Placeholders:
    """A psycopg connection that takes the `?` placeholders of the shared statements
    (`compaction.store._sql`). As psycopg does with `%`, a statement without parameters
    (a migration's) is passed on untouched."""

    def __init__(self, db: psycopg.Connection[Any]) -> None:
        self._db = db

    def execute(
        self, sql: LiteralString, params: Sequence[Any] | None = None, /
    ) -> psycopg.Cursor[Any]:
        if params is None:
            return self._db.execute(sql)
        return self._db.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: LiteralString, params: Iterable[Sequence[Any]], /) -> None:
        with self._db.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), params)


class PostgresStore(SQLStore):
    """The PostgreSQL session store at `url` (`postgresql://user:pass@host:port/db`, any
    libpq URL). Thread-safe; see the module docstring."""

    _INSERT_SESSION = (
        "INSERT INTO sessions (id, created_at, updated_at, agent, model, dialect, meta)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
    )
    _SEQ_IN = "seq = ANY(?)"
    _CONTAINS = "strpos(lower(text), lower(?)) > 0"
    _INSERT_HANDLE = (
        "INSERT INTO handles (session_id, handle, seq, data) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session_id, handle) DO NOTHING"
    )

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

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()

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

    def _error(self, doing: str, error: psycopg.Error) -> StoreError:
        detail = str(error).strip()
        password = _password(self._url)
        if password:
            detail = detail.replace(password, "***")
        return StoreError(f"{doing} the session store {self.path}: {detail}")

    @contextmanager
    def _connected(self, doing: str) -> Iterator[psycopg.Connection[Any]]:
        """The connection, under the thread lock; a database error in the block is a
        `StoreError` that says what the store was `doing`."""
        with self._lock:
            db = self._connection()
            try:
                yield db
            except psycopg.Error as e:
                raise self._error(doing, e) from e

    # -- the hooks of SQLStore ---------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[_Placeholders]:
        with self._connected("cannot write") as db, db.transaction():
            yield _Placeholders(db)

    @contextmanager
    def _reading(self) -> Iterator[_Placeholders]:
        with self._connected("cannot read") as db:
            yield _Placeholders(db)

    @contextmanager
    def _snapshot(self) -> Iterator[_Placeholders]:
        # One REPEATABLE READ transaction: every read sees the database as the first did,
        # whatever other replicas commit meanwhile.
        with self._connected("cannot read") as db, db.transaction():
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield _Placeholders(db)

    @staticmethod
    def _seq_list(seqs: list[int]) -> list[int]:
        return seqs

    @staticmethod
    def _storable(text: str) -> str:
        # PostgreSQL text cannot hold NUL; a tool output may.
        return text.replace("\x00", " ")

    def _word_hits(self, words: list[str], session_id: str | None, limit: int) -> list[RecallHit]:
        # Each word quoted, so nothing in it reads as a tsquery operator; `:*` matches the
        # words it starts. The headline is made for the hits only, after the ranking.
        match = " & ".join(f"'{w}':*" for w in words)
        scope, params = in_session(session_id)
        rows = self._read(
            "WITH q AS (SELECT to_tsquery('simple', ?) AS q),"
            " hits AS (SELECT a.session_id, a.seq, a.role, a.text,"
            " ts_rank(a.words, q.q) AS rank FROM archive a, q WHERE a.words @@ q.q"
            + scope
            + " ORDER BY rank DESC, a.session_id, a.seq LIMIT ?)"
            " SELECT h.session_id, h.seq, h.role,"
            f" ts_headline('simple', h.text, q.q, '{_HEADLINE}'), h.rank, h.text"
            " FROM hits h, q ORDER BY h.rank DESC, h.session_id, h.seq",
            [match, *params, limit],
        )
        return [
            RecallHit(s, int(q), r, snip, float(score), text) for s, q, r, snip, score, text in rows
        ]

    def _index_archived(self, db: Connection, session_id: str, seqs: list[int]) -> None:
        pass  # the generated `words` column indexes each row as it is written

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
