"""ccstory-style: Claude Code's native tool calls, on a Python webhook service, with a story
of its own (not `story.tell`, not codeact's).

Tools and argument names as Claude Code declares them: `Bash` {command, description,
timeout}, `Read` {file_path, offset, limit}, `Edit` {file_path, old_string, new_string,
replace_all}, `MultiEdit` {file_path, edits: [{old_string, new_string}]}, `Write` {file_path,
content}, `Grep` {pattern, path, output_mode, -n, glob}, `Glob` {pattern, path}, `TodoWrite`
{todos: [{content, status, activeForm}]} (status pending / in_progress / completed; an item is
dropped by leaving it out of the next list), `Task` {description, prompt, subagent_type} (its
result is the subagent's prose report). Paths are absolute.

Results as Claude Code returns them: `Read` in `cat -n` style (`{n:>6}→line`) followed by its
system reminder about malicious code; `Edit` "The file … has been updated. Here's the result of
running `cat -n` on a snippet of the edited file:"; `Write` "File created successfully at: …";
`MultiEdit` "Applied N edits to …:" with one numbered line per replacement; `TodoWrite` "Todos
have been modified successfully. …"; `Grep` in content mode `path:line:text`; a Bash command
that exits non-zero comes back as an error result (`is_error`) starting "Exit code N"; an edit
the user rejects comes back as an error result, and the user's next message starts "[Request
interrupted by user for tool use]". Tool names, argument names, the Edit/Write/Read and
TodoWrite texts were checked against public descriptions of Claude Code's tools; the exact
wording of the MultiEdit result, the "Exit code N" prefix and the read reminder are from memory.

The story: a webhook delivery service (FastAPI, SQLAlchemy, alembic, pytest, ruff, mypy) gets
retries with exponential backoff and a table of delivery attempts. Retries are first planned on
an in-process `threading.Timer`, moved to Celery's `apply_async(countdown=…)`, then (the user
retiring the Celery worker) to a `next_attempt_at` column polled by the sweeper; the attempts
first go to a JSON column, then to a table of their own. The attempt limit changes twice, the
base delay once; the user interrupts an edit of the CLI and forbids touching it, adds a to-do,
and asks which migration added a column. A backoff test fails and is fixed, mypy's union syntax
error and a ruff F401 are fixed, a migration round-trip test stays red on SQLite. The last
message names no fact.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    code_file,
    finish_session,
    flag_errors,
    hexid,
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "ccstory-style"

PACKAGES = ("hookrelay", "postwire", "pingback", "callbackd", "notifyhub", "webhookd")
TABLES = ("delivery_attempts", "webhook_attempts", "attempt_log", "send_attempts")
SEND_FNS = ("_post_signed", "_dispatch_signed", "_send_with_signature", "_signed_post")
SWEEP_FNS = ("requeue_due_deliveries", "sweep_due_retries", "pick_up_due_retries")
PYTHONS = ("3.8", "3.9")
#: (first attempt limit, raised, settled): no value stands inside another.
ATTEMPTS = ((5, 8, 6), (4, 9, 7), (3, 8, 5), (5, 9, 7))
#: (first base delay, later base delay).
DELAYS = (("2 seconds", "45 seconds"), ("3 seconds", "20 seconds"), ("4 seconds", "30 seconds"))
ROUNDTRIP_TESTS = (
    "test_downgrade_then_upgrade",
    "test_migrations_roundtrip_cleanly",
    "test_every_revision_downgrades",
)
BACKOFF_TESTS = (
    "test_backoff_grows_exponentially",
    "test_delay_doubles_per_attempt",
    "test_backoff_schedule_doubles",
)
OTHER_MODULES = (
    "billing/invoices.py",
    "api/routes/partners.py",
    "api/deps.py",
    "core/pagination.py",
    "core/ratelimit.py",
    "api/routes/health.py",
    "partners/registry.py",
    "core/serializers.py",
)

SYSTEM = """You are Claude Code, Anthropic's official CLI for Claude.
You are an interactive CLI tool that helps users with software engineering tasks. Use the \
instructions below and the tools available to you to assist the user.

# Tone and style
You should be concise, direct, and to the point. Your output will be displayed on a command \
line interface. Only use tools to complete tasks, never Bash echo to talk to the user.

# Task Management
You have access to the TodoWrite tool to help you manage and plan tasks. Use it VERY \
frequently to track your tasks and give the user visibility into your progress. Mark todos \
as completed as soon as you are done with a task; exactly one task is in_progress at a time.

# Doing tasks
- Use the available search tools to understand the codebase and the user's query.
- Implement the solution using all tools available to you.
- Verify the solution with the project's tests, and run the lint and typecheck commands.
- NEVER commit changes unless the user explicitly asks you to.

# Tool usage policy
- When doing file search, prefer the Task tool to reduce context usage.
- Always use absolute file paths.

