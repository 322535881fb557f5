"""`mask`: old tool results become a short placeholder; the original goes to the archive.

The placeholder keeps what a reader needs to carry on: the tool and its argument, the size,
the outcome, the error lines, the test summary, identifiers, and the handle under which the
original can be recalled. The tool call and its result stay paired (only the result's content
changes), so the transcript stays valid. Outputs are masked largest gain first, and only as
many as the target needs. This strategy must never drop a message or touch a protected or
recent one.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

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
from compaction.summarize.digest import MASK_PREFIX, Placeholder, write_placeholder
from compaction.summarize.digest.events import call_actions, outcome_of_output


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
            if not work.compactable(index) or not slot.message.tool_results:
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
            return False
        has_image = any(isinstance(p, ImagePart) for p in part.content)
        return has_image or len(text) >= self.min_chars

    def placeholder(self, part: ToolResultPart, call: ToolCallPart | None, handle: str) -> str:
        """The text standing in for `part`; `handle` names the archived original message."""
        text = part.text
        outcome, errors = outcome_of_output(
            call.name if call else None, text, is_error=part.is_error
        )
        lines = text.count("\n") + 1 if text else 0
        images = sum(1 for p in part.content if isinstance(p, ImagePart))
        what = call.name if call is not None else "tool"
        if call is not None:
            target = _target_of(call.name, call.arguments)
            if target:
                what += f" `{signals.clip(target, 100)}`"
        size = f"{lines} lines, {len(text)} chars" + (f", {images} images" if images else "")
        return write_placeholder(
            Placeholder(
                what,
                size,
                outcome,
                handle,
                tuple(errors[: self.max_error_lines]),
                signals.identifiers(text, limit=6),
                signals.test_summary(text),
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
