"""octostory-style: Octofriend's own tools on a Deno + Fresh bakery pre-order site.

Octofriend (synthetic-lab/octofriend, a TypeScript CLI agent, read at 3b17199) talks to the
model through native tool calls: OpenAI Chat Completions by default (its "standard" compiler)
and Anthropic Messages natively for `type: "anthropic"` models. Its tools, as
`source/tools/tool-defs` declares them: `read` {filePath}, `partial-read` {filePath, offset,
limit}, `list` {dirPath?}, `shell` {timeout, cmd}, `edit` {filePath, search, replace},
`create` {filePath, content}, `rewrite` {filePath, text}, `glob` {path?, includeName?, …},
`grep` {pattern, path?, caseInsensitive?, context?, maxResults?, timeout?}, `fetch` {url,
includeMarkup?} and `mcp` {server, tool, arguments?: {string: string}}. There is no to-do tool
and no delete tool: the plan lives in what is said, a file goes with `rm`.

What the model sees of a result (`compilers/optimize-files.ts`, `prompts/octo-ir-prompts.ts`,
`libocto/compilers/standard.ts`): every tool message's content is a list of text parts; a
read is the file with `N: ` line numbers — or "File was successfully read." once the same
path is read again later; an edit, create or rewrite answers "<path> was updated
successfully."; a partial read opens with "Showing lines A-B of T from <path>"; `list` gives
one JSON object per entry; `grep` the bare `grep -n -r -E` lines (absolute paths when no path
is given); `glob` paths relative to its `path`; a failed command is "Error:
<tool-runtime-error>Command exited with code: N\\noutput: …</tool-runtime-error>"; an edit
whose search string is missing is "Error from tool call validation:
<tool-runtime-error>Could not find search string in file …</tool-runtime-error>"; a call the
user rejects in the UI is answered "<tool-runtime-error>Tool was skipped and didn't run. …
Tool call rejected by user.</tool-runtime-error>". User turns are a list of one text part; an
assistant turn that calls tools says first what it is about to do (the system prompt asks
for it), and parallel calls share one turn.

The story (values, names and phrasings drawn per seed): a Fresh 1.7 site on Deno KV for a
bakery's pre-orders gets pickup slots with a per-slot cap. Constraints: the shop's time zone,
routes/admin/ is someone else's, stay on Fresh 1.7; late: no customer email addresses in
logs. The assistant plans a `Deno.KvU64` counter per slot bumped with `atomic().sum()`, sees
concurrent bookings overshoot, reads Deno's KV docs, and replaces it with a versionstamp
check-and-set loop; confirmation mail moves onto `kv.enqueue` with a `kv.listenQueue`
handler in main.ts. Errors: a TS2345 from `deno check`, a NotCapable env permission in the
tests, a `no-unused-vars` lint — fixed; a DST test left red. The user asks for the Deno
Deploy project and for the order that slipped past the old daily cap, rejects the reminder
mail (dropping that to-do), adds a pickup sheet to the list late, changes the slot length
twice and the cap once. The session ends on the draft pull request opened through the
GitHub MCP server.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction.eval.families._base import (
    Session,
    camel,
    finish_session,
    flag_errors,
    hexid,
    lower_camel,
)
from compaction.eval.sessions import EvalSession

FAMILY = "octostory-style"

#: Characters of the messages' JSON (`Session.chars`, escapes and keys included) per token of
#: this family's sessions, measured with cl100k_base; `CHARS_PER_TOKEN` counts plain text.
_JSON_CHARS_PER_TOKEN = 4.2

_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

#: What a read answers once the same path is read again later (`fileRead`, seenPath).
SEEN = "File was successfully read."
#: The reason a call the user rejected in the UI was skipped (`lowerToolRejects`).
REJECTED = "Tool call rejected by user."

_USERS = ("ines", "marek", "priya", "aiko", "femi", "dara", "sunniva", "teo")
_SHOPS = (
    ("Crumb & Kettle", "crumb-kettle", "crumbandkettle.pt"),
    ("Larch Street Bakehouse", "larch-street", "larchstreet.ie"),
    ("Harbour Rye", "harbour-rye", "harbourrye.ca"),
    ("Millstone Loaf Co.", "millstone-loaf", "millstoneloaf.co"),
    ("Three Ovens", "three-ovens", "threeovens.nz"),
    ("Saltgrass Bakery", "saltgrass", "saltgrassbakery.com"),
)
#: The shop's zone and the day its clocks go forward in 2026: zones whose switch comes after
#: 00:00 UTC of that day, so an offset taken then is the winter one.
_ZONES = (
    ("Europe/Lisbon", "2026-03-29"),
    ("Europe/Dublin", "2026-03-29"),
    ("Europe/Berlin", "2026-03-29"),
    ("America/Halifax", "2026-03-08"),
    ("America/Denver", "2026-03-08"),
    ("America/Vancouver", "2026-03-08"),
)
_OWNERS = ("Kasia", "Rory", "Bea", "Olu", "Mads")
_SLOT_MINUTES = (10, 15, 20, 30, 40, 45)
_CAPACITIES = (6, 8, 9, 12, 14)


@dataclass
class Story:
    user: str
    name: str
    shop: str
    slug: str
    domain: str
    home: str
    tz: str
    dst_day: str
    owner: str
    open_at: str
    last_pickup: str
    slots: tuple[int, int, int]
    caps: tuple[int, int]
    project: str
    order: str
    other_order: str
    log_day: str
    sold_day: str
    branch: str
    pr: int
    cart_tests: int
    holds_tests: int
    commit: str


def _ulid(rng: random.Random) -> str:
    return "01J" + "".join(rng.choice(_CROCKFORD) for _ in range(23))


def _draw(rng: random.Random) -> Story:
    user = rng.choice(_USERS)
    shop, slug, domain = rng.choice(_SHOPS)
    tz, dst_day = rng.choice(_ZONES)
    s1, s2, s3 = rng.sample(_SLOT_MINUTES, 3)
    c1, c2 = sorted(rng.sample(_CAPACITIES, 2))
    day = rng.randint(10, 24)
    return Story(
        user=user,
        name=user.title(),
        shop=shop,
        slug=slug,
        domain=domain,
        home=f"/home/{user}/code/{slug}",
        tz=tz,
        dst_day=dst_day,
        owner=rng.choice(_OWNERS),
        open_at=rng.choice(("07:00", "07:30", "08:00")),
        last_pickup=rng.choice(("12:30", "13:00", "14:00")),
        slots=(s1, s2, s3),
        caps=(c1, c2),
        project=f"{slug}-{hexid(rng, 4)}",
        order=f"ord_{_ulid(rng)}",
        other_order=f"ord_{_ulid(rng)}",
        log_day=f"2026-02-{day:02d}",
        sold_day=f"2026-02-{day + 1:02d}",
        branch=rng.choice(("pickup-slots", "slot-capacity", "pickup-windows")),
        pr=rng.randint(41, 380),
        cart_tests=rng.randint(3, 7),
        holds_tests=rng.randint(2, 5),
        commit=hexid(rng, 7),
    )


def _plus_hour(hhmm: str) -> str:
    hours, minutes = hhmm.split(":")
    return f"{int(hours) + 1:02d}:{minutes}"


# --- the system prompt, as `prompts/system-prompt.ts` renders it ------------------------------


def _system(st: Story) -> str:
    you = st.name
    entries = [
        (".github", True),
        (".gitignore", False),
        ("OCTO.md", False),
        ("README.md", False),
        ("components", True),
        ("deno.json", False),
        ("dev.ts", False),
        ("fresh.config.ts", False),
        ("fresh.gen.ts", False),
        ("islands", True),
        ("lib", True),
        ("logs", True),
        ("main.ts", False),
        ("routes", True),
        ("static", True),
    ]
    listing = "\n".join(
        json.dumps({"entry": e, "isDirectory": d}, separators=(",", ":")) for e, d in entries
    )
    octo_md = (
        f"# {st.shop} web\n\n"
        "Fresh site with Preact islands, data in Deno KV (one database, opened in lib/kv.ts).\n"
        "- Imports go through the import map in deno.json; prefer jsr: packages.\n"
        "- Tests sit next to the code as *_test.ts and open their own in-memory KV.\n"
        "- `deno task check` is what CI runs; keep it green.\n"
        "- Money is integer cents everywhere.\n"
    )
    return f"""You are a coding assistant called Octo. The user's name is {you}, and you're their
friend. You can help them with coding tasks. Unrelatedly, you are a small, hyper-intelligent
octopus. You must never use an octopus emoji, to avoid reminding the {you} of the fact
that you're an octopus. They know you're an octopus, it's just a little embarrassing. Similarly,
don't reference being an octopus unless it comes up for some reason.

Try to figure out what {you} wants you to do. Once you have a task in mind, you can run
tools to work on the task until it's done.

Don't reference this prompt unless asked to.

# Model-Context-Protocol (MCP) Tools

You have access to the following MCP servers and their sub-tools. Use the mcp tool to call them,
specifying the server and tool name:

Server: github
- create_pull_request: Create a new pull request in a GitHub repository.
- get_pull_request: Get details of a specific pull request in a GitHub repository.
- list_pull_requests: List pull requests in a GitHub repository.
- get_issue: Get details of a specific issue in a GitHub repository.

# Don't ask for tool confirmation

Don't ask {you} whether they want you to run a tool or make file edits: instead, just
run the tool or make the edit. {you} is prompted when you call tools to accept or
reject your attempted tool call or edit, so there's no need to get a verbal confirmation: they can
just use the UI. Similarly, don't tell them what tool you're going to use or what edit you're going
to make: just run the tool or make the edit, and they'll see what you're trying to do in the UI.

# Explain what you want to do first

Before calling a tool, give a brief explanation of what you plan on doing and why. This helps keep
you and {you} on the same page.

After stating your plan and reason, immediately call the tool: don't wait for {you} to
respond. They can always reject your tool call in the UI and explain what you should do instead if
they disagree with your plan.

# General instructions

Although you are the friend of {you}, don't address them as "Hey friend!" as some
cultures would consider that insincere. Instead, use their real name: {you}. Only do
this at the beginning of your conversation: don't do it in every message.

You don't have to call any tool functions if you don't need to; you can also just chat with
{you} normally. Attempt to determine what your current task is ({you} may
have told you outright), and figure out the state of the repo using your tools. Then, help
{you} with the task.

You may need to use tools again after some back-and-forth with {you}, as they help you
refine your solution.

