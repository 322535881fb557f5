"""`compaction serve` end to end, in front of the scripted upstream, driven by the official
`openai` and `anthropic` SDKs.

Both servers are real processes on loopback (see conftest.py). The scripted upstream records
every request it receives and answers with a pure function of the request body, so each test
checks two things per turn: what arrived upstream (valid for the provider, within the token
budget, compacted when the client's history was over it) and what the client got (exactly what
the upstream answers to that very body when called directly, streamed or not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from compaction.dialects import ANTHROPIC, OPENAI, Dialect, get_dialect
from compaction.tokens import ConversationCounter

from .conftest import RunningProxy, ScriptedServer

pytestmark = pytest.mark.e2e

OPENAI_MODEL = "gpt-4o"
ANTHROPIC_MODEL = "claude-scripted"  # not a real model: the SDK warns about deprecated names
THRESHOLD = 1500  # --token-threshold: compact when a request reaches this many tokens
MAX_TOKENS = 1000  # --max-tokens: at most this many after a compaction
TURNS = 14
BUDGET_ARGS = ("--token-threshold", str(THRESHOLD), "--max-tokens", str(MAX_TOKENS))
CLIENT_KEY = "sk-test-client-key"
SYSTEM = "You are a careful coding agent. Keep every file path you touch in mind."


# -- a conversation that outgrows the budget ------------------------------------------------------


def _user_text(turn: int) -> str:
    return (
        f"Turn {turn}: look at src/module_{turn}.py and tell me whether parse_{turn}() "
        f"handles empty input. Keep the ticket id T-{1000 + turn} in mind. "
        + " ".join(f"note{turn}-{k}" for k in range(20))
    )


def _file_text(turn: int) -> str:
    lines = [
        f"{n:4d}  def parse_{turn}_{n}(value):  # returns value {n} times" for n in range(1, 16)
    ]
    return "\n".join(lines)


def _openai_tool_turn(turn: int) -> list[dict[str, Any]]:
    """The model reading a file: an assistant tool call and its result."""
    call_id = f"call_{turn}"
    arguments = json.dumps({"path": f"src/module_{turn}.py"})
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": _file_text(turn)},
    ]


def _anthropic_tool_turn(turn: int, said: str, *, with_text: bool = False) -> list[dict[str, Any]]:
    """The model saying `said` and reading a file, the result, and the model's answer; or, with
    `with_text`, the result and the user's next question in one user message."""
    tool_id = f"toolu_{turn:04d}"
    result = {"type": "tool_result", "tool_use_id": tool_id, "content": _file_text(turn)}
    call = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": said},
            {
                "type": "tool_use",
                "id": tool_id,
                "name": "read_file",
                "input": {"path": f"src/module_{turn}.py"},
            },
        ],
    }
    if with_text:
        text = {"type": "text", "text": _user_text(turn)}
        return [call, {"role": "user", "content": [result, text]}]
    return [
        call,
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": f"Read src/module_{turn}.py."},
        {"role": "user", "content": _user_text(turn)},
    ]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]
ANTHROPIC_TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
]


# -- checks -------------------------------------------------------------------------------------


def _overflowing_history(turns: int) -> list[dict[str, Any]]:
    """An agent's chat history: `turns` questions, each with a file read and an answer."""
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(turns):
        history += [
            {"role": "user", "content": _user_text(turn)},
            *_openai_tool_turn(turn),
            {"role": "assistant", "content": f"module_{turn}.py looks fine."},
        ]
    history.append({"role": "user", "content": "Which modules did you read?"})
    return history


def _tokens(dialect: Dialect, body: dict[str, Any]) -> int:
    """Tokens of a request body, counted as the proxy counts them."""
    conversation = dialect.decode(body)
    provider = "anthropic" if dialect is ANTHROPIC else "openai"
    return ConversationCounter.for_model(body["model"], provider=provider).count(conversation).total


