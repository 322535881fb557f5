"""Pure text signals read off tool output and prose: errors, exit status, test results,
commands, file operations, decisions, to-dos, values the user set.

Everything here is a pure function of strings, deterministic, and free of any LLM. These
functions must never see a wire format or a token count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Literal

from compaction._textcache import text_cache

# Compaction re-reads the same tool outputs and prose on every pass (the digest tries several
# span lengths; an agent compacts again a few turns later): the pure readers below are cached,
# in caches bounded by the bytes they hold (`compaction._textcache`).


def cue(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A case-insensitive cue pattern, compiled to search lower-cased text (callers pass
    `text.lower()`). CPython's `re` skips ahead to a pattern's possible first characters only
    when it is case-sensitive: with IGNORECASE the prose readers ran 4–6× slower. The
    pattern must therefore be written in lower case (escapes such as `\\S` aside)."""
    if re.search(r"(?<!\\)(?<!\(\?)[A-Z]", pattern):  # `(?P<name>` aside
        raise ValueError(f"a cue pattern must be lower case: {pattern[:60]!r}")
    return re.compile(pattern, flags)


def clip(text: str, limit: int) -> str:
    """`text`, cut to at most `limit` characters with `...` marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- tool output -------------------------------------------------------------------------

_ERROR_LINE = re.compile(
    r"""^\s*(?:
        (?:actual:\ +)?                               # clojure.test: what a test threw
        (?:(?:[A-Za-z_]\w*[.\\])*[A-Z]\w*)?(?:Error|Exception|Failure)\b(?::|\s*$)  # Python, PHP
      | E\s{2,}\S                                   # pytest assertion detail
      | FAILED\s+\S                                 # pytest failed test id
      | ERROR\s*[:\s]\s*\S                          # generic ERROR lines
      | (?:error|fatal|panic)(?:\[[\w-]+\])?:\s      # compilers, git, rust, go, deno lint
      | TS\d+\ \[ERROR\]:\ \S                           # deno check: TS2345 [ERROR]: …
      | error\ \u2022\ \S                             # the Dart analyzer
      | error\ -\ [^\s:]+:\d+:\d+\ -\ \S                # the Dart analyzer of Dart 3
      | npm\s+ERR!                                  # npm
      | Segmentation\ fault
      | [^\s:]+:\d+(?::\d+)?:\s*(?:fatal\ )?error\b   # file:line[:col]: error
      | Traceback\ \(most\ recent\ call\ last\)
      | e:\ (?:file://)?\S+\.kts?\b                    # kotlinc
      | [^\s(]+\(\d+(?:,\d+)?\):\ error\b         # tsc, MSBuild: file(line[,col]): error …
      | \d+:\d+\ +error\ +\S                           # eslint's stylish: line:col  error  …
      | ●\ (?!Console\b)\S                             # jest: a failing test's header
      | ---\ FAIL:\ \S                                  # go test
      | \S.*\ >\ .+\ FAILED$                             # Gradle: Class > method() FAILED
      | test\ \S+\ \.\.\.\ FAILED$                         # cargo test (libtest)
      | \S.*\ \.\.\.\ FAILED\ \([\d.]+m?s\)$                  # deno test: name ... FAILED (7ms)
      | FAIL\ \S+\ \([\d.]+m?s\)                           # gotestsum: FAIL pkg.TestX (0.01s)
      | (?:\[[\w:.-]+\]\ +)?\[(?:ERROR|FATAL|error)\]\ +\S  # Maven, sbt, Gradle's ant tasks
      | Error\ in\ \S.*\ :                               # R: Error in f(x) : …
      | thread\ '[^']*'\ panicked\ at\ \S                   # Rust: a test's panic
      | [^\s:]+:\d+:\d+:\ [CWEF]:\ \S                      # RuboCop: file:l:c: C: Cop: …
      | \S.*\ at\ \S+\.(?:pl|pm|t)\ line\ \d+\.?$          # Perl's die: … at a.pm line 3.
    )""",
    re.VERBOSE,
)
# clojure.main's report says where on its line and what went wrong on the next one.
_CAUSE_BELOW = re.compile(r"^(?:Syntax|Execution) error\b.* at \(.*\)\.$")
# A report's error field saying there is none (Gemini CLI's shell tool: "Error: (none)").
_NO_ERROR = cue(r"(?:errors?|stderr)\s*:\s*(?:\(none\)|none|\(empty\)|n/a|null|0)?\s*$")
# An error line that states only the exit status ("Error: Command exited with code 1"): the
# outcome says that; it names nothing that failed.
_STATUS_ONLY = cue(
    r"(?:(?:error|fatal)\s*:\s*)?(?:the\s+)?(?:command|process)\s+(?:exited|failed|terminated)"
    r"\s+with\s+(?:exit\s+)?(?:code|status):?\s+-?\d+\s*\.?"
)
# A compiler diagnostic without the word "error" (Go: `file.go:88:14: message`); read only
# in the output of a command that failed.
_DIAGNOSTIC = re.compile(r"^[^\s:]+\.\w+:\d+(?::\d+)?: \S.*$", re.MULTILINE)
# A checker's closing verdict on a line of its own, for tools that print no exit status:
# `Errors: 2`, `Found 3 errors.`, `1 error generated.`, `Build FAILED.`.
_FAILED_VERDICT = cue(
    r"(?:(?:found\s+)?[1-9]\d*\s+errors?(?:\(s\))?(?:\s+generated)?|errors?\s*:\s*[1-9]\d*"
    r"|[1-9]\d*\s+failed\s+tests?|[1-9]\d*\s+issues?\s+found(?:\.\s+\(ran\s+in\s+[\d.]+s\))?"
    r"|(?:build|compilation|check)\s+failed|failed)\s*[.!]?"
)
_ERROR_ANYWHERE = re.compile(r"command not found|No such file or directory|Permission denied")
# Every error line contains one of these (lower-cased); finding them with `str.find` first
# spares a regex over every line of large outputs.
_ERROR_HINTS = (
    "error",
    "exception",
    "fail",
    "fatal",
    "panic",
    "segmentation",
    "not found",
    "no such file",
    "permission denied",
    "err!",
    "e  ",
    ".kt",
    "●",
    ": c: ",
    ": w: ",
    ".pm line ",
    ".pl line ",
    ".t line ",
)


def _line_starts_holding(lowered: str, hints: tuple[str, ...]) -> set[int]:
    """Where each line of `lowered` that holds one of `hints` starts: found with `str.find`,
    which spares a regex over every line of a large output."""
    starts: set[int] = set()
    for hint in hints:
        position = lowered.find(hint)
        while position != -1:
            starts.add(lowered.rfind("\n", 0, position) + 1)
            following = lowered.find("\n", position)
            position = -1 if following == -1 else lowered.find(hint, following)
    return starts


def _hinted_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line holding an error hint, in order."""
    spans = []
    for start in sorted(_line_starts_holding(text.lower(), _ERROR_HINTS)):
        end = text.find("\n", start)
        spans.append((start, len(text) if end == -1 else end))
    return spans


_TRACEBACK = "Traceback (most recent call last)"
_EXIT = cue(
    r"(?:exit(?:ed)?(?:\s+with)?\s+(?:code|status)|return\s*code|returncode|exit_code)"
    r"[\s:=]*(-?\d+)"
)
_EXIT_START = cue(r"exit|return")
_COUNT_WORD = re.compile(r"passed|failed|error", re.IGNORECASE)
_TEST_SUMMARY = re.compile(
    r"\b(\d+\s+(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
    r"(?:\s*[,;|]\s*\d+\s+(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|"
    r"ignored|measured|filtered\s+out|total|todo|pending))*)"
    r"(?:\s+in\s+[\d.]+s)?",
    re.IGNORECASE,
)
# Gradle's test task: `61 tests completed, 1 failed, 2 skipped`.
_GRADLE_TESTS = re.compile(
    r"^(\d+ tests? completed(?:, \d+ (?:failed|skipped))*)\s*$", re.MULTILINE
)
# Dart's test reporter: `+passed ~skipped -failed: verdict`, after the elapsed time.
_DART_TESTS = re.compile(
    r"^(?:\d+:\d\d\s+)?(\+\d+(?:\s+~\d+)?(?:\s+-\d+)?:\s+"
    r"(?:All tests passed!|Some tests failed\.))\s*$",
    re.MULTILINE,
)
# gotestsum's closing line: `DONE 37 tests, 2 skipped, 1 failure in 4.213s`.
_GOTESTSUM = re.compile(
    r"^DONE (\d+ tests?(?:, \d+ (?:skipped|failures?|errors?))*)(?: in [\d.]+m?s)?\s*$",
    re.MULTILINE,
)
# prove (Perl's TAP harness): `Failed 1/16 subtests` under each failing file, then the
# totals and the verdict (`Files=5, Tests=33,  3 wallclock secs (…)` / `Result: FAIL`).
_PROVE_FAILED = re.compile(r"^(Failed \d+/\d+ subtests)[ \t]*$", re.MULTILINE)
_PROVE_RESULT = re.compile(r"^(Files=\d+, Tests=\d+),[^\n]*\nResult: ([A-Z]+)[ \t]*$", re.MULTILINE)
_TESTS_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s", re.MULTILINE)
# Any runner's summary, read by its shape: counts tied to outcome words, in either order
# (`55 examples, 1 failure`, `Tests run: 42, Failures: 1`, `Failed: 1, Passed: 41`,
# `Total 34, Failed 1, Errors 0, Passed 33`).
_OUTCOME_WORDS = (
    r"passed|passing|pass|succeeded|successful|ok|failed|failing|failures?|fail|errors?|errored|"
    r"broken|skipped|skip|pending|ignored|excluded|incomplete|risky|todo|total|tests?|examples?|"
    r"specs?|cases?|assertions?|scenarios?|steps?|checks?|suites?"
)
# What is counted, between a count and its outcome (CTest's `3 tests failed`).
_COUNTED_NOUNS = r"tests?|examples?|specs?|cases?|scenarios?|checks?"
# Searched in lower-cased text (`cue`): outputs are large and most lines hold digits. A
# total may close a line (`out of 59`).
_COUNT = cue(
    # A fraction of all (nimble's `Only 45/48 tests passed`): the count and the total.
    rf"\b(?P<part>\d+)/(?P<of>\d+)\s+(?:(?:{_COUNTED_NOUNS})\s+)?(?P<share>{_OUTCOME_WORDS})\b"
    rf"|\b(?P<n>\d+)\s+(?:(?:{_COUNTED_NOUNS})\s+)?(?P<word>{_OUTCOME_WORDS})\b"
    rf"|\b(?P<label>{_OUTCOME_WORDS})(?:\s+(?:run|ran|executed))?\s*[:=]\s*(?P<m>\d+)\b"
    r"|\bout\s+of\s+(?P<total>\d+)\b"
    # A list of outcome words each followed by its count (sbt's `Total 34, Failed 1, …`,
    # testthat's `[ FAIL 1 | WARN 0 | SKIP 0 | PASS 36 ]`).
    rf"|\b(?P<listed>{_OUTCOME_WORDS})\s+(?P<k>\d+)(?=\s*(?:[,|\]]|$))"
)
_VERDICT_WORDS = frozenset(
    [
        "pass",
        "passed",
        "passing",
        "succeeded",
        "successful",
        "ok",
        "fail",
        "failed",
        "failing",
        "failure",
        "failures",
        "error",
        "errors",
        "errored",
        "broken",
    ]
)
_FAILING_WORDS = frozenset(
    ["fail", "failed", "failing", "failure", "failures", "error", "errors", "errored", "broken"]
)
_PASSING_WORDS = _VERDICT_WORDS - _FAILING_WORDS
# One of these is in every summary `_counted_summary` reads (a `str.find` spares the regex).
_VERDICT_HINTS = ("pass", "fail", "error", "succe", "broken", " ok")
_DIGIT = re.compile(r"\d")
# Counts that stand alone on their lines in some runners' summaries (mocha, tap reporters).
_LONE_WORDS = frozenset({"passing", "failing", "pending"})
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED \([^)]*\))\s*$", re.MULTILINE)