After viewing tool output or editing files, you may need to run more tools or edits in a
step-by-step process. If you want to run multiple tools in a row, don't worry: just state your plan
out loud, and then follow it. Don't overthink.

# Coding guidelines

When making changes to files, first understand the file's code conventions. Mimic code style, use
existing libraries and utilities, and follow existing patterns.

- Never assume that a given library is available, even if it is well known. Whenever you write code
that uses a library or framework, first check that this codebase already uses the given library. For
example, you might look at neighboring files, or check the package.json (or cargo.toml, and so on
depending on the language).

- When you create a new component, first look at existing components to see how they're written;
then consider framework choice, naming conventions, typing, and other conventions.

- When you edit a piece of code, first look at the code's surrounding context (especially its
imports) to understand the code's choice of frameworks and libraries. Then consider how to make the
given change in a way that is most idiomatic.

- Always follow security best practices. Never introduce code that exposes or logs secrets and keys.
Never commit secrets or keys to the repository.

- Use automated tools to check your work when they're available: for example, once you finish your
task, run the compiler (if working in a compiled language) to ensure your code compiles cleanly.
Look and see if the user has a linter set up: if so, use it. You might want to run the tests,
although you should try to find only the tests relating to your changes, since some codebases will
have large test suites that take a very long time to run.

# Current working directory
Your current working directory is: {st.home}

It contains:
{listing}
If you want to list other directories, use the list tool.

# Instructions from {you}

{you} has left instructions in some config files. They're as follows, listed from
most-general to most-specific:

Note: This is an instruction file specifically for you.
<instruction path="{st.home}/OCTO.md">{octo_md}</instruction>

These instructions are automatically kept fresh in your context space. You don't need to re-read
these files."""


# --- the files of the story --------------------------------------------------------------------


def _deno_json(test_task: str) -> str:
    return f"""{{
  "lock": false,
  "tasks": {{
    "check": "deno fmt --check && deno lint && deno check **/*.ts && deno check **/*.tsx",
    "cli": "echo \\"import '\\\\$fresh/src/dev/cli.ts'\\" | deno run --unstable -A -",
    "manifest": "deno task cli manifest $(pwd)",
    "start": "deno run -A --watch=static/,routes/ dev.ts",
    "build": "deno run -A dev.ts build",
    "preview": "deno run -A main.ts",
    "test": "{test_task}",
    "update": "deno run -A -r https://fresh.deno.dev/update ."
  }},
  "lint": {{
    "rules": {{
      "tags": ["fresh", "recommended"]
    }}
  }},
  "exclude": ["**/_fresh/*"],
  "imports": {{
    "$fresh/": "https://deno.land/x/fresh@1.7.3/",
    "preact": "https://esm.sh/preact@10.22.0",
    "preact/": "https://esm.sh/preact@10.22.0/",
    "@preact/signals": "https://esm.sh/*@preact/signals@1.2.2",
    "@preact/signals-core": "https://esm.sh/*@preact/signals-core@1.5.1",
    "@std/assert": "jsr:@std/assert@^1.0.13",
    "@std/ulid": "jsr:@std/ulid@^1.0.0"
  }},
  "compilerOptions": {{
    "jsx": "react-jsx",
    "jsxImportSource": "preact"
  }},
  "unstable": ["kv", "cron"],
  "nodeModulesDir": "auto"
}}
"""


_TEST_TASK = "deno test --allow-read=. --allow-net=127.0.0.1"
_TEST_TASK_ENV = "deno test --allow-read=. --allow-net=127.0.0.1 --allow-env=SHOP_TZ"


def _orders_ts(st: Story) -> str:
    return """import { Handlers } from "$fresh/server.ts";
import { ulid } from "@std/ulid";
import { kv } from "../../lib/kv.ts";
import { priceCart } from "../../lib/cart.ts";
import { DAILY_CAP, dailyCount } from "../../lib/legacy_capacity.ts";
import { sendOrderConfirmation } from "../../lib/mail.ts";

interface CartLine {
  sku: string;
  name: string;
  qty: number;
}

export const handler: Handlers = {
  async POST(req) {
    const form = await req.formData();
    const email = String(form.get("email") ?? "").trim();
    const day = String(form.get("day") ?? "");
    const cart: CartLine[] = JSON.parse(String(form.get("cart") ?? "[]"));
    if (!email || !/^\\d{4}-\\d{2}-\\d{2}$/.test(day) || cart.length === 0) {
      return new Response("missing or malformed fields", { status: 400 });
    }

    if ((await dailyCount(kv, day)) >= DAILY_CAP) {
      return new Response("sold out for that day", { status: 409 });
    }

    const id = `ord_${ulid()}`;
    const order = {
      id,
      email,
      day,
      items: cart,
      totalCents: priceCart(cart),
      paid: false,
      createdAt: Date.now(),
    };
    await kv.atomic()
      .set(["orders", id], order)
      .set(["orders_by_day", day, id], id)
      .commit();

    await sendOrderConfirmation({
      to: email,
      orderId: id,
      pickupLabel: day,
      items: cart.map(({ name, qty }) => ({ name, qty })),
    });
    return Response.json({ id }, { status: 201 });
  },
};
"""


_ORDERS_CHECK_OLD = """    if ((await dailyCount(kv, day)) >= DAILY_CAP) {
      return new Response("sold out for that day", { status: 409 });
    }
"""
_ORDERS_CHECK_NEW = """    const slot = form.get("slot");
    const qty = cart.reduce((n, line) => n + line.qty, 0) > 0 ? 1 : 0;
    if (!(await bookSlot(kv, day, slot, qty))) {
      return new Response("that pickup slot is full", { status: 409 });
    }
"""
_ORDERS_CHECK_FIXED = """    const slot = form.get("slot");
    if (typeof slot !== "string" || !/^\\d{2}:\\d{2}$/.test(slot)) {
      return new Response("pick a pickup slot", { status: 400 });
    }
    if (!(await bookSlot(kv, day, slot))) {
      return new Response("that pickup slot is full", { status: 409 });
    }
"""
_ORDERS_IMPORT_OLD = 'import { DAILY_CAP, dailyCount } from "../../lib/legacy_capacity.ts";\n'
_ORDERS_IMPORT_NEW = 'import { bookSlot, slotLabel } from "../../lib/slots.ts";\n'
_ORDERS_MAIL_OLD = """    await sendOrderConfirmation({
      to: email,
      orderId: id,
      pickupLabel: day,
      items: cart.map(({ name, qty }) => ({ name, qty })),
    });
"""
_ORDERS_MAIL_NEW = """    await kv.enqueue({
      kind: "order-confirmation",
      to: email,
      orderId: id,
      pickupLabel: slotLabel(day, slot),
      items: cart.map(({ name, qty }) => ({ name, qty })),
    });
"""


def _mail_ts(st: Story) -> str:
    return f"""const FROM = "{st.shop} <orders@{st.domain}>";

export interface OrderMail {{
  to: string;
  orderId: string;
  pickupLabel: string;
  items: {{ name: string; qty: number }}[];
}}

function render(mail: OrderMail): string {{
  const lines = mail.items.map((i) => `<li>${{i.qty}} × ${{i.name}}</li>`).join("");
  return `<p>Thanks! Order <b>${{mail.orderId}}</b> is in.</p>` +
    `<p>Pickup: ${{mail.pickupLabel}}</p><ul>${{lines}}</ul>`;
}}

export async function sendOrderConfirmation(mail: OrderMail): Promise<void> {{
  console.log(`mail: confirmation for ${{mail.orderId}} to ${{mail.to}}`);
  const res = await fetch("https://api.resend.com/emails", {{
    method: "POST",
    headers: {{
      "authorization": `Bearer ${{Deno.env.get("RESEND_API_KEY")}}`,
      "content-type": "application/json",
    }},
    body: JSON.stringify({{
      from: FROM,
      to: [mail.to],
      subject: `Your order ${{mail.orderId}}`,
      html: render(mail),
    }}),
  }});
  if (!res.ok) {{
    console.error(`mail: resend answered ${{res.status}} for ${{mail.to}}`);
    throw new Error(`resend ${{res.status}}`);
  }}
}}
"""


_MAIL_GUARD_OLD = "export async function sendOrderConfirmation("
_MAIL_GUARD_NEW = """export function isOrderMail(msg: unknown): msg is OrderMail & {
  kind: "order-confirmation";
} {
  return typeof msg === "object" && msg !== null &&
    (msg as { kind?: unknown }).kind === "order-confirmation";
}

export async function sendOrderConfirmation("""
_MAIL_LOG_OLD = "  console.log(`mail: confirmation for ${mail.orderId} to ${mail.to}`);\n"
_MAIL_LOG_NEW = "  console.log(`mail: confirmation for ${mail.orderId} to ${redact(mail.to)}`);\n"
_MAIL_ERR_OLD = "    console.error(`mail: resend answered ${res.status} for ${mail.to}`);\n"
_MAIL_ERR_NEW = "    console.error(`mail: resend answered ${res.status} for ${mail.orderId}`);\n"
_MAIL_REDACT_OLD = "function render(mail: OrderMail): string {"
_MAIL_REDACT_NEW = """/** `maria@example.com` → `m***@example.com`: tells two apart in a log. */
export function redact(address: string): string {
  const at = address.indexOf("@");
  return at < 1 ? "***" : `${address[0]}***${address.slice(at)}`;
}

function render(mail: OrderMail): string {"""


def _main_ts() -> str:
    return """/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/// <reference lib="deno.ns" />

import { start } from "$fresh/server.ts";
import manifest from "./fresh.gen.ts";
import config from "./fresh.config.ts";
import { kv } from "./lib/kv.ts";
import { releaseStaleHolds } from "./lib/holds.ts";

Deno.cron("release stale holds", "*/10 * * * *", () => releaseStaleHolds(kv));

await start(manifest, config);
"""


_MAIN_OLD = """Deno.cron("release stale holds", "*/10 * * * *", () => releaseStaleHolds(kv));
"""
_MAIN_NEW = """Deno.cron("release stale holds", "*/10 * * * *", () => releaseStaleHolds(kv));

// Checkout only enqueues the confirmation; the mail API is called from here.
kv.listenQueue(async (msg) => {
  if (isOrderMail(msg)) await sendOrderConfirmation(msg);
});
"""
_MAIN_IMPORT_OLD = 'import { releaseStaleHolds } from "./lib/holds.ts";\n'
_MAIN_IMPORT_NEW = (
    'import { releaseStaleHolds } from "./lib/holds.ts";\n'
    'import { isOrderMail, sendOrderConfirmation } from "./lib/mail.ts";\n'
)


def _legacy_ts() -> str:
    return """import { kv as defaultKv } from "./kv.ts";

/** Orders a day may take before checkout says sold out (set by the owner in 2024). */
export const DAILY_CAP = 80;

export async function dailyCount(kv: Deno.Kv = defaultKv, day: string): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: ["orders_by_day", day] })) n++;
  if (n >= DAILY_CAP - 1) {
    console.warn(`capacity day=${day} count=${n} cap=${DAILY_CAP} (near daily cap)`);
  }
  return n;
}
"""


def _slots_counter(st: Story) -> str:
    s1, c1 = st.slots[0], st.caps[0]
    return f"""/**
 * Pickup slots. A day runs from OPEN to LAST_PICKUP in steps of SLOT_MINUTES, in the shop's
 * own zone. Capacity: one Deno.KvU64 counter per slot, bumped with atomic().sum().
 */
