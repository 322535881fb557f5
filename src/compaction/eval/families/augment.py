"""An Augment-style family, telling the story's second-thoughts variant: a Scala 3 service (sbt
1.10, munit, scalafmt, MiMa, sbt-jmh for the variant's figure) worked on through Augment Code's
agent (Augment Agent in VS Code and JetBrains; Auggie on the command line), by a user who asks
in plain sentences and an assistant who answers in short Markdown. Augment's agent runs on
Claude as often as on GPT models; the benchmark measures this family in the Anthropic Messages
dialect too (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`), where every call below is a
`tool_use` block and every result a `tool_result` block.

Where the names come from. The tool names and argument names are the `tool_definitions` of a
captured request of the VS Code extension (0.753.0) to Augment's chat endpoint, published on
GitHub, and agree with a deobfuscated copy of an earlier extension build and with third-party
proxies that re-implement the tools:
- `launch-process` {command, wait, max_wait_seconds, cwd}: answers "Here are the results from
  executing the command." with the `<return-code>` and `<output>` blocks; when the wait runs
  out, "Command is still running after N seconds …" with the terminal's id and the output so
  far, read back with `read-process` {terminal_id, wait, max_wait_seconds}.
- `view` {path, type "file"/"directory", view_range?, search_query_regex?}: a file as `cat -n`
  prints it ("Here's the result of running `cat -n` on <path>:" … "Total lines in file: N"), a
  regex search as "Regex search results for pattern: …" with `>` on the matching lines, a
  directory as its files up to two levels deep.
- `str-replace-editor` {command "str_replace", path, instruction_reminder, old_str_1,
  new_str_1, old_str_start_line_number_1, old_str_end_line_number_1, and `…_2` for a second
  entry in the same call}: answers "Successfully edited the file <path>." and, per entry,
  "Result for str_replace for entry with index [N]:" / "Replacement successful." / "new_str
  starts at line A and ends at line B." (an exported Augment session shows this text).
  `instruction_reminder` is the fixed sentence the schema asks for.
- `save-file` {instructions_reminder, path, file_content, add_last_line_newline}: answers
  "File saved.  Saved file {<path>}" (the extension's own string, braces included).
- `remove-files` {file_paths}: the one tool the agent may delete files with.
- `codebase-retrieval` {information_request}: Augment's context engine, answering code
  sections under `Path:` lines.
- the task list: `add_tasks` {tasks: [{name, description, state}]}, `update_tasks` {tasks:
  [{task_id, state}]}, `view_tasklist` {}; states NOT_STARTED / IN_PROGRESS / COMPLETE /
  CANCELLED, written `[ ]`, `[/]`, `[x]`, `[-]`.
Moves go through the shell (`git mv` in `launch-process`), as Augment has no move tool, and the
session ends on the assistant's text. `kill-process`, `web-search` and `git-commit-retrieval`
exist but this story has no use for them.

What is this family's own reading, where no source says more: the task tools' answers ("Task
list updated successfully. Created: C, Updated: U, Deleted: D." and the changed tasks as
`[x] UUID:<id> NAME:<name> DESCRIPTION:<text>` lines, the markdown a re-implementing proxy
documents for `view_tasklist`); `remove-files`' answer ("File(s) removed: <paths>");
`read-process`' wording ("Here is the output from terminal N (status: completed):") and the
still-running answer's `Terminal ID N` line, which follow the earlier build's process tools
(that build named a PID where the current schema names a terminal id); and
`codebase-retrieval`'s "The following code sections were retrieved:" heading. Paths are
relative to the workspace root, as the schema asks; `cwd` is the absolute root.

Tool outputs follow sbt's: the `[info] welcome to sbt` / `loading` / `set current project`
lines, Scala 3's `[error] -- [E006] Not Found Error: <file>:88:24` with the source line, the
caret and `Not found: tenantId` at both calls, `two errors found` and `(Compile /
compileIncremental) Compilation failed`, then the build passing with `[success] Total time:`;
`sbt test` with munit's suites (`+ name 0.004s`, `==> X suite.name 0.012s
munit.ComparisonFailException` with the source lines, "values are not the same", the obtained
value and the diff), then `[error] Failed: Total T, Failed F, Errors 0, Passed P` and `Failed
tests:`; scalafmt's check, MiMa's report, and sbt-jmh's `Benchmark Mode Cnt Score Error Units`
table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import (
    STORY_LINE,
    Session,
    Voice,
    camel,
    code_file,
    filled_groups,
    hexid,
    lower_camel,
)

ROOT = "/home/dev/src/relay"
PACKAGE = "com.acme.relay"
SCALA = "3.3.4"
SBT = "1.10.2"
CLASSES = f"{ROOT}/target/scala-{SCALA}/classes"
#: The strings the tool schemas ask the model to repeat in every edit and every new file.
EDIT_REMINDER = "ALWAYS BREAK DOWN EDITS INTO SMALLER CHUNKS OF AT MOST 150 LINES EACH."
SAVE_REMINDER = (
    "LIMIT THE FILE CONTENT TO AT MOST 150 LINES. IF MORE CONTENT NEEDS TO BE ADDED USE THE "
    "str-replace-editor TOOL TO EDIT THE FILE AFTER IT HAS BEEN CREATED."
)
#: The story's statuses as the task tools spell them, and as the task list marks them.
TASK_STATES = {"pending": "NOT_STARTED", "in_progress": "IN_PROGRESS", "completed": "COMPLETE",
               "cancelled": "CANCELLED"}  # fmt: skip
TASK_MARKS = {"NOT_STARTED": "[ ]", "IN_PROGRESS": "[/]", "COMPLETE": "[x]", "CANCELLED": "[-]"}
#: The build whose compile error the story fixes, and the benchmark the variant's figure is.
BUILD = "sbt compile"
BENCH = "sbt Jmh/run -i 5 -wi 3 -f 1 FlushBench"
#: What each failing test expected, what it got, and the line of its assertion.
TESTS = {
    "retries": ("retries a timed-out delivery three times", "3", "2", 31),
    "orders_batches": ("keeps batches in enqueue order", "List(1, 2, 3)", "List(1, 3, 2)", 47),
    "handles_empty": ("does nothing for an empty queue", "0", "1", 62),
}
#: Suites that always run beside the ones the story's failures live in.
OTHER_SUITES = ("EnvelopeCodecSuite", "RouteTableSuite", "SignatureSuite")
_VERBS = ("decodes", "encodes", "signs", "rejects", "parses", "caches", "expires", "merges")
_NOUNS = ("a payload", "the header", "an envelope", "a receipt", "the digest", "a timestamp",
          "the nonce")  # fmt: skip
_DESCRIPTIONS = (
    "Part of making parked envelopes go out again.",
    "Follow-up the resend fix needs before review.",
    "Keeps the change complete for the release notes.",
)


def scala_line(line: str) -> str:
    """A story line as the Scala it stands for: a limit is a `val`, the send before the fix
    passes a `tenantId` that is not in scope, the fix takes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        if value.startswith("settings."):
            value = f"settings.{module}Limit"
        return f"  val {module}Limit = {value}"
    return f"    {module}Send(batch, {'batch.tenantId' if fixed else 'tenantId'})"


