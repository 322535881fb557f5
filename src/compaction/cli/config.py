"""`compaction config show`: the effective agent configuration of a workflow file, every value
with where it came from (`agent`, `defaults`, `transforms`, `summarizer`, `built-in`).

Exit status: 0 shown, 2 bad input (one line naming the file, the key path and what was
expected). Deprecation notes for legacy `transforms` go to stderr.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import click

from compaction.cli.transcripts import user_errors
from compaction.workflow import AgentConfig, LegacyTransformsWarning, WorkflowConfig, load_workflow

# Long strings (system prompts) are clipped in the text form; --json prints them whole.
CLIP = 60
COMMENT_COLUMN = 44
_PLAIN = re.compile(r"^[A-Za-z_./~^][\w ./:@+~^,'-]*$")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "~"}


@click.group("config")
def config_group() -> None:
    """Agent workflow configuration files."""


@config_group.command("show")
@click.argument("path", metavar="FILE")
@click.option("--agent", "agent_id", metavar="ID", help="Only this agent (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: settings and sources.")
@user_errors
def show_command(path: str, agent_id: str | None, as_json: bool) -> None:
    """The effective configuration of each agent in FILE after merging the top-level
    defaults, every value with its source."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LegacyTransformsWarning)
        workflow = load_workflow(path)
    for warning in caught:
        if issubclass(warning.category, LegacyTransformsWarning):
            click.echo(f"warning: {warning.message}", err=True)
    agents = (workflow.agent(agent_id),) if agent_id is not None else workflow.agents
    if as_json:
        data = workflow.to_dict()
        data["agents"] = [a for a in data["agents"] if a["id"] in {x.id for x in agents}]
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(render(workflow, agents))


def render(workflow: WorkflowConfig, agents: tuple[AgentConfig, ...]) -> str:
    """YAML-ish text: the effective settings, each followed by `# source`."""
    lines = [
        f"# effective configuration of {workflow.source or 'the workflow'}",
        "# sources: agent (set on the agent), defaults (top level), transforms (legacy),",
        "#          summarizer (the summarizer agent's model), built-in (library default)",
        _line("store: " + _value(workflow.store), workflow.store_source),
        "agents:",
    ]
    for agent in agents:
        lines.extend(_agent_lines(agent))
    return "\n".join(lines)


def _agent_lines(agent: AgentConfig) -> list[str]:
    lines: list[str] = []
    first = True

    def walk(data: dict[str, Any], prefix: str, indent: str) -> None:
        nonlocal first
        for key, value in data.items():
            path = f"{prefix}{key}"
            lead = indent
            if first:
                lead, first = indent[:-2] + "- ", False
            if isinstance(value, dict) and value:
                lines.append(f"{lead}{key}:")
                walk(value, path + ".", indent + "  ")
            else:
                lines.append(_line(f"{lead}{key}: {_value(value)}", agent.sources[path]))

    data = agent.effective()
    data["compact"]["strategies"] = [_short_strategy(s) for s in agent.compact.strategies]
    walk(data, "", "    ")
    return lines


def _short_strategy(strategy: Any) -> dict[str, Any]:
    """A strategy as written: its kind and the options that differ from their defaults."""
    options: dict[str, Any] = strategy.model_dump(mode="json", exclude_defaults=True)
    options.pop("kind", None)
    return {"kind": strategy.kind, **options}


def _line(text: str, source: str) -> str:
    return f"{text:<{COMMENT_COLUMN}}  # {source}"


def _value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return _string(str(value))


def _string(text: str) -> str:
    clipped = text if len(text) <= CLIP else text[: CLIP - 1] + "…"
    plain = (
        _PLAIN.match(clipped)
        and clipped.lower() not in _YAML_WORDS
        and clipped == clipped.strip()
        and not clipped.endswith(":")
        and ": " not in clipped
    )
    shown = clipped if plain else json.dumps(clipped, ensure_ascii=False)
    return shown if clipped == text else f"{shown} ({len(text)} chars)"
