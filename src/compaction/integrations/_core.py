"""What every framework hook shares: one `SessionLog` per thread, the framework's full
history synced into it incrementally, compaction when a trigger fires, and the model's view
mapped back to framework messages.

    threads = Threads(codec, config=CompactionConfig(token_threshold=100_000))
    view = threads.view("thread-42", history, tools=..., model=...)   # before each model call
    view.messages                                                   # what the model is shown

A framework hands the whole history again on every call. Each thread remembers the
framework messages it has logged; when the new history extends them (the same objects, or
equal ones rebuilt from storage), only the new suffix is decoded, counted and logged. The
view is the log's: earlier summaries stay in it, so a summary is paid once per compacted span,
not once per model call. A message the view keeps verbatim goes back to the model as the
framework's own object; only messages a compaction made or changed are encoded.

A history that does not extend the logged one (edited, rewound) opens a new branch of the
thread (`<session>.<random>`), seeded with that whole history.

This module must never import a framework, and never change the history it is given: the
framework keeps its full history, only the model's view is compacted.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import logging
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from compaction.compactor import CompactionResult, Compactor
from compaction.config import CompactionConfig
from compaction.exceptions import CompactionError, HistoryDivergedError, LogConflictError
from compaction.log import SessionLog
from compaction.messages import Message
from compaction.providers.base import Provider, ToolSpec
from compaction.store import SessionStore, open_store
from compaction.tools import Tool, recall_tool
from compaction.triggers import Decision

__all__ = [
    "Codec",
    "Thread",
    "Threads",
    "Unit",
    "View",
    "conversation_fields",
    "recall_spec",
    "require",
    "session_id_for",
    "tool_schema",
]

F = TypeVar("F")
logger = logging.getLogger("compaction.integrations")

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


def require(module: str, extra: str, framework: str) -> Any:
    """Import `module`, or raise an ImportError saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"compaction.integrations for {framework} needs {module!r}: "
            f"pip install 'llm-compaction[{extra}]'"
        ) from e


def session_id_for(thread_id: object) -> str:
    """A valid session id for any thread id: the id itself when a store takes it, else its
    letters and digits with a hash of the whole (so two different ids never meet)."""
    text = str(thread_id)
    if _SESSION_ID.match(text):
        return text
    slug = re.sub(r"[^A-Za-z0-9._:-]+", "-", text).strip("-._:")[:80] or "thread"
    digest = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
    return f"{slug}-{digest}"


@dataclass(frozen=True, slots=True)
class Unit:
    """Framework messages `history[start : start + count]` and the neutral messages they
    decode to (a unit is the smallest span a framework message is decoded in: one message,
    or a run of output items that make one assistant message)."""

    start: int
    count: int
    messages: list[Message]


class Codec(Protocol[F]):
    """How one framework's messages become neutral messages and back."""

    def decode(self, history: Sequence[F], start: int) -> list[Unit]:
        """The units of `history[start:]`, in order, covering it whole."""
        ...

    def encode(self, messages: Sequence[Message]) -> list[F]:
        """Framework messages for neutral ones a compaction made or changed."""
        ...


@dataclass
class Thread(Generic[F]):
    """One thread's log, its compactor (anti-thrash memory and circuit breaker are per
    conversation), the framework messages logged so far, and for each unit of them the
    seq of its first neutral message (`firsts`)."""

    key: str
    log: SessionLog
    compactor: Compactor
    history: list[F] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    firsts: dict[int, int] = field(default_factory=dict)  # first seq → index in `units`
    compactions: int = 0


@dataclass
class View(Generic[F]):
    """What the model is shown for one call, and what happened on the way."""

    messages: list[F]
    decision: Decision
    result: CompactionResult | None = None
    decoded: int = 0  # framework messages decoded in this call (the new suffix)

    @property
    def compacted(self) -> bool:
        return self.result is not None and self.result.receipt.status in (
            "compacted",
            "target_unreachable",
        )


