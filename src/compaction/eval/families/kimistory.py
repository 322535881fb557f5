"""kimistory-style: a Kimi Code CLI session (MoonshotAI/kimi-cli) with a story of its own.

Kimi CLI's built-in tools as its source names them (src/kimi_cli/tools, read at 4a550ef):
`Shell` {command, timeout?, run_in_background?, description?}; `ReadFile` {path, line_offset?,
n_lines?}; `WriteFile` {path, content, mode?}; `StrReplaceFile` {path, edit: {old, new,
replace_all?} or a list of them}; `Glob` {pattern, directory?, include_dirs?}; `Grep` {pattern,
path?, glob?, output_mode?, "-n"?, "-i"?, …}; `SetTodoList` {todos: [{title, status}]} with
status pending / in_progress / done; `Agent` {description, prompt, subagent_type?, …};
`SearchWeb` {query, limit?, include_content?}; `FetchURL` {url}; `TaskOutput` {task_id, block?,
timeout?} and `TaskStop` {task_id, reason?} for background shells.

Results as `tool_result_to_message` hands them to the model: the tool's message wrapped in
`<system>…</system>` as one text part, its output as a second (one part alone is sent as a
plain string, as kosong serializes a lone text part): "<system>Command executed
successfully.</system>" / "<system>ERROR: Command failed with exit code: N.</system>" and the
combined output; ReadFile's "<system>N lines read from file starting from line K. Total lines in
file: T. End of file reached.</system>" and `cat -n` style lines ("%6d\\t"); "File successfully
overwritten. Current size: N bytes."; "File successfully edited. Applied 1 edit(s) with 1 total
replacement(s)."; Glob's "Found N matches for pattern `…`." and relative paths; Grep's bare rg
output (relative `path:line:text`); SetTodoList's "Todo list updated"; Agent's `agent_id: …` /
`[summary]` block; SearchWeb's Title/Date/URL/Summary records; the background task's
`task_id: bash-xxxxxxxx` block and TaskOutput's `retrieval_status: …` snapshot. Kimi has no
delete tool and no cancelled to-do state: a file goes with `rm`, a dropped to-do is left out of
the list. Tool call ids are the Kimi K2 model's own, `functions.<Name>:<n>`; an assistant turn
that only calls tools carries no `content`, and parallel calls share one assistant turn.

The story: a Django 4.2 property-listings site (Celery on Redis, django-storages on S3, Pillow,
pytest-django, ruff) moves listing-photo processing out of the upload request. Names and values
are drawn per seed. Written apart from the compaction strategies and from `story.tell`; facts
planted in the `Fact` format.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    code_file,
    finish_session,
    hexid,
    ident,
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "kimistory-style"

#: (site, its display name, user, city) per seed.
_SITES = (
    ("casaviva", "CasaViva", "ines", "Lisbon"),
    ("huisvinder", "Huisvinder", "joost", "Utrecht"),
    ("wohnfuchs", "Wohnfuchs", "lena", "Leipzig"),
    ("pisoclaro", "PisoClaro", "marta", "Valencia"),
    ("lettly", "Lettly", "owen", "Bristol"),
)
#: The web rendition's long edge in px: first, changed to, then settled on (all divisible by 4).
_EDGES = ((1600, 2048, 1920), (1280, 1800, 1440), (2000, 1504, 1760), (1024, 1680, 1360),
          (1400, 2200, 1800))  # fmt: skip
#: JPEG quality: first, then changed to (two digits each).
_QUALITIES = ((82, 76), (85, 72), (80, 88), (78, 84))
#: Apps the filler reads from (never `listings`, where the story happens).
_OTHER_APPS = ("agencies", "portal", "imports", "accounts", "search")


# --- Kimi CLI's tools -----------------------------------------------------------------------------


def _system(message: str) -> str:
    return f"<system>{message}</system>"


def _cat_n(content: str, start: int = 1) -> str:
    """ReadFile's output: `cat -n` style, six-wide numbers and a tab, each line keeping its end."""
    lines = content.splitlines(keepends=True)
    return "".join(f"{start + i:6d}\t{line}" for i, line in enumerate(lines))


