"""codebuffstory-style: Codebuff's own tool protocol on a Next.js + Prisma app, with a story of
its own (not `story.tell`, not any other family's voice or story).

Codebuff (CodebuffAI/codebuff, read at da0d571, main of 2025-09-06) has the model write its tool
calls inside its reply text, not as provider tool calls: a `<codebuff_tool_call>` element
holding the call as JSON (`JSON.stringify(…, null, 2)`), its name under `cb_tool_name`, and
`"cb_easp": true` last in a call that ends the agent step (`common/src/tools/utils.ts`
getToolCallString; the stop sequence is `"cb_easp"` and the stream parser completes the
element). The backend runs the calls and keeps each result as a `tool` message, which
`convertCbToModelMessages` (`common/src/util/messages.ts`) sends to the model as a *user* text
part `<tool_result>\\n{"toolName", "toolCallId", "output"}\\n</tool_result>` (the JSON output's
value, indented by two); adjacent parts are merged into one user message. The user's words
come wrapped in `<user_message>…</user_message>`. The base agent (`.agents/factory/base.ts`,
Claude Sonnet 4 through OpenRouter's chat completions) has create_plan, run_terminal_command,
str_replace, write_file, spawn_agents, spawn_agent_inline, add_subgoal, browser_logs,
code_search, end_turn, read_files, think_deeply and update_subgoal; its to-do list is its
subgoals (NOT_STARTED / IN_PROGRESS / COMPLETE / ABORTED). Result shapes, from the handlers:
read_files `[{path, content, referencedBy}]` (the first read brings the top-level knowledge
file along), str_replace / write_file `{file, message: "Updated file" | "Created new file",
unifiedDiff}` (hunks only), run_terminal_command `{command, startingCwd, stdout, exitCode}`
(stdout and stderr in one), code_search `{stdout, exitCode, message: "Code search
completed"}`, add_subgoal `{message: "Successfully added subgoal"}`, update_subgoal
`{message: "Successfully updated subgoal."}`, spawn_agents `[{agentName, agentType, value:
{type: "lastMessage", value}}]`; think_deeply and end_turn answer nothing. After a step that
edited files, the next step brings a `file_updates` result with the files as they now are.
"""

from __future__ import annotations

import base64
import difflib
import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from compaction.eval.families._base import CHARS_PER_TOKEN, Session, code_file, finish_session
from compaction.eval.sessions import EvalSession

FAMILY = "codebuffstory-style"

START_TAG = "<codebuff_tool_call>\n"
END_TAG = "\n</codebuff_tool_call>"

#: Tools whose call ends the agent step (`endsAgentStep` in common/src/tools/params/tool).
ENDS_STEP = frozenset(
    {
        "read_files",
        "run_terminal_command",
        "code_search",
        "spawn_agents",
        "end_turn",
        "find_files",
        "browser_logs",
        "web_search",
        "read_docs",
        "run_file_change_hooks",
        "add_message",
    }
)
#: Tools whose output is the empty tuple: no <tool_result> comes back.
NO_RESULT = frozenset({"think_deeply", "end_turn", "add_message"})

FILE_UPDATES = (
    "These are the updates made to the files since the last response (either by you or by the "
    "user). These are the most recent versions of these files. You MUST be considerate of the "
    "user's changes."
)


def tool_call(name: str, params: dict[str, Any]) -> str:
    """A call as the model writes it and Codebuff keeps it in the reply."""
    obj: dict[str, Any] = {"cb_tool_name": name, **params}
    if name in ENDS_STEP:
        obj["cb_easp"] = True
    return START_TAG + json.dumps(obj, indent=2, ensure_ascii=False) + END_TAG


def tool_result(name: str, call_id: str, value: Any) -> str:
    """A result as `convertCbToModelMessages` hands it to the model."""
    body = {"toolName": name, "toolCallId": call_id, "output": value}
    return "<tool_result>\n" + json.dumps(body, indent=2, ensure_ascii=False) + "\n</tool_result>"


def hunks(old: str, new: str, context: int = 4) -> str:
    """The hunks of a patch from `old` to `new` (jsdiff createPatch, headers cut)."""
    a, b = old.split("\n"), new.split("\n")
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out += [" " + line for line in a[x1:x2]]
            else:
                out += ["-" + line for line in a[x1:x2]]
                out += ["+" + line for line in b[y1:y2]]
    return "\n".join(out)


@dataclass
class Call:
    name: str
    params: dict[str, Any]
    #: The output's value; None for a tool that answers nothing.
    value: Any = None


# --- what each seed draws ---------------------------------------------------------------------

#: (slug, brand, timezone, UTC offset in November, a class title)
STUDIOS = (
    ("ascent", "Ascent Climbing", "America/Denver", -7, "Lead Technique"),
    ("stillpoint", "Stillpoint Yoga", "America/Chicago", -6, "Slow Flow"),
    ("ironhouse", "Ironhouse Strength", "America/New_York", -5, "Barbell Basics"),
    ("tidewater", "Tidewater Pilates", "America/Los_Angeles", -8, "Reformer Intermediate"),
    ("northloop", "North Loop Boxing", "America/Chicago", -6, "Heavy Bag Rounds"),
    ("kiln", "Kiln Hot Yoga", "Europe/Berlin", 1, "Hot Vinyasa"),
)
USERS = ("maya", "tomas", "jules", "ravi", "ines", "oskar", "wren")
ORGS = ("studioworks", "bookwell-co", "handstand-labs", "frontdesk-hq")
MANAGERS = ("Marta", "Deb", "Kofi", "Lena", "Sami", "Hollis")
OWNERS = ("Priya", "Noor", "Felix", "Agnes")
BUDDIES = ("Dan", "Aiko", "Bram", "Celine")
#: (first, second, final) hold window in minutes: no value's text inside another's.
HOLDS = ((15, 30, 20), (10, 45, 25), (20, 40, 30), (12, 30, 18), (15, 35, 25))
#: (first, later) waitlist cap.
CAPS = ((8, 12), (6, 10), (5, 9), (10, 14), (7, 11))
#: (start, end) of the quiet hours, studio time.
QUIET = (("22:00", "07:00"), ("21:30", "07:30"), ("22:30", "06:30"), ("21:00", "08:00"))
MIGRATION_NAMES = ("booking_lifecycle", "checkin_flow", "booking_states", "attendance_tracking")

OBJECTIVES = (
    (
        "Cancelling a booking holds the seat for the next waitlisted member",
        "A cancelled seat is held for whoever is first on the waitlist",
    ),
    (
        "Unconfirmed holds lapse after the hold window and move down the list",
        "Holds nobody confirms run out and pass to the next person in line",
    ),
    (
        "Held members get an offer email with a confirm link",
        "The member holding a seat is emailed a link to confirm it",
    ),
    (
        "Staff dashboard shows each member's waitlist position",
        "Front-desk dashboard lists waitlist positions per class",
    ),
    (
        "Offer emails respect the studio's quiet hours",
        "No offer emails go out during the studio's quiet hours",
    ),
    (
        "Backfill holds for classes already over capacity",
        "Backfill holds on classes that are currently overbooked",
    ),
)
OPEN_TESTS = (
    "defers the offer email until quiet hours end",
    "holds an overnight offer until the quiet hours are over",
)

_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass
class Draw:
    slug: str
    brand: str
    tz: str
    offset: int
    title: str
    user: str
    org: str
    manager: str
    owner: str
    buddy: str
    holds: tuple[int, int, int]
    caps: tuple[int, int]
    quiet: tuple[str, str]
    migration: str
    class_id: str
    member_id: str
    pr: int
    passed: int
    objectives: tuple[str, ...]
    open_test: str
    forbidden: set[str] = field(default_factory=set)

    @property
    def root(self) -> str:
        return f"/home/{self.user}/code/{self.slug}-web"


def _draw(rng: random.Random) -> Draw:
    slug, brand, tz, offset, title = rng.choice(STUDIOS)
    month, day = rng.choice(((6, 3), (7, 15), (8, 21), (9, 3), (5, 28)))
    clock = f"{rng.randint(8, 18):02d}{rng.randint(10, 59)}{rng.randint(10, 59)}"
    stamp = f"2026{month:02d}{day:02d}{clock}"
    return Draw(
        slug=slug,
        brand=brand,
        tz=tz,
        offset=offset,
        title=title,
        user=rng.choice(USERS),
        org=rng.choice(ORGS),
        manager=rng.choice(MANAGERS),
        owner=rng.choice(OWNERS),
        buddy=rng.choice(BUDDIES),
        holds=rng.choice(HOLDS),
        caps=rng.choice(CAPS),
        quiet=rng.choice(QUIET),
        migration=f"{stamp}_{rng.choice(MIGRATION_NAMES)}",
        class_id="cl" + "".join(rng.choice(_ALNUM) for _ in range(23)),
        member_id="cl" + "".join(rng.choice(_ALNUM) for _ in range(23)),
        pr=rng.randint(140, 480),
        passed=rng.randint(34, 52),
        objectives=tuple(rng.choice(pair) for pair in OBJECTIVES),
        open_test=rng.choice(OPEN_TESTS),
    )


# --- the session being written ----------------------------------------------------------------