def _arrived(scripted: ScriptedServer, path: str) -> dict[str, Any]:
    """The one request that reached the upstream for the client's last call."""
    received = scripted.requests(path)
    assert len(received) == 1, f"expected one upstream request, got {len(received)}"
    return received[0]


def _check_arrived(
    dialect: Dialect, sent: dict[str, Any], arrived: dict[str, Any], history: str, live: str
) -> bool:
    """Assert what reached the upstream is valid and within budget; True if it was compacted."""
    violations = dialect.validate(dialect.decode(arrived))
    assert violations == [], f"invalid request upstream: {[str(v) for v in violations]}"
    sent_tokens, arrived_tokens = _tokens(dialect, sent), _tokens(dialect, arrived)
    assert arrived_tokens <= THRESHOLD, (sent_tokens, arrived_tokens)
    # Everything but the history is the client's, untouched.
    assert {k: v for k, v in arrived.items() if k != history} == {
        k: v for k, v in sent.items() if k != history
    }
    if sent_tokens < THRESHOLD:
        assert arrived == sent
        return False
    # The live user turn arrives verbatim.
    assert json.dumps(live)[1:-1] in json.dumps(arrived[history])
    return arrived != sent


def _key_of(headers: dict[str, str]) -> str | None:
    """The client key a request carried (the Anthropic SDK sends x-api-key or a bearer token)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    return headers.get("authorization", "").removeprefix("Bearer ") or None


def _sse_payloads(raw: bytes) -> list[tuple[str | None, Any]]:
    """(event, data) of every server-sent event, `[DONE]` included as the string."""
    events = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            text = "\n".join(data)
            events.append((event, text if text == "[DONE]" else json.loads(text)))
    return events


def _compactions(proxy: RunningProxy) -> int:
    """Compactions the proxy reports in /metrics (all endpoints)."""
    total = 0.0
    for line in proxy.metrics().splitlines():
        if line.startswith("compaction_proxy_compactions_total"):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


def _session_id(request: pytest.FixtureRequest) -> str:
    """A session id from the test's name, in the characters the header allows."""
    return re.sub(r"[^A-Za-z0-9._:-]", "-", request.node.name)[:100]


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def proxy(scripted: ScriptedServer, start_proxy: Any) -> RunningProxy:
    running: RunningProxy = start_proxy(scripted.url, *BUDGET_ARGS)
    return running


@pytest.fixture
def openai_client(proxy: RunningProxy, request: pytest.FixtureRequest) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=proxy.openai_base_url,
        api_key=CLIENT_KEY,
        max_retries=0,
        timeout=30.0,
        default_headers={"X-Compaction-Session": _session_id(request)},
    ) as client:
        yield client


@pytest.fixture
def direct_openai(scripted: ScriptedServer) -> Iterator[openai.OpenAI]:
    """The upstream without the proxy, for the reply the client should have seen."""
    with openai.OpenAI(
        base_url=f"{scripted.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=30.0
    ) as client:
        yield client


@pytest.fixture
def anthropic_client(
    proxy: RunningProxy, request: pytest.FixtureRequest
) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=proxy.url,
        api_key=CLIENT_KEY,
        max_retries=0,
        timeout=30.0,
        default_headers={"X-Compaction-Session": _session_id(request)},
    ) as client:
        yield client


@pytest.fixture
def direct_anthropic(scripted: ScriptedServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=scripted.url, api_key=CLIENT_KEY, max_retries=0, timeout=30.0
    ) as client:
        yield client


