from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from compaction.config import CompactionConfig
from compaction.exceptions import ConfigError
from compaction.workflow import (
    BUILTIN_TOOLS,
    AgentConfig,
    LegacyTransformsWarning,
    WorkflowConfig,
    load_workflow,
)

FIXTURES = Path(__file__).parent / "fixtures" / "workflows"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agents.yaml"


def fixture(name: str) -> str:
    return str(FIXTURES / f"{name}.yaml")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: str | Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_workflow(path)
    message = str(caught.value)
    assert "\n" not in message, "errors are one line"
    return message


# Loading and merging -------------------------------------------------------------------------


def test_minimal_agent_gets_the_library_defaults() -> None:
    workflow = load_workflow(fixture("minimal"))
    agent = workflow.agent("solo")
    assert (agent.model, agent.provider, agent.max_turns) == ("gpt-4o-mini", "openai", 20)
    assert agent.tools == ()
    assert agent.compact == CompactionConfig()
    assert agent.summarizer is None
    assert workflow.store is None
    assert workflow.source == fixture("minimal")
    assert agent.sources["model"] == "agent"
    assert agent.sources["provider"] == "built-in"
    assert agent.sources["compact.keep_recent_n"] == "built-in"


def test_top_level_defaults_merge_into_each_agent_field_by_field() -> None:
    workflow = load_workflow(fixture("overrides"))
    planner, builder = workflow.agent("planner"), workflow.agent("builder")

    assert planner.model == "gpt-4o-mini"
    assert planner.provider == "anthropic"
    assert planner.base_url == "https://llm.internal.example/v1"
    assert planner.api_key_env == "TEAM_LLM_KEY"
    assert (planner.max_turns, planner.max_output_tokens, planner.temperature) == (12, 1024, 0.3)
    assert planner.system_prompt == "You are part of the build team."
    assert planner.tools == ("recall",)
    assert (planner.compact.token_threshold, planner.compact.keep_recent_n) == (80000, 6)

    # What the builder sets wins; what it leaves alone comes from the defaults.
    assert (builder.model, builder.provider, builder.max_turns) == ("claude-sonnet-4", "openai", 40)
    assert builder.temperature is None, "an explicit null overrides the default"
    assert builder.base_url == "https://llm.internal.example/v1"
    assert builder.tools == ("read_file", "list_directory", "mytools.shell:run_command")
    assert (builder.compact.token_threshold, builder.compact.keep_recent_n) == (80000, 10)
    assert workflow.store == "sqlite:///var/lib/agents/sessions.db"


def test_sources_say_where_each_value_came_from() -> None:
    builder = load_workflow(fixture("overrides")).agent("builder")
    sources = builder.sources
    assert sources["model"] == "agent"
    assert sources["temperature"] == "agent"
    assert sources["base_url"] == "defaults"
    assert sources["description"] == "built-in"
    assert sources["compact.keep_recent_n"] == "agent"
    assert sources["compact.token_threshold"] == "defaults"
    assert sources["compact.max_tokens"] == "built-in"
    assert sources["compact.strategies"] == "built-in"
    # Every effective value has exactly one source.
    assert set(sources) >= {"id", "tools", "compact.pin.first_user_message", "compact.model"}
    assert set(sources.values()) <= {"agent", "defaults", "built-in"}
    assert builder.source_of("compact.pin") == "built-in"


def test_compact_merges_deeply_key_by_key() -> None:
    workflow = load_workflow(fixture("nested_compact"))
    deep, plain = workflow.agent("deep"), workflow.agent("plain")

    assert deep.compact.max_tokens == 50000
    assert deep.compact.pin.first_user_message is False, "kept from the defaults' pin"
    assert deep.compact.pin.patterns == ("^IMPORTANT:", "^RULE:"), "the agent's list wins"
    assert deep.compact.context_windows == {"my-finetune": 32000, "other-model": 64000}
    assert deep.sources["compact.pin.first_user_message"] == "defaults"
    assert deep.sources["compact.pin.patterns"] == "agent"
    assert deep.sources["compact.context_windows.my-finetune"] == "defaults"
    assert deep.sources["compact.context_windows.other-model"] == "agent"

    assert plain.compact.pin.patterns == ("^RULE:",)
    assert plain.compact.context_windows == {"my-finetune": 32000, "other-model": 16000}


