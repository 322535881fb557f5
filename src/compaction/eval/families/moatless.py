"""A Moatless-style family, telling the story's second-thoughts variant: a Kotlin service
(Kotlin 2.1 on the JVM, Ktor, Gradle with the Kotlin DSL; kotest specs on the JUnit 5
platform, ktlint through the jlleitschuh Gradle plugin, the binary-compatibility validator's
`apiCheck`, a kotlinx-benchmark run for the variant's figure) worked on by an agent built on
Moatless Tools (aorwall/moatless-tools): an `AgenticLoop` with an `ActionAgent` whose
`ToolCallCompletionModel` drives an OpenAI model through function calling, one tool per
Moatless action, and whose `MessageHistoryGenerator` rebuilds the whole history before each
completion. The user chats with it: every user message starts a new node, and the agent's
turn ends with a terminal action, here `SendMessage`.

Where the names come from: moatless-tools at 011ead57a (1 September 2025, version 0.1.1),
`moatless/actions/*.py`. A tool's name is its argument model's `model_config` title
(`ResponseSchema.name`, `completion/schema.py`); its arguments are the model's
`model_dump_json()` as `message_history.py` replays them — every field, defaults included,
in field order, compact JSON with non-ASCII left as it is. The agent is configured with
`thoughts_in_action` on (as the `swebench_tools` flow's completion model has it, and on the
memory too), so every call carries `thoughts` first (`ActionArguments.thoughts`).
- `ReadFile` {thoughts, file_path, start_line, end_line} (`read_file.py`): "```<path>\\n
  <lines>\\n```", the first 200 lines when no range is given.
- `ViewCode` {thoughts, files: [{file_path, start_line, end_line, span_ids}]}
  (`view_code.py`): "Here's the contents of the file where the not requested code spans have
  been commented out:\\n" and `FileContext.create_prompt`, "<path>\\n```\\n<code>\\n```\\n".
- `GrepTool` {thoughts, pattern, include, max_results} (`grep_tool.py`): "Found N matches for
  regex pattern '…' in files matching '…'", then per file "📄 <path>" and "    Line L:
  <stripped line>" rows.
- `GlobTool` {thoughts, pattern, max_results} (`glob.py`, its model titled "GlobTool"):
  "Found N files matching glob pattern '…':\\n\\n📄 <path>" rows; `ListFiles` {thoughts,
  directory, recursive, max_results, show_hidden} (`list_files.py`): "Contents of directory
  '…'\\n\\n", "Directories:" with "📁 " rows, "Files:" with "📄 " rows.
- `FindClass` {thoughts, file_pattern, class_name} and `FindCodeSnippet` {thoughts,
  file_pattern, code_snippet} (`find_class.py`, `find_code_snippet.py`, `search_base.py`).
- `StringReplace` {thoughts, path, old_str, new_str} (`string_replace.py`): "The file <path>
  has been edited. Here's the result of running `cat -n` on a snippet of <path>:" and the
  snippet as `CodeModificationMixin.format_snippet_with_lines` numbers it (`{:6}\\t`), then
  "Review the changes and make sure they are as expected. …". `CreateFile` {thoughts, path,
  file_text} (`create_file.py`): "File created successfully at: <path>".
- `RunTests` {thoughts, test_files} (`run_tests.py`): the failures as
  `TestFile.get_test_failure_details` writes them ("* <file>\\n```\\n<failure output>\\n```")
  and `TestFile.get_test_summary` ("* <file>: P passed, F failed, 0 errors, 0 skipped" per
  file, then "Total: P passed, F failed, 0 errors, 0 skipped."), `testing/schema.py`.
- `Bash` {thoughts, command} (`bash.py`, class `BashTool`, since 44852c4d of 30 May 2025 and
  in the `swebench_tools_and_reasoning` flow): the output of `environment.execute`, stdout
  and stderr merged (`environment/local.py`), with no exit status.
- `CreateTasks` {thoughts, tasks: [{id, content, priority}]} (`create_tasks.py`): "Created N
  tasks:\\n- <id> (priority: P): <content>"; `UpdateTask` {thoughts, task_id, state, result,
  priority} (`update_task.py`): "Updated task <id>: state from '…' to '…', result to '…'".
  The states are `TaskState`'s (`artifacts/task.py`): open, completed, failed, deleted; the
  message formats the enum members with an f-string, which on the Python 3.12 of Moatless's
  images prints `TaskState.OPEN`, and so it does here.
- `SendMessage` {thoughts, message} (`respond.py`, class `Respond`, terminal): its
  observation is the message itself. The tool-call model rejects a completion without a tool
  call (`tool_call.py`, `agent.py`: "No action found"), so the assistant talks to the user
  only this way, and a SendMessage ends its turn (`flow/loop.py` runs until a terminal node;
  the next user message starts the next node).
- Also available, named in the system prompt but not needed by this story: `FindFunction`
  {thoughts, file_pattern, function_name, class_name}, `SemanticSearch`, `AppendString`
  {thoughts, path, new_str}, `InsertLines` (titled so; {thoughts, path, insert_line,
  new_str}), `ListTasks`, `Finish` (`verified_finish.py`, titled "Finish": {thoughts,
  finish_reason, test_verification}) and `Reject` {thoughts, rejection_reason}; the story
  never completes the task (a test still fails at the end), so neither Finish nor Reject is
  called and the last message is a SendMessage.
How the history is written (`message_history/message_history.py`): user, assistant and tool
contents are lists of `{"type": "text", "text": …, "cache_control": null}` blocks; an
assistant message with tool calls has no `content` key unless the model also wrote text; the
calls of one node share one assistant message (parallel tool calls) and get ids `tool_1`,
`tool_2`, … counted over the whole history.

What the sources imply for a Kotlin repository, and this family tells: Moatless parses only
Python and Java (`codeblocks/__init__.py`, `get_parser_by_path`), so the code index has no
Kotlin: `FindClass` answers "No search results found", and `FindCodeSnippet`, which finds
the lines but cannot turn them into spans of an unparsed file, answers "Found no matches in N
files." (`search_base.py`); the agent tries each once and then searches with `GrepTool`.
For an unparsed file `ContextFile.add_line_span` adds no span, so a `ReadFile` does not put
it in the file context and `StringReplace` would refuse it ("You have not yet viewed the
file …"); the agent opens every file it edits with a whole-file `ViewCode` (which adds it
with `show_all_spans`, showing the file as it is, without line numbers). The snippet
`StringReplace` returns is numbered from the replaced line plus one, not from the snippet's
first line, as `format_snippet_with_lines(snippet, start_line + 1)` does.

The agent's configuration is this family's own, put together from the repository's flows:
the actions of `swebench_tools_and_reasoning` (with Bash) plus the task actions and
SendMessage, the completion settings of `swebench_tools` (OpenAI tool calls, thoughts in the
action). Where the story has the user speak while the agent is working, the agent first
hands the turn back with a short checkpoint SendMessage; where the story has the agent go on
after speaking, the user first answers with a short go-ahead. Moves run as `git mv -v`, so
that no command answers with nothing (an empty observation would leave its tool message
without content, `message_history.py`).

This family's own reading, where no source says more: the project (`lanternfish`, a Ktor
webhook relay), the system prompt (in the shape of the flows' prompts), the wording of both
sides, the checkpoints and go-aheads, the task ids and results; the
runtime behind `RunTests` (Moatless ships none for Gradle: it is the project's own, running
`./gradlew test --tests <spec>` and cutting Gradle's console log, with `exceptionFormat =
FULL`, into one failure per test: "<Spec> > <test> FAILED", the kotest assertion message,
the stack); and the command outputs, which follow Gradle 8.12's ("> Task :…", "BUILD
SUCCESSFUL in 9s", "FAILURE: Build failed with an exception." with its "* What went wrong:"
and "* Try:" blocks), the Kotlin 2.1 compiler's "e: file:///…kt:L:C message" lines,
kotest's "expected:<3> but was:<2>", git's, and kotlinx-benchmark's JMH-style run and
summary table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import (
    STORY_LINE,
    Session,
    Voice,
    camel,
    filled_groups,
    lower_camel,
)

PROJECT = "lanternfish"
PACKAGE = "dev.lanternfish"
SRC = "src/main/kotlin/dev/lanternfish"
TESTS = "src/test/kotlin/dev/lanternfish"
#: The build whose compile error the story fixes, the tests, the variant's benchmark.
BUILD = "./gradlew build -x test"
TESTS_COMMAND = "./gradlew test"
BENCH = "./gradlew drainBenchmark"
#: The tool through which the assistant talks to the user, and what it costs: its turn.
SEND = "SendMessage"
#: The arguments and answer of an index search on this Kotlin repository.
NO_HITS = "No search results found"
#: TaskState's values, as `UpdateTask` writes them in its answer (see the module docstring).
TASK_STATE = {"open": "TaskState.OPEN", "completed": "TaskState.COMPLETED",
              "failed": "TaskState.FAILED", "deleted": "TaskState.DELETED"}  # fmt: skip
EDITED_TAIL = (
    "Review the changes and make sure they are as expected. Edit the file again if necessary. "
    "Remember to verify the changes by running tests and adding new tests if necessary."
)
VIEWED = (
    "Here's the contents of the file where the not requested code spans have been commented out:"
)
#: The failing specs: (test name, kotest's message, line of the assertion).
SPECS = {
    "retries": ("gives up after the third failed delivery", "expected:<3> but was:<2>", 41),
    "orders_batches": ("replays parked batches in arrival order",
                       "Element differ at index: [0, 1]\nexpected:<[1, 2, 3]> but was:<[2, 1, 3]>",
                       66),
    "handles_empty": ("sends nothing for an empty outbox", "expected:<0> but was:<1>", 23),
}  # fmt: skip
#: Specs that run beside the story's, and the tests that fill them.
OTHER_SPECS = ("EnvelopeSpec", "SignatureSpec", "RouteSpec")
_PASSING = (
    "decodes a signed envelope", "rejects a stale signature", "keeps unknown headers",
    "round-trips through JSON", "masks the partner key in logs", "closes the client on shutdown",
    "retries a 503 with backoff", "parses the route table", "merges duplicate deliveries",
    "honours Retry-After", "skips paused tenants", "accepts a rotated secret",
    "drops a malformed payload",
)  # fmt: skip
#: How every Kotlin file of the project opens.
_HEAD = (
    f"package {PACKAGE}", "", f"import {PACKAGE}.config.Settings",
    "import io.ktor.client.HttpClient", "import io.ktor.client.request.get",
    "import kotlinx.datetime.Instant", "import kotlinx.serialization.Serializable", "",
)  # fmt: skip
#: Where a kotest test runs, as its failures' stacks show it (below the spec's own frames).
_KOTEST_FRAMES = (
    "test.TestCaseExecutor$execute$innerExecute$1.invokeSuspend(TestCaseExecutor.kt:91)",
    "test.TestCaseExecutor$execute$innerExecute$1.invoke(TestCaseExecutor.kt)",
    "test.interceptors.CoroutineDebugProbeInterceptor.intercept(CoroutineDebugProbeInterceptor.kt:29)",
    "test.interceptors.TimeoutInterceptor$intercept$2.invokeSuspend(TimeoutInterceptor.kt:43)",
    "test.interceptors.InvocationCountCheckInterceptor.intercept(InvocationCountCheckInterceptor.kt:26)",
    "test.TestCaseExecutor.execute(TestCaseExecutor.kt:112)",
    "spec.interceptor.SpecRefInterceptorPipeline.execute(SpecRefInterceptorPipeline.kt:74)",
    "spec.SpecExecutor.execute(SpecExecutor.kt:51)",
)
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: What the agent writes in `thoughts`, by tool.
_THOUGHTS = {
    "ReadFile": ("Reading {name} to see how it is used.", "Let me look at {name}.",
                 "Checking {name} for anything related."),
    "ViewCode": ("Viewing {name} in full so it is in the file context.",
                 "I need all of {name} before changing anything in it."),
    "GrepTool": ("Searching the Kotlin sources for {name}.", "Where else does {name} appear?"),
    "GlobTool": ("Listing the Kotlin files under {name}.",),
    "ListFiles": ("Looking at what is in {name}.",),
    "Bash": ("Running {name}.", "Next: {name}."),
}  # fmt: skip


def kt_line(line: str) -> str:
    """A story line as the Kotlin it stands for: a limit is a top-level property, read from
    the settings once configured; the send before the fix leaves out the tenant its client
    now takes, the fix passes the batch's."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    name = lower_camel(module)
    if limit.startswith("limit"):
        if value.startswith("settings."):
            value = f"settings.{name}Limit"
        return f"private val {name}Limit = {value}"
    return f"        {name}Client.send(batch{', batch.tenantId' if fixed else ''})"


