"""An AutoCodeRover-style family, telling the story's second-thoughts variant: a Clojure
service (`quillpost`, a webhook relay on deps.edn; `clojure -M:test` through the cognitect
test-runner, clj-kondo, cljfmt, a criterium benchmark for the variant's figure) worked on by
an agent in the shape of AutoCodeRover (nus-apr/auto-code-rover): context retrieval through
its search API, called as OpenAI function calls, and patches written in the assistant's own
text as `<file>`/`<original>`/`<patched>` blocks.

Verified in nus-apr/auto-code-rover at 3536ac29 (`fetch`ed snapshot):
- The search API's names and argument names are the methods of `SearchBackend`
  (`app/search/search_backend.py`): `search_class {class_name}`, `search_class_in_file
  {class_name, file_name}`, `search_method {method_name}`, `search_method_in_class
  {method_name, class_name}`, `search_method_in_file {method_name, file_name}`,
  `search_code {code_str}`, `search_code_in_file {code_str, file_name}`,
  `get_code_around_line {file_name, line_no_str, window_size_str}` and `get_file_content
  {file_name}` (the last is a backend method the search prompt does not list; the prompt in
  `agent_search.py` writes `file_path` where the backend's parameter is `file_name`; this
  family calls the backend's names).
- Their results, word for word: "Found N methods with name X in the codebase:\\n\\n",
  "Found N classes with name X in file F:\\n\\n", "Found N snippets containing `X` in the
  codebase:\\n\\n", "Found N snippets with code X in file F:\\n\\n" (the code with a trailing
  ")" removed, as `search_code_in_file` strips it), "Found N code snippets around line L:",
  "Could not find method X in the codebase." and the others; each hit "- Search result
  k:\\n```\\n<tagged>\\n```\\n" where `SearchResult.to_tagged_str` writes
  "<file>path</file>\\n<class>C</class> <func>f</func>\\n<code>\\n…\\n</code>" (an empty
  class part leaves the newline and a blank before `<func>`); more than RESULT_SHOW_LIMIT
  (3) hits are collapsed to "They appeared in the following files:\\n- <file>p</file> (n
  matches)" (`app/data_structures.py`). `get_file_content` answers "<file>F</file>
  <code>…</code>".
- Tool calls are recorded as an assistant message with `"content": None` and the calls
  (`MessageThread.add_tool_calls`), results as `{"role": "tool", "content", "tool_call_id"}`
  (`MessageThread.add_tool`).
- The patch format is `agent_write_patch.py`'s: "# modification N" then a fenced block with
  `<file>…</file>`, `<original>…</original>`, `<patched>…</patched>`; the original must match
  a continuous block of the program exactly, without line numbers. A patch that cannot be
  applied is answered "Your edit could not be applied to the program. … Please try again."
  (not needed here: every patch of the story applies, and nothing answers an applied one).

Called in the sessions: `get_file_content`, `search_class`, `search_class_in_file`,
`search_method`, `search_method_in_file`, `search_code`, `search_code_in_file` and
`run_command`; `search_method_in_class` and `get_code_around_line` are offered in the system
prompt but this story never needs them (a Clojure namespace has no methods inside classes).

This family's own, where ACR has nothing for it:
- ACR indexes Python; here its backend is taken to index Clojure: a `defn` is a method, a
  `defrecord`/`defprotocol` a class, and file names are paths relative to the project.
- `run_command {cmd}`: ACR runs tests only inside its validation/reproducer machinery, never
  as a tool; this family's extension is one function that runs a shell command in the
  project and answers "<returncode>N</returncode>\\n<output>\\n…\\n</output>", in the
  tagged style of ACR's results. Tests, lint, git, deletions and moves go through it.
- A new file is a patch whose `<original></original>` is empty.
- The story's to-do list is kept in the assistant's text ("Work items:" with numbered rows
  marked done / now / next / dropped), since ACR has no to-do tool.
- The interactive turns (ACR solves one issue without a user to talk to), the project, the
  system prompt's wording, both sides' phrasing, and the command outputs (cognitect
  test-runner's "Ran N tests containing M assertions.\\nF failures, 0 errors.", clj-kondo's
  "file:line:col: error: …" and "linting took …ms, errors: N, warnings: N", criterium's
  quick-bench report).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from compaction.eval.families._base import STORY_LINE, Session, Voice

PROJECT = "quillpost"
SRC = f"src/{PROJECT}"
TESTS_DIR = f"test/{PROJECT}"
TESTS_COMMAND = "clojure -M:test"
LINT = f"clj-kondo --lint {SRC} --fail-level error"
BENCH = "clojure -M:bench -m quillpost.bench.drain"
#: How the assistant opens its to-do list in its own text, and the marks of its rows.
WORK_HEADING = "Remaining for this issue:"
WORK_MARK = {"completed": "done", "in_progress": "now", "pending": "next",
             "cancelled": "dropped"}  # fmt: skip
#: ACR shows full code for at most this many hits (`search_backend.RESULT_SHOW_LIMIT`).
RESULT_SHOW_LIMIT = 3
_WORDS = ("ledger", "invoice", "shipment", "courier", "parcel", "tariff", "depot", "carrier")
#: The failing tests: (deftest suffix, its testing string, expected form, actual form, line).
TESTS = {
    "retries": ("gives up after the third failed delivery", "(= 3 (count @attempts))",
                "(not (= 3 2))", 41),
    "orders_batches": ("replays parked batches oldest first", "(= [1 2 3] (map :seq sent))",
                       "(not (= [1 2 3] (2 1 3)))", 66),
    "handles_empty": ("sends nothing for an empty outbox", "(zero? (count @sent))",
                      "(not (zero? 1))", 23),
}  # fmt: skip
_OTHER_NS = ("envelope", "signature", "routes")


def clj_line(line: str) -> str:
    """A story line as the Clojure it stands for."""
    match = STORY_LINE.match(line)
    if not match:
        return line
    module, limit, value, fixed = match.groups()
    if limit.startswith("limit"):
        if value.startswith("settings."):
            return f"(def {module}-limit (:{module}-limit settings))"
        return f"(def {module}-limit {value})"
    return f"      (client/send! batch{' tenant-id' if fixed else ''})"


def kebab(stem: str) -> str:
    return stem.replace("_", "-")


class AcrVoice(Voice):
    family = "acr-style"
    system_prompt = (
        "You are a software developer maintaining a large project.\n"
        f"You are working on {PROJECT}, a Clojure service, together with its maintainer, "
        "who talks to you in this conversation.\n"
        "You can gather code context with the search API functions below, and you change "
        "the code by writing patches in your reply.\n\n"
        "Search API:\n"
        "- search_class(class_name): Search for a class (defrecord, deftype, defprotocol) in "
        "the codebase.\n"
        "- search_class_in_file(class_name, file_name): Search for a class in a given file.\n"
        "- search_method_in_file(method_name, file_name): Search for a method (defn) in a "
        "given file.\n"
        "- search_method_in_class(method_name, class_name): Search for a method in a given "
        "class.\n"
        "- search_method(method_name): Search for a method in the entire codebase.\n"
        "- search_code(code_str): Search for a code snippet in the entire codebase.\n"
        "- search_code_in_file(code_str, file_name): Search for a code snippet in a given "
        "file.\n"
        "- get_code_around_line(file_name, line_no_str, window_size_str): Get the code around "
        "a given line number in a file.\n"
        "- get_file_content(file_name): Get the content of a whole file.\n"
        "You must give correct number of arguments when invoking API calls.\n\n"
        "Extension for this project:\n"
        "- run_command(cmd): Run a shell command at the project root and return its exit "
        "code and output. Use it for the tests (clojure -M:test), clj-kondo, cljfmt, the "
        "benchmarks and git. Delete and move files with git rm and git mv.\n\n"
        "Write a patch in the format below, in your reply. Within `<file></file>`, put the "
        "file path. Within `<original></original>`, put the original code snippet from the "
        "program. Within `<patched></patched>`, put the fixed version of the original code. "
        "Pay attention to indentation and to balanced parentheses. You can write multiple "
        "modifications if needed. To create a new file, leave `<original></original>` "
        "empty.\n\n"
        "# modification 1\n```\n<file>...</file>\n<original>...</original>\n"
        "<patched>...</patched>\n```\n\n"
        "NOTE:\n"
        "- In your patch, DO NOT include the line numbers at the beginning of each line!\n"
        "- Inside <original> and </original>, you should provide the original code snippet "
        "from the program. This original code snippet MUST match exactly to a continuous "
        "block of code in the original program, since the system will use this to locate "
        "the code to be modified.\n\n"
        f"Keep a numbered list of work items in your replies, headed '{WORK_HEADING}', each "
        "row marked (done), (now), (next) or (dropped).\n\n"
        "Project: deps.edn, Clojure 1.12 on JDK 21; sources under src/quillpost, tests under "
        "test/quillpost (clojure.test, run by the cognitect test-runner through the :test "
        "alias); configuration in resources/config.edn read through Aero into an Integrant "
        "system; clj-kondo and cljfmt must pass."
    )
    src = SRC
    ext = "clj"
    second_thoughts = True
    commands: ClassVar[list[str]] = [
        "clojure -X:replay :queue {module} :dry-run true",
        "clojure -M:cljfmt check",
        "clojure -T:build uber",
    ]
    #: (setting, first value, second, third): no value is part of another, in any row.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("core.async buffer of the delivery channel", "64 slots", "4096 slots", "700 slots"),
        ("hato client :timeout", "2500 ms", "90000 ms", "12000 ms"),
        ("hikari :maximum-pool-size", "4 conns", "50 conns", "16 conns"),
        ("Integrant worker thread count", "3 threads", "48 threads", "10 threads"),
        ("dead-letter retention", "5 days", "120 days", "30 days"),
        ("relay :jvm-opts heap", "-Xmx768m", "-Xmx8g", "-Xmx3g"),
    )
    #: (first plan, second plan, why not the first, third plan, why not the second).
    plans: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("a future looping in -main that polls the outbox",
         "a core.async go-loop woken by a timeout channel",
         "a future started from -main survives every reset in the REPL and nobody stops it",
         "a chime schedule started and stopped by Integrant",
         "the go-loop blocks on JDBC and starves the core.async dispatch threads"),
        ("Datomic entities for the parked deliveries",
         "HoneySQL maps run through next.jdbc",
         "Datomic would be a second database to run for one table",
         "hand-written SQL in HugSQL files",
         "the HoneySQL maps for the upsert are harder to read than the SQL itself"),
        ("Cheshire with keyword keys",
         "jsonista with one shared object mapper",
         "Cheshire's keywordized keys blow up on partner payloads with odd field names",
         "Transit over JSON for the internal hops",
         "two services still parse our events with a plain JSON parser and want strings"),
    )  # fmt: skip
    phrases: ClassVar[dict[str, list[str]]] = {
        "task": [
            "quillpost has a bug: deliveries that {module} parks while a partner is down are "
            "never sent again once the partner recovers. Please make them go out again, oldest "
            "first. The {other} namespace uses the same path and is stuck the same way.",
            "Issue for you: since the last deploy, nothing parked by {module} gets redelivered. "
            "Work out why and fix it so parked deliveries are retried in parking order; "
            "{other} goes through that code as well.",
        ],
        "set_value": [
            "Start the {key} at {value}, please.",
            "For the {key}, begin with {value} in config.edn.",
        ],
        "ack": [
            "Understood; every patch I write will respect it.",
            "Clear. I'll keep my patches within that.",
            "Acknowledged, that shapes the patches from here.",
        ],
        "constraint": [
            "One more thing for quillpost: {rule}.",
            "Hard requirement, please: {rule}.",
            "Before you patch anything: {rule}.",
        ],
        "plan": [
            "Based on the context so far, my approach: {plan}, so what {module} parks is "
            "picked up again after a restart.",
            "I'll resolve this with {plan}; the parked deliveries of {module} get found again "
            "that way.",
        ],
        "change_value": [
            "Change the {key} from {old} to {new}; {old} is too small for the slow partners.",
            "Scratch {old} for the {key}, use {new}.",
            "The on-call folks say {old} as the {key} trips the pager. Put {new}.",
        ],
        "change_again": [
            "Back to the {key}: {old} eats the other tenants' share. Set {new}.",
            "Staging didn't like {old} for the {key} either. {new}, and that's the last word.",
        ],
        "ack_value": [
            "OK: the {key} becomes {new}, in resources/config.edn.",
            "Setting the {key} to {new} in config.edn.",
        ],
        "reverse": [
            "Dropping {old}: {why}. I'm switching to {new}.",
            "Not {old} after all, since {why}. The approach is {new} now.",
        ],
        "reverse_again": [
            "{old} doesn't hold up either: {why}. Switching to {new}.",
            "I'm replacing {old} as well, because {why}. Going with {new}.",
        ],
        "question": [
            "Which commit introduced this? I need the hash for the incident write-up.",
            "Find the commit that caused the regression, please; its hash goes into the "
            "postmortem.",
        ],
        "commit": [
            "deps: bump clojure to 1.12.0",
            "test: share the fake partner handler across namespaces",
            "docs: describe the replay alias",
            "ci: cache ~/.m2 and .cpcache",
        ],
        "answer": [
            "It is {sha}: that commit moved delivery onto the shared hato client and dropped "
            "the retry interceptor.",
            "The regression is {sha}, the move to the shared hato client, which lost the "
            "retry interceptor on the way.",
        ],
        "measure_question": [
            "How fast is draining one batch? Run the criterium bench and give me the mean; I "
            "need that number for capacity planning, so remember it.",
            "Please benchmark draining a single batch with criterium and tell me the mean "
            "execution time. I'll want that figure later for the design review.",
        ],
        "measure_answer": [
            "criterium reports a mean of {figure} µs for draining one batch.",
            "Draining a single batch takes {figure} µs on average, per criterium.",
        ],
        "last": [
            "Current state: {test} is still failing, and I'm now on the item to {todo}. "
            "The other items on my list are done, dropped or next in line.",
            "Where things are: the one failing test left is {test}; the item in progress is "
            "to {todo}. Everything else on the list is done, dropped or queued.",
        ],
    }

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._mods = 0  # patch modifications written so far
        self._seen: dict[str, list[str]] = {}  # file → its lines as last retrieved or patched
        self._failed_before: list[str] = []

    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        return f"{module}-{kebab(name.removeprefix(f'test_{module}_'))}-test"

    # --- Clojure source -------------------------------------------------------------------

    def _render(self, path: str, content: str) -> list[str]:
        body = content.split("\n")
        story = [clj_line(x) for x in body if STORY_LINE.match(x)]
        size = sum(1 for x in body if not STORY_LINE.match(x))
        ns = kebab(path.removeprefix(f"{SRC}/").removesuffix(".clj")).replace("/", ".")
        head = [f"(ns {PROJECT}.{ns}", "  (:require [clojure.string :as str]",
                "            [clojure.tools.logging :as log]",
                f"            [{PROJECT}.client :as client]",
                f"            [{PROJECT}.config :refer [settings]]))", ""]  # fmt: skip
        out: list[str] = []
        while len(out) < size:
            out += self._form()
        return [*head, *out, *(["", *story] if story else []), ""]

    def _form(self) -> list[str]:
        a, b, c = self.rng.sample(_WORDS, 3)
        n = self.rng.choice((16, 64, 250, 1000))
        kind = self.rng.randrange(4)
        if kind == 0:
            return [f"(defn {a}-{b}s", f'  "The {b}s of a {a}, newest first."',
                    f"  [{a} & {{:keys [{c}] :or {{{c} :any}}}}]",
                    f"  (->> (:items {a})", f"       (filter #(or (= {c} :any) (= {c} (:{c} %))))",
                    "       (sort-by :created-at #(compare %2 %1))",
                    f"       (take {n})))", ""]  # fmt: skip
        if kind == 1:
            return [f"(defrecord {a.title()}{b.title()} [id {a}-id {b} {c}-count])", ""]
        if kind == 2:
            return [f"(defn- {c}-totals", f"  [{a}]", f"  (->> (:items {a})",
                    f"       (group-by :{c})",
                    f"       (map (fn [[k v]] [k (reduce + (map :{b}-count v))]))",
                    "       (into {})))", ""]  # fmt: skip
        return [f"(defn fetch-{a}-{c}!", "  [http ids]", "  (when (seq ids)",
                f'    (let [resp (http/get (str "/v2/{a}s/{c}?limit={n}&page=" (first ids)))]',
                "      (case (:status resp)", "        200 (count ids)", "        404 0",
                f'        (throw (ex-info "{b} lookup failed" {{:status (:status resp)}}))))))',
                ""]  # fmt: skip

    # --- tools ----------------------------------------------------------------------------

    def _call(self, name: str, arguments: dict[str, str], result: str, *,
              filler: bool = False) -> None:  # fmt: skip
        self.s.call(name, arguments, result, filler=filler)

    @staticmethod
    def _hit(path: str, func: str | None, code: str, cls: str | None = None) -> str:
        """`SearchResult.to_tagged_str`: file, class, func, code."""
        class_part = f"<class>{cls}</class>" if cls else ""
        func_part = f" <func>{func}</func>" if func else ""
        return f"<file>{path}</file>\n{class_part}{func_part}\n<code>\n{code}\n</code>"

    @staticmethod
    def _hits(hits: Sequence[str]) -> str:
        return "".join(f"- Search result {k + 1}:\n```\n{h}\n```\n" for k, h in enumerate(hits))

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        defns = [x.split()[1] for x in lines if x.startswith("(defn ")]
        records = [x.split()[1] for x in lines if x.startswith("(defrecord ")]
        roll = self.rng.random()
        if filler and records and roll < 0.2:
            # A record by name: its signature, in the codebase or in this file.
            name = self.rng.choice(records)
            code = next(x for x in lines if x.startswith(f"(defrecord {name} "))
            hit = self._hits([self._hit(path, None, code, cls=name)])
            if roll < 0.1:
                result = f"Found 1 classes with name {name} in the codebase:\n\n{hit}"
                self._call("search_class", {"class_name": name}, result, filler=True)
            else:
                result = f"Found 1 classes with name {name} in file {path}:\n\n{hit}"
                self._call("search_class_in_file", {"class_name": name, "file_name": path},
                           result, filler=True)  # fmt: skip
            return
        if filler and defns and roll < 0.5:
            # One defn of the file, found by name, in it or in the codebase.
            name = self.rng.choice(defns)
            start = lines.index(next(x for x in lines if x.startswith(f"(defn {name}")))
            end = lines.index("", start)
            hit = self._hits([self._hit(path, name, "\n".join(lines[start:end]))])
            if roll < 0.35:
                result = f"Found 1 methods with name `{name}` in file {path}:\n\n{hit}"
                self._call("search_method_in_file", {"method_name": name, "file_name": path},
                           result, filler=True)  # fmt: skip
            else:
                result = f"Found 1 methods with name {name} in the codebase:\n\n{hit}"
                self._call("search_method", {"method_name": name}, result, filler=True)
            return
        text = "\n".join(lines)
        self._call("get_file_content", {"file_name": path},
                   f"<file>{path}</file> <code>{text}</code>", filler=filler)  # fmt: skip

    def _patch(self, path: str, original: str, patched: str, lead: str) -> None:
        self._mods += 1
        block = (f"# modification {self._mods}\n```\n<file>{path}</file>\n"
                 f"<original>{original}</original>\n<patched>{patched}</patched>\n```")  # fmt: skip
        self.s.say(f"{lead}\n\n{block}")

    def edit(self, path: str, old: str, new: str) -> None:
        before, after = clj_line(old), clj_line(new)
        lines = self._seen.get(path)
        if lines is None or before not in lines:
            self._locate(path, before)
            lines = self._seen[path]
        at = lines.index(before)
        self._seen[path] = [*lines[:at], after, *lines[at + 1 :]]
        lead = self.pick([
            f"The fix in {path}:",
            f"Patch for {path}:",
            f"Here is the change to {path.rsplit('/', 1)[-1]}:",
        ])  # fmt: skip
        self._patch(path, before, after, lead)

    def _locate(self, path: str, before: str) -> None:
        """A line named by the linter in a file not retrieved yet: found with
        `search_code_in_file`, as ACR answers it."""
        stem = path.rsplit("/", 1)[-1].removesuffix(".clj")
        func = f"drain-{kebab(stem)}!"
        region = [f"(defn {func}", "  [batches]", "  (doseq [batch batches]",
                  "    (when (seq (:deliveries batch))", before, "      (log/info :drained "
                  "(:id batch)))))"]  # fmt: skip
        lines = [*self._render(path, "\n" * 60), *region, ""]
        self._seen[path] = lines
        code = before.strip()
        shown = code.removesuffix(")")
        result = (f"Found 1 snippets with code {shown} in file {path}:\n\n"
                  + self._hits([self._hit(path, func, "\n".join(region))]))  # fmt: skip
        self._call("search_code_in_file", {"code_str": code, "file_name": path}, result)

    def create(self, path: str, content: str) -> None:
        lines = self._render(path, content)
        self._seen[path] = lines
        lead = self.pick([f"A new namespace, {path}:", f"Adding {path}:"])
        self._patch(path, "", "\n".join(lines), lead)

    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        result = f"<returncode>{exit_code}</returncode>\n<output>\n{output}\n</output>"
        self._call("run_command", {"cmd": command}, result, filler=filler)

    def delete(self, path: str) -> None:
        self.shell(f"git rm {path}", f"rm '{path}'")

    def move(self, source: str, destination: str) -> None:
        source = source.replace("testdata/", "test/resources/", 1)
        destination = destination.replace("testdata/", "test/resources/", 1)
        folder = destination.rsplit("/", 1)[0]
        self.shell(f"mkdir -p {folder} && git mv -v {source} {destination}",
                   f"Renaming {source} to {destination}")  # fmt: skip

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        counts: dict[str, int] = {}
        for hit in hits:
            path = hit.split(":", 1)[0]
            counts[path] = counts.get(path, 0) + 1
        code = f"({pattern}-"
        result = f"Found {len(hits)} snippets containing `{code}` in the codebase:\n\n"
        if len(hits) > RESULT_SHOW_LIMIT:
            result += "They appeared in the following files:\n"
            result += "".join(f"- <file>{p}</file> ({n} matches)\n" for p, n in counts.items())
        self._call("search_code", {"code_str": code}, result, filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        names = sorted(set(paths))
        self.shell(f"find {root} -name '*.clj' | sort", "\n".join(names), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        rows = [f"{k + 1}. ({WORK_MARK[status]}) {text}" for k, (text, status) in
                enumerate(items)]  # fmt: skip
        self.s.say("\n".join([WORK_HEADING, *rows]))

    # --- what the commands print ----------------------------------------------------------

    def command_output(self, k: int) -> str:
        if k == 0:
            parked = self.rng.randint(20, 80)
            return "\n".join([
                f"{self.rng.randint(10, 23)}:{self.rng.randint(10, 59)}:"
                f"{self.rng.randint(10, 59)}.{self.rng.randint(100, 999)} INFO  "
                f"{PROJECT}.replay - dry run, nothing is sent",
                "| :tenant    | :parked | :due |",
                "|------------+---------+------|",
                f"| acme       | {parked:<7} | 0    |",
                f"| northwind  | {parked // 4:<7} | 0    |",
                f"{{:parked {parked + parked // 4}, :due 0}}",
            ])  # fmt: skip
        if k == 1:
            return "All source files formatted correctly"
        seconds = self.rng.randint(20, 70)
        return "\n".join([
            "Compiling quillpost.main ...",
            f"Building uber jar target/{PROJECT}-1.4.{self.rng.randint(0, 30)}-standalone.jar",
            f"Done in {seconds}s",
        ])  # fmt: skip

    def build_error(self, module: str) -> tuple[str, str, str]:
        path = f"{SRC}/{self.file_name(module)}"
        message = "quillpost.client/send! is called with 1 arg but expects 2"
        out = (f"{path}:88:7: error: {message}\n"
               f"linting took {self.rng.randint(300, 900)}ms, errors: 1, warnings: 0")  # fmt: skip
        return out, message, LINT

    def build_ok(self) -> str:
        return f"linting took {self.rng.randint(300, 900)}ms, errors: 0, warnings: 0"

    def measurement(self, figure: str) -> tuple[str, str]:
        mean = float(figure)
        digits = f"{self.rng.randint(0, 9999):04d}"
        calls = self.rng.randint(900, 2400)
        lines = [
            f"Evaluation count : {calls * 6} in 6 samples of {calls} calls.",
            f"             Execution time mean : {figure}{digits} µs",
            f"    Execution time std-deviation : {mean * 0.031:.6f} µs",
            f"   Execution time lower quantile : {mean * 0.962:.6f} µs ( 2.5%)",
            f"   Execution time upper quantile : {mean * 1.044:.6f} µs (97.5%)",
            f"                   Overhead used : {self.rng.randint(5, 9)}.{digits[:6]} ns",
        ]
        return "\n".join(lines), BENCH

    def test_command(self) -> str:
        return TESTS_COMMAND

    def test_counts(self, failed: int, passed: int) -> str:
        return f"{failed} failures, 0 errors."

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        named = list(dict.fromkeys([*failing, *self._failed_before]))
        self._failed_before = named
        namespaces: dict[str, list[str]] = {}
        for test in named:
            module = test.split("-", 1)[0]
            namespaces.setdefault(f"{PROJECT}.{module}-test", []).append(test)
        for other in _OTHER_NS:
            namespaces.setdefault(f"{PROJECT}.{other}-test", [])
        out = ['Running tests in #{"test"}', ""]
        for ns in sorted(namespaces):
            out += [f"Testing {ns}", ""]
            for test in namespaces[ns]:
                if test not in failing:
                    continue
                module = test.split("-", 1)[0]
                key = next(k for k in TESTS if test == f"{module}-{kebab(k)}-test")
                doc, expected, actual, line = TESTS[key]
                out += [f"FAIL in ({test}) ({module}_test.clj:{line})", doc,
                        f"expected: {expected}", f"  actual: {actual}", ""]  # fmt: skip
        total = failed + passed
        out += [f"Ran {total} tests containing {total * 3 + 7} assertions.",
                self.test_counts(failed, passed)]  # fmt: skip
        return "\n".join(out)
