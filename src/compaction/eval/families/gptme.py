"""A gptme-style family, telling the story's second-thoughts variant: a Zig 0.14 service
(`zig build`, `zig build test`, `zig fmt --check`, a cross build with `--summary all`, a
benchmark through `zig build bench -Doptimize=ReleaseFast` for the variant's figure) worked on
through gptme (gptme/gptme, Erik Bjäreholt's terminal agent) in its default markdown tool
format, talking to a Claude model, by a user who types short requests into the terminal and
an assistant that writes a line of prose, then one tool block, and stops for its output.

There are no provider tool calls. Where the shapes come from: gptme v0.33.0, gptme/gptme at
d27f98d (22 August 2026):
- `tools/base.py`, `ToolUse._to_markdown`: a tool is invoked by a fenced block in the
  assistant's own text whose info string names the tool and its arguments, "```{tool}
  {args}\\n{content}\\n```". `prompts/templates.py` tells the model: "When the output of a
  command is of interest, end the code block and message, so that it can be executed before
  continuing", so each assistant message here carries at most one block, at its end.
- `tools/shell.py`, block `shell`: the commands; the answer (`_format_shell_output`,
  `_format_block_smart`) is "Ran command: `<cmd>`" ("Ran allowlisted command" when
  `shell_validation.is_allowlisted` passes it: ls, cat, head, tail, grep, rg, find, sort …
  with permitted flags only, no redirection), a blank line, then "```stdout" and "```stderr"
  blocks (a one-line output inline in backticks), each followed by a blank line, or "No
  output", then "Return code: N" when N is not 0. The outputs are trimmed of blank lines
  (`trim_blank_lines`); a `git log --oneline` of more than 20 lines would be cut (this one has
  7). The `read` tool is `disabled_by_default`, so files are read with `cat` through the
  shell, as the shell tool's own examples do.
- `tools/save.py`, block `save <path>`: the whole file; answers "Saved to <path>" (the path
  as written; the system prompt asks for absolute paths). `append <path>` exists too and
  answers "Appended to <path>"; this session has no use for it.
- `tools/patch.py`, block `patch <path>`: `<<<<<<< ORIGINAL` / `=======` / `>>>>>>> UPDATED`
  hunks, each ORIGINAL matching the file exactly once; answers "Patch successfully applied
  to `<resolved path>`".
- `tools/todo.py`, block `todo write` with one operation a line (`add "text"`, `update ID
  state`, `remove ID`; states pending / in_progress / completed / paused, ids counted from
  1): answers one line per operation, "Added todo N: text", "Updated todo N state to:
  state", "Removed todo N: text". There is no cancelled state: a dropped to-do is removed.
  `todo read` answers "Todo List:", "N. <emoji> text" lines and "Summary: …".
- Tool output is a `Message("system", …)` in gptme's log. How it goes over the wire is the
  choice this family makes: `llm/llm_anthropic.py`, `_transform_system_messages`, folds the
  leading system messages into the top-level system prompt and, for models before Claude
  Opus 4.8, sends every later system message as a user message "<system>{content}</system>",
  merging consecutive user messages (`llm/llm_openai.py`'s `_prep_o1` does the same for
  OpenAI's gpt-5 and o-series, with newlines inside the tags). The session is that wire
  form, for `anthropic/claude-sonnet-4-5`: user and assistant strictly alternate, so it is
  valid OpenAI chat and Anthropic Messages alike, and the benchmark measures it in both
  dialects (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`). Sent as-is to gpt-4o, the
  outputs would be mid-conversation `system` messages, which this project's dialects read as
  pinned system turns: a statement that tool output is an instruction, which it is not.
- `chat.py`, `_should_prompt_for_input`: after tool output gptme asks the model again, and
  only prompts the user after an assistant message without a tool; so before each user
  message that follows an output the assistant says a line of its own.
- The system prompt opens as `prompt_gptme` writes it ("You are gptme v0.33.0, a
  general-purpose AI assistant powered by LLMs. Currently using model: …", interactive mode),
  then `prompt_tools`' "# Tools Overview" with each tool's "## name" and "**Description:**",
  `prompt_systeminfo` and `prompt_timeinfo`, shortened.

Zig's outputs follow the build runner of 0.14 (`lib/compiler/build_runner.zig`,
`lib/std/Build/Step/Run.zig`): gptme's shell is not a terminal, so the runner prints with no
colour: the step tree with "+- " branches, compile errors without their source line
(`include_source_line = ttyconf != .no_color`), "error: the following command failed with N
compilation errors:", each failing test as "error: '<module>.test.<name>' failed: " and the
test's stderr (`expected 3, found 2` from `std.testing.expectEqual` and the error return
trace), "error: while executing test '…', the following test command failed:", "Build
Summary: S/T steps succeeded; 1 failed; P/N tests passed; F failed", the tree of the failed
steps, and `zig build`'s own "error: the following build command failed with exit code 1:".
A passing `zig build` and `zig fmt --check` print nothing.

This family's own reading, where no source says more: the project (`tidewire`, a webhook
relay), the wording of both sides, the trace addresses, the line numbers inside
`std/testing.zig`, the `replay` command's and the benchmark harness's output.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, code_file, hexid

ROOT = "/home/dev/src/tidewire"
PROJECT = "tidewire"
ZIG = "/home/dev/.local/zig-linux-x86_64-0.14.0/zig"
ZIG_LIB = "/home/dev/.local/zig-linux-x86_64-0.14.0/lib"
GLOBAL_CACHE = "/home/dev/.cache/zig"
MODEL = "anthropic/claude-sonnet-4-5"
#: The build whose compile error the story fixes, the tests, and the variant's benchmark.
BUILD = "zig build"
TESTS_RUN = "zig build test"
BENCH = "zig build bench -Doptimize=ReleaseFast"
#: gptme's patch markers (`tools/patch.py`).
ORIGINAL, DIVIDER, UPDATED = "<<<<<<< ORIGINAL", "=======", ">>>>>>> UPDATED"
#: How a tool's output reaches the model (`llm_anthropic._transform_system_messages`).
SYSTEM_OPEN, SYSTEM_CLOSE = "<system>", "</system>"
#: `shell_validation.allowlist_commands`: a pipeline of only these runs "allowlisted".
ALLOWLIST = frozenset(
    ("ls", "stat", "cd", "cat", "pwd", "echo", "head", "find", "rg", "ag", "tail", "grep", "wc",
     "sort", "uniq", "cut", "file", "which", "type", "tree", "du", "df")
)  # fmt: skip
#: The failing tests: (name, expected, found, what is compared, line of the expectation).
TESTS = {
    "retries": ("retries a timed-out delivery three times", "3", "2", "attempts", 31),
    "orders_batches": ("flushes batches in enqueue order", "2", "3", "sent[1].id", 47),
    "handles_empty": ("sends nothing for an empty queue", "0", "1", "sent.items.len", 62),
}  # fmt: skip
#: The last test the runner runs (it names it in its closing error).
LAST_TEST = "signer.test.rejects a truncated signature"
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: What the assistant writes before a block, now and then.
_LEADS = {
    "cat": ("Let me look at `{name}`.", "Reading `{name}` first.", "Opening `{name}`:"),
    "grep": ("Searching for `{name}`:", "Where is `{name}` used?"),
    "ls": ("What's in `{name}`?", "Listing `{name}`:"),
    "run": ("Running `{name}`:", "Let me run `{name}`.", "Next, `{name}`:"),
    "patch": ("Patching `{name}`:", "Making the change in `{name}`:"),
    "save": ("Writing `{name}`:", "Creating `{name}`:"),
    "todo": ("Updating the todo list:", "Keeping track of this in the todo list:"),
}
#: What the assistant says after an output, when the user speaks next.
_HANDBACK = (
    "That's what I was after.",
    "OK, seen it.",
    "Right, that settles that part.",
    "Good, that's the picture I needed.",
)


def zig_line(line: str) -> str:
    """A story line as the Zig it stands for: a limit is a `pub const`, read from the settings
    once configured; the send before the fix passes a `tenant_id` that is not in scope, the
    fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        if value.startswith("settings."):
            return f"pub const {module}_limit = settings.{module}_limit;"
        return f"pub const {module}_limit: u32 = {value};"
    tenant = "batch.tenant_id" if fixed else "tenant_id"
    return f"        try {module}_client.send(batch, {tenant});"


