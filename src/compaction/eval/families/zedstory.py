"""zedstory-style: a Zed agent-panel session in native function calls, with a story of its own.

Zed's own agent works a plain-JavaScript Express service (Jest, ESLint, node-postgres) through
its built-in tools, as OpenAI-style function calls: `terminal` {command, cd}, answered with
the output in a fenced block ("Command executed successfully." when there is none, and
`Command "…" failed with exit code N.` before the block when it fails); `read_file` {path,
start_line?, end_line?}, answered with the text; `edit_file` {display_description, path,
mode: edit / create / overwrite} — the new text is written by a second model and not part
of the call, the result shows what changed ("Edited <path>:" and a ```diff block);
`delete_path` {path} ("Deleted <path>"), `create_directory` {path} ("Created directory
<path>"), `find_path` {glob} ("Found N total matches."), `grep` {regex, include_pattern}
("Found N matches:" with "## Matches in" / "### L…" blocks), `list_directory` {path}
("# Folders:" / "# Files:"), `diagnostics` {path} ("error at line N: …"), `thinking`
{content} ("Finished thinking.") and `fetch` {url}. Paths start at the worktree's root
name. Zed has no to-do tool: the plan is a checkbox list in the assistant's replies, and it
changes as the work goes.

The story: a ferry-booking API gets idempotent POST /bookings (payment retries from the
mobile app double-book seats). The user's first message sets how long keys are kept (hours)
and how long a duplicate waits for the in-flight request (ms), and three rules in prose (a
forbidden package, a Node version, the header that marks a replayed response). The assistant
edits the frozen v1 route, is sent to the current one and reverts with git; the design goes
from an in-process Map to a unique client_token column to a key table that stores the
response; the retention changes twice (the second time without naming it), the wait once;
the user forbids a vendored directory, drops a to-do, and asks which commit staging runs
(answered from the health endpoint). A Jest TypeError and an ESLint no-undef are fixed, the
old dedupe cache is deleted, and the last Jest run still has one failure. The final message
names no fact.
"""

from __future__ import annotations

import difflib
import random

from compaction.eval.families._base import (
    _WORDS,
    CHARS_PER_TOKEN,
    Session,
    finish_session,
    hexid,
    ident,
    log_lines,
    lower_camel,
)
from compaction.eval.sessions import EvalSession

FAMILY = "zedstory-style"

_SYSTEM = "\n".join(
    (
        "You are a highly skilled software engineer with extensive knowledge in many "
        "programming languages, frameworks, design patterns, and best practices.",
        "",
        "## Communication",
        "",
        "1. Be conversational but professional.",
        "2. Refer to the user in the second person and yourself in the first person.",
        "3. Format your responses in markdown. Use backticks to format file, directory, "
        "function, and class names.",
        "4. NEVER lie or make things up.",
        "5. Refrain from apologizing all the time when results are unexpected.",
        "",
        "## Tool Use",
        "",
        "1. Make sure to adhere to the tools schema.",
        "2. Provide every required argument.",
        "3. DO NOT use tools to access items that are already available in the context section.",
        "4. Use only the tools that are currently available.",
        "5. DO NOT use a tool that is not available just because it appears in the conversation.",
        "",
        "## Searching and Reading",
        "",
        "If you are unsure how to fulfill the user's request, gather more information with "
        "tool calls and/or clarifying questions. Prefer `grep` for content and `find_path` "
        "for file names. Paths must begin with one of the project's root directories.",
        "",
        "## Fixing Diagnostics",
        "",
        "1. Make 1-2 attempts at fixing diagnostics, then defer to the user.",
        "2. Never simplify code you've written just to solve diagnostics.",
        "",
        "## System Information",
        "",
        "Operating System: {os}",
        "Default Shell: {shell}",
        "",
        "## Project",
        "",
        "The user has opened a project that contains the following root directories:",
        "",
        "- `{root}`",
        "",
        "There are rules that apply to these root directories:",
        "",
        "`{root}/.rules`:",
        "```",
        "Plain JavaScript (CommonJS), no TypeScript. Run `npm test` before you say you're done.",
        "```",
    )
)

_APPS = ("tidewater", "saltmarsh", "gullwing", "capstan", "harborlight", "skerry")
_PACKAGES = ("ioredis", "keyv", "lru-cache", "node-cache")
_NODES = ("18", "20")
_REPLAY_HEADERS = ("Idempotent-Replayed", "Idempotency-Replay", "X-Replayed-Response")
_TABLES = ("idempotency_keys", "request_keys", "replay_keys")
_MISMATCH = ("key_payload_mismatch", "idempotency_key_reused", "fingerprint_mismatch")
_VENDORED = ("stripe-shim", "adyen-client", "pos-bridge", "fares-sdk")
_OWNERS = ("the payments guild", "the fares team", "platform", "the POS squad")


