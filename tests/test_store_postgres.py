"""The PostgreSQL store: several replicas sharing one database, its migrations, recall on a
tsvector, clear errors; and `SessionLog`'s tests (test_log.py) run again on it.

Every test runs on a real PostgreSQL 16 from the `pgserver` package (a unix socket in a
temporary directory, one server per test run, a fresh schema per test); all skip when
pgserver or psycopg is not installed.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("psycopg")

import psycopg

from compaction.exceptions import SessionNotFoundError, StoreError
from compaction.log import SessionLog
from compaction.store import SessionStore, open_store
from compaction.store import postgres as pg
from compaction.store.postgres import PostgresStore

# SessionLog's contract, collected again here: with this module's `path` and `store`
# fixtures each of them runs on PostgreSQL.
from .helpers import calls, results, say
from .test_log import (
    test_a_compaction_that_changes_nothing_records_nothing,
    test_a_resumed_log_appends_and_compacts_again,
    test_a_stale_log_cannot_append_twice_what_another_writer_logged,
    test_compact_uses_the_sessions_model_and_dialect,
    test_open_creates_or_resumes,
    test_recall_and_original_through_the_log,
    test_record_needs_this_logs_current_view,
    test_resume_after_a_compaction_that_replaced_the_newest_messages,
    test_resume_after_a_summary_and_truncation,
    test_resume_after_masking_gives_the_view_the_model_last_saw,
    test_resume_without_compaction,
    test_sync_after_a_compaction_compares_with_the_full_history,
    test_sync_appends_only_what_is_new,
    test_sync_notices_provider_data_changes,
    test_sync_refuses_a_diverged_history_and_writes_nothing,
    test_verify_catches_an_edit_in_the_middle,
)
from .test_store import FIELDS, mask_compactor, padding, tool_session

SHARED_LOG_TESTS = (
    test_a_compaction_that_changes_nothing_records_nothing,
    test_a_stale_log_cannot_append_twice_what_another_writer_logged,
    test_a_resumed_log_appends_and_compacts_again,
    test_compact_uses_the_sessions_model_and_dialect,
    test_open_creates_or_resumes,
    test_recall_and_original_through_the_log,
    test_record_needs_this_logs_current_view,
    test_resume_after_a_compaction_that_replaced_the_newest_messages,
    test_resume_after_a_summary_and_truncation,
    test_resume_after_masking_gives_the_view_the_model_last_saw,
    test_resume_without_compaction,
    test_sync_after_a_compaction_compares_with_the_full_history,
    test_sync_appends_only_what_is_new,
    test_sync_notices_provider_data_changes,
    test_sync_refuses_a_diverged_history_and_writes_nothing,
    test_verify_catches_an_edit_in_the_middle,
)


@pytest.fixture
def path(postgres_location: str) -> str:
    """What test_log.py calls the store's path: here a PostgreSQL URL."""
    return postgres_location


@pytest.fixture
def store(postgres_location: str) -> Iterator[SessionStore]:
    with open_store(postgres_location) as opened:
        yield opened


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_every_log_test_runs_here_too() -> None:
    from . import test_log

    everything = {name for name in vars(test_log) if name.startswith("test_")}
    assert {t.__name__ for t in SHARED_LOG_TESTS} == everything


def test_open_store_gives_a_postgres_store_named_without_its_password(
    postgres_server: str,
) -> None:
    url = with_password(postgres_server, "hunter2")
    with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        assert isinstance(store, SessionStore)
        assert "hunter2" not in store.path
        assert store.path.startswith("postgresql://postgres@/postgres?")
    scheme_alias = "postgres://" + postgres_server.partition("://")[2]
    with open_store(scheme_alias) as store:
        assert isinstance(store, PostgresStore)


# -- replicas ----------------------------------------------------------------------------------