# A terminal's colour and style codes (ANSI SGR and other CSI sequences).
_COLOUR_CODE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def without_colours(text: str) -> str:
    """`text` without the terminal's colour codes a tool left in it (a runner that colours
    its report whatever the terminal)."""
    return _COLOUR_CODE.sub("", text) if "\x1b[" in text else text


def error_lines(text: str, limit: int = 5) -> list[str]:
    """The distinctive error lines of a tool output, most informative first, deduplicated.

    A Python traceback contributes its final `Type: message` line (the one that names the
    error), not the frames.
    """
    found: list[str] = _phpstan_rows(text) if _PHPSTAN_VERDICT in text else []
    seen: set[str] = set(found)
    for start, end in _hinted_lines(text):
        line = text[start:end].strip()
        lowered = line.lower()
        if not line or line.startswith(_TRACEBACK) or _NO_ERROR.match(lowered):
            continue
        if _STATUS_ONLY.fullmatch(lowered):
            continue
        cause_below = _CAUSE_BELOW.match(line) is not None
        if not (cause_below or _ERROR_LINE.match(line) or _ERROR_ANYWHERE.search(line)):
            continue
        # Frames and source lines of a traceback are not errors of their own, nor pytest's
        # introspection of an assertion's operands (`E    +  where 59 = len(…)`).
        if line.startswith(('File "', "^")) or _INTROSPECTION.match(line):
            continue
        if cause_below:
            cause = text[end + 1 :].lstrip("\n").split("\n", 1)[0].strip()
            line = f"{line} {cause}" if cause else line
        elif _names_only_its_kind(line, text[end + 1 : end + 400]):
            detail = _detail_below(text, end)
            if detail:
                line = f"{line}{ERROR_DETAIL}{detail}"
        clipped = _clip_error(line)
        if clipped not in seen:
            seen.add(clipped)
            found.append(clipped)
    # A line another one holds whole says nothing more (pytest's `E  assert 59 == 60` under
    # `FAILED t.py::test_x - assert 59 == 60`).
    if len(found) > 1:
        cores = [_core(f) for f in found]
        held = {
            f: next((g for g in found if core in g and g != f), None)
            for f, core in zip(found, cores, strict=True)
        }
        # libtest's `test x ... FAILED` is held by its panic, which is its detail.
        failed = {g: f for f, g in held.items() if g is not None and _LIBTEST_FAILED.match(f)}
        found = [_with_panic(failed[f], f) if f in failed else f for f in found if held[f] is None]
    # The last exception line of a traceback is what a reader needs most.
    found.sort(key=lambda s: 0 if re.match(r"^[\w.]*(Error|Exception)\b", s) else 1)
    return found[:limit]


