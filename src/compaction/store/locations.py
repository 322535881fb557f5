"""Which store a location names, and where sessions live when none is named.

This module must never import a database driver before a location asks for it: psycopg is
an extra (`postgres`), and most installations never need it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from compaction.exceptions import ConfigError
from compaction.store.base import SessionStore, redact_url
from compaction.store.sqlite import SQLiteStore

__all__ = ["default_store_path", "open_store", "store_location"]

POSTGRES_SCHEMES = ("postgres://", "postgresql://")


def default_store_path() -> Path:
    """Where sessions live when no store is named: `$COMPACTION_HOME/sessions.db`, else the
    platform's per-user data directory (`$XDG_DATA_HOME/compaction` or
    `~/.local/share/compaction` on Linux, `~/Library/Application Support/compaction` on
    macOS, `%LOCALAPPDATA%\\compaction` on Windows)."""
    home = os.environ.get("COMPACTION_HOME")
    if home:
        return Path(home).expanduser() / "sessions.db"
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "compaction" / "sessions.db"


def store_location(explicit: str | None = None, configured: str | None = None) -> str:
    """Which store a command uses: the one it was given (`--store`), else
    `$COMPACTION_STORE`, else the one a configuration names (a workflow's `store:`), else
    `default_store_path()`."""
    return explicit or os.environ.get("COMPACTION_STORE") or configured or str(default_store_path())


def open_store(location: str | os.PathLike[str] | None = None) -> SessionStore:
    """Open (creating and migrating as needed) the store at `location`: a path, a
    `sqlite:///path` URL, `:memory:`, a `postgresql://user:pass@host/db` URL (the
    `postgres` extra), or None for `default_store_path()`."""
    if location is None:
        return SQLiteStore(default_store_path())
    text = os.fspath(location)
    if text.startswith(POSTGRES_SCHEMES):
        try:
            from compaction.store.postgres import PostgresStore
        except ImportError as e:
            raise ConfigError(
                f"a PostgreSQL store needs psycopg ({e}): pip install 'llm-compaction[postgres]'",
                location="store",
            ) from e
        return PostgresStore(text)
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://")
        # sqlite:///abs/path → /abs/path; sqlite://rel/path → rel/path
        text = text or ":memory:"
    elif "://" in text:
        raise ConfigError(
            f"unknown store URL {redact_url(text)!r}: expected a path, sqlite:///path, :memory: "
            "or postgresql://user:pass@host/db",
            location="store",
        )
    return SQLiteStore(text)
