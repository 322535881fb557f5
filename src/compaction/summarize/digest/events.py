"""Reading messages into events: what happened, in order, in a vocabulary every digest
section understands (the user said, the assistant said, a file was touched, a command ran,
a tool failed, the to-do list now reads …).

Tools are understood through `compaction.summarize.tools` (one table for every agent), tool
output through the readers in `compaction.summarize.signals`. This module must never call a
model, count tokens or read a wire format; it must be deterministic.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from compaction._textcache import text_cache
from compaction.messages import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    SummaryPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    handle_for,
)
from compaction.summarize import signals, tools
from compaction.summarize.digest.format import MASK_PREFIX, full_text, read_placeholder


@dataclass(frozen=True, slots=True)
class UserSaid:
    text: str


@dataclass(frozen=True, slots=True)
class AssistantSaid:
    text: str
    # The user's question this prose is the first answer to, if the user last asked one.
    answers: str | None = None
    # What the message's own actions name (commands, paths, search patterns), lowercased:
    # a sentence naming only these announces the action and tells nothing more.
    acts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FileTouched:
    path: str
    op: tools.FileOp


@dataclass(frozen=True, slots=True)
class UseDenied:
    """The user denied a use: the files it named were not touched."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CommandRan:
    command: str
    outcome: str
    errors: tuple[str, ...] = ()
    tests: str | None = None


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call other than a command: `source` names it, `errors` what went wrong."""

    source: str
    ok: bool
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TodosStated:
    todos: tuple[tools.Todo, ...]
    # Written as a plan in the assistant's prose, not stated by a to-do tool.
    said: bool = False


@dataclass(frozen=True, slots=True)
class TodoChanged:
    """One to-do created or updated (tools that change one item at a time); an empty text
    means the text is unchanged."""

    todo: tools.Todo


@dataclass(frozen=True, slots=True)
class TodoIdentified:
    """The id a to-do tool's result gave the item created last."""

    id: str


@dataclass(frozen=True, slots=True)
class PlanStated:
    text: str


@dataclass(frozen=True, slots=True)
class ImagesSeen:
    """Images a message carried (`where`: whose), kept in the archive under `handle`."""

    count: int
    where: str
    handle: str


@dataclass(frozen=True, slots=True)
class IdentifiersSeen:
    identifiers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CodeWritten:
    """Names in code a call wrote into `path`: those it adds a definition of, those it adds
    an import of from the project's own modules (`signals.code_names`), and those whose
    definition it takes out (`removes`: a revert)."""

    path: str
    defines: tuple[str, ...]
    imports: tuple[str, ...]
    removes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Reported:
    """What a sub-agent's report on the task handed to it found (Claude Code's `Task`):
    its first sentence naming files, code, figures or ids (`report_findings`)."""

    findings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Asked:
    """The user's question still unanswered where the span ends."""

    question: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The agent's final answer, stated through a completion tool."""

    text: str


@dataclass(frozen=True, slots=True)
class EarlierSummary:
    """A summary inside the span: its text, to be parsed and merged."""

    text: str
    replaced: int


Event = (
    UserSaid
    | AssistantSaid
    | FileTouched
    | UseDenied
    | CodeWritten
    | CommandRan
    | ToolFinished
    | TodosStated
    | TodoChanged
    | TodoIdentified
    | PlanStated
    | ImagesSeen
    | IdentifiersSeen
    | Asked
    | Reported
    | Finished
    | EarlierSummary
)