# -- Chat Completions -----------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_conversation_arrives_compacted_and_valid_every_time(
    stream: bool,
    proxy: RunningProxy,
    scripted: ScriptedServer,
    openai_client: openai.OpenAI,
    direct_openai: openai.OpenAI,
) -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    compacted_turns = 0
    for turn in range(TURNS):
        history.append({"role": "user", "content": _user_text(turn)})
        if turn % 2:
            history += _openai_tool_turn(turn)
        sent = {"model": OPENAI_MODEL, "messages": history, "tools": TOOLS, "max_tokens": 64}
        scripted.clear()
        if stream:
            chunks = list(
                openai_client.chat.completions.create(
                    **sent, stream=True, stream_options={"include_usage": True}
                )
            )
            sent = {**sent, "stream": True, "stream_options": {"include_usage": True}}
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            reply = openai_client.chat.completions.create(**sent)
            text = reply.choices[0].message.content or ""

        arrived = _arrived(scripted, "/v1/chat/completions")
        assert arrived["headers"]["authorization"] == f"Bearer {CLIENT_KEY}"
        compacted_turns += _check_arrived(
            OPENAI, sent, arrived["body"], "messages", _user_text(turn)
        )

        # The client got exactly what the upstream answers to that body.
        if stream:
            direct = direct_openai.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=arrived["body"],
                stream=True,
                stream_cls=openai.Stream[ChatCompletionChunk],
            )
            assert [c.model_dump() for c in chunks] == [c.model_dump() for c in direct]
        else:
            direct_reply = direct_openai.post(
                "/chat/completions", cast_to=ChatCompletion, body=arrived["body"]
            )
            assert reply.model_dump() == direct_reply.model_dump()
        messages_arrived = len(OPENAI.decode(arrived["body"]).messages)
        assert text.startswith(f"scripted reply: {messages_arrived} messages, ")
        history.append({"role": "assistant", "content": text})

    assert compacted_turns >= TURNS // 2
    assert _compactions(proxy) >= 3, "the budget should have been crossed several times"


def test_chat_stream_is_framed_as_the_upstream_frames_it(
    scripted: ScriptedServer, proxy: RunningProxy
) -> None:
    # Below the budget: the proxy's stream carries the upstream's events, in order, then [DONE].
    body = {
        "model": OPENAI_MODEL,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}],
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {CLIENT_KEY}"}
    with httpx.Client(trust_env=False, timeout=30.0) as client:
        via_proxy = client.post(f"{proxy.url}/v1/chat/completions", json=body, headers=headers)
        direct = client.post(f"{scripted.url}/v1/chat/completions", json=body, headers=headers)
    assert via_proxy.status_code == 200
    assert via_proxy.headers["content-type"].startswith("text/event-stream")
    # One Date (the proxy's server writes it), the upstream's Server header, each once.
    assert len(via_proxy.headers.get_list("date")) == 1
    assert via_proxy.headers.get_list("server") == direct.headers.get_list("server")
    assert _sse_payloads(via_proxy.content) == _sse_payloads(direct.content)
    assert _sse_payloads(via_proxy.content)[-1] == (None, "[DONE]")


def test_chat_error_inside_a_stream_reaches_the_sdk(
    scripted: ScriptedServer, openai_client: openai.OpenAI
) -> None:
    scripted.configure(stream_error_after=2)
    stream = openai_client.chat.completions.create(
        model=OPENAI_MODEL, messages=[{"role": "user", "content": "Hi"}], stream=True
    )
    received: list[ChatCompletionChunk] = []
    with pytest.raises(openai.APIError, match="injected error inside the stream"):
        received.extend(stream)
    text = "".join(c.choices[0].delta.content or "" for c in received if c.choices)
    assert text == "scripted reply: "  # the two chunks sent before the error


def test_chat_context_length_error_is_compacted_harder_and_retried(
    scripted: ScriptedServer, start_proxy: Any
) -> None:
    # The proxy's budget is far above the upstream's window: only the upstream's
    # context_length_exceeded can make it compact.
    limit = 900
    scripted.configure(context_tokens=limit)
    proxy = start_proxy(scripted.url, "--token-threshold", "100000", "--max-tokens", "60000")
    history = _overflowing_history(3)
    sent = {"model": OPENAI_MODEL, "messages": history}
    assert limit < _tokens(OPENAI, sent) < 2 * limit  # an agent that just outgrew its window

    with openai.OpenAI(
        base_url=proxy.openai_base_url, api_key=CLIENT_KEY, max_retries=0, timeout=30.0
    ) as client:
        reply = client.chat.completions.create(**sent)

    first, retried = scripted.requests("/v1/chat/completions")
    assert first["body"] == sent  # under the proxy's own budget: sent as it came
    assert OPENAI.validate(OPENAI.decode(retried["body"])) == []
    assert _tokens(OPENAI, retried["body"]) <= limit
    assert retried["body"]["messages"][-1] == history[-1]
    scripted.clear()
    with openai.OpenAI(base_url=f"{scripted.url}/v1", api_key=CLIENT_KEY, max_retries=0) as d:
        direct = d.post("/chat/completions", cast_to=ChatCompletion, body=retried["body"])
    assert reply.model_dump() == direct.model_dump()


