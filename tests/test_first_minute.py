"""The library and CLI errors a newcomer meets in the first minute (issue 12, item 3).

Each test here was written before its fix and failed against the code it fixes.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import compaction
from compaction import CompactionConfig, CompactionError, Compactor, ConfigError, Message
from compaction.cli import cli
from compaction.dialects import OPENAI

from .helpers import coding_session


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# -- compact(list) -------------------------------------------------------------------------


def test_compact_accepts_a_list_of_wire_messages() -> None:
    wire = OPENAI.encode(coding_session(12))["messages"]
    compactor = Compactor(CompactionConfig(token_threshold=200, max_tokens=150))
    result = compactor.compact(wire)
    assert result.conversation.dialect == "openai"
    assert result.receipt.tokens_before == compactor.count(OPENAI.decode({"messages": wire}))
    assert result.receipt.status in ("compacted", "target_unreachable")


def test_compact_accepts_a_list_of_messages() -> None:
    conversation = coding_session(12)
    compactor = Compactor(CompactionConfig(token_threshold=200, max_tokens=150))
    result = compactor.compact(list(conversation.messages))
    assert result.receipt.tokens_before == compactor.count(conversation)
    assert compactor.should_compact(list(conversation.messages)).compact


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({"messages": []}, "dict"),
        ("hello", "str"),
        (42, "int"),
        ([1, 2], "a list holding int"),
        (
            [{"role": "user", "content": "x"}, Message.text_message("user", "y")],
            "a list mixing Messages and wire messages",
        ),
    ],
)
def test_compact_of_something_else_names_the_decoder(value: object, named: str) -> None:
    with pytest.raises(TypeError, match=r"OPENAI\.decode\(") as caught:
        Compactor().compact(value)  # type: ignore[arg-type]
    assert f"got {named}" in str(caught.value)


# -- CompactionConfig(...) in Python --------------------------------------------------------


def test_config_in_python_raises_config_error_with_a_suggestion() -> None:
    suggestion = r"tokn_threshold: unknown key \(did you mean `token_threshold`\?\)"
    with pytest.raises(ConfigError, match=suggestion):
        CompactionConfig(tokn_threshold=100)  # type: ignore[call-arg]
    with pytest.raises(CompactionError, match=r"pin\.frist_user_message.*`first_user_message`"):
        CompactionConfig(pin={"frist_user_message": False})  # type: ignore[arg-type]


def test_config_in_python_names_the_key_of_a_bad_value() -> None:
    with pytest.raises(ConfigError, match=r"CompactionConfig: keep_recent_n: .*greater than"):
        CompactionConfig(keep_recent_n=-1)


def test_config_from_yaml_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tokn_threshold: 5\n")
    with pytest.raises(ConfigError) as caught:
        CompactionConfig.from_yaml(path)
    assert str(caught.value) == f"{path}: tokn_threshold: unknown key"


def test_max_tokens_at_or_over_the_threshold_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"max_tokens \(100\).*token_threshold \(100\)"):
        CompactionConfig(token_threshold=100, max_tokens=100)
    with pytest.raises(ConfigError, match="max_tokens"):
        CompactionConfig.from_dict({"token_threshold": 100, "max_tokens": 150})
    assert CompactionConfig(token_threshold=100, max_tokens=99).max_tokens == 99


# -- version, plurals, help ----------------------------------------------------------------


def test_version_is_the_distribution_version() -> None:
    assert compaction.__version__ == importlib.metadata.version("llm-compaction")
    code, out, _ = _invoke("--version")
    assert code == 0
    assert compaction.__version__ in out


def test_one_violation_is_singular(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    orphan = {"role": "tool", "tool_call_id": "x", "content": "r"}
    path.write_text(json.dumps({"messages": [orphan]}))
    code, _, err = _invoke("validate", str(path))
    assert code == 1
    assert err.strip().splitlines()[-1] == "1 violation"


def test_count_says_one_message(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    code, out, _ = _invoke("count", str(path))
    assert code == 0
    assert " 1 message " in out
    assert "1 messages" not in out


def _commands(group: click.Group, prefix: str = "compaction") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = [(prefix, group)]
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix} {name}"))
        else:
            found.append((f"{prefix} {name}", command))
    return found


def test_every_command_and_option_has_help_text() -> None:
    missing = []
    for path, command in _commands(cli):
        if not (command.help or command.short_help):
            missing.append(path)
        for param in command.params:
            if isinstance(param, click.Option) and not param.help:
                missing.append(f"{path} {param.opts[0]}")
    assert missing == []


# -- one name for the size target ----------------------------------------------------------


def test_compact_takes_max_tokens_and_target_tokens_still_works() -> None:
    conversation = coding_session(20)
    compactor = Compactor()
    result = compactor.compact(conversation, max_tokens=1500)
    assert result.receipt.target_tokens == 1500
    with pytest.warns(DeprecationWarning, match="max_tokens"):
        old = Compactor().compact(conversation, target_tokens=1500)
    assert old.receipt.tokens_after == result.receipt.tokens_after


def test_cli_max_tokens_and_the_deprecated_target_tokens(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(OPENAI.encode(coding_session(20))))
    code, out, err = _invoke("compact", str(path), "--max-tokens", "1500")
    assert code == 0, err
    assert "(target 1,500)" in err
    old_code, old_out, old_err = _invoke("compact", str(path), "--target-tokens", "1500")
    assert old_code == 0, old_err
    assert "--target-tokens is deprecated: use --max-tokens" in old_err
    assert old_out == out


# -- one meaning for --config --------------------------------------------------------------


def test_compact_config_takes_a_workflow_file_like_serve(tmp_path: Path) -> None:
    """`--config` is the workflow YAML in every command; its top-level `compact` section is
    the policy. A file holding only compaction settings is still accepted."""
    session = tmp_path / "s.json"
    session.write_text(json.dumps(OPENAI.encode(coding_session(20))))
    workflow = tmp_path / "workflow.yaml"
    workflow.write_text("model: gpt-4o\nagents:\n  - id: coder\n")
    code, _, err = _invoke(
        "compact", str(session), "--config", str(workflow), "--max-tokens", "1500"
    )
    assert code == 0, err
    assert "(target 1,500)" in err
    typo = tmp_path / "typo.yaml"
    typo.write_text("compact:\n  max_tokens: 1500\nagents:\n  - id: coder\n    modle: gpt-4o\n")
    code, _, err = _invoke("compact", str(session), "--config", str(typo))
    assert code == 2
    assert "modle" in err
    bare = tmp_path / "bare.yaml"
    bare.write_text("max_tokens: 1500\n")
    code, _, err = _invoke("compact", str(session), "--config", str(bare))
    assert code == 0, err
    assert "(target 1,500)" in err
