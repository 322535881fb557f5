"""windsurfstory-style: a Windsurf Cascade session with a story of its own.

Cascade's tools as its published tool schemas give them (PascalCase arguments, each call led by
an optional `toolSummary`): `run_command` {CommandLine, Cwd, Blocking, SafeToAutoRun,
WaitMsBeforeAsync}, `command_status` {CommandId, OutputCharacterCount, WaitDurationSeconds},
`view_file` {AbsolutePath, StartLine, EndLine, IncludeSummaryOfOtherLines}, `write_to_file`
{TargetFile, CodeContent, EmptyFile}, `replace_file_content` {TargetFile, CodeMarkdownLanguage,
Instruction, ReplacementChunks: [{AllowMultiple, TargetContent, ReplacementContent}]},
`grep_search` {SearchPath, Query, MatchPerLine, Includes, IsRegex, CaseInsensitive},
`find_by_name` {SearchDirectory, Pattern, Type}, `list_dir` {DirectoryPath}, `create_memory`
{Id, Title, Content, CorpusNames, Tags, Action, UserTriggered} and the `todo_list` tool {todos:
[{id, content, status, priority}]}. Results read as Cascade's step templates write them: "The
command completed successfully." / "The command failed with exit code: N" with the output after
"Output:", "Background command ID: …", a file view with its "File Path:" / "Total Lines:" header
and numbered `N: ` lines, "Created file file://… with requested content.", an edit's diff between
[diff_block_start] and [diff_block_end], grep matches as JSON lines. Every user turn arrives in
<USER_REQUEST> with the editor state in <ADDITIONAL_METADATA>. Cascade has no delete or move tool:
files go with `rm` / `git rm`, which it never auto-runs.

The story: a Kotlin/Ktor veterinary-clinic API (Exposed, Flyway, Postgres, JUnit 5 through
Gradle, detekt) replaces a nightly SMS job with a reminder per appointment, sent some hours
ahead and never inside a clinic's quiet hours. Names and values are drawn per seed.

Written apart from the compaction strategies: it never imports them.
"""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    code_file,
    finish_session,
    hexid,
    ident,
)
from compaction.eval.sessions import EvalSession

FAMILY = "windsurfstory-style"

#: Words of Cascade's own, as its system prompt puts them (paraphrased, not copied).
SYSTEM_PROMPT = (
    "You are Cascade, an agentic AI coding assistant built by the Windsurf team. You "
    "pair-program with the USER inside their IDE: you can read and change their workspace, "
    "run commands on their machine and keep notes that outlive this conversation.\n"
    "\n"
    "<user_information>\n"
    "The USER's OS version is mac.\n"
    "The USER has 1 active workspaces, each defined by a URI and a CorpusName. Multiple URIs "
    "potentially map to the same CorpusName. The mapping is shown as follows in the format "
    "[URI] -> [CorpusName]:\n"
    "{root} -> {root}\n"
    "</user_information>\n"
    "\n"
    "<tool_calling>\n"
    "Call a tool only when it is needed, and say why just before you call it. If you say you "
    "will use a tool, call it next. Follow each tool's schema exactly. Some tools run "
    "asynchronously: stop making calls when you need their output first.\n"
    "</tool_calling>\n"
    "\n"
    "<making_code_changes>\n"
    "Never paste code to the USER unless asked: change files with the edit tools, giving "
    "TargetFile first. Code you write must run as it stands, imports included. After a "
    "change, summarize it briefly and run what proves it works.\n"
    "</making_code_changes>\n"
    "\n"
    "<running_commands>\n"
    "Never put `cd` in a command: give the directory as Cwd. Judge for every command whether "
    "it is safe to run without the USER's approval; anything that deletes files, mutates "
    "state, installs dependencies or makes external requests is not, whatever the USER says.\n"
    "</running_commands>\n"
    "\n"
    "<memory_system>\n"
    "You have a persistent memory database. When the USER states a preference or a rule for "
    "the project, save it with create_memory, and heed memories shown to you.\n"
    "</memory_system>\n"
    "\n"
    "<task_management>\n"
    "Keep a todo list with the todo_list tool for work of several steps; mark each item "
    "completed as soon as it is done.\n"
    "</task_management>\n"
    "\n"
    "<communication_style>\n"
    "Be terse and direct. Refer to the USER in the second person and to yourself in the "
    "first. Use markdown, and backticks for file, function and class names.\n"
    "</communication_style>"
)

# --- per-seed world -----------------------------------------------------------------------------

_APPS = (("pawpost", "PawPost"), ("vetnudge", "VetNudge"), ("clinicbell", "ClinicBell"),
         ("furcast", "FurCast"), ("petchime", "PetChime"), ("tailtime", "TailTime"))  # fmt: skip
_ORGS = ("larkvale", "tidewater", "hollis", "brackenridge", "oakmere")
_USERS = ("maren", "tobi", "ines", "kofi", "radka", "lucia")
_COLLEAGUES = ("Priya", "Jonas", "Aoife", "Mateus", "Wen", "Selma")
_CLINICS = ("Riverside", "Elm Street", "Harbourview", "Northgate", "Cedar Hill", "Millbrook")
_VENDORS = ("Twilio", "Vonage", "MessageBird", "Sinch")
_TABLES = ("reminder_outbox", "reminder_queue", "sms_outbox", "nudge_outbox")
#: (first, second, third) reminder lead times: none stands inside another.
_LEADS = (("24 hours", "36 hours", "48 hours"), ("18 hours", "30 hours", "42 hours"),
          ("20 hours", "32 hours", "44 hours"), ("12 hours", "28 hours", "40 hours"))  # fmt: skip
#: (first, later) start of quiet hours, in the clinic's local time.
_QUIET = (("21:00", "20:30"), ("22:00", "21:30"), ("20:00", "19:30"), ("21:30", "20:45"))
#: Clinic zone → (the spring-forward morning, its UTC offset), 2026.
_ZONES = {
    "Europe/Berlin": ("2026-03-29", "+02:00"),
    "Europe/Dublin": ("2026-03-29", "+01:00"),
    "Europe/Lisbon": ("2026-03-29", "+01:00"),
    "America/Chicago": ("2026-03-08", "-05:00"),
    "America/Denver": ("2026-03-08", "-06:00"),
}
_OTHER_MODULES = ("clinics", "owners", "patients", "vaccinations", "invoicing", "inventory",
                  "staff", "rooms", "lab", "prescriptions")  # fmt: skip

DST_TEST = "spring-forward night keeps the reminder out of quiet hours"


@dataclass(frozen=True)
class _World:
    app: str
    brand: str
    org: str
    user: str
    colleague: str
    clinic: str
    vendor: str
    table: str
    leads: tuple[str, str, str]
    quiet: tuple[str, str]
    zone: str
    ticket: str
    prod_hash: str
    branch_hash: str
    migration: int
    pr: int
    first_total: int
    last_total: int

    @property
    def root(self) -> str:
        return f"/Users/{self.user}/code/{self.app}-api"

    @property
    def pkg(self) -> str:
        return f"com.{self.org}.{self.app}"

    @property
    def main(self) -> str:
        return f"src/main/kotlin/com/{self.org}/{self.app}"

    @property
    def tests(self) -> str:
        return f"src/test/kotlin/com/{self.org}/{self.app}"

    @property
    def migration_path(self) -> str:
        return f"src/main/resources/db/migration/V{self.migration}__{self.table}.sql"

    @property
    def misnamed_migration(self) -> str:
        return f"src/main/resources/db/migration/V{self.migration}_{self.table}.sql"


def _world(seed: int) -> _World:
    rng = random.Random(f"{FAMILY}:{seed}")
    app, brand = rng.choice(_APPS)
    prod = hexid(rng, 7)
    branch = hexid(rng, 7)
    while branch == prod:
        branch = hexid(rng, 7)
    first = rng.randint(14, 19)
    return _World(
        app=app,
        brand=brand,
        org=rng.choice(_ORGS),
        user=rng.choice(_USERS),
        colleague=rng.choice(_COLLEAGUES),
        clinic=rng.choice(_CLINICS),
        vendor=rng.choice(_VENDORS),
        table=rng.choice(_TABLES),
        leads=rng.choice(_LEADS),
        quiet=rng.choice(_QUIET),
        zone=rng.choice(sorted(_ZONES)),
        ticket=f"{brand[:3].upper()}-{rng.randint(210, 890)}",
        prod_hash=prod,
        branch_hash=branch,
        migration=rng.randint(6, 14),
        pr=rng.randint(118, 486),
        first_total=first,
        last_total=first + rng.randint(6, 9),
    )


# --- Cascade's tools ----------------------------------------------------------------------------


def _numbered(lines: Sequence[str], start: int) -> str:
    return "\n".join(f"{start + i}: {line}" for i, line in enumerate(lines))


def _diff(old: str, new: str) -> str:
    """The hunks of a unified diff, three lines of context, without the file header."""
    out = difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3)
    return "\n".join(line for line in out if not line.startswith(("---", "+++")))