def test_chat_context_length_retry_fits_the_limit_the_error_states(
    scripted: ScriptedServer, start_proxy: Any
) -> None:
    limit = 900
    scripted.configure(context_tokens=limit)
    proxy = start_proxy(scripted.url, "--token-threshold", "100000", "--max-tokens", "60000")
    sent = {"model": OPENAI_MODEL, "messages": _overflowing_history(9)}
    assert _tokens(OPENAI, sent) > 3 * limit  # half of it would not fit either
    with openai.OpenAI(
        base_url=proxy.openai_base_url, api_key=CLIENT_KEY, max_retries=0, timeout=30.0
    ) as client:
        reply = client.chat.completions.create(**sent)
    _, retried = scripted.requests("/v1/chat/completions")
    assert OPENAI.validate(OPENAI.decode(retried["body"])) == []
    assert _tokens(OPENAI, retried["body"]) <= limit
    assert retried["body"]["messages"][-1] == sent["messages"][-1]
    assert (reply.choices[0].message.content or "").startswith("scripted reply: ")


def test_chat_context_length_error_of_a_stream_is_retried(
    scripted: ScriptedServer, start_proxy: Any
) -> None:
    limit = 900
    scripted.configure(context_tokens=limit)
    proxy = start_proxy(scripted.url, "--token-threshold", "100000", "--max-tokens", "60000")
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(4):
        history += [{"role": "user", "content": _user_text(turn)}, *_openai_tool_turn(turn)]
    with openai.OpenAI(
        base_url=proxy.openai_base_url, api_key=CLIENT_KEY, max_retries=0, timeout=30.0
    ) as client:
        chunks = list(
            client.chat.completions.create(model=OPENAI_MODEL, messages=history, stream=True)
        )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    _, retried = scripted.requests("/v1/chat/completions")
    assert _tokens(OPENAI, retried["body"]) <= limit
    assert text.startswith(f"scripted reply: {len(retried['body']['messages'])} messages")


def test_chat_live_tool_result_arrives_verbatim(
    scripted: ScriptedServer, openai_client: openai.OpenAI
) -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(6):
        history.append({"role": "user", "content": _user_text(turn)})
        if turn % 2:
            history += _openai_tool_turn(turn)
        if turn < 5:
            history.append({"role": "assistant", "content": f"Turn {turn} done."})
    sent = {"model": OPENAI_MODEL, "messages": history, "tools": TOOLS}
    assert _tokens(OPENAI, sent) > THRESHOLD
    openai_client.chat.completions.create(**sent)
    arrived = _arrived(scripted, "/v1/chat/completions")["body"]
    assert arrived["messages"][-2:] == history[-2:]


