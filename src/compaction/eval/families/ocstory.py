"""ocstory-style: an OpenCode session in native function calls, with a story of its own.

OpenCode's (sst/opencode) built-in tools as its model sees them in OpenAI chat, the way
`packages/opencode/src/tool/*.ts` answers them:

- `bash` {command, timeout?, description}: the command's stdout and stderr as they came, no
  exit code; a command killed at its timeout gets a `<bash_metadata>` note after its output.
- `read` {filePath, offset?, limit?}: `<path>…</path>`, `<type>file</type>`, then
  `<content>` with the lines numbered `12: …` and `(End of file - total N lines)`.
- `edit` {filePath, oldString, newString, replaceAll?}: "Edit applied successfully.".
- `write` {filePath, content}: "Wrote file successfully.".
- `glob` {pattern, path?}: absolute paths, one a line; `grep` {pattern, path?, include?}:
  "Found N matches", each file's absolute path and its `  Line 12: …` lines; `list`
  {path?, ignore?}: an indented tree under the directory's absolute path.
- `todowrite` {todos: [{content, status, priority}]}: the list back as JSON (2-space indent);
  status pending / in_progress / completed / cancelled, priority high / medium / low.
- `task` {description, prompt, subagent_type}: `task_id: ses_… (for resuming to continue this
  task if needed)` and the sub-agent's report inside `<task_result>`.

Paths are absolute; the system prompt ends with OpenCode's `<env>` block and the project's
AGENTS.md.

The story: a Phoenix service (Ecto, Oban, NimbleCSV, ExUnit, Credo; app, entity, names and
values drawn per seed) gets CSV imports through its JSON API. The user's first message sets a
forbidden job library, the Elixir/OTP the release image pins, the 202 Accepted contract, an
upload cap and a window in which a re-upload of the same file returns the existing import.
The assistant starts in the HTML controller and is sent to the API's import controller; an
`explore` sub-agent finds the context's bulk upsert, used later. The design goes from rows
inserted inside the request (rejected) to one Oban job per file (a worker written, tested,
committed) to one job per chunk of rows (the file worker removed with `git rm`); bad rows are
kept in a table. The upload cap changes twice, the window once ("give it a full minute"); the
user forbids touching the old importer's directory, cancels a dashboard to-do and adds a
documentation one, and asks which commit added the unique index (answered from `git log -S`).
A BOM test fails and is fixed, a compile error (`to_timeout/1` is Elixir 1.17) and a Credo
finding are fixed, the last `mix test` has one failure left. The last message names no fact.
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
    code_file,
    finish_session,
    hexid,
    ident,
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "ocstory-style"

#: Characters (of the messages' JSON) per token of these sessions, measured with the
#: benchmark's counter on this family (3.6-3.9 per session: code, logs, ExUnit output, JSON
#: to-do lists); the sessions land within about 6% of the size asked for.
CHARS_PER_TOKEN = 3.66

# --- what a seed draws -------------------------------------------------------------------------

_APPS = ("tidepool", "quayside", "millrace", "fernhill", "saltmarsh", "larkspur")
_USERS = ("dana", "mika", "joel", "ines", "ravi", "tove")
_DATES = ("Tue Nov 17 2026", "Wed Nov 18 2026", "Mon Nov 23 2026", "Thu Nov 26 2026")


@dataclass(frozen=True)
class _Entity:
    plural: str
    singular: str
    context: str
    schema: str
    columns: tuple[str, str, str, str]
    upsert: str
    key: str
    #: Values of the key column in the tests: (one row's, a second's, a third's).
    samples: tuple[str, str, str] = ("A-100", "A-1", "A-2")


_ENTITIES = (
    _Entity("products", "product", "Catalog", "Product",
            ("sku", "name", "price_cents", "stock"), "bulk_upsert_products", "sku"),
    _Entity("contacts", "contact", "CRM", "Contact",
            ("email", "first_name", "last_name", "phone"), "merge_contacts", "email",
            ("ana@example.com", "bo@example.com", "cy@example.com")),
    _Entity("stock_levels", "stock_level", "Inventory", "StockLevel",
            ("sku", "warehouse", "quantity", "reorder_at"), "put_stock_levels", "sku"),
    _Entity("price_entries", "price_entry", "Pricing", "PriceEntry",
            ("sku", "currency", "amount_cents", "valid_from"), "replace_price_entries", "sku"),
)  # fmt: skip

#: (job library the user rules out, why).
_FORBIDDEN = (
    ("Broadway", "we had one Broadway pipeline and nobody could operate it"),
    ("Exq", "we are not running Redis just for a job queue"),
    ("Honeydew", "one job library is enough and it is Oban"),
)
#: (Elixir, OTP) the release image pins.
_RUNTIMES = (("1.16", "OTP 26"), ("1.15", "OTP 26"), ("1.16", "OTP 25"), ("1.15", "OTP 25"))
#: The upload cap: first, raised, settled.
_CAPS = (
    ("10 MB", "25 MB", "15 MB"),
    ("8 MB", "20 MB", "12 MB"),
    ("4 MB", "16 MB", "12 MB"),
    ("20 MB", "50 MB", "40 MB"),
)
#: The re-upload window: first, how the user changes it, what it becomes.
_WINDOWS = (
    ("30 seconds", "give it a full minute", "60 seconds"),
    ("45 seconds", "give it a full two minutes", "120 seconds"),
    ("20 seconds", "give it a full minute and a half", "90 seconds"),
    ("15 seconds", "give it a full minute", "60 seconds"),
)
#: (the rejected in-request function, the per-file worker, the per-chunk worker).
_DESIGNS = (
    ("import_inline", "ImportFileWorker", "ImportChunkWorker"),
    ("insert_rows_now", "FileImportWorker", "ChunkImportWorker"),
    ("load_csv_inline", "CsvFileWorker", "CsvChunkWorker"),
    ("ingest_in_request", "UploadWorker", "RowChunkWorker"),
)
_LEGACY = ("legacy_import", "old_importer", "admin_import", "bulk_legacy")
#: The test still red at the end (row numbers after a quoted newline).
_OPEN_TESTS = (
    "keeps source line numbers after a quoted field with a newline",
    "reports the source line of a row that follows a multi-line quoted field",
    "numbers rows by source line when a quoted cell spans two lines",
    "counts a quoted line break as part of its row when numbering errors",
)
_BOM_TESTS = (
    "strips a UTF-8 byte-order mark from the header",
    "reads a header that starts with a byte-order mark",
    "ignores the BOM Excel writes before the first column",
)
_LAST = (
    "Okay, I'll leave it there.",
    "Stopping here for today.",
    "Understood, nothing more for now.",
    "Alright, leaving it as it is.",
)
_FILLER_DIRS = ("accounts", "billing", "notifications", "reports", "search", "audit", "teams")
_VERBS = ("Fix", "Add", "Refactor", "Bump", "Drop", "Rename", "Tidy")


def _session_id(rng: random.Random) -> str:
    base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    return "ses_" + hexid(rng, 12) + "".join(rng.choice(base62) for _ in range(14))


def _snake(name: str) -> str:
    """`ImportChunkWorker` → `import_chunk_worker`."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def _numbered(content: str, offset: int = 1) -> str:
    lines = content.split("\n")
    return "\n".join(f"{i + offset}: {line}" for i, line in enumerate(lines))


# --- OpenCode's tools --------------------------------------------------------------------------


