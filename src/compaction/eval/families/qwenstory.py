"""qwenstory-style: a Qwen Code session in native function calls, with a story of its own.

Qwen Code (QwenLM/qwen-code, a CLI agent) works on a Flutter app through its core tools:
`run_shell_command` {command, is_background, description}, answered with its
`Command: … / Directory: (root) / Output: … / Error: (none) / Exit Code: N / Signal: (none) /
Background PIDs: (none) / Process Group PGID: N` block; `read_file` {absolute_path, offset?,
limit?} (a part of a file opens with "Showing lines a-b of N total lines."); `write_file`
{file_path, content} ("Successfully created and wrote to new file: …." / "Successfully
overwrote file: …."); `edit` {file_path, old_string, new_string} ("The file: … has been
updated. Showing lines a-b of N from the edited file: …"); `grep_search` {pattern, path,
glob} ("Found N matches for pattern … ---\\nFile: …\\nL12: …"); `glob` {pattern, path};
`list_directory` {path} ("Directory listing for …:"); `save_memory` {fact, scope}; and
`todo_write` {todos: [{id, content, status}]}, status pending / in_progress / completed, the
whole list each time, answered "Todos have been modified successfully. …" with the list's JSON
in a system reminder. A dropped item is simply left out of the next list. Paths are absolute.

The story: a Flutter field-inspection app gets an offline outbox for inspection reports. The
user's first message sets how many reports go in one upload and how many days synced reports
stay on the device, and three rules in prose (a state-management package not to add, the
Flutter version CI is pinned to, the header every upload must carry). The assistant edits the
v1 sync service, is sent to the live one and puts the old file back by a reverse edit; the
outbox storage goes from a SharedPreferences list to a Hive box to a sqflite table; the batch
size changes twice (the second time without naming it), the retention once; the user asks for
a formatting rule to be remembered (`save_memory`), forbids a local package, drops a to-do,
adds one, and asks which commit moved photos to the multipart endpoint (answered from
`git log -S`). A flutter test failure and a `dart analyze` error are fixed, the old
pending-uploads cache is removed with `git rm`, and the last `flutter test` still has one
failure. The final message names no fact.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

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

FAMILY = "qwenstory-style"

_SYSTEM = "\n".join(
    (
        "You are Qwen Code, an interactive CLI agent developed by Alibaba Group, specializing "
        "in software engineering tasks. Your primary goal is to help users safely and "
        "efficiently, adhering strictly to the following instructions and utilizing your "
        "available tools.",
        "",
        "# Core Mandates",
        "",
        "- **Conventions:** Rigorously adhere to existing project conventions when reading or "
        "modifying code. Analyze surrounding code, tests, and configuration first.",
        "- **Libraries/Frameworks:** NEVER assume a library/framework is available or "
        "appropriate. Verify its established usage within the project (check imports, "
        "configuration files like 'pubspec.yaml', 'package.json', 'Cargo.toml') before "
        "employing it.",
        "- **Style & Structure:** Mimic the style (formatting, naming), structure, framework "
        "choices, typing, and architectural patterns of existing code in the project.",
        "- **Comments:** Add code comments sparingly. Focus on *why* something is done, "
        "especially for complex logic, rather than *what* is done.",
        "- **Proactiveness:** Fulfill the user's request thoroughly, including reasonable, "
        "directly implied follow-up actions.",
        "- **Path Construction:** Before using any file system tool (e.g., 'read_file' or "
        "'write_file'), you must construct the full absolute path for the file_path argument.",
        "- **Do Not revert changes:** Do not revert changes to the codebase unless asked to "
        "do so by the user.",
        "",
        "# Task Management",
        "You have access to the todo_write tool to help you manage and plan tasks. Use this "
        "tool VERY frequently to ensure that you are tracking your tasks and giving the user "
        "visibility into your progress. Mark todos as completed as soon as you are done with "
        "a task. Do not batch up multiple tasks before marking them as completed.",
        "",
        "# Primary Workflows",
        "",
        "## Software Engineering Tasks",
        "1. **Plan:** Create an initial plan based on your existing knowledge and any "
        "immediately obvious context. Use the 'todo_write' tool to capture this rough plan.",
        "2. **Implement:** Begin implementing the plan while gathering additional context as "
        "needed. Use 'grep_search', 'glob', 'read_file' and 'list_directory' strategically.",
        "3. **Adapt:** As you discover new information or encounter obstacles, update your "
        "plan and todos accordingly.",
        "4. **Verify (Tests):** If applicable and feasible, verify the changes using the "
        "project's testing procedures.",
        "5. **Verify (Standards):** VERY IMPORTANT: After making code changes, execute the "
        "project-specific build, linting and type-checking commands that you have identified "
        "for this project.",
        "",
        "# Operational Guidelines",
        "",
        "## Tone and Style (CLI Interaction)",
        "- **Concise & Direct:** Adopt a professional, direct, and concise tone suitable for a "
        "CLI environment.",
        "- **Minimal Output:** Aim for fewer than 3 lines of text output (excluding tool use/"
        "code generation) per response whenever practical.",
        "",
        "## Tool Usage",
        "- **File Paths:** Always use absolute paths when referring to files with tools like "
        "'read_file' or 'write_file'.",
        "- **Background Processes:** Use background processes (via `is_background: true`) for "
        "commands that are unlikely to stop on their own, e.g. `flutter run`.",
        "- **Remembering Facts:** Use the 'save_memory' tool to remember specific, "
        "*user-related* facts or preferences when the user explicitly asks.",
        "",
        "# Git Repository",
        "- The current working (project) directory is being managed by a git repository.",
        "- Never push changes to a remote repository without being asked explicitly by the user.",
        "",
        "# Final Reminder",
        "Your core function is efficient and safe assistance. Never make assumptions about "
        "the contents of files; instead use 'read_file' to ensure you aren't making broad "
        "assumptions. You are an agent - please keep going until the user's query is "
        "completely resolved.",
        "",
        "This is the Qwen Code. We are setting up the context for our chat.",
        "Today's date is {date}.",
        "My operating system is: linux",
        "I'm currently working in the directory: {root}",
    )
)

_APPS = ("siteproof", "hatchlog", "trailmark", "gridwalk", "plumbline", "quaycheck")
_ORGS = ("northfield-labs", "kettle-works", "brightyard", "oakline-dev")
_PACKAGES = ("riverpod", "get_it", "mobx", "flutter_bloc")
_FLUTTER = ("3.19", "3.22", "3.24")
_HEADERS = ("X-Report-Key", "X-Client-Report-Id", "X-Submission-Uuid", "X-Dedupe-Key")
_TABLES = ("outbox_rows", "upload_outbox", "sync_outbox", "outbound_reports")
_LOCAL = ("ui_kit", "brand_tokens", "atlas_widgets", "inkwell_ds")
_TASKS = ("flush-outbox", "outbox-drain", "report-flush", "outbox-sweep")
_ICONS = ("sync icon", "cloud icon", "upload icon")
_USERS = ("dev", "mara", "tomek", "ines")

_GROUPS = ("OutboxStore", "ReportSyncService", "ReportsApi", "OutboxFlushTask", "SyncBadge")
_TEST_NAMES = (
    "takes the oldest rows first",
    "keeps a row after a failed upload",
    "marks rows synced after a 2xx",
    "stops at the batch size",
    "backs off after a 503",
    "skips rows already in flight",
    "survives an app restart",
    "reports the pending count",
    "ignores rows of another account",
    "retries a timed out request once",
    "clears the in-flight flag on cancel",
    "orders rows by created_at",
)


class _Qwen:
    """Qwen Code's core tools, as they appear in the chat."""

    def __init__(self, s: Session, root: str) -> None:
        self.s = s
        self.root = root
        self.rng = s.rng

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def shell(self, command: str, description: str, output: str, *, code: int = 0,
              text: str = "", filler: bool = False) -> None:  # fmt: skip
        args = {"command": command, "is_background": False, "description": description}
        result = "\n".join([
            f"Command: {command}",
            "Directory: (root)",
            f"Output: {output or '(empty)'}",
            "Error: (none)",
            f"Exit Code: {code}",
            "Signal: (none)",
            "Background PIDs: (none)",
            f"Process Group PGID: {self.rng.randint(20000, 98000)}",
        ])  # fmt: skip
        self.s.call("run_shell_command", args, result, text=text, filler=filler)

    def read(self, rel: str, content: str, *, offset: int | None = None, limit: int | None = None,
             text: str = "", filler: bool = False) -> None:  # fmt: skip
        args: dict[str, object] = {"absolute_path": self.abs(rel)}
        if offset is not None and limit is not None:
            args["offset"], args["limit"] = offset, limit
            lines = content.split("\n")
            total = offset + len(lines) + self.rng.randint(20, 90)
            content = (
                f"Showing lines {offset + 1}-{offset + len(lines)} of {total} total lines.\n\n"
                f"---\n\n{content}"
            )
        self.s.call("read_file", args, content, text=text, filler=filler)

    def write(self, rel: str, content: str, *, new: bool = True, text: str = "") -> None:
        path = self.abs(rel)
        result = (
            f"Successfully created and wrote to new file: {path}."
            if new
            else f"Successfully overwrote file: {path}."
        )
        self.s.call("write_file", {"file_path": path, "content": content}, result, text=text)

    def edit(self, rel: str, old: str, new: str, *, text: str = "") -> None:
        path = self.abs(rel)
        lines = new.split("\n")
        start = self.rng.randint(8, 60)
        end = start + len(lines) - 1
        total = end + self.rng.randint(10, 80)
        result = (
            f"The file: {path} has been updated. Showing lines {start}-{end} of {total} from "
            f"the edited file:\n\n---\n\n{new}"
        )
        args = {"file_path": path, "old_string": old, "new_string": new}
        self.s.call("edit", args, result, text=text)

    def grep(self, pattern: str, hits: Sequence[tuple[str, int, str]], *,
             glob: str = "lib/**/*.dart", text: str = "") -> None:  # fmt: skip
        """A search of the project; `hits` are (path from the root, line, text)."""
        files: dict[str, list[tuple[int, str]]] = {}
        for path, line, content in hits:
            files.setdefault(path, []).append((line, content))
        n = len(hits)
        out = [
            f'Found {n} {"match" if n == 1 else "matches"} for pattern "{pattern}" in path '
            f'"{self.root}" (filter: "{glob}"):',
            "---",
        ]
        for path, found in files.items():
            out.append(f"File: {path}")
            out += [f"L{line}: {content.strip()}" for line, content in sorted(found)]
            out.append("---")
        args = {"pattern": pattern, "path": self.root, "glob": glob}
        self.s.call("grep_search", args, "\n".join(out), text=text)

    def glob(self, pattern: str, paths: Sequence[str], *, filler: bool = False) -> None:
        result = (
            f'Found {len(paths)} file(s) matching "{pattern}" within {self.root}, sorted by '
            "modification time (newest first):\n" + "\n".join(self.abs(p) for p in paths)
        )
        self.s.call("glob", {"pattern": pattern, "path": self.root}, result, filler=filler)

    def ls(self, rel: str, dirs: Sequence[str], names: Sequence[str], *,
           filler: bool = False) -> None:  # fmt: skip
        path = self.abs(rel)
        body = [f"[DIR] {d}" for d in dirs] + list(names)
        result = f"Directory listing for {path}:\n" + "\n".join(body)
        self.s.call("list_directory", {"path": path}, result, filler=filler)

    def remember(self, fact: str, *, text: str = "") -> None:
        result = f'Okay, I\'ve remembered that in project memory: "{fact}"'
        self.s.call("save_memory", {"fact": fact, "scope": "project"}, result, text=text)

    def todo(self, items: Sequence[tuple[str, str, str]], *, text: str = "") -> None:
        """Items (id, content, status): the whole list, as Qwen Code's todo_write takes it."""
        todos = [{"id": i, "content": c, "status": st} for i, c, st in items]
        result = (
            "Todos have been modified successfully. Ensure that you continue to use the todo "
            "list to track your progress. Please proceed with the current tasks if applicable"
            "\n\n<system-reminder>\nYour todo list has changed. DO NOT mention this explicitly "
            "to the user. Here are the latest contents of your todo list:\n\n"
            f"{json.dumps(todos, separators=(',', ':'))}. Continue on with the tasks at hand "
            "if applicable.\n</system-reminder>"
        )
        self.s.call("todo_write", {"todos": todos}, result, text=text)


