"""The `Compactor`: trigger → pipeline → validate → receipt.

It decides whether to compact, protects what must survive (system and pinned messages, the
live user turn), runs the strategies first outside the recent tail and then, only if the
target still is not met, inside it, fits the result to the dialect's rules, validates it,
and records everything in a `Receipt` (including every original it replaced).

A compaction that would break the transcript changes nothing: the original comes back with
the receipt saying why. This module must never encode or decode a wire format itself.
"""

from __future__ import annotations

import collections
import hashlib
import re
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from compaction.config import CompactionConfig
from compaction.dialects import decode_any, get_dialect, shape
from compaction.dialects.base import Violation
from compaction.exceptions import TargetUnreachableError
from compaction.messages import (
    Conversation,
    Group,
    Message,
    SummaryPart,
    TextPart,
    ToolResultPart,
    group_messages,
    live_turn_index,
)
from compaction.providers.base import Provider
from compaction.serialize import message_to_dict
from compaction.strategies import StepReport, Workspace
from compaction.strategies.base import Removal, Slot
from compaction.strategies.pipeline import run_pipeline
from compaction.summarize.llm import Summarizer, load_template
from compaction.summarize.tools import harness_turn
from compaction.tokens import ConversationCounter, context_window, provider_for_dialect
from compaction.triggers import Decision, should_compact

# A window for a compaction model the registry does not know: small enough to be safe.
DEFAULT_SUMMARY_WINDOW = 32_000

Status = Literal["compacted", "noop", "target_unreachable", "failed"]


@dataclass
class Receipt:
    """What one compaction did. `archive` maps each handle to the original message it names."""

    status: Status
    trigger: tuple[str, ...]
    target_tokens: int | None
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    steps: list[StepReport] = field(default_factory=list)
    removed: list[Removal] = field(default_factory=list)
    archive: dict[str, Message] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    protected_tokens: int = 0
    elapsed_ms: float = 0.0
    estimated: bool = False
    notes: list[str] = field(default_factory=list)
    reason: str | None = None
    # Rules the input already broke that the result still breaks: a compaction answers only
    # for the violations it would add, and leaves the caller to judge these.
    inherited_violations: list[Violation] = field(default_factory=list)

    @property
    def summarizer_calls(self) -> int:
        return sum(s.summarizer_calls for s in self.steps)

    @property
    def target_met(self) -> bool:
        return self.target_tokens is None or self.tokens_after <= self.target_tokens

    def to_dict(self, *, include_archive: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "status": self.status,
            "reason": self.reason,
            "trigger": list(self.trigger),
            "target_tokens": self.target_tokens,
            "target_met": self.target_met,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "protected_tokens": self.protected_tokens,
            "estimated": self.estimated,
            "steps": [s.to_dict() for s in self.steps],
            "summarizer": {
                "calls": self.summarizer_calls,
                "input_tokens": sum(s.input_tokens for s in self.steps),
                "output_tokens": sum(s.output_tokens for s in self.steps),
                "ms": round(sum(s.summarizer_ms for s in self.steps), 1),
                "errors": [e for s in self.steps for e in s.errors],
            },
            "removed": [
                {"index": r.index, "handle": r.handle, "action": r.action} for r in self.removed
            ],
            "summaries": self.summaries,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "notes": self.notes,
        }
        if include_archive:
            data["archive"] = {h: message_to_dict(m) for h, m in sorted(self.archive.items())}
        return data


@dataclass
class CompactionResult:
    conversation: Conversation
    receipt: Receipt

    def raise_for_target(self) -> CompactionResult:
        """Raise `TargetUnreachableError` when the target was not met; else return self."""
        if self.receipt.status == "target_unreachable":
            raise TargetUnreachableError(
                self.receipt.reason or "target not met", receipt=self.receipt
            )
        return self


Hook = Callable[[Conversation, Receipt | None], None]


