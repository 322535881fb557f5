"""What every session store is: the `SessionStore` protocol, the values it returns, and the
rules and decoding that do not depend on the database.

A store keeps three kinds of rows, none ever updated or deleted:

- a **message** as it happened (`seq` 1, 2, … per session), with its fingerprint;
- a **compaction** record: the model-visible view after it (each entry a logged `seq` kept
  verbatim, or a new message such as a summary or a masked placeholder), the seqs it replaced
  and the receipt;
- an **archive** entry for each replaced original, so `recall` finds it by its words;
- a **handle** for each original a compaction kept in its receipt's archive (the `m-…` its
  placeholders show), naming the logged seq, or holding the message when a compaction made
  it, so `recall` finds it by its handle.

The view the model sees is derived: the latest compaction's view, then every message logged
after it. Every backend writes each of these in one transaction and numbers a session's
messages without gaps, whatever else writes to the same database.

This module must never touch a database.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, runtime_checkable

from compaction.compactor import Receipt
from compaction.exceptions import LogConflictError, SessionNotFoundError, StoreError
from compaction.messages import Message
from compaction.serialize import message_from_dict, message_to_dict

__all__ = [
    "CompactionRecord",
    "RecallHit",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionStore",
    "StoreError",
    "check_session_id",
    "new_session_id",
    "redact_url",
]

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
    # What `record_request` counted (the proxy: requests served, by any replica), and the
    # token figures of the last one: the view plus its new messages, then what went upstream.
    requests: int = 0
    last_tokens_before: int | None = None
    last_tokens_after: int | None = None
    # Sums over the session's compactions.
    tokens_before: int = 0
    tokens_after: int = 0

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
            "requests": self.requests,
            "last_tokens_before": self.last_tokens_before,
            "last_tokens_after": self.last_tokens_after,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
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
    """An original a compaction replaced, found by a recall query (`compaction.recall`
    describes the shape every surface shares).

    `seq` is the logged message's number, None for a message a compaction made (a masked
    placeholder, a summary) that a later compaction replaced in turn. `handle` is the
    archive handle a placeholder shows for it (None for originals archived before the store
    kept handles). `text` is the original verbatim as recall searches it (its text, tool
    calls and tool results: `searchable_text`), `message` the whole original; `snippet` marks
    a word match with `[` `]`."""

    session_id: str
    seq: int | None
    role: str
    snippet: str
    score: float
    text: str = ""
    handle: str | None = None
    message: Message | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "seq": self.seq,
            "role": self.role,
            "handle": self.handle,
            "snippet": self.snippet,
            "score": round(self.score, 4),
            "text": self.text,
        }


@runtime_checkable
class SessionStore(Protocol):
    """The session store every backend implements (`SQLiteStore`, `PostgresStore`); get one
    with `open_store(location)`. Thread-safe: one store object serves every thread."""

    #: Where the store is, for messages: a file path, or a URL without its password.
    path: str

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

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
        """A new, empty session; an id is generated when none is given. An existing id is a
        `StoreError`."""
        ...

    def ensure_session(
        self,
        session_id: str,
        *,
        agent: str | None = None,
        model: str | None = None,
        dialect: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """The session with this id, created when missing (an existing one is unchanged)."""
        ...

    def session(self, session_id: str) -> SessionInfo:
        """The session with its counts; `SessionNotFoundError` when there is none."""
        ...

    def sessions(self, limit: int = 50) -> list[SessionInfo]:
        """Sessions, most recently updated first."""
        ...

    def record_request(
        self, session_id: str, *, tokens_before: int | None, tokens_after: int | None
    ) -> None:
        """Count one request of the session (`SessionInfo.requests`) and keep its token
        figures as the last ones, and mark it updated; `SessionNotFoundError` when there is
        no such session.
        Every writer adds to the same count, so replicas on one database share it."""
        ...

    # -- messages --------------------------------------------------------------------------

    def append(
        self, session_id: str, messages: Sequence[Message], *, expected_last: int | None = None
    ) -> list[int]:
        """Log messages at the end of the session; return their seqs. With `expected_last`,
        only if the session still ends at that seq (`LogConflictError` otherwise, nothing
        written)."""
        ...

    def digests(self, session_id: str) -> list[str]:
        """The fingerprint of every logged message, in order."""
        ...

    def messages(self, session_id: str) -> list[tuple[int, Message]]:
        """Every logged message with its seq, in order (the full, uncompacted history)."""
        ...

    def message(self, session_id: str, seq: int) -> Message:
        """The exact original message `seq` of the session."""
        ...

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
        """Log one compaction: the view after it, the seqs it replaced (archived for recall)
        and its receipt. `after_seq` is the last logged message the compaction saw (default:
        the last one logged). `handles` are the receipt archive's handles, each to the seq of
        the logged message it names or to the message (which the store then looks for among
        the messages the compaction saw); None: the receipt's archive as it is. Returns the
        compaction's number (1, 2, … per session)."""
        ...

    def compactions(self, session_id: str) -> list[CompactionRecord]:
        """Every compaction of the session, in order."""
        ...

    def latest_receipts(self, limit: int = 50) -> dict[str, dict[str, Any]]:
        """The receipt of the latest compaction of each of the `limit` most recently updated
        sessions (as `sessions(limit)` lists them) that has one, by session id; one read."""
        ...

    def view(self, session_id: str) -> tuple[tuple[Message, ...], tuple[int | None, ...]]:
        """The model-visible messages and their seqs (None for messages a compaction made):
        the latest compaction's view, then every message logged after it."""
        ...

    # -- recall ----------------------------------------------------------------------------

    def recall(
        self, query: str, *, session_id: str | None = None, limit: int = 5
    ) -> list[RecallHit]:
        """The originals compactions replaced (in one session, or all) that `query` names.
        A query naming archive handles (`m-…`, anywhere in it) gets the original kept under
        each, in the query's order. Otherwise it is words, every one of which must match
        (prefixes of words too), best matches first; when no word-level match exists, the
        query is looked for as a substring. Each hit carries its handle and the original."""
        ...

    def integrity(self) -> list[str]:
        """Problems the database finds in itself (empty when it is sound)."""
        ...