class Reader:
    """Turns messages, one at a time, into events. Keeps what later messages need: the calls
    awaiting results, an action written in text awaiting its observation, the open file, the
    user's last question."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCallPart] = {}
        # Commands gone on in the background, by the id their result named.
        self._background: dict[str, ToolCallPart] = {}
        # Commands written in text awaiting their output, and whether any action was.
        self._pending_actions: list[str] = []
        self._awaiting = False
        self._after_summary = False  # the message read last was a summary
        self._pending_edit: tools.FileOp | None = None  # an edit of the open file, written
        # The files the last actions written in text changed, while a denial may undo them.
        self._written: tuple[str, ...] = ()
        self._open_file: str | None = None
        self._question: str | None = None
        # Calls written in a reply's text (Codebuff), read as calls, awaiting their results.
        self._text_calls: list[ToolCallPart] = []
        self._text_call_count = 0

    def read(self, message: Message) -> Iterator[Event]:
        if message.is_summary:
            # A summary, or a user message a summary was folded into: the user's words (if
            # any) come first, as they were written first.
            if message.role == "user":
                words = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
                if words.strip():
                    yield UserSaid(words.strip())
            for summary in (p for p in message.parts if isinstance(p, SummaryPart)):
                yield EarlierSummary(full_text(summary), summary.replaced)
            self.after_summary()
            return
        after_summary, self._after_summary = self._after_summary, False
        message = self._as_calls(message)
        if message.is_observation:
            yield from self._outcome(message.text, after_summary=after_summary)
            self._open_file = _open_file_in(message.text) or self._open_file
            return
        if message.role == "user":
            text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart)).strip()
            result = _xml_tool_result(text) if not message.tool_results else None
            if result is not None and (self._awaiting or result.start() == 0):
                # The result of a tool use written as XML (Cline): output, and the user's
                # feedback on the use, when they gave one, before it; the result of a
                # question to the user is the user's answer.
                output = text[result.end() :]
                if call_does("ask", result.group(1)):
                    self._pending_actions, self._awaiting = [], False
                    if answer := signals.own_words(tools.answer_of(output)):
                        yield UserSaid(answer)
                        self._question = _question_in(answer)
                else:
                    yield from self._outcome(output, after_summary=after_summary)
                text = text[: result.start()].strip()
                if not text:
                    return
            if not message.tool_results and (
                _ENVIRONMENT_REPLY.match(text) or (self._awaiting and _OUTPUT_SHAPE.match(text))
            ):
                # An environment's reply to the action (mini-SWE-agent, smolagents, AutoGen),
                # not words; the user's next task may follow it in the same message.
                output, _, text = text.partition(_NEXT_TASK)
                yield from self._outcome(output, after_summary=after_summary)
                if not text.strip():
                    return
            if not message.tool_results and (turn := tools.harness_turn(text)) is not None:
                # Written by the agent's harness, not the user (aider's reports of a command
                # run, of files added, of a commit): what it reports stands for any action
                # the assistant's text was awaiting.
                self._pending_actions, self._awaiting = [], False
                yield from _harness_events(turn, text)
                return
            if self._awaiting and not message.tool_results:
                self._pending_actions = []
                self._awaiting = False
            text = signals.own_words(text)
            if text:
                yield UserSaid(text)
                self._question = _question_in(text)
            images = sum(isinstance(p, ImagePart) for p in message.parts)
            if images:
                yield ImagesSeen(images, "a user message", handle_for(message))
        acts: tuple[str, ...] | None = None  # read when the message has prose
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                self._calls[part.id] = part
                events = tuple(_call_events(part, self._question))
                if any(isinstance(e, AssistantSaid) and e.answers for e in events):
                    self._question = None
                yield from events
            elif isinstance(part, ToolResultPart):
                call = self._calls.get(part.tool_call_id)
                if call is not None and (started := tools.background_id(part.text)):
                    self._background[started] = call
                # A poll of a background command's output is that command's outcome.
                polled = (
                    self._background.get(
                        tools.polled_id(call.name, call.parsed_arguments() or {}) or ""
                    )
                    if call is not None and self._background
                    else None
                )
                for event in _result_events(polled or call, part, self._open_file):
                    if isinstance(event, UserSaid):  # the user's answer to the agent's question
                        self._question = _question_in(event.text)
                    yield event
                yield from _result_images(call, part, message)
                self._open_file = _open_file_in(part.text) or self._open_file
            elif (
                isinstance(part, TextPart | ReasoningPart)
                and message.role == "assistant"
                and part.text.strip()
            ):
                prose = _without_code(part.text)
                if not prose:
                    continue
                if acts is None:
                    acts = _acts_of(message)
                answers = self._question if isinstance(part, TextPart) else None
                if (
                    answers is not None
                    and (message.tool_calls or acts)
                    and (announces(prose, acts) or not telling_tokens(prose))
                ):
                    # "Running `git log …`.", "Looking up its history first.": words beside
                    # an action that name nothing of their own; the answer comes after it.
                    answers = None
                if answers is not None:
                    self._question = None
                yield AssistantSaid(prose, answers, acts)
        if message.role == "assistant" and message.tool_calls:
            self._awaiting = False
            plan = _plan_in(message.text)
            if plan:
                yield TodosStated(plan, said=True)
        if message.role == "assistant" and not message.tool_calls:
            self._pending_actions = []
            self._pending_edit = None
            actions = _text_actions(message.text)
            self._awaiting = bool(actions)
            self._written = tuple(
                _clean_path(a.path)
                for a in actions
                if a.kind == "file" and a.path and a.op not in (None, "read")
            )
            for action in actions:
                if action.kind == "file" and action.op and action.path is None:
                    self._pending_edit = action.op
                elif action.kind == "command" and action.command:
                    # It ran only if an environment's output follows.
                    self._pending_actions.append(action.command)
                elif action.kind == "todos" and action.todos == _plan_in(message.text):
                    yield TodosStated(action.todos, said=True)  # the plan its prose writes
                elif action.kind == "final" and action.text:
                    # A code agent's answer to the user is its prose too.
                    if action.text not in _without_code(message.text):
                        yield AssistantSaid(action.text, None)
                    yield Finished(action.text)
                else:
                    yield from _action_events(action)
            observed = _observation_in(message.text) if actions else None
            if observed is not None:
                # The executor wrote the action's output into the same message (CrewAI).
                yield from self._outcome(observed)
            # The names its text's code defines (aider's edits, a snippet of its reply).
            yield from _code_in_text(message.text)

    def _as_calls(self, message: Message) -> Message:
        """A message with tool calls written as JSON in its text (`tools.text_calls`), or
        with their results (`tools.text_result`), as the calls and results it stands for;
        any other message as it is. A result goes with the first call of its tool still
        awaiting one (the calls name no id); a result no call awaits (Codebuff's
        `file_updates`, the edited files sent again whole) says nothing new."""
        if message.tool_calls or message.tool_results:
            return message
        if message.role == "assistant":
            found = tools.text_calls(message.text)
            if found is None:
                return message
            prose, calls = found
            parts: list[Part] = [TextPart(prose)] if prose else []
            for call in calls:
                self._text_call_count += 1
                read_as = ToolCallPart(
                    f"text-call-{self._text_call_count}", call.name, json.dumps(call.arguments)
                )
                self._text_calls.append(read_as)
                parts.append(read_as)
            return Message("assistant", tuple(parts))
        if message.role != "user" or "<tool_result>" not in message.text:
            return message
        kept: list[Part] = []
        for part in message.parts:
            result = tools.text_result(part.text) if isinstance(part, TextPart) else None
            if result is None:
                kept.append(part)
                continue
            awaiting = next((c for c in self._text_calls if c.name == result.name), None)
            if awaiting is not None:
                self._text_calls.remove(awaiting)
                kept.append(ToolResultPart(awaiting.id, (TextPart(result.output),)))
        return Message("user", tuple(kept))

    def after_summary(self, awaiting: Sequence[str] = (), asked: str | None = None) -> None:
        """A summary was read: the span it replaced may end on an action written in text,
        whose reply stayed verbatim as the turn the model was about to read. A reply in that
        shape next is output, not the user's words; of the commands in `awaiting` (the one
        the summary ends on, its output unseen), where the summary names one. `asked`: the
        user's question the summary left unanswered; the assistant's next words answer it."""
        self._awaiting = True
        self._after_summary = True
        self._pending_actions = list(awaiting)
        if asked is not None:
            self._question = asked

    def pending(self) -> Iterator[Event]:
        """What the span's end leaves open: an action written last, whose output the span
        does not hold, was run (its outcome unseen); the user's last question is unanswered."""
        for action in self._pending_actions:
            yield CommandRan(_first_line(action), NO_OUTPUT)
        if self._question is not None:
            yield Asked(self._question)

    def _outcome(self, output: str, *, after_summary: bool = False) -> Iterator[Event]:
        """What the environment's output says of the action written before it, and the
        user's reply it carries (Cline's `<feedback>`): their words, and on a use they
        denied, that it did nothing."""
        reply = tools.user_reply_in(output)
        if reply is not None and reply.denied:
            if self._written:
                yield UseDenied(self._written)
            for action in self._pending_actions:
                yield CommandRan(_first_line(action), DENIED)
            self._pending_actions, self._pending_edit, self._awaiting = [], None, False
        elif reply is not None:
            yield from self._output(output[: reply.at], after_summary=after_summary)
        else:
            yield from self._output(output, after_summary=after_summary)
        self._written = ()
        if reply is not None and (words := signals.own_words(reply.words)):
            yield UserSaid(words)
            self._question = _question_in(words)

    def _output(self, output: str, *, after_summary: bool = False) -> Iterator[Event]:
        """What the environment's output says of the action written before it."""
        for todo in tools.todo_changes_in_reply(output):
            yield TodoChanged(todo)
        if self._pending_edit is not None:
            banner = _FILE_BANNER.search(output)
            path = banner.group(1) if banner else self._open_file
            if path:
                yield FileTouched(_clean_path(path), self._pending_edit)
        if self._pending_actions:
            outcome, errors, tests = outcome_of_result(None, None, output, is_error=False)
            for action in self._pending_actions:
                yield CommandRan(_first_line(action), outcome, errors, tests)
        elif self._pending_edit is None and after_summary:
            # The action is in a summary before this reply: what went wrong still counts.
            outcome, errors, _tests = outcome_of_result(None, None, output, is_error=False)
            if errors:
                yield ToolFinished("an action the summary holds", outcome == "ok", errors)
        self._pending_actions = []
        self._pending_edit = None
        self._awaiting = False


