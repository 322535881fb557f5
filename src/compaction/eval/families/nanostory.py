"""nanostory-style: a Nanocoder session with a story of its own (not `story.tell`).

Nanocoder (Nano-Collective/nanocoder, read at 0649028, release 1.29.0) is a local-first
terminal agent; it talks to OpenAI-compatible servers (Ollama, LM Studio, llama.cpp, …) through
the AI SDK and sends its tools natively. Its built-in tools, as `source/tools/` names them and
as their results go back to the model (`message-handler.ts`: a string result, bounded by
`truncateToolResult` to 20,000 characters, head 40% and tail kept around an elision marker):

- `read_file {path, start_line?, end_line?}`: the file's lines, no line numbers;
- `write_file {path, content}`: "File written successfully (N lines, M characters, ~T tokens)."
  (overwritten when it existed; the parent directory must exist);
- `string_replace {path, old_str, new_str}`: "Successfully replaced content at line(s) … (now …)."
  and an "Updated file context (lines a-b of N):" window of 20 lines either side, numbered
  `%4d: `; refused with "⚒ Validation failed: You must read … before editing it." when the file
  was not read this session;
- `execute_bash {command}`: "EXIT_CODE: n" then stdout, or "STDERR:" / "STDOUT:" sections when
  the command wrote to stderr, bounded to 2,000 characters;
- `file_op {operation: delete|move|copy|mkdir, path, destination?}`: "File deleted: …",
  "Directory created: …";
- `find_files`, `search_file_contents {query, path?, include?, contextLines?}`: "Found N
  match(es):" then `file:line:content` (or `file:line-` blocks of numbered context lines);
- `list_directory {path, recursive?, maxDepth?}`: "Directory contents for "…":" then
  directories first with a trailing "/", then "[Recursive: showing entries up to depth n]";
- `write_tasks {tasks: [{title, status}]}` (pending / in_progress / completed; the whole list
  each time, a dropped task is left out): "Task list (a pending, b in progress, c completed):"
  and "  ○ / ◐ / ✓ title" lines;
- `agent {subagent_type: explore, description}`: the subagent's final text;
- `fetch_url {url}`: the page as markdown; `ask_user {question, options}`: the answer;
- `git_status` and `git_log {file?}` in their own result formats.

A tool the user declines answers "Tool execution was cancelled by the user."; a command the
user runs with `!` arrives as a user message "Bash command output: …".

Call ids are Ollama's ("call_" and eight lowercase letters or digits); arguments are compact
JSON as the AI SDK serialises them. A turn that only calls tools carries null content.

The story: a Deno 2 + Hono service of a city bike-share (GBFS feeds into Deno KV) gets a
rebalancing planner for the vans. Values, names and ids are drawn per seed.
"""

from __future__ import annotations

import difflib
import json
import math
import random
from collections.abc import Sequence
from typing import Any

from compaction.eval.families._base import CHARS_PER_TOKEN, Session, finish_session
from compaction.eval.sessions import EvalSession

FAMILY = "nanostory-style"

# --- Nanocoder's result formats ---------------------------------------------------------------

_MAX_TOOL_RESULT_CHARS = 20_000
_BASH_LIMIT = 2_000
_TASK_ICON = {"pending": "○", "in_progress": "◐", "completed": "✓"}


def _bounded(content: str, limit: int = _MAX_TOOL_RESULT_CHARS) -> str:
    """`truncateToolResult`: head 40% and tail around a marker naming the full length."""
    if len(content) <= limit:
        return content
    marker = (
        f"\n... [Output truncated: {len(content)} characters total; request a narrower result "
        "to inspect omitted content] ...\n"
    )
    budget = limit - len(marker)
    head = math.floor(budget * 0.4)
    tail = budget - head
    return content[:head] + marker + content[len(content) - tail :]


def _bash_result(stdout: str, stderr: str = "", code: int = 0) -> str:
    """`formatBashResultForLLM`."""
    info = f"EXIT_CODE: {code}\n"
    full = f"{info}STDERR:\n{stderr}\nSTDOUT:\n{stdout}" if stderr else f"{info}{stdout}"
    return _bounded(full, _BASH_LIMIT)


def _written(content: str, existed: bool) -> str:
    action = "overwritten" if existed else "written"
    return (
        f"File {action} successfully ({len(content.split(chr(10)))} lines, {len(content)} "
        f"characters, ~{math.ceil(len(content) / 4)} tokens)."
    )


def _replaced(before: str, old: str, new: str) -> tuple[str, str]:
    """(the file after, `executeStringReplace`'s answer)."""
    assert before.count(old) == 1, old
    after = before.replace(old, new)
    start = before[: before.index(old)].count("\n") + 1
    end = start + len(old.split("\n")) - 1
    new_end = start + len(new.split("\n")) - 1
    was = f"line {start}" if start == end else f"lines {start}-{end}"
    now = f"line {start}" if start == new_end else f"lines {start}-{new_end}"
    lines = after.split("\n")
    first = max(1, start - 20)
    last = min(len(lines), new_end + 20)
    context = f"\n\nUpdated file context (lines {first}-{last} of {len(lines)}):\n"
    if first > 1:
        context += f"[... lines 1-{first - 1} omitted ...]\n"
    for i in range(first - 1, last):
        context += f"{i + 1:>4}: {lines[i]}\n"
    if last < len(lines):
        context += f"[... lines {last + 1}-{len(lines)} omitted ...]\n"
    return after, f"Successfully replaced content at {was} (now {now}).{context}"


def _task_list(items: Sequence[tuple[str, str]]) -> str:
    counts = {s: sum(status == s for _, status in items) for s in _TASK_ICON}
    body = "\n".join(f"  {_TASK_ICON[status]} {title}" for title, status in items)
    return (
        f"Task list ({counts['pending']} pending, {counts['in_progress']} in progress, "
        f"{counts['completed']} completed):\n{body}"
    )


def _numstat(before: str, after: str) -> tuple[int, int]:
    added = removed = 0
    for line in difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


# --- the system prompt (Nanocoder's sections, in `buildSystemPrompt`'s order) ------------------

_SECTIONS = (
    "You are Nanocoder, a terminal-based AI coding agent. Assist with software development tasks "
    "using only the tools available to you. NEVER assist with malicious or harmful intent.",
    """## CORE PRINCIPLES

- **Technical accuracy over validation**: Focus on facts, not praise. Disagree when necessary. \
Investigate uncertainties before confirming beliefs.
- **Concise and technical**: Clear terminal-friendly responses. No unnecessary superlatives or \
emojis (unless requested).
- **NEVER use markdown tables**: Tables render poorly in the terminal. Always bullet lists or \
short prose instead.
- **Task-focused**: Complete tasks efficiently, avoid prolonged conversation.""",
    """## TASK APPROACH

- **Questions**: Provide concise instructions. Ask if they want you to perform it.
- **Simple tasks**: Be direct. Use judgment for minor details.
- **Complex tasks**: Break down the work, execute sequentially, verify each step.
- After tool execution, immediately proceed to the next step. Don't wait for user input. Chain \
your reasoning, stay focused on the goal, and complete thoroughly.""",
    """## TOOL USE

- Use the tool format provided by the system (native or XML). Do not use text-based formats \
like `[tool_use]` or `<function>`.
- Describe actions naturally ("editing file" not "using edit tool").
- Verify all required parameters before calling a tool. Never use placeholder values.
- Never assume success — verify each step.
- Use tools sequentially, informed by previous results.

**CRITICAL — Continue after tools**: After any tool execution, immediately proceed to the next \
step. Don't wait for user input. Tool execution is ongoing work, not a stopping point. Chain \
your reasoning, stay focused on the goal, and complete thoroughly.""",
    """## FILE OPERATIONS

**Reading files**:
- Always read a file before editing it. Never blindly suggest edits.
- Very large files (>1500 lines) return a 250-line preview with a continuation hint — use \
`start_line`/`end_line` for specific sections or to continue the preview.
- Use `metadata_only=true` to check file size without reading content.

**Editing tools** (always read first):
- **Edit tool** (primary): Replace exact string content. Match whitespace, indentation, and \
newlines exactly. Include 2-3 lines of surrounding context for unique matching. Use for \
targeted changes (1-20 lines).
- **Write tool**: Use for new files, complete rewrites, generated code, or changes affecting \
>50% of the file.
- Both tools return actual file contents after write for verification.

**File management tools**:
- Use dedicated tools for delete, move, copy, and create directory. Never use bash for file \
operations.

**Edit workflow**:
1. Read file to see current content
2. Copy EXACT content to replace (including whitespace)
3. Include surrounding context for unique matching
4. Specify new content (can be empty to delete)""",
    """## TOOL SELECTION

**ALWAYS use native tools instead of bash for exploration and file discovery.** This is \
critical for autonomous workflows:
- Native tools run without user approval and execute immediately
- They provide consistent, structured output designed for agent parsing
- They're chainable — explore multiple files/patterns without interruption

**Anti-patterns — NEVER do this**:
- `execute_bash("find . -name '*.ts'")` → Use `find_files("*.ts")`
- `execute_bash("grep -r 'TODO' .")` → Use `search_file_contents("TODO")`
- `execute_bash("cat package.json")` → Use `read_file("package.json")`
- `execute_bash("ls -la src/")` → Use `list_directory("src")`
- `execute_bash("rm file.ts")` → Use `file_op(operation: "delete", path: "file.ts")`
- `execute_bash("mv old.ts new.ts")` → Use `file_op(operation: "move", ...)`
- `execute_bash("cp a.ts b.ts")` → Use `file_op(operation: "copy", ...)`
- `execute_bash("mkdir -p src/utils")` → Use `file_op(operation: "mkdir", path: "src/utils")`

**When to use bash**: Reserve `execute_bash` for builds, tests, dependency installs, dev \
servers, and operations not covered by other tools.""",
    """## GIT

Use dedicated git tools instead of bash for common git operations:
- **Read-only** (auto-approved): `git_status`, `git_diff`, `git_log`
- **Staging/commits** (requires approval): `git_add`, `git_commit`
- **Pull requests**: `git_pr`

Use `execute_bash` for any other git operation: `git push`, `git pull`, `git branch`, \
`git stash`, `git reset`, `git merge`, `git rebase`, `git cherry-pick`, `git remote`, `git tag`.""",
    """## TASK MANAGEMENT

**Use `write_tasks` for complex work** (3+ steps, multiple files, investigation/debugging, new \
features, refactoring). This is critical for tracking progress.

`write_tasks` replaces the entire task list every call — always pass the COMPLETE list:
1. **FIRST ACTION**: call `write_tasks` with one task per step, all `pending`
2. To start a step, resend the full list with that task set to `in_progress` (keep at most one \
`in_progress` at a time)
3. To finish a step, resend the full list with that task set to `completed`
4. To add or drop work, resend the list with tasks added or omitted
5. When the request is complete, call `write_tasks` with an empty array to clear the list

Tasks persist in `.nanocoder/tasks.json` across sessions. Running `/clear` resets all tasks.""",
    """## WEB ACCESS

- Use web search to look up documentation, APIs, error messages, and solutions.
- Use fetch to retrieve specific URLs — documentation pages, API references, raw files.
- Prefer official documentation over community answers when available.""",
    """## DIAGNOSTICS

- Use the diagnostics tool to check for errors and linting issues before and after making \
changes.
- Fix diagnostics issues you introduce. Don't ignore new errors.""",
    """## ASKING QUESTIONS

Use the question tool to present structured choices when you need clarification, a decision \
between approaches, or user preference. Provide 2-4 clear, distinct options.

- **Ask when**: Genuine ambiguities, missing required parameters, choosing between \
implementation approaches.
- **Don't ask when**: Minor details (use judgment), answers findable via tools, sufficient \
context exists.
- Be specific and concise. Explain why if not obvious. Balance thoroughness with efficiency.
- Never re-ask a question the user has already answered — accept their response and proceed.""",
    """## CODING PRACTICES

- **Understand before editing**: ALWAYS read files before modifying. Never blindly suggest \
edits.
- **Match existing style**: Follow project patterns, idioms, and conventions even if they \
differ from best practices.
- **Manage dependencies**: Update upstream/downstream code. Search for all references before \
renaming or removing.
- **Respect project structure**: Check manifest files (package.json, requirements.txt), \
understand dependencies, follow project-specific conventions.
- **New projects**: Organize in a dedicated directory, structure logically, make easy to run.""",
    """## CONSTRAINTS

- **Environment**: Fixed working directory. Use `cd /path && command` for one-off directory \
changes. No `~` or `$HOME`.
- **File ops**: Always use dedicated tools, never bash. Read before editing. Account for \
auto-formatting.
- **Commands**: Tailor to user's OS/shell. Explain what commands do. Avoid unsafe commands.
- **Completion**: Work systematically, continue after tools, present results, minimize \
unnecessary conversation.
- **Error handling**: Assume success if no error shown. Investigate failures. Verify with \
tools, not assumptions.""",
    """## SUBAGENTS

The `agent` tool delegates work to subagents that run in isolated contexts and return only \
their final result. Every file read, search, and intermediate tool output a subagent does NOT \
consume your context window. Delegation is cheap; not delegating is expensive.

**Default to delegating.** If your plan for a task involves 2+ tool calls, launch a subagent. \
Direct tool calls are reserved for single-shot operations on a target the user already named — \
a single read of a known path, or a single edit to a file already in context this turn. \
Anything else: delegate.

**Launch in parallel.** When you have multiple independent questions or tasks, call `agent` \
multiple times in a single response — all calls run concurrently. Sequential delegation of \
independent work is a wasted opportunity.

### Cases to delegate, not handle inline:
- Exploring unfamiliar code, tracing call sites, or understanding architecture
- Searching for patterns, usages, or implementations across the codebase
- Reviewing changes, diffs, or PRs
- Multi-step refactors where you'd otherwise read several files first
- Any task where you'd say "let me look around before I answer"

If you catch yourself thinking "I already know my next step" before reading anything: that's \
exactly when to delegate. You don't actually know yet — you're about to find out by burning \
context.

### Available subagents:

- **explore**: Codebase exploration agent. Use when you need to explore file structure, search \
for patterns, understand code, or gather context without filling your main conversation with \
search results.""",
)

