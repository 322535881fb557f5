"""A Cline-over-MCP family, telling the story's second-thoughts variant: a Racket service
(`sandpiper`, a webhook relay: info.rkt, `raco make`, rackunit tests run by `raco test`,
`raco exe`, `raco setup`, a benchmark script timed with `time` for the variant's figure) worked
on by Cline in its classic XML tool protocol, acting only through two MCP servers: the
official filesystem server (@modelcontextprotocol/server-filesystem) and g0t4's
mcp-server-commands for every command. Cline talks to Claude natively: the benchmark measures
this family as Anthropic Messages too (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`).

Verified in cline/cline at v3.39.2 (the last 3.x release, XML protocol; `fetch`ed snapshot):
- A tool use is XML in the assistant's own text, one per message, a parameter per tag
  (`src/core/prompts/system-prompt/`): `<use_mcp_tool>` with `<server_name>`, `<tool_name>`
  and `<arguments>` holding a JSON object; `<ask_followup_question>` {question};
  `<attempt_completion>` {result}. Any of them may carry `<task_progress>`, the focus chain's
  Markdown checklist ("- [ ]" open, "- [x]" done: no other state, so a dropped item is left
  out of the next list), sent whole whenever it changes.
- The result comes back in the next user message, as text blocks: `UseMcpToolHandler`
  joins the server's text contents with blank lines, puts "Error:\\n" first when the server
  flags an error, and `ToolResultUtils.pushToolResult` writes "[use_mcp_tool for
  '<server>'] Result:\\n…"; the `<environment_details>` block `getEnvironmentDetails` builds
  (visible files, open tabs, current time, mode; the first message adds the working
  directory's files) closes every user message. The task arrives as "<task>\\n…\\n</task>".
- The user's later words: typed while approving a tool (`askApprovalAndPushFeedback`), a
  block "The user provided the following feedback:\\n<feedback>\\n…\\n</feedback>" before
  the tool's result; after an `attempt_completion` ("[attempt_completion] Result: Done",
  "The user has provided feedback on the results. …", "<feedback>\\n…\\n</feedback>"); as the
  answer to a follow-up question ("[ask_followup_question for '<question>'] Result:\\n
  <answer>\\n…\\n</answer>").
- The focus chain's prompts (`src/core/task/focus-chain/`): "# task_progress RECOMMENDED"
  until a list exists, and, after six requests without one (`remindClineInterval`), "# TODO
  LIST UPDATE REQUIRED" with the progress count, the current list and a note by percentage,
  as a text block before the environment details (the template's tab indentation kept).

Verified in modelcontextprotocol/servers at 76d64c82 (`src/filesystem/index.ts`, `lib.ts`):
`read_text_file` {path, head, tail} answers the text; `read_multiple_files` {paths} answers
"<path>:\\n<content>\\n" per file joined by "\\n---\\n"; `write_file` {path, content}:
"Successfully wrote to <path>"; `edit_file` {path, edits: [{oldText, newText}], dryRun}:
jsdiff's `createTwoFilesPatch` ("Index:", the "=" rule, "--- <path>\\toriginal", "+++
<path>\\tmodified", hunks with four lines of context) fenced as ```diff and followed by a
blank line; `create_directory` {path}, `move_file` {source, destination} ("Successfully
created directory …", "Successfully moved … to …"); `list_directory` {path}: "[FILE] x" /
"[DIR] x" rows; `search_files` {path, pattern}: a glob's full paths; `get_file_info` {path}:
`key: value` rows of size, created, modified, accessed (a JavaScript Date's string),
isDirectory, isFile, permissions.

Verified in g0t4/mcp-server-commands at bc62283f (0.8.2, `src/tools.ts`, `messages.ts`):
one tool, `run_process` {command_line or argv, cwd, stdin_text, timeout_ms}; its result is
text contents EXIT_CODE (always), STDOUT and STDERR (each when not empty), flagged as an
error when the exit code is not 0. Cline keeps only their texts, so stdout and stderr reach
the model apart. Deletions are `git rm` through it, text searches `grep -rn`.

This family's own reading, where no source says more (not verified): the system prompt's
wording beyond the lines quoted above (the tool list and the servers' schemas folded into a
few lines, the project's .clinerules in it); the project; both sides' wording; that the user
approves each tool by hand; how the environment details list the project's files (sorted,
folders marked "/"); the time zone. Racket's output from memory: `raco make`'s
"<file>:<line>:<col>: tenant-id: unbound identifier" with "  in:" and "  compilation
context...:" (the column 0-based); rackunit's FAILURE blocks between "--------------------"
rules (test name, name:, location:, actual:, expected:) on stderr; raco test's "raco test:
\\"<file>\\"" lines and its "N/M test failures" / "M tests passed" summary on stdout;
`raco setup`'s progress lines; `time`'s "cpu time: … real time: … gc time: …".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice

PROJECT = "sandpiper"
ROOT = f"/home/dev/{PROJECT}"
SRC = "private"
#: The servers as cline_mcp_settings.json names them.
FS = "filesystem"
SH = "mcp-server-commands"
BUILD = "raco make main.rkt"
TESTS_COMMAND = "raco test tests"
BENCH = "racket bench/drain.rkt"
#: Cline's answers around the results it passes on.
FEEDBACK = "The user provided the following feedback:\n<feedback>\n{text}\n</feedback>"
COMPLETION_DONE = "[attempt_completion] Result: Done"
COMPLETION_FEEDBACK = (
    "The user has provided feedback on the results. Consider their input to continue the "
    "task, and then attempt completion again."
)
#: The focus chain's prompts (`focus-chain/prompts.ts`), and its reminder interval.
REMINDER = (
    "\n1. To create or update a todo list, include the task_progress parameter in the next "
    "tool call\n2. Review each item and update its status:\n   - Mark completed items with: "
    "- [x]\n   - Keep incomplete items as: - [ ]\n   - Add new items if you discover "
    "additional steps\n3. Modify the list as needed:\n\t\t- Add any new steps you've "
    "discovered\n\t\t- Reorder if the sequence has changed\n4. Ensure the list accurately "
    "reflects the current state\n\n**Remember:** Keeping the task_progress list updated helps "
    "track progress and ensures nothing is missed."
)
RECOMMENDED = (
    "\n# task_progress RECOMMENDED\n\nWhen starting a new task, it is recommended to include "
    "a todo list using the task_progress parameter.\n\n\n1. Include a todo list using the "
    "task_progress parameter in your next tool call\n2. Create a comprehensive checklist of "
    "all steps needed\n3. Use markdown format: - [ ] for incomplete, - [x] for complete\n\n"
    "**Benefits of creating a todo/task_progress list now:**\n\t- Clear roadmap for "
    "implementation\n\t- Progress tracking throughout the task\n\t- Nothing gets forgotten or "
    "missed\n\t- Users can see, monitor, and edit the plan\n\n**Example structure:**```\n"
    "- [ ] Analyze requirements\n- [ ] Set up necessary files\n- [ ] Implement main "
    "functionality\n- [ ] Handle edge cases\n- [ ] Test the implementation\n- [ ] Verify "
    "results```\n\nKeeping the task_progress list updated helps track progress and ensures "
    "nothing is missed.\n"
)
UPDATE_REQUIRED = (
    "# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter in your NEXT "
    "tool call."
)
REMIND_EVERY = 6
_TABS = "\t\t\t\t"
#: What the editor shows; MCP edits open no tabs, so it never changes.
VISIBLE = ("main.rkt",)
TABS = ("main.rkt", "info.rkt", "tests/replay-test.rkt")
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: The failing tests: (test-case name after the module, actual, expected, line).
TESTS = {
    "retries": ("gives up after the third failed attempt", "2", "3", 41),
    "orders_batches": ("resends parked batches oldest first", "'(2 1 3)", "'(1 2 3)", 66),
    "handles_empty": ("sends nothing from an empty outbox", "1", "0", 23),
}
_OTHER_TESTS = ("replay", "envelope", "signature", "routes")
_HEAD = ("#lang racket/base", "", "(require racket/list", "         racket/match",
         "         db", "         \"config.rkt\"", "         \"client.rkt\")", "",
         "(provide (all-defined-out))", "")  # fmt: skip
_LEADS = {
    "read": ("Opening {name}.", "Let me look at {name}.", "", ""),
    "edit": ("Changing {name}.", "Now the edit in {name}.", ""),
    "run": ("Running `{name}`.", "", "", "Next: `{name}`."),
}


def racket_line(line: str) -> str:
    """A story line as the Racket it stands for: a limit is a module-level `define`, the send
    before the fix passes a `tenant-id` bound nowhere, the fix the batch's own."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        if value.startswith("settings."):
            value = f"(settings-{module}-limit (current-settings))"
        return f"(define {module}-limit {value})"
    tenant = "(batch-tenant-id batch)" if fixed else "tenant-id"
    return f"      ({module}-send batch {tenant})"


