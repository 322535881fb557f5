"""ampstory-style: a Sourcegraph Amp thread with a story of its own, on a Clojure webhook service.

Amp's tools as its public tool schemas and shared threads give them (late 2025): `Bash`
{cmd, cwd} answers `{"output": …, "exitCode": N}`; `Read` {path, read_range?} answers
`{"absolutePath": …, "content": …}` with `N: ` before each line and `[... omitted lines A to
B ...]` around a range (a directory answers `isDirectory` and `directoryEntries` too);
`edit_file` {path, old_str, new_str, replace_all?} answers `{"diff": "```diff\\nIndex: …```",
"lineRange": [a, b]}`; `create_file` {path, content} answers "Successfully created file
<path>"; `undo_edit` {path} answers the undone change as a fenced diff; `Grep` {pattern, path}
answers a JSON list of `path:line:text`; `glob` {filePattern} a JSON list of paths; `todo_write`
{todos: [{id, content, status}]} (status todo / in-progress / completed; the list replaces the
last one, so a dropped item is left out) answers the list as JSON, `todo_read` {} reads it back;
`finder` {query}, `oracle` {task, context, files}, `Task` {description, prompt} and
`read_web_page` {url, objective} answer in prose. File tools take absolute paths; Bash takes the
directory as `cwd`. The user @-mentions a file, which arrives in `<attached_files>`.

The story: a Clojure service (deps.edn, Ring, next.jdbc, HoneySQL, Integrant, migratus,
clojure.test through the Cognitect test-runner) retries outgoing webhooks inline, sleeping on
the request thread. The user wants retries out of the request path, and sets how many tries a
delivery gets and the longest wait between tries; no new dependency (no carmine), a JDK to keep
running on, the same delivery-id header on every try. The plan goes from core.async go-loops
(lost on restart) to Quartzite (a new dependency) to a Postgres table claimed with FOR UPDATE
SKIP LOCKED (the oracle's advice); a 410 Gone pauses the subscription. The user forbids
src/<app>/compat/, asks which subscription the 429 storm hit and which commit brought the inline
retry in, changes the tries twice and the wait once, drops the metrics to-do and adds a replay
endpoint. A compile error and a missing relation in the tests are fixed; one edit is undone and
made again; the inline retry is deleted with `git rm`; the tests go red, green, then red on the
cap test, which the user leaves for Monday before the draft PR.
"""

from __future__ import annotations

import difflib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction.eval.families._base import (
    CHARS_PER_TOKEN,
    ProbeLeakError,
    Session,
    finish_session,
    hexid,
    token,
)
from compaction.eval.sessions import EvalSession

FAMILY = "ampstory-style"

#: Chars of filler asked per token of the target: the session's JSON is wordier than its tokens.
_CHARS_PER_TOKEN = CHARS_PER_TOKEN * 1.07

_APPS = ("tidepool", "kestrel", "lanternfish", "saltmarsh", "brambling", "quillwort", "heronry",
         "marlinspike")  # fmt: skip
_HOMES = (
    ("/Users/priya/code", "darwin"),
    ("/home/mateo/src", "linux"),
    ("/Users/jonas/work", "darwin"),
    ("/home/aiko/dev", "linux"),
    ("/Users/femi/projects", "darwin"),
    ("/home/ines/code", "linux"),
)
_ORGS = ("harborlight", "northwind-labs", "parcelwise", "oakfield-io", "lumen-post")
_TABLES = ("outbound_retries", "pending_deliveries", "webhook_retries", "delivery_queue")
_JDKS = ("JDK 17", "JDK 11")
_PAUSE_COLUMNS = ("paused_at", "suspended_at", "disabled_at")
#: (first, changed, final) tries before a delivery is given up: none stands inside another.
_TRIES = (
    ("5 attempts", "8 attempts", "6 attempts"),
    ("4 attempts", "9 attempts", "7 attempts"),
    ("6 attempts", "10 attempts", "8 attempts"),
    ("5 attempts", "11 attempts", "7 attempts"),
)
#: (first, changed) longest wait between tries, in minutes; the change more than doubles it.
_CAPS = ((15, 40), (20, 45), (30, 75), (10, 25))
_SYMBOLS = ("next-attempt-at", "due-at", "retry-at")
_CUSTOMERS = ("acme-freight", "bluefin-payroll", "corvid-hr", "dunmore-tickets", "elmwood-clinics")

#: Filler words: none of them is a name the story plants.
_FILL = (
    "invoice", "tenant", "ledger", "payout", "region", "plan", "quota", "audit", "export",
    "report", "profile", "schema", "record", "batch", "cursor", "window", "entry", "filter",
    "cache", "index", "account", "channel", "digest", "notice", "label", "owner", "scope",
    "usage", "member", "seat", "coupon", "refund",
)  # fmt: skip
_FILL_AREAS = ("accounts", "invoicing", "admin", "audit", "http", "db", "util", "reports")
_HTTP_FILL = ("routes", "middleware", "server", "auth", "pagination", "errors")
_STATUS = ("todo", "in-progress", "completed")


def _json(value: Any) -> str:
    """A value as Amp's tools send it back: JSON.stringify, no spaces, no escaped Unicode."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _numbered(lines: Sequence[str], start: int = 1) -> str:
    return "\n".join(f"{start + k}: {line}" for k, line in enumerate(lines))


# --- the per-seed draw -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Draw:
    app: str
    root: str
    os_name: str
    org: str
    table: str
    header: str
    jdk: str
    pause: str
    tries: tuple[str, str, str]
    caps: tuple[int, int]
    symbol: str
    customer: str
    sub_id: str
    commit: str
    commit_subject: str
    migration: str
    branch: str
    pr: int
    other_tests: int
    other_assertions: int
    backoff_seen: int
    thread: str

    @property
    def title(self) -> str:
        return self.app.capitalize()

    @property
    def ns(self) -> str:
        return self.app

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    @classmethod
    def of(cls, rng: random.Random) -> _Draw:
        app = rng.choice(_APPS)
        home, os_name = rng.choice(_HOMES)
        table = rng.choice(_TABLES)
        caps = rng.choice(_CAPS)
        cap_ms = caps[1] * 60_000
        header = rng.choice((f"X-{app.capitalize()}-Delivery", f"X-{app.capitalize()}-Delivery-Id"))
        return cls(
            app=app,
            root=f"{home}/{app}",
            os_name=os_name,
            org=rng.choice(_ORGS),
            table=table,
            header=header,
            jdk=rng.choice(_JDKS),
            pause=rng.choice(_PAUSE_COLUMNS),
            tries=rng.choice(_TRIES),
            caps=caps,
            symbol=rng.choice(_SYMBOLS),
            customer=rng.choice(_CUSTOMERS),
            sub_id=f"sub_{token(rng, 2)}{rng.randint(2, 9)}{token(rng, 3)}",
            commit=hexid(rng, 7),
            commit_subject=rng.choice(
                (
                    "deliver: retry inline on 429 and 5xx",
                    "webhooks: retry failed posts before giving up",
                    "delivery: simple retry loop for flaky endpoints",
                )
            ),
            migration=f"2026111{rng.randint(6, 8)}{rng.randint(10, 23)}{rng.randint(10, 59)}"
            f"{rng.randint(10, 59)}-create-{table.replace('_', '-')}",
            branch=rng.choice(("retry-worker", "durable-retries", "webhook-retry-queue")),
            pr=rng.randint(310, 980),
            other_tests=rng.randint(12, 17),
            other_assertions=rng.randint(30, 44),
            backoff_seen=rng.randint(cap_ms // 2 + 1000, cap_ms - 1000),
            thread="T-" + "-".join(hexid(rng, n) for n in (8, 4, 4, 4, 12)),
        )


# --- the code the story reads and writes -------------------------------------------------------


def _deps_edn() -> str:
    return """{:paths ["src" "resources"]
 :deps {org.clojure/clojure {:mvn/version "1.11.3"}
        org.clojure/core.async {:mvn/version "1.6.681"}
        ring/ring-jetty-adapter {:mvn/version "1.12.2"}
        metosin/reitit {:mvn/version "0.7.1"}
        metosin/malli {:mvn/version "0.16.2"}
        com.github.seancorfield/next.jdbc {:mvn/version "1.3.939"}
        com.github.seancorfield/honeysql {:mvn/version "2.6.1147"}
        org.postgresql/postgresql {:mvn/version "42.7.3"}
        migratus/migratus {:mvn/version "1.5.6"}
        integrant/integrant {:mvn/version "0.10.0"}
        aero/aero {:mvn/version "1.1.6"}
        hato/hato {:mvn/version "1.0.0"}
        com.taoensso/timbre {:mvn/version "6.5.0"}
        cheshire/cheshire {:mvn/version "5.13.0"}}
 :aliases
 {:dev {:extra-paths ["dev"]}
  :test {:extra-paths ["test"]
         :extra-deps {io.github.cognitect-labs/test-runner
                      {:git/tag "v0.5.1" :git/sha "dfb30dd"}}
         :exec-fn cognitect.test-runner.api/test}
  :lint {:extra-deps {clj-kondo/clj-kondo {:mvn/version "2024.08.01"}}
         :main-opts ["-m" "clj-kondo.main" "--lint" "src" "test"]}
  :fmt {:extra-deps {dev.weavejester/cljfmt {:mvn/version "0.12.0"}}
        :main-opts ["-m" "cljfmt.main" "check"]}}}"""


def _inline_retry(d: _Draw) -> str:
    return f"""(ns {d.ns}.delivery.inline-retry
  (:require [hato.client :as http]
            [taoensso.timbre :as log]))

