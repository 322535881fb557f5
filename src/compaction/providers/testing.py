"""Providers for tests: real implementations of `Provider`, shipped so that users of the
library can test their own compaction setups without a model, a network or mocks.

    FunctionProvider   answers every request with a function of the request
    ScriptedProvider   answers from a script of `Step`s, checks what each request looks like,
                       and fails on a call the script did not plan or a step never reached

Both record every request they receive (`requests`) so a test can assert on exactly what a
provider was sent. Replies follow the SDK adapters' rules, so code under test sees what it
would see in production: a `str` is the answer's text, and for a structured request must be
JSON (else `BadResponseError`); a `Mapping` is structured data (its text is the JSON); an
exception instance is raised; an empty `str` is an empty answer (`BadResponseError`); a
`Completion` is returned as it is. Usage is estimated at four characters a token.

This module must never touch the network or the SDKs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeAlias

from compaction.exceptions import BadResponseError, UnsupportedError
from compaction.providers.base import Completion, CompletionRequest, Usage

__all__ = [
    "FunctionProvider",
    "Reply",
    "ScriptedProvider",
    "Step",
    "UnconsumedStepsError",
    "UnexpectedCallError",
    "summarize_request",
]

Reply: TypeAlias = Completion | str | Mapping[str, Any] | BaseException
"""What a test provider answers with: see the module docstring."""


class UnexpectedCallError(AssertionError):
    """A scripted provider received a call it had no step for, or one its step did not expect."""


class UnconsumedStepsError(AssertionError):
    """A scripted provider's script ended with steps never reached."""


class FunctionProvider:
    """A provider whose answer is `fn(request)`.

    With `supports_structured=False`, a request with an `output_schema` raises
    `UnsupportedError` (after being recorded) without calling `fn`, like a server without
    structured output.
    """

    def __init__(
        self,
        fn: Callable[[CompletionRequest], Reply],
        *,
        name: str = "function",
        supports_structured: bool = True,
    ) -> None:
        self._fn = fn
        self._name = name
        self.supports_structured = supports_structured
        self.requests: list[CompletionRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        if request.output_schema is not None and not self.supports_structured:
            raise UnsupportedError("structured output is not supported", provider=self._name)
        return completion_for(self._fn(request), request, provider=self._name)


@dataclass(frozen=True, slots=True)
class Step:
    """One planned call of a `ScriptedProvider`.

    `returns` is the reply. `expect`, when given, is called with the request first: it may
    assert, or return False to reject the request. `structured` True or False requires the
    request to have, or not to have, an `output_schema`; None accepts either.
    """

    returns: Reply
    expect: Callable[[CompletionRequest], object] | None = None
    structured: bool | None = None


class ScriptedProvider:
    """A provider that answers from a script, one `Step` per call, in order.

    A call beyond the script, or one its step does not accept, raises `UnexpectedCallError`
    (an `AssertionError`, so test runners show it as a failed check) naming the call number
    and the request. `assert_consumed()` raises `UnconsumedStepsError` while steps remain;
    used as a context manager, the check runs on leaving the block (unless the block is
    already failing).
    """

    def __init__(self, steps: Sequence[Step], *, name: str = "scripted") -> None:
        self._steps = tuple(steps)
        self._name = name
        self.requests: list[CompletionRequest] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """How many steps have not been used yet."""
        return max(0, len(self._steps) - len(self.requests))

    def complete(self, request: CompletionRequest) -> Completion:
        number = len(self.requests) + 1
        self.requests.append(request)
        if number > len(self._steps):
            raise UnexpectedCallError(
                f"{self._name}: unexpected call {number} (the script has "
                f"{len(self._steps)} step{'s' if len(self._steps) != 1 else ''}): "
                f"{summarize_request(request)}"
            )
        step = self._steps[number - 1]
        self._check(step, number, request)
        return completion_for(step.returns, request, provider=self._name)

    def assert_consumed(self) -> None:
        """Fail when some steps were never reached."""
        if self.remaining > 0:
            raise UnconsumedStepsError(
                f"{self._name}: {self.remaining} of {len(self._steps)} steps never called "
                f"(received {len(self.requests)} call{'s' if len(self.requests) != 1 else ''})"
            )

    def __enter__(self) -> ScriptedProvider:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # A failure inside the block is the story; unconsumed steps would only hide it.
        if exc_type is None:
            self.assert_consumed()

    def _check(self, step: Step, number: int, request: CompletionRequest) -> None:
        where = f"{self._name}: call {number} ({summarize_request(request)})"
        has_schema = request.output_schema is not None
        if step.structured is not None and step.structured != has_schema:
            wanted = "a structured request" if step.structured else "a free-text request"
            raise UnexpectedCallError(f"{where}: the script expected {wanted}")
        if step.expect is None:
            return
        try:
            verdict = step.expect(request)
        except AssertionError as e:
            raise UnexpectedCallError(f"{where}: expectation failed: {e}") from e
        if verdict is False:
            raise UnexpectedCallError(f"{where}: expectation returned False")


def summarize_request(request: CompletionRequest, *, width: int = 60) -> str:
    """A one-line description of a request for failure messages."""
    roles = ", ".join(m.role for m in request.messages)
    last = request.messages[-1].text if request.messages else ""
    snippet = " ".join(last.split())
    if len(snippet) > width:
        snippet = snippet[: width - 1] + "…"
    schema = f", output_schema={request.output_schema.name!r}" if request.output_schema else ""
    model = f"model={request.model!r}, " if request.model else ""
    return f"{model}{len(request.messages)} messages [{roles}]{schema}, last: {snippet!r}"


def completion_for(reply: Reply, request: CompletionRequest, *, provider: str) -> Completion:
    """Turn a test reply into what an SDK adapter would have returned (or raised)."""
    if isinstance(reply, BaseException):
        raise reply
    if isinstance(reply, Completion):
        return reply
    model = request.model or provider
    if isinstance(reply, Mapping):
        data: Any = dict(reply)
        text = json.dumps(data, ensure_ascii=False)
    else:
        text = reply
        if not text.strip():
            raise BadResponseError("empty answer", provider=provider)
        data = _parse_structured(text, provider) if request.output_schema is not None else None
    return Completion(
        text=text,
        model=model,
        usage=estimated_usage(request, text),
        data=data,
        finish_reason="stop",
    )


def estimated_usage(request: CompletionRequest, text: str) -> Usage:
    """About four characters a token, rounded up, so receipts carry plausible numbers."""
    chars_in = sum(m.char_count() for m in request.messages)
    return Usage(input_tokens=-(-chars_in // 4), output_tokens=-(-len(text) // 4), requests=1)


def _parse_structured(text: str, provider: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise BadResponseError(
            f"structured answer is not valid JSON: {e}", provider=provider
        ) from e
