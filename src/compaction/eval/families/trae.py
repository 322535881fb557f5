"""A Trae-style family, telling the story's second-thoughts variant: a Nim package (Nim 2.2,
nimble, std/unittest through `nimble test --continue`, `nim check`, nimpretty, benchy for the
variant's figure) worked on through ByteDance's Trae Agent (bytedance/trae-agent), recorded as
OpenAI chat the way its OpenAI-compatible chat client keeps the history it sends
(`openai_compatible_base.py`: the assistant's message with its `tool_calls`, each result a
`tool` message).

Based on trae-agent's own sources (its `tools/`, `agent/trae_agent.py`, `agent/base_agent.py`,
`prompt/agent_prompt.py` and `utils/llm_clients/openai_compatible_base.py`):

- The tools are Trae's five: `bash` {command, restart}; `str_replace_based_edit_tool`
  {command: view / create / str_replace / insert, path, file_text, old_str, new_str,
  insert_line, view_range}, on absolute paths only; `json_edit_tool` {operation: view / set /
  add / remove, file_path, json_path, value, pretty_print}; `sequentialthinking` {thought,
  thought_number, total_thoughts, next_thought_needed, is_revision, revises_thought, …};
  `task_done` {}. Arguments carry only the keys given (the chat client's schemas make no key
  nullable-required; that is done for the `openai` provider's Responses client only).
- A result is what the tool returned, as `_msg_tool_result_handler` writes it: the output,
  then, when the tool reported anything on its error channel, `Tool call failed with error:`
  and that text. For `bash` the error channel is the command's stderr, whatever the exit
  status, and the exit status itself is never shown. The editor answers `Here's the result of
  running `cat -n` on <path>:` with six-column line numbers and a tab, `File created
  successfully at: <path>`, and for `str_replace` `The file <path> has been edited.` with a
  `cat -n` snippet of four lines either side and `Review the changes and make sure they are
  as expected. Edit the file again if necessary.`; a directory view lists `find -maxdepth 2`
  under `Here's the files and directories up to 2 levels deep in <path>, excluding hidden
  items:`. `json_edit_tool` answers `Successfully updated N location(s) at JSONPath '<path>'
  with value: <json>` and `JSONPath '<path>' matches:` with the indented JSON.
  `sequentialthinking` answers `Sequential thinking step completed.` and its `Status:` JSON
  (thought_number, total_thoughts, next_thought_needed, branches, thought_history_length).
- There is no to-do tool: the plan lives in `sequentialthinking` thoughts, written first as a
  list of steps (`Step N [not started]: …`), then rewritten as revisions of the thought that
  held it (`is_revision`, `revises_thought`), each step marked not started, in progress, done
  or dropped. The approach and its changes of mind are thoughts too, a change revising the
  thought it overturns.
- The user speaks through Trae's interactive mode: every message is a new task, wrapped as
  `TraeAgent.new_task` wraps it (`[Project root path]:` then `[Problem statement]: We're
  currently solving the following issue within our repository. Here's the issue text:`), on
  the history the client keeps (`reuse_history`). The repeated system prompt each new task
  sends is left out. A run ends with the model calling `task_done`; its words to the user
  are that message's content (`final_result`). `task_done` is not executed when a run
  ends, so no result follows the call in Trae's own history; here its answer "Task done." is
  written after it, or the history would not be valid chat. Work the user resumes without
  new words starts a run with a short task of their own.

Outputs follow the real tools: nimble's right-aligned categories (`  Verifying`, `   Building
… using c backend`, ` Nim Output` before the compiler's `file(line, col) Error: undeclared
identifier: 'tenantId'` and its `--spellSuggest` candidates, `       Tip:`, `    Error:
Build failed for the package:`), the compiler's messages on stderr; `nimble test --continue`
compiling each `tests/t*.nim` and running it, std/unittest's `[Suite]`, `  [OK]` and `
[FAILED]` lines with `Check failed:` and `… was …` checkpoints, the failed programs and
`Only N/M tests passed` (test files, as nimble counts them); `nim check` warnings;
nimpretty's silence; benchy's `min time avg time std dv runs` table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, code_file, hexid, lower_camel

ROOT = "/home/dev/sendwell"
PACKAGE = "sendwell"
VERSION = "0.3.0"
CONFIG = f"{ROOT}/config/sendwell.json"
BUILD = "nimble build"
TEST = "nimble test --continue"
BENCH = "nim c -r -d:release --hints:off bench/bflush.nim"
#: The story's to-do statuses as the plan's thoughts mark its steps.
STEP_STATUS = {"pending": "not started", "in_progress": "in progress", "completed": "done",
               "cancelled": "dropped"}  # fmt: skip
#: What each failing test checks (its name, `{m}` the module), the checked expression, the
#: name it reports, what that was, and the line of the check in the module's test file.
EXAMPLES = {
    "retries": ("redelivers a timed-out {m} envelope up to three times", "attempts == 3",
                "attempts", "2", 31),
    "orders_batches": ("drains {m} batches in the order they were parked",
                       "ids == @[1, 2, 3]", "ids", "@[1, 3, 2]", 47),
    "handles_empty": ("sends nothing when the {m} queue is empty", "sent == 0", "sent", "1", 62),
}  # fmt: skip
#: Test files beside the ones the story's failures live in (`tests/t<name>.nim`).
_OTHER_FILES = tuple(
    f"{a}{b}"
    for b in ("", "_errors", "_limits", "_roundtrip", "_headers", "_clock")
    for a in ("envelope", "signature", "routing", "codec", "digest", "nonce", "vault",
              "journal", "mailbox", "spool", "relay")
)  # fmt: skip
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "expires", "merges", "caches")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp")
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")
#: The line the failing build points at.
ERROR_LINE = 88
_SNIPPET = 4  # lines of context either side of an edit, as the editor shows them


def nim_line(line: str) -> str:
    """A story line as the Nim it stands for: the send before the fix passes a `tenantId`
    that is not declared, the fix the batch's; a limit is a constant, then a setting."""
    found = STORY_LINE.match(line)
    if not found:
        return line
    module = found.group(1)
    send = _SEND.match(line)
    if send:
        tenant = "batch.tenantId" if send.group(2) else "tenantId"
        return f"  {lower_camel(module)}Send(batch, tenant = {tenant})"
    value = found.group(3)
    name = f"{lower_camel(module)}Limit"
    if value.startswith("settings."):
        return f"let {name}* = settings.{name}"
    return f"const {name}* = {value}"