# -- Anthropic Messages -------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_conversation_arrives_compacted_and_valid_every_time(
    stream: bool,
    proxy: RunningProxy,
    scripted: ScriptedServer,
    anthropic_client: anthropic.Anthropic,
    direct_anthropic: anthropic.Anthropic,
) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": _user_text(0)}]
    compacted_turns = 0
    for turn in range(1, TURNS + 1):
        sent: dict[str, Any] = {
            "model": ANTHROPIC_MODEL,
            "system": SYSTEM,
            "messages": history,
            "tools": ANTHROPIC_TOOLS,
            "max_tokens": 64,
        }
        scripted.clear()
        if stream:
            events = list(anthropic_client.messages.create(**sent, stream=True))
            sent = {**sent, "stream": True}
            text = "".join(
                e.delta.text
                for e in events
                if e.type == "content_block_delta" and e.delta.type == "text_delta"
            )
        else:
            reply = anthropic_client.messages.create(**sent)
            text = "".join(b.text for b in reply.content if b.type == "text")

        arrived = _arrived(scripted, "/v1/messages")
        assert _key_of(arrived["headers"]) == CLIENT_KEY
        compacted_turns += _check_arrived(
            ANTHROPIC, sent, arrived["body"], "messages", _user_text(turn - 1)
        )
        if arrived["body"]["messages"] != sent["messages"]:
            assert arrived["body"]["system"] == SYSTEM

        if stream:
            direct = direct_anthropic.post(
                "/v1/messages",
                cast_to=AnthropicMessage,
                body=arrived["body"],
                stream=True,
                stream_cls=anthropic.Stream[RawMessageStreamEvent],
            )
            assert [e.model_dump() for e in events] == [e.model_dump() for e in direct]
        else:
            direct_reply = direct_anthropic.post(
                "/v1/messages", cast_to=AnthropicMessage, body=arrived["body"]
            )
            assert reply.model_dump() == direct_reply.model_dump()
        assert text.startswith("scripted reply: ")
        if turn % 2:
            history += _anthropic_tool_turn(turn, text)
        else:
            history.append({"role": "assistant", "content": text})
            history.append({"role": "user", "content": _user_text(turn)})

    assert compacted_turns >= TURNS // 2
    assert _compactions(proxy) >= 3


def test_anthropic_live_turn_with_tool_results_arrives_verbatim(
    scripted: ScriptedServer, anthropic_client: anthropic.Anthropic
) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": _user_text(0)}]
    for turn in range(1, 6):
        history += _anthropic_tool_turn(turn, f"Turn {turn - 1} done.", with_text=True)
    sent = {"model": ANTHROPIC_MODEL, "system": SYSTEM, "messages": history, "max_tokens": 64}
    assert _tokens(ANTHROPIC, sent) > THRESHOLD
    anthropic_client.messages.create(**sent)
    arrived = _arrived(scripted, "/v1/messages")["body"]
    # The pinned task, verbatim (alternation may fold the summary in after it, as a block).
    first = arrived["messages"][0]
    task = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
    assert task == history[0]["content"]
    assert arrived["messages"][-1] == history[-1]  # the live turn


def test_anthropic_error_inside_a_stream_reaches_the_sdk(
    scripted: ScriptedServer, anthropic_client: anthropic.Anthropic
) -> None:
    scripted.configure(stream_error_after=1)
    stream = anthropic_client.messages.create(
        model=ANTHROPIC_MODEL,
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=16,
        stream=True,
    )
    with pytest.raises(anthropic.APIStatusError, match="injected error inside the stream"):
        list(stream)


def test_anthropic_prompt_too_long_is_compacted_harder_and_retried(
    scripted: ScriptedServer, start_proxy: Any
) -> None:
    limit = 900
    scripted.configure(context_tokens=limit)
    proxy = start_proxy(scripted.url, "--token-threshold", "100000", "--max-tokens", "60000")
    history: list[dict[str, Any]] = [{"role": "user", "content": _user_text(0)}]
    for turn in range(1, 4):
        history += _anthropic_tool_turn(turn, f"Turn {turn - 1} done.", with_text=True)
    sent = {"model": ANTHROPIC_MODEL, "system": SYSTEM, "messages": history, "max_tokens": 64}
    assert limit < _tokens(ANTHROPIC, sent) < 2 * limit
    with anthropic.Anthropic(
        base_url=proxy.url, api_key=CLIENT_KEY, max_retries=0, timeout=30.0
    ) as client:
        reply = client.messages.create(**sent)
    first, retried = scripted.requests("/v1/messages")
    assert first["body"] == sent
    assert ANTHROPIC.validate(ANTHROPIC.decode(retried["body"])) == []
    assert _tokens(ANTHROPIC, retried["body"]) <= limit
    assert reply.content[0].type == "text"
    assert reply.content[0].text.startswith("scripted reply: ")


