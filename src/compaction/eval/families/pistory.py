"""pistory-style: a session of pi (Mario Zechner's coding agent) with a story of its own.

Written blind: without reading the digest, the strategies or any other family's story. The
tools are pi's built-in coding tools as its source names them (badlogic/pi-mono,
packages/coding-agent/src/core/tools, read at `PI_COMMIT`, @mariozechner/pi-coding-agent
0.58.3); the default tool set is `read`, `bash`, `edit`, `write` (grep/find/ls exist but are
off unless asked for), and pi has no to-do tool, no delete and no move: the to-dos live in
what the user and the assistant say, and a file goes with `rm` / `git rm`.

- `read {path, offset?, limit?}`: the file's text as it is, no line numbers; with a `limit`
  short of the end, "\\n\\n[N more lines in file. Use offset=K to continue.]" after it.
  A missing file: the fs error, "ENOENT: no such file or directory, access '<abs>'".
- `bash {command, timeout?}`: stdout and stderr as they came; "(no output)" when empty; on a
  non-zero exit the output then "\\n\\nCommand exited with code N" (the call fails).
- `edit {path, oldText, newText}`: "Successfully replaced text in <path>."; when the old text
  is not there, "Could not find the exact text in <path>. The old text must match exactly
  including all whitespace and newlines." (the call fails).
- `write {path, content}`: "Successfully wrote <content.length> bytes to <path>".

The system prompt is `buildSystemPrompt`'s default for those four tools, with the project's
AGENTS.md under "# Project Context" and the date and working directory last. User turns are
sent as a list of one text part (`role: "user", content: [{type: "text", ...}]`), the
assistant's text as a plain string with its tool calls beside it (several reads in one turn
run in parallel), and every result as a `tool` message of plain text: the OpenAI
Chat Completions shape of pi-ai's openai-completions provider. A line the user runs
themselves with `!` reaches the model as a user turn, "Ran `cmd`" and the output fenced.
pi speaks Anthropic Messages too (pi-ai's anthropic provider), so the bench measures the
family in both dialects (`bench/bench_realdata.py`, `ANTHROPIC_FAMILIES`); call ids are
Claude's (`toolu_01…`), the model pi is most often driven with, through either.

The story: a SvelteKit 2 app on Cloudflare Workers (D1 through Drizzle, vitest in the Workers
pool, wrangler, pnpm) for a community tool library gets waitlists, pickup holds and due-date
reminder emails. Names, values and counts are drawn per seed.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction.eval.families._base import CHARS_PER_TOKEN, Session, finish_session
from compaction.eval.probes import text_of_message
from compaction.eval.sessions import EvalSession

FAMILY = "pistory-style"
#: The pi-mono commit whose tools, prompt and providers this family follows.
PI_COMMIT = "83378aad7e74a0e2bb8f37c007a9685fb4609d8a"

_B62 = string.digits + string.ascii_letters


def _tabs(text: str) -> str:
    """Leading groups of four spaces as tabs (the app's prettier config indents with tabs)."""
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        rest = (len(line) - len(stripped)) % 4
        out.append("\t" * depth + " " * rest + stripped)
    return "\n".join(out)


def _fill(template: str, **values: object) -> str:
    """`template` with every «key» replaced (TypeScript and Svelte braces stay untouched)."""
    for key, value in values.items():
        template = template.replace(f"«{key}»", str(value))
    assert "«" not in template, template[template.index("«") :][:40]
    return template


def _code(template: str, **values: object) -> str:
    return _tabs(_fill(template, **values))


def _js_length(text: str) -> int:
    """JavaScript's `string.length`: UTF-16 code units."""
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


# --- the world of one seed -------------------------------------------------------------------


@dataclass
class _World:
    user: str
    proj: str
    org: str
    library: str
    host: str
    colleague: str
    desk: str
    ops: str
    member: str
    tool: str
    tz: str
    holds: tuple[int, int, int]
    leads: tuple[int, int]
    cron: str
    prod_db: str
    dev_db: str
    loan_id: str
    member_id: str
    pr: int
    date: str
    branch: str
    migration: int
    existing_tests: tuple[tuple[str, int], ...]
    version: str

    @property
    def root(self) -> str:
        return f"/home/{self.user}/code/{self.proj}"

    @property
    def pkg(self) -> str:
        npm = f"/home/{self.user}/.local/share/pnpm/global/5/node_modules"
        return f"{npm}/@mariozechner/pi-coding-agent"

    @property
    def every(self) -> str:
        return {"*/15": "15 minutes", "*/10": "10 minutes", "*/20": "20 minutes"}[
            self.cron.split()[0]
        ]


def _uuid(rng: random.Random) -> str:
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _nanoid(rng: random.Random, prefix: str, n: int = 10) -> str:
    return prefix + "_" + "".join(rng.choice(_B62) for _ in range(n))


def _world(rng: random.Random) -> _World:
    user = rng.choice(["mara", "jonas", "keiko", "tomas", "odile", "femi", "ravi", "helka"])
    proj = rng.choice(["toolshed", "borrowbox", "lendery", "shedlist", "tooltrove"])
    place = rng.choice(
        [
            ("Northside Tool Library", "northsidetools"),
            ("Eastgate Tool Shed", "eastgateshed"),
            ("Riverbend Library of Things", "riverbendthings"),
            ("Kettle Hill Tool Co-op", "kettlehilltools"),
            ("Millbrook Tool Lending Library", "millbrooklends"),
        ]
    )
    people = rng.sample(["Dana", "Priya", "Luis", "Bea", "Colm", "Ayo", "Greta", "Wen"], 3)
    member = rng.choice(["Ines", "Marguerite", "Hollis", "Yara", "Tamsin", "Odette"])
    tool = rng.choice(["tile saw", "pressure washer", "orbital sander", "hammer drill", "wet vac"])
    tz = rng.choice(["America/Chicago", "America/Denver", "America/Los_Angeles", "America/Toronto"])
    holds = rng.choice(
        [(48, 36, 30), (72, 48, 36), (48, 24, 30), (72, 36, 48), (96, 72, 48), (60, 36, 40),
         (36, 48, 24)]
    )  # fmt: skip
    leads = rng.choice([(3, 2), (4, 2), (2, 1), (5, 3), (7, 3), (3, 1)])
    cron = rng.choice(["*/15 * * * *", "*/10 * * * *", "*/20 * * * *"])
    names = ["loans", "members", "tools", "search", "auth", "inspections", "categories", "fees"]
    chosen = rng.sample(names[1:], rng.randint(4, 6))
    tests = tuple((n, rng.randint(3, 8)) for n in ["loans", *chosen])
    return _World(
        user=user,
        proj=proj,
        org=place[1],
        library=place[0],
        host=f"lend.{place[1]}.org",
        colleague=people[0],
        desk=people[1],
        ops=people[2],
        member=member,
        tool=tool,
        tz=tz,
        holds=holds,
        leads=leads,
        cron=cron,
        prod_db=_uuid(rng),
        dev_db=_uuid(rng),
        loan_id=_nanoid(rng, "ln"),
        member_id=_nanoid(rng, "mb"),
        pr=rng.randint(118, 296),
        date=f"2026-03-{rng.randint(9, 19):02d}",
        branch=rng.choice(["feat/waitlist-holds", "feat/holds-and-reminders", "waitlists"]),
        migration=rng.randint(7, 14),
        existing_tests=tests,
        version=f"0.{rng.randint(9, 23)}.{rng.randint(0, 6)}",
    )


# --- pi's system prompt ------------------------------------------------------------------------

_AGENTS_MD = """\
# «proj»

The «library» website: catalogue, member accounts, loans. SvelteKit 2 with Svelte 5 runes,
deployed to Cloudflare Workers with adapter-cloudflare; the database is D1 through Drizzle.

## Working here

- pnpm only. `pnpm dev` for the dev server, `pnpm test` for vitest (it runs inside workerd via
  @cloudflare/vitest-pool-workers), `pnpm check` for svelte-check. Both must be clean before
  a commit.
- Server-only code lives in `src/lib/server/`, one module per area. Keep `+page.server.ts`
  files thin: parse the form, call a module, return.
- Ids are prefixed nanoids from `newId()` in `src/lib/server/ids.ts` (`ln_`, `mb_`, `tl_`).
- Schema changes go through the Drizzle schema and a generated migration; never hand-write
  migration SQL.
- Formatting is prettier (tabs, single quotes). Run `pnpm format` if in doubt.
- Commit messages: `area: what changed`, lowercase, imperative.
"""


def _system_prompt(w: _World) -> str:
    agents = _fill(_AGENTS_MD, proj=w.proj, library=w.library)
    return (
        "You are an expert coding assistant operating inside pi, a coding agent harness. You "
        "help users by reading files, executing commands, editing code, and writing new files."
        "\n\nAvailable tools:\n"
        "- read: Read file contents\n"
        "- bash: Execute bash commands (ls, grep, find, etc.)\n"
        "- edit: Make surgical edits to files (find exact text and replace)\n"
        "- write: Create or overwrite files\n\n"
        "In addition to the tools above, you may have access to other custom tools depending "
        "on the project.\n\n"
        "Guidelines:\n"
        "- Use bash for file operations like ls, rg, find\n"
        "- Use read to examine files before editing. You must use this tool instead of cat or "
        "sed.\n"
        "- Use edit for precise changes (old text must match exactly)\n"
        "- Use write only for new files or complete rewrites\n"
        "- When summarizing your actions, output plain text directly - do NOT use cat or bash "
        "to display what you did\n"
        "- Be concise in your responses\n"
        "- Show file paths clearly when working with files\n\n"
        "Pi documentation (read only when the user asks about pi itself, its SDK, extensions, "
        "themes, skills, or TUI):\n"
        f"- Main documentation: {w.pkg}/README.md\n"
        f"- Additional docs: {w.pkg}/docs\n"
        f"- Examples: {w.pkg}/examples (extensions, custom tools, SDK)\n"
        "- When asked about: extensions (docs/extensions.md, examples/extensions/), themes "
        "(docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md),"
        " TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK integrations "
        "(docs/sdk.md), custom providers (docs/custom-provider.md), adding models "
        "(docs/models.md), pi packages (docs/packages.md)\n"
        "- When working on pi topics, read the docs and examples, and follow .md "
        "cross-references before implementing\n"
        "- Always read pi .md files completely and follow links to related docs (e.g., tui.md "
        "for TUI API details)"
        "\n\n# Project Context\n\n"
        "Project-specific instructions and guidelines:\n\n"
        f"## {w.root}/AGENTS.md\n\n{agents}\n\n"
        f"\nCurrent date: {w.date}"
        f"\nCurrent working directory: {w.root}"
    )


# --- the app's files as the session finds them ---------------------------------------------------

_PACKAGE_JSON = """\
{
    "name": "«proj»",
    "version": "«version»",
    "private": true,
    "type": "module",
    "scripts": {
        "dev": "vite dev",
        "build": "vite build",
        "preview": "pnpm build && wrangler dev",
        "check": "svelte-kit sync && svelte-check --tsconfig ./tsconfig.json",
        "format": "prettier --write .",
        "lint": "prettier --check . && eslint .",
        "test": "vitest run",
        "db:generate": "drizzle-kit generate",
        "db:migrate:local": "wrangler d1 migrations apply «proj»-dev --local",
        "cf-typegen": "wrangler types"
    },
    "devDependencies": {
        "@cloudflare/vitest-pool-workers": "^0.8.71",
        "@cloudflare/workers-types": "^4.20260301.0",
        "@eslint/js": "^9.34.0",
        "@sveltejs/adapter-cloudflare": "^7.2.3",
        "@sveltejs/kit": "^2.37.0",
        "@sveltejs/vite-plugin-svelte": "^6.1.4",
        "drizzle-kit": "^0.31.4",
        "eslint": "^9.34.0",
        "eslint-plugin-svelte": "^3.12.1",
        "prettier": "^3.6.2",
        "prettier-plugin-svelte": "^3.4.0",
        "svelte": "^5.38.6",
        "svelte-check": "^4.3.1",
        "typescript": "^5.9.2",
        "typescript-eslint": "^8.42.0",
        "vite": "^7.1.4",
        "vitest": "~3.2.4",
        "wrangler": "^4.34.0"
    },
    "dependencies": {
        "drizzle-orm": "^0.44.5",
        "nanoid": "^5.1.5",
        "zod": "^4.1.5"
    },
    "packageManager": "pnpm@10.15.1"
}
"""

_WRANGLER_HEAD = """\
name = "«proj»"
main = ".svelte-kit/cloudflare/_worker.js"
compatibility_date = "2025-09-01"
compatibility_flags = ["nodejs_compat"]
"""

_WRANGLER_REST = """\

[assets]
binding = "ASSETS"
directory = ".svelte-kit/cloudflare"

[observability]
enabled = true

[vars]
PUBLIC_BASE_URL = "http://localhost:5173"
MAIL_FROM = "«library» <hello@«host»>"

# RESEND_API_KEY and CRON_TOKEN are secrets: `wrangler secret put ...` (and .dev.vars locally)

[[d1_databases]]
binding = "DB"
database_name = "«proj»-dev"
database_id = "«dev_db»"
migrations_dir = "drizzle"

[env.production]
routes = [{ pattern = "«host»", custom_domain = true }]

[env.production.vars]
PUBLIC_BASE_URL = "https://«host»"
MAIL_FROM = "«library» <hello@«host»>"

[[env.production.d1_databases]]
binding = "DB"
database_name = "«proj»-prod"
database_id = "«prod_db»"
migrations_dir = "drizzle"
"""

_SCHEMA_HEAD = """\
import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

const now = sql`(unixepoch())`;

export const members = sqliteTable(
    'members',
    {
        id: text('id').primaryKey(),
        name: text('name').notNull(),
        email: text('email'),
        phone: text('phone'),
        cardNumber: text('card_number').notNull(),
        role: text('role', { enum: ['member', 'volunteer', 'staff'] })
            .notNull()
            .default('member'),
        emailOptOut: integer('email_opt_out', { mode: 'boolean' }).notNull().default(false),
        joinedAt: integer('joined_at').notNull().default(now),
        expiresAt: integer('expires_at')
    },
    (t) => [
        uniqueIndex('members_card_number_idx').on(t.cardNumber),
        index('members_email_idx').on(t.email)
    ]
);

export const categories = sqliteTable('categories', {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    slug: text('slug').notNull().unique(),
    sortOrder: integer('sort_order').notNull().default(0)
});

export const tools = sqliteTable(
    'tools',
    {
        id: text('id').primaryKey(),
        slug: text('slug').notNull(),
        name: text('name').notNull(),
        categoryId: text('category_id')
            .notNull()
            .references(() => categories.id),
"""

_SCHEMA_STATUS_OLD = """\
        status: text('status', { enum: ['available', 'on_loan', 'in_repair', 'retired'] })
            .notNull()
            .default('available'),
"""

_SCHEMA_STATUS_NEW = """\
        status: text('status', {
            enum: ['available', 'on_loan', 'on_hold', 'in_repair', 'retired']
        })
            .notNull()
            .default('available'),
"""

_SCHEMA_MID = """\
        loanDays: integer('loan_days').notNull().default(7),
        depositCents: integer('deposit_cents').notNull().default(0),
        notes: text('notes'),
        addedAt: integer('added_at').notNull().default(now)
    },
    (t) => [
        uniqueIndex('tools_slug_idx').on(t.slug),
        index('tools_category_idx').on(t.categoryId)
    ]
);

export const loans = sqliteTable(
    'loans',
    {
        id: text('id').primaryKey(),
        toolId: text('tool_id')
            .notNull()
            .references(() => tools.id),
        memberId: text('member_id')
            .notNull()
            .references(() => members.id),
        checkedOutAt: integer('checked_out_at').notNull(),
        dueAt: integer('due_at').notNull(),
        returnedAt: integer('returned_at'),
        renewals: integer('renewals').notNull().default(0),
"""

_SCHEMA_LOAN_TAIL_OLD = """\
        checkedOutBy: text('checked_out_by').references(() => members.id)
    },
"""

_SCHEMA_LOAN_TAIL_NEW = """\
        checkedOutBy: text('checked_out_by').references(() => members.id),
        reminderSentAt: integer('reminder_sent_at')
    },
"""

_SCHEMA_REST = """\
    (t) => [
        index('loans_tool_idx').on(t.toolId),
        index('loans_member_idx').on(t.memberId),
        index('loans_due_idx').on(t.dueAt)
    ]
);

export const emailLog = sqliteTable('email_log', {
    id: integer('id').primaryKey({ autoIncrement: true }),
    memberId: text('member_id')
        .notNull()
        .references(() => members.id),
    loanId: text('loan_id').references(() => loans.id),
    kind: text('kind').notNull(),
    providerId: text('provider_id'),
    sentAt: integer('sent_at').notNull().default(now)
});

export type Member = typeof members.$inferSelect;
export type Tool = typeof tools.$inferSelect;
export type Loan = typeof loans.$inferSelect;
"""

_SCHEMA_TYPES = "export type Member = typeof members.$inferSelect;\n"

_SCHEMA_NEW_TABLES = """\
export const waitlistEntries = sqliteTable(
    'waitlist_entries',
    {
        id: integer('id').primaryKey({ autoIncrement: true }),
        toolId: text('tool_id')
            .notNull()
            .references(() => tools.id),
        memberId: text('member_id')
            .notNull()
            .references(() => members.id),
        joinedAt: integer('joined_at').notNull()
    },
    (t) => [
        uniqueIndex('waitlist_tool_member_idx').on(t.toolId, t.memberId),
        index('waitlist_tool_joined_idx').on(t.toolId, t.joinedAt)
    ]
);

export const toolHolds = sqliteTable(
    'tool_holds',
    {
        id: text('id').primaryKey(),
        toolId: text('tool_id')
            .notNull()
            .references(() => tools.id),
        memberId: text('member_id')
            .notNull()
            .references(() => members.id),
        createdAt: integer('created_at').notNull(),
        expiresAt: integer('expires_at').notNull(),
        status: text('status', { enum: ['active', 'collected', 'expired', 'withdrawn'] })
            .notNull()
            .default('active')
    },
    (t) => [
        index('holds_tool_idx').on(t.toolId),
        index('holds_status_expires_idx').on(t.status, t.expiresAt)
    ]
);

"""

_LOANS_HEAD = """\
import { error } from '@sveltejs/kit';
import { and, asc, desc, eq, isNull, lt } from 'drizzle-orm';
import type { DB } from './db';
import { loans, members, tools } from './db/schema';
import { newId } from './ids';
import { DAY, unixNow } from './time';

export const MAX_RENEWALS = 2;

export async function checkoutLoan(db: DB, toolId: string, memberId: string, staffId: string) {
    const [tool] = await db.select().from(tools).where(eq(tools.id, toolId)).limit(1);
    if (!tool) error(404, 'Tool not found');
    if (tool.status !== 'available') error(409, `Tool is ${tool.status.replace('_', ' ')}`);
    const now = unixNow();
    const loan = {
        id: newId('ln'),
        toolId,
        memberId,
        checkedOutAt: now,
        dueAt: now + tool.loanDays * DAY,
        checkedOutBy: staffId
    };
    await db.insert(loans).values(loan);
    await db.update(tools).set({ status: 'on_loan' }).where(eq(tools.id, toolId));
    return loan;
}

"""

_LOANS_RETURN_OLD = """\
export async function returnLoan(db: DB, loanId: string) {
    const [loan] = await db
        .update(loans)
        .set({ returnedAt: unixNow() })
        .where(and(eq(loans.id, loanId), isNull(loans.returnedAt)))
        .returning();
    if (!loan) error(409, 'Loan is already returned');
    await db.update(tools).set({ status: 'available' }).where(eq(tools.id, loan.toolId));
    return loan;
}
"""

_LOANS_RETURN_WRONG = """\
export async function returnLoan(db: DB, loanId: string) {
    const [loan] = await db
        .update(loans)
        .set({ returnedAt: unixNow() })
        .where(and(eq(loans.id, loanId), isNull(loans.returnedAt)))
        .returning();
    if (!loan) error(409, 'Loan already returned');
"""

_LOANS_RETURN_NEW = """\
// Returning a tool and handing it to the next member in line land together or not at all:
// D1 has no interactive transactions, but a batch runs as one.
export async function returnLoan(db: DB, loanId: string) {
    const [loan] = await db.select().from(loans).where(eq(loans.id, loanId)).limit(1);
    if (!loan || loan.returnedAt !== null) error(409, 'Loan is already returned');
    const now = unixNow();
    const next = await nextInLine(db, loan.toolId);
    const hold = next ? newHold(loan.toolId, next.memberId, now) : null;
    const markReturned = db
        .update(loans)
        .set({ returnedAt: now })
        .where(and(eq(loans.id, loanId), isNull(loans.returnedAt)));
    const setStatus = db
        .update(tools)
        .set({ status: hold ? 'on_hold' : 'available' })
        .where(eq(tools.id, loan.toolId));
    if (hold && next) {
        await db.batch([
            markReturned,
            setStatus,
            db.insert(toolHolds).values(hold),
            db.delete(waitlistEntries).where(eq(waitlistEntries.id, next.id))
        ]);
    } else {
        await db.batch([markReturned, setStatus]);
    }
    return { ...loan, returnedAt: now, hold };
}
"""

_LOANS_REST = """\

export async function renewLoan(db: DB, loanId: string, memberId: string) {
    const [loan] = await db
        .select()
        .from(loans)
        .where(and(eq(loans.id, loanId), eq(loans.memberId, memberId)))
        .limit(1);
    if (!loan || loan.returnedAt !== null) error(404, 'No such loan');
    if (loan.renewals >= MAX_RENEWALS) error(409, 'This loan cannot be renewed again');
    const [tool] = await db.select().from(tools).where(eq(tools.id, loan.toolId));
    const [renewed] = await db
        .update(loans)
        .set({ dueAt: loan.dueAt + tool.loanDays * DAY, renewals: loan.renewals + 1 })
        .where(eq(loans.id, loanId))
        .returning();
    return renewed;
}

export async function activeLoansFor(db: DB, memberId: string) {
    return db
        .select({ loan: loans, tool: { id: tools.id, name: tools.name, slug: tools.slug } })
        .from(loans)
        .innerJoin(tools, eq(tools.id, loans.toolId))
        .where(and(eq(loans.memberId, memberId), isNull(loans.returnedAt)))
        .orderBy(asc(loans.dueAt));
}

export async function loanHistory(db: DB, memberId: string, limit = 50) {
    return db
        .select({ loan: loans, tool: { name: tools.name, slug: tools.slug } })
        .from(loans)
        .innerJoin(tools, eq(tools.id, loans.toolId))
        .where(eq(loans.memberId, memberId))
        .orderBy(desc(loans.checkedOutAt))
        .limit(limit);
}

export async function overdueLoans(db: DB, asOf = unixNow()) {
    return db
        .select({ loan: loans, member: members, tool: tools })
        .from(loans)
        .innerJoin(members, eq(members.id, loans.memberId))
        .innerJoin(tools, eq(tools.id, loans.toolId))
        .where(and(isNull(loans.returnedAt), lt(loans.dueAt, asOf)))
        .orderBy(asc(loans.dueAt));
}
"""

_LOANS_IMPORT_OLD = "import { loans, members, tools } from './db/schema';\n"
_LOANS_IMPORT_NEW = (
    "import { loans, members, toolHolds, tools, waitlistEntries } from './db/schema';\n"
    "import { newHold, nextInLine } from './holds';\n"
)

_PAGE_SERVER_HEAD = """\
import { error, fail } from '@sveltejs/kit';
import { and, eq, isNull } from 'drizzle-orm';
import { requireMember, requireStaff } from '$lib/server/auth';
import { getDb } from '$lib/server/db';
import { loans, tools } from '$lib/server/db/schema';
import { checkoutLoan } from '$lib/server/loans';
import type { Actions, PageServerLoad } from './$types';

"""

_PAGE_SERVER_LOAD_OLD = """\
    return {
        tool,
        loan: loan ? { dueAt: loan.dueAt, mine: loan.memberId === locals.member?.id } : null,
        staff: locals.member?.role === 'staff'
    };
};
"""

_PAGE_SERVER_LOAD_NEW = """\
    const waitlist = locals.member
        ? await waitlistPosition(db, tool.id, locals.member.id)
        : { position: null, length: 0 };
    return {
        tool,
        loan: loan ? { dueAt: loan.dueAt, mine: loan.memberId === locals.member?.id } : null,
        waitlist,
        staff: locals.member?.role === 'staff'
    };
};
"""

_PAGE_SERVER_BODY = """\
export const load: PageServerLoad = async ({ params, platform, locals }) => {
    const db = getDb(platform);
    const [tool] = await db.select().from(tools).where(eq(tools.slug, params.slug)).limit(1);
    if (!tool) error(404, 'No such tool');
    const [loan] = await db
        .select({ id: loans.id, dueAt: loans.dueAt, memberId: loans.memberId })
        .from(loans)
        .where(and(eq(loans.toolId, tool.id), isNull(loans.returnedAt)))
        .limit(1);
«load_tail»
export const actions: Actions = {
    checkout: async ({ request, params, platform, locals }) => {
        const staff = requireStaff(locals);
        const form = await request.formData();
        const memberId = String(form.get('memberId') ?? '').trim();
        if (!memberId) return fail(400, { memberId, missing: true });
        const db = getDb(platform);
        const [tool] = await db
            .select({ id: tools.id })
            .from(tools)
            .where(eq(tools.slug, params.slug));
        if (!tool) error(404, 'No such tool');
        await checkoutLoan(db, tool.id, memberId, staff.id);
        return { checkedOut: true };
    }
};
"""

_PAGE_SERVER_ACTIONS_OLD = """\
        await checkoutLoan(db, tool.id, memberId, staff.id);
        return { checkedOut: true };
    }
};
"""

_PAGE_SERVER_ACTIONS_NEW = """\
        await checkoutLoan(db, tool.id, memberId, staff.id);
        return { checkedOut: true };
    },

    joinWaitlist: async ({ params, platform, locals }) => {
        const member = requireMember(locals);
        const db = getDb(platform);
        const [tool] = await db.select().from(tools).where(eq(tools.slug, params.slug));
        if (!tool) error(404, 'No such tool');
        if (tool.status === 'available') return fail(409, { waitlist: 'It is on the shelf' });
        const { position } = await joinWaitlist(db, tool.id, member.id);
        return { joined: position };
    },

    leaveWaitlist: async ({ params, platform, locals }) => {
        const member = requireMember(locals);
        const db = getDb(platform);
        const [tool] = await db
            .select({ id: tools.id })
            .from(tools)
            .where(eq(tools.slug, params.slug));
        if (!tool) error(404, 'No such tool');
        await leaveWaitlist(db, tool.id, member.id);
        return { left: true };
    }
};
"""

_PAGE_SERVER_IMPORT_OLD = "import { checkoutLoan } from '$lib/server/loans';\n"
_PAGE_SERVER_IMPORT_NEW = (
    "import { joinWaitlist, leaveWaitlist, waitlistPosition } from '$lib/server/holds';\n"
    "import { checkoutLoan } from '$lib/server/loans';\n"
)

_PAGE_SVELTE = """\
<script lang="ts">
    import { enhance } from '$app/forms';
    import { formatDate } from '$lib/format';
    import type { PageProps } from './$types';

    let { data, form }: PageProps = $props();
    const tool = $derived(data.tool);
</script>

<svelte:head><title>{tool.name} · «library»</title></svelte:head>

<article class="tool">
    <header>
        <h1>{tool.name}</h1>
        <span class="status status-{tool.status}">{tool.status.replace('_', ' ')}</span>
    </header>

    {#if tool.notes}
        <p class="notes">{tool.notes}</p>
    {/if}

«due_block»
    {#if data.staff && tool.status === 'available'}
        <form method="POST" action="?/checkout" use:enhance>
            <label>Member card or id <input name="memberId" required /></label>
            <button>Check out</button>
            {#if form?.missing}<p class="error">Which member?</p>{/if}
        </form>
    {/if}
</article>

<style>
    .tool {
        max-width: 42rem;
        margin: 2rem auto;
    }
    header {
        display: flex;
        align-items: baseline;
        gap: 1rem;
    }
    .status {
        font-size: 0.85rem;
        padding: 0.1rem 0.5rem;
        border-radius: 999px;
        background: var(--surface-2);
    }
    .status-available {
        background: var(--ok-bg);
        color: var(--ok-fg);
    }
    .notes {
        white-space: pre-line;
    }
    .error {
        color: var(--danger-fg);
    }
</style>
"""

_PAGE_SVELTE_DUE = """\
    {#if data.loan}
        <p class="due">
            {#if data.loan.mine}You have this until{:else}Out until{/if}
            {formatDate(data.loan.dueAt)}
        </p>
    {/if}
"""

_PAGE_SVELTE_WAITLIST = """\
    {#if data.loan}
        <p class="due">
            {#if data.loan.mine}You have this until{:else}Out until{/if}
            {formatDate(data.loan.dueAt)}
        </p>
    {/if}

    {#if tool.status !== 'available' && !data.loan?.mine}
        <section class="waitlist">
            {#if data.waitlist.position > 0}
                <p>You're number {data.waitlist.position} of {data.waitlist.length} in line.</p>
                <form method="POST" action="?/leaveWaitlist" use:enhance>
                    <button class="secondary">Leave the waitlist</button>
                </form>
            {:else}
                <p>{data.waitlist.length} waiting.</p>
                <form method="POST" action="?/joinWaitlist" use:enhance>
                    <button>Join the waitlist</button>
                </form>
            {/if}
        </section>
    {/if}
"""

_CRON_ENDPOINT = """\
import { error, json } from '@sveltejs/kit';
import { and, eq, isNull, lt } from 'drizzle-orm';
import { getDb } from '$lib/server/db';
import { emailLog, loans, members, tools } from '$lib/server/db/schema';
import { sendEmail } from '$lib/server/email';
import { DAY, unixNow } from '$lib/server/time';
import { formatDate } from '$lib/format';
import type { RequestHandler } from './$types';

// cron-job.org calls this every morning at 07:00 with ?token=<CRON_TOKEN>.
export const GET: RequestHandler = async ({ url, platform }) => {
    const env = platform?.env;
    if (!env || url.searchParams.get('token') !== env.CRON_TOKEN) error(401, 'bad token');
    const db = getDb(platform);
    const now = unixNow();
    const rows = await db
        .select({ loan: loans, member: members, tool: tools })
        .from(loans)
        .innerJoin(members, eq(members.id, loans.memberId))
        .innerJoin(tools, eq(tools.id, loans.toolId))
        .where(and(isNull(loans.returnedAt), lt(loans.dueAt, now + 2 * DAY)));

    let sent = 0;
    for (const { loan, member, tool } of rows) {
        if (!member.email) continue;
        const kind = loan.dueAt < now ? 'overdue' : 'due_soon';
        const subject =
            kind === 'overdue' ? `${tool.name} is overdue` : `${tool.name} is due soon`;
        const providerId = await sendEmail(env, {
            to: member.email,
            subject,
            text: `Hi ${member.name},\\n\\n${tool.name} is due back ${formatDate(loan.dueAt)}.`
        });
        await db
            .insert(emailLog)
            .values({ memberId: member.id, loanId: loan.id, kind, providerId });
        sent++;
    }
    return json({ sent });
};
"""

_EMAIL_TS = """\
// Resend over plain fetch: their SDK drags in node-only modules that workerd can't load.

export interface Mail {
    to: string;
    subject: string;
    text: string;
    html?: string;
    replyTo?: string;
}

type MailEnv = Pick<Env, 'RESEND_API_KEY' | 'MAIL_FROM'>;

export async function sendEmail(env: MailEnv, mail: Mail): Promise<string> {
    const res = await fetch('https://api.resend.com/emails', {
        method: 'POST',
        headers: {
            Authorization: `Bearer ${env.RESEND_API_KEY}`,
            'Content-Type': 'application/json'
        },
        body: JSON.stringify({
            from: env.MAIL_FROM,
            to: [mail.to],
            subject: mail.subject,
            text: mail.text,
            html: mail.html,
            reply_to: mail.replyTo
        })
    });
    if (!res.ok) {
        throw new Error(`resend ${res.status}: ${await res.text()}`);
    }
    const body = (await res.json()) as { id: string };
    return body.id;
}

export function isDeliverable(address: string | null | undefined): address is string {
    return !!address && /^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$/.test(address);
}
"""

_VITEST_OLD = """\
import { defineWorkersConfig } from '@cloudflare/vitest-pool-workers/config';

export default defineWorkersConfig({
    test: {
        include: ['test/**/*.test.ts'],
        setupFiles: ['./test/setup.ts'],
        poolOptions: {
            workers: {
                singleWorker: true,
                miniflare: {
                    compatibilityDate: '2025-09-01',
                    compatibilityFlags: ['nodejs_compat'],
                    d1Databases: ['DB']
                }
            }
        }
    }
});
"""

_VITEST_NEW = """\
import path from 'node:path';
import { defineWorkersConfig, readD1Migrations } from '@cloudflare/vitest-pool-workers/config';

export default defineWorkersConfig(async () => {
    // The real migrations, applied in the pool by test/apply-migrations.ts.
    const migrations = await readD1Migrations(path.join(__dirname, 'drizzle'));
    return {
        test: {
            include: ['test/**/*.test.ts'],
            setupFiles: ['./test/apply-migrations.ts'],
            poolOptions: {
                workers: {
                    singleWorker: true,
                    miniflare: {
                        compatibilityDate: '2025-09-01',
                        compatibilityFlags: ['nodejs_compat'],
                        d1Databases: ['DB'],
                        bindings: { TEST_MIGRATIONS: migrations }
                    }
                }
            }
        }
    };
});
"""

_TEST_SETUP = """\
import { env } from 'cloudflare:test';
import schema from './fixtures/schema.sql?raw';

// A dump of the production schema, refreshed by hand when it changes (docs/testing.md).
for (const statement of schema.split(';\\n').filter((s) => s.trim())) {
    await env.DB.prepare(statement).run();
}
"""

_APPLY_MIGRATIONS = """\
import { applyD1Migrations, env } from 'cloudflare:test';

declare module 'cloudflare:test' {
    interface ProvidedEnv {
        DB: D1Database;
        TEST_MIGRATIONS: D1Migration[];
    }
}

// Setup files run before every test file, outside per-test storage isolation;
// applyD1Migrations() skips the migrations already applied.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
"""

_DB_INDEX = """\
import { error } from '@sveltejs/kit';
import { drizzle } from 'drizzle-orm/d1';
import * as schema from './schema';

export type DB = ReturnType<typeof drizzleFor>;

export function drizzleFor(d1: D1Database) {
    return drizzle(d1, { schema, casing: 'snake_case' });
}

export function getDb(platform: App.Platform | undefined): DB {
    if (!platform?.env?.DB) error(500, 'D1 binding missing');
    return drizzleFor(platform.env.DB);
}
"""

_TIME_TS = """\
export const MINUTE = 60;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Seconds since the epoch, the way every column in D1 stores a moment. */
export function unixNow(): number {
    return Math.floor(Date.now() / 1000);
}

export function fromDate(date: Date): number {
    return Math.floor(date.getTime() / 1000);
}
"""

_FORMAT_TS = """\
export const LIBRARY_TZ = '«tz»';

const dateFmt = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: LIBRARY_TZ });
const dateTimeFmt = new Intl.DateTimeFormat('en-US', {
    weekday: 'short',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    timeZone: LIBRARY_TZ
});

export function formatDate(ts: number): string {
    return dateFmt.format(new Date(ts * 1000));
}

export function formatDateTime(ts: number): string {
    return dateTimeFmt.format(new Date(ts * 1000));
}

export function formatCents(cents: number): string {
    return `$${(cents / 100).toFixed(2)}`;
}
"""

_ADMIN_LOANS_HEAD = """\
import { error, fail } from '@sveltejs/kit';
import { and, asc, eq, isNull, like, or } from 'drizzle-orm';
import { requireStaff } from '$lib/server/auth';
import { getDb } from '$lib/server/db';
import { loans, members, tools } from '$lib/server/db/schema';
import { returnLoan } from '$lib/server/loans';
import type { Actions, PageServerLoad } from './$types';

const PAGE_SIZE = 40;

export const load: PageServerLoad = async ({ url, platform, locals }) => {
    requireStaff(locals);
    const db = getDb(platform);
    const q = url.searchParams.get('q')?.trim() ?? '';
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const search = q
        ? or(like(members.name, `%${q}%`), like(tools.name, `%${q}%`), eq(members.cardNumber, q))
        : undefined;
    const rows = await db
        .select({
            id: loans.id,
            dueAt: loans.dueAt,
            renewals: loans.renewals,
            member: { id: members.id, name: members.name, card: members.cardNumber },
            tool: { id: tools.id, name: tools.name, slug: tools.slug }
        })
        .from(loans)
        .innerJoin(members, eq(members.id, loans.memberId))
        .innerJoin(tools, eq(tools.id, loans.toolId))
        .where(and(isNull(loans.returnedAt), search))
        .orderBy(asc(loans.dueAt))
        .limit(PAGE_SIZE + 1)
        .offset((page - 1) * PAGE_SIZE);
    return { q, page, loans: rows.slice(0, PAGE_SIZE), more: rows.length > PAGE_SIZE };
};

export const actions: Actions = {
    return: async ({ request, platform, locals }) => {
        requireStaff(locals);
        const form = await request.formData();
        const loanId = String(form.get('loanId') ?? '');
        if (!loanId.startsWith('ln_')) return fail(400, { loanId, invalid: true });
        const db = getDb(platform);
"""

_ADMIN_LOANS_RETURN_OLD = """\
        await returnLoan(db, loanId);
        return { returned: loanId };
    }
};
"""

_ADMIN_LOANS_RETURN_NEW = """\
        const { hold } = await returnLoan(db, loanId);
        if (hold && platform) {
            platform.context.waitUntil(announceHold(db, platform.env, hold));
        }
        return { returned: loanId, heldFor: hold?.memberId ?? null };
    }
};
"""

_ADMIN_LOANS_IMPORT_OLD = "import { returnLoan } from '$lib/server/loans';\n"
_ADMIN_LOANS_IMPORT_NEW = (
    "import { announceHold } from '$lib/server/holds';\n"
    "import { returnLoan } from '$lib/server/loans';\n"
)

_HOLDS_TS = """\
import { and, asc, eq } from 'drizzle-orm';
import { formatDateTime } from '../format';
import type { DB } from './db';
import { members, tools, waitlistEntries } from './db/schema';
import { sendEmail } from './email';
import { enqueueHoldExpiry } from './hold-queue';
import { newId } from './ids';
import { HOUR, unixNow } from './time';

export const HOLD_HOURS = «hold»;

export type Hold = ReturnType<typeof newHold>;

export function newHold(toolId: string, memberId: string, now = unixNow()) {
    return {
        id: newId('hd'),
        toolId,
        memberId,
        createdAt: now,
        expiresAt: now + HOLD_HOURS * HOUR,
        status: 'active' as const
    };
}

export async function joinWaitlist(db: DB, toolId: string, memberId: string) {
    await db
        .insert(waitlistEntries)
        .values({ toolId, memberId, joinedAt: unixNow() })
        .onConflictDoNothing();
    return waitlistPosition(db, toolId, memberId);
}

export async function leaveWaitlist(db: DB, toolId: string, memberId: string) {
    await db
        .delete(waitlistEntries)
        .where(and(eq(waitlistEntries.toolId, toolId), eq(waitlistEntries.memberId, memberId)));
}

function line(db: DB, toolId: string) {
    return db
        .select()
        .from(waitlistEntries)
        .where(eq(waitlistEntries.toolId, toolId))
        .orderBy(asc(waitlistEntries.joinedAt), asc(waitlistEntries.id));
}

export async function waitlistPosition(db: DB, toolId: string, memberId: string) {
    const entries = await line(db, toolId);
    const index = entries.findIndex((e) => e.memberId === memberId);
    return { position: index === -1 ? null : index + 1, length: entries.length };
}

export async function nextInLine(db: DB, toolId: string) {
    const [entry] = await line(db, toolId).limit(1);
    return entry ?? null;
}

/** Tell the member their tool is waiting for them. */
export async function announceHold(db: DB, env: Env, hold: Hold) {
    const [row] = await db
        .select({ member: members, tool: { name: tools.name, slug: tools.slug } })
        .from(members)
        .innerJoin(tools, eq(tools.id, hold.toolId))
        .where(eq(members.id, hold.memberId));
    if (row?.member.email) {
        await sendEmail(env, {
            to: row.member.email,
            subject: `${row.tool.name} is ready for you`,
            text: [
                `Hi ${row.member.name},`,
                '',
                `The ${row.tool.name} you were waiting for is back and set aside for you.`,
                `Pick it up by ${formatDateTime(hold.expiresAt)}, after that it goes to the`,
                'next person in line.',
                '',
                `${env.PUBLIC_BASE_URL}/tools/${row.tool.slug}`
            ].join('\\n')
        });
    }
    await enqueueHoldExpiry(env.HOLD_EVENTS, hold);
}
"""

_HOLD_QUEUE_TS = """\
import type { Hold } from './holds';

export type HoldEvent =
    | { type: 'hold.expire'; holdId: string }
    | { type: 'loan.remind'; loanId: string };

/** Wake the consumer when the hold runs out; it expires the hold if nobody collected it. */
export async function enqueueHoldExpiry(queue: Queue<HoldEvent>, hold: Hold) {
    const delaySeconds = hold.expiresAt - hold.createdAt;
    await queue.send({ type: 'hold.expire', holdId: hold.id }, { delaySeconds });
}
"""

_SWEEP_IMPORTS_LIB = """\
import { and, asc, eq, lte } from 'drizzle-orm';
import { drizzleFor, type DB } from '$lib/server/db';
import { toolHolds, tools, waitlistEntries } from '$lib/server/db/schema';
import { announceHold, newHold, nextInLine } from '$lib/server/holds';
"""

_SWEEP_IMPORTS_REL = """\
import { and, asc, eq, lte } from 'drizzle-orm';
import { drizzleFor, type DB } from './db';
import { toolHolds, tools, waitlistEntries } from './db/schema';
import { announceHold, newHold, nextInLine } from './holds';
"""

_SWEEP_BODY = """\

// Runs from the Worker's scheduled() handler (worker/entry.ts), every «every».
export async function runSweep(env: Env, scheduledTime: number) {
    const db = drizzleFor(env.DB);
    const now = Math.floor(scheduledTime / 1000);
    const started = Date.now();
    const holds = await expireHolds(db, env, now);
    console.log(
        `sweep: expired=${holds.expired} promoted=${holds.promoted} took=${Date.now() - started}ms`
    );
}

/** Expire holds nobody collected in time and pass each tool to the next member in line. */
export async function expireHolds(db: DB, env: Env, now: number) {
    const lapsed = await db
        .select()
        .from(toolHolds)
        .where(and(eq(toolHolds.status, 'active'), lte(toolHolds.expiresAt, now)))
        .orderBy(asc(toolHolds.expiresAt));
    let promoted = 0;
    for (const hold of lapsed) {
        const next = await nextInLine(db, hold.toolId);
        const fresh = next ? newHold(hold.toolId, next.memberId, now) : null;
        const expire = db
            .update(toolHolds)
            .set({ status: 'expired' })
            .where(and(eq(toolHolds.id, hold.id), eq(toolHolds.status, 'active')));
        if (fresh && next) {
            await db.batch([
                expire,
                db.insert(toolHolds).values(fresh),
                db.delete(waitlistEntries).where(eq(waitlistEntries.id, next.id))
            ]);
            await announceHold(db, env, fresh);
            promoted++;
        } else {
            await db.batch([
                expire,
                db.update(tools).set({ status: 'available' }).where(eq(tools.id, hold.toolId))
            ]);
        }
    }
    return { expired: lapsed.length, promoted };
}
"""

_ENTRY_TS = """\
// The Worker wrangler deploys: SvelteKit's generated worker for requests, plus the
// scheduled() handler adapter-cloudflare has no place for. Build first (`pnpm build`):
// this imports the adapter's output.
import sveltekit from '../.svelte-kit/cloudflare/_worker.js';
import { runSweep } from '../src/lib/server/sweep';

export default {
    fetch: sveltekit.fetch,
    async scheduled(controller, env, ctx) {
        ctx.waitUntil(runSweep(env, controller.scheduledTime));
    }
} satisfies ExportedHandler<Env>;
"""

_REMINDERS_TS = """\
import { and, eq, gt, isNotNull, isNull, lte } from 'drizzle-orm';
import { LIBRARY_TZ } from '../format';
import type { DB } from './db';
import { emailLog, loans, members, tools } from './db/schema';
import { sendEmail } from './email';
import { DAY } from './time';

export const REMINDER_LEAD_DAYS = «lead»;

interface ReminderInput {
    memberName: string;
    toolName: string;
    dueAt: number;
    baseUrl: string;
    tz?: string;
}

export function renderReminder(r: ReminderInput) {
    const due = new Intl.DateTimeFormat('en-US', {
        weekday: 'long',
        month: 'long',
        day: 'numeric',
        timeZone: r.tz ?? LIBRARY_TZ
    }).format(new Date(r.dueAt * 1000));
    return {
        subject: `Reminder: the ${r.toolName} is due back ${due}`,
        text: [
            `Hi ${r.memberName},`,
            '',
            `Just a heads-up: the ${r.toolName} you borrowed is due back ${due}.`,
            `Need it longer? You can renew it from ${r.baseUrl}/account.`,
            '',
            '- «library»'
        ].join('\\n')
    };
}

export async function sendDueReminders(db: DB, env: Env, now: number) {
    const rows = await db
        .select({ loan: loans, member: members, tool: tools })
        .from(loans)
        .innerJoin(members, eq(members.id, loans.memberId))
        .innerJoin(tools, eq(tools.id, loans.toolId))
        .where(
            and(
                isNull(loans.returnedAt),
                gt(loans.dueAt, now),
                lte(loans.dueAt, now + REMINDER_LEAD_DAYS * DAY),
                isNotNull(members.email)
            )
        );
    let sent = 0;
    for (const { loan, member, tool } of rows) {
        const mail = renderReminder({
            memberName: member.name,
            toolName: tool.name,
            dueAt: loan.dueAt,
            baseUrl: env.PUBLIC_BASE_URL
        });
        const providerId = await sendEmail(env, { to: member.email!, ...mail });
        await db
            .insert(emailLog)
            .values({ memberId: member.id, loanId: loan.id, kind: 'due_soon', providerId });
        sent++;
    }
    return sent;
}
"""

_HOLDS_TEST = """\
import { env } from 'cloudflare:test';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { drizzleFor } from '../src/lib/server/db';
import { toolHolds, tools } from '../src/lib/server/db/schema';
import {
    HOLD_HOURS,
    joinWaitlist,
    leaveWaitlist,
    newHold,
    waitlistPosition
} from '../src/lib/server/holds';
import { checkoutLoan, returnLoan } from '../src/lib/server/loans';
import { HOUR } from '../src/lib/server/time';
import { seedMember, seedTool } from './helpers';

const db = drizzleFor(env.DB);

describe('newHold', () => {
    it('expires the hold HOLD_HOURS after it starts', () => {
        const hold = newHold('tl_x', 'mb_x', 1_760_000_000);
        expect(hold.expiresAt - hold.createdAt).toBe(HOLD_HOURS * HOUR);
    });

    it('gives the hold an hd_ id', () => {
        expect(newHold('tl_x', 'mb_x').id).toMatch(/^hd_/);
    });
});

describe('waitlist', () => {
    it('join adds the member at the back of the line', async () => {
        const tool = await seedTool(db, { status: 'on_loan' });
        const [a, b] = [await seedMember(db), await seedMember(db)];
        await joinWaitlist(db, tool.id, a.id);
        expect(await joinWaitlist(db, tool.id, b.id)).toEqual({ position: 2, length: 2 });
    });

    it('joining twice keeps one entry', async () => {
        const tool = await seedTool(db, { status: 'on_loan' });
        const m = await seedMember(db);
        await joinWaitlist(db, tool.id, m.id);
        expect(await joinWaitlist(db, tool.id, m.id)).toEqual({ position: 1, length: 1 });
    });

    it('leave removes the member', async () => {
        const tool = await seedTool(db, { status: 'on_loan' });
        const m = await seedMember(db);
        await joinWaitlist(db, tool.id, m.id);
        await leaveWaitlist(db, tool.id, m.id);
        expect(await waitlistPosition(db, tool.id, m.id)).toEqual({ position: null, length: 0 });
    });
});

describe('returnLoan', () => {
    it('with nobody waiting makes the tool available', async () => {
        const tool = await seedTool(db);
        const [m, staff] = [await seedMember(db), await seedMember(db, { role: 'staff' })];
        const loan = await checkoutLoan(db, tool.id, m.id, staff.id);
        const back = await returnLoan(db, loan.id);
        expect(back.hold).toBeNull();
        const [row] = await db.select().from(tools).where(eq(tools.id, tool.id));
        expect(row.status).toBe('available');
    });

    it('gives the first in line a hold', async () => {
        const tool = await seedTool(db);
        const [m, next, staff] = [
            await seedMember(db),
            await seedMember(db),
            await seedMember(db, { role: 'staff' })
        ];
        const loan = await checkoutLoan(db, tool.id, m.id, staff.id);
        await joinWaitlist(db, tool.id, next.id);
        const back = await returnLoan(db, loan.id);
        expect(back.hold?.memberId).toBe(next.id);
        const holds = await db.select().from(toolHolds).where(eq(toolHolds.toolId, tool.id));
        expect(holds).toHaveLength(1);
        expect(await waitlistPosition(db, tool.id, next.id)).toEqual({ position: null, length: 0 });
    });
});
"""

_SWEEP_TEST = """\
import { env } from 'cloudflare:test';
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { drizzleFor } from '../src/lib/server/db';
import { toolHolds, tools } from '../src/lib/server/db/schema';
import { joinWaitlist, newHold } from '../src/lib/server/holds';
import { expireHolds } from '../src/lib/server/sweep';
import { HOUR } from '../src/lib/server/time';
import { seedMember, seedTool } from './helpers';

const db = drizzleFor(env.DB);
const mailEnv = { ...env, RESEND_API_KEY: 'test', MAIL_FROM: 'test@example.org' } as Env;

beforeEach(() => {
    vi.spyOn(globalThis, 'fetch').mockResolvedValue(Response.json({ id: 'msg_test' }));
});

async function heldTool(startedAt: number) {
    const tool = await seedTool(db, { status: 'on_hold' });
    const m = await seedMember(db);
    const hold = newHold(tool.id, m.id, startedAt);
    await db.insert(toolHolds).values(hold);
    return { tool, hold };
}

describe('expireHolds', () => {
    it('expires holds past expires_at', async () => {
        const { hold } = await heldTool(1_000_000);
        const result = await expireHolds(db, mailEnv, hold.expiresAt + 1);
        expect(result.expired).toBe(1);
        const [row] = await db.select().from(toolHolds).where(eq(toolHolds.id, hold.id));
        expect(row.status).toBe('expired');
    });

    it('promotes the next member when a hold lapses', async () => {
        const { tool, hold } = await heldTool(1_000_000);
        const next = await seedMember(db);
        await joinWaitlist(db, tool.id, next.id);
        const result = await expireHolds(db, mailEnv, hold.expiresAt);
        expect(result.promoted).toBe(1);
        const active = await db.select().from(toolHolds).where(eq(toolHolds.memberId, next.id));
        expect(active[0]?.status).toBe('active');
    });

    it('leaves holds that are still running alone', async () => {
        const { hold } = await heldTool(1_000_000);
        const result = await expireHolds(db, mailEnv, hold.expiresAt - HOUR);
        expect(result).toEqual({ expired: 0, promoted: 0 });
    });

    it('puts the tool back on the shelf when nobody is waiting', async () => {
        const { tool, hold } = await heldTool(1_000_000);
        await expireHolds(db, mailEnv, hold.expiresAt + 60);
        const [row] = await db.select().from(tools).where(eq(tools.id, tool.id));
        expect(row.status).toBe('available');
    });

    it('does not promote twice when two sweeps overlap', async () => {
        const { tool, hold } = await heldTool(1_000_000);
        const next = await seedMember(db);
        await joinWaitlist(db, tool.id, next.id);
        await Promise.all([
            expireHolds(db, mailEnv, hold.expiresAt),
            expireHolds(db, mailEnv, hold.expiresAt)
        ]);
        const mine = await db.select().from(toolHolds).where(eq(toolHolds.memberId, next.id));
        expect(mine).toHaveLength(1);
    });
});
"""

_REMINDERS_TEST = """\
import { env } from 'cloudflare:test';
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { drizzleFor } from '../src/lib/server/db';
import { loans } from '../src/lib/server/db/schema';
import {
    REMINDER_LEAD_DAYS,
    renderReminder,
    sendDueReminders
} from '../src/lib/server/reminders';
import { DAY } from '../src/lib/server/time';
import { seedLoan, seedMember } from './helpers';

const db = drizzleFor(env.DB);
const mailEnv = { ...env, RESEND_API_KEY: 'test', MAIL_FROM: 'test@example.org' } as Env;
const NOW = 1_773_000_000;

let fetchSpy: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
    fetchSpy = vi.spyOn(globalThis, 'fetch').mockResolvedValue(Response.json({ id: 'msg_1' }));
});

describe('renderReminder', () => {
    it('names the tool and the member', () => {
        const mail = renderReminder({
            memberName: 'Ada',
            toolName: '«tool_title»',
            dueAt: NOW + 2 * DAY,
            baseUrl: 'https://example.org'
        });
        expect(mail.text).toContain('Hi Ada,');
        expect(mail.subject).toContain('«tool_title»');
    });

    it('shows the due date in library local time', () => {
        // Staff enter due dates as calendar days; this one is Sunday 29 March.
        const mail = renderReminder({
            memberName: 'Ada',
            toolName: '«tool_title»',
            dueAt: Date.UTC(2026, 2, 29) / 1000,
            baseUrl: 'https://example.org'
        });
        expect(mail.text).toContain('Sunday, March 29');
    });
});

describe('sendDueReminders', () => {
    it('picks loans coming due inside the lead window', async () => {
        await seedLoan(db, { dueAt: NOW + REMINDER_LEAD_DAYS * DAY - 60 });
        await seedLoan(db, { dueAt: NOW + REMINDER_LEAD_DAYS * DAY + 3600 });
        expect(await sendDueReminders(db, mailEnv, NOW)).toBe(1);
    });

    it('skips members who opted out of email', async () => {
        const member = await seedMember(db, { emailOptOut: true });
        await seedLoan(db, { memberId: member.id, dueAt: NOW + DAY });
        expect(await sendDueReminders(db, mailEnv, NOW)).toBe(0);
        expect(fetchSpy).not.toHaveBeenCalled();
    });

    it('skips returned loans', async () => {
        await seedLoan(db, { dueAt: NOW + DAY, returnedAt: NOW - 60 });
        expect(await sendDueReminders(db, mailEnv, NOW)).toBe(0);
    });

    it('claims each loan once across overlapping sweeps', async () => {
        const loan = await seedLoan(db, { dueAt: NOW + DAY });
        const [a, b] = await Promise.all([
            sendDueReminders(db, mailEnv, NOW),
            sendDueReminders(db, mailEnv, NOW + 600)
        ]);
        expect(a + b).toBe(1);
        const [row] = await db.select().from(loans).where(eq(loans.id, loan.id));
        expect(row.reminderSentAt).not.toBeNull();
    });
});
"""

_DOCS_QUEUES = """\
«n1»:## Delay messages
«n2»-
«n3»-When you send a message, you can delay it before it is delivered to a consumer, using \
the `delaySeconds` parameter. You can set the delay when you send a single message or a batch.
«n4»-
«n5»:Messages can be delayed by up to 12 hours (43,200 seconds). Delays longer than that are \
rejected by `send()` and `sendBatch()`.
«n6»-
«n7»-```ts
«n8»:// Delay the message by 10 minutes
«n9»:await env.MY_QUEUE.send(message, { delaySeconds: 600 });
«n10»-```
«n11»-
«n12»:You can also delay a retry from the consumer with `message.retry({ delaySeconds })`, \
which has the same 12 hour limit.
"""


# --- filler: the rest of the app, which the agent reads on its way -----------------------------

#: Tables of the app the story does not touch: (table, Singular, id prefix, fields), a field
#: being (camelCase, snake_case, kind) with kind ref:<table>, text, text!, int, time, enum:a|b.
_TABLES: tuple[tuple[str, str, str, tuple[tuple[str, str, str], ...]], ...] = (
    ("inspections", "Inspection", "in", (
        ("toolId", "tool_id", "ref:tools"), ("inspectedBy", "inspected_by", "ref:members"),
        ("result", "result", "enum:pass|fail|needs_parts"), ("notes", "notes", "text"),
        ("inspectedAt", "inspected_at", "time"))),
    ("repairs", "Repair", "rp", (
        ("toolId", "tool_id", "ref:tools"), ("reportedBy", "reported_by", "ref:members"),
        ("description", "description", "text!"), ("state", "state", "enum:open|parts|fixed"),
        ("fixedAt", "fixed_at", "time?"), ("costCents", "cost_cents", "int"))),
    ("donations", "Donation", "dn", (
        ("donorName", "donor_name", "text!"), ("donorEmail", "donor_email", "text"),
        ("toolId", "tool_id", "ref:tools"), ("receivedAt", "received_at", "time"),
        ("valueCents", "value_cents", "int"))),
    ("shifts", "Shift", "sh", (
        ("memberId", "member_id", "ref:members"), ("startsAt", "starts_at", "time"),
        ("endsAt", "ends_at", "time"), ("post", "post", "enum:desk|repair|intake"),
        ("note", "note", "text"))),
    ("workshops", "Workshop", "ws", (
        ("title", "title", "text!"), ("hostId", "host_id", "ref:members"),
        ("startsAt", "starts_at", "time"), ("seats", "seats", "int"),
        ("priceCents", "price_cents", "int"), ("kind", "kind", "enum:intro|safety|project"))),
)  # fmt: skip


def _schema_table(table: str, fields: Sequence[tuple[str, str, str]]) -> str:
    lines = [f"export const {table} = sqliteTable(", f"    '{table}',", "    {"]
    cols = ["        id: text('id').primaryKey()"]
    for camel_name, snake, kind in fields:
        if kind.startswith("ref:"):
            target = kind[4:]
            cols.append(
                f"        {camel_name}: text('{snake}')\n            .notNull()\n"
                f"            .references(() => {target}.id)"
            )
        elif kind.startswith("enum:"):
            values = ", ".join(f"'{v}'" for v in kind[5:].split("|"))
            cols.append(f"        {camel_name}: text('{snake}', {{ enum: [{values}] }}).notNull()")
        elif kind == "time":
            cols.append(f"        {camel_name}: integer('{snake}').notNull().default(now)")
        elif kind == "time?":
            cols.append(f"        {camel_name}: integer('{snake}')")
        elif kind == "int":
            cols.append(f"        {camel_name}: integer('{snake}').notNull().default(0)")
        elif kind == "text!":
            cols.append(f"        {camel_name}: text('{snake}').notNull()")
        else:
            cols.append(f"        {camel_name}: text('{snake}')")
    lines.append(",\n".join(cols))
    ref = next((c for c, _, k in fields if k.startswith("ref:")), None)
    lines.append("    },")
    lines.append(f"    (t) => [index('{table}_{_snake(ref or 'id')}_idx').on(t.{ref or 'id'})]")
    lines.append(");")
    return "\n".join(lines) + "\n"


def _snake(camel_name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in camel_name)


def _schema_file(status: str, loan_tail: str, holds: bool) -> str:
    extra = "\n".join(_schema_table(t, f) for t, _, _, f in _TABLES)
    rest = _SCHEMA_REST.replace(_SCHEMA_TYPES, extra + "\n" + _SCHEMA_TYPES)
    if holds:
        rest = rest.replace(_SCHEMA_TYPES, _SCHEMA_NEW_TABLES + _SCHEMA_TYPES)
    return _tabs(_SCHEMA_HEAD + status + _SCHEMA_MID + loan_tail + rest)


def _module_blocks(rng: random.Random, table: str, single: str, prefix: str,
                   fields: Sequence[tuple[str, str, str]]) -> tuple[str, list[str]]:  # fmt: skip
    """(the imports, the functions) of `src/lib/server/<table>.ts`."""
    plural = table[:1].upper() + table[1:]
    lower = single[:1].lower() + single[1:]
    refs = [c for c, _, k in fields if k.startswith("ref:")]
    enums = [(c, k[5:].split("|")) for c, _, k in fields if k.startswith("enum:")]
    times = [c for c, _, k in fields if k in ("time", "time?")]
    texts = [c for c, _, k in fields if k in ("text", "text!")]
    order = times[0] if times else "id"
    zod = []
    for c, _, k in fields:
        if k.startswith("enum:"):
            zod.append(f"    {c}: z.enum([{', '.join(repr(v) for v in k[5:].split('|'))}]),")
        elif k in ("int", "time", "time?"):
            opt = ".optional()" if k != "int" else ".default(0)"
            zod.append(f"    {c}: z.coerce.number().int().nonnegative(){opt},")
        elif k.startswith("ref:"):
            zod.append(f"    {c}: z.string().startsWith('{k[4:6]}_'),")
        else:
            opt = "" if k == "text!" else ".optional()"
            zod.append(f"    {c}: z.string().trim().max({rng.choice([80, 200, 500])}){opt},")
    ops = ["and", "asc", "desc", "eq", "gte", "lt", "sql"]
    head = (
        "import { error } from '@sveltejs/kit';\n"
        f"import {{ {', '.join(ops)} }} from 'drizzle-orm';\n"
        "import { z } from 'zod';\n"
        "import type { DB } from './db';\n"
        f"import {{ {table} }} from './db/schema';\n"
        "import { newId } from './ids';\n"
        "import { unixNow } from './time';\n\n"
        f"export const {lower}Input = z.object({{\n" + "\n".join(zod) + "\n});\n\n"
        f"export type {single}Input = z.infer<typeof {lower}Input>;\n"
    )
    page = rng.choice([25, 30, 50])
    blocks = [
        f"export async function list{plural}(db: DB, page = 1) {{\n"
        f"    return db\n        .select()\n        .from({table})\n"
        f"        .orderBy(desc({table}.{order}))\n        .limit({page})\n"
        f"        .offset((page - 1) * {page});\n}}\n",
        f"export async function get{single}(db: DB, id: string) {{\n"
        f"    const [row] = await db.select().from({table}).where(eq({table}.id, id)).limit(1);\n"
        f"    if (!row) error(404, '{single} not found');\n    return row;\n}}\n",
        f"export async function create{single}(db: DB, input: unknown) {{\n"
        f"    const parsed = {lower}Input.safeParse(input);\n"
        f"    if (!parsed.success)\n"
        f"        error(400, parsed.error.issues[0]?.message ?? 'Invalid input');\n"
        f"    const [row] = await db\n        .insert({table})\n"
        f"        .values({{ id: newId('{prefix}'), ...parsed.data }})\n"
        f"        .returning();\n    return row;\n}}\n",
        f"export async function update{single}(db: DB, id: string, patch: unknown) {{\n"
        f"    const parsed = {lower}Input.partial().safeParse(patch);\n"
        f"    if (!parsed.success)\n"
        f"        error(400, parsed.error.issues[0]?.message ?? 'Invalid input');\n"
        f"    const [row] = await db\n        .update({table})\n        .set(parsed.data)\n"
        f"        .where(eq({table}.id, id))\n        .returning();\n"
        f"    if (!row) error(404, '{single} not found');\n    return row;\n}}\n",
        f"export async function delete{single}(db: DB, id: string) {{\n"
        f"    const deleted = await db.delete({table}).where(eq({table}.id, id)).returning({{\n"
        f"        id: {table}.id\n    }});\n"
        f"    if (deleted.length === 0) error(404, '{single} not found');\n}}\n",
    ]
    for ref in refs:
        name = ref[:-2]
        blocks.append(
            f"export async function {table}For{name.title()}(db: DB, {ref}: string) {{\n"
            f"    return db\n        .select()\n        .from({table})\n"
            f"        .where(eq({table}.{ref}, {ref}))\n"
            f"        .orderBy(desc({table}.{order}));\n}}\n"
        )
    for field, values in enums:
        cases = "\n".join(f"        {v}: 0," for v in values)
        blocks.append(
            f"export async function count{plural}By{field.title()}(db: DB) {{\n"
            f"    const rows = await db\n"
            f"        .select({{ {field}: {table}.{field}, n: sql<number>`count(*)` }})\n"
            f"        .from({table})\n        .groupBy({table}.{field});\n"
            f"    const counts = {{\n{cases}\n    }};\n"
            f"    for (const r of rows) counts[r.{field}] = r.n;\n    return counts;\n}}\n"
        )
    if times:
        t = times[0]
        blocks.append(
            f"export async function {table}Between(db: DB, from: number, to = unixNow()) {{\n"
            f"    if (to < from) error(400, 'Range ends before it starts');\n"
            f"    return db\n        .select()\n        .from({table})\n"
            f"        .where(and(gte({table}.{t}, from), lt({table}.{t}, to)))\n"
            f"        .orderBy(asc({table}.{t}));\n}}\n"
        )
    cols = ["id", *(c for c, _, _ in fields)]
    row = ", ".join(f"r.{c}" for c in cols)
    blocks.append(
        f"export async function export{plural}Csv(db: DB): Promise<string> {{\n"
        f"    const rows = await db.select().from({table}).orderBy(asc({table}.id));\n"
        f"    const header = '{','.join(_snake(c) for c in cols)}';\n"
        f"    const escape = (v: unknown) =>\n"
        f'        v == null ? \'\' : /[",\\n]/.test(String(v)) ? `"${{String(v).replace(/"/g, '
        f'\'""\')}}"` : String(v);\n'
        f"    return [header, ...rows.map((r) => [{row}].map(escape).join(','))].join('\\n');\n}}\n"
    )
    if texts:
        t = texts[0]
        blocks.append(
            f"export async function search{plural}(db: DB, q: string, limit = 20) {{\n"
            f"    const needle = `%${{q.trim().toLowerCase()}}%`;\n"
            f"    if (needle.length < 4) return [];\n"
            f"    return db\n        .select()\n        .from({table})\n"
            f"        .where(sql`lower(${{{table}.{t}}}) like ${{needle}}`)\n"
            f"        .limit(limit);\n}}\n"
        )
    return head, blocks


def _module(rng: random.Random, index: int, blocks: int) -> tuple[str, str]:
    table, single, prefix, fields = _TABLES[index % len(_TABLES)]
    head, funcs = _module_blocks(rng, table, single, prefix, fields)
    body = head + "\n" + "\n".join(funcs[: max(2, blocks)])
    return f"src/lib/server/{table}.ts", _tabs(body)


def _component(rng: random.Random, index: int, rows: int) -> tuple[str, str]:
    """An admin list page for one of the filler tables: `+page.svelte`."""
    table, single, _, fields = _TABLES[index % len(_TABLES)]
    shown = [(c, s, k) for c, s, k in fields if not k.startswith("ref:")][: max(2, rows)]
    heads = "\n".join(f"                <th>{s.replace('_', ' ')}</th>" for _, s, _ in shown)
    cells = []
    for c, _, k in shown:
        if k.startswith("time"):
            cells.append(f"                    <td>{{formatDate(item.{c})}}</td>")
        elif c.endswith("Cents"):
            cells.append(f'                    <td class="num">{{formatCents(item.{c})}}</td>')
        else:
            cells.append(f"                    <td>{{item.{c} ?? '—'}}</td>")
    title = table[:1].upper() + table[1:]
    body = f"""\
<script lang="ts">
    import {{ enhance }} from '$app/forms';
    import {{ page }} from '$app/state';
    import {{ formatCents, formatDate }} from '$lib/format';
    import type {{ PageProps }} from './$types';

    let {{ data, form }}: PageProps = $props();
    let filter = $state(page.url.searchParams.get('q') ?? '');
    let confirming = $state<string | null>(null);
    const visible = $derived(
        filter
            ? data.items.filter((i) =>
                    JSON.stringify(i).toLowerCase().includes(filter.toLowerCase())
                )
            : data.items
    );
</script>

<svelte:head><title>{title} · admin</title></svelte:head>

<header class="bar">
    <h1>{title}</h1>
    <input type="search" placeholder="Filter" bind:value={{filter}} />
    <a class="button" href="/admin/{table}/new">New {single.lower()}</a>
</header>

{{#if form?.deleted}}
    <p class="flash">Deleted.</p>
{{/if}}

<table>
    <thead>
        <tr>
{heads}
            <th></th>
        </tr>
    </thead>
    <tbody>
        {{#each visible as item (item.id)}}
            <tr>
{chr(10).join(cells)}
                <td class="actions">
                    <a href="/admin/{table}/{{item.id}}">Edit</a>
                    {{#if confirming === item.id}}
                        <form method="POST" action="?/delete" use:enhance>
                            <input type="hidden" name="id" value={{item.id}} />
                            <button class="danger">Really delete</button>
                        </form>
                    {{:else}}
                        <button class="link" onclick={{() => (confirming = item.id)}}>
                            Delete
                        </button>
                    {{/if}}
                </td>
            </tr>
        {{:else}}
            <tr><td colspan="{len(shown) + 1}" class="empty">Nothing here yet.</td></tr>
        {{/each}}
    </tbody>
</table>

{{#if data.more}}
    <a class="more" href="?page={{data.page + 1}}&q={{encodeURIComponent(filter)}}">Next page</a>
{{/if}}

<style>
    .bar {{
        display: flex;
        gap: 1rem;
        align-items: center;
        margin-bottom: 1rem;
    }}
    table {{
        width: 100%;
        border-collapse: collapse;
    }}
    th,
    td {{
        text-align: left;
        padding: 0.4rem 0.6rem;
        border-bottom: 1px solid var(--border);
    }}
    .num {{
        text-align: right;
        font-variant-numeric: tabular-nums;
    }}
    .actions {{
        white-space: nowrap;
    }}
    .empty {{
        color: var(--muted);
        text-align: center;
    }}
</style>
"""
    del rng
    return f"src/routes/admin/{table}/+page.svelte", _tabs(body)


_COMMITS = (
    "catalogue: show deposit on tool cards", "auth: rotate session cookie on role change",
    "loans: renewals respect the per-tool limit", "admin: search loans by card number",
    "members: export as csv", "repairs: track parts cost", "deps: bump svelte to 5.38",
    "inspections: monthly report page", "format: medium date style everywhere",
    "workshops: seat count on the listing", "donations: receipt email copy",
    "shifts: desk rota view", "ci: run svelte-check on pull requests", "tools: slugs are unique",
    "account: show loan history", "categories: drag to reorder", "fix: timezone on rota page",
    "search: ignore retired tools", "admin: bulk retire tools", "deps: bump wrangler",
    "members: card numbers are case-insensitive", "photos: lazy-load on the catalogue",
)  # fmt: skip


def _git_log(rng: random.Random, n: int) -> str:
    picks = [rng.choice(_COMMITS) for _ in range(n)]
    return "\n".join(f"{''.join(rng.choice('0123456789abcdef') for _ in range(7))} {p}"
                     for p in picks) + "\n"  # fmt: skip


# --- what the commands print --------------------------------------------------------------------

_LOANS_TESTS = (
    "returnLoan > stamps returned_at and frees the tool",
    "returnLoan > refuses a loan returned twice",
    "checkoutLoan > creates the loan and marks the tool on loan",
    "checkoutLoan > refuses a tool that is not available",
    "checkoutLoan > takes the due date from the tool's loan days",
    "renewLoan > pushes the due date out by the loan days",
    "renewLoan > stops at MAX_RENEWALS",
    "overdueLoans > lists only unreturned loans past due",
)
_HOLDS_TESTS = (
    ("newHold > expires the hold HOLD_HOURS after it starts", False),
    ("newHold > gives the hold an hd_ id", False),
    ("waitlist > join adds the member at the back of the line", True),
    ("waitlist > joining twice keeps one entry", True),
    ("waitlist > leave removes the member", True),
    ("returnLoan > with nobody waiting makes the tool available", True),
    ("returnLoan > gives the first in line a hold", True),
)
_SWEEP_TESTS = (
    "expireHolds > expires holds past expires_at",
    "expireHolds > promotes the next member when a hold lapses",
    "expireHolds > leaves holds that are still running alone",
    "expireHolds > puts the tool back on the shelf when nobody is waiting",
    "expireHolds > does not promote twice when two sweeps overlap",
)
_REMINDER_TESTS = (
    "renderReminder > names the tool and the member",
    "renderReminder > shows the due date in library local time",
    "sendDueReminders > picks loans coming due inside the lead window",
    "sendDueReminders > skips members who opted out of email",
    "sendDueReminders > skips returned loans",
    "sendDueReminders > claims each loan once across overlapping sweeps",
)
_TZ_TEST = _REMINDER_TESTS[1]
_RULE = "⎯" * 7
_LONG_RULE = "⎯" * 51

_MIGRATION_NAMES = (
    "mighty_hellcat", "odd_vulture", "brave_nightcrawler", "quiet_stardust", "lush_wasp",
    "tidy_moondragon", "faithful_sentry", "spicy_hulk", "bent_doctor_faustus", "wet_jubilee",
    "clear_silver_fox", "gorgeous_mojo", "lying_kat_farrell", "sharp_penance", "famous_ogun",
    "melodic_rocket_racer", "cool_madame_web", "eager_roughhouse", "nifty_ultimatum",
    "same_korg", "tense_the_watchers", "rainy_jack_power", "public_calypso", "dark_shinobi",
)  # fmt: skip


def _ms(rng: random.Random, lo: int = 2, hi: int = 40) -> str:
    return f"{rng.randint(lo, hi)}ms"


def _vitest(
    rng: random.Random,
    w: _World,
    files: Sequence[tuple[str, Sequence[tuple[str, str | None]]]],
    clock: str,
) -> tuple[str, int]:
    """`pnpm test`'s output: files with (test, error or None); the exit code."""
    out = [
        "",
        f"> {w.proj}@{w.version} test {w.root}",
        "> vitest run",
        "",
        "",
        f" RUN  v3.2.4 {w.root}",
        "",
    ]
    failures: list[tuple[str, str, str]] = []
    for path, tests in files:
        bad = [t for t in tests if t[1] is not None]
        took = sum(rng.randint(3, 30) for _ in tests)
        if not bad:
            out.append(f" ✓ {path} ({len(tests)} tests) {took}ms")
            continue
        out.append(f" ❯ {path} ({len(tests)} tests | {len(bad)} failed) {took}ms")
        for name, err in tests:
            if err is None:
                out.append(f"   ✓ {name} {_ms(rng, 1, 9)}")
            else:
                out.append(f"   × {name} {_ms(rng, 3, 30)}")
                out.append(f"     → {err.splitlines()[0].removeprefix('Error: ')}")
                failures.append((path, name, err))
    if failures:
        out += ["", f"{_RULE} Failed Tests {len(failures)} {_RULE}", ""]
        for k, (path, name, err) in enumerate(failures, 1):
            out.append(f" FAIL  {path} > {name}")
            out.append(err)
            out += ["", f"{_LONG_RULE}[{k}/{len(failures)}]⎯", ""]
    n_files = len(files)
    bad_files = sum(any(e for _, e in t) for _, t in files)
    n_tests = sum(len(t) for _, t in files)
    bad_tests = len(failures)
    if bad_files:
        out.append(f" Test Files  {bad_files} failed | {n_files - bad_files} passed ({n_files})")
        out.append(f"      Tests  {bad_tests} failed | {n_tests - bad_tests} passed ({n_tests})")
    else:
        out.append(f" Test Files  {n_files} passed ({n_files})")
        out.append(f"      Tests  {n_tests} passed ({n_tests})")
    out.append(f"   Start at  {clock}")
    out.append(
        f"   Duration  {rng.randint(3, 6)}.{rng.randint(10, 99)}s (transform "
        f"{rng.randint(300, 700)}ms, setup {rng.randint(90, 400)}ms, collect "
        f"{rng.randint(1, 2)}.{rng.randint(10, 99)}s, tests {rng.randint(400, 1400)}ms, "
        f"environment 0ms, prepare {rng.randint(600, 1400)}ms)"
    )
    out.append("")
    if bad_tests:
        out.append(" ELIFECYCLE  Test failed. See above for more details.")
    return "\n".join(out) + "\n", 1 if bad_tests else 0


def _d1_error(table: str, where: str, test: str, line: int) -> str:
    return (
        f"Error: D1_ERROR: no such table: {table}: SQLITE_ERROR\n"
        " ❯ D1DatabaseSessionAlwaysPrimary._sendOrThrow cloudflare-internal:d1-api:139:19\n"
        " ❯ D1PreparedStatement.raw cloudflare-internal:d1-api:308:32\n"
        f" ❯ {where}\n"
        f" ❯ {test}:{line}:9"
    )


#: A test file's run: its path, and each test with its error (None: passed).
_Run = tuple[str, list[tuple[str, str | None]]]


def _existing_test_files(w: _World) -> list[_Run]:
    files: list[_Run] = []
    for name, n in w.existing_tests:
        tests: list[tuple[str, str | None]]
        if name == "loans":
            tests = [(t, None) for t in _LOANS_TESTS[:n]]
        else:
            tests = [(f"{name} > case {k}", None) for k in range(1, n + 1)]
        files.append((f"test/{name}.test.ts", tests))
    return files


def _vite_build(rng: random.Random, w: _World) -> str:
    def chunk(path: str) -> str:
        size = rng.uniform(0.1, 60)
        return f"{path:<70} {size:>6.2f} kB │ gzip: {size * rng.uniform(0.25, 0.4):>5.2f} kB"

    def h() -> str:
        return "".join(rng.choice(_B62) for _ in range(8))

    client = [".svelte-kit/output/client/.vite/manifest.json",
              f".svelte-kit/output/client/_app/immutable/assets/0.{h()}.css",
              f".svelte-kit/output/client/_app/immutable/entry/start.{h()}.js",
              f".svelte-kit/output/client/_app/immutable/entry/app.{h()}.js"]  # fmt: skip
    client += [f".svelte-kit/output/client/_app/immutable/nodes/{k}.{h()}.js" for k in range(11)]
    client += [f".svelte-kit/output/client/_app/immutable/chunks/{h()}.js" for _ in range(5)]
    server = [
        ".svelte-kit/output/server/.vite/manifest.json",
        ".svelte-kit/output/server/index.js",
        ".svelte-kit/output/server/internal.js",
    ]
    server += [f".svelte-kit/output/server/entries/pages/{p}" for p in (
        "_layout.svelte.js", "_page.svelte.js", "tools/_slug_/_page.svelte.js",
        "tools/_slug_/_page.server.ts.js", "account/_page.svelte.js",
        "admin/loans/_page.server.ts.js", "admin/loans/_page.svelte.js")]  # fmt: skip
    server += [f".svelte-kit/output/server/chunks/{h()}.js" for _ in range(3)]
    return "\n".join([
        "", f"> {w.proj}@{w.version} build {w.root}", "> vite build", "",
        "vite v7.1.4 building SSR bundle for production...", "transforming...",
        f"✓ {rng.randint(380, 460)} modules transformed.", "rendering chunks...",
        "vite v7.1.4 building for production...", "transforming...",
        f"✓ {rng.randint(300, 380)} modules transformed.", "rendering chunks...",
        "computing gzip size...",
        f"{'.svelte-kit/output/client/_app/version.json':<70}   0.03 kB │ gzip:  0.05 kB",
        *(chunk(p) for p in client),
        f"✓ built in {rng.randint(2, 4)}.{rng.randint(10, 99)}s",
        *(chunk(p) for p in server), f"✓ built in {rng.randint(5, 8)}.{rng.randint(10, 99)}s",
        "", "Run npm run preview to preview your production build locally.", "",
        "> Using @sveltejs/adapter-cloudflare", "  ✔ done", "",
    ])  # fmt: skip


_WRANGLER = " ⛅️ wrangler 4.34.0\n───────────────────\n"

_MIGRATION_HOLDS = _tabs("""\
CREATE TABLE `tool_holds` (
    `id` text PRIMARY KEY NOT NULL,
    `tool_id` text NOT NULL,
    `member_id` text NOT NULL,
    `created_at` integer NOT NULL,
    `expires_at` integer NOT NULL,
    `status` text DEFAULT 'active' NOT NULL,
    FOREIGN KEY (`tool_id`) REFERENCES `tools`(`id`) ON UPDATE no action ON DELETE no action,
    FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `holds_tool_idx` ON `tool_holds` (`tool_id`);--> statement-breakpoint
CREATE INDEX `holds_status_expires_idx` ON `tool_holds` (`status`,`expires_at`);--> \
statement-breakpoint
CREATE TABLE `waitlist_entries` (
    `id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
    `tool_id` text NOT NULL,
    `member_id` text NOT NULL,
    `joined_at` integer NOT NULL,
    FOREIGN KEY (`tool_id`) REFERENCES `tools`(`id`) ON UPDATE no action ON DELETE no action,
    FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `waitlist_tool_member_idx` ON `waitlist_entries` (`tool_id`,`member_id`);\
--> statement-breakpoint
CREATE INDEX `waitlist_tool_joined_idx` ON `waitlist_entries` (`tool_id`,`joined_at`);""")


def _drizzle_generate(w: _World, path: str, *, holds: bool, sent: bool) -> str:
    """What `drizzle-kit generate` prints: the tables it read, the migration it wrote."""
    tables = [
        ("members", 9, 2, 0),
        ("categories", 4, 0, 0),
        ("tools", 9, 2, 1),
        ("loans", 9 if sent else 8, 3, 3),
        ("email_log", 6, 0, 2),
    ]
    for table, _, _, fields in _TABLES:
        refs = sum(k.startswith("ref:") for _, _, k in fields)
        tables.append((table, len(fields) + 1, 1, refs))
    if holds:
        tables += [("waitlist_entries", 4, 2, 2), ("tool_holds", 6, 2, 2)]
    return "\n".join([
        "No config path provided, using default 'drizzle.config.ts'",
        f"Reading config file '{w.root}/drizzle.config.ts'",
        f"{len(tables)} tables",
        *(f"{t} {c} columns {i} indexes {k} fks" for t, c, i, k in tables),
        "",
        f"[✓] Your SQL migration file ➜ {path} 🚀",
    ]) + "\n"  # fmt: skip


# --- pi's tools ---------------------------------------------------------------------------------


class _Pi:
    """A pi session being written: the app's files as they stand, and the four tools."""

    def __init__(self, seed: int, scale: float) -> None:
        self.rng = random.Random(f"pistory:{seed}")
        self.frng = random.Random(f"pistory-filler:{seed}")
        self.ids = random.Random(f"pistory-ids:{seed}")
        self.scale = scale
        self.w = _world(self.rng)
        self.s = Session(rng=self.rng, system=_system_prompt(self.w))
        self.files: dict[str, str] = {}
        self.filler_slots = 0

    # messages
    def user(self, text: str) -> None:
        self.s.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})

    def bang(self, command: str, output: str) -> None:
        """A line the user ran with `!`: pi hands it to the model as a user turn."""
        self.user(f"Ran `{command}`\n```\n{output.rstrip(chr(10))}\n```")

    def say(self, text: str) -> None:
        self.s.messages.append({"role": "assistant", "content": text})

    def _id(self) -> str:
        return "toolu_01" + "".join(self.ids.choice(_B62) for _ in range(22))

    def turn(self, text: str, *calls: tuple[str, dict[str, Any], str, bool]) -> None:
        """One assistant message with its tool calls (run in parallel), then their results.
        Each call: (tool, arguments, result, filler)."""
        ids = [self._id() for _ in calls]
        self.s.messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {"id": i, "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args)}}
                    for i, (name, args, _, _) in zip(ids, calls, strict=True)
                ],
            }
        )  # fmt: skip
        at = len(self.s.messages) - 1
        if calls and all(f for *_, f in calls):
            self.s.filler_at.add(at)
        for i, (_, _, result, filler) in zip(ids, calls, strict=True):
            self.s.messages.append({"role": "tool", "tool_call_id": i, "content": result})
            if filler:
                self.s.filler_at.add(len(self.s.messages) - 1)

    # the tools' results
    def read(
        self, path: str, *, offset: int | None = None, limit: int | None = None,
        filler: bool = False,
    ) -> tuple[str, dict[str, Any], str, bool]:  # fmt: skip
        content = self.files[path]
        lines = content.split("\n")
        start = offset - 1 if offset else 0
        args: dict[str, Any] = {"path": path}
        if offset is not None:
            args["offset"] = offset
        if limit is not None:
            args["limit"] = limit
            end = min(start + limit, len(lines))
            text = "\n".join(lines[start:end])
            if end < len(lines):
                text += (
                    f"\n\n[{len(lines) - end} more lines in file. "
                    f"Use offset={end + 1} to continue.]"
                )
        else:
            text = "\n".join(lines[start:])
        assert len(lines) <= 2000 and len(text.encode()) <= 50 * 1024, path
        return ("read", args, text, filler)

    def bash(
        self, command: str, output: str, *, code: int = 0, timeout: int | None = None,
        filler: bool = False,
    ) -> tuple[str, dict[str, Any], str, bool]:  # fmt: skip
        text = output or "(no output)"
        if code:
            text += f"\n\nCommand exited with code {code}"
        args: dict[str, Any] = {"command": command}
        if timeout is not None:
            args["timeout"] = timeout
        return ("bash", args, text, filler)

    def edit(self, path: str, old: str, new: str) -> tuple[str, dict[str, Any], str, bool]:
        content = self.files[path]
        assert content.count(old) == 1, (path, old[:60])
        self.files[path] = content.replace(old, new)
        return ("edit", {"path": path, "oldText": old, "newText": new},
                f"Successfully replaced text in {path}.", False)  # fmt: skip

    def edit_missing(self, path: str, old: str, new: str) -> tuple[str, dict[str, Any], str, bool]:
        assert old not in self.files[path]
        return ("edit", {"path": path, "oldText": old, "newText": new},
                f"Could not find the exact text in {path}. The old text must match exactly "
                "including all whitespace and newlines.", False)  # fmt: skip

    def write(self, path: str, content: str) -> tuple[str, dict[str, Any], str, bool]:
        self.files[path] = content
        return ("write", {"path": path, "content": content},
                f"Successfully wrote {_js_length(content)} bytes to {path}", False)  # fmt: skip

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(list(options))

    # filler the agent reads on its way
    def filler_module(self) -> tuple[str, dict[str, Any], str, bool]:
        k = self.filler_slots
        self.filler_slots += 1
        blocks = max(2, round(6 * self.scale))
        path, content = _module(self.frng, k, blocks)
        self.files[path] = content + "\n"
        return self.read(path, filler=True)

    def filler_component(self) -> tuple[str, dict[str, Any], str, bool]:
        k = self.filler_slots
        self.filler_slots += 1
        path, content = _component(self.frng, k, max(2, round(4 * self.scale)))
        self.files[path] = content
        return self.read(path, filler=True)