# --- what is drawn per seed -----------------------------------------------------------------------

#: (city, time zone, operator, place words for station names, nickname, the nickname's station)
_CITIES = (
    (
        "Ghent",
        "Europe/Brussels",
        "velogent",
        (
            "Korenmarkt",
            "Vrijdagmarkt",
            "Gravensteen",
            "Citadelpark",
            "Dampoort",
            "Zuid",
            "Rabot",
            "Muide",
            "Coupure",
            "Blaarmeersen",
            "Ledeberg",
            "Watersport",
        ),
        "Sint-Pieters",
        "Sint-Pieters Station South",
    ),
    (
        "Leipzig",
        "Europe/Berlin",
        "leiprad",
        (
            "Augustusplatz",
            "Connewitz",
            "Plagwitz",
            "Gohlis",
            "Lindenau",
            "Reudnitz",
            "Stoetteritz",
            "Eutritzsch",
            "Schleussig",
            "Anger",
            "Volkmarsdorf",
            "Paunsdorf",
        ),
        "Hauptbahnhof",
        "Hauptbahnhof Ostseite",
    ),
    (
        "Tampere",
        "Europe/Helsinki",
        "tamppyora",
        (
            "Hervanta",
            "Kaleva",
            "Pispala",
            "Amuri",
            "Tammela",
            "Pyynikki",
            "Hatanpaa",
            "Lielahti",
            "Nekala",
            "Kissanmaa",
            "Santalahti",
            "Viinikka",
        ),
        "Ratina",
        "Ratina Stadium Gate",
    ),
    (
        "Porto",
        "Europe/Lisbon",
        "portobici",
        (
            "Boavista",
            "Bolhao",
            "Ribeira",
            "Foz",
            "Campanha",
            "Aliados",
            "Bonfim",
            "Massarelos",
            "Paranhos",
            "Lordelo",
            "Marques",
            "Cordoaria",
        ),
        "Trindade",
        "Trindade Metro East",
    ),
    (
        "Graz",
        "Europe/Vienna",
        "grazrad",
        (
            "Lend",
            "Gries",
            "Geidorf",
            "Andritz",
            "Eggenberg",
            "Liebenau",
            "Puntigam",
            "Waltendorf",
            "Mariatrost",
            "Wetzelsdorf",
            "Annenstrasse",
            "Murpark",
        ),
        "Jakomini",
        "Jakominiplatz Tram Hub",
    ),
    (
        "Malmo",
        "Europe/Stockholm",
        "malmocykel",
        (
            "Mollevangen",
            "Davidshall",
            "Ribersborg",
            "Limhamn",
            "Husie",
            "Rosengard",
            "Kirseberg",
            "Hyllie",
            "Varnhem",
            "Slottsstaden",
            "Sofielund",
            "Lorensborg",
        ),
        "Triangeln",
        "Triangeln Station Upper",
    ),
)
_SUFFIXES = (
    "North",
    "South",
    "East",
    "West",
    "Square",
    "Bridge",
    "Market",
    "Park",
    "Gate",
    "Quay",
    "Library",
    "Pool",
    "Campus",
    "Depot",
)
_PROJECTS = ("dockwise", "pedalgrid", "spokeline", "velomesh", "rackline", "cyclehub")
_USERS = ("mira", "tomasz", "ines", "jules", "oskar", "priya")
_BRANCHES = ("rebalance-sweep", "feat/rebalancer", "truck-planner", "rebalance-cron")
_COLLEAGUES = ("Annelies", "Jonas", "Sanna", "Rui", "Vera", "Lukas")
_AUTHORS = (
    ("Hanne De Wilde", "hanne@"),
    ("Pieter Vos", "pvos@"),
    ("Kaisa Niemi", "kaisa.n@"),
    ("Tiago Moura", "tmoura@"),
    ("Eva Gruber", "eva.gruber@"),
    ("Linnea Berg", "lberg@"),
)
_MAINT_TESTS = (
    "skips stations under maintenance",
    "never routes a van through a maintenance station",
    "maintenance stations neither give nor take",
)
_OTHER_TESTS = (
    (
        "src/routes/public_test.ts",
        (
            "GET /v1/stations lists every station",
            "GET /v1/stations/:id answers 404 when unknown",
            "GET /v1/status carries the feed ttl",
            "GET /v1/nearby sorts by walking order",
            "GET /v1/nearby rejects a radius over 5 km",
            "healthz answers ok",
        ),
    ),
    (
        "src/stations/repo_test.ts",
        (
            "putSnapshot keeps the latest key in step",
            "putSnapshot history expires after a week",
            "listStations reads every station",
            "getStation answers null when unknown",
            "snapshotHistory stops at the latest key",
            "putStation overwrites metadata",
        ),
    ),
)


def _fill(template: str, **values: object) -> str:
    """`template` with each «name» replaced (TypeScript keeps its own braces and ${…})."""
    for key, value in values.items():
        template = template.replace(f"«{key}»", str(value))
    assert "«" not in template, template
    return template


# --- the repository's files -------------------------------------------------------------------

_DENO_JSON = """{
  "name": "@«org»/«proj»",
  "version": "0.9.«minor»",
  "exports": "./src/main.ts",
  "tasks": {
    "dev": "deno run -A --watch src/main.ts",
    "start": "deno run -A src/main.ts",
    "check": "deno check src/main.ts",
    "test": "KV_PATH=:memory: deno test -A src/",
    "ingest": "deno run -A src/stations/ingest.ts --once",
    "legacy-rebalance": "deno run -A scripts/rebalance_legacy.ts"
  },
  "imports": {
    "@std/assert": "jsr:@std/assert@^1.0.8",
    "@std/async": "jsr:@std/async@^1.0.9",
    "@std/log": "jsr:@std/log@^0.224.11",
    "hono": "jsr:@hono/hono@^4.6.12",
    "hono/": "jsr:/@hono/hono@^4.6.12/"
  },
  "unstable": ["kv"],
  "fmt": { "lineWidth": 100, "indentWidth": 2 },
  "lint": { "rules": { "exclude": ["no-explicit-any"] } },
  "deploy": {
    "project": "«proj»-«citycode»",
    "entrypoint": "src/main.ts"
  }
}
"""

_TYPES_TS = """/** Station metadata, from the GBFS station_information feed. */
export type StationStatus = "active" | "maintenance" | "closed";

export interface Station {
  id: string;
  name: string;
  lat: number;
  lon: number;
  docks: number;
  status: StationStatus;
}

/** One station_status reading; `at` is when the feed reported it. */
export interface Snapshot {
  stationId: string;
  bikes: number;
  ebikes: number;
  emptyDocks: number;
  at: number;
  lastUndock?: { riderId: string; at: number };
}

export interface FeedMeta {
  ttl: number;
  lastUpdated: number;
  version: string;
}
"""