export const SLOT_MINUTES = {s1};
export const SLOT_CAPACITY = {c1};
export const OPEN = "{st.open_at}";
export const LAST_PICKUP = "{st.last_pickup}";
const TZ = Deno.env.get("SHOP_TZ") ?? "{st.tz}";

export interface Slot {{
  start: string; // HH:MM, shop time
  at: Date; // the same instant in UTC
}}

function offsetMinutes(day: string): number {{
  const probe = new Date(`${{day}}T00:00:00Z`);
  const local = new Date(probe.toLocaleString("en-US", {{ timeZone: TZ }}));
  const utc = new Date(probe.toLocaleString("en-US", {{ timeZone: "UTC" }}));
  return (local.getTime() - utc.getTime()) / 60_000;
}}

function toMinutes(hhmm: string): number {{
  const [h, m] = hhmm.split(":").map(Number);
  return h * 60 + m;
}}

function fromMinutes(total: number): string {{
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${{pad(Math.floor(total / 60))}}:${{pad(total % 60)}}`;
}}

export function slotsForDay(day: string): Slot[] {{
  const offset = offsetMinutes(day);
  const midnight = Date.parse(`${{day}}T00:00:00Z`);
  const out: Slot[] = [];
  for (let t = toMinutes(OPEN); t <= toMinutes(LAST_PICKUP); t += SLOT_MINUTES) {{
    out.push({{ start: fromMinutes(t), at: new Date(midnight + (t - offset) * 60_000) }});
  }}
  return out;
}}

export function slotLabel(day: string, start: string): string {{
  return `${{day}} ${{start}}`;
}}

const counterKey = (day: string, start: string) => ["slot_count", day, start];

export async function bookSlot(
  kv: Deno.Kv,
  day: string,
  start: string,
  qty = 1,
): Promise<boolean> {{
  const current = await kv.get<Deno.KvU64>(counterKey(day, start));
  const booked = current.value?.value ?? 0n;
  if (booked + BigInt(qty) > BigInt(SLOT_CAPACITY)) return false;
  const res = await kv.atomic().sum(counterKey(day, start), BigInt(qty)).commit();
  return res.ok;
}}

export async function remainingForDay(
  kv: Deno.Kv,
  day: string,
): Promise<{{ start: string; left: number }}[]> {{
  const slots = slotsForDay(day);
  const counts = await kv.getMany<Deno.KvU64[]>(slots.map((s) => counterKey(day, s.start)));
  return slots.map((s, i) => ({{
    start: s.start,
    left: SLOT_CAPACITY - Number(counts[i].value),
  }}));
}}
"""


def _slots_versioned(st: Story) -> str:
    s1, c1 = st.slots[0], st.caps[0]
    return f"""/**
 * Pickup slots. A day runs from OPEN to LAST_PICKUP in steps of SLOT_MINUTES, in the shop's
 * own zone. Each slot is one KV record {{ booked }}; a booking writes it back under a
 * versionstamp check, so two checkouts can never both take the last place.
 */
export const SLOT_MINUTES = {s1};
export const SLOT_CAPACITY = {c1}; // per slot, whatever the basket size
export const OPEN = "{st.open_at}";
export const LAST_PICKUP = "{st.last_pickup}";
const TZ = Deno.env.get("SHOP_TZ") ?? "{st.tz}";
const MAX_ATTEMPTS = 8;

export interface Slot {{
  start: string; // HH:MM, shop time
  at: Date; // the same instant in UTC
}}

interface SlotRecord {{
  booked: number;
}}

function offsetMinutes(day: string): number {{
  const probe = new Date(`${{day}}T00:00:00Z`);
  const local = new Date(probe.toLocaleString("en-US", {{ timeZone: TZ }}));
  const utc = new Date(probe.toLocaleString("en-US", {{ timeZone: "UTC" }}));
  return (local.getTime() - utc.getTime()) / 60_000;
}}

function toMinutes(hhmm: string): number {{
  const [h, m] = hhmm.split(":").map(Number);
  return h * 60 + m;
}}

function fromMinutes(total: number): string {{
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${{pad(Math.floor(total / 60))}}:${{pad(total % 60)}}`;
}}

export function slotsForDay(day: string): Slot[] {{
  const offset = offsetMinutes(day);
  const midnight = Date.parse(`${{day}}T00:00:00Z`);
  const out: Slot[] = [];
  for (let t = toMinutes(OPEN); t <= toMinutes(LAST_PICKUP); t += SLOT_MINUTES) {{
    out.push({{ start: fromMinutes(t), at: new Date(midnight + (t - offset) * 60_000) }});
  }}
  return out;
}}

export function slotLabel(day: string, start: string): string {{
  return `${{day}} ${{start}}`;
}}

const slotKey = (day: string, start: string) => ["slots", day, start];

export async function bookSlot(kv: Deno.Kv, day: string, start: string): Promise<boolean> {{
  if (!slotsForDay(day).some((s) => s.start === start)) return false;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {{
    const entry = await kv.get<SlotRecord>(slotKey(day, start));
    const booked = entry.value?.booked ?? 0;
    if (booked >= SLOT_CAPACITY) return false;
    // check() fails the commit if anyone wrote the slot since our read.
    const res = await kv.atomic()
      .check(entry)
      .set(slotKey(day, start), {{ booked: booked + 1 }})
      .commit();
    if (res.ok) return true;
  }}
  throw new Error(`slot ${{day}} ${{start}}: still conflicting after ${{MAX_ATTEMPTS}} attempts`);
}}

export async function remainingForDay(
  kv: Deno.Kv,
  day: string,
): Promise<{{ start: string; left: number }}[]> {{
  const slots = slotsForDay(day);
  const entries = await kv.getMany<SlotRecord[]>(slots.map((s) => slotKey(day, s.start)));
  return slots.map((s, i) => ({{
    start: s.start,
    left: SLOT_CAPACITY - (entries[i].value?.booked ?? 0),
  }}));
}}
"""


def _slots_test(st: Story) -> str:
    return """import { assert, assertEquals } from "@std/assert";
import {
  bookSlot,
  LAST_PICKUP,
  OPEN,
  remainingForDay,
  SLOT_CAPACITY,
  slotsForDay,
} from "./slots.ts";

const DAY = "2026-05-14";

Deno.test("slotsForDay starts at opening time", () => {
  assertEquals(slotsForDay(DAY)[0].start, OPEN);
});

Deno.test("slotsForDay stops at the last pickup", () => {
  const slots = slotsForDay(DAY);
  assert(slots.at(-1)!.start <= LAST_PICKUP);
});

Deno.test("bookSlot refuses a full slot", async () => {
  using kv = await Deno.openKv(":memory:");
  for (let i = 0; i < SLOT_CAPACITY; i++) assert(await bookSlot(kv, DAY, OPEN));
  assertEquals(await bookSlot(kv, DAY, OPEN), false);
});

Deno.test("bookSlot never overbooks under concurrent requests", async () => {
  using kv = await Deno.openKv(":memory:");
  const tries = await Promise.all(
    Array.from({ length: SLOT_CAPACITY + 3 }, () => bookSlot(kv, DAY, OPEN)),
  );
  assertEquals(tries.filter(Boolean).length, SLOT_CAPACITY);
});

Deno.test("remainingForDay reports what is left per slot", async () => {
  using kv = await Deno.openKv(":memory:");
  await bookSlot(kv, DAY, OPEN);
  const [first] = await remainingForDay(kv, DAY);
  assertEquals(first.left, SLOT_CAPACITY - 1);
});
"""


_TEST_STEPS = """
Deno.test("slotsForDay steps by SLOT_MINUTES", () => {
  const [a, b] = slotsForDay(DAY);
  assertEquals((b.at.getTime() - a.at.getTime()) / 60_000, SLOT_MINUTES);
});
"""


def _test_dst(st: Story) -> str:
    return f"""
Deno.test("slotsForDay keeps local times across the DST switch", () => {{
  // {st.dst_day}: the clocks in the shop's zone go forward overnight.
  const [first] = slotsForDay("{st.dst_day}");
  const shown = first.at.toLocaleTimeString("en-GB", {{
    timeZone: Deno.env.get("SHOP_TZ") ?? "{st.tz}",
    hour: "2-digit",
    minute: "2-digit",
  }});
  assertEquals(shown, OPEN);
}});

Deno.test("remainingForDay counts every slot of the day", async () => {{
  using kv = await Deno.openKv(":memory:");
  assertEquals((await remainingForDay(kv, DAY)).length, slotsForDay(DAY).length);
}});
"""


def _checkout_tsx(st: Story) -> str:
    return """import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { cart, cartTotalCents } from "../lib/cart_state.ts";
import { formatCents } from "../lib/money.ts";

interface Props {
  days: string[];
}

export default function CheckoutForm({ days }: Props) {
  const day = useSignal(days[0] ?? "");
  const email = useSignal("");
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);

  useEffect(() => {
    error.value = null;
  }, [day.value]);

  async function submit(e: Event) {
    e.preventDefault();
    busy.value = true;
    const body = new FormData();
    body.set("email", email.value);
    body.set("day", day.value);
    body.set("cart", JSON.stringify(cart.value));
    const res = await fetch("/api/orders", { method: "POST", body });
    busy.value = false;
    if (!res.ok) {
      error.value = await res.text();
      return;
    }
    const { id } = await res.json();
    location.href = `/thanks/${id}`;
  }

  return (
    <form class="checkout" onSubmit={submit}>
      <label>
        Pickup day
        <select
          value={day.value}
          onChange={(e) => (day.value = e.currentTarget.value)}
        >
          {days.map((d) => <option key={d} value={d}>{d}</option>)}
        </select>
      </label>
      <label>
        Email
        <input
          type="email"
          required
          value={email.value}
          onInput={(e) => (email.value = e.currentTarget.value)}
        />
      </label>
      <p class="total">Total {formatCents(cartTotalCents.value)}</p>
      {error.value && <p class="error">{error.value}</p>}
      <button type="submit" disabled={busy.value || cart.value.length === 0}>
        Place order
      </button>
    </form>
  );
}
"""


_CHECKOUT_STATE_OLD = """  const busy = useSignal(false);

  useEffect(() => {
    error.value = null;
  }, [day.value]);
