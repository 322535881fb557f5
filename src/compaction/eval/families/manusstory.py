"""manusstory-style: an OpenManus session (FoundationAgents/OpenManus) with a story of its own.

OpenManus's built-in tools as its source names them (app/tool, read at 52a13f2): `bash`
{command}; `str_replace_editor` {command: view / create / str_replace / insert / undo_edit, path,
file_text?, old_str?, new_str?, insert_line?, view_range?}; `python_execute` {code}; `planning`
{command: create / update / list / get / set_active / mark_step / delete, plan_id?, title?,
steps?, step_index?, step_status?, step_notes?}; `web_search` {query, num_results?, lang?,
country?, fetch_content?}; `ask_human` {inquire}; `terminate` {status: success / failure}. The
Manus agent ships with python_execute, browser_use, str_replace_editor, ask_human and terminate;
this session's agent also carries `bash` (SWEAgent's), `planning` (PlanningFlow's) and
`web_search` from the same package, added with `ToolCollection.add_tools`.

Results as `ToolCallAgent.execute_tool` hands them to the model: "Observed output of cmd `name`
executed:\\n" and `str(result)`, or "Cmd `name` completed with no output" for an empty result, cut
at Manus's `max_observe` (10000 characters) with no marker. `str` of a ToolResult is its output,
or "Error: " and its error when it has one: the bash tool keeps stderr apart, so a command that
wrote to stderr shows only "Error: <stderr>"; a ToolError (an old_str not found) comes back as
"Error: …". str_replace_editor's own texts: "Here's the result of running `cat -n` on …" with
"%6d\\t" numbered lines, "File created successfully at: …", "The file … has been edited. …
Review the changes …", "Last edit to … undone successfully."; python_execute answers with the
repr of its dict, "{'observation': …, 'success': True}"; planning with "Plan created
successfully with ID: …" / "Step N updated in plan '…'." and the plan as `_format_plan` prints
it ([✓] [→] [ ] [!]); web_search with "Search results for '…':" records and metadata; terminate
with "The interaction has been completed with status: success". A tool message carries the
tool's `name`. Before each step the agent appends Manus's NEXT_STEP_PROMPT as a user message; the
model says what it saw and what it does next in the content of each tool-calling turn; call
ids are OpenAI's (`call_` and 24 characters).

The user speaks through new prompts to the same agent (main.py's prompt loop, as it was before
af8023d) and through `ask_human`, whose answer is a tool result. Memory keeps more than the
default 100 messages and a run more than 20 steps. The planning tool has no cancelled state: a
dropped step is left out of `update`'s list.

The story: a Symfony 7 ferry-booking backend (PHP 8.2, Doctrine ORM on PostgreSQL, Messenger,
PHPUnit 11, PHPStan) holds seats for a few minutes when a checkout starts. Names and values are
drawn per seed. Written apart from the compaction strategies and from `story.tell`; facts
planted in the `Fact` format.
"""

from __future__ import annotations

import json
import random
import string
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    camel,
    code_file,
    finish_session,
    hexid,
    ident,
)
from compaction.eval.sessions import EvalSession

FAMILY = "manusstory-style"

#: Manus's system prompt (app/prompt/manus.py): two literals joined without a space.
_SYSTEM = (
    "You are OpenManus, an all-capable AI assistant, aimed at solving any task presented by the "
    "user. You have various tools at your disposal that you can call upon to efficiently complete "
    "complex requests. Whether it's programming, information retrieval, file processing, web "
    "browsing, or human interaction (only for extreme cases), you can handle it all."
    "The initial directory is: {directory}"
)
#: Manus's NEXT_STEP_PROMPT, appended as a user message before every step.
NEXT_STEP_PROMPT = """
Based on user needs, proactively select the most appropriate tool or combination of tools. For complex tasks, you can break down the problem and use different tools step by step to solve it. After using each tool, clearly explain the execution results and suggest the next steps.

If you want to stop the interaction at any point, use the `terminate` tool/function call.
"""  # noqa: E501
#: ToolCallAgent's cut of an observation (Manus.max_observe).
MAX_OBSERVE = 10000
#: str_replace_editor's lines of context around an edit (SNIPPET_LINES).
_SNIPPET = 4

#: (operator slug, brand, user, home port, middle port, far port, booking reference prefix).
_OPERATORS = (
    ("fjordlink", "FjordLink", "ana", "Bergen", "Haugesund", "Stavanger", "FJ"),
    ("skerryline", "SkerryLine", "callum", "Oban", "Craignure", "Tobermory", "SK"),
    ("ionialines", "Ionia Lines", "eleni", "Patras", "Sami", "Fiskardo", "IO"),
    ("baltiq", "Baltiq", "liis", "Tallinn", "Kuressaare", "Ventspils", "BQ"),
    ("salishlink", "SalishLink", "dana", "Anacortes", "Friday Harbor", "Sidney", "SL"),
)
#: Minutes a checkout holds its seats: first, changed to, then settled on (none stands in
#: another as "N-minute hold").
_HOLD_MINUTES = ((15, 8, 12), (20, 10, 14), (12, 6, 9), (18, 9, 13), (16, 7, 11))
#: Most seats one hold may take: first, then changed to.
_MAX_SEATS = ((8, 6), (9, 5), (10, 6), (8, 4))
#: Code areas the filler reads from (never checkout, where the story happens).
_AREAS = ("Pricing", "Timetable", "Kiosk", "Manifest", "Notification", "Vessel", "Admin")


def _article(n: int) -> str:
    """'a' or 'an' before the number `n` spoken ("an 8-minute hold", "an 11-minute hold")."""
    return "an" if str(n).startswith("8") or n in (11, 18) else "a"


# --- OpenManus's tools ------------------------------------------------------------------------


def _numbered(content: str, init_line: int = 1) -> str:
    """str_replace_editor's `_make_output` body: every line of `content` split on newlines
    (a trailing newline gives a last, empty line) as "%6d\\t" and the line."""
    return "\n".join(f"{i + init_line:6}\t{line}" for i, line in enumerate(content.split("\n")))


def _cat_n(content: str, descriptor: str, init_line: int = 1) -> str:
    return (
        f"Here's the result of running `cat -n` on {descriptor}:\n"
        + _numbered(content.expandtabs(), init_line)
        + "\n"
    )


Call = tuple[str, dict[str, Any], str]


class _Manus:
    """OpenManus's tools writing into a session; the files the story touches live in `files`."""

    def __init__(self, s: Session, root: str) -> None:
        self.s = s
        self.rng = s.rng
        self.root = root
        self.files: dict[str, str] = {}
        self.history: dict[str, list[str]] = defaultdict(list)
        self.plans: dict[str, dict[str, Any]] = {}
        self.stopped = False  # the last step called terminate; the run is over
        self.last_filler = -1

    def p(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def request(self, text: str) -> None:
        """A prompt typed at "Enter your prompt:" (one line: `input()` reads one)."""
        assert "\n" not in text
        self.s.user(text)
        self.stopped = False

    def step(self, text: str, calls: Sequence[Call], *, filler: bool = False) -> None:
        """One step: the next-step prompt, the model's turn (its words and its calls), then one
        tool message per call, each observation as `execute_tool` renders it."""
        assert text.strip(), "an empty content is sent as '' and breaks in other dialects"
        assert not self.stopped, "after terminate the agent waits for the next prompt"
        self.stopped = any(name == "terminate" for name, _, _ in calls)
        self.s.messages.append({"role": "user", "content": NEXT_STEP_PROMPT})
        alphabet = string.ascii_letters + string.digits
        ids = ["call_" + "".join(self.rng.choice(alphabet) for _ in range(24)) for _ in calls]
        self.s.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                        "type": "function",
                    }
                    for call_id, (name, arguments, _) in zip(ids, calls, strict=True)
                ],
            }
        )
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        for call_id, (name, _, result) in zip(ids, calls, strict=True):
            observation = (
                f"Observed output of cmd `{name}` executed:\n{result}"
                if result
                else f"Cmd `{name}` completed with no output"
            )
            self.s.messages.append(
                {
                    "role": "tool",
                    "content": observation[:MAX_OBSERVE],
                    "name": name,
                    "tool_call_id": call_id,
                }
            )
            if filler:
                self.s.filler_at.add(len(self.s.messages) - 1)

    # each tool: (name, arguments, str of its result), for `step`

    @staticmethod
    def bash(command: str, stdout: str = "", stderr: str = "") -> Call:
        # CLIResult: stderr, when there is any, is all that `str` shows.
        out = stdout[:-1] if stdout.endswith("\n") else stdout
        err = stderr[:-1] if stderr.endswith("\n") else stderr
        return ("bash", {"command": command}, f"Error: {err}" if err else out)

    def view(self, rel: str, view_range: tuple[int, int] | None = None) -> Call:
        path = self.p(rel)
        content = self.files[rel]
        args: dict[str, Any] = {"command": "view", "path": path}
        init = 1
        if view_range:
            args["view_range"] = list(view_range)
            lines = content.split("\n")
            init, last = view_range
            content = "\n".join(lines[init - 1 :] if last == -1 else lines[init - 1 : last])
        return ("str_replace_editor", args, _cat_n(content, path, init))

    def view_dir(self, rel: str, found: Sequence[str]) -> Call:
        path = self.p(rel) if rel else self.root
        listing = "\n".join([path, *(f"{path}/{f}" for f in found)]) + "\n"
        return (
            "str_replace_editor",
            {"command": "view", "path": path},
            f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden "
            f"items:\n{listing}\n",
        )

    def create(self, rel: str, text: str) -> Call:
        assert rel not in self.files
        self.files[rel] = text
        self.history[rel].append(text)
        path = self.p(rel)
        return (
            "str_replace_editor",
            {"command": "create", "path": path, "file_text": text},
            f"File created successfully at: {path}",
        )

    def replace(self, rel: str, old: str, new: str) -> Call:
        path = self.p(rel)
        args = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
        content = self.files[rel].expandtabs()
        old, new = old.expandtabs(), new.expandtabs()
        found = content.count(old)
        if found == 0:
            return (
                "str_replace_editor",
                args,
                f"Error: No replacement was performed, old_str `{old}` did not appear verbatim "
                f"in {path}.",
            )
        assert found == 1, (rel, old)
        edited = content.replace(old, new)
        self.files[rel] = edited
        self.history[rel].append(content)
        at = content.split(old)[0].count("\n")
        start = max(0, at - _SNIPPET)
        end = at + _SNIPPET + new.count("\n")
        snippet = "\n".join(edited.split("\n")[start : end + 1])
        return (
            "str_replace_editor",
            args,
            f"The file {path} has been edited. "
            + _cat_n(snippet, f"a snippet of {path}", start + 1)
            + "Review the changes and make sure they are as expected. Edit the file again if "
            "necessary.",
        )

    def insert(self, rel: str, insert_line: int, new: str) -> Call:
        path = self.p(rel)
        text = self.files[rel].expandtabs()
        lines = text.split("\n")
        added = new.expandtabs().split("\n")
        self.files[rel] = "\n".join(lines[:insert_line] + added + lines[insert_line:])
        self.history[rel].append(text)
        snippet = "\n".join(
            lines[max(0, insert_line - _SNIPPET) : insert_line]
            + added
            + lines[insert_line : insert_line + _SNIPPET]
        )
        return (
            "str_replace_editor",
            {"command": "insert", "path": path, "insert_line": insert_line, "new_str": new},
            f"The file {path} has been edited. "
            + _cat_n(snippet, "a snippet of the edited file", max(1, insert_line - _SNIPPET + 1))
            + "Review the changes and make sure they are as expected (correct indentation, no "
            "duplicate lines, etc). Edit the file again if necessary.",
        )

    def undo(self, rel: str) -> Call:
        path = self.p(rel)
        old = self.history[rel].pop()
        self.files[rel] = old
        return (
            "str_replace_editor",
            {"command": "undo_edit", "path": path},
            f"Last edit to {path} undone successfully. {_cat_n(old, path)}",
        )

    @staticmethod
    def python(code: str, observation: str, success: bool = True) -> Call:
        # PythonExecute returns a dict; `execute_tool` formats it with str().
        return (
            "python_execute",
            {"code": code},
            str({"observation": observation, "success": success}),
        )

    def planning(self, **args: Any) -> Call:
        """The planning tool's create / update / mark_step / get, with its own bookkeeping."""
        command = args["command"]
        plan_id = args["plan_id"]
        if command == "create":
            steps = list(args["steps"])
            plan = {
                "plan_id": plan_id,
                "title": args["title"],
                "steps": steps,
                "step_statuses": ["not_started"] * len(steps),
                "step_notes": [""] * len(steps),
            }
            self.plans[plan_id] = plan
            head = f"Plan created successfully with ID: {plan_id}\n\n"
        elif command == "update":
            plan = self.plans[plan_id]
            old = list(zip(plan["steps"], plan["step_statuses"], plan["step_notes"], strict=True))
            steps = list(args["steps"])
            # A step keeps its status only if the same text stands at the same index.
            kept = [
                old[i] if i < len(old) and old[i][0] == s else (s, "not_started", "")
                for i, s in enumerate(steps)
            ]
            plan["steps"] = steps
            plan["step_statuses"] = [k[1] for k in kept]
            plan["step_notes"] = [k[2] for k in kept]
            head = f"Plan updated successfully: {plan_id}\n\n"
        elif command == "mark_step":
            plan = self.plans[plan_id]
            i = args["step_index"]
            if args.get("step_status"):
                plan["step_statuses"][i] = args["step_status"]
            if args.get("step_notes"):
                plan["step_notes"][i] = args["step_notes"]
            head = f"Step {i} updated in plan '{plan_id}'.\n\n"
        else:
            assert command == "get"
            plan = self.plans[plan_id]
            head = ""
        return ("planning", dict(args), head + _format_plan(plan))

    @staticmethod
    def web_search(query: str, results: Sequence[tuple[str, str, str]]) -> Call:
        lines = [f"Search results for '{query}':"]
        for i, (title, url, description) in enumerate(results, 1):
            lines += [f"\n{i}. {title}", f"   URL: {url}", f"   Description: {description}"]
        lines += [
            "\nMetadata:",
            f"- Total results: {len(results)}",
            "- Language: en",
            "- Country: us",
        ]
        return ("web_search", {"query": query}, "\n".join(lines))

    @staticmethod
    def ask_human(inquire: str, answer: str) -> Call:
        assert "\n" not in answer  # typed at "You: "
        return ("ask_human", {"inquire": inquire}, answer.strip())

    @staticmethod
    def terminate() -> Call:
        return (
            "terminate",
            {"status": "success"},
            "The interaction has been completed with status: success",
        )


