"""A deepagents-style family, telling the story's second-thoughts variant: an OCaml 5 service
(dune 3, opam, alcotest, ocamlformat through `dune build @fmt`, core_bench for the variant's
figure) worked on through a coding agent built with LangChain's `deepagents` library (a
LangGraph agent) and LangChain community tools, recorded as OpenAI chat.

Tools, as their sources define them (deepagents 0.2.8, langchain-community):

- deepagents' own, from its middleware: `write_todos` {todos: [{content, status}]}, the whole
  list each time, status pending / in_progress / completed (no cancelled state: a dropped
  to-do is left out of the next list), answering "Updated todo list to <the list as Python
  prints it>"; `ls` {path}, answering the directory's paths as a Python list; `read_file`
  {file_path, offset, limit}, answering `cat -n`-style lines (the number right-aligned in six
  columns, a tab, the line), from line offset + 1; `write_file` {file_path, content},
  answering "Updated file <path>"; `edit_file` {file_path, old_string, new_string,
  replace_all}, answering "Successfully replaced N instance(s) of the string in '<path>'";
  `glob` {pattern, path}, a Python list of paths; `grep` {pattern, path, glob, output_mode},
  file paths, or with `output_mode` "content" a `<path>:` line and `  N: text` lines a file;
  `task` {description, subagent_type}, answering the sub-agent's last message. The agent runs
  on deepagents' `FilesystemBackend` rooted at the project: paths are absolute.
- LangChain community's `ShellTool`, named `terminal`, {commands: [strings]}: the commands run
  joined by `;` and the answer is their combined stdout and stderr, with no exit status (a
  failing command shows only in what it printed; a silent one answers nothing).
- Two tools of community's `FileManagementToolkit`: `file_delete` {file_path}, "File deleted
  successfully: <path>.", and `move_file` {source_path, destination_path}, "File moved
  successfully from <source> to <destination>." (a move needs its folder to exist first).
The session ends on the assistant's text (deepagents has no final-answer tool).

Tool outputs follow the real tools: dune's `File "lib/outbox.ml", line 88, characters
29-38:` with the source line, its carets and `Error: Unbound value tenant_id`, then a silent
build; `dune test` with dune's location of the test stanza before alcotest's report
(`Testing `tidemark'.`, its run ID, `[OK]`/`[FAIL]` lines, the first failure boxed with its
ASSERT, Expected/Received and backtrace, `Full test results in …` and `1 failure! in 0.013s.
61 tests run.`); `dune build @fmt --auto-promote` with ocamlformat's diff and `Promoting …`;
`opam lint`'s "Passed."; core_bench's Time/Run table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import (
    STORY_LINE,
    Session,
    Voice,
    code_file,
    filled_groups,
    hexid,
    token,
)

ROOT = "/home/dev/src/tidemark"
PACKAGE = "tidemark"
#: The story's to-do statuses as `write_todos` spells them; a cancelled one is left out.
TODO_STATES = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}
BUILD = "dune build"
TEST = "dune test"
#: The benchmark the variant's figure comes from.
BENCH = "dune exec --release bench/bench_flush.exe -- -quota 10"
#: The test stanza dune names when the suite fails, and the line it stands on.
TEST_STANZA = ("test/dune", 2, " (name test_tidemark)")
#: What each failing test checks (its description, `{m}` the module), the check's name, what
#: it expected and what it received, and the line of the check in its test file.
EXAMPLES = {
    "retries": ("retries a timed-out {m} delivery three times", "attempts", "3", "2", 31),
    "orders_batches": ("keeps {m} batches in enqueue order", "batch order", "[1; 2; 3]",
                       "[1; 3; 2]", 47),
    "handles_empty": ("sends nothing for an empty {m} queue", "sent", "0", "1", 62),
}  # fmt: skip
#: Test groups that always run beside the ones the story's failures live in.
OTHER_GROUPS = ("envelope", "signature", "routing")
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "expires", "merges", "caches")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp",
          "the nonce")  # fmt: skip
_SEND = re.compile(r"^([a-z]+)_send\(batch(, tenant_id)?\)$")
#: The line the failing build points at, and where the unbound name starts on it.
ERROR_LINE = 88


def ocaml_line(line: str) -> str:
    """A story line as the OCaml it stands for: the send before the fix passes a `tenant_id`
    that is not bound, the fix the batch's; a limit is a top-level binding."""
    found = STORY_LINE.match(line)
    if not found:
        return line
    module = found.group(1)
    send = _SEND.match(line)
    if send:
        tenant = "batch.tenant_id" if send.group(2) else "tenant_id"
        return f"  {module}_send batch ~tenant:{tenant}"
    return f"let {module}_limit = {found.group(3)}"