_REPO_TS = """import * as log from "@std/log";
import type { Snapshot, Station } from "./types.ts";

export const kv = await Deno.openKv(Deno.env.get("KV_PATH"));

const WEEK_MS = 7 * 24 * 3600_000;

export async function listStations(): Promise<Station[]> {
  const out: Station[] = [];
  for await (const entry of kv.list<Station>({ prefix: ["stations"] })) {
    out.push(entry.value);
  }
  return out;
}

export async function getStation(id: string): Promise<Station | null> {
  const entry = await kv.get<Station>(["stations", id]);
  return entry.value;
}

export async function putStation(station: Station): Promise<void> {
  await kv.set(["stations", station.id], station);
}

export async function putSnapshot(snap: Snapshot): Promise<void> {
  const res = await kv.atomic()
    .set(["snap", snap.stationId, "latest"], snap)
    .set(["snap", snap.stationId, snap.at], snap, { expireIn: WEEK_MS })
    .commit();
  if (!res.ok) log.warn(`snapshot write lost a race for ${snap.stationId}`);
}

export async function latestSnapshots(ids: string[]): Promise<Map<string, Snapshot>> {
  const keys = ids.map((id) => ["snap", id, "latest"]);
  const entries = await kv.getMany<Snapshot[]>(keys);
  const out = new Map<string, Snapshot>();
  for (const entry of entries) {
    if (entry.value) out.set(entry.value.stationId, entry.value);
  }
  log.debug(`latest snapshots: ${JSON.stringify(entries.map((e) => e.value))}`);
  return out;
}

export async function snapshotHistory(id: string, since: number): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  const iter = kv.list<Snapshot>({ start: ["snap", id, since], end: ["snap", id, "latest"] });
  for await (const entry of iter) out.push(entry.value);
  return out;
}
"""

_MAIN_TS = """import { Hono } from "hono";
import { logger } from "hono/logger";
import * as log from "@std/log";
import { admin } from "./routes/admin.ts";
import { publicApi } from "./routes/public.ts";
import { startIngest } from "./stations/ingest.ts";

log.setup({
  handlers: { console: new log.ConsoleHandler("DEBUG") },
  loggers: {
    default: {
      level: Deno.env.get("LOG_LEVEL") === "debug" ? "DEBUG" : "INFO",
      handlers: ["console"],
    },
  },
});

const app = new Hono();
app.use("*", logger());
app.route("/v1", publicApi);
app.route("/admin", admin);
app.get("/healthz", (c) => c.text("ok"));

startIngest();

Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000) }, app.fetch);
"""

_ADMIN_TS = """import { Hono } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { kv, listStations, putStation } from "../stations/repo.ts";
import type { StationStatus } from "../stations/types.ts";

export const admin = new Hono();

admin.use("*", bearerAuth({ token: Deno.env.get("ADMIN_TOKEN") ?? crypto.randomUUID() }));

admin.get("/stations", async (c) => c.json(await listStations()));

admin.post("/stations/:id/status", async (c) => {
  const id = c.req.param("id");
  const { status } = await c.req.json<{ status: StationStatus }>();
  const current = await kv.get(["stations", id]);
  if (!current.value) return c.json({ error: "unknown station" }, 404);
  await putStation({ ...(current.value as any), status });
  return c.json({ id, status });
});

admin.get("/health/kv", async (c) => {
  const started = performance.now();
  let stations = 0;
  for await (const _ of kv.list({ prefix: ["stations"] })) stations++;
  return c.json({ stations, ms: Math.round(performance.now() - started) });
});
"""

_PLANNER_TS = """import { haversineKm } from "../lib/geo.ts";
import type { Snapshot, Station } from "../stations/types.ts";

export const TRUCK_CAPACITY = «cap»;
/** Below this share of its docks holding a bike, a station is short. */
export const LOW_WATER = 0.25;
/** Above this share a station can give bikes away. */
export const HIGH_WATER = 0.7;
/** Smaller moves are not worth the stop (ops notes). */
export const MIN_MOVE = 3;

export interface Move {
  from: string;
  to: string;
  bikes: number;
  km: number;
}

interface Level {
  station: Station;
  bikes: number;
  fill: number;
}

export function levels(stations: Station[], snaps: Map<string, Snapshot>): Level[] {
  const out: Level[] = [];
  for (const station of stations) {
    const snap = snaps.get(station.id);
    if (!snap || station.docks === 0) continue;
    out.push({ station, bikes: snap.bikes, fill: snap.bikes / station.docks });
  }
  return out;
}

export function planMoves(stations: Station[], snaps: Map<string, Snapshot>): Move[] {
  const all = levels(stations, snaps);
  const short = all.filter((l) => l.fill < LOW_WATER).sort((a, b) => b.fill - a.fill);
  const spare = all.filter((l) => l.fill > HIGH_WATER);
  const moves: Move[] = [];
  for (const need of short) {
    const wanted = Math.ceil(need.station.docks * LOW_WATER) - need.bikes;
    const donor = nearest(need, spare);
    const km = distance(need, donor);
    const giveable = donor.bikes - Math.ceil(donor.station.docks * HIGH_WATER);
    const bikes = Math.min(wanted, giveable, TRUCK_CAPACITY);
    if (bikes < MIN_MOVE) continue;
    donor.bikes -= bikes;
    moves.push({ from: donor.station.id, to: need.station.id, bikes, km });
  }
  return moves;
}

function distance(a: Level, b: Level): number {
  return haversineKm(a.station.lat, a.station.lon, b.station.lat, b.station.lon);
}

function nearest(need: Level, spare: Level[]): Level | undefined {
  let best: Level | undefined;
  let bestKm = Infinity;
  for (const s of spare) {
    const km = distance(need, s);
    if (km < bestKm || (km === bestKm && best !== undefined && s.bikes > best.bikes)) {
      best = s;
      bestKm = km;
    }
  }
  return best;
}
"""

_TEST_TS = """import { assertEquals } from "@std/assert";
import { planMoves, TRUCK_CAPACITY } from "./planner.ts";
import { kv, latestSnapshots, putSnapshot } from "../stations/repo.ts";
import type { Snapshot, Station } from "../stations/types.ts";

function station(id: string, lat: number, lon: number, docks = 20): Station {
  return { id, name: id, lat, lon, docks, status: "active" };
}

function snap(stationId: string, bikes: number): Snapshot {
  return { stationId, bikes, ebikes: 0, emptyDocks: 0, at: Date.UTC(2026, 10, 18, 7, 30) };
}

function snaps(...list: Snapshot[]): Map<string, Snapshot> {
  return new Map(list.map((s) => [s.stationId, s]));
}

Deno.test("no moves when every station sits between the marks", () => {
  const stations = [station("st_a", 0, 0), station("st_b", 0, 0.01)];
  assertEquals(planMoves(stations, snaps(snap("st_a", 9), snap("st_b", 11))), []);
});

Deno.test("fills the emptiest station first", () => {
  const stations = [station("st_a", 0, 0), station("st_b", 0, 0.02), station("st_d", 0, 0.01)];
  const moves = planMoves(stations, snaps(snap("st_a", 0), snap("st_b", 2), snap("st_d", 19)));
  assertEquals(moves.map((m) => m.to), ["st_a"]);
});

Deno.test("takes bikes from the nearest donor", () => {
  const stations = [
    station("st_a", 0, 0),
    station("st_near", 0, 0.005),
    station("st_far", 0, 0.05),
  ];
  const levels = snaps(snap("st_a", 0), snap("st_near", 20), snap("st_far", 20));
  const moves = planMoves(stations, levels);
  assertEquals(moves.map((m) => m.from), ["st_near"]);
});

Deno.test("never moves more than a van holds", () => {
  const stations = [station("st_a", 0, 0, 200), station("st_d", 0, 0.01, 200)];
  const moves = planMoves(stations, snaps(snap("st_a", 0), snap("st_d", 200)));
  assertEquals(moves[0].bikes, TRUCK_CAPACITY);
});

Deno.test("skips moves under three bikes", () => {
  const stations = [station("st_a", 0, 0), station("st_d", 0, 0.01)];
  assertEquals(planMoves(stations, snaps(snap("st_a", 4), snap("st_d", 16))), []);
});

Deno.test("latestSnapshots reads more than ten stations", async () => {
  const ids = Array.from({ length: 14 }, (_, i) => `st_${i}`);
  for (const id of ids) await putSnapshot(snap(id, 5));
  const got = await latestSnapshots(ids);
  assertEquals(got.size, 14);
  kv.close();
});
"""

_SWEEP_TS = """import * as log from "@std/log";
import { kv, latestSnapshots, listStations } from "../stations/repo.ts";
import { type Move, planMoves } from "./planner.ts";

export interface Plan {
  /** epoch millis, UTC */
  at: number;
  moves: Move[];
}

const TWO_DAYS_MS = 2 * 24 * 3600_000;

export async function sweep(now = Date.now()): Promise<Plan> {
  const stations = await listStations();
  const snaps = await latestSnapshots(stations.map((s) => s.id));
  const plan: Plan = { at: now, moves: planMoves(stations, snaps) };
  await kv.atomic()
    .set(["rebalance", "plan", "latest"], plan)
    .set(["rebalance", "plan", now], plan, { expireIn: TWO_DAYS_MS })
    .commit();
  log.info(`sweep: ${plan.moves.length} moves from ${snaps.size} snapshots`);
  return plan;
}

Deno.cron("rebalance-sweep", "«cron»", async () => {
  await sweep();
});
"""

_LEGACY_TS = """// One-off rebalancing for the winter pilot. Reads a CSV export of station
// levels and prints suggested moves. Kept for reference.
import { parse } from "jsr:@std/csv@^1.0.3";

interface Row {
  id: string;
  lat: number;
  lon: number;
  docks: number;
  bikes: number;
}

const LOW = Number(Deno.env.get("LOW") ?? 0.2);
const HIGH = Number(Deno.env.get("HIGH") ?? 0.75);

const file = Deno.args[0];
if (!file) {
  console.error("usage: rebalance_legacy.ts <levels.csv>");
  Deno.exit(2);
}

const rows = parse(await Deno.readTextFile(file), { skipFirstRow: true }).map((r) => ({
  id: r.id,
  lat: Number(r.lat),
  lon: Number(r.lon),
  docks: Number(r.docks),
  bikes: Number(r.bikes),
})) as Row[];

const short = rows.filter((r) => r.bikes / r.docks < LOW);
const spare = rows.filter((r) => r.bikes / r.docks > HIGH);

function km(a: Row, b: Row): number {
  const dx = (a.lon - b.lon) * 111 * Math.cos((a.lat * Math.PI) / 180);
  const dy = (a.lat - b.lat) * 111;
  return Math.sqrt(dx * dx + dy * dy);
}

for (const s of short) {
  const d = spare.sort((x, y) => km(s, x) - km(s, y))[0];
  if (!d) break;
  const n = Math.min(Math.ceil(s.docks * LOW) - s.bikes, d.bikes - Math.ceil(d.docks * HIGH));
  if (n <= 0) continue;
  d.bikes -= n;
  console.log(`${d.id} -> ${s.id}: ${n}`);
}

if (!short.length) console.log("nothing to move");
"""