def unified_diff(path: str, old: list[str], new: list[str], at: int) -> str:
    """jsdiff's `createTwoFilesPatch` of a file whose line `at` (0-based) changed into one
    or more lines: one hunk, four lines of context either side."""
    grown = len(new) - len(old)
    start, end = max(0, at - 4), min(len(old), at + 5)
    hunk = [f" {line}" for line in old[start:at]]
    hunk += [f"-{old[at]}"] + [f"+{line}" for line in new[at : at + 1 + grown]]
    hunk += [f" {line}" for line in old[at + 1 : end]]
    count_old, count_new = end - start, end - start + grown
    return (f"Index: {path}\n{'=' * 67}\n--- {path}\toriginal\n+++ {path}\tmodified\n"
            f"@@ -{start + 1},{count_old} +{start + 1},{count_new} @@\n"
            + "\n".join(hunk) + "\n")  # fmt: skip


class ClineMcpVoice(Voice):
    family = "clinemcp-style"
    system_prompt = (
        "You are Cline, a highly skilled software engineer with extensive knowledge in many "
        "programming languages, frameworks, design patterns, and best practices.\n\n"
        "TOOL USE\n\nYou have access to a set of tools that are executed upon the user's "
        "approval. You can use one tool per message, and will receive the result of that tool "
        "use in the user's response. You use tools step-by-step to accomplish a given task, "
        "with each tool use informed by the result of the previous tool use.\n\n"
        "# Tool Use Formatting\n\nTool use is formatted using XML-style tags. The tool name "
        "is enclosed in opening and closing tags, and each parameter is similarly enclosed "
        "within its own set of tags.\n\n# Tools\n\n"
        "execute_command, read_file, write_to_file, replace_in_file, search_files, list_files, "
        "list_code_definition_names, use_mcp_tool (server_name, tool_name, arguments: a JSON "
        "object), access_mcp_resource, ask_followup_question (question, options), "
        "attempt_completion (result, command), plan_mode_respond. Every tool takes an "
        "optional task_progress checklist.\n\n"
        "====\n\nUPDATING TASK PROGRESS\n\nYou can track and communicate your progress on the "
        "overall task using the task_progress parameter supported by every tool call. Use "
        'standard Markdown checklist format: "- [ ]" for incomplete items and "- [x]" for '
        "completed items.\n\n"
        "====\n\nMCP SERVERS\n\n# Connected MCP Servers\n\n"
        f"## {FS} (`npx -y @modelcontextprotocol/server-filesystem {ROOT}`)\n\n"
        "### Available Tools\n- read_text_file {path, head, tail}\n- read_multiple_files "
        "{paths}\n- write_file {path, content}\n- edit_file {path, edits: [{oldText, "
        "newText}], dryRun}: returns a git-style diff\n- create_directory {path}\n- "
        "list_directory {path}\n- move_file {source, destination}\n- search_files {path, "
        "pattern}: glob patterns\n- get_file_info {path}\n\n"
        f"## {SH} (`npx mcp-server-commands`)\n\n### Available Tools\n- run_process: Run a "
        "process on this linux machine {command_line, argv, cwd, stdin_text, timeout_ms}\n\n"
        "====\n\nSYSTEM INFORMATION\n\nOperating System: Linux 6.8\nDefault Shell: /bin/bash\n"
        f"Home Directory: /home/dev\nCurrent Working Directory: {ROOT}\n\n"
        "====\n\nUSER'S CUSTOM INSTRUCTIONS\n\n# .clinerules/tools.md\n\n"
        "- Do not use the built-in file and command tools in this repo. Read and change "
        f"files only through the {FS} MCP server, with absolute paths under {ROOT}. "
        f"Run every command through {SH}'s run_process with cwd {ROOT}; delete files with "
        "git rm.\n"
        f"- sandpiper is a webhook relay in Racket 8.18 (racket/base, web-server, db). "
        f"Modules live in {SRC}/, rackunit tests in tests/. `{BUILD}` must be clean before "
        f"`{TESTS_COMMAND}`; benchmarks are scripts under bench/.\n"
        "- Don't commit; the user reviews the working tree."
    )
    src = SRC
    ext = "rkt"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "racket -l- sandpiper/replay --queue {module} --dry-run",
        "raco exe -o build/sandpiper main.rkt",
        "raco setup --check-pkg-deps --pkgs sandpiper",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("outbox sweep period", "350 ms", "7000 ms", "1800 ms"),
        ("delivery custodian memory limit", "64 MiB", "900 MiB", "256 MiB"),
        ("delivery place count", "2 places", "24 places", "6 places"),
        ("db virtual connection pool", "3 pooled connections", "48 pooled connections",
         "12 pooled connections"),
        ("dead-letter retention", "4 days", "120 days", "30 days"),
        ("web-server connection timeout", "7 seconds", "240 seconds", "60 seconds"),
    )  # fmt: skip
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a thread per parked delivery sleeping until its retry time",
         "one redelivery thread fed through an async channel",
         "hundreds of sleeping threads each pin their delivery in memory",
         "a sync/timeout loop on alarm-evt inside the supervisor thread",
         "the channel thread loses its queue whenever its custodian is shut down"),
        ("parked deliveries written with racket/serialize into one file",
         "a SQLite table through the db library",
         "one torn write loses every parked delivery",
         "a Postgres table shared with the API through db's virtual connections",
         "SQLite locks up when two places write at the same time"),
        ("contracts on every internal function of the delivery modules",
         "Typed Racket for the delivery modules",
         "the contract checks dominate the redelivery profile",
         "contracts only at the module boundary, plain functions inside",
         "the typed/untyped boundary puts the same contract cost back"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "sandpiper: while a partner endpoint is down, {module} parks its deliveries, and "
            "when the partner comes back they are never sent. Make the parked ones go out "
            "again in the order they were parked. {other} goes through the same code and "
            "is stuck the same way.",
            "Parked deliveries in {module} stay parked forever once the partner recovers "
            "(since last week's release). Please get them resent oldest first; {other} "
            "shares the path and has the same problem.",
        ],
        "set_value": [
            "start with {value} for the {key}",
            "put the {key} at {value} to begin with",
        ],
        "ack": [
            "Noted, I'll hold to that from here on.",
            "Understood; every change after this respects it.",
            "Right, that stays true for all the edits that follow.",
        ],
        "constraint": [
            "one rule for sandpiper: {rule}",
            "keep this in mind throughout: {rule}",
            "hard requirement — {rule}",
        ],
        "plan": [
            "The redelivery will rest on {plan}, so what {module} parks outlives a restart "
            "and is picked up again.",
            "Plan: {plan}. That way {module}'s parked deliveries are found again after the "
            "process restarts.",
        ],
        "change_value": [
            "{old} for the {key} is too aggressive for the slow partners; use {new}",
            "change the {key} from {old} to {new}",
            "ops says the {key} at {old} wakes them up at night. {new} please",
        ],
        "change_again": [
            "sorry, the {key} once more: {old} starves the other queues. make it {new}",
            "the soak run didn't like {old} for the {key} either. {new}, and that's final",
        ],
        "ack_value": [
            "Done: the {key} is {new} in config/sandpiper.rktd.",
            "Set the {key} to {new} in config/sandpiper.rktd.",
        ],
        "reverse": [
            "Changing course: {old} is the wrong base, because {why}. I'm going with {new}.",
            "I'm abandoning {old} — {why}. The redelivery now goes through {new}.",
        ],
        "reverse_again": [
            "{old} doesn't hold up either: {why}. Moving to {new}.",
            "Second change of plan: {old} is out as well, since {why}. Using {new}.",
        ],
        "question": [
            "which commit broke redelivery? I need the hash for the incident report",
            "find me the commit that introduced this, the postmortem needs its hash",
        ],
        "commit": [
            "deps: bump web-server-lib to 1.12",
            "tests: share the fake partner between suites",
            "docs: describe the replay flags",
            "ci: cache compiled/ between jobs",
        ],
        "answer": [
            "It's {sha}: that commit moved delivery onto the shared http client and left "
            "the retry wrapper behind.",
            "{sha} is the one — switching to the shared http client dropped the retry wrapper.",
        ],
        "measure_question": [
            "how long does draining one batch take? run the drain benchmark and tell me the "
            "mean, I need it for the capacity plan",
            "time the drain of a single batch and give me the mean. hold on to that number, "
            "it goes into the design review",
        ],
        "measure_answer": [
            "Per bench/drain.rkt, draining one batch takes {figure} µs on average.",
            "The drain benchmark gives a mean of {figure} µs for a single batch.",
        ],
        "followup": [
            "Anything else I should take into account before I continue?",
            "Shall I go on with the next step, or is there more to know first?",
        ],
        "interim": [
            "Parked deliveries are picked up again after a restart; what is in the working "
            "tree so far is ready for a look.",
            "The redelivery path is back in place and the changes so far are in the working "
            "tree for review.",
        ],
        "last": [
            "Stopping at this point: {test} still fails, and I'm partway through the item "
            "to {todo}. The rest of the checklist is ticked off or still open.",
            "State of things: the one red test is {test}, and the item I'm on is to {todo}. "
            "Everything else on the checklist is ticked or waiting.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._seen: dict[str, list[str]] = {}  # file → its lines as last read or written
        self._pending: list[str] = []  # words for the user, written before the next tool use
        self._progress = ""  # the current checklist
        self._progress_due = False  # the next tool use carries it
        self._since_progress = 0  # requests since the last task_progress
        self._clock = 14 * 3600 + self.rng.randint(0, 3000)  # seconds into 20 November

    @classmethod
    def file_name(cls, stem: str) -> str:
        return f"{stem.replace('_', '-')}.rkt"

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module}: {TESTS[name.removeprefix(f'test_{module}_')][0]}"

    def _full(self, path: str) -> str:
        return path if path.startswith("/") else f"{ROOT}/{path}"

    # --- Racket source --------------------------------------------------------------------

    def _definition(self) -> list[str]:
        a, b, c = self.rng.sample(_WORDS, 3)
        n = self.rng.choice((16, 64, 250, 1000))
        kind = self.rng.randrange(4)
        if kind == 0:
            return [f"(struct {a}-{b} (id {a}-id {c} {b}-count) #:transparent)", ""]
        if kind == 1:
            return [f"(define ({a}-{b}s {a} [{c} #f])", f'  (define key (or {c} "{b}"))',
                    f"  (for/list ([item (in-list ({a}-items {a}))]",
                    f"             #:when (equal? (item-{c} item) key))",
                    "    (item-id item)))", ""]  # fmt: skip
        if kind == 2:
            return [f"(define ({c}-totals {a})",
                    f"  (for/fold ([acc (hash)]) ([item (in-list ({a}-items {a}))])",
                    f"    (hash-update acc (item-{c} item)",
                    f"                 (lambda (n) (+ n (item-{b}-count item))) 0)))",
                    ""]  # fmt: skip
        return [f"(define (fetch-{a}-{c} client ids)",
                f'  (define path (format "/v2/{a}s/{c}?limit={n}&page=~a" (first ids)))',
                "  (define resp (client-get client path))", "  (case (response-status resp)",
                "    [(200) (length ids)]", "    [(404) 0]",
                f"    [else (raise-delivery-error '{b} (response-status resp))]))",
                ""]  # fmt: skip

    def _racket(self, lines: int) -> list[str]:
        out: list[str] = []
        while len(out) < lines:
            out += self._definition()
        return out

    def _render(self, content: str) -> list[str]:
        """A file the story describes, as the Racket module it stands for: its header,
        definitions of about as many lines as the story's, then its own lines."""
        body = content.split("\n")
        story = [racket_line(x) for x in body if STORY_LINE.match(x)]
        size = sum(1 for x in body if not STORY_LINE.match(x))
        out = [*_HEAD, *self._racket(size)]
        for line in story:
            out += [line, ""]
        return out[:-1] if out[-1] == "" else out

    # --- the conversation -----------------------------------------------------------------

    def _now(self) -> str:
        self._clock += self.rng.randint(4, 40)
        h, rest = divmod(self._clock % 86400, 3600)
        m, s = divmod(rest, 60)
        hour = h % 12 or 12
        return (f"11/20/2026, {hour}:{m:02d}:{s:02d} {'PM' if h >= 12 else 'AM'} "
                "(Europe/Berlin, UTC+1:00)")  # fmt: skip

    def _environment(self, files: Sequence[str] = ()) -> str:
        details = (f"# Visual Studio Code Visible Files\n{chr(10).join(VISIBLE)}\n\n"
                   f"# Visual Studio Code Open Tabs\n{chr(10).join(TABS)}\n\n"
                   f"# Current Time\n{self._now()}")  # fmt: skip
        if files:
            details += f"\n\n# Current Working Directory ({ROOT}) Files\n" + "\n".join(files)
        details += "\n\n# Current Mode\nACT MODE"
        return f"<environment_details>\n{details}\n</environment_details>"

    def _focus(self) -> str:
        """The focus chain's prompt for this request, if it sends one."""
        if not self._progress:
            return RECOMMENDED
        if self._since_progress < REMIND_EVERY:
            return ""
        self._since_progress = 0
        self._progress_due = True  # answered with the list in the next tool use
        rows = [line for line in self._progress.split("\n") if line.startswith("- [")]
        done = sum(line.startswith("- [x]") for line in rows)
        percent = round(done / len(rows) * 100)
        note = ""
        if done == 0:
            note = ("\n\n**Note:** No items are marked complete yet. As you work through the "
                    "task, remember to mark items as complete when finished.")  # fmt: skip
        elif 25 <= percent < 50:
            note = f"\n\n**Note:** {percent}% of items are complete."
        elif 50 <= percent < 75:
            note = f"\n\n**Note:** {percent}% of items are complete. Proceed with the task."
        elif percent >= 75:
            note = (f"\n\n**Note:** {percent}% of items are complete! Focus on finishing the "
                    "remaining items.")  # fmt: skip
        progress = f"**Current Progress: {done}/{len(rows)} items completed ({percent}%)**"
        return (f"\n\n{_TABS}{UPDATE_REQUIRED}\n\n{_TABS}{progress}\n\n{_TABS}{self._progress}"
                f"\n\n{_TABS}\n\n{_TABS}{REMINDER}\n\n{_TABS}{note}\n\n{_TABS}")  # fmt: skip

    def _assistant(self, tool: str, params: Sequence[tuple[str, str]], *,
                   filler: bool = False) -> None:  # fmt: skip
        """One assistant message: words for the user if any, then one tool use in XML."""
        inner = [f"<{name}>{value}</{name}>" if "\n" not in value
                 else f"<{name}>\n{value}\n</{name}>" for name, value in params]  # fmt: skip
        carries = self._progress_due or tool == "attempt_completion"
        if carries and self._progress:
            inner.append(f"<task_progress>\n{self._progress}\n</task_progress>")
            self._progress_due = False
            self._since_progress = 0
        else:
            self._since_progress += 1
        xml = f"<{tool}>\n" + "\n".join(inner) + f"\n</{tool}>"
        spoken = bool(self._pending) or (carries and bool(self._progress))
        self.s.messages.append({"role": "assistant",
                                "content": "\n\n".join([*self._pending, xml])})  # fmt: skip
        self._pending = []
        if filler and not spoken:
            self.s.filler_at.add(len(self.s.messages) - 1)

    def _user(self, blocks: Sequence[str], *, filler: bool = False, files: Sequence[str] = ()
              ) -> None:  # fmt: skip
        focus = self._focus()
        texts = [*blocks, *([focus] if focus else []), self._environment(files)]
        content = [{"type": "text", "text": t} for t in texts]
        self.s.messages.append({"role": "user", "content": content})
        if filler and not (focus and self._progress):
            self.s.filler_at.add(len(self.s.messages) - 1)

    def _mcp(self, server: str, tool: str, arguments: dict[str, Any], result: str, *,
             text: str = "", error: bool = False, filler: bool = False) -> None:  # fmt: skip
        if text:
            self._pending.append(text)
        self._assistant("use_mcp_tool", [("server_name", server), ("tool_name", tool),
                                         ("arguments", json.dumps(arguments, indent=2))],
                        filler=filler)  # fmt: skip
        answer = ("Error:\n" if error else "") + (result or "(No response)")
        self._user([f"[use_mcp_tool for '{server}'] Result:\n{answer}"], filler=filler)

    def _run(self, command: str, stdout: str, stderr: str = "", *, code: int = 0,
             timeout: int = 0, text: str = "", filler: bool = False) -> None:  # fmt: skip
        arguments: dict[str, Any] = {"command_line": command, "cwd": ROOT}
        if timeout:
            arguments["timeout_ms"] = timeout
        result = "\n\n".join(x for x in (str(code), stdout, stderr) if x)
        self._mcp(SH, "run_process", arguments, result, text=text, error=code != 0,
                  filler=filler)  # fmt: skip

    def _lead(self, kind: str, name: str) -> str:
        return self.pick(_LEADS[kind]).format(name=name)

    def user(self, text: str) -> None:
        messages = self.s.messages
        if not messages:
            files = sorted([".clinerules/", ".clinerules/tools.md", "README.md", "bench/",
                            "bench/drain.rkt", "config/", "config/sandpiper.rktd", "info.rkt",
                            "main.rkt", f"{SRC}/", "tests/",
                            *(f"tests/{t}-test.rkt" for t in _OTHER_TESTS)])  # fmt: skip
            self._user([f"<task>\n{text}\n</task>"], files=files)
            return
        if text in (*self.phrases["question"], *self.phrases["measure_question"]):
            # A completion presented, and the user's answer to it.
            self._assistant("attempt_completion", [("result", self.phrase("interim"))])
            self._user([COMPLETION_DONE, COMPLETION_FEEDBACK, f"<feedback>\n{text}\n</feedback>"])
            return
        last = messages[-1]["content"]
        # Words typed while approving a tool ride on its result (once); otherwise Cline asks.
        if self._pending or not last[0]["text"].startswith("[use_mcp_tool for "):
            question = self.phrase("followup")
            self._assistant("ask_followup_question", [("question", question)])
            self._user([f"[ask_followup_question for '{question}'] Result:\n"
                        f"<answer>\n{text}\n</answer>"])  # fmt: skip
            return
        # Typed while approving the last tool: sent before that tool's result.
        last.insert(0, {"type": "text", "text": FEEDBACK.format(text=text)})
        self.s.filler_at.discard(len(messages) - 1)

    def say(self, text: str) -> None:
        self._pending.append(text)

    def finish(self, text: str) -> None:
        self._assistant("attempt_completion", [("result", text)])

    # --- tools ----------------------------------------------------------------------------

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        if command.startswith("tail -n "):
            count, path = command.removeprefix("tail -n ").split(" ", 1)
            self._mcp(FS, "read_text_file", {"path": self._full(path), "tail": int(count)},
                      output, filler=filler)  # fmt: skip
            return
        stdout, _, stderr = output.partition(_STDERR)
        if exit_code and not stderr and command == BUILD:
            stdout, stderr = "", stdout
        stdout = stdout + "\n" if stdout and not stdout.endswith("\n") else stdout
        slow = command.startswith(("raco test", "raco setup", "racket bench"))
        self._run(command, stdout, stderr, code=exit_code, timeout=300000 if slow else 0,
                  text="" if filler else self._lead("run", command), filler=filler)  # fmt: skip

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(content)
        full = self._full(path)
        text = "\n".join(lines) + "\n"
        if not filler:
            self._seen[path] = lines
            self._mcp(FS, "read_text_file", {"path": full}, text,
                      text=self._lead("read", path.rsplit("/", 1)[-1]))  # fmt: skip
            return
        roll = self.rng.random()
        if roll < 0.55:
            self._mcp(FS, "read_text_file", {"path": full}, text, filler=True)
        elif roll < 0.8:
            a, b = self.rng.choice(_WORDS), self.rng.choice(_WORDS)
            other = f"{SRC}/{self.file_name(f'{a}_{b}')}"
            paths = list(dict.fromkeys([full, self._full(other)]))
            bodies = [text, "\n".join(self._render("\n" * self.rng.randint(30, 60))) + "\n"]
            result = "\n---\n".join(f"{p}:\n{b}\n" for p, b in zip(paths, bodies, strict=False))
            self._mcp(FS, "read_multiple_files", {"paths": paths}, result, filler=True)
        else:
            self._info(full, text)
            head = "\n".join(lines[:60]) + "\n"
            self._mcp(FS, "read_text_file", {"path": full, "head": 60}, head, filler=True)

    def _info(self, full: str, text: str) -> None:
        def stamp() -> str:
            day = self.rng.randint(2, 19)
            weekday = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")[(day - 1) % 7]
            return (f"{weekday} Nov {day:02d} 2026 {self.rng.randint(8, 23):02d}:"
                    f"{self.rng.randint(0, 59):02d}:{self.rng.randint(0, 59):02d} GMT+0100 "
                    "(Central European Standard Time)")  # fmt: skip

        rows = [f"size: {len(text.encode())}", f"created: {stamp()}", f"modified: {stamp()}",
                f"accessed: {stamp()}", "isDirectory: false", "isFile: true",
                "permissions: 644"]  # fmt: skip
        self._mcp(FS, "get_file_info", {"path": full}, "\n".join(rows), filler=True)

    def _locate(self, path: str, before: str) -> None:
        """The compiler named a line of a file not read yet: read its first hundred lines."""
        stem = path.rsplit("/", 1)[-1].removesuffix(".rkt")
        lines = [*_HEAD]
        while len(lines) < 70:
            lines += self._definition()
        while len(lines) < 80:
            a, b = self.rng.sample(_WORDS, 2)
            lines += [f"(define {a}-{b}-page {self.rng.choice((25, 50, 100))})", ""]
        lines = [*lines[:79], ""] if len(lines) > 80 else lines
        lines += [f"(define (drain-{stem} batches)", "  (for ([batch (in-list batches)])",
                  "    (unless (null? (batch-deliveries batch))",
                  '      (log-debug "draining ~a" (batch-id batch))',
                  "      (when (batch-due? batch)", "        (mark-attempt! batch)",
                  "        (sync/timeout 0 (batch-evt batch))", before,
                  "      (void))))", ""]  # fmt: skip
        lines += self._racket(30)
        assert lines[87] == before, stem
        self._seen[path] = lines
        self._mcp(FS, "read_text_file", {"path": self._full(path), "head": 100},
                  "\n".join(lines[:100]) + "\n",
                  text="raco make points at line 88; reading up to there.")  # fmt: skip

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = racket_line(old), racket_line(new)
        lines = self._seen.get(path, [])
        if before not in lines:
            self._locate(path, before)
            lines = self._seen[path]
        at = lines.index(before)
        new_lines = [*lines[:at], after, *lines[at + 1 :]]
        self._seen[path] = new_lines
        full = self._full(path)
        diff = unified_diff(full, lines, new_lines, at)
        arguments = {"path": full, "edits": [{"oldText": before, "newText": after}],
                     "dryRun": False}  # fmt: skip
        self._mcp(FS, "edit_file", arguments, f"```diff\n{diff}```\n\n",
                  text=self._lead("edit", path.rsplit("/", 1)[-1]))  # fmt: skip

    def create(self, path: str, content: str) -> None:
        lines = self._render(content)
        self._seen[path] = lines
        full = self._full(path)
        self._mcp(FS, "write_file", {"path": full, "content": "\n".join(lines) + "\n"},
                  f"Successfully wrote to {full}")  # fmt: skip

    def delete(self, path: str) -> None:
        self._run(f"git rm {path}", f"rm '{path}'\n")

    def move(self, source: str, destination: str) -> None:
        source = self._full(source.replace("testdata/", "tests/fixtures/", 1))
        destination = self._full(destination.replace("testdata/", "tests/fixtures/", 1))
        folder = destination.rsplit("/", 1)[0]
        self._mcp(FS, "create_directory", {"path": folder},
                  f"Successfully created directory {folder}")  # fmt: skip
        self._mcp(FS, "move_file", {"source": source, "destination": destination},
                  f"Successfully moved {source} to {destination}")  # fmt: skip

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        rows = []
        for hit in hits:
            path, line, _ = hit.split(":", 2)
            a, b = self.rng.sample(_WORDS, 2)
            rows.append(f"{path}:{line}:  ({pattern}-{a} {b})")
        self._run(f"grep -rn {pattern} {root}", "\n".join(rows) + "\n", filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted({p.removeprefix(f"{root}/") for p in paths})
        if self.rng.random() < 0.3:
            word = self.rng.choice(_WORDS)
            found = [self._full(f"{root}/{n}") for n in names if word in n]
            self._mcp(FS, "search_files", {"path": self._full(root), "pattern": f"**/*{word}*"},
                      "\n".join(found) or "No matches found", filler=filler)  # fmt: skip
            return
        rows = ["[DIR] compiled", *(f"[FILE] {name}" for name in names)]
        self._mcp(FS, "list_directory", {"path": self._full(root)}, "\n".join(rows),
                  filler=filler)  # fmt: skip

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        rows = [f"- [{'x' if status == 'completed' else ' '}] {text}"
                for text, status in items if status != "cancelled"]  # fmt: skip
        self._progress = "\n".join(rows)
        self._progress_due = True

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 80)
            return "\n".join([
                "dry run: nothing will be sent", "tenant      parked  due",
                f"acme        {parked:<7} 0", f"northwind   {parked // 4:<7} 0",
                f"total parked: {parked + parked // 4}, due now: 0",
            ])  # fmt: skip
        if k == 1:
            return ""  # raco exe says nothing when it succeeds
        return "\n".join([
            "raco setup: version: 8.18 [cs]", "raco setup: platform: x86_64-linux [cs]",
            "raco setup: target machine: ta6le", "raco setup: installation name: 8.18",
            "raco setup: variants: cs", "raco setup: main collects: /usr/share/racket/collects",
            "raco setup: --- updating info-domain tables ---",
            "raco setup: --- pre-installing collections ---",
            "raco setup: --- installing foreign libraries ---",
            "raco setup: --- installing shared files ---",
            "raco setup: --- compiling collections ---",
            f"raco setup: --- parallel build using {self.rng.choice((4, 8, 16))} jobs ---",
            f"raco setup: 0 making: <pkgs>/{PROJECT}",
            f"raco setup: 1 making: <pkgs>/{PROJECT}/private",
            "raco setup: --- creating launchers ---",
            "raco setup: --- installing man pages ---",
            "raco setup: --- building documentation ---",
            "raco setup: --- installing collections ---",
            "raco setup: --- post-installing collections ---",
            "raco setup: --- checking package dependencies ---",
        ])  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        line = racket_line(f"{module}_send(batch)")
        column = line.index("tenant-id")
        out = "\n".join([
            f"{ROOT}/{SRC}/{module}.rkt:88:{column}: tenant-id: unbound identifier",
            "  in: tenant-id", "  compilation context...:", f"   {ROOT}/main.rkt",
        ])  # fmt: skip
        return out + "\n", "tenant-id: unbound identifier", BUILD

    def build_ok(self) -> str:
        return ""

    def measurement(self, figure: str) -> tuple[str, str]:
        runs = self.rng.choice((1000, 2000, 4000))
        real = round(float(figure) * runs / 1000)
        lines = [
            "warming up: 200 runs",
            f"drain-one-batch: {runs} runs",
            f"cpu time: {real - self.rng.randint(1, 9)} real time: {real} "
            f"gc time: {self.rng.randint(3, 40)}",
            f"mean: {figure}{self.rng.randint(10, 99)} µs per batch",
        ]
        return "\n".join(lines), BENCH

    def test_command(self) -> str:
        return TESTS_COMMAND

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed}/{failed + passed} test failures"

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        files = sorted({f"tests/{t.split(':')[0]}-test.rkt" for t in failing}
                       | {f"tests/{t}-test.rkt" for t in _OTHER_TESTS})  # fmt: skip
        stdout = "".join(f'raco test: "{f}"\n' for f in files)
        stdout += f"{self.test_counts(failed, passed)}\n"
        rule = "-" * 20
        blocks = []
        for test in failing:
            module, name = test.split(": ", 1)
            _, actual, expected, line = next(v for v in TESTS.values() if v[0] == name)
            blocks += [rule, test, "FAILURE", "name:       check-equal?",
                       f"location:   {ROOT}/tests/{module}-test.rkt:{line}:4",
                       f"actual:     {actual}", f"expected:   {expected}", rule]  # fmt: skip
        return stdout + _STDERR + "\n".join(blocks) + "\n"


#: Where a command's stderr starts in the output the story hands over (never written out).
_STDERR = "\x00stderr\x00"
