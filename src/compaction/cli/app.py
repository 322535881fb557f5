"""The click group behind `compaction`: each command's module is imported only when that
command runs (or help lists it), from `COMMANDS`. Entry point and `--version` fast path:
`compaction.cli.main`.
"""

from __future__ import annotations

import importlib

import click

from compaction import __version__
from compaction.cli import VERSION_MESSAGE

# Each command's module and attribute, in the order `--help` lists them.
COMMANDS: dict[str, str] = {
    "compact": "compaction.cli.transcripts:compact_command",
    "count": "compaction.cli.transcripts:count_command",
    "validate": "compaction.cli.transcripts:validate_command",
    "eval": "compaction.cli.eval:eval_command",
    "sessions": "compaction.cli.sessions:sessions_group",
    "recall": "compaction.cli.sessions:recall_command",
    "config": "compaction.cli.config:config_group",
    "run": "compaction.cli.run:run_command",
    "serve": "compaction.cli.serve:serve_command",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use, from `COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, message=VERSION_MESSAGE)
def cli() -> None:
    """Context compaction for LLM agents."""


__all__ = ["COMMANDS", "LazyGroup", "cli"]