_OPS_DOC = """# Rebalancing (ops notes, «city»)

Owner: fleet ops. Last reviewed: 2026-10-02.

## What counts as short
A station is short when fewer than a quarter of its docks hold a bike. Above 70% it can give
bikes away without going short itself.

## Vans
- Two vans on weekdays, one at weekends.
- A driver works one move at a time: pick up at the donor, drop at the short station.
- Moves under 3 bikes aren't worth the stop.

## Priorities
1. Stations by rail and tram hubs first, 07:00-09:30 and 16:30-19:00.
2. Otherwise the emptiest station first.
3. Never two vans to the same station inside one plan.

## Out of scope
- Predicting demand. We react to what the docks report.
- Battery swaps for e-bikes (separate crew)."""

_AGENTS_MD = """# «proj»

Deno 2.1 service for «city»'s bike-share: GBFS feeds in, station data in Deno KV, a small
Hono API for the app and an admin API for fleet ops. Deployed on Deno Deploy.

- `deno task dev` runs locally against a sqlite KV file (KV_PATH).
- `deno task test` runs the suite against an in-memory KV.
- Formatting: `deno fmt` (line width 100). Lint: `deno lint`.
- Routes live in src/routes/, station data access next to the types in src/stations/."""

_QUEUE_DOCS = """# Using Queues

Deno KV ships a queue API for work that should happen outside the request that triggered it:
sending a notification later, retrying a flaky call, spreading a large job over many small
ones. A value is put on the queue with `kv.enqueue()` and handled by the function registered
with `kv.listenQueue()`.

```ts
const kv = await Deno.openKv();

kv.listenQueue(async (msg: unknown) => {
  // handle the message
});

await kv.enqueue({ kind: "welcome-mail", userId: "u_123" }, { delay: 60_000 });
```

## Delivery guarantees

Queued messages are delivered **at least once**. If the handler throws, or the isolate running
it goes away before the handler returns, the message is delivered again according to the
backoff schedule. A handler must therefore tolerate seeing the same message more than once:
make the work idempotent, or record a key for each message you have handled and check it first.

Messages are not ordered relative to each other. Two messages enqueued one after the other may
be handled in either order, and may be handled at the same time on different isolates.

## Options

- `delay`: milliseconds to wait before the first delivery. The maximum delay is 30 days.
- `keysIfUndelivered`: KV keys to write the value to if every delivery attempt fails, so a
  message is never lost silently.
- `backoffSchedule`: the retry intervals in milliseconds, e.g. `[1000, 5000, 10000]`. Without
  it a default schedule applies.

## Enqueueing inside an atomic operation

`enqueue` is also available on `kv.atomic()`, which lets you write a record and schedule the
work that depends on it in one commit:

```ts
await kv.atomic()
  .check({ key: ["orders", id], versionstamp: null })
  .set(["orders", id], order)
  .enqueue({ kind: "order-created", id })
  .commit();
```

## On Deno Deploy

Queues on Deploy scale with the number of isolates: a burst of messages may be spread over
several isolates handling them concurrently. Handlers are registered when the module loads;
register them at the top level of a module your entrypoint imports.

## Limits

- A message value is serialized the same way as a KV value and is limited to 64 KiB.
- Up to 100,000 undelivered messages per database.
"""


# --- filler: files the agent reads that carry nothing the story plants -----------------------

_NOUNS = (
    "dock",
    "feed",
    "trip",
    "zone",
    "rack",
    "alert",
    "region",
    "quota",
    "window",
    "report",
    "payload",
    "batch",
    "vehicle",
    "tariff",
    "pass",
    "outage",
)
_FIELDS = (
    "updatedAt",
    "count",
    "capacity",
    "weight",
    "score",
    "ttl",
    "version",
    "rank",
    "limit",
    "offset",
)
_VERBS = ("load", "fetch", "list", "merge", "count", "index", "collect", "group")


def _title(word: str) -> str:
    return word[:1].upper() + word[1:]


def _plural(word: str) -> str:
    return word + ("es" if word.endswith(("h", "s")) else "s")


def _ts_filler(rng: random.Random, chars: int, header: str, router: str | None = None) -> str:
    """TypeScript in the repository's style: KV readers, interfaces and, given a `router`, Hono
    handlers on it."""
    out = [header, ""]
    size = len(header)
    while size < chars:
        a, b = rng.sample(_NOUNS, 2)
        f1, f2 = rng.sample(_FIELDS, 2)
        name = f"{rng.choice(_VERBS)}{_title(a)}{_title(b)}s"
        kind = rng.randrange(4)
        if kind == 2 and router is None:
            kind = 1
        if kind == 0:
            block = [
                f"export interface {_title(a)}{_title(b)} {{",
                "  id: string;",
                f"  {f1}: number;",
                f"  {f2}: number;",
                f"  {a}Id?: string;",
                "}",
            ]
        elif kind == 1:
            block = [
                f"export async function {name}(kv: Deno.Kv, {b}Id: string) {{",
                f"  const out: {_title(a)}{_title(b)}[] = [];",
                f'  for await (const entry of kv.list<{_title(a)}{_title(b)}>({{ prefix: ["{a}", '
                f"{b}Id] }})) {{",
                f"    if (entry.value.{f1} === undefined) continue;",
                "    out.push(entry.value);",
                "  }",
                f"  return out.sort((x, y) => x.{f2} - y.{f2});",
                "}",
            ]
        elif kind == 2:
            block = [
                f'{router}.get("/{_plural(a)}/:id/{_plural(b)}", async (c) => {{',
                '  const id = c.req.param("id");',
                f"  const rows = await {name}(kv, id);",
                '  if (!rows.length) return c.json({ error: "not found" }, 404);',
                f"  return c.json(rows.map(({{ id, {f1} }}) => ({{ id, {f1} }})));",
                "});",
            ]
        else:
            limit = rng.choice((50, 100, 250, 500))
            block = [
                f"function {rng.choice(_VERBS)}{_title(a)}Window(rows: {{ {f1}: number }}[], "
                f"limit = {limit}) {{",
                f"  const sorted = [...rows].sort((x, y) => y.{f1} - x.{f1});",
                "  return sorted.slice(0, limit);",
                "}",
            ]
        out += [*block, ""]
        size += sum(len(line) + 1 for line in block) + 1
    return "\n".join(out)


def _collated(path: str) -> str:
    """A key ordering paths roughly as ICU's `localeCompare` does: case aside, `_` before `.`."""
    return path.casefold().replace("_", "\x2c")


def _coords(rng: random.Random, city: int) -> tuple[float, float]:
    base = (
        (51.05, 3.72),
        (51.34, 12.37),
        (61.50, 23.76),
        (41.15, -8.61),
        (47.07, 15.44),
        (55.60, 13.00),
    )[city]
    return round(base[0] + rng.uniform(-0.03, 0.03), 5), round(
        base[1] + rng.uniform(-0.05, 0.05), 5
    )


def _station_lines(
    sid: str, name: str, lat: float, lon: float, docks: int, last: bool
) -> list[str]:
    return [
        "  {",
        f'    "id": "{sid}",',
        f'    "name": "{name}",',
        f'    "lat": {lat},',
        f'    "lon": {lon},',
        f'    "docks": {docks},',
        '    "status": "active"',
        "  }" if last else "  },",
    ]


# --- the session ----------------------------------------------------------------------------------


class _Nano:
    """Nanocoder's tools over an in-memory checkout of the repository."""

    def __init__(self, session: Session, ids: random.Random, root: str) -> None:
        self.s = session
        self.ids = ids
        self.root = root
        self.files: dict[str, str] = {}
        self.seen: set[str] = set()

    def _id(self) -> str:
        return "call_" + "".join(
            self.ids.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8)
        )

    def calls(
        self,
        batch: Sequence[tuple[str, dict[str, Any], str]],
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """One assistant turn calling the tools of `batch`, then their results in order."""
        ids = [self._id() for _ in batch]
        self.s.messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps(
                                args, ensure_ascii=False, separators=(",", ":")
                            ),
                        },
                    }
                    for call_id, (name, args, _) in zip(ids, batch, strict=True)
                ],
            }
        )
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        for call_id, (_, _, result) in zip(ids, batch, strict=True):
            self.s.messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": _bounded(result)}
            )
            if filler:
                self.s.filler_at.add(len(self.s.messages) - 1)

    def call(
        self, name: str, args: dict[str, Any], result: str, *, text: str = "", filler: bool = False
    ) -> None:
        self.calls([(name, args, result)], text=text, filler=filler)

    # the tools
    def read_result(self, path: str, start: int | None = None, end: int | None = None) -> str:
        self.seen.add(path)
        content = self.files[path]
        if start is None and end is None:
            return content
        lines = content.split("\n")
        return "\n".join(lines[(start or 1) - 1 : min(len(lines), end or len(lines))])

    def read(
        self,
        path: str,
        *,
        start: int | None = None,
        end: int | None = None,
        text: str = "",
        filler: bool = False,
    ) -> None:
        args: dict[str, Any] = {"path": path}
        if start is not None:
            args["start_line"] = start
        if end is not None:
            args["end_line"] = end
        self.call("read_file", args, self.read_result(path, start, end), text=text, filler=filler)

    def write(self, path: str, content: str, *, text: str = "") -> None:
        existed = path in self.files
        self.files[path] = content
        self.seen.add(path)
        self.call(
            "write_file", {"path": path, "content": content}, _written(content, existed), text=text
        )

    def replace(self, path: str, old: str, new: str, *, text: str = "") -> None:
        if path not in self.seen:
            refusal = (
                f'⚒ Validation failed: You must read "{path}" before editing it. Call read_file '
                "on it first — if the file is over 300 lines, specify start_line and end_line to "
                "read its actual content, not just metadata — then retry string_replace with "
                "old_str copied exactly from the file."
            )
            self.call(
                "string_replace", {"path": path, "old_str": old, "new_str": new}, refusal, text=text
            )
            return
        self.files[path], result = _replaced(self.files[path], old, new)
        self.call(
            "string_replace", {"path": path, "old_str": old, "new_str": new}, result, text=text
        )

    def bash(
        self, command: str, stdout: str, stderr: str = "", code: int = 0, *, text: str = ""
    ) -> None:
        self.call(
            "execute_bash", {"command": command}, _bash_result(stdout, stderr, code), text=text
        )

    def tasks(self, items: Sequence[tuple[str, str]], *, text: str = "") -> None:
        self.call(
            "write_tasks",
            {"tasks": [{"title": t, "status": s} for t, s in items]},
            _task_list(items),
            text=text,
        )

    def file_op(self, operation: str, path: str, *, text: str = "") -> None:
        if operation == "delete":
            del self.files[path]
            result = f"File deleted: {path}"
        else:
            result = f"Directory created: {path}"
        self.call("file_op", {"operation": operation, "path": path}, result, text=text)

    def search(self, query: str) -> str:
        """`search_file_contents` over the files this checkout holds: `file:line:content`."""
        hits = [
            f"{path}:{n}:{line.strip()}"
            for path in sorted(self.files)
            for n, line in enumerate(self.files[path].split("\n"), start=1)
            if query.casefold() in line.casefold()
        ]
        head = f"Found {len(hits)} match{'' if len(hits) == 1 else 'es'}:\n\n"
        return head + "\n".join(hits) if hits else f'No matches found for "{query}"'

    def url(self, path: str) -> str:
        return f"file://{self.root}/{path}"