def _format_plan(plan: dict[str, Any]) -> str:
    """PlanningTool._format_plan, as it prints a plan."""
    out = f"Plan: {plan['title']} (ID: {plan['plan_id']})\n"
    out += "=" * len(out) + "\n\n"
    statuses = plan["step_statuses"]
    total = len(plan["steps"])
    done = statuses.count("completed")
    out += f"Progress: {done}/{total} steps completed "
    out += f"({done / total * 100:.1f}%)\n" if total else "(0%)\n"
    out += (
        f"Status: {done} completed, {statuses.count('in_progress')} in progress, "
        f"{statuses.count('blocked')} blocked, {statuses.count('not_started')} not started\n\n"
    )
    out += "Steps:\n"
    marks = {"not_started": "[ ]", "in_progress": "[→]", "completed": "[✓]", "blocked": "[!]"}
    for i, (step, status, notes) in enumerate(
        zip(plan["steps"], statuses, plan["step_notes"], strict=True)
    ):
        out += f"{i}. {marks.get(status, '[ ]')} {step}\n"
        if notes:
            out += f"   Notes: {notes}\n"
    return out


# --- what the story's commands print ------------------------------------------------------------


def _progress(results: str) -> str:
    """PHPUnit 11's progress: 63 marks a line at 80 columns (three-digit counts), each line
    ending in its count and percentage."""
    total = len(results)
    width = len(str(total))
    columns = 80 - len("  /  (XXX%)") - 2 * width
    lines = []
    for start in range(0, total, columns):
        chunk = results[start : start + columns]
        n = start + len(chunk)
        lines.append(f"{chunk:<{columns}} {n:>{width}} / {total:>{width}} ({n * 100 // total:>3}%)")
    return "\n".join(lines)


def _phpunit(root: str, rng: random.Random, marks: str, body: str, summary: str) -> str:
    return (
        "PHPUnit 11.4.3 by Sebastian Bergmann and contributors.\n\n"
        "Runtime:       PHP 8.2.26\n"
        f"Configuration: {root}/phpunit.xml.dist\n\n"
        f"{_progress(marks)}\n\n"
        f"Time: 00:0{rng.randint(3, 8)}.{rng.randint(100, 999)}, Memory: "
        f"{rng.choice((48, 52, 56, 60))}.50 MB\n\n" + body + summary
    )


def _php_class(rng: random.Random, area: str, name: str, lines: int) -> str:
    entity = camel(ident(rng, 1))
    return (
        "<?php\n\ndeclare(strict_types=1);\n\n"
        f"namespace App\\{area};\n\n"
        f"use App\\Entity\\{entity};\n"
        f"use App\\Repository\\{entity}Repository;\n\n"
        f"final class {name}\n{{\n"
        f"    public function __construct(\n        private readonly {entity}Repository "
        f"${ident(rng, 1)}s,\n    ) {{\n    }}\n\n" + code_file(rng, "php", lines) + "}\n"
    )


def _monolog(rng: random.Random, day: str, n: int) -> str:
    channels = ("request", "doctrine", "messenger", "security", "app", "cache")
    out = []
    for _ in range(n):
        channel = rng.choice(channels)
        stamp = (
            f"[{day}T{rng.randint(6, 22):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}."
            f"{rng.randint(0, 999999):06d}+00:00]"
        )
        if channel == "request":
            route = f"api_{ident(rng)}"
            out.append(
                f'{stamp} request.INFO: Matched route "{route}". {{"route":"{route}",'
                f'"route_parameters":{{"_route":"{route}"}},"request_uri":"http://'
                f'localhost/api/{ident(rng).replace("_", "/")}","method":"GET"}} []'
            )
        elif channel == "doctrine":
            table, column, row = ident(rng), ident(rng, 1), rng.randint(1, 9999)
            out.append(
                f"{stamp} doctrine.DEBUG: Executing statement: SELECT t0.id AS id_1, "
                f"t0.{column} AS {column}_2 FROM {table} t0 WHERE t0.id = ? "
                f'(parameters: {{"1":{row}}}, types: {{"1":1}}) '
                f'{{"sql":"SELECT t0.id AS id_1, t0.{column} AS {column}_2 FROM {table} t0 '
                f'WHERE t0.id = ?","params":{{"1":{row}}},"types":{{"1":1}}}} []'
            )
        elif channel == "messenger":
            message = camel(ident(rng))
            out.append(
                f"{stamp} messenger.INFO: Message App\\Message\\{message} handled by "
                f'App\\MessageHandler\\{message}Handler::__invoke {{"class":"App\\\\Message'
                f'\\\\{message}","handler":"App\\\\MessageHandler\\\\{message}Handler::'
                '__invoke"} []'
            )
        else:
            out.append(
                f"{stamp} {channel}.{rng.choice(('INFO', 'DEBUG', 'NOTICE'))}: "
                f"{ident(rng).replace('_', ' ').capitalize()} {ident(rng, 1)}="
                f"{rng.randint(1, 9999)} took {rng.randint(1, 900)}ms [] []"
            )
    return "\n".join(sorted(out))  # a tail of the log: in time order


# --- filler -----------------------------------------------------------------------------------

_FILLER_THOUGHTS = {
    "view": (
        "Nothing in the last result settles it yet. To see how the {area} code talks to the "
        "database I'll open {rel}.",
        "That output is noted. Next I want the shape of {rel}, since {area} sits next to the "
        "checkout code.",
        "Before changing anything I'd like to know the conventions here; {rel} is a typical "
        "service in {area}, so I'll read it.",
    ),
    "range": (
        "The file is long; only the middle of {rel} matters for now, so I'll view that range.",
        "I only need part of {rel}. Viewing lines {first} to {last}.",
    ),
    "dir": (
        "Let me list what lives under src/{area} to see where similar services are kept.",
        "I'll look at the {area} directory layout next.",
    ),
    "log": (
        "Checking the recent dev log for errors around this area before going on.",
        "I'll tail the dev log to see what the app has been doing lately.",
    ),
    "grep": (
        "Searching for other callers of {word} so I don't miss a place that needs the same "
        "treatment.",
        "Let me grep for {word} across src to see who depends on it.",
    ),
    "suite": (
        "Running the {area} tests on their own to be sure nothing outside checkout moved.",
        "I'll run the {area} suite to make sure it is unaffected so far.",
    ),
    "router": (
        "Listing the routes to see which endpoints the kiosk app calls.",
        "I'll dump the router to check the API's route names and paths.",
    ),
    "count": (
        "Counting log lines per channel with Python to see which part of the app is noisiest.",
        "A quick Python tally of the dev log's channels, to know where the traffic goes.",
    ),
}


def _filler(m: _Manus, day: str) -> None:
    rng = m.rng
    area = rng.choice(_AREAS)
    kind = rng.choice([k for k in range(8) if k != m.last_filler])  # never the same twice running
    m.last_filler = kind
    thought = rng.choice(
        _FILLER_THOUGHTS[("view", "range", "dir", "log", "grep", "suite", "router", "count")[kind]]
    )
    if kind in (0, 1):
        name = camel(ident(rng))
        rel = f"src/{area}/{name}.php"
        m.files[rel] = _php_class(
            rng, area, name, rng.randint(70, 130) if kind else rng.randint(50, 90)
        )
        if kind == 0:
            m.step(thought.format(area=area, rel=rel), [m.view(rel)], filler=True)
        else:
            total = m.files[rel].count("\n")
            first = rng.choice((30, 45, 60))
            last = min(total, first + rng.choice((50, 70)))
            m.step(
                thought.format(rel=rel, first=first, last=last),
                [m.view(rel, (first, last))],
                filler=True,
            )
    elif kind == 2:
        found = sorted(
            {
                f"{rng.choice(('', 'Dto/', 'Exception/', 'Query/'))}{camel(ident(rng))}.php"
                for _ in range(rng.randint(35, 60))
            }
        )
        m.step(thought.format(area=area), [m.view_dir(f"src/{area}", found)], filler=True)
    elif kind == 3:
        n = rng.randint(45, 75)
        m.step(
            thought, [m.bash(f"tail -n {n} var/log/dev.log", _monolog(rng, day, n))], filler=True
        )
    elif kind == 4:
        word = f"find{camel(ident(rng))}"
        hits = [
            f"src/{rng.choice(_AREAS)}/{camel(ident(rng))}.php:{rng.randint(12, 190)}:        "
            f"${ident(rng, 1)} = $this->{ident(rng, 1)}s->{word}(${ident(rng, 1)});"
            for _ in range(rng.randint(14, 30))
        ]
        m.step(
            thought.format(word=word),
            [m.bash(f'grep -rn "{word}(" src/ --include=*.php', "\n".join(hits))],
            filler=True,
        )
    elif kind == 5:
        cases = rng.randint(5, 8)
        blocks = []
        n_tests = 0
        for _ in range(cases):
            name = camel(ident(rng))
            tests = [
                f" ✔ {ident(rng).replace('_', ' ').capitalize()} "
                f"{rng.choice(('is kept', 'is rounded', 'is rejected', 'is sorted'))}"
                for _ in range(rng.randint(4, 9))
            ]
            n_tests += len(tests)
            blocks.append(f"{name} (App\\Tests\\{area}\\{name}Test)\n" + "\n".join(tests))
        # A deprecation makes it "OK, but there were issues!": never the story's "OK (N tests".
        out = (
            "PHPUnit 11.4.3 by Sebastian Bergmann and contributors.\n\n"
            "Runtime:       PHP 8.2.26\n"
            f"Configuration: {m.root}/phpunit.xml.dist\n\n" + "\n\n".join(blocks) + "\n\n"
            f"Time: 00:01.{rng.randint(100, 999)}, Memory: 40.50 MB\n\n"
            "OK, but there were issues!\n"
            f"Tests: {n_tests}, Assertions: {n_tests * 3 + rng.randint(1, 20)}, "
            f"Deprecations: {rng.randint(1, 4)}."
        )
        m.step(
            thought.format(area=area),
            [m.bash(f"vendor/bin/phpunit tests/{area} --testdox", out)],
            filler=True,
        )
    elif kind == 6:
        rows = []
        for _ in range(rng.randint(30, 50)):
            name = f"api_{ident(rng)}"
            method = rng.choice(("GET", "GET", "POST", "PUT", "DELETE"))
            rows.append(
                f"  {name:<34} {method:<8} ANY      ANY    /api/"
                f"{ident(rng).replace('_', '/')}/{{id}}"
            )
        rule = " " + "-" * 34 + " -------- -------- ------ " + "-" * 40
        out = "\n".join([rule, f"  {'Name':<34} Method   Scheme   Host   Path", rule, *rows, rule])
        m.step(thought, [m.bash("php bin/console debug:router", out)], filler=True)
    else:
        channels = {
            c: rng.randint(40, 3000)
            for c in ("request", "doctrine", "messenger", "security", "app", "cache")
        }
        code = (
            "import collections, re\n"
            f"path = '{m.root}/var/log/dev.log'\n"
            "counts = collections.Counter()\n"
            "with open(path) as fh:\n"
            "    for line in fh:\n"
            "        hit = re.match(r'^\\[[^\\]]+\\] (\\w+)\\.', line)\n"
            "        if hit:\n"
            "            counts[hit.group(1)] += 1\n"
            "print(dict(counts.most_common()))"
        )
        ordered = dict(sorted(channels.items(), key=lambda kv: -kv[1]))
        m.step(thought, [m.python(code, f"{ordered}\n")], filler=True)