_AUTH_TS = """\
import { error, redirect } from '@sveltejs/kit';
import type { Member } from './db/schema';

type Locals = App.Locals;

/** The signed-in member, or a redirect to the sign-in page. */
export function requireMember(locals: Locals): Member {
    if (!locals.member) redirect(303, '/signin');
    return locals.member;
}

/** The signed-in staff member; anyone else gets a 403. */
export function requireStaff(locals: Locals): Member {
    const member = requireMember(locals);
    if (member.role !== 'staff') error(403, 'Staff only');
    return member;
}

export function canVolunteer(member: Member | null): boolean {
    return !!member && (member.role === 'volunteer' || member.role === 'staff');
}

export function membershipLapsed(member: Member, now: number): boolean {
    return member.expiresAt !== null && member.expiresAt < now;
}
"""

_HELPERS_TS = """\
import { customAlphabet } from 'nanoid';
import type { DB } from '../src/lib/server/db';
import { categories, loans, members, tools } from '../src/lib/server/db/schema';
import { DAY, unixNow } from '../src/lib/server/time';

const suffix = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 8);

export async function seedCategory(db: DB) {
    const [row] = await db
        .insert(categories)
        .values({ id: `ct_${suffix()}`, name: 'Power tools', slug: `power-${suffix()}` })
        .returning();
    return row;
}

export async function seedTool(db: DB, over: Partial<typeof tools.$inferInsert> = {}) {
    const category = await seedCategory(db);
    const id = `tl_${suffix()}`;
    const [row] = await db
        .insert(tools)
        .values({ id, slug: id, name: 'Drill', categoryId: category.id, ...over })
        .returning();
    return row;
}

export async function seedMember(db: DB, over: Partial<typeof members.$inferInsert> = {}) {
    const id = `mb_${suffix()}`;
    const [row] = await db
        .insert(members)
        .values({ id, name: 'Test Member', email: `${id}@example.org`, cardNumber: id, ...over })
        .returning();
    return row;
}

export async function seedLoan(db: DB, over: Partial<typeof loans.$inferInsert> = {}) {
    const tool = await seedTool(db, { status: 'on_loan' });
    const memberId = over.memberId ?? (await seedMember(db)).id;
    const now = unixNow();
    const [row] = await db
        .insert(loans)
        .values({
            id: `ln_${suffix()}`,
            toolId: tool.id,
            memberId,
            checkedOutAt: now - 3 * DAY,
            dueAt: now + 4 * DAY,
            ...over
        })
        .returning();
    return row;
}
"""