class Writer:
    """A Codebuff session: user messages, assistant steps with their calls, results."""

    def __init__(self, seed: int, filler_chars: int) -> None:
        self.rng = random.Random(f"codebuffstory:{seed}")
        self.frng = random.Random(f"codebuffstory-filler:{seed}")
        self.d = _draw(self.rng)
        self.filler_chars = filler_chars
        self.s = Session(rng=self.rng, system=self._system())
        self.files: dict[str, str] = {}
        self.touched: list[str] = []
        self.migrations: list[str] = []
        #: Milliseconds since the epoch: the clock the tool-call ids are made from.
        self.clock = 1794662400000 + self.rng.randint(0, 3_600_000)

    # ids and safe random text

    def _id(self) -> str:
        """A toolCallId as generateCompactId makes it: 32 bits of the clock, 32 random bits,
        base64url."""
        self.clock += self.rng.randint(900, 40_000)
        high = (self.clock & 0xFFFFFFFF).to_bytes(4, "big")

        def make() -> str:
            raw = high + self.rng.getrandbits(32).to_bytes(4, "big")
            return base64.urlsafe_b64encode(raw).decode().rstrip("=")

        return self.safe(make)

    def safe(self, make: Any) -> str:
        """`make()` again until its text holds no planted string."""
        while True:
            text = str(make())
            folded = text.casefold()
            if not any(f.casefold() in folded for f in self.d.forbidden):
                return text

    def cuid(self) -> str:
        return self.safe(lambda: "cl" + "".join(self.frng.choice(_ALNUM) for _ in range(23)))

    def hms(self, hour_from: int = 8, hour_to: int = 19) -> str:
        return self.safe(
            lambda: (
                f"{self.frng.randint(hour_from, hour_to):02d}:"
                f"{self.frng.randint(0, 59):02d}:{self.frng.randint(0, 59):02d}"
            )
        )

    # messages

    def user(self, text: str) -> None:
        self.s.messages.append({"role": "user", "content": f"<user_message>{text}</user_message>"})

    def step(self, *pieces: str | Call, filler: bool = False) -> None:
        """One agent step: the reply (text and calls) and the results that come back."""
        calls = [p for p in pieces if isinstance(p, Call)]
        assert all(c.name not in ENDS_STEP for c in calls[:-1]), [c.name for c in calls]
        reply = "\n\n".join(
            p if isinstance(p, str) else tool_call(p.name, p.params) for p in pieces
        )
        self.s.messages.append({"role": "assistant", "content": reply})
        parts = [tool_result(c.name, self._id(), c.value) for c in calls if c.name not in NO_RESULT]
        if self.touched:
            assert calls and calls[-1].name != "end_turn", "edits need a step after them"
            files = [
                {"path": p, "content": self.files[p], "referencedBy": {}}
                for p in dict.fromkeys(self.touched)
            ]
            value = {"message": FILE_UPDATES, "files": files}
            parts.append(tool_result("file_updates", self._id(), value))
            self.touched = []
        if not parts:
            return
        content: str | list[dict[str, str]] = (
            parts[0] if len(parts) == 1 else [{"type": "text", "text": p} for p in parts]
        )
        self.s.messages.append({"role": "user", "content": content})
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)

    # tools

    def read(self, paths: list[str], *, extra: tuple[str, ...] = (), refs: Any = None) -> Call:
        """read_files; `extra` are files Codebuff adds by itself (knowledge files, first)."""
        refs = refs or {}
        value = [
            {"path": p, "content": self.files[p], "referencedBy": refs.get(p, {})}
            for p in (*extra, *paths)
        ]
        return Call("read_files", {"paths": paths}, value)

    def replace(self, path: str, *pairs: tuple[str, str]) -> Call:
        patches = []
        for old, new in pairs:
            before = self.files[path]
            assert before.count(old) == 1, (path, old)
            self.files[path] = before.replace(old, new)
            patches.append(hunks(before, self.files[path]))
        self.touched.append(path)
        params = {"path": path, "replacements": [{"old": o, "new": n} for o, n in pairs]}
        value = {"file": path, "message": "Updated file", "unifiedDiff": "\n".join(patches)}
        return Call("str_replace", params, value)

    def create(self, path: str, instructions: str, content: str) -> Call:
        assert path not in self.files, path
        self.files[path] = content
        self.touched.append(path)
        params = {"path": path, "instructions": instructions, "content": content}
        value = {"file": path, "message": "Created new file", "unifiedDiff": content}
        return Call("write_file", params, value)

    def rewrite(self, path: str, instructions: str, snippet: str, *pairs: tuple[str, str]) -> Call:
        """write_file on an existing file: a snippet with "existing code" markers, which
        Codebuff's fast rewrite turns into the edit `pairs` describe."""
        before = self.files[path]
        after = before
        for old, new in pairs:
            assert after.count(old) == 1, (path, old)
            after = after.replace(old, new)
        self.files[path] = after
        self.touched.append(path)
        params = {"path": path, "instructions": instructions, "content": snippet}
        value = {"file": path, "message": "Updated file", "unifiedDiff": hunks(before, after)}
        return Call("write_file", params, value)

    def run(self, command: str, stdout: str, *, exit_code: int = 0, **extra: Any) -> Call:
        value: dict[str, Any] = {"command": command, "startingCwd": self.d.root}
        value |= {"stdout": stdout, "exitCode": exit_code}
        return Call("run_terminal_command", {"command": command, **extra}, value)

    def search(self, pattern: str, stdout: str, *, exit_code: int = 0, **extra: Any) -> Call:
        value = {"stdout": stdout, "exitCode": exit_code, "message": "Code search completed"}
        return Call("code_search", {"pattern": pattern, **extra}, value)

    def add_subgoal(self, n: int, status: str, **extra: str) -> Call:
        params = {"id": str(n), "objective": self.d.objectives[n - 1], "status": status, **extra}
        return Call("add_subgoal", params, {"message": "Successfully added subgoal"})

    def update_subgoal(self, n: int, **extra: str) -> Call:
        return Call(
            "update_subgoal", {"id": str(n), **extra}, {"message": "Successfully updated subgoal."}
        )

    def spawn(self, agents: list[dict[str, Any]], reports: list[tuple[str, str, str]]) -> Call:
        value = [
            {"agentName": name, "agentType": kind, "value": {"type": "lastMessage", "value": text}}
            for name, kind, text in reports
        ]
        return Call("spawn_agents", {"agents": agents}, value)

    @staticmethod
    def think(thought: str) -> Call:
        return Call("think_deeply", {"thought": thought})

    @staticmethod
    def end() -> Call:
        return Call("end_turn", {})

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    # filler

    def filler_file(self, path: str, chars: int, header: str) -> None:
        """A source file the story never names, about `chars` long."""
        lines = max(8, int(chars / 44))
        body = self.safe(lambda: code_file(self.frng, "ts", lines))
        self.files[path] = f"{header}\n\n{body}\n"

    # the system prompt

    def _system(self) -> str:
        d = self.d
        example = tool_call("{tool_name}", {"parameter1": "value1", "parameter2": 123})
        return "\n".join(
            [
                "# Persona: Buffy",
                "",
                "**Your core identity is Buffy.** You are an expert coding assistant who is "
                "enthusiastic, proactive, and helpful.",
                "",
                "- **Tone:** Maintain a positive, friendly, and helpful tone. Use clear and "
                "encouraging language.",
                "- **Clarity & Conciseness:** Explain your steps clearly but concisely. Say the "
                "least you can to get your point across. If you can, answer in one sentence only. "
                "Do not summarize changes. End turn early.",
                "",
                'You are working on a project over multiple "iterations," reminiscent of the '
                'movie "Memento," aiming to accomplish the user\'s request.',
                "",
                "# Agents",
                "",
                "Use the spawn_agents tool to spawn agents to help you complete the user request! "
                "Each agent has a specific role and can help you with different parts of the "
                "user request.",
                "",
                "# Files",
                "",
                "The `read_file` tool result shows files you have previously read from "
                "`read_files` tool calls. If you write to a file, or if the user modifies a file, "
                "new copies of a file will be included in `read_file` tool results. Pay "
                "particular attention to the last copy of a file as that one is current!",
                "",
                "# Subgoals",
                "",
                "First, create and edit subgoals if none exist and pursue the most appropriate "
                'one. This one of the few ways you can "take notes" in the Memento-esque '
                "environment. Use the `add_subgoal` and `update_subgoal` tools for this.",
                "",
                "# System Messages",
                "",
                "Messages from the system are surrounded by <system></system> or "
                "<system_instructions></system_instructions> XML tags. These are NOT messages "
                "from the user.",
                "",
                "# How to Respond",
                "",
                "- **DO NOT run scripts, make git commits or push to remote repositories without "
                "permission from the user.**",
                "- **FINALLY, YOU MUST USE THE END TURN TOOL** When you have fully answered the "
                "user _or_ you are explicitly waiting for the user's next typed input.",
                "",
                "# Tools",
                "",
                "You (Buffy) have access to the following tools. Call them when needed.",
                "",
                "## [CRITICAL] Formatting Requirements",
                "",
                "Tool calls use a specific XML and JSON-like format. Adhere *precisely* to this "
                "nested element structure:",
                "",
                example,
                "",
                "## Tool Results",
                "",
                "Tool results will be provided by the user's *system* (and **NEVER** by the "
                "assistant).",
                "",
                "## List of Tools",
                "",
                "### read_files\n\nRead the multiple files from disk and return their contents.",
                "### write_file\n\nCreate or edit a file with the given content.",
                "### str_replace\n\nReplace strings in a file with new strings.",
                "### run_terminal_command\n\nExecute a CLI command from the **project root** "
                "(different from the user's cwd).",
                "### code_search\n\nSearch for string patterns in the project's files. This tool "
                "uses ripgrep (rg), a fast line-oriented search tool.",
                "### spawn_agents\n\nSpawn multiple agents and send a prompt and/or parameters to "
                "each of them.",
                "### think_deeply\n\nDeeply consider complex tasks by brainstorming approaches "
                "and tradeoffs step-by-step.",
                "### add_subgoal\n\nAdd a new subgoal for tracking progress.",
                "### update_subgoal\n\nUpdate a subgoal in the context given the id, and "
                "optionally the status or plan, or a new log to append.",
                "### end_turn\n\nEnd your turn, regardless of any new tool results that might be "
                "coming.",
                "",
                "# Spawnable agents",
                "",
                "- file-picker: Expert at finding relevant files in a codebase.",
                "- researcher: Expert at researching topics using web search and documentation.",
                "- thinker: Does deep thinking given the current messages and a specific prompt.",
                "- reviewer: Reviews file changes and responds with critical feedback.",
                "",
                "# Project file tree (truncated)",
                "",
                f"{d.slug}-web/",
                "  knowledge.md  package.json  pnpm-lock.yaml  tsconfig.json  vitest.config.ts",
                "  docker-compose.yml  next.config.mjs  .env.example",
                "  prisma/  (schema, migrations/)",
                "  src/",
                "    app/  emails/  lib/  server/  test/  components/",
                "  public/  scripts/  tmp/ (gitignored)",
                "",
                "# System Info",
                "",
                "Operating System: linux",
                "Shell: bash",
                f"Project root: {d.root}",
                "",
                "# Git",
                "",
                "Branch: main (clean)",
            ]
        )


# --- the files the story reads and edits -------------------------------------------------------


