"""Error translation (pure, no SDK) and the retry loop."""

from __future__ import annotations

import http.server
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction.cli import cli
from compaction.dialects import OPENAI
from compaction.exceptions import (
    AuthenticationError,
    BadResponseError,
    ContextOverflowError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    UnsupportedError,
)
from compaction.providers import call_with_retries
from compaction.providers.errors import (
    error_details,
    error_from_response,
    is_context_overflow,
    retry_after_from_headers,
)
from compaction.providers.retry import backoff_delay

from .helpers import coding_session

# ------------------------------------------------------------------- context overflow


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 8545 tokens. Please reduce the length of the messages.",
        "prompt is too long: 208310 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease "
        "input length or `max_tokens` and try again",
        "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "Requested tokens (5000) exceed context window of 4096",
        "Context size has been exceeded.",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ],
)
def test_overflow_wordings_are_recognised(message: str) -> None:
    assert is_context_overflow(message)


@pytest.mark.parametrize(
    "message",
    [
        "Incorrect API key provided",
        "Invalid value for 'temperature': must be at most 2.",
        "messages: at least one message is required",
    ],
)
def test_other_wordings_are_not_overflow(message: str) -> None:
    assert not is_context_overflow(message)


# --------------------------------------------------------------------- classification


def classify(status: int | None, body: object, **kwargs: Any) -> ProviderError:
    return error_from_response(
        "p", status=status, details=error_details(body, f"Error code: {status}"), **kwargs
    )


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, {"error": {"message": "prompt is too long: 9 > 8"}}, ContextOverflowError),
        (
            413,
            {"error": {"type": "request_too_large", "message": "Request too large"}},
            ContextOverflowError,
        ),
        (401, {"error": {"message": "bad key"}}, AuthenticationError),
        (403, {"error": {"type": "permission_error", "message": "no"}}, AuthenticationError),
        (429, {"error": {"message": "slow down"}}, RateLimitError),
        (408, "Request Timeout", ProviderTimeoutError),
        (504, "Gateway Timeout", ProviderTimeoutError),
        (500, {"error": {"message": "boom"}}, ServerError),
        (502, "<html>Bad Gateway</html>", ServerError),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ServerError,
        ),
        (404, {"error": {"message": "The model `x` does not exist"}}, ProviderError),
    ],
)
def test_status_and_body_pick_the_most_specific_class(
    status: int, body: object, expected: type[ProviderError]
) -> None:
    error = classify(status, body)

    assert type(error) is expected
    assert error.status == status
    assert error.provider == "p"


def test_spent_quota_is_a_rate_limit_that_waiting_will_not_fix() -> None:
    body = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}

    error = classify(429, body)

    assert isinstance(error, RateLimitError)
    assert not error.retryable
    assert RateLimitError.retryable  # the class default is untouched


def test_structured_words_only_matter_for_structured_requests() -> None:
    body = {"error": {"message": "Unknown parameter: 'response_format'."}}

    assert type(classify(400, body, structured_words=("response_format",))) is UnsupportedError
    assert type(classify(400, body)) is ProviderError


def test_an_unnamed_error_inside_a_stream_is_a_retryable_server_error() -> None:
    error = classify(200, {"error": {"message": "something broke"}}, in_stream=True)

    assert isinstance(error, ServerError)
    assert error.status == 200
    assert "inside a 200 stream" in str(error)


def test_a_stream_error_with_a_client_code_is_classified_by_it() -> None:
    error = classify(200, {"error": {"message": "no such key", "code": 401}}, in_stream=True)

    assert isinstance(error, AuthenticationError)


def test_retry_after_is_kept_only_on_retryable_errors() -> None:
    assert classify(429, "slow", retry_after=3.0).retry_after == 3.0
    assert classify(503, "busy", retry_after=1.5).retry_after == 1.5
    assert classify(400, "bad", retry_after=3.0).retry_after is None


def test_error_details_reads_fastapi_validation_bodies() -> None:
    body = {"detail": [{"loc": ["body", "response_format", "type"], "msg": "bad"}]}

    details = error_details(body, "Error code: 422")

    assert "response_format" in details.text
    assert details.message == "Error code: 422"


# ------------------------------------------------------------------------ retry-after


