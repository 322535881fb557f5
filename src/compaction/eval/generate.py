"""Seeded generator of long, realistic coding-agent sessions with planted facts.

`generate_session(seed)` returns an OpenAI Chat Completions request (system prompt, a task,
then many assistant turns with tool calls and realistic tool output, user interjections) and
the list of `Fact`s planted in it. The retention benchmark compacts the payload and scores the
facts with `compaction.eval.probes.score`.

How it works: a small fictional project (a "world": package, modules with generated source,
tests) is drawn from the seed; facts are chosen and given positions across the session; the
session is then written turn by turn, planting each fact when its position is reached and
filling the space between with ordinary agent work until the size target is met. Finally every
probe is checked to occur only where it was planted.

This module must never depend on how compaction works (it is the ruler, written separately
from the thing measured), never read the clock or global random state, and never return a
session whose probes could be satisfied by text outside the planted messages.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from compaction.eval import _corpus as corpus
from compaction.eval._render import (
    Failure,
    SourceFile,
    camel,
    command_output,
    fill,
    git_diff,
    git_log,
    git_status,
    grep_hits,
    hex_id,
    json_reply,
    listing,
    numbered,
    pip_install,
    pytest_log,
    python_module,
    script_traceback,
    tests_for_module,
)
from compaction.eval.probes import (
    CATEGORIES,
    REQUIRED_CATEGORIES,
    Depth,
    Fact,
    FactCategory,
    text_of_message,
)
from compaction.exceptions import InputError

T = TypeVar("T")

#: Characters per token used to size sessions (on the payload JSON). cl100k counts about 3.2
#: characters per token there, so the JSON holds ~15% more real tokens than the target; the
#: message text alone, without JSON escaping and structure, about 12% fewer.
CHARS_PER_TOKEN = 3.5

#: Facts planted per 25k tokens of session: scaled with `target_tokens`, and down with a
#: `tool_output_scale` above 1 (bigger outputs leave less room), at least one per category.
BASE_FACT_COUNTS: dict[FactCategory, int] = {
    "constraint": 5,
    "file_modified": 4,
    "file_created": 2,
    "file_deleted": 1,
    "file_read": 3,
    "command": 3,
    "error_open": 2,
    "error_resolved": 2,
    "decision": 5,
    "todo": 5,
    "changed_value": 2,
    "identifier": 4,
}
_BASE_TOKENS = 25_000
#: The categories this generator plants, in the ruler's order (the final test status and the
#: last message are read off real sessions and the families, not planted here).
_PLANTED = tuple(c for c in CATEGORIES if c in BASE_FACT_COUNTS)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string", "description": d} for p, d in params},
                "required": [p for p, _ in params],
                "additionalProperties": False,
            },
        },
    }
    for name, description, params in (
        ("read_file", "Read a file; returns it with line numbers.", [("path", "Repo path.")]),
        (
            "write_file",
            "Create or overwrite a file.",
            [("path", "Repo path."), ("content", "Full file content.")],
        ),
        (
            "edit_file",
            "Replace one exact occurrence of `old` with `new` in a file.",
            [("path", "Repo path."), ("old", "Text to replace."), ("new", "Replacement.")],
        ),
        ("delete_file", "Delete a file.", [("path", "Repo path.")]),
        ("bash", "Run a shell command in the repo root.", [("command", "The command.")]),
        (
            "grep",
            "Search file contents with a regular expression.",
            [("pattern", "Regex."), ("path", "Directory or file to search.")],
        ),
        ("list_dir", "List a directory.", [("path", "Directory path.")]),
    )
]


class ProbeLeakError(AssertionError):
    """A probe string occurs outside the messages its fact was planted in: a generator bug."""


@dataclass(frozen=True)
class GeneratedSession:
    """A generated transcript (`payload`, an OpenAI Chat Completions request) and its facts."""

    seed: int
    payload: dict[str, Any]
    facts: list[Fact]

    @property
    def approx_tokens(self) -> int:
        return int(len(json.dumps(self.payload)) / CHARS_PER_TOKEN)


def generate_session(
    seed: int,
    *,
    target_tokens: int = 25_000,
    cued_fraction: float = 0.5,
    tool_output_scale: float = 1.0,
) -> GeneratedSession:
    """Build the session for `seed`: same arguments, byte-identical payload and facts.

    The payload is at least `target_tokens` (JSON characters / 3.5), and close to it from
    about 20k tokens up; below that the minimum of one fact per category can push it over.
    About `cued_fraction` of the facts carry a cue word (TODO:, Decision:, Constraint:,
    NOTE:). `tool_output_scale` multiplies the size of tool outputs (file dumps, logs, JSON).
    Raises `InputError` for arguments out of range.
    """
    if target_tokens <= 0:
        raise InputError(f"target_tokens must be positive, got {target_tokens}")
    if not 0.0 <= cued_fraction <= 1.0:
        raise InputError(f"cued_fraction must be within [0, 1], got {cued_fraction}")
    if not 0.1 <= tool_output_scale <= 10.0:
        raise InputError(f"tool_output_scale must be within [0.1, 10], got {tool_output_scale}")
    rng = random.Random(seed)
    world = _World.build(rng, tool_output_scale)
    session = _Session(rng, world)
    # Bigger tool output makes every fact's own episode bigger too; fewer facts keep the
    # session near its target instead of the facts alone overrunning it.
    scale = target_tokens / _BASE_TOKENS / max(1.0, tool_output_scale)
    plan = _Plan(rng, world, session, scale=scale, cued_fraction=cued_fraction)
    events = plan.choose()
    session.write(plan, events, target_chars=int(target_tokens * CHARS_PER_TOKEN))
    facts = [p.freeze(session) for p in plan.planted]
    _check_probes(plan.planted, session.messages)
    # A copy of the schemas: a caller editing its payload must not change the next session's.
    tools = copy.deepcopy(TOOLS)
    payload = {"model": "gpt-4o", "messages": session.messages, "tools": tools}
    return GeneratedSession(seed=seed, payload=payload, facts=facts)


# --- the fictional project -------------------------------------------------------------------


class _Names:
    """Hands out names that neither contain nor are contained in any name handed out before.

    A probe like `load_invoice` must not match inside `load_invoices` elsewhere in the
    session, so every identifier-like name is drawn through here.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: list[str] = []

    def free(self, name: str) -> bool:
        folded = name.casefold()
        return all(folded not in u and u not in folded for u in self._used)

    def take(self, candidates: Sequence[str]) -> str:
        # Random tries first: pools are large and mostly free, and checking every candidate
        # against every used name made building a world quadratic.
        for _ in range(20):
            name = self._rng.choice(candidates)
            if self.free(name):
                break
        else:
            options = [c for c in candidates if self.free(c)]
            if not options:
                raise RuntimeError(f"name pool exhausted: {list(candidates)[:5]}...")
            name = self._rng.choice(options)
        self._used.append(name.casefold())
        return name


@dataclass
class _Module:
    name: str
    noun: str
    source: SourceFile
    tests: SourceFile


