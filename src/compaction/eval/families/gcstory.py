"""gcstory-style: a Gemini CLI session in native function calls (OpenAI chat), on a Go HTTP
service, with a story of its own (not `story.tell`, not ccstory's or cxstory's).

Tools and arguments as Gemini CLI declares them: `run_shell_command` {command, description,
directory}; `read_file` {absolute_path}; `write_file` {file_path, content}; `replace`
{file_path, old_string, new_string}; `glob` {pattern}; `search_file_content` {pattern, path,
include}; `write_todos` {todos: [{description, status}]} (status pending / in_progress /
completed / cancelled). Results as Gemini CLI hands them to the model: a shell result is
"Command: …\nDirectory: …\nStdout: …\nStderr: …\nError: …\nExit Code: N\nSignal: (none)\n
Background PIDs: (none)\nProcess Group PGID: N"; write_file answers "Successfully created and
wrote to new file: …" (or "Successfully overwrote file: …"), replace "Successfully modified
file: … (1 replacements).", glob "Found N file(s) matching … within …", search_file_content
"Found N matches for pattern … :\n---\nFile: …\nL12: …\n---", write_todos "Successfully updated
the todo list. The current list is now:\n1. [status] description". Paths are absolute. The
working directory and platform close the system prompt.

The story: the public API of a Go service (chi, go-redis, gotestsum, golangci-lint) gets
per-tenant rate limiting. The user sets three rules (no third-party limiter package, a Go
version, 429 with Retry-After in whole seconds), a rate and an idle-key expiry. The assistant
reads the auth context and means to hook the admin router, and is corrected to the public one;
writes a fixed-window counter, moves to per-process token buckets (bursts at the window edge),
then, the user saying the API runs as several replicas, to a GCRA in a Redis Lua script; it
first fails closed when Redis is down and, the user objecting, fails open. The rate changes
twice, the expiry once; the user forbids touching pkg/apiclient, cancels the Grafana to-do,
adds a vegeta to-do and asks which commit put the tenant into the request context. A refill
test fails and is fixed, a build error and an errcheck finding are fixed, the old per-IP
throttle is removed with `git rm`, and the Redis integration test stays red. The last message
names no fact.
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
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "gcstory-style"

SERVICES = ("meterd", "quotagate", "fleetapi", "tallyd", "parcelhub", "routewise")
ORGS = ("northwind-labs", "kestrel-io", "brightlane", "ostrava-dev")
GO_VERSIONS = ("Go 1.21", "Go 1.22")
TENANT_FNS = ("TenantFromContext", "CallerTenantID", "TenantIDFrom", "AuthedTenant")
#: (first rate, raised, settled) in requests per minute: no value stands inside another.
RATES = ((120, 900, 300), (90, 1500, 450), (150, 1200, 500), (80, 2000, 600))
#: (first idle-key expiry, later).
EXPIRIES = (
    ("10 minutes", "45 minutes"),
    ("20 minutes", "90 minutes"),
    ("15 minutes", "60 minutes"),
)
REFILL_TESTS = (
    "TestWindowResetsAfterOneMinute",
    "TestCounterAllowsAgainNextWindow",
    "TestLimiterRecoversAfterWindow",
)
SHARED_TESTS = (
    "TestLimitSharedAcrossInstances",
    "TestTwoClientsShareOneBudget",
    "TestReplicasSeeTheSameCount",
)
OTHER_MODULES = (
    "internal/httpapi/handlers_orders.go",
    "internal/httpapi/handlers_health.go",
    "internal/store/postgres.go",
    "internal/store/migrations.go",
    "internal/billing/invoice.go",
    "internal/auth/apikey.go",
    "internal/telemetry/metrics.go",
    "internal/store/cache.go",
    "cmd/server/main.go",
)
PACKAGES = (
    "cmd/server",
    "internal/auth",
    "internal/billing",
    "internal/config",
    "internal/httpapi",
    "internal/store",
    "internal/telemetry",
    "internal/admin",
)

SYSTEM = """You are an interactive CLI agent specializing in software engineering tasks. Your \
primary goal is to help users safely and efficiently, adhering strictly to the following \
instructions and utilizing your available tools.

# Core Mandates
- Conventions: rigorously adhere to existing project conventions when reading or modifying \
code. Analyze surrounding code, tests, and configuration first.
- Libraries/Frameworks: never assume a library is available; verify its established usage \
within the project (go.mod, imports, neighbouring files) before employing it.
- Path Construction: before using any file system tool (e.g. 'read_file' or 'write_file'), \
you must construct the full absolute path for the file_path argument.
- Do not revert changes to the codebase unless asked to do so by the user.

# Primary Workflows
Understand, plan, implement, verify (tests, build, lint), in that order. Use 'write_todos' \
to track multi-step work; keep exactly one item in_progress.

# Operational Guidelines
Tone: concise and direct; fewer than 3 lines of text per response where practical. Explain \
critical commands before running them with 'run_shell_command'.

