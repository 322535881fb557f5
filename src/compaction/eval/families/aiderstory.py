"""aiderstory-style: an aider chat (its SEARCH/REPLACE text protocol, no tool calls) on a
FastAPI service, with a story of its own (not `story.tell`).

What aider sends the model, as its sources build it (`aider/coders/base_coder.py`,
`editblock_prompts.py`, `base_prompts.py`, `commands.py`, `linter.py`, `prompts.py`), for a
model set up like gpt-4o (edit format "diff", lazy, examples in the system message):

- one system message: the edit-block rules, the example conversations, the platform lines
  (the auto-test command among them) and the *SEARCH/REPLACE block* reminder;
- the repo map as a user turn ("Here are summaries of some files present in my git
  repository. …", each file's outline in `│`/`⋮` lines), answered "Ok, I won't try and edit
  those files without asking first.";
- the conversation so far (aider's "done" messages), then the files in the chat as one user
  turn ("I have *added these files to the chat* so you can go ahead and edit them. …", each
  file's path above its fenced content), answered "Ok, any changes I propose will be to those
  files.", then the turns since the last applied edit (aider's "cur" messages);
- assistant replies: prose, *SEARCH/REPLACE* blocks (the path alone on a line, a fence,
  `<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE`; a new file has an empty SEARCH part),
  shell commands suggested in ```bash fences;
- after an edit is applied and auto-committed: a user turn "I committed the changes with git
  hash … & commit msg: …" answered "Ok." ("Applied edit to …" and "Commit … …" are printed
  on the terminal only; the model never sees them);
- `/run CMD`, output added: "I ran this command:\n\nCMD\n\nAnd got this output:\n\n…" answered
  "Ok."; the auto-test after an edit, failing, adds the same turn and (the user agreeing to a
  fix) sends it again as the next user message; aider's lint after an edit (flake8's fatal
  codes, `--show-source`): "# Fix any errors below, if possible." with the flake8 output and
  the tree context of the flagged lines (`█`);
- when a reply names repository files that are not in the chat and the user lets aider add
  them: "I added these files to the chat: …\nLet me know if there are others we should add."
  (the reply's edits are not applied, the model repeats them);
- `/undo`, `/add`, `/drop` send nothing for such a model (the next requests simply show the
  files as they now are); a file is deleted by the user running `/run git rm …`.

The session is one request as aider would send it after its last reply, with aider's own
history summarizer off (`--max-chat-history-tokens` raised), so the whole story is there.

The story: the search endpoint of a FastAPI/SQLAlchemy catalogue service (names, values and
wording drawn per seed). The user's first message sets three rules (Postgres only, no given
search library; production runs an old Python; bad input is a 400 with a given error code)
and two values (results per page, a statement timeout in ms). The assistant puts the
endpoint in the frozen v1 router and is sent to the v2 one (the user ran /undo). Matching
goes ILIKE → full-text on the existing search_vector column → pg_trgm similarity; offset
pagination becomes keyset pagination with an opaque cursor. The timeout changes once, the
page size twice. The user forbids touching alembic/versions/ (the migration to-do is
dropped), adds a docs to-do, and asks which commit added the search_vector column (answered
from a `git log -S` the user ran). The assistant keeps its to-do list in prose ("Remaining:").
A collection error (`str | None` on the old Python) and a wrong keyset comparison (a failing
test) are fixed, so is aider's lint report (F821), the full-text module is removed with
`/run git rm`, and the last auto-test run ends with one failing tie test. The last message
names no fact.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Final

from compaction.eval.families._base import CHARS_PER_TOKEN, Session, finish_session
from compaction.eval.probes import FactCategory
from compaction.eval.sessions import EvalSession

FAMILY: Final = "aiderstory-style"

# --- what a seed draws ---------------------------------------------------------------------

#: package, noun, plural, model class, searched column, another column, owner (singular,
#: plural, class), a prefix users type, a code-like term.
_PROJECTS: Final = (
    ("shelfwise", "book", "books", "Book", "title", "isbn",
     "publisher", "publishers", "Publisher", "silmar", "978-0-26"),
    ("partsbin", "part", "parts", "Part", "name", "sku",
     "supplier", "suppliers", "Supplier", "hydr", "KX-200"),
    ("larder", "recipe", "recipes", "Recipe", "title", "cuisine",
     "author", "authors", "Author", "lasag", "GF-12"),
    ("tidepool", "listing", "listings", "Listing", "title", "city",
     "host", "hosts", "Host", "seavi", "APT-4B"),
    ("fleetdesk", "vehicle", "vehicles", "Vehicle", "model_name", "plate",
     "depot", "depots", "Depot", "sprint", "WX-61"),
    ("gallerist", "artwork", "artworks", "Artwork", "title", "medium",
     "artist", "artists", "Artist", "noctur", "OIL-1887"),
)  # fmt: skip
_DEPENDENCIES: Final = ("elasticsearch", "meilisearch", "typesense", "opensearch-py", "whoosh")
_PYTHONS: Final = ("3.8", "3.9")
_CODES: Final = (
    "SEARCH_QUERY_INVALID",
    "BAD_SEARCH_REQUEST",
    "INVALID_SEARCH_PARAMS",
    "SEARCH_PARAM_REJECTED",
)
#: results per page: first, second, last (two digits each: none stands inside another).
_PAGE_SIZES: Final = ((25, 40, 30), (20, 48, 36), (24, 60, 32), (30, 50, 20), (15, 45, 35))
#: statement timeout in ms: first, later (neither stands inside the other).
_TIMEOUTS: Final = ((800, 1500), (750, 2000), (600, 1200), (900, 2500))
_COLLEAGUES: Final = ("Priya", "Tomasz", "Aiko", "Mateus", "Ines", "Kwame")
_TIE_TESTS: Final = (
    "test_page_boundary_inside_equal_scores",
    "test_cursor_survives_score_ties",
    "test_ties_do_not_repeat_across_pages",
)
_LAST_WORDS: Final = (
    "Sounds good, talk tomorrow.",
    "Understood, stopping here for today.",
    "Alright, leaving it there for now.",
    "Got it, nothing more from me today.",
)
_ROWS: Final = ("1.8M", "2.4M", "3.1M", "960k")
_VENVS: Final = ("/home/dev/{pkg}/.venv", "/Users/sam/code/{pkg}/.venv", "/srv/work/{pkg}/venv")
_DATES: Final = ("2026-02-17", "2026-03-04", "2026-03-19", "2026-04-08")

_MIGRATIONS: Final = "alembic/versions"
_TEST_CMD: Final = "pytest -q"
_FLAKE8: Final = "--select=E9,F821,F823,F831,F406,F407,F701,F702,F704,F706 --show-source --isolated"

#: The assistant's to-do items, as it writes them in its "Remaining:" lists.
_T_TIMEOUT: Final = "Per-query statement timeout"
_T_MIGRATION: Final = "Alembic migration for the search index"
_T_TESTS: Final = "Paging tests"
_T_PLAN: Final = "Check the query plan against the staging dump"


@dataclass(frozen=True)
class _Plan:
    """Everything a seed decides."""

    pkg: str
    noun: str
    plural: str
    model: str
    field: str
    extra: str
    owner: str
    owners: str
    owner_cls: str
    prefix: str
    code_term: str
    dep: str
    python: str
    code: str
    pages: tuple[int, int, int]
    timeouts: tuple[int, int]
    colleague: str
    tie_test: str
    last_words: str
    rows: str
    venv: str
    date: str
    base_tests: int
    hashes: tuple[str, ...]
    vector_hash: str
    vector_later_hash: str

    @property
    def v1(self) -> str:
        return f"{self.pkg}/api/v1/{self.plural}.py"

    @property
    def v2(self) -> str:
        return f"{self.pkg}/api/v2/{self.plural}.py"

    @property
    def config(self) -> str:
        return f"{self.pkg}/core/config.py"

    @property
    def models(self) -> str:
        return f"{self.pkg}/db/models.py"

    @property
    def search(self) -> str:
        return f"{self.pkg}/services/search.py"

    @property
    def fulltext(self) -> str:
        return f"{self.pkg}/services/fulltext.py"

    @property
    def cursor(self) -> str:
        return f"{self.pkg}/services/cursor.py"

    @property
    def conftest(self) -> str:
        return "tests/conftest.py"

    @property
    def tests(self) -> str:
        return "tests/api/test_search_pagination.py"

    @property
    def docs(self) -> str:
        return "docs/api/errors.md"

    @property
    def trgm_index(self) -> str:
        return f"ix_{self.plural}_{self.field}_trgm"

    @property
    def log_cmd(self) -> str:
        return f"git log --oneline -S search_vector -- {self.models}"

    @property
    def rm_cmd(self) -> str:
        return f"git rm {self.fulltext}"

    @property
    def t_docs(self) -> str:
        return f"Document {self.code} in {self.docs}"

    def per_page(self, k: int) -> str:
        return f"{self.pages[k]} results per page"

    def ms(self, k: int) -> str:
        return f"{self.timeouts[k]} ms"


def _draw(seed: int) -> _Plan:
    rng = random.Random(seed)
    project = rng.choice(_PROJECTS)
    hashes: list[str] = []
    while len(hashes) < 16:
        h = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        if h[0].isalpha() and all(h not in o and o not in h for o in hashes):
            hashes.append(h)
    pkg = project[0]
    return _Plan(
        *project,
        dep=rng.choice(_DEPENDENCIES),
        python=rng.choice(_PYTHONS),
        code=rng.choice(_CODES),
        pages=rng.choice(_PAGE_SIZES),
        timeouts=rng.choice(_TIMEOUTS),
        colleague=rng.choice(_COLLEAGUES),
        tie_test=rng.choice(_TIE_TESTS),
        last_words=rng.choice(_LAST_WORDS),
        rows=rng.choice(_ROWS),
        venv=rng.choice(_VENVS).format(pkg=pkg),
        date=rng.choice(_DATES),
        base_tests=rng.randint(27, 41),
        hashes=tuple(hashes[:14]),
        vector_hash=hashes[14],
        vector_later_hash=hashes[15],
    )


# --- the facts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fact:
    category: FactCategory
    text: str
    probe: tuple[str, ...]
    stale: tuple[str, ...] = ()
    required: bool = True


def _facts(p: _Plan) -> list[_Fact]:
    """The facts the story plants, in planting order (ids follow it per category)."""
    n = p.base_tests
    return [
        _Fact("constraint", f"Postgres only: no {p.dep} or other search engine/client.", (p.dep,)),
        _Fact("constraint", f"Production runs Python {p.python}.", (f"Python {p.python}",)),
        _Fact(
            "constraint",
            f"Bad search input is HTTP 400 with error code {p.code}, never a 422.",
            (p.code,),
        ),
        _Fact(
            "constraint",
            f"Nothing under {_MIGRATIONS}/ is touched (the DBA team writes migrations); the "
            "migration to-do was dropped.",
            (_MIGRATIONS,),
        ),
        _Fact("file_read", f"{p.models} was added to the chat and only read.", (p.models,)),
        _Fact(
            "file_modified",
            f"The endpoint lives in {p.v2} (not the frozen v1 router).",
            (p.v2,),
            stale=(p.v1,),
        ),
        _Fact("file_modified", f"{p.config} holds the search settings.", (p.config,)),
        _Fact("file_modified", f"{p.conftest} got a seeding fixture.", (p.conftest,)),
        _Fact("file_created", f"{p.search} was created (the search query).", (p.search,)),
        _Fact("file_created", f"{p.cursor} was created (keyset cursors).", (p.cursor,)),
        _Fact("file_created", f"{p.tests} was created (paging tests).", (p.tests,)),
        _Fact("file_deleted", f"{p.fulltext} was removed with git rm.", (p.fulltext,)),
        _Fact(
            "decision",
            "Matching is pg_trgm trigram similarity (after ILIKE, then full-text search).",
            ("pg_trgm",),
            stale=("ILIKE", "plainto_tsquery"),
        ),
        _Fact(
            "decision",
            "Pagination is keyset pagination with an opaque cursor (not offset).",
            ("keyset",),
            stale=("offset pagination",),
        ),
        _Fact(
            "changed_value",
            f"The search statement timeout is {p.ms(1)}.",
            (p.ms(1),),
            stale=(p.ms(0),),
        ),
        _Fact(
            "changed_value",
            f"The page size is {p.per_page(2)}.",
            (p.per_page(2),),
            stale=(p.per_page(0), p.per_page(1)),
        ),
        _Fact("todo", f"Still to do: {p.t_docs}.", (p.docs,)),
        _Fact("todo", f"Still to do: {_T_PLAN.lower()}.", ("staging dump",)),
        _Fact("todo", "Done: the per-query statement timeout.", (_T_TIMEOUT,), required=False),
        _Fact(
            "identifier",
            f"The search_vector column was added in commit {p.vector_hash}.",
            (p.vector_hash,),
        ),
        _Fact("identifier", f"The trigram index is {p.trgm_index}.", (p.trgm_index,)),
        _Fact("command", f"The user ran `{p.log_cmd}`.", (p.log_cmd,)),
        _Fact("command", f"The user ran `{p.rm_cmd}`.", (p.rm_cmd,)),
        _Fact(
            "error_resolved",
            f"`str | None` failed at import on Python {p.python}; fixed with Optional.",
            ("unsupported operand type(s) for |",),
            required=False,
        ),
        _Fact(
            "error_resolved",
            "aider's lint flagged F821 undefined name 'func'; the import was added.",
            ("F821 undefined name 'func'",),
            required=False,
        ),
        _Fact(
            "error_resolved",
            "test_second_page_starts_after_cursor failed (wrong keyset comparison); fixed.",
            ("test_second_page_starts_after_cursor",),
            required=False,
        ),
        _Fact("error_open", f"{p.tie_test} still fails.", (p.tie_test,)),
        _Fact(
            "test_status",
            f"Last run: 1 failed, {n + 8} passed.",
            (f"1 failed, {n + 8} passed",),
            stale=(f"1 failed, {n + 7} passed",),
        ),
        _Fact("last_message", "The assistant's last words.", (p.last_words,)),
    ]


# --- the project's files ---------------------------------------------------------------------


def _models_py(p: _Plan) -> str:
    return f'''"""ORM models of the {p.pkg} catalogue."""

from sqlalchemy import Column, DateTime, ForeignKey, Integer, Numeric, String, Text, func
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.orm import declarative_base, relationship

Base = declarative_base()


class {p.owner_cls}(Base):
    __tablename__ = "{p.owners}"

    id = Column(Integer, primary_key=True)
    name = Column(String(200), nullable=False, unique=True)
    country = Column(String(2))
    created_at = Column(DateTime(timezone=True), server_default=func.now(), nullable=False)

    {p.plural} = relationship("{p.model}", back_populates="{p.owner}")


class {p.model}(Base):
    __tablename__ = "{p.plural}"

    id = Column(Integer, primary_key=True)
    {p.field} = Column(String(300), nullable=False)
    {p.extra} = Column(String(120), index=True)
    description = Column(Text)
    price = Column(Numeric(10, 2))
    {p.owner}_id = Column(Integer, ForeignKey("{p.owners}.id"), index=True, nullable=False)
    created_at = Column(DateTime(timezone=True), server_default=func.now(), nullable=False)
    updated_at = Column(DateTime(timezone=True), onupdate=func.now())
    # Kept up to date by the {p.plural}_search_vector_trg trigger.
    search_vector = Column(TSVECTOR)

    {p.owner} = relationship("{p.owner_cls}", back_populates="{p.plural}")
    tags = relationship("Tag", secondary="{p.noun}_tags", lazy="selectin")


class Tag(Base):
    __tablename__ = "tags"

    id = Column(Integer, primary_key=True)
    label = Column(String(64), nullable=False, unique=True)


class {p.model}Tag(Base):
    __tablename__ = "{p.noun}_tags"

    {p.noun}_id = Column(Integer, ForeignKey("{p.plural}.id"), primary_key=True)
    tag_id = Column(Integer, ForeignKey("tags.id"), primary_key=True)
'''


def _router(p: _Plan, version: str) -> str:
    return f'''"""{p.model} endpoints of the {version} API."""

from typing import List

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy.ext.asyncio import AsyncSession

from {p.pkg}.db.session import get_session
from {p.pkg}.schemas.{p.noun} import {p.model}Out
from {p.pkg}.schemas.{p.owner} import {p.owner_cls}Out
from {p.pkg}.services import {p.plural} as {p.noun}_service

router = APIRouter(prefix="/{p.plural}", tags=["{p.plural}"])


@router.get("", response_model=List[{p.model}Out])
async def list_{p.plural}(
    limit: int = 50,
    session: AsyncSession = Depends(get_session),
) -> List[{p.model}Out]:
    rows = await {p.noun}_service.list_recent(session, limit=limit)
    return [{p.model}Out.from_orm(row) for row in rows]


@router.get("/{{{p.noun}_id}}", response_model={p.model}Out)
async def get_{p.noun}(
    {p.noun}_id: int,
    session: AsyncSession = Depends(get_session),
) -> {p.model}Out:
    row = await {p.noun}_service.get(session, {p.noun}_id)
    if row is None:
        raise HTTPException(status_code=404, detail="{p.noun} not found")
    return {p.model}Out.from_orm(row)


@router.get("/{{{p.noun}_id}}/{p.owner}", response_model={p.owner_cls}Out)
async def get_{p.noun}_{p.owner}(
    {p.noun}_id: int,
    session: AsyncSession = Depends(get_session),
) -> {p.owner_cls}Out:
    row = await {p.noun}_service.get(session, {p.noun}_id)
    if row is None:
        raise HTTPException(status_code=404, detail="{p.noun} not found")
    return {p.owner_cls}Out.from_orm(row.{p.owner})
'''


def _config_py(p: _Plan) -> str:
    return f'''"""Settings, read from the environment (prefix {p.pkg.upper()}_) and .env."""

from typing import List

from pydantic import BaseSettings


class Settings(BaseSettings):
    database_url: str = "postgresql+asyncpg://{p.pkg}:{p.pkg}@localhost:5432/{p.pkg}"
    db_pool_size: int = 10
    db_pool_recycle_s: int = 1800
    cors_origins: List[str] = ["http://localhost:3000"]
    log_level: str = "INFO"
    sentry_dsn: str = ""

    class Config:
        env_prefix = "{p.pkg.upper()}_"
        env_file = ".env"


settings = Settings()
'''


def _conftest_py(p: _Plan) -> str:
    return f'''"""Fixtures: an app client on a throwaway database, rolled back after each test."""

from typing import AsyncIterator, Awaitable, Callable

import pytest
from httpx import AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from {p.pkg}.db.models import Base, {p.model}, {p.owner_cls}
from {p.pkg}.db.session import get_session
from {p.pkg}.main import app

TEST_DATABASE_URL = "postgresql+asyncpg://{p.pkg}:{p.pkg}@localhost:5433/{p.pkg}_test"


@pytest.fixture
async def session() -> AsyncIterator[AsyncSession]:
    engine = create_async_engine(TEST_DATABASE_URL)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    async with AsyncSession(engine) as s:
        yield s
        await s.rollback()
    await engine.dispose()


@pytest.fixture
async def client(session: AsyncSession) -> AsyncIterator[AsyncClient]:
    app.dependency_overrides[get_session] = lambda: session
    async with AsyncClient(app=app, base_url="http://test") as c:
        yield c
    app.dependency_overrides.clear()


@pytest.fixture
async def {p.owner}(session: AsyncSession) -> {p.owner_cls}:
    row = {p.owner_cls}(name="Fixture {p.owner_cls}", country="NL")
    session.add(row)
    await session.flush()
    return row


@pytest.fixture
def make_{p.noun}(
    session: AsyncSession, {p.owner}: {p.owner_cls}
) -> Callable[..., Awaitable[{p.model}]]:
    async def _make(**fields: object) -> {p.model}:
        row = {p.model}({p.owner}_id={p.owner}.id, **fields)
        session.add(row)
        await session.flush()
        return row

    return _make
'''


# --- filler ----------------------------------------------------------------------------------

_ADJECTIVES: Final = ("blue", "quiet", "amber", "rapid", "northern", "silver", "compact", "old")
_WORDS: Final = ("harbor", "lantern", "meadow", "canyon", "orchard", "signal", "violet", "ember",
                 "granite", "willow", "comet", "tundra", "saffron", "prairie", "atlas",
                 "delta")  # fmt: skip


def _times(rng: random.Random, count: int, step: int = 40) -> list[str]:
    """`count` times of day, in order, as a log's tail shows them."""
    start = rng.randint(0, 6 * 3600)
    out = []
    for _ in range(count):
        start += rng.randint(0, step)
        h, rest = divmod(start, 3600)
        out.append(f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}")
    return out


