"""The session store's schema, as ordered, named migrations.

Each migration runs once, in order, inside one transaction together with the row that
records it in `_migrations`; opening a store applies whatever is missing. A migration is
never edited once released: a change of schema is a new migration at the end of the list.

This module must never touch a database it was not handed.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Final

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
)


def migrate(connection: sqlite3.Connection) -> list[str]:
    """Apply the migrations `connection` has not seen yet; return their names."""
    connection.execute(
        "CREATE TABLE IF NOT EXISTS _migrations ("
        "id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL)"
    )
    done = {name for (name,) in connection.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for number, (name, sql) in enumerate(MIGRATIONS, start=1):
        if name in done:
            continue
        # executescript would commit on its own; run the statements inside one transaction so
        # a migration and its record land together or not at all.
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Checked again under the write lock: another process opening the same new store
            # may have applied this migration since we looked.
            if connection.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                connection.execute("ROLLBACK")
                continue
            for statement in _statements(sql):
                connection.execute(statement)
            connection.execute(
                "INSERT INTO _migrations (id, name, applied_at) VALUES (?, ?, ?)",
                (number, name, time.time()),
            )
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        applied.append(name)
    return applied


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
