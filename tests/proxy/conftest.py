"""In-process proxy tests: the app driven through `httpx.ASGITransport`, its upstream an
`httpx.MockTransport` (tests/proxy/upstream.py), the store in memory unless a test needs a
file."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from compaction.dialects import ANTHROPIC, OPENAI
from compaction.messages import Conversation
from compaction.providers.base import Provider
from compaction.proxy import ProxySettings, create_app
from compaction.store import SessionStore, open_store

from ..helpers import coding_session
from .upstream import FakeUpstream, Handler

UPSTREAM = "http://upstream.test"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Harness:
    client: httpx.AsyncClient
    upstream: FakeUpstream
    app: Starlette
    store: SessionStore

    async def status(self) -> dict[str, Any]:
        response = await self.client.get("/compaction/status")
        assert response.status_code == 200
        data: dict[str, Any] = response.json()
        return data


@asynccontextmanager
async def running(
    *,
    handler: Handler | None = None,
    store: SessionStore | None = None,
    summarizer: Provider | None = None,
    **settings: Any,
) -> AsyncIterator[Harness]:
    upstream = FakeUpstream(handler)
    store = store if store is not None else open_store(":memory:")
    settings.setdefault("upstream", UPSTREAM)
    app = create_app(
        ProxySettings(**settings),
        store=store,
        upstream_transport=httpx.MockTransport(upstream),
        summarizer=summarizer,
    )
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://proxy.test"
        ) as client,
    ):
        yield Harness(client, upstream, app, store)


def chat_body(steps: int = 3, *, output_lines: int = 20, **extra: Any) -> dict[str, Any]:
    """An OpenAI chat request: a coding session with tool calls and results."""
    body = OPENAI.encode(coding_session(steps, output_lines=output_lines))
    assert isinstance(body, dict)
    return {**body, **extra}


def anthropic_body(steps: int = 3, *, output_lines: int = 20, **extra: Any) -> dict[str, Any]:
    conversation = coding_session(steps, dialect="anthropic", output_lines=output_lines)
    body = ANTHROPIC.encode(
        Conversation(conversation.messages, model="claude-sonnet-4-5", dialect="anthropic")
    )
    assert isinstance(body, dict)
    return {**body, "max_tokens": 1024, **extra}


def raw(body: dict[str, Any]) -> bytes:
    """A request body as a client would write it (not the proxy's compact separators)."""
    return json.dumps(body, indent=1).encode()
