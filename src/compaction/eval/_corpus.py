"""Word pools and prose templates for the session generator — data only, no logic.

Templates use `string.Template` placeholders (`$name`, `${name}`) so Python source and JSON,
which are full of braces, can be written as they are. Each fact template names its probe: the
distinctive substring(s) that prove the fact survived.

Nothing here may contain a cue word (TODO:, Decision:, Constraint:, NOTE:) outside the "cued"
variants of fact templates: uncued sessions must really be uncued. And no filler text may
reuse a phrase that a fact template uses as a probe, or the ruler would credit survival that
came from somewhere else (the generator checks this for every session it builds).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Domain:
    """What a generated project is about: its package names, nouns and modules."""

    name: str
    packages: tuple[str, ...]
    nouns: tuple[str, ...]
    modules: tuple[str, ...]
    tables: tuple[str, ...]


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "billing",
        ("ledgerly", "billing_core", "invoicer"),
        ("invoice", "payment", "customer", "refund", "credit_note", "subscription"),
        ("invoices", "payments", "ledger", "refunds", "pricing", "tax", "dunning", "currency"),
        ("invoices", "payments", "customers", "refunds", "ledger_entries"),
    ),
    Domain(
        "ingest",
        ("tidepool", "ingestor", "feedline"),
        ("record", "feed", "source", "checkpoint", "manifest", "upload"),
        ("feeds", "batches", "checkpoints", "parsers", "manifests", "sources", "dedupe"),
        ("records", "feeds", "checkpoints", "uploads", "sources"),
    ),
    Domain(
        "auth",
        ("authkit", "gatehouse", "keyward"),
        ("session", "token", "user", "role", "grant", "device"),
        ("sessions", "tokens", "users", "roles", "grants", "passwords", "mfa", "devices"),
        ("sessions", "users", "roles", "grants", "devices"),
    ),
    Domain(
        "search",
        ("findit", "searchly", "lexicon"),
        ("document", "ranking_rule", "shard", "synonym", "facet", "posting"),
        ("indexer", "queries", "shards", "ranking", "synonyms", "facets", "highlight"),
        ("documents", "shards", "synonyms", "postings", "facets"),
    ),
    Domain(
        "notify",
        ("notifier", "pigeonpost", "bellhop"),
        ("notification", "template", "subscriber", "channel", "digest", "receipt"),
        ("templates", "subscribers", "channels", "deliveries", "digests", "throttle", "render"),
        ("notifications", "templates", "subscribers", "channels", "receipts"),
    ),
    Domain(
        "inventory",
        ("stockroom", "shelfware", "depotline"),
        ("item", "warehouse", "order", "shipment", "sku", "reservation"),
        ("items", "orders", "shipments", "reservations", "stock", "allocations", "carriers"),
        ("items", "orders", "shipments", "reservations", "warehouses"),
    ),
    Domain(
        "analytics",
        ("tallyho", "metricsd", "eventide"),
        ("event", "metric", "dashboard", "funnel", "cohort", "segment"),
        ("events", "metrics_store", "dashboards", "funnels", "cohorts", "rollups", "segments"),
        ("events", "metrics", "dashboards", "funnels", "cohorts"),
    ),
)

GENERIC_MODULES: tuple[str, ...] = (
    "config", "client", "storage", "serializers", "validators", "cli", "models",
    "handlers", "tasks", "schema", "pagination", "webhooks", "scheduler", "errors", "utils",
    "http", "db", "locks", "clock", "registry", "pipeline", "formatting", "backends", "audit",
    "cache", "retry", "importer", "exporter",
)  # fmt: skip

VERBS: tuple[str, ...] = (
    "load", "fetch", "parse", "build", "resolve", "normalize", "render", "validate", "apply",
    "sync", "compute", "merge", "flush", "refresh", "encode", "decode", "collect", "dispatch",
    "register", "reconcile", "prune", "schedule", "summarize", "split", "emit", "lookup",
    "ensure", "expire", "rebuild", "stage", "coerce", "upsert", "archive", "hydrate",
)  # fmt: skip

GENERIC_NOUNS: tuple[str, ...] = (
    "config", "payload", "rows", "window", "cursor", "snapshot", "headers", "page", "entries",
    "chunk", "metadata", "totals", "state", "params", "bounds", "keys", "diff", "labels",
)  # fmt: skip

FIELDS: tuple[str, ...] = (
    "name", "status", "amount", "region", "owner", "priority", "kind", "label", "origin",
    "external_ref", "score", "revision", "attempts", "checksum", "weight", "locale",
)  # fmt: skip

# Packages installed by filler `pip install` calls. Kept apart from every package a fact
# names (decision choices, pinned versions) so pip output never leaks a probe.
FILLER_DEPS: tuple[tuple[str, str], ...] = (
    ("python-dateutil", "2.9.0.post0"), ("tabulate", "0.9.0"), ("respx", "0.21.1"),
    ("types-requests", "2.32.0.20240602"), ("pytest-randomly", "3.15.0"), ("rich", "13.7.1"),
    ("attrs", "23.2.0"), ("platformdirs", "4.2.2"), ("tomli", "2.0.1"), ("idna", "3.7"),
    ("typing-extensions", "4.12.2"), ("certifi", "2024.6.2"), ("anyio", "4.4.0"),
    ("sniffio", "1.3.1"), ("h11", "0.14.0"), ("charset-normalizer", "3.3.2"),
    ("urllib3", "2.2.2"), ("packaging", "24.1"), ("iniconfig", "2.0.0"), ("httpcore", "1.0.5"),
    ("pytest-mock", "3.14.0"), ("hypothesis", "6.103.1"), ("coverage", "7.5.3"),
)  # fmt: skip

SYSTEM_PROMPTS: tuple[str, ...] = (
    "You are a coding agent working in the user's repository at /home/dev/$pkg. You can read "
    "and edit files and run shell commands through the tools provided.\n\n"
    "Work in small, verifiable steps: read the relevant code before changing it, make focused "
    "edits, and run the tests that cover what you changed. Prefer editing existing files over "
    "creating new ones. When a command fails, read the error before retrying; do not retry the "
    "same command blindly. Keep the user informed with short updates between steps, but don't "
    "narrate every tool call.\n\nNever run destructive git commands (reset --hard, push "
    "--force, clean -fdx) unless the user asks. Don't install system packages. When the task "
    "is complete, summarize what changed and anything left undone.",
    "# Role\nYou are an autonomous software engineer operating inside a sandboxed checkout of "
    "the `$pkg` project (path: /home/dev/$pkg).\n\n# Tools\n- read_file, write_file, edit_file,"
    " delete_file: file access relative to the repository root.\n- bash: run a shell command; "
    "output is truncated after 400 lines.\n- grep, list_dir: search and browse.\n\n# Working "
    "style\n1. Understand before editing: read the code and its tests.\n2. Keep diffs minimal "
    "and in the existing style.\n3. Run the narrowest test command that exercises your change, "
    "then the full suite before you finish.\n4. If the user changes requirements mid-task, the "
    "latest instruction wins.\n5. Be concise. Explain decisions in one or two sentences.",
    "You are a senior Python developer pairing with the user on /home/dev/$pkg. Use the tools "
    "to inspect and modify the code; the user sees your messages but not the tool output "
    "unless you quote it. Be direct and brief. Prefer the standard library. Write tests for "
    "behaviour you change. If something is ambiguous, make a reasonable call, say what you "
    "chose, and keep going rather than stopping to ask.",
)

TASKS: tuple[str, ...] = (
    "The nightly $noun sync in $module.py keeps timing out for large accounts. Figure out "
    "why and fix it.",
    "Add a read-through cache in front of $func so repeated $noun lookups stop hitting the "
    "upstream API.",
    "Add CSV export to the $noun report command — ops wants to pull it into a spreadsheet.",
    "People are getting duplicate ${noun}s when $func retries after a network error. Make "
    "it idempotent.",
    "Refactor $module.py so the retry logic is shared between $func and $func2 instead of "
    "being copy-pasted.",
    "Add pagination to the ${noun}s listing endpoint; right now it returns everything at once.",
    "$func is painfully slow on big inputs (minutes for ~50k ${noun}s). Profile it and make "
    "it fast.",
    "We need an audit trail for $noun changes: who changed what and when, queryable later.",
)

TASK_CONTEXT: tuple[str, ...] = (
    "The code is in src/$pkg/ and the tests run with pytest.",
    "Repo is at /home/dev/$pkg; there's a venv already set up.",
    "Most of the logic lives in src/$pkg/$module.py.",
    "I've been meaning to do this for a while, the current code is a bit of a mess.",
    "There's a decent test suite, so lean on it.",
)

RULE_HEADERS: tuple[str, ...] = (
    "A few ground rules:",
    "Things to keep in mind:",
    "Some rules for this one:",
    "Please stick to these:",
)

# Assistant prose between tool calls, by situation. Only filler names are substituted in.
PROSE_BEFORE_READ: tuple[str, ...] = (
    "Let me look at $path first.",
    "Reading $path to see how $func builds its ${noun}s.",
    "I'll check the current implementation before changing anything.",
    "First I want to see how $func is used.",
    "Opening the files that deal with $noun handling.",
    "Let me get the lay of the land.",
    "Checking $path and its tests side by side.",
)
PROSE_BEFORE_GREP: tuple[str, ...] = (
    "Searching for call sites of $func.",
    "Where else is $const used?",
    "Let me find every place that constructs a $Cls.",
    "Checking whether anything outside $module.py depends on this.",
)
PROSE_BEFORE_TESTS: tuple[str, ...] = (
    "Running the $module tests to get a baseline.",
    "Quick test run before moving on.",
    "Let me make sure nothing regressed.",
    "Tests first, then I'll keep going.",
)
PROSE_OBSERVATIONS: tuple[str, ...] = (
    "$func only handles the happy path; errors from upstream bubble straight up.",
    "The $module tests pass.",
    "$Cls is frozen, so updates go through dataclasses.replace.",
    "Only a handful of call sites, all inside $module.py.",
    "That's the same pattern $module2.py uses.",
    "Baseline is green.",
    "Good, nothing outside the module touches the private helper.",
    "Interesting: $func swallows OSError and returns an empty list.",
    "So $func is called once per $noun, which explains the number of round trips.",
    "The fixtures build their ${noun}s by hand rather than through $func.",
    "Nothing surprising there.",
    "$const is only read at import time.",
)
PROSE_BEFORE_LIST: tuple[str, ...] = (
    "Let me get the lay of the land.",
    "What else lives in there?",
    "Checking the layout.",
)
PROSE_BEFORE_API: tuple[str, ...] = (
    "Checking what the local API actually returns for ${noun}s.",
    "Let me see the real payload shape.",
    "Hitting the local API to compare with the fixtures.",
)
PROSE_BEFORE_GIT: tuple[str, ...] = (
    "Checking the working tree.",
    "Let me look at what changed so far.",
    "Recent history first, to see who touched $module.py last.",
)
PROSE_BEFORE_PIP: tuple[str, ...] = (
    "The test extras aren't installed in this venv yet.",
    "Installing the missing dev dependency.",
)
PROSE_BEFORE_LINT: tuple[str, ...] = (
    "Lint and types before moving on.",
    "Quick static check.",
)
PROSE_BEFORE_EDIT: tuple[str, ...] = (
    "Making the change in $path.",
    "Small fix in $func: pass the limit through instead of re-reading the default.",
    "Tightening the input handling in $func.",
    "Adjusting $func to reuse the shared helper.",
)
PROSE_STATUS: tuple[str, ...] = (
    "The $module changes are in and the tests pass. Next I'll look at $path.",
    "First pass over $module.py is done and its tests are green. Continuing with the $noun "
    "handling.",
    "$func is refactored and covered by tests; moving on to the remaining call sites.",
    "That part works now. I'll keep going with $module2.py.",
)

ACKS: tuple[str, ...] = (
    "Understood.",
    "Got it.",
    "Will do.",
    "Okay, adjusting.",
    "Sure.",
    "Makes sense.",
)

USER_INTERRUPT_PREFIXES: tuple[str, ...] = (
    "",
    "Quick thing before you continue: ",
    "Also — ",
    "One more thing. ",
    "Btw, ",
)

USER_CHATTER: tuple[tuple[str, str], ...] = (
    (
        "How's it going? Anything blocking?",
        "No blockers. $func is refactored and its tests pass; I'm working through $module.py.",
    ),
    (
        "Why does $func need its own lock?",
        "It mutates the module-level registry, and the scheduler calls it from worker threads, "
        "so two refreshes could interleave without it.",
    ),
    ("Looks good so far, keep going.", "Will do."),
    (
        "Is the $module suite always this slow?",
        "Most of the time goes into the fixture that builds ${noun}s one by one. It could be "
        "session-scoped, but that's outside this task.",
    ),
    (
        "What does $func return when the upstream is down?",
        "Right now an empty list: it catches OSError and logs a warning. Callers can't tell "
        "that apart from 'no results'.",
    ),
)

LIVE_TURNS: tuple[str, ...] = (
    "What's left?",
    "Can you summarize what you've changed so far and what's still open?",
    "Great. Run the full test suite and fix whatever breaks.",
    "Ok, continue with the next step.",
    "Before you go further, walk me through your plan for the rest of this.",
)


@dataclass(frozen=True)
class ConstraintTemplate:
    cued: str
    plain: str
    probe: tuple[str, ...]


CONSTRAINTS: tuple[ConstraintTemplate, ...] = (
    ConstraintTemplate(
        "Constraint: nothing under `$pkg/migrations/` gets edited; the DBA team generates those.",
        "Please don't touch anything under `$pkg/migrations/` — the DBA team generates those.",
        ("$pkg/migrations/",),
    ),
    ConstraintTemplate(
        "Constraint: no print() for logging anywhere — use the module logger.",
        "Never use print() for logging; go through the module-level logger like the rest of "
        "the code.",
        ("print() for logging",),
    ),
    ConstraintTemplate(
        "Constraint: the public API of $func stays exactly as it is, $n services import it.",
        "Keep the public API of $func unchanged, $n other services import it.",
        ("public API of $func",),
    ),
    ConstraintTemplate(
        "Constraint: must support Python $pyver, so no match statements and no `X | Y` unions "
        "evaluated at runtime.",
        "This still has to run on Python $pyver — no match statements, no `X | Y` unions "
        "evaluated at runtime.",
        ("Python $pyver",),
    ),
    ConstraintTemplate(
        "Constraint: no new runtime dependencies; stdlib only under src/.",
        "Don't add any new runtime dependencies, stdlib only for anything under src/.",
        ("new runtime dependencies",),
    ),
    ConstraintTemplate(
        "Constraint: the on-disk format of $noun snapshots must not change; old files have "
        "to keep loading.",
        "Don't change the on-disk format of $noun snapshots — we have years of old files that "
        "must still load.",
        ("on-disk format",),
    ),
    ConstraintTemplate(
        "Constraint: every new function gets type hints and a docstring.",
        "All new functions need type hints and a docstring, same as the rest of the codebase.",
        ("type hints and a docstring",),
    ),
    ConstraintTemplate(
        "Constraint: don't commit or push anything; I'll review the diff myself.",
        "Don't commit anything, I want to review the diff myself first.",
        ("review the diff myself",),
    ),
    ConstraintTemplate(
        "Constraint: keep $module.py under $lines lines.",
        "Try to keep $module.py under $lines lines, it's already hard to review.",
        ("under $lines lines",),
    ),
    ConstraintTemplate(
        "Constraint: tests must never hit the network; use the fake transport in tests/fakes.py.",
        "Tests can't hit the network — use the fake transport in tests/fakes.py instead.",
        ("hit the network",),
    ),
    ConstraintTemplate(
        "Constraint: UTC everywhere, no naive datetimes.",
        "Everything should be in UTC, and no naive datetimes please.",
        ("naive datetimes",),
    ),
    ConstraintTemplate(
        "Constraint: don't rename any environment variables — the ops scripts read $env directly.",
        "Please don't rename any environment variables, the ops scripts read $env directly.",
        ("rename any environment variables",),
    ),
    ConstraintTemplate(
        "Constraint: log calls use %-style arguments, never f-strings.",
        "In log calls use %-style arguments rather than f-strings so formatting stays lazy.",
        ("%-style arguments",),
    ),
    ConstraintTemplate(
        "Constraint: leave the minimum version of $dep in pyproject.toml alone.",
        "Don't bump the minimum version of $dep in pyproject.toml, downstream is stuck on the "
        "old one.",
        ("minimum version of $dep",),
    ),
    ConstraintTemplate(
        "Constraint: user-facing error messages must not include stack traces.",
        "Error messages that users see must not include stack traces.",
        ("include stack traces",),
    ),
    ConstraintTemplate(
        "Constraint: with the new flag off, behaviour stays byte-for-byte identical.",
        "When the new flag is off the behaviour has to stay byte-for-byte identical to today.",
        ("byte-for-byte identical",),
    ),
    ConstraintTemplate(
        "Constraint: no `Any` in new public signatures.",
        "Please avoid `Any` in new public signatures, we're trying to get mypy strict clean.",
        ("in new public signatures",),
    ),
    ConstraintTemplate(
        "Constraint: every new public function needs a unit test in the matching tests/ module.",
        "Each new public function should get a unit test in the matching tests/ module.",
        ("matching tests/ module",),
    ),
    ConstraintTemplate(
        "Constraint: nothing may block the event loop inside the async handlers.",
        "Make sure nothing blocks the event loop inside the async handlers.",
        ("async handlers",),
    ),
    ConstraintTemplate(
        "Constraint: never log tokens or API keys, not even at DEBUG.",
        "Never log tokens or API keys, not even at debug level.",
        ("log tokens or API keys",),
    ),
)


@dataclass(frozen=True)
class DecisionOption:
    choice: str
    probe: str
    reason: str


DECISION_TOPICS: tuple[tuple[DecisionOption, ...], ...] = (
    (
        DecisionOption(
            "an in-process LRU cache",
            "in-process LRU",
            "the key space is bounded by the number of active ${noun}s",
        ),
        DecisionOption(
            "a sqlite-backed cache", "sqlite-backed cache", "it survives worker restarts"
        ),
        DecisionOption(
            "a Redis cache with a short TTL",
            "Redis cache",
            "the API pods already share a Redis instance",
        ),
    ),
    (
        DecisionOption(
            "orjson for the serializer", "orjson", "it's several times faster on the $noun payloads"
        ),
        DecisionOption("msgpack on the wire", "msgpack", "the consumers already speak it"),
        DecisionOption("the stdlib json module", "stdlib json", "it avoids a new dependency"),
    ),
    (
        DecisionOption(
            "exponential backoff with jitter",
            "backoff with jitter",
            "a fixed delay would synchronize the workers",
        ),
        DecisionOption(
            "a fixed two-second retry delay",
            "two-second retry delay",
            "the upstream quota window resets every couple of seconds anyway",
        ),
        DecisionOption(
            "tenacity for the retry loop",
            "tenacity",
            "it's already a transitive dependency and handles the edge cases",
        ),
    ),
    (
        DecisionOption("the adapter pattern", "adapter pattern", "it keeps the client untouched"),
        DecisionOption("a thin subclass of $Cls", "thin subclass", "only two methods differ"),
        DecisionOption(
            "a plain function wrapper", "plain function wrapper", "there's no state worth a class"
        ),
    ),
    (
        DecisionOption(
            "pydantic-settings for the config",
            "pydantic-settings",
            "it validates the env vars for free",
        ),
        DecisionOption(
            "an env-backed dataclass for the config",
            "env-backed dataclass",
            "it needs nothing beyond the stdlib",
        ),
    ),
    (
        DecisionOption(
            "cursor-based pagination",
            "cursor-based pagination",
            "offsets drift when rows are inserted mid-scan",
        ),
        DecisionOption(
            "plain offset pagination",
            "offset pagination",
            "the tables are small and clients already send page numbers",
        ),
        DecisionOption(
            "keyset pagination on created_at",
            "keyset pagination",
            "there's already an index on created_at",
        ),
    ),
    (
        DecisionOption(
            "asyncio.gather with a semaphore", "gather with a semaphore", "the calls are pure I/O"
        ),
        DecisionOption(
            "a ThreadPoolExecutor", "ThreadPoolExecutor", "the client library is synchronous"
        ),
        DecisionOption(
            "plain sequential calls",
            "sequential calls",
            "the volume doesn't justify the complexity",
        ),
    ),
    (
        DecisionOption("UUIDv7 for the new ids", "UUIDv7", "they sort by creation time"),
        DecisionOption("ULIDs for the new ids", "ULIDs", "they're shorter in URLs"),
        DecisionOption(
            "database sequences for the new ids",
            "database sequences",
            "the ids never leave the service",
        ),
    ),
    (
        DecisionOption("blake2b for the cache keys", "blake2b", "it's fast and in hashlib"),
        DecisionOption(
            "xxhash for the cache keys",
            "xxhash",
            "it's the fastest option and the keys aren't security-sensitive",
        ),
    ),
    (
        DecisionOption(
            "newline-delimited JSON for the export",
            "newline-delimited JSON",
            "it streams without holding everything in memory",
        ),
        DecisionOption(
            "CSV with a header row for the export",
            "CSV with a header row",
            "that's what ops opens in a spreadsheet",
        ),
        DecisionOption(
            "Parquet for the export",
            "Parquet",
            "the data team loads it straight into the warehouse",
        ),
    ),
    (
        DecisionOption("an advisory lock in Postgres", "advisory lock", "it needs no new table"),
        DecisionOption(
            "optimistic locking with a version column", "optimistic locking", "conflicts are rare"
        ),
        DecisionOption(
            "a lock file next to the spool directory",
            "lock file next to the spool",
            "only one host runs the job",
        ),
    ),
    (
        DecisionOption(
            "validating at the boundary in the API layer",
            "validating at the boundary",
            "everything below can then trust its inputs",
        ),
        DecisionOption(
            "validating inside the model constructors",
            "inside the model constructors",
            "the models are built from three different places",
        ),
    ),
    (
        DecisionOption(
            "injecting a clock object",
            "injecting a clock",
            "the tests can then control time without patching",
        ),
        DecisionOption(
            "patching time in the tests with a fixture",
            "patching time in the tests",
            "it doesn't change any signatures",
        ),
    ),
    (
        DecisionOption(
            "a Result-style return value",
            "Result-style return",
            "callers handle failure explicitly",
        ),
        DecisionOption(
            "raising a dedicated ${Cls}Unavailable exception",
            "Unavailable exception",
            "that's how the rest of the module reports errors",
        ),
    ),
)

DECISION_CUED: tuple[str, ...] = ("Decision: $choice — $reason.",)
DECISION_PLAIN: tuple[str, ...] = (
    "I'll go with $choice here since $reason.",
    "Going with $choice: $reason.",
    "Let's use $choice; $reason.",
    "I'm settling on $choice because $reason.",
    "Best fit is $choice, mostly because $reason.",
)
# In these, `$new` is the full choice and `$old` the short name (the probe) of the earlier one.
SUPERSEDE_CUED: tuple[str, ...] = ("Decision: $new instead of $old (revised) — $reason.",)
SUPERSEDE_PLAIN: tuple[str, ...] = (
    "Change of plan: $new instead of $old, because $reason.",
    "Scratch the $old idea — $new is the better fit, since $reason.",
    "On second thought, $new instead of $old: $reason.",
)
USER_OVERRIDE_CUED: tuple[str, ...] = ("Decision: use $new, not $old. $Reason.",)
USER_OVERRIDE_PLAIN: tuple[str, ...] = (
    "Actually, use $new instead of $old — $reason.",
    "Hmm, I'd rather you went with $new than $old; $reason.",
)
USER_OVERRIDE_ACK: tuple[str, ...] = (
    "Switching to $new.",
    "Okay, $new it is.",
)


@dataclass(frozen=True)
class TodoTemplate:
    task: str
    probe: tuple[str, ...]
    done: str


TODOS: tuple[TodoTemplate, ...] = (
    TodoTemplate("add a retry around $rfunc", ("$rfunc",), "Added the retry around $rfunc."),
    TodoTemplate(
        "wire the --$flag option into the CLI",
        ("--$flag",),
        "The --$flag option is wired into the CLI now.",
    ),
    TodoTemplate(
        "add a changelog entry for the $noun change",
        ("changelog entry",),
        "Changelog entry is in.",
    ),
    TodoTemplate(
        "cover the empty-input case in $func",
        ("empty-input case",),
        "The empty-input case is covered now.",
    ),
    TodoTemplate("document $renv in the README", ("$renv",), "Documented $renv in the README."),
    TodoTemplate(
        "emit a $metric counter when the lookup misses",
        ("$metric",),
        "$metric is emitted on every miss now.",
    ),
    TodoTemplate(
        "delete the ${noun}_legacy shim once callers are migrated",
        ("${noun}_legacy shim",),
        "The ${noun}_legacy shim is gone.",
    ),
    TodoTemplate(
        "add an index on $table.$column",
        ("$table.$column",),
        "Index on $table.$column added.",
    ),
    TodoTemplate("bump the schema version constant", ("schema version",), "Schema version bumped."),
    TodoTemplate(
        "write a regression test for the $noun rounding bug",
        ("rounding bug",),
        "Regression test for the rounding bug is in.",
    ),
    TodoTemplate(
        "make the error message for an expired $noun link friendlier",
        ("expired $noun link",),
        "The expired $noun link message is friendlier now.",
    ),
    TodoTemplate(
        "benchmark the new path against the old one on the $rows-row fixture",
        ("$rows-row fixture",),
        "Benchmarked on the $rows-row fixture: the new path is faster.",
    ),
    TodoTemplate("log a warning when $rfunc falls back", ("$rfunc",), "$rfunc warns now."),
    TodoTemplate(
        "ask ops to raise the $svc quota before rollout",
        ("$svc quota",),
        "Ops confirmed the $svc quota bump.",
    ),
)

TODO_FLAGS: tuple[str, ...] = (
    "since-date", "max-age", "include-archived", "output-format", "no-cache", "batch-limit",
)  # fmt: skip
TODO_ENVS: tuple[str, ...] = ("CACHE_DIR", "MAX_WORKERS", "FEATURE_FLAGS", "SENTRY_DSN")
TODO_METRICS: tuple[str, ...] = ("lookup_misses", "cache_misses", "fallbacks", "stale_reads")

TODO_CUED: tuple[str, ...] = ("TODO: $task.",)
TODO_PLAIN: tuple[str, ...] = (
    "Still left: $task.",
    "We'll also need to $task.",
    "One thing I haven't done yet: $task.",
    "Before wrapping up I still have to $task.",
    "Remaining after this: $task.",
)


@dataclass(frozen=True)
class ValueTemplate:
    key: str
    unit: str
    values: tuple[str, ...]


CHANGED_VALUES: tuple[ValueTemplate, ...] = (
    ValueTemplate("request timeout", "$v seconds", ("20", "30", "45", "60", "90")),
    ValueTemplate("batch size", "$v records", ("250", "500", "1000", "2000", "5000")),
    ValueTemplate("cache TTL", "$v minutes", ("10", "15", "30", "45", "90")),
    ValueTemplate("retry limit", "$v attempts", ("3", "4", "6", "8")),
    ValueTemplate("page size", "$v items per page", ("25", "50", "100", "200")),
    ValueTemplate("rate limit", "$v requests per minute", ("60", "120", "300", "600")),
    ValueTemplate("worker count", "$v workers", ("2", "4", "8", "16")),
    ValueTemplate("default region", "$v", ("eu-west-1", "us-east-2", "eu-central-1")),
    ValueTemplate("log retention", "$v days", ("7", "14", "30", "90")),
    ValueTemplate("connection pool size", "$v connections", ("5", "10", "20", "40")),
    ValueTemplate("flush interval", "$v milliseconds", ("200", "750", "1500", "3000")),
)

VALUE_SET_CUED: tuple[str, ...] = ("NOTE: the $key should be $old.",)
VALUE_SET_PLAIN: tuple[str, ...] = (
    "Set the $key to $old.",
    "Use a $key of $old for now.",
    "The $key should be $old.",
)
VALUE_CHANGE_CUED: tuple[str, ...] = (
    "NOTE: change of plan on the $key — make it $new instead of $old.",
)
VALUE_CHANGE_PLAIN: tuple[str, ...] = (
    "Actually, make the $key $new; $reason.",
    "Sorry, correction: the $key should be $new, not $old.",
    "Change the $key to $new please, $reason.",
)
VALUE_CHANGE_REASONS: tuple[str, ...] = (
    "ops asked for it after looking at the dashboards",
    "the staging numbers came back",
    "that's what the other services use",
    "we got paged about it last week",
)


@dataclass(frozen=True)
class ErrorTemplate:
    """An exception as it shows up in a traceback, and the line of code that raises it."""

    line: str
    probe: str
    raising: str


ERRORS: tuple[ErrorTemplate, ...] = (
    ErrorTemplate("KeyError: '$key'", "KeyError: '$key'", "value = payload['$key']"),
    ErrorTemplate(
        "AttributeError: 'NoneType' object has no attribute '$attr'",
        "no attribute '$attr'",
        "return current.$attr",
    ),
    ErrorTemplate(
        "TypeError: $func() got an unexpected keyword argument '$kw'",
        "unexpected keyword argument '$kw'",
        "return $func(raw, $kw=True)",
    ),
    ErrorTemplate(
        "ValueError: invalid literal for int() with base 10: '$lit'",
        "with base 10: '$lit'",
        "count = int(raw['$field'])",
    ),
    ErrorTemplate(
        "sqlite3.OperationalError: no such table: $rtable",
        "no such table: $rtable",
        "rows = conn.execute(QUERY, params).fetchall()",
    ),
    ErrorTemplate(
        "ModuleNotFoundError: No module named '$rmod'",
        "No module named '$rmod'",
        "module = importlib.import_module(name)",
    ),
    ErrorTemplate(
        "ImportError: cannot import name '$rname' from '$pkg.$module'",
        "cannot import name '$rname'",
        "from .$module import $rname",
    ),
    ErrorTemplate(
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "JSONDecodeError",
        "return json.loads(body)",
    ),
    ErrorTemplate(
        "FileNotFoundError: [Errno 2] No such file or directory: '$rpath'",
        "No such file or directory: '$rpath'",
        "with open(path, encoding='utf-8') as fh:",
    ),
    ErrorTemplate(
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x$hexbyte in position $pos: "
        "invalid start byte",
        "can't decode byte 0x$hexbyte",
        "text = raw.decode('utf-8')",
    ),
    ErrorTemplate(
        "AssertionError: assert $got == $want",
        "assert $got == $want",
        "assert total == expected",
    ),
    ErrorTemplate(
        "ZeroDivisionError: division by zero", "ZeroDivisionError", "ratio = hits / total"
    ),
    ErrorTemplate(
        "RecursionError: maximum recursion depth exceeded while calling a Python object",
        "maximum recursion depth",
        "return $func(merged[key], value)",
    ),
    ErrorTemplate(
        "PermissionError: [Errno 13] Permission denied: '$rpath'",
        "Permission denied: '$rpath'",
        "path.write_text(body, encoding='utf-8')",
    ),
    ErrorTemplate(
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ${Cls}Payload",
        "validation error for ${Cls}Payload",
        "return ${Cls}Payload.model_validate(raw)",
    ),
    ErrorTemplate(
        "httpx.ConnectError: [Errno 111] Connection refused",
        "Connection refused",
        "response = client.get(url, timeout=timeout)",
    ),
)

ERROR_KEYS: tuple[str, ...] = (
    "session_id", "tenant_ref", "retry_after", "etag", "cursor_token", "billing_period",
    "trace_parent", "locale_hint", "shard_key",
)  # fmt: skip
ERROR_ATTRS: tuple[str, ...] = ("expires_at", "owner_id", "parent_ref", "last_seen", "quota")
ERROR_KWARGS: tuple[str, ...] = ("strict", "retries", "dry_run", "tz", "chunk_size")
ERROR_LITERALS: tuple[str, ...] = ("n/a", "12.5", "3,200", "12px", "none")
ERROR_MODULES: tuple[str, ...] = ("zstandard", "backports.zoneinfo", "ujson", "cchardet")
ERROR_HEXBYTES: tuple[str, ...] = ("ff", "c3", "e9", "a0", "9c")

ERROR_OPEN_CUED: tuple[str, ...] = (
    "NOTE: `$probe` in $test is pre-existing and unrelated to this change; leaving it open.",
    "NOTE: $test still fails with `$probe`. Not caused by this work, so I'm not touching it.",
)
ERROR_OPEN_PLAIN: tuple[str, ...] = (
    "That failure in $test predates my change, so I'll leave it alone.",
    "One unrelated failure ($test). Not mine; moving on.",
    "The rest is fine. $test fails on main too, I'm not going to chase it now.",
)
ERROR_DIAGNOSIS: tuple[str, ...] = (
    "$test fails inside $func. Fixing that.",
    "The failure is in $func; the input it gets in that test isn't handled.",
    "That's a real bug in $func, not a test problem.",
)
ERROR_FIXED: tuple[str, ...] = (
    "Passing now.",
    "Fixed; $test passes.",
    "Green again.",
)


@dataclass(frozen=True)
class CommandTemplate:
    command: str
    output: str  # the name of the renderer that produces its output


COMMANDS: tuple[CommandTemplate, ...] = (
    CommandTemplate("pytest $test -x -q -k '$kexpr'", "pytest_quiet"),
    CommandTemplate("pytest -q --durations=5 $test", "pytest_durations"),
    CommandTemplate("ruff check src/$pkg --select I,UP --fix", "ruff_fixed"),
    CommandTemplate("mypy --strict src/$pkg/$module.py", "mypy_ok"),
    CommandTemplate("python -m $pkg.tools.$tool --since $date --dry-run", "script_lines"),
    CommandTemplate("docker compose up -d $svc", "compose_up"),
    CommandTemplate("make $target", "make_target"),
    CommandTemplate("python scripts/$script.py --limit $n --dry-run", "script_lines"),
    CommandTemplate("git stash push -m '$stashmsg'", "stash"),
    CommandTemplate("tox -e $toxenv", "tox"),
    CommandTemplate("sqlite3 var/$pkg.db '.schema $table'", "sqlite_schema"),
)
COMMAND_TOOLS: tuple[str, ...] = ("reindex", "backfill", "vacuum_orphans", "replay_events")
COMMAND_SERVICES: tuple[str, ...] = ("postgres", "minio", "localstack", "mailhog")
COMMAND_TARGETS: tuple[str, ...] = ("integration-test", "schema-check", "bench-smoke")
COMMAND_TOXENVS: tuple[str, ...] = ("py38-min", "lint-strict", "docs-build")
STASH_MESSAGES: tuple[str, ...] = ("wip before rebase", "half-done cache experiment")

COMMAND_CUED: tuple[str, ...] = (
    "NOTE: `$command` is the quick check for this part; rerun it after each edit.",
    "NOTE: running `$command` before going further.",
)
COMMAND_PLAIN: tuple[str, ...] = (
    "Running the focused check.",
    "Let me try that.",
    "",
)


@dataclass(frozen=True)
class IdentifierTemplate:
    cued: str
    plain: str
    probe: str


USER_IDENTIFIERS: tuple[IdentifierTemplate, ...] = (
    IdentifierTemplate(
        "NOTE: the tracking ticket is $ticket, reference it in the PR description.",
        "This is for $ticket, please reference it in the PR description.",
        "$ticket",
    ),
    IdentifierTemplate(
        "NOTE: the staging API listens on port $port.",
        "Staging runs the API on port $port if you need to poke at it.",
        "port $port",
    ),
    IdentifierTemplate(
        "NOTE: production is pinned to $pindep $pinver.",
        "Production is pinned to $pindep $pinver, so don't rely on anything newer.",
        "$pindep $pinver",
    ),
    IdentifierTemplate(
        "NOTE: use the test tenant $tenant for manual checks.",
        "For manual checks use the test tenant $tenant.",
        "$tenant",
    ),
    IdentifierTemplate(
        "NOTE: base the work on release/$release.",
        "Please base this on the release/$release branch.",
        "release/$release",
    ),
)
TICKET_PREFIXES: tuple[str, ...] = ("JIRA", "PLAT", "OPS", "CORE", "ENG")
PINNED_DEPS: tuple[str, ...] = ("sqlalchemy", "celery", "boto3", "marshmallow", "psycopg2")

FOUND_IDENTIFIER_CUED: tuple[str, ...] = (
    "NOTE: the sandbox account is $ident — using it for the manual checks.",
)
FOUND_IDENTIFIER_PLAIN: tuple[str, ...] = (
    "The sandbox account is $ident; I'll use that for the manual checks.",
    "So $ident is the sandbox account; good to know for the manual checks.",
)
BURIED_KEYS: tuple[tuple[str, str], ...] = (
    ("request_id", "req"),
    ("deployment_id", "dep"),
    ("trace_id", "trc"),
    ("idempotency_key", "idem"),
    ("batch_id", "bat"),
)

FILE_CUED: dict[str, tuple[str, ...]] = {
    "file_read": ("NOTE: $path is where the $noun parsing lives; reading it for context.",),
    "file_modified": ("NOTE: modifying $path — $what.",),
    "file_created": ("NOTE: new file $path to hold $what.",),
    "file_deleted": ("NOTE: $path is dead code now, deleting it.",),
}
FILE_PLAIN: dict[str, tuple[str, ...]] = {
    "file_read": ("", "Reading one more file for context."),
    "file_modified": ("", "Now the change itself.", "Applying the change."),
    "file_created": ("", "Putting this in its own module."),
    "file_deleted": ("Nothing imports it any more, so it can go.", ""),
}
PROSE_BEFORE_DELETE: tuple[str, ...] = (
    "Checking that nothing imports $stem any more.",
    "Is $stem still used anywhere?",
)
EDIT_REWRITES: tuple[tuple[str, str], ...] = (
    ("logger.debug", "logger.info"),
    ("logger.info", "logger.debug"),
    ("timeout=timeout", "timeout=timeout, follow_redirects=True"),
    (".strip()", ".strip().lower()"),
    ("fetchall()", "fetchmany(500)"),
    ("min(2**attempt, 30)", "min(2**attempt, 60)"),
    ("for item in items:", "for item in list(items):"),
    ("merged = dict(current)", "merged = {**current}"),
    ("if not rows:", "if rows is None or not rows:"),
    ("if not values:", "if values is None or len(values) == 0:"),
    ("del _ENTRIES[key]", "_ENTRIES.pop(key, None)"),
    ("return payload", "return dict(payload)"),
    ("raise last_error", "raise last_error from None"),
)
EDIT_COMMENTS: tuple[str, ...] = (
    "upstream sends ids with stray whitespace",
    "keep the order stable for the snapshot tests",
    "see the incident notes from last week",
    "cheap guard; this path is hot",
    "the old client returned None here",
    "matches what the billing export expects",
)
FILE_EDIT_PURPOSES: tuple[str, ...] = (
    "passing the limit through to the query",
    "reusing the shared retry helper",
    "normalizing ids before the lookup",
    "returning early on empty input",
    "logging the upstream status on failure",
)
CREATED_MODULE_NAMES: tuple[str, ...] = (
    "read_cache", "export_csv", "idempotency", "retry_policy", "audit_log", "paginate",
    "snapshots", "backoff",
)  # fmt: skip
DELETED_MODULE_NAMES: tuple[str, ...] = (
    "compat_legacy", "old_sync", "shims", "deprecated_helpers", "v1_adapter",
)  # fmt: skip
