"""The session store: migrations, the append-only log, views, recall, locations.

Every test taking `store` runs on both backends, SQLite and PostgreSQL (the `store_location`
fixture; PostgreSQL on a pgserver of the test run, skipped without it). The PostgreSQL-only
tests (replicas sharing a store, its migrations, its errors) are in test_store_postgres.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.exceptions import ConfigError, SessionNotFoundError, StoreError
from compaction.log import SessionLog
from compaction.messages import Message
from compaction.serialize import message_to_dict
from compaction.store import (
    SessionStore,
    SQLiteStore,
    default_store_path,
    migrations,
    open_store,
)
from compaction.strategies import MaskStrategy

from .helpers import calls, results, say

FIELDS = {"model": "gpt-4o", "dialect": "openai"}
MIGRATION_NAMES = [name for name, _ in migrations.MIGRATIONS]


def padding(label: str, lines: int = 40) -> str:
    return "\n".join(f"{label} line {n}: nothing of note happened here" for n in range(lines))


def tool_session() -> list[Message]:
    """A task whose early tool outputs carry values said nowhere else (a build id, a port)."""
    messages = [
        say("system", "You are a build agent."),
        say("user", "Deploy the service and tell me when it is up."),
        calls(("c1", "bash", {"command": "make build"}), text="Building."),
        *results(("c1", padding("build") + "\nbuild-id 7f3a9c21 written to dist/\n")),
        calls(("c2", "read_config", {"path": "deploy.json"})),
        *results(("c2", '{"service": "api", "port": 54817, "replicas": 3}\n' + padding("config"))),
    ]
    for i in range(4):
        messages.append(calls((f"l{i}", "tail_log", {"n": 50}), text=f"Checking logs, pass {i}."))
        messages += results((f"l{i}", padding(f"log{i}")))
    messages.append(say("assistant", "The deploy is running."))
    messages.append(say("user", "Is it up yet?"))
    return messages


def mask_compactor(keep_recent_n: int = 2) -> Compactor:
    return Compactor(CompactionConfig(keep_recent_n=keep_recent_n, strategies=(MaskStrategy(),)))


def dicts(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, object]]:
    return [message_to_dict(m) for m in messages]


@pytest.fixture
def store(store_location: str) -> Iterator[SessionStore]:
    with open_store(store_location) as opened:
        yield opened


# -- migrations -------------------------------------------------------------------------------


def test_migrations_are_named_and_ordered() -> None:
    numbers = [int(name.split("_", 1)[0]) for name in MIGRATION_NAMES]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(set(MIGRATION_NAMES)) == len(MIGRATION_NAMES)


def test_a_new_store_records_every_migration_once(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    open_store(path).close()
    open_store(path).close()  # a second open applies nothing
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT id, name FROM _migrations ORDER BY id").fetchall()
        assert migrations.migrate(db) == []
    db.close()
    assert rows == list(enumerate(MIGRATION_NAMES, start=1))


def test_a_store_at_an_older_schema_is_upgraded_and_keeps_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
    assert migrations.migrate(db) == MIGRATION_NAMES[:1]
    db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('old-session', 1.0, 1.0)")
    db.close()
    monkeypatch.undo()

    with open_store(path) as store:
        assert store.session("old-session").messages == 0
        store.append("old-session", [say("user", "still here")])
        assert store.compactions("old-session") == []
    with sqlite3.connect(path) as db:
        names = [n for (n,) in db.execute("SELECT name FROM _migrations ORDER BY id")]
    db.close()
    assert names == MIGRATION_NAMES


def test_processes_opening_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    # Several proxy workers or CLI runs may create the store file at the same moment.
    failures: list[BaseException] = []
    for trial in range(8):
        path = tmp_path / f"race{trial}.db"
        barrier = threading.Barrier(4)

        def open_it(path: Path = path, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                open_store(path).close()
            except BaseException as e:
                failures.append(e)

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with sqlite3.connect(path) as db:
            count = db.execute("SELECT count(*) FROM _migrations").fetchone()[0]
        db.close()
        assert count == len(MIGRATION_NAMES)
    assert failures == []


# -- the log ----------------------------------------------------------------------------------


def test_append_numbers_messages_per_session(store: SessionStore) -> None:
    store.create_session("a")
    store.create_session("b")
    assert store.append("a", [say("user", "1"), say("assistant", "2")]) == [1, 2]
    assert store.append("b", [say("user", "x")]) == [1]
    assert store.append("a", [say("user", "3")]) == [3]
    assert store.append("a", []) == []
    assert [(s, m.text) for s, m in store.messages("a")] == [(1, "1"), (2, "2"), (3, "3")]
    assert store.session("a").messages == 3
    assert store.session("b").messages == 1


def test_sessions_newest_first_with_counts(store: SessionStore) -> None:
    store.create_session("first", agent="coder", model="gpt-4o")
    store.create_session("second")
    store.append("first", [say("user", "latest activity")])
    listed = store.sessions()
    assert [s.id for s in listed] == ["first", "second"]
    assert (listed[0].agent, listed[0].model, listed[0].messages) == ("coder", "gpt-4o", 1)
    assert [s.id for s in store.sessions(limit=1)] == ["first"]


def test_created_ids_are_unique_and_an_existing_id_is_refused(store: SessionStore) -> None:
    ids = {store.create_session().id for _ in range(5)}
    assert len(ids) == 5
    with pytest.raises(StoreError, match="already exists"):
        store.create_session(next(iter(ids)))
    assert store.ensure_session("kept", agent="x").agent == "x"
    assert store.ensure_session("kept", agent="y").agent == "x"


@pytest.mark.parametrize("bad", ["has space", "../escape", "-leading-dash", "x" * 129])
def test_invalid_session_ids_are_refused(store: SessionStore, bad: str) -> None:
    with pytest.raises(StoreError, match="invalid session id"):
        store.create_session(bad)
    assert store.sessions() == []


def test_unknown_sessions_raise_session_not_found(store: SessionStore) -> None:
    for read in (
        lambda: store.session("nope"),
        lambda: store.view("nope"),
        lambda: store.messages("nope"),
        lambda: store.compactions("nope"),
        lambda: store.append("nope", [say("user", "x")]),
        lambda: store.message("nope", 1),
    ):
        with pytest.raises(SessionNotFoundError, match="nope"):
            read()
    store.create_session("real")
    with pytest.raises(SessionNotFoundError, match="no message 7"):
        store.message("real", 7)


# -- views ------------------------------------------------------------------------------------


def test_without_compaction_the_view_is_every_message(store: SessionStore) -> None:
    store.create_session("s")
    messages = tool_session()
    store.append("s", messages)
    view, seqs = store.view("s")
    assert list(view) == messages
    assert seqs == tuple(range(1, len(messages) + 1))


def test_after_a_compaction_the_view_is_the_record_then_later_messages(
    store: SessionStore,
) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    result = log.compact(mask_compactor(), force=True, fields=FIELDS)
    assert result.receipt.status == "compacted"
    later = [say("assistant", "It is up."), say("user", "Thanks; now the docs.")]
    log.append(*later)

    view, seqs = store.view("s")
    assert list(view[: len(result.conversation)]) == list(result.conversation.messages)
    assert list(view[len(result.conversation) :]) == later
    assert seqs[-2:] == (len(tool_session()) + 1, len(tool_session()) + 2)
    assert None in seqs, "masked placeholders are new messages, with no seq"
    (record,) = store.compactions("s")
    assert record.number == 1 and record.after_seq == len(tool_session())
    assert record.tokens_before == result.receipt.tokens_before
    assert record.tokens_after == result.receipt.tokens_after
    assert set(record.replaced) == set(range(1, len(tool_session()) + 1)) - set(seqs)
    assert set(record.replaced) == {4, 6, 8, 10, 12, 14}, "the old tool outputs"


def test_several_compactions_in_a_row(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    compactor = mask_compactor(keep_recent_n=1)
    views = []
    for round_ in range(3):
        log.append(calls((f"x{round_}", "bash", {"command": "ls"}), text=f"Round {round_}."))
        log.append(*results((f"x{round_}", padding(f"round{round_}"))))
        log.append(say("assistant", f"Listed {round_}."), say("user", f"next {round_}"))
        result = log.compact(compactor, force=True, fields=FIELDS)
        assert result.receipt.status == "compacted"
        views.append(log.messages)
    records = store.compactions("s")
    assert [r.number for r in records] == [1, 2, 3]
    assert [r.after_seq for r in records] == [4, 8, 12]
    assert store.view("s")[0] == views[-1]
    # Each record archives only what it newly replaced: no seq is archived twice.
    archived = [s for r in records for s in r.replaced]
    assert sorted(archived) == [2, 6, 10]


def test_record_compaction_refuses_seqs_outside_the_log(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    receipt = mask_compactor().compact(log.conversation(**FIELDS), force=True).receipt
    with pytest.raises(StoreError, match="outside the logged"):
        store.record_compaction("s", view=[1, 99], replaced=[2], receipt=receipt)
    with pytest.raises(StoreError, match="only 16 are logged"):
        store.record_compaction("s", view=[1], replaced=[2], receipt=receipt, after_seq=20)
    assert store.compactions("s") == []
    assert store.view("s")[0] == log.messages


def test_nothing_is_ever_deleted(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    originals = tool_session()
    log.append(*originals)
    log.compact(mask_compactor(keep_recent_n=0), force=True, fields=FIELDS)
    log.append(say("assistant", "more"))
    log.compact(Compactor(CompactionConfig(keep_recent_n=0)), target_tokens=200, fields=FIELDS)
    assert len(store.compactions("s")) == 2
    logged = store.messages("s")
    assert [s for s, _ in logged] == list(range(1, len(originals) + 2))
    assert dicts([m for _, m in logged]) == dicts([*originals, say("assistant", "more")])


# -- recall -----------------------------------------------------------------------------------


def compacted_store(store: SessionStore, session_id: str = "s") -> SessionLog:
    log = SessionLog.open(store, session_id, **FIELDS)
    log.append(*tool_session())
    log.compact(mask_compactor(), force=True, fields=FIELDS)
    assert "7f3a9c21" not in " ".join(searchable(m) for m in log.messages)
    assert "54817" not in " ".join(searchable(m) for m in log.messages)
    return log


def searchable(message: Message) -> str:
    return " ".join(p.text for p in message.tool_results) + message.text


def test_a_value_only_in_an_old_tool_output_is_recalled_exactly(store: SessionStore) -> None:
    compacted_store(store)
    (hit,) = store.recall("build-id 7f3a9c21")
    assert (hit.session_id, hit.seq, hit.role) == ("s", 4, "tool")
    assert "[7f3a9c21]" in hit.snippet
    assert store.message("s", hit.seq) == tool_session()[3]
    assert message_to_dict(store.message("s", hit.seq)) == message_to_dict(tool_session()[3])

    (port,) = store.recall("54817")
    assert port.seq == 6
    assert '"port": 54817' in store.message("s", port.seq).tool_results[0].text


def test_recall_searches_only_what_was_compacted_away(store: SessionStore) -> None:
    log = compacted_store(store)
    assert store.recall("Deploy the service") == [], "the task is still in view"
    log.append(say("user", "new value zebra-42 in view"))
    assert store.recall("zebra") == []


def test_recall_is_scoped_to_a_session_or_spans_all(store: SessionStore) -> None:
    compacted_store(store, "one")
    compacted_store(store, "two")
    assert {h.session_id for h in store.recall("7f3a9c21")} == {"one", "two"}
    assert [h.session_id for h in store.recall("7f3a9c21", session_id="two")] == ["two"]
    assert len(store.recall("line", limit=3)) == 3
    assert store.recall("7f3a9c21", session_id="unknown") == []


def test_recall_prefix_and_substring_fallback(store: SessionStore) -> None:
    compacted_store(store)
    assert [h.seq for h in store.recall("7f3a")] == [4], "word prefixes match"
    hits = store.recall("a9c2")  # inside a word: only the substring search finds it
    assert [h.seq for h in hits] == [4]
    assert "[a9c2]" in hits[0].snippet
    (json_hit,) = store.recall('"port": 54817')
    assert json_hit.seq == 6


def test_recall_of_punctuation_only_falls_back_to_substring(store: SessionStore) -> None:
    compacted_store(store)
    assert [h.seq for h in store.recall('": "')] == [6]  # no word, but it is in the text


@pytest.mark.parametrize("query", ["", "   ", "zzzz-not-there"])
def test_recall_of_nothing_finds_nothing(store: SessionStore, query: str) -> None:
    compacted_store(store)
    assert store.recall(query) == []


# -- sharing ----------------------------------------------------------------------------------


def test_threads_append_to_different_sessions(store: SessionStore) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            store.create_session(f"t{n}")
            for i in range(25):
                store.append(f"t{n}", [say("user", f"{n}:{i}")])
                store.view(f"t{n}")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for n in range(6):
        logged = store.messages(f"t{n}")
        assert [s for s, _ in logged] == list(range(1, 26))
        assert [m.text for _, m in logged] == [f"{n}:{i}" for i in range(25)]
    assert store.integrity() == []


def test_two_connections_see_each_others_writes(store_location: str) -> None:
    with open_store(store_location) as writer, open_store(store_location) as reader:
        writer.create_session("s")
        writer.append("s", [say("user", "hello")])
        assert reader.view("s")[0] == (say("user", "hello"),)
        assert reader.append("s", [say("assistant", "hi")]) == [2]
        assert [m.text for m in writer.view("s")[0]] == ["hello", "hi"]


def test_requests_counted_by_two_writers_add_up(store_location: str) -> None:
    """What the proxy's status reads: every writer's requests in one count, the last one's
    token figures, and the token sums of the session's compactions."""
    with open_store(store_location) as one, open_store(store_location) as other:
        log = compacted_store(one)
        for n, writer in enumerate([one, other, one]):
            writer.record_request("s", tokens_before=100 + n, tokens_after=50 + n)
        (record,) = other.compactions("s")
        for reader in (one, other):
            info = reader.session("s")
            assert (info.requests, info.last_tokens_before, info.last_tokens_after) == (3, 102, 52)
            assert (info.compactions, info.tokens_before, info.tokens_after) == (
                1,
                record.tokens_before,
                record.tokens_after,
            )
            assert info.tokens_before > info.tokens_after > 0
            assert reader.latest_receipts() == {"s": dict(record.receipt)}
        assert one.session(log.session_id).to_dict()["requests"] == 3
        one.create_session("fresh")
        assert one.latest_receipts(limit=1) == {}, "the newest session has no compaction"
        assert one.session("fresh").requests == 0
        with pytest.raises(SessionNotFoundError):
            one.record_request("missing", tokens_before=1, tokens_after=1)