class _OpenCode:
    """OpenCode's tool calls and their results, written into a `Session`."""

    def __init__(self, session: Session, root: str, target_chars: int) -> None:
        self.s = session
        self.rng = session.rng
        self.root = root
        self.target = target_chars

    def path(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def bash(
        self,
        command: str,
        description: str,
        output: str,
        *,
        timeout: int | None = None,
        timed_out: bool = False,
        text: str = "",
        filler: bool = False,
    ) -> None:
        arguments: dict[str, Any] = {"command": command}
        if timeout is not None:
            arguments["timeout"] = timeout
        arguments["description"] = description
        if timed_out:
            output += (
                "\n\n<bash_metadata>\nbash tool terminated command after exceeding timeout "
                f"{timeout} ms\n</bash_metadata>"
            )
        self.s.call("bash", arguments, output, text=text, filler=filler)

    def read(
        self,
        relative: str,
        content: str,
        *,
        offset: int | None = None,
        limit: int | None = None,
        text: str = "",
        filler: bool = False,
    ) -> None:
        path = self.path(relative)
        arguments: dict[str, Any] = {"filePath": path}
        if offset is not None:
            arguments["offset"] = offset
        if limit is not None:
            arguments["limit"] = limit
        lines = content.split("\n")
        start = offset or 1
        shown = lines[start - 1 : start - 1 + (limit or 2000)]
        last = start + len(shown) - 1
        if last < len(lines):
            tail = (
                f"(Showing lines {start}-{last} of {len(lines)}. "
                f"Use offset={last + 1} to continue.)"
            )
        else:
            tail = f"(End of file - total {len(lines)} lines)"
        result = (
            f"<path>{path}</path>\n<type>file</type>\n<content>\n"
            f"{_numbered(chr(10).join(shown), start)}\n\n{tail}\n</content>"
        )
        self.s.call("read", arguments, result, text=text, filler=filler)

    def edit(
        self, relative: str, old: str, new: str, *, replace_all: bool = False, text: str = ""
    ) -> None:
        arguments: dict[str, Any] = {"filePath": self.path(relative), "oldString": old}
        arguments["newString"] = new
        if replace_all:
            arguments["replaceAll"] = True
        self.s.call("edit", arguments, "Edit applied successfully.", text=text)

    def write(self, relative: str, content: str, *, text: str = "") -> None:
        arguments = {"filePath": self.path(relative), "content": content}
        self.s.call("write", arguments, "Wrote file successfully.", text=text)

    def glob(self, pattern: str, paths: Sequence[str], *, filler: bool = False) -> None:
        output = "\n".join(self.path(p) for p in paths) if paths else "No files found"
        self.s.call("glob", {"pattern": pattern, "path": self.root}, output, filler=filler)

    def grep(
        self,
        pattern: str,
        hits: Sequence[tuple[str, int, str]],
        *,
        under: str = "",
        include: str | None = None,
        text: str = "",
        filler: bool = False,
    ) -> None:
        arguments: dict[str, Any] = {
            "pattern": pattern,
            "path": self.path(under) if under else self.root,
        }
        if include is not None:
            arguments["include"] = include
        if not hits:
            self.s.call("grep", arguments, "No files found", text=text, filler=filler)
            return
        out = [f"Found {len(hits)} matches"]
        current = ""
        for relative, line, found in hits:
            if relative != current:
                if current:
                    out.append("")
                current = relative
                out.append(f"{self.path(relative)}:")
            out.append(f"  Line {line}: {found}")
        self.s.call("grep", arguments, "\n".join(out), text=text, filler=filler)

    def list_dir(self, relative: str, tree: dict[str, list[str]], *, filler: bool = False) -> None:
        """`list` of `relative`; `tree`: subdirectory ("" for itself, "a/b" nested) → files."""
        path = self.path(relative)
        out = [f"{path}/"]

        def parent(directory: str) -> str:
            return directory.rsplit("/", 1)[0] if "/" in directory else ""

        def render(directory: str, depth: int) -> None:
            if depth > 0:
                out.append("  " * depth + directory.rsplit("/", 1)[-1] + "/")
            for child in sorted(d for d in tree if d and parent(d) == directory):
                render(child, depth + 1)
            out.extend("  " * (depth + 1) + name for name in sorted(tree.get(directory, [])))

        render("", 0)
        self.s.call("list", {"path": path}, "\n".join(out) + "\n", filler=filler)

    def todowrite(self, todos: Sequence[tuple[str, str, str]], *, text: str = "") -> None:
        items = [{"content": c, "status": s, "priority": p} for c, s, p in todos]
        self.s.call("todowrite", {"todos": items}, json.dumps(items, indent=2), text=text)

    def task(self, description: str, prompt: str, report: str, *, text: str = "") -> None:
        arguments = {"description": description, "prompt": prompt, "subagent_type": "explore"}
        result = (
            f"task_id: {_session_id(self.rng)} (for resuming to continue this task if needed)\n\n"
            f"<task_result>\n{report}\n</task_result>"
        )
        self.s.call("task", arguments, result, text=text)

    # --- filler: what the agent reads along the way ------------------------------------------

    def pad(self, fraction: float, app: str) -> None:
        """Filler until the session holds `fraction` of its target size."""
        while self.s.chars < self.target * fraction:
            self.filler(app)

    def filler(self, app: str) -> None:
        rng = self.rng
        kind = rng.choice(("read", "read", "read", "log", "grep", "glob", "list", "gitlog"))
        area = rng.choice(_FILLER_DIRS)
        if kind == "read":
            name = ident(rng)
            module = f"{camel(app)}.{camel(area)}.{camel(name)}"
            body = code_file(rng, "ex", rng.randint(40, 140))
            content = f"defmodule {module} do\n  @moduledoc false\n\n{body}\nend"
            self.read(f"lib/{app}/{area}/{name}.ex", content, filler=True)
        elif kind == "log":
            lines = log_lines(rng, rng.randint(40, 110))
            if rng.random() < 0.15:
                self.bash("tail -f log/dev.log", "Follows the dev log", lines,
                          timeout=5000, timed_out=True, filler=True)  # fmt: skip
            else:
                count = len(lines.split("\n"))
                self.bash(f"tail -n {count} log/dev.log", "Shows recent dev log lines", lines,
                          filler=True)  # fmt: skip
        elif kind == "grep":
            word = rng.choice(("cursor", "ledger", "invoice", "tariff", "quota", "profile"))
            hits = []
            for _ in range(rng.randint(6, 22)):
                hits.append(
                    (
                        f"lib/{app}/{rng.choice(_FILLER_DIRS)}/{ident(rng)}.ex",
                        rng.randint(3, 180),
                        f"{word} = load_{word}({ident(rng)})",
                    )
                )
            hits.sort()
            self.grep(word, hits, under="lib", include="*.ex", filler=True)
        elif kind == "glob":
            paths = sorted({f"lib/{app}/{area}/{ident(rng)}.ex" for _ in range(rng.randint(8, 24))})
            self.glob(f"lib/{app}/{area}/**/*.ex", paths, filler=True)
        elif kind == "list":
            tree = {
                "": [f"{ident(rng)}.ex" for _ in range(rng.randint(2, 5))],
                **{d: [f"{ident(rng)}.ex" for _ in range(rng.randint(2, 7))]
                   for d in rng.sample(_FILLER_DIRS, 3)},
            }  # fmt: skip
            self.list_dir(f"lib/{app}", tree, filler=True)
        else:
            commits = [
                f"{hexid(rng)} {rng.choice(_VERBS)} {ident(rng).replace('_', ' ')} in {area}"
                for _ in range(rng.randint(15, 30))
            ]
            self.bash(f"git log --oneline -{len(commits)} -- lib/{app}/{area}",
                      f"Shows recent commits touching {area}", "\n".join(commits),
                      filler=True)  # fmt: skip


# --- the project's files as they are read and written ------------------------------------------


def _mix_exs(app: str, elixir: str) -> str:
    mod = camel(app)
    return f"""defmodule {mod}.MixProject do
  use Mix.Project

  def project do
    [
      app: :{app},
      version: "0.9.0",
      elixir: "~> {elixir}",
      elixirc_paths: elixirc_paths(Mix.env()),
      start_permanent: Mix.env() == :prod,
      aliases: aliases(),
      deps: deps()
    ]
  end

  def application do
    [
      mod: {{{mod}.Application, []}},
      extra_applications: [:logger, :runtime_tools]
    ]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]

  defp deps do
    [
      {{:phoenix, "~> 1.7.14"}},
      {{:phoenix_ecto, "~> 4.5"}},
      {{:ecto_sql, "~> 3.11"}},
      {{:postgrex, ">= 0.0.0"}},
      {{:phoenix_live_dashboard, "~> 0.8.3"}},
      {{:telemetry_metrics, "~> 1.0"}},
      {{:telemetry_poller, "~> 1.0"}},
      {{:oban, "~> 2.17"}},
      {{:nimble_csv, "~> 1.2"}},
      {{:jason, "~> 1.2"}},
      {{:bandit, "~> 1.5"}},
      {{:credo, "~> 1.7", only: [:dev, :test], runtime: false}},
      {{:ex_machina, "~> 2.7", only: :test}}
    ]
  end

  defp aliases do
    [
      setup: ["deps.get", "ecto.setup"],
      "ecto.setup": ["ecto.create", "ecto.migrate", "run priv/repo/seeds.exs"],
      "ecto.reset": ["ecto.drop", "ecto.setup"],
      test: ["ecto.create --quiet", "ecto.migrate --quiet", "test"]
    ]
  end
end"""


def _html_controller(app: str, e: _Entity) -> str:
    mod, schema = camel(app), e.schema
    return f'''defmodule {mod}Web.{schema}Controller do
  use {mod}Web, :controller

  alias {mod}.{e.context}
  alias {mod}.{e.context}.{schema}

  def index(conn, params) do
    page = {e.context}.list_{e.plural}(conn.assigns.current_account, params)
    render(conn, :index, page: page)
  end

  def new(conn, _params) do
    changeset = {e.context}.change_{e.singular}(%{schema}{{}})
    render(conn, :new, changeset: changeset)
  end

  def create(conn, %{{"{e.singular}" => attrs}}) do
    case {e.context}.create_{e.singular}(conn.assigns.current_account, attrs) do
      {{:ok, record}} ->
        conn
        |> put_flash(:info, "Saved.")
        |> redirect(to: ~p"/{e.plural}/#{{record}}")

      {{:error, %Ecto.Changeset{{}} = changeset}} ->
        render(conn, :new, changeset: changeset)
    end
  end

  def show(conn, %{{"id" => id}}) do
    record = {e.context}.get_{e.singular}!(conn.assigns.current_account, id)
    render(conn, :show, {e.singular}: record)
  end
end'''


def _api_controller(app: str) -> str:
    mod = camel(app)
    return f"""defmodule {mod}Web.Api.ImportController do
  use {mod}Web, :controller

  alias {mod}.Imports

  action_fallback {mod}Web.Api.FallbackController

  def index(conn, params) do
    imports = Imports.list_imports(conn.assigns.current_account, params)
    render(conn, :index, imports: imports)
  end

  def show(conn, %{{"id" => id}}) do
    with {{:ok, imp}} <- Imports.fetch_import(conn.assigns.current_account, id) do
      render(conn, :show, import: imp)
    end
  end
end"""


def _router(app: str, e: _Entity) -> str:
    mod = camel(app)
    return f"""defmodule {mod}Web.Router do
  use {mod}Web, :router

  import Phoenix.LiveDashboard.Router

  pipeline :browser do
    plug :accepts, ["html"]
    plug :fetch_session
    plug :fetch_live_flash
    plug :put_root_layout, html: {{{mod}Web.Layouts, :root}}
    plug :protect_from_forgery
    plug :put_secure_browser_headers
    plug {mod}Web.Plugs.SessionAccount
  end

  pipeline :api do
    plug :accepts, ["json"]
    plug {mod}Web.Plugs.ApiToken
  end

  scope "/", {mod}Web do
    pipe_through :browser

    get "/", PageController, :home
    resources "/{e.plural}", {e.schema}Controller, only: [:index, :new, :create, :show]
  end

  scope "/api", {mod}Web.Api do
    pipe_through :api

    get "/imports", ImportController, :index
    get "/imports/:id", ImportController, :show
  end

  if Application.compile_env(:{app}, :dev_routes) do
    scope "/dev" do
      pipe_through :browser

      live_dashboard "/dashboard", metrics: {mod}Web.Telemetry
    end
  end
end"""


def _schema(app: str, e: _Entity) -> str:
    mod = camel(app)
    a, b, c, d = e.columns
    return f'''defmodule {mod}.{e.context}.{e.schema} do
  use Ecto.Schema
  import Ecto.Changeset

  schema "{e.plural}" do
    field :{a}, :string
    field :{b}, :string
    field :{c}, :string
    field :{d}, :string

    belongs_to :account, {mod}.Accounts.Account
    timestamps(type: :utc_datetime)
  end

  @required ~w({a} {b})a

  def changeset({e.singular}, attrs) do
    {e.singular}
    |> cast(attrs, [:{a}, :{b}, :{c}, :{d}])
    |> validate_required(@required)
    |> validate_length(:{a}, max: 120)
    |> unique_constraint([:account_id, :{e.key}])
  end
end'''


def _imports_context(app: str) -> str:
    mod = camel(app)
    return f"""defmodule {mod}.Imports do
  @moduledoc "Import records: who uploaded what, and how far it got."

  import Ecto.Query

  alias {mod}.Imports.Import
  alias {mod}.Repo

  def list_imports(account, params) do
    Import
    |> where(account_id: ^account.id)
    |> order_by(desc: :inserted_at)
    |> Repo.paginate(params)
  end

  def fetch_import(account, id) do
    case Repo.get_by(Import, account_id: account.id, id: id) do
      nil -> {{:error, :not_found}}
      imp -> {{:ok, imp}}
    end
  end

  def get_import!(id), do: Repo.get!(Import, id)
end"""


def _csv_rows(app: str, e: _Entity) -> str:
    mod = camel(app)
    return f'''defmodule {mod}.Imports.CsvRows do
  @moduledoc """
  Streams an uploaded CSV as `{{line, attrs}}` pairs, header names mapped to fields.
  """

  NimbleCSV.define({mod}.Imports.CsvRows.Parser, separator: ",", escape: "\\"")

  alias {mod}.Imports.CsvRows.Parser

  @fields ~w({" ".join(e.columns)})

  def stream(path) do
    [header] =
      path |> File.stream!() |> Enum.take(1) |> Parser.parse_enumerable(skip_headers: false)
    keys = Enum.map(header, &normalize/1)

    path
    |> File.stream!()
    |> Parser.parse_stream()
    |> Stream.with_index(2)
    |> Stream.map(fn {{values, line}} -> {{line, to_attrs(keys, values)}} end)
  end

  defp to_attrs(keys, values) do
    keys |> Enum.zip(values) |> Map.new() |> Map.take(@fields)
  end

  defp normalize(name), do: name |> String.trim() |> String.downcase()
end'''


def _csv_rows_test(app: str, e: _Entity, bom_test: str) -> str:
    mod = camel(app)
    a, b, _, _ = e.columns
    s0 = e.samples[0]
    return f'''defmodule {mod}.Imports.CsvRowsTest do
  use ExUnit.Case, async: true

  alias {mod}.Imports.CsvRows

  @moduletag :tmp_dir

  defp csv!(dir, body) do
    path = Path.join(dir, "upload.csv")
    File.write!(path, body)
    path
  end

  test "maps header names to fields", %{{tmp_dir: dir}} do
    path = csv!(dir, "{a},{b}\\n{s0},first\\n")
    assert [{{2, %{{"{a}" => "{s0}", "{b}" => "first"}}}}] = Enum.to_list(CsvRows.stream(path))
  end

  test "{bom_test}", %{{tmp_dir: dir}} do
    path = csv!(dir, "\\uFEFF{a},{b}\\n{s0},first\\n")
    [{{_line, attrs}}] = Enum.to_list(CsvRows.stream(path))
    assert attrs["{a}"] == "{s0}"
  end

  test "drops columns it does not know", %{{tmp_dir: dir}} do
    path = csv!(dir, "{a},colour\\n{s0},red\\n")
    assert [{{2, %{{"{a}" => "{s0}"}} = attrs}}] = Enum.to_list(CsvRows.stream(path))
    refute Map.has_key?(attrs, "colour")
  end
end'''


def _file_worker(app: str, e: _Entity, worker: str) -> str:
    mod = camel(app)
    return f"""defmodule {mod}.Imports.{worker} do
  @moduledoc "Imports one uploaded file, batch by batch."
  use Oban.Worker, queue: :imports, max_attempts: 3

  alias {mod}.{{{e.context}, Imports}}
  alias {mod}.Imports.CsvRows

  @batch_rows 500

  @impl Oban.Worker
  def perform(%Oban.Job{{args: %{{"import_id" => id}}}}) do
    imp = Imports.get_import!(id)

    imp.path
    |> CsvRows.stream()
    |> Stream.chunk_every(@batch_rows)
    |> Enum.each(fn batch ->
      {{:ok, _count}} = {e.context}.{e.upsert}(imp.account_id, Enum.map(batch, &elem(&1, 1)))
    end)

    Imports.mark_done(imp)
  end
end"""


def _file_worker_test(app: str, worker: str) -> str:
    mod = camel(app)
    return f"""defmodule {mod}.Imports.{worker}Test do
  use {mod}.DataCase, async: true
  use Oban.Testing, repo: {mod}.Repo

  alias {mod}.Imports.{worker}

  test "imports every row of the file" do
    imp = insert(:import, path: fixture_path("three_rows.csv"))
    assert :ok = perform_job({worker}, %{{import_id: imp.id}})
    assert Repo.reload!(imp).status == "completed"
  end

  test "marks the import done for a header-only file" do
    imp = insert(:import, path: fixture_path("header_only.csv"))
    assert :ok = perform_job({worker}, %{{import_id: imp.id}})
  end

  test "is enqueued on the imports queue" do
    assert {worker}.new(%{{import_id: 1}}).changes.queue == "imports"
  end
end"""


def _migration(app: str) -> str:
    mod = camel(app)
    return f"""defmodule {mod}.Repo.Migrations.AddChecksumAndRowErrorsToImports do
  use Ecto.Migration

  def change do
    alter table(:imports) do
      add :checksum, :string
      add :error_count, :integer, default: 0, null: false
    end

    create index(:imports, [:account_id, :checksum, :inserted_at])

    create table(:import_row_errors) do
      add :import_id, references(:imports, on_delete: :delete_all), null: false
      add :line, :integer, null: false
      add :messages, {{:array, :string}}, null: false, default: []

      timestamps(type: :utc_datetime, updated_at: false)
    end

    create index(:import_row_errors, [:import_id, :line])
  end
end"""


def _chunk_worker(app: str, e: _Entity, worker: str) -> str:
    mod = camel(app)
    return f'''defmodule {mod}.Imports.{worker} do
  @moduledoc """
  Writes one chunk of an import's rows. The controller enqueues one job per chunk, so a
  retry repeats only its own rows.
  """
  use Oban.Worker, queue: :imports, max_attempts: 5

  alias {mod}.{{{e.context}, Imports}}
  alias {mod}.{e.context}.{e.schema}

  @impl Oban.Worker
  def perform(%Oban.Job{{args: %{{"import_id" => id, "chunk" => index, "rows" => rows}}}}) do
    imp = Imports.get_import!(id)
    {{valid, invalid}} = rows |> Enum.reject(&is_blank_row/1) |> Enum.split_with(&valid?/1)

    {{:ok, _count}} = {e.context}.{e.upsert}(imp.account_id, Enum.map(valid, & &1["attrs"]))
    :ok = Imports.record_row_errors(imp, Enum.map(invalid, &row_error/1))
    Imports.chunk_done(imp, index)
  end

  @impl Oban.Worker
  def timeout(_job), do: to_timeout(minute: 2)

  def is_blank_row(%{{"attrs" => attrs}}), do: Enum.all?(attrs, fn {{_k, v}} -> v in [nil, ""] end)

  defp valid?(%{{"attrs" => attrs}}), do: {e.schema}.changeset(%{e.schema}{{}}, attrs).valid?

  defp row_error(%{{"line" => line, "attrs" => attrs}}) do
    changeset = {e.schema}.changeset(%{e.schema}{{}}, attrs)
    %{{line: line, messages: Enum.map(changeset.errors, fn {{f, {{m, _}}}} -> "#{{f}} #{{m}}" end)}}
  end
end'''


def _chunk_worker_test(app: str, e: _Entity, worker: str) -> str:
    mod = camel(app)
    a, b, _, _ = e.columns
    _, s1, s2 = e.samples
    return f'''defmodule {mod}.Imports.{worker}Test do
  use {mod}.DataCase, async: true
  use Oban.Testing, repo: {mod}.Repo

  alias {mod}.Imports.{worker}

  defp row(line, attrs), do: %{{"line" => line, "attrs" => attrs}}

  test "writes the valid rows of its chunk" do
    imp = insert(:import)
    rows = [
      row(2, %{{"{a}" => "{s1}", "{b}" => "one"}}),
      row(3, %{{"{a}" => "{s2}", "{b}" => "two"}})
    ]
    assert :ok = perform_job({worker}, %{{import_id: imp.id, chunk: 0, rows: rows}})
  end

  test "records a bad row with its line and keeps going" do
    imp = insert(:import)
    rows = [row(2, %{{"{a}" => ""}}), row(3, %{{"{a}" => "{s2}", "{b}" => "two"}})]
    assert :ok = perform_job({worker}, %{{import_id: imp.id, chunk: 0, rows: rows}})
    assert [%{{line: 2}}] = Repo.all({mod}.Imports.RowError)
  end

  test "skips blank rows" do
    assert {worker}.is_blank_row(row(4, %{{"{a}" => "", "{b}" => nil}}))
  end

  test "gives each chunk its own job" do
    assert {worker}.new(%{{import_id: 1, chunk: 3, rows: []}}).changes.args.chunk == 3
  end
end'''


# --- tool output ---------------------------------------------------------------------------------


def _mix_test(
    rng: random.Random,
    total: int,
    failures: Sequence[tuple[str, str, str, int, Sequence[str]]],
    *,
    compiled: str = "",
) -> str:
    """ExUnit's output: `failures` are (test name, module, file, line, body lines)."""
    seed = rng.randint(10000, 999999)
    out = []
    if compiled:
        out += [compiled, ""]
    out += [f"Running ExUnit with seed: {seed}, max_cases: 16", ""]
    passed = total - len(failures)
    chunks = [passed // (len(failures) + 1)] * (len(failures) + 1)
    chunks[-1] += passed - sum(chunks)
    out.append("." * chunks[0])
    for k, (name, module, file, line, body) in enumerate(failures, 1):
        out += ["", f"  {k}) test {name} ({module})", f"     {file}:{line}"]
        out += [f"     {b}" for b in body]
        out += ["." * chunks[k]]
    sync = rng.randint(2, 9) / 10
    total_s = round(sync + rng.randint(3, 19) / 10, 1)
    failed = len(failures)
    out += [
        f"Finished in {total_s} seconds ({round(total_s - sync, 1)}s async, {sync}s sync)",
        f"{total} tests, {failed} failure{'' if failed == 1 else 's'}",
        "",
        f"Randomized with seed {seed}",
    ]
    return "\n".join(out)


def _status(total: int, failed: int) -> str:
    return f"{total} tests, {failed} failure{'' if failed == 1 else 's'}"


# --- the story -----------------------------------------------------------------------------------


def write(seed: int, tokens: int) -> EvalSession:
    """One ocstory-style session of about `tokens` tokens."""
    rng = random.Random(f"{FAMILY}/{seed}")
    app = rng.choice(_APPS)
    mod = camel(app)
    user = rng.choice(_USERS)
    root = f"/home/{user}/src/{app}"
    e = rng.choice(_ENTITIES)
    dep, dep_reason = rng.choice(_FORBIDDEN)
    elixir, otp = rng.choice(_RUNTIMES)
    cap1, cap2, cap3 = rng.choice(_CAPS)
    win1, win_change, win2 = rng.choice(_WINDOWS)
    inline, file_worker, chunk_worker = rng.choice(_DESIGNS)
    legacy = rng.choice(_LEGACY)
    open_test = rng.choice(_OPEN_TESTS)
    bom_test = rng.choice(_BOM_TESTS)
    last = rng.choice(_LAST)
    commit = hexid(rng)
    while commit.isdigit() or commit.isalpha():
        commit = hexid(rng)
    wip = hexid(rng)
    stamp = (
        f"2026111{rng.randint(0, 9)}{rng.randint(10, 23)}{rng.randint(10, 59)}{rng.randint(10, 59)}"
    )
    base = rng.randint(38, 71)

    web = f"lib/{app}_web"
    html_ctrl = f"{web}/controllers/{e.singular}_controller.ex"
    api_ctrl = f"{web}/controllers/api/import_controller.ex"
    router = f"{web}/router.ex"
    imports_ex = f"lib/{app}/imports.ex"
    schema_ex = f"lib/{app}/{e.context.lower()}/{e.singular}.ex"
    csv_ex = f"lib/{app}/imports/csv_rows.ex"
    csv_test = f"test/{app}/imports/csv_rows_test.exs"
    file_ex = f"lib/{app}/imports/{_snake(file_worker)}.ex"
    file_test = f"test/{app}/imports/{_snake(file_worker)}_test.exs"
    chunk_ex = f"lib/{app}/imports/{_snake(chunk_worker)}.ex"
    chunk_test = f"test/{app}/imports/{_snake(chunk_worker)}_test.exs"
    migration = f"priv/repo/migrations/{stamp}_add_checksum_and_row_errors_to_imports.exs"
    legacy_dir = f"lib/{app}/{legacy}"
    docs_todo = "Document the endpoint in docs/api/imports.md"
    tests_todo = "Tests for the import flow"
    route_todo = "Add POST /api/imports route and ImportController.create"
    rows_todo = f"Parse the CSV and write {e.plural.replace('_', ' ')}"
    guard_todo = "Reject oversized uploads (413) and return the existing import for re-uploads"
    dash_todo = "Add import counters to the LiveDashboard metrics page"
    a_col, b_col, _, _ = e.columns

    system = "\n".join(
        [
            "You are opencode, an interactive CLI agent that helps users with software "
            "engineering tasks. Use the instructions below and the tools available to you to "
            "assist the user.",
            "",
            "Keep going until the user's query is completely resolved before ending your turn. "
            "Only stop when you are sure the problem is solved and every item on your todo "
            "list is checked off. Use the todowrite tool to plan multi-step work and update it "
            "as you go; mark items completed as soon as they are done.",
            "",
            "Read a file before you edit it. Prefer the edit tool for changes to existing "
            "files and the write tool for new ones; always use absolute paths. Use bash for "
            "running tests, builds and git; do not use it to read or search files when read, "
            "grep, glob or list can. Use the task tool with the explore agent for open-ended "
            "searches across the codebase.",
            "",
            "Be concise. Do not add comments to code unless asked. Never commit unless the "
            "user asks you to.",
            "",
            "Here is some useful information about the environment you are running in:",
            "<env>",
            f"  Working directory: {root}",
            "  Is directory a git repo: yes",
            "  Platform: linux",
            f"  Today's date: {rng.choice(_DATES)}",
            "</env>",
            "<files>",
            "  ",
            "</files>",
            f"Instructions from: {root}/AGENTS.md",
            f"# {mod}",
            "",
            "- Phoenix app, Postgres via Ecto, background jobs in Oban (queues in "
            "config/config.exs).",
            "- Run `mix format` on anything you change and `mix credo --strict` before you say "
            "you are done.",
            "- Tests: `mix test` (needs Postgres on localhost:5432; the alias migrates first).",
            "- Contexts live in lib/<app>/<context>.ex; web code in lib/<app>_web.",
        ]
    )
    session = Session(rng=rng, system=system)
    oc = _OpenCode(session, root, int(tokens * CHARS_PER_TOKEN))
    s = session

    # 1. The task, its rules and its values.
    s.user(
        f"We need CSV imports for {e.plural.replace('_', ' ')} in {mod}. An account uploads a "
        f"CSV through the JSON API and the rows end up in the {e.plural} table, upserted on "
        f"(account_id, {e.key}).\n\n"
        f"Some ground rules. No {dep} — {dep_reason}; background work goes through Oban, "
        f"which is already in the app. It has to build on Elixir {elixir} with {otp}; that's "
        "what the release image pins, so nothing newer than that. The upload endpoint "
        "answers 202 Accepted with the import id straight away; row problems show up later "
        "on the import itself, never in the upload response.\n\n"
        f"Cap uploads at {cap1}. And if the same file comes in again from the same account "
        f"within {win1}, hand back the import we already have instead of starting another "
        "one — people double-click."
    )
    s.fact("constraint", f"No {dep}: background work goes through Oban only", [dep])
    s.fact(
        "constraint",
        f"Must build on Elixir {elixir} with {otp} (the release image's pins)",
        [f"Elixir {elixir}", otp],
    )
    s.fact(
        "constraint",
        "The upload endpoint answers 202 Accepted with the import id; row problems never in it",
        ["202 Accepted"],
    )
    oc.read(
        "mix.exs",
        _mix_exs(app, elixir),
        text="Let me look at the project first.",
    )
    oc.pad(0.06, app)
    oc.list_dir(
        f"{web}/controllers",
        {
            "": [f"{e.singular}_controller.ex", f"{e.singular}_html.ex", "page_controller.ex",
                 "error_json.ex", "error_html.ex"],
            "api": ["import_controller.ex", "import_json.ex", "fallback_controller.ex"],
            f"{e.singular}_html": ["index.html.heex", "new.html.heex", "show.html.heex"],
        },
    )  # fmt: skip
    html = _html_controller(app, e)
    oc.read(html_ctrl, html)
    old_new = "  def new(conn, _params) do"
    oc.edit(
        html_ctrl,
        old_new,
        '  def upload(conn, %{"file" => %Plug.Upload{} = upload}) do\n'
        f"    {e.context}.import_csv(conn.assigns.current_account, upload.path)\n"
        f'    redirect(conn, to: ~p"/{e.plural}")\n'
        "  end\n\n" + old_new,
        text=f"The {e.schema} controller is where {e.plural.replace('_', ' ')} are created, "
        "so I'll add an upload action next to `create`.",
    )

    # 2. Wrong place: the user sends it to the API's import controller.
    s.user(
        f"That's the HTML {e.schema}Controller — wrong place, and please undo that. Uploads "
        f"go through the JSON API: {api_ctrl}. It already has index and show for imports."
    )
    s.fact(
        "file_modified",
        f"The upload action goes in {api_ctrl} (not the HTML controller)",
        [api_ctrl],
        stale=[html_ctrl],
    )
    oc.edit(
        html_ctrl,
        '  def upload(conn, %{"file" => %Plug.Upload{} = upload}) do\n'
        f"    {e.context}.import_csv(conn.assigns.current_account, upload.path)\n"
        f'    redirect(conn, to: ~p"/{e.plural}")\n'
        "  end\n\n" + old_new,
        old_new,
        text="Reverted. Looking at the API controller and the router.",
    )
    oc.read(api_ctrl, _api_controller(app))
    oc.read(router, _router(app, e))
    oc.pad(0.12, app)

    # 3. The explore sub-agent finds the account plug and the bulk upsert.
    report = (
        "Findings:\n\n"
        f"1. Account for /api requests: the `:api` pipeline in {router} runs "
        f"`{mod}Web.Plugs.ApiToken` ({web}/plugs/api_token.ex). It reads the bearer token, "
        f"calls `{mod}.Accounts.fetch_by_api_token/1` (lib/{app}/accounts.ex:88) and assigns "
        "`conn.assigns.current_account`. Nothing else is needed in the controller.\n\n"
        f"2. Bulk write: yes — `{mod}.{e.context}.{e.upsert}/2` in "
        f"lib/{app}/{e.context.lower()}.ex:141. It takes an account id and a list of attribute "
        "maps with string keys, stamps account_id/timestamps and runs `Repo.insert_all` with "
        "`on_conflict: {:replace_all_except, [:id, :inserted_at]}` and "
        f"`conflict_target: [:account_id, :{e.key}]`, returning `{{:ok, count}}`. It does not "
        "validate — callers are expected to pass rows that already passed the changeset.\n\n"
        f"3. The only caller of it today is the admin's old importer. `{mod}.Imports` "
        f"({imports_ex}) has list/fetch/get for import records, nothing that writes rows."
    )
    oc.task(
        f"Find account scoping and bulk {e.singular} writes",
        f"In {root}, find (1) how requests under the /api scope get their account: which plug, "
        f"which lookup function, what it assigns; (2) whether {mod}.{e.context} already has a "
        f"bulk insert or upsert for {e.plural} that an importer could reuse, with its "
        "signature and conflict handling. Report function names with file paths and line "
        "numbers. Do not modify anything.",
        report,
        text="I'll have an explore agent map the account plug and any existing bulk write.",
    )
    s.fact(
        "identifier",
        f"The existing bulk write to reuse: {mod}.{e.context}.{e.upsert}/2",
        [e.upsert],
    )
    oc.read(schema_ex, _schema(app, e))
    s.fact("file_read", f"Read the schema {schema_ex}", [schema_ex])
    oc.pad(0.17, app)

    # 4. The to-do list, and the first design: rows inserted inside the request.
    todos = [
        [route_todo, "in_progress", "high"],
        [rows_todo, "pending", "high"],
        [guard_todo, "pending", "medium"],
        [dash_todo, "pending", "low"],
        [tests_todo, "pending", "medium"],
    ]

    def plan(text: str = "") -> None:
        oc.todowrite([(c, st, p) for c, st, p in todos], text=text)

    plan()
    s.say(
        f"Plan: `POST /api/imports` → `ImportController.create/2`. The controller parses the "
        f"upload with NimbleCSV and writes the rows in the same request through a new "
        f"`Imports.{inline}/3`, which casts each row with `{e.schema}.changeset/2` and calls "
        f"`{e.context}.{e.upsert}/2` in batches of 500 inside one transaction, then answers "
        "202 with the import id. Shall I go ahead?"
    )

    # 5. Rejected: background it, one Oban job per file.
    s.user(
        f"Not in the request. A file near the cap takes far longer than the load balancer "
        f"lets a request live. Store the upload, create the import record and enqueue one "
        f"Oban job for the file — call it {file_worker} — that streams it and writes the "
        "rows batch by batch. The controller only answers 202."
    )
    s.say(
        f"Right — no `{inline}`. The controller stores the upload and enqueues one "
        f"{file_worker} per file; the worker streams the CSV and writes batches of 500."
    )
    oc.edit(
        router,
        '    get "/imports/:id", ImportController, :show\n',
        '    get "/imports/:id", ImportController, :show\n'
        '    post "/imports", ImportController, :create\n',
    )
    s.fact("file_modified", f"Added the POST /imports route to {router}", [router])
    oc.edit(
        api_ctrl,
        "  action_fallback " + f"{mod}Web.Api.FallbackController\n",
        f"  action_fallback {mod}Web.Api.FallbackController\n\n"
        f"  alias {mod}.Imports.{file_worker}\n\n"
        f"  @max_bytes {cap1.split()[0]} * 1024 * 1024\n"
        f"  @duplicate_window_seconds {win1.split()[0]}\n\n"
        '  def create(conn, %{"file" => %Plug.Upload{} = upload}) do\n'
        "    account = conn.assigns.current_account\n\n"
        "    with :ok <- check_size(upload),\n"
        "         {:ok, imp, :new} <- Imports.create_or_reuse(account, upload, "
        "@duplicate_window_seconds) do\n"
        f"      Oban.insert!({file_worker}.new(%{{import_id: imp.id}}))\n\n"
        "      conn\n"
        "      |> put_status(:accepted)\n"
        '      |> json(%{import_id: imp.id, status: "queued"})\n'
        "    else\n"
        "      {:ok, imp, :existing} ->\n"
        "        conn\n"
        "        |> put_status(:accepted)\n"
        "        |> json(%{import_id: imp.id, status: imp.status})\n\n"
        "      {:error, :too_large} ->\n"
        "        conn\n"
        "        |> put_status(:request_entity_too_large)\n"
        '        |> json(%{error: "file too large"})\n'
        "    end\n"
        "  end\n\n"
        "  defp check_size(%Plug.Upload{path: path}) do\n"
        "    if File.stat!(path).size <= @max_bytes, do: :ok, else: {:error, :too_large}\n"
        "  end\n",
        text=f"Controller: size check against {cap1}, re-uploads within {win1} get the "
        "existing import back, else enqueue.",
    )
    oc.glob(
        "**/*import*.ex",
        [f"lib/{app}/imports/import.ex", api_ctrl, f"{web}/controllers/api/import_json.ex"],
    )
    imports_src = _imports_context(app)
    oc.read(imports_ex, imports_src)
    oc.edit(
        imports_ex,
        "  def get_import!(id), do: Repo.get!(Import, id)\n",
        "  def get_import!(id), do: Repo.get!(Import, id)\n\n"
        "  def create_or_reuse(account, %Plug.Upload{} = upload, window_seconds) do\n"
        "    checksum =\n"
        "      upload.path\n"
        "      |> File.stream!(2048)\n"
        "      |> Enum.reduce(:crypto.hash_init(:sha256), &:crypto.hash_update(&2, &1))\n"
        "      |> :crypto.hash_final()\n"
        "      |> Base.encode16(case: :lower)\n\n"
        "    since = DateTime.add(DateTime.utc_now(), -window_seconds)\n\n"
        "    Import\n"
        "    |> where(account_id: ^account.id, checksum: ^checksum)\n"
        "    |> where([i], i.inserted_at >= ^since)\n"
        "    |> first(:inserted_at)\n"
        "    |> Repo.one()\n"
        "    |> case do\n"
        "      nil ->\n"
        "        with {:ok, imp} <- insert_import(account, upload, checksum),\n"
        "             do: {:ok, imp, :new}\n\n"
        "      imp -> {:ok, imp, :existing}\n"
        "    end\n"
        "  end\n",
    )
    s.fact("file_modified", f"Added create_or_reuse/3 to {imports_ex}", [imports_ex])
    oc.pad(0.24, app)
    oc.write(csv_ex, _csv_rows(app, e))
    s.fact("file_created", f"Created the CSV reader {csv_ex}", [csv_ex])
    oc.write(file_ex, _file_worker(app, e, file_worker))
    oc.write(csv_test, _csv_rows_test(app, e, bom_test))
    oc.write(file_test, _file_worker_test(app, file_worker))
    todos[0][1] = "completed"
    todos[1][1] = "in_progress"
    plan()
    oc.pad(0.29, app)

    # 6. The first test run: the BOM test fails, and is fixed.
    first_total = base + 6
    bom_body = [
        "Assertion with == failed",
        f'code:  assert attrs["{a_col}"] == "{e.samples[0]}"',
        "left:  nil",
        f'right: "{e.samples[0]}"',
        "stacktrace:",
        f"  {csv_test}:27: (test)",
    ]
    oc.bash(
        "mix test",
        "Runs the test suite",
        _mix_test(
            rng,
            first_total,
            [(bom_test, f"{mod}.Imports.CsvRowsTest", csv_test, 22, bom_body)],
            compiled=f"Compiling 4 files (.ex)\nGenerated {app} app",
        ),
        timeout=300000,
    )
    s.fact(
        "error_resolved",
        f"The BOM test failed (header key kept the byte-order mark); fixed in {csv_ex}",
        [bom_test],
        required=False,
    )
    oc.edit(
        csv_ex,
        "  defp normalize(name), do: name |> String.trim() |> String.downcase()",
        '  defp normalize("\\uFEFF" <> name), do: normalize(name)\n'
        "  defp normalize(name), do: name |> String.trim() |> String.downcase()",
        text="Excel's BOM stays glued to the first header name, so that column never maps. "
        "Stripping it in `normalize/1`.",
    )
    oc.bash(
        "mix test",
        "Runs the test suite",
        _mix_test(rng, first_total, [], compiled=f"Compiling 1 file (.ex)\nGenerated {app} app"),
        timeout=300000,
    )
    s.say(
        "Green again. One open question before the rows go further: when a row fails "
        f"validation (say an empty {a_col}), should the whole import fail, or should bad "
        "rows be skipped and reported?"
    )

    # 7. Decision: bad rows are skipped and kept in a table.
    s.user(
        "Skip them and keep going. Put each bad row in an import_row_errors table — the "
        "line number and the validation messages — and count them on the import. Also, "
        f"ops say the nightly feeds are bigger than I thought: raise the upload cap to {cap2}."
    )
    s.fact(
        "decision",
        "Bad rows are skipped and recorded in import_row_errors (line, messages), counted "
        "on the import",
        ["import_row_errors"],
    )
    oc.write(migration, _migration(app))
    s.fact("file_created", f"Created the migration {migration}", [migration])
    oc.edit(
        api_ctrl,
        f"  @max_bytes {cap1.split()[0]} * 1024 * 1024",
        f"  @max_bytes {cap2.split()[0]} * 1024 * 1024",
    )
    s.say(
        f"Migration added (checksum and error_count on imports, plus import_row_errors), and "
        f"the cap is {cap2} now."
    )
    oc.pad(0.36, app)

    # 8. A work-in-progress commit, then the old importer's directory is put off limits.
    s.user("Commit what you have so it's not all in one blob later.")
    oc.bash(
        f"git add -A && git commit -m 'Add CSV import endpoint and {file_worker}'",
        "Commits the work in progress",
        f"[feature/csv-imports {wip}] Add CSV import endpoint and {file_worker}\n"
        " 8 files changed, 231 insertions(+), 2 deletions(-)\n"
        f" create mode 100644 {csv_ex}\n"
        f" create mode 100644 {file_ex}\n"
        f" create mode 100644 {migration}\n"
        f" create mode 100644 {csv_test}\n"
        f" create mode 100644 {file_test}",
    )
    oc.grep(
        "NimbleCSV",
        [
            (f"{legacy_dir}/parser.ex", 3, "NimbleCSV.define(Parser, separator: \",\")"),
            (f"{legacy_dir}/header_map.ex", 12, "# used by Parser; NimbleCSV leaves quotes in"),
            (csv_ex, 6, f'NimbleCSV.define({mod}.Imports.CsvRows.Parser, separator: ",", '
                        'escape: "\\"")'),
        ],
        under="lib",
        text="Checking whether something in the app already normalizes CSV headers.",
    )  # fmt: skip
    s.say(
        f"The old importer has `HeaderMap.canonical/1` in {legacy_dir}/header_map.ex, which "
        "also maps header aliases. It's private; I could make it public and call it "
        "from CsvRows instead of keeping a second copy."
    )
    s.user(
        f"No. Don't touch anything under {legacy_dir}/ — the admin's old importer still runs "
        "from there until the migration is signed off, and I don't want it changing under "
        "them. Copy what you need."
    )
    s.fact(
        "constraint",
        f"Do not touch anything under {legacy_dir}/ (the admin's old importer)",
        [legacy_dir],
    )
    s.say(f"Understood — {legacy_dir}/ stays as it is; CsvRows keeps its own header handling.")
    oc.pad(0.43, app)

    # 9. Second reversal: one job per chunk; the file worker goes.
    s.user(
        f"Thinking about retries: if the {file_worker} dies halfway through a big file, Oban "
        "retries the whole file from the first row. Let's not have file-sized jobs at all. "
        "The controller streams the upload into chunks of 1,000 rows and enqueues one "
        f"{chunk_worker} job per chunk with Oban.insert_all; each job writes its own rows, "
        f"so a retry only repeats that chunk. Drop the {file_worker}."
    )
    s.fact(
        "decision",
        f"One {chunk_worker} job per chunk of 1,000 rows, enqueued by the controller with "
        f"Oban.insert_all (not rows in the request, not one job per file)",
        [chunk_worker],
        stale=[inline, file_worker],
    )
    oc.bash(
        f"git rm {file_ex} {file_test}",
        f"Removes the {file_worker} and its test",
        f"rm '{file_ex}'\nrm '{file_test}'",
        text=f"Switching to one job per chunk. First the {file_worker} goes.",
    )
    s.fact("file_deleted", f"Removed {file_ex} with git rm", [file_ex])
    oc.write(chunk_ex, _chunk_worker(app, e, chunk_worker))
    s.fact("file_created", f"Created {chunk_ex}", [chunk_ex])
    oc.write(chunk_test, _chunk_worker_test(app, e, chunk_worker))
    oc.edit(
        api_ctrl,
        f"  alias {mod}.Imports.{file_worker}\n",
        f"  alias {mod}.Imports.{{CsvRows, {chunk_worker}}}\n\n  @chunk_rows 1_000\n",
    )
    oc.edit(
        api_ctrl,
        f"      Oban.insert!({file_worker}.new(%{{import_id: imp.id}}))\n",
        "      upload.path\n"
        "      |> CsvRows.stream()\n"
        "      |> Stream.chunk_every(@chunk_rows)\n"
        "      |> Stream.with_index()\n"
        "      |> Enum.map(fn {rows, index} ->\n"
        f"        {chunk_worker}.new(%{{import_id: imp.id, chunk: index, rows: "
        'Enum.map(rows, fn {line, attrs} -> %{"line" => line, "attrs" => attrs} end)})\n'
        "      end)\n"
        "      |> Oban.insert_all()\n",
    )
    oc.pad(0.5, app)

    # 10. A compile error (to_timeout/1 is newer than the pinned Elixir), then Credo.
    line = 24
    if elixir == "1.16":
        compile_error = (
            "Compiling 3 files (.ex)\n"
            "error: undefined function to_timeout/1 (expected "
            f"{mod}.Imports.{chunk_worker} to define such a function or for it to be imported, "
            "but none are available)\n"
            "    │\n"
            f" {line} │   def timeout(_job), do: to_timeout(minute: 2)\n"
            "    │                          ^^^^^^^^^^\n"
            "    │\n"
            f"    └─ {chunk_ex}:{line}:26: {mod}.Imports.{chunk_worker}.timeout/1\n\n\n"
            f"== Compilation error in file {chunk_ex} ==\n"
            f"** (CompileError) {chunk_ex}: cannot compile module {mod}.Imports.{chunk_worker} "
            "(errors have been logged)"
        )
    else:
        compile_error = (
            "Compiling 3 files (.ex)\n"
            "error: undefined function to_timeout/1 (expected "
            f"{mod}.Imports.{chunk_worker} to define such a function or for it to be imported, "
            "but none are available)\n"
            f"  {chunk_ex}:{line}: {mod}.Imports.{chunk_worker}.timeout/1\n\n"
            f"** (CompileError) {chunk_ex}: cannot compile module {mod}.Imports.{chunk_worker} "
            "(errors have been logged)"
        )
    oc.bash("mix compile --warnings-as-errors", "Compiles the project", compile_error)
    s.fact(
        "error_resolved",
        "Compile error: undefined function to_timeout/1 (Elixir 1.17+); replaced with "
        ":timer.minutes/1",
        ["undefined function to_timeout/1"],
        required=False,
    )
    oc.edit(
        chunk_ex,
        "  def timeout(_job), do: to_timeout(minute: 2)",
        "  def timeout(_job), do: :timer.minutes(2)",
        text=f"`to_timeout/1` only arrived in Elixir 1.17; on {elixir} it's `:timer.minutes/1`.",
    )
    oc.bash(
        "mix compile --warnings-as-errors",
        "Compiles the project",
        f"Compiling 3 files (.ex)\nGenerated {app} app",
    )
    n_files = rng.randint(110, 190)
    credo = (
        f"Checking {n_files} source files (this might take a while) ...\n\n"
        "  Code Readability\n"
        "┃ \n"
        "┃ [R] → Predicate function names should not start with 'is', and should end in a "
        "question mark.\n"
        f"┃       {chunk_ex}:27:7 #({mod}.Imports.{chunk_worker}.is_blank_row)\n\n"
        "Please report incorrect results: https://github.com/rrrene/credo/issues\n\n"
        f"Analysis took 1.{rng.randint(0, 9)} seconds (0.0{rng.randint(4, 9)}s to load, "
        f"1.{rng.randint(0, 9)}s running 66 checks on {n_files} files)\n"
        f"{rng.randint(700, 1400)} mods/funs, found 1 code readability issue.\n\n"
        "Use `mix credo explain` to explain issues, `mix credo --help` for options."
    )
    oc.bash("mix credo --strict", "Runs Credo in strict mode", credo)
    s.fact(
        "error_resolved",
        "Credo: predicate name is_blank_row renamed to blank_row?",
        ["is_blank_row"],
        required=False,
    )
    oc.edit(chunk_ex, "is_blank_row", "blank_row?", replace_all=True)
    oc.edit(chunk_test, "is_blank_row", "blank_row?", replace_all=True)
    mid_total = first_total - 3 + 4
    oc.bash(
        "mix test",
        "Runs the test suite",
        _mix_test(rng, mid_total, [], compiled=f"Compiling 2 files (.ex)\nGenerated {app} app"),
        timeout=300000,
    )
    todos[1][1] = "completed"
    todos[2][1] = "in_progress"
    plan()
    oc.pad(0.58, app)

    # 11. The window, changed without naming it.
    s.user(
        f"{win1} is too short for the double-click thing — people hit upload again when the "
        f"spinner gives up. {win_change[0].upper() + win_change[1:]}."
    )
    oc.edit(
        api_ctrl,
        f"  @duplicate_window_seconds {win1.split()[0]}",
        f"  @duplicate_window_seconds {win2.split()[0]}",
    )
    s.say(f"Done: a re-upload of the same file within {win2} now returns the existing import.")
    s.fact(
        "changed_value",
        f"Re-uploads of the same file within {win2} return the existing import",
        [win2],
        stale=[win1],
    )
    oc.pad(0.65, app)

    # 12. A question answered with a value.
    s.user(
        f"Unrelated, for the release notes: which commit added the unique index on "
        f"{e.plural} (account_id, {e.key})?"
    )
    index_name = f"{e.plural}_account_id_{e.key}_index"
    oc.bash(
        f'git log --oneline -S "{index_name}" -- priv/repo/migrations',
        "Finds the commit that added the unique index",
        f"{commit} Add unique index on {e.plural} (account_id, {e.key})",
    )
    s.say(f'It\'s {commit} — "Add unique index on {e.plural} (account_id, {e.key})".')
    s.fact(
        "identifier",
        f"The commit that added the unique index on {e.plural}: {commit}",
        [commit],
    )
    oc.pad(0.72, app)

    # 13. The to-do list moves: the dashboard item cancelled, a docs item added.
    s.user(
        "Drop the LiveDashboard counters, ops watch imports in Grafana already. And put "
        "documenting the endpoint in docs/api/imports.md on the list — not now, later."
    )
    todos[3][1] = "cancelled"
    todos[2][1] = "completed"
    todos[4][1] = "in_progress"
    todos.append([docs_todo, "pending", "low"])
    plan(text="Updated the list.")
    s.fact(
        "todo",
        "Still to do: document the endpoint in docs/api/imports.md (pending)",
        ["docs/api/imports.md"],
    )
    oc.pad(0.82, app)

    # 14. The cap settles.
    s.user(
        f"One more thing on size: the ingress in front of us has a lower body limit than "
        f"that, so {cap2} can't work. Come down to {cap3}."
    )
    oc.edit(
        api_ctrl,
        f"  @max_bytes {cap2.split()[0]} * 1024 * 1024",
        f"  @max_bytes {cap3.split()[0]} * 1024 * 1024",
    )
    s.say(f"Cap set to {cap3}; larger uploads get a 413.")
    s.fact(
        "changed_value",
        f"The upload cap is {cap3} (larger files get a 413)",
        [cap3],
        stale=[cap1, cap2],
    )
    oc.pad(0.975, app)

    # 15. A test for quoted newlines, which stays red.
    oc.edit(
        csv_test,
        '  test "drops columns it does not know", %{tmp_dir: dir} do',
        f'  test "{open_test}", %{{tmp_dir: dir}} do\n'
        f'    path = csv!(dir, "{a_col},{b_col}\\n{e.samples[1]},\\"two\\nlines\\"\\n'
        f'{e.samples[2]},x\\n")\n'
        "    assert [{2, _}, {4, _}] = Enum.to_list(CsvRows.stream(path))\n"
        "  end\n\n"
        '  test "drops columns it does not know", %{tmp_dir: dir} do',
        text="Error rows report a line number, so a quoted cell spanning two lines must not "
        "shift the rows after it. Adding a test for that.",
    )
    final_total = mid_total + 1
    open_body = [
        "match (=) failed",
        "code:  assert [{2, _}, {4, _}] = Enum.to_list(CsvRows.stream(path))",
        "left:  [{2, _}, {4, _}]",
        f'right: [{{2, %{{"{a_col}" => "{e.samples[1]}", "{b_col}" => "two\\nlines"}}}}, '
        f'{{3, %{{"{a_col}" => "{e.samples[2]}", "{b_col}" => "x"}}}}]',
        "stacktrace:",
        f"  {csv_test}:40: (test)",
    ]
    oc.bash(
        "mix test",
        "Runs the test suite",
        _mix_test(
            rng,
            final_total,
            [(open_test, f"{mod}.Imports.CsvRowsTest", csv_test, 37, open_body)],
        ),
        timeout=300000,
    )
    s.fact(
        "error_open",
        f'Still failing: the CsvRows test "{open_test}" (Stream.with_index counts records, '
        "not source lines)",
        [open_test],
    )
    s.fact(
        "test_status",
        f"Last mix test: {_status(final_total, 1)}",
        [_status(final_total, 1)],
        stale=[_status(first_total, 1), _status(first_total, 0), _status(mid_total, 0)],
    )
    s.say(
        "That one fails: `Stream.with_index/2` numbers parsed records, so a quoted cell "
        "with a newline shifts every later row by one. CsvRows would have to track the "
        "source line of each record itself."
    )
    s.fact(
        "todo",
        f"In progress: {tests_todo}",
        [tests_todo],
    )
    s.fact("todo", f"Done: {route_todo}", [route_todo], required=False)

    # 16. The user stops; the last message names nothing.
    s.user("Let's stop here for today.")
    s.say(last)
    s.fact("last_message", "The session's last assistant message", [last])
    return finish_session(session, family=FAMILY, seed=seed)
