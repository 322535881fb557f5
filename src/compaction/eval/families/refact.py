"""A Refact-style family, telling the story's second-thoughts variant: a Dart package (dart pub,
`dart test` with package:test, `dart analyze`, `dart format`, `dart pub publish --dry-run`, a
package:benchmark_harness benchmark for the variant's figure) worked on through the agent mode
of Refact.ai (smallcloudai/refact, its Rust engine `refact-lsp` behind the VS Code and
JetBrains plugins), by a user who writes full sentences and an assistant who comments its
actions in a line before most tool calls, as its system prompt asks. Refact sends every chat
in the OpenAI format and lets LiteLLM turn it into Anthropic's for Claude models; the benchmark
measures this family in the Anthropic Messages dialect too (`bench/bench_realdata.py`,
`ANTHROPIC_FAMILIES`).

Where the names come from: the engine on smallcloudai/refact's main branch at 3e63faca1 (23
December 2025, engine version 0.10.30), `refact-agent/engine/src/`:
- `tools/tool_cat.rs`: `cat` {paths} — one comma-separated string, a path may end in
  `:A-B` for a line range. The tool answers "Paths found:\\n<full path>\\n\\n"; the file itself
  comes as a `context_file` message, which `scratchpads/passthrough_convert_messages.rs` sends
  as a *user* message "<full path>:A-B\\n```\\n<lines>```", the lines numbered by
  `tools/tools_execute.rs` as `format!("{:4} | {}")` and joined without a final newline.
- `tools/tool_tree.rs`: `tree` {path, use_ast}; `at_commands/at_tree.rs` prints the tree of
  the full paths from the root `/` down, two spaces per level, folders with a trailing `/`,
  children in hash-map order.
- `tools/tool_regex_search.rs`: `search_pattern` {pattern, scope}: "Path matches (file/folder
  names):" then "Text matches inside files:", "Regex search results for pattern '…':", "Found
  N matches across M files" and per file "<short path>: (K matches)" with "    line L" rows,
  where L is the match's line less ten (`line1: (line_num - 10).max(1)`); the matched lines
  follow as postprocessed `context_file` user messages ("NNNN | text", "..." for gaps).
- `tools/tool_ast_definition.rs`: `search_symbol_definition` {symbols}: "Definitions for
  `X`:\\n<path> defined at <short path>:A-B", the definition as a context file.
- `tools/file_edit/tool_create_textdoc.rs`: `create_textdoc` {path, content};
  `tools/file_edit/tool_update_textdoc.rs`: `update_textdoc` {path, old_str, replacement,
  multiple}; both answer with a `diff` message, which the converter sends as the tool result
  "The operation has succeeded.\\n" followed by the chunks' `application_details` (none for
  edits).
- `tools/tool_rm.rs`: `rm` {path, recursive, dry_run, max_depth}: "The operation has
  succeeded.\\nFile `<path>` removed"; `tools/tool_mv.rs`: `mv` {source, destination,
  overwrite}: "The operation has succeeded.\\nFile moved from '<src>' to '<dst>'".
- `integrations/integr_shell.rs`: `shell` {command, workdir, output_filter, output_limit,
  timeout} (command and workdir required): the output as `integr_cmdline::format_output`
  writes it ("<stdout>\\n\\n", or STDOUT/STDERR blocks, or "Nothing in STDOUT/STDERR") and
  "The command was running N.NNNs, finished with exit code C"; the whole message then goes
  through `postprocessing/pp_command_output.rs`'s `output_mini_postprocessing` with the
  default `OutputFilter` (50 lines, 8000 characters, top lines first, lines matching
  error/failed/exception/warning/fatal/panic/traceback and three lines around them kept,
  "...N lines skipped..." for the rest), ported below as `squeeze`.
- `tools/tool_subagent.rs`: `subagent` {task, expected_result, tools, max_steps}: "# Subagent
  Report\\n\\n**Task:** …\\n\\n**Expected Result:** …\\n\\n## Result\\n…"; the agent prompt
  (`yaml_configs/customization_compiled_in.yaml`, PROMPT_AGENTIC_TOOLS, whose opening the
  system message quotes) tells the agent to delegate test runs this way, and here the first
  test run goes through a subagent, the later one through `shell`.
Refact has no to-do tool (its prompt asks for "a bullet-point summary" and "Does this look
right?"): the assistant keeps its checklist in its own messages under `PLAN_HEADING`.

This family's own reading, where no source says more: the project (`harbor_queue`, a webhook
delivery package), the wording of both sides, the checklist's marks (✅ done, 🔄 in progress,
⬜ to do, 🚫 struck through: dropped), the subagent's report, and the tools' outputs, which
follow Dart 3.6's: `dart analyze`'s "  error - file:line:col - message - code" lines, "N issues
found." and exit code 3; package:test's expanded reporter (used when stdout is no terminal):
"MM:SS +P -F: file: test [E]" lines, the matcher's "Expected:"/"Actual:" block and "Some tests
failed."; `dart format`'s "Formatted N files (0 changed) in S seconds."; `dart pub publish
--dry-run`'s file tree and "Package has 0 warnings."; benchmark_harness's "Name(RunTime): S
us." lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, lower_camel

ROOT = "/home/dev/projects/harbor_queue"
PACKAGE = "harbor_queue"
#: The build whose error the story fixes, the tests, and the variant's benchmark.
ANALYZE = "dart analyze"
TESTS_COMMAND = "dart test"
BENCH = "dart run benchmark/flush_benchmark.dart"
#: The `output_filter` the agent gives its own test runs.
TESTS_FILTER = r"\[E\]|Some tests failed"
#: How the assistant's checklist messages begin, and its marks.
PLAN_HEADING = "**Progress**"
MARKS = {"completed": "✅", "in_progress": "🔄", "pending": "⬜", "cancelled": "🚫"}
#: The failing tests: (description, expected, actual, reason, line of the expect).
TESTS = {
    "retries": ("gives up after the third timeout", "<3>", "<2>", "delivery attempts", 31),
    "orders_batches": ("delivers batches in the order they were queued", "[1, 2, 3]",
                       "[1, 3, 2]", "batch order", 47),
    "handles_empty": ("is a no-op for an empty outbox", "<0>", "<1>", "sent envelopes", 62),
}  # fmt: skip
#: Tests that pass, as package:test names them after their group.
_PASSING = (
    "parses a signed payload", "rejects a stale signature", "encodes the envelope header",
    "caches the tenant lookup", "expires parked envelopes", "merges duplicate deliveries",
    "keeps the retry budget per tenant", "closes the client on shutdown",
    "decodes a partner receipt", "logs masked keys only",
)  # fmt: skip
_OTHER_FILES = ("signature", "envelope", "receipt", "client")
#: The default `OutputFilter` of the shell integration (`pp_command_output.rs`).
_GREP = re.compile(r"(?i)(error|failed|exception|warning|fatal|panic|traceback)")
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: What the assistant says before a tool call, now and then ("Comment your actions").
_COMMENTS = {
    "cat": ("Opening `{name}`.", "Let me read `{name}` in full.", "Checking `{name}`."),
    "search": ("Searching for `{name}` across the package.", "Where else is `{name}` used?"),
    "tree": ("A quick look at the layout of `{name}`.",),
    "shell": ("Running `{name}`.",),
}


def dart_line(line: str) -> str:
    """A story line as the Dart it stands for: a limit is a top-level constant, read from the
    settings once configured; the send before the fix passes a `tenantId` that is not in
    scope, the fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    name = lower_camel(module)
    if limit.startswith("limit"):
        if value.startswith("settings."):
            return f"final {name}Limit = settings.{name}Limit;"
        return f"const {name}Limit = {value};"
    return f"    await {name}Client.send(batch, {'batch.tenantId' if fixed else 'tenantId'});"


