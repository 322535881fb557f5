"""Probes for how a session *ends*: user constraints, the last errors, open to-dos, the final
test status and the last message, read off a raw session by rules of the ruler's own.

`extract_probes` (`compaction.eval.datasets`) calls `state_candidates` with the session's
messages and its tool runs; each rule below returns `Candidate`s, which become uncued facts
once their probe strings are checked against the session's text. The rules:

- **constraint** (required): sentences of the user's own messages (not tool output, not
  agent-injected reminders, not code blocks) that state a rule — a modal or imperative word
  (`must`, `never`, `always`, `do not`, `make sure`, `only`, `instead of`, …), 20–240
  characters, not a question. Probe: the sentence, or its longest piece that survives JSON
  escaping. At most 3 a message and 12 a session (evenly spaced when there are more).
- **error_open** / **error_resolved**: in the outputs of command runs (and tool results
  flagged as errors), the error line (`…Error: …`, `error[E…]: …`, `fatal: …`, `npm ERR!`,
  `command not found`, `No such file or directory`; not a missing recording or the user
  declining a call); the last three distinct ones. An error
  is resolved when a later run of the same command (or the same tool on the same file)
  showed no error; resolved ones are scored but not required.
- **todo**: the last to-do list a to-do tool wrote — Claude Code `TodoWrite`
  (`todos[].content/status`), OpenCode `todowrite` (the same shape), Codex `update_plan`
  (`plan[].step/status`), OpenHands `task_tracker` (`task_list[].title/status`), Claude Code
  `TaskCreate`/`TaskUpdate` (`subject`, `taskId`, `status`), Cline's `task_progress` checklist
  (`- [ ]` / `- [x]`). Pending and in-progress items are open (required); items completed in
  that list are scored, not required.
- **test_status** (required): the last test-run summary line in a command's output (pytest's
  `=== … ===`, jest/vitest `Tests:`, cargo `test result:`, mocha `N passing`, unittest
  `Ran N tests`); probe: its counts (`3 failed, 12 passed`). Earlier, different summaries of
  the same command are its stale forms: shown without the latest, they state a superseded
  result as current.
- **last_message** (required): the session's last message; probe: its first and its longest
  JSON-safe pieces.

This module must never import or call a compaction strategy or the digest's readers
(`compaction.summarize`): it is the ruler's side of the benchmark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.eval.probes import FactCategory
from compaction.messages import Message, TextPart

__all__ = ["ID_PREFIXES", "Candidate", "ToolRun", "safe_pieces", "state_candidates"]

#: Characters JSON escaping changes, and anything non-ASCII: a probe never holds them.
UNSAFE = re.compile(r"[\"\\\x00-\x1f\x7f-\U0010ffff]+")


@dataclass(frozen=True)
class ToolRun:
    """One thing the agent did, as the rules here need it (built by `datasets._actions`)."""

    index: int
    name: str
    arguments: Mapping[str, Any]
    command: str | None
    output: str | None
    output_index: int | None
    output_error: bool
    path: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A fact before its probe is checked against the session."""

    category: FactCategory
    text: str
    probe: tuple[str, ...]
    where: tuple[int, ...]
    required: bool
    stale: tuple[str, ...] = ()
    #: What the fact's id starts with (default: the category's first word).
    id_prefix: str | None = None


#: The id prefix of the facts these rules write, so a reader can tell them from the others.
ID_PREFIXES = ("constraint", "error-seen", "todo", "test", "last")


def safe_pieces(text: str, *, minimum: int = 2) -> list[str]:
    """The runs of `text` that survive JSON escaping unchanged, stripped, in order."""
    pieces = (p.strip() for p in UNSAFE.split(text))
    return [p for p in pieces if len(p) >= minimum and re.search(r"[A-Za-z0-9]", p)]


def _longest_safe(text: str, *, minimum: int, maximum: int) -> str | None:
    pieces = safe_pieces(text[: maximum * 4], minimum=minimum)
    if not pieces:
        return None
    best = max(pieces, key=len)
    return best[:maximum].strip() if len(best) >= minimum else None


