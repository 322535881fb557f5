"""`compaction run`: run an agent of a workflow file on one task, showing progress.

The answer streams to stdout as the model writes it; progress (each model call, each tool
call, each compaction with tokens before → after) goes to stderr, so `> answer.txt` keeps
only the answer. The session is logged in the store; `--session ID` resumes it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from compaction.agent import (
    AgentEvent,
    CompactionDone,
    ModelCallFinished,
    ModelCallStarted,
    Orchestrator,
    TextDelta,
    ToolCallFinished,
)
from compaction.cli.transcripts import plural, user_errors
from compaction.log import SessionLog
from compaction.store import open_store, store_location
from compaction.workflow import load_workflow


class Progress:
    """Prints the agent's events: text to stdout as it streams, the rest to stderr."""

    def __init__(self, *, quiet: bool, stream: bool = True) -> None:
        self.quiet = quiet
        self.stream = stream
        self.open_line = False

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            if self.stream:
                click.echo(event.text, nl=False)
            self.open_line = not event.text.endswith("\n")
            return
        if self.quiet:
            return
        self.end_text()
        if isinstance(event, ModelCallStarted):
            self._note(
                f"→ model call {event.number}: {plural(event.messages, 'message')}, "
                f"{event.tokens:,} tokens"
            )
        elif isinstance(event, ModelCallFinished):
            calls = f", {plural(len(event.tool_calls), 'tool call')}" if event.tool_calls else ""
            usage = event.usage
            used = (
                f", {usage.input_tokens:,} in / {usage.output_tokens:,} out"
                if usage.input_tokens or usage.output_tokens
                else ""
            )
            self._note(
                f"← model answered in {event.elapsed_ms / 1000:.1f} s"
                f" ({event.finish_reason or 'done'}{calls}{used})"
            )
        elif isinstance(event, ToolCallFinished):
            status = "error" if event.outcome.is_error else "ok"
            self._note(
                f"  tool {event.call.name}({_short(event.call.arguments)}) → {status}, "
                f"{len(event.outcome.text):,} chars in {event.elapsed_ms:.0f} ms"
            )
        elif isinstance(event, CompactionDone):
            r = event.receipt
            kinds = ", ".join(s.strategy for s in r.steps if s.messages_affected) or "none"
            self._note(
                f"⇣ compacted ({event.reason}): {r.tokens_before:,} → {r.tokens_after:,} "
                f"tokens, {r.messages_before} → {plural(r.messages_after, 'message')} [{kinds}]"
            )

    def end_text(self) -> None:
        if self.open_line:
            click.echo()
            self.open_line = False

    def _note(self, line: str) -> None:
        click.echo(line, err=True)


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.command("run")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The workflow YAML file.",
)
@click.option("--agent", "agent_id", help="The agent's id (default: the only agent).")
@click.option("--session", "session_id", help="Resume this session instead of starting one.")
@click.option(
    "--store", help="Session store: a path, sqlite:/// or postgresql:// URL (default: per-user)."
)
@click.option("--max-turns", type=click.IntRange(min=1), help="Model calls allowed for the task.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the answer.")
@click.option("--json", "as_json", is_flag=True, help="End with a JSON summary on stdout.")
@click.argument("task")
@user_errors
def run_command(
    config_path: str,
    agent_id: str | None,
    session_id: str | None,
    store: str | None,
    max_turns: int | None,
    quiet: bool,
    as_json: bool,
    task: str,
) -> None:
    """Run an agent of a workflow file on TASK (a user message), with compaction."""
    workflow = load_workflow(config_path)
    if agent_id is None:
        if len(workflow.agents) != 1:
            raise click.UsageError(
                f"--agent is required: {config_path} has agents {', '.join(workflow.ids)}"
            )
        agent = workflow.agents[0]
    else:
        agent = workflow.agent(agent_id)
    sessions = open_store(store_location(store, workflow.store))
    if session_id is None:
        log = SessionLog.open(sessions, agent=agent.id, model=agent.model, dialect=agent.provider)
    else:
        log = SessionLog.open(sessions, session_id, create=False)
    progress = Progress(quiet=quiet or as_json, stream=not as_json)
    orchestrator = Orchestrator.from_config(
        agent, workflow=workflow, log=log, max_turns=max_turns, on_event=progress
    )
    if not (quiet or as_json):
        click.echo(f"session {log.session_id} (agent {agent.id}, {agent.model})", err=True)
    result = orchestrator.run(task)
    progress.end_text()
    summary: dict[str, Any] = {
        "session": result.session_id,
        "stop_reason": result.stop_reason,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "compactions": [
            {"tokens_before": r.tokens_before, "tokens_after": r.tokens_after, "status": r.status}
            for r in result.compactions
        ],
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
        },
        "answer": result.text,
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif not quiet:
        click.echo(
            f"done: {result.stop_reason}, {plural(result.model_calls, 'model call')}, "
            f"{plural(result.tool_calls, 'tool call')}, "
            f"{plural(len(result.compactions), 'compaction')}; "
            f"resume with --session {result.session_id}",
            err=True,
        )
    if result.stop_reason == "max_turns":
        click.echo(
            f"stopped: the turn limit ({orchestrator.max_turns} model calls) was reached "
            "before the model answered without tool calls",
            err=True,
        )
        sys.exit(1)