def numbered(lines: Sequence[str], first: int) -> str:
    """The editor's `_make_output` lines: the number right-aligned in six columns, a tab."""
    return "\n".join(f"{first + k:6}\t{line}" for k, line in enumerate(lines))


def bash_result(stdout: str, stderr: str = "") -> str:
    """A `bash` result as the chat client writes it: the output, then stderr after `Tool call
    failed with error:` (whatever the exit status); trailing newlines dropped."""
    result = f"{stdout}\n" if stdout else ""
    if stderr:
        result += f"Tool call failed with error:\n{stderr}"
    return result.strip()


def nimble(category: str, message: str) -> str:
    """A nimble display line: the category right-aligned in eleven columns."""
    return f"{category:>11} {message}"


def json_key(setting: str) -> str:
    """A setting's key in the package's JSON config (`redelivery backoff ceiling` →
    `redeliveryBackoffCeiling`)."""
    words = re.sub(r"[^a-z0-9 ]", "", setting.lower()).split()
    return words[0] + "".join(w.title() for w in words[1:])


SYSTEM_PROMPT = (
    "You are an expert AI software engineering agent.\n\n"
    "File Path Rule: All tools that take a `file_path` as an argument require an **absolute "
    "path**. You MUST construct the full, absolute path by combining the `[Project root path]` "
    "provided in the user's message with the file's path inside the project.\n\n"
    "Your primary goal is to resolve a given GitHub issue by navigating the provided codebase, "
    "identifying the root cause of the bug, implementing a robust fix, and ensuring your "
    "changes are safe and well-tested.\n\n"
    "Follow these steps methodically:\n\n"
    "1.  Understand the Problem\n2.  Explore and Locate\n3.  Reproduce the Bug (Crucial "
    "Step)\n4.  Debug and Diagnose\n5.  Develop and Implement a Fix\n6.  Verify and Test "
    "Rigorously\n7.  Summarize Your Work\n\n"
    "**Guiding Principle:** Act like a senior software engineer. Prioritize correctness, "
    "safety, and high-quality, test-driven development.\n\n"
    '# GUIDE FOR HOW TO USE "sequential_thinking" TOOL:\n'
    "- Your thinking should be thorough and so it's fine if it's very long. Set "
    "total_thoughts to at least 5, but setting it up to 25 is fine as well.\n"
    "- You can run bash commands (like tests, a reproduction script, or 'grep'/'find' to find "
    "relevant context) in between thoughts.\n\n"
    "If you are sure the issue has been solved, you should call the `task_done` to finish "
    "the task."
)


