"""A Crush-style family, telling the story's second-thoughts variant: a Java service built
with Maven (javac through the compiler plugin, JUnit 5 under Surefire, Spotless, JMH) worked
on through the tools of Charm's terminal agent Crush, by a user who types short lowercase
orders with typos and an assistant who answers in clipped fragments.

Tools, argument names and result texts, as Crush declares them (charmbracelet/crush at
37f36e9, August 2026, `internal/agent/tools/*.go`; the system prompt is an excerpt of
`internal/agent/templates/coder.md.tpl`):

- `bash` {description, command, working_dir, run_in_background, auto_background_after}
  (`bash.go`; older releases under `internal/llm/tools/` took {command, timeout}): the
  output, then `\\n\\n<cwd>…</cwd>`; "no output" when a command printed nothing. A failed
  command's output is followed by its stderr, or the shell's `exit status N` when stderr is
  empty, and `Exit code N` (`formatOutput`). `run_in_background` answers "Background shell
  started with ID: 01A …" — ids are a three-digit hex counter over every shell started
  (`internal/shell/background.go`) — and `job_output` {shell_id, wait} answers
  `Status: completed` and the output (`job_output.go`).
- `view` {file_path, offset, limit} (`view.go`): `<file>`, each line as a six-wide number,
  `|` and the text (`addLineNumbers`), "(File has more lines. Use 'offset' parameter to read
  beyond line N)" when more follow, `</file>`.
- `edit` {file_path, old_string, new_string, replace_all} (`edit.go`): `<result>` "Content
  replaced in file: <path>" `</result>`; an empty `old_string` creates the file ("File
  created: <path>"). `multiedit` {file_path, edits: [{old_string, new_string}]}: "Applied N
  edits to file: <path>" (`multiedit.go`). `write` {file_path, content}: `<result>` "File
  successfully written: <path>" `</result>` (`write.go`). After an edit the language server's
  findings follow in `<file_diagnostics>` lines (`Warn: <path>:<line>:<col> [jdtls Java][code]
  (unnecessary) message`) and a `<diagnostic_summary>` (`diagnostics.go`,
  `formatDiagnostic`).
- `grep` {pattern, path, include, literal_text} (`grep.go`): "Found N matches", then each
  absolute path with a colon and `  Line N, Char M: text` lines. `glob` {pattern, path}
  (`glob.go`): absolute paths, shortest first. `ls` {path, ignore, depth} (`ls.go`): a tree,
  `- <root>/` and two-space-indented `- name` lines.
- `todos` {todos: [{content, status, active_form}]} (`todos.go`): the whole list each time,
  with pending / in_progress / completed only (any other status is refused), answering "Todo
  list updated successfully." and "Status: N pending, N in progress, N completed". A dropped
  item is left out of the next list: Crush has no cancelled state.

Crush has no delete, move or final-answer tool (nor `fetch`, `download`, `sourcegraph`, the
`lsp_*` tools or `question`, which this story has no use for): files go with `git rm` and
`git mv` through `bash`, and the session ends on the assistant's text. `mvn -q` prints
nothing when it succeeds, so a build that passes answers "no output".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, lower_camel

ROOT = "/home/dev/work/acme-relay"
PACKAGE = "com.acme.relay"
#: Test classes that always run beside the ones the story's failures live in.
OTHER_TEST_CLASSES = ("FrameCodecTest", "ReconnectPolicyTest", "ConfigBindingTest")
#: The assertion JUnit reports, per failing test method, and the line it sits on.
ASSERTIONS = {
    "retries": ("expected: <3> but was: <2>", 31),
    "ordersBatches": ("expected: <[1, 2, 3]> but was: <[1, 3, 2]>", 47),
    "handlesEmpty": ("expected: <0> but was: <1>", 62),
}
_MAVEN_FOOTER = (
    "[INFO] ------------------------------------------------------------------------\n"
    "[INFO] BUILD {verdict}\n"
    "[INFO] ------------------------------------------------------------------------\n"
    "[INFO] Total time:  {seconds} s\n"
    "[INFO] Finished at: 2026-11-27T10:{minute:02d}:41Z\n"
    "[INFO] ------------------------------------------------------------------------"
)
#: How the JMH run starts: long enough that Crush is asked to run it in the background.
JMH_RUN = "mvn -q -DskipTests package && java -jar target/benchmarks.jar"
#: The lines around the call the compiler rejects (line 88), as `view` shows lines 80-91.
FLUSH_WINDOW = (
    "    }",
    "",
    "    private void flushPending(Batch batch) {",
    "        if (batch.isEmpty()) {",
    "            return;",
    "        }",
    '        metrics.increment("relay.flushes");',
    '        log.debug("flushing {} frames", batch.size());',
    "        {call}",
    "    }",
    "",
    "    private void scheduleRetry(int attempt) {",
)
#: A story line (`throttle_limit = 4`, `outbox_send(batch)`) before it is Java.
_SNAKE = re.compile(r"[a-z]+(?:_[a-z]+)+")


def java_line(line: str) -> str:
    """A story line as the Java it stands for: `throttle_limit = settings.throttle_limit` →
    `private final int throttleLimit = settings.throttleLimit();`."""
    if not STORY_LINE.match(line):
        return line
    line = _SNAKE.sub(lambda m: lower_camel(m.group()), line)
    if " = " in line:
        name, value = line.split(" = ", 1)
        if value.startswith("settings."):
            value += "()"
        return f"    private final int {name} = {value};"
    return f"        {line};"


def _gerund(item: str) -> str:
    """`wire the throttle exporter …` → `Wiring the throttle exporter …` (`active_form`)."""
    verb, _, rest = item.partition(" ")
    stem = verb[:-1] if verb.endswith("e") else verb
    return f"{stem.title()}ing {rest}"


class CrushVoice(Voice):
    family = "crush-style"
    system_prompt = (
        "You are Crush, a powerful AI Assistant that runs in the CLI.\n\n<critical_rules>\n"
        "These rules override everything else. Follow them strictly:\n\n"
        "1. **READ THE RELEVANT CONTEXT BEFORE EDITING**: Never edit a file you haven't "
        "already read the relevant context for in this conversation.\n"
        "2. **BE AUTONOMOUS**: Don't ask questions - search, read, think, decide, act.\n"
        "3. **TEST AFTER CHANGES**: Run tests immediately after each modification.\n"
        "4. **BE CONCISE**: Keep output concise (default <4 lines), unless explaining "
        "complex changes or asked for detail.\n"
        "13. **TOOL CONSTRAINTS**: Only use documented tools. Never attempt 'apply_patch' or "
        "'apply_diff' - they don't exist. Use 'edit' or 'multiedit' instead.\n"
        "</critical_rules>\n\n<communication_style>\nKeep responses minimal:\n"
        "- Under 4 lines of text (tool use doesn't count)\n- No preamble\n- No postamble\n"
        "- One-word answers when possible\n- No emojis ever\n</communication_style>\n\n"
        f"<env>\nWorking directory: {ROOT}\nIs directory a git repo: yes\nPlatform: linux\n"
        "Today's date: 11/27/2026\n</env>\n\n<lsp>\nDiagnostics (lint/typecheck) included "
        "in tool output.\n- Fix issues in files you changed\n- Ignore issues in files you "
        "didn't touch (unless user asks)\n</lsp>"
    )
    src = "src/main/java/com/acme/relay"
    ext = "java"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "mvn -q exec:java -Dexec.mainClass=com.acme.relay.cli.Replay "
        "-Dexec.args='--stage {module} --dry-run'",
        "mvn -q spotless:apply -Dspotless.ratchetFrom=origin/main",
        "kubectl -n relay logs deploy/relay-{module} --since=2h | grep -c 'frame dropped'",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another in its row, so a stale value never hides in a later one.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("consumer poll timeout", "800 ms", "2500 ms", "1400 ms"),
        ("hikari pool size", "12 connections", "40 connections", "24 connections"),
        ("frame buffer", "64 KiB", "512 KiB", "256 KiB"),
        ("replay window", "15 min", "90 min", "45 min"),
        ("dead-letter retention", "3 days", "21 days", "10 days"),
        ("max in-flight frames", "128 frames", "1024 frames", "512 frames"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a ConcurrentLinkedQueue in the connector", "Chronicle Queue files on the pod volume",
         "an in-heap queue dies with the JVM on every redeploy",
         "a JDBC outbox table drained by a @Scheduled job",
         "that volume is ephemeral on our node pool, the files vanish with the pod"),
        ("Quartz jobs on a RAMJobStore", "an Artemis durable queue",
         "RAMJobStore forgets every trigger when the JVM stops",
         "a frames_pending table in MySQL with a sweeper thread",
         "Artemis paging fills the disk whenever a receiver is down for an hour"),
        ("an Infinispan replicated cache", "Caffeine with a write-behind file",
         "replication traffic doubles during a rolling restart",
         "jOOQ upserts into a relay_pending table",
         "write-behind loses its last batch on SIGKILL"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "{module} stops forwarding frames after a broker reconect. fix. {other} too, "
            "same listener",
            "frames pile up in {module} once the broker bounces and never drain. find why, "
            "fix it. check {other} aswell",
        ],
        "set_value": [
            "{key} {value} for now",
            "{value} for {key} to begin w/",
        ],
        "ack": ["Ack.", "Copy.", "Will comply."],
        "constraint": [
            "must: {rule}",
            "req - {rule}",
            "{rule}. platform team insists",
        ],
        "plan": [
            "{plan} for unsent frames; {module} replays them on reconnect.",
            "Unsent frames -> {plan}. {module} drains it after each reconnect.",
        ],
        "change_value": [
            "hm {old} is to low for {key}. can we do {new}?",
            "{key} -> {new}, {old} was a typo on my end",
            "{old} no good for {key}, ops wants {new}",
        ],
        "change_again": [
            "ugh. {key} {new} maybe? {old} still flakes on staging",
            "redo {key} pls -> {new}. {old} overloads the brokers",
            "{key} again, sry: {new}. {old} was ops' first guess",
        ],
        "ack_value": ["application.yml: {key} {new}.", "{key} {new}, in application.yml."],
        "reverse": [
            "Blocked: {why}. Frames go to {new} now.",
            "Reworked. {why}; frames ride on {new}.",
        ],
        "reverse_again": [
            "Same problem one layer down: {why}. Next stop: {new}.",
            "Second rework. {why}. Now {new}.",
        ],
        "question": [
            "which commit broke the reconnect? need the sha for the postmortem, dont lose it",
            "find the comit that broke draining. sha goes in the incident doc, keep it",
        ],
        "commit": ["build: bump jackson", "test: junit 5.11", "chore: spotless", "ci: m2 cache"],
        "answer": [
            "{sha}, listener swap to shared client.",
            "Regressed in {sha} (listener on the shared client).",
        ],
        "measure_question": [
            "whats the avg time per flush in jmh? keep the number, goes in the capacity sheet",
            "run the flush bench, tell me avg us/op. need it later for capacity planing",
        ],
        "measure_answer": [
            "JMH avgt: {figure} us/op per flush.",
            "{figure} us/op average, JMH, 10 iterations.",
        ],
        "last": [
            "Unfinished: {todo} (started), {test} (red). Rest done or off the list.",
            "{test} red, {todo} begun, halting there. Nothing else outstanding.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._shells = 0  # every shell Crush starts, foreground or not, takes the next id
        self._edits = 0
        self._creates = 0
        self._viewed: set[str] = set()

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.java"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{camel(module)}Test.{lower_camel(name.removeprefix(f'test_{module}_'))}"

    @staticmethod
    def _abs(path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- bash ---------------------------------------------------------------------------

    @staticmethod
    def _describe(command: str) -> str:
        """The short `description` Crush's bash tool asks for (under 30 characters)."""
        for start, text in (
            ("mvn -q compile", "Compile main sources"),
            ("mvn test", "Run unit tests"),
            ("mvn -q exec:java", "Dry-run frame replay"),
            ("mvn -q spotless", "Format changed files"),
            ("kubectl", "Count dropped frames"),
            ("git log", "History of the file"),
            ("git ls-files", "Find legacy sources"),
            ("git rm", "Remove legacy class"),
            ("git mv", "Move test fixture"),
            ("tail", "Recent log lines"),
            (JMH_RUN, "Build and run JMH"),
        ):
            if command.startswith(start):
                return text
        return "Run command"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command.startswith(JMH_RUN):
            self._background(command, output)
            return
        self._shells += 1
        arguments: dict[str, object] = {"description": self._describe(command), "command": command}
        if exit_code:
            # Maven prints its errors on stdout: stderr is empty, so the shell's own error
            # text stands in for it before Crush's exit-code line.
            result = f"{output}\nexit status {exit_code}\nExit code {exit_code}"
        else:
            result = output
        result = f"{result}\n\n<cwd>{ROOT}</cwd>" if result else "no output"
        self.s.call("bash", arguments, result, filler=filler)

    def _background(self, command: str, output: str) -> None:
        """A long run started in the background, then waited for with `job_output`."""
        self._shells += 1
        shell_id = f"{self._shells:03X}"
        arguments = {
            "description": self._describe(command),
            "command": command,
            "run_in_background": True,
        }
        started = (
            f"Background shell started with ID: {shell_id}\n\nUse job_output tool to view "
            "output or job_kill to terminate."
        )
        self.s.call("bash", arguments, started)
        self.s.call(
            "job_output", {"shell_id": shell_id, "wait": True}, f"Status: completed\n\n{output}"
        )

    # --- files --------------------------------------------------------------------------

    @staticmethod
    def _numbered(lines: Sequence[str], first: int) -> str:
        return "\n".join(f"{n:>6}|{line}" for n, line in enumerate(lines, first))

    def _view(
        self, path: str, part: Sequence[str], *, offset: int = 0, more: bool = False,
        filler: bool = False,
    ) -> None:  # fmt: skip
        """`view` of `part`, the file's lines from `offset` on (0-based, as Crush counts)."""
        arguments: dict[str, object] = {"file_path": self._abs(path)}
        if offset or more:
            arguments |= {"offset": offset, "limit": len(part)}
        text = "<file>\n" + self._numbered(part, offset + 1)
        if more:
            text += (
                "\n\n(File has more lines. Use 'offset' parameter to read beyond line "
                f"{offset + len(part)})"
            )
        self._viewed.add(path)
        self.s.call("view", arguments, text + "\n</file>\n", filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = [java_line(line) for line in content.split("\n")]
        if filler and self.rng.random() < 0.3:
            # A slice, as Crush's prompt asks for: `offset` and `limit`.
            offset = self.rng.randint(10, max(10, len(lines) // 3))
            end = min(len(lines), offset + self.rng.randint(25, 50))
            self._view(path, lines[offset:end], offset=offset, more=end < len(lines),
                       filler=True)  # fmt: skip
            return
        self._view(path, lines, filler=filler)

    def _diagnostics(self, path: str) -> str:
        """What jdtls reports after the first edit; later edits leave the file clean."""
        if self._edits != 1:
            return ""
        line, column = self.rng.randint(20, 60), self.rng.randint(9, 21)
        finding = (
            f"Warn: {self._abs(path)}:{line}:{column} [jdtls Java][536870973] (unnecessary) "
            "The value of the local variable attempt is not used"
        )
        return (
            f"\n<file_diagnostics>\n{finding}\n</file_diagnostics>\n\n<diagnostic_summary>\n"
            "Current file: 0 errors, 1 warnings\nProject: 0 errors, 0 warnings\n"
            "</diagnostic_summary>\n"
        )

    def edit(self, path: str, old: str, new: str) -> None:
        self._edits += 1
        full = self._abs(path)
        old_java, new_java = java_line(old).strip(), java_line(new).strip()
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_call(path, old_java, new_java)
            return
        arguments = {"file_path": full, "old_string": old_java, "new_string": new_java}
        result = f"<result>\nContent replaced in file: {full}\n</result>\n"
        self.s.call("edit", arguments, result + self._diagnostics(path))

    def _fix_call(self, path: str, old: str, new: str) -> None:
        """The build fix: view the lines the compiler named (Crush refuses an edit to a file
        not read), then change the call and the method that makes it in one `multiedit`."""
        signature = FLUSH_WINDOW[2]
        widened = "    private void flushPending(Batch batch, String tenantId) {"
        if path not in self._viewed:
            window = [line.replace("{call}", old) for line in FLUSH_WINDOW]
            self._view(path, window, offset=79, more=True)
        edits = [
            {"old_string": signature.strip(), "new_string": widened.strip()},
            {"old_string": old, "new_string": new},
        ]
        full = self._abs(path)
        result = f"<result>\nApplied {len(edits)} edits to file: {full}\n</result>\n"
        self.s.call("multiedit", {"file_path": full, "edits": edits}, result)

    def create(self, path: str, content: str) -> None:
        full = self._abs(path)
        name = path.rsplit("/", 1)[-1].removesuffix(".java")
        body = f"package {PACKAGE};\n\npublic final class {name} {{\n{content}\n}}\n"
        self._creates += 1
        if self._creates == 1:
            arguments = {"file_path": full, "content": body}
            written = f"<result>\nFile successfully written: {full}\n</result>"
            self.s.call("write", arguments, written)
            return
        # An edit with an empty old_string creates the file, as Crush's edit tool allows.
        arguments = {"file_path": full, "old_string": "", "new_string": body}
        self.s.call("edit", arguments, f"<result>\nFile created: {full}\n</result>\n")

    def delete(self, path: str) -> None:
        self.shell(f"git rm -q {path}", "")

    def move(self, source: str, destination: str) -> None:
        # Java keeps test fixtures under src/test/resources.
        source = source.replace("testdata/", "src/test/resources/", 1)
        destination = destination.replace("testdata/", "src/test/resources/", 1)
        self.shell(f"git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        grouped: dict[str, list[str]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            text = text.strip()
            char = text.find(pattern) + 1 or 1
            grouped.setdefault(self._abs(path), []).append(f"  Line {line}, Char {char}: {text}")
        blocks = [f"{path}:\n" + "\n".join(lines) for path, lines in grouped.items()]
        arguments = {"pattern": pattern, "path": self._abs(root), "include": "*.java"}
        text = f"Found {len(hits)} matches\n" + "\n\n".join(blocks)
        self.s.call("grep", arguments, text, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = sorted(set(paths))
        if self.rng.random() < 0.5:
            tree = "\n".join(f"  - {p.rsplit('/', 1)[-1]}" for p in unique)
            arguments = {"path": self._abs(root), "ignore": ["target/"]}
            self.s.call("ls", arguments, f"\n- {self._abs(root)}/\n{tree}\n", filler=filler)
            return
        found = sorted((self._abs(p) for p in unique), key=len)
        arguments = {"pattern": "**/*.java", "path": self._abs(root)}
        self.s.call("glob", arguments, "\n".join(found), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        # Crush's list knows no cancelled state: a dropped item is left out.
        kept = [(text, status) for text, status in items if status != "cancelled"]
        todos = [
            {"content": text, "status": status, "active_form": _gerund(text)}
            for text, status in kept
        ]
        count = {s: sum(status == s for _, status in kept) for s in ("pending", "in_progress")}
        done = sum(status == "completed" for _, status in kept)
        result = (
            "Todo list updated successfully.\n\n"
            f"Status: {count['pending']} pending, {count['in_progress']} in progress, "
            f"{done} completed\nTodos have been modified successfully. Ensure that you continue "
            "to use the todo list to track your progress. Please proceed with the current tasks "
            "if applicable."
        )
        self.s.call("todos", {"todos": todos}, result)

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        return [
            "replay: dry run, 0 of 52 buffered frames would be re-sent",
            "",
            "17",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        name = camel(module)
        method = f"{lower_camel(module)}Send"
        probe = f"method {method} in class {PACKAGE}.{name} cannot be applied to given types"
        where = f"{ROOT}/{self.src}/{name}.java:[88,9]"
        detail = (
            f"  required: {PACKAGE}.Batch,java.lang.String\n  found:    {PACKAGE}.Batch\n"
            "  reason: actual and formal argument lists differ in length"
        )
        output = (
            "[ERROR] COMPILATION ERROR : \n"
            f"[ERROR] {where} {probe};\n{detail}\n"
            "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:"
            "3.13.0:compile (default-compile) on project relay: Compilation failure\n"
            f"[ERROR] {where} {probe};\n"
            + "\n".join(f"[ERROR] {line}" for line in detail.split("\n"))
            + "\n[ERROR] \n[ERROR] -> [Help 1]\n[ERROR] \n"
            "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
            "[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n"
            "[ERROR] \n[ERROR] For more information about the errors and possible solutions, "
            "please read the following articles:\n[ERROR] [Help 1] http://cwiki.apache.org/"
            "confluence/display/MAVEN/MojoFailureException"
        )
        return output, probe, "mvn -q compile"

    def build_ok(self) -> str:
        return ""  # `mvn -q` says nothing when the build passes

    def measurement(self, figure: str) -> tuple[str, str]:
        score = float(figure)
        error = round(score * 0.024, 2)
        low, high = round(score - error, 2), round(score + error, 2)
        output = (
            "# JMH version: 1.37\n# VM version: JDK 21.0.5, OpenJDK 64-Bit Server VM, "
            "21.0.5+11-LTS\n# Warmup: 3 iterations, 10 s each\n"
            "# Measurement: 10 iterations, 10 s each\n# Timeout: 10 min per iteration\n"
            "# Threads: 1 thread, will synchronize iterations\n"
            "# Benchmark mode: Average time, time/op\n"
            f"# Benchmark: {PACKAGE}.bench.FlushBench.flushBatch\n\n"
            f'Result "{PACKAGE}.bench.FlushBench.flushBatch":\n'
            f"  {figure} ±(99.9%) {error:.2f} us/op [Average]\n"
            f"  (min, avg, max) = ({low:.2f}, {figure}, {high:.2f}), stdev = "
            f"{error / 1.6:.2f}\n  CI (99.9%): [{low:.2f}, {high:.2f}] (assumes normal "
            "distribution)\n\n# Run complete. Total time: 00:02:13\n\n"
            "Benchmark              Mode  Cnt    Score   Error  Units\n"
            f"FlushBench.flushBatch  avgt   10  {figure} ± {error:.2f}  us/op"
        )
        command = f"{JMH_RUN} FlushBench -f 1 -wi 3 -i 10"
        return output, command

    def test_command(self) -> str:
        return "mvn test"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"Tests run: {failed + passed}, Failures: {failed}, Errors: 0, Skipped: 0"

    def _per_class(self, failing: Sequence[str], total: int) -> list[tuple[str, int, list[str]]]:
        """(test class, tests run, failing methods) for each class Surefire runs."""
        failures: dict[str, list[str]] = {}
        for test in failing:
            cls, method = test.split(".")
            failures.setdefault(cls, []).append(method)
        classes = [*failures, *OTHER_TEST_CLASSES]
        runs = [len(failures.get(c, [])) + 1 for c in classes]
        for _ in range(total - sum(runs)):
            runs[self.rng.randrange(len(runs))] += 1
        return [(c, n, failures.get(c, [])) for c, n in zip(classes, runs, strict=True)]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = [
            "[INFO] Scanning for projects...",
            "[INFO] ",
            "[INFO] --------------------------< com.acme:relay >---------------------------",
            "[INFO] Building relay 1.4.0-SNAPSHOT",
            "[INFO]   from pom.xml",
            "[INFO] --------------------------------[ jar ]---------------------------------",
            "[INFO] ",
            "[INFO] --- surefire:3.2.5:test (default-test) @ relay ---",
            "[INFO] Using auto detected provider "
            "org.apache.maven.surefire.junitplatform.JUnitPlatformProvider",
            "[INFO] ",
            "[INFO] -------------------------------------------------------",
            "[INFO]  T E S T S",
            "[INFO] -------------------------------------------------------",
        ]
        summary = []
        for cls, run, methods in self._per_class(failing, failed + passed):
            fqcn = f"{PACKAGE}.{cls}"
            elapsed = f"{self.rng.randint(40, 900) / 1000:.3f}"
            lines.append(f"[INFO] Running {fqcn}")
            counts = f"Tests run: {run}, Failures: {len(methods)}, Errors: 0, Skipped: 0"
            if not methods:
                lines.append(f"[INFO] {counts}, Time elapsed: {elapsed} s -- in {fqcn}")
                continue
            lines.append(f"[ERROR] {counts}, Time elapsed: {elapsed} s <<< FAILURE! -- in {fqcn}")
            for method in methods:
                message, line = ASSERTIONS[method]
                lines += [
                    f"[ERROR] {fqcn}.{method} -- Time elapsed: 0.0{self.rng.randint(10, 99)} s "
                    "<<< FAILURE!",
                    f"org.opentest4j.AssertionFailedError: {message}",
                    "\tat org.junit.jupiter.api.AssertionFailureBuilder.build("
                    "AssertionFailureBuilder.java:151)",
                    "\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)",
                    "\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:563)",
                    f"\tat {fqcn}.{method}({cls}.java:{line})",
                    "",
                ]
                summary.append(f"[ERROR]   {cls}.{method}:{line} {message}")
        lines += ["[INFO] ", "[INFO] Results:", "[INFO] ", "[ERROR] Failures: ", *summary]
        lines += ["[INFO] ", f"[ERROR] {self.test_counts(failed, passed)}", "[INFO] "]
        footer = _MAVEN_FOOTER.format(verdict="FAILURE", seconds="7.412", minute=len(failing))
        lines += [
            footer,
            "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:"
            "3.2.5:test (default-test) on project relay: There are test failures.",
            "[ERROR] ",
            f"[ERROR] Please refer to {ROOT}/target/surefire-reports for the individual test "
            "results.",
        ]
        return "\n".join(lines)
