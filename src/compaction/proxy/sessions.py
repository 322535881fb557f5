"""Sessions: what of a request is new, and whether (and how) to compact it before it goes
upstream. The pieces it composes live beside it:

    identity.py   which session a request belongs to (the header, else a hash)
    branches.py   which line of the session's history a request extends, and the view as
                  the client sends it now
    policy.py     how hard to compact after the upstream refused a request as too long

Each session has its own `asyncio.Lock`, its own branches, each with a `SessionLog` (the
store's append-only log and the model-visible view) and a `Compactor` (whose anti-thrash
memory and summarizer circuit breaker are per conversation); only the token counters are
shared, one per model, and they are thread-safe. Concurrent sessions never share anything
else.

The next request of a session re-sends the whole history plus a turn. When it extends a
branch, only the new items are decoded and logged, and the view's older messages keep their
identity. The proxy never counts on its own: one `Compactor.should_compact` per request
counts the view (the counter keeps a running total per message sequence, so that costs
about the new messages) and decides; a compaction's receipt says what the view counts
after it. Once a session has compacted, each request is forwarded as its fields (model,
tools, stream, …) around the log's view, which holds the earlier summaries: the summarize
strategy is anchored on the previous summary, so each compaction pays only for the newly
dropped span. Until a session
first compacts, its requests go upstream byte for byte as they came. When a request extends
no branch (the client edited, rewound, or retried with different content; or two
conversations share a hash), it starts a fresh one: a new log (`<session>.<random>`,
`meta.branch_of` naming the session) seeded with the request's whole history. Compactions of
the old branch are not reused by the new one.

Validation. A request the proxy forwards untouched is the upstream's to judge, never
validated, so the proxy stays transparent for servers with looser rules. A compaction is
validated once, by the compactor, on its result (the history it came from only when the
result breaks a rule, to tell the compaction's violations from the client's). When the
compacted view keeps a rule the client's own history broke, or the history holds what the
proxy cannot decode (a role of a newer API), the request goes as it came (a warning naming
where, `compaction_proxy_invalid_history_total`), and so do the branch's later requests,
which re-send that history: the proxy never refuses what the upstream would take, and the
compactor answers only for the violations it would add. (A client's rule break inside the
span a compaction replaces is gone from what goes upstream.)

This module must never see a header other than the session header, nor log message content.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from starlette.concurrency import run_in_threadpool

from compaction.compactor import CompactionResult, Compactor, Receipt
from compaction.config import CompactionConfig
from compaction.exceptions import (
    CompactionError,
    DecodeError,
    HistoryDivergedError,
    LogConflictError,
)
from compaction.log import SessionLog
from compaction.messages import Conversation, Message
from compaction.providers.base import Provider
from compaction.proxy.apis import Api
from compaction.proxy.branches import Branch, logged_items, map_items
from compaction.proxy.errors import ProxyError, StatedWindow
from compaction.proxy.identity import SESSION_HEADER, session_key
from compaction.proxy.metrics import Metrics
from compaction.proxy.policy import overflow_target
from compaction.proxy.tenants import NO_KEY, scoped
from compaction.proxy.work import Offload
from compaction.store import SessionStore
from compaction.tokens import ConversationCounter

__all__ = ["SESSION_HEADER", "Prepared", "Session", "Sessions", "Stats", "overflow_target"]

logger = logging.getLogger("compaction.proxy")


@dataclass
class Stats:
    """Per session. `tokens_before` / `tokens_after` sum over its compactions; the `last_`
    pair is the last request's: the session's view plus the request's new messages, then
    what went upstream."""

    requests: int = 0
    compactions: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    last_tokens_before: int | None = None
    last_tokens_after: int | None = None
    last_receipt: dict[str, Any] | None = None


@dataclass
class Session:
    key: str
    api: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    branches: list[Branch] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        s = self.stats
        return {
            "id": self.key,
            "api": self.api,
            "model": self.model,
            "branches": len(self.branches),
            "log": self.branches[0].log.session_id if self.branches else None,
            "requests": s.requests,
            "compactions": s.compactions,
            "tokens_before": s.tokens_before,
            "tokens_after": s.tokens_after,
            "last_tokens_before": s.last_tokens_before,
            "last_tokens_after": s.last_tokens_after,
            "last_receipt": s.last_receipt,
        }


@dataclass
class Prepared:
    """What to send upstream for one request, and what a retry needs: `body`, the request's
    bytes, go as they came unless the proxy rewrote the request; then `sent` is the body it
    wrote, parsed, for the app to add its recall tool to and serialize once."""

    body: bytes
    session: Session | None = None
    branch: Branch | None = None
    shell: Conversation | None = None
    tokens: int = 0
    view_size: int = 0
    sent: dict[str, Any] | None = None
    compaction: Receipt | None = None
    max_output: int = 0  # the reply tokens the request reserves in the window

    @property
    def rewritten(self) -> bool:
        return self.sent is not None


class Sessions:
    """Every session this process has seen recently (at most `max_sessions` in memory; an
    evicted one resumes from the store on its next request)."""

    def __init__(
        self,
        store: SessionStore,
        config: CompactionConfig,
        *,
        summarizer: Provider | None = None,
        metrics: Metrics | None = None,
        max_sessions: int = 2048,
        offload: Offload | None = None,
    ) -> None:
        self.offload = offload or Offload()
        self.store = store
        self.config = config
        self.summarizer = summarizer
        self.metrics = metrics or Metrics()
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._counters: dict[tuple[str | None, str], ConversationCounter] = {}

    # -- identity --------------------------------------------------------------------------

    def key_for(self, api: Api, payload: dict[str, Any], header: str | None) -> str:
        return session_key(api, payload, header)

    def _session(self, key: str, api: Api) -> Session:
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = Session(key, api.name)
            self._evict()
        else:
            self._sessions.move_to_end(key)
        return session

    def _evict(self) -> None:
        while len(self._sessions) > self.max_sessions:
            for key, session in self._sessions.items():
                if not session.lock.locked():
                    del self._sessions[key]
                    break
            else:
                return

    def get(self, key: str) -> Session | None:
        return self._sessions.get(key)

    def status(self) -> dict[str, Any]:
        sessions = [s.to_dict() for s in reversed(self._sessions.values())]
        return {"sessions": sessions, "count": len(sessions)}

    # -- the request path --------------------------------------------------------------------

    async def prepare(
        self,
        api: Api,
        payload: dict[str, Any],
        body: bytes,
        header: str | None,
        tenant: str = NO_KEY,
    ) -> Prepared:
        """Log the request's new messages and compact when the policy says so; return the
        body to forward (the original bytes unless the session's view differs from them).
        The session is `tenant`'s (`compaction.proxy.tenants`)."""
        large = self.offload.large(len(body))
        key = scoped(await self.offload.run(large, self.key_for, api, payload, header), tenant)
        session = self._session(key, api)
        async with session.lock:
            try:
                return await self._prepare(session, api, payload, body, large)
            except ProxyError:
                raise
            except DecodeError as e:
                # Decoding fails before anything is logged. A history the proxy cannot read
                # (a role of a newer API, …) is the upstream's to judge, as under budget.
                logger.warning(
                    "session %s: the proxy cannot read the client's history (%s); "
                    "forwarding it as it came, uncompacted",
                    key,
                    e,
                )
                self.metrics.invalid_history[api.name] += 1
                return Prepared(body, session)
            except Exception:
                # The in-memory state may be half updated; the store has what was logged.
                # Forget the session so its next request resumes from the store.
                if self._sessions.get(key) is session:
                    del self._sessions[key]
                raise

    async def _prepare(
        self, session: Session, api: Api, payload: dict[str, Any], body: bytes, large: bool
    ) -> Prepared:
        """`large`: the request's CPU-heavy steps run in the worker pool (`Offload`)."""
        session.stats.requests += 1
        session.model = payload.get("model") if isinstance(payload.get("model"), str) else None
        shell = api.shell(payload)
        branch = await self._place(session, api, payload, shell, large)
        shell = self._with_cached_tools(branch, payload, shell)
        conversation = branch.log.conversation(**_fields(shell))
        # The one count of the request: the compactor's, per message cached by content and
        # kept as a running total, so it costs about the request's new messages.
        decision = await self.offload.run(large, branch.compactor.should_compact, conversation)
        session.stats.last_tokens_before = decision.tokens
        prepared = Prepared(
            body, session, branch, shell, decision.tokens, max_output=api.max_output_tokens(payload)
        )
        if decision.compact and not branch.breaks_rules:
            result = await self._compact(session, branch, conversation, api)
            if result is not None and result.receipt.inherited_violations:
                # The client's own history breaks a rule its compaction would keep: the
                # upstream took it under budget and is the judge of it; a compaction could
                # only be blamed. Its later requests re-send that history: they go as they
                # come without being compacted again.
                violations = result.receipt.inherited_violations
                logger.warning(
                    "session %s: the client's history breaks %d %s rule(s) (first: %s); "
                    "forwarding it as it came, uncompacted",
                    session.key,
                    len(violations),
                    api.name,
                    violations[0],
                )
                self.metrics.invalid_history[api.name] += 1
                branch.breaks_rules = True
                session.stats.last_tokens_after = decision.tokens
                return Prepared(body, session, tokens=decision.tokens)
            if result is not None:
                prepared.compaction = result.receipt
                prepared.tokens = result.receipt.tokens_after
        if branch.rewritten:
            prepared.sent = await self.offload.run(
                large, lambda: api.encode(shell, branch.as_sent(api, branch.items))
            )
        prepared.view_size = len(branch.log.messages)
        session.stats.last_tokens_after = prepared.tokens
        return prepared

    async def compact_harder(
        self, api: Api, prepared: Prepared, stated: StatedWindow | None = None
    ) -> Prepared | None:
        """After the upstream said the request did not fit: compact the same view to
        `overflow_target` tokens, whatever the policy; None when no view can fit, when that
        changed nothing, or when the session moved on meanwhile."""
        session, branch, shell = prepared.session, prepared.branch, prepared.shell
        if session is None or branch is None or shell is None:
            return None
        target = overflow_target(prepared.tokens, stated, prepared.max_output)
        if target is None:
            return None
        async with session.lock:
            if session.branches[0] is not branch or len(branch.log.messages) != prepared.view_size:
                return None
            conversation = branch.log.conversation(**_fields(shell))
            result = await self._compact(session, branch, conversation, api, target=target)
            if result is None:
                return None
            messages = branch.log.messages
            encoded = await self.offload.run(
                self.offload.large(len(prepared.body)),
                lambda: api.encode(shell, branch.as_sent(api, branch.items)),
            )
            return replace(
                prepared,
                sent=encoded,
                tokens=result.receipt.tokens_after,
                view_size=len(messages),
                compaction=result.receipt,
            )

    # -- pieces ----------------------------------------------------------------------------

    async def _place(
        self,
        session: Session,
        api: Api,
        payload: dict[str, Any],
        shell: Conversation,
        large: bool = False,
    ) -> Branch:
        """The branch this request extends, with the request's new messages logged.

        When another process (a second replica on a shared store) appended to the session
        since this one read it, the append is refused; the session is read again from the
        store and the request placed once more, so nothing is logged twice."""
        try:
            return await self._place_once(session, api, payload, shell, large)
        except LogConflictError as e:
            logger.info("session %s: %s; reading it again from the store", session.key, e)
            session.branches.clear()
            return await self._place_once(session, api, payload, shell, large)

    async def _place_once(
        self,
        session: Session,
        api: Api,
        payload: dict[str, Any],
        shell: Conversation,
        large: bool,
    ) -> Branch:
        run = functools.partial(self.offload.run, large)
        items = api.items(payload)
        head = api.head(payload)
        for i, branch in enumerate(session.branches):
            if branch.extended_by(items, head):
                assert branch.items is not None and items is not None
                n = len(branch.items)
                tail = await run(api.decode_tail, items, n)
                if tail is None:
                    decoded = await run(lambda: list(api.decode(payload).messages))
                    await run(branch.log.sync, decoded)
                    branch.logged = None
                else:
                    if tail:
                        await run(branch.log.append, *tail)
                    if branch.logged is not None:
                        branch.logged.extend(items[n:])
                branch.items, branch.head = items, head
                if i:
                    session.branches.insert(0, session.branches.pop(i))
                return branch
        history = await run(lambda: list(api.decode(payload).messages))
        if not session.branches:
            branch = await self._open(session, api, shell, session.key)
            if branch.log.messages or branch.rewritten:
                try:
                    await run(lambda: branch.log.sync(history, verify=True))
                    map_items(branch, api, items, history, list(range(1, len(history) + 1)))
                except HistoryDivergedError as e:
                    if await run(self._resume_moved, branch, api, shell, items, history):
                        session.branches.insert(0, branch)
                    else:
                        logger.info("session %s: %s; starting a branch", session.key, e)
                        session.branches.insert(0, branch)
                        branch = await self._new_branch(session, api, shell, history, items, large)
                else:
                    session.branches.insert(0, branch)
            else:
                seqs = await run(branch.log.append, *history)
                map_items(branch, api, items, history, seqs)
                session.branches.insert(0, branch)
        else:
            logger.info("session %s: the history does not extend a logged one", session.key)
            branch = await self._new_branch(session, api, shell, history, items, large)
        session.branches.remove(branch)
        session.branches.insert(0, branch)
        branch.items, branch.head = items, head
        return branch

    def _resume_moved(
        self,
        branch: Branch,
        api: Api,
        shell: Conversation,
        items: list[Any] | None,
        history: list[Message],
    ) -> bool:
        """Resume a stored branch whose history the request continues once the fields
        clients move are set aside (a proxy restarted in a Claude Code session): log the new
        messages and map the items; False when the request diverges for real."""
        logged = [m for _, m in self.store.messages(branch.log.session_id)]
        wire = logged_items(api, shell, logged, history, items)
        if wire is None or items is None:
            return False
        new = history[len(logged) :]
        if new:
            branch.log.append(*new)
        lead = len(history) - len(items)
        branch.logged = [*wire, *items[len(wire) :]]
        branch.item_seq0 = lead + 1  # seqs count the session's history from 1
        return True

    async def _new_branch(
        self,
        session: Session,
        api: Api,
        shell: Conversation,
        history: list[Message],
        items: list[Any] | None,
        large: bool = False,
    ) -> Branch:
        branch_id = f"{session.key}.{secrets.token_hex(4)}"
        branch = await self._open(session, api, shell, branch_id, branch_of=session.key)
        seqs = await self.offload.run(large, branch.log.append, *history)
        map_items(branch, api, items, history, seqs)
        session.branches.insert(0, branch)
        return branch

    async def _open(
        self,
        session: Session,
        api: Api,
        shell: Conversation,
        log_id: str,
        *,
        branch_of: str | None = None,
    ) -> Branch:
        meta = (
            {"proxy": api.name}
            if branch_of is None
            else {"proxy": api.name, "branch_of": branch_of}
        )

        def open_log() -> tuple[SessionLog, bool]:
            log = SessionLog.open(
                self.store, log_id, agent="proxy", model=shell.model, dialect=api.name, meta=meta
            )
            return log, log.info().compactions > 0

        # Opening reads the session's log from the store, however long it grew: off the loop.
        log, rewritten = await self.offload.run(True, open_log)
        counter = await self._counter(shell)
        compactor = Compactor(self.config, counter=counter, summarizer=self.summarizer)
        return Branch(log, compactor, rewritten=rewritten)

    async def _counter(self, shell: Conversation) -> ConversationCounter:
        model = self.config.tokenizer_model or shell.model
        provider = "anthropic" if shell.dialect == "anthropic" else "openai"
        key = (model, provider)
        counter = self._counters.get(key)
        if counter is None:
            # Loading a tokenizer reads files (or the network, when allowed): off the loop.
            counter = await run_in_threadpool(
                ConversationCounter.for_model, model, provider=provider
            )
            counter = self._counters.setdefault(key, counter)
        return counter

    def _with_cached_tools(
        self, branch: Branch, payload: dict[str, Any], shell: Conversation
    ) -> Conversation:
        """The shell with the tool schemas of the previous request when they are equal, so
        the counter's per-schema cache answers for them."""
        raw = payload.get("tools")
        if raw is not None and branch.raw_tools is not None and raw == branch.raw_tools:
            return replace(shell, tools=branch.tools)
        branch.raw_tools = raw
        branch.tools = shell.tools
        return shell

    async def _compact(
        self,
        session: Session,
        branch: Branch,
        conversation: Conversation,
        api: Api,
        *,
        target: int | None = None,
    ) -> CompactionResult | None:
        """Compact `conversation`, the branch's view, in a worker thread and log it; None
        when nothing changed. A compaction that keeps rules the view already broke is
        logged only when forced to a `target` (after an overflow, where the request as it
        came cannot fit either); otherwise it is returned unlogged, for the caller to judge."""
        forced = target is not None

        def compact() -> CompactionResult:
            result = branch.compactor.compact(conversation, max_tokens=target, force=forced)
            receipt = result.receipt
            if (
                result.conversation is not conversation
                and receipt.status in ("compacted", "target_unreachable")
                and (forced or not receipt.inherited_violations)
            ):
                branch.log.record(conversation, result)
            return result

        try:
            result = await run_in_threadpool(compact)
        except CompactionError as e:
            logger.warning("session %s: compaction failed, forwarding as is: %s", session.key, e)
            return None
        receipt = result.receipt
        if receipt.inherited_violations and not forced:
            return result
        session.stats.last_receipt = receipt.to_dict(include_archive=False)
        logger.info(
            "session %s: compaction %s, %d → %d tokens",
            session.key,
            receipt.status,
            receipt.tokens_before,
            receipt.tokens_after,
        )
        if receipt.status not in ("compacted", "target_unreachable") or (
            receipt.tokens_after >= receipt.tokens_before
        ):
            return None
        branch.rewritten = True
        session.stats.compactions += 1
        session.stats.tokens_before += receipt.tokens_before
        session.stats.tokens_after += receipt.tokens_after
        self.metrics.compacted(api.name, receipt.tokens_before, receipt.tokens_after)
        return result


def _fields(shell: Conversation) -> dict[str, Any]:
    return {
        "tools": shell.tools,
        "model": shell.model,
        "dialect": shell.dialect,
        "provider_data": shell.provider_data,
    }
