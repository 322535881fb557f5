"""codeact-style: OpenHands' CodeAct agent in its text protocol, on a Rust CLI.

The agent acts in its own words: every assistant message is a thought followed by one
`<execute_bash>\\n…\\n</execute_bash>` or `<execute_ipython>\\n…\\n</execute_ipython>` block
(or no block: a message to the user, who then answers), and every result comes back as a
*user* message starting `OBSERVATION:`. No provider tool call and no tool message anywhere.
The last message is the answer the agent ends on, followed by `<finish></finish>`.

Shapes verified against OpenHands 0.9.2 (github:All-Hands-AI/OpenHands, tag 0.9.2):

- `agenthub/codeact_agent/codeact_agent.py`: `action_to_str` renders a command as
  `f'{thought}\\n<execute_bash>\\n{command}\\n</execute_bash>'` and a cell as
  `…<execute_ipython>\\n{code}\\n</execute_ipython>`; `get_observation_message` renders a
  command's output as `'OBSERVATION:\\n' + content + f'\\n[Command {id} finished with exit code
  {code}]'` and a cell's as `'OBSERVATION:\\n' + content`, both with role `user`;
- `openhands/runtime/client/client.py`: command ids are `-1`; the output ends on the bash
  prompt the runtime reassembles (`[Python Interpreter: …]` then `user@host:cwd $ `); a cell's
  output ends on `[Jupyter current working directory: …]` and `[Jupyter Python interpreter: …]`
  (also in `tests/integration/mock/eventstream_runtime/CodeActAgent/*/prompt_*.log`);
- `openhands/runtime/plugins/agent_skills/file_ops/file_ops.py`: `open_file`, `scroll_down`,
  `create_file`, `append_file`, `edit_file_by_replace`, `search_dir`, `search_file` and their
  printed results — `[File: /abs/path (N lines total)]`, numbered lines `12|…` in a window of
  100 lines, `(this is the beginning of the file)`, `(N more lines above)`, `(N more lines
  below)`, ``[Use `scroll_down` to view the next 100 lines of the file!]``,
  `[File {name} created.]`, `(N lines total after edit)` and `[File updated (edited at line
  N). Please review the changes …]`, `[Found N matches for "term" in dir]` … `[End of matches
  …]`; the window arithmetic of `_print_window` is reproduced;
- `agenthub/codeact_agent/system_prompt.j2`: the protocol the system prompt states (one
  execute block per response, `<finish></finish>` when done, `append_file` after every
  `create_file`); the system prompt here is an abridged paraphrase, the agent-skills docs
  reduced to signatures.

Not verified / left out: the in-context example OpenHands prepends to the first user message
(about 1.9k tokens of fixed text, ending "NOW, LET'S START!") is left out — the first user
message is the task alone; the per-turn "ENVIRONMENT REMINDER: You have N turns left" is left
out; the host name (a container id) and the interpreter paths are illustrative; whether the
aider linter prints anything for a `.rs` edit was not checked (nothing is printed here).
Cargo's, rustc's, clippy's and libtest's output follow their current formats
(`Finished \\`dev\\` profile …`, `error[E0308]`, `test result: FAILED. 40 passed; 1 failed;
…`), from memory of those tools rather than a source read here.

The story is this family's own: a Rust photo de-duplication CLI gets parallel hashing, a
`--since` option and a JSON report; a hand-rolled worker pool is written, then dropped for
scoped threads; the match threshold changes twice, the report's name and the release version
once; a type error is fixed, a timezone test stays red.

codeact-terse-style (`write_terse`) tells the same story from the same seeds (same crate,
values and filler up to the end of the clippy step), but nothing late restates what was
planted earlier: no final `git diff --stat`, and a last answer that names no value, file,
count, commit or issue ("Stopping here; the working tree has the changes and one test still
fails"). Instead the user adds, late, a rule (a size cap on the release binary), a question
(its current size, answered once) and a to-do (a note in CONTRIBUTING.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    code_file,
    finish_session,
    hexid,
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "codeact-style"
#: The same story and seeds, told so that nothing late restates what was planted earlier.
FAMILY_TERSE = "codeact-terse-style"
PY = "/openhands/poetry/openhands-ai-5O4_aCHf-py3.11/bin/python"
MSG_FILE_UPDATED = (
    "[File updated (edited at line {line}). Please review the changes and make sure they are "
    "correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.]"
)

SYSTEM = f"""A chat between a curious user and an artificial intelligence assistant. The \
assistant gives helpful, detailed answers to the user's questions.
The assistant can use a Python environment with <execute_ipython>, e.g.:
<execute_ipython>
print("Hello World!")
</execute_ipython>
The assistant can execute bash commands wrapped with <execute_bash>, e.g. <execute_bash> ls \
</execute_bash>.
The assistant is not allowed to run interactive commands. For commands that may run \
indefinitely, the output should be redirected to a file and the command run in the background.
The assistant can install Python packages using the %pip magic command in an IPython \
environment.
Apart from the standard Python library, the assistant can also use the following functions \
(already imported) in <execute_ipython> environment:
open_file(path: str, line_number: int | None = 1, context_lines: int | None = 100) -> None
goto_line(line_number: int) -> None
scroll_down() -> None
scroll_up() -> None
create_file(filename: str) -> None
edit_file_by_replace(file_name: str, to_replace: str, new_content: str) -> None
insert_content_at_line(file_name: str, line_number: int, content: str) -> None
append_file(file_name: str, content: str) -> None
search_dir(search_term: str, dir_path: str = './') -> None
search_file(search_term: str, file_path: str | None = None) -> None
find_file(file_name: str, dir_path: str = './') -> None
IMPORTANT:
- `open_file` only returns the first 100 lines of the file by default! The assistant MUST use \
`scroll_down` repeatedly to read the full file BEFORE making edits!
- Indentation is important and code that is not indented correctly will fail.
- After EVERY `create_file` the method `append_file` shall be used to write the FIRST content!
- For `edit_file_by_replace` NEVER provide empty parameters!
Responses should be concise.
Include ONLY ONE <execute_ipython> or <execute_bash> per response, unless the assistant is \
finished with the task or needs more input or action from the user in order to proceed.
If the assistant is finished with the task you MUST include <finish></finish> in your response.
The assistant should utilize full file paths and the `pwd` command to prevent path-related \
errors.
Python: {PY}
"""

# --- what varies by seed -----------------------------------------------------------------------

CRATES = ("dupehound", "snapsift", "phashr", "pixwinnow", "framecull", "shutterdedup")
MSRVS = ("1.65", "1.66", "1.68", "1.70", "1.71", "1.72")
THRESHOLDS = ((6, 10, 8), (5, 9, 7), (8, 12, 10), (4, 7, 6), (6, 11, 9))
VERSIONS = (("0.8.0", "0.7.5"), ("0.10.0", "0.9.3"), ("2.0.0", "1.6.1"), ("0.5.0", "0.4.3"))
DEPS = (
    ("anyhow", "1.0.86"), ("clap", "4.5.16"), ("clap_builder", "4.5.15"), ("clap_lex", "0.7.2"),
    ("anstream", "0.6.15"), ("anstyle", "1.0.8"), ("strsim", "0.11.1"), ("image", "0.24.9"),
    ("png", "0.17.13"), ("jpeg-decoder", "0.3.1"), ("num-traits", "0.2.19"),
    ("bytemuck", "1.17.1"), ("crc32fast", "1.4.2"), ("fdeflate", "0.3.4"),
    ("miniz_oxide", "0.7.4"), ("adler", "1.0.2"), ("walkdir", "2.5.0"), ("same-file", "1.0.6"),
    ("serde", "1.0.209"), ("serde_derive", "1.0.209"), ("serde_json", "1.0.127"),
    ("itoa", "1.0.11"), ("ryu", "1.0.18"), ("memchr", "2.7.4"), ("time", "0.3.36"),
    ("time-core", "0.1.2"), ("time-macros", "0.2.18"), ("deranged", "0.3.11"),
    ("powerfmt", "0.2.0"), ("num-conv", "0.1.0"), ("crossbeam-channel", "0.5.13"),
    ("crossbeam-utils", "0.8.20"), ("md-5", "0.10.6"), ("digest", "0.10.7"),
    ("block-buffer", "0.10.4"), ("generic-array", "0.14.7"), ("typenum", "1.17.0"),
    ("proc-macro2", "1.0.86"), ("quote", "1.0.37"), ("syn", "2.0.76"),
    ("unicode-ident", "1.0.12"), ("log", "0.4.22"), ("env_logger", "0.11.5"),
)  # fmt: skip
TEST_NAMES = {
    "cli": ("parses_since_as_a_date", "rejects_since_in_the_future", "jobs_defaults_to_cores",
            "legacy_md5_flag_still_parses", "report_path_defaults_next_to_manifest"),
    "hash": ("dhash_of_solid_image_is_zero", "distance_is_symmetric", "distance_counts_bits",
             "rotated_copy_is_not_a_match", "resized_copy_is_a_match", "hash_hex_roundtrip"),
    "manifest": ("rows_keep_column_order", "rows_are_sorted_by_path", "reads_v2_manifests",
                 "escapes_tabs_in_paths", "roundtrip_preserves_mtime"),
    "scan": ("skips_hidden_directories", "follows_no_symlinks", "skips_non_images",
             "manifest_is_stable_across_runs", "results_come_back_in_path_order",
             "empty_library_gives_empty_manifest", "legacy_md5_path_is_untouched"),
    "report": ("clusters_sorted_by_size", "report_lists_every_member", "bytes_saved_sums_up"),
}  # fmt: skip
OTHER_FILES = ("src/exif.rs", "src/thumb.rs", "src/util/fs.rs", "src/progress.rs",
               "src/config.rs", "src/util/paths.rs")  # fmt: skip
OPEN_TESTS = ("since_includes_files_from_that_day", "since_boundary_uses_local_midnight",
              "since_counts_files_touched_at_midnight")  # fmt: skip


class CodeAct:
    """The session being written, in CodeAct's shapes, with a tiny file system."""

    def __init__(self, rng: random.Random, crate: str) -> None:
        self.rng = rng
        self.s = Session(rng=rng, system=SYSTEM)
        self.root = f"/workspace/{crate}"
        self.host = hexid(rng, 12)
        self.files: dict[str, list[str]] = {}
        self.current = 1
        self.open = ""

    # -- actions --------------------------------------------------------------------------------
    def _pair(self, action: str, observation: str, filler: bool) -> None:
        self.s.say(action)
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        self.s.user(observation)
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)

    def bash(
        self, thought: str, command: str, output: str, *, code: int = 0, filler: bool = False
    ) -> None:
        prompt = f"[Python Interpreter: {PY}]\nopenhands@{self.host}:{self.root} $ "
        body = f"{output.rstrip()}\n\n{prompt}" if output.strip() else f"\n{prompt}"
        self._pair(
            f"{thought}\n<execute_bash>\n{command}\n</execute_bash>",
            f"OBSERVATION:\n{body}\n[Command -1 finished with exit code {code}]",
            filler,
        )

    def ipython(self, thought: str, code: str, output: str, *, filler: bool = False) -> None:
        self._pair(
            f"{thought}\n<execute_ipython>\n{code}\n</execute_ipython>",
            f"OBSERVATION:\n{output.rstrip()}\n[Jupyter current working directory: {self.root}]\n"
            f"[Jupyter Python interpreter: {PY}]",
            filler,
        )

    # -- agent skills, as file_ops.py prints them -----------------------------------------------
    def abs(self, path: str) -> str:
        return f"{self.root}/{path}"

    def window(self, path: str, target: int, *, ignore_window: bool = False) -> str:
        lines = self.files[path]
        total = len(lines)
        self.current = cur = max(1, min(target, total))
        if ignore_window:
            start, end = max(1, cur), min(total, cur + 100)
        else:
            start, end = max(1, cur - 50), min(total, cur + 50)
        if start == 1:
            end = min(total, start + 99)
        if end == total:
            start = max(1, end - 99)
        out = [
            f"({start - 1} more lines above)"
            if start > 1
            else "(this is the beginning of the file)"
        ]
        out += [f"{i}|{lines[i - 1]}" for i in range(start, end + 1)]
        out.append(
            f"({total - end} more lines below)" if end < total else "(this is the end of the file)"
        )
        return "\n".join(out)

    def header(self, path: str, *, after_edit: bool = False) -> str:
        total = len(self.files[path])
        return (
            f"[File: {self.abs(path)} ({total} lines total{' after edit' if after_edit else ''})]"
        )

    def open_file(self, thought: str, path: str, line: int = 1, *, filler: bool = False) -> None:
        out = f"{self.header(path)}\n{self.window(path, line)}"
        if out.endswith("more lines below)"):
            out += "\n[Use `scroll_down` to view the next 100 lines of the file!]"
        args = f"'{self.abs(path)}'" + (f", {line}" if line != 1 else "")
        self.ipython(thought, f"open_file({args})", out, filler=filler)
        self.open = path

    def scroll_down(self, thought: str, *, filler: bool = False) -> None:
        path = self.open
        out = f"{self.header(path)}\n{self.window(path, self.current + 100, ignore_window=True)}"
        self.ipython(thought, "scroll_down()", out, filler=filler)

    def create_file(self, thought: str, path: str) -> None:
        self.files[path] = [""]
        out = f"{self.header(path)}\n{self.window(path, 1)}\n[File {self.abs(path)} created.]"
        self.ipython(thought, f"create_file('{self.abs(path)}')", out)
        self.open = path

    def append_file(self, thought: str, path: str, content: str) -> None:
        was = self.files[path]
        new = content.split("\n")
        self.files[path] = new if was == [""] else was + new
        line = max(1, len(was))
        out = (
            f"{self.header(path, after_edit=True)}\n{self.window(path, line)}\n"
            + MSG_FILE_UPDATED.format(line=line)
        )
        code = f'append_file(\n    \'{self.abs(path)}\',\n    """{content}""",\n)'
        self.ipython(thought, code, out)

    def edit(self, thought: str, path: str, old: str, new: str) -> None:
        text = "\n".join(self.files[path])
        assert text.count(old) == 1, (path, old)
        line = text[: text.index(old)].count("\n") + 1
        self.files[path] = text.replace(old, new).split("\n")
        out = (
            f"{self.header(path, after_edit=True)}\n{self.window(path, line)}\n"
            + MSG_FILE_UPDATED.format(line=line)
        )
        code = (
            f'edit_file_by_replace(\n    \'{self.abs(path)}\',\n    to_replace="""{old}""",\n'
            f'    new_content="""{new}""",\n)'
        )
        self.ipython(thought, code, out)

    def sed(self, thought: str, path: str, old: str, new: str) -> None:
        text = "\n".join(self.files[path])
        assert old in text, (path, old)
        self.files[path] = text.replace(old, new).split("\n")
        self.bash(thought, f"sed -i 's/{old}/{new}/' {path}", "")