def test_lists_are_replaced_whole_not_concatenated() -> None:
    workflow = load_workflow(fixture("lists_replaced"))
    own, inherits, none = (workflow.agent(i) for i in ("own-lists", "inherits", "no-tools"))

    assert own.tools == ("list_directory",)
    assert [s.kind for s in own.compact.strategies] == ["truncate"]
    assert own.sources["compact.strategies"] == "agent"

    assert inherits.tools == ("recall", "read_file")
    assert [s.kind for s in inherits.compact.strategies] == ["mask", "digest", "truncate"]
    assert inherits.compact.strategies[0].model_dump()["min_chars"] == 500
    assert inherits.sources["compact.strategies"] == "defaults"

    assert none.tools == (), "an empty list replaces the defaults' list"
    assert none.sources["tools"] == "agent"


def test_from_dict_names_the_source_given() -> None:
    workflow = WorkflowConfig.from_dict(
        {"model": "m", "agents": [{"id": "a"}]}, source="inline settings"
    )
    assert workflow.agent("a").model == "m"
    with pytest.raises(ConfigError, match=r"^inline settings: agents\[0\]\.max_turns: "):
        WorkflowConfig.from_dict(
            {"agents": [{"id": "a", "model": "m", "max_turns": 0}]}, source="inline settings"
        )


# Errors -------------------------------------------------------------------------------------


def test_unknown_top_level_key_is_named_with_its_line_and_a_suggestion() -> None:
    message = error_of(fixture("unknown_top_key"))
    assert message == (
        f"{fixture('unknown_top_key')}:1: modle: unknown key (did you mean `model`?)"
    )


def test_unknown_agent_key_is_named_with_the_agent_index() -> None:
    message = error_of(fixture("unknown_agent_key"))
    assert message == (
        f"{fixture('unknown_agent_key')}:5: agents[1].temprature: unknown key "
        "(did you mean `temperature`?)"
    )


def test_unknown_compact_key_on_an_agent() -> None:
    message = error_of(fixture("unknown_compact_key"))
    assert message == (
        f"{fixture('unknown_compact_key')}:7: agents[1].compact.keep_recent: unknown key "
        "(did you mean `keep_recent_n`?)"
    )


def test_unknown_compact_key_in_the_defaults_is_reported_at_top_level() -> None:
    message = error_of(fixture("unknown_default_compact_key"))
    assert message == (
        f"{fixture('unknown_default_compact_key')}:3: compact.token_treshold: unknown key "
        "(did you mean `token_threshold`?)"
    )


def test_wrong_type_names_what_was_expected_and_what_was_given() -> None:
    message = error_of(fixture("wrong_types"))
    assert message == (
        f"{fixture('wrong_types')}:4: agents[0].max_turns: Input should be a valid integer, "
        "got a string 'many'"
    )


def test_out_of_range_compact_value_names_the_key_path() -> None:
    message = error_of(fixture("bad_compact_value"))
    assert message.startswith(
        f"{fixture('bad_compact_value')}:6: agents[1].compact.keep_recent_n: "
    )
    assert "greater than or equal to 0" in message


