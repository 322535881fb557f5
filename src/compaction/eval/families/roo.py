"""A Roo-Code-style family, telling the story's second-thoughts variant: an Erlang/OTP
application (rebar3 compile, EUnit through rebar3's progress formatter, Common Test with
cth_readable, Dialyzer, erlfmt through `rebar3 fmt`, a `timer:tc` benchmark module for the
variant's figure) worked on through Roo Code (RooCodeInc/Roo-Code, the VS Code extension) with
native tool calling, by a user who answers the assistant's follow-up questions and an
assistant who writes a sentence or two before each tool call. Roo Code talks to Claude as often
as to OpenAI-compatible models; the benchmark measures this family in the Anthropic Messages
dialect too (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`), where each result is a
`tool_result` block and the environment details a text block of the same user message.

Where the shapes come from: Roo Code 3.35.5 (commit 1879200964f6, 3 December 2025), the last
release whose native tools hold both `insert_content` and `search_and_replace` (later releases
drop the first and rename the second `edit`). From `src/core/prompts/tools/native-tools/`:
- `execute_command` {command, cwd}; `ExecuteCommandTool` answers "Command executed in terminal
  within working directory '<cwd>'. Exit code: N\\nOutput:\\n…" (the template leaves two
  spaces after "terminal"), with "Command execution was not successful, inspect the cause and
  adjust as needed." before a non-zero exit code.
- `read_file` {files: [{path, line_ranges}]} (native arguments, partial reads on; `line_ranges`
  null for a whole file): answers "File: <path>\\nLines A-B:\\n" and the lines as
  `addLineNumbers` numbers them ("NN | text", padded to the widest number).
- `write_to_file` {path, content}, `apply_diff` {path, diff} (SEARCH/REPLACE blocks with
  `:start_line:` and `-------`), `insert_content` {path, line, content} and
  `search_and_replace` {path, operations: [{search, replace}]}: all answer through
  `DiffViewProvider.pushToolWriteResult`, which under the native protocol is the JSON
  {path, operation "created"/"modified", notice} (the XML protocol's `<file_write_result>`
  holds the same fields); `apply_diff` with one block adds its `<notice>Making multiple
  related changes …</notice>`.
- `search_files` {path, regex, file_pattern}: ripgrep's "Found N results." and the matches
  under `# <file>` as "NNN | text" lines closed by `----`; `list_files` {path, recursive}:
  paths relative to the listed folder, sorted.
- `update_todo_list` {todos}: one markdown checklist, `[ ]` pending, `[-]` in progress, `[x]`
  completed, the whole list every time (a dropped item is left out; the tool has no cancelled
  state); answers "Todo list updated successfully.".
- `ask_followup_question` {question, follow_up: [{text, mode}]}: the user's reply comes back as
  `<answer>\\n…\\n</answer>`; this is how the user's later words reach the model here.
- `switch_mode` {mode_slug, reason}: "Successfully switched from 🏗️ Architect mode to 💻 Code
  mode because: …."; the task starts in Architect mode (read tools and the to-do list only)
  and switches before its first command or edit.
- `attempt_completion` {result} ends the session (its answer is empty: the user accepted).
- the first user message is `<task>\\n…\\n</task>` followed by `<environment_details>` with
  the workspace's files; every tool result is followed by the `<environment_details>` block
  `getEnvironmentDetails` builds (visible files, open tabs, current time, cost, mode with its
  `<tool_format>native</tool_format>`, and the REMINDERS table of the to-do list from
  `formatReminderSection`). Under OpenAI chat Roo's converter (`openai-format.ts`) sends the
  tool result as a `tool` message and the block as the user message after it.
Deletes and moves go through `execute_command` (`git rm`, `git mv`), as Roo has no tool for
them. What is this family's own: the wording of the assistant's and the user's sentences, the
follow-up questions, and the project.

Tool outputs follow rebar3 3.24's: `===> Verifying dependencies...`, `===> Analyzing
applications...`, `===> Compiling relay`; the compiler's rich error format (`┌─ src/x.erl:`,
the source line, `╰── variable 'TenantId' is unbound`); EUnit's progress dots, its `Failures:`
blocks (`Failure/Error: ?assertEqual(…)`, `expected:`, `got:`, the `%%` location), `Finished in
… seconds` and `N tests, M failures`, then `===> Error running tests`; Common Test's
`%%% SUITE ==> case: OK` lines and `All N tests passed.`; Dialyzer's progress lines, its
warnings under their file and `===> Warnings occurred running dialyzer: N`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, code_file

ROOT = "/home/dev/code/relay"
APP = "relay"
OTP = "27.1.2"
MODEL = "claude-sonnet-4-5"
#: The build whose compile error the story fixes, the tests, and the variant's benchmark.
BUILD = "rebar3 compile"
TESTS_COMMAND = "rebar3 eunit"
BENCH = "erl -noshell -pa _build/default/lib/*/ebin -eval 'relay_bench:flush(1000), halt().'"
#: Roo's modes as its environment details and `switch_mode` name them.
MODES = {"architect": "🏗️ Architect", "code": "💻 Code"}
#: The story's statuses as Roo's checklist marks them; a cancelled to-do is left out.
MARKS = {"pending": "[ ]", "in_progress": "[-]", "completed": "[x]"}
REMINDER_STATUS = {"pending": "Pending", "in_progress": "In Progress", "completed": "Completed"}
#: What `pushToolWriteResult` tells the model after every write (its two notices, joined).
WRITE_NOTICE = (
    "You do not need to re-read the file, as you have seen all changes Proceed with the task "
    "using these changes as the new baseline."
)
SINGLE_BLOCK_NOTICE = (
    "\n<notice>Making multiple related changes in a single apply_diff is more efficient. If "
    "other changes are needed in this file, please include them as additional SEARCH/REPLACE "
    "blocks.</notice>"
)
#: The failing tests: (EUnit function, expected, got, line of the assertion).
TESTS = {
    "retries": ("retries_three_times_test", "3", "2", 31),
    "orders_batches": ("keeps_enqueue_order_test", "[1,2,3]", "[1,3,2]", 47),
    "handles_empty": ("empty_queue_is_noop_test", "0", "1", 62),
}
#: Where the Common Test output names its suite, filled in from the command that ran it.
SUITE = "<suite>"
_SUITE_CASES = ("parks_when_partner_down", "resends_after_recovery", "keeps_order_per_tenant",
                "drops_expired", "survives_restart", "reports_metrics")  # fmt: skip
_QUESTIONS = (
    ("Before I continue, is there anything you want me to take into account?",
     ["Carry on with the current plan", "Pause so I can review the todo list"]),
    ("Does the plan so far match what you need, or should I adjust something?",
     ["It matches, go ahead", "Let me add a requirement first"]),
    ("Anything else I should know before the next step?",
     ["No, continue", "Yes, one more thing"]),
)  # fmt: skip


def erlang_line(line: str) -> str:
    """A story line as the Erlang it stands for: a limit is a function of its own, the send
    before the fix passes a `TenantId` that is not bound, the fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        if value.startswith("settings."):
            value = f"persistent_term:get({{{APP}, {module}_limit}})"
        return f"{module}_limit() -> {value}."
    tenant = "Batch#batch.tenant_id" if fixed else "TenantId"
    return f"    ok = {module}_client:send(Batch, {tenant}),"