# --- the files the story touches ---------------------------------------------------------------


def numbered_tests(module: str, names: Sequence[str]) -> list[str]:
    out = ["", "#[cfg(test)]", "mod tests {", "    use super::*;", ""]
    for name in names:
        out += ["    #[test]", f"    fn {name}() {{", f"        let fx = fixture(\"{module}\");",
                "        assert!(fx.check());", "    }", ""]  # fmt: skip
    out.append("}")
    return out


def scan_rs(rng: random.Random, threshold: int) -> list[str]:
    head = [
        "//! Walks the library, hashes every image and groups near-duplicates.",
        "",
        "use std::path::{Path, PathBuf};",
        "",
        "use anyhow::{Context, Result};",
        "use walkdir::WalkDir;",
        "",
        "use crate::hash::{self, PHash, DEFAULT_MAX_DISTANCE};",
        "use crate::manifest::Row;",
        "",
        "pub struct ScanOptions {",
        "    pub root: PathBuf,",
        "    pub legacy_md5: bool,",
        "}",
        "",
        "/// Every image under `root`, sorted by path (the manifest is written in this order).",
        "pub fn walk_serial(root: &Path) -> Result<Vec<PathBuf>> {",
        "    let mut paths = Vec::new();",
        "    for entry in WalkDir::new(root).follow_links(false) {",
        '        let entry = entry.context("walking the library")?;',
        "        if entry.file_type().is_file() && hash::is_image(entry.path()) {",
        "            paths.push(entry.into_path());",
        "        }",
        "    }",
        "    paths.sort();",
        "    Ok(paths)",
        "}",
        "",
        "pub fn hash_all(paths: &[PathBuf], opts: &ScanOptions) -> Result<Vec<Row>> {",
        "    let mut rows = Vec::with_capacity(paths.len());",
        "    for path in paths {",
        "        rows.push(hash_one(path, opts)?);",
        "    }",
        "    Ok(rows)",
        "}",
        "",
        "fn hash_one(path: &Path, opts: &ScanOptions) -> Result<Row> {",
        "    let meta = std::fs::metadata(path)?;",
        "    let phash = if opts.legacy_md5 { hash::md5_of(path)? } else { PHash::of(path)? };",
        "    Ok(Row::new(path, meta.len(), phash, meta.modified()?))",
        "}",
        "",
        "pub fn group(rows: &[Row]) -> Vec<Vec<&Row>> {",
        "    hash::clusters(rows, DEFAULT_MAX_DISTANCE)",
        "}",
        "",
    ]
    body = code_file(rng, "rs", rng.randint(70, 90)).split("\n")
    return head + body + numbered_tests("scan", TEST_NAMES["scan"])