(def ^:private retryable? #{{429 500 502 503 504}})

(defn post-with-retry!
  "POSTs one delivery and tries again on 429 or 5xx, sleeping on the
  calling thread in between."
  [client {{:keys [sub-id url body headers]}} tries]
  (loop [n 1]
    (let [resp (http/post url {{:http-client client
                               :body body
                               :headers headers
                               :timeout 10000
                               :throw-exceptions? false}})]
      (if (and (retryable? (:status resp)) (< n tries))
        (do (log/warn "delivery retry" {{:sub sub-id :status (:status resp) :n n}})
            (Thread/sleep (* 1000 (long (Math/pow 2 n))))
            (recur (inc n)))
        resp))))"""


def _sender(d: _Draw) -> str:
    return f"""(ns {d.ns}.delivery.sender
  (:require [cheshire.core :as json]
            [{d.ns}.delivery.inline-retry :as retry]
            [{d.ns}.subscriptions :as subs]))

(defn- headers
  [delivery-id signature]
  {{"Content-Type" "application/json"
   "{d.header}" (str delivery-id)
   "X-{d.title}-Signature" signature}})

(defn deliver!
  "Fans one event out to every active subscription for its type."
  [{{:keys [client ds]}} event]
  (let [body (json/generate-string event)]
    (doseq [sub (subs/active-for ds (:type event))]
      (retry/post-with-retry! client
                              {{:sub-id  (:id sub)
                               :url     (:url sub)
                               :body    body
                               :headers (headers (random-uuid) (subs/sign sub body))}}
                              3))))"""


def _webhooks(d: _Draw) -> str:
    return f"""(ns {d.ns}.http.webhooks
  (:require [malli.core :as m]
            [ring.util.response :as resp]
            [{d.ns}.delivery.sender :as sender]
            [{d.ns}.events :as events]))

(def Event
  [:map
   [:type [:enum "invoice.paid" "invoice.voided" "member.added" "member.removed"]]
   [:tenant-id :uuid]
   [:data :map]])

(defn publish
  "POST /internal/events: stores the event, then delivers it before answering."
  [{{:keys [ds] :as ctx}} {{:keys [body-params]}}]
  (if-not (m/validate Event body-params)
    (resp/bad-request {{:error "invalid event"}})
    (let [event (events/store! ds body-params)]
      (sender/deliver! ctx event)
      (resp/created (str "/internal/events/" (:id event)) event))))

(defn routes [ctx]
  [["/internal/events" {{:post {{:handler (partial publish ctx)}}}}]])"""


def _config_edn(d: _Draw) -> str:
    return f"""{{:http     {{:port #long #or [#env PORT 8080]}}
 :db       {{:jdbc-url #or [#env DATABASE_URL "jdbc:postgresql://localhost:5432/{d.app}"]}}
 :delivery {{:timeout-ms 10000
            :signing-secret #env WEBHOOK_SIGNING_SECRET}}
 :log      {{:level #profile {{:dev :debug :default :info}}}}}}"""


def _system(d: _Draw) -> str:
    return f"""(ns {d.ns}.system
  (:require [aero.core :as aero]
            [clojure.java.io :as io]
            [hato.client :as http]
            [integrant.core :as ig]
            [{d.ns}.db :as db]
            [{d.ns}.http.server :as server]))

(defn config
  [profile]
  (let [c (aero/read-config (io/resource "config.edn") {{:profile profile}})]
    {{::db/pool       {{:jdbc-url (get-in c [:db :jdbc-url])}}
     ::server/client {{:timeout-ms (get-in c [:delivery :timeout-ms])}}
     ::server/handler {{:ds (ig/ref ::db/pool)
                       :client (ig/ref ::server/client)
                       :delivery (:delivery c)}}
     ::server/jetty  {{:port (get-in c [:http :port])
                      :handler (ig/ref ::server/handler)}}}}))

(defn start
  ([] (start :dev))
  ([profile] (ig/init (config profile))))"""


def _test_system(d: _Draw) -> str:
    return f"""(ns {d.ns}.test-system
  (:require [aero.core :as aero]
            [clojure.java.io :as io]
            [next.jdbc :as jdbc]))

(def ^:private config
  (delay (aero/read-config (io/resource "config.edn") {{:profile :test}})))

(defn ds []
  (jdbc/get-datasource {{:jdbcUrl (or (System/getenv "TEST_DATABASE_URL")
                                     "jdbc:postgresql://localhost:5433/{d.app}_test")}}))

(defn with-clean-db [f]
  (jdbc/execute! (ds) ["TRUNCATE subscriptions, events RESTART IDENTITY CASCADE"])
  (f))

(defn insert-subscription!
  [{{:keys [url secret types] :or {{secret "s3cr3t" types ["invoice.paid"]}}}}]
  (jdbc/execute-one! (ds) ["INSERT INTO subscriptions (url, secret, types) VALUES (?, ?, ?)
                            RETURNING *" url secret (into-array String types)]))"""


def _migration_up(d: _Draw) -> str:
    return f"""CREATE TABLE {d.table} (
  id               bigserial   PRIMARY KEY,
  subscription_id  uuid        NOT NULL REFERENCES subscriptions (id),
  delivery_id      uuid        NOT NULL,
  body             jsonb       NOT NULL,
  attempt          integer     NOT NULL DEFAULT 0,
  state            text        NOT NULL DEFAULT 'pending',
  last_status      integer,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now()
);
--;;
CREATE INDEX {d.table}_due_idx ON {d.table} (next_attempt_at) WHERE state = 'pending';
--;;
ALTER TABLE subscriptions ADD COLUMN {d.pause} timestamptz;
"""


def _migration_down(d: _Draw) -> str:
    return f"""ALTER TABLE subscriptions DROP COLUMN {d.pause};
--;;
DROP TABLE {d.table};
"""


def _worker(d: _Draw) -> str:
    t = d.table
    return f"""(ns {d.ns}.delivery.retry-worker
  (:require [hato.client :as http]
            [honey.sql :as sql]
            [integrant.core :as ig]
            [next.jdbc :as jdbc]
            [taoensso.timbre :as log]
            [{d.ns}.subscriptions :as subs]))

(defn backoff-ms
  "How long to wait before try number `attempt`: the window doubles with
  each try and stops growing at cap-ms; half of it is fixed, half random."
  [attempt {{:keys [base-ms cap-ms]}}]
  (let [window (min cap-ms (* base-ms (bit-shift-left 1 (min 30 (dec attempt)))))
        half   (quot window 2)]
    (+ half (rand-int (max 1 half)))))

(defn enqueue!
  [ds {{:keys [subscription-id delivery-id body]}}]
  (jdbc/execute-one! ds (sql/format {{:insert-into :{t}
                                     :values [{{:subscription_id subscription-id
                                               :delivery_id     delivery-id
                                               :body            [:cast body :jsonb]}}]}})))

(defn claim-due!
  "Locks up to n rows that are due. Rows another pod holds are skipped."
  [tx n]
  (jdbc/execute! tx (sql/format {{:select   [:r.* :s.url :s.secret]
                                 :from     [[:{t} :r]]
                                 :join     [[:subscriptions :s] [:= :s.id :r.subscription_id]]
                                 :where    [:and [:= :r.state "pending"]
                                            [:<= :r.next_attempt_at [:now]]]
                                 :order-by [:r.next_attempt_at]
                                 :limit    n
                                 :for      [:update :r :skip-locked]}})))

(defn- mark! [tx id state status]
  (jdbc/execute-one! tx (sql/format {{:update :{t}
                                     :set    {{:state state :last_status status}}
                                     :where  [:= :id id]}})))

(defn- reschedule! [tx id attempt status wait-ms]
  (jdbc/execute-one! tx (sql/format {{:update :{t}
                                     :set    {{:attempt         attempt
                                              :last_status     status
                                              :next_attempt_at {d.symbol}}}
                                     :where  [:= :id id]}})))

(defn- headers [row]
  (let [body (str (:{t}/body row))]
    {{"Content-Type" "application/json"
     "{d.header}" (str (:{t}/delivery_id row))
     "X-{d.title}-Signature" (subs/sign-with (:subscriptions/secret row) body)}}))

(defn- send! [client row]
  (http/post (:subscriptions/url row)
             {{:http-client client
              :body (str (:{t}/body row))
              :headers (headers row)
              :timeout 10000
              :throw-exceptions? false}}))

(defn- settle! [tx row status {{:keys [max-attempts] :as opts}}]
  (let [id      (:{t}/id row)
        attempt (inc (:{t}/attempt row))]
    (cond
      (<= 200 status 299)       (mark! tx id "delivered" status)
      (= 410 status)            (do (subs/pause! tx (:{t}/subscription_id row))
                                    (mark! tx id "gone" status))
      (>= attempt max-attempts) (mark! tx id "dead" status)
      :else                     (reschedule! tx id attempt status (backoff-ms attempt opts)))))

(defn run-once!
  "One poll: claim what is due, send each row, settle it; one transaction."
  [{{:keys [ds client opts]}}]
  (jdbc/with-transaction [tx ds]
    (doseq [row (claim-due! tx (:batch-size opts))]
      (settle! tx row (:status (send! client row) 599) opts))))

(defmethod ig/init-key ::loop [_ {{:keys [opts] :as ctx}}]
  (let [running (atom true)
        worker  (Thread.
                 (fn []
                   (while @running
                     (try (run-once! ctx)
                          (catch Exception e (log/error e "retry poll failed")))
                     (Thread/sleep (long (:poll-ms opts))))))]
    (.setName worker "{d.app}-retry-worker")
    (.start worker)
    running))

(defmethod ig/halt-key! ::loop [_ running]
  (reset! running false))
"""


def _worker_test(d: _Draw) -> str:
    t = d.table
    cap0 = d.caps[0]
    return f"""(ns {d.ns}.delivery.retry-worker-test
  (:require [clojure.test :refer [deftest is testing use-fixtures]]
            [next.jdbc :as jdbc]
            [{d.ns}.delivery.retry-worker :as sut]
            [{d.ns}.test-system :as ts]))

(use-fixtures :each ts/with-clean-db)

(deftest claims-due-rows
  (ts/insert-retry! {{:due-in-minutes -1}})
  (ts/insert-retry! {{:due-in-minutes -2}})
  (ts/insert-retry! {{:due-in-minutes 5}})
  (jdbc/with-transaction [tx (ts/ds)]
    (is (= 2 (count (sut/claim-due! tx 10))))))

(deftest locked-rows-are-skipped
  (ts/insert-retry! {{:due-in-minutes -1}})
  (jdbc/with-transaction [held (ts/ds)]
    (is (= 1 (count (sut/claim-due! held 10))))
    (jdbc/with-transaction [other (ts/ds)]
      (is (empty? (sut/claim-due! other 10))))))

(deftest keeps-delivery-id-across-tries
  (let [row (ts/insert-retry! {{:due-in-minutes -1}})
        seen (ts/capture-posts! (constantly 503) #(sut/run-once! (ts/ctx)))]
    (ts/make-due! (:{t}/id row))
    (let [again (ts/capture-posts! (constantly 503) #(sut/run-once! (ts/ctx)))]
      (is (= (get-in (first seen) [:headers "{d.header}"])
             (get-in (first again) [:headers "{d.header}"]))))))

(deftest gives-up-after-max
  (let [row (ts/insert-retry! {{:due-in-minutes -1 :attempt 99}})]
    (ts/capture-posts! (constantly 500) #(sut/run-once! (ts/ctx)))
    (is (= "dead" (ts/state-of (:{t}/id row))))))

(deftest backoff-never-exceeds-cap
  (let [opts (ts/retry-opts)]
    (is (<= (sut/backoff-ms 30 opts) (* {cap0} 60 1000)))))

(deftest gone-pauses-subscription
  (let [row (ts/insert-retry! {{:due-in-minutes -1}})]
    (ts/capture-posts! (constantly 410) #(sut/run-once! (ts/ctx)))
    (testing "the row stops and the subscription is paused"
      (is (= "gone" (ts/state-of (:{t}/id row))))
      (is (some? (ts/{d.pause.replace("_", "-")} (:{t}/subscription_id row)))))))
"""


def _test_helpers(d: _Draw) -> str:
    t, p = d.table, d.pause
    return f"""(defn retry-opts [] (:retry @config))

(defn ctx [] {{:ds (ds) :client nil :opts (retry-opts)}})

(defn insert-retry!
  [{{:keys [due-in-minutes attempt] :or {{attempt 0}}}}]
  (let [sub (insert-subscription! {{:url "http://localhost:9/hook"}})]
    (jdbc/execute-one! (ds) ["INSERT INTO {t} (subscription_id, delivery_id, body, attempt,
                                next_attempt_at)
                              VALUES (?, gen_random_uuid(), '{{}}'::jsonb, ?,
                                now() + make_interval(mins => ?))
                              RETURNING *"
                             (:subscriptions/id sub) attempt due-in-minutes])))

(defn make-due! [id]
  (jdbc/execute-one! (ds) ["UPDATE {t} SET next_attempt_at = now() WHERE id = ?" id]))

(defn state-of [id]
  (:{t}/state (jdbc/execute-one! (ds) ["SELECT state FROM {t} WHERE id = ?" id])))

(defn {p.replace("_", "-")} [subscription-id]
  (:subscriptions/{p}
   (jdbc/execute-one! (ds) ["SELECT {p} FROM subscriptions WHERE id = ?" subscription-id])))

(defn capture-posts!
  "Runs f while hato's post answers (status-fn url); returns the requests it saw."
  [status-fn f]
  (let [seen (atom [])]
    (with-redefs [http/post (fn [url opts]
                              (swap! seen conj (assoc opts :url url))
                              {{:status (status-fn url)}})]
      (f))
    @seen))

"""


# --- the session being written -----------------------------------------------------------------


_SYSTEM = """You are Amp, an AI coding agent made by Sourcegraph. You work in the user's workspace \
through the tools you are given and carry software engineering tasks through to the end.

# How you work
- Plan work of more than one step with todo_write and keep the list current: mark an item \
in-progress when you start it and completed as soon as it is done, not in batches.
- For hard design, review or debugging questions, consult the oracle, and tell the user that \
you are doing so.
- Search by concept with finder; use Grep and glob for exact text and file names, and Read for \
files and directories. Make independent tool calls in parallel.
- After changing code, run the build, lint and test commands the project documents in \
AGENTS.md. If you cannot find them, ask.
- File tools take absolute paths. Give Bash a `cwd` instead of running `cd`.
- Never assume a library is available: check deps.edn, package.json or their kin first, and do \
not add dependencies the user did not ask for. Follow the conventions of the code around you and \
do not add comments to explain a change.
- Do not commit, push or open pull requests unless the user asks.

# Communication
Be concise and direct; answer in GitHub-flavored Markdown, with no flattery and no emojis. Link \
to the files you mention with file:// URLs (add #L12 or #L12-L30 for lines) rather than printing \
bare paths. Keep a final summary to one or two short paragraphs.

# Environment
Today's date: {date}
Working directory: {root}
Workspace root folder: {root}
Operating system: {os}
Repository: https://github.com/{org}/{app}
Amp Thread URL: https://ampcode.com/threads/{thread}

Directory listing of the user's workspace paths (cached):
<directoryListing>
{root} (current working directory)
{listing}
</directoryListing>

# AGENTS.md
{agents}"""

_TOP = (".clj-kondo/", ".github/", "dev/", "doc/", "log/", "resources/", "src/", "test/",
        ".gitignore", "AGENTS.md", "README.md", "build.clj", "deps.edn",
        "docker-compose.yml")  # fmt: skip


def _agents_md(d: _Draw) -> str:
    return f"""# {d.app}

Webhook fan-out service: takes internal events, signs them and POSTs them to customer endpoints.

## Commands
- Tests: `clojure -X:test` (needs the compose Postgres: `docker compose up -d db`, port 5433)
- Lint: `clojure -M:lint`
- Format check: `clojure -M:fmt`
- REPL: `clojure -M:dev:test` then `(user/go)`

## Layout
- `src/{d.ns}/http/` Reitit routes and handlers
- `src/{d.ns}/delivery/` outgoing webhook delivery
- `resources/migrations/` migratus migrations (`<timestamp>-<name>.up.sql` / `.down.sql`)
- `resources/config.edn` Aero config, profiles :dev :test :prod"""


class _Writer:
    """One session of the story, with `per_slot` chars of filler at each `pad`."""

    def __init__(self, d: _Draw, seed: int, per_slot: int, forbidden: Sequence[str]) -> None:
        self.d = d
        self.seed = seed
        self.per_slot = per_slot
        self.forbidden = tuple(f.casefold() for f in forbidden)
        self.words = random.Random(seed * 7919 + 17)
        listing = "\n".join(
            ("└ " if k == len(_TOP) - 1 else "├ ") + name for k, name in enumerate(_TOP)
        )
        os_line = (
            "darwin (macOS 15.1) on arm64"
            if d.os_name == "darwin"
            else "linux (Ubuntu 24.04.1 LTS) on x64"
        )
        self.s = Session(
            rng=random.Random(seed * 104729 + 3),
            system=_SYSTEM.format(
                date="Tue Nov 17 2026",
                root=d.root,
                os=os_line,
                org=d.org,
                app=d.app,
                thread=d.thread,
                listing=listing,
                agents=_agents_md(d),
            ),
        )
        self.files: dict[str, str] = {
            "deps.edn": _deps_edn(),
            f"src/{d.ns}/delivery/inline_retry.clj": _inline_retry(d),
            f"src/{d.ns}/delivery/sender.clj": _sender(d),
            f"src/{d.ns}/http/webhooks.clj": _webhooks(d),
            "resources/config.edn": _config_edn(d),
            f"src/{d.ns}/system.clj": _system(d),
            f"test/{d.ns}/test_system.clj": _test_system(d),
        }
        self.todos: list[dict[str, str]] = []
        self.todo_ids: set[str] = set()
        self.last_edit: tuple[str, str, str] | None = None
        self.slot = 0
        self.weight_done = 0.0
        self.filler_chars = 0

    # --- tools, as Amp answers them ------------------------------------------------------------

    def _call_id(self) -> str:
        alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        return "toolu_vrtx_01" + "".join(self.s.rng.choice(alphabet) for _ in range(22))

    def calls(
        self,
        batch: Sequence[tuple[str, dict[str, Any], str]],
        text: str = "",
        *,
        filler: bool = False,
    ) -> None:
        """One assistant message making the calls in `batch` (in parallel), then their results."""
        ids = [self._call_id() for _ in batch]
        self.s.messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {"id": i, "type": "function",
                     "function": {"name": name, "arguments": json.dumps(args)}}
                    for i, (name, args, _) in zip(ids, batch, strict=True)
                ],
            }
        )  # fmt: skip
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        for i, (_, _, result) in zip(ids, batch, strict=True):
            self.s.messages.append({"role": "tool", "tool_call_id": i, "content": result})
            if filler:
                self.s.filler_at.add(len(self.s.messages) - 1)

    def call(self, name: str, args: dict[str, Any], result: str, text: str = "") -> None:
        self.calls([(name, args, result)], text)

    def bash(self, cmd: str, output: str, code: int = 0, text: str = "") -> None:
        self.call(
            "Bash",
            {"cmd": cmd, "cwd": self.d.root},
            _json({"output": output, "exitCode": code}),
            text,
        )

    def read_result(self, rel: str, read_range: tuple[int, int] | None = None) -> str:
        lines = self.files[rel].split("\n")
        if read_range is None:
            content = _numbered(lines)
        else:
            first, last = read_range
            parts = []
            if first > 1:
                parts.append(f"[... omitted lines 1 to {first - 1} ...]")
            parts.append(_numbered(lines[first - 1 : last], first))
            if last < len(lines):
                parts.append(f"[... omitted lines {last + 1} to {len(lines)} ...]")
            content = "\n".join(parts)
        return _json({"absolutePath": self.d.path(rel), "content": content})

    def read_args(self, rel: str, read_range: tuple[int, int] | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"path": self.d.path(rel)}
        if read_range is not None:
            args["read_range"] = list(read_range)
        return args

    def read(self, rel: str, read_range: tuple[int, int] | None = None, text: str = "") -> None:
        self.call("Read", self.read_args(rel, read_range), self.read_result(rel, read_range), text)

    def _diff(self, path: str, before: str, after: str) -> tuple[str, list[int]]:
        a, b = before.split("\n"), after.split("\n")
        hunks = []
        changed: list[int] = []
        for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
            i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
            lines = [f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"]
            for tag, x1, x2, y1, y2 in group:
                if tag == "equal":
                    lines += [" " + line for line in a[x1:x2]]
                    continue
                lines += ["-" + line for line in a[x1:x2]]
                lines += ["+" + line for line in b[y1:y2]]
                changed += [y1 + 1, max(y1 + 1, y2)]
            hunks.append("\n".join(lines))
        head = f"Index: {path}\n{'=' * 67}\n--- {path}\toriginal\n+++ {path}\tmodified\n"
        return "```diff\n" + head + "\n".join(hunks) + "\n```", [min(changed), max(changed)]

    def edit(
        self, rel: str, old: str, new: str, *, replace_all: bool = False, text: str = ""
    ) -> None:
        before = self.files[rel]
        if not replace_all and before.count(old) != 1:
            raise ProbeLeakError(f"{FAMILY}: edit of {rel} matches {before.count(old)} times")
        after = before.replace(old, new) if replace_all else before.replace(old, new, 1)
        self.files[rel] = after
        path = self.d.path(rel)
        diff, line_range = self._diff(path, before, after)
        args: dict[str, Any] = {"path": path, "old_str": old, "new_str": new}
        if replace_all:
            args["replace_all"] = True
        self.last_edit = (rel, before, after)
        self.call("edit_file", args, _json({"diff": diff, "lineRange": line_range}), text)

    def undo(self, text: str = "") -> None:
        assert self.last_edit is not None
        rel, before, after = self.last_edit
        self.last_edit = None
        self.files[rel] = before
        path = self.d.path(rel)
        diff, _ = self._diff(path, after, before)
        self.call("undo_edit", {"path": path}, diff, text)

    def create(self, rel: str, content: str, text: str = "") -> None:
        self.files[rel] = content
        path = self.d.path(rel)
        self.call("create_file", {"path": path, "content": content},
                  f"Successfully created file {path}", text)  # fmt: skip

    def todo_write(self, items: Sequence[tuple[str, str]], text: str = "") -> None:
        """The whole list: (content, status); ids stay with their item."""
        todos = []
        for content, status in items:
            assert status in _STATUS, status
            known = [t["id"] for t in self.todos if t["content"] == content]
            number = known[0] if known else str(len(self.todo_ids) + 1)
            self.todo_ids.add(number)
            todos.append({"id": number, "content": content, "status": status})
        self.todos = todos
        self.call("todo_write", {"todos": todos}, _json(todos), text)

    def report(self) -> str:
        """Where the Clojure CLI says it wrote the full report of an error."""
        number = self.s.rng.randrange(10**18, 10**19)
        if self.d.os_name == "darwin":
            return f"/var/folders/7g/kq3_x1cd2x7b6c7pl0rr0000gn/T/clojure-{number}.edn"
        return f"/tmp/clojure-{number}.edn"

    def line_of(self, rel: str, needle: str) -> int:
        """The 1-based number of the first line of `rel` holding `needle`."""
        lines = self.files[rel].split("\n")
        return next(k + 1 for k, line in enumerate(lines) if needle in line)

    def user(self, text: str) -> None:
        self.s.user(text)

    def say(self, text: str) -> None:
        self.s.say(text)

    def pick(self, *options: str) -> str:
        return self.words.choice(options)

    def link(self, rel: str, lines: str = "") -> str:
        name = rel.rsplit("/", 1)[-1]
        return f"[{name}](file://{self.d.path(rel)}{'#' + lines if lines else ''})"

    # --- filler ----------------------------------------------------------------------------------

    def pad(self, weight: float = 1.0) -> None:
        """Filler the agent reads between the events: other namespaces, logs, listings. The
        filler budget is spent by weight, each slot making up what the ones before overshot."""
        self.slot += 1
        self.weight_done += weight
        if self.per_slot <= 0:
            return
        rng = random.Random(self.seed * 1_000_003 + self.slot)
        owed = int(self.per_slot * self.weight_done) - self.filler_chars
        kinds = ["read", "range", "log", "grep", "read", "glob", "range", "gitlog"]
        k = rng.randrange(len(kinds))
        while owed > 600:
            for _ in range(30):
                batch = self._filler(rng, kinds[k % len(kinds)])
                text = "\n".join(f"{n}{json.dumps(a)}\n{r}" for n, a, r in batch).casefold()
                if not any(f in text for f in self.forbidden):
                    break
            else:
                raise ProbeLeakError(f"{FAMILY} seed {self.seed}: no clean filler")
            before = self.s.chars
            self.calls(batch, filler=True)
            self.filler_chars += self.s.chars - before
            owed = int(self.per_slot * self.weight_done) - self.filler_chars
            k += 1

    def _filler(self, rng: random.Random, kind: str) -> list[tuple[str, dict[str, Any], str]]:
        d = self.d
        area = rng.choice(_FILL_AREAS)
        if area == "http":
            rel = f"src/{d.ns}/http/{rng.choice(_HTTP_FILL)}.clj"
        else:
            rel = f"src/{d.ns}/{area}/{'_'.join(rng.sample(_FILL, 2))}.clj"
        ns = rel[4:-4].replace("/", ".").replace("_", "-")
        if kind in ("read", "range"):
            n = rng.randint(60, 140) if kind == "read" else rng.randint(160, 320)
            lines = _clj_namespace(rng, ns, n).split("\n")
            path = d.path(rel)
            if kind == "read":
                return [
                    (
                        "Read",
                        {"path": path},
                        _json({"absolutePath": path, "content": _numbered(lines)}),
                    )
                ]
            first = rng.randint(20, len(lines) // 2)
            last = min(len(lines), first + rng.randint(60, 120))
            content = (f"[... omitted lines 1 to {first - 1} ...]\n"
                       + _numbered(lines[first - 1 : last], first)
                       + (f"\n[... omitted lines {last + 1} to {len(lines)} ...]"
                          if last < len(lines) else ""))  # fmt: skip
            return [("Read", {"path": path, "read_range": [first, last]},
                     _json({"absolutePath": path, "content": content}))]  # fmt: skip
        if kind == "log":
            lines = sorted(_log_line(rng, d) for _ in range(rng.randint(40, 80)))
            cmd = f"tail -n {len(lines)} log/{d.app}.log"
            return [("Bash", {"cmd": cmd, "cwd": d.root},
                     _json({"output": "\n".join(lines) + "\n", "exitCode": 0}))]  # fmt: skip
        if kind == "gitlog":
            lines = [f"{hexid(rng, 7)} {rng.choice(_VERBS)} {' '.join(rng.sample(_FILL, 2))}"
                     for _ in range(rng.randint(20, 35))]  # fmt: skip
            return [("Bash", {"cmd": f"git log --oneline -n {len(lines)}", "cwd": d.root},
                     _json({"output": "\n".join(lines) + "\n", "exitCode": 0}))]  # fmt: skip
        if kind == "glob":
            pattern = f"src/{d.ns}/{area}/**/*.clj"
            paths = sorted({d.path(f"src/{d.ns}/{area}/{'_'.join(rng.sample(_FILL, 2))}.clj")
                            for _ in range(rng.randint(8, 20))})  # fmt: skip
            return [("glob", {"filePattern": pattern}, _json(paths))]
        word = rng.choice(_FILL)
        hits = []
        for _ in range(rng.randint(12, 30)):
            other = f"src/{d.ns}/{area}/{'_'.join(rng.sample(_FILL, 2))}.clj"
            hits.append(f"{d.path(other)}:{rng.randint(3, 240)}:  "
                        f"{_clj_line(rng, word)}")  # fmt: skip
        return [("Grep", {"pattern": word, "path": d.path(f"src/{d.ns}/{area}")}, _json(hits))]


_VERBS = ("fix", "add", "tidy", "rename", "bump", "drop", "test", "docs:", "refactor", "log")


def _kebab(*words: str) -> str:
    return "-".join(words)


def _clj_line(rng: random.Random, word: str) -> str:
    other = rng.choice(_FILL)
    return rng.choice(
        (
            f"(let [{word} (get-{other} ds {word}-id)]",
            f"(defn {word}-by-{other} [ds {other}-id]",
            f"[:{word}_id :uuid]",
            f"(map :{word}/{other}_id rows)",
            f'(log/info "{word} {other} refreshed" {{:{word} n}})',
        )
    )


def _clj_namespace(rng: random.Random, ns: str, lines: int) -> str:
    """A plausible Clojure namespace of about `lines` lines, made of filler words only."""
    out = [
        f"(ns {ns}",
        "  (:require [clojure.string :as str]",
        "            [honey.sql :as sql]",
        "            [malli.core :as m]",
        "            [next.jdbc :as jdbc]",
        "            [taoensso.timbre :as log]))",
        "",
    ]
    while len(out) < lines:
        a, b, c = rng.sample(_FILL, 3)
        form = rng.randrange(4)
        if form == 0:
            out += [
                f"(defn {_kebab(a, 'for', b)}",
                f'  "The {a} rows of one {b}, newest first."',
                f"  [ds {b}-id]",
                "  (jdbc/execute! ds (sql/format {:select [:*]",
                f"                                 :from [:{a}]",
                f"                                 :where [:= :{b}_id {b}-id]",
                "                                 :order-by [[:created_at :desc]]})))",
                "",
            ]
        elif form == 1:
            out += [
                f"(defn- normalize-{a}",
                f"  [{{:keys [{b} {c}] :as {a}}}]",
                f"  (assoc {a}",
                f"         :{b} (some-> {b} str/trim str/lower-case)",
                f"         :{c} (or {c} :unknown)))",
                "",
            ]
        elif form == 2:
            out += [
                f"(def {a.capitalize()}{b.capitalize()}",
                "  [:map",
                f"   [:{a}-id :uuid]",
                f"   [:{b} [:string {{:min 1}}]]",
                f"   [:{c} {{:optional true}} [:maybe :int]]])",
                "",
            ]
        else:
            out += [
                f"(defn {_kebab('refresh', a)}!",
                f"  [ds {b}]",
                f'  (let [rows (jdbc/execute! ds ["SELECT * FROM {a} WHERE {b}_id = ?"',
                f"                                (:id {b})])]",
                f'    (log/debug "refreshing {a}" {{:{b} (:id {b}) :rows (count rows)}})',
                "    (doseq [row rows]",
                f'      (jdbc/execute-one! ds ["UPDATE {a} SET {c}_at = now() WHERE id = ?"',
                "                             (:id row)]))))",
                "",
            ]
    return "\n".join(out[:lines])


def _log_line(rng: random.Random, d: _Draw) -> str:
    level = rng.choice(("INFO", "INFO", "DEBUG", "INFO", "WARN"))
    a, b = rng.sample(_FILL, 2)
    where = rng.choice((f"{d.ns}.http.middleware", f"{d.ns}.accounts.core", f"{d.ns}.db",
                        f"{d.ns}.invoicing.jobs"))  # fmt: skip
    msg = rng.choice(
        (
            f"GET /api/{a}/{rng.randint(1000, 99999)} 200 in {rng.randint(2, 300)}ms",
            f"POST /api/{a} 201 in {rng.randint(5, 400)}ms",
            f"refreshed {a} for {b} {{:rows {rng.randint(1, 900)}}}",
            f"pool stats {{:active {rng.randint(0, 9)}, :idle {rng.randint(1, 10)}}}",
        )
    )
    return (
        f"26-11-{rng.randint(10, 16):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d} web-{rng.randint(1, 3)} {level} [{where}:{rng.randint(10, 200)}]"
        f" - {msg}"
    )


def write(seed: int, tokens: int) -> EvalSession:
    """A session of about `tokens` tokens."""
    d = _Draw.of(random.Random(seed))
    bare = _Writer(d, seed, 0, ())
    _story(bare)
    forbidden = sorted(
        {
            line.strip()
            for f in bare.s.facts
            for form in (*f.probe, *f.stale)
            for line in form.split("\n")
            if line.strip()
        }
    )
    budget = int(tokens * _CHARS_PER_TOKEN) - bare.s.chars
    w = _Writer(d, seed, max(0, int(budget / bare.weight_done)), forbidden)
    _story(w)
    return finish_session(w.s, family=FAMILY, seed=seed)


def _story(w: _Writer) -> None:
    d = w.d
    s = w.s
    a, b, c = d.tries
    cap0, cap1 = d.caps
    cap0_text, cap1_text = f"{cap0} minutes", f"{cap1} minutes"
    sender = f"src/{d.ns}/delivery/sender.clj"
    inline = f"src/{d.ns}/delivery/inline_retry.clj"
    hooks = f"src/{d.ns}/http/webhooks.clj"
    worker = f"src/{d.ns}/delivery/retry_worker.clj"
    worker_test = f"test/{d.ns}/delivery/retry_worker_test.clj"
    test_system = f"test/{d.ns}/test_system.clj"
    system = f"src/{d.ns}/system.clj"
    config = "resources/config.edn"
    up = f"resources/migrations/{d.migration}.up.sql"
    down = f"resources/migrations/{d.migration}.down.sql"
    compat = f"src/{d.ns}/compat/"

    t_map = "Map where deliveries are retried today"
    t_design = "Settle on a retry design that survives a restart"
    t_sender = "Move sender.clj off the inline retry"
    t_backoff = "Exponential backoff with jitter, capped"
    t_metrics = "Prometheus counter for dead-lettered deliveries"
    t_tests = "Tests for the retry path"
    t_replay = "Admin endpoint to replay a dead letter by id"

    # 1. The ask, with deps.edn attached.
    deps_lines = w.files["deps.edn"].split("\n")
    attached = (
        "<attached_files>\n```file://" + d.path("deps.edn") + "\n" + _numbered(deps_lines[:10])
        + f"\n... ({len(deps_lines) - 10} more lines)\n```\n</attached_files>\n\n"
    )  # fmt: skip
    w.user(
        attached
        + w.pick(
            f"@deps.edn our webhook sender retries inline: deliver! posts, sleeps, posts again, "
            f"all on the request thread. When a customer endpoint gets flaky we pin the Jetty "
            f"pool and everything else slows down. I want the retries out of the request path. "
            f"A delivery should get {a} before we give up on it, and the wait between tries "
            f"should never go past {cap0_text}.\n\n"
            f"A few rules. Nothing new in deps.edn, so no carmine or any other Redis "
            f"client; vendor review takes weeks. Prod is still on {d.jdk}, so whatever you write "
            f"has to run there. And every try has to carry the same {d.header} value as the "
            f"first one, customers dedupe on it.",
            f"@deps.edn Retries for outgoing webhooks happen inline right now (deliver! sleeps "
            f"between posts on the request thread), so one slow customer ties up Jetty workers "
            f"for everyone. Please move retries off the request path. Give each delivery "
            f"{a}, and don't let the gap between two tries grow past {cap0_text}.\n\n"
            f"What can't move: no added dependencies (carmine was turned down last quarter and "
            f"anything else new goes through a weeks-long review). It must still run on "
            f"{d.jdk}, that's what prod has. The {d.header} header has to stay identical across "
            f"tries of one delivery because customers dedupe on it.",
        )
    )
    s.fact("constraint", "No new dependency in deps.edn: no carmine or other Redis client",
           ["carmine"])  # fmt: skip
    s.fact("constraint", f"Must keep running on {d.jdk}", [d.jdk])
    s.fact("constraint", f"Every try of a delivery carries the same {d.header} value",
           [d.header])  # fmt: skip
    s.fact("changed_value", f"A delivery is given up after {c}", [c], stale=[a, b])
    s.fact("changed_value", f"The wait between tries never goes past {cap1_text}", [cap1_text],
           stale=[cap0_text])  # fmt: skip

    w.todo_write(
        [(t_map, "in-progress"), (t_design, "todo"), (t_sender, "todo"), (t_backoff, "todo"),
         (t_metrics, "todo"), (t_tests, "todo")],
        text=w.pick("I'll map the delivery path first.", "Starting with where retries happen now."),
    )  # fmt: skip
    loop_at = w.line_of(inline, "(defn post-with-retry!")
    sleep_at = w.line_of(inline, "Thread/sleep")
    deliver_at = w.line_of(sender, "(defn deliver!")
    publish_at = w.line_of(hooks, "(sender/deliver! ctx event)")
    inline_len = len(w.files[inline].split("\n"))
    w.call(
        "finder",
        {"query": "Where are outgoing webhook deliveries sent and retried, and which namespaces "
                  "call that code? Done when you have the retry loop and all of its callers."},
        f"The retry loop is `post-with-retry!` in {d.path(inline)} (lines {loop_at}-"
        f"{inline_len}): it POSTs with hato, and on 429 or 5xx sleeps `(* 1000 (Math/pow 2 n))` "
        f"ms on the calling thread (line {sleep_at}) before posting again, up to `tries` "
        f"times.\n\nIts only caller is `deliver!` in {d.path(sender)} (line {deliver_at}), "
        f"which passes `tries` 3 and builds the headers, including the delivery id, once per "
        f"subscription.\n\n`deliver!` is called from `publish` in {d.path(hooks)} (line "
        f"{publish_at}), the POST /internal/events handler, after the event is stored and "
        f"before the response is written, so the whole retry loop runs inside the request.",
    )  # fmt: skip
    entries = ["inline_retry.clj", "sender.clj", "signing.clj"]
    delivery_dir = d.path(f"src/{d.ns}/delivery")
    w.calls(
        [("Read", {"path": delivery_dir},
          _json({"absolutePath": delivery_dir, "content": "\n".join(entries),
                 "isDirectory": True, "directoryEntries": entries}))]
        + [("Read", w.read_args(rel), w.read_result(rel)) for rel in (sender, inline, hooks)]
    )  # fmt: skip
    s.fact("file_read", f"Read {hooks}, the events handler that calls deliver!", [hooks],
           required=False)  # fmt: skip
    w.pad(2.6)

    w.call(
        "Grep",
        {"pattern": "Thread/sleep", "path": d.path("src")},
        _json([f"{d.path(inline)}:{sleep_at}:" + w.files[inline].split("\n")[sleep_at - 1]]),
    )
    w.say(
        w.pick(
            f"The only sleep is in {w.link(inline, f'L{sleep_at}')}, called from "
            f"{w.link(sender, f'L{deliver_at}')}, which runs inside the events handler.\n\n"
            f"My suggestion: keep `deliver!` as it is but post once, and hand every failed "
            f"post to a core.async `go-loop` that parks on `(timeout backoff)` between tries "
            f"and re-posts with the same headers. core.async is already in deps.edn, and a "
            f"parked go block holds no thread, so Jetty is free as soon as the first post "
            f"returns.",
            f"Everything funnels through {w.link(inline, f'L{loop_at}-L{inline_len}')}; its "
            f"sleep runs on the request thread because {w.link(sender, f'L{deliver_at}')} "
            f"calls it from the handler.\n\n"
            f"What I'd do: first post stays synchronous, and a failure goes to a `go-loop` per "
            f"delivery (core.async is already a dependency) that waits with `(timeout ms)`, "
            f"re-posts with the original headers and stops after the last try. No threads "
            f"are held while it waits.",
        )
    )
    w.user(
        w.pick(
            "That won't hold up. We run three pods behind the LB and deploys roll them twice "
            "a day; anything parked in a go-loop just evaporates on restart. The retries need "
            "to survive the process going away.",
            "No — we have three replicas and roll them on every deploy, which is a couple of "
            "times a day. In-memory retries die with the pod. Whatever holds a pending retry "
            "has to outlive the process.",
        )
    )
    w.say(
        w.pick(
            "Then the pending tries need durable state. Quartzite with its JDBC job store "
            "would do it: one scheduled job per failed delivery, persisted in Postgres, picked "
            "up by whichever pod is alive when it fires.",
            "Understood, they have to be persisted. A scheduler with a persistent store fits "
            "that: Quartzite's JDBC job store keeps each pending try as a job in Postgres and "
            "any live pod runs it when it comes due.",
        )
    )
    w.user(
        w.pick(
            "Quartzite is a new dependency. Same rule as carmine.",
            "quartzite isn't in deps.edn either, so same answer as carmine: no.",
        )
    )
    w.call(
        "oracle",
        {
            "task": "Design durable retries for outgoing webhooks in this Clojure service "
            "using only what deps.edn already has (Postgres via next.jdbc/HoneySQL, "
            "migratus, Integrant, hato). Three pods, rolled twice a day.",
            "context": f"Today deliver! retries inline with Thread/sleep inside the request. "
            f"Retries must survive restarts, must not add dependencies, must run on "
            f"{d.jdk}, and every try must reuse the first try's {d.header}. "
            f"Rejected: core.async go-loops (lost on restart), Quartzite (new "
            f"dependency).",
            "files": [d.path(sender), d.path(inline), d.path("deps.edn")],
        },
        "Use Postgres as the queue. It is already the system of record and every pod can "
        "reach it.\n\n1. `deliver!` inserts one row per (event, subscription) with a "
        "`delivery_id` generated once, the body, `attempt 0` and `next_attempt_at now()`, and "
        "returns. The request path does one insert per subscription and no HTTP.\n2. Each pod "
        "runs one worker thread (an Integrant key) that polls in a transaction: `SELECT ... "
        "WHERE state = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT n "
        "FOR UPDATE SKIP LOCKED`. SKIP LOCKED means pods never wait on each other and never "
        "claim the same row; a pod that dies mid-batch releases its locks when the connection "
        "drops, so the rows come back.\n3. Send, then in the same transaction mark the row "
        "delivered, reschedule it (`attempt + 1`, `next_attempt_at = now() + backoff`), or "
        "dead-letter it once the attempt limit is reached.\n4. Headers are rebuilt from the "
        "row, so the delivery id is identical on every try.\n\nCaveats: sends are at least "
        "once (a crash between the POST and the commit repeats a try), which the stable id "
        "covers; keep an index on `next_attempt_at` filtered to pending rows; and decide what a "
        "permanent failure like 410 means before it burns through every try.",
        text=w.pick(
            "I'm going to ask the oracle for a design that stays inside what deps.edn has.",
            "Let me consult the oracle on a design that needs nothing new.",
        ),
    )
    w.pad(2.2)
    w.say(
        w.pick(
            f"Going with the oracle's design: a new `{d.table}` table in Postgres. `deliver!` "
            f"only inserts rows; a worker thread in each pod claims due rows with "
            f"`FOR UPDATE SKIP LOCKED`, posts, and reschedules or gives up in the same "
            f"transaction. Nothing new in deps.edn, it survives restarts, and the "
            f"{d.header} value lives in the row so every try reuses it.",
            f"Retries become rows in a new `{d.table}` table then, claimed by a poller "
            f"in every pod with `SELECT … FOR UPDATE SKIP LOCKED`: pods never block each "
            f"other and a killed pod's rows are picked up by the next poll. Only existing "
            f"libraries, and the delivery id is stored once per row.",
        )
    )
    s.fact("decision", f"Retries are rows in a {d.table} table claimed with FOR UPDATE SKIP "
           f"LOCKED (not core.async go-loops, not Quartzite)", [d.table, "SKIP LOCKED"],
           stale=["go-loop", "Quartzite"])  # fmt: skip
    w.todo_write(
        [(t_map, "completed"), (t_design, "completed"), (t_sender, "todo"),
         (t_backoff, "in-progress"), (t_metrics, "todo"), (t_tests, "todo")]
    )  # fmt: skip
    s.fact("todo", t_design, [t_design], required=False)
    w.call(
        "read_web_page",
        {"url": "https://github.com/seancorfield/honeysql/blob/develop/doc/clause-reference.md",
         "objective": "How to write SELECT ... FOR UPDATE SKIP LOCKED (with a table alias) in "
                      "HoneySQL 2"},
        "## for\n\nThe `:for` clause takes a vector: the lock strength, optionally the "
        "tables to lock, then optional modifiers.\n\n```clojure\n(sql/format {:select [:*] "
        ":from [[:jobs :j]] :for [:update :j :skip-locked]})\n;;=> [\"SELECT * FROM jobs AS j "
        "FOR UPDATE OF j SKIP LOCKED\"]\n```\n\nStrengths: `:update`, `:no-key-update`, "
        "`:share`, `:key-share`. Modifiers: `:nowait`, `:skip-locked`. The clause is rendered "
        "after `LIMIT` / `OFFSET`.",
    )  # fmt: skip
    w.say(
        w.pick(
            f"One behaviour to settle before I write the worker: an endpoint answering "
            f"410 Gone. Retrying that until the limit is wasted work, so I'd stop at once, "
            f"set `{d.pause}` on the subscription so nothing new is queued for it, and mark "
            f"the row `gone`. OK?",
            f"Question on permanent failures: when a customer endpoint returns 410 Gone I'd "
            f"not retry at all — mark the row `gone` and stamp `{d.pause}` on the "
            f"subscription so it stops receiving events until someone re-enables it. Fine "
            f"with you?",
        )
    )
    s.fact("decision", f"A 410 Gone stops retrying and sets {d.pause} on the subscription",
           ["410 Gone", d.pause])  # fmt: skip
    w.user(
        w.pick(
            "Yes, pause it. Ops can unpause by hand.",
            "yep, do that — support can flip it back when the customer fixes their URL.",
        )
    )
    w.pad(1.2)

    existing = [
        "20250304101500-create-subscriptions", "20250304101600-create-events",
        "20250611142000-add-subscription-types", "20251002090500-events-created-at-index",
    ]  # fmt: skip
    w.call("glob", {"filePattern": "resources/migrations/*.sql"},
           _json([d.path(f"resources/migrations/{m}.{k}.sql") for m in existing
                  for k in ("up", "down")]))  # fmt: skip
    w.create(up, _migration_up(d), text=w.pick("Migration first.", "Starting with the table."))
    w.create(down, _migration_down(d))
    s.fact("file_created", f"Created the migration {up}", [up])
    w.create(worker, _worker(d))
    s.fact("file_created", f"Created {worker}, the worker that claims due rows", [worker])
    lines = w.files[worker].split("\n")
    at = next(k for k, line in enumerate(lines) if f"next_attempt_at {d.symbol}" in line)
    col = lines[at].index(d.symbol) + 1
    require = f'clojure -M -e "(require \'{d.ns}.delivery.retry-worker)"'
    w.bash(
        require,
        f"Syntax error compiling at ({d.ns}/delivery/retry_worker.clj:{at + 1}:{col}).\n"
        f"Unable to resolve symbol: {d.symbol} in this context\n\nFull report at:\n"
        f"{w.report()}\n",
        1,
    )
    s.fact("error_resolved", f"Compile error in retry_worker.clj: Unable to resolve symbol: "
           f"{d.symbol}", [f"Unable to resolve symbol: {d.symbol}"], required=False)  # fmt: skip
    w.edit(
        worker,
        f":next_attempt_at {d.symbol}}}",
        ':next_attempt_at [:+ [:now] [:* [:interval "1 millisecond"] wait-ms]]}',
        text=w.pick(
            f"`{d.symbol}` was never bound; the SQL should compute it from `wait-ms`.",
            f"Left a placeholder `{d.symbol}` in `reschedule!`. Computing it in SQL instead.",
        ),
    )
    w.bash(require, "")
    w.pad(1.0)

    # A side question: which subscription took the 429 storm.
    w.user(
        w.pick(
            "Side question while you're in there: which subscription was it that ate the 429 "
            "storm on Tuesday? Ops wants to reach out to them.",
            "unrelated, but quick: on Tuesday afternoon one subscription got hammered with 429s "
            "— which one? ops wants to talk to the customer.",
        )
    )
    storm = []
    for k in range(14):
        sub = d.sub_id if k % 5 else f"sub_{token(w.s.rng, 6)}"
        storm.append(
            f"{d.path('log/' + d.app + '.log.2026-11-10')}:{8812 + 37 * k}:26-11-10 14:"
            f"{2 + 3 * k:02d}:{w.s.rng.randint(10, 59)} web-{1 + k % 3} WARN "
            f'[{d.ns}.delivery.inline-retry:19] - delivery retry {{:sub "{sub}", :status 429, '
            f":n {1 + k % 2}}}"
        )
    w.call("Grep", {"pattern": ":status 429", "path": d.path("log")}, _json(storm))
    w.say(
        w.pick(
            f"`{d.sub_id}` ({d.customer}): 11 of the 14 throttled retries on Tuesday between "
            f"14:02 and 14:41 were for it; the other three were one-offs.",
            f"It was `{d.sub_id}`, the {d.customer} endpoint — it accounts for 11 of the 14 "
            f"429 retries logged on the 10th, all between 14:02 and 14:41.",
        )
    )
    s.fact("identifier", f"The subscription hit by Tuesday's 429 storm is {d.sub_id}",
           [d.sub_id])  # fmt: skip
    w.user(
        w.pick(
            f"Thanks. And before you touch sender: don't change anything under {compat} — "
            f"billing vendors those namespaces straight out of our repo, and they call "
            f"deliver! with its current arity.",
            f"Also, heads-up: {compat} is off limits. Billing copies those namespaces into "
            f"their service as-is and calls deliver! with the arity it has today.",
        )
    )
    s.fact("constraint", f"Do not change anything under {compat}; keep deliver!'s arity",
           [compat])  # fmt: skip
    w.call(
        "todo_read",
        {},
        _json(w.todos),
        text=w.pick(
            "Nothing under compat/ changes, and deliver! keeps its arity.",
            "Understood: compat/ stays untouched and deliver! keeps its signature.",
        ),
    )
    w.edit(sender, f"[{d.ns}.delivery.inline-retry :as retry]",
           f"[{d.ns}.delivery.retry-worker :as worker]")  # fmt: skip
    old_deliver = (
        "      (retry/post-with-retry! client\n"
        "                              {:sub-id  (:id sub)\n"
        "                               :url     (:url sub)\n"
        "                               :body    body\n"
        "                               :headers (headers (random-uuid) (subs/sign sub body))}\n"
        "                              3))))"
    )
    w.edit(
        sender,
        old_deliver,
        "      (worker/enqueue! ds {:subscription-id (:id sub)\n"
        "                           :body            body}))))",
    )
    w.undo(
        text=w.pick(
            f"That edit leaves the id to the worker, which would mint a new {d.header} on "
            f"every try. Undoing it and storing the id in the row instead.",
            f"Wrong: without a `:delivery-id` in the row the worker would generate one per "
            f"try, and {d.header} would change between tries. Reverting that edit.",
        )
    )
    w.edit(
        sender,
        old_deliver,
        "      (worker/enqueue! ds {:subscription-id (:id sub)\n"
        "                           :delivery-id     (random-uuid)\n"
        "                           :body            body}))))",
    )
    w.edit(
        sender,
        '(defn- headers\n  [delivery-id signature]\n  {"Content-Type" "application/json"\n'
        f'   "{d.header}" (str delivery-id)\n   "X-{d.title}-Signature" signature}})\n\n',
        "",
    )
    s.fact("file_modified", f"Modified {sender}: deliver! enqueues rows instead of posting",
           [sender])  # fmt: skip
    w.pad(1.0)

    w.bash(
        f"git rm {inline} test/{d.ns}/delivery/inline_retry_test.clj",
        f"rm '{inline}'\nrm 'test/{d.ns}/delivery/inline_retry_test.clj'\n",
        text=w.pick("Nothing calls the inline retry now.", "The old loop has no callers left."),
    )
    s.fact("file_deleted", f"Deleted {inline} (and its test) with git rm", [inline])
    w.edit(
        system,
        f"            [{d.ns}.db :as db]\n",
        f"            [{d.ns}.db :as db]\n            [{d.ns}.delivery.retry-worker :as "
        f"retry-worker]\n",
    )
    w.edit(
        system,
        "     ::server/jetty  {:port (get-in c [:http :port])\n"
        "                      :handler (ig/ref ::server/handler)}}))",
        "     ::server/jetty  {:port (get-in c [:http :port])\n"
        "                      :handler (ig/ref ::server/handler)}\n"
        "     ::retry-worker/loop {:ds (ig/ref ::db/pool)\n"
        "                          :client (ig/ref ::server/client)\n"
        "                          :opts (:retry c)}}))",
    )
    s.fact("file_modified", f"Modified {system}: the retry worker is an Integrant key",
           [system])  # fmt: skip
    cap0_ms = cap0 * 60_000
    w.edit(
        config,
        "            :signing-secret #env WEBHOOK_SIGNING_SECRET}\n",
        "            :signing-secret #env WEBHOOK_SIGNING_SECRET}\n"
        f" :retry    {{:max-attempts {a.split()[0]}\n"
        "            :base-ms      2000\n"
        f"            :cap-ms       {cap0_ms}\n"
        "            :batch-size   50\n"
        "            :poll-ms      1000}\n",
    )
    s.fact("file_modified", f"Modified {config}: the :retry settings", [config])
    w.todo_write(
        [(t_map, "completed"), (t_design, "completed"), (t_sender, "completed"),
         (t_backoff, "completed"), (t_metrics, "todo"), (t_tests, "in-progress")]
    )  # fmt: skip
    w.pad(1.0)

    # Tests: red (the relation is missing), then green.
    w.read(test_system)
    w.edit(
        test_system,
        '  (jdbc/execute! (ds) ["TRUNCATE subscriptions, events RESTART IDENTITY CASCADE"])',
        f'  (jdbc/execute! (ds) ["TRUNCATE subscriptions, events, {d.table} RESTART IDENTITY '
        'CASCADE"])',
    )
    w.edit(
        test_system,
        "            [next.jdbc :as jdbc]))",
        "            [hato.client :as http]\n            [next.jdbc :as jdbc]))",
    )
    w.edit(test_system, "(defn with-clean-db [f]", _test_helpers(d) + "(defn with-clean-db [f]")
    w.create(worker_test, _worker_test(d))
    s.fact("file_created", f"Created {worker_test}", [worker_test])
    n_green = d.other_tests + 6
    a_green = d.other_assertions + 9
    test_namespaces = [f"{d.ns}.delivery.retry-worker-test", f"{d.ns}.http.webhooks-test",
                       f"{d.ns}.signing-test", f"{d.ns}.subscriptions-test"]  # fmt: skip
    errors = []
    for name in (
        "claims-due-rows",
        "locked-rows-are-skipped",
        "keeps-delivery-id-across-tries",
        "gives-up-after-max",
        "backoff-never-exceeds-cap",
        "gone-pauses-subscription",
    ):
        errors.append(
            f"ERROR in ({name}) (QueryExecutorImpl.java:2725)\nUncaught exception, not in "
            f"assertion.\nexpected: nil\n  actual: org.postgresql.util.PSQLException: ERROR: "
            f'relation "{d.table}" does not exist\n  Position: 31\n at org.postgresql.core.v3'
            f".QueryExecutorImpl.receiveErrorResponse (QueryExecutorImpl.java:2725)\n    org."
            f"postgresql.core.v3.QueryExecutorImpl.processResults (QueryExecutorImpl.java:2412)\n"
            f"    next.jdbc.result_set$stmt__GT_result_set.invokeStatic (result_set.clj:664)\n"
            f"    {d.ns}.test_system$with_clean_db.invokeStatic (test_system.clj:16)\n"
        )
    red = (
        f'\nRunning tests in #{{"test"}}\n\nTesting {test_namespaces[0]}\n\n'
        + "\n".join(errors)
        + "".join(f"\nTesting {n}\n" for n in test_namespaces[1:])
        + f"\nRan {n_green} tests containing {d.other_assertions + 6} assertions.\n"
        f"0 failures, 6 errors.\nExecution error (ExceptionInfo) at cognitect.test-runner.api/"
        f"test (api.clj:30).\nTest failures or errors occurred.\n\nFull report at:\n"
        f"{w.report()}\n"
    )
    w.bash("clojure -X:test", red, 1)
    s.fact("error_resolved", f"Tests errored: PSQLException, relation {d.table} does not exist "
           "in the test database", ["PSQLException: ERROR: relation"], required=False)  # fmt: skip
    w.edit(
        test_system,
        "(defn with-clean-db [f]",
        "(defn migrate-once [f]\n"
        "  (migratus/migrate {:store :database\n"
        '                     :migration-dir "migrations"\n'
        "                     :db {:datasource (ds)}})\n"
        "  (f))\n\n"
        "(defn with-clean-db [f]",
        text=w.pick(
            "The test database was never migrated; the new table only exists after migratus "
            "runs. Adding a once-fixture that migrates.",
            "Nothing migrates the test database, so the table isn't there. Migrating once "
            "before the suite.",
        ),
    )
    w.edit(
        test_system,
        "            [hato.client :as http]\n",
        "            [hato.client :as http]\n            [migratus.core :as migratus]\n",
    )
    w.edit(
        worker_test,
        "(use-fixtures :each ts/with-clean-db)",
        "(use-fixtures :once ts/migrate-once)\n(use-fixtures :each ts/with-clean-db)",
    )
    green_lines = "".join(f"\nTesting {n}\n" for n in test_namespaces)
    green_summary = f"Ran {n_green} tests containing {a_green} assertions.\n0 failures, 0 errors."
    w.bash("clojure -X:test", f'\nRunning tests in #{{"test"}}\n{green_lines}\n{green_summary}\n')
    w.call(
        "Task",
        {"description": "Lint and format check",
         "prompt": f"In {d.root}, run `clojure -M:lint` and `clojure -M:fmt` and fix only what "
                   f"they report in {worker}, {sender}, {system} and {worker_test} (formatting "
                   f"and unused bindings; no behaviour changes). Return what you changed and the "
                   f"final output of both commands."},
        f"Ran both commands.\n\n- `clojure -M:lint` reported one warning, "
        f"`{sender}:{deliver_at + 2}:12: warning: unused binding client`: `deliver!` no longer "
        f"posts, so it only needs `ds`. Dropped `client` from the destructuring (the arity is "
        f"unchanged). Re-run: `linting took 418ms, errors: 0, warnings: 0`.\n"
        f"- `clojure -M:fmt` said {sender} would be reformatted (the `enqueue!` map was aligned "
        f"one column off). Fixed with `clojure -M:fmt fix {sender}`; `check` now reports all files "
        f"formatted correctly.\n\nNo other files touched.",
    )  # fmt: skip
    w.todo_write(
        [(t_map, "completed"), (t_design, "completed"), (t_sender, "completed"),
         (t_backoff, "completed"), (t_metrics, "todo"), (t_tests, "completed")]
    )  # fmt: skip
    w.say(
        w.pick(
            f"Retries are off the request path: {w.link(sender)} inserts into `{d.table}`, "
            f"{w.link(worker)} polls and sends, and the suite is green ({n_green} tests). Left "
            f"on the list: the Prometheus counter.",
            f"Done with the core: `deliver!` only enqueues, the worker in {w.link(worker)} "
            f"does the sending, the migration adds `{d.table}` and `{d.pause}`, and all "
            f"{n_green} tests pass. The metrics item is still open.",
        )
    )
    w.pad(0.8)

    # The user moves the tries, drops the metrics and adds the replay endpoint.
    w.user(
        w.pick(
            f"Product pushed back: {a} is stingy for the EU customers on flaky links. Make it {b}.",
            f"change of plan from product — {a} is too few for the EU folks whose endpoints "
            f"flap. bump it to {b}.",
        )
    )
    w.edit(config, f":max-attempts {a.split()[0]}\n", f":max-attempts {b.split()[0]}\n",
           text=w.pick("Updating the config.", "Changing :max-attempts."))  # fmt: skip
    w.edit(
        worker_test,
        "(deftest backoff-never-exceeds-cap",
        "(deftest gives-up-at-configured-max\n"
        "  (let [limit (:max-attempts (ts/retry-opts))\n"
        "        row   (ts/insert-retry! {:due-in-minutes -1 :attempt (- limit 2)})]\n"
        "    (ts/capture-posts! (constantly 500) #(sut/run-once! (ts/ctx)))\n"
        "    (is (= \"pending\" (ts/state-of (:" + d.table + "/id row))))\n"
        "    (ts/make-due! (:" + d.table + "/id row))\n"
        "    (ts/capture-posts! (constantly 500) #(sut/run-once! (ts/ctx)))\n"
        "    (is (= \"dead\" (ts/state-of (:" + d.table + "/id row))))))\n\n"
        "(deftest backoff-never-exceeds-cap",
        text=w.pick("And a test that reads the limit from config, so the next change can't "
                    "drift from it.",
                    "Adding a test pinned to the configured limit rather than a literal."),
    )  # fmt: skip
    w.say(w.pick(f"Deliveries now get {b}.", f"Set to {b}; the new test covers the limit."))
    w.user(
        w.pick(
            "Also take the Prometheus counter off the list: platform is adding dead-letter "
            "metrics for every service next sprint, no point doing ours. What I do want, "
            "after this lands, is a small admin endpoint to replay a dead letter by id. Put "
            "that on the list.",
            "drop the metrics item, platform is rolling out dead-letter metrics for all "
            "services next sprint. instead, add an admin endpoint to replay a dead letter by "
            "id — not now, just track it.",
        )
    )
    w.todo_write(
        [(t_map, "completed"), (t_design, "completed"), (t_sender, "completed"),
         (t_backoff, "completed"), (t_tests, "completed"), (t_replay, "todo")],
        text=w.pick("Updated the list.", "List updated."),
    )  # fmt: skip
    s.fact("todo", t_metrics, [t_metrics], required=False)
    s.fact("todo", t_replay, [t_replay])
    w.pad(0.7)

    w.user(
        w.pick(
            f"One more knob: {cap0_text} as the longest gap is too short for the payroll "
            f"customers, their endpoints sit behind maintenance windows. Let's allow up to "
            f"{cap1_text} between tries.",
            f"the payroll customers have maintenance windows longer than {cap0_text}, so the "
            f"wait between tries should be allowed to grow to {cap1_text}.",
        )
    )
    cap1_ms = cap1 * 60_000
    w.edit(config, f":cap-ms       {cap0_ms}\n", f":cap-ms       {cap1_ms}\n")
    n_final = n_green + 1
    a_final = a_green + 2
    fail_line = next(
        k + 1
        for k, line in enumerate(w.files[worker_test].split("\n"))
        if line.startswith("    (is (<= (sut/backoff-ms 30 opts)")
    )
    failing = (
        f"FAIL in (backoff-never-exceeds-cap) (retry_worker_test.clj:{fail_line})\n"
        f"expected: (<= (sut/backoff-ms 30 opts) (* {cap0} 60 1000))\n"
        f"  actual: (not (<= {d.backoff_seen} {cap0_ms}))\n"
    )
    final_summary = f"Ran {n_final} tests containing {a_final} assertions.\n1 failures, 0 errors."

    def final_run() -> str:
        return (
            f'\nRunning tests in #{{"test"}}\n\nTesting {test_namespaces[0]}\n\n{failing}'
            + "".join(f"\nTesting {n}\n" for n in test_namespaces[1:])
            + f"\n{final_summary}\nExecution error (ExceptionInfo) at "
            f"cognitect.test-runner.api/test (api.clj:30).\nTest failures or errors "
            f"occurred.\n\nFull report at:\n{w.report()}\n"
        )

    w.bash("clojure -X:test", final_run(), 1)
    w.todo_write(
        [(t_map, "completed"), (t_design, "completed"), (t_sender, "completed"),
         (t_backoff, "in-progress"), (t_tests, "completed"), (t_replay, "todo")],
        text=w.pick(
            f"`backoff-never-exceeds-cap` still asserts against {cap0} minutes as a literal, so "
            f"the longer cap trips it. The fix is to compare against `(:cap-ms opts)`; do you "
            f"also want the first retry capped, or only the window?",
            f"The cap test hard-codes the old {cap0}-minute bound ({w.link(worker_test)}), so "
            f"it fails now that the window can grow further. I can point it at `(:cap-ms "
            f"opts)`. Should the cap also bound the very first retry?",
        ),
    )  # fmt: skip
    s.fact("todo", t_backoff, [t_backoff])
    w.pad(0.6)

    w.user(
        w.pick(
            f"Talked to product again. Let's say {c} after all, the EU thing was one customer.",
            f"ok, product changed their mind once more: {c} after all. it was a single EU "
            f"customer.",
        )
    )
    w.edit(config, f":max-attempts {b.split()[0]}\n", f":max-attempts {c.split()[0]}\n",
           text=w.pick("Back down.", "Changing it again."))  # fmt: skip
    w.say(w.pick(f"Now {c}.", f"Config says {c} now."))
    w.user(
        w.pick(
            "Before you push: which commit brought the inline retry in? I want to link it in "
            "the PR description.",
            "what commit introduced the inline retry originally? want to reference it in the PR.",
        )
    )
    w.bash(
        f"git log --diff-filter=A --format='%h %an %ad %s' --date=short -- {inline}",
        f"{d.commit} {d.org.split('-')[0].capitalize()} Ops 2025-03-21 {d.commit_subject}\n",
    )
    w.say(
        w.pick(
            f'{d.commit} — "{d.commit_subject}", from March 2025.',
            f'It came in with {d.commit} ("{d.commit_subject}", 2025-03-21).',
        )
    )
    s.fact("identifier", f"The inline retry came in with commit {d.commit}", [d.commit])
    w.user(
        w.pick(
            "Leave the cap test red for now. I need product to tell us whether the cap applies "
            "to the first retry too, we'll sort it on Monday. Commit what you have, push, and "
            "open a draft PR.",
            "keep that failing test as is, I'll get an answer from product on the first-retry "
            "question monday. commit, push the branch, open the PR as a draft.",
        )
    )
    w.bash("clojure -X:test", final_run(), 1,
           text=w.pick("Running the suite once more before committing.",
                       "One last run first."))  # fmt: skip
    s.fact("test_status", f"Last run: {final_summary} (the cap test)",
           final_summary.split("\n"), stale=[green_summary.split("\n", maxsplit=1)[0]])  # fmt: skip
    s.fact("error_open", "backoff-never-exceeds-cap still fails: it asserts the old cap",
           ["backoff-never-exceeds-cap"])  # fmt: skip
    w.bash(f"git switch -c {d.branch}", f"Switched to a new branch '{d.branch}'\n")
    w.bash(
        'git add -A && git commit -m "delivery: durable retries via a Postgres queue"',
        f"[{d.branch} {hexid(w.s.rng, 7)}] delivery: durable retries via a Postgres queue\n"
        f" 11 files changed, 268 insertions(+), 61 deletions(-)\n create mode 100644 {up}\n"
        f" create mode 100644 {down}\n create mode 100644 {worker}\n"
        f" delete mode 100644 {inline}\n create mode 100644 {worker_test}\n"
        f" delete mode 100644 test/{d.ns}/delivery/inline_retry_test.clj\n",
    )
    w.bash(
        f"git push -u origin {d.branch}",
        f"remote: \nremote: Create a pull request for '{d.branch}' on GitHub by visiting:\n"
        f"remote:      https://github.com/{d.org}/{d.app}/pull/new/{d.branch}\nremote: \n"
        f"To github.com:{d.org}/{d.app}.git\n * [new branch]      {d.branch} -> {d.branch}\n"
        f"branch '{d.branch}' set up to track 'origin/{d.branch}'.\n",
    )
    w.bash(
        'gh pr create --draft --title "Durable webhook retries" --body "Moves retries off '
        f"the request path into a Postgres-backed queue. Replaces the inline retry from "
        f"{d.commit}. One test is red on purpose until product answers the first-retry "
        'question."',
        f"\nCreating draft pull request for {d.branch} into main in {d.org}/{d.app}\n\n"
        f"https://github.com/{d.org}/{d.app}/pull/{d.pr}\n",
    )
    last = w.pick(
        f"The draft is up as #{d.pr}. I'll pick the first-retry question up when you're back.",
        f"Pushed; draft PR #{d.pr} is open and waiting on product's answer.",
    )
    w.say(last)
    s.fact("last_message", "The last message: the draft PR is open", [f"#{d.pr}"])