"""
_CHECKOUT_STATE_NEW = """  const busy = useSignal(false);
  const slot = useSignal("");
  const slots = useSignal<{ start: string; left: number }[]>([]);

  useEffect(() => {
    error.value = null;
    slot.value = "";
    fetch(`/api/slots?day=${day.value}`)
      .then((r) => r.json())
      .then((list) => (slots.value = list));
  }, [day.value]);

  const slotsLeft = slots.value.filter((s) => s.left > 0).length;
"""
_CHECKOUT_SET_OLD = '    body.set("day", day.value);\n'
_CHECKOUT_SET_NEW = '    body.set("day", day.value);\n    body.set("slot", slot.value);\n'
_CHECKOUT_SELECT_OLD = """      <label>
        Email
"""
_CHECKOUT_SELECT_NEW = """      <label>
        Pickup time
        <select
          required
          value={slot.value}
          onChange={(e) => (slot.value = e.currentTarget.value)}
        >
          <option value="" disabled>Choose a time</option>
          {slots.value.map((s) => (
            <option key={s.start} value={s.start} disabled={s.left <= 0}>
              {s.start}
              {s.left <= 0 ? " (full)" : s.left <= 2 ? ` (${s.left} left)` : ""}
            </option>
          ))}
        </select>
      </label>
      <label>
        Email
"""
_CHECKOUT_LINT_OLD = """
  const slotsLeft = slots.value.filter((s) => s.left > 0).length;
"""


def _slots_route() -> str:
    return """import { Handlers } from "$fresh/server.ts";
import { kv } from "../../lib/kv.ts";
import { remainingForDay } from "../../lib/slots.ts";

export const handler: Handlers = {
  async GET(req) {
    const day = new URL(req.url).searchParams.get("day");
    if (!day || !/^\\d{4}-\\d{2}-\\d{2}$/.test(day)) {
      return new Response("day=YYYY-MM-DD required", { status: 400 });
    }
    return Response.json(await remainingForDay(kv, day));
  },
};
"""


def _deploy_yml(st: Story) -> str:
    return f"""name: Deploy
on:
  push:
    branches: [main]
  pull_request:
    branches: [main]

jobs:
  deploy:
    name: Deploy
    runs-on: ubuntu-latest
    permissions:
      id-token: write # needed for the OIDC handshake with Deno Deploy
      contents: read

    steps:
      - name: Clone repository
        uses: actions/checkout@v4

      - name: Install Deno
        uses: denoland/setup-deno@v2
        with:
          deno-version: v2.x

      - name: Check
        run: deno task check

      - name: Build step
        run: deno task build

      - name: Upload to Deno Deploy
        uses: denoland/deployctl@v1
        with:
          project: "{st.project}"
          entrypoint: "main.ts"
          root: "."
"""


def _kv_docs() -> str:
    return """Transactions | Deno Docs
Skip to main content
Deno KV / Manual / Transactions

TRANSACTIONS

Deno KV is strongly consistent within a region, and a group of writes can be committed as one
unit with kv.atomic(). An atomic operation collects checks and mutations, and commit() applies
all of them or none of them.

CHECKS

A check names a key and the versionstamp you expect it to have. Every value in the store carries
a versionstamp that changes whenever the key is written; a key that does not exist has the
versionstamp null. If any check does not match at commit time, nothing is written and commit()
resolves to { ok: false }. Read a key, compute the new value from what you read, then commit the
write together with a check on the entry you read: this is optimistic concurrency control, and
the usual pattern is to retry the whole read-check-write sequence in a loop until it succeeds.

  const entry = await kv.get(["balance", id]);
  const res = await kv.atomic()
    .check(entry)
    .set(["balance", id], entry.value - amount)
    .commit();

MUTATIONS

set and delete write or remove a key. sum, min and max operate on Deno.KvU64 values and are
applied by the database itself: sum adds its operand to the stored value (wrapping at 2^64),
min and max keep the smaller or larger of the two. These mutations never fail on their own
and do not look at the current value first, so they cannot express a condition such as an
upper limit; pair them with a check if the write must depend on what is stored.

QUEUES AND EXPIRY

enqueue can be part of an atomic operation, so a message is only delivered if the rest of the
transaction commits. Values can be written with an expireIn option; expiry is best effort.

Last updated on Feb 3, 2026
Edit this page
"""


# --- output of the commands --------------------------------------------------------------------


def _test_run(
    st: Story, names: Sequence[tuple[str, str]], failures: Sequence[tuple[str, str]]
) -> tuple[str, str]:
    """`deno task test` as it prints: the checked modules, the tests per module with their
    verdicts, the ERRORS and FAILURES blocks, the summary line. Returns (output, summary)."""
    cart = [
        "priceCart sums integer cents",
        "priceCart rejects a negative quantity",
        "priceCart applies the dozen price",
        "priceCart keeps unknown skus out",
        "cartTotalCents follows the cart signal",
        "priceCart rounds the half-dozen price down",
        "priceCart treats an empty cart as zero",
    ]
    holds = [
        "releaseStaleHolds frees unpaid orders past the hold",
        "releaseStaleHolds leaves paid orders alone",
        "releaseStaleHolds is idempotent",
        "releaseStaleHolds logs one line per release",
        "releaseStaleHolds skips orders created this minute",
    ]
    n_cart, n_holds = st.cart_tests, st.holds_tests
    modules = [
        ("./lib/cart_test.ts", [(n, "ok") for n in cart[:n_cart]]),
        ("./lib/holds_test.ts", [(n, "ok") for n in holds[:n_holds]]),
        ("./lib/slots_test.ts", list(names)),
    ]
    rng = random.Random(f"{st.commit}-{len(names)}-{len(failures)}")
    out = [f"Task test {_TEST_TASK_ENV}"]
    out += [f"Check file://{st.home}/{m[2:]}" for m, _ in modules]
    passed = failed = 0
    for module, tests in modules:
        out.append(f"running {len(tests)} tests from {module}")
        for name, verdict in tests:
            ms = rng.randint(0, 9)
            if verdict == "ok":
                passed += 1
                out.append(f"{name} ... ok ({ms}ms)")
            else:
                failed += 1
                out.append(f"{name} ... FAILED ({ms}ms)")
    took = rng.randint(120, 480)
    if failures:
        out += ["", " ERRORS ", ""]
        for name, body in failures:
            line = 20 + 7 * [n for n, _ in names].index(name)
            out += [f"{name} => ./lib/slots_test.ts:{line}:6", body, ""]
        out += [" FAILURES ", ""]
        for name, _ in failures:
            line = 20 + 7 * [n for n, _ in names].index(name)
            out.append(f"{name} => ./lib/slots_test.ts:{line}:6")
        summary = f"FAILED | {passed} passed | {failed} failed"
        out += ["", f"{summary} ({took}ms)", "", "error: Test failed"]
    else:
        summary = f"ok | {passed} passed | {failed} failed"
        out += ["", f"{summary} ({took}ms)"]
    return "\n".join(out) + "\n", summary


def _assert_diff(st: Story, actual: str, expected: str, line: int) -> str:
    return f"""error: AssertionError: Values are not equal.


    [Diff] Actual / Expected


