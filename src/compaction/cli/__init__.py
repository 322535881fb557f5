"""The `compaction` command: thin noun/verb commands over the library, one module per group.

Every command turns user mistakes into one clear line and exit status 2, never a traceback.
The click group lives in `compaction.cli.app` and imports each command's module only when
that command runs (or help lists it), so `compaction count` never loads the agent runtime,
the providers, the proxy or the evaluation. This module must stay free of imports beyond
the package itself: `main` answers `compaction --version` before click is loaded.
"""

from __future__ import annotations

import sys

from compaction import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compaction.cli.app import cli

# What `compaction --version` prints, from the fast path below and from click's option alike.
VERSION_MESSAGE = f"compaction, version {__version__}"


def main() -> None:
    # `--version` alone needs nothing: answering it here spares click's import (about half
    # the start-up of a bare `import tiktoken`).
    if sys.argv[1:] == ["--version"]:
        print(VERSION_MESSAGE)
        return
    # Commands print the library's notes themselves; keep the logging fallback from repeating
    # them on stderr.
    import logging

    from compaction.cli.app import cli

    logging.getLogger("compaction").addHandler(logging.NullHandler())
    cli()


def __getattr__(name: str) -> object:
    # `from compaction.cli import cli` keeps working; the group loads on first use (PEP 562).
    if name == "cli":
        from compaction.cli.app import cli

        return cli
    raise AttributeError(f"module 'compaction.cli' has no attribute {name!r}")


__all__ = ["VERSION_MESSAGE", "cli", "main"]
