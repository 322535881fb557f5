"""cxstory-style: an OpenAI Codex CLI session in native function calls (OpenAI chat), on a
TypeScript / Node pnpm monorepo, with a story of its own (not `story.tell`, not ccstory's).

Tools and arguments as Codex CLI declares them: `shell` {command: argv (here always
["bash", "-lc", "…"]), workdir, timeout_ms}; `apply_patch` {input: "*** Begin Patch …
*** End Patch"} with `*** Add File:`, `*** Update File:` (hunks after `@@`, lines prefixed
" ", "-", "+") and `*** Delete File:` sections; `update_plan` {explanation, plan: [{step,
status}]} (status pending / in_progress / completed; a step is dropped by leaving it out of
the next plan). Results as Codex hands them to the model: a shell result is "Exit code: N\nWall
time: S seconds\nOutput:\n…"; apply_patch answers "Success. Updated the following files:" with
one `A`/`M`/`D path` line per file, in the same envelope; update_plan answers "Plan updated".
Codex sends its `<environment_context>` (cwd, approval policy, sandbox mode, network access,
shell) as a message of its own; here it closes the system prompt so that the user's first
message is the task. Reads go through the shell (`sed -n`, `cat`, `rg -n`), as Codex does.

The story: a pnpm monorepo's `reports` package gets a CSV export of a tenant's invoices (vitest,
tsc, eslint). The user sets three rules (no CSV library, a Node major version, amounts as
integer cents), a page size and a request timeout. The assistant reads the old dashboard's
exporter and is corrected to the route under packages/…; builds the CSV as one string, moves it
to a Node `Readable.from` generator (memory), then (the user saying the route runs on the edge
runtime) to a web `ReadableStream` pulling one page per pull; pagination moves from
LIMIT/OFFSET to keyset. The page size changes twice, the timeout once; the user forbids touching
packages/sdk, drops the XLSX step, adds a Playwright step and asks which commit moved amounts to
cents. A quoting test fails and is fixed, tsc's TS2345 and eslint's no-unused-vars are fixed, a
timezone test stays red. The last message names no fact.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    code_file,
    finish_session,
    hexid,
)
from compaction.eval.sessions import EvalSession

FAMILY = "cxstory-style"

SCOPES = ("ledgerline", "paystack-ops", "tallyhq", "invoicely", "brightbooks", "quillbill")
QUERY_FNS = ("selectInvoicePage", "fetchInvoiceBatch", "loadTenantInvoices", "queryInvoiceRows")
NODES = ("Node 18", "Node 20")
#: (first page size, raised, settled): no value stands inside another.
PAGES = ((250, 2000, 800), (400, 1500, 750), (300, 1200, 600), (200, 1600, 900))
#: (first request timeout, later).
TIMEOUTS = (
    ("20 seconds", "45 seconds"),
    ("15 seconds", "60 seconds"),
    ("25 seconds", "90 seconds"),
)
QUOTE_TESTS = (
    "quotes fields containing the delimiter",
    "wraps values with commas in double quotes",
    "escapes embedded quotes by doubling them",
)
TZ_TESTS = (
    "renders issued_at in the tenant timezone",
    "uses the tenant's zone for the issued date",
    "formats issued_at with the tenant offset",
)
OTHER_MODULES = (
    "packages/reports/src/format/date.ts",
    "packages/reports/src/format/currency.ts",
    "packages/reports/src/routes/summary.ts",
    "packages/reports/src/db/tenants.ts",
    "packages/reports/src/middleware/auth.ts",
    "packages/shared/src/ids.ts",
    "packages/shared/src/result.ts",
    "packages/reports/src/routes/aging.ts",
    "packages/reports/src/db/pool.ts",
)
OTHER_TESTS = (
    "src/format/date.test.ts",
    "src/format/currency.test.ts",
    "src/routes/summary.test.ts",
    "src/routes/aging.test.ts",
    "src/db/tenants.test.ts",
    "src/middleware/auth.test.ts",
    "src/db/pool.test.ts",
    "src/routes/health.test.ts",
    "src/format/numbers.test.ts",
    "src/db/invoices.test.ts",
)

SYSTEM = """You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI \
on a user's computer.

## General
- The arguments to `shell` will be passed to execvp(). Most terminal commands should be \
prefixed with ["bash", "-lc"].
- Always set the `workdir` param when using the shell function. Do not use `cd` unless \
absolutely necessary.
- When searching for text or files, prefer using `rg` or `rg --files` because `rg` is much \
faster than alternatives like `grep`.

## Editing constraints
- Default to ASCII when editing or creating files.
- Use the apply_patch tool to edit files; never write files with shell redirection.
- You may be in a dirty git worktree. NEVER revert existing changes you did not make unless \
explicitly requested.

## Plan tool
When using the planning tool: skip it for the easiest tasks; do not make single-step plans; \
when you have made a plan, update it after having performed one of the sub-tasks that you \
shared on the plan. Exactly one step is in_progress until everything is done.

## Presenting your work
Your final message should read naturally, like an update from a concise teammate. Keep it \
short; do not restate every change when the user can see the diff.

