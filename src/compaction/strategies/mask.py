"""`mask`: old tool results become a short placeholder; the original goes to the archive.

The placeholder keeps what a reader needs to carry on: the tool, the size, the outcome, the
error lines, and the handle under which the original can be recalled. The tool call and its
result stay paired (only the result's content changes), so the transcript stays valid.
This strategy must never drop a message or touch a protected or recent one.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from compaction.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compaction.strategies.base import StepReport, Workspace, handle_for
from compaction.summarize import signals

MASK_PREFIX = "[tool output masked:"


class MaskStrategy(BaseModel):
    """Replace old tool outputs (oldest first) by placeholders until the target is met."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    last_resort: ClassVar[bool] = False
    needs_summarizer: ClassVar[bool] = False

    kind: Literal["mask"] = "mask"
    min_chars: int = Field(default=300, ge=0, description="Outputs shorter than this stay.")
    max_error_lines: int = Field(default=5, ge=0, le=50)

    def apply(self, work: Workspace) -> StepReport:
        before = work.total()
        calls: dict[str, ToolCallPart] = {}
        affected = 0
        for index, slot in enumerate(work.slots):
            for call in slot.message.tool_calls:
                calls[call.id] = call
            if work.fits():
                break
            if not work.compactable(index) or not slot.message.tool_results:
                continue
            masked = self.mask_message(slot.message, calls)
            if masked is not None:
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
                parts.append(
                    ToolResultPart(
                        part.tool_call_id,
                        (TextPart(text),),
                        part.is_error,
                        provider_data=part.provider_data,
                    )
                )
                changed = True
            else:
                parts.append(part)
        if not changed:
            return None
        return Message(
            message.role,
            tuple(parts),
            name=message.name,
            pinned=message.pinned,
            provider_data=message.provider_data,
        )

    def _worth_masking(self, part: ToolResultPart) -> bool:
        text = part.text
        if text.startswith(MASK_PREFIX):
            return False
        has_image = any(isinstance(p, ImagePart) for p in part.content)
        return has_image or len(text) >= self.min_chars

    def placeholder(self, part: ToolResultPart, call: ToolCallPart | None, handle: str) -> str:
        """The text standing in for `part`; `handle` names the archived original message."""
        text = part.text
        outcome, errors = signals.outcome_of(text, is_error=part.is_error)
        lines = text.count("\n") + 1 if text else 0
        images = sum(1 for p in part.content if isinstance(p, ImagePart))
        what = call.name if call is not None else "tool"
        if call is not None:
            arguments = call.parsed_arguments() or {}
            target = signals.command_of(call.name, arguments) or next(
                (
                    str(arguments[k])
                    for k in ("path", "file", "filename", "pattern")
                    if k in arguments
                ),
                "",
            )
            if target:
                what += f" `{signals.clip(target, 100)}`"
        size = f"{lines} lines, {len(text)} chars" + (f", {images} images" if images else "")
        head = f"{MASK_PREFIX} {what}; {size}; {outcome}; original kept as {handle}]"
        detail = [f"! {e}" for e in errors[: self.max_error_lines]]
        found = signals.identifiers(text, limit=6)
        if found:
            detail.append("ids: " + ", ".join(found))
        status = signals.test_summary(text)
        if status:
            detail.append(f"tests: {status}")
        return "\n".join([head, *detail])
