"""Invariants of DESIGN.md §6, property-tested over random transcripts and random targets."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction.compactor import Compactor, validate_for
from compaction.config import CompactionConfig
from compaction.messages import (
    Conversation,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.providers.base import CompletionRequest
from compaction.providers.testing import FunctionProvider

_words = (
    st.lists(
        st.sampled_from(
            [
                "the",
                "test",
                "fails",
                "src/app.py",
                "KeyError",
                "I'll",
                "use",
                "sqlite",
                "TODO:",
                "retry",
                "exit",
                "code",
                "1",
                "passed",
                "Traceback",
                "value",
                "set",
                "timeout",
                "to",
                "30s",
                "\n",
                "error:",
                "never",
                "edit",
                "migrations",
            ]
        ),
        min_size=1,
        max_size=120,
    )
    .map(" ".join)
    .filter(lambda s: bool(s.strip()))
)

_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@st.composite
def transcripts(draw: st.DrawFn, dialect: str) -> Conversation:
    messages: list[Message] = [Message.text_message("system", draw(_words))]
    turns = draw(st.integers(1, 12))
    counter = 0
    for turn in range(turns):
        user_parts: list[Part] = [TextPart(draw(_words))]
        if draw(st.booleans()) and draw(st.booleans()):
            user_parts.append(ImagePart(_PNG, media_type="image/png", width=64, height=64))
        messages.append(Message("user", tuple(user_parts)))
        for _ in range(draw(st.integers(0, 4))):
            parallel = draw(st.integers(1, 3))
            parts: list[Part] = []
            if dialect == "anthropic" and draw(st.booleans()):
                parts.append(ReasoningPart(draw(_words), signature="sig-" + str(counter)))
            if draw(st.booleans()):
                parts.append(TextPart(draw(_words)))
            ids = []
            for _ in range(parallel):
                counter += 1
                ids.append(f"call_{counter}")
                name = draw(st.sampled_from(["bash", "read_file", "edit_file"]))
                args = (
                    {"command": "pytest -x"} if name == "bash" else {"path": f"src/m{counter}.py"}
                )
                parts.append(ToolCallPart(ids[-1], name, json.dumps(args)))
            messages.append(Message("assistant", tuple(parts)))
            results = [
                ToolResultPart(
                    i, (TextPart(draw(_words) * draw(st.integers(1, 20))),), draw(st.booleans())
                )
                for i in ids
            ]
            if dialect == "anthropic":
                messages.append(Message("user", tuple(results)))
            else:
                messages.extend(Message("tool", (r,)) for r in results)
        if dialect == "anthropic" or draw(st.booleans()) or turn == turns - 1:
            messages.append(Message.text_message("assistant", draw(_words)))
    if draw(st.booleans()):
        messages.append(Message.text_message("user", "live: " + draw(_words)))
    return Conversation(tuple(messages), model="gpt-4o", dialect=dialect)


def _live_turn(conversation: Conversation) -> Message | None:
    for message in reversed(conversation.messages):
        if message.is_user_turn:
            return message
    return None


def _contains_parts(haystack: Conversation, message: Message) -> bool:
    """The message's parts appear, verbatim and in order, inside one message of `haystack`."""
    for candidate in haystack:
        if candidate.role != message.role:
            continue
        parts = candidate.parts
        n = len(message.parts)
        if any(parts[i : i + n] == message.parts for i in range(len(parts) - n + 1)):
            return True
    return False


PIPELINES: tuple[tuple[str, ...], ...] = (
    ("mask", "digest", "truncate"),
    ("summarize", "truncate"),
    ("mask", "sequence", "digest", "truncate"),
)


def _model(request: CompletionRequest) -> dict[str, object]:
    """A summarizer whose answer grows with its input, as a real one's would."""
    size = len(request.messages[-1].text)
    return {
        "summary": "The agent worked. " * (1 + size // 2000),
        "kept_facts": ["x"],
        "next_steps": [],
    }


def _check(
    conversation: Conversation,
    ratio: float,
    keep_recent: int,
    first_user: bool,
    pipeline: tuple[str, ...] = PIPELINES[0],
) -> None:
    config = CompactionConfig.from_dict(
        {
            "keep_recent_n": keep_recent,
            "pin": {"first_user_message": first_user},
            "strategies": [{"kind": k} for k in pipeline],
        }
    )

    def compactor() -> Compactor:
        return Compactor(config, summarizer=FunctionProvider(_model))

    before = compactor().count(conversation)
    target = max(int(before * ratio), 1)
    result = compactor().compact(conversation, max_tokens=target)
    out = result.conversation
    receipt = result.receipt
    assert receipt.status != "failed", receipt.reason
    assert validate_for(out) == [], [str(v) for v in validate_for(out)]
    if receipt.protected_tokens <= target:
        assert receipt.tokens_after <= target, receipt.to_dict(include_archive=False)
    assert (receipt.tokens_after <= target) == (receipt.status in ("compacted", "noop"))
    assert out.messages[0] == conversation.messages[0]
    live = _live_turn(conversation)
    if live is not None:
        assert _contains_parts(out, live)
    again = compactor().compact(conversation, max_tokens=target)
    assert again.conversation == out
    assert again.receipt.summaries == receipt.summaries


_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(
    transcripts("openai"),
    st.floats(0.01, 1.0),
    st.integers(0, 10),
    st.booleans(),
    st.sampled_from(PIPELINES),
)
def test_openai_invariants(
    conversation: Conversation, ratio: float, keep: int, first: bool, pipeline: tuple[str, ...]
) -> None:
    assert validate_for(conversation) == []
    _check(conversation, ratio, keep, first, pipeline)


@_SETTINGS
@given(
    transcripts("anthropic"),
    st.floats(0.01, 1.0),
    st.integers(0, 10),
    st.booleans(),
    st.sampled_from(PIPELINES),
)
def test_anthropic_invariants(
    conversation: Conversation, ratio: float, keep: int, first: bool, pipeline: tuple[str, ...]
) -> None:
    assert validate_for(conversation) == [], [str(v) for v in validate_for(conversation)]
    _check(conversation, ratio, keep, first, pipeline)
