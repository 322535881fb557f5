"""The `compaction` command: thin noun/verb commands over the library, one module per group.

Every command turns user mistakes into one clear line and exit status 2, never a traceback.
"""

from __future__ import annotations

import logging

import click

from compaction import __version__
from compaction.cli.config import config_group
from compaction.cli.eval import eval_command
from compaction.cli.run import run_command
from compaction.cli.serve import serve_command
from compaction.cli.sessions import recall_command, sessions_group
from compaction.cli.transcripts import compact_command, count_command, validate_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="compaction")
def cli() -> None:
    """Context compaction for LLM agents."""


cli.add_command(compact_command)
cli.add_command(count_command)
cli.add_command(validate_command)
cli.add_command(eval_command)
cli.add_command(sessions_group)
cli.add_command(recall_command)
cli.add_command(config_group)
cli.add_command(run_command)
cli.add_command(serve_command)


def main() -> None:
    # Commands print the library's notes themselves; keep the logging fallback from repeating
    # them on stderr.
    logging.getLogger("compaction").addHandler(logging.NullHandler())
    cli()


__all__ = ["cli", "main"]