def system_prompt() -> str:
    tools = (
        ("shell", "Executes shell commands.",
         "The given command will be executed in a stateful bash shell.\nThe shell tool will "
         "respond with the output of the execution."),
        ("save", "Write text to file",
         "Create or overwrite a file with the given content.\n\nTo write to a file, use a code "
         "block with the language tag: `save <path>`"),
        ("append", "Append text to file",
         "Append the given content to a file.\n\nUse a code block with the language tag: "
         "`append <path>`\nto append the code block content to the file at the given path."),
        ("patch", "Apply a patch to a file",
         "To patch/modify files, we use an adapted version of git conflict markers.\n\nThe "
         "$PATH parameter MUST be on the same line as the code block start, not on the line "
         f"after.\n\n```patch $PATH\n{ORIGINAL}\n$ORIGINAL_CONTENT\n{DIVIDER}\n"
         f"$UPDATED_CONTENT\n{UPDATED}\n```"),
        ("todo", "Manage an in-session todo list (ephemeral, not persisted across "
         "conversations)",
         "Subcommands:\n- `todo read` - Show the current todo list\n- `todo write` - Edit "
         'todos\n\nWrite operations:\n- add "todo text" - Add an item\n- update ID state - Set '
         "state (pending/in_progress/completed/paused)\n- remove ID - Remove an item"),
    )  # fmt: skip
    overview = "# Tools Overview" + "".join(
        f"\n\n## {name}\n\n**Description:** {desc}\n\n**Instructions:** {instructions}"
        for name, desc, instructions in tools
    )
    return "\n\n".join(
        [
            f"You are gptme v0.33.0, a general-purpose AI assistant powered by LLMs. "
            f"Currently using model: {MODEL}\nYou are designed to help users with programming "
            "tasks, such as writing code, debugging, and learning new concepts.\nYou can run "
            "code, execute terminal commands, and access the filesystem on the local machine."
            "\nBreak down complex tasks into smaller, manageable steps.\n\nWhen suggesting code "
            "changes, prefer applying patches over examples. Preserve comments, unless they are "
            "no longer relevant.\nUse the patch tool to edit existing files, or the save tool "
            "to overwrite.\nWhen the output of a command is of interest, end the code block "
            "and message, so that it can be executed before continuing.\n\nAlways use absolute "
            "paths when referring to files, as relative paths can become invalid when the "
            "working directory changes.",
            "You are in interactive mode. The user is available to provide feedback.\nIf the "
            "user aborted or interrupted an operation don't try it again, ask for clarification "
            "instead.",
            overview + "\n\n*End of Tools List.*",
            f"## System Information\n\n**OS:** Ubuntu 24.04\n**Working Directory:** {ROOT}",
            "## Current Date\n\n**UTC:** 2026-11-18",
        ]
    )