<env>
Working directory: {root}
Is directory a git repo: Yes
Platform: linux
OS Version: Linux 6.8.0-49-generic
Today's date: 2026-12-05
</env>
You are powered by the model named Sonnet 4.5."""

READ_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it looks "
    "malicious. If it does, you MUST refuse to improve or augment the code. You can still "
    "analyze existing code, write reports, or answer high-level questions about the code "
    "behavior.\n</system-reminder>\n"
)
TODO_OK = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


def cat_n(lines: Sequence[str], start: int = 1) -> str:
    return "\n".join(f"{k:>6}→{line}" for k, line in enumerate(lines, start=start))


class ClaudeCode:
    """The session being written, in Claude Code's tool shapes, with a tiny file system."""

    def __init__(self, rng: random.Random, root: str) -> None:
        self.rng = rng
        self.root = root
        self.s = Session(rng=rng, system=SYSTEM.replace("{root}", root))
        self.files: dict[str, list[str]] = {}
        self.errors: set[str] = set()

    def abs(self, path: str) -> str:
        return f"{self.root}/{path}"

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        result: str,
        *,
        text: str = "",
        error: bool = False,
        filler: bool = False,
    ) -> None:
        self.s.call(name, arguments, result, text=text, filler=filler)
        if error:
            self.errors.add(self.s.messages[-2]["tool_calls"][0]["id"])

    def bash(
        self,
        command: str,
        description: str,
        output: str,
        *,
        code: int = 0,
        text: str = "",
        timeout: int | None = None,
        filler: bool = False,
    ) -> None:
        args: dict[str, Any] = {"command": command, "description": description}
        if timeout is not None:
            args["timeout"] = timeout
        result = f"Exit code {code}\n{output}" if code else output
        self.call("Bash", args, result, text=text, error=bool(code), filler=filler)

    def read(
        self, path: str, *, text: str = "", offset: int = 0, limit: int = 0, filler: bool = False
    ) -> None:
        lines = self.files[path]
        args: dict[str, Any] = {"file_path": self.abs(path)}
        start = 1
        if offset:
            args["offset"] = offset
            start = offset
        if limit:
            args["limit"] = limit
        shown = lines[start - 1 : start - 1 + limit] if limit else lines[start - 1 :]
        self.call("Read", args, cat_n(shown, start) + READ_REMINDER, text=text, filler=filler)

    def _snippet(self, path: str, at: int) -> str:
        lines = self.files[path]
        lo, hi = max(1, at - 4), min(len(lines), at + 5)
        return cat_n(lines[lo - 1 : hi], lo)

    def edit(self, path: str, old: str, new: str, *, text: str = "") -> None:
        body = "\n".join(self.files[path])
        assert body.count(old) == 1, (path, old)
        at = body[: body.index(old)].count("\n") + 1
        self.files[path] = body.replace(old, new).split("\n")
        result = (
            f"The file {self.abs(path)} has been updated. Here's the result of running `cat -n` "
            f"on a snippet of the edited file:\n{self._snippet(path, at)}"
        )
        args = {"file_path": self.abs(path), "old_string": old, "new_string": new}
        self.call("Edit", args, result, text=text)

    def multi_edit(self, path: str, edits: Sequence[tuple[str, str]], *, text: str = "") -> None:
        body = "\n".join(self.files[path])
        report = []
        for k, (old, new) in enumerate(edits, start=1):
            assert body.count(old) == 1, (path, old)
            body = body.replace(old, new)
            report.append(f'{k}. Replaced "{_clip(old)}" with "{_clip(new)}"')
        self.files[path] = body.split("\n")
        result = f"Applied {len(edits)} edits to {self.abs(path)}:\n" + "\n".join(report)
        args = {
            "file_path": self.abs(path),
            "edits": [{"old_string": o, "new_string": n} for o, n in edits],
        }
        self.call("MultiEdit", args, result, text=text)

    def write(self, path: str, content: str, *, text: str = "") -> None:
        self.files[path] = content.split("\n")
        args = {"file_path": self.abs(path), "content": content}
        self.call("Write", args, f"File created successfully at: {self.abs(path)}", text=text)

    def grep(
        self, pattern: str, path: str, hits: Sequence[str], *, text: str = "", filler: bool = False
    ) -> None:
        args = {"pattern": pattern, "path": self.abs(path), "output_mode": "content", "-n": True}
        result = "\n".join(hits) if hits else "No matches found"
        self.call("Grep", args, result, text=text, filler=filler)

    def glob(self, pattern: str, paths: Sequence[str], *, text: str = "") -> None:
        self.call("Glob", {"pattern": pattern}, "\n".join(self.abs(p) for p in paths), text=text)

    def todos(self, items: Sequence[tuple[str, str, str]], *, text: str = "") -> None:
        todos = [{"content": c, "status": st, "activeForm": a} for c, a, st in items]
        self.call("TodoWrite", {"todos": todos}, TODO_OK, text=text)

    def task(self, description: str, prompt: str, report: str, *, text: str = "") -> None:
        args = {"description": description, "prompt": prompt, "subagent_type": "general-purpose"}
        self.call("Task", args, report, text=text)


def _clip(s: str) -> str:
    first = s.split("\n", 1)[0]
    return first if len(first) <= 60 else first[:57] + "..."


# --- files -------------------------------------------------------------------------------------


def pyproject(pkg: str, python: str) -> str:
    return "\n".join(
        [
            "[project]",
            f'name = "{pkg}"',
            'version = "2.14.0"',
            f'requires-python = ">={python}"',
            "dependencies = [",
            '    "fastapi>=0.110",',
            '    "sqlalchemy>=2.0",',
            '    "alembic>=1.13",',
            '    "httpx>=0.27",',
            '    "celery>=5.3",',
            '    "pydantic-settings>=2.2",',
            '    "structlog>=24.1",',
            "]",
            "",
            "[project.optional-dependencies]",
            'dev = ["pytest>=8", "pytest-cov", "respx", "ruff", "mypy", "freezegun"]',
            "",
            "[project.scripts]",
            f'{pkg}-worker = "{pkg}.delivery.worker:main"',
            "",
            "[tool.ruff]",
            'target-version = "py3' + python.split(".")[1] + '"',
            "line-length = 100",
            "",
            "[tool.ruff.lint]",
            'select = ["E", "F", "I", "UP", "B"]',
            "",
            "[tool.mypy]",
            f'python_version = "{python}"',
            "strict = true",
            f'packages = ["{pkg}"]',
            "",
            "[tool.pytest.ini_options]",
            'testpaths = ["tests"]',
            'addopts = "-ra"',
        ]
    )


def worker_py(rng: random.Random, pkg: str, send_fn: str) -> list[str]:
    head = [
        '"""Pulls pending deliveries and sends them to the partner endpoints."""',
        "",
        "from __future__ import annotations",
        "",
        "import structlog",
        "from sqlalchemy import select",
        "from sqlalchemy.orm import Session",
        "",
        f"from {pkg}.delivery.transport import {send_fn}",
        f"from {pkg}.models import Delivery, DeliveryStatus",
        "",
        "log = structlog.get_logger(__name__)",
        "",
        "",
        "class DeliveryWorker:",
        "    def __init__(self, session: Session, batch_size: int = 50) -> None:",
        "        self.session = session",
        "        self.batch_size = batch_size",
        "",
        "    def run_once(self) -> int:",
        "        pending = self.session.scalars(",
        "            select(Delivery)",
        "            .where(Delivery.status == DeliveryStatus.PENDING)",
        "            .limit(self.batch_size)",
        "            .with_for_update(skip_locked=True)",
        "        ).all()",
        "        for delivery in pending:",
        "            self.deliver(delivery)",
        "        self.session.commit()",
        "        return len(pending)",
        "",
        "    def deliver(self, delivery: Delivery) -> None:",
        "        try:",
        f"            response = {send_fn}(delivery.endpoint, delivery.body, delivery.secret)",
        "        except Exception:",
        '            log.exception("delivery.failed", delivery_id=delivery.id)',
        "            delivery.status = DeliveryStatus.FAILED",
        "            return",
        "        delivery.status = DeliveryStatus.SENT",
        "        delivery.response_code = response.status_code",
        "",
    ]
    return head + code_file(rng, "py", rng.randint(90, 120)).split("\n")


