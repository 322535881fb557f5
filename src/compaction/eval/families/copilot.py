"""A Copilot-style family, telling the story's second-thoughts variant: a Swift server package
(SwiftPM's `swift build` and `swift test` with XCTest on Linux, SwiftLint, a release-mode
benchmark executable) worked on through the tools of GitHub Copilot's agent mode in VS Code,
inside a dev container, by a user who writes like a teammate in chat and an assistant who
answers in Copilot's short, friendly register.

Tools and argument names, as the sources declare them (microsoft/vscode-copilot-chat at
31acd00, `package.json` `languageModelTools` and `src/extension/tools/node/*.tsx`; the core
tools from microsoft/vscode, `terminalContrib/chatAgentTools/browser/tools/*.ts` and
`testing/common/testingChatAgentTool.ts`; the tool list of a recorded Copilot request, Nov
2025, in abdullahatrash/vscode-copilot-chat `LOGS.md`):

- `run_in_terminal` {command, explanation, isBackground}: the output; "Command produced no
  output" when there is none; "\\n\\nCommand exited with code N" after a failing one
  (`richExecuteStrategy.ts`). A background run answers "Command is running in terminal with
  ID=<uuid>" and what it printed so far; `get_terminal_output` {id} answers "Output of
  terminal <id>:" and the output.
- `read_file` {filePath, startLine, endLine} (1-based, inclusive; the contributed schema):
  the text in a fenced block with its language; a part of a file is headed "File: `<path>`.
  Lines A to B (N lines total): " (`ReadFileResult`).
- `create_file` {filePath, content}, `replace_string_in_file` {filePath, oldString, newString}
  (oldString with 3-5 lines of context, as the reminder asks) and `insert_edit_into_file`
  {explanation, filePath, code} (unchanged regions as `// ...existing code...`): all answer
  "The following files were successfully edited:" and the path (`EditFileResult`, and a
  recorded replay, `spec.chatreplay.json`); an edit that brings new diagnostics answers
  "The edit to <path> was applied successfully." and the diagnostics instead. A replacement
  whose oldString matches twice fails with "String replacement failed: Multiple matches
  found for the text to replace. …" (`editFileToolUtils.tsx`); the prompt says to fall back
  to `insert_edit_into_file` then.
- `get_errors` {filePaths}: one `<errors path="…">` block a file, "No errors found" or each
  problem as "This code at line N", the code and `<compileError>` (`getErrorsTool.tsx`).
- `runTests` {files}: `<summary passed=N failed=M />` and a `<testFailure name=… path=…>`
  a failing test (`testingChatAgentTool.ts`). How the Swift extension names its test items
  is not in the sources; "HarborTests > OutboxTests" and the method name are this family's
  reading.
- `grep_search` {query, isRegexp, includePattern}: "N matches" (20 at most by default, then
  "(more results are available)") and `<match path=… line=N>` blocks; `file_search` {query}:
  "N total results" and absolute paths; `list_dir` {path}: one name a line, folders with a
  trailing `/`.
- `manage_todo_list` {todoList: [{id, title, description, status}], operation}: statuses
  not-started / in-progress / completed, the whole list each time, answering "Successfully
  wrote todo list". It has no cancelled state: a dropped item is left out of the next list.

Every user turn reaches the model as Copilot renders it (`agentPrompt.tsx`): a `<context>`
with the date and the current to-do list (`# Todo List`, `- [x]` / `- [-]` / `- [ ]`), the
`<editorContext>` naming the file last opened, the `<reminderInstructions>` about the edit
tools, then the request in `<userRequest>`; the session opens with Copilot's
`<environment_info>` / `<workspace_info>` message. Copilot has no delete, move or
final-answer tool: files go with `git rm` and `git mv` in the terminal (the replace tool's
own description says so), and the session ends on the assistant's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice, camel, hexid, lower_camel

ROOT = "/workspaces/harbor"
PACKAGE = "Harbor"
TODAY = "November 27, 2026"
#: What `run_in_terminal` answers when a command printed nothing, and after a failing one.
NO_OUTPUT = "Command produced no output"
EXITED = "\n\nCommand exited with code {code}"
EDITED = "The following files were successfully edited:\n{path}\n"
TODO_WRITTEN = "Successfully wrote todo list"
EXISTING = "// ...existing code..."
#: The reminder Copilot repeats in every user turn when both edit tools are enabled.
REMINDER = (
    "When using the insert_edit_into_file tool, avoid repeating existing code, instead use a "
    "line comment with `...existing code...` to represent regions of unchanged code.\n"
    "When using the replace_string_in_file tool, include 3-5 lines of unchanged code before "
    "and after the string you want to replace, to make it unambiguous which part of the file "
    "should be edited.\nIt is much faster to edit using the replace_string_in_file tool. "
    "Prefer the replace_string_in_file tool for making edits and only fall back to "
    "insert_edit_into_file if it fails."
)
#: The story's statuses as `manage_todo_list` spells them (cancelled: left out).
TODO_STATES = {"pending": "not-started", "in_progress": "in-progress", "completed": "completed"}
_CHECKBOX = {"not-started": "[ ]", "in-progress": "[-]", "completed": "[x]"}
#: Phrasings the user writes: they reach the model wrapped as a Copilot user turn.
_USER_KEYS = frozenset(
    {"task", "set_value", "constraint", "change_value", "change_again", "question",
     "measure_question"}
)  # fmt: skip
#: The benchmark runs long in release mode: Copilot starts it in the background.
BENCH = "swift run -c release harbor-bench dispatch"
#: XCTest's message and line for each failing test method the story names.
ASSERTIONS = {
    "testRetries": ('XCTAssertEqual failed: ("2") is not equal to ("3")', 31),
    "testOrdersBatches": ('XCTAssertEqual failed: ("[1, 3, 2]") is not equal to ("[1, 2, 3]")', 47),
    "testHandlesEmpty": ('XCTAssertEqual failed: ("1") is not equal to ("0")', 62),
}
#: Test classes that always run beside the ones the story's failures live in.
OTHER_TEST_CLASSES = ("SignatureVerifierTests", "EnvelopeCodingTests", "RouteTableTests")
_VERBS = ("Decodes", "Encodes", "Signs", "Rejects", "Parses", "Caches", "Expires", "Merges")
_NOUNS = ("Payload", "Header", "Envelope", "Receipt", "Digest", "Timestamp", "Nonce")
#: The lines the compiler points at (88 and 93 hold the calls), as read_file shows 80-95.
DISPATCH_WINDOW = (
    "    }",
    "",
    "    private func flushPending(_ batch: Batch) {",
    "        guard !batch.isEmpty else {",
    "            return",
    "        }",
    '        metrics.increment("harbor.flushes")',
    '        logger.debug("flushing \\(batch.count) deliveries")',
    "        {call}",
    "    }",
    "",
    "    private func retryPending(_ batch: Batch) {",
    '        metrics.increment("harbor.retries")',
    "        {call}",
    "    }",
    "",
)


def swift_line(line: str) -> str:
    """A story line (`throttle_limit = 4`, `outbox_send(batch)`) as the Swift it stands for."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, _, value, tenant = match.groups()
    name = lower_camel(module)
    if value is None:
        return f"        {name}Send(batch{', tenantID: tenantID' if tenant else ''})"
    if value.startswith("settings."):
        value = f"settings.{name}Limit"
    return f"    var {name}Limit = {value}"