_TELLING = signals.cue(
    r"`[^`]+`|\b[0-9a-f]{7,40}\b|\b\d[\d,.]*\s*(?:%|ms|s|kb|mb|gb|tokens|lines|files|tests)?\b"
    # A path is tried where a word starts only (at every character, 15% slower overall).
    r"|(?<![\w.-])[\w.-]+/[\w./-]+"
    r"|\b[\w-]+\.(?:py|ts|js|tsx|rs|go|java|md|json|yaml|yml|toml|c|h|rb)\b"
)


@text_cache()
def telling_tokens(sentence: str) -> tuple[str, ...]:
    """The telling tokens of a sentence (code, ids, numbers, paths, file names), lowercased."""
    return tuple(_TELLING.findall(sentence.lower()))


def announces(text: str, acts: Sequence[str]) -> bool:
    """Whether every sentence of `text` names only what its own message then does (`acts`:
    the commands, paths and patterns of the message's actions, lowercased), as "Next, `make
    test` in the shell." or "Let me read src/app.py." do beside the call: it says nothing
    the commands and files sections do not. A sentence with no such name says more."""
    if not acts:
        return False
    said = signals.sentences(text) or (text,)
    return all(_names_only(sentence, acts) for sentence in said)


def _names_only(sentence: str, acts: Sequence[str]) -> bool:
    telling = telling_tokens(sentence)
    return bool(telling) and all(
        any(token.strip("`").rstrip(".,;:") in act for act in acts) for token in telling
    )


