from __future__ import annotations

from pathlib import Path

import pytest

from compaction.config import CompactionConfig
from compaction.exceptions import ConfigError
from compaction.messages import Conversation, Message
from compaction.strategies import DigestStrategy, MaskStrategy, TruncateStrategy
from compaction.triggers import should_compact, target_tokens


def test_defaults_match_the_documented_ones() -> None:
    config = CompactionConfig()
    assert config.keep_recent_n == 8
    assert config.threshold_chars is None
    assert [s.kind for s in config.strategies] == ["mask", "digest", "truncate"]


def test_unknown_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"token_treshold: unknown key"):
        CompactionConfig.from_dict({"token_treshold": 100})


def test_negative_number_is_named() -> None:
    with pytest.raises(ConfigError, match=r"keep_recent_n: .*greater than or equal to 0"):
        CompactionConfig.from_dict({"keep_recent_n": -1})


def test_unknown_strategy_kind_is_named() -> None:
    with pytest.raises(ConfigError, match=r"strategies\.0"):
        CompactionConfig.from_dict({"strategies": [{"kind": "compress-harder"}]})


def test_strategy_options_are_validated() -> None:
    with pytest.raises(ConfigError, match=r"strategies\.0\.mask\.min_chars"):
        CompactionConfig.from_dict({"strategies": [{"kind": "mask", "min_chars": -5}]})


def test_bad_pin_pattern_is_reported() -> None:
    with pytest.raises(ConfigError, match=r"pin\.patterns.*invalid regular expression"):
        CompactionConfig.from_dict({"pin": {"patterns": ["(unclosed"]}})


def test_yaml_with_compact_section(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "compact:\n  token_threshold: 1000\n  max_tokens: 600\n"
        "  strategies:\n    - kind: mask\n      min_chars: 50\n    - kind: truncate\n"
    )
    config = CompactionConfig.from_yaml(path)
    assert config.token_threshold == 1000
    assert config.max_tokens == 600
    assert config.strategies == (MaskStrategy(min_chars=50), TruncateStrategy())


def test_yaml_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("token_threshold: [1, 2\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML"):
        CompactionConfig.from_yaml(path)
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: expected a mapping"):
        CompactionConfig.from_yaml(path)


def test_overrides_keep_other_fields_and_revalidate() -> None:
    config = CompactionConfig(token_threshold=500, strategies=(DigestStrategy(),))
    changed = config.with_overrides(keep_recent_n=2, model=None)
    assert changed.token_threshold == 500
    assert changed.keep_recent_n == 2
    assert changed.strategies == (DigestStrategy(),)
    with pytest.raises(ConfigError):
        config.with_overrides(keep_recent_n=-3)


def _conversation(turns: int) -> Conversation:
    messages = [Message.text_message("system", "sys")]
    for i in range(turns):
        messages.append(Message.text_message("user", f"question {i}"))
        messages.append(Message.text_message("assistant", f"answer {i}"))
    return Conversation(tuple(messages))


@pytest.mark.parametrize(
    ("settings", "tokens", "fired"),
    [
        ({}, 10**6, []),
        ({"token_threshold": 100}, 99, []),
        ({"token_threshold": 100}, 100, ["token_threshold"]),
        ({"turn_threshold": 3}, 0, ["turn_threshold"]),
        ({"turn_threshold": 4}, 0, []),
        ({"message_threshold": 7}, 0, ["message_threshold"]),
        ({"message_threshold": 8}, 0, []),
        ({"threshold_chars": 10}, 0, ["threshold_chars"]),
        ({"window_fraction": 0.5}, 600, ["window"]),
        ({"token_threshold": 50, "turn_threshold": 2}, 60, ["token_threshold", "turn_threshold"]),
    ],
)
def test_any_trigger_suffices_and_is_named(
    settings: dict[str, object], tokens: int, fired: list[str]
) -> None:
    conversation = _conversation(3)  # 7 messages, 3 user turns
    decision = should_compact(
        conversation, CompactionConfig.from_dict(settings), tokens=tokens, window=1000
    )
    assert bool(decision) is bool(fired)
    assert len(decision.reasons) == len(fired)
    for name, reason in zip(fired, decision.reasons, strict=True):
        assert name in reason


def test_target_defaults_to_a_fraction_of_the_trigger() -> None:
    assert target_tokens(CompactionConfig(max_tokens=300, token_threshold=1000), None) == 300
    assert target_tokens(CompactionConfig(token_threshold=1000), None) == 600
    assert target_tokens(CompactionConfig(window_fraction=0.5), 10_000) == 3000
    assert target_tokens(CompactionConfig(turn_threshold=5), None) is None