# Environment
Today's date is Thursday, November 20, 2025.
My operating system is: linux
I'm currently working in the directory: {root}
This directory is a git repository."""


def shell_result(
    command: str, stdout: str, *, stderr: str = "", code: int = 0, directory: str = ""
) -> str:
    """A run_shell_command result as Gemini CLI hands it to the model."""
    error = "(none)" if code == 0 else f"Command exited with code {code}"
    return "\n".join(
        [
            f"Command: {command}",
            f"Directory: {directory or '(root)'}",
            f"Stdout: {stdout or '(empty)'}",
            f"Stderr: {stderr or '(empty)'}",
            f"Error: {error}",
            f"Exit Code: {code}",
            "Signal: (none)",
            "Background PIDs: (none)",
            "Process Group PGID: {pgid}",
        ]
    )


class Gemini:
    """The session being written, in Gemini CLI's function-call shapes, with a tiny file tree."""

    def __init__(self, rng: random.Random, root: str) -> None:
        self.rng = rng
        self.root = root
        self.s = Session(rng=rng, system=SYSTEM.replace("{root}", root))
        self.files: dict[str, str] = {}

    def abs(self, path: str) -> str:
        return f"{self.root}/{path}"

    def run(
        self,
        command: str,
        stdout: str,
        description: str,
        *,
        stderr: str = "",
        code: int = 0,
        directory: str = "",
        text: str = "",
        filler: bool = False,
    ) -> None:
        args: dict[str, Any] = {"command": command, "description": description}
        if directory:
            args["directory"] = directory
        result = shell_result(command, stdout, stderr=stderr, code=code, directory=directory)
        result = result.replace("{pgid}", str(self.rng.randint(20000, 99999)))
        self.s.call("run_shell_command", args, result, text=text, filler=filler)

    def read(self, path: str, *, text: str = "", filler: bool = False) -> None:
        self.s.call(
            "read_file", {"absolute_path": self.abs(path)}, self.files[path], text=text,
            filler=filler,
        )  # fmt: skip

    def write(self, path: str, content: str, *, text: str = "") -> None:
        existed = path in self.files
        self.files[path] = content
        full = self.abs(path)
        result = (
            f"Successfully overwrote file: {full}."
            if existed
            else f"Successfully created and wrote to new file: {full}."
        )
        self.s.call("write_file", {"file_path": full, "content": content}, result, text=text)

    def replace(self, path: str, old: str, new: str, *, text: str = "") -> None:
        content = self.files[path]
        assert content.count(old) == 1, (path, old)
        self.files[path] = content.replace(old, new)
        full = self.abs(path)
        self.s.call(
            "replace",
            {"file_path": full, "old_string": old, "new_string": new},
            f"Successfully modified file: {full} (1 replacements).",
            text=text,
        )

    def glob(self, pattern: str, paths: Sequence[str], *, text: str = "") -> None:
        found = "\n".join(self.abs(p) for p in paths)
        self.s.call(
            "glob",
            {"pattern": pattern},
            f'Found {len(paths)} file(s) matching "{pattern}" within {self.root}, sorted by '
            f"modification time (newest first):\n{found}",
            text=text,
        )

    def grep(
        self,
        pattern: str,
        hits: Sequence[tuple[str, int, str]],
        *,
        path: str = "",
        include: str = "",
        text: str = "",
        filler: bool = False,
    ) -> None:
        args: dict[str, Any] = {"pattern": pattern}
        if path:
            args["path"] = self.abs(path)
        if include:
            args["include"] = include
        where = f'in path "{path}"' if path else "in the workspace directory"
        flt = f' (filter: "{include}")' if include else ""
        lines = [f'Found {len(hits)} matches for pattern "{pattern}" {where}{flt}:', "---"]
        by_file: dict[str, list[tuple[int, str]]] = {}
        for file, line, content in hits:
            by_file.setdefault(file, []).append((line, content))
        for file, found in by_file.items():
            lines.append(f"File: {file}")
            lines += [f"L{n}: {content}" for n, content in sorted(found)]
            lines.append("---")
        self.s.call("search_file_content", args, "\n".join(lines), text=text, filler=filler)

    def todos(self, items: Sequence[tuple[str, str]], *, text: str = "") -> None:
        listed = "\n".join(f"{k}. [{st}] {d}" for k, (d, st) in enumerate(items, start=1))
        self.s.call(
            "write_todos",
            {"todos": [{"description": d, "status": st} for d, st in items]},
            f"Successfully updated the todo list. The current list is now:\n{listed}",
            text=text,
        )


# --- tool outputs --------------------------------------------------------------------------------


def go_test_run(
    rng: random.Random, module: str, failing: dict[str, tuple[str, list[str]]], total: int
) -> tuple[str, str]:
    """(gotestsum --format standard-quiet's output, the DONE line's counts). `failing`: test
    name → (its package, the lines it logged)."""
    bad = {pkg for pkg, _ in failing.values()}
    lines: list[str] = []
    for pkg in sorted({*PACKAGES, "internal/ratelimit"}):
        seconds = f"{rng.uniform(0.01, 2.4):.3f}s"
        if pkg == "cmd/server":
            lines.append(f"?   \t{module}/{pkg}\t[no test files]")
        elif pkg in bad:
            for name, (where, logged) in failing.items():
                if where == pkg:
                    lines.append(f"--- FAIL: {name} ({rng.uniform(0.0, 0.09):.2f}s)")
                    lines += [f"    {line}" for line in logged]
            lines += ["FAIL", f"FAIL\t{module}/{pkg}\t{seconds}"]
        else:
            lines.append(f"ok  \t{module}/{pkg}\t{seconds}")
    n = len(failing)
    counts = f"{total} tests, {n} failure" + ("s" if n != 1 else "")
    if failing:
        lines += ["", "=== Failed"]
        for name, (where, logged) in failing.items():
            lines.append(f"=== FAIL: {where} {name} ({rng.uniform(0.0, 0.09):.2f}s)")
            lines += [f"    {line}" for line in logged]
            lines.append("")
    lines.append(f"DONE {counts} in {rng.uniform(3, 12):.3f}s")
    return "\n".join(lines), counts