def _deno_test(
    rng: random.Random,
    nano: _Nano,
    modules: Sequence[tuple[str, Sequence[tuple[str, str | None]]]],
) -> tuple[str, str, int, int, int]:
    """(stdout, stderr, exit code, passed, failed) of `deno task test`: each module's tests with
    None for a pass or the error text of a failure."""
    stdout: list[str] = []
    errors: list[str] = []
    failures: list[str] = []
    passed = failed = 0
    for path, tests in modules:
        stdout.append(f"running {len(tests)} tests from ./{path}")
        body = nano.files.get(path, "")
        for name, error in tests:
            ms = rng.randint(0, 14)
            if error is None:
                stdout.append(f"{name} ... ok ({ms}ms)")
                passed += 1
                continue
            stdout.append(f"{name} ... FAILED ({ms}ms)")
            failed += 1
            line = body[: body.index(f'Deno.test("{name}"')].count("\n") + 1
            where = f"{name} => ./{path}:{line}:6"
            errors += [where, f"error: {error}".replace("«at»", nano.url(path)), ""]
            failures.append(where)
    took = rng.randint(140, 420)
    if failed:
        stdout += [
            "",
            " ERRORS ",
            "",
            *errors,
            " FAILURES ",
            "",
            *failures,
            "",
            f"FAILED | {passed} passed | {failed} failed ({took}ms)",
            "",
        ]
    else:
        stdout += ["", f"ok | {passed} passed | 0 failed ({took}ms)", ""]
    stderr = ["Task test KV_PATH=:memory: deno test -A src/"]
    stderr += [f"Check {nano.url(path)}" for path, _ in modules]
    if failed:
        stderr.append("error: Test failed")
    return "\n".join(stdout), "\n".join(stderr) + "\n", int(bool(failed)), passed, failed


def _assertion(actual: str, expected: str, line: int) -> str:
    return (
        "AssertionError: Values are not equal.\n\n\n"
        "    [Diff] Actual / Expected\n\n\n"
        "    [\n"
        f'-     "{actual}",\n'
        f'+     "{expected}",\n'
        "    ]\n\n"
        "  throw new AssertionError(message);\n"
        "        ^\n"
        "    at assertEquals (https://jsr.io/@std/assert/1.0.8/equals.ts:64:9)\n"
        f"    at «at»:{line}:3"
    )


