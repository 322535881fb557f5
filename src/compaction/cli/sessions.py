"""`compaction sessions list|show` and `compaction recall`: reading the session store.

The store is `--store`, else `$COMPACTION_STORE`, else the one `--config`'s workflow names,
else `compaction.store.default_store_path()`.
These commands only read: they must never create a store, a session or a record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from compaction.cli.transcripts import fmt_tokens, plural, user_errors
from compaction.exceptions import SessionNotFoundError
from compaction.messages import ImagePart, Message, ToolCallPart, ToolResultPart
from compaction.recall import handles_in
from compaction.serialize import message_to_dict
from compaction.store import SessionInfo, SessionStore, open_store, store_location
from compaction.tokens import ConversationCounter
from compaction.workflow import load_workflow

F = TypeVar("F", bound=Callable[..., Any])

PREVIEW_CHARS = 72


def store_option(func: F) -> F:
    func = click.option(
        "--config",
        "config_path",
        metavar="FILE",
        expose_value=False,
        callback=_remember_config,
        help="Use the store a workflow file names (its `store:`).",
    )(func)
    return click.option(
        "--store",
        metavar="PATH",
        help="The session store (default: $COMPACTION_STORE, else --config's, else the "
        "per-user data path).",
    )(func)


def _remember_config(ctx: click.Context, _: click.Parameter, path: str | None) -> None:
    ctx.meta["compaction.config"] = path


def resolve_store(given: str | None) -> str:
    path = click.get_current_context().meta.get("compaction.config")
    configured = load_workflow(path).store if path else None
    return store_location(given, configured)


@contextmanager
def existing_store(location: str) -> Iterator[SessionStore | None]:
    """The store at `location`, or None when no file is there (reading creates nothing)."""
    if "://" not in location and location != ":memory:" and not Path(location).exists():
        yield None
        return
    with open_store(location) as store:
        yield store


def require_session(
    store: SessionStore | None, location: str, session_id: str
) -> tuple[SessionStore, SessionInfo]:
    """The store and the session's info; `SessionNotFoundError` (exit 2) when either is
    missing."""
    if store is None:
        raise SessionNotFoundError(f"no session {session_id!r}: there is no store at {location}")
    return store, store.session(session_id)


def preview(message: Message, limit: int = PREVIEW_CHARS) -> str:
    """One line saying what the message holds: its text, else its calls, else its results."""
    text = (
        message.text
        or ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
        or "\n".join(p.text for p in message.tool_results)
    )
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def full_text(message: Message) -> str:
    """Everything the message shows, part by part: text, tool calls, tool results."""
    lines: list[str] = []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            lines.append(f"→ {part.name}({part.arguments})  [call {part.id}]")
        elif isinstance(part, ToolResultPart):
            error = " (error)" if part.is_error else ""
            lines.append(f"← result of {part.tool_call_id}{error}:")
            lines.append(part.text)
        elif isinstance(part, ImagePart):
            lines.append(f"[image {part.url[:60]}]")
        else:
            lines.append(part.text)
    return "\n".join(lines)


def counter_for(info: SessionInfo) -> ConversationCounter:
    provider = "anthropic" if info.dialect == "anthropic" else None
    return ConversationCounter.for_model(info.model, provider=provider)


@click.group("sessions")
def sessions_group() -> None:
    """The logged sessions: every message as it happened and every compaction."""


@sessions_group.command("list")
@store_option
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Most recent sessions to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@user_errors
def list_command(store: str | None, limit: int, as_json: bool) -> None:
    """Sessions, most recently updated first."""
    location = resolve_store(store)
    with existing_store(location) as opened:
        found = opened.sessions(limit) if opened is not None else []
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo(f"no sessions in {location}", err=True)
        return
    rows = [
        (s.id, s.agent or "-", s.model or "-", str(s.messages), str(s.compactions), _when(s))
        for s in found
    ]
    header = ("ID", "AGENT", "MODEL", "MESSAGES", "COMPACTIONS", "UPDATED")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [
            cell.rjust(w) if i in (3, 4) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        click.echo("  ".join(cells).rstrip())


@sessions_group.command("show")
@click.argument("session_id", metavar="ID")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--full", is_flag=True, help="Print whole messages and summaries, not previews.")
@user_errors
def show_command(session_id: str, store: str | None, as_json: bool, full: bool) -> None:
    """The view the model sees now (summaries marked), then the compaction history."""
    location = resolve_store(store)
    with existing_store(location) as opened:
        sessions, info = require_session(opened, location, session_id)
        view, seqs = sessions.view(session_id)
        logged = [m for _, m in sessions.messages(session_id)]
        records = sessions.compactions(session_id)
    counter = counter_for(info)
    counted = counter.count(view)
    logged_tokens = counter.count(logged).total
    est = counted.estimated

    if as_json:
        data = {
            "session": info.to_dict(),
            "view": [
                {
                    "index": i,
                    "seq": seq,
                    "role": m.role,
                    "tokens": tokens,
                    "summary": m.is_summary,
                    **({"message": message_to_dict(m)} if full else {"preview": preview(m)}),
                }
                for i, (m, seq, tokens) in enumerate(
                    zip(view, seqs, counted.per_message, strict=True)
                )
            ],
            "compactions": [_record_dict(r.to_dict(), full) for r in records],
            "totals": {
                "view_messages": len(view),
                "view_tokens": counted.total,
                "logged_messages": len(logged),
                "logged_tokens": logged_tokens,
                "compactions": len(records),
                "estimated": est,
                "tokenizer": counted.counter,
            },
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return

    described = ", ".join(
        f"{k} {v}" for k, v in (("agent", info.agent), ("model", info.model)) if v
    )
    click.echo(f"session {info.id}" + (f" ({described})" if described else ""))
    click.echo(f"created {info.to_dict()['created_at']}, updated {info.to_dict()['updated_at']}")
    click.echo("")
    click.echo(f"view ({plural(len(view), 'message')}, {fmt_tokens(counted.total, est)} tokens):")
    for i, (message, seq, tokens) in enumerate(zip(view, seqs, counted.per_message, strict=True)):
        where = f"seq {seq}" if seq is not None else "new"
        mark = "summary" if message.is_summary else message.role
        head = f"  #{i:<3} {where:<9} {mark:<9} {fmt_tokens(tokens, est):>8} tokens"
        if full:
            click.echo(head)
            click.echo(_indent(full_text(message), "      "))
        else:
            click.echo(f"{head}  {preview(message)}")

    click.echo("")
    if not records:
        click.echo("compactions: none")
    else:
        click.echo(f"compactions ({len(records)}):")
    for record in records:
        data = record.to_dict()
        before = "?" if record.tokens_before is None else fmt_tokens(record.tokens_before, est)
        after = "?" if record.tokens_after is None else fmt_tokens(record.tokens_after, est)
        click.echo(
            f"  #{record.number} {data['created_at']}  {before} → {after} tokens, "
            f"{plural(len(record.replaced), 'message')} replaced (after message {record.after_seq})"
        )
        if record.summary:
            if full:
                click.echo(_indent(record.summary, "      "))
            else:
                click.echo(f"      summary: {' '.join(record.summary.split())[:PREVIEW_CHARS]}…")
    click.echo("")
    click.echo(
        f"totals: {plural(len(logged), 'message')} logged "
        f"({fmt_tokens(logged_tokens, est)} tokens); "
        f"the view has {len(view)} ({fmt_tokens(counted.total, est)} tokens) after "
        f"{plural(len(records), 'compaction')}"
    )
    if counter.note:
        click.echo(f"note: {counter.note}", err=True)


@click.command("recall")
@click.argument("session_id", metavar="SESSION")
@click.argument("query")
@store_option
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Most matching originals to show.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--full", is_flag=True, help="Print the exact original messages.")
@user_errors
def recall_command(
    session_id: str,
    query: str,
    store: str | None,
    limit: int,
    as_json: bool,
    full: bool,
) -> None:
    """The originals compacted away in SESSION that QUERY names: an archive handle (m-…, as
    a placeholder shows it) for that original whole, or words (or any substring) to search."""
    location = resolve_store(store)
    with existing_store(location) as opened:
        sessions, _ = require_session(opened, location, session_id)
        hits = sessions.recall(query, session_id=session_id, limit=limit)
    if as_json:
        rows = [
            {**h.to_dict(), **({"message": message_to_dict(h.message)} if full else {})}
            for h in hits
            if h.message is not None
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    named = handles_in(query)
    if not hits:
        missing = (
            f"no original is kept as {', '.join(named)} in {session_id}"
            if named
            else f"nothing compacted away in {session_id} matches {query!r}"
        )
        click.echo(missing, err=True)
        return
    for hit in hits:
        where = "seq -" if hit.seq is None else f"seq {hit.seq}"
        if (full or named) and hit.message is not None:
            click.echo(f"--- {hit.handle or '-'} {where} ({hit.role}) ---")
            click.echo(full_text(hit.message))
        else:
            snippet = " ".join(hit.snippet.split())
            click.echo(f"{hit.handle or '-':<14} {where:<9} {hit.role:<9} {snippet}")


def _when(info: SessionInfo) -> str:
    return str(info.to_dict()["updated_at"]).replace("T", " ").removesuffix("+00:00")


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _record_dict(data: dict[str, Any], full: bool) -> dict[str, Any]:
    if not full:
        data = {k: v for k, v in data.items() if k != "view"}
    return data