@dataclass
class _World:
    pkg: str
    domain: corpus.Domain
    scale: float
    fillers: list[_Module]
    fact_modules: list[_Module]
    funcs: _Names
    misc: _Names
    branch: str
    port: int
    edits: list[tuple[str, str, str]] = field(default_factory=list)  # (path, old, new)
    extra_entries: dict[str, list[str]] = field(default_factory=dict)
    gone: list[str] = field(default_factory=list)

    @staticmethod
    def build(rng: random.Random, scale: float) -> _World:
        domain = rng.choice(corpus.DOMAINS)
        pkg = rng.choice(domain.packages)
        names = list(dict.fromkeys(domain.modules + corpus.GENERIC_MODULES))
        rng.shuffle(names)
        funcs = _Names(rng)
        nouns = list(domain.nouns)
        world = _World(
            pkg=pkg,
            domain=domain,
            scale=scale,
            fillers=[],
            fact_modules=[],
            funcs=funcs,
            misc=_Names(rng),
            branch=f"feature/{rng.choice(nouns).replace('_', '-')}-{rng.randint(100, 999)}",
            port=rng.choice((8000, 8080, 5000, 8001)),
        )
        verbs_nouns = [
            f"{v}_{n}"
            for v in corpus.VERBS
            for n in (*nouns, *(f"{x}s" for x in nouns), *corpus.GENERIC_NOUNS)
        ]
        modules = [world._module(rng, name, rng.choice(nouns), verbs_nouns) for name in names]
        # Facts draw from their own modules so filler output (greps, test logs, git status)
        # never prints a path that a fact's probe is made of.
        world.fillers = modules[:10]
        world.fact_modules = modules[10:]
        return world

    def _module(self, rng: random.Random, name: str, noun: str, pool: list[str]) -> _Module:
        count = max(2, round(rng.randint(3, 6) * self.scale))
        functions = [self.funcs.take(pool) for _ in range(count)]
        imports = [(name + "_helpers", "chunked")] if rng.random() < 0.5 else []
        fields = tuple(rng.sample(corpus.FIELDS, 2))
        source = python_module(
            rng,
            path=f"src/{self.pkg}/{name}.py",
            pkg=self.pkg,
            noun=noun,
            functions=functions,
            imports=imports,
            fields=(fields[0], fields[1]),
            table=rng.choice(self.domain.tables),
            const=rng.choice(("DEFAULT_LIMIT", "MAX_AGE", "TTL", "CHUNK", "MAX_BATCH")),
        )
        tests = tests_for_module(
            rng,
            path=f"tests/test_{name}.py",
            pkg=self.pkg,
            module=name,
            noun=noun,
            functions=functions,
            fields=(fields[0], fields[1]),
            per_function=max(1, min(6, round(rng.randint(1, 3) * self.scale))),
        )
        return _Module(name=name, noun=noun, source=source, tests=tests)

    def slots(self, rng: random.Random, module: _Module | None = None) -> dict[str, str]:
        """Filler names for prose templates, about `module` if given: safe to repeat anywhere."""
        m, m2 = rng.sample(self.fillers, 2)
        if module is not None:
            m2 = m if m2 is module else m2
            m = module
        noun = m.noun
        return {
            "pkg": self.pkg,
            "module": m.name,
            "module2": m2.name,
            "path": m.source.path,
            "func": rng.choice(m.source.functions),
            "func2": rng.choice(m2.source.functions),
            "noun": noun,
            "Noun": noun.replace("_", " ").capitalize(),
            "Cls": camel(noun),
            "const": rng.choice(("DEFAULT_LIMIT", "MAX_AGE", "TTL", "CHUNK", "MAX_BATCH")),
            "test": m.tests.path,
        }

    def replace_source(self, path: str, text: str) -> None:
        for m in (*self.fillers, *self.fact_modules):
            if m.source.path == path:
                m.source = SourceFile(path, text, m.source.functions)
            elif m.tests.path == path:
                m.tests = SourceFile(path, text, m.tests.functions, m.tests.tests)


# --- writing the transcript ------------------------------------------------------------------


@dataclass
class _Planted:
    """A fact while the session is being written; `freeze` turns it into a `Fact`."""

    id: str
    category: FactCategory
    text: str
    probe: tuple[str, ...]
    stale: tuple[str, ...] = ()
    cued: bool = False
    required: bool = True
    buried: bool = False
    carriers: list[int] = field(default_factory=list)  # messages with the current form
    stale_carriers: list[int] = field(default_factory=list)  # messages with a superseded form

    def freeze(self, session: _Session) -> Fact:
        if not self.carriers:
            raise ProbeLeakError(f"{self.id} was never planted")
        # Depth is where the current form first appears, measured on the finished session.
        return Fact(
            id=self.id,
            category=self.category,
            text=self.text,
            probe=self.probe,
            depth=session.depth_of(self.carriers[0]),
            cued=self.cued,
            critical=self.required and self.category in REQUIRED_CATEGORIES,
            stale=self.stale,
            buried=self.buried,
            required=self.required,
            planted_in=tuple(dict.fromkeys(self.carriers)),
        )


@dataclass
class _Call:
    name: str
    args: dict[str, str]
    output: str
    carries: tuple[_Planted, ...] = ()
    output_carries: tuple[_Planted, ...] = ()
    exit_code: int = 0


@dataclass(order=True)
class _Event:
    at: float
    order: int
    run: Callable[[], None] = field(compare=False)
    words_only: bool = field(default=False, compare=False)  # only queues prose