def cli_rs(rng: random.Random) -> list[str]:
    head = [
        "use std::path::PathBuf;",
        "",
        "use clap::Parser;",
        "",
        "#[derive(Parser, Debug)]",
        '#[command(version, about = "Find near-duplicate photos")]',
        "pub struct Args {",
        "    /// Library root to scan.",
        "    pub root: PathBuf,",
        "",
        "    /// Where the manifest goes (defaults to <root>/manifest.tsv).",
        "    #[arg(long)]",
        "    pub manifest: Option<PathBuf>,",
        "",
        "    /// Hash with MD5 instead of the perceptual hash (kept for the NAS script).",
        '    #[arg(long = "legacy-md5")]',
        "    pub legacy_md5: bool,",
        "",
        "    /// Print what would be written, write nothing.",
        "    #[arg(long)]",
        "    pub dry_run: bool,",
        "}",
        "",
    ]
    return (
        head
        + code_file(rng, "rs", rng.randint(30, 45)).split("\n")
        + numbered_tests("cli", TEST_NAMES["cli"][:3])
    )


def hash_rs(rng: random.Random, threshold: int) -> list[str]:
    head = [
        "//! Perceptual hashes (64-bit dHash) and the distance between two of them.",
        "",
        "use std::path::Path;",
        "",
        "use anyhow::Result;",
        "",
        "/// Two images match when their hashes differ in at most this many bits.",
        f"pub const DEFAULT_MAX_DISTANCE: u32 = {threshold};",
        "",
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]",
        "pub struct PHash(pub u64);",
        "",
        "impl PHash {",
        "    pub fn distance(self, other: PHash) -> u32 {",
        "        (self.0 ^ other.0).count_ones()",
        "    }",
        "}",
        "",
    ]
    return head + code_file(rng, "rs", rng.randint(40, 60)).split("\n")


