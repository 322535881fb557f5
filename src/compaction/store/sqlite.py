"""`SessionStore`: the append-only session log in SQLite (WAL), with full-text recall.

Three kinds of rows, none ever updated or deleted:

- a **message** as it happened (`seq` 1, 2, … per session), with its fingerprint;
- a **compaction** record: the model-visible view after it (each entry a logged `seq` kept
  verbatim, or a new message such as a summary or a masked placeholder), the seqs it replaced
  and the receipt;
- an **archive** entry (FTS5) for each replaced original, so `recall` finds it by its words.

The view the model sees is derived: the latest compaction's view, then every message logged
after it. Each write is one transaction, so a process killed at any point leaves the log as
it was before the write or after it, never between; the view read back is either the one
before a compaction or the one after it.

One connection serves all threads behind a lock (the proxy runs compaction in worker
threads); WAL lets other processes read while one writes. This module must never decide
what to compact: it records what the compactor did.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction.compactor import Receipt
from compaction.exceptions import ConfigError, SessionNotFoundError, StoreError
from compaction.messages import Message
from compaction.serialize import message_from_dict, message_to_dict
from compaction.store.migrations import migrate
from compaction.store.text import fingerprint, searchable_text

__all__ = [
    "CompactionRecord",
    "RecallHit",
    "SessionInfo",
    "SessionStore",
    "default_store_path",
    "open_store",
    "store_location",
]

# How long a writer waits for another process's write lock before giving up.
BUSY_TIMEOUT_S = 10.0
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    created_at: float
    updated_at: float
    agent: str | None = None
    model: str | None = None
    dialect: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    messages: int = 0
    compactions: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "agent": self.agent,
            "model": self.model,
            "dialect": self.dialect,
            "meta": dict(self.meta),
            "messages": self.messages,
            "compactions": self.compactions,
        }


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """One compaction as logged. `view` entries are seqs (kept verbatim) or new messages."""

    session_id: str
    number: int
    after_seq: int
    view: tuple[int | Message, ...]
    replaced: tuple[int, ...]
    summary: str
    tokens_before: int | None
    tokens_after: int | None
    receipt: Mapping[str, Any]
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "after_seq": self.after_seq,
            "created_at": _iso(self.created_at),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "replaced": list(self.replaced),
            "view": [v if isinstance(v, int) else message_to_dict(v) for v in self.view],
            "summary": self.summary,
            "receipt": dict(self.receipt),
        }


@dataclass(frozen=True, slots=True)
class RecallHit:
    """An original message that matched a recall query; `snippet` marks the match with
    `[` `]`. Get the whole message with `SessionStore.message(session_id, seq)`."""

    session_id: str
    seq: int
    role: str
    snippet: str
    score: float
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "seq": self.seq,
            "role": self.role,
            "snippet": self.snippet,
            "score": round(self.score, 4),
        }


def default_store_path() -> Path:
    """Where sessions live when no store is named: `$COMPACTION_HOME/sessions.db`, else the
    platform's per-user data directory (`$XDG_DATA_HOME/compaction` or
    `~/.local/share/compaction` on Linux, `~/Library/Application Support/compaction` on
    macOS, `%LOCALAPPDATA%\\compaction` on Windows)."""
    home = os.environ.get("COMPACTION_HOME")
    if home:
        return Path(home).expanduser() / "sessions.db"
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "compaction" / "sessions.db"


def store_location(explicit: str | None = None, configured: str | None = None) -> str:
    """Which store a command uses: the one it was given (`--store`), else
    `$COMPACTION_STORE`, else the one a configuration names (a workflow's `store:`), else
    `default_store_path()`."""
    return explicit or os.environ.get("COMPACTION_STORE") or configured or str(default_store_path())


def open_store(location: str | os.PathLike[str] | None = None) -> SessionStore:
    """Open (creating and migrating as needed) the store at `location`: a path, a
    `sqlite:///path` URL, `:memory:`, or None for `default_store_path()`."""
    if location is None:
        return SessionStore(default_store_path())
    text = os.fspath(location)
    if text.startswith(("postgres://", "postgresql://")):
        raise ConfigError(
            "the PostgreSQL store is not available in this version; use a SQLite path",
            location="store",
        )
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://")
        # sqlite:///abs/path → /abs/path; sqlite://rel/path → rel/path
        text = text or ":memory:"
    elif "://" in text:
        raise ConfigError(
            f"unknown store URL {text!r}: expected a path, sqlite:///path or :memory:",
            location="store",
        )
    return SessionStore(text)


class SessionStore:
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

    def __enter__(self) -> SessionStore:
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
        _check_id(sid)
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
        _check_id(session_id)
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
        return _session_info(rows[0])

    def sessions(self, limit: int = 50) -> list[SessionInfo]:
        """Sessions, most recently updated first."""
        rows = self._read(
            "SELECT id, created_at, updated_at, agent, model, dialect, meta,"
            " (SELECT count(*) FROM messages m WHERE m.session_id = s.id),"
            " (SELECT count(*) FROM compactions c WHERE c.session_id = s.id)"
            " FROM sessions s ORDER BY updated_at DESC, id LIMIT ?",
            (limit,),
        )
        return [_session_info(r) for r in rows]

    # -- messages --------------------------------------------------------------------------

    def append(self, session_id: str, messages: Sequence[Message]) -> list[int]:
        """Log messages at the end of the session; return their seqs."""
        if not messages:
            return []
        rows = [(m.role, fingerprint(m), _dumps(message_to_dict(m))) for m in messages]
        now = time.time()
        with self._write() as db:
            last = self._last_seq(db, session_id)
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
        return [(seq, _load_message(data, session_id, seq)) for seq, data in rows]

    def message(self, session_id: str, seq: int) -> Message:
        """The exact original message `seq` of the session."""
        rows = self._read(
            "SELECT data FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
        )
        if not rows:
            self.session(session_id)
            raise SessionNotFoundError(f"session {session_id!r} has no message {seq}")
        return _load_message(rows[0][0], session_id, seq)

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
        entries = [v if isinstance(v, int) else message_to_dict(v) for v in view]
        summary = "\n\n".join(receipt.summaries)
        now = time.time()
        with self._write() as db:
            last = self._last_seq(db, session_id)
            seen = last if after_seq is None else after_seq
            if seen > last:
                raise StoreError(
                    f"session {session_id!r}: compaction after message {seen}, "
                    f"but only {last} are logged"
                )
            refs = [v for v in entries if isinstance(v, int)]
            bad = [s for s in (*refs, *replaced) if not 1 <= s <= seen]
            if bad:
                raise StoreError(
                    f"session {session_id!r}: compaction names messages {bad[:5]} "
                    f"outside the logged 1..{seen}"
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
                    _dumps(entries),
                    json.dumps(sorted(set(replaced))),
                    summary,
                    receipt.tokens_before,
                    receipt.tokens_after,
                    _dumps(receipt.to_dict(include_archive=False)),
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
                message = _load_message(data, session_id, seq)
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
        return [_record(session_id, row) for row in rows]

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
                record = _record(session_id, latest)
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
        messages: list[Message] = []
        seqs: list[int | None] = []
        if record is not None:
            for entry in record.view:
                if isinstance(entry, int):
                    if entry not in kept:
                        raise StoreError(
                            f"session {session_id!r}: compaction {record.number} names "
                            f"message {entry}, which is not in the log"
                        )
                    messages.append(_load_message(kept[entry], session_id, entry))
                    seqs.append(entry)
                else:
                    messages.append(entry)
                    seqs.append(None)
        for seq, data in tail:
            messages.append(_load_message(data, session_id, seq))
            seqs.append(seq)
        return tuple(messages), tuple(seqs)

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
        words = re.findall(r"\w+", query)
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
            RecallHit(s, int(q), r, _substring_snippet(text, needle), 0.0, text)
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


def new_session_id() -> str:
    """A sortable, unique session id: UTC time plus randomness."""
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{now}-{secrets.token_hex(3)}"


def _check_id(session_id: str) -> None:
    if not _SESSION_ID.match(session_id):
        raise StoreError(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_', ':' or '-' "
            "(at most 128 characters)"
        )


def _session_info(row: Sequence[Any]) -> SessionInfo:
    sid, created, updated, agent, model, dialect, meta, n_messages, n_compactions = row
    return SessionInfo(
        sid, created, updated, agent, model, dialect, json.loads(meta), n_messages, n_compactions
    )


def _record(session_id: str, row: Sequence[Any]) -> CompactionRecord:
    number, after, view, replaced, summary, before, after_tokens, receipt, created = row
    entries: list[int | Message] = []
    for i, entry in enumerate(json.loads(view)):
        if isinstance(entry, int):
            entries.append(entry)
        else:
            entries.append(message_from_dict(entry, f"compaction {number} view[{i}]"))
    return CompactionRecord(
        session_id,
        int(number),
        int(after),
        tuple(entries),
        tuple(json.loads(replaced)),
        summary,
        before,
        after_tokens,
        json.loads(receipt),
        created,
    )


def _load_message(data: str, session_id: str, seq: int) -> Message:
    return message_from_dict(json.loads(data), f"session {session_id} message {seq}")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _iso(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="seconds")


def _substring_snippet(text: str, needle: str, width: int = 60) -> str:
    at = text.lower().find(needle.lower())
    if at < 0:
        return text[: width * 2]
    start, stop = max(0, at - width), min(len(text), at + len(needle) + width)
    return (
        ("…" if start else "")
        + text[start:at]
        + "["
        + text[at : at + len(needle)]
        + "]"
        + text[at + len(needle) : stop]
        + ("…" if stop < len(text) else "")
    )