class _Session:
    """The growing transcript plus the bookkeeping of which message carries which fact."""

    def __init__(self, rng: random.Random, world: _World) -> None:
        self.rng = rng
        self.world = world
        self.messages: list[dict[str, Any]] = []
        self.sizes: list[int] = []
        self.chars = 0
        self.pending_ack = False
        # Prose waiting for the next assistant message: a decision or a to-do is usually said
        # on the way to the next action, not in a message of its own.
        self.queued: list[tuple[str, list[_Planted], list[_Planted]]] = []
        # Bash results come either as raw text or as a JSON envelope, as different agent
        # harnesses do; a session sticks to one.
        self.json_bash = rng.random() < 0.35

    # -- bookkeeping --

    def add(
        self,
        message: dict[str, Any],
        carries: Sequence[_Planted] = (),
        stale: Sequence[_Planted] = (),
    ) -> int:
        index = len(self.messages)
        self.messages.append(message)
        size = len(json.dumps(message)) + 2
        self.sizes.append(size)
        self.chars += size
        for fact in carries:
            fact.carriers.append(index)
        for fact in stale:
            fact.stale_carriers.append(index)
        return index

    def depth_of(self, index: int) -> Depth:
        position = sum(self.sizes[:index]) / max(1, self.chars)
        return "early" if position < 1 / 3 else "middle" if position < 2 / 3 else "late"

    def call_id(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "call_" + "".join(self.rng.choice(alphabet) for _ in range(24))

    # -- message kinds --

    def turn(
        self,
        prose: str,
        calls: Sequence[_Call],
        carries: Sequence[_Planted] = (),
        stale: Sequence[_Planted] = (),
    ) -> None:
        """One assistant message with tool calls, each answered by its own tool message."""
        prose, carries, stale = self._with_queued(prose, carries, stale)
        ids = [self.call_id() for _ in calls]
        message = {
            "role": "assistant",
            "content": prose or None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for call_id, c in zip(ids, calls, strict=True)
            ],
        }
        self.add(message, [*carries, *(f for c in calls for f in c.carries)], stale)
        for call_id, c in zip(ids, calls, strict=True):
            content = self._wrap(c)
            self.add(
                {"role": "tool", "tool_call_id": call_id, "content": content}, c.output_carries
            )

    def say(self, text: str, carries: Sequence[_Planted] = ()) -> None:
        """An assistant message without tool calls: the end of an agent turn."""
        text, carries, stale = self._with_queued(text, carries, ())
        self.add({"role": "assistant", "content": text}, carries, stale)

    def queue(
        self, text: str, carries: Sequence[_Planted] = (), stale: Sequence[_Planted] = ()
    ) -> None:
        """Say `text` in the next assistant message, whatever that message does."""
        self.queued.append((text, list(carries), list(stale)))

    def user(
        self, text: str, carries: Sequence[_Planted] = (), stale: Sequence[_Planted] = ()
    ) -> None:
        last = self.messages[-1]["role"]
        # A user either answers the agent's end-of-turn message or interrupts after a tool
        # result; two user messages in a row never happen in real sessions.
        if self.queued or last == "user" or (last == "tool" and self.rng.random() < 0.5):
            self.say(fill(self.rng.choice(corpus.PROSE_STATUS), self.world.slots(self.rng)))
        self.add({"role": "user", "content": text}, carries, stale)
        self.pending_ack = True

    def _queued_chars(self) -> int:
        return sum(len(text) + 1 for text, _, _ in self.queued)

    def _with_queued(
        self, prose: str, carries: Sequence[_Planted], stale: Sequence[_Planted]
    ) -> tuple[str, list[_Planted], list[_Planted]]:
        """Prefix an acknowledgement (after a user message) and any queued prose."""
        parts = [self.rng.choice(corpus.ACKS)] if self.pending_ack else []
        self.pending_ack = False
        all_carries, all_stale = list(carries), list(stale)
        for text, c, st in self.queued:
            parts.append(text)
            all_carries += c
            all_stale += st
        self.queued.clear()
        parts.append(prose)
        return " ".join(p for p in parts if p), all_carries, all_stale

    def _wrap(self, call: _Call) -> str:
        if call.name != "bash":
            return call.output
        if self.json_bash:
            return json.dumps({"exit_code": call.exit_code, "stdout": call.output, "stderr": ""})
        if call.exit_code:
            return f"{call.output}\n\n[exit code: {call.exit_code}]"
        return call.output or "(no output)"

    # -- the whole session --

    def write(self, plan: _Plan, events: list[_Event], *, target_chars: int) -> None:
        w, rng = self.world, self.rng
        self.add(
            {"role": "system", "content": fill(rng.choice(corpus.SYSTEM_PROMPTS), {"pkg": w.pkg})}
        )
        plan.write_opening()
        fillers = _Fillers(self)
        pending = sorted(events)
        # An event's position is a fraction of the *filler* budget, which is what is left of the
        # target after the facts' own episodes (estimated from those written so far). Firing on
        # total size instead would bunch the late facts past the end of the session.
        fact_chars, done = 0, 0
        while pending or self.chars < target_chars:
            per_event = fact_chars / done if done else 2000 * w.scale
            budget = max(0.3 * target_chars, target_chars - fact_chars - per_event * len(pending))
            behind = self.chars - fact_chars >= pending[0].at * budget if pending else False
            # A fact that is only words waits until queued words went out, so two facts are
            # never crammed into one sentence run; a fact with its own turn takes them along.
            crammed = bool(pending and pending[0].words_only and self.queued)
            # The agent does some work before anything else happens, as real sessions start.
            warming_up = len(self.messages) < 6
            ready = pending and not crammed and not warming_up
            if ready and (behind or self.chars >= target_chars):
                before, queued_before = self.chars, self._queued_chars()
                pending.pop(0).run()
                fact_chars += self.chars - before + self._queued_chars() - queued_before
                done += 1
            else:
                fillers.episode()
        if rng.random() < 0.5:
            self.say(fill(rng.choice(corpus.PROSE_STATUS), w.slots(rng)))
            self.user(rng.choice(corpus.LIVE_TURNS))
        else:
            fillers.final_tool_turn()