def main_rs() -> list[str]:
    return [
        "mod cli;",
        "mod config;",
        "mod exif;",
        "mod hash;",
        "mod manifest;",
        "mod progress;",
        "mod scan;",
        "mod thumb;",
        "mod util;",
        "",
        "use anyhow::Result;",
        "use clap::Parser;",
        "",
        "fn main() -> Result<()> {",
        "    env_logger::init();",
        "    let args = cli::Args::parse();",
        "    let opts = scan::ScanOptions {",
        "        root: args.root.clone(),",
        "        legacy_md5: args.legacy_md5,",
        "    };",
        "    let paths = scan::walk_serial(&opts.root)?;",
        "    let rows = scan::hash_all(&paths, &opts)?;",
        '    let manifest = args.manifest.unwrap_or_else(|| args.root.join("manifest.tsv"));',
        "    if !args.dry_run {",
        "        manifest::write(&manifest, &rows)?;",
        "    }",
        "    for cluster in scan::group(&rows) {",
        '        println!("{} copies: {}", cluster.len(), cluster[0].path.display());',
        "    }",
        "    Ok(())",
        "}",
    ]


# --- tool outputs ------------------------------------------------------------------------------


def secs(rng: random.Random) -> str:
    # One digit before the point: no "1.7x" a version or MSRV probe could match.
    return f"{rng.randint(2, 9)}.{rng.randint(10, 99)}s"


def compiling(rng: random.Random, crate: str, version: str, root: str, n: int) -> list[str]:
    deps = rng.sample(DEPS, n)
    lines = [f"   Compiling {name} v{v}" for name, v in deps]
    return [*lines, f"   Compiling {crate} v{version} ({root})"]


def test_run(
    rng: random.Random,
    crate: str,
    version: str,
    root: str,
    names: list[str],
    failing: dict[str, tuple[str, str, int]],
    ignored: str,
) -> tuple[str, str]:
    """(libtest's output, the summary's counts as printed)."""
    lines = [f"   Compiling {crate} v{version} ({root})",
             f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {secs(rng)}",
             f"     Running unittests src/main.rs (target/debug/deps/{crate}-{hexid(rng, 16)})",
             "", f"running {len(names)} tests"]  # fmt: skip
    for name in names:
        status = "FAILED" if name in failing else "ignored" if name == ignored else "ok"
        lines.append(f"test {name} ... {status}")
    passed = len(names) - len(failing) - 1
    counts = f"{passed} passed; {len(failing)} failed"
    if failing:
        lines += ["", "failures:", ""]
        for name, (left, right, line) in failing.items():
            module = name.split("::")[0]
            lines += [f"---- {name} stdout ----",
                      f"thread '{name}' panicked at src/{module}.rs:{line}:9:",
                      "assertion `left == right` failed", f"  left: {left}", f" right: {right}",
                      "note: run with `RUST_BACKTRACE=1` environment variable to display a "
                      "backtrace", ""]  # fmt: skip
        lines += ["", "failures:"] + [f"    {name}" for name in failing] + [""]
    verdict = "FAILED" if failing else "ok"
    lines.append(f"test result: {verdict}. {counts}; 1 ignored; 0 measured; 0 filtered out; "
                 f"finished in 0.{rng.randint(20, 95)}s")  # fmt: skip
    if failing:
        lines += ["", f"error: test failed, to rerun pass `--bin {crate}`"]
    return "\n".join(lines), counts


# --- the story ---------------------------------------------------------------------------------


def write_terse(seed: int, tokens: int) -> EvalSession:
    """codeact-terse-style: the same story (same seed, same values), told tersely at the end."""
    return write(seed, tokens, terse=True)