def git_log(rng: random.Random, n: int) -> str:
    subjects = [
        "httpapi: paginate the orders listing",
        "store: retry serialization failures once",
        "billing: round invoice totals half-even",
        "ci: cache the Go build directory",
        "deps: bump pgx",
        "telemetry: histogram buckets for handler latency",
        "auth: rotate the API key pepper",
        "admin: list tenants by creation date",
        "store: index orders by tenant and created_at",
        "chore: gofumpt",
        "httpapi: structured errors for 404 and 405",
    ]
    return "\n".join(f"{hexid(rng)} {rng.choice(subjects)}" for _ in range(n))


def server_log(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out.append(
            json.dumps(
                {
                    "time": f"2025-11-{rng.randint(10, 19):02d}T{rng.randint(0, 23):02d}:"
                    f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
                    "level": rng.choice(["INFO", "INFO", "INFO", "DEBUG", "WARN"]),
                    "msg": rng.choice(["request served", "db pool stats", "cache refresh"]),
                    "path": rng.choice(["/v1/orders", "/v1/orders/{id}", "/healthz", "/v1/me"]),
                    "status": rng.choice([200, 200, 200, 201, 204, 404]),
                    "dur_ms": round(rng.uniform(0.3, 180.0), 1),
                }
            )
        )
    return "\n".join(out)


# --- files ---------------------------------------------------------------------------------------


def go_mod(module: str, go: str) -> str:
    version = go.split()[1]
    return "\n".join(
        [
            f"module {module}",
            "",
            f"go {version}",
            "",
            "require (",
            "\tgithub.com/go-chi/chi/v5 v5.0.12",
            "\tgithub.com/jackc/pgx/v5 v5.5.5",
            "\tgithub.com/prometheus/client_golang v1.19.0",
            "\tgithub.com/redis/go-redis/v9 v9.5.1",
            "\tgithub.com/stretchr/testify v1.9.0",
            ")",
            "",
            "require (",
            "\tgithub.com/beorn7/perks v1.0.1 // indirect",
            "\tgithub.com/cespare/xxhash/v2 v2.2.0 // indirect",
            "\tgithub.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect",
            "\tgithub.com/jackc/pgpassfile v1.0.0 // indirect",
            "\tgolang.org/x/crypto v0.21.0 // indirect",
            "\tgolang.org/x/sync v0.6.0 // indirect",
            ")",
        ]
    )


def auth_context_go(rng: random.Random, tenant_fn: str) -> str:
    head = [
        "package auth",
        "",
        'import "context"',
        "",
        "type ctxKey struct{}",
        "",
        "// Principal is the caller an API key resolved to.",
        "type Principal struct {",
        "\tTenantID string",
        "\tKeyID    string",
        "\tScopes   []string",
        "}",
        "",
        "// WithPrincipal stores p in ctx; the auth middleware calls it once per request.",
        "func WithPrincipal(ctx context.Context, p Principal) context.Context {",
        "\treturn context.WithValue(ctx, ctxKey{}, p)",
        "}",
        "",
        f"// {tenant_fn} returns the tenant of the authenticated caller, or false.",
        f"func {tenant_fn}(ctx context.Context) (string, bool) {{",
        "\tp, ok := ctx.Value(ctxKey{}).(Principal)",
        '\treturn p.TenantID, ok && p.TenantID != ""',
        "}",
        "",
    ]
    return "\n".join(head) + "\n" + code_file(rng, "go", rng.randint(40, 60))


def router_go(rng: random.Random, module: str, pkg: str, prefix: str) -> str:
    head = [
        f"package {pkg}",
        "",
        "import (",
        '\t"net/http"',
        "",
        '\t"github.com/go-chi/chi/v5"',
        '\t"github.com/go-chi/chi/v5/middleware"',
        "",
        f'\t"{module}/internal/auth"',
        ")",
        "",
        "// NewRouter wires the routes and the middleware chain.",
        "func NewRouter(deps Deps) http.Handler {",
        "\tr := chi.NewRouter()",
        "\tr.Use(middleware.RequestID)",
        "\tr.Use(middleware.Recoverer)",
        "\tr.Use(auth.Middleware(deps.Keys))",
        f'\tr.Route("{prefix}", func(r chi.Router) {{',
        '\t\tr.Get("/orders", deps.listOrders)',
        '\t\tr.Post("/orders", deps.createOrder)',
        '\t\tr.Get("/orders/{id}", deps.getOrder)',
        "\t})",
        "\treturn r",
        "}",
        "",
    ]
    return "\n".join(head) + "\n" + code_file(rng, "go", rng.randint(30, 45))


def config_go(rng: random.Random, rate: int, expiry: str) -> str:
    head = [
        "package config",
        "",
        'import "time"',
        "",
        "type Config struct {",
        '\tListenAddr string        `env:"LISTEN_ADDR" default:":8080"`',
        '\tDatabaseURL string       `env:"DATABASE_URL"`',
        '\tRedisAddr  string        `env:"REDIS_ADDR" default:"localhost:6379"`',
        "\tRateLimit  RateLimit",
        "}",
        "",
        "type RateLimit struct {",
        f'\tPerMinute int           `env:"RATE_LIMIT_PER_MINUTE" default:"{rate}"`',
        f'\tIdleTTL   time.Duration `env:"RATE_LIMIT_IDLE_TTL" default:"{_duration(expiry)}"`',
        "}",
        "",
    ]
    return "\n".join(head) + "\n" + code_file(rng, "go", rng.randint(25, 40))


def _duration(expiry: str) -> str:
    return f"{expiry.split(maxsplit=1)[0]}m"


def iplimit_go() -> str:
    return "\n".join(
        [
            "package httpapi",
            "",
            "// ipThrottle was the v0 abuse guard: 50 requests per second per remote address.",
            "// Nothing registers it since the API moved behind the load balancer.",
            "func ipThrottle(next http.Handler) http.Handler {",
            "\tbuckets := map[string]int{}",
            "\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {",
            "\t\tbuckets[r.RemoteAddr]++",
            "\t\tnext.ServeHTTP(w, r)",
            "\t})",
            "}",
        ]
    )


# --- the story -----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"{FAMILY}:{seed}")
    svc = rng.choice(SERVICES)
    org = rng.choice(ORGS)
    module = f"github.com/{org}/{svc}"
    go = rng.choice(GO_VERSIONS)
    tenant_fn = rng.choice(TENANT_FNS)
    first, raised, settled = rng.choice(RATES)
    expiry_old, expiry_new = rng.choice(EXPIRIES)
    refill_test = rng.choice(REFILL_TESTS)
    shared_test = rng.choice(SHARED_TESTS)
    tenant_commit = hexid(rng, 9)
    root = f"/home/dev/src/{svc}"
    wrong = "internal/admin/router.go"
    router = "internal/httpapi/router.go"
    middleware = "internal/httpapi/ratelimit.go"
    limiter = "internal/ratelimit/limiter.go"
    limiter_test = "internal/ratelimit/limiter_test.go"
    script = "internal/ratelimit/gcra.lua"
    config = "internal/config/config.go"
    iplimit = "internal/httpapi/iplimit.go"
    auth_ctx = "internal/auth/context.go"
    g = Gemini(rng, root)
    s = g.s
    # Each call's JSON envelope and Go's tabs are denser in tokens than the filler's estimate.
    target_chars = tokens * CHARS_PER_TOKEN * 1.1
    others = list(rng.sample(OTHER_MODULES, len(OTHER_MODULES)))
    step = 0

    def fill(fraction: float) -> None:
        nonlocal step
        while s.chars < fraction * target_chars:
            step += 1
            kind = step % 4
            if kind == 1 and others:
                path = others.pop()
                pkg = path.split("/")[-2]
                body = code_file(rng, "go", rng.randint(120, 170))
                g.files[path] = f"package {pkg}\n\n{body}"
                g.read(
                    path,
                    filler=True,
                    text=rng.choice(["", "Checking how this package does it.", "And this one."]),
                )
            elif kind == 2:
                g.run(
                    f"kubectl logs deploy/{svc} --tail=60",
                    server_log(rng, rng.randint(45, 60)),
                    "Recent server logs from the staging deployment.",
                    filler=True,
                )
            elif kind == 3:
                g.run(
                    "git log --oneline -n 40",
                    git_log(rng, 40),
                    "Recent history of the repository.",
                    filler=True,
                )
            else:
                term = rng.choice(["return items, nil", "items := filter", '== ""', "func "])
                known = [p for p in g.files if p in OTHER_MODULES] or ["cmd/server/main.go"]
                hits = []
                for _ in range(rng.randint(14, 24)):
                    f = rng.choice(known)
                    lines = g.files.get(f, term).split("\n")
                    at = [k for k, line in enumerate(lines) if term in line] or [0]
                    k = rng.choice(at)
                    hits.append((f, k + 1, lines[k] or term))
                g.grep(term, hits, include="*.go", filler=True)
            if kind == 0 and step % 8 == 0:
                g.run(
                    "journalctl -u redis --since -1h --no-pager | tail -n 40",
                    log_lines(rng, 40),
                    "Recent Redis service log on the dev box.",
                    filler=True,
                )

    # 1. the task
    s.user(
        f"The public API needs per-tenant rate limiting. Each tenant should get {first} "
        f"requests per minute across all its API keys, and whatever state we keep for a "
        f"tenant that has gone quiet should expire after {expiry_old}.\n\n"
        "A few ground rules. No third-party limiter package — not ulule/limiter, not "
        "tollbooth; it's a small amount of code and I'd rather we own it. It has to build "
        f"with {go}, the base image pins that toolchain and I'm not bumping it in this PR. "
        "And a rejected request gets a 429 with a Retry-After header in whole seconds: our "
        "SDKs read that header to back off, so no fractions and no HTTP dates."
    )
    s.fact("constraint", "no third-party limiter package", ("tollbooth",))
    s.fact("constraint", f"builds with {go}", (go,))
    s.fact("constraint", "429 with Retry-After in whole seconds", ("Retry-After",))

    todo = {
        "read": "Read the router, the auth context and the config loading",
        "limiter": "Write the limiter package and its unit tests",
        "wire": "Register the limiter middleware on the public routes",
        "grafana": "Add a Grafana panel for rejected requests per tenant",
        "metric": "Export a Prometheus counter of rejected requests",
        "vegeta": "Run a vegeta load test against staging",
    }

    def todos(state: dict[str, str], text: str = "") -> None:
        g.todos([(todo[k], st) for k, st in state.items()], text=text)

    todos(
        {"read": "in_progress", "limiter": "pending", "wire": "pending", "grafana": "pending",
         "metric": "pending"},
        text="I'll lay the work out first.",
    )  # fmt: skip
    s.fact("todo", "the rejected-requests counter", (todo["metric"],))
    g.files["go.mod"] = go_mod(module, go)
    g.read("go.mod", text="Checking the module first: its Go directive and what it depends on.")
    s.fact("file_read", "go.mod", ("go.mod",))
    g.glob(
        "internal/**/*.go",
        [router, wrong, auth_ctx, config, iplimit, "internal/auth/apikey.go",
         "internal/store/postgres.go", "internal/billing/invoice.go"],
    )  # fmt: skip
    g.files[auth_ctx] = auth_context_go(rng, tenant_fn)
    g.grep(
        "func .*Tenant",
        [(auth_ctx, 20, f"func {tenant_fn}(ctx context.Context) (string, bool) {{"),
         ("internal/admin/tenants.go", 31, "func listTenants(w http.ResponseWriter, "
          "r *http.Request) {")],
        include="*.go",
    )  # fmt: skip
    g.read(auth_ctx, text="The tenant comes from the auth middleware's principal.")
    s.fact("identifier", "the function that reads the caller's tenant", (tenant_fn,))
    fill(0.1)
    g.files[wrong] = router_go(rng, module, "admin", "/admin")
    g.read(
        wrong,
        text="This router already has the auth middleware in its chain; I'll register the "
        "limiter there, right after auth, so the tenant is known when it runs.",
    )
    s.user(
        "Not that one — the admin router is only reachable from the VPN and nobody needs "
        f"limits there. The customer-facing routes are in {router}."
    )
    g.files[router] = router_go(rng, module, "httpapi", "/v1")
    g.read(router, text="Understood, the public router.")
    s.fact("file_modified", "the public router", (router,), stale=(wrong,))
    fill(0.17)

    # 2. first approach: a fixed-window counter
    todos(
        {"read": "completed", "limiter": "in_progress", "wire": "pending", "grafana": "pending",
         "metric": "pending"},
    )  # fmt: skip
    window_src = "\n".join(
        [
            "// Package ratelimit decides whether a tenant may make another request.",
            "package ratelimit",
            "",
            "import (",
            '\t"sync"',
            '\t"time"',
            ")",
            "",
            "// Limiter is a fixed-window counter per tenant.",
            "type Limiter struct {",
            "\tmu     sync.Mutex",
            "\tlimit  int",
            "\tnow    func() time.Time",
            "\twindow map[string]*slot",
            "}",
            "",
            "type slot struct {",
            "\tstart time.Time",
            "\tcount int",
            "}",
            "",
            "func New(limit int) *Limiter {",
            "\treturn &Limiter{limit: limit, now: time.Now, window: map[string]*slot{}}",
            "}",
            "",
            "// Allow reports whether tenant may proceed and, if not, how long to wait.",
            "func (l *Limiter) Allow(tenant string) (bool, time.Duration) {",
            "\tl.mu.Lock()",
            "\tdefer l.mu.Unlock()",
            "\tnow := l.now()",
            "\ts, ok := l.window[tenant]",
            "\tif !ok {",
            "\t\ts = &slot{start: now}",
            "\t\tl.window[tenant] = s",
            "\t}",
            "\tif s.count >= l.limit {",
            "\t\treturn false, s.start.Add(time.Minute).Sub(now)",
            "\t}",
            "\ts.count++",
            "\treturn true, 0",
            "}",
        ]
    )
    test_src = "\n".join(
        [
            "package ratelimit",
            "",
            "import (",
            '\t"testing"',
            '\t"time"',
            ")",
            "",
            "func TestAllowsUpToTheLimit(t *testing.T) {",
            "\tl := New(3)",
            "\tfor i := 0; i < 3; i++ {",
            '\t\tif ok, _ := l.Allow("t1"); !ok {',
            '\t\t\tt.Fatalf("request %d rejected", i)',
            "\t\t}",
            "\t}",
            '\tif ok, _ := l.Allow("t1"); ok {',
            '\t\tt.Fatal("fourth request allowed")',
            "\t}",
            "}",
            "",
            f"func {refill_test}(t *testing.T) {{",
            "\tclock := time.Unix(1_700_000_000, 0)",
            "\tl := New(1)",
            "\tl.now = func() time.Time { return clock }",
            '\tl.Allow("t1")',
            "\tclock = clock.Add(61 * time.Second)",
            '\tif ok, _ := l.Allow("t1"); !ok {',
            '\t\tt.Fatal("still rejected after the window passed")',
            "\t}",
            "}",
        ]
    )
    g.write(
        limiter,
        window_src,
        text="Simplest thing first: a fixed-window counter per tenant, a map behind a mutex, "
        "reset once a minute.",
    )
    s.fact("file_created", "the limiter", (limiter,))
    g.write(limiter_test, test_src)
    s.fact("file_created", "its tests", (limiter_test,), required=False)
    n1 = rng.randint(180, 240)
    out1, counts1 = go_test_run(
        rng,
        module,
        {
            refill_test: (
                "internal/ratelimit",
                ["limiter_test.go:27: still rejected after the window passed"],
            )
        },
        n1,
    )
    g.run(
        "gotestsum --format standard-quiet -- ./...",
        out1,
        "Run the whole test suite.",
        code=1,
    )
    s.fact("error_resolved", "the window test failed, fixed", (refill_test,), required=False)
    fill(0.28)

    # 3. the fix; the first reversal; the user raises the rate and the expiry
    s.say(
        f"{refill_test} caught a real bug: the slot's start is set once and never moves, so "
        "a tenant that hits the limit stays blocked forever. Before patching that, a second "
        "look at the fixed-window counter itself: a tenant can spend its whole budget in the "
        "last second of one window and again in the first second of the next, twice the "
        "limit in two seconds. I'm replacing it with per-process token buckets — each tenant "
        "holds up to one minute's budget and refills continuously — which also gives an exact "
        "wait for Retry-After."
    )
    g.replace(
        limiter,
        "// Limiter is a fixed-window counter per tenant.\ntype Limiter struct {\n"
        "\tmu     sync.Mutex\n\tlimit  int\n\tnow    func() time.Time\n"
        "\twindow map[string]*slot",
        "// Limiter holds a token bucket per tenant, refilled continuously.\n"
        "type Limiter struct {\n"
        "\tmu      sync.Mutex\n\tlimit   int\n\tnow     func() time.Time\n"
        "\tbuckets map[string]*slot",
    )
    g.replace(
        limiter,
        "type slot struct {\n\tstart time.Time\n\tcount int\n}",
        "type slot struct {\n\ttokens float64\n\tlast   time.Time\n}",
    )
    g.replace(
        limiter,
        "\tif s.count >= l.limit {\n"
        "\t\treturn false, s.start.Add(time.Minute).Sub(now)\n"
        "\t}\n"
        "\ts.count++\n"
        "\treturn true, 0",
        "\trate := float64(l.limit) / 60\n"
        "\ts.tokens = min(float64(l.limit), s.tokens+now.Sub(s.last).Seconds()*rate)\n"
        "\ts.last = now\n"
        "\tif s.tokens < 1 {\n"
        "\t\treturn false, time.Duration((1 - s.tokens) / rate * float64(time.Second))\n"
        "\t}\n"
        "\ts.tokens--\n"
        "\treturn true, 0",
        text="Tokens refill by elapsed time; the wait is the time to the next whole token.",
    )
    g.replace(
        limiter,
        "\t\ts = &slot{start: now}",
        "\t\ts = &slot{tokens: float64(l.limit), last: now}",
    )
    s.user(
        f"{first} a minute is too tight — the nightly sync jobs of our bigger tenants burst "
        f"well past that. Make it {raised} requests per minute for now. And expiring idle "
        f"state after {expiry_old} means a tenant that polls every quarter of an hour starts "
        f"from a full budget every time; make it {expiry_new}."
    )
    s.fact("changed_value", "idle-state expiry", (expiry_new,), stale=(expiry_old,))
    g.files[config] = config_go(rng, first, expiry_old)
    g.read(config)
    g.replace(
        config,
        f'`env:"RATE_LIMIT_PER_MINUTE" default:"{first}"`',
        f'`env:"RATE_LIMIT_PER_MINUTE" default:"{raised}"`',
    )
    g.replace(
        config,
        f'`env:"RATE_LIMIT_IDLE_TTL" default:"{_duration(expiry_old)}"`',
        f'`env:"RATE_LIMIT_IDLE_TTL" default:"{_duration(expiry_new)}"`',
    )
    s.fact("file_modified", "the config", (config,))
    g.run(
        "go build ./...",
        "",
        "Compile everything.",
        stderr=f"# {module}/internal/ratelimit\n"
        "internal/ratelimit/limiter.go:22:39: unknown field window in struct literal of type "
        "Limiter\n"
        "internal/ratelimit/limiter.go:31:12: l.window undefined (type *Limiter has no field "
        "or method window)\n"
        "internal/ratelimit/limiter.go:34:5: l.window undefined (type *Limiter has no field "
        "or method window)",
        code=1,
    )
    s.fact("error_resolved", "go build error", ("unknown field window",), required=False)
    g.replace(
        limiter,
        "\treturn &Limiter{limit: limit, now: time.Now, window: map[string]*slot{}}",
        "\treturn &Limiter{limit: limit, now: time.Now, buckets: map[string]*slot{}}",
        text="Leftovers of the window version's field name.",
    )
    g.replace(limiter, "\ts, ok := l.window[tenant]", "\ts, ok := l.buckets[tenant]")
    g.replace(limiter, "\t\tl.window[tenant] = s", "\t\tl.buckets[tenant] = s")
    fill(0.42)

    # 4. second reversal: several replicas; Redis GCRA; fail closed first
    s.user(
        "One thing I should have said up front: the API runs as six replicas behind the "
        "load balancer, and it scales out to twelve at peak. Limits kept inside one process "
        "won't add up to anything."
    )
    s.say(
        "Then per-process token buckets are out: each replica would allow the full budget, "
        "so a tenant gets six to twelve times the limit depending on where the balancer sends "
        "it. The state has to be shared, and go-redis is already in go.mod. I'll implement "
        "GCRA as a Redis Lua script: one key per tenant holding its theoretical arrival time, "
        "read and updated atomically in one EVALSHA round trip, the key's TTL doing the idle "
        "expiry. If Redis can't be reached, the middleware will fail closed and answer 503, "
        "so an outage can't turn into unlimited traffic."
    )
    lua_src = "\n".join(
        [
            "-- GCRA: KEYS[1] tenant key; ARGV: now_ms, emission_ms, burst_ms, ttl_ms",
            "local now = tonumber(ARGV[1])",
            "local emission = tonumber(ARGV[2])",
            "local burst = tonumber(ARGV[3])",
            "local tat = tonumber(redis.call('GET', KEYS[1]) or now)",
            "if tat < now then tat = now end",
            "local allow_at = tat - burst",
            "if now < allow_at then",
            "  return {0, allow_at - now}",
            "end",
            "redis.call('SET', KEYS[1], tat + emission, 'PX', tonumber(ARGV[4]))",
            "return {1, 0}",
        ]
    )
    g.write(script, lua_src)
    s.fact("file_created", "the GCRA script", (script,))
    redis_src = "\n".join(
        [
            "// Package ratelimit decides whether a tenant may make another request.",
            "package ratelimit",
            "",
            "import (",
            '\t"context"',
            '\t_ "embed"',
            '\t"time"',
            "",
            '\t"github.com/redis/go-redis/v9"',
            ")",
            "",
            "//go:embed gcra.lua",
            "var gcraSource string",
            "",
            "var gcra = redis.NewScript(gcraSource)",
            "",
            "// Limiter applies one shared budget per tenant across every replica.",
            "type Limiter struct {",
            "\trdb   redis.Scripter",
            "\tlimit int",
            "\tttl   time.Duration",
            "\tnow   func() time.Time",
            "}",
            "",
            "func New(rdb redis.Scripter, limit int, ttl time.Duration) *Limiter {",
            "\treturn &Limiter{rdb: rdb, limit: limit, ttl: ttl, now: time.Now}",
            "}",
            "",
            "// Allow reports whether tenant may proceed and, if not, how long to wait.",
            "func (l *Limiter) Allow(ctx context.Context, tenant string) (bool, time.Duration, "
            "error) {",
            "\tl.rdb.ScriptLoad(ctx, gcraSource)",
            "\temission := time.Minute.Milliseconds() / int64(l.limit)",
            '\tres, err := gcra.Run(ctx, l.rdb, []string{"rl:" + tenant},',
            "\t\tl.now().UnixMilli(), emission, time.Minute.Milliseconds(), "
            "l.ttl.Milliseconds()).Int64Slice()",
            "\tif err != nil {",
            "\t\treturn false, 0, err",
            "\t}",
            "\treturn res[0] == 1, time.Duration(res[1]) * time.Millisecond, nil",
            "}",
        ]
    )
    g.write(limiter, redis_src, text="The limiter becomes a thin wrapper around the script.")
    mw_src = "\n".join(
        [
            "package httpapi",
            "",
            "import (",
            '\t"math"',
            '\t"net/http"',
            '\t"strconv"',
            "",
            f'\t"{module}/internal/auth"',
            f'\t"{module}/internal/ratelimit"',
            ")",
            "",
            "func rateLimit(l *ratelimit.Limiter) func(http.Handler) http.Handler {",
            "\treturn func(next http.Handler) http.Handler {",
            "\t\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {",
            f"\t\t\ttenant, ok := auth.{tenant_fn}(r.Context())",
            "\t\t\tif !ok {",
            "\t\t\t\tnext.ServeHTTP(w, r)",
            "\t\t\t\treturn",
            "\t\t\t}",
            "\t\t\tallowed, wait, err := l.Allow(r.Context(), tenant)",
            "\t\t\tif err != nil {",
            '\t\t\t\thttp.Error(w, "rate limiter unavailable", http.StatusServiceUnavailable)',
            "\t\t\t\treturn",
            "\t\t\t}",
            "\t\t\tif !allowed {",
            "\t\t\t\tsecs := int(math.Ceil(wait.Seconds()))",
            '\t\t\t\tw.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))',
            '\t\t\t\thttp.Error(w, "rate limit exceeded", http.StatusTooManyRequests)',
            "\t\t\t\treturn",
            "\t\t\t}",
            "\t\t\tnext.ServeHTTP(w, r)",
            "\t\t})",
            "\t}",
            "}",
        ]
    )
    g.write(middleware, mw_src)
    s.fact("file_created", "the middleware", (middleware,))
    g.replace(
        router,
        "\tr.Use(auth.Middleware(deps.Keys))",
        "\tr.Use(auth.Middleware(deps.Keys))\n\tr.Use(rateLimit(deps.Limiter))",
        text="And registered right after auth on the public router.",
    )
    fill(0.52)

    # 5. a constraint added, a question, the Grafana item cancelled; fail open
    s.user(
        "Two things. Don't go near pkg/apiclient, even if a type there looks handy — it's "
        "generated from the OpenAPI spec and released on its own cadence. And the 503: if "
        "Redis has a bad minute I'd rather serve everyone unlimited than take the whole API "
        "down with it, so let requests through and log it. Also drop the Grafana panel, SRE "
        "owns the dashboards. Oh, and for the changelog: which commit started putting the "
        "tenant into the request context?"
    )
    s.fact("constraint", "leave pkg/apiclient alone", ("pkg/apiclient",))
    g.replace(
        middleware,
        "\t\t\tif err != nil {\n"
        '\t\t\t\thttp.Error(w, "rate limiter unavailable", http.StatusServiceUnavailable)\n'
        "\t\t\t\treturn\n"
        "\t\t\t}",
        "\t\t\tif err != nil {\n"
        '\t\t\t\tslog.WarnContext(r.Context(), "rate limiter unavailable, allowing", '
        '"tenant", tenant, "err", err)\n'
        "\t\t\t\tnext.ServeHTTP(w, r)\n"
        "\t\t\t\treturn\n"
        "\t\t\t}",
        text="Letting requests through when Redis errors, with a warning in the log.",
    )
    g.replace(middleware, '\t"math"\n', '\t"log/slog"\n\t"math"\n')
    s.say(
        "The limiter will fail open now: a Redis error lets the request through and logs a "
        "warning with the tenant, so an outage degrades to no limiting instead of 503s."
    )
    s.fact(
        "decision", "fail open when Redis is unreachable", ("fail open",), stale=("fail closed",)
    )
    todos(
        {"read": "completed", "limiter": "completed", "wire": "in_progress",
         "grafana": "cancelled", "metric": "pending"},
    )  # fmt: skip
    s.fact("todo", "the limiter step (done)", (todo["limiter"],), required=False)
    s.fact("todo", "the Grafana panel (cancelled)", (todo["grafana"],), required=False)
    g.run(
        f"git log -S '{tenant_fn}' --oneline -- internal/auth",
        f"{tenant_commit} auth: expose the caller's tenant on the request context\n"
        f"{hexid(rng, 9)} auth: principal carries the key's scopes",
        "Find the commit that introduced the tenant lookup.",
    )
    g.run(
        f"git show --stat {tenant_commit}",
        f"commit {tenant_commit}{hexid(rng, 31)}\n"
        f"Author: {rng.choice(['Ana Ferreira', 'Tomasz Nowak', 'Keiko Sato'])} "
        f"<dev@{org}.io>\n"
        f"Date:   {rng.choice(['Tue Feb 11', 'Wed May 7', 'Fri Aug 22'])} 14:03:51 2025 +0200\n\n"
        "    auth: expose the caller's tenant on the request context\n\n"
        " internal/auth/context.go    | 24 ++++++++++++\n"
        " internal/auth/middleware.go |  3 +-\n"
        " 2 files changed, 26 insertions(+), 1 deletion(-)",
        "Show what that commit touched.",
    )
    s.say(
        f"That was {tenant_commit}, \"auth: expose the caller's tenant on the request "
        'context"; it added the context helpers and one line in the auth middleware.'
    )
    s.fact("identifier", "the commit that put the tenant in the context", (tenant_commit,))
    fill(0.62)

    # 6. the rate settles; lint; the old throttle goes
    s.user(
        f"Talked to the platform team: {raised} a minute per tenant is more than the "
        f"database behind the orders endpoints can take if a handful of big tenants line up. "
        f"Settle on {settled} requests per minute."
    )
    s.fact(
        "changed_value",
        "the per-tenant rate",
        (f"{settled} requests per minute",),
        stale=(f"{first} requests per minute", f"{raised} requests per minute"),
    )
    g.replace(
        config,
        f'`env:"RATE_LIMIT_PER_MINUTE" default:"{raised}"`',
        f'`env:"RATE_LIMIT_PER_MINUTE" default:"{settled}"`',
    )
    s.say(
        "Set. With GCRA in Redis the budget is shared by every replica, a burst can use up "
        "one minute's worth at once and then refills evenly, and the script's answer gives "
        "the wait that Retry-After rounds up to whole seconds."
    )
    s.fact(
        "decision",
        "GCRA in a Redis Lua script",
        ("GCRA",),
        stale=("fixed-window counter", "per-process token buckets"),
    )
    g.run(
        "golangci-lint run ./...",
        "internal/ratelimit/limiter.go:31:14: Error return value of `l.rdb.ScriptLoad` is "
        "not checked (errcheck)\n"
        "\tl.rdb.ScriptLoad(ctx, gcraSource)\n"
        "\t            ^\n"
        "1 issues:\n* errcheck: 1",
        "Lint the module.",
        code=1,
    )
    s.fact("error_resolved", "errcheck on ScriptLoad", ("errcheck",), required=False)
    g.replace(
        limiter,
        "\tl.rdb.ScriptLoad(ctx, gcraSource)\n",
        "",
        text="The preload is redundant — Script.Run already falls back from EVALSHA to EVAL.",
    )
    g.grep(
        "ipThrottle",
        [(iplimit, 5, "func ipThrottle(next http.Handler) http.Handler {")],
        include="*.go",
        text="Is the old per-IP throttle registered anywhere?",
    )
    g.files[iplimit] = iplimit_go()
    g.run(
        f"git rm {iplimit}",
        f"rm '{iplimit}'",
        "Remove the unused per-IP throttle the new limiter replaces.",
        text="Only its own definition; it goes.",
    )
    s.fact("file_deleted", "the old per-IP throttle", (iplimit,))
    fill(0.75)

    # 7. a to-do added by the user
    s.user(
        "Good. Put a load test on the list as well — vegeta against staging with a couple of "
        "tenants at once — but only after the unit tests are green."
    )
    todos(
        {"read": "completed", "limiter": "completed", "wire": "completed",
         "grafana": "cancelled", "metric": "in_progress", "vegeta": "pending"},
    )  # fmt: skip
    s.fact("todo", "the vegeta load test", (todo["vegeta"],))
    fill(0.84)

    # 8. the last run: one test still red
    n2 = n1 + rng.randint(5, 12)
    out2, counts2 = go_test_run(
        rng,
        module,
        {
            shared_test: (
                "internal/ratelimit",
                [
                    "limiter_test.go:58: ",
                    "        \tError Trace:\tlimiter_test.go:58",
                    "        \tError:      \tReceived unexpected error:",
                    "        \t            \tdial tcp 127.0.0.1:6379: connect: connection refused",
                    f"        \tTest:       \t{shared_test}",
                ],
            )
        },
        n2,
    )
    g.run(
        "gotestsum --format standard-quiet -- ./...",
        out2,
        "Run the whole test suite again.",
        code=1,
        text="Build and lint are clean. Full suite.",
    )
    s.fact("test_status", "the last test run", (counts2,), stale=(counts1,))
    s.fact("error_open", "the Redis integration test fails", (shared_test,))
    s.say(
        f"The unit tests pass. {shared_test} needs a real Redis on localhost:6379, and "
        "neither this machine nor the CI workflow starts one. Adding a redis service "
        "container to the CI job would fix it, but that workflow is shared by every service "
        "in the org, so I'd rather you decide that than change it from here."
    )
    fill(0.97)

    # 9. the wrap-up: no fact restated
    closing = rng.choice(
        [
            "Your move on that one",
            "Waiting on your call before going further",
            "That's as far as I can take it without you",
        ]
    )
    s.say(f"{closing}.")
    s.fact("last_message", "the final answer", (closing,))
    return finish_session(s, family=FAMILY, seed=seed)
