"""ohstory-style: an OpenHands session (CodeActAgent, native function calls), its own story.

Not told by `story.tell`: the agent's own tools in their own shapes, on a Java/Gradle service.

Tools, as OpenHands' CodeActAgent declares them and as its runtime answers them:

* `execute_bash` {command, is_input ("true"/"false"), timeout, security_risk}: the output, then
  `[The command completed with exit code N.]`, `[Current working directory: …]`,
  `[Python interpreter: …]` and `[Command finished with exit code N]`. A command with no new
  output for 30 seconds comes back with `[The command has no new output after 30 seconds. …]`
  and no exit code; an empty command with `is_input: "true"` collects the rest, after
  `[Below is the output of the previous command.]`.
* `str_replace_editor` {command: view|create|str_replace|insert|undo_edit, path, file_text,
  old_str, new_str, insert_line, view_range, security_risk}: "Here's the result of running
  `cat -n` on …", "File created successfully at: …", "The file … has been edited. Here's the
  result of running `cat -n` on a snippet of …", "Last edit to … undone successfully. …",
  a directory's "Here's the files and directories up to 2 levels deep in …", and `ERROR:`.
* `task_tracker` {command: view|plan, task_list: [{id, title, status: todo|in_progress|done,
  notes}]}: "Task list has been updated with N items. Stored in session directory: …"; `view`
  answers with the TASKS.md it keeps. A task that is no longer wanted leaves the list.
* `think` {thought}: "Your thought has been logged."
* `finish` {message}: answered with its message, as OpenHands' SDK's FinishObservation gives it
  to the model, so that the transcript ends answered.

The story: a Spring Boot payments service gets an Idempotency-Key layer on one POST endpoint.
The user sets rules and values in the first message; the assistant first hooks the back-office
module and is sent to the public API's config; a HandlerInterceptor gives way to a
OncePerRequestFilter, an in-memory map to a Postgres table to Redis; the retention changes
twice and the in-flight wait once; a directory is put out of bounds; a to-do leaves the list and
one joins it; the user asks which commit added the old guard; a compile error, a failing test
and a checkstyle finding are fixed, the old guard is `git rm`ed, one test stays red. The last
message names no fact. 30 facts per session, 24 of them required.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any, Final

from compaction.eval.families._base import (
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

FAMILY: Final = "ohstory-style"

_SYSTEM = """You are OpenHands agent, a helpful AI assistant that can interact with a computer to \
solve tasks.

<ROLE>
Your primary role is to assist users by executing commands, modifying code, and solving \
technical problems effectively. Be thorough and methodical, and prefer quality over speed.
* If the user asks a question, like "why is X happening", don't try to fix the problem. Just \
give an answer to the question.
</ROLE>

<EFFICIENCY>
* Each action you take is somewhat expensive. Wherever possible, combine several actions into \
one, e.g. chain bash commands, and use grep, find and git with filters when exploring.
</EFFICIENCY>

<FILE_SYSTEM_GUIDELINES>
* When a user provides a file path, do NOT assume it's relative to the current working \
directory. Explore the file system to locate the file before working on it.
* If asked to edit a file, edit the file directly, rather than creating a new file with a \
different filename.
* NEVER create multiple versions of the same file with different suffixes. If you decide a \
file you created is no longer useful, delete it.
</FILE_SYSTEM_GUIDELINES>

<CODE_QUALITY>
* Write clean, efficient code with minimal comments.
* Make the minimal changes needed to solve the problem, after understanding the codebase.
</CODE_QUALITY>

<VERSION_CONTROL>
* Be careful with git operations. Do NOT push, rewrite history or delete branches unless \
explicitly asked to do so.
</VERSION_CONTROL>

<PROBLEM_SOLVING_WORKFLOW>
1. EXPLORATION: explore the relevant files and understand the context first
2. ANALYSIS: consider multiple approaches and select the most promising one
3. TESTING: for new features, write tests alongside the implementation
4. IMPLEMENTATION: make focused, minimal changes
5. VERIFICATION: run the tests and check edge cases
</PROBLEM_SOLVING_WORKFLOW>

<SECURITY_RISK_ASSESSMENT>
Every execute_bash and str_replace_editor call carries a security_risk of LOW, MEDIUM or HIGH: \
LOW for reading and ordinary edits in the workspace, MEDIUM for commands that change the \
environment or delete files, HIGH for anything that touches credentials or systems outside it.
</SECURITY_RISK_ASSESSMENT>

<TASK_MANAGEMENT>
* Use the task_tracker tool for work with several steps: plan the tasks, keep exactly one \
in_progress, mark a task done as soon as it is, and remove tasks that are no longer wanted.
</TASK_MANAGEMENT>

<TROUBLESHOOTING>
* If you've made repeated attempts to solve a problem but tests still fail, step back, list \
possible causes, and tell the user what you found rather than going in circles.
</TROUBLESHOOTING>"""

#: Characters per token of this family's text, measured with cl100k_base on its sessions: Java,
#: Gradle output and JSON arguments run longer per token than `_base.CHARS_PER_TOKEN` (3.4).
_CHARS_PER_TOKEN = 3.85

_PY = "/openhands/poetry/openhands-ai-5O4_aCHf-py3.12/bin/python"

# --- what each seed draws --------------------------------------------------------------------

#: (repository, Java package)
_PROJECTS = (
    ("payments-gateway", "com.northwind.pay"),
    ("checkout-api", "io.kestrel.checkout"),
    ("paybridge", "com.brightline.paybridge"),
    ("remit-service", "org.tallyho.remit"),
    ("settle-hub", "net.corvid.settle"),
)
#: (path segment of POST /v1/…, class stem)
_RESOURCES = (
    ("charges", "Charge"),
    ("payouts", "Payout"),
    ("transfers", "Transfer"),
    ("refunds", "Refund"),
)
#: (the version rule's probe, toolchain, Spring Boot, servlet package, what it rules out)
_JAVAS = (
    ("Java 17", "17", "3.2.5", "jakarta", "no virtual threads, no record patterns or pattern "
     "matching in switch"),
    ("Java 11", "11", "2.7.18", "javax", "no records, no text blocks, no switch expressions"),
)  # fmt: skip
#: (back-office module, its MVC config, public API module, its MVC config)
_MODULES = (
    ("admin", "AdminWebConfig", "api", "PublicApiConfig"),
    ("backoffice", "BackofficeWebConfig", "api", "ApiWebConfig"),
    ("ops-console", "ConsoleWebConfig", "gateway", "GatewayWebConfig"),
    ("internal", "InternalMvcConfig", "edge", "EdgeMvcConfig"),
)
_FORBIDDEN = ("Caffeine", "Guava", "Hazelcast", "Ehcache", "cache2k")
#: (the replay header, the error code of a key reused with another body)
_CONTRACTS = (
    ("Idempotent-Replayed", "idempotency_key_reused"),
    ("Idempotency-Replayed", "idempotency_payload_mismatch"),
    ("X-Idempotent-Replay", "key_payload_conflict"),
    ("Replayed-Response", "reused_key_mismatch"),
)
#: Retention: (first, second, third) as said, and as application.yml writes them.
_TTLS = (
    (("24 hours", "24h"), ("48 hours", "48h"), ("7 days", "7d")),
    (("12 hours", "12h"), ("72 hours", "72h"), ("5 days", "5d")),
    (("36 hours", "36h"), ("96 hours", "96h"), ("10 days", "10d")),
    (("18 hours", "18h"), ("40 hours", "40h"), ("3 days", "3d")),
)
#: In-flight wait: (first, second) as said, and as application.yml writes them.
_LOCKS = (
    (("800 ms", "800ms"), ("2500 ms", "2500ms")),
    (("1500 ms", "1500ms"), ("400 ms", "400ms")),
    (("250 ms", "250ms"), ("1200 ms", "1200ms")),
    (("3000 ms", "3000ms"), ("900 ms", "900ms")),
)
_LEGACY = ("billing-legacy", "settlement-v1", "legacy-clearing", "batch-reconcile")
_TABLES = ("idem_keys", "request_replays", "dedup_records", "idempotent_calls")
_DOCS = ("RUNBOOK.md", "docs/oncall.md", "CHANGELOG.md", "docs/operations.md")
#: (request context class, its static accessor for the caller)
_CONTEXTS = (
    ("MerchantContext", "currentMerchantId"),
    ("TenantHolder", "merchantIdOrThrow"),
    ("CallerContext", "accountKey"),
    ("RequestPrincipal", "merchantRef"),
)
_OPEN_TESTS = (
    "concurrentDuplicateGets409",
    "secondRequestWaitsForInFlightLock",
    "parallelRetryReturnsConflict",
    "inFlightKeyBlocksDuplicate",
)
_REPLAY_TESTS = (
    "replayReturnsStoredResponse",
    "retryGetsOriginalBody",
    "duplicatePostIsReplayed",
    "sameKeySameBodyReplays",
)
#: The task that is still in progress at the end.
_CONCURRENCY_TASKS = (
    "Cover the in-flight duplicate case",
    "Prove a parallel retry waits for the first request",
    "Test two requests racing on one key",
    "Pin down the concurrent-retry behaviour",
)
_CONFIG_TASK = "Retention and in-flight wait in application.yml"
_PEOPLE = ("Dana Whitfield", "Ravi Menon", "Ines Carvalho", "Tomasz Wrona", "Keiko Abe")
_FINAL = (
    "Stopping here so you can review the branch.",
    "That is as far as I take it in this session.",
    "Handing the branch back to you for review now.",
    "I'll pause here until you have had a look.",
)

# --- filler vocabulary (never a probe or a stale form) ----------------------------------------

_FILLER_SUBPACKAGES = ("ledger", "routing", "reporting", "billing", "settlement", "fx", "audit")
_FILLER_SUFFIXES = ("Service", "Repository", "Mapper", "Client", "Validator", "Assembler")
#: The core modules' dependencies: (coordinate, children), each with its version as the
#: Spring Boot line of the seed resolves it (3.2 for Java 17, 2.7 for Java 11).
_CORE_DEPS = (
    ("org.springframework:spring-context", ("org.springframework:spring-aop",
     "org.springframework:spring-beans", "org.springframework:spring-core",
     "org.springframework:spring-expression")),
    ("org.springframework:spring-jdbc", ("org.springframework:spring-beans",
     "org.springframework:spring-core", "org.springframework:spring-tx")),
    ("com.fasterxml.jackson.core:jackson-databind", (
     "com.fasterxml.jackson.core:jackson-annotations", "com.fasterxml.jackson.core:jackson-core")),
    ("com.fasterxml.jackson.datatype:jackson-datatype-jsr310", (
     "com.fasterxml.jackson.core:jackson-core",)),
    ("org.slf4j:slf4j-api", ()),
    ("org.hibernate.validator:hibernate-validator", ("org.jboss.logging:jboss-logging",
     "com.fasterxml:classmate")),
    ("org.javamoney:moneta", ("javax.money:money-api",)),
    ("com.zaxxer:HikariCP", ("org.slf4j:slf4j-api",)),
    ("org.postgresql:postgresql", ("org.checkerframework:checker-qual",)),
    ("org.apache.commons:commons-lang3", ()),
)  # fmt: skip
_VERSIONS = {
    "3.2.5": {"org.springframework": "6.1.6", "com.fasterxml.jackson": "2.15.4",
              "org.slf4j": "2.0.13", "org.hibernate.validator": "8.0.1.Final",
              "org.jboss.logging": "3.5.3.Final", "com.fasterxml:": "1.7.0",
              "org.javamoney": "1.4.4", "javax.money": "1.1", "com.zaxxer": "5.0.1",
              "org.postgresql": "42.6.2", "org.checkerframework": "3.31.0",
              "org.apache.commons": "3.13.0"},
    "2.7.18": {"org.springframework": "5.3.31", "com.fasterxml.jackson": "2.13.5",
               "org.slf4j": "1.7.36", "org.hibernate.validator": "6.2.5.Final",
               "org.jboss.logging": "3.4.3.Final", "com.fasterxml:": "1.5.1",
               "org.javamoney": "1.4.2", "javax.money": "1.1", "com.zaxxer": "4.0.3",
               "org.postgresql": "42.3.8", "org.checkerframework": "3.5.0",
               "org.apache.commons": "3.12.0"},
}  # fmt: skip


def _version(boot: str, coordinate: str) -> str:
    return next(v for prefix, v in _VERSIONS[boot].items() if coordinate.startswith(prefix))


#: Gradle's dependency tree edges.
_BRANCH, _LAST = "+---", "\\---"


def _numbered(text: str, start: int = 1) -> str:
    """`cat -n` as OpenHands' editor prints it: six-wide line numbers, a tab, the line."""
    return "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(text.split("\n")))


