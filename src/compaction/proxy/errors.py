"""Errors in each API's own shape: response bodies, in-stream error events, and reading the
upstream's context-length errors.

    OpenAI (chat, responses)  {"error": {"message", "type", "param", "code"}}
    Anthropic                 {"type": "error", "error": {"type", "message"}}

In a 200 stream, OpenAI Chat Completions signals an error as `data: {"error": {…}}`, the
Responses API as `event: error` (we add the `error` object too, so the OpenAI SDK raises it),
Anthropic as `event: error` with its error body. These are what the SDKs turn into exceptions.

This module must never put a request body, a header or a key into an error message.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from starlette.responses import Response

ApiName = Literal["openai", "responses", "anthropic"]

_OPENAI_TYPES: Final = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    502: "server_error",
    504: "server_error",
}
_ANTHROPIC_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    502: "api_error",
    504: "timeout_error",
}

# How upstreams word "the prompt is longer than the window" (lower case): OpenAI's code and
# message, the Responses API's, llama.cpp's server, vLLM's, Anthropic's.
_OVERFLOW_MARKERS: Final = (
    b"context_length_exceeded",
    b"maximum context length",
    b"exceeds the context window",
    b"exceeds the available context size",
    b"exceed_context_size_error",
    b"prompt is too long",
    b"context length is",
)


class ProxyError(Exception):
    """A request the proxy answers itself, with `status` and a message for the client."""

    def __init__(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> None:
        self.status = status
        self.code = code
        self.param = param
        super().__init__(message)


def error_body(
    api: ApiName, status: int, message: str, *, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    if api == "anthropic":
        kind = _ANTHROPIC_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_response(api: ApiName, error: ProxyError) -> Response:
    body = error_body(api, error.status, str(error), code=error.code, param=error.param)
    return Response(
        json.dumps(body, ensure_ascii=False).encode(),
        status_code=error.status,
        media_type="application/json",
    )


def stream_error_event(api: ApiName, message: str, *, code: str = "upstream_error") -> bytes:
    """One server-sent event that the API's SDK reads as an error, starting a new event."""
    if api == "anthropic":
        data = {"type": "error", "error": {"type": "api_error", "message": message}}
        return b"event: error\ndata: " + _dumps(data) + b"\n\n"
    error = {"message": message, "type": "server_error", "param": None, "code": code}
    if api == "responses":
        event = {"type": "error", "code": code, "message": message, "param": None, "error": error}
        return b"event: error\ndata: " + _dumps(event) + b"\n\n"
    return b"data: " + _dumps({"error": error}) + b"\n\n"


def is_context_overflow(status: int, body: bytes) -> bool:
    """Whether an upstream answer says the prompt did not fit the model's window."""
    if status not in (400, 413, 422):
        return False
    text = body[:65536].lower()
    return any(marker in text for marker in _OVERFLOW_MARKERS)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