class GptmeVoice(Voice):
    family = "gptme-style"
    system_prompt = system_prompt()
    src = "src"
    ext = "zig"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "zig build run -- replay --queue {module} --dry-run",
        "zig fmt --check src build.zig",
        "zig build -Dtarget=aarch64-linux-musl -Doptimize=ReleaseSafe --summary all",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("arena chunk size", "64 KiB", "2048 KiB", "512 KiB"),
        ("io_uring submission queue depth", "32 entries", "4096 entries", "256 entries"),
        ("delivery worker thread count", "3 threads", "48 threads", "14 threads"),
        ("partner connect timeout", "750 ms", "9000 ms", "2500 ms"),
        ("parked envelope TTL", "5 hours", "96 hours", "30 hours"),
        ("outbound ring buffer capacity", "1024 slots", "65536 slots", "8192 slots"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a std.Thread.Pool task for every parked envelope",
         "an io_uring event loop on one thread",
         "a backlog of parked envelopes spawns more tasks than the pool has stack memory for",
         "a timer wheel drained from the existing epoll loop",
         "io_uring is switched off on the hardened production kernels"),
        ("an in-memory std.PriorityQueue of parked envelopes",
         "a memory-mapped append-only journal file",
         "the priority queue is gone after every restart",
         "a SQLite table behind the zig-sqlite binding",
         "compacting the journal needs a second writer and a lock we do not have"),
        ("linking libcurl for the outbound requests",
         "std.http.Client with one shared connection pool",
         "libcurl pulls a C toolchain into the musl cross builds",
         "plain std.net streams with a small hand-written HTTP/1.1 writer",
         "the shared pool keeps sockets open past the partners' idle limit"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "tidewire never re-sends what {module} parked once the partner endpoint comes "
            "back. make it redeliver the parked envelopes, oldest first. {other} goes through "
            "the same path so fix it there as well",
            "after a restart the envelopes {module} parked just sit there and nothing retries "
            "them. need redelivery working again in {module}, and {other} too since it shares "
            "that code",
        ],
        "set_value": [
            "use {value} for the {key} to start with",
            "{key}: {value} for now",
        ],
        "ack": [
            "Understood — that holds for every change I make from here.",
            "Okay, I'll stick to that throughout.",
            "Noted, I'll respect that for the rest of this session.",
        ],
        "constraint": [
            "also, hard rule: {rule}",
            "before you go further: {rule}",
            "one thing to respect throughout: {rule}",
        ],
        "plan": [
            "Approach: {plan}. With that, {module} gets its parked envelopes back after a restart.",
            "I'll go with {plan} for this; that way nothing {module} parks is lost.",
        ],
        "change_value": [
            "{old} for the {key} is too tight for the slow partners, bump it to {new}",
            "change the {key} to {new}, {old} doesn't work for us",
            "ops complained about {old} as the {key}. go with {new}",
        ],
        "change_again": [
            "the {key} again, sorry: {old} is more than the partners tolerate. set {new}",
            "{old} for the {key} failed the overnight soak run. make it {new}, final",
            "drop the {key} to {new} — {old} looked fine locally but not on staging",
        ],
        "ack_value": [
            "Set: `src/settings.zig` has the {key} at {new} now.",
            "The {key} is now {new} in `src/settings.zig`.",
        ],
        "reverse": [
            "I'm backing out of {old}: {why}. Switching to {new}.",
            "{old} won't do — {why}. I'll use {new} instead.",
        ],
        "reverse_again": [
            "{old} has its own problem: {why}. Going with {new}.",
            "Revising once more, because {why}: {old} is out, {new} it is.",
        ],
        "question": [
            "what commit broke redelivery here? hang on to the hash, it goes in the incident notes",
            "can you dig up the commit that introduced this? the hash goes in the postmortem",
        ],
        "commit": [
            "build: pin zig to 0.14.0 in CI",
            "test: share the fake partner server between tests",
            "docs: explain the replay subcommand",
            "chore: run zig fmt over src",
        ],
        "answer": [
            "It's {sha} — that commit moved delivery onto the shared `std.http.Client` and the "
            "retry wrapper was lost on the way.",
            "{sha} did it: switching to the shared `std.http.Client` dropped the retry wrapper.",
        ],
        "measure_question": [
            "how long does flushing a single batch take? run the bench in ReleaseFast and tell "
            "me the mean, i want it in the design doc so hold on to it",
            "benchmark one batch flush with zig build bench (ReleaseFast please) and give me "
            "the mean, that number goes in the writeup",
        ],
        "measure_answer": [
            "The ReleaseFast bench puts one batch flush at a mean of {figure} µs.",
            "Mean for flushing one batch in ReleaseFast: {figure} µs.",
        ],
        "last": [
            "Stopping here: {test} is still failing, and I'm partway through the item to "
            "{todo}. Everything else on the todo list is done or removed. Next step: finish "
            "that item, then rerun `zig build test`.",
            "Where things stand: the only red test is {test}, and the todo in progress is to "
            "{todo}. The other items are completed or were dropped. Next step: `zig build "
            "test` once that item is done.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read or written
        self._todos: dict[str, tuple[str, str]] = {}  # id → (text, state), as todo.py keeps
        self._failed_before: list[str] = []
        self._tests_run = 0

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module}.test.{TESTS[name.removeprefix(f'test_{module}_')][0]}"

    # --- the conversation, as gptme sends it to a Claude model ------------------------------

    def _last_role(self) -> str | None:
        messages = self.s.messages
        return messages[-1]["role"] if messages else None

    def _assistant(self, text: str, *, filler: bool = False) -> None:
        """Assistant text. Prose the model has not closed yet (the last message) and what it
        writes next are one message: a block follows the line that introduces it."""
        messages = self.s.messages
        if self._last_role() == "assistant":
            messages[-1]["content"] += "\n\n" + text
            self.s.filler_at.discard(len(messages) - 1)
            return
        messages.append({"role": "assistant", "content": text})
        if filler:
            self.s.filler_at.add(len(messages) - 1)

    def _tool(self, block: str, output: str, *, lead: str = "", filler: bool = False) -> None:
        """One tool block at the end of an assistant message, and its output: a system
        message in gptme's log, a `<system>` user message on the wire."""
        self._assistant(f"{lead}\n{block}" if lead else block, filler=filler)
        self.s.messages.append({"role": "user", "content": f"{SYSTEM_OPEN}{output}{SYSTEM_CLOSE}"})
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)

    def _lead(self, kind: str, name: str, chance: float = 0.7) -> str:
        if self.rng.random() < chance:
            return self.pick(_LEADS[kind]).format(name=name)
        return ""

    def user(self, text: str) -> None:
        if self._last_role() == "user":
            # gptme asks the model again after an output; the user types only after an
            # assistant message that ran nothing.
            self._assistant(self.pick(_HANDBACK))
        self.s.user(text)

    def say(self, text: str) -> None:
        self._assistant(text)

    # --- Zig source ----------------------------------------------------------------------

    def _render(self, content: str) -> list[str]:
        body = content.split("\n")
        story = [zig_line(x) for x in body if STORY_LINE.match(x)]
        rest = [x for x in body if not STORY_LINE.match(x)]
        while rest and not rest[-1]:
            rest.pop()
        head = ['const std = @import("std");']
        if story:
            head.append('const settings = @import("settings.zig");')
        return [*head, "", *rest, *(["", *story] if story else [])]

    def _full(self, path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- tools ----------------------------------------------------------------------------

    @staticmethod
    def allowlisted(command: str) -> bool:
        """`shell_validation.is_allowlisted`, for the commands this family runs: every
        command of the pipeline allowlisted, no redirection (their flags are all permitted)."""
        if ">" in command or "$(" in command or "`" in command:
            return False
        words = [part.split()[0] for part in re.split(r"\|\||&&|[|;&]", command) if part.split()]
        return all(word in ALLOWLIST for word in words)

    @staticmethod
    def shell_result(
        command: str, stdout: str = "", stderr: str = "", exit_code: int = 0, allowed: bool = False
    ) -> str:
        """`_format_shell_output`: the header, the outputs, the return code."""

        def smart(text: str, lang: str) -> str:
            return f"`{text}`" if "\n" not in text else f"```{lang}\n{text}\n```"

        header = "Ran allowlisted command" if allowed else "Ran command"
        message = f"{header}: {smart(command, 'bash')}\n\n"
        stdout, stderr = stdout.strip("\n"), stderr.strip("\n")
        if stdout:
            message += smart(stdout, "stdout") + "\n\n"
        if stderr:
            message += smart(stderr, "stderr") + "\n\n"
        if not stdout and not stderr:
            message += "No output\n"
        if exit_code:
            message += f"Return code: {exit_code}\n"
        return message

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # Zig's build runner writes to stderr; the programs it runs, git and the rest to stdout.
        on_stderr = command.startswith("zig build") and "--summary" in command
        on_stderr |= command in (BUILD, TESTS_RUN)
        if command == TESTS_RUN:
            self._tests_run += 1
        stdout, stderr = ("", output) if on_stderr else (output, "")
        result = self.shell_result(command, stdout, stderr, exit_code, self.allowlisted(command))
        lead = "" if filler or len(command) > 44 else self._lead("run", command, 0.6)
        if command == TESTS_RUN and self.rng.random() < 0.6:
            lead = self.pick(["Running the test suite:", "Now the tests:"])
        self._tool(f"```shell\n{command}\n```", result, lead=lead, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        how = self.rng.random()
        if how < 0.6:
            command, shown = f"cat {path}", "\n".join(lines)
        elif how < 0.85:
            command = f"cat -n {path}"
            shown = "\n".join(f"{k:6}\t{line}" for k, line in enumerate(lines, start=1))
        else:
            command, shown = f"head -n 150 {path}", "\n".join(lines[:150])
        result = self.shell_result(command, shown, allowed=True)
        lead = self._lead("cat", path.rsplit("/", 1)[-1], 0.5 if filler else 0.8)
        self._tool(f"```shell\n{command}\n```", result, lead=lead, filler=filler)

    def _locate(self, path: str, needle: str) -> None:
        """The compiler named lines 88 and 93 of a file not read yet: print that stretch."""
        module = path.rsplit("/", 1)[-1].removesuffix(".zig")
        lines = ['const std = @import("std");', "", *code_file(self.rng, "zig", 81).split("\n")]
        lines = (lines + [""] * 83)[:83]
        lines += [
            f"pub fn flushParked({module}_queue: *Queue, {module}_client: *Client) !void {{",
            f"    while ({module}_queue.popOldest()) |batch| {{",
            "        if (batch.items.len == 0) continue;",
            '        std.log.debug("flushing parked batch {d}", .{batch.id});',
            needle,
            "    }",
            "    // then whatever came due while the parked ones went out",
            f"    while ({module}_queue.popDue()) |batch| {{",
            "        defer batch.deinit();",
            needle,
            "    }",
            "}",
            "",
        ]
        assert lines[87] == lines[92] == needle
        self._seen[path] = lines
        command = f"sed -n '84,96p' {path}"
        result = self.shell_result(command, "\n".join(lines[83:96]))
        lead = self.pick(["Let me see those lines.", "Looking at lines 88 and 93:"])
        self._tool(f"```shell\n{command}\n```", result, lead=lead)

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = zig_line(old), zig_line(new)
        if before not in self._seen.get(path, []):
            self._locate(path, before)
        lines = self._seen[path]
        hunks = []
        for at, line in enumerate(lines):
            if line != before:
                continue
            # A hunk must match once: a send line shared by two loops takes the line above.
            context = [lines[at - 1]] if lines.count(before) > 1 else []
            hunks.append("\n".join([ORIGINAL, *context, before, DIVIDER, *context, after,
                                    UPDATED]))  # fmt: skip
        self._seen[path] = [after if line == before else line for line in lines]
        full = self._full(path)
        block = f"```patch {full}\n" + "\n".join(hunks) + "\n```"
        lead = self._lead("patch", path.rsplit("/", 1)[-1], 0.8)
        self._tool(block, f"Patch successfully applied to `{full}`", lead=lead)

    def create(self, path: str, content: str) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        full = self._full(path)
        block = f"```save {full}\n" + "\n".join(lines) + "\n```"
        self._tool(block, f"Saved to {full}", lead=self._lead("save", path.rsplit("/", 1)[-1]))

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        rows = []
        for hit in hits:
            path, line, text = hit.split(":", 2)
            function, _, argument = text.strip().rstrip(")").partition("(")
            rows.append(f"{path}:{line}:    const {function} = try {function}({argument});")
        tool = self.pick(["grep -rn", "rg -n"])
        command = f"{tool} {pattern} {root}"
        result = self.shell_result(command, "\n".join(rows), allowed=True)
        self._tool(f"```shell\n{command}\n```", result, lead=self._lead("grep", pattern, 0.5),
                   filler=filler)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted({p.rsplit("/", 1)[-1] for p in paths})
        if self.rng.random() < 0.5:
            command = f"find {root} -name '*.zig'"
            shown = "\n".join(f"{root}/{name}" for name in names)
        else:
            command = f"ls -la {root}"
            rows = [f"total {4 * (len(names) + 2) + self.rng.randint(60, 240)}",
                    "drwxr-xr-x  2 dev dev  4096 Nov 17 09:41 .",
                    "drwxr-xr-x  9 dev dev  4096 Nov 17 09:40 .."]  # fmt: skip
            for name in names:
                size, day = self.rng.randint(600, 24000), self.rng.randint(3, 17)
                hour, minute = self.rng.randint(8, 19), self.rng.randint(0, 59)
                rows.append(f"-rw-r--r--  1 dev dev {size:5} Nov {day:2} {hour:02}:{minute:02} "
                            f"{name}")  # fmt: skip
            shown = "\n".join(rows)
        result = self.shell_result(command, shown, allowed=True)
        self._tool(f"```shell\n{command}\n```", result, lead=self._lead("ls", root, 0.5),
                   filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        """`todo write`: what changed since the last write, one operation a line; a dropped
        item is removed (todo.py has no cancelled state)."""
        by_text = {text: todo_id for todo_id, (text, _) in self._todos.items()}
        updates: list[tuple[str, str]] = []
        added: list[tuple[str, str]] = []
        for text, status in items:
            if text not in by_text:
                added.append((text, status))
            elif status != self._todos[by_text[text]][1]:
                updates.append((by_text[text], status))
        operations, answers = [], []
        for todo_id, status in updates:
            text = self._todos[todo_id][0]
            if status == "cancelled":
                operations.append(f"remove {todo_id}")
                answers.append(f"Removed todo {todo_id}: {text}")
                del self._todos[todo_id]
            else:
                operations.append(f"update {todo_id} {status}")
                answers.append(f"Updated todo {todo_id} state to: {status}")
                self._todos[todo_id] = (text, status)
        later: list[tuple[str, str]] = []
        for text, status in added:
            todo_id = str(max((int(k) for k in self._todos), default=0) + 1)
            operations.append(f'add "{text}"')
            answers.append(f"Added todo {todo_id}: {text}")
            self._todos[todo_id] = (text, "pending")
            if status != "pending":
                later.append((todo_id, status))
        for todo_id, status in later:
            operations.append(f"update {todo_id} {status}")
            answers.append(f"Updated todo {todo_id} state to: {status}")
            self._todos[todo_id] = (self._todos[todo_id][0], status)
        block = "```todo write\n" + "\n".join(operations) + "\n```"
        self._tool(block, "\n".join(answers), lead=self._lead("todo", "", 0.7))

    # --- what the commands print ----------------------------------------------------------

    def _build_runner(self) -> str:
        """`zig build`'s closing line when the build runner it spawned failed."""
        return (
            "error: the following build command failed with exit code 1:\n"
            f"{ROOT}/.zig-cache/o/{hexid(self.rng, 32)}/build {ZIG} {ZIG_LIB} {ROOT} "
            f"{ROOT}/.zig-cache {GLOBAL_CACHE} --seed 0x{hexid(self.rng, 8)} "
            f"-Z{hexid(self.rng, 16)}"
        )

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                f"replay: dry run, nothing will be sent\nreplay: 0 of {parked} parked "
                "envelopes are due for redelivery"
            )
        if k == 1:
            return ""
        return "\n".join(
            [
                "Build Summary: 3/3 steps succeeded",
                "install success",
                f"+- install {PROJECT} success",
                f"   +- zig build-exe {PROJECT} ReleaseSafe aarch64-linux-musl success "
                f"{self.rng.randint(14, 40)}s MaxRSS:{self.rng.randint(300, 600)}M",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = zig_line(f"{module}_send(batch)")
        column = call.index("tenant_id") + 1
        errors = [f"src/{module}.zig:{at}:{column}: error: use of undeclared identifier "
                  "'tenant_id'" for at in (88, 93)]  # fmt: skip
        compile_step = f"zig build-exe {PROJECT} Debug native"
        lines = [
            "install",
            f"+- install {PROJECT}",
            f"   +- {compile_step} 2 errors",
            *errors,
            "error: the following command failed with 2 compilation errors:",
            f"{ZIG} build-exe -ODebug -Mroot={ROOT}/src/main.zig --cache-dir {ROOT}/.zig-cache "
            f"--global-cache-dir {GLOBAL_CACHE} --name {PROJECT} --zig-lib-dir {ZIG_LIB}/ "
            "--listen=-",
            "Build Summary: 0/3 steps succeeded; 1 failed",
            "install transitive failure",
            f"+- install {PROJECT} transitive failure",
            f"   +- {compile_step} 2 errors",
            self._build_runner(),
        ]
        return "\n".join(lines), "use of undeclared identifier 'tenant_id'", BUILD

    def build_ok(self) -> str:
        return ""

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        p50 = mean * self.rng.randint(95, 99) / 100
        p99 = mean * self.rng.randint(112, 140) / 100
        ten = mean * self.rng.randint(78, 92) / 10
        lines = [
            "tidewire bench (ReleaseFast, x86_64-linux-gnu)",
            f"flush one batch      2000 runs  mean {figure} us  p50 {p50:.2f} us  p99 {p99:.2f} us",
            f"flush ten batches     200 runs  mean {ten:.2f} us  p50 {ten * 0.97:.2f} us  "
            f"p99 {ten * 1.2:.2f} us",
        ]
        return "\n".join(lines), BENCH

    def test_command(self) -> str:
        return TESTS_RUN

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{passed}/{passed + failed} tests passed; {failed} failed"

    def _trace(self, test: str) -> list[str]:
        module, _, name = test.partition(".test.")
        key = next(k for k, v in TESTS.items() if v[0] == name)
        _, expected, found, what, at = TESTS[key]
        address = f"0x10{hexid(self.rng, 5)}"
        return [
            f"error: '{test}' failed: expected {expected}, found {found}",
            f"{ZIG_LIB}/std/testing.zig:103:17: 0x10{hexid(self.rng, 5)} in "
            f"expectEqualInner__anon_{self.rng.randint(1000, 9999)} (test)",
            "                return error.TestExpectedEqual;",
            "                ^",
            f"{ROOT}/src/{module}.zig:{at}:5: {address} in test.{name} (test)",
            f"    try std.testing.expectEqual({expected}, {what});",
            "    ^",
        ]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        total = failed + passed
        run_step = f"run test {passed}/{total} passed, {failed} failed"
        lines = ["test", f"+- {run_step}"]
        for test in failing:
            lines += self._trace(test)
        lines += [
            f"error: while executing test '{LAST_TEST}', the following test command failed:",
            f"{ROOT}/.zig-cache/o/{hexid(self.rng, 32)}/test --seed=0x{hexid(self.rng, 8)} "
            f"--cache-dir={ROOT}/.zig-cache --listen=-",
            f"Build Summary: 1/3 steps succeeded; 1 failed; {self.test_counts(failed, passed)}",
            "test transitive failure",
            f"+- {run_step}",
            self._build_runner(),
        ]
        return "\n".join(lines)


def tool_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, content) of every gptme tool block in an assistant message."""
    return re.findall(r"^```((?:shell|save|append|patch|todo)[^\n]*)\n(.*?)\n```$", text,
                      re.M | re.S)  # fmt: skip


def todo_operations(content: str) -> list[list[str]]:
    """The operations of a `todo write` block, as todo.py splits them."""
    return [shlex.split(line) for line in content.strip().split("\n") if line.strip()]