def _chars(messages: Sequence[dict[str, Any]]) -> int:
    """The text of `messages` as the model reads it (tool arguments as their JSON)."""
    return sum(len(text_of_message(m)) for m in messages)


def _rel(root: str, path: str) -> str:
    return path.removeprefix(root + "/")


class _Teller:
    """One session being told: the story's choices, the files it keeps, filler in its gaps."""

    def __init__(self, seed: int, filler_budget: int | None, total_gaps: int) -> None:
        self.seed = seed
        self.story = random.Random(f"{FAMILY} {seed}")
        self.noise = random.Random(seed * 7919 + 17)
        self.args = random.Random(seed * 104729 + 5)
        self.s = Session(rng=random.Random(seed * 31 + 3), system=_SYSTEM)
        self.filler_budget = filler_budget
        self.total_gaps = total_gaps
        self.task_list: list[dict[str, str]] = []
        self.last_filler = ""
        self.filler_chars = 0
        self.gaps = 0
        self.files: dict[str, str] = {}
        self.history: dict[str, list[str]] = {}
        self.cwd = "/workspace"
        self.sid = "".join(self.story.choice("0123456789abcdef") for _ in range(32))
        self._draw()

    # --- the seed's story ----------------------------------------------------------------

    def _draw(self) -> None:
        r = self.story
        self.repo, self.pkg = r.choice(_PROJECTS)
        self.resource, self.res = r.choice(_RESOURCES)
        self.singular = self.resource.removesuffix("s")
        (self.java, self.toolchain, self.boot, self.servlet, self.java_limits) = r.choice(_JAVAS)
        self.wm, self.wrong_class, self.rm, self.right_class = r.choice(_MODULES)
        self.forbidden = r.choice(_FORBIDDEN)
        self.header, self.code = r.choice(_CONTRACTS)
        self.ttls = r.choice(_TTLS)
        self.locks = r.choice(_LOCKS)
        self.legacy = r.choice(_LEGACY)
        self.table = r.choice(_TABLES)
        self.doc = r.choice(_DOCS)
        self.ctx, self.ctx_method = r.choice(_CONTEXTS)
        self.open_test = r.choice(_OPEN_TESTS)
        self.replay_test = r.choice(_REPLAY_TESTS)
        self.concurrency_task = r.choice(_CONCURRENCY_TASKS)
        self.author = r.choice(_PEOPLE)
        self.final = r.choice(_FINAL)
        self.pods = r.choice((3, 4, 6, 8))
        self.migration_version = r.randint(12, 47)
        self.tests_before = r.randint(36, 61)
        self.tests_after = self.tests_before + 3
        self.guard_commit = hexid(r)
        self.date = f"2026-11-{r.randint(10, 27):02d}"

        self.root = f"/workspace/{self.repo}"
        pkg_path = self.pkg.replace(".", "/")
        main = f"{self.root}/{self.rm}/src/main/java/{pkg_path}"
        self.main_java = main
        self.p_build = f"{self.root}/{self.rm}/build.gradle.kts"
        self.p_wrong = (f"{self.root}/{self.wm}/src/main/java/{pkg_path}/"
                        f"{self.wm.replace('-', '')}/{self.wrong_class}.java")  # fmt: skip
        self.p_config = f"{main}/config/{self.right_class}.java"
        self.p_controller = f"{main}/web/{self.res}Controller.java"
        self.p_guard = f"{main}/web/Duplicate{self.res}Guard.java"
        self.p_context = f"{main}/security/{self.ctx}.java"
        self.p_filter = f"{main}/idempotency/IdempotencyFilter.java"
        self.p_stored = f"{main}/idempotency/StoredResponse.java"
        self.p_store = f"{main}/idempotency/RedisIdempotencyStore.java"
        self.p_test = (f"{self.root}/{self.rm}/src/test/java/{pkg_path}/idempotency/"
                       "IdempotencyFilterTest.java")  # fmt: skip
        self.p_yml = f"{self.root}/{self.rm}/src/main/resources/application.yml"
        self.p_migration = (f"{self.root}/{self.rm}/src/main/resources/db/migration/"
                            f"V{self.migration_version}__idempotency_records.sql")  # fmt: skip

    # --- OpenHands' tools --------------------------------------------------------------------

    def _bash_tail(self, exit_code: int) -> str:
        return (
            f"\n[The command completed with exit code {exit_code}.]"
            f"\n[Current working directory: {self.cwd}]"
            f"\n[Python interpreter: {_PY}]"
            f"\n[Command finished with exit code {exit_code}]"
        )

    def bash(
        self,
        command: str,
        output: str,
        *,
        exit_code: int = 0,
        text: str = "",
        timeout: int | None = None,
        risk: str = "LOW",
        filler: bool = False,
    ) -> None:
        arguments: dict[str, Any] = {"command": command}
        if self.args.random() < 0.5:
            arguments["is_input"] = "false"
        if timeout is not None:
            arguments["timeout"] = timeout
        arguments["security_risk"] = risk
        if command.startswith("cd ") and " && " in command:
            self.cwd = command[3:].split(" && ", maxsplit=1)[0]
        self.call("execute_bash", arguments, output + self._bash_tail(exit_code), text, filler)

    def bash_stalled(
        self, command: str, first: str, rest: str, *, exit_code: int, text: str
    ) -> None:
        """A command that outlives the 30-second no-output wait, then its remaining output."""
        self.call(
            "execute_bash",
            {"command": command, "is_input": "false", "security_risk": "LOW"},
            first + "\n[The command has no new output after 30 seconds. You may wait longer to "
            "see additional output by sending empty command '', send other commands to interact "
            'with the current process, send keys ("C-c", "C-z", "C-d") to interrupt/kill the '
            "previous command before sending your new command, or use the timeout parameter in "
            "execute_bash for future commands.]",
            text,
            False,
        )
        self.call(
            "execute_bash",
            {"command": "", "is_input": "true", "security_risk": "LOW"},
            "[Below is the output of the previous command.]\n" + rest + self._bash_tail(exit_code),
            "",
            False,
        )

    def call(
        self, name: str, arguments: dict[str, Any], result: str, text: str, filler: bool
    ) -> None:
        self.s.call(name, arguments, result, text=text, filler=filler)
        if filler:
            self.filler_chars += _chars(self.s.messages[-2:])

    def view(self, path: str, *, text: str = "", content: str | None = None,
             filler: bool = False) -> None:  # fmt: skip
        body = self.files[path] if content is None else content
        self.call(
            "str_replace_editor",
            {"command": "view", "path": path, "security_risk": "LOW"},
            f"Here's the result of running `cat -n` on {path}:\n{_numbered(body)}\n",
            text,
            filler,
        )

    def view_dir(self, path: str, entries: Sequence[str], hidden: int, *, text: str = "",
                 filler: bool = False) -> None:  # fmt: skip
        listing = "\n".join([f"{path}/", *entries])
        result = (f"Here's the files and directories up to 2 levels deep in {path}, excluding "
                  f"hidden items:\n{listing}")  # fmt: skip
        if hidden:
            result += (f"\n\n{hidden} hidden files/directories in this directory are excluded. "
                       f"You can use 'ls -la {path}' to see them.")  # fmt: skip
        self.call(
            "str_replace_editor",
            {"command": "view", "path": path, "security_risk": "LOW"},
            result,
            text,
            filler,
        )

    def create(self, path: str, content: str, *, text: str = "") -> None:
        self.files[path] = content
        self.history.setdefault(path, []).append(content)
        self.call(
            "str_replace_editor",
            {"command": "create", "path": path, "file_text": content, "security_risk": "LOW"},
            f"File created successfully at: {path}",
            text,
            False,
        )

    def replace(self, path: str, old: str, new: str, *, text: str = "") -> None:
        content = self.files[path]
        assert content.count(old) == 1, (path, old)
        at = content.index(old)
        line = content.count("\n", 0, at) + 1
        updated = content.replace(old, new)
        self.history.setdefault(path, []).append(content)
        self.files[path] = updated
        start = max(0, line - 4)
        end = line + 4 + new.count("\n")
        snippet = "\n".join(updated.split("\n")[start:end])
        self.call(
            "str_replace_editor",
            {"command": "str_replace", "path": path, "old_str": old, "new_str": new,
             "security_risk": "LOW"},
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet "
            f"of {path}:\n{_numbered(snippet, start + 1)}\nReview the changes and make sure they "
            "are as expected. Edit the file again if necessary.",
            text,
            False,
        )  # fmt: skip

    def replace_missed(self, path: str, old: str, new: str, *, text: str = "") -> None:
        """A str_replace whose old_str is not in the file (the editor's error)."""
        assert old not in self.files[path]
        self.call(
            "str_replace_editor",
            {"command": "str_replace", "path": path, "old_str": old, "new_str": new,
             "security_risk": "LOW"},
            f"ERROR:\nNo replacement was performed, old_str `{old}` did not appear verbatim in "
            f"{path}.",
            text,
            False,
        )  # fmt: skip

    def insert(self, path: str, after: int, new: str, *, text: str = "") -> None:
        lines = self.files[path].split("\n")
        self.history.setdefault(path, []).append(self.files[path])
        added = new.split("\n")
        updated = [*lines[:after], *added, *lines[after:]]
        self.files[path] = "\n".join(updated)
        start = max(0, after - 4)
        end = min(len(updated), after + 4 + len(added))
        snippet = "\n".join(updated[start:end])
        self.call(
            "str_replace_editor",
            {"command": "insert", "path": path, "insert_line": after, "new_str": new,
             "security_risk": "LOW"},
            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet "
            f"of the edited file:\n{_numbered(snippet, max(1, after - 3))}\nReview the changes and "
            "make sure they are as expected (correct indentation, no duplicate lines, etc). Edit "
            "the file again if necessary.",
            text,
            False,
        )  # fmt: skip

    def undo(self, path: str, *, text: str = "") -> None:
        previous = self.history[path].pop()
        self.files[path] = previous
        self.call(
            "str_replace_editor",
            {"command": "undo_edit", "path": path, "security_risk": "LOW"},
            f"Last edit to {path} undone successfully. Here's the result of running `cat -n` on "
            f"{path}:\n{_numbered(previous)}\n",
            text,
            False,
        )

    def think(self, thought: str) -> None:
        self.call("think", {"thought": thought}, "Your thought has been logged.", "", False)

    def tasks(self, items: Sequence[tuple[str, str, str, str]], *, text: str = "") -> None:
        """The whole list: (id, title, status, notes)."""
        task_list = [
            {"id": i, "title": t, "status": st, **({"notes": n} if n else {})}
            for i, t, st, n in items
        ]
        self.task_list = task_list
        self.call(
            "task_tracker",
            {"command": "plan", "task_list": task_list},
            f"Task list has been updated with {len(task_list)} items. Stored in session "
            f"directory: sessions/{self.sid}/TASKS.md",
            text,
            False,
        )

    def tasks_view(self, *, text: str = "") -> None:
        icons = {"todo": "⏳", "in_progress": "🔄", "done": "✅"}
        body = "# Task List\n\n" + "".join(
            f"{k}. {icons[t['status']]} {t['title']}\n{t.get('notes', '')}\n"
            for k, t in enumerate(self.task_list, 1)
        )
        self.call("task_tracker", {"command": "view"}, body, text, False)

    def finish(self, message: str) -> None:
        self.call("finish", {"message": message}, message, "", False)

    # --- filler ------------------------------------------------------------------------------

    def gap(self) -> None:
        """Reading between two events, up to this gap's share of the filler budget."""
        self.gaps += 1
        if self.filler_budget is None:
            return
        want = self.filler_budget * self.gaps / self.total_gaps
        while self.filler_chars < want - 900:
            self._filler()

    def _filler(self) -> None:
        kinds = ("java", "java", "java", "deps", "find", "log", "gitlog", "dir")
        kind = self.noise.choice([k for k in kinds if k != self.last_filler or k == "java"])
        self.last_filler = kind
        getattr(self, f"_filler_{kind}")()

    def _filler_class(self) -> tuple[str, str, str]:
        n = self.noise
        module = n.choice(("core", "common", self.rm))
        sub = n.choice(_FILLER_SUBPACKAGES)
        name = camel(ident(n)) + n.choice(_FILLER_SUFFIXES)
        pkg_path = self.pkg.replace(".", "/")
        return module, f"{self.root}/{module}/src/main/java/{pkg_path}/{sub}/{name}.java", name

    def _filler_java(self) -> None:
        n = self.noise
        _, path, name = self._filler_class()
        sub = path.rsplit("/", 2)[-2]
        body = re.sub(r"\bimport\b", "imported", code_file(n, "java", n.randint(40, 110)))
        imports = "import java.util.List;\n"
        if self.toolchain == "11":  # Stream.toList() came with Java 16
            body = body.replace(".toList();", ".collect(Collectors.toList());")
            imports += "import java.util.stream.Collectors;\n"
        content = (f"package {self.pkg}.{sub};\n\n{imports}\n"
                   f"public class {name} {{\n\n{body}\n}}\n")  # fmt: skip
        text = n.choice(("", "", "", f"Checking how {name} is wired."))
        self.view(path, content=content, text=text, filler=True)

    def _filler_deps(self) -> None:
        n = self.noise
        module = n.choice(("core", "common"))
        conf = n.choice(("compileClasspath", "runtimeClasspath", "testCompileClasspath"))
        lines = [f"{conf} - {'Compile' if 'ompile' in conf else 'Runtime'} classpath for source "
                 f"set '{'test' if conf.startswith('test') else 'main'}'."]  # fmt: skip
        deps = n.sample(_CORE_DEPS, n.randint(7, len(_CORE_DEPS)))
        for k, (coordinate, children) in enumerate(deps):
            last = k == len(deps) - 1
            edge = _LAST if last else _BRANCH
            lines.append(f"{edge} {coordinate} -> {_version(self.boot, coordinate)}")
            for j, child in enumerate(children):
                bar = " " if last else "|"
                edge = _LAST if j == len(children) - 1 else _BRANCH
                lines.append(f"{bar}    {edge} {child}:{_version(self.boot, child)}")
        lines += ["", "(*) - Indicates repeated occurrences of a transitive dependency subtree.",
                  "", "A web-based, searchable dependency report is available by adding the "
                  "--scan option.", "", f"BUILD SUCCESSFUL in {n.randint(2, 9)}s",
                  "1 actionable task: 1 executed"]  # fmt: skip
        header = ["", "> Task :" + module + ":dependencies", "",
                  "------------------------------------------------------------",
                  f"Project ':{module}'",
                  "------------------------------------------------------------", ""]  # fmt: skip
        self.bash(
            f"cd {self.root} && ./gradlew :{module}:dependencies --configuration {conf} "
            "--console=plain",
            "\n".join(header + lines),
            filler=True,
        )

    def _filler_find(self) -> None:
        n = self.noise
        pkg_path = self.pkg.replace(".", "/")
        module = n.choice(("core", "common"))
        kind = n.choice(_FILLER_SUFFIXES)
        paths = sorted(
            {
                f"./{module}/src/main/java/{pkg_path}/{n.choice(_FILLER_SUBPACKAGES)}/"
                f"{camel(ident(n))}{kind}.java"
                for _ in range(n.randint(25, 50))
            }
        )
        self.bash(
            f"cd {self.root} && find ./{module}/src/main/java -name '*{kind}.java' | sort",
            "\n".join(paths),
            filler=True,
        )

    def _filler_log(self) -> None:
        n = self.noise
        service = n.choice(("ledger-sync", "settlement-worker", "fx-rates", "report-export"))
        lines = n.randint(40, 60)
        self.bash(
            f"cd {self.root} && docker compose logs --no-color --no-log-prefix --tail {lines} "
            f"{service}",
            log_lines(n, lines),
            filler=True,
        )

    def _filler_gitlog(self) -> None:
        n = self.noise
        verbs = ("Fix", "Refactor", "Add", "Tidy", "Speed up", "Document", "Rename")
        rows = [
            f"{hexid(n)} {n.choice(verbs)} {ident(n).replace('_', ' ')} "
            f"{n.choice(('handling', 'lookup', 'mapping', 'totals', 'paging', 'checks'))}"
            for _ in range(n.randint(25, 40))
        ]
        pkg_path = self.pkg.replace(".", "/")
        where = n.choice(("core/", "common/", f"core/src/main/java/{pkg_path}/"
                          f"{n.choice(_FILLER_SUBPACKAGES)}/"))  # fmt: skip
        self.bash(f"cd {self.root} && git log --oneline -n {len(rows)} -- {where}",
                  "\n".join(rows), filler=True)  # fmt: skip

    def _filler_dir(self) -> None:
        n = self.noise
        pkg_path = self.pkg.replace(".", "/")
        base = f"{self.root}/core/src/main/java/{pkg_path}"
        subs = n.sample(_FILLER_SUBPACKAGES, 3)
        entries = []
        for sub in subs:
            entries.append(f"{base}/{sub}/")
            entries += sorted(
                {f"{base}/{sub}/{camel(ident(n))}{n.choice(_FILLER_SUFFIXES)}.java"
                 for _ in range(n.randint(5, 12))}
            )  # fmt: skip
        self.view_dir(base, entries, 0, filler=True)

    # --- the project's files -------------------------------------------------------------------

    def rel(self, path: str) -> str:
        """`path` from the repository's root, as git and the user name it."""
        return _rel(self.root, path)

    def line_of(self, path: str, text: str) -> int:
        """The number of the first line of `path` that holds `text`."""
        lines = self.files[path].split("\n")
        return next(k for k, line in enumerate(lines, 1) if text in line)

    def _imports(self, *names: str) -> str:
        return "\n".join(f"import {name};" for name in names)

    def build_file(self) -> str:
        redis = "spring-boot-starter-data-redis"
        return f"""import org.gradle.api.tasks.testing.logging.TestExceptionFormat

plugins {{
    java
    checkstyle
    id("org.springframework.boot") version "{self.boot}"
    id("io.spring.dependency-management") version "1.1.4"
}}

java {{
    toolchain {{
        languageVersion.set(JavaLanguageVersion.of({self.toolchain}))
    }}
}}

dependencies {{
    implementation(project(":core"))
    implementation(project(":common"))
    implementation("org.springframework.boot:spring-boot-starter-web")
    implementation("org.springframework.boot:spring-boot-starter-validation")
    implementation("org.springframework.boot:spring-boot-starter-jdbc")
    implementation("org.springframework.boot:{redis}")
    implementation("org.flywaydb:flyway-core")
    runtimeOnly("org.postgresql:postgresql")
    testImplementation("org.springframework.boot:spring-boot-starter-test")
}}

checkstyle {{
    toolVersion = "10.12.5"
    maxWarnings = 0
}}

tasks.test {{
    useJUnitPlatform()
    testLogging {{
        events("failed")
        exceptionFormat = TestExceptionFormat.FULL
    }}
}}"""

    def wrong_config(self) -> str:
        sub = self.wm.replace("-", "")
        return f"""package {self.pkg}.{sub};

import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

@Configuration
public class {self.wrong_class} implements WebMvcConfigurer {{

    private final AuditTrailInterceptor auditTrail;
    private final StaffSessionInterceptor staffSession;

    public {self.wrong_class}(AuditTrailInterceptor auditTrail,
            StaffSessionInterceptor staffSession) {{
        this.auditTrail = auditTrail;
        this.staffSession = staffSession;
    }}

    @Override
    public void addInterceptors(InterceptorRegistry registry) {{
        registry.addInterceptor(staffSession).addPathPatterns("/ops/**");
        registry.addInterceptor(auditTrail).addPathPatterns("/ops/**", "/v1/**");
    }}
}}"""

    def right_config(self) -> str:
        return f"""package {self.pkg}.config;

import {self.pkg}.web.CorrelationIdFilter;
import {self.pkg}.web.Duplicate{self.res}Guard;
import {self.pkg}.web.RequestLoggingInterceptor;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

@Configuration
public class {self.right_class} implements WebMvcConfigurer {{

    private final RequestLoggingInterceptor requestLogging;
    private final Duplicate{self.res}Guard duplicateGuard;

    public {self.right_class}(RequestLoggingInterceptor requestLogging,
            Duplicate{self.res}Guard duplicateGuard) {{
        this.requestLogging = requestLogging;
        this.duplicateGuard = duplicateGuard;
    }}

    @Override
    public void addInterceptors(InterceptorRegistry registry) {{
        registry.addInterceptor(requestLogging);
        registry.addInterceptor(duplicateGuard).addPathPatterns("/v1/{self.resource}");
    }}

    @Bean
    public FilterRegistrationBean<CorrelationIdFilter> correlationIdFilter() {{
        FilterRegistrationBean<CorrelationIdFilter> registration =
                new FilterRegistrationBean<>(new CorrelationIdFilter());
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        return registration;
    }}
}}"""

    def controller(self) -> str:
        res = self.res
        return f"""package {self.pkg}.web;

import {self.pkg}.security.{self.ctx};
import {self.servlet}.validation.Valid;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping("/v1/{self.resource}")
public class {res}Controller {{

    private final {res}Service {self.singular}s;

    public {res}Controller({res}Service {self.singular}s) {{
        this.{self.singular}s = {self.singular}s;
    }}

    @PostMapping
    public ResponseEntity<{res}View> create(@Valid @RequestBody Create{res}Request body) {{
        {res}View created = {self.singular}s.create({self.ctx}.{self.ctx_method}(), body);
        return ResponseEntity.status(HttpStatus.CREATED).body(created);
    }}

    @GetMapping("/{{id}}")
    public {res}View get(@PathVariable String id) {{
        return {self.singular}s.get({self.ctx}.{self.ctx_method}(), id);
    }}
}}"""

    def context_file(self) -> str:
        return f"""package {self.pkg}.security;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;

/** The caller of the current request, as the API key filter authenticated it. */
public final class {self.ctx} {{

    private {self.ctx}() {{
    }}

    /** The merchant the API key belongs to; throws when the request is not authenticated. */
    public static String {self.ctx_method}() {{
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        if (auth == null || !(auth.getPrincipal() instanceof ApiKeyPrincipal)) {{
            throw new IllegalStateException("no authenticated merchant on this request");
        }}
        return ((ApiKeyPrincipal) auth.getPrincipal()).merchantId();
    }}
}}"""

    def guard_file(self) -> str:
        return f"""package {self.pkg}.web;

import {self.servlet}.servlet.http.HttpServletRequest;
import {self.servlet}.servlet.http.HttpServletResponse;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.stereotype.Component;
import org.springframework.web.servlet.HandlerInterceptor;

/** Rejects a second POST with the same body hash within ten seconds (best effort, per pod). */
@Component
public class Duplicate{self.res}Guard implements HandlerInterceptor {{

    private final Set<String> recent = Collections.synchronizedSet(new LinkedHashSet<>());

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response,
            Object handler) throws Exception {{
        String hash = BodyHash.of((CachedBodyRequest) request);
        if (!recent.add(hash)) {{
            response.sendError(HttpServletResponse.SC_CONFLICT, "duplicate request");
            return false;
        }}
        Expiry.schedule(() -> recent.remove(hash), 10_000);
        return true;
    }}
}}"""

    def yml_file(self) -> str:
        # Spring Boot 3 reads spring.data.redis, Spring Boot 2.7 spring.redis.
        nest = "  data:\n    redis:" if self.servlet == "jakarta" else "  redis:"
        pad = "      " if self.servlet == "jakarta" else "    "
        return f"""server:
  port: 8080
  shutdown: graceful

spring:
  application:
    name: {self.repo}
  datasource:
    url: jdbc:postgresql://${{DB_HOST:localhost}}:5432/payments
    username: ${{DB_USER:payments}}
    password: ${{DB_PASSWORD:}}
  flyway:
    locations: classpath:db/migration
{nest}
{pad}host: ${{REDIS_HOST:localhost}}
{pad}port: 6379
{pad}timeout: 2s

management:
  endpoints:
    web:
      exposure:
        include: health,info,prometheus"""

    def stored_file(self) -> str:
        return f"""package {self.pkg}.idempotency;

import java.util.Arrays;

/** A finished response kept for replay, with the fingerprint of the request that made it. */
public final class StoredResponse {{

    private final String fingerprint;
    private final int status;
    private final String contentType;
    private final byte[] body;

    public StoredResponse(String fingerprint, int status, String contentType, byte[] body) {{
        this.fingerprint = fingerprint;
        this.status = status;
        this.contentType = contentType;
        this.body = Arrays.copyOf(body, body.length);
    }}

    public String fingerprint() {{
        return fingerprint;
    }}

    public int status() {{
        return status;
    }}

    public String contentType() {{
        return contentType;
    }}

    public byte[] body() {{
        return Arrays.copyOf(body, body.length);
    }}
}}"""

    def filter_file(self) -> str:
        sv = self.servlet
        imports = self._imports(
            f"{self.pkg}.security.{self.ctx}",
            f"{self.pkg}.web.CachedBodyRequest",
            f"{sv}.servlet.FilterChain",
            f"{sv}.servlet.ServletException",
            f"{sv}.servlet.http.HttpServletRequest",
            f"{sv}.servlet.http.HttpServletResponse",
            "java.io.IOException",
            "java.nio.charset.StandardCharsets",
            "java.security.MessageDigest",
            "java.security.NoSuchAlgorithmException",
            "java.util.Base64",
            "java.util.Optional",
            "java.util.concurrent.ConcurrentHashMap",
            "java.util.concurrent.ConcurrentMap",
            "org.springframework.http.HttpStatus",
            "org.springframework.http.MediaType",
            "org.springframework.util.StreamUtils",
            "org.springframework.web.filter.OncePerRequestFilter",
            "org.springframework.web.util.ContentCachingResponseWrapper",
        )
        return f"""package {self.pkg}.idempotency;

{imports}

/** Replays the stored response of a POST whose Idempotency-Key was seen before. */
public class IdempotencyFilter extends OncePerRequestFilter {{

    static final String KEY_HEADER = "Idempotency-Key";
    static final String REPLAYED_HEADER = "{self.header}";
    static final int MAX_KEY_LENGTH = 255;

    private final ConcurrentMap<String, StoredResponse> records = new ConcurrentHashMap<>();

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {{
        return !"POST".equals(request.getMethod()) || request.getHeader(KEY_HEADER) == null;
    }}

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
            FilterChain chain) throws ServletException, IOException {{
        String key = request.getHeader(KEY_HEADER);
        if (key.isBlank() || key.length() > MAX_KEY_LENGTH) {{
            response.sendError(HttpStatus.BAD_REQUEST.value(), "invalid Idempotency-Key");
            return;
        }}
        byte[] body = StreamUtils.copyToByteArray(request.getInputStream());
        String recordKey = {self.ctx}.{self.ctx_method}() + ":" + key;
        String fingerprint = fingerprint(request, body);

        StoredResponse stored = records.get(recordKey);
        if (stored != null) {{
            if (!stored.fingerprint().equals(fingerprint)) {{
                rejectMismatch(response);
                return;
            }}
            replay(stored, response);
            return;
        }}

        ContentCachingResponseWrapper wrapped = new ContentCachingResponseWrapper(response);
        chain.doFilter(new CachedBodyRequest(request, body), wrapped);
        if (wrapped.getStatus() < 500) {{
            records.put(recordKey, new StoredResponse(fingerprint, wrapped.getStatus(),
                    wrapped.getContentType(), wrapped.getContentAsByteArray()));
        }}
        wrapped.copyBodyToResponse();
    }}

    private static void replay(StoredResponse stored, HttpServletResponse response)
            throws IOException {{
        response.setStatus(stored.status());
        response.setContentType(stored.contentType());
        response.getOutputStream().write(stored.body());
    }}

    private static void rejectMismatch(HttpServletResponse response) throws IOException {{
        response.setStatus(HttpStatus.UNPROCESSABLE_ENTITY.value());
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.getOutputStream().write(
                "{{\\"error\\":\\"{self.code}\\"}}".getBytes(StandardCharsets.UTF_8));
    }}

    private static String fingerprint(HttpServletRequest request, byte[] body) {{
        try {{
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(request.getRequestURI().getBytes(StandardCharsets.UTF_8));
            digest.update(body);
            return Base64.getEncoder().encodeToString(digest.digest());
        }} catch (NoSuchAlgorithmException e) {{
            throw new IllegalStateException(e);
        }}
    }}
}}"""

    def store_file(self) -> str:
        return f"""package {self.pkg}.idempotency;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * Idempotency records in Redis. A request claims its key with SET NX PX (the in-flight marker);
 * the finished response then replaces the marker under the same key for the retention period.
 */
@Component
public class RedisIdempotencyStore {{

    private static final String PREFIX = "idem:";
    private static final String IN_FLIGHT = "in-flight";
    private static final long POLL_MILLIS = 50;

    private final StringRedisTemplate redis;
    private final ObjectMapper mapper;
    private final Duration ttl;
    private final Duration lockWait;

    public RedisIdempotencyStore(StringRedisTemplate redis, ObjectMapper mapper,
            @Value("${{idempotency.ttl}}") Duration ttl,
            @Value("${{idempotency.lock-wait}}") Duration lockWait) {{
        this.redis = redis;
        this.mapper = mapper;
        this.ttl = ttl;
        this.lockWait = lockWait;
    }}

    /** True when this request now owns the key; false when another request got there first. */
    public boolean claim(String key) {{
        Boolean claimed = redis.opsForValue().setIfAbsent(PREFIX + key, IN_FLIGHT, ttl);
        return Boolean.TRUE.equals(claimed);
    }}

    /** The stored response, waiting up to the lock wait while the first request is running. */
    public StoredResponse awaitResult(String key) throws InterruptedException {{
        long deadline = System.nanoTime() + lockWait.toNanos();
        while (true) {{
            String value = redis.opsForValue().get(PREFIX + key);
            if (value != null && !IN_FLIGHT.equals(value)) {{
                return read(value);
            }}
            if (System.nanoTime() >= deadline) {{
                return null;
            }}
            Thread.sleep(POLL_MILLIS);
        }}
    }}

    public void complete(String key, StoredResponse response) {{
        try {{
            redis.opsForValue().set(PREFIX + key, mapper.writeValueAsString(response), ttl);
        }} catch (IOException e) {{
            throw new UncheckedIOException(e);
        }}
    }}

    public void release(String key) {{
        redis.delete(PREFIX + key);
    }}

    private StoredResponse read(String value) {{
        try {{
            return mapper.readValue(value, StoredResponse.class);
        }} catch (IOException e) {{
            throw new UncheckedIOException(e);
        }}
    }}
}}"""

    def migration_file(self) -> str:
        t = self.table
        return f"""CREATE TABLE {t} (
    merchant_id     VARCHAR(64)  NOT NULL,
    idempotency_key VARCHAR(255) NOT NULL,
    fingerprint     CHAR(44)     NOT NULL,
    status_code     INT,
    content_type    VARCHAR(128),
    response_body   BYTEA,
    created_at      TIMESTAMPTZ  NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, idempotency_key)
);

CREATE INDEX {t}_created_at_idx ON {t} (created_at);"""

    def test_file(self) -> str:
        sv = self.servlet
        return f"""package {self.pkg}.idempotency;

import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.when;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import {sv}.servlet.http.HttpServletResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.web.servlet.AutoConfigureMockMvc;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.mock.mockito.MockBean;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;

@SpringBootTest
@AutoConfigureMockMvc
class IdempotencyFilterTest {{

    private static final String BODY = "{{\\"amount\\":1250,\\"currency\\":\\"EUR\\"}}";

    @Autowired
    private MockMvc mvc;

    @MockBean
    private RedisIdempotencyStore store;

    @Test
    void {self.replay_test}() throws Exception {{
        StoredResponse stored = new StoredResponse(TestFingerprints.of(BODY),
                HttpServletResponse.SC_CREATED, MediaType.APPLICATION_JSON_VALUE,
                "{{\\"id\\":\\"{self.singular[:2]}_1\\"}}".getBytes(StandardCharsets.UTF_8));
        when(store.claim(anyString())).thenReturn(false);
        when(store.awaitResult(anyString())).thenReturn(stored);

        mvc.perform(post("/v1/{self.resource}").header("Idempotency-Key", "k-1")
                        .contentType(MediaType.APPLICATION_JSON).content(BODY))
                .andExpect(status().isCreated())
                .andExpect(header().string(IdempotencyFilter.REPLAYED_HEADER, "true"))
                .andExpect(content().json("{{\\"id\\":\\"{self.singular[:2]}_1\\"}}"));
    }}

    @Test
    void {self.open_test}() throws Exception {{
        when(store.claim(anyString())).thenReturn(true, false);
        when(store.awaitResult(anyString())).thenReturn(null);

        CompletableFuture<Void> first =
                CompletableFuture.runAsync(() -> TestRequests.slowPost(mvc));
        mvc.perform(post("/v1/{self.resource}").header("Idempotency-Key", "k-2")
                        .contentType(MediaType.APPLICATION_JSON).content(BODY))
                .andExpect(status().isConflict());
        first.join();
    }}
}}"""

    # --- the story ---------------------------------------------------------------------------

    def tell(self) -> Session:
        s = self.s
        ttl0, ttl1, ttl2 = self.ttls
        lock0, lock1 = self.locks
        rel = self.rel

        # The first message: the task, its values and three rules in prose.
        s.user(
            f"In {self.repo} (Gradle, Spring Boot), add Idempotency-Key support to POST "
            f"/v1/{self.resource}. Clients send an `Idempotency-Key` header; a retry with the same "
            f"key and the same body must not create a second {self.singular}. Keep the keys for "
            f"{ttl0[0]}, and when a request comes in while the first one with that key is still "
            f"running, it waits at most {lock0[0]} for it and then gets a 409.\n\n"
            "Rules:\n"
            f"- No {self.forbidden}, and no new dependency at all for this: what the build "
            "already has is enough.\n"
            f"- The service still ships on {self.java}, so {self.java_limits}.\n"
            f"- A replay returns the stored status and body unchanged, plus `{self.header}: true`. "
            f"The same key with a different body is a 422 with error code `{self.code}`.\n\n"
            "Run the tests with Gradle when you're done."
        )
        s.user(
            f"<RUNTIME_INFORMATION>\n\nThe current working directory is /workspace\n\nToday's "
            f"date is {self.date} (UTC).\n\n</RUNTIME_INFORMATION>"
        )
        s.fact("constraint", f"No {self.forbidden} and no new dependency", [self.forbidden])
        s.fact("constraint", f"The service ships on {self.java}", [self.java])
        s.fact(
            "constraint",
            f"A replay carries {self.header}: true; a reused key with another body is a 422 "
            f"with {self.code}",
            [self.header, self.code],
        )

        self.bash(
            f"cd {self.root} && git status && git log --oneline -5",
            "On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to "
            "commit, working tree clean\n" + "\n".join(
                f"{hexid(self.story)} {m}" for m in (
                    f"Merge pull request #{self.story.randint(400, 900)} from ops/payout-fees",
                    "Bump flyway to 9.22.3",
                    "Paginate the settlement report",
                    f"Validate currency on {self.resource}",
                    "Log correlation id on 5xx",
                )),
            text="Let me look at the repository first.",
        )  # fmt: skip
        self.view_dir(
            self.root,
            [
                f"{self.root}/README.md",
                f"{self.root}/NOTICE",
                *([f"{self.root}/{self.doc}"] if "/" not in self.doc else []),
                f"{self.root}/{self.rm}/",
                f"{self.root}/{self.rm}/build.gradle.kts",
                f"{self.root}/{self.rm}/src/",
                f"{self.root}/{self.wm}/",
                f"{self.root}/{self.wm}/build.gradle.kts",
                f"{self.root}/{self.wm}/src/",
                f"{self.root}/{self.legacy}/",
                f"{self.root}/{self.legacy}/build.gradle",
                f"{self.root}/{self.legacy}/src/",
                f"{self.root}/build.gradle.kts",
                f"{self.root}/common/",
                f"{self.root}/common/build.gradle.kts",
                f"{self.root}/common/src/",
                f"{self.root}/config/",
                f"{self.root}/config/checkstyle/",
                f"{self.root}/core/",
                f"{self.root}/core/build.gradle.kts",
                f"{self.root}/core/src/",
                f"{self.root}/docker-compose.yml",
                f"{self.root}/docs/",
                *([f"{self.root}/{self.doc}"] if self.doc.startswith("docs/") else []),
                f"{self.root}/docs/adr/",
                f"{self.root}/gradle/",
                f"{self.root}/gradle/wrapper/",
                f"{self.root}/gradlew",
                f"{self.root}/gradlew.bat",
                f"{self.root}/settings.gradle.kts",
            ],
            4,
        )
        self.files[self.p_build] = self.build_file()
        self.view(self.p_build, text=f"The public API is presumably in `{self.rm}`; its build:")
        self.gap()

        # The wrong module first, a plan, an edit there, and the user's redirection.
        self.files[self.p_wrong] = self.wrong_config()
        self.view(
            self.p_wrong,
            text=f"The MVC configuration that registers interceptors is in `{self.wm}`; that is "
            "where request handling gets hooked in.",
        )
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "in_progress", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "todo",
                 "HandlerInterceptor registered in the MVC config"),
                ("3", "Record store for keys and responses", "todo", "in-memory map to start"),
                ("4", _CONFIG_TASK, "todo", ""),
                ("5", self.concurrency_task, "todo", "replay, body mismatch, in-flight duplicate"),
                ("6", "Micrometer counter for replayed requests", "todo", ""),
            ],
            text="Planning the work.",
        )  # fmt: skip
        self.think(
            f"Plan: an IdempotencyInterceptor (HandlerInterceptor) registered for "
            f"/v1/{self.resource} next to the other interceptors. preHandle looks the key up; "
            "records live in a ConcurrentHashMap keyed by merchant + key for a first version. "
            "Register it first, then write the class."
        )
        self.replace(
            self.p_wrong,
            '        registry.addInterceptor(auditTrail).addPathPatterns("/ops/**", "/v1/**");\n',
            '        registry.addInterceptor(auditTrail).addPathPatterns("/ops/**", "/v1/**");\n'
            "        registry.addInterceptor(new IdempotencyInterceptor())\n"
            f'                .addPathPatterns("/v1/{self.resource}");\n',
        )
        s.user(
            f"Wrong module. `{self.wm}` is the back-office app; customers never hit it. POST "
            f"/v1/{self.resource} is served by `{self.rm}`, and its MVC config is "
            f"{rel(self.p_config)}. Undo that edit and work there."
        )
        self.undo(self.p_wrong, text=f"You're right, reverting the change in {self.wrong_class}.")
        self.files[self.p_config] = self.right_config()
        self.view(self.p_config)
        s.fact(
            "file_modified",
            f"The public API's MVC config {rel(self.p_config)} is where the layer is registered "
            f"(not the back-office {self.wrong_class})",
            [rel(self.p_config)],
            stale=[rel(self.p_wrong)],
        )
        self.gap()

        # Reading the endpoint, the caller context and the old guard.
        self.files[self.p_controller] = self.controller()
        self.view(self.p_controller)
        s.fact("file_read", f"Read the controller {rel(self.p_controller)}",
               [rel(self.p_controller)])  # fmt: skip
        self.files[self.p_context] = self.context_file()
        self.view(
            self.p_context,
            text=f"The controller takes the merchant from {self.ctx}; the key has to be scoped "
            "by merchant as well.",
        )
        s.fact("file_read", f"Read the caller context {rel(self.p_context)}",
               [rel(self.p_context)])  # fmt: skip
        s.fact(
            "identifier",
            f"The merchant of a request comes from {self.ctx}.{self.ctx_method}()",
            [self.ctx_method],
        )
        self.files[self.p_guard] = self.guard_file()
        self.view(self.p_guard)
        self.gap()

        # The interceptor gives way to a filter.
        scrap = (
            f"Scrap the interceptor plan. Duplicate{self.res}Guard shows the limit of a "
            "HandlerInterceptor: it runs before and after the handler but never holds the "
            "response body, so it can reject a duplicate but cannot replay the stored response. "
            "I'm switching to a OncePerRequestFilter that wraps the response in "
            "ContentCachingResponseWrapper, registered for the POST route from "
            f"{self.right_class}."
        )
        s.fact(
            "decision",
            "The layer is a OncePerRequestFilter with ContentCachingResponseWrapper, not a "
            "HandlerInterceptor",
            ["OncePerRequestFilter"],
            stale=["HandlerInterceptor"],
        )
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "done", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "in_progress",
                 "OncePerRequestFilter + ContentCachingResponseWrapper"),
                ("3", "Record store for keys and responses", "todo", "in-memory map to start"),
                ("4", _CONFIG_TASK, "todo", ""),
                ("5", self.concurrency_task, "todo", "replay, body mismatch, in-flight duplicate"),
                ("6", "Micrometer counter for replayed requests", "todo", ""),
            ],
            text=scrap,
        )  # fmt: skip
        self.create(self.p_stored, self.stored_file())
        self.gap()
        self.create(
            self.p_filter,
            self.filter_file(),
            text="The filter, with a ConcurrentHashMap for the records for now:",
        )
        s.fact("file_created", "Created the idempotency filter", [rel(self.p_filter)])
        self.gap()

        # The map gives way to a Postgres table …
        s.user(
            f"Heads up: {self.repo} runs as {self.pods} pods behind the load balancer. A map in "
            "one JVM won't see a retry that lands on another pod."
        )
        self.bash(
            f"cd {self.root} && ls {self.rm}/src/main/resources/db/migration | tail -4",
            "\n".join(
                f"V{v}__{name}.sql"
                for v, name in zip(
                    range(self.migration_version - 4, self.migration_version),
                    ("payout_fee_columns", "settlement_report_index", "merchant_limits",
                     "drop_legacy_webhooks"),
                    strict=True,
                )
            ),
            text="Then the in-memory ConcurrentHashMap is out. I'll keep the records in Postgres "
            f"instead: a table `{self.table}` with a primary key on (merchant_id, "
            "idempotency_key), so the insert itself is the lock, written through the JdbcTemplate "
            "the service already uses and created by a Flyway migration. Checking the migration "
            "numbering first.",
        )  # fmt: skip
        self.create(self.p_migration, self.migration_file())
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "done", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "done",
                 "OncePerRequestFilter + ContentCachingResponseWrapper"),
                ("3", "Record store for keys and responses", "in_progress",
                 f"Postgres table {self.table}, Flyway V{self.migration_version}"),
                ("4", _CONFIG_TASK, "todo", ""),
                ("5", self.concurrency_task, "todo", "replay, body mismatch, in-flight duplicate"),
                ("6", "Micrometer counter for replayed requests", "todo", ""),
            ]
        )  # fmt: skip

        # … and the table to Redis.
        s.user(
            "Hold on, no table. The DBA has frozen schema changes on the payments database "
            "this quarter. We already run Redis for sessions and spring-data-redis is in the "
            "build; use that."
        )
        to_redis = (
            "Understood: dropping the Postgres table and its migration. The records go to "
            "Redis instead: a request claims its key with SET NX PX (the in-flight marker), and "
            "the finished response replaces the marker under the same key for the retention "
            "period, through the StringRedisTemplate that spring-data-redis already provides."
        )
        s.fact(
            "decision",
            "Idempotency records live in Redis, claimed with SET NX (not an in-memory map, not "
            "a Postgres table)",
            ["Redis", "SET NX"],
            stale=["ConcurrentHashMap", self.table],
        )
        self.bash(f"cd {self.root} && rm {rel(self.p_migration)} && git status --short",
                  f"?? {rel(self.p_filter)}\n?? {rel(self.p_stored)}", risk="MEDIUM",
                  text=to_redis)  # fmt: skip
        del self.files[self.p_migration]
        s.fact(
            "file_deleted",
            "Removed the Flyway migration of the abandoned table",
            [rel(self.p_migration)],
        )
        self.create(self.p_store, self.store_file())
        s.fact("file_created", "Created the Redis store", [rel(self.p_store)])
        self.replace(
            self.p_filter,
            "    private final ConcurrentMap<String, StoredResponse> records = new "
            "ConcurrentHashMap<>();\n",
            "    private final RedisIdempotencyStore store;\n\n"
            "    public IdempotencyFilter(RedisIdempotencyStore store) {\n"
            "        this.store = store;\n"
            "    }\n",
            text="Now the filter uses the store instead of the map.",
        )
        self.replace_missed(
            self.p_filter,
            "        StoredResponse stored = records.get(recordKey);\n"
            "        if (stored != null) {\n"
            "            if (!stored.fingerprint().equals(fingerprint)) {\n"
            "                rejectMismatch(response);\n"
            "                return;\n"
            "            }\n"
            "            replay(stored, response);\n"
            "            return;\n"
            "        }\n"
            "        ContentCachingResponseWrapper wrapped",
            "",
        )
        self.replace(
            self.p_filter,
            """        StoredResponse stored = records.get(recordKey);
        if (stored != null) {
            if (!stored.fingerprint().equals(fingerprint)) {
                rejectMismatch(response);
                return;
            }
            replay(stored, response);
            return;
        }

        ContentCachingResponseWrapper wrapped = new ContentCachingResponseWrapper(response);
        chain.doFilter(new CachedBodyRequest(request, body), wrapped);
        if (wrapped.getStatus() < 500) {
            records.put(recordKey, new StoredResponse(fingerprint, wrapped.getStatus(),
                    wrapped.getContentType(), wrapped.getContentAsByteArray()));
        }
        wrapped.copyBodyToResponse();
""",
            """        if (!store.claim(recordKey)) {
            StoredResponse stored = awaitStored(recordKey);
            if (stored == null) {
                response.sendError(HttpStatus.CONFLICT.value(), "request with this key in flight");
                return;
            }
            if (!stored.fingerprint().equals(fingerprint)) {
                rejectMismatch(response);
                return;
            }
            replay(stored, response);
            return;
        }

        ContentCachingResponseWrapper wrapped = new ContentCachingResponseWrapper(response);
        try {
            chain.doFilter(new CachedBodyRequest(request, body), wrapped);
        } catch (IOException | ServletException | RuntimeException e) {
            store.release(recordKey);
            throw e;
        }
        if (wrapped.getStatus() >= 500) {
            store.release(recordKey);
        } else {
            store.complete(recordKey, new StoredResponse(fingerprint, wrapped.getStatus(),
                    wrapped.getContentType(), response.getContentAsByteArray()));
        }
        wrapped.copyBodyToResponse();
    }

    private StoredResponse awaitStored(String recordKey) throws ServletException {
        try {
            return store.awaitResult(recordKey);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServletException(e);
        }
""",
            text="The whitespace was off; replacing the whole block.",
        )
        self.replace(
            self.p_filter,
            "import java.util.concurrent.ConcurrentHashMap;\n"
            "import java.util.concurrent.ConcurrentMap;\n",
            "",
        )
        self.gap()

        # Config: application.yml and the filter's registration.
        self.files[self.p_yml] = self.yml_file()
        self.view(self.p_yml)
        self.insert(
            self.p_yml,
            len(self.files[self.p_yml].split("\n")),
            f"\nidempotency:\n  ttl: {ttl0[1]}\n  lock-wait: {lock0[1]}",
            text=f"Retention {ttl0[0]} and in-flight wait {lock0[0]}, as you specified:",
        )
        s.fact("file_modified", "application.yml carries the idempotency settings",
               [rel(self.p_yml)])  # fmt: skip
        self.replace(
            self.p_config,
            "    @Bean\n    public FilterRegistrationBean<CorrelationIdFilter> "
            "correlationIdFilter() {\n",
            "    @Bean\n"
            "    public FilterRegistrationBean<IdempotencyFilter> idempotencyFilter(\n"
            "            RedisIdempotencyStore store) {\n"
            "        FilterRegistrationBean<IdempotencyFilter> registration =\n"
            "                new FilterRegistrationBean<>(new IdempotencyFilter(store));\n"
            f'        registration.addUrlPatterns("/v1/{self.resource}");\n'
            "        registration.setOrder(Ordered.LOWEST_PRECEDENCE - 10);\n"
            "        return registration;\n"
            "    }\n\n"
            "    @Bean\n    public FilterRegistrationBean<CorrelationIdFilter> "
            "correlationIdFilter() {\n",
            text=f"Registering the filter for /v1/{self.resource} in {self.right_class}.",
        )
        self.replace(
            self.p_config,
            f"import {self.pkg}.web.CorrelationIdFilter;\n",
            f"import {self.pkg}.idempotency.IdempotencyFilter;\n"
            f"import {self.pkg}.idempotency.RedisIdempotencyStore;\n"
            f"import {self.pkg}.web.CorrelationIdFilter;\n",
        )
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "done", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "done",
                 "OncePerRequestFilter + ContentCachingResponseWrapper"),
                ("3", "Record store for keys and responses", "done",
                 "Redis: SET NX PX marker, response stored for the retention period"),
                ("4", _CONFIG_TASK, "in_progress",
                 ""),
                ("5", self.concurrency_task, "todo", "replay, body mismatch, in-flight duplicate"),
                ("6", "Micrometer counter for replayed requests", "todo", ""),
            ]
        )  # fmt: skip
        self.gap()

        # The retention changes the first time.
        s.user(
            f"Support says clients retry the next day after an outage. Make the retention "
            f"{ttl1[0]} instead of {ttl0[0]}."
        )
        self.replace(self.p_yml, f"  ttl: {ttl0[1]}\n", f"  ttl: {ttl1[1]}\n",
                     text=f"Setting idempotency.ttl to {ttl1[1]}: keys are kept for "
                     f"{ttl1[0]}.")  # fmt: skip
        self.gap()

        # Who else handles the header: the legacy module, put out of bounds.
        legacy_file = f"{self.legacy}/src/main/java/{self.pkg.replace('.', '/')}/legacy/" \
                      "LegacyReplayHandler.java"  # fmt: skip
        self.bash(
            f"cd {self.root} && grep -rn \"Duplicate{self.res}Guard\\|Idempotency-Key\" "
            "--include=*.java .",
            "\n".join(
                f"./{rel(path)}:{self.line_of(path, text)}:{text}"
                for path, text in (
                    (self.p_config, f"import {self.pkg}.web.Duplicate{self.res}Guard;"),
                    (self.p_config, f"    private final Duplicate{self.res}Guard duplicateGuard;"),
                    (self.p_config, f"            Duplicate{self.res}Guard duplicateGuard) {{"),
                    (self.p_guard, f"public class Duplicate{self.res}Guard implements "
                                   "HandlerInterceptor {"),
                    (self.p_filter, '    static final String KEY_HEADER = "Idempotency-Key";'),
                )
            )
            + "\n"
            f"./{legacy_file}:38:        String key = request.getHeader(\"Idempotency-Key\");\n"
            f"./{legacy_file}:52:            response.setStatus(409);",
        )  # fmt: skip
        s.say(
            f"{self.legacy} has its own Idempotency-Key handling in LegacyReplayHandler, with a "
            "409 where the new contract says 422. I'll bring it in line with the new filter so "
            "both answer the same way."
        )
        s.user(
            f"No. Leave everything under {self.legacy}/ alone; that module is frozen until it's "
            "switched off, and nobody deploys it any more."
        )
        s.say(f"Understood, I won't touch anything in {self.legacy}.")
        s.fact("constraint", f"Nothing under {self.legacy}/ may be changed", [self.legacy])

        # Which commit added the guard; then it goes.
        s.user(
            f"Before the old Duplicate{self.res}Guard goes: which commit introduced it? I want "
            "to reference it in the PR."
        )
        day = self.story.randint(1, 28)
        self.bash(
            f"cd {self.root} && git log --diff-filter=A --format='%h %ad %an %s' --date=short "
            f"-- {rel(self.p_guard)}",
            f"{self.guard_commit} 2024-0{self.story.randint(1, 9)}-{day:02d} {self.author} Add "
            f"duplicate {self.singular} guard (10s window)",
        )
        s.say(
            f'It was introduced in {self.guard_commit} by {self.author}: "Add duplicate '
            f'{self.singular} guard (10s window)".'
        )
        s.fact(
            "identifier",
            f"Duplicate{self.res}Guard was introduced in commit {self.guard_commit}",
            [self.guard_commit],
        )
        s.user("Thanks. Go ahead and remove it; the filter replaces it.")
        self.replace(
            self.p_config,
            "    public " + self.right_class + "(RequestLoggingInterceptor requestLogging,\n"
            f"            Duplicate{self.res}Guard duplicateGuard) {{\n"
            "        this.requestLogging = requestLogging;\n"
            "        this.duplicateGuard = duplicateGuard;\n",
            "    public " + self.right_class + "(RequestLoggingInterceptor requestLogging) {\n"
            "        this.requestLogging = requestLogging;\n",
        )
        self.replace(
            self.p_config,
            f"    private final Duplicate{self.res}Guard duplicateGuard;\n",
            "",
        )
        self.replace(
            self.p_config,
            "        registry.addInterceptor(duplicateGuard).addPathPatterns("
            f'"/v1/{self.resource}");\n',
            "",
        )
        self.replace(self.p_config, f"import {self.pkg}.web.Duplicate{self.res}Guard;\n", "")
        self.bash(
            f"cd {self.root} && git rm {rel(self.p_guard)}",
            f"rm '{rel(self.p_guard)}'",
            risk="MEDIUM",
        )
        del self.files[self.p_guard]
        s.fact(
            "file_deleted",
            f"Duplicate{self.res}Guard was removed with git rm",
            [rel(self.p_guard)],
        )
        self.gap()

        # The metrics task leaves the list.
        s.user(
            "Drop the Micrometer counter from your list; the platform team measures replays at "
            "the gateway."
        )
        self.tasks_view(text="Checking the list before changing it.")
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "done", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "done",
                 "OncePerRequestFilter + ContentCachingResponseWrapper"),
                ("3", "Record store for keys and responses", "done",
                 "Redis: SET NX PX marker, response stored for the retention period"),
                ("4", _CONFIG_TASK, "done", ""),
                ("5", self.concurrency_task, "in_progress",
                 "replay, body mismatch, in-flight duplicate"),
            ],
            text="Removed the counter task.",
        )  # fmt: skip
        self.create(self.p_test, self.test_file())
        s.fact("file_created", "Created the filter's tests", [rel(self.p_test)])
        self.gap()

        # A compile error, fixed.
        bad = "                    wrapped.getContentType(), response.getContentAsByteArray()));"
        compile_line = self.line_of(self.p_filter, bad)
        caret = " " * (bad.index("response.") + len("response")) + "^"
        self.bash(
            f"cd {self.root} && ./gradlew :{self.rm}:compileJava :{self.rm}:compileTestJava "
            "--console=plain",
            f"> Task :common:compileJava UP-TO-DATE\n> Task :core:compileJava UP-TO-DATE\n"
            f"> Task :{self.rm}:compileJava FAILED\n"
            f"{self.p_filter}:{compile_line}: error: cannot find symbol\n"
            f"{bad}\n{caret}\n"
            "  symbol:   method getContentAsByteArray()\n"
            "  location: variable response of type HttpServletResponse\n"
            "1 error\n\n"
            "FAILURE: Build failed with an exception.\n\n"
            "* What went wrong:\n"
            f"Execution failed for task ':{self.rm}:compileJava'.\n"
            "> Compilation failed; see the compiler error output for details.\n\n"
            "* Try:\n"
            "> Run with --info option to get more log output.\n"
            "> Run with --scan to get full insights.\n\n"
            f"BUILD FAILED in {self.story.randint(3, 9)}s\n"
            "4 actionable tasks: 1 executed, 3 up-to-date",
            exit_code=1,
            timeout=300,
        )
        s.fact(
            "error_resolved",
            "javac: cannot find symbol getContentAsByteArray() on the raw response (fixed)",
            ["cannot find symbol", "getContentAsByteArray()"],
            required=False,
        )
        self.replace(
            self.p_filter,
            "                    wrapped.getContentType(), response.getContentAsByteArray()));\n",
            "                    wrapped.getContentType(), wrapped.getContentAsByteArray()));\n",
            text="The body has to come from the caching wrapper, not the raw response.",
        )

        # The first test run: two failures.
        test_cmd = f"cd {self.root} && ./gradlew :{self.rm}:test --console=plain"
        pkg = self.pkg
        replay_line = self.line_of(self.p_test, ".andExpect(header().string(")
        open_line = self.line_of(self.p_test, ".andExpect(status().isConflict());")
        first = (
            f"> Task :common:compileJava UP-TO-DATE\n> Task :core:compileJava UP-TO-DATE\n"
            f"> Task :{self.rm}:compileJava\n> Task :{self.rm}:processResources UP-TO-DATE\n"
            f"> Task :{self.rm}:classes\n> Task :{self.rm}:compileTestJava\n"
            f"> Task :{self.rm}:processTestResources NO-SOURCE\n> Task :{self.rm}:testClasses\n"
            f"> Task :{self.rm}:test"
        )
        rest = (
            f"\nIdempotencyFilterTest > {self.replay_test}() FAILED\n"
            f"    java.lang.AssertionError: Response header '{self.header}' "
            "expected:<true> but was:<null>\n"
            "        at org.springframework.test.util.AssertionErrors.fail("
            "AssertionErrors.java:59)\n"
            "        at org.springframework.test.util.AssertionErrors.assertEquals("
            "AssertionErrors.java:122)\n"
            "        at org.springframework.test.web.servlet.result.HeaderResultMatchers."
            "lambda$string$0(HeaderResultMatchers.java:64)\n"
            "        at org.springframework.test.web.servlet.MockMvc$1.andExpect("
            "MockMvc.java:214)\n"
            f"        at {pkg}.idempotency.IdempotencyFilterTest.{self.replay_test}("
            f"IdempotencyFilterTest.java:{replay_line})\n\n"
            f"IdempotencyFilterTest > {self.open_test}() FAILED\n"
            "    java.lang.AssertionError: Status expected:<409> but was:<201>\n"
            "        at org.springframework.test.util.AssertionErrors.fail("
            "AssertionErrors.java:59)\n"
            "        at org.springframework.test.util.AssertionErrors.assertEquals("
            "AssertionErrors.java:122)\n"
            "        at org.springframework.test.web.servlet.result.StatusResultMatchers."
            "lambda$matcher$9(StatusResultMatchers.java:637)\n"
            "        at org.springframework.test.web.servlet.MockMvc$1.andExpect("
            "MockMvc.java:214)\n"
            f"        at {pkg}.idempotency.IdempotencyFilterTest.{self.open_test}("
            f"IdempotencyFilterTest.java:{open_line})\n\n"
            f"{self.tests_before} tests completed, 2 failed\n\n"
            f"> Task :{self.rm}:test FAILED\n\n"
            "FAILURE: Build failed with an exception.\n\n"
            "* What went wrong:\n"
            f"Execution failed for task ':{self.rm}:test'.\n"
            "> There were failing tests. See the report at: "
            f"file://{self.root}/{self.rm}/build/reports/tests/test/index.html\n\n"
            "* Try:\n"
            "> Run with --scan to get full insights.\n\n"
            f"BUILD FAILED in {self.story.randint(41, 79)}s\n"
            "7 actionable tasks: 4 executed, 3 up-to-date"
        )  # fmt: skip
        self.bash_stalled(test_cmd, first, rest, exit_code=1, text="Now the test suite.")
        s.fact(
            "command",
            "The module's tests run with Gradle",
            [f"./gradlew :{self.rm}:test"],
            required=False,
        )
        s.fact(
            "error_resolved",
            f"{self.replay_test} failed: the replay did not carry {self.header} (fixed)",
            [self.replay_test, "expected:<true> but was:<null>"],
            required=False,
        )
        self.gap()

        # The retention changes a second time.
        s.user(f"Finance wants the keys kept for {ttl2[0]}, so settle on {ttl2[0]}.")
        self.replace(self.p_yml, f"  ttl: {ttl1[1]}\n", f"  ttl: {ttl2[1]}\n",
                     text=f"Retention to {ttl2[0]} (idempotency.ttl: {ttl2[1]}).")  # fmt: skip
        s.fact(
            "changed_value",
            f"Keys are kept for {ttl2[0]}",
            [ttl2[0]],
            stale=[ttl0[0], ttl1[0]],
        )

        # The replay fix.
        self.replace(
            self.p_filter,
            "        response.setStatus(stored.status());\n",
            "        response.setStatus(stored.status());\n"
            '        response.setHeader(REPLAYED_HEADER, "true");\n',
            text=f"{self.replay_test} fails because replay() never sets {self.header}.",
        )
        s.user(
            f"One more item for your list: a short section in {self.doc} about the "
            f"{self.header} header, so on-call knows what a replay looks like in the logs. "
            "After the tests."
        )
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "done", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "done",
                 "OncePerRequestFilter + ContentCachingResponseWrapper"),
                ("3", "Record store for keys and responses", "done",
                 "Redis: SET NX PX marker, response stored for the retention period"),
                ("4", _CONFIG_TASK, "done", ""),
                ("5", self.concurrency_task, "in_progress",
                 "replay fixed; body mismatch and missing-key cases next"),
                ("7", f"Section on {self.header} in {self.doc}", "todo", "after the tests"),
            ]
        )  # fmt: skip
        s.fact("todo", f"A section on the replay header in {self.doc} is still to be written",
               [self.doc])  # fmt: skip

        # Three more tests.
        lines = self.files[self.p_test].split("\n")
        self.insert(
            self.p_test,
            len(lines) - 1,
            f"""
    @Test
    void reusedKeyWithOtherBodyIs422() throws Exception {{
        when(store.claim(anyString())).thenReturn(false);
        when(store.awaitResult(anyString())).thenReturn(new StoredResponse("other",
                HttpServletResponse.SC_CREATED, MediaType.APPLICATION_JSON_VALUE, new byte[0]));

        mvc.perform(post("/v1/{self.resource}").header("Idempotency-Key", "k-3")
                        .contentType(MediaType.APPLICATION_JSON).content(BODY))
                .andExpect(status().isUnprocessableEntity())
                .andExpect(content().json("{{\\"error\\":\\"{self.code}\\"}}"));
    }}

    @Test
    void postWithoutKeyPassesThrough() throws Exception {{
        mvc.perform(post("/v1/{self.resource}").contentType(MediaType.APPLICATION_JSON).content(BODY))
                .andExpect(status().isCreated());
    }}

    @Test
    void overlongKeyIs400() throws Exception {{
        mvc.perform(post("/v1/{self.resource}").header("Idempotency-Key", "k".repeat(256))
                        .contentType(MediaType.APPLICATION_JSON).content(BODY))
                .andExpect(status().isBadRequest());
    }}""",
            text="Adding the mismatch, missing-key and overlong-key cases.",
        )
        self.gap()

        # The in-flight wait changes once.
        s.user(
            f"The mobile team says {lock0[0]} is wrong for their retry timing. Make the in-flight "
            f"wait {lock1[0]}."
        )
        self.replace(self.p_yml, f"  lock-wait: {lock0[1]}", f"  lock-wait: {lock1[1]}",
                     text=f"A duplicate will wait up to {lock1[0]} for the first request before "
                     "the 409.")  # fmt: skip
        s.fact(
            "changed_value",
            f"A duplicate waits up to {lock1[0]} for the in-flight request",
            [lock1[0]],
            stale=[lock0[0]],
        )

        # Checkstyle: an unused import, fixed.
        import_line = self.line_of(self.p_filter, "import java.util.Optional;")
        self.bash(
            f"cd {self.root} && ./gradlew :{self.rm}:checkstyleMain :{self.rm}:checkstyleTest "
            "--console=plain",
            f"> Task :{self.rm}:compileJava UP-TO-DATE\n> Task :{self.rm}:processResources "
            f"UP-TO-DATE\n> Task :{self.rm}:classes UP-TO-DATE\n\n"
            f"> Task :{self.rm}:checkstyleMain\n"
            f"[ant:checkstyle] [ERROR] {self.p_filter}:{import_line}:8: Unused import - "
            "java.util.Optional. [UnusedImports]\n\n"
            f"> Task :{self.rm}:checkstyleMain FAILED\n\n"
            "FAILURE: Build failed with an exception.\n\n"
            "* What went wrong:\n"
            f"Execution failed for task ':{self.rm}:checkstyleMain'.\n"
            "> A failure occurred while executing org.gradle.api.plugins.quality.internal."
            "CheckstyleAction\n"
            "   > Checkstyle rule violations were found. See the report at: "
            f"file://{self.root}/{self.rm}/build/reports/checkstyle/main.html\n"
            "     Checkstyle files with violations: 1\n"
            "     Checkstyle violations by severity: [error:1]\n\n"
            "* Try:\n"
            "> Run with --scan to get full insights.\n\n"
            f"BUILD FAILED in {self.story.randint(4, 12)}s\n"
            "4 actionable tasks: 1 executed, 3 up-to-date",
            exit_code=1,
            text="Checkstyle before the full run.",
        )  # fmt: skip
        s.fact(
            "command",
            "Checkstyle runs through Gradle",
            [f"./gradlew :{self.rm}:checkstyleMain"],
            required=False,
        )
        s.fact(
            "error_resolved",
            "checkstyle UnusedImports on java.util.Optional in the filter (fixed)",
            ["Unused import - java.util.Optional", "[UnusedImports]"],
            required=False,
        )
        self.replace(self.p_filter, "import java.util.Optional;\n", "")
        self.bash(
            f"cd {self.root} && ./gradlew :{self.rm}:checkstyleMain :{self.rm}:checkstyleTest "
            "--console=plain -q",
            "",
        )
        self.gap()

        # The last run: one test still red.
        self.bash(
            test_cmd,
            f"> Task :{self.rm}:compileJava\n> Task :{self.rm}:classes\n"
            f"> Task :{self.rm}:compileTestJava\n> Task :{self.rm}:testClasses\n\n"
            f"> Task :{self.rm}:test\n\n"
            f"IdempotencyFilterTest > {self.open_test}() FAILED\n"
            "    java.lang.AssertionError: Status expected:<409> but was:<201>\n"
            "        at org.springframework.test.util.AssertionErrors.fail("
            "AssertionErrors.java:59)\n"
            "        at org.springframework.test.util.AssertionErrors.assertEquals("
            "AssertionErrors.java:122)\n"
            "        at org.springframework.test.web.servlet.result.StatusResultMatchers."
            "lambda$matcher$9(StatusResultMatchers.java:637)\n"
            "        at org.springframework.test.web.servlet.MockMvc$1.andExpect("
            "MockMvc.java:214)\n"
            f"        at {pkg}.idempotency.IdempotencyFilterTest.{self.open_test}("
            f"IdempotencyFilterTest.java:{open_line})\n\n"
            f"{self.tests_after} tests completed, 1 failed\n\n"
            f"> Task :{self.rm}:test FAILED\n\n"
            "FAILURE: Build failed with an exception.\n\n"
            "* What went wrong:\n"
            f"Execution failed for task ':{self.rm}:test'.\n"
            "> There were failing tests. See the report at: "
            f"file://{self.root}/{self.rm}/build/reports/tests/test/index.html\n\n"
            "* Try:\n"
            "> Run with --scan to get full insights.\n\n"
            f"BUILD FAILED in {self.story.randint(41, 79)}s\n"
            "7 actionable tasks: 3 executed, 4 up-to-date",
            exit_code=1,
            timeout=600,
        )  # fmt: skip
        s.fact(
            "test_status",
            f"The last run: {self.tests_after} tests completed, 1 failed",
            [f"{self.tests_after} tests completed, 1 failed"],
            stale=[f"{self.tests_before} tests completed, 2 failed"],
        )
        s.fact(
            "error_open",
            f"{self.open_test} still fails: 409 expected, 201 returned",
            [self.open_test, "Status expected:<409> but was:<201>"],
        )
        self.tasks(
            [
                ("1", f"Read the {self.resource} endpoint, web config and existing guards",
                 "done", ""),
                ("2", f"Idempotency hook on POST /v1/{self.resource}", "done",
                 "OncePerRequestFilter + ContentCachingResponseWrapper"),
                ("3", "Record store for keys and responses", "done",
                 "Redis: SET NX PX marker, response stored for the retention period"),
                ("4", _CONFIG_TASK, "done", ""),
                ("5", self.concurrency_task, "in_progress",
                 "the second request reaches the mocked store after the first has finished"),
                ("7", f"Section on {self.header} in {self.doc}", "todo", "after the tests"),
            ],
            text=f"The replay, mismatch and key tests pass now. {self.open_test} is still red: "
            "with the store mocked, the second MockMvc request only runs once the first has "
            "returned, so it is never actually in flight. It needs a latch in the test; leaving "
            "it open.",
        )  # fmt: skip
        s.fact(
            "todo",
            f"'{self.concurrency_task}' is still in progress",
            [self.concurrency_task],
        )
        s.fact("todo", "The settings task is done", [_CONFIG_TASK], required=False)
        self.finish(self.final)
        s.fact("last_message", "The session ends handing the branch back", [self.final])
        return s


def _told(seed: int, filler_budget: int | None, total_gaps: int) -> _Teller:
    teller = _Teller(seed, filler_budget, total_gaps)
    teller.tell()
    return teller


def write(seed: int, tokens: int) -> EvalSession:
    """One ohstory-style session of about `tokens` tokens."""
    bare = _told(seed, None, 1)
    events = _chars(bare.s.messages) + len(_SYSTEM)
    budget = max(0, int(tokens * _CHARS_PER_TOKEN) - events)
    told = _told(seed, budget, bare.gaps)
    return finish_session(told.s, family=FAMILY, seed=seed)
