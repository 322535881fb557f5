"""Every handle a compacted view shows — a masked output's "original kept as m-…", a
truncation marker's range, a shortened result's marker — recalls its original verbatim,
through every surface: the store's `recall` and `SessionLog.recall` (both backends),
`compaction recall`, and the agent's recall tool in a `compaction run` (the proxy's is in
tests/proxy/test_recall.py); and every surface answers in one shape, with one tool schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction import agent as agent_module
from compaction.cli import cli
from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.exceptions import SessionNotFoundError
from compaction.log import SessionLog
from compaction.messages import Conversation, Message, handle_for
from compaction.providers.base import CompletionRequest, Provider
from compaction.providers.testing import FunctionProvider, Reply, ToolCalls
from compaction.proxy import recall as proxy_recall
from compaction.serialize import message_to_dict
from compaction.store import SessionStore, open_store, searchable_text
from compaction.strategies import MaskStrategy, TruncateStrategy
from compaction.tools import recall_tool
from compaction.workflow import AgentConfig

from .helpers import calls, coding_session, results, say
from .test_store import tool_session

HANDLE = re.compile(r"m-[0-9a-f]{12}")
FIELDS = {"model": "gpt-4o", "dialect": "openai"}


def shown(messages: tuple[Message, ...] | list[Message]) -> list[str]:
    """Every handle the messages show, in order, each once."""
    found: list[str] = []
    for message in messages:
        for handle in HANDLE.findall(searchable_text(message)):
            if handle not in found:
                found.append(handle)
    return found


def live_read() -> Conversation:
    """A task and one huge tool output the model has not read yet: only shortening fits."""
    big = "\n".join(f"line {i}: value {i * 7}" for i in range(3000))
    messages = (
        say("system", "You read files."),
        say("user", "Read big.txt."),
        calls(("c1", "read_file", {"path": "big.txt"})),
        *results(("c1", big)),
    )
    return Conversation(messages, **FIELDS)


def mask_and_truncate(target: int) -> Compactor:
    strategies = (MaskStrategy(), TruncateStrategy())
    return Compactor(CompactionConfig(max_tokens=target, keep_recent_n=2, strategies=strategies))


# (what the view shows, the session, the compactor, a marker of that kind of placeholder)
SCENARIOS = {
    "masked outputs": (
        coding_session(20),
        Compactor(CompactionConfig(max_tokens=3000, keep_recent_n=2)),
        "; original kept as m-",
    ),
    "a truncation marker": (
        coding_session(20),
        mask_and_truncate(2000),
        "the originals are archived",
    ),
    "a shortened result": (
        live_read(),
        Compactor(CompactionConfig(max_tokens=2000, keep_recent_n=2)),
        "elided to fit the context window; original kept as m-",
    ),
}


@pytest.fixture
def store(store_location: str) -> Iterator[SessionStore]:
    with open_store(store_location) as opened:
        yield opened


def compacted(store: SessionStore, scenario: str, session_id: str = "s") -> SessionLog:
    conversation, compactor, marker = SCENARIOS[scenario]
    log = SessionLog.open(store, session_id, **FIELDS)
    log.append(*conversation.messages)
    log.compact(compactor, force=True)
    assert any(marker in searchable_text(m) for m in log.messages), "the scenario's placeholder"
    return log


def tool_turns(label: str, count: int) -> list[Message]:
    """`count` commands, each with a long output, then a user message."""
    messages: list[Message] = []
    for i in range(count):
        output = "\n".join(f"{label} {i} line {n}: nothing new" for n in range(60))
        messages.append(calls((f"{label}{i}", "bash", {"command": f"make {label}{i}"})))
        messages += results((f"{label}{i}", output))
    messages.append(say("user", "And now?"))
    return messages


# -- the library: SessionLog.recall and the store's recall ---------------------------------------


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_handle_the_view_shows_recalls_its_original_verbatim(
    store: SessionStore, store_location: str, scenario: str
) -> None:
    conversation, compactor, _ = SCENARIOS[scenario]
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*conversation.messages)
    result = log.compact(compactor, force=True)
    handles = shown(log.messages)
    assert handles
    for handle in handles:
        original = result.receipt.archive[handle]
        (hit,) = log.recall(handle)
        assert (hit.handle, hit.role) == (handle, original.role)
        assert hit.seq is not None and hit.seq == conversation.messages.index(original) + 1
        assert hit.message is not None
        assert message_to_dict(hit.message) == message_to_dict(original)
        assert hit.text == searchable_text(original)
        assert message_to_dict(log.original(handle)) == message_to_dict(original)
    # a new process on the same store recalls the same originals
    with open_store(store_location) as again:
        resumed = SessionLog.open(again, "s", create=False)
        for handle in handles:
            (hit,) = resumed.recall(handle)
            assert hit.text == searchable_text(result.receipt.archive[handle])


def test_a_handle_is_found_inside_any_query_and_only_in_its_session(store: SessionStore) -> None:
    one = compacted(store, "masked outputs", "one")
    two = compacted(store, "masked outputs", "two")
    handle = shown(one.messages)[0]
    # the model may paste the placeholder's words around it
    (hit,) = one.recall(f"original kept as {handle}]")
    assert hit.handle == handle and hit.session_id == "one"
    assert {h.session_id for h in store.recall(handle)} == {"one", "two"}
    assert [h.session_id for h in store.recall(handle, session_id="two")] == ["two"]
    assert two.recall(handle)[0].text == hit.text
    assert store.recall(handle, session_id="elsewhere") == []
    assert one.recall("m-000000000000") == []
    with pytest.raises(SessionNotFoundError, match="m-000000000000"):
        one.original("m-000000000000")
    # several handles (a truncation marker's range) answer each, in the query's order
    first, second = shown(one.messages)[:2]
    assert [h.handle for h in one.recall(f"{second} … {first}")] == [second, first]


def test_a_word_hit_names_the_handle_its_placeholder_shows(store: SessionStore) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    log.compact(
        Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),))), force=True
    )
    (hit,) = log.recall("7f3a9c21")
    assert hit.handle in shown(log.messages)
    assert hit.message == tool_session()[3]
    (again,) = log.recall(str(hit.handle))
    assert (again.seq, again.text) == (hit.seq, hit.text)


def test_a_handle_a_later_compaction_shows_recalls_what_the_earlier_one_made(
    store: SessionStore,
) -> None:
    # The first compaction masks; the second drops those placeholders under a truncation
    # marker, whose handles name the placeholders (made by a compaction, never logged).
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(say("system", "You run commands."), *tool_turns("a", 10))
    first = log.compact(
        Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),))), force=True
    )
    placeholders = {
        handle_for(m): m for m in log.messages if "original kept as" in searchable_text(m)
    }
    log.append(*tool_turns("b", 10))
    log.compact(mask_and_truncate(1000), force=True)
    handles = shown(log.messages)
    made = [h for h in handles if h in placeholders]
    assert made, "the marker names placeholders of the first compaction"
    for handle in made:
        (hit,) = log.recall(handle)
        assert hit.seq is None and hit.message == placeholders[handle]
        # …and the placeholder's own handle recalls the logged original behind it
        (inner,) = shown([placeholders[handle]])
        (original,) = log.recall(inner)
        assert original.seq is not None
        assert original.message == first.receipt.archive[inner]
    for handle in handles:
        assert len(log.recall(handle)) == 1, handle


def test_a_truncation_marker_names_only_archived_originals() -> None:
    result = mask_and_truncate(3000).compact(coding_session(20), force=True)
    assert set(shown(result.conversation.messages)) <= set(result.receipt.archive)


# -- one shape: the tools and the CLI ------------------------------------------------------------


def test_the_agent_and_the_proxy_declare_one_recall_tool() -> None:
    log = SessionLog.open(open_store(":memory:"))
    agent_tool = recall_tool(log)
    openai = proxy_recall.tool_schema("openai")["function"]
    anthropic = proxy_recall.tool_schema("anthropic")
    assert openai == {
        "name": agent_tool.name,
        "description": agent_tool.description,
        "parameters": dict(agent_tool.parameters),
    }
    assert anthropic["input_schema"] == openai["parameters"]
    assert agent_tool.parameters["required"] == ["query"]


def test_the_agent_and_the_proxy_answer_a_handle_alike_with_the_original(
    store: SessionStore,
) -> None:
    log = compacted(store, "masked outputs")
    handle = shown(log.messages)[0]
    (hit,) = log.recall(handle)
    by_agent = recall_tool(log).run({"query": handle})
    assert not by_agent.is_error
    assert by_agent.text == proxy_recall.answer(log, {"query": handle})
    assert hit.text in by_agent.text and handle in by_agent.text
    assert f"message {hit.seq}" in by_agent.text
    missing = recall_tool(log).run({"query": "m-000000000000"}).text
    assert "m-000000000000" in missing and "no original" in missing


def test_compaction_recall_takes_a_handle(tmp_path: Path) -> None:
    location = tmp_path / "s.db"
    with open_store(location) as store:
        log = compacted(store, "a shortened result")
        (handle,) = shown(log.messages)
        original = live_read().messages[3]
    runner = CliRunner()
    text = runner.invoke(cli, ["recall", "s", handle, "--store", str(location)])
    assert text.exit_code == 0, text.output
    assert searchable_text(original) in text.stdout
    assert handle in text.stdout
    data = runner.invoke(cli, ["recall", "s", handle, "--store", str(location), "--json"])
    (hit,) = json.loads(data.stdout)
    assert (hit["handle"], hit["seq"], hit["role"]) == (handle, 4, "tool")
    assert hit["text"] == searchable_text(original)
    words = runner.invoke(cli, ["recall", "s", "value 20993", "--store", str(location), "--json"])
    (by_words,) = json.loads(words.stdout)
    assert by_words["handle"] == handle and by_words["text"] == hit["text"]
    none = runner.invoke(cli, ["recall", "s", "m-000000000000", "--store", str(location)])
    assert none.exit_code == 0 and "m-000000000000" in none.stderr


# -- the agent's recall tool in `compaction run` ------------------------------------------------

WORKFLOW = """
model: test-model
compact:
  token_threshold: 3000
  max_tokens: 1500
  keep_recent_n: 2