def _acts_of(message: Message) -> tuple[str, ...]:
    """What an assistant message's own actions name, lowercased: the commands it runs, the
    files it touches, the patterns it searches for (`AssistantSaid.acts`)."""
    actions: list[tools.Action] = []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            actions += call_actions(part.name, part.arguments)
    if not message.tool_calls:
        actions += _text_actions(message.text)
    named = (
        (action.path, action.command, action.text if action.kind == "search" else None)
        for action in actions
    )
    return tuple(value.lower() for values in named for value in values if value)


@text_cache()
def _react_step(text: str) -> tools.ReactStep | None:
    return tools.react_step(text)


def _observation_in(text: str) -> str | None:
    step = _react_step(text)
    return step.observation if step is not None else None


def _first_line(action: str) -> str:
    return signals.clip(action.splitlines()[0].strip(), 200)


@text_cache()
def outcome_of_result(
    name: str | None, arguments: str | None, output: str, *, is_error: bool
) -> tuple[str, tuple[str, ...], str | None]:
    """(outcome, error lines, test summary) of a tool result. A file's or a search's content
    is neither an error report nor a test run, whatever lines it holds: it is not read. Else
    the exit status the tool states in its own shape, when it states one, decides (a zero
    clears the error lines) over what the text readers find."""
    if name is not None and not is_error and _only_reads(ToolCallPart("", name, arguments or "")):
        return "ok", (), None
    placeholder = read_placeholder(output) if output.startswith(MASK_PREFIX) else None
    if placeholder is not None:  # a masked output states what the original said
        return placeholder.outcome, placeholder.errors, placeholder.tests
    output = signals.without_colours(output)
    is_error = is_error or _FLAGGED_ERROR.match(output) is not None
    outcome, errors = signals.outcome_of(output, is_error=is_error)
    status = exit_status(name, output)
    if status is not None:
        outcome, errors = ("ok", ()) if status == 0 else (f"exit {status}", errors)
    return outcome, errors, signals.test_summary(output)


# A request for an answer made without a question mark: "… and tell me the runtime."
_ASKS = re.compile(
    r"\b(?:tell|show|give|send)\s+(?:me|us)\b|\blet\s+(?:me|us)\s+know\b", re.IGNORECASE
)


# A question mark that ends a question, inside what reads as one sentence where the words
# after it start lowercase ("… which one? ops wants to know.").
_ASKED = re.compile(r"\?(?=\s|$)")


def _question_in(text: str) -> str | None:
    """The user's last question in `text`, if the text asks one (or asks to be told)."""
    for sentence in reversed(signals.sentences(text)):
        if _ASKED.search(sentence) or _ASKS.search(sentence):
            return signals.clip(sentence, 200)
    return None


def _clean_path(path: str) -> str:
    path = path.strip().strip("'\"`")
    return path[2:] if path.startswith("./") else path


@text_cache()
def call_actions(name: str, arguments: str) -> tuple[tools.Action, ...]:
    """What a call does by the tool table, read once per distinct call (the mask's
    placeholders and the digest read the same calls)."""
    parsed = ToolCallPart("", name, arguments).parsed_arguments() or {}
    return tools.actions_of_call(name, parsed)


def _call_events(call: ToolCallPart, question: str | None = None) -> Iterator[Event]:
    """What a call says; words it sends the user answer `question`, the user's last."""
    actions = call_actions(call.name, call.arguments)
    for action in actions:
        yield from _action_events(action, question)
    if any(a.kind == "file" and a.op not in (None, "read", "deleted") for a in actions):
        yield from _code_written(call.name, call.arguments)


@text_cache()
def _code_written(name: str, arguments: str) -> tuple[CodeWritten, ...]:
    """The names in the code a call wrote, per file (read once per distinct call)."""
    if not any(hint in arguments for hint in signals.CODE_NAME_HINTS):
        return ()  # no definition nor import in any of its text
    parsed = ToolCallPart("", name, arguments).parsed_arguments() or {}
    return _code_names_of(tools.written_code(name, parsed))


