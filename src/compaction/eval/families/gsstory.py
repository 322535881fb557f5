"""gsstory-style: a goose session in native function calls, with a story of its own.

Block's goose drives a Ruby on Rails service through its developer extension:
`developer__shell` {command}, answered with the command's output (stdout and stderr as
they came), and `developer__text_editor` {command, path, …} — `view` (answered with the
file's text), `write` {file_text} ("Successfully wrote to …"), `str_replace` {old_str,
new_str} ("The file … has been edited, and the section now reads: …"), `insert`
{insert_line, new_str} ("Text has been inserted at line N in …") and `undo_edit` ("Undid
the last edit"). The to-do list is the todo extension's `todo__todo_write` {content}, a
Markdown checklist, answered "Updated (N chars)". Paths are absolute.

The story: the outbound webhooks of a Rails app get a retry queue. The user's first message
sets the number of attempts and how long dead letters are kept, and three rules in prose (a
forbidden gem, a Ruby version, the admin retry endpoint's response). The assistant edits
the legacy dispatcher, is sent to the v2 one and undoes its edit; the retry design goes from
a polled column to ActiveJob's `retry_on` to an attempts table; the attempts change twice
(the second time without naming them), the retention once; the user forbids an engine's
directory, drops a to-do, and asks which commit added endpoint signing secrets (answered
from `git log -S`). An rspec failure, a syntax error and a RuboCop offense are fixed, the
old retry worker is removed with `git rm`, and the last rspec run still has one failure.
The final message names no fact.
"""

from __future__ import annotations

import random

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    Session,
    code_file,
    finish_session,
    hexid,
    ident,
    listing,
    log_lines,
)
from compaction.eval.sessions import EvalSession

FAMILY = "gsstory-style"

_SYSTEM = "\n".join(
    (
        "You are a general-purpose AI agent called goose, created by Block, the parent "
        "company of Square, CashApp, and Tidal. goose is being developed as an "
        "open-source software project.",
        "",
        "The current date is {date}.",
        "",
        "goose uses LLM providers with tool calling capability. You can be used with "
        "different language models (gpt-4o, claude-sonnet-4, o1, llama-3.2, deepseek-r1, "
        "etc). These models have varying knowledge cut-off dates depending on when they "
        "were trained, but typically it's between 5-10 months prior to the current date.",
        "",
        "# Extensions",
        "",
        "Extensions allow other applications to provide context to goose. Extensions "
        "connect goose to different data sources and tools. You are capable of "
        "dynamically plugging into new extensions and learning how to use them. You solve"
        " higher level problems using the tools in these extensions, and can interact "
        "with multiple at once.",
        "",
        "Because you dynamically load extensions, in your conversation history you may "
        "refer to interactions with extensions that are not currently active. The "
        "currently active extensions are below. Each of these extensions provides tools "
        "that are in your tool specification.",
        "",
        "## developer",
        "",
        "### Instructions",
        "The developer extension gives you the capabilities to edit code files and run "
        "shell commands, and can be used to solve a wide range of problems.",
        "",
        "You can use the shell tool to run any command that would work on the relevant "
        "operating system. Use the shell tool as needed to locate files or interact with "
        "the project.",
        "",
        "Your windows/screen tools can be used for visual debugging. You should not use "
        "these tools unless prompted to, but you can mention they are available if they "
        "are relevant.",
        "",
        "operating system: {os}",
        "current directory: {root}",
        "",
        "## todo",
        "",
        "### Instructions",
        "Your todo content is automatically available in your context.",
        "",
        "Workflow:",
        "- Start: write initial checklist",
        "- During: update progress",
        "- End: verify all complete",
        "",
        "# Response Guidelines",
        "",
        "- Use Markdown formatting for all responses.",
        "- Follow best practices for Markdown, including:",
        "  - Using headers for organization.",
        "  - Bullet points for lists.",
        "  - Links formatted correctly, either as linked text (e.g., [this is linked "
        "text](https://example.com)) or automatic links using angle brackets (e.g., "
        "<http://example.com/>).",
        "- For code examples, use fenced code blocks by placing triple backticks (` ``` "
        "`) before and after the code. Include the language identifier after the opening "
        "backticks (e.g., ` ```python `) to enable syntax highlighting.",
        "- Ensure clarity, conciseness, and proper formatting to enhance readability and "
        "usability.",
    )
)

