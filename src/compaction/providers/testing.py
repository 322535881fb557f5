"""Providers for tests: real implementations of `Provider`, shipped so that users of the
library can test their own compaction setups without a model, a network or mocks.

    FunctionProvider   answers every request with a function of the request
    ScriptedProvider   answers from a script of `Step`s, checks what each request looks like,
                       and fails on a call the script did not plan or a step never reached

Both record every request they receive (`requests`) so a test can assert on exactly what a
provider was sent. Replies follow the SDK adapters' rules, so code under test sees what it
would see in production:

    "text"                 the answer's text; for a structured request it must be JSON
                           (else `BadResponseError`); "" is an empty answer (`BadResponseError`)
    {"key": …}             structured data (its text is the JSON)
    ToolCalls(…)           tool calls, optionally after some text (below)
    Completion(…)          returned as it is
    an exception instance  raised, e.g. `ContextOverflowError("prompt is too long")` for a
                           provider that reports the request did not fit its window

A reply that calls tools:

    Step(ToolCalls(("read_file", {"path": "a.py"}), ("grep", {"pattern": "TODO"}),
                   text="Let me look."))

Each call is `(name, arguments)`, arguments a mapping (sent as JSON) or raw JSON text, or a
ready `ToolCallPart` (kept as it is). Generated ids are `call_<n>_<k>`, n the provider's call
number and k the call's place in the reply (both from 1): the same on every run and never
repeated within one provider's life. `completion.message` then carries the calls, ready to
be answered with tool results.

Like the SDK adapters, both hand the answer's text to the request's `on_text` before they
return, in a few pieces, so code that consumes streamed text is exercised too. Usage is
estimated at four characters a token.

This module must never touch the network or the SDKs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeAlias

from compaction.exceptions import BadResponseError, UnsupportedError
from compaction.messages import ToolCallPart
from compaction.providers.base import Completion, CompletionRequest, Usage

__all__ = [
    "FunctionProvider",
    "Reply",
    "ScriptedProvider",
    "Step",
    "ToolCalls",
    "UnconsumedStepsError",
    "UnexpectedCallError",
    "summarize_request",
]

PlannedCall: TypeAlias = tuple[str, Mapping[str, Any] | str] | ToolCallPart
"""One call of a `ToolCalls` reply: `(name, arguments)` or a ready `ToolCallPart`."""


@dataclass(frozen=True, slots=True, init=False)
class ToolCalls:
    """A reply that calls tools, optionally after some text, e.g.
    `ToolCalls(("read_file", {"path": "a.py"}), text="Let me look.")`; see the module
    docstring for the forms a call may take and the ids it gets."""

    calls: tuple[PlannedCall, ...]
    text: str = ""

    def __init__(self, *calls: PlannedCall, text: str = "") -> None:
        if not calls:
            raise ValueError("ToolCalls needs at least one call")
        object.__setattr__(self, "calls", calls)
        object.__setattr__(self, "text", text)

    def parts(self, call_number: int) -> tuple[ToolCallPart, ...]:
        """The calls as `ToolCallPart`s, with ids generated for call `call_number`."""
        out: list[ToolCallPart] = []
        for k, call in enumerate(self.calls, start=1):
            if isinstance(call, ToolCallPart):
                out.append(call)
                continue
            name, arguments = call
            raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
            out.append(ToolCallPart(f"call_{call_number}_{k}", name, raw))
        return tuple(out)


Reply: TypeAlias = Completion | ToolCalls | str | Mapping[str, Any] | BaseException
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
        return completion_for(
            self._fn(request), request, provider=self._name, call_number=len(self.requests)
        )


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
        return completion_for(step.returns, request, provider=self._name, call_number=number)

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
    tools = f", tools=[{', '.join(t.name for t in request.tools)}]" if request.tools else ""
    model = f"model={request.model!r}, " if request.model else ""
    return f"{model}{len(request.messages)} messages [{roles}]{schema}{tools}, last: {snippet!r}"


def completion_for(
    reply: Reply, request: CompletionRequest, *, provider: str, call_number: int = 1
) -> Completion:
    """Turn a test reply into what an SDK adapter would have returned (or raised), handing
    its text to `request.on_text` first. `call_number` (from 1) numbers generated tool call
    ids."""
    completion = _completion(reply, request, provider, call_number)
    if request.on_text is not None:
        for piece in _pieces(completion.text):
            request.on_text(piece)
    return completion


def _completion(
    reply: Reply, request: CompletionRequest, provider: str, call_number: int
) -> Completion:
    if isinstance(reply, BaseException):
        raise reply
    if isinstance(reply, Completion):
        return reply
    model = request.model or provider
    if isinstance(reply, ToolCalls):
        calls = reply.parts(call_number)
        spoken = reply.text + "".join(c.name + c.arguments for c in calls)
        return Completion(
            text=reply.text,
            model=model,
            usage=estimated_usage(request, spoken),
            finish_reason="tool_calls",
            tool_calls=calls,
        )
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


def _pieces(text: str, count: int = 3) -> list[str]:
    """`text` cut into at most `count` non-empty pieces, as a stream would deliver it."""
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


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