def _filler_log(rng: random.Random, p: _Plan, size: int) -> tuple[str, str]:
    lines: list[str] = []
    paths = (f"/v2/{p.plural}", f"/v2/{p.owners}", f"/v2/{p.plural}/{{id}}", "/healthz")
    times = iter(_times(rng, size // 40 + 1))
    while sum(len(x) + 1 for x in lines) < size:
        stamp = f"{p.date} {next(times)},{rng.randint(0, 999):03d}"
        kind = rng.random()
        if kind < 0.55:
            path = rng.choice(paths).replace("{id}", str(rng.randint(1, 99999)))
            status = rng.choice((200, 200, 200, 200, 304, 404))
            lines.append(
                f"{stamp} INFO  uvicorn.access 10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}:"
                f'{rng.randint(30000, 65000)} - "GET {path} HTTP/1.1" {status}'
            )
        elif kind < 0.85:
            lines.append(
                f"{stamp} DEBUG {p.pkg}.db.session checkout conn={rng.randint(1, 10)} "
                f"pool_used={rng.randint(1, 10)}/10 wait={rng.randint(0, 40)}us"
            )
        else:
            lines.append(
                f"{stamp} INFO  {p.pkg}.services.{p.plural} list_recent "
                f"limit={rng.choice((20, 50, 100))} rows={rng.randint(0, 100)} "
                f"elapsed={rng.randint(1, 90)}.{rng.randint(0, 9)}ms"
            )
    return f"tail -n {len(lines)} logs/api.log", "\n".join(lines)


_CUISINES: Final = ("italian", "thai", "levantine", "mexican", "japanese", "ethiopian", "nordic")
_CITIES: Final = ("Lisbon", "Porto", "Faro", "Braga", "Coimbra", "Aveiro", "Sintra", "Evora")
_MEDIA: Final = ("oil on canvas", "gouache", "etching", "bronze", "charcoal", "watercolour")


def _extra_value(rng: random.Random, extra: str) -> str:
    """A value of the project's other column, as its rows hold them."""
    if extra == "isbn":
        group = f"{rng.randint(1000, 9999)}-{rng.randint(100, 999)}"
        return f"978-{rng.randint(1, 9)}-{group}-{rng.randint(0, 9)}"
    if extra == "sku":
        return f"SKU-{rng.randint(10000, 99999)}"
    if extra == "cuisine":
        return rng.choice(_CUISINES)
    if extra == "city":
        return rng.choice(_CITIES)
    if extra == "plate":
        head = rng.choice("BDFGHKLMNPRSTVWXZ") + rng.choice("ABCDEFGHJ")
        tail = rng.choice("KLMNPRST") + rng.choice("ABCDEFGH")
        return f"{head}-{rng.randint(10, 99)}-{tail}"
    return rng.choice(_MEDIA)


def _filler_json(rng: random.Random, p: _Plan, size: int) -> tuple[str, str]:
    items: list[dict[str, Any]] = []
    text = "[]"
    while len(text) < size:
        items.append(
            {
                "id": rng.randint(1000, 99999),
                p.field: f"{rng.choice(_ADJECTIVES).title()} {rng.choice(_WORDS)} "
                f"{rng.choice(_WORDS)}",
                p.extra: _extra_value(rng, p.extra),
                "price": f"{rng.randint(3, 900)}.{rng.randint(0, 99):02d}",
                f"{p.owner}_id": rng.randint(1, 400),
                "created_at": f"{p.date}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
                f"{rng.randint(0, 59):02d}+00:00",
                "tags": rng.sample(_WORDS, rng.randint(0, 3)),
            }
        )
        text = json.dumps(items, indent=4)
    return f"curl -s 'localhost:8000/v2/{p.plural}?limit={len(items)}' | python -m json.tool", text


_PACKAGES: Final = (
    "alembic==1.12.1", "anyio==3.7.1", "asyncpg==0.28.0", "attrs==23.1.0", "black==23.10.1",
    "certifi==2023.7.22", "click==8.1.7", "coverage==7.3.2", "fastapi==0.103.2",
    "greenlet==3.0.1", "gunicorn==21.2.0", "h11==0.14.0", "httpcore==0.18.0", "httpx==0.25.0",
    "idna==3.4", "iniconfig==2.0.0", "Mako==1.2.4", "MarkupSafe==2.1.3", "mypy==1.6.1",
    "mypy-extensions==1.0.0", "orjson==3.9.10", "packaging==23.2", "pathspec==0.11.2",
    "platformdirs==3.11.0", "pluggy==1.3.0", "psycopg2-binary==2.9.9", "pydantic==1.10.13",
    "pytest==7.4.3", "pytest-asyncio==0.21.1", "pytest-cov==4.1.0", "python-dotenv==1.0.0",
    "PyYAML==6.0.1", "ruff==0.1.3", "sentry-sdk==1.32.0", "sniffio==1.3.0",
    "SQLAlchemy==2.0.22", "starlette==0.27.0", "structlog==23.2.0", "tomli==2.0.1",
    "typing_extensions==4.8.0", "uvicorn==0.23.2", "uvloop==0.19.0", "watchfiles==0.21.0",
)  # fmt: skip


def _filler_pip(rng: random.Random, p: _Plan, size: int) -> tuple[str, str]:
    del rng, size
    width = max(len(x.split("==")[0]) for x in _PACKAGES) + 1
    rows = [f"{'Package':<{width}}Version", f"{'-' * (width - 1)} -------"]
    rows += [f"{name:<{width}}{version}" for name, version in (x.split("==") for x in _PACKAGES)]
    return "pip list", "\n".join(rows)


def _filler_db_log(rng: random.Random, p: _Plan, size: int) -> tuple[str, str]:
    lines: list[str] = []
    times = iter(_times(rng, size // 60 + 1, step=150))
    while sum(len(x) + 1 for x in lines) < size:
        stamp = f"{p.date} {next(times)}.{rng.randint(0, 999):03d} UTC [{rng.randint(60, 900)}]"
        kind = rng.random()
        if kind < 0.35:
            lines.append(f"db-1  | {stamp} LOG:  checkpoint starting: time")
        elif kind < 0.7:
            lines.append(
                f"db-1  | {stamp} LOG:  checkpoint complete: wrote {rng.randint(3, 400)} "
                f"buffers ({rng.randint(0, 9)}.{rng.randint(0, 9)}%); 0 WAL file(s) added, "
                f"0 removed, {rng.randint(0, 3)} recycled; write={rng.randint(0, 30)}."
                f"{rng.randint(100, 999)} s, sync=0.0{rng.randint(10, 99)} s"
            )
        else:
            lines.append(
                f"db-1  | {stamp} LOG:  automatic analyze of table "
                f'"{p.pkg}.public.{rng.choice((p.owners, "tags", p.noun + "_tags"))}" '
                f"system usage: CPU: user: 0.{rng.randint(10, 99)} s, "
                f"system: 0.0{rng.randint(1, 9)} s"
            )
    return "docker compose logs --tail 200 db", "\n".join(lines)


_KINDS: Final = ("fix", "feat", "chore", "refactor", "test", "docs", "perf", "ci")
_TOPICS: Final = (
    "handle missing {owner} in {noun} detail", "bump fastapi and starlette",
    "add {owner} country filter", "split {noun} service helpers", "cover {owner} 404 path",
    "cache pip downloads", "describe local setup with docker compose",
    "tz-aware created_at in {noun} list", "expose tags on {noun} detail", "pin asyncpg",
    "selectin load for {noun} tags", "close sessions on client disconnect",
    "rotate api keys without downtime", "return 404 for unknown {owner}",
    "add price to {noun} list",
    "structlog request ids", "sentry release tagging", "drop unused {owner} columns",
    "load fixtures in parallel", "retry db connect on startup", "healthz checks the pool",
    "lowercase tag labels", "validate {owner} country codes", "gunicorn worker count from env",
)  # fmt: skip


def _filler_git_log(rng: random.Random, p: _Plan, size: int) -> tuple[str, str]:
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < size:
        h = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        topic = rng.choice(_TOPICS).format(noun=p.noun, owner=p.owner)
        lines.append(f"{h} {rng.choice(_KINDS)}: {topic}")
    return f"git log --oneline -n {len(lines)}", "\n".join(lines)


_FILLERS: Final = (_filler_log, _filler_json, _filler_pip, _filler_db_log, _filler_git_log)


def _repo_map(p: _Plan) -> str:
    """aider's repo map of the files not in the chat: each file's outline, its lines of
    interest in runs (`│`), elided code between them (`⋮`)."""
    model, owner = p.model, p.owner_cls
    files: list[tuple[str, list[list[str]]]] = [
        (f"{p.pkg}/main.py", [
            [f'app = FastAPI(title="{p.pkg}", version="2")'],
            ["def create_app() -> FastAPI:"],
            ['@app.get("/healthz")', "async def healthz() -> dict:"],
        ]),
        (f"{p.pkg}/db/session.py", [
            ["engine = create_async_engine(settings.database_url, "
             "pool_size=settings.db_pool_size)"],
            ["SessionLocal = async_sessionmaker(engine, expire_on_commit=False)"],
            ["async def get_session() -> AsyncIterator[AsyncSession]:"],
        ]),
        (f"{p.pkg}/schemas/{p.noun}.py", [
            [f"class {model}Out(BaseModel):", "    id: int", f"    {p.field}: str",
             f"    {p.extra}: Optional[str]", "    price: Optional[Decimal]",
             f"    {p.owner}_id: int", "    created_at: datetime", "    tags: List[str] = []"],
            ["    class Config:", "        orm_mode = True"],
        ]),
        (f"{p.pkg}/schemas/{p.owner}.py", [
            [f"class {owner}Out(BaseModel):", "    id: int", "    name: str",
             "    country: Optional[str]"],
        ]),
        (f"{p.pkg}/services/{p.plural}.py", [
            [f"async def list_recent(session: AsyncSession, limit: int = 50) -> List[{model}]:"],
            [f"async def get(session: AsyncSession, {p.noun}_id: int) -> Optional[{model}]:"],
            [f"async def by_{p.owner}(session: AsyncSession, {p.owner}_id: int) -> List[{model}]:"],
        ]),
        (f"{p.pkg}/services/{p.owners}.py", [
            [f"async def by_country(session: AsyncSession, country: str) -> List[{owner}]:"],
            [f"async def get(session: AsyncSession, {p.owner}_id: int) -> Optional[{owner}]:"],
        ]),
        (f"{p.pkg}/api/v2/{p.owners}.py", [
            [f'router = APIRouter(prefix="/{p.owners}", tags=["{p.owners}"])'],
            [f'@router.get("", response_model=List[{owner}Out])', f"async def list_{p.owners}("],
            [f'@router.get("/{{{p.owner}_id}}", response_model={owner}Out)',
             f"async def get_{p.owner}("],
        ]),
        (f"{p.pkg}/core/logging.py", [["def configure_logging(level: str) -> None:"]]),
        (f"{p.pkg}/core/security.py", [
            ["def verify_api_key(x_api_key: str = Header(...)) -> str:"],
            ["def hash_key(raw: str) -> str:"],
        ]),
        (f"tests/api/test_{p.plural}.py", [
            [f"async def test_list_{p.plural}_newest_first(client, make_{p.noun}):"],
            [f"async def test_get_{p.noun}_404(client):"],
            [f"async def test_{p.noun}_{p.owner}(client, make_{p.noun}):"],
        ]),
        (f"tests/api/test_{p.owners}.py", [
            [f"async def test_{p.owners}_by_country(client, {p.owner}):"],
            [f"async def test_{p.owner}_404(client):"],
        ]),
        ("scripts/load_fixtures.py", [["def main(count: int = 500) -> None:"]]),
        ("alembic/env.py", [["def run_migrations_offline() -> None:"],
                            ["def run_migrations_online() -> None:"]]),
    ]  # fmt: skip
    out = [
        "Here are summaries of some files present in my git repository.",
        "Do not propose changes to these files, treat them as *read-only*.",
        "If you need to edit any of these files, ask me to *add them to the chat* first.",
    ]
    for path, chunks in files:
        out += ["", f"{path}:", "⋮"]
        for chunk in chunks:
            out += [f"│{line}"[:100] for line in chunk] + ["⋮"]
    out += ["", ".env.example", "", "README.md", "", "docker-compose.yml", "", "pyproject.toml"]
    return "\n".join(out) + "\n"


# --- the system prompt -----------------------------------------------------------------------


def _system(p: _Plan) -> str:
    fence = "```"
    platform = (
        "- Platform: Linux-6.8.0-51-generic-x86_64-with-glibc2.39\n"
        "- Shell: SHELL=/bin/bash\n"
        "- Language: English\n"
        f"- Current date: {p.date}\n"
        "- The user is operating inside a git repository\n"
        f"- The user's pre-commit runs this test command, don't suggest running them: "
        f"{_TEST_CMD}\n"
    )
    return f"""Act as an expert software developer.
Always use best practices when coding.
Respect and use existing conventions, libraries, etc that are already present in the code base.
You are diligent and tireless!
You NEVER leave comments describing code without implementing it!
You always COMPLETELY IMPLEMENT the needed code!

Take requests for changes to the supplied code.
If the request is ambiguous, ask questions.

Once you understand the request you MUST:

1. Decide if you need to propose *SEARCH/REPLACE* edits to any files that haven't been added \
to the chat. You can create new files without asking!

But if you need to propose edits to existing files not already added to the chat, you *MUST* \
tell the user their full path names and ask them to *add the files to the chat*.
End your reply and wait for their approval.
You can keep asking if you then decide you need to edit more files.

2. Think step-by-step and explain the needed changes in a few short sentences.

3. Describe each change with a *SEARCH/REPLACE block* per the examples below.

All changes to files must use this *SEARCH/REPLACE block* format.
ONLY EVER RETURN CODE IN A *SEARCH/REPLACE BLOCK*!

4. *Concisely* suggest any shell commands the user might want to run in {fence}bash blocks.

Just suggest shell commands this way, not example code.
Only suggest complete shell commands that are ready to execute, without placeholders.
Only suggest at most a few shell commands at a time, not more than 1-3, one per line.
Do not suggest multi-line shell commands.
All shell commands will run from the root directory of the user's project.

Use the appropriate shell based on the user's system info:
{platform}
# Example conversations:

## USER: Change get_factorial() to use math.factorial

## ASSISTANT: To make this change we need to modify `mathweb/flask/app.py` to:

1. Import the math package.
2. Remove the existing factorial() function.
3. Update get_factorial() to call math.factorial instead.

Here are the *SEARCH/REPLACE* blocks:

mathweb/flask/app.py
{fence}python
<<<<<<< SEARCH
from flask import Flask
=======
import math
from flask import Flask
>>>>>>> REPLACE
{fence}

mathweb/flask/app.py
{fence}python
<<<<<<< SEARCH
    return str(factorial(n))
=======
    return str(math.factorial(n))
>>>>>>> REPLACE
{fence}

## USER: Refactor hello() into its own file.

## ASSISTANT: To make this change we need to modify `main.py` and make a new file `hello.py`:

1. Make a new hello.py file with hello() in it.
2. Remove hello() from main.py and replace it with an import.

Here are the *SEARCH/REPLACE* blocks:

hello.py
{fence}python
<<<<<<< SEARCH
=======
def hello():
    "print a greeting"

    print("hello")
>>>>>>> REPLACE
{fence}

main.py
{fence}python
<<<<<<< SEARCH
def hello():
    "print a greeting"

    print("hello")
=======
from hello import hello
>>>>>>> REPLACE
{fence}
# *SEARCH/REPLACE block* Rules:

Every *SEARCH/REPLACE block* must use this format:
1. The *FULL* file path alone on a line, verbatim. No bold asterisks, no quotes around it, no \
escaping of characters, etc.
2. The opening fence and code language, eg: {fence}python
3. The start of search block: <<<<<<< SEARCH
4. A contiguous chunk of lines to search for in the existing source code
5. The dividing line: =======
6. The lines to replace into the source code
7. The end of the replace block: >>>>>>> REPLACE
8. The closing fence: {fence}

Use the *FULL* file path, as shown to you by the user.

Every *SEARCH* section must *EXACTLY MATCH* the existing file content, character for \
character, including all comments, docstrings, etc.
If the file contains code or other data wrapped/escaped in json/xml/quotes or other \
containers, you need to propose edits to the literal contents of the file, including the \
container markup.

*SEARCH/REPLACE* blocks will *only* replace the first match occurrence.
Including multiple unique *SEARCH/REPLACE* blocks if needed.
Include enough lines in each SEARCH section to uniquely match each set of lines that need to \
change.

Keep *SEARCH/REPLACE* blocks concise.
Break large *SEARCH/REPLACE* blocks into a series of smaller blocks that each change a small \
portion of the file.
Include just the changing lines, and a few surrounding lines if needed for uniqueness.
Do not include long runs of unchanging lines in *SEARCH/REPLACE* blocks.

Only create *SEARCH/REPLACE* blocks for files that the user has added to the chat!

To move code within a file, use 2 *SEARCH/REPLACE* blocks: 1 to delete it from its current \
location, 1 to insert it in the new location.

Pay attention to which filenames the user wants you to edit, especially if they are asking \
you to create a new file.

If you want to put code in a new file, use a *SEARCH/REPLACE block* with:
- A new file path, including dir name if needed
- An empty `SEARCH` section
- The new file's contents in the `REPLACE` section

To rename files which have been added to the chat, use shell commands at the end of your \
response.

If the user just says something like "ok" or "go ahead" or "do that" they probably want you \
to make SEARCH/REPLACE blocks for the code changes you just proposed.
The user will say when they've applied your edits. If they haven't explicitly confirmed the \
edits have been applied, they probably want proper SEARCH/REPLACE blocks.

You are diligent and tireless!
You NEVER leave comments describing code without implementing it!
You always COMPLETELY IMPLEMENT the needed code!
ONLY EVER RETURN CODE IN A *SEARCH/REPLACE BLOCK*!

Examples of when to suggest shell commands:

- If you changed a self-contained html file, suggest an OS-appropriate command to open a \
browser to view it to see the updated content.
- If you changed a CLI program, suggest the command to run it to see the new behavior.
- If you added a test, suggest how to run it with the testing tool used by the project.
- Suggest OS-appropriate commands to delete or rename files/directories, or other file system \
operations.
- If your code changes add new dependencies, suggest the command to install them.
- Etc.
"""


# --- writing the chat ------------------------------------------------------------------------


@dataclass
class _Chat:
    """The session being written: aider's turns, the files as they stand, filler to spend."""

    p: _Plan
    s: Session
    filler_chars: int
    filler_rng: random.Random
    forbidden: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)
    in_chat: list[str] = field(default_factory=list)
    commits: int = 0
    gaps: int = 0

    # aider's turns
    def user(self, text: str) -> None:
        self.s.user(text)

    def say(self, text: str) -> None:
        self.s.say(text)

    def committed(self, message: str) -> None:
        h = self.p.hashes[self.commits]
        self.commits += 1
        self.user(f"I committed the changes with git hash {h} & commit msg: {message}")
        self.say("Ok.")

    def ran(self, command: str, output: str, *, filler: bool = False) -> str:
        text = f"I ran this command:\n\n{command}\n\nAnd got this output:\n\n{output}\n"
        self.user(text)
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        self.say("Ok.")
        if filler:
            self.s.filler_at.add(len(self.s.messages) - 1)
        return text

    def test_failed(self, output: str) -> None:
        """aider's auto-test after an edit, failing, the user letting it attempt a fix."""
        self.user(self.ran(_TEST_CMD, output))

    def added(self, *paths: str) -> None:
        self.in_chat += [x for x in paths if x not in self.in_chat]
        self.user(
            f"I added these files to the chat: {', '.join(sorted(paths))}\n"
            "Let me know if there are others we should add."
        )

    def block(self, path: str, search: str, replace: str) -> str:
        """One *SEARCH/REPLACE block*, applied to the file as it stands."""
        if search:
            assert search in self.files[path], (path, search)
            self.files[path] = self.files[path].replace(search, replace, 1)
        else:
            assert path not in self.files, path
            self.files[path] = replace
            if path not in self.in_chat:
                self.in_chat.append(path)
        body = f"{search}=======\n" if search else "=======\n"
        return f"{path}\n```python\n<<<<<<< SEARCH\n{body}{replace}>>>>>>> REPLACE\n```"

    def line_of(self, path: str, needle: str) -> int:
        lines = self.files[path].split("\n")
        return next(i for i, line in enumerate(lines) if needle in line) + 1

    # filler
    def filler(self, weight: int = 1) -> None:
        """/run outputs the user added to the chat, about `weight` shares of the filler."""
        share = self.filler_chars * weight // 12
        while share > 400:
            kind = _FILLERS[self.gaps % len(_FILLERS)]
            self.gaps += 1
            size = min(share, self.filler_rng.randint(3500, 7000))
            command, output = kind(self.filler_rng, self.p, size)
            clean = "\n".join(
                line
                for line in output.split("\n")
                if not any(f in line.casefold() for f in self.forbidden)
            )
            share -= len(clean) + len(command) + 80
            self.ran(command, clean, filler=True)


def _flake8(chat: _Chat, path: str, needle: str, name: str) -> str:
    """aider's lint report for an undefined name on the line holding `needle`."""
    p = chat.p
    lines = chat.files[path].split("\n")
    at = chat.line_of(path, needle)
    col = lines[at - 1].index(name) + 1
    head = chat.line_of(path, "async def ")
    shown = sorted({*range(head, head + 6), *range(max(at - 3, head + 6), at + 4)})
    context = ["...⋮..."]
    for k, n in enumerate(shown):
        if k and n != shown[k - 1] + 1:
            context.append("...⋮...")
        mark = "█" if n == at else "│"
        context.append(f"{n: 3}{mark}{lines[n - 1]}")
    context.append("...⋮...")
    return (
        "\n# Fix any errors below, if possible.\n\n"
        f"## Running: {p.venv}/bin/python -m flake8 {_FLAKE8} {path}\n\n"
        f"{path}:{at}:{col}: F821 undefined name '{name}'\n"
        f"{lines[at - 1]}\n{' ' * (col - 1)}^\n\n"
        "## See relevant line below marked with █.\n\n"
        f"{path}:\n" + "\n".join(context) + "\n\n"
    )


def _address(seed: int) -> str:
    """A CPython object address, as pytest prints a fixture's repr."""
    return f"0x7f{random.Random(seed).randrange(16**10):010x}"


def _pytest_failed(
    p: _Plan, test: str, line: int, source: list[str], error: list[str], passed: int, t: str
) -> str:
    dots = ["."] * passed + ["F"]
    random.Random(test + str(passed)).shuffle(dots)
    progress = "".join(dots)
    title = f" {test} "
    return "\n".join(
        [
            f"{progress:<73}[100%]",
            "=" * 35 + " FAILURES " + "=" * 35,
            title.center(80, "_"),
            "",
            *source,
            *error,
            "",
            f"{p.tests}:{line}: AssertionError",
            "=" * 28 + " short test summary info " + "=" * 27,
            f"FAILED {p.tests}::{test} - {error[0].removeprefix('E       ')}",
            f"1 failed, {passed} passed in {t}s",
        ]
    )


def _tell(p: _Plan, filler_chars: int, seed: int) -> Session:
    facts = _facts(p)
    forbidden = tuple(
        sorted({x.casefold() for f in facts for x in (*f.probe, *f.stale)}, key=len, reverse=True)
    )
    s = Session(rng=random.Random(seed), system=_system(p))
    chat = _Chat(p, s, filler_chars, random.Random(seed * 7919 + 17), forbidden)
    chat.files[p.v1] = _router(p, "v1")
    chat.files[p.v2] = _router(p, "v2")
    chat.files[p.config] = _config_py(p)
    chat.files[p.models] = _models_py(p)
    chat.files[p.conftest] = _conftest_py(p)
    n = p.base_tests

    # The repo map leads the request.
    chat.user(_repo_map(p))
    s.filler_at.add(len(s.messages) - 1)
    chat.say("Ok, I won't try and edit those files without asking first.")

    # The task, its rules and its values.
    chat.user(
        f"I want a search endpoint for {p.plural}: GET /{p.plural}/search?q=..., matching on "
        f"{p.field}. Ground rules before you start:\n"
        f"- Postgres only. Don't add {p.dep} or any other search engine or client library; "
        "I'm not running another service for this.\n"
        f"- Production still runs Python {p.python} (it's the base image, not changing this "
        "quarter), so the code has to run there.\n"
        f"- Bad input (q missing or shorter than 2 characters, and anything else we reject "
        f'later) comes back as HTTP 400 with {{"error": {{"code": "{p.code}", "detail": '
        '"..."}}. The mobile clients switch on that code, so no FastAPI 422s from this '
        "endpoint.\n\n"
        f"Start with {p.per_page(0)} and cap each search query at {p.ms(0)}."
    )
    chat.say(
        f"To add the endpoint I'll need to change these files:\n\n- {p.v1}\n- {p.config}\n\n"
        f"and I'd like to see {p.models} for the {p.model} columns. Please add them to the "
        "chat."
    )
    chat.added(p.v1, p.config, p.models)

    # The endpoint goes into the v1 router.
    v1_before, config_before = chat.files[p.v1], chat.files[p.config]
    blocks = [
        chat.block(
            p.config,
            '    log_level: str = "INFO"\n',
            '    log_level: str = "INFO"\n'
            f"    search_page_size: int = {p.pages[0]}\n"
            f"    search_timeout_ms: int = {p.timeouts[0]}\n",
        ),
        chat.block(
            p.v1,
            "from typing import List\n\nfrom fastapi import APIRouter, Depends, HTTPException\n",
            "from typing import List, Optional\n\n"
            "from fastapi import APIRouter, Depends, HTTPException\n"
            "from fastapi.responses import JSONResponse\n"
            "from sqlalchemy import select\n",
        ),
        chat.block(
            p.v1,
            f'@router.get("/{{{p.noun}_id}}", response_model={p.model}Out)\n',
            f'@router.get("/search", response_model=List[{p.model}Out])\n'
            f"async def search_{p.plural}(\n"
            "    q: Optional[str] = None,\n"
            "    page: int = 1,\n"
            "    session: AsyncSession = Depends(get_session),\n"
            "):\n"
            "    if q is None or len(q.strip()) < 2:\n"
            "        return JSONResponse(\n"
            "            status_code=400,\n"
            f'            content={{"error": {{"code": "{p.code}", '
            '"detail": "q must be at least 2 characters"}},\n'
            "        )\n"
            "    size = settings.search_page_size\n"
            "    stmt = (\n"
            f"        select({p.model})\n"
            f'        .where({p.model}.{p.field}.ilike(f"%{{q.strip()}}%"))\n'
            f"        .order_by({p.model}.{p.field}, {p.model}.id)\n"
            "        .offset((max(page, 1) - 1) * size)\n"
            "        .limit(size)\n"
            "    )\n"
            "    rows = (await session.execute(stmt)).scalars().all()\n"
            f"    return [{p.model}Out.from_orm(row) for row in rows]\n\n\n"
            f'@router.get("/{{{p.noun}_id}}", response_model={p.model}Out)\n',
        ),
        chat.block(
            p.v1,
            f"from {p.pkg}.db.session import get_session\n",
            f"from {p.pkg}.core.config import settings\n"
            f"from {p.pkg}.db.models import {p.model}\n"
            f"from {p.pkg}.db.session import get_session\n",
        ),
    ]
    chat.say(
        f"I'll add `GET /{p.plural}/search` to the {p.plural} router, with the settings it "
        "needs:\n\n"
        f"1. `search_page_size` ({p.per_page(0)}) and `search_timeout_ms` in the settings.\n"
        f"2. The route goes above `/{{{p.noun}_id}}`, otherwise FastAPI tries to parse "
        f'"search" as an id.\n'
        f"3. Matching is a case-insensitive `ILIKE '%q%'` on `{p.field}`, ordered by "
        f"{p.field} then id, plain offset pagination with `page`.\n"
        f"4. A short or missing `q` returns the 400 with `{p.code}` directly instead of "
        "using `Query(min_length=...)`, which would produce a 422.\n\n"
        "Here are the *SEARCH/REPLACE* blocks:\n\n" + "\n\n".join(blocks)
    )
    chat.committed(f"feat: add {p.noun} search endpoint with ILIKE matching")

    # Wrong router: the user undid it.
    chat.files[p.v1], chat.files[p.config] = v1_before, config_before
    chat.in_chat.remove(p.v1)
    chat.in_chat.append(p.v2)
    chat.user(
        f"That's the wrong router. {p.v1} is the frozen v1 API: the old Android app still "
        f"calls it and nothing under {p.pkg}/api/v1/ changes any more. New endpoints go in "
        f"{p.v2}. I ran /undo, dropped the v1 file and added {p.v2} to the chat. Redo it "
        "there, and put the query in a service module instead of the router."
    )

    # The endpoint in v2, the query in a new service module.
    blocks = [
        chat.block(
            p.config,
            '    log_level: str = "INFO"\n',
            '    log_level: str = "INFO"\n\n'
            f"    # Search (GET /v2/{p.plural}/search)\n"
            f"    search_page_size: int = {p.pages[0]}\n"
            f"    search_timeout_ms: int = {p.timeouts[0]}\n",
        ),
        chat.block(
            p.search,
            "",
            f'"""Search over {p.plural}."""\n\n'
            "from typing import List, Optional, Tuple\n\n"
            "from sqlalchemy import select\n"
            "from sqlalchemy.ext.asyncio import AsyncSession\n\n"
            f"from {p.pkg}.core.config import settings\n"
            f"from {p.pkg}.db.models import {p.model}\n\n\n"
            f"async def search_{p.plural}(\n"
            "    session: AsyncSession,\n"
            "    q: str,\n"
            "    page: int = 1,\n"
            "    page_size: Optional[int] = None,\n"
            f") -> Tuple[List[{p.model}], int]:\n"
            f'    """One page of the {p.plural} whose {p.field} contains `q`, offset '
            'pagination."""\n'
            "    size = page_size or settings.search_page_size\n"
            "    stmt = (\n"
            f"        select({p.model})\n"
            f'        .where({p.model}.{p.field}.ilike(f"%{{q}}%"))\n'
            f"        .order_by({p.model}.{p.field}, {p.model}.id)\n"
            "        .offset((page - 1) * size)\n"
            "        .limit(size)\n"
            "    )\n"
            "    rows = (await session.execute(stmt)).scalars().all()\n"
            "    return list(rows), size\n",
        ),
        chat.block(
            p.v2,
            "from fastapi import APIRouter, Depends, HTTPException\n"
            "from sqlalchemy.ext.asyncio import AsyncSession\n",
            "from fastapi import APIRouter, Depends, HTTPException\n"
            "from fastapi.responses import JSONResponse\n"
            "from pydantic import BaseModel\n"
            "from sqlalchemy.ext.asyncio import AsyncSession\n",
        ),
        chat.block(
            p.v2,
            f"from {p.pkg}.services import {p.plural} as {p.noun}_service\n",
            f"from {p.pkg}.services import {p.plural} as {p.noun}_service\n"
            f"from {p.pkg}.services import search as search_service\n",
        ),
        chat.block(
            p.v2,
            f'router = APIRouter(prefix="/{p.plural}", tags=["{p.plural}"])\n',
            f'router = APIRouter(prefix="/{p.plural}", tags=["{p.plural}"])\n\n\n'
            "class SearchPage(BaseModel):\n"
            f"    items: List[{p.model}Out]\n"
            "    page: int\n"
            "    page_size: int\n\n\n"
            "def _bad_request(detail: str) -> JSONResponse:\n"
            "    return JSONResponse(\n"
            f'        status_code=400, content={{"error": {{"code": "{p.code}", '
            '"detail": detail}}\n'
            "    )\n",
        ),
        chat.block(
            p.v2,
            f'@router.get("/{{{p.noun}_id}}", response_model={p.model}Out)\n',
            '@router.get("/search", response_model=SearchPage)\n'
            f"async def search_{p.plural}(\n"
            "    q: str | None = None,\n"
            "    page: int = 1,\n"
            "    session: AsyncSession = Depends(get_session),\n"
            "):\n"
            "    if q is None or len(q.strip()) < 2:\n"
            '        return _bad_request("q must be at least 2 characters")\n'
            "    if page < 1:\n"
            '        return _bad_request("page must be 1 or more")\n'
            f"    rows, size = await search_service.search_{p.plural}(session, q.strip(), "
            "page=page)\n"
            "    return SearchPage(\n"
            f"        items=[{p.model}Out.from_orm(row) for row in rows], page=page, "
            "page_size=size\n"
            "    )\n\n\n"
            f'@router.get("/{{{p.noun}_id}}", response_model={p.model}Out)\n',
        ),
    ]
    chat.say(
        f"Moving it to the v2 router, with the query in a new `{p.search}`:\n\n"
        f"- settings: `search_page_size = {p.pages[0]}` and `search_timeout_ms = "
        f"{p.timeouts[0]}`;\n"
        f"- `{p.search}`: `search_{p.plural}()` runs the `ILIKE` match and offset "
        "pagination, returns the rows and the page size used;\n"
        f"- `{p.v2}`: `GET /v2/{p.plural}/search` above `/{{{p.noun}_id}}`, a `SearchPage` "
        f"response (`items`, `page`, `page_size`), and `_bad_request()` for the 400 with "
        f"`{p.code}`.\n\n"
        f"Remaining:\n1. {_T_TIMEOUT}\n2. {_T_MIGRATION}\n3. {_T_TESTS}\n4. {_T_PLAN}\n\n"
        "Here are the *SEARCH/REPLACE* blocks:\n\n" + "\n\n".join(blocks)
    )
    chat.committed(f"feat: add v2 {p.noun} search endpoint and search service")

    # Python 3.8/3.9 cannot evaluate `str | None`.
    test_mod = f"tests/api/test_{p.plural}.py"
    q_line = chat.line_of(p.v2, "q: str | None = None,")
    chat.test_failed(
        "\n".join(
            [
                "",
                "=" * 36 + " ERRORS " + "=" * 36,
                f" ERROR collecting {test_mod} ".center(80, "_"),
                f"{test_mod}:6: in <module>",
                f"    from {p.pkg}.main import app",
                f"{p.pkg}/main.py:9: in <module>",
                f"    from {p.pkg}.api.v2 import {p.owners}, {p.plural}",
                f"{p.v2}:{q_line - 2}: in <module>",
                f"    async def search_{p.plural}(",
                "E   TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'",
                "=" * 28 + " short test summary info " + "=" * 27,
                f"ERROR {test_mod} - TypeError: unsupported operand type(s) for |: 'type' and "
                "'NoneType'",
                "!" * 20 + " Interrupted: 1 error during collection " + "!" * 20,
                "1 error in 0.71s",
            ]
        )
    )
    blocks = [
        chat.block(p.v2, "from typing import List\n", "from typing import List, Optional\n"),
        chat.block(p.v2, "    q: str | None = None,\n", "    q: Optional[str] = None,\n"),
    ]
    chat.say(
        f"`str | None` is evaluated when FastAPI inspects the signature at import time, and "
        f"on Python {p.python} `type | None` raises that TypeError (PEP 604 unions need "
        "3.10). Back to `Optional[str]`:\n\n" + "\n\n".join(blocks)
    )
    chat.committed("fix: use Optional for the search query parameter")
    chat.filler(2)

    # ILIKE → full-text search.
    chat.user(
        f"It works, but on the staging copy ({p.rows} {p.plural}) searching `{p.prefix}` "
        "takes about 4 s: the ILIKE with a leading % is a sequential scan. The table already "
        "has a search_vector column that nothing uses yet. Switch the matching to Postgres "
        "full-text search on it."
    )
    blocks = [
        chat.block(
            p.fulltext,
            "",
            f'"""Full-text matching on {p.plural}.search_vector (kept current by a '
            'trigger)."""\n\n'
            "from sqlalchemy import func\n"
            "from sqlalchemy.sql.elements import ColumnElement\n\n"
            f"from {p.pkg}.db.models import {p.model}\n\n\n"
            "def _query(q: str) -> ColumnElement:\n"
            '    return func.plainto_tsquery("english", q)\n\n\n'
            "def fulltext_match(q: str) -> ColumnElement:\n"
            f'    return {p.model}.search_vector.op("@@")(_query(q))\n\n\n'
            "def fulltext_rank(q: str) -> ColumnElement:\n"
            f"    return func.ts_rank_cd({p.model}.search_vector, _query(q))\n",
        ),
        chat.block(
            p.search,
            f"from sqlalchemy import select\nfrom sqlalchemy.ext.asyncio import AsyncSession\n\n"
            f"from {p.pkg}.core.config import settings\nfrom {p.pkg}.db.models import "
            f"{p.model}\n",
            "from sqlalchemy import select, text\n"
            "from sqlalchemy.ext.asyncio import AsyncSession\n\n"
            f"from {p.pkg}.core.config import settings\n"
            f"from {p.pkg}.db.models import {p.model}\n"
            f"from {p.pkg}.services.fulltext import fulltext_match, fulltext_rank\n",
        ),
        chat.block(
            p.search,
            f'    """One page of the {p.plural} whose {p.field} contains `q`, offset '
            'pagination."""\n'
            "    size = page_size or settings.search_page_size\n"
            "    stmt = (\n"
            f"        select({p.model})\n"
            f'        .where({p.model}.{p.field}.ilike(f"%{{q}}%"))\n'
            f"        .order_by({p.model}.{p.field}, {p.model}.id)\n",
            f'    """One page of the {p.plural} matching `q`, best full-text rank first, offset '
            'pagination."""\n'
            "    size = page_size or settings.search_page_size\n"
            "    # SET LOCAL: the cap ends with this transaction, it never leaks to the pool.\n"
            '    await session.execute(text(f"SET LOCAL statement_timeout = '
            '{settings.search_timeout_ms}"))\n'
            "    stmt = (\n"
            f"        select({p.model})\n"
            "        .where(fulltext_match(q))\n"
            f"        .order_by(fulltext_rank(q).desc(), {p.model}.id)\n",
        ),
    ]
    chat.say(
        f"Full-text it is. `search_vector` is already maintained by the "
        f"`{p.plural}_search_vector_trg` trigger, so the query only has to use it:\n\n"
        f"- new `{p.fulltext}` with `fulltext_match()` (`search_vector @@ "
        "plainto_tsquery('english', q)`) and `fulltext_rank()` (`ts_rank_cd`);\n"
        f"- `{p.search}` matches with those and orders by rank, then id;\n"
        f"- while I'm in there, the statement timeout: `SET LOCAL statement_timeout` from "
        f"`search_timeout_ms` ({p.ms(0)}) at the start of the search, so it only applies "
        "to this transaction.\n\n"
        "Without an index the `@@` still scans. Should I add an Alembic migration under "
        f"{_MIGRATIONS}/ with a GIN index on `search_vector`?\n\n"
        f"Remaining:\n1. {_T_MIGRATION}\n2. {_T_TESTS}\n3. {_T_PLAN}\n\n"
        "Here are the *SEARCH/REPLACE* blocks:\n\n" + "\n\n".join(blocks)
    )
    chat.committed(f"feat: switch {p.noun} search to full-text matching with a query timeout")

    # The user forbids the migrations directory.
    chat.user(
        f"No. Don't touch {_MIGRATIONS}/ at all: migrations go through the DBA team's "
        "review and they write them. Give me the SQL for the index and I'll put it in their "
        "ticket."
    )
    chat.say(
        "Understood, no migration from me. The SQL for their ticket:\n\n"
        "```sql\n"
        f"CREATE INDEX CONCURRENTLY ix_{p.plural}_search_vector_gin\n"
        f"    ON {p.plural} USING gin (search_vector);\n"
        "```\n\n"
        "`CONCURRENTLY` keeps writes going while it builds; it can't run inside a "
        "transaction block, so it has to be its own statement in their tooling.\n\n"
        f"I've dropped the migration from my list.\n\nRemaining:\n1. {_T_TESTS}\n2. {_T_PLAN}"
    )

    # Which commit added search_vector?
    chat.ran(
        p.log_cmd,
        f"{p.vector_later_hash} chore: document the {p.plural}_search_vector_trg trigger\n"
        f"{p.vector_hash} feat: add search_vector tsvector column to {p.plural}",
    )
    chat.user("Which of these added the search_vector column? The DBA ticket needs the commit.")
    chat.say(
        f'{p.vector_hash}: "feat: add search_vector tsvector column to {p.plural}" added '
        f"it. `git log -S` lists every commit that changed how often the string occurs in "
        f"the file, and the newer {p.vector_later_hash} only touched the trigger's comment."
    )
    chat.filler(3)

    # The timeout, once.
    chat.user(
        "With that index built on my laptop copy, full-text p95 is around 1.1 s for two-word "
        f"queries, so the cap is too tight. Raise the search timeout to {p.ms(1)}."
    )
    block = chat.block(
        p.config,
        f"    search_timeout_ms: int = {p.timeouts[0]}\n",
        f"    search_timeout_ms: int = {p.timeouts[1]}\n",
    )
    chat.say(f"Raising the search statement timeout to {p.ms(1)}:\n\n{block}")
    chat.committed(f"chore: raise search statement timeout to {p.timeouts[1]}ms")

    # The page size, first change.
    chat.user(f"The web grid got wider with the redesign. Make it {p.per_page(1)}.")
    block = chat.block(
        p.config,
        f"    search_page_size: int = {p.pages[0]}\n",
        f"    search_page_size: int = {p.pages[1]}\n",
    )
    chat.say(f"Default page size now {p.per_page(1)}:\n\n{block}")
    chat.committed(f"chore: set search page size to {p.pages[1]}")
    chat.filler(2)

    # Full-text → pg_trgm.
    chat.user(
        f"Full-text is the wrong tool here after all. People type prefixes: `{p.prefix}` "
        "finds nothing because the tsquery only matches whole lexemes, and codes like "
        f"`{p.code_term}` get split into separate tokens. Drop full-text search and use "
        f"pg_trgm trigram similarity on {p.field}, best match first."
    )
    search_sig = chat.files[p.search]
    blocks = [
        chat.block(
            p.search,
            f"from {p.pkg}.db.models import {p.model}\n"
            f"from {p.pkg}.services.fulltext import fulltext_match, fulltext_rank\n",
            f"from {p.pkg}.db.models import {p.model}\n",
        ),
        chat.block(
            p.search,
            f'    """One page of the {p.plural} matching `q`, best full-text rank first, offset '
            'pagination."""\n',
            f'    """One page of the {p.plural} whose {p.field} is trigram-similar to `q` '
            '(pg_trgm),\n    best match first, offset pagination."""\n',
        ),
        chat.block(
            p.search,
            "    stmt = (\n"
            f"        select({p.model})\n"
            "        .where(fulltext_match(q))\n"
            f"        .order_by(fulltext_rank(q).desc(), {p.model}.id)\n",
            f"    score = func.similarity({p.model}.{p.field}, q)\n"
            "    stmt = (\n"
            f"        select({p.model})\n"
            f'        .where({p.model}.{p.field}.op("%")(q))\n'
            f"        .order_by(score.desc(), {p.model}.id)\n",
        ),
    ]
    assert search_sig != chat.files[p.search]
    chat.say(
        "Switching to trigram similarity:\n\n"
        f"- `{p.field} % q` is pg_trgm's similarity operator (true above "
        "`pg_trgm.similarity_threshold`, 0.3 by default), and it can use a trigram GIN "
        "index; ordering by `similarity()` puts the best match first;\n"
        f"- `{p.search}` no longer imports the full-text helpers, so `{p.fulltext}` is "
        "unused and can go.\n\n"
        "For the DBA ticket, instead of the search_vector index:\n\n"
        "```sql\n"
        "CREATE EXTENSION IF NOT EXISTS pg_trgm;\n"
        f"CREATE INDEX CONCURRENTLY {p.trgm_index}\n"
        f"    ON {p.plural} USING gin ({p.field} gin_trgm_ops);\n"
        "```\n\n"
        "Here are the *SEARCH/REPLACE* blocks:\n\n" + "\n\n".join(blocks) + "\n\n"
        f"```bash\ngit rm {p.fulltext}\n```"
    )
    chat.committed(f"feat: match {p.plural} by trigram similarity instead of full-text")
    chat.user(_flake8(chat, p.search, "score = func.similarity", "func"))
    block = chat.block(
        p.search,
        "from sqlalchemy import select, text\n",
        "from sqlalchemy import func, select, text\n",
    )
    chat.say(f"`func` was never imported in that module:\n\n{block}")
    chat.committed("fix: import func for the similarity query")

    # The user removes the full-text module.
    chat.ran(p.rm_cmd, f"rm '{p.fulltext}'")
    del chat.files[p.fulltext]
    chat.in_chat.remove(p.fulltext)
    chat.filler(2)

    # Offset → keyset pagination.
    chat.user(
        "Next, paging. Deep pages are slow (page 400 takes seconds on staging), and the "
        f"offset pagination repeats rows when new {p.plural} arrive between two requests. "
        "Switch to keyset pagination: order by similarity, then id, and give the client an "
        "opaque next_cursor instead of page numbers. A bad cursor is a 400 like every other "
        "bad input."
    )
    chat.say(
        f"For keyset paging I'll change `{p.search}` and `{p.v2}`, add `{p.cursor}` for the "
        f"cursor format and `{p.tests}` for the paging tests, and the tests need a seeding "
        f"fixture in {p.conftest}. Please add {p.conftest} to the chat."
    )
    chat.added(p.conftest)
    head = chat.files[p.search]
    start = head.index(f"async def search_{p.plural}(")
    keyset_body = (
        f"async def search_{p.plural}(\n"
        "    session: AsyncSession,\n"
        "    q: str,\n"
        "    after: Optional[Cursor] = None,\n"
        "    page_size: Optional[int] = None,\n"
        f") -> Tuple[List[{p.model}], Optional[Cursor]]:\n"
        f'    """The {p.plural} whose {p.field} is trigram-similar to `q` (pg_trgm), best '
        "match first:\n"
        "    one page after `after` (keyset pagination on similarity, then id) and the "
        'cursor of the\n    next page, None on the last one."""\n'
        "    size = page_size or settings.search_page_size\n"
        "    # SET LOCAL: the cap ends with this transaction, it never leaks to the pool.\n"
        '    await session.execute(text(f"SET LOCAL statement_timeout = '
        '{settings.search_timeout_ms}"))\n'
        f'    score = func.similarity({p.model}.{p.field}, q).label("score")\n'
        f'    stmt = select({p.model}, score).where({p.model}.{p.field}.op("%")(q))\n'
        "    if after is not None:\n"
        "        stmt = stmt.where(\n"
        f"            or_(score > after.score, and_(score == after.score, {p.model}.id > "
        "after.id))\n"
        "        )\n"
        f"    stmt = stmt.order_by(score.desc(), {p.model}.id).limit(size + 1)\n"
        "    rows = (await session.execute(stmt)).all()\n"
        "    page = rows[:size]\n"
        "    if len(rows) <= size:\n"
        "        return [row[0] for row in page], None\n"
        "    last = page[-1]\n"
        "    return [row[0] for row in page], Cursor(score=float(last.score), id=last[0].id)\n"
    )
    tests_body = (
        f'"""Keyset pagination of GET /v2/{p.plural}/search."""\n\n'
        "import pytest\n\n"
        f"from {p.pkg}.core.config import settings\n\n"
        "pytestmark = pytest.mark.asyncio\n\n"
        f'URL = "/v2/{p.plural}/search"\n\n\n'
        f"async def test_first_page_is_full(client, seed_{p.plural}):\n"
        f'    body = (await client.get(URL, params={{"q": "{p.prefix}"}})).json()\n'
        '    assert len(body["items"]) == settings.search_page_size\n'
        '    assert body["next_cursor"]\n\n\n'
        f"async def test_second_page_starts_after_cursor(client, seed_{p.plural}):\n"
        f'    first = (await client.get(URL, params={{"q": "{p.prefix}"}})).json()\n'
        "    second = (\n"
        f'        await client.get(URL, params={{"q": "{p.prefix}", "cursor": '
        'first["next_cursor"]})\n'
        "    ).json()\n"
        '    first_ids = {item["id"] for item in first["items"]}\n'
        '    second_ids = {item["id"] for item in second["items"]}\n'
        "    assert second_ids\n"
        "    assert not first_ids & second_ids\n\n\n"
        f"async def test_last_page_has_no_cursor(client, seed_{p.plural}):\n"
        f'    params = {{"q": "{p.prefix}"}}\n'
        "    pages = 0\n"
        "    while True:\n"
        "        body = (await client.get(URL, params=params)).json()\n"
        "        pages += 1\n"
        '        if not body["next_cursor"]:\n'
        "            break\n"
        '        params["cursor"] = body["next_cursor"]\n'
        "    assert pages == 3\n\n\n"
        "async def test_bad_cursor_is_400_with_code(client):\n"
        f'    resp = await client.get(URL, params={{"q": "{p.prefix}", "cursor": '
        '"not-a-cursor"})\n'
        "    assert resp.status_code == 400\n"
        f'    assert resp.json()["error"]["code"] == "{p.code}"\n\n\n'
        "async def test_short_query_is_400_with_code(client):\n"
        '    resp = await client.get(URL, params={"q": "x"})\n'
        "    assert resp.status_code == 400\n"
        f'    assert resp.json()["error"]["code"] == "{p.code}"\n'
    )
    blocks = [
        chat.block(
            p.cursor,
            "",
            '"""Opaque keyset cursors for search: base64url of {"s": similarity, "i": id}."""'
            "\n\n"
            "import base64\nimport json\nfrom typing import NamedTuple\n\n\n"
            "class Cursor(NamedTuple):\n    score: float\n    id: int\n\n\n"
            "class InvalidCursor(ValueError):\n"
            '    """Not a cursor this API handed out."""\n\n\n'
            "def encode_cursor(cursor: Cursor) -> str:\n"
            '    raw = json.dumps({"s": round(cursor.score, 6), "i": cursor.id}, '
            'separators=(",", ":"))\n'
            '    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")\n\n\n'
            "def decode_cursor(value: str) -> Cursor:\n"
            "    try:\n"
            '        padded = value + "=" * (-len(value) % 4)\n'
            "        data = json.loads(base64.urlsafe_b64decode(padded.encode()))\n"
            '        return Cursor(score=float(data["s"]), id=int(data["i"]))\n'
            "    except (ValueError, KeyError, TypeError) as exc:\n"
            "        raise InvalidCursor(str(exc)) from exc\n",
        ),
        chat.block(
            p.search,
            "from sqlalchemy import func, select, text\n",
            "from sqlalchemy import and_, func, or_, select, text\n",
        ),
        chat.block(
            p.search,
            f"from {p.pkg}.db.models import {p.model}\n",
            f"from {p.pkg}.db.models import {p.model}\n"
            f"from {p.pkg}.services.cursor import Cursor\n",
        ),
        chat.block(p.search, head[start:], keyset_body),
        chat.block(
            p.v2,
            f"from {p.pkg}.services import search as search_service\n",
            f"from {p.pkg}.services import search as search_service\n"
            f"from {p.pkg}.services.cursor import InvalidCursor, decode_cursor, encode_cursor\n",
        ),
        chat.block(
            p.v2,
            f"    items: List[{p.model}Out]\n    page: int\n    page_size: int\n",
            f"    items: List[{p.model}Out]\n    next_cursor: Optional[str] = None\n",
        ),
        chat.block(
            p.v2,
            "    page: int = 1,\n",
            "    cursor: Optional[str] = None,\n",
        ),
        chat.block(
            p.v2,
            "    if page < 1:\n"
            '        return _bad_request("page must be 1 or more")\n'
            f"    rows, size = await search_service.search_{p.plural}(session, q.strip(), "
            "page=page)\n"
            "    return SearchPage(\n"
            f"        items=[{p.model}Out.from_orm(row) for row in rows], page=page, "
            "page_size=size\n"
            "    )\n",
            "    try:\n"
            "        after = decode_cursor(cursor) if cursor else None\n"
            "    except InvalidCursor:\n"
            '        return _bad_request("cursor is not valid")\n'
            f"    rows, following = await search_service.search_{p.plural}(\n"
            "        session, q.strip(), after=after\n"
            "    )\n"
            "    return SearchPage(\n"
            f"        items=[{p.model}Out.from_orm(row) for row in rows],\n"
            "        next_cursor=encode_cursor(following) if following else None,\n"
            "    )\n",
        ),
        chat.block(
            p.conftest,
            "from typing import AsyncIterator, Awaitable, Callable\n",
            "from typing import AsyncIterator, Awaitable, Callable, List\n",
        ),
        chat.block(
            p.conftest,
            "    return _make\n",
            "    return _make\n\n\n"
            "@pytest.fixture\n"
            f"async def seed_{p.plural}(make_{p.noun}: Callable[..., Awaitable[{p.model}]]) "
            f"-> List[{p.model}]:\n"
            f'    """Three pages of {p.plural} whose {p.field} starts with "{p.prefix}"."""\n'
            f"    from {p.pkg}.core.config import settings\n\n"
            "    rows = []\n"
            "    for n in range(settings.search_page_size * 3):\n"
            f"        rows.append(await make_{p.noun}({p.field}=f\"{p.prefix}{{'a' * (n % 7)}} "
            '{n}"))\n'
            "    return rows\n",
        ),
        chat.block(p.tests, "", tests_body),
    ]
    chat.say(
        "Keyset pagination:\n\n"
        f"- `{p.cursor}`: a `Cursor(score, id)` serialised as base64url JSON, "
        "`decode_cursor()` raising `InvalidCursor` on anything it didn't produce;\n"
        f"- `{p.search}`: fetches `size + 1` rows after the cursor, ordered by similarity "
        "descending then id; the extra row tells us whether there is a next page;\n"
        f"- `{p.v2}`: `cursor` replaces `page`, `SearchPage` is now `items` + `next_cursor`, "
        f"and a cursor that doesn't decode is the same 400 with `{p.code}`;\n"
        f"- `{p.conftest}`: a `seed_{p.plural}` fixture with three pages of similar "
        f"{p.plural};\n"
        f"- `{p.tests}`: first page, second page, last page, bad cursor, short query.\n\n"
        f"Remaining:\n1. {_T_PLAN}\n\n"
        "Here are the *SEARCH/REPLACE* blocks:\n\n" + "\n\n".join(blocks)
    )
    chat.committed(f"feat: keyset pagination with opaque cursors for {p.noun} search")

    # The keyset comparison is the wrong way round.
    tests_lines = chat.files[p.tests].split("\n")
    at = chat.line_of(p.tests, "assert not first_ids & second_ids")
    start_line = chat.line_of(p.tests, "async def test_second_page_starts_after_cursor")
    ids = sorted(random.Random(seed).sample(range(100, 400), 6))
    chat.test_failed(
        _pytest_failed(
            p,
            "test_second_page_starts_after_cursor",
            at,
            [
                f"client = <httpx.AsyncClient object at {_address(seed)}>"
                f", seed_{p.plural} = [<{p.model} {ids[0]}>, <{p.model} {ids[1]}>, ...]",
                "",
                *(f"    {line}" for line in tests_lines[start_line - 1 : at - 1]),
                f">   {tests_lines[at - 1]}",
            ],
            [
                f"E       assert not ({{{ids[0]}, {ids[1]}, {ids[2]}, {ids[3]}, {ids[4]}, "
                f"{ids[5]}, ...}} & {{{ids[0]}, {ids[2]}, {ids[3]}, {ids[5]}, ...}})",
            ],
            n + 7,
            "3.48",
        )
    )
    wrong = next(x for x in chat.files[p.search].split("\n") if "or_(score > " in x)
    block = chat.block(p.search, wrong + "\n", wrong.replace("score > ", "score < ") + "\n")
    chat.say(
        "The second page repeats the first: results are ordered by similarity *descending*, "
        "so the rows after the cursor are the ones with a lower score, not a higher one:\n\n"
        + block
    )
    chat.committed("fix: keyset comparison follows the descending similarity order")
    chat.filler(2)

    # The page size, second change; a new to-do.
    chat.user(
        f"Product says that's too heavy on mobile: make it {p.per_page(2)}. And put "
        f"something on your list: document {p.code} in {p.docs}. I'll add that file to the "
        "chat when we get to it."
    )
    block = chat.block(
        p.config,
        f"    search_page_size: int = {p.pages[1]}\n",
        f"    search_page_size: int = {p.pages[2]}\n",
    )
    chat.say(
        f"Page size down to {p.per_page(2)}:\n\n{block}\n\n"
        f"Added to the list.\n\nRemaining:\n1. {p.t_docs}\n2. {_T_PLAN}"
    )
    chat.committed(f"chore: set search page size to {p.pages[2]}")
    chat.filler(1)

    # The tie test, which fails.
    chat.user(
        f"One more test: a page boundary that falls inside a run of {p.plural} with the same "
        f"{p.field}, so the same similarity. Nothing may repeat or go missing across pages."
    )
    tie_body = (
        "\n\n"
        f"async def {p.tie_test}(client, make_{p.noun}):\n"
        "    total = settings.search_page_size * 2\n"
        "    for _ in range(total):\n"
        f'        await make_{p.noun}({p.field}="{p.prefix} {p.code_term}")\n'
        f'    params = {{"q": "{p.prefix} {p.code_term}"}}\n'
        "    seen = []\n"
        "    while True:\n"
        "        body = (await client.get(URL, params=params)).json()\n"
        '        seen += [item["id"] for item in body["items"]]\n'
        '        if not body["next_cursor"]:\n'
        "            break\n"
        '        params["cursor"] = body["next_cursor"]\n'
        "    assert len(seen) == len(set(seen)) == total\n"
    )
    last_test = chat.files[p.tests][chat.files[p.tests].rindex("async def test_") :]
    block = chat.block(p.tests, last_test, last_test + tie_body)
    chat.say(
        f"`{p.tie_test}` creates two pages of {p.plural} with an identical {p.field}, walks "
        "every page and checks that each id shows up exactly once. The id in the cursor is "
        "the tie-breaker, so this should hold.\n\n"
        f"Remaining:\n1. {p.t_docs}\n2. {_T_PLAN}\n\n{block}"
    )
    chat.committed("test: cover page boundaries inside equal similarity scores")

    # The files in the chat, as they now stand, then the turns since the last edit.
    order = [p.config, p.models, p.v2, p.search, p.cursor, p.conftest, p.tests]
    assert sorted(order) == sorted(chat.in_chat), chat.in_chat
    shown = "".join(f"\n{path}\n```\n{chat.files[path]}```\n" for path in order)
    chat.user(
        "I have *added these files to the chat* so you can go ahead and edit them.\n\n"
        "*Trust this message as the true contents of these files!*\n"
        "Any other messages in the chat may contain outdated versions of the files' "
        "contents.\n" + shown
    )
    chat.say("Ok, any changes I propose will be to those files.")

    total = p.pages[2] * 2
    tests_lines = chat.files[p.tests].split("\n")
    at = chat.line_of(p.tests, "assert len(seen) == len(set(seen)) == total")
    start_line = chat.line_of(p.tests, f"async def {p.tie_test}")
    chat.ran(
        _TEST_CMD,
        _pytest_failed(
            p,
            p.tie_test,
            at,
            [
                f"client = <httpx.AsyncClient object at {_address(seed + 1)}>"
                f", make_{p.noun} = <function make_{p.noun}.<locals>._make at "
                f"{_address(seed + 2)}>",
                "",
                *(f"    {line}" for line in tests_lines[start_line - 1 : at - 1]),
                f">   {tests_lines[at - 1]}",
            ],
            [
                f"E       assert {total - 1} == {total}",
                f"E        +  where {total - 1} = len([{', '.join(str(k) for k in ids[:3])}, ...])",
            ],
            n + 8,
            "3.91",
        ),
    )
    chat.user(
        f"Leave that one failing for now, {p.colleague} and I will look at it together "
        "tomorrow. That's all for today."
    )
    chat.say(p.last_words)

    for f in facts:
        s.fact(f.category, f.text, f.probe, stale=f.stale, required=f.required)
    return s


def _chars(session: Session) -> int:
    system = len(json.dumps({"role": "system", "content": session.system}, ensure_ascii=False))
    return system + sum(len(json.dumps(m, ensure_ascii=False)) for m in session.messages)


def write(seed: int, tokens: int) -> EvalSession:
    """An aider chat of about `tokens` tokens, its story drawn from `seed`."""
    plan = _draw(seed)
    story = _chars(_tell(plan, 0, seed))
    filler = max(0, int(tokens * CHARS_PER_TOKEN) - story)
    return finish_session(_tell(plan, filler, seed), family=FAMILY, seed=seed)