@pytest.mark.parametrize(
    ("agent_yaml", "expected"),
    [
        ("tools: read_file", r"agents\[0\]\.tools: Input should be a list, got a string"),
        (
            "tools: [read_file, shell]",
            r"agents\[0\]\.tools: unknown tool 'shell': expected a "
            r"built-in tool \(list_directory, read_file, recall\) or an import path",
        ),
        ("tools: [recall, recall]", r"agents\[0\]\.tools: tool 'recall' is listed twice"),
        ("provider: gemini", r"agents\[0\]\.provider: Input should be 'openai' or 'anthropic'"),
        ("max_turns: true", r"agents\[0\]\.max_turns: Input should be a valid integer"),
        ("temperature: '0.2'", r"agents\[0\]\.temperature: Input should be a valid number"),
        ("temperature: 3", r"agents\[0\]\.temperature: Input should be less than or equal to 2"),
        ("base_url: localhost:8080", r"agents\[0\]\.base_url: expected an http:// or https:// URL"),
        (
            "api_key_env: sk-abc123",
            r"agents\[0\]\.api_key_env: expected the name of an "
            r"environment variable",
        ),
        (
            "compact: [token_threshold]",
            r"agents\[0\]\.compact: expected a mapping of compaction "
            r"settings, got a list",
        ),
        (
            "compact: {strategies: [{kind: mask, min_chars: -5}]}",
            r"agents\[0\]\.compact\.strategies\[0\]\.min_chars: Input should be greater",
        ),
        ("compact: {strategies: [{kind: squash}]}", r"agents\[0\]\.compact\.strategies\[0\]"),
        (
            "compact: {pin: {pattern: [x]}}",
            r"agents\[0\]\.compact\.pin\.pattern: unknown key \(did you mean `patterns`\?\)",
        ),
        (
            "summarizer: nobody",
            r"agents\[0\]\.summarizer: unknown agent 'nobody': expected one "
            r"of 'a'",
        ),
    ],
)
def test_bad_agent_values(tmp_path: Path, agent_yaml: str, expected: str) -> None:
    path = write(tmp_path, f"model: gpt-4o\nagents:\n  - id: a\n    {agent_yaml}\n")
    message = error_of(path)
    assert re.search(r"^" + re.escape(str(path)) + r":4: " + expected, message), message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", r": expected a mapping with an `agents` list, got an empty file"),
        ("- id: a\n", r":1: expected a mapping with an `agents` list, got a list"),
        ("model: m\n", r":1: agents: required: a list of agents, each with an `id`"),
        ("agents: []\n", r":1: agents: expected a non-empty list of agents, got an empty list"),
        ("agents: [coder]\n", r":1: agents\[0\]: expected a mapping with an `id`, got a string"),
        ("agents:\n  - model: m\n", r":2: agents\[0\]\.id: required: a non-empty string"),
        (
            "agents:\n  - id: a\n",
            r":2: agents\[0\]\.model: required: set it on the agent or at "
            r"top level",
        ),
        (
            "model: m\nstore: http://x/y\nagents: [{id: a}]\n",
            r":2: store: expected a file path or a sqlite:/// or postgresql:// URL",
        ),
        ("model: m\nmodel: n\nagents: [{id: a}]\n", r":2: model: key appears twice"),
        (
            "model: m\ncompact: {keep_recent_n: -1}\nagents: [{id: a}]\n",
            r":2: compact\.keep_recent_n: Input should be greater than or equal to 0",
        ),
    ],
)
def test_bad_files(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    message = error_of(path)
    assert re.search(r"^" + re.escape(str(path)) + expected, message), message


def test_duplicate_agent_ids() -> None:
    assert error_of(fixture("duplicate_ids")) == (
        f"{fixture('duplicate_ids')}:5: agents[2].id: duplicate agent id 'coder' (also agents[0])"
    )


def test_unknown_agent_requested_names_the_known_ones() -> None:
    workflow = load_workflow(fixture("overrides"))
    with pytest.raises(ConfigError) as caught:
        workflow.agent("tester")
    assert str(caught.value) == (
        f"{fixture('overrides')}: unknown agent 'tester' (known: planner, builder)"
    )


def test_missing_file() -> None:
    missing = FIXTURES / "does-not-exist.yaml"
    assert error_of(missing) == f"{missing}: cannot read: No such file or directory"


def test_invalid_yaml_names_the_line() -> None:
    message = error_of(fixture("invalid_yaml"))
    assert message.startswith(f"{fixture('invalid_yaml')}:5:7: not valid YAML: ")
    assert "expected ',' or ']'" in message


# Legacy transforms ---------------------------------------------------------------------------


def test_legacy_transform_maps_onto_compact_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="compaction")
    with pytest.warns(LegacyTransformsWarning) as caught:
        workflow = load_workflow(fixture("legacy_transforms"))
    assert issubclass(LegacyTransformsWarning, DeprecationWarning)
    (warning,) = caught
    text = str(warning.message)
    assert text.startswith(f"{fixture('legacy_transforms')}: agents[0] (coder): `transforms` is")
    assert "token_threshold: 80000" in text
    assert "own `compact`" not in text
    assert [r.getMessage() for r in caplog.records if r.name == "compaction"] == [text]

    coder = workflow.agent("coder")
    assert coder.compact.token_threshold == 80000
    assert [s.kind for s in coder.compact.strategies] == ["sequence"]
    assert coder.compact.model == "gpt-4o-mini", "the summarizing agent's model"
    assert coder.summarizer == "context_summarizer"
    summarizer = workflow.summarizer_for("coder")
    assert summarizer is not None
    assert (summarizer.model, summarizer.base_url) == ("gpt-4o-mini", "http://127.0.0.1:8080/v1")
    for key in ("compact.token_threshold", "compact.strategies", "compact.model", "summarizer"):
        assert coder.sources[key] == "transforms", key
    assert coder.sources["compact.max_tokens"] == "built-in"
    assert workflow.summarizer_for("context_summarizer") is None


