"""The session store's schema, as ordered, named migrations.

Each migration runs once, in order, inside one transaction together with the row that
records it in `_migrations`; opening a store applies whatever is missing. A migration is
never edited once released: a change of schema is a new migration at the end of the list.

This module must never touch a database it was not handed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from compaction.store._sql import apply_migrations

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        "001_sessions_and_messages",
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
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
            created_at REAL NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID;
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
            created_at REAL NOT NULL,
            PRIMARY KEY (session_id, number)
        );
        CREATE INDEX sessions_by_update ON sessions(updated_at DESC);
        """,
    ),
    (
        "003_archive_fts",
        """
        CREATE VIRTUAL TABLE archive USING fts5(
            text,
            session_id UNINDEXED,
            seq UNINDEXED,
            role UNINDEXED,
            tokenize = 'unicode61'
        );
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
            CHECK ((seq IS NULL) <> (data IS NULL))
        ) WITHOUT ROWID;
        """,
    ),
    (
        # The FTS5 table could not index session_id: asking which of a session's originals
        # are archived scanned every archived row of every session. The originals now live in
        # an ordinary table indexed by (session_id, seq), and the full-text index reads its
        # text from there (external content).
        "005_archive_indexed_by_session",
        """
        ALTER TABLE archive RENAME TO archive_old;
        CREATE TABLE archive (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL
        );
        INSERT INTO archive (session_id, seq, role, text)
            SELECT session_id, seq, role, text FROM archive_old ORDER BY rowid;
        DROP TABLE archive_old;
        CREATE INDEX archive_by_session ON archive (session_id, seq);
        CREATE VIRTUAL TABLE archive_words USING fts5(
            text,
            content = 'archive',
            content_rowid = 'id',
            tokenize = 'unicode61'
        );
        INSERT INTO archive_words (archive_words) VALUES ('rebuild');
        """,
    ),
    (
        # Requests counted in the store, so every proxy replica on one database reports the
        # same figures for a session (`SessionStore.record_request`).
        "006_session_requests",
        """
        ALTER TABLE sessions ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN last_tokens_before INTEGER;
        ALTER TABLE sessions ADD COLUMN last_tokens_after INTEGER;
        """,
    ),
)


def migrate(connection: sqlite3.Connection) -> list[str]:
    """Apply the migrations `connection` has not seen yet; return their names."""
    connection.execute(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)"
    )
    # Read before taking the write lock, so opening an up-to-date store never waits for it.
    done = {name for (name,) in connection.execute("SELECT name FROM _migrations")}
    return apply_migrations(connection, MIGRATIONS, lambda: _immediate(connection), done=done)


@contextmanager
def _immediate(connection: sqlite3.Connection) -> Iterator[None]:
    """One transaction holding the database's write lock. executescript would commit on its
    own: the statements of a migration run one by one inside this instead."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