# --- the story ------------------------------------------------------------------------------------


def _days(n: int) -> str:
    return f"{n} day before" if n == 1 else f"{n} days before"


def _tell(seed: int, scale: float) -> _Pi:
    pi = _Pi(seed, scale)
    w, s, rng = pi.w, pi.s, pi.rng
    h1, h2, h3 = w.holds
    d1, d2 = w.leads
    names = rng.sample(_MIGRATION_NAMES, w.migration + 2)
    migrations = [f"{k:04d}_{name}.sql" for k, name in enumerate(names)]
    mig1, mig2 = (f"drizzle/{m}" for m in migrations[-2:])
    t0 = sum(n for _, n in w.existing_tests)
    p2 = t0 + len(_HOLDS_TESTS)
    p3 = p2 + len(_SWEEP_TESTS) + len(_REMINDER_TESTS) - 1
    tool_title = w.tool.capitalize()
    pr_url = f"https://github.com/{w.org}/{w.proj}/pull/{w.pr}"
    endpoint = "src/routes/api/cron/overdue/+server.ts"
    page_server = "src/routes/tools/[slug]/+page.server.ts"
    page_svelte = "src/routes/tools/[slug]/+page.svelte"
    admin_loans = "src/routes/admin/loans/+page.server.ts"
    schema_path = "src/lib/server/db/schema.ts"

    # the app as it stands
    f = pi.files
    f["package.json"] = _tabs(_fill(_PACKAGE_JSON, proj=w.proj, version=w.version))
    f["wrangler.toml"] = _fill(
        _WRANGLER_HEAD + _WRANGLER_REST, proj=w.proj, library=w.library, host=w.host,
        dev_db=w.dev_db, prod_db=w.prod_db,
    )  # fmt: skip
    f[schema_path] = _schema_file(_SCHEMA_STATUS_OLD, _SCHEMA_LOAN_TAIL_OLD, holds=False)
    f["src/lib/server/loans.ts"] = _tabs(_LOANS_HEAD + _LOANS_RETURN_OLD + _LOANS_REST)
    f[page_server] = _tabs(
        _PAGE_SERVER_HEAD + _fill(_PAGE_SERVER_BODY, load_tail=_PAGE_SERVER_LOAD_OLD)
    )
    f[page_svelte] = _code(_PAGE_SVELTE, library=w.library, due_block=_PAGE_SVELTE_DUE)
    f[endpoint] = _tabs(_CRON_ENDPOINT)
    f["src/lib/server/email.ts"] = _tabs(_EMAIL_TS)
    f["src/lib/server/db/index.ts"] = _tabs(_DB_INDEX)
    f["src/lib/server/time.ts"] = _tabs(_TIME_TS)
    f["src/lib/format.ts"] = _code(_FORMAT_TS, tz=w.tz)
    f["src/lib/server/auth.ts"] = _tabs(_AUTH_TS)
    f["test/helpers.ts"] = _tabs(_HELPERS_TS)
    f["test/setup.ts"] = _tabs(_TEST_SETUP)
    f["vitest.config.ts"] = _tabs(_VITEST_OLD)
    f[admin_loans] = _tabs(_ADMIN_LOANS_HEAD + _ADMIN_LOANS_RETURN_OLD)

    # -- the ask ------------------------------------------------------------------------------
    ask = pi.pick([
        f"ok, waitlists and pickup holds for the {w.library} site. what I have in mind:\n\n"
        "- when a tool is out, a member can join a waitlist on its page (and leave it again)\n"
        f"- when it comes back and someone's waiting, the first in line gets a pickup hold: "
        f"{h1} hours to come and get it, then it moves on to the next person\n"
        f"- an email reminder {d1} days before a loan is due\n"
        "- SMS reminders via Twilio for the handful of members with no email on file\n"
        "- once all that works, the old /api/cron/overdue route that cron-job.org hits can go\n"
        "- and a short write-up in docs/ops.md of how the scheduled bits work\n\n"
        f"rules: nothing under src/lib/server/billing/ changes, {w.colleague} is in the "
        "middle of the Stripe rewrite there. no new packages either, pnpm-lock.yaml stays "
        "exactly as it is. every timestamp in D1 is integer unix seconds, keep it that way.\n\n"
        "look around before you change anything",
        f"Next thing for {w.library}: tool waitlists + holds. Roughly:\n"
        "1. A member can join a waitlist on the tool page while the tool is checked out, and "
        "leave it.\n"
        "2. On return, if people are lined up, the first one gets a pickup hold for "
        f"{h1} hours. Not collected by then → next person.\n"
        f"3. Reminder email {d1} days before a loan's due date.\n"
        "4. Twilio SMS reminders for members without an email address.\n"
        "5. Delete the /api/cron/overdue endpoint (cron-job.org pings it) once this "
        "replaces it.\n"
        "6. Document the scheduled job in docs/ops.md.\n\n"
        f"Constraints: leave src/lib/server/billing/ alone, {w.colleague} has a big Stripe "
        "refactor open against it. Don't add dependencies; if pnpm-lock.yaml turns up in the "
        "diff, something went wrong. Times in D1 are unix seconds (integers) everywhere, the "
        "new tables too.\n\nRead the code first.",
    ])  # fmt: skip
    pi.user(ask)
    s.fact(
        "constraint", "nothing under src/lib/server/billing/ may change", ["src/lib/server/billing"]
    )
    s.fact("constraint", "no new packages: pnpm-lock.yaml must not change", ["pnpm-lock.yaml"])
    s.fact("constraint", "every timestamp in D1 is an integer of unix seconds", ["unix seconds"])
    s.fact(
        "todo",
        "members can join a waitlist on a tool's page and leave it (done)",
        ["join a waitlist"],
        required=False,
    )
    s.fact(
        "todo",
        "a returned tool with people waiting becomes a pickup hold (done)",
        ["pickup hold"],
        required=False,
    )
    s.fact("todo", "SMS reminders via Twilio (dropped by the user)", ["Twilio"], required=False)
    s.fact("todo", "write up the scheduled job in docs/ops.md (still to do)", ["docs/ops.md"])
    s.fact("todo", "remove the old endpoint cron-job.org calls (done)", ["cron-job.org"],
           required=False)  # fmt: skip

    tree = [
        "total 352",
        *(
            f"{mode} {n:>3} {w.user} {w.user} {size:>6} Mar  {day} 10:{mm:02d} {name}"
            for mode, n, size, day, mm, name in (
                ("drwxr-xr-x", 12, 4096, 9, 41, "."), ("drwxr-xr-x", 9, 4096, 2, 12, ".."),
                ("-rw-r--r--", 1, 86, 2, 12, ".dev.vars.example"),
                ("drwxr-xr-x", 8, 4096, 9, 41, ".git"),
                ("-rw-r--r--", 1, 212, 2, 12, ".gitignore"), ("-rw-r--r--", 1, 28, 2, 12, ".npmrc"),
                ("-rw-r--r--", 1, 178, 2, 12, ".prettierrc"),
                ("-rw-r--r--", 1, 1034, 6, 8, "AGENTS.md"),
                ("-rw-r--r--", 1, 2211, 6, 8, "README.md"),
                ("drwxr-xr-x", 2, 4096, 6, 8, "docs"),
                ("drwxr-xr-x", 3, 4096, 8, 17, "drizzle"),
                ("-rw-r--r--", 1, 231, 2, 12, "drizzle.config.ts"),
                ("-rw-r--r--", 1, 642, 2, 12, "eslint.config.js"),
                ("drwxr-xr-x", 412, 16384, 8, 17, "node_modules"),
                ("-rw-r--r--", 1, 1407, 8, 17, "package.json"),
                ("-rw-r--r--", 1, 148223, 8, 17, "pnpm-lock.yaml"),
                ("drwxr-xr-x", 5, 4096, 2, 12, "src"), ("drwxr-xr-x", 3, 4096, 2, 12, "static"),
                ("-rw-r--r--", 1, 394, 2, 12, "svelte.config.js"),
                ("drwxr-xr-x", 3, 4096, 8, 17, "test"),
                ("-rw-r--r--", 1, 512, 2, 12, "tsconfig.json"),
                ("-rw-r--r--", 1, 402, 2, 12, "vite.config.ts"),
                ("-rw-r--r--", 1, 538, 2, 12, "vitest.config.ts"),
                ("-rw-r--r--", 1, 3120, 8, 17, "worker-configuration.d.ts"),
                ("-rw-r--r--", 1, 1186, 8, 17, "wrangler.toml"),
            )
        ),
    ]  # fmt: skip
    server_files = sorted(["auth.ts", "billing", "db", "email.ts", "ids.ts", "loans.ts",
                           "members.ts", "search.ts", "time.ts",
                           *(f"{t}.ts" for t, *_ in _TABLES)])  # fmt: skip
    listing = "\n".join(tree) + "\n---\n" + "\n".join(server_files) + "\n---\n" + "\n".join(
        [
            "+error.svelte", "+layout.server.ts", "+layout.svelte", "+page.server.ts",
            "+page.svelte", "account", "admin", "api", "signin", "tools",
        ]
    ) + "\n---\n" + "\n".join(["meta", *migrations[:-2]]) + "\n---\n" + "\n".join(
        sorted(["fixtures", "helpers.ts", "setup.ts",
                *(f"{n}.test.ts" for n, _ in w.existing_tests)])
    ) + "\n"  # fmt: skip
    pi.turn(
        pi.pick(["Having a look around first.", "Let me get oriented.", ""]),
        pi.bash("ls -la && echo --- && ls src/lib/server && echo --- && ls src/routes && "
                "echo --- && ls drizzle && echo --- && ls test", listing),
        pi.read("package.json"),
    )  # fmt: skip
    pi.turn(
        "",
        pi.read(schema_path),
        pi.read("src/lib/server/loans.ts"),
    )
    pi.turn(
        "",
        pi.read(page_server),
        pi.read(page_svelte),
        pi.read(endpoint),
    )
    pi.turn(
        "",
        pi.read("src/lib/server/email.ts"),
        pi.read("wrangler.toml"),
        pi.read("src/lib/server/db/index.ts"),
    )
    s.fact("file_read", "the mail helper sendEmail (Resend over fetch) was read",
           ["src/lib/server/email.ts"])  # fmt: skip
    pi.turn(
        pi.pick(["And how the other server modules and admin pages are put together.",
                 "A couple of the neighbouring modules, for conventions."]),
        pi.filler_module(),
        pi.filler_component(),
        pi.read("src/lib/server/auth.ts", filler=True),
        pi.read("src/lib/format.ts", filler=True),
    )  # fmt: skip

    plan = (
        pi.pick(["Got the picture.", "OK, I've got a feel for it.", "Right, here's what's there."])
        + "\n\n"
        "- `src/lib/server/loans.ts`: `returnLoan` stamps `returned_at` and flips the tool back "
        "to `available`, nothing else.\n"
        f"- `{endpoint}` is what cron-job.org calls each morning: one query for loans due "
        "soon or overdue, one email each through `sendEmail` (Resend over fetch), logged to "
        "`email_log`.\n"
        "- Tests run in the Workers pool against a local D1.\n\n"
        "Plan:\n"
        "1. Schema: `waitlist_entries` (tool, member, joined_at) and `tool_holds` (tool, "
        "member, created_at, expires_at, status), plus `on_hold` as a tool status. Migration "
        "generated by drizzle-kit; the existing ones stay as they are.\n"
        "2. `src/lib/server/holds.ts`: join/leave, position in line, and handing a returned "
        "tool to the next person.\n"
        "3. Tool page: `joinWaitlist` / `leaveWaitlist` actions and the button.\n"
        "4. Expiry through a Cloudflare Queue: when a hold starts, send a message with "
        "`delaySeconds` set to the hold length; the consumer expires the hold if nobody "
        "collected it and moves on to the next member. Reminders the same way, queued at "
        f"checkout and delayed until {d1} days before the due date.\n"
        "5. Twilio's REST API over fetch for the SMS.\n"
        "6. Then retire the old endpoint and write the ops notes.\n\n"
        + pi.pick(["Sound OK?", "Shall I start?", "OK to go?"])
    )
    pi.say(plan)
    pi.user(pi.pick(["yep, go", "fine by me, start with the schema",
                     "go ahead. one thing at a time is fine"]))  # fmt: skip

    # -- schema, holds, the tool page ----------------------------------------------------------
    pi.turn(
        pi.pick(["Schema first.", "Starting with the tables.", ""]),
        pi.edit(schema_path, _tabs(_SCHEMA_STATUS_OLD), _tabs(_SCHEMA_STATUS_NEW)),
    )
    pi.turn("", pi.edit(schema_path, _SCHEMA_TYPES, _tabs(_SCHEMA_NEW_TABLES) + _SCHEMA_TYPES))
    f[mig1] = _MIGRATION_HOLDS
    pi.turn(
        "",
        pi.bash("pnpm drizzle-kit generate", _drizzle_generate(w, mig1, holds=True, sent=False)),
    )
    pi.turn("", pi.read(mig1))
    s.fact("command", "new migrations are generated with drizzle-kit",
           ["pnpm drizzle-kit generate"])  # fmt: skip
    pi.turn(
        pi.pick(["Migration looks right. Now the holds module.",
                 "Good, purely additive. Holds module next."]),
        pi.read("src/lib/server/time.ts", filler=True),
        pi.read("test/helpers.ts", filler=True),
    )  # fmt: skip
    pi.turn("", pi.write("src/lib/server/holds.ts", _code(_HOLDS_TS, hold=h1)))
    s.fact("file_created", "the holds module (waitlist, holds, announcing a hold)",
           ["src/lib/server/holds.ts"])  # fmt: skip

    batch_why = pi.pick([
        "D1 has no interactive transactions from a Worker, so marking the loan returned, "
        "flipping the tool to `on_hold` and creating the hold go out together in one "
        "`db.batch()`; a batch is applied as a unit, all of it or none.",
        "Returning and handing over should be atomic. D1 won't do BEGIN/COMMIT for us, but "
        "`db.batch()` runs its statements as one transaction, so the return, the status "
        "change, the new hold and removing the waitlist entry all go in a single batch.",
    ])  # fmt: skip
    pi.turn(
        batch_why,
        pi.edit_missing("src/lib/server/loans.ts", _tabs(_LOANS_RETURN_WRONG),
                        _tabs(_LOANS_RETURN_NEW)),
    )  # fmt: skip
    old_return = _tabs(_LOANS_RETURN_OLD)
    start = f["src/lib/server/loans.ts"].split("\n").index(old_return.split("\n")[0])
    pi.turn(
        pi.pick(["Wrong error message in my old text; re-reading that part.",
                 "Misremembered a line. Checking the exact text."]),
        pi.read("src/lib/server/loans.ts", offset=start + 1, limit=10),
    )  # fmt: skip
    pi.turn("", pi.edit("src/lib/server/loans.ts", old_return, _tabs(_LOANS_RETURN_NEW)))
    pi.turn("", pi.edit("src/lib/server/loans.ts", _LOANS_IMPORT_OLD, _LOANS_IMPORT_NEW))
    s.fact("decision", "returning a tool and creating the next member's hold happen in one "
           "db.batch() (D1 has no interactive transactions)", ["db.batch"])  # fmt: skip

    pi.turn(
        pi.pick(["Now the tool page.", "Tool page actions."]),
        pi.edit(page_server, _tabs(_PAGE_SERVER_IMPORT_OLD), _tabs(_PAGE_SERVER_IMPORT_NEW)),
    )
    pi.turn("", pi.edit(page_server, _tabs(_PAGE_SERVER_LOAD_OLD), _tabs(_PAGE_SERVER_LOAD_NEW)))
    pi.turn("", pi.edit(page_server, _tabs(_PAGE_SERVER_ACTIONS_OLD),
                        _tabs(_PAGE_SERVER_ACTIONS_NEW)))  # fmt: skip
    pi.turn("", pi.edit(page_svelte, _tabs(_PAGE_SVELTE_DUE), _tabs(_PAGE_SVELTE_WAITLIST)))
    pi.turn(
        pi.pick(["The return action is in the admin loans page; it needs to announce the hold.",
                 "Where do returns happen? The admin loans page."]),
        pi.read(admin_loans),
    )  # fmt: skip
    pi.turn("", pi.edit(admin_loans, _tabs(_ADMIN_LOANS_IMPORT_OLD),
                        _tabs(_ADMIN_LOANS_IMPORT_NEW)))  # fmt: skip
    pi.turn("", pi.edit(admin_loans, _tabs(_ADMIN_LOANS_RETURN_OLD),
                        _tabs(_ADMIN_LOANS_RETURN_NEW)))  # fmt: skip
    for path in (page_server, page_svelte, admin_loans, "src/lib/server/loans.ts", schema_path):
        s.fact("file_modified", f"{path} was changed", [path])

    queue_toml = _fill(
        '\n[[queues.producers]]\nbinding = "HOLD_EVENTS"\nqueue = "«proj»-hold-events"\n\n'
        '[[queues.consumers]]\nqueue = "«proj»-hold-events"\nmax_batch_size = 10\n'
        "max_batch_timeout = 30\n",
        proj=w.proj,
    )
    d1_block = _fill('migrations_dir = "drizzle"\n\n[env.production]', proj=w.proj)
    pi.turn(
        pi.pick(["Queue bindings and the enqueue helper.",
                 "Now the expiry queue: binding plus a small helper."]),
        pi.edit("wrangler.toml", d1_block,
                'migrations_dir = "drizzle"\n' + queue_toml + "\n[env.production]"),
    )  # fmt: skip
    pi.turn("", pi.write("src/lib/server/hold-queue.ts", _tabs(_HOLD_QUEUE_TS)))
    pi.turn(
        pi.pick(["Tests for the waitlist and the return path.", "Some tests."]),
        pi.write("test/holds.test.ts", _tabs(_HOLDS_TEST)),
    )

    # -- the first test run: the pool's D1 has no new tables -------------------------------------
    files = _existing_test_files(w)
    holds_run: list[tuple[str, str | None]] = []
    for name, touches in _HOLDS_TESTS:
        err = None
        if touches:
            where = ("src/lib/server/holds.ts:28:5" if "waitlist" in name
                     else "src/lib/server/holds.ts:46:26")  # fmt: skip
            err = _d1_error("waitlist_entries", where, "test/holds.test.ts", rng.randint(24, 80))
        holds_run.append((name, err))
    loans_run = [
        (t, _d1_error("waitlist_entries", "src/lib/server/loans.ts:33:18", "test/loans.test.ts",
                      rng.randint(20, 60))
            if t.startswith("returnLoan") else None)
        for t, _ in files[0][1]
    ]  # fmt: skip
    first_files = [(files[0][0], loans_run), *files[1:3], ("test/holds.test.ts", holds_run),
                   *files[3:]]  # fmt: skip
    out, code = _vitest(
        rng, w, first_files, f"10:{rng.randint(10, 30):02d}:{rng.randint(0, 59):02d}"
    )
    pi.turn("", pi.bash("pnpm test", out, code=code))
    s.fact("error_resolved", "the test pool's D1 had no new tables (fixed by applying the real "
           "migrations in the pool)", ["no such table: waitlist_entries"],
           required=False)  # fmt: skip
    pi.turn(
        pi.pick([
            "Every failure is the same: the pool's D1 doesn't have the new tables. How does the "
            "test DB get its schema?",
            "`no such table` everywhere the new code touches D1. Checking how the test database "
            "is set up.",
        ]),
        pi.read("vitest.config.ts"),
        pi.read("test/setup.ts"),
    )  # fmt: skip
    pi.turn(
        pi.pick([
            "The tests build D1 from `test/fixtures/schema.sql`, a hand-kept dump, so it "
            "knows nothing about this migration. I'll have the pool apply the real migrations "
            "from `drizzle/` instead (`readD1Migrations` + `applyD1Migrations`); then the dump "
            "can go.",
            "There's the problem: `test/setup.ts` loads a hand-maintained "
            "`test/fixtures/schema.sql`. Rather than patch the dump again, the pool can apply "
            "the migrations in `drizzle/` itself, and the dump and its loader go away.",
        ]),
        pi.write("vitest.config.ts", _tabs(_VITEST_NEW)),
    )  # fmt: skip
    pi.turn("", pi.write("test/apply-migrations.ts", _tabs(_APPLY_MIGRATIONS)))
    pi.turn(
        "",
        pi.bash("git rm -q test/setup.ts test/fixtures/schema.sql && git status --short test",
                "D  test/fixtures/schema.sql\nD  test/setup.ts\n?? test/apply-migrations.ts\n"
                "?? test/holds.test.ts\n"),
    )  # fmt: skip
    s.fact("file_modified", "vitest.config.ts applies the real migrations", ["vitest.config.ts"])
    s.fact("file_created", "test setup that applies the D1 migrations in the pool",
           ["test/apply-migrations.ts"])  # fmt: skip
    s.fact("file_deleted", "the hand-kept schema dump the tests used", ["test/fixtures/schema.sql"])
    passing: list[tuple[str, str | None]] = [(n, None) for n, _ in _HOLDS_TESTS]
    files2: list[_Run] = [*files[:3], ("test/holds.test.ts", passing), *files[3:]]
    out, code = _vitest(rng, w, files2, f"10:{rng.randint(31, 50):02d}:{rng.randint(0, 59):02d}")
    pi.turn("", pi.bash("pnpm test", out, code=code))
    pi.turn(
        "",
        pi.bash("pnpm check", "\n".join([
            "", f"> {w.proj}@{w.version} check {w.root}",
            "> svelte-kit sync && svelte-check --tsconfig ./tsconfig.json", "",
            f"Loading svelte-check in workspace: {w.root}", "Getting Svelte diagnostics...", "",
            f"{w.root}/src/routes/tools/[slug]/+page.svelte:27:18",
            "Error: 'data.waitlist.position' is possibly 'null'. (ts)",
            "        <section class=\"waitlist\">",
            "            {#if data.waitlist.position > 0}",
            "                <p>You're number {data.waitlist.position} of "
            "{data.waitlist.length} in line.</p>", "",
            "====================================",
            "svelte-check found 1 error and 0 warnings in 1 file",
            " ELIFECYCLE  Command failed with exit code 1.", "",
        ]), code=1),
    )  # fmt: skip
    pi.turn(
        "",
        pi.edit(page_svelte, "{#if data.waitlist.position > 0}",
                "{#if data.waitlist.position !== null}"),
    )  # fmt: skip
    s.fact("error_resolved", "svelte-check: the waitlist position may be null on the tool page",
           ["'data.waitlist.position' is possibly 'null'"], required=False)  # fmt: skip
    clean_check = "\n".join([
        "", f"> {w.proj}@{w.version} check {w.root}",
        "> svelte-kit sync && svelte-check --tsconfig ./tsconfig.json", "",
        f"Loading svelte-check in workspace: {w.root}", "Getting Svelte diagnostics...", "",
        "====================================", "svelte-check found 0 errors and 0 warnings", "",
    ])  # fmt: skip
    pi.turn("", pi.bash("pnpm check", clean_check))

    # -- the queue does not fit: a cron trigger sweeps D1 ---------------------------------------
    pi.turn(
        pi.pick([
            "Waitlist and holds pass, check is clean. On to the expiry consumer and reminders.",
            "Green. Now the consumer side of the queue, and the reminders.",
        ]),
        pi.bash(
            "rg -n -A 4 'interface QueueSendOptions' "
            "node_modules/@cloudflare/workers-types/index.d.ts",
            "9124:interface QueueSendOptions {\n9125-  contentType?: QueueContentType;\n"
            "9126-  delaySeconds?: number;\n9127-}\n9128-interface QueueSendBatchOptions {\n",
        ),
    )  # fmt: skip
    pi.user(pi.pick([
        "hang on. aren't queue delays capped somewhere around 12h? pretty sure I ran into that "
        f"on another project. a {h1}h hold won't fit in one message, never mind a reminder "
        "queued at checkout",
        "wait, before you go further: I think Cloudflare Queues only lets you delay a message "
        f"by 12 hours max. that breaks the {h1}-hour hold, and the reminders even more. check?",
    ]))  # fmt: skip
    n = rng.randint(40, 90)
    docs = _fill(_DOCS_QUEUES, **{f"n{k}": n + k for k in range(1, 13)})
    pi.turn(
        "",
        pi.bash(
            "curl -sL https://developers.cloudflare.com/queues/configuration/batching-retries/"
            "index.md | rg -n -C 1 -i 'delay'",
            docs,
        ),
    )
    pi.turn(
        pi.pick([
            f"You're right: `delaySeconds` stops at 43,200 s, 12 hours. A {h1}-hour hold would "
            "need a chain of re-sent messages, and a reminder queued at checkout would be days "
            "out. Not worth it.\n\nNew shape: no queue at all. A cron trigger on the Worker "
            f"(`{w.cron}`) runs one sweep over D1 every {w.every}: holds whose `expires_at` "
            "has passed get expired and the tool goes to the next member, and loans inside the "
            "reminder window get their email. All the state is in D1 already, so a skipped run "
            "just catches up on the next. Taking the queue out.",
            "Confirmed, 12 hours is the ceiling. The queue design doesn't survive that: a hold "
            "outlives any single message, and re-sending every 12 h is one more thing to lose. "
            f"So the expiry and the reminders move to a cron trigger (`{w.cron}`, every "
            f"{w.every}) that sweeps D1 each run: lapsed holds expire and pass the tool on, "
            "loans coming due get reminded. Nothing is lost if a run is skipped; the rows are "
            "still there next time. Removing hold-queue.ts and the queue bindings.",
        ]),
        pi.bash("rm src/lib/server/hold-queue.ts", ""),
    )  # fmt: skip
    s.fact("decision", "hold expiry and reminders run from a cron trigger sweeping D1, not "
           "delayed Cloudflare Queue messages (delays stop at 12 hours)", ["cron trigger"],
           stale=["delaySeconds"])  # fmt: skip
    s.fact("file_deleted", "the queue helper written for the abandoned plan",
           ["src/lib/server/hold-queue.ts"])  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/holds.ts", "import { enqueueHoldExpiry } from './hold-queue';\n",
                ""),
    )  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/holds.ts",
                "\t}\n\tawait enqueueHoldExpiry(env.HOLD_EVENTS, hold);\n}\n", "\t}\n}\n"),
    )  # fmt: skip
    pi.turn(
        "",
        pi.edit("wrangler.toml", queue_toml, f'\n[triggers]\ncrons = ["{w.cron}"]\n'),
    )
    pi.turn(
        pi.pick(["adapter-cloudflare only generates a fetch handler, so the Worker gets a small "
                 "entry of its own that adds scheduled().",
                 "SvelteKit's generated worker has no scheduled() export; wrapping it in an "
                 "entry file that adds one."]),
        pi.edit("wrangler.toml", 'main = ".svelte-kit/cloudflare/_worker.js"',
                'main = "worker/entry.ts"'),
    )  # fmt: skip
    pi.turn(
        "",
        pi.write("src/lib/server/sweep.ts",
                 _tabs(_SWEEP_IMPORTS_LIB + _fill(_SWEEP_BODY, every=w.every))),
    )  # fmt: skip
    pi.turn("", pi.write("worker/entry.ts", _tabs(_ENTRY_TS)))
    s.fact("file_created", "the sweep the cron trigger runs", ["src/lib/server/sweep.ts"])
    s.fact("file_created", "the Worker entry adding scheduled()", ["worker/entry.ts"])
    dry = "pnpm build && pnpm wrangler deploy --dry-run --outdir dist-worker"
    err_lines = []
    for spec, line, col, text in (
        ("$lib/server/db", 2, 36, "import { drizzleFor, type DB } from '$lib/server/db';"),
        ("$lib/server/db/schema", 3, 50,
         "import { toolHolds, tools, waitlistEntries } from '$lib/server/db/schema';"),
        ("$lib/server/holds", 4, 50,
         "import { announceHold, newHold, nextInLine } from '$lib/server/holds';"),
    ):  # fmt: skip
        err_lines += [
            f'  ✘ [ERROR] Could not resolve "{spec}"', "",
            f"      src/lib/server/sweep.ts:{line}:{col}:",
            f"        {line} │ {text}",
            "          ╵ " + " " * col + "~" * (len(spec) + 2), "",
            f'    You can mark the path "{spec}" as external to exclude it from the bundle, '
            "which will remove this error and leave the unresolved path in the bundle.", "",
        ]  # fmt: skip
    failed_dry = _vite_build(rng, w) + "\n" + _WRANGLER + "\n" + "\n".join([
        "✘ [ERROR] Build failed with 3 errors:", "", *err_lines, "",
        f'🪵  Logs were written to "/home/{w.user}/.config/.wrangler/logs/'
        f"wrangler-{w.date}_11-{rng.randint(10, 59)}-{rng.randint(10, 59)}_"
        f'{rng.randint(100, 999)}.log"',
        "",
    ])  # fmt: skip
    pi.turn(
        pi.pick(["Build and a dry-run deploy to see that wrangler bundles it.",
                 "Checking wrangler can bundle the entry."]),
        pi.bash(dry, failed_dry, code=1),
    )  # fmt: skip
    s.fact("command", "the build is checked with a wrangler dry-run deploy",
           ["pnpm wrangler deploy --dry-run"])  # fmt: skip
    pi.turn(
        pi.pick([
            "wrangler bundles `worker/entry.ts` with esbuild, which knows nothing about "
            "SvelteKit's `$lib` alias. Everything else in `src/lib/server/` uses relative "
            "imports; sweep.ts should too.",
            "`$lib` only exists inside Vite. The entry is bundled by wrangler's esbuild, so "
            "sweep.ts needs relative imports like its neighbours.",
        ]),
        pi.edit("src/lib/server/sweep.ts", _tabs(_SWEEP_IMPORTS_LIB), _tabs(_SWEEP_IMPORTS_REL)),
    )  # fmt: skip
    s.fact("error_resolved", "wrangler could not bundle $lib imports in the sweep (relative "
           "imports now)", ['Could not resolve "$lib/server/db/schema"'],
           required=False)  # fmt: skip
    ok_dry = _WRANGLER + "\n".join([
        f"Total Upload: {rng.randint(1100, 1500)}.{rng.randint(10, 99)} KiB / gzip: "
        f"{rng.randint(230, 290)}.{rng.randint(10, 99)} KiB",
        "Your Worker has access to the following bindings:",
        "Binding                                          Resource",
        f"env.DB ({w.proj}-dev)".ljust(49) + "D1 Database",
        "env.ASSETS".ljust(49) + "Assets",
        'env.PUBLIC_BASE_URL ("http://localhost:5173")'.ljust(49) + "Environment Variable",
        f'env.MAIL_FROM ("{w.library} <hello@{w.host}>")'[:46].ljust(49) + "Environment Variable",
        "", "--dry-run: exiting now.", "",
    ])  # fmt: skip
    pi.turn(
        pi.pick(["wrangler bundles the entry from source, so no rebuild needed for this.",
                 "Only wrangler's bundle changed; dry-run again."]),
        pi.bash(dry.split(" && ", 1)[1], ok_dry),
    )  # fmt: skip
    sweep_log = "\n".join([
        _WRANGLER.rstrip("\n"),
        "Your Worker has access to the following bindings:",
        "Binding                         Resource          Mode",
        f"env.DB ({w.proj}-dev)".ljust(32) + "D1 Database       local",
        "env.ASSETS".ljust(32) + "Assets            local", "",
        "⎔ Starting local server...",
        "[wrangler:info] Ready on http://localhost:8799",
        f"sweep: expired=0 promoted=0 took={rng.randint(4, 30)}ms",
        f"[wrangler:info] GET /__scheduled 200 OK ({rng.randint(20, 90)}ms)", "",
    ])  # fmt: skip
    pi.turn(
        pi.pick(["Quick local run of the scheduled handler.",
                 "And the scheduled handler end to end, locally."]),
        pi.bash(
            "(timeout 30 pnpm wrangler dev --test-scheduled --port 8799 > /tmp/wd.log 2>&1 &) "
            "&& sleep 12 && curl -s 'http://localhost:8799/__scheduled?cron="
            + w.cron.replace("/", "%2F").replace(" ", "+")
            + "' && echo && sleep 1 && tail -n 20 /tmp/wd.log",
            "Ran scheduled event\n" + sweep_log,
            timeout=60,
        ),
    )  # fmt: skip
    pi.say(pi.pick([
        f"Expiry now runs off the cron trigger: `worker/entry.ts` wraps SvelteKit's worker and "
        f"adds `scheduled()`, which calls `runSweep` in `src/lib/server/sweep.ts` every "
        f"{w.every}. The scheduled event runs locally. Reminders are next.",
        f"The sweep is wired up (`{w.cron}`) and fires locally through /__scheduled. Next up: "
        "the reminder emails.",
    ]))  # fmt: skip

    # -- the hold gets shorter; the production database id ------------------------------------
    pi.user(pi.pick([
        f"talked to {w.desk} at the front desk. {h1} hours is too generous, people sit on holds "
        f"over the weekend. make it {h2} hours",
        f"{w.desk} (runs the desk) says {h1}h is way more than anyone needs to swing by. "
        f"{h2} hours please",
    ]))  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/holds.ts", f"export const HOLD_HOURS = {h1};",
                f"export const HOLD_HOURS = {h2};"),
    )  # fmt: skip
    pi.say(pi.pick([
        f"Done: `HOLD_HOURS = {h2}` in src/lib/server/holds.ts. Each hold stores its own "
        "`expires_at`, so holds already running keep their old deadline.",
        f"Changed to {h2} in `src/lib/server/holds.ts`. The sweep reads each hold's "
        "`expires_at`, so nothing else needs touching; existing holds keep theirs.",
    ]))  # fmt: skip
    pi.user(pi.pick([
        f"unrelated: {w.ops} is setting up the nightly D1 export and needs the database_id of "
        "the production database. can you dig it out?",
        f"quick one, {w.ops} wants the prod D1 database id for the backup job. what is it?",
    ]))  # fmt: skip
    toml = f["wrangler.toml"].split("\n")
    hits = [f"{k + 1}:{line}" for k, line in enumerate(toml)
            if "database_name" in line or "database_id" in line]  # fmt: skip
    pi.turn("", pi.bash("rg -n 'database_(name|id)' wrangler.toml", "\n".join(hits) + "\n"))
    pi.say(pi.pick([
        f"Production (`{w.proj}-prod`, under `[env.production]`): `{w.prod_db}`\n\nThe "
        f"top-level one, `{w.dev_db}`, is the dev database.",
        f"`{w.prod_db}`, the `{w.proj}-prod` database in the `[env.production]` block. (Not "
        f"the first one in the file, `{w.dev_db}`; that's dev.)",
    ]))  # fmt: skip
    s.fact("identifier", "the production D1 database_id", [w.prod_db])

    # -- reminders ----------------------------------------------------------------------------
    pi.user(pi.pick(["thanks. carry on with the reminders", "cool, reminders then"]))
    pi.turn(
        pi.pick(["Checking how other modules lay out their queries before writing this one.",
                 "One more look at a neighbouring module for the query style."]),
        pi.filler_module(),
        pi.filler_module(),
    )  # fmt: skip
    pi.turn("", pi.write("src/lib/server/reminders.ts",
                         _code(_REMINDERS_TS, lead=d1, library=w.library)))  # fmt: skip
    s.fact("file_created", "the reminder emails", ["src/lib/server/reminders.ts"])
    pi.turn(
        "",
        pi.edit("src/lib/server/sweep.ts", "import { announceHold, newHold, nextInLine } from "
                "'./holds';\n", "import { announceHold, newHold, nextInLine } from './holds';\n"
                "import { sendDueReminders } from './reminders';\n"),
    )  # fmt: skip
    pi.turn(
        "",
        pi.edit(
            "src/lib/server/sweep.ts",
            "\tconst holds = await expireHolds(db, env, now);\n\tconsole.log(\n\t\t`sweep: "
            "expired=${holds.expired} promoted=${holds.promoted} took=${Date.now() - started}"
            "ms`\n\t);\n",
            "\tconst holds = await expireHolds(db, env, now);\n\tconst reminded = await "
            "sendDueReminders(db, env, now);\n\tconsole.log(\n\t\t`sweep: expired=${holds.expired}"
            " promoted=${holds.promoted} reminded=${reminded} ` +\n\t\t\t`took=${Date.now() - "
            "started}ms`\n\t);\n",
        ),
    )  # fmt: skip
    pi.say(pi.pick([
        "Reminders go out from the same sweep: `sendDueReminders` in "
        f"`src/lib/server/reminders.ts`, {d1} days ahead, logged to `email_log` like the old "
        "ones. SMS is next; I'd call Twilio's Messages API with fetch and basic auth, no SDK.",
        f"`src/lib/server/reminders.ts` is in and the sweep calls it ({d1}-day window). "
        "Twilio SMS next, over plain fetch.",
    ]))  # fmt: skip
    pi.user(pi.pick([
        "forget the SMS bit. the board won't pay for Twilio, and the no-email people get a "
        "phone call from the desk anyway",
        "actually drop Twilio/SMS entirely, no budget for it this year. the desk phones the "
        "few members without email",
    ]))  # fmt: skip
    pi.say(pi.pick(["OK, SMS is off the list. Nothing had been written for it yet.",
                    "Dropped. No SMS code exists, so there's nothing to undo."]))  # fmt: skip
    pi.user(pi.pick([
        f"also the reminder: {_days(d2)} the due date. we tried {d1} by hand last month and "
        "people just forgot again",
        f"and make the reminder go out {_days(d2)} due, {d1} was too early when the desk did "
        "it manually",
    ]))  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/reminders.ts", f"export const REMINDER_LEAD_DAYS = {d1};",
                f"export const REMINDER_LEAD_DAYS = {d2};"),
    )  # fmt: skip
    s.fact("changed_value", "the reminder goes out this long before the due date",
           [_days(d2)], stale=[_days(d1)])  # fmt: skip
    pi.say(pi.pick([f"`REMINDER_LEAD_DAYS = {d2}` now.",
                    f"Set to {d2} in `src/lib/server/reminders.ts`."]))  # fmt: skip
    pi.user(pi.pick([
        "one more hard rule while you're in there: anyone with email_opt_out = 1 never gets an "
        "email from any of this. reminders, hold notices, nothing. we got a complaint about "
        "that last year and it went to the board",
        "important: members with email_opt_out set must not get ANY of these emails, hold "
        "notices included. that's not negotiable, there was a whole thing about it",
    ]))  # fmt: skip
    s.fact("constraint", "members with email_opt_out set never get any email from this",
           ["email_opt_out"])  # fmt: skip
    pi.turn(
        pi.pick(["Both senders need it: the reminder query and announceHold.",
                 "Two places send mail: reminders.ts and announceHold in holds.ts."]),
        pi.edit("src/lib/server/reminders.ts", "\t\t\t\tisNotNull(members.email)\n",
                "\t\t\t\tisNotNull(members.email),\n\t\t\t\teq(members.emailOptOut, false)\n"),
    )  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/holds.ts", "\tif (row?.member.email) {\n",
                "\tif (row?.member.email && !row.member.emailOptOut) {\n"),
    )  # fmt: skip
    pi.turn(
        pi.pick(["The old endpoint ignores the flag too, but it's going away.",
                 "(The old cron endpoint doesn't check it either; it's on its way out.)"]),
        pi.bash("rg -n 'emailOptOut|email_opt_out' src", "\n".join([
            "src/lib/server/db/schema.ts:15:\t\temailOptOut: integer('email_opt_out', "
            "{ mode: 'boolean' }).notNull().default(false),",
            "src/lib/server/holds.ts:70:\tif (row?.member.email && !row.member.emailOptOut) {",
            "src/lib/server/reminders.ts:58:\t\t\t\teq(members.emailOptOut, false)",
            "src/routes/account/+page.server.ts:41:\t\t\temailOptOut: form.get('optOut') === 'on'",
            "src/routes/account/+page.svelte:63:\t\t\t<input type=\"checkbox\" name=\"optOut\" "
            "checked={data.member.emailOptOut} />",
        ]) + "\n"),
    )  # fmt: skip

    # -- the user looks at the tree; a double reminder in production ---------------------------
    status = "\n".join([
        " M drizzle/meta/_journal.json", " M src/lib/server/db/schema.ts",
        " M src/lib/server/loans.ts",
        " M src/routes/admin/loans/+page.server.ts", " M src/routes/tools/[slug]/+page.server.ts",
        " M src/routes/tools/[slug]/+page.svelte", "D  test/fixtures/schema.sql",
        "D  test/setup.ts", " M vitest.config.ts", " M wrangler.toml", "?? dist-worker/",
        f"?? {mig1}", f"?? drizzle/meta/{w.migration:04d}_snapshot.json",
        "?? src/lib/server/holds.ts", "?? src/lib/server/reminders.ts",
        "?? src/lib/server/sweep.ts", "?? test/apply-migrations.ts", "?? test/holds.test.ts",
        "?? worker/",
    ])  # fmt: skip
    pi.bang("git status --short", status)
    pi.user(pi.pick([
        "dist-worker/ shouldn't end up in git",
        "what's dist-worker? keep that out of the repo pls",
    ]))  # fmt: skip
    pi.turn(
        pi.pick(["That's the dry-run bundle. Ignoring it.", "Output of the dry-run deploy; adding "
                 "it to .gitignore."]),
        pi.bash("printf '\\n# wrangler --dry-run --outdir\\n/dist-worker\\n' >> .gitignore && "
                "git status --short | grep -c dist-worker", "0", code=1),
    )  # fmt: skip
    pi.say(pi.pick(["Ignored (`/dist-worker` in .gitignore); it no longer shows up.",
                    "Done, .gitignore now has `/dist-worker`."]))  # fmt: skip
    pi.user(pi.pick([
        f"different thing. {w.member}, one of our members, got two 'due soon' emails "
        f"yesterday for the same {w.tool}. prod still runs the old endpoint. can you find which "
        "loan that was? email_log should have it",
        f"{w.member} just emailed: two reminder emails yesterday for one {w.tool}. that's the "
        "old cron-job.org endpoint in prod. which loan was it? look in email_log on prod",
    ]))  # fmt: skip
    sent_at = 1_773_000_000 + rng.randint(0, 900_000)
    sent_at -= sent_at % 86400
    sent_at += 11 * 3600 + rng.randint(0, 50)
    gap = rng.randint(120, 260)
    name = f"{w.member} {rng.choice(['Albrecht', 'Okafor', 'Lindqvist', 'Moreau', 'Haddad'])}"
    query = (
        "SELECT e.loan_id, e.member_id, m.name, COUNT(*) AS sent, MIN(e.sent_at) AS first, "
        "MAX(e.sent_at) AS last FROM email_log e JOIN members m ON m.id = e.member_id "
        "WHERE e.kind = 'due_soon' AND e.sent_at > unixepoch('now', '-2 days') "
        "GROUP BY e.loan_id HAVING sent > 1"
    )
    cols = ["loan_id", "member_id", "name", "sent", "first", "last"]
    vals = [w.loan_id, w.member_id, name, "2", str(sent_at), str(sent_at + gap)]
    widths = [max(len(c), len(v)) + 2 for c, v in zip(cols, vals, strict=True)]

    def row(cells: Sequence[str]) -> str:
        return "│" + "│".join(f" {c}".ljust(k) for c, k in zip(cells, widths, strict=True)) + "│"

    table = "\n".join([
        "┌" + "┬".join("─" * k for k in widths) + "┐", row(cols),
        "├" + "┼".join("─" * k for k in widths) + "┤", row(vals),
        "└" + "┴".join("─" * k for k in widths) + "┘",
    ])  # fmt: skip
    d1_out = (
        _WRANGLER + f"🌀 Executing on remote database {w.proj}-prod ({w.prod_db}):\n"
        "🌀 To execute on your local development database, remove the --remote flag from your "
        "wrangler command.\n"
        f"🚣 Executed 1 command in {rng.uniform(0.5, 3):.4f}ms\n" + table + "\n"
    )
    pi.turn(
        "",
        pi.bash(f'pnpm wrangler d1 execute {w.proj}-prod --env production --remote --command "'
                f'{query}"', d1_out),
    )  # fmt: skip
    pi.say(pi.pick([
        f"Loan `{w.loan_id}` ({name}, member `{w.member_id}`): two `due_soon` emails "
        f"{gap // 60} minutes apart. Most likely cron-job.org retried after the first call "
        "ran past its timeout; the endpoint keeps no record of what it already sent, so the "
        "retry mailed everyone again.\n\nThe new sweep could do the same if two runs ever "
        "overlap, so I'll make each reminder claim its loan first.",
        f"It's loan `{w.loan_id}`, {name} (`{w.member_id}`). Two rows in `email_log`, "
        f"{gap} seconds apart: the endpoint got called twice (cron-job.org retries on a slow "
        "response) and has no idea it had already sent.\n\nSame hole exists in my sweep if "
        "runs overlap. Fixing that on our side.",
    ]))  # fmt: skip
    s.fact("identifier", "the loan whose member got two due-soon emails", [w.loan_id])
    pi.user(pi.pick(["yes please", "do it", "go for it"]))
    pi.turn(
        pi.pick([
            "A `reminder_sent_at` column on loans. Before sending, the sweep runs a conditional "
            "update, `SET reminder_sent_at = now WHERE id = ? AND reminder_sent_at IS NULL "
            "RETURNING id`; only the run that gets the row back sends the email, so a retried "
            "or overlapping sweep can't send twice.",
            "Claim-then-send: loans get a `reminder_sent_at` column, and the sweep stamps it "
            "with an UPDATE … WHERE reminder_sent_at IS NULL RETURNING id before mailing. No "
            "row back means another run already has it.",
        ]),
        pi.edit(schema_path, _tabs(_SCHEMA_LOAN_TAIL_OLD), _tabs(_SCHEMA_LOAN_TAIL_NEW)),
    )  # fmt: skip
    s.fact("decision", "each reminder claims its loan (reminder_sent_at stamped by a "
           "conditional UPDATE … RETURNING) before the email goes out",
           ["reminder_sent_at"])  # fmt: skip
    f[mig2] = "ALTER TABLE `loans` ADD `reminder_sent_at` integer;"
    pi.turn("", pi.bash("pnpm drizzle-kit generate",
                        _drizzle_generate(w, mig2, holds=True, sent=True)))  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/reminders.ts", "\t\t\t\tisNull(loans.returnedAt),\n",
                "\t\t\t\tisNull(loans.returnedAt),\n\t\t\t\tisNull(loans.reminderSentAt),\n"),
    )  # fmt: skip
    pi.turn(
        "",
        pi.edit(
            "src/lib/server/reminders.ts",
            "\tfor (const { loan, member, tool } of rows) {\n\t\tconst mail = renderReminder({\n",
            "\tfor (const { loan, member, tool } of rows) {\n"
            "\t\t// Claim the loan first: a retried or overlapping sweep gets nothing back here.\n"
            "\t\tconst [claimed] = await db\n\t\t\t.update(loans)\n"
            "\t\t\t.set({ reminderSentAt: now })\n"
            "\t\t\t.where(and(eq(loans.id, loan.id), isNull(loans.reminderSentAt)))\n"
            "\t\t\t.returning({ id: loans.id });\n\t\tif (!claimed) continue;\n"
            "\t\tconst mail = renderReminder({\n",
        ),
    )  # fmt: skip

    # -- tests for the sweep and the reminders; one stays red ------------------------------------
    pi.turn(
        pi.pick(["Tests for the sweep and the reminders.", "Now tests for both."]),
        pi.read("test/helpers.ts", offset=40, limit=24, filler=True),
        pi.filler_component(),
    )  # fmt: skip
    pi.turn("", pi.write("test/sweep.test.ts", _tabs(_SWEEP_TEST)))
    pi.turn("", pi.write("test/reminders.test.ts",
                         _code(_REMINDERS_TEST, tool_title=tool_title)))  # fmt: skip
    s.fact("file_created", "tests for the reminders", ["test/reminders.test.ts"])
    sunday = "Sunday, March 29"
    saturday = "Saturday, March 28"
    tz_error = "\n".join([
        "AssertionError: expected 'Hi Ada,\\n\\nJust a heads-up: the " + tool_title[:5]
        + "…' to contain '" + sunday + "'", "",
        "- Expected", "+ Received", "",
        f"- {sunday}", "+ Hi Ada,", "+",
        f"+ Just a heads-up: the {tool_title} you borrowed is due back {saturday}.",
        "+ Need it longer? You can renew it from https://example.org/account.", "+",
        f"+ - {w.library}", "",
        " ❯ test/reminders.test.ts:47:21",
        "     45|             baseUrl: 'https://example.org'",
        "     46|         });",
        f"     47|         expect(mail.text).toContain('{sunday}');",
        "       |                           ^",
        "     48|     });",
        "     49| });",
    ])  # fmt: skip
    files3: list[_Run] = [
        *files2,
        ("test/reminders.test.ts",
         [(t, tz_error if t == _TZ_TEST else None) for t in _REMINDER_TESTS]),
        ("test/sweep.test.ts", [(t, None) for t in _SWEEP_TESTS]),
    ]  # fmt: skip
    out, code = _vitest(rng, w, files3, f"11:{rng.randint(20, 59):02d}:{rng.randint(0, 59):02d}")
    pi.turn("", pi.bash("pnpm test", out, code=code))
    s.fact("test_status", "the last test run: one failure, the rest pass",
           [f"1 failed | {p3} passed ({p3 + 1})"], stale=[f"{p2} passed ({p2})"])  # fmt: skip
    pi.say(pi.pick([
        "One failure, and it's a real one: `" + _TZ_TEST.split(" > ")[1] + "`. A due date "
        "staff pick in the admin form is stored as midnight UTC of that day, and in "
        f"{w.tz} that moment is still the evening before, so the email says {saturday} for a "
        f"loan due {sunday}.\n\nTwo ways out: store `due_at` as noon library time, or format "
        "the date part in UTC. Either one changes what `due_at` means, and the late-fee code in "
        "billing reads it too. Which do you want?",
        f"The rest pass; `{_TZ_TEST}` fails. Cause: `due_at` is midnight UTC on the due day, "
        f"which in {w.tz} is the previous evening, so the email reads {saturday} instead of "
        f"{sunday}.\n\nFix is either noon-local due dates or UTC formatting of the date. Both "
        "change the meaning of `due_at`, which billing's late fees depend on, so I'd rather "
        "not pick on my own.",
    ]))  # fmt: skip
    s.fact("error_open", "the reminder email shows the day before the due date in the "
           "library's timezone (test still failing)",
           [_TZ_TEST.split(" > ")[1]])  # fmt: skip

    # -- the user leaves it red; the hold changes again; a new item ------------------------------
    pi.user(pi.pick([
        f"leave it red. {w.colleague} and I need to agree on what due_at means first, the "
        f"late fees hang off it. also the volunteers met last night: holds are {h3} hours. that's "
        "the number, no more changes",
        f"don't fix that one yet, it's a {w.colleague} conversation (billing reads due_at). "
        f"and after last night's volunteer meeting the hold is {h3} hours. settled",
    ]))  # fmt: skip
    pi.turn(
        "",
        pi.edit("src/lib/server/holds.ts", f"export const HOLD_HOURS = {h2};",
                f"export const HOLD_HOURS = {h3};"),
    )  # fmt: skip
    s.fact("changed_value", "how long a pickup hold lasts", [f"{h3} hours"],
           stale=[f"{h1} hours", f"{h2} hours"])  # fmt: skip
    pi.say(pi.pick([f"Hold is {h3} hours now. Test left as it is.",
                    f"`HOLD_HOURS = {h3}`. Not touching the date test."]))  # fmt: skip
    pi.user(pi.pick([
        "add one to the list for later: staff want an /admin/holds page, active holds and when "
        "each one runs out. not in this PR",
        "oh and for the list: an /admin/holds page for staff (who's holding what, until when). "
        "separate PR",
    ]))  # fmt: skip
    s.fact("todo", "an /admin/holds page listing active holds (a later PR)", ["/admin/holds"])

    # -- the old endpoint goes ---------------------------------------------------------------
    pi.turn(
        pi.pick(["Noted. Meanwhile the old endpoint can go now that the sweep sends reminders.",
                 "Will do later. The cron-job.org endpoint is redundant now; removing it."]),
        pi.bash("rg -n 'api/cron|CRON_TOKEN' --glob '!node_modules' .", "\n".join([
            "./wrangler.toml:17:# RESEND_API_KEY and CRON_TOKEN are secrets: `wrangler secret "
            "put ...` (and .dev.vars locally)",
            "./.dev.vars.example:3:CRON_TOKEN=change-me",
            "./worker-configuration.d.ts:12:\t\tCRON_TOKEN: string;",
            f"./{endpoint}:10:// cron-job.org calls this every morning at 07:00 with "
            "?token=<CRON_TOKEN>.",
            f"./{endpoint}:13:\tif (!env || url.searchParams.get('token') !== env.CRON_TOKEN) "
            "error(401, 'bad token');",
        ]) + "\n"),
    )  # fmt: skip
    pi.turn("", pi.bash(f"git rm -q '{endpoint}' && ls src/routes/api", "health\n"))
    s.fact("file_deleted", "the old endpoint cron-job.org called", [endpoint])
    pi.turn(
        "",
        pi.edit("wrangler.toml",
                "# RESEND_API_KEY and CRON_TOKEN are secrets: `wrangler secret put ...` (and "
                ".dev.vars locally)", "# RESEND_API_KEY is a secret: `wrangler secret put "
                "RESEND_API_KEY` (and .dev.vars locally)"),
    )  # fmt: skip
    s.fact("file_modified", "wrangler.toml: cron trigger, the Worker entry, no queue",
           ["wrangler.toml"])  # fmt: skip
    pi.say(pi.pick([
        f"Removed `{endpoint}`; nothing else referenced it. Once this is deployed, the "
        "cron-job.org job and the `CRON_TOKEN` secret can be deleted by hand.\n\nStill open "
        "from your list: docs/ops.md, and /admin/holds for a later PR.",
        f"`{endpoint}` is gone. Left for you outside the repo: delete the cron-job.org job and "
        "`wrangler secret delete CRON_TOKEN --env production` after deploy.\n\nNot done yet: "
        "the docs/ops.md write-up; /admin/holds is parked for the next PR.",
    ]))  # fmt: skip

    # -- ship ---------------------------------------------------------------------------------
    pi.user(pi.pick([
        "fine. commit, push, open a draft PR. the ops doc can be a follow-up",
        "ok ship it as a draft PR, I'll do the ops notes myself tomorrow",
    ]))  # fmt: skip
    pi.turn("", pi.bash("pnpm check", clean_check))
    log = (
        f"{''.join(rng.choice('0123456789abcdef') for _ in range(7))} holds: expire and "
        "remind from a cron sweep, claim loans before mailing\n"
        f"{''.join(rng.choice('0123456789abcdef') for _ in range(7))} "
        + rng.choice(_COMMITS)
        + "\n"
    )
    pi.turn(
        "",
        pi.bash(
            f"git checkout -q -b {w.branch} && git add -A && git commit -q -m 'holds: expire "
            "and remind from a cron sweep, claim loans before mailing' && git log --oneline -2 "
            "",
            log,
        ),
    )  # fmt: skip
    counted, packed, written, deltas = (
        rng.randint(60, 80),
        rng.randint(25, 35),
        rng.randint(36, 45),
        rng.randint(15, 25),
    )
    push = "\n".join([
        f"Enumerating objects: {rng.randint(60, 90)}, done.",
        f"Counting objects: 100% ({counted}/{counted}), done.",
        "Delta compression using up to 8 threads",
        f"Compressing objects: 100% ({packed}/{packed}), done.",
        f"Writing objects: 100% ({written}/{written}), "
        f"{rng.randint(11, 19)}.{rng.randint(10, 99)} KiB | "
        f"{rng.randint(2, 9)}.{rng.randint(10, 99)} "
        "MiB/s, done.",
        f"Total {written} (delta {deltas}), reused 0 (delta 0), "
        "pack-reused 0",
        f"remote: Resolving deltas: 100% ({deltas}/{deltas}), "
        "completed with 14 local objects.",
        "remote: ",
        f"remote: Create a pull request for '{w.branch}' on GitHub by visiting:",
        f"remote:      https://github.com/{w.org}/{w.proj}/pull/new/{w.branch}",
        "remote: ",
        f"To github.com:{w.org}/{w.proj}.git",
        f" * [new branch]      {w.branch} -> {w.branch}",
        f"branch '{w.branch}' set up to track 'origin/{w.branch}'.",
    ]) + "\n"  # fmt: skip
    pi.turn("", pi.bash(f"git push -u origin {w.branch}", push))
    body = (
        "Waitlists on tool pages, holds for returned tools, due-date reminder emails, all "
        "driven by a scheduled sweep. Replaces the morning endpoint.\n\nKnown failing: one "
        "reminder date test (a timezone question about due_at, to discuss)."
    )
    pi.turn(
        "",
        pi.bash(
            f"gh pr create --draft --base main --title 'Waitlists, holds and due-date "
            f"reminders' --body '{body}'",
            f"\nCreating draft pull request for {w.branch} into main in {w.org}/{w.proj}\n\n"
            f"{pr_url}\n",
        ),
    )  # fmt: skip
    final = pi.pick(
        [
            f"Draft PR is up: {pr_url}",
            f"Pushed `{w.branch}` and opened the draft: {pr_url}",
            f"Done. Draft PR: {pr_url}. CI should pick it up in a minute.",
        ]
    )
    pi.say(final)
    s.fact("last_message", "the assistant's last message: the draft PR is open", [pr_url])
    return pi


#: Characters of message text per token in this family's sessions (cl100k_base, measured on
#: seeds 7, 8 and 1000-1003): denser than `_base.CHARS_PER_TOKEN` (3.4), being mostly code,
#: tab-indented TypeScript and the box drawing of vitest, wrangler and drizzle-kit.
_CHARS_PER_TOKEN = 3.1
assert 0.8 * CHARS_PER_TOKEN < _CHARS_PER_TOKEN < CHARS_PER_TOKEN


def _text_chars(pi: _Pi) -> int:
    """The characters the ruler reads in the session (`text_of_message` of each message)."""
    messages = [{"role": "system", "content": pi.s.system}, *pi.s.messages]
    return sum(len(text_of_message(m)) for m in messages)


def write(seed: int, tokens: int = 32_000) -> EvalSession:
    """One pi session of about `tokens` tokens; same seed, same session."""
    target = tokens * _CHARS_PER_TOKEN
    lean = _text_chars(_tell(seed, 0.0))
    per_unit = max(1, _text_chars(_tell(seed, 1.0)) - lean)
    pi = _tell(seed, max(0.0, (target - lean) / per_unit))
    return finish_session(pi.s, family=FAMILY, seed=seed)