def test_legacy_transform_with_explicit_compact_lets_compact_win() -> None:
    with pytest.warns(
        LegacyTransformsWarning, match=r"own `compact` values win \(token_threshold\)"
    ):
        workflow = load_workflow(fixture("legacy_with_compact"))
    coder = workflow.agent("coder")
    assert coder.compact.token_threshold == 50000
    assert coder.compact.max_tokens == 30000
    assert [s.kind for s in coder.compact.strategies] == ["sequence"]
    assert coder.sources["compact.token_threshold"] == "agent"
    assert coder.sources["compact.strategies"] == "transforms"
    assert coder.compact.model == "gpt-4o-mini"


def test_legacy_transform_with_an_unknown_agent_is_an_error() -> None:
    assert error_of(fixture("legacy_bad_agent")) == (
        f"{fixture('legacy_bad_agent')}:6: agents[0].transforms[0].assistant.agent_id: "
        "unknown agent 'summariser': expected one of 'coder', 'summarizer'"
    )


@pytest.mark.parametrize(
    ("transforms", "expected"),
    [
        ("[{user: {agent_id: s}}]", r"agents\[0\]\.transforms\[0\]: unsupported transform 'user'"),
        (
            "[{assistant: {agent_id: s}}]",
            r"agents\[0\]\.transforms\[0\]\.assistant\.token_limit: required: a positive integer",
        ),
        (
            "[{assistant: {agent_id: s, token_limit: 10, input: history}}]",
            r"agents\[0\]\.transforms\[0\]\.assistant\.input: only `context` is supported",
        ),
        (
            "[{assistant: {agent_id: s, token_limit: 10, limit: 3}}]",
            r"agents\[0\]\.transforms\[0\]\.assistant\.limit: unknown key",
        ),
        (
            "[{type: assistant, token_limit: 10}]",
            r"agents\[0\]\.transforms\[0\]\.agent_id: required: the id of the summarizing agent",
        ),
        (
            "{assistant: {agent_id: s, token_limit: 10}}",
            r"agents\[0\]\.transforms: expected a list of transforms, got a mapping",
        ),
        (
            "[{assistant: {agent_id: s, token_limit: 10}},"
            " {assistant: {agent_id: s, token_limit: 9}}]",
            r"agents\[0\]\.transforms\[1\]: only one assistant transform per agent",
        ),
    ],
)
def test_bad_legacy_transforms(tmp_path: Path, transforms: str, expected: str) -> None:
    path = write(
        tmp_path, f"model: m\nagents:\n  - id: a\n    transforms: {transforms}\n  - id: s\n"
    )
    assert re.search(r"^" + re.escape(str(path)) + r":4: " + expected, error_of(path))


def test_explicit_summarizer_wins_over_the_transforms_agent(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "model: big\nagents:\n"
        "  - id: a\n    summarizer: t\n"
        "    transforms: [{assistant: {agent_id: s, token_limit: 1000}}]\n"
        "  - id: s\n    model: small\n"
        "  - id: t\n    model: tiny\n",
    )
    with pytest.warns(LegacyTransformsWarning, match=r"its own `summarizer: t` wins"):
        agent = load_workflow(path).agent("a")
    assert (agent.summarizer, agent.compact.model) == ("t", "tiny")
    assert agent.sources["summarizer"] == "agent"
    assert agent.sources["compact.model"] == "summarizer"
    assert agent.sources["compact.token_threshold"] == "transforms"