class _Cascade:
    """Cascade's tool calls and the step texts its tools answer with."""

    def __init__(self, session: Session, world: _World) -> None:
        self.s = session
        self.w = world
        self.files: dict[str, str] = {}
        self._commands = 0

    def abs(self, rel: str) -> str:
        return f"{self.w.root}/{rel}" if rel else self.w.root

    # commands
    def run(
        self,
        summary: str,
        command: str,
        output: str,
        *,
        code: int = 0,
        safe: bool = True,
        text: str = "",
        filler: bool = False,
    ) -> None:
        arguments = {
            "toolSummary": summary,
            "CommandLine": command,
            "Cwd": self.w.root,
            "Blocking": True,
            "SafeToAutoRun": safe,
        }
        if code:
            result = f"The command failed with exit code: {code}\nOutput:\n{output}"
        elif output:
            result = f"The command completed successfully.\nOutput:\n{output}"
        else:
            result = "The command completed successfully.\nNo output"
        self.s.call("run_command", arguments, result, text=text, filler=filler)

    def run_background(self, summary: str, command: str, snapshot: str, *, text: str) -> str:
        self._commands += 1
        command_id = f"{self.s.rng.randrange(16**8):08x}-{self._commands:04d}"
        arguments = {
            "toolSummary": summary,
            "CommandLine": command,
            "Cwd": self.w.root,
            "Blocking": False,
            "SafeToAutoRun": True,
            "WaitMsBeforeAsync": 4000,
        }
        result = f"Background command ID: {command_id}\nOutput snapshot:\n{snapshot}"
        self.s.call("run_command", arguments, result, text=text)
        return command_id

    def status(self, command_id: str, output: str, *, code: int, text: str) -> None:
        arguments = {
            "toolSummary": "checking test run",
            "CommandId": command_id,
            "OutputCharacterCount": 6000,
            "WaitDurationSeconds": 60,
        }
        result = f"Status: DONE\nExit code: {code}\nOutput:\n{output[-6000:]}"
        self.s.call("command_status", arguments, result, text=text)

    # files
    def view(
        self,
        summary: str,
        rel: str,
        content: str | None = None,
        *,
        start: int = 1,
        end: int | None = None,
        text: str = "",
        filler: bool = False,
    ) -> None:
        body = self.files[rel] if content is None else content
        if content is not None and not filler:
            self.files[rel] = content
        lines = body.split("\n")
        last = len(lines) if end is None else min(end, len(lines))
        arguments = {
            "toolSummary": summary,
            "AbsolutePath": self.abs(rel),
            "StartLine": start,
            "EndLine": last if end is None else end,
            "IncludeSummaryOfOtherLines": False,
        }
        whole = start == 1 and last == len(lines)
        tail = (
            "The above content shows the entire, complete file contents of the requested file."
            if whole
            else "The above content does NOT show the entire file contents. If you need to view "
            "any lines of the file which were not shown to complete your task, call this tool "
            "again to view those lines."
        )
        result = (
            f"File Path: `file://{self.abs(rel)}`\nTotal Lines: {len(lines)}\n"
            f"Total Bytes: {len(body.encode())}\nShowing lines {start} to {last}\n"
            "The following code has been modified to include a line number before every line, "
            "in the format: <line_number>: <original_line>. Please note that any changes "
            "targeting the original code should remove the line number, colon, and leading "
            f"space.\n{_numbered(lines[start - 1 : last], start)}\n{tail}"
        )
        self.s.call("view_file", arguments, result, text=text, filler=filler)

    def write(self, summary: str, rel: str, content: str, *, text: str = "") -> None:
        self.files[rel] = content
        arguments = {
            "toolSummary": summary,
            "TargetFile": self.abs(rel),
            "CodeContent": content,
            "EmptyFile": False,
        }
        result = f"Created file file://{self.abs(rel)} with requested content."
        self.s.call("write_to_file", arguments, result, text=text)

    def replace(
        self,
        summary: str,
        rel: str,
        instruction: str,
        chunks: Sequence[tuple[str, str]],
        *,
        language: str = "kotlin",
        text: str = "",
    ) -> None:
        old = self.files[rel]
        new = old
        for target, replacement in chunks:
            assert new.count(target) == 1, (rel, target)
            new = new.replace(target, replacement)
        self.files[rel] = new
        arguments = {
            "toolSummary": summary,
            "TargetFile": self.abs(rel),
            "CodeMarkdownLanguage": language,
            "Instruction": instruction,
            "ReplacementChunks": [
                {"AllowMultiple": False, "TargetContent": t, "ReplacementContent": r}
                for t, r in chunks
            ],
        }
        result = (
            f"The following changes were made by the replace_file_content tool to: "
            f"{self.abs(rel)}. If relevant, proactively run terminal commands to execute this "
            "code for the USER. Don't ask for permission.\n"
            f"[diff_block_start]\n{_diff(old, new)}\n[diff_block_end]"
        )
        self.s.call("replace_file_content", arguments, result, text=text)

    def line_of(self, rel: str, needle: str) -> int:
        for number, line in enumerate(self.files[rel].split("\n"), 1):
            if needle in line:
                return number
        raise AssertionError((rel, needle))

    # searching
    def grep(
        self,
        summary: str,
        under: str,
        query: str,
        hits: Sequence[tuple[str, int, str]],
        *,
        includes: Sequence[str] = (),
        text: str = "",
        filler: bool = False,
    ) -> None:
        arguments = {
            "toolSummary": summary,
            "SearchPath": self.abs(under),
            "Query": query,
            "MatchPerLine": True,
            "Includes": list(includes),
            "IsRegex": False,
            "CaseInsensitive": False,
        }
        result = "\n".join(
            json.dumps({"Filename": self.abs(rel), "LineNumber": n, "LineContent": line})
            for rel, n, line in hits[:50]
        )
        self.s.call("grep_search", arguments, result or "No results found", text=text,
                    filler=filler)  # fmt: skip

    def find(
        self,
        summary: str,
        under: str,
        pattern: str,
        found: Sequence[tuple[str, int]],
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        arguments = {
            "toolSummary": summary,
            "SearchDirectory": self.abs(under),
            "Pattern": pattern,
            "Type": "file",
        }
        rows = [f"Found {len(found)} results"]
        for rel, size in found:
            rows.append(f"{rel}  file  {size} bytes  modified {_stamp(self.s.rng)}")
        self.s.call("find_by_name", arguments, "\n".join(rows), text=text, filler=filler)

    def ls(
        self,
        summary: str,
        rel: str,
        entries: Sequence[tuple[str, int | None]],
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """`entries`: (name, children) for a folder, (name, None) for a file."""
        lines = []
        folders = files = 0
        for name, children in entries:
            if children is None:
                files += 1
                size = self.s.rng.randint(180, 14000)
                lines.append(json.dumps({"name": name, "sizeBytes": str(size)},
                                        separators=(",", ":")))  # fmt: skip
            else:
                folders += 1
                lines.append(json.dumps({"name": name, "isDir": True, "numChildren": children},
                                        separators=(",", ":")))  # fmt: skip
        lines.append("")
        lines.append(
            f"Summary: This directory contains {folders} subdirectories and {files} files."
        )
        arguments = {"toolSummary": summary, "DirectoryPath": self.abs(rel)}
        self.s.call("list_dir", arguments, "\n".join(lines), text=text, filler=filler)

    # plan and memory
    def todos(self, items: Sequence[tuple[str, str, str, str]], *, text: str = "") -> None:
        """(id, content, status, priority)."""
        arguments = {
            "toolSummary": "updating todo list",
            "todos": [
                {"id": i, "content": c, "status": st, "priority": p} for i, c, st, p in items
            ],
        }
        self.s.call("todo_list", arguments, "Updated the todo list.", text=text)

    def memory(self, title: str, content: str, tags: Sequence[str], *, text: str) -> None:
        memory_id = f"{self.s.rng.randrange(16**8):08x}-{self.s.rng.randrange(16**4):04x}"
        arguments = {
            "toolSummary": "saving project rule",
            "Id": "",
            "Title": title,
            "Content": content,
            "CorpusNames": [self.w.root],
            "Tags": list(tags),
            "Action": "create",
            "UserTriggered": True,
        }
        self.s.call("create_memory", arguments, f"Created memory {memory_id}: {title}", text=text)


def _stamp(rng: random.Random) -> str:
    # Minutes and seconds stay under 19 so that no clock value the story sets shows up here.
    return (
        f"2026-0{rng.randint(1, 3)}-{rng.randint(10, 28)}T{rng.randint(9, 18):02d}:"
        f"{rng.randint(1, 18):02d}:{rng.randint(1, 18):02d}Z"
    )


# --- the project's files ------------------------------------------------------------------------


def _build_gradle(w: _World) -> str:
    return f"""import io.gitlab.arturbosch.detekt.Detekt
import org.gradle.api.tasks.testing.logging.TestExceptionFormat

plugins {{
    kotlin("jvm") version "1.9.24"
    kotlin("plugin.serialization") version "1.9.24"
    id("io.ktor.plugin") version "2.3.12"
    id("io.gitlab.arturbosch.detekt") version "1.23.6"
}}

group = "{w.pkg}"
version = "0.42.0"

application {{
    mainClass.set("io.ktor.server.netty.EngineMain")
}}

repositories {{
    mavenCentral()
}}

val exposedVersion = "0.52.0"

dependencies {{
    implementation("io.ktor:ktor-server-core-jvm")
    implementation("io.ktor:ktor-server-netty-jvm")
    implementation("io.ktor:ktor-server-content-negotiation-jvm")
    implementation("io.ktor:ktor-serialization-kotlinx-json-jvm")
    implementation("io.ktor:ktor-server-call-logging-jvm")
    implementation("io.ktor:ktor-server-status-pages-jvm")
    implementation("io.ktor:ktor-client-cio-jvm")
    implementation("org.jetbrains.exposed:exposed-core:$exposedVersion")
    implementation("org.jetbrains.exposed:exposed-jdbc:$exposedVersion")
    implementation("org.jetbrains.exposed:exposed-java-time:$exposedVersion")
    implementation("org.flywaydb:flyway-database-postgresql:10.15.0")
    implementation("org.postgresql:postgresql:42.7.3")
    implementation("com.zaxxer:HikariCP:5.1.0")
    implementation("io.micrometer:micrometer-registry-prometheus:1.13.1")
    implementation("ch.qos.logback:logback-classic:1.5.6")

    testImplementation("io.ktor:ktor-server-tests-jvm")
    testImplementation("org.jetbrains.kotlin:kotlin-test-junit5")
    testImplementation("org.testcontainers:postgresql:1.19.8")
    testImplementation("org.testcontainers:junit-jupiter:1.19.8")
}}

kotlin {{
    jvmToolchain(21)
}}

tasks.test {{
    useJUnitPlatform()
    testLogging {{
        events("failed")
        exceptionFormat = TestExceptionFormat.FULL
    }}
}}

detekt {{
    config.setFrom(files("config/detekt.yml"))
    buildUponDefaultConfig = true
}}

tasks.withType<Detekt>().configureEach {{
    jvmTarget = "21"
}}"""


def _application_conf(w: _World) -> str:
    return f"""ktor {{
    deployment {{
        port = 8080
        port = ${{?PORT}}
    }}
    application {{
        modules = [ {w.pkg}.ApplicationKt.module ]
    }}
}}

database {{
    url = "jdbc:postgresql://localhost:5432/{w.app}"
    url = ${{?DATABASE_URL}}
    user = "{w.app}"
    user = ${{?DATABASE_USER}}
    password = ${{?DATABASE_PASSWORD}}
    maxPoolSize = 10
}}

sms {{
    provider = "{w.vendor.lower()}"
    sender = "{w.brand}"
    apiKey = ${{?SMS_API_KEY}}
    baseUrl = ${{?SMS_BASE_URL}}
}}"""


def _application_kt(w: _World) -> str:
    return f"""package {w.pkg}

import {w.pkg}.plugins.configureDatabase
import {w.pkg}.plugins.configureMonitoring
import {w.pkg}.plugins.configureRouting
import {w.pkg}.plugins.configureSerialization
import {w.pkg}.plugins.configureStatusPages
import {w.pkg}.reminders.NightlyReminderJob
import io.ktor.server.application.Application
import io.ktor.server.netty.EngineMain

fun main(args: Array<String>) = EngineMain.main(args)

fun Application.module() {{
    val db = configureDatabase()
    configureSerialization()
    configureMonitoring()
    configureStatusPages()
    configureRouting(db)
    NightlyReminderJob(db, environment.config).schedule(this)
}}"""


def _nightly_job(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import {w.pkg}.appointments.Appointments
import {w.pkg}.billing.sms.SmsGateway
import {w.pkg}.owners.Owners
import io.ktor.server.application.Application
import io.ktor.server.config.ApplicationConfig
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import org.jetbrains.exposed.sql.Database
import org.jetbrains.exposed.sql.and
import org.jetbrains.exposed.sql.selectAll
import org.jetbrains.exposed.sql.transactions.transaction
import org.slf4j.LoggerFactory
import java.time.Duration
import java.time.LocalDate
import java.time.LocalDateTime
import java.time.LocalTime

/** Texts every owner with an appointment tomorrow, once a day at nine. */
class NightlyReminderJob(private val db: Database, config: ApplicationConfig) {{
    private val log = LoggerFactory.getLogger(NightlyReminderJob::class.java)
    private val gateway = SmsGateway.from(config.config("sms"))

    fun schedule(app: Application) {{
        app.launch {{
            while (true) {{
                delay(untilNine().toMillis())
                runCatching {{ sendForTomorrow() }}
                    .onFailure {{ log.error("nightly reminders failed", it) }}
            }}
        }}
    }}

    private fun untilNine(): Duration {{
        val now = LocalDateTime.now()
        val nine = now.toLocalDate().atTime(LocalTime.of(9, 0))
        return Duration.between(now, if (now.isBefore(nine)) nine else nine.plusDays(1))
    }}

    private fun sendForTomorrow() = transaction(db) {{
        val tomorrow = LocalDate.now().plusDays(1)
        (Appointments innerJoin Owners)
            .selectAll()
            .where {{ (Appointments.day eq tomorrow) and (Appointments.cancelled eq false) }}
            .forEach {{ row ->
                val pet = row[Appointments.petName]
                gateway.send(row[Owners.phone], "Reminder: $pet has an appointment tomorrow.")
                log.info("reminder sent to {{}}", row[Owners.phone])
            }}
    }}
}}"""


def _appointment_repository(w: _World) -> str:
    return f"""package {w.pkg}.appointments

import {w.pkg}.clinics.Clinics
import org.jetbrains.exposed.sql.Database
import org.jetbrains.exposed.sql.ResultRow
import org.jetbrains.exposed.sql.andWhere
import org.jetbrains.exposed.sql.insertAndGetId
import org.jetbrains.exposed.sql.selectAll
import org.jetbrains.exposed.sql.transactions.transaction
import org.jetbrains.exposed.sql.update
import java.time.Instant

class AppointmentRepository(private val db: Database) {{

    fun find(id: Long): Appointment? = transaction(db) {{
        Appointments.selectAll().where {{ Appointments.id eq id }}.singleOrNull()?.toAppointment()
    }}

    fun forClinic(clinicId: Long, from: Instant, until: Instant): List<Appointment> =
        transaction(db) {{
            Appointments.selectAll()
                .where {{ Appointments.clinicId eq clinicId }}
                .andWhere {{ Appointments.startsAt.between(from, until) }}
                .orderBy(Appointments.startsAt)
                .map {{ it.toAppointment() }}
        }}

    fun book(request: BookingRequest): Appointment = transaction(db) {{
        val id = Appointments.insertAndGetId {{
            it[clinicId] = request.clinicId
            it[ownerId] = request.ownerId
            it[petName] = request.petName
            it[startsAt] = request.startsAt
            it[day] = request.localDay
            it[reason] = request.reason
            it[cancelled] = false
        }}.value
        find(id)!!
    }}

    fun reschedule(id: Long, startsAt: Instant): Appointment? = transaction(db) {{
        val changed = Appointments.update({{ Appointments.id eq id }}) {{
            it[Appointments.startsAt] = startsAt
        }}
        if (changed == 0) null else find(id)
    }}

    fun cancel(id: Long): Boolean = transaction(db) {{
        Appointments.update({{ Appointments.id eq id }}) {{
            it[cancelled] = true
        }} > 0
    }}

    private fun ResultRow.toAppointment() = Appointment(
        id = this[Appointments.id].value,
        clinicId = this[Appointments.clinicId],
        ownerId = this[Appointments.ownerId],
        petName = this[Appointments.petName],
        startsAt = this[Appointments.startsAt],
        reason = this[Appointments.reason],
        cancelled = this[Appointments.cancelled],
    )
}}"""


def _sms_gateway(w: _World) -> str:
    return f"""package {w.pkg}.billing.sms

import io.ktor.client.HttpClient
import io.ktor.client.engine.cio.CIO
import io.ktor.client.request.forms.submitForm
import io.ktor.http.parameters
import io.ktor.server.config.ApplicationConfig
import kotlinx.coroutines.runBlocking

/** {w.vendor} client used by invoicing and dunning. Owned by payments: see CODEOWNERS. */
class SmsGateway(
    private val baseUrl: String,
    private val apiKey: String,
    private val sender: String,
) {{
    private val http = HttpClient(CIO)

    fun send(to: String, body: String) = runBlocking {{
        http.submitForm(
            url = "$baseUrl/messages",
            formParameters = parameters {{
                append("to", to)
                append("from", sender)
                append("body", body)
                append("key", apiKey)
            }},
        )
    }}

    companion object {{
        fun from(config: ApplicationConfig) = SmsGateway(
            baseUrl = config.property("baseUrl").getString(),
            apiKey = config.property("apiKey").getString(),
            sender = config.property("sender").getString(),
        )
    }}
}}"""


def _migration(w: _World) -> str:
    return f"""-- One row per appointment: when its reminder goes out, and what became of it.
CREATE TABLE {w.table} (
    id              BIGSERIAL PRIMARY KEY,
    appointment_id  BIGINT      NOT NULL UNIQUE REFERENCES appointments (id) ON DELETE CASCADE,
    clinic_id       BIGINT      NOT NULL REFERENCES clinics (id),
    phone           TEXT        NOT NULL,
    starts_at       TIMESTAMPTZ NOT NULL,
    send_at         TIMESTAMPTZ NOT NULL,
    status          TEXT        NOT NULL DEFAULT 'PENDING',
    attempts        INT         NOT NULL DEFAULT 0,
    sent_at         TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX {w.table}_due_idx ON {w.table} (send_at) WHERE status = 'PENDING';"""


def _reminder_sms(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import io.ktor.client.HttpClient
import io.ktor.client.engine.cio.CIO
import io.ktor.client.request.forms.submitForm
import io.ktor.http.isSuccess
import io.ktor.http.parameters
import io.ktor.server.config.ApplicationConfig
import org.slf4j.LoggerFactory

/** Sends appointment reminders; a small client of our own, apart from billing's. */
class ReminderSms(
    private val baseUrl: String,
    private val apiKey: String,
    private val sender: String,
) {{
    private val log = LoggerFactory.getLogger(ReminderSms::class.java)
    private val http = HttpClient(CIO)

    suspend fun send(phone: String, body: String): Boolean {{
        require(body.length <= MAX_LENGTH) {{ "reminder text is ${{body.length}} characters" }}
        val response = http.submitForm(
            url = "$baseUrl/messages",
            formParameters = parameters {{
                append("to", phone)
                append("from", sender)
                append("body", body)
                append("key", apiKey)
            }},
        )
        log.info("reminder to {{}} answered {{}}", phone, response.status)
        return response.status.isSuccess()
    }}

    companion object {{
        const val MAX_LENGTH = 160

        fun from(config: ApplicationConfig) = ReminderSms(
            baseUrl = config.property("sms.baseUrl").getString(),
            apiKey = config.property("sms.apiKey").getString(),
            sender = config.property("sms.sender").getString(),
        )
    }}
}}"""


def _quiet_hours(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import java.time.Duration
import java.time.Instant
import java.time.LocalTime
import java.time.ZoneId

/** The hours of the night in which no reminder may reach an owner, in the clinic's zone. */
class QuietHours(private val from: LocalTime, private val until: LocalTime) {{
    private val length: Duration =
        Duration.ofMinutes((MINUTES_A_DAY - from.toMinuteOfDay() + until.toMinuteOfDay()).toLong())

    fun contains(at: Instant, zone: ZoneId): Boolean {{
        val local = at.atZone(zone).toLocalTime()
        return !local.isBefore(from) || local.isBefore(until)
    }}

    /** `at` itself when it is outside quiet hours, else the moment they end. */
    fun push(at: Instant, zone: ZoneId): Instant {{
        if (!contains(at, zone)) return at
        val local = at.atZone(zone)
        val evening = if (local.toLocalTime().isBefore(until)) local.minusDays(1) else local
        val started = evening.with(from)
        return started.plus(length).toInstant()
    }}

    private fun LocalTime.toMinuteOfDay() = hour * 60 + minute

    private companion object {{
        const val MINUTES_A_DAY = 24 * 60
    }}
}}"""


def _settings(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import io.ktor.server.config.ApplicationConfig
import java.time.Duration
import java.time.LocalTime

data class ReminderSettings(
    val leadTime: Duration,
    val quietHours: QuietHours,
    val pollEvery: Duration,
    val batchSize: Int,
) {{
    companion object {{
        fun from(config: ApplicationConfig): ReminderSettings {{
            val section = config.config("reminders")
            return ReminderSettings(
                leadTime = Duration.parse("PT" + section.string("leadTime").toHoursSpec()),
                quietHours = QuietHours(
                    LocalTime.parse(section.string("quietFrom")),
                    LocalTime.parse(section.string("quietUntil")),
                ),
                pollEvery = Duration.ofSeconds(section.string("pollEverySeconds").toLong()),
                batchSize = section.string("batchSize").toInt(),
            )
        }}

        private fun String.toHoursSpec() = substringBefore(' ') + "H"

        private fun ApplicationConfig.string(key: String) = property(key).getString()
    }}
}}"""


def _poller(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import {w.pkg}.clinics.Clinics
import io.ktor.server.application.Application
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import org.jetbrains.exposed.sql.Database
import org.jetbrains.exposed.sql.transactions.transaction
import org.slf4j.LoggerFactory
import java.sql.ResultSet
import java.time.Instant
import java.time.ZoneId

/**
 * Every pod runs one of these. Rows are claimed with FOR UPDATE SKIP LOCKED, so a due reminder
 * is taken by exactly one pod however many poll at once.
 */
class ReminderPoller(
    private val db: Database,
    private val settings: ReminderSettings,
    private val sms: ReminderSms,
) {{
    private val log = LoggerFactory.getLogger(ReminderPoller::class.java)

    fun start(app: Application) = app.launch(Dispatchers.IO) {{
        while (isActive) {{
            runCatching {{ dispatchDue(Instant.now()) }}
                .onFailure {{ log.warn("reminder poll failed", it) }}
            delay(settings.pollEvery.toMillis())
        }}
    }}

    suspend fun dispatchDue(now: Instant): Int {{
        val claimed = transaction(db) {{
            val arguments = listOf(Instant::class to now, Int::class to settings.batchSize)
            exec(CLAIM, arguments) {{ it.rows() }}.orEmpty()
        }}
        claimed.forEach {{ row ->
            val clinic = Clinics.byId(row.clinicId)
            val sendAt = settings.quietHours.push(now, clinicZone)
            if (sendAt.isAfter(now)) {{
                reschedule(row.id, sendAt)
                return@forEach
            }}
            val sent = sms.send(row.phone, ReminderText.render(clinic, row.startsAt))
            markStatus(row.id, if (sent) "SENT" else "FAILED")
        }}
        return claimed.size
    }}

    private fun reschedule(id: Long, sendAt: Instant) = transaction(db) {{
        exec(
            "UPDATE {w.table} SET send_at = ?, status = 'PENDING' WHERE id = ?",
            listOf(Instant::class to sendAt, Long::class to id),
        )
    }}

    private fun markStatus(id: Long, status: String) = transaction(db) {{
        exec(
            "UPDATE {w.table} SET status = ?, sent_at = now() WHERE id = ?",
            listOf(String::class to status, Long::class to id),
        )
    }}

    private fun ResultSet.rows(): List<OutboxRow> = buildList {{
        while (next()) {{
            val startsAt = getTimestamp("starts_at").toInstant()
            add(OutboxRow(getLong("id"), getLong("clinic_id"), getString("phone"), startsAt))
        }}
    }}

    data class OutboxRow(val id: Long, val clinicId: Long, val phone: String, val startsAt: Instant)

    private companion object {{
        const val CLAIM = \"\"\"
            UPDATE {w.table} SET status = 'CLAIMED', attempts = attempts + 1
             WHERE id IN (
                SELECT id FROM {w.table}
                 WHERE status = 'PENDING' AND send_at <= ?
                 ORDER BY send_at
                 LIMIT ?
                   FOR UPDATE SKIP LOCKED)
            RETURNING id, clinic_id, phone, starts_at
        \"\"\"
    }}
}}"""


def _outbox(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import org.jetbrains.exposed.sql.Transaction
import java.time.Duration
import java.time.Instant

/** Writes and withdraws an appointment's row in {w.table}, in the booking's own transaction. */
object ReminderOutbox {{
    fun schedule(
        tx: Transaction,
        appointmentId: Long,
        clinicId: Long,
        phone: String,
        startsAt: Instant,
        lead: Duration,
    ) {{
        tx.exec(
            \"\"\"
            INSERT INTO {w.table} (appointment_id, clinic_id, phone, starts_at, send_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (appointment_id) DO UPDATE
               SET starts_at = excluded.starts_at, send_at = excluded.send_at, status = 'PENDING'
            \"\"\".trimIndent(),
            listOf(Long::class to appointmentId, Long::class to clinicId, String::class to phone,
                   Instant::class to startsAt, Instant::class to startsAt.minus(lead)),
        )
    }}

    fun withdraw(tx: Transaction, appointmentId: Long) {{
        tx.exec(
            "DELETE FROM {w.table} WHERE appointment_id = ? AND status = 'PENDING'",
            listOf(Long::class to appointmentId),
        )
    }}
}}"""


def _quiet_test(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import java.time.LocalDate
import java.time.LocalTime
import java.time.ZoneId
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

class QuietHoursTest {{
    private val zone = ZoneId.of("{w.zone}")
    private val quiet = QuietHours(LocalTime.of(21, 0), LocalTime.of(8, 0))

    private fun at(day: String, hour: Int, minute: Int = 0) =
        LocalDate.parse(day).atTime(hour, minute).atZone(zone).toInstant()

    @Test
    fun `a reminder in the afternoon goes out unchanged`() {{
        val afternoon = at("2026-05-12", 15, 10)
        assertFalse(quiet.contains(afternoon, zone))
        assertEquals(afternoon, quiet.push(afternoon, zone))
    }}

    @Test
    fun `a reminder late in the evening waits for the morning`() {{
        assertEquals(at("2026-05-13", 8), quiet.push(at("2026-05-12", 23, 40), zone))
    }}

    @Test
    fun `a reminder in the small hours waits for the same morning`() {{
        assertTrue(quiet.contains(at("2026-05-13", 4, 5), zone))
        assertEquals(at("2026-05-13", 8), quiet.push(at("2026-05-13", 4, 5), zone))
    }}

    @Test
    fun `the end of quiet hours is already outside them`() {{
        assertFalse(quiet.contains(at("2026-05-13", 8), zone))
    }}
}}"""


def _poller_test(w: _World) -> str:
    return f"""package {w.pkg}.reminders

import {w.pkg}.testing.PostgresTest
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import java.time.Instant
import kotlin.test.Test
import kotlin.test.assertEquals

class ReminderPollerTest : PostgresTest() {{
    private val sms = RecordingSms()

    @Test
    fun `claims each due row exactly once`() = runBlocking {{
        seedDue(count = 12, dueAt = Instant.parse("2026-05-12T10:00:00Z"))
        val pollers = List(3) {{ ReminderPoller(db, settings(batchSize = 5), sms.client) }}
        val now = Instant.parse("2026-05-12T10:05:00Z")
        val handled = pollers.map {{ async {{ it.dispatchDue(now) }} }}.awaitAll()
        assertEquals(12, handled.sum())
        assertEquals(12, sms.sent.distinct().size)
    }}

    @Test
    fun `leaves rows that are not due yet`() = runBlocking {{
        seedDue(count = 3, dueAt = Instant.parse("2026-05-12T18:00:00Z"))
        val poller = ReminderPoller(db, settings(), sms.client)
        assertEquals(0, poller.dispatchDue(Instant.parse("2026-05-12T10:05:00Z")))
    }}
}}"""


# --- filler -------------------------------------------------------------------------------------


def _kotlin_file(rng: random.Random, w: _World, module: str, lines: int) -> str:
    header = [
        f"package {w.pkg}.{module}",
        "",
        "import org.jetbrains.exposed.sql.Database",
        "import org.jetbrains.exposed.sql.transactions.transaction",
        "",
        "",
    ]
    return "\n".join(header) + code_file(rng, "kt", lines)


def _stem(module: str) -> str:
    """`clinics` → `Clinic`: the type a module is named for."""
    return module.title().rstrip("s")


def _gradle_dependencies(rng: random.Random) -> str:
    groups = (
        "io.ktor:ktor-server-core-jvm:2.3.12", "io.ktor:ktor-server-netty-jvm:2.3.12",
        "io.ktor:ktor-http-jvm:2.3.12", "io.ktor:ktor-utils-jvm:2.3.12",
        "io.ktor:ktor-events-jvm:2.3.12", "io.ktor:ktor-websockets-jvm:2.3.12",
        "org.jetbrains.kotlinx:kotlinx-coroutines-core-jvm:1.8.1",
        "org.jetbrains.kotlinx:kotlinx-serialization-json-jvm:1.6.3",
        "org.jetbrains.exposed:exposed-core:0.52.0", "org.jetbrains.exposed:exposed-jdbc:0.52.0",
        "org.flywaydb:flyway-core:10.15.0", "org.postgresql:postgresql:42.7.3",
        "com.zaxxer:HikariCP:5.1.0", "io.netty:netty-codec-http2:4.1.111.Final",
        "io.netty:netty-transport-native-kqueue:4.1.111.Final", "org.slf4j:slf4j-api:2.0.13",
        "com.typesafe:config:1.4.3", "io.micrometer:micrometer-core:1.13.1",
        "org.checkerframework:checker-qual:3.42.0",
        "com.fasterxml.jackson.core:jackson-core:2.17.1",
    )  # fmt: skip
    out = ["", "> Task :dependencies", "", "runtimeClasspath - Runtime classpath of 'main'."]
    for _ in range(rng.randint(28, 40)):
        depth = rng.randint(0, 3)
        out.append("|    " * depth + rng.choice(("+--- ", "\\--- ")) + rng.choice(groups))
    out += ["", "(*) - Indicates repeated occurrences of a transitive dependency subtree.", "",
            "BUILD SUCCESSFUL in 2s", "1 actionable task: 1 executed"]  # fmt: skip
    return "\n".join(out)


class _Filler:
    """Reads that bring the session to its size; nothing the story plants shows up in them."""

    def __init__(self, cascade: _Cascade, seed: int) -> None:
        self.c = cascade
        self.rng = random.Random(seed * 1009 + 17)
        self.read: set[str] = set()

    def until(self, budget: int) -> None:
        goal = self.c.s.chars + budget
        while self.c.s.chars < goal:
            self.one(goal - self.c.s.chars)

    def one(self, room: int) -> None:
        w, rng = self.c.w, self.rng
        kinds = ["view", "view", "view", "grep", "ls", "find"]
        if "deps" not in self.read:
            kinds.append("deps")
        kind = rng.choice(kinds)
        module = rng.choice(_OTHER_MODULES)
        if kind == "view":
            roles = ("Service", "Routes", "Store", "Mapper", "Policy", "Validator", "Dto")
            name = f"{_stem(module)}{rng.choice(roles)}.kt"
            rel = f"{w.main}/{module}/{name}"
            if rel in self.read:
                return
            self.read.add(rel)
            lines = max(24, min(150, room // 52))
            content = _kotlin_file(rng, w, module, lines)
            say = rng.choice((f"Looking at how `{module}` does it.", "", f"Checking `{name}`.", ""))
            self.c.view("viewing source file", rel, content, text=say, filler=True)
        elif kind == "grep":
            word = rng.choice(("transaction(db)", "selectAll()", "ZoneId", "Instant.now()",
                               "ApplicationConfig", "LoggerFactory"))  # fmt: skip
            hits = []
            for _ in range(rng.randint(6, 18)):
                mod = rng.choice(_OTHER_MODULES)
                rel = f"{w.main}/{mod}/{_stem(mod)}{rng.choice(('Service', 'Store', 'Routes'))}.kt"
                hits.append((rel, rng.randint(8, 160), f"        val {ident(rng)} = {word}"))
            self.c.grep("searching codebase", w.main, word, hits, includes=["*.kt"], filler=True)
        elif kind == "ls":
            mod = rng.choice(_OTHER_MODULES)
            entries: list[tuple[str, int | None]] = [
                (f"{_stem(mod)}{suffix}.kt", None)
                for suffix in rng.sample(("Service", "Routes", "Store", "Mapper", "Policy", "Dto",
                                          "Table", "Validator"), rng.randint(3, 7))
            ]  # fmt: skip
            self.c.ls("listing module", f"{w.main}/{mod}", entries, filler=True)
        elif kind == "find":
            found = []
            for mod in rng.sample(_OTHER_MODULES, rng.randint(4, 8)):
                found.append((f"{w.main}/{mod}/{_stem(mod)}Routes.kt", rng.randint(900, 9000)))
            self.c.find("finding route files", w.main, "*Routes.kt", found, filler=True)
        else:
            self.read.add("deps")
            command = "./gradlew dependencies --configuration runtimeClasspath"
            self.c.run("listing dependencies", command, _gradle_dependencies(rng), filler=True)


# --- the user's turns as Cascade receives them --------------------------------------------------


class _User:
    def __init__(self, session: Session, world: _World) -> None:
        self.s = session
        self.w = world
        self.rng = random.Random(f"{FAMILY}:user:{world.ticket}")
        self.minute = 0

    def __call__(self, text: str) -> None:
        w, rng = self.w, self.rng
        self.minute += rng.randint(3, 11)
        hour, minute = 9 + self.minute // 60, self.minute % 60
        open_docs = rng.sample(
            (f"{w.main}/plugins/Routing.kt", f"{w.main}/clinics/ClinicRoutes.kt", "README.md",
             f"{w.main}/owners/OwnerService.kt", "docs/runbook.md", "config/detekt.yml"), 3
        )  # fmt: skip
        others = "\n".join(f"- {self.root}/{d} ({_language(d)})" for d in open_docs[1:])
        self.s.user(
            f"<USER_REQUEST>\n{text}\n</USER_REQUEST>\n<ADDITIONAL_METADATA>\n"
            # Seconds stay under 19: no clock value the story sets can show up here.
            "The current local time is: "
            f"2026-03-20T{hour:02d}:{minute:02d}:{rng.randint(1, 18):02d}"
            "+01:00. This is the latest source of truth for time; do not attempt to get the time "
            "any other way.\n\nThe user's current state is as follows:\n"
            f"Active Document: {self.root}/{open_docs[0]} ({_language(open_docs[0])})\n"
            f"Cursor is on line: {rng.randint(3, 90)}\nOther open documents:\n{others}\n"
            "</ADDITIONAL_METADATA>"
        )

    @property
    def root(self) -> str:
        return self.w.root


def _language(path: str) -> str:
    suffix = path.rsplit(".", 1)[-1]
    return {"md": "LANGUAGE_MARKDOWN", "yml": "LANGUAGE_YAML"}.get(suffix, "LANGUAGE_KOTLIN")


# --- the story ----------------------------------------------------------------------------------


def _gradle_failure(task: str, what: str, seconds: int, tasks: str) -> str:
    return (
        f"\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for "
        f"task ':{task}'.\n> {what}\n\n* Try:\n> Run with --stacktrace option to get the stack "
        "trace.\n> Run with --info or --debug option to get more log output.\n> Run with --scan "
        "to get full insights.\n> Get more help at https://help.gradle.org.\n\n"
        f"BUILD FAILED in {seconds}s\n{tasks}"
    )


def _tell(seed: int, gap: int) -> Session:
    w = _world(seed)
    pick = random.Random(f"{FAMILY}:words:{seed}").choice
    s = Session(rng=random.Random(seed), system=SYSTEM_PROMPT.format(root=w.root))
    c = _Cascade(s, w)
    user = _User(s, w)
    filler = _Filler(c, seed)
    lead1, lead2, lead3 = w.leads
    quiet1, quiet2 = w.quiet
    billing = f"{w.main}/billing/"
    poller = f"{w.main}/reminders/ReminderPoller.kt"
    sms = f"{w.main}/reminders/ReminderSms.kt"
    quiet_test = f"{w.tests}/reminders/QuietHoursTest.kt"
    poller_test = f"{w.tests}/reminders/ReminderPollerTest.kt"
    conf = "src/main/resources/application.conf"
    app_kt = f"{w.main}/Application.kt"
    repo_kt = f"{w.main}/appointments/AppointmentRepository.kt"
    nightly = f"{w.main}/reminders/NightlyReminderJob.kt"
    nightly_test = f"{w.tests}/reminders/NightlyReminderJobTest.kt"
    morning, offset = _ZONES[w.zone]

    # 1. The ask, with its ground rules.
    user(
        pick(
            (
                f"{w.ticket} — the clinics want SMS reminders that actually help. Today "
                "`NightlyReminderJob` texts everyone with an appointment *tomorrow* at 9am, which "
                "is "
                "useless for the 4pm slots. I want every appointment to get its own text "
                f"{lead1} before it starts.\n\nGround rules: no Quartz, and no other scheduling "
                "library either — we're not taking on a dependency for this. Whatever you store "
                "goes "
                "into Postgres as timestamptz, UTC; the clinic's zone is only for working out "
                "quiet "
                f"hours. Quiet hours run from {quiet1} to 08:00 clinic time and nobody gets a text "
                "inside them — push it to 08:00 instead. And the text has to fit in 160 "
                "characters, "
                "we pay per segment.",
                f"Picking up {w.ticket}. The nightly reminder job sends one batch at 9am for the "
                "whole "
                "of tomorrow, so owners with an evening slot get reminded a day and a half early "
                "and the ones "
                f"booked for 9:30 barely in time. Each appointment should get a reminder {lead1} "
                "ahead instead.\n\nA few rules before you start: don't pull in Quartz or any other "
                "scheduler lib, no new dependencies for this. Times in the database are "
                "timestamptz "
                "in UTC, full stop — the clinic's time zone only matters for quiet hours. Quiet "
                "hours "
                f"are {quiet1} until 08:00 in the clinic's zone; anything landing in there moves "
                "to "
                "08:00. Keep the message within 160 characters so it stays one SMS.",
            )
        )
    )
    c.ls(
        "listing project root",
        "",
        [
            (".github", 2),
            ("config", 1),
            ("deploy", 4),
            ("docs", 3),
            ("gradle", 2),
            ("src", 118),
            (".gitignore", None),
            ("README.md", None),
            ("build.gradle.kts", None),
            ("gradle.properties", None),
            ("gradlew", None),
            ("settings.gradle.kts", None),
        ],
        text="Let me get oriented in the project first.",
    )
    c.view(
        "viewing build file",
        "build.gradle.kts",
        _build_gradle(w),
        text="Checking what the build already brings in.",
    )
    c.find(
        "finding reminder code",
        "src",
        "*Reminder*",
        [
            (nightly, 1812),
            (nightly_test, 2240),
        ],
    )
    c.view("viewing nightly job", nightly, _nightly_job(w))
    filler.until(gap)
    c.view(
        "viewing application module",
        app_kt,
        _application_kt(w),
        text="And where the job is started.",
    )
    filler.until(gap)

    # 2. The first plan, and the to-do list.
    plan = [
        ("1", "Reminder settings in application.conf", "pending", "high"),
        ("2", "Schedule each appointment's reminder when it is booked or moved", "pending", "high"),
        ("3", "Quiet-hours window in the clinic's zone", "pending", "high"),
        ("4", "Start the sender from Application.module", "pending", "medium"),
        ("5", "Micrometer counter for reminders sent", "pending", "low"),
        ("6", "Tests for the window and the sender", "pending", "medium"),
        ("7", "Remove NightlyReminderJob", "pending", "low"),
    ]
    c.todos(
        plan,
        text=pick(
            (
                "Here's how I'd do it: a coroutine ticker launched from `Application.module` that "
                "wakes "
                "every 30 seconds, picks the appointments whose reminder time has come and texts "
                "them. "
                "No library needed — it's a `launch { while (isActive) { …; delay(…) } }`. Writing "
                "down "
                "the steps:",
                "Plan: keep it in-process. A coroutine ticker started in `Application.module` "
                "checks "
                "every half minute for appointments whose reminder is due and sends those. That's "
                "plain kotlinx.coroutines, which we already have. Steps:",
            )
        ),
    )
    s.say(
        pick(
            (
                "Before I write anything: does that shape work for you? The ticker needs nothing "
                "new "
                "in the build and nothing new to deploy.",
                "That's the outline. If you're happy with an in-process ticker I'll start with the "
                "config and the scheduling on booking.",
            )
        )
    )
    user(
        pick(
            (
                "Hmm, we run three replicas of the API behind the load balancer. A ticker in every "
                "pod "
                "means every pod finds the same due appointments and the owner gets three texts.",
                "One problem: prod has 3 pods. Each of them would run that loop and they'd all "
                "send the "
                "same reminder. Owners would get it in triplicate.",
            )
        )
    )
    c.ls(
        "listing deploy manifests",
        "deploy",
        [
            ("api-deployment.yaml", None),
            ("api-service.yaml", None),
            ("ingress.yaml", None),
            ("migrations-job.yaml", None),
        ],
        text="Right, let me see what the deployment looks like.",
    )
    s.say(
        pick(
            (
                "Good catch — `replicas: 3` in the deployment. Then the timing shouldn't live in "
                "the "
                "pods at all: a Kubernetes CronJob that calls an internal endpoint, say `POST "
                "/internal/reminders/dispatch`, once a minute. Whichever pod gets the request "
                "sends "
                "what's due; the others never look. It's one more manifest next to "
                "`migrations-job.yaml`.",
                "You're right, three pods would triple-send. Moving the clock out of the app: a "
                "Kubernetes CronJob hits `POST /internal/reminders/dispatch` every minute and the "
                "pod "
                "that answers sends whatever is due. I'd add the CronJob manifest under `deploy/` "
                "beside the migrations job.",
            )
        )
    )
    user(
        pick(
            (
                "Platform has a freeze on new CronJobs until Q3, I asked last month for something "
                "else. Can't Postgres do the coordinating? It's already the one thing all pods "
                "share.",
                "Can't get a CronJob past platform this quarter, they've frozen new ones. The "
                "database "
                "is shared by all pods anyway — can we lean on that?",
            )
        )
    )
    s.say(
        pick(
            (
                "Yes — that's the cleaner design anyway. Scrapping both the ticker-only idea and "
                "the "
                f"CronJob: an outbox table, `{w.table}`, with one row per appointment and its "
                "`send_at`. Every pod polls it, and claims due rows with `SELECT … FOR UPDATE SKIP "
                "LOCKED`, so a row locked by one pod is simply skipped by the others. Three pods, "
                "one "
                "text. Booking, rescheduling and cancelling write the row in the same transaction "
                "as "
                "the appointment.",
                f"It can. New plan, replacing the ticker and the CronJob: a `{w.table}` table "
                "holding a "
                "row per appointment with the time its reminder is due. Each pod polls and claims "
                "rows "
                "with `FOR UPDATE SKIP LOCKED`; a row one pod holds is invisible to the other two, "
                "so "
                "each reminder goes out once. The booking code writes the row in the appointment's "
                "own transaction.",
            )
        )
    )
    booking = f"Write the {w.table} row when an appointment is booked or moved"
    plan[1] = ("2", booking, "in_progress", "high")
    plan.insert(1, ("8", f"Flyway migration for {w.table}", "pending", "high"))
    c.todos(plan)
    filler.until(gap)

    # 3. The migration (misnamed) and the settings.
    c.write(
        "creating migration", w.misnamed_migration, _migration(w), text="Starting with the table."
    )
    c.view("viewing config", conf, _application_conf(w))
    c.replace(
        "adding reminder settings",
        conf,
        "Add a reminders section.",
        [
            (
                "    baseUrl = ${?SMS_BASE_URL}\n}",
                "    baseUrl = ${?SMS_BASE_URL}\n}\n\nreminders {\n"
                f'    leadTime = {lead1}\n    quietFrom = "{quiet1}"\n    quietUntil = "08:00"\n'
                "    pollEverySeconds = 30\n    batchSize = 50\n}",
            )
        ],
        language="hocon",
        text="Now the settings, with your values.",
    )
    c.write("creating settings class", f"{w.main}/reminders/ReminderSettings.kt", _settings(w))
    filler.until(gap)

    # 4. Billing's gateway is off limits.
    gateway = f"{w.main}/billing/sms/SmsGateway.kt"
    gateway_text = _sms_gateway(w).split("\n")
    sms_from = '    private val gateway = SmsGateway.from(config.config("sms"))'
    c.grep(
        "searching SMS usage",
        w.main,
        "SmsGateway",
        [
            (gateway, gateway_text.index("class SmsGateway(") + 1, "class SmsGateway("),
            (f"{w.main}/billing/dunning/DunningNotifier.kt", 22, sms_from),
            (
                nightly,
                c.line_of(nightly, "billing.sms.SmsGateway"),
                f"import {w.pkg}.billing.sms.SmsGateway",
            ),
            (nightly, c.line_of(nightly, "SmsGateway.from"), sms_from),
        ],
        includes=["*.kt"],
        text="Who sends texts today, and how?",
    )
    c.view(
        "viewing SMS gateway",
        gateway,
        _sms_gateway(w),
        text="I'll reuse the billing gateway; it needs to report whether the send "
        "succeeded, so I'm adding a return value.",
    )
    user(
        pick(
            (
                f"Stop — don't touch anything under `{billing}`. That's the payments team's code, "
                "they review every line and it's in their CODEOWNERS. Write a small client of our "
                "own.",
                f"Please leave `{billing}` alone entirely, it belongs to payments and every change "
                "there needs their review. Give reminders their own little SMS client instead.",
            )
        )
    )
    c.write(
        "creating SMS client",
        sms,
        _reminder_sms(w),
        text=pick(
            (
                "Understood, nothing under billing. A separate client for reminders:",
                "Fair enough — reminders get their own client and billing stays as it is.",
            )
        ),
    )
    c.write("creating quiet hours", f"{w.main}/reminders/QuietHours.kt", _quiet_hours(w))
    c.write("creating outbox writer", f"{w.main}/reminders/ReminderOutbox.kt", _outbox(w))
    c.write("creating poller", poller, _poller(w), text="And the poller every pod runs.")
    filler.until(gap)

    # 5. The booking code writes the row; the module starts the poller.
    book_end = "        }.value\n        find(id)!!"
    c.view(
        "viewing appointment repository",
        repo_kt,
        _appointment_repository(w),
        start=1,
        end=48,
        text="Now the booking side.",
    )
    c.replace(
        "scheduling reminders on booking",
        repo_kt,
        "Write, move and withdraw the reminder row with the appointment.",
        [
            (
                f"import {w.pkg}.clinics.Clinics",
                f"import {w.pkg}.clinics.Clinics\nimport {w.pkg}.reminders.ReminderOutbox",
            ),
            ("import java.time.Instant", "import java.time.Duration\nimport java.time.Instant"),
            (
                "class AppointmentRepository(private val db: Database) {",
                "class AppointmentRepository(private val db: Database, private val lead: Duration) "
                "{",
            ),
            (
                book_end,
                "        }.value\n"
                "        ReminderOutbox.schedule(this, id, request.clinicId, request.ownerPhone, "
                "request.startsAt, lead)\n        find(id)!!",
            ),
            (
                "        if (changed == 0) null else find(id)",
                "        if (changed == 0) return@transaction null\n        val moved = "
                "find(id)!!\n"
                "        ReminderOutbox.schedule(this, id, moved.clinicId, moved.ownerPhone, "
                "startsAt, "
                "lead)\n"
                "        moved",
            ),
            (
                "            it[cancelled] = true\n        } > 0",
                "            it[cancelled] = true\n        }.also { ReminderOutbox.withdraw(this, "
                "id) "
                "} > 0",
            ),
        ],
    )
    c.replace(
        "starting poller",
        app_kt,
        "Start the reminder poller instead of the nightly job.",
        [
            (
                f"import {w.pkg}.reminders.NightlyReminderJob",
                f"import {w.pkg}.reminders.ReminderPoller\nimport "
                f"{w.pkg}.reminders.ReminderSettings\n"
                f"import {w.pkg}.reminders.ReminderSms",
            ),
            (
                "    NightlyReminderJob(db, environment.config).schedule(this)",
                "    val reminders = ReminderSettings.from(environment.config)\n"
                "    ReminderPoller(db, reminders, "
                "ReminderSms.from(environment.config)).start(this)",
            ),
        ],
        text="Swapping the nightly job for the poller in the module.",
    )
    zone_line = c.line_of(poller, "clinicZone")
    c.run(
        "compiling",
        "./gradlew compileKotlin",
        (
            "> Task :checkKotlinGradlePluginConfigurationErrors\n> Task :processResources\n"
            f"> Task :compileKotlin FAILED\ne: file://{c.abs(poller)}:{zone_line}:56 Unresolved "
            "reference: clinicZone\n"
            + _gradle_failure(
                "compileKotlin",
                "A failure occurred while executing org.jetbrains."
                "kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n"
                "   > Compilation error. See log for more details",
                9,
                "3 actionable tasks: 2 executed, 1 up-to-date",
            )
        ),
        code=1,
        text="Compiling to see where we stand.",
    )
    c.replace(
        "fixing zone lookup",
        poller,
        "Use the clinic's own zone for quiet hours.",
        [
            (
                "            val sendAt = settings.quietHours.push(now, clinicZone)",
                "            val sendAt = settings.quietHours.push(now, "
                "ZoneId.of(clinic.timeZone))",
            ),
        ],
        text=pick(
            (
                "I never defined `clinicZone` — the zone lives on the clinic row.",
                "Leftover name from a draft: the zone comes from `clinic.timeZone`.",
            )
        ),
    )
    c.run(
        "compiling",
        "./gradlew compileKotlin",
        "> Task :checkKotlinGradlePluginConfigurationErrors\n> Task :processResources "
        "UP-TO-DATE\n"
        "> Task :compileKotlin\n\nBUILD SUCCESSFUL in 11s\n3 actionable tasks: 1 executed, 2 "
        "up-to-date",
    )
    filler.until(gap)

    # 6. Tests: the misnamed migration never ran.
    c.write(
        "creating quiet hours tests",
        quiet_test,
        _quiet_test(w),
        text="Tests next: the window first.",
    )
    c.write(
        "creating poller tests",
        poller_test,
        _poller_test(w),
        text="And the poller against a real Postgres (Testcontainers), three pollers at once.",
    )
    missing = f'ERROR: relation "{w.table}" does not exist'
    red = []
    for name, line in (
        ("claims each due row exactly once", 18),
        ("leaves rows that are not due yet", 27),
    ):
        red.append(
            f"ReminderPollerTest > {name}() FAILED\n"
            "    org.jetbrains.exposed.exceptions.ExposedSQLException: "
            f"org.postgresql.util.PSQLException: {missing}\n"
            "      Position: 8\n"
            f"    SQL: [UPDATE {w.table} SET status = 'CLAIMED', attempts = attempts + 1 ...]\n"
            "        at app//org.jetbrains.exposed.sql.statements.Statement"
            ".executeIn$exposed_core(Statement.kt:63)\n"
            f"        at app//{w.pkg}.reminders.ReminderPoller.dispatchDue(ReminderPoller.kt:37)\n"
            f"        at app//{w.pkg}.reminders.ReminderPollerTest.{name.replace(' ', '_')}"
            f"(ReminderPollerTest.kt:{line})\n"
            "\n        Caused by:\n"
            f"        org.postgresql.util.PSQLException: {missing}\n"
            "          Position: 8\n"
            "            at "
            "app//org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)\n"
        )
    first_counts = f"{w.first_total} tests completed, 2 failed"
    c.run(
        "running tests",
        "./gradlew test",
        (
            "> Task :compileKotlin UP-TO-DATE\n> Task :compileJava NO-SOURCE\n> Task :classes "
            "UP-TO-DATE\n"
            "> Task :compileTestKotlin\n> Task :testClasses\n\n> Task :test\n\n"
            + "\n".join(red)
            + f"\n{first_counts}\n\n> Task :test FAILED\n"
            + _gradle_failure(
                "test",
                f"There were failing tests. See the report at: "
                f"file://{w.root}/build/reports/tests/test/index.html",
                34,
                "6 actionable tasks: 3 executed, 3 up-to-date",
            )
        ),
        code=1,
        text="Running the suite.",
    )
    c.find(
        "finding migrations",
        "src/main/resources/db/migration",
        "V*.sql",
        [
            (f"src/main/resources/db/migration/V{n}__{name}.sql", size)
            for n, name, size in (
                (1, "baseline", 4120),
                (2, "owners_phone", 388),
                (3, "clinic_time_zone", 301),
                (4, "appointment_reason", 244),
                (5, "invoices", 1630),
            )
        ]
        + [(w.misnamed_migration, 912)],
        text=pick(
            (
                f"The poller tests never found `{w.table}`, so the migration didn't run. Comparing "
                "its "
                "name with the others:",
                "Both poller failures are the same missing table — Flyway skipped my migration. "
                "Let me "
                "look at the names:",
            )
        ),
    )
    c.write(
        "recreating migration",
        w.migration_path,
        _migration(w),
        text=pick(
            (
                "There it is: Flyway wants `V<version>__<description>` with two underscores, and "
                "I "
                f"wrote `V{w.migration}_{w.table}.sql` with one, so it never saw it. Writing it "
                "under the "
                "right name,",
                "Flyway only picks up `V<n>__name.sql` — two underscores — and mine has one. I'll "
                "write it again under the proper name,",
            )
        ),
    )
    c.run(
        "removing misnamed migration",
        f"rm {w.misnamed_migration}",
        "",
        safe=False,
        text="and remove the misnamed copy.",
    )
    c.run(
        "running tests",
        "./gradlew test",
        "> Task :compileKotlin UP-TO-DATE\n> Task :compileJava NO-SOURCE\n> Task "
        ":processResources\n"
        "> Task :classes\n> Task :compileTestKotlin UP-TO-DATE\n> Task :testClasses UP-TO-DATE\n"
        "> Task :test\n\nBUILD SUCCESSFUL in 29s\n6 actionable tasks: 3 executed, 3 up-to-date",
    )
    plan = [
        ("1", "Reminder settings in application.conf", "completed", "high"),
        ("8", f"Flyway migration for {w.table}", "completed", "high"),
        ("2", booking, "completed", "high"),
        ("3", "Quiet-hours window in the clinic's zone", "completed", "high"),
        ("4", "Start the sender from Application.module", "completed", "medium"),
        ("5", "Micrometer counter for reminders sent", "pending", "low"),
        ("6", "Tests for the window and the sender", "completed", "medium"),
        ("7", "Remove NightlyReminderJob", "in_progress", "low"),
    ]
    c.todos(plan, text="Green. Updating the list.")
    filler.until(gap)

    # 7. A rule to remember: phone numbers stay masked.
    user(
        pick(
            (
                "Nice. One thing for the whole project, not just this ticket, so please remember "
                "it: "
                "we never put a client's full phone number in the logs. Mask everything except the "
                "last "
                "four digits.",
                "Good. Also — and this goes for everything in this repo, remember it — no full "
                "phone "
                "numbers in logs, ever. Only the last four digits may show.",
            )
        )
    )
    c.memory(
        "Mask phone numbers in logs",
        (
            f"In {w.app}-api, never log a client's full phone number: mask all but the last four "
            "digits (e.g. ******4821)."
        ),
        ["logging", "privacy", "phone_numbers"],
        text="Saving that as a project rule.",
    )
    c.grep(
        "finding phone logging",
        f"{w.main}/reminders",
        "log.info",
        [
            (
                sms,
                c.line_of(sms, "log.info"),
                c.files[sms].split("\n")[c.line_of(sms, "log.info") - 1],
            ),
            (
                nightly,
                c.line_of(nightly, "log.info"),
                c.files[nightly].split("\n")[c.line_of(nightly, "log.info") - 1],
            ),
        ],
        text="Checking what reminders log today.",
    )
    c.replace(
        "masking phone in logs",
        sms,
        "Log only the last four digits of the phone number.",
        [
            (
                '        log.info("reminder to {} answered {}", phone, response.status)',
                '        log.info("reminder to {} answered {}", masked(phone), response.status)',
            ),
            (
                "    companion object {\n        const val MAX_LENGTH = 160",
                "    companion object {\n        const val MAX_LENGTH = 160\n\n"
                "        fun masked(phone: String) = "
                '"*".repeat((phone.length - 4).coerceAtLeast(0)) + phone.takeLast(4)',
            ),
        ],
        text="The new client logs the number; masking it. The nightly job does too, but it's "
        "going away.",
    )

    # 8. The lead time changes; the counter is dropped.
    user(
        pick(
            (
                f"Front desk at {w.clinic} says {lead1} is too short, people need time to sort out "
                "a "
                f"lift. Make it {lead2}. And take the Micrometer counter off the list — Grafana "
                "already "
                f"counts the {w.vendor} delivery webhooks.",
                f"Feedback from {w.clinic}: {lead1} ahead isn't enough notice. Let's go with "
                f"{lead2}. "
                f"Also drop the Micrometer counter, we already graph {w.vendor}'s webhooks.",
            )
        )
    )
    c.replace(
        "changing lead time",
        conf,
        "Raise the reminder lead time.",
        [
            (f"    leadTime = {lead1}", f"    leadTime = {lead2}"),
        ],
        language="hocon",
    )
    plan = [item for item in plan if item[0] != "5"]
    c.todos(plan, text="Done, and the counter is off the list.")
    filler.until(gap)

    # 9. What happens to reminders that are overdue after an outage.
    user(
        pick(
            (
                "What happens if we're down for an hour and a pile of reminders is overdue when "
                "the "
                "pods come back?",
                "Question: the API is down for a while, say a bad deploy, and comes back with a "
                "backlog "
                "of overdue reminders. What does the poller do with those?",
            )
        )
    )
    c.view(
        "viewing poller",
        poller,
        start=c.line_of(poller, "suspend fun dispatchDue"),
        end=c.line_of(poller, "return claimed.size"),
    )
    s.say(
        pick(
            (
                "Right now it sends all of them on the first poll, however late. For a reminder "
                "due at "
                "10:10 that's fine at 10:50, but not if the appointment has already started. I'd "
                "skip "
                "any row whose appointment starts within the next two hours (or already has) and "
                "mark it "
                "`MISSED_WINDOW` instead of sending — it stays in the table so we can see it "
                "happened.",
                "As written it fires every overdue one at once. I'd rather not text someone about "
                "an "
                "appointment that's under way: rows whose appointment is less than two hours off, "
                "or "
                "past, get the status `MISSED_WINDOW` and are never sent. The row stays, for the "
                "record.",
            )
        )
    )
    user(
        pick(
            (
                "Yes, do that. A reminder after the fact is worse than none.",
                "Agreed — better no text than a late one. Go ahead.",
            )
        )
    )
    too_late = '"reminder {} for an appointment starting at {} is too late to send, marking it"'
    late_log = f"                log.info({too_late}, row.id, row.startsAt)"
    c.replace(
        "skipping late reminders",
        poller,
        "Mark reminders too late to be useful instead of sending them.",
        [
            (
                "            val clinic = Clinics.byId(row.clinicId)",
                "            if (row.startsAt.isBefore(now.plus(MIN_NOTICE))) {\n"
                f"{late_log}\n"
                '                markStatus(row.id, "MISSED_WINDOW")\n'
                "                return@forEach\n"
                "            }\n"
                "            val clinic = Clinics.byId(row.clinicId)",
            ),
            (
                "    private companion object {",
                "    private companion object "
                "{\n        val MIN_NOTICE: Duration = Duration.ofHours(2)\n",
            ),
            (
                "import java.time.Instant\nimport java.time.ZoneId",
                "import java.time.Duration\nimport java.time.Instant\nimport java.time.ZoneId",
            ),
        ],
    )
    filler.until(gap)

    # 10. The nightly job goes.
    c.run(
        "removing nightly job",
        f"git rm {nightly} {nightly_test}",
        f"rm '{nightly}'\nrm '{nightly_test}'",
        safe=False,
        text="The poller replaces the nightly job completely, so removing it and its test.",
    )
    c.grep(
        "checking leftover references",
        "src",
        "NightlyReminderJob",
        [],
        text="Making sure nothing else refers to it.",
    )
    plan = [(i, text, "completed", p) if i == "7" else (i, text, st, p) for i, text, st, p in plan]
    c.todos(plan)
    filler.until(gap)

    # 11. Which commit prod runs.
    user(
        pick(
            (
                f"Before I forget — which commit is prod on right now? {w.colleague} needs it for "
                "the "
                "release notes.",
                f"Quick one: {w.colleague} is writing the release notes and wants the commit prod "
                "is "
                "running. Can you check?",
            )
        )
    )
    c.run(
        "checking prod version",
        f"curl -s https://api.{w.app}.vet/internal/version",
        json.dumps(
            {
                "service": f"{w.app}-api",
                "commit": w.prod_hash,
                "builtAt": "2026-03-17T16:12:04Z",
                "version": "0.41.3",
            }
        ),
        safe=False,
        text="Asking prod's version endpoint.",
    )
    s.say(
        pick(
            (
                f"Prod is on `{w.prod_hash}` (0.41.3, built on the 17th).",
                f"It's running `{w.prod_hash}` — version 0.41.3, built March 17.",
            )
        )
    )

    # 12. Quiet hours start earlier; a backfill task.
    user(
        pick(
            (
                f"Ops came back on quiet hours: start them at {quiet2}, not {quiet1}. Some clinics "
                "close "
                "early and their clients are early sleepers. Also put a task on the list to "
                "backfill "
                "reminders for appointments that were booked before this ships — we run that after "
                "the "
                "deploy, not now.",
                f"Change of plan on quiet hours — they start at {quiet2}. Ops asked. And add a "
                "to-do for "
                "backfilling reminders for everything already booked before release; that's a post-"
                "deploy job, don't do it yet.",
            )
        )
    )
    c.replace(
        "changing quiet hours",
        conf,
        "Start quiet hours earlier.",
        [
            (f'    quietFrom = "{quiet1}"', f'    quietFrom = "{quiet2}"'),
        ],
        language="hocon",
    )
    backfill = "Backfill reminders for appointments booked before the release"
    plan.append(("9", backfill, "pending", "medium"))
    c.todos(plan, text="Changed, and the backfill is on the list for after the deploy.")
    filler.until(gap)

    # 13. detekt, which CI runs.
    user(
        pick(
            (
                "Run detekt before we go further, CI fails the build on any finding.",
                "Can you run detekt? CI is strict about it.",
            )
        )
    )
    long_line = c.line_of(poller, "too late to send")
    c.run(
        "running detekt",
        "./gradlew detekt",
        (
            "> Task :detekt FAILED\n"
            f"{c.abs(poller)}:{long_line}:121: Line detected, which is longer than the defined "
            "maximum line length in the code style. [MaxLineLength]\n"
            + _gradle_failure(
                "detekt",
                "Analysis failed with 1 weighted issues.",
                6,
                "1 actionable task: 1 executed",
            )
        ),
        code=1,
    )
    c.replace(
        "wrapping long line",
        poller,
        "Wrap the log line detekt flagged.",
        [
            (
                late_log,
                f"                log.info(\n                    {too_late},\n"
                "                    row.id,\n                    row.startsAt,\n                )",
            ),
        ],
        text="One line over 120 characters, in the log call I just added.",
    )
    c.run(
        "running detekt",
        "./gradlew detekt",
        "> Task :detekt\n\nBUILD SUCCESSFUL in 5s\n1 actionable task: 1 executed",
    )
    filler.until(gap)

    # 14. The lead time settles; a test for the spring-forward night fails.
    user(
        pick(
            (
                f"Talked to the vets once more. Let's say {lead3} after all — it gives them time "
                "to "
                "offer the slot to someone else when a client cancels.",
                f"OK, final answer from the vets: {lead3} after all. If a client cancels they want "
                "enough time to rebook the slot.",
            )
        )
    )
    c.replace(
        "changing lead time",
        conf,
        "Set the agreed lead time.",
        [
            (f"    leadTime = {lead2}", f"    leadTime = {lead3}"),
        ],
        language="hocon",
    )
    c.replace(
        "adding DST test",
        quiet_test,
        "Cover the night the clocks go forward.",
        [
            (
                "    @Test\n    fun `the end of quiet hours is already outside them`() {",
                f"    @Test\n    fun `{DST_TEST}`() {{\n"
                f'        assertEquals(at("{morning}", 8), '
                f'quiet.push(at("{_eve(morning)}", 23, 15), zone))\n'
                "    }\n\n"
                "    @Test\n    fun `the end of quiet hours is already outside them`() {",
            ),
        ],
        text=pick(
            (
                f"Since quiet hours are computed in {w.zone}, I want a test for the night the "
                "clocks "
                "spring forward.",
                f"One more case worth pinning down: the night {w.zone} jumps an hour ahead.",
            )
        ),
    )
    snapshot = "> Task :compileKotlin UP-TO-DATE\n> Task :compileTestKotlin\n> Task :testClasses"
    command_id = c.run_background(
        "running tests", "./gradlew test", snapshot, text="Full run; the containers make it slow."
    )
    last_counts = f"{w.last_total} tests completed, 1 failed"
    dst_line = c.line_of(quiet_test, DST_TEST) + 1
    c.status(
        command_id,
        (
            f"{snapshot}\n\n> Task :test\n\nQuietHoursTest > {DST_TEST}() FAILED\n"
            "    org.opentest4j.AssertionFailedError: expected: "
            f"<{morning}T08:00{offset}[{w.zone}]> "
            f"but was: <{morning}T07:00{offset}[{w.zone}]>\n"
            "        at "
            "app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n"
            "        at "
            "app//org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:182)\n"
            "        at app//kotlin.test.junit5.JUnit5Asserter.assertEquals(JUnitSupport.kt:32)\n"
            "        at "
            f"app//{w.pkg}.reminders.QuietHoursTest.{DST_TEST}(QuietHoursTest.kt:{dst_line})\n\n"
            f"{last_counts}\n\n> Task :test FAILED\n"
            + _gradle_failure(
                "test",
                f"There were failing tests. See the report at: "
                f"file://{w.root}/build/reports/tests/test/index.html",
                41,
                "5 actionable tasks: 2 executed, 3 up-to-date",
            )
        ),
        code=1,
        text="Waiting for it to finish.",
    )
    s.say(
        pick(
            (
                "The new test fails and it's a real bug: `QuietHours.push` adds the quiet-hours "
                "length "
                "as a fixed `Duration` to the start of the evening. On the night the clocks jump "
                "ahead "
                "that night is an hour shorter, so the reminder lands at 07:00 instead of 08:00. "
                "The fix "
                "is to resolve `until` on the next local date instead of adding a duration. "
                "Everything "
                "else passes.",
                "Red, and rightly so: `push` takes the start of quiet hours and adds their length "
                "as a "
                "`Duration`. When the clocks go forward the night has one hour less, so we end up "
                "at "
                "07:00 local. It should take the next day's 08:00 in the zone instead. The rest of "
                "the "
                "suite is green.",
            )
        )
    )
    user(
        pick(
            (
                f"Leave that one for now and put it on the list, I'll pair with {w.colleague} on "
                "it "
                "Monday. Commit what we have on a branch, push, and open a draft PR.",
                f"Don't fix it today — add it to the list, {w.colleague} and I will take it on "
                "Monday. "
                "Commit everything to a branch, push it and open a PR as a draft.",
            )
        )
    )
    dst_todo = "Make QuietHours.push survive the spring-forward night"
    plan.append(("10", dst_todo, "pending", "high"))
    c.todos(plan)
    branch = f"feature/{w.ticket.lower()}-appointment-reminders"
    c.run(
        "creating branch",
        f"git checkout -b {branch}",
        f"Switched to a new branch '{branch}'",
        safe=False,
        text="Branch and commit.",
    )
    created = [
        w.migration_path,
        f"{w.main}/reminders/QuietHours.kt",
        f"{w.main}/reminders/ReminderOutbox.kt",
        poller,
        f"{w.main}/reminders/ReminderSettings.kt",
        sms,
        quiet_test,
        poller_test,
    ]
    gone = [nightly, nightly_test]
    changed = len(created) + len(gone) + 3  # application.conf, Application.kt, the repository
    c.run(
        "committing",
        f'git add -A && git commit -m "{w.ticket}: SMS reminder per appointment through {w.table}"',
        "\n".join(
            [
                f"[{branch} {w.branch_hash}] {w.ticket}: SMS reminder per appointment through "
                f"{w.table}",
                f" {changed} files changed, 402 insertions(+), 71 deletions(-)",
                *(
                    f" {mode} mode 100644 {path}"
                    for path, mode in sorted(
                        [(p, "create") for p in created] + [(p, "delete") for p in gone]
                    )
                ),
            ]
        ),
        safe=False,
    )
    c.run(
        "pushing",
        f"git push -u origin {branch}",
        (
            f"remote: \nremote: Create a pull request for '{branch}' on GitHub by visiting:\n"
            f"remote:      https://github.com/{w.org}/{w.app}-api/pull/new/{branch}\nremote: \n"
            f"To github.com:{w.org}/{w.app}-api.git\n * [new branch]      {branch} -> {branch}\n"
            f"branch '{branch}' set up to track 'origin/{branch}'."
        ),
        safe=False,
    )
    c.run(
        "opening draft PR",
        "gh pr create --draft --fill --base main",
        f"https://github.com/{w.org}/{w.app}-api/pull/{w.pr}",
        safe=False,
    )
    s.say(
        pick(
            (
                f"Pushed, and draft PR #{w.pr} is open. Have a good weekend.",
                f"All pushed — draft PR #{w.pr} is up. Enjoy the weekend.",
            )
        )
    )

    _plant(
        s,
        w,
        backfill=backfill,
        dst_todo=dst_todo,
        plan_two=booking,
        first_counts=first_counts,
        last_counts=last_counts,
    )
    return s


def _eve(morning: str) -> str:
    day = int(morning[-2:]) - 1
    return f"{morning[:-2]}{day:02d}"


def _plant(
    s: Session,
    w: _World,
    *,
    backfill: str,
    dst_todo: str,
    plan_two: str,
    first_counts: str,
    last_counts: str,
) -> None:
    lead1, lead2, lead3 = w.leads
    quiet1, quiet2 = w.quiet
    s.fact("constraint", "No Quartz and no other scheduling library: no new dependency.",
           ["Quartz"])  # fmt: skip
    s.fact("constraint", "Times are stored as timestamptz in UTC; the zone is for quiet hours.",
           ["timestamptz"])  # fmt: skip
    s.fact("constraint", "A reminder text fits in 160 characters (one SMS segment).",
           ["160 characters"])  # fmt: skip
    s.fact("constraint", "Nothing under the billing package may be touched (payments owns it).",
           [f"{w.main}/billing/"])  # fmt: skip
    s.fact("constraint", "Never log a full phone number: all but the last four digits masked.",
           ["last four digits"])  # fmt: skip
    s.fact("file_read", "build.gradle.kts was read.", ["build.gradle.kts"])
    s.fact("file_modified", "application.conf holds the reminder settings.",
           ["src/main/resources/application.conf"])  # fmt: skip
    s.fact("file_modified", "Application.kt starts the poller instead of the nightly job.",
           [f"{w.main}/Application.kt"])  # fmt: skip
    s.fact("file_modified", "AppointmentRepository writes the reminder row with the appointment.",
           [f"{w.main}/appointments/AppointmentRepository.kt"])  # fmt: skip
    s.fact("file_created", "The Flyway migration for the outbox table (after its rename).",
           [w.migration_path], stale=[f"V{w.migration}_{w.table}.sql"])  # fmt: skip
    s.fact("file_created", "ReminderPoller.kt was created.",
           [f"{w.main}/reminders/ReminderPoller.kt"])  # fmt: skip
    s.fact("file_created", "QuietHoursTest.kt was created.",
           [f"{w.tests}/reminders/QuietHoursTest.kt"])  # fmt: skip
    s.fact("file_deleted", "The nightly reminder job was removed.",
           [f"{w.main}/reminders/NightlyReminderJob.kt"])  # fmt: skip
    s.fact("command", "detekt is run before committing (CI fails on findings).",
           ["./gradlew detekt"])  # fmt: skip
    s.fact("error_resolved", "compileKotlin failed on an unresolved clinicZone (fixed).",
           ["Unresolved reference: clinicZone"], required=False)  # fmt: skip
    s.fact("error_resolved", "The outbox table was missing: the migration was misnamed (fixed).",
           [f'relation "{w.table}" does not exist'], required=False)  # fmt: skip
    s.fact("error_open", "The spring-forward quiet-hours test still fails.", [DST_TEST])
    s.fact("decision", "An outbox table polled by every pod with FOR UPDATE SKIP LOCKED.",
           ["SKIP LOCKED", w.table], stale=["coroutine ticker", "CronJob"])  # fmt: skip
    s.fact("decision", "Reminders too late to help are marked MISSED_WINDOW, never sent.",
           ["MISSED_WINDOW"])  # fmt: skip
    s.fact("todo", "Writing the outbox row on booking is done.", [plan_two], required=False)
    s.fact("todo", "The tests for the window and the sender are done.",
           ["Tests for the window and the sender"], required=False)  # fmt: skip
    s.fact("todo", "The Micrometer counter was dropped from the list.",
           ["Micrometer counter for reminders sent"], required=False)  # fmt: skip
    s.fact("todo", "Backfilling reminders after the deploy is still to do.", [backfill])
    s.fact("todo", "Fixing QuietHours for the spring-forward night is still to do.", [dst_todo])
    s.fact("changed_value", f"Reminders go out {lead3} ahead.", [lead3], stale=[lead1, lead2])
    s.fact("changed_value", f"Quiet hours start at {quiet2}.", [quiet2], stale=[quiet1])
    s.fact("identifier", "The ticket the work belongs to.", [w.ticket])
    s.fact("identifier", "The commit prod runs.", [w.prod_hash])
    s.fact("test_status", "The last run: one test failing.", [last_counts], stale=[first_counts])
    s.fact("last_message", "The draft PR is open.", [f"draft PR #{w.pr}"])


def write(seed: int, tokens: int) -> EvalSession:
    """A windsurfstory-style session of about `tokens` tokens."""
    bare = _tell(seed, 0)
    gaps = 12
    goal = int(tokens * CHARS_PER_TOKEN * 1.03)
    gap = max(0, (goal - bare.chars) // gaps)
    session = _tell(seed, gap)
    return finish_session(session, family=FAMILY, seed=seed)


__all__ = ["DST_TEST", "FAMILY", "SYSTEM_PROMPT", "write"]