def _swift_file(type_name: str, body: Sequence[str]) -> list[str]:
    return ["import Foundation", "import NIOCore", "", f"struct {type_name} {{", *body, "}"]


def _fenced(lines: Sequence[str]) -> str:
    return "```swift\n" + "\n".join(lines) + "\n```"


def _checklist(items: Sequence[dict[str, object]]) -> str:
    """The to-do list as `manage_todo_list` reads it back into each user turn."""
    rows = [f"- {_CHECKBOX[str(i['status'])]} {i['title']}" for i in items]
    return "# Todo List\n\n" + "\n".join(rows)


class CopilotVoice(Voice):
    family = "copilot-style"
    system_prompt = (
        "You are an expert AI programming assistant, working with a user in the VS Code "
        'editor.\nWhen asked for your name, you must respond with "GitHub Copilot".\nFollow '
        "the user's requirements carefully & to the letter.\nFollow Microsoft content "
        "policies.\nAvoid content that violates copyrights.\nKeep your answers short and "
        "impersonal.\n<instructions>\nYou are a highly sophisticated automated coding agent "
        "with expert-level knowledge across many different programming languages and "
        "frameworks.\nYou are an agent - you must keep going until the user's query is "
        "completely resolved, before ending your turn and yielding back to the user.\nDon't "
        "make assumptions about the situation- gather context first, then perform the task or "
        "answer the question.\nNEVER print out a codeblock with file changes unless the user "
        "asked for it. Use the appropriate edit tool instead.\n</instructions>\n"
        "<toolUseInstructions>\nWhen using a tool, follow the JSON schema very carefully and "
        "make sure to include ALL required properties.\nNEVER say the name of a tool to a "
        "user.\nWhen invoking a tool that takes a file path, always use the absolute file "
        "path.\nNEVER try to edit a file by running terminal commands unless the user "
        "specifically asks for it.\n</toolUseInstructions>\n<editFileInstructions>\nBefore "
        "you edit an existing file, make sure you either already have it in the provided "
        "context, or read it with the read_file tool, so that you can make proper changes.\n"
        "Use the replace_string_in_file tool to edit files, paying attention to context to "
        "ensure your replacement is unique.\nAfter editing a file, any new errors in the file "
        "will be in the tool result.\n</editFileInstructions>\n<outputFormatting>\nUse "
        "proper Markdown formatting in your answers. When referring to a filename or symbol "
        "in the user's workspace, wrap it in backticks.\n</outputFormatting>"
    )
    src = "Sources/Harbor"
    ext = "swift"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "swift run harborctl replay --queue {module} --dry-run",
        "swiftlint lint --strict Sources/Harbor",
        "swift package diagnose-api-breaking-changes origin/main --products Harbor",
    ]
    #: (setting, first value, second, third): the first setting drawn changes twice. No
    #: value is part of another, in its row or across rows.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("delivery timeout", "12 seconds", "40 seconds", "25 seconds"),
        ("event loop count", "3 loops", "12 loops", "7 loops"),
        ("retry jitter", "150 ms", "900 ms", "400 ms"),
        ("Postgres pool size", "10 connections", "64 connections", "32 connections"),
        ("dead-letter TTL", "36 hours", "240 hours", "96 hours"),
        ("request body limit", "2 MB", "16 MB", "8 MB"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("an in-memory actor queue", "a Redis list through RediStack",
         "the actor's buffer is gone after every deploy",
         "a Postgres outbox table drained by a Vapor Queues job",
         "our Redis runs with allkeys-lru and drops keys once memory runs short"),
        ("Fluent model middleware", "a pending_deliveries table written in the same transaction",
         "the middleware runs before the surrounding transaction commits",
         "logical replication read through wal2json",
         "a second writer on the deliveries table doubles the lock waits we already see"),
        ("a DispatchSourceTimer in every worker", "scheduled jobs in Vapor Queues",
         "each replica fires its timer in the same second",
         "a single Kubernetes CronJob that calls harborctl",
         "the scheduled jobs need a shared lock, and the only lock store is that evicting Redis"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "Since Monday's Postgres failover, webhooks queued by {module} never leave "
            "`pending`. Can you dig through #codebase, find out why and fix it? {other} goes "
            "through the same dispatcher, so please check that one as well.",
            "Something in {module} stops draining once a worker restarts mid-batch: the rows "
            "stay `pending` until someone bounces the service. Track it down and fix it? "
            "Have a look at {other} while you're in there, it was copy-pasted from the same code.",
        ],
        "set_value": [
            "Start the {key} at {value}. We'll tune it once staging gives us numbers.",
            "For now set the {key} to {value}, please.",
        ],
        "ack": [
            "Got it, I'll keep to that.",
            "Understood, noted for the rest of this change.",
            "Sure thing, I'll respect that.",
        ],
        "constraint": [
            "One hard rule for this repo: {rule}.",
            "Heads-up before you go further: {rule}.",
            "Please keep this in mind the whole way through: {rule}.",
        ],
        "plan": [
            "I'll start with {plan}, so that {module} picks its undelivered webhooks back up "
            "after a restart.",
            "First approach: park whatever {module} hasn't delivered yet in {plan}.",
        ],
        "change_value": [
            "Bump the {key} to {new}; {old} turned out too tight for the partner endpoints.",
            "Let's go with {new} rather than {old} for the {key}.",
            "Change on the {key}: {old} keeps tripping the on-call alerts, make it {new}.",
        ],
        "change_again": [
            "Sorry, the {key} one more time: {old} overloads the small staging nodes. Take it "
            "down to {new}.",
            "Okay, final answer on the {key}, promise: {new}. {old} was more than the partners "
            "asked for.",
            "Let's walk the {key} back to {new}; {old} looked fine on paper but staging disagrees.",
        ],
        "ack_value": [
            "Done, `Config/harbor.json` now has the {key} at {new}.",
            "Updated: the {key} is {new} in `Config/harbor.json`.",
        ],
        "reverse": [
            "{old} isn't going to work here: {why}. Moving to {new} instead.",
            "Dropping {old}, since {why}. I'm going with {new}.",
        ],
        "reverse_again": [
            "{old} runs into trouble of its own: {why}. Switching to {new}.",
            "Changing direction once more, because {why}: {old} is out, {new} is in.",
        ],
        "question": [
            "Can you find the commit where this started? I need the hash for the incident "
            "write-up, so hang on to it.",
            "Which commit introduced this? Keep the SHA handy, it goes into the postmortem.",
        ],
        "commit": [
            "chore: bump swift-nio",
            "test: move to async XCTest",
            "docs: dev container notes",
            "ci: cache the .build folder",
        ],
        "answer": [
            "Found it: {sha}. That change moved the dispatcher onto the shared HTTPClient and "
            "dropped its retry middleware.",
            "The culprit is {sha}, where the dispatcher switched to the shared HTTPClient and "
            "lost the retry middleware.",
        ],
        "measure_question": [
            "While you're at it, can you benchmark one dispatch batch? I need the mean for the "
            "capacity review, so keep the number.",
            "Could you measure how long a dispatch batch takes in release mode? The mean goes "
            "into next month's capacity doc.",
        ],
        "measure_answer": [
            "A dispatch batch averages {figure} µs in release mode over 500 iterations.",
            "Mean time per dispatch batch: {figure} µs (release build, 500 iterations).",
        ],
        "last": [
            "Wrapping up with two loose ends: {test} still fails and {todo} is in progress. "
            "Everything else on the list is finished or dropped.",
            "Pausing with {todo} started and {test} still red. The rest of the list is either "
            "complete or no longer needed.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._current = f"{ROOT}/Package.swift"
        self._files: dict[str, list[str]] = {}
        self._todo_list: list[dict[str, object]] = []
        self._edits = 0
        self._broken: str | None = None  # the module whose build fails, until it passes
        self._failed_before: list[str] = []  # tests an earlier run reported failing
        # Copilot opens every session with the environment and the workspace layout.
        session.user(
            "<environment_info>\nThe user's current OS is: Linux\n</environment_info>\n"
            "<workspace_info>\nI am working in a workspace with the following folders:\n"
            f"- {ROOT} \nI am working in a workspace that has the following structure:\n```\n"
            "Package.resolved\nPackage.swift\nREADME.md\nConfig/\n\tharbor.json\nSources/\n"
            "\tHarbor/\n\tharbor-bench/\n\tharborctl/\nTests/\n\tHarborTests/\n```\nThis is "
            "the state of the context at this point in the conversation. The view of the "
            "workspace structure may be truncated. You can use tools to collect more context "
            "if needed.\n</workspace_info>"
        )

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.swift"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        method = "test" + camel(name.removeprefix(f"test_{module}_"))
        return f"{camel(module)}Tests.{method}"

    @staticmethod
    def _abs(path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- the user's turns ---------------------------------------------------------------

    def phrase(self, which: str, /, **values: str) -> str:
        text = super().phrase(which, **values)
        return self._turn(text) if which in _USER_KEYS else text

    def _turn(self, request: str) -> str:
        """A user message as Copilot's agent prompt renders it around the request."""
        context = [f"The current date is {TODAY}."]
        if self._todo_list:
            context.append(f"<todoList>\n{_checklist(self._todo_list)}\n</todoList>")
        return (
            "<context>\n" + "\n".join(context) + "\n</context>\n<editorContext>\nThe user's "
            f"current file is {self._current}. \n</editorContext>\n<reminderInstructions>\n"
            f"{REMINDER}\n</reminderInstructions>\n<userRequest>\n{request}\n</userRequest>"
        )

    # --- run_in_terminal ----------------------------------------------------------------

    @staticmethod
    def _explain(command: str) -> str:
        """The one-sentence `explanation` Copilot shows before running a command."""
        for start, text in (
            ("swift build", "Build the package to check that it compiles."),
            ("swift test", "Run the package's test suite."),
            ("swift run harborctl", "Dry-run the replay of queued deliveries."),
            ("swiftlint", "Lint the package sources with SwiftLint in strict mode."),
            ("swift package diagnose", "Check the public API against origin/main."),
            (BENCH, "Build the benchmark in release mode and time dispatch batches."),
            ("git log", "Show the recent commits that touched the file."),
            ("git ls-files", "Find the legacy sources still tracked by git."),
            ("git rm", "Remove the legacy source file from the package."),
            ("mkdir", "Move the golden fixture into its own folder."),
            ("tail", "Show the last lines of the service log."),
        ):
            if command.startswith(start):
                return text
        return "Run the command in the workspace."

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command.startswith(BENCH):
            self._background(command, output)
            return
        arguments = {
            "command": command,
            "explanation": self._explain(command),
            "isBackground": False,
        }
        result = output if output.strip() else NO_OUTPUT
        if exit_code:
            result += EXITED.format(code=exit_code)
        self.s.call("run_in_terminal", arguments, result, filler=filler)
        if command == "swift build" and not exit_code and self._broken:
            self._run_tests(self._broken)
            self._broken = None

    def _background(self, command: str, output: str) -> None:
        """A long run started in the background, then read back by its terminal id."""
        ident = (
            f"{hexid(self.rng, 8)}-{hexid(self.rng, 4)}-4{hexid(self.rng, 3)}-"
            f"{self.rng.choice('89ab')}{hexid(self.rng, 3)}-{hexid(self.rng, 12)}"
        )
        arguments = {"command": command, "explanation": self._explain(command),
                     "isBackground": True}  # fmt: skip
        started = output.split("\n", 1)[0]
        note = (
            f"Command is running in terminal with ID={ident}\n The command is still running, "
            f"with output:\n{started}"
        )
        self.s.call("run_in_terminal", arguments, note)
        self.s.call("get_terminal_output", {"id": ident}, f"Output of terminal {ident}:\n{output}")

    def _run_tests(self, module: str) -> None:
        """After the build passes, the tests of the file it broke, through `runTests`."""
        cls = f"{camel(module)}Tests"
        path = f"{ROOT}/Tests/HarborTests/{cls}.swift"
        message, _ = ASSERTIONS["testOrdersBatches"]
        passed = self.rng.randint(5, 9)
        result = (
            f"<summary passed={passed} failed=1 />"
            f'<testFailure name="testOrdersBatches" path="HarborTests > {cls}">\n{message} - \n'
            "</testFailure>\n"
        )
        self.s.call("runTests", {"files": [path]}, result)

    # --- files --------------------------------------------------------------------------

    def _read(self, path: str, lines: Sequence[str], first: int, total: int, *,
              filler: bool = False) -> None:  # fmt: skip
        """`read_file` of `lines`, which start at line `first` of a file of `total` lines."""
        full = self._abs(path)
        last = first + len(lines) - 1
        arguments = {"filePath": full, "startLine": first, "endLine": last}
        text = _fenced(lines)
        if last != total:
            text = f"File: `{full}`. Lines {first} to {last} ({total} lines total): \n{text}"
        self._current = full
        self.s.call("read_file", arguments, text, filler=filler)

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        name = path.rsplit("/", 1)[-1].removesuffix(".swift")
        lines = _swift_file(name, [swift_line(line) for line in content.split("\n")])
        if not filler:
            self._files[path] = lines
        if filler and self.rng.random() < 0.3:
            first = self.rng.randint(10, max(10, len(lines) // 3))
            last = min(len(lines), first + self.rng.randint(25, 60))
            self._read(path, lines[first - 1 : last], first, len(lines), filler=True)
            return
        self._read(path, lines, 1, len(lines), filler=filler)

    def _diagnostics(self, full: str, line: int) -> str:
        """What sourcekit-lsp reports after the first edit; later edits leave files clean."""
        code = "        let attempt = retries + 1"
        return (
            f"The edit to {full} was applied successfully.\nThe edit resulted in the following "
            f'lint errors:\n<errors path="{full}">\nThis code at line {line}\n```\n{code}\n```\n'
            "has the problem reported:\n<compileError>\nInitialization of immutable value "
            "'attempt' was never used; consider replacing with assignment to '_' or removing "
            "it\n</compileError>\n\n</errors>\n"
        )

    def edit(self, path: str, old: str, new: str) -> None:
        old_swift, new_swift = swift_line(old), swift_line(new)
        if "tenant_id" in new and "tenant_id" not in old:
            self._fix_calls(path, old_swift, new_swift)
            return
        self._edits += 1
        full = self._abs(path)
        lines = self._files.get(path, [old_swift])
        at = lines.index(old_swift) if old_swift in lines else len(lines) - 1
        # Three lines of context before the change and what follows it, as the reminder asks.
        start, end = max(0, at - 3), min(len(lines), at + 3)
        before = lines[start:end]
        after = [new_swift if k == at else line for k, line in enumerate(lines[start:end], start)]
        arguments = {"filePath": full, "oldString": "\n".join(before),
                     "newString": "\n".join(after)}  # fmt: skip
        lines[at] = new_swift
        result = (
            self._diagnostics(full, self.rng.randint(20, 50))
            if self._edits == 1
            else EDITED.format(path=full)
        )
        self._current = full
        self.s.call("replace_string_in_file", arguments, result)

    def _fix_calls(self, path: str, old: str, new: str) -> None:
        """The compiler's fix: read the lines it named, try the one-line replacement (it
        matches both calls and fails), fall back to insert_edit_into_file for both calls and
        their methods, then ask for the file's errors."""
        full = self._abs(path)
        window = [line.replace("{call}", old.strip()) for line in DISPATCH_WINDOW]
        self._read(path, window, 80, 140)
        failed = (
            "String replacement failed: Multiple matches found for the text to replace. "
            "Please provide a more specific string."
        )
        arguments = {"filePath": full, "oldString": old.strip(), "newString": new.strip()}
        self.s.call("replace_string_in_file", arguments, failed)
        code = "\n".join(
            [
                f"    {EXISTING}",
                "    private func flushPending(_ batch: Batch, tenantID: String) {",
                f"        {EXISTING}",
                new,
                "    }",
                "",
                "    private func retryPending(_ batch: Batch, tenantID: String) {",
                f"        {EXISTING}",
                new,
                "    }",
                f"    {EXISTING}",
            ]
        )
        insert = {
            "explanation": "Pass the tenant ID through both dispatch calls and the methods "
            "that make them.",
            "filePath": full,
            "code": code,
        }
        self.s.call("insert_edit_into_file", insert, EDITED.format(path=full))
        clean = f'<errors path="{full}">\nNo errors found\n</errors>\n'
        self.s.call("get_errors", {"filePaths": [full]}, clean)

    def create(self, path: str, content: str) -> None:
        name = path.rsplit("/", 1)[-1].removesuffix(".swift")
        body = "\n".join(_swift_file(name, content.split("\n"))) + "\n"
        full = self._abs(path)
        self._current = full
        self.s.call("create_file", {"filePath": full, "content": body}, EDITED.format(path=full))

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        # SwiftPM keeps test fixtures beside the tests, as resources of the test target.
        source = source.replace("testdata/", "Tests/HarborTests/Fixtures/", 1)
        destination = destination.replace("testdata/", "Tests/HarborTests/Fixtures/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        shown = list(hits)[:20]
        blocks = []
        for hit in shown:
            path, line, text = hit.split(":", 2)
            blocks.append(f'<match path="{self._abs(path)}" line={line}>\n        {text.strip()}\n'
                          "</match>")  # fmt: skip
        count = "1 match" if len(hits) == 1 else f"{len(shown)} matches"
        if len(hits) > len(shown):
            count += " (more results are available)"
        arguments = {"query": pattern, "isRegexp": False, "includePattern": f"{root}/**"}
        self.s.call("grep_search", arguments, count + "\n" + "\n".join(blocks), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        unique = sorted(set(paths))
        if self.rng.random() < 0.5:
            names = "\n".join(p.rsplit("/", 1)[-1] for p in unique)
            self.s.call("list_dir", {"path": self._abs(root)}, names, filler=filler)
            return
        shown = [self._abs(p) for p in unique[:20]]
        found = f"{len(unique)} total results\n" + "\n".join(shown)
        if len(unique) > len(shown):
            found += "\n..."
        self.s.call("file_search", {"query": f"{root}/**/*.swift"}, found, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        # The tool knows no cancelled state: a dropped item is left out of the list.
        kept = [(text, status) for text, status in items if status != "cancelled"]
        todo_list: list[dict[str, object]] = [
            {
                "id": n,
                "title": text,
                "description": f"{text[:1].upper()}{text[1:]}; swift build and swift test "
                "stay green afterwards.",
                "status": TODO_STATES[status],
            }
            for n, (text, status) in enumerate(kept, 1)
        ]
        self._todo_list = todo_list
        self.s.call("manage_todo_list", {"todoList": todo_list, "operation": "write"}, TODO_WRITTEN)

    # --- what the commands print ----------------------------------------------------------

    def _planning(self, steps: int) -> list[str]:
        return [
            "Building for debugging...",
            f"[0/{steps}] Write sources",
            f"[1/{steps}] Write swift-version-{hexid(self.rng, 16).upper()}.txt",
        ]

    def command_output(self, k: int) -> str:
        if k == 0:
            return "\n".join(
                [
                    *self._planning(4),
                    "[3/4] Compiling harborctl Replay.swift",
                    "Build of product 'harborctl' complete! (3.18s)",
                    "replay (dry run): 0 of 37 queued deliveries would be re-sent",
                ]
            )
        if k == 1:
            return (
                "Linting Swift files at paths Sources/Harbor\n"
                "Done linting! Found 0 violations, 0 serious in 23 files."
            )
        return "\n".join(
            [
                *self._planning(6),
                "Build complete! (9.04s)",
                "No breaking changes detected in Harbor",
            ]
        )

    def build_error(self, module: str) -> tuple[str, str, str]:
        name = lower_camel(module)
        call = f"{name}Send(batch)"
        probe = "missing argument for parameter 'tenantID' in call"
        path = f"{ROOT}/{self.src}/{camel(module)}.swift"
        window = [line.replace("{call}", call) for line in DISPATCH_WINDOW]
        column = 9 + len(call) - 1
        marker = " " * (column - 1) + f"`- error: {probe}"
        blocks = []
        for at in (88, 93):
            rows = [f"{n:>3} | {window[n - 80]}".rstrip() for n in range(at - 2, at + 1)]
            rows.append(f"    | {marker}")
            rows += [f"{n:>3} | {window[n - 80]}".rstrip() for n in range(at + 1, at + 3)]
            blocks.append(f"{path}:{at}:{column}: error: {probe}\n" + "\n".join(rows))
        self._broken = module
        output = "\n".join(
            [
                *self._planning(7),
                "error: emit-module command failed with exit code 1 (use -v to see invocation)",
                f"[3/7] Emitting module {PACKAGE}",
                *blocks,
            ]
        )
        return output, probe, "swift build"

    def build_ok(self) -> str:
        module = camel(self._broken or "harbor")
        return "\n".join(
            [
                *self._planning(6),
                f"[3/6] Compiling {PACKAGE} {module}.swift",
                f"[4/6] Emitting module {PACKAGE}",
                "Build complete! (6.84s)",
            ]
        )

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        output = "\n".join(
            [
                "Building for production...",
                "[4/4] Linking harbor-bench",
                "Build of product 'harbor-bench' complete! (47.12s)",
                f"dispatch: 500 iterations, mean {figure} µs, p95 {mean * 1.18:.2f} µs, "
                f"stddev {mean * 0.06:.2f} µs",
            ]
        )
        return output, f"{BENCH} --iterations 500"

    def test_command(self) -> str:
        return "swift test"

    def test_counts(self, failed: int, passed: int) -> str:
        total = failed + passed
        return f"Executed {total} tests, with {failed} failure{'s' * (failed != 1)} (0 unexpected)"

    def _per_class(self, named: Sequence[str], total: int) -> list[tuple[str, list[str]]]:
        """(test class, its test methods) for every class XCTest runs, `total` methods in all:
        the classes of the `named` tests first, each holding them."""
        classes = [*dict.fromkeys(t.split(".")[0] for t in named), *OTHER_TEST_CLASSES]
        methods: dict[str, list[str]] = {c: [] for c in classes}
        for test in named:
            cls, method = test.split(".")
            if method not in methods[cls]:
                methods[cls].append(method)
        names = [f"test{v}{n}" for v in _VERBS for n in _NOUNS]
        k = 0
        while sum(len(m) for m in methods.values()) < total:
            cls = classes[k % len(classes)]
            methods[cls].append(names[k % len(names)])
            k += 1
        return [(c, methods[c]) for c in classes]

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        # An earlier run's failures still run in a later one, where they pass.
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        total = failed + passed
        stamp = f"2026-11-27 10:{self.rng.randint(10, 59)}"
        clock = iter(range(100, 999))
        lines = [
            "[0/1] Planning build",
            *self._planning(12),
            f"[9/12] Compiling {PACKAGE}Tests "
            + ", ".join(f"{c}.swift" for c in OTHER_TEST_CLASSES),
            f"[11/12] Linking {PACKAGE}PackageTests.xctest",
            "Build complete! (12.43s)",
            f"Test Suite 'All tests' started at {stamp}:02.{next(clock)}",
            f"Test Suite '{PACKAGE}PackageTests.xctest' started at {stamp}:02.{next(clock)}",
        ]
        for cls, methods in self._per_class(named, total):
            lines.append(f"Test Suite '{cls}' started at {stamp}:02.{next(clock)}")
            bad = 0
            for method in methods:
                test = f"{cls}.{method}"
                lines.append(f"Test Case '{test}' started at {stamp}:02.{next(clock)}")
                seconds = f"0.{self.rng.randint(1, 40):03d}"
                if test in failing:
                    bad += 1
                    message, line = ASSERTIONS[method]
                    lines.append(
                        f"{ROOT}/Tests/{PACKAGE}Tests/{cls}.swift:{line}: error: {test} : "
                        f"{message} - "
                    )
                    lines.append(f"Test Case '{test}' failed ({seconds} seconds)")
                else:
                    lines.append(f"Test Case '{test}' passed ({seconds} seconds)")
            verdict = "failed" if bad else "passed"
            lines.append(f"Test Suite '{cls}' {verdict} at {stamp}:02.{next(clock)}")
            count = f"test{'s' * (len(methods) != 1)}"
            lines.append(
                f"\t Executed {len(methods)} {count}, with {bad} failure{'s' * (bad != 1)} "
                f"(0 unexpected) in 0.0{self.rng.randint(10, 99)} (0.0{self.rng.randint(10, 99)}) "
                "seconds"
            )
        summary = self.test_counts(failed, passed)
        elapsed = f"in 0.{self.rng.randint(300, 600)} (0.{self.rng.randint(601, 900)}) seconds"
        for suite in (f"{PACKAGE}PackageTests.xctest", "All tests"):
            lines += [f"Test Suite '{suite}' failed at {stamp}:02.{next(clock)}",
                      f"\t {summary} {elapsed}"]  # fmt: skip
        # Swift 6 runs the swift-testing runner after XCTest, whether or not it has tests.
        lines += [
            "\u25c7 Test run started.",
            "\u21b3 Testing Library Version: 6.1.3 (1d1f7e489c9c606)",
            "\u21b3 Target Platform: aarch64-unknown-linux-gnu",
            "\u2714 Test run with 0 tests passed after 0.001 seconds.",
        ]
        return "\n".join(lines)
