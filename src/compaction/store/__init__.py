"""The session store: an append-only log of every message and every compaction, the
model-visible view derived from it, and recall of everything compacted away, by the archive
handle its placeholder shows or by full-text search (`compaction.recall`).

`SessionStore` is the protocol every backend implements (`compaction.store.base`);
`open_store` picks the backend from the location:

- a path, a `sqlite:///` URL or `:memory:` → `SQLiteStore` (WAL, FTS5; one machine);
- a `postgresql://user:pass@host/db` URL → `compaction.store.postgres.PostgresStore` (the
  `postgres` extra, imported only then; several proxy replicas can share one).

Each backend has its own ordered, named migrations (`compaction.store.migrations` for
SQLite, `compaction.store.postgres.MIGRATIONS`).
"""

from compaction.exceptions import SessionNotFoundError, StoreError
from compaction.store.base import (
    CompactionRecord,
    RecallHit,
    SessionInfo,
    SessionStore,
    new_session_id,
)
from compaction.store.locations import default_store_path, open_store, store_location
from compaction.store.sqlite import SQLiteStore
from compaction.store.text import fingerprint, searchable_text

__all__ = [  # noqa: RUF022 (grouped by topic)
    # the store
    "SessionStore",
    "SQLiteStore",
    "open_store",
    "default_store_path",
    "store_location",
    # what it returns
    "CompactionRecord",
    "RecallHit",
    "SessionInfo",
    # errors
    "SessionNotFoundError",
    "StoreError",
    # helpers
    "fingerprint",
    "new_session_id",
    "searchable_text",
]