def new_session_id() -> str:
    """A sortable, unique session id: UTC time plus randomness."""
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{now}-{secrets.token_hex(3)}"


def check_session_id(session_id: str) -> None:
    """Refuse an id a store would not take (`StoreError`)."""
    if not _SESSION_ID.match(session_id):
        raise StoreError(
            f"invalid session id {session_id!r}: use letters, digits, '.', '_', ':' or '-' "
            "(at most 128 characters)"
        )


# -- shared by the backends ---------------------------------------------------------------------


def query_words(query: str) -> list[str]:
    """The words of a recall query; each must match the start of a word of an original."""
    return re.findall(r"\w+", query)


def check_compaction(
    session_id: str,
    *,
    last: int,
    after_seq: int | None,
    view: Sequence[int | object],
    replaced: Sequence[int],
) -> int:
    """The seq a compaction saw (`after_seq`, else the last logged one), once every seq it
    names is checked against the `last` logged; a `StoreError` otherwise."""
    seen = last if after_seq is None else after_seq
    if seen > last:
        raise StoreError(
            f"session {session_id!r}: compaction after message {seen}, but only {last} are logged"
        )
    refs = [v for v in view if isinstance(v, int)]
    bad = [s for s in (*refs, *replaced) if not 1 <= s <= seen]
    if bad:
        raise StoreError(
            f"session {session_id!r}: compaction names messages {bad[:5]} "
            f"outside the logged 1..{seen}"
        )
    return seen


def view_entries(view: Sequence[Message | int]) -> list[int | dict[str, Any]]:
    """A compaction's view as stored: seqs, and new messages as dictionaries."""
    return [v if isinstance(v, int) else message_to_dict(v) for v in view]


def assemble_view(
    session_id: str,
    record: CompactionRecord | None,
    kept: Mapping[int, str],
    tail: Sequence[tuple[int, str]],
) -> tuple[tuple[Message, ...], tuple[int | None, ...]]:
    """The view from the latest compaction `record` (None: no compaction yet), the stored
    data of the messages it keeps by seq, and the messages logged after it."""
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
                messages.append(load_message(kept[entry], session_id, entry))
                seqs.append(entry)
            else:
                messages.append(entry)
                seqs.append(None)
    for seq, data in tail:
        messages.append(load_message(data, session_id, seq))
        seqs.append(seq)
    return tuple(messages), tuple(seqs)


def session_info(row: Sequence[Any]) -> SessionInfo:
    """A `SessionInfo` from the columns `SQLStore` reads (`_SESSION_COLUMNS`)."""
    (sid, created, updated, agent, model, dialect, meta, n_messages, n_compactions) = row[:9]
    requests, last_before, last_after, before, after = row[9:]
    return SessionInfo(
        sid,
        float(created),
        float(updated),
        agent,
        model,
        dialect,
        json.loads(meta),
        int(n_messages),
        int(n_compactions),
        int(requests),
        last_before,
        last_after,
        int(before),
        int(after),
    )


def compaction_record(session_id: str, row: Sequence[Any]) -> CompactionRecord:
    """A record from its stored columns: number, after_seq, view, replaced, summary,
    tokens_before, tokens_after, receipt, created_at."""
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
        float(created),
    )


def load_message(data: str, session_id: str, seq: int) -> Message:
    return message_from_dict(json.loads(data), f"session {session_id} message {seq}")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def substring_snippet(text: str, needle: str, width: int = 60) -> str:
    """`text` around the first occurrence of `needle` (any case), marked with `[` `]`."""
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


def redact_url(url: str) -> str:
    """`url` without its password (in the user part or a `password=` parameter), for
    messages, logs and `SessionStore.path`."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    rest, question, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if at:
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}@{host}" if user else host
    if question:
        kept = [p for p in query.split("&") if p.split("=", 1)[0].lower() != "password"]
        query = "&".join(kept)
        question = "?" if kept else ""
    return f"{scheme}{sep}{netloc}{slash}{path}{question}{query}"


def _iso(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="seconds")


def check_expected_last(session_id: str, expected: int | None, found: int) -> None:
    """Refuse an append whose writer's view of the session is out of date."""
    if expected is not None and expected != found:
        raise LogConflictError(
            f"session {session_id!r} ends at message {found}, not {expected}: another "
            "writer appended to it",
            expected=expected,
            found=found,
        )