def numbered(lines: Sequence[str], first: int) -> str:
    """`read_file`'s answer: each line after its number, right-aligned in six columns, and a
    tab (deepagents' `format_content_with_line_numbers`)."""
    return "\n".join(f"{first + k:6d}\t{line}" for k, line in enumerate(lines))


def _seconds(failed: int, passed: int) -> str:
    # How long alcotest says the suite took: a function of the run, so a summary can be named.
    return f"0.{(failed * 37 + passed * 11) % 80 + 10:03d}"


class DeepAgentsVoice(Voice):
    family = "deepagents-style"
    system_prompt = (
        f"You are a coding agent working in the OCaml repository at {ROOT} (OCaml 5.2 in the "
        "opam switch `tidemark`, dune 3.16). Build with `dune build`, run the alcotest suite "
        "with `dune test`, format with `dune build @fmt`. Shell commands go through the "
        "`terminal` tool; `move_file` and `file_delete` move and delete files.\n\n"
        "In order to complete the objective that the user asks of you, you have access to a "
        "number of standard tools.\n\n"
        "## `write_todos`\n\n"
        "Keep a to-do list for objectives of several steps with `write_todos`: it replaces the "
        "whole list, so send every item each time, and mark an item completed as soon as it is "
        "done.\n\n"
        "## Filesystem Tools `ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep`\n\n"
        "All file paths must start with a /. Read a file before you edit it, and page through "
        "large files with offset and limit.\n\n"
        "## `task` (subagent spawner)\n\n"
        "Hand self-contained research to a short-lived subagent with `task`; it answers with "
        "one final report."
    )
    src = "lib"
    ext = "ml"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "dune exec bin/replay.exe -- --queue {module} --dry-run",
        "dune build @fmt --auto-promote",
        f"opam lint {PACKAGE}.opam",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("redelivery delay", "9 seconds", "140 seconds", "55 seconds"),
        ("webhook signing window", "2 minutes", "75 minutes", "30 minutes"),
        ("outbox sweep period", "4 hours", "36 hours", "18 hours"),
        ("Eio fiber pool size", "6 fibers", "48 fibers", "20 fibers"),
        ("minor heap size", "256 kilowords", "8192 kilowords", "1024 kilowords"),
        ("dead-letter retention", "3 days", "60 days", "14 days"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an in-memory Hashtbl of parked envelopes",
         "a Redis list written through ocaml-redis",
         "the Hashtbl starts out empty after every restart",
         "a Caqti-backed outbox table in Postgres drained by an Eio fiber",
         "the Redis we share evicts keys under memory pressure"),
        ("one Mutex around the whole dispatcher", "a forked worker process per tenant",
         "a slow tenant holds that Mutex while every other tenant waits",
         "one Eio.Stream per tenant drained by fibers across two domains",
         "each forked worker would open its own TLS session cache and Postgres pool"),
        ("a crontab line that curls the resend endpoint", "a systemd .timer beside the service",
         "cron drops the runs missed while the host was down",
         "a resend loop inside the service woken by Eio.Time.sleep",
         "ops will not ship another unit file per region"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "The {module} outbox drops webhook envelopes that were parked while a partner "
            "endpoint was down: once the partner comes back, nothing resends them. Make them "
            "go out again in the order they were parked. {other} shares the flush path, so fix "
            "it there too.",
            "After a restart, whatever {module} had parked never gets delivered. I want parked "
            "envelopes resent, oldest first, and {other} has the same bug since it reuses the "
            "flush code.",
        ],
        "set_value": [
            "Set the {key} to {value} for a start.",
            "Let's begin with {value} as the {key}.",
        ],
        "ack": [
            "Got it, I'll hold to that.",
            "Understood, noted for the rest of the work.",
            "Right, I'll work within that.",
        ],
        "constraint": [
            "Please keep to this throughout: {rule}.",
            "A rule for this change: {rule}.",
            "Non-negotiable from the reviewers: {rule}.",
        ],
        "plan": [
            "My approach: {plan}, so {module} still knows about parked envelopes after it "
            "restarts.",
            "I'll go with {plan} first; with that, nothing {module} parks goes missing.",
        ],
        "change_value": [
            "On the {key}: {old} is too tight for the slower partners, please use {new}.",
            "Ops want the {key} raised from {old} to {new}.",
            "Make the {key} {new}; {old} keeps paging the on-call.",
        ],
        "change_again": [
            "Sorry, one more change to the {key}: {old} overloads the partners. Final answer: "
            "{new}.",
            "Back to the {key} again. {old} fell over in the load test, so go with {new} and "
            "leave it there.",
            "Drop the {key} to {new}. {old} looked right, but staging says otherwise.",
        ],
        "ack_value": [
            "Done: config/tidemark.sexp now has the {key} at {new}.",
            "Updated config/tidemark.sexp, the {key} is {new}.",
        ],
        "reverse": [
            "Change of approach: {old} is not going to hold up, because {why}. Switching to {new}.",
            "Scratch {old}, since {why}. I'm moving to {new} instead.",
        ],
        "reverse_again": [
            "Another change of approach: {old} has its own problem, {why}. Going with {new} now.",
            "{old} won't do either, because {why}. Replacing it with {new}.",
        ],
        "question": [
            "For the incident report I need the commit where the resend broke. Find it and "
            "give me the hash.",
            "Which commit broke the resend? I need the hash for the postmortem, so keep it handy.",
        ],
        "commit": [
            "build: bump eio to 1.2",
            "test: move fixtures under test/fixtures",
            "docs: explain the replay executable",
            "ci: cache the opam switch",
        ],
        "answer": [
            "It's {sha}: that commit moved the outbox onto the shared Cohttp client and lost "
            "the retry wrapper.",
            "Found it: {sha}. That change put the outbox on the shared Cohttp client, and its "
            "retries went missing on the way.",
        ],
        "measure_question": [
            "Benchmark one flush batch with core_bench and tell me the time per run. I'll quote "
            "that number in the design doc, so keep it.",
            "How long does a single flush batch take? Run the core_bench benchmark and hold on "
            "to the Time/Run figure for the write-up.",
        ],
        "measure_answer": [
            "core_bench puts one flush batch at {figure}us per run.",
            "One flush batch: {figure}us Time/Run, per core_bench.",
        ],
        "last": [
            "I'm stopping here: the test `{test}` still fails, and I'm working on the to-do to "
            "{todo}. Every other to-do is done or was dropped.",
            "Where things stand: alcotest still reports `{test}` as failing, and {todo} is the "
            "to-do in progress. The rest of the list is finished or removed.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._read: set[str] = set()  # files read_file has shown
        self._failed_before: list[str] = []  # tests an earlier run reported failing
        self._broken: str | None = None  # the module that fails to build, until it builds
        self._written: list[str] = []  # files write_file created, newest last

    @staticmethod
    def absolute(path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return EXAMPLES[name.removeprefix(f"test_{module}_")][0].format(m=module)

    # --- terminal (LangChain's ShellTool) --------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # The ShellTool answers what the commands printed, nothing more: `exit_code` shows
        # only in the output.
        self.s.call("terminal", {"commands": [command]}, output, filler=filler)

    # --- deepagents' filesystem tools ------------------------------------------------------

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = [ocaml_line(x) for x in content.split("\n")]
        while lines and lines[-1] == "":
            lines.pop()
        arguments: dict[str, object] = {"file_path": self.absolute(path)}
        if self.rng.random() < 0.3:
            arguments |= {"offset": 0, "limit": 200}
        self._read.add(path)
        self.s.call("read_file", arguments, numbered(lines, 1), filler=filler)

    def _read_around(self, path: str, line: str) -> None:
        """The window of a file the build error points into, before editing it."""
        before = code_file(self.rng, "ml", ERROR_LINE - 82).split("\n")
        after = code_file(self.rng, "ml", 96 - ERROR_LINE - 1).split("\n")
        window = [*before, "let flush_parked batch =", line, "", *after]
        arguments = {"file_path": self.absolute(path), "offset": 80, "limit": 16}
        self._read.add(path)
        self.s.call("read_file", arguments, numbered(window, 81))

    def edit(self, path: str, old: str, new: str) -> None:
        old_line, new_line = ocaml_line(old), ocaml_line(new)
        if path not in self._read:
            self._read_around(path, old_line)
        arguments: dict[str, object] = {
            "file_path": self.absolute(path),
            "old_string": old_line,
            "new_string": new_line,
        }
        if self.rng.random() < 0.5:
            arguments["replace_all"] = False
        result = f"Successfully replaced 1 instance(s) of the string in '{self.absolute(path)}'"
        self.s.call("edit_file", arguments, result)

    def create(self, path: str, content: str) -> None:
        module = path.rsplit("/", 1)[-1].removesuffix(".ml")
        text = f"(* {module.replace('_', ' ')}: the parked envelopes' side of the outbox. *)\n\n"
        text += content + "\n"
        self._written.append(path)
        self.s.call("write_file", {"file_path": self.absolute(path), "content": text},
                    f"Updated file {self.absolute(path)}")  # fmt: skip

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        rows: dict[str, list[str]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            function, _, argument = text.strip().rstrip(")").partition("(")
            rows.setdefault(self.absolute(path), []).append(f"  {line}: {function} {argument}")
        if filler and self.rng.random() < 0.3:
            self._research(pattern, root, rows)
            return
        arguments: dict[str, object] = {"pattern": pattern, "path": self.absolute(root)}
        if self.rng.random() < 0.5:
            arguments["glob"] = "*.ml"
        if self.rng.random() < 0.25:
            result = "\n".join(sorted(rows))  # files_with_matches, the default
        else:
            arguments["output_mode"] = "content"
            result = "\n".join(f"{p}:\n" + "\n".join(rows[p]) for p in sorted(rows))
        self.s.call("grep", arguments, result, filler=filler)

    def _research(self, pattern: str, root: str, rows: dict[str, list[str]]) -> None:
        """A search handed to the general-purpose subagent, answered by its final report."""
        description = (
            f"Find every use of `{pattern}` under {self.absolute(root)} and list each one as "
            "file:line with the code on that line. Report only the list, grouped by file."
        )
        report = [f"`{pattern}` is used in {sum(len(r) for r in rows.values())} places:", ""]
        for path in sorted(rows):
            report.append(f"**{path.removeprefix(ROOT + '/')}**")
            report += [f"- line {r.strip().replace(': ', ': `', 1)}`" for r in rows[path]]
            report.append("")
        report.append("No other file under that directory mentions it.")
        self.s.call("task", {"description": description, "subagent_type": "general-purpose"},
                    "\n".join(report), filler=True)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        found = str(sorted({self.absolute(p) for p in paths}))
        if self.rng.random() < 0.4:
            arguments = {"pattern": "*.ml", "path": self.absolute(root)}
            self.s.call("glob", arguments, found, filler=filler)
        else:
            self.s.call("ls", {"path": self.absolute(root)}, found, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        todos = [{"content": t, "status": TODO_STATES[s]} for t, s in items if s in TODO_STATES]
        self.s.call("write_todos", {"todos": todos}, f"Updated todo list to {todos}")

    # --- LangChain's FileManagementToolkit -------------------------------------------------

    def delete(self, path: str) -> None:
        where = self.absolute(path)
        self.s.call("file_delete", {"file_path": where}, f"File deleted successfully: {where}.")

    def move(self, source: str, destination: str) -> None:
        source = self.absolute(source.replace("testdata/", "test/fixtures/", 1))
        destination = self.absolute(destination.replace("testdata/", "test/fixtures/", 1))
        self.shell(f"mkdir -p {destination.rsplit('/', 1)[0]}", "")
        arguments = {"source_path": source, "destination_path": destination}
        self.s.call("move_file", arguments,
                    f"File moved successfully from {source} to {destination}.")  # fmt: skip

    # --- what the commands print -----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                "[replay] mode=dry-run, nothing will be sent\n"
                f"[replay] parked={parked} eligible=0 oldest=none"
            )
        if k == 1:
            return self._fmt_diff()
        return f"{ROOT}/{PACKAGE}.opam: Passed."

    def _fmt_diff(self) -> str:
        """ocamlformat's diff of the newest file written, as `dune build @fmt` prints it, and
        dune promoting the formatted file."""
        path = self._written[-1] if self._written else f"{self.src}/{PACKAGE}.ml"
        name = path.rsplit("/", 1)[-1]
        folder = path.rsplit("/", 1)[0]
        index = f"{hexid(self.rng)}..{hexid(self.rng)}"
        a = token(self.rng, 1).lower() + "_batch"
        return "\n".join(
            [
                f'File "{path}", line 1, characters 0-0:',
                f"diff --git a/_build/default/{path} b/_build/default/{folder}/.formatted/{name}",
                f"index {index} 100644",
                f"--- a/_build/default/{path}",
                f"+++ b/_build/default/{folder}/.formatted/{name}",
                "@@ -12 +12,3 @@",
                f"-let flush t = List.iter (fun {a} -> push t {a}) (parked t) ; t.count <- 0",
                "+let flush t =",
                f"+  List.iter (fun {a} -> push t {a}) (parked t);",
                "+  t.count <- 0",
                f"Promoting _build/default/{folder}/.formatted/{name} to {path}.",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        self._broken = module
        line = ocaml_line(f"{module}_send(batch)")
        start = line.index("tenant_id")
        end = start + len("tenant_id")
        probe = "Unbound value tenant_id"
        gutter = f"{ERROR_LINE} | "
        output = "\n".join(
            [
                f'File "{self.src}/{module}.ml", line {ERROR_LINE}, characters {start}-{end}:',
                f"{gutter}{line}",
                " " * (len(gutter) + start) + "^" * (end - start),
                f"Error: {probe}",
            ]
        )
        return output, probe, BUILD

    def build_ok(self) -> str:
        self._broken = None
        return ""  # dune says nothing when the build succeeds

    def measurement(self, figure: str) -> tuple[str, str]:
        minor = f"{self.rng.randint(2, 19)}_{self.rng.randint(0, 999):03d}.00w"
        major = f"{self.rng.randint(100, 999)}.00w"
        cells = ["flush one batch", f"{figure}us", minor, major, major, "100.00%"]
        heads = ["Name", "Time/Run", "mWd/Run", "mjWd/Run", "Prom/Run", "Percentage"]
        widths = [max(len(h), len(c)) for h, c in zip(heads, cells, strict=True)]

        def row(values: Sequence[str]) -> str:
            first = f" {values[0]:<{widths[0]}} "
            rest = [f" {v:>{w}} " for v, w in zip(values[1:], widths[1:], strict=True)]
            return "│" + "│".join([first, *rest]) + "│"

        def rule(left: str, middle: str, right: str) -> str:
            return left + middle.join("─" * (w + 2) for w in widths) + right

        output = "\n".join(
            [
                "Estimated testing time 10s (1 benchmarks x 10s). Change using '-quota'.",
                rule("┌", "┬", "┐"),
                row(heads),
                rule("├", "┼", "┤"),
                row(cells),
                rule("└", "┴", "┘"),
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return TEST

    def test_counts(self, failed: int, passed: int) -> str:
        total, seconds = failed + passed, _seconds(failed, passed)
        if not failed:
            return f"Test Successful in {seconds}s. {total} tests run."
        return f"{failed} failure{'' if failed == 1 else 's'}! in {seconds}s. {total} tests run."

    @staticmethod
    def _parse(test: str) -> tuple[str, str]:
        """(group, example key) of one of the story's test descriptions."""
        for key, (template, *_) in EXAMPLES.items():
            before, after = template.split("{m}")
            if test.startswith(before) and test.endswith(after):
                return test[len(before) : len(test) - len(after)], key
        raise ValueError(test)

    def _groups(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        """(group, its test names) for every group the suite runs, `total` tests in all: the
        groups of the `named` tests first, each holding them."""
        groups: dict[str, list[str]] = {}
        for test in named:
            group, _ = self._parse(test)
            groups.setdefault(group, [])
            if test not in groups[group]:
                groups[group].append(test)
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        return filled_groups(groups, OTHER_GROUPS, total, names)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where they pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        groups = self._groups(named, failed + passed)
        width = max(len(g) for g, _ in groups)
        stanza, at, source = TEST_STANZA
        start = source.index("test_")
        name = source[start:].rstrip(")")
        lines = [
            f'File "{stanza}", line {at}, characters {start}-{start + len(name)}:',
            f"{at} | {source}",
            " " * (len(f"{at} | ") + start) + "^" * len(name),
            f"Testing `{PACKAGE}'.",
            f"This run has ID `{token(self.rng, 8)}'.",
            "",
        ]
        first: tuple[str, int, str] | None = None
        for group, tests in groups:
            for index, test in enumerate(tests):
                bad = test in failing
                status = "[FAIL]" if bad else "[OK]"
                lines.append(f"  {status:<14}{group:<{width}}{'':8}{index:>3}   {test}.")
                if bad and first is None:
                    first = (group, index, test)
        results = f"~/src/{PACKAGE}/_build/default/test/_build/_tests/{PACKAGE}"
        if first is not None:
            group, index, test = first
            _, check, expected, received, at_line = EXAMPLES[self._parse(test)[1]]
            boxed = f"[FAIL]        {group:<{width}}{'':8}{index:>3}   {test}."
            lines += [
                "",
                "┌" + "─" * 78 + "┐",
                f"│ {boxed:<77}│",
                "└" + "─" * 78 + "┘",
                f"ASSERT {check}",
                f"FAIL {check}",
                "",
                f"   Expected: {expected}",
                f"   Received: {received}",
                "",
                "Raised at Alcotest_engine__Test.check in file "
                '"src/alcotest-engine/test.ml", line 216, characters 4-26',
                f"Called from Test_tidemark__Test_{group}.run in file "
                f'"test/test_{group}.ml", line {at_line}, characters 2-58',
                "Called from Alcotest_engine__Core.Make.protect_test.(fun) in file "
                '"src/alcotest-engine/core.ml", line 186, characters 17-23',
                "",
                f"Logs saved to `{results}/{group}.{index:03d}.output'.",
                " " + "─" * 78,
            ]
        lines += ["", f"Full test results in `{results}'.", self.test_counts(failed, passed)]
        return "\n".join(lines)