class _Fillers:
    """Ordinary agent work between facts: reads, greps, test runs, edits, API calls, git."""

    def __init__(self, session: _Session) -> None:
        self.s = session
        self.w = session.world
        self.rng = session.rng
        self.kinds: list[tuple[Callable[[], None], float]] = [
            (self.read, 0.26),
            (self.grep, 0.11),
            (self.list_dir, 0.05),
            (self.tests, 0.16),
            (self.edit, 0.14),
            (self.api, 0.09),
            (self.git, 0.08),
            (self.pip, 0.04),
            (self.lint, 0.04),
            (self.chatter, 0.03),
        ]

    def episode(self) -> None:
        # Nobody asks how it is going before the agent has done anything.
        kinds = [k for k in self.kinds if k[0] != self.chatter or len(self.s.messages) >= 8]
        runs, weights = zip(*kinds, strict=True)
        self.rng.choices(runs, weights)[0]()

    def prose(
        self,
        templates: Sequence[str],
        *,
        p: float = 0.6,
        about: _Module | None = None,
        path: str | None = None,
    ) -> str:
        """Maybe a remark on the last output, then what comes next (about `about`, `path`)."""
        if self.rng.random() > p:
            return ""
        parts = []
        if self.rng.random() < 0.35:
            parts.append(fill(self.rng.choice(corpus.PROSE_OBSERVATIONS), self.w.slots(self.rng)))
        slots = self.w.slots(self.rng, about)
        if path is not None:
            slots["path"] = path
        parts.append(fill(self.rng.choice(templates), slots))
        return " ".join(parts)

    def module(self) -> _Module:
        return self.rng.choice(self.w.fillers)

    # -- single calls, also used by fact episodes to give their prose something to do --

    def read_call(self, module: _Module | None = None, *, test: bool = False) -> _Call:
        m = module or self.module()
        f = m.tests if test else m.source
        return _Call("read_file", {"path": f.path}, numbered(f.text))

    def grep_call(self, module: _Module | None = None) -> _Call:
        m = module or self.module()
        pattern = self.rng.choice(m.source.functions)
        where = self.rng.choice(("src", f"src/{self.w.pkg}", "."))
        files = [x.source for x in self.w.fillers] + [x.tests for x in self.w.fillers]
        limit = max(5, round(30 * self.w.scale))
        return _Call("grep", {"pattern": pattern, "path": where}, grep_hits(files, pattern, limit))

    def pytest_call(self, modules: Sequence[_Module] | None = None) -> _Call:
        picked = list(modules or self.rng.sample(self.w.fillers, self.rng.randint(1, 3)))
        style = self.rng.choice(("default", "quiet", "verbose"))
        flag = {"default": "", "quiet": " -q", "verbose": " -v"}[style]
        if len(picked) == len(self.w.fillers):
            command = f"pytest{flag}"
        else:
            command = f"pytest{flag} " + " ".join(m.tests.path for m in picked)
        output = pytest_log(self.rng, pkg=self.w.pkg, files=[m.tests for m in picked], style=style)
        return _Call("bash", {"command": command}, output)

    def filler_call(self) -> _Call:
        pick = self.rng.random()
        if pick < 0.5:
            return self.read_call(test=self.rng.random() < 0.25)
        if pick < 0.75:
            return self.grep_call()
        return self.pytest_call()

    # -- episodes --

    def read(self) -> None:
        count = self.rng.choices((1, 2, 3), (0.55, 0.3, 0.15))[0]
        modules = self.rng.sample(self.w.fillers, count)
        calls = [self.read_call(m, test=self.rng.random() < 0.25) for m in modules]
        prose = self.prose(corpus.PROSE_BEFORE_READ, about=modules[0], path=calls[0].args["path"])
        self.s.turn(prose, calls)

    def grep(self) -> None:
        call = self.grep_call()
        about = next(m for m in self.w.fillers if call.args["pattern"] in m.source.functions)
        self.s.turn(self.prose(corpus.PROSE_BEFORE_GREP, about=about), [call])

    def list_dir(self) -> None:
        path = self.rng.choice((f"src/{self.w.pkg}", "tests"))
        modules = [*self.w.fillers, *self.w.fact_modules]
        if path == "tests":
            entries = ["__init__.py", "conftest.py", "fakes.py"]
            entries += [m.tests.path.rsplit("/", 1)[1] for m in modules]
        else:
            entries = ["__init__.py", "py.typed"] + [f"{m.name}.py" for m in modules]
        entries += self.w.extra_entries.get(path, [])
        entries = [e for e in entries if f"{path}/{e}" not in self.w.gone]
        self.s.turn(
            self.prose(corpus.PROSE_BEFORE_LIST, p=0.3),
            [_Call("list_dir", {"path": path}, listing(path, entries))],
        )

    def tests(self) -> None:
        everything = self.rng.random() < 0.3
        modules = (
            self.w.fillers
            if everything
            else self.rng.sample(self.w.fillers, self.rng.randint(1, 3))
        )
        about = None if everything else modules[0]
        self.s.turn(self.prose(corpus.PROSE_BEFORE_TESTS, about=about), [self.pytest_call(modules)])

    def edit_call(self, module: _Module, prose_slots: dict[str, str] | None = None) -> _Call:
        """Edit one line of `module` and remember it, so later reads and diffs agree."""
        old, new = _pick_edit(self.rng, module.source.text)
        text = module.source.text.replace(old, new, 1)
        self.w.replace_source(module.source.path, text)
        if module in self.w.fillers:
            self.w.edits.append((module.source.path, old, new))
        result = self.rng.choice(
            (
                f"The file {module.source.path} has been updated.",
                "Applied 1 edit.",
                f"Edited {module.source.path}: 1 replacement.",
            )
        )
        return _Call("edit_file", {"path": module.source.path, "old": old, "new": new}, result)

    def edit(self) -> None:
        m = self.module()
        if self.rng.random() < 0.4:
            self.s.turn(self.prose(corpus.PROSE_BEFORE_READ, about=m), [self.read_call(m)])
        self.s.turn(self.prose(corpus.PROSE_BEFORE_EDIT, p=0.8, about=m), [self.edit_call(m)])
        if self.rng.random() < 0.7:
            self.s.turn(
                self.prose(corpus.PROSE_BEFORE_TESTS, p=0.3, about=m), [self.pytest_call([m])]
            )

    def api_call(
        self,
        module: _Module | None = None,
        *,
        extra: dict[str, Any] | None = None,
        record_extra: dict[str, Any] | None = None,
    ) -> _Call:
        m = module or self.module()
        limit = max(1, round(self.rng.randint(2, 6) * self.w.scale))
        url = f"http://localhost:{self.w.port}/api/v1/{m.noun}s?limit={limit}"
        command = self.rng.choice(
            (f"curl -s '{url}' | python -m json.tool", f"curl -sS '{url}' | jq .")
        )
        body = json_reply(
            self.rng,
            noun=m.noun,
            fields=self.rng.sample(corpus.FIELDS, 2),
            count=limit,
            extra=extra,
            record_extra=record_extra,
        )
        return _Call("bash", {"command": command}, body)

    def api(self) -> None:
        m = self.module()
        self.s.turn(self.prose(corpus.PROSE_BEFORE_API, p=0.5, about=m), [self.api_call(m)])

    def git(self) -> None:
        pick = self.rng.random()
        if pick < 0.4:
            edited = list(dict.fromkeys(path for path, _, _ in self.w.edits))
            call = _Call("bash", {"command": "git status"}, git_status(self.w.branch, edited))
        elif pick < 0.7 and self.w.edits:
            path, old, new = self.rng.choice(self.w.edits)
            m = next(x for x in self.w.fillers if x.source.path == path)
            diff = git_diff(self.rng, path, m.source.text, new, old)
            call = _Call("bash", {"command": f"git diff {path}"}, diff)
        else:
            count = max(3, round(10 * self.w.scale))
            slots = self.w.slots(self.rng)
            call = _Call(
                "bash",
                {"command": f"git log --oneline -n {count}"},
                git_log(self.rng, slots, count),
            )
        self.s.turn(self.prose(corpus.PROSE_BEFORE_GIT, p=0.4), [call])

    def pip(self) -> None:
        deps = self.rng.sample(corpus.FILLER_DEPS, self.rng.randint(1, 3))
        command = "pip install " + " ".join(n for n, _ in deps)
        self.s.turn(
            self.prose(corpus.PROSE_BEFORE_PIP, p=0.5),
            [_Call("bash", {"command": command}, pip_install(self.rng, deps))],
        )

    def lint(self) -> None:
        if self.rng.random() < 0.5:
            call = _Call("bash", {"command": "ruff check src tests"}, "All checks passed!")
        else:
            n = len(self.w.fillers) + len(self.w.fact_modules) + 1
            call = _Call(
                "bash", {"command": "mypy src"}, f"Success: no issues found in {n} source files"
            )
        self.s.turn(self.prose(corpus.PROSE_BEFORE_LINT, p=0.4), [call])

    def chatter(self) -> None:
        question, answer = self.rng.choice(corpus.USER_CHATTER)
        slots = self.w.slots(self.rng)
        self.s.user(fill(question, slots))
        self.s.pending_ack = False
        # The agent answers and carries on working in the same message.
        self.s.queue(fill(answer, slots))

    def final_tool_turn(self) -> None:
        self.rng.choice((self.read, self.tests, self.grep))()


def _pick_edit(rng: random.Random, text: str) -> tuple[str, str]:
    """A one-line change to `text`: `old` occurs exactly once, `new` differs from it."""
    lines = text.splitlines()
    candidates = [
        line
        for line in lines
        if line.startswith("    ") and line.strip() and text.count(line) == 1 and '"""' not in line
    ]
    # Prefer lines a real rewrite applies to; a comment above the line is the fallback.
    rewritable = [c for c in candidates if any(b in c for b, _ in corpus.EDIT_REWRITES)]
    if rewritable and rng.random() < 0.75:
        old = rng.choice(rewritable)
        before, after = next((b, a) for b, a in corpus.EDIT_REWRITES if b in old)
        return old, old.replace(before, after, 1)
    old = rng.choice(candidates)
    indent = old[: len(old) - len(old.lstrip())]
    return old, f"{indent}# {rng.choice(corpus.EDIT_COMMENTS)}\n{old}"


# --- choosing and planting facts -------------------------------------------------------------

# Where facts go, as fractions of the session: early, middle, late. The first few turns stay
# free of facts because agents explore before they decide anything.
_BANDS: tuple[tuple[float, float], ...] = ((0.06, 0.30), (0.37, 0.63), (0.70, 0.94))