class Threads(Generic[F]):
    """The threads of one hook: a `SessionLog` and a `Compactor` per thread id, over one
    store (a path, URL or `SessionStore`; default: in memory, for this process). At most
    `max_threads` stay in memory; one evicted resumes from the store when it comes back."""

    def __init__(
        self,
        codec: Codec[F],
        *,
        config: CompactionConfig | None = None,
        store: SessionStore | str | None = None,
        summarizer: Provider | None = None,
        provider: str | None = None,
        dialect: str | None = None,
        agent: str | None = None,
        same: Callable[[F, F], bool] | None = None,
        max_threads: int = 1024,
    ) -> None:
        self.codec = codec
        self.config = config or CompactionConfig(window_fraction=0.8)
        self.store = store if isinstance(store, SessionStore) else open_store(store or ":memory:")
        self.summarizer = summarizer
        self.provider = provider
        self.dialect = dialect
        self.agent = agent
        self._same = same or _same
        self.max_threads = max_threads
        self._threads: OrderedDict[str, Thread[F]] = OrderedDict()

    # -- threads ---------------------------------------------------------------------------

    def thread(self, thread_id: object) -> Thread[F]:
        key = session_id_for(thread_id)
        thread = self._threads.get(key)
        if thread is None:
            thread = self._threads[key] = self._open(key)
            while len(self._threads) > self.max_threads:
                # The least recently used; its next call resumes it from the store.
                self._threads.popitem(last=False)
        else:
            self._threads.move_to_end(key)
        return thread

    def _open(self, session_id: str, **meta: Any) -> Thread[F]:
        log = SessionLog.open(
            self.store, session_id, agent=self.agent, dialect=self.dialect, meta=meta or None
        )
        compactor = Compactor(self.config, provider=self.provider, summarizer=self.summarizer)
        return Thread(session_id, log, compactor, compactions=log.info().compactions)

    def log(self, thread_id: object) -> SessionLog:
        """The session log of a thread (its current branch)."""
        return self.thread(thread_id).log

    # -- the hook path ---------------------------------------------------------------------

    def sync(self, thread_id: object, history: Sequence[F]) -> tuple[Thread[F], int]:
        """Log the messages of `history` beyond those already logged; return the thread and
        how many framework messages were decoded. When another process appended to the
        thread's log meanwhile (a shared store), the log is read again and the history
        placed once more, so nothing is logged twice."""
        try:
            return self._sync(thread_id, history)
        except LogConflictError as e:
            logger.info("thread %s: %s; reading it again from the store", thread_id, e)
            self._threads.pop(session_id_for(thread_id), None)
            return self._sync(thread_id, history)

    def _sync(self, thread_id: object, history: Sequence[F]) -> tuple[Thread[F], int]:
        thread = self.thread(thread_id)
        old = thread.history
        n = len(old)
        if (
            n
            and len(history) >= n
            and all(self._same(a, b) for a, b in zip(old, history, strict=False))
        ):
            decoded = self._append(thread, history, n)
        else:
            decoded = self._resync(thread_id, thread, history)
            thread = self.thread(thread_id)
        thread.history = list(history)
        return thread, decoded

    def _append(self, thread: Thread[F], history: Sequence[F], start: int) -> int:
        units = self.codec.decode(history, start) if start < len(history) else []
        new = [m for unit in units for m in unit.messages]
        if new:
            seqs = thread.log.append(*new)
            self._index(thread, units, seqs[0])
        return len(history) - start

    @staticmethod
    def _index(thread: Thread[F], units: list[Unit], first_seq: int) -> None:
        seq = first_seq
        for unit in units:
            thread.firsts[seq] = len(thread.units)
            thread.units.append(unit)
            seq += len(unit.messages)

    def _resync(self, thread_id: object, thread: Thread[F], history: Sequence[F]) -> int:
        """A thread seen for the first time in this process (its log may be in the store
        already), or a history that does not extend the logged one: decode it whole."""
        units = self.codec.decode(history, 0) if history else []
        flat = [m for unit in units for m in unit.messages]
        try:
            thread.log.sync(flat, verify=bool(thread.history))
        except HistoryDivergedError:
            key = f"{session_id_for(thread_id)}.{secrets.token_hex(4)}"
            thread = self._open(key, branch_of=session_id_for(thread_id))
            self._threads[session_id_for(thread_id)] = thread
            thread.log.append(*flat)
        thread.units, thread.firsts = [], {}
        self._index(thread, units, 1)
        return len(history)

    def should_compact(self, thread_id: object, history: Sequence[F], **fields: Any) -> Decision:
        thread, _ = self.sync(thread_id, history)
        return thread.compactor.should_compact(thread.log.conversation(**fields))

    def view(self, thread_id: object, history: Sequence[F], **fields: Any) -> View[F]:
        """The model's view of `history` for this call: synced, compacted when a trigger
        fires, in framework messages. `fields` are request fields of `Conversation` (tools,
        model) the count needs."""
        thread, decoded = self.sync(thread_id, history)
        conversation = thread.log.conversation(**fields)
        decision = thread.compactor.should_compact(conversation)
        result = None
        if decision.compact:
            try:
                result = thread.log.compact(thread.compactor, fields=fields)
            except CompactionError as e:
                # The model still gets its (uncompacted) view; the framework may report
                # the overflow, which is better than failing the agent's step here.
                logger.warning(
                    "thread %s: compaction failed, the view is unchanged: %s", thread_id, e
                )
            else:
                if result.receipt.status in ("compacted", "target_unreachable"):
                    thread.compactions += 1
        if not thread.compactions:
            return View(list(history), decision, result, decoded)
        return View(self._framework_view(thread), decision, result, decoded)

    def _framework_view(self, thread: Thread[F]) -> list[F]:
        """The log's view in framework messages: a unit whose neutral messages all stand
        verbatim, in order, is the framework's own messages; the rest is encoded."""
        messages, seqs = thread.log.messages, thread.log.seqs
        history = thread.history
        out: list[F] = []
        pending: list[Message] = []
        j = 0
        while j < len(messages):
            seq = seqs[j]
            i = thread.firsts.get(seq) if seq is not None else None
            if seq is not None and i is not None:
                unit = thread.units[i]
                width = len(unit.messages)
                if tuple(seqs[j : j + width]) == tuple(range(seq, seq + width)):
                    if pending:
                        out.extend(self.codec.encode(pending))
                        pending = []
                    out.extend(history[unit.start : unit.start + unit.count])
                    j += width
                    continue
            pending.append(messages[j])
            j += 1
        if pending:
            out.extend(self.codec.encode(pending))
        return out

    # -- recall ----------------------------------------------------------------------------

    def recall_tool(self, thread_id: object) -> Tool:
        """The `recall` tool bound to a thread's log (`compaction.tools.recall_tool`)."""
        return recall_tool(self.thread(thread_id).log)

    def recall(self, thread_id: object, query: str) -> str:
        """What the recall tool answers for `query` in this thread."""
        return str(self.recall_tool(thread_id)(query=query))


@functools.cache
def recall_spec() -> ToolSpec:
    """The recall tool's name, description and parameters, as every surface declares it."""
    return recall_tool(SessionLog.open(open_store(":memory:"))).spec


def _same(a: Any, b: Any) -> bool:
    return a is b or a == b


def tool_schema(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool declaration as OpenAI Chat Completions writes it (what the counter sizes)."""
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(parameters)},
    }


def conversation_fields(
    *, tools: Sequence[Mapping[str, Any]] = (), model: str | None = None
) -> dict[str, Any]:
    fields: dict[str, Any] = {"tools": tuple(tools)}
    if model is not None:
        fields["model"] = model
    return fields