def numbered(lines: Sequence[str], first: int = 1) -> str:
    """Lines as Roo's `addLineNumbers` prints them: `NN | text`, padded to the widest."""
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{str(first + k).rjust(width)} | {line}" for k, line in enumerate(lines))


def search_block(start: int, before: str, after: str) -> str:
    return (
        f"<<<<<<< SEARCH\n:start_line:{start}\n-------\n{before}\n=======\n{after}\n>>>>>>> REPLACE"
    )


class RooVoice(Voice):
    family = "roo-style"
    system_prompt = (
        "You are Roo, an experienced technical leader who is inquisitive and an excellent "
        "planner. Your goal is to gather information and get context to create a detailed "
        "plan for accomplishing the user's task, which the user will review and approve before "
        "they switch into another mode to implement the solution.\n\n"
        "MARKDOWN RULES\n\nALL responses MUST show ANY `language construct` OR filename "
        "reference as clickable.\n\n====\n\nTOOL USE\n\nYou have access to a set of tools that "
        "are executed upon the user's approval. Use the provider-native tool-calling mechanism. "
        "You must call at least one tool per assistant response.\n\n====\n\nRULES\n\n"
        f"- The project base directory is: {ROOT}\n"
        "- All file paths must be relative to this directory.\n"
        "- Use attempt_completion when the task is done.\n\n====\n\nSYSTEM INFORMATION\n\n"
        "Operating System: Linux 6.8\nDefault Shell: /bin/bash\n"
        f"Home Directory: /home/dev\nCurrent Workspace Directory: {ROOT}\n\n"
        f"The project is an Erlang/OTP {OTP} application built with rebar3: EUnit and Common "
        "Test for tests, Dialyzer for types, erlfmt for formatting."
    )
    src = "src"
    ext = "erl"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "rebar3 ct --suite test/{module}_SUITE",
        "rebar3 fmt --check",
        "rebar3 dialyzer",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("redelivery backoff", "8 seconds", "120 seconds", "45 seconds"),
        ("outbox sweep interval", "400 ms", "9000 ms", "2500 ms"),
        ("delivery worker pool", "3 workers", "96 workers", "24 workers"),
        ("dead-letter TTL", "2 days", "90 days", "21 days"),
        ("mailbox high-water mark", "1000 messages", "50000 messages", "8000 messages"),
        ("partner connection pool", "10 connections", "400 connections", "60 connections"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an ETS table of parked messages owned by the relay process",
         "a Mnesia disc_copies table replicated to both nodes",
         "the ETS table dies with its owner and takes every parked message along",
         "a PostgreSQL outbox table read through epgsql",
         "a Mnesia netsplit would have to be healed by hand in the middle of the night"),
        ("one gen_server serialising every delivery", "a separate BEAM node per tenant",
         "one slow partner blocks that gen_server's mailbox for everybody",
         "per-tenant gen_statem workers under one dynamic supervisor",
         "a node per tenant multiplies the memory and the distribution mesh"),
        ("a host crontab entry running the redeliver escript", "the erlcron library in the release",
         "the crontab entry runs on every node and sends each message twice",
         "a timer:send_interval tick inside the relay's own gen_server",
         "erlcron pulls in a dependency nobody on the team maintains"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Messages that {module} parks while a partner endpoint is down are never sent "
            "again once the partner recovers. Make the relay redeliver them, oldest first. "
            "{other} goes through the same relay path, please cover it as well.",
            "Since the last deploy the parked messages of {module} stay parked forever, even "
            "after the partner is back up. Fix the redelivery; {other} has the same wiring and "
            "the same bug.",
        ],
        "set_value": [
            "Let the {key} start out at {value}.",
            "Put the {key} at {value} for a start.",
        ],
        "ack": [
            "Noted, I'll keep to that while I continue.",
            "Understood. Continuing with the next step.",
            "Thanks, that is clear. Moving on.",
        ],
        "constraint": [
            "One rule for this work: {rule}.",
            "Keep this in mind throughout: {rule}.",
            "The team insists on this: {rule}.",
        ],
        "plan": [
            "Here is the plan: {plan}, so that {module} can pick up its parked messages again "
            "after a restart.",
            "Proposed design: {plan}. That way nothing {module} parks is lost.",
        ],
        "change_value": [
            "The {key} of {old} is too aggressive for the slow partners. Change it to {new}.",
            "Ops asked for a {key} of {new} rather than {old}.",
            "{old} as the {key} keeps setting off the pager. Go with {new}.",
        ],
        "change_again": [
            "Adjust the {key} once more: {old} is more than the partners tolerate, use {new}.",
            "Back to the {key}, sorry. {old} did not survive the overnight load test; "
            "{new} is the final number.",
            "Lower the {key} to {new}. {old} was fine on paper but not on staging.",
        ],
        "ack_value": [
            "I've set the {key} to {new} in `config/sys.config`.",
            "`config/sys.config` now has the {key} at {new}.",
        ],
        "reverse": [
            "I'm revising the design: {old} won't work, because {why}. I'm switching to {new}.",
            "Scratch {old}, since {why}. The design is now {new}.",
        ],
        "reverse_again": [
            "I have to revise the design once more: {why}, so {old} is out as well. Going with "
            "{new}.",
            "{old} has its own problem, {why}. I'm replacing it with {new}.",
        ],
        "question": [
            "Which commit broke the redelivery? I need its hash for the incident report, "
            "please keep it at hand.",
            "Find out which commit introduced this regression; the postmortem needs the hash.",
        ],
        "commit": [
            "build: bump rebar3_hex to 7.0.8",
            "test: move CT fixtures into the suite data dirs",
            "docs: describe the redeliver escript",
            "ci: cache the hex package directory",
        ],
        "answer": [
            "The regression came in with {sha}. That commit moved the relay onto the shared "
            "hackney pool and dropped its retry wrapper on the way.",
            "{sha} is the commit: it put the relay on the shared hackney pool and lost the "
            "retries in the process.",
        ],
        "measure_question": [
            "Benchmark one flush batch with the timer:tc bench module and tell me the median. "
            "The figure goes into the design doc, so hold on to it.",
            "How long does flushing a single batch take? Run the bench module and keep the "
            "median for the write-up.",
        ],
        "measure_answer": [
            "The median flush of one batch is {figure} microseconds over 1000 runs.",
            "One batch flushes in {figure} microseconds at the median of 1000 runs.",
        ],
        "last": [
            "The redelivery fix is in, but {test} still fails; the todo item in progress is to "
            "{todo}. The rest of the todo list is done or was dropped.",
            "Redelivery works again. Still failing: {test}; in progress: {todo}. Everything "
            "else on the todo list is either completed or removed.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._mode = "architect"
        self._pending: list[str] = []  # assistant sentences waiting for the next tool call
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read or written
        self._tabs: list[str] = []  # open editor tabs, most recent last
        self._todos: list[tuple[str, str]] = []  # the checklist as last written
        self._cost = 0.0
        self._clock = 14 * 3600 + self.rng.randint(0, 1800)  # seconds since midnight UTC
        self._failed_before: list[str] = []
        self._started = False

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        function = TESTS[name.removeprefix(f"test_{module}_")][0]
        return f"{module}_tests:{function}/0"

    # --- the conversation -----------------------------------------------------------------

    def _environment(self, *, files: Sequence[str] = ()) -> str:
        self._clock += self.rng.randint(20, 240)
        self._cost += self.rng.randint(1, 9) / 100
        hours, rest = divmod(self._clock, 3600)
        millis = self.rng.randint(0, 999)
        stamp = f"2026-12-01T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{millis:03d}Z"
        parts = []
        if self._tabs:
            parts += ["# VSCode Visible Files", self._tabs[-1], "", "# VSCode Open Tabs",
                      "\n".join(self._tabs[-6:]), ""]  # fmt: skip
        parts += [
            "# Current Time",
            f"Current time in ISO 8601 UTC format: {stamp}",
            "User time zone: Europe/Berlin, UTC+1:00",
            "",
            "# Current Cost",
            f"${self._cost:.2f}",
            "",
            "# Current Mode",
            f"<slug>{self._mode}</slug>",
            f"<name>{MODES[self._mode]}</name>",
            f"<model>{MODEL}</model>",
            "<tool_format>native</tool_format>",
        ]
        if files:
            parts += ["", f"# Current Workspace Directory ({ROOT}) Files", *files]
        return (
            "<environment_details>\n" + "\n".join(parts).strip() + "\n"
            + self._reminders() + "\n</environment_details>"
        )  # fmt: skip

    def _reminders(self) -> str:
        if not self._todos:
            return (
                "You have not created a todo list yet. Create one with `update_todo_list` if "
                "your task is complicated or involves multiple steps."
            )
        lines = ["====", "", "REMINDERS", "",
                 "Below is your current list of reminders for this task. Keep them updated as "
                 "you progress.", "",
                 "| # | Content | Status |", "|---|---------|--------|"]  # fmt: skip
        for k, (text, status) in enumerate(self._todos, start=1):
            lines.append(f"| {k} | {text} | {REMINDER_STATUS[status]} |")
        lines += ["", "", "IMPORTANT: When task status changes, remember to call the "
                  "`update_todo_list` tool to update your progress.", ""]  # fmt: skip
        return "\n".join(lines)

    def _call(self, name: str, arguments: dict[str, Any], result: str, *, filler: bool = False,
              text: str = "") -> None:  # fmt: skip
        """A tool call, its result, and the environment details Roo sends after it. Words the
        assistant said since the last call ride on this one (Roo answers with a tool)."""
        said = "\n\n".join([*self._pending, *([text] if text else [])])
        self._pending.clear()
        # A call that carries the story's words is no filler, whatever it reads.
        self.s.call(name, arguments, result, text=said, filler=filler and not said)
        self.s.user(self._environment())

    def user(self, text: str) -> None:
        if not self._started:
            self._started = True
            files = sorted(["rebar.config", "rebar.lock", "README.md", "config/",
                            "config/sys.config", "config/vm.args", "src/", f"src/{APP}.app.src",
                            f"src/{APP}_app.erl", f"src/{APP}_sup.erl", "test/", "bench/",
                            f"bench/{APP}_bench.erl"])  # fmt: skip
            self.s.messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": f"<task>\n{text}\n</task>"},
                        {"type": "text", "text": self._environment(files=files)},
                    ],
                }
            )
            return
        question, answers = _QUESTIONS[self.rng.randrange(len(_QUESTIONS))]
        follow_up = [{"text": answer, "mode": None} for answer in answers]
        self._call("ask_followup_question", {"question": question, "follow_up": follow_up},
                   f"<answer>\n{text}\n</answer>")  # fmt: skip

    def say(self, text: str) -> None:
        self._pending.append(text)

    def finish(self, text: str) -> None:
        said = "\n\n".join(self._pending)
        self._pending.clear()
        self.s.call("attempt_completion", {"result": text}, "", text=said)

    def _code_mode(self) -> None:
        if self._mode == "code":
            return
        reason = "the plan is agreed and the next steps need commands and file edits"
        arguments = {"mode_slug": "code", "reason": reason}
        result = (
            f"Successfully switched from {MODES['architect']} mode to {MODES['code']} mode "
            f"because: {reason}."
        )
        self.s.call("switch_mode", arguments, result,
                    text="I'll switch to Code mode to carry this out.")  # fmt: skip
        self._mode = "code"
        self.s.user(self._environment())

    # --- tools ----------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        self._code_mode()
        if command == "rebar3 dialyzer" and "Warnings occurred" in output:
            exit_code = 1  # rebar3 fails the run when Dialyzer warns
        if command.startswith("rebar3 ct --suite "):
            output = output.replace(SUITE, command.rsplit("/", 1)[-1])
        status = "" if exit_code == 0 else (
            "Command execution was not successful, inspect the cause and adjust as needed.\n"
        )  # fmt: skip
        result = (
            f"Command executed in terminal  within working directory '{ROOT}'. "
            f"{status}Exit code: {exit_code}\nOutput:\n{output}"
        )
        self._call("execute_command", {"command": command, "cwd": None}, result, filler=filler)

    def _render(self, path: str, content: str) -> list[str]:
        module = path.rsplit("/", 1)[-1].removesuffix(".erl")
        body = [erlang_line(line) for line in content.split("\n")]
        exported = sorted({line.split("(", 1)[0] for line in body
                           if line[:1].isalpha() and "(" in line})  # fmt: skip
        exports = ", ".join(f"{name}/{2 if not name.endswith('_limit') else 0}"
                            for name in exported[:6])  # fmt: skip
        return [f"-module({module}).", f"-export([{exports}]).", "", *body]

    def _open(self, path: str) -> None:
        if path in self._tabs:
            self._tabs.remove(path)
        self._tabs.append(path)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        self._open(path)
        result = f"File: {path}\nLines 1-{len(lines)}:\n{numbered(lines)}"
        self._call("read_file", {"files": [{"path": path, "line_ranges": None}]}, result,
                   filler=filler)  # fmt: skip

    def _read_around(self, path: str, needle: str) -> None:
        """The compiler named two lines of a file not read yet: read that range first."""
        lines = [f"-module({path.rsplit('/', 1)[-1].removesuffix('.erl')}).", ""]
        lines += code_file(self.rng, "erl", 140).split("\n")[:138]
        for at in (88, 93):
            lines[at - 1] = needle
        self._seen[path] = lines
        self._open(path)
        result = f"File: {path}\nLines 80-100:\n{numbered(lines[79:100], 80)}"
        self._call("read_file", {"files": [{"path": path, "line_ranges": [[80, 100]]}]}, result,
                   text="Let me look at the lines the compiler complains about.")  # fmt: skip

    def _written(self, path: str, operation: str) -> str:
        return json.dumps({"path": path, "operation": operation, "notice": WRITE_NOTICE})

    def edit(self, path: str, old: str, new: str) -> None:
        self._code_mode()
        before, after = erlang_line(old), erlang_line(new)
        if before not in self._seen.get(path, []):
            self._read_around(path, before)
        lines = self._seen[path]
        at = [n + 1 for n, line in enumerate(lines) if line == before]
        for n in at:
            lines[n - 1] = after
        self._open(path)
        if len(at) == 1 and self.rng.random() < 0.35:
            operations = [{"search": before, "replace": after}]
            arguments: dict[str, Any] = {"path": path, "operations": operations}
            self._call("search_and_replace", arguments, self._written(path, "modified"))
            return
        diff = "\n\n".join(search_block(n, before, after) for n in at)
        notice = SINGLE_BLOCK_NOTICE if len(at) == 1 else ""
        self._call("apply_diff", {"path": path, "diff": diff},
                   self._written(path, "modified") + notice)  # fmt: skip

    def create(self, path: str, content: str) -> None:
        self._code_mode()
        lines = self._render(path, content)
        self._seen[path] = lines
        self._open(path)
        self._call("write_to_file", {"path": path, "content": "\n".join(lines) + "\n"},
                   self._written(path, "created"))  # fmt: skip
        # The new worker goes under the application's supervisor.
        module = path.rsplit("/", 1)[-1].removesuffix(".erl")
        supervisor = f"src/{APP}_sup.erl"
        spec = (f"        #{{id => {module}, start => {{{module}, start_link, []}}, "
                "restart => permanent, type => worker},")  # fmt: skip
        arguments = {"path": supervisor, "line": 24, "content": spec}
        said = f"Now I'll register `{module}` in the supervisor's child specs."
        self._call("insert_content", arguments, self._written(supervisor, "modified"), text=said)

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "test/fixtures/", 1)
        destination = destination.replace("testdata/", "test/fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        grouped: dict[str, list[tuple[int, str]]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            function, _, argument = text.strip().rstrip(")").partition("(")
            grouped.setdefault(path, []).append((int(line), f"    {function}({argument.title()}),"))
        out = [f"Found {len(hits)} results." if len(hits) != 1 else "Found 1 result.", ""]
        for path, rows in grouped.items():
            out.append(f"# {path}")
            for at, code in sorted(rows):
                out += [f"{at:>3} | {code}", "----"]
            out.append("")
        arguments = {"path": root, "regex": pattern, "file_pattern": "*.erl"}
        self._call("search_files", arguments, "\n".join(out).strip(), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        listed = sorted({p.removeprefix(f"{root}/") for p in paths})
        self._call("list_files", {"path": root, "recursive": False}, "\n".join(listed),
                   filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        kept = [(text, status) for text, status in items if status != "cancelled"]
        self._todos = kept
        checklist = "\n".join(f"{MARKS[status]} {text}" for text, status in kept)
        self._call("update_todo_list", {"todos": checklist}, "Todo list updated successfully.")

    # --- what the commands print ----------------------------------------------------------

    def _rebar(self, *, compile_app: bool = True) -> list[str]:
        lines = ["===> Verifying dependencies...", "===> Analyzing applications..."]
        return lines + ([f"===> Compiling {APP}"] if compile_app else [])

    def command_output(self, k: int) -> str:
        if k == 0:
            cases = self.rng.sample(_SUITE_CASES, 4)
            lines = [*self._rebar(), "===> Running Common Test suites..."]
            lines += [f"%%% {SUITE} ==> {case}: OK" for case in cases]
            lines += [f"All {len(cases)} tests passed."]
            return "\n".join(lines)
        if k == 1:
            return ""
        files = self.rng.randint(20, 40)
        plt = f"_build/default/rebar3_{OTP}_plt"
        lines = [
            *self._rebar(),
            "===> Dialyzer starting, this may take a while...",
            "===> Updating plt...",
            "===> Resolving project files...",
            f"===> Checking 214 files in {plt}...",
            "===> Doing success typing analysis...",
            "===> Resolving project warning files...",
            f"===> Analyzing {files} files with {plt}...",
            "",
            f"src/{APP}_metrics.erl",
            "Line 41 Column 1: Function report_lag/1 has no local return",
            "Line 57 Column 14: The call lists:keyfind(partner, 1, Opts :: map()) breaks the "
            "contract (Key, N, TupleList) -> Tuple | false",
            "",
            f"===> Warnings written to _build/default/{OTP}.dialyzer_warnings",
            "===> Warnings occurred running dialyzer: 2",
        ]
        return "\n".join(lines)

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = erlang_line(f"{module}_send(batch)")
        column = call.index("TenantId") + 1
        path = f"src/{module}.erl"
        lines = [*self._rebar(), f"===> Compiling {path} failed"]
        for at in (88, 93):
            lines += [
                f"   ┌─ {path}:",
                "   │",
                f"{at:>3} │ {call}",
                f"   │ {' ' * (column - 1)}╰── variable 'TenantId' is unbound",
                "",
            ]
        return "\n".join(lines), "variable 'TenantId' is unbound", BUILD

    def build_ok(self) -> str:
        return "\n".join(self._rebar())

    def measurement(self, figure: str) -> tuple[str, str]:
        median = float(figure)
        low = median * self.rng.randint(88, 95) / 100
        mean = median * self.rng.randint(101, 104) / 100
        high = median * self.rng.randint(118, 140) / 100
        output = "\n".join(
            [
                "relay_bench: flush of one 500-message batch, 1000 runs (timer:tc, microseconds)",
                f"  min     {low:.2f}",
                f"  median  {figure}",
                f"  mean    {mean:.2f}",
                f"  max     {high:.2f}",
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return TESTS_COMMAND

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} tests, {failed} failures"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        total = failed + passed
        # Dots in the order the tests ran: the failing ones among the passing.
        marks = ["."] * total
        for k, test in enumerate(named):
            if test in failing:
                marks[(k * 7 + 3) % total] = "F"
        lines = [*self._rebar(), "===> Performing EUnit tests...", "".join(marks), ""]
        if failed:
            lines += ["Failures:", ""]
        for n, test in enumerate(failing, start=1):
            module, function = test.removesuffix("/0").split(":")
            key = next(k for k, v in TESTS.items() if v[0] == function)
            _, expected, got, at = TESTS[key]
            lines += [
                f"  {n}) {test}",
                f"     Failure/Error: ?assertEqual({expected}, {self._actual(key)})",
                f"       expected: {expected}",
                f"            got: {got}",
                f"     %% {ROOT}/test/{module}.erl:{at}:in `{module}:-{function}/0-fun-0-/0`",
                "",
            ]
        seconds = self.rng.randint(180, 900) / 1000
        lines += [f"Finished in {seconds:.3f} seconds", self.test_counts(failed, passed)]
        if failed:
            lines.append("===> Error running tests")
        return "\n".join(lines)

    @staticmethod
    def _actual(key: str) -> str:
        return {"retries": "Attempts", "orders_batches": "Sent", "handles_empty": "Delivered"}[key]