class Compactor:
    """Compacts conversations under one `CompactionConfig`.

    Token counts are cached per message, so `should_compact` after appending one message
    costs about that message. One compactor may serve many conversations.
    """

    def __init__(
        self,
        config: CompactionConfig | None = None,
        *,
        counter: ConversationCounter | None = None,
        provider: str | None = None,
        summarizer: Provider | None = None,
        before_compact: Hook | None = None,
        after_compact: Hook | None = None,
    ) -> None:
        self.config = config or CompactionConfig()
        self._provider = provider
        self._counter = counter
        self._counters: dict[tuple[str | None, str], ConversationCounter] = {}
        self.before_compact = before_compact
        self.after_compact = after_compact
        # Per conversation (by `conversation_key`), bounded: the anti-thrash floor and the
        # summarizer, whose circuit breaker remembers that conversation's failures.
        self._floors: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._summary_provider = summarizer
        self._summarizers: collections.OrderedDict[str, Summarizer] = collections.OrderedDict()

    # -- counting --------------------------------------------------------------------------

    def counter_for(self, conversation: Conversation) -> ConversationCounter:
        """The counter for this conversation's model and provider (one per pair, kept, so
        its per-message cache serves every later check)."""
        if self._counter is not None:
            return self._counter
        model = self.config.tokenizer_model or conversation.model
        provider = self._provider or provider_for_dialect(conversation.dialect)
        key = (model, provider)
        if key not in self._counters:
            self._counters[key] = ConversationCounter.for_model(model, provider=provider)
        return self._counters[key]

    def count(self, conversation: Conversation) -> int:
        return self.counter_for(conversation).count(conversation).total

    def window(self, conversation: Conversation) -> int | None:
        model = self.config.tokenizer_model or conversation.model
        return context_window(model, self.config.context_windows)

    def summarizer_for(
        self, counter: ConversationCounter, conversation: Conversation | None = None
    ) -> Summarizer | None:
        """The summarizer of this conversation (kept across its compactions: its circuit
        breaker has memory), or None when no summarizer provider was given."""
        if self._summary_provider is None:
            return None
        key = conversation_key(conversation) if conversation is not None else ""
        summarizer = self._summarizers.get(key)
        if summarizer is None:
            config = self.config
            template = None
            if config.prompt is not None or config.prompt_file is not None:
                template = load_template(text=config.prompt, path=config.prompt_file)
            window = (
                config.summary_window
                or context_window(config.model, config.context_windows)
                or DEFAULT_SUMMARY_WINDOW
            )
            summarizer = Summarizer(
                self._summary_provider,
                count=counter.counter.count_text,
                model=config.model,
                window=window,
                max_output_tokens=config.summary_max_tokens,
                structured=config.structured_summary,
                instructions=config.instructions,
                templates={"summary": template} if template is not None else None,
                failure_threshold=config.summarizer_failures,
            )
        _remember(self._summarizers, key, summarizer)
        return summarizer

    # -- deciding --------------------------------------------------------------------------

    def should_compact(self, conversation: Conversation | Sequence[Any]) -> Decision:
        conversation = as_conversation(conversation)
        tokens = self.count(conversation)
        decision = should_compact(
            conversation, self.config, tokens=tokens, window=self.window(conversation)
        )
        key = conversation_key(conversation) if self._floors else ""
        floor = self._floors.get(key) if self._floors else None
        if decision and floor is not None:
            # Anti-thrash: the last pass could not get below the trigger; wait for real growth.
            if tokens < floor * (1 + max(self.config.min_reduction, 0.01)):
                return Decision(
                    False,
                    (f"cooling down: last compaction could not go below {floor} tokens",),
                    tokens,
                    decision.target,
                )
            del self._floors[key]
        return decision

    # -- compacting ------------------------------------------------------------------------

    def compact(
        self,
        conversation: Conversation | Sequence[Any],
        *,
        max_tokens: int | None = None,
        force: bool = False,
        target_tokens: int | None = None,
    ) -> CompactionResult:
        """Compact when a trigger fires (or always, with `force` or an explicit `max_tokens`).

        `conversation` is a `Conversation`, or a list of messages (`Message`s, or wire
        messages of any dialect, decoded as `decode_any` detects). `target_tokens` is the
        deprecated name of `max_tokens`.

        The result's receipt says what happened; the conversation is unchanged when nothing
        needed doing, when nothing could be done, and when compaction failed.
        """
        conversation = as_conversation(conversation)
        if target_tokens is not None:
            warnings.warn(
                "compact(target_tokens=...) is deprecated: use max_tokens=...",
                DeprecationWarning,
                stacklevel=2,
            )
            max_tokens = target_tokens if max_tokens is None else max_tokens
        target_tokens = max_tokens
        started = time.perf_counter()
        counter = self.counter_for(conversation)
        counted = counter.count(conversation)
        tokens = counted.total
        decision = self.should_compact(conversation)
        target = target_tokens if target_tokens is not None else decision.target
        trigger = decision.reasons
        if target_tokens is not None:
            trigger = (*trigger, f"explicit target {target_tokens} tokens")
        elif force:
            trigger = (*trigger, "forced")

        def receipt(status: Status, result: Conversation, after: int, **extra: Any) -> Receipt:
            return Receipt(
                status=status,
                trigger=trigger,
                target_tokens=target,
                tokens_before=tokens,
                tokens_after=after,
                messages_before=len(conversation),
                messages_after=len(result),
                elapsed_ms=(time.perf_counter() - started) * 1000,
                estimated=counted.estimated,
                notes=[counter.note] if counter.note else [],
                **extra,
            )

        if not (decision.compact or force or target_tokens is not None):
            return CompactionResult(conversation, receipt("noop", conversation, tokens))
        if target is not None and tokens <= target:
            done = receipt("noop", conversation, tokens, reason="already within the target")
            return CompactionResult(conversation, done)
        if self.before_compact is not None:
            self.before_compact(conversation, None)

        work = self._workspace(conversation, counter, counted.total, target)
        work.summarizer = self.summarizer_for(counter, conversation)
        protected_tokens = work.overhead + sum(
            work.measure(without_results(s.message)) if s.words_only else s.tokens
            for s in work.slots
            if s.protected
        )
        if target is not None and protected_tokens > target:
            # No strategy can meet this target: come as close as it can without losing
            # facts for it, the protected content and a full digest of everything else.
            # Shrinking or dropping digests would lose history and still miss the target.
            work.target = protected_tokens
            work.floor = True
        steps = run_pipeline(work, self.config.strategies)
        work.target = target
        if (
            target is not None
            and not work.fits()
            and not any(not s.protected and not s.message.is_summary for s in work.slots)
        ):
            # Nothing compactable is left: what remains (protected content and the markers
            # the dialect's shape needs) is the floor no strategy can go below.
            protected_tokens = max(protected_tokens, work.total())
        messages = shape.fold(work.messages, conversation.dialect)
        result = conversation.with_messages(messages)
        after = counter.count(result).total
        summaries = [p.text for m in messages for p in m.parts if isinstance(p, SummaryPart)]
        found = validate_for(result)
        violations = new_violations(conversation, result, found=found)
        if violations:
            failed = receipt(
                "failed",
                conversation,
                tokens,
                steps=steps,
                reason="compaction produced an invalid transcript; the original is returned: "
                + "; ".join(str(v) for v in violations[:3]),
            )
            return CompactionResult(conversation, failed)

        status: Status = "compacted"
        reason = None
        if target is not None and after > target:
            status = "target_unreachable"
            reason = (
                f"the target of {target} tokens cannot be met: what must be kept (system and "
                f"pinned messages, the live user turn, tool schemas) takes {protected_tokens} "
                f"tokens; the best result is {after} tokens"
            )
        meaningful = after <= tokens * (1 - self.config.min_reduction)
        paid = any(s.summarizer_calls for s in steps)
        if target is None and status == "compacted" and not meaningful and not paid:
            unchanged = receipt(
                "noop",
                conversation,
                tokens,
                steps=steps,
                reason=f"no meaningful reduction possible ({tokens} → {after} tokens)",
            )
            return CompactionResult(conversation, unchanged)
        limit = decision.target if target_tokens is None else None
        key = conversation_key(conversation)
        if status != "compacted" or (limit is not None and after > limit):
            _remember(self._floors, key, after)
        else:
            self._floors.pop(key, None)
        done = receipt(
            status,
            result,
            after,
            steps=steps,
            removed=work.removed,
            archive=work.archive,
            summaries=summaries,
            protected_tokens=protected_tokens,
            reason=reason,
            inherited_violations=found,
        )
        if self.after_compact is not None:
            self.after_compact(result, done)
        return CompactionResult(result, done)

    def _workspace(
        self,
        conversation: Conversation,
        counter: ConversationCounter,
        total: int,
        target: int | None,
    ) -> Workspace:
        unfolded = shape.unfold(conversation.messages, conversation.dialect)
        messages = tuple(m for m, _ in unfolded)
        protected, words_only = protected_indices(messages, self.config)
        counts = [counter.count_message(m) for m in messages]
        groups = group_messages(messages)
        recent_start = recent_tail_start(
            messages,
            counts,
            self.config.keep_recent_n,
            self.config.keep_recent_tokens,
            groups=groups,
        )
        live = live_exchange(messages, groups)
        anchored = set(
            shape.anchor_after_first_user(
                messages, groups, protected, first_user_turn(messages), conversation.dialect
            )
        )
        if target is not None and sum(counts[i] for i in anchored) > target // _ANCHOR_SHARE:
            anchored = set()  # the room it would take is worth more than that message's shape
        slots = [
            Slot(
                m,
                origin,
                counts[i],
                i in protected,
                i >= recent_start,
                i in live,
                anchored=i in anchored,
                words_only=i in words_only,
            )
            for i, (m, origin) in enumerate(unfolded)
        ]
        # What belongs to no message (the reply's priming, tool schemas), from the messages as
        # they came: the slots a folded message is split into count their own framing.
        overhead = total - sum(counter.count_message(m) for m in conversation.messages)
        work = Workspace(
            slots,
            counter.count_message,
            overhead,
            target,
            dialect=conversation.dialect,
        )
        work.known_groups(groups)
        return work