def test_two_replicas_appending_to_one_session_keep_seqs_contiguous(
    postgres_location: str,
) -> None:
    """Two store objects (two proxy replicas), two threads each, appending batches to the
    same session while a fifth thread records compactions: every message is logged once, the
    seqs are 1..N without a gap, each writer's messages keep their order, and the
    compactions are numbered 1, 2, … ."""
    receipt = (
        mask_compactor()
        .compact(SessionLog.open(open_store(":memory:"), "r", **FIELDS).conversation(), force=True)
        .receipt
    )
    replicas = [open_store(postgres_location), open_store(postgres_location)]
    replicas[0].create_session("shared")
    errors: list[BaseException] = []
    returned: dict[str, list[int]] = {}
    barrier = threading.Barrier(5)

    def writer(store: SessionStore, name: str) -> None:
        try:
            barrier.wait()
            seqs: list[int] = []
            for batch in range(20):
                size = 1 + batch % 3
                seqs += store.append(
                    "shared", [say("user", f"{name}:{batch}:{i}") for i in range(size)]
                )
            returned[name] = seqs
        except BaseException as e:
            errors.append(e)

    numbers: list[int] = []

    def compacter(store: SessionStore) -> None:
        try:
            barrier.wait()
            for _ in range(10):
                last = store.session("shared").messages
                if last >= 2:
                    numbers.append(
                        store.record_compaction(
                            "shared", view=[last], replaced=[1], receipt=receipt, after_seq=last
                        )
                    )
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(replicas[n % 2], f"w{n}")) for n in range(4)]
    threads.append(threading.Thread(target=compacter, args=(replicas[1],)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        logged = replicas[0].messages("shared")
        expected_total = 4 * sum(1 + b % 3 for b in range(20))
        assert [s for s, _ in logged] == list(range(1, expected_total + 1))
        by_seq = {s: m.text for s, m in logged}
        for name, seqs in returned.items():
            assert seqs == sorted(seqs)
            texts = [by_seq[s] for s in seqs]
            assert texts == [f"{name}:{b}:{i}" for b in range(20) for i in range(1 + b % 3)], (
                "each writer's messages are logged once, in its order, at the seqs returned"
            )
        assert sorted(numbers) == list(range(1, len(numbers) + 1)) and numbers
        assert [r.number for r in replicas[1].compactions("shared")] == sorted(numbers)
        assert replicas[0].integrity() == [] and replicas[1].integrity() == []
        (hit,) = replicas[0].recall(by_seq[1], session_id="shared")
        assert hit.seq == 1, "the archived first message, archived once"
    finally:
        for replica in replicas:
            replica.close()


def test_replicas_opening_a_new_database_at_once_migrate_it_once(postgres_server: str) -> None:
    failures: list[BaseException] = []
    for trial in range(3):
        url = new_schema(postgres_server, f"race{trial}")
        barrier = threading.Barrier(4)

        def open_it(url: str = url, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                open_store(url).close()
            except BaseException as e:
                failures.append(e)

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        with psycopg.connect(url) as db:
            rows = db.execute("SELECT id, name FROM _migrations ORDER BY id").fetchall()
        assert rows == list(enumerate([name for name, _ in pg.MIGRATIONS], start=1))


def test_postgres_migrations_are_named_and_ordered_and_upgrade_an_old_schema(
    postgres_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [name for name, _ in pg.MIGRATIONS]
    assert [int(n.split("_", 1)[0]) for n in names] == list(range(1, len(names) + 1))
    with psycopg.connect(postgres_location, autocommit=True) as db:
        monkeypatch.setattr(pg, "MIGRATIONS", pg.MIGRATIONS[:1])
        assert pg.migrate(db) == names[:1]
        db.execute(
            "INSERT INTO sessions (id, created_at, updated_at) VALUES ('old-session', 1.0, 1.0)"
        )
        monkeypatch.undo()
        assert pg.migrate(db) == names[1:]
        assert pg.migrate(db) == []
    with open_store(postgres_location) as store:
        assert store.session("old-session").messages == 0
        assert store.append("old-session", [say("user", "still here")]) == [1]


# -- recall ------------------------------------------------------------------------------------


def test_recall_finds_a_value_buried_in_a_compacted_tool_output(postgres_location: str) -> None:
    with open_store(postgres_location) as store:
        log = SessionLog.open(store, "deep", **FIELDS)
        buried = padding("scan", 400) + "\nthe parcel went to Ingrid Vasquez\n" + padding("x", 400)
        huge = padding("bulk", 9000) + "\nlate marker zz-9977-late\n"
        assert len(huge) > pg._INDEXED_CHARS
        with_nul = "a\x00b nulword\n" + padding("nul")
        log.append(*tool_session()[:2])
        log.append(calls(("b1", "bash", {"command": "nul"})), *results(("b1", with_nul)))
        log.append(calls(("b2", "bash", {"command": "scan"})), *results(("b2", buried)))
        log.append(calls(("b3", "bash", {"command": "bulk"})), *results(("b3", huge)))
        log.append(say("assistant", "Scanned."), say("user", "And now?"))
        log.compact(mask_compactor(), force=True, fields=FIELDS)
        in_view = " ".join(m.text + str(m.tool_results) for m in log.messages)
        assert "Vasquez" not in in_view and "zz-9977" not in in_view and "nulword" not in in_view

        (hit,) = store.recall("ingrid VASQ")
        assert (hit.session_id, hit.seq, hit.role) == ("deep", 6, "tool")
        assert "[Ingrid] [Vasquez]" in hit.snippet
        assert len(hit.snippet) < 300, "a snippet, not the whole output"
        assert hit.score > 0
        assert store.message("deep", hit.seq).tool_results[0].text == buried
        # Past what the tsvector indexes, the substring search still finds it.
        (late,) = store.recall("zz-9977-late")
        assert late.seq == 8 and "[zz-9977-late]" in late.snippet
        (nul,) = store.recall("nulword")
        assert nul.seq == 4
        assert store.message("deep", 4).tool_results[0].text == with_nul


def test_recall_ranks_the_better_match_first(postgres_location: str) -> None:
    with open_store(postgres_location) as store:
        log = SessionLog.open(store, "rank", **FIELDS)
        log.append(say("user", "Start."))
        log.append(say("assistant", "orchid once, among many other words " + padding("x", 5)))
        log.append(say("assistant", "orchid orchid orchid: the orchid report"))
        log.append(say("user", "Next."), say("assistant", "ok"), say("user", "go"))
        state = log.conversation(**FIELDS)
        store.record_compaction(
            "rank",
            view=[1, 4, 5, 6],
            replaced=[2, 3],
            receipt=mask_compactor().compact(state, force=True).receipt,
        )
        hits = store.recall("orchid")
        assert [h.seq for h in hits] == [3, 2]
        assert hits[0].score > hits[1].score
        assert "[orchid]" in hits[0].snippet


# -- errors and connections ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("postgresql://alice:s3cret-pw@127.0.0.1:1/sessions?connect_timeout=3", "refused"),
        ("postgres://alice:s3cret-pw@127.0.0.1:1/sessions?colour=blue", "invalid"),
    ],
)
def test_an_unreachable_server_or_a_bad_url_is_a_store_error_without_the_password(
    url: str, reason: str
) -> None:
    with pytest.raises(StoreError) as caught:
        open_store(url)
    message = str(caught.value)
    assert "://alice@127.0.0.1:1/sessions" in message, "names the user, host and database"
    assert "s3cret-pw" not in message
    assert reason in message.lower()


def test_a_missing_database_is_a_store_error_without_the_password(postgres_server: str) -> None:
    url = with_password(postgres_server, "hunter2").replace("/postgres?", "/no_such_db?")
    with pytest.raises(StoreError, match="no_such_db") as caught:
        open_store(url)
    assert "hunter2" not in str(caught.value)
    assert "does not exist" in str(caught.value)
    in_query = postgres_server.replace("/postgres?", "/no_such_db?") + "&password=hunter2"
    with pytest.raises(StoreError) as caught:
        open_store(in_query)
    assert "hunter2" not in str(caught.value)


def test_a_dropped_connection_fails_one_call_then_reconnects(
    postgres_server: str, postgres_location: str
) -> None:
    with open_store(postgres_location) as store:
        store.create_session("s")
        store.append("s", [say("user", "before")])
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'compaction' AND pid <> pg_backend_pid()"
            )
        with pytest.raises(StoreError, match="cannot read the session store"):
            store.session("s")
        assert store.append("s", [say("user", "after")]) == [2]
        assert [m.text for _, m in store.messages("s")] == ["before", "after"]
    with pytest.raises(StoreError, match="closed"):
        store.session("s")


def test_writes_are_all_or_nothing(postgres_location: str) -> None:
    with open_store(postgres_location) as store:
        store.create_session("s")
        with pytest.raises(StoreError, match=r"NUL|0x00"):
            # The second message cannot be stored (a role with NUL): the first is not
            # logged either.
            store.append("s", [say("user", "fine"), _with_role(say("user", "bad"), "us\x00er")])
        assert store.messages("s") == []
        assert store.append("s", [say("user", "fine")]) == [1]
        with pytest.raises(SessionNotFoundError):
            store.append("missing", [say("user", "x")])


# -- the proxy, two replicas -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_two_proxy_replicas_continue_one_session(postgres_location: str) -> None:
    """Two proxy apps, each with its own store object on one database: a session compacted
    by the first continues on the second from the compacted view."""
    from .proxy.conftest import running
    from .proxy.test_compaction import POLICY, chat, chat_history

    history = chat_history(12)
    with open_store(postgres_location) as first_store, open_store(postgres_location) as other:
        async with running(compaction=POLICY, store=first_store) as first:
            response = await first.client.post("/v1/chat/completions", json=chat(history))
            assert response.status_code == 200
            compacted = first.upstream.last.json()["messages"]
            assert len(json.dumps(compacted)) < len(json.dumps(history)) / 2, "compacted"
            assert (await first.status())["sessions"][0]["compactions"] == 1

        reply = {"role": "assistant", "content": "Step 13 is next."}
        follow_up = {"role": "user", "content": "Go on with step 13."}
        async with running(compaction=POLICY, store=other) as second:
            response = await second.client.post(
                "/v1/chat/completions", json=chat([*history, reply, follow_up])
            )
            assert response.status_code == 200
            sent = second.upstream.last.json()["messages"]
        assert sent == [*compacted, reply, follow_up], "the first replica's view, continued"
        (session,) = other.sessions()
        assert session.messages == len(history) + 2
        assert session.compactions == 1


@pytest.mark.anyio
async def test_replicas_taking_turns_on_one_session_log_each_message_once(
    postgres_location: str,
) -> None:
    """Requests of one session alternate between two live replicas: each notices what the
    other appended (its append is refused as stale, it reads the session again), so every
    message is logged once, in order."""
    from .proxy.conftest import running
    from .proxy.test_compaction import POLICY, chat

    history: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    with open_store(postgres_location) as store_a, open_store(postgres_location) as store_b:
        async with (
            running(compaction=POLICY, store=store_a) as a,
            running(compaction=POLICY, store=store_b) as b,
        ):
            for turn, replica in enumerate([a, b, a, b, a]):
                history.append({"role": "user", "content": f"Question {turn}?"})
                response = await replica.client.post("/v1/chat/completions", json=chat(history))
                assert response.status_code == 200
                history.append({"role": "assistant", "content": f"Answer {turn}."})
        (session,) = store_a.sessions()
        logged = [m.text for _, m in store_a.messages(session.id)]
    assert logged == [m["content"] for m in history[:-1]]


# -- helpers -------------------------------------------------------------------------------------


def with_password(url: str, password: str) -> str:
    scheme, _, rest = url.partition("://")
    user, _, host = rest.partition("@")
    return f"{scheme}://{user.split(':')[0]}:{password}@{host}"


def new_schema(server: str, label: str) -> str:
    schema = f"{label}_{secrets.token_hex(4)}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    return f"{server}&options=-csearch_path%3D{schema}"


def _with_role(message: Any, role: str) -> Any:
    from dataclasses import replace

    return replace(message, role=role)
