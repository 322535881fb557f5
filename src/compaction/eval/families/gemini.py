"""A Gemini-CLI-style family, telling the story's second-thoughts variant: a Go service
worked on through Gemini CLI's own tools and two MCP filesystem tools, by a user and an
assistant who reverse, revise and restate things in words no other family uses.

Tools and argument shapes, as Gemini CLI declares them (google-gemini/gemini-cli,
`packages/core/src/tools/`, mid-2025 releases; `docs/tools/shell.md`, `file-system.md`):

- `run_shell_command` {command, description, directory}; its result is the
  `Command: / Directory: / Output: / Error: / Exit Code: / Signal: / Background PIDs: /
  Process Group PGID:` block of `shell.ts`.
- `read_file` {absolute_path} (`read-file.ts` of those releases; later ones call it
  `file_path`), the file's text as the result; `read_many_files` {paths}, each file under
  a `--- <path> ---` header and a closing `--- End of content ---`.
- `write_file` {file_path, content}: "Successfully created and wrote to new file: …".
- `replace` {file_path, old_string, new_string}: "Successfully modified file: … (1
  replacements)." (`edit.ts`).
- `glob` {pattern}: "Found N file(s) matching … sorted by modification time (newest
  first):"; `search_file_content` {pattern, path, include}: "Found N matches for pattern …",
  `File:` and `L<n>:` lines (`grep.ts`; later releases rename it `grep_search`).
- `write_todos` {todos: [{description, status}]} with pending / in_progress / completed /
  cancelled: "Successfully updated the todo list. The current list is now:" and
  `<n>. [<status>] <description>` lines (`write-todos.ts`).
- MCP filesystem server (modelcontextprotocol/servers `src/filesystem/README.md`):
  `edit_file` {path, edits: [{oldText, newText}], dryRun} answering with a git-style diff,
  `move_file` {source, destination}. Gemini CLI registers an MCP tool under its own name
  unless a built-in already has it (then `server__tool`), so these two keep theirs.

Gemini CLI has no delete tool and no final-answer tool: files go with `git rm` through the
shell, and the session ends on the assistant's plain text. Tests run under gotestsum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, camel

ROOT = "/home/dev/relaybox"


class GeminiVoice(Voice):
    family = "gemini-style"
    system_prompt = (
        "You are a command-line agent for software engineering work. Help the user safely "
        "and efficiently with the tools available to you: read before you change, run the "
        "project's own checks, and keep the todo list current with write_todos. Project "
        "root: /home/dev/relaybox"
    )
    src = "internal"
    ext = "go"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "go run ./cmd/relayctl drain --module {module} --dry-run",
        "golangci-lint run --fix internal/{module}.go",
        "buf generate --template buf.gen.{module}.yaml",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("request timeout", "30 seconds", "45 seconds", "40 seconds"),
        ("worker pool", "4 workers", "8 workers", "6 workers"),
        ("producer linger", "200 ms", "500 ms", "350 ms"),
        ("log retention", "7 days", "30 days", "14 days"),
        ("queue depth", "64 slots", "256 slots", "128 slots"),
        ("ack deadline", "10 seconds", "60 seconds", "25 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a Kafka compacted topic", "a Postgres outbox table",
         "the cluster has no Kafka and adding one is out of scope",
         "a per-node SQLite journal",
         "the shared Postgres would make the outbox contend with billing"),
        ("an in-memory retry ring", "a Redis sorted set",
         "a restart would lose every pending redelivery",
         "a NATS JetStream stream",
         "the Redis instance is evicting keys under memory pressure"),
        ("client-side idempotency keys", "broker-side deduplication",
         "three of the producers are third-party and cannot send keys",
         "a dedupe table keyed by message digest",
         "the broker only deduplicates inside a two-minute window"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "The relay's {module} stage re-sends messages after a broker failover. Figure out "
            "what's going on and fix it; {other} goes through the same ack path, so check it "
            "too.",
            "Messages get delivered twice by {module} whenever the broker fails over. Can you "
            "dig in and sort it out? Keep an eye on {other}, it shares the ack handling.",
        ],
        "set_value": [
            "Start the {key} at {value}.",
            "Let's run with a {key} of {value} to begin with.",
        ],
        "ack": [
            "Noted, I'll work with that.",
            "Okay, carrying that forward.",
            "Sounds good, I'll factor that in.",
        ],
        "constraint": ["Heads up: {rule}.", "A hard rule here: {rule}.", "Don't forget: {rule}."],
        "plan": [
            "First idea: route the unacked messages through {plan} and have {module} replay "
            "them from there.",
            "I'm thinking {plan} for the unacked messages, with {module} replaying out of it.",
        ],
        "change_value": [
            "Bump the {key} to {new}; {old} is too tight.",
            "Use {new}, not {old}, for the {key}.",
            "Switch the {key} over to {new} and forget {old}.",
        ],
        "change_again": [
            "One more tweak to the {key}: {new} rather than {old}.",
            "Scratch that, make the {key} {new}; {old} was overkill.",
            "Final answer on the {key}: {new}, not {old}.",
        ],
        "ack_value": ["Done: {key} = {new}.", "Okay, the {key} is {new} from here on."],
        "reverse": [
            "Actually {old} won't work because {why}; going with {new}.",
            "Let's not go with {old} after all: {new} is simpler, since {why}.",
        ],
        "reverse_again": [
            "Change of plan: {new} instead of {old}, because {why}.",
            "Dropping the idea of {old}; we will use {new} instead, since {why}.",
        ],
        "question": [
            "Which commit broke the failover handling? Hold on to the hash, it goes in the "
            "incident report.",
            "Track down the commit where the failover re-sends started, and keep its hash "
            "handy for the postmortem.",
        ],
        "commit": ["ci: cache go mod", "deps: bump grpc", "docs: fix link", "refactor: split cfg"],
        "answer": [
            "Found it: {sha} is where the failover re-sends began.",
            "{sha}, the commit that moved the ack onto the shared broker client.",
        ],
        "measure_question": [
            "What p95 did the staging soak end on? Write it down, I need it for the capacity "
            "review.",
            "Can you pull the p95 from the last soak run? Keep the figure, it goes in the "
            "capacity review.",
        ],
        "measure_answer": [
            "The soak ended at a p95 of {figure} ms.",
            "p95 came out at {figure} ms on the staging soak.",
        ],
        "last": [
            "Wrapping up for now: {test} is still red and {todo} is in progress; the rest of "
            "the list is checked off or dropped.",
            "Where things stand: {todo} is in progress, {test} still fails, and every other "
            "item is done or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._edits = 0

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{cls.src}/{module}.{camel(name)}"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        arguments = {"command": command, "description": self._describe(command)}
        if command.startswith("gotestsum"):
            arguments["directory"] = "."
        result = "\n".join(
            [
                f"Command: {command}",
                f"Directory: {arguments.get('directory', '(root)')}",
                f"Output: {output or '(empty)'}",
                "Error: (none)",
                f"Exit Code: {exit_code}",
                "Signal: (none)",
                "Background PIDs: (none)",
                f"Process Group PGID: {self.rng.randint(20000, 90000)}",
            ]
        )
        self.s.call("run_shell_command", arguments, result, filler=filler)

    def _describe(self, command: str) -> str:
        if command.startswith("git rm"):
            return "Remove the file from the repository."
        verb = command.split(None, 1)[0]
        return {
            "tail": "Look at the most recent log lines.",
            "git": "Inspect the repository.",
            "gotestsum": "Run the test suite.",
            "go": "Build or run the Go code.",
        }.get(verb, "Run the project command.")

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        if filler and self.rng.random() < 0.3:
            text = f"--- {ROOT}/{path} ---\n\n{content}\n\n\n--- End of content ---"
            self.s.call("read_many_files", {"paths": [path]}, text, filler=filler)
            return
        self.s.call("read_file", {"absolute_path": f"{ROOT}/{path}"}, content, filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        # Every other edit goes through the MCP filesystem server's `edit_file`.
        self._edits += 1
        full = f"{ROOT}/{path}"
        if self._edits % 2 == 0:
            diff = (
                f"```diff\nIndex: {full}\n{'=' * 67}\n--- {full}\toriginal\n"
                f"+++ {full}\tmodified\n@@ -41,1 +41,1 @@\n-{old}\n+{new}\n```\n"
            )
            arguments = {"path": full, "edits": [{"oldText": old, "newText": new}], "dryRun": False}
            self.s.call("edit_file", arguments, diff)
            return
        self.s.call(
            "replace",
            {"file_path": full, "old_string": old, "new_string": new},
            f"Successfully modified file: {full} (1 replacements).",
        )

    def create(self, path: str, content: str) -> None:
        full = f"{ROOT}/{path}"
        self.s.call(
            "write_file",
            {"file_path": full, "content": content},
            f"Successfully created and wrote to new file: {full}.",
        )

    def delete(self, path: str) -> None:
        self.shell(f"git rm -q {path}", "")

    def move(self, source: str, destination: str) -> None:
        self.s.call(
            "move_file",
            {"source": f"{ROOT}/{source}", "destination": f"{ROOT}/{destination}"},
            f"Successfully moved {ROOT}/{source} to {ROOT}/{destination}",
        )

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        lines = [f'Found {len(hits)} matches for pattern "{pattern}" in path "{root}" '
                 '(filter: "*.go"):']  # fmt: skip
        for hit in hits:
            path, line, text = hit.split(":", 2)
            lines += ["---", f"File: {path}", f"L{line}:{text}"]
        lines.append("---")
        arguments = {"pattern": pattern, "path": f"{ROOT}/{root}", "include": "*.go"}
        self.s.call("search_file_content", arguments, "\n".join(lines), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        pattern = f"{root}/**/*.{self.ext}"
        found = "\n".join(f"{ROOT}/{p}" for p in dict.fromkeys(paths))
        text = (
            f'Found {len(dict.fromkeys(paths))} file(s) matching "{pattern}" within {ROOT}, '
            f"sorted by modification time (newest first):\n{found}"
        )
        self.s.call("glob", {"pattern": pattern}, text, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        todos = [{"description": text, "status": status} for text, status in items]
        listed = "\n".join(f"{n}. [{status}] {text}" for n, (text, status) in enumerate(items, 1))
        self.s.call(
            "write_todos",
            {"todos": todos},
            f"Successfully updated the todo list. The current list is now:\n{listed}",
        )

    def command_output(self, k: int) -> str:
        return ["drained 0 of 37 pending messages (dry run)",
                "0 issues.",
                ""][k]  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = f"not enough arguments in call to {module}_send"
        line = (
            f"# github.com/acme/relaybox/{self.src}\n"
            f"{self.src}/{module}.go:88:14: {probe}\n\thave (Batch)\n\twant (Batch, string)"
        )
        return line, probe, "go build ./..."

    def build_ok(self) -> str:
        return ""

    def measurement(self, figure: str) -> tuple[str, str]:
        line = (
            "     http_req_duration..............: "
            f"avg=181.40ms min=12.07ms med=143.92ms max=2.31s p(90)=288.15ms p(95)={figure}ms\n"
            "     http_reqs......................: 418220 1161.7/s"
        )
        return line, "k6 run soak/staging.js --quiet"

    def test_command(self) -> str:
        return "gotestsum --format testname -- ./..."

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} tests, {failed} failure{'' if failed == 1 else 's'}"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = [f"FAIL {t} (0.01s)" for t in failing]
        lines += ["", "=== Failed"]
        for t in failing:
            package, name = t.rsplit(".", 1)
            test_file = package.rsplit("/", 1)[-1] + "_test.go"
            lines += [f"=== FAIL: {package} {name} (0.01s)",
                      f"    {test_file}:41: delivered 2 times, want 1", ""]  # fmt: skip
        lines.append(f"DONE {self.test_counts(failed, passed)} in 4.213s")
        return "\n".join(lines)
