"""cursorstory-style: a Cursor agent session in native function calls, with a story of its own.

Cursor's agent (the toolset of its 2025 agent prompts) drives a C++/CMake library. Every user
message arrives inside `<user_query>` tags. The tools: `run_terminal_cmd` {command,
is_background, explanation}, answered "Exit code: N", the output in a fence, "Command
completed." and where the shell stands; `read_file` {target_file, offset?, limit?}, answered
with numbered `LINE_NUMBER|LINE_CONTENT` lines; `edit_file` {target_file, instructions,
code_edit} — a sketch with `// ... existing code ...` markers, or a new file's whole text —
answered "The apply model made the following changes to the file:" and a diff;
`search_replace` {file_path, old_string, new_string}, answered "The file … has been updated.
Here's a relevant snippet of the edited file:"; `delete_file` {target_file, explanation};
`grep` {pattern, path, output_mode}, `codebase_search` {query, target_directories,
explanation}, `glob_file_search` {glob_pattern, target_directory}, `list_dir`
{target_directory}, `read_lints` {paths}; and `todo_write` {merge, todos: [{id, content,
status}]}: `merge: false` writes the whole list, `merge: true` sends only the changed items by
id (a new one with its content), and the answer restates the merged list as JSON.

The story: the HTTP exporter of a C++ telemetry library gets batching. The user's first
message sets the batch size and the flush interval and three rules in prose (a forbidden
dependency, public headers that must compile as C++14, a CMake option defaulting to OFF). The
assistant edits the legacy UDP exporter, is sent to the HTTP one and puts its edit back with
`search_replace`; the queue goes from a mutex-guarded `std::deque` to per-thread
`thread_local` buffers to a lock-free `SampleRing`; the batch size changes twice (the second
time without naming it), the flush interval once; the user forbids a vendored directory,
cancels a to-do and adds one, and asks which googletest commit is pinned. A build error
(`std::optional` in a C++14 header), a failing test and a clang-tidy warning are fixed, the old
flush thread is deleted, and the last ctest run still has one failure. The final message names
no fact.
"""

from __future__ import annotations

import json
import random
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

FAMILY = "cursorstory-style"

#: The marker Cursor's edit_file sketches stand for unchanged code with.
MARKER = "// ... existing code ..."
#: What Cursor's todo_write answers before it restates the merged list.
TODO_ANSWER = (
    "Successfully updated TODOs. Make sure to follow and update your TODO list as you make "
    "progress. Cancel and add new TODO tasks as needed when the user makes a correction or "
    "follow-up request.\n\nHere are the latest contents of your TODO list:\n"
)

#: What Cursor appends to a tool's result when the to-do list has gone stale (its wording
#: here is the family's own).
REMINDER = (
    "<system_reminder>\nThe TODO list has not changed for a while. If items are finished, "
    "check them off with todo_write before going on.\n</system_reminder>"
)

_SYSTEM = "\n".join(
    (
        "You are an AI coding assistant working inside Cursor, pairing with a USER on their "
        "codebase. Keep going until the USER's request is fully handled before you yield "
        "your turn. The USER's messages arrive inside <user_query> tags.",
        "",
        "<tool_calling>",
        "Call tools only with the arguments their schemas define. Do not name tools when "
        "talking to the USER; say what you are doing instead. Prefer reading code over "
        "guessing, and batch independent reads together.",
        "</tool_calling>",
        "",
        "<making_code_changes>",
        "Never paste code for the USER to apply; use the edit tools. In an edit_file sketch, "
        f"stand for unchanged lines with `{MARKER}`. Keep the build green and check linter "
        "errors on files you touched.",
        "</making_code_changes>",
        "",
        "<task_management>",
        "Track multi-step work with todo_write: write the list once with merge=false, then "
        "send only the items that change with merge=true. One item in_progress at a time; "
        "mark items completed as soon as they are done and cancelled when they are dropped.",
        "</task_management>",
        "",
        "<user_info>",
        "OS: darwin 24.6.0",
        "Workspace: {root}",
        "Shell: /bin/zsh",
        "Date: {date}",
        "</user_info>",
    )
)

_LIBS = ("tessel", "gantry", "ferrule", "lumen", "cobalt", "quillon")
_DEPS = ("Boost", "abseil", "folly", "TBB")
_VENDORED = ("zstd", "mbedtls", "nanopb", "cjson")
_USERS = ("mira", "tomasz", "kofi", "elena")


def _numbered(lines: list[str], start: int = 1) -> str:
    """Lines as Cursor's read_file shows them: `LINE_NUMBER|LINE_CONTENT`."""
    return "\n".join(f"{start + i:>6}|{line}" for i, line in enumerate(lines))