@text_cache()
def _code_in_text(text: str) -> tuple[CodeWritten, ...]:
    """The names in the code an assistant's text writes (edits, snippets of its reply)."""
    if "```" not in text and "SEARCH" not in text:
        return ()
    if not any(hint in text for hint in signals.CODE_NAME_HINTS):
        return ()
    return _code_names_of(tools.code_in_text(text))


def _code_names_of(written: Sequence[tools.WrittenCode]) -> tuple[CodeWritten, ...]:
    """A `CodeWritten` per file of `written` that adds or takes out a name."""
    found = []
    for path, added, removed in written:
        defines, imports = signals.code_names(added)
        defined, imported = signals.code_names(removed) if removed else ((), ())
        new = tuple(d for d in defines if d not in defined)
        gone = tuple(d for d in defined if d not in defines)
        imports = tuple(i for i in imports if i not in imported)
        if new or imports or gone:
            found.append(CodeWritten(_clean_path(path), new, imports, gone))
    return tuple(found)


def _action_events(action: tools.Action, question: str | None = None) -> Iterator[Event]:
    """What one action says, called or written in text (a command's outcome and an edit of
    the open file are for the caller, who sees their output)."""
    if action.kind == "file" and action.path and action.op:
        yield FileTouched(_clean_path(action.path), action.op)
    elif action.kind == "todos":
        yield TodosStated(action.todos)
    elif action.kind == "todo":
        yield from (TodoChanged(todo) for todo in action.todos)
    elif action.kind == "plan" and action.text:
        yield PlanStated(action.text)
    elif action.kind == "final" and action.text:
        yield Finished(action.text)
    elif action.kind == "thought" and action.text:
        # A thinking tool's thought is the agent's prose, and a plan it holds its list.
        yield AssistantSaid(action.text)
        plan = _plan_in(action.text)
        if plan:
            yield TodosStated(plan, said=True)
    elif action.kind in ("message", "ask") and action.text:
        # Words sent to the user through a tool, a question to them included: what they
        # state is the assistant's (a question sentence itself tells nothing).
        yield AssistantSaid(action.text, question if action.kind == "message" else None)
    elif action.kind == "memory" and action.text:
        yield from (TodoChanged(todo) for todo in tools.checklist(action.text))


_IMAGES_IN_SIZE = re.compile(r"(\d+) images?\b")


def _result_images(
    call: ToolCallPart | None, result: ToolResultPart, message: Message
) -> Iterator[Event]:
    """Images a tool result carries, or carried before it was masked (its placeholder
    counts them and names the original's handle)."""
    images = sum(isinstance(p, ImagePart) for p in result.content)
    first = result.content[0] if result.content else None
    counted_in_placeholder = (
        isinstance(first, TextPart)
        and first.text.startswith(MASK_PREFIX)
        and " image" in first.text
    )
    if not images and not counted_in_placeholder:
        return
    where = (
        f"{call.name}({_short_arguments(call.parsed_arguments() or {})}) output"
        if call is not None
        else "a tool's output"
    )
    placeholder = read_placeholder(result.text)
    if placeholder is not None:
        counted = _IMAGES_IN_SIZE.search(placeholder.size)
        if counted:
            yield ImagesSeen(int(counted.group(1)), where, placeholder.handle)
        return
    if images:
        yield ImagesSeen(images, where, handle_for(message))


def _only_reads(call: ToolCallPart) -> bool:
    actions = call_actions(call.name, call.arguments)
    return bool(actions) and all(
        a.kind == "search" or (a.kind == "file" and a.op == "read") for a in actions
    )


def _command_of(call: ToolCallPart) -> str | None:
    for action in call_actions(call.name, call.arguments):
        if action.kind == "command" and action.command:
            return action.command
    return None


def _result_events(
    call: ToolCallPart | None, result: ToolResultPart, open_file: str | None
) -> tuple[Event, ...]:
    """What a tool result says (read once per distinct result: compaction reads the same
    outputs again on every pass)."""
    if call is None:
        return _events_of_result(None, None, result.text, result.is_error, open_file)
    return _events_of_result(call.name, call.arguments, result.text, result.is_error, open_file)


@text_cache()
def _events_of_result(
    name: str | None, arguments: str | None, text: str, is_error: bool, open_file: str | None
) -> tuple[Event, ...]:
    call = None if name is None else ToolCallPart("", name, arguments or "")
    text = tools.unwrapped(text)
    reply = tools.user_reply_in(text)
    if reply is None:
        return tuple(_read_result(call, text, is_error, open_file))
    # The user's reply in the result (feedback on the use, a denial): their words; a use
    # they denied did nothing, the output before a reply is the tool's.
    said = (UserSaid(words),) if (words := signals.own_words(reply.words)) else ()
    if reply.denied:
        # A command the user denied did not run: it is listed as denied (not to be run
        # again as it was); the files a denied use names are as they were.
        actions = call_actions(name, arguments or "") if name is not None else ()
        paths = tuple(_clean_path(a.path) for a in actions if a.kind == "file" and a.path)
        command = next((a.command for a in actions if a.kind == "command" and a.command), None)
        denied: tuple[Event, ...] = (UseDenied(paths),) if paths else ()
        if command is not None:
            denied += (CommandRan(signals.clip(command, 200), DENIED),)
        return (*denied, *said)
    if reply.at == 0:
        return said
    return (*_read_result(call, text[: reply.at], is_error, open_file), *said)