-   {actual}
+   {expected}

  throw new AssertionError(message);
        ^
    at assertEquals (https://jsr.io/@std/assert/1.0.13/equals.ts:64:9)
    at file://{st.home}/lib/slots_test.ts:{line}:3"""


# --- filler -------------------------------------------------------------------------------------

_FILLER_WORDS = (
    "ledger", "invoice", "shipment", "courier", "parcel", "tariff", "route", "depot",
    "manifest", "carrier", "account", "region", "quota", "billing", "report", "batch",
    "cursor", "window", "profile", "payload", "schema", "record", "entry", "cache", "filter",
)  # fmt: skip


def _component(rng: random.Random, lines: int) -> str:
    """A Preact component file made of filler words."""
    out: list[str] = [
        'import { useSignal } from "@preact/signals";',
        'import type { ComponentChildren } from "preact";',
        "",
    ]
    while len(out) < lines:
        a, b = rng.sample(_FILLER_WORDS, 2)
        name = camel(f"{a}_{b}")
        out += [
            f"interface {name}Props {{",
            f"  {a}: {{ id: string; {b}: string }}[];",
            "  children?: ComponentChildren;",
            "}",
            "",
            f"export function {name}({{ {a}, children }}: {name}Props) {{",
            "  const open = useSignal<string | null>(null);",
            f"  const shown = {a}.filter((x) => x.{b} !== open.value);",
            "  return (",
            f'    <section class="{a}-{b}">',
            "      {shown.map((x) => (",
            '        <button key={x.id} type="button" onClick={() => (open.value = x.id)}>',
            f"          {{x.{b}}}",
            "        </button>",
            "      ))}",
            "      {children}",
            "    </section>",
            "  );",
            "}",
            "",
        ]
    return "\n".join(out[:lines]) + "\n"


def _ts_module(rng: random.Random, lines: int) -> str:
    """A TypeScript helper module made of filler words."""
    out: list[str] = []
    while len(out) < lines:
        a, b, c = rng.sample(_FILLER_WORDS, 3)
        kind = camel(a)
        out += [
            f"export interface {kind}{camel(b)}Row {{",
            "  id: string;",
            f"  {a}: string;",
            f"  {b}: number;",
            "}",
            "",
            f"export function {lower_camel(f'{a}_{b}')}("
            f"rows: {kind}{camel(b)}Row[], {c}?: string) {{",
            f'  const wanted = {c} ?? "{rng.choice(_FILLER_WORDS)}";',
            f"  return rows.filter((x) => x.{a} === wanted).sort((p, q) => p.{b} - q.{b});",
            "}",
            "",
        ]
    return "\n".join(out[:lines]) + "\n"


def _git_log(rng: random.Random, lines: int) -> str:
    verbs = ("Tweak", "Fix", "Tidy", "Move", "Rename", "Split", "Inline", "Drop unused")
    out = []
    for _ in range(lines):
        a, b = rng.sample(_FILLER_WORDS, 2)
        out.append(f"{hexid(rng)} {rng.choice(verbs)} {a} {b} helper")
    return "\n".join(out) + "\n"


def _numbered(content: str, start: int = 1) -> str:
    """`withLineNumbers`: every line of the file, `N: ` before it."""
    return "\n".join(f"{start + i}: {line}" for i, line in enumerate(content.split("\n")))


# --- the session -------------------------------------------------------------------------------


class _Octo:
    """A session as Octofriend's standard (OpenAI chat) compiler hands it to the model."""

    def __init__(self, seed: int, filler_chars: int) -> None:
        self.rng = random.Random(seed)
        self.frng = random.Random(seed * 7919 + 17)
        self.st = _draw(self.rng)
        self.s = Session(rng=self.rng, system=_system(self.st))
        self.errors: set[str] = set()
        self.reads: list[tuple[int, str]] = []
        self.filler_left = filler_chars
        self.filler_slots = 7
        self.filler_paths: list[str] = []

    # messages
    def user(self, text: str) -> None:
        self.s.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})

    def say(self, text: str) -> None:
        self.s.messages.append({"role": "assistant", "content": text})

    def _call_id(self, rng: random.Random) -> str:
        return "call_" + "".join(rng.choice(_ALNUM) for _ in range(24))

    def turn(
        self,
        text: str,
        calls: Sequence[tuple[str, dict[str, Any], str, str]],
        *,
        filler: bool = False,
    ) -> None:
        """One assistant turn calling `calls` — (tool, arguments, result, how): how is "ok",
        "error" (the tool failed when run), "invalid" (its validation refused it) or "skip"
        (the user rejected it) — and the tool messages answering them, in order."""
        assert text.strip(), "Octofriend explains before it calls a tool"
        rng = self.frng if filler else self.rng
        ids = [self._call_id(rng) for _ in calls]
        self.s.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    for call_id, (name, args, _, _) in zip(ids, calls, strict=True)
                ],
            }
        )
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        for call_id, (name, args, output, how) in zip(ids, calls, strict=True):
            result = output
            if how == "error":
                result = f"Error: <tool-runtime-error>{output}</tool-runtime-error>"
            elif how == "invalid":
                result = (
                    f"Error from tool call validation: <tool-runtime-error>{output}"
                    "</tool-runtime-error>"
                )
            elif how == "skip":
                result = (
                    "<tool-runtime-error>Tool was skipped and didn't run. The reason for "
                    f"skipping the tool was:\n{REJECTED}</tool-runtime-error>"
                )
            if how != "ok":
                self.errors.add(call_id)
            self.s.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": [{"type": "text", "text": result}],
                }
            )
            if filler:
                self.s.filler_at.add(len(self.s.messages) - 1)
            if name == "read" and how == "ok":
                self.reads.append((len(self.s.messages) - 1, args["filePath"]))

    # tool shapes
    @staticmethod
    def read(path: str, content: str) -> tuple[str, dict[str, Any], str, str]:
        return ("read", {"filePath": path}, _numbered(content), "ok")

    @staticmethod
    def edit(path: str, search: str, replace: str) -> tuple[str, dict[str, Any], str, str]:
        args = {"filePath": path, "search": search, "replace": replace}
        return ("edit", args, f"{path} was updated successfully.", "ok")

    @staticmethod
    def edit_miss(path: str, search: str, replace: str) -> tuple[str, dict[str, Any], str, str]:
        args = {"filePath": path, "search": search, "replace": replace}
        message = (
            f"Could not find search string in file {path}: {search}\n"
            "This is likely an error in your formatting. The search string must EXACTLY match, "
            "including\nwhitespace and punctuation."
        )
        return ("edit", args, message, "invalid")

    @staticmethod
    def create(path: str, content: str) -> tuple[str, dict[str, Any], str, str]:
        args = {"filePath": path, "content": content}
        return ("create", args, f"{path} was updated successfully.", "ok")

    @staticmethod
    def rewrite(path: str, text: str) -> tuple[str, dict[str, Any], str, str]:
        return (
            "rewrite",
            {"filePath": path, "text": text},
            f"{path} was updated successfully.",
            "ok",
        )

    @staticmethod
    def shell(
        cmd: str, output: str, *, code: int = 0, timeout: int = 30000
    ) -> tuple[str, dict[str, Any], str, str]:
        args = {"timeout": timeout, "cmd": cmd}
        if code:
            return ("shell", args, f"Command exited with code: {code}\noutput: {output}", "error")
        return ("shell", args, output, "ok")

    # filler
    def filler(self) -> None:
        """Reads of the site's other files (or its history), sized to bring the session to its
        length: the budget left is shared out over the slots still to come."""
        if self.filler_slots <= 0:
            return
        share = self.filler_left // self.filler_slots
        self.filler_slots -= 1
        rng = self.frng
        while share > 1500:
            kind = rng.choice(("component", "component", "module", "module", "log"))
            lines = min(150, max(25, int(share / 34)))
            if kind == "log":
                count = min(120, max(20, int(share / 52)))
                text = rng.choice(
                    (
                        "Skimming recent history to see how changes here are usually split.",
                        "Quick look at the recent commits for context.",
                    )
                )
                call = self.shell(f"git log --oneline -n {count}", _git_log(rng, count))
            else:
                if kind == "component":
                    path = f"components/{camel('_'.join(rng.sample(_FILLER_WORDS, 2)))}.tsx"
                    content = _component(rng, lines)
                    texts = (
                        f"Looking at {path} to see how the existing components are put together.",
                        f"Reading {path}; the checkout page renders it.",
                        f"{path} next, so the new markup matches the rest of the site.",
                    )
                else:
                    path = f"lib/{'_'.join(rng.sample(_FILLER_WORDS, 2))}.ts"
                    content = _ts_module(rng, lines)
                    texts = (
                        f"Checking {path} for helpers I can reuse.",
                        f"Reading {path} too: it is imported from the routes I'll touch.",
                        f"A look at {path} before going further.",
                    )
                if path in self.filler_paths:
                    continue
                self.filler_paths.append(path)
                text = rng.choice(texts)
                call = self.read(path, content)
            before = self.s.chars
            self.turn(text, [call], filler=True)
            used = self.s.chars - before
            share -= used
            self.filler_left -= used

    def seen_reads(self) -> None:
        """`optimizeFiles`: of the reads of one path, all but the last answer "File was
        successfully read."."""
        last: dict[str, int] = {}
        for index, path in self.reads:
            last[path] = index
        for index, path in self.reads:
            if last[path] != index:
                self.s.messages[index]["content"] = [{"type": "text", "text": SEEN}]


