"""The session store: an append-only log of every message and every compaction, the
model-visible view derived from it, and full-text recall of everything compacted away.

SQLite (WAL, FTS5) is the one backend today; `open_store` takes a path or a `sqlite:///`
URL. Schema changes are ordered, named migrations (`compaction.store.migrations`).
"""

from compaction.store.sqlite import (
    CompactionRecord,
    RecallHit,
    SessionInfo,
    SessionStore,
    default_store_path,
    new_session_id,
    open_store,
    store_location,
)
from compaction.store.text import fingerprint, searchable_text

__all__ = [
    "CompactionRecord",
    "RecallHit",
    "SessionInfo",
    "SessionStore",
    "default_store_path",
    "fingerprint",
    "new_session_id",
    "open_store",
    "searchable_text",
    "store_location",
]