def _read_result(
    call: ToolCallPart | None, text: str, is_error: bool, open_file: str | None
) -> Iterator[Event]:
    placeholder = read_placeholder(text)
    if placeholder is not None:
        outcome, errors, tests = placeholder.outcome, placeholder.errors, placeholder.tests
        found = placeholder.identifiers
        if call is not None and not is_error and _only_reads(call):
            # A placeholder of a read holds no error report either (older ones may say one):
            # the rule `outcome_of_result` applies to the output itself.
            outcome, errors = "ok", ()
    else:
        name, arguments = (call.name, call.arguments) if call else (None, None)
        outcome, errors, tests = outcome_of_result(name, arguments, text, is_error=is_error)
        found = signals.identifiers(text)
    if found:
        yield IdentifiersSeen(found)
    if call is None:
        if errors:
            yield ToolFinished("an earlier tool call", False, errors)
        return
    if call_does("ask", call.name, call.arguments):
        # (A placeholder where the answer was is no answer.)
        answer = "" if placeholder is not None else signals.own_words(tools.answer_of(text))
        if answer:
            yield UserSaid(answer)
        return
    command = _command_of(call)
    if command is not None:
        yield CommandRan(signals.clip(command, 200), outcome, errors, tests)
        return
    listed = tools.todos_in_result(text)
    if listed is not None:
        yield TodosStated(listed)
    created = tools.todo_id_in_result(call.name, text)
    if created is not None:
        yield TodoIdentified(created)
    if call_does("delegate", call.name, call.arguments):
        findings = placeholder.findings if placeholder is not None else report_findings(text)
        if findings:
            yield Reported(findings)
    for action in call_actions(call.name, call.arguments):
        if action.kind == "file" and action.path is None and action.op is not None:
            # An editor command acting on the open file: its output names it, or the status line.
            banner = _FILE_BANNER.search(text)
            path = banner.group(1) if banner else open_file
            if path:
                yield FileTouched(_clean_path(path), action.op)
    source = f"{call.name}({_short_arguments(call.parsed_arguments() or {})})"
    if tests and tools.is_test_tool(call.name):
        # A test run through a tool of its own (Moatless's `RunTests`): its outcome is the
        # test status, as a command's is. (A summary another tool reports, a subagent's,
        # may be any run's.)
        yield CommandRan(source, outcome, errors, tests)
        return
    yield ToolFinished(source, outcome == "ok", errors)


def _harness_events(turn: tools.HarnessTurn, text: str) -> Iterator[Event]:
    """What a turn the agent's harness wrote records: a command run (the files it touched
    and its outcome), files read, a commit."""
    if turn.kind == "files":
        for path in turn.files:
            yield FileTouched(_clean_path(path), "read")
    elif turn.kind == "commit" and turn.commit is not None:
        commit, message = turn.commit
        yield IdentifiersSeen((commit,))
        yield CommandRan(signals.clip(f'git commit -m "{message}"', 200), "ok")
    elif turn.kind == "run" and turn.command:
        for action in tools.command_actions(turn.command):
            yield from _action_events(action)
        name, arguments = tools.shell_call(turn.command)
        outcome, errors, tests = outcome_of_result(
            name, arguments, text[turn.output_at :], is_error=turn.failed
        )
        yield CommandRan(signals.clip(turn.command, 200), outcome, errors, tests)


def _short_arguments(arguments: dict[str, object]) -> str:
    for key in (
        "path",
        "file_path",
        "absolutePath",
        "file",
        "filename",
        "pattern",
        "query",
        "url",
    ):
        value = arguments.get(key)
        if isinstance(value, str):
            return signals.clip(value, 80)
    return ""


_OPEN_FILE = re.compile(r"\(Open file: ([^)\n]+)\)")
_FILE_BANNER = re.compile(r"\[File: ([^\]\n]+?) \(\d+ lines total\)\]")


def open_file_line(text: str) -> str:
    """The last status line of `text` naming the file an editor-style environment has open
    (SWE-agent's `(Open file: …)`), as written; "" when it names none."""
    found = [match.group(0) for match in _OPEN_FILE.finditer(text)]
    return found[-1] if found else ""


@text_cache()
def _open_file_in(text: str) -> str | None:
    """The file an editor-style environment reports as open (SWE-agent's status line)."""
    opened = _OPEN_FILE.findall(text)
    if opened and opened[-1].strip() not in ("n/a", ""):
        return str(opened[-1]).strip()
    return None


