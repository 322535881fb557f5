"""The ruler: planted facts, and which of them survive in a compacted transcript.

A `Fact` is something a compaction must not lose (a user constraint, a file the agent
modified, an open error ...) together with its *probe*: substrings whose presence proves the
fact survived. `score` checks probes against the text of a compacted transcript and reports
survival overall, per category and per depth; `text_of_payload` turns an OpenAI Chat
Completions payload into the text to score.

This module must never know how a transcript was compacted, and never look at anything but
the text it is given: the ruler stays independent of the thing it measures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeVar

FactCategory: TypeAlias = Literal[
    "constraint",
    "file_modified",
    "file_created",
    "file_deleted",
    "file_read",
    "command",
    "error_open",
    "error_resolved",
    "decision",
    "todo",
    "changed_value",
    "identifier",
    "test_status",
    "last_message",
]
Depth: TypeAlias = Literal["early", "middle", "late"]
K = TypeVar("K", bound=str)

CATEGORIES: tuple[FactCategory, ...] = (
    "constraint",
    "file_modified",
    "file_created",
    "file_deleted",
    "file_read",
    "command",
    "error_open",
    "error_resolved",
    "decision",
    "todo",
    "changed_value",
    "identifier",
    "test_status",
    "last_message",
)
DEPTHS: tuple[Depth, ...] = ("early", "middle", "late")

#: Categories the retention benchmark requires at 100%: losing any of these breaks the work.
REQUIRED_CATEGORIES: frozenset[FactCategory] = frozenset(
    {
        "constraint",
        "file_modified",
        "decision",
        "todo",
        "error_open",
        "changed_value",
        "test_status",
        "last_message",
    }
)

#: Words that flag a fact explicitly. A "cued" fact is planted with one of them.
CUE_WORDS: tuple[str, ...] = ("TODO:", "Decision:", "Constraint:", "NOTE:")


@dataclass(frozen=True)
class Fact:
    """One planted fact and the probe that proves it survived.

    `probe` substrings must all appear (case-insensitively) for the fact to count as kept;
    a probe of several lines is several substrings, one per line (a summary may rejoin a
    tool's lines: `Passed: 52` / `Failed: 1` as "Passed: 52, Failed: 1"). `stale` holds
    superseded forms (an old value, an abandoned decision) that must not be
    presented as current. `required` is false for facts whose loss is harmless — an error
    that was fixed later, a to-do that was done — they are scored but kept out of the rates.
    `planted_in` lists the indices of the messages that carry the current form.
    """

    id: str
    category: FactCategory
    text: str
    probe: tuple[str, ...]
    depth: Depth
    cued: bool
    critical: bool
    stale: tuple[str, ...] = ()
    buried: bool = False
    required: bool = True
    planted_in: tuple[int, ...] = ()


@dataclass(frozen=True)
class FactResult:
    """How one fact fared: kept or not, which probe strings were missing, stale or not."""

    fact: Fact
    survived: bool
    missing: tuple[str, ...]
    stale_as_current: bool


@dataclass(frozen=True)
class Rate:
    """`kept` of `total` facts survived. An empty group counts as fully kept."""

    kept: int
    total: int

    @property
    def value(self) -> float:
        return 1.0 if self.total == 0 else self.kept / self.total


@dataclass(frozen=True)
class Score:
    """Survival of a set of facts in one compacted text.

    Rates (`overall`, `by_category`, `by_depth`) count only required facts; the others
    (resolved errors, finished to-dos) are reported in `optional_by_category`.
    """

    results: tuple[FactResult, ...]
    overall: Rate
    by_category: Mapping[FactCategory, Rate]
    by_depth: Mapping[Depth, Rate]
    optional_by_category: Mapping[FactCategory, Rate]

    @property
    def survival_rate(self) -> float:
        return self.overall.value

    @property
    def lost(self) -> list[Fact]:
        """Required facts that did not survive."""
        return [r.fact for r in self.results if r.fact.required and not r.survived]

    @property
    def critical_lost(self) -> list[Fact]:
        """Lost facts the benchmark requires at 100%."""
        return [f for f in self.lost if f.critical]

    @property
    def stale_as_current(self) -> list[Fact]:
        """Facts whose superseded form survived while the current one did not."""
        return [r.fact for r in self.results if r.stale_as_current]


def needles(form: str) -> tuple[str, ...]:
    """The substrings that show `form` (a probe or a stale form): its lines, case-folded and
    stripped, without empty ones."""
    return tuple(line for line in (x.strip() for x in form.casefold().split("\n")) if line)


def shows(form: str, folded: str) -> bool:
    """Whether case-folded `folded` holds every line of `form`."""
    return all(n in folded for n in needles(form))


def check_fact(fact: Fact, text: str) -> FactResult:
    """Score one fact against `text`."""
    folded = text.casefold()
    missing = tuple(p for p in fact.probe if not shows(p, folded))
    survived = not missing
    stale_shown = any(shows(s, folded) for s in fact.stale)
    return FactResult(
        fact=fact,
        survived=survived,
        missing=missing,
        stale_as_current=stale_shown and not survived,
    )


def score(facts: Sequence[Fact], compacted_text: str) -> Score:
    """Check every fact's probe against `compacted_text` (JSON of a transcript, or its text)."""
    folded = compacted_text.casefold()
    results = tuple(check_fact(f, folded) for f in facts)
    required = [r for r in results if r.fact.required]
    optional = [r for r in results if not r.fact.required]
    return Score(
        results=results,
        overall=_rate(required),
        by_category=_grouped(required, lambda r: r.fact.category, CATEGORIES),
        by_depth=_grouped(required, lambda r: r.fact.depth, DEPTHS),
        optional_by_category=_grouped(optional, lambda r: r.fact.category, CATEGORIES),
    )


def _rate(results: Iterable[FactResult]) -> Rate:
    listed = list(results)
    return Rate(kept=sum(r.survived for r in listed), total=len(listed))


def _grouped(
    results: Sequence[FactResult], key: Callable[[FactResult], K], order: Sequence[K]
) -> dict[K, Rate]:
    # Keys come out in the canonical order and only groups that have facts appear, so two
    # scores of the same facts always print identically.
    present = {key(r) for r in results}
    return {k: _rate(r for r in results if key(r) == k) for k in order if k in present}


def text_of_message(message: Mapping[str, Any]) -> str:
    """All text the model sees in one OpenAI chat message: content parts and tool calls."""
    pieces: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        pieces.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text")
                if isinstance(text, str):
                    pieces.append(text)
            elif isinstance(part, str):
                pieces.append(part)
    refusal = message.get("refusal")
    if isinstance(refusal, str):
        pieces.append(refusal)
    calls: list[Any] = list(message.get("tool_calls") or [])
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping):
        calls.append({"function": legacy})
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            pieces.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(pieces)


def text_of_payload(payload: Mapping[str, Any]) -> str:
    """All message text of an OpenAI Chat Completions request, in order, for `score`."""
    messages = payload.get("messages") or []
    return "\n".join(text_of_message(m) for m in messages if isinstance(m, Mapping))