_APPS = ("harbor", "pinecone", "tallyho", "marigold", "bramble", "kestrel")
_NAMESPACES = ("relay", "outbound", "fanout", "dispatchq", "hookline", "sender")
_GEMS = ("sidekiq", "resque", "sneakers", "que")
_RUBIES = ("3.1", "3.2")
_KEYS = ("queued_at", "enqueued_at", "retry_at", "scheduled_for")
_ENGINES = ("payments_core", "ledgerless", "partner_portal", "kyc_gate")
_OWNERS = ("the payments team", "platform", "the partner squad", "compliance")


class _Goose:
    """goose's developer and todo tools, as they appear in the chat."""

    def __init__(self, s: Session, root: str) -> None:
        self.s = s
        self.root = root

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def shell(self, command: str, output: str, *, text: str = "", filler: bool = False) -> None:
        self.s.call("developer__shell", {"command": command}, output, text=text, filler=filler)

    def view(self, rel: str, content: str, *, text: str = "", filler: bool = False) -> None:
        args = {"command": "view", "path": self.abs(rel)}
        self.s.call("developer__text_editor", args, content, text=text, filler=filler)

    def write(self, rel: str, content: str, *, text: str = "") -> None:
        args = {"command": "write", "path": self.abs(rel), "file_text": content}
        self.s.call("developer__text_editor", args, f"Successfully wrote to {self.abs(rel)}",
                    text=text)  # fmt: skip

    def replace(self, rel: str, old: str, new: str, *, text: str = "") -> None:
        args = {"command": "str_replace", "path": self.abs(rel), "old_str": old, "new_str": new}
        result = (
            f"The file {self.abs(rel)} has been edited, and the section now reads:\n"
            f"```ruby\n{new}\n```\n\n"
            "Review the changes above for errors. Undo and edit the file again if necessary!\n"
        )
        self.s.call("developer__text_editor", args, result, text=text)

    def insert(self, rel: str, line: int, new: str, *, text: str = "") -> None:
        args = {"command": "insert", "path": self.abs(rel), "insert_line": line, "new_str": new}
        numbered = "\n".join(f"{line + 1 + i}: {x}" for i, x in enumerate(new.split("\n")))
        result = (
            f"Text has been inserted at line {line + 1} in {self.abs(rel)}. The section now "
            f"reads:\n```ruby\n{numbered}\n```\n\n"
            "Review the changes above for errors. Undo and edit the file again if necessary!\n"
        )
        self.s.call("developer__text_editor", args, result, text=text)

    def undo(self, rel: str, *, text: str = "") -> None:
        args = {"command": "undo_edit", "path": self.abs(rel)}
        self.s.call("developer__text_editor", args, "Undid the last edit", text=text)

    def todo(self, items: list[tuple[str, str]], *, text: str = "") -> None:
        """Items (text, state): state done / open / dropped."""
        lines = []
        for item, state in items:
            if state == "done":
                lines.append(f"- [x] {item}")
            elif state == "dropped":
                lines.append(f"- [x] ~~{item}~~ (dropped)")
            else:
                lines.append(f"- [ ] {item}")
        content = "## Webhook retry queue\n" + "\n".join(lines) + "\n"
        self.s.call("todo__todo_write", {"content": content}, f"Updated ({len(content)} chars)",
                    text=text)  # fmt: skip


def _rspec(
    rng: random.Random, spec: str, total: int, failures: list[tuple[str, int, str, str, str]]
) -> str:
    """rspec's progress output: failures are (description, line, expectation, expected, got)."""
    dots = ["."] * total
    for k in rng.sample(range(total), len(failures)):
        dots[k] = "F"
    out = [f"Randomized with seed {rng.randint(10000, 65535)}", "".join(dots), ""]
    if failures:
        out += ["Failures:", ""]
        for n, (desc, line, expectation, expected, got) in enumerate(failures, 1):
            out += [
                f"  {n}) {desc}",
                f"     Failure/Error: {expectation}",
                "",
                f"       expected: {expected}",
                f"            got: {got}",
                "",
                "       (compared using ==)",
                f"     # ./{spec}:{line}:in `block (3 levels) in <top (required)>'",
                "",
            ]
    out.append(
        f"Finished in {rng.randint(1, 4)}.{rng.randint(0, 9)} seconds "
        f"(files took {rng.randint(2, 6)}.{rng.randint(0, 9)} seconds to load)"
    )
    count = len(failures)
    out.append(f"{total} examples, {count} failure{'s' if count != 1 else ''}")
    if failures:
        out += ["", "Failed examples:", ""]
        for desc, line, *_ in failures:
            out.append(f"rspec ./{spec}:{line} # {desc}")
    return "\n".join(out)


