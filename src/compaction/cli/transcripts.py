"""`compaction compact`, `count` and `validate`: commands over one transcript file.

Exit status: 0 done, 1 the target could not be met (compact) or violations found
(validate), 2 bad input. Output goes to stdout or `-o`; reports go to stderr.

The other command modules import their shared helpers from here, so this module imports
only what reading and counting a transcript needs; the compactor, the strategies and the
providers are imported inside the commands that use them.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from compaction.cli.policy import CONFIG_HELP, load_policy, summarizer_call_options
from compaction.dialects import decode_any, detect_dialect, get_dialect, load_payload
from compaction.exceptions import AuthenticationError, CompactionError, InputError
from compaction.messages import Conversation
from compaction.tokens import ConversationCounter, provider_for_dialect

if TYPE_CHECKING:
    from compaction.compactor import Receipt
    from compaction.providers.base import Provider
    from compaction.strategies import Strategy

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("openai", "anthropic", "responses", "traj")
STRATEGY_NAMES = ("mask", "digest", "summarize", "sequence", "truncate")
PROVIDERS = ("openai", "anthropic")


def make_provider(
    name: str,
    model: str | None,
    base_url: str | None,
    *,
    timeout: float = 120.0,
    max_retries: int = 2,
) -> Provider:
    """The summarizer provider the command line asked for; keys come from the environment
    (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). `timeout` bounds each try, `max_retries`
    counts the tries after the first."""
    if not model:
        raise click.UsageError(f"--provider {name} needs --model (the compaction model)")
    try:
        if name == "openai":
            from compaction.providers.openai import OpenAIProvider

            return OpenAIProvider(
                model, base_url=base_url, timeout=timeout, max_retries=max_retries
            )
        from compaction.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, base_url=base_url, timeout=timeout, max_retries=max_retries)
    except (AuthenticationError, ImportError) as e:
        raise click.UsageError(str(e)) from None


def user_errors(func: F) -> F:
    """Turn the package's input errors into one line on stderr and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InputError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)
        except CompactionError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def read_conversation(source: str, fmt: str | None) -> Conversation:
    name = "<stdin>" if source == "-" else source
    if source == "-":
        raw = sys.stdin.buffer.read()
    else:
        try:
            with open(source, "rb") as handle:
                raw = handle.read()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", location=name) from None
    payload = load_payload(raw, source=name)
    dialect = fmt or detect_dialect(payload)
    return decode_any(payload, dialect)


def _write_text(path: str, text: str) -> None:
    # open(), not pathlib: `count` shares this module and has no other use for pathlib.
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def require_valid(conversation: Conversation, source: str) -> None:
    """Reject input that breaks its provider's rules: one line naming the first problem."""
    from compaction.compactor import validate_for

    violations = validate_for(conversation)
    if violations:
        more = (
            f" (and {len(violations) - 1} more; see `compaction validate`)"
            if len(violations) > 1
            else ""
        )
        raise InputError(f"{violations[0]}{more}", location=source)


def parse_strategies(names: str) -> tuple[Strategy, ...]:
    from pydantic import TypeAdapter, ValidationError

    from compaction.strategies import Strategy

    adapter: TypeAdapter[Strategy] = TypeAdapter(Strategy)
    chosen = []
    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue
        try:
            chosen.append(adapter.validate_python({"kind": name}))
        except ValidationError:
            raise click.BadParameter(
                f"unknown strategy {name!r} (choose from {', '.join(STRATEGY_NAMES)})",
                param_hint="--strategy",
            ) from None
    if not chosen:
        raise click.BadParameter("at least one strategy is needed", param_hint="--strategy")
    return tuple(chosen)