def state_candidates(
    messages: Sequence[Message], texts: Sequence[str], runs: Sequence[ToolRun]
) -> list[Candidate]:
    """Every candidate of the rules in the module docstring, in category order; `texts` are
    the messages' texts as probes are checked against them."""
    return [
        *constraint_candidates(messages),
        *error_candidates(runs),
        *todo_candidates(runs),
        *test_status_candidates(runs),
        *last_message_candidates(texts),
    ]


# --- user constraints -------------------------------------------------------------------------

_RULE_WORDS = re.compile(
    r"\b(?:must|mustn't|never|always|do not|don't|does not need|should|shouldn't|make sure|"
    r"ensure|be sure|only|no longer|required|requirement|keep|avoid|instead of|rather than|"
    r"prefer|need to|needs to|has to|have to|not allowed|forbidden|at most|at least)\b",
    re.IGNORECASE,
)
#: Text an agent injects into user turns (reminders, environment dumps, tool-result echoes).
_INJECTED = re.compile(
    r"task_progress|TODO LIST UPDATE|environment_details|\[TASK RESUMPTION\]|"
    r"\[ERROR\] You did not use a tool|<system-reminder>|<returncode>|tool_use_error|"
    r"Result:\s*$|^\[[\w ]+ for |plan_mode_respond|browser_action|automated message|"
    r"Caveat: The messages below|\[Request interrupted|<command-name>|<local-command-",
    re.IGNORECASE | re.MULTILINE,
)
_BLOCK_TAG = re.compile(r"<(environment_details|system-reminder)>.*?</\1>", re.DOTALL)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_MAX_PER_MESSAGE = 3
_MAX_CONSTRAINTS = 12


def _user_words(message: Message) -> str | None:
    """The text a person typed in a user message, or None when the message is not theirs."""
    if message.role != "user" or message.tool_results:
        return None
    kind = message.provider_data.get("traj.message_type")
    if kind is not None and kind != "user":
        return None  # SWE-agent observations and demonstrations arrive as user messages
    text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
    text = _FENCE.sub("\n", _BLOCK_TAG.sub("\n", text))
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip() and not _INJECTED.search(p)]
    return "\n\n".join(paragraphs) or None


def _rule_sentences(text: str) -> Iterable[str]:
    for raw_line in text.split("\n"):
        line = raw_line.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("#", "|", "<")):
            continue
        for piece in _SENTENCE_END.split(line):
            sentence = piece.strip()
            if (
                20 <= len(sentence) <= 240
                and not sentence.endswith("?")
                and _RULE_WORDS.search(sentence)
            ):
                yield sentence


def _constraint_probe(sentence: str) -> str | None:
    if not UNSAFE.search(sentence):
        return sentence
    for piece in sorted(safe_pieces(sentence, minimum=24), key=len, reverse=True):
        if _RULE_WORDS.search(piece):
            return piece
    return None


def constraint_candidates(messages: Sequence[Message]) -> list[Candidate]:
    found: list[Candidate] = []
    seen: set[str] = set()
    for index, message in enumerate(messages):
        words = _user_words(message)
        if words is None:
            continue
        taken = 0
        for sentence in _rule_sentences(words):
            probe = _constraint_probe(sentence)
            if probe is None or probe.casefold() in seen or taken >= _MAX_PER_MESSAGE:
                continue
            seen.add(probe.casefold())
            taken += 1
            text = f"The user stated: {sentence}"
            found.append(Candidate("constraint", text, (probe,), (index,), True))
    if len(found) > _MAX_CONSTRAINTS:
        step = len(found) / _MAX_CONSTRAINTS
        found = [found[int(k * step)] for k in range(_MAX_CONSTRAINTS)]
    return found


# --- errors ------------------------------------------------------------------------------------

_ERROR_LINE = re.compile(
    r"^(?:[A-Z]\w*(?:\.\w+)*(?:Error|Exception)\b.*|error(?:\[\w+\])?: .*|Error: .*|"
    r"ERROR: .*|fatal: .*|npm ERR! .*|.*: command not found|.*No such file or directory.*|"
    r".*[Ee]rror TS\d+: .*)$"
)
_NOT_ERROR = re.compile(r"^(?:FAILED|ERROR) \S+(?:::| - )|^E\s|^\s*$")
_EXIT_STATUS = re.compile(
    r"(?:exit code|exit status|exited with code|returncode>)\s*:?\s*([1-9]\d*)", re.IGNORECASE
)
_LAST_ERRORS = 3