def _tell(seed: int, filler_chars: int) -> tuple[_Octo, list[str]]:
    o = _Octo(seed, filler_chars)
    st, s, pick = o.st, o.s, o.rng.choice
    s1, s2, s3 = st.slots
    c1, c2 = st.caps
    run_order: list[str] = []

    # --- the ask ------------------------------------------------------------------------------
    o.user(
        pick(
            (
                f"ok so the shop wants pickup slots on pre-orders. right now checkout only picks "
                f"a day and we cap the whole day, which means 30 people show up at 8am. I want "
                f"{s1}-minute slots from opening ({st.open_at}) until last pickup at "
                f"{st.last_pickup}, max {c1} orders per slot, and the customer picks one at "
                f"checkout. a few ground rules: every time you show or store is shop time, "
                f"{st.tz}, not UTC and not whatever the browser says. don't touch anything in "
                f"routes/admin/, {st.owner} is mid-rewrite in there. and we stay on Fresh 1.7, "
                f"no Fresh 2 upgrade sneaking in with this.",
                f"New feature for the pre-order site: pickup slots. Today the customer chooses a "
                f"day and there's one cap for the whole day; the counter gets swamped first thing. "
                f"Make it {s1}-minute slots, {st.open_at} to {st.last_pickup} (last pickup), and "
                f"{c1} orders per slot tops. Things to respect: shop time is {st.tz} and that's "
                f"the only clock that matters for slots. routes/admin/ belongs to {st.owner} right "
                f"now, hands off. And this ships on Fresh 1.7 — nobody is upgrading to Fresh 2 "
                f"in this branch.",
            )
        )
    )
    o.turn(
        f"Hi {st.name}. I'll start with the order route and what it uses for the current daily "
        "cap, plus deno.json for the tasks and import map.",
        [
            o.read("routes/api/orders.ts", _orders_ts(st)),
            o.read("lib/legacy_capacity.ts", _legacy_ts()),
        ],
    )
    o.turn(
        "And the config: tasks, imports and the unstable flags.",
        [o.read("deno.json", _deno_json(_TEST_TASK))],
    )
    o.turn(
        "Listing lib/ to see what else is there.",
        [
            (
                "list",
                {"dirPath": "lib"},
                "\n".join(
                    json.dumps({"entry": e, "isDirectory": False}, separators=(",", ":"))
                    for e in (
                        "cart.ts",
                        "cart_state.ts",
                        "cart_test.ts",
                        "holds.ts",
                        "holds_test.ts",
                        "kv.ts",
                        "legacy_capacity.ts",
                        "mail.ts",
                        "money.ts",
                    )
                ),
                "ok",
            )
        ],
    )
    o.filler()
    o.say(
        pick(
            (
                "Here's the plan, in order:\n"
                "1. lib/slots.ts: slot generation in shop time plus booking against the cap, "
                "with tests next to it.\n"
                "2. POST /api/orders books a slot where it used to check the daily cap.\n"
                "3. Slot picker on the checkout form, fed by a small GET endpoint.\n"
                "4. A reminder email the evening before pickup.\n"
                "5. Backfill: existing orders for upcoming days get a slot so the counts start "
                "right.\n\n"
                "For the cap itself: one Deno.KvU64 counter per slot, bumped with "
                "kv.atomic().sum(), and the KvU64 counter is read before booking to refuse a "
                "full slot.",
                "Plan:\n"
                "- lib/slots.ts for slot times (shop zone) and booking, plus lib/slots_test.ts\n"
                "- book a slot in POST /api/orders where the daily cap check is today\n"
                "- slot picker in the checkout island, from a GET /api/slots endpoint\n"
                "- reminder email the evening before pickup\n"
                "- backfill existing upcoming orders into slots\n\n"
                "Counting goes in a KvU64 counter per slot (Deno.KvU64 + atomic().sum()); "
                "booking reads it first and says no once it's at the cap.",
            )
        )
    )
    o.turn(
        "Creating lib/slots.ts with the slot maths and the counter-based booking.",
        [o.create("lib/slots.ts", _slots_counter(st))],
    )
    o.turn(
        "Tests for it, with an in-memory KV per test.",
        [o.create("lib/slots_test.ts", _slots_test(st))],
    )
    o.turn(
        "Now the order route: swap the daily cap check for a slot booking.",
        [
            o.edit("routes/api/orders.ts", _ORDERS_IMPORT_OLD, _ORDERS_IMPORT_NEW),
        ],
    )
    o.turn(
        "…and the check itself.",
        [o.edit("routes/api/orders.ts", _ORDERS_CHECK_OLD, _ORDERS_CHECK_NEW)],
    )
    ts_error = (
        f"Check file://{st.home}/routes/api/orders.ts\n"
        "TS2345 [ERROR]: Argument of type 'FormDataEntryValue | null' is not assignable to "
        "parameter of type 'string'.\n"
        "  Type 'null' is not assignable to type 'string'.\n"
        "    if (!(await bookSlot(kv, day, slot, qty))) {\n"
        "                                  ~~~~\n"
        f"    at file://{st.home}/routes/api/orders.ts:25:35\n\n"
        "error: Type checking failed.\n"
    )
    o.turn(
        "Type-checking the route before going on.",
        [o.shell("deno check routes/api/orders.ts", ts_error, code=1, timeout=60000)],
    )
    o.turn(
        pick(
            (
                "form.get() can hand back null or a File, and I passed it straight through. "
                "Validating it as HH:MM first; the qty argument was pointless too (one order "
                "is one place), so it goes.",
                "Right, `slot` is FormDataEntryValue | null there. I'll narrow it to an HH:MM "
                "string and 400 otherwise, and drop the qty juggling: an order takes one place.",
            )
        ),
        [o.edit("routes/api/orders.ts", _ORDERS_CHECK_NEW, _ORDERS_CHECK_FIXED)],
    )
    o.turn(
        "Again.",
        [
            o.shell(
                "deno check routes/api/orders.ts",
                f"Check file://{st.home}/routes/api/orders.ts\n",
                timeout=60000,
            )
        ],
    )
    run_order.append("check")
    s.fact(
        "error_resolved",
        "deno check failed with TS2345 on the slot form value passed to bookSlot; fixed by "
        "validating it as an HH:MM string",
        ["TS2345"],
        required=False,
    )
    o.filler()

    # --- the deploy project ---------------------------------------------------------------
    o.user(
        pick(
            (
                "while you're at it — what's our Deno Deploy project called? I need the exact "
                "name for a DNS ticket and I never remember it",
                "side question: can you find the exact Deno Deploy project name this site "
                "deploys to? the hosting person is asking",
            )
        )
    )
    o.turn(
        "The deploy workflow should name it; finding the workflow files first.",
        [
            (
                "glob",
                {"path": ".github", "includeName": "*.yml"},
                "workflows/check.yml\nworkflows/deploy.yml",
                "ok",
            )
        ],
    )
    o.turn(
        "Reading the deploy one.",
        [o.read(".github/workflows/deploy.yml", _deploy_yml(st))],
    )
    o.say(
        pick(
            (
                f"It's `{st.project}` — the deployctl step in .github/workflows/deploy.yml.",
                f"`{st.project}`. That's the `project:` of the deployctl step in "
                ".github/workflows/deploy.yml.",
            )
        )
    )
    s.fact(
        "identifier",
        "the Deno Deploy project the site deploys to (asked for by the user)",
        [st.project],
    )

    # --- first test run: permissions, then the counter overshoots -------------------------
    not_capable = (
        f"Task test {_TEST_TASK}\n"
        f"Check file://{st.home}/lib/cart_test.ts\n"
        f"Check file://{st.home}/lib/holds_test.ts\n"
        f"Check file://{st.home}/lib/slots_test.ts\n"
        f'error: Uncaught (in promise) NotCapable: Requires env access to "SHOP_TZ", run '
        "again with the --allow-env flag\n"
        f'const TZ = Deno.env.get("SHOP_TZ") ?? "{st.tz}";\n'
        "                     ^\n"
        "    at Object.getEnv [as get] (ext:deno_os/30_os.js:124:10)\n"
        f"    at file://{st.home}/lib/slots.ts:9:22\n"
    )
    o.turn(
        "Running the test task.",
        [o.shell("deno task test", not_capable, code=1, timeout=120000)],
    )
    o.turn(
        pick(
            (
                "The test task has no env permission and slots.ts reads SHOP_TZ. Granting "
                "that one variable only.",
                "Deno's sandbox: the test task can't read SHOP_TZ. Adding --allow-env=SHOP_TZ "
                "to it, nothing broader.",
            )
        ),
        [o.edit("deno.json", f'"test": "{_TEST_TASK}"', f'"test": "{_TEST_TASK_ENV}"')],
    )
    s.fact(
        "error_resolved",
        "the test task failed with NotCapable (no env access to SHOP_TZ); fixed with "
        "--allow-env=SHOP_TZ in deno.json",
        ["NotCapable"],
        required=False,
    )
    slot_tests = [
        ("slotsForDay starts at opening time", "ok"),
        ("slotsForDay stops at the last pickup", "ok"),
        ("bookSlot refuses a full slot", "ok"),
        ("bookSlot never overbooks under concurrent requests", "FAILED"),
        ("remainingForDay reports what is left per slot", "FAILED"),
    ]
    run1, sum1 = _test_run(
        st,
        slot_tests,
        [
            (
                "bookSlot never overbooks under concurrent requests",
                _assert_diff(st, str(c1 + 3), str(c1), 44),
            ),
            (
                "remainingForDay reports what is left per slot",
                _assert_diff(st, "NaN", str(c1 - 1), 51),
            ),
        ],
    )
    o.turn("And again.", [o.shell("deno task test", run1, code=1, timeout=120000)])
    run_order.append(sum1)
    o.turn(
        "Before I change the booking I want to be sure what atomic sum and check can and "
        "can't do; reading Deno's page on KV transactions.",
        [
            (
                "fetch",
                {
                    "url": "https://docs.deno.com/deploy/kv/manual/transactions",
                    "includeMarkup": False,
                },
                _kv_docs(),
                "ok",
            )
        ],
    )
    o.say(
        pick(
            (
                "That settles it: the KvU64 counter can't work here. sum() always adds; the "
                "database applies it without looking at the value, so my read-then-sum lets "
                f"{c1 + 3} concurrent checkouts all see a free place. (The NaN is the same design: "
                "an unread counter is null.) New booking: each slot is a record { booked }, "
                "read with its versionstamp; the write commits only under a check() on that "
                "versionstamp, and a conflict goes round the loop again, up to 8 times.",
                "The docs confirm what the test shows. sum() is applied blind, so a KvU64 counter "
                "has no way to refuse the place past the cap — every concurrent request read the "
                "same count and added to it. I'm rewriting lib/slots.ts around a plain "
                "{ booked } record per slot: read it, and commit booked + 1 with a check() on "
                "the versionstamp I read; if someone got in first the commit fails and it "
                "retries (8 attempts max).",
            )
        )
    )
    s.fact(
        "decision",
        "slot capacity is enforced by a versionstamp check-and-set loop on a { booked } record "
        "per slot (the KvU64 counter bumped with atomic sum was dropped: sum cannot refuse)",
        ["versionstamp"],
        stale=["KvU64 counter"],
    )
    o.turn(
        "Rewriting the file whole, since most of the booking half changes.",
        [o.rewrite("lib/slots.ts", _slots_versioned(st))],
    )
    slot_tests = [(name, "ok") for name, _ in slot_tests]
    run2, sum2 = _test_run(st, slot_tests, [])
    o.turn("Tests.", [o.shell("deno task test", run2, timeout=120000)])
    run_order.append(sum2)
    o.filler()

    # --- the cap changes -----------------------------------------------------------------
    o.user(
        pick(
            (
                f"talked to the counter staff. {c1} is too tight for saturday mornings — they "
                f"can handle {c2} orders per slot",
                f"update from the shop floor: {c1} per slot is too few, they say {c2} orders "
                f"per slot is fine even on the busy days",
            )
        )
    )
    s.fact(
        "changed_value",
        "orders per pickup slot (the slot cap)",
        [f"{c2} orders per slot"],
        stale=[f"{c1} orders per slot"],
    )
    o.turn(
        f"Setting SLOT_CAPACITY to {c2}.",
        [
            o.edit_miss(
                "lib/slots.ts",
                f"export const SLOT_CAPACITY = {c1};\n",
                f"export const SLOT_CAPACITY = {c2};\n",
            )
        ],
    )
    o.turn(
        "The line carries a comment now; reading the file so I match it exactly.",
        [o.read("lib/slots.ts", _slots_versioned(st))],
    )
    o.turn(
        "Trying again with the comment included.",
        [
            o.edit(
                "lib/slots.ts",
                f"export const SLOT_CAPACITY = {c1}; // per slot, whatever the basket size",
                f"export const SLOT_CAPACITY = {c2}; // per slot, whatever the basket size",
            )
        ],
    )

    # --- mail through the queue -------------------------------------------------------------
    o.turn(
        "Next the confirmation mail, which checkout awaits today. Looking at lib/mail.ts and "
        "main.ts.",
        [o.read("lib/mail.ts", _mail_ts(st)), o.read("main.ts", _main_ts())],
    )
    o.say(
        pick(
            (
                "Checkout should stop waiting on Resend: the route will kv.enqueue the "
                "confirmation and main.ts gets a kv.listenQueue handler that does the actual "
                "send. KV redelivers a message whose handler throws, so a Resend hiccup is "
                "retried for free.",
                "Mail goes through KV's queue from here on: POST /api/orders does kv.enqueue(…) "
                "and returns, and a kv.listenQueue handler in main.ts sends it. A thrown "
                "error in the handler means KV delivers the message again later.",
            )
        )
    )
    s.fact(
        "decision",
        "the confirmation mail is sent from a kv.listenQueue handler in main.ts; the order "
        "route only enqueues it",
        ["listenQueue"],
    )
    o.turn(
        "A type guard in lib/mail.ts for the queue message…",
        [o.edit("lib/mail.ts", _MAIL_GUARD_OLD, _MAIL_GUARD_NEW)],
    )
    o.turn(
        "…the listener in main.ts…",
        [
            o.edit("main.ts", _MAIN_IMPORT_OLD, _MAIN_IMPORT_NEW),
        ],
    )
    o.turn("…registered after the cron.", [o.edit("main.ts", _MAIN_OLD, _MAIN_NEW)])
    o.turn(
        "Re-reading the order route before touching it again.",
        [
            o.read(
                "routes/api/orders.ts",
                _orders_ts(st)
                .replace(_ORDERS_IMPORT_OLD, _ORDERS_IMPORT_NEW)
                .replace(_ORDERS_CHECK_OLD, _ORDERS_CHECK_FIXED),
            )
        ],
    )
    o.turn(
        "And the route enqueues.",
        [o.edit("routes/api/orders.ts", _ORDERS_MAIL_OLD, _ORDERS_MAIL_NEW)],
    )
    o.filler()

    # --- the picker and its endpoint --------------------------------------------------------
    o.turn(
        "On to the checkout island.",
        [o.read("islands/CheckoutForm.tsx", _checkout_tsx(st))],
    )
    o.turn(
        "The endpoint the picker will call: GET /api/slots?day=YYYY-MM-DD.",
        [o.create("routes/api/slots.ts", _slots_route())],
    )
    o.turn(
        "Fresh 1.7 needs the manifest regenerated for a new route.",
        [
            o.shell(
                "deno task manifest",
                f"Task manifest deno task cli manifest $(pwd)\n"
                f"Task cli echo \"import '\\$fresh/src/dev/cli.ts'\" | deno run --unstable -A - "
                f"manifest {st.home}\n"
                "The manifest has been generated for 14 routes and 4 islands.\n",
                timeout=60000,
            )
        ],
    )
    o.turn(
        "Island state: the chosen slot and the list for the day.",
        [o.edit("islands/CheckoutForm.tsx", _CHECKOUT_STATE_OLD, _CHECKOUT_STATE_NEW)],
    )
    o.turn(
        "Sent with the form…",
        [o.edit("islands/CheckoutForm.tsx", _CHECKOUT_SET_OLD, _CHECKOUT_SET_NEW)],
    )
    o.turn(
        "…and the select, full slots disabled.",
        [o.edit("islands/CheckoutForm.tsx", _CHECKOUT_SELECT_OLD, _CHECKOUT_SELECT_NEW)],
    )
    s.fact(
        "todo",
        "slot picker on the checkout form (done)",
        ["slot picker"],
        required=False,
    )
    reminder = (
        'import { kv } from "./kv.ts";\n\n'
        "// Evening before pickup: one reminder per order still unpaid or paid-not-collected.\n"
        'Deno.cron("pickup reminders", "0 18 * * *", async () => {\n'
        "  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);\n"
        '  for await (const { value: id } of kv.list<string>({ prefix: ["orders_by_day", '
        "tomorrow] })) {\n"
        '    await kv.enqueue({ kind: "pickup-reminder", orderId: id });\n'
        "  }\n"
        "});\n"
    )
    o.turn(
        "Picker done. Next on the list, the evening-before reminder: a cron that enqueues one "
        "mail per order for tomorrow.",
        [("create", {"filePath": "lib/reminders.ts", "content": reminder}, "", "skip")],
    )
    o.user(
        pick(
            (
                "no, leave the reminder out entirely. the shop texts their regulars by hand "
                "and people like that. cross it off",
                "nope — no reminder mail. they phone the regulars themselves and want to keep "
                "it that way, so that item is gone",
            )
        )
    )
    s.fact(
        "todo",
        "evening-before reminder email (dropped by the user)",
        ["reminder"],
        required=False,
    )
    o.say(
        pick(
            (
                "Fine by me, nothing was written. What's left after the picker: the backfill "
                "of upcoming orders.",
                "Okay, the reminder is off the list and no file was created. Remaining: the "
                "backfill for orders already placed.",
            )
        )
    )
    s.fact(
        "todo",
        "backfill existing upcoming orders into slots (still open)",
        ["backfill"],
    )
    o.filler()

    # --- first slot-length change -----------------------------------------------------------
    o.user(
        pick(
            (
                f"hm, {s1} minutes makes an odd grid on the picker once you see it. try "
                f"{s2}-minute slots",
                f"the owner looked at the picker mockup and wants {s2}-minute slots, {s1} feels "
                "off to her",
            )
        )
    )
    o.turn(
        f"SLOT_MINUTES to {s2}.",
        [
            o.edit(
                "lib/slots.ts",
                f"export const SLOT_MINUTES = {s1};",
                f"export const SLOT_MINUTES = {s2};",
            )
        ],
    )
    o.turn(
        "A test that the step follows the constant, so the next change can't drift.",
        [
            o.edit(
                "lib/slots_test.ts",
                'const DAY = "2026-05-14";\n',
                'const DAY = "2026-05-14";\n' + _TEST_STEPS,
            )
        ],
    )
    o.turn(
        "The import it needs.",
        [o.edit("lib/slots_test.ts", "  SLOT_CAPACITY,\n", "  SLOT_CAPACITY,\n  SLOT_MINUTES,\n")],
    )
    slot_tests = [*slot_tests, ("slotsForDay steps by SLOT_MINUTES", "ok")]
    run3, sum3 = _test_run(st, slot_tests, [])
    o.turn("Running the suite.", [o.shell("deno task test", run3, timeout=120000)])
    run_order.append(sum3)
    o.filler()

    # --- the order that slipped past the cap --------------------------------------------------
    o.user(
        pick(
            (
                f"different thing: on {st.sold_day} we sold out but one more order got through "
                "anyway. can you dig its order id out of the logs? customer service wants to "
                "email that person",
                f"can you find the order that went past the daily cap for {st.sold_day}? it's "
                "somewhere in logs/, I need the id for an apology email",
            )
        )
    )
    o.turn(
        "The old cap logs a warning per day near the limit; searching logs/ for it.",
        [
            (
                "grep",
                {"pattern": "daily cap", "path": "logs"},
                f"logs/app-{st.log_day}.log:3120:{st.log_day}T07:58:40Z WARN capacity "
                f"day={st.sold_day} count=79 cap=80 (near daily cap)\n"
                f"logs/app-{st.log_day}.log:3131:{st.log_day}T07:59:02Z WARN capacity "
                f"day={st.sold_day} count=79 cap=80 (near daily cap)",
                "ok",
            )
        ],
    )
    o.turn(
        "Two requests saw count=79 within a second of each other — the race. The lines "
        "around them should show both orders.",
        [
            (
                "partial-read",
                {"filePath": f"logs/app-{st.log_day}.log", "offset": 3116, "limit": 22},
                _log_window(o.rng, st),
                "ok",
            )
        ],
    )
    o.say(
        pick(
            (
                f"It's `{st.order}`. Both checkouts counted 79 at 07:59; {st.other_order} was "
                f"the 80th, and {st.order} was written second, as the 81st.",
                f"`{st.order}` — two requests read count=79 in the same second, "
                f"{st.other_order} committed first (80th) and {st.order} landed as the 81st.",
            )
        )
    )
    s.fact(
        "identifier",
        f"the order that got past the old daily cap for {st.sold_day} (asked for by the user)",
        [st.order],
    )

    # --- the old cap goes ------------------------------------------------------------------
    o.turn(
        "Nothing imports lib/legacy_capacity.ts any more; checking before removing it.",
        [("grep", {"pattern": "legacy_capacity"}, "", "ok")],
    )
    o.turn("No users. Removing it.", [o.shell("rm lib/legacy_capacity.ts", "")])
    s.fact("file_deleted", "lib/legacy_capacity.ts (the old daily cap)", ["lib/legacy_capacity.ts"])
    lint = (
        "Task check deno fmt --check && deno lint && deno check **/*.ts && deno check **/*.tsx\n"
        "Checked 47 files\n"
        "error[no-unused-vars]: `slotsLeft` is never used\n"
        f"  --> {st.home}/islands/CheckoutForm.tsx:24:9\n"
        "   | \n"
        "24 |   const slotsLeft = slots.value.filter((s) => s.left > 0).length;\n"
        "   |         ^^^^^^^^^\n"
        "   = hint: If this is intentional, prefix it with an underscore like `_slotsLeft`\n\n"
        "  docs: https://docs.deno.com/lint/rules/no-unused-vars\n\n\n"
        "Found 1 problem\n"
        "Checked 45 files\n"
    )
    o.turn(
        "Running the CI check task.",
        [o.shell("deno task check", lint, code=1, timeout=180000)],
    )
    o.turn(
        "Leftover from an idea I didn't use; deleting the line.",
        [o.edit("islands/CheckoutForm.tsx", _CHECKOUT_LINT_OLD, "")],
    )
    o.turn(
        "Check again.",
        [
            o.shell(
                "deno task check",
                "Task check deno fmt --check && deno lint && deno check **/*.ts && deno check "
                "**/*.tsx\nChecked 47 files\nChecked 45 files\n"
                + "".join(
                    f"Check file://{st.home}/{p}\n"
                    for p in (
                        "dev.ts",
                        "fresh.config.ts",
                        "fresh.gen.ts",
                        "lib/slots.ts",
                        "main.ts",
                        "routes/api/orders.ts",
                        "routes/api/slots.ts",
                    )
                ),
                timeout=180000,
            )
        ],
    )
    s.fact(
        "error_resolved",
        "deno lint no-unused-vars on `slotsLeft` in islands/CheckoutForm.tsx; line removed",
        ["no-unused-vars"],
        required=False,
    )
    o.filler()

    # --- a late rule ---------------------------------------------------------------------------
    o.user(
        pick(
            (
                "oh and a rule I should have said at the start: no customer email addresses in "
                "the logs, ever. redact them. I'm fairly sure mail.ts prints them",
                "one more ground rule, late, sorry: customer email addresses must never end up "
                "in our logs. mask them if you need something there",
            )
        )
    )
    s.fact(
        "constraint",
        "no customer email addresses in the logs (added late)",
        ["customer email"],
    )
    o.turn(
        "Looking for every log call that could print an address.",
        [
            (
                "grep",
                {"pattern": "console\\.(log|warn|error)", "path": "lib"},
                "lib/holds.ts:31:    console.log(`holds: released ${id} after ${mins}m`);\n"
                "lib/mail.ts:29:  console.log(`mail: confirmation for ${mail.orderId} to "
                "${mail.to}`);\n"
                "lib/mail.ts:44:    console.error(`mail: resend answered ${res.status} for "
                "${mail.to}`);",
                "ok",
            )
        ],
    )
    o.turn(
        "Only lib/mail.ts, twice. Reading it fresh.",
        [
            o.read(
                "lib/mail.ts",
                _mail_ts(st).replace(_MAIL_GUARD_OLD, _MAIL_GUARD_NEW),
            )
        ],
    )
    o.turn(
        "A redact() helper: first letter and the domain stay, enough to tell two apart.",
        [o.edit("lib/mail.ts", _MAIL_REDACT_OLD, _MAIL_REDACT_NEW)],
    )
    o.turn(
        "The confirmation line uses it…",
        [o.edit("lib/mail.ts", _MAIL_LOG_OLD, _MAIL_LOG_NEW)],
    )
    o.turn(
        "…and the failure line logs the order id, which is all anyone needs there.",
        [o.edit("lib/mail.ts", _MAIL_ERR_OLD, _MAIL_ERR_NEW)],
    )

    # --- the last slot-length change, a late to-do, the DST test ---------------------------
    o.user(
        pick(
            (
                f"final word from the owner on slots: {s3}-minute slots. she's sure this time, "
                "promise",
                f"ugh, sorry. she changed her mind once more and it's {s3}-minute slots. that's "
                "the last one",
            )
        )
    )
    s.fact(
        "changed_value",
        "the length of a pickup slot",
        [f"{s3}-minute slots"],
        stale=[f"{s1}-minute slots", f"{s2}-minute slots"],
    )
    o.turn(
        f"SLOT_MINUTES to {s3}; the step test follows it on its own.",
        [
            o.edit(
                "lib/slots.ts",
                f"export const SLOT_MINUTES = {s2};",
                f"export const SLOT_MINUTES = {s3};",
            )
        ],
    )
    o.user(
        pick(
            (
                "and put this on the list, not for today: the front counter wants a printable "
                "pickup sheet per day, orders grouped by slot",
                "also add to the to-do pile (later, not now): a printable pickup sheet for the "
                "counter, one page per day, grouped by slot",
            )
        )
    )
    s.fact(
        "todo", "a printable pickup sheet per day, grouped by slot (added late)", ["pickup sheet"]
    )
    o.say(
        pick(
            (
                f"Noted for later. Since the shop runs on {st.tz}, I'm adding a test for the "
                "day the clocks go forward before wrapping up, plus one that the day's slot list "
                "is complete.",
                "On the list. Before I finish I want a test over the clock change in the shop's "
                "zone, and one more for remainingForDay.",
            )
        )
    )
    o.turn(
        "Appending the two tests.",
        [
            o.edit(
                "lib/slots_test.ts",
                "  assertEquals(first.left, SLOT_CAPACITY - 1);\n});\n",
                "  assertEquals(first.left, SLOT_CAPACITY - 1);\n});\n" + _test_dst(st),
            )
        ],
    )
    dst_name = "slotsForDay keeps local times across the DST switch"
    slot_tests = [
        *slot_tests,
        (dst_name, "FAILED"),
        ("remainingForDay counts every slot of the day", "ok"),
    ]
    run4, sum4 = _test_run(
        st,
        slot_tests,
        [(dst_name, _assert_diff(st, _plus_hour(st.open_at), st.open_at, 66))],
    )
    o.turn("Full run.", [o.shell("deno task test", run4, code=1, timeout=120000)])
    run_order.append(sum4)
    o.say(
        pick(
            (
                f"The new test fails: on {st.dst_day} the first slot comes out at "
                f"{_plus_hour(st.open_at)}, not {st.open_at}. offsetMinutes() takes the "
                "zone's offset at 00:00 UTC and uses it all day, so once the clocks jump every "
                "slot is an hour off. The fix is computing the offset per slot (or Temporal, "
                "still behind --unstable-temporal). Want me to do it now?",
                f"Caught one: on {st.dst_day} slotsForDay puts the first pickup at "
                f"{_plus_hour(st.open_at)}. The offset is taken once, at 00:00 UTC, before the "
                "clock change. Per-slot offsets fix it; shall I?",
            )
        )
    )
    s.fact(
        "error_open",
        f"the DST test fails: on {st.dst_day} slotsForDay is an hour late because the zone "
        "offset is taken at 00:00 UTC; left open by the user",
        ["across the DST switch"],
    )
    s.fact(
        "test_status",
        "deno task test: the DST test fails, everything else passes",
        [sum4],
        stale=[sum1, sum2, sum3],
    )
    o.user(
        pick(
            (
                "leave it red, we're closed that weekend anyway and I'd rather see it in CI "
                "than forget. commit, push, and open a draft PR",
                "not today. keep the failing test in so CI nags us. commit it all, push the "
                "branch and put up a draft PR",
            )
        )
    )
    o.turn(
        "Branch, stage and commit.",
        [
            o.shell(
                f"git checkout -b {st.branch} && git add -A && git commit -m "
                '"Pickup slots with a per-slot cap"',
                f"Switched to a new branch '{st.branch}'\n"
                f"[{st.branch} {st.commit}] Pickup slots with a per-slot cap\n"
                " 10 files changed, 341 insertions(+), 44 deletions(-)\n"
                " delete mode 100644 lib/legacy_capacity.ts\n"
                " create mode 100644 lib/slots.ts\n"
                " create mode 100644 lib/slots_test.ts\n"
                " create mode 100644 routes/api/slots.ts\n",
            )
        ],
    )
    o.turn(
        "Pushing.",
        [
            o.shell(
                f"git push -u origin {st.branch}",
                "remote: \n"
                f"remote: Create a pull request for '{st.branch}' on GitHub by visiting:\n"
                f"remote:      https://github.com/{st.slug}/web/pull/new/{st.branch}\n"
                "remote: \n"
                f"To github.com:{st.slug}/web.git\n"
                f" * [new branch]      {st.branch} -> {st.branch}\n"
                f"branch '{st.branch}' set up to track 'origin/{st.branch}'.\n",
                timeout=60000,
            )
        ],
    )
    body = (
        "Pickup slots for pre-orders: slot times in shop time, a per-slot cap enforced in KV, "
        "a picker on checkout, confirmation mail off the request path. One test is expected "
        "to fail (clock change), see the thread."
    )
    pr_json = json.dumps(
        {
            "number": st.pr,
            "html_url": f"https://github.com/{st.slug}/web/pull/{st.pr}",
            "state": "open",
            "draft": True,
            "title": "Pickup slots with a per-slot cap",
            "head": {"ref": st.branch},
            "base": {"ref": "main"},
        },
        indent=2,
    )
    o.turn(
        "Opening the draft PR through the GitHub server.",
        [
            (
                "mcp",
                {
                    "server": "github",
                    "tool": "create_pull_request",
                    "arguments": {
                        "owner": st.slug,
                        "repo": "web",
                        "title": "Pickup slots with a per-slot cap",
                        "head": st.branch,
                        "base": "main",
                        "body": body,
                        "draft": "true",
                    },
                },
                pr_json,
                "ok",
            )
        ],
    )
    final = pick(
        (
            f"Draft PR #{st.pr} is up: https://github.com/{st.slug}/web/pull/{st.pr}",
            f"Pushed, and draft PR #{st.pr} is open — "
            f"https://github.com/{st.slug}/web/pull/{st.pr}. CI will show the one red test.",
        )
    )
    o.say(final)
    s.fact("last_message", "the assistant's last words: the draft PR it opened", [f"PR #{st.pr}"])

    # --- constraints and files, stated above ------------------------------------------------
    s.fact("constraint", "all slot times are shop time", [st.tz])
    s.fact("constraint", "routes/admin/ is someone else's: don't touch it", ["routes/admin"])
    s.fact("constraint", "stay on Fresh 1.7, no Fresh 2 upgrade", ["Fresh 1.7"])
    for path, what in (
        ("routes/api/orders.ts", "books a slot, enqueues the mail"),
        ("islands/CheckoutForm.tsx", "the slot picker"),
        ("lib/mail.ts", "queue guard, redacted addresses"),
        ("main.ts", "the kv.listenQueue handler"),
        ("deno.json", "--allow-env=SHOP_TZ for the test task"),
    ):
        s.fact("file_modified", f"{path} ({what})", [path])
    for path, what in (
        ("lib/slots.ts", "slot times and booking"),
        ("lib/slots_test.ts", "its tests"),
        ("routes/api/slots.ts", "GET the slots left for a day"),
    ):
        s.fact("file_created", f"{path} ({what})", [path])
    o.seen_reads()
    return o, run_order