def _js_file(rng: random.Random, lines: int) -> str:
    """A CommonJS module of about `lines` lines, made of filler words only."""
    out = ["'use strict';", ""]
    names = []
    while len(out) < lines:
        name = lower_camel(ident(rng))
        a, b = rng.sample(_WORDS, 2)
        names.append(name)
        out += [
            f"async function {name}({a}, {b} = {{}}) {{",
            f"  const key = {b}.{rng.choice(_WORDS)} ?? '{rng.choice(_WORDS)}';",
            f"  const found = {a}.items.filter((x) => x.{b} === key);",
            f"  return found.map((x) => ({{ id: x.id, {rng.choice(_WORDS)}: x.{b} }}));",
            "}",
            "",
        ]
    out.append(f"module.exports = {{ {', '.join(names)} }};")
    return "\n".join(out[:lines] + out[-1:])


def _diff(old: str, new: str) -> str:
    """The hunks of a unified diff (no file headers), as Zed shows an edit."""
    lines = list(difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3))
    return "\n".join(lines[2:])


class _Zed:
    """Zed's agent tools, as they appear in the thread."""

    def __init__(self, s: Session, root: str) -> None:
        self.s = s
        self.root = root
        self.files: dict[str, str] = {}

    def p(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def terminal(
        self, command: str, output: str, *, code: int = 0, text: str = "", filler: bool = False
    ) -> None:
        if code and output:
            result = f'Command "{command}" failed with exit code {code}.\n\n```\n{output}\n```'
        elif code:
            result = f'Command "{command}" failed with exit code {code}.'
        elif output:
            result = f"```\n{output}\n```"
        else:
            result = "Command executed successfully."
        self.s.call("terminal", {"command": command, "cd": self.root}, result, text=text,
                    filler=filler)  # fmt: skip

    def read(
        self,
        rel: str,
        content: str,
        *,
        lines: tuple[int, int] | None = None,
        text: str = "",
        filler: bool = False,
    ) -> None:
        args: dict[str, object] = {"path": self.p(rel)}
        shown = content
        if lines:
            args["start_line"], args["end_line"] = lines
            shown = "\n".join(content.split("\n")[lines[0] - 1 : lines[1]])
        if not filler:
            self.files[rel] = content
        self.s.call("read_file", args, shown, text=text, filler=filler)

    def edit(self, rel: str, what: str, new: str, *, mode: str = "edit", text: str = "") -> None:
        old = "" if mode == "create" else self.files.get(rel, "")
        self.files[rel] = new
        args = {"display_description": what, "path": self.p(rel), "mode": mode}
        result = f"Edited {self.p(rel)}:\n\n```diff\n{_diff(old, new)}\n```"
        self.s.call("edit_file", args, result, text=text)

    def replace(self, rel: str, what: str, old: str, new: str, *, text: str = "") -> None:
        current = self.files[rel]
        assert old in current, (rel, old)
        self.edit(rel, what, current.replace(old, new, 1), text=text)

    def delete(self, rel: str, *, text: str = "") -> None:
        self.files.pop(rel, None)
        self.s.call("delete_path", {"path": self.p(rel)}, f"Deleted {self.p(rel)}", text=text)

    def mkdir(self, rel: str, *, text: str = "") -> None:
        self.s.call("create_directory", {"path": self.p(rel)},
                    f"Created directory {self.p(rel)}", text=text)  # fmt: skip

    def find(self, glob: str, found: list[str], *, text: str = "") -> None:
        result = f"Found {len(found)} total matches.\n" + "\n".join(self.p(f) for f in found)
        self.s.call("find_path", {"glob": glob}, result, text=text)

    def grep(
        self,
        regex: str,
        include: str,
        hits: list[tuple[str, int, str]],
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """Hits are (path, first line, snippet)."""
        out = []
        last = ""
        for rel, line, snippet in hits:
            if rel != last:
                out.append(f"\n## Matches in {self.p(rel)}\n")
                last = rel
            end = line + snippet.count("\n")
            label = f"L{line}" if end == line else f"L{line}-{end}"
            out.append(f"### {label}\n```\n{snippet}\n```\n")
        result = f"Found {len(hits)} matches:\n" + "\n".join(out)
        args = {"regex": regex, "include_pattern": include}
        self.s.call("grep", args, result, text=text, filler=filler)

    def ls(self, rel: str, folders: list[str], files: list[str], *, filler: bool = False) -> None:
        out = ""
        if folders:
            out += "# Folders:\n" + "\n".join(self.p(f"{rel}/{f}") for f in folders) + "\n"
        if files:
            out += "\n# Files:\n" + "\n".join(self.p(f"{rel}/{f}") for f in files) + "\n"
        self.s.call("list_directory", {"path": self.p(rel)}, out, filler=filler)

    def diagnostics(self, rel: str, problems: list[tuple[str, int, str]]) -> None:
        if problems:
            result = "\n".join(f"{sev} at line {n}: {msg}" for sev, n, msg in problems)
        else:
            result = "File doesn't have errors or warnings!"
        self.s.call("diagnostics", {"path": self.p(rel)}, result)

    def think(self, content: str) -> None:
        self.s.call("thinking", {"content": content}, "Finished thinking.")

    def fetch(self, url: str, body: str, *, text: str = "") -> None:
        self.s.call("fetch", {"url": url}, body, text=text)


def _jest(
    rng: random.Random,
    header: str,
    suites: list[str],
    total: int,
    failures: list[tuple[str, str, list[str]]],
) -> str:
    """Jest's default reporter: failures are (suite, test title, detail lines)."""
    failing = {suite for suite, _, _ in failures}
    out = [header, ""]
    for suite in suites:
        out.append(f"{'FAIL' if suite in failing else 'PASS'} {suite}")
        for fsuite, title, detail in failures:
            if fsuite == suite:
                out += ["", f"  \u25cf {title}", ""] + [f"    {x}" if x else "" for x in detail]
                out.append("")
    failed = len(failures)
    bad_suites = len(failing)
    out.append("")
    if failed:
        out.append(f"Test Suites: {bad_suites} failed, {len(suites) - bad_suites} passed, "
                   f"{len(suites)} total")  # fmt: skip
        out.append(f"Tests:       {failed} failed, {total - failed} passed, {total} total")
    else:
        out.append(f"Test Suites: {len(suites)} passed, {len(suites)} total")
        out.append(f"Tests:       {total} passed, {total} total")
    out += [
        "Snapshots:   0 total",
        f"Time:        {rng.randint(2, 6)}.{rng.randint(100, 999)} s",
        "Ran all test suites.",
    ]
    return "\n".join(out)


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"zedstory-{seed}")
    app = rng.choice(_APPS)
    root = f"{app}-api"
    package = rng.choice(_PACKAGES)
    node = rng.choice(_NODES)
    replay = rng.choice(_REPLAY_HEADERS)
    table = rng.choice(_TABLES)
    mismatch = rng.choice(_MISMATCH)
    vendored = f"src/vendor/{rng.choice(_VENDORED)}"
    owner = rng.choice(_OWNERS)
    request_header = f"X-{app.title()}-Request-Id"
    t0, t1, t2 = rng.choice((12, 18, 24)), rng.choice((36, 48)), rng.choice((72, 96))
    w0, w1 = rng.choice((250, 300, 400)), rng.choice((1200, 1500, 2500))
    pods = rng.choice((3, 4, 6))
    version = f"1.{rng.randint(10, 29)}.{rng.randint(0, 9)}"
    deployed = hexid(rng)
    pr = rng.randint(180, 940)
    branch = f"idempotent-bookings-{rng.randint(10, 99)}"

    wrong = "src/routes/bookings.v1.js"
    route = "src/routes/bookings.js"
    config = "src/config.js"
    app_js = "src/app.js"
    middleware = "src/middleware/idempotency.js"
    migration = f"migrations/2026111{rng.randint(0, 9)}_{table}.sql"
    test_file = "test/idempotency.test.js"
    fake_pool = "test/helpers/fakePool.js"
    old_cache = "src/lib/dedupeCache.js"
    old_cache_test = "test/dedupeCache.test.js"
    test_cmd = "npm test -- --runInBand"
    lint_cmd = "npx eslint src test"

    s = Session(rng, _SYSTEM.format(os="macos", shell="/bin/zsh", root=root))
    z = _Zed(s, root)
    # The thread's JSON is a little denser than the other families' (short fenced results).
    target = tokens * CHARS_PER_TOKEN * 1.06

    def pad(fraction: float) -> None:
        while s.chars < target * fraction:
            kind = rng.random()
            if kind < 0.55:
                folder = rng.choice(("src/services", "src/lib", "src/models", "src/jobs"))
                rel = f"{folder}/{lower_camel(ident(rng))}.js"
                body = _js_file(rng, rng.randint(40, 90))
                if rng.random() < 0.4:
                    n = body.count("\n") + 1
                    z.read(rel, body, lines=(1, rng.randint(n // 2, n)), filler=True)
                else:
                    z.read(rel, body, filler=True)
            elif kind < 0.78:
                z.terminal("tail -n 60 logs/app.log", log_lines(rng, 60), filler=True)
            elif kind < 0.9:
                folder = rng.choice(("src/services", "src/lib", "src/models"))
                files = [f"{lower_camel(ident(rng))}.js" for _ in range(rng.randint(8, 16))]
                z.ls(folder, [], sorted(files), filler=True)
            else:
                word = rng.choice(_WORDS)
                hits = [
                    (f"src/services/{lower_camel(ident(rng))}.js", rng.randint(3, 80),
                     f"  const found = {word}.items.filter((x) => x.{rng.choice(_WORDS)});")
                    for _ in range(rng.randint(3, 7))
                ]  # fmt: skip
                z.grep(f"{word}\\.items", "**/*.js", hits, filler=True)

    def plan(items: list[str], state: dict[str, str], intro: str) -> None:
        lines = []
        for item in items:
            if state[item] == "done":
                lines.append(f"- [x] {item}")
            elif state[item] == "dropped":
                lines.append(f"- ~~{item}~~ (dropped)")
            else:
                lines.append(f"- [ ] {item}")
        s.say(intro + "\n\n" + "\n".join(lines))

    # --- the task ------------------------------------------------------------------------------
    s.user(
        f"The mobile app retries POST /bookings whenever the payment sheet hangs, and we end "
        f"up with two or three bookings for the same seat. Make that endpoint idempotent: "
        f"same key, same result. Hold on to the keys for {t0} hours, and if a duplicate comes "
        f"in while the first one is still running, let it wait {w0} ms for the first to "
        f"finish before giving up with a 409.\n\n"
        f"Things I care about:\n"
        f"* no {package}, and nothing else new in package.json for this. Postgres is already "
        f"there, use it.\n"
        f"* we deploy on Node {node} and that won't change before spring.\n"
        f"* when you answer with a stored response, put `{replay}: true` on it. The app's "
        f"analytics look for exactly that header."
    )
    s.fact("constraint", f"no {package} or other new dependency", (package,))
    s.fact("constraint", f"runs on Node {node}", (f"Node {node}",))
    s.fact("constraint", f"replayed responses carry {replay}: true", (f"{replay}: true",))
    items = [
        "Find where POST /bookings is handled",
        "Store keys together with the response they produced",
        "Middleware: claim the key, replay a hit, make duplicates wait",
        "Wire it into POST /bookings",
        "Prometheus counter for replays",
        "Jest + ESLint",
    ]
    state = dict.fromkeys(items, "open")
    plan(items, state, "Here's how I'd go about it:")
    package_json = "\n".join([
        "{",
        f'  "name": "{root}",',
        f'  "version": "{version}",',
        '  "private": true,',
        '  "main": "src/server.js",',
        f'  "engines": {{ "node": ">={node}" }},',
        '  "scripts": {',
        '    "start": "node src/server.js",',
        '    "test": "jest",',
        '    "lint": "eslint src test",',
        '    "migrate": "node scripts/migrate.js"',
        "  },",
        '  "dependencies": {',
        '    "express": "^4.19.2",',
        '    "pg": "^8.11.5",',
        '    "pino-http": "^9.0.0",',
        '    "zod": "^3.23.8"',
        "  },",
        '  "devDependencies": {',
        '    "eslint": "^8.57.0",',
        '    "jest": "^29.7.0",',
        '    "supertest": "^7.0.0"',
        "  }",
        "}",
    ])  # fmt: skip
    z.read("package.json", package_json)
    s.fact("file_read", "read package.json", ("package.json",), required=False)
    z.grep("bookings|dedupe", "**/*.js", [
        (app_js, 14, "app.use('/bookings', require('./routes/bookings'));"),
        (app_js, 15, "app.use('/v1/bookings', require('./routes/bookings.v1'));"),
        (wrong, 9, "router.post('/', async (req, res, next) => {"),
        (route, 11, "router.post('/', validate(BookingInput), async (req, res, next) => {"),
        (old_cache, 3, "const seen = new Map();"),
        (old_cache_test, 1, "const dedupe = require('../src/lib/dedupeCache');"),
    ])  # fmt: skip
    pad(0.07)
    route_text = "\n".join([
        "'use strict';",
        "",
        "const express = require('express');",
        "const { pool } = require('../db/pool');",
        "const { validate } = require('../lib/validate');",
        "const { BookingInput } = require('../schemas/booking');",
        "const bookings = require('../services/bookings');",
        "",
        "const router = express.Router();",
        "",
        "router.post('/', validate(BookingInput), async (req, res, next) => {",
        "  try {",
        f"    const requestId = req.get('{request_header}');",
        "    const booking = await bookings.create(pool, req.body, { requestId });",
        "    res.status(201).json(booking);",
        "  } catch (err) {",
        "    next(err);",
        "  }",
        "});",
        "",
        "module.exports = router;",
    ])  # fmt: skip
    z.read(route, route_text)
    s.say(
        f"The app already sends `{request_header}` with every booking POST, and it stays the "
        "same across the app's retries, so that header can be the key; no client change "
        "needed."
    )
    s.fact("identifier", f"the key is the {request_header} header", (request_header,))
    pad(0.14)

    # --- the wrong file -----------------------------------------------------------------------
    v1_text = "\n".join([
        "'use strict';",
        "",
        "// Kiosk build 3.x only. Superseded by ./bookings.js.",
        "const express = require('express');",
        "const bookings = require('../services/bookings');",
        "",
        "const router = express.Router();",
        "",
        "router.post('/', async (req, res, next) => {",
        "  try {",
        "    const booking = await bookings.createLegacy(req.body);",
        "    res.status(201).json(booking);",
        "  } catch (err) {",
        "    next(err);",
        "  }",
        "});",
        "",
        "module.exports = router;",
    ])  # fmt: skip
    z.read(wrong, v1_text)
    z.replace(
        wrong,
        "Remember booking results per request key in an in-process Map",
        "router.post('/', async (req, res, next) => {\n  try {",
        "const recent = new Map();\n\nrouter.post('/', async (req, res, next) => {\n  try {\n"
        "    const key = req.get('Idempotency-Key');\n"
        "    if (key && recent.has(key)) return res.status(200).json(recent.get(key));",
        text=(
            "First cut: remember each key's booking in an in-process Map inside the route "
            "and expire entries with a timer."
        ),
    )
    s.user(
        f"Wrong file. {wrong} is only there for the old kiosk build and we don't change it "
        f"any more. Everything the app calls goes through {route}."
    )
    z.terminal(f"git checkout -- {wrong}", "Updated 1 path from the index",
               text="Putting the v1 route back as it was.")  # fmt: skip
    s.user(
        f"Also, the Map idea doesn't fly anyway: we run {pods} pods behind the load "
        "balancer, and a retry usually lands on a different one."
    )
    z.think(
        "Cross-pod means the dedupe has to live in Postgres. Cheapest option: a unique "
        "column on bookings filled from the request header, let the insert conflict."
    )
    first_migration = "\n".join([
        "ALTER TABLE bookings ADD COLUMN client_token text;",
        "CREATE UNIQUE INDEX CONCURRENTLY bookings_client_token_key",
        "  ON bookings (client_token) WHERE client_token IS NOT NULL;",
    ])  # fmt: skip
    z.edit(migration, "Add a unique client_token column to bookings", first_migration,
           mode="create", text=(
               "Then the database does the deduping: a `client_token` column on `bookings` "
               "with a unique index, and the insert becomes `INSERT … ON CONFLICT "
               "(client_token) DO NOTHING`."))  # fmt: skip
    s.user(
        "That stops the double insert, but the retry then gets nothing back. The app needs "
        "the very same 201 and booking JSON the first request got, otherwise it shows the "
        "payment error screen."
    )
    s.say(
        f"Right, so the response has to be kept too. New design: a `{table}` table with one "
        "row per key: the key, a SHA-256 fingerprint of method, path and body, the status "
        "and body of the response, and a `locked_until` while the first request is still "
        "running. The middleware inserts the row to claim the key; on a conflict it either "
        "replays the stored response or waits on the lock. The bookings table stays as it "
        "is."
    )
    s.fact(
        "decision",
        f"keys and their responses live in a {table} table",
        (table,),
        stale=("in-process Map", "client_token"),
    )
    s.say(
        f"And if a key comes back with a different body, that's a client bug, not a retry: "
        f"it gets a 422 with `{mismatch}` and nothing is replayed."
    )
    s.fact("decision", f"a reused key with another body is refused with {mismatch}", (mismatch,))
    migration_text = "\n".join([
        f"CREATE TABLE {table} (",
        "  key           text PRIMARY KEY,",
        "  fingerprint   char(64) NOT NULL,",
        "  status_code   smallint,",
        "  response_body jsonb,",
        "  locked_until  timestamptz,",
        "  created_at    timestamptz NOT NULL DEFAULT now()",
        ");",
        f"CREATE INDEX {table}_created_at_idx ON {table} (created_at);",
    ])  # fmt: skip
    z.edit(migration, f"Create the {table} table instead", migration_text, mode="overwrite")
    s.fact("file_created", "the migration", (migration,))
    pad(0.26)

    # --- the middleware ----------------------------------------------------------------------
    config_text = "\n".join([
        "'use strict';",
        "",
        "module.exports = {",
        "  port: Number(process.env.PORT ?? 8080),",
        "  databaseUrl: process.env.DATABASE_URL,",
        "  logLevel: process.env.LOG_LEVEL ?? 'info',",
        "};",
    ])  # fmt: skip
    z.read(config, config_text)
    z.replace(config, "Add idempotency settings", "  logLevel: process.env.LOG_LEVEL ?? 'info',",
              "  logLevel: process.env.LOG_LEVEL ?? 'info',\n"
              f"  idempotency: {{ ttlHours: {t0}, lockWaitMs: {w0} }},")  # fmt: skip
    s.fact("file_modified", "the settings live in the config", (config,))
    z.mkdir("src/middleware")
    mw_text = "\n".join([
        "'use strict';",
        "",
        "const { createHash } = require('node:crypto');",
        "const { setTimeout: sleep } = require('node:timers/promises');",
        "const config = require('../config');",
        "",
        f"const CLAIM = `INSERT INTO {table} (key, fingerprint, locked_until)",
        "  VALUES ($1, $2, now() + $3 * interval '1 millisecond')",
        "  ON CONFLICT (key) DO NOTHING RETURNING key`;",
        "",
        "function withIdempotency(pool, header) {",
        "  return async (req, res, next) => {",
        "    const key = req.get(header);",
        "    if (!key) return next();",
        "    const fingerprint = createHash('sha256')",
        "      .update(`${req.method} ${req.originalUrl} ${JSON.stringify(req.body)}`)",
        "      .digest('hex');",
        "    const { lockWaitMs } = config.idempotency;",
        "    const claimed = await pool.query(CLAIM, [key, fingerprint, lockWaitMs]);",
        "    if (claimed.rows.length === 0) return replay(pool, key, fingerprint, res, next);",
        "    const json = res.json.bind(res);",
        "    res.json = (body) => {",
        f"      pool.query('UPDATE {table} SET status_code = $2, response_body = $3, "
        "locked_until = NULL WHERE key = $1', [key, res.statusCode, body]);",
        "      return json(body);",
        "    };",
        "    return next();",
        "  };",
        "}",
        "",
        "async function replay(pool, key, fingerprint, res, next) {",
        "  const deadline = Date.now() + config.idempotency.lockWaitMs;",
        "  for (;;) {",
        f"    const {{ rows: [row] }} = await pool.query('SELECT * FROM {table} WHERE key = $1', "
        "[key]);",
        f"    if (row.fingerprint !== fingerprint) return res.status(422).json({{ error: "
        f"'{mismatch}' }});",
        "    if (row.status_code) {",
        f"      return res.status(row.status_code).set('{replay}', 'true')"
        ".json(row.response_body);",
        "    }",
        "    if (Date.now() > deadline) return res.status(409).json({ error: 'in_flight' });",
        "    await sleep(50);",
        "  }",
        "}",
        "",
        "module.exports = { withIdempotency };",
    ])  # fmt: skip
    z.edit(middleware, "Add withIdempotency middleware", mw_text, mode="create")
    s.fact("file_created", "the middleware", (middleware,))
    z.replace(
        route,
        "Run POST /bookings through withIdempotency",
        "router.post('/', validate(BookingInput), async",
        "router.post('/', validate(BookingInput), "
        f"withIdempotency(pool, '{request_header}'), async",
    )
    z.replace(route, "Import the middleware", "const { validate } = require('../lib/validate');",
              "const { validate } = require('../lib/validate');\n"
              "const { withIdempotency } = require('../middleware/idempotency');")  # fmt: skip
    s.fact("file_modified", f"the idempotent route is {route}", (route,), stale=(wrong,))
    app_text = "\n".join([
        "'use strict';",
        "",
        "const express = require('express');",
        "const pinoHttp = require('pino-http');",
        "",
        "const app = express();",
        "app.use(pinoHttp());",
        "app.use(express.json());",
        "",
        "app.get('/healthz', require('./routes/health'));",
        "",
        "// Routes",
        "",
        "app.use('/bookings', require('./routes/bookings'));",
        "app.use('/v1/bookings', require('./routes/bookings.v1'));",
        "",
        "module.exports = app;",
    ])  # fmt: skip
    z.read(app_js, app_text)
    z.replace(
        app_js,
        "Cap JSON bodies so fingerprints stay cheap",
        "app.use(express.json());",
        "app.use(express.json({ limit: '64kb' }));",
        text="Hashing the body on every POST: capping the JSON size while I'm here.",
    )
    s.fact("file_modified", "the app caps JSON bodies", (app_js,))
    pad(0.36)

    # --- retention, first change; tests --------------------------------------------------------
    s.user(
        f"Make it {t1} hours instead. People start a booking on the evening boat and the "
        "app retries when they get signal the next day."
    )
    z.replace(config, "Longer key retention", f"ttlHours: {t0},", f"ttlHours: {t1},")
    s.say(f"Done: keys are kept {t1} hours now.")
    z.read(fake_pool, "\n".join([
        "'use strict';",
        "",
        "// An in-memory stand-in for pg.Pool: queries are answered from `responses` in order.",
        "function fakePool(responses = []) {",
        "  const calls = [];",
        "  return {",
        "    calls,",
        "    async query(sql, params) {",
        "      calls.push({ sql, params });",
        "      return responses.shift();",
        "    },",
        "  };",
        "}",
        "",
        "module.exports = { fakePool };",
    ]))  # fmt: skip
    test_text = "\n".join([
        "'use strict';",
        "",
        "const request = require('supertest');",
        "const express = require('express');",
        "const { withIdempotency } = require('../src/middleware/idempotency');",
        "const { fakePool } = require('./helpers/fakePool');",
        "",
        "function appWith(pool) {",
        "  const app = express();",
        "  app.use(express.json());",
        f"  app.post('/bookings', withIdempotency(pool, '{request_header}'), (req, res) =>",
        "    res.status(201).json({ id: 'bk_1', seat: req.body.seat }));",
        "  return app;",
        "}",
        "",
        "describe('withIdempotency', () => {",
        "  it('stores the first response and returns it', async () => {",
        "    const res = await request(appWith(fakePool()))",
        f"      .post('/bookings').set('{request_header}', 'k1').send({{ seat: '4C' }});",
        "    expect(res.status).toBe(201);",
        "  });",
        "",
        "  it('replays the stored response for a retried key', async () => {",
        "    const pool = fakePool([{ rows: [] }, { rows: [STORED] }]);",
        f"    const res = await request(appWith(pool)).post('/bookings').set('{request_header}', "
        "'k1').send({ seat: '4C' });",
        f"    expect(res.headers['{replay.lower()}']).toBe('true');",
        "  });",
        "",
        "  it('expires keys after the TTL', async () => {",
        "    jest.useFakeTimers().setSystemTime(Date.now() + TTL_MS + 1000);",
        "    const pool = fakePool([{ rows: [{ key: 'k1' }] }]);",
        "    const res = await request(appWith(pool)).post('/bookings')",
        f"      .set('{request_header}', 'k1').send({{ seat: '4C' }});",
        "    expect(res.status).toBe(201);",
        "  });",
        "});",
    ])  # fmt: skip
    z.edit(test_file, "Add Jest specs for withIdempotency", test_text, mode="create")
    s.fact("file_created", "the middleware tests", (test_file,))
    suites = [test_file, "test/bookings.test.js", "test/sailings.test.js", "test/fares.test.js",
              "test/health.test.js", old_cache_test]  # fmt: skip
    n1 = rng.randint(31, 39)
    header = f"> {root}@{version} test\n> jest --runInBand"
    first = _jest(rng, header, suites, n1, [(test_file, (
        "withIdempotency \u203a stores the first response and returns it"), [
        "TypeError: Cannot read properties of undefined (reading 'rows')",
        "",
        "      18 |     const { lockWaitMs } = config.idempotency;",
        "      19 |     const claimed = await pool.query(CLAIM, [key, fingerprint, lockWaitMs]);",
        "    > 20 |     if (claimed.rows.length === 0) return replay(pool, key, fingerprint, "
        "res, next);",
        "         |                 ^",
        "",
        f"      at rows ({middleware}:20:17)",
    ])])  # fmt: skip
    z.terminal(test_cmd, first, code=1)
    s.fact("command", "the Jest run", (test_cmd,), required=False)
    z.replace(fake_pool, "Answer unscripted queries with an empty result",
              "      return responses.shift();", "      return responses.shift() ?? { rows: [] };",
              text=("The fake pool returns `undefined` once its scripted answers run out, "
                    "and the claim query was the first one; giving it an empty result by "
                    "default."))  # fmt: skip
    s.fact("error_resolved", "TypeError reading 'rows' in the first spec",
           ("Cannot read properties of undefined (reading 'rows')",), required=False)  # fmt: skip
    z.terminal(test_cmd, _jest(rng, header, suites, n1, []))
    pad(0.5)

    # --- the user's interjections -------------------------------------------------------------
    s.user(
        f"One more thing: keep out of {vendored}/. That code is generated and owned by "
        f"{owner}; any edit there gets overwritten on their next release. Ask me if you "
        "think something in it needs to change."
    )
    s.fact("constraint", f"{vendored} is off limits", (vendored,))
    s.say(f"Got it, I won't edit anything under `{vendored}/`.")
    s.user("Unrelated: which commit is staging running at the moment?")
    health = "\n".join([
        "{",
        '  "status": "ok",',
        f'  "version": "{version}",',
        f'  "commit": "{deployed}",',
        f'  "uptime_s": {rng.randint(4000, 900000)},',
        f'  "db": {{ "ok": true, "latency_ms": {rng.randint(1, 9)} }}',
        "}",
    ])  # fmt: skip
    z.fetch(f"https://staging.{app}.example/healthz", health)
    s.say(f"Staging is on `{deployed}` (version {version}).")
    s.fact("identifier", "the commit staging runs", (deployed,))
    s.user(
        "Forget the Prometheus counter, the SREs move us to OpenTelemetry next month and "
        "will redo metrics then. What we do need is something that clears out expired keys "
        "every night, or that table grows forever."
    )
    purge = f"Nightly purge of expired rows in {table}"
    state[items[0]] = state[items[1]] = state[items[2]] = "done"
    state[items[4]] = "dropped"
    items.insert(5, purge)
    state[purge] = "open"
    plan(items, state, "Updated plan:")
    s.fact("todo", "the nightly purge was added and is open", (purge,))
    s.fact("todo", "the metrics item was dropped", ("Prometheus counter for replays", "dropped"))
    s.fact("todo", "the middleware is done", (f"- [x] {items[2]}",), required=False)
    pad(0.62)

    # --- the wait, the old cache, lint ---------------------------------------------------------
    s.user(
        f"Give in-flight duplicates {w1} ms before the 409. {w0} ms is less than the payment "
        "provider's p99, so the second request almost always loses."
    )
    z.replace(
        config, "Longer wait for in-flight duplicates", f"lockWaitMs: {w0} ", f"lockWaitMs: {w1} "
    )
    s.fact("changed_value", f"duplicates wait {w1} ms", (f"{w1} ms",), stale=(f"{w0} ms",))
    z.grep(
        "dedupeCache",
        "**/*.js",
        [(old_cache_test, 1, "const dedupe = require('../src/lib/dedupeCache');")],
        text="The old in-memory dedupe helper should be dead now; checking who still uses it.",
    )
    z.delete(old_cache, text="Only its own test imports it. Removing both.")
    z.delete(old_cache_test)
    suites.remove(old_cache_test)
    s.fact("file_deleted", "the old dedupe cache", (old_cache,))
    z.diagnostics(middleware, [("error", 36, "'sleep' is not defined. eslint(no-undef)")])
    z.read(middleware, z.files[middleware], lines=(1, 6))
    z.replace(
        middleware,
        "Import sleep under its own name",
        "const { setTimeout: sleep } = require('node:timers/promises');",
        "const { setTimeout: sleep } = require('node:timers/promises'); // eslint-env node",
        text="ESLint's config here predates `node:` imports; marking the file as node.",
    )
    z.diagnostics(middleware, [])
    s.fact("error_resolved", "ESLint no-undef on sleep", ("eslint(no-undef)",), required=False)
    z.terminal(lint_cmd, "")
    s.fact("command", "ESLint", (lint_cmd,), required=False)
    pad(0.8)

    # --- retention, second change (unnamed); the last run -------------------------------------
    s.user(f"Hmm, let's say {t2} hours after all. Long weekends.")
    z.replace(config, "Retention again", f"ttlHours: {t1},", f"ttlHours: {t2},")
    s.fact(
        "changed_value",
        f"keys are kept {t2} hours",
        (f"{t2} hours",),
        stale=(f"{t0} hours", f"{t1} hours"),
    )
    n2 = n1 + rng.randint(4, 9)
    last = _jest(rng, header, suites, n2, [(test_file, (
        "withIdempotency \u203a expires keys after the TTL"), [
        "expect(received).toBe(expected) // Object.is equality",
        "",
        "Expected: 201",
        "Received: 200",
        "",
        "      33 |       .set(" + f"'{request_header}', 'k1').send({{ seat: '4C' }});",
        "    > 34 |     expect(res.status).toBe(201);",
        "         |                        ^",
        "",
        f"      at Object.toBe ({test_file}:34:24)",
    ])])  # fmt: skip
    z.terminal(test_cmd, last, code=1)
    s.fact("test_status", "the last run", (f"1 failed, {n2 - 1} passed, {n2} total",),
           stale=(f"1 failed, {n1 - 1} passed, {n1} total",))  # fmt: skip
    s.fact("error_open", "the TTL spec still fails", ("expires keys after the TTL",))
    state[items[3]] = state[items[-1]] = "done"
    fix = "Make expired keys count as new"
    items.append(fix)
    state[fix] = "open"
    plan(items, state, (
        f"{n2 - 1} of {n2} pass. The one failure is the TTL spec: nothing looks at "
        "`created_at` yet, so an expired key is still replayed (200) instead of starting a new "
        "booking. Where things stand:"))  # fmt: skip
    pad(0.97)
    s.user("Fine, that one can wait until Monday. Push it and open a draft PR.")
    z.terminal(f"git push -u origin {branch} && gh pr create --draft --fill", "\n".join([
        f"remote: Create a pull request for '{branch}' on GitHub by visiting:",
        f"remote:      https://github.com/{app}-ferries/{root}/pull/new/{branch}",
        f" * [new branch]      {branch} -> {branch}",
        f"branch '{branch}' set up to track 'origin/{branch}'.",
        f"https://github.com/{app}-ferries/{root}/pull/{pr}",
    ]))  # fmt: skip
    s.say(f"Draft PR #{pr} is open. Have a good weekend.")
    s.fact("last_message", "the draft PR was opened", (f"Draft PR #{pr}",))
    return finish_session(s, family=FAMILY, seed=seed)