def as_conversation(value: Conversation | Sequence[Any]) -> Conversation:
    """`value` as a `Conversation`: a list of `Message`s as it is, a list of wire messages
    decoded in the dialect `detect_dialect` names; anything else is a `TypeError` that says
    how to decode a request body."""
    if isinstance(value, Conversation):
        return value
    got = type(value).__name__
    if isinstance(value, list | tuple):
        if all(isinstance(m, Message) for m in value):
            return Conversation(tuple(value))
        if all(isinstance(m, dict) for m in value):
            return decode_any(list(value))
        odd = next((m for m in value if not isinstance(m, Message | dict)), None)
        if odd is None:
            got = f"a {got} mixing Messages and wire messages"
        else:
            got = f"a {got} holding {type(odd).__name__}"
    raise TypeError(
        f"expected a Conversation or a list of messages, got {got}: decode "
        "a request body first, e.g. OPENAI.decode(body) (or ANTHROPIC.decode, "
        "RESPONSES.decode, decode_any) from compaction.dialects"
    )


# The turn kept beside the user's first message (Anthropic) may take at most 1/N of a target.
_ANCHOR_SHARE = 10

# How many conversations a compactor remembers state for (the least recently used go first).
_CONVERSATIONS = 1024


def _remember(cache: collections.OrderedDict[str, Any], key: str, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _CONVERSATIONS:
        cache.popitem(last=False)


def conversation_key(conversation: Conversation) -> str:
    """What names a conversation across its compactions: its model, dialect, system prompt
    and the first words of its first user message — what stays the same while it grows and
    is compacted (a summary folded into that message comes after its words)."""
    system = next((m.text for m in conversation.messages if m.role == "system"), "")
    first = next((m for m in conversation.messages if m.role == "user"), None)
    words = ""
    if first is not None and first.parts and isinstance(first.parts[0], TextPart):
        words = first.parts[0].text
    seed = "\x00".join((str(conversation.model), str(conversation.dialect), system, words))
    return hashlib.sha256(seed.encode()).hexdigest()[:16]


def live_exchange(messages: tuple[Message, ...], groups: Sequence[Group] | None = None) -> set[int]:
    """The latest tool exchange when it ends the conversation after the live user turn: the
    assistant's calls and the results the model is about to read."""
    if not messages or not messages[-1].tool_results:
        return set()
    last = (groups if groups is not None else group_messages(messages))[-1]
    live_turn = live_turn_index(messages)
    if live_turn is not None and last.start < live_turn:
        # Anthropic: the live user turn itself carries the results; it is protected already.
        return set()
    return set(last.indices())


def protected_indices(
    messages: tuple[Message, ...], config: CompactionConfig
) -> tuple[set[int], set[int]]:
    """(protected, words only). Protected: system and pinned messages, pin-rule matches, the
    first user message, the live turn, the newest message. Words only: those of them whose
    tool results are not protected — the live user turn when it carries the results of an
    earlier call (Anthropic puts them in the user's next message) and the agent has moved on
    since; its words stay verbatim, its results are old output like any other."""
    whole = {i for i, m in enumerate(messages) if m.pinned or m.role == "system"}
    whole |= _protected_whole(messages, config)
    live = live_turn_index(messages)
    if live is None or live in whole:
        return whole, set()
    # The last message's results are what the model is about to read: it is kept whole.
    words_only = {live} if messages[live].tool_results and live != len(messages) - 1 else set()
    return whole | {live}, words_only


def first_user_turn(messages: Sequence[Message]) -> int | None:
    """Index of the first message the user wrote (usually the task): not one an agent's
    harness wrote in the user's name (`tools.harness_turn`: aider's repo map, its reports
    of a command run), or None."""
    return next(
        (i for i, m in enumerate(messages) if m.is_user_turn and harness_turn(m.text) is None),
        None,
    )


def without_results(message: Message) -> Message:
    """`message` without its tool results: what a message protected for its words alone
    keeps at the least (a placeholder for the results aside)."""
    return message.with_parts(tuple(p for p in message.parts if not isinstance(p, ToolResultPart)))


def _protected_whole(messages: tuple[Message, ...], config: CompactionConfig) -> set[int]:
    """What stays verbatim, tool results included, besides system and pinned messages: the
    newest message, the first user message and pin-rule matches."""
    protected: set[int] = set()
    if messages and not messages[-1].tool_results:
        # The newest message (often the final answer) stays verbatim; results the model is
        # about to read are the live exchange, shortened only as the very last resort.
        protected.add(len(messages) - 1)
    if config.pin.first_user_message:
        first = first_user_turn(messages)
        if first is not None:
            protected.add(first)
    if config.pin.patterns:
        patterns = [re.compile(p) for p in config.pin.patterns]
        for i, message in enumerate(messages):
            if any(p.search(message.text) for p in patterns):
                protected.add(i)
    return protected


def recent_tail_start(
    messages: tuple[Message, ...],
    counts: list[int],
    keep_n: int,
    keep_tokens: int | None,
    *,
    groups: Sequence[Group] | None = None,
) -> int:
    """Where the recent tail begins: the last `keep_n` messages, cut to `keep_tokens`, moved
    back to a group boundary so the tail never starts inside a tool exchange."""
    start = max(len(messages) - keep_n, 0)
    if keep_tokens is not None:
        total = 0
        limit = len(messages)
        for i in range(len(messages) - 1, start - 1, -1):
            total += counts[i]
            if total > keep_tokens:
                break
            limit = i
        start = limit
    for group in groups if groups is not None else group_messages(messages):
        if group.start <= start < group.stop:
            return group.start
    return start


def new_violations(
    before: Conversation, after: Conversation, *, found: list[Violation] | None = None
) -> list[Violation]:
    """Violations of `after` beyond those `before` already had (compared by rule); `found`:
    those of `after`, when the caller has them already."""
    found = validate_for(after) if found is None else found
    if not found:
        return []
    budget = collections.Counter(v.rule for v in validate_for(before))
    fresh = []
    for violation in found:
        if budget[violation.rule] > 0:
            budget[violation.rule] -= 1
        else:
            fresh.append(violation)
    return fresh


def validate_for(conversation: Conversation) -> list[Violation]:
    """Violations of the provider the conversation is headed for (OpenAI for `.traj`)."""
    own = conversation.dialect in ("openai", "anthropic", "responses")
    name = conversation.dialect if own and conversation.dialect else "openai"
    return get_dialect(name).validate(conversation)