def test_retry_after_headers() -> None:
    assert retry_after_from_headers({"retry-after": "3"}) == 3.0
    assert retry_after_from_headers({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_from_headers({"retry-after": "soon"}) is None
    assert retry_after_from_headers({"retry-after": "-4"}) is None
    assert retry_after_from_headers({}) is None
    assert retry_after_from_headers(None) is None


def test_retry_after_as_an_http_date() -> None:
    # Wed, 21 Oct 2026 07:28:00 GMT is 1792567680 seconds after the epoch.
    headers = {"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}

    assert retry_after_from_headers(headers, now=1792567670.0) == 10.0
    assert retry_after_from_headers(headers, now=1792567690.0) == 0.0


# ------------------------------------------------------------------------------ retry


class Flaky:
    """Raises the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_retryable_errors_are_retried_with_growing_jittered_waits() -> None:
    fn = Flaky(ServerError("a"), ProviderTimeoutError("b"), RateLimitError("c"))
    sleeps = Sleeps()

    result = call_with_retries(fn, attempts=4, sleep=sleeps, rng=random.Random(7))

    assert result == "ok"
    assert fn.calls == 4
    assert [round(s, 6) for s in sleeps] == [
        round(backoff_delay(n, base_delay=0.5, max_delay=8.0, rng=r), 6)
        for r in [random.Random(7)]
        for n in (1, 2, 3)
    ]
    for n, wait in enumerate(sleeps, start=1):
        ceiling = min(8.0, 0.5 * 2 ** (n - 1))
        assert ceiling / 2 <= wait <= ceiling


def test_waits_are_capped_at_max_delay() -> None:
    rng = random.Random(1)

    waits = [backoff_delay(n, base_delay=0.5, max_delay=8.0, rng=rng) for n in range(1, 12)]

    assert max(waits) <= 8.0
    assert waits[-1] >= 4.0


@pytest.mark.parametrize(
    "error",
    [
        ContextOverflowError("too long"),
        AuthenticationError("bad key"),
        BadResponseError("empty"),
        UnsupportedError("no schema"),
        ProviderError("404"),
    ],
)
def test_errors_that_are_not_retryable_are_raised_at_once(error: ProviderError) -> None:
    fn = Flaky(error)
    sleeps = Sleeps()

    with pytest.raises(type(error)) as caught:
        call_with_retries(fn, sleep=sleeps)

    assert caught.value is error
    assert fn.calls == 1
    assert sleeps == []


def test_the_last_error_is_raised_when_attempts_run_out() -> None:
    last = ServerError("third")
    fn = Flaky(ServerError("first"), ServerError("second"), last)
    sleeps = Sleeps()

    with pytest.raises(ServerError) as caught:
        call_with_retries(fn, attempts=3, sleep=sleeps)

    assert caught.value is last
    assert fn.calls == 3
    assert len(sleeps) == 2


def test_retry_after_is_waited_exactly() -> None:
    limited = RateLimitError("slow down")
    limited.retry_after = 2.5
    sleeps = Sleeps()

    assert call_with_retries(Flaky(limited), sleep=sleeps) == "ok"
    assert sleeps == [2.5]


def test_a_retry_after_longer_than_allowed_is_not_waited_for() -> None:
    limited = RateLimitError("come back in an hour")
    limited.retry_after = 3600.0
    fn = Flaky(limited)
    sleeps = Sleeps()

    with pytest.raises(RateLimitError):
        call_with_retries(fn, sleep=sleeps, max_retry_after=60.0)

    assert fn.calls == 1
    assert sleeps == []


def test_exceptions_outside_the_provider_tree_are_not_retried() -> None:
    fn = Flaky(KeyError("bug"))

    with pytest.raises(KeyError):
        call_with_retries(fn, sleep=Sleeps())
    assert fn.calls == 1


@pytest.mark.parametrize("attempts", [0, -1])
def test_attempts_must_be_positive(attempts: int) -> None:
    never: Callable[[], str] = Flaky()

    with pytest.raises(ValueError, match="attempts"):
        call_with_retries(never, attempts=attempts)


# ------------------------------------------------------------ at the command line


class _GarbageServer(http.server.BaseHTTPRequestHandler):
    """Answers every request 200 with bytes that are not UTF-8."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"data: \xff\xfe\xfa{}\n\n")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def garbage_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _GarbageServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_compact_falls_back_to_the_digest_when_the_summarizer_answers_garbage(
    tmp_path: Path, garbage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = tmp_path / "session.json"
    path.write_text(json.dumps(OPENAI.encode(coding_session(30))))

    result = CliRunner().invoke(
        cli,
        [
            *("compact", str(path), "--strategy", "summarize", "--target-ratio", "0.3"),
            *("--provider", "openai", "--model", "gpt-test", "--base-url", garbage_server),
            *("--receipt", str(tmp_path / "receipt.json")),
        ],
    )

    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.stderr
    assert OPENAI.validate(OPENAI.decode(json.loads(result.stdout))) == []
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    errors = receipt["summarizer"]["errors"]
    assert errors and all("could not be decoded" in e for e in errors)


class _StalledServer(http.server.BaseHTTPRequestHandler):
    """Takes every request and answers nothing for a while."""

    requests = 0

    def do_POST(self) -> None:
        type(self).requests += 1
        time.sleep(2)

    def log_message(self, *args: Any) -> None:
        pass


def test_compact_takes_the_summarizer_timeout_and_retries_from_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _StalledServer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    path = tmp_path / "session.json"
    path.write_text(json.dumps(OPENAI.encode(coding_session(30))))
    try:
        result = CliRunner().invoke(
            cli,
            [
                *("compact", str(path), "--strategy", "summarize", "--target-ratio", "0.3"),
                *("--provider", "openai", "--model", "gpt-test"),
                *("--base-url", f"http://127.0.0.1:{server.server_address[1]}/v1"),
                *("--summarizer-timeout", "0.2", "--summarizer-retries", "0"),
                *("--receipt", str(tmp_path / "receipt.json")),
            ],
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 0, result.stderr
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    errors = receipt["summarizer"]["errors"]
    assert errors and all("timed out" in e for e in errors)
    # no retries: one request per summarizer call the compactor made
    assert _StalledServer.requests == len(errors)