@text_cache()
def exit_status(name: str | None, output: str) -> int | None:
    """The exit status a command's output states (`tools.command_exit_status`), cached; a
    tool that runs no command (a read, an edit) states none."""
    if name is not None and not _is_command_tool(name):
        return None
    return tools.command_exit_status(name, output)


@functools.lru_cache(maxsize=1024)
def _is_command_tool(name: str) -> bool:
    return tools.is_command_tool(name)


@text_cache()
def _text_actions(text: str) -> tuple[tools.Action, ...]:
    return tools.actions_in_text(text)


@text_cache()
def _plan_in(text: str) -> tuple[tools.Todo, ...]:
    return tools.plan_in_prose(text)


# How environments that answer an action in a user message start their reply.
_OUTPUT_SHAPE = re.compile(
    r"^\s*(?:<returncode>|<output>|<system>|Observation:|OBSERVATION:|Output:|Call id: \S+\nError:"
    r"|exitcode: -?\d+ \(execution (?:succeeded|failed)\))"  # AutoGen's code executors
)
# A code agent's code (smolagents' `<code>` blocks, OpenHands CodeAct's `<execute_bash>` and
# `<execute_ipython>`) and the record of the call it makes of it (`Calling tools:` and the
# call list): actions, not prose.
_CODE_IN_PROSE = re.compile(
    r"<(code|execute_bash|execute_ipython)>.*?(?:</\1>|$)|\nCalling tools:\n\[.*$", re.DOTALL
)


# A fenced block with an info string (```shell, ```save <path>, ```python): code or an
# action, never the assistant's sentences.
_TAGGED_BLOCK = re.compile(r"^(`{3,})[ \t]*[\w+.-][^\n`]*\n.*?^\1[ \t]*$\n?", re.M | re.S)


#: The most of a block a sentence introducing it keeps, in one line.
_INTRODUCED_CHARS = 200


def _introduced(block: re.Match[str]) -> str:
    """A tagged code block in prose: gone, unless the line before it ends with a colon
    ("For the ticket, the index:"), whose sentence names nothing without it, and the block
    is no action (a command, a tool's call written as a block: ```todo write): then the
    code, on one line in backticks, ends that sentence."""
    before = block.string[: block.start()].rstrip()
    if not before.endswith(":") or "\n\n\n" in block.string[len(before) : block.start()]:
        return ""
    info = block.group(0).split("\n", 1)[0].strip("`").split()
    if len(info) != 1 or info[0].lower() in tools.SHELL_FENCES or _text_actions(block.group(0)):
        return ""
    body = block.group(0).split("\n")[1:-1]
    code = " ".join(line.strip() for line in body if line.strip() and not line.startswith("```"))
    if not code:
        return ""
    code = signals.clip(code.replace("`", "'"), _INTRODUCED_CHARS)
    return f" `{code}`\n"


def _without_code(text: str) -> str:
    """The prose of an assistant's text: without a code agent's code, tagged code blocks,
    a ReAct step's action and the observation after it, nor a tool use written as XML."""
    use = tools.xml_tool_use(text)
    if use is not None:
        text = text[: use.start].strip()
    if "<code>" in text or "<execute_" in text:
        text = _CODE_IN_PROSE.sub("", text).strip()
    if "```" in text:
        text = _TAGGED_BLOCK.sub(_introduced, text).strip()
    step = _react_step(text) if "Action Input:" in text else None
    if step is not None:
        text = text[: step.start].strip()  # the action, its input and what it observed
    if "Thought:" in text or "Final Answer:" in text:
        text = _REACT_LABELS.sub("", text).strip()
    return text


# The ReAct format's own words around an assistant's (CrewAI, LangChain agents): its labels,
# and the thought it has written before every answer.
_REACT_LABELS = re.compile(
    r"^[ \t]*(?:Thought:[ \t]*I now know the final answer\.?[ \t]*(?:\n|$)"
    r"|(?:Thought|Final Answer):[ \t]*)",
    re.MULTILINE,
)


_USERS_TOO = re.compile(r"^\s*Output:")
#: The outcome of a command whose output the span does not hold.
NO_OUTPUT = "no output seen"
DENIED = "denied by the user"
# smolagents starts the user's next task, merged into the reply before it, with this line.
_NEXT_TASK = "\nNew task:\n"
# The header of a tool use's result in Cline's classic protocol: `[read_file for 'a.py']
# Result:`, `[use_mcp_tool for 'filesystem'] Result:`.
_XML_RESULT_HEADER = r"\[([a-z][a-z0-9_]*)(?: for '[^'\n]*')?\] Result:[ \t]*\n?"
_XML_TOOL_RESULT = re.compile("^" + _XML_RESULT_HEADER, re.M)
# Cline writes "Error:" on a line of its own first in the result of an MCP tool the server
# flagged as an error (the output is read after the header, and masked with it).
_FLAGGED_ERROR = re.compile(f"(?:{_XML_RESULT_HEADER})?Error:[ \t]*\n")