def squeeze(
    text: str,
    limit_lines: int = 50,
    limit_chars: int = 8000,
    grep: re.Pattern[str] = _GREP,
    context: int = 3,
) -> str:
    """`output_mini_postprocessing`, by default with the default filter: keep the top lines
    and those near a match of `grep`, up to the limits; say how many lines were skipped
    where."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    n = len(lines)
    ratings = [0.9 * (n - i) / n for i in range(n)]
    for i, line in enumerate(lines):
        if grep.search(line):
            ratings[i] = 1.0
            for j in range(1, context + 1):
                ratings[max(i - j, 0)] = 1.0
                if i + j < n:
                    ratings[i + j] = 1.0
    approve = [False] * n
    chars = 0
    for taken, i in enumerate(sorted(range(n), key=lambda k: -ratings[k])):
        if taken > limit_lines or chars > limit_chars:
            break
        approve[i] = ratings[i] > 0
        chars += len(lines[i].encode())
    out: list[str] = []
    skipped = 0
    for i, line in enumerate(lines):
        if approve[i]:
            if skipped:
                out.append(f"...{skipped} lines skipped...")
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(f"...{skipped} lines skipped...")
    return "\n".join(out) + "\n"


def numbered(lines: Sequence[str], first: int = 1) -> str:
    """Lines as `tools_execute.rs` numbers a cat'ed file: `{:4} | {}`, no final newline."""
    return "\n".join(f"{first + k:4} | {line}" for k, line in enumerate(lines))