def _schema(d: Draw) -> str:
    return f"""generator client {{
  provider = "prisma-client-js"
}}

datasource db {{
  provider = "postgresql"
  url      = env("DATABASE_URL")
}}

model Studio {{
  id       String         @id @default(cuid())
  name     String
  timezone String         @default("{d.tz}")
  classes  ClassSession[]
  members  Member[]
}}

model Member {{
  id       String          @id @default(cuid())
  studioId String
  studio   Studio          @relation(fields: [studioId], references: [id])
  email    String          @unique
  name     String
  credits  Int             @default(0)
  bookings Booking[]
  waitlist WaitlistEntry[]
}}

model ClassSession {{
  id       String          @id @default(cuid())
  studioId String
  studio   Studio          @relation(fields: [studioId], references: [id])
  title    String
  startsAt DateTime
  capacity Int
  bookings Booking[]
  waitlist WaitlistEntry[]
}}

enum BookingStatus {{
  CONFIRMED
  CANCELLED
  ATTENDED
}}

model Booking {{
  id             String        @id @default(cuid())
  memberId       String
  member         Member        @relation(fields: [memberId], references: [id])
  classSessionId String
  classSession   ClassSession  @relation(fields: [classSessionId], references: [id])
  status         BookingStatus @default(CONFIRMED)
  creditsSpent   Int           @default(1)
  cancelledAt    DateTime?

  @@unique([memberId, classSessionId])
}}

model WaitlistEntry {{
  id             String       @id @default(cuid())
  memberId       String
  member         Member       @relation(fields: [memberId], references: [id])
  classSessionId String
  classSession   ClassSession @relation(fields: [classSessionId], references: [id])
  position       Int
  createdAt      DateTime     @default(now())

  @@unique([classSessionId, position])
}}
"""


CANCEL = """import { prisma } from "@/lib/db";
import { logger } from "@/lib/logger";
import { promoteFromWaitlist } from "@/lib/waitlist-legacy";

export class CancelError extends Error {}

const LATE_CANCEL_HOURS = 12;

export async function cancelBooking(bookingId: string, memberId: string) {
  return prisma.$transaction(async (tx) => {
    const booking = await tx.booking.findUnique({
      where: { id: bookingId },
      include: { classSession: true },
    });
    if (!booking || booking.memberId !== memberId) throw new CancelError("booking not found");

    const hours = (booking.classSession.startsAt.getTime() - Date.now()) / 3_600_000;
    const refund = hours >= LATE_CANCEL_HOURS ? booking.creditsSpent : 0;
    await tx.booking.update({
      where: { id: booking.id },
      data: { status: "CANCELLED", cancelledAt: new Date() },
    });
    if (refund > 0) {
      await tx.member.update({ where: { id: memberId }, data: { credits: { increment: refund } } });
    }

    await promoteFromWaitlist(tx, booking.classSessionId);
    logger.info({ bookingId, refund }, "booking.cancelled");
    return { refund };
  });
}
"""

LEGACY = """import type { Prisma } from "@prisma/client";
import { sendTemplate } from "@/lib/mailer";
import { chargeCredits } from "@/server/billing/credits";

// Books the first waitlisted member into the freed seat and charges them. Nobody is asked.
export async function promoteFromWaitlist(tx: Prisma.TransactionClient, classSessionId: string) {
  const next = await tx.waitlistEntry.findFirst({
    where: { classSessionId },
    orderBy: { position: "asc" },
    include: { member: true, classSession: true },
  });
  if (!next) return null;
  await tx.waitlistEntry.delete({ where: { id: next.id } });
  await chargeCredits(tx, next.memberId, 1, "waitlist-promotion");
  await sendTemplate(next.member.email, "waitlist-booked", {
    name: next.member.name,
    classTitle: next.classSession.title,
  });
  return tx.booking.create({ data: { memberId: next.memberId, classSessionId } });
}
"""

MAILER = """import { Resend } from "resend";
import { env } from "@/env";
import { type TemplateKey, templates } from "@/emails/templates";
import { logger } from "@/lib/logger";

const resend = new Resend(env.RESEND_API_KEY);

/** The one way mail leaves the app: a registered template, rendered, sent through Resend. */
export async function sendTemplate<K extends TemplateKey>(
  to: string,
  key: K,
  data: Parameters<(typeof templates)[K]["render"]>[0],
) {
  const { subject, text } = templates[key].render(data as never);
  const res = await resend.emails.send({ from: env.MAIL_FROM, to, subject, text });
  if (res.error) throw new Error(res.error.message);
  logger.info({ key, id: res.data?.id }, "mail.sent");
}
"""

TEMPLATES = """export const templates = {
  "class-reminder": {
    render: (d: { name: string; classTitle: string }) => ({
      subject: `Tomorrow: ${d.classTitle}`,
      text: `Hi ${d.name}, ${d.classTitle} is tomorrow. Bring water!`,
    }),
  },
  "waitlist-booked": {
    render: (d: { name: string; classTitle: string }) => ({
      subject: `A spot opened up: ${d.classTitle}`,
      text: `Good news ${d.name}, you're in for ${d.classTitle}.`,
    }),
  },
} as const;

export type TemplateKey = keyof typeof templates;
"""

JOIN = """import { prisma } from "@/lib/db";

export class WaitlistError extends Error {}

export async function joinWaitlist(memberId: string, classSessionId: string) {
  return prisma.$transaction(async (tx) => {
    const cls = await tx.classSession.findUniqueOrThrow({
      where: { id: classSessionId },
      include: { _count: { select: { bookings: { where: { status: "CONFIRMED" } } } } },
    });
    if (cls._count.bookings < cls.capacity) throw new WaitlistError("class has open seats");
    const last = await tx.waitlistEntry.findFirst({
      where: { classSessionId },
      orderBy: { position: "desc" },
    });
    const position = (last?.position ?? 0) + 1;
    return tx.waitlistEntry.create({ data: { memberId, classSessionId, position } });
  });
}
"""


def _knowledge(d: Draw) -> str:
    return f"""# {d.brand} web

- pnpm only. `pnpm db:up` starts the docker-compose Postgres the tests use.
- `pnpm test` runs Vitest once; `src/test/db.ts` truncates tables between tests.
- Schema changes: edit prisma/schema.prisma, then `pnpm prisma migrate dev --name <what>`.
- src/app: pages and route handlers; src/server: business logic; src/lib: infrastructure.
- Log with the pino logger (src/lib/logger.ts); event names are dotted (`booking.cancelled`).
- Credits only move inside a prisma.$transaction. Dates are stored in UTC.
"""


def _config(d: Draw) -> str:
    return f"""/** Waitlist knobs the studio tunes. */
export const HOLD_WINDOW_MINUTES = {d.holds[0]};
export const WAITLIST_CAP = {d.caps[0]};
"""


PROMOTE = """import { Prisma } from "@prisma/client";
import { env } from "@/env";
import { logger } from "@/lib/logger";
import { sendTemplate } from "@/lib/mailer";
import { HOLD_WINDOW_MINUTES } from "@/server/waitlist/config";

type Tx = Prisma.TransactionClient;

/** Offer the seat to the next member in line: a hold, and an email with the confirm link. */
export async function offerSeatToNext(tx: Tx, classSessionId: string, now = new Date()) {
  const waiting = await tx.waitlistEntry.findMany({
    where: { classSessionId, hold: null },
    include: { member: true, classSession: true },
  });
  const next = waiting.toSorted((a, b) => +a.createdAt - +b.createdAt)[0];
  if (!next) return null;

  const expiresAt = new Date(now.getTime() + HOLD_WINDOW_MINUTES * 60_000);
  const hold = await tx.waitlistHold.create({
    data: { entryId: next.id, classSessionId, offeredAt: now, expiresAt },
  });
  await sendTemplate(next.member.email, "waitlist-offer", {
    name: next.member.name,
    classTitle: next.classSession.title,
    confirmUrl: `${env.APP_URL}/holds/${hold.id}`,
    minutes: HOLD_WINDOW_MINUTES,
  });
  logger.info({ holdId: hold.id, memberId: next.memberId }, "waitlist.offer");
  return hold;
}

/** Lapse the holds nobody confirmed in time and pass each seat down the line. */
export async function sweepExpiredHolds(tx: Tx, classSessionId: string, now = new Date()) {
  const lapsed = await tx.waitlistHold.updateMany({
    where: { classSessionId, status: "OFFERED", expiresAt: { lte: now } },
    data: { status: "LAPSED" },
  });
  for (let i = 0; i < lapsed.count; i++) await offerSeatToNext(tx, classSessionId, now);
  return lapsed.count;
}
"""


CONFIRM = """import { Prisma } from "@prisma/client";
import { NextResponse } from "next/server";
import { prisma } from "@/lib/db";
import { getSessionMember } from "@/server/auth/session";
import { sweepExpiredHolds } from "@/server/waitlist/promote";

export async function POST(_req: Request, { params }: { params: { holdId: string } }) {
  const member = await getSessionMember();
  if (!member) return NextResponse.json({ error: "sign in first" }, { status: 401 });

  const status = await prisma.$transaction(
    async (tx) => {
      const hold = await tx.waitlistHold.findUnique({
        where: { id: params.holdId },
        include: { entry: true },
      });
      if (!hold || hold.entry.memberId !== member.id) return 404;
      await sweepExpiredHolds(tx, hold.classSessionId);
      const fresh = await tx.waitlistHold.findUniqueOrThrow({ where: { id: hold.id } });
      if (fresh.status !== "OFFERED") return 410;
      await tx.waitlistHold.update({ where: { id: hold.id }, data: { status: "CONFIRMED" } });
      const classSessionId = hold.classSessionId;
      await tx.booking.create({ data: { memberId: member.id, classSessionId } });
      await tx.member.update({ where: { id: member.id }, data: { credits: { decrement: 1 } } });
      return 200;
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.Serializable },
  );
  return NextResponse.json({ status }, { status });
}
"""


