"""Errors in each API's own shape: response bodies, in-stream error events, and reading the
upstream's context-length errors (whether an answer is one, and the window it states).

    OpenAI (chat, responses)  {"error": {"message", "type", "param", "code"}}
    Anthropic                 {"type": "error", "error": {"type", "message"}}

In a 200 stream, OpenAI Chat Completions signals an error as `data: {"error": {…}}`, the
Responses API as `event: error` (we add the `error` object too, so the OpenAI SDK raises it),
Anthropic as `event: error` with its error body. These are what the SDKs turn into exceptions.

This module must never put a request body, a header or a key into an error message.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
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

# How upstreams state the window, and the prompt's size as they counted it, in a
# context-length error. Groups: `window`, `prompt`.
_WINDOW_STATEMENTS: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # OpenAI, vLLM, Groq, llama-cpp-python's server: "This model's maximum context length
        # is 8192 tokens. However, your messages resulted in 9000 tokens." / "However, you
        # requested 9000 tokens (8000 in the messages, 1000 in the completion)." / vLLM's
        # "… and your request has 3500 input tokens"
        r"maximum context length is (?P<window>\d+) tokens"
        r"(?:.{0,80}?(?:resulted in (?P<prompt>\d+) tokens"
        r"|\((?P<prompt2>\d+) in the messages|has (?P<prompt3>\d+) input tokens))?",
        # llama-cpp-python: "Requested tokens (5000) exceed context window of 4096"
        r"requested tokens \((?P<prompt>\d+)\) exceeds? (?:the )?context window of (?P<window>\d+)",
        r"context window of (?P<window>\d+)",
        # Anthropic: "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
        r"context limit: (?P<prompt>\d+) \+ \d+ > (?P<window>\d+)",
        # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"; the Responses API's
        # "(9000 tokens > 8192)"
        r"(?P<prompt>\d+) tokens > (?P<window>\d+)",
        # Mistral: "Prompt contains 40000 tokens … too large for model with 32768 maximum
        # context length"
        r"(?:prompt contains (?P<prompt>\d+) tokens.{0,80}?)?"
        r"too large for model with (?P<window>\d+) maximum context length",
        # Gemini: "The input token count (N) exceeds the maximum number of tokens allowed (M)"
        r"input token count \((?P<prompt>\d+)\) exceeds the maximum number of tokens "
        r"allowed \((?P<window>\d+)\)",
        # llama.cpp's server, in the error object: "n_prompt_tokens": 5000, "n_ctx": 4096
        r'"n_ctx"\s*:\s*(?P<window>\d+)',
    )
)
_PROMPT_STATEMENTS: Final = (re.compile(r'"n_prompt_tokens"\s*:\s*(?P<prompt>\d+)'),)


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


@dataclass(frozen=True, slots=True)
class StatedWindow:
    """What an upstream's context-length error says: the model's window and, when it says
    so, how many tokens it counted in the prompt (with its own tokenizer)."""

    window: int
    prompt_tokens: int | None = None


def stated_window(body: bytes) -> StatedWindow | None:
    """The window a context-length error names (see `_WINDOW_STATEMENTS` for the wordings
    read), or None when it names none."""
    text = body[:65536].decode("utf-8", "replace")
    # Some servers escape `>` in JSON strings (as \u003e): read the decoded text.
    with contextlib.suppress(ValueError):
        text = json.dumps(json.loads(text), ensure_ascii=False)
    for pattern in _WINDOW_STATEMENTS:
        match = pattern.search(text)
        if match is None:
            continue
        found = {k: int(v) for k, v in match.groupdict().items() if v is not None}
        window = found["window"]
        if window <= 0:
            continue
        prompt = found.get("prompt") or found.get("prompt2") or found.get("prompt3")
        if prompt is None:
            for statement in _PROMPT_STATEMENTS:
                stated = statement.search(text)
                if stated is not None:
                    prompt = int(stated.group("prompt"))
                    break
        return StatedWindow(window, prompt or None)
    return None


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