def transport_py(rng: random.Random, send_fn: str) -> list[str]:
    head = [
        '"""Signed HTTP delivery to partner endpoints."""',
        "",
        "from __future__ import annotations",
        "",
        "import hashlib",
        "import hmac",
        "import time",
        "",
        "import httpx",
        "",
        "_client = httpx.Client(timeout=httpx.Timeout(10.0, connect=3.0))",
        "",
        "",
        "def sign(body: bytes, secret: str, ts: int) -> str:",
        '    mac = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256)',
        "    return mac.hexdigest()",
        "",
        "",
        f"def {send_fn}(url: str, body: bytes, secret: str) -> httpx.Response:",
        "    ts = int(time.time())",
        "    headers = {",
        '        "Content-Type": "application/json",',
        '        "X-Signature": sign(body, secret, ts),',
        '        "X-Timestamp": str(ts),',
        "    }",
        "    response = _client.post(url, content=body, headers=headers)",
        "    response.raise_for_status()",
        "    return response",
        "",
    ]
    return head + code_file(rng, "py", rng.randint(40, 60)).split("\n")


def models_py(rng: random.Random) -> list[str]:
    head = [
        "from __future__ import annotations",
        "",
        "import enum",
        "from datetime import datetime",
        "",
        "from sqlalchemy import DateTime, Enum, ForeignKey, Integer, LargeBinary, String",
        "from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column",
        "",
        "",
        "class Base(DeclarativeBase):",
        "    pass",
        "",
        "",
        "class DeliveryStatus(enum.Enum):",
        '    PENDING = "pending"',
        '    SENT = "sent"',
        '    FAILED = "failed"',
        "",
        "",
        "class Delivery(Base):",
        '    __tablename__ = "deliveries"',
        "",
        "    id: Mapped[int] = mapped_column(Integer, primary_key=True)",
        '    partner_id: Mapped[int] = mapped_column(ForeignKey("partners.id"), index=True)',
        "    endpoint: Mapped[str] = mapped_column(String(2048))",
        "    body: Mapped[bytes] = mapped_column(LargeBinary)",
        "    secret: Mapped[str] = mapped_column(String(128))",
        "    status: Mapped[DeliveryStatus] = mapped_column(Enum(DeliveryStatus), index=True)",
        "    response_code: Mapped[int | None] = mapped_column(Integer, nullable=True)",
        "    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))",
        "",
    ]
    return head + code_file(rng, "py", rng.randint(30, 45)).split("\n")


def settings_py() -> list[str]:
    return [
        "from pydantic_settings import BaseSettings, SettingsConfigDict",
        "",
        "",
        "class Settings(BaseSettings):",
        '    model_config = SettingsConfigDict(env_prefix="HOOKS_")',
        "",
        '    database_url: str = "postgresql+psycopg://localhost/hooks"',
        "    worker_batch_size: int = 50",
        "    request_timeout: float = 10.0",
        "",
        "",
        "settings = Settings()",
    ]


def sweeper_py(pkg: str) -> list[str]:
    return [
        '"""Periodic housekeeping, run every minute by the scheduler."""',
        "",
        "from __future__ import annotations",
        "",
        "from datetime import datetime, timedelta, timezone",
        "",
        "from sqlalchemy import delete",
        "from sqlalchemy.orm import Session",
        "",
        f"from {pkg}.models import Delivery, DeliveryStatus",
        "",
        "",
        "def purge_sent(session: Session, keep_days: int = 30) -> int:",
        "    cutoff = datetime.now(timezone.utc) - timedelta(days=keep_days)",
        "    result = session.execute(",
        "        delete(Delivery).where(",
        "            Delivery.status == DeliveryStatus.SENT, Delivery.created_at < cutoff",
        "        )",
        "    )",
        "    return result.rowcount or 0",
    ]


def cli_py(rng: random.Random, pkg: str) -> list[str]:
    head = [
        '"""Operator CLI."""',
        "",
        "import argparse",
        "",
        f"from {pkg}.db import session_scope",
        f"from {pkg}.models import Delivery",
        "",
        "",
        "def show(args: argparse.Namespace) -> None:",
        "    with session_scope() as session:",
        "        d = session.get(Delivery, args.id)",
        '        print(f"{d.id}\\t{d.status.value}\\t{d.response_code}\\t{d.endpoint}")',
        "",
        "",
        "def main() -> None:",
        f'    parser = argparse.ArgumentParser(prog="{pkg}ctl")',
        "    sub = parser.add_subparsers(required=True)",
        '    deliveries = sub.add_parser("deliveries")',
        "    dsub = deliveries.add_subparsers(required=True)",
        '    p = dsub.add_parser("show")',
        '    p.add_argument("id", type=int)',
        "    p.set_defaults(func=show)",
        "    args = parser.parse_args()",
        "    args.func(args)",
        "",
    ]
    return head + code_file(rng, "py", rng.randint(25, 35)).split("\n")


# --- tool outputs --------------------------------------------------------------------------------


