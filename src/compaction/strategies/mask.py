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
import json
from collections.abc import Callable
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from compaction._textcache import text_cache
from compaction.messages import (
    ImagePart,
    Message,
    Part,
    TextPart,
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
from compaction.summarize.digest.events import (
    call_actions,
    call_does,
    open_file_line,
    outcome_of_result,
    output_in_text,
    report_findings,
)
from compaction.summarize.tools import (
    TextResult,
    actions_in_text,
    harness_turn,
    react_step,
    shell_call,
    text_calls,
    text_result,
    text_result_text,
    todo_changes_in_reply,
    todos_in_result,
    user_reply_in,
)


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
            message = slot.message
            for call in message.tool_calls:
                calls[call.id] = call
            if message.tool_results:
                worth = work.maskable(index) and any(
                    self._worth_masking(r.text, r.content, calls.get(r.tool_call_id))
                    for r in message.tool_results
                )
            elif results := _text_results(message):
                # Results of calls written in text (Codebuff), each a text part of its own.
                worth = work.compactable(index) and any(
                    self._worth_masking(r.output) for _, r in results
                )
            else:
                # An output written into a message's text: the message is the environment's
                # alone, or the words around the output stay as they are (`mask_text`).
                where = output_in_text(message, _before(work, index))
                worth = (
                    where is not None
                    and work.compactable(index)
                    and self._worth_masking(_text_of(message, where))
                )
            if worth:
                candidates.append((-slot.tokens, index))
        # Largest first: a placeholder costs about the same whatever it stands for, so the
        # largest output is the largest gain, and the fewest outputs are masked.
        affected = 0
        for _, index in sorted(candidates):
            if work.fits():
                break
            slot = work.slots[index]
            if slot.message.tool_results:
                masked = self.mask_message(slot.message, calls)
            elif _text_results(slot.message):
                masked = self.mask_text_results(slot.message, _before(work, index))
            else:
                masked = self.mask_text(
                    slot.message, _text_action(work, index), _before(work, index)
                )
            if masked is not None and work.measure(masked) < slot.tokens:
                work.replace(index, masked, "masked")
                affected += 1
        return StepReport(self.kind, before, work.total(), affected, f"{affected} outputs masked")

    def mask_message(self, message: Message, calls: dict[str, ToolCallPart]) -> Message | None:
        """The message with each large result masked, or None when nothing is worth masking."""
        parts: list[Part] = []
        changed = False
        for part in message.parts:
            call = calls.get(part.tool_call_id) if isinstance(part, ToolResultPart) else None
            if isinstance(part, ToolResultPart) and self._worth_masking(
                part.text, part.content, call
            ):
                # The user's reply after the output (Cline's feedback on a command) stays.
                output, reply = _output_and_reply(part.text)
                text = self.placeholder(part.with_text(output), call, handle_for(message))
                parts.append(part.with_text(f"{text}\n\n{reply}" if reply else text))
                changed = True
            else:
                parts.append(part)
        return message.with_parts(parts) if changed else None

    def mask_text_results(self, message: Message, before: Message | None) -> Message | None:
        """The message with each large result of a call written in text masked, inside its
        `<tool_result>` element; None when nothing is worth masking. `before`: the reply
        that wrote the calls, which name what each result is of."""
        written = (
            text_calls(before.text) if before is not None and before.role == "assistant" else None
        )
        awaiting = list(written[1]) if written is not None else []
        parts: list[Part] = list(message.parts)
        changed = False
        for index, result in _text_results(message):
            call = next((c for c in awaiting if c.name == result.name), None)
            if call is not None:
                awaiting.remove(call)
            if not self._worth_masking(result.output):
                continue
            stands_for = ToolCallPart("", result.name, json.dumps(call.arguments)) if call else None
            text = self.placeholder(
                ToolResultPart("", (TextPart(result.output),)), stands_for, handle_for(message)
            )
            parts[index] = TextPart(text_result_text(result, text))
            changed = True
        return message.with_parts(parts) if changed else None

    def mask_text(
        self, message: Message, action: tuple[str, str] | None, before: Message | None = None
    ) -> Message | None:
        """The message with the output written into its text (`output_in_text`; `before`:
        the message before it) masked, the text before the output kept; None when there is
        none worth masking. `action`: (tool name, arguments) of the action the output
        answers, where it is known."""
        where = output_in_text(message, before)
        if where is None or not self._worth_masking(_text_of(message, where)):
            return None
        index, start = where
        part = message.parts[index]
        assert isinstance(part, TextPart)
        if action is None and (turn := harness_turn(part.text)) and turn.command:
            action = shell_call(turn.command)  # the run its turn names
        name, arguments = action if action is not None else (None, None)
        placeholder = _placeholder_text(
            part.text[start:], False, 0, name, arguments, handle_for(message), self.max_error_lines
        )
        parts = list(message.parts)
        parts[index] = dataclasses.replace(part, text=part.text[:start] + placeholder)
        return message.with_parts(parts)

    def _worth_masking(
        self, text: str, content: tuple[Part, ...] = (), call: ToolCallPart | None = None
    ) -> bool:
        # The user's words in a tool's result (feedback, a denial, the answer to a question
        # the agent asked them through a tool) are the user's: only an output before them
        # may be masked.
        if call is not None and call_does("ask", call.name, call.arguments):
            return False
        text = _output_and_reply(text)[0]
        if not text.strip():
            return False
        if text.startswith(MASK_PREFIX):
            # A placeholder given an excerpt when there was room gives it back first.
            earlier = read_placeholder(text)
            return earlier is not None and bool(earlier.excerpt)
        has_image = any(isinstance(p, ImagePart) for p in content)
        # A to-do tool's reply by id is the list's state: later changes name its ids; one
        # stating the whole list is the list.
        return (
            (has_image or len(text) >= self.min_chars)
            and not todo_changes_in_reply(text)
            and todos_in_result(text) is None
        )

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
            state=open_file_line(text) if "(Open file: " in text else "",
            findings=(
                report_findings(text)
                if name and call_does("delegate", name, arguments or "")
                else ()
            ),
        )
    )


