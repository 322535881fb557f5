"""`SessionLog`: one session's append-only log, and the view the model sees.

Messages are appended as they happen; a compaction never rewrites them, it adds a record
(the new view: kept messages by seq, summaries and placeholders as new messages) and the
replaced originals go to the archive for `recall`. The view is what the model was last
shown plus everything appended since, so resuming a session by id gives back exactly that.

    log = SessionLog.open(store)                 # a new session (or `session_id=` to resume)
    log.append(Message.text_message("user", "…"))
    result = log.compact(compactor)              # compacts the view when a trigger fires
    log.messages                                 # the model-visible view

This module must never decide what to compact (the `Compactor` does) nor touch SQL (the
store does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compaction.compactor import CompactionResult, Compactor
from compaction.exceptions import HistoryDivergedError, SessionNotFoundError
from compaction.messages import Conversation, Message
from compaction.recall import HANDLE
from compaction.store import RecallHit, SessionInfo, SessionStore, fingerprint

__all__ = ["HistoryDivergedError", "SessionLog", "fingerprint"]


class SessionLog:
    """One session of a `SessionStore`: append, compact, read the view, recall.

    Not thread-safe on its own: one log object serves one conversation at a time (the proxy
    holds a lock per session). The store underneath is shared safely.
    """

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        messages, seqs = store.view(session_id)
        self._messages = list(messages)
        self._seqs = list(seqs)
        self._digests: list[str] | None = None  # loaded on first `sync`
        info = store.session(session_id)
        # The last logged seq: messages a compaction dropped are no longer in the view, but
        # the next record must still say it saw them.
        self._last = info.messages
        # Without them a compactor would count with no tokenizer model and keep an Anthropic
        # view to OpenAI's rules.
        self._fields = {
            k: v for k, v in (("model", info.model), ("dialect", info.dialect)) if v is not None
        }

    @classmethod
    def open(
        cls,
        store: SessionStore,
        session_id: str | None = None,
        *,
        create: bool = True,
        agent: str | None = None,
        model: str | None = None,
        dialect: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SessionLog:
        """Resume `session_id`, or start it (a new id when None). With `create=False` a
        missing session is a `SessionNotFoundError`."""
        if session_id is None:
            info = store.create_session(agent=agent, model=model, dialect=dialect, meta=meta)
            return cls(store, info.id)
        if create:
            store.ensure_session(session_id, agent=agent, model=model, dialect=dialect, meta=meta)
        else:
            store.session(session_id)
        return cls(store, session_id)

    # -- reading ---------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        """The model-visible view: what the model was last shown plus what came since."""
        return tuple(self._messages)

    @property
    def seqs(self) -> tuple[int | None, ...]:
        """The logged seq of each view message (None for messages a compaction made)."""
        return tuple(self._seqs)

    def info(self) -> SessionInfo:
        return self.store.session(self.session_id)

    def conversation(self, **fields: Any) -> Conversation:
        """The view as a `Conversation`, with the given request fields (tools, model, …);
        `model` and `dialect` default to the session's."""
        return Conversation(messages=tuple(self._messages), **{**self._fields, **fields})

    def recall(self, query: str, limit: int = 5) -> list[RecallHit]:
        """The originals this session's compactions replaced that `query` names: an archive
        handle (`m-…`, as placeholders show it) gets the original kept under it, words get
        the best matches (`compaction.recall` describes the hits)."""
        return self.store.recall(query, session_id=self.session_id, limit=limit)

    def original(self, key: int | str) -> Message:
        """The exact original: logged message `key` (a seq), or the one kept under archive
        handle `key` (`m-…`). `SessionNotFoundError` when the session has no such message."""
        if isinstance(key, int):
            return self.store.message(self.session_id, key)
        hits = (
            self.store.recall(key, session_id=self.session_id, limit=1)
            if HANDLE.fullmatch(key)
            else []
        )
        if not hits or hits[0].message is None:
            raise SessionNotFoundError(
                f"session {self.session_id!r} keeps no original as {key!r} (an archive handle "
                "is m- and 12 hex digits, as placeholders show it)"
            )
        return hits[0].message

    # -- writing ---------------------------------------------------------------------------

    def append(self, *messages: Message) -> list[int]:
        """Log messages and add them to the view. If another writer appended to the session
        since this log read it, `LogConflictError` and nothing is written: open the log
        again (`SessionLog.open`) to see what the other wrote."""
        seqs = self.store.append(self.session_id, messages, expected_last=self._last)
        self._messages.extend(messages)
        self._seqs.extend(seqs)
        self._last = max(self._last, *seqs) if seqs else self._last
        if self._digests is not None:
            self._digests.extend(fingerprint(m) for m in messages)
        return seqs

    def sync(self, history: Sequence[Message], *, verify: bool = False) -> int:
        """Log the messages of `history` (a client's full message list) beyond those already
        logged; return how many were new.

        `history` must extend the logged history: the message count may only grow, and the
        last logged message must be where it was, unchanged (with `verify`, every logged
        message is compared). Otherwise `HistoryDivergedError` names the first difference and
        nothing is written.
        """
        digests = self._logged_digests()
        logged = len(digests)
        if len(history) < logged:
            raise HistoryDivergedError(
                f"session {self.session_id}: the history has {len(history)} messages, "
                f"fewer than the {logged} already logged",
                index=len(history),
            )
        checks = range(logged) if verify else ([0, logged - 1] if logged else [])
        for i in checks:
            if fingerprint(history[i]) != digests[i]:
                raise HistoryDivergedError(
                    f"session {self.session_id}: message {i} differs from the logged one",
                    index=i,
                )
        new = history[logged:]
        if new:
            self.append(*new)
        return len(new)

    def compact(
        self,
        compactor: Compactor,
        *,
        target_tokens: int | None = None,
        force: bool = False,
        fields: Mapping[str, Any] | None = None,
    ) -> CompactionResult:
        """Compact the view with `compactor` and log the compaction when anything changed.
        `fields` are the conversation's request fields (tools, model, dialect) the compactor
        needs to count and validate; model and dialect default to the session's."""
        conversation = self.conversation(**dict(fields or {}))
        result = compactor.compact(conversation, max_tokens=target_tokens, force=force)
        if result.conversation is not conversation and result.receipt.status in (
            "compacted",
            "target_unreachable",
        ):
            self.record(conversation, result)
        return result

    def record(self, before: Conversation, result: CompactionResult) -> int:
        """Log a compaction of `before` (which must be this log's current view) whose result
        is `result`; the view becomes the result. Returns the compaction's number."""
        if len(before.messages) != len(self._messages) or any(
            a is not b for a, b in zip(before.messages, self._messages, strict=True)
        ):
            raise ValueError("record() needs the compaction of this log's current view")
        by_identity = {id(m): seq for m, seq in zip(self._messages, self._seqs, strict=True) if seq}
        view: list[Message | int] = []
        seqs: list[int | None] = []
        for message in result.conversation.messages:
            seq = by_identity.get(id(message))
            view.append(message if seq is None else seq)
            seqs.append(seq)
        kept = {s for s in seqs if s is not None}
        replaced = [s for s in self._seqs if s is not None and s not in kept]
        # The archive holds the view's own message objects: their seqs are known here, so
        # the store need not look for them by fingerprint.
        handles = {h: by_identity.get(id(m), m) for h, m in result.receipt.archive.items()}
        number = self.store.record_compaction(
            self.session_id,
            view=view,
            replaced=replaced,
            receipt=result.receipt,
            after_seq=self._last,
            handles=handles,
        )
        self._messages = list(result.conversation.messages)
        self._seqs = seqs
        return number

    def _logged_digests(self) -> list[str]:
        if self._digests is None:
            self._digests = self.store.digests(self.session_id)
        return self._digests