TESTS = """import { beforeEach, describe, expect, it } from "vitest";
import { prisma } from "@/lib/db";
import { cancelBooking } from "@/server/bookings/cancel";
import { HOLD_WINDOW_MINUTES } from "@/server/waitlist/config";
import { offerSeatToNext, sweepExpiredHolds } from "@/server/waitlist/promote";
import { resetDb } from "@/test/db";
import { fullClass, mailbox } from "@/test/factories";

const run = <T>(fn: (tx: any) => Promise<T>) => prisma.$transaction(fn);

beforeEach(async () => {
  await resetDb();
  mailbox.clear();
});

describe("offerSeatToNext", () => {
  it("holds the seat for the lowest waitlist position", async () => {
    const { cls, waiting } = await fullClass({ queue: 3, joinedInReverse: true });
    const hold = await run((tx) => offerSeatToNext(tx, cls.id));
    expect(hold!.entryId).toBe(waiting[0].entryId);
  });

  it("emails the waitlist-offer template with a confirm link", async () => {
    const { cls } = await fullClass({ queue: 1 });
    const hold = await run((tx) => offerSeatToNext(tx, cls.id));
    expect(mailbox.sent()[0].data.confirmUrl).toContain(`/holds/${hold!.id}`);
  });
});

describe("sweepExpiredHolds", () => {
  it("lapses overdue holds and offers the seat down the line", async () => {
    const { cls, waiting } = await fullClass({ queue: 2 });
    const start = new Date();
    await run((tx) => offerSeatToNext(tx, cls.id, start));
    const later = new Date(+start + (HOLD_WINDOW_MINUTES + 1) * 60_000);
    expect(await run((tx) => sweepExpiredHolds(tx, cls.id, later))).toBe(1);
    const offered = await prisma.waitlistHold.findFirst({ where: { status: "OFFERED" } });
    expect(offered!.entryId).toBe(waiting[1].entryId);
  });
});

describe("cancelBooking", () => {
  it("two cancellations at once offer two different members", async () => {
    const { booked } = await fullClass({ capacity: 2, queue: 2 });
    await Promise.all(booked.map((b) => cancelBooking(b.bookingId, b.memberId)));
    expect(await prisma.waitlistHold.count()).toBe(2);
  });

  it("refunds the credit when cancelled 12h ahead", async () => {
    const { booked } = await fullClass({ queue: 1, startsInHours: 48 });
    const { refund } = await cancelBooking(booked[0].bookingId, booked[0].memberId);
    expect(refund).toBe(1);
  });
});
"""


QUIET_MODULE = """import { QUIET_HOURS } from "@/server/waitlist/config";

const minute = (hm: string) => Number(hm.slice(0, 2)) * 60 + Number(hm.slice(3));

/** When an offer made at `now` may be emailed: now, or when the quiet hours end. */
export function nextSendTime(now: Date, timezone: string): Date {
  const clock = now.getUTCHours() * 60 + now.getUTCMinutes();
  const [start, end] = [minute(QUIET_HOURS.start), minute(QUIET_HOURS.end)];
  if (clock < start && clock >= end) return now;
  const send = new Date(now);
  if (clock >= start) send.setUTCDate(send.getUTCDate() + 1);
  send.setUTCHours(Math.floor(end / 60), end % 60, 0, 0);
  return send; // TODO: timezone
}
"""