class _Plan:
    """Chooses the facts of one session, how each is worded and when it is planted.

    Each `_plant_*` method creates one fact and registers the event(s) that write it into
    the session; the event bodies run later, while the session is written.
    """

    def __init__(
        self,
        rng: random.Random,
        world: _World,
        session: _Session,
        *,
        scale: float,
        cued_fraction: float,
    ) -> None:
        self.rng = rng
        self.w = world
        self.s = session
        self.fillers = _Fillers(session)
        self.planted: list[_Planted] = []
        self.events: list[_Event] = []
        self.opening_rules: list[tuple[str, _Planted]] = []
        self.opening_notes: list[tuple[str, _Planted]] = []
        capacity: dict[FactCategory, int] = {
            "constraint": len(corpus.CONSTRAINTS),
            "file_read": len(world.fact_modules) // 2,
            "file_modified": len(world.fact_modules) // 2,
            "file_created": len(corpus.CREATED_MODULE_NAMES),
            "file_deleted": len(corpus.DELETED_MODULE_NAMES),
            "command": len(corpus.COMMANDS),
            "error_open": len(corpus.ERRORS) // 2,
            "error_resolved": len(corpus.ERRORS) // 2,
            "decision": len(corpus.DECISION_TOPICS),
            "todo": len(corpus.TODOS),
            "changed_value": len(corpus.CHANGED_VALUES),
            "identifier": 12,
        }
        self.counts = {
            c: max(1, min(capacity[c], round(BASE_FACT_COUNTS[c] * scale))) for c in _PLANTED
        }
        self.identifier_kinds = self._identifier_kinds(self.counts["identifier"])
        self.cues = self._cue_flags(cued_fraction)

    # -- counts, cues, positions --

    def _identifier_kinds(self, n: int) -> list[str]:
        kinds = (["user", "buried", "found", "buried"] + ["user", "buried", "found"] * 3)[:n]
        # Only so many things a user says; past that, identifiers come from tool output.
        users = [i for i, k in enumerate(kinds) if k == "user"]
        for i in users[len(corpus.USER_IDENTIFIERS) :]:
            kinds[i] = "buried"
        return kinds

    def _cue_flags(self, fraction: float) -> dict[FactCategory, list[bool]]:
        """Which facts of each category carry a cue word, decided before any is worded.

        The fraction is of all facts. Facts that cannot carry a cue (buried identifiers,
        fixed errors) shift the quota onto the others; per-category quotas by largest
        remainder keep every category near the fraction, not just the total.
        """
        cueable = dict(self.counts)
        cueable["error_resolved"] = 0
        cueable["identifier"] -= self.identifier_kinds.count("buried")
        n_cueable = sum(cueable.values())
        total = min(n_cueable, round(fraction * sum(self.counts.values())))
        share = total / n_cueable if n_cueable else 0.0
        quota = {c: int(share * cueable[c]) for c in _PLANTED}
        by_remainder = sorted(
            _PLANTED, key=lambda c: (-(share * cueable[c] - quota[c]), self.rng.random())
        )
        for c in by_remainder:
            if sum(quota.values()) >= total:
                break
            if quota[c] < cueable[c]:
                quota[c] += 1
        flags: dict[FactCategory, list[bool]] = {}
        for c in _PLANTED:
            flags[c] = [True] * quota[c] + [False] * (cueable[c] - quota[c])
            self.rng.shuffle(flags[c])
        return flags

    def cue(self, category: FactCategory) -> bool:
        return self.cues[category].pop()

    def positions(self, n: int) -> list[float]:
        """`n` positions spread over the three thirds, in random order."""
        offset = self.rng.randrange(3)
        out = [self.rng.uniform(*_BANDS[(i + offset) % 3]) for i in range(n)]
        self.rng.shuffle(out)
        return out

    def new(self, category: FactCategory, probe: Sequence[str], text: str, **kw: Any) -> _Planted:
        n = sum(p.category == category for p in self.planted) + 1
        fact = _Planted(f"{category}-{n}", category, text, tuple(probe), **kw)
        self.planted.append(fact)
        return fact

    def at(self, position: float, run: Callable[[], None], *, words_only: bool = False) -> None:
        self.events.append(_Event(position, len(self.events), run, words_only))

    def pick(self, cued: bool, cued_forms: Sequence[str], plain_forms: Sequence[str]) -> str:
        return self.rng.choice(cued_forms if cued else plain_forms)

    def slots(self) -> dict[str, str]:
        return self.w.slots(self.rng)

    # -- choosing all facts --

    def choose(self) -> list[_Event]:
        c = self.counts
        for template, at in self._sampled(corpus.CONSTRAINTS, c["constraint"]):
            self._plant_constraint(template, at)
        pool = list(self.w.fact_modules)
        self.rng.shuffle(pool)
        for at in self.positions(c["file_read"]):
            self._plant_read(pool.pop(), at)
        for at in self.positions(c["file_modified"]):
            self._plant_edit(pool.pop(), at, in_tests=self.rng.random() < 0.25)
        for name, at in self._sampled(corpus.CREATED_MODULE_NAMES, c["file_created"]):
            self._plant_new_file(*self._new_path(name), at)
        for name, at in self._sampled(corpus.DELETED_MODULE_NAMES, c["file_deleted"]):
            self._plant_deletion(*self._new_path(name), at)
        for command, at in self._sampled(corpus.COMMANDS, c["command"]):
            self._plant_command(command, at)
        n_open = c["error_open"]
        errors = self.rng.sample(corpus.ERRORS, n_open + c["error_resolved"])
        for error, at in zip(errors[:n_open], self.positions(n_open), strict=True):
            self._plant_open_error(error, at)
        for error, at in zip(errors[n_open:], self.positions(c["error_resolved"]), strict=True):
            self._plant_resolved_error(error, at)
        n_superseded = max(1, round(c["decision"] / 4)) if c["decision"] >= 2 else 0
        for i, (topic, at) in enumerate(self._sampled(corpus.DECISION_TOPICS, c["decision"])):
            first, second = (self._option(o) for o in self.rng.sample(topic, 2))
            if i < n_superseded:
                # A decision is revisited after some work, not right after it was made.
                self._plant_superseded(first, second, max(at, _BANDS[1][0]))
            else:
                self._plant_decision(first, at)
        n_done = max(1, round(c["todo"] / 5)) if c["todo"] >= 2 else 0
        for i, (todo, at) in enumerate(self._sampled(corpus.TODOS, c["todo"])):
            self._plant_todo(todo, max(at, _BANDS[1][0]) if i < n_done else at, done=i < n_done)
        for value, at in self._sampled(corpus.CHANGED_VALUES, c["changed_value"]):
            self._plant_changed_value(value, max(at, _BANDS[1][0]))
        users = sorted(
            self.rng.sample(corpus.USER_IDENTIFIERS, len(corpus.USER_IDENTIFIERS)),
            # The ticket, when there is one, belongs in the first message, as users do.
            key=lambda t: t.probe != "$ticket",
        )
        for kind, at in zip(self.identifier_kinds, self.positions(c["identifier"]), strict=True):
            if kind == "user":
                self._plant_user_identifier(users.pop(0), at)
            elif kind == "found":
                self._plant_found_identifier(at)
            else:
                self._plant_buried_identifier(at)
        return self.events

    def _sampled(self, pool: Sequence[T], n: int) -> list[tuple[T, float]]:
        return list(zip(self.rng.sample(pool, n), self.positions(n), strict=True))

    def _new_path(self, name: str) -> tuple[str, str]:
        folder = self.rng.choice((f"src/{self.w.pkg}", f"src/{self.w.pkg}", "scripts", "tests"))
        return folder, f"test_{name}.py" if folder == "tests" else f"{name}.py"

    # -- one method per kind of fact --

    def _plant_constraint(self, template: corpus.ConstraintTemplate, at: float) -> None:
        slots = {
            **self.slots(),
            "n": str(self.rng.randint(3, 12)),
            "pyver": self.rng.choice(("3.8", "3.9", "3.10")),
            "lines": self.rng.choice(("300", "400", "500", "600")),
            "env": f"{self.w.pkg.upper()}_{self.rng.choice(('API_URL', 'DB_DSN', 'REGION'))}",
            "dep": self.rng.choice(("httpx", "pydantic", "click", "jinja2", "pyyaml")),
        }
        cued = self.cue("constraint")
        text = fill(template.cued if cued else template.plain, slots)
        fact = self.new("constraint", [fill(p, slots) for p in template.probe], text, cued=cued)
        if at < _BANDS[0][1] and self.rng.random() < 0.6:
            self.opening_rules.append((text, fact))
            return
        prefix = "" if cued else self.rng.choice(corpus.USER_INTERRUPT_PREFIXES)
        self.at(at, partial(self.s.user, prefix + text, [fact]))

    def _plant_read(self, module: _Module, at: float) -> None:
        path = module.source.path
        cued = self.cue("file_read")
        note = fill(
            self.rng.choice(corpus.FILE_CUED["file_read"]), {"path": path, "noun": module.noun}
        )
        fact = self.new("file_read", [path], note if cued else f"read_file {path}", cued=cued)

        def run() -> None:
            calls = [_Call("read_file", {"path": path}, numbered(module.source.text), (fact,))]
            if self.rng.random() < 0.4:
                calls.insert(self.rng.randrange(2), self.fillers.read_call())
            prose = note if cued else self.rng.choice(corpus.FILE_PLAIN["file_read"])
            self.s.turn(prose, calls, carries=[fact] if cued else [])

        self.at(at, run)

    def _plant_edit(self, module: _Module, at: float, *, in_tests: bool) -> None:
        path = module.tests.path if in_tests else module.source.path
        cued = self.cue("file_modified")
        what = self.rng.choice(corpus.FILE_EDIT_PURPOSES)
        note = fill(
            self.rng.choice(corpus.FILE_CUED["file_modified"]), {"path": path, "what": what}
        )
        fact = self.new("file_modified", [path], note if cued else f"edit_file {path}", cued=cued)

        def run() -> None:
            source = module.tests if in_tests else module.source
            read = _Call("read_file", {"path": path}, numbered(source.text), (fact,))
            self.s.turn(self.fillers.prose(corpus.PROSE_BEFORE_READ, p=0.4), [read])
            old, new = _pick_edit(self.rng, source.text)
            self.w.replace_source(path, source.text.replace(old, new, 1))
            result = self.rng.choice((f"The file {path} has been updated.", "Applied 1 edit."))
            edit = _Call("edit_file", {"path": path, "old": old, "new": new}, result, (fact,))
            edit.output_carries = _if_in(fact, result)
            prose = note if cued else self.rng.choice(corpus.FILE_PLAIN["file_modified"])
            self.s.turn(prose, [edit], carries=[fact] if cued else [])
            if self.rng.random() < 0.5:
                # Its own tests, as an agent would run them. When the fact *is* the test file,
                # the command and perhaps the log name it, and so carry the fact too.
                tests = self.fillers.pytest_call([module])
                tests.carries = _if_in(fact, json.dumps(tests.args))
                tests.output_carries = _if_in(fact, tests.output)
                self.s.turn("", [tests])

        self.at(at, run)

    def _plant_new_file(self, folder: str, base: str, at: float) -> None:
        path = f"{folder}/{base}"
        stem = base.removesuffix(".py").removeprefix("test_")
        what = f"the {stem.replace('_', ' ')} {'tests' if base.startswith('test_') else 'logic'}"
        cued = self.cue("file_created")
        note = fill(self.rng.choice(corpus.FILE_CUED["file_created"]), {"path": path, "what": what})
        fact = self.new("file_created", [path], note if cued else f"write_file {path}", cued=cued)

        def run() -> None:
            content = self._new_file_content(path, base)
            result = f"File created successfully at: {path}"
            write = _Call(
                "write_file", {"path": path, "content": content}, result, (fact,), (fact,)
            )
            prose = note if cued else self.rng.choice(corpus.FILE_PLAIN["file_created"])
            self.s.turn(prose, [write], carries=[fact] if cued else [])
            self.w.extra_entries.setdefault(folder, []).append(base)

        self.at(at, run)

    def _new_file_content(self, path: str, base: str) -> str:
        m = self.rng.choice(self.w.fillers)
        stem = base.removesuffix(".py").removeprefix("test_")
        functions = [
            self.w.funcs.take([f"{v}_{stem}" for v in corpus.VERBS])
            for _ in range(self.rng.randint(2, 4))
        ]
        f1, f2 = self.rng.sample(corpus.FIELDS, 2)
        if base.startswith("test_"):
            return tests_for_module(
                self.rng, path=path, pkg=self.w.pkg, module=stem, noun=m.noun,
                functions=functions, fields=(f1, f2), per_function=2,
            ).text  # fmt: skip
        return python_module(
            self.rng, path=path, pkg=self.w.pkg, noun=m.noun, functions=functions, imports=[],
            fields=(f1, f2), table=self.rng.choice(self.w.domain.tables), const="LIMIT",
        ).text  # fmt: skip

    def _plant_deletion(self, folder: str, base: str, at: float) -> None:
        path = f"{folder}/{base}"
        cued = self.cue("file_deleted")
        note = fill(self.rng.choice(corpus.FILE_CUED["file_deleted"]), {"path": path})
        fact = self.new("file_deleted", [path], note if cued else f"delete_file {path}", cued=cued)

        def run() -> None:
            stem = base.removesuffix(".py")
            check = fill(self.rng.choice(corpus.PROSE_BEFORE_DELETE), {"stem": stem})
            pattern = {"pattern": f"import {stem}|from .{stem}", "path": "."}
            self.s.turn(check, [_Call("grep", pattern, "No matches found.")])
            delete = _Call("delete_file", {"path": path}, f"Deleted {path}", (fact,), (fact,))
            prose = note if cued else self.rng.choice(corpus.FILE_PLAIN["file_deleted"])
            self.s.turn(prose, [delete], carries=[fact] if cued else [])
            self.w.gone.append(path)

        self.at(at, run)

    def _plant_command(self, template: corpus.CommandTemplate, at: float) -> None:
        m = self.rng.choice(self.w.fillers)
        f1, f2 = self.rng.sample(corpus.FIELDS, 2)
        slots = {
            **self.slots(),
            "test": m.tests.path,
            "kexpr": f"{self.rng.choice(m.source.functions)} and not slow",
            "module": m.name,
            "tool": self.rng.choice(corpus.COMMAND_TOOLS),
            "date": f"2024-0{self.rng.randint(1, 5)}-{self.rng.randint(10, 28)}",
            "svc": self.rng.choice(corpus.COMMAND_SERVICES),
            "target": self.rng.choice(corpus.COMMAND_TARGETS),
            "script": f"{self.rng.choice(('backfill', 'repair', 'export'))}_{m.noun}_totals",
            "n": str(self.rng.choice((50, 200, 1000))),
            "stashmsg": self.rng.choice(corpus.STASH_MESSAGES),
            "toxenv": self.rng.choice(corpus.COMMAND_TOXENVS),
            "table": self.rng.choice(self.w.domain.tables),
            "f1": f1,
            "f2": f2,
            "branch": self.w.branch,
        }
        command = fill(template.command, slots)
        cued = self.cue("command")
        note = fill(self.rng.choice(corpus.COMMAND_CUED), {"command": command})
        fact = self.new("command", [command], note if cued else command, cued=cued)

        def run() -> None:
            if template.output == "pytest_quiet":
                output = pytest_log(self.rng, pkg=self.w.pkg, files=[m.tests], style="quiet")
            elif template.output == "pytest_durations":
                output = pytest_log(self.rng, pkg=self.w.pkg, files=[m.tests], durations=5)
            else:
                output = command_output(self.rng, template.output, slots)
            prose = note if cued else self.rng.choice(corpus.COMMAND_PLAIN)
            call = _Call("bash", {"command": command}, output, (fact,))
            self.s.turn(prose, [call], carries=[fact] if cued else [])

        self.at(at, run)

    def _failure(self, template: corpus.ErrorTemplate, module: _Module) -> Failure:
        """An error from `template`, raised in `module` and failing one of its tests."""
        noun = module.noun
        slots = {
            **self.slots(),
            "key": self.rng.choice(corpus.ERROR_KEYS),
            "attr": self.rng.choice(corpus.ERROR_ATTRS),
            "func": self.rng.choice(module.source.functions),
            "kw": self.rng.choice(corpus.ERROR_KWARGS),
            "lit": self.rng.choice(corpus.ERROR_LITERALS),
            "field": self.rng.choice(corpus.FIELDS),
            "rtable": f"{noun}_archive_{self.rng.randint(2, 9)}",
            "rmod": self.rng.choice(corpus.ERROR_MODULES),
            "module": module.name,
            "rpath": f"/var/lib/{self.w.pkg}/spool/{hex_id(self.rng, 8)}.json",
            "hexbyte": self.rng.choice(corpus.ERROR_HEXBYTES),
            "pos": str(self.rng.randint(10, 4000)),
            "got": str(self.rng.randint(1000, 4999)),
            "want": str(self.rng.randint(5000, 9999)),
            "Cls": camel(noun),
        }
        if "$rname" in template.line:
            slots["rname"] = self.w.funcs.take([f"{v}_{noun}_v2" for v in corpus.VERBS])
        return Failure(
            test_path=module.tests.path,
            test_name=self.rng.choice(module.tests.tests),
            module_path=module.source.path,
            function=slots["func"],
            raising=fill(template.raising, slots),
            error_line=fill(template.line, slots),
            probe=fill(template.probe, slots),
        )

    def _plant_open_error(self, template: corpus.ErrorTemplate, at: float) -> None:
        module = self.rng.choice(self.w.fillers)
        failure = self._failure(template, module)
        via_script = self.rng.random() < 0.4
        script = f"sync_{module.noun}s"
        where = f"scripts/{script}.py" if via_script else failure.test_name
        cued = self.cue("error_open")
        reaction = fill(
            self.pick(cued, corpus.ERROR_OPEN_CUED, corpus.ERROR_OPEN_PLAIN),
            {"probe": failure.probe, "test": where},
        )
        text = reaction if cued else failure.error_line
        fact = self.new("error_open", [failure.probe], text, cued=cued)

        def run() -> None:
            if via_script:
                output = script_traceback(
                    self.rng, pkg=self.w.pkg, script=script, module_path=module.source.path,
                    function=failure.function, raising=failure.raising,
                    error_line=failure.error_line, log_lines=max(2, round(8 * self.w.scale)),
                )  # fmt: skip
                command = f"python scripts/{script}.py --source fixtures/{module.noun}s.jsonl"
            else:
                others = self.rng.sample([m for m in self.w.fillers if m is not module], 2)
                files = [m.tests for m in others] + [module.tests]
                style = self.rng.choice(("quiet", "default"))
                output = pytest_log(
                    self.rng, pkg=self.w.pkg, files=files, failure=failure, style=style
                )
                flag = "-q " if style == "quiet" else ""
                command = f"pytest {flag}" + " ".join(x.path for x in files)
            call = _Call("bash", {"command": command}, output, (), (fact,), exit_code=1)
            self.s.turn(self.fillers.prose(corpus.PROSE_BEFORE_TESTS, p=0.4), [call])
            self.s.queue(reaction, [fact] if cued else [])

        self.at(at, run)

    def _plant_resolved_error(self, template: corpus.ErrorTemplate, at: float) -> None:
        module = self.rng.choice(self.w.fillers)
        failure = self._failure(template, module)
        # A fixed error is reported by its fix, never by a note: it carries no cue.
        fact = self.new("error_resolved", [failure.probe], failure.error_line, required=False)

        def run() -> None:
            command = f"pytest {module.tests.path} -q"
            failing = pytest_log(
                self.rng, pkg=self.w.pkg, files=[module.tests], failure=failure, style="quiet"
            )
            call = _Call("bash", {"command": command}, failing, (), (fact,), exit_code=1)
            self.s.turn(self.fillers.prose(corpus.PROSE_BEFORE_TESTS, p=0.4), [call])
            slots = {"test": failure.test_name, "func": failure.function}
            diagnosis = fill(self.rng.choice(corpus.ERROR_DIAGNOSIS), slots)
            self.s.turn(diagnosis, [self.fillers.edit_call(module)])
            passing = pytest_log(self.rng, pkg=self.w.pkg, files=[module.tests], style="quiet")
            self.s.turn("", [_Call("bash", {"command": command}, passing)])
            if self.rng.random() < 0.6:
                self.s.queue(fill(self.rng.choice(corpus.ERROR_FIXED), slots))

        self.at(at, run)

    def _option(self, option: corpus.DecisionOption) -> corpus.DecisionOption:
        slots = self.slots()
        return corpus.DecisionOption(
            fill(option.choice, slots), fill(option.probe, slots), fill(option.reason, slots)
        )

    def _plant_decision(self, option: corpus.DecisionOption, at: float) -> None:
        cued = self.cue("decision")
        words = {"choice": option.choice, "reason": option.reason}
        text = fill(self.pick(cued, corpus.DECISION_CUED, corpus.DECISION_PLAIN), words)
        fact = self.new("decision", [option.probe], text, cued=cued)

        def run() -> None:
            observation = fill(self.rng.choice(corpus.PROSE_OBSERVATIONS), self.slots())
            self.s.queue(f"{observation} {text}", [fact])

        self.at(at, run, words_only=True)

    def _plant_superseded(
        self, old: corpus.DecisionOption, new: corpus.DecisionOption, at: float
    ) -> None:
        cued = self.cue("decision")
        first = fill(
            self.pick(cued, corpus.DECISION_CUED, corpus.DECISION_PLAIN),
            {"choice": old.choice, "reason": old.reason},
        )
        words = {
            "new": new.choice,
            "old": old.probe,
            "reason": new.reason,
            "Reason": new.reason[0].upper() + new.reason[1:],
        }
        by_user = self.rng.random() < 0.5
        if by_user:
            forms = (corpus.USER_OVERRIDE_CUED, corpus.USER_OVERRIDE_PLAIN)
        else:
            forms = (corpus.SUPERSEDE_CUED, corpus.SUPERSEDE_PLAIN)
        text = fill(self.pick(cued, *forms), words)
        fact = self.new("decision", [new.probe], text, stale=(old.probe,), cued=cued)

        def revise() -> None:
            if by_user:
                self.s.user(text, [fact], _stale_in(fact, text))
                self.s.pending_ack = False
                self.s.queue(fill(self.rng.choice(corpus.USER_OVERRIDE_ACK), words), [fact])
            else:
                self.s.queue(text, [fact], _stale_in(fact, text))

        decide = partial(self.s.queue, first, (), [fact])
        self.at(max(0.02, at - self.rng.uniform(0.2, 0.35)), decide, words_only=True)
        self.at(at, revise, words_only=not by_user)

    def _plant_todo(self, template: corpus.TodoTemplate, at: float, *, done: bool) -> None:
        noun = self.rng.choice(self.w.domain.nouns)
        used = template.task + template.done + "".join(template.probe)
        slots = {
            **self.slots(),
            "noun": noun,
            "table": self.rng.choice(self.w.domain.tables),
            "column": self.rng.choice(corpus.FIELDS),
            "rows": self.rng.choice(("10k", "50k", "250k")),
            "svc": self.rng.choice(("geocoding", "email", "sms", "search-api")),
        }
        # Reserved names are drawn only when the template uses them: each draw removes the
        # name, and anything overlapping it, from every later pool.
        if "$rfunc" in used:
            suffixes = ("remote", "upstream", "batch")
            slots["rfunc"] = self.w.funcs.take(
                [f"{v}_{noun}_{x}" for v in corpus.VERBS for x in suffixes]
            )
        if "$flag" in used:
            slots["flag"] = self.w.misc.take(corpus.TODO_FLAGS)
        if "$renv" in used:
            slots["renv"] = self.w.misc.take(
                [f"{self.w.pkg.upper()}_{x}" for x in corpus.TODO_ENVS]
            )
        if "$metric" in used:
            slots["metric"] = self.w.misc.take([f"{noun}_{x}_total" for x in corpus.TODO_METRICS])
        cued = self.cue("todo")
        text = fill(
            self.pick(cued, corpus.TODO_CUED, corpus.TODO_PLAIN),
            {"task": fill(template.task, slots)},
        )
        probe = [fill(p, slots) for p in template.probe]
        fact = self.new("todo", probe, text, cued=cued, required=not done)

        def plant() -> None:
            if self.rng.random() < 0.4:
                status = fill(self.rng.choice(corpus.PROSE_STATUS), self.slots())
                self.s.queue(f"{status} {text}", [fact])
            else:
                self.s.queue(text, [fact])

        if done:
            finish = partial(self.s.queue, fill(template.done, slots), [fact])
            self.at(max(0.02, at - self.rng.uniform(0.15, 0.3)), plant, words_only=True)
            self.at(at, finish, words_only=True)
        else:
            self.at(at, plant, words_only=True)

    def _plant_changed_value(self, template: corpus.ValueTemplate, at: float) -> None:
        while True:
            old_v, new_v = self.rng.sample(template.values, 2)
            old, new = fill(template.unit, {"v": old_v}), fill(template.unit, {"v": new_v})
            # "5 minutes" inside "15 minutes" would make the old value look like the new one.
            if old not in new and new not in old:
                break
        cued = self.cue("changed_value")
        words = {
            "key": template.key,
            "old": old,
            "new": new,
            "reason": self.rng.choice(corpus.VALUE_CHANGE_REASONS),
        }
        first = fill(self.pick(cued, corpus.VALUE_SET_CUED, corpus.VALUE_SET_PLAIN), words)
        text = fill(self.pick(cued, corpus.VALUE_CHANGE_CUED, corpus.VALUE_CHANGE_PLAIN), words)
        fact = self.new("changed_value", [template.key, new], text, stale=(old,), cued=cued)
        # Users often state values up front, in the task itself.
        if self.rng.random() < 0.35:
            self.opening_notes.append((first, fact))
        else:
            self.at(self.rng.uniform(0.05, at - 0.2), partial(self.s.user, first, (), [fact]))
        self.at(at, partial(self.s.user, text, [fact], _stale_in(fact, text)))

    def _plant_user_identifier(self, template: corpus.IdentifierTemplate, at: float) -> None:
        rng = self.rng
        slots = {
            "ticket": f"{rng.choice(corpus.TICKET_PREFIXES)}-{rng.randint(1000, 9999)}",
            "port": str(rng.randint(18000, 28999)),
            "pindep": rng.choice(corpus.PINNED_DEPS),
            "pinver": f"{rng.randint(1, 5)}.{rng.randint(0, 20)}.{rng.randint(1, 60)}",
            "tenant": f"tnt_{hex_id(rng, 8)}",
            "release": f"2024.{rng.randint(3, 11)}",
        }
        cued = self.cue("identifier")
        text = fill(template.cued if cued else template.plain, slots)
        fact = self.new("identifier", [fill(template.probe, slots)], text, cued=cued)
        if template.probe == "$ticket" or at < _BANDS[0][0] + 0.05:
            self.opening_notes.append((text, fact))
        else:
            self.at(at, partial(self.s.user, text, [fact]))

    def _plant_found_identifier(self, at: float) -> None:
        ident = f"acct_{hex_id(self.rng, 12)}"
        cued = self.cue("identifier")
        forms = (corpus.FOUND_IDENTIFIER_CUED, corpus.FOUND_IDENTIFIER_PLAIN)
        text = fill(self.pick(cued, *forms), {"ident": ident})
        fact = self.new("identifier", [ident], text, cued=cued)

        def run() -> None:
            call = self.fillers.api_call(record_extra={"account_id": ident, "sandbox": True})
            call.output_carries = (fact,)
            self.s.turn(self.fillers.prose(corpus.PROSE_BEFORE_API, p=0.5), [call])
            self.s.queue(text, [fact])

        self.at(at, run)

    def _plant_buried_identifier(self, at: float) -> None:
        key, prefix = self.rng.choice(corpus.BURIED_KEYS)
        ident = f"{prefix}_{hex_id(self.rng, 16)}"
        fact = self.new("identifier", [ident], f'"{key}": "{ident}"', buried=True)

        def run() -> None:
            call = self.fillers.api_call(extra={key: ident})
            call.output_carries = (fact,)
            self.s.turn(self.fillers.prose(corpus.PROSE_BEFORE_API, p=0.5), [call])

        self.at(at, run)

    # -- the first user message --

    def write_opening(self) -> None:
        slots = self.slots()
        parts = [fill(self.rng.choice(corpus.TASKS), slots)]
        if self.rng.random() < 0.7:
            parts[0] += " " + fill(self.rng.choice(corpus.TASK_CONTEXT), slots)
        if self.opening_rules:
            rules = "\n".join(f"- {text}" for text, _ in self.opening_rules)
            parts.append(f"{self.rng.choice(corpus.RULE_HEADERS)}\n{rules}")
        if self.opening_notes:
            parts.append(" ".join(text for text, _ in self.opening_notes))
        notes = [f for _, f in self.opening_notes]
        carries = [f for _, f in self.opening_rules] + [f for f in notes if not f.stale]
        stale = [f for f in notes if f.stale]
        self.s.add({"role": "user", "content": "\n\n".join(parts)}, carries, stale)