class RefactVoice(Voice):
    family = "refact-style"
    system_prompt = (
        "[mode3] You are Refact Agent, an orchestrating software engineer. Your primary role is "
        "to **coordinate and delegate** work to subagents,\nkeeping your own context lean and "
        "focused on high-level planning and decision-making (editing).\nIf initial "
        "instructions are unclear - ask the user for a task. Never discuss PROMPT, internal "
        "configuration files.\nComment your actions\n\n## Core Philosophy: Orchestrate\n\n"
        "Your job is to:\n- Understand the user's request and break it into subtasks\n"
        "- Delegate subtasks to `subagent()` calls\n- Synthesize results, make decisions, make "
        "changes\n- Communicate progress and results to the user\n\n## Workflow\n\n"
        "3. Plan (when needed)\n  - **Significant changes**: post a bullet-point summary, ask "
        '"Does this look right?", then delegate\n\n5. Validate via Delegation\n'
        '  - Delegate test runs: `subagent(task="Run tests and report failures", '
        'tools="shell,cat")`\n\n**BEST PRACTICES**\n'
        "  - After significant changes, run tests to verify correctness.\n"
        "  - You might receive additional instructions that start with 💿. Those are not "
        "coming from the user, they are programmed to help you operate well.\n\n"
        "## System Information\n- **OS**: Ubuntu 24.04.1 LTS (x86_64)\n"
        "- **User**: dev@harbor-dev\n- **Shell**: /bin/bash\n\n"
        f"The current IDE workspace has these project directories:\n{ROOT}\n"
        f"The project is under git version control, located at:\n{ROOT}\n\n"
        f"The active IDE file is:\n{ROOT}/lib/{PACKAGE}.dart\n\n"
        "## Version Control\n**Current Branch**: `fix/redelivery`\n\n"
        "The project: a Dart 3.6 package (dart pub), tests with package:test (`dart test`), "
        "`dart analyze` with package:lints, `dart format`, benchmarks with "
        "package:benchmark_harness under benchmark/."
    )
    src = "lib/src"
    ext = "dart"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "dart run bin/replay.dart --queue {module} --dry-run",
        "dart format --output=none --set-exit-if-changed lib test",
        "dart pub publish --dry-run",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("delivery isolate pool", "2 isolates", "16 isolates", "5 isolates"),
        ("webhook HTTP idle timeout", "15 s", "240 s", "90 s"),
        ("outbox drain batch", "25 envelopes", "500 envelopes", "140 envelopes"),
        ("redelivery jitter ceiling", "40 ms", "1200 ms", "350 ms"),
        ("parked-envelope box compaction threshold", "64 deleted entries",
         "4096 deleted entries", "800 deleted entries"),
        ("response stream buffer", "32 KiB", "1024 KiB", "256 KiB"),
    )  # fmt: skip
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a Timer.periodic sweep inside the main isolate",
         "a long-lived worker isolate fed through a SendPort",
         "the periodic sweep stalls whenever the main isolate is busy encoding large payloads",
         "a Cloud Run job on a Cloud Scheduler trigger that drains the outbox",
         "isolates cannot share the sqlite3 handle, so every envelope would be copied across "
         "twice"),
        ("a Hive box of parked envelopes", "a drift table with an index on next_attempt_at",
         "Hive loads the whole box into memory when it opens",
         "a Postgres outbox table read through package:postgres",
         "the drift database file lives on one replica and the other never sees it"),
        ("package:retry with its default backoff", "a hand-rolled exponential backoff with "
         "full jitter", "package:retry treats a 429 and a 503 exactly alike",
         "a RetryPolicy class that honours the partner's Retry-After header",
         "our own backoff ignores what the partner asks for and still trips its rate limit"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Envelopes that {module} parks while a partner endpoint is unreachable never get "
            "redelivered after the endpoint recovers. Please make harbor_queue redeliver them "
            "in the order they were parked. {other} goes through the same delivery path and "
            "needs the same fix.",
            "Since 0.7.0 nothing parked by {module} is ever sent again, even once the partner "
            "is healthy. Can you repair the redelivery? {other} shares that code and is "
            "broken the same way.",
        ],
        "set_value": [
            "Looks right. Start the {key} at {value}.",
            "Go ahead, and use {value} as the {key} for now.",
        ],
        "ack": [
            "Understood, I'll respect that in every change from here.",
            "Got it. I'll keep that in mind for the rest of the work.",
            "Noted; that holds for everything that follows.",
        ],
        "constraint": [
            "Something non-negotiable: {rule}.",
            "Please also respect this: {rule}.",
            "A rule from the maintainers: {rule}.",
        ],
        "plan": [
            "Approach: {plan}, so that {module} finds its parked envelopes again after a restart.",
            "I'll build the redelivery on {plan}; then nothing {module} parks gets lost.",
        ],
        "change_value": [
            "Change the {key} to {new}; {old} is too tight for the slower partners.",
            "On second thought the {key} should be {new}, not {old}.",
            "The on-call engineer says {old} for the {key} keeps paging them. Use {new}.",
        ],
        "change_again": [
            "One more change to the {key}, sorry: {old} overloads the partners. Set it to {new}.",
            "The soak test did not like {old} as the {key}. Final value: {new}.",
            "Bring the {key} down to {new}; {old} only looked good on paper.",
        ],
        "ack_value": [
            "Updated: the {key} is {new} in `lib/src/settings.dart`.",
            "`lib/src/settings.dart` now sets the {key} to {new}.",
        ],
        "reverse": [
            "Change of plan: {old} is out, because {why}. I'm going with {new}.",
            "I'm dropping {old}: {why}. {new} replaces it.",
        ],
        "reverse_again": [
            "{old} doesn't hold up either, since {why}. Switching to {new}.",
            "Another revision: {why}, so {old} goes too. I'll use {new}.",
        ],
        "question": [
            "Which commit broke the redelivery? Our incident report needs its hash, so keep it "
            "at hand.",
            "Can you find the commit that introduced this? Please keep the hash, it goes into "
            "the postmortem.",
        ],
        "commit": [
            "chore: bump lints to 5.1.0",
            "test: share the fake partner server between suites",
            "docs: document the replay executable",
            "ci: cache the pub cache between runs",
        ],
        "answer": [
            "The culprit is {sha}: it moved delivery onto the shared `http.Client` and the "
            "`RetryClient` wrapper was lost along the way.",
            "{sha} introduced it — the switch to the shared `http.Client` dropped the "
            "`RetryClient` wrapper.",
        ],
        "measure_question": [
            "Please benchmark a single flush of one batch with the benchmark_harness suite "
            "and tell me the runtime. I want that number in the design doc, don't lose it.",
            "How long does flushing one batch take? Run benchmark/flush_benchmark.dart and "
            "keep the figure for the write-up.",
        ],
        "measure_answer": [
            "benchmark_harness puts one batch flush at {figure} µs per run.",
            "Flushing one batch takes {figure} µs per run according to benchmark_harness.",
        ],
        "last": [
            "Where this stands: {test} is still failing, and the checklist item I'm on is to "
            "{todo}. Every other item is either finished or dropped.",
            "Status: the one red test left is `{test}`, and I'm in the middle of the step to "
            "{todo}. The rest of the checklist is done or was dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read or written
        self._tests_run = 0
        self._failed_before: list[str] = []

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module} {TESTS[name.removeprefix(f'test_{module}_')][0]}"

    # --- the conversation -----------------------------------------------------------------

    def _full(self, path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    def _comment(self, kind: str, name: str) -> str:
        if self.rng.random() < 0.45:
            return self.pick(_COMMENTS[kind]).format(name=name)
        return ""

    def _context_file(self, name: str, first: int, last: int, body: str) -> None:
        """A `context_file` message, as the converter sends it: a user message."""
        self.s.user(f"{name}:{first}-{last}\n```\n{body}```")

    # --- Dart source ----------------------------------------------------------------------

    def _dart(self, lines: int) -> list[str]:
        out: list[str] = []
        while len(out) < lines:
            a, b, c = self.rng.sample(_WORDS, 3)
            out += [
                f"  List<String> {a}{camel(b)}({camel(a)} {a}, {{String? {b}}}) {{",
                f"    final key = {b} ?? '{c}';",
                f"    return {a}.items.where((x) => x.{b} == key).map((x) => x.id).toList();",
                "  }",
                "",
            ]
        return out[:lines]

    def _render(self, path: str, content: str) -> list[str]:
        stem = path.rsplit("/", 1)[-1].removesuffix(".dart")
        body = content.split("\n")
        story = [dart_line(x) for x in body if STORY_LINE.match(x)]
        rest = [x for x in body if not STORY_LINE.match(x)]
        while rest and not rest[-1]:
            rest.pop()
        head = ["import 'dart:async';", "", f"import 'package:{PACKAGE}/src/settings.dart';", ""]
        tail = ["", *story] if story else []
        return [*head, f"class {camel(stem)} {{", *rest, "}", *tail]

    # --- tools ----------------------------------------------------------------------------

    def _shell_result(
        self, output: str, exit_code: int, *, stderr: str = "", grep: re.Pattern[str] | None = None
    ) -> str:
        if output and not stderr:
            text = f"{output}\n\n"
        else:
            text = ""
            if output:
                text += f"STDOUT\n```\n{output}```\n\n"
            if stderr:
                text += f"STDERR\n```\n{stderr}```\n\n"
            if not output and not stderr:
                text += "Nothing in STDOUT/STDERR\n\n"
        seconds = self.rng.randint(40, 9000) / 1000
        text += f"The command was running {seconds:.3f}s, finished with exit code {exit_code}\n"
        if grep is None:
            return squeeze(text)
        # `parse_output_filter_args`: the model's pattern, five lines around, its line limit.
        return squeeze(text, limit_lines=60, limit_chars=60 * 200, grep=grep, context=5)

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command == TESTS_COMMAND:
            self._tests_run += 1
            if self._tests_run == 1:
                self._delegate_tests(output)
                return
        if command == ANALYZE and "error -" in output:
            exit_code = 3  # dart analyze's exit status when it reports errors
        arguments: dict[str, Any] = {"command": command, "workdir": ROOT}
        if command == BENCH:
            arguments["timeout"] = "300"
        if command == TESTS_COMMAND:
            # The whole run is longer than the default filter shows: ask for the failures.
            arguments |= {"output_filter": TESTS_FILTER, "output_limit": "60"}
            result = self._shell_result(output, exit_code, grep=re.compile(TESTS_FILTER))
        else:
            result = self._shell_result(output, exit_code)
        text = "" if filler else self._comment("shell", command)
        self.s.call("shell", arguments, result, text=text, filler=filler)

    def _delegate_tests(self, output: str) -> None:
        """The first test run goes to a subagent, which reports back in its own words."""
        task = (
            f"Run `{TESTS_COMMAND}` in {ROOT} and report every failing test: its file, its "
            "full name, what was expected and what came out. Do not change any files."
        )
        expected = (
            "The failing tests with their expectation mismatches, and the final summary line of "
            "the dart test output, verbatim."
        )
        summary = output.rstrip("\n").rsplit("\n", 1)[-1]
        failures = re.findall(
            r"^\d\d:\d\d \+\d+(?: -\d+)?: (test/\w+\.dart): (.+) \[E\]\n  Expected: (.+)\n"
            r"    Actual: (.+)\n  (.+)\n",
            output,
            re.M,
        )
        rows = [
            f"{n}. `{test}` in `{file}` — expected {want}, got {got} ({why})"
            for n, (file, test, want, got, why) in enumerate(failures, start=1)
        ]
        report = "\n".join(
            [
                f"I ran `{TESTS_COMMAND}` from `{ROOT}`; it exited with code 1. "
                f"{len(failures)} tests fail:",
                "",
                *rows,
                "",
                "Last line of the output:",
                "```",
                summary,
                "```",
                "",
                "All other tests passed. I did not modify anything.",
            ]
        )
        result = (
            f"# Subagent Report\n\n**Task:** {task}\n\n**Expected Result:** {expected}\n\n"
            f"## Result\n{report}"
        )
        arguments = {"task": task, "expected_result": expected, "tools": "shell,cat",
                     "max_steps": "6"}  # fmt: skip
        self.s.call("subagent", arguments, result,
                    text="I'll delegate the test run to a subagent.")  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        full = self._full(path)
        name = path.rsplit("/", 1)[-1]
        text = "" if filler else self._comment("cat", name)
        self.s.call("cat", {"paths": full}, f"Paths found:\n{full}\n\n", text=text,
                    filler=filler)  # fmt: skip
        self._context_file(full, 1, len(lines), numbered(lines))

    def _locate(self, path: str, needle: str) -> None:
        """The analyzer named two lines of a file not read yet: cat that range."""
        stem = path.rsplit("/", 1)[-1].removesuffix(".dart")
        lines = ["import 'dart:async';", "", f"class {camel(stem)} {{", *self._dart(140)]
        lines = [*lines[:140], "}"]
        for at in (88, 93):
            lines[at - 1] = needle
        self._seen[path] = lines
        full = self._full(path)
        self.s.call("cat", {"paths": f"{full}:80-100"}, f"Paths found:\n{full}\n\n",
                    text="Let me see the lines the analyzer points at.")  # fmt: skip
        self._context_file(full, 80, 100, numbered(lines[79:100], 80))

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = dart_line(old), dart_line(new)
        if before not in self._seen.get(path, []):
            self._locate(path, before)
        lines = self._seen[path]
        count = lines.count(before)
        self._seen[path] = [after if line == before else line for line in lines]
        arguments = {"path": self._full(path), "old_str": before, "replacement": after,
                     "multiple": count > 1}  # fmt: skip
        self.s.call("update_textdoc", arguments, "The operation has succeeded.\n")

    def create(self, path: str, content: str) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        arguments = {"path": self._full(path), "content": "\n".join(lines) + "\n"}
        self.s.call("create_textdoc", arguments, "The operation has succeeded.\n")

    def delete(self, path: str) -> None:
        full = self._full(path)
        self.s.call("rm", {"path": full, "recursive": False},
                    f"The operation has succeeded.\nFile `{full}` removed")  # fmt: skip

    def move(self, source: str, destination: str) -> None:
        source = self._full(source.replace("testdata/", "test/fixtures/", 1))
        destination = self._full(destination.replace("testdata/", "test/fixtures/", 1))
        self.s.call("mv", {"source": source, "destination": destination},
                    f"The operation has succeeded.\nFile moved from '{source}' to "
                    f"'{destination}'")  # fmt: skip

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        parsed = [hit.split(":", 2) for hit in hits]
        if self.rng.random() < 0.25:
            self._definition(parsed, filler=filler)
            return
        by_file: dict[str, list[tuple[int, str]]] = {}
        for path, line, text in parsed:
            by_file.setdefault(path, []).append((int(line), text.strip()))
        named = sorted({self._full(p) for p in by_file if pattern in p.rsplit("/", 1)[-1]})
        out = ["Path matches (file/folder names):"]
        out += [f"  {p}" for p in named] or ["  No files or folders matched by name."]
        out += ["", "Text matches inside files:", f"Regex search results for pattern "
                f"'{pattern}':", "", f"Found {len(parsed)} matches across {len(by_file)} files",
                ""]  # fmt: skip
        for path in sorted(by_file):
            rows = sorted(by_file[path])
            out.append(f"{path.rsplit('/', 1)[-1]}: ({len(rows)} matches)")
            out += [f"    line {max(1, at - 10)}" for at, _ in rows]
            out.append("")
        self.s.call("search_pattern", {"pattern": pattern, "scope": root}, "\n".join(out) + "\n",
                    filler=filler)  # fmt: skip
        for path in sorted(by_file)[:3]:
            rows = sorted(set(by_file[path]))
            body = "".join(f"...\n{at:4} | {self._snippet(text)}\n" for at, text in rows)
            self._context_file(path.rsplit("/", 1)[-1], rows[0][0], rows[-1][0], body + "...\n")

    @staticmethod
    def _snippet(text: str) -> str:
        """A search hit (`ledger_invoice(parcel)`) as the Dart line it stands for."""
        function, _, argument = text.rstrip(")").partition("(")
        return f"    final {lower_camel(function)}s = {lower_camel(function)}({argument});"

    def _definition(self, parsed: Sequence[list[str]], *, filler: bool) -> None:
        path, line, text = parsed[0]
        symbol = lower_camel(text.strip().split("(", 1)[0])
        owner = camel(path.rsplit("/", 1)[-1].removesuffix(".dart"))
        short = path.rsplit("/", 1)[-1]
        first = int(line)
        body = self._dart(4)
        head, _, rest = body[0].partition("(")
        body[0] = f"{head.rsplit(' ', 1)[0]} {symbol}({rest}"
        last = first + len(body) - 1
        result = f"Definitions for `{symbol}`:\n{owner}::{symbol} defined at {short}:"
        self.s.call("search_symbol_definition", {"symbols": symbol},
                    f"{result}{first}-{last}\n", filler=filler)  # fmt: skip
        shown = "".join(f"{first + k:4} | {line}\n" for k, line in enumerate(body))
        self._context_file(short, first, last, shown)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        full = self._full(root)
        names = list(dict.fromkeys(p.rsplit("/", 1)[-1] for p in paths))
        self.rng.shuffle(names)  # the tree's children come in hash-map order
        parts = [part for part in full.split("/") if part]
        out = ["/"] + [f"{'  ' * (k + 1)}{part}/" for k, part in enumerate(parts)]
        out += [f"{'  ' * (len(parts) + 1)}{name}" for name in names]
        self.s.call("tree", {"path": full}, "\n".join(out) + "\n", filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        rows = [
            f"{MARKS[status]} ~~{text}~~" if status == "cancelled" else f"{MARKS[status]} {text}"
            for text, status in items
        ]
        message = f"{PLAN_HEADING}\n" + "\n".join(rows)
        if all(status != "completed" for _, status in items):
            message += "\n\nDoes this look right?"
        self.say(message)

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return "\n".join(
                [
                    "Building package executable... ",
                    f"Built {PACKAGE}:replay.",
                    "[replay] dry run: no envelope will be sent",
                    f"[replay] 0 of {parked} parked envelopes are due for redelivery",
                ]
            )
        if k == 1:
            files = self.rng.randint(30, 60)
            seconds = self.rng.randint(30, 95) / 100
            return f"Formatted {files} files (0 changed) in {seconds:.2f} seconds."
        tree = [
            f"Publishing {PACKAGE} 0.7.1 to https://pub.dev:",
            "|-- CHANGELOG.md",
            "|-- LICENSE",
            "|-- README.md",
            "|-- analysis_options.yaml",
            "|-- benchmark",
            "|   '-- flush_benchmark.dart",
            "|-- bin",
            "|   '-- replay.dart",
            "|-- lib",
            f"|   |-- {PACKAGE}.dart",
            "|   '-- src",
            "|       '-- (27 more files)",
            "|-- pubspec.yaml",
            "'-- test",
            "    '-- (14 more files)",
        ]
        return "\n".join([*tree, "Validating package...", "Package has 0 warnings."])

    def build_error(self, module: str) -> tuple[str, str, str]:
        call = dart_line(f"{module}_send(batch)")
        column = call.index("tenantId") + 1
        path = f"{self.src}/{self.file_name(module)}"
        message = (
            "Undefined name 'tenantId'. Try correcting the name to one that is defined, or "
            "defining the name."
        )
        lines = [f"Analyzing {PACKAGE}...", ""]
        lines += [f"  error - {path}:{at}:{column} - {message} - undefined_identifier"
                  for at in (88, 93)]  # fmt: skip
        lines += ["", "2 issues found."]
        return "\n".join(lines), "Undefined name 'tenantId'", ANALYZE

    def build_ok(self) -> str:
        return f"Analyzing {PACKAGE}...\nNo issues found!"

    def measurement(self, figure: str) -> tuple[str, str]:
        # benchmark_harness prints the score as a full double.
        digits = "".join(self.rng.choice("0123456789") for _ in range(11))
        other = float(figure) * self.rng.randint(130, 190) / 100
        more = "".join(self.rng.choice("0123456789") for _ in range(11))
        lines = [
            f"FlushOneBatch(RunTime): {figure}{digits} us.",
            f"FlushOneBatchGzip(RunTime): {other:.2f}{more} us.",
        ]
        return "\n".join(lines), BENCH

    def test_command(self) -> str:
        return TESTS_COMMAND

    def test_counts(self, failed: int, passed: int) -> str:
        return f"+{passed} -{failed}: Some tests failed."

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        # Every test in its file: the named ones in their module's file, the rest spread over
        # the other files; package:test runs the files in order, each one's tests in order.
        files: dict[str, list[str]] = {}
        for test in named:
            module = test.split(" ", 1)[0]
            files.setdefault(module, []).append(test)
        for other in _OTHER_FILES:
            files.setdefault(other, [])
        order = list(files)
        k = 0
        while sum(len(t) for t in files.values()) < failed + passed:
            group = order[k % len(order)]
            files[group].append(f"{group} {_PASSING[k % len(_PASSING)]}")
            k += 1
        seconds = self.rng.randint(1, 3)
        ok = bad = 0
        lines = [f"00:00 +0: loading test/{min(files)}_test.dart"]
        for group in sorted(files):
            for test in files[group]:
                file = f"test/{group}_test.dart"
                if test in failing:
                    bad += 1
                    key = next(k for k, v in TESTS.items() if test.endswith(v[0]))
                    _, want, got, why, at = TESTS[key]
                    lines += [
                        f"00:0{seconds} +{ok}{f' -{bad}'}: {file}: {test} [E]",
                        f"  Expected: {want}",
                        f"    Actual: {got}",
                        f"  {why}",
                        "",
                        "  package:matcher                 expect",
                        f"  {file} {at}:7      main.<fn>.<fn>",
                        "",
                    ]
                else:
                    ok += 1
                    lines.append(f"00:0{seconds} +{ok}{f' -{bad}' if bad else ''}: {file}: {test}")
        lines.append(f"00:0{seconds} {self.test_counts(failed, passed)}")
        return "\n".join(lines)
