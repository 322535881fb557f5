"""Realistic tool output for generated sessions: Python source, pytest logs, pip, git, JSON.

Pure functions of their arguments and a `random.Random`; no I/O, no clock, no global random.
The shapes copy what the real tools print (pytest's banner and summary lines, `cat -n`
numbering, pip's progress lines, git's porcelain) so a compactor is measured on the text it
will really meet. This module must never invent a fact: everything distinctive it prints
comes from its arguments, so the generator stays in charge of where facts are planted.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any


def fill(template: str, slots: Mapping[str, object]) -> str:
    """Substitute `$name` slots; a missing slot is a bug in the caller, so it raises."""
    return Template(template).substitute({k: str(v) for k, v in slots.items()})


def hex_id(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def timestamp(rng: random.Random) -> str:
    """An ISO-8601 UTC timestamp in spring 2024, without touching the clock."""
    month = rng.randint(3, 6)
    return (
        f"2024-{month:02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
        f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"
    )


# --- Python source -------------------------------------------------------------------------

MODULE_HEADER = '''"""$doc"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

$imports
logger = logging.getLogger(__name__)
T = TypeVar("T")

_LOCK = threading.Lock()
_ENTRIES: dict[str, tuple[Any, float]] = {}
_HANDLERS: dict[str, Callable[[Mapping[str, Any]], None]] = {}

$const = $n
BASE_URL = "https://api.internal.example/$pkg"
'''

MODULE_DOCS = (
    "$Noun helpers: loading, validation and formatting.",
    "Everything that talks to the upstream $noun API.",
    "Glue between the $noun models and storage.",
    "Small utilities shared by the $noun code paths.",
    "$Noun processing: the parts the scheduler calls.",
)

CLASS_TEMPLATE = """@dataclass(frozen=True)
class $Cls:
    id: int
    $f1: str
    $f2: int
    created_at: datetime
    tags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "$f1": self.$f1,
            "$f2": self.$f2,
            "created_at": self.created_at.isoformat(),
            "tags": list(self.tags),
        }
"""

FUNCTION_TEMPLATES: tuple[str, ...] = (
    '''def $fn(${noun}_id: str, *, timeout: float = $n.0) -> dict[str, Any]:
    """Return the raw $noun record for ``${noun}_id``."""
    url = f"{BASE_URL}/${noun}s/{${noun}_id}"
    response = _session().get(url, timeout=timeout)
    if response.status_code == 404:
        raise LookupError(${noun}_id)
    response.raise_for_status()
    payload = response.json()
    logger.debug("fetched $noun %s", ${noun}_id)
    return payload
''',
    '''def $fn(items: Iterable[T], size: int = $n) -> Iterator[list[T]]:
    """Yield ``items`` in lists of at most ``size``."""
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
''',
    '''def $fn(raw: Mapping[str, Any]) -> $Cls:
    """Build a ``$Cls`` from an untrusted mapping."""
    missing = [key for key in ("$f1", "$f2") if key not in raw]
    if missing:
        raise ValueError(f"missing fields: {', '.join(missing)}")
    return $Cls(
        id=int(raw["id"]),
        $f1=str(raw["$f1"]).strip(),
        $f2=int(raw["$f2"]),
        created_at=datetime.fromisoformat(raw["created_at"]),
        tags=tuple(raw.get("tags", ())),
    )
