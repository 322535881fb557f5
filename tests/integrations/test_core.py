"""The core every framework hook shares (`compaction.integrations._core`), driven with the
simplest codec there is: histories of neutral messages themselves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from compaction import CompactionConfig, open_store
from compaction.integrations._core import Threads, Unit, require, session_id_for
from compaction.messages import Message, TextPart, ToolCallPart, ToolResultPart
from compaction.store.base import check_session_id


class NeutralCodec:
    """Framework messages that already are neutral messages, one unit each."""

    def decode(self, history: Sequence[Message], start: int) -> list[Unit]:
        return [Unit(i, 1, [history[i]]) for i in range(start, len(history))]

    def encode(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages)


CONFIG = CompactionConfig(token_threshold=2500, max_tokens=1500, keep_recent_n=4)


def exchange(i: int) -> list[Message]:
    call = ToolCallPart(f"c{i}", "read_file", f'{{"path": "f{i}.py"}}')
    output = "\n".join(f"f{i}.py:{j}: value_{i}_{j}" for j in range(80))
    return [
        Message("assistant", (call,)),
        Message("tool", (ToolResultPart(f"c{i}", (TextPart(output),)),)),
    ]


def history(n: int) -> list[Message]:
    return [
        Message.text_message("user", "Read the files."),
        *(m for i in range(n) for m in exchange(i)),
    ]


def threads(store: object = None) -> Threads[Message]:
    return Threads(NeutralCodec(), config=CONFIG, store=store)  # type: ignore[arg-type]


@pytest.mark.parametrize("thread_id", ["t-1", "user 42/thread", "é" * 200, 42, ""])
def test_any_thread_id_maps_to_a_valid_session_id(thread_id: object) -> None:
    session_id = session_id_for(thread_id)
    check_session_id(session_id)
    assert session_id_for(thread_id) == session_id
    if isinstance(thread_id, str) and thread_id == "t-1":
        assert session_id == "t-1"  # a valid id is kept as it is


def test_different_thread_ids_never_share_a_session() -> None:
    assert session_id_for("a b") != session_id_for("a_b") != session_id_for("a-b")


def test_only_the_new_suffix_is_decoded_and_summaries_are_reused() -> None:
    hook = threads()
    full = history(12)
    views = [hook.view("t", full[: k + 1]) for k in range(len(full))]
    assert [v.decoded for v in views] == [1] * len(full)
    compacted = [v for v in views if v.compacted]
    assert 1 <= len(compacted) < len(views) // 3
    log = hook.log("t")
    assert log.info().messages == len(full)  # every message logged once
    assert log.info().compactions == len(compacted)


def test_verbatim_messages_come_back_as_the_framework_s_own_objects() -> None:
    hook = threads()
    full = history(12)
    for k in range(len(full)):
        view = hook.view("t", full[: k + 1])
    assert view.messages[0] is full[0]  # the pinned task
    assert view.messages[-1] is full[-1]
    assert any(m.is_summary for m in view.messages)
    assert len(view.messages) < len(full)


def test_a_history_that_does_not_extend_the_log_opens_a_branch() -> None:
    hook = threads()
    full = history(3)
    hook.view("t", full)
    edited = [*full[:-1], Message("tool", (ToolResultPart("c2", (TextPart("other"),)),))]
    view = hook.view("t", edited)
    log = hook.log("t")
    assert log.session_id.startswith("t.") and log.info().meta == {"branch_of": "t"}
    assert view.decoded == len(edited)
    assert hook.store.session("t").messages == len(full)  # the first line kept as it was


def test_a_new_process_resumes_the_thread_from_the_store(tmp_path: Path) -> None:
    location = str(tmp_path / "s.db")
    full = history(12)
    first = threads(location)
    for k in range(len(full)):
        before = first.view("t", full[: k + 1])
    logged = first.log("t").info()
    assert logged.compactions >= 1

    again = threads(location)
    view = again.view("t", full)
    assert again.log("t").info().messages == logged.messages  # nothing logged twice
    assert [m.text for m in view.messages] == [m.text for m in before.messages]
    assert again.view("t", [*full, Message.text_message("user", "Next.")]).decoded == 1


def test_an_evicted_thread_resumes_from_the_store() -> None:
    hook = Threads(NeutralCodec(), config=CONFIG, max_threads=1)
    full = history(12)
    for k in range(len(full)):
        hook.view("a", full[: k + 1])
    compacted = hook.view("a", full).messages
    hook.view("b", history(1))  # evicts "a"
    again = hook.view("a", [*full, Message.text_message("user", "Next.")])
    assert hook.store.session("a").messages == len(full) + 1
    assert again.messages[:-1] == compacted  # the summaries of "a" still in its view


def test_two_processes_on_one_store_log_each_message_once(tmp_path: Path) -> None:
    location = str(tmp_path / "s.db")
    a, b = threads(location), threads(location)
    full = history(4)
    a.view("t", full[:3])
    b.view("t", full[:5])  # another replica logged further
    a.view("t", full)  # a's log is stale: it reads the store again
    assert [seq for seq, _ in open_store(location).messages("t")] == list(range(1, len(full) + 1))


def test_the_install_hint_names_the_extra() -> None:
    with pytest.raises(ImportError, match=r"pip install 'llm-compaction\[some-extra\]'"):
        require("no_such_module_here", "some-extra", "Some framework")