class _Kimi:
    """Kimi CLI's tools writing into a session."""

    def __init__(self, s: Session, root: str, share: str) -> None:
        self.s = s
        self.root = root
        self.rng = s.rng
        self.share = share  # the session's own dir under ~/.kimi/sessions
        self.calls = 0

    def p(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def turn(
        self,
        calls: Sequence[tuple[str, dict[str, Any], Sequence[str]]],
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """One assistant turn calling `calls` (in parallel when several), then their results:
        each a list of text parts, sent as a string when it is one part."""
        ids = []
        tool_calls = []
        for name, arguments, _ in calls:
            call_id = f"functions.{name}:{self.calls}"
            self.calls += 1
            ids.append(call_id)
            tool_calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            )
        message: dict[str, Any] = {"role": "assistant"}
        if text:
            message["content"] = text
        message["tool_calls"] = tool_calls
        self.s.messages.append(message)
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        for call_id, (_, _, parts) in zip(ids, calls, strict=True):
            content: str | list[dict[str, str]] = (
                parts[0] if len(parts) == 1 else [{"type": "text", "text": t} for t in parts]
            )
            self.s.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
            if filler:
                self.s.filler_at.add(len(self.s.messages) - 1)

    # each tool: (name, arguments, result parts), for `turn`

    def shell_call(
        self, command: str, output: str, *, code: int = 0, timeout: int = 0
    ) -> tuple[str, dict[str, Any], list[str]]:
        args: dict[str, Any] = {"command": command}
        if timeout:
            args["timeout"] = timeout
        if code:
            parts = [_system(f"ERROR: Command failed with exit code: {code}.")]
        else:
            parts = [_system("Command executed successfully.")]
        if output:
            parts.append(output if output.endswith("\n") else output + "\n")
        return ("Shell", args, parts)

    def shell(
        self,
        command: str,
        output: str,
        *,
        code: int = 0,
        timeout: int = 0,
        text: str = "",
        filler: bool = False,
    ) -> None:
        self.turn([self.shell_call(command, output, code=code, timeout=timeout)], text=text,
                  filler=filler)  # fmt: skip

    def read_call(
        self, rel: str, content: str, *, line_offset: int = 0, n_lines: int = 0
    ) -> tuple[str, dict[str, Any], list[str]]:
        args: dict[str, Any] = {"path": self.p(rel)}
        lines = content.splitlines(keepends=True)
        total = len(lines)
        start = 1
        if line_offset:
            args["line_offset"], args["n_lines"] = line_offset, n_lines
            start = line_offset
            shown = lines[line_offset - 1 : line_offset - 1 + n_lines]
        else:
            shown = lines
        message = (
            f"{len(shown)} lines read from file starting from line {start}. "
            f"Total lines in file: {total}."
        )
        if len(shown) < (n_lines or 1000):
            message += " End of file reached."
        return ("ReadFile", args, [_system(message), _cat_n("".join(shown), start)])

    def read(self, rel: str, content: str, *, filler: bool = False, text: str = "") -> None:
        self.turn([self.read_call(rel, content)], filler=filler, text=text)

    def write(self, rel: str, content: str, *, text: str = "") -> None:
        size = len(content.encode("utf-8"))
        self.turn(
            [
                (
                    "WriteFile",
                    {"path": self.p(rel), "content": content},
                    [_system(f"File successfully overwritten. Current size: {size} bytes.")],
                )
            ],
            text=text,
        )

    def replace(self, rel: str, edits: Sequence[tuple[str, str]], *, text: str = "") -> None:
        edit: dict[str, Any] | list[dict[str, Any]] = [{"old": o, "new": n} for o, n in edits]
        if len(edits) == 1:
            edit = {"old": edits[0][0], "new": edits[0][1]}
        self.turn(
            [
                (
                    "StrReplaceFile",
                    {"path": self.p(rel), "edit": edit},
                    [
                        _system(
                            f"File successfully edited. Applied {len(edits)} edit(s) with "
                            f"{len(edits)} total replacement(s)."
                        )
                    ],
                )
            ],
            text=text,
        )

    def glob(self, pattern: str, matches: Sequence[str], *, filler: bool = False) -> None:
        self.turn(
            [
                (
                    "Glob",
                    {"pattern": pattern, "directory": self.root},
                    [
                        _system(f"Found {len(matches)} matches for pattern `{pattern}`."),
                        "\n".join(matches),
                    ],
                )
            ],
            filler=filler,
        )

    def grep(
        self,
        pattern: str,
        lines: Sequence[str],
        *,
        under: str = "",
        glob: str = "",
        mode: str = "content",
        filler: bool = False,
        text: str = "",
    ) -> None:
        args: dict[str, Any] = {"pattern": pattern, "path": self.p(under) if under else self.root}
        if glob:
            args["glob"] = glob
        args["output_mode"] = mode
        if mode == "content":
            args["-n"] = True
        out = [_system("No matches found.")] if not lines else ["\n".join(lines)]
        self.turn([("Grep", args, out)], filler=filler, text=text)

    def todos(self, items: Sequence[tuple[str, str]], *, text: str = "") -> None:
        self.turn(
            [
                (
                    "SetTodoList",
                    {"todos": [{"title": t, "status": st} for t, st in items]},
                    [_system("Todo list updated"), "Todo list updated"],
                )
            ],
            text=text,
        )

    def agent(self, description: str, prompt: str, summary: str) -> None:
        agent_id = "a" + hexid(self.rng, 8)
        self.turn(
            [
                (
                    "Agent",
                    {"description": description, "prompt": prompt, "subagent_type": "explore"},
                    [
                        f"agent_id: {agent_id}\nresumed: false\nactual_subagent_type: explore\n"
                        f"status: completed\n\n[summary]\n{summary}"
                    ],
                )
            ]
        )

    def search_web(self, query: str, results: Sequence[tuple[str, str, str, str]]) -> None:
        records = [
            f"Title: {title}\nDate: {date}\nURL: {url}\nSummary: {snippet}\n\n"
            for title, date, url, snippet in results
        ]
        self.turn([("SearchWeb", {"query": query}, ["---\n\n".join(records)])])

    def fetch_url(self, url: str, markdown: str) -> None:
        self.turn(
            [
                (
                    "FetchURL",
                    {"url": url},
                    [
                        _system(
                            "The returned content is the main content extracted from the page."
                        ),
                        markdown,
                    ],
                )
            ]
        )

    def background(self, command: str, description: str, timeout: int) -> str:
        alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
        task_id = "bash-" + "".join(self.rng.choice(alphabet) for _ in range(8))
        self.turn(
            [
                (
                    "Shell",
                    {
                        "command": command,
                        "timeout": timeout,
                        "run_in_background": True,
                        "description": description,
                    },
                    [
                        _system("Background task started."),
                        f"task_id: {task_id}\nkind: bash\nstatus: starting\n"
                        f"description: {description}\ncommand: {command}\n"
                        "automatic_notification: true\n"
                        "next_step: You will be automatically notified when it completes.\n"
                        "next_step: Use TaskOutput with this task_id for a non-blocking "
                        "status/output snapshot. Only set block=true when you intentionally want "
                        "to wait.\n"
                        "next_step: Use TaskStop only if the task must be cancelled.\n"
                        "human_shell_hint: For users in the interactive shell, the only "
                        "task-management slash command is /task. Do not suggest /task list, "
                        "/task output, /task stop, or /tasks.",
                    ],
                )
            ]
        )
        return task_id

    def task_output(self, task_id: str, description: str, command: str, output: str) -> None:
        log = f"{self.share}/tasks/{task_id}/output.log"
        size = len(output.encode("utf-8")) + 1
        self.turn(
            [
                (
                    "TaskOutput",
                    {"task_id": task_id},
                    [
                        _system("Task snapshot retrieved."),
                        f"retrieval_status: not_ready\ntask_id: {task_id}\nkind: bash\n"
                        f"status: running\ndescription: {description}\ncommand: {command}\n"
                        "interrupted: false\ntimed_out: false\nterminal_reason: running\n\n"
                        f"output_path: {log}\noutput_size_bytes: {size}\n"
                        f"output_preview_bytes: {size}\noutput_truncated: false\n\n"
                        "full_output_available: true\nfull_output_tool: ReadFile\n"
                        f'full_output_hint: Use ReadFile(path="{log}", line_offset=1, '
                        "n_lines=300) to inspect the full log. Increase line_offset to continue "
                        f"paging through the file.\n\n[output]\n{output}",
                    ],
                )
            ]
        )

    def task_stop(self, task_id: str, description: str, command: str, reason: str) -> None:
        self.turn(
            [
                (
                    "TaskStop",
                    {"task_id": task_id, "reason": reason},
                    [
                        _system("Task stop requested."),
                        f"task_id: {task_id}\nkind: bash\nstatus: running\n"
                        f"description: {description}\ncommand: {command}",
                    ],
                )
            ]
        )


# --- filler -----------------------------------------------------------------------------------


def _py_module(rng: random.Random, lines: int) -> str:
    head = (
        f'"""{ident(rng).replace("_", " ").capitalize()} helpers."""\n\n'
        "from __future__ import annotations\n\n"
        f"from .models import {ident(rng, 1).title()}\n\n\n"
    )
    return head + code_file(rng, "py", lines) + "\n"


def _pytest_verbose(rng: random.Random, root: str, app: str) -> tuple[str, str]:
    """A passing `pytest -v` run of another app: (command, output). Its summary always names
    warnings, so no `N passed in` of the story's can show up in it."""
    n = rng.randint(45, 90)
    files = [f"{app}/tests/test_{ident(rng)}.py" for _ in range(rng.randint(4, 7))]
    lines = [
        "============================= test session starts ==============================",
        f"platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0 -- {root}/.venv/bin/python",
        "cachedir: .pytest_cache",
        "django: version: 4.2.16, settings: config.settings.test (from ini)",
        f"rootdir: {root}",
        "configfile: pytest.ini",
        "plugins: django-4.9.0, xdist-3.6.1",
        f"collecting ... collected {n} items",
        "",
    ]
    for i in range(n):
        path = files[i * len(files) // n]
        lines.append(f"{path}::test_{ident(rng)} PASSED{' ' * 8}[{(i + 1) * 100 // n:3d}%]")
    warnings = rng.randint(2, 5)
    lines += [
        "",
        "=============================== warnings summary ===============================",
        f"{files[0]}::test_{ident(rng)}",
        "  .venv/lib/python3.12/site-packages/django/db/models/fields/__init__.py:1659: "
        "RuntimeWarning: DateTimeField received a naive datetime while time zone support is "
        "active.",
        "",
        "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html",
        f"================= {n} passed, {warnings} warnings in {rng.randint(3, 19)}."
        f"{rng.randint(10, 99)}s ==================",
    ]
    return f"python -m pytest {app} -v", "\n".join(lines)


def _filler(k: _Kimi) -> None:
    rng = k.rng
    app = rng.choice(_OTHER_APPS)
    kind = rng.randrange(7)
    if kind == 0:
        k.read(f"{app}/{ident(rng)}.py", _py_module(rng, rng.randint(60, 110)), filler=True)
    elif kind == 1:
        content = _py_module(rng, rng.randint(120, 180))
        offset = rng.choice((40, 60, 80))
        k.turn([k.read_call(f"{app}/{ident(rng)}.py", content, line_offset=offset, n_lines=60)],
               filler=True)  # fmt: skip
    elif kind == 2:
        k.turn(
            [
                k.read_call(f"{app}/{ident(rng)}.py", _py_module(rng, rng.randint(40, 70)))
                for _ in range(2)
            ],
            filler=True,
        )
    elif kind == 3:
        n = rng.randint(60, 100)
        k.shell(f"tail -n {n} logs/django.log", log_lines(rng, n), filler=True)
    elif kind == 4:
        paths = sorted(
            {f"{app}/{rng.choice(('', 'tests/test_', 'services/'))}{ident(rng)}.py"
             for _ in range(rng.randint(40, 70))}
        )  # fmt: skip
        k.glob(f"{app}/**/*.py", paths, filler=True)
    elif kind == 5:
        word = ident(rng, 1)
        hits = [
            f"{app}/{ident(rng)}.py:{rng.randint(3, 160)}:    {word} = load_{ident(rng)}({word})"
            for _ in range(rng.randint(12, 30))
        ]
        k.grep(f"load_\\w+\\({word}\\)", hits, glob="*.py", filler=True)
    else:
        command, output = _pytest_verbose(rng, k.root, app)
        k.shell(command, output, timeout=300, filler=True)


# --- the story ----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    """One Kimi CLI session of about `tokens` tokens, its story and values drawn from `seed`."""
    rng = random.Random(f"{FAMILY}:{seed}")
    site, brand, user, city = rng.choice(_SITES)
    root = f"/home/{user}/src/{site}"
    edge0, edge1, edge2 = rng.choice(_EDGES)
    q0, q1 = rng.choice(_QUALITIES)
    bucket = f"{site}-listing-media-{hexid(rng, 4)}"
    stuck_task = (
        f"{hexid(rng, 8)}-{hexid(rng, 4)}-4{hexid(rng, 3)}-a{hexid(rng, 3)}-{hexid(rng, 12)}"
    )
    stuck_listing = rng.randint(40000, 89999)
    mr = rng.randint(60, 640)
    existing = rng.randint(26, 36)  # the listings app's tests before this session
    db_bound = rng.randint(5, 9)  # of those, the ones that create a Listing
    n_red = f"{db_bound + 3} failed, {existing - db_bound + 2} passed"
    n_green = existing + 5
    removed = rng.randint(2, 4)  # the old resizer's tests, deleted with it
    n_last = n_green - removed + 1
    today = f"2026-11-{rng.randint(11, 27)}"
    share = f"/home/{user}/.kimi/sessions/{hexid(rng, 32)}/{hexid(rng, 8)}-{hexid(rng, 4)}"
    pick = rng.choice

    tree = (
        "├── .github/\n│   └── workflows/\n├── accounts/\n│   ├── models.py\n│   ├── tasks.py\n"
        "│   └── ... and 6 more\n├── agencies/\n│   └── ... and 9 more\n├── config/\n"
        "│   ├── __init__.py\n│   ├── celery.py\n│   ├── settings/\n│   ├── urls.py\n"
        "│   └── wsgi.py\n├── deploy/\n│   ├── docker/\n│   └── helm/\n├── docs/\n"
        "├── imports/\n│   └── ... and 8 more\n├── listings/\n│   └── ... and 11 more\n"
        "├── logs/\n├── portal/\n│   └── ... and 10 more\n├── requirements/\n"
        "│   ├── base.txt\n│   └── dev.txt\n├── search/\n├── AGENTS.md\n├── docker-compose.yml\n"
        "├── manage.py\n├── pyproject.toml\n└── pytest.ini"
    )
    system = (
        "You are Kimi Code CLI, an interactive general AI agent running on a user's computer.\n\n"
        "Your primary goal is to help users with software engineering tasks by taking action: "
        "use the tools available to you to make real changes on the user's system.\n\n"
        "# Prompt and Tool Use\n\n"
        "Tool results come back in tool messages. The system may add information wrapped in "
        "`<system>` tags to user or tool messages; take it into account. You can issue several "
        "tool calls in one response; make independent calls in parallel.\n\n"
        "# Working Environment\n\n## Operating System\n\nYou are running on **Linux**. The "
        "Shell tool executes commands using **bash (`/bin/bash`)**.\n\n## Date and Time\n\n"
        f"The current date and time in ISO format is `{today}T"
        f"{rng.randint(9, 11)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}."
        f"{rng.randint(100000, 999999)}"
        "+00:00`.\n\n## Working Directory\n\n"
        f"The current working directory is `{root}`. This should be considered as the project "
        "root if you are instructed to perform tasks on the project.\n\n"
        f"The directory listing of current working directory is:\n\n```\n{tree}\n```\n\n"
        "# Project Information\n\nThe `AGENTS.md` instructions (merged from all applicable "
        f"directories):\n\n`````````\n# {brand}\n\nDjango site for estate agencies: listings, "
        "the public portal, partner feed imports.\n\n- Python 3.12, settings in "
        "`config/settings/` (`base`, `dev`, `test`, `prod`).\n- Tests: `python -m pytest -q "
        "<app>` (pytest-django, Postgres from docker compose).\n- Lint: `ruff check <app>`; "
        "format with `ruff format`.\n- Background work runs on Celery (Redis broker); queues are "
        "routed in `config/celery.py`.\n`````````"
    )
    s = Session(rng=rng, system=system)
    k = _Kimi(s, root, share)

    todo_titles = [
        "Map the current photo upload path",
        "Move photo processing into Celery tasks",
        "Strip location metadata from renditions",
        "Retire the synchronous resizer",
        "Processing badge in the agent dashboard",
        "Note the new settings in docs/media.md",
    ]
    reprocess = "Reprocess photos of listings imported before the switch"

    def todo_list(states: str, extra: bool = False, drop: bool = False) -> list[tuple[str, str]]:
        """`states`: one letter per item, p(ending), i(n progress) or d(one)."""
        word = {"p": "pending", "i": "in_progress", "d": "done"}
        out = [
            (title, word[state])
            for title, state in zip(todo_titles, states, strict=True)
            if not (drop and title.startswith("Processing badge"))
        ]
        if extra:
            out.append((reprocess, "pending"))
        return out

    views_before = (
        "from django.contrib.auth.mixins import LoginRequiredMixin\n"
        "from django.http import JsonResponse\n"
        "from django.shortcuts import get_object_or_404\n"
        "from django.views import View\n\n"
        "from .forms import PhotoUploadForm\n"
        "from .models import Listing\n"
        "from .utils.sync_resize import resize_all\n\n\n"
        "class PhotoUploadView(LoginRequiredMixin, View):\n"
        "    def post(self, request, pk):\n"
        "        listing = get_object_or_404(Listing, pk=pk, agency=request.user.agency)\n"
        "        form = PhotoUploadForm(request.POST, request.FILES)\n"
        "        if not form.is_valid():\n"
        '            return JsonResponse({"errors": form.errors}, status=400)\n'
        '        photos = resize_all(listing, request.FILES.getlist("photos"))\n'
        '        return JsonResponse({"photos": [p.public_url for p in photos]}, status=201)\n\n\n'
        "class ListingDetailView(LoginRequiredMixin, View):\n"
        "    def get(self, request, pk):\n"
        "        listing = get_object_or_404(Listing, pk=pk, agency=request.user.agency)\n"
        "        return JsonResponse(listing.as_card())\n"
    )
    models_before = (
        "from django.db import models\n\n\n"
        "class Listing(models.Model):\n"
        "    agency = models.ForeignKey(\n"
        '        "agencies.Agency", on_delete=models.CASCADE, related_name="listings"\n    )\n'
        "    title = models.CharField(max_length=140)\n"
        "    price_cents = models.BigIntegerField()\n"
        "    published = models.BooleanField(default=False)\n"
        "    created_at = models.DateTimeField(auto_now_add=True)\n\n"
        "    def as_card(self):\n"
        '        cover = self.photos.order_by("position").first()\n'
        '        return {"id": self.pk, "title": self.title, "cover": cover and cover.public_url}\n'
        "\n\nclass Photo(models.Model):\n"
        "    listing = models.ForeignKey(Listing, on_delete=models.CASCADE, "
        'related_name="photos")\n'
        '    original = models.ImageField(upload_to="originals/%Y/%m/")\n'
        "    position = models.PositiveSmallIntegerField(default=0)\n\n"
        "    class Meta:\n"
        '        ordering = ["position"]\n\n'
        "    @property\n"
        "    def public_url(self):\n"
        "        return self.original.url\n"
    )
    celery_before = (
        "import os\n\nfrom celery import Celery\n\n"
        'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")\n\n'
        f'app = Celery("{site}")\n'
        'app.config_from_object("django.conf:settings", namespace="CELERY")\n'
        "app.conf.task_routes = {\n"
        '    "accounts.tasks.*": {"queue": "emails"},\n'
        '    "imports.tasks.*": {"queue": "imports"},\n'
        "}\n"
        "app.autodiscover_tasks()\n"
    )
    settings_tail = (
        'CELERY_BROKER_URL = env("REDIS_URL", default="redis://localhost:6379/0")\n'
        "CELERY_TASK_IGNORE_RESULT = True\n"
        'CELERY_TASK_DEFAULT_QUEUE = "default"\n'
    )
    settings_before = (
        "from pathlib import Path\n\nimport environ\n\n"
        "BASE_DIR = Path(__file__).resolve().parent.parent.parent\n"
        "env = environ.Env()\n\n"
        'SECRET_KEY = env("DJANGO_SECRET_KEY")\n'
        'ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])\n\n'
        "INSTALLED_APPS = [\n"
        '    "django.contrib.admin",\n    "django.contrib.auth",\n'
        '    "django.contrib.contenttypes",\n    "django.contrib.sessions",\n'
        '    "django.contrib.staticfiles",\n    "storages",\n'
        '    "accounts",\n    "agencies",\n    "listings",\n    "imports",\n'
        '    "portal",\n    "search",\n]\n\n'
        'DATABASES = {"default": env.db("DATABASE_URL")}\n'
        'TIME_ZONE = "UTC"\nUSE_TZ = True\n\n'
        "STORAGES = {\n"
        '    "default": {"BACKEND": "storages.backends.s3.S3Storage"},\n'
        '    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},\n'
        "}\n"
        'AWS_STORAGE_BUCKET_NAME = env("MEDIA_BUCKET")\n'
        'AWS_S3_ENDPOINT_URL = env("S3_ENDPOINT", default=None)\n'
        "AWS_QUERYSTRING_AUTH = False\n\n"
        "DATA_UPLOAD_MAX_NUMBER_FILES = 40\n"
        "FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024\n\n" + settings_tail
    )
    tests_text = (
        "import io\n\nimport pytest\n"
        "from django.core.files.uploadedfile import SimpleUploadedFile\n"
        "from PIL import Image\n\n"
        "from listings.imaging import web_rendition\n"
        "from listings.models import Listing, Photo\n"
        "from listings.tasks import process_photo\n\n\n"
        "def jpeg(size, **exif):\n"
        "    buf = io.BytesIO()\n"
        '    image = Image.new("RGB", size, "#c0ffee")\n'
        "    info = image.getexif()\n"
        "    for tag, value in exif.items():\n"
        '        info[int(tag.removeprefix("t"))] = value\n'
        '    image.save(buf, "JPEG", exif=info)\n'
        '    return SimpleUploadedFile("p.jpg", buf.getvalue(), content_type="image/jpeg")\n\n\n'
        "def test_rendition_fits_the_long_edge(settings):\n"
        "    out = Image.open(io.BytesIO(web_rendition(jpeg((4032, 3024)), 1000, 80)))\n"
        "    assert max(out.size) == 1000\n\n\n"
        "def test_rendition_drops_location_data():\n"
        '    out = Image.open(io.BytesIO(web_rendition(jpeg((800, 600), t34853={1: "N"}), 400, '
        "80)))\n"
        "    assert 34853 not in out.getexif()\n\n\n"
        "@pytest.mark.django_db\n"
        "def test_last_photo_publishes_listing(listing_factory):\n"
        "    listing = listing_factory(pending_photos=1)\n"
        "    photo = Photo.objects.create(listing=listing, original=jpeg((800, 600)))\n"
        "    process_photo(photo.pk)\n"
        "    listing.refresh_from_db()\n"
        "    assert listing.published and listing.pending_photos == 0\n\n\n"
        "@pytest.mark.django_db\n"
        "def test_failed_photo_still_counts_down(listing_factory):\n"
        "    listing = listing_factory(pending_photos=2)\n"
        '    broken = SimpleUploadedFile("x.jpg", b"not a jpeg")\n'
        "    process_photo(Photo.objects.create(listing=listing, original=broken).pk)\n"
        "    listing.refresh_from_db()\n"
        "    assert listing.pending_photos == 1 and not listing.published\n\n\n"
        "@pytest.mark.django_db\n"
        "def test_upload_answers_202_and_queues(client_for_agent, listing_factory, "
        "django_capture_on_commit_callbacks):\n"
        "    listing = listing_factory()\n"
        "    with django_capture_on_commit_callbacks() as callbacks:\n"
        "        response = client_for_agent.post(\n"
        '            f"/listings/{listing.pk}/photos/", {"photos": [jpeg((800, 600))]}\n'
        "        )\n"
        "    assert response.status_code == 202 and len(callbacks) == 1\n"
    )

    events: list[Callable[[], None]] = []

    # 1. the ask: the task, two values, three rules
    def ask() -> None:
        s.user(
            f"hi! problem on the agents' side of {brand} (the {city} offices first): an agent "
            "uploads up to 40 photos per listing and the upload request resizes every one of "
            "them inline. With 12 MP phone "
            "photos that blows through gunicorn's 30 s timeout and they lose the whole batch. "
            "Please move the photo processing onto Celery. The web rendition should be "
            f"{edge0}px on the long edge at JPEG quality {q0}.\n\n"
            "Ground rules: we're on Django 4.2 LTS until the spring upgrade, so nothing that "
            "needs 5.x. For imaging it's nothing but Pillow — no sorl, no easy-thumbnails, no "
            "imgproxy sidecar. And every photo we publish must have its GPS tags stripped; agents "
            "shoot inside people's homes."
        )
        s.fact("constraint", "Stay on Django 4.2.", ("Django 4.2",))
        s.fact("constraint", "No imaging library but Pillow.", ("nothing but Pillow",))
        s.fact("constraint", "Published photos lose their GPS tags.", ("GPS tags",))
        s.say(
            pick(
                (
                    "Got it. Let me see how uploads flow today before changing anything.",
                    "Understood — first a look at the listings app and the upload view.",
                )
            )
        )
        files = sorted(
            [
                "listings/__init__.py", "listings/admin.py", "listings/apps.py",
                "listings/forms.py", "listings/models.py", "listings/urls.py",
                "listings/views.py", "listings/utils/__init__.py",
                "listings/utils/sync_resize.py", "listings/tests/__init__.py",
                "listings/tests/conftest.py", "listings/tests/test_views.py",
                "listings/tests/test_models.py", "listings/tests/test_sync_resize.py",
            ]
        )  # fmt: skip
        k.glob("listings/**/*.py", files)
        requirements = (
            "Django==4.2.16\ncelery[redis]==5.4.0\ndjango-environ==0.11.2\n"
            "django-storages[s3]==1.14.4\nboto3==1.35.36\nPillow==10.4.0\n"
            "psycopg[binary]==3.2.3\ngunicorn==23.0.0\nsentry-sdk[django]==2.16.0\n"
        )
        k.turn([k.read_call("requirements/base.txt", requirements),
                k.read_call("listings/views.py", views_before)])  # fmt: skip
        s.fact("file_read", "The pinned requirements were read.", ("requirements/base.txt",),
               required=False)  # fmt: skip

    events.append(ask)

    # 2. the plan and a look around by a subagent
    def plan() -> None:
        k.todos(todo_list("ipppp" + "p"))
        k.agent(
            "Trace listing photo uploads",
            "Read-only, medium thoroughness. In this Django project, trace what happens when an "
            "agent uploads listing photos: the view, the resize helper in listings/utils, where "
            "files are stored (storage backend, bucket settings, and the bucket each deploy "
            "environment sets), and how Celery is configured (app, routes, queues, worker "
            "deployments). Report file paths and names; change nothing.",
            "- `listings/views.py` `PhotoUploadView.post` validates `PhotoUploadForm`, then calls "
            "`listings.utils.sync_resize.resize_all(listing, files)` inside the request. "
            "`resize_all` opens each upload with Pillow, calls `Image.thumbnail((1600, 1600))` and "
            "saves over `Photo.original` — there is no separate rendition.\n"
            "- Storage: `STORAGES['default']` is django-storages `S3Storage`; bucket from "
            "`MEDIA_BUCKET` (config/settings/base.py). `deploy/helm/values-prod.yaml` sets "
            f"`MEDIA_BUCKET: {bucket}`; dev uses MinIO from docker-compose.yml.\n"
            f"- Celery: `config/celery.py` defines the app `{site}`, routes `accounts.tasks.*` to "
            "`emails` and `imports.tasks.*` to `imports`; default queue `default`. "
            "`deploy/helm/templates/worker.yaml` runs one worker Deployment per queue.\n"
            "- Tests: `listings/tests/` (conftest has `listing_factory`, `client_for_agent`).",
        )
        s.say(
            "The upload view resizes inside the request through `resize_all`, writing over "
            "the original. Celery already runs with one worker per queue, so a new queue for "
            "photos is cheap to add."
        )

    events.append(plan)

    def which_bucket() -> None:
        s.user(
            pick(
                (
                    "side question while you're in there: which bucket do the originals land in "
                    "on prod? I need it for the retention ticket.",
                    "oh, and which S3 bucket holds the photos in production? compliance asked "
                    "me this morning.",
                )
            )
        )
        s.say(
            f"Production stores them in `{bucket}` — `MEDIA_BUCKET` as set in "
            "deploy/helm/values-prod.yaml."
        )
        s.fact("identifier", "The production media bucket.", (bucket,))

    events.append(which_bucket)

    imaging_text = (
        '"""Web renditions of listing photos."""\n\n'
        "from io import BytesIO\n\nfrom PIL import Image, ImageOps\n\n\n"
        "def strip_location(image):\n"
        '    """A copy of `image` that carries no EXIF block, location data included."""\n'
        "    clean = Image.new(image.mode, image.size)\n"
        "    clean.putdata(list(image.getdata()))\n"
        "    return clean\n\n\n"
        "def web_rendition(original, long_edge, quality):\n"
        "    with Image.open(original) as image:\n"
        "        image = strip_location(image)\n"
        "        image = ImageOps.exif_transpose(image)\n"
        "        image.thumbnail((long_edge, long_edge), Image.Resampling.LANCZOS)\n"
        "        out = BytesIO()\n"
        '        image.convert("RGB").save(out, "JPEG", quality=quality, optimize=True, '
        "progressive=True)\n"
        "        return out.getvalue()\n"
    )

    def chord_first() -> None:
        s.say(
            "Plan: the view saves the originals and returns 202 at once; then a Celery chord — "
            "one `process_photo` task per photo, with a callback that publishes the listing when "
            "the whole set is done."
        )
        k.write("listings/imaging.py", imaging_text)
        s.fact("file_created", "The imaging helpers were created.", ("listings/imaging.py",))
        k.write(
            "listings/tasks.py",
            "from celery import chord, shared_task\n"
            "from django.conf import settings\n"
            "from django.core.files.base import ContentFile\n\n"
            "from .imaging import web_rendition\n"
            "from .models import Listing, Photo\n\n\n"
            "def process_listing_photos(listing):\n"
            "    header = [process_photo.s(photo.pk) for photo in listing.photos.all()]\n"
            "    chord(header)(publish_listing.si(listing.pk))\n\n\n"
            "@shared_task\n"
            "def process_photo(photo_id):\n"
            "    photo = Photo.objects.get(pk=photo_id)\n"
            "    data = web_rendition(photo.original, settings.PHOTO_LONG_EDGE_PX, "
            "settings.PHOTO_JPEG_QUALITY)\n"
            '    photo.rendition.save(f"{photo.pk}.jpg", ContentFile(data), save=True)\n'
            "    return photo.pk\n\n\n"
            "@shared_task\n"
            "def publish_listing(listing_id):\n"
            "    Listing.objects.filter(pk=listing_id).update(published=True)\n",
        )
        s.fact("file_created", "The photo tasks module was created.", ("listings/tasks.py",))

    events.append(chord_first)

    def pushback() -> None:
        s.user(
            pick(
                (
                    "hmm, wait. a chord needs a result backend and we run with results off — ops "
                    "killed the Redis result backend last year after it ate all the memory "
                    "(CELERY_TASK_IGNORE_RESULT is on). and if one photo out of 40 blows up the "
                    "callback never fires, so the listing sits unpublished forever.",
                    "not a chord please. results are switched off on prod "
                    "(CELERY_TASK_IGNORE_RESULT, there's no result backend at all since the "
                    "Redis incident), and one corrupt photo would leave the whole listing stuck "
                    "because the callback never runs.",
                )
            )
        )
        k.search_web(
            "celery chord without result backend task_ignore_result",
            [
                (
                    "Canvas: Designing Work-flows — Celery 5.4.0 documentation",
                    "2024-04-17",
                    "https://docs.celeryq.dev/en/stable/userguide/canvas.html",
                    "Tasks used within a chord must not ignore their results. In practice this "
                    "means that you must enable a result_backend in order to use chords.",
                ),
                (
                    "chord callback never called when one header task fails · Issue #3709",
                    "2017-01-05",
                    "https://github.com/celery/celery/issues/3709",
                    "If a task in the header raises, the chord's body is not executed; the "
                    "error propagates to the callback as a ChordError.",
                ),
                (
                    "How to know when a group of Celery tasks has finished without results?",
                    "2021-09-30",
                    "https://stackoverflow.com/questions/69382021",
                    "Keep a counter in the database and decrement it atomically in each task; "
                    "the task that reaches zero runs the follow-up work.",
                ),
            ],
        )
        k.fetch_url(
            "https://docs.celeryq.dev/en/stable/userguide/canvas.html",
            "# Canvas: Designing Work-flows\n\n## Chords\n\nA chord is a task that only executes "
            "after all of the tasks in a group have finished executing.\n\n> **Important**\n> "
            "Tasks used within a chord must not ignore their results. If the result backend is "
            'disabled for any task (header or body) in your chord you should read "Important '
            'Notes". Chords are not currently supported with the RPC result backend.\n\n'
            "### Error handling\n\nSo what happens if one of the tasks raises an exception? The "
            "chord callback result will transition to the failure state, and the error is set "
            "to the ChordError exception.\n\n### Important Notes\n\nTasks used within a chord "
            "must not ignore their results. In practice this means that you must enable a "
            "result_backend in order to use chords. Additionally, if task_ignore_result is set "
            "to True in your configuration, be sure that the individual tasks to be used within "
            "the chord are defined with ignore_result=False.\n",
        )
        s.say(
            "You're right on both counts, and the docs agree: a chord needs stored results. "
            "Scrapping the chord. Instead each listing keeps a `pending_photos` counter: the "
            "view adds the number of uploads, and every `process_photo` run — success or "
            "failure — decrements it with an `F()` update in its own transaction. The run that "
            "brings it to zero publishes the listing. No result backend, and a corrupt photo is "
            "marked failed but still counts down."
        )
        s.fact(
            "decision",
            "A pending_photos counter on the listing, decremented by each photo task, replaces "
            "the chord.",
            ("pending_photos",),
            stale=("a Celery chord",),
        )

    events.append(pushback)

    tasks_counter = (
        "import logging\n\n"
        "from celery import chord, shared_task\n"
        "from django.conf import settings\n"
        "from django.core.files.base import ContentFile\n"
        "from django.db import transaction\n"
        "from django.db.models import F\n\n"
        "from .imaging import web_rendition\n"
        "from .models import Listing, Photo\n\n"
        "log = logging.getLogger(__name__)\n\n\n"
        "@shared_task(acks_late=True)\n"
        "def process_photo(photo_id):\n"
        "    photo = Photo.objects.get(pk=photo_id)\n"
        "    try:\n"
        "        data = web_rendition(\n"
        "            photo.original, settings.PHOTO_LONG_EDGE_PX, settings.PHOTO_JPEG_QUALITY\n"
        "        )\n"
        "    except OSError:\n"
        '        log.exception("photo %s could not be processed", photo_id)\n'
        "        photo.state = Photo.State.FAILED\n"
        '        photo.save(update_fields=["state"])\n'
        "    else:\n"
        '        photo.rendition.save(f"{photo.pk}.jpg", ContentFile(data), save=False)\n'
        "        photo.state = Photo.State.READY\n"
        '        photo.save(update_fields=["rendition", "state"])\n'
        "    count_down(photo.listing_id)\n\n\n"
        "def count_down(listing_id):\n"
        "    with transaction.atomic():\n"
        '        Listing.objects.filter(pk=listing_id).update(pending_photos=F("pending_photos") '
        "- 1)\n"
        "        listing = Listing.objects.select_for_update().get(pk=listing_id)\n"
        "        if listing.pending_photos == 0 and not listing.published:\n"
        "            listing.published = True\n"
        '            listing.save(update_fields=["published"])\n'
    )

    def counter() -> None:
        k.read("listings/models.py", models_before)
        k.replace(
            "listings/models.py",
            [
                (
                    "    published = models.BooleanField(default=False)\n",
                    "    published = models.BooleanField(default=False)\n"
                    "    pending_photos = models.PositiveIntegerField(default=0)\n",
                ),
                (
                    '    original = models.ImageField(upload_to="originals/%Y/%m/")\n',
                    "    class State(models.TextChoices):\n"
                    '        PROCESSING = "processing"\n        READY = "ready"\n'
                    '        FAILED = "failed"\n\n'
                    '    original = models.ImageField(upload_to="originals/%Y/%m/")\n'
                    '    rendition = models.ImageField(upload_to="renditions/%Y/%m/", '
                    "blank=True)\n"
                    "    state = models.CharField(\n"
                    "        max_length=12, choices=State.choices, default=State.PROCESSING\n"
                    "    )\n",
                ),
                (
                    "        return self.original.url\n",
                    "        return self.rendition.url if self.rendition else None\n",
                ),
            ],
        )
        s.fact("file_modified", "The listing and photo models changed.", ("listings/models.py",))
        k.write("listings/tasks.py", tasks_counter, text="Rewriting the tasks around the counter.")
        k.read("config/celery.py", celery_before)
        k.replace(
            "config/celery.py",
            [
                (
                    '    "imports.tasks.*": {"queue": "imports"},\n',
                    '    "imports.tasks.*": {"queue": "imports"},\n'
                    '    "listings.tasks.*": {"queue": "photos"},\n',
                ),
                (
                    "app.autodiscover_tasks()\n",
                    "app.conf.worker_prefetch_multiplier = 1\napp.autodiscover_tasks()\n",
                ),
            ],
        )
        s.fact("file_modified", "The Celery app routes the photo tasks.", ("config/celery.py",))
        s.say(
            pick(
                (
                    "Photo tasks get their own `photos` queue, and `process_photo` runs with "
                    "acks_late so a worker killed mid-resize hands the photo back instead of "
                    "losing it; prefetch 1 keeps one slow 12 MP photo from holding others.",
                    "Routing `listings.tasks.*` to a new `photos` queue; `process_photo` is "
                    "acks_late, so a photo whose worker dies mid-resize is redelivered, and "
                    "prefetch 1 stops one worker hoarding a listing's 40 photos.",
                )
            )
        )
        s.fact(
            "decision",
            "Photo tasks run on their own queue, acknowledged late.",
            ("acks_late",),
        )
        k.read("config/settings/base.py", settings_before)
        k.replace(
            "config/settings/base.py",
            [
                (
                    settings_tail,
                    settings_tail + f"\nPHOTO_LONG_EDGE_PX = {edge0}\nPHOTO_JPEG_QUALITY = {q0}\n",
                )
            ],
        )
        k.replace(
            "listings/views.py",
            [
                (
                    "from django.contrib.auth.mixins import LoginRequiredMixin\n",
                    "from functools import partial\n\n"
                    "from django.contrib.auth.mixins import LoginRequiredMixin\n"
                    "from django.db import transaction\nfrom django.db.models import F\n",
                ),
                (
                    "from .models import Listing\nfrom .utils.sync_resize import resize_all\n",
                    "from .models import Listing, Photo\nfrom .tasks import process_photo\n",
                ),
                (
                    '        photos = resize_all(listing, request.FILES.getlist("photos"))\n'
                    '        return JsonResponse({"photos": [p.public_url for p in photos]}, '
                    "status=201)\n",
                    '        uploads = request.FILES.getlist("photos")\n'
                    "        with transaction.atomic():\n"
                    "            photos = [\n"
                    "                Photo.objects.create(listing=listing, original=upload, "
                    "position=i)\n"
                    "                for i, upload in enumerate(uploads)\n"
                    "            ]\n"
                    "            Listing.objects.filter(pk=listing.pk).update(\n"
                    '                pending_photos=F("pending_photos") + len(photos)\n'
                    "            )\n"
                    "            for photo in photos:\n"
                    "                transaction.on_commit(partial(process_photo.delay, "
                    "photo.pk))\n"
                    '        return JsonResponse({"photos": [p.pk for p in photos]}, status=202)\n',
                ),
            ],
        )
        s.fact("file_modified", "The upload view queues the photos.", ("listings/views.py",))
        k.todos(todo_list("ddipp" + "p"))

    events.append(counter)

    failing_names = [f"test_{ident(rng)}" for _ in range(db_bound)]

    def first_run() -> None:
        k.write("listings/tests/test_photo_pipeline.py", tests_text)
        s.fact(
            "file_created",
            "The photo pipeline tests were created.",
            ("listings/tests/test_photo_pipeline.py",),
        )
        error = (
            'django.db.utils.ProgrammingError: column "pending_photos" of relation '
            '"listings_listing" does not exist'
        )
        dots = "." * (existing - db_bound + 2) + "F" * (db_bound + 3)
        dots = "".join(rng.sample(dots, len(dots)))
        failing = [f"listings/tests/test_models.py::{name}" for name in failing_names] + [
            f"listings/tests/test_photo_pipeline.py::{name}"
            for name in (
                "test_last_photo_publishes_listing",
                "test_failed_photo_still_counts_down",
                "test_upload_answers_202_and_queues",
            )
        ]
        out = (
            f"{dots}{' ' * max(1, 73 - len(dots))}[100%]\n"
            "=================================== FAILURES ===================================\n"
            f"___________________________ {failing_names[0]} ___________________________\n\n"
            "self = <django.db.backends.utils.CursorWrapper object at 0x7f3a1c2b9d90>\n"
            'sql = \'INSERT INTO "listings_listing" ("agency_id", "title", "price_cents", '
            '"published", "created_at", "pending_photos") VALUES (%s, %s, %s, %s, %s, %s) '
            'RETURNING "listings_listing"."id"\'\n\n'
            "    def _execute(self, sql, params, *ignored_wrapper_args):\n"
            "        self.db.validate_no_broken_transaction()\n"
            "        with self.db.wrap_database_errors:\n"
            "            if params is None:\n"
            "                return self.cursor.execute(sql)\n"
            "            else:\n"
            ">               return self.cursor.execute(sql, params)\n"
            'E               psycopg.errors.UndefinedColumn: column "pending_photos" of '
            'relation "listings_listing" does not exist\n'
            'E               LINE 1: ...("agency_id", "title", "price_cents", "published", '
            '"created_at", "pending_photo...\n\n'
            ".venv/lib/python3.12/site-packages/django/db/backends/utils.py:105: UndefinedColumn"
            "\n\nThe above exception was the direct cause of the following exception:\n\n"
            f"listings/tests/test_models.py:{rng.randint(12, 80)}: in {failing_names[0]}\n"
            "    listing = listing_factory()\n"
            "listings/tests/conftest.py:14: in listing_factory\n"
            "    return Listing.objects.create(**fields)\n"
            ".venv/lib/python3.12/site-packages/django/db/models/query.py:679: in create\n"
            "    obj.save(force_insert=True, using=self.db)\n"
            f"E   {error}\n\n"
            ".venv/lib/python3.12/site-packages/django/db/backends/utils.py:105: "
            "ProgrammingError\n"
            "=========================== short test summary info ============================\n"
            + "".join(f"FAILED {name} - {error}\n" for name in failing)
            + f"{n_red} in {rng.randint(5, 9)}.{rng.randint(10, 99)}s"
        )
        k.shell("python -m pytest -q listings", out, code=1, timeout=300)
        s.fact(
            "error_resolved",
            "The test database had no pending_photos column.",
            ('column "pending_photos" of relation "listings_listing" does not exist',),
            required=False,
        )

    events.append(first_run)

    def migrate() -> None:
        s.say(
            pick(
                (
                    "No migration for the new fields yet — pytest-django builds the test "
                    "database from migrations, so the column never exists.",
                    "The model changed but I never generated a migration; the test database is "
                    "built from migrations, hence the missing column.",
                )
            )
        )
        number = rng.randint(14, 29)
        k.shell(
            "python manage.py makemigrations listings",
            "Migrations for 'listings':\n"
            f"  listings/migrations/00{number}_listing_pending_photos_photo_rendition_"
            "photo_state.py\n"
            "    + Add field pending_photos to listing\n"
            "    + Add field rendition to photo\n"
            "    + Add field state to photo",
        )
        passing = (
            "." * n_green
            + f"{' ' * max(1, 73 - n_green)}[100%]\n"
            + f"{n_green} passed in {rng.randint(5, 9)}.{rng.randint(10, 99)}s"
        )
        k.shell("python -m pytest -q listings", passing, timeout=300)
        k.todos(todo_list("dddip" + "p"))
        s.fact(
            "todo",
            "Stripping location metadata is done.",
            (todo_titles[2],),
            required=False,
        )

    events.append(migrate)

    def lint() -> None:
        k.shell(
            "ruff check listings",
            "listings/tasks.py:3:20: F401 [*] `celery.chord` imported but unused\n"
            "  |\n1 | import logging\n2 |\n3 | from celery import chord, shared_task\n"
            "  |                    ^^^^^ F401\n4 | from django.conf import settings\n"
            "5 | from django.core.files.base import ContentFile\n  |\n"
            "  = help: Remove unused import: `celery.chord`\n\n"
            "Found 1 error.\n[*] 1 fixable with the `--fix` option.",
            code=1,
        )
        s.fact(
            "error_resolved",
            "ruff flagged the chord import left behind.",
            ("`celery.chord` imported but unused",),
            required=False,
        )
        k.replace(
            "listings/tasks.py",
            [("from celery import chord, shared_task\n", "from celery import shared_task\n")],
        )
        k.shell("ruff check listings", "All checks passed!")

    events.append(lint)

    def quality() -> None:
        s.user(
            pick(
                (
                    f"the photographers looked at the first samples: {q0} shows banding on "
                    f"blue skies. bump it to JPEG quality {q1}.",
                    f"feedback from the agents: at {q0} the sky gradients band. let's go with "
                    f"JPEG quality {q1} instead.",
                )
            )
        )
        k.replace(
            "config/settings/base.py",
            [(f"PHOTO_JPEG_QUALITY = {q0}\n", f"PHOTO_JPEG_QUALITY = {q1}\n")],
        )
        s.say(f"Changed: renditions are now encoded at JPEG quality {q1}.")
        s.fact(
            "changed_value",
            "The renditions' JPEG quality.",
            (f"JPEG quality {q1}",),
            stale=(f"JPEG quality {q0}",),
        )

    events.append(quality)

    def originals() -> None:
        s.user(
            pick(
                (
                    "one rule I forgot: never overwrite or delete an agent's original upload. "
                    "legal wants the originals exactly as shot; renditions live next to them.",
                    "also, important: an agent's original upload is never overwritten or "
                    "deleted — legal keeps the originals as shot. renditions go beside them.",
                )
            )
        )
        s.fact("constraint", "Originals are never overwritten or deleted.", ("original upload",))
        k.grep(
            "upload_to=|\\.save\\(",
            [
                "listings/models.py:23:    original = models.ImageField("
                'upload_to="originals/%Y/%m/")',
                'listings/models.py:24:    rendition = models.ImageField(upload_to="renditions/'
                '%Y/%m/", blank=True)',
                'listings/tasks.py:27:        photo.rendition.save(f"{photo.pk}.jpg", '
                "ContentFile(data), save=False)",
                'listings/tasks.py:29:        photo.save(update_fields=["rendition", "state"])',
            ],
            under="listings",
            glob="*.py",
        )
        s.say(
            "That holds already: the task only ever writes `Photo.rendition` under "
            "`renditions/`; `Photo.original` is written once by the upload and never touched "
            "again. The old `resize_all` was the one saving over it, and it goes away."
        )

    events.append(originals)

    def worker() -> None:
        command = "docker compose up -d redis minio && celery -A config worker -Q photos -l info"
        description = "celery photos worker"
        task_id = k.background(command, description, 600)
        uuids = [
            f"{hexid(rng, 8)}-{hexid(rng, 4)}-4{hexid(rng, 3)}-b{hexid(rng, 3)}-{hexid(rng, 12)}"
            for _ in range(4)
        ]
        lines = [
            f" -------------- celery@{user}-laptop v5.4.0 (opalescent)",
            "--- ***** ----- ",
            f"-- ******* ---- Linux-6.8.0-51-generic-x86_64-with-glibc2.39 {today} 10:41:07",
            f"- *** --- * --- \n- ** ---------- [config]\n- ** ---------- .> app:         "
            f"{site}:0x7f5e2c1d4a10",
            "- ** ---------- .> transport:   redis://localhost:6379/0",
            "- ** ---------- .> results:     disabled://",
            "-- ******* ---- .> concurrency: 8 (prefork)",
            "--- ***** ----- \n -------------- [queues]\n                .> photos           "
            "exchange=photos(direct) key=photos",
            "",
            "[tasks]\n  . listings.tasks.process_photo",
            "",
        ]
        for n, uuid in enumerate(uuids):
            lines.append(
                f"[{today} 10:41:{12 + 2 * n:02d},{rng.randint(100, 499)}: INFO/MainProcess] "
                f"Task listings.tasks.process_photo[{uuid}] received"
            )
            lines.append(
                f"[{today} 10:41:{13 + 2 * n:02d},{rng.randint(500, 999)}: INFO/ForkPoolWorker-"
                f"{n + 1}] Task listings.tasks.process_photo[{uuid}] succeeded in "
                f"1.{rng.randint(100, 999)}s: None"
            )
        k.task_output(task_id, description, command, "\n".join(lines))
        k.task_stop(task_id, description, command, "Smoke test done")
        s.say(
            "Four uploads from the dev fixture went through the local worker, each in under "
            "two seconds, and the listing flipped to published after the last one."
        )

    events.append(worker)

    def retire() -> None:
        k.grep(
            "sync_resize|resize_all",
            ["listings/utils/sync_resize.py", "listings/tests/test_sync_resize.py"],
            mode="files_with_matches",
        )
        k.shell(
            "rm listings/utils/sync_resize.py listings/tests/test_sync_resize.py",
            "",
            text="Nothing imports the old resizer any more; removing it and its tests.",
        )
        s.fact("file_deleted", "The synchronous resizer was removed.",
               ("listings/utils/sync_resize.py",))  # fmt: skip
        k.todos(todo_list("ddddp" + "p"))

    events.append(retire)

    def edge_up() -> None:
        s.user(
            pick(
                (
                    f"design says {edge0} looks soft on the new full-width gallery. take it to "
                    f"{edge1}px on the long edge.",
                    f"the redesigned gallery is full width and {edge0} looks blurry there. make "
                    f"it {edge1}px on the long edge.",
                )
            )
        )
        k.replace(
            "config/settings/base.py",
            [(f"PHOTO_LONG_EDGE_PX = {edge0}\n", f"PHOTO_LONG_EDGE_PX = {edge1}\n")],
        )
        s.say(f"Done — renditions are now {edge1}px on the long edge.")

    events.append(edge_up)

    def stuck() -> None:
        s.user(
            pick(
                (
                    f"different thing: listing {stuck_listing} from this morning's partner "
                    "import is stuck on the spinner. can you find which task handled its last "
                    "photo? worker logs are in logs/.",
                    f"quick one — listing {stuck_listing} (came in with the partner import "
                    "today) never finished loading its photos. which celery task was the last "
                    "one on it? logs are under logs/.",
                )
            )
        )
        other = (
            f"{hexid(rng, 8)}-{hexid(rng, 4)}-4{hexid(rng, 3)}-9{hexid(rng, 3)}-{hexid(rng, 12)}"
        )
        k.grep(
            f"listing={stuck_listing}",
            [
                f"imports-worker.log:{rng.randint(20000, 29999)}:[{today} 06:02:41,"
                f"{rng.randint(100, 999)}: INFO/ForkPoolWorker-3] imports.tasks."
                f"fetch_remote_photo[{other}]: stored photo 11/12 listing={stuck_listing}",
                f"imports-worker.log:{rng.randint(30000, 39999)}:[{today} 06:02:47,"
                f"{rng.randint(100, 999)}: WARNING/ForkPoolWorker-5] imports.tasks."
                f"fetch_remote_photo[{stuck_task}]: ReadTimeout after 30s fetching photo 12/12 "
                f"listing={stuck_listing}",
                f"imports-worker.log:{rng.randint(30000, 39999)}:[{today} 06:02:47,"
                f"{rng.randint(100, 999)}: ERROR/ForkPoolWorker-5] Task imports.tasks."
                f"fetch_remote_photo[{stuck_task}] raised unexpected: ReadTimeout"
                f"(listing={stuck_listing})",
            ],
            under="logs",
        )
        s.say(
            f"The last photo of listing {stuck_listing} was task {stuck_task} "
            "(`imports.tasks.fetch_remote_photo`): it timed out on the partner's CDN after 30 s "
            "and was not retried, so the import never marked the listing complete."
        )
        s.fact("identifier", "The import task that left the listing stuck.", (stuck_task,))

    events.append(stuck)

    def shuffle() -> None:
        s.user(
            pick(
                (
                    "drop the dashboard badge from your list, frontend will build it off "
                    "Photo.state. but add one: listings imported before this switch still show "
                    "their full-size originals, they need reprocessing.",
                    "the processing badge isn't ours, frontend does it from Photo.state. "
                    "instead we need to reprocess the photos of listings imported before the "
                    "switch — they still serve full-size originals.",
                )
            )
        )
        k.todos(todo_list("ddddpp", extra=True, drop=True), text="Updated the list.")
        s.fact(
            "todo",
            "The dashboard badge was dropped.",
            (todo_titles[4],),
            required=False,
        )

    events.append(shuffle)

    def edge_settle() -> None:
        s.user(
            pick(
                (
                    f"ugh, {edge1} makes the gallery pages too heavy on mobile data. final "
                    f"answer: {edge2}px on the long edge.",
                    f"perf budget says no to {edge1} on mobile. we're settling on {edge2}px on "
                    "the long edge.",
                )
            )
        )
        k.replace(
            "config/settings/base.py",
            [(f"PHOTO_LONG_EDGE_PX = {edge1}\n", f"PHOTO_LONG_EDGE_PX = {edge2}\n")],
        )
        s.say(f"Settled: {edge2}px on the long edge.")
        s.fact(
            "changed_value",
            "The rendition's long edge.",
            (f"{edge2}px on the long edge",),
            stale=(f"{edge0}px on the long edge", f"{edge1}px on the long edge"),
        )
        s.fact(
            "file_modified",
            "The settings hold the rendition's size and quality.",
            ("config/settings/base.py",),
        )

    events.append(edge_settle)

    def last_run() -> None:
        k.read("listings/tests/test_photo_pipeline.py", tests_text)
        wide, tall = edge2, edge2 * 3 // 4
        k.replace(
            "listings/tests/test_photo_pipeline.py",
            [
                (
                    "\n\n@pytest.mark.django_db\ndef test_last_photo_publishes_listing(",
                    "\n\ndef test_portrait_photo_keeps_orientation(settings):\n"
                    "    # a phone held upright: stored landscape, EXIF Orientation 6\n"
                    f"    data = web_rendition(jpeg((4032, 3024), t274=6), {edge2}, 80)\n"
                    f"    assert Image.open(io.BytesIO(data)).size == ({tall}, {wide})\n\n\n"
                    "def test_rendition_is_progressive_jpeg():\n"
                    "    data = web_rendition(jpeg((800, 600)), 400, 80)\n"
                    '    assert Image.open(io.BytesIO(data)).info.get("progressive")\n\n\n'
                    "@pytest.mark.django_db\ndef test_last_photo_publishes_listing(",
                )
            ],
        )
        dots = list("." * n_last)
        dots.insert(2, "F")
        out = (
            "".join(dots) + f"{' ' * max(1, 73 - len(dots))}[100%]\n"
            "=================================== FAILURES ===================================\n"
            "____________________ test_portrait_photo_keeps_orientation _____________________\n\n"
            "settings = <pytest_django.fixtures.SettingsWrapper object at 0x7f9b4c0e2a50>\n\n"
            "    def test_portrait_photo_keeps_orientation(settings):\n"
            "        # a phone held upright: stored landscape, EXIF Orientation 6\n"
            f"        data = web_rendition(jpeg((4032, 3024), t274=6), {edge2}, 80)\n"
            f">       assert Image.open(io.BytesIO(data)).size == ({tall}, {wide})\n"
            f"E       assert ({wide}, {tall}) == ({tall}, {wide})\n"
            "E         \n"
            f"E         At index 0 diff: {wide} != {tall}\n"
            "E         Use -v to get more diff\n\n"
            "listings/tests/test_photo_pipeline.py:34: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED listings/tests/test_photo_pipeline.py::test_portrait_photo_keeps_orientation"
            f" - assert ({wide}, {tall}) == ({tall}, {wide})\n"
            f"1 failed, {n_last} passed in {rng.randint(5, 9)}.{rng.randint(10, 99)}s"
        )
        k.shell("python -m pytest -q listings", out, code=1, timeout=300)
        s.fact(
            "test_status",
            "The last run has one failure.",
            (f"1 failed, {n_last} passed",),
            stale=(f"{n_green} passed in",),
        )
        s.say(
            "Everything else is green. The one failure is real: `strip_location` rebuilds the "
            "image without its EXIF block before `exif_transpose` runs, so the orientation tag "
            "is gone by then and upright phone photos come out on their side "
            "(test_portrait_photo_keeps_orientation). The fix is to transpose first and strip "
            "after."
        )
        s.fact(
            "error_open",
            "Portrait photos lose their orientation; the test still fails.",
            ("test_portrait_photo_keeps_orientation",),
        )
        k.todos(todo_list("ddddpp", extra=True, drop=True))
        s.fact("todo", "The media docs are still to write.", (todo_titles[5],))
        s.fact("todo", "Reprocessing the older listings is still open.", (reprocess,))

    events.append(last_run)

    def ship() -> None:
        s.user(
            pick(
                (
                    "leave the orientation bug for tomorrow, I want to look at it with fresh "
                    "eyes. commit what you have on a branch, push it and open a draft MR.",
                    "let's stop here, orientation can wait until tomorrow. branch, commit, push, "
                    "draft MR please.",
                )
            )
        )
        branch = "photos-on-celery"
        k.shell(
            f'git checkout -b {branch} && git add -A && git commit -qm "Process listing photos '
            'on a Celery queue"',
            f"Switched to a new branch '{branch}'",
        )
        k.shell(
            f"git push -u origin {branch} && glab mr create --draft --fill --yes",
            f"branch '{branch}' set up to track 'origin/{branch}'.\n\n"
            f"Creating draft merge request for {branch} into main in {site}/{site}-web\n\n"
            f"!{mr} Draft: Process listing photos on a Celery queue ({branch})\n"
            f" https://gitlab.com/{site}/{site}-web/-/merge_requests/{mr}",
        )
        s.say(
            pick(
                (
                    f"Pushed; draft merge request !{mr} is open. Until tomorrow.",
                    f"All pushed — draft merge request !{mr} is open. See you tomorrow.",
                )
            )
        )
        s.fact("last_message", "The last message names the draft MR.",
               (f"draft merge request !{mr}",))  # fmt: skip

    events.append(ship)

    target = tokens * CHARS_PER_TOKEN * 1.2
    for i, event in enumerate(events):
        goal = target * i / len(events) * 0.97
        while i and s.chars < goal:
            _filler(k)
        event()
    return finish_session(s, family=FAMILY, seed=seed)