''',
    """def $fn(key: str) -> $Cls | None:
    with _LOCK:
        entry = _ENTRIES.get(key)
        if entry is None:
            return None
        value, stored_at = entry
        if time.monotonic() - stored_at > $const:
            del _ENTRIES[key]
            return None
        return value
""",
    """def $fn(conn: Any, ${noun}_id: int) -> list[$Cls]:
    rows = conn.execute(
        "SELECT id, $f1, $f2, created_at FROM $table WHERE ${noun}_id = ? ORDER BY id",
        (${noun}_id,),
    ).fetchall()
    logger.info("loaded %d rows from $table", len(rows))
    return [$Cls(*row) for row in rows]
""",
    """def $fn(call: Callable[[], T], attempts: int = $n) -> T:
    last_error: Exception | None = None
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except (ConnectionError, OSError) as exc:
            last_error = exc
            delay = min(2**attempt, 30)
            logger.warning("attempt %d failed: %s; sleeping %ss", attempt, exc, delay)
            time.sleep(delay)
    assert last_error is not None
    raise last_error
""",
    '''def $fn(rows: Sequence[$Cls]) -> str:
    """Render ``rows`` as an aligned text table."""
    if not rows:
        return "(no ${noun}s)"
    width = max(len(row.$f1) for row in rows)
    lines = [f"{'$f1'.ljust(width)}  $f2"]
    for row in rows:
        lines.append(f"{row.$f1.ljust(width)}  {row.$f2:>8}")
    return "\\n".join(lines)
''',
    """def $fn(event: Mapping[str, Any]) -> None:
    kind = event.get("type")
    handler = _HANDLERS.get(kind)
    if handler is None:
        logger.warning("no handler for event type %r", kind)
        return
    try:
        handler(event)
    except Exception:
        logger.exception("handler %s failed", handler.__name__)
        raise
""",
    """def $fn(current: dict[str, Any], incoming: dict[str, Any]) -> dict[str, Any]:
    merged = dict(current)
    for key, value in incoming.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = $fn(merged[key], value)
        elif value is not None:
            merged[key] = value
    return merged
""",
    """def $fn(${noun}_ids: Sequence[str]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for group in $other(list(${noun}_ids), $n):
        for ${noun}_id in group:
            results.append(_fetch_one(${noun}_id))
    logger.info("resolved %d of %d ${noun}s", len(results), len(${noun}_ids))
    return results
""",
    '''def $fn(values: Sequence[float]) -> dict[str, float]:
    """Summary statistics for a $noun metric series."""
    if not values:
        return {"count": 0.0, "mean": 0.0, "p95": 0.0}
    ordered = sorted(values)
    index = max(0, int(len(ordered) * 0.95) - 1)
    return {
        "count": float(len(ordered)),
        "mean": sum(ordered) / len(ordered),
        "p95": ordered[index],
    }