def dump(arguments: dict[str, Any]) -> str:
    """Arguments as pydantic's `model_dump_json` writes them: compact, non-ASCII kept."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def blocks(text: str) -> list[dict[str, Any]]:
    """A message's content as `MessageHistoryGenerator` writes it."""
    return [{"type": "text", "text": text, "cache_control": None}]


def slug(text: str, taken: Sequence[str]) -> str:
    """A task id the agent would pick: the first three words that say something."""
    skip = {"the", "a", "an", "for", "in", "into", "of", "to", "old", "entry", "setting"}
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in skip]
    name = "-".join(words[:3])
    return name if name not in taken else "-".join(words[:4])


class MoatlessVoice(Voice):
    family = "moatless-style"
    system_prompt = (
        "You are an autonomous AI assistant with superior programming skills. You work in a "
        "Kotlin repository next to the developer who talks to you in this chat. You can only "
        f"act through the available functions; to answer the developer, call {SEND}, which "
        "ends your turn until they reply.\n\n"
        "# Workflow Overview\n\n"
        "1. **Understand the Task**\n"
        "   * **Review the Task:** Read the developer's messages in full. A later message can "
        "change what an earlier one asked for; the latest instruction wins.\n"
        "   * **Identify Code to Change:** Determine which files, classes and functions the "
        "task touches.\n"
        "   * **Identify Necessary Context:** Determine what else you need to read to change "
        "them safely: callers, configuration, fixtures and specs.\n"
        "   * **Track the Work:** Keep the work in tasks. CreateTasks for new work (give each "
        "task a short id and a priority), UpdateTask when a task is completed or no longer "
        "needed, ListTasks to review them. Work on the open task with the lowest priority "
        "number first.\n\n"
        "2. **Locate Code**\n"
        "   * **Search Functions:**\n"
        "     * SemanticSearch - Search code by semantic meaning and natural language "
        "description\n"
        "     * FindClass - Search for class definitions by class name\n"
        "     * FindFunction - Search for function definitions by function name\n"
        "     * FindCodeSnippet - Search for specific code patterns or text\n"
        "     * GrepTool - Search file contents with a regular expression\n"
        "   * **Find Files:** Use GlobTool and ListFiles to locate relevant files.\n"
        "   * **Read Code:** ReadFile reads a file or a range of its lines; ViewCode adds code "
        "to the file context, which you must do before you modify a file.\n\n"
        "3. **Modify Code**\n"
        "   * **Apply Changes:**\n"
        "     * StringReplace - Replace exact text strings in files with new content.\n"
        "     * CreateFile - Create new files with specified content.\n"
        "     * AppendString - Add content to the end of files.\n"
        "     * InsertLines - Insert text at a given line of a file.\n"
        "   * **Parallel Tool Calls:** When more than one tool call can be performed at once, "
        "combine them into one response.\n\n"
        "4. **Verify Changes**\n"
        "   * **Find Tests:** Use the search and read functions from step 2 to find the specs "
        "that cover the code you changed.\n"
        "   * Always call `RunTests` with **all** relevant test file paths in one go.\n"
        "   * **Other Commands:** Use Bash for the Gradle tasks that are not tests (build, "
        "ktlintCheck, apiCheck, benchmarks) and for git. Do not start servers or anything "
        "interactive.\n\n"
        "5. **Modify Tests**\n"
        "   * Update existing specs to match code changes and add specs for new behaviour, "
        "including edge cases and error conditions.\n\n"
        "6. **Report and Iterate**\n"
        "   * Tell the developer what you found, what you changed and what you decided, "
        f"through {SEND}, and continue when they answer.\n\n"
        "7. **Complete Task**\n"
        "   * Use Finish only when all changes are done and verified with passing tests; "
        "explain why the task is complete and how it was verified. Use Reject if the task "
        "cannot be done.\n\n"
        "# Important Guidelines\n\n"
        "* **Focus on the Specific Task**\n"
        "  - Implement requirements exactly as specified, without additional changes.\n"
        "  - Do not modify code unrelated to the task.\n\n"
        "* **Developer Instructions**\n"
        "  - Rules the developer gives hold for the rest of the session unless they lift "
        "them.\n"
        "  - When they change a value or a decision, use the new one from then on.\n\n"
        "* **Code Context and Changes**\n"
        "  - Limit code changes to files you have viewed.\n"
        "  - If you need to examine more code, use ReadFile or ViewCode to see it.\n\n"
        "* **State Management**\n"
        "  - Keep a detailed record of all code you have viewed and actions you have taken.\n"
        "  - Before performing a new action, review your history to avoid repeating steps.\n\n"
        "* **Never Guess**\n"
        "  - Do not guess line numbers, file contents or command output. Look them up.\n\n"
        "* **Simultaneous Actions**\n"
        "  - When the situation permits, perform multiple tool calls in one response, for "
        "example several UpdateTask calls, or a ReadFile of every file you need next.\n\n"
        "# Tool Notes for This Repository\n\n"
        "* The code index is built from Python and Java sources only. SemanticSearch, "
        "FindClass and FindFunction find nothing in Kotlin files, and FindCodeSnippet cannot "
        "show Kotlin matches; search Kotlin with GrepTool (include '*.kt') and find files with "
        "GlobTool.\n"
        "* StringReplace only edits files that are in the file context. A ReadFile does not "
        "add a Kotlin file to it: open a file you are going to edit with ViewCode, giving only "
        "its file_path, which shows the whole file and adds it.\n"
        "* old_str must match one place in the file exactly, indentation included. Kotlin "
        "files are indented with four spaces.\n"
        "* RunTests takes spec files (src/test/kotlin/.../*Spec.kt), not directories or test "
        "names, and runs each of them through Gradle; the output lists every failing test "
        "with its assertion message and stack, then a summary per file and a total.\n"
        "* Bash returns the output of the command, stdout and stderr together, without an "
        "exit status. For Gradle, the last lines say BUILD SUCCESSFUL or BUILD FAILED; a "
        "compiler error starts with 'e: ' and names the file, line and column.\n"
        "* Run Gradle through the wrapper (./gradlew), never a system Gradle. Do not use "
        "--no-daemon or --offline unless told to; do not delete the build directory or the "
        "Gradle caches.\n"
        "* Use git through Bash for history and for moving or deleting files (git mv, git rm), "
        "so the index stays consistent. Never commit, push, rebase or change branches: the "
        "developer reviews the working tree and commits.\n"
        "* Task ids are short and lowercase with dashes. Set priorities in steps of ten in the "
        "order the work should happen, so new tasks can go in between.\n\n"
        "# Kotlin Conventions\n\n"
        "* Follow the existing style; ktlint (the ktlint_official code style) runs on every "
        "build. No wildcard imports, trailing commas on multiline parameter lists.\n"
        "* Structured concurrency only: launch coroutines from a scope that is cancelled with "
        "its owner; suspend functions must not block a thread.\n"
        "* Prefer immutable data classes and sealed results over exceptions for expected "
        "failures; keep nullability explicit.\n"
        "* Configuration comes from application.conf through the Settings class; do not read "
        "environment variables elsewhere.\n"
        "* Specs use kotest's FunSpec and shouldBe matchers; fixtures live under "
        "src/test/resources.\n\n"
        "# Project\n\n"
        f"{PROJECT} is a webhook relay written in Kotlin 2.1 for JVM 21, on Ktor 3 with a "
        "Postgres outbox (HikariCP), built with Gradle 8.12 (Kotlin DSL, the wrapper is "
        f"checked in).\n"
        f"* Sources: {SRC}; configuration: src/main/resources/application.conf (HOCON).\n"
        f"* Specs: kotest 5 FunSpec classes on the JUnit 5 platform under {TESTS}; RunTests "
        "runs them through Gradle.\n"
        f"* `{BUILD}` compiles and checks without the tests; `./gradlew ktlintCheck` lints; "
        "`./gradlew apiCheck` guards the public API (binary-compatibility-validator); "
        "benchmarks are kotlinx-benchmark configurations under src/benchmark/kotlin.\n"
        "* Commit messages follow Conventional Commits."
    )
    src = SRC
    ext = "kt"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "./gradlew run --args='replay --queue {module} --dry-run'",
        "./gradlew ktlintCheck",
        "./gradlew apiCheck",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("delivery dispatcher parallelism", "8 workers", "96 workers", "24 workers"),
        ("Ktor client request timeout", "3 seconds", "75 seconds", "20 seconds"),
        ("HikariCP maximum pool size", "5 connections", "60 connections", "18 connections"),
        ("consumer max.poll.records", "50 records", "2000 records", "400 records"),
        ("parked delivery retention", "2 days", "45 days", "14 days"),
        ("relay JVM heap ceiling", "-Xmx512m", "-Xmx6g", "-Xmx2g"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a GlobalScope.launch loop that polls the outbox table",
         "a Quartz scheduler job",
         "coroutines launched in GlobalScope die with the pod and nobody notices",
         "a Kubernetes CronJob that runs the relay's drain command",
         "Quartz wants its own tables and a cluster lock we would have to operate"),
        ("Exposed DAO entities for the parked deliveries",
         "jOOQ with generated records",
         "the DAO layer loads whole rows where we only need ids and timestamps",
         "plain JDBC through the existing HikariDataSource",
         "jOOQ's code generation needs a live database in CI"),
        ("kotlinx.serialization with a sealed class hierarchy",
         "Jackson with the Kotlin module",
         "the polymorphic class discriminator breaks the partners' parsers",
         "Protocol Buffers generated by Wire",
         "Jackson's reflection is the hottest frame in the flame graph"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "lanternfish stopped redelivering webhooks: whatever {module} parks while a "
            "partner is down stays parked forever, even after the partner is back. Can you fix "
            "the redelivery so parked deliveries go out again, oldest first? {other} goes "
            "through the same path and is just as stuck.",
            "Since the 2.4 release nothing that {module} parks is ever retried. Please find out "
            "why and make the relay redeliver them in the order they were parked. {other} "
            "shares that code, fix it there as well.",
        ],
        "set_value": [
            "OK with the tasks. Use {value} for the {key} to begin with.",
            "Right, and the {key} should start at {value}.",
        ],
        "ack": [
            "Understood, that applies from here on.",
            "Noted. I'll stick to that in everything I change.",
            "Got it, I'll hold every change to that.",
        ],
        "constraint": [
            "A house rule in lanternfish: {rule}.",
            "Also, and this is not negotiable: {rule}.",
            "Keep this in mind: {rule}.",
        ],
        "plan": [
            "My plan: {plan}, so that whatever {module} parks is picked up again after a restart.",
            "I'm going to build the redelivery on {plan}; {module}'s parked deliveries will be "
            "found again that way.",
        ],
        "change_value": [
            "Make the {key} {new} instead of {old}, {old} is too tight for the slow partners.",
            "Let's not do {old} for the {key}; set it to {new}.",
            "Ops says {old} as the {key} keeps tripping alerts. Use {new}.",
        ],
        "change_again": [
            "Sorry, the {key} once more: {old} starves the other tenants. Go with {new}.",
            "The load test didn't like {old} for the {key} either. Make it {new} and that's final.",
        ],
        "ack_value": [
            "Noted: {new} for the {key}. I'll set it in src/main/resources/application.conf.",
            "Switching the {key} to {new}; application.conf gets the new value.",
        ],
        "reverse": [
            "Change of plan: not {old}, because {why}. I'll use {new} instead.",
            "I'm abandoning {old}: {why}. Going with {new}.",
        ],
        "reverse_again": [
            "{old} won't work either: {why}. Switching to {new}.",
            "Another change: {why}, so {old} is out as well. The plan is now {new}.",
        ],
        "question": [
            "Which commit broke this? Find its hash, I need it for the incident report.",
            "Can you track down the commit that introduced the regression? Keep the hash, it "
            "goes in the postmortem.",
        ],
        "commit": [
            "build: bump Kotlin to 2.1.20",
            "test: share the fake partner server between specs",
            "docs: explain the replay CLI flags",
            "ci: cache the Gradle wrapper and dependencies",
        ],
        "answer": [
            "It's {sha}: that commit moved delivery onto the shared Ktor HttpClient, and the "
            "HttpRequestRetry plugin was not installed on it.",
            "The regression came with {sha}, the switch to the shared HttpClient, which lost "
            "the HttpRequestRetry plugin.",
        ],
        "measure_question": [
            "How long does draining one batch take? Run the kotlinx-benchmark suite for it and "
            "give me the average; I need that number for the capacity plan, so hang on to it.",
            "Please benchmark draining a single batch and tell me the average time per "
            "operation. Keep the figure, it goes into the design review.",
        ],
        "measure_answer": [
            "kotlinx-benchmark puts draining one batch at {figure} µs/op on average.",
            "Draining a single batch averages {figure} µs/op according to kotlinx-benchmark.",
        ],
        "last": [
            "Here's where it stands: {test} still fails, and the task I'm on is to {todo}. "
            "The rest of the task list is completed, deleted or waiting its turn.",
            "Status: `{test}` is the one failing spec left, and I'm working on the task to "
            "{todo}. ListTasks has the other tasks, none of them in progress.",
        ],
        # The user's go-ahead after the agent's message ended its turn.
        "nudge": [
            "Fine, go on.",
            "Sounds right. Continue.",
            "OK, keep going.",
            "Yes, carry on with that.",
        ],
        # The agent ends its turn to let the user speak: where it got to.
        "interim": [
            "Pausing here. Last step: {step}. Tell me if anything should change.",
            "Quick checkpoint: I {step} and will continue from there.",
        ],
        # What the agent notes on a task it completes or drops.
        "done": [
            "Done; the change is in the working tree.",
            "Finished, the specs around it were rerun.",
        ],
        "dropped": [
            "Not needed any more, dropping it.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._ids = 0  # tool call ids, counted over the whole history
        self._pending: list[str] = []  # words for the user, said with the next SendMessage
        self._turn = "closed"  # "closed": a SendMessage ended it; "open": the agent acts
        self._acted = False  # the agent has called a tool since the last user message
        self._step = ""  # the last thing the agent did, for a checkpoint message
        self._seen: dict[str, list[str]] = {}  # file → its lines as last viewed or written
        self._viewed: set[str] = set()  # files in the file context (ViewCode, CreateFile)
        self._searched = False  # the index searches were tried once
        self._grepped = False
        self._tasks: dict[str, dict[str, Any]] = {}  # description → {id, priority, state}
        self._failed_before: list[str] = []

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{camel(stem)}.kt"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{camel(module)}Spec > {SPECS[name.removeprefix(f'test_{module}_')][0]}"

    # --- the conversation -----------------------------------------------------------------

    def _calls(self, calls: Sequence[tuple[str, dict[str, Any], str]], *,
               filler: bool = False) -> None:  # fmt: skip
        """One node's tool calls in one assistant message, then their observations."""
        self._open_turn()
        messages = self.s.messages
        ids = []
        for _ in calls:
            self._ids += 1
            ids.append(f"tool_{self._ids}")
        tool_calls = [
            {"id": ident, "type": "function", "function": {"name": name, "arguments": dump(args)}}
            for ident, (name, args, _) in zip(ids, calls, strict=True)
        ]
        messages.append({"role": "assistant", "tool_calls": tool_calls})
        if filler:
            self.s.filler_at.add(len(messages) - 1)
        for ident, (_, _, result) in zip(ids, calls, strict=True):
            messages.append({"role": "tool", "tool_call_id": ident, "content": blocks(result)})
            if filler:
                self.s.filler_at.add(len(messages) - 1)
        self._acted = True

    def _call(self, name: str, arguments: dict[str, Any], result: str, *,
              filler: bool = False) -> None:  # fmt: skip
        self._calls([(name, arguments, result)], filler=filler)

    def _open_turn(self) -> None:
        """Before the agent acts: words it still owes the user end its turn first, and a turn
        a SendMessage ended goes on only once the user answers."""
        if self._pending:
            self._send("\n\n".join(self._pending))
        if self._turn == "closed" and self.s.messages:
            self.s.messages.append({"role": "user", "content": blocks(self.phrase("nudge"))})
            self._acted = False
        self._turn = "open"

    def _send(self, message: str) -> None:
        """A SendMessage call: the agent's words to the user, echoed as its observation; the
        turn ends with it."""
        self._pending = []
        self._ids += 1
        ident = f"tool_{self._ids}"
        thoughts = "Telling the developer." if len(message) < 200 else "Reporting back."
        arguments = {"thoughts": thoughts, "message": message}
        self.s.messages.append(
            {"role": "assistant", "tool_calls": [
                {"id": ident, "type": "function",
                 "function": {"name": SEND, "arguments": dump(arguments)}}]}
        )  # fmt: skip
        self.s.messages.append({"role": "tool", "tool_call_id": ident, "content": blocks(message)})
        self._turn = "closed"

    def _thoughts(self, tool: str, name: str) -> str:
        return self.pick(_THOUGHTS[tool]).format(name=name)

    def user(self, text: str) -> None:
        if self._pending:
            self._send("\n\n".join(self._pending))
        elif self._turn == "open":
            # The agent has to hand the turn back before the user can write.
            if self._acted:
                self._send(self.phrase("interim", step=self._step))
            else:
                self._send(self.phrase("ack"))
        self.s.messages.append({"role": "user", "content": blocks(text)})
        self._turn = "open"
        self._acted = False

    def say(self, text: str) -> None:
        self._pending.append(text)

    def finish(self, text: str) -> None:
        self._send("\n\n".join([*self._pending, text]))

    # --- Kotlin source --------------------------------------------------------------------

    def _render(self, content: str) -> list[str]:
        """A file the story describes, as the Kotlin file it stands for: the package and its
        imports, Kotlin of about as many lines as the story's filler, then the story's own
        lines."""
        body = content.split("\n")
        story = [kt_line(x) for x in body if STORY_LINE.match(x)]
        size = sum(1 for x in body if not STORY_LINE.match(x))
        return [*_HEAD, *self._kotlin(size), *(["", *story] if story else []), ""]

    def _kotlin(self, lines: int, *, exact: bool = False) -> list[str]:
        """Kotlin made of filler words only (data classes, extension functions, Ktor calls),
        whole declarations of about `lines` lines (`exact`: just as many, padded)."""
        out: list[str] = []
        while len(out) < lines - (10 if exact else 0):
            out += self._declaration(self.rng.randrange(4))
        while exact and len(out) + 3 <= lines:
            out += self._declaration(2)
        return out + [""] * (lines - len(out)) if exact else out

    def _declaration(self, kind: int) -> list[str]:
        """One declaration: a data class, a filtering function, an extension, a Ktor call."""
        a, b, c = self.rng.sample(_WORDS, 3)
        big, small = self.rng.choice((64, 128, 256, 500, 1000)), self.rng.randint(2, 90)
        if kind == 0:
            return [f"/** One {b} line of a {a}, as the partner API returns it. */",
                    "@Serializable", f"data class {camel(a)}{camel(b)}(", "    val id: Long,",
                    f"    val {a}Id: String,", f"    val {b}: String? = null,",
                    f"    val {c}Count: Int = {small},",
                    "    val createdAt: Instant = Instant.EPOCH,", ")", ""]  # fmt: skip
        if kind == 1:
            return [f"fun {a}{camel(b)}({a}: {camel(a)}, {b}: String? = null): List<String> {{",
                    f'    val key = {b} ?: "{c}"',
                    f'    require({a}.items.size <= {big}) {{ "too many {a} items: '
                    f'${{{a}.items.size}}" }}',
                    f"    return {a}.items", f"        .filter {{ it.{b} == key }}",
                    "        .sortedBy { it.createdAt }", "        .map { it.id }", "}",
                    ""]  # fmt: skip
        if kind == 2:
            return [f"private fun {camel(a)}.{c}Totals(): Map<String, Int> =",
                    f"    items.groupBy {{ it.{c} }}.mapValues {{ (_, v) -> v.sumOf "
                    f"{{ it.{b}Count }} }}", ""]  # fmt: skip
        return [f"internal suspend fun {a}{camel(c)}Batch(client: HttpClient, "
                "ids: List<Long>): Int {", "    if (ids.isEmpty()) return 0",
                f'    val response = client.get("/v2/{a}s/{c}?limit={big}&page='
                '${ids.first()}")', "    return when (response.status.value) {",
                "        in 200..299 -> ids.size", "        404 -> 0",
                f'        else -> error("{b} lookup failed: ${{response.status}}")',
                "    }", "}", ""]  # fmt: skip

    # --- tools ----------------------------------------------------------------------------

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        name = path.rsplit("/", 1)[-1]
        if filler and self.rng.random() < 0.75:
            arguments = {"thoughts": self._thoughts("ReadFile", name), "file_path": path,
                         "start_line": None, "end_line": None}  # fmt: skip
            text = "\n".join(lines[:200])
            self._call("ReadFile", arguments, f"```{path}\n{text}\n```", filler=filler)
            self._step = f"read {path}"
            return
        if not filler and not self._searched:
            self._find(path)
        self._view(path, filler=filler)

    def _find(self, path: str) -> None:
        """The first look for a file: the index knows no Kotlin, a glob finds it."""
        self._searched = True
        name = path.rsplit("/", 1)[-1].removesuffix(".kt")
        self._call("FindClass", {"thoughts": f"Looking for the {name} code first.",
                                 "file_pattern": None, "class_name": name}, NO_HITS)  # fmt: skip
        pattern = f"**/{name}.kt"
        self._call("GlobTool", {"thoughts": "The code index has nothing for Kotlin files; "
                                "finding the file by name instead.",
                                "pattern": pattern, "max_results": 10},
                   f"Found 1 files matching glob pattern '{pattern}':\n\n📄 {path}\n")  # fmt: skip

    def _view(self, path: str, *, filler: bool = False) -> None:
        name = path.rsplit("/", 1)[-1]
        files: list[dict[str, object]] = [
            {"file_path": path, "start_line": None, "end_line": None, "span_ids": []}
        ]
        code = "\n".join(self._seen[path])
        result = f"{VIEWED}\n{path}\n```\n{code}\n```\n"
        self._call("ViewCode", {"thoughts": self._thoughts("ViewCode", name), "files": files},
                   result, filler=filler)  # fmt: skip
        if not filler:
            self._viewed.add(path)
        self._step = f"viewed {path}"

    def _locate(self, path: str, before: str) -> None:
        """The compiler named a line of a file not opened yet: the file, with that line."""
        stem = path.rsplit("/", 1)[-1].removesuffix(".kt")
        lines = [*_HEAD, *self._kotlin(85 - len(_HEAD), exact=True)]
        name = lower_camel(stem)
        lines += [f"suspend fun drain{camel(stem)}(batches: List<Batch>) {{",
                  "    for (batch in batches) {", before, "    }", "}", "",
                  *self._kotlin(30)]  # fmt: skip
        self._seen[path] = lines
        assert lines[87] == before, name
        self._view(path)

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = kt_line(old), kt_line(new)
        if path not in self._viewed or before not in self._seen.get(path, []):
            if before not in self._seen.get(path, []):
                self._locate(path, before)
            else:
                self._view(path)
        lines = self._seen[path]
        start = lines.index(before) + 1
        lines = [*lines[: start - 1], after, *lines[start:]]
        self._seen[path] = lines
        # `StringReplace.execute`: four lines before, four after, numbered from start + 1.
        first = max(0, start - 4 - 1)
        last = start + 4 + after.count("\n")
        snippet = "\n".join(f"{k + start + 1:6}\t{line}"
                            for k, line in enumerate(lines[first:last]))  # fmt: skip
        result = (
            f"The file {path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of {path}:\n{snippet}\n{EDITED_TAIL}"
        )
        arguments = {"thoughts": f"Replacing `{before.strip()}` in {path.rsplit('/', 1)[-1]}.",
                     "path": path, "old_str": before, "new_str": after}  # fmt: skip
        self._call("StringReplace", arguments, result)
        self._step = f"edited {path}"

    def create(self, path: str, content: str) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        self._viewed.add(path)
        arguments = {"thoughts": f"Adding {path.rsplit('/', 1)[-1]} for the new code.",
                     "path": path, "file_text": "\n".join(lines)}  # fmt: skip
        self._call("CreateFile", arguments, f"File created successfully at: {path}")
        self._step = f"created {path}"

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command == TESTS_COMMAND:
            self._run_tests(output)
            return
        if output and not output.endswith("\n"):
            output += "\n"  # a command's output ends its last line
        name = f"`{command}`"
        arguments = {"thoughts": self._thoughts("Bash", name), "command": command}
        self._call("Bash", arguments, output, filler=filler)
        self._step = f"ran {name}"

    def _run_tests(self, output: str) -> None:
        files = [f"{TESTS}/{spec}.kt" for spec in self._spec_names]
        arguments = {"thoughts": "Running every spec that covers the relay in one go.",
                     "test_files": files}  # fmt: skip
        self._call("RunTests", arguments, output)
        self._step = "ran the specs"

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'\n")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "src/test/resources/golden/", 1)
        destination = destination.replace("testdata/", "src/test/resources/golden/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv -v {source} {destination}",
                   f"Renaming {source} to {destination}\n")  # fmt: skip

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        parsed = [hit.split(":", 2) for hit in hits]
        if not self._grepped:
            # Moatless cannot span lines of an unparsed file: the snippet search finds the
            # files (at most ten matches) and reports no match in them.
            self._grepped = True
            function = parsed[0][2].strip().split("(", 1)[0]
            matched = [p for p, _, text in parsed if text.strip().startswith(f"{function}(")]
            files = len(set(matched[:10]))
            called = lower_camel(function)
            arguments: dict[str, object] = {"thoughts": f"Looking for the calls of {called}.",
                         "file_pattern": "*.kt", "code_snippet": f"{called}("}  # fmt: skip
            self._call("FindCodeSnippet", arguments, f"\nFound no matches in {files} files.",
                       filler=filler)  # fmt: skip
        by_file: dict[str, list[tuple[int, str]]] = {}
        for path, line, text in parsed:
            function, _, argument = text.strip().rstrip(")").partition("(")
            code = f"val {lower_camel(function)}s = {lower_camel(function)}({argument})"
            by_file.setdefault(path, []).append((int(line), code))
        include = "*.kt"
        out = [f"Found {len(parsed)} matches for regex pattern '{pattern}' in files matching "
               f"'{include}'", ""]  # fmt: skip
        for path in sorted(by_file):
            out.append(f"📄 {path}")
            out += [f"    Line {at}: {code}" for at, code in sorted(by_file[path])]
            out.append("")
        arguments = {"thoughts": self._thoughts("GrepTool", pattern), "pattern": pattern,
                     "include": include, "max_results": 100}  # fmt: skip
        self._call("GrepTool", arguments, "\n".join(out) + "\n", filler=filler)
        self._step = f"searched for {pattern}"

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted({p.removeprefix(f"{root}/") for p in paths})
        if self.rng.random() < 0.5:
            pattern = f"{root}/*.kt"
            found = names[:50]
            text = f"Found {len(found)} files matching glob pattern '{pattern}':\n\n"
            text += "".join(f"📄 {root}/{name}\n" for name in found)
            arguments = {"thoughts": self._thoughts("GlobTool", root), "pattern": pattern,
                         "max_results": 50}  # fmt: skip
            self._call("GlobTool", arguments, text, filler=filler)
        else:
            text = f"Contents of directory '{root}'\n\nDirectories:\n📁 config\n📁 http\n\n"
            text += "Files:\n" + "".join(f"📄 {name}\n" for name in names)
            arguments = {"thoughts": self._thoughts("ListFiles", root), "directory": root,
                         "recursive": False, "max_results": 100, "show_hidden": False}  # fmt: skip
            self._call("ListFiles", arguments, text, filler=filler)
        self._step = f"listed {root}"

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        """Moatless tasks: created with an id and a priority, later completed or deleted;
        `open` is the only other state, so the task worked on is the open one first in
        priority order (the story's list is in that order)."""
        state = {"pending": "open", "in_progress": "open", "completed": "completed",
                 "cancelled": "deleted"}  # fmt: skip
        new = [text for text, _ in items if text not in self._tasks]
        calls: list[tuple[str, dict[str, Any], str]] = []
        for text, status in items:
            task = self._tasks.get(text)
            if task is None or task["state"] == state[status]:
                continue
            done = status == "completed"
            result = self.phrase("done" if done else "dropped")
            arguments = {"thoughts": f"Task {task['id']} is {'done' if done else 'dropped'}.",
                         "task_id": task["id"], "state": state[status], "result": result,
                         "priority": None}  # fmt: skip
            answer = (f"Updated task {task['id']}: state from '{TASK_STATE[task['state']]}' to "
                      f"'{TASK_STATE[state[status]]}', result to '{result}'")  # fmt: skip
            task["state"] = state[status]
            calls.append(("UpdateTask", arguments, answer))
        if new:
            taken = [t["id"] for t in self._tasks.values()]
            first = 10 * (len(self._tasks) + 1)
            created = []
            for k, text in enumerate(new):
                ident = slug(text, taken)
                taken.append(ident)
                self._tasks[text] = {"id": ident, "priority": first + 10 * k, "state": "open"}
                created.append({"id": ident, "content": text, "priority": first + 10 * k})
            rows = "\n".join(f"- {t['id']} (priority: {t['priority']}): {t['content']}"
                             for t in created)  # fmt: skip
            thoughts = "One more task came up." if first > 10 else "Breaking the work into tasks."
            calls.append(("CreateTasks", {"thoughts": thoughts, "tasks": created},
                          f"Created {len(created)} tasks:\n{rows}"))  # fmt: skip
        self._calls(calls)
        self._step = "updated the task list"

    # --- what the commands print ----------------------------------------------------------

    def _gradle_done(self, tasks: Sequence[str], executed: int, up_to_date: int) -> list[str]:
        seconds = self.rng.randint(3, 40)
        return [
            *(f"> Task {t}" for t in tasks),
            "",
            f"BUILD SUCCESSFUL in {seconds}s",
            f"{executed + up_to_date} actionable tasks: {executed} executed, {up_to_date} "
            "up-to-date",
        ]

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 80)
            lines = self._gradle_done(
                [
                    ":checkKotlinGradlePluginConfigurationErrors",
                    ":processResources UP-TO-DATE",
                    ":compileKotlin",
                    ":compileJava NO-SOURCE",
                    ":classes",
                    ":run",
                ],
                3,
                1,
            )
            app = [
                f"{self.rng.randint(10, 23)}:{self.rng.randint(10, 59)}:{self.rng.randint(10, 59)}"
                f".{self.rng.randint(100, 999)} [main] INFO  {PACKAGE}.cli.Replay - dry run, "
                "nothing will be sent",
                f"tenant      parked  due now\nacme        {parked:<7} 0\nnorthwind   "
                f"{parked // 4:<7} 0",
                f"total parked: {parked + parked // 4}, due for redelivery: 0",
            ]  # fmt: skip
            return "\n".join([*lines[:6], *app, *lines[6:]]) + "\n"
        if k == 1:
            tasks = [":ktlintKotlinScriptCheck", ":ktlintMainSourceSetCheck",
                     ":ktlintTestSourceSetCheck", ":ktlintCheck"]  # fmt: skip
            return "\n".join(self._gradle_done(tasks, 3, 1)) + "\n"
        tasks = [":checkKotlinGradlePluginConfigurationErrors", ":compileKotlin UP-TO-DATE",
                 ":jar UP-TO-DATE", ":apiBuild", ":apiCheck"]  # fmt: skip
        return "\n".join(self._gradle_done(tasks, 2, 3)) + "\n"

    def build_error(self, module: str) -> tuple[str, str, str]:
        path = f"{SRC}/{self.file_name(module)}"
        message = "No value passed for parameter 'tenantId'."
        column = len(kt_line(f"{module}_send(batch)")) - len("(batch)") + 1
        lines = [
            "> Task :checkKotlinGradlePluginConfigurationErrors",
            "> Task :processResources UP-TO-DATE",
            "",
            "> Task :compileKotlin FAILED",
            f"e: file:///workspace/{PROJECT}/{path}:88:{column} {message}",
            "",
            "FAILURE: Build failed with an exception.",
            "",
            "* What went wrong:",
            "Execution failed for task ':compileKotlin'.",
            "> A failure occurred while executing org.jetbrains.kotlin.compilerRunner."
            "GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction",
            "   > Compilation error. See log for more details",
            "",
            "* Try:",
            "> Run with --stacktrace option to get the stack trace.",
            "> Run with --info or --debug option to get more log output.",
            "> Run with --scan to get full insights.",
            "> Get more help at https://help.gradle.org.",
            "",
            f"BUILD FAILED in {self.rng.randint(5, 19)}s",
            "2 actionable tasks: 1 executed, 1 up-to-date",
        ]
        return "\n".join(lines) + "\n", message.removesuffix("."), BUILD

    def build_ok(self) -> str:
        tasks = [":checkKotlinGradlePluginConfigurationErrors", ":processResources UP-TO-DATE",
                 ":compileKotlin", ":compileJava NO-SOURCE", ":classes", ":jar",
                 ":apiBuild", ":apiCheck", ":ktlintMainSourceSetCheck", ":ktlintCheck",
                 ":assemble", ":check", ":build"]  # fmt: skip
        return "\n".join(self._gradle_done(tasks, 7, 2)) + "\n"

    def measurement(self, figure: str) -> tuple[str, str]:
        score = f"{figure}{self.rng.randint(0, 9)}"
        mean = float(figure)
        error = f"{mean * self.rng.randint(8, 30) / 1000:.3f}"
        runs = [f"Warm-up #{k}: {mean * (1 + (3 - k) / 40):.3f} us/op" for k in range(3)]
        runs += [f"Iteration #{k}: {mean * (1 + (k - 2) / 300):.3f} us/op" for k in range(5)]
        lines = [
            "> Task :checkKotlinGradlePluginConfigurationErrors",
            "> Task :compileKotlin UP-TO-DATE",
            "> Task :benchmarkBenchmarkCompile",
            "> Task :mainDrainBenchmarkGenerate",
            "> Task :mainDrainBenchmarkCompile",
            "> Task :mainBenchmarkJar",
            "",
            "> Task :mainDrainBenchmark",
            "Running 'drain' benchmarks for 'main'",
            f"… {PACKAGE}.bench.DrainBenchmark.drainOneBatch",
            "",
            *runs,
            f"  Success: {score} ±(99.9%) {error} us/op",
            "",
            "drain summary:",
            "Benchmark                      Mode  Cnt    Score   Error  Units",
            f"DrainBenchmark.drainOneBatch   avgt    5  {score} ± {error}  us/op",
            "",
            f"BUILD SUCCESSFUL in 1m {self.rng.randint(10, 59)}s",
            "7 actionable tasks: 5 executed, 2 up-to-date",
        ]
        return "\n".join(lines) + "\n", BENCH

    def test_command(self) -> str:
        return TESTS_COMMAND

    def test_counts(self, failed: int, passed: int) -> str:
        return f"Total: {passed} passed, {failed} failed, 0 errors, 0 skipped."

    @property
    def _spec_names(self) -> list[str]:
        return sorted({t.split(" > ", 1)[0] for t in self._failed_before} | set(OTHER_SPECS))

    def _failure(self, test: str) -> str:
        spec, name = test.split(" > ", 1)
        key = next(k for k, v in SPECS.items() if v[0] == name)
        _, message, at = SPECS[key]
        lambda_ = f"{PACKAGE}.{spec}$1${list(SPECS).index(key) + 2}"
        return "\n".join(
            [
                f"{spec} > {name} FAILED",
                f"    org.opentest4j.AssertionFailedError: {message}",
                f"        at app//{lambda_}.invokeSuspend({spec}.kt:{at})",
                f"        at app//{lambda_}.invoke({spec}.kt)",
                "        at app//io.kotest.core.spec.style.scopes.FunSpecRootScope$test$1."
                "invokeSuspend(FunSpecRootScope.kt:42)",
                *(f"        at app//io.kotest.engine.{frame}" for frame in _KOTEST_FRAMES),
                "        at app//kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:104)",
                "        at app//kotlinx.coroutines.EventLoopImplBase.processNextEvent"
                "(EventLoop.common.kt:277)",
                "        at app//kotlinx.coroutines.BlockingCoroutine.joinBlocking(Builders.kt:95)",
                "        at app//kotlinx.coroutines.BuildersKt__BuildersKt.runBlocking"
                "(Builders.kt:69)",
            ]
        )

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        groups: dict[str, list[str]] = {}
        for test in named:
            spec, name = test.split(" > ", 1)
            groups.setdefault(spec, []).append(name)
        filled = filled_groups(groups, [s for s in OTHER_SPECS if s not in groups],
                               failed + passed, _PASSING)  # fmt: skip
        order = sorted(filled)  # the runtime's results come back spec by spec
        details = [f"* {TESTS}/{spec}.kt\n```\n{self._failure(f'{spec} > {name}')}\n```\n"
                   for spec, names in order for name in names
                   if f"{spec} > {name}" in failing]  # fmt: skip
        rows = []
        for spec, names in order:
            bad = sum(f"{spec} > {name}" in failing for name in names)
            rows.append(f"* {TESTS}/{spec}.kt: {len(names) - bad} passed, {bad} failed, "
                        "0 errors, 0 skipped")  # fmt: skip
        text = f"\n{chr(10).join(details)}" if details else ""
        return f"{text}\n" + "\n".join(rows) + f"\n\n{self.test_counts(failed, passed)}"