def _tell(seed: int, filler_chars: int) -> Session:
    rng = random.Random(f"nanostory-{seed}")
    frng = random.Random(f"nanostory-filler-{seed}")
    city_i = rng.randrange(len(_CITIES))
    city, tz, org, places, nick, nick_full = _CITIES[city_i]
    proj = rng.choice(_PROJECTS)
    user = rng.choice(_USERS)
    branch = rng.choice(_BRANCHES)
    colleague = rng.choice(_COLLEAGUES)
    root = f"/home/{user}/code/{proj}"
    every = (rng.choice((10, 12, 15)), rng.choice((4, 5, 6)), rng.choice((7, 8, 9)))
    cap = (rng.choice((16, 18, 20)), rng.choice((22, 24, 26)))
    maint = rng.choice(_MAINT_TESTS)
    nick_id = f"st_{rng.randrange(16**6):06x}"
    legacy_hash = f"{rng.randrange(16**7):07x}"
    others = [(path, rng.sample(names, rng.randint(4, 6))) for path, names in _OTHER_TESTS]
    pre = sum(len(names) for _, names in others)
    author, mail = rng.choice(_AUTHORS)
    month = rng.choice(("March", "April", "May", "June"))

    system = "\n\n".join(_SECTIONS) + (
        "\n\n## SYSTEM INFORMATION\n\n"
        "Operating System: Linux\n"
        "OS Version: 6.8.0-48-generic\n"
        "Platform: linux\n"
        "Default Shell: /bin/bash\n"
        f"Home Directory: /home/{user}\n"
        f"Current Working Directory: {root}\n"
        "Current Date: 2026-11-18"
        "\n\nAdditional Context...\n\n" + _fill(_AGENTS_MD, proj=proj, city=city)
    )
    s = Session(rng=rng, system=system)
    nano = _Nano(s, random.Random(f"nanostory-ids-{seed}"), root)
    citycode = city.lower()[:3]
    nano.files = {
        "deno.json": _fill(
            _DENO_JSON, org=org, proj=proj, minor=rng.randint(2, 9), citycode=citycode
        ),
        "src/stations/types.ts": _TYPES_TS,
        "src/stations/repo.ts": _REPO_TS,
        "src/main.ts": _MAIN_TS,
        "src/routes/admin.ts": _ADMIN_TS,
        "scripts/rebalance_legacy.ts": _LEGACY_TS,
    }
    original = dict(nano.files)

    def budget(share: float) -> int:
        return max(0, int(filler_chars * share))

    # The stations fixture: filler stations around the one ops call by its nickname.
    count = 64
    at = rng.randint(46, 58)
    docks_nick = rng.choice((24, 30, 36))
    lat_nick, lon_nick = _coords(rng, city_i)
    fixture = ["["]
    used_names = set()
    for i in range(count):
        if i == at:
            fixture += _station_lines(nick_id, nick_full, lat_nick, lon_nick, docks_nick, False)
            continue
        while True:
            name = f"{frng.choice(places)} {frng.choice(_SUFFIXES)}"
            if name not in used_names:
                used_names.add(name)
                break
        lat, lon = _coords(frng, city_i)
        sid = f"st_{frng.randrange(16**6):06x}"
        fixture += _station_lines(
            sid, name, lat, lon, frng.choice((12, 16, 20, 24, 30)), i == count - 1
        )
    fixture.append("]")
    nano.files["fixtures/stations.json"] = "\n".join(fixture) + "\n"
    nick_line = 1 + at * 8 + 3  # "[" then 8 lines per station; the name is its third line

    def slot(path: str, share: float, header: str, router: str | None = None) -> None:
        want = budget(share)
        if want < 400:
            return
        nano.files[path] = _ts_filler(frng, want, header, router)
        nano.read(path, filler=True, text=frng.choice(("", "", f"Checking {path} too.")))

    # --- 1. the ask ---------------------------------------------------------------------------
    doc = _fill(_OPS_DOC, city=city)
    mention = f"=== File: rebalancing.md ===\n{doc}\n{'=' * len('=== File: rebalancing.md ===')}"
    s.user(
        rng.choice(
            (
                f"we need a rebalancing planner for the vans. ops wrote their rules down:\n\n"
                f"{mention}\n\n"
                f"what I want: every {every[0]} minutes take the latest snapshot per station, pair "
                f"the ones running dry with ones that have bikes to spare, and store a plan the "
                f"drivers can work from. a van takes {cap[0]} bikes per run. two rules from my "
                f"side: no npm: specifiers anywhere, this repo stays jsr-only. and whatever goes "
                f"into KV keeps its timestamps as epoch millis in UTC — {tz} only happens in the "
                f"admin UI.",
                f"{mention}\n\n"
                f"^ that's fleet ops' doc. can you build the planner for it? the idea: a job runs "
                f"every {every[0]} minutes, reads the newest snapshot of each station, matches "
                f"short stations with full ones, and saves the moves somewhere ops can read them. "
                f"vans hold {cap[0]} bikes. please keep the dependency graph jsr-only, i.e. no "
                f"npm: specifiers. also timestamps in KV are epoch millis in UTC, always — the "
                f"{tz} conversion is the admin UI's business.",
            )
        )
    )

    t_map = rng.choice(("Map station snapshot keys in KV", "Map how snapshots sit in KV"))
    t_plan = "Planner: pair short and surplus stations"
    t_test = rng.choice(("Tests for the planner", "Planner tests"))
    t_sched = "Schedule the sweep on Deploy"
    t_prev = rng.choice(("Admin preview of the plan", "Plan preview for ops"))
    t_ping = rng.choice(
        ("Driver ping through the dispatch webhook", "Notify drivers via the dispatch webhook")
    )
    t_maint = rng.choice(
        ("Keep maintenance stations out of every move", "Exclude maintenance stations from plans")
    )
    t_back = rng.choice(
        ("Backfill last month's snapshot history", "Backfill snapshot history for the dashboard")
    )
    plan_tasks = [t_map, t_plan, t_test, t_sched, t_prev, t_ping]

    def todo(
        done: int, active: int | None, tasks: Sequence[str] = plan_tasks
    ) -> list[tuple[str, str]]:
        return [
            (t, "completed" if i < done else "in_progress" if i == active else "pending")
            for i, t in enumerate(tasks)
        ]

    nano.tasks(todo(0, None), text=rng.choice(("Breaking this down first.", "")))
    nano.call("git_status", {}, f"Branch: {branch}\nUpstream: not set\n\nWorking tree clean")
    dirs = ["fixtures", "scripts", "src", "src/lib", "src/routes", "src/stations"]
    listing = [
        "AGENTS.md",
        "README.md",
        "deno.json",
        "deno.lock",
        "fixtures/stations.json",
        "scripts/peek_kv.ts",
        "scripts/rebalance_legacy.ts",
        "src/lib/geo.ts",
        "src/lib/time.ts",
        "src/main.ts",
        "src/routes/admin.ts",
        "src/routes/public.ts",
        "src/routes/public_test.ts",
        "src/stations/feed_types.ts",
        "src/stations/ingest.ts",
        "src/stations/repo.ts",
        "src/stations/repo_test.ts",
        "src/stations/types.ts",
    ]
    listing = [f"{d}/" for d in sorted(dirs, key=_collated)] + sorted(listing, key=_collated)
    nano.call(
        "list_directory",
        {"path": ".", "recursive": True, "maxDepth": 3},
        'Directory contents for ".":\n\n'
        + "\n".join(listing)
        + "\n\n[Recursive: showing entries up to depth 3]",
    )
    nano.tasks(todo(0, 0))
    explore = (
        "## Station data in Deno KV\n\n"
        '- `["stations", <id>]` → `Station` (src/stations/types.ts). Written by '
        "`src/stations/ingest.ts` from the GBFS station_information feed, hourly.\n"
        '- `["snap", <id>, "latest"]` → newest `Snapshot`; `["snap", <id>, <at>]` → history, '
        "written together in one atomic op by `putSnapshot` (src/stations/repo.ts), history "
        "expires after 7 days.\n"
        "- station_status is polled every 60 s by `startIngest()` (called from src/main.ts); "
        "each poll writes one snapshot per station.\n"
        "- `latestSnapshots(ids)` in repo.ts reads the latest keys with a single `kv.getMany` "
        "call. Nothing in src/ calls it yet.\n"
        "- `Snapshot.lastUndock` carries `{ riderId, at }` straight from the operator's "
        "extended feed.\n\n"
        "## Existing rebalancing code\n\n"
        "- `scripts/rebalance_legacy.ts`: standalone script from the winter pilot. Reads a CSV "
        "export, prints moves to stdout. Not imported anywhere; only referenced by the "
        "`legacy-rebalance` task in deno.json.\n\n"
        "## Helpers\n\n"
        "- `src/lib/geo.ts` exports a great-circle distance helper and a bounding-box helper.\n"
        "- `src/lib/time.ts`: formatting helpers for the admin UI (time zone aware).\n\n"
        "## Tests\n\n"
        "- `deno task test` sets KV_PATH=:memory:, so repo.ts opens an in-memory KV.\n"
        f"- {pre} tests across src/routes/public_test.ts and src/stations/repo_test.ts."
    )
    nano.call(
        "agent",
        {
            "subagent_type": "explore",
            "description": "Map how station snapshots are stored in Deno KV: key "
            "layout, who writes them and how often, how they are "
            "read, and any existing rebalancing code.",
        },
        explore,
    )
    nano.calls(
        [
            (
                "read_file",
                {"path": "src/stations/repo.ts"},
                nano.read_result("src/stations/repo.ts"),
            ),
            (
                "read_file",
                {"path": "src/stations/types.ts"},
                nano.read_result("src/stations/types.ts"),
            ),
        ]
    )
    # The fixture's size first (read_file's metadata_only), then its start (filler).
    stations_json = nano.files["fixtures/stations.json"]
    nano.call(
        "read_file",
        {"path": "fixtures/stations.json", "metadata_only": True},
        'File Information for "fixtures/stations.json"\n'
        f"{'=' * 50}\n\n"
        "Type: file\n"
        f"Size: {len(stations_json)} bytes\n"
        "Last Modified: 2026-10-29T14:12:05.118Z\n"
        "Readable: yes\n"
        f"Lines: {len(stations_json.split(chr(10)))}\n"
        f"Estimated Tokens: ~{math.ceil(len(stations_json) / 4)}\n"
        "File Type: JSON\n"
        "Encoding: UTF-8\n"
        "\n[Use read_file to view file contents]\n",
    )
    want = budget(0.22)
    end = 1
    size = 0
    lines = nano.files["fixtures/stations.json"].split("\n")
    while end < min(len(lines), nick_line - 8) and size < want:
        size += len(lines[end]) + 3
        end += 1
    if want >= 400:
        nano.read(
            "fixtures/stations.json",
            start=1,
            end=end,
            filler=True,
            text=frng.choice(("Looking at what a station record holds.", "")),
        )
    slot(
        "src/stations/ingest.ts",
        0.26,
        'import * as log from "@std/log";\nimport { kv, putSnapshot, putStation } from '
        '"./repo.ts";\nimport type { FeedMeta } from "./types.ts";',
    )
    nano.read("deno.json")
    nano.call(
        "search_file_contents",
        {"query": "export function", "path": "src/lib"},
        "Found 5 matches:\n\n"
        "src/lib/geo.ts:8:export function haversineKm(lat1: number, lon1: number, lat2: number, "
        "lon2: number): number {\n"
        "src/lib/geo.ts:19:export function bbox(lat: number, lon: number, km: number): BBox {\n"
        "src/lib/time.ts:4:export function localTime(epochMs: number, tz: string): string {\n"
        "src/lib/time.ts:12:export function localDate(epochMs: number, tz: string): string {\n"
        "src/lib/time.ts:20:export function minutesAgo(epochMs: number, now = Date.now()): "
        "number {",
    )
    plan_text = rng.choice(
        (
            "Got the layout. Plan:\n"
            "- `src/rebalance/planner.ts`: pure — stations + latest snapshots in, moves out.\n"
            "- scheduling: every short station gets its own `kv.enqueue` message, and a "
            "`listenQueue` handler plans the move for that one station, so a slow station "
            "doesn't hold up the rest.\n"
            "- ops preview once a plan is stored.\n\nPlanner first.",
            "OK, snapshots are keyed per station with a `latest` key — easy to read in bulk.\n\n"
            "How I'll build it: a pure planner in `src/rebalance/planner.ts`, then a fan-out "
            "where each short station becomes one `kv.enqueue` message handled by "
            "`listenQueue`; each handler works out one van move. Preview for ops after that.",
        )
    )
    nano.tasks(todo(1, 1), text=plan_text)
    nano.file_op("mkdir", "src/rebalance")
    d2 = rng.choice(
        (
            f"Short stations get served emptiest first. Each one draws from the nearest "
            f"surplus station by haversine distance between the docks; when two donors are "
            f"equally far, the one holding more bikes gives. A move is capped by what the donor "
            f"can spare above the high mark and by the van's {cap[0]} bikes, and anything under "
            f"3 bikes is skipped, per the ops notes.",
            f"The matching works like this: emptiest short station first, donor = the nearest "
            f"surplus station by haversine distance, ties to the donor with more bikes. Moves "
            f"stop at the donor's spare bikes above 70% and at {cap[0]} bikes per van; moves "
            f"under 3 bikes are dropped.",
        )
    )
    nano.write("src/rebalance/planner.ts", _fill(_PLANNER_TS, cap=cap[0]), text=d2)
    planner_url = nano.url("src/rebalance/planner.ts")
    err_line = (
        nano.files["src/rebalance/planner.ts"]
        .split("\n")
        .index("    const km = distance(need, donor);")
        + 1
    )
    nano.bash(
        "deno check src/rebalance/planner.ts",
        "",
        f"Check {planner_url}\n"
        "error: TS2345 [ERROR]: Argument of type 'Level | undefined' is not assignable to "
        "parameter of type 'Level'.\n"
        "  Type 'undefined' is not assignable to type 'Level'.\n"
        "    const km = distance(need, donor);\n"
        f"{' ' * 30}~~~~~\n"
        f"    at {planner_url}:{err_line}:31\n",
        1,
    )
    nano.replace(
        "src/rebalance/planner.ts",
        "    const donor = nearest(need, spare);\n    const km = distance(need, donor);",
        "    const donor = nearest(need, spare);\n    if (!donor) break;\n"
        "    const km = distance(need, donor);",
        text=rng.choice(
            (
                "TS2345: `nearest` can come back empty. Guarding it.",
                "`donor` may be undefined when nothing has spare bikes — TS2345. "
                "Stop the loop there.",
            )
        ),
    )
    nano.bash("deno check src/rebalance/planner.ts", "", f"Check {planner_url}\n")
    nano.tasks(todo(2, 2))
    nano.write("src/rebalance/planner_test.ts", _TEST_TS)
    test_path = "src/rebalance/planner_test.ts"

    def suite(
        extra_fail: dict[str, str] | None = None,
    ) -> list[tuple[str, list[tuple[str, str | None]]]]:
        body = nano.files[test_path]
        names = [line.split('"')[1] for line in body.split("\n") if line.startswith("Deno.test(")]
        fails = extra_fail or {}
        return [(test_path, [(n, fails.get(n)) for n in names])] + [
            (path, [(n, None) for n in names_]) for path, names_ in others
        ]

    body = nano.files[test_path]
    emptiest_at = body[: body.index('Deno.test("fills the emptiest')].count("\n") + 1
    ten_at = body[: body.index('Deno.test("latestSnapshots reads')].count("\n") + 1
    repo_url = nano.url("src/stations/repo.ts")
    get_many = (
        _REPO_TS.split("\n").index("  const entries = await kv.getMany<Snapshot[]>(keys);") + 1
    )
    too_many = (
        "TypeError: Too many ranges (max 10)\n"
        "    at Kv.getMany (ext:deno_kv/01_db.ts:96:38)\n"
        f"    at latestSnapshots ({repo_url}:{get_many}:28)\n"
        f"    at «at»:{ten_at + 3}:21"
    )
    first_run = {
        "fills the emptiest station first": _assertion("st_b", "st_a", emptiest_at + 3),
        "latestSnapshots reads more than ten stations": too_many,
    }
    out, err, code, _, _ = _deno_test(rng, nano, suite(first_run))
    nano.bash("deno task test", out, err, code)
    nano.replace(
        "src/stations/repo.ts",
        """  const keys = ids.map((id) => ["snap", id, "latest"]);
  const entries = await kv.getMany<Snapshot[]>(keys);
  const out = new Map<string, Snapshot>();
  for (const entry of entries) {
    if (entry.value) out.set(entry.value.stationId, entry.value);
  }
  log.debug(`latest snapshots: ${JSON.stringify(entries.map((e) => e.value))}`);
  return out;""",
        """  const out = new Map<string, Snapshot>();
  // getMany takes at most 10 keys per call.
  for (let i = 0; i < ids.length; i += 10) {
    const keys = ids.slice(i, i + 10).map((id) => ["snap", id, "latest"]);
    const entries = await kv.getMany<Snapshot[]>(keys);
    for (const entry of entries) {
      if (entry.value) out.set(entry.value.stationId, entry.value);
    }
    log.debug(`latest snapshots: ${JSON.stringify(entries.map((e) => e.value))}`);
  }
  return out;""",
        text=rng.choice(
            (
                "Two failures:\n"
                "- `TypeError: Too many ranges (max 10)` — `kv.getMany` accepts at most ten "
                "keys, and the city has far more stations. Reading in batches of ten.\n"
                "- the short list is sorted fullest-first; the comparator is backwards.",
                "Both failures are mine. `getMany` caps out at ten keys (`TypeError: Too many "
                "ranges (max 10)`), so latestSnapshots has to batch; and the sort puts the "
                "fullest short station first.",
            )
        ),
    )
    nano.replace(
        "src/rebalance/planner.ts",
        ".sort((a, b) => b.fill - a.fill);",
        ".sort((a, b) => a.fill - b.fill);",
    )
    out, err, code, passed, _ = _deno_test(rng, nano, suite())
    nano.bash("deno task test", out, err, code)
    assert passed == pre + 6

    # --- the schedule: a reversal ----------------------------------------------------------
    nano.tasks(todo(3, 3))
    nano.call(
        "fetch_url",
        {"url": "https://docs.deno.com/deploy/kv/manual/queue_overview/"},
        _QUEUE_DOCS,
        text=rng.choice(
            (
                "Checking the queue semantics on Deploy before wiring the fan-out.",
                "Before the enqueue fan-out: what does Deploy promise about delivery?",
            )
        ),
    )
    d1 = rng.choice(
        (
            "That settles it the other way. Delivery is at-least-once, so a redelivered message "
            "for a station is a second van sent to it — rule 3 of the ops notes. No "
            "per-station kv.enqueue after all: a single Deno.cron job runs the sweep, plans "
            "every move in one pass and stores the plan under one key. One writer, nothing to "
            "dedupe.",
            "Reading this, the per-station kv.enqueue fan-out doesn't hold: messages can arrive "
            "twice and in any order, and every duplicate is another van on the road. The sweep "
            "becomes one Deno.cron job computing the whole plan at once and writing it in a "
            "single atomic op.",
        )
    )
    cron = [f"*/{n} * * * *" for n in every]
    nano.write("src/rebalance/sweep.ts", _fill(_SWEEP_TS, cron=cron[0]), text=d1)
    nano.replace(
        "src/main.ts",
        'import { startIngest } from "./stations/ingest.ts";',
        'import { startIngest } from "./stations/ingest.ts";\nimport "./rebalance/sweep.ts";',
        text="The cron has to be registered at module load, so main.ts imports sweep.ts.",
    )
    nano.read("src/main.ts")
    nano.replace(
        "src/main.ts",
        'import { startIngest } from "./stations/ingest.ts";',
        'import { startIngest } from "./stations/ingest.ts";\nimport "./rebalance/sweep.ts";',
    )
    nano.replace(
        "deno.json",
        '"unstable": ["kv"],',
        '"unstable": ["kv", "cron"],',
        text="Deno.cron needs the cron unstable flag.",
    )
    main_url = nano.url("src/main.ts")
    nano.bash("deno task check", "", f"Task check deno check src/main.ts\nCheck {main_url}\n")
    nano.tasks(todo(4, 4))
    preview = "GET /admin/rebalance/preview — JSON of the latest plan"
    nano.call(
        "ask_user",
        {
            "question": "How should ops look at a plan before the vans go out?",
            "options": [preview, "deno task plan — print the latest plan as a table"],
            "questionType": "decision",
        },
        preview,
    )
    nano.read("src/routes/admin.ts")
    slot(
        "src/routes/public.ts",
        0.26,
        'import { Hono } from "hono";\nimport { kv } from "../stations/repo.ts";\n\n'
        "export const publicApi = new Hono();",
        "publicApi",
    )
    nano.replace(
        "src/routes/admin.ts",
        'import type { StationStatus } from "../stations/types.ts";',
        'import type { StationStatus } from "../stations/types.ts";\n'
        'import type { Plan } from "../rebalance/sweep.ts";',
    )
    nano.replace(
        "src/routes/admin.ts",
        'admin.get("/health/kv", async (c) => {',
        """admin.get("/rebalance/preview", async (c) => {
  const plan = await kv.get<Plan>(["rebalance", "plan", "latest"]);
  if (!plan.value) return c.json({ at: null, moves: [] });
  return c.json(plan.value);
});

admin.get("/health/kv", async (c) => {""",
    )
    nano.bash("deno task check", "", f"Task check deno check src/main.ts\nCheck {main_url}\n")
    nano.tasks(todo(5, None))
    s.say(
        rng.choice(
            (
                f"Planner, sweep and preview are in:\n"
                f"- `src/rebalance/planner.ts` + tests ({pre + 6} passing overall)\n"
                f"- `src/rebalance/sweep.ts`: `Deno.cron` at `{cron[0]}`, plan stored under "
                f'`["rebalance", "plan", "latest"]`\n'
                f"- `GET /admin/rebalance/preview` behind the existing admin token\n\n"
                f"Left on the list: the driver ping through the dispatch webhook. Start on it?",
                f"Done with the first five tasks. The sweep runs on `{cron[0]}` and ops can "
                f"read the current plan at `/admin/rebalance/preview`. Test suite: "
                f"{pre + 6} passed. Only the dispatch ping for drivers is still open — shall I "
                f"go on?",
            )
        )
    )

    # --- 2. the first change of the interval -------------------------------------------------
    s.user(
        rng.choice(
            (
                f"talked to ops, {every[0]} is too slow for the morning peak. they want it every "
                f"{every[1]} minutes",
                f"hm, ops say by the time a {every[0]}-minute plan reaches the van the station's "
                f"empty again. make it every {every[1]} minutes",
            )
        )
    )
    nano.replace("src/rebalance/sweep.ts", f'"{cron[0]}"', f'"{cron[1]}"')
    s.say(
        rng.choice(
            (
                f"Sweep cron is `{cron[1]}` now — every {every[1]} minutes.",
                f"Changed: the sweep fires every {every[1]} minutes (`{cron[1]}`).",
            )
        )
    )

    # --- 3. who wrote the legacy script; it goes ---------------------------------------------
    s.user(
        rng.choice(
            (
                "who added scripts/rebalance_legacy.ts originally? want to credit them in the "
                f"PR. after that it can go, nobody has run it since {month}",
                "before I forget: find out which commit brought in the legacy rebalance script "
                "and who wrote it, I'd like to thank them in the PR description. then delete "
                f"the thing, it's been dead since {month}",
            )
        )
    )
    others_log = [
        (f"{rng.randrange(16**7):07x}", subject, when, name, addr)
        for subject, when, (name, addr) in (
            (
                "legacy rebalance: skip stations without a feed",
                "7 months ago",
                rng.choice(_AUTHORS),
            ),
            ("rebalance script: thresholds from env", "9 months ago", rng.choice(_AUTHORS)),
        )
    ]
    domain = f"{org}.example"
    log_text = f"Showing 3 commit(s) on {branch}:\n\n" + "\n".join(
        f"{h} {subject} ({when})\n  Author: {name} <{addr}{domain}>"
        for h, subject, when, name, addr in [
            *others_log,
            (
                legacy_hash,
                "add rebalance script for the winter pilot",
                "1 year, 2 months ago",
                author,
                mail,
            ),
        ]
    )
    nano.call("git_log", {"file": "scripts/rebalance_legacy.ts"}, log_text)
    nano.call(
        "search_file_contents", {"query": "rebalance_legacy"}, nano.search("rebalance_legacy")
    )
    nano.file_op("delete", "scripts/rebalance_legacy.ts")
    nano.replace(
        "deno.json",
        '    "ingest": "deno run -A src/stations/ingest.ts --once",\n'
        '    "legacy-rebalance": "deno run -A scripts/rebalance_legacy.ts"',
        '    "ingest": "deno run -A src/stations/ingest.ts --once"',
    )
    s.say(
        rng.choice(
            (
                f'It came in with {legacy_hash} — {author}, "add rebalance script for the '
                f'winter pilot", about 14 months ago. Two later commits touched it. The script '
                f"is deleted and its `legacy-rebalance` task is out of deno.json.",
                f'{author} wrote it: commit {legacy_hash} ("add rebalance script for the winter '
                f'pilot"). Deleted the file; the only reference was the `legacy-rebalance` task '
                f"in deno.json, removed as well.",
            )
        )
    )

    # --- 4. the ping is dropped; rider ids stay out of logs ------------------------------------
    s.user(
        rng.choice(
            (
                "leave the driver ping out, dispatch is rebuilding their webhook and nobody knows "
                "when it'll be back. other thing: I saw the latest-snapshots debug line on "
                "deploy yesterday, it dumps whole records. rider ids must never end up in logs, "
                "legal was very clear on that",
                "forget the dispatch ping for now, their webhook is being rewritten. more "
                "important: the debug log in latestSnapshots prints full snapshots incl. "
                "lastUndock. rider ids must never end up in logs. fix that pls",
            )
        )
    )
    nano.tasks(todo(5, None, plan_tasks[:5]))
    nano.replace(
        "src/stations/repo.ts",
        "export async function latestSnapshots(",
        """/** A snapshot fit for a log line: who undocked last is never written out. */
export function withoutRider(snap: Snapshot): Omit<Snapshot, "lastUndock"> {
  const { lastUndock: _, ...rest } = snap;
  return rest;
}

export async function latestSnapshots(""",
        text=rng.choice(
            (
                "Dropped the ping from the list. Now the log line.",
                "Ping is off the list. Redacting the snapshot log next.",
            )
        ),
    )
    nano.replace(
        "src/stations/repo.ts",
        "JSON.stringify(entries.map((e) => e.value))",
        "JSON.stringify(entries.map((e) => e.value && withoutRider(e.value)))",
    )
    nano.replace(
        test_path,
        'import { kv, latestSnapshots, putSnapshot } from "../stations/repo.ts";',
        'import { kv, latestSnapshots, putSnapshot, withoutRider } from "../stations/repo.ts";',
    )
    nano.replace(
        test_path,
        'Deno.test("latestSnapshots reads more than ten stations"',
        """Deno.test("withoutRider leaves no rider id behind", () => {
  const s: Snapshot = { ...snap("st_a", 3), lastUndock: { riderId: "r_91f2c0", at: 0 } };
  assertEquals(JSON.stringify(withoutRider(s)).includes("r_91f2c0"), false);
});

Deno.test("latestSnapshots reads more than ten stations\"""",
    )
    out, err, code, passed, _ = _deno_test(rng, nano, suite())
    nano.bash("deno task test", out, err, code)
    assert passed == pre + 7
    s.say(
        rng.choice(
            (
                "The debug line now logs snapshots through `withoutRider`, which drops "
                f"`lastUndock` entirely; a test checks no rider id survives. {passed} passed.",
                f"Fixed. `withoutRider` strips `lastUndock` before anything is logged, with a "
                f"test for it. Suite: {passed} passed, 0 failed.",
            )
        )
    )

    # --- 5. the user looks at the diff; the interval again and the van size -------------------
    stat_rows = []
    total_add = total_del = 0
    for path in sorted(original):
        before = original[path]
        after = nano.files.get(path, "")
        if before == after:
            continue
        added, removed = _numstat(before, after) if after else (0, len(before.split("\n")) - 1)
        stat_rows.append((path, added, removed))
        total_add += added
        total_del += removed
    width = max(len(p) for p, _, _ in stat_rows)
    stat = "".join(
        f" {p:<{width}} | {a + r:>2} {'+' * min(a, 40)}{'-' * min(r, 40)}\n"
        for p, a, r in stat_rows
    ) + (f" {len(stat_rows)} files changed, {total_add} insertions(+), {total_del} deletions(-)\n")
    s.user(f"Bash command output:\n```\n$ git diff --stat\nEXIT_CODE: 0\n{stat}\n```")
    s.user(
        rng.choice(
            (
                f"ok. two numbers to change: at {every[1]} minutes the KV read units add up "
                f"fast, make the sweep every {every[2]} minutes and that's where it stays. and "
                f"the new trailers take {cap[1]} bikes, the {cap[0]} was the old vans",
                f"looks fine. numbers: every {every[1]} minutes burns too many KV reads — every "
                f"{every[2]} minutes, that one is settled now. also the vans got trailers, they "
                f"carry {cap[1]} bikes",
            )
        )
    )
    nano.replace("src/rebalance/sweep.ts", f'"{cron[1]}"', f'"{cron[2]}"')
    nano.replace(
        "src/rebalance/planner.ts",
        f"export const TRUCK_CAPACITY = {cap[0]};",
        f"export const TRUCK_CAPACITY = {cap[1]};",
    )
    out, err, code, passed, _ = _deno_test(rng, nano, suite())
    nano.bash("deno task test", out, err, code)
    s.say(
        rng.choice(
            (
                f"Sweep runs every {every[2]} minutes (`{cron[2]}`), and a move now carries up "
                f"to {cap[1]} bikes. Tests still green.",
                f"Both changed: cron `{cron[2]}` (every {every[2]} minutes), TRUCK_CAPACITY = "
                f"{cap[1]}, so {cap[1]} bikes per run. Nothing broke.",
            )
        )
    )

    # --- 6. the station ops ask about; maintenance; the backfill --------------------------------
    s.user(
        rng.choice(
            (
                f"next: stations in maintenance must never be part of a move, neither end. the "
                f"one ops call {nick} is shut for resurfacing all month — what's its station id "
                f"btw? ops keep asking me. and put the snapshot backfill on the list, they want "
                f"last month's history on the dashboard. not today though",
                f"new rule: a station with status maintenance can't give or take bikes. "
                f"{nick} is one of them right now (resurfacing) — which id does it have in the "
                f"fixtures? people keep asking. also add the snapshot backfill to the tasks, "
                f"ops want a month of history for the dashboard, later",
            )
        )
    )
    context = "\n".join(
        f"{n}: {line}"
        for n, line in enumerate(
            nano.files["fixtures/stations.json"].split("\n")[nick_line - 3 : nick_line + 2],
            start=nick_line - 2,
        )
    )
    nano.call(
        "search_file_contents",
        {"query": nick, "path": "fixtures", "contextLines": 2},
        f"Found 1 match:\n\nfixtures/stations.json:{nick_line}-\n{context}",
    )
    final_tasks = [*plan_tasks[:5], t_maint, t_back]
    nano.tasks(
        todo(5, 5, final_tasks),
        text=rng.choice(
            (
                f"{nick} is {nick_id} ({nick_full}, {docks_nick} docks). Adding the two tasks.",
                f'It\'s {nick_id} — "{nick_full}" in the fixtures, {docks_nick} docks. Tasks '
                f"updated.",
            )
        ),
    )
    peek = "deno run -A scripts/peek_kv.ts --remote staging --prefix stations"
    nano.call(
        "execute_bash",
        {"command": peek},
        "Tool execution was cancelled by the user.",
        text="Checking which stations are flagged maintenance right now.",
    )
    s.user(
        rng.choice(
            (
                "no. nothing from this laptop talks to the staging KV, ever. fixtures and the "
                "in-memory KV only",
                "nope, don't touch the staging KV from here — local fixtures and tests only, "
                "that's a hard line",
            )
        )
    )
    slot(
        "src/stations/feed_types.ts",
        0.26,
        "// GBFS 2.3 payloads as the operator's feed sends them.\n"
        'import type { StationStatus } from "./types.ts";',
    )
    nano.replace(
        "src/rebalance/planner.ts",
        "  const short = all.filter((l) => l.fill < LOW_WATER).sort((a, b) => a.fill - b.fill);",
        '  const open = all.filter((l) => l.station.status !== "maintenance");\n'
        "  const short = open.filter((l) => l.fill < LOW_WATER).sort((a, b) => a.fill - b.fill);",
        text=rng.choice(
            (
                "Understood — fixtures only. Filtering maintenance stations in the planner.",
                "Got it, staying local. On to the maintenance rule.",
            )
        ),
    )
    nano.replace(
        test_path,
        'Deno.test("latestSnapshots reads more than ten stations"',
        f"""Deno.test("{maint}", () => {{
  const stations = [
    station("st_short", 0, 0),
    {{ ...station("st_shut", 0, 0.001), status: "maintenance" as const }},
    station("st_far", 0, 0.01),
  ];
  const levels = snaps(snap("st_short", 0), snap("st_shut", 20), snap("st_far", 20));
  assertEquals(planMoves(stations, levels).map((m) => m.from), ["st_far"]);
}});

Deno.test("latestSnapshots reads more than ten stations\"""",
    )
    body = nano.files[test_path]
    maint_at = body[: body.index(f'Deno.test("{maint}"')].count("\n") + 1
    out, err, code, passed, failed = _deno_test(
        rng, nano, suite({maint: _assertion("st_shut", "st_far", maint_at + 7)})
    )
    nano.bash("deno task test", out, err, code)
    assert (passed, failed) == (pre + 7, 1)
    s.say(
        rng.choice(
            (
                "The new test fails: the move still comes from st_shut. I only filtered the "
                "short side — the spare list is built from `all`, so a maintenance station can "
                "still be the donor. The fix is `open` on the spare line too. Want me to make it?",
                "Red: the planner took bikes from the maintenance station. My filter covers "
                "the receiving side only; donors still come from the unfiltered list. Fix it "
                "now?",
            )
        )
    )

    # --- 7. the user stops for the day ------------------------------------------------------------
    s.user(
        rng.choice(
            (
                f"leave it red, I'll pair on it with {colleague} tomorrow, maintenance vs closed "
                f"needs a proper rule anyway. don't commit, I want to read the whole diff first. "
                f"that's it for today",
                f"no, keep it failing — {colleague} and I want to sort out the status model "
                f"first. I'll go through the diff and commit myself. stop here",
            )
        )
    )
    last = rng.choice(
        (
            f"Leaving it as it is — uncommitted on {branch}. Until tomorrow.",
            f"OK, stopping here. Nothing committed; the working tree on {branch} stays as is.",
        )
    )
    s.say(last)

    # --- the facts ------------------------------------------------------------------------------
    s.fact("constraint", "No npm: specifiers; the repository stays jsr-only.", ["npm:"])
    s.fact("constraint", "Timestamps stored in KV are epoch millis in UTC.", ["epoch millis"])
    s.fact("constraint", "Rider ids must never end up in logs.", ["rider ids"])
    s.fact(
        "constraint",
        "Nothing touches the staging KV; fixtures and the in-memory KV only.",
        ["staging KV"],
    )
    for path in ("src/stations/repo.ts", "src/main.ts", "deno.json", "src/routes/admin.ts"):
        s.fact("file_modified", f"Modified {path}.", [path])
    for path in (
        "src/rebalance/planner.ts",
        "src/rebalance/planner_test.ts",
        "src/rebalance/sweep.ts",
    ):
        s.fact("file_created", f"Created {path}.", [path])
    s.fact("file_deleted", "Deleted scripts/rebalance_legacy.ts.", ["scripts/rebalance_legacy.ts"])
    s.fact(
        "error_resolved",
        "deno check failed with TS2345 (donor possibly undefined); fixed.",
        ["TS2345"],
        required=False,
    )
    s.fact(
        "error_resolved",
        "kv.getMany refused more than ten keys; latestSnapshots batches.",
        ["Too many ranges (max 10)"],
        required=False,
    )
    s.fact(
        "error_open", f"The test '{maint}' fails: a maintenance station is still a donor.", [maint]
    )
    s.fact(
        "decision",
        "The sweep is one Deno.cron job planning every move in one pass (the per-station "
        "kv.enqueue fan-out was dropped: at-least-once delivery could send two vans).",
        ["Deno.cron"],
        stale=["kv.enqueue"],
    )
    s.fact(
        "decision",
        "Short stations draw from the nearest surplus station by haversine "
        "distance, emptiest first.",
        ["haversine"],
    )
    s.fact(
        "decision",
        "Ops preview the plan at GET /admin/rebalance/preview (chosen by the user).",
        ["/admin/rebalance/preview"],
    )
    s.fact("todo", f"Done: {t_plan}.", [t_plan], required=False)
    s.fact("todo", f"Done: {t_sched}.", [t_sched], required=False)
    s.fact("todo", f"Dropped by the user: {t_ping}.", [t_ping], required=False)
    s.fact("todo", f"In progress: {t_maint}.", [t_maint])
    s.fact("todo", f"Pending, added late: {t_back}.", [t_back])
    s.fact(
        "changed_value",
        f"The sweep runs every {every[2]} minutes (was {every[0]}, then {every[1]}).",
        [f"every {every[2]} minutes"],
        stale=[f"every {every[0]} minutes", f"every {every[1]} minutes"],
    )
    s.fact(
        "changed_value",
        f"A van carries {cap[1]} bikes (was {cap[0]}).",
        [f"{cap[1]} bikes"],
        stale=[f"{cap[0]} bikes"],
    )
    s.fact("identifier", f"The station ops call {nick} is {nick_id}.", [nick_id])
    s.fact(
        "identifier",
        f"The legacy script came in with commit {legacy_hash} by {author}.",
        [legacy_hash],
    )
    s.fact(
        "test_status",
        f"deno task test: {pre + 7} passed, 1 failed.",
        [f"{pre + 7} passed | 1 failed"],
        stale=[f"{pre + 7} passed | 0 failed"],
    )
    s.fact("last_message", last, [last])
    return s


def write(seed: int, tokens: int) -> EvalSession:
    """One nanostory-style session of about `tokens` tokens."""
    bare = _tell(seed, 0)
    # JSON-escaped code and tool output run a little denser than the shared estimate.
    room = int(tokens * CHARS_PER_TOKEN * 1.045) - bare.chars
    return finish_session(_tell(seed, max(0, room)), family=FAMILY, seed=seed)