#: Results flagged as errors that report no error of the work: a recording without a result,
#: the user stopping or declining a tool call.
_NO_ERROR_RESULT = re.compile(
    r"^\(no result recorded\)$|interrupted by user|doesn't want to proceed|was rejected",
    re.IGNORECASE,
)


def _error_line(run: ToolRun) -> str | None:
    """The line of `run`'s output that names its error, if the output shows one."""
    output = run.output or ""
    if _NO_ERROR_RESULT.search(output.strip()[:300]):
        return None
    lines = [ln.strip() for ln in output.replace("\r", "").split("\n")]
    hits = [ln for ln in lines if _ERROR_LINE.match(ln) and not _NOT_ERROR.match(ln)]
    if hits:
        return hits[-1]
    if run.output_error and run.command is None:
        first = next((ln for ln in lines if ln), "")
        return first or None
    return None


def _run_key(run: ToolRun) -> str | None:
    if run.command is not None:
        return " ".join(run.command.split())
    if run.path is not None:
        return f"{run.name}:{run.path}"
    return None


def _errored(run: ToolRun) -> bool:
    return (
        run.output_error
        or _error_line(run) is not None
        or bool(run.output and _EXIT_STATUS.search(run.output))
    )


def error_candidates(runs: Sequence[ToolRun]) -> list[Candidate]:
    last: dict[str, tuple[int, ToolRun]] = {}  # probe → (order, run)
    for order, run in enumerate(runs):
        if run.output is None or (run.command is None and not run.output_error):
            continue
        line = _error_line(run)
        if line is None:
            continue
        probe = _longest_safe(line, minimum=12, maximum=120)
        if probe is not None:
            last[probe] = (order, run)
    chosen = sorted(last.items(), key=lambda item: item[1][0])[-_LAST_ERRORS:]
    found = []
    for probe, (order, run) in chosen:
        key = _run_key(run)
        later = [r for r in runs[order + 1 :] if key is not None and _run_key(r) == key]
        fixed = any(r.output is not None and not _errored(r) for r in later)
        where = tuple(i for i in (run.index, run.output_index) if i is not None)
        if fixed:
            text = f"An error was hit, then a later run passed: {probe}"
            found.append(
                Candidate("error_resolved", text, (probe,), where, False, id_prefix="error-seen")
            )
        else:
            text = f"The last error seen, not fixed since: {probe}"
            found.append(
                Candidate("error_open", text, (probe,), where, True, id_prefix="error-seen")
            )
    return found


# --- to-dos ------------------------------------------------------------------------------------

_OPEN = frozenset({"pending", "in_progress", "in-progress", "todo", "not_started", "open"})
_DONE = frozenset({"completed", "complete", "done"})
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[([ xX])\]\s*(.+)$", re.MULTILINE)
_TASK_CREATED = re.compile(r"Task #(\w+) created")
_MAX_OPEN_TODOS = 10
_MAX_DONE_TODOS = 5


def _items(value: Any, text_key: str) -> list[tuple[str, str]] | None:
    if not isinstance(value, list):
        return None
    items = []
    for item in value:
        if isinstance(item, Mapping):
            text, status = item.get(text_key), item.get("status")
            if isinstance(text, str) and isinstance(status, str):
                items.append((text, status.strip().lower()))
    return items


def _listed(run: ToolRun, tasks: dict[str, list[str]]) -> list[tuple[str, str]] | None:
    """The to-do list after `run` as (text, status) pairs, or None when it writes none."""
    name = run.name.lower().replace("_", "")
    args = run.arguments
    if name == "todowrite":
        return _items(args.get("todos"), "content")
    if name == "updateplan":
        return _items(args.get("plan"), "step")
    if name == "tasktracker" and args.get("command") != "view":
        return _items(args.get("task_list"), "title")
    if name == "taskcreate" and isinstance(args.get("subject"), str):
        created = _TASK_CREATED.search(run.output or "")
        task_id = created.group(1) if created else str(len(tasks) + 1)
        tasks[task_id] = [str(args["subject"]), "pending"]
        return [(t, s) for t, s in tasks.values()]
    if name == "taskupdate":
        task = tasks.get(str(args.get("taskId", "")))
        status = args.get("status")
        if task is not None and isinstance(status, str):
            task[1] = status.strip().lower()
        return [(t, s) for t, s in tasks.values()]
    progress = args.get("task_progress")
    if isinstance(progress, str) and _CHECKBOX.search(progress):
        return [
            (m.group(2).strip(), "pending" if m.group(1) == " " else "completed")
            for m in _CHECKBOX.finditer(progress)
        ]
    return None


