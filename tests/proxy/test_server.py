"""The app under a real uvicorn server on loopback (in this process): streams reach the client
before the upstream finishes, graceful shutdown lets an in-flight stream finish, sockets have
TCP_NODELAY; and the `serve` command's configuration handling."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from click.testing import CliRunner

from compaction.cli import cli
from compaction.cli.serve import (
    access_logged_config,
    load_policy,
    redact_query,
    replica_name,
    summarizer_for,
)
from compaction.providers import AnthropicProvider, OpenAIProvider
from compaction.proxy import ProxySettings, create_app
from compaction.store import open_store

from .conftest import chat_body
from .upstream import FakeUpstream, chat_chunks, sse_response

pytestmark = pytest.mark.anyio


async def test_in_flight_stream_finishes_during_graceful_shutdown() -> None:
    release = asyncio.Event()
    chunks = chat_chunks("one two three")

    async def slow_stream() -> AsyncIterator[bytes]:
        yield chunks[0]
        await release.wait()
        for chunk in chunks[1:]:
            yield chunk

    upstream = FakeUpstream(lambda request, data: sse_response(slow_stream()))
    app = create_app(
        ProxySettings(upstream="http://upstream.test"),
        store=open_store(":memory:"),
        upstream_transport=httpx.MockTransport(upstream),
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    proxy = app.state.proxy
    received: list[bytes] = []
    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
        client.stream("POST", "/v1/chat/completions", json=chat_body(1, stream=True)) as response,
    ):
        stream = response.aiter_raw()
        # the first event arrives while the upstream is still holding the rest back
        received.append(await asyncio.wait_for(stream.__anext__(), timeout=5))
        assert received[0] == chunks[0]
        for connection in server.server_state.connections:
            sock = connection.transport.get_extra_info("socket")  # type: ignore[attr-defined]
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        server.should_exit = True  # like SIGTERM
        await asyncio.sleep(0.3)
        assert not serving.done(), "the server must wait for the in-flight stream"
        release.set()
        async for chunk in stream:
            received.append(chunk)
    assert b"".join(received) == b"".join(chunks)
    await asyncio.wait_for(serving, timeout=5)
    assert proxy._client is None  # lifespan shutdown closed the upstream client


async def test_a_client_that_goes_away_mid_stream_closes_the_upstream_stream() -> None:
    closed = asyncio.Event()
    chunks = chat_chunks("one two three")

    async def endless() -> AsyncIterator[bytes]:
        try:
            yield chunks[0]
            await asyncio.Event().wait()  # a model that would go on generating
        finally:
            closed.set()

    upstream = FakeUpstream(lambda request, data: sse_response(endless()))
    app = create_app(
        ProxySettings(upstream="http://upstream.test"),
        store=open_store(":memory:"),
        upstream_transport=httpx.MockTransport(upstream),
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        async with (
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
            client.stream(
                "POST", "/v1/chat/completions", json=chat_body(1, stream=True)
            ) as response,
        ):
            first = await asyncio.wait_for(response.aiter_raw().__anext__(), timeout=5)
            assert first == chunks[0]
            assert not closed.is_set()
        # The client closed its connection mid-stream: the relay stops and closes upstream.
        await asyncio.wait_for(closed.wait(), timeout=5)
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, timeout=5)


def test_serve_config_takes_the_workflow_compact_section(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "store: sessions.db\n"
        "compact:\n  token_threshold: 5000\n  max_tokens: 2000\n"
        "agents:\n  - id: coder\n    model: gpt-4o\n",
        encoding="utf-8",
    )
    policy, store = load_policy(str(path))
    assert (policy.token_threshold, policy.max_tokens) == (5000, 2000)
    assert store == "sessions.db"
    plain = tmp_path / "compact.yaml"
    plain.write_text("token_threshold: 7000\n", encoding="utf-8")
    assert load_policy(str(plain))[0].token_threshold == 7000


def test_serve_reports_a_bad_config_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("compact:\n  token_threshold: -1\nagents:\n  - id: a\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["serve", "--upstream", "http://127.0.0.1:9", "--config", str(path)]
    )
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "token_threshold" in result.output


def test_serve_needs_a_summarizer_model_for_llm_strategies(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text("strategies:\n  - kind: summarize\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["serve", "--upstream", "http://127.0.0.1:9", "--config", str(path)]
    )
    assert result.exit_code == 2
    assert "--summarizer-model" in result.output


async def _serving(app: Any, **options: Any) -> tuple[uvicorn.Server, asyncio.Task[None], int]:
    config = options.pop("config", None) or uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", **options
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    return server, serving, server.servers[0].sockets[0].getsockname()[1]


async def test_went_away_is_logged_only_for_clients_that_went_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = create_app(
        ProxySettings(upstream="http://upstream.test"),
        store=open_store(":memory:"),
        upstream_transport=httpx.MockTransport(FakeUpstream()),
    )
    server, serving, port = await _serving(app)
    caplog.set_level(logging.INFO, logger="compaction.proxy")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for _ in range(3):
                streamed = await client.post("/v1/chat/completions", json=chat_body(1, stream=True))
                assert streamed.content == b"".join(chat_chunks())
                whole = await client.get("/v1/models")
                assert whole.status_code == 200
        await asyncio.sleep(0.1)
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, timeout=5)
    went_away = [r for r in caplog.records if "went away" in r.getMessage()]
    assert went_away == []


async def test_a_real_disconnect_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    chunks = chat_chunks("one two three")

    async def endless() -> AsyncIterator[bytes]:
        yield chunks[0]
        await asyncio.Event().wait()

    upstream = FakeUpstream(lambda request, data: sse_response(endless()))
    app = create_app(
        ProxySettings(upstream="http://upstream.test"),
        store=open_store(":memory:"),
        upstream_transport=httpx.MockTransport(upstream),
    )
    server, serving, port = await _serving(app)
    caplog.set_level(logging.INFO, logger="compaction.proxy")
    try:
        async with (
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
            client.stream(
                "POST", "/v1/chat/completions", json=chat_body(1, stream=True)
            ) as response,
        ):
            await asyncio.wait_for(response.aiter_raw().__anext__(), timeout=5)
        for _ in range(100):
            if any("went away" in r.getMessage() for r in caplog.records):
                break
            await asyncio.sleep(0.02)
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, timeout=5)
    went_away = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(went_away) == 1


async def test_keys_in_the_query_string_are_redacted_in_the_access_log() -> None:
    app = create_app(
        ProxySettings(upstream="http://upstream.test"),
        store=open_store(":memory:"),
        upstream_transport=httpx.MockTransport(FakeUpstream()),
    )
    config = access_logged_config(app, host="127.0.0.1", port=0, log_level="debug")
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    access = logging.getLogger("uvicorn.access")
    collect = Collect()
    access.addHandler(collect)
    server, serving, port = await _serving(app, config=config)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            query = (
                "limit=2&api_key=sk-SECRET-1&key=SECRET-2&access_token=SECRET-3"
                "&X-Goog-Api-Key=SECRET-4"
            )
            assert (await client.get(f"/v1/models?{query}")).status_code == 200
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, timeout=5)
        access.removeHandler(collect)
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
            logging.getLogger(name).setLevel(logging.NOTSET)
    (line,) = [line for line in lines if "/v1/models" in line]
    assert "SECRET" not in line
    assert "limit=2" in line and "api_key=***" in line and "key=***" in line


def test_a_replica_is_named_by_where_it_listens() -> None:
    import socket

    assert replica_name("127.0.0.1", 8787) == "127.0.0.1:8787"
    assert replica_name("0.0.0.0", 9000) == f"{socket.gethostname()}:9000"
    assert replica_name("::", 9000) == f"{socket.gethostname()}:9000"


def test_redact_query_keeps_what_names_no_secret() -> None:
    assert redact_query("a=1&token=t&b=&password=p&sig") == "a=1&token=***&b=&password=***&sig"
    assert redact_query("") == ""


def test_summarizer_timeout_and_retries_come_from_the_config_and_the_flags(
    tmp_path: Path,
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "strategies:\n  - kind: summarize\nmodel: m\nsummarizer_timeout: 7.5\n"
        "summarizer_retries: 0\n",
        encoding="utf-8",
    )
    policy, _ = load_policy(str(path))
    provider = summarizer_for(policy, "openai", "http://127.0.0.1:9/v1", "k")
    assert isinstance(provider, OpenAIProvider)
    assert (provider.timeout, provider.max_retries) == (7.5, 0)
    flagged = policy.with_overrides(summarizer_timeout=3.0, summarizer_retries=4)
    provider = summarizer_for(flagged, "anthropic", "http://127.0.0.1:9", "k")
    assert isinstance(provider, AnthropicProvider)
    assert (provider.timeout, provider.max_retries) == (3.0, 4)
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert "--summarizer-timeout" in result.output and "--summarizer-retries" in result.output
    assert "--compaction-deadline" in result.output