def _flutter_test(
    rng: random.Random,
    root: str,
    test_file: str,
    passed: int,
    failures: Sequence[tuple[str, int, str, str]],
) -> str:
    """flutter test's expanded output: failures are (name, line, expected, actual)."""
    names = [f"{g} {t}" for g in _GROUPS for t in _TEST_NAMES]
    rng.shuffle(names)
    failing = {name for name, *_ in failures}
    shown = [n for n in names if n not in failing][:passed]
    order: list[str | tuple[str, int, str, str]] = list(shown)
    for failure in failures:
        order.insert(rng.randint(1, len(order)), failure)
    clock = rng.randint(1, 3)
    out = [f"00:{clock:02d} +0: loading {root}/{test_file}"]
    ok = bad = 0
    for entry in order:
        clock += rng.random() < 0.3
        stamp = f"00:{clock:02d}"
        if isinstance(entry, str):
            out.append(f"{stamp} +{ok}{f' -{bad}' if bad else ''}: {entry}")
            ok += 1
            continue
        name, line, expected, actual = entry
        out.append(f"{stamp} +{ok}{f' -{bad}' if bad else ''}: {name}")
        bad += 1
        out += [
            f"{stamp} +{ok} -{bad}: {name} [E]",
            f"  Expected: {expected}",
            f"    Actual: {actual}",
            "",
            "  package:matcher                                     expect",
            "  package:flutter_test/src/widget_tester.dart 474:18  expect",
            f"  {test_file} {line}:7                 main.<fn>.<fn>",
            "",
        ]
    end = f"00:{clock + 1:02d}"
    out.append(f"{end} +{ok} -{bad}: Some tests failed." if bad else
               f"{end} +{ok}: All tests passed!")  # fmt: skip
    return "\n".join(out)


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"qwenstory-{seed}")
    app = rng.choice(_APPS)
    org = rng.choice(_ORGS)
    pkg = rng.choice(_PACKAGES)
    fver = rng.choice(_FLUTTER)
    header = rng.choice(_HEADERS)
    table = rng.choice(_TABLES)
    local = rng.choice(_LOCAL)
    task = rng.choice(_TASKS)
    icon = rng.choice(_ICONS)
    ll = rng.choice((100, 120))
    root = f"/home/{rng.choice(_USERS)}/work/{app}"
    a0, a1, a2 = rng.randint(10, 14), rng.randint(16, 19), rng.randint(25, 29)
    d0, d1 = rng.choice((7, 14)), rng.choice((30, 45, 60))
    commit = hexid(rng)
    schema = rng.randint(5, 9)
    pr = rng.randint(410, 980)
    branch = "feat/report-outbox"

    legacy = "lib/src/legacy/report_sync_v1.dart"
    service = "lib/src/sync/report_sync_service.dart"
    store = "lib/src/sync/outbox_store.dart"
    flush = "lib/src/sync/outbox_flush_task.dart"
    migration = f"lib/src/db/migrations/v{schema + 1}_{table}.dart"
    database = "lib/src/db/app_database.dart"
    api = "lib/src/api/reports_api.dart"
    pubspec = "pubspec.yaml"
    main = "lib/main.dart"
    test_file = "test/sync/outbox_store_test.dart"
    old_cache = "lib/src/sync/pending_uploads_cache.dart"
    test_cmd = "flutter test test/sync"
    analyze_cmd = "dart analyze lib test"

    date = f"Tuesday, November {rng.randint(10, 27)}, 2026"
    s = Session(rng, _SYSTEM.format(date=date, root=root))
    q = _Qwen(s, root)
    target = tokens * CHARS_PER_TOKEN

    def pad(fraction: float) -> None:
        while s.chars < target * fraction:
            kind = rng.random()
            folder = rng.choice(("lib/src/forms", "lib/src/widgets", "lib/src/models",
                                 "lib/src/util", "lib/src/screens"))  # fmt: skip
            if kind < 0.45:
                q.read(f"{folder}/{ident(rng)}.dart", code_file(rng, "dart", rng.randint(40, 90)),
                       filler=True)  # fmt: skip
            elif kind < 0.6:
                start = rng.randint(40, 200)
                q.read(f"{folder}/{ident(rng)}.dart", code_file(rng, "dart", 60),
                       offset=start, limit=60, filler=True)  # fmt: skip
            elif kind < 0.82:
                q.shell("adb logcat -d -t 60 -s flutter", "Read recent app logs",
                        log_lines(rng, 60), filler=True)  # fmt: skip
            elif kind < 0.92:
                names = [f"{ident(rng)}.dart" for _ in range(rng.randint(8, 16))]
                q.ls(folder, [], names, filler=True)
            else:
                word = ident(rng, 1)
                paths = [f"{folder}/{ident(rng)}_{word}.dart" for _ in range(rng.randint(4, 9))]
                q.glob(f"lib/**/*_{word}.dart", paths, filler=True)

    # --- the task ------------------------------------------------------------------------------
    s.user(
        f"Inspectors lose reports when they submit from a basement with no signal — {app} "
        "just shows an error and the form is gone. I want an offline outbox: a submitted "
        "report is stored on the device and uploaded when we're back online, in batches of "
        f"{a0} reports per request. Once a report is synced, keep its local copy for {d0} days "
        f"so they can still open it offline.\n\nBefore you start:\n- No {pkg}. We manage state "
        "with provider and I don't want a second approach in the codebase.\n"
        f"- CI is pinned to Flutter {fver}, so nothing that needs a newer SDK.\n"
        f"- Every upload must carry the report's client UUID in a `{header}` header; the "
        "backend dedupes retries on it."
    )
    s.fact("constraint", f"do not add {pkg}", (pkg,))
    s.fact("constraint", f"CI is pinned to Flutter {fver}", (f"Flutter {fver}",))
    s.fact("constraint", f"uploads carry the report UUID in {header}", (header,))
    ids = ["1", "2", "3", "4", "5", "6"]
    content = {
        "1": f"Outbox storage for submitted reports ({store.rsplit('/', 1)[1]})",
        "2": "Flush the outbox in batches when connectivity returns",
        "3": f"Send {header} on every upload",
        "4": "Purge synced reports after the retention window",
        "5": "Draft migration from the v1 cache on first launch",
        "6": "Tests + dart analyze",
    }
    status = dict.fromkeys(ids, "pending")
    status["1"] = "in_progress"

    def todo(text: str = "") -> None:
        q.todo([(i, content[i], status[i]) for i in ids], text=text)

    todo("I'll lay out the work first.")
    q.read(pubspec, "\n".join([
        f"name: {app}",
        "description: Field inspection forms.",
        "publish_to: none",
        "version: 2.14.0+214",
        "",
        "environment:",
        '  sdk: ">=3.3.0 <4.0.0"',
        f'  flutter: ">={fver}.0"',
        "",
        "dependencies:",
        "  flutter:",
        "    sdk: flutter",
        "  provider: ^6.1.2",
        "  sqflite: ^2.3.3",
        "  path: ^1.9.0",
        "  http: ^1.2.1",
        "  connectivity_plus: ^6.0.3",
        "  uuid: ^4.4.0",
        "",
        "dev_dependencies:",
        "  flutter_test:",
        "    sdk: flutter",
        "  flutter_lints: ^4.0.0",
        "  sqflite_common_ffi: ^2.3.3",
    ]))  # fmt: skip
    s.fact("file_read", "read pubspec.yaml", (pubspec,), required=False)
    q.grep("syncPending|uploadReport", [
        (legacy, 12, "class ReportSyncV1 {"),
        (legacy, 31, "  Future<void> syncPending() async {"),
        (service, 9, "class ReportSyncService {"),
        (service, 27, "  Future<void> syncPending() async {"),
        (api, 22, "  Future<http.Response> uploadReport(Report report) async {"),
        (old_cache, 6, "class PendingUploadsCache {"),
    ])  # fmt: skip
    pad(0.08)

    # --- the wrong file ------------------------------------------------------------------------
    legacy_old = (
        "    for (final report in pending) {\n      await _api.uploadReport(report);\n    }"
    )
    legacy_new = (
        f"    for (final chunk in pending.slices({a0})) {{\n"
        "      await _api.uploadReports(chunk);\n"
        "    }"
    )
    q.read(legacy, "\n".join([
        "import 'package:collection/collection.dart';",
        "",
        "import '../api/reports_api.dart';",
        "import '../sync/pending_uploads_cache.dart';",
        "",
        "/// Sync for accounts still on the v1 API.",
        "class ReportSyncV1 {",
        "  ReportSyncV1(this._api, this._cache);",
        "",
        "  final ReportsApi _api;",
        "  final PendingUploadsCache _cache;",
        "",
        "  Future<void> syncPending() async {",
        "    final pending = await _cache.load();",
        legacy_old,
        "    await _cache.clear();",
        "  }",
        "}",
    ]))  # fmt: skip
    q.edit(legacy, legacy_old, legacy_new, text="Batching the uploads where pending reports "
           "are sent.")  # fmt: skip
    s.user(
        f"Wrong file — {legacy} only runs for the handful of accounts still on the v1 API, "
        f"leave it as it was. The live path is {service}."
    )
    q.edit(legacy, legacy_new, legacy_old, text="Putting the v1 sync back as it was.")
    service_old = (
        "  Future<void> syncPending() async {\n"
        "    final report = _pending.removeFirst();\n"
        "    await _api.uploadReport(report);\n"
        "  }"
    )
    service_new = (
        "  Future<void> syncPending() async {\n"
        "    if (!await _connectivity.isOnline()) return;\n"
        "    final batch = await _outbox.nextBatch(kOutboxBatchSize);\n"
        "    if (batch.isEmpty) return;\n"
        "    await _api.uploadReports(batch);\n"
        "    await _outbox.markSynced(batch.map((r) => r.id));\n"
        "  }"
    )
    q.read(service, "\n".join([
        "import 'dart:collection';",
        "",
        "import '../api/reports_api.dart';",
        "import 'connectivity.dart';",
        "",
        "/// Sends submitted reports to the backend.",
        "class ReportSyncService {",
        "  ReportSyncService(this._api, this._connectivity);",
        "",
        "  final ReportsApi _api;",
        "  final Connectivity _connectivity;",
        "  final Queue<Report> _pending = Queue();",
        "",
        "  void submit(Report report) => _pending.add(report);",
        "",
        service_old,
        "}",
    ]))  # fmt: skip
    q.edit(service, service_old, service_new)
    s.fact("file_modified", f"the sync change is in {service}", (service,), stale=(legacy,))
    pad(0.2)

    # --- the storage design, replaced twice ----------------------------------------------------
    prefs_store = "\n".join([
        "import 'dart:convert';",
        "",
        "import 'package:shared_preferences/shared_preferences.dart';",
        "",
        "/// Submitted reports waiting for upload, as one JSON list in SharedPreferences.",
        "class OutboxStore {",
        "  static const _key = 'pending_reports';",
        "",
        "  Future<void> add(Report report) async {",
        "    final prefs = await SharedPreferences.getInstance();",
        "    final list = prefs.getStringList(_key) ?? [];",
        "    await prefs.setStringList(_key, [...list, jsonEncode(report.toJson())]);",
        "  }",
        "}",
    ])  # fmt: skip
    q.write(store, prefs_store, text=(
        "The outbox itself: a submitted report is appended, as JSON, to a list in "
        "SharedPreferences; the sync service reads the head of that list."))  # fmt: skip
    s.user(
        "Not SharedPreferences — it loads everything into memory on startup, and a report with "
        "forty photo paths and the checklist JSON is big. We had ANRs from exactly that in the "
        "spring."
    )
    s.say(
        "Then a Hive box `outbox` keyed by report id, opened lazily, so nothing is read until "
        "the sync service asks for a batch."
    )
    s.user(
        "Hive would need a TypeAdapter per model and the package is barely maintained these "
        "days. We already have sqflite for the report cache — put it there."
    )
    s.say(
        f"Switching to a `{table}` table in the existing sqflite database: one row per "
        "submitted report (id, account, JSON body, created_at, synced_at, in_flight), added "
        f"by a schema v{schema + 1} migration. No Hive box, no SharedPreferences list; "
        "`OutboxStore` reads batches oldest first and marks rows synced."
    )
    s.fact(
        "decision",
        f"the outbox is a {table} table in the sqflite database",
        (table,),
        stale=("SharedPreferences", "Hive box"),
    )
    q.write(migration, "\n".join([
        "import 'package:sqflite/sqflite.dart';",
        "",
        f"Future<void> migrateV{schema + 1}(Database db) async {{",
        "  await db.execute('''",
        f"    CREATE TABLE {table} (",
        "      id TEXT PRIMARY KEY,",
        "      account_id TEXT NOT NULL,",
        "      body TEXT NOT NULL,",
        "      created_at INTEGER NOT NULL,",
        "      synced_at INTEGER,",
        "      in_flight INTEGER NOT NULL DEFAULT 0",
        "    )",
        "  ''');",
        f"  await db.execute('CREATE INDEX {table}_created ON {table} (created_at)');",
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the outbox migration", (migration,))
    db_old = f"  static const schemaVersion = {schema};"
    db_new = f"  static const schemaVersion = {schema + 1};"
    q.edit(database, db_old, db_new)
    q.edit(database, "      if (from < 5) await migrateV5(db);",
           f"      if (from < 5) await migrateV5(db);\n      if (from < {schema + 1}) "
           f"await migrateV{schema + 1}(db);")  # fmt: skip
    s.fact("file_modified", "the database runs the new migration", (database,))
    sql_store = "\n".join([
        "import 'package:sqflite/sqflite.dart';",
        "",
        "import '../db/app_database.dart';",
        "",
        f"const kOutboxBatchSize = {a0};",
        f"const kSyncedRetention = Duration(days: {d0});",
        "",
        "class OutboxStore {",
        "  OutboxStore(this._db);",
        "",
        "  final AppDatabase _db;",
        "",
        "  Future<void> add(Report report) => _db.raw.insert(",
        f"        '{table}',",
        "        report.toOutboxRow(),",
        "        conflictAlgorithm: ConflictAlgorithm.ignore,",
        "      );",
        "",
        "  Future<List<Report>> nextBatch(int size) async {",
        "    final rows = await _db.raw.query(",
        f"      '{table}',",
        "      where: 'synced_at IS NULL AND in_flight = 0',",
        "      orderBy: 'created_at',",
        "      limit: size,",
        "    );",
        "    return rows.map(Report.fromOutboxRow).toList();",
        "  }",
        "",
        "  Future<void> markSynced(Iterable<String> ids) async {",
        "    final now = DateTime.now().millisecondsSinceEpoch;",
        "    await _db.raw.update(",
        f"      '{table}',",
        "      {'synced_at': now, 'in_flight': 0},",
        "      where: 'id IN (${List.filled(ids.length, '?').join(',')})',",
        "      whereArgs: ids.toList(),",
        "    );",
        "  }",
        "",
        "  Future<int> purgeSynced() {",
        "    final cutoff = DateTime.now().subtract(kSyncedRetention).millisecondsSinceEpoch;",
        f"    return _db.raw.delete('{table}', where: 'synced_at < ?', whereArgs: [cutoff]);",
        "  }",
        "}",
    ])  # fmt: skip
    q.write(store, sql_store, new=False)
    s.fact("file_created", "the outbox store", (store,))
    pad(0.3)

    flush_text = "\n".join([
        "import 'package:workmanager/workmanager.dart';",
        "",
        "import 'report_sync_service.dart';",
        "",
        f"const kFlushTask = '{task}';",
        "",
        "@pragma('vm:entry-point')",
        "void outboxCallbackDispatcher() {",
        "  Workmanager().executeTask((name, _) async {",
        "    if (name != kFlushTask) return true;",
        "    final sync = await ReportSyncService.fromBackground();",
        "    await sync.syncPending();",
        "    await sync.purgeSynced();",
        "    return true;",
        "  });",
        "}",
    ])  # fmt: skip
    q.write(flush, flush_text, text=(
        "Flushing runs twice: right away when connectivity_plus reports we're online, and "
        f"from a workmanager periodic task `{task}` (every 15 minutes, network required) so "
        "reports go out even if the app was killed."))  # fmt: skip
    s.fact("decision", f"a workmanager periodic task {task} flushes the outbox", (task,))
    s.fact("file_created", "the flush task", (flush,), required=False)
    q.edit(pubspec, "  uuid: ^4.4.0", "  uuid: ^4.4.0\n  workmanager: ^0.5.2")
    s.fact("file_modified", "workmanager added to pubspec.yaml", (pubspec,))
    q.edit(main, "  runApp(const App());",
           "  await Workmanager().initialize(outboxCallbackDispatcher);\n"
           "  await Workmanager().registerPeriodicTask(kFlushTask, kFlushTask,\n"
           "      frequency: const Duration(minutes: 15),\n"
           "      constraints: Constraints(networkType: NetworkType.connected));\n"
           "  runApp(const App());")  # fmt: skip
    status["1"], status["2"] = "completed", "in_progress"
    todo()
    pad(0.38)

    # --- batch size, first change; tests -------------------------------------------------------
    s.user(f"Make the batch {a1} reports — the {a0} was from before we gzip the bodies.")
    q.edit(store, f"const kOutboxBatchSize = {a0};", f"const kOutboxBatchSize = {a1};")
    first_failure = "OutboxStore add stores one row per report"
    q.write(test_file, "\n".join([
        "import 'package:flutter_test/flutter_test.dart';",
        "import 'package:sqflite_common_ffi/sqflite_ffi.dart';",
        "",
        f"import 'package:{app}/src/sync/outbox_store.dart';",
        "",
        "import '../support/fake_reports.dart';",
        "",
        "void main() {",
        "  sqfliteFfiInit();",
        "  late OutboxStore outbox;",
        "",
        "  setUp(() async => outbox = OutboxStore(await openTestDatabase()));",
        "",
        "  group('OutboxStore', () {",
        "    test('add stores one row per report', () async {",
        "      outbox.add(fakeReport());",
        "      expect(await outbox.count(), 1);",
        "    });",
        "",
        "    test('nextBatch stops at the batch size', () async {",
        "      for (var i = 0; i < kOutboxBatchSize + 3; i++) {",
        "        await outbox.add(fakeReport());",
        "      }",
        "      expect(await outbox.nextBatch(kOutboxBatchSize), hasLength(kOutboxBatchSize));",
        "    });",
        "  });",
        "}",
    ]))  # fmt: skip
    s.fact("file_created", "the outbox test", (test_file,))
    n1 = rng.randint(30, 39)
    run1 = _flutter_test(rng, root, test_file, n1, [(first_failure, 16, "<1>", "<0>")])
    q.shell(test_cmd, "Run the sync tests", run1, code=1)
    s.fact("command", "the sync tests", (test_cmd,), required=False)
    q.edit(test_file, "      outbox.add(fakeReport());", "      await outbox.add(fakeReport());",
           text="The test didn't await `add`, so it counted before the insert landed.")  # fmt: skip
    s.fact("error_resolved", "the add test counted before the insert", (first_failure,),
           required=False)  # fmt: skip
    analyze_error = "\n".join([
        f"Analyzing {app}...",
        "",
        f"  error - {service}:31:40 - The named parameter 'limit' isn't defined. Try "
        "correcting the name to an existing named parameter's name, or defining a named "
        "parameter with the name 'limit'. - undefined_named_parameter",
        f"   info - {flush}:11:11 - Unnecessary 'await' in return. - unnecessary_await_in_return",
        "",
        "2 issues found.",
    ])  # fmt: skip
    q.edit(service, "    await _outbox.markSynced(batch.map((r) => r.id));",
           "    await _outbox.markSynced(batch.map((r) => r.id));\n"
           "    _badge.value = await _outbox.pendingCount(limit: 999);")  # fmt: skip
    q.shell(analyze_cmd, "Static analysis", analyze_error, code=3)
    q.edit(service, "    _badge.value = await _outbox.pendingCount(limit: 999);",
           "    _badge.value = await _outbox.pendingCount();",
           text="`pendingCount` takes no `limit`; removing the argument.")  # fmt: skip
    q.shell(analyze_cmd, "Static analysis", f"Analyzing {app}...\nNo issues found!")
    s.fact("error_resolved", "undefined_named_parameter in the sync service",
           ("undefined_named_parameter",), required=False)  # fmt: skip
    s.fact("command", "dart analyze", (analyze_cmd,), required=False)
    pad(0.5)

    # --- the user's interjections -------------------------------------------------------------
    s.user(
        f"Two things. Always run `dart format --line-length {ll}` before you tell me something "
        f"is done — remember that for this repo. And packages/{local} is the design team's: "
        "don't edit anything in there, ask me if you need a change."
    )
    q.remember(f"In {app}, run `dart format --line-length {ll} lib test` before reporting "
               "work as done.")  # fmt: skip
    s.say(f"Noted, and packages/{local} stays as it is.")
    s.fact("constraint", f"format with dart format --line-length {ll}", (f"--line-length {ll}",))
    s.fact("constraint", f"packages/{local} is off limits", (f"packages/{local}",))
    s.user("Also, which commit moved photo uploads to the multipart endpoint? I need it for the "
           "release notes.")  # fmt: skip
    q.shell(
        f"git log --oneline -S MultipartRequest -- {api}",
        "Find the multipart commit",
        f"{commit} Upload report photos as multipart\n{hexid(rng)} Retry photo parts once",
    )
    s.say(f'It is {commit} ("Upload report photos as multipart"); the later one only added a '
          "retry.")  # fmt: skip
    s.fact("identifier", "the commit that moved photos to multipart", (commit,))
    s.user(
        "And drop the draft migration item — we checked, nobody on v1 has unsent drafts left. "
        f"Put in its place a pending-count badge on the {icon}."
    )
    badge = f"Pending-count badge on the {icon}"
    ids.remove("5")
    content["7"] = badge
    ids.insert(4, "7")
    status["7"] = "pending"
    todo()
    s.fact("todo", "the badge item was added and is open", (badge,))
    s.fact("todo", "the draft migration item was dropped", ("draft migration", "drop"))
    pad(0.62)

    # --- retention, the header, the old cache --------------------------------------------------
    s.user(f"Keep synced reports for {d1} days rather than {d0} — the auditors asked for it.")
    q.edit(store, f"const kSyncedRetention = Duration(days: {d0});",
           f"const kSyncedRetention = Duration(days: {d1});")  # fmt: skip
    api_old = (
        "    final request = http.Request('POST', _base.resolve('/v2/reports'))\n"
        "      ..headers.addAll(_auth.headers)"
    )
    api_new = (
        "    final request = http.Request('POST', _base.resolve('/v2/reports/batch'))\n"
        "      ..headers.addAll(_auth.headers)\n"
        f"      ..headers['{header}'] = batch.map((r) => r.clientUuid).join(',')"
    )
    q.read(api, "\n".join([
        "import 'package:http/http.dart' as http;",
        "",
        "class ReportsApi {",
        "  ReportsApi(this._base, this._auth, this._client);",
        "",
        "  final Uri _base;",
        "  final Auth _auth;",
        "  final http.Client _client;",
        "",
        "  Future<http.Response> uploadReports(List<Report> batch) async {",
        api_old,
        "      ..body = encodeBatch(batch);",
        "    return http.Response.fromStream(await _client.send(request));",
        "  }",
        "}",
    ]))  # fmt: skip
    q.edit(api, api_old, api_new)
    s.fact("file_modified", "the upload sends the header", (api,))
    q.grep("PendingUploadsCache", [(old_cache, 6, "class PendingUploadsCache {")],
           text="Checking whether anything still uses the old cache.")  # fmt: skip
    q.shell(f"git rm {old_cache}", "Remove the old pending-uploads cache", f"rm '{old_cache}'",
            text="Only its own file mentions it now; removing it.")  # fmt: skip
    s.fact("file_deleted", "the old pending-uploads cache", (old_cache,))
    status["2"] = status["3"] = "completed"
    status["4"] = "in_progress"
    todo()
    s.fact("todo", "the batched flush is done", (content["2"],), required=False)
    pad(0.74)

    q.shell(f"dart format --line-length {ll} lib test", "Format the code",
            f"Formatted {rng.randint(140, 220)} files (3 changed) in 0.{rng.randint(3, 9)}1 "
            "seconds.")  # fmt: skip
    mid = n1 + rng.randint(1, 2)
    q.shell(test_cmd, "Run the sync tests", _flutter_test(rng, root, test_file, mid, []))
    pad(0.84)

    # --- batch size, second change (the setting unnamed); the last run --------------------------
    s.user(f"Thinking again: {a2} at a time. The new gateway takes much bigger bodies.")
    q.edit(store, f"const kOutboxBatchSize = {a1};", f"const kOutboxBatchSize = {a2};")
    s.fact(
        "changed_value",
        f"the upload batch is {a2} reports",
        (f"{a2} at a time",),
        stale=(f"{a0} reports", f"{a1} reports"),
    )
    s.fact("changed_value", f"synced reports kept {d1} days", (f"{d1} days",),
           stale=(f"{d0} days",))  # fmt: skip
    n2 = n1 + rng.randint(4, 8)
    photo = "ReportSyncService uploads photos after their report"
    last = _flutter_test(rng, root, test_file, n2, [(photo, 58, "<3>", "<0>")])
    q.shell(test_cmd, "Run the sync tests", last, code=1)
    s.fact("test_status", "the last run", (f"+{n2} -1: Some tests failed.",),
           stale=(f"+{n1} -1: Some tests failed.",))  # fmt: skip
    s.fact("error_open", "the photo-order test still fails", (photo,))
    status["4"] = status["6"] = "completed"
    content["8"] = "Fix the photo-order test"
    ids.append("8")
    status["8"] = "in_progress"
    todo()
    s.say(
        f"{n2} passing, 1 failing: the photo-order test — photos are queued before their report "
        "row exists, so the upload sends none. Everything else passes and analysis is clean."
    )
    pad(1.0)
    s.user("OK, the photos can wait until tomorrow. Push it and open a draft PR.")
    q.shell(f"git push -u origin {branch} && gh pr create --draft --fill",
            "Push and open a draft PR", "\n".join([
                f"branch '{branch}' set up to track 'origin/{branch}'.",
                f"https://github.com/{org}/{app}/pull/{pr}",
            ]))  # fmt: skip
    s.say(f"Draft PR #{pr} is up. Until tomorrow.")
    s.fact("last_message", "the draft PR is open", (f"PR #{pr} is up",))
    return finish_session(s, family=FAMILY, seed=seed)
