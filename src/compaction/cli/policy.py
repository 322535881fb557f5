"""What `--config FILE` means, in every command: the agent workflow YAML.

A workflow file (one with an `agents` list) is validated whole, as `compaction run` and
`compaction config show` read it; its top-level `compact` section is the compaction policy
and its `store` the default session store. A file without `agents` holding only compaction
settings (at top level or under `compact:`) is read as a workflow with just that section.

This module must never import the proxy, the agent runtime or a provider, and imports the
configuration models only when a file is loaded: every command that takes `--config` imports
it for its help text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from compaction.exceptions import ConfigError

if TYPE_CHECKING:
    from compaction.config import CompactionConfig

CONFIG_HELP = (
    "Workflow YAML (or a file of compaction settings): its top-level `compact` section is "
    "the policy."
)


F = TypeVar("F", bound=Callable[..., object])


def summarizer_call_options(function: F) -> F:
    """`--summarizer-timeout` and `--summarizer-retries`, as every command that may call a
    summarizer takes them (they override `compact.summarizer_timeout` / `_retries`)."""
    function = click.option(
        "--summarizer-retries",
        type=click.IntRange(min=0),
        help="Retries of a failed summarizer call (`compact.summarizer_retries`, 2).",
    )(function)
    return click.option(
        "--summarizer-timeout",
        type=click.FloatRange(min=0, min_open=True),
        help="Seconds one summarizer call may take, each try (`compact.summarizer_timeout`, 120).",
    )(function)


def load_policy(path: str) -> tuple[CompactionConfig, str | None]:
    """The `compact` policy and the `store` of a workflow file (or a plain config file)."""
    import yaml

    from compaction.config import CompactionConfig

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle.read())
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", location=path) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"not valid YAML: {e}", location=path) from None
    if isinstance(data, dict) and "agents" in data:
        from compaction.workflow import load_workflow

        workflow = load_workflow(path)  # validates the whole file, errors name the line
        policy = CompactionConfig.from_dict(data.get("compact"), source=f"{path}: compact")
        return policy, workflow.store
    return CompactionConfig.from_yaml(path), None