def _quiet_times(d: Draw) -> tuple[str, str, str, str]:
    """(23:40 and 12:15 at the studio on Nov 14, as UTC instants; when the quiet hours end
    the next morning, in UTC; what QUIET_MODULE's UTC-only arithmetic answers for the night)."""

    def utc(day: int, hour: int, minute: int) -> datetime:
        local = datetime(2026, 11, day, hour, minute)
        return local - timedelta(hours=d.offset)

    def iso(at: datetime) -> str:
        return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def hm(text: str) -> int:
        return int(text[:2]) * 60 + int(text[3:])

    def buggy(now: datetime) -> datetime:
        clock, start, end = now.hour * 60 + now.minute, hm(d.quiet[0]), hm(d.quiet[1])
        if end <= clock < start:
            return now
        day = now + timedelta(days=1) if clock >= start else now
        return day.replace(hour=end // 60, minute=end % 60, second=0)

    night, noon = utc(14, 23, 40), utc(14, 12, 15)
    morning = utc(15, hm(d.quiet[1]) // 60, hm(d.quiet[1]) % 60)
    assert buggy(noon) == noon and buggy(night) != morning, d
    return iso(night), iso(noon), iso(morning), iso(buggy(night))


def _quiet_spec(d: Draw) -> str:
    night, noon, morning, _ = _quiet_times(d)
    return f"""import {{ describe, expect, it }} from "vitest";
import {{ nextSendTime }} from "@/server/waitlist/quiet-hours";

const TZ = "{d.tz}";

describe("nextSendTime", () => {{
  it("{d.open_test}", () => {{
    const night = new Date("{night}"); // 23:40 at the studio
    expect(nextSendTime(night, TZ).toISOString()).toBe("{morning}");
  }});

  it("sends right away during the day", () => {{
    const noon = new Date("{noon}"); // 12:15 at the studio
    expect(nextSendTime(noon, TZ)).toEqual(noon);
  }});
}});
"""


def _line_of(text: str, needle: str) -> tuple[int, str]:
    """The 1-based line of `text` holding `needle`, and that line."""
    [(number, line)] = [(i, x) for i, x in enumerate(text.split("\n"), 1) if needle in x]
    return number, line


# --- test runs --------------------------------------------------------------------------------

#: Other spec files of the app.
_SPECS = (
    "src/lib/dates.test.ts",
    "src/server/classes/list.test.ts",
    "src/server/bookings/book.test.ts",
    "src/server/billing/credits.test.ts",
    "src/server/studios/settings.test.ts",
    "src/emails/templates.test.ts",
)
PROMOTE_TEST = "src/server/waitlist/promote.test.ts"
QUIET_TEST = "src/server/waitlist/quiet-hours.test.ts"
#: Specs in promote.test.ts.
PROMOTE_SPECS = 5


@dataclass
class Failure:
    file: str
    describe: str
    name: str
    #: The first line of the error, as vitest shows it under the test.
    reason: str
    #: The assertion's line in the spec file and its source.
    line: int
    source: str
    #: The error's own lines, when it is not an assertion's diff.
    body: tuple[str, ...] = ()


def _vitest(w: Writer, specs: list[tuple[str, int, list[Failure]]]) -> str:
    """`pnpm test` output: the app's other spec files (`d.passed - PROMOTE_SPECS` tests in
    all), then `specs` (file, tests, failures)."""
    d = w.d
    others = d.passed - PROMOTE_SPECS
    counts = [others // len(_SPECS)] * len(_SPECS)
    for i in range(others - sum(counts)):
        counts[i] += 1
    lines = [
        "",
        f"> {d.slug}-web@0.1.0 test {d.root}",
        "> vitest run",
        "",
        "",
        f" RUN  v1.6.0 {d.root}",
        "",
    ]
    for spec, n in zip(_SPECS, counts, strict=True):
        lines.append(f" ✓ {spec}  ({n} tests) {w.frng.randint(9, 240)}ms")
    failures = [f for _, _, fs in specs for f in fs]
    for spec, n, fs in specs:
        ms = w.frng.randint(30, 900)
        if not fs:
            lines.append(f" ✓ {spec}  ({n} tests) {ms}ms")
            continue
        lines.append(f" ❯ {spec}  ({n} tests | {len(fs)} failed) {ms}ms")
        for f in fs:
            lines += [f"   × {f.describe} > {f.name}", f"     → {f.reason}"]
    lines.append("")
    bar = "⎯" * 7
    if failures:
        lines += [f"{bar} Failed Tests {len(failures)} {bar}", ""]
    for k, f in enumerate(failures, 1):
        lines.append(f" FAIL  {f.file} > {f.describe} > {f.name}")
        if f.body:
            lines += list(f.body)
        else:
            expected = f.reason.split(" to be ")[-1].split(" //")[0]
            received = f.reason.split("expected ")[1].split(" to be")[0]
            lines += [
                f.reason,
                "",
                "- Expected",
                "+ Received",
                "",
                f"- {expected}",
                f"+ {received}",
            ]
        col = w.frng.randint(20, 44)
        lines += [
            "",
            f" ❯ {f.file}:{f.line}:{col}",
            f"    {f.line}| {f.source}",
            "       | " + " " * (col - 1) + "^",
            "",
            "⎯" * 52 + f"[{k}/{len(failures)}]⎯",
            "",
        ]
    total = others + sum(n for _, n, _ in specs)
    files = len(_SPECS) + len(specs)
    bad = sum(bool(fs) for _, _, fs in specs)
    if failures:
        lines += [
            f" Test Files  {bad} failed | {files - bad} passed ({files})",
            f"      Tests  {len(failures)} failed | {total - len(failures)} passed ({total})",
        ]
    else:
        lines += [
            f" Test Files  {files} passed ({files})",
            f"      Tests  {total} passed ({total})",
        ]
    lines += [
        f"   Start at  {w.hms()}",
        f"   Duration  {w.frng.randint(3, 8)}.{w.frng.randint(10, 99)}s (transform "
        f"{w.frng.randint(300, 900)}ms, setup {w.frng.randint(90, 300)}ms, collect "
        f"{w.frng.randint(1, 3)}.{w.frng.randint(10, 99)}s, tests {w.frng.randint(1, 3)}."
        f"{w.frng.randint(10, 99)}s, environment {w.frng.randint(1, 4)}ms, prepare "
        f"{w.frng.randint(600, 1400)}ms)",
        "",
    ]
    if failures:
        lines += [" ELIFECYCLE  Test failed. See above for more details.", ""]
    return "\n".join(lines)


# --- the story --------------------------------------------------------------------------------

LEGACY_PATH = "src/lib/waitlist-legacy.ts"
SCHEMA = "prisma/schema.prisma"
CANCEL_PATH = "src/server/bookings/cancel.ts"
TEMPLATES_PATH = "src/emails/templates.ts"
JOIN_PATH = "src/server/bookings/join-waitlist.ts"
CONFIG_PATH = "src/server/waitlist/config.ts"
PROMOTE_PATH = "src/server/waitlist/promote.ts"
CONFIRM_PATH = "src/app/api/holds/[holdId]/confirm/route.ts"
QUIET_PATH = "src/server/waitlist/quiet-hours.ts"
FILLER_PATHS = (
    "src/server/classes/list.ts",
    "src/lib/dates.ts",
    "src/test/factories.ts",
    "src/app/(studio)/classes/[classId]/page.tsx",
    "src/server/bookings/book.ts",
    "src/components/class-card.tsx",
    "src/server/studios/settings.ts",
    "src/lib/time.ts",
)


def _tell(seed: int, filler_chars: int) -> Writer:
    w = Writer(seed, filler_chars)
    d, s = w.d, w.s
    h1, h2, h3 = d.holds
    c1, c2 = d.caps
    q1, q2 = d.quiet
    total1 = d.passed  # the suite once the first failures are fixed
    total3 = d.passed + 2  # two quiet-hours specs added, one of them red
    legacy, schema, cancel, templates = LEGACY_PATH, SCHEMA, CANCEL_PATH, TEMPLATES_PATH
    join, config, promote, confirm = JOIN_PATH, CONFIG_PATH, PROMOTE_PATH, CONFIRM_PATH
    objectives = d.objectives

    # Everything planted, so no random text (ids, clocks, filler) repeats it by chance.
    d.forbidden |= {
        "$queryRaw",
        "Node 18",
        "sendTemplate",
        q1,
        q2,
        "TS2550",
        "toSorted",
        "P2034",
        d.open_test,
        "sweepExpiredHolds",
        "expireHoldsCron",
        "Serializable",
        *objectives,
        f"{h1} minutes",
        f"{h2} minutes",
        f"{h3} minutes",
        f"{c1} spots",
        f"{c2} spots",
        d.migration,
        d.class_id,
        "1 failed",
        f"{total1} passed",
        f"{total3 - 1} passed",
        f"#{d.pr}",
        legacy,
        schema,
        cancel,
        templates,
        join,
        config,
        promote,
        confirm,
        PROMOTE_TEST,
    }

    w.files.update(
        {
            "knowledge.md": _knowledge(d),
            schema: _schema(d),
            cancel: CANCEL,
            legacy: LEGACY,
            "src/lib/mailer.ts": MAILER,
            templates: TEMPLATES,
            join: JOIN,
        }
    )
    for path in FILLER_PATHS:
        w.filler_file(path, filler_chars // len(FILLER_PATHS), f"// {path}")

    # --- turn 1: the ask, a look around, a plan --------------------------------------------
    w.user(
        w.pick(
            "hey, I want to redo how the class waitlist works. right now when a booked member "
            "cancels, the old legacy helper shoves whoever is first on the waitlist straight into "
            "the seat and takes their credits, and people are (fairly) annoyed at being charged "
            "for a class they'd stopped thinking about.\n\n"
            f"what I want instead: when someone cancels, the first person in line gets the seat "
            f"held for {h1} minutes plus an email with a confirm link. if they don't confirm in "
            f"time it rolls on to the next person. and cap each waitlist at {c1} spots while "
            "we're in there.\n\n"
            "ground rules:\n"
            "- no raw SQL. nothing through $queryRaw or $executeRaw, Prisma client only\n"
            "- prod is still on Node 18, so nothing that needs a newer runtime\n"
            "- every email goes out through sendTemplate in src/lib/mailer.ts, don't import "
            "resend anywhere else\n\n"
            "poke around first and tell me the plan before writing anything",
            "Waitlist rework time. At the moment a cancellation auto-books whoever tops the "
            "waitlist and takes their credits without asking; that legacy helper has to go. New "
            f"behaviour: the freed seat is held for the next member for {h1} minutes, they get an "
            "email with a link to confirm, and if the hold runs out the seat goes to whoever's "
            f"after them. Also limit waitlists to {c1} spots per class.\n\n"
            "Constraints, please stick to them:\n"
            "1. Prisma client only. Raw SQL ($queryRaw / $executeRaw) is banned in this repo\n"
            "2. our prod boxes run Node 18, so don't reach for newer runtime APIs\n"
            "3. mail only ever goes through sendTemplate (src/lib/mailer.ts), no direct resend "
            "imports\n\n"
            "Have a look around and walk me through the approach first. No code yet.",
        )
    )
    s.fact(
        "constraint",
        "No raw SQL: everything through the Prisma client, no $queryRaw / $executeRaw.",
        ["$queryRaw"],
    )
    s.fact(
        "constraint", "Production runs Node 18: nothing that needs a newer runtime.", ["Node 18"]
    )
    s.fact(
        "constraint",
        "All email goes through sendTemplate in src/lib/mailer.ts; never import resend directly.",
        ["sendTemplate"],
    )

    picker = "Fletcher the File Fetcher"
    w.step(
        w.pick(
            "I'll map out the booking, waitlist and email code first.",
            "Let me find where cancellations, the waitlist and mail live.",
        ),
        w.spawn(
            [
                {
                    "agent_type": "file-picker",
                    "prompt": "Find the code that cancels bookings and moves people off the "
                    "class waitlist",
                },
                {
                    "agent_type": "file-picker",
                    "prompt": "Find how transactional emails are built and sent",
                },
                {
                    "agent_type": "file-picker",
                    "prompt": "Find the Prisma schema, migrations and the test database setup",
                },
            ],
            [
                (
                    picker,
                    "file-picker",
                    f"- {cancel}: cancelBooking(), calls the legacy promotion at the end\n"
                    f"- {legacy}: promoteFromWaitlist() books + charges the next member\n"
                    f"- {join}: joinWaitlist(), hands out positions\n"
                    "- src/server/bookings/book.ts: the normal booking path",
                ),
                (
                    picker,
                    "file-picker",
                    "- src/lib/mailer.ts: the Resend wrapper every email goes through\n"
                    f"- {templates}: template registry, render() → subject/text",
                ),
                (
                    picker,
                    "file-picker",
                    f"- {schema}: Studio, Member, ClassSession, Booking, WaitlistEntry\n"
                    "- src/test/db.ts: resetDb() truncates between tests\n"
                    "- src/test/factories.ts: fullClass() and an in-memory mailbox",
                ),
            ],
        ),
    )
    w.step(
        w.pick("Tracking this as subgoals, then reading the core files.", "Noting the goals down."),
        w.add_subgoal(1, "NOT_STARTED"),
        w.add_subgoal(
            2,
            "NOT_STARTED",
            plan="expireHoldsCron route hit every minute: lapse overdue holds, offer next",
        ),
        w.add_subgoal(3, "NOT_STARTED"),
        w.add_subgoal(4, "NOT_STARTED"),
        w.read(
            [schema, cancel, legacy, "src/lib/mailer.ts", templates, join],
            extra=("knowledge.md",),
            refs={
                "src/lib/mailer.ts": {"sendTemplate": [legacy, "src/server/bookings/book.ts"]},
                cancel: {"cancelBooking": ["src/app/api/bookings/[bookingId]/route.ts"]},
            },
        ),
    )
    w.step(
        w.pick("And the pieces around them:", "A few neighbours for context:"),
        w.read(list(FILLER_PATHS[:4])),
        filler=True,
    )
    w.step(
        w.think(
            "1. new WaitlistHold: entry, expiresAt, status\n"
            "2. offer inside the cancel transaction\n"
            "3. expiry needs a trigger: cron route?\n"
            "4. confirm link -> booking + charge then\n"
            "5. no raw SQL -> no row locks; isolation level?\n"
            "6. legacy helper goes"
        ),
        "Here's the plan:\n\n"
        "1. **Schema**: a `WaitlistHold` (one per waitlist entry) with `expiresAt` and a status "
        "OFFERED / CONFIRMED / LAPSED.\n"
        f"2. **Offer**: `offerSeatToNext(tx, classSessionId)` in a new `{promote}` takes the "
        f"lowest position without a hold, holds the seat for {h1} minutes and sends a "
        "`waitlist-offer` template through the mailer. `cancelBooking` calls it inside its "
        "transaction, replacing the legacy helper, which I'd then delete.\n"
        "3. **Expiry**: a cron route, `expireHoldsCron` at `/api/cron/expire-holds`, scheduled "
        "every minute in vercel.json, lapses overdue holds and offers each seat to the next "
        "person.\n"
        f"4. **Confirm**: `POST {confirm.removeprefix('src/app')[: -len('/route.ts')]}` turns "
        "the hold into a booking and takes the credit only then.\n"
        f"5. **Cap**: `joinWaitlist` refuses new entries past {c1}.\n\n"
        "Does that match what you had in mind?",
        w.end(),
    )

    # --- turn 2: no scheduler; build it ------------------------------------------------------
    w.user(
        w.pick(
            "one thing: the cron bit doesn't work for us. we deploy on Fly, there's no vercel "
            "cron, and I'm not standing up a separate machine that wakes up every minute just to "
            "expire holds. can it work with no scheduler at all? everything else sounds right, "
            "go for it",
            "Mostly good. No cron though: we're hosted on Fly.io, Vercel crons don't exist "
            "there, and a dedicated ticker box for this is overkill. Find a way that doesn't "
            "need anything running on a timer, then go ahead and build it.",
        )
    )
    reversal = w.pick(
        "Makes sense, nothing on a timer then. Expiry becomes lazy: `sweepExpiredHolds(tx, "
        "classSessionId)` runs first thing inside every cancel, join and confirm transaction, "
        "marks overdue holds LAPSED and offers each seat to the next person, so a class is in "
        "the right state the moment anyone touches it. No cron route at all.",
        "Fine by me. The expireHoldsCron idea goes away; holds get expired lazily. Every "
        "transaction that touches a class (cancel, join, confirm) starts with "
        "`sweepExpiredHolds(tx, classSessionId)`, which lapses anything past `expiresAt` and "
        "hands the seat down the line.",
    )
    isolation = w.pick(
        "One knock-on of the Prisma-only rule: I can't lock rows with `SELECT … FOR UPDATE`, so "
        "these transactions run at Serializable isolation and Postgres rejects the loser of any "
        "race.",
        "Since row locks (`FOR UPDATE`) need raw SQL, the transactions will use Serializable "
        "isolation: if two cancellations race, Postgres aborts one of them rather than letting "
        "both hand out the same seat.",
    )
    w.step(
        reversal + "\n\n" + isolation,
        w.update_subgoal(
            2,
            plan="no scheduler: sweepExpiredHolds at the top of cancel/join/confirm transactions",
        ),
        w.update_subgoal(1, status="IN_PROGRESS"),
        w.replace(
            schema,
            (
                "  position       Int\n  createdAt      DateTime     @default(now())\n",
                "  position       Int\n  createdAt      DateTime     @default(now())\n"
                "  hold           WaitlistHold?\n",
            ),
            (
                "  @@unique([classSessionId, position])\n}\n",
                "  @@unique([classSessionId, position])\n}\n\n"
                "enum HoldStatus {\n  OFFERED\n  CONFIRMED\n  LAPSED\n}\n\n"
                "model WaitlistHold {\n"
                "  id             String        @id @default(cuid())\n"
                "  entryId        String        @unique\n"
                "  entry          WaitlistEntry @relation(fields: [entryId], references: [id])\n"
                "  classSessionId String\n"
                "  status         HoldStatus    @default(OFFERED)\n"
                "  offeredAt      DateTime\n"
                "  expiresAt      DateTime\n\n"
                "  @@index([classSessionId, status, expiresAt])\n}\n",
            ),
        ),
        w.run(
            "pnpm prisma migrate dev --name waitlist_holds",
            _migrate(w, "waitlist_holds"),
            timeout_seconds=120,
        ),
    )
    s.fact(
        "decision",
        "No scheduler: holds expire lazily, sweepExpiredHolds runs at the top of every "
        "cancel/join/confirm transaction (the cron route expireHoldsCron was dropped).",
        ["sweepExpiredHolds"],
        stale=["expireHoldsCron"],
    )
    s.fact(
        "decision",
        "Without raw SQL there are no row locks: the booking transactions run at Serializable "
        "isolation.",
        ["Serializable"],
    )
    s.fact("file_modified", f"{schema}: WaitlistHold model and HoldStatus enum", [schema])

    w.step(
        w.pick(
            "Migrated. Before the new module, how booking itself looks:",
            "Schema is in. Checking the booking path first:",
        ),
        w.read(list(FILLER_PATHS[4:6])),
        filler=True,
    )
    w.step(
        w.pick("Now the promotion module and the confirm endpoint.", "Writing the new module."),
        w.create(config, "Waitlist settings: hold window and cap", _config(d)),
        w.create(promote, "Add the waitlist offer and lazy hold expiry", PROMOTE),
        w.create(confirm, "Add the endpoint a member hits to confirm a held seat", CONFIRM),
        w.run("pnpm tsc --noEmit", _tsc_error(promote), exit_code=2),
    )
    s.fact("file_created", f"{config}: hold window and waitlist cap", [config])
    s.fact("file_created", f"{promote}: offerSeatToNext and sweepExpiredHolds", [promote])
    s.fact("file_created", f"{confirm}: the confirm endpoint", [confirm])
    s.fact(
        "error_resolved",
        "tsc: TS2550, `toSorted` needs a newer lib than the Node 18 target (fixed by sorting a "
        "copy).",
        ["TS2550", "toSorted"],
        required=False,
    )

    w.step(
        w.pick(
            "`toSorted` is ES2023 and the tsconfig lib stops at ES2022 for Node 18. Sorting a copy "
            "works everywhere.",
            "Right, `toSorted` isn't in ES2022, which is what we target for Node 18. A spread and "
            "`.sort()` does the same job.",
        ),
        w.replace(
            promote,
            (
                "  const next = waiting.toSorted((a, b) => +a.createdAt - +b.createdAt)[0];",
                "  const next = [...waiting].sort((a, b) => +a.createdAt - +b.createdAt)[0];",
            ),
        ),
        w.run("pnpm tsc --noEmit", ""),
    )
    w.step(
        w.pick("Types are clean. Who else imports the legacy helper?", "Checking legacy users."),
        w.search(
            "waitlist-legacy",
            f'./{cancel}:import {{ promoteFromWaitlist }} from "@/lib/waitlist-legacy";\n'
            "./docs/architecture.md:- Waitlist promotion: `src/lib/waitlist-legacy.ts` (books "
            "and charges)\n",
        ),
    )
    offer_template = (
        '  "waitlist-offer": {\n'
        "    render: (d: { name: string; classTitle: string; confirmUrl: string; minutes: number "
        "}) => ({\n"
        "      subject: `A spot opened up in ${d.classTitle}`,\n"
        "      text: `Hi ${d.name}, a spot in ${d.classTitle} is held for you for ${d.minutes} "
        "minutes. Confirm: ${d.confirmUrl}`,\n"
        "    }),\n"
        "  },\n"
    )
    w.step(
        w.pick(
            "Only cancel.ts and a line in the architecture doc. Wiring it up:",
            "Just cancel.ts (plus a doc mention). Swapping it over now.",
        ),
        w.replace(
            cancel,
            (
                'import { prisma } from "@/lib/db";\nimport { logger } from "@/lib/logger";\n'
                'import { promoteFromWaitlist } from "@/lib/waitlist-legacy";\n',
                'import { Prisma } from "@prisma/client";\nimport { prisma } from "@/lib/db";\n'
                'import { logger } from "@/lib/logger";\n'
                'import { offerSeatToNext, sweepExpiredHolds } from "@/server/waitlist/promote";\n',
            ),
            (
                "    await promoteFromWaitlist(tx, booking.classSessionId);\n"
                '    logger.info({ bookingId, refund }, "booking.cancelled");\n'
                "    return { refund };\n  });\n}\n",
                "    await sweepExpiredHolds(tx, booking.classSessionId);\n"
                "    await offerSeatToNext(tx, booking.classSessionId);\n"
                '    logger.info({ bookingId, refund }, "booking.cancelled");\n'
                "    return { refund };\n"
                "  }, { isolationLevel: Prisma.TransactionIsolationLevel.Serializable });\n}\n",
            ),
        ),
        w.rewrite(
            templates,
            "Register the waitlist-offer template",
            '// ... existing code ...\n  "waitlist-booked": {\n    // ... existing code ...\n'
            "  },\n" + offer_template + "} as const;\n// ... existing code ...",
            ("    }),\n  },\n} as const;", "    }),\n  },\n" + offer_template + "} as const;"),
        ),
        w.replace(
            join,
            (
                'import { prisma } from "@/lib/db";\n',
                'import { Prisma } from "@prisma/client";\nimport { prisma } from "@/lib/db";\n'
                'import { WAITLIST_CAP } from "@/server/waitlist/config";\n'
                'import { sweepExpiredHolds } from "@/server/waitlist/promote";\n',
            ),
            (
                "  return prisma.$transaction(async (tx) => {\n    const cls",
                "  return prisma.$transaction(async (tx) => {\n"
                "    await sweepExpiredHolds(tx, classSessionId);\n    const cls",
            ),
            (
                '    if (cls._count.bookings < cls.capacity) throw new WaitlistError("class has '
                'open seats");\n',
                '    if (cls._count.bookings < cls.capacity) throw new WaitlistError("class has '
                'open seats");\n'
                "    const queued = await tx.waitlistEntry.count({ where: { classSessionId } });\n"
                '    if (queued >= WAITLIST_CAP) throw new WaitlistError("waitlist is full");\n',
            ),
            (
                "    return tx.waitlistEntry.create({ data: { memberId, classSessionId, position } "
                "});\n  });\n}\n",
                "    return tx.waitlistEntry.create({ data: { memberId, classSessionId, position } "
                "});\n"
                "  }, { isolationLevel: Prisma.TransactionIsolationLevel.Serializable });\n}\n",
            ),
        ),
        w.run(f"rm {legacy}", ""),
    )
    del w.files[legacy]
    s.fact("file_modified", f"{cancel}: offers the seat through the new module", [cancel])
    s.fact("file_modified", f"{templates}: the waitlist-offer template", [templates])
    s.fact("file_modified", f"{join}: sweep first, and the waitlist cap", [join])
    s.fact("file_deleted", f"{legacy}: the auto-booking helper, removed", [legacy])

    ordering = Failure(
        PROMOTE_TEST,
        "offerSeatToNext",
        "holds the seat for the lowest waitlist position",
        f"AssertionError: expected '{w.cuid()}' to be '{w.cuid()}' // Object.is equality",
        *_line_of(TESTS, "toBe(waiting[0].entryId)"),
    )
    conflict = "Transaction failed due to a write conflict or a deadlock. Please retry your "
    conflict += "transaction"
    race = Failure(
        PROMOTE_TEST,
        "cancelBooking",
        "two cancellations at once offer two different members",
        f"\nInvalid `prisma.$transaction()` invocation:\n\n\n{conflict}",
        *_line_of(TESTS, "await Promise.all(booked.map("),
        body=(
            "PrismaClientKnownRequestError: ",
            "Invalid `prisma.$transaction()` invocation:",
            "",
            "",
            conflict,
            " ❯ Proxy._transactionWithCallback node_modules/.pnpm/@prisma+client@5.14.0_prisma@5."
            "14.0/node_modules/@prisma/client/runtime/library.js:130:8542",
            f" ❯ {cancel}:10:3",
            "",
            "{",
            "  code: 'P2034',",
            "  clientVersion: '5.14.0',",
            "  meta: { modelName: undefined }",
            "}",
        ),
    )
    w.step(
        w.pick("Now tests for the new flow.", "Adding specs and running the suite."),
        w.create(PROMOTE_TEST, "Cover offer, lapse, the cancel race and the refund", TESTS),
        w.run(
            "pnpm test",
            _vitest(w, [(PROMOTE_TEST, PROMOTE_SPECS, [ordering, race])]),
            exit_code=1,
            timeout_seconds=180,
        ),
    )
    s.fact("file_created", f"{PROMOTE_TEST}: specs for the hold flow", [PROMOTE_TEST])
    s.fact(
        "error_resolved",
        "The cancel race hit P2034 (write conflict under Serializable); fixed with a retry.",
        ["P2034"],
        required=False,
    )

    retry = (
        "/** Run `fn` at Serializable isolation, retrying when Postgres reports a conflict. */\n"
        "export async function withSerializableRetry<T>(fn: (tx: Tx) => Promise<T>, tries = 3) {\n"
        "  for (let attempt = 1; ; attempt++) {\n"
        "    try {\n"
        "      const isolationLevel = Prisma.TransactionIsolationLevel.Serializable;\n"
        "      return await prisma.$transaction(fn, { isolationLevel });\n"
        "    } catch (err) {\n"
        "      const conflict =\n"
        '        err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2034";\n'
        "      if (!conflict || attempt >= tries) throw err;\n"
        "    }\n"
        "  }\n"
        "}\n\n"
    )
    w.step(
        w.pick(
            "Two real bugs. The picker sorts by join time when the queue order is `position`, and "
            "the race test gets P2034: Serializable did its job and aborted one transaction, but "
            "nothing retries it. Fixing both.",
            "First failure: I ordered by `createdAt`, the queue is ordered by `position`. Second: "
            "P2034 is Postgres aborting the losing transaction under Serializable, exactly as "
            "intended, but the caller needs to retry. Adding a small retry wrapper.",
        ),
        w.replace(
            promote,
            (
                'import { logger } from "@/lib/logger";\n',
                'import { prisma } from "@/lib/db";\nimport { logger } from "@/lib/logger";\n',
            ),
            (
                "  const waiting = await tx.waitlistEntry.findMany({\n"
                "    where: { classSessionId, hold: null },\n"
                "    include: { member: true, classSession: true },\n"
                "  });\n"
                "  const next = [...waiting].sort((a, b) => +a.createdAt - +b.createdAt)[0];\n",
                "  const next = await tx.waitlistEntry.findFirst({\n"
                "    where: { classSessionId, hold: null },\n"
                '    orderBy: { position: "asc" },\n'
                "    include: { member: true, classSession: true },\n"
                "  });\n",
            ),
            (
                "/** Offer the seat to the next member in line",
                retry + "/** Offer the seat to the next member in line",
            ),
        ),
        w.replace(
            cancel,
            (
                'import { Prisma } from "@prisma/client";\nimport { prisma } from "@/lib/db";\n',
                "",
            ),
            (
                'import { offerSeatToNext, sweepExpiredHolds } from "@/server/waitlist/promote";',
                "import {\n  offerSeatToNext,\n  sweepExpiredHolds,\n  withSerializableRetry,\n"
                '} from "@/server/waitlist/promote";',
            ),
            (
                "  return prisma.$transaction(async (tx) => {\n",
                "  return withSerializableRetry(async (tx) => {\n",
            ),
            (
                "  }, { isolationLevel: Prisma.TransactionIsolationLevel.Serializable });\n}\n",
                "  });\n}\n",
            ),
        ),
        w.run("pnpm test", _vitest(w, [(PROMOTE_TEST, PROMOTE_SPECS, [])]), timeout_seconds=180),
    )
    w.step(
        w.update_subgoal(1, status="COMPLETE", log="cancel offers the seat via offerSeatToNext"),
        w.update_subgoal(2, status="COMPLETE", log="lazy sweep in cancel/join/confirm"),
        w.update_subgoal(3, status="COMPLETE", log="waitlist-offer template + confirm route"),
        w.spawn(
            [
                {
                    "agent_type": "reviewer",
                    "prompt": "Review the waitlist hold changes (schema, promote.ts, cancel, "
                    "join, confirm route, template)",
                }
            ],
            [("Nit Pick Nick the Reviewer", "reviewer", _review(promote, cancel, confirm))],
        ),
    )
    w.step(
        w.pick(
            "Suite is green and the review found nothing blocking. Seats are now held on "
            "cancel, expire lazily and are only charged when the member confirms.",
            "Done: held seats, lazy expiry, confirm-to-book, all tests passing. The reviewer's "
            "one real note (the confirm route not using the retry helper) can wait.",
        ),
        w.end(),
    )
    s.fact("todo", f"Subgoal done: {objectives[0]}", [objectives[0]], required=False)
    s.fact("todo", f"Subgoal done: {objectives[1]}", [objectives[1]], required=False)
    s.fact("todo", f"Subgoal done: {objectives[2]}", [objectives[2]], required=False)

    # --- turn 3: a longer hold; which migration added the enum ----------------------------------
    w.user(
        w.pick(
            f"{d.manager} read the email copy and says {h1} minutes is way too short, half the "
            f"members are on the bus when it lands. make the hold {h2} minutes. unrelated: for "
            "the release notes I need the name of the migration that introduced the "
            "BookingStatus enum, can you dig it up?",
            f"Feedback from {d.manager}: the hold window is too tight. Give people {h2} minutes. "
            "Also a quick one: which migration created the BookingStatus enum? I need the folder "
            "name for the changelog.",
        )
    )
    w.step(
        w.replace(
            config,
            (f"HOLD_WINDOW_MINUTES = {h1};", f"HOLD_WINDOW_MINUTES = {h2};"),
        ),
        w.search(
            'CREATE TYPE "BookingStatus"',
            f"./{d.migration}/migration.sql\n",
            flags="-l",
            cwd="prisma/migrations",
        ),
    )
    w.step(
        w.pick(
            f"Hold is {h2} minutes now. The enum came in with `{d.migration}`.",
            f"Bumped the window to {h2} minutes. `BookingStatus` was created in migration "
            f"`{d.migration}`.",
        ),
        w.end(),
    )
    s.fact(
        "identifier",
        f"The migration that created the BookingStatus enum: {d.migration}",
        [d.migration],
    )

    # --- turn 4: drop the dashboard item, a bigger cap, quiet hours -----------------------------
    w.user(
        w.pick(
            "back from the ops sync. few things:\n"
            f"- forget the staff dashboard waitlist-position thing, {d.owner} is rebuilding "
            "that page from scratch anyway\n"
            f"- waitlist cap goes up to {c2} spots\n"
            f"- new rule: nobody gets an offer email between {q1} and {q2} studio local time. "
            f"if a seat frees up overnight keep the hold, but send the email at {q2} and start "
            "the clock from when it goes out",
            f"Ops meeting outcomes: (1) skip the position badges on the staff dashboard, "
            f"{d.owner} is redoing that screen; (2) raise the waitlist cap to {c2} spots; (3) "
            f"quiet hours: no offer emails from {q1} to {q2} in the studio's timezone. An "
            f"overnight cancellation still gets its hold, the email goes at {q2} and the window "
            "counts from then.",
        )
    )
    s.fact(
        "constraint",
        f"Quiet hours: no offer emails between {q1} and {q2} studio time; overnight offers go "
        f"out at {q2} and the hold runs from then.",
        [q1, q2],
    )
    w.step(
        w.pick("On it.", "Updating the goals, then the cap."),
        w.update_subgoal(4, status="ABORTED", log=f"dropped: {d.owner} is rebuilding the page"),
        w.add_subgoal(5, "IN_PROGRESS", plan="hold at once, email and clock start after quiet"),
        w.replace(config, (f"WAITLIST_CAP = {c1};", f"WAITLIST_CAP = {c2};")),
        w.read(list(FILLER_PATHS[6:8])),
    )
    s.fact("todo", f"Subgoal dropped: {objectives[3]}", [objectives[3]], required=False)
    s.fact(
        "changed_value",
        f"Waitlist cap: {c2} spots (was {c1}).",
        [f"{c2} spots"],
        stale=[f"{c1} spots"],
    )
    _, _, morning, got = _quiet_times(d)
    quiet_spec = _quiet_spec(d)
    open_fail = Failure(
        QUIET_TEST,
        "nextSendTime",
        d.open_test,
        f"AssertionError: expected '{got}' to be '{morning}' // Object.is equality",
        *_line_of(quiet_spec, f'toBe("{morning}")'),
    )
    w.step(
        w.pick(
            "Now the deferral itself, in its own module with a spec.",
            "Putting the quiet-hours maths in a small module and teaching offerSeatToNext to "
            "use it.",
        ),
        w.replace(
            config,
            (
                f"WAITLIST_CAP = {c2};\n",
                f"WAITLIST_CAP = {c2};\n"
                "/** No offer emails in this window, studio time. */\n"
                f'export const QUIET_HOURS = {{ start: "{q1}", end: "{q2}" }};\n',
            ),
        ),
        w.create(QUIET_PATH, "Work out when an offer email may go out", QUIET_MODULE),
        w.create(QUIET_TEST, "Spec the overnight and daytime cases", quiet_spec),
        w.replace(
            promote,
            (
                'import { HOLD_WINDOW_MINUTES } from "@/server/waitlist/config";',
                'import { HOLD_WINDOW_MINUTES } from "@/server/waitlist/config";\n'
                'import { nextSendTime } from "@/server/waitlist/quiet-hours";',
            ),
            (
                "    include: { member: true, classSession: true },\n",
                "    include: { member: true, classSession: { include: { studio: true } } },\n",
            ),
            (
                "  const expiresAt = new Date(now.getTime() + HOLD_WINDOW_MINUTES * 60_000);\n"
                "  const hold = await tx.waitlistHold.create({\n"
                "    data: { entryId: next.id, classSessionId, offeredAt: now, expiresAt },\n"
                "  });\n",
                "  const sendAt = nextSendTime(now, next.classSession.studio.timezone);\n"
                "  const expiresAt = new Date(sendAt.getTime() + HOLD_WINDOW_MINUTES * 60_000);\n"
                "  const hold = await tx.waitlistHold.create({\n"
                "    data: { entryId: next.id, classSessionId, offeredAt: sendAt, expiresAt },\n"
                "  });\n"
                "  if (sendAt > now) return hold; // emailed by the sweep once the night is over\n",
            ),
        ),
        w.run(
            "pnpm test",
            _vitest(w, [(PROMOTE_TEST, PROMOTE_SPECS, []), (QUIET_TEST, 2, [open_fail])]),
            exit_code=1,
            timeout_seconds=180,
        ),
    )
    s.fact(
        "test_status",
        f"pnpm test: 1 failed, {total3 - 1} passed (the overnight quiet-hours spec).",
        ["1 failed", f"{total3 - 1} passed"],
        stale=[f"{total1} passed"],
    )
    s.fact(
        "error_open",
        f"Still failing: '{d.open_test}': nextSendTime reads the clock in UTC, the quiet "
        "hours are in studio time.",
        [d.open_test],
    )
    night = _quiet_times(d)[0]
    answered = (
        "isn't deferred at all"
        if got == night
        else f"gets pushed to {got[11:16]} UTC, not {morning[11:16]} UTC"
    )
    w.step(
        w.pick(
            f"The overnight spec is red: 23:40 in {d.tz} {answered}, because `nextSendTime` "
            "compares the UTC clock (`getUTCHours`) with quiet hours that are in studio time. I "
            "can get the zone offset from `Intl.DateTimeFormat` (fine on our runtime) or pull in "
            "date-fns-tz. Which do you want?",
            f"One failure left, the overnight case: an offer at 23:40 studio time {answered}; "
            "the quiet window is in studio time but the code reads the clock in UTC. Options: "
            "work out the offset with Intl (no new deps) or add date-fns-tz. Your call.",
        ),
        w.end(),
    )

    # --- turn 5: the final hold, the double charge, a note for later ---------------------------
    w.user(
        w.pick(
            "don't add any deps for the timezone thing. actually just leave it, I'll deal with "
            f"it. {d.manager} again, last word on the hold: {h3} minutes. also support says a "
            "member got charged twice for the same class yesterday, the prod log is at "
            "tmp/prod-2026-11-13.log, can you find which class that was? and put a note down "
            "for later: backfill holds for classes that are already over capacity. not now, "
            "just track it",
            "No new dependencies for the tz fix; park it, I'll take it from here. Hold window: "
            f"{d.manager} settled on {h3} minutes, and that's final. Then: support says someone "
            "was double-charged for one class yesterday. The log dump is in "
            "tmp/prod-2026-11-13.log, tell me the class id. And add a reminder to backfill "
            "holds for already-overbooked classes; don't start on it.",
        )
    )
    w.step(
        w.pick(
            "Setting the window, parking the backfill as a subgoal, then the log.",
            "Window first, a subgoal for the backfill, then the charge events.",
        ),
        w.replace(config, (f"HOLD_WINDOW_MINUTES = {h2};", f"HOLD_WINDOW_MINUTES = {h3};")),
        w.add_subgoal(6, "NOT_STARTED", log="requested for later, not started"),
        w.search("credits.charged", "", exit_code=1, cwd="tmp"),
    )
    s.fact(
        "changed_value",
        f"Hold window: {h3} minutes (was {h1}, then {h2}).",
        [f"{h3} minutes"],
        stale=[f"{h1} minutes", f"{h2} minutes"],
    )
    s.fact("todo", f"Subgoal added for later: {objectives[5]}", [objectives[5]])
    s.fact("todo", f"Subgoal in progress: {objectives[4]}", [objectives[4]])
    log, when_line = _prod_log(w)
    w.step(
        w.pick(
            "tmp/ is gitignored, so ripgrep skips it. Grepping the file directly:",
            "No hits because rg honours .gitignore and tmp/ is ignored. Plain grep then.",
        ),
        w.run('grep -n \'"msg":"credits.charged"\' tmp/prod-2026-11-13.log', log),
    )
    w.step(
        w.pick(
            f"It's class `{d.class_id}` ({d.title}, {when_line}). Member `{d.member_id}` has two "
            "`credits.charged` lines for it under a second apart: one `waitlist-promotion` from "
            "the legacy helper and one `manual-rebook`. The new flow has no charge without a "
            "confirm, so that path is gone.",
            f"Found it: `{d.class_id}`, the {d.title} class ({when_line}). The same member "
            f"(`{d.member_id}`) was charged by the legacy waitlist promotion and again by a "
            "manual rebook moments later.",
        ),
        w.end(),
    )
    s.fact("identifier", f"The double-charged class: {d.class_id}", [d.class_id])

    # --- turn 6: ship it as a draft ------------------------------------------------------------
    w.user(
        w.pick(
            f"ok leave the quiet hours test red, I'm pairing with {d.buddy} on the timezone "
            "part tomorrow. put all this on a feat/waitlist-holds branch, commit, push, and open "
            "a draft PR",
            f"Fine to leave that one failing test, {d.buddy} and I will sort the tz handling "
            "tomorrow. Branch feat/waitlist-holds, commit, push, draft PR please.",
        )
    )
    sha = w.safe(lambda: "".join(w.frng.choice("0123456789abcdef") for _ in range(7)))
    created = [*w.migrations, confirm, config, PROMOTE_TEST, promote, QUIET_TEST, QUIET_PATH]
    w.step(
        w.run(
            "git checkout -b feat/waitlist-holds && git add -A && git commit -m "
            '"feat(waitlist): hold freed seats for the next member until they confirm"',
            _commit(w, sha, created, [legacy]),
        )
    )
    w.step(w.run("git push -u origin feat/waitlist-holds", _push(w)))
    w.step(
        w.run(
            'gh pr create --draft --title "Waitlist: hold freed seats until the member confirms" '
            '--body "Replaces the auto-booking waitlist helper with held seats and confirm links. '
            'Overnight email timing is still WIP."',
            f"\nCreating draft pull request for feat/waitlist-holds into main in "
            f"{d.org}/{d.slug}-web\n\nhttps://github.com/{d.org}/{d.slug}-web/pull/{d.pr}\n",
        )
    )
    final = w.pick(
        f"Pushed, and draft PR #{d.pr} is up: https://github.com/{d.org}/{d.slug}-web/pull/{d.pr}",
        f"Branch is pushed; draft PR #{d.pr} is open at "
        f"https://github.com/{d.org}/{d.slug}-web/pull/{d.pr}",
    )
    w.step(final, w.end())
    s.fact("last_message", final, [f"#{d.pr}"])
    return w


# --- outputs the story's commands print ---------------------------------------------------------


def _migrate(w: Writer, name: str) -> str:
    d = w.d
    stamp = w.safe(
        lambda: (
            f"2026111{w.frng.randint(3, 4)}{w.frng.randint(10, 18)}"
            f"{w.frng.randint(10, 59)}{w.frng.randint(10, 59)}"
        )
    )
    w.migrations.append(f"prisma/migrations/{stamp}_{name}/migration.sql")
    return (
        "Environment variables loaded from .env\n"
        "Prisma schema loaded from prisma/schema.prisma\n"
        f'Datasource "db": PostgreSQL database "{d.slug}_dev", schema "public" at '
        '"localhost:5432"\n\n'
        f"Applying migration `{stamp}_{name}`\n\n"
        "The following migration(s) have been created and applied from new schema changes:\n\n"
        "migrations/\n"
        f"  └─ {stamp}_{name}/\n"
        "    └─ migration.sql\n\n"
        "Your database is now in sync with your schema.\n\n"
        f"✔ Generated Prisma Client (v5.14.0) to ./node_modules/.pnpm/@prisma+client@5.14.0"
        f"_prisma@5.14.0/node_modules/@prisma/client in {w.frng.randint(120, 400)}ms\n\n"
    )


def _tsc_error(promote: str) -> str:
    line, source = _line_of(PROMOTE, ".toSorted(")
    column = source.index(".toSorted(") + 2
    return (
        f"{promote}({line},{column}): error TS2550: Property 'toSorted' does not exist on type "
        "'({ member: { id: string; studioId: string; email: string; name: string; credits: "
        "number; }; classSession: { id: string; studioId: string; title: string; startsAt: "
        "Date; capacity: number; }; } & { id: string; memberId: string; classSessionId: string; "
        "position: number; createdAt: Date; })[]'. Do you need to change your target library? "
        "Try changing the 'lib' compiler option to 'es2023' or later.\n"
    )


def _review(promote: str, cancel: str, confirm: str) -> str:
    return (
        "Hooks: no file change hooks are configured for this project, so nothing ran. "
        "Consider adding `pnpm tsc --noEmit` under fileChangeHooks in codebuff.json.\n\n"
        "**prisma/schema.prisma**: fine. `entryId @unique` enforces one hold per entry, and the "
        "index covers the sweep's where clause.\n\n"
        f"**{promote}**\n"
        "- `offerSeatToNext` skips entries that already have a hold, so a member whose hold "
        "lapsed is not offered the seat again. Matches the spec.\n"
        "- `withSerializableRetry` retries immediately; a short jittered pause would cut "
        "repeat conflicts under load. Not blocking.\n\n"
        f"**{cancel}**: refund logic untouched, good.\n\n"
        f"**{confirm}**: checks the member, the status and the expiry (through the sweep) "
        "before booking. It opens its own transaction and skips the retry helper; "
        "worth aligning later.\n\n"
        "No missing imports, nothing left over from the legacy helper.\n\n"
        + tool_call("end_turn", {})
    )


def _prod_log(w: Writer) -> tuple[str, str]:
    """grep -n output of a day's charge events; one member is charged twice for one class."""
    d = w.d
    hostname = f"{d.slug}-web-{w.safe(lambda: ''.join(w.frng.choice(_ALNUM) for _ in range(8)))}"
    lines = []
    lineno = w.frng.randint(40, 300)
    classes = [w.cuid() for _ in range(9)]
    reasons = ("class-booking", "class-booking", "class-booking", "waitlist-promotion")
    dup_at = w.frng.randint(4, 8)
    when_line = ""
    clocks = sorted(w.hms(6, 21) for _ in range(11))
    for k, clock in enumerate(clocks):
        lineno += w.frng.randint(3, 120)
        ms = w.frng.randint(100, 999)
        if k == dup_at:
            for reason, extra in (("waitlist-promotion", 0), ("manual-rebook", 1)):
                ms2 = min(999, ms + extra * w.frng.randint(120, 600))
                lines.append(
                    f'{lineno + extra}:{{"level":30,"time":"2026-11-13T{clock}.{ms2:03d}Z",'
                    f'"pid":{w.frng.randint(20, 90)},"hostname":"{hostname}",'
                    f'"msg":"credits.charged","memberId":"{d.member_id}",'
                    f'"classSessionId":"{d.class_id}","amount":1,"reason":"{reason}"}}'
                )
            when_line = f"charged at {clock} UTC on Nov 13"
            lineno += 1
            continue
        lines.append(
            f'{lineno}:{{"level":30,"time":"2026-11-13T{clock}.{ms:03d}Z",'
            f'"pid":{w.frng.randint(20, 90)},"hostname":"{hostname}",'
            f'"msg":"credits.charged","memberId":"{w.cuid()}",'
            f'"classSessionId":"{w.frng.choice(classes)}","amount":1,'
            f'"reason":"{w.frng.choice(reasons)}"}}'
        )
    return "\n".join(lines) + "\n", when_line


def _commit(w: Writer, sha: str, created: list[str], deleted: list[str]) -> str:
    modes = sorted([(p, "create") for p in created] + [(p, "delete") for p in deleted])
    return (
        "Switched to a new branch 'feat/waitlist-holds'\n"
        f"[feat/waitlist-holds {sha}] feat(waitlist): hold freed seats for the next member until "
        "they confirm\n"
        f" {len(created) + len(deleted) + 4} files changed, "
        f"{w.frng.randint(380, 520)} insertions(+), "
        f"{w.frng.randint(40, 80)} deletions(-)\n"
        + "".join(f" {mode} mode 100644 {path}\n" for path, mode in modes)
    )


def _push(w: Writer) -> str:
    d = w.d
    objects = w.frng.randint(24, 40)
    return (
        f"Enumerating objects: {objects}, done.\n"
        f"Counting objects: 100% ({objects}/{objects}), done.\n"
        "Delta compression using up to 8 threads\n"
        f"Compressing objects: 100% ({objects - 9}/{objects - 9}), done.\n"
        f"Writing objects: 100% ({objects - 8}/{objects - 8}), "
        f"{w.frng.randint(6, 14)}.{w.frng.randint(10, 99)} KiB | "
        f"{w.frng.randint(2, 9)}.{w.frng.randint(10, 99)} MiB/s, done.\n"
        f"Total {objects - 8} (delta {w.frng.randint(8, 16)}), reused 0 (delta 0), pack-reused 0\n"
        "remote: \n"
        "remote: Create a pull request for 'feat/waitlist-holds' on GitHub by visiting:\n"
        f"remote:      https://github.com/{d.org}/{d.slug}-web/pull/new/feat/waitlist-holds\n"
        "remote: \n"
        f"To github.com:{d.org}/{d.slug}-web.git\n"
        " * [new branch]      feat/waitlist-holds -> feat/waitlist-holds\n"
        "branch 'feat/waitlist-holds' set up to track 'origin/feat/waitlist-holds'.\n"
    )


# --- entry point ------------------------------------------------------------------------------


def _size(w: Writer) -> int:
    """The characters the model reads: system prompt and every message's text."""
    total = len(w.s.system)
    for m in w.s.messages:
        content = m["content"]
        total += len(content) if isinstance(content, str) else sum(len(p["text"]) for p in content)
    return total


def write(seed: int, tokens: int) -> EvalSession:
    """A Codebuff session of about `tokens` tokens."""
    base = _size(_tell(seed, 0))
    want = int(tokens * CHARS_PER_TOKEN)
    w = _tell(seed, max(0, want - base))
    return finish_session(w.s, family=FAMILY, seed=seed)