class TraeVoice(Voice):
    family = "trae-style"
    system_prompt = SYSTEM_PROMPT
    src = f"src/{PACKAGE}"
    ext = "nim"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "nim r --hints:off tools/replay.nim --queue:{module} --dryRun",
        "nimpretty --maxLineLen:100 src/sendwell/{module}.nim",
        f"nim check --hints:off src/{PACKAGE}.nim",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("redelivery backoff ceiling", "8 seconds", "120 seconds", "40 seconds"),
        ("outbox drain batch", "50 envelopes", "600 envelopes", "300 envelopes"),
        ("parked envelope expiry", "2 days", "45 days", "21 days"),
        ("chronos worker count", "3 workers", "24 workers", "12 workers"),
        ("signature clock skew", "4 minutes", "150 minutes", "25 minutes"),
        ("HTTP connect timeout", "6 seconds", "75 seconds", "30 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a global Table of parked envelopes inside the dispatcher",
         "a Redis list written through nim-redis",
         "that Table is empty again after every restart",
         "an SQLite outbox table drained by a chronos loop",
         "the shared Redis evicts keys under memory pressure"),
        ("one Lock around the whole dispatcher", "a spawned worker thread per tenant",
         "a slow tenant holds the Lock while all the others wait",
         "one AsyncQueue per tenant drained on a single chronos event loop",
         "every thread would open its own TLS context and connection pool"),
        ("a crontab entry that runs the resend binary", "a systemd timer next to the service",
         "cron loses the runs missed while the host was down",
         "a resend loop inside the service woken by sleepAsync",
         "ops will not ship another unit file per region"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "sendwell's {module} outbox parks webhook envelopes while a partner endpoint is "
            "down, and nothing ever sends them again once the partner is back. They must be "
            "redelivered, oldest parked first. The {other} module calls the same flush proc; "
            "fix it there too.",
            "Parked envelopes in {module} are never redelivered after the partner recovers. "
            "Make the outbox send them again in the order they were parked, and fix {other} "
            "as well, since it goes through the same flush proc.",
        ],
        "set_value": [
            "Begin with the {key} set to {value}.",
            "For now the {key} should be {value}.",
        ],
        "ack": [
            "Understood, I will respect that for the rest of the issue.",
            "Acknowledged; the remaining changes will follow it.",
            "Okay, that is now part of the requirements I am working to.",
        ],
        "noted": [
            "Acknowledged. Returning to the redelivery fix.",
            "Taken on board; going back to the parked envelopes.",
        ],
        "paused": [
            "Stopping here for now: I have traced the flush path and will continue with the "
            "fix in the next task.",
            "Pausing: the flush code is mapped and the change itself comes next.",
        ],
        "continue": [
            "Continue working on the issue.",
            "Go on with the fix from where you left off.",
            "Resume the redelivery work.",
        ],
        "constraint": [
            "Requirement for this issue: {rule}.",
            "Please respect this while fixing it: {rule}.",
            "The reviewers will reject the patch otherwise: {rule}.",
        ],
        "plan": [
            "Approach: keep the parked envelopes in {plan}, so {module} still has them after "
            "a restart and can redeliver them in parking order.",
            "The fix will rest on {plan}; with it nothing that {module} parks is lost before "
            "the partner comes back.",
        ],
        "change_value": [
            "{old} is too short for the {key} with our slower partners. Raise it to {new}.",
            "Operations want the {key} moved from {old} to {new}.",
            "Set the {key} to {new}; with {old} the on-call gets paged every night.",
        ],
        "change_again": [
            "The {key} has to move once more: {old} floods the partners. Use {new} and keep "
            "it there.",
            "Staging did not like {old} for the {key}. Go with {new}, that is the final value.",
            "Bring the {key} to {new} instead; {old} failed the load test.",
        ],
        "ack_value": [
            "config/sendwell.json now has the {key} at {new}.",
            "Updated config/sendwell.json: the {key} is {new}.",
        ],
        "reverse": [
            "Revising my approach: {old} cannot work here, because {why}. The better option "
            "is {new}.",
            "On reflection {old} is the wrong foundation, since {why}. Moving the fix to {new}.",
        ],
        "reverse_again": [
            "Revising once more: {old} brings its own trouble, {why}. The fix will use {new}.",
            "{old} is not right either, because {why}. Settling on {new} for the fix.",
        ],
        "question": [
            "Which commit broke redelivery? The incident write-up needs its hash.",
            "Track down the commit that stopped the redelivery and tell me its hash, it goes "
            "into the postmortem.",
        ],
        "commit": [
            "deps: require chronos 4.0",
            "tests: move fixtures under tests/fixtures",
            "docs: describe the replay tool",
            "ci: cache ~/.nimble between runs",
        ],
        "answer": [
            "The culprit is {sha}: it switched the outbox to the shared HTTP client and "
            "dropped the retry wrapper on the way.",
            "{sha} broke it. That commit moved the outbox onto the shared HTTP client, and "
            "the retries were lost in the move.",
        ],
        "measure_question": [
            "Benchmark one flush of the parked envelopes with benchy and report the average. "
            "That number goes into the design doc, so keep it.",
            "How long does a single flush take? Run the benchy benchmark and remember the "
            "average time for the write-up.",
        ],
        "measure_answer": [
            "benchy reports an average of {figure}0 ms for one flush of 10,000 parked envelopes.",
            "One flush of 10,000 parked envelopes averages {figure}0 ms in benchy.",
        ],
        "last": [
            'Stopping at this point: the test "{test}" still fails, and the step in '
            "progress is to {todo}. The other steps of the plan are done or dropped.",
            'Where this stands: unittest still reports "{test}" as FAILED, and I am on the '
            "step to {todo}. Every other step is finished or was dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._open = False  # a task run is under way (a new task, no task_done yet)
        self._acted = False  # the run under way has called a tool
        self._cwd_set = False  # the bash session has changed to the project root
        self._said = ""  # the phrase drawn last, and its values
        self._values: dict[str, str] = {}
        self._thoughts = 0  # thought_history_length of the sequentialthinking tool
        self._plan_thought = 0  # the thought that holds the plan now
        self._approach_thought = 0  # the thought that holds the approach now
        self._files: dict[str, list[str]] = {}  # the lines of each file the agent has seen
        self._written: list[str] = []  # files created, newest last
        self._failed_before: list[str] = []  # tests an earlier run reported failing

    @staticmethod
    def absolute(path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return EXAMPLES[name.removeprefix(f"test_{module}_")][0].format(m=module)

    def phrase(self, which: str, /, **values: str) -> str:
        # What is said next depends on what was drawn: a plan is a thought, an answer ends a run.
        self._said, self._values = which, values
        return super().phrase(which, **values)

    # --- runs: tasks, and task_done ------------------------------------------------------

    def _task(self, text: str) -> None:
        self.s.user(
            f"[Project root path]:\n{ROOT}\n\n[Problem statement]: We're currently solving the "
            f"following issue within our repository. Here's the issue text:\n{text}\n"
        )
        self._open, self._acted = True, False

    def _ensure_run(self) -> None:
        if not self._open:
            self._task(super().phrase("continue"))

    def _call(self, name: str, arguments: dict[str, Any], result: str, *,
              filler: bool = False) -> None:  # fmt: skip
        self._ensure_run()
        self._acted = True
        self.s.call(name, arguments, result, filler=filler)

    def _done(self, text: str) -> None:
        """The run ends: the model's words to the user with its `task_done` call."""
        self._ensure_run()
        self.s.call("task_done", {}, "Task done.", text=text)
        self._open = False

    def user(self, text: str) -> None:
        if self._open:
            self._done(super().phrase("paused" if self._acted else "noted"))
        self._task(text)

    def say(self, text: str) -> None:
        which, values = self._said, self._values
        if which == "plan":
            self._approach_thought = self._think(text)
        elif which in ("reverse", "reverse_again"):
            self._approach_thought = self._think(text, revises=self._approach_thought)
        else:
            if which == "ack_value":
                self._set_config(values["key"], values["new"])
            self._done(text)

    def finish(self, text: str) -> None:
        self._done(text)

    # --- sequentialthinking ---------------------------------------------------------------

    def _think(self, thought: str, *, revises: int = 0, more: bool = True) -> int:
        self._thoughts += 1
        number = self._thoughts
        total = max(8, number + 3)
        arguments: dict[str, Any] = {
            "thought": thought,
            "thought_number": number,
            "total_thoughts": total,
            "next_thought_needed": more,
        }
        if revises:
            arguments |= {"is_revision": True, "revises_thought": revises}
        status = {
            "thought_number": number,
            "total_thoughts": total,
            "next_thought_needed": more,
            "branches": [],
            "thought_history_length": self._thoughts,
        }
        result = f"Sequential thinking step completed.\n\nStatus:\n{json.dumps(status, indent=2)}"
        self._call("sequentialthinking", arguments, result)
        return number

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        steps = "\n".join(f"Step {k} [{STEP_STATUS[status]}]: {text}"
                          for k, (text, status) in enumerate(items, 1))  # fmt: skip
        if not self._plan_thought:
            thought = f"Breaking the issue into steps I will work through:\n{steps}"
            self._plan_thought = self._think(thought)
            return
        thought = f"Updating the plan of thought {self._plan_thought} after the latest results:\n"
        self._plan_thought = self._think(thought + steps, revises=self._plan_thought)

    # --- bash -----------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # The result shows no exit status: a failure shows only in what the command printed.
        if not self._cwd_set:
            command, self._cwd_set = f"cd {ROOT} && {command}", True
        arguments: dict[str, Any] = {"command": command}
        if self.rng.random() < 0.15:
            arguments["restart"] = False
        self._call("bash", arguments, output, filler=filler)

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "tests/fixtures/", 1)
        destination = destination.replace("testdata/", "tests/fixtures/", 1)
        self.shell(f"mkdir -p {destination.rsplit('/', 1)[0]} && git mv {source} {destination}",
                   "")  # fmt: skip
        envelope = {
            "id": f"env-{hexid(self.rng, 10)}",
            "tenant": f"t-{self.rng.randint(100, 999)}",
            "parkedAt": f"2026-11-{self.rng.randint(10, 28):02d}T0{self.rng.randint(1, 9)}:00:00Z",
            "attempts": 0,
        }
        arguments = {"operation": "view", "file_path": self.absolute(destination),
                     "json_path": "$.envelopes[0]"}  # fmt: skip
        result = f"JSONPath '$.envelopes[0]' matches:\n{json.dumps(envelope, indent=2)}"
        self._call("json_edit_tool", arguments, result)

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        lines = []
        for hit in hits:
            path, line, text = hit.split(":", 2)
            lines.append(f"{path}:{line}:{text.strip()}")
        self.shell(f"grep -rn '{pattern}' {root}/", "\n".join(lines), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = list(dict.fromkeys(paths))
        if self.rng.random() < 0.4:
            self.shell(f"find {root} -name '*.nim'", "\n".join(unique), filler=filler)
            return
        where = self.absolute(root)
        found = "\n".join([where, *(self.absolute(p) for p in unique)])
        result = (
            f"Here's the files and directories up to 2 levels deep in {where}, excluding "
            f"hidden items:\n{found}"
        )
        self._call("str_replace_based_edit_tool", {"command": "view", "path": where}, result,
                   filler=filler)  # fmt: skip

    # --- str_replace_based_edit_tool ------------------------------------------------------

    def _view(self, path: str, lines: list[str], window: tuple[int, int] | None,
              *, filler: bool = False) -> None:  # fmt: skip
        where = self.absolute(path)
        arguments: dict[str, Any] = {"command": "view", "path": where}
        first, shown = 1, lines
        if window is not None:
            arguments["view_range"] = list(window)
            first = window[0]
            shown = lines[first - 1 :] if window[1] == -1 else lines[first - 1 : window[1]]
        result = f"Here's the result of running `cat -n` on {where}:\n{numbered(shown, first)}"
        self._files[path] = lines
        self._call("str_replace_based_edit_tool", arguments, result, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = [nim_line(x) for x in content.split("\n")]
        while lines and lines[-1] == "":
            lines.pop()
        window = None
        if filler and len(lines) > 40 and self.rng.random() < 0.3:
            window = (1, 40) if self.rng.random() < 0.5 else (21, -1)
        self._view(path, lines, window, filler=filler)

    def _read_around(self, path: str, line: str) -> None:
        """The lines around the one the build error points at, before editing them."""
        before = code_file(self.rng, "nim", ERROR_LINE - 2).split("\n")
        after = code_file(self.rng, "nim", 12).split("\n")
        lines = [*before[: ERROR_LINE - 2], "proc flushParked(batch: Batch) =", line, *after]
        self._view(path, lines, (ERROR_LINE - 7, ERROR_LINE + 8))

    def edit(self, path: str, old: str, new: str) -> None:
        old_line, new_line = nim_line(old), nim_line(new)
        if old_line not in self._files.get(path, []):
            self._read_around(path, old_line)
        lines = self._files[path]
        at = lines.index(old_line)
        lines[at] = new_line
        start = max(0, at - _SNIPPET)
        snippet = lines[start : at + _SNIPPET + 1]
        where = self.absolute(path)
        arguments = {"command": "str_replace", "path": where, "old_str": old_line,
                     "new_str": new_line}  # fmt: skip
        result = (
            f"The file {where} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of {where}:\n{numbered(snippet, start + 1)}\nReview the changes and make "
            "sure they are as expected. Edit the file again if necessary."
        )
        self._call("str_replace_based_edit_tool", arguments, result)

    def create(self, path: str, content: str) -> None:
        module = path.rsplit("/", 1)[-1].removesuffix(".nim")
        text = f"## {module.replace('_', ' ')}: the parked envelopes' side of the outbox.\n\n"
        text += content + "\n"
        where = self.absolute(path)
        self._files[path] = text.split("\n")
        self._written.append(path)
        arguments = {"command": "create", "path": where, "file_text": text}
        self._call("str_replace_based_edit_tool", arguments,
                   f"File created successfully at: {where}")  # fmt: skip

    # --- json_edit_tool -------------------------------------------------------------------

    def _set_config(self, key: str, value: str) -> None:
        json_path = f"$.{json_key(key)}"
        arguments = {"operation": "set", "file_path": CONFIG, "json_path": json_path,
                     "value": value}  # fmt: skip
        result = (
            f"Successfully updated 1 location(s) at JSONPath '{json_path}' with value: "
            f"{json.dumps(value)}"
        )
        self._call("json_edit_tool", arguments, result)

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return bash_result(
                f"replay: dry run, nothing is sent\nreplay: parked={parked} eligible=0 oldest=none"
            )
        if k == 1:
            return ""  # nimpretty rewrites the file in place and says nothing
        path = self._written[-1] if self._written else f"{self.src}/outbox.nim"
        unused = self.rng.choice(["strutils", "sequtils", "options"])
        return bash_result(
            "",
            f"{self.absolute(path)}(3, 8) Warning: imported and not used: '{unused}' "
            "[UnusedImport]",
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        line = nim_line(f"{module}_send(batch)")
        column = line.index("tenantId") + 1
        probe = "undeclared identifier: 'tenantId'"
        where = f"{ROOT}/{self.src}/{module}.nim({ERROR_LINE}, {column})"
        suppressed = self.rng.randint(3, 9)
        out = [
            nimble("Verifying", f"dependencies for {PACKAGE}@{VERSION}"),
            nimble("Building", f"{PACKAGE}/{PACKAGE} using c backend"),
            nimble("Nim Output", f"{where} Error: {probe}"),
            nimble("...", "candidates (edit distance, scope distance); see '--spellSuggest':"),
            nimble("...", " (2, 2): 'tenant'"),
            nimble(
                "Tip:", f"{suppressed} messages have been suppressed, use --verbose to show them."
            ),
        ]
        # nimble's own failure goes to stderr, after its stack trace line.
        err = (
            "nimble.nim(415)          buildFromDir\n\n"
            f"    Error:  Build failed for the package: {PACKAGE}"
        )
        return bash_result("\n".join(out), err), probe, BUILD

    def build_ok(self) -> str:
        return bash_result(
            nimble("Verifying", f"dependencies for {PACKAGE}@{VERSION}") + "\n"
            + nimble("Building", f"{PACKAGE}/{PACKAGE} using c backend")
        )  # fmt: skip

    def measurement(self, figure: str) -> tuple[str, str]:
        tag = "flush 10k parked envelopes"
        low = f"{float(figure) * 0.96:.3f}"
        spread = f"{self.rng.randint(4, 19)}.{self.rng.randint(0, 999):03d}"
        runs = self.rng.choice([10, 11, 12])
        # benchy's readout: min, avg, std dev and runs, the name padded with dots.
        readout = f"{low} ms {figure + '0':>10} ms {'±' + spread:>10}  {'x' + str(runs):>5}"
        row = f"{tag} {'.' * (40 - len(tag) - len(low))} {readout}"
        header = "name ............................... min time      avg time    std dv   runs"
        return bash_result(f"{header}\n{row}"), BENCH

    def test_command(self) -> str:
        return TEST

    def test_counts(self, failed: int, passed: int) -> str:
        if not failed:
            return "All tests passed"
        return f"Only {passed}/{failed + passed} tests passed"

    @staticmethod
    def _parse(test: str) -> tuple[str, str]:
        """(module, example key) of one of the story's test names."""
        for key, (template, *_) in EXAMPLES.items():
            before, after = template.split("{m}")
            if test.startswith(before) and test.endswith(after):
                return test[len(before) : len(test) - len(after)], key
        raise ValueError(test)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # Files nimble runs: one per module, an earlier run's failures among them (passing
        # now), and the package's other test files; nimble counts files, not tests.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        files: dict[str, list[str]] = {}
        for test in named:
            files.setdefault(self._parse(test)[0], []).append(test)
        for other in _OTHER_FILES[: failed + passed - len(files)]:
            files[other] = []
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        out: list[str] = []
        err: list[str] = []
        for k, name in enumerate(sorted(files)):
            binary = f"{ROOT}/tests/t{name}"
            out += [nimble("Compiling", f"{binary} (from package {PACKAGE}) using c backend"),
                    "", f"[Suite] {name}"]  # fmt: skip
            for test in files[name]:
                if test in failing:
                    _, check, subject, actual, at = EXAMPLES[self._parse(test)[1]]
                    out += [f"    {binary}.nim({at}, 10): Check failed: {check}",
                            f"    {subject} was {actual}", f"  [FAILED] {test}"]  # fmt: skip
                else:
                    out.append(f"  [OK] {test}")
            for j in range(1 + (k % 2)):
                out.append(f"  [OK] {names[(k * 3 + j) % len(names)]}")
            if any(t in failing for t in files[name]):
                err.append(f"Error: execution of an external program failed: '{binary}'")
        if failed:
            err.append(nimble("Error:", self.test_counts(failed, passed)))
        else:
            out.append(nimble("Success:", self.test_counts(failed, passed)))
        return bash_result("\n".join(out), "\n".join(err))