def _output_and_reply(text: str) -> tuple[str, str]:
    """A tool result's output and the user's reply after it ("" for none; all of it is the
    reply where the result is nothing else)."""
    reply = user_reply_in(text)
    if reply is None:
        return text, ""
    return text[: reply.at], text[reply.at :]


def _text_results(message: Message) -> list[tuple[int, TextResult]]:
    """The results of calls written in text a user message holds, by part (`text_result`)."""
    if message.role != "user" or message.tool_results or "<tool_result>" not in message.text:
        return []
    return [
        (i, result)
        for i, p in enumerate(message.parts)
        if isinstance(p, TextPart) and (result := text_result(p.text)) is not None
    ]


def _text_of(message: Message, where: tuple[int, int]) -> str:
    """The output `output_in_text` found at `where` in `message`."""
    part = message.parts[where[0]]
    assert isinstance(part, TextPart)
    return part.text[where[1] :]


def _before(work: Workspace, index: int) -> Message | None:
    return work.slots[index - 1].message if index > 0 else None


def _text_action(work: Workspace, index: int) -> tuple[str, str] | None:
    """(tool, arguments) of the action written in text that the output in slot `index`
    answers: the ReAct step of the same message, else the assistant's message before it
    (its first command, as a shell call)."""
    message = work.slots[index].message
    if message.role == "assistant":
        step = react_step(message.text)
        return (step.tool, json.dumps(step.arguments)) if step is not None else None
    before = _before(work, index)
    if before is None or before.role != "assistant" or before.tool_calls:
        return None
    for action in actions_in_text(before.text):
        if action.kind == "command" and action.command:
            return shell_call(action.command)
    return None


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
    outputs = [m for m in _masked_outputs(masked, original) if not m.placeholder.excerpt]
    if not outputs:
        return None
    tokens = measure(masked)
    chars_total = sum(len(m.source) for m in outputs)
    per_token = chars_total / max(measure(original) - tokens, 1)
    chars = int((budget - tokens) * per_token * 0.9)
    for _ in range(4):
        parts = list(masked.parts)
        for output in outputs:
            share = chars * len(output.source) // chars_total
            if share < _MIN_EXCERPT_CHARS or share >= len(output.source):
                continue
            head, tail, elided = head_and_tail(output.source, share)
            excerpt = f"{head}\n[… {elided} chars elided …]\n{tail}"
            placeholder = write_placeholder(
                dataclasses.replace(output.placeholder, excerpt=excerpt)
            )
            parts[output.index] = _with_text(parts[output.index], output.before + placeholder)
        if parts == list(masked.parts):
            return None
        message = masked.with_parts(parts)
        over = measure(message) - budget
        if over <= 0:
            return message
        chars -= int(over * per_token) + 16
    return None


@dataclasses.dataclass(frozen=True)
class _MaskedOutput:
    index: int  # of the part holding the placeholder
    before: str  # the part's text before the placeholder (a ReAct step's thought and action)
    placeholder: Placeholder
    source: str  # the output's own text: an earlier excerpt's, where it had one


def _masked_outputs(masked: Message, original: Message) -> list[_MaskedOutput]:
    """The placeholders of `masked` that stand for a longer output of `original`: its tool
    results', and the one written into its text."""
    found: list[tuple[int, str, str, str]] = []  # (index, before, placeholder, source)
    for i, (part, was_part) in enumerate(zip(masked.parts, original.parts, strict=False)):
        if isinstance(part, ToolResultPart) and isinstance(was_part, ToolResultPart):
            found.append((i, "", part.text, was_part.text))
    where = output_in_text(masked)
    was = output_in_text(original)
    if where is not None and was is None and original.role == "user":
        # A user message's output is all of its text (found so beside the action before it).
        was = (where[0], 0)
    if where is not None and was is not None and where[0] == was[0]:
        text = _text_of(masked, where)
        before = masked.parts[where[0]].text[: where[1]]  # type: ignore[union-attr]
        found.append((where[0], before, text, _text_of(original, was)))
    out = []
    for index, before, text, source in found:
        placeholder = read_placeholder(text)
        if placeholder is not None and len(source) > len(text):
            out.append(_MaskedOutput(index, before, placeholder, _own_text(source)))
    return out


def _with_text(part: Part, text: str) -> Part:
    if isinstance(part, ToolResultPart):
        return part.with_text(text)
    assert isinstance(part, TextPart)
    return dataclasses.replace(part, text=text)


def _own_text(text: str) -> str:
    """An output's own text: an earlier excerpt's, when it is a placeholder already."""
    earlier = read_placeholder(text)
    return earlier.excerpt if earlier is not None and earlier.excerpt else text


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
