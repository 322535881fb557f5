"""`mask`: old tool results become a short placeholder; the original goes to the archive.

The placeholder keeps what a reader needs to carry on: the tool and its argument, the size,
the outcome, the error lines, the test summary, identifiers, and the handle under which the
original can be recalled. The tool call and its result stay paired (only the result's content
changes), so the transcript stays valid. Outputs are masked largest gain first, and only as
many as the target needs. Where room is left, the pipeline gives an output's head and tail
back beside its placeholder (`with_excerpt`); a later mask takes that excerpt back first.
This strategy must never drop a message, touch a recent one, or touch a protected one
except for the old results riding in a user's turn (its words stay verbatim).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from compaction._textcache import text_cache
from compaction.messages import (
    ImagePart,
    Message,
    Part,
    ToolCallPart,
    ToolResultPart,
    handle_for,
)
from compaction.strategies.base import StepReport, Workspace
from compaction.summarize import signals
from compaction.summarize.digest import (
    MASK_PREFIX,
    Placeholder,
    read_placeholder,
    write_placeholder,
)
from compaction.summarize.digest.events import call_actions, outcome_of_result


class MaskStrategy(BaseModel):
    """Replace old tool outputs by placeholders, largest saving first, until the target is
    met (with no target: every old output)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False
    needs_summarizer: ClassVar[bool] = False

    kind: Literal["mask"] = "mask"
    min_chars: int = Field(default=300, ge=0, description="Outputs shorter than this stay.")
    max_error_lines: int = Field(default=5, ge=0, le=50)

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        calls: dict[str, ToolCallPart] = {}
        candidates: list[tuple[int, int]] = []  # (-tokens, index)
        for index, slot in enumerate(work.slots):
            for call in slot.message.tool_calls:
                calls[call.id] = call
            if not work.maskable(index) or not slot.message.tool_results:
                continue
            if any(self._worth_masking(r) for r in slot.message.tool_results):
                candidates.append((-slot.tokens, index))
        # Largest first: a placeholder costs about the same whatever it stands for, so the
        # largest output is the largest gain, and the fewest outputs are masked.
        affected = 0
        for _, index in sorted(candidates):
            if work.fits():
                break
            slot = work.slots[index]
            masked = self.mask_message(slot.message, calls)
            if masked is not None and work.measure(masked) < slot.tokens:
                work.replace(index, masked, "masked")
                affected += 1
        return StepReport(self.kind, before, work.total(), affected, f"{affected} outputs masked")

    def mask_message(self, message: Message, calls: dict[str, ToolCallPart]) -> Message | None:
        """The message with each large result masked, or None when nothing is worth masking."""
        parts: list[Part] = []
        changed = False
        for part in message.parts:
            if isinstance(part, ToolResultPart) and self._worth_masking(part):
                call = calls.get(part.tool_call_id)
                text = self.placeholder(part, call, handle_for(message))
                parts.append(part.with_text(text))
                changed = True
            else:
                parts.append(part)
        return message.with_parts(parts) if changed else None

    def _worth_masking(self, part: ToolResultPart) -> bool:
        text = part.text
        if text.startswith(MASK_PREFIX):
            # A placeholder given an excerpt when there was room gives it back first.
            earlier = read_placeholder(text)
            return earlier is not None and bool(earlier.excerpt)
        has_image = any(isinstance(p, ImagePart) for p in part.content)
        return has_image or len(text) >= self.min_chars

    def placeholder(self, part: ToolResultPart, call: ToolCallPart | None, handle: str) -> str:
        """The text standing in for `part`; `handle` names the archived original message."""
        images = sum(1 for p in part.content if isinstance(p, ImagePart))
        name, arguments = (call.name, call.arguments) if call is not None else (None, None)
        return _placeholder_text(
            part.text, part.is_error, images, name, arguments, handle, self.max_error_lines
        )