def _log_window(rng: random.Random, st: Story) -> str:
    """Lines 3116-3137 of the day's app log: the two orders that both read count=79."""
    lines = []
    for i in range(22):
        n = 3116 + i
        sec = 30 + i
        if n == 3120:
            text = (
                f"{st.log_day}T07:58:40Z WARN capacity day={st.sold_day} count=79 cap=80 "
                "(near daily cap)"
            )
        elif n == 3131:
            text = (
                f"{st.log_day}T07:59:02Z WARN capacity day={st.sold_day} count=79 cap=80 "
                "(near daily cap)"
            )
        elif n == 3132:
            text = (
                f"{st.log_day}T07:59:02Z INFO orders created {st.other_order} day={st.sold_day} "
                "items=3"
            )
        elif n == 3133:
            text = (
                f"{st.log_day}T07:59:02Z INFO orders created {st.order} day={st.sold_day} items=2"
            )
        else:
            what = rng.choice(
                (
                    f"GET /menu 200 {rng.randint(3, 40)}ms",
                    f"GET /static/app.css 200 {rng.randint(1, 9)}ms",
                    f"POST /api/cart 200 {rng.randint(4, 30)}ms",
                    f"holds: released ord_{_ulid(rng)} after 31m",
                    f"GET /checkout 200 {rng.randint(8, 60)}ms",
                )
            )
            minute = "58" if n < 3125 else "59"
            text = f"{st.log_day}T07:{minute}:{sec % 60:02d}Z INFO {what}"
        lines.append(f"{n}: {text}")
    return f"Showing lines 3116-3137 of 9846 from logs/app-{st.log_day}.log\n" + "\n".join(lines)


def write(seed: int, tokens: int) -> EvalSession:
    """One session of about `tokens` tokens: the story, then as much filler as it needs."""
    target = int(tokens * _JSON_CHARS_PER_TOKEN)
    bare, _ = _tell(seed, 0)
    assert bare.filler_slots == 0, "every filler slot is used"
    story = bare.s.chars + len(json.dumps(bare.s.system))
    told, _ = _tell(seed, max(0, target - story))
    session = finish_session(told.s, family=FAMILY, seed=seed)
    return flag_errors(session, told.errors)


__all__ = ["FAMILY", "write"]