<environment_context>
  <cwd>{root}</cwd>
  <approval_policy>on-request</approval_policy>
  <sandbox_mode>workspace-write</sandbox_mode>
  <network_access>restricted</network_access>
  <shell>bash</shell>
</environment_context>"""


def executed(code: int, seconds: float, output: str) -> str:
    """A tool result as Codex hands it to the model."""
    return f"Exit code: {code}\nWall time: {seconds:.1f} seconds\nOutput:\n{output}"


class Codex:
    """The session being written, in Codex CLI's function-call shapes, with a tiny file tree."""

    def __init__(self, rng: random.Random, root: str) -> None:
        self.rng = rng
        self.root = root
        self.s = Session(rng=rng, system=SYSTEM.replace("{root}", root))
        self.files: dict[str, list[str]] = {}

    def shell(
        self,
        script: str,
        output: str,
        *,
        code: int = 0,
        text: str = "",
        workdir: str = "",
        timeout_ms: int | None = None,
        filler: bool = False,
    ) -> None:
        args: dict[str, Any] = {"command": ["bash", "-lc", script], "workdir": workdir or self.root}
        if timeout_ms is not None:
            args["timeout_ms"] = timeout_ms
        seconds = self.rng.uniform(0.0, 0.4) if timeout_ms is None else self.rng.uniform(2, 9)
        self.s.call("shell", args, executed(code, seconds, output), text=text, filler=filler)

    def sed(
        self, path: str, start: int = 1, end: int = 0, *, text: str = "", filler: bool = False
    ) -> None:
        lines = self.files[path]
        end = end or len(lines)
        self.shell(
            f"sed -n '{start},{end}p' {path}",
            "\n".join(lines[start - 1 : end]),
            text=text,
            filler=filler,
        )

    def cat(self, path: str, *, text: str = "") -> None:
        self.shell(f"cat {path}", "\n".join(self.files[path]), text=text)

    def patch(self, sections: Sequence[tuple[str, str, str]], *, text: str = "") -> None:
        """One apply_patch call. `sections`: (kind Add/Update/Delete, path, body)."""
        body = ["*** Begin Patch"]
        done = []
        for kind, path, section in sections:
            body.append(f"*** {kind} File: {path}")
            if kind == "Add":
                body += [f"+{line}" for line in section.split("\n")]
                self.files[path] = section.split("\n")
            elif kind == "Update":
                body.append(section)
            else:
                self.files.pop(path, None)
            done.append(f"{kind[0]} {path}")
        body.append("*** End Patch")
        result = executed(0, 0.0, "Success. Updated the following files:\n" + "\n".join(done))
        self.s.call("apply_patch", {"input": "\n".join(body)}, result, text=text)

    def update(self, path: str, old: str, new: str, *, anchor: str = "", text: str = "") -> None:
        """An Update File section replacing `old` with `new` (both whole lines) in `path`."""
        content = "\n".join(self.files[path])
        assert content.count(old) == 1, (path, old)
        self.files[path] = content.replace(old, new).split("\n")
        hunk = [f"@@ {anchor}" if anchor else "@@"]
        hunk += [f"-{line}" for line in old.split("\n")]
        hunk += [f"+{line}" for line in new.split("\n")]
        self.patch([("Update", path, "\n".join(hunk))], text=text)

    def plan(
        self, steps: Sequence[tuple[str, str]], explanation: str = "", *, text: str = ""
    ) -> None:
        args: dict[str, Any] = {}
        if explanation:
            args["explanation"] = explanation
        args["plan"] = [{"step": step, "status": status} for step, status in steps]
        self.s.call("update_plan", args, "Plan updated", text=text)


# --- tool outputs --------------------------------------------------------------------------------

BAR = "⎯"


def vitest_run(
    rng: random.Random,
    pkg_dir: str,
    files: dict[str, int],
    failing: dict[str, tuple[str, list[str]]],
) -> tuple[str, str]:
    """(vitest's output, the Tests line's counts). `failing`: "file > suite > case" → (the
    short reason, the error block)."""
    lines = [f" RUN  v2.1.8 {pkg_dir}", ""]
    failed_files = {node.split(" > ")[0] for node in failing}
    for path, n in files.items():
        ms = rng.randint(4, 160)
        if path in failed_files:
            bad = [node for node in failing if node.startswith(path + " ")]
            lines.append(f" ❯ {path} ({n} tests | {len(bad)} failed) {ms}ms")
            for node in bad:
                case = " > ".join(node.split(" > ")[1:])
                lines.append(f"   × {case} {rng.randint(2, 30)}ms")
                lines.append(f"     → {failing[node][0]}")
        else:
            lines.append(f" ✓ {path} ({n} tests) {ms}ms")
    total = sum(files.values())
    nfail = len(failing)
    if failing:
        lines += ["", BAR * 7 + f" Failed Tests {nfail} " + BAR * 7, ""]
        for k, (node, (_, block)) in enumerate(failing.items(), start=1):
            lines += [f" FAIL  {node}", *block, "", BAR * 52 + f"[{k}/{nfail}]" + BAR, ""]
    nf = len(failed_files)
    nfiles = len(files)
    file_counts = (
        f"{nf} failed | {nfiles - nf} passed ({nfiles})" if nf else f"{nfiles} passed ({nfiles})"
    )
    counts = (
        f"{nfail} failed | {total - nfail} passed ({total})"
        if nfail
        else f"{total} passed ({total})"
    )
    lines += [
        f" Test Files  {file_counts}",
        f"      Tests  {counts}",
        f"   Start at  {rng.randint(9, 17):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
        f"   Duration  {rng.randint(1, 4)}.{rng.randint(10, 99)}s "
        f"(transform {rng.randint(200, 900)}ms, setup 0ms, "
        f"collect {rng.randint(1, 3)}.{rng.randint(1, 9)}s, tests {rng.randint(300, 990)}ms, "
        f"environment {rng.randint(0, 3)}ms, prepare {rng.randint(1, 2)}.{rng.randint(0, 9)}s)",
    ]
    return "\n".join(lines), counts