def _if_in(fact: _Planted, text: str) -> tuple[_Planted, ...]:
    """`(fact,)` if `text` shows the fact's whole probe, for output whose wording varies."""
    folded = text.casefold()
    return (fact,) if all(p.casefold() in folded for p in fact.probe) else ()


def _stale_in(fact: _Planted, text: str) -> list[_Planted]:
    """`[fact]` if `text` repeats a superseded form ("45 instead of 30"), else nothing."""
    folded = text.casefold()
    return [fact] if any(s.casefold() in folded for s in fact.stale) else []


# --- the honesty check -----------------------------------------------------------------------


def _check_probes(facts: Sequence[_Planted], messages: Sequence[dict[str, Any]]) -> None:
    """Raise unless every probe occurs where its fact was planted and nowhere else.

    Checked both on the message text (what `text_of_payload` yields) and on the rendered
    JSON (what a caller may score instead), case-insensitively, like the scorer. A probe
    substring may also occur where the superseded form was planted ("request timeout" is in
    the message that set the old value), but never anywhere else.
    """
    texts = [(text_of_message(m) + "\n" + json.dumps(m)).casefold() for m in messages]
    ambient = json.dumps(TOOLS).casefold() + "gpt-4o"
    for fact in facts:
        for probe in (*fact.probe, *fact.stale):
            if any(bad in probe for bad in ('"', "\\", "\n")) or not probe.isascii():
                raise ProbeLeakError(f"{fact.id}: {probe!r} would not survive JSON escaping")
        planted = set(fact.carriers)
        allowed = planted | set(fact.stale_carriers)
        if not planted:
            raise ProbeLeakError(f"{fact.id} was never planted")
        for needle in (p.casefold() for p in fact.probe):
            _check_needle(fact, needle, planted, allowed, texts, ambient)
        for needle in (s.casefold() for s in fact.stale):
            _check_needle(fact, needle, set(fact.stale_carriers), allowed, texts, ambient)


def _check_needle(
    fact: _Planted,
    needle: str,
    planted: set[int],
    allowed: set[int],
    texts: Sequence[str],
    ambient: str,
) -> None:
    missing = [i for i in sorted(planted) if needle not in texts[i]]
    if missing:
        raise ProbeLeakError(f"{fact.id}: {needle!r} missing from message(s) {missing}")
    leaks = [i for i, t in enumerate(texts) if i not in allowed and needle in t]
    if leaks:
        raise ProbeLeakError(f"{fact.id}: {needle!r} also occurs in message(s) {leaks}")
    if needle in ambient:
        raise ProbeLeakError(f"{fact.id}: {needle!r} also occurs in the tool schemas")
