"""crushstory-style: Charm's Crush coding agent on a Hanami 2 (Ruby) JSON API, a story of its own.

Crush's built-in tools as its source names them (internal/agent/tools): `bash` {description,
command, run_in_background?} answered with the output and `<cwd>…</cwd>` ("no output" when
silent, "Exit code N" after a failure's output, "Background shell started with ID: …" for a
background run, read back with `job_output` {shell_id, wait}); `view` {file_path, offset?,
limit?} answered in `<file>` tags with six-wide line numbers; `edit` {file_path, old_string,
new_string} and `multiedit` {file_path, edits} ("<result>\\nContent replaced in file: …");
`write` {file_path, content} ("File successfully written: …"); `glob` {pattern, path}, `grep`
{pattern, path, include} ("Found N matches" with "  Line N: …"), `ls` {path} (a "- " tree),
`lsp_diagnostics` {file_path}, `fetch` {url, format}, `todos` {todos: [{content, status,
active_form}]} ("Status: N pending, N in progress, N completed"). Crush has no delete tool and
no cancelled to-do state: a file goes with `rm`, a dropped to-do is left out of the list.

The story: a Hanami app's public API gets per-key rate limiting. Written apart from the
compaction strategies and from `story.tell`; facts planted in the `Fact` format.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from compaction.eval.families._base import (
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

FAMILY = "crushstory-style"

#: (app, its Ruby module's header word, user) per seed.
_APPS = (
    ("shelfmark", "Shelfmark", "maren"),
    ("toolshed", "Toolshed", "ivo"),
    ("loanbook", "Loanbook", "petra"),
    ("gearbox", "Gearbox", "sol"),
    ("seedvault", "Seedvault", "ana"),
)
#: Requests per minute: first, changed to, then settled on (two digits: none stands in another).
_LIMITS = ((60, 45, 75), (40, 90, 55), (30, 80, 50), (70, 35, 65), (25, 60, 40))
#: Cool-down after a key runs dry, in seconds: first, then changed to.
_COOLDOWNS = ((30, 90), (20, 45), (15, 60), (40, 25))
_RUBIES = ("3.1", "3.2", "3.3")
_TABLES = ("rate_limit_buckets", "api_key_buckets", "throttle_buckets")


def _view(content: str, offset: int = 0, more: bool = False) -> str:
    lines = content.split("\n")
    numbered = "\n".join(f"{offset + i + 1:>6}|{line}" for i, line in enumerate(lines))
    out = "<file>\n" + numbered
    if more:
        out += (
            "\n\n(File has more lines. Use 'offset' parameter to read beyond line "
            f"{offset + len(lines)})"
        )
    return out + "\n</file>\n"


class _Crush:
    """Crush's tools writing into a session."""

    def __init__(self, s: Session, root: str) -> None:
        self.s = s
        self.root = root
        self.rng = s.rng
        self.shells = 0

    def p(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def bash(
        self,
        description: str,
        command: str,
        output: str,
        *,
        code: int = 0,
        filler: bool = False,
        text: str = "",
    ) -> None:
        if code:
            output = (output + "\n" if output else "") + f"exit status {code}\nExit code {code}"
        result = f"{output}\n\n<cwd>{self.root}</cwd>" if output else "no output"
        self.s.call(
            "bash",
            {"description": description, "command": command},
            result,
            filler=filler,
            text=text,
        )

    def background(self, description: str, command: str, output: str) -> None:
        self.shells += 1
        shell_id = f"{self.shells:03x}"
        self.s.call(
            "bash",
            {"description": description, "command": command, "run_in_background": True},
            f"Background shell started with ID: {shell_id}\n\n"
            "Use job_output tool to view output or job_kill to terminate.",
        )
        self.s.call(
            "job_output", {"shell_id": shell_id, "wait": True}, f"Status: completed\n\n{output}"
        )

    def view(
        self, rel: str, content: str, *, offset: int = 0, limit: int = 0, filler: bool = False
    ) -> None:
        args: dict[str, Any] = {"file_path": self.p(rel)}
        more = False
        if limit:
            args["offset"], args["limit"] = offset, limit
            lines = content.split("\n")
            more = offset + limit < len(lines)
            content = "\n".join(lines[offset : offset + limit])
        self.s.call("view", args, _view(content, offset, more), filler=filler)

    def edit(self, rel: str, old: str, new: str, *, text: str = "") -> None:
        self.s.call(
            "edit",
            {"file_path": self.p(rel), "old_string": old, "new_string": new},
            f"<result>\nContent replaced in file: {self.p(rel)}\n</result>\n",
            text=text,
        )

    def multiedit(self, rel: str, edits: Sequence[tuple[str, str]], *, text: str = "") -> None:
        self.s.call(
            "multiedit",
            {
                "file_path": self.p(rel),
                "edits": [{"old_string": o, "new_string": n} for o, n in edits],
            },
            f"<result>\nApplied {len(edits)} edits to file: {self.p(rel)}\n</result>\n",
            text=text,
        )

    def write(self, rel: str, content: str, *, text: str = "") -> None:
        self.s.call(
            "write",
            {"file_path": self.p(rel), "content": content},
            f"<result>\nFile successfully written: {self.p(rel)}\n</result>",
            text=text,
        )

    def grep(self, pattern: str, include: str, hits: Sequence[tuple[str, int, str]]) -> None:
        if not hits:
            out = "No files found"
        else:
            out = f"Found {len(hits)} matches\n"
            current = ""
            for path, line, found in hits:
                if path != current:
                    out += ("\n" if current else "") + f"{self.p(path)}:\n"
                    current = path
                out += f"  Line {line}: {found}\n"
        self.s.call("grep", {"pattern": pattern, "path": self.root, "include": include}, out)

    def todos(self, items: Sequence[tuple[str, str, str]], *, text: str = "") -> None:
        statuses = [status for _, status, _ in items]
        self.s.call(
            "todos",
            {"todos": [{"content": c, "status": st, "active_form": a} for c, st, a in items]},
            "Todo list updated successfully.\n\n"
            f"Status: {statuses.count('pending')} pending, {statuses.count('in_progress')} in "
            f"progress, {statuses.count('completed')} completed\n"
            "Todos have been modified successfully. Ensure that you continue to use the todo "
            "list to track your progress. Please proceed with the current tasks if applicable.",
            text=text,
        )


# --- filler -----------------------------------------------------------------------------------


def _ruby_file(rng: random.Random, module: str, lines: int) -> str:
    body = code_file(rng, "rb", lines)
    indented = "\n".join(f"    {line}" if line else "" for line in body.split("\n"))
    return (
        f"# frozen_string_literal: true\n\nmodule {module}\n  class {camel(ident(rng))}\n"
        f"{indented}\n  end\nend"
    )


def _filler(c: _Crush, module: str, app: str) -> None:
    rng = c.rng
    kind = rng.randrange(6)
    if kind in (0, 1):
        rel = f"lib/{app}/{ident(rng)}.rb"
        content = _ruby_file(rng, module, rng.randint(60, 110))
        if kind == 1:
            c.view(rel, content, offset=rng.choice((20, 40)), limit=50, filler=True)
        else:
            c.view(rel, content, filler=True)
    elif kind == 2:
        word = ident(rng, 1)
        rel = f"app/actions/{word}/{ident(rng)}.rb"
        c.view(rel, _ruby_file(rng, module, rng.randint(50, 90)), filler=True)
    elif kind == 3:
        n = rng.randint(50, 90)
        c.bash(
            "Tail the development log",
            f"tail -n {n} log/development.log",
            log_lines(rng, n),
            filler=True,
        )
    elif kind == 4:
        paths = sorted(
            {f"{c.root}/{rng.choice(('lib/' + app, 'app/actions', 'spec'))}/{ident(rng)}.rb"
             for _ in range(rng.randint(40, 70))}
        )  # fmt: skip
        c.s.call("glob", {"pattern": "**/*.rb", "path": c.root}, "\n".join(paths), filler=True)
    else:
        word = ident(rng, 1)
        out = []
        for _ in range(rng.randint(3, 6)):
            rel = f"lib/{app}/{ident(rng)}.rb"
            out.append(f"{c.p(rel)}:")
            for _ in range(rng.randint(2, 6)):
                out.append(f"  Line {rng.randint(3, 140)}: {word} = load_{ident(rng)}({word})")
            out.append("")
        c.s.call(
            "grep",
            {"pattern": f"load_.*\\({word}\\)", "path": c.root, "include": "*.rb"},
            f"Found {sum(1 for line in out if line.startswith('  Line'))} matches\n"
            + "\n".join(out).rstrip("\n")
            + "\n",
            filler=True,
        )


# --- the story ----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    """One Crush session of about `tokens` tokens, its story and values drawn from `seed`."""
    rng = random.Random(f"{FAMILY}:{seed}")
    app, module, user = rng.choice(_APPS)
    root = f"/home/{user}/code/{app}"
    ruby = rng.choice(_RUBIES)
    table = rng.choice(_TABLES)
    first, second, third = rng.choice(_LIMITS)
    cool0, cool1 = rng.choice(_COOLDOWNS)
    header = f"X-{module}-Api-Key"
    prod = hexid(rng, 7)
    pr = rng.randint(210, 980)
    spec_line = 14  # the example the last run adds, where the old one began
    base = rng.randint(24, 40)
    n_first, n_green, n_last = base, base + 6, base + 11
    migration = f"config/db/migrate/2026111{rng.randint(0, 9)}{rng.randint(100000, 235959)}" + (
        f"_create_{table}.rb"
    )
    limiter = f"lib/{app}/rate_limiter.rb"
    spec = f"spec/{app}/rate_limiter_spec.rb"
    legacy = f"lib/{app}/legacy_throttle.rb"

    system = (
        "You are Crush, a powerful AI Assistant that runs in the CLI.\n\n"
        "Use the available tools to help the user with software engineering tasks. Read a file "
        "with view before you edit it; prefer edit and multiedit over rewriting whole files; "
        "keep the todo list current while you work.\n\n"
        f"<env>\nWorking directory: {root}\nIs directory a git repo: yes\nPlatform: linux\n"
        f"Today's date: 11/{rng.randint(14, 21)}/2026\n\nGit status (snapshot at conversation "
        f"start - may be outdated):\nCurrent branch: main\n\nStatus:\n(clean)\n</env>\n\n"
        "<lsp>\nruby-lsp is running for *.rb files.\n</lsp>"
    )
    s = Session(rng=rng, system=system)
    c = _Crush(s, root)
    pick = rng.choice

    todo_items = [
        ("Wire a rate limiter into the Rack stack", "Wiring the rate limiter"),
        ("Share bucket state across Puma workers", "Sharing bucket state"),
        ("Answer throttled calls with a proper 429 body", "Shaping the 429 body"),
        ("Add a Grafana panel for throttled calls", "Adding the Grafana panel"),
        ("Write up the limits in docs/api.md", "Writing up the limits"),
    ]
    purge = ("Nightly rake task that purges idle buckets", "Purging idle buckets")

    def todo_list(states: Sequence[str], extra: bool = False, drop: bool = False) -> list[Any]:
        out = [
            (content, state, active)
            for (content, active), state in zip(todo_items, states, strict=True)
            if not (drop and content.startswith("Add a Grafana"))
        ]
        if extra:
            out.append((purge[0], "pending", purge[1]))
        return out

    spec_text = (
        f"# frozen_string_literal: true\n\nRSpec.describe {module}::RateLimiter do\n"
        "  include Rack::Test::Methods\n\n  let(:app) { Hanami.app }\n\n"
        '  it "lets a key through under the limit" do\n'
        f'    header "{header}", "k_test"\n    get "/v1/search?q=x"\n'
        "    expect(last_response.status).to eq(200)\n  end\n\n"
        '  it "refuses the call past the limit" do\n'
        f'    header "{header}", "k_test"\n'
        '    (limit + 1).times { get "/v1/search?q=x" }\n'
        "    expect(last_response.status).to eq(429)\n  end\nend\n"
    )

    limiter_text = (
        f"# frozen_string_literal: true\n\nmodule {module}\n  class RateLimiter\n"
        "    UPSERT = <<~SQL\n"
        f"      INSERT INTO {table} (api_key_id, window_start, hits)\n"
        "      VALUES (:key, date_trunc('minute', now()), 1)\n"
        "      ON CONFLICT (api_key_id, window_start)\n"
        f"      DO UPDATE SET hits = {table}.hits + 1\n"
        "      RETURNING hits, blocked_until\n    SQL\n\n"
        "    def initialize(app, db:, limit:, cooldown:)\n"
        "      @app, @db, @limit, @cooldown = app, db, limit, cooldown\n    end\n\n"
        "    def call(env)\n"
        '      key = env["app.api_key"] or return @app.call(env)\n'
        "      row = @db.fetch(UPSERT, key: key.id).first\n"
        "      return refuse if row[:hits] > @limit\n\n      @app.call(env)\n    end\n"
        "  end\nend\n"
    )

    events: list[Callable[[], None]] = []

    # 1. the ask, with the rules and the first values
    def ask() -> None:
        gems = pick(
            (
                "No new gems for this — the bundle is frozen until the audit is done.",
                "And no new gems, please; security signs off every Gemfile change.",
            )
        )
        s.user(
            f"Morning. The partner API is getting hammered — one integrator's cron job fires "
            f"thousands of search calls in a burst and the other keys time out. I want a "
            f"limit per API key: {first} requests per minute, and once a key runs dry it sits "
            f"out a {cool0}-second cool-down before it gets anything back. {gems} Production is "
            f"still on Ruby {ruby}, so nothing newer than that. When we refuse a call, the body "
            f"has to be application/problem+json like every other error we return."
        )
        s.fact("constraint", "No new gems may be added.", ("no new gems",))
        s.fact("constraint", f"Must run on Ruby {ruby}.", (f"Ruby {ruby}",))
        s.fact(
            "constraint",
            "Refusals are answered as application/problem+json.",
            ("application/problem+json",),
        )
        s.say(
            pick(
                (
                    "Let me get my bearings in the app before touching anything.",
                    "I'll look around the app first and then set up a plan.",
                )
            )
        )
        c.s.call(
            "ls",
            {"path": root},
            f"\n- {root}/\n  - Gemfile\n  - Gemfile.lock\n  - Rakefile\n  - app/\n"
            "    - action.rb\n    - actions/\n  - config/\n    - app.rb\n    - routes.rb\n"
            "    - settings.rb\n    - db/\n  - config.ru\n  - lib/\n"
            f"    - {app}/\n  - spec/\n    - spec_helper.rb\n",
        )
        gemfile = (
            'source "https://rubygems.org"\n\n'
            f'ruby "~> {ruby}.0"\n\n'
            'gem "hanami", "~> 2.2"\ngem "hanami-router", "~> 2.2"\n'
            'gem "hanami-controller", "~> 2.2"\ngem "hanami-db", "~> 2.2"\n'
            'gem "pg"\ngem "puma"\ngem "rake"\ngem "dry-types", "~> 1.7"\n\n'
            'group :test do\n  gem "rspec"\n  gem "rack-test"\n  gem "database_cleaner-sequel"\n'
            'end\n\ngroup :development, :test do\n  gem "rubocop", require: false\nend'
        )
        c.view("Gemfile", gemfile)
        s.fact("file_read", "The Gemfile was read.", ("Gemfile",), required=False)

    events.append(ask)

    def plan() -> None:
        c.todos(
            todo_list(("in_progress", "pending", "pending", "pending", "pending")),
            text="Here's how I'd break it down.",
        )
        c.grep(
            "Api-Key",
            "*.rb",
            [
                (f"lib/{app}/middleware/api_key.rb", 9, f'HEADER = "HTTP_{header.upper()}"'),
                (f"lib/{app}/middleware/api_key.rb", 14, "key = env.fetch(HEADER, nil)"),
                (f"spec/{app}/middleware/api_key_spec.rb", 7, f'header "{header}", "k_test"'),
            ],
        )
        s.say(
            pick(
                (
                    f"Partners authenticate with the `{header}` header (read in "
                    "middleware/api_key.rb), so that's what the buckets should hang off.",
                    f"The key arrives in `{header}`; the existing ApiKey middleware resolves it "
                    "before any action runs, which gives us a natural place to slot in after it.",
                )
            )
        )
        s.fact("identifier", "Partners send their key in this header.", (header,))

    events.append(plan)

    app_rb = (
        "# frozen_string_literal: true\n\n"
        'require "hanami"\n\n'
        f"module {module}\n  class App < Hanami::App\n"
        f"    config.middleware.use {module}::Middleware::ApiKey\n"
        f"    config.middleware.use {module}::LegacyThrottle\n"
        "    config.actions.format :json\n  end\nend"
    )

    def hash_first() -> None:
        s.say(
            "Simplest thing first: a per-process Hash of counters, keyed by client IP, "
            "reset every minute."
        )
        c.view("config/app.rb", app_rb)
        c.write(
            limiter,
            f"# frozen_string_literal: true\n\nmodule {module}\n  class RateLimiter\n"
            "    def initialize(app, limit:)\n      @app = app\n      @limit = limit\n"
            "      @counts = Hash.new(0)\n    end\n\n    def call(env)\n"
            '      ip = env["REMOTE_ADDR"]\n      @counts[ip] += 1\n'
            "      return [429, {}, []] if @counts[ip] > @limit\n\n      @app.call(env)\n"
            "    end\n  end\nend\n",
        )
        s.fact(
            "file_created", "The rate limiter was created.", (limiter,)
        )  # current form written later too

    events.append(hash_first)

    def pushback() -> None:
        s.user(
            pick(
                (
                    "Hmm, two problems. We run four Puma workers on each of three boxes, so a "
                    "Hash only sees a twelfth of the traffic. And go by API key, not by IP — "
                    "half our partners sit behind a single corporate NAT.",
                    "That won't hold up: it's 3 boxes × 4 Puma workers, so each process counts "
                    "its own slice. Also please key it on the API key rather than the IP; "
                    "several partners share one egress address.",
                )
            )
        )
        s.say(
            "Fair on both counts. Buckets are keyed by API key from here on. For shared "
            "state I'd reach for Redis with INCR and EXPIRE — atomic and cheap."
        )
        s.user(
            "Redis isn't in the bundle though, and I said no gems. We already have Postgres "
            "on every box."
        )
        s.say(
            f"Right, scrap Redis. Going with a {table} table in Postgres instead: one row per "
            "API key and window, bumped with an upsert (INSERT … ON CONFLICT DO UPDATE … "
            "RETURNING hits), so every worker sees the same count without a new dependency."
        )
        s.fact(
            "decision",
            f"Bucket state lives in a Postgres {table} table, bumped with an upsert.",
            (table, "upsert"),
            stale=("per-process Hash", "Redis with INCR"),
        )
        s.fact(
            "decision",
            "Buckets are keyed by API key, not client IP.",
            ("keyed by API key",),
            stale=("keyed by client IP",),
        )

    events.append(pushback)

    def migrate() -> None:
        c.write(
            migration,
            "# frozen_string_literal: true\n\nROM::SQL.migration do\n  change do\n"
            f"    create_table :{table} do\n      column :api_key_id, :bigint, null: false\n"
            "      column :window_start, :timestamptz, null: false\n"
            "      column :hits, :integer, null: false, default: 0\n"
            "      column :blocked_until, :timestamptz\n"
            "      primary_key %i[api_key_id window_start]\n    end\n  end\nend\n",
        )
        s.fact("file_created", "The bucket table's migration was created.", (migration,))
        c.bash(
            "Run the new migration",
            "bundle exec hanami db migrate",
            f"=> database {app}_development migrated in 0.0{rng.randint(11, 89)}s\n"
            f"=> {app}_development structure dumped to config/db/structure.sql in 0.1s",
        )
        s.user(
            pick(
                (
                    "Don't commit config/db/structure.sql — CI regenerates it from the "
                    "migrations and a hand-dumped one always conflicts.",
                    "Leave config/db/structure.sql out of this, please. It's rebuilt in CI "
                    "and local dumps only cause merge noise.",
                )
            )
        )
        s.fact(
            "constraint",
            "config/db/structure.sql is not to be committed.",
            ("config/db/structure.sql",),
        )
        c.bash(
            "Restore the structure dump",
            "git checkout -- config/db/structure.sql && git status --short",
            f"?? {migration}\n?? {limiter}",
        )

    events.append(migrate)

    settings_rb = (
        "# frozen_string_literal: true\n\n"
        f"module {module}\n  class Settings < Hanami::Settings\n"
        "    setting :database_url, constructor: Types::String\n"
        '    setting :log_level, default: "info", constructor: Types::String\n'
        "  end\nend"
    )

    def postgres_version() -> None:
        c.write(
            limiter,
            limiter_text,
            text="Rewriting the limiter around the upsert.",
        )
        c.view("config/settings.rb", settings_rb)
        c.edit(
            "config/settings.rb",
            '    setting :log_level, default: "info", constructor: Types::String\n',
            '    setting :log_level, default: "info", constructor: Types::String\n'
            f"    setting :rate_limit_per_minute, default: {first}, "
            "constructor: Types::Params::Integer\n"
            f"    setting :rate_limit_cooldown, default: {cool0}, "
            "constructor: Types::Params::Integer\n",
        )
        c.edit(
            "config/app.rb",
            f"    config.middleware.use {module}::Middleware::ApiKey\n",
            f"    config.middleware.use {module}::Middleware::ApiKey\n"
            f"    config.middleware.use {module}::RateLimiter,\n"
            '      db: -> { Hanami.app["db.gateway"].connection },\n'
            "      limit: settings.rate_limit_per_minute,\n"
            "      cooldown: settings.rate_limit_cooldown\n",
        )
        s.fact("file_modified", "The app config mounts the limiter.", ("config/app.rb",))

    events.append(postgres_version)

    def first_spec() -> None:
        c.write(spec, spec_text)
        s.fact("file_created", "The limiter's spec was created.", (spec,))
        helper = (
            'require "rack/test"\nrequire "database_cleaner/sequel"\n\n'
            "RSpec.configure do |config|\n"
            "  config.before(:suite) do\n"
            "    DatabaseCleaner[:sequel].strategy = :transaction\n  end\n\n"
            "  config.around do |example|\n"
            "    DatabaseCleaner[:sequel].cleaning { example.run }\n  end\nend"
        )
        c.view("spec/spec_helper.rb", helper)
        c.edit(
            "spec/spec_helper.rb",
            "    DatabaseCleaner[:sequel].strategy = :transaction\n",
            "    DatabaseCleaner[:sequel].strategy = :transaction\n"
            f'    Hanami.app["db.gateway"].connection[:{table}].truncate\n',
            text="Buckets left over from one example would throttle the next; clearing them.",
        )
        s.fact(
            "file_modified", "The spec helper empties the bucket table.", ("spec/spec_helper.rb",)
        )
        failing = (
            f"Randomized with seed {rng.randint(1000, 65000)}\n"
            + "." * (n_first - 2)
            + "FF\n\nFailures:\n\n"
            f"  1) {module}::RateLimiter lets a key through under the limit\n"
            "     Failure/Error: let(:app) { Hanami.app }\n\n     NameError:\n"
            f"       uninitialized constant {module}::RateLimiter\n"
            f"     # ./config/app.rb:9:in `<class:App>'\n\n"
            f"  2) {module}::RateLimiter refuses the call past the limit\n"
            "     Failure/Error: let(:app) { Hanami.app }\n\n     NameError:\n"
            f"       uninitialized constant {module}::RateLimiter\n\n"
            f"Finished in 0.{rng.randint(40, 99)} seconds (files took 1.2 seconds to load)\n"
            f"{n_first} examples, 2 failures\n\nFailed examples:\n\n"
            f"rspec {spec}:8 # {module}::RateLimiter lets a key through under the limit\n"
            f"rspec {spec}:14 # {module}::RateLimiter refuses the call past the limit"
        )
        c.bash("Run the spec suite", "bundle exec rspec", failing, code=1)
        s.fact(
            "error_resolved",
            "The app could not find the RateLimiter constant at boot.",
            (f"uninitialized constant {module}::RateLimiter",),
            required=False,
        )

    events.append(first_spec)

    def fix_const() -> None:
        s.say(
            pick(
                (
                    "config/app.rb is evaluated before Zeitwerk has set up lib/, so the "
                    "constant isn't there yet. Requiring it explicitly fixes the boot order.",
                    "The middleware line runs while the app class is still being defined — "
                    "lib/ isn't autoloaded at that point. An explicit require sorts it.",
                )
            )
        )
        c.view("config/app.rb", app_rb)
        c.edit(
            "config/app.rb",
            'require "hanami"\n',
            f'require "hanami"\nrequire_relative "../lib/{app}/rate_limiter"\n',
        )
        passing = (
            f"Randomized with seed {rng.randint(1000, 65000)}\n"
            + "." * n_green
            + f"\n\nFinished in 0.{rng.randint(40, 99)} seconds (files took 1.1 seconds to load)\n"
            f"{n_green} examples, 0 failures"
        )
        c.bash("Run the spec suite", "bundle exec rspec", passing)
        c.todos(todo_list(("completed", "completed", "in_progress", "pending", "pending")))
        s.fact(
            "todo",
            "Sharing bucket state across workers is done.",
            (todo_items[1][0],),
            required=False,
        )

    events.append(fix_const)

    def bump_limit() -> None:
        s.user(
            pick(
                (
                    f"Talked to the partner team — {first} is too tight for the batch "
                    f"importers. Make it {second} requests per minute.",
                    f"Partners say {first} a minute breaks their nightly sync. Raise it to "
                    f"{second} requests per minute.",
                )
            )
        )
        c.view("config/settings.rb", settings_rb)
        c.edit(
            "config/settings.rb",
            f"default: {first}, constructor",
            f"default: {second}, constructor",
        )
        s.say(f"Done: the default is now {second} requests per minute.")

    events.append(bump_limit)

    def problem_json() -> None:
        c.view(limiter, limiter_text)
        c.multiedit(
            limiter,
            [
                (
                    "      return refuse if row[:hits] > @limit\n",
                    "      retry_after = @cooldown\n"
                    "      return refuse(@cooldown) if row[:hits] > @limit\n",
                ),
                (
                    "  end\nend\n",
                    "    private\n\n    def refuse(seconds)\n"
                    '      body = { type: "about:blank", title: "Too Many Requests", '
                    "status: 429 }\n"
                    '      [429, { "content-type" => "application/problem+json", '
                    '"retry-after" => seconds.to_s }, [JSON.generate(body)]]\n'
                    "    end\n  end\nend\n",
                ),
            ],
            text="Now the refusal itself.",
        )
        c.s.call(
            "lsp_diagnostics",
            {"file_path": c.p(limiter)},
            f"\n<file_diagnostics>\nWarn: {c.p(limiter)}:21:7 [ruby-lsp RuboCop]"
            "[Lint/UselessAssignment] Useless assignment to variable - `retry_after`.\n"
            "</file_diagnostics>\n\n<diagnostic_summary>\nCurrent file: 0 errors, 1 warnings\n"
            "Project: 0 errors, 0 warnings\n</diagnostic_summary>\n",
        )
        s.fact(
            "error_resolved",
            "RuboCop flagged a useless assignment in the limiter.",
            ("Lint/UselessAssignment",),
            required=False,
        )
        c.edit(limiter, "      retry_after = @cooldown\n", "")
        c.bash(
            "Lint the limiter",
            f"bundle exec rubocop {limiter}",
            "Inspecting 1 file\n.\n\n1 file inspected, no offenses detected",
        )

    events.append(problem_json)

    def cooldown() -> None:
        s.user(
            pick(
                (
                    f"One more tweak: {cool0} seconds of silence is too harsh for a key that "
                    f"just tipped over. Use a {cool1}-second cool-down.",
                    f"Actually the cool-down — change it to a {cool1}-second cool-down, the "
                    f"{cool0} we started with feels wrong after looking at the logs.",
                )
            )
        )
        c.edit(
            "config/settings.rb",
            f"rate_limit_cooldown, default: {cool0},",
            f"rate_limit_cooldown, default: {cool1},",
        )
        s.say(f"Set. A key that runs dry now waits out a {cool1}-second cool-down.")
        s.fact(
            "changed_value",
            "The cool-down after a key runs dry.",
            (f"{cool1}-second cool-down",),
            stale=(f"{cool0}-second cool-down",),
        )

    events.append(cooldown)

    def remove_legacy() -> None:
        c.grep(
            "LegacyThrottle",
            "*.rb",
            [
                ("config/app.rb", 8, f"config.middleware.use {module}::LegacyThrottle"),
                (legacy, 4, "class LegacyThrottle"),
            ],
        )
        s.say(
            pick(
                (
                    "The old LegacyThrottle is still mounted and only sleeps on bursts; with "
                    "the new limiter it's dead weight. Unmounting and removing it.",
                    "There's a LegacyThrottle from years ago doing a crude sleep-on-burst. It "
                    "would double-throttle, so it goes.",
                )
            )
        )
        c.edit("config/app.rb", f"    config.middleware.use {module}::LegacyThrottle\n", "")
        c.bash("Remove the legacy throttle", f"rm {legacy}", "")
        s.fact("file_deleted", "The legacy throttle was removed.", (legacy,))

    events.append(remove_legacy)

    def which_commit() -> None:
        s.user(
            pick(
                (
                    "Before I forget — which commit is production actually running? I need it "
                    "for the incident note.",
                    "Quick one: what revision is deployed to prod right now? Ops wants it in "
                    "the write-up.",
                )
            )
        )
        c.s.call(
            "fetch",
            {"url": f"https://api.{app}.io/health", "format": "text"},
            json.dumps(
                {
                    "status": "ok",
                    "revision": prod,
                    "ruby": f"{ruby}.{rng.randint(2, 6)}",
                    "booted_at": f"2026-11-{rng.randint(10, 13)}T0{rng.randint(1, 9)}:12:44Z",
                }
            ),
        )
        s.say(f"Production reports revision {prod} on its health endpoint.")
        s.fact("identifier", "The commit production runs.", (prod,))

    events.append(which_commit)

    def todo_shuffle() -> None:
        s.user(
            pick(
                (
                    "Forget the Grafana panel, the SRE folks are building their own. But we'll "
                    f"need something that clears out idle rows from {table} every night.",
                    "Skip the dashboard item — SRE has it. Add a nightly job that deletes idle "
                    f"buckets though, or {table} grows forever.",
                )
            )
        )
        c.todos(
            todo_list(("completed", "completed", "completed", "pending", "pending"), True, True),
            text="Updated the list.",
        )
        s.fact(
            "todo",
            "The Grafana panel was dropped.",
            (todo_items[3][0],),
            required=False,
        )

    events.append(todo_shuffle)

    def settle_limit() -> None:
        s.user(
            pick(
                (
                    f"Ugh, ops pushed back on {second}. Let's say {third} after all.",
                    f"Scratch that number — {second} is more than the search cluster can "
                    f"take. Go with {third}.",
                )
            )
        )
        c.edit(
            "config/settings.rb",
            f"default: {second}, constructor",
            f"default: {third}, constructor",
        )
        s.say(f"Okay — {third} requests per minute it is.")
        s.fact(
            "changed_value",
            "The per-key limit.",
            (f"{third} requests per minute",),
            stale=(f"{first} requests per minute", f"{second} requests per minute"),
        )
        s.fact("file_modified", "Settings hold the limit and cool-down.", ("config/settings.rb",))

    events.append(settle_limit)

    def hammer() -> None:
        lines = [f"req {i:>4} status=200" for i in range(1, 6)]
        out = "\n".join(lines) + (
            f"\n...\nsent {third + 20} in 60s: {third} x 200, 20 x 429\n"
            f"first 429 after request {third + 1}"
        )
        c.background("Hammer the local server", "bundle exec ruby script/hammer.rb", out)

    events.append(hammer)

    def last_run() -> None:
        c.view(spec, spec_text)
        c.edit(
            spec,
            '  it "refuses the call past the limit" do\n',
            '  it "sets RateLimit-Reset to the end of the window" do\n'
            f'    header "{header}", "k_test"\n    get "/v1/search?q=x"\n'
            '    expect(last_response.headers["RateLimit-Reset"]).to eq("60")\n  end\n\n'
            '  it "refuses the call past the limit" do\n',
        )
        failing = (
            f"Randomized with seed {rng.randint(1000, 65000)}\n"
            + "." * (n_last - 1)
            + "F\n\nFailures:\n\n"
            f"  1) {module}::RateLimiter sets RateLimit-Reset to the end of the window\n"
            f'     Failure/Error: expect(last_response.headers["RateLimit-Reset"]).to eq("60")\n'
            '\n       expected: "60"\n            got: nil\n\n'
            f"Finished in 0.{rng.randint(40, 99)} seconds (files took 1.2 seconds to load)\n"
            f"{n_last} examples, 1 failure\n\nFailed examples:\n\n"
            f"rspec {spec}:{spec_line} # {module}::RateLimiter sets RateLimit-Reset to the end of "
            "the window"
        )
        c.bash("Run the spec suite", "bundle exec rspec", failing, code=1)
        s.fact(
            "test_status",
            "The last run has one failure.",
            (f"{n_last} examples, 1 failure",),
            stale=(f"{n_green} examples, 0 failures",),
        )
        s.say(
            f"Everything else is green; the one red example is the RateLimit-Reset header "
            f"({spec}:{spec_line}) — the limiter never sets that header yet."
        )
        s.fact(
            "error_open",
            "The RateLimit-Reset spec still fails.",
            ("RateLimit-Reset", f"rate_limiter_spec.rb:{spec_line}"),
        )
        c.todos(
            todo_list(("completed", "completed", "completed", "pending", "pending"), True, True)
        )
        s.fact("todo", "Writing up the limits is still open.", (todo_items[4][0],))
        s.fact("todo", "The nightly purge task is still open.", (purge[0],))

    events.append(last_run)

    def ship() -> None:
        s.user(
            pick(
                (
                    "Leave that one for Monday. Commit, push the branch and open a draft PR.",
                    "Good enough for today — the header can wait. Push it and put up a draft PR.",
                )
            )
        )
        sha = hexid(rng, 7)
        c.bash(
            "Commit the work",
            'git checkout -b rate-limit-per-key && git add -A && git commit -m "Per-key rate '
            'limiting backed by Postgres"',
            f"Switched to a new branch 'rate-limit-per-key'\n[rate-limit-per-key {sha}] Per-key "
            "rate limiting backed by Postgres\n 6 files changed, 141 insertions(+), "
            "38 deletions(-)",
        )
        c.bash(
            "Push and open a draft PR",
            "git push -u origin rate-limit-per-key && gh pr create --draft --fill",
            "branch 'rate-limit-per-key' set up to track 'origin/rate-limit-per-key'.\n"
            f"https://github.com/{app}/{app}-api/pull/{pr}",
        )
        s.say(
            pick(
                (
                    f"Draft PR #{pr} is up. Catch you Monday.",
                    f"Pushed — draft PR #{pr} is up. Have a good weekend.",
                )
            )
        )
        s.fact("last_message", "The last message names the draft PR.", (f"draft PR #{pr} is up",))

    events.append(ship)

    target = tokens * CHARS_PER_TOKEN * 1.1
    for i, event in enumerate(events):
        goal = target * i / len(events) * 0.97
        while i and s.chars < goal:
            _filler(c, module, app)
        event()
    return finish_session(s, family=FAMILY, seed=seed)