def write(seed: int, tokens: int) -> EvalSession:
    rng = random.Random(f"gsstory-{seed}")
    app = rng.choice(_APPS)
    ns = rng.choice(_NAMESPACES)
    mod = ns.title()
    gem = rng.choice(_GEMS)
    ruby = rng.choice(_RUBIES)
    key = rng.choice(_KEYS)
    engine = rng.choice(_ENGINES)
    owner = rng.choice(_OWNERS)
    user_dir = rng.choice(("dev", "sam", "priya", "jo"))
    root = f"/Users/{user_dir}/code/{app}"
    header = f"X-{app.title()}-Signature"
    a0, a1, a2 = rng.randint(10, 13), rng.randint(15, 19), rng.randint(21, 29)
    d0, d1 = rng.choice((14, 21, 28)), rng.choice((30, 45, 60, 90))
    commit = hexid(rng)
    branch = f"{ns}-retry-queue"
    attempts_table = f"{ns}_attempts"
    dead_table = f"{ns}_dead_letters"

    wrong = "app/services/webhooks/legacy_dispatcher.rb"
    dispatcher = f"app/services/{ns}/dispatcher.rb"
    controller = "app/controllers/admin/webhook_deliveries_controller.rb"
    model = "app/models/webhook_delivery.rb"
    endpoint_model = "app/models/webhook_endpoint.rb"
    job = f"app/jobs/{ns}/redeliver_job.rb"
    migration = (
        f"db/migrate/2026111{rng.randint(0, 9)}0930{rng.randint(10, 59)}_create_{attempts_table}.rb"
    )
    spec = f"spec/jobs/{ns}/redeliver_job_spec.rb"
    worker = "app/workers/webhook_retry_worker.rb"
    rspec_cmd = f"bundle exec rspec spec/jobs/{ns} spec/requests/admin"
    rubocop_cmd = f"bundle exec rubocop app/jobs/{ns} app/services/{ns}"

    date = f"2026-11-{rng.randint(10, 27)} {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}"
    s = Session(rng, _SYSTEM.format(date=date, os="macos", root=root))
    g = _Goose(s, root)
    target = tokens * CHARS_PER_TOKEN

    def pad(fraction: float) -> None:
        while s.chars < target * fraction:
            kind = rng.random()
            if kind < 0.6:
                folder = rng.choice(("app/models", "app/services", "lib", "app/presenters"))
                g.view(f"{folder}/{ident(rng)}.rb", code_file(rng, "rb", rng.randint(40, 90)),
                       filler=True)  # fmt: skip
            elif kind < 0.85:
                g.shell("tail -n 60 log/development.log", log_lines(rng, 60), filler=True)
            else:
                folder = rng.choice(("app/models", "app/services", "lib"))
                names = [f"{ident(rng)}.rb" for _ in range(rng.randint(8, 16))]
                g.shell(f"ls -la {folder}", listing(rng, names), filler=True)

    # --- the task ------------------------------------------------------------------------------
    s.user(
        f"Our outbound webhooks in {app} give up after the first failed POST. I want a proper "
        f"retry queue: a failed delivery should be retried with backoff, up to {a0} attempts, "
        f"and whatever still fails after that goes to a dead-letter store we keep for {d0} "
        f"days.\n\nA few ground rules:\n- Don't add {gem} (or any other queue gem). We run "
        "ActiveJob on GoodJob and that's staying.\n"
        f"- This has to keep running on Ruby {ruby}; prod isn't upgrading this quarter.\n"
        "- There should be an admin endpoint to retry a delivery by hand, and it must answer "
        f'202 Accepted with a JSON body of exactly {{"{key}": <iso8601>}}, nothing else — the '
        "ops dashboard parses it."
    )
    s.fact("constraint", f"no {gem} or other queue gem", (gem,))
    s.fact("constraint", f"must run on Ruby {ruby}", (f"Ruby {ruby}",))
    s.fact("constraint", f"admin retry answers 202 Accepted with {key}", ("202 Accepted", key))
    items = [
        f"Persist retry state for deliveries ({ns})",
        "Schedule redeliveries with backoff",
        "Dead-letter deliveries after the last attempt",
        f"Admin retry endpoint ({controller.rsplit('/', 1)[1]})",
        "Backfill failed deliveries from the last week",
        "Specs + rubocop",
    ]
    state = dict.fromkeys(items, "open")
    g.todo([(i, state[i]) for i in items],
           text="I'll start by getting the lay of the land and writing down a plan.")  # fmt: skip
    gemfile = "\n".join([
        'source "https://rubygems.org"',
        f'ruby "~> {ruby}.0"',
        "",
        'gem "rails", "~> 7.1.4"',
        'gem "pg", "~> 1.5"',
        'gem "puma", ">= 6.4"',
        'gem "good_job", "~> 3.29"',
        'gem "faraday", "~> 2.9"',
        'gem "jbuilder"',
        'gem "bootsnap", require: false',
        "",
        "group :development, :test do",
        '  gem "rspec-rails", "~> 6.1"',
        '  gem "factory_bot_rails"',
        '  gem "rubocop-rails", require: false',
        '  gem "webmock"',
        "end",
    ])  # fmt: skip
    g.view("Gemfile", gemfile)
    s.fact("file_read", "read the Gemfile", ("Gemfile",), required=False)
    hits = [
        f"{wrong}:3:  class LegacyDispatcher",
        f"{wrong}:18:    def deliver(delivery)",
        f"{dispatcher}:4:  class Dispatcher",
        f"{dispatcher}:21:    def deliver(delivery)",
        f"{endpoint_model}:1:class WebhookEndpoint < ApplicationRecord",
        f"{model}:1:class WebhookDelivery < ApplicationRecord",
        f"{worker}:1:class WebhookRetryWorker",
        f"{controller}:2:  class WebhookDeliveriesController < Admin::BaseController",
    ]
    g.shell('rg -n "Dispatcher|WebhookDelivery|WebhookEndpoint|RetryWorker" app', "\n".join(hits))
    pad(0.08)
    g.view(endpoint_model, "\n".join([
        "class WebhookEndpoint < ApplicationRecord",
        f'  SIGNATURE_HEADER = "{header}"',
        "",
        "  has_many :webhook_deliveries, dependent: :destroy",
        "  encrypts :signing_secret",
        "",
        "  validates :url, presence: true, format: { with: %r{\\Ahttps://} }",
        "",
        "  def sign(body)",
        '    OpenSSL::HMAC.hexdigest("SHA256", signing_secret, body)',
        "  end",
        "end",
    ]))  # fmt: skip
    s.say(
        f"Endpoints sign each body with HMAC-SHA256 under `{header}`; I'll keep that header "
        "on every retry.\n\nFirst design: add a `next_retry_at` column to `webhook_deliveries` "
        "and a rake task that polls for due rows every minute and redelivers them."
    )
    s.fact("identifier", f"deliveries are signed under {header}", (header,))
    pad(0.16)

    # --- the wrong file ------------------------------------------------------------------------
    legacy_old = (
        "      response = http.post(endpoint.url, body, headers)\n"
        '      delivery.update!(state: response.success? ? "delivered" : "failed")'
    )
    legacy_new = (
        "      response = http.post(endpoint.url, body, headers)\n"
        '      return delivery.update!(state: "delivered") if response.success?\n\n'
        '      delivery.update!(state: "failed", next_retry_at: 30.seconds.from_now)'
    )
    g.view(wrong, "\n".join([
        "module Webhooks",
        "  # v1 partners only",
        "  class LegacyDispatcher",
        "    def initialize(http: Faraday.new)",
        "      @http = http",
        "    end",
        "",
        "    attr_reader :http",
        "",
        "    def deliver(delivery)",
        "      endpoint = delivery.webhook_endpoint",
        "      body = delivery.body_json",
        "      headers = { WebhookEndpoint::SIGNATURE_HEADER => endpoint.sign(body) }",
        legacy_old,
        "    end",
        "  end",
        "end",
    ]))  # fmt: skip
    g.replace(wrong, legacy_old, legacy_new,
              text="Marking failed deliveries for a retry where they fail.")  # fmt: skip
    s.user(
        f"Not that one — {wrong} is frozen, it only serves the v1 partners. Everything new "
        f"goes through {dispatcher}."
    )
    g.undo(wrong, text="Sorry — reverting the legacy dispatcher.")
    dispatch_old = (
        "      result = post(delivery)\n"
        "      delivery.update!(state: result.ok? ? :delivered : :failed, "
        "last_status: result.status)"
    )
    dispatch_new = (
        "      result = post(delivery)\n"
        "      delivery.update!(last_status: result.status)\n"
        "      result.ok? ? delivery.delivered! : schedule_retry(delivery)"
    )
    g.view(dispatcher, "\n".join([
        f"module {mod}",
        "  # v2 dispatch path: one POST per delivery, signed per endpoint.",
        "  class Dispatcher",
        "    Result = Struct.new(:status, :ok?, keyword_init: true)",
        "",
        "    def self.call(delivery) = new.call(delivery)",
        "",
        "    def call(delivery)",
        dispatch_old,
        "    end",
        "",
        "    private",
        "",
        "    def post(delivery)",
        "      endpoint = delivery.webhook_endpoint",
        "      body = delivery.body_json",
        "      headers = { WebhookEndpoint::SIGNATURE_HEADER => endpoint.sign(body) }",
        "      response = Faraday.post(endpoint.url, body, headers)",
        "      Result.new(status: response.status, ok?: response.success?)",
        "    rescue Faraday::ConnectionFailed, Faraday::TimeoutError",
        "      Result.new(status: 0, ok?: false)",
        "    end",
        "  end",
        "end",
    ]))  # fmt: skip
    g.replace(dispatcher, dispatch_old, dispatch_new)
    s.fact("file_modified", f"the retry hook is in {dispatcher}", (dispatcher,), stale=(wrong,))
    pad(0.24)

    # --- the design, replaced twice ------------------------------------------------------------
    s.user(
        "Scrap the polling rake task — we don't have a cron runner in the k8s setup, nothing "
        "would ever call it."
    )
    job_retry_on = "\n".join([
        f"module {mod}",
        "  class RedeliverJob < ApplicationJob",
        "    queue_as :webhooks",
        f"    retry_on {mod}::DeliveryFailed, wait: :polynomially_longer, attempts: {a0}",
        "",
        "    def perform(delivery)",
        f"      raise {mod}::DeliveryFailed unless Dispatcher.call(delivery).ok?",
        "    end",
        "  end",
        "end",
    ])  # fmt: skip
    g.write(job, job_retry_on, text=(
        "Then no polling: a failed delivery enqueues a `RedeliverJob`, and ActiveJob's "
        "`retry_on` with `wait: :polynomially_longer` does the backoff on GoodJob."))  # fmt: skip
    s.user(
        "Hmm, retry_on keeps the attempt count only inside the job's serialized arguments — "
        "ops wants to see every attempt in the admin, with its status code, and a discarded "
        "job loses the history."
    )
    s.say(
        f"Then switching to a `{attempts_table}` table: every POST writes one row (delivery, "
        "attempt number, status, error), and `RedeliverJob` schedules the next attempt itself "
        "with `set(wait_until:)` from exponential backoff with full jitter. No `retry_on`, no "
        f"`next_retry_at`. After the last attempt the delivery moves to `{dead_table}`."
    )
    s.fact(
        "decision",
        f"retry state lives in a {attempts_table} table; RedeliverJob schedules itself",
        (attempts_table,),
        stale=("next_retry_at", "retry_on"),
    )
    s.fact("decision", f"exhausted deliveries move to {dead_table}", (dead_table,))
    g.write(migration, "\n".join([
        f"class Create{mod}Attempts < ActiveRecord::Migration[7.1]",
        "  def change",
        f"    create_table :{attempts_table} do |t|",
        "      t.references :webhook_delivery, null: false, foreign_key: true",
        "      t.integer :number, null: false",
        "      t.integer :status_code",
        "      t.string :error",
        "      t.timestamps",
        "    end",
        f"    add_index :{attempts_table}, [:webhook_delivery_id, :number], unique: true",
        "",
        f"    create_table :{dead_table} do |t|",
        "      t.references :webhook_delivery, null: false, foreign_key: true",
        "      t.jsonb :last_error",
        "      t.timestamps",
        "    end",
        "  end",
        "end",
    ]))  # fmt: skip
    s.fact("file_created", "the migration", (migration,))
    job_text = "\n".join([
        f"module {mod}",
        "  class RedeliverJob < ApplicationJob",
        "    queue_as :webhooks",
        f"    MAX_ATTEMPTS = {a0}",
        f"    DEAD_LETTER_RETENTION = {d0}.days",
        "",
        "    def perform(delivery)",
        f"      number = delivery.{attempts_table}.count + 1",
        "      result = Dispatcher.new.post(delivery)",
        f"      delivery.{attempts_table}.create!(number:, status_code: result.status)",
        "      return delivery.delivered! if result.ok?",
        "",
        "      if number >= MAX_ATTEMPTS",
        f"        {mod}::DeadLetter.create!(webhook_delivery: delivery)",
        "      else",
        "        self.class.set(wait_until: backoff(number).from_now).perform_later(delivery)",
        "      end",
        "    end",
        "",
        "    private",
        "",
        "    def backoff(number)",
        "      (rand * (2**number) * 15).seconds",
        "    end",
        "  end",
        "end",
    ])  # fmt: skip
    g.write(job, job_text)
    s.fact("file_created", "the redeliver job", (job,))
    g.insert(model, 3, f"  has_many :{attempts_table}, dependent: :delete_all\n"
             f"  has_one :dead_letter, class_name: \"{mod}::DeadLetter\"")  # fmt: skip
    s.fact("file_modified", "the delivery model has the attempts", (model,))
    pad(0.36)

    # --- attempts, first change; specs ---------------------------------------------------------
    s.user(f"Bump the max attempts to {a1} attempts — some partners have long maintenance windows.")
    g.replace(job, f"    MAX_ATTEMPTS = {a0}", f"    MAX_ATTEMPTS = {a1}")
    spec_text = "\n".join([
        "require \"rails_helper\"",
        "",
        f"RSpec.describe {mod}::RedeliverJob do",
        "  let(:delivery) { create(:webhook_delivery, :failed) }",
        "",
        "  it \"records one attempt per POST\" do",
        "    stub_request(:post, delivery.webhook_endpoint.url).to_return(status: 500)",
        "    described_class.perform_now(delivery)",
        f"    expect(delivery.{attempts_table}.pluck(:status_code)).to eq([500])",
        "  end",
        "",
        "  it \"schedules the next attempt with backoff\" do",
        "    stub_request(:post, delivery.webhook_endpoint.url).to_return(status: 503)",
        "    expect { described_class.perform_now(delivery) }",
        "      .to have_enqueued_job(described_class).with(delivery)",
        "  end",
        "",
        "  it \"dead-letters after the last attempt\" do",
        f"    create_list(:{ns}_attempt, described_class::MAX_ATTEMPTS - 1,",
        "                webhook_delivery: delivery)",
        "    stub_request(:post, delivery.webhook_endpoint.url).to_return(status: 500)",
        "    described_class.perform_now(delivery)",
        "    expect(delivery.reload.dead_letter).to be_present",
        "  end",
        "",
        "  it \"purges dead letters past the retention\" do",
        "    travel_to(described_class::DEAD_LETTER_RETENTION.from_now + 1.hour) do",
        f"      {mod}::PurgeDeadLettersJob.perform_now",
        "    end",
        f"    expect({mod}::DeadLetter.count).to eq(0)",
        "  end",
        "end",
    ])  # fmt: skip
    g.write(spec, spec_text)
    s.fact("file_created", "the job spec", (spec,))
    n1 = rng.randint(30, 39)
    first = _rspec(rng, spec, n1, [(
        f"{mod}::RedeliverJob records one attempt per POST", 9,
        f"expect(delivery.{attempts_table}.pluck(:status_code)).to eq([500])", "[500]", "[]",
    )])  # fmt: skip
    g.shell(rspec_cmd, first)
    s.fact("command", "the spec run", (rspec_cmd,), required=False)
    post_old = "    private\n\n    def post(delivery)"
    post_new = "    def post(delivery)"
    g.replace(dispatcher, post_old, post_new, text=(
        "`Dispatcher#post` is private, so the job's call raised inside `perform` and the "
        "attempt row was never written; making `post` public."))  # fmt: skip
    s.fact("error_resolved", "records-one-attempt spec failed: private post",
           ("records one attempt per POST",), required=False)  # fmt: skip
    broken = (
        "    def post(delivery)\n      endpoint = delivery.webhook_endpoint\n"
        "      body = delivery.body_json\n      end"
    )
    g.replace(dispatcher, "    def post(delivery)\n      endpoint = delivery.webhook_endpoint\n"
              "      body = delivery.body_json", broken)  # fmt: skip
    load_error = "\n".join([
        f"An error occurred while loading ./{spec}.",
        f"Failure/Error: raise {mod}::DeliveryFailed unless Dispatcher.call(delivery).ok?",
        "",
        "SyntaxError:",
        f"  {root}/{dispatcher}:17: syntax error, unexpected `end', expecting end-of-input",
        f"# ./{spec}:3:in `<top (required)>'",
        "No examples found.",
        "",
        f"Finished in 0.0000{rng.randint(2, 9)} seconds "
        f"(files took {rng.randint(2, 5)}.{rng.randint(1, 9)} seconds to load)",
        "0 examples, 0 failures, 1 error occurred outside of examples",
    ])  # fmt: skip
    g.shell(rspec_cmd, load_error)
    g.replace(dispatcher, broken, broken[: -len("\n      end")],
              text="A stray `end` slipped into the edit; removing it.")  # fmt: skip
    s.fact("error_resolved", "syntax error: unexpected `end' in the dispatcher",
           ("unexpected `end'",), required=False)  # fmt: skip
    pad(0.5)

    # --- the user's interjections -------------------------------------------------------------
    s.user(
        f"Also: don't touch anything under vendor/engines/{engine} — that engine belongs to "
        f"{owner}. If you need something from it, ask me first."
    )
    s.fact("constraint", f"vendor/engines/{engine} is off limits", (f"vendor/engines/{engine}",))
    s.say(f"Understood, vendor/engines/{engine} stays untouched.")
    s.user("Quick question while you're at it: which commit added signing secrets to endpoints?")
    log = "\n".join(
        [
            f"{commit} Add per-endpoint signing secret",
            f"{hexid(rng)} Encrypt webhook endpoint secrets at rest",
        ]
    )
    g.shell(f"git log --oneline -S signing_secret -- {endpoint_model}", log)
    s.say(
        f'It is {commit} ("Add per-endpoint signing secret"); the later commit only encrypted it.'
    )
    s.fact("identifier", "the commit that added signing secrets", (commit,))
    s.user(
        "And drop the backfill item — ops will replay last week's failures by hand. Instead "
        "add an alert when the dead letters grow faster than 50 an hour."
    )
    alert = f"Alert when {dead_table} grows faster than 50/hour"
    state[items[0]] = state[items[1]] = state[items[2]] = "done"
    state[items[4]] = "dropped"
    items.insert(5, alert)
    state[alert] = "open"
    g.todo([(i, state[i]) for i in items])
    s.fact("todo", "the alert item was added and is open", (alert,))
    s.fact("todo", "the backfill item was dropped", ("backfill", "dropped"))
    s.fact("todo", "scheduling with backoff is done", (items[1],), required=False)
    pad(0.62)

    # --- retention, the admin endpoint, the old worker ----------------------------------------
    s.user(f"Keep dead letters for {d1} days, not {d0} — compliance asked.")
    g.replace(
        job, f"    DEAD_LETTER_RETENTION = {d0}.days", f"    DEAD_LETTER_RETENTION = {d1}.days"
    )
    ctrl_old = "  def retry\n    head :not_implemented\n  end"
    ctrl_new = "\n".join([
        "  def retry",
        "    delivery = WebhookDelivery.find(params[:id])",
        f"    job = {mod}::RedeliverJob.perform_later(delivery)",
        "    at = job.scheduled_at || Time.current",
        f"    render json: {{ {key}: at.iso8601 }}, status: :accepted",
        "  end",
    ])  # fmt: skip
    g.view(controller, "\n".join([
        "module Admin",
        "  class WebhookDeliveriesController < Admin::BaseController",
        "    def index",
        "      @deliveries = WebhookDelivery.recent.page(params[:page])",
        "    end",
        "",
        "  " + ctrl_old.replace("\n", "\n  "),
        "  end",
        "end",
    ]))  # fmt: skip
    g.replace(controller, ctrl_old, ctrl_new)
    s.fact("file_modified", "the admin retry endpoint", (controller,))
    g.shell("rg -n WebhookRetryWorker app config spec", f"{worker}:1:class WebhookRetryWorker")
    g.shell(f"git rm {worker}", f"rm '{worker}'",
            text="Nothing references the old worker any more; removing it.")  # fmt: skip
    s.fact("file_deleted", "the old retry worker", (worker,))
    pad(0.74)

    rubocop = "\n".join(
        [
            "Inspecting 6 files",
            "..C...",
            "",
            "Offenses:",
            "",
            f"{job}:13:7: C: [Correctable] Style/GuardClause: Use a guard clause (return "
            f"{mod}::DeadLetter.create!(webhook_delivery: delivery) if number >= MAX_ATTEMPTS) "
            "instead of wrapping the code inside a conditional expression.",
            "      if number >= MAX_ATTEMPTS",
            "      ^^",
            "",
            "6 files inspected, 1 offense detected, 1 offense autocorrectable",
        ]
    )
    g.shell(rubocop_cmd, rubocop)
    s.fact("command", "rubocop on the new code", (rubocop_cmd,), required=False)
    guard_old = "\n".join(
        [
            "      if number >= MAX_ATTEMPTS",
            f"        {mod}::DeadLetter.create!(webhook_delivery: delivery)",
            "      else",
            "        self.class.set(wait_until: backoff(number).from_now).perform_later(delivery)",
            "      end",
        ]
    )
    guard_new = "\n".join(
        [
            f"      return {mod}::DeadLetter.create!(webhook_delivery: delivery) "
            "if number >= MAX_ATTEMPTS",
            "",
            "      self.class.set(wait_until: backoff(number).from_now).perform_later(delivery)",
        ]
    )
    g.replace(job, guard_old, guard_new)
    g.shell(rubocop_cmd, "Inspecting 6 files\n......\n\n6 files inspected, no offenses detected")
    s.fact("error_resolved", "rubocop Style/GuardClause in the job", ("Style/GuardClause",),
           required=False)  # fmt: skip
    pad(0.84)

    # --- attempts, second change (the setting unnamed); the last run ---------------------------
    s.user(f"Thinking about it more: make that {a2} tries. The big partners deploy on weekends.")
    g.replace(job, f"    MAX_ATTEMPTS = {a1}", f"    MAX_ATTEMPTS = {a2}")
    s.fact(
        "changed_value",
        f"max attempts is {a2}",
        (f"{a2} tries",),
        stale=(f"{a0} attempts", f"{a1} attempts"),
    )
    s.fact("changed_value", f"dead letters kept {d1} days", (f"{d1} days",), stale=(f"{d0} days",))
    n2 = n1 + rng.randint(4, 8)
    purge = f"{mod}::RedeliverJob purges dead letters past the retention"
    last = _rspec(rng, spec, n2, [(
        purge, 25, f"expect({mod}::DeadLetter.count).to eq(0)", "0", "1",
    )])  # fmt: skip
    g.shell(rspec_cmd, last)
    s.fact("test_status", "the last run", (f"{n2} examples, 1 failure",),
           stale=(f"{n1} examples, 1 failure",))  # fmt: skip
    s.fact("error_open", "the purge spec still fails", ("purges dead letters past the retention",))
    state[items[3]] = "done"
    fix = "Fix the dead-letter purge spec"
    items.append(fix)
    state[fix] = "open"
    g.todo([(i, state[i]) for i in items])
    s.say(
        f"{n2} examples, 1 failure: the purge spec — `{mod}::PurgeDeadLettersJob` doesn't "
        "exist yet, so nothing removes the old rows. Everything else is green and rubocop is "
        "clean."
    )
    pad(0.97)
    s.user("Fine, leave the purge for tomorrow. Push the branch.")
    g.shell(f"git push -u origin {branch}", "\n".join([
        f"Enumerating objects: {rng.randint(30, 60)}, done.",
        "remote:",
        f"remote: Create a pull request for '{branch}' on GitHub by visiting:",
        f"remote:      https://github.com/{app}-inc/{app}/pull/new/{branch}",
        "remote:",
        f" * [new branch]      {branch} -> {branch}",
        f"branch '{branch}' set up to track 'origin/{branch}'.",
    ]))  # fmt: skip
    s.say(f"Pushed {branch}. See you tomorrow.")
    s.fact("last_message", "the branch was pushed", (f"Pushed {branch}",))
    return finish_session(s, family=FAMILY, seed=seed)