def git_log(rng: random.Random, n: int) -> str:
    subjects = [
        "reports: aging buckets by due date",
        "shared: tighten the Result helpers",
        "ci: cache the pnpm store",
        "deps: bump vitest",
        "reports: summary route returns 204 on empty tenants",
        "auth: accept the service token on internal routes",
        "db: raise the pool's idle timeout",
        "chore: prettier over packages/shared",
        "reports: currency symbols for the summary",
        "dashboard: hide the beta banner",
        "tsconfig: enable noUncheckedIndexedAccess",
    ]
    return "\n".join(f"{hexid(rng)} {rng.choice(subjects)}" for _ in range(n))


def api_log(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out.append(
            json.dumps(
                {
                    "level": rng.choice([30, 30, 30, 20, 40]),
                    "time": 1_764_000_000_000 + rng.randint(0, 9_999_999),
                    "reqId": f"req-{rng.randint(1, 9999)}",
                    "msg": rng.choice(["request completed", "incoming request", "pool checkout"]),
                    "route": rng.choice(["/summary", "/aging", "/health", "/tenants/:id"]),
                    "responseTime": round(rng.uniform(0.4, 220.0), 1),
                }
            )
        )
    return "\n".join(out)


# --- files ---------------------------------------------------------------------------------------


def package_json(scope: str, node: str) -> str:
    major = node.split()[1]
    return "\n".join(
        [
            "{",
            f'  "name": "@{scope}/reports",',
            '  "version": "3.7.2",',
            '  "private": true,',
            '  "type": "module",',
            f'  "engines": {{ "node": ">={major}" }},',
            '  "scripts": {',
            '    "build": "tsc -p tsconfig.build.json",',
            '    "typecheck": "tsc --noEmit",',
            '    "lint": "eslint src --max-warnings 0",',
            '    "test": "vitest run"',
            "  },",
            '  "dependencies": {',
            f'    "@{scope}/shared": "workspace:*",',
            '    "hono": "^4.6.10",',
            '    "kysely": "^0.27.4",',
            '    "zod": "^3.23.8"',
            "  },",
            '  "devDependencies": {',
            '    "@types/node": "^20.17.6",',
            '    "eslint": "^9.14.0",',
            '    "typescript": "^5.6.3",',
            '    "typescript-eslint": "^8.13.0",',
            '    "vitest": "^2.1.8"',
            "  }",
            "}",
        ]
    )


def invoices_ts(rng: random.Random, scope: str, query_fn: str, page: int) -> list[str]:
    head = [
        'import type { Kysely } from "kysely";',
        f'import type {{ TenantId }} from "@{scope}/shared";',
        'import type { DB } from "./schema";',
        "",
        f"export const INVOICE_PAGE_SIZE = {page};",
        "",
        "export interface InvoiceRow {",
        "  id: string;",
        "  number: string;",
        "  customerName: string;",
        "  issuedAt: Date;",
        "  dueAt: Date | null;",
        "  amountCents: number;",
        "  currency: string;",
        '  status: "draft" | "open" | "paid" | "void";',
        "}",
        "",
        f"export async function {query_fn}(",
        "  db: Kysely<DB>,",
        "  tenantId: TenantId,",
        "  page: number,",
        "): Promise<InvoiceRow[]> {",
        "  return db",
        '    .selectFrom("invoices")',
        '    .where("tenant_id", "=", tenantId)',
        '    .orderBy("issued_at")',
        "    .limit(INVOICE_PAGE_SIZE)",
        "    .offset(page * INVOICE_PAGE_SIZE)",
        "    .select(INVOICE_COLUMNS)",
        "    .execute();",
        "}",
        "",
    ]
    return head + code_file(rng, "ts", rng.randint(60, 80)).split("\n")


def dashboard_ts(rng: random.Random) -> list[str]:
    head = [
        '"use server";',
        "",
        'import { db } from "@/lib/db";',
        'import { formatMoney } from "@/lib/money";',
        "",
        "// Old dashboard export: builds the whole file in memory, dollars as floats.",
        "export async function exportInvoices(tenantId: string): Promise<string> {",
        '  const rows = await db.selectFrom("invoices").selectAll()'
        '.where("tenant_id", "=", tenantId).execute();',
        '  const header = "number,customer,issued,amount";',
        "  const body = rows.map((r) =>",
        "    [r.number, r.customer_name, r.issued_at.toISOString(), formatMoney(r.amount)]",
        '      .join(","),',
        "  );",
        '  return [header, ...body].join("\\n");',
        "}",
        "",
    ]
    return head + code_file(rng, "ts", rng.randint(50, 70)).split("\n")


def route_ts(rng: random.Random, scope: str) -> list[str]:
    head = [
        'import { Hono } from "hono";',
        f'import {{ requireTenant }} from "@{scope}/shared";',
        'import { db } from "../db/pool";',
        "",
        "export const invoicesExport = new Hono();",
        "",
        'invoicesExport.get("/invoices/export", requireTenant, async (c) => {',
        '  const tenantId = c.get("tenantId");',
        '  return c.text("not implemented", 501);',
        "});",
        "",
    ]
    return head + code_file(rng, "ts", rng.randint(30, 45)).split("\n")


# --- the story -----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"{FAMILY}:{seed}")
    scope = rng.choice(SCOPES)
    query_fn = rng.choice(QUERY_FNS)
    node = rng.choice(NODES)
    first, raised, settled = rng.choice(PAGES)
    timeout_old, timeout_new = rng.choice(TIMEOUTS)
    quote_test = rng.choice(QUOTE_TESTS)
    tz_test = rng.choice(TZ_TESTS)
    cents_commit = hexid(rng, 9)
    root = f"/home/dev/code/{scope}"
    pkg_dir = f"{root}/packages/reports"
    wrong = "apps/dashboard/src/server/exportInvoices.ts"
    route = "packages/reports/src/routes/invoices.export.ts"
    csv = "packages/reports/src/export/csv.ts"
    csv_test = "packages/reports/src/export/csv.test.ts"
    legacy = "packages/reports/src/export/legacyCsv.ts"
    invoices = "packages/reports/src/db/invoices.ts"
    c = Codex(rng, root)
    s = c.s
    # Codex's argv JSON is denser in tokens than the filler's estimate: aim a little higher.
    target_chars = tokens * CHARS_PER_TOKEN * 1.12
    others = list(rng.sample(OTHER_MODULES, len(OTHER_MODULES)))
    step = 0

    def fill(fraction: float) -> None:
        nonlocal step
        while s.chars < fraction * target_chars:
            step += 1
            kind = step % 4
            if kind == 1 and others:
                path = others.pop()
                c.files[path] = code_file(rng, "ts", rng.randint(130, 180)).split("\n")
                c.sed(
                    path,
                    1,
                    200,
                    filler=True,
                    text=rng.choice(["", "Looking at how this module does it.", "And this one."]),
                )
            elif kind == 2:
                c.shell(
                    "docker compose logs reports-api --no-log-prefix --tail 60",
                    api_log(rng, rng.randint(45, 60)),
                    filler=True,
                )
            elif kind == 3:
                c.shell("git log --oneline -n 40", git_log(rng, 40), filler=True)
            else:
                term = rng.choice(["export function", "await db", "throw new", "c.json("])
                known = [p for p in c.files if p in OTHER_MODULES] or ["packages/shared/src/ids.ts"]
                hits = []
                for _ in range(rng.randint(14, 24)):
                    f = rng.choice(known)
                    lines = c.files.get(f) or [term]
                    k = rng.randrange(len(lines))
                    hits.append(f"{f}:{k + 1}:{lines[k] or term}")
                c.shell(f"rg -n '{term}' packages", "\n".join(hits), filler=True)

    # 1. the task
    s.user(
        f"We need a CSV export of a tenant's invoices from the reports service in this repo "
        "(GET /invoices/export, one row per invoice: number, customer, issued date, due date, "
        "amount, currency, status). Some tenants have a few hundred thousand invoices, so read "
        f"them from the database {first} rows per page, and give the request a {timeout_old} "
        "timeout.\n\n"
        "Please don't pull in a CSV library for this, not papaparse and not csv-stringify — "
        "the escaping rules are short enough to own. The package has to keep running on "
        f"{node}, that's what the reports containers use. And amounts go out as integer "
        "cents, exactly as stored; finance re-imports these files and floats have bitten us "
        "before."
    )
    s.fact("constraint", "no CSV library", ("csv-stringify",))
    s.fact("constraint", f"must run on {node}", (node,))
    s.fact("constraint", "amounts as integer cents", ("integer cents",))

    steps = {
        "read": "Read the invoice query and the existing export code",
        "csv": "Write the CSV row serializer with quoting and tests",
        "route": "Stream the export from the reports route",
        "xlsx": "Offer an XLSX variant behind a query flag",
        "changeset": f"Add a changeset for @{scope}/reports",
        "e2e": "Add a Playwright test for the export download button",
    }

    def plan(state: dict[str, str], explanation: str = "", text: str = "") -> None:
        c.plan([(steps[k], st) for k, st in state.items()], explanation, text=text)

    plan(
        {"read": "in_progress", "csv": "pending", "route": "pending", "xlsx": "pending",
         "changeset": "pending"},
        text="",
    )  # fmt: skip
    s.fact("todo", "add a changeset", (steps["changeset"],))
    c.files["packages/reports/package.json"] = package_json(scope, node).split("\n")
    c.cat(
        "packages/reports/package.json",
        text="Checking the package first: its engines field and what it already depends on.",
    )
    c.files[invoices] = invoices_ts(rng, scope, query_fn, first)
    c.shell(
        "rg -n 'selectFrom\\(\"invoices\"\\)' packages apps",
        f'{invoices}:23:    .selectFrom("invoices")\n'
        f'{wrong}:8:  const rows = await db.selectFrom("invoices").selectAll()'
        '.where("tenant_id", "=", tenantId).execute();\n'
        f'{legacy}:14:  const rows = await db.selectFrom("invoices").selectAll().execute();',
    )
    c.sed(invoices, 1, 60)
    s.fact("identifier", "the invoice page query", (query_fn,))
    fill(0.1)
    c.files[wrong] = dashboard_ts(rng)
    c.sed(
        wrong,
        1,
        40,
        text="There is an export already in the dashboard app; I'll extend that one rather than "
        "start from nothing.",
    )
    s.user(
        f"no, not that file — that's the old Next dashboard, it's being switched off next "
        f"quarter. The route belongs in the reports service: {route}. There's a stub there "
        "already."
    )
    c.files[route] = route_ts(rng, scope)
    c.sed(route, 1, 30, text="Right, the stub in the reports package.")
    s.fact("file_modified", "the export route", (route,), stale=(wrong,))
    fill(0.18)

    # 2. first approach: the whole file as one string
    plan(
        {"read": "completed", "csv": "in_progress", "route": "pending", "xlsx": "pending",
         "changeset": "pending"},
        "Found the page query and the stub route.",
    )  # fmt: skip
    csv_src = "\n".join(
        [
            "export type Cell = string | number | null | undefined;",
            "",
            'const NEEDS_QUOTES = /[",\\r\\n]/;',
            "",
            "export function toCsvCell(value: Cell): string {",
            '  if (value === null || value === undefined) return "";',
            "  const text = String(value);",
            "  return NEEDS_QUOTES.test(text) ? text : text;",
            "}",
            "",
            "export function toCsvRow(cells: readonly Cell[]): string {",
            '  return cells.map(toCsvCell).join(",") + "\\r\\n";',
            "}",
            "",
            "export function toCsv(rows: readonly (readonly Cell[])[]): string {",
            '  return rows.map(toCsvRow).join("");',
            "}",
        ]
    )
    test_src = "\n".join(
        [
            'import { describe, expect, it } from "vitest";',
            'import { toCsv, toCsvRow } from "./csv";',
            "",
            'describe("toCsvRow", () => {',
            '  it("joins plain cells with commas", () => {',
            '    expect(toCsvRow(["INV-1", 1250, "EUR"])).toBe("INV-1,1250,EUR\\r\\n");',
            "  });",
            f'  it("{quote_test}", () => {{',
            '    expect(toCsvRow(["Acme, Inc.", "say \\"hi\\""])).toBe(',
            '      \'"Acme, Inc.","say ""hi"""\\r\\n\',',
            "    );",
            "  });",
            '  it("renders null as an empty cell", () => {',
            '    expect(toCsvRow([null, "x"])).toBe(",x\\r\\n");',
            "  });",
            "});",
            "",
            'describe("toCsv", () => {',
            '  it("keeps cents as integers", () => {',
            '    expect(toCsv([[1999], [5]])).toBe("1999\\r\\n5\\r\\n");',
            "  });",
            "});",
        ]
    )
    c.patch(
        [("Add", csv, csv_src), ("Add", csv_test, test_src)],
        text="To start, the simplest shape: fetch every page, turn each invoice into a row and "
        "join the rows into one string that the route returns with a text/csv content type.",
    )
    s.fact("file_created", "the CSV serializer", (csv,))
    s.fact("file_created", "its tests", (csv_test,), required=False)
    files1 = {t: rng.randint(4, 12) for t in OTHER_TESTS}
    files1["src/export/csv.test.ts"] = 4
    out1, counts1 = vitest_run(
        rng,
        pkg_dir,
        files1,
        {
            f"src/export/csv.test.ts > toCsvRow > {quote_test}": (
                'expected \'Acme, Inc.,say "hi"\\r\\n\' to be \'"Acme, Inc.","say ""hi"""\\r\\n\'',
                [
                    "AssertionError: expected 'Acme, Inc.,say \"hi\"\\r\\n' to be "
                    '\'"Acme, Inc.","say ""hi"""\\r\\n\' // Object.is equality',
                    "",
                    "- Expected",
                    "+ Received",
                    "",
                    '- "Acme, Inc.","say ""hi"""',
                    '+ Acme, Inc.,say "hi"',
                    "",
                    " ❯ src/export/csv.test.ts:9:60",
                    f'      7|   it("{quote_test}", () => {{',
                    '      8|     expect(toCsvRow(["Acme, Inc.", "say \\"hi\\""])).toBe(',
                    "       |                                                            ^",
                ],
            ),
            "src/db/invoices.test.ts > invoice pages > returns every invoice once": (
                "expected [ 'INV-0412', …(398) ] to have a length of 400 but got 399",
                [
                    "AssertionError: expected [ 'INV-0412', …(398) ] to have a length of 400 "
                    "but got 399",
                    "",
                    "- Expected",
                    "+ Received",
                    "",
                    "- 400",
                    "+ 399",
                    "",
                    " ❯ src/db/invoices.test.ts:48:22",
                ],
            ),
        },
    )
    c.shell("pnpm --filter @" + scope + "/reports test", out1, code=1, timeout_ms=120000)
    s.fact("error_resolved", "the quoting test failed, fixed", (quote_test,), required=False)
    fill(0.3)

    # 3. the fixes; the user changes the page size and the timeout
    s.say(
        "Two failures. The quoting one is mine: `toCsvCell` detects the characters that need "
        "quoting and then returns the text unchanged. The invoices one is older than this "
        "change: the page query orders by issued_at alone and pages with LIMIT/OFFSET, so two "
        "invoices issued in the same second can swap between pages and one of them is skipped. "
        "I'll page by keyset instead — `WHERE (issued_at, id) > (last.issued_at, last.id)` — "
        "which also stops the database from rescanning every earlier page as the export goes "
        "deeper."
    )
    s.fact("decision", "keyset pagination on (issued_at, id)", ("keyset",), stale=("LIMIT/OFFSET",))
    s.user(
        f"{first} rows per page will be thousands of round trips for the big tenants — make it "
        f"{raised} rows per page, the replica can take it. And {timeout_old} won't be enough "
        f"for those either, set the timeout to {timeout_new}."
    )
    s.fact("changed_value", "request timeout", (timeout_new,), stale=(timeout_old,))
    c.update(
        csv,
        "  return NEEDS_QUOTES.test(text) ? text : text;",
        '  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll(\'"\', \'""\')}"` : text;',
        anchor="export function toCsvCell(value: Cell): string {",
        text="The quoting fix first.",
    )
    s.fact("file_modified", "csv.ts", (csv,))
    c.update(
        invoices,
        f"export const INVOICE_PAGE_SIZE = {first};",
        f"export const INVOICE_PAGE_SIZE = {raised};",
    )
    c.update(
        invoices,
        "  page: number,\n): Promise<InvoiceRow[]> {",
        "  after: { issuedAt: Date; id: string } | null,\n): Promise<InvoiceRow[]> {",
        text="Now the keyset page: the caller passes the last row it saw.",
    )
    c.update(
        invoices,
        '    .orderBy("issued_at")\n'
        "    .limit(INVOICE_PAGE_SIZE)\n"
        "    .offset(page * INVOICE_PAGE_SIZE)",
        "    .$if(after !== null, (q) =>\n"
        '      q.where((eb) => eb(eb.refTuple("issued_at", "id"), ">", '
        "eb.tuple(after!.issuedAt, after!.id))),\n"
        "    )\n"
        '    .orderBy(["issued_at", "id"])\n'
        "    .limit(INVOICE_PAGE_SIZE)",
    )
    s.fact("file_modified", "invoices.ts", (invoices,))
    fill(0.4)

    # 4. first reversal: a Node stream instead of one string
    s.say(
        f"Before wiring the route: at {raised} rows per page the one-string version still "
        "holds the entire export in memory — for a tenant with three hundred thousand invoices "
        "that is a string of well over 40 MB, built while the request waits, and the "
        "container's heap limit is 512 MB shared by every request. Switching to a stream: an "
        "async generator yields one page of rows at a time and `Readable.from(generator)` is "
        "handed to the response, so memory stays at one page."
    )
    c.update(
        route,
        '  return c.text("not implemented", 501);',
        '  c.header("Content-Type", "text/csv; charset=utf-8");\n'
        '  c.header("Content-Disposition", `attachment; filename="invoices.csv"`);\n'
        "  return c.body(Readable.from(csvPages(db, tenantId)) as never);",
        anchor='invoicesExport.get("/invoices/export", requireTenant, async (c) => {',
    )
    c.update(
        route,
        'import { Hono } from "hono";',
        'import { Readable } from "node:stream";\nimport { Hono } from "hono";\n'
        'import { csvPages } from "../export/pages";',
    )
    fill(0.47)

    # 5. a constraint added, a question, the XLSX step dropped
    s.user(
        "Heads up: don't touch anything in packages/sdk while you're at it, the OpenAPI client "
        "there is generated and published on its own schedule — if the export needs a type "
        "from it, copy the type. Also forget the XLSX variant, nobody asked for it. And "
        "something I need for finance: which commit moved invoice amounts from decimal "
        "dollars to cents?"
    )
    s.fact("constraint", "leave packages/sdk alone", ("packages/sdk",))
    plan(
        {"read": "completed", "csv": "completed", "route": "in_progress", "changeset": "pending"},
        "XLSX is out of scope.",
    )
    s.fact("todo", "the serializer step (done)", (steps["csv"],), required=False)
    s.fact("todo", "the XLSX step (dropped)", (steps["xlsx"],), required=False)
    c.shell(
        "git log -S amount_cents --oneline -- packages/reports/src/db packages/reports/migrations",
        f"{cents_commit} db: store invoice amounts as integer amount_cents\n"
        f"{hexid(rng, 9)} reports: read amount_cents in the aging route",
    )
    c.shell(
        f"git show --stat {cents_commit}",
        f"commit {cents_commit}{hexid(rng, 31)}\n"
        f"Author: {rng.choice(['Maya Ortiz', 'Jonas Vogel', 'Priya Raman'])} <dev@{scope}.io>\n"
        f"Date:   {rng.choice(['Tue Mar 4', 'Thu Apr 17', 'Mon Jun 2'])} 10:12:44 2025 +0100\n\n"
        "    db: store invoice amounts as integer amount_cents\n\n"
        " packages/reports/migrations/0031_amount_cents.sql | 14 ++++++++\n"
        " packages/reports/src/db/schema.ts                 |  4 +-\n"
        " 2 files changed, 16 insertions(+), 2 deletions(-)",
    )
    s.say(
        f'It was {cents_commit} ("db: store invoice amounts as integer amount_cents"): it '
        "added migration 0031 and changed the column type in the schema."
    )
    s.fact("identifier", "the commit that moved amounts to cents", (cents_commit,))
    fill(0.56)

    # 6. second reversal: the edge runtime has no node:stream; the page size settles
    s.user(
        "Wait — the reports routes are deployed on the edge runtime since last month (the "
        "Workers adapter), there's no node:stream there. And thinking about the replica "
        f"again, {raised} rows per page is more than we should hold per pull; settle on "
        f"{settled} rows per page."
    )
    s.fact(
        "changed_value",
        "page size",
        (f"{settled} rows per page",),
        stale=(f"{first} rows per page", f"{raised} rows per page"),
    )
    s.say(
        "Then the Node stream is out. The web streams API exists on both the edge runtime and "
        f"{node}: a `ReadableStream` whose `pull()` fetches the next keyset page and enqueues "
        "its rows, piped through a `TextEncoderStream`. It only reads a page when the client "
        "has consumed the previous one, so a slow download also slows the database reads "
        "instead of buffering."
    )
    s.fact(
        "decision",
        "a web ReadableStream pulling one page per pull",
        ("ReadableStream",),
        stale=("Readable.from", "one string"),
    )
    c.update(
        invoices,
        f"export const INVOICE_PAGE_SIZE = {raised};",
        f"export const INVOICE_PAGE_SIZE = {settled};",
    )
    pages_src = "\n".join(
        [
            'import type { Kysely } from "kysely";',
            f'import type {{ TenantId }} from "@{scope}/shared";',
            f'import {{ {query_fn}, type InvoiceRow }} from "../db/invoices";',
            'import type { DB } from "../db/schema";',
            'import { toCsvRow } from "./csv";',
            "",
            'const HEADER = ["number", "customer", "issued_at", "due_at", "amount_cents", '
            '"currency", "status"];',
            "",
            "function row(inv: InvoiceRow): string {",
            "  return toCsvRow([inv.number, inv.customerName, inv.issuedAt.toISOString(),",
            "    inv.dueAt?.toISOString() ?? null, inv.amountCents, inv.currency, inv.status]);",
            "}",
            "",
            "export function csvStream(",
            "  db: Kysely<DB>,",
            "  tenantId: TenantId,",
            "): ReadableStream<string> {",
            "  let after: InvoiceRow | null = null;",
            "  let started = false;",
            "  return new ReadableStream<string>({",
            "    async pull(controller) {",
            "      if (!started) {",
            "        started = true;",
            "        controller.enqueue(toCsvRow(HEADER));",
            "      }",
            f"      const page = await {query_fn}(db, tenantId, after);",
            "      if (page.length === 0) return controller.close();",
            '      controller.enqueue(page.map(row).join(""));',
            "      after = page[page.length - 1] ?? null;",
            "    },",
            "  });",
            "}",
        ]
    )
    c.patch([("Add", "packages/reports/src/export/pages.ts", pages_src)])
    c.update(
        route,
        "  return c.body(Readable.from(csvPages(db, tenantId)) as never);",
        "  return c.body(csvStream(db, tenantId));",
    )
    c.shell(
        "pnpm --filter @" + scope + "/reports typecheck",
        "src/routes/invoices.export.ts(17,17): error TS2345: Argument of type "
        "'ReadableStream<string>' is not assignable to parameter of type "
        "'Data | ReadableStream<Uint8Array> | null'.\n"
        "  Type 'ReadableStream<string>' is not assignable to type 'ReadableStream<Uint8Array>'.\n"
        "    Type 'string' is not assignable to type 'Uint8Array'.\n"
        "src/routes/invoices.export.ts(4,10): error TS2305: Module '\"../export/pages\"' has no "
        "exported member 'csvPages'.\n\n"
        "Found 2 errors in the same file, starting at: src/routes/invoices.export.ts:4\n\n"
        " ELIFECYCLE  Command failed with exit code 2.",
        code=2,
        timeout_ms=120000,
    )
    s.fact("error_resolved", "tsc TS2345 on the stream's chunk type", ("TS2345",), required=False)
    c.update(
        route,
        "  return c.body(csvStream(db, tenantId));",
        "  const { signal } = AbortSignal.timeout(EXPORT_TIMEOUT_MS);\n"
        "  const body = csvStream(db, tenantId).pipeThrough(new TextEncoderStream());\n"
        "  return c.body(body, { signal });",
        text="The body wants bytes: encode on the way out.",
    )
    c.update(
        route,
        'import { csvPages } from "../export/pages";',
        'import { csvStream } from "../export/pages";\n\n'
        f"const EXPORT_TIMEOUT_MS = {int(timeout_new.split()[0]) * 1000};",
    )
    c.shell(
        "pnpm --filter @"
        + scope
        + "/reports typecheck && pnpm --filter @"
        + scope
        + "/reports lint",
        f"\n{pkg_dir}/src/routes/invoices.export.ts\n"
        "  1:10  error  'Readable' is defined but never used  @typescript-eslint/no-unused-vars\n\n"
        "✖ 1 problem (1 error, 0 warnings)\n\n"
        " ELIFECYCLE  Command failed with exit code 1.",
        code=1,
        timeout_ms=120000,
    )
    s.fact("error_resolved", "eslint unused import", ("no-unused-vars",), required=False)
    c.update(
        route,
        'import { Readable } from "node:stream";\nimport { Hono } from "hono";',
        'import { Hono } from "hono";',
        text="The node:stream import is a leftover.",
    )
    c.shell(
        "rg -n 'legacyCsv' packages apps",
        f"{legacy}:1:// legacyCsv: pre-2023 export, superseded by the dashboard one",
        text="While here: is the old legacyCsv module still imported anywhere?",
    )
    c.patch(
        [("Delete", legacy, "")],
        text="Nothing imports it; the new serializer replaces it.",
    )
    s.fact("file_deleted", "legacyCsv.ts", (legacy,))
    fill(0.7)

    # 7. a step added by the user
    s.user(
        "Nice. Put a Playwright test for the download button on the plan too — QA wants one "
        "before this ships, but it can come after the unit tests are green."
    )
    plan(
        {"read": "completed", "csv": "completed", "route": "completed", "changeset": "pending",
         "e2e": "pending"},
    )  # fmt: skip
    s.fact("todo", "Playwright test for the download", (steps["e2e"],))
    fill(0.8)

    # 8. the last run: one test still red
    files2 = {**files1, "src/routes/invoices.export.test.ts": 6, "src/export/pages.test.ts": 5}
    out2, counts2 = vitest_run(
        rng,
        pkg_dir,
        files2,
        {
            f"src/routes/invoices.export.test.ts > GET /invoices/export > {tz_test}": (
                "expected '2026-03-01T23:30:00.000Z' to be '2026-03-02T00:30:00+01:00'",
                [
                    "AssertionError: expected '2026-03-01T23:30:00.000Z' to be "
                    "'2026-03-02T00:30:00+01:00' // Object.is equality",
                    "",
                    "- Expected",
                    "+ Received",
                    "",
                    "- 2026-03-02T00:30:00+01:00",
                    "+ 2026-03-01T23:30:00.000Z",
                    "",
                    " ❯ src/routes/invoices.export.test.ts:61:34",
                ],
            ),
        },
    )
    c.shell(
        "pnpm --filter @" + scope + "/reports test",
        out2,
        code=1,
        timeout_ms=120000,
        text="Typecheck and lint are clean now. Full test run.",
    )
    s.fact("test_status", "final vitest run", (counts2,), stale=(counts1,))
    s.fact("error_open", "the timezone test fails", (tz_test,))
    s.say(
        "The quoting and paging tests pass now. The one failure is a test someone wrote "
        "ahead of the feature: it expects issued dates in the tenant's own zone with an "
        "offset, while the rows carry UTC `toISOString()`. Finance's importer has always read "
        "UTC, so changing it would change the file they load — that's a call for you or them, "
        "not one I'd make from here."
    )
    fill(0.97)

    # 9. the wrap-up: no fact restated
    closing = rng.choice(
        [
            "That's where it stands; tell me which way to go",
            "Stopping here until you've decided",
            "Over to you for that one",
        ]
    )
    s.say(f"{closing}.")
    s.fact("last_message", "the final answer", (closing,))
    return finish_session(s, family=FAMILY, seed=seed)