def pytest_run(
    rng: random.Random,
    root: str,
    files: dict[str, int],
    failing: dict[str, tuple[str, list[str]]],
) -> tuple[str, str]:
    """(pytest's output, the summary's counts as printed). `failing`: node id → (short
    reason, traceback lines)."""
    total = sum(files.values())
    lines = [
        "=" * 29 + " test session starts " + "=" * 30,
        "platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0",
        f"rootdir: {root}",
        "configfile: pyproject.toml",
        "plugins: anyio-4.6.2, cov-5.0.0, respx-0.21.1",
        f"collected {total} items",
        "",
    ]
    done = 0
    for path, n in files.items():
        marks = "".join(
            "F" if any(f.startswith(f"{path}::") for f in failing) and k == 0 else "."
            for k in range(n)
        )
        done += n
        lines.append(f"{path} {marks}".ljust(73) + f"[{100 * done // total:>3}%]")
    failed = len(failing)
    counts = f"{failed} failed, {total - failed} passed" if failed else f"{total} passed"
    if failing:
        lines += ["", "=" * 35 + " FAILURES " + "=" * 35]
        for node, (_, trace) in failing.items():
            name = node.split("::")[-1]
            pad = max(1, (78 - len(name) - 2) // 2)
            lines += ["_" * pad + f" {name} " + "_" * pad, "", *trace, ""]
        lines.append("=" * 27 + " short test summary info " + "=" * 28)
        lines += [f"FAILED {node} - {reason}" for node, (reason, _) in failing.items()]
    secs = f"{rng.randint(3, 9)}.{rng.randint(10, 99)}s"
    tail = f" {counts} in {secs} "
    pad = (80 - len(tail)) // 2
    lines.append("=" * pad + tail + "=" * pad)
    return "\n".join(lines), counts


def git_log(rng: random.Random, n: int) -> str:
    subjects = [
        "partners: paginate the registry listing",
        "api: return 409 on duplicate endpoint",
        "billing: round invoice totals half-even",
        "deps: bump httpx",
        "ci: cache the uv dir",
        "health: report queue depth",
        "api: accept ISO week in the stats route",
        "core: move pagination helpers out of api",
        "tests: freeze time in the stats tests",
        "ratelimit: per-partner buckets",
        "serializers: drop the legacy v1 envelope",
        "docs: partner onboarding",
        "billing: store currency per invoice line",
    ]
    return "\n".join(f"{hexid(rng)} {rng.choice(subjects)}" for _ in range(n))


# --- the story -----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"{FAMILY}:{seed}")
    pkg = rng.choice(PACKAGES)
    table = rng.choice(TABLES)
    send_fn = rng.choice(SEND_FNS)
    sweep_fn = rng.choice(SWEEP_FNS)
    python = rng.choice(PYTHONS)
    first, raised, settled = rng.choice(ATTEMPTS)
    delay_old, delay_new = rng.choice(DELAYS)
    roundtrip = rng.choice(ROUNDTRIP_TESTS)
    backoff_test = rng.choice(BACKOFF_TESTS)
    rev_secret = hexid(rng, 12)
    rev_prev = hexid(rng, 12)
    rev_new = hexid(rng, 12)
    ctl = f"{pkg}ctl"
    root = f"/home/dev/src/{pkg}"
    c = ClaudeCode(rng, root)
    s = c.s
    # Claude Code's tool JSON is denser in tokens than the filler's estimate: aim higher.
    target_chars = tokens * CHARS_PER_TOKEN * 1.15
    others = list(rng.sample(OTHER_MODULES, len(OTHER_MODULES)))
    step = 0

    def fill(fraction: float) -> None:
        nonlocal step
        while s.chars < fraction * target_chars:
            step += 1
            kind = step % 4
            if kind == 1 and others:
                path = f"{pkg}/{others.pop()}"
                c.files[path] = code_file(rng, "py", rng.randint(140, 190)).split("\n")
                c.read(
                    path,
                    filler=True,
                    text=rng.choice(
                        ["", "Checking how this module handles it.", "Reading this one as well."]
                    ),
                )
            elif kind == 2:
                c.bash(
                    "docker compose logs worker --no-log-prefix --tail 70",
                    rng.choice(["Recent worker logs", "Show worker log tail"]),
                    log_lines(rng, rng.randint(55, 70)),
                    filler=True,
                )
            elif kind == 3:
                c.bash("git log --oneline -n 45", "Recent history", git_log(rng, 45), filler=True)
            else:
                term = rng.choice(["session.commit", "def ", "select(", "log.info"])
                known = [
                    p
                    for p in c.files
                    if p.startswith(f"{pkg}/") and any(p.endswith(o) for o in OTHER_MODULES)
                ] or [f"{pkg}/api/deps.py"]
                hits = []
                for _ in range(rng.randint(14, 26)):
                    f = rng.choice(known)
                    lines = c.files.get(f) or [term]
                    k = rng.randrange(len(lines))
                    hits.append(f"{c.abs(f)}:{k + 1}:{lines[k] or term}")
                c.grep(term, pkg, hits, filler=True)

    # 1. the task
    s.user(
        f"In {root}: failed webhook deliveries currently just get marked failed and that's "
        "it. I want them retried with exponential backoff — start the delay at "
        f"{delay_old} and double it each time, give up after {first} attempts — and I want "
        "every attempt recorded (status code, error, timestamp) in the database so support "
        "can see what happened to a delivery.\n\n"
        "A few things to keep in mind: no new packages, and in particular not tenacity — "
        "we've been burned by it before. The payload bodies must never end up in logs, "
        "they're full of customer PII. And prod still runs "
        f"Python {python}, so the code has to work there."
    )
    s.fact("constraint", "no new packages, not tenacity", ("tenacity",))
    s.fact("constraint", "payload bodies never logged (PII)", ("PII",))
    s.fact("constraint", f"code must run on Python {python}", (f"Python {python}",))

    items = {
        "mig": ("Add the alembic migration for attempts", "Adding the attempts migration"),
        "retry": (
            "Retry failed deliveries with exponential backoff",
            "Adding retry with backoff",
        ),
        "record": ("Record every attempt from the worker", "Recording attempts in the worker"),
        "cli": ("Show the attempts in the CLI's `deliveries show`", "Extending the CLI output"),
        "log": ("Add a CHANGELOG entry", "Writing the CHANGELOG entry"),
        "docs": (
            "Document the retry schedule in docs/webhooks.md",
            "Documenting the retry schedule",
        ),
    }

    def todo(state: dict[str, str]) -> list[tuple[str, str, str]]:
        return [(*items[k], st) for k, st in state.items()]

    c.todos(
        todo(
            {
                "mig": "pending",
                "retry": "pending",
                "record": "pending",
                "cli": "pending",
                "log": "pending",
            }
        ),
        text="I'll start by planning this out.",
    )
    s.fact("todo", "CHANGELOG entry", ("CHANGELOG",))
    c.task(
        "Find webhook send path",
        f"In {root}, find where outbound webhook HTTP requests are actually sent, which code "
        "calls that, and whether any retry logic already exists anywhere (even unused). "
        "Report file paths and function names. Do not modify anything.",
        f"The outbound request is made in `{root}/{pkg}/delivery/transport.py` by "
        f"`{send_fn}(url, body, secret)`: it signs the body with HMAC-SHA256 (X-Signature, "
        "X-Timestamp headers), posts it with a module-level httpx.Client (10s timeout, 3s "
        "connect) and calls `raise_for_status()`, so any 4xx/5xx surfaces as "
        "httpx.HTTPStatusError and timeouts as httpx.TimeoutException.\n\n"
        f"Its only caller is `DeliveryWorker.deliver()` in `{root}/{pkg}/delivery/worker.py`, "
        "which catches every exception, logs `delivery.failed` with the delivery id and sets "
        "the status to FAILED. No retry happens anywhere on that path.\n\n"
        f"There is an older, unused module `{root}/{pkg}/delivery/legacy_retry.py` with a "
        "`retry_forever()` decorator (a `while True` loop with a fixed sleep). Nothing imports "
        "it; `git log` shows it was last touched two years ago.\n\n"
        f"A Celery app is defined in `{root}/{pkg}/tasks.py` (broker from `CELERY_BROKER_URL`) "
        "with one task, `send_digest_email`. The scheduler runs "
        f"`{root}/{pkg}/sweeper.py::purge_sent` every minute.",
        text="",
    )
    s.fact("identifier", "the function that sends webhooks", (send_fn,))
    c.files["pyproject.toml"] = pyproject(pkg, python).split("\n")
    c.read("pyproject.toml")
    s.fact("file_read", "read pyproject.toml", ("pyproject.toml",), required=False)
    c.files[f"{pkg}/delivery/worker.py"] = worker_py(rng, pkg, send_fn)
    c.files[f"{pkg}/delivery/transport.py"] = transport_py(rng, send_fn)
    c.files[f"{pkg}/models.py"] = models_py(rng)
    c.files[f"{pkg}/settings.py"] = settings_py()
    c.files[f"{pkg}/sweeper.py"] = sweeper_py(pkg)
    c.read(f"{pkg}/delivery/worker.py")
    fill(0.1)
    c.read(f"{pkg}/models.py")
    c.glob(
        "migrations/versions/*.py",
        [
            f"migrations/versions/{hexid(rng, 12)}_initial.py",
            f"migrations/versions/{rev_secret}_deliveries_signing_secret.py",
            f"migrations/versions/{rev_prev}_partners_rate_limit.py",
        ],
    )
    fill(0.16)

    # 2. first plan: a backoff helper, an in-process timer, attempts in a JSON column
    c.todos(
        todo(
            {
                "mig": "in_progress",
                "retry": "pending",
                "record": "pending",
                "cli": "pending",
                "log": "pending",
            }
        ),
        text="Here's the shape I have in mind. The delays come from a small pure helper in "
        f"{pkg}/delivery/backoff.py. The retry itself is scheduled in-process with a "
        "threading.Timer from `deliver()` — no broker involved. The attempts go into a new "
        "`attempts` JSON column on `deliveries`, one object appended per try.",
    )
    backoff = "\n".join(
        [
            '"""Retry schedule for webhook deliveries."""',
            "",
            "import math",
            "import random",
            "from typing import Optional",
            "",
            f"MAX_ATTEMPTS = {first}",
            f"BASE_DELAY = {delay_old.split()[0]}.0",
            "MAX_DELAY = 3600.0",
            "",
            "",
            "def delay_for(attempt: int, rng: Optional[random.Random] = None) -> float:",
            '    """Seconds to wait before `attempt` (1-based), with full jitter."""',
            "    ceiling = min(MAX_DELAY, BASE_DELAY * attempt)",
            "    return rng.uniform(0, ceiling) if rng is not None else ceiling",
            "",
            "",
            "def should_retry(attempt: int, status_code: int | None) -> bool:",
            "    if attempt >= MAX_ATTEMPTS:",
            "        return False",
            "    return status_code is None or status_code >= 500 or status_code == 429",
        ]
    )
    c.write(f"{pkg}/delivery/backoff.py", backoff)
    s.fact("file_created", "backoff helper", (f"{pkg}/delivery/backoff.py",))
    c.grep(
        "celery|Celery",
        pkg,
        [
            f"{c.abs(pkg + '/tasks.py')}:3:from celery import Celery",
            f'{c.abs(pkg + "/tasks.py")}:7:app = Celery("{pkg}", '
            "broker=settings.celery_broker_url)",
            f"{c.abs(pkg + '/tasks.py')}:10:@app.task(acks_late=True)",
        ],
        text="Before writing the timer, checking what the Celery app can already do.",
    )
    s.say(
        "Changing course on the scheduling: a threading.Timer lives and dies with the worker "
        "process, so every deploy or OOM kill would silently drop the retries in flight. The "
        f"Celery app in {pkg}/tasks.py is already deployed, so I'll schedule each retry as a "
        "Celery task with apply_async(countdown=delay) instead — acks_late is on, so a retry "
        "survives a worker restart."
    )
    c.edit(
        f"{pkg}/models.py",
        "    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))\n",
        "    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))\n"
        "    attempts: Mapped[list[dict]] = mapped_column(JSON, default=list)\n",
        text="Now the JSON column on the model.",
    )
    s.say(
        "On second look the JSON column is wrong too. Every attempt would rewrite the whole "
        "`attempts` array on the delivery row, under the same row lock the worker's "
        "`with_for_update(skip_locked=True)` takes, and support's question \"which deliveries "
        f"to this partner got 5xx yesterday\" can't use an index on it. A separate `{table}` "
        "table is append-only, indexable on (delivery_id, attempted_at) and cheap to purge. "
        "Replacing the column with a model of its own."
    )
    c.edit(
        f"{pkg}/models.py",
        "    attempts: Mapped[list[dict]] = mapped_column(JSON, default=list)\n",
        "\n\n"
        f"class {''.join(p.title() for p in table.split('_'))}(Base):\n"
        f'    __tablename__ = "{table}"\n\n'
        "    id: Mapped[int] = mapped_column(Integer, primary_key=True)\n"
        '    delivery_id: Mapped[int] = mapped_column(ForeignKey("deliveries.id", '
        'ondelete="CASCADE"))\n'
        "    attempt: Mapped[int] = mapped_column(Integer)\n"
        "    status_code: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)\n"
        "    error: Mapped[Optional[str]] = mapped_column(String(500), nullable=True)\n"
        "    attempted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))\n",
    )
    s.fact("file_modified", "models.py", (f"{pkg}/models.py",))
    s.fact(
        "decision",
        f"attempts in a separate {table} table",
        (table,),
        stale=("`attempts` JSON column",),
    )
    mig_path = f"migrations/versions/{rev_new}_add_{table}.py"
    migration = "\n".join(
        [
            f'"""add {table}',
            "",
            f"Revision ID: {rev_new}",
            f"Revises: {rev_prev}",
            '"""',
            "",
            "import sqlalchemy as sa",
            "from alembic import op",
            "",
            f'revision = "{rev_new}"',
            f'down_revision = "{rev_prev}"',
            "",
            "",
            "def upgrade() -> None:",
            "    op.create_table(",
            f'        "{table}",',
            '        sa.Column("id", sa.Integer(), primary_key=True),',
            '        sa.Column("delivery_id", sa.Integer(), sa.ForeignKey("deliveries.id", '
            'ondelete="CASCADE"), nullable=False),',
            '        sa.Column("attempt", sa.Integer(), nullable=False),',
            '        sa.Column("status_code", sa.Integer(), nullable=True),',
            '        sa.Column("error", sa.String(500), nullable=True),',
            '        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),',
            "    )",
            f'    op.create_index("ix_{table}_delivery_attempted", "{table}", '
            '["delivery_id", "attempted_at"])',
            '    op.add_column("deliveries", sa.Column("next_attempt_at", '
            "sa.DateTime(timezone=True), nullable=True))",
            '    op.create_index("ix_deliveries_next_attempt_at", "deliveries", '
            '["next_attempt_at"])',
            "",
            "",
            "def downgrade() -> None:",
            '    op.drop_index("ix_deliveries_next_attempt_at", "deliveries")',
            '    op.drop_column("deliveries", "next_attempt_at")',
            f'    op.drop_index("ix_{table}_delivery_attempted", "{table}")',
            f'    op.drop_table("{table}")',
        ]
    )
    c.write(mig_path, migration, text="And the migration.")
    s.fact("file_created", "the migration", (mig_path,))
    c.bash(
        "alembic upgrade head && alembic current",
        "Apply migrations to the dev database",
        f"INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
        f"INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
        f"INFO  [alembic.runtime.migration] Running upgrade {rev_prev} -> {rev_new}, add "
        f"{table}\n{rev_new} (head)",
    )
    fill(0.3)

    # 3. the worker, the first test run
    c.todos(
        todo(
            {
                "mig": "completed",
                "retry": "in_progress",
                "record": "pending",
                "cli": "pending",
                "log": "pending",
            }
        ),
    )
    s.fact("todo", "migration written (done)", (items["mig"][0],), required=False)
    c.multi_edit(
        f"{pkg}/delivery/worker.py",
        [
            (
                f"from {pkg}.delivery.transport import {send_fn}\n",
                f"from {pkg}.delivery import backoff\n"
                f"from {pkg}.delivery.transport import {send_fn}\n"
                f"from {pkg}.tasks import app",
            ),
            (
                '            log.exception("delivery.failed", delivery_id=delivery.id)\n'
                "            delivery.status = DeliveryStatus.FAILED\n"
                "            return",
                "            delivery.attempt_count += 1\n"
                "            if backoff.should_retry(delivery.attempt_count, None):\n"
                "                delay = backoff.delay_for(delivery.attempt_count)\n"
                '                app.send_task("deliver", args=[delivery.id], countdown=delay)\n'
                "                return\n"
                '            log.warning("delivery.gave_up", delivery_id=delivery.id)\n'
                "            delivery.status = DeliveryStatus.FAILED\n"
                "            return",
            ),
        ],
        text="Wiring the retry into the worker.",
    )
    s.fact("file_modified", "worker.py", (f"{pkg}/delivery/worker.py",))
    tests = "\n".join(
        [
            f"from {pkg}.delivery import backoff",
            "",
            "",
            f"def {backoff_test}() -> None:",
            "    delays = [backoff.delay_for(n) for n in range(1, 5)]",
            "    b = backoff.BASE_DELAY",
            "    assert delays == [b, b * 2, b * 4, b * 8]",
            "",
            "",
            "def test_gives_up_at_the_limit() -> None:",
            "    assert not backoff.should_retry(backoff.MAX_ATTEMPTS, 503)",
            "",
            "",
            "def test_client_errors_are_not_retried() -> None:",
            "    assert not backoff.should_retry(1, 404)",
        ]
    )
    c.write("tests/test_backoff.py", tests)
    b0 = int(delay_old.split()[0])
    files = {
        "tests/test_api_partners.py": 14,
        "tests/test_backoff.py": 3,
        "tests/test_billing.py": 11,
        "tests/test_health.py": 3,
        "tests/migrations/test_roundtrip.py": 2,
        "tests/test_signing.py": 6,
        "tests/test_sweeper.py": 5,
        "tests/test_worker.py": 12,
    }
    out1, counts1 = pytest_run(
        rng,
        root,
        files,
        {
            f"tests/test_backoff.py::{backoff_test}": (
                f"assert [{b0}.0, {2 * b0}.0, {3 * b0}.0, {4 * b0}.0] == [{b0}.0, {2 * b0}.0, "
                f"{4 * b0}.0, {8 * b0}.0]",
                [
                    f"    def {backoff_test}() -> None:",
                    "        delays = [backoff.delay_for(n) for n in range(1, 5)]",
                    "        b = backoff.BASE_DELAY",
                    ">       assert delays == [b, b * 2, b * 4, b * 8]",
                    f"E       assert [{b0}.0, {2 * b0}.0, {3 * b0}.0, {4 * b0}.0] == [{b0}.0, "
                    f"{2 * b0}.0, {4 * b0}.0, {8 * b0}.0]",
                    "E         ",
                    f"E         At index 2 diff: {3 * b0}.0 != {4 * b0}.0",
                    "E         Use -v to get more diff",
                    "",
                    "tests/test_backoff.py:8: AssertionError",
                ],
            ),
            "tests/test_worker.py::test_failed_delivery_is_marked_failed": (
                "AttributeError: 'Delivery' object has no attribute 'attempt_count'",
                [
                    "    def test_failed_delivery_is_marked_failed(worker, delivery, respx_mock):",
                    "        respx_mock.post(delivery.endpoint).respond(503)",
                    ">       worker.deliver(delivery)",
                    "",
                    "tests/test_worker.py:41: ",
                    "_ " * 39,
                    f"{pkg}/delivery/worker.py:37: in deliver",
                    "    delivery.attempt_count += 1",
                    "E   AttributeError: 'Delivery' object has no attribute 'attempt_count'",
                ],
            ),
            "tests/test_sweeper.py::test_purge_keeps_recent": (
                "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such table: "
                f"{table}",
                [
                    "    def test_purge_keeps_recent(session, make_delivery):",
                    ">       make_delivery(status=DeliveryStatus.SENT, age_days=3)",
                    f"E       sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such "
                    f"table: {table}",
                    "",
                    "tests/conftest.py:58: OperationalError",
                ],
            ),
        },
    )
    c.bash("pytest", "Run the test suite", out1, code=1, timeout=300000)
    s.fact("error_resolved", "backoff test failed, fixed", (backoff_test,), required=False)
    fill(0.4)

    # 4. the user changes the limit and the delay; the fixes
    s.say(
        "Three failures. The backoff test is a real bug: `delay_for` multiplies by the attempt "
        "number instead of doubling. The worker test fails because `Delivery` has no "
        "`attempt_count` yet, and the sweeper test because the test database is built from "
        f"the models and conftest doesn't import the new {table} model. Fixing all three."
    )
    s.user(
        f"Before you do — {first} attempts is too few, some partners have outages that last "
        f"an hour. Make it {raised} attempts. And {delay_old} is pointlessly aggressive as a "
        f"first delay; start at {delay_new}."
    )
    b1 = int(delay_new.split()[0])
    c.multi_edit(
        f"{pkg}/delivery/backoff.py",
        [
            (f"MAX_ATTEMPTS = {first}", f"MAX_ATTEMPTS = {raised}"),
            (f"BASE_DELAY = {b0}.0", f"BASE_DELAY = {b1}.0"),
            (
                "    ceiling = min(MAX_DELAY, BASE_DELAY * attempt)",
                "    ceiling = min(MAX_DELAY, BASE_DELAY * 2 ** (attempt - 1))",
            ),
        ],
        text=f"{raised} attempts, starting at {delay_new} and doubling — and the doubling fix "
        "itself.",
    )
    s.fact("changed_value", "first retry delay", (delay_new,), stale=(delay_old,))
    s.fact("file_modified", "backoff.py", (f"{pkg}/delivery/backoff.py",))
    c.edit(
        f"{pkg}/models.py",
        "    response_code: Mapped[int | None] = mapped_column(Integer, nullable=True)\n",
        "    response_code: Mapped[int | None] = mapped_column(Integer, nullable=True)\n"
        "    attempt_count: Mapped[int] = mapped_column(Integer, default=0)\n",
    )
    c.edit(
        f"{pkg}/models.py",
        "    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))\n",
        "    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))\n"
        "    next_attempt_at: Mapped[Optional[datetime]] = mapped_column(\n"
        "        DateTime(timezone=True), nullable=True, index=True\n    )\n",
        text="The migration adds `next_attempt_at` too; mirroring it (and `attempt_count`) on "
        "the model.",
    )
    c.bash(
        "ruff check . && mypy",
        "Lint and typecheck",
        f"{pkg}/delivery/backoff.py:3:8: F401 [*] `math` imported but unused\n"
        '  |\n1 | """Retry schedule for webhook deliveries."""\n2 |\n'
        "3 | import math\n  |        ^^^^ F401\n"
        "4 | import random\n  |\n  = help: Remove unused import: `math`\n\n"
        "Found 1 error.\n[*] 1 fixable with the `--fix` option.",
        code=1,
    )
    s.fact("error_resolved", "ruff F401 unused import", ("F401",), required=False)
    c.edit(
        f"{pkg}/delivery/backoff.py",
        "import math\nimport random\n",
        "import random\n",
        text="A leftover import from the first draft.",
    )
    c.bash(
        "ruff check . && mypy",
        "Lint and typecheck",
        "All checks passed!\n"
        f"{pkg}/delivery/backoff.py:16: error: X | Y syntax for unions requires Python 3.10  "
        "[syntax]\n"
        f"Found 1 error in 1 file (checked {rng.randint(38, 52)} source files)",
        code=1,
    )
    s.fact(
        "error_resolved", "mypy union syntax error", ("X | Y syntax for unions",), required=False
    )
    c.edit(
        f"{pkg}/delivery/backoff.py",
        "def should_retry(attempt: int, status_code: int | None) -> bool:",
        "def should_retry(attempt: int, status_code: Optional[int]) -> bool:",
        text=f"mypy targets Python {python} here, where `int | None` in an annotation is "
        "evaluated at import time and raises TypeError. Back to Optional, like the rest of "
        "the module.",
    )
    c.bash(
        "ruff check . && mypy",
        "Lint and typecheck",
        f"All checks passed!\nSuccess: no issues found in {rng.randint(38, 52)} source files",
    )
    fill(0.5)

    # 5. the CLI: an edit rejected, the user's interrupt
    c.todos(
        todo(
            {
                "mig": "completed",
                "retry": "completed",
                "record": "completed",
                "cli": "in_progress",
                "log": "pending",
            }
        ),
        text="Retries and recording are in. On to the CLI.",
    )
    s.fact("todo", "retry with backoff (done)", (items["retry"][0],), required=False)
    c.files[f"{pkg}/cli.py"] = cli_py(rng, pkg)
    c.read(f"{pkg}/cli.py", limit=25)
    c.call(
        "Edit",
        {
            "file_path": c.abs(f"{pkg}/cli.py"),
            "old_string": '        print(f"{d.id}\\t{d.status.value}\\t{d.response_code}\\t'
            '{d.endpoint}")',
            "new_string": '        print(f"{d.id}\\t{d.status.value}\\t{d.response_code}\\t'
            '{d.endpoint}\\t{d.attempt_count}")',
        },
        REJECTED,
        error=True,
    )
    s.user(
        "[Request interrupted by user for tool use]\n"
        f"actually, stop — don't touch the CLI. Ops have runbooks that parse `{ctl}` output "
        "column by column and I'm not chasing that down this week. Take it off your list; "
        "support can query the attempts table directly for now."
    )
    s.fact("constraint", f"leave the {ctl} CLI alone", (ctl,))
    c.todos(
        todo({"mig": "completed", "retry": "completed", "record": "completed", "log": "pending"}),
        text="Understood — the CLI stays as it is; I've dropped that item.",
    )
    s.fact("todo", "CLI item dropped", (items["cli"][0],), required=False)
    fill(0.58)

    # 6. the second reversal: no Celery; the limit changes again
    s.user(
        "One more thing I should have said earlier: the Celery worker is being "
        "decommissioned next sprint, we're getting rid of RabbitMQ. So please don't build "
        f"the retries on it. Also, thinking about it more, {raised} attempts with doubling "
        f"is over a day of retrying — let's settle on {settled} attempts."
    )
    s.fact(
        "changed_value",
        "attempt limit",
        (f"{settled} attempts",),
        stale=(f"{first} attempts", f"{raised} attempts"),
    )
    s.say(
        "Then the retry can't ride on a broker at all. The migration already adds "
        "`deliveries.next_attempt_at`, so: on failure the worker stores the due time there "
        f"and leaves the delivery pending, and a new `{sweep_fn}()` in the sweeper (which the "
        "scheduler already runs every minute) flips due deliveries back to the worker's "
        "queue. It survives restarts for the same reason the Celery version did — the state "
        "is in Postgres — and needs nothing new. The legacy_retry module the subagent found is "
        "dead weight next to this, so I'm removing it too."
    )
    s.fact(
        "decision",
        "retries scheduled via next_attempt_at and the sweeper",
        (sweep_fn,),
        stale=("threading.Timer", "apply_async(countdown"),
    )
    c.edit(f"{pkg}/delivery/backoff.py", f"MAX_ATTEMPTS = {raised}", f"MAX_ATTEMPTS = {settled}")
    c.edit(
        f"{pkg}/delivery/worker.py",
        "                delay = backoff.delay_for(delivery.attempt_count)\n"
        '                app.send_task("deliver", args=[delivery.id], countdown=delay)\n'
        "                return\n",
        "                delay = backoff.delay_for(delivery.attempt_count)\n"
        "                delivery.next_attempt_at = utcnow() + timedelta(seconds=delay)\n"
        "                return\n",
    )
    c.edit(
        f"{pkg}/delivery/worker.py",
        "from " + pkg + ".tasks import app",
        "from datetime import timedelta\n\nfrom " + pkg + ".clock import utcnow",
    )
    c.edit(
        f"{pkg}/sweeper.py",
        "    return result.rowcount or 0",
        "    return result.rowcount or 0\n\n\n"
        f"def {sweep_fn}(session: Session) -> int:\n"
        '    """Hand deliveries whose retry is due back to the worker."""\n'
        "    now = datetime.now(timezone.utc)\n"
        "    result = session.execute(\n"
        "        update(Delivery)\n"
        "        .where(Delivery.next_attempt_at <= now)\n"
        "        .values(next_attempt_at=None, status=DeliveryStatus.PENDING)\n"
        "    )\n"
        "    return result.rowcount or 0",
    )
    s.fact("file_modified", "sweeper.py", (f"{pkg}/sweeper.py",))
    c.bash(
        f"git rm {pkg}/delivery/legacy_retry.py",
        "Remove the unused legacy retry module",
        f"rm '{pkg}/delivery/legacy_retry.py'",
    )
    s.fact("file_deleted", "legacy_retry.py", (f"{pkg}/delivery/legacy_retry.py",))
    fill(0.68)

    # 7. a to-do added, a question answered
    s.user(
        "Good. Add a to-do to write the retry schedule up in docs/webhooks.md — partners keep "
        "asking. And a question while you're in there: which migration added `signing_secret` "
        "to deliveries? I need it for the incident write-up."
    )
    c.todos(
        todo(
            {
                "mig": "completed",
                "retry": "completed",
                "record": "completed",
                "log": "pending",
                "docs": "pending",
            }
        ),
    )
    s.fact("todo", "document the retry schedule", ("docs/webhooks.md",))
    c.grep(
        "signing_secret",
        "migrations/versions",
        [
            f"{c.abs(f'migrations/versions/{rev_secret}_deliveries_signing_secret.py')}:3:"
            f"Revision ID: {rev_secret}",
            f"{c.abs(f'migrations/versions/{rev_secret}_deliveries_signing_secret.py')}:19:"
            '    op.add_column("deliveries", sa.Column("signing_secret", sa.String(128)))',
            f"{c.abs(f'migrations/versions/{rev_secret}_deliveries_signing_secret.py')}:24:"
            '    op.drop_column("deliveries", "signing_secret")',
        ],
    )
    s.say(
        f"It's revision {rev_secret} (`deliveries_signing_secret`): its upgrade adds "
        "`signing_secret` as a String(128) and its downgrade drops it. The model maps it as "
        "`secret`, which is why a grep for the column name in the app code finds nothing."
    )
    s.fact("identifier", "migration that added signing_secret", (rev_secret,))
    fill(0.78)

    # 8. the full run: one still red
    files2 = {**files, "tests/test_backoff.py": 3, "tests/test_sweeper.py": 7}
    out2, counts2 = pytest_run(
        rng,
        root,
        files2,
        {
            f"tests/migrations/test_roundtrip.py::{roundtrip}": (
                "NotImplementedError: No support for ALTER of constraints in SQLite dialect. "
                "Please refer to the batch mode feature which allows for SQLite migrations using "
                "a copy-and-move strategy.",
                [
                    f"    def {roundtrip}(alembic_runner):",
                    '        alembic_runner.migrate_up_to("heads")',
                    ">       alembic_runner.migrate_down_one()",
                    "",
                    "tests/migrations/test_roundtrip.py:17: ",
                    "_ " * 39,
                    f"{mig_path}:31: in downgrade",
                    '    op.drop_column("deliveries", "next_attempt_at")',
                    "E   NotImplementedError: No support for ALTER of constraints in SQLite "
                    "dialect. "
                    "Please refer to the batch mode feature which allows for SQLite migrations "
                    "using "
                    "a copy-and-move strategy.",
                ],
            ),
        },
    )
    c.bash(
        "pytest",
        "Run the full test suite",
        out2,
        code=1,
        timeout=300000,
        text="Full suite, with the sweeper tests added.",
    )
    s.fact("test_status", "final pytest run", (counts2,), stale=(counts1,))
    s.fact("error_open", "migration round-trip test fails on SQLite", (roundtrip,))
    s.say(
        "Everything passes except the migration round-trip test, which runs on SQLite: "
        "dropping the indexed column in downgrade needs alembic's batch mode there. Wrapping "
        "the downgrade in `op.batch_alter_table` would fix the test but makes SQLite copy the "
        "whole deliveries table — harmless in tests, and Postgres ignores it — but it changes "
        "what runs in prod's rollback, so I'd rather you decide."
    )
    fill(0.97)

    # 9. the wrap-up: no fact restated
    closing = rng.choice(
        [
            "Leaving it here until you've had a look",
            "I'll stop at this point and wait for your call",
            "Pausing now; over to you",
        ]
    )
    s.say(f"{closing}.")
    s.fact("last_message", "the final answer", (closing,))
    session = finish_session(s, family=FAMILY, seed=seed)
    return flag_errors(session, c.errors)
