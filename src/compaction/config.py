"""`CompactionConfig`: when to compact, how far, what to keep, and which strategies to run.

Validated on construction (unknown keys and out-of-range values are errors that name the key),
loadable from YAML, and immutable. Strategies are their own validated configs (see
`compaction.strategies`), so a config's `strategies` list is the pipeline itself.

This module must never do I/O beyond reading the YAML file it is asked to load.
"""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)

from compaction.exceptions import ConfigError
from compaction.strategies import (
    CompactionStrategy,
    DigestStrategy,
    MaskStrategy,
    Strategy,
    TruncateStrategy,
)


class _Settings(BaseModel):
    """A settings model whose constructor raises `ConfigError`, not pydantic's
    `ValidationError`, so `except CompactionError` catches a Python caller's mistake too; an
    unknown key gets the closest known one as a suggestion."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            name = type(self).__name__
            raise ConfigError(
                format_validation_error(e, suggest_for=type(self)), location=name
            ) from None


# Validation from a mapping (`from_dict`, a nested field of a workflow) keeps pydantic's
# errors, which those callers format with their own source and key path: this marker, the one
# pydantic puts on `BaseModel.__init__`, keeps validation from routing through the override.
setattr(_Settings.__init__, "__pydantic_base_init__", True)  # noqa: B010


class PinRules(_Settings):
    """Which messages are never compacted. System messages always are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first_user_message: bool = Field(
        default=True, description="Keep the first message the user wrote (usually the task)."
    )
    patterns: tuple[str, ...] = Field(
        default=(), description="Regular expressions; a message whose text matches is pinned."
    )

    @field_validator("patterns")
    @classmethod
    def _compile(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"invalid regular expression {pattern!r}: {e}") from e
        return patterns