''',
    '''def $fn(path: str) -> list[dict[str, str]]:
    """Read a $noun CSV export, skipping blank lines."""
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return [row for row in reader if any(value.strip() for value in row.values())]
''',
)

TEST_CASES: tuple[str, ...] = (
    "handles_empty_input", "round_trips", "rejects_missing_fields", "uses_default_limit",
    "retries_on_oserror", "preserves_order", "handles_unicode", "is_idempotent",
    "skips_blank_rows", "respects_size", "logs_failures", "returns_none_when_expired",
)  # fmt: skip

TEST_TEMPLATES: tuple[str, ...] = (
    """def test_${fn}_${case}() -> None:
    assert list($fn([])) == []
""",
    """def test_${fn}_${case}(make_$noun: Any) -> None:
    $noun = make_$noun($f1="alpha")
    assert $fn($noun) is not None
""",
    """def test_${fn}_${case}() -> None:
    with pytest.raises(ValueError):
        $fn({})
""",
    """def test_${fn}_${case}(fake_transport: Any) -> None:
    fake_transport.add("GET", "/${noun}s/42", json={"id": 42, "$f1": "x", "$f2": 3})
    result = $fn("42")
    assert result["id"] == 42
""",
    """def test_${fn}_${case}(caplog: pytest.LogCaptureFixture) -> None:
    $fn({"type": "unknown"})
    assert "no handler" in caplog.text
""",
)


@dataclass(frozen=True)
class SourceFile:
    """A generated module or test file, kept so repeated reads and greps agree."""

    path: str
    text: str
    functions: tuple[str, ...]
    tests: tuple[str, ...] = ()


def python_module(
    rng: random.Random,
    *,
    path: str,
    pkg: str,
    noun: str,
    functions: Sequence[str],
    imports: Sequence[tuple[str, str]],
    fields: tuple[str, str],
    table: str,
    const: str,
) -> SourceFile:
    """A plausible module: header, one dataclass, then one function per name."""
    cls = camel(noun)
    other = imports[0][1] if imports else "chunked"
    slots = {
        "pkg": pkg,
        "noun": noun,
        "Noun": noun.replace("_", " ").capitalize(),
        "Cls": cls,
        "f1": fields[0],
        "f2": fields[1],
        "table": table,
        "const": const,
        "other": other,
    }
    header = fill(
        MODULE_HEADER,
        {
            **slots,
            "doc": fill(rng.choice(MODULE_DOCS), slots),
            "imports": "".join(f"from .{m} import {f}\n" for m, f in imports),
            "n": rng.choice((3, 5, 30, 60, 100, 250, 500)),
        },
    )
    blocks = [header, fill(CLASS_TEMPLATE, slots)]
    for name in functions:
        template = rng.choice(FUNCTION_TEMPLATES)
        blocks.append(fill(template, {**slots, "fn": name, "n": rng.choice((3, 5, 10, 50))}))
    return SourceFile(path=path, text="\n\n".join(blocks), functions=tuple(functions))


def tests_for_module(
    rng: random.Random,
    *,
    path: str,
    pkg: str,
    module: str,
    noun: str,
    functions: Sequence[str],
    fields: tuple[str, str],
    per_function: int,
) -> SourceFile:
    """A pytest module exercising `functions`; its test names feed the pytest logs."""
    names: list[str] = []
    blocks = [
        f'"""Tests for {pkg}.{module}."""\n\nfrom __future__ import annotations\n\n'
        f"from typing import Any\n\nimport pytest\n\n"
        f"from {pkg}.{module} import {', '.join(functions)}\n"
    ]
    for fn in functions:
        for case in rng.sample(TEST_CASES, per_function):
            names.append(f"test_{fn}_{case}")
            blocks.append(
                fill(
                    rng.choice(TEST_TEMPLATES),
                    {"fn": fn, "case": case, "noun": noun, "f1": fields[0], "f2": fields[1]},
                )
            )
    return SourceFile(
        path=path, text="\n\n".join(blocks), functions=tuple(functions), tests=tuple(names)
    )


def numbered(text: str) -> str:
    """`cat -n` style, the way most agent harnesses return a file."""
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return 1


# --- pytest ----------------------------------------------------------------------------------


def _banner(title: str, fill_char: str = "=") -> str:
    return f" {title} ".center(80, fill_char) if title else fill_char * 80


def _header(rng: random.Random, pkg: str, collected: int) -> list[str]:
    return [
        _banner("test session starts"),
        f"platform linux -- Python 3.11.{rng.choice((4, 8, 9))}, pytest-8.2.2, pluggy-1.5.0",
        f"rootdir: /home/dev/{pkg}",
        "configfile: pyproject.toml",
        "plugins: anyio-4.4.0, cov-5.0.0, mock-3.14.0",
        f"collected {collected} items",
        "",
    ]


def _duration(rng: random.Random) -> str:
    return f"{rng.uniform(0.4, 9.5):.2f}s"


def _result_line(failed: int, passed: int, duration: str) -> str:
    parts = ([f"{failed} failed"] if failed else []) + [f"{passed} passed"]
    return f"{', '.join(parts)} in {duration}"


@dataclass(frozen=True)
class Failure:
    """One failing test: where it fails, with what exception line, and that line's probe."""

    test_path: str
    test_name: str
    module_path: str
    function: str
    raising: str
    error_line: str
    probe: str


def pytest_log(
    rng: random.Random,
    *,
    pkg: str,
    files: Sequence[SourceFile],
    style: str = "default",
    failure: Failure | None = None,
    durations: int = 0,
) -> str:
    """A pytest run over `files`; with `failure`, that test fails with a full traceback."""
    total = sum(len(f.tests) for f in files)
    lines = [] if style == "quiet" else _header(rng, pkg, total)
    done = 0
    quiet_marks: list[str] = []
    for f in files:
        marks = "".join(
            "F" if failure and f.path == failure.test_path and t == failure.test_name else "."
            for t in f.tests
        )
        if style == "verbose":
            for t, mark in zip(f.tests, marks, strict=True):
                done += 1
                status = "FAILED" if mark == "F" else "PASSED"
                left = f"{f.path}::{t} {status}"
                lines.append(f"{left:<73} [{done * 100 // total:>3}%]")
        elif style == "quiet":
            quiet_marks.append(marks)
        else:
            done += len(f.tests)
            left = f"{f.path} {marks}"
            lines.append(f"{left:<73} [{done * 100 // total:>3}%]")
    if style == "quiet":
        joined = "".join(quiet_marks)
        for start in range(0, len(joined), 72):
            chunk = joined[start : start + 72]
            lines.append(f"{chunk:<73} [{min(start + 72, total) * 100 // total:>3}%]")
    if failure is not None:
        lines += _failure_section(rng, pkg, failure)
    if durations:
        slowest = [(rng.uniform(0.05, 1.9), f.path, t) for f in files for t in f.tests]
        slowest.sort(reverse=True)
        lines += ["", _banner(f"slowest {durations} durations")]
        lines += [f"{d:.2f}s call     {p}::{t}" for d, p, t in slowest[:durations]]
    failed = 1 if failure else 0
    summary = _result_line(failed, total - failed, _duration(rng))
    if style == "quiet":
        lines.append(summary)
    else:
        lines += ["", _banner(summary)] if not failure else [_banner(summary)]
    return "\n".join(lines)


def _failure_section(rng: random.Random, pkg: str, failure: Failure) -> list[str]:
    exc_name = failure.error_line.split(":", 1)[0].rsplit(".", 1)[-1]
    test_line = rng.randint(14, 160)
    module_line = rng.randint(20, 240)
    return [
        "",
        _banner("FAILURES"),
        _banner(failure.test_name, "_"),
        "",
        f"    def {failure.test_name}() -> None:",
        f"        payload = build_payload(seed={rng.randint(1, 99)})",
        f">       result = {failure.function}(payload)",
        "",
        f"{failure.test_path}:{test_line}: ",
        "_ " * 39 + "_",
        "",
        f"raw = {{'id': {rng.randint(100, 999)}, 'status': 'pending'}}",
        "",
        f"    def {failure.function}(raw):",
        "        logger.debug('processing %s', raw.get('id'))",
        f">       {failure.raising}",
        f"E       {failure.error_line}",
        "",
        f"{failure.module_path}:{module_line}: {exc_name}",
        _banner("Captured log call", "-"),
        f"DEBUG    {pkg}:{failure.module_path.rsplit('/', 1)[-1]}:{module_line - 2} processing "
        f"{rng.randint(100, 999)}",
        _banner("short test summary info"),
        f"FAILED {failure.test_path}::{failure.test_name} - {failure.error_line}",
    ]


def script_traceback(
    rng: random.Random, *, pkg: str, script: str, module_path: str, function: str,
    raising: str, error_line: str, log_lines: int,
) -> str:  # fmt: skip
    """What a crashing `python scripts/x.py` prints: some log lines, then the traceback."""
    logs = [
        f"2024-06-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d},{rng.randint(0, 999):03d} INFO {pkg}.{script}: "
        f"{rng.choice(('scanning', 'loading', 'checking', 'queueing'))} "
        f"chunk {i + 1} ({rng.randint(200, 900)} rows)"
        for i in range(log_lines)
    ]
    return "\n".join(
        [
            *logs,
            "Traceback (most recent call last):",
            f'  File "/home/dev/{pkg}/scripts/{script}.py", line {rng.randint(40, 90)}, in '
            "<module>",
            "    main()",
            f'  File "/home/dev/{pkg}/scripts/{script}.py", line {rng.randint(20, 39)}, in main',
            f"    result = {function}(load_input(args.source))",
            f'  File "/home/dev/{pkg}/{module_path}", line {rng.randint(20, 240)}, in {function}',
            f"    {raising}",
            error_line,
        ]
    )


# --- other tools -----------------------------------------------------------------------------


def grep_hits(files: Sequence[SourceFile], pattern: str, limit: int) -> str:
    hits = [
        f"{f.path}:{i}:{line}"
        for f in files
        for i, line in enumerate(f.text.splitlines(), 1)
        if pattern in line
    ]
    return "\n".join(hits[:limit]) if hits else "No matches found."


def listing(path: str, entries: Sequence[str]) -> str:
    return "\n".join([f"{path.rstrip('/')}/", *(f"  {e}" for e in sorted(entries))])


def pip_install(rng: random.Random, deps: Sequence[tuple[str, str]]) -> str:
    lines: list[str] = []
    for name, version in deps:
        wheel = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        size = rng.randint(12, 480)
        lines += [
            f"Collecting {name}",
            f"  Downloading {wheel}.metadata ({rng.uniform(1.5, 9.9):.1f} kB)",
            f"Downloading {wheel} ({size} kB)",
            f"   {'━' * 40} {size}.0/{size}.0 kB {rng.uniform(0.8, 9.9):.1f} MB/s eta 0:00:00",
        ]
    lines.append("Installing collected packages: " + ", ".join(n for n, _ in deps))
    lines.append("Successfully installed " + " ".join(f"{n}-{v}" for n, v in deps))
    return "\n".join(lines)


def json_reply(
    rng: random.Random,
    *,
    noun: str,
    fields: Sequence[str],
    count: int,
    extra: Mapping[str, Any] | None = None,
    record_extra: Mapping[str, Any] | None = None,
) -> str:
    """A paginated JSON API response, pretty-printed as `curl ... | python -m json.tool` would."""
    prefix = noun[:3]
    records = []
    for i in range(count):
        record: dict[str, Any] = {
            "id": f"{prefix}_{hex_id(rng, 10)}",
            "object": noun,
            "status": rng.choice(("active", "pending", "failed", "archived")),
            fields[0]: rng.choice(("alpha", "bravo", "charlie", "delta", "echo")),
            fields[1]: rng.randint(1, 9999),
            "created_at": timestamp(rng),
            "updated_at": timestamp(rng),
            "metadata": {"source": rng.choice(("api", "import", "backfill")), "v": 2},
        }
        if record_extra and i == 0:
            record.update(record_extra)
        records.append(record)
    body: dict[str, Any] = {
        "data": records,
        "has_more": rng.random() < 0.6,
        "next_cursor": hex_id(rng, 24),
    }
    body.update(extra or {})
    return json.dumps(body, indent=2)


COMMIT_SUBJECTS: tuple[str, ...] = (
    "Fix flaky test in $module", "Bump dev dependencies", "Add type hints to $module",
    "Refactor $module helpers", "Handle empty pages from upstream", "Log upstream status codes",
    "Speed up $noun fixtures", "Document local setup", "Merge branch 'main' into feature",
    "Tidy imports", "Drop unused helper in $module",
)  # fmt: skip


def git_log(rng: random.Random, slots: Mapping[str, str], count: int) -> str:
    lines = []
    for _ in range(count):
        subject = fill(rng.choice(COMMIT_SUBJECTS), slots)
        lines.append(f"{hex_id(rng, 7)} {subject} (#{rng.randint(100, 999)})")
    return "\n".join(lines)


def git_status(branch: str, modified: Sequence[str]) -> str:
    if not modified:
        return f"On branch {branch}\nnothing to commit, working tree clean"
    return "\n".join(
        [
            f"On branch {branch}",
            "Changes not staged for commit:",
            '  (use "git add <file>..." to update what will be committed)',
            '  (use "git restore <file>..." to discard changes in working directory)',
            *(f"\tmodified:   {p}" for p in modified),
            "",
            'no changes added to commit (use "git add" and/or "git commit -a")',
        ]
    )


def git_diff(rng: random.Random, path: str, source: str, new: str, old: str) -> str:
    """A unified diff of one recorded replacement; `source` already contains `new`."""
    lines = source.splitlines()
    new_lines, old_lines = new.splitlines(), old.splitlines()
    at = line_of(source, new_lines[0])
    before = lines[max(0, at - 4) : at - 1]
    after = lines[at - 1 + len(new_lines) : at + 2 + len(new_lines)]
    start = max(1, at - len(before))
    return "\n".join(
        [
            f"diff --git a/{path} b/{path}",
            f"index {hex_id(rng, 7)}..{hex_id(rng, 7)} 100644",
            f"--- a/{path}",
            f"+++ b/{path}",
            f"@@ -{start},{len(before) + len(old_lines) + len(after)} "
            f"+{start},{len(before) + len(new_lines) + len(after)} @@",
            *(f" {x}" for x in before),
            *(f"-{x}" for x in old_lines),
            *(f"+{x}" for x in new_lines),
            *(f" {x}" for x in after),
        ]
    )


def command_output(rng: random.Random, kind: str, slots: Mapping[str, str]) -> str:
    """Output for the distinctive commands of `_corpus.COMMANDS`, by renderer name."""
    pkg = slots["pkg"]
    if kind == "ruff_fixed":
        n = rng.randint(2, 6)
        return f"Found {n} errors ({n} fixed, 0 remaining)."
    if kind == "mypy_ok":
        return "Success: no issues found in 1 source file"
    if kind == "script_lines":
        count = rng.randint(4, 12)
        rows = [
            f"2024-06-{rng.randint(1, 28):02d} 0{rng.randint(0, 9)}:{rng.randint(10, 59)}:"
            f"{rng.randint(10, 59)} INFO would update {rng.randint(2, 90)} rows in "
            f"{slots['table']} (chunk {i + 1})"
            for i in range(count)
        ]
        return "\n".join([*rows, "dry run: no changes written"])
    if kind == "compose_up":
        svc = slots["svc"]
        return (
            f"[+] Running 2/2\n ✔ Network {pkg}_default    Created\n"
            f" ✔ Container {pkg}-{svc}-1  Started"
        )
    if kind == "make_target":
        return (
            f"pytest -q -m integration tests/integration\n{'.' * rng.randint(6, 20)}"
            f"{' ' * 20}[100%]\n{rng.randint(6, 20)} passed in {_duration(rng)}"
        )
    if kind == "stash":
        return f"Saved working directory and index state On {slots['branch']}: {slots['stashmsg']}"
    if kind == "tox":
        env = slots["toxenv"]
        return (
            f"{env}: install_deps> python -I -m pip install -e .[dev]\n"
            f"{env}: commands[0]> pytest -q\n{'.' * rng.randint(20, 60)}\n"
            f"{env}: OK ({rng.uniform(8, 40):.2f}s)\n  congratulations :)"
        )
    if kind == "sqlite_schema":
        table = slots["table"]
        return (
            f"CREATE TABLE {table} (\n  id INTEGER PRIMARY KEY,\n  {slots['f1']} TEXT NOT NULL,"
            f"\n  {slots['f2']} INTEGER NOT NULL DEFAULT 0,\n  created_at TEXT NOT NULL\n);\n"
            f"CREATE INDEX ix_{table}_created_at ON {table}(created_at);"
        )
    raise ValueError(f"no renderer named {kind!r}")
