"""A Continue-style family, telling the story's second-thoughts variant: a Ruby service
(Bundler, RSpec, Sorbet) worked on through the built-in tools of Continue's agent mode in
VS Code, by a user and an assistant who change course in words no other family uses.

Tool names, as Continue's `core/tools/builtIn.ts` declares them in its mid-2025 releases
(continuedev/continue; later releases drop the `builtin_` prefix), with the argument names of
`core/tools/definitions/`:

- `builtin_read_file` {filepath}: the file's text as the result.
- `builtin_create_new_file` {filepath, contents}.
- `builtin_edit_existing_file` {filepath, changes}: `changes` is the edited section with
  `# ... existing code ...` standing for what is kept, as Continue's edit instructions ask.
- `builtin_run_terminal_command` {command, waitForCompletion}: what the terminal printed.
- `builtin_grep_search` {query}: ripgrep's `--heading` output (a `./path` line, then
  `line:text` lines).
- `builtin_file_glob_search` {pattern}: one path a line; `builtin_ls` {dirPath, recursive}:
  one entry a line.

The result texts of the create and edit tools were not in the stored sources; the short
confirmations here stand for them. Continue has no to-do, delete, move or final-answer
tool: the assistant keeps its checklist in its own messages, files go with `git rm` and
`git mv` through the terminal, and the session ends on the assistant's text. Checks run
under Bundler: Sorbet's `srb tc` is the build (`file:line: message https://srb.help/NNNN`,
"Errors: N" / "No errors! Great job."), RSpec the tests ("N examples, M failures" and the
`rspec ./spec/…:line # description` re-run lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import Session, Voice, camel

#: The first line of every checklist message the assistant writes (`todos`).
CHECKLIST = "Checklist for this fix:"
#: Checklist status → the word the assistant writes before the item.
STATUS_WORDS = {
    "completed": "done",
    "in_progress": "working on",
    "pending": "still to do",
    "cancelled": "dropped",
}


class ContinueVoice(Voice):
    family = "continue-style"
    system_prompt = (
        "<important_rules>\n  You are in agent mode.\n\n  Always include the language and "
        "file name in the info string when you write code blocks. When editing an existing "
        "file, show only the changed lines and mark unchanged code with "
        "'# ... existing code ...'. Use the built-in tools to read, search and change the "
        "workspace, and run commands in the terminal with builtin_run_terminal_command.\n"
        "</important_rules>\n\nWorkspace: /Users/dev/src/pagerhook"
    )
    src = "lib/pagerhook"
    ext = "rb"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "bundle exec rake 'deliveries:replay[{module}]' DRY_RUN=1",
        "bundle exec rubocop --autocorrect lib/pagerhook/{module}.rb",
        "bundle exec ruby bench/{module}_bench.rb",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("delivery timeout", "5 seconds", "12 seconds", "8 seconds"),
        ("sidekiq concurrency", "10 threads", "25 threads", "15 threads"),
        ("signature tolerance", "300 seconds", "60 seconds", "120 seconds"),
        ("dead set size", "1000 jobs", "10000 jobs", "5000 jobs"),
        ("redis pool", "5 connections", "20 connections", "12 connections"),
        ("circuit cooldown", "30 seconds", "90 seconds", "45 seconds"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("the sidekiq-unique-jobs gem", "a Postgres advisory lock per endpoint",
         "its locks expire under load and let duplicates through",
         "a Redis SET NX lease with a fencing token",
         "PgBouncer in transaction mode drops session-level advisory locks"),
        ("ActiveJob retries", "Sidekiq's own retry with a custom backoff",
         "ActiveJob retries re-enqueue without the original delivery id",
         "a delivery_attempts table swept by a scheduler",
         "Sidekiq's retry set is lost whenever Redis is flushed on failover"),
        ("Faraday's retry middleware", "a hand-written retry loop around Net::HTTP",
         "the middleware retries POSTs that the receiver already accepted",
         "the httpx gem's retries plugin with idempotency keys",
         "the loop duplicated the timeout handling in four places"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "pagerhook delivers some webhooks twice after a Redis failover, and {module} is "
            "where it seems to happen. Could you track it down and fix it? {other} uses the "
            "same delivery lock, so give it a look as well.",
            "We are seeing duplicate webhook deliveries out of {module} each time Redis fails "
            "over. Please find the cause and fix it, and check {other} too since it takes the "
            "same delivery lock.",
        ],
        "set_value": [
            "To begin, set the {key} to {value}.",
            "For a first pass, give the {key} a value of {value}.",
        ],
        "ack": [
            "Understood, I'll keep that in mind.",
            "Got it, I'll take that into account.",
            "Alright, noted for the rest of this.",
        ],
        "constraint": [
            "Please keep to this: {rule}.",
            "One requirement from our side: {rule}.",
            "Make sure of one thing: {rule}.",
        ],
        "plan": [
            "My approach: guard each delivery with {plan} so that {module} sends once.",
            "I'll start by putting {plan} in front of the deliveries, so {module} cannot "
            "send twice.",
        ],
        "change_value": [
            "On second thought the {key} should be {new}, since {old} is not enough.",
            "Change the {key} from {old} to {new}, please.",
            "We need {new} for the {key}; {old} was a guess.",
        ],
        "change_again": [
            "Adjusting the {key} once more: {new}, down from {old}.",
            "Revisit the {key}: {new} works better than {old}.",
            "Let's land the {key} at {new} instead of {old}.",
        ],
        "ack_value": ["Updated, {key} is {new}.", "Changed: the {key} now reads {new}."],
        "reverse": [
            "I'm backing out of {old}: {why}. I'll use {new} instead.",
            "Turns out {old} is the wrong tool, {why}; moving over to {new}.",
        ],
        "reverse_again": [
            "{old} doesn't hold up either, {why}. Replacing it with {new}.",
            "Rethinking {old}: {why}, so the deliveries get {new} now.",
        ],
        "question": [
            "Can you find out which commit started the double deliveries? Note the hash, "
            "the incident write-up needs it.",
            "Look up the commit that introduced the duplicate deliveries and remember its "
            "hash for the incident write-up.",
        ],
        "commit": ["chore: bump rack", "ci: cache gems", "docs: yard pass", "style: rubocop"],
        "answer": [
            "The double deliveries started with {sha}.",
            "It's {sha}, the commit that moved the delivery lock into Redis.",
        ],
        "measure_question": [
            "What p95 did the vegeta run against staging end on? Remember the number, it "
            "goes into the capacity plan.",
            "Please get the p95 from the staging vegeta run and keep it; I need it for the "
            "capacity plan.",
        ],
        "measure_answer": [
            "vegeta puts the staging p95 at {figure} ms.",
            "The staging p95 from vegeta was {figure} ms.",
        ],
        "last": [
            "Stopping here for today: {test} keeps failing and I am in the middle of {todo}. "
            "Every other checklist item is either done or dropped.",
            "Current state: I am in the middle of {todo}, and {test} keeps failing. The rest "
            "of the checklist is done or dropped.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._lists = 0

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        words = name.removeprefix(f"test_{module}_").replace("_", " ")
        return f"Pagerhook::{camel(module)} {words}"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # Continue hands the model what the terminal printed, without an exit-status line.
        arguments = {"command": command, "waitForCompletion": True}
        self.s.call("builtin_run_terminal_command", arguments, output, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        self.s.call("builtin_read_file", {"filepath": path}, content, filler=filler)

    def edit(self, path: str, old: str, new: str) -> None:
        changes = f"```ruby {path}\n# ... existing code ...\n{new}\n# ... existing code ...\n```"
        self.s.call(
            "builtin_edit_existing_file",
            {"filepath": path, "changes": changes},
            f"Applied the changes to {path}.",
        )

    def create(self, path: str, content: str) -> None:
        arguments = {"filepath": path, "contents": content}
        self.s.call("builtin_create_new_file", arguments, f"Created {path}.")

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        self.shell(f"git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        grouped: dict[str, list[str]] = {}
        for hit in hits:
            path, line, text = hit.split(":", 2)
            grouped.setdefault(path, []).append(f"{line}:{text}")
        blocks = [f"./{path}\n" + "\n".join(lines) for path, lines in grouped.items()]
        self.s.call("builtin_grep_search", {"query": pattern}, "\n\n".join(blocks), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = list(dict.fromkeys(paths))
        if self.rng.random() < 0.5:
            names = sorted(p.rsplit("/", 1)[-1] for p in unique)
            arguments = {"dirPath": root, "recursive": False}
            self.s.call("builtin_ls", arguments, "\n".join(names), filler=filler)
            return
        pattern = f"{root}/**/*.{self.ext}"
        self.s.call("builtin_file_glob_search", {"pattern": pattern}, "\n".join(unique),
                    filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        # No to-do tool: the checklist lives in the assistant's own messages.
        self._lists += 1
        intro = (
            "Before I start, here is how I'll go about it."
            if self._lists == 1
            else "Checking in on progress."
        )
        lines = [intro, "", CHECKLIST]
        lines += [f"- {STATUS_WORDS[status]}: {text}" for text, status in items]
        self.s.say("\n".join(lines))

    def command_output(self, k: int) -> str:
        return [
            "replaying deliveries for the last 24h (dry run)\n0 of 41 deliveries would be re-sent",
            "Inspecting 1 file\n.\n\n1 file inspected, no offenses detected",
            "Warming up --------------------------------------\n"
            "              sign    1.204k i/100ms\n"
            "Calculating -------------------------------------\n"
            "              sign     12.118k (± 2.1%) i/s -     60.200k in   4.969s",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        probe = f"Not enough arguments provided for method `{module}_send`"
        line = (
            f"{self.src}/{module}.rb:88: {probe}. Expected: `2`, got: `1` "
            "https://srb.help/7004\n"
            f"    88 |      {module}_send(batch)\n"
            "                ^^^^^^^^^^^^^^^^^^\nErrors: 1"
        )
        return line, probe, "bundle exec srb tc"

    def build_ok(self) -> str:
        return "No errors! Great job."

    def measurement(self, figure: str) -> tuple[str, str]:
        line = (
            "Requests      [total, rate, throughput]         18000, 300.02, 299.87\n"
            "Duration      [total, attack, wait]             1m0s, 59.996s, 30.114ms\n"
            "Latencies     [min, mean, 50, 90, 95, 99, max]  "
            f"11.042ms, 96.318ms, 71.205ms, 188.77ms, {figure}ms, 1.204s, 2.918s\n"
            "Success       [ratio]                           99.94%"
        )
        command = (
            "echo 'POST https://staging.pagerhook.example/v1/deliveries' | "
            "vegeta attack -rate=300 -duration=60s | vegeta report"
        )
        return line, command

    def test_command(self) -> str:
        return "bundle exec rspec"

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed + passed} examples, {failed} failure{'' if failed == 1 else 's'}"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        lines = ["", "Failures:", ""]
        for n, t in enumerate(failing, 1):
            lines += [
                f"  {n}) {t}",
                "     Failure/Error: expect(receiver.deliveries.size).to eq(1)",
                "",
                "       expected: 1",
                "            got: 2",
                "",
            ]
        lines += ["Finished in 3.41 seconds (files took 1.02 seconds to load)",
                  self.test_counts(failed, passed), "", "Failed examples:", ""]  # fmt: skip
        for t in failing:
            module = t.split("::", 1)[1].split(" ", 1)[0].lower()
            lines.append(f"rspec ./spec/pagerhook/{module}_spec.rb:41 # {t}")
        return "\n".join(lines)