class _Cursor:
    """Cursor's agent tools, as they appear in the chat."""

    def __init__(self, s: Session, root: str) -> None:
        self.s = s
        self.root = root
        self.cwd = root
        self.todos: dict[str, dict[str, str]] = {}

    def terminal(
        self, command: str, output: str, explanation: str, *, code: int = 0, text: str = "",
        filler: bool = False, remind: bool = False,
    ) -> None:  # fmt: skip
        args = {"command": command, "is_background": False, "explanation": explanation}
        result = (
            f"Exit code: {code}\n\nCommand output:\n\n```\n{output}\n```\n\nCommand completed.\n\n"
            "The previous shell command ended, so on the next invocation of this tool, you "
            f"will be reusing the shell.\n\nOn the next terminal tool call, the directory of "
            f"the shell will already be {self.cwd}."
        )
        if remind:
            result += f"\n\n{REMINDER}"
        self.s.call("run_terminal_cmd", args, result, text=text, filler=filler)

    def read(
        self, rel: str, content: str, *, offset: int = 0, text: str = "", filler: bool = False
    ) -> None:
        lines = content.split("\n")
        args: dict[str, Any] = {"target_file": rel}
        start = 1
        if offset:
            args |= {"offset": offset, "limit": len(lines)}
            start = offset
        self.s.call("read_file", args, _numbered(lines, start), text=text, filler=filler)

    def edit(
        self, rel: str, instructions: str, sketch: str, diff: list[str], *, text: str = ""
    ) -> None:
        """An edit_file call: `sketch` is the code_edit, `diff` the apply model's lines."""
        args = {"target_file": rel, "instructions": instructions, "code_edit": sketch}
        result = (
            "The apply model made the following changes to the file:\n\n```\n"
            + "\n".join(diff)
            + "\n```\n"
        )
        self.s.call("edit_file", args, result, text=text)

    def create(self, rel: str, instructions: str, content: str, *, text: str = "") -> None:
        diff = ["- "] + [f"+ {line}" if line else "+ " for line in content.split("\n")]
        self.edit(rel, instructions, content, diff, text=text)

    def replace(self, rel: str, old: str, new: str, at: int, *, text: str = "") -> None:
        args = {"file_path": rel, "old_string": old, "new_string": new}
        result = (
            f"The file {rel} has been updated. Here's a relevant snippet of the edited file:\n"
            + _numbered(new.split("\n"), at)
        )
        self.s.call("search_replace", args, result, text=text)

    def delete(self, rel: str, explanation: str, *, text: str = "") -> None:
        args = {"target_file": rel, "explanation": explanation}
        self.s.call("delete_file", args, "File deleted successfully.", text=text)

    def grep(self, pattern: str, path: str, hits: dict[str, list[str]], *, text: str = "") -> None:
        """ripgrep's content output, grouped by file: `hits` maps a file to `N:line` lines."""
        blocks = [f"{name}\n" + "\n".join(lines) for name, lines in hits.items()]
        args = {"pattern": pattern, "path": path, "output_mode": "content"}
        self.s.call("grep", args, "\n\n".join(blocks), text=text)

    def search(self, query: str, folder: str, chunks: list[tuple[str, int, str]], why: str,
               *, text: str = "") -> None:  # fmt: skip
        """codebase_search: chunks are (file, first line, code)."""
        out = []
        for rel, first, code in chunks:
            last = first + code.count("\n")
            out.append(f"{rel}:{first}-{last}\n{code}")
        args = {"query": query, "target_directories": [folder], "explanation": why}
        self.s.call("codebase_search", args, "\n\n".join(out), text=text)

    def glob(self, pattern: str, folder: str, found: list[str], *, text: str = "") -> None:
        listed = "\n".join(f"- {p}" for p in found)
        result = f"Result of search in '{folder}' (total {len(found)} files):\n{listed}"
        args = {"glob_pattern": pattern, "target_directory": folder}
        self.s.call("glob_file_search", args, result, text=text)

    def ls(self, folder: str, entries: list[tuple[str, int]], *, filler: bool = False) -> None:
        """list_dir: entries are (name, lines); a name ending in / is a directory."""
        rows = []
        for name, size in entries:
            if name.endswith("/"):
                rows.append(f"[dir]  {name} ({size} items)")
            else:
                rows.append(f"[file] {name} ({size * 31 / 1000:.1f}KB, {size} lines)")
        result = "Contents of directory:\n\n" + "\n".join(rows)
        self.s.call("list_dir", {"target_directory": folder}, result, filler=filler)

    def lints(self, rel: str, found: list[str]) -> None:
        if found:
            result = f"Linter errors for {rel}:\n" + "\n".join(f"  {x}" for x in found)
        else:
            result = "No linter errors found."
        self.s.call("read_lints", {"paths": [rel]}, result)

    def todo(self, changed: list[tuple[str, str, str]], *, merge: bool, text: str = "") -> None:
        """Items (id, content, status); with `merge` an item already listed sends no
        content, and the answer restates the whole merged list."""
        if not merge:
            self.todos = {}
        sent = []
        for item_id, content, status in changed:
            if item_id in self.todos:
                self.todos[item_id]["status"] = status
                sent.append({"id": item_id, "status": status})
            else:
                self.todos[item_id] = {"content": content, "status": status, "id": item_id}
                sent.append({"id": item_id, "content": content, "status": status})
        listed = json.dumps(list(self.todos.values()), separators=(",", ":"))
        self.s.call("todo_write", {"merge": merge, "todos": sent}, TODO_ANSWER + listed,
                    text=text)  # fmt: skip


def _ctest(
    rng: random.Random, root: str, names: list[str], failing: dict[str, list[str]]
) -> tuple[str, int]:
    """ctest --output-on-failure over gtest-discovered tests: (output, exit code)."""
    n = len(names)
    out = [f"Test project {root}/build"]
    for k, name in enumerate(names, 1):
        out.append(f"      Start {k:>2}: {name}")
        dots = "." * max(3, 52 - len(name))
        if name in failing:
            out.append(f"{k:>2}/{n} Test #{k:>2}: {name} {dots}***Failed    1.02 sec")
            suite = name.split(".", 1)[0]
            out += [
                "Running main() from gmock_main.cc",
                f"Note: Google Test filter = {name}",
                "[==========] Running 1 test from 1 test suite.",
                "[----------] Global test environment set-up.",
                f"[----------] 1 test from {suite}",
                f"[ RUN      ] {name}",
                *failing[name],
                f"[  FAILED  ] {name} (1001 ms)",
                f"[----------] 1 test from {suite} (1001 ms total)",
                "",
                "[----------] Global test environment tear-down",
                "[==========] 1 test from 1 test suite ran. (1001 ms total)",
                "[  PASSED  ] 0 tests.",
                "[  FAILED  ] 1 test, listed below:",
                f"[  FAILED  ] {name}",
                "",
                " 1 FAILED TEST",
                "",
            ]
        else:
            out.append(f"{k:>2}/{n} Test #{k:>2}: {name} {dots}   Passed    "
                       f"0.0{rng.randint(1, 9)} sec")  # fmt: skip
    failed = len(failing)
    pct = 100 * (n - failed) // n
    seconds = f"{rng.randint(1, 4)}.{rng.randint(10, 99)}"
    out += ["", f"{pct}% tests passed, {failed} tests failed out of {n}", "",
            f"Total Test time (real) =   {seconds} sec"]  # fmt: skip
    if failing:
        out += ["", "The following tests FAILED:"]
        out += [f"\t{names.index(name) + 1:>3} - {name} (Failed)" for name in failing]
        out.append("Errors while running CTest")
    return "\n".join(out), 8 if failing else 0


