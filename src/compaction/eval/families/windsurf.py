"""A Windsurf-style family, telling the story's second-thoughts variant: a Laravel service
(PHP 8.3, Composer, PHPUnit 11, PHPStan, PHPBench, `php artisan`) worked on through the tools
of Windsurf's Cascade agent, by a user who writes formally and politely and an assistant who
answers plainly.

Tools and argument names, as the published Cascade tool list declares them ("Tools Wave 11",
collected in x1xhlol/system-prompts-and-models-of-ai-tools, `Windsurf/`; every tool also takes
a `toolSummary` of 2-5 words, to be given first):

- `run_command` {CommandLine, Cwd, Blocking, SafeToAutoRun, WaitMsBeforeAsync}: never a `cd`
  (the directory goes in `Cwd`); `SafeToAutoRun` only for commands without side effects, so
  `rm` and `git mv` ask the user first. A non-blocking command answers with a background
  command id, read back with `command_status` {CommandId, OutputCharacterCount,
  WaitDurationSeconds}.
- `view_file` {AbsolutePath, StartLine, EndLine, IncludeSummaryOfOtherLines}: 1-indexed,
  inclusive, at most 400 lines a call.
- `write_to_file` {TargetFile, CodeContent, EmptyFile}: new files only.
- `replace_file_content` {TargetFile, CodeMarkdownLanguage, Instruction, ReplacementChunks:
  [{AllowMultiple, TargetContent, ReplacementContent}]}: one call per file, one chunk per
  non-adjacent edit.
- `grep_search` {SearchPath, Query, MatchPerLine, Includes, IsRegex, CaseInsensitive}: JSON
  matches (Filename, LineNumber, LineContent), at most 50.
- `find_by_name` {SearchDirectory, Pattern, Type}: type, size, modification time and relative
  path of each match; `list_dir` {DirectoryPath}: each child with its size in bytes.

The result texts of these tools are not published; the ones here follow what Cascade shows in
its panel (`view_file`'s numbered `<line>: <text>` lines under a "File Path:" header, the
`[diff_block_start]` … `[diff_block_end]` diff of an edit) and are this family's reading.
The prompt's `<planning>` section says the plan is kept through an `update_plan` tool, but the
tool list declares no such tool, so the assistant keeps the plan as a Markdown table in its
own messages (`PLAN_HEADING`, `PLAN_STATES`) and restates it as steps finish. Cascade has no
delete, move or final-answer tool: files go with `rm` and `git mv` through `run_command`, and
the session ends on the assistant's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, hexid, lower_camel

ROOT = "/Users/dev/Sites/tollgate"
#: The first line of every plan message; the revision number follows it.
PLAN_HEADING = "**Plan**"
#: Plan status → what the table's State column says.
PLAN_STATES = {
    "completed": "done",
    "in_progress": "in progress",
    "pending": "not started",
    "cancelled": "cancelled",
}
#: The commands the assistant starts without blocking, then reads back with command_status.
_BACKGROUND = ("vendor/bin/phpbench",)
#: Commands that change the working tree: Cascade must not run them without the user's say.
_UNSAFE = ("rm ", "git rm", "git mv", "mkdir", "composer require")
#: PHPUnit's message and line for each failing test method the story names.
ASSERTIONS = {
    "testRetries": ("Failed asserting that 2 is identical to 3.", 34),
    "testOrdersBatches": ("Failed asserting that two arrays are identical.", 52),
    "testHandlesEmpty": ("Failed asserting that actual size 1 matches expected size 0.", 67),
}
#: The lines the analyser points at (line 88 holds the first call), as view_file shows 80-95.
DISPATCH_WINDOW = (
    "    }",
    "",
    "    private function flushPending(Batch $batch): void",
    "    {",
    "        if ($batch->isEmpty()) {",
    "            return;",
    "        }",
    "",
    "        {call}",
    "        $this->metrics->increment('tollgate.flushes');",
    "    }",
    "",
    "    private function retryPending(Batch $batch): void",
    "    {",
    "        {call}",
    "    }",
)


def php_line(line: str) -> str:
    """A story line (`throttle_limit = 4`, `outbox_send(batch)`) as the PHP it stands for."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, _, value, tenant = match.groups()
    name = lower_camel(module)
    if value is None:
        return f"        $this->{name}Send($batch{', $tenantId' if tenant else ''});"
    if value.startswith("settings."):
        value = f"(int) config('tollgate.{module}_limit')"
    return f"        $this->{name}Limit = {value};"