def _third_party(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A built-in by its `kind` (YAML, a dict, an instance) is validated as one; in Python
    any other object implementing `CompactionStrategy` (a third-party strategy) is taken as
    it is."""
    if not isinstance(value, dict | BaseModel) and isinstance(value, CompactionStrategy):
        return value
    return handler(value)


StrategyItem = Annotated[Strategy, WrapValidator(_third_party)]


def default_strategies() -> tuple[Strategy, ...]:
    return (MaskStrategy(), DigestStrategy(), TruncateStrategy())


class CompactionConfig(_Settings):
    """When to compact (any one trigger suffices), the size to reach, and what to keep.

    Triggers: `token_threshold`, `window_fraction` (of the model's context window),
    `turn_threshold` (user turns), `message_threshold`, `threshold_chars`. All default to
    off (`None`). `max_tokens` is the most tokens allowed after compaction; when unset, the
    compactor aims at `target_fraction` of the threshold that fired.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    token_threshold: int | None = Field(default=None, gt=0)
    turn_threshold: int | None = Field(default=None, gt=0)
    message_threshold: int | None = Field(default=None, gt=0)
    threshold_chars: int | None = Field(default=None, gt=0)
    window_fraction: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, gt=0)
    target_fraction: float = Field(default=0.6, gt=0, le=1)
    keep_recent_n: int = Field(default=8, ge=0)
    keep_recent_tokens: int | None = Field(default=None, gt=0)
    min_reduction: float = Field(default=0.05, ge=0, lt=1)
    pin: PinRules = Field(default_factory=PinRules)
    strategies: tuple[StrategyItem, ...] = Field(default_factory=default_strategies)
    model: str | None = Field(
        default=None,
        description="The compaction model: the one LLM strategies ask for summaries.",
    )
    tokenizer_model: str | None = Field(
        default=None,
        description="The model whose tokenizer counts the conversation and whose context "
        "window `window_fraction` refers to. Default: the conversation's own model.",
    )
    context_windows: dict[str, int] = Field(default_factory=dict)
    prompt: str | None = Field(
        default=None, description="Summary prompt template (Jinja2 text) replacing the default."
    )
    prompt_file: str | None = Field(
        default=None, description="Path of a summary prompt template replacing the default."
    )
    instructions: str | None = Field(
        default=None, description="Added to the summary prompt (e.g. what to keep)."
    )
    summary_max_tokens: int = Field(
        default=2048, gt=0, description="Output the summarizer may write (reserved)."
    )
    summary_window: int | None = Field(
        default=None, gt=0, description="The compaction model's window (default: registry)."
    )
    structured_summary: bool = Field(
        default=True, description="Ask for JSON first; free text is the fallback."
    )
    summarizer_failures: int = Field(
        default=3, gt=0, description="Consecutive failures that open the circuit breaker."
    )
    summarizer_timeout: float = Field(
        default=120.0, gt=0, description="Seconds one summarizer call may take, each try."
    )
    summarizer_retries: int = Field(
        default=2, ge=0, description="Tries after the first, for errors a retry may fix."
    )

    @field_validator("strategies")
    @classmethod
    def _non_empty(cls, strategies: tuple[Strategy, ...]) -> tuple[Strategy, ...]:
        if not strategies:
            raise ValueError("at least one strategy is required")
        return strategies

    @model_validator(mode="after")
    def _one_prompt(self) -> CompactionConfig:
        if self.prompt is not None and self.prompt_file is not None:
            raise ValueError("give `prompt` or `prompt_file`, not both")
        return self

    @model_validator(mode="after")
    def _target_below_threshold(self) -> CompactionConfig:
        # A target at or over the trigger makes every triggered compaction a no-op.
        if (
            self.max_tokens is not None
            and self.token_threshold is not None
            and self.max_tokens >= self.token_threshold
        ):
            raise ValueError(
                f"max_tokens ({self.max_tokens}) must be below token_threshold "
                f"({self.token_threshold}): a compaction must end below the size that "
                "triggers it"
            )
        return self

    @field_validator("context_windows")
    @classmethod
    def _positive_windows(cls, windows: dict[str, int]) -> dict[str, int]:
        for model, size in windows.items():
            if size <= 0:
                raise ValueError(f"context window of {model!r} must be positive, got {size}")
        return windows

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "config") -> CompactionConfig:
        """Validate a mapping; errors name `source` and the key path."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(
                f"expected a mapping of settings, got {type(data).__name__}", location=source
            )
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise ConfigError(format_validation_error(e), location=source) from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> CompactionConfig:
        """Load a YAML file: either the settings at top level or under a `compact:` key."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise ConfigError(f"cannot read: {e.strerror}", location=str(path)) from None
        except yaml.YAMLError as e:
            raise ConfigError(f"not valid YAML: {e}", location=str(path)) from None
        if isinstance(data, dict) and "compact" in data:
            data = data["compact"]
        return cls.from_dict(data, source=str(path))

    @property
    def summarizer_strategies(self) -> tuple[str, ...]:
        """The kinds of the configured strategies that call the compaction model (a
        compactor running them needs a summarizer provider)."""
        return tuple(s.kind for s in self.strategies if s.needs_summarizer)

    def with_overrides(self, **changes: Any) -> CompactionConfig:
        """A copy with `changes` applied (None values are ignored), validated again."""
        merged = self.model_dump(exclude_unset=True)
        merged["strategies"] = list(self.strategies)
        merged.update({k: v for k, v in changes.items() if v is not None})
        return CompactionConfig.from_dict(merged, source="overrides")


def format_validation_error(
    error: ValidationError, *, suggest_for: type[BaseModel] | None = None
) -> str:
    """One line per problem: `key.path: what was wrong`. With `suggest_for` (the model that
    was validated), an unknown key also gets the closest known key of its place."""
    lines = []
    for item in error.errors():
        path = ".".join(str(p) for p in item["loc"]) or "(top level)"
        if item["type"] == "extra_forbidden":
            known = known_keys(suggest_for, item["loc"][:-1]) if suggest_for else ()
            close = difflib.get_close_matches(str(item["loc"][-1]), known, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            lines.append(f"{path}: unknown key{hint}")
        elif item["type"] == "union_tag_invalid":
            lines.append(f"{path}: {item['msg']}")
        else:
            lines.append(f"{path}: {item['msg'].removeprefix('Value error, ')}")
    return "; ".join(lines)


def known_keys(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[str, ...]:
    """The keys allowed at `loc` (a pydantic error location) inside `model`: the fields of
    the model reached by following `loc` through fields, list indexes and union tags."""
    models = [model]
    for step in loc:
        if isinstance(step, int):
            continue
        fields = [m.model_fields[step] for m in models if step in m.model_fields]
        if fields:
            models = [m for f in fields for m in _models_in(f.annotation)]
        else:
            # A discriminated union names the chosen member by its tag (`kind`).
            models = [m for m in models if _tag(m) == step]
        if not models:
            return ()
    return tuple(name for m in models for name in m.model_fields)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _tag(model: type[BaseModel]) -> Any:
    field = model.model_fields.get("kind")
    return field.default if field is not None else None