def one_line(text: str, limit: int = 200) -> str:
    """The first line of a message, clipped: server errors can carry whole tracebacks."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def plural(count: int, noun: str) -> str:
    """`1 violation`, `2 violations`: the count with its noun agreeing."""
    return f"{count} {_noun(count, noun)}"


def _noun(count: int, noun: str) -> str:
    return noun if count == 1 else noun + "s"


def fmt_tokens(value: int, estimated: bool) -> str:
    return f"~{value:,}" if estimated else f"{value:,}"


def describe(receipt: Receipt) -> str:
    est = receipt.estimated
    lines = [
        f"{receipt.status}: {receipt.messages_before} → "
        f"{plural(receipt.messages_after, 'message')}, "
        f"{fmt_tokens(receipt.tokens_before, est)} → {fmt_tokens(receipt.tokens_after, est)} tokens"
        + (f" (target {receipt.target_tokens:,})" if receipt.target_tokens else "")
        + f" in {receipt.elapsed_ms:.1f} ms"
    ]
    for step in receipt.steps:
        if step.tokens_before != step.tokens_after or step.messages_affected:
            lines.append(
                f"  {step.strategy:<9} {step.detail:<40} "
                f"{step.tokens_before:,} → {step.tokens_after:,} tokens"
            )
    if receipt.summarizer_calls:
        data = receipt.to_dict(include_archive=False)["summarizer"]
        calls = plural(data["calls"], "call")
        if data["input_tokens"] or data["output_tokens"]:
            usage = f"{data['input_tokens']:,} tokens in, {data['output_tokens']:,} out"
        else:
            usage = "token usage not reported by the provider"
        lines.append(f"  summarizer: {calls}, {usage}, {data['ms'] / 1000:.1f} s")
    for step in receipt.steps:
        lines.extend(f"  {step.strategy}: {one_line(error)}" for error in step.errors)
    if receipt.reason:
        lines.append(f"  {receipt.reason}")
    lines.extend(f"  note: {n}" for n in receipt.notes)
    return "\n".join(lines)


def dry_run_report(before: Conversation, receipt: Receipt, counts: list[int]) -> str:
    """What would be masked, digested or dropped, message by message, with token counts."""
    lines = [describe(receipt), "", "would change:"]
    final: dict[int, str] = {}
    for removal in receipt.removed:
        # A message masked first and digested later shows what finally happens to it.
        if final.get(removal.index) != "digested":
            final[removal.index] = removal.action
    for index in sorted(final):
        message = before.messages[index]
        preview = (
            message.text
            or ", ".join(c.name for c in message.tool_calls)
            or (message.tool_results[0].text if message.tool_results else "")
        )
        preview = " ".join(preview.split())[:64]
        action, tokens = final[index], counts[index]
        lines.append(f"  #{index:<4} {action:<9} {message.role:<9} {tokens:>7,} tokens  {preview}")
    if not final:
        lines.append("  nothing")
    return "\n".join(lines)


@click.command("compact")
@click.argument("input_path", metavar="INPUT")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write here (default: stdout)."
)
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), help="Input format (default: detected)."
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    help="The most tokens allowed after (default: the config's `max_tokens`).",
)
@click.option(
    "--target-tokens",
    "deprecated_target_tokens",
    type=click.IntRange(min=1),
    help="Deprecated name of --max-tokens.",
)
@click.option(
    "--target-ratio",
    type=click.FloatRange(0, 1, min_open=True),
    help="Target as a fraction of the input's tokens.",
)
@click.option("--strategy", "strategies", help="Strategies in order, e.g. mask,digest,truncate.")
@click.option(
    "--keep-recent",
    "keep_recent_n",
    type=click.IntRange(min=0),
    help="Recent messages to leave alone when possible (default 8).",
)
@click.option(
    "--keep-recent-tokens",
    type=click.IntRange(min=1),
    help="Token budget of the recent tail left alone.",
)
@click.option(
    "--model",
    help="The compaction model (LLM strategies); also counts tokens when the input names none.",
)
@click.option(
    "--tokenizer-model",
    help="Model whose tokenizer and window size the transcript (default: the input's model).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help=CONFIG_HELP,
)
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(dir_okay=False),
    help="Write the receipt (with every original) here as JSON.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print what would be masked, digested or dropped; write nothing.",
)
@click.option(
    "--provider",
    type=click.Choice(PROVIDERS),
    help="Summarizer for the summarize/sequence strategies (keys: OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY).",
)
@click.option("--base-url", help="The provider's base URL (any OpenAI-compatible server).")
@summarizer_call_options
@click.option("--instructions", help="Added to the summary prompt for this run.")
@click.option("-v", "--verbose", is_flag=True, help="Also print the summaries written, on stderr.")
@user_errors
def compact_command(
    input_path: str,
    output: str | None,
    fmt: str | None,
    max_tokens: int | None,
    deprecated_target_tokens: int | None,
    target_ratio: float | None,
    strategies: str | None,
    keep_recent_n: int | None,
    keep_recent_tokens: int | None,
    model: str | None,
    tokenizer_model: str | None,
    config_path: str | None,
    receipt_path: str | None,
    dry_run: bool,
    provider: str | None,
    base_url: str | None,
    summarizer_timeout: float | None,
    summarizer_retries: int | None,
    instructions: str | None,
    verbose: bool,
) -> None:
    """Compact a transcript (OpenAI, Anthropic or SWE-agent .traj JSON; `-` for stdin).

    Writes the same dialect back (OpenAI chat for .traj). Exit 0 when done, 1 when the target
    could not be met, 2 on bad input."""
    from compaction.compactor import Compactor
    from compaction.config import CompactionConfig

    if deprecated_target_tokens is not None:
        click.echo("warning: --target-tokens is deprecated: use --max-tokens", err=True)
        if max_tokens is not None and max_tokens != deprecated_target_tokens:
            raise click.UsageError("give --max-tokens or --target-tokens, not both")
        max_tokens = deprecated_target_tokens
    if max_tokens is not None and target_ratio is not None:
        raise click.UsageError("give --max-tokens or --target-ratio, not both")
    config = load_policy(config_path)[0] if config_path else CompactionConfig()
    config = config.with_overrides(
        strategies=parse_strategies(strategies) if strategies else None,
        keep_recent_n=keep_recent_n,
        keep_recent_tokens=keep_recent_tokens,
        model=model,
        tokenizer_model=tokenizer_model,
        instructions=instructions,
        summarizer_timeout=summarizer_timeout,
        summarizer_retries=summarizer_retries,
    )
    wants_llm = set(config.summarizer_strategies)
    if wants_llm and provider is None:
        raise click.UsageError(
            f"the {', '.join(sorted(wants_llm))} strategy needs a summarizer: give --provider"
        )
    summarizer = (
        make_provider(
            provider,
            config.model,
            base_url,
            timeout=config.summarizer_timeout,
            max_retries=config.summarizer_retries,
        )
        if provider
        else None
    )
    conversation = read_conversation(input_path, fmt)
    if conversation.model is None and config.tokenizer_model is None and config.model:
        config = config.with_overrides(tokenizer_model=config.model)
    require_valid(conversation, "<stdin>" if input_path == "-" else input_path)
    compactor = Compactor(config, summarizer=summarizer)
    counter = compactor.counter_for(conversation)
    tokens = counter.count(conversation).total
    if target_ratio is not None:
        max_tokens = max(int(tokens * target_ratio), 1)
    if max_tokens is None and config.max_tokens is not None:
        max_tokens = config.max_tokens
    result = compactor.compact(conversation, max_tokens=max_tokens, force=True)
    receipt = result.receipt
    if dry_run:
        counts = [counter.count_message(m) for m in conversation.messages]
        click.echo(dry_run_report(conversation, receipt, counts), err=True)
    else:
        dialect = "openai" if result.conversation.dialect == "traj" else result.conversation.dialect
        encoded = get_dialect(dialect or "openai").encode(result.conversation)
        text = json.dumps(encoded, ensure_ascii=False, indent=2) + "\n"
        if output:
            _write_text(output, text)
        else:
            click.echo(text, nl=False)
        if receipt_path:
            _write_text(
                receipt_path, json.dumps(receipt.to_dict(), ensure_ascii=False, indent=2) + "\n"
            )
        click.echo(describe(receipt), err=True)
    if verbose:
        for summary in receipt.summaries:
            click.echo("\n" + summary, err=True)
    if receipt.status in ("target_unreachable", "failed"):
        sys.exit(1)


@click.command("count")
@click.argument("input_path", metavar="INPUT")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), help="Input format (default: detected)."
)
@click.option("--model", help="Model whose tokenizer to use (default: from the input).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@user_errors
def count_command(input_path: str, fmt: str | None, model: str | None, as_json: bool) -> None:
    """Tokens per role and in total. Counts prefixed `~` are estimates."""
    conversation = read_conversation(input_path, fmt)
    counter = ConversationCounter.for_model(
        model or conversation.model, provider=provider_for_dialect(conversation.dialect)
    )
    counted = counter.count(conversation)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "total": counted.total,
                    "by_role": counted.by_role,
                    "tools": counted.tools,
                    "overhead": counted.overhead,
                    "messages": len(conversation),
                    "estimated": counted.estimated,
                    "tokenizer": counted.counter,
                    "note": counter.note,
                },
                indent=2,
            )
        )
        return
    est = counted.estimated
    click.echo(f"tokenizer: {counted.counter}")
    if counter.note:
        click.echo(f"note: {counter.note}")
    for role, value in counted.by_role.items():
        n = sum(1 for m in conversation.messages if m.role == role)
        tokens = fmt_tokens(value, est)
        click.echo(f"{role:<10} {n:>5} {_noun(n, 'message'):<8} {tokens:>12} tokens")
    if counted.tools:
        tools = fmt_tokens(counted.tools, est)
        schemas = len(conversation.tools)
        click.echo(f"{'tools':<10} {schemas:>5} {_noun(schemas, 'schema'):<8} {tools:>12} tokens")
    n = len(conversation)
    click.echo(
        f"{'total':<10} {n:>5} {_noun(n, 'message'):<8} {fmt_tokens(counted.total, est):>12} tokens"
    )


@click.command("validate")
@click.argument("input_path", metavar="INPUT")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), help="Input format (default: detected)."
)
@click.option(
    "--dialect",
    type=click.Choice(("openai", "anthropic", "responses")),
    help="Rules to check (default: the input's own; OpenAI for .traj).",
)
@user_errors
def validate_command(input_path: str, fmt: str | None, dialect: str | None) -> None:
    """Every rule the transcript breaks, with its message index. Exit 1 if any."""
    from compaction.compactor import validate_for

    conversation = read_conversation(input_path, fmt)
    violations = (
        get_dialect(dialect).validate(conversation) if dialect else validate_for(conversation)
    )
    for violation in violations:
        click.echo(f"{violation} [{violation.rule}]")
    if violations:
        click.echo(plural(len(violations), "violation"), err=True)
        sys.exit(1)
    click.echo("valid", err=True)
