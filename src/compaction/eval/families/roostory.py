"""roostory-style: a Roo Code session in native (OpenAI function-call) tools, with a story of
its own.

Roo Code (the VS Code extension, its tools as they stood before `write_to_file` lost its
`line_count`, late 2025) in Code mode drives a Laravel app. Its tools, as the extension
defines and answers them: `read_file` {files: [{path}]}, answered "File: <path>\\nLines
1-N:\\n" and the text numbered "N | line"; `write_to_file` {path, content, line_count} and
`apply_diff` {path, diff} with `<<<<<<< SEARCH\\n:start_line:N\\n-------\\n…\\n=======\\n…\\n
>>>>>>> REPLACE` blocks, both answered with a compact JSON object {path, operation, notice}
(a one-block diff adds a `<notice>` that more blocks would be more efficient); a denied tool is
answered {"status":"denied", …, "feedback"} with the user's words; `execute_command`
{command, cwd} is answered "Command executed in terminal  within working directory '…'.
Exit code: N\\nOutput:\\n…" (a failure adds "Command execution was not successful, …");
`search_files` {path, regex, file_pattern} answers ripgrep's "Found N results." with
"# file" groups of "NNN | line" and "----"; `list_files` {path, recursive} answers relative
names; `update_todo_list` {todos}, a Markdown checklist with `[ ]`, `[x]` and `[-]`, answered
"Todo list updated successfully."; `ask_followup_question` {question, follow_up} is answered
`<answer>…</answer>`; `attempt_completion` {result} is answered with the user's feedback
("The user has provided feedback on the results. …<feedback>…</feedback>"). Paths are
relative to the workspace, which the system prompt names together with the modes. Apart from
the first `<task>` message (with its environment_details), the user speaks only through
those answers: a denial, an answer, feedback on a completion.

The story: appointment reminders (texts to pet owners) for a veterinary clinic chain's
Laravel app. The task sets the lead time and a per-clinic throttle and three rules (no SMS
vendor SDK, a PHP version, one SMS segment). The design goes from a scheduled scan command to a
delayed job dispatched at booking time to an outbox table swept with SKIP LOCKED; the agent's
edit of a legacy notification is denied and redirected; the lead time changes twice (the
second time without naming it), the throttle once; the user puts a vendored package off
limits, asks for a failed job's UUID, takes the backfill off the to-do list and adds a health
check. A failing feature test, a ParseError and a Larastan finding are fixed, an old command
is removed with `git rm`, the last test run has one failure (quiet hours, the to-do in
progress). The last message is the user's feedback, naming no other fact.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from compaction.eval.families._base import (
    Session,
    code_file,
    finish_session,
    hexid,
    ident,
)
from compaction.eval.sessions import EvalSession

FAMILY = "roostory-style"

#: Characters per token of these sessions (cl100k_base): Roo's numbered reads, its JSON
#: results and escaped tool arguments run longer per token than `_base.CHARS_PER_TOKEN`.
_CHARS_PER_TOKEN = 3.8

_SYSTEM = "\n".join(
    (
        "You are Roo, a highly skilled software engineer with extensive knowledge in many "
        "programming languages, frameworks, design patterns, and best practices.",
        "",
        "====",
        "",
        "MARKDOWN RULES",
        "",
        "ALL responses MUST show ANY `language construct` OR filename reference as clickable, "
        "exactly as [`filename OR language.declaration()`](relative/file/path.ext:line); line "
        "is required for `syntax` and optional for filename links. This applies to ALL "
        "markdown responses and ALSO those in attempt_completion",
        "",
        "====",
        "",
        "TOOL USE",
        "",
        "You have access to a set of tools that are executed upon the user's approval. Use the "
        "provider-native tool-calling mechanism. Do not include XML markup or examples.",
        "",
        "====",
        "",
        "CAPABILITIES",
        "",
        "- You have access to tools that let you execute CLI commands on the user's computer, "
        "list files, view source code definitions, regex search, read and write files, and ask "
        "follow-up questions. These tools help you effectively accomplish a wide range of "
        "tasks, such as writing code, making edits or improvements to existing files, "
        "understanding the current state of a project, performing system operations, and "
        "much more.",
        "- When the user initially gives you a task, a recursive list of all filepaths in the "
        "current workspace directory ('{cwd}') will be included in environment_details.",
        "",
        "====",
        "",
        "MODES",
        "",
        "- These are the currently available modes:",
        '  * "🏗️ Architect" mode (architect) - Use this mode when you need to plan, design, or '
        "strategize before implementation.",
        '  * "💻 Code" mode (code) - Use this mode when you need to write, modify, or refactor '
        "code.",
        '  * "❓ Ask" mode (ask) - Use this mode when you need explanations, documentation, or '
        "answers to technical questions.",
        '  * "🪲 Debug" mode (debug) - Use this mode when you\'re troubleshooting issues, '
        "investigating errors, or diagnosing problems.",
        '  * "🪃 Orchestrator" mode (orchestrator) - Use this mode for complex, multi-step '
        "projects that require coordination across different specialties.",
        "",
        "====",
        "",
        "RULES",
        "",
        "- The project base directory is: {cwd}",
        "- All file paths must be relative to this directory. However, commands may change "
        "directories in terminals, so respect working directory specified by the response to "
        "execute_command.",
        "- You cannot `cd` into a different directory to complete a task. You are stuck "
        "operating from '{cwd}', so be sure to pass in the correct 'path' parameter when using "
        "tools that require a path.",
        "- Do not use the ~ character or $HOME to refer to the home directory.",
        "- You are only allowed to ask the user questions using the ask_followup_question tool.",
        "- NEVER end attempt_completion result with a question or request to engage in "
        "further conversation!",
        "- At the end of each user message, you will automatically receive "
        "environment_details. This information is not written by the user themselves.",
        "",
        "====",
        "",
        "SYSTEM INFORMATION",
        "",
        "Operating System: {os}",
        "Default Shell: {shell}",
        "Home Directory: {home}",
        "Current Workspace Directory: {cwd}",
        "",
        "The Current Workspace Directory is the active VS Code project directory, and is "
        "therefore the default directory for all tool operations.",
        "",
        "====",
        "",
        "OBJECTIVE",
        "",
        "You accomplish a given task iteratively, breaking it down into clear steps and working "
        "through them methodically.",
        "",
        "1. Analyze the user's task and set clear, achievable goals to accomplish it.",
        "2. Work through these goals sequentially, utilizing available tools one at a time as "
        "necessary.",
        "3. Once you've completed the user's task, you must use the attempt_completion tool to "
        "present the result of the task to the user.",
        "4. The user may provide feedback, which you can use to make improvements and try again.",
    )
)

_NOTICE = (
    "You do not need to re-read the file, as you have seen all changes Proceed with the task "
    "using these changes as the new baseline."
)
_ONE_BLOCK = (
    "\n<notice>Making multiple related changes in a single apply_diff is more efficient. If "
    "other changes are needed in this file, please include them as additional SEARCH/REPLACE "
    "blocks.</notice>"
)
_FEEDBACK = (
    "The user has provided feedback on the results. Consider their input to continue the task, "
    "and then attempt completion again.\n<feedback>\n{}\n</feedback>"
)

_APPS = ("vetbook", "pawline", "hoofbeat", "furrow", "tailwag", "kennelry")
_NAMESPACES = ("nudge", "chime", "beacon", "recall")
_PACKAGES = ("twilio/sdk", "vonage/client", "messagebird/php-rest-api", "plivo/plivo-php")
_PHPS = ("8.1", "8.2")
_VENDORED = ("clinic-sync", "pms-bridge", "labs-connector", "insurer-api")
_OWNERS = ("the integrations team", "Ravi's team", "the lab partners squad", "data platform")
_JOBS = ("PushLabResults", "SyncInsuranceClaims", "ExportVisitSummaries", "ImportPriceList")

# Tests of the reminder suite that are neither the story's failures nor facts.
_OTHER_TESTS = (
    "does not queue a reminder for a cancelled appointment",
    "requeues a reminder when an appointment is rescheduled",
    "renders the clinic name in the text",
    "skips owners without a mobile number",
    "marks a row sent after the gateway accepts it",
    "keeps a row pending when the gateway times out",
    "claims each pending row once",
    "sends at most the throttle per clinic",
    "uses the clinic sender id",
    "stores the gateway message id",
    "does not text owners who opted out",
    "formats the time in the clinic timezone",
    "truncates long pet names",
    "links to the booking page",
    "ignores appointments in the past",
    "handles two appointments for one owner",
)


def _js(value: object) -> str:
    """A value as JavaScript's JSON.stringify writes it (compact, non-ASCII kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _numbered(content: str) -> str:
    """Roo's addLineNumbers: right-aligned numbers, " | ", a trailing newline."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    width = len(str(len(lines)))
    return "\n".join(f"{str(i).rjust(width)} | {line}" for i, line in enumerate(lines, 1)) + "\n"


class _Roo:
    """Roo Code's native tools, as they appear in the chat."""

    def __init__(self, s: Session, cwd: str) -> None:
        self.s = s
        self.cwd = cwd

    def read(
        self, files: Sequence[tuple[str, str]], *, text: str = "", filler: bool = False
    ) -> None:
        args = {"files": [{"path": path} for path, _ in files]}
        parts = []
        for path, content in files:
            numbered = _numbered(content)
            parts.append(f"File: {path}\nLines 1-{numbered.count(chr(10))}:\n{numbered}")
        self.s.call("read_file", args, "\n\n---\n\n".join(parts), text=text, filler=filler)

    def write(self, path: str, content: str, *, text: str = "") -> None:
        args = {"path": path, "content": content, "line_count": len(content.split("\n"))}
        result = _js({"path": path, "operation": "created", "notice": _NOTICE})
        self.s.call("write_to_file", args, result, text=text)

    def diff(
        self,
        path: str,
        blocks: Sequence[tuple[int, str, str]],
        *,
        text: str = "",
        denied: str = "",
    ) -> None:
        """SEARCH/REPLACE blocks (start line, old, new); `denied`: the user's feedback."""
        diff = "\n".join(
            f"<<<<<<< SEARCH\n:start_line:{line}\n-------\n{old}\n=======\n{new}\n>>>>>>> REPLACE"
            for line, old, new in blocks
        )
        if denied:
            result = _js({
                "status": "denied",
                "message": "The user denied this operation and provided the following feedback",
                "feedback": denied,
            })  # fmt: skip
        else:
            result = _js({"path": path, "operation": "modified", "notice": _NOTICE})
            result += _ONE_BLOCK if len(blocks) == 1 else ""
        self.s.call("apply_diff", {"path": path, "diff": diff}, result, text=text)

    def run(
        self,
        command: str,
        output: str,
        *,
        exit_code: int = 0,
        text: str = "",
        filler: bool = False,
        denied: str = "",
    ) -> None:
        if denied:
            result = _js({
                "status": "denied",
                "message": "The user denied this operation and provided the following feedback",
                "feedback": denied,
            })  # fmt: skip
        else:
            failed = (
                "Command execution was not successful, inspect the cause and adjust as needed.\n"
                if exit_code
                else ""
            )
            result = (
                f"Command executed in terminal  within working directory '{self.cwd}'. "
                f"{failed}Exit code: {exit_code}\nOutput:\n{output}"
            )
        args = {"command": command, "cwd": None}
        self.s.call("execute_command", args, result, text=text, filler=filler)

    def search(
        self,
        path: str,
        regex: str,
        pattern: str | None,
        hits: Sequence[tuple[str, Sequence[tuple[int, str]]]],
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """Each hit: a file and its lines (the match with a line of context either side)."""
        count = len(hits)
        out = f"Found {'1 result' if count == 1 else f'{count} results'}.\n\n"
        grouped: dict[str, list[Sequence[tuple[int, str]]]] = {}
        for file, lines in hits:
            grouped.setdefault(file, []).append(lines)
        for file, results in grouped.items():
            out += f"# {file}\n"
            for lines in results:
                out += "".join(f"{str(n).rjust(3)} | {line.rstrip()}\n" for n, line in lines)
                out += "----\n"
            out += "\n"
        args = {"path": path, "regex": regex, "file_pattern": pattern}
        self.s.call("search_files", args, out.strip(), text=text, filler=filler)

    def ls(self, path: str, names: Sequence[str], *, filler: bool = False) -> None:
        args = {"path": path, "recursive": False}
        self.s.call("list_files", args, "\n".join(names), filler=filler)

    def todo(self, items: Sequence[tuple[str, str]], *, text: str = "") -> None:
        """Items (text, state): state done / doing / open."""
        box = {"done": "[x]", "doing": "[-]", "open": "[ ]"}
        todos = "\n".join(f"{box[state]} {item}" for item, state in items)
        self.s.call("update_todo_list", {"todos": todos}, "Todo list updated successfully.",
                    text=text)  # fmt: skip

    def ask(
        self, question: str, suggestions: Sequence[str], answer: str, *, text: str = ""
    ) -> None:
        args = {"question": question, "follow_up": [{"text": t, "mode": None} for t in suggestions]}
        self.s.call("ask_followup_question", args, f"<answer>\n{answer}\n</answer>", text=text)

    def complete(self, result: str, feedback: str, *, text: str = "") -> None:
        self.s.call("attempt_completion", {"result": result}, _FEEDBACK.format(feedback),
                    text=text)  # fmt: skip


def _php_class(rng: random.Random, namespace: str, name: str, lines: int) -> str:
    body = code_file(rng, "php", lines)
    return "\n".join([
        "<?php",
        "",
        f"namespace {namespace};",
        "",
        f"class {name}",
        "{",
        body.rstrip("\n"),
        "}",
    ])  # fmt: skip


def _laravel_log(rng: random.Random, lines: int) -> str:
    levels = ("INFO", "DEBUG", "INFO", "WARNING")
    out = []
    for _ in range(lines):
        out.append(
            f"[2026-03-{rng.randint(1, 9):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d}] production.{rng.choice(levels)}: {ident(rng)} "
            f'{{"{ident(rng, 1)}":{rng.randint(1, 9999)},"ms":{rng.randint(1, 900)}}}'
        )
    return "\n".join(out)


def _uuid(rng: random.Random) -> str:
    return "-".join(hexid(rng, n) for n in (8, 4, 4, 4, 12))


def _artisan_test(
    rng: random.Random,
    suites: Sequence[tuple[str, Sequence[str]]],
    failing: dict[str, tuple[str, str, int]],
) -> str:
    """`php artisan test` as Collision prints it: suites of test descriptions; `failing` maps a
    description to (the assertion message, its test file, the line)."""
    out: list[str] = [""]
    assertions = 0
    for suite, tests in suites:
        bad = [t for t in tests if t in failing]
        out.append(f"   {'FAIL' if bad else 'PASS'}  {suite}")
        for t in tests:
            mark = "⨯" if t in failing else "✓"
            out.append(f"  {mark} {t.ljust(62)} 0.{rng.randint(1, 40):02d}s  ")
            assertions += rng.randint(1, 3)
        out.append("")
    failed = 0
    for suite, tests in suites:
        for t in tests:
            if t not in failing:
                continue
            failed += 1
            message, file, line = failing[t]
            out += [
                "  " + "─" * 77 + "  ",
                f"   FAILED  {suite} > {t}" + " " * 3,
                f"  {message}",
                "",
                f"  at {file}:{line}",
                f"    {line - 1}▕         $this->travelTo($appointment->starts_at->subDay());",
                f"  ➜ {line}▕         $this->assertSame($expected, "
                "$row->due_at->toDateTimeString());",
                f"    {line + 1}▕     }}",
                "",
                f"  1   {file}:{line}",
                "",
            ]
    total = sum(len(t) for _, t in suites)
    summary = f"{failed} failed, {total - failed} passed" if failed else f"{total} passed"
    out += [
        "",
        f"  Tests:    {summary} ({assertions} assertions)",
        f"  Duration: {rng.randint(1, 3)}.{rng.randint(10, 99)}s",
        "",
    ]
    return "\n".join(out)


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"roostory-{seed}")
    app = rng.choice(_APPS)
    ns = rng.choice(_NAMESPACES)
    vendor_sdk = rng.choice(_PACKAGES)
    php = rng.choice(_PHPS)
    k = rng.randrange(len(_VENDORED))
    vendored, owner = _VENDORED[k], _OWNERS[k]
    failed_job = rng.choice(_JOBS)
    user_dir = rng.choice(("aoife", "marek", "dana", "tomas"))
    home = f"/home/{user_dir}"
    cwd = f"{home}/code/{app}"
    l0, l1, l2 = rng.choice((18, 24)), rng.choice((30, 36)), rng.choice((48, 72))
    r0, r1 = rng.choice((20, 25, 30)), rng.choice((40, 45, 60))
    sender = f"{app[:5].upper()}{rng.randint(10, 99)}"
    job_uuid = _uuid(rng)
    table = f"{ns}_outbox"
    Ns = ns.title()

    wrong = "app/Notifications/Legacy/ReminderTextV1.php"
    notification = "app/Notifications/AppointmentReminder.php"
    observer = "app/Observers/AppointmentObserver.php"
    model = "app/Models/Appointment.php"
    config = "config/reminders.php"
    day = rng.randint(2, 9)
    migration = (
        f"database/migrations/2026_03_{day:02d}_{rng.randint(9, 17):02d}{rng.randint(0, 59):02d}"
        f"{rng.randint(0, 59):02d}_create_{table}_table.php"
    )
    sweeper = "app/Reminders/OutboxSweeper.php"
    command_file = "app/Console/Commands/WorkReminders.php"
    test_file = "tests/Feature/Reminders/OutboxTest.php"
    quiet_file = "tests/Feature/Reminders/QuietHoursTest.php"
    old_command = "app/Console/Commands/SendDailyReminders.php"
    test_cmd = "php artisan test --testsuite=Feature --filter=Reminders"
    stan_cmd = "vendor/bin/phpstan analyse app/Reminders app/Console --memory-limit=1G"

    os_name, shell = rng.choice((("Linux 6.8", "/bin/bash"), ("Linux 6.11", "/usr/bin/zsh")))
    s = Session(rng, _SYSTEM.replace("{cwd}", cwd).replace("{os}", os_name)
                .replace("{shell}", shell).replace("{home}", home))  # fmt: skip
    roo = _Roo(s, cwd)
    target = tokens * _CHARS_PER_TOKEN

    def pad(fraction: float) -> None:
        while s.chars < target * fraction:
            kind = rng.random()
            if kind < 0.6:
                folder, space = rng.choice((
                    ("app/Services", "App\\Services"),
                    ("app/Models", "App\\Models"),
                    ("app/Http/Controllers", "App\\Http\\Controllers"),
                    ("app/Support", "App\\Support"),
                ))  # fmt: skip
                name = "".join(w.title() for w in ident(rng).split("_"))
                path = f"{folder}/{name}.php"
                content = _php_class(rng, space, name, rng.randint(40, 90))
                roo.read([(path, content)], filler=True)
            elif kind < 0.85:
                roo.run("tail -n 60 storage/logs/laravel.log", _laravel_log(rng, 60), filler=True)
            else:
                folder = rng.choice(("app/Services", "app/Models", "app/Support"))
                names = sorted(
                    "".join(w.title() for w in ident(rng).split("_")) + ".php"
                    for _ in range(rng.randint(8, 16))
                )
                roo.ls(folder, names, filler=True)

    # --- the task ------------------------------------------------------------------------------
    now = f"2026-03-{day:02d}T{rng.randint(8, 11):02d}:{rng.randint(10, 59)}:{rng.randint(10, 59)}"
    tree = [
        "app/", "app/Console/", "app/Console/Commands/", "app/Http/", "app/Models/",
        "app/Notifications/", "app/Observers/", "app/Providers/", "app/Services/", "bootstrap/",
        "config/", "database/", "database/factories/", "database/migrations/", "packages/",
        "public/", "resources/", "routes/", "routes/console.php",
        "routes/web.php", "storage/", "tests/", "tests/Feature/", "tests/Unit/", ".env.example",
        "artisan", "composer.json", "composer.lock", "phpstan.neon", "phpunit.xml",
    ]  # fmt: skip
    task = (
        f"Owners at our clinics keep missing appointments. I want {app} to text each owner a "
        f"reminder {l0} hours ahead of the appointment, throttled to {r0} per minute for each "
        "clinic so one clinic's Monday doesn't starve the others.\n\n"
        f"Rules:\n- No {vendor_sdk} or any other SMS vendor SDK. We send through our own "
        "SmsGateway contract (plain HTTP), and that stays.\n"
        f"- Production is on PHP {php} until the autumn; don't use anything newer.\n"
        "- Every reminder text has to fit in 160 characters (one SMS segment) — the gateway "
        "bills per segment."
    )
    env = "\n".join([
        "<environment_details>",
        "# VSCode Visible Files",
        "routes/web.php",
        "",
        "# VSCode Open Tabs",
        "routes/web.php,app/Providers/AppServiceProvider.php",
        "",
        "# Current Time",
        f"Current time in ISO 8601 UTC format: {now}.000Z",
        "User time zone: Europe/Dublin, UTC+0:00",
        "",
        "# Current Cost",
        "$0.00",
        "",
        "# Current Mode",
        "<slug>code</slug>",
        "<name>💻 Code</name>",
        "<model>gpt-4.1</model>",
        "<tool_format>native</tool_format>",
        "",
        f"# Current Workspace Directory ({cwd}) Files",
        *tree,
        "",
        "(File list truncated. Use list_files on specific subdirectories if you need to explore "
        "further.)",
        "You have not created a todo list yet. Create one with `update_todo_list` if your task "
        "is complicated or involves multiple steps.",
        "</environment_details>",
    ])  # fmt: skip
    s.user(f"<task>\n{task}\n</task>\n\n{env}")
    s.fact("constraint", f"no {vendor_sdk} or other SMS SDK", (vendor_sdk,))
    s.fact("constraint", f"stay on PHP {php}", (f"PHP {php}",))
    s.fact("constraint", "a reminder fits in one SMS segment", ("160 characters",))

    items = [
        f"Store pending reminders ({ns})",
        "Send reminder texts through SmsGateway",
        "Keep texts within one SMS segment",
        "Shift reminders out of quiet hours (clinic local time)",
        "Backfill reminders for appointments already booked",
        "Feature tests + phpstan",
    ]
    state = dict.fromkeys(items, "open")
    state[items[0]] = "doing"
    roo.todo([(i, state[i]) for i in items],
             text="Breaking the task down before touching code.")  # fmt: skip
    composer = "\n".join([
        "{",
        f'    "name": "{app}/{app}",',
        '    "type": "project",',
        '    "require": {',
        f'        "php": "^{php}",',
        '        "guzzlehttp/guzzle": "^7.8",',
        '        "laravel/framework": "^11.9",',
        '        "laravel/sanctum": "^4.0",',
        f'        "{app}/{vendored}": "@dev"',
        "    },",
        '    "require-dev": {',
        '        "larastan/larastan": "^2.9",',
        '        "laravel/pint": "^1.13",',
        '        "mockery/mockery": "^1.6",',
        '        "phpunit/phpunit": "^11.0.1"',
        "    },",
        '    "repositories": [',
        '        { "type": "path", "url": "packages/*" }',
        "    ],",
        '    "autoload": {',
        '        "psr-4": { "App\\\\": "app/", '
        '"Database\\\\Factories\\\\": "database/factories/" }',
        "    }",
        "}",
    ])  # fmt: skip
    roo.read([("composer.json", composer)])
    s.fact("file_read", "read composer.json", ("composer.json",), required=False)
    roo.search("app", "SmsGateway|Reminder", "*.php", [
        ("app/Contracts/SmsGateway.php", [(7, "interface SmsGateway"), (8, "{"),
                                          (9, "    public function send(string $to, string $body,"
                                              " string $from): SmsReceipt;")]),
        ("app/Services/Sms/HttpSmsGateway.php", [(11, ""), (12, "final class HttpSmsGateway "
                                                 "implements SmsGateway"), (13, "{")]),
        (wrong, [(9, "/** Kiosk app only. */"), (10, "class ReminderTextV1 extends Notification"),
                 (11, "{")]),
        (notification, [(12, ""), (13, "class AppointmentReminder extends Notification "
                         "implements ShouldQueue"), (14, "{")]),
        (old_command, [(10, "    protected $signature = 'reminders:daily';"), (11, ""),
                       (12, "    protected $description = 'Email tomorrow\\'s owners at 18:00';")]),
    ])  # fmt: skip
    services = "\n".join([
        "<?php",
        "",
        "return [",
        "",
        "    'sms' => [",
        "        'endpoint' => env('SMS_GATEWAY_URL'),",
        "        'key' => env('SMS_GATEWAY_KEY'),",
        f"        'from' => env('SMS_FROM', '{sender}'),",
        "        'timeout' => 5,",
        "    ],",
        "",
        "    'postmark' => [",
        "        'token' => env('POSTMARK_TOKEN'),",
        "    ],",
        "",
        "];",
    ])  # fmt: skip
    roo.read([("config/services.php", services)])
    s.fact("identifier", "texts go out under the configured sender id", (sender,))
    pad(0.07)

    # --- the first design, answered away ----------------------------------------------------
    roo.ask(
        "Texts go out under the alphanumeric sender ID " + sender + " from config/services.php. "
        "For timing, my plan is a `reminders:scan` command that the scheduler runs every five "
        "minutes, picking up appointments whose reminder is due. Is `schedule:run` active on "
        "the production workers?",
        ["Yes, the scheduler runs every minute", "No, there is no scheduler in production"],
        "No, and don't plan on one: scrap reminders:scan. The cron container went away last "
        "year and nothing runs schedule:run any more.",
    )
    pad(0.12)

    # --- the wrong file ----------------------------------------------------------------------
    legacy = "\n".join([
        "<?php",
        "",
        "namespace App\\Notifications\\Legacy;",
        "",
        "use Illuminate\\Notifications\\Notification;",
        "",
        "// Kept for the kiosk app's v1 reminders.",
        "",
        "/** Kiosk app only. */",
        "class ReminderTextV1 extends Notification",
        "{",
        "    public function via(object $notifiable): array",
        "    {",
        "        return ['mail'];",
        "    }",
        "}",
    ])  # fmt: skip
    roo.read([(wrong, legacy)])
    via_sms = "        return ['mail', SmsChannel::class];"
    roo.diff(wrong, [(14, "        return ['mail'];", via_sms)],
             text="Adding the SMS channel to the reminder notification.",
             denied=f"Not that one. {wrong} only serves the old kiosk app and is frozen. "
                    f"Everything new goes into {notification}.")  # fmt: skip
    reminder_old = (
        "    public function via(object $notifiable): array\n    {\n        return ['mail'];\n    }"
    )
    reminder_new = "\n".join([
        "    public function via(object $notifiable): array",
        "    {",
        "        return [SmsChannel::class];",
        "    }",
        "",
        "    public function toSms(object $notifiable): string",
        "    {",
        "        $text = sprintf('%s: %s has an appointment at %s. Reply STOP to opt out.',",
        "            $this->appointment->clinic->name,",
        "            $this->appointment->pet->name,",
        "            $this->appointment->localStartsAt()->format('D j M H:i'));",
        "",
        "        return Str::limit($text, 160, '');",
        "    }",
    ])  # fmt: skip
    roo.read([(notification, "\n".join([
        "<?php",
        "",
        "namespace App\\Notifications;",
        "",
        "use App\\Models\\Appointment;",
        "use Illuminate\\Bus\\Queueable;",
        "use Illuminate\\Contracts\\Queue\\ShouldQueue;",
        "use Illuminate\\Notifications\\Notification;",
        "",
        "class AppointmentReminder extends Notification implements ShouldQueue",
        "{",
        "    use Queueable;",
        "",
        "    public function __construct(public Appointment $appointment)",
        "    {",
        "    }",
        "",
        reminder_old,
        "}",
    ]))], text="Understood; reading the current notification instead.")  # fmt: skip
    roo.diff(notification, [(18, reminder_old, reminder_new)])
    s.fact("file_modified", f"the reminder text is built in {notification}", (notification,),
           stale=(wrong,))  # fmt: skip
    pad(0.2)

    # --- the second design, and the third --------------------------------------------------
    observer_old = "    public function created(Appointment $appointment): void\n    {\n    }"
    observer_delay = "\n".join([
        "    public function created(Appointment $appointment): void",
        "    {",
        "        QueueReminder::dispatch($appointment)",
        "            ->delay($appointment->starts_at->subHours("
        "config('reminders.lead_hours')));",
        "    }",
    ])  # fmt: skip
    roo.read([(observer, "\n".join([
        "<?php",
        "",
        "namespace App\\Observers;",
        "",
        "use App\\Models\\Appointment;",
        "",
        "class AppointmentObserver",
        "{",
        observer_old,
        "}",
    ]))])  # fmt: skip
    roo.diff(observer, [(9, observer_old, observer_delay)], text=(
        "Without a scheduler, the observer dispatches a delayed `QueueReminder` job when an "
        "appointment is booked; the queue releases it when the reminder is due."))  # fmt: skip
    roo.run(test_cmd, "", denied=(
        "Stop, that can't work either: the queue is SQS, and SQS won't delay a message more "
        "than 15 minutes. A reminder a day out can't be a delayed job."))  # fmt: skip
    outbox_plan = (
        f"Then switching to an outbox: booking writes a row to a `{table}` table (appointment, "
        "clinic, due_at, sent_at), and a long-running `reminders:work` command under Supervisor "
        "claims due rows with `SELECT … FOR UPDATE SKIP LOCKED`, so two workers never take "
        "the same row, and sends them through SmsGateway within each clinic's throttle. No "
        "delayed jobs, no scheduler."
    )
    s.fact("decision", f"pending reminders live in a {table} table", (table,),
           stale=("reminders:scan", "QueueReminder"))  # fmt: skip
    s.fact("decision", "workers claim due rows with SKIP LOCKED", ("SKIP LOCKED",))
    roo.write(config, "\n".join([
        "<?php",
        "",
        "return [",
        f"    'lead_hours' => {l0},",
        f"    'per_minute' => {r0},",
        "    'quiet_from' => '21:00',",
        "    'quiet_until' => '08:00',",
        "];",
    ]), text=outbox_plan)  # fmt: skip
    s.fact("file_created", "the reminders config", (config,), required=False)
    roo.write(migration, "\n".join([
        "<?php",
        "",
        "use Illuminate\\Database\\Migrations\\Migration;",
        "use Illuminate\\Database\\Schema\\Blueprint;",
        "use Illuminate\\Support\\Facades\\Schema;",
        "",
        "return new class extends Migration",
        "{",
        "    public function up(): void",
        "    {",
        f"        Schema::create('{table}', function (Blueprint $table) {{",
        "            $table->id();",
        "            $table->foreignId('appointment_id')->unique()->constrained()"
        "->cascadeOnDelete();",
        "            $table->foreignId('clinic_id')->constrained();",
        "            $table->timestamp('due_at')->index();",
        "            $table->timestamp('sent_at')->nullable();",
        "            $table->string('gateway_id')->nullable();",
        "            $table->timestamps();",
        "        });",
        "    }",
        "",
        "    public function down(): void",
        "    {",
        f"        Schema::dropIfExists('{table}');",
        "    }",
        "};",
    ]))  # fmt: skip
    s.fact("file_created", "the outbox migration", (migration,))
    observer_outbox = "\n".join([
        "    public function created(Appointment $appointment): void",
        "    {",
        f"        {Ns}Outbox::schedule($appointment);",
        "    }",
    ])  # fmt: skip
    roo.diff(observer, [(9, observer_delay, observer_outbox)])
    s.fact("file_modified", "the observer writes the outbox row", (observer,))
    sweeper_text = "\n".join([
        "<?php",
        "",
        "namespace App\\Reminders;",
        "",
        "use App\\Contracts\\SmsGateway;",
        f"use App\\Models\\{Ns}Outbox;",
        "use Illuminate\\Support\\Facades\\DB;",
        "use Illuminate\\Support\\Facades\\RateLimiter;",
        "",
        "final class OutboxSweeper",
        "{",
        "    public function __construct(private SmsGateway $gateway)",
        "    {",
        "    }",
        "",
        "    public function sweep(int $batch = 50): int",
        "    {",
        "        return DB::transaction(function () use ($batch) {",
        f"            $rows = {Ns}Outbox::query()",
        "                ->whereNull('sent_at')",
        "                ->where('due_at', '<=', now())",
        "                ->orderBy('due_at')",
        "                ->limit($batch)",
        "                ->lock('for update skip locked')",
        "                ->get();",
        "",
        "            $sent = 0;",
        "            foreach ($rows as $row) {",
        "                $key = 'sms:clinic:'.$row->clinic_id;",
        "                if (RateLimiter::tooManyAttempts($key, config('reminders.per_minute'))) {",
        "                    continue;",
        "                }",
        "                RateLimiter::hit($key, 60);",
        "                $this->send($row);",
        "                $sent++;",
        "            }",
        "",
        "            return $sent;",
        "        });",
        "    }",
        "}",
    ])  # fmt: skip
    roo.write(sweeper, sweeper_text)
    s.fact("file_created", "the sweeper", (sweeper,))
    roo.write(command_file, "\n".join([
        "<?php",
        "",
        "namespace App\\Console\\Commands;",
        "",
        "use App\\Reminders\\OutboxSweeper;",
        "use Illuminate\\Console\\Command;",
        "",
        "class WorkReminders extends Command",
        "{",
        "    protected $signature = 'reminders:work {--sleep=5}';",
        "",
        "    protected $description = 'Send due appointment reminders from the outbox';",
        "",
        "    public function handle(OutboxSweeper $sweeper): int",
        "    {",
        "        while (true) {",
        "            if ($sweeper->sweep() === 0) {",
        "                sleep((int) $this->option('sleep'));",
        "            }",
        "        }",
        "    }",
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the worker command", (command_file,), required=False)
    pad(0.3)

    # --- the first test run -----------------------------------------------------------------
    booked = "queues a reminder when an appointment is booked"
    roo.write(test_file, "\n".join([
        "<?php",
        "",
        "namespace Tests\\Feature\\Reminders;",
        "",
        "use App\\Models\\Appointment;",
        "use Illuminate\\Foundation\\Testing\\RefreshDatabase;",
        "use Tests\\TestCase;",
        "",
        "class OutboxTest extends TestCase",
        "{",
        "    use RefreshDatabase;",
        "",
        "    public function test_" + booked.replace(" ", "_") + "(): void",
        "    {",
        "        $appointment = Appointment::factory()->create();",
        "",
        f"        $this->assertDatabaseHas('{table}', ['appointment_id' => $appointment->id]);",
        "    }",
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the outbox test", (test_file,))
    suite = "Tests\\Feature\\Reminders\\OutboxTest"
    quiet_suite = "Tests\\Feature\\Reminders\\QuietHoursTest"
    others = list(_OTHER_TESTS)
    rng.shuffle(others)
    n1 = rng.randint(9, 12)
    first_tests = [booked, *others[: n1 - 1]]
    first = _artisan_test(rng, [(suite, first_tests)], {
        booked: (f"Failed asserting that a row in the table [{table}] matches the attributes "
                 "{\n      \"appointment_id\": 1\n  }.\n\n  The table is empty.", test_file, 17),
    })  # fmt: skip
    roo.run(test_cmd, first, exit_code=1)
    s.fact("command", "the reminder tests", (test_cmd,), required=False)
    attr_old = "class Appointment extends Model\n{"
    attr_new = "#[ObservedBy([AppointmentObserver::class])]\nclass Appointment extends Model\n{"
    roo.diff(model, [(14, attr_old, attr_new)], text=(
        "The observer was never registered, so booking wrote no row; registering it on the "
        "model with the `ObservedBy` attribute."))  # fmt: skip
    s.fact("file_modified", "the model registers the observer", (model,))
    s.fact("error_resolved", "the booking test failed: observer not registered", (booked,),
           required=False)  # fmt: skip
    send_old = "            return $sent;\n        });\n    }"
    send_broken = "\n".join([
        "            return $sent;",
        "        });",
        "    }",
        "",
        "    private function send($row): void",
        "    {",
        "        $receipt = $this->gateway->send($row->appointment->owner->mobile,",
        "            $row->appointment->reminder()->toSms($row->appointment->owner),",
        "            config('services.sms.from'))",
        "        $row->update(['sent_at' => now(), 'gateway_id' => $receipt->id]);",
        "    }",
    ])  # fmt: skip
    roo.diff(sweeper, [(38, send_old, send_broken)])
    parse = "\n".join([
        "",
        "   ParseError ",
        "",
        '  syntax error, unexpected variable "$row"',
        "",
        f"  at {sweeper}:48",
        "     44▕         $receipt = $this->gateway->send($row->appointment->owner->mobile,",
        "     45▕             $row->appointment->reminder()->toSms($row->appointment->owner),",
        "     46▕             config('services.sms.from'))",
        "  ➜  48▕         $row->update(['sent_at' => now(), 'gateway_id' => $receipt->id]);",
        "     49▕     }",
        "",
        "      +7 vendor frames ",
        "",
    ])  # fmt: skip
    roo.run(test_cmd, parse, exit_code=1)
    fixed_send = send_broken.replace("'services.sms.from'))", "'services.sms.from'));")
    roo.diff(sweeper, [(42, send_broken.split("\n\n", 1)[1], fixed_send.split("\n\n", 1)[1])],
             text="The gateway call lost its semicolon; adding it back.")  # fmt: skip
    s.fact("error_resolved", "ParseError in the sweeper: unexpected variable",
           ('unexpected variable "$row"',), required=False)  # fmt: skip
    n_pass = n1 + rng.randint(1, 2)
    green = _artisan_test(rng, [(suite, [booked, *others[: n_pass - 1]])], {})
    roo.run(test_cmd, green)
    state[items[0]] = state[items[1]] = "done"
    state[items[2]] = "doing"
    roo.todo([(i, state[i]) for i in items])
    pad(0.4)

    # --- the first completion: the lead time moves ------------------------------------------
    roo.complete(
        f"Booking now writes a row to `{table}`; `php artisan reminders:work` sends due rows "
        "through SmsGateway within each clinic's throttle. The reminder suite passes.",
        f"Move the reminder to {l1} hours ahead instead. Owners say the day-before text comes "
        "too late to rearrange work.",
    )
    roo.diff(config, [(4, f"    'lead_hours' => {l0},", f"    'lead_hours' => {l1},")])
    s.fact("file_modified", "the reminders config holds the lead time", (config,),
           required=False)  # fmt: skip
    pad(0.48)

    # --- the vendored package ---------------------------------------------------------------
    roo.search(f"packages/{vendored}/src", "timezone", "*.php", [
        (f"packages/{vendored}/src/ClinicRecord.php", [(21, "    public ?string $tz = null;"),
                                                        (22, "")]),
    ])  # fmt: skip
    roo.ask(
        f"The clinic's timezone comes from packages/{vendored}'s ClinicRecord as a nullable "
        "`$tz`. May I add a `timezone()` accessor there with a Europe/Dublin fallback?",
        ["Yes, add the accessor in the package", "No, read the timezone somewhere else"],
        f"No. Don't change anything under packages/{vendored}; it belongs to {owner}. If you "
        "need something from it, ask me first. The clinics table has its own timezone column.",
    )
    s.fact("constraint", f"packages/{vendored} is off limits", (f"packages/{vendored}",))
    stan = "\n".join([
        "Note: Using configuration file " + cwd + "/phpstan.neon.",
        " 9/9 [▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓] 100%",
        "",
        " ------ ----------------------------------------------------------------------------",
        "  Line   Reminders/OutboxSweeper.php",
        " ------ ----------------------------------------------------------------------------",
        "  52     Access to an undefined property App\\Models\\Clinic::$tz.",
        "         🪪  property.notFound",
        "         💡  Learn more: https://phpstan.org/blog/solving-phpstan-access-to-undefined-"
        "property",
        " ------ ----------------------------------------------------------------------------",
        "",
        "",
        " [ERROR] Found 1 error",
        "",
    ])  # fmt: skip
    roo.diff(sweeper, [(50, "    }\n}", "    }\n\n    private function localDue($row): string\n"
                        "    {\n        return $row->due_at->setTimezone($row->clinic->tz)"
                        "->format('H:i');\n    }\n}")])  # fmt: skip
    roo.run(stan_cmd, stan, exit_code=1)
    s.fact("command", "larastan on the new code", (stan_cmd,), required=False)
    roo.diff(sweeper, [(54, "$row->clinic->tz", "$row->clinic->timezone")],
             text="Reading the timezone from the clinics table's own column.")  # fmt: skip
    roo.run(stan_cmd, "Note: Using configuration file " + cwd + "/phpstan.neon.\n"
            " 9/9 [▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓] 100%\n\n\n [OK] No errors\n")  # fmt: skip
    s.fact("error_resolved", "larastan: undefined property $tz", ("property.notFound",),
           required=False)  # fmt: skip
    pad(0.57)

    # --- the second completion: the throttle, a failed job ----------------------------------
    state[items[2]] = "done"
    roo.todo([(i, state[i]) for i in items])
    roo.complete(
        f"Reminders are built in {notification} and cut to one segment; Larastan is clean.",
        f"Raise the throttle to {r1} per minute, the gateway raised our limit. And while you're "
        "in there: which job blew up in failed_jobs last night? I need its UUID for the ticket.",
    )
    roo.diff(config, [(5, f"    'per_minute' => {r0},", f"    'per_minute' => {r1},")])
    failed_rows = [
        (f"2026-03-{day - 1:02d} 23:{rng.randint(10, 59)}:{rng.randint(10, 59)}", job_uuid,
         f"App\\Jobs\\{failed_job}"),
        (f"2026-03-{day - 1:02d} 0{rng.randint(1, 8)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}",
         _uuid(rng), "App\\Jobs\\RefreshSearchIndex"),
        (f"2026-02-2{rng.randint(0, 8)} 1{rng.randint(0, 9)}:{rng.randint(10, 59)}:"
         f"0{rng.randint(1, 9)}",
         _uuid(rng), "App\\Jobs\\RefreshSearchIndex"),
    ]  # fmt: skip
    listing = "\n".join(
        f"  {when} {uuid} {'.' * 40} redis@default {cls}  " for when, uuid, cls in failed_rows
    )
    roo.run("php artisan queue:failed", "\n" + listing + "\n")
    answer = (
        f"It is {job_uuid}: App\\Jobs\\{failed_job}, failed last night on redis@default. "
        "The two RefreshSearchIndex entries are older."
    )

    # --- the to-do list changes -------------------------------------------------------------
    roo.ask(
        "Should I backfill outbox rows for appointments that were booked before this ships?",
        ["Yes, backfill every future appointment", "No, only new bookings"],
        "Take the backfill off the list: the front desk will phone those owners. Instead, add "
        "a health check that fails when the oldest pending reminder is more than 10 minutes "
        "overdue.",
        text=answer,
    )
    s.fact("identifier", "the failed job's UUID", (job_uuid,))
    health = "Health check: fail when the oldest pending reminder is 10 min overdue"
    backfill = items[4]
    items.remove(backfill)
    items.insert(4, health)
    state[health] = "open"
    state[items[3]] = "doing"
    roo.todo([(i, state[i]) for i in items],
             text="Backfill dropped from the list; the health check is added.")  # fmt: skip
    s.fact("todo", "the health-check item was added and is open", (health,))
    s.fact("todo", "the backfill item was dropped", ("backfill", "dropped"))
    s.fact("todo", "sending through SmsGateway is done", (items[1],), required=False)
    pad(0.68)

    # --- the old command goes ------------------------------------------------------------------
    roo.search(".", "reminders:daily|SendDailyReminders", None, [
        (old_command, [(8, "class SendDailyReminders extends Command"), (9, "{"),
                       (10, "    protected $signature = 'reminders:daily';")]),
    ])  # fmt: skip
    roo.run(
        f"git rm {old_command}",
        f"rm '{old_command}'",
        text="Nothing schedules or calls the old daily e-mail command any more; removing it.",
    )
    s.fact("file_deleted", "the old daily reminders command", (old_command,))
    quiet_test = "pushes a reminder due in quiet hours to the next morning"
    roo.write(quiet_file, "\n".join([
        "<?php",
        "",
        "namespace Tests\\Feature\\Reminders;",
        "",
        "use App\\Models\\Appointment;",
        "use Illuminate\\Foundation\\Testing\\RefreshDatabase;",
        "use Tests\\TestCase;",
        "",
        "class QuietHoursTest extends TestCase",
        "{",
        "    use RefreshDatabase;",
        "",
        "    public function test_" + quiet_test.replace(" ", "_") + "(): void",
        "    {",
        "        $appointment = Appointment::factory()->at('09:00')->create();",
        f"        $row = $appointment->{ns}Outbox;",
        "        $expected = $appointment->starts_at->copy()->setTime(8, 0)->toDateTimeString();",
        "",
        "        $this->travelTo($appointment->starts_at->subDay());",
        "        $this->assertSame($expected, $row->due_at->toDateTimeString());",
        "    }",
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the quiet-hours test", (quiet_file,), required=False)
    pad(0.82)

    # --- the lead time again (the setting unnamed); the last run ----------------------------
    roo.complete(
        "The old daily e-mail command is gone and a quiet-hours test is in place.",
        f"Thinking about the farm clinics again: make that {l2} hours. They need the extra day "
        "to get a trailer.",
    )
    roo.diff(config, [(4, f"    'lead_hours' => {l1},", f"    'lead_hours' => {l2},")])
    s.fact("changed_value", f"the reminder goes out {l2} hours ahead", (f"{l2} hours",),
           stale=(f"{l0} hours ahead", f"{l1} hours ahead"))  # fmt: skip
    s.fact("changed_value", f"throttle of {r1} per minute per clinic", (f"{r1} per minute",),
           stale=(f"{r0} per minute",))  # fmt: skip
    n2 = n_pass + rng.randint(2, 3)
    last = _artisan_test(rng, [
        (suite, [booked, *others[: n2 - 1]]),
        (quiet_suite, [quiet_test]),
    ], {
        quiet_test: ("Failed asserting that two strings are identical.\n  -'"
                     f"2026-03-{day + 2:02d} 08:00:00'\n  +'2026-03-{day + 1:02d} 21:00:00'",
                     quiet_file, 20),
    })  # fmt: skip
    roo.run(test_cmd, last, exit_code=1)
    s.fact("test_status", "the last run", (f"1 failed, {n2} passed",),
           stale=(f"1 failed, {n1 - 1} passed",))  # fmt: skip
    s.fact("error_open", "the quiet-hours test still fails", (quiet_test,))
    state[items[5]] = "done"
    roo.todo([(i, state[i]) for i in items])
    s.fact("todo", "the quiet-hours item is in progress", (items[3],))
    pad(0.97)
    roo.complete(
        "Everything but the quiet-hours case passes: due_at is computed in UTC and never moved "
        "past the clinic's evening cut-off yet.",
        "Leave the rest for tomorrow. Push the branch and open a draft PR.",
    )
    s.fact("last_message", "the user's last word", ("open a draft PR",))
    return finish_session(s, family=FAMILY, seed=seed)
