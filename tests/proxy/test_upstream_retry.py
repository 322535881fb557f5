"""A request the upstream's closing keep-alive connection reset before any answer byte is
sent again once (its body is bytes); a second failure, or a streamed body, is a 502."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from compaction.proxy.errors import ProxyError
from compaction.proxy.upstream import open_stream


def _flaky(failures: list[type[Exception]]) -> tuple[httpx.MockTransport, list[int]]:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if failures:
            raise failures.pop(0)("connection reset by peer", request=request)
        return httpx.Response(200, json={"ok": True})

    return httpx.MockTransport(handler), calls


def _send(transport: httpx.MockTransport, content: bytes) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport) as client:
            response, _ = await open_stream(
                client, "POST", "http://upstream.test/v1/chat/completions", [], content
            )
            await response.aread()
            return response

    return asyncio.run(go())


@pytest.mark.parametrize("error", [httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError])
def test_a_reset_reused_connection_is_tried_once_more(error: type[Exception]) -> None:
    transport, calls = _flaky([error])
    response = _send(transport, b"{}")
    assert response.status_code == 200
    assert len(calls) == 2


def test_a_second_failure_is_a_502() -> None:
    transport, calls = _flaky([httpx.ReadError, httpx.ReadError])
    with pytest.raises(ProxyError) as raised:
        _send(transport, b"{}")
    assert raised.value.status == 502
    assert len(calls) == 2


def test_a_connect_failure_is_not_retried_here() -> None:
    transport, calls = _flaky([httpx.ConnectError])
    with pytest.raises(ProxyError):
        _send(transport, b"{}")
    assert len(calls) == 1


def test_the_proxy_keeps_client_connections_longer_than_client_pools_do() -> None:
    from compaction.cli.serve import access_logged_config

    config = access_logged_config(object(), host="127.0.0.1", port=0, log_level="warning")
    # httpx (and the SDKs built on it) keep idle connections 5 s: the server must outlast that.
    assert config.timeout_keep_alive > httpx.Limits().keepalive_expiry  # type: ignore[operator]
