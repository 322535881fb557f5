"""The shipped test providers: FunctionProvider and ScriptedProvider."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction import providers
from compaction.exceptions import BadResponseError, RateLimitError, UnsupportedError
from compaction.messages import Message
from compaction.providers import (
    Completion,
    CompletionRequest,
    FunctionProvider,
    OutputSchema,
    Provider,
    ScriptedProvider,
    Step,
    UnconsumedStepsError,
    UnexpectedCallError,
    Usage,
)

SCHEMA = OutputSchema(name="summary", schema={"type": "object"})


def request(text: str = "Summarize the session so far.", **kwargs: Any) -> CompletionRequest:
    messages = (
        Message.text_message("system", "You summarize."),
        Message.text_message("user", text),
    )
    return CompletionRequest(messages=messages, **kwargs)


# ---------------------------------------------------------------------- FunctionProvider


def test_function_provider_answers_text_and_records_the_request() -> None:
    provider = FunctionProvider(lambda r: f"seen {len(r.messages)} messages")
    sent = request(model="tiny")

    completion = provider.complete(sent)

    assert completion.text == "seen 2 messages"
    assert completion.model == "tiny"
    assert completion.data is None
    assert completion.finish_reason == "stop"
    assert provider.requests == [sent]
    assert provider.requests[0] is sent


def test_function_provider_estimates_usage_at_four_chars_a_token() -> None:
    sent = request("x" * 40)  # plus "You summarize." (14 chars): 54 chars in

    completion = FunctionProvider(lambda r: "y" * 9).complete(sent)

    assert completion.usage == Usage(input_tokens=14, output_tokens=3, requests=1)


def test_function_provider_turns_a_dict_into_structured_data() -> None:
    answer = {"summary": "done", "kept_facts": ["a"]}

    completion = FunctionProvider(lambda r: answer).complete(request(output_schema=SCHEMA))

    assert completion.data == answer
    assert json.loads(completion.text) == answer


def test_function_provider_parses_json_text_for_a_structured_request() -> None:
    completion = FunctionProvider(lambda r: "[1, 2]").complete(request(output_schema=SCHEMA))

    assert completion.data == [1, 2]


def test_function_provider_text_that_is_not_json_is_a_bad_structured_answer() -> None:
    provider = FunctionProvider(lambda r: "Sure! Here is a summary.")

    with pytest.raises(BadResponseError, match="not valid JSON"):
        provider.complete(request(output_schema=SCHEMA))


def test_function_provider_empty_text_is_an_empty_answer() -> None:
    with pytest.raises(BadResponseError, match="empty answer"):
        FunctionProvider(lambda r: "  ").complete(request())


def test_function_provider_raises_a_returned_exception() -> None:
    error = RateLimitError("slow down", provider="function", status=429)
    provider = FunctionProvider(lambda r: error)

    with pytest.raises(RateLimitError) as caught:
        provider.complete(request())

    assert caught.value is error
    assert len(provider.requests) == 1


def test_function_provider_returns_a_completion_untouched() -> None:
    made = Completion(text="", model="m", usage=Usage(1, 2, 3), finish_reason="length")

    assert FunctionProvider(lambda r: made).complete(request()) is made


def test_function_provider_without_structured_output_refuses_a_schema() -> None:
    calls: list[CompletionRequest] = []

    def answer(r: CompletionRequest) -> str:
        calls.append(r)
        return "free text"

    provider = FunctionProvider(answer, name="plain", supports_structured=False)

    with pytest.raises(UnsupportedError) as caught:
        provider.complete(request(output_schema=SCHEMA))

    assert caught.value.provider == "plain"
    assert calls == []
    assert len(provider.requests) == 1
    assert provider.complete(request()).text == "free text"


def test_test_providers_satisfy_the_protocol() -> None:
    function = FunctionProvider(lambda r: "x", name="fn")
    scripted = ScriptedProvider([], name="script")

    assert isinstance(function, Provider)
    assert isinstance(scripted, Provider)
    assert (function.name, scripted.name) == ("fn", "script")


# ---------------------------------------------------------------------- ScriptedProvider


def test_scripted_provider_answers_in_order_and_records_every_request() -> None:
    provider = ScriptedProvider([Step("first"), Step({"summary": "second"}), Step("third")])
    sent = [request("one"), request("two", output_schema=SCHEMA), request("three")]

    answers = [provider.complete(r) for r in sent]

    assert [a.text for a in answers] == ["first", '{"summary": "second"}', "third"]
    assert answers[1].data == {"summary": "second"}
    assert provider.requests == sent
    assert provider.remaining == 0
    provider.assert_consumed()


def test_a_call_beyond_the_script_names_the_call_and_the_request() -> None:
    provider = ScriptedProvider([Step("only")])
    provider.complete(request())

    with pytest.raises(UnexpectedCallError) as caught:
        provider.complete(request("Please summarize the failing build logs", model="small"))

    message = str(caught.value)
    assert "unexpected call 2" in message
    assert "1 step)" in message
    assert "model='small'" in message
    assert "[system, user]" in message
    assert "Please summarize the failing build logs" in message
    assert isinstance(caught.value, AssertionError)
    assert len(provider.requests) == 2


def test_an_expectation_that_asserts_fails_the_call() -> None:
    def wants_a_schema(r: CompletionRequest) -> None:
        assert r.output_schema is not None, "the summarizer should ask for structure first"

    provider = ScriptedProvider([Step("x", expect=wants_a_schema)])

    with pytest.raises(UnexpectedCallError, match=r"call 1.*should ask for structure first"):
        provider.complete(request())


def test_an_expectation_that_returns_false_fails_the_call() -> None:
    provider = ScriptedProvider([Step("x", expect=lambda r: r.model == "compaction-model")])

    with pytest.raises(UnexpectedCallError, match="expectation returned False"):
        provider.complete(request(model="agent-model"))


def test_an_expectation_that_holds_lets_the_step_answer() -> None:
    provider = ScriptedProvider(
        [Step("x", expect=lambda r: r.model == "compaction-model", structured=False)]
    )

    assert provider.complete(request(model="compaction-model")).text == "x"


@pytest.mark.parametrize(
    ("structured", "sent", "wanted"),
    [
        (True, request(), "a structured request"),
        (False, request(output_schema=SCHEMA), "a free-text request"),
    ],
)
def test_a_step_can_require_structured_or_free_text(
    structured: bool, sent: CompletionRequest, wanted: str
) -> None:
    provider = ScriptedProvider([Step("{}", structured=structured)])

    with pytest.raises(UnexpectedCallError, match=f"expected {wanted}"):
        provider.complete(sent)


def test_a_step_can_raise_a_provider_error() -> None:
    provider = ScriptedProvider([Step(UnsupportedError("no schema")), Step("free text")])

    with pytest.raises(UnsupportedError):
        provider.complete(request(output_schema=SCHEMA))
    assert provider.complete(request()).text == "free text"


def test_unconsumed_steps_fail_assert_consumed() -> None:
    provider = ScriptedProvider([Step("a"), Step("b"), Step("c")])
    provider.complete(request())

    assert provider.remaining == 2
    with pytest.raises(UnconsumedStepsError, match="2 of 3 steps never called") as caught:
        provider.assert_consumed()
    assert isinstance(caught.value, AssertionError)


def test_the_context_manager_fails_on_exit_when_steps_remain() -> None:
    with pytest.raises(UnconsumedStepsError), ScriptedProvider([Step("a"), Step("b")]) as p:
        p.complete(request())


def test_the_context_manager_passes_when_the_script_is_used_up() -> None:
    with ScriptedProvider([Step("a")]) as provider:
        provider.complete(request())

    assert provider.remaining == 0


def test_the_context_manager_does_not_hide_a_failure_inside_the_block() -> None:
    with pytest.raises(KeyError), ScriptedProvider([Step("a")]):
        raise KeyError("the real problem")


def test_the_package_exports_are_unique_and_exist() -> None:
    assert len(providers.__all__) == len(set(providers.__all__))
    for name in providers.__all__:
        assert hasattr(providers, name), name