def _scala_file(name: str, body: Sequence[str]) -> list[str]:
    return [
        f"package {PACKAGE}",
        "",
        "import cats.effect.IO",
        "import scala.concurrent.duration.*",
        "",
        f"object {name}:",
        *body,
    ]


def _numbered(lines: Sequence[str], first: int = 1) -> list[str]:
    return [f"{first + k:>6}\t{line}" for k, line in enumerate(lines)]


class AugmentVoice(Voice):
    family = "augment-style"
    system_prompt = (
        "You are Augment Agent, Augment Code's coding agent, working in the developer's "
        "workspace through Augment's context engine and the tools below.\n\n"
        "# Working style\n"
        "- Gather context first: codebase-retrieval for where things live, view for files.\n"
        "- Plan non-trivial work in the task list (add_tasks, update_tasks, view_tasklist) "
        "and keep exactly one task IN_PROGRESS.\n"
        "- Edit existing files only with str-replace-editor; create files with save-file; "
        "delete files only with remove-files.\n"
        "- Run builds and tests with launch-process from the workspace root.\n"
        "- Answer in concise Markdown.\n\n"
        f"# Workspace\nRoot: {ROOT} (git). Scala {SCALA} with sbt {SBT}; tests are munit "
        "(sbt test), formatting is scalafmt, binary compatibility is checked with MiMa, "
        "benchmarks are sbt-jmh."
    )
    src = "src/main/scala/com/acme/relay"
    ext = "scala"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "target/universal/stage/bin/relay-replay --queue {module} --dry-run",
        "sbt scalafmtCheckAll",
        "sbt mimaReportBinaryIssues",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("redelivery delay", "6 seconds", "90 seconds", "35 seconds"),
        ("outbox poll interval", "250 millis", "4000 millis", "1800 millis"),
        ("relay parallelism", "2 fibers", "64 fibers", "16 fibers"),
        ("dead-letter retention", "3 days", "60 days", "14 days"),
        ("producer linger", "5 ms", "180 ms", "40 ms"),
        ("HTTP pool size", "6 connections", "200 connections", "48 connections"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an in-memory Ref of pending envelopes inside the relay",
         "a compacted Kafka topic read through fs2-kafka",
         "the Ref is empty again after every redeploy",
         "a Doobie outbox table drained by an fs2 stream",
         "the platform team will not provision another topic per tenant"),
        ("one Semaphore around the whole dispatcher", "a separate JVM per tenant",
         "one slow tenant holds the permit while everyone else waits",
         "per-tenant Queues drained by supervised fibers in one JVM",
         "a JVM per tenant multiplies the heap and every connection pool"),
        ("a Kubernetes CronJob calling the resend endpoint", "Quartz scheduling inside the relay",
         "the CronJob silently skips its runs while the cluster is being upgraded",
         "an fs2 awakeEvery loop in the relay itself",
         "Quartz wants JDBC tables of its own and a thread pool we do not control"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Envelopes that {module} parks while a partner is down never leave the outbox "
            "again, even after the partner is back. Please get them resent, oldest first. "
            "The {other} queue shares that relay code, so it needs the fix too.",
            "After a relay restart nothing that {module} parked gets redelivered; it just "
            "sits in the outbox. Can you fix that? The {other} queue is wired the same way and "
            "has the same problem.",
        ],
        "set_value": [
            "For the {key}, let's begin at {value}.",
            "Use {value} as the {key} for now.",
        ],
        "ack": [
            "Got it. I'll keep that in mind for the remaining tasks.",
            "Understood, I'll stick to that.",
            "Sure, that's noted for the rest of the work.",
        ],
        "constraint": [
            "Please make sure of one thing: {rule}.",
            "Before you go further: {rule}.",
            "Non-negotiable for this change: {rule}.",
        ],
        "plan": [
            "## Approach\nI'll go with {plan} so that {module} can pick its parked envelopes "
            "up again after a restart.",
            "## Plan\nFirst step: {plan}. That keeps whatever {module} parks from being lost.",
        ],
        "change_value": [
            "Let's revisit the {key}: {old} is too tight for our slower partners, make it {new}.",
            "Ops want the {key} at {new} instead of {old}.",
            "{old} for the {key} keeps paging people. Switch it to {new}.",
        ],
        "change_again": [
            "One more change to the {key}: {old} overshoots what the partners accept. Set it "
            "to {new}.",
            "Sorry, back to the {key} again. {old} failed the overnight soak test; {new} is final.",
            "Bring the {key} down to {new}. {old} looked fine in the design review, not in "
            "staging.",
        ],
        "ack_value": [
            "Done: `application.conf` now sets the {key} to {new}.",
            "Updated the {key} to {new} in `application.conf`.",
        ],
        "reverse": [
            "## Change of plan\nI'm not going ahead with {old}: {why}. Switching to {new}.",
            "## Revised approach\nI'm dropping {old}, because {why}. The approach is now {new}.",
        ],
        "reverse_again": [
            "## Another revision\nThere is a problem with {old} as well: {why}. I'm going with "
            "{new} instead.",
            "## Revised again\nBecause {why}, I'm dropping {old} too; {new} replaces it.",
        ],
        "question": [
            "For the incident report I need the commit that broke redelivery. What's its hash? "
            "Please remember it.",
            "Can you find which commit introduced this? The postmortem wants the hash.",
        ],
        "commit": [
            "build: bump sbt-scalafmt to 2.5.2",
            "test: move fixtures under src/test/resources",
            "docs: explain the replay launcher",
            "ci: cache the coursier directory",
        ],
        "answer": [
            "It's {sha}: that commit moved the relay onto the shared http4s client and dropped "
            "its retry middleware along the way.",
            "The culprit is {sha}. It switched the relay to the shared http4s client and lost "
            "the retries.",
        ],
        "measure_question": [
            "Run the JMH benchmark for a single flush batch and tell me the average time. I'll "
            "quote that number in the design doc, so keep it.",
            "What does one flush batch cost? Please benchmark it with sbt-jmh and keep the "
            "score for the write-up.",
        ],
        "measure_answer": [
            "JMH puts one flush batch at {figure} us/op on average.",
            "A single flush batch averages {figure} us/op in JMH.",
        ],
        "last": [
            "## Status\n{test} is still failing, and {todo} is the task in progress. Every "
            "other task is either complete or cancelled.",
            "## Where things stand\nStill failing: {test}. In progress: {todo}. The rest of "
            "the task list is complete or cancelled.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last viewed
        self._tasks: dict[str, tuple[str, str, str]] = {}  # task → (id, state, description)
        self._terminal = 0  # launch-process numbers the terminals it opens
        self._updates = 0  # task-list writes so far
        self._failed_before: list[str] = []  # tests an earlier run reported failing
        self._broken: str | None = None  # the module that fails to compile, until it does

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.scala"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        test = TESTS[name.removeprefix(f"test_{module}_")][0]
        return f"{PACKAGE}.{camel(module)}Suite.{test}"

    # --- launch-process / read-process ----------------------------------------------------

    def _clock(self) -> str:
        hour, minute, second = (self.rng.randint(1, 12), self.rng.randint(0, 59),
                                self.rng.randint(0, 59))  # fmt: skip
        return f"Dec 1, 2026, {hour}:{minute:02d}:{second:02d} PM"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        self._terminal += 1
        if command == BENCH:
            self._long_run(command, output)
            return
        arguments = {"command": command, "wait": True, "max_wait_seconds": 600, "cwd": ROOT}
        result = (
            "Here are the results from executing the command.\n"
            f"<return-code>\n{exit_code}\n</return-code>\n<output>\n{output}\n</output>"
        )
        self.s.call("launch-process", arguments, result, filler=filler)

    def _long_run(self, command: str, output: str) -> None:
        """The benchmark outlasts its wait: the call answers with the output so far, and the
        agent reads the terminal back until the run completes."""
        terminal = self._terminal
        warmup = [line for line in output.split("\n") if "# Warmup" in line or "# Fork" in line]
        arguments = {"command": command, "wait": True, "max_wait_seconds": 120, "cwd": ROOT}
        result = (
            "Command is still running after 120 seconds. You can use read-process to get more "
            "output and kill-process to terminate it if needed.\n"
            f"Terminal ID {terminal}\nOutput so far:\n<output>\n"
            + "\n".join(warmup)
            + "\n</output>"
        )
        self.s.call("launch-process", arguments, result)
        read = {"terminal_id": terminal, "wait": True, "max_wait_seconds": 600}
        done = (
            f"Here is the output from terminal {terminal} (status: completed):\n"
            f"<output>\n{output}\n</output>\n<return-code>\n0\n</return-code>"
        )
        self.s.call("read-process", read, done)

    # --- files ----------------------------------------------------------------------------

    def _render(self, path: str, content: str) -> list[str]:
        name = path.rsplit("/", 1)[-1].removesuffix(".scala")
        return _scala_file(name, [scala_line(x) for x in content.split("\n")])

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        arguments: dict[str, object] = {"path": path, "type": "file"}
        shown, first = lines, 1
        if filler and len(lines) > 60 and self.rng.random() < 0.3:
            first, last = 1, self.rng.randint(40, len(lines) - 5)
            shown = lines[first - 1 : last]
            arguments["view_range"] = [first, last]
        result = (
            f"Here's the result of running `cat -n` on {path}:\n"
            + "\n".join(_numbered(shown, first))
            + f"\nTotal lines in file: {len(lines)}\n"
        )
        self.s.call("view", arguments, result, filler=filler)

    def _find(self, path: str, needle: str) -> None:
        """A regex view of a file the agent has not read: the compiler's lines, located."""
        lines = [f"package {PACKAGE}", ""]
        filler = code_file(self.rng, "scala", 140).split("\n")
        lines += filler[: 140 - len(lines)]
        for at in (88, 93):
            lines[at - 1] = needle
        self._seen[path] = lines
        shown = [f"{'>' if lines[n - 1] == needle else ' '}{n:>5}\t{lines[n - 1]}"
                 for n in range(83, 99)]  # fmt: skip
        pattern = "tenantId"
        result = (
            f"Regex search results for pattern: {pattern} in {path}\n"
            "Found 2 matching lines:\n\n" + "\n".join(shown) + "\n\nTotal lines in file: 140"
        )
        self.s.call("view", {"path": path, "type": "file", "search_query_regex": pattern}, result)

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = scala_line(old), scala_line(new)
        if before not in self._seen.get(path, []):
            self._find(path, before)
        lines = self._seen[path]
        at = [n + 1 for n, line in enumerate(lines) if line == before]
        arguments: dict[str, object] = {"command": "str_replace", "path": path,
                                        "instruction_reminder": EDIT_REMINDER}  # fmt: skip
        reports = [f"Successfully edited the file {path}."]
        for k, line in enumerate(at, start=1):
            arguments[f"old_str_{k}"] = before
            arguments[f"new_str_{k}"] = after
            arguments[f"old_str_start_line_number_{k}"] = line
            arguments[f"old_str_end_line_number_{k}"] = line
            reports += [
                f"Result for str_replace for entry with index [{k}]:",
                "Replacement successful.",
                f"new_str starts at line {line} and ends at line {line}.",
                "",
            ]
            lines[line - 1] = after
        reports += [
            "Review the changes and make sure they are as expected (correct indentation, no "
            "duplicate lines, etc).",
            "Edit the file again if necessary.",
        ]
        self.s.call("str-replace-editor", arguments, "\n".join(reports))

    def create(self, path: str, content: str) -> None:
        text = "\n".join(self._render(path, content))
        arguments = {"instructions_reminder": SAVE_REMINDER, "path": path, "file_content": text,
                     "add_last_line_newline": True}  # fmt: skip
        self.s.call("save-file", arguments, f"File saved.  Saved file {{{path}}}")

    def delete(self, path: str) -> None:
        self.s.call("remove-files", {"file_paths": [path]}, f"File(s) removed: {path}")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "src/test/resources/", 1)
        destination = destination.replace("testdata/", "src/test/resources/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        rows = []
        for hit in hits:
            path, line, text = hit.split(":", 2)
            function, _, argument = text.strip().rstrip(")").partition("(")
            rows.append((path, int(line), f"    {lower_camel(function)}({argument})"))
        if self.rng.random() < 0.5:
            output = "\n".join(f"{p}:{n}:{t}" for p, n, t in rows)
            self.shell(f"rg -n {pattern} {root}", output, filler=filler)
            return
        sections = ["The following code sections were retrieved:"]
        for where, at, code in sorted(rows):
            sections += [f"Path: {where}", f"{at:>6}\t{code}", "..."]
        request = f"Where is {pattern} handled in {root}, and which functions call it?"
        self.s.call("codebase-retrieval", {"information_request": request},
                    "\n".join(sections), filler=filler)  # fmt: skip

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        listed = sorted(set(paths))
        result = (
            f"Here's the files and directories up to 2 levels deep in {root}, excluding hidden "
            "items:\n" + "\n".join(listed) + "\n"
        )
        self.s.call("view", {"path": root, "type": "directory"}, result, filler=filler)

    # --- the task list --------------------------------------------------------------------

    def _task_line(self, name: str) -> str:
        task_id, state, description = self._tasks[name]
        return f"{TASK_MARKS[state]} UUID:{task_id} NAME:{name} DESCRIPTION:{description}"

    def _changes(self, created: Sequence[str], updated: Sequence[str]) -> str:
        lines = [
            f"Task list updated successfully. Created: {len(created)}, Updated: "
            f"{len(updated)}, Deleted: 0.",
            "",
            "# Task Changes",
        ]
        for heading, names in (("Created Tasks", created), ("Updated Tasks", updated)):
            if names:
                lines += ["", f"## {heading}", "", *(self._task_line(n) for n in names)]
        lines += [
            "",
            "Remember: when you update the task list later, mark a task IN_PROGRESS ([/]) when "
            "you start it, COMPLETE ([x]) when it is done, and CANCELLED ([-]) when it is no "
            "longer needed.",
        ]
        return "\n".join(lines)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        new = [(name, TASK_STATES[s]) for name, s in items if name not in self._tasks]
        self._updates += 1
        if self._tasks:
            if self._updates == 2:  # halfway through, the agent looks at the list first
                self.s.call("view_tasklist", {}, self._tasklist())
            changed = [(n, TASK_STATES[s]) for n, s in items
                       if n in self._tasks and self._tasks[n][1] != TASK_STATES[s]]  # fmt: skip
            for name, state in changed:
                task_id, _, description = self._tasks[name]
                self._tasks[name] = (task_id, state, description)
            arguments = {"tasks": [{"task_id": self._tasks[n][0], "state": s} for n, s in changed]}
            self.s.call("update_tasks", arguments, self._changes([], [n for n, _ in changed]))
        if new:
            tasks = []
            for name, state in new:
                description = self.pick(_DESCRIPTIONS)
                self._tasks[name] = (self._uuid(), state, description)
                tasks.append({"name": name, "description": description, "state": state})
            self.s.call("add_tasks", {"tasks": tasks}, self._changes([n for n, _ in new], []))

    def _uuid(self) -> str:
        return f"{hexid(self.rng, 8)}-{hexid(self.rng, 4)}-4{hexid(self.rng, 3)}-" \
               f"{self.rng.choice('89ab')}{hexid(self.rng, 3)}-{hexid(self.rng, 12)}"  # fmt: skip

    def _tasklist(self) -> str:
        root = f"[ ] UUID:{self._uuid()} NAME:Current Task List DESCRIPTION:Root task for this " \
               "conversation"  # fmt: skip
        return "# Current Task List\n\n" + "\n".join(
            [root, *(f"-{self._task_line(name)}" for name in self._tasks)]
        )

    # --- what the commands print ----------------------------------------------------------

    def _sbt(self) -> list[str]:
        return [
            f"[info] welcome to sbt {SBT} (Eclipse Adoptium Java 21.0.4)",
            "[info] loading settings for project relay-build from plugins.sbt ...",
            f"[info] loading project definition from {ROOT}/project",
            "[info] loading settings for project relay from build.sbt ...",
            f"[info] set current project to relay (in build file:{ROOT}/)",
        ]

    def _done(self, ok: bool = True) -> str:
        seconds = self.rng.randint(3, 40)
        verdict = "[success]" if ok else "[error]"
        return f"{verdict} Total time: {seconds} s, completed {self._clock()}"

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 60)
            return (
                "relay-replay: dry run, nothing will be sent\n"
                f"relay-replay: 0 of {parked} parked envelopes would be redelivered"
            )
        if k == 1:
            sources = self.rng.randint(40, 90)
            return "\n".join([*self._sbt(), f"[info] scalafmt: Checking {sources} Scala sources "
                              f"({ROOT})...", self._done()])  # fmt: skip
        return "\n".join(
            [
                *self._sbt(),
                "[info] relay: found 0 potential binary incompatibilities while checking against "
                "com.acme:relay_3:0.8.1",
                self._done(),
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        self._broken = module
        name = camel(module)
        call = scala_line(f"{module}_send(batch)")
        column = call.index("tenantId")
        path = f"{ROOT}/{self.src}/{name}.scala"
        lines = [*self._sbt(), f"[info] compiling 1 Scala source to {CLASSES} ..."]
        for at in (88, 93):
            lines += [
                f"[error] -- [E006] Not Found Error: {path}:{at}:{column + 1} ",
                f"[error] {at} |{call}",
                f"[error]    |{' ' * column}^^^^^^^^",
                f"[error]    |{' ' * column}Not found: tenantId",
                "[error]    |",
                "[error]    | longer explanation available when compiling with `-explain`",
            ]
        lines += [
            "[error] two errors found",
            "[error] (Compile / compileIncremental) Compilation failed",
            self._done(ok=False),
        ]
        return "\n".join(lines), "Not found: tenantId", BUILD

    def build_ok(self) -> str:
        self._broken = None
        return "\n".join(
            [*self._sbt(), f"[info] compiling 1 Scala source to {CLASSES} ...", self._done()]
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        score = float(figure)
        error = score * self.rng.randint(1, 4) / 100
        output = "\n".join(
            [
                *self._sbt(),
                "[info] # JMH version: 1.37",
                "[info] # VM version: JDK 21.0.4, OpenJDK 64-Bit Server VM, 21.0.4+7-LTS",
                "[info] # Warmup: 3 iterations, 10 s each",
                "[info] # Measurement: 5 iterations, 10 s each",
                "[info] # Benchmark mode: Average time, time/op",
                f"[info] # Benchmark: {PACKAGE}.bench.FlushBench.oneBatch",
                "[info] # Fork: 1 of 1",
                f"[info] # Run complete. Total time: 00:01:{self.rng.randint(20, 59)}",
                "[info] Benchmark             Mode  Cnt    Score    Error  Units",
                f"[info] FlushBench.oneBatch   avgt    5  {figure:>7} \u00b1 {error:6.2f}  us/op",
                self._done(),
            ]
        )
        return output, BENCH

    def test_command(self) -> str:
        return "sbt test"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"Total {failed + passed}, Failed {failed}, Errors 0, Passed {passed}"

    def _suites(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        """(suite, its tests) for every suite the run reports, `total` tests in all: the
        suites of the `named` tests first, each holding them."""
        groups: dict[str, list[str]] = {}
        for test in named:
            suite, name = test.removeprefix(f"{PACKAGE}.").split(".", 1)
            groups.setdefault(suite, [])
            if name not in groups[suite]:
                groups[suite].append(name)
        names = [f"{v} {n}" for v in _VERBS for n in _NOUNS]
        return filled_groups(groups, OTHER_SUITES, total, names)

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where they pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        lines = [*self._sbt(), f"[info] compiling 3 Scala sources to {ROOT}/target/scala-{SCALA}"
                 "/test-classes ..."]  # fmt: skip
        broken: list[str] = []
        for suite, tests in self._suites(named, failed + passed):
            lines.append(f"[info] {PACKAGE}.{suite}:")
            for name in tests:
                took = f"{self.rng.randint(1, 40) / 1000:.3f}s"
                if f"{PACKAGE}.{suite}.{name}" not in failing:
                    lines.append(f"[info]   + {name} {took}")
                    continue
                broken.append(suite)
                key = next(k for k, v in TESTS.items() if v[0] == name)
                _, expected, got, at = TESTS[key]
                source = f"{ROOT}/src/test/scala/com/acme/relay/{suite}.scala"
                lines += [
                    f"[error] ==> X {PACKAGE}.{suite}.{name}  {took} "
                    f"munit.ComparisonFailException: {source}:{at}",
                    f"[error] {at - 1}:    val obtained = run{camel(key)}(fixture)",
                    f"[error] {at}:    assertEquals(obtained, {expected})",
                    f"[error] {at + 1}:  }}",
                    "[error] values are not the same",
                    "[error] => Obtained",
                    f"[error] {got}",
                    "[error] => Diff (- obtained, + expected)",
                    f"[error] -{got}",
                    f"[error] +{expected}",
                    "[error]     at munit.Assertions.failComparison(Assertions.scala:274)",
                ]
        summary = self.test_counts(failed, passed)
        if failed:
            lines += [f"[error] Failed: {summary}", "[error] Failed tests:"]
            lines += [f"[error] \t{PACKAGE}.{suite}" for suite in dict.fromkeys(broken)]
            lines += ["[error] (Test / test) sbt.TestsFailedException: Tests unsuccessful"]
        else:
            lines.append(f"[info] Passed: {summary}")
        lines.append(self._done(ok=not failed))
        return "\n".join(lines)