def _xml_tool_result(text: str) -> re.Match[str] | None:
    """Where the result of a tool use written as XML starts in a user message, if it holds
    one (a substring test first: most user messages hold none)."""
    return _XML_TOOL_RESULT.search(text) if "] Result:" in text else None


def _xml_result_in(
    message: Message, texts: Sequence[int], *, awaited: bool
) -> tuple[int, int] | None:
    """Where the output of a tool use written as XML sits among a user message's text parts
    (`texts`): after its `[tool for 'x'] Result:` header, in the header's part (the user's
    feedback before it, the environment's details in other parts, stay), or in the next part
    where the header is a part of its own (older Cline). A header in the part's middle
    counts only right after a use (`awaited`). None where there is none, or where the tool
    asked the user: the answer is the user's words."""
    for position, index in enumerate(texts):
        text = message.parts[index].text  # type: ignore[union-attr]
        result = _xml_tool_result(text)
        if result is None or not (awaited or result.start() == 0):
            continue
        if call_does("ask", result.group(1)):
            return None
        if text[result.end() :].strip():
            return index, result.end()
        if position + 1 < len(texts):
            return texts[position + 1], 0
        return None
    return None


#: How many of a report's telling sentences are kept, and how long each may be (a second
#: one cost the real Claude Code sessions at 10% more than it gave).
_FINDINGS = 1
_FINDING_CHARS = 160


@text_cache()
def report_findings(text: str) -> tuple[str, ...]:
    """A sub-agent's report's first sentence naming files, code, figures or ids: what the
    parent agent learned from it (kept in the report's placeholder, and by the digest)."""
    found: list[str] = []
    for sentence, *_ in signals.prose_signals(text):
        if telling_tokens(sentence):
            found.append(signals.clip(sentence, _FINDING_CHARS))
            if len(found) == _FINDINGS:
                break
    return tuple(found)


def call_does(kind: tools.ActionKind, name: str, arguments: str = "{}") -> bool:
    """Whether a call of tool `name` does an action of `kind` by the tool table: `ask` (its
    result is the user's answer), `delegate` (its result is a sub-agent's report)."""
    return any(action.kind == kind for action in call_actions(name, arguments))


# A user message only an environment writes, whatever came before it: AutoGen's code
# executors' reply, mini-SWE-agent's, OpenHands CodeAct's observation, an output masked
# where it stood.
_ENVIRONMENT_REPLY = re.compile(
    r"\A\s*(?:exitcode: -?\d+ \(execution (?:succeeded|failed)\)\nCode output:|OBSERVATION:\n"
    r"|<returncode>-?\d+</returncode>|<system>(?:(?!<system>).)*</system>\s*\Z|"
    + re.escape(MASK_PREFIX)
    + ")",
    re.DOTALL,
)


def _awaited(before: Message | None) -> bool:
    """Whether a user turn after `before` answers an action written in its text."""
    return (
        before is not None
        and before.role == "assistant"
        and not before.tool_calls
        and bool(_text_actions(before.text))
    )


def output_in_text(message: Message, before: Message | None = None) -> tuple[int, int] | None:
    """Where an environment's output sits in a message's own text, as (index of the text
    part, offset it starts at; it runs to the part's end): a user message that is an
    observation (marked by its dialect; in a shape only an environment writes; or in an
    environment's shape right after an action written in the assistant's text, `before`),
    with no next task after it; or the `Observation:` a ReAct executor writes into the
    assistant's step (CrewAI). None anywhere else: a user's words are never an output."""
    if message.tool_calls or message.tool_results:
        return None
    texts = [i for i, p in enumerate(message.parts) if isinstance(p, TextPart)]
    if len(texts) > 1 and message.role == "user":
        return _xml_result_in(message, texts, awaited=_awaited(before))
    if len(texts) != 1:
        return None
    index = texts[0]
    text = message.parts[index].text  # type: ignore[union-attr]
    if message.role == "user":
        if message.is_observation:
            return index, 0
        if _NEXT_TASK in text:
            return None
        if _ENVIRONMENT_REPLY.match(text) is not None:
            return index, 0
        turn = tools.harness_turn(text)
        if turn is not None:
            return (index, turn.output_at) if turn.output_at >= 0 else None
        awaited = _awaited(before)
        found = _xml_result_in(message, texts, awaited=awaited)
        if found is not None or _xml_tool_result(text) is not None:
            return found
        # `Output: …` a user may write too: it is read as output there, never masked.
        shaped = _OUTPUT_SHAPE.match(text) is not None and not _USERS_TOO.match(text)
        return (index, 0) if awaited and shaped else None
    if message.role == "assistant" and "Action Input:" in text:
        step = _react_step(text)
        if step is not None and step.observation and step.observation.strip():
            return index, len(text) - len(step.observation)
    return None
