"""copilotstory-style: a GitHub Copilot agent-mode session in native function calls, with a
story of its own.

VS Code's Copilot Chat drives an ASP.NET Core service (C#, EF Core on Postgres, xUnit) with
its built-in tools, named and shaped as the extension and VS Code declare them:
`run_in_terminal` {command, explanation, isBackground}, answered with the terminal's output
(and "Command exited with code N" after it when the command failed; a background command
answers "Command is running in terminal with ID=…", read back by `get_terminal_output` {id});
`read_file` {filePath, startLine, endLine}, answered with the lines as they are (no fences,
the default); `create_file` {filePath, content}, `replace_string_in_file` {filePath,
oldString, newString} and `multi_replace_string_in_file` {explanation, replacements}, all
answered "The following files were successfully edited:" and the paths, or, when the edit
leaves new diagnostics, "The edit to … was applied successfully. The edit resulted in the
following lint errors:" and an <errors> block; `get_errors` {filePaths} (<errors path=…>,
"No errors found"); `grep_search` {query, isRegexp, includePattern} ("N matches" and <match
path=… line=N> blocks); `file_search` {query} ("N total results" and paths); `list_dir`
{path}. The to-do list is `manage_todo_list` {todoList: [{id, title, status}]}, status
not-started / in-progress / completed, the whole list each time, answered "Successfully
wrote todo list" (with the tool's own warnings); an item the user drops leaves the list.
Every user turn is rendered as Copilot's agent prompt renders it: <context> with the date
and the current to-do list, <reminderInstructions>, <userRequest>. Paths are absolute.

The story: a veterinary clinic's booking API gets SMS appointment reminders. The user's first
message sets the lead time (N hours before the visit) and a cap on texts per owner per day,
and three rules in prose (no Hangfire or Quartz.NET, stay on .NET 8, never log a phone number
beyond its last 4 digits). The assistant edits a legacy SMS service, is sent to the
notifications project and puts the legacy file back; the design goes from a due-at column on
Appointments (the table is shared with the front-desk app) to an in-memory Channel (two
replicas, restarts) to an outbox table whose rows a hosted dispatcher claims with SKIP LOCKED.
The lead time changes twice (the second time without naming it), the cap once; the user puts
the billing project off limits, drops the backfill to-do, adds an alert to-do, and asks for the
staging messaging-service SID (read off appsettings.Staging.json). A CS7036 build error and a
failing xUnit test are fixed, the old nightly reminder job is removed with `git rm`, and the
last `dotnet test` still fails the quiet-hours test. The final message names no other fact.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    camel,
    code_file,
    finish_session,
    hexid,
    ident,
    log_lines,
)
from compaction.eval.probes import text_of_message
from compaction.eval.sessions import EvalSession

FAMILY = "copilotstory-style"

_SYSTEM = "\n".join(
    (
        "You are an expert AI programming assistant, working with a user in the VS Code editor.",
        'When asked for your name, you must respond with "GitHub Copilot". When asked about '
        "the model you are using, you must state that you are using {model}.",
        "Follow the user's requirements carefully & to the letter.",
        "Follow Microsoft content policies.",
        "Avoid content that violates copyrights.",
        "If you are asked to generate content that is harmful, hateful, racist, sexist, lewd, "
        'or violent, only respond with "Sorry, I can\'t assist with that."',
        "Keep your answers short and impersonal.",
        "<instructions>",
        "You are a highly sophisticated automated coding agent with expert-level knowledge "
        "across many different programming languages and frameworks and software engineering "
        "tasks - this encompasses debugging issues, implementing new features, restructuring "
        "code, and providing code explanations, among other engineering activities.",
        "The user will ask a question, or ask you to perform a task, and it may require lots of "
        "research to answer correctly. There is a selection of tools that let you perform "
        "actions or retrieve helpful context to answer the user's question.",
        "By default, implement changes rather than only suggesting them. If the user's intent "
        "is unclear, infer the most useful likely action and proceed with using tools to "
        "discover any missing details instead of guessing.",
        "Continue working until the user's request is completely resolved before ending your "
        "turn and yielding back to the user.",
        "</instructions>",
        "<toolUseInstructions>",
        "When using a tool, follow the JSON schema very carefully and make sure to include ALL "
        "required properties.",
        "No need to ask permission before using a tool.",
        "NEVER say the name of a tool to a user. For example, instead of saying that you'll use "
        'the run_in_terminal tool, say "I\'ll run the command in a terminal".',
        "When invoking a tool that takes a file path, always use the absolute file path.",
        "</toolUseInstructions>",
        "<outputFormatting>",
        "- Wrap symbol names (classes, methods, variables) in backticks: `MyClass`, "
        "`handleClick()`",
        "- When mentioning files, always convert them to markdown links using "
        "workspace-relative paths: [path/file.ts](path/file.ts)",
        "</outputFormatting>",
    )
)

_REMINDER = "\n".join(
    (
        "When using the replace_string_in_file tool, include 3-5 lines of unchanged code "
        "before and after the string you want to replace, to make it unambiguous which part "
        "of the file should be edited.",
        "For maximum efficiency, whenever you plan to perform multiple independent edit "
        "operations, invoke them simultaneously using multi_replace_string_in_file tool rather "
        "than sequentially.",
        "Do NOT create a new markdown file to document each change or summarize your work "
        "unless specifically requested by the user.",
    )
)

EDITED = "The following files were successfully edited:\n{paths}\n"

_PRODUCTS = ("Pawprint", "Vetline", "Kindpaws", "Furbook", "Tailwag", "Whisker")
_QUEUES = ("Hangfire", "Quartz.NET")
_MODELS = ("GPT-4.1", "Claude Sonnet 4", "GPT-5 mini")
_OWNERS = ("the finance team", "billing ops", "the payments squad")
_REASONS = (
    "the surgeries want the texts to land the evening before",
    "most no-shows are morning slots",
    "owners complained the first text came too early",
)


class _Copilot:
    """Copilot agent mode's built-in tools, as they appear in the chat."""

    def __init__(self, s: Session, root: str, date: str) -> None:
        self.s = s
        self.root = root
        self.date = date
        self.todo_list: list[dict[str, object]] = []
        self.terminals = 0

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    # the user's turn, as AgentUserMessage renders it
    def user(self, text: str) -> None:
        context = [f"The current date is {self.date}."]
        if self.todo_list:
            context.append("<todoList>\n" + self.todo_markdown() + "\n</todoList>")
        self.s.user(
            "<context>\n" + "\n".join(context) + "\n</context>\n"
            f"<reminderInstructions>\n{_REMINDER}\n</reminderInstructions>\n"
            f"<userRequest>\n{text}\n</userRequest>"
        )

    def todo_markdown(self) -> str:
        boxes = {"completed": "[x]", "in-progress": "[-]", "not-started": "[ ]"}
        lines = [f"- {boxes[str(t['status'])]} {t['title']}" for t in self.todo_list]
        return "# Todo List\n\n" + "\n".join(lines)

    # tools
    def run(
        self,
        command: str,
        explanation: str,
        output: str,
        *,
        exit_code: int = 0,
        text: str = "",
        filler: bool = False,
    ) -> None:
        args = {"command": command, "explanation": explanation, "isBackground": False}
        result = output if output else "Command produced no output"
        if exit_code:
            result += f"\n\nCommand exited with code {exit_code}"
        self.s.call("run_in_terminal", args, result, text=text, filler=filler)

    def background(self, command: str, explanation: str, text: str = "") -> str:
        self.terminals += 1
        terminal = f"{hexid(self.s.rng, 8)}-{hexid(self.s.rng, 4)}-4{hexid(self.s.rng, 3)}"
        args = {"command": command, "explanation": explanation, "isBackground": True}
        self.s.call("run_in_terminal", args, f"Command is running in terminal with ID={terminal}",
                    text=text)  # fmt: skip
        return terminal

    def terminal_output(self, terminal: str, output: str) -> None:
        self.s.call("get_terminal_output", {"id": terminal},
                    f"Output of terminal {terminal}:\n{output}")  # fmt: skip

    def read(
        self, rel: str, content: str, *, start: int = 1, end: int = 0, text: str = "",
        filler: bool = False,
    ) -> None:  # fmt: skip
        lines = content.split("\n")
        end = end or len(lines)
        args = {"filePath": self.abs(rel), "startLine": start, "endLine": end}
        self.s.call("read_file", args, "\n".join(lines[start - 1 : end]), text=text,
                    filler=filler)  # fmt: skip

    def create(self, rel: str, content: str, *, text: str = "", lint: str = "") -> None:
        args = {"filePath": self.abs(rel), "content": content}
        self.s.call("create_file", args, lint or EDITED.format(paths=self.abs(rel)), text=text)

    def replace(self, rel: str, old: str, new: str, *, text: str = "") -> None:
        args = {"filePath": self.abs(rel), "oldString": old, "newString": new}
        self.s.call("replace_string_in_file", args, EDITED.format(paths=self.abs(rel)), text=text)

    def multi_replace(
        self, explanation: str, edits: Sequence[tuple[str, str, str]], *, text: str = ""
    ) -> None:
        replacements = [
            {"filePath": self.abs(rel), "oldString": old, "newString": new}
            for rel, old, new in edits
        ]
        paths = list(dict.fromkeys(self.abs(rel) for rel, _, _ in edits))
        self.s.call("multi_replace_string_in_file",
                    {"explanation": explanation, "replacements": replacements},
                    EDITED.format(paths="\n".join(paths)), text=text)  # fmt: skip

    def errors(self, rels: Sequence[str], result: str, *, text: str = "") -> None:
        self.s.call("get_errors", {"filePaths": [self.abs(r) for r in rels]}, result, text=text)

    def grep(
        self, query: str, hits: Sequence[tuple[str, int, str]], *, regexp: bool = False,
        include: str = "", text: str = "",
    ) -> None:  # fmt: skip
        args: dict[str, object] = {"query": query, "isRegexp": regexp}
        if include:
            args["includePattern"] = include
        count = "1 match" if len(hits) == 1 else f"{len(hits)} matches"
        blocks = [f'<match path="{self.abs(rel)}" line={line}>\n{body}\n</match>'
                  for rel, line, body in hits]  # fmt: skip
        self.s.call("grep_search", args, "\n".join([count, *blocks]) if hits
                    else "No matches found.", text=text)  # fmt: skip

    def find(self, query: str, rels: Sequence[str], *, text: str = "") -> None:
        total = "1 total result" if len(rels) == 1 else f"{len(rels)} total results"
        self.s.call("file_search", {"query": query},
                    "\n".join([total, *(self.abs(r) for r in rels)]), text=text)  # fmt: skip

    def list_dir(self, rel: str, names: Sequence[str], *, filler: bool = False) -> None:
        self.s.call("list_dir", {"path": self.abs(rel)}, "\n".join(names), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]], *, text: str = "") -> None:
        """The whole list: (title, status) with status not-started / in-progress / completed."""
        new = [{"id": k, "title": t, "status": st} for k, (t, st) in enumerate(items, 1)]
        old = self.todo_list
        changed = sum(o["title"] != n["title"] or o["status"] != n["status"]
                      for o, n in zip(old, new, strict=False))  # fmt: skip
        changed += abs(len(new) - len(old))
        warnings = []
        if len(new) < 3:
            warnings.append("Warning: Small todo list (<3 items). This task might not need a "
                            "todo list.")  # fmt: skip
        elif len(new) > 10:
            warnings.append("Warning: Large todo list (>10 items). Consider keeping the list "
                            "focused and actionable.")  # fmt: skip
        if changed > 3:
            warnings.append("Warning: Did you mean to update so many todos at the same time? "
                            "Consider working on them one by one.")  # fmt: skip
        self.todo_list = new
        result = "Successfully wrote todo list" + ("\n\n" + "\n".join(warnings) if warnings else "")
        self.s.call("manage_todo_list", {"todoList": new}, result, text=text)