# -- Responses ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_responses_conversation_is_compacted_and_replies_unchanged(
    stream: bool,
    proxy: RunningProxy,
    scripted: ScriptedServer,
    openai_client: openai.OpenAI,
    direct_openai: openai.OpenAI,
) -> None:
    responses = get_dialect("responses")
    items: list[dict[str, Any]] = []
    compacted_turns = 0
    for turn in range(TURNS):
        items.append({"role": "user", "content": _user_text(turn)})
        if turn % 2:
            call_id = f"call_{turn}"
            items += [
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": "read_file",
                    "arguments": json.dumps({"path": f"src/module_{turn}.py"}),
                },
                {"type": "function_call_output", "call_id": call_id, "output": _file_text(turn)},
            ]
        sent: dict[str, Any] = {
            "model": OPENAI_MODEL,
            "instructions": SYSTEM,
            "input": items,
            "max_output_tokens": 64,
        }
        scripted.clear()
        if stream:
            events = list(openai_client.responses.create(**sent, stream=True))
            sent = {**sent, "stream": True}
            completed = [e for e in events if e.type == "response.completed"]
            assert len(completed) == 1
            text = completed[0].response.output_text
            deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
            assert deltas == text
        else:
            reply = openai_client.responses.create(**sent)
            text = reply.output_text

        arrived = _arrived(scripted, "/v1/responses")
        body = arrived["body"]
        assert responses.validate(responses.decode(body)) == []
        assert {k: v for k, v in body.items() if k != "input"} == {
            k: v for k, v in sent.items() if k != "input"
        }
        assert json.dumps(_user_text(turn))[1:-1] in json.dumps(body["input"])
        assert _tokens(responses, body) <= THRESHOLD
        compacted_turns += body["input"] != sent["input"]

        if stream:
            direct = direct_openai.post(
                "/responses",
                cast_to=Response,
                body=body,
                stream=True,
                stream_cls=openai.Stream[ResponseStreamEvent],
            )
            assert [e.model_dump() for e in events] == [e.model_dump() for e in direct]
        else:
            direct_reply = direct_openai.post("/responses", cast_to=Response, body=body)
            assert reply.model_dump() == direct_reply.model_dump()
        items.append({"role": "assistant", "content": text})

    assert compacted_turns >= TURNS // 2


# -- passthrough ----------------------------------------------------------------------------------


def test_models_pass_through_untouched(
    scripted: ScriptedServer,
    openai_client: openai.OpenAI,
    direct_openai: openai.OpenAI,
    anthropic_client: anthropic.Anthropic,
) -> None:
    via_proxy = [m.model_dump() for m in openai_client.models.list()]
    arrived = _arrived(scripted, "/v1/models")
    assert arrived["method"] == "GET"
    assert arrived["headers"]["authorization"] == f"Bearer {CLIENT_KEY}"
    assert via_proxy == [m.model_dump() for m in direct_openai.models.list()]

    scripted.clear()
    listed = [m.id for m in anthropic_client.models.list()]
    assert listed == ["scripted-model"]
    arrived = _arrived(scripted, "/v1/models")
    assert _key_of(arrived["headers"]) == CLIENT_KEY
    assert "anthropic-version" in arrived["headers"]


def test_unknown_paths_pass_through_with_status_and_query(
    scripted: ScriptedServer, proxy: RunningProxy
) -> None:
    with httpx.Client(trust_env=False, timeout=30.0) as client:
        resp = client.post(
            f"{proxy.url}/v1/embeddings?dry=1",
            json={"model": "e", "input": "x"},
            headers={"Authorization": f"Bearer {CLIENT_KEY}"},
        )
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"
    arrived = _arrived(scripted, "/v1/embeddings")
    assert arrived["query"] == "dry=1"
    assert arrived["body"] == {"model": "e", "input": "x"}