# What an error's line says besides where and what kind: a path with its line and column,
# a bracketed code, the words that name an error ("ParseError", "error:", "panicked at").
_WHERE_AND_KIND = re.compile(
    r"[^\s:()]+(?::\d+)+:?|\(\d+(?:,\d+)?\)|\[[\w-]+\]|npm\s+ERR!"
    r"|\b(?:[\w.]*(?:error|exception|failure)|fail(?:ed)?|fatal|panic(?:ked)?|thread|at|in)\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"\w+")
# A name in code (`TestRetries`, `test_empty`, `cart.total`): what failed, named.
_IDENTIFIER = re.compile(r"[a-z][A-Z]|\w_\w|[a-z]\.[a-z]")
# A line showing the source an error points at, not saying anything: a gutter or a marker
# (`   │`, `12 │   total(x)`, `   |         ^^^^`, `  --> src/a.rs:3:5`, `  ➜ 48▕ …`), a
# stack frame (`at Foo.bar (a.js:3:1)`, `# ./spec/a_spec.rb:4:in …`).
_SOURCE_LINE = re.compile(r"^\s*(?:\d+\s*)?[│|┌└╭╰▕➜^~]|^\s*-->|^\s*(?:at|#)\s|^\s*\d+\s*$")
# A line of bracketed tags a harness appends (`[result-id: r44] [rerun: b53]`).
_TAGS_ONLY = re.compile(r"^\s*(?:\[[^\]\n]*\]\s*)+$")
#: How far below an error's line its message is looked for, and how long it is at most.
_DETAIL_LINES = 12
_DETAIL_CHARS = 160


#: Between an error's line and the message printed under it that it takes on
#: ("ParseError — syntax error, unexpected …").
ERROR_DETAIL = " — "


def without_dirs(text: str) -> str:
    """`text` with the directories of its paths left out, as a line short of room shows an
    error: `/home/u/app/tests/CartTests.cs(22): error …` → `CartTests.cs(22): error …`."""
    return _DIRS.sub("", text)


# A file's directories (not a URL's: nothing right before them that a URL has there), the
# file named with its extension (not `Exporter/retries …`, `internal/outbox.TestRetries`).
_DIRS = re.compile(r"(?<![\w.:/~-])(?:~?/)?(?:[\w.@+-]+/)+(?=[\w@+-][\w.@+-]*\.[a-z]{1,5}\b)")


def _names_only_its_kind(line: str, below: str) -> bool:
    """Whether an error's line says only where it is and what kind it is, and leaves what
    went wrong to the lines below it (`below`): "ParseError", "src/Cart.hs:41:9: error:
    [GHC-83865]", R's "Error in charge(order) :", Rust's "thread 't' panicked at a.rs:3:5:";
    or names it in a word or two, then shows the source and says it under that ("error:
    Unknown variable")."""
    if line.endswith(":"):
        return True
    left = _WHERE_AND_KIND.sub(" ", line)
    words = len(_TOKEN.findall(left))
    if words == 0:
        return True
    if words > 2 or _IDENTIFIER.search(left):
        return False
    following = next((b for b in below.split("\n", 4)[:4] if b.strip()), "")
    return _SOURCE_LINE.match(following) is not None


def _detail_below(text: str, end: int) -> str:
    """What went wrong, under an error's line ending at `end`: its first lines of prose
    after any blank lines and source it shows, up to the next blank line (or source, or an
    error line of its own, which is no one's detail); "" if there is none."""
    found: list[str] = []
    for line in text[end + 1 :].split("\n", _DETAIL_LINES)[:_DETAIL_LINES]:
        stripped = line.strip()
        if not stripped or _SOURCE_LINE.match(line) or _TAGS_ONLY.match(line):
            if found:
                break
            continue
        if _ERROR_LINE.match(line) or stripped.startswith(("note:", "help:", "Calls:")):
            break
        found.append(stripped)
        if sum(map(len, found)) >= _DETAIL_CHARS:
            break
    return clip(" ".join(found), _DETAIL_CHARS)


def _core(line: str) -> str:
    """What of an error line another holds when it says the same: pytest's detail without
    its `E`; libtest's `test x ... FAILED` as its panic names it (`thread 'x' panicked`)."""
    if _DETAIL.match(line):
        return line[1:].lstrip()
    if m := _LIBTEST_FAILED.match(line):
        return f"thread '{m.group(1)}' panicked"
    return line


#: How long an error line is at most; cut, it keeps its end too, where many tools name the
#: rule or code (`… - undefined_named_parameter`).
_ERROR_CHARS = 200
_ERROR_TAIL = 30


def _clip_error(line: str) -> str:
    """An error line at most `_ERROR_CHARS` long: a line as printed keeps its end too, one
    with the message from below it joined on keeps that message's start."""
    if len(line) <= _ERROR_CHARS:
        return line
    if ERROR_DETAIL in line:
        return line[:_ERROR_CHARS]
    return f"{line[: _ERROR_CHARS - _ERROR_TAIL - 3]} … {line[-_ERROR_TAIL:]}"


# PHPStan's table: a file's header row, then a row per error (its line, the message over one
# or more lines, its identifier after 🪪), closed by its verdict.
_PHPSTAN_VERDICT = "[ERROR] Found"
_PHPSTAN_FILE = re.compile(r"^ +Line +(\S.*?)\s*$")
_PHPSTAN_ROW = re.compile(r"^ +(\d+) {2,}(\S.*?)\s*$")
_PHPSTAN_MORE = re.compile(r"^ {5,}(\S.*?)\s*$")


def _phpstan_rows(text: str) -> list[str]:
    """PHPStan's errors, one line each: `file:line message (identifier)`."""
    found: list[str] = []
    path = ""
    row: list[str] = []

    def close() -> None:
        if row:
            found.append(_clip_error(" ".join(row)))
            row.clear()

    for line in text.split("\n"):
        if header := _PHPSTAN_FILE.match(line):
            close()
            path = header.group(1)
        elif path and (start := _PHPSTAN_ROW.match(line)):
            close()
            row.append(f"{path}:{start.group(1)} {start.group(2)}")
        elif row and (more := _PHPSTAN_MORE.match(line)):
            words = more.group(1)
            if words.startswith("\U0001faaa"):  # 🪪 the identifier
                row.append(f"({words[1:].strip()})")
            elif not words.startswith("\U0001f4a1"):  # 💡 a tip
                row.append(words)
        else:
            close()
    close()
    return found


def _with_panic(failed: str, panic: str) -> str:
    """libtest's `test x ... FAILED` with what its panic said: "test x ... FAILED — panicked
    at src/a.rs:3:5: assertion `left == right` failed left: 2 right: 3"."""
    said = _PANICKED.sub("panicked", panic, count=1).replace(ERROR_DETAIL, " ", 1)
    return _clip_error(f"{failed}{ERROR_DETAIL}{said}")


_LIBTEST_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED$")
_PANICKED = re.compile(r"^thread '[^']*' panicked")
_INTROSPECTION = re.compile(r"E\s+\+\s")
# pytest's mark before an assertion's detail.
_DETAIL = re.compile(r"^E\s+")


def exit_status(text: str, *, is_error: bool = False) -> int | None:
    """The exit status a tool output reports, if it reports one."""
    tail = text[-2000:].lower()
    if "exit" not in tail and "code" not in tail:
        return 1 if is_error else None
    # The last of the non-overlapping matches, tried only where one can start (each begins
    # with "exit" or "return"): a full scan of the pattern is several times slower.
    last: re.Match[str] | None = None
    position = 0
    for candidate in _EXIT_START.finditer(tail):
        start = candidate.start()
        if start < position:
            continue
        match = _EXIT.match(tail, start)
        if match is not None:
            last = match
            position = max(match.end(), start + 1)
    if last is not None:
        return int(last.group(1))
    return 1 if is_error else None


# A line naming itself a summary or result, with a count of passed or failed tests on it
# (`3 passed`, or labelled: .NET's `Test summary: total: 47, failed: 1, succeeded: 46`).
_LABELLED_SUMMARY = re.compile(
    r"^[ \t]*((?:[A-Za-z][\w ]{0,20})?(?:[Ss]ummary|[Rr]esults?):[^\n]*?"
    r"(?:\b\d+(?:/\d+)?\s+(?:tests?\s+)?(?:passed|failed)\b|\b(?:passed|failed|succeeded):\s*\d+)"
    r"[^\n]*)$",
    re.MULTILINE,
)
# How long a run took, closing its summary line: `in 0.2s`, `in 0.4 (0.7) seconds`.
_TOOK = re.compile(r"\s+(?:in|after)\s+[\d.]+\s*(?:\([\d.]+\)\s*)?(?:ms|s|secs?|seconds?)\.?\s*$")


def _as_printed(line: str) -> str:
    """A summary line as the runner printed it, its rule of `=` or `-` and the time it took
    aside: zig's `35/36 tests passed; 1 failed`, XCTest's `Executed 36 tests, with 1 failure
    (0 unexpected)`, PHPUnit's `Failures: 1.`."""
    return clip(_TOOK.sub("", line.strip().strip("=-*# ")).strip(), 200)


# A line saying how many tests ran, above the line of their outcome counts.
_RAN_LINE = re.compile(r"^Ran \d+ tests?\b[^\n]{0,60}$")


@text_cache()
def test_summary(text: str) -> str | None:
    """The last test-run summary line (pytest's `3 failed, 10 passed`, unittest's `Ran N`),
    with the line of how many ran just above it where the runner prints one (clojure.test's
    "Ran 23 tests containing 48 assertions." above "1 failures, 0 errors.")."""
    tail = unwrap_output(text)[-4000:]
    found = _summary_line(tail)
    at = tail.rfind(found) if found is not None and "Ran " in tail else -1
    if found is not None and at > 0:
        above = tail[:at].rstrip().rsplit("\n", 1)[-1].strip()
        if _RAN_LINE.match(above) and not found.startswith("Ran "):
            return f"{above} {found}"
    return found


def _summary_line(tail: str) -> str | None:
    gradle = _GRADLE_TESTS.findall(tail) if "tests completed" in tail else None
    if gradle:
        return str(gradle[-1])
    # A line that calls itself the summary or result wins over lines printed around it
    # (zig's `Build Summary: … 35/36 tests passed; 1 failed` above its step tree).
    labelled = _LABELLED_SUMMARY.findall(tail) if "ummary:" in tail or "esult:" in tail else None
    if labelled:
        return _as_printed(labelled[-1])
    # Only the line holding the last count word can hold the last summary.
    last = max(tail.rfind(" passed"), tail.rfind(" failed"), tail.rfind(" error"))
    if last >= 0:
        start = tail.rfind("\n", 0, last) + 1
        end = tail.find("\n", last)
        line = tail[start : len(tail) if end == -1 else end]
        summaries = [m.group(1) for m in _TEST_SUMMARY.finditer(line)]
        if any(_COUNT_WORD.search(s) for s in summaries):
            return _as_printed(line)
    prove = _PROVE_RESULT.findall(tail) if "Result: " in tail else None
    if prove:
        totals, verdict = prove[-1]
        return "; ".join([*_PROVE_FAILED.findall(tail), f"{totals}, Result: {verdict}"])
    dart = _DART_TESTS.findall(tail) if " tests " in tail else None
    if dart:
        return str(dart[-1])
    done = _GOTESTSUM.findall(tail) if "DONE " in tail else None
    if done:
        return str(done[-1])
    ran = _TESTS_RAN.search(tail) if "Ran " in tail else None
    if ran:
        result = _UNITTEST_RESULT.search(tail)
        outcome = result.group(1) if result else "no result line"
        return f"ran {ran.group(1)} tests: {outcome}"
    return _counted_summary(tail[-2500:])


def _lowered(text: str) -> str:
    """`text` in lower case, one character for each of its characters (non-ASCII ones become
    `?`), so that offsets found in it hold in `text`."""
    lowered = text.lower()
    return (
        lowered if len(lowered) == len(text) else text.encode("ascii", "replace").decode().lower()
    )


def _counts(lowered: str) -> list[tuple[int, str, re.Match[str]]]:
    """(count, outcome word, match) of each outcome count in lower-cased text."""
    out = []
    for match in _COUNT.finditer(lowered):
        if match["part"] is not None:
            part, of, word = int(match["part"]), int(match["of"]), match["share"]
            out += [(part, word, match), (of, "total", match)]
            if word in _PASSING_WORDS and part < of:
                out.append((of - part, "failed", match))  # the rest did not pass
        elif match["n"] is not None:
            out.append((int(match["n"]), match["word"], match))
        elif match["total"] is not None:
            out.append((int(match["total"]), "total", match))
        elif match["listed"] is not None:
            out.append((int(match["k"]), match["listed"], match))
        else:
            out.append((int(match["m"]), match["label"], match))
    return out


def _counted_summary(tail: str) -> str | None:
    """The last line that reads as a run's summary by its shape: two or more counts, one of
    them an outcome (`55 examples, 1 failure`, `Tests run: 9, Failures: 0, Errors: 0`); or
    lone outcome counts on lines of their own, read together (mocha's `41 passing` then
    `1 failing`; elm-test's `Passed:   52` then `Failed:   1`, two or more of them where they
    are labelled). Only lines holding an outcome word are read (found with `str.find`)."""
    lowered = _lowered(tail)
    lone: list[tuple[int, int]] = []  # (start, end) of lone counts in `tail`, last first
    labelled = 0  # how many of them are labels (`Failed: 1`)
    for start in sorted(_line_starts_holding(lowered, _VERDICT_HINTS), reverse=True):
        end = lowered.find("\n", start)
        end = len(lowered) if end == -1 else end
        line = lowered[start:end]
        counts = _counts(line) if _DIGIT.search(line) else []
        if not counts:
            continue
        if lone and lowered[end : lone[-1][0]].strip():
            break  # something else between: the lone counts read so far are the summary
        if len(counts) >= 2 and any(c[1] in _VERDICT_WORDS for c in counts) and not lone:
            return _as_printed(tail[start:end])
        first = counts[0][2]
        label = len(counts) == 1 and first["label"] in _VERDICT_WORDS
        if len(counts) == 1 and (
            (counts[0][1] in _LONE_WORDS and len(line.strip()) <= len(first[0]) + 12)
            or (label and len(line.strip()) == len(first[0]))
        ):
            lone.append((start + first.start(), start + first.end()))
            labelled += label
        elif lone:
            break
    if not lone or labelled == len(lone) == 1:
        return None  # one `Errors: 0` alone is not a run's summary
    return ", ".join(tail[a:b] for a, b in reversed(lone))


@text_cache()
def summary_fails(summary: str) -> bool:
    """Whether a test summary (as `test_summary` returns it) counts a failure or an error."""
    if re.search(r"\bFAILED\b|(?:^|\s)-[1-9]\d*:|\bSome tests failed\b|Result: FAIL", summary):
        return True
    return any(n > 0 and word in _FAILING_WORDS for n, word, _m in _counts(_lowered(summary)))


_STREAM_KEYS = ("stdout", "output", "result", "stderr", "error", "content", "message", "text")
# `code` last: beside a stream it is the run's exit code in many shells' envelopes.
_EXIT_KEYS = (
    "exit_code",
    "exitCode",
    "returncode",
    "return_code",
    "exit_status",
    "status_code",
    "code",
)
# An envelope's own verdict, where it states no exit code (`{"ok": false, ...}`).
_OK_KEYS = ("ok", "success")


# A stream after its label, its first line on the label's own (Gemini CLI's shell result:
# "Stdout: …\nStderr: …\nError: …\nExit Code: 1").
_STREAM_LABEL = re.compile(r"^(?:Stdout|Stderr): ", re.MULTILINE)


# A failed call's output inside a tag named for the error, after a label ("Error: <…>").
_ERROR_TAG = re.compile(r"\A[\w ]{1,40}:[ \t]*<([\w-]*error[\w-]*)>\n?(.*?)\n?</\1>\Z", re.S)


@text_cache()
def unwrap_output(text: str) -> str:
    """The plain text of a tool output that arrived wrapped in JSON, as many shells return it
    (`{"stdout": "...", "stderr": "", "exit_code": 1}`), with its streams labelled
    (`Stdout: …`, the labels dropped), or in a labelled error tag (`Error:
    <tool-runtime-error>…</tool-runtime-error>`); other text comes back unchanged."""
    stripped = text.strip()
    tagged = _ERROR_TAG.match(stripped) if stripped.endswith("error>") else None
    if tagged is not None and "\n" in tagged.group(2).strip():
        # A labelled error tag around a whole output (Octofriend's `Error:
        # <tool-runtime-error>…`); a tag alone, or around one line, is the message's own
        # (Claude Code's `<tool_use_error>`).
        return unwrap_output(tagged.group(2))
    if not (stripped.startswith("{") and stripped.endswith("}")):
        if "Stdout: " in text or "Stderr: " in text:
            return _STREAM_LABEL.sub("", text)
        return text
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return text
    if not isinstance(data, dict):
        return text
    # The streams and the code may also sit one level down (`{"output": …, "metadata":
    # {"exit_code": 1}}`, `{"command": …, "command_finished": {"output": …, "exit_code": 1}}`).
    layers = [data, *(v for v in data.values() if isinstance(v, dict))]
    if not any(k in layer for layer in layers for k in (*_STREAM_KEYS, *_EXIT_KEYS)):
        return text
    pieces = [layer[k] for layer in layers for k in _STREAM_KEYS if isinstance(layer.get(k), str)]
    pieces = [p for p in pieces if p]
    codes = (layer.get(k) for layer in layers for k in _EXIT_KEYS)
    code = next((c for c in codes if isinstance(c, int) and not isinstance(c, bool)), None)
    if code is not None:
        pieces.append(f"exit code {code}")
    elif any(layer.get(k) is False for layer in layers for k in _OK_KEYS):
        pieces.append("failed")
    return "\n".join(pieces) if pieces else text


@text_cache()
def outcome_of(text: str, *, is_error: bool = False) -> tuple[str, tuple[str, ...]]:
    """A one-word outcome (`ok`, `failed`, `exit N`) and the error lines behind it."""
    text = unwrap_output(text)
    errors = tuple(error_lines(text))
    status = exit_status(text, is_error=is_error)
    summary = test_summary(text)
    if status is not None:
        # A reported exit status is the tool's own verdict; text that looks like errors
        # (a linter's "5 errors fixed", logged warnings) does not overrule a zero.
        if status == 0:
            return "ok", ()
        return f"exit {status}", _why_failed(text, errors, summary) or _flagged(text, is_error)
    if (summary and summary_fails(summary)) or _failed_verdict(text):
        return "failed", _why_failed(text, errors, summary)
    if is_error or any(not e.lower().startswith("warning") for e in errors):
        return "error", errors or _flagged(text, is_error)
    raised = _RAISED.search(text) if "stack traceback:" in text else None
    if raised is not None:
        return "error", (clip(raised.group(1).strip(), 200),)
    return "ok", ()


def _flagged(text: str, is_error: bool) -> tuple[str, ...]:
    """Why a result the tool flagged as an error failed, where no reader knows its lines
    (a fetch's `Request failed with status code 404`, a read's `EISDIR: …`): its first line."""
    if not is_error:
        return ()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return (clip(first, 200),) if first else ()


# An error raised with its stack traceback after it (Lua's interpreter): the line above.
_RAISED = re.compile(r"^([^\n]*\S[^\n]*)\n[ \t]*stack traceback:[ \t]*$", re.MULTILINE)


# How runners list the tests that failed, by shape: a numbered list of failures (ExUnit,
# RSpec, mocha, PHPUnit, Minitest: `  1) test retries (App.SchedulerTest)`), VSTest's
# `  Failed App.Tests.Retries [12 ms]`, Maven Surefire's `[ERROR]   FooTest.retries:31 …`.
_FAILED_TEST = re.compile(
    r"^\s{0,6}(?:\d{1,3}\)\s+\S.{2,160}|Failed\s+[\w.+<>`,\[\]-]+\s+\[[\d.,]+\s*m?s\]"
    r"|\[ERROR\]\s{2,}[\w$.]+[.#][\w$]+(?::\d+)?\b.{0,160}"
    # GoogleTest's verdict on one test; CTest's list of the tests that failed; Dart's
    # reporter line of a test that failed (`[E]`).
    r"|\[\s+FAILED\s+\]\s+[A-Za-z_][\w.:/<>-]*\s+\(\d+\s+ms\)"
    r"|\d+:\d\d\s+\+\d+(?:\s+~\d+)?\s+-\d+:\s+.{1,200}\s\[E\]"
    # Julia's Test: `<test set>: Test Failed at <file>:<line>`.
    r"|\S.{0,200}?: Test Failed at \S+:\d+"
    # A verdict in brackets first, then the test (alcotest and many in-house runners); a
    # cross mark first (vitest, node's test runner).
    r"|\[(?:FAIL|FAILED|FAILURE)\]\s+\S.{2,160}|[×✗✘]\s+\S.{2,160}"
    # A failure logged at the error level, the time first (Expecto: `[14:46:44 ERR] X failed
    # in 00:00:00.72.`).
    r"|\[[\d:.T-]{5,30}\s+(?:ERR|ERROR|FTL|FATAL)\]\s+\S.{2,160}?\s+failed\b.{0,80}"
    # The test's location, its name after it: busted's `Failure → spec/x.lua @ 31` over the
    # name, testthat's `── Failure (test-x.R:31:3): name ──`.
    r"|(?:Failure|Error) → (?P<where>\S+ @ \d+)\n(?P<name>[^\n]{3,160})"
    r"|── (?:Failure|Error) \((?P<at>[^)\n]+)\): (?P<test>[^\n]{3,160}?) ─+"
    # Test::More's diagnostics (TAP, under prove): the name quoted, then where it failed.
    r"|#\s+Failed test '(?P<tap>[^'\n]{3,160})'\n#\s+at (?P<tap_at>\S+ line \d+)\."
    # clojure.test's reporter: `FAIL in (retries-test) (queue_test.clj:31)`.
    r"|(?:FAIL|ERROR) in \([^()\n]{1,160}\) \([^()\n]{1,200}\)"
    # gleeunit's: what failed and where, then ` test: module.function` on the next line.
    r"|(?:let assert|assert|panic|todo|Error|Exception) (?P<gl_at>\S+\.gleam:\d+)\n"
    r"\s*test: (?P<gl>[^\n]{3,160})"
    # rackunit's: the test case's name under a rule, its verdict, then where it failed.
    r"|-{20}\n(?P<rk>(?!(?:FAILURE|ERROR)\n)[^\n]{3,160})\n(?:FAILURE|ERROR)\n"
    r"(?:(?:(?!-{20})[^\n]*\n){0,8}?location:\s+(?P<rk_at>\S+))?"
    r"|\d{1,5}\s+-\s+[\w.:/<>-]+\s+\((?:Failed|SEGFAULT|Timeout|Subprocess aborted|"
    r"Exception|Not Run)\))\s*$",
    re.MULTILINE,
)


def _failed_verdict(text: str) -> bool:
    """Whether one of the output's last lines is a checker's failing verdict, alone."""
    tail = text[-600:].lower()
    if "error" not in tail and "fail" not in tail:
        return False
    lines = (line.strip() for line in tail.rsplit("\n", 8)[-8:])
    return any(line and _FAILED_VERDICT.fullmatch(line) for line in lines)


def _why_failed(text: str, errors: tuple[str, ...], summary: str | None) -> tuple[str, ...]:
    """What a failed command's output says failed: the tests its runner lists as failed,
    then its error lines, or else its `file:line: message` diagnostics. The run's test
    `summary` is not one of them, even on an error line (Julia's `ERROR: LoadError: Some
    tests did not pass: …`): the test status holds it, and a later run's replaces it."""
    failures = _failed_tests(text)
    rest = errors or _diagnostics(text)
    rest = tuple(e for e in rest if not (summary and summary in e))
    return (*failures, *(e for e in rest if e not in failures))[:5]


def _failed_tests(text: str, limit: int = 3) -> tuple[str, ...]:
    """The first tests a failing run lists as failed, by the shape of its list."""
    found: list[str] = []
    for match in _FAILED_TEST.finditer(text):
        name = match["name"] or match["test"] or match["tap"] or match["gl"] or match["rk"]
        if name:
            where = (
                match["where"] or match["at"] or match["tap_at"] or match["gl_at"] or match["rk_at"]
            )
            line = f"{name} ({where})" if where else name
        else:
            line = match.group(0).strip().rstrip(":")
        if line not in found:
            found.append(line[:200])
        if len(found) >= limit:
            break
    return tuple(found)


def _diagnostics(text: str, limit: int = 3) -> tuple[str, ...]:
    """The first `file:line[:col]: message` lines of a failed command's output."""
    found: list[str] = []
    for match in _DIAGNOSTIC.finditer(text):
        if len(found) >= limit:
            break
        found.append(match.group(0)[:200])
    return tuple(found)


# --- file operations ----------------------------------------------------------------------
# What a tool call did is read through the tool table (`compaction.summarize.tools`); here
# only what a shell command line evidently touched, and what looks like a path.

FileOp = Literal["read", "created", "modified", "written", "deleted"]

_PATHLIKE = re.compile(
    r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
)
_NOT_PATH_SUFFIX = {"com", "org", "net", "io", "e", "g", "i", "etc", "vs"}


def looks_like_path(token: str) -> bool:
    token = token.strip("'\"`,;:()[]")
    if not token or len(token) > 200 or token.startswith(("http:", "https:", "-")):
        return False
    if "/" not in token and "." not in token:
        return False
    if any(c in token for c in "()'\"{}<>$*"):
        return False  # code or a shell expression, not a file name
    match = _PATHLIKE.fullmatch(token)
    if match is None:
        return "/" in token and not token.endswith("/") and " " not in token
    suffix = token.rsplit(".", 1)[-1].lower()
    return suffix not in _NOT_PATH_SUFFIX and not suffix.isdigit()


@text_cache()
def paths_in(text: str) -> tuple[str, ...]:
    """The file paths `text` names (with a suffix: `src/app.py`), in order."""
    return tuple(m.group(1) for m in _PATHLIKE.finditer(text) if looks_like_path(m.group(1)))


_SHELL_READERS = {"cat", "head", "tail", "less", "more", "bat", "nl", "wc", "diff", "grep"}
_SHELL_RUNNERS = {"python", "python3", "node", "ruby", "bash", "sh", "pytest", "go", "cargo"}
# The programs whose arguments `file_ops_of_command` reads (the others' are not looked at).
_FILE_PROGRAMS = frozenset(
    {"rm", "git", "touch", "mkdir", "mv", "cp", "sed", "patch", *_SHELL_READERS, *_SHELL_RUNNERS}
)


_REDIRECT_OPERATOR = re.compile(r"^\d?(>>|>|<)&?")
_REDIRECT_TARGET = re.compile(r"(?<![0-9&])>{1,2}\s*([^\s;&|<>]+)")


# A shell command's tokens: quoted strings whole, a `#` word starting a comment, a separator
# between commands (outside quotes only), a bare word. Enough to find file arguments, and many
# times faster than `shlex`.
_SHELL_TOKEN = re.compile(
    r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|(#[^\n]*)|(&&|\|\||[;\n|])|((?:[^\s'";|&]|&(?!&))+)"""
)


def _split_commands(command: str) -> Iterator[list[str]]:
    """The words of each command of a command line (`a && b; c | d`)."""
    words: list[str] = []
    commented = False
    for single, double, comment, separator, bare in _SHELL_TOKEN.findall(command):
        if separator:
            if words:
                yield words
            words, commented = [], False
        elif comment:
            commented = True
        elif not commented:
            words.append(single or double or bare)
    if words:
        yield words


def _without_redirections(words: list[str]) -> list[str]:
    """Arguments proper: no options, no redirection operators or their targets."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        operator = _REDIRECT_OPERATOR.match(word)
        if operator:
            skip = operator.end() == len(word)  # `> file` (target is the next word)
            continue
        if not word.startswith("-"):
            kept.append(word)
    return kept


@text_cache()
def file_ops_of_command(command: str) -> tuple[tuple[str, FileOp], ...]:
    """Files a shell command evidently touched: `rm` and `git rm`, `touch`, `mv` and `git mv`,
    `sed -i`, redirections."""
    ops: list[tuple[str, FileOp]] = []
    for redirect in _REDIRECT_TARGET.finditer(command):
        target = redirect.group(1)
        if looks_like_path(target) and not target.startswith("/dev/"):
            ops.append((target, "written"))
    for argv in _split_commands(command):
        if not argv:
            continue
        program = argv[0].rsplit("/", 1)[-1]
        if program not in _FILE_PROGRAMS:
            continue
        args = _without_redirections(argv[1:])
        paths = [a for a in args if looks_like_path(a) and not a.startswith("/dev/")]
        if program == "rm" or (program == "git" and argv[1:2] == ["rm"]):
            # `git rm --cached` only untracks: the file stays.
            if "--cached" not in argv:
                ops.extend((p, "deleted") for p in paths)
        elif program in ("touch", "mkdir"):
            ops.extend((p, "created") for p in paths if program == "touch")
        elif program in ("mv", "git") and len(paths) == 2 and (program == "mv" or "mv" in argv):
            ops.extend([(paths[0], "deleted"), (paths[1], "created")])
        elif program == "cp" and len(paths) == 2:
            ops.extend([(paths[0], "read"), (paths[1], "written")])
        elif program == "sed" and any(a.startswith("-i") for a in argv[1:]):
            ops.extend((p, "modified") for p in paths)
        elif program in ("patch", "git") and "apply" in argv:
            continue
        elif program in _SHELL_READERS:
            ops.extend((p, "read") for p in paths)
        elif program in _SHELL_RUNNERS:
            ops.extend((p, "read") for p in paths[:1])
    return tuple(ops)


# --- the user's own words ----------------------------------------------------------------


def name_words(name: str) -> set[str]:
    """The words of an identifier in any spelling: `editorContext`, `user_query` and
    `system-reminder` are {editor, context}, {user, query}, {system, reminder}."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return {w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w}


# A tag-delimited block on lines of its own, as agents wrap and annotate user turns.
_BLOCK = re.compile(r"^<([A-Za-z][\w-]*)>[ \t]*\n?(.*?)\n?[ \t]*</\1>[ \t]*$", re.M | re.S)
# A block named by one of these holds what the user asked (`<userRequest>`, `<user_query>`,
# `<task>`); by one of the others, what the agent added beside it (the date, the open file,
# reminders, an environment dump). Any other tag is markup the user wrote or pasted.
_REQUEST_WORDS = frozenset({"user", "request", "query", "task", "feedback", "prompt"})
# The same blocks between dashed headers (Amazon Q Developer CLI: `--- USER MESSAGE BEGIN ---`,
# `--- CONTEXT ENTRY BEGIN ---`), read as tags named by their words.
_DASHED_BLOCK = re.compile(
    r"^--- ([A-Z][A-Z ]{0,40}) BEGIN ---\n(.*?)--- \1 END ---[ \t]*$", re.M | re.S
)


def _as_tags(match: re.Match[str]) -> str:
    name = match.group(1).lower().replace(" ", "_")
    return f"<{name}>\n{match.group(2).rstrip()}\n</{name}>"


_CONTEXT_WORDS = frozenset(
    {
        "context",
        "environment",
        "reminder",
        "reminders",
        "workspace",
        "editor",
        "system",
        "details",
        "info",
        "attachment",
        "attachments",
        "instructions",
        "selection",
        "metadata",
    }
)


# Claude Code's line saying the user stopped it, first in the user's turn (the agent's, not
# the user's words).
_INTERRUPTED = re.compile(r"\A\[Request interrupted by user(?: for tool use)?\][ \t]*(?:\n|\Z)")


@text_cache()
def own_words(text: str) -> str:
    """What the user typed, out of the blocks an agent wraps around it: the request blocks'
    contents and the text outside any block, in order, without the agent's context blocks;
    out of a stateful agent's packet, its message (nothing, for the agent's own events).
    Text with no such blocks comes back unchanged."""
    if text.startswith("{"):
        packed = _packet_words(text)
        if packed is not None:
            return packed
    if text.startswith("[Request interrupted by user"):
        text = _INTERRUPTED.sub("", text, count=1).strip()
    if "```" in text:
        text = _without_attached_files(text).strip()
    if " BEGIN ---" in text:
        text = _DASHED_BLOCK.sub(_as_tags, text)
    if "</" not in text:
        return text
    pieces: list[str] = []
    last = 0
    for match in _BLOCK.finditer(text):
        words = name_words(match.group(1))
        request = bool(words & _REQUEST_WORDS)
        if not request and not words & _CONTEXT_WORDS:
            continue  # the user's own markup
        pieces.append(text[last : match.start()].strip())
        if request:
            pieces.append(match.group(2).strip())
        last = match.end()
    if not last:
        return text
    pieces.append(text[last:].strip())
    return "\n\n".join(p for p in pieces if p)


#: A line naming a file alone: a path or a file name, lines after a colon (`a/b.dart:1-65`).
_FILE_LINE = re.compile(
    r"[ \t]*(?:[\w.@~-]*/)*[\w@~-][\w.@~-]*\.[A-Za-z]\w{0,9}(?::\d+(?:-\d+)?)?[ \t]*"
)


def _without_attached_files(text: str) -> str:
    """`text` without the files an agent attached to the user's turn: a line naming a file
    alone, then its content in a fenced block (closed by a line ending in the fence). Code
    the user writes in blocks of their own stays, whatever it holds."""
    lines = text.split("\n")
    kept: list[str] = []
    in_block = False
    index = 0
    while index < len(lines):
        line = lines[index]
        opens = index + 1 < len(lines) and lines[index + 1].startswith("```")
        if not in_block and opens and _FILE_LINE.fullmatch(line):
            # The name, the opening fence, and the content up to the line that closes it.
            index += 2
            while index < len(lines) and not lines[index].rstrip().endswith("```"):
                index += 1
            index += 1
            continue
        if line.lstrip().startswith("```"):
            in_block = not in_block
        kept.append(line)
        index += 1
    return "\n".join(kept)


#: The packets a stateful agent (Letta, formerly MemGPT) sends as user messages, each a JSON
#: object with a `type` and a `time`: the user's words under `message` in a `user_message`;
#: none in the agent's own events.
_USER_PACKET = "user_message"
_AGENT_EVENTS = frozenset({"heartbeat", "login", "system_alert"})


def _packet_words(text: str) -> str | None:
    """The user's words in a stateful agent's packet ("" for an event of its own), or None
    when `text` is no such packet."""
    try:
        body = json.loads(text)
    except ValueError:
        return None
    if not isinstance(body, dict) or "time" not in body:
        return None
    kind, message = body.get("type"), body.get("message")
    if kind == _USER_PACKET and isinstance(message, str):
        return message.strip()
    return "" if kind in _AGENT_EVENTS else None


# --- identifiers -------------------------------------------------------------------------

# Identifiers come in three shapes: prefixed ids (`req_4f2a…`, `acct_…`), UUIDs and ticket
# keys (`JIRA-4821`). They are found from their tails, which begin with `_` or `-`: a scan for
# those is many times faster than trying a character class at every position of a large output.
_IDENTIFIER_TAIL = re.compile(
    r"_[0-9a-f]{8,40}\b|-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|-\d{2,6}\b"
)
_IDENTIFIER_HEAD = (
    re.compile(r"(?<![\w-])[a-z][a-z0-9]{1,11}$"),
    re.compile(r"(?<![\w-])[0-9a-f]{8}$"),
    re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}$"),
)


def _identifier_tokens(text: str) -> Iterator[str]:
    for tail in _IDENTIFIER_TAIL.finditer(text):
        token = tail.group(0)
        if token[0] == "_":
            head = _IDENTIFIER_HEAD[0]
        elif len(token) > 20:
            head = _IDENTIFIER_HEAD[1]
        else:
            head = _IDENTIFIER_HEAD[2]
        start = tail.start()
        found = head.search(text, max(start - 13, 0), start)
        if found is not None:
            yield found.group(0) + token


_KEYED_IDENTIFIER = re.compile(
    r'"(\w*(?:_id|_key|_sha|_ref|_number|Id|ID|account|_token_hint))"\s*:\s*"([^"\s]{4,80})"'
)
_NOT_IDENTIFIERS = {"UTF-8", "ISO-8859", "ISO-8601", "SHA-256", "SHA-512", "HTTP-11"}


@text_cache()
def identifiers(text: str, limit: int = 8) -> tuple[str, ...]:
    """Identifiers in a text (`deployment_id=dep_2f…`, UUIDs, ticket keys), first seen first.

    These are what a later question most often needs verbatim and a summary most often drops.
    """
    found: dict[str, str] = {}
    for match in _KEYED_IDENTIFIER.finditer(text):
        value = match.group(2)
        found.setdefault(value, f"{match.group(1)}={value}")
    for value in _identifier_tokens(text):
        if value not in _NOT_IDENTIFIERS:
            found.setdefault(value, value)
    return tuple(found.values())[:limit]


# --- names in code --------------------------------------------------------------------------

# A definition at a line's start: Python, JS/TS, Go (a method's receiver skipped), Rust, and
# the types of the languages that declare them so; a function bound to a name (`export const
# load = async (…) =>`).
_DEFINITION = re.compile(
    r"^[ \t]*(?:export[ \t]+(?:default[ \t]+)?)?(?:pub(?:\([^)\n]*\))?[ \t]+)?"
    # Java's, Kotlin's and C#'s modifiers before a type: `public final class X`.
    r"(?:(?:public|protected|private|internal|static|final|abstract|sealed|open|data|partial)"
    r"[ \t]+)*"
    r"(?:async[ \t]+)?(?:(?:def|function\*?|class|fn|func|interface|struct|enum|trait|record)[ \t]+"
    r"(?:\([^)\n]*\)[ \t]*)?(?P<name>[A-Za-z_]\w*)"
    r"|(?:const|let|var)[ \t]+(?P<bound>[A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=[ \t]*(?:async[ \t]*)?"
    r"(?:\([^)\n]*\)[ \t]*(?::[^=\n]+)?=>|function\b)"
    # SQL's objects: `CREATE INDEX CONCURRENTLY ix_…`, `CREATE TABLE IF NOT EXISTS …`.
    r"|(?i:create[ \t]+(?:or[ \t]+replace[ \t]+)?(?:unique[ \t]+)?"
    r"(?:index|table|view|materialized[ \t]+view|function|procedure|type|trigger)"
    r"(?:[ \t]+concurrently)?(?:[ \t]+if[ \t]+not[ \t]+exists)?)[ \t]+(?P<sql>[A-Za-z_][\w.]*))",
    re.MULTILINE,
)
# What is imported from the project itself (a relative module): JS/TS named imports, Python's
# relative `from . import`, Rust's `use crate::…` / `super::` / `self::`.
_LOCAL_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+(?:type[ \t]+)?\{(?P<js>[^}]*)\}[ \t]*from[ \t]*"
    r"[\"'](?:\.{1,2}/)[^\"']*[\"']"
    r"|^[ \t]*from[ \t]+\.[\w.]*[ \t]+import[ \t]+\(?(?P<py>[\w \t,\n]+?)\)?[ \t]*$"
    r"|^[ \t]*use[ \t]+(?:crate|super|self)::(?:\w+::)*(?:\{(?P<rs>[^}]*)\}|(?P<one>\w+));",
    re.MULTILINE,
)
# Java's and Kotlin's imports, and the package a file declares: an import under the same
# root (its first two parts, `com.acme`) is the project's own code.
_PACKAGE = re.compile(r"^[ \t]*package[ \t]+([A-Za-z_]\w*\.[A-Za-z_]\w*)[\w.]*;?[ \t]*$", re.M)
_JAVA_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+(?:static[ \t]+)?([\w.]+)\.([A-Za-z_]\w*);?[ \t]*$", re.M
)
#: Every text `code_names` finds a name in holds one of these (a substring search spares
#: the patterns most edits).
CODE_NAME_HINTS = (
    "def ", "function", "class ", "fn ", "func ", "interface ", "struct ", "enum ", "trait ",
    "const ", "let ", "var ", "import", "use ", "CREATE ", "create ",
)  # fmt: skip
_IMPORTED_NAME = re.compile(r"(?:\btype[ \t]+)?([A-Za-z_]\w*)(?:[ \t]+as[ \t]+\w+)?")