def todo_candidates(runs: Sequence[ToolRun]) -> list[Candidate]:
    tasks: dict[str, list[str]] = {}
    latest: tuple[int, list[tuple[str, str]]] | None = None
    first_seen: dict[str, int] = {}
    for run in runs:
        listed = _listed(run, tasks)
        if listed is None:
            continue
        latest = (run.index, listed)
        for text, _ in listed:
            first_seen.setdefault(text, run.index)
    if latest is None:
        return []
    index, listed = latest
    found: list[Candidate] = []
    opened = [t for t, s in listed if s in _OPEN][:_MAX_OPEN_TODOS]
    done = [t for t, s in listed if s in _DONE][-_MAX_DONE_TODOS:]
    for text, required in [*((t, True) for t in opened), *((t, False) for t in done)]:
        probe = _longest_safe(text, minimum=6, maximum=100)
        if probe is None:
            continue
        where = tuple(sorted({first_seen.get(text, index), index}))
        state = "still open" if required else "done"
        found.append(Candidate("todo", f"To-do ({state}): {text}", (probe,), where, required))
    return found


# --- the final test status ----------------------------------------------------------------------

_SUMMARY_LINE = re.compile(
    r"^(?:=+ .*\b(?:passed|failed|errors?|no tests ran)\b.* =+|Tests?:\s+\d.*|"
    r"\s*Tests\s+\d+ (?:passed|failed).*|test result: .*|\s*\d+ (?:passing|failing)\b.*|"
    r"Ran \d+ tests? in .*)$"
)
_COUNTS = re.compile(
    r"\d+ (?:passed|failed|passing|failing|errors?|skipped|total)"
    r"(?:[,;|] ?\d+ (?:passed|failed|passing|failing|errors?|skipped|total|ignored|"
    r"deselected|xfailed|xpassed|warnings?))*"
)
_RAN = re.compile(r"Ran \d+ tests?")


def _summary_probe(line: str) -> str | None:
    counts = _COUNTS.search(line) or _RAN.search(line)
    return counts.group(0) if counts else None


def test_status_candidates(runs: Sequence[ToolRun]) -> list[Candidate]:
    summaries: list[tuple[str, ToolRun]] = []
    for run in runs:
        if run.command is None or not run.output:
            continue
        lines = [ln.rstrip() for ln in run.output.replace("\r", "").split("\n")]
        probes = [p for ln in lines if _SUMMARY_LINE.match(ln) for p in [_summary_probe(ln)] if p]
        if probes:
            summaries.append((probes[-1], run))
    if not summaries:
        return []
    probe, run = summaries[-1]
    stale = []
    for earlier, earlier_run in summaries[:-1]:
        # Only a later run of the same command supersedes a summary; another command may
        # have run other tests.
        if _run_key(earlier_run) != _run_key(run):
            continue
        folded, current = earlier.casefold(), probe.casefold()
        if folded not in current and current not in folded and earlier not in stale:
            stale.append(earlier)
    where = tuple(i for i in (run.index, run.output_index) if i is not None)
    text = f"The latest test run reported: {probe}"
    return [Candidate("test_status", text, (probe,), where, True, tuple(stale))]


# --- the last message ---------------------------------------------------------------------------


_TAG_ONLY = re.compile(r"^</?[\w-]+>$")


def last_message_candidates(texts: Sequence[str]) -> list[Candidate]:
    if not texts:
        return []
    index = len(texts) - 1
    text = texts[index]
    # Tag-only pieces (`<user_message>`, a thinking marker) say nothing of the message.
    pieces = [p for p in safe_pieces(text[:4000], minimum=8) if not _TAG_ONLY.match(p)]
    if not pieces:
        return []
    probe = tuple(dict.fromkeys([pieces[0][:120].strip(), max(pieces, key=len)[:120].strip()]))
    shown = text.strip().split("\n", 1)[0][:100]
    return [Candidate("last_message", f"The last message: {shown}", probe, (index,), True)]