_OTHER_TESTS = (
    "ConfigTest.DefaultsAreSane", "ConfigTest.RejectsEmptyEndpoint", "SampleTest.EncodesTags",
    "SampleTest.EncodesHistogramBuckets", "SampleTest.RoundTripsJson", "HttpExporterTest.PostsJson",
    "HttpExporterTest.SetsTenantHeader", "HttpExporterTest.RetriesOnce",
    "HttpExporterTest.GivesUpAfterTimeout", "RegistryTest.DeduplicatesNames",
    "RegistryTest.CounterIsMonotonic", "RegistryTest.GaugeKeepsLastValue",
    "ClockTest.MonotonicNow", "TagSetTest.SortsKeys", "TagSetTest.RejectsDuplicateKeys",
    "UdpExporterTest.FormatsStatsdLine", "UdpExporterTest.SplitsLongPackets",
    "HistogramTest.BucketsBoundaries", "HistogramTest.MergesSnapshots",
    "RateLimiterTest.AllowsBurst",
)  # fmt: skip


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"cursorstory-{seed}")
    lib = rng.choice(_LIBS)
    big = lib.upper()
    option = f"{big}_ENABLE_BATCHING"
    dep = rng.choice(_DEPS)
    vendored = rng.choice(_VENDORED)
    user_dir = rng.choice(_USERS)
    root = f"/Users/{user_dir}/src/{lib}"
    header = f"X-{lib.title()}-Tenant"
    b0, b1, b2 = (
        rng.choice((128, 192, 256)),
        rng.choice((384, 448, 512)),
        rng.choice((640, 768, 896)),
    )
    f0, f1 = rng.choice((150, 200, 250)), rng.choice((400, 500, 750))
    sha = hexid(rng, 40)
    pr = rng.randint(210, 880)
    branch = f"feat/exporter-batching-{hexid(rng, 4)}"

    wrong = "src/legacy/udp_exporter.cpp"
    exporter = "src/export/http_exporter.cpp"
    config_h = f"include/{lib}/exporter_config.h"
    api_h = f"include/{lib}/exporter.h"
    ring_h = f"include/{lib}/sample_ring.h"
    batcher_h = "src/export/batcher.h"
    batcher = "src/export/batcher.cpp"
    test_file = "tests/batcher_test.cpp"
    flush_thread = "src/export/flush_thread.cpp"
    deps_cmake = "cmake/Dependencies.cmake"
    configure = f"cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug -D{option}=ON"
    build = "cmake --build build"
    ctest = "ctest --test-dir build --output-on-failure"

    date = f"2026-11-{rng.randint(10, 27)}"
    s = Session(rng, _SYSTEM.format(root=root, date=date))
    c = _Cursor(s, root)
    # Numbered lines' leading spaces cost few tokens: a little more text reaches the size.
    target = tokens * CHARS_PER_TOKEN * 1.07

    def user(text: str) -> None:
        s.user(f"<user_query>\n{text}\n</user_query>")

    def pad(fraction: float) -> None:
        while s.chars < target * fraction:
            kind = rng.random()
            if kind < 0.6:
                folder = rng.choice(("src/core", "src/encode", "src/registry", "include/" + lib))
                ext = "h" if folder.startswith("include") else "cpp"
                c.read(f"{folder}/{ident(rng)}.{ext}", code_file(rng, "cpp", rng.randint(40, 90)),
                       filler=True)  # fmt: skip
            elif kind < 0.85:
                c.terminal("tail -n 60 build/logs/collector-dev.log", log_lines(rng, 60),
                           "Looking at recent collector-side log lines for context.",
                           filler=True)  # fmt: skip
            else:
                folder = rng.choice(("src/core", "src/encode", "src/registry"))
                names = [(f"{ident(rng)}.cpp", rng.randint(30, 400))
                         for _ in range(rng.randint(8, 16))]  # fmt: skip
                c.ls(folder, names, filler=True)

    # --- the task ------------------------------------------------------------------------------
    user(
        f"The HTTP exporter in {lib} sends every sample as its own POST. At our volumes the "
        "collector has started rate-limiting us, so I want batching: queue samples on record, "
        f"send them in batches of {b0} samples, and flush whatever is queued at least every "
        f"{f0} ms even when the batch isn't full.\n\nHard rules:\n"
        f"- No {dep}. Dependencies stay what's in third_party/ plus the standard library.\n"
        f"- Everything under include/{lib}/ has to keep compiling as C++14; the firmware team "
        "builds our public headers with an old arm-none-eabi toolchain.\n"
        f"- All of this sits behind a new CMake option {option}, default OFF, so distro "
        "packagers see no change."
    )
    s.fact("constraint", f"no {dep}", (dep,))
    s.fact("constraint", "public headers compile as C++14", ("C++14",))
    s.fact("constraint", f"behind the CMake option {option}, default OFF", (option,))
    items = [
        ("queue", "Queue samples in the HTTP exporter on record()"),
        ("flush", "Send full batches and flush partial ones on the interval"),
        ("cmake", f"CMake option {option} (default OFF)"),
        ("retire", "Retire the old flush thread"),
        ("gauge", "Expose queue depth as a Prometheus gauge"),
        ("tests", "GoogleTest coverage for the batcher"),
    ]
    content = dict(items)
    c.todo([(i, text, "in_progress" if i == "queue" else "pending") for i, text in items],
           merge=False,
           text="I'll map out the exporter first and track the work as I go.")  # fmt: skip
    cmakelists = [
        "cmake_minimum_required(VERSION 3.21)",
        f"project({lib} VERSION 3.4.0 LANGUAGES CXX)",
        "",
        "set(CMAKE_CXX_STANDARD 17)",
        "set(CMAKE_CXX_STANDARD_REQUIRED ON)",
        "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)",
        "",
        f'option({big}_BUILD_TESTS "Build the unit tests" ON)',
        f'option({big}_WITH_UDP "Build the legacy StatsD/UDP exporter" ON)',
        "",
        "include(cmake/Dependencies.cmake)",
        "",
        f"add_library({lib}",
        "  src/core/registry.cpp",
        "  src/core/clock.cpp",
        "  src/encode/json_encoder.cpp",
        "  src/export/http_exporter.cpp",
        "  src/export/flush_thread.cpp",
        ")",
        f"target_include_directories({lib} PUBLIC include)",
        f"target_link_libraries({lib} PRIVATE {vendored} CURL::libcurl Threads::Threads)",
        "",
        f"if({big}_WITH_UDP)",
        f"  target_sources({lib} PRIVATE src/legacy/udp_exporter.cpp)",
        "endif()",
        "",
        f"if({big}_BUILD_TESTS)",
        "  enable_testing()",
        "  add_subdirectory(tests)",
        "endif()",
    ]
    c.glob(
        "*exporter*",
        ".",
        [
            exporter,
            wrong,
            api_h,
            config_h,
            f"include/{lib}/http_exporter.h",
            f"include/{lib}/udp_exporter.h",
            "tests/http_exporter_test.cpp",
        ],
    )
    c.read("CMakeLists.txt", "\n".join(cmakelists))
    s.fact("file_read", "read the top-level CMakeLists.txt", ("CMakeLists.txt",), required=False)
    c.search(
        "Where does the exporter hand samples to the network?",
        "src/",
        [
            (wrong, 41, "void UdpExporter::record(const Sample& sample) {\n"
                        "    socket_.send_to(encode_statsd(sample), endpoint_);\n}"),
            (exporter, 58, "void HttpExporter::record(const Sample& sample) {\n"
                           "    post(encode_json(sample));\n}"),
            (flush_thread, 12, "void FlushThread::run() {\n"
                               "    while (!stop_) { exporter_.flush(); sleep_for(period_); }\n}"),
        ],
        "Find the send path before touching it.",
    )  # fmt: skip
    api = [
        "#pragma once",
        "",
        "#include <string>",
        "",
        f'#include "{lib}/sample.h"',
        "",
        f"namespace {lib} {{",
        "",
        "class Exporter {",
        "public:",
        "    virtual ~Exporter() = default;",
        "    virtual void record(const Sample& sample) = 0;",
        "    virtual void flush() = 0;",
        "};",
        "",
        f"}}  // namespace {lib}",
    ]
    c.read(api_h, "\n".join(api))
    s.fact("file_read", "read the exporter interface", (api_h,), required=False)
    pad(0.08)

    post = [
        "void HttpExporter::post(std::string body) {",
        "    Request request{config_.endpoint, std::move(body)};",
        f'    request.headers.emplace_back("{header}", config_.tenant);',
        '    request.headers.emplace_back("Content-Type", "application/json");',
        "    client_.send(request);",
        "}",
    ]
    c.read(exporter, "\n".join(post), offset=64)
    s.say(
        f"Each POST carries the tenant in the `{header}` header, so a batch keeps that header "
        "once per request.\n\nPlan: a `std::deque<Sample>` guarded by a `std::mutex` inside the "
        "exporter; `record()` pushes, and a flusher drains it when it reaches the batch size "
        "or when the interval runs out."
    )
    s.fact("identifier", f"the tenant travels in {header}", (header,))
    pad(0.15)

    # --- the wrong file ------------------------------------------------------------------------
    udp_old = "void UdpExporter::record(const Sample& sample) {\n" \
              "    socket_.send_to(encode_statsd(sample), endpoint_);\n}"  # fmt: skip
    udp_new = (
        "void UdpExporter::record(const Sample& sample) {\n"
        "    std::lock_guard<std::mutex> lock(queue_mutex_);\n"
        "    queue_.push_back(sample);\n"
        "}"
    )
    c.read(wrong, "\n".join([
        f'#include "{lib}/udp_exporter.h"',
        "",
        '#include "encode/statsd.h"',
        "",
        f"namespace {lib} {{",
        "",
        "// StatsD over UDP: kept for hosts that still run the old agent.",
        "UdpExporter::UdpExporter(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}",
        "",
        udp_old,
        "",
        f"}}  // namespace {lib}",
    ]))  # fmt: skip
    c.edit(
        wrong,
        "I am queueing samples in record() instead of sending each one.",
        f"{MARKER}\n{udp_new}\n{MARKER}",
        ["  // StatsD over UDP: kept for hosts that still run the old agent.",
         "  UdpExporter::UdpExporter(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}",
         "  ",
         "  void UdpExporter::record(const Sample& sample) {",
         "-     socket_.send_to(encode_statsd(sample), endpoint_);",
         "+     std::lock_guard<std::mutex> lock(queue_mutex_);",
         "+     queue_.push_back(sample);",
         "  }"],
        text="Starting with the exporter's record path.",
    )  # fmt: skip
    user(
        f"Wrong exporter. {wrong} is the old StatsD path and it's frozen — it only exists for "
        f"hosts on the old agent. Everything new goes through {exporter}."
    )
    c.replace(wrong, udp_new, udp_old, 10, text="Putting the UDP exporter back as it was.")
    record_old = (
        "void HttpExporter::record(const Sample& sample) {\n    post(encode_json(sample));\n}"
    )
    record_new = (
        "void HttpExporter::record(const Sample& sample) {\n    batcher_.record(sample);\n}"
    )
    c.read(exporter, "\n".join([
        f'#include "{lib}/http_exporter.h"',
        "",
        '#include "encode/json_encoder.h"',
        '#include "export/http_client.h"',
        "",
        f"namespace {lib} {{",
        "",
        "HttpExporter::HttpExporter(ExporterConfig config)",
        "    : config_(std::move(config)), client_(config_.endpoint, config_.timeout) {}",
        "",
        record_old,
        "",
        "void HttpExporter::flush() {}",
        "",
        *post,
        "",
        f"}}  // namespace {lib}",
    ]), offset=48)  # fmt: skip
    c.edit(
        exporter,
        "I am routing record() through the batcher and giving flush() something to do.",
        f"{MARKER}\n{record_new}\n\nvoid HttpExporter::flush() {{\n    batcher_.flush_now();\n}}\n"
        f"{MARKER}",
        ["  void HttpExporter::record(const Sample& sample) {",
         "-     post(encode_json(sample));",
         "+     batcher_.record(sample);",
         "  }",
         "  ",
         "- void HttpExporter::flush() {}",
         "+ void HttpExporter::flush() {",
         "+     batcher_.flush_now();",
         "+ }"],
    )  # fmt: skip
    s.fact("file_modified", f"the batching goes into {exporter}", (exporter,), stale=(wrong,))
    pad(0.22)

    # --- the queue, redesigned twice -----------------------------------------------------------
    user(
        "Before you go further: no mutex on the record path. record() gets called from the "
        "request threads of our latency-critical services, it can never block on a lock."
    )
    batcher_tls = "\n".join([
        '#include "export/batcher.h"',
        "",
        f"namespace {lib} {{",
        "namespace {",
        "",
        "thread_local std::vector<Sample> pending_here;",
        "",
        "}  // namespace",
        "",
        "void Batcher::record(const Sample& sample) {",
        "    pending_here.push_back(sample);",
        "    if (pending_here.size() >= config_.batch_size) {",
        "        hand_off(std::move(pending_here));",
        "        pending_here.clear();",
        "    }",
        "}",
        "",
        f"}}  // namespace {lib}",
    ])  # fmt: skip
    c.create(batcher, "I am buffering samples per recording thread.", batcher_tls, text=(
        "Then no shared lock at all: each recording thread appends to its own `thread_local` "
        "buffer and hands a full one to the flusher."))  # fmt: skip
    user(
        "Hmm, thread_local buffers die with their thread. Our worker pools shrink when load "
        "drops, and whatever those threads had buffered would just vanish. The flusher can't "
        "reach into other threads' buffers either, so partial batches never get flushed."
    )
    s.say(
        "Then switching to one fixed-capacity lock-free ring, `SampleRing`, shared by all "
        "recording threads: a producer claims a slot with `fetch_add` on the tail and publishes "
        "it through the slot's sequence number; the exporter's flusher is the only consumer. "
        "No `std::deque`, no mutex, no `thread_local`. When the ring is full, `record()` drops "
        "the sample it was given and counts it in `dropped_total`."
    )
    s.fact(
        "decision",
        "samples queue in a lock-free SampleRing with one consumer",
        ("SampleRing",),
        stale=("std::deque", "thread_local"),
    )
    s.fact("decision", "a full ring drops the new sample and counts it", ("dropped_total",))
    ring_first = [
        "#pragma once",
        "",
        "#include <atomic>",
        "#include <cstddef>",
        "#include <memory>",
        "#include <optional>",
        "",
        f'#include "{lib}/sample.h"',
        "",
        f"namespace {lib} {{",
        "",
        "// Fixed-capacity ring: many recording threads push, the flusher alone pops.",
        "class SampleRing {",
        "public:",
        "    explicit SampleRing(std::size_t capacity);",
        "    ~SampleRing();",
        "",
        "    // Any thread; false when the ring is full.",
        "    bool try_push(const Sample& sample) noexcept;",
        "",
        "    // The flusher only.",
        "    std::optional<Sample> try_pop() noexcept;",
        "",
        "    std::size_t capacity() const noexcept { return mask_ + 1; }",
        "",
        "private:",
        "    struct Slot {",
        "        std::atomic<std::size_t> sequence;",
        "        Sample sample;",
        "    };",
        "",
        "    std::unique_ptr<Slot[]> slots_;",
        "    std::size_t mask_;",
        "    alignas(64) std::atomic<std::size_t> tail_{0};",
        "    alignas(64) std::size_t head_{0};",
        "};",
        "",
        f"}}  // namespace {lib}",
    ]
    c.create(ring_h, "I am adding the multi-producer ring the exporter queues into.",
             "\n".join(ring_first))  # fmt: skip
    s.fact("file_created", "the ring header", (ring_h,))
    batcher_text = "\n".join([
        '#include "export/batcher.h"',
        "",
        "#include <utility>",
        "",
        f"namespace {lib} {{",
        "",
        "Batcher::Batcher(const ExporterConfig& config, SendFn send)",
        "    : config_(config), ring_(config.ring_capacity), send_(std::move(send)) {",
        "    pending_.reserve(config_.batch_size);",
        "    flusher_ = std::thread([this] { run(); });",
        "}",
        "",
        "void Batcher::record(const Sample& sample) noexcept {",
        "    if (!ring_.try_push(sample)) {",
        "        dropped_total_.fetch_add(1, std::memory_order_relaxed);",
        "        return;",
        "    }",
        "    if (queued_.fetch_add(1, std::memory_order_relaxed) + 1 >= config_.batch_size) {",
        "        wake_.notify_one();",
        "    }",
        "}",
        "",
        "void Batcher::run() {",
        "    std::unique_lock<std::mutex> lock(wake_mutex_);",
        "    while (!stopping_) {",
        "        wake_.wait(lock, [this] {",
        "            return stopping_ || queued_.load() >= config_.batch_size;",
        "        });",
        "        lock.unlock();",
        "        drain();",
        "        lock.lock();",
        "    }",
        "}",
        "",
        f"}}  // namespace {lib}",
    ])  # fmt: skip
    c.edit(batcher, "I am replacing the per-thread buffers with the shared ring and a flusher.",
           batcher_text,
           [f"- {line}" if line else "- " for line in batcher_tls.split("\n")]
           + [f"+ {line}" if line else "+ " for line in batcher_text.split("\n")])  # fmt: skip
    s.fact("file_created", "the batcher", (batcher,))
    c.create(batcher_h, "I am declaring the batcher the exporter owns.", "\n".join([
        "#pragma once",
        "",
        "#include <atomic>",
        "#include <condition_variable>",
        "#include <functional>",
        "#include <mutex>",
        "#include <thread>",
        "#include <vector>",
        "",
        f'#include "{lib}/exporter_config.h"',
        f'#include "{lib}/sample_ring.h"',
        "",
        f"namespace {lib} {{",
        "",
        "class Batcher {",
        "public:",
        "    using SendFn = std::function<void(const std::vector<Sample>&)>;",
        "    Batcher(const ExporterConfig& config, SendFn send);",
        "    ~Batcher();",
        "    void record(const Sample& sample) noexcept;",
        "    void flush_now();",
        "    std::uint64_t dropped_total() const noexcept { return dropped_total_.load(); }",
        "",
        "private:",
        "    void run();",
        "    void drain();",
        "",
        "    ExporterConfig config_;",
        "    SampleRing ring_;",
        "    SendFn send_;",
        "    std::vector<Sample> pending_;",
        "    std::atomic<std::size_t> queued_{0};",
        "    std::atomic<std::uint64_t> dropped_total_{0};",
        "    std::mutex wake_mutex_;",
        "    std::condition_variable wake_;",
        "    bool stopping_ = false;",
        "    std::thread flusher_;",
        "};",
        "",
        f"}}  // namespace {lib}",
    ]))  # fmt: skip
    cfg_old = "struct ExporterConfig {\n    std::string endpoint;\n    std::string tenant;"
    cfg_new = (
        "struct ExporterConfig {\n    std::string endpoint;\n    std::string tenant;\n"
        f"    std::size_t batch_size = {b0};\n"
        f"    std::chrono::milliseconds flush_interval{{{f0}}};\n"
        "    std::size_t ring_capacity = 16384;"
    )
    c.replace(config_h, cfg_old, cfg_new, 12)
    s.fact("file_modified", "the exporter config carries the batch settings", (config_h,))
    cmake_old = f'option({big}_WITH_UDP "Build the legacy StatsD/UDP exporter" ON)'
    cmake_new = f'{cmake_old}\noption({option} "Queue samples and send them in batches" OFF)'
    c.replace("CMakeLists.txt", cmake_old, cmake_new, 9)
    c.replace("CMakeLists.txt", "  src/export/http_exporter.cpp\n",
              "  src/export/http_exporter.cpp\n  src/export/batcher.cpp\n", 17)  # fmt: skip
    s.fact("file_modified", "the option is in CMakeLists.txt", ("CMakeLists.txt",))
    c.todo([("queue", "", "completed"), ("flush", "", "in_progress"), ("cmake", "", "completed")],
           merge=True)  # fmt: skip
    pad(0.33)

    # --- batch size, first change; the build and the tests -------------------------------------
    user(f"Let's go bigger on the batches: {b1} samples per POST. The collector takes large "
         "bodies fine.")  # fmt: skip
    size_line = "    std::size_t batch_size = {};"
    c.replace(config_h, size_line.format(b0), size_line.format(b1), 15)
    tests = [
        "#include <gtest/gtest.h>",
        "",
        "#include <chrono>",
        "#include <thread>",
        "",
        '#include "export/batcher.h"',
        "",
        f"namespace {lib} {{",
        "namespace {",
        "",
        "struct Sent {",
        "    std::mutex mutex;",
        "    std::vector<std::vector<Sample>> batches;",
        "    void operator()(const std::vector<Sample>& batch) {",
        "        std::lock_guard<std::mutex> lock(mutex);",
        "        batches.push_back(batch);",
        "    }",
        "};",
        "",
        "TEST(SampleRingTest, RejectsWhenFull) {",
        "    SampleRing ring(2);",
        '    EXPECT_TRUE(ring.try_push(Sample{"requests", 1.0}));',
        '    EXPECT_TRUE(ring.try_push(Sample{"requests", 2.0}));',
        '    EXPECT_FALSE(ring.try_push(Sample{"requests", 3.0}));',
        "}",
        "",
        "TEST(BatcherTest, SendsFullBatch) {",
        "    Sent sent;",
        "    ExporterConfig config;",
        "    config.batch_size = 4;",
        "    {",
        "        Batcher batcher(config, std::ref(sent));",
        '        for (int i = 0; i < 4; ++i) batcher.record(Sample{"requests", 1.0});',
        "    }",
        "    ASSERT_EQ(sent.batches.size(), 1u);",
        "}",
        "",
        "TEST(BatcherTest, FlushesPartialBatchOnInterval) {",
        "    Sent sent;",
        "    ExporterConfig config;",
        "    config.flush_interval = std::chrono::milliseconds(20);",
        "    Batcher batcher(config, std::ref(sent));",
        '    batcher.record(Sample{"requests", 1.0});',
        "    std::this_thread::sleep_for(std::chrono::seconds(1));",
        "    std::lock_guard<std::mutex> lock(sent.mutex);",
        "    EXPECT_EQ(sent.batches.size(), 1u);",
        "}",
        "",
        "}  // namespace",
        f"}}  // namespace {lib}",
    ]
    c.create(
        test_file, "I am adding GoogleTest cases for the ring and the batcher.", "\n".join(tests)
    )
    s.fact("file_created", "the batcher tests", (test_file,))
    c.terminal(configure, "\n".join([
        "-- The CXX compiler identification is AppleClang 16.0.0.16000026",
        "-- Detecting CXX compiler ABI info - done",
        "-- Found CURL: /opt/homebrew/opt/curl/lib/libcurl.dylib (found version \"8.9.1\")",
        "-- Found Threads: TRUE",
        "-- Configuring done (1.9s)",
        "-- Generating done (0.1s)",
        f"-- Build files have been written to: {root}/build",
    ]), "Configure a build with batching switched on.")  # fmt: skip
    ring_line = "    std::optional<Sample> try_pop() noexcept;"
    failed_build = "\n".join([
        f"[{rng.randint(30, 40)}/58] Building CXX object tests/CMakeFiles/header_compat_cxx14.dir/"
        "header_compat.cpp.o",
        "FAILED: tests/CMakeFiles/header_compat_cxx14.dir/header_compat.cpp.o",
        f"In file included from {root}/tests/header_compat.cpp:6:",
        f"{root}/{ring_h}:22:10: error: no template named 'optional' in namespace 'std'",
        f"   22 | {ring_line}",
        "      |     ~~~~~^",
        "1 error generated.",
        "ninja: build stopped: subcommand failed.",
    ])  # fmt: skip
    c.terminal(build, failed_build, "Build everything, including the header checks.", code=1)
    ring_fixed = "    // The flusher only; false when the ring is empty.\n" \
                 "    bool try_pop(Sample& out) noexcept;"  # fmt: skip
    c.replace(ring_h, "    // The flusher only.\n" + ring_line, ring_fixed, 21, text=(
        "`std::optional` is C++17 and the header check builds the public headers as C++14; "
        "`try_pop` now fills an out-parameter instead."))  # fmt: skip
    c.replace(ring_h, "#include <memory>\n#include <optional>\n", "#include <memory>\n", 5)
    s.fact("error_resolved", "std::optional in the C++14 header",
           ("no template named 'optional'",), required=False)  # fmt: skip
    c.terminal(build, f"[58/58] Linking CXX executable tests/{lib}_tests",
               "Rebuild after the header fix.")  # fmt: skip
    batcher_tests = ["SampleRingTest.RejectsWhenFull", "BatcherTest.SendsFullBatch",
                     "BatcherTest.FlushesPartialBatchOnInterval"]  # fmt: skip
    others = list(_OTHER_TESTS)
    rng.shuffle(others)
    names1 = others[: rng.randint(15, 19)] + batcher_tests
    n1 = len(names1)
    interval_failure = [
        f"{root}/{test_file}:47: Failure",
        "Expected equality of these values:",
        "  sent.batches.size()",
        "    Which is: 0",
        "  1u",
        "    Which is: 1",
    ]
    interval_test = "BatcherTest.FlushesPartialBatchOnInterval"
    first, code = _ctest(rng, root, names1, {interval_test: interval_failure})
    c.terminal(ctest, first, "Run the whole test suite.", code=code)
    s.fact("command", "the ctest run", (ctest,), required=False)
    wait_old = (
        "        wake_.wait(lock, [this] {\n"
        "            return stopping_ || queued_.load() >= config_.batch_size;\n"
        "        });"
    )
    wait_new = (
        "        wake_.wait_for(lock, config_.flush_interval, [this] {\n"
        "            return stopping_ || queued_.load() >= config_.batch_size;\n"
        "        });"
    )
    c.replace(batcher, wait_old, wait_new, 26, text=(
        "The flusher only woke up for a full batch, so a partial one sat in the ring forever; "
        "it now also wakes when the flush interval runs out."))  # fmt: skip
    s.fact("error_resolved", "FlushesPartialBatchOnInterval failed: flusher never timed out",
           ("FlushesPartialBatchOnInterval",), required=False)  # fmt: skip
    green, _ = _ctest(rng, root, names1, {})
    c.terminal(ctest, green, "Re-run the tests after the flusher fix.", remind=True)
    pad(0.48)

    # --- the user's interjections -------------------------------------------------------------
    user(
        f"Also, don't touch anything under third_party/{vendored}. It's re-synced from upstream "
        "by a script and local patches get wiped without warning."
    )
    s.fact("constraint", f"third_party/{vendored} is off limits", (f"third_party/{vendored}",))
    s.say(f"Noted: nothing under third_party/{vendored} gets edited.")
    user("Unrelated question: which googletest commit are we pinned to? Security wants it "
         "for the SBOM.")  # fmt: skip
    c.grep("GIT_TAG", "cmake", {deps_cmake: [f"9:  GIT_TAG        {sha}  # v1.14.0",
                                             "16:  GIT_TAG        v3.11.3"]})  # fmt: skip
    c.read(deps_cmake, "\n".join([
        "include(FetchContent)",
        "",
        "find_package(CURL REQUIRED)",
        "find_package(Threads REQUIRED)",
        "",
        "FetchContent_Declare(",
        "  googletest",
        "  GIT_REPOSITORY https://github.com/google/googletest.git",
        f"  GIT_TAG        {sha}  # v1.14.0",
        ")",
        "",
        "FetchContent_Declare(",
        "  nlohmann_json",
        "  GIT_REPOSITORY https://github.com/nlohmann/json.git",
        "  GIT_TAG        v3.11.3",
        ")",
        "FetchContent_MakeAvailable(googletest nlohmann_json)",
        "",
        f"add_subdirectory(third_party/{vendored} EXCLUDE_FROM_ALL)",
    ]))  # fmt: skip
    s.say(f"googletest is pinned to `{sha}` (the v1.14.0 release), fetched by FetchContent.")
    s.fact("identifier", "the pinned googletest commit", (sha[:12],))
    user(
        "And cancel the Prometheus gauge item: the metrics team is replacing that endpoint "
        "anyway. Add one for a short section on the new option in docs/BUILDING.md instead."
    )
    docs_item = "Document the batching option in docs/BUILDING.md"
    c.todo([("gauge", "", "cancelled"), ("flush", "", "completed"), ("docs", docs_item, "pending"),
            ("retire", "", "in_progress")], merge=True)  # fmt: skip
    s.fact("todo", "the docs item was added and is open", (docs_item,))
    s.fact("todo", "the Prometheus gauge item was cancelled", ("Prometheus", "cancelled"))
    s.fact("todo", "batching and flushing is done", (content["flush"],), required=False)
    pad(0.6)

    # --- flush interval; the old flush thread; lints --------------------------------------------
    user(f"Flush every {f1} ms, not {f0} ms. The collector team says short intervals just "
         "produce lots of tiny batches.")  # fmt: skip
    c.replace(config_h, f"    std::chrono::milliseconds flush_interval{{{f0}}};",
              f"    std::chrono::milliseconds flush_interval{{{f1}}};", 16)  # fmt: skip
    c.grep(
        "FlushThread",
        ".",
        {
            flush_thread: [
                "3:FlushThread::FlushThread(Exporter& exporter, Period period)",
                "12:void FlushThread::run() {",
            ],
            "src/export/flush_thread.h": ["7:class FlushThread {"],
            "CMakeLists.txt": ["18:  src/export/flush_thread.cpp"],
        },
        text="The batcher flushes on its own now; checking who still uses the old flush thread.",
    )
    c.replace("CMakeLists.txt", "  src/export/flush_thread.cpp\n", "", 18)
    c.delete(flush_thread, "Nothing uses the periodic flush thread once the batcher owns flushing.")
    c.delete("src/export/flush_thread.h", "Its header goes with it.")
    s.fact("file_deleted", "the old flush thread", (flush_thread,))
    pad(0.7)
    c.lints(ring_h, [
        "L13:7: Class 'SampleRing' defines a non-default destructor but does not define a copy "
        "constructor, a copy assignment operator, a move constructor or a move assignment "
        "operator [cppcoreguidelines-special-member-functions] (severity: warning)",
    ])  # fmt: skip
    c.replace(ring_h, "    ~SampleRing();\n",
              "    ~SampleRing();\n    SampleRing(const SampleRing&) = delete;\n"
              "    SampleRing& operator=(const SampleRing&) = delete;\n", 16)  # fmt: skip
    c.lints(ring_h, [])
    s.fact("error_resolved", "clang-tidy special member functions on SampleRing",
           ("cppcoreguidelines-special-member-functions",), required=False)  # fmt: skip
    pad(0.82)

    # --- batch size, second change (the setting unnamed); the last run ------------------------
    user(f"Thinking about it more: make that {b2} per batch. Our biggest hosts push a lot more "
         "than I estimated.")  # fmt: skip
    c.replace(config_h, size_line.format(b1), size_line.format(b2), 15)
    s.fact("changed_value", f"batches of {b2}", (f"{b2} per batch",),
           stale=(f"{b0} samples", f"{b1} samples"))  # fmt: skip
    s.fact("changed_value", f"flush every {f1} ms", (f"{f1} ms",), stale=(f"{f0} ms",))
    added = [
        "TEST(BatcherTest, DropsNewestWhenFull) {",
        "    Sent sent;",
        "    ExporterConfig config;",
        "    config.ring_capacity = 5;",
        "    config.batch_size = 100;",
        "    Batcher batcher(config, std::ref(sent));",
        '    for (int i = 0; i < 8; ++i) batcher.record(Sample{"requests", 1.0});',
        "    EXPECT_EQ(batcher.dropped_total(), 3u);",
        "}",
        "",
        "TEST(BatcherTest, DrainsOnShutdown) {",
        "    Sent sent;",
        "    {",
        "        Batcher batcher(ExporterConfig{}, std::ref(sent));",
        '        batcher.record(Sample{"requests", 1.0});',
        "    }",
        "    EXPECT_EQ(sent.batches.size(), 1u);",
        "}",
        "",
    ]
    c.edit(
        test_file,
        "I am adding tests for a full ring and for shutdown.",
        "\n".join([MARKER, *added, "}  // namespace", MARKER]),
        [
            "      EXPECT_EQ(sent.batches.size(), 1u);",
            "  }",
            "  ",
            *(f"+ {line}" if line else "+ " for line in added),
            "  }  // namespace",
        ],
    )
    drop_tests = ["BatcherTest.DropsNewestWhenFull", "BatcherTest.DrainsOnShutdown"]
    names2 = names1 + drop_tests + [o for o in _OTHER_TESTS if o not in names1][: rng.randint(0, 2)]
    n2 = len(names2)
    drop_failure = [
        f"{root}/{test_file}:60: Failure",
        "Expected equality of these values:",
        "  batcher.dropped_total()",
        "    Which is: 0",
        "  3u",
        "    Which is: 3",
    ]
    last, code = _ctest(rng, root, names2, {"BatcherTest.DropsNewestWhenFull": drop_failure})
    c.terminal(ctest, last, "Run the suite with the new tests.", code=code)
    s.fact("test_status", "the last run", (f"1 tests failed out of {n2}",),
           stale=(f"1 tests failed out of {n1}",))  # fmt: skip
    s.fact("error_open", "the full-ring test still fails", ("DropsNewestWhenFull",))
    fix_item = "Make the full-ring drop test pass"
    c.todo([("retire", "", "completed"), ("tests", "", "in_progress"),
            ("fixdrop", fix_item, "pending")], merge=True)  # fmt: skip
    s.say(
        f"{n2} tests, one failing: `BatcherTest.DropsNewestWhenFull`. The ring rounds its "
        "capacity up to a power of two, so a ring asked for 5 slots holds 8 and nothing is "
        "dropped yet. Everything else passes and the lints are clean."
    )
    pad(0.97)
    user("OK, leave that one for tomorrow. Push the branch and open a draft PR.")
    c.terminal(f"git push -u origin {branch} && gh pr create --draft --fill", "\n".join([
        f"Enumerating objects: {rng.randint(30, 60)}, done.",
        "remote:",
        f"remote: Create a pull request for '{branch}' on GitHub by visiting:",
        f"remote:      https://github.com/{lib}-io/{lib}/pull/new/{branch}",
        "remote:",
        f" * [new branch]      {branch} -> {branch}",
        f"branch '{branch}' set up to track 'origin/{branch}'.",
        "",
        f"Creating draft pull request for {branch} into main in {lib}-io/{lib}",
        "",
        f"https://github.com/{lib}-io/{lib}/pull/{pr}",
    ]), "Publish the branch and open the draft PR.")  # fmt: skip
    s.say(f"Draft PR #{pr} is open. Picking it up tomorrow.")
    s.fact("last_message", "the draft PR is open", (f"Draft PR #{pr}",))
    return finish_session(s, family=FAMILY, seed=seed)