def _errors_block(path: str, problems: Sequence[tuple[int, str, str]]) -> str:
    """get_errors' rendering of one file's diagnostics: (line, code, message)."""
    if not problems:
        return f'<errors path="{path}">\nNo errors found\n</errors>\n'
    body = "".join(
        f"This code at line {line}\n```\n{code}\n```\nhas the problem reported:\n"
        f"<compileError>\n{message}\n</compileError>\n"
        for line, code, message in problems
    )
    return f'<errors path="{path}">\n{body}\n</errors>\n'


def _build_lines(rng: random.Random, projects: Sequence[tuple[str, str]]) -> list[str]:
    """The terminal logger's per-project lines: (project, output path)."""
    return [
        f"  {name} succeeded ({rng.randint(1, 4)}.{rng.randint(0, 9)}s) → {out}"
        for name, out in projects
    ]


def _dotnet_test(
    rng: random.Random,
    root: str,
    projects: Sequence[tuple[str, str]],
    test_project: str,
    total: int,
    failures: Sequence[tuple[str, str, int, str, str]],
) -> str:
    """`dotnet test` through the .NET 9 SDK's terminal logger: failures are (test, file,
    line, expected, actual)."""
    out = [f"Restore complete ({rng.randint(4, 9) / 10:.1f}s)", *_build_lines(rng, projects)]
    took = f"{rng.randint(1, 3)}.{rng.randint(0, 9)}s"
    if failures:
        n = len(failures)
        out.append(f"  {test_project} test net8.0 failed with {n} error(s) ({took})")
        for test, file, line, expected, actual in failures:
            out += [
                f"    {root}/{file}({line}): error TESTERROR: ",
                f"      {test} ({rng.randint(3, 40)}ms): Error Message: Assert.Equal() "
                "Failure: Values differ",
                f"      Expected: {expected}",
                f"      Actual:   {actual}",
                "      Stack Trace:",
                f"         at {test}() in {root}/{file}:line {line}",
                "         at System.RuntimeMethodHandle.InvokeMethod(Object target, "
                "Void** arguments, Signature sig, Boolean isConstructor)",
            ]
    else:
        out.append(f"  {test_project} test net8.0 succeeded ({took})")
    failed = len(failures)
    out += [
        "",
        f"Test summary: total: {total}, failed: {failed}, succeeded: {total - failed}, "
        f"skipped: 0, duration: {took}",
        f"Build {'failed' if failed else 'succeeded'}"
        f"{f' with {failed} error(s)' if failed else ''} "
        f"in {rng.randint(4, 9)}.{rng.randint(0, 9)}s",
    ]
    return "\n".join(out)


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"copilotstory-{seed}")
    product = rng.choice(_PRODUCTS)
    slug = product.lower()
    queue = rng.choice(_QUEUES)
    owner = rng.choice(_OWNERS)
    reason = rng.choice(_REASONS)
    user_dir = rng.choice(("mara", "tomasz", "dev", "lena"))
    root = f"/Users/{user_dir}/src/{slug}"
    l0, l1, l2 = rng.choice((18, 24)), rng.choice((48, 72)), rng.choice((30, 36, 40))
    c0, c1 = rng.choice((3, 4, 5)), 2
    sid = "MG" + hexid(rng, 32)
    branch = f"feature/{slug}-sms-reminders"
    outbox = f"{slug}_reminder_outbox"
    api = f"{product}.Api"
    notif = f"{product}.Notifications"
    tests = f"{product}.Api.Tests"

    wrong = f"src/{api}/Legacy/TextMessageService.cs"
    sender = f"src/{notif}/Sms/SmsSender.cs"
    program = f"src/{api}/Program.cs"
    options = f"src/{api}/Reminders/ReminderOptions.cs"
    scheduler = f"src/{api}/Reminders/ReminderScheduler.cs"
    dispatcher = f"src/{api}/Reminders/ReminderDispatcher.cs"
    migration = (
        f"src/{api}/Data/Migrations/2026031{rng.randint(0, 9)}1{rng.randint(0, 5)}"
        f"{rng.randint(10, 59)}{rng.randint(10, 59)}_AddReminderOutbox.cs"
    )
    appsettings = f"src/{api}/appsettings.json"
    staging = f"src/{api}/appsettings.Staging.json"
    old_job = f"src/{api}/Jobs/NightlyReminderJob.cs"
    test_file = f"tests/{tests}/Reminders/ReminderSchedulerTests.cs"
    quiet_file = f"tests/{tests}/Reminders/QuietHoursTests.cs"
    billing = f"src/{product}.Billing"
    test_cmd = f"dotnet test tests/{tests}"
    build_cmd = f"dotnet build src/{api}"
    projects = [
        (f"{product}.Domain", f"src/{product}.Domain/bin/Debug/net8.0/{product}.Domain.dll"),
        (notif, f"src/{notif}/bin/Debug/net8.0/{notif}.dll"),
        (api, f"src/{api}/bin/Debug/net8.0/{api}.dll"),
    ]
    test_projects = [*projects, (tests, f"tests/{tests}/bin/Debug/net8.0/{tests}.dll")]

    day = rng.randint(9, 27)
    date = f"March {day}, 2026"
    s = Session(rng, _SYSTEM.format(model=rng.choice(_MODELS)))
    c = _Copilot(s, root, date)
    target = tokens * CHARS_PER_TOKEN

    # Filler is counted at what it costs in tokens: logs (digits, timestamps) run about 2.5
    # characters a token, C# about 4.2, the story's text about CHARS_PER_TOKEN.
    weighted = [0.0]

    def written() -> float:
        plain = len(s.system) + sum(len(text_of_message(m)) for m in s.messages)
        return plain + weighted[0]

    def pad(fraction: float) -> None:
        while written() < target * fraction:
            kind = rng.random()
            if kind < 0.6:
                folder = rng.choice((f"src/{api}/Services", f"src/{product}.Domain/Scheduling",
                                     f"src/{api}/Endpoints", f"src/{notif}/Templates"))  # fmt: skip
                body = code_file(rng, "cs", rng.randint(40, 90))
                c.read(f"{folder}/{camel(ident(rng))}.cs", body, filler=True)
                weighted[0] += len(body) * (CHARS_PER_TOKEN / 4.2 - 1)
            elif kind < 0.85:
                lines = log_lines(rng, 60)
                c.run(f"tail -n 60 src/{api}/logs/{slug}-api.log",
                      "Show the most recent API log lines.", lines, filler=True)  # fmt: skip
                weighted[0] += len(lines) * (CHARS_PER_TOKEN / 2.5 - 1)
            else:
                folder = rng.choice((f"src/{api}/Services", f"src/{product}.Domain",
                                     f"src/{api}/Endpoints"))  # fmt: skip
                names = [f"{camel(ident(rng))}.cs" for _ in range(rng.randint(8, 16))]
                c.list_dir(folder, names, filler=True)

    # --- the workspace, then the task ---------------------------------------------------------
    s.user(
        "<environment_info>\nThe user's current OS is: macOS\n</environment_info>\n"
        "<workspace_info>\nI am working in a workspace with the following folders:\n"
        f"- {root} \nI am working in a workspace that has the following structure:\n```\n"
        f"{slug}.sln\nDirectory.Build.props\nsrc/\n\t{api}/\n\t{product}.Billing/\n"
        f"\t{product}.Domain/\n\t{notif}/\ntests/\n\t{tests}/\n```\nThis is the state of the "
        "context at this point in the conversation. The view of the workspace structure may "
        "be truncated. You can use tools to collect more context if needed.\n"
        "</workspace_info>"
    )
    c.user(
        f"Clients keep missing appointments. I'd like {product} to text owners a reminder "
        f"{l0} hours before each visit, and nobody should get more than {c0} texts per day "
        "from us, whatever happens.\n\nSome things that aren't negotiable:\n"
        f"- no {queue} or any other scheduler package; hosted services are what we have and "
        "ops knows how to run them\n"
        "- we stay on .NET 8, the hosting plan doesn't have 9 yet\n"
        "- phone numbers never end up in a log whole, only the last 4 digits"
    )
    s.fact("constraint", f"no {queue} or other scheduler package", (queue,))
    s.fact("constraint", "stay on .NET 8", (".NET 8",))
    s.fact("constraint", "only the last 4 digits of a phone number are logged",
           ("last 4 digits",))  # fmt: skip
    items = [
        "Persist upcoming reminders",
        "Dispatch due reminders from a hosted service",
        f"Enforce the per-owner daily cap in {camel('sms_sender')}",
        "Mask phone numbers in SMS logging",
        "Backfill reminders for already-booked visits",
        "Tests for scheduling and the cap",
    ]
    state = dict.fromkeys(items, "not-started")
    state[items[0]] = "in-progress"
    c.todos([(i, state[i]) for i in items],
            text="I'll look around the solution first and track the work as a list.")  # fmt: skip
    settings_text = "\n".join([
        "{",
        '  "Logging": {',
        '    "LogLevel": {',
        '      "Default": "Information",',
        '      "Microsoft.AspNetCore": "Warning"',
        "    }",
        "  },",
        '  "ConnectionStrings": {',
        f'    "Clinic": "Host=localhost;Database={slug};Username={slug}"',
        "  },",
        '  "Sms": {',
        '    "Provider": "Twilio",',
        '    "FromNumber": "+15550100"',
        "  },",
        '  "AllowedHosts": "*"',
        "}",
    ])  # fmt: skip
    c.read(appsettings, settings_text)
    s.fact("file_read", "read appsettings.json", ("appsettings.json",), required=False)
    c.grep(
        "SendAsync|TextMessage|Reminder",
        [
            (wrong, 14, "    public async Task SendAsync(string phone, string body)"),
            (
                sender,
                22,
                "    public async Task<SmsResult> SendAsync(SmsMessage message, "
                "CancellationToken ct)",
            ),
            (old_job, 9, "public sealed class NightlyReminderJob : IHostedService"),
            (program, 31, "builder.Services.AddHostedService<NightlyReminderJob>();"),
        ],
        regexp=True,
        include="src/**",
    )
    pad(0.08)

    # --- the wrong file -------------------------------------------------------------------------
    legacy_old = (
        "    public async Task SendAsync(string phone, string body)\n    {\n"
        '        _logger.LogInformation("Texting {Phone}", phone);\n'
        "        await _client.PostAsync(phone, body);\n    }"
    )
    legacy_new = (
        "    public async Task SendAsync(string phone, string body)\n    {\n"
        '        _logger.LogInformation("Texting {Phone}", PhoneMask.LastFour(phone));\n'
        "        await _client.PostAsync(phone, body);\n    }"
    )
    c.read(wrong, "\n".join([
        f"namespace {api}.Legacy;",
        "",
        "// Kept for the kiosk integration.",
        "public class TextMessageService",
        "{",
        "    private readonly ILogger<TextMessageService> _logger;",
        "    private readonly LegacySmsClient _client;",
        "",
        "    public TextMessageService(ILogger<TextMessageService> logger, LegacySmsClient client)",
        "    {",
        "        (_logger, _client) = (logger, client);",
        "    }",
        "",
        legacy_old,
        "}",
    ]))  # fmt: skip
    c.replace(wrong, legacy_old, legacy_new,
              text="The SMS path logs the full number; masking it where it's written.")  # fmt: skip
    c.user(
        f"Wrong one. {wrong} only serves the kiosk and it's being retired, leave it as it "
        f"was. Everything that sends texts now goes through {sender}."
    )
    c.replace(wrong, legacy_new, legacy_old,
              text="Putting the kiosk service back the way it was.")  # fmt: skip
    send_old = (
        '        _logger.LogInformation("Sending SMS to {To}", message.To);\n'
        "        var response = await _twilio.SendAsync(message, ct);"
    )
    send_new = (
        '        _logger.LogInformation("Sending SMS to {To}", PhoneMask.LastFour(message.To));\n'
        "        var response = await _twilio.SendAsync(message, ct);"
    )
    c.read(sender, "\n".join([
        f"namespace {notif}.Sms;",
        "",
        "public sealed class SmsSender : ISmsSender",
        "{",
        "    private readonly ITwilioGateway _twilio;",
        "    private readonly ILogger<SmsSender> _logger;",
        "",
        "    public SmsSender(ITwilioGateway twilio, ILogger<SmsSender> logger)",
        "    {",
        "        _twilio = twilio;",
        "        _logger = logger;",
        "    }",
        "",
        "    public async Task<SmsResult> SendAsync(SmsMessage message, CancellationToken ct)",
        "    {",
        send_old,
        "        return response.Accepted ? SmsResult.Sent : SmsResult.Rejected(response.Code);",
        "    }",
        "}",
    ]))  # fmt: skip
    c.replace(sender, send_old, send_new)
    s.fact("file_modified", f"the masking is in {sender}", (sender,), stale=(wrong,))
    state[items[3]] = "completed"
    c.todos([(i, state[i]) for i in items])
    s.say(
        f"Masked the number in [{sender}]({sender}); the kiosk service is untouched.\n\n"
        "For the reminders themselves: a nullable `ReminderDueAt` column on `Appointments`, "
        "set when a visit is booked, and a `BackgroundService` that polls for due rows every "
        "minute."
    )
    pad(0.16)

    # --- the design, replaced twice -------------------------------------------------------------
    c.user(
        "No schema changes on Appointments. The front-desk app reads that table directly and "
        "it breaks on columns it doesn't know."
    )
    s.say(
        "Then nothing in the database: when a visit is booked the API writes a `ReminderJob` "
        "into an in-memory `Channel<ReminderJob>`, and a hosted service waits on the channel "
        "until each reminder is due."
    )
    c.user(
        "That won't survive us. Two replicas behind the load balancer, both restart on every "
        "deploy — the queue is gone after a deploy and both pods would text the same owner."
    )
    s.say(
        f"Right. Switching to an outbox table, `{outbox}` (appointment id, owner id, due at, "
        "sent at, attempts). Booking inserts the row; `ReminderDispatcher` (a "
        "`BackgroundService`) claims due rows with `SELECT … FOR UPDATE SKIP LOCKED`, so the "
        "two replicas never pick the same one, and stamps `sent_at` after the text goes out."
    )
    s.fact("decision", f"reminders live in the {outbox} table", (outbox,),
           stale=("ReminderDueAt", "Channel<ReminderJob>"))  # fmt: skip
    s.fact("decision", "replicas claim due rows with SKIP LOCKED", ("SKIP LOCKED",))
    c.create(migration, "\n".join([
        "using Microsoft.EntityFrameworkCore.Migrations;",
        "",
        f"namespace {api}.Data.Migrations;",
        "",
        "public partial class AddReminderOutbox : Migration",
        "{",
        "    protected override void Up(MigrationBuilder migrationBuilder)",
        "    {",
        "        migrationBuilder.CreateTable(",
        f'            name: "{outbox}",',
        "            columns: table => new",
        "            {",
        '                id = table.Column<long>(nullable: false)',
        '                    .Annotation("Npgsql:ValueGenerationStrategy", '
        "NpgsqlValueGenerationStrategy.IdentityByDefaultColumn),",
        "                appointment_id = table.Column<Guid>(nullable: false),",
        "                owner_id = table.Column<Guid>(nullable: false),",
        "                due_at = table.Column<DateTimeOffset>(nullable: false),",
        "                sent_at = table.Column<DateTimeOffset>(nullable: true),",
        "                attempts = table.Column<int>(nullable: false, defaultValue: 0)",
        "            },",
        f'            constraints: table => table.PrimaryKey("pk_{outbox}", x => x.id));',
        "",
        f'        migrationBuilder.CreateIndex(name: "ix_{outbox}_due", table: "{outbox}",',
        '            column: "due_at", filter: "sent_at IS NULL");',
        "    }",
        "",
        "    protected override void Down(MigrationBuilder migrationBuilder)",
        f'        => migrationBuilder.DropTable(name: "{outbox}");',
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the outbox migration", (migration,))
    c.create(options, "\n".join([
        f"namespace {api}.Reminders;",
        "",
        "public sealed class ReminderOptions",
        "{",
        '    public const string Section = "Reminders";',
        "",
        f"    public int LeadTimeHours {{ get; set; }} = {l0};",
        f"    public int MaxTextsPerOwnerPerDay {{ get; set; }} = {c0};",
        "    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(30);",
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the reminder options", (options,))
    dispatcher_text = "\n".join([
        f"namespace {api}.Reminders;",
        "",
        "public sealed class ReminderDispatcher : BackgroundService",
        "{",
        "    private readonly IServiceScopeFactory _scopes;",
        "    private readonly IOptions<ReminderOptions> _options;",
        "    private readonly ILogger<ReminderDispatcher> _logger;",
        "",
        "    public ReminderDispatcher(IServiceScopeFactory scopes, IOptions<ReminderOptions> "
        "options,",
        "        ILogger<ReminderDispatcher> logger)",
        "    {",
        "        (_scopes, _options, _logger) = (scopes, options, logger);",
        "    }",
        "",
        "    protected override async Task ExecuteAsync(CancellationToken stoppingToken)",
        "    {",
        "        using var timer = new PeriodicTimer(_options.Value.PollInterval);",
        "        while (await timer.WaitForNextTickAsync(stoppingToken))",
        "        {",
        "            await using var scope = _scopes.CreateAsyncScope();",
        "            var store = scope.ServiceProvider.GetRequiredService<IReminderStore>();",
        "            var sms = scope.ServiceProvider.GetRequiredService<ISmsSender>();",
        "            var scheduler = new ReminderScheduler(store, _options);",
        "            foreach (var due in await store.ClaimDueAsync(batchSize: 50, stoppingToken))",
        "            {",
        "                await scheduler.SendAsync(due, sms, stoppingToken);",
        "            }",
        "        }",
        "    }",
        "}",
    ])  # fmt: skip
    ctor_error = (
        "There is no argument given that corresponds to the required parameter 'clock' of "
        "'ReminderScheduler.ReminderScheduler(IReminderStore, TimeProvider, "
        "IOptions<ReminderOptions>)'"
    )
    lint = (
        f"The edit to {c.abs(dispatcher)} was applied successfully.\n"
        "The edit resulted in the following lint errors:\n"
        + _errors_block(c.abs(dispatcher), [(23, "            var scheduler = new "
                                            "ReminderScheduler(store, _options);", ctor_error)])
    )  # fmt: skip
    c.create(dispatcher, dispatcher_text, lint=lint)
    s.fact("file_created", "the dispatcher", (dispatcher,))
    build_fail = "\n".join([
        f"Restore complete ({rng.randint(4, 9) / 10:.1f}s)",
        *_build_lines(rng, projects[:2]),
        f"  {api} failed with 1 error(s) ({rng.randint(1, 4)}.{rng.randint(0, 9)}s)",
        f"    {root}/{dispatcher}(23,33): error CS7036: {ctor_error}",
        "",
        f"Build failed with 1 error(s) in {rng.randint(3, 8)}.{rng.randint(0, 9)}s",
    ])  # fmt: skip
    c.run(build_cmd, "Build the API project to check the new dispatcher compiles.", build_fail,
          exit_code=1)  # fmt: skip
    s.fact("command", "the build", (build_cmd,), required=False)
    c.replace(
        dispatcher,
        "            var scheduler = new ReminderScheduler(store, _options);",
        "            var scheduler = new ReminderScheduler(store, TimeProvider.System, _options);",
        text="`ReminderScheduler` takes a `TimeProvider` (the tests fake the clock); passing "
        "`TimeProvider.System`.",
    )
    c.errors([dispatcher], _errors_block(c.abs(dispatcher), []))
    s.fact("error_resolved", "CS7036: the scheduler's clock argument was missing",
           ("CS7036",), required=False)  # fmt: skip
    program_old = "builder.Services.AddHostedService<NightlyReminderJob>();"
    program_new = (
        "builder.Services.Configure<ReminderOptions>(\n"
        "    builder.Configuration.GetSection(ReminderOptions.Section));\n"
        "builder.Services.AddScoped<IReminderStore, EfReminderStore>();\n"
        "builder.Services.AddHostedService<ReminderDispatcher>();"
    )
    c.replace(program, program_old, program_new)
    s.fact("file_modified", "the dispatcher is registered in Program.cs", (program,))
    state[items[0]] = "completed"
    state[items[1]] = "in-progress"
    c.todos([(i, state[i]) for i in items])
    pad(0.34)

    # --- lead time, first change; the first test run ------------------------------------------
    c.user(f"Make the reminder go out {l1} hours ahead instead, {reason}.")
    reminders_section = (
        f'  "Reminders": {{\n    "LeadTimeHours": {l1},\n    "MaxTextsPerOwnerPerDay": {c0}\n'
        '  },\n  "AllowedHosts": "*"'
    )
    c.multi_replace(
        "Move the lead time to the new value in the options default and appsettings.",
        [
            (options, f"    public int LeadTimeHours {{ get; set; }} = {l0};",
             f"    public int LeadTimeHours {{ get; set; }} = {l1};"),
            (appsettings, '  "AllowedHosts": "*"', reminders_section),
        ],
    )  # fmt: skip
    s.fact("file_modified", "appsettings.json carries the reminder settings", (appsettings,))
    sched_tests = "\n".join([
        f"namespace {tests}.Reminders;",
        "",
        "public class ReminderSchedulerTests",
        "{",
        "    private readonly FakeTimeProvider _clock = new(Visit.Minus(TimeSpan.FromDays(5)));",
        "",
        "    [Fact]",
        "    public async Task QueuesReminderAtLeadTime()",
        "    {",
        "        var store = new InMemoryReminderStore();",
        "        await Scheduler(store).QueueAsync(Booking(), default);",
        "        Assert.Equal(Visit.AddHours(-Options.LeadTimeHours), store.Single().DueAt);",
        "    }",
        "",
        "    [Fact]",
        "    public async Task StopsAtDailyCapPerOwner()",
        "    {",
        "        var sms = new RecordingSmsSender();",
        "        var store = InMemoryReminderStore.WithDue(Options.MaxTextsPerOwnerPerDay + 1, "
        "OwnerId);",
        "        foreach (var due in store.All)",
        "            await Scheduler(store).SendAsync(due, sms, default);",
        "        Assert.Equal(Options.MaxTextsPerOwnerPerDay, sms.SentTo(OwnerId));",
        "    }",
        "}",
    ])  # fmt: skip
    c.create(test_file, sched_tests)
    s.fact("file_created", "the scheduler tests", (test_file,))
    n1 = rng.randint(34, 41)
    cap_test = f"{tests}.Reminders.ReminderSchedulerTests.StopsAtDailyCapPerOwner"
    first = _dotnet_test(rng, root, test_projects, tests, n1, [
        (cap_test, test_file, 22, str(c0), str(c0 + 1)),
    ])  # fmt: skip
    c.run(test_cmd, "Run the API test project.", first, exit_code=1)
    s.fact("command", "the test run", (test_cmd,), required=False)
    cap_old = "        var sent = await _store.CountSentTodayAsync(due.OwnerId, ct);"
    cap_new = (
        "        var today = _clock.GetUtcNow().Date;\n"
        "        var sent = await _store.CountSentSinceAsync(due.OwnerId, today, ct);"
    )
    c.read(scheduler, "\n".join([
        f"namespace {api}.Reminders;",
        "",
        "public sealed class ReminderScheduler(IReminderStore _store, TimeProvider _clock,",
        "    IOptions<ReminderOptions> _options)",
        "{",
        "    public async Task SendAsync(DueReminder due, ISmsSender sms, CancellationToken ct)",
        "    {",
        cap_old,
        "        if (sent >= _options.Value.MaxTextsPerOwnerPerDay) return;",
        "        await sms.SendAsync(due.ToMessage(), ct);",
        "        await _store.MarkSentAsync(due.Id, _clock.GetUtcNow(), ct);",
        "    }",
        "}",
    ]), start=1, end=13)  # fmt: skip
    c.replace(
        scheduler,
        cap_old,
        cap_new,
        text=(
            "`CountSentTodayAsync` uses the database's `now()`, not the injected clock, so the "
            "faked day never matched and nothing counted; counting from the clock's date instead."
        ),
    )
    s.fact("file_modified", "the scheduler counts from the clock", (scheduler,))
    s.fact("error_resolved", "the daily-cap test failed", ("StopsAtDailyCapPerOwner",),
           required=False)  # fmt: skip
    second = _dotnet_test(rng, root, test_projects, tests, n1, [])
    c.run(test_cmd, "Run the tests again.", second)
    state[items[1]] = state[items[2]] = "completed"
    c.todos([(i, state[i]) for i in items])
    pad(0.5)

    # --- the user's interjections ---------------------------------------------------------------
    c.user(
        f"One more rule: nothing under {billing} gets touched. {owner.capitalize()} own it, "
        "if you need something from there ask me."
    )
    s.fact("constraint", f"{billing} is off limits", (billing,))
    s.say(f"Understood — I'll stay out of {billing}.")
    c.user("Also, what messaging service SID are we using in staging?")
    c.find("**/appsettings.Staging.json", [staging])
    c.read(staging, "\n".join([
        "{",
        '  "Sms": {',
        '    "Provider": "Twilio",',
        f'    "MessagingServiceSid": "{sid}",',
        '    "StatusCallback": "https://staging.' + slug + '.vet/hooks/sms-status"',
        "  }",
        "}",
    ]))  # fmt: skip
    s.say(f"Staging sends through messaging service `{sid}`.")
    s.fact("identifier", "the staging messaging service SID", (sid,))
    c.user(
        "Thanks. Drop the backfill item, the front desk will re-book those by phone anyway. "
        "But add one: an alert when the outbox backlog goes over 500 unsent rows."
    )
    alert = f"Alert when {outbox} backlog exceeds 500"
    items.remove(items[4])
    items.insert(4, alert)
    state[alert] = "not-started"
    c.todos([(i, state[i]) for i in items],
            text="Dropped the backfill item and added the backlog alert.")  # fmt: skip
    s.fact("todo", "the backlog alert was added and is open", (alert,))
    s.fact("todo", "the backfill item was dropped", ("backfill", "dropped"))
    s.fact("todo", "dispatching from a hosted service is done", (items[1],), required=False)
    pad(0.62)

    # --- the cap, the old job -------------------------------------------------------------------
    c.user(f"Lower the cap to {c1} texts per day per owner, people are complaining.")
    c.multi_replace(
        "Lower the daily cap in the options default and appsettings.",
        [
            (options, f"    public int MaxTextsPerOwnerPerDay {{ get; set; }} = {c0};",
             f"    public int MaxTextsPerOwnerPerDay {{ get; set; }} = {c1};"),
            (appsettings, f'    "MaxTextsPerOwnerPerDay": {c0}',
             f'    "MaxTextsPerOwnerPerDay": {c1}'),
        ],
    )  # fmt: skip
    c.grep("NightlyReminderJob", [
        (old_job, 9, "public sealed class NightlyReminderJob : IHostedService"),
    ], include="src/**")  # fmt: skip
    c.run(f"git rm {old_job}", "Remove the old nightly reminder job, nothing uses it now.",
          f"rm '{old_job}'")  # fmt: skip
    s.fact("file_deleted", "the nightly reminder job", (old_job,))
    terminal = c.background(f"dotnet run --project src/{api}",
                            "Start the API to watch the dispatcher come up.")  # fmt: skip
    c.terminal_output(terminal, "\n".join([
        "Building...",
        "info: Microsoft.Hosting.Lifetime[14]",
        "      Now listening on: http://localhost:5180",
        f"info: {api}.Reminders.ReminderDispatcher[0]",
        "      Claimed 0 due reminders",
        "info: Microsoft.Hosting.Lifetime[0]",
        "      Application started. Press Ctrl+C to shut down.",
    ]))  # fmt: skip
    state[items[3]] = "completed"
    c.todos([(i, state[i]) for i in items])
    pad(0.76)

    # --- lead time, second change (the setting unnamed); the last run -------------------------
    c.user(f"On second thought, make that {l2} hours.")
    c.multi_replace(
        "Apply the new lead time.",
        [
            (options, f"    public int LeadTimeHours {{ get; set; }} = {l1};",
             f"    public int LeadTimeHours {{ get; set; }} = {l2};"),
            (appsettings, f'    "LeadTimeHours": {l1},', f'    "LeadTimeHours": {l2},'),
        ],
    )  # fmt: skip
    s.fact("changed_value", f"reminders go out {l2} hours ahead", (f"{l2} hours",),
           stale=(f"{l0} hours", f"{l1} hours"))  # fmt: skip
    s.fact("changed_value", f"at most {c1} texts per day per owner", (f"{c1} texts per day",),
           stale=(f"{c0} texts per day",))  # fmt: skip
    quiet = "\n".join([
        f"namespace {tests}.Reminders;",
        "",
        "public class QuietHoursTests",
        "{",
        "    [Fact]",
        "    public async Task DefersReminderUntilMorning()",
        "    {",
        "        var clock = new FakeTimeProvider(Evening);",
        "        var store = InMemoryReminderStore.WithDue(1, OwnerId);",
        "        await Scheduler(store, clock).SendAsync(store.Single(), new RecordingSmsSender(), "
        "default);",
        "        Assert.Equal(NextMorning, store.Single().DueAt);",
        "    }",
        "}",
    ])  # fmt: skip
    c.create(quiet_file, quiet, text="The clinic's quiet hours apply to texts too; covering that.")
    s.fact("file_created", "the quiet-hours test", (quiet_file,))
    n2 = n1 + rng.randint(3, 7)
    quiet_test = f"{tests}.Reminders.QuietHoursTests.DefersReminderUntilMorning"
    last = _dotnet_test(rng, root, test_projects, tests, n2, [(
        quiet_test, quiet_file, 11, f"2026-03-{day + 1:02d}T08:00:00.0000000+00:00",
        f"2026-03-{day:02d}T21:30:00.0000000+00:00",
    )])  # fmt: skip
    c.run(test_cmd, "Run the API tests with the quiet-hours case.", last, exit_code=1)
    s.fact("test_status", "the last run", (f"total: {n2}, failed: 1",),
           stale=(f"total: {n1}, failed: 1",))  # fmt: skip
    s.fact("error_open", "the quiet-hours test still fails", ("DefersReminderUntilMorning",))
    fix = "Defer texts during quiet hours"
    state[items[5]] = "completed"
    items.append(fix)
    state[fix] = "not-started"
    c.todos([(i, state[i]) for i in items])
    s.say(
        f"{n2} tests, one failing: `DefersReminderUntilMorning` — `ReminderScheduler` doesn't "
        "look at the clinic's quiet hours yet, so an evening reminder goes out right away. "
        "Everything else passes."
    )
    pad(0.95)
    c.user("Leave quiet hours for tomorrow. Commit what we have on the branch.")
    c.run(f"git add -A && git commit -m \"SMS appointment reminders via {outbox}\"",
          "Commit the work on the current branch.", "\n".join([
              f"[{branch} {hexid(rng)}] SMS appointment reminders via {outbox}",
              f" {rng.randint(9, 14)} files changed, {rng.randint(240, 420)} insertions(+), "
              f"{rng.randint(30, 90)} deletions(-)",
              f" create mode 100644 {migration}",
              f" delete mode 100644 {old_job}",
          ]))  # fmt: skip
    s.say(f"Done, it's committed on {branch}. Until tomorrow.")
    s.fact("last_message", "the work was committed", (f"committed on {branch}",))
    return finish_session(s, family=FAMILY, seed=seed)