def _php_file(class_name: str, body: Sequence[str]) -> list[str]:
    return [
        "<?php", "", "declare(strict_types=1);", "", "namespace App\\Services;", "",
        f"final class {class_name}", "{", *body, "}",
    ]  # fmt: skip


class WindsurfVoice(Voice):
    family = "windsurf-style"
    system_prompt = (
        "You are Cascade, an agentic AI coding assistant made by the Windsurf engineering "
        "team. You pair-program with the USER on their coding task, working on your own and "
        "together with them.\n<user_information>\nThe USER's OS version is mac.\nThe USER has "
        "1 active workspaces, each defined by a URI and a CorpusName:\n"
        f"{ROOT} -> {ROOT}\n</user_information>\n<tool_calling>\nCall tools only when they "
        "are needed, and follow each tool's schema exactly. Before each tool call, say why you "
        "make it.\n</tool_calling>\n<running_commands>\nNever put `cd` in a command: give the "
        "directory as Cwd. Set SafeToAutoRun only for commands with no destructive side "
        "effects.\n</running_commands>\n<communication_style>\nAddress the USER in the "
        "second person. Format replies in markdown.\n</communication_style>"
    )
    src = "app/Services"
    ext = "php"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "php artisan tollgate:replay {module} --dry-run",
        "php artisan queue:failed --queue={module}-dispatch",
        "php artisan route:list --path=webhooks/{module} --except-vendor",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("signature tolerance", "300 seconds", "900 seconds", "600 seconds"),
        ("Horizon worker count", "4 workers", "16 workers", "8 workers"),
        ("queue retry_after", "95 minutes", "240 minutes", "180 minutes"),
        ("dispatch chunk size", "750 records", "5000 records", "2500 records"),
        ("partner rate ceiling", "60 requests per minute", "300 requests per minute",
         "150 requests per minute"),
        ("payload archive retention", "7 weeks", "26 weeks", "13 weeks"),
    )  # fmt: skip
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("the database queue driver", "Redis queues under Horizon",
         "the jobs table locks up during the nightly import",
         "Amazon SQS with a FIFO queue",
         "the Redis instance is shared with the cache and evicts keys under memory pressure"),
        ("Eloquent model observers", "a pending_dispatches table written in the transaction",
         "observers fire before the surrounding transaction commits",
         "MySQL binlog capture through Debezium",
         "a second writer on the orders table doubles the deadlocks we already see"),
        ("a crontab line per web node", "the Laravel scheduler with onOneServer",
         "every web node fires the same run at the same minute",
         "a dedicated Supervisor-managed worker with a sleep loop",
         "onOneServer needs a shared lock store, and ours is the evicting Redis"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Good afternoon. I would be grateful for your help with a delivery problem: since "
            "Tuesday's release, webhooks queued by {module} are accepted but never dispatched, "
            "and our partners are reporting missing callbacks. Would you kindly find the cause "
            "and correct it? I believe {other} relies on the same dispatcher, so I would ask "
            "you to examine it as well.",
            "Hello, and thank you in advance. Our {module} service appears to stop dispatching "
            "its queued jobs whenever a Horizon supervisor restarts; the jobs then remain "
            "reserved indefinitely. May I ask you to establish why, and to put it right? If it "
            "is no trouble, please review {other} too, as it was written in the same manner.",
        ],
        "set_value": [
            "If I may, I should like the {key} to begin at {value}; we can revisit the figure "
            "once we have measurements.",
            "As a starting point, would you please use {value} for the {key}?",
        ],
        "ack": [
            "Okay. I'll stick to that.",
            "Fine by me, I'll hold to that rule.",
            "Right, I'll work to that.",
        ],
        "constraint": [
            "May I add one requirement, which I must insist upon: {rule}.",
            "Please be aware of a firm rule in this codebase: {rule}.",
            "I would also ask that you observe the following, as our reviewers will check it: "
            "{rule}.",
        ],
        "plan": [
            "First attempt: {plan}, so that {module} picks its pending jobs back up after a "
            "restart.",
            "Plan for now: rely on {plan} for whatever {module} has not dispatched yet.",
        ],
        "change_value": [
            "I do apologise, but I must revise the {key}: {old} has proved too tight for our "
            "partners, so would you please make it {new}?",
            "On reflection, and with apologies for the change, I would prefer the {key} at "
            "{new} rather than {old}.",
            "Our operations colleagues have asked, very courteously, that the {key} be {new}, "
            "since {old} sets off their alerts. Would you mind adjusting it?",
        ],
        "change_again": [
            "I am sorry to trouble you once more about the {key}. After this morning's load "
            "test, {old} is more than the smaller servers can bear; could we settle on {new}?",
            "Forgive me for returning to the {key} yet again: the partners have now confirmed "
            "that {new} suits them, whereas {old} does not.",
            "One final revision to the {key}, if you would be so kind: {new} in place of {old}, "
            "which the staging servers could not sustain.",
        ],
        "ack_value": [
            "Okay, the {key} is {new} in config/tollgate.php.",
            "Done. config/tollgate.php has the {key} at {new}.",
        ],
        "reverse": [
            "{old} won't hold up here: {why}. I'm switching to {new}.",
            "I tried {old} and it falls short, since {why}. {new} replaces it.",
        ],
        "reverse_again": [
            "There's a problem with {old} too: {why}. So I'm going with {new}.",
            "Scratch {old} as well, because {why}. Trying {new} next.",
        ],
        "question": [
            "If it is convenient, could you identify the commit at which dispatching stopped? "
            "The incident report I am preparing requires its hash, so I would be obliged if "
            "you kept it to hand.",
            "I wonder whether you might find the commit that introduced this fault. Its hash "
            "is needed for our incident review on Thursday, so please make a note of it.",
        ],
        "commit": [
            "chore: composer update",
            "test: move to phpunit 11",
            "docs: service provider notes",
            "ci: cache the vendor dir",
        ],
        "answer": [
            "It's {sha}. That commit moved the dispatcher onto the shared HTTP client and "
            "dropped the retry middleware.",
            "{sha} broke it: the retry middleware went away when the dispatcher moved to the "
            "shared client.",
        ],
        "measure_question": [
            "While you are at it, might you run the dispatch benchmark and tell me the mean "
            "time per batch? I shall need the figure for the capacity review, so please do "
            "keep it.",
            "Would you be good enough to measure how long one dispatch batch takes with "
            "PHPBench? The number is going into next month's capacity paper.",
        ],
        "measure_answer": [
            "PHPBench says {figure} μs per dispatch batch (mode over 10 iterations).",
            "One dispatch batch takes {figure} μs, per PHPBench.",
        ],
        "last": [
            "I'm stopping here with two things open: {todo} is under way and {test} still "
            "fails. Every other plan step is done or cancelled.",
            "Handing back now: {test} has not passed yet and {todo} is only started. Apart "
            "from those, each step in the plan is done or cancelled.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._plans = 0

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.php"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        method = "test" + camel(name.removeprefix(f"test_{module}_"))
        return f"Tests\\Unit\\{camel(module)}Test::{method}"

    @staticmethod
    def _abs(path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- run_command --------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        # Laravel writes its logs under storage/; PHP class files are StudlyCase.
        command = command.replace("tail -n 60 logs/", "tail -n 60 storage/logs/", 1)
        command = command.replace("| grep legacy", "| grep -i legacy")
        if command.startswith(_BACKGROUND):
            self._background(command, output)
            return
        arguments = {
            "toolSummary": "running command",
            "CommandLine": command,
            "Cwd": ROOT,
            "Blocking": True,
            "SafeToAutoRun": not command.startswith(_UNSAFE),
        }
        body = f"Output:\n{output}" if output.strip() else "No output."
        result = f"Ran `{command}` in {ROOT}. Exit code: {exit_code}.\n\n{body}"
        self.s.call("run_command", arguments, result, filler=filler)

    def _background(self, command: str, output: str) -> None:
        command_id = f"{hexid(self.rng, 8)}-{hexid(self.rng, 4)}-{hexid(self.rng, 4)}"
        arguments = {
            "toolSummary": "running benchmark",
            "CommandLine": command,
            "Cwd": ROOT,
            "Blocking": False,
            "SafeToAutoRun": True,
            "WaitMsBeforeAsync": 3000,
        }
        started = (
            f"Background command ID: {command_id}\nThe command is still running after 3000 ms; "
            "use command_status to read its output."
        )
        self.s.call("run_command", arguments, started)
        status = {
            "toolSummary": "checking command status",
            "CommandId": command_id,
            "OutputCharacterCount": 4000,
            "WaitDurationSeconds": 60,
        }
        self.s.call("command_status", status, f"Status: DONE\nExit code: 0\n\nOutput:\n{output}")

    # --- files --------------------------------------------------------------------------

    def _view(self, path: str, lines: Sequence[str], first: int, total: int, *,
              filler: bool = False) -> None:  # fmt: skip
        """`view_file` of `lines`, which start at line `first` of a file of `total` lines."""
        last = first + len(lines) - 1
        arguments = {
            "toolSummary": "viewing file",
            "AbsolutePath": self._abs(path),
            "StartLine": first,
            "EndLine": last,
            "IncludeSummaryOfOtherLines": False,
        }
        size = sum(len(line) + 1 for line in lines) * total // max(1, len(lines))
        numbered = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, first))
        whole = first == 1 and last == total
        tail = (
            "The above content shows the entire, complete file contents of the requested file."
            if whole
            else "The above content does NOT show the entire file contents. If you need to view "
            "any lines of the file which were not shown to complete your task, call this tool "
            "again to view those lines."
        )
        text = (
            f"File Path: `file://{self._abs(path)}`\nTotal Lines: {total}\nTotal Bytes: {size}\n"
            f"Showing lines {first} to {last}\nThe following code has been modified to include "
            "a line number before every line, in the format: <line_number>: <original_line>. "
            "Please note that any changes targeting the original code should remove the line "
            f"number, colon, and leading space.\n{numbered}\n{tail}"
        )
        self.s.call("view_file", arguments, text, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        class_name = path.rsplit("/", 1)[-1].removesuffix(".php")
        lines = _php_file(class_name, [php_line(line) for line in content.split("\n")])
        if filler and self.rng.random() < 0.3:
            first = self.rng.randint(10, max(10, len(lines) // 3))
            last = min(len(lines), first + self.rng.randint(25, 60))
            self._view(path, lines[first - 1 : last], first, len(lines), filler=True)
            return
        self._view(path, lines, 1, len(lines), filler=filler)

    def _replace(self, path: str, instruction: str, chunks: list[dict[str, object]],
                 diff: str) -> None:  # fmt: skip
        full = self._abs(path)
        arguments = {
            "toolSummary": "editing file",
            "TargetFile": full,
            "CodeMarkdownLanguage": "php",
            "Instruction": instruction,
            "ReplacementChunks": chunks,
        }
        result = (
            f"The following changes were made by the replace_file_content tool to: {full}. If "
            "relevant, proactively run terminal commands to execute this code for the USER. "
            f"Don't ask for permission.\n[diff_block_start]\n{diff}\n[diff_block_end]"
        )
        self.s.call("replace_file_content", arguments, result)

    def edit(self, path: str, old: str, new: str) -> None:
        old_php, new_php = php_line(old), php_line(new)
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_calls(path, old_php, new_php)
            return
        line = self.rng.randint(20, 70)
        chunk = {
            "AllowMultiple": False,
            "TargetContent": old_php.strip(),
            "ReplacementContent": new_php.strip(),
        }
        diff = f"@@ -{line},1 +{line},1 @@\n-{old_php}\n+{new_php}"
        self._replace(path, "Read the limit from config instead of a literal.", [chunk], diff)

    def _fix_calls(self, path: str, old: str, new: str) -> None:
        """The analyser's fix: view the lines it named, then widen the method and pass the
        tenant to both calls in one replace_file_content (two chunks, one of them multiple)."""
        window = [line.replace("{call}", old.strip()) for line in DISPATCH_WINDOW]
        self._view(path, window, 80, 140)
        signature = DISPATCH_WINDOW[2].strip()
        widened = signature.replace("Batch $batch)", "Batch $batch, string $tenantId)")
        chunks: list[dict[str, object]] = [
            {"AllowMultiple": False, "TargetContent": signature, "ReplacementContent": widened},
            {
                "AllowMultiple": True,
                "TargetContent": old.strip(),
                "ReplacementContent": new.strip(),
            },
        ]
        diff = (
            f"@@ -82,1 +82,1 @@\n-    {signature}\n+    {widened}\n"
            f"@@ -88,1 +88,1 @@\n-{old}\n+{new}\n@@ -94,1 +94,1 @@\n-{old}\n+{new}"
        )
        self._replace(path, "Pass the tenant id through to both dispatch calls.", chunks, diff)

    def create(self, path: str, content: str) -> None:
        class_name = path.rsplit("/", 1)[-1].removesuffix(".php")
        body = "\n".join(_php_file(class_name, content.split("\n"))) + "\n"
        full = self._abs(path)
        arguments = {
            "toolSummary": "creating file",
            "TargetFile": full,
            "CodeContent": body,
            "EmptyFile": False,
        }
        created = f"Created file file://{full} with requested content."
        self.s.call("write_to_file", arguments, created)

    def delete(self, path: str) -> None:
        self.shell(f"rm {path}", "")

    def move(self, source: str, destination: str) -> None:
        # Laravel keeps test fixtures under tests/Fixtures.
        source = source.replace("testdata/", "tests/Fixtures/", 1)
        destination = destination.replace("testdata/", "tests/Fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        matches = []
        for hit in list(hits)[:50]:
            path, line, text = hit.split(":", 2)
            matches.append(
                f'{{"Filename": "{self._abs(path)}", "LineNumber": {line}, '
                f'"LineContent": "        {text.strip()}"}}'
            )
        arguments = {
            "toolSummary": "searching code",
            "SearchPath": self._abs(root),
            "Query": pattern,
            "MatchPerLine": True,
            "Includes": ["*.php"],
            "IsRegex": False,
            "CaseInsensitive": False,
        }
        self.s.call("grep_search", arguments, "\n".join(matches), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = sorted(set(paths))
        if self.rng.random() < 0.5:
            children = "\n".join(
                f'{{"name":"{p.rsplit("/", 1)[-1]}","sizeBytes":"{self.rng.randint(300, 30000)}"}}'
                for p in unique
            )
            arguments = {"toolSummary": "analyzing directory", "DirectoryPath": self._abs(root)}
            self.s.call("list_dir", arguments, children, filler=filler)
            return
        rows = "\n".join(
            f"{p}\tfile\t{self.rng.randint(300, 30000)} bytes\t2026-11-{self.rng.randint(10, 28)} "
            f"{self.rng.randint(0, 23):02d}:{self.rng.randint(0, 59):02d}"
            for p in unique
        )
        arguments = {
            "toolSummary": "finding files",
            "SearchDirectory": self._abs(root),
            "Pattern": "*.php",
            "Type": "file",
        }
        found = f"Found {len(unique)} results\n{rows}"
        self.s.call("find_by_name", arguments, found, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        # No plan tool in the list: the plan is a table in the assistant's own message.
        self._plans += 1
        lines = [f"{PLAN_HEADING} (revision {self._plans})", "", "| Step | Task | State |",
                 "| --- | --- | --- |"]  # fmt: skip
        lines += [
            f"| {n} | {text} | {PLAN_STATES[status]} |" for n, (text, status) in enumerate(items, 1)
        ]
        self.s.say("\n".join(lines))

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        return [
            "Replaying in dry-run mode.\n\n  0 of 41 pending dispatches would be sent.",
            "\n   INFO  No failed jobs found.\n",
            "\n  POST       webhooks/{partner} ........ webhooks.receive \u203a "
            "Webhooks\\ReceiveController\n\n"
            "                                                  Showing [1] routes\n",
        ][k]

    def build_error(self, module: str) -> tuple[str, str, str]:
        name = camel(module)
        method = f"{lower_camel(module)}Send"
        probe = f"{method}() invoked with 1 parameter, 2 required"
        rule = "-" * 66
        rows = "".join(
            f"  {line}     Method App\\Services\\{name}::{probe}.\n         \U0001faaa  "
            "arguments.count\n"
            for line in (88, 94)
        )
        output = (
            f"Note: Using configuration file {ROOT}/phpstan.neon.\n"
            f" ------ {rule}\n  Line   Services/{name}.php\n ------ {rule}\n"
            f"{rows} ------ {rule}\n\n\n [ERROR] Found 2 errors\n"
        )
        return output, probe, "vendor/bin/phpstan analyse --no-progress"

    def build_ok(self) -> str:
        return f"Note: Using configuration file {ROOT}/phpstan.neon.\n\n\n [OK] No errors\n"

    def measurement(self, figure: str) -> tuple[str, str]:
        rule = "+" + "+".join("-" * n for n in (15, 20, 5, 6, 5, 10, 12, 8)) + "+"
        output = (
            "PHPBench (1.3.1) running benchmarks... #standwithukraine\n"
            f"with configuration file: {ROOT}/phpbench.json\n"
            "with PHP version 8.3.13, xdebug \u274c, opcache \u2714\n\n"
            "\\Tests\\Benchmark\\DispatchBench\n\n"
            f"    benchDispatchBatch......................I9 - Mo{figure}\u03bcs (\u00b11.84%)\n\n"
            "Subjects: 1, Assertions: 0, Failures: 0, Errors: 0\n"
            f"{rule}\n| benchmark     | subject            | set | revs | its | mem_peak | mode"
            f"       | rstdev |\n{rule}\n| DispatchBench | benchDispatchBatch |     | 50   | 10  "
            f"| 6.284mb  | {figure}\u03bcs | \u00b11.84% |\n{rule}"
        )
        command = "vendor/bin/phpbench run tests/Benchmark/DispatchBench.php --report=aggregate"
        return output, command

    def test_command(self) -> str:
        return "vendor/bin/phpunit"

    def test_counts(self, failed: int, passed: int) -> str:
        total = failed + passed
        return f"Tests: {total}, Assertions: {2 * total + 7}, Failures: {failed}."

    def _progress(self, failing: int, total: int) -> list[str]:
        """PHPUnit's progress lines: one character a test, 63 a line, with a count."""
        marks = ["."] * total
        for k in self.rng.sample(range(total), failing):
            marks[k] = "F"
        width = len(str(total))
        lines = []
        for start in range(0, total, 63):
            row = "".join(marks[start : start + 63])
            done = start + len(row)
            lines.append(f"{row:<63} {done:>{width}} / {total} ({round(100 * done / total):>3}%)")
        return lines

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        total = failed + passed
        lines = [
            "PHPUnit 11.4.3 by Sebastian Bergmann and contributors.",
            "",
            "Runtime:       PHP 8.3.13",
            f"Configuration: {ROOT}/phpunit.xml",
            "",
            *self._progress(failed, total),
            "",
            f"Time: 00:00.{self.rng.randint(300, 900)}, Memory: 28.00 MB",
            "",
            "There was 1 failure:" if failed == 1 else f"There were {failed} failures:",
        ]
        for n, test in enumerate(failing, 1):
            cls, method = test.rsplit("\\", 1)[1].split("::")
            message, line = ASSERTIONS[method]
            lines += ["", f"{n}) {test}", message]
            if method == "testOrdersBatches":
                lines += [
                    "--- Expected",
                    "+++ Actual",
                    "@@ @@",
                    " Array &0 [",
                    "-    1 => 2,",
                    "-    2 => 3,",
                    "+    1 => 3,",
                    "+    2 => 2,",
                    " ]",
                ]
            lines += ["", f"{ROOT}/tests/Unit/{cls}.php:{line}"]
        lines += ["", "FAILURES!", self.test_counts(failed, passed)]
        return "\n".join(lines)