@text_cache()
def code_names(code: str, limit: int = 6) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names `code` defines, names it imports from the project's own modules), in order,
    each at most `limit`: what a reader of code someone wrote most often needs by name."""
    defined: dict[str, None] = {}
    for match in _DEFINITION.finditer(code):
        name = match["name"] or match["bound"] or match["sql"]
        if len(name) > 2:
            defined.setdefault(name)
    imported: dict[str, None] = {}
    for match in _LOCAL_IMPORT.finditer(code):
        listed = match["js"] or match["py"] or match["rs"] or match["one"] or ""
        for piece in listed.split(","):
            found = _IMPORTED_NAME.search(piece.strip())
            if found is not None and len(found.group(1)) > 2 and found.group(1) != "self":
                imported.setdefault(found.group(1))
    package = _PACKAGE.search(code) if "package" in code else None
    if package is not None:
        for module, name in _JAVA_IMPORT.findall(code):
            if f"{module}.".startswith(f"{package.group(1)}.") and len(name) > 2:
                imported.setdefault(name)
    names = tuple(defined)[:limit]
    # A member of an imported name the code calls is named with it: the call it depends on
    # (`TenantHolder.merchantIdOrThrow`).
    used = []
    for name in (n for n in imported if n not in defined):
        member = re.search(rf"(?<![\w.]){re.escape(name)}\.([A-Za-z_]\w*)\s*\(", code)
        used.append(f"{name}.{member.group(1)}" if member else name)
    return names, tuple(used)[:limit]


# --- prose --------------------------------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(```|$)", re.DOTALL)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+[^\n]*$", re.MULTILINE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|\n+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# A line break inside a sentence (prose wrapped at a fixed width): between a word or a comma
# and the next word, lower case.
_WRAPPED = re.compile(r"(?<=[a-z0-9,])[ \t]*\n[ \t]*(?=[a-z])")


def without_headings(text: str) -> str:
    """Prose without its markdown headings: a heading labels the prose below it, it is no
    sentence of it ("## Change of plan" over a reversal)."""
    return _HEADING.sub("\n", text) if "#" in text else text


@text_cache()
def sentences(text: str) -> tuple[str, ...]:
    """Prose split into sentences and list items, code blocks left out."""
    text = _CODE_BLOCK.sub(" ", text) if "```" in text else text
    text = without_headings(text)
    text = _WRAPPED.sub(" ", text) if "\n" in text else text
    out = []
    for raw in _SENTENCE_SPLIT.split(text):
        sentence = _LIST_ITEM.sub("", raw).strip()
        if len(sentence) >= 8:
            out.append(sentence)
    return tuple(out)


_DECISION = cue(
    r"""\b(?:
        decision|decided|deciding|we(?:'ll|\s+will)\s+(?:go|use|keep|stick|switch)
      | (?:i'll|i\s+will|we'll|let's|let\s+us|i'm\s+going\s+to|we're\s+going\s+to)\s+
        (?:go|use|keep|stick|switch|adopt|choose|pick|rely|store|implement|replace|avoid|
           move|rewrite|refactor|cache|drop|rename|split|take|prefer|leave|treat|make)\b
      | going\s+with|go\s+with|settl(?:e|ed|ing)\s+on|opt(?:ed|ing)?\s+for|chose|choosing|picked
      | (?:best|better|right|good)\s+fit|change\s+of\s+plan|scratch\s+(?:that|the|an?)\b
      | instead\s+of|rather\s+than|in\s+favou?r\s+of|switch(?:ed|ing)?\s+to
      | the\s+(?:plan|approach|fix|solution)\s+(?:is|will\s+be)|approach:|plan:
      | better\s+to|best\s+to|makes\s+more\s+sense|the\s+simplest\s+fix
      | (?:i|we)\s+(?:intend|plan)\s+to|(?:i\s+am|i'm|we\s+are|we're)\s+moving\s+to
      | my\s+(?:pick|choice)\b|\bso\s+[^,.;]{1,60}\s+it\s+is\b|from\s+now\s+on|going\s+forward
      | dead\s+end|off\s+the\s+table
      | how\s+(?:i'll|i\s+will|we'll|we\s+will)\s+(?:build|do|structure|handle|approach)\s+
        (?:it|this|that)\s*:
    )""",
    re.VERBOSE,
)
_NAVIGATION = cue(
    r"^(?:now,?\s+)?(?:let's|let\s+us|i'll|i\s+will)\s+(?:first\s+|now\s+|also\s+)?"
    r"(?:open|look|check|see|view|scroll|search|find|run|try|start|go\s+to|goto|inspect|"
    r"examine|verify|confirm|take\s+a\s+look|read|navigate|print|test|review|reproduce)\b",
)
_TODO = cue(
    # "the todo list" names the list, not something left to do.
    r"""(?:\b(?:todo|to-do)\b(?!\s+lists?\b)|\bfixme\b
      | \bstill\s+(?:left|need|needs|to\s+do|have\s+to|pending|missing|open|outstanding|todo)
      | \bleft\s+to\s+do\b|\bremaining\s*(?::|\bwork|\bsteps?|\bitems?|\bafter\s+this)
      | \b(?:we|i)(?:'ll|\s+will)\s+(?:also\s+|still\s+)?need\s+to
      | \b(?:we|i)\s+(?:still\s+|also\s+)?(?:need|have)\s+to
      | \bneeds?\s+to\s+be\s+(?:done|added|updated|fixed|handled|written|wired)
      | \bhave(?:n't|\s+not)\s+(?:yet\s+)?(?:handled|done|added|fixed|implemented|updated|
           written|wired|covered|tested|addressed|touched)
      | \bnot\s+(?:yet\s+)?(?:handled|implemented|done|covered|wired|addressed)\s+yet
      | \b(?:is|are)\s+not\s+(?:handled|implemented|covered|wired)\s+yet
      | \bnext\s+step|\bnext,?\s+(?:i|we)(?:'ll|\s+will|\s+should|\s+need)
      | \bfollow[- ]up\b|\blater\s+(?:i|we)\s+(?:should|need|will)
      | \bdon't\s+forget|\bremember\s+to\b|\bpending:
    )""",
    re.VERBOSE,
)
_DONE = cue(
    r"\b(?:done|fixed|added|implemented|updated|wired|handled|completed|finished|resolved|"
    r"now\s+(?:passes|works|handled)|took\s+care|addressed|covered)\b",
)
# The last alternative: a runtime pinned to a version ("runs Python 3.9", "ships on Java 11").
_CONSTRAINT = cue(
    r"""\b(?:must|mustn't|must\s+not|never|don't|do\s+not|doesn't|always|only|avoid|keep|
         make\s+sure|ensure|required?|requirement|should(?:n't|\s+not)?|no\s+\w+|without|
         can't|cannot|please|important|constraint|careful|stick\s+to|leave
         |(?:python|node(?:\.js)?|java|jdk|go|ruby|php|rust|elixir|otp|kotlin|\.net|dotnet
            |typescript|swift|scala)\s+v?\d+(?:\.\d+)*)\b""",
    re.VERBOSE,
)


@text_cache()
def prose_signals(text: str) -> tuple[tuple[str, bool, bool, bool, bool], ...]:
    """Each sentence of assistant prose with (is_todo, is_done, is_decision, is_note)."""
    found = sentences(text)
    if len(found) <= 1:  # most prose is one sentence: its own searches decide
        return tuple(
            (s, _TODO.search(low) is not None, _DONE.search(low) is not None,
             _is_decision(low), _is_note(s, low))
            for s, low in ((s, s.lower()) for s in found)
        )  # fmt: skip
    lowered = [s.lower() for s in found]
    # A pattern that matches no sentence's text anywhere in the prose matches no sentence:
    # one search over the whole decides for most texts (the patterns have no `^` anchor).
    prose = " ".join(lowered)
    todo = _TODO.search(prose) is not None
    done = _DONE.search(prose) is not None
    decision = _DECISION.search(prose) is not None
    noted = _NOTE.search(prose) is not None
    return tuple(
        (
            s,
            todo and _TODO.search(low) is not None,
            done and _DONE.search(low) is not None,
            decision and _is_decision(low),
            _is_note(s, low, flagged=noted),
        )
        for s, low in zip(found, lowered, strict=True)
    )


# Split in two: a pattern with a `^` branch loses the first-character scan (4× slower).
_NOTE_START = cue(r"(?:note|nb|fyi|heads[- ]up)\b")
_NOTE = cue(
    r"""\bstill\s+(?:fails|failing|broken|errors?|crashes|red)\b
      | \bpre-?existing\b|\bunrelated\s+to\s+(?:this|my|the)\b|\bknown\s+(?:issue|failure|bug)
      | \bnot\s+(?:touching|fixing)\s+it\b|\bleav(?:e|ing)\s+it\s+(?:open|alone|as\s+is)
      | \bflaky\b|\bworkaround\b""",
    re.VERBOSE,
)


def is_note(sentence: str) -> bool:
    """A remark worth keeping: flagged as a note, a known failure, or naming an identifier."""
    return _is_note(sentence, sentence.lower())


def _is_note(sentence: str, lowered: str, *, flagged: bool = True) -> bool:
    """`flagged`: whether the prose the sentence is from holds a note cue at all."""
    if _NOTE_START.match(lowered) or (flagged and _NOTE.search(lowered)):
        return True
    return any(v not in _NOT_IDENTIFIERS for v in _identifier_tokens(sentence))


@text_cache()
def is_navigation(text: str) -> bool:
    """Whether prose only says where the agent looks next ("Let me open the tests.")."""
    return _NAVIGATION.match(text.strip().lower()) is not None and len(sentences(text)) <= 1


def is_decision(sentence: str) -> bool:
    return _is_decision(sentence.lower())


# An acknowledgement, not a decision: "Sure, I will keep that in mind.", "I'll stick to that"
# (a rule the user set, acknowledged: no plan of the assistant's).
_ACKNOWLEDGED = cue(
    r"\bkeep\s+(?:that|this|it|those)\s+in\s+mind\b"
    r"|\b(?:stick|keep|hold)\s+to\s+(?:that|this|it|those)\b(?![\w\s]*\b(?:instead|rather)\b)"
)


def _is_decision(lowered: str) -> bool:
    if _NAVIGATION.match(lowered) or _ACKNOWLEDGED.search(lowered):
        return False
    return _DECISION.search(lowered) is not None


def is_todo(sentence: str) -> bool:
    return _TODO.search(sentence.lower()) is not None


def is_done(sentence: str) -> bool:
    return _DONE.search(sentence.lower()) is not None


def is_constraint(sentence: str) -> bool:
    return _CONSTRAINT.search(sentence.lower()) is not None


# What a rate counts per, after its figure and unit: "40 per minute", "300 requests/min",
# "50 an hour".
_PER = (
    r"(?:\s*/\s*(?:s|sec|second|m|min|minute|h|hr|hour|d|day)\b|\s+per\s+[A-Za-z]{2,14}\b"
    r"|\s+an?\s+(?:second|minute|hour|day|week|month)\b)?"
)
_VALUE_PATTERNS = (
    # "retry limit: 5 attempts, not 3 attempts" / "page size is 100 rows now, not 25".
    re.compile(
        r"^(?:the\s+)?(?P<key>[A-Za-z_][\w-]{1,30}(?:\s+[A-Za-z_][\w-]{1,30}){0,2})"
        r"(?::|\s+is(?:\s+now)?)\s+(?P<value>[^\s,;]{1,40}(?:\s+[A-Za-z%]{1,14})?)"
        r"(?:\s+now)?,?\s+(?:not|instead\s+of|rather\s+than)\s+\S",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:set|change|make|bump|increase|decrease|raise|lower|update|switch|use)\s+"
        r"(?:the\s+|our\s+|a\s+)?(?P<key>[A-Za-z_][\w .-]{1,40}?)\s+(?:to|=)\s+"
        r"(?P<value>`[^`]{1,60}`|\"[^\"]{1,60}\"|'[^']{1,60}'|[^\s,;]{1,60}(?:\s*(?:milliseconds|millis|"
        r"msecs?|seconds|secs|sec|ms|s|weeks?|hrs?|mins?|attempts|threads|replicas|gib|mib|kib|"
        r"minutes|mins|hours|days|mb|gb|kb|%|percent|retries|items|workers|"
        r"requests|connections|tokens|lines|chars|bytes)\b)?" + _PER + ")",
        re.IGNORECASE,
    ),
    # "make the flush interval 1500 milliseconds": a verb, a key, a number with its unit;
    # "take the retry budget (down) to 2 retries": a number only, as "take" is common.
    re.compile(
        r"\btake\s+(?:the\s+|our\s+)?(?P<key>[A-Za-z_][\w-]{1,30}(?:\s+[A-Za-z_][\w-]{1,30}){0,2}?)"
        r"\s+(?:down\s+|up\s+|back\s+)?to\s+(?P<value>\d[\d.,]*(?:\s*(?!per\b|an?\b)[A-Za-z%]{1,14}\b)?"
        + _PER
        + ")",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:set|make|change|bump|raise|lower|put)\s+(?:the\s+|our\s+)?"
        r"(?P<key>[A-Za-z_][\w-]{1,30}(?:\s+[A-Za-z_][\w-]{1,30}){0,2}?)\s+"
        r"(?P<value>\d[\d.,]*(?:\s*(?!per\b|an?\b)[A-Za-z%]{1,14}\b)?" + _PER + ")",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:the\s+)?(?P<key>[A-Za-z_][\w-]{1,30}(?:\s+[A-Za-z_][\w-]{1,30}){0,2})\s+"
        r"(?:should|must)\s+(?:now\s+)?be\s+"
        r"(?P<value>`[^`]{1,60}`|\"[^\"]{1,60}\"|[\d.]+(?:\s*[A-Za-z%]{1,14}\b)?|[A-Za-z_][\w.-]{0,40})",
        re.IGNORECASE,
    ),
)
#: A key that names its old value: "parked queue bound from 256 envelopes".
_FROM_OLD = re.compile(r"(?P<key>.+?)\s+from\s+(?P<old>\S+(?:\s+\S+)?)")
_UNIT_WORD = re.compile(r"^\d[\d.,]*\s*([A-Za-z%]{1,14})$")
_NOT_A_VALUE = re.compile(
    r"(?:the|a|an|it|this|that|them|these|those|be|do|use|make|sure|all|any|some|more|less|"
    r"my|our|your|its|their|and|or|but|if|then|so)",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")
# What follows a verb in the passive voice ("computed as …", "stored in …").
_PASSIVE = re.compile(r"\s+(?:as|by|from|in|into|on|using|via|with)\b", re.IGNORECASE)
_SHOULD_BE = re.compile(r"\b(?:should|must)\s+(?:now\s+)?be\s+$", re.IGNORECASE)
_KEY_LEAD = re.compile(r"\b(?:and|then|also|but|so|actually|please|now|,)\s+")
_KEY_ARTICLE = re.compile(r"^(?:the|our|a|an)\s+")
_NEGATED = re.compile(r"\b(?:not|n't|never|no)\s+(?:\w+\s+)?$", re.IGNORECASE)
_KEY_STOP = {
    "it", "this", "that", "them", "these", "those", "sure", "everything", "things",
    # prepositions: "the batch set to 50" names its setting before the verb
    "to", "at", "by", "for", "in", "on", "of", "up", "down", "back", "from", "with",
}  # fmt: skip


@text_cache()
def value_settings(text: str) -> tuple[tuple[str, str], ...]:
    """(key, value) pairs the text sets: `set the timeout to 45s`, `retries should be 5`."""
    found: list[tuple[str, str]] = []
    for sentence in sentences(text):
        for pattern in _VALUE_PATTERNS:
            for match in pattern.finditer(sentence):
                key = _SPACES.sub(" ", match.group("key").strip().lower())
                key = _KEY_LEAD.split(key)[-1]
                key = _KEY_ARTICLE.sub("", key)
                value = match.group("value").strip().rstrip(".")
                moved = _FROM_OLD.fullmatch(key)
                if moved is not None:
                    # "switch X from 256 envelopes to 9000": X, in the old value's unit.
                    key = moved["key"]
                    unit = _UNIT_WORD.search(moved["old"])
                    if unit is not None and re.fullmatch(r"\d[\d.,]*", value):
                        value = f"{value} {unit[1]}"
                if key in _KEY_STOP or not value or key.split(" ")[0] in _KEY_STOP:
                    continue
                if key.endswith((" to", " =", " from")) or (key, value) in found:
                    continue  # "set X to N" is read whole by the first pattern
                if _NOT_A_VALUE.fullmatch(value) or _NEGATED.search(sentence[: match.start()]):
                    continue  # "do not make sweeping changes to the …" sets nothing
                if (
                    value.lower().endswith("ed")
                    and _PASSIVE.match(sentence, match.end())
                    and _SHOULD_BE.search(sentence, 0, match.start("value"))
                ):
                    continue  # "target should be computed as …" says how, not a value
                found.append((key, value))
    return tuple(found)


# A value named in a sentence: code in backticks, a version (0.9.3), a file name (a.json).
_NAMED_VALUE = re.compile(
    r"`([^`\n]{1,80})`|(?<![\w./-])(\d+(?:\.\d+){2,}|[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})"
    r"(?![\w/])"
)


@text_cache()
def named_values(sentence: str) -> tuple[str, ...]:
    """The values a sentence names, lowercased: code in backticks, versions, file names."""
    found = (code or bare for code, bare in _NAMED_VALUE.findall(sentence))
    return tuple(dict.fromkeys(v.lower() for v in found if len(v) >= 4))  # not "e.g"


# Code named right after a word ruling it out: "no `retry_on`", "without the `X` job",
# "dropped `X`", "instead of `X`".
_RULED_OUT = re.compile(
    r"\b(?:no|not|never|without|no\s+longer\s+\w+|instead\s+of|rather\s+than|"
    r"drop(?:s|ped|ping)?|remov(?:e|es|ed|ing)|scrap(?:s|ped|ping)?|replac(?:e|es|ed|ing))\s+"
    r"(?:(?:the|a|an|any|its|that|this)\s+)?`([^`\n]{4,80})`",
    re.IGNORECASE,
)


@text_cache()
def ruled_out(sentence: str) -> tuple[str, ...]:
    """The code a sentence rules out by name, lowercased ("No `retry_on`, no
    `next_retry_at`." → `retry_on`, `next_retry_at`)."""
    if "`" not in sentence:
        return ()
    return tuple(dict.fromkeys(m.lower() for m in _RULED_OUT.findall(sentence)))


def mentions(text: str, value: str) -> bool:
    """Whether `text` (lowercased) names `value` as a whole word."""
    return re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", text) is not None


# A figure: a number and the unit word after it ("9 bits", "3.8 MB", "40%").
_FIGURE = re.compile(r"(?<![\w./-])(\d+(?:\.\d+)?)\s?(%|[A-Za-zµ]+)\b")
_NOT_UNITS = frozenset({
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "is", "of", "on", "or", "per",
    "so", "than", "that", "the", "then", "to", "was", "were", "with", "x",
})  # fmt: skip


_DIGIT = re.compile(r"\d")


def has_digit(text: str) -> bool:
    return _DIGIT.search(text) is not None


@text_cache()
def figures(sentence: str) -> tuple[tuple[str, str], ...]:
    """The figures a sentence states, as (unit, number): "9 bits" is ("bits", "9")."""
    if not has_digit(sentence):
        return ()
    return tuple(
        (unit.lower(), number)
        for number, unit in _FIGURE.findall(sentence)
        if unit.lower() not in _NOT_UNITS
    )


@text_cache()
def significant_words(sentence: str) -> frozenset[str]:
    words = (w.strip(".") for w in _WORD.findall(sentence.lower()))
    return frozenset(w for w in words if len(w) >= 4) - _COMMON


_WORD = re.compile(r"[a-z_][\w.]{3,}")
_COMMON = {
    "that",
    "this",
    "with",
    "have",
    "from",
    "will",
    "need",
    "still",
    "also",
    "then",
    "there",
    "their",
    "should",
    "would",
    "could",
    "left",
    "todo",
    "done",
    "added",
    "fixed",
    "into",
    "just",
    "some",
    "when",
    "what",
    "which",
    "were",
    "been",
    "being",
    "they",
    "them",
    "does",
    "make",
    "sure",
    "it's",
    "we'll",
    "i'll",
    "later",
    "next",
    "step",
    # Words of order, quantity and degree: they name no subject ("every change after
    # this" and "every function … after a restart" speak of different things).
    "after",
    "before",
    "every",
    "each",
    "only",
    "never",
    "both",
    "once",
    "again",
    "than",
    "these",
    "those",
    "here",
    "where",
    "while",
    "about",
    "same",
    "other",
    "more",
    "most",
    "much",
    "many",
    "very",
    "even",
    "already",
    "always",
    "whole",
}
