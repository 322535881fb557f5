"""A Goose-style family, telling the story's second-thoughts variant: a Kotlin service built
with Gradle, worked on through Goose's developer extension, its to-do tool and one MCP
extension, by a user and an assistant who change their minds in words no other family uses.

Tools and argument shapes, as Block's Goose declares them (block/goose):

- Tools of an extension are named `extension__tool` (`developer__shell`,
  `developer__text_editor`, an MCP server's `git__git_log`).
- `developer__shell` {command} (`crates/goose-mcp/src/developer/shell.rs`): "the output and
  error concatenated into a single string, as you would see from running on the command
  line" — no exit-status footer; a failure shows only in what the command printed.
- `developer__text_editor` {command: view | write | str_replace | undo_edit, path,
  file_text, old_str, new_str} (`developer/text_editor.rs`): `view` gives the model the
  file's text (a directory: "'<path>' is a directory. Contents:" with `Files:` lines);
  `write` answers "Successfully wrote to <path>"; `str_replace` answers "The file <path>
  has been edited, and the section now reads:" with the snippet in a fenced block and
  "Review the changes above for errors. Undo and edit the file again if necessary!";
  `undo_edit` answers "Undid the last edit".
- `todo__write` {content} (`crates/goose/src/agents/todo_tools.rs`): the whole TODO file,
  free text, replaced on each call; here a Markdown checklist as its users keep one. Its
  confirmation text was not in the stored sources; `Updated (N chars)` stands for it.
- The MCP git server (modelcontextprotocol/servers `src/git/src/mcp_server_git/server.py`):
  `git_log` {repo_path, max_count} answering "Commit history:" and `Commit: '<sha>'` /
  `Author:` / `Date:` / `Message:` blocks, called through Goose as `git__git_log`.

Goose has no delete, move or search tool: files go with `rm` and `git mv`, searches with
`rg`, through the shell; and no final-answer tool: the session ends on the assistant's text.
Builds and tests run under Gradle (Kotlin compiler `e: file:///…:line:col message` lines,
JUnit's `Class > method() FAILED`, "N tests completed, M failed", `BUILD FAILED in 14s`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, camel, hexid, lower_camel

ROOT = "/Users/dev/code/tollgate"


class GooseVoice(Voice):
    family = "goose-style"
    system_prompt = (
        "You are a general-purpose AI agent called goose, created by Block. goose is being "
        "developed as an open-source software project.\n\n# Extensions\n\n## developer\n"
        "Use developer__shell to run commands and developer__text_editor to view and edit "
        "files. Keep the task list in the TODO file with todo__write.\n\n## git\nRead the "
        f"repository history with git__git_log.\n\nThe current working directory is {ROOT}."
    )
    src = "src/main/kotlin"
    ext = "kt"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "./gradlew run --args='replay --module {module} --dry-run'",
        "./gradlew ktlintCheck -PktlintFiles=src/main/kotlin/{module}.kt",
        "./gradlew :bench:jmh -Pjmh.includes={module}",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("shard count", "8 shards", "16 shards", "12 shards"),
        ("retry budget", "4 retries", "2 retries", "3 retries"),
        ("connection pool", "20 connections", "50 connections", "35 connections"),
        ("batch window", "250 ms", "80 ms", "120 ms"),
        ("quota cache", "512 entries", "4096 entries", "2048 entries"),
        ("heartbeat period", "5 seconds", "20 seconds", "9 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a Caffeine cache per pod", "a Hazelcast cluster map",
         "each pod would count quota on its own and let bursts through",
         "Redis counters behind a Lua script",
         "our Hazelcast licence stops the cluster at three members"),
        ("Spring Retry annotations", "a resilience4j retry decorator",
         "the annotations never fire on the coroutine call paths",
         "the HttpRequestRetry plugin of Ktor's client",
         "resilience4j pulls in a second metrics registry"),
        ("a Kafka Streams topology", "a Flink job",
         "the topology cannot be repartitioned without downtime",
         "plain consumer groups with a Postgres checkpoint table",
         "nobody on the team can run a Flink cluster"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "tollgate lets requests through over quota whenever {module} reloads its limits. "
            "Can you get to the bottom of it? {other} reads the same limits table, so it "
            "probably needs the same treatment.",
            "Over-quota requests slip past {module} during a limits reload. Please hunt this "
            "down and fix it, and look at {other} while you're there since it shares the "
            "limits table.",
        ],
        "set_value": [
            "We'll go with a {key} of {value} for a start.",
            "Put the {key} at {value} for now.",
        ],
        "ack": [
            "Right, that's in.",
            "Okay, I'll build on that.",
            "Makes sense, on it.",
        ],
        "constraint": [
            "Something to respect throughout: {rule}.",
            "Non-negotiable: {rule}.",
            "Bear in mind: {rule}.",
        ],
        "plan": [
            "Going forward we'll rely on {plan} for the quota counters; {module} reads from it.",
            "My pick for the counters is {plan}, and {module} will read through it.",
        ],
        "change_value": [
            "Take the {key} to {new}, {old} isn't right for us.",
            "Let's have {new} rather than {old} for the {key}.",
            "Rethinking the {key}: {new} in place of {old}.",
        ],
        "change_again": [
            "Settle the {key} at {new}; {old} overshoots.",
            "Meet in the middle on the {key}: {new} instead of {old}.",
            "Last word on the {key}: go to {new} from {old}.",
        ],
        "ack_value": ["Set: the {key} is {new}.", "Got it, {key} now at {new}."],
        "reverse": [
            "{old} turned out to be a dead end, so {new} it is: {why}.",
            "Reconsidering: {new} beats {old} here because {why}.",
        ],
        "reverse_again": [
            "{old} is off the table as well, {why}; {new} from now on.",
            "Back to the drawing board on {old}: {why}, so we switch to {new}.",
        ],
        "question": [
            "When did the over-quota leak start? Find the commit and keep the hash around, "
            "I'm filing it with the incident.",
            "Dig out the commit that introduced the quota leak. I'll want that hash for the "
            "incident ticket later.",
        ],
        "commit": ["build: bump kotlin", "chore: gradle wrapper", "docs: kdoc pass", "test: flake"],
        "answer": [
            "The leak traces back to {sha}.",
            "Culprit commit: {sha}, it reloads the limits without the lock.",
        ],
        "measure_question": [
            "What p99 did the wrk run against staging give? Hang on to the number, it goes "
            "into the SLO review.",
            "Check the p99 from the staging wrk run and keep it, I need it for the SLO review.",
        ],
        "measure_answer": [
            "The staging run's p99 latency was {figure} ms.",
            "wrk reports {figure} ms at p99 on staging.",
        ],
        "last": [
            "Status check: {todo} is underway and {test} is still failing. Everything else "
            "on the list is finished or dropped.",
            "Leaving it here: {test} remains red while {todo} is underway. The other items "
            "are finished or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._edits = 0

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        method = lower_camel(name.removeprefix(f"test_{module}_"))
        return f"{camel(module)}Test > {method}()"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # Goose's shell reports no exit status: `exit_code` shows only in what was printed.
        if command.startswith("git log"):
            self._git_log(output)
            return
        self.s.call("developer__shell", {"command": command}, output, filler=filler)

    def _git_log(self, oneline: str) -> None:
        """`git log --oneline` lines, asked of the MCP git server instead."""
        blocks = []
        for n, line in enumerate(oneline.split("\n")):
            sha, message = line.split(" ", 1)
            blocks.append(
                f"Commit: '{sha}{hexid(self.rng, 33)}'\n"
                f'Author: <git.Actor "{self.pick(["Priya Nair", "Jonas Weber"])} '
                '<dev@tollgate.example>">\n'
                f"Date: 2026-11-{27 - n:02d} 1{n}:4{n}:07+01:00\n"
                f"Message: '{message}\\n'\n"
            )
        arguments = {"repo_path": ROOT, "max_count": len(blocks)}
        self.s.call("git__git_log", arguments, "Commit history:\n" + "\n".join(blocks))

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        arguments = {"command": "view", "path": f"{ROOT}/{path}"}
        self.s.call("developer__text_editor", arguments, content, filler=filler)

    def _replace(self, full: str, old: str, new: str) -> None:
        arguments = {"command": "str_replace", "path": full, "old_str": old, "new_str": new}
        result = (
            f"The file {full} has been edited, and the section now reads:\n```kotlin\n{new}\n"
            "```\nReview the changes above for errors. Undo and edit the file again if "
            "necessary!"
        )
        self.s.call("developer__text_editor", arguments, result)

    def edit(self, path: str, old: str, new: str) -> None:
        self._edits += 1
        full = f"{ROOT}/{path}"
        if self._edits == 3:
            # A first try that named the wrong object, taken back with `undo_edit`.
            self._replace(full, old, new.replace("settings.", "config."))
            self.s.call(
                "developer__text_editor",
                {"command": "undo_edit", "path": full},
                "Undid the last edit",
                text="Wrong object there, undoing that replacement.",
            )
        self._replace(full, old, new)

    def create(self, path: str, content: str) -> None:
        full = f"{ROOT}/{path}"
        arguments = {"command": "write", "path": full, "file_text": content}
        self.s.call("developer__text_editor", arguments, f"Successfully wrote to {full}")

    def move(self, source: str, destination: str) -> None:
        self.shell(f"git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        self.shell(f"rg -n {pattern} {root}", "\n".join(hits), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted({p.rsplit("/", 1)[-1] for p in paths})
        text = f"'{ROOT}/{root}' is a directory. Contents:\n\nFiles:\n" + "".join(
            f"  {name}\n" for name in names
        )
        arguments = {"command": "view", "path": f"{ROOT}/{root}"}
        self.s.call("developer__text_editor", arguments, text, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        lines = ["# tollgate quota leak", ""]
        for text, status in items:
            lines.append(
                {
                    "completed": f"- [x] {text}",
                    "in_progress": f"- [ ] {text} (in progress)",
                    "pending": f"- [ ] {text}",
                    "cancelled": f"- [ ] ~~{text}~~ (cancelled)",
                }[status]
            )
        content = "\n".join(lines) + "\n"
        self.s.call("todo__write", {"content": content}, f"Updated ({len(content)} chars)")

    def command_output(self, k: int) -> str:
        return [
            "> Task :run\nreplayed 0 of 52 quota events (dry run)\n\nBUILD SUCCESSFUL in 6s",
            "> Task :ktlintMainSourceSetCheck\n\nBUILD SUCCESSFUL in 3s",
            "Benchmark               Mode  Cnt      Score     Error  Units\n"
            "QuotaBench.throughput  thrpt    5  48211.305 ± 912.442  ops/s",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = "No value passed for parameter 'tenantId'."
        line = (
            "> Task :compileKotlin FAILED\n"
            f"e: file://{ROOT}/{self.src}/{module}.kt:88:14 {probe}\n\n"
            "FAILURE: Build failed with an exception.\n\n* What went wrong:\n"
            "Execution failed for task ':compileKotlin'.\n"
            "> Compilation error. See log for more details\n\nBUILD FAILED in 7s"
        )
        return line, probe, "./gradlew compileKotlin"

    def build_ok(self) -> str:
        return "> Task :compileKotlin\n\nBUILD SUCCESSFUL in 9s\n1 actionable task: 1 executed"

    def measurement(self, figure: str) -> tuple[str, str]:
        line = (
            "Running 30s test @ https://staging.tollgate.example/v1/quota\n"
            "  4 threads and 64 connections\n"
            "  Latency Distribution\n"
            "     50%   88.12ms\n     75%  141.77ms\n     90%  236.05ms\n"
            f"     99%  {figure}ms\n"
            "  48211 requests in 30.02s, 11.73MB read"
        )
        return line, "wrk -t4 -c64 -d30s --latency https://staging.tollgate.example/v1/quota"

    def test_command(self) -> str:
        return "./gradlew test"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} tests completed, {failed} failed"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = ["> Task :compileTestKotlin UP-TO-DATE", "> Task :test", ""]
        for t in failing:
            test_class = t.split(" ", 1)[0]
            where = f"    org.opentest4j.AssertionFailedError at {test_class}.kt:41"
            lines += [f"{t} FAILED", where, ""]
        lines += [
            self.test_counts(failed, passed),
            "",
            "> Task :test FAILED",
            "",
            "FAILURE: Build failed with an exception.",
            "",
            "* What went wrong:",
            "Execution failed for task ':test'.",
            f"> There were failing tests. See the report at: file://{ROOT}/build/reports/tests/"
            "test/index.html",
            "",
            "BUILD FAILED in 14s",
            "4 actionable tasks: 2 executed, 2 up-to-date",
        ]
        return "\n".join(lines)
