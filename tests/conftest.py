"""Tests run offline: no tokenizer download, no socket except loopback (pytest-socket), no
write to the user's cache directory."""

from __future__ import annotations

import os
import secrets
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["COMPACTION_OFFLINE"] = "1"


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Prepared vocabularies go to a directory of this run, not the user's cache (the
    command-line tests' subprocesses inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COMPACTION_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a real PostgreSQL (from the `pgserver` package) for this test run, on a
    unix socket in a temporary directory; stopped and deleted at the end. Skips when
    pgserver or psycopg (the `postgres` extra) is not installed."""
    pytest.importorskip("psycopg")
    with warnings.catch_warnings():
        # platformdirs warns when $XDG_RUNTIME_DIR is unset (CI containers); harmless here.
        warnings.simplefilter("ignore")
        pgserver = pytest.importorskip("pgserver")
        server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
def postgres_location(postgres_server: str) -> Iterator[str]:
    """A store URL on `postgres_server` whose tables go to a fresh, empty schema (named in
    the URL's `options`), dropped after the test."""
    import psycopg

    schema = f"test_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in postgres_server else "?"
    yield f"{postgres_server}{separator}options=-csearch_path%3D{schema}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A location for a new, empty store of each backend: a SQLite file, then a PostgreSQL
    URL (skipped without pgserver)."""
    if request.param == "sqlite":
        return str(tmp_path / "sessions.db")
    location: str = request.getfixturevalue("postgres_location")
    return location
