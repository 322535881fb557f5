"""qstory-style: an Amazon Q Developer CLI (`q chat`, now Kiro CLI) session in native function
calls, with a story of its own.

Q's built-in tools, as its chat-cli declares and answers them: `execute_bash` {command,
summary}, answered with a JSON object {"exit_status": "<code>", "stdout": …, "stderr": …}
(so is `use_aws` {service_name, operation_name, parameters, region, label});
`fs_read` {operations: [{mode, path, …}], summary} — `Line` (start_line / end_line; answered
with the lines' text), `Directory` (depth; answered with long-format lines naming absolute
paths) and `Search` (pattern; answered with a JSON list of {line_number, context}, the
matching line marked "→ "); several operations in one call come back as "=== Operation N
Result (Text) ===" sections; `fs_write` {command, path, …, summary} — `create` {file_text},
`str_replace` {old_str, new_str}, `insert` {insert_line, new_str}, `append` {new_str} — which
answers with an empty text; and `todo_list` {command, …}: `create` {tasks,
todo_list_description}, `complete` {completed_indices, context_update, modified_files,
current_id}, `add` {new_tasks, insert_indices, current_id}, `remove` {remove_indices,
current_id}, each answered "TODO LIST STATE: <the list as JSON, tasks with
task_description/completed>\n\n ID: <id>". A removed task leaves the list. As Q sends them,
the project's context files come first as a user message between "--- CONTEXT ENTRY BEGIN
---" / "END" headers (acknowledged by the assistant), and each prompt carries the current
time in a context entry before "--- USER MESSAGE BEGIN ---".

The story: the S3-triggered TypeScript Lambda that loads partner invoice files into DynamoDB
loses an upload whenever it fails; the user wants retries, a dead-letter path and an alarm,
wired through Terraform. The first prompt sets the function's concurrency cap and how long
failed messages are kept, and three rules in prose (a forbidden npm package, plan but never
apply, a cost-center tag). The assistant edits the prod environment, is sent to staging and
reverts with git; the design goes from the async invoke's retry config to an EventBridge rule
to an SQS queue in front of the function with partial batch responses; the cap changes twice
(the second time without naming it), the retention once; the user puts a shared module off
limits, asks for a KMS key's id (answered from `use_aws` kms describe-key), removes a to-do and
adds one. A tsc error, a failing jest test and a `terraform validate` error are fixed, the
old hand-rolled retry helper is removed with `git rm`, and the last jest run has one
failure. The final message names no fact.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

from compaction.eval.families._base import (
    _WORDS,
    CHARS_PER_TOKEN,
    Session,
    camel,
    code_file,
    finish_session,
    hexid,
    ident,
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "qstory-style"

_SYSTEM = "\n".join(
    (
        "You are Amazon Q, an AI assistant built by Amazon Web Services (AWS) to help "
        "developers in their terminal: writing and changing code, working with the AWS CLI "
        "and infrastructure as code, and explaining what a system does.",
        "",
        "When a task needs it, use the tools you have: read files and directories with "
        "fs_read, change files with fs_write, run commands with execute_bash (the user "
        "approves anything that is not read-only), call AWS APIs with use_aws, and keep a "
        "TODO list with todo_list for work of several steps. Give every tool call a short "
        "summary of why you make it.",
        "",
        "Rules:",
        "- Do not invent file contents, resource names or command output; read or run first.",
        "- Prefer the smallest change that does the job and keep to the project's style.",
        "- Never include secrets or credentials in code or in your answers.",
        "- If a request could change or delete cloud resources, say so before acting.",
        "- Be concise; use Markdown, and fenced code blocks with a language tag for code.",
        "",
        "<system_context>",
        "Operating System: {os}",
        "Current Working Directory: {root}",
        "Date: {date}",
        "</system_context>",
    )
)

_CONTEXT_BEGIN = "--- CONTEXT ENTRY BEGIN ---\n"
_CONTEXT_END = "--- CONTEXT ENTRY END ---\n\n"
_USER_BEGIN = "--- USER MESSAGE BEGIN ---\n"
_USER_END = "--- USER MESSAGE END ---\n\n"
_ACK = (
    "I will fully incorporate this information when generating my responses, and explicitly "
    "acknowledge relevant parts of the summary when answering questions."
)

_APPS = ("tidewater", "copperleaf", "bluefin", "saltmarsh", "greylag", "ironbark")
_FUNCTIONS = ("invoice-ingest", "remittance-loader", "statement-intake", "receipt-loader")
_PACKAGES = ("axios", "lodash", "moment", "node-fetch")
_COST_CENTERS = ("FIN-2207", "AR-5521", "OPS-3180", "CC-4410")
_SHARED = ("network-baseline", "org-guardrails", "bucket-policies", "data-lake-core")
_TEAMS = ("the platform team", "cloud foundations", "the data platform squad", "security")
_USERS = ("ana", "mkeller", "tobi", "rsingh")


class _Q:
    """Q's built-in tools, as they appear in the chat."""

    def __init__(self, s: Session, root: str, now: datetime) -> None:
        self.s = s
        self.root = root
        self.now = now
        self.todo_id = ""
        self.todo: dict[str, object] = {}

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    # the user's prompt, as Q sends it: the time in a context entry, then the prompt
    def prompt(self, text: str) -> None:
        rng = self.s.rng
        self.now += timedelta(minutes=rng.randint(2, 9), seconds=rng.randint(0, 59),
                              milliseconds=rng.randint(0, 999))  # fmt: skip
        stamp = self.now.isoformat(timespec="milliseconds")
        self.s.user(
            f"{_CONTEXT_BEGIN}Current time: {self.now.strftime('%A')}, {stamp}\n{_CONTEXT_END}"
            f"{_USER_BEGIN}{text}{_USER_END}".strip()
        )

    # execute_bash
    def bash(
        self,
        command: str,
        summary: str,
        stdout: str = "",
        stderr: str = "",
        *,
        exit_status: int = 0,
        text: str = "",
        filler: bool = False,
    ) -> None:
        result = json.dumps(
            {"exit_status": str(exit_status), "stdout": stdout, "stderr": stderr},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        args = {"command": command, "summary": summary}
        self.s.call("execute_bash", args, result, text=text, filler=filler)

    # use_aws: answered like execute_bash (the CLI's JSON output in stdout)
    def aws(
        self,
        service: str,
        operation: str,
        parameters: dict[str, str],
        region: str,
        label: str,
        stdout: str,
    ) -> None:
        args = {"service_name": service, "operation_name": operation,
                "parameters": parameters, "region": region, "label": label}  # fmt: skip
        result = json.dumps({"exit_status": "0", "stdout": stdout, "stderr": ""},
                            ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        self.s.call("use_aws", args, result)

    # fs_read
    def read(
        self,
        rel: str,
        content: str,
        summary: str,
        *,
        start: int | None = None,
        end: int | None = None,
        text: str = "",
        filler: bool = False,
    ) -> None:
        op: dict[str, object] = {"mode": "Line", "path": self.abs(rel)}
        lines = content.split("\n")
        if start is not None:
            op["start_line"] = start
        if end is not None:
            op["end_line"] = end
        first = (start or 1) - 1
        last = len(lines) if end is None else end
        shown = "\n".join(lines[first:last])
        args = {"operations": [op], "summary": summary}
        self.s.call("fs_read", args, shown, text=text, filler=filler)

    def read_many(self, files: list[tuple[str, str]], summary: str, *, text: str = "") -> None:
        ops = [{"mode": "Line", "path": self.abs(rel)} for rel, _ in files]
        result = "\n\n".join(
            f"=== Operation {i} Result (Text) ===\n{content}"
            for i, (_, content) in enumerate(files, 1)
        )
        self.s.call("fs_read", {"operations": ops, "summary": summary}, result, text=text)

    def directory(
        self,
        rel: str,
        entries: list[tuple[str, bool]],
        summary: str,
        *,
        depth: int = 0,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """Entries (path relative to root, is a directory), in Q's long format."""
        rng = self.s.rng
        lines = []
        for path, is_dir in entries:
            kind, mode = ("d", "rwxr-xr-x") if is_dir else ("-", "rw-r--r--")
            size = 4096 if is_dir else rng.randint(180, 24000)
            stamp = f"Nov {rng.randint(1, 16):2d} {rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}"
            lines.append(f"{kind}{mode} 1 1000 1000 {size} {stamp} {self.abs(path)}")
        op: dict[str, object] = {"mode": "Directory", "path": self.abs(rel)}
        if depth:
            op["depth"] = depth
        args = {"operations": [op], "summary": summary}
        self.s.call("fs_read", args, "\n".join(lines), text=text, filler=filler)

    def search(self, rel: str, content: str, pattern: str, summary: str, *, text: str = "") -> None:
        lines = content.split("\n")
        matches = []
        for i, line in enumerate(lines):
            if pattern.casefold() in line.casefold():
                context = "".join(
                    f"{'→ ' if k == i else '  '}{k + 1}: {lines[k]}\n"
                    for k in range(max(0, i - 2), min(len(lines), i + 3))
                )
                matches.append({"line_number": i + 1, "context": context})
        op = {"mode": "Search", "path": self.abs(rel), "pattern": pattern}
        result = json.dumps(matches, ensure_ascii=False, separators=(",", ":"))
        self.s.call("fs_read", {"operations": [op], "summary": summary}, result, text=text)

    # fs_write: answers with an empty text
    def create(self, rel: str, content: str, summary: str, *, text: str = "") -> None:
        args = {"command": "create", "path": self.abs(rel), "file_text": content,
                "summary": summary}  # fmt: skip
        self.s.call("fs_write", args, "", text=text)

    def replace(self, rel: str, old: str, new: str, summary: str, *, text: str = "") -> None:
        args = {"command": "str_replace", "path": self.abs(rel), "old_str": old, "new_str": new,
                "summary": summary}  # fmt: skip
        self.s.call("fs_write", args, "", text=text)

    def insert(self, rel: str, line: int, new: str, summary: str, *, text: str = "") -> None:
        args = {"command": "insert", "path": self.abs(rel), "insert_line": line, "new_str": new,
                "summary": summary}  # fmt: skip
        self.s.call("fs_write", args, "", text=text)

    def append(self, rel: str, new: str, summary: str, *, text: str = "") -> None:
        args = {"command": "append", "path": self.abs(rel), "new_str": new, "summary": summary}
        self.s.call("fs_write", args, "", text=text)

    # todo_list
    def _state(self) -> str:
        body = json.dumps(self.todo, ensure_ascii=False, separators=(",", ":"))
        return f"TODO LIST STATE: {body}\n\n ID: {self.todo_id}"

    def todo_create(self, tasks: list[str], description: str, *, text: str = "") -> None:
        self.todo_id = str(int(self.now.timestamp() * 1000) + self.s.rng.randint(0, 999))
        self.todo = {
            "tasks": [{"task_description": t, "completed": False} for t in tasks],
            "description": description,
            "context": [],
            "modified_files": [],
            "id": self.todo_id,
        }
        args = {"command": "create", "tasks": tasks, "todo_list_description": description}
        self.s.call("todo_list", args, self._state(), text=text)

    def _tasks(self) -> list[dict[str, object]]:
        tasks = self.todo["tasks"]
        assert isinstance(tasks, list)
        return tasks

    def todo_complete(
        self, indices: list[int], context: str, files: list[str], *, text: str = ""
    ) -> None:
        for i in indices:
            self._tasks()[i]["completed"] = True
        contexts = self.todo["context"]
        modified = self.todo["modified_files"]
        assert isinstance(contexts, list) and isinstance(modified, list)
        contexts.append(context)
        modified.extend(self.abs(f) for f in files)
        args = {"command": "complete", "completed_indices": indices, "context_update": context,
                "modified_files": [self.abs(f) for f in files],
                "current_id": self.todo_id}  # fmt: skip
        self.s.call("todo_list", args, self._state(), text=text)

    def todo_remove(self, indices: list[int], *, text: str = "") -> None:
        for i in sorted(indices, reverse=True):
            del self._tasks()[i]
        args = {"command": "remove", "remove_indices": indices, "current_id": self.todo_id}
        self.s.call("todo_list", args, self._state(), text=text)

    def todo_add(self, tasks: list[str], at: list[int], *, text: str = "") -> None:
        for i, task in zip(at, tasks, strict=True):
            self._tasks().insert(i, {"task_description": task, "completed": False})
        args = {"command": "add", "new_tasks": tasks, "insert_indices": at,
                "current_id": self.todo_id}  # fmt: skip
        self.s.call("todo_list", args, self._state(), text=text)


# --- what the project's files and commands look like ----------------------------------------


def _hcl(rng: random.Random, lines: int) -> str:
    """A plausible Terraform file of about `lines` lines, made of filler words only."""
    out: list[str] = []
    while len(out) < lines:
        name = ident(rng)
        a, b = rng.sample(_WORDS, 2)
        kind = rng.random()
        if kind < 0.35:
            out += [
                f'resource "aws_ssm_parameter" "{name}" {{',
                f'  name  = "/${{var.service}}/{a}/{b}"',
                '  type  = "String"',
                f'  value = jsonencode({{ {a} = "{rng.choice(_WORDS)}", '
                f"limit = {rng.randint(2, 900)} }})",
                "  tags  = local.tags",
                "}",
                "",
            ]
        elif kind < 0.7:
            out += [
                f'data "aws_iam_policy_document" "{name}" {{',
                "  statement {",
                f'    sid       = "{camel(name)}"',
                '    actions   = ["ssm:GetParameter", "ssm:GetParametersByPath"]',
                f'    resources = ["arn:aws:ssm:*:*:parameter/${{var.service}}/{a}/*"]',
                "  }",
                "}",
                "",
            ]
        else:
            out += [
                f'variable "{name}" {{',
                f'  description = "How the {a} is matched against the {b}."',
                "  type        = string",
                f'  default     = "{rng.choice(_WORDS)}"',
                "}",
                "",
            ]
    return "\n".join(out[:lines])


def _jest(
    rng: random.Random,
    suites: list[tuple[str, list[str]]],
    failures: dict[str, tuple[int, list[str]]],
) -> tuple[str, int]:
    """jest's report (it writes to stderr) and its exit status: failures are test name →
    (line of the expectation, the lines of the diff)."""
    out: list[str] = []
    total = sum(len(names) for _, names in suites)
    failed_suites = 0
    for path, names in suites:
        failing = [n for n in names if n in failures]
        out.append(f" {'FAIL' if failing else 'PASS'}  {path}")
        if failing:
            failed_suites += 1
        for name in failing:
            line, diff = failures[name]
            out += [
                f"  ● handler › {name}",
                "",
                "    expect(received).toEqual(expected) // deep equality",
                "",
                *(f"    {d}" if d else "" for d in diff),
                "",
                f"      {line - 1} |     const result = await handler(event, context, noop);",
                f"    > {line} |     expect(result).toEqual(expected);",
                "         |                    ^",
                f"      {line + 1} |   }});",
                "",
                f"      at Object.<anonymous> ({path}:{line}:20)",
                "",
            ]
    failed = len(failures)
    passed_suites = len(suites) - failed_suites
    out.append(
        "Test Suites: "
        + (f"{failed_suites} failed, " if failed_suites else "")
        + f"{passed_suites} passed, {len(suites)} total"
    )
    out.append(
        "Tests:       "
        + (f"{failed} failed, " if failed else "")
        + f"{total - failed} passed, {total} total"
    )
    out += [
        "Snapshots:   0 total",
        f"Time:        {rng.randint(1, 4)}.{rng.randint(100, 999)} s",
        "Ran all test suites.",
    ]
    return "\n".join(out), 1 if failed else 0


_OTHER_TESTS = (
    "parses a header-only file as no rows",
    "rejects a row with a negative amount",
    "keeps the partner's currency code",
    "trims the BOM off the first column",
    "reads the partner id from the object key",
    "decodes a url-encoded key",
    "rounds amounts to cents",
    "maps the due date to ISO 8601",
    "ignores trailing empty lines",
    "rejects a key outside the inbound prefix",
    "writes one item per invoice line",
    "logs the object key on a parse error",
    "accepts semicolon-separated files",
    "reads quoted fields with embedded commas",
    "rejects a file without an invoice id column",
    "keeps leading zeros in partner references",
    "treats an empty amount as a parse error",
    "parses dates written day-first",
    "reads the upload date from the key prefix",
    "refuses keys with path traversal",
    "normalises partner ids to upper case",
    "counts rows per file in the log line",
)


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"qstory-{seed}")
    app = rng.choice(_APPS)
    fn = rng.choice(_FUNCTIONS)
    pkg = rng.choice(_PACKAGES)
    cc = rng.choice(_COST_CENTERS)
    shared = rng.choice(_SHARED)
    team = rng.choice(_TEAMS)
    user_dir = rng.choice(_USERS)
    root = f"/home/{user_dir}/work/{app}-platform"
    c0, c1, c2 = rng.randint(10, 14), rng.randint(20, 30), rng.choice((40, 45, 50, 60))
    d0, d1 = rng.choice((3, 5, 6)), rng.choice((10, 12, 14))
    table = f"{app}-invoices-{hexid(rng, 4)}"
    bucket = f"{app}-partner-drop-{hexid(rng, 6)}"
    key_id = "-".join(hexid(rng, n) for n in (8, 4, 4, 4, 12))
    alias = f"alias/{app}-data"
    queue = f"{app}-{fn}-queue"
    dlq = f"{app}-{fn}-dlq"
    branch = f"{fn}-sqs-redrive"

    lam = f"lambdas/{fn}"
    handler = f"{lam}/src/handler.ts"
    helper = f"{lam}/src/retryUpload.ts"
    test_file = f"{lam}/test/handler.test.ts"
    module = f"terraform/modules/{fn}"
    module_main = f"{module}/main.tf"
    async_tf = f"{module}/async.tf"
    queue_tf = f"{module}/queue.tf"
    alarms_tf = f"{module}/alarms.tf"
    staging = "terraform/envs/staging/main.tf"
    prod = "terraform/envs/prod/main.tf"
    module_name = fn.replace("-", "_")

    start = datetime(2026, 11, rng.randint(16, 20), rng.randint(8, 11), rng.randint(0, 59),
                     rng.randint(0, 59), tzinfo=timezone(timedelta(hours=1)))  # fmt: skip
    s = Session(rng, _SYSTEM.format(os="linux", root=root, date=start.strftime("%Y-%m-%d")))
    q = _Q(s, root, start)
    # Q's tool results are JSON inside the message's JSON: their escapes count as characters
    # but cost few tokens, so the session is written a little longer in characters.
    target = tokens * CHARS_PER_TOKEN * 1.13
    others = [x for x in _FUNCTIONS if x != fn]

    def pad(fraction: float) -> None:
        while s.chars < target * fraction:
            kind = rng.random()
            if kind < 0.42:
                folder = rng.choice(("packages/shared/src", f"lambdas/{rng.choice(others)}/src"))
                name = ident(rng).replace("_", "-")
                q.read(f"{folder}/{name}.ts", code_file(rng, "ts", rng.randint(40, 90)),
                       f"Reading {name}.ts", filler=True)  # fmt: skip
            elif kind < 0.7:
                folder = rng.choice(("terraform/modules/observability", "terraform/modules/ssm",
                                     f"terraform/modules/{rng.choice(others)}"))  # fmt: skip
                name = ident(rng)
                q.read(f"{folder}/{name}.tf", _hcl(rng, rng.randint(40, 80)),
                       f"Reading {name}.tf", filler=True)  # fmt: skip
            elif kind < 0.88:
                group = f"/aws/lambda/{app}-{rng.choice(others)}"
                q.bash(f"aws logs tail {group} --since 1h --format short",
                       "Looking at recent log lines", log_lines(rng, 55), filler=True)  # fmt: skip
            else:
                folder = rng.choice(("packages/shared/src", "terraform/modules/ssm", "scripts"))
                entries = [(f"{folder}/{ident(rng)}.{'tf' if 'terraform' in folder else 'ts'}",
                            False) for _ in range(rng.randint(8, 15))]  # fmt: skip
                q.directory(folder, entries, "Listing the folder", filler=True)

    # --- the project's context files, as Q sends them first ----------------------------------
    readme = "\n".join([
        f"# {app}-platform",
        "",
        f"Infrastructure and Lambda functions behind {app}'s partner billing.",
        "",
        "- `terraform/modules/` — one module per service; `terraform/envs/<env>/` wires them.",
        "- `lambdas/<name>/` — TypeScript functions, bundled with esbuild, tested with jest.",
        "- `packages/shared/` — code the functions share (logging, config).",
        "",
        "Deploys go through the pipeline: staging on merge, prod on a release tag.",
    ])  # fmt: skip
    rules = "\n".join([
        "# Conventions",
        "",
        "- Format with `terraform fmt -recursive` and `npm run lint` before committing.",
        "- Node.js 20 runtime, ES modules, AWS SDK for JavaScript v3.",
        "- Name resources `${var.service}-<purpose>`; keep one concern per .tf file.",
        "- Branch names: `<service>-<short-topic>`.",
    ])  # fmt: skip
    s.user(
        f"{_CONTEXT_BEGIN}[{root}/README.md]\n{readme}\n[{root}/.amazonq/rules/conventions.md]\n"
        f"{rules}\n{_CONTEXT_END}".strip()
    )
    s.say(_ACK)

    # --- the task ----------------------------------------------------------------------------
    q.prompt(
        f"Partner invoice files land in s3://{bucket}/inbound/ and the bucket notification "
        f"invokes {fn} directly. When the function fails — DynamoDB throttling, a malformed "
        "CSV — the upload is simply gone and finance finds out a week later. Make the ingestion "
        "reliable: retries, somewhere failed uploads end up that we can look at, and an alarm. "
        f"Cap the function at {c0} concurrent executions so it stops hammering the table, and "
        f"keep failed messages around for {d0} days.\n\n"
        f"Ground rules:\n- No {pkg}, and no new runtime dependencies in general; the function "
        "ships with the AWS SDK v3 clients and csv-parse, that's it.\n"
        "- Do not run terraform apply, ever. Plan against staging is fine; the pipeline applies.\n"
        f'- Every resource you add carries the tag CostCenter = "{cc}"; finance allocates by it.'
    )
    s.fact("constraint", f"no {pkg}, no new runtime dependencies", (pkg,))
    s.fact("constraint", "never run terraform apply", ("terraform apply",))
    s.fact("constraint", f"new resources are tagged CostCenter {cc}", ("CostCenter", cc))
    tasks = [
        f"Read the {fn} module and handler",
        "Retry failed uploads and keep the ones that still fail",
        "Report failures per record from the handler",
        f"Replay last month's lost uploads from s3://{bucket}",
        "Alarm when failed uploads pile up",
        "jest + terraform validate/plan on staging",
    ]
    q.todo_create(tasks, f"Make {fn} ingestion reliable (retries, failure store, alarm)",
                  text="I'll break this down first.")  # fmt: skip
    q.directory("", [
        (".amazonq", True), ("lambdas", True), (lam, True), (f"{lam}/src", True),
        (f"{lam}/test", True), ("packages", True), ("terraform", True), (module, True),
        ("terraform/envs", True), ("terraform/envs/staging", True), ("terraform/envs/prod", True),
        ("README.md", False), ("package.json", False),
    ], "Getting an overview of the repository", depth=2)  # fmt: skip
    package_json = json.dumps({
        "name": f"@{app}/{fn}",
        "version": "1.7.0",
        "type": "module",
        "scripts": {"build": "esbuild src/handler.ts --bundle --platform=node --outdir=dist",
                    "test": "jest", "typecheck": "tsc --noEmit"},
        "dependencies": {"@aws-sdk/client-dynamodb": "^3.682.0",
                         "@aws-sdk/lib-dynamodb": "^3.682.0",
                         "@aws-sdk/client-s3": "^3.682.0", "csv-parse": "^5.5.6"},
        "devDependencies": {"@types/aws-lambda": "^8.10.145", "esbuild": "^0.24.0",
                            "jest": "^29.7.0", "ts-jest": "^29.2.5", "typescript": "^5.6.3"},
    }, indent=2)  # fmt: skip
    q.read(f"{lam}/package.json", package_json, "Checking the function's dependencies")
    s.fact("file_read", "read the function's package.json", (f"{lam}/package.json",),
           required=False)  # fmt: skip
    handler_old = "\n".join([
        'import type { S3Event, S3EventRecord } from "aws-lambda";',
        'import { DynamoDBClient } from "@aws-sdk/client-dynamodb";',
        'import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";',
        'import { readInvoiceRows, objectKey } from "./parse.js";',
        'import { retryUpload } from "./retryUpload.js";',
        "",
        "const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));",
        "const TABLE = process.env.TABLE_NAME!;",
        "",
        "export async function handler(event: S3Event): Promise<void> {",
        "  for (const record of event.Records) {",
        "    try {",
        "      await ingest(record);",
        "    } catch (err) {",
        '      console.error("ingest failed", objectKey(record), err);',
        "      await retryUpload(record);",
        "    }",
        "  }",
        "}",
        "",
        "async function ingest(record: S3EventRecord): Promise<void> {",
        "  for (const row of await readInvoiceRows(record)) {",
        "    await db.send(new PutCommand({ TableName: TABLE, Item: row }));",
        "  }",
        "}",
    ])  # fmt: skip
    main_old = "\n".join([
        f'resource "aws_lambda_function" "{module_name}" {{',
        f'  function_name = "${{var.service}}-{fn}"',
        '  runtime       = "nodejs20.x"',
        '  handler       = "handler.handler"',
        "  filename      = var.bundle_path",
        "  role          = aws_iam_role.this.arn",
        "  timeout       = 60",
        "",
        "  environment {",
        f'    variables = {{ TABLE_NAME = "{table}" }}',
        "  }",
        "",
        "  tags = local.tags",
        "}",
        "",
        'resource "aws_lambda_permission" "from_bucket" {',
        '  statement_id  = "AllowS3Invoke"',
        '  action        = "lambda:InvokeFunction"',
        f"  function_name = aws_lambda_function.{module_name}.function_name",
        '  principal     = "s3.amazonaws.com"',
        "  source_arn    = var.bucket_arn",
        "}",
        "",
        "locals {",
        '  tags = merge(var.tags, { Service = var.service, CostCenter = var.cost_center })',
        "}",
    ])  # fmt: skip
    q.read_many([(handler, handler_old), (module_main, main_old)],
                "Reading the handler and its Terraform module")  # fmt: skip
    s.say(
        f"The function writes every CSV row straight into `{table}` with a `PutCommand`; on "
        "an error it calls `retryUpload`, which copies the object onto itself to fire the "
        "notification again — with no limit and no record of what failed.\n\nPlan: keep S3 "
        "invoking the function asynchronously and give that invoke a retry policy — an "
        "`aws_lambda_function_event_invoke_config` with `maximum_retry_attempts = 2` and an "
        "on-failure destination — plus `reserved_concurrent_executions` on the function."
    )
    s.fact("identifier", f"the function writes to {table}", (table,))
    pad(0.08)

    # --- the wrong environment ---------------------------------------------------------------
    env_old = "\n".join([
        f'module "{module_name}" {{',
        f'  source      = "../../modules/{fn}"',
        f'  service     = "{app}"',
        f'  bucket_arn  = module.{shared.replace("-", "_")}.partner_drop_bucket_arn',
        "  bundle_path = var.bundle_path",
        "  cost_center = var.cost_center",
        "}",
    ])  # fmt: skip
    env_new = env_old.replace(
        "  cost_center = var.cost_center",
        f"  cost_center = var.cost_center\n  reserved_concurrency = {c0}",
    )
    prod_text = "\n".join([
        'terraform {',
        '  backend "s3" {',
        f'    bucket = "{app}-tfstate"',
        '    key    = "prod/platform.tfstate"',
        '    region = "eu-west-1"',
        "  }",
        "}",
        "",
        env_old,
    ])  # fmt: skip
    q.read(prod, prod_text, "Finding where the module is instantiated")
    q.replace(prod, env_old, env_new, "Pass the concurrency cap to the module",
              text="Wiring the cap through the environment first.")  # fmt: skip
    q.prompt(
        f"Stop — {prod} is never edited by hand, the release pipeline promotes it from staging. "
        f"Everything you change goes into {staging}."
    )
    q.bash(f"git checkout -- {prod}", "Reverting the edit to the prod environment",
           stderr="Updated 1 path from the index",
           text="Understood, putting prod back as it was.")  # fmt: skip
    q.read(staging, prod_text.replace("prod/platform", "staging/platform"),
           "Reading the staging environment")  # fmt: skip
    q.replace(staging, env_old, env_new, "Pass the concurrency cap to the module in staging")
    s.fact("file_modified", "the cap is wired in the staging environment", (staging,),
           stale=(prod,))  # fmt: skip
    pad(0.16)

    # --- the design, replaced twice ----------------------------------------------------------
    async_text = "\n".join([
        f'resource "aws_lambda_function_event_invoke_config" "{module_name}" {{',
        f"  function_name                = aws_lambda_function.{module_name}.function_name",
        "  maximum_retry_attempts       = 2",
        "  maximum_event_age_in_seconds = 3600",
        "",
        "  destination_config {",
        "    on_failure {",
        "      destination = aws_sqs_queue.failed.arn",
        "    }",
        "  }",
        "}",
    ])  # fmt: skip
    q.create(async_tf, async_text, "Retry policy and on-failure destination for async invokes")
    q.prompt(
        "That doesn't hold up: at the concurrency cap S3's events wait in Lambda's internal "
        "queue and get discarded after the max event age, and an on-failure record only has "
        "the event, not something we can redrive. I want the messages somewhere we can inspect."
    )
    s.say(
        "Then an EventBridge route: turn on EventBridge notifications for the bucket and add an "
        "`aws_cloudwatch_event_rule` for `Object Created` under `inbound/`, targeting the "
        "function with a dead-letter queue on the target."
    )
    q.prompt(
        f"EventBridge notifications aren't on for that bucket, and {team} won't flip them — the "
        "bucket lives in their module. Put a queue in front of the function instead."
    )
    s.say(
        f"Switching to a queue: the bucket notification sends `inbound/` events to an SQS queue "
        f"`{queue}`, an event source mapping feeds the function in batches of 10, and after 5 "
        f"receives a message moves to `{dlq}`. No event invoke config, no EventBridge rule. The "
        "handler returns `batchItemFailures` (`function_response_types = "
        '["ReportBatchItemFailures"]`) so only the records that failed come back.'
    )
    s.fact(
        "decision",
        f"an SQS queue {queue} in front of the function, with a DLQ",
        (queue,),
        stale=("aws_lambda_function_event_invoke_config", "aws_cloudwatch_event_rule"),
    )
    s.fact("decision", "partial batch responses: only failed records are retried",
           ("ReportBatchItemFailures",))  # fmt: skip
    q.bash(f"rm {async_tf}", "Removing the async retry config, replaced by the queue")
    queue_text = "\n".join([
        'resource "aws_sqs_queue" "ingest" {',
        f'  name                       = "{queue}"',
        "  visibility_timeout_seconds = 360",
        f"  kms_master_key_id          = \"{alias}\"",
        "",
        "  redrive_policy {",
        "    deadLetterTargetArn = aws_sqs_queue.dlq.arn",
        "    maxReceiveCount     = 5",
        "  }",
        "",
        "  tags = local.tags",
        "}",
        "",
        'resource "aws_sqs_queue" "dlq" {',
        f'  name                      = "{dlq}"',
        f"  message_retention_seconds = {d0 * 86400}",
        f"  kms_master_key_id         = \"{alias}\"",
        "  tags                      = local.tags",
        "}",
    ])  # fmt: skip
    q.create(queue_tf, queue_text, "The ingest queue and its dead-letter queue")
    s.fact("file_created", "the queue and DLQ", (queue_tf,))
    mapping = "\n".join([
        "",
        'resource "aws_lambda_event_source_mapping" "from_queue" {',
        "  event_source_arn        = aws_sqs_queue.ingest.arn",
        f"  function_name           = aws_lambda_function.{module_name}.arn",
        "  batch_size              = 10",
        '  function_response_types = ["ReportBatchItemFailures"]',
        "}",
    ])  # fmt: skip
    q.replace(module_main, "  timeout       = 60\n",
              "  timeout       = 60\n  reserved_concurrent_executions = var.reserved_concurrency\n",
              "Apply the concurrency cap")  # fmt: skip
    q.append(module_main, mapping, "Feed the function from the queue")
    s.fact("file_modified", "the module maps the queue onto the function", (module_main,))
    handler_new = "\n".join([
        'import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";',
        'import { DynamoDBClient } from "@aws-sdk/client-dynamodb";',
        'import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";',
        'import { readInvoiceRows, objectKey } from "./parse.js";',
        "",
        "const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));",
        "const TABLE = process.env.TABLE_NAME!;",
        "",
        "export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {",
        '  const batchItemFailures: SQSBatchResponse["batchItemFailures"] = [];',
        "  for (const record of event.Records) {",
        "    try {",
        "      await ingest(record);",
        "    } catch (err) {",
        '      console.error("ingest failed", record.messageId, err);',
        "    }",
        "  }",
        "  return { batchItemFailures };",
        "}",
        "",
        "async function ingest(record: SQSRecord): Promise<void> {",
        "  for (const row of await readInvoiceRows(record)) {",
        "    await db.send(new PutCommand({ TableName: TABLE, Item: row }));",
        "  }",
        "}",
    ])  # fmt: skip
    q.create(handler, handler_new, "Handle SQS batches and report failed records")
    s.fact("file_modified", "the handler takes SQS batches", (handler,))
    pad(0.36)

    # --- the cap, first change; types and tests ---------------------------------------------
    q.prompt(f"The table went on-demand last week, so raise the cap to {c1} concurrent executions.")
    q.replace(staging, f"  reserved_concurrency = {c0}", f"  reserved_concurrency = {c1}",
              "Raise the concurrency cap")  # fmt: skip
    tsc_cmd = f"cd {lam} && npx tsc --noEmit"
    q.bash(tsc_cmd, "Type-checking the function", "\n".join([
        "src/handler.ts(22,43): error TS2345: Argument of type 'SQSRecord' is not assignable to "
        "parameter of type 'S3EventRecord'.",
        "  Type 'SQSRecord' is missing the following properties from type 'S3EventRecord': "
        "eventVersion, eventSource, awsRegion, eventTime, and 5 more.",
    ]), exit_status=2)  # fmt: skip
    s.fact("command", "type-checking", (tsc_cmd,), required=False)
    q.replace(
        handler,
        "  for (const row of await readInvoiceRows(record)) {",
        "  const notification = JSON.parse(record.body) as S3Event;\n"
        "  const rows = await Promise.all(notification.Records.map(readInvoiceRows));\n"
        "  for (const row of rows.flat()) {",
        "Read the S3 records out of the SQS message body",
        text="`readInvoiceRows` takes an S3 record; the SQS body carries the S3 notification, "
        "so the handler unwraps it first.",
    )
    q.replace(handler, 'import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";',
              'import type { S3Event, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";',
              "Import the S3Event type")  # fmt: skip
    q.bash(tsc_cmd, "Type-checking again")
    s.fact("error_resolved", "tsc TS2345: SQSRecord passed where an S3EventRecord was expected",
           ("TS2345",), required=False)  # fmt: skip
    failing_first = "returns the failed message id in batchItemFailures"
    duplicate = "skips an invoice it already stored without failing the batch"
    names = list(_OTHER_TESTS)
    rng.shuffle(names)
    n1 = rng.randint(14, 17)
    handler_tests = [failing_first, "reads every S3 record in the message body"]
    extra = names[: n1 - len(handler_tests)]
    split = len(extra) // 2
    suites = [("test/parse.test.ts", extra[:split]), ("test/key.test.ts", extra[split:]),
              ("test/handler.test.ts", handler_tests)]  # fmt: skip
    test_text = "\n".join([
        'import { handler } from "../src/handler.js";',
        'import { sqsEvent, s3Notification, noop, context } from "./fixtures.js";',
        "",
        'describe("handler", () => {',
        f'  it("{failing_first}", async () => {{',
        '    const event = sqsEvent([s3Notification("inbound/ok.csv"), '
        's3Notification("inbound/broken.csv")]);',
        '    const expected = { batchItemFailures: [{ itemIdentifier: "msg-2" }] };',
        "    const result = await handler(event, context, noop);",
        "    expect(result).toEqual(expected);",
        "  });",
        "",
        '  it("reads every S3 record in the message body", async () => {',
        '    const event = sqsEvent([s3Notification("inbound/a.csv", "inbound/b.csv")]);',
        "    const expected = { batchItemFailures: [] };",
        "    const result = await handler(event, context, noop);",
        "    expect(result).toEqual(expected);",
        "  });",
        "});",
    ])  # fmt: skip
    q.create(test_file, test_text, "Tests for the SQS handler")
    s.fact("file_created", "the handler's tests", (test_file,))
    jest_cmd = f"cd {lam} && npx jest"
    report, status = _jest(rng, suites, {failing_first: (9, [
        "- Expected  - 5", "+ Received  + 1", "", "  {", '-   "batchItemFailures": [', "-     {",
        '-       "itemIdentifier": "msg-2",', "-     },", "-   ],", '+   "batchItemFailures": [],',
        "  }",
    ])})  # fmt: skip
    q.bash(jest_cmd, "Running the function's tests", stderr=report, exit_status=status)
    s.fact("command", "the jest run", (jest_cmd,), required=False)
    q.replace(
        handler,
        '      console.error("ingest failed", record.messageId, err);',
        '      console.error("ingest failed", record.messageId, err);\n'
        "      batchItemFailures.push({ itemIdentifier: record.messageId });",
        "Report the failed record",
        text="The `catch` logged the error but never added the message id, so the batch "
        "always looked clean.",
    )
    report, status = _jest(rng, suites, {})
    q.bash(jest_cmd, "Re-running the tests", stderr=report, exit_status=status)
    s.fact("error_resolved", "the batchItemFailures test failed: the catch swallowed the id",
           (failing_first,), required=False)  # fmt: skip
    q.todo_complete([0, 1, 2], f"Queue {queue} with DLQ {dlq}; handler reports batchItemFailures",
                    [staging, queue_tf, module_main, handler, test_file])  # fmt: skip
    s.fact("todo", "reporting failures per record is done", (tasks[2],), required=False)
    pad(0.5)

    # --- the user's interjections ------------------------------------------------------------
    q.prompt(
        f"One more thing: terraform/modules/{shared} is off limits — {team} owns it. If the "
        "bucket notification needs to change in there, write down what and I'll raise it with "
        "them."
    )
    s.fact("constraint", f"terraform/modules/{shared} is off limits",
           (f"terraform/modules/{shared}",))  # fmt: skip
    s.say(
        f"Noted: nothing under terraform/modules/{shared} gets edited. The notification "
        "change (target the queue instead of the function) will go in a note for you."
    )
    q.prompt(f"And what's the key ID behind {alias}? Security wants it in the change ticket.")
    account = "".join(rng.choice("0123456789") for _ in range(12))
    key_metadata = {"KeyMetadata": {
        "AWSAccountId": account,
        "KeyId": key_id,
        "Arn": f"arn:aws:kms:eu-west-1:{account}:key/{key_id}",
        "CreationDate": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T09:12:44.318000+00:00",
        "Enabled": True,
        "Description": f"{app} data at rest",
        "KeyUsage": "ENCRYPT_DECRYPT",
        "KeyState": "Enabled",
        "Origin": "AWS_KMS",
        "KeyManager": "CUSTOMER",
        "CustomerMasterKeySpec": "SYMMETRIC_DEFAULT",
        "KeySpec": "SYMMETRIC_DEFAULT",
        "EncryptionAlgorithms": ["SYMMETRIC_DEFAULT"],
        "MultiRegion": False,
    }}  # fmt: skip
    q.aws("kms", "describe-key", {"key-id": alias}, "eu-west-1",
          "Look up the key behind the alias",
          json.dumps(key_metadata, indent=4) + "\n")  # fmt: skip
    s.say(f"It's {key_id}; both new queues are encrypted with that key.")
    s.fact("identifier", f"the KMS key id behind {alias}", (key_id,))
    q.prompt(
        "Forget the replay of last month's uploads — finance will re-send those files "
        "themselves. But put a runbook section on redriving the DLQ on the list."
    )
    runbook = f"Runbook: redrive {dlq} back to {queue}"
    q.todo_remove([3], text="Removed the replay task from the list, as asked.")
    q.todo_add([runbook], [4])
    s.fact("todo", "the runbook item was added and is open", (runbook,))
    s.fact("todo", "the replay item was removed", ("replay", "removed"))
    pad(0.62)

    # --- retention, the alarm, the old helper ------------------------------------------------
    q.prompt(f"Keep failed messages for {d1} days rather than {d0} days — month-end reconciliation "
             "needs the slack.")  # fmt: skip
    q.replace(queue_tf, f"  message_retention_seconds = {d0 * 86400}",
              f"  message_retention_seconds = {d1 * 86400}",
              "Longer retention on the DLQ")  # fmt: skip
    alarm_text = "\n".join([
        'resource "aws_cloudwatch_metric_alarm" "dlq_not_empty" {',
        f'  alarm_name          = "{dlq}-not-empty"',
        '  namespace           = "AWS/SQS"',
        '  metric_name         = "ApproximateNumberOfMessagesVisible"',
        '  dimensions          = { QueueName = aws_sqs_queue.dlq.name }',
        '  statistic           = "Maximum"',
        "  period              = 300",
        "  evaluation_periods  = 1",
        "  threshold           = 0",
        '  comparison_operator = "GreaterThanThreshold"',
        "  alarm_actions       = [var.alarm_topic_arn]",
        "  tags                = local.tags",
        "}",
    ])  # fmt: skip
    q.create(alarms_tf, alarm_text, "Alarm as soon as anything lands in the DLQ")
    s.fact("file_created", "the DLQ alarm", (alarms_tf,))
    helper_text = "\n".join([
        'import { S3Client, CopyObjectCommand } from "@aws-sdk/client-s3";',
        'import type { S3EventRecord } from "aws-lambda";',
        "",
        "const s3 = new S3Client({});",
        "",
        "// Copies the object onto itself so the bucket notification fires again.",
        "export async function retryUpload(record: S3EventRecord): Promise<void> {",
        "  const { bucket, object } = record.s3;",
        "  await s3.send(new CopyObjectCommand({",
        "    Bucket: bucket.name,",
        "    Key: object.key,",
        "    CopySource: `${bucket.name}/${object.key}`,",
        '    MetadataDirective: "REPLACE",',
        "  }));",
        "}",
    ])  # fmt: skip
    q.search(helper, helper_text, "CopyObjectCommand", "Checking what the old helper does")
    q.bash(f"grep -rn retryUpload {lam}/src {lam}/test",
           "Looking for remaining callers of retryUpload",
           f"{helper}:7:export async function retryUpload(record: S3EventRecord): Promise<void> {{"
           .replace("{{", "{"))  # fmt: skip
    q.bash(f"git rm {helper}", "Removing the old self-copy retry helper", f"rm '{helper}'\n",
           text="Nothing calls it any more, and the queue replaces it.")  # fmt: skip
    s.fact("file_deleted", "the old retry helper", (helper,))
    pad(0.74)

    validate_cmd = "terraform -chdir=terraform/envs/staging validate"
    q.bash(validate_cmd, "Validating the staging configuration", stderr="\n".join([
        "╷",
        "│ Error: Unsupported block type",
        "│",
        f'│   on ../../modules/{fn}/queue.tf line 6, in resource "aws_sqs_queue" "ingest":',
        "│    6:   redrive_policy {",
        "│",
        '│ Blocks of type "redrive_policy" are not expected here. Did you mean to define '
        'argument "redrive_policy"? If so, use the equals sign to assign it a value.',
        "╵",
    ]), exit_status=1)  # fmt: skip
    s.fact("command", "terraform validate", (validate_cmd,), required=False)
    q.replace(
        queue_tf,
        "  redrive_policy {\n    deadLetterTargetArn = aws_sqs_queue.dlq.arn\n"
        "    maxReceiveCount     = 5\n  }",
        "  redrive_policy = jsonencode({\n    deadLetterTargetArn = aws_sqs_queue.dlq.arn\n"
        "    maxReceiveCount     = 5\n  })",
        "redrive_policy is a JSON string argument",
    )
    q.bash(validate_cmd, "Validating again", "Success! The configuration is valid.\n")
    s.fact("error_resolved", "terraform validate: redrive_policy written as a block",
           ("Unsupported block type",), required=False)  # fmt: skip
    plan = "\n".join([
        f"module.{module_name}.aws_lambda_function.{module_name}: Refreshing state... "
        f"[id={app}-{fn}]",
        "",
        "Terraform used the selected providers to generate the following execution plan. "
        "Resource actions are indicated with the following symbols:",
        "  + create",
        "  ~ update in-place",
        "",
        "Terraform will perform the following actions:",
        "",
        f"  # module.{module_name}.aws_cloudwatch_metric_alarm.dlq_not_empty will be created",
        f"  # module.{module_name}.aws_lambda_event_source_mapping.from_queue will be created",
        f"  # module.{module_name}.aws_lambda_function.{module_name} will be updated in-place",
        f"  # module.{module_name}.aws_sqs_queue.dlq will be created",
        f"  # module.{module_name}.aws_sqs_queue.ingest will be created",
        f"  # module.{module_name}.aws_sqs_queue_policy.from_bucket will be created",
        "",
        "Plan: 5 to add, 1 to change, 0 to destroy.",
        "",
        "Saved the plan to: tfplan",
    ])  # fmt: skip
    q.bash("terraform -chdir=terraform/envs/staging plan -out=tfplan",
           "Planning the staging changes (no apply)", plan)  # fmt: skip
    q.todo_complete([3], f"Alarm {dlq}-not-empty on ApproximateNumberOfMessagesVisible",
                    [alarms_tf])  # fmt: skip
    pad(0.84)

    # --- the cap, second change (unnamed); the last run ---------------------------------------
    q.prompt(f"Looking at the partners' month-end spikes again: let it run {c2} at a time.")
    q.replace(staging, f"  reserved_concurrency = {c1}", f"  reserved_concurrency = {c2}",
              "Raise the concurrency cap again")  # fmt: skip
    s.fact(
        "changed_value",
        f"the concurrency cap is {c2}",
        (f"{c2} at a time",),
        stale=(f"{c0} concurrent executions", f"{c1} concurrent executions"),
    )
    s.fact("changed_value", f"failed messages are kept {d1} days", (f"{d1} days",),
           stale=(f"{d0} days",))  # fmt: skip
    q.insert(test_file, 17, "\n".join([
        "",
        f'  it("{duplicate}", async () => {{',
        '    const event = sqsEvent([s3Notification("inbound/seen-before.csv")]);',
        "    const expected = { batchItemFailures: [] };",
        "    const result = await handler(event, context, noop);",
        "    expect(result).toEqual(expected);",
        "  });",
    ]), "A re-sent file must not fail the batch")  # fmt: skip
    q.replace(handler, "    await db.send(new PutCommand({ TableName: TABLE, Item: row }));",
              "    await db.send(new PutCommand({\n      TableName: TABLE,\n      Item: row,\n"
              '      ConditionExpression: "attribute_not_exists(invoiceId)",\n    }));',
              "Never overwrite a stored invoice")  # fmt: skip
    n2 = n1 + rng.randint(3, 5)
    more = [n for n in names if n not in extra][: n2 - n1 - 1]
    suites = [("test/parse.test.ts", extra[:split] + more), ("test/key.test.ts", extra[split:]),
              ("test/handler.test.ts", [*handler_tests, duplicate])]  # fmt: skip
    report, status = _jest(rng, suites, {duplicate: (23, [
        "- Expected  - 1", "+ Received  + 5", "", "  {", '-   "batchItemFailures": [],',
        '+   "batchItemFailures": [', "+     {", '+       "itemIdentifier": "msg-1",', "+     },",
        "+   ],", "  }",
    ])})  # fmt: skip
    q.bash(jest_cmd, "Running the tests", stderr=report, exit_status=status)
    s.fact("test_status", "the last jest run", (f"1 failed, {n2 - 1} passed, {n2} total",),
           stale=(f"1 failed, {n1 - 1} passed, {n1} total",))  # fmt: skip
    s.fact("error_open", "the duplicate-invoice test still fails", (duplicate,))
    fix = "Treat ConditionalCheckFailedException as an already-stored invoice"
    q.todo_complete([5], "jest: 1 failing (duplicate invoice); validate + plan clean on staging",
                    [test_file, handler])  # fmt: skip
    q.todo_add([fix], [6])
    s.say(
        f'{n2} tests, 1 failing: "{duplicate}". The new condition makes DynamoDB throw '
        "`ConditionalCheckFailedException` for a file that was already loaded, and the handler "
        "counts that as a failure, so the message would go round until it lands in the DLQ. "
        "The rest passes, and validate and plan are clean."
    )
    pad(0.97)
    q.prompt("Leave that for tomorrow. Commit what's there on a branch and push it.")
    q.bash(
        f'git switch -c {branch} && git add -A && git commit -qm "{fn}: SQS queue, DLQ and '
        f'alarm in front of the function" && git push -u origin {branch}',
        "Committing on a new branch and pushing",
        f"branch '{branch}' set up to track 'origin/{branch}'.\n",
        "\n".join(
            [
                f"Switched to a new branch '{branch}'",
                f"remote: Create a pull request for '{branch}' on GitHub by visiting:",
                f"remote:      https://github.com/{app}-billing/{app}-platform/pull/new/{branch}",
                "To github.com:" + f"{app}-billing/{app}-platform.git",
                f" * [new branch]      {branch} -> {branch}",
            ]
        ),
    )
    s.say(f"Done: {branch} is pushed. Talk tomorrow.")
    s.fact("last_message", "the branch was pushed", (f"{branch} is pushed",))
    return finish_session(s, family=FAMILY, seed=seed)