# --- the story ----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    """One OpenManus session of about `tokens` tokens, its story and values drawn from `seed`."""
    rng = random.Random(f"{FAMILY}:{seed}")
    pick = rng.choice
    slug, brand, user, home, mid, far, prefix = rng.choice(_OPERATORS)
    root = f"/home/{user}/code/{slug}-booking"
    workspace = f"/home/{user}/OpenManus/workspace"
    hold0, hold1, hold2 = rng.choice(_HOLD_MINUTES)
    seats0, seats1 = rng.choice(_MAX_SEATS)
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    first_ref = f"{prefix}-" + "".join(rng.choice(alphabet) for _ in range(6))
    second_ref = f"{prefix}-" + "".join(rng.choice(alphabet) for _ in range(6))
    sailing_id = rng.randint(3000, 8999)
    seat = f"{rng.randint(3, 28)}{rng.choice('ABCDF')}"
    day = f"2026-11-{rng.randint(12, 25)}"
    saturday = pick(("2026-11-07", "2026-10-31", "2026-10-24"))
    cron_commit = hexid(rng, 7)
    cron_author = rng.choice(("Ingrid Solberg", "Tomas Berg", "Priya Nair", "Jonas Lind"))
    migration = (
        f"Version2026{day[5:7]}{day[8:10]}{rng.randint(8, 17):02d}{rng.randint(0, 59):02d}"
        f"{rng.randint(0, 59):02d}"
    )
    pr = rng.randint(180, 940)
    existing = rng.randint(96, 128)  # tests in the suite before this session
    controller_tests = rng.randint(2, 4)  # checkout tests that start a checkout
    n_red = existing + 5
    n_green = existing + 5
    cron_tests = rng.randint(2, 3)  # the stale-cart command's tests, removed with it
    n_last = n_green - cron_tests + 1
    a_green = n_green * 3 + rng.randint(5, 40)
    a_red = a_green - rng.randint(12, 25)
    a_last = a_green - cron_tests * 2 + 1

    s = Session(rng=rng, system=_SYSTEM.format(directory=workspace))
    m = _Manus(s, root)
    events: list[Callable[[], None]] = []

    plan_id = "seat_holds"
    steps = [
        "Map the checkout flow and seat availability",
        "Hold seats when a checkout starts",
        "Release holds on payment or expiry",
        "Retire the stale-cart cron",
        "List active holds in the back office",
        "Document the hold settings in docs/checkout.md",
    ]
    cancelled_step = "Release holds when a sailing is cancelled"

    m.files["src/Controller/Api/CheckoutController.php"] = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Controller\\Api;\n\n"
        "use App\\Dto\\StartCheckout;\n"
        "use App\\Entity\\Sailing;\n"
        "use App\\Repository\\SeatRepository;\n"
        "use App\\Service\\BookingFactory;\n"
        "use Symfony\\Bundle\\FrameworkBundle\\Controller\\AbstractController;\n"
        "use Symfony\\Component\\HttpFoundation\\JsonResponse;\n"
        "use Symfony\\Component\\HttpFoundation\\Request;\n"
        "use Symfony\\Component\\HttpKernel\\Attribute\\MapRequestPayload;\n"
        "use Symfony\\Component\\Routing\\Attribute\\Route;\n\n"
        "#[Route('/api/checkout')]\n"
        "final class CheckoutController extends AbstractController\n{\n"
        "    public function __construct(\n"
        "        private readonly SeatRepository $seats,\n"
        "        private readonly BookingFactory $bookings,\n"
        "    ) {\n    }\n\n"
        "    #[Route('/{id}/start', name: 'api_checkout_start', methods: ['POST'])]\n"
        "    public function start(Sailing $sailing, #[MapRequestPayload] StartCheckout $payload): "
        "JsonResponse\n    {\n"
        "        $free = $this->seats->findFreeSeats($sailing, $payload->seatNumbers);\n"
        "        $missing = array_values(array_diff($payload->seatNumbers, $free));\n"
        "        if ($missing !== []) {\n"
        "            return $this->json(['error' => 'seat_unavailable', 'seats' => $missing], "
        "409);\n"
        "        }\n\n"
        "        $cart = $this->bookings->openCart($sailing, $free, $payload->customerEmail);\n\n"
        "        return $this->json([\n"
        "            'cart' => $cart->getToken(),\n"
        "            'seats' => $free,\n"
        "            'total' => $cart->getTotalCents(),\n"
        "        ], 201);\n    }\n\n"
        "    #[Route('/{token}/pay', name: 'api_checkout_pay', methods: ['POST'])]\n"
        "    public function pay(string $token, Request $request): JsonResponse\n    {\n"
        "        $booking = $this->bookings->confirm($token, (string) "
        "($request->toArray()['payment_intent'] ?? ''));\n\n"
        "        return $this->json(['booking' => $booking->getReference(), 'status' => "
        "'confirmed']);\n    }\n}\n"
    )
    m.files["src/Repository/SeatRepository.php"] = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Repository;\n\n"
        "use App\\Entity\\Sailing;\nuse App\\Entity\\Seat;\n"
        "use Doctrine\\Bundle\\DoctrineBundle\\Repository\\ServiceEntityRepository;\n"
        "use Doctrine\\Persistence\\ManagerRegistry;\n\n"
        "/**\n * @extends ServiceEntityRepository<Seat>\n */\n"
        "class SeatRepository extends ServiceEntityRepository\n{\n"
        "    public function __construct(ManagerRegistry $registry)\n    {\n"
        "        parent::__construct($registry, Seat::class);\n    }\n\n"
        "    /**\n"
        "     * The seats of $wanted nobody has booked or has in an open cart.\n"
        "     *\n     * @param list<string> $wanted\n     *\n     * @return list<string>\n     */\n"
        "    public function findFreeSeats(Sailing $sailing, array $wanted): array\n    {\n"
        "        $taken = $this->getEntityManager()->createQuery(\n"
        "            'SELECT bs.seatNumber FROM App\\Entity\\BookedSeat bs\n"
        "             JOIN bs.booking b\n"
        "             WHERE b.sailing = :sailing\n"
        "               AND b.status IN (:live)\n"
        "               AND bs.seatNumber IN (:wanted)'\n"
        "        )\n"
        "            ->setParameter('sailing', $sailing)\n"
        "            ->setParameter('live', ['confirmed', 'cart'])\n"
        "            ->setParameter('wanted', $wanted)\n"
        "            ->getSingleColumnResult();\n\n"
        "        return array_values(array_diff($wanted, $taken));\n    }\n\n"
        "    public function countForVessel(int $vesselId): int\n    {\n"
        "        return (int) $this->createQueryBuilder('s')\n"
        "            ->select('COUNT(s.id)')\n"
        "            ->andWhere('s.vessel = :vessel')\n"
        "            ->setParameter('vessel', $vesselId)\n"
        "            ->getQuery()\n"
        "            ->getSingleScalarResult();\n    }\n}\n"
    )
    m.files["config/services.yaml"] = (
        "# This file is the entry point to configure your own services.\n"
        "# Files in the packages/ subdirectory configure your dependencies.\n\n"
        "parameters:\n"
        "    app.kiosk.idle_logout_seconds: 90\n"
        f"    app.booking.reference_prefix: '{prefix}'\n\n"
        "services:\n"
        "    _defaults:\n        autowire: true\n        autoconfigure: true\n\n"
        "    App\\:\n        resource: '../src/'\n        exclude:\n"
        "            - '../src/DependencyInjection/'\n            - '../src/Entity/'\n"
        "            - '../src/Kernel.php'\n\n"
        "    App\\Pricing\\FareCalculator:\n        arguments:\n"
        "            $vatRate: '%env(float:FARE_VAT_RATE)%'\n"
    )
    m.files["config/packages/lock.yaml"] = "framework:\n    lock: '%env(LOCK_DSN)%'\n"
    m.files["config/packages/messenger.yaml"] = (
        "framework:\n    messenger:\n        failure_transport: failed\n\n"
        "        transports:\n"
        "            async:\n"
        "                dsn: '%env(MESSENGER_TRANSPORT_DSN)%'\n"
        "                retry_strategy:\n"
        "                    max_retries: 3\n"
        "                    multiplier: 2\n"
        "            failed: 'doctrine://default?queue_name=failed'\n\n"
        "        routing:\n"
        "            App\\Message\\SendBookingConfirmation: async\n"
        "            App\\Message\\SyncManifest: async\n"
    )
    m.files["src/Command/ReleaseStaleCartsCommand.php"] = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Command;\n\n"
        "use App\\Repository\\BookingRepository;\n"
        "use Symfony\\Component\\Console\\Attribute\\AsCommand;\n"
        "use Symfony\\Component\\Console\\Command\\Command;\n"
        "use Symfony\\Component\\Console\\Input\\InputInterface;\n"
        "use Symfony\\Component\\Console\\Output\\OutputInterface;\n\n"
        "#[AsCommand(name: 'app:carts:release-stale', description: 'Release carts abandoned for "
        "30 minutes')]\n"
        "final class ReleaseStaleCartsCommand extends Command\n{\n"
        "    public function __construct(private readonly BookingRepository $bookings)\n    {\n"
        "        parent::__construct();\n    }\n\n"
        "    protected function execute(InputInterface $input, OutputInterface $output): int\n"
        "    {\n"
        "        $released = $this->bookings->releaseCartsOlderThan(new "
        "\\DateTimeImmutable('-30 minutes'));\n"
        "        $output->writeln(sprintf('Released %d stale carts.', $released));\n\n"
        "        return Command::SUCCESS;\n    }\n}\n"
    )
    m.files["deploy/crontab"] = (
        "MAILTO=ops@" + slug + ".example\n"
        "*/5 * * * * www-data php /srv/app/bin/console app:carts:release-stale --no-interaction\n"
        "15 3 * * * www-data php /srv/app/bin/console app:manifest:archive --no-interaction\n"
        "*/10 * * * * www-data php /srv/app/bin/console messenger:stats --no-interaction\n"
    )

    # 1. the ask: the task, two values, three rules — one line, as `input()` reads it
    def ask() -> None:
        m.request(
            pick(
                (
                    f"repo is {root} (symfony 7, the {brand} booking backend). problem: two "
                    "people can start checkout for the same seat and whoever pays second gets an "
                    "error after paying. when a checkout starts, put "
                    f"{_article(hold0)} {hold0}-minute hold on the seats so nobody else can take "
                    f"them, at most {seats0} seats per hold. rules: the terminal servers run "
                    "PHP 8.2 so nothing that needs PHP "
                    "8.3, no new Composer packages (security review takes weeks), and the kiosk "
                    "app parses /api/checkout so don't change the response shape.",
                    f"working dir for this: {root} — symfony app for {brand} ferry bookings. "
                    "we sell the same seat twice when two checkouts overlap, second payer gets "
                    "refunded and angry. I want seat holds: checkout start puts "
                    f"{_article(hold0)} {hold0}-minute hold on them, at most {seats0} seats per "
                    "hold. constraints: servers "
                    "at the terminals are PHP 8.2, nothing that needs PHP 8.3; no new Composer "
                    "packages; and keep the response shape of /api/checkout, the kiosks parse it.",
                )
            )
        )
        s.fact("constraint", "Nothing that needs a newer PHP than the terminals run.", ("PHP 8.3",))
        s.fact("constraint", "No new Composer packages.", ("no new Composer packages",))
        s.fact("constraint", "The checkout API keeps its response shape.", ("response shape",))
        m.step(
            pick(
                (
                    "This is a multi-part change, so I'll start with a plan and then look at "
                    "the checkout code before deciding how to hold seats.",
                    "I'll break the task into steps with the planning tool first, then explore "
                    "the repository.",
                )
            ),
            [
                m.planning(
                    command="create",
                    plan_id=plan_id,
                    title=f"Seat holds for {brand} checkout",
                    steps=steps,
                )
            ],
        )
        found = [
            "bin",
            "bin/console",
            "bin/phpunit",
            "config",
            "config/packages",
            "config/routes",
            "config/services.yaml",
            "config/bundles.php",
            "deploy",
            "deploy/crontab",
            "deploy/helm",
            "docs",
            "docs/checkout.md",
            "docs/kiosk-api.md",
            "migrations",
            "public",
            "public/index.php",
            "src",
            "src/Command",
            "src/Controller",
            "src/Dto",
            "src/Entity",
            "src/Kernel.php",
            "src/Kiosk",
            "src/Manifest",
            "src/Message",
            "src/MessageHandler",
            "src/Pricing",
            "src/Repository",
            "src/Service",
            "src/Timetable",
            "src/Vessel",
            "tests",
            "tests/Command",
            "tests/Controller",
            "tests/Factory",
            "tests/Pricing",
            "tests/Service",
            "tests/bootstrap.php",
            "var",
            "var/cache",
            "var/log",
            "vendor",
            "composer.json",
            "composer.lock",
            "phpstan.dist.neon",
            "phpunit.xml.dist",
            "symfony.lock",
        ]
        m.step(
            "The plan is in place with six steps; step 0 is mapping the checkout flow. I'll "
            "look at the project layout first.",
            [m.view_dir("", found)],
        )
        m.step(
            "A standard Symfony layout. The bash session starts in OpenManus's own directory, "
            "so I'll move into the repository and check its state.",
            [m.bash(f"cd {root} && git status --short --branch", "## main...origin/main")],
        )

    events.append(ask)

    # 2. the checkout code and what the lock file already has
    def explore() -> None:
        m.step(
            "The controllers live under src/Controller. The checkout endpoint is the one the "
            "kiosk calls, so I'll read CheckoutController.",
            [m.view("src/Controller/Api/CheckoutController.php")],
        )
        m.step(
            "`start` asks SeatRepository::findFreeSeats and opens a cart; nothing reserves the "
            "seats between start and pay. Let me see how free seats are computed.",
            [m.view("src/Repository/SeatRepository.php")],
        )
        m.step(
            "A seat counts as taken once a booking in status 'cart' or 'confirmed' has it, and "
            "carts are released by some cron. Since new packages are off the table, I'll check "
            "which Symfony components composer.lock already has.",
            [
                m.python(
                    "import json\nlock = json.load(open('composer.lock'))\n"
                    "print({p['name']: p['version'] for p in lock['packages']})",
                    "[Errno 2] No such file or directory: 'composer.lock'",
                    success=False,
                )
            ],
        )
        versions = {
            "doctrine/doctrine-bundle": "2.13.1",
            "doctrine/doctrine-migrations-bundle": "3.3.1",
            "doctrine/orm": "3.3.0",
            "symfony/clock": "v7.1.6",
            "symfony/framework-bundle": "v7.1.7",
            "symfony/lock": "v7.1.6",
            "symfony/messenger": "v7.1.6",
            "symfony/scheduler": "v7.1.7",
            "symfony/uid": "v7.1.5",
        }
        m.step(
            "python_execute runs from OpenManus's own directory, so the relative path failed. "
            "Retrying with the absolute path and only the packages that matter.",
            [
                m.python(
                    f"import json\nlock = json.load(open('{root}/composer.lock'))\n"
                    "wanted = ('symfony/lock', 'symfony/scheduler', 'symfony/messenger', "
                    "'symfony/clock', 'symfony/uid', 'symfony/framework-bundle', 'doctrine/orm', "
                    "'doctrine/doctrine-bundle', 'doctrine/doctrine-migrations-bundle')\n"
                    "for p in sorted(lock['packages'], key=lambda p: p['name']):\n"
                    "    if p['name'] in wanted:\n"
                    "        print(p['name'], p['version'])",
                    "".join(f"{name} {version}\n" for name, version in versions.items()),
                )
            ],
        )
        s.fact(
            "file_read",
            "The lock file was read for installed packages.",
            ("composer.lock",),
            required=False,
        )

    events.append(explore)

    locker = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Service;\n\n"
        "use App\\Entity\\Sailing;\n"
        "use Symfony\\Component\\DependencyInjection\\Attribute\\Autowire;\n"
        "use Symfony\\Component\\Lock\\LockFactory;\n"
        "use Symfony\\Component\\Lock\\SharedLockInterface;\n\n"
        "final class SeatLocker\n{\n"
        "    public function __construct(\n"
        "        private readonly LockFactory $lockFactory,\n"
        "        #[Autowire(param: 'app.seat_hold.minutes')]\n"
        "        private readonly int $minutes,\n"
        "    ) {\n    }\n\n"
        "    /**\n     * @param list<string> $seatNumbers\n     *\n"
        "     * @return list<SharedLockInterface>\n     */\n"
        "    public function lock(Sailing $sailing, array $seatNumbers): array\n    {\n"
        "        $locks = [];\n"
        "        foreach ($seatNumbers as $seat) {\n"
        "            $lock = $this->lockFactory->createLock(\n"
        "                sprintf('seat-%d-%s', $sailing->getId(), $seat), $this->minutes * 60, "
        "false\n            );\n"
        "            if (!$lock->acquire()) {\n"
        "                array_walk($locks, static fn (SharedLockInterface $held) => "
        "$held->release());\n\n"
        "                return [];\n            }\n"
        "            $locks[] = $lock;\n        }\n\n"
        "        return $locks;\n    }\n}\n"
    )

    # 3. the first plan: locks
    def lock_first() -> None:
        m.step(
            "symfony/lock is already installed and configured; let me see which store "
            "config/packages/lock.yaml points at.",
            [m.view("config/packages/lock.yaml")],
        )
        m.step(
            "The lock DSN comes from LOCK_DSN. Checking its value in .env.",
            [
                m.bash(
                    "grep -n LOCK_DSN .env .env.prod",
                    ".env:41:LOCK_DSN=redis://kiosk-redis:6379/3\n"
                    ".env.prod:12:LOCK_DSN=redis://kiosk-redis:6379/3",
                )
            ],
        )
        m.step(
            pick(
                (
                    "The lock store is the kiosk Redis. My approach: use the Symfony Lock "
                    "component — one expiring lock per seat, keyed by sailing and seat number, "
                    "with the hold length as its TTL. No new package and no schema change. "
                    "First the two settings go into services.yaml as parameters.",
                    "Plan for the holds: the Symfony Lock component already in the project, "
                    "one lock per seat with a TTL equal to the hold length, so an abandoned "
                    "checkout frees its seats by itself. I'll add the hold settings as "
                    "container parameters first.",
                )
            ),
            [
                m.replace(
                    "config/services.yaml",
                    "    app.kiosk.idle_logout_seconds: 90\n",
                    "    app.kiosk.idle_logout_seconds: 90\n"
                    f"    app.seat_hold.minutes: {hold0}\n"
                    f"    app.seat_hold.max_seats: {seats0}\n",
                )
            ],
        )
        m.step(
            "Parameters added. Now the service that takes the per-seat locks.",
            [m.create("src/Service/SeatLocker.php", locker)],
        )
        m.step(
            "SeatLocker is written. Marking the exploration step done and the holding step as "
            "in progress.",
            [
                m.planning(
                    command="mark_step", plan_id=plan_id, step_index=0, step_status="completed"
                )
            ],
        )
        m.step(
            "Step 0 is completed; setting step 1 in progress.",
            [
                m.planning(
                    command="mark_step", plan_id=plan_id, step_index=1, step_status="in_progress"
                )
            ],
        )

    events.append(lock_first)

    # 4. the user's answer through ask_human, and the reversal
    def pushback() -> None:
        m.step(
            "Before I wire SeatLocker into checkout: it keeps the holds in the kiosk Redis, and "
            "that choice is hard to undo later. I'll confirm it with the user.",
            [
                m.ask_human(
                    "I'm about to wire seat holds in as locks (Symfony Lock) stored in the "
                    "kiosk Redis at LOCK_DSN, one lock per seat with the hold length as TTL. Is "
                    "that Redis fine for this?",
                    pick(
                        (
                            "no. kiosk-redis is a single node and it gets flushed on every "
                            "deploy, holds would disappear in the middle of a checkout. and "
                            "finance wants to see the open holds, they can't look into redis. "
                            "put them in postgres. also keep everything clean at PHPStan level "
                            "8, CI blocks on it",
                            "not redis please — that box is flushed on each deploy and it's a "
                            "single node, we'd lose holds mid-checkout. finance also wants to "
                            "query open holds, so postgres. and whatever you write must pass "
                            "PHPStan level 8, the pipeline fails otherwise",
                        )
                    ),
                )
            ],
        )
        s.fact("constraint", "The code passes PHPStan at level 8.", ("PHPStan level 8",))
        m.step(
            "The user rules out Redis. Before switching, I'll check how Doctrine takes a row "
            "lock on PostgreSQL so concurrent checkouts can't both win.",
            [
                m.web_search(
                    "doctrine orm pessimistic write lock postgresql concurrent insert unique "
                    "constraint",
                    [
                        (
                            "Transactions and Concurrency - Doctrine Object Relational Mapper "
                            "(ORM)",
                            "https://www.doctrine-project.org/projects/doctrine-orm/en/3.3/reference/"
                            "transactions-and-concurrency.html",
                            "Doctrine ORM supports Pessimistic- and Optimistic-locking strategies "
                            "natively... LockMode::PESSIMISTIC_WRITE locks the underlying database "
                            "rows for concurrent Read and Write Operations.",
                        ),
                        (
                            "PostgreSQL: Documentation: 16: 13.3. Explicit Locking",
                            "https://www.postgresql.org/docs/16/explicit-locking.html",
                            "FOR UPDATE causes the rows retrieved by the SELECT statement to be "
                            "locked as though for update.",
                        ),
                        (
                            "How to handle UniqueConstraintViolationException in Doctrine - Stack "
                            "Overflow",
                            "https://stackoverflow.com/questions/39564913",
                            "Catch Doctrine\\DBAL\\Exception\\UniqueConstraintViolationException "
                            "around flush(); the EntityManager is closed afterwards, so reset it.",
                        ),
                        (
                            "Using a unique index to prevent double booking",
                            "https://dba.stackexchange.com/questions/203847",
                            "A unique index on (resource_id, slot) lets the database reject the "
                            "second concurrent insert without explicit locks.",
                        ),
                        (
                            "Doctrine wrapInTransaction return type mixed",
                            "https://github.com/doctrine/orm/issues/10850",
                            "wrapInTransaction() is declared to return mixed; static analysers "
                            "need an inline @var on the result.",
                        ),
                    ],
                )
            ],
        )
        m.step(
            pick(
                (
                    "That settles it: I'm abandoning the Symfony Lock approach. Instead each "
                    "hold becomes a row in a seat_hold table (sailing, seat number, cart token, "
                    "expires_at) with a unique index on sailing and seat, so PostgreSQL itself "
                    "refuses the second checkout, holds survive deploys, and finance can query "
                    "them. SeatLocker goes away; deleting it with Python.",
                    "Changing course. The Symfony Lock version is dropped: holds will be rows "
                    "in a seat_hold table keyed by sailing and seat, unique together, with an "
                    "expires_at column — the database rejects a second hold on the same seat, "
                    "nothing is lost on deploy, and finance can read the table. Removing "
                    "SeatLocker first.",
                )
            ),
            [
                m.python(
                    f"import os\npath = '{root}/src/Service/SeatLocker.php'\nos.remove(path)\n"
                    "print('removed', path, os.path.exists(path))",
                    f"removed {root}/src/Service/SeatLocker.php False\n",
                )
            ],
        )
        del m.files["src/Service/SeatLocker.php"]
        s.fact(
            "decision",
            "Holds are rows in a seat_hold table, not locks.",
            ("seat_hold table",),
            stale=("Symfony Lock",),
        )
        s.fact(
            "file_deleted",
            "The lock-based SeatLocker was deleted.",
            ("src/Service/SeatLocker.php",),
        )

    events.append(pushback)

    entity = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Entity;\n\n"
        "use App\\Repository\\SeatHoldRepository;\n"
        "use Doctrine\\DBAL\\Types\\Types;\n"
        "use Doctrine\\ORM\\Mapping as ORM;\n\n"
        "#[ORM\\Entity(repositoryClass: SeatHoldRepository::class)]\n"
        "#[ORM\\Table(name: 'seat_hold')]\n"
        "#[ORM\\UniqueConstraint(name: 'uniq_hold_sailing_seat', columns: ['sailing_id', "
        "'seat_number'])]\n"
        "#[ORM\\Index(name: 'idx_hold_expires', columns: ['expires_at'])]\n"
        "#[ORM\\Index(name: 'idx_hold_cart', columns: ['cart_token'])]\n"
        "class SeatHold\n{\n"
        "    #[ORM\\Id]\n    #[ORM\\GeneratedValue]\n    #[ORM\\Column]\n"
        "    private ?int $id = null;\n\n"
        "    public function __construct(\n"
        "        #[ORM\\ManyToOne]\n"
        "        #[ORM\\JoinColumn(nullable: false, onDelete: 'CASCADE')]\n"
        "        private Sailing $sailing,\n"
        "        #[ORM\\Column(length: 8)]\n"
        "        private string $seatNumber,\n"
        "        #[ORM\\Column(length: 64)]\n"
        "        private string $cartToken,\n"
        "        #[ORM\\Column(type: Types::DATETIME_IMMUTABLE)]\n"
        "        private \\DateTimeImmutable $expiresAt,\n"
        "    ) {\n    }\n\n"
        "    public function getId(): ?int\n    {\n        return $this->id;\n    }\n\n"
        "    public function getSailing(): Sailing\n    {\n        return $this->sailing;\n"
        "    }\n\n"
        "    public function getSeatNumber(): string\n    {\n        return $this->seatNumber;\n"
        "    }\n\n"
        "    public function getCartToken(): string\n    {\n        return $this->cartToken;\n"
        "    }\n\n"
        "    public function getExpiresAt(): \\DateTimeImmutable\n    {\n"
        "        return $this->expiresAt;\n    }\n}\n"
    )
    manager = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Service;\n\n"
        "use App\\Entity\\Sailing;\nuse App\\Entity\\SeatHold;\n"
        "use App\\Service\\Exception\\SeatAlreadyHeldException;\n"
        "use App\\Service\\Exception\\TooManySeatsException;\n"
        "use Doctrine\\DBAL\\Exception\\UniqueConstraintViolationException;\n"
        "use Doctrine\\ORM\\EntityManagerInterface;\n"
        "use Psr\\Clock\\ClockInterface;\n"
        "use Symfony\\Component\\DependencyInjection\\Attribute\\Autowire;\n\n"
        "final class SeatHoldManager\n{\n"
        "    public function __construct(\n"
        "        private readonly EntityManagerInterface $em,\n"
        "        private readonly ClockInterface $clock,\n"
        "        #[Autowire(param: 'app.seat_hold.minutes')]\n"
        "        private readonly int $minutes,\n"
        "        #[Autowire(param: 'app.seat_hold.max_seats')]\n"
        "        private readonly int $maxSeats,\n"
        "    ) {\n    }\n\n"
        "    /**\n     * @param list<string> $seatNumbers\n     *\n"
        "     * @return list<SeatHold>\n     */\n"
        "    public function hold(Sailing $sailing, array $seatNumbers, string $cartToken): array\n"
        "    {\n"
        "        if (\\count($seatNumbers) > $this->maxSeats) {\n"
        "            throw new TooManySeatsException($this->maxSeats);\n        }\n"
        "        $now = $this->clock->now();\n\n"
        "        try {\n"
        "            return $this->em->wrapInTransaction(function () use ($sailing, $seatNumbers, "
        "$cartToken, $now): array {\n"
        "                $this->em->createQuery(\n"
        "                    'DELETE FROM App\\Entity\\SeatHold h\n"
        "                     WHERE h.sailing = :sailing AND h.seatNumber IN (:seats) AND "
        "h.expiresAt <= :now'\n"
        "                )->execute(['sailing' => $sailing, 'seats' => $seatNumbers, 'now' => "
        "$now]);\n\n"
        "                $made = [];\n"
        "                foreach ($seatNumbers as $seat) {\n"
        "                    $made[] = $hold = new SeatHold($sailing, $seat, $cartToken, "
        '$now->modify("+{$this->minutes} minutes"));\n'
        "                    $this->em->persist($hold);\n                }\n"
        "                $this->em->flush();\n\n"
        "                return $made;\n            });\n"
        "        } catch (UniqueConstraintViolationException) {\n"
        "            throw new SeatAlreadyHeldException($seatNumbers);\n        }\n    }\n\n"
        "    public function release(string $cartToken): int\n    {\n"
        "        return (int) $this->em->createQuery('DELETE FROM App\\Entity\\SeatHold h WHERE "
        "h.cartToken = :token')\n"
        "            ->execute(['token' => $cartToken]);\n    }\n}\n"
    )
    repository = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Repository;\n\n"
        "use App\\Entity\\SeatHold;\n"
        "use Doctrine\\Bundle\\DoctrineBundle\\Repository\\ServiceEntityRepository;\n"
        "use Doctrine\\Persistence\\ManagerRegistry;\n\n"
        "/**\n * @extends ServiceEntityRepository<SeatHold>\n */\n"
        "class SeatHoldRepository extends ServiceEntityRepository\n{\n"
        "    public function __construct(ManagerRegistry $registry)\n    {\n"
        "        parent::__construct($registry, SeatHold::class);\n    }\n}\n"
    )

    def exception(name: str, body: str) -> str:
        return (
            "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Service\\Exception;\n\n"
            f"final class {name} extends \\RuntimeException\n{{\n{body}}}\n"
        )

    # 5. the entity and the manager
    def holds() -> None:
        m.step(
            "SeatLocker is gone. Now the SeatHold entity and its repository, in one go.",
            [
                m.create("src/Entity/SeatHold.php", entity),
                m.create("src/Repository/SeatHoldRepository.php", repository),
            ],
        )
        s.fact("file_created", "The SeatHold entity was created.", ("src/Entity/SeatHold.php",))
        m.step(
            "Both files are created. Next the two exceptions the manager throws.",
            [
                m.create(
                    "src/Service/Exception/SeatAlreadyHeldException.php",
                    exception(
                        "SeatAlreadyHeldException",
                        "    /**\n     * @param list<string> $seatNumbers\n     */\n"
                        "    public function __construct(public readonly array $seatNumbers)\n"
                        "    {\n        parent::__construct('Seats already held: '."
                        "implode(', ', $seatNumbers));\n    }\n",
                    ),
                ),
                m.create(
                    "src/Service/Exception/TooManySeatsException.php",
                    exception(
                        "TooManySeatsException",
                        "    public function __construct(public readonly int $limit)\n    {\n"
                        "        parent::__construct(sprintf('A hold takes at most %d seats.', "
                        "$limit));\n    }\n",
                    ),
                ),
            ],
        )
        m.step(
            "Now the service that takes and releases holds. Expired holds on the requested seats "
            "are deleted inside the same transaction, so a stale row never blocks the unique "
            "index.",
            [m.create("src/Service/SeatHoldManager.php", manager)],
        )
        s.fact(
            "file_created",
            "The SeatHoldManager service was created.",
            ("src/Service/SeatHoldManager.php",),
        )

    events.append(holds)

    # 6. wiring: the repository and the controller (one old_str that does not match)
    def wire() -> None:
        m.step(
            "Availability must ignore seats under a live hold, and carts no longer reserve "
            "anything by themselves. Updating findFreeSeats.",
            [
                m.replace(
                    "src/Repository/SeatRepository.php",
                    "            ->setParameter('live', ['confirmed', 'cart'])\n"
                    "            ->setParameter('wanted', $wanted)\n"
                    "            ->getSingleColumnResult();\n\n"
                    "        return array_values(array_diff($wanted, $taken));\n",
                    "            ->setParameter('live', ['confirmed'])\n"
                    "            ->setParameter('wanted', $wanted)\n"
                    "            ->getSingleColumnResult();\n\n"
                    "        $held = $this->getEntityManager()->createQuery(\n"
                    "            'SELECT h.seatNumber FROM App\\Entity\\SeatHold h\n"
                    "             WHERE h.sailing = :sailing\n"
                    "               AND h.expiresAt > :now\n"
                    "               AND h.seatNumber IN (:wanted)'\n"
                    "        )\n"
                    "            ->setParameter('sailing', $sailing)\n"
                    "            ->setParameter('now', new \\DateTimeImmutable())\n"
                    "            ->setParameter('wanted', $wanted)\n"
                    "            ->getSingleColumnResult();\n\n"
                    "        return array_values(array_diff($wanted, $taken, $held));\n",
                )
            ],
        )
        s.fact(
            "file_modified",
            "Free seats leave out held ones.",
            ("src/Repository/SeatRepository.php",),
        )
        controller = "src/Controller/Api/CheckoutController.php"
        m.step(
            "Now the controller needs the manager injected.",
            [
                m.replace(
                    controller,
                    "        private BookingFactory $bookings,\n",
                    "        private BookingFactory $bookings,\n"
                    "        private SeatHoldManager $holds,\n",
                )
            ],
        )
        m.step(
            "The old_str did not match: the promoted properties are declared `private "
            "readonly`, and I left out `readonly`. Retrying with the exact line.",
            [
                m.replace(
                    controller,
                    "        private readonly BookingFactory $bookings,\n",
                    "        private readonly BookingFactory $bookings,\n"
                    "        private readonly SeatHoldManager $holds,\n",
                )
            ],
        )
        m.step(
            "Injected. Adding the use statements for the manager and its exceptions.",
            [
                m.replace(
                    controller,
                    "use App\\Service\\BookingFactory;\n",
                    "use App\\Service\\BookingFactory;\n"
                    "use App\\Service\\Exception\\SeatAlreadyHeldException;\n"
                    "use App\\Service\\Exception\\TooManySeatsException;\n"
                    "use App\\Service\\SeatHoldManager;\n",
                )
            ],
        )
        m.step(
            "Now `start` takes the hold right after the cart is opened. On a conflict the cart "
            "is discarded and the answer is the existing 409 with the same keys, so the kiosk "
            "sees the same JSON as today.",
            [
                m.replace(
                    controller,
                    "        $cart = $this->bookings->openCart($sailing, $free, "
                    "$payload->customerEmail);\n",
                    "        $cart = $this->bookings->openCart($sailing, $free, "
                    "$payload->customerEmail);\n"
                    "        try {\n"
                    "            $this->holds->hold($sailing, $free, $cart->getToken());\n"
                    "        } catch (SeatAlreadyHeldException $e) {\n"
                    "            $this->bookings->discardCart($cart);\n\n"
                    "            return $this->json(['error' => 'seat_unavailable', 'seats' => "
                    "$e->seatNumbers], 409);\n"
                    "        } catch (TooManySeatsException) {\n"
                    "            $this->bookings->discardCart($cart);\n\n"
                    "            return $this->json(['error' => 'too_many_seats', 'seats' => "
                    "$free], 422);\n"
                    "        }\n",
                )
            ],
        )
        m.step(
            "Last, payment releases the cart's holds once the booking is confirmed.",
            [
                m.replace(
                    controller,
                    "($request->toArray()['payment_intent'] ?? ''));\n",
                    "($request->toArray()['payment_intent'] ?? ''));\n"
                    "        $this->holds->release($token);\n",
                )
            ],
        )
        s.fact("file_modified", "The checkout controller takes and releases holds.", (controller,))

    events.append(wire)

    # 7. cleanup of expired rows: a second decision, and an insert undone
    def purge() -> None:
        m.step(
            pick(
                (
                    "For cleanup I won't bring back a cron: availability already ignores "
                    "expired rows, so they only take space. A Symfony Scheduler task (the "
                    "package is in composer.lock) will delete expired holds once an hour. "
                    "Creating the message, the schedule and the handler.",
                    "Expired rows are harmless to availability, so cleanup can be lazy: a "
                    "Symfony Scheduler task, hourly, deletes holds past expires_at — "
                    "symfony/scheduler is already installed, and no crontab entry is needed. "
                    "Creating the three small classes.",
                )
            ),
            [
                m.create(
                    "src/Message/PurgeExpiredHolds.php",
                    "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Message;\n\n"
                    "final class PurgeExpiredHolds\n{\n}\n",
                ),
                m.create(
                    "src/Scheduler/HoldPurgeSchedule.php",
                    "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Scheduler;\n\n"
                    "use App\\Message\\PurgeExpiredHolds;\n"
                    "use Symfony\\Component\\Scheduler\\Attribute\\AsSchedule;\n"
                    "use Symfony\\Component\\Scheduler\\RecurringMessage;\n"
                    "use Symfony\\Component\\Scheduler\\Schedule;\n"
                    "use Symfony\\Component\\Scheduler\\ScheduleProviderInterface;\n\n"
                    "#[AsSchedule('holds')]\n"
                    "final class HoldPurgeSchedule implements ScheduleProviderInterface\n{\n"
                    "    public function getSchedule(): Schedule\n    {\n"
                    "        return (new Schedule())->add(RecurringMessage::every('1 hour', new "
                    "PurgeExpiredHolds()));\n    }\n}\n",
                ),
                m.create(
                    "src/MessageHandler/PurgeExpiredHoldsHandler.php",
                    "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\MessageHandler;\n\n"
                    "use App\\Message\\PurgeExpiredHolds;\n"
                    "use Doctrine\\ORM\\EntityManagerInterface;\n"
                    "use Psr\\Clock\\ClockInterface;\n"
                    "use Symfony\\Component\\Messenger\\Attribute\\AsMessageHandler;\n\n"
                    "#[AsMessageHandler]\n"
                    "final class PurgeExpiredHoldsHandler\n{\n"
                    "    public function __construct(\n"
                    "        private readonly EntityManagerInterface $em,\n"
                    "        private readonly ClockInterface $clock,\n"
                    "    ) {\n    }\n\n"
                    "    public function __invoke(PurgeExpiredHolds $message): void\n    {\n"
                    "        $this->em->createQuery('DELETE FROM App\\Entity\\SeatHold h WHERE "
                    "h.expiresAt <= :cutoff')\n"
                    "            ->execute(['cutoff' => $this->clock->now()]);\n    }\n}\n",
                ),
            ],
        )
        s.fact(
            "decision", "A scheduled task purges expired holds; no cron.", ("Symfony Scheduler",)
        )
        m.step(
            "All three are created. I'll route the purge message to the async transport in "
            "messenger.yaml.",
            [
                m.insert(
                    "config/packages/messenger.yaml",
                    10,
                    "            App\\Message\\PurgeExpiredHolds: async",
                )
            ],
        )
        m.step(
            "That landed inside `transports`, between the async retry strategy and the failed "
            "transport — wrong block. "
            "And on second thought no routing is needed at all: scheduled messages are consumed "
            "from their own scheduler_holds transport. Undoing the insert.",
            [m.undo("config/packages/messenger.yaml")],
        )
        m.step(
            "messenger.yaml is back as it was. Marking step 1 done and step 2 (release on "
            "payment or expiry) in progress, since release() and the purge cover it.",
            [
                m.planning(
                    command="mark_step", plan_id=plan_id, step_index=1, step_status="completed"
                )
            ],
        )

    events.append(purge)

    test_file = (
        "<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Tests\\Service;\n\n"
        "use App\\Repository\\SeatRepository;\n"
        "use App\\Service\\Exception\\SeatAlreadyHeldException;\n"
        "use App\\Service\\Exception\\TooManySeatsException;\n"
        "use App\\Service\\SeatHoldManager;\n"
        "use App\\Tests\\Factory\\SailingFactory;\n"
        "use Symfony\\Bundle\\FrameworkBundle\\Test\\KernelTestCase;\n"
        "use Symfony\\Component\\Clock\\Test\\ClockSensitiveTrait;\n"
        "use Zenstruck\\Foundry\\Test\\Factories;\n"
        "use Zenstruck\\Foundry\\Test\\ResetDatabase;\n\n"
        "final class SeatHoldManagerTest extends KernelTestCase\n{\n"
        "    use ClockSensitiveTrait;\n    use Factories;\n    use ResetDatabase;\n\n"
        "    private SeatHoldManager $holds;\n    private SeatRepository $seats;\n\n"
        "    protected function setUp(): void\n    {\n"
        "        self::bootKernel();\n"
        "        $this->holds = self::getContainer()->get(SeatHoldManager::class);\n"
        "        $this->seats = self::getContainer()->get(SeatRepository::class);\n    }\n\n"
        "    public function testHeldSeatIsNotFree(): void\n    {\n"
        "        $sailing = SailingFactory::createOne()->_real();\n"
        f"        $this->holds->hold($sailing, ['{seat}'], 'cart-a');\n\n"
        f"        self::assertSame([], $this->seats->findFreeSeats($sailing, ['{seat}']));\n"
        "    }\n\n"
        "    public function testHoldExpires(): void\n    {\n"
        f"        $clock = self::mockTime('{day} 07:00:00');\n"
        "        $sailing = SailingFactory::createOne()->_real();\n"
        f"        $this->holds->hold($sailing, ['{seat}'], 'cart-a');\n"
        "        $clock->modify('+1 day');\n\n"
        f"        self::assertSame(['{seat}'], $this->seats->findFreeSeats($sailing, "
        f"['{seat}']));\n"
        "    }\n\n"
        "    public function testSecondHoldOnTheSameSeatIsRefused(): void\n    {\n"
        "        $sailing = SailingFactory::createOne()->_real();\n"
        f"        $this->holds->hold($sailing, ['{seat}'], 'cart-a');\n\n"
        "        $this->expectException(SeatAlreadyHeldException::class);\n"
        f"        $this->holds->hold($sailing, ['{seat}'], 'cart-b');\n    }}\n\n"
        "    public function testTooManySeatsAreRefused(): void\n    {\n"
        "        $sailing = SailingFactory::createOne()->_real();\n\n"
        "        $this->expectException(TooManySeatsException::class);\n"
        "        $this->holds->hold($sailing, array_map(static fn (int $n): string => $n.'A', "
        "range(1, 40)), 'cart-a');\n    }\n\n"
        "    public function testReleaseFreesTheCartsSeats(): void\n    {\n"
        "        $sailing = SailingFactory::createOne()->_real();\n"
        f"        $this->holds->hold($sailing, ['{seat}'], 'cart-a');\n"
        "        $this->holds->release('cart-a');\n\n"
        f"        self::assertSame(['{seat}'], $this->seats->findFreeSeats($sailing, "
        f"['{seat}']));\n"
        "    }\n}\n"
    )
    new_tests = (
        "testHeldSeatIsNotFree",
        "testHoldExpires",
        "testSecondHoldOnTheSameSeatIsRefused",
        "testTooManySeatsAreRefused",
        "testReleaseFreesTheCartsSeats",
    )

    # 8. tests, and the first run: the table does not exist
    def first_run() -> None:
        m.step(
            "The code is in place. Now tests for the manager: a held seat is not free, an "
            "expired hold frees it, a second hold is refused, too many seats are refused, and "
            "release frees the seats.",
            [m.create("tests/Service/SeatHoldManagerTest.php", test_file)],
        )
        s.fact(
            "file_created",
            "The hold tests were created.",
            ("tests/Service/SeatHoldManagerTest.php",),
        )
        error = 'relation "seat_hold" does not exist'
        failing = [f"App\\Tests\\Service\\SeatHoldManagerTest::{t}" for t in new_tests[:3]]
        failing += [f"App\\Tests\\Service\\SeatHoldManagerTest::{new_tests[4]}"]
        failing += [
            f"App\\Tests\\Controller\\Api\\CheckoutControllerTest::test{camel(ident(rng))}"
            for _ in range(controller_tests)
        ]
        n_err = len(failing)
        marks = list("." * (n_red - n_err) + "E" * n_err)
        tail = marks[existing - 20 :]
        rng.shuffle(tail)
        marks[existing - 20 :] = tail
        blocks = []
        test_lines = test_file.split("\n")
        for i, name in enumerate(failing, 1):
            # A manager test fails at its first hold() call, where the query runs.
            line = rng.randint(30, 60)
            if "Controller" not in name:
                start = test_lines.index(f"    public function {name.rsplit(':', 1)[1]}(): void")
                line = next(i for i, x in enumerate(test_lines[start:], start + 1) if "hold(" in x)
            test_path = (
                "tests/Controller/Api/CheckoutControllerTest.php"
                if "Controller" in name
                else "tests/Service/SeatHoldManagerTest.php"
            )
            blocks.append(
                f"{i}) {name}\n"
                "Doctrine\\DBAL\\Exception\\TableNotFoundException: An exception occurred while "
                f"executing a query: SQLSTATE[42P01]: Undefined table: 7 ERROR:  {error}\n"
                "LINE 1: DELETE FROM seat_hold WHERE sailing_id = $1 AND seat_numbe...\n"
                "                    ^\n\n"
                f"{root}/vendor/doctrine/dbal/src/Driver/API/PostgreSQL/ExceptionConverter.php:77\n"
                f"{root}/vendor/doctrine/dbal/src/Connection.php:1943\n"
                f"{root}/vendor/doctrine/orm/src/Query/Exec/SingleTableDeleteUpdateExecutor.php:38\n"
                f"{root}/src/Service/SeatHoldManager.php:43\n"
                f"{root}/vendor/doctrine/orm/src/EntityManager.php:186\n"
                f"{root}/src/Service/SeatHoldManager.php:52\n"
                f"{root}/{test_path}:{line}\n"
            )
        body = (
            f"There were {n_err} errors:\n\n"
            + "\n".join(blocks)
            + "\n--\n\nThere was 1 PHPUnit test runner deprecation:\n\n"
            "1) Your XML configuration validates against a deprecated schema. Migrate your "
            'XML configuration using "--migrate-configuration"!\n\n'
        )
        out = _phpunit(
            root,
            rng,
            "".join(marks),
            body,
            f"ERRORS!\nTests: {n_red}, Assertions: {a_red}, Errors: {n_err}.",
        )
        m.step(
            "Running the whole suite.",
            [m.bash("vendor/bin/phpunit", out)],
        )
        s.fact(
            "error_resolved",
            "The test database had no seat_hold table.",
            ('relation "seat_hold" does not exist',),
            required=False,
        )

    events.append(first_run)

    # 9. the migration, then green
    def migrate() -> None:
        m.step(
            pick(
                (
                    f"{controller_tests + 4} errors, all the same: relation seat_hold is "
                    "missing from the test database. I never generated a migration, and the "
                    "test database is built from migrations. Generating one from the mapping.",
                    "Every error is the missing seat_hold relation: the entity has no "
                    "migration yet, so the test schema doesn't have the table. Next: "
                    "doctrine:migrations:diff.",
                )
            ),
            [
                m.bash(
                    "php bin/console doctrine:migrations:diff --no-interaction",
                    f'\n Generated new migration class to "{root}/migrations/{migration}.php"\n'
                    " \n To run just this migration for testing purposes, you can use "
                    f"migrations:execute --up 'DoctrineMigrations\\\\{migration}'\n \n To revert "
                    "the migration you can use migrations:execute --down "
                    f"'DoctrineMigrations\\\\{migration}'\n",
                )
            ],
        )
        s.fact(
            "command",
            "The migration was generated from the mapping.",
            ("doctrine:migrations:diff",),
            required=False,
        )
        m.files[f"migrations/{migration}.php"] = (
            "<?php\n\ndeclare(strict_types=1);\n\nnamespace DoctrineMigrations;\n\n"
            "use Doctrine\\DBAL\\Schema\\Schema;\n"
            "use Doctrine\\Migrations\\AbstractMigration;\n\n"
            f"final class {migration} extends AbstractMigration\n{{\n"
            "    public function getDescription(): string\n    {\n        return '';\n    }\n\n"
            "    public function up(Schema $schema): void\n    {\n"
            "        $this->addSql('CREATE TABLE seat_hold (id INT GENERATED BY DEFAULT AS "
            "IDENTITY NOT NULL, sailing_id INT NOT NULL, seat_number VARCHAR(8) NOT NULL, "
            "cart_token VARCHAR(64) NOT NULL, expires_at TIMESTAMP(0) WITHOUT TIME ZONE NOT NULL, "
            "PRIMARY KEY(id))');\n"
            "        $this->addSql('CREATE INDEX idx_hold_expires ON seat_hold (expires_at)');\n"
            "        $this->addSql('CREATE INDEX idx_hold_cart ON seat_hold (cart_token)');\n"
            "        $this->addSql('CREATE UNIQUE INDEX uniq_hold_sailing_seat ON seat_hold "
            "(sailing_id, seat_number)');\n"
            "        $this->addSql('ALTER TABLE seat_hold ADD CONSTRAINT FK_6B1E3C2A9F5E1F64 "
            "FOREIGN KEY (sailing_id) REFERENCES sailing (id) ON DELETE CASCADE NOT DEFERRABLE "
            "INITIALLY IMMEDIATE');\n    }\n\n"
            "    public function down(Schema $schema): void\n    {\n"
            "        $this->addSql('ALTER TABLE seat_hold DROP CONSTRAINT FK_6B1E3C2A9F5E1F64');\n"
            "        $this->addSql('DROP TABLE seat_hold');\n    }\n}\n"
        )
        m.step(
            "Let me check the generated SQL before running it.",
            [m.view(f"migrations/{migration}.php")],
        )
        m.step(
            "The migration only creates seat_hold with its indexes and foreign key. Applying it "
            "to the test database (2>&1, since the console logs its notices on stderr).",
            [
                m.bash(
                    "php bin/console doctrine:migrations:migrate --env=test --no-interaction 2>&1",
                    f"[notice] Migrating up to DoctrineMigrations\\{migration}\n"
                    f"[notice] finished in {rng.randint(40, 120)}.{rng.randint(1, 9)}ms, used 24M "
                    "memory, 1 migrations executed, 5 sql queries\n \n [OK] Successfully migrated "
                    f"to version: DoctrineMigrations\\{migration}\n",
                )
            ],
        )
        out = _phpunit(root, rng, "." * n_green, "", f"OK ({n_green} tests, {a_green} assertions)")
        m.step("Migrated. Running the suite again.", [m.bash("vendor/bin/phpunit", out)])

    events.append(migrate)

    # 10. PHPStan: one error, fixed; the first run ends
    def phpstan() -> None:
        bar = "-" * 6 + " " + "-" * 76
        error_out = (
            f" {bar}\n  Line   src/Service/SeatHoldManager.php\n {bar}\n"
            "  41     Method App\\Service\\SeatHoldManager::hold() should return\n"
            "         list<App\\Entity\\SeatHold> but returns mixed.\n"
            "         🪪  return.type\n"
            f" {bar}\n\n\n [ERROR] Found 1 error\n"
        )
        m.step(
            "The whole suite passes. CI also runs PHPStan at level 8; running it without the "
            "progress bar, which goes to stderr.",
            [m.bash("vendor/bin/phpstan analyse --no-progress", error_out)],
        )
        s.fact(
            "error_resolved",
            "PHPStan flagged hold()'s return type.",
            ("SeatHoldManager::hold() should return",),
            required=False,
        )
        s.fact("command", "PHPStan was run.", ("vendor/bin/phpstan analyse",), required=False)
        rel = "src/Service/SeatHoldManager.php"
        m.step(
            "wrapInTransaction() is declared as returning mixed, so PHPStan can't see the list. "
            "I'll assign the result to a variable with an inline @var and return that.",
            [
                m.replace(
                    rel,
                    "            return $this->em->wrapInTransaction(function () use ($sailing, "
                    "$seatNumbers, $cartToken, $now): array {\n",
                    "            /** @var list<SeatHold> $holds */\n"
                    "            $holds = $this->em->wrapInTransaction(function () use ($sailing, "
                    "$seatNumbers, $cartToken, $now): array {\n",
                )
            ],
        )
        m.step(
            "Now return the variable after the transaction.",
            [
                m.replace(
                    rel,
                    "                return $made;\n            });\n",
                    "                return $made;\n            });\n\n"
                    "            return $holds;\n",
                )
            ],
        )
        m.step(
            "Running PHPStan again.",
            [m.bash("vendor/bin/phpstan analyse --no-progress", "\n [OK] No errors\n")],
        )
        m.step(
            "PHPStan is clean. Steps 0-2 are done; marking step 2 completed.",
            [
                m.planning(
                    command="mark_step", plan_id=plan_id, step_index=2, step_status="completed"
                )
            ],
        )
        m.step(
            pick(
                (
                    "Seat holds work end to end: a checkout start writes seat_hold rows that "
                    "expire on their own, payment releases them, and an hourly scheduled task "
                    "purges the expired ones. The suite and PHPStan are green. Next on the "
                    "plan is retiring the stale-cart cron.",
                    "Done for now: holds are taken at checkout start, released on payment, "
                    "ignored once expired and purged hourly; tests and PHPStan pass. The "
                    "stale-cart cron is the next step on the plan.",
                )
            ),
            [m.terminate()],
        )

    events.append(phpstan)

    # 11. a new prompt: a question, a value changed, a rule
    def second_prompt_asks() -> None:
        m.request(
            pick(
                (
                    f"nice. support asks: on saturday {saturday} the 07:40 {home}-{far} "
                    f"sailing sold seat {seat} twice, which booking reference got it second? "
                    f"prod log for that day is {root}/var/log/prod-{saturday}.log. also "
                    f"{hold0} minutes is too long, people sit on seats — make it "
                    f"{_article(hold1)} {hold1}-minute hold. and one rule for later: "
                    "migrations that already ran on prod are never edited, new migration files "
                    "only.",
                    f"thanks! question from support: seat {seat} on the 07:40 {home}-{far} on "
                    f"{saturday} was sold twice. which booking ref was the second sale? log: "
                    f"{root}/var/log/prod-{saturday}.log. then change the hold to "
                    f"{_article(hold1)} {hold1}-minute hold, {hold0} is too long. and remember: "
                    "never edit a migration that's deployed, new migration files only.",
                )
            )
        )

    events.append(second_prompt_asks)

    def second_prompt() -> None:
        s.fact("constraint", "Deployed migrations are never edited.", ("new migration files only",))
        hits = [
            f"{rng.randint(8000, 15000)}:[{saturday}T06:58:{rng.randint(10, 59)}."
            f"{rng.randint(0, 999999):06d}"
            f'+00:00] app.INFO: Cart opened {{"sailing":{sailing_id},"seats":["{seat}"],'
            f'"cart":"{hexid(rng, 16)}"}} []',
            f"{rng.randint(15001, 20000)}:[{saturday}T07:02:{rng.randint(10, 59)}."
            f"{rng.randint(0, 999999):06d}"
            f'+00:00] app.INFO: Booking confirmed {{"reference":"{first_ref}","sailing":'
            f'{sailing_id},"seats":["{seat}"]}} []',
            f"{rng.randint(20001, 26000)}:[{saturday}T07:04:{rng.randint(10, 59)}."
            f"{rng.randint(0, 999999):06d}"
            f'+00:00] app.WARNING: Seat sold twice {{"sailing":{sailing_id},"seat":"{seat}",'
            f'"first":"{first_ref}","second":"{second_ref}"}} []',
        ]
        m.step(
            "First the support question. Searching that day's prod log for the seat.",
            [
                m.bash(
                    f'grep -n "{seat}" var/log/prod-{saturday}.log | grep "{sailing_id}"',
                    "\n".join(hits),
                )
            ],
        )
        m.step(
            f"The log names both sales: {first_ref} took seat {seat} on sailing {sailing_id} "
            f"first, and the second sale of the same seat was booking {second_ref}. Now the "
            "hold length.",
            [
                m.replace(
                    "config/services.yaml",
                    f"    app.seat_hold.minutes: {hold0}\n",
                    f"    app.seat_hold.minutes: {hold1}\n",
                )
            ],
        )
        s.fact("identifier", "The booking that got the seat second.", (second_ref,))

    events.append(second_prompt)

    # 12. the stale-cart cron goes
    def retire() -> None:
        status = [
            " M config/services.yaml",
            f"?? migrations/{migration}.php",
            "D  src/Command/ReleaseStaleCartsCommand.php",
            " M src/Controller/Api/CheckoutController.php",
            "?? src/Entity/SeatHold.php",
            "?? src/Message/PurgeExpiredHolds.php",
            "?? src/MessageHandler/PurgeExpiredHoldsHandler.php",
            "?? src/Repository/SeatHoldRepository.php",
            " M src/Repository/SeatRepository.php",
            "?? src/Scheduler/",
            "?? src/Service/Exception/",
            "?? src/Service/SeatHoldManager.php",
            "D  tests/Command/ReleaseStaleCartsCommandTest.php",
            "?? tests/Service/SeatHoldManagerTest.php",
        ]
        m.step(
            f"Checkout now makes {_article(hold1)} {hold1}-minute hold. On to the plan's next "
            "step, the stale-cart cron: first who still refers to it.",
            [
                m.bash(
                    'grep -rn "release-stale\\|ReleaseStaleCarts" --include=*.php --include=*.yaml '
                    "--include=crontab .",
                    "./src/Command/ReleaseStaleCartsCommand.php:13:#[AsCommand(name: "
                    "'app:carts:release-stale', description: 'Release carts abandoned for 30 "
                    "minutes')]\n"
                    "./src/Command/ReleaseStaleCartsCommand.php:14:final class "
                    "ReleaseStaleCartsCommand extends Command\n"
                    "./tests/Command/ReleaseStaleCartsCommandTest.php:12:final class "
                    "ReleaseStaleCartsCommandTest extends KernelTestCase\n"
                    "./deploy/crontab:2:*/5 * * * * www-data php /srv/app/bin/console "
                    "app:carts:release-stale --no-interaction",
                )
            ],
        )
        m.step(
            "Only the command, its test and the crontab line. Let me read the command before "
            "removing it.",
            [m.view("src/Command/ReleaseStaleCartsCommand.php")],
        )
        m.step(
            "It only freed carts older than 30 minutes, which holds now do by expiring. "
            "Removing the command and its test with git.",
            [
                m.bash(
                    "git rm -q src/Command/ReleaseStaleCartsCommand.php "
                    "tests/Command/ReleaseStaleCartsCommandTest.php && git status --short",
                    "\n".join(status),
                )
            ],
        )
        del m.files["src/Command/ReleaseStaleCartsCommand.php"]
        s.fact(
            "file_deleted",
            "The stale-cart command was removed.",
            ("src/Command/ReleaseStaleCartsCommand.php",),
        )
        m.step(
            "And the crontab line that ran it every five minutes.",
            [
                m.replace(
                    "deploy/crontab",
                    "*/5 * * * * www-data php /srv/app/bin/console app:carts:release-stale "
                    "--no-interaction\n",
                    "",
                )
            ],
        )
        m.step(
            "The cron is gone. Marking step 3 completed.",
            [
                m.planning(
                    command="mark_step", plan_id=plan_id, step_index=3, step_status="completed"
                )
            ],
        )
        s.fact("todo", "Retiring the stale-cart cron is done.", (steps[3],), required=False)
        m.step(
            f"Support's answer: the second sale of seat {seat} was {second_ref} (the first was "
            f"{first_ref}). The hold is now {hold1} minutes, and the stale-cart command, its "
            "test and its crontab line are removed.",
            [m.terminate()],
        )

    events.append(retire)

    # 13. a third prompt: the plan changes, a second value, a question about history
    def third_prompt_asks() -> None:
        m.request(
            pick(
                (
                    "take the back office list out of your plan, finance will read the holds "
                    "straight from postgres in Metabase. put in: release holds when a sailing is "
                    f"cancelled — not now, just on the list. {seats0} seats is too many for one "
                    f"checkout, make it {seats1} seats per hold. and which commit added the "
                    "stale cart cron? I want to link it in the PR.",
                    "finance will query the holds from postgres with Metabase, so drop the "
                    "back office step. add a step to release holds when a sailing is cancelled, "
                    f"later. lower the cap to {seats1} seats per hold, {seats0} was generous. "
                    "also what commit introduced the stale cart cron? need it for the PR text.",
                )
            )
        )

    events.append(third_prompt_asks)

    def third_prompt() -> None:
        m.step(
            "Updating the plan: the back-office step goes, the cancellation step is added at "
            "the end.",
            [
                m.planning(
                    command="update", plan_id=plan_id, steps=[*steps[:4], steps[5], cancelled_step]
                )
            ],
        )
        s.fact("todo", "The back-office list of holds was dropped.", (steps[4],), required=False)
        m.step(
            f"The plan now has six steps with the cancellation one last. Lowering the cap to "
            f"{seats1} seats per hold.",
            [
                m.replace(
                    "config/services.yaml",
                    f"    app.seat_hold.max_seats: {seats0}\n",
                    f"    app.seat_hold.max_seats: {seats1}\n",
                )
            ],
        )
        s.fact(
            "changed_value",
            "The most seats one hold may take.",
            (f"{seats1} seats per hold",),
            stale=(f"{seats0} seats per hold",),
        )
        m.step(
            "Done. For the commit: the file is deleted in the working tree, but git log still "
            "knows who added it.",
            [
                m.bash(
                    "git log --diff-filter=A --format='%h %an %ad %s' --date=short -- "
                    "src/Command/ReleaseStaleCartsCommand.php",
                    f"{cron_commit} {cron_author} 2024-0{rng.randint(2, 9)}-{rng.randint(10, 28)} "
                    "Release carts abandoned for 30 minutes",
                )
            ],
        )
        m.step(
            f"The stale-cart cron came in with commit {cron_commit} by {cron_author}. The "
            f"cancellation step is on the plan but not started, and the cap is {seats1} seats.",
            [m.terminate()],
        )
        s.fact("identifier", "The commit that added the stale-cart cron.", (cron_commit,))

    events.append(third_prompt)

    # 14. a fourth prompt: the hold length settles; a new test fails
    def settle_asks() -> None:
        m.request(
            pick(
                (
                    f"ops tried it at the {mid} kiosk: {hold1} minutes is too short, the card "
                    "terminals there are slow and people lose the seat while paying. final: "
                    f"{_article(hold2)} {hold2}-minute hold. then run the tests again, I'd like "
                    "the through-voyage case covered too (seat held on the first leg must be "
                    "blocked on the full voyage).",
                    f"update from ops: with {hold1} minutes people at {mid} lose seats while the "
                    f"slow card readers think. settle on {_article(hold2)} {hold2}-minute hold. "
                    "and add a test for voyages: a seat held on the first leg has to be blocked "
                    "for the whole voyage. run everything after.",
                )
            )
        )

    events.append(settle_asks)

    def settle() -> None:
        m.step(
            f"Switching checkout to {_article(hold2)} {hold2}-minute hold.",
            [
                m.replace(
                    "config/services.yaml",
                    f"    app.seat_hold.minutes: {hold1}\n",
                    f"    app.seat_hold.minutes: {hold2}\n",
                )
            ],
        )
        s.fact(
            "changed_value",
            "How long a checkout holds its seats.",
            (f"{hold2}-minute hold",),
            stale=(f"{hold0}-minute hold", f"{hold1}-minute hold"),
        )
        s.fact(
            "file_modified",
            "The hold settings are container parameters.",
            ("config/services.yaml",),
        )
        m.step(
            f"Checkout now holds seats for {hold2} minutes. Next the voyage test: the {home}-"
            f"{mid} leg and the {home}-{far} through sailing share seats on one vessel.",
            [
                m.replace(
                    "tests/Service/SeatHoldManagerTest.php",
                    "    public function testReleaseFreesTheCartsSeats(): void\n",
                    "    public function testHoldBlocksSeatOnEveryLegOfTheVoyage(): void\n    {\n"
                    f"        [$leg, $through] = SailingFactory::voyage(['{home}', '{mid}', "
                    f"'{far}']);\n"
                    f"        $this->holds->hold($leg, ['{seat}'], 'cart-a');\n\n"
                    f"        self::assertSame([], $this->seats->findFreeSeats($through, "
                    f"['{seat}']));\n    }}\n\n"
                    "    public function testReleaseFreesTheCartsSeats(): void\n",
                )
            ],
        )
        failing = (
            "App\\Tests\\Service\\SeatHoldManagerTest::testHoldBlocksSeatOnEveryLegOfTheVoyage"
        )
        lines = m.files["tests/Service/SeatHoldManagerTest.php"].split("\n")
        assert_line = next(i for i, x in enumerate(lines, 1) if "findFreeSeats($through" in x)
        marks = list("." * n_last)
        marks[existing - cron_tests + 3] = "F"
        body = (
            "There was 1 failure:\n\n"
            f"1) {failing}\n"
            "Failed asserting that two arrays are identical.\n"
            "--- Expected\n+++ Actual\n@@ @@\n"
            f"-Array &0 []\n+Array &0 [\n+    0 => '{seat}',\n+]\n\n"
            f"{root}/tests/Service/SeatHoldManagerTest.php:{assert_line}\n\n"
        )
        out = _phpunit(
            root,
            rng,
            "".join(marks),
            body,
            f"FAILURES!\nTests: {n_last}, Assertions: {a_last}, Failures: 1.",
        )
        m.step("Running the suite.", [m.bash("vendor/bin/phpunit", out)])
        s.fact(
            "test_status",
            "The last run has one failure.",
            (f"Tests: {n_last}, Assertions: {a_last}, Failures: 1.",),
            stale=(f"OK ({n_green} tests, {a_green} assertions)",),
        )
        m.step(
            pick(
                (
                    "One failure, and it is a real gap: a hold is stored against one sailing "
                    f"row, and the {home}-{far} through sailing is a different row on the same "
                    "vessel, so findFreeSeats on it never sees the leg's hold "
                    "(testHoldBlocksSeatOnEveryLegOfTheVoyage). Fixing it means holding the "
                    "seat on every sailing of the voyage, or keying holds by voyage. Checking "
                    "the plan before deciding.",
                    "The new test fails for a real reason: holds are per sailing row, and the "
                    "through sailing is its own row, so the leg's hold is invisible to it "
                    "(testHoldBlocksSeatOnEveryLegOfTheVoyage). The fix is to key holds by "
                    "voyage and seat. Let me look at where the plan stands first.",
                )
            ),
            [m.planning(command="get", plan_id=plan_id)],
        )
        s.fact(
            "error_open",
            "A leg's hold is not seen on the through voyage; its test fails.",
            ("testHoldBlocksSeatOnEveryLegOfTheVoyage",),
        )
        s.fact("todo", "The hold settings are still to be documented.", (steps[5],))
        s.fact("todo", "Releasing holds on a cancelled sailing is still to do.", (cancelled_step,))

    events.append(settle)

    # 15. ship: asked through ask_human; the last turn calls terminate
    def ship() -> None:
        m.step(
            "Two steps remain open besides this bug. The fix touches the schema, so I'll ask "
            "before starting it.",
            [
                m.ask_human(
                    "The voyage test fails: holds are stored per sailing, so a seat held on a "
                    "leg is still free on the through sailing. Fixing it needs a voyage key on "
                    "seat_hold (a new migration). Shall I do that now?",
                    pick(
                        (
                            "no, leave it, I'll pair on it tomorrow. commit what you have on a "
                            "branch, push, and open a draft PR",
                            "not today. put everything on a branch, push it and open the PR as "
                            "draft, we'll fix voyages tomorrow",
                        )
                    ),
                )
            ],
        )
        branch = "seat-holds"
        m.step(
            "Leaving the voyage bug open. Committing on a new branch.",
            [
                m.bash(
                    f'git checkout -b {branch} && git add -A && git commit -qm "Hold seats '
                    'for the length of a checkout"',
                    "",
                    f"Switched to a new branch '{branch}'",
                )
            ],
        )
        m.step(
            "Only git's note on stderr came back, so I'll confirm the commit exists.",
            [
                m.bash(
                    "git log --oneline -1",
                    f"{hexid(rng, 7)} Hold seats for the length of a checkout",
                )
            ],
        )
        m.step(
            "Committed. Pushing and opening the draft PR, with stderr folded into the output.",
            [
                m.bash(
                    f"git push -u origin {branch} 2>&1 && gh pr create --draft --fill 2>&1",
                    f"remote: \nremote: Create a pull request for '{branch}' on GitHub by "
                    f"visiting:\nremote:      https://github.com/{slug}/{slug}-booking/pull/new/"
                    f"{branch}\nremote: \nTo github.com:{slug}/{slug}-booking.git\n * [new branch]"
                    f"      {branch} -> {branch}\nbranch '{branch}' set up to track "
                    f"'origin/{branch}'.\n\nCreating draft pull request for {branch} into main in "
                    f"{slug}/{slug}-booking\n\nhttps://github.com/{slug}/{slug}-booking/pull/{pr}",
                )
            ],
        )
        m.step(
            pick(
                (
                    f"The branch is pushed and draft PR #{pr} is open. Stopping here as asked.",
                    f"Pushed, and draft PR #{pr} is up. Ending the session here.",
                )
            ),
            [m.terminate()],
        )
        s.fact("last_message", "The last words name the draft PR.", (f"draft PR #{pr}",))

    events.append(ship)

    target = tokens * CHARS_PER_TOKEN * 1.36
    for i, event in enumerate(events):
        goal = target * i / len(events) * 0.97
        # No step between a run's terminate and the user's next prompt.
        while i and s.chars < goal and not m.stopped:
            _filler(m, day)
        event()
    return finish_session(s, family=FAMILY, seed=seed)