# Python construction -------------------------------------------------------------------------


def test_agent_config_is_usable_without_yaml() -> None:
    agent = AgentConfig(
        id="coder",
        model="gpt-4o",
        tools=("recall",),
        compact=CompactionConfig(token_threshold=1000),
    )
    assert agent.max_turns == 20
    assert agent.sources["model"] == "agent"
    assert agent.sources["compact.token_threshold"] == "agent"
    assert agent.sources["compact.keep_recent_n"] == "built-in"
    assert agent.sources["max_turns"] == "built-in"
    with pytest.raises(ValidationError):
        AgentConfig(id="", model="m")
    with pytest.raises(ValidationError, match="frozen"):
        agent.model = "other"  # type: ignore[misc]


def test_agent_config_from_dict_raises_config_errors() -> None:
    agent = AgentConfig.from_dict({"id": "x", "model": "m", "compact": {"max_tokens": 5}})
    assert agent.compact.max_tokens == 5
    with pytest.raises(ConfigError, match=r"^config: compact\.max_tokens: "):
        AgentConfig.from_dict({"id": "x", "model": "m", "compact": {"max_tokens": 0}})


def test_workflow_config_checks_ids_and_summarizers_when_built_in_python() -> None:
    a = AgentConfig(id="a", model="m", summarizer="b")
    with pytest.raises(ValidationError, match="unknown summarizer 'b'"):
        WorkflowConfig(agents=(a,))
    with pytest.raises(ValidationError, match="duplicate agent id 'b'"):
        WorkflowConfig(agents=(AgentConfig(id="b", model="m"), AgentConfig(id="b", model="n")))
    workflow = WorkflowConfig(agents=(a, AgentConfig(id="b", model="small")))
    summarizer = workflow.summarizer_for(a)
    assert summarizer is not None and summarizer.model == "small"


# The example ---------------------------------------------------------------------------------


def test_the_example_loads_cleanly() -> None:
    workflow = load_workflow(EXAMPLE)  # filterwarnings=error: no deprecation either
    assert workflow.ids == ("coder", "summarizer")
    coder = workflow.agent("coder")
    assert set(coder.tools) == {"read_file", "list_directory", "recall"}
    assert coder.compact.token_threshold is not None
    assert coder.compact.max_tokens is not None
    assert coder.summarizer == "summarizer"
    summarizer = workflow.summarizer_for(coder)
    assert summarizer is not None
    assert coder.compact.model == summarizer.model
    assert coder.sources["compact.model"] == "summarizer"
    assert workflow.store is not None


def test_the_documented_migration_keeps_the_effective_configuration() -> None:
    with pytest.warns(LegacyTransformsWarning):
        before = load_workflow(fixture("migration_before"))
    after = load_workflow(fixture("migration_after"))  # no warning
    for agent_id in ("coder", "context_summarizer"):
        assert before.agent(agent_id).effective() == after.agent(agent_id).effective()
    assert before.agent("coder").sources["compact.token_threshold"] == "transforms"
    assert after.agent("coder").sources["compact.token_threshold"] == "agent"


def test_the_readme_example_loads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Agents: configuration") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    workflow = load_workflow(write(tmp_path, block.group(1)))
    coder = workflow.agent("coder")
    assert coder.tools[-1] == "mytools.shell:run_command"
    assert coder.compact.model == "gpt-4o-mini"
    assert workflow.agent("summarizer").temperature == 0


def test_empty_legacy_transforms_only_warn(tmp_path: Path) -> None:
    path = write(tmp_path, "model: m\nagents:\n  - id: a\n    transforms: []\n")
    with pytest.warns(LegacyTransformsWarning, match=r"agents\[0\] \(a\): .* empty here"):
        agent = load_workflow(path).agent("a")
    assert agent.compact == CompactionConfig()
    assert agent.summarizer is None


def test_built_in_tool_names_match_the_runtime() -> None:
    from compaction.tools import BUILTIN_TOOLS as RUNTIME_TOOLS

    assert {*RUNTIME_TOOLS, "recall"} == BUILTIN_TOOLS
