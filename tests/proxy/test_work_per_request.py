"""The work the proxy does per request, counted with instrumented real objects: a dialect
whose `validate` counts its calls, a token counter whose `count` and `count_message` count
theirs (apart from what a compaction itself counts), and the app's JSON parsing counted.

One parse of the body, one count of the history (the Compactor's decision), no validation
for a request forwarded untouched and at most one for a compacted request."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from compaction.compactor import Compactor
from compaction.dialects import DIALECTS, OpenAIChatDialect, load_payload
from compaction.messages import Conversation
from compaction.proxy import app as app_module
from compaction.proxy import sessions as sessions_module
from compaction.tokens import ConversationCounter

from .conftest import raw, running
from .test_compaction import POLICY, chat, chat_history

pytestmark = pytest.mark.anyio


@dataclass
class Work:
    """Calls made while handling requests; `compacting`: inside `Compactor.compact`."""

    calls: Counter[str] = field(default_factory=Counter)
    local: threading.local = field(default_factory=threading.local)

    def note(self, what: str) -> None:
        where = "compaction" if getattr(self.local, "compacting", False) else "proxy"
        self.calls[f"{where}.{what}"] += 1

    def take(self) -> dict[str, int]:
        taken = {k: v for k, v in self.calls.items() if v}
        self.calls.clear()
        return taken


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    work = Work()

    class CountingDialect(OpenAIChatDialect):
        def validate(self, conversation: Conversation) -> Any:
            work.note("validate")
            return super().validate(conversation)

    class CountingCounter(ConversationCounter):
        def count(self, conversation: Any, **kwargs: Any) -> Any:
            work.note("count")
            return super().count(conversation, **kwargs)

        def count_message(self, message: Any) -> int:
            work.note("count_message")
            return super().count_message(message)

    class WatchedCompactor(Compactor):
        def compact(self, *args: Any, **kwargs: Any) -> Any:
            work.local.compacting = True
            try:
                return super().compact(*args, **kwargs)
            finally:
                work.local.compacting = False

    def counted_load_payload(text: Any, *, source: str) -> Any:
        work.note("parse")
        return load_payload(text, source=source)

    def counted_loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        parsed = json.loads(text, *args, **kwargs)
        if isinstance(parsed, dict) and "messages" in parsed:  # a request, not an answer
            work.note("parse")
        return parsed

    monkeypatch.setitem(DIALECTS, "openai", CountingDialect())  # type: ignore[index]
    monkeypatch.setattr(sessions_module, "ConversationCounter", CountingCounter)
    monkeypatch.setattr(sessions_module, "Compactor", WatchedCompactor)
    monkeypatch.setattr(app_module, "load_payload", counted_load_payload)
    monkeypatch.setattr(
        app_module, "json", SimpleNamespace(**{**vars(json), "loads": counted_loads})
    )
    yield work


def _proxy_side(calls: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in calls.items() if k.startswith("proxy.")}


async def test_a_request_under_budget_is_parsed_once_counted_once_and_never_validated(
    work: Work,
) -> None:
    history = chat_history(2)
    async with running(compaction=POLICY) as h:
        for turn in range(3):
            response = await h.client.post("/v1/chat/completions", content=raw(chat(history)))
            assert response.status_code == 200
            assert h.upstream.last.body == raw(chat(history))  # forwarded untouched
            calls = work.take()
            assert calls == {"proxy.parse": 1, "proxy.count": 1}, f"request {turn}: {calls}"
            reply = {"role": "assistant", "content": f"Step {turn} done."}
            history = [*history, reply, {"role": "user", "content": "Go on."}]


async def test_a_compacted_request_is_parsed_once_counted_once_and_validated_at_most_once(
    work: Work,
) -> None:
    history = chat_history(12)
    async with running(compaction=POLICY, recall_tool=True) as h:
        for turn in range(3):
            response = await h.client.post("/v1/chat/completions", content=raw(chat(history)))
            assert response.status_code == 200
            calls = work.take()
            assert calls.get("compaction.count", 0) >= (1 if turn == 0 else 0)
            assert _proxy_side(calls) == {"proxy.parse": 1, "proxy.count": 1}, (
                f"request {turn}: {calls}"
            )
            validations = calls.get("proxy.validate", 0) + calls.get("compaction.validate", 0)
            assert validations <= 1, f"request {turn}: {calls}"
            # the compacted view went, not the history
            assert len(h.upstream.last.body) < len(raw(chat(history))) / 2
            reply = {"role": "assistant", "content": f"Step {turn} done."}
            history = [*history, reply, {"role": "user", "content": "Go on."}]
        assert (await h.status())["sessions"][0]["compactions"] >= 1


async def test_a_history_breaking_a_rule_is_judged_once_and_then_forwarded_untouched(
    work: Work,
) -> None:
    history = chat_history(12)
    history.insert(3, {"role": "tool", "tool_call_id": "nobody", "content": "orphan"})
    async with running(compaction=POLICY) as h:
        for turn in range(3):
            body = raw(chat(history))
            response = await h.client.post("/v1/chat/completions", content=body)
            assert response.status_code == 200
            assert h.upstream.last.body == body  # the client's own rule break: as it came
            calls = work.take()
            assert _proxy_side(calls) == {"proxy.parse": 1, "proxy.count": 1}, calls
            if turn:  # judged on the first request; its history comes again every time
                assert calls == {"proxy.parse": 1, "proxy.count": 1}, f"request {turn}: {calls}"
            reply = {"role": "assistant", "content": f"Step {turn} done."}
            history = [*history, reply, {"role": "user", "content": "Go on."}]
        metrics = (await h.client.get("/metrics")).text
        assert 'compaction_proxy_invalid_history_total{endpoint="openai"} 1' in metrics
        assert (await h.status())["sessions"][0]["compactions"] == 0