# -- locations --------------------------------------------------------------------------------


def test_open_store_locations(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b" / "s.db"
    with open_store(nested) as store:
        assert isinstance(store, SQLiteStore)
        assert isinstance(store, SessionStore), "the class implements the protocol"
        store.create_session("p")
    assert nested.exists(), "missing directories are created"
    with open_store(f"sqlite:///{nested}") as store:
        assert store.session("p").id == "p"
    with open_store(str(nested)) as store:
        assert store.path == str(nested)
    with open_store(":memory:") as store:
        store.create_session("m")
        assert [s.id for s in store.sessions()] == ["m"]
    with open_store("sqlite://") as store:
        assert store.path == ":memory:"


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("mysql://host/db", "unknown store URL 'mysql://host/db'"),
        ("mysql://ann:pw@host/db", "unknown store URL 'mysql://ann@host/db'"),
    ],
)
def test_unsupported_store_urls_are_config_errors(location: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        open_store(location)
    assert ":pw@" not in str(caught.value)


@pytest.mark.parametrize("location", ["postgres://user@host/db", "postgresql://host/db"])
def test_a_postgres_url_without_psycopg_names_the_extra(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if the `postgres` extra were not installed: importing psycopg fails.
    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.delitem(sys.modules, "compaction.store.postgres", raising=False)
    with pytest.raises(ConfigError, match=r"needs psycopg.*llm-compaction\[postgres\]"):
        open_store(location)


def test_default_store_path_honours_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("COMPACTION_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "home" / "sessions.db"
    monkeypatch.delenv("COMPACTION_HOME")
    assert default_store_path() == tmp_path / "xdg" / "compaction" / "sessions.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    expected = tmp_path / "user" / ".local" / "share" / "compaction" / "sessions.db"
    assert default_store_path() == expected
    with open_store() as store:
        assert store.path == str(expected)
    assert expected.exists()


def test_a_corrupt_file_is_a_store_error_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database, just some bytes " * 100)
    with pytest.raises(StoreError, match=r"garbage\.db") as caught:
        open_store(path)
    assert "not a database" in str(caught.value)


def test_a_directory_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=str(tmp_path)):
        open_store(tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_new_store_is_private_to_its_owner(tmp_path: Path) -> None:
    # Under the common umask 022, files would be created 0644 and directories 0755.
    previous = os.umask(0o022)
    try:
        path = tmp_path / "home" / "compaction" / "sessions.db"
        with open_store(path) as store:
            log = SessionLog.open(store, "private", **FIELDS)
            log.append(*tool_session())
            log.compact(mask_compactor())
            files = sorted(path.parent.iterdir())
            modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files}
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert {"sessions.db", "sessions.db-wal", "sessions.db-shm"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes


def test_the_archived_seqs_of_a_session_are_found_through_an_index(tmp_path: Path) -> None:
    # A compaction asks which of a session's originals are archived already; a scan of the
    # whole archive made every compaction cost more as the store grew.
    with SQLiteStore(tmp_path / "sessions.db") as store:
        plan = " ".join(
            str(r[-1])
            for r in store._read(
                "EXPLAIN QUERY PLAN SELECT seq FROM archive WHERE session_id = ?", ("s",)
            )
        )
    assert "USING" in plan and "INDEX" in plan, plan


def test_originals_archived_before_the_indexed_archive_are_still_recalled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:3])
    migrations.migrate(db)  # the schema with the archive in its FTS5 table
    monkeypatch.undo()
    db.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('before', 1.0, 1.0)")
    for seq, message in enumerate(tool_session()[:6], start=1):
        db.execute(
            "INSERT INTO messages VALUES ('before', ?, ?, '', ?, 1.0)",
            (seq, message.role, json.dumps(message_to_dict(message))),
        )
    db.execute(
        "INSERT INTO archive (text, session_id, seq, role) VALUES (?, 'before', 6, 'tool')",
        ('{"service": "api", "port": 54817}',),
    )
    db.close()
    with open_store(path) as store:
        (hit,) = store.recall("54817", session_id="before")
        # Found by its archived words; answered with the original message, verbatim.
        assert hit.seq == 6 and '"port": 54817' in hit.text
        log = SessionLog.open(store, "before", **FIELDS)
        log.append(*tool_session()[6:])
        log.compact(mask_compactor(), force=True, fields=FIELDS)
        assert [h.seq for h in store.recall("build-id 7f3a9c21")] == [4]
        assert len(store.recall("54817", limit=10)) == 1  # archived once, not twice
        assert store.integrity() == []