agents:
  - id: coder
    system_prompt: You read files.
    tools: [read_file, recall]
"""


def test_the_agent_recalls_a_handle_its_compacted_view_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.log"
    content = "\n".join(f"line {i}: status ok" for i in range(1500)) + "\nrelease tag v9.4.2"
    big.write_text(content)
    workflow = tmp_path / "agents.yaml"
    workflow.write_text(WORKFLOW)
    recalled: list[str] = []

    def model(request: CompletionRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "user" and not last.tool_results:
            return ToolCalls(("read_file", {"path": str(big)}))
        if not recalled:
            handle = shown(request.messages)[0]  # the model reads it off the placeholder
            recalled.append(handle)
            return ToolCalls(("recall", {"query": handle}))
        return "The tag is v9.4.2."

    provider = FunctionProvider(model)

    def build(agent: AgentConfig, *, model: str | None = None) -> Provider:
        return provider

    monkeypatch.setattr(agent_module, "build_provider", build)
    store = tmp_path / "s.db"
    result = CliRunner().invoke(
        cli,
        ["run", "--config", str(workflow), "--agent", "coder", "--store", str(store), "Tag?"],
    )
    assert result.exit_code == 0, result.output
    assert "The tag is v9.4.2." in result.stdout
    (handle,) = recalled
    with open_store(store) as opened:
        (session,) = opened.sessions()
        logged = [m for _, m in opened.messages(session.id)]
    # what the recall tool answered, as logged before any later compaction
    answer = next(
        r.text for m in logged for r in m.tool_results if handle in r.text and "line 0" in r.text
    )
    assert content in answer
    runner = CliRunner()
    cli_answer = runner.invoke(cli, ["recall", session.id, handle, "--store", str(store)])
    assert content in cli_answer.stdout


def test_an_original_archived_before_the_store_kept_handles_is_found_by_its_words(
    store: SessionStore,
) -> None:
    log = SessionLog.open(store, "s", **FIELDS)
    log.append(*tool_session())
    log.compact(
        Compactor(CompactionConfig(keep_recent_n=2, strategies=(MaskStrategy(),))), force=True
    )
    # A compaction recorded before migration 004_handles has no handle rows.
    with store._write() as db:  # type: ignore[attr-defined]
        db.execute("DELETE FROM handles WHERE session_id = ?", ("s",))
    (hit,) = log.recall("7f3a9c21")
    assert (hit.seq, hit.handle) == (4, None) and hit.message == tool_session()[3]
    assert log.recall(shown(log.messages)[0]) == []
    answer = recall_tool(log).run({"query": "7f3a9c21"}).text
    assert answer.startswith("[message 4, tool,") and "build-id 7f3a9c21" in answer