@text_cache()
def _placeholder_text(
    text: str,
    is_error: bool,
    images: int,
    name: str | None,
    arguments: str | None,
    handle: str,
    max_error_lines: int,
) -> str:
    """A placeholder's text, cached: an agent's next compaction masks the same outputs."""
    earlier = read_placeholder(text)
    if earlier is not None:
        return write_placeholder(dataclasses.replace(earlier, excerpt=""))
    outcome, errors, tests = outcome_of_result(name, arguments, text, is_error=is_error)
    lines = text.count("\n") + 1 if text else 0
    what = name if name is not None else "tool"
    if name is not None:
        target = _target_of(name, arguments or "")
        if target:
            what += f" `{signals.clip(target, 100)}`"
    size = f"{lines} lines, {len(text)} chars" + (f", {images} images" if images else "")
    return write_placeholder(
        Placeholder(
            what,
            size,
            outcome,
            handle,
            tuple(errors[:max_error_lines]),
            signals.identifiers(text),
            tests,
        )
    )


def _target_of(name: str, arguments: str) -> str:
    """What a call acted on, for the placeholder: its command, else its file or pattern."""
    actions = call_actions(name, arguments)
    for action in actions:
        if action.kind == "command" and action.command:
            return action.command
    for action in actions:
        if action.path:
            return action.path
        if action.kind == "search" and action.text:
            return action.text
    return ""


# An excerpt shorter than this is not worth the lines it takes.
_MIN_EXCERPT_CHARS = 240
#: Room, in tokens, below which no excerpt is tried (about the shortest one worth having).
MIN_EXCERPT_TOKENS = 64


def with_excerpt(
    masked: Message, original: Message, budget: int, measure: Callable[[Message], int]
) -> Message | None:
    """`masked` with the head and tail of each output its placeholders stand for added to
    them, the whole taking at most `budget` tokens; None when no excerpt worth having fits.
    `original` is the message `masked` was made from (the same parts, in the same order)."""
    masked_parts = [
        (i, part, _own_text(source), placeholder)
        for i, (part, source) in enumerate(zip(masked.parts, original.parts, strict=False))
        if isinstance(part, ToolResultPart)
        and isinstance(source, ToolResultPart)
        and (placeholder := read_placeholder(part.text)) is not None
        and not placeholder.excerpt
        and len(source.text) > len(part.text)
    ]
    if not masked_parts:
        return None
    tokens = measure(masked)
    chars_total = sum(len(source) for _, _, source, _ in masked_parts)
    per_token = chars_total / max(measure(original) - tokens, 1)
    chars = int((budget - tokens) * per_token * 0.9)
    for _ in range(4):
        parts = list(masked.parts)
        for i, part, source, placeholder in masked_parts:
            share = chars * len(source) // chars_total
            if share < _MIN_EXCERPT_CHARS or share >= len(source):
                continue
            head, tail, elided = head_and_tail(source, share)
            excerpt = f"{head}\n[… {elided} chars elided …]\n{tail}"
            parts[i] = part.with_text(
                write_placeholder(dataclasses.replace(placeholder, excerpt=excerpt))
            )
        if parts == list(masked.parts):
            return None
        message = masked.with_parts(parts)
        over = measure(message) - budget
        if over <= 0:
            return message
        chars -= int(over * per_token) + 16
    return None


def _own_text(result: ToolResultPart) -> str:
    """An output's own text: an earlier excerpt's, when it is a placeholder already."""
    earlier = read_placeholder(result.text)
    return earlier.excerpt if earlier is not None and earlier.excerpt else result.text


def head_and_tail(text: str, keep: int) -> tuple[str, str, int]:
    """About `keep` characters of `text`, half from each end, cut at line breaks where a
    line break is near: (head, tail, characters left out between them)."""
    half = max(keep // 2, 1)
    head = text[:half]
    cut = head.rfind("\n")
    if cut > half // 2:
        head = head[:cut]
    tail = text[-half:]
    cut = tail.find("\n")
    if 0 <= cut < half // 2:
        tail = tail[cut + 1 :]
    return head, tail, len(text) - len(head) - len(tail)