def write(seed: int, tokens: int, *, terse: bool = False) -> EvalSession:
    # Both tellings draw from the same stream: a seed gives the same crate and values in each.
    rng = random.Random(f"{FAMILY}:{seed}")
    crate = rng.choice(CRATES)
    msrv = rng.choice(MSRVS)
    first, bumped, settled = rng.choice(THRESHOLDS)
    ver_old, ver_new = rng.choice(VERSIONS)
    cur_version = f"{ver_new.rsplit('.', 1)[0]}.{int(ver_new.rsplit('.', 1)[1]) - 1}"
    issue = rng.randint(180, 960)
    report_old = "dupes.json"
    report_new = f"{crate}-clusters.json"
    open_test = rng.choice(OPEN_TESTS)
    c = CodeAct(rng, crate)
    s = c.s
    root = c.root
    target_chars = tokens * CHARS_PER_TOKEN
    others = list(rng.sample(OTHER_FILES, len(OTHER_FILES)))
    fill_step = 0

    def fill(fraction: float) -> None:
        """Filler the agent reads, until the session is `fraction` of its size."""
        nonlocal fill_step
        while s.chars < fraction * target_chars:
            fill_step += 1
            kind = fill_step % 4
            if kind == 1 and others:
                path = others.pop()
                c.files[path] = code_file(rng, "rs", rng.randint(150, 190)).split("\n")
                c.open_file(rng.choice(["Checking how this module is laid out.",
                                        "Let me read this one too before changing anything.",
                                        "This module is on the call path; opening it."]),
                            path, filler=True)  # fmt: skip
                c.scroll_down("And the rest of it:", filler=True)
            elif kind == 2:
                out = log_lines(rng, rng.randint(50, 70))
                c.bash(rng.choice(["Running the debug build over the fixture library to see "
                                   "the timings.", "A dry run with logging on:"]),
                       f"RUST_LOG=debug ./target/debug/{crate} fixtures/library --dry-run "
                       f"2>&1 | tail -n 70", out, filler=True)  # fmt: skip
            elif kind == 3:
                tree = [f"{crate} v{cur_version} ({root})"]
                for name, v in rng.sample(DEPS, 30):
                    tree.append(f"{rng.choice(['├── ', '│   ├── ', '│   │   └── ', '└── '])}"
                                f"{name} v{v}")  # fmt: skip
                c.bash("Checking what the dependency graph already gives us:",
                       "cargo tree -e normal --prefix indent", "\n".join(tree),
                       filler=True)  # fmt: skip
            else:
                term = rng.choice(["unwrap()", "Result<", "pub fn", "filter("])
                files = [p for p in OTHER_FILES if p in c.files] or ["src/exif.rs"]
                hits = []
                for _ in range(rng.randint(12, 24)):
                    f = rng.choice(files)
                    lines = c.files.get(f) or [term]
                    k = rng.randrange(len(lines))
                    hits.append(f"{root}/{f} (Line {k + 1}): {lines[k].strip() or term}")
                out = (
                    f'[Found {len(hits)} matches for "{term}" in {root}/src]\n'
                    + "\n".join(hits)
                    + f'\n[End of matches for "{term}" in {root}/src]'
                )
                c.ipython("Searching the sources for the call sites:",
                          f"search_dir('{term}', '{root}/src')", out, filler=True)  # fmt: skip

    # 1. the task, constraints in prose
    s.user(
        f"Working in {root} — our photo de-dup CLI. This is for issue #{issue}. Two things: "
        "hashing should use all cores instead of crawling through the library on one thread, "
        "and I want a `--since YYYY-MM-DD` option so the nightly job only looks at files "
        f"changed since that day. Count two photos as the same when their hashes are at most "
        f"{first} bits apart. It should also write a JSON report of the clusters it finds, to "
        f"`{report_old}` next to the manifest.\n\n"
        f"Some ground rules. We promise the distro packagers it builds on Rust {msrv}, so "
        "nothing that needs a newer compiler. It stays a plain synchronous binary — no tokio, "
        "no async runtime of any kind. And don't touch the `--legacy-md5` code path at all; "
        "the NAS backup script still calls it and nobody wants to debug that box again.\n\n"
        f"This ships as {ver_old}."
    )
    s.fact("constraint", f"builds on Rust {msrv}", (msrv,))
    s.fact("constraint", "no tokio / async runtime", ("tokio",))
    s.fact("constraint", "leave --legacy-md5 untouched", ("--legacy-md5",))
    s.fact("identifier", "issue number", (f"#{issue}",))

    cargo_toml = [
        "[package]", f'name = "{crate}"', f'version = "{cur_version}"', 'edition = "2021"',
        f'rust-version = "{msrv}"', "", "[dependencies]", 'anyhow = "1"',
        'clap = { version = "4", features = ["derive"] }', 'crossbeam-channel = "0.5"',
        'env_logger = "0.11"', 'image = { version = "0.24", default-features = false, '
        'features = ["png", "jpeg"] }', 'log = "0.4"', 'md-5 = "0.10"',
        'serde = { version = "1", features = ["derive"] }', 'serde_json = "1"',
        'time = { version = "0.3", features = ["parsing", "local-offset"] }', 'walkdir = "2"',
    ]  # fmt: skip
    c.files["Cargo.toml"] = cargo_toml
    c.bash(
        "Let me look at the crate first.",
        "cat Cargo.toml",
        "\n".join(cargo_toml),
    )
    s.fact("file_read", "read Cargo.toml", ("Cargo.toml",))
    c.files["src/scan.rs"] = scan_rs(rng, first)
    c.files["src/cli.rs"] = cli_rs(rng)
    c.files["src/hash.rs"] = hash_rs(rng, first)
    c.files["src/main.rs"] = main_rs()
    c.open_file("The scanner is where the single thread lives:", "src/scan.rs")
    c.scroll_down("Reading the rest before editing:")
    fill(0.12)
    c.open_file("Now the argument parser.", "src/cli.rs")
    c.open_file("And how the threshold is defined:", "src/hash.rs")
    s.fact("file_read", "read src/hash.rs", ("src/hash.rs",))
    fill(0.2)

    # 2. the plan, in prose, and the first approach
    plan = (
        "Here's how I'd go about it:\n"
        "1. add `--since` to src/cli.rs and pass it down to the walker;\n"
        "2. hash in parallel with a crossbeam-channel worker pool — crossbeam-channel is "
        "already a dependency, so nothing new — in a new src/pool.rs;\n"
        f"3. a new src/report.rs that writes the clusters to {report_old} with serde_json;\n"
        "4. update the README usage section for the new flags;\n"
        f"5. a CHANGELOG entry under {ver_old}.\n\n"
        "Starting with the flag. The date is parsed with the `time` crate's format "
        "description `[year]-[month]-[day]`, which is already in the lockfile."
    )
    c.edit(
        plan,
        "src/cli.rs",
        "    /// Print what would be written, write nothing.",
        "    /// Only look at files modified on or after this day (YYYY-MM-DD, local time).\n"
        "    #[arg(long, value_parser = parse_day)]\n"
        "    pub since: Option<time::Date>,\n\n"
        "    /// Print what would be written, write nothing.",
    )
    s.fact("decision", "--since parsed with time's [year]-[month]-[day]", ("[year]-[month]-[day]",))
    s.fact("todo", "wire --since into the CLI (done)", ("--since",), required=False)
    s.fact("todo", "update the README usage section", ("README",))
    s.fact("todo", "CHANGELOG entry", ("CHANGELOG",))
    c.create_file("Now the worker pool.", "src/pool.rs")
    pool = (
        "use crossbeam_channel::{bounded, Receiver, Sender};\n"
        "use std::thread;\n\n"
        "pub struct Pool<T: Send + 'static> {\n"
        "    jobs: Sender<Box<dyn FnOnce() -> T + Send>>,\n"
        "    pub results: Receiver<T>,\n"
        "}\n\n"
        "impl<T: Send + 'static> Pool<T> {\n"
        "    pub fn new(workers: usize) -> Self {\n"
        "        let (jobs, rx) = bounded::<Box<dyn FnOnce() -> T + Send>>(workers * 4);\n"
        "        let (tx, results) = bounded(workers * 4);\n"
        "        for _ in 0..workers {\n"
        "            let (rx, tx) = (rx.clone(), tx.clone());\n"
        "            thread::spawn(move || {\n"
        "                for job in rx {\n"
        "                    if tx.send(job()).is_err() {\n"
        "                        break;\n"
        "                    }\n"
        "                }\n"
        "            });\n"
        "        }\n"
        "        Pool { jobs, results }\n"
        "    }\n"
        "}"
    )
    c.append_file("Writing the pool itself:", "src/pool.rs", pool)
    c.edit(
        "Registering the module and using the pool from `hash_all`:",
        "src/main.rs",
        "mod manifest;\n",
        "mod manifest;\nmod pool;\n",
    )
    s.fact("file_modified", "main.rs edited", ("src/main.rs",))
    fill(0.3)

    # 3. first test run: order breaks
    names = [f"{m}::tests::{t}" for m, ts in TEST_NAMES.items() for t in ts]
    names = sorted(rng.sample(names, len(names) - rng.randint(0, 3)))
    ignored_test = "scan::tests::large_library_under_a_minute"
    names = sorted([*names, ignored_test])
    order = [n for n in names if n.startswith("scan::") and n != ignored_test][:4]
    fails = {n: (f"[{rng.randint(3, 9)}, {rng.randint(1, 2)}]", "[1, 2]", rng.randint(150, 240))
             for n in order}  # fmt: skip
    out, stale_counts = test_run(rng, crate, cur_version, root, names, fails, ignored_test)
    c.bash("Running the tests with the pool in place.", "cargo test", out, code=101)

    # 4. the user's first change, then the reversal of the approach
    s.say(
        f"{len(fails)} scan tests fail, all on ordering: the pool hands results back in the "
        "order the workers finish, and the manifest rows come out shuffled. Before I rework "
        f"that — on the fixture library, {first} bits leaves the burst shots from the same "
        "second as separate clusters. Is that what you want?"
    )
    s.user(
        f"No, bump it to {bumped} bits. Burst shots should collapse into one cluster, that's "
        "half the point."
    )
    c.sed(
        f"Setting the threshold to {bumped}.",
        "src/hash.rs",
        f"DEFAULT_MAX_DISTANCE: u32 = {first}",
        f"DEFAULT_MAX_DISTANCE: u32 = {bumped}",
    )
    s.fact("file_modified", "hash.rs threshold edited", ("src/hash.rs",))
    c.bash(
        "I'm dropping the crossbeam-channel worker pool. Re-sorting its output would mean "
        "buffering every row anyway, and the manifest has to stay in path order for the NAS "
        "script's diff. Instead: split the sorted paths into one chunk per core and hash each "
        "chunk on a std::thread::scope thread, joining in chunk order — order comes for free, "
        f"no channel, no 'static boxes, and scoped threads are stable since 1.63, so {msrv} "
        "is fine. Removing the pool first.",
        "rm src/pool.rs && sed -i '/^mod pool;$/d' src/main.rs && git status --short",
        " M src/cli.rs\n M src/hash.rs",
    )
    del c.files["src/pool.rs"]
    s.fact(
        "decision",
        "hash chunks on std::thread::scope threads, not a worker pool",
        ("thread::scope",),
        stale=("crossbeam-channel worker pool",),
    )
    s.fact("file_deleted", "src/pool.rs removed", ("src/pool.rs",))
    fill(0.42)
    scoped = (
        "pub fn hash_all(paths: &[PathBuf], opts: &ScanOptions) -> Result<Vec<Row>> {\n"
        "    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());\n"
        "    let chunk = paths.len().div_ceil(workers).max(1);\n"
        "    std::thread::scope(|scope| {\n"
        "        let handles: Vec<_> = paths\n"
        "            .chunks(chunk)\n"
        "            .map(|part| {\n"
        "                scope.spawn(move || {\n"
        "                    part.iter().map(|p| hash_one(p, opts)).collect::<Result<Vec<_>>>()\n"
        "                })\n"
        "            })\n"
        "            .collect();\n"
        "        let mut rows = Vec::with_capacity(paths.len());\n"
        "        for handle in handles {\n"
        '            rows.extend(handle.join().expect("hash worker panicked")?);\n'
        "        }\n"
        "        Ok(rows)\n"
        "    })\n"
        "}"
    )
    old_hash_all = (
        "pub fn hash_all(paths: &[PathBuf], opts: &ScanOptions) -> Result<Vec<Row>> {\n"
        "    let mut rows = Vec::with_capacity(paths.len());\n"
        "    for path in paths {\n"
        "        rows.push(hash_one(path, opts)?);\n"
        "    }\n"
        "    Ok(rows)\n"
        "}"
    )
    c.edit("Now `hash_all` on scoped threads:", "src/scan.rs", old_hash_all, scoped)
    s.fact("file_modified", "scan.rs hashes on scoped threads", ("src/scan.rs",))
    c.edit(
        "And the `--since` filter in the walker, comparing against local midnight:",
        "src/scan.rs",
        "        if entry.file_type().is_file() && hash::is_image(entry.path()) {",
        "        if entry.file_type().is_file()\n"
        "            && hash::is_image(entry.path())\n"
        "            && since.map_or(true, |day| modified_on_or_after(&entry, day))\n"
        "        {",
    )
    s.fact("file_modified", "cli.rs has --since", ("src/cli.rs",))
    build = compiling(rng, crate, cur_version, root, rng.randint(14, 22))
    build.append(f"    Finished `dev` profile [unoptimized + debuginfo] target(s) in {secs(rng)}")
    c.bash("Building.", "cargo build", "\n".join(build), filler=False)
    fill(0.52)

    # 5. the report: a type error, fixed
    report = [
        "use std::path::Path;", "", "use anyhow::Result;", "use serde::Serialize;", "",
        "use crate::manifest::Row;", "", "#[derive(Serialize)]", "struct Cluster<'a> {",
        "    size: usize,", "    bytes_saved: u64,", "    members: Vec<&'a str>,", "}", "",
        "pub fn write(dir: &Path, clusters: &[Vec<&Row>]) -> Result<()> {",
        "    let out: Vec<Cluster> = clusters",
        "        .iter()",
        "        .map(|c| Cluster {", "            size: c.len(),",
        "            bytes_saved: c.iter().skip(1).map(|r| r.size).max(),",
        "            members: c.iter().map(|r| r.path_str()).collect(),", "        })",
        "        .collect();",
        f"    let file = std::fs::File::create(dir.join(\"{report_old}\"))?;",
        "    serde_json::to_writer_pretty(file, &out)?;", "    Ok(())", "}",
    ]  # fmt: skip
    c.files["src/report.rs"] = report
    heredoc = "cat > src/report.rs <<'EOF'\n" + "\n".join(report) + "\nEOF"
    c.bash("Now the report module, written in one go:", heredoc, "")
    s.fact("file_created", "src/report.rs", ("src/report.rs",))
    err_line = report.index("            bytes_saved: c.iter().skip(1).map(|r| r.size).max(),") + 1
    pad = " " * len(str(err_line))
    error_out = "\n".join([
        f"   Compiling {crate} v{cur_version} ({root})",
        "error[E0308]: mismatched types",
        f"{pad}--> src/report.rs:{err_line}:26",
        f"{pad} |",
        f"{err_line} |             bytes_saved: c.iter().skip(1).map(|r| r.size).max(),",
        f"{pad} |                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ expected "
        "`u64`, found `Option<u64>`",
        f"{pad} |",
        f"{pad} = note: expected type `u64`",
        f"{pad}            found enum `Option<u64>`",
        "help: consider using `Option::expect` to unwrap the `Option<u64>` value, panicking if "
        "the value is an `Option::None`",
        f"{pad} |",
        f"{err_line} |             bytes_saved: c.iter().skip(1).map(|r| r.size).max()"
        ".expect(\"REASON\"),",
        f"{pad} |                                                                  "
        "+++++++++++++++++",
        "",
        "For more information about this error, try `rustc --explain E0308`.",
        f"error: could not compile `{crate}` (bin \"{crate}\") due to 1 previous error",
    ])  # fmt: skip
    c.edit(
        "Registering the module:", "src/main.rs", "mod progress;\n", "mod progress;\nmod report;\n"
    )
    c.bash("Building.", "cargo build", error_out, code=101)
    s.fact("error_resolved", "E0308 in report.rs", ("E0308",), required=False)
    c.edit(
        "Two mistakes there: `max` gives an Option, and the saving is the sum of the extra "
        "copies, not the largest one. `sum()` fixes both.",
        "src/report.rs",
        "            bytes_saved: c.iter().skip(1).map(|r| r.size).max(),",
        "            bytes_saved: c.iter().skip(1).map(|r| r.size).sum(),",
    )
    ok = [
        f"   Compiling {crate} v{cur_version} ({root})",
        f"    Finished `dev` profile [unoptimized + debuginfo] target(s) in {secs(rng)}",
    ]
    c.bash("Again:", "cargo build", "\n".join(ok))
    fill(0.62)

    # 6. progress in prose; the user changes two things and asks a question
    s.say(
        "Where things stand:\n"
        "1. `--since` — in, done.\n"
        "2. parallel hashing — done, on scoped threads (the pool is gone).\n"
        f"3. the report — writes {report_old}; builds now.\n"
        "4. README usage section — still to do.\n"
        "5. CHANGELOG entry — still to do.\n"
        f"Threshold is at {bumped} bits."
    )
    s.user(
        f"Two changes. Call the report `{report_new}` instead — {report_old} collides with "
        f"what the old Python tool leaves around. And {bumped} bits turned out too loose: it "
        f"merges different shots of the same whiteboard. Let's go with {settled} rather than "
        f"{bumped}.\n\nAlso, which commit introduced the old single-threaded walker? I want to "
        "credit it in the changelog."
    )
    s.fact("changed_value", "report file name", (report_new,), stale=(report_old,))
    s.fact(
        "changed_value",
        "match threshold in bits",
        (f"{settled} bits",),
        stale=(f"{first} bits", f"{bumped} bits"),
    )
    hashes = [hexid(rng) for _ in range(4)]
    walker = hashes[-1]
    log = "\n".join([
        f"{hashes[0]} 2026-{rng.randint(6, 10):02d}-{rng.randint(10, 28)} scan: skip hidden "
        "directories under the library root",
        f"{hashes[1]} 2026-{rng.randint(1, 5):02d}-{rng.randint(10, 28)} scan: sort paths "
        "before hashing so the manifest is stable",
        f"{hashes[2]} 2025-{rng.randint(7, 12):02d}-{rng.randint(10, 28)} scan: rename walk() "
        "to walk_serial()",
        f"{walker} 2025-{rng.randint(1, 6):02d}-{rng.randint(10, 28)} scan: walk the library "
        "with walkdir, one file at a time",
    ])  # fmt: skip
    c.bash(
        "Looking up the walker's history first.",
        "git log --format='%h %ad %s' --date=short --follow -- src/scan.rs | grep -i walk",
        log,
    )
    c.sed(
        f'It was {walker} ("scan: walk the library with walkdir, one file at a time"); the '
        f"later commits only renamed it and sorted its output. Now the report name "
        f"({report_new}) —",
        "src/report.rs",
        report_old,
        report_new,
    )
    s.fact("identifier", "commit of the single-threaded walker", (walker,))
    c.sed(
        f"— and the threshold, {settled} bits:",
        "src/hash.rs",
        f"DEFAULT_MAX_DISTANCE: u32 = {bumped}",
        f"DEFAULT_MAX_DISTANCE: u32 = {settled}",
    )
    fill(0.74)

    # 7. the tests again: one still red
    fails2 = {f"scan::tests::{open_test}": ("2", "3", rng.randint(240, 300))}
    names2 = sorted({*names, f"scan::tests::{open_test}",
                     *(f"report::tests::{t}" for t in TEST_NAMES["report"])})  # fmt: skip
    out2, counts = test_run(rng, crate, cur_version, root, names2, fails2, ignored_test)
    c.bash("Running the whole suite.", "cargo test", out2, code=101)
    s.fact("test_status", "final cargo test", (counts,), stale=(stale_counts,))
    s.fact("error_open", "the --since boundary test still fails", (open_test,))
    c.open_file(
        f"The ordering failures are gone; `{open_test}` is new and still fails. Looking at it:",
        "src/scan.rs",
        len(c.files["src/scan.rs"]) - 20,
    )
    fill(0.84)

    # 8. version change, clippy
    s.say(
        f"`{open_test}` fails because file mtimes are compared in UTC while `--since` means "
        "local midnight; a photo taken at 00:30 local on that day lands on the day before. "
        "`time`'s local offset is unsound to query once threads are running, so the fix is "
        "to read the offset in main() before the scan starts. That changes when the offset is "
        "taken for every run, so I'd like your go-ahead before I do it."
    )
    s.user(
        f"Leave that one for now, I'll decide tomorrow. Nothing here breaks anyone, so "
        f"make the release {ver_new} rather than {ver_old}. Then tidy up with clippy."
    )
    s.fact("changed_value", "release version", (ver_new,), stale=(ver_old,))
    c.sed(f"Setting the version to {ver_new}.", "Cargo.toml",
          f'version = "{cur_version}"', f'version = "{ver_new}"')  # fmt: skip
    ceil = "    let chunk = paths.len().div_ceil(workers).max(1);"
    at = c.files["src/scan.rs"].index(ceil) + 1
    col = ceil.index("div_ceil") + 1
    w = len(str(at))
    clippy = [
        f"    Checking {crate} v{ver_new} ({root})",
        f"error: current MSRV (Minimum Supported Rust Version) is `{msrv}.0` but this "
        "item is stable since `1.73.0`",
        f"{' ' * w}--> src/scan.rs:{at}:{col}",
        f"{' ' * w} |",
        f"{at} |{ceil}",
        f"{' ' * w} |{' ' * (col - 1)}{'^' * len('div_ceil(workers)')}",
        f"{' ' * w} |",
        f"{' ' * w} = help: for further information visit https://rust-lang.github.io/"
        "rust-clippy/master/index.html#incompatible_msrv",
        f"{' ' * w} = note: `-D clippy::incompatible-msrv` implied by `-D warnings`",
        f"{' ' * w} = help: to override `-D warnings` add `#[allow(clippy::incompatible_msrv)]`",
        "",
        f'error: could not compile `{crate}` (bin "{crate}") due to 1 previous error',
    ]
    c.bash("Clippy:", "cargo clippy --all-targets -- -D warnings", "\n".join(clippy), code=101)
    s.fact("command", "clippy with -D warnings", ("cargo clippy --all-targets -- -D warnings",))
    c.edit(
        f"Good catch by clippy: `usize::div_ceil` is newer than our {msrv}. Spelling the "
        "rounding out by hand:",
        "src/scan.rs",
        ceil,
        "    let chunk = ((paths.len() + workers - 1) / workers).max(1);",
    )
    c.bash("Clippy again:", "cargo clippy --all-targets -- -D warnings",
           f"    Checking {crate} v{ver_new} ({root})\n    Finished `dev` profile "
           f"[unoptimized + debuginfo] target(s) in {secs(rng)}")  # fmt: skip
    if terse:
        return _terse_ending(c, seed, fill)
    fill(0.97)
    stat = "\n".join([" Cargo.toml    |  2 +-", " src/cli.rs    | 18 ++++++++++",
                      " src/hash.rs   |  2 +-",
                      " src/main.rs   |  1 +", " src/report.rs | 27 ++++++++++++++",
                      " src/scan.rs   | 41 ++++++++++++++++------",
                      " 6 files changed, 79 insertions(+), 12 deletions(-)"])  # fmt: skip
    c.bash("Final state of the tree:", "git diff --stat", stat)

    # 9. the last answer
    closing = rng.choice(
        [
            "the timezone question is yours to call",
            "the midnight fix waits on your decision",
            "the local-offset change is parked until you decide",
        ]
    )
    s.say(
        f"Done for now — {closing}.\n\n"
        f"- Hashing runs on one scoped thread per core (std::thread::scope over sorted "
        "chunks), so the manifest keeps its order; the worker pool is gone.\n"
        f"- `--since YYYY-MM-DD` filters by modification day; clusters go to {report_new}; "
        f"the threshold is {settled} bits; version {ver_new}.\n"
        f"- `cargo test`: {counts} — `{open_test}` (UTC vs local midnight).\n"
        f"- Still open: README usage section, CHANGELOG entry for {ver_new} (crediting "
        f"{walker}), the midnight fix. Nothing is committed; issue #{issue}.\n"
        "<finish></finish>"
    )
    s.fact("last_message", "the final answer", (closing,))
    return finish_session(s, family=FAMILY, seed=seed)


def _terse_ending(c: CodeAct, seed: int, fill: Callable[[float], None]) -> EvalSession:
    """codeact-terse-style's ending: a late rule, a question and a to-do from the user, then
    an answer that names no fact (no final diff stat, no summary of the values)."""
    s, rng = c.s, c.rng
    fill(0.88)
    cap = rng.choice((5, 6, 8))
    size = f"{rng.randint(2, cap - 2)}.{rng.choice([d for d in range(1, 10) if d != cap])}"
    s.say(
        "Clippy is clean now. Shall I carry on with what's left, or do you want to look at "
        "anything first?"
    )
    s.user(
        f"Carry on. One more rule from here on, though: the release binary has to stay under "
        f"{cap} MB, it lives on the NAS's tiny root partition. How big is it right now?"
    )
    s.fact("constraint", "release binary stays under the size cap", (f"{cap} MB",))
    c.bash(
        "Building in release mode and looking at the binary.",
        f"cargo build --release 2>&1 | tail -n 1 && ls -lh target/release/{c.root.rsplit('/')[-1]}",
        f"    Finished `release` profile [optimized] target(s) in {secs(rng)}\n"
        f"-rwxr-xr-x 2 openhands openhands {size}M Dec  4 {rng.randint(17, 22)}:"
        f"{rng.randint(10, 59)} target/release/{c.root.rsplit('/')[-1]}",
    )
    s.say(
        f"The release binary is {size} MB, unstripped, so it fits with room to spare; "
        "stripping it would shave off more if it ever gets close."
    )
    s.fact("identifier", "size of the release binary", (f"{size} MB",))
    s.user(
        "Good. When you get to the docs, add a short note about that size limit to "
        "CONTRIBUTING.md too, so nobody pulls in a heavy crate later."
    )
    s.fact("todo", "note the size limit in CONTRIBUTING.md", ("CONTRIBUTING.md",))
    fill(0.97)

    closing = rng.choice(
        [
            "Stopping here; the working tree has the changes and one test still fails",
            "That is as far as I get today: the changes sit in the working tree, and a single "
            "test is still red",
            "Pausing here, with everything left in the working tree and one test still failing",
        ]
    )
    s.say(f"{closing}.\n<finish></finish>")
    s.fact("last_message", "the final answer", (closing,))
    return finish_session(s, family=FAMILY_TERSE, seed=seed)
