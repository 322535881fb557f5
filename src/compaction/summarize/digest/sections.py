"""The digest's sections: one class per fact category, each owning how it reads events,
merges with an earlier state, renders its items and parses them back.

A section's state is a plain mutable object; `items` renders it as `Item`s, each with a
tier (0 is kept first), a rank within the tier (higher first: newer, more telling) and its
forms, fullest first, so the ledger can fit the whole digest into any room by priority.
Every form of an item must parse back to the same fact (`parse`), so a digest of a digest
is a merge, not a loss. After a merge each section may `settle` by what the later span's
other sections read (decisions by the later span's subjects); no section reads another's
state otherwise.

Sections must never call a model, count tokens or read a wire format; deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Generic, TypeVar

from compaction._textcache import text_cache
from compaction.summarize import signals
from compaction.summarize.digest.events import (
    NO_OUTPUT,
    Asked,
    AssistantSaid,
    CodeWritten,
    CommandRan,
    Event,
    FileTouched,
    Finished,
    IdentifiersSeen,
    ImagesSeen,
    PlanStated,
    Reported,
    TodoChanged,
    TodoIdentified,
    TodosStated,
    ToolFinished,
    UseDenied,
    UserSaid,
    announces,
    telling_tokens,
)
from compaction.summarize.digest.format import indented
from compaction.summarize.tools import Todo

S = TypeVar("S")
V = TypeVar("V")


@dataclass(frozen=True)
class Item:
    """One rendered fact: `forms` fullest first (each a line starting `- `, continuation
    lines indented), `tier` 0 kept first, `rank` higher first within a tier."""

    tier: int
    rank: float
    forms: tuple[str, ...]
    #: How many of the fullest forms are grown to last, once every tier has its room: those
    #: that only add what the item repeats of others (a framework's wrapping around every
    #: user turn), or detail below any other item's line (what a fixed error printed under
    #: its line).
    deferred: int = 0


class Section(Generic[S]):
    """Base of every section: a heading, a state, and the five operations."""

    name: ClassVar[str]
    heading: ClassVar[str]
    # Other headings whose items this section also parses (what LLM summaries write).
    reads: ClassVar[tuple[str, ...]] = ()
    # The kinds of event `observe` reads (the ledger hands it no others).
    events: ClassVar[tuple[type, ...]] = ()
    # A fallback section is shown only when no other section has anything to show.
    fallback: ClassVar[bool] = False

    def new(self) -> S:
        raise NotImplementedError

    def observe(self, state: S, event: Event, seq: int) -> None:
        """Take in one event (`seq` counts events, for recency)."""

    def beside(self, state: S, event: Event) -> None:
        """Take in one event of a message the digest sits beside and does not replace (the
        user's task, kept verbatim): context, not a fact to record. Most sections need none."""

    def merge(self, earlier: S, later: S) -> S:
        raise NotImplementedError

    def settle(self, state: S, later: Mapping[str, Any]) -> None:
        """After a merge, adjust the merged `state` by what the later span's other sections
        read (`later`: their states by section name). Most sections need nothing."""

    def items(self, state: S) -> list[Item]:
        raise NotImplementedError

    def parse(self, state: S, item: str) -> None:
        """Read one rendered item (without its `- `) back into `state`."""


def _distinct(forms: Iterable[str]) -> tuple[str, ...]:
    """`forms`, fullest first, without a form equal to the one before it."""
    out: list[str] = []
    for form in forms:
        if not out or form != out[-1]:
            out.append(form)
    return tuple(out)


@text_cache()
def _tail(text: str, limit: int) -> str:
    """The end of `text` in at most `limit` characters, from a word's start."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    return cut.split(" ", 1)[1] if " " in cut else cut


def _clip_forms(text: str, *limits: int) -> tuple[str, ...]:
    """`text` clipped to each of `limits`, fullest first (each digest rendering asks again)."""
    if len(text) <= limits[-1]:
        return (text,)
    return _distinct(signals.clip(text, limit) for limit in limits)


_SENTENCE_STOP = re.compile(r"[.!?](?=\s)")


def _sentence_forms(text: str, *limits: int) -> tuple[str, ...]:
    """`text` clipped to each of `limits`, fullest first, between sentences where one ends
    in the last three quarters of the room: half a sentence can say the opposite of the
    whole ("X is out as well, …" without what replaced X)."""
    if len(text) <= limits[-1]:
        return (text,)
    forms = []
    for limit in limits:
        if len(text) <= limit:
            forms.append(text)
            continue
        ends = [m.end() for m in _SENTENCE_STOP.finditer(text, 0, limit - 4)]
        end = ends[-1] if ends else 0
        forms.append(text[:end] + " ..." if end >= limit // 4 else signals.clip(text, limit))
    return _distinct(forms)


# -- the user's words ----------------------------------------------------------------------


#: How many constraint sentences of a long message's middle its shortened form keeps.
_KEPT_CONSTRAINTS = 6
#: The least a cut takes out of the user's words (less, and its marker saves next to nothing).
_MIN_ELIDED = 40
#: How far a cut moves to fall between sentences rather than inside one.
_CUT_SLACK = 100
_SENTENCE_END = re.compile(r"[.!?:;]\s|\n")


def _head_end(text: str, cut: int) -> int:
    """Where a head cut at `cut` ends: the first sentence end after it, if one is near."""
    found = _SENTENCE_END.search(text, cut, cut + _CUT_SLACK)
    return found.start() + 1 if found is not None else cut


def _tail_start(text: str, cut: int) -> int:
    """Where a tail cut at `cut` starts: after the last sentence end before it, if one is
    near (the tail keeps its first sentence whole)."""
    ends = list(_SENTENCE_END.finditer(text, max(cut - _CUT_SLACK, 0), cut))
    return ends[-1].end() if ends else cut


_ELIDED = re.compile(r" ?\[…(\d+) chars elided(?:; (?:constraints )?kept: (.*?))?…\] ?", re.DOTALL)


def bounded_user_text(text: str, limit: int) -> str:
    """The user's words verbatim up to `limit` chars; longer ones keep head and tail, plus
    the sentences of the middle that state constraints, or name a file in a turn that sends
    the assistant elsewhere. Words this cut short already (read
    back from a digest) are cut around the cut they have: what it kept stays, and nothing is
    lost to a second cut at the same limit."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 20, 20)
    kept_before: list[str] = []
    earlier = _ELIDED.search(text)
    if earlier is None:
        elided = 0
        end, start = _head_end(text, half), _tail_start(text, len(text) - half)
        if start <= end:
            end, start = half, len(text) - half
        if start - end < _MIN_ELIDED:
            return text  # the marker would take about as much as it saves
        head, cut_head, cut_tail, tail = text[:end], text[end:start], "", text[start:]
    else:
        before, after = text[: earlier.start()], text[earlier.end() :]
        if len(before) <= half + _CUT_SLACK and len(after) <= half + _CUT_SLACK:
            return text
        elided = int(earlier[1])
        kept_before = earlier[2].split(" … ") if earlier[2] else []
        end = _head_end(before, half) if len(before) > half + _CUT_SLACK else len(before)
        start = _tail_start(after, len(after) - half) if len(after) > half + _CUT_SLACK else 0
        head, cut_head = before[:end], before[end:]
        cut_tail, tail = after[:start], after[start:]
    room = _KEPT_CONSTRAINTS - len(kept_before)
    # A turn that sends the assistant elsewhere keeps the sentences naming where.
    redirect = _turns_away(text)
    found = [
        [s for s in signals.sentences(cut) if len(s) <= 300 and _worth_keeping(s, redirect)]
        for cut in (cut_head, cut_tail)
    ]
    kept = [*found[0][: max(room, 0)], *kept_before]
    kept += found[1][: max(_KEPT_CONSTRAINTS - len(kept), 0)]
    kept_text = " … ".join(kept)
    elided += len(cut_head) + len(cut_tail) - sum(len(k) for k in kept if k not in kept_before)
    if kept_text:
        return f"{head} […{elided} chars elided; kept: {kept_text}…] {tail}"
    return f"{head} […{elided} chars elided…] {tail}"


def _worth_keeping(sentence: str, redirect: bool) -> bool:
    """Whether a sentence of the user's cut from the middle of a long turn is kept: it
    states a constraint, changes a figure ("Let's go with 7 rather than 9."; cut, the value
    said before would read as standing), or, in a turn that sends the assistant elsewhere
    (`redirect`), names a file (where the work goes)."""
    if signals.is_constraint(sentence):
        return True
    if signals.has_digit(sentence) and _CHANGE_CUE.search(sentence.lower()):
        return True
    return redirect and bool(signals.paths_in(sentence))


#: Words a user says only to let the agent go on ("OK, keep going.", "Yes, carry on.").
_GO_ON_WORDS = frozenset({
    "ok", "okay", "yes", "yep", "yeah", "sure", "fine", "good", "great", "nice", "perfect",
    "right", "alright", "all", "sounds", "looks", "seems", "go", "goes", "going", "on",
    "ahead", "keep", "carry", "continue", "proceed", "please", "thanks", "thank", "you",
    "so", "far", "that", "this", "it", "with", "do", "the", "rest", "now", "and", "lgtm",
    "next", "working",
})  # fmt: skip
#: The tier of names (in code written, in outputs): after everything done and said.
_NAMES_TIER = 4
#: The tier of a user's turn that only lets the agent go on: kept after every fact.
_GO_ON_TIER = 5


def _acknowledges(text: str) -> bool:
    """Whether the user's message only lets the agent go on: a few words, all of them
    `_GO_ON_WORDS`."""
    words = re.findall(r"[a-z']+|\S", text.lower())
    return 0 < len(words) <= 12 and all(w in _GO_ON_WORDS or not w.isalpha() for w in words)


def _instructs(text: str) -> bool:
    """Whether the user's message reads as an instruction to keep: short, or stating a
    constraint in a sentence. A long paste (code, a log, a file) with neither can give room
    to the files and errors before it gives its head and tail."""
    if len(text) <= 300:
        return True
    return any(signals.is_constraint(s) for s in signals.sentences(text[:4000]))


#: A line in this many of the user's turns is their wrapping, not their words.
_REPEATS = 3


def _repeated_lines(texts: Iterable[str]) -> frozenset[str]:
    """Lines found in `_REPEATS` or more of `texts`."""
    counts: dict[str, int] = {}
    for text in texts:
        for line in {line.strip() for line in text.splitlines() if line.strip()}:
            counts[line] = counts.get(line, 0) + 1
    return frozenset(line for line, n in counts.items() if n >= _REPEATS)


#: A user-role turn this long made of nothing but lines `_REPEATS` or more turns repeat is
#: a harness's prompt, not the user's words ("Carry on." every turn is the user's).
_HARNESS_CHARS = 160


def _only(text: str, repeated: frozenset[str]) -> bool:
    """Whether every line of `text` is one of the `repeated` lines."""
    return all(line.strip() in repeated for line in text.splitlines() if line.strip())


def _without(text: str, repeated: frozenset[str]) -> str:
    """`text` without the `repeated` lines, marked where they went; `text` itself when they
    are all it has."""
    lines = text.strip().splitlines()
    own = [line for line in lines if line.strip() not in repeated]
    if len(own) == len(lines) or not any(line.strip() for line in own):
        return text
    return "\n".join(own).strip() + "\n[…]"


@dataclass
class UserWordsState:
    texts: list[tuple[int, str]] = field(default_factory=list)  # (seq, text)


class UserWords(Section[UserWordsState]):
    """What the user said, verbatim (long messages: head, tail and constraint sentences)."""

    name = "user"
    events = (UserSaid,)
    heading = "## What the user said (verbatim, oldest first)"

    def __init__(self, user_chars: int = 1200) -> None:
        self.user_chars = user_chars

    def new(self) -> UserWordsState:
        return UserWordsState()

    def observe(self, state: UserWordsState, event: Event, seq: int) -> None:
        if isinstance(event, UserSaid):
            state.texts.append((seq, event.text))

    def merge(self, earlier: UserWordsState, later: UserWordsState) -> UserWordsState:
        return UserWordsState([*earlier.texts, *later.texts])

    def items(self, state: UserWordsState) -> list[Item]:
        out = []
        repeated = _repeated_lines(text for _, text in state.texts)
        # The newest turn holding a repeated line keeps it in every form.
        latest = {
            line: index
            for index, (_, text) in enumerate(state.texts)
            for line in {line.strip() for line in text.splitlines()} & repeated
        }
        for index, (seq, text) in enumerate(state.texts):
            if len(text) >= _HARNESS_CHARS and _only(text, repeated):
                continue  # a harness's prompt before every step (OpenManus's next-step prompt)
            # Fuller than `user_chars` only when there is room for it; shorter forms give the
            # lines every turn repeats (a framework's wrapping) before the user's own words.
            own = _without(text, frozenset(line for line in repeated if latest[line] != index))
            wrapped = self._forms(text, [self.user_chars * 3, self.user_chars])
            shorter = self._forms(
                own, [self.user_chars, 600, 300, 160] if own != text else [600, 300, 160]
            )
            forms = _distinct((*wrapped, *shorter))
            deferred = len(wrapped) if own != text and len(forms) > len(wrapped) else 0
            tier = _GO_ON_TIER if _acknowledges(text) else 0 if _instructs(text) else 2
            out.append(Item(tier, seq, forms, deferred))
        return out

    @staticmethod
    def _forms(text: str, limits: Sequence[int]) -> tuple[str, ...]:
        return _distinct(
            "- " + bounded_user_text(text, limit).replace("\n", "\n  ") for limit in limits
        )

    def parse(self, state: UserWordsState, item: str) -> None:
        state.texts.append((len(state.texts), item.replace("\n  ", "\n")))


# -- values the user set -------------------------------------------------------------------

_CHANGE_CUE = signals.cue(
    r"\b(?:instead\s+of|rather\s+than|change|changed|switch|make\s+(?:it|that)|bump|no\s+longer|"
    r"actually|not\s+\S+\s+but|from\s+\S+(?:\s+\S+)?\s+to|increase|decrease|raise|lower|set|"
    r"halve|double|triple|reduce|cut|too\s+(?:big|small|high|low|long|short|large|many|few)|"
    r"wrong|incorrect|mistake|second\s+thought|should\s+have\s+been|not\s+right|isn't\s+right|"
    r"(?:did|does|do)\s+not\s+(?:like|work|hold|cope)|(?:didn't|doesn't|don't)\s+(?:like|work)|"
    r"bigger|smaller|higher|shorter|longer|fewer|more|less|settle\s+on|settled\s+on|"
    # second thoughts: "Thinking again: 28 at a time."
    r"think(?:ing)?\s+(?:again|about\s+it\s+(?:more|again))|on\s+reflection|come\s+to\s+think)\b"
)
_INSTEAD = re.compile(
    r"\b(?:make|set|change|switch|use|bump|raise|lower)\s+(?:it|that|this|them)\s+(?:to\s+)?"
    r"(?P<new>[^\s,;]+(?:\s+[A-Za-z%]+)?)\s+(?:instead\s+of|rather\s+than|not)\s+"
    r"(?P<old>[^\s,;.]+(?:\s+[A-Za-z%]+)?)",
    re.IGNORECASE,
)


_SPACES = re.compile(r"\s+")


# A sentence giving a value without naming what it is for: "Use 30 days", "Make it 12".
_BARE_VALUE = re.compile(
    r"^(?:please\s+|ok,?\s+|so\s+)?(?:use|take|make\s+it|go\s+with|set\s+it\s+to|switch\s+to|"
    r"(?:raise|lower|bring|bump|change|increase|decrease|reduce|cut|move)\s+it\s+(?:up\s+|down\s+)?to|"
    r"let's\s+(?:use|go\s+with)|we'll\s+use)\b",
    re.IGNORECASE,
)


# A sentence this short beside the one naming a setting gives its value ("Final value: 90 s.").
_BARE_WORDS = 5


def _norm(value: str) -> str:
    return _SPACES.sub(" ", value.strip(" .`'\"").lower())


# A number with its unit: `20 connections`, `1500ms`, `2.5 GiB`.
_MEASURE = re.compile(r"\b(\d[\d.,]*)\s*([A-Za-z%]{1,14})\b")
# What "make that" or "make it" turns the value last spoken of to ("make that 21 tries"), or
# a figure a sentence gives alone after its colon ("Thinking again: 28 at a time.").
_MADE_COUNT = re.compile(
    r"\bmake\s+(?:that|it)\s+(\d[\d.,]*\s*[A-Za-z%]{1,14})\b"
    r"|:\s*(\d[\d.,]*(?:\s+[A-Za-z%]{1,14})?)(?:\s+at\s+a\s+time|\s+per\s+\w+)?\s*[.!]?\s*$",
    re.IGNORECASE,
)


def _singular(unit: str) -> str:
    """A unit lower case and singular (`Connections` → `connection`); a unit of a letter or
    two is its own (`s`, `ms`)."""
    unit = unit.lower()
    return unit[:-1] if len(unit) > 3 and unit.endswith("s") else unit


@text_cache()
def _unit(value: str) -> str:
    """The unit of a measured value, singular and lower case (`20 Connections` →
    `connection`); empty for anything else."""
    match = _MEASURE.fullmatch(value.strip(" .`'\""))
    return _singular(match.group(2)) if match else ""


def _measures_in(sentence: str, unit: str) -> list[str]:
    """Values in `sentence` measured in `unit`, in order."""
    return [m.group(0) for m in _MEASURE.finditer(sentence) if _singular(m.group(2)) == unit]


#: Units of one kind: a value given in another unit of its kind is still that value.
_UNIT_KINDS = (
    frozenset({"ms", "millisecond", "s", "sec", "second", "min", "minute", "h", "hr", "hour",
               "d", "day", "week", "month", "year"}),
    frozenset({"b", "byte", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib"}),
)  # fmt: skip


def _kind(unit: str) -> frozenset[str]:
    """The units of `unit`'s kind (itself alone, for a unit of no known kind)."""
    return next((kind for kind in _UNIT_KINDS if unit in kind), frozenset({unit}))


def _measures_of_kind(sentence: str, unit: str) -> list[str]:
    """Values in `sentence` measured in a unit of `unit`'s kind, in order."""
    kind = _kind(unit)
    return [m.group(0) for m in _MEASURE.finditer(sentence) if _singular(m.group(2)) in kind]


@dataclass
class ValueRecord:
    value: str
    earlier: list[str] = field(default_factory=list)
    # The user's sentences about this value, in order, when a change could not be read with
    # certainty: the digest quotes them instead of stating a value.
    quotes: list[str] = field(default_factory=list)

    def copy(self) -> ValueRecord:
        return ValueRecord(self.value, list(self.earlier), list(self.quotes))


@dataclass
class ValuesState:
    values: dict[str, ValueRecord] = field(default_factory=dict)


class Values(Section[ValuesState]):
    """Values the user set, latest wins; a change that cannot be read with certainty is
    quoted in the user's own words, in order, never guessed."""

    name = "values"
    events = (UserSaid,)
    heading = "## Values the user set (latest wins)"

    def new(self) -> ValuesState:
        return ValuesState()

    def observe(self, state: ValuesState, event: Event, seq: int) -> None:
        if not isinstance(event, UserSaid):
            return
        said = signals.sentences(event.text)
        set_here: set[str] = set()  # values a sentence of this message set
        for n in range(len(said)):
            set_here |= self._sentence(state, said, n, set_here)

    def _set(self, state: ValuesState, key: str, value: str, sentence: str) -> None:
        record = state.values.get(key)
        if record is None:
            state.values[key] = ValueRecord(value, quotes=[signals.clip(sentence, 200)])
            return
        if _norm(record.value) != _norm(value):
            record.earlier = [v for v in record.earlier if _norm(v) != _norm(value)]
            if record.value:  # an unsettled value keeps its last in `earlier` already
                record.earlier.append(record.value)
            record.value = value
        record.quotes.append(signals.clip(sentence, 200))
        state.values[key] = state.values.pop(key)

    def _sentence(
        self, state: ValuesState, said: Sequence[str], n: int, set_here: set[str]
    ) -> set[str]:
        """Read sentence `n` of a user's message (`said`, its sentences) for the values it
        sets; the keys it set. A value an earlier sentence of the message set (`set_here`)
        is not unsettled by this one: "… Raise it to 24 workers." gave it."""
        sentence = said[n]
        settled: set[str] = set()
        instead = _INSTEAD.search(sentence)
        if instead is not None:
            old = _norm(instead["old"])
            for key, record in state.values.items():
                if _norm(record.value) == old or _norm(record.value).split(" ")[0] == old:
                    self._set(state, key, instead["new"].strip().rstrip("."), sentence)
                    settled.add(key)
                    break
        for key, value in signals.value_settings(sentence):
            if key not in settled:
                self._set(state, key, value, sentence)
                settled.add(key)
        lowered = sentence.lower()
        for key, record in list(state.values.items()):
            # An unsettled value's unit is its last value's.
            last = record.value or (record.earlier[-1] if record.earlier else "")
            if key in settled or key not in lowered or not (unit := _unit(last)):
                continue
            # The user names the value and gives a new one in its unit, however worded ("we
            # need 20 connections for the redis pool; 5 was a guess"): the one not held before.
            held = {_norm(v) for v in (record.value, *record.earlier)}
            new = {_norm(v): v for v in _measures_in(sentence, unit) if _norm(v) not in held}
            if not new:
                # Or in another sentence of the same message that names no subject of its
                # own ("90 days for the retention broke the load test. Use 30 days.").
                for other in said:
                    if other != sentence and (
                        _BARE_VALUE.match(other) or len(other.split()) <= _BARE_WORDS
                    ):
                        new.update(
                            (_norm(v), v) for v in _measures_in(other, unit) if _norm(v) not in held
                        )
            if len(new) == 1:
                self._set(state, key, next(iter(new.values())), sentence)
                settled.add(key)
        cued = _CHANGE_CUE.search(lowered) is not None
        for key, record in state.values.items():
            if key in settled or key in set_here:
                continue
            if not (cued or (not record.value and key in lowered)):
                continue
            # A change of this value the readers could not parse (or a word on one left
            # unsettled): stop stating it as current, and quote the user's words on it (the
            # new value may be in the next sentence). Naming neither, a change to a measure
            # of the kind of one value alone ("keep the keys for 7 days": the retention set
            # in hours) is that value's.
            if (
                key in lowered
                or (record.value and _norm(record.value) in lowered)
                or (cued and self._only_of_kind(state, key, sentence))
            ):
                quote = signals.clip(" ".join(" ".join(said[n : n + 2]).split()), 300)
                if quote not in record.quotes:
                    record.quotes.append(quote)
                if record.value:
                    record.earlier = [v for v in record.earlier if _norm(v) != _norm(record.value)]
                    record.earlier.append(record.value)
                record.value = ""
        return settled

    @staticmethod
    def _only_of_kind(state: ValuesState, key: str, sentence: str) -> bool:
        """Whether `sentence` measures something new in the kind of unit of the value under
        `key`, and no other value of the state is measured in that kind. A count (a unit of
        no known kind: `18 attempts`) is another count only as what "make that" or "make it"
        turns to ("make that 21 tries")."""
        record = state.values[key]
        unit = _unit(record.value) if record.value and signals.has_digit(sentence) else ""
        if not unit:
            return False
        held = {_norm(v) for v in (record.value, *record.earlier)}
        if len(_kind(unit)) > 1:
            new = [v for v in _measures_of_kind(sentence, unit) if _norm(v) not in held]
            alike = _kind(unit)
        else:
            made = _MADE_COUNT.search(sentence)
            figure = (made[1] or made[2]) if made is not None else ""
            if not figure or len(_kind(_unit(figure))) > 1 or _norm(figure) in held:
                return False
            new = [figure]
            alike = frozenset(
                u for r in state.values.values() if len(_kind(u := _unit(r.value))) == 1
            )
        return bool(new) and not any(
            other != key and r.value and _unit(r.value) in alike
            for other, r in state.values.items()
        )

    def merge(self, earlier: ValuesState, later: ValuesState) -> ValuesState:
        # Copies: the merged state is observed further, and neither input may change with it.
        merged = ValuesState({k: r.copy() for k, r in earlier.values.items()})
        for key, record in later.values.items():
            current = merged.values.pop(key, None)
            if current is None:
                merged.values[key] = record.copy()
                continue
            earlier_values = [*current.earlier, current.value, *record.earlier]
            seen: list[str] = []
            for v in earlier_values:
                if v and _norm(v) != _norm(record.value) and v not in seen:
                    seen.append(v)
            merged.values[key] = ValueRecord(record.value, seen, [*current.quotes, *record.quotes])
        return merged

    def items(self, state: ValuesState) -> list[Item]:
        out = []
        for rank, (key, record) in enumerate(state.values.items()):
            if not record.value:
                head = f"- {key}: unsettled, the user's words in order: "
                forms = tuple(_newest_quotes(head, record.quotes, limit) for limit in (600, 300))
                out.append(Item(0, rank, _distinct(forms)))
                continue
            was = f" (earlier: {', '.join(record.earlier)})" if record.earlier else ""
            out.append(Item(0, rank, (f"- {key}: {record.value}{was}",)))
        return out

    _LINE = re.compile(r"^([^:]+): (.*?)(?: \(earlier: (.*)\))?$")
    _UNSETTLED = re.compile(r"^([^:]+): unsettled, the user's words in order: (.*)$")

    def parse(self, state: ValuesState, item: str) -> None:
        if m := self._UNSETTLED.match(item):
            quotes = [q.strip("“”") for q in m.group(2).removeprefix(_LEFT_OUT).split("”; “")]
            state.values[m.group(1)] = ValueRecord("", [], quotes)
        elif m := self._LINE.match(item):
            earlier = m.group(3).split(", ") if m.group(3) else []
            state.values[m.group(1)] = ValueRecord(m.group(2), earlier)


# Where the oldest of a value's quotes were left out for room.
_LEFT_OUT = "… "


def _newest_quotes(head: str, quotes: Sequence[str], limit: int) -> str:
    """`head` and the user's `quotes` in order, in at most about `limit` characters: the
    oldest go first (the latest words are the ones that say where the value stands), and
    the newest alone is clipped when even it is too long."""
    kept: list[str] = []
    size = len(head)
    for quote in reversed(quotes):
        piece = f"“{quote}”"
        if kept and size + len(piece) + 2 > limit:
            break
        kept.insert(0, piece)
        size += len(piece) + 2
    left_out = _LEFT_OUT if len(kept) < len(quotes) else ""
    return signals.clip(head + left_out + "; ".join(kept), limit)


# -- files ---------------------------------------------------------------------------------

_OP_ORDER = ("created", "modified", "deleted", "read")
_OP_RANK = {"read": 0, "modified": 1, "created": 2, "deleted": 3}


@dataclass
class FilesState:
    files: dict[str, str] = field(default_factory=dict)  # path → op, most recent last
    # The words of the user's messages: a file only read whose name the user used ranks
    # above the other reads.
    named: set[str] = field(default_factory=set)
    # A file the user turned the assistant away from → the path the user pointed to.
    set_aside: dict[str, str] = field(default_factory=dict)
    # The files touched since the user last spoke, the last last (what a "not that one" or
    # "the wrong router" refers to).
    recent: list[str] = field(default_factory=list)
    # Read back from a summary, nothing touched since: the file a "not that one" refers to
    # is the one the user's words describe.
    resumed: bool = False
    # What each file just touched was before (None: not listed), while a denial may undo it.
    before: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)


# A user's turn that turns the assistant away from what it just did: in its first sentence
# ("Not that one — …", "no, not that file", "That's the wrong router.", "That's the HTML
# controller — wrong place"), or opening "No, use …" (not "No, that's fine") or "Stop — …".
_TURNS_AWAY = re.compile(
    r"\bnot\s+(?:that|this|there|in\s+(?:that|this))\b"
    r"|\bwrong\s+(?:place|spot|file|one|module|router|controller|directory|folder|dir|package"
    r"|class|component|repo|repository|service|endpoint|app|project|path|location)\b"
    r"|^\W*(?:no|nope|nah)\b\W*(?:use|edit|change|look\s+(?:at|in)|it\s+(?:is|lives)\s+in"
    r"|it's\s+in)\b"
    # "Stop — X is never edited by hand": an interjection halting what it just did; "Wrong
    # exporter.": a sentence saying no more than what was wrong.
    r"|^\W*stop\s*[—–,!:-]|^\W*wrong\s+[\w-]+\s*[.!—–:-]",
    re.IGNORECASE,
)
_FIRST_SENTENCE = re.compile(r"[^\n]*?(?:[.!?](?=\s)|\n|$)")


def _turns_away(text: str) -> bool:
    """Whether a user's turn turns the assistant away from what it just did."""
    first = _FIRST_SENTENCE.match(text.lstrip())
    return first is not None and _TURNS_AWAY.search(first.group(0)) is not None


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name the same file (one may be relative: the other ends with it)."""
    return a.endswith(b) or b.endswith(a)


def _turned_away(
    text: str, recent: Sequence[str], *, last: bool = True
) -> tuple[str | None, str] | None:
    """(the file a user's turn turns the assistant away from, the path it points to), if
    it opens by turning it away and names a file the assistant did not just touch: the file
    away from is one just touched that the turn names, else (`last`) the last one just
    touched (None when nothing was)."""
    if not _turns_away(text):
        return None
    named = signals.paths_in(text)
    to = next((n for n in named if not any(_same_file(r, n) for r in recent)), None)
    if to is None and len(named) >= 2:
        # Both just touched (the place pointed to was read before the other was edited):
        # the turn names the file away first and where to work after it.
        to = named[-1]
    if to is None:
        return None
    away = next(
        (r for n in named for r in reversed(recent) if _same_file(r, n) and not _same_file(r, to)),
        None,
    )
    return (away or (recent[-1] if recent and last else None)), to


_PATH_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _path_words(path: str) -> frozenset[str]:
    """The words of a path's parts (`apps/dashboard/exportInvoices.ts`: apps, dashboard,
    export, invoices, ts), lower-cased."""
    return frozenset(w.lower() for w in _PATH_WORD.findall(path) if len(w) > 2)


def _described(text: str, files: Mapping[str, str], exclude: str) -> str | None:
    """The one file of `files` the user's words describe ("the admin router": …/admin/
    router.go) beyond the words of the path they point to, if exactly one fits best."""
    said = _named_words(text) - _path_words(exclude)
    scores: dict[str, int] = {}
    for path in files:
        if not _same_file(path, exclude):
            scores[path] = len(_path_words(path) & said)
    best = max(scores.values(), default=0)
    fits = [path for path, score in scores.items() if score == best]
    return fits[0] if best > 0 and len(fits) == 1 else None


@text_cache()
def _named_words(text: str) -> frozenset[str]:
    return frozenset(_NAME_WORD.findall(text.lower()))


_NAME_WORD = re.compile(r"[a-z0-9][a-z0-9_-]{2,}")


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0].lower()


def _known_as(files: Collection[str], path: str) -> str:
    """The path `files` already lists the file at `path` under: the one absolute path that
    ends with a relative `path` (or the one relative path an absolute `path` ends with);
    else `path` itself."""
    if path in files:
        return path
    if path.startswith("/"):
        same = [
            known for known in files if not known.startswith("/") and path.endswith("/" + known)
        ]
    else:
        same = [known for known in files if known.startswith("/") and known.endswith("/" + path)]
    return same[0] if len(same) == 1 else path


def note_file(files: dict[str, str], path: str, op: str) -> None:
    previous = files.get(path)
    if op == "written":
        op = "modified" if previous is not None else "created"
    if previous is None:
        files[path] = op
        return
    if op == "deleted":
        files[path] = "deleted"
    elif previous == "deleted" and op in ("created", "modified"):
        files[path] = "created"
    elif _OP_RANK[op] > _OP_RANK[previous] and previous != "created":
        files[path] = op
    files[path] = files.pop(path)


def _undo_denied(values: dict[str, V], before: dict[str, V | None], paths: Iterable[str]) -> None:
    """Put back what each of `paths` held in `values` before a use the user denied (`before`,
    as the use's events found it): nothing, where it held nothing."""
    for path in paths:
        if path in before:
            was = before.pop(path)
            if was is None:
                values.pop(path, None)
            else:
                values[path] = was


class Files(Section[FilesState]):
    """Files touched and what happened to them; changed ones before those only read."""

    name = "files"
    events = (FileTouched, UseDenied, UserSaid, CommandRan)
    heading = "## Files touched"

    def new(self) -> FilesState:
        return FilesState()

    def observe(self, state: FilesState, event: Event, seq: int) -> None:
        if isinstance(event, FileTouched):
            # A file deleted under another name than the one it is listed by (written by
            # absolute path, removed by `rm` in the working directory) is that file: listed
            # twice, it would stand as created beside its deletion.
            path = _known_as(state.files, event.path) if event.op == "deleted" else event.path
            state.before[path] = state.files.get(path)
            note_file(state.files, path, event.op)
            if path in state.recent:
                state.recent.remove(path)
            state.recent.append(path)
            state.resumed = False
        elif isinstance(event, UseDenied):
            # The user denied the use: its files are as they were (one it would have made is
            # not listed; it stays what the user's words may turn the assistant away from).
            _undo_denied(state.files, state.before, event.paths)
        elif isinstance(event, CommandRan):
            # A later command naming another file (one that read it without the table seeing
            # it: `sed -n '1,40p' b.ts`): what was touched before is not what it did last.
            last = state.recent[-1] if state.recent else None
            named = signals.paths_in(event.command) if last is not None else ()
            if last is not None and named and not any(_same_file(last, n) for n in named):
                state.recent.clear()
        else:
            self.beside(state, event)

    def beside(self, state: FilesState, event: Event) -> None:
        if isinstance(event, UserSaid):
            state.named |= _named_words(event.text)
            # A file just touched, or, resumed from a summary, one the summary lists that the
            # turn names, else the one the user's words describe.
            turned = _turned_away(event.text, state.recent)
            if state.resumed and not state.recent:
                listed = _turned_away(event.text, list(state.files), last=False)
                turned = listed if listed and listed[0] else turned
            if turned is not None:
                away, to = turned
                if away is None and state.resumed:
                    away = _described(event.text, state.files, to)
                if away is not None:
                    state.set_aside[away] = to
            state.recent, state.resumed = [], False

    def merge(self, earlier: FilesState, later: FilesState) -> FilesState:
        files = dict(earlier.files)
        for path, op in later.files.items():
            note_file(files, path, op)
        untouched = not later.files and not later.recent
        return FilesState(
            files,
            earlier.named | later.named,
            {**earlier.set_aside, **later.set_aside},
            list(earlier.recent if untouched else later.recent),
            later.resumed or (earlier.resumed and untouched),
        )

    def items(self, state: FilesState) -> list[Item]:
        # Changed files first, then those only read; a read the user's words name last of
        # all and ranked above the other reads (read back, its place keeps it there).
        def order(item: tuple[int, tuple[str, str]]) -> tuple[int, bool]:
            path, op = item[1]
            return _OP_ORDER.index(op), op == "read" and _stem(path) in state.named

        def line(path: str, op: str) -> str:
            to = state.set_aside.get(path)
            pointed = f"; the user pointed to {to} instead" if to else ""
            return f"- {path} ({op}{pointed})"

        ordered = sorted(enumerate(state.files.items()), key=order)
        return [
            Item(
                1 if op != "read" else 3,
                rank + (len(ordered) if op == "read" and _stem(path) in state.named else 0),
                (line(path, op),),
            )
            for rank, (path, op) in ordered
        ]

    _LINE = re.compile(
        r"^(.+) \((created|modified|deleted|read)(?:; the user pointed to (.+) instead)?\)$"
    )

    def parse(self, state: FilesState, item: str) -> None:
        if m := self._LINE.match(item):
            state.files[m.group(1)] = m.group(2)
            state.resumed = True
            if m.group(3):
                state.set_aside[m.group(1)] = m.group(3)


# -- errors and how they were fixed ----------------------------------------------------------


@dataclass
class ErrorRecord:
    text: str
    source: str
    open: bool = True
    fixed_by: str = ""
    # Files changed since the error was seen: what the fix consisted of.
    edits: list[str] = field(default_factory=list)

    def copy(self) -> ErrorRecord:
        return ErrorRecord(self.text, self.source, self.open, self.fixed_by, list(self.edits))


#: How much of a long command a digest short of room shows.
_COMMAND_CHARS = 100
#: Where a command of several lines breaks, on the one line an item gives it.
_BREAK = " ⏎ "


def _one_line(command: str) -> str:
    """`command` on one line, as an item shows it (read back by `_lines_of`)."""
    return command.replace("\n", _BREAK)


def _lines_of(shown: str) -> str:
    """A command as `_one_line` showed it, back on its lines."""
    return shown.replace(_BREAK, "\n")


@dataclass
class ErrorsState:
    errors: list[ErrorRecord] = field(default_factory=list)


_TEST_COMMAND = re.compile(r"\b(pytest|test|tests|jest|vitest|mocha|unittest|tox|nox|rspec)\b")


def _is_test_command(command: str) -> bool:
    return _TEST_COMMAND.search(command) is not None


def _covers(command: str, error: ErrorRecord) -> bool:
    """Whether a passing test run of `command` shows `error` (from another test command)
    fixed: it runs the whole suite (names no test path), or names the failing test's file."""
    if not _is_test_command(error.source):
        return False
    paths = [w for w in command.split() if signals.looks_like_path(w)]
    if not paths:
        return True
    return any(path.split("::")[0] in error.text for path in paths)


# A tool call named as `ToolFinished` names it: `read_file(src/a.py)`, `an earlier tool call`
# aside.
_CALL_SOURCE = re.compile(r"^[\w.:-]+\(.*\)$")


class Errors(Section[ErrorsState]):
    """Every distinct error seen, open ones first; a fixed one says what fixed it."""

    name = "errors"
    events = (CommandRan, ToolFinished, FileTouched)
    heading = "## Errors and fixes"
    reads = ("## Errors still open",)

    def new(self) -> ErrorsState:
        return ErrorsState()

    def _add(self, state: ErrorsState, text: str, source: str) -> None:
        state.errors = [e for e in state.errors if not (e.text == text and e.source == source)]
        state.errors.append(ErrorRecord(text, source))

    def _resolve(self, state: ErrorsState, source: str, how: str, *, tests: bool) -> None:
        for error in state.errors:
            if not error.open:
                continue
            if error.source == source or (tests and _covers(source, error)):
                error.open = False
                edits = f" after changing {', '.join(error.edits[-4:])}" if error.edits else ""
                error.fixed_by = f"{how}{edits}"

    def observe(self, state: ErrorsState, event: Event, seq: int) -> None:
        if isinstance(event, CommandRan):
            if event.outcome == "ok" or (event.tests and not signals.summary_fails(event.tests)):
                tests = bool(event.tests) and _is_test_command(event.command)
                self._resolve(
                    state, event.command, f"`{signals.clip(event.command, 80)}` passed", tests=tests
                )
            elif event.errors:
                # Failing again, and no longer on an earlier run's error: that one is gone.
                gone = f"not seen in a later run of `{signals.clip(event.command, 80)}`"
                for error in state.errors:
                    if (
                        error.open
                        and error.source == event.command
                        and (error.text not in event.errors)
                    ):
                        error.open, error.fixed_by = False, gone
            for text in event.errors:
                self._add(state, text, event.command)
        elif isinstance(event, ToolFinished):
            if event.ok:
                self._resolve(state, event.source, f"{event.source} succeeded", tests=False)
            for text in event.errors:
                self._add(state, text, event.source)
        elif isinstance(event, FileTouched) and event.op != "read":
            for error in state.errors:
                if error.open and event.path not in error.edits:
                    error.edits.append(event.path)

    def settle(self, state: ErrorsState, later: Mapping[str, Any]) -> None:
        # Merged summaries: a command the later span ran clean (its latest run) fixed what
        # it had failed on in the earlier span.
        commands = later.get("commands")
        if commands is None:
            return
        for record in commands.commands.values():
            if record.outcome == "ok":
                how = f"`{signals.clip(record.command, 80)}` passed"
                self._resolve(state, record.command, how, tests=False)

    def merge(self, earlier: ErrorsState, later: ErrorsState) -> ErrorsState:
        # Copies: the merged state is observed further, and neither input may change with it.
        errors = [e.copy() for e in earlier.errors]
        for error in later.errors:
            errors = [e for e in errors if not (e.text == error.text and e.source == error.source)]
            errors.append(error.copy())
        return ErrorsState(errors)

    def items(self, state: ErrorsState) -> list[Item]:
        out = []
        for rank, e in enumerate(state.errors):
            # A tool call as it was named (`read_file(src/a.py)`), a command in backticks.
            # Cut short, the error's text gives way before its command, which is cut as the
            # commands section cuts it: read back, the command's next clean run closes it.
            sources = (
                [e.source] * 2
                if _CALL_SOURCE.match(e.source)
                else [
                    f"`{s}`"
                    for s in (
                        _one_line(e.source),
                        signals.clip(_one_line(e.source), _COMMAND_CHARS),
                    )
                ]
            )
            # Short of room, an error's paths lose their directories.
            texts = (e.text, signals.without_dirs(e.text))
            if e.open:
                forms = _distinct(
                    f"- open: {signals.clip(text, limit)} (from {source})"
                    for text, limit, source in zip(texts, (300, 100), sources, strict=True)
                )
                out.append(Item(1, rank, forms))
            else:
                # Short of room, how it went away gives way first: that it did stays. Whole
                # (its directories, what it printed under its line), it is given back last
                # of all, once every item has room.
                lines = [
                    f"- fixed: {signals.clip(text, limit)} (from {source})"
                    for text, limit, source in zip(texts, (300, 80), sources, strict=True)
                ]
                how = [
                    f" — {signals.clip(_one_line(e.fixed_by), limit // 2)}" if e.fixed_by else ""
                    for limit in (300, 80)
                ]
                forms = _distinct((lines[0] + how[0], lines[1] + how[1], lines[1]))
                whole = texts[0] != texts[1] or signals.ERROR_DETAIL in e.text
                out.append(Item(2, rank, forms, int(whole and len(forms) == 3)))
        # Open errors first, as the section shows them.
        return sorted(out, key=lambda i: (i.tier, i.rank))

    _OPEN = re.compile(r"^(?:open: )?(.*) \(from (`.*`|[\w.:-]+\(.*\))\)$")
    _FIXED = re.compile(r"^fixed: (.*) \(from (`.*`|[\w.:-]+\(.*\))\)(?: — (.*))?$")

    def parse(self, state: ErrorsState, item: str) -> None:
        if m := self._FIXED.match(item):
            source, fixed_by = _lines_of(m.group(2).strip("`")), _lines_of(m.group(3) or "")
            state.errors.append(ErrorRecord(m.group(1), source, False, fixed_by))
        elif m := self._OPEN.match(item):
            state.errors.append(ErrorRecord(m.group(1), _lines_of(m.group(2).strip("`")), True))


# -- tests ---------------------------------------------------------------------------------


@dataclass
class TestRecord:
    latest: str
    first_failure: str = ""


@dataclass
class TestsState:
    runs: dict[str, TestRecord] = field(default_factory=dict)  # command → record, latest last


class Tests(Section[TestsState]):
    """The latest test outcome per command, and its first failure if fixed since."""

    name = "tests"
    events = (CommandRan,)
    heading = "## Test status (latest per command)"
    reads = ("## Latest test status",)

    def new(self) -> TestsState:
        return TestsState()

    def observe(self, state: TestsState, event: Event, seq: int) -> None:
        if not isinstance(event, CommandRan) or not event.tests:
            return
        self._note(state, event.command, event.tests)

    @staticmethod
    def _note(state: TestsState, command: str, summary: str, first_failure: str = "") -> None:
        record = state.runs.pop(command, None)
        if record is None:
            record = TestRecord(summary, first_failure)
        else:
            if signals.summary_fails(record.latest) and not record.first_failure:
                record.first_failure = record.latest
            record.latest = summary
            if first_failure:
                record.first_failure = first_failure
        if (
            not signals.summary_fails(record.latest)
            and not record.first_failure
            and signals.summary_fails(summary)
        ):
            record.first_failure = summary
        state.runs[command] = record

    def merge(self, earlier: TestsState, later: TestsState) -> TestsState:
        merged = TestsState(
            {k: TestRecord(r.latest, r.first_failure) for k, r in earlier.runs.items()}
        )
        for command, record in later.runs.items():
            self._note(merged, command, record.latest, record.first_failure)
        return merged

    def items(self, state: TestsState) -> list[Item]:
        out = []
        last = len(state.runs) - 1
        for rank, (command, record) in enumerate(state.runs.items()):
            shown = signals.clip(_one_line(command), 120)
            earlier = (
                f" (earlier: {record.first_failure})"
                if record.first_failure and record.first_failure != record.latest
                else ""
            )
            full = f"- {record.latest} (`{shown}`){earlier}"
            short = f"- {record.latest} (`{signals.clip(_one_line(command), 60)}`)"
            out.append(
                Item(1 if rank == last else 2, rank, (full, short) if full != short else (full,))
            )
        return out

    _LINE = re.compile(r"^(.*?) \(`(.*)`\)(?: \(earlier: (.*)\))?$")

    def parse(self, state: TestsState, item: str) -> None:
        if m := self._LINE.match(item):
            state.runs[_lines_of(m.group(2))] = TestRecord(m.group(1), m.group(3) or "")
        elif item:
            state.runs[item] = TestRecord(item)


# -- commands ------------------------------------------------------------------------------


@dataclass
class CommandRecord:
    command: str
    outcome: str
    failed_before: bool = False
    # The error of its last failed run: a command that failed, then passed, says what failed.
    error: str = ""


@dataclass
class CommandsState:
    commands: dict[str, CommandRecord] = field(default_factory=dict)  # latest last


class Commands(Section[CommandsState]):
    """Commands run, each with its latest outcome (and whether it failed before)."""

    name = "commands"
    events = (CommandRan,)
    heading = "## Commands run (outcome)"

    def new(self) -> CommandsState:
        return CommandsState()

    @staticmethod
    def _note(
        state: CommandsState,
        command: str,
        outcome: str,
        failed_before: bool = False,
        error: str = "",
    ) -> None:
        previous = state.commands.pop(command, None)
        failed = failed_before or (
            previous is not None
            and (previous.failed_before or previous.outcome not in ("ok", NO_OUTPUT))
        )
        if not error and previous is not None:
            error = previous.error
        state.commands[command] = CommandRecord(command, outcome, failed and outcome == "ok", error)

    def observe(self, state: CommandsState, event: Event, seq: int) -> None:
        if isinstance(event, CommandRan):
            error = event.errors[0] if event.errors and event.outcome != "ok" else ""
            self._note(state, event.command, event.outcome, error=signals.clip(error, 160))

    def merge(self, earlier: CommandsState, later: CommandsState) -> CommandsState:
        merged = CommandsState(dict(earlier.commands))
        for record in later.commands.values():
            self._note(merged, record.command, record.outcome, record.failed_before, record.error)
        return merged

    def items(self, state: CommandsState) -> list[Item]:
        out = []
        # A command that failed (now or before) tells more than one that just ran: it ranks
        # above every plain one, the newest first within each.
        lift = len(state.commands)
        for rank, record in enumerate(state.commands.values()):
            command = _one_line(record.command)
            # A long command (a commit message in a heredoc) is cut short where room is short:
            # what ran, and how it ended, still show.
            lines = [
                f"- `{shown}` → {record.outcome}"
                for shown in dict.fromkeys((command, signals.clip(command, _COMMAND_CHARS)))
            ]
            if record.failed_before:
                forms = (
                    tuple(
                        f"{lines[0]} (failed earlier: {error})"
                        for error in dict.fromkeys((record.error, signals.clip(record.error, 72)))
                    )
                    if record.error
                    else (f"{lines[0]} (failed earlier)",)
                )
                if len(lines) > 1:
                    forms += (f"{lines[-1]} (failed earlier)",)
                out.append(Item(2, rank + lift, forms))
            else:
                lifted = lift if record.outcome != "ok" else 0
                out.append(Item(2, rank + lifted, tuple(lines)))
        return out

    _LINE = re.compile(r"^`(.*)` → (.+?)(?: \(failed earlier(?:: (.*))?\))?$")

    def parse(self, state: CommandsState, item: str) -> None:
        if m := self._LINE.match(item):
            command = _lines_of(m.group(1))
            failed = "(failed earlier" in item[m.end(2) :]
            state.commands[command] = CommandRecord(command, m.group(2), failed, m.group(3) or "")


# -- decisions -----------------------------------------------------------------------------

# A statement that replaces an earlier plan: on its own (strong), or inside a decision.
# Words that drop a plan, naming it next: a reversal (`_REVERSAL`) and what it names as
# replaced (`_REPLACED`) both read them.
# Said of a thing that fails: "doesn't survive that", "won't scale".
_FAILS = r"(?:doesn't|does\s+not|won't|will\s+not|can't|cannot)\s+(?:survive|hold\s+up|work|scale)"
# A design said to fail: "the queue design doesn't survive that", "that approach won't scale".
_DOES_NOT_HOLD = rf"(?:design|plan|approach|idea|setup)\s+{_FAILS}"
# A replacement announced ("New shape: no queue at all.", "New plan: …"), or what goes said
# to go ("No per-station queue messages after all: …"): the words before what it replaces.
_NEW_PLAN = r"new\s+(?:shape|plan|approach|design)"
_SAID_TO_GO = r"^\W*(?:no|not)"
_NEW_SHAPE = rf"^\W*{_NEW_PLAN}(?=\s*:)|{_SAID_TO_GO}\s+[^.;:]{{1,60}}?\s+after\s+all\b"
_DROPPING = (
    r"not\s+going\s+ahead\s+with|giving\s+up\s+on|moving\s+away\s+from|rul(?:e|es|ed|ing)\s+out"
)
_REVERSAL = signals.cue(
    r"\b(?:scrap|(?<!from\s)scratch(?:ing)?|scrapping|abandon|abandoning|switch(?:ing|ed)?\s+to|"
    r"change\s+of\s+plan|no\s+longer|revis(?:e|ed|ing)\s+(?:once\s+more|again|the\s+(?:design|plan|approach))|"
    r"revert(?:ing)?\s+(?:to|the)|on\s+second\s+thought|"
    r"not\s+going\s+to\s+(?:use|go)|won't\s+(?:use|go)|on\s+reflection|"
    r"(?:is|was|seems)\s+(?:the\s+|a\s+)?wrong\s+(?:tool|approach|choice|call|idea|fit|way)|"
    r"dead\s+end|off\s+the\s+table|(?:is|are)\s+out\s+(?:as\s+well|too)|back\s+to\s+the\s+drawing\s+board|"
    r"(?:is|are|was|were)\s+(?:no|not)\s+good(?:\s+enough)?|"
    rf"(?:i'm|i\s+am|we're|we\s+are)\s+(?:dropping|ditching|replacing)|{_DROPPING}|"
    r"chang(?:e|ing)\s+(?:course|direction)|chang(?:e|ed|ing)\s+my\s+mind|"
    rf"{_DOES_NOT_HOLD}|{_NEW_SHAPE})\b"
)
_PLAN_WORDS = {
    "going", "decision", "decided", "plan", "instead", "rather", "switch", "switching",
    "settling", "settle", "keep", "scrap", "change", "approach", "idea", "revised", "option",
    "let's", "we'll", "better", "than", "favour", "favor", "actually", "using", "because",
    "there's", "that's", "since", "which", "where", "thing", "things", "work",
}  # fmt: skip
# What a reversal names as replaced: the few words after "instead of", "scrap", ….
_REPLACED = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+favou?r\s+of|scrap(?:ping)?|scratch|abandon(?:ing)?|"
    r"chang(?:e|ed|ing)\s+my\s+mind\s+(?:on|about)|"
    rf"drop(?:ping)?|ditch(?:ing)?|no\s+longer\s+(?:use|using)|{_DROPPING}|"
    rf"back\s+to\s+the\s+drawing\s+board\s+on|{_NEW_PLAN}\s*:\s*no|{_SAID_TO_GO})\s+"
    r"((?:the\s+|a\s+|an\s+)?[\w./-]+(?:\s+[\w./-]+){0,3})",
    re.IGNORECASE,
)
# What a reversal calls wrong: "a global lock is the wrong tool here".
_CALLED_WRONG = re.compile(
    r"((?:the\s+|a\s+|an\s+)?[\w./-]+(?:\s+[\w./-]+){0,2})\s+(?:"
    r"(?:is|was|are|were|seems)\s+(?:the\s+|a\s+)?wrong\s+(?:tool|approach|choice|call|idea|fit|way)"
    r"|turned\s+out\s+to\s+be\s+a\s+dead\s+end|(?:is|are|was|were)\s+off\s+the\s+table"
    r"|(?:is|are)\s+out\s+(?:as\s+well|too)|(?:is|are|was|were)\s+(?:no|not)\s+good(?:\s+enough)?"
    rf"|{_FAILS})\b",
    re.IGNORECASE,
)
_REPLACING = signals.cue(r"\b(?:instead|rather\s+than|in\s+favou?r\s+of)\b")
_OPENS_INSTEAD = re.compile(r"^\W*instead\b", re.IGNORECASE)
# "Replacing them with `PickupSweep`, …": a sentence that opens by putting one thing in
# another's place.
_OPENS_REPLACING = re.compile(r"^\W*(?:so\s+)?replacing\s+[^.;:]{1,60}?\s+with\b", re.IGNORECASE)
# A step of the work told as it goes: "Now the service that …", "Last, payment …".
_STEP = re.compile(
    r"^\W*(?:(?:now|next|then|last|lastly|finally)\b(?!\s+(?:on|of)\b)"
    # or by the action under way ("Routing the tasks to …"), not a second thought
    # ("Rethinking X: …", "Thinking about X again: …", "Changing direction: …").
    r"|(?!(?:re)?think|reconsider|revisit|look|question|doubt|wonder|chang)[a-z]{3,}ing\s)",
    re.IGNORECASE,
)
# A decision that adds to what stands rather than replacing it: "I'll also …".
_ADDING = signals.cue(r"\b(?:also|too|as\s+well|in\s+addition|additionally|next)\b")
# A remark on how a decision is going, not a new word on what it is: "X is in place", or a
# report that opens on what was done ("Done: …", "Changed the hold to 48 hours …").
_STATUS = signals.cue(
    r"^\W*(?:done|changed|updated|bumped|fixed|added|removed|renamed)\b|\b(?:in\s+place|configured|set\s+up|is\s+live|works|working|passes|passing|ready|"
    # or where the work on it starts: "Starting with the exporter's record path."
    r"starting\s+(?:with|on)|beginning\s+with|moving\s+on\s+to|"
    r"landed|merged|deployed|looks?\s+(?:good|fine|right)|"
    # or a measurement of it: "one flush averages 715 ms"
    r"averag(?:e|es|ed)|median|measured|benchmarked|"
    # or what went wrong with it: "Both poller failures are the same missing table"
    r"failures?|fails|failing|crash(?:es|ed)?|broken|reds|"
    r"(?:is|are|goes|went|turned|stays?)\s+(?:green|red)|"
    # or how a run of it went: "Four uploads went through the local worker"
    r"went\s+through|came\s+(?:back|through)|succeed(?:s|ed)|flipped)\b"
)


#: How long a decision is at most; a reversal, what goes and what comes, a little longer.
_DECISION_CHARS = 300
_REVERSAL_CHARS = 420


@text_cache()
def decision_statements(text: str, acts: tuple[str, ...]) -> Mapping[int, int]:
    """The decisions an assistant's prose states, as spans of its sentences (`prose_signals`
    positions: start → end): each from a sentence that decides or reverses a plan (or
    opens "Instead: …", which says what is done instead whatever its verb), a reversal with
    the sentence after it ("Scrap X." then "Switching to Y: …": what goes and what comes),
    and the sentences right after it in its paragraph that say how ("… claims due rows with
    `FOR UPDATE SKIP LOCKED`"), cued as nothing, while they fit (a list after it is what
    was done, item by item, not the decision). The notes pass over what these hold."""
    found = signals.prose_signals(text)
    spans: dict[int, int] = {}
    n = 0
    while n < len(found):
        sentence, _todo, _done, cued, _note = found[n]
        reversal = _is_reversal(sentence)
        if not (cued or reversal or _OPENS_INSTEAD.match(sentence)):
            n += 1
            continue
        end = n + 1
        if (
            reversal
            and n + 1 < len(found)
            and len(sentence) + len(found[n + 1][0]) < _REVERSAL_CHARS
        ):
            end = n + 2
        while (
            end < len(found)
            and f"{found[end - 1][0]} {found[end][0]}" in text
            and _goes_on(found[end], " ".join(s for s, *_ in found[n:end]), acts)
        ):
            end += 1
        spans[n] = end
        n = end
    return spans


def _goes_on(
    signal: tuple[str, bool, bool, bool, bool], statement: str, acts: Sequence[str]
) -> bool:
    """Whether a sentence (with its `prose_signals` marks) goes on with the decision
    `statement` before it: it is cued as nothing (no to-do, nothing done, no decision or
    reversal, no question, no note), does not announce what its message then does (`acts`:
    "I'll print src/app.py."), and the two fit in one decision's room."""
    sentence, todo, done, decision, note = signal
    return (
        not (todo or done or decision or note)
        and not sentence.rstrip().endswith("?")
        and len(statement) + 1 + len(sentence) <= _DECISION_CHARS
        and not _is_reversal(sentence)
        and not announces(sentence, acts)
    )


@text_cache()
def _is_reversal(sentence: str) -> bool:
    """Whether a sentence replaces a plan: outright ("scrap X", "X is off the table"), or by
    "X instead of Y" where it decides something besides the comparison ("I'll use X instead
    of Y"), not where it describes code."""
    strong, replacing, _telling = sentence_marks(sentence)
    if strong or _OPENS_REPLACING.match(sentence):
        return True
    return replacing and signals.is_decision(_REPLACING.sub(" ", sentence.lower()))


# A name in code (a route, a path, an identifier): what it names is the thing itself.
_CODE_NAME = re.compile(r"[\w.-]*[/_][\w./-]*\w")


def _code_names(text: str) -> list[str]:
    """The names in code `text` holds, of four characters or more."""
    return [c for c in _CODE_NAME.findall(text) if len(c) >= 4]


def _replaced_later(d: Decision, text: str, code: Sequence[str]) -> None:
    """Note that `text`, which came after `d` was replaced, replaces the part of it that
    holds any of `code` as well."""
    if text not in d.later and any(c in d.text for c in code):
        d.later += (text,)


def _supersede(decisions: list[Decision], text: str) -> None:
    """Mark the standing decisions `text` replaces: those about what it names as replaced
    ("instead of Y", "scrap Y", "Y is the wrong tool"); naming nothing, those sharing two
    words with it. Where what it names is code some decision holds verbatim ("scratch the
    GET /auth/magic-link route"), those decisions alone (none, if they were replaced
    already): a word of it ("link") elsewhere is not the thing."""
    named = _named_replaced(text)
    code = [c for n in named for c in _code_names(n)]
    holding = [d for d in decisions if any(c in d.text for c in code)]
    if holding:
        for d in holding:
            if not d.superseded_by:
                d.superseded_by = text
            else:
                _replaced_later(d, text, code)
        return
    words = _replaced_words(text)
    need = 1
    if not words:
        words, need = _subject_words(text), 2
    replaced = False
    for d in decisions:
        if not d.superseded_by and len(words & d.words) >= need:
            d.superseded_by = text
            replaced = True
    if named and not replaced:
        # What it names is no standing decision ("changing my mind on the redeem route"):
        # a plan replaced already that holds code it speaks of (the GET route) is replaced
        # in that part by it as well.
        spoken = _code_names(text)
        for d in decisions:
            if d.superseded_by:
                _replaced_later(d, text, spoken)


def _named_replaced(text: str) -> list[str]:
    """What a reversal names as replaced: the words after "instead of", "scrap", …, and
    before "is the wrong tool", "doesn't survive", …."""
    return _REPLACED.findall(text) + _CALLED_WRONG.findall(text)


def _replaced_words(text: str) -> frozenset[str]:
    """The subject words of what a reversal names as replaced (none of the plan words)."""
    named = _named_replaced(text)
    return frozenset().union(*(signals.significant_words(n) for n in named)) - _PLAN_WORDS


def _sets_a_number(sentence: str) -> bool:
    """Whether a sentence gives a setting a figure ("Set the pool to 12 connections."), or
    states settings beside their figures and little else ("Retention 24 hours and in-flight
    wait 800 ms, as you specified:"), in its first clause ("Set to 11 attempts; the new test
    covers the limit.")."""
    first, semicolon, _ = sentence.partition(";")
    if semicolon and _sets_a_number(first):
        return True
    if any(signals.has_digit(value) for _, value in signals.value_settings(sentence)):
        return True
    if not signals.figures(sentence):
        return False
    # Each figure with the words naming it before it ("in-flight wait 800 ms") taken out,
    # at most two words of the sentence's own are left ("as you specified").
    return len(_subject_words(_NAMED_FIGURE.sub(" ", sentence))) <= 2


# A figure and up to three words before it that name what it sets.
_NAMED_FIGURE = re.compile(r"(?:[\w'./-]+\s+){0,3}\d+(?:\.\d+)?\s?(?:%|[A-Za-zµ]+)\b")


def _names_replaced(text: str) -> bool:
    """Whether a reversal names what it replaces ("instead of Y", "scrap Y", "Y is wrong")."""
    return bool(_REPLACED.search(text) or _CALLED_WRONG.search(text))


@text_cache()
def _subject_words(text: str) -> frozenset[str]:
    """The words a statement names its subject by: its significant words, less plan words."""
    return signals.significant_words(text) - _PLAN_WORDS


def _says_more(shared: int, words: int) -> bool:
    """The rule, without cues: a statement of `words` subject words, `shared` of them with a
    subject, names it (two of its words) and says something new of it (two of its own), or
    says it again in no words of its own (a setting restated with its new value: the words
    are the subject's, the value none)."""
    return shared >= 2 and (words - shared >= 2 or shared == words)


#: The decisions a message's uncued sentences are compared with (the standing ones among
#: them), the most recent first.
_RECENT_DECISIONS = 8


@dataclass
class Decision:
    text: str
    superseded_by: str = ""
    # Reversals that came after it was replaced and name code only it held ("scratch the
    # GET /auth/magic-link route" of a plan already replaced): they replace that part too.
    later: tuple[str, ...] = ()

    @property
    def words(self) -> frozenset[str]:
        return _subject_words(self.text)

    def copy(self) -> Decision:
        return Decision(self.text, self.superseded_by, self.later)


@dataclass
class DecisionsState:
    decisions: list[Decision] = field(default_factory=list)
    # What the assistant's last message proposed before asking the user whether to go
    # ahead ("… so I'd stop at once. OK?"): the user's yes makes it a decision.
    proposed: str = ""
    # Subject word → positions of the decisions named by it, for the decisions read so far
    # (`_index_size` of them): decisions are only ever appended.
    _index: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)
    _index_size: int = field(default=0, compare=False, repr=False)

    def spoken_of(
        self, words: frozenset[str], skip: frozenset[str] = frozenset()
    ) -> Decision | None:
        """The most recent of the last `_RECENT_DECISIONS` standing decisions a statement of
        `words` speaks of again (`_says_more`), found through the word index; decisions
        whose text is in `skip` are passed over."""
        for position in range(self._index_size, len(self.decisions)):
            for word in self.decisions[position].words:
                self._index.setdefault(word, []).append(position)
        self._index_size = len(self.decisions)
        first = len(self.decisions) - _RECENT_DECISIONS
        shared: dict[int, int] = {}
        for word in words:
            for position in self._index.get(word, ()):
                if position >= first:
                    shared[position] = shared.get(position, 0) + 1
        for position in sorted(shared, reverse=True):
            decision = self.decisions[position]
            if (
                _says_more(shared[position], len(words))
                and not decision.superseded_by
                and decision.text not in skip
            ):
                return decision
        return None


def _replaced_by(text: str, later: Mapping[str, str]) -> str:
    """What replaced the decision `text` ("" if nothing did). A digest read back may hold it
    cut short (`…...`) where a superseded line names it whole: the same decision."""
    if text in later:
        return later[text]
    return next(
        (by for t, by in later.items() if by and t.endswith("...") and text.startswith(t[:-3])),
        "",
    )


# A question asking only whether to go ahead: "OK?", "Sound good?", "Shall I go ahead?".
_GO_AHEAD = signals.cue(
    r"^(?:ok(?:ay)?|sound\s+good|sounds\s+good|good|fine|agreed|shall\s+i(?:\s+go\s+ahead|\s+proceed)?"
    r"|should\s+i(?:\s+go\s+ahead|\s+proceed)?|go\s+ahead|alright|all\s+right|right)\s*\?$"
)
# A user's turn that opens by agreeing: "Yes, pause it.", "OK, do that.", "Sure."
_AGREES = re.compile(
    r"^\W*(?:yes|yep|yeah|ok(?:ay)?|sure|agreed|go\s+ahead|do\s+it|sounds\s+good|please\s+do"
    r"|approved|fine)\b(?!\s*,?\s*but\b)",
    re.IGNORECASE,
)


def _proposal(text: str, sentences: Sequence[str]) -> str:
    """What a message (`text`, its `sentences`) proposes, when it ends by asking only
    whether to go ahead: its sentences before that question (at most 300 characters), else
    ""."""
    end = text.rstrip()[-40:].lower()
    if not end.endswith("?") or not _GO_AHEAD.search(re.split(r"[.!:\n]", end)[-1].strip()):
        return ""
    before = [s for s in sentences if not s.rstrip().endswith("?")]
    return signals.clip(" ".join(before), 300) if before else ""


class Decisions(Section[DecisionsState]):
    """Decisions and plans in order; one a later statement reverses is shown as superseded,
    never as current."""

    name = "decisions"
    events = (AssistantSaid, PlanStated, UserSaid)
    heading = "## Decisions and plans (standing)"
    reads = ("## Decisions and plans stated by the assistant",)

    def new(self) -> DecisionsState:
        return DecisionsState()

    def observe(self, state: DecisionsState, event: Event, seq: int) -> None:
        proposed, state.proposed = state.proposed, ""
        if isinstance(event, UserSaid):
            if proposed and _AGREES.match(event.text):
                self._add(state, proposed, reversal=False)
            return
        if isinstance(event, PlanStated):
            # A new plan replaces the plan before it.
            for d in state.decisions:
                if d.text.startswith("plan: ") and not d.superseded_by:
                    d.superseded_by = "a later plan"
            text = " ".join(event.text.split())
            state.decisions.append(Decision("plan: " + signals.clip(text, 600)))
            return
        if not isinstance(event, AssistantSaid):
            return
        found = signals.prose_signals(event.text)
        statements = decision_statements(event.text, event.acts)
        upto = 0  # the sentences before this one are read (a statement may take several)
        uncued: list[str] = []  # this message's sentences before its decision, cued as nothing
        said: list[str] = []  # and what a revisit states: those, and what is said done
        decided: set[str] = set()  # this message's decisions: what follows goes on with them
        for n, (sentence, todo, done, _cued, _note) in enumerate(found):
            if n < upto:
                continue
            if n not in statements:
                if not (todo or sentence.rstrip().endswith("?")):
                    said.append(sentence)
                    if not done:
                        uncued.append(sentence)
                continue
            upto = statements[n]
            reversal = _is_reversal(sentence)
            text = " ".join(s for s, *_ in found[n:upto])
            if reversal and uncued and not _names_replaced(text):
                # "X has a problem too: … So I'm changing course again, to Y": the reversal
                # names what it reverses in the sentences before it; they are one statement
                # (and a later merge of two digests still knows what it replaced).
                before = " ".join(uncued)
                if len(before) + len(text) < 300:
                    text = f"{before} {text}"
            text = signals.clip(text, _REVERSAL_CHARS if reversal else _DECISION_CHARS)
            if uncued and not _ADDING.search(text.lower()):
                # "X does not hold up under load. I'll use Y." — the message spoke of X, then
                # decided anew: the new decision replaces X, whatever the words.
                for d in self._spoken_of(state, uncued):
                    d.superseded_by = text
            uncued, said = [], []
            self._add(state, text, reversal=reversal)
            decided.add(text)
        if uncued and event.answers is None:
            # An answer to the user's question tells them what they asked; uncued, it is no
            # new word on a decision however many of the session's words it shares.
            self._revisit(state, uncued, statement=said, own=frozenset(decided))
        state.proposed = _proposal(event.text, [sentence for sentence, *_ in found])

    def _revisit(
        self,
        state: DecisionsState,
        uncued: Sequence[str],
        skip: frozenset[str] = frozenset(),
        *,
        statement: Sequence[str] = (),
        own: frozenset[str] = frozenset(),
    ) -> None:
        """A message that speaks of a decision again and decides nothing, with no cue
        ("Rethinking X: …, so the jobs get Y now"): its word on it is the latest, and stands
        as a decision of its own (which a later reversal can replace in turn); a remark on
        how a decision goes ("X is in place") is not. Decisions in `skip` are not revised.
        `statement`: the sentences it stands as, where more than `uncued` (a sentence a cue
        misreads as done: "Replacing it with a fixed pool"). `own`: the decisions of the same
        message, which what follows them goes on with and does not revise ("Switching to X.
        After the last attempt …"; "I'm dropping X. Instead: Y")."""
        spoken_of = self._spoken_of(state, uncued, skip)
        if not spoken_of:
            return
        if statement and statement[0] not in uncued:
            return  # it opens by telling what was done ("Changed to 48 in holds.ts. …")
        said = " ".join(statement or uncued)
        lowered = said.lower()
        # "I'm replacing X as well": the "as well" is the replacing's, nothing is added.
        adding = _ADDING.search(lowered) and not _REVERSAL.search(lowered)
        if adding or _STATUS.search(lowered) or _STEP.match(said):
            return
        if all(_sets_a_number(s) for s in uncued):
            return  # a setting given a figure ("Set the pool to 12 …"): the values' news
        text = signals.clip(said, 300)
        for d in spoken_of:
            if d.text not in own:
                d.superseded_by = text
        self._add(state, text, reversal=False)

    def settle(self, state: DecisionsState, later: Mapping[str, Any]) -> None:
        # Merged summaries: what the later span said of a decision only the earlier one held
        # is in its subjects (a span with no decision records none). The later span's own
        # decisions were read beside its subjects already: a subject holding the message a
        # decision came from does not revise it.
        subjects = later.get("subjects")
        if subjects is None:
            return
        decided = {d.text for d in state.decisions}
        own = frozenset(d.text for d in later["decisions"].decisions)
        for thread in subjects.threads:
            if thread.latest not in decided:
                self._revisit(state, (thread.latest,), own)

    @staticmethod
    def _spoken_of(
        state: DecisionsState, sentences: Sequence[str], skip: frozenset[str] = frozenset()
    ) -> list[Decision]:
        """The recent standing decisions `sentences` speak of again, with no cue (those
        whose text is in `skip` passed over)."""
        found: list[Decision] = []
        for sentence in sentences:
            words = _subject_words(sentence)
            d = state.spoken_of(words, skip) if len(words) >= 4 else None
            if d is not None and d not in found:
                found.append(d)
        return found

    @staticmethod
    def _add(state: DecisionsState, text: str, *, reversal: bool) -> None:
        if any(d.text == text for d in state.decisions):
            return
        if reversal:
            _supersede(state.decisions, text)
        state.decisions.append(Decision(text))

    def merge(self, earlier: DecisionsState, later: DecisionsState) -> DecisionsState:
        merged = DecisionsState([d.copy() for d in earlier.decisions], later.proposed)
        for d in later.decisions:
            same = next((m for m in merged.decisions if m.text == d.text), None)
            if same is not None:
                same.later += tuple(t for t in d.later if t not in same.later)
                continue
            # A reversal in the later span replaces what the earlier one still held standing
            # (two summaries merged, as when a session is compacted again).
            if not d.superseded_by and _is_reversal(d.text):
                _supersede(merged.decisions, d.text)
            merged.decisions.append(d.copy())
        return merged

    def items(self, state: DecisionsState) -> list[Item]:
        out = []
        later = {d.text: d.superseded_by for d in state.decisions}
        replacing = set(later.values())
        for rank, d in enumerate(state.decisions):
            if d.superseded_by:
                # What stands now, at the end of the chain: naming a plan that was itself
                # replaced later would read as the current one.
                by, seen = d.superseded_by, {d.text}
                while (after := _replaced_by(by, later)) and by not in seen:
                    seen.add(by)
                    by = after
                # What stands is shown whole (a decision is 300 characters at most, a
                # reversal 420): cut short, the line would name the old plan without the new
                # one. The old plan is what gives.
                by = "; later by: ".join((by, *d.later))
                forms = _distinct(
                    f"- superseded (by: {by}): {signals.clip(d.text, limit)}"
                    for limit in (300, 100)
                )
                out.append(Item(3, rank, forms))
            elif (d.text in replacing or _is_reversal(d.text)) and len(d.text) > 160:
                # What replaced a plan ends on the new one: cut short, it keeps its end.
                forms = (f"- {d.text}", f"- ...{_tail(d.text, 296)}", f"- ...{_tail(d.text, 156)}")
                out.append(Item(1, rank, _distinct(forms)))
            else:
                out.append(Item(1, rank, _clip_forms(f"- {d.text}", 300, 160)))
        return out

    _SUPERSEDED = re.compile(r"^superseded \(by: (.*?)\): (.*)$", re.DOTALL)

    def parse(self, state: DecisionsState, item: str) -> None:
        if m := self._SUPERSEDED.match(item):
            by, *later = m.group(1).split("; later by: ")
            state.decisions.append(Decision(m.group(2), by, tuple(later)))
        else:
            state.decisions.append(Decision(item))


# -- to-dos --------------------------------------------------------------------------------


@dataclass
class TodosState:
    # The latest list a to-do tool stated (it replaces the list each time), and the to-dos
    # stated in prose that are still open.
    listed: list[Todo] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    # Whether `listed` is a whole list the tool stated (not items changed one at a time).
    stated: bool = False
    # Read back from a digest showing a list (some item marked done or dropped): its open
    # items, which are the list's, though they read as prose.
    read_back: list[str] = field(default_factory=list)
    # Whether `listed` is a plan the assistant wrote in prose (no tool keeps it): what its
    # prose says later closes its items.
    said: bool = False


# How a closed item's state is shown, and read back.
_TODO_MARKS = {"removed": "removed from the list"}
_TODO_STATUSES = {
    "in progress": "in_progress",
    "removed from the list": "removed",
    "dropped": "cancelled",
    "skipped": "cancelled",
    "replaced": "cancelled",
}


def _with_dropped(earlier: list[Todo], later: list[Todo]) -> list[Todo]:
    """`later`, a whole list the tool stated, followed by the items of `earlier` it leaves
    out: an open one was removed from the list (what became of it is not said), a closed
    one stays as it was."""
    by_id: dict[str | None, Todo] = {t.id: t for t in later if t.id is not None}
    texts = {t.text for t in later}
    dropped = [
        t if t.status in ("completed", "cancelled", "removed") else Todo(t.text, "removed", t.id)
        for t in earlier
        if t.text and t.text not in texts and not _renamed(t, by_id.get(t.id))
    ]
    return [*later, *dropped]


def _renamed(earlier: Todo, later: Todo | None) -> bool:
    """Whether `later`, the item of a later list under `earlier`'s id, is it renamed: most of
    the words of the shorter are the other's (a list numbered anew gives a left-out item's
    id to another)."""
    if later is None or earlier.id is None:
        return False
    if not later.text:
        return True
    words, other = signals.significant_words(earlier.text), signals.significant_words(later.text)
    return 2 * len(words & other) >= min(len(words), len(other))


def _closes(done_sentence: str, todo: str) -> bool:
    words = signals.significant_words(done_sentence)
    todo_words = signals.significant_words(todo)
    return bool(words) and bool(todo_words) and len(todo_words & words) / len(todo_words) >= 0.6


class Todos(Section[TodosState]):
    """Open to-dos: the latest to-do list's pending and in-progress items, and to-dos said in
    prose; one later done is listed as done, not as open."""

    name = "todos"
    events = (AssistantSaid, TodosStated, TodoChanged, TodoIdentified)
    heading = "## To-dos"
    reads = ("## Open to-dos", "## Outstanding to-dos")

    def new(self) -> TodosState:
        return TodosState()

    def observe(self, state: TodosState, event: Event, seq: int) -> None:
        if isinstance(event, TodoChanged):
            self._change(state, event.todo)
            return
        if isinstance(event, TodoIdentified):
            for i in range(len(state.listed) - 1, -1, -1):
                if state.listed[i].id is None:
                    state.listed[i] = Todo(state.listed[i].text, state.listed[i].status, event.id)
                    break
            return
        if isinstance(event, TodosStated):
            # The tool states the whole list each time: its latest list is the truth, and
            # what it leaves out was dropped.
            earlier = [*state.listed, *(Todo(t, "pending") for t in state.read_back)]
            state.listed = _with_dropped(earlier, list(event.todos))
            state.read_back = []
            state.stated = True
            state.said = event.said
            # What prose said was still to do before the list is the list's to state now.
            state.prose = []
            return
        if not isinstance(event, AssistantSaid):
            return
        for sentence, todo, done, _decision, _note in signals.prose_signals(event.text):
            clipped = signals.clip(sentence, 300)
            if todo:
                if clipped not in state.prose and not announces(sentence, event.acts):
                    state.prose.append(clipped)
            elif done:
                closed = [p for p in state.prose if _closes(sentence, p)]
                state.prose = [p for p in state.prose if p not in closed]
                state.done.extend(closed)
            if state.said:
                self._close_said(state, sentence, done=done)

    @staticmethod
    def _close_said(state: TodosState, sentence: str, *, done: bool) -> None:
        """Close the open steps of a plan written in prose that a later sentence of the
        assistant's says are done, or replaces ("The queue design doesn't survive that")."""
        replaced = _replaced_words(sentence) if _is_reversal(sentence) else frozenset()
        for i, item in enumerate(state.listed):
            if item.status not in ("pending", "in_progress"):
                continue
            if done and _closes(sentence, item.text):
                state.listed[i] = Todo(item.text, "completed", item.id)
            elif replaced & signals.significant_words(item.text):
                state.listed[i] = Todo(item.text, "cancelled", item.id, word="replaced")

    @staticmethod
    def _change(state: TodosState, todo: Todo) -> None:
        """Create or update one item, found by id, else by text (a pending item of a list
        read back from a digest reads as a prose to-do: it becomes the list's item again)."""
        if todo.text in state.prose:
            state.prose.remove(todo.text)
        for i, current in enumerate(state.listed):
            if (todo.id is not None and current.id == todo.id) or (
                todo.id is None and todo.text and current.text == todo.text
            ):
                state.listed[i] = Todo(
                    todo.text or current.text, todo.status, current.id, word=todo.word
                )
                return
        if todo.text:
            state.listed.append(todo)

    def merge(self, earlier: TodosState, later: TodosState) -> TodosState:
        if later.stated:
            listed = _with_dropped(earlier.listed, later.listed)
        else:
            listed = list(later.listed) if later.listed else list(earlier.listed)
        prose = [p for p in earlier.prose if p not in later.done]
        prose += [p for p in later.prose if p not in prose]
        stated = later.stated or (earlier.stated and not later.listed)
        read_back = [] if later.stated else [*earlier.read_back, *later.read_back]
        said = later.said if later.listed else earlier.said
        done = [*earlier.done, *later.done]
        return TodosState(listed, prose, done, stated, read_back, said)

    def items(self, state: TodosState) -> list[Item]:
        out = []
        for rank, todo in enumerate(state.listed):
            if todo.status in ("pending", "in_progress"):
                mark = "[in progress] " if todo.status == "in_progress" else ""
                out.append(Item(1, rank, _clip_forms(f"- {mark}{todo.text}", 300, 120)))
            else:
                # Done is in the work; one that will not be done is what not to do again.
                tier = 3 if todo.status == "completed" else 2
                mark = todo.word or _TODO_MARKS.get(todo.status, todo.status)
                out.append(Item(tier, rank, _clip_forms(f"- [{mark}] {todo.text}", 200, 80)))
        base = len(state.listed)
        for rank, text in enumerate(state.prose):
            out.append(Item(1, base + rank, _clip_forms(f"- {text}", 300, 120)))
        return out

    _MARK = re.compile(
        rf"^\[({'|'.join(('completed', 'cancelled', *_TODO_STATUSES))})\] (.*)$", re.DOTALL
    )

    def parse(self, state: TodosState, item: str) -> None:
        if m := self._MARK.match(item):
            status = _TODO_STATUSES.get(m.group(1), m.group(1))
            word = m.group(1) if status == "cancelled" and m.group(1) != "cancelled" else None
            state.listed.append(Todo(m.group(2), status, word=word))  # type: ignore[arg-type]
            if not state.read_back:
                # The open items read so far were the list's (they come first).
                state.read_back = list(state.prose)
        else:
            state.prose.append(item)
            if state.listed:
                state.read_back.append(item)


# -- notes: the assistant's telling sentences ---------------------------------------------


@text_cache()
def sentence_marks(sentence: str) -> tuple[bool, bool, tuple[str, ...]]:
    """Whether an assistant's sentence reverses a plan outright, whether it says what it
    replaces ("instead of", "rather than"), and the telling tokens (`telling_tokens`) it
    holds; read once per sentence."""
    lowered = sentence.lower()
    return (
        _REVERSAL.search(lowered) is not None,
        _REPLACING.search(lowered) is not None,
        telling_tokens(sentence),
    )


@dataclass
class AnswersState:
    answers: list[tuple[float, str]] = field(default_factory=list)  # (score, text), in order
    # The user's question still unanswered where the span ends.
    waiting: str | None = None


def _answer_sentences(event: AssistantSaid) -> tuple[str, ...]:
    """The sentences of prose that answer the user's question: its first two, less a to-do
    or a decision (their sections have them)."""
    return () if event.answers is None else _first_sentences(event.text)


@text_cache()
def _first_sentences(text: str) -> tuple[str, ...]:
    """The first two sentences of prose, less a to-do or a decision, clipped (read once for
    the answers section and the notes section alike)."""
    return tuple(
        signals.clip(sentence, 300)
        for n, (sentence, todo, _done, decision, _note) in enumerate(signals.prose_signals(text))
        if n < 2 and not (todo or decision)
    )


class Answers(Section[AnswersState]):
    """What the assistant told the user it was asked for (the answers to the user's
    questions) and its final answer, verbatim: ranked with the open work, read back too."""

    name = "answers"
    events = (AssistantSaid, Finished, Asked)
    heading = "## Answers given to the user"
    _WAITING = "not yet answered: "

    def new(self) -> AnswersState:
        return AnswersState()

    @staticmethod
    def _add(state: AnswersState, score: float, text: str) -> None:
        if all(existing != text for _, existing in state.answers):
            state.answers.append((score, text))

    def observe(self, state: AnswersState, event: Event, seq: int) -> None:
        if isinstance(event, Asked):
            state.waiting = event.question
        elif isinstance(event, AssistantSaid) and event.answers is not None:
            state.waiting = None  # answered (the reader was told of a summary's question)
            for sentence in _answer_sentences(event):
                self._add(state, seq, sentence)
        elif isinstance(event, Finished):
            self._add(state, seq, signals.clip(event.text.strip(), 600))

    def merge(self, earlier: AnswersState, later: AnswersState) -> AnswersState:
        # The earlier span's open question is answered in the later one (its reader was told
        # of it), or asked again there, or still open.
        waiting = later.waiting if later.waiting or later.answers else earlier.waiting
        merged = AnswersState(list(earlier.answers), waiting)
        for score, text in later.answers:
            self._add(merged, score, text)
        return merged

    def items(self, state: AnswersState) -> list[Item]:
        # A final answer's lines go under its item, indented: read back, they are its own.
        items = [
            Item(
                1,
                score,
                tuple(f.replace("\n", "\n  ") for f in _clip_forms(f"- {text}", 600, 300, 140)),
            )
            for score, text in state.answers
        ]
        if state.waiting:
            rank = max((score for score, _ in state.answers), default=0) + 1
            items.append(Item(1, rank, (f"- {self._WAITING}“{state.waiting}”",)))
        return items

    def parse(self, state: AnswersState, item: str) -> None:
        if item.startswith(self._WAITING + "“") and item.endswith("”"):
            state.waiting = item[len(self._WAITING) + 1 : -1]
        else:
            self._add(state, len(state.answers), item.replace("\n  ", "\n"))


@dataclass
class NotesState:
    notes: list[tuple[int, float, str]] = field(default_factory=list)  # (tier, score, text)


@text_cache()
def _figure_claim(sentence: str) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """What a sentence states figures of: its subject words (its units aside) and figures."""
    found = frozenset(signals.figures(sentence))
    if not found:
        return frozenset(), found
    return _subject_words(sentence) - {unit for unit, _ in found}, found


def _replaces_figure(newer: str, older: str) -> bool:
    """Whether `newer` states another figure of what `older` gave one of: the same unit, a
    different number, and every subject word of `older` named ("Threshold is at 9 bits."
    then "the threshold is now 7 bits"; "the first batch takes 5 ms" and "the second batch
    takes 7 ms" are two subjects)."""
    new_words, new_figures = _figure_claim(newer)
    if not new_figures:
        return False
    old_words, old_figures = _figure_claim(older)
    if not old_words or not old_words <= new_words:
        return False
    return any(u == v and n != m for u, n in new_figures for v, m in old_figures)


@text_cache()
def _replacements(text: str) -> tuple[tuple[str, ...], ...]:
    """The values each of the user's sentences that replaces something names, where it names
    two or more ("Call the report `a.json` instead — b.json collides", "0.9.3 rather than
    0.10.0"): which of them is the old one, what was said before tells."""
    found = []
    for sentence in signals.sentences(text):
        if _REPLACING.search(sentence.lower()):
            names = signals.named_values(sentence)
            if len(names) >= 2:
                found.append(names)
    return tuple(found)


def _replaced_by_user(texts: Sequence[str], said: str) -> frozenset[str]:
    """The values the user's words `said` replace, of those `texts` (what the assistant said
    before) name: in a replacing sentence, the values said before are the old ones, where
    the sentence also names a value not said before (the new one)."""
    old: set[str] = set()
    for names in _replacements(said):
        known = [n for n in names if any(signals.mentions(t.lower(), n) for t in texts)]
        if known and len(known) < len(names):
            old.update(known)
    return frozenset(old)


def _without_sentences(text: str, gone: Callable[[str], bool]) -> str:
    """`text` without its sentences `gone` says no longer stand ("" when none is left)."""
    said = signals.sentences(text)
    kept = [s for s in said if not gone(s)]
    return text if len(kept) == len(said) else " ".join(kept)


def _names_one_of(names: frozenset[str]) -> Callable[[str], bool]:
    """Whether a sentence names one of `names`."""
    return lambda sentence: any(signals.mentions(sentence.lower(), n) for n in names)


def _replacing_turns(later: Mapping[str, Any]) -> list[str]:
    """The later span's user turns that replace something by name (merged summaries)."""
    users = later.get("user")
    return [said for _, said in users.texts if _replacements(said)] if users else []


class Notes(Section[NotesState]):
    """What else the assistant said that a reader would miss: flagged notes and known
    failures, and sentences carrying identifiers, numbers, paths or commit ids — kept
    verbatim where the readers cannot tell more."""

    name = "notes"
    events = (AssistantSaid, UserSaid, Reported)
    heading = "## Notes by the assistant"
    reads = ("## Facts to remember",)

    def new(self) -> NotesState:
        return NotesState()

    def _add(self, state: NotesState, tier: int, score: float, text: str) -> None:
        for i, (t, s, existing) in enumerate(state.notes):
            if existing == text:
                state.notes[i] = (min(t, tier), max(s, score), text)
                return
        if _figure_claim(text)[1]:
            # A later figure of the same subject: the note stating the earlier one goes.
            state.notes[:] = [n for n in state.notes if not _replaces_figure(text, n[2])]
        state.notes.append((tier, score, text))

    def observe(self, state: NotesState, event: Event, seq: int) -> None:
        if isinstance(event, UserSaid):
            self._drop_replaced(state, event.text, len(state.notes))
            return
        if isinstance(event, Reported):
            for finding in event.findings:  # what a sub-agent's report found
                self._add(state, 3, seq, finding)
            return
        if not isinstance(event, AssistantSaid):
            return
        answered = _answer_sentences(event)
        decided = {
            n
            for start, end in decision_statements(event.text, event.acts).items()
            for n in range(start, end)
        }
        for n, (sentence, todo, _done, _cued, note) in enumerate(signals.prose_signals(event.text)):
            clipped = signals.clip(sentence, 300)
            if todo or n in decided or clipped in answered:
                continue  # the to-do, decision and answer sections have them
            if note:
                self._add(state, 2, seq, clipped)
            elif (telling := sentence_marks(sentence)[2]) and not announces(sentence, event.acts):
                self._add(state, 3, seq + len(telling) * 0.1, clipped)

    @staticmethod
    def _drop_replaced(state: NotesState, said: str, before: int) -> None:
        """What the user's words `said` replace by name is no longer what the first `before`
        notes say: their sentences naming it go."""
        if not _replacements(said):
            return
        old = _replaced_by_user([text for _, _, text in state.notes[:before]], said)
        if not old:
            return
        kept = []
        for index, (tier, score, text) in enumerate(state.notes):
            left = _without_sentences(text, _names_one_of(old)) if index < before else text
            if left:
                kept.append((tier, score, left))
        state.notes[:] = kept

    def merge(self, earlier: NotesState, later: NotesState) -> NotesState:
        merged = NotesState(list(earlier.notes))
        for tier, score, text in later.notes:
            self._add(merged, tier, score, text)
        return merged

    def settle(self, state: NotesState, later: Mapping[str, Any]) -> None:
        # Merged summaries: the later span's user words replace what the earlier one's
        # notes named.
        replacing = _replacing_turns(later)
        if not replacing:
            return
        own = {text for _, _, text in later["notes"].notes}
        before = sum(1 for _, _, text in state.notes if text not in own)
        for said in replacing:
            self._drop_replaced(state, said, before)

    def items(self, state: NotesState) -> list[Item]:
        return [
            Item(tier, score, _clip_forms(f"- {text}", 600, 300, 140))
            for tier, score, text in state.notes
        ]

    def parse(self, state: NotesState, item: str) -> None:
        # Read back, a note keeps the tier it was read at: a flagged one is a must-have, a
        # sentence kept for what it names is not (re-read, it would outrank files and
        # commands at every later compaction).
        flagged = any(found[4] for found in signals.prose_signals(item))
        self._add(state, 2 if flagged else 3, len(state.notes), item)


@dataclass
class Thread:
    """A subject the assistant spoke of: the words it was named by, and the latest thing the
    assistant said of it."""

    words: frozenset[str]
    latest: str
    seq: float
    said: int = 1


#: The subjects a digest follows at once; the least recently spoken of goes first.
MAX_THREADS = 24
#: Prose this long or shorter is one statement; a longer message is read by the sentence.
_STATEMENT_CHARS = 400


@text_cache()
def _statements(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The statements of an assistant's prose with their subject words: a short message
    whole (its sentences lean on each other: "X runs aground too. The queue lands on Y
    instead."), a long one by sentence. Words are read per sentence (shared with the other
    sections' readers of the same sentences). A question states nothing: a message's
    questions are left out of its statement (a decision ending in "Where is X used?" was
    dropped whole)."""
    said = signals.sentences(text)
    asked = [s for s in said if s.rstrip().endswith("?")]
    if asked and len(asked) < len(said):
        said = tuple(s for s in said if not s.rstrip().endswith("?"))
        text = " ".join(said)
    text = signals.without_headings(text)
    prose = " ".join(text.split()) if len(text) <= 2 * _STATEMENT_CHARS else text
    if len(prose) <= _STATEMENT_CHARS:
        return ((prose, frozenset().union(*map(_subject_words, said))),) if prose else ()
    return tuple((s, _subject_words(s)) for s in said if len(s) <= _STATEMENT_CHARS)


@dataclass
class SubjectsState:
    threads: list[Thread] = field(default_factory=list)  # least recently spoken of first
    # How many of `threads` each word names: a statement sharing fewer than two words with
    # all of them together starts a subject of its own without a scan.
    named: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def add(self, thread: Thread) -> None:
        self.threads.append(thread)
        for word in thread.words:
            self.named[word] = self.named.get(word, 0) + 1
        while len(self.threads) > MAX_THREADS:
            self.remove(0)

    def revise(self, index: int, latest: str) -> None:
        """Thread `index` with `latest` as its latest word (removed when that is empty). A new
        thread, not a change of it: states copied from this one share their threads."""
        thread = self.threads[index]
        if not latest:
            self.remove(index)
        elif latest != thread.latest:
            self.threads[index] = Thread(thread.words, latest, thread.seq, thread.said)

    def remove(self, index: int) -> None:
        for word in self.threads.pop(index).words:
            if self.named[word] == 1:
                del self.named[word]
            else:
                self.named[word] -= 1


class Subjects(Section[SubjectsState]):
    """Subjects the assistant came back to, each with the latest thing it said of them,
    found by the words they share and not by any cue: a plan revised in words no reader
    knows ("I've hit a wall with X … the queue lands on Y") still ends on what stands."""

    name = "subjects"
    events = (AssistantSaid, UserSaid)
    heading = "## What the assistant said last, by subject"

    def new(self) -> SubjectsState:
        return SubjectsState()

    @staticmethod
    def _follow(
        state: SubjectsState,
        statement: str,
        seq: float,
        said: int = 1,
        words: frozenset[str] | None = None,
    ) -> None:
        """Follow `statement` (of subject `words`) under the subject it returns to — two of
        that subject's words and two of its own; of several, the one it shares most words
        with, the most recent of those — or start a subject of its own."""
        if words is None:
            words = _subject_words(statement)
        if len(words) < 4 or statement.rstrip().endswith("?"):
            return
        named = state.named
        if sum(1 for word in words if word in named) >= 2:
            threads = state.threads
            best, most = -1, 0
            for i in range(len(threads) - 1, -1, -1):
                shared = len(words & threads[i].words)
                if shared > most and _says_more(shared, len(words)):
                    best, most = i, shared
            if best >= 0:
                thread = threads[best]
                state.remove(best)
                state.add(Thread(words, statement, seq, thread.said + said))
                return
        state.add(Thread(words, statement, seq, said))

    def observe(self, state: SubjectsState, event: Event, seq: int) -> None:
        if isinstance(event, UserSaid):
            self._drop_replaced(state, event.text)
            return
        if isinstance(event, AssistantSaid) and not signals.is_navigation(event.text):
            for statement, words in _statements(event.text):
                if not announces(statement, event.acts):
                    self._drop_replaced_figures(state, statement)
                    self._drop_ruled_out(state, statement)
                    self._follow(state, statement, seq, words=words)

    @staticmethod
    def _drop_replaced(
        state: SubjectsState, said: str, later: frozenset[str] = frozenset()
    ) -> None:
        """What the user's words `said` replace by name is no longer the latest word on a
        subject (of those but the `later` ones, said after them): its sentences go."""
        if not _replacements(said):
            return
        earlier = [t for t in state.threads if t.latest not in later]
        old = _replaced_by_user([t.latest for t in earlier], said)
        for index in range(len(state.threads) - 1, -1, -1) if old else ():
            thread = state.threads[index]
            if thread.latest not in later:
                state.revise(index, _without_sentences(thread.latest, _names_one_of(old)))

    def settle(self, state: SubjectsState, later: Mapping[str, Any]) -> None:
        # Merged summaries: the later span's user words replace what the earlier one's
        # subjects named.
        replacing = _replacing_turns(later)
        if replacing:
            own = frozenset(t.latest for t in later["subjects"].threads)
            for said in replacing:
                self._drop_replaced(state, said, own)

    @staticmethod
    def _drop_replaced_figures(state: SubjectsState, statement: str) -> None:
        """Take out of the subjects' latest words the figures `statement` gives anew."""
        if not _figure_claim(statement)[1]:
            return
        for index in range(len(state.threads) - 1, -1, -1):
            thread = state.threads[index]
            if signals.has_digit(thread.latest):
                replaced = partial(_replaces_figure, statement)
                state.revise(index, _without_sentences(thread.latest, replaced))

    @staticmethod
    def _drop_ruled_out(state: SubjectsState, statement: str) -> None:
        """Take out of the subjects' latest words the sentences naming code `statement` rules
        out ("No `retry_on`, no `next_retry_at`."), but those ruling it out too."""
        gone = signals.ruled_out(statement)
        if not gone:
            return

        def stands_on(sentence: str) -> bool:
            lowered = sentence.lower()
            named = [g for g in gone if signals.mentions(lowered, g)]
            return bool(named) and not set(named) <= set(signals.ruled_out(sentence))

        for index in range(len(state.threads) - 1, -1, -1):
            state.revise(index, _without_sentences(state.threads[index].latest, stands_on))

    def merge(self, earlier: SubjectsState, later: SubjectsState) -> SubjectsState:
        merged = SubjectsState(list(earlier.threads), dict(earlier.named))
        for thread in later.threads:
            self._drop_replaced_figures(merged, thread.latest)
            self._drop_ruled_out(merged, thread.latest)
            self._follow(merged, thread.latest, thread.seq, thread.said, thread.words)
        return merged

    def items(self, state: SubjectsState) -> list[Item]:
        # A subject spoken of once is kept only in room nothing else wants: it is what a
        # later word on it threads onto after this digest is read back.
        return [
            Item(
                3 if thread.said >= 2 else 4,
                thread.seq,
                _sentence_forms(f"- {thread.latest}", 400, 200, 120),
            )
            for thread in state.threads
        ]

    def parse(self, state: SubjectsState, item: str) -> None:
        # Shown, so spoken of at least twice; its order in the digest is its recency.
        self._follow(state, item, -1e6 + len(state.threads), said=2)


# -- images -----------------------------------------------------------------------------------


@dataclass
class ImagesState:
    images: list[tuple[int, str, str]] = field(default_factory=list)  # (count, where, handle)


class Images(Section[ImagesState]):
    """Images the span held: whose they were, and the archive handle of each original."""

    name = "images"
    heading = "## Images (originals archived)"
    events = (ImagesSeen,)

    def new(self) -> ImagesState:
        return ImagesState()

    def observe(self, state: ImagesState, event: Event, seq: int) -> None:
        if isinstance(event, ImagesSeen):
            entry = (event.count, event.where, event.handle)
            if entry not in state.images:
                state.images.append(entry)

    def merge(self, earlier: ImagesState, later: ImagesState) -> ImagesState:
        return ImagesState([*earlier.images, *(i for i in later.images if i not in earlier.images)])

    def items(self, state: ImagesState) -> list[Item]:
        out = []
        for rank, (count, where, handle) in enumerate(state.images):
            what = "image" if count == 1 else f"{count} images"
            out.append(Item(1, rank, (f"- {what} in {where} (original kept as {handle})",)))
        return out

    _LINE = re.compile(r"^(?:(\d+) images|image) in (.*) \(original kept as (m-\w+)\)$")

    def parse(self, state: ImagesState, item: str) -> None:
        if m := self._LINE.match(item):
            state.images.append((int(m.group(1) or 1), m.group(2), m.group(3)))


# -- identifiers seen in tool output ------------------------------------------------------


@dataclass
class IdentifiersState:
    identifiers: list[str] = field(default_factory=list)


@dataclass
class CodeNamesState:
    # path → (names defined, names imported), the file written last last.
    files: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    # The files written since the user last spoke (what a "wrong place" turns away from).
    recent: list[str] = field(default_factory=list)
    # What each file just written held before (None: nothing), while a denial may undo it.
    before: dict[str, tuple[tuple[str, ...], tuple[str, ...]] | None] = field(
        default_factory=dict, compare=False, repr=False
    )


def _names_added(
    earlier: tuple[tuple[str, ...], tuple[str, ...]],
    defines: Sequence[str],
    imports: Sequence[str],
    removes: Sequence[str] = (),
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A file's names with a later write's added (the later first, at most six of each) and
    those whose definition it took out gone."""
    kept = [d for d in (*defines, *earlier[0]) if d not in removes]
    return tuple(dict.fromkeys(kept))[:6], tuple(dict.fromkeys((*imports, *earlier[1])))[:6]


class CodeNames(Section[CodeNamesState]):
    """Per file the assistant wrote code into, the names it defined there and those it
    imported from the project's own code: what a later step most often needs by name. After
    what was done and said; before identifiers seen only in an output."""

    name = "code names"
    events = (CodeWritten, UseDenied, UserSaid, FileTouched)
    heading = "## Names in the code written"

    def new(self) -> CodeNamesState:
        return CodeNamesState()

    @staticmethod
    def _note(
        state: CodeNamesState,
        path: str,
        defines: Sequence[str],
        imports: Sequence[str],
        removes: Sequence[str] = (),
    ) -> None:
        earlier = state.files.pop(path, ((), ()))
        names = _names_added(earlier, defines, imports, removes)
        if names[0] or names[1]:
            state.files[path] = names

    def observe(self, state: CodeNamesState, event: Event, seq: int) -> None:
        if isinstance(event, CodeWritten):
            state.before[event.path] = state.files.get(event.path)
            self._note(state, event.path, event.defines, event.imports, event.removes)
            state.recent.append(event.path)
        elif isinstance(event, UseDenied):
            # The user denied the write: what the file defined is as it was.
            _undo_denied(state.files, state.before, event.paths)
        elif isinstance(event, FileTouched):
            if event.op == "deleted":  # what a deleted file defined is gone with it
                state.files.pop(_known_as(state.files, event.path), None)
        elif isinstance(event, UserSaid):
            # The user turned the assistant away from a file it just wrote: what it wrote
            # there is not the work's (the files section says where the user pointed).
            turned = _turned_away(event.text, state.recent)
            if turned is not None and turned[0] in state.recent:
                state.files.pop(turned[0], None)
            state.recent = []

    def merge(self, earlier: CodeNamesState, later: CodeNamesState) -> CodeNamesState:
        merged = CodeNamesState(dict(earlier.files), list(later.recent or earlier.recent))
        for path, (defines, imports) in later.files.items():
            self._note(merged, path, defines, imports)
        return merged

    def items(self, state: CodeNamesState) -> list[Item]:
        out = []
        for rank, (path, (defines, imports)) in enumerate(state.files.items()):
            forms = []
            for n in (6, 2):
                said = [f"defines {', '.join(defines[:n])}"] if defines else []
                said += [f"imports {', '.join(imports[:n])}"] if imports else []
                forms.append(f"- {path}: {'; '.join(said)}")
            out.append(Item(_NAMES_TIER, rank, _distinct(forms)))
        return out

    _LINE = re.compile(r"^(.+?): (?:defines ([^;]+))?(?:; )?(?:imports (.+))?$")

    def parse(self, state: CodeNamesState, item: str) -> None:
        if (m := self._LINE.match(item)) and (m.group(2) or m.group(3)):
            defines = tuple(n.strip() for n in (m.group(2) or "").split(",") if n.strip())
            imports = tuple(n.strip() for n in (m.group(3) or "").split(",") if n.strip())
            self._note(state, m.group(1), defines, imports)


class Identifiers(Section[IdentifiersState]):
    name = "identifiers"
    events = (IdentifiersSeen,)
    heading = "## Identifiers seen in tool output"

    def new(self) -> IdentifiersState:
        return IdentifiersState()

    @staticmethod
    def _note(state: IdentifiersState, identifier: str) -> None:
        if identifier in state.identifiers:
            state.identifiers.remove(identifier)
        state.identifiers.append(identifier)

    def observe(self, state: IdentifiersState, event: Event, seq: int) -> None:
        if isinstance(event, IdentifiersSeen):
            for identifier in event.identifiers:
                self._note(state, identifier)

    def merge(self, earlier: IdentifiersState, later: IdentifiersState) -> IdentifiersState:
        merged = IdentifiersState(list(earlier.identifiers))
        for identifier in later.identifiers:
            self._note(merged, identifier)
        return merged

    def items(self, state: IdentifiersState) -> list[Item]:
        # Seen only in an output: below the names in code written.
        below = len(state.identifiers)
        return [
            Item(_NAMES_TIER, rank - below, (f"- {i}",)) for rank, i in enumerate(state.identifiers)
        ]

    def parse(self, state: IdentifiersState, item: str) -> None:
        self._note(state, item)


# -- the last words, when nothing else is kept -------------------------------------------------


@dataclass
class LastWordsState:
    text: str = ""


class LastWords(Section[LastWordsState]):
    """The last thing the assistant said in the span, shown only when no other section keeps
    anything ("Fine by me, I'll hold to that rule."): a digest is never empty while its span
    said something."""

    name = "last words"
    events = (AssistantSaid,)
    heading = "## Last said by the assistant"
    fallback = True

    def new(self) -> LastWordsState:
        return LastWordsState()

    def observe(self, state: LastWordsState, event: Event, seq: int) -> None:
        if isinstance(event, AssistantSaid) and event.text.strip():
            state.text = " ".join(event.text.split())

    def merge(self, earlier: LastWordsState, later: LastWordsState) -> LastWordsState:
        return LastWordsState(later.text or earlier.text)

    def items(self, state: LastWordsState) -> list[Item]:
        return [Item(0, 0, _clip_forms(f"- {state.text}", 600, 200, 80))] if state.text else []

    def parse(self, state: LastWordsState, item: str) -> None:
        state.text = " ".join(item.split())


# -- an earlier summary's prose --------------------------------------------------------------


@dataclass
class NarrativeState:
    texts: list[str] = field(default_factory=list)


class Narrative(Section[NarrativeState]):
    """Prose of an earlier summary (an LLM's, or text in no known shape), kept as it was."""

    name = "narrative"
    heading = "## Summary"
    reads = ("## Earlier summary",)
    prose: ClassVar[bool] = True

    def new(self) -> NarrativeState:
        return NarrativeState()

    def merge(self, earlier: NarrativeState, later: NarrativeState) -> NarrativeState:
        return NarrativeState([*earlier.texts, *(t for t in later.texts if t not in earlier.texts)])

    def items(self, state: NarrativeState) -> list[Item]:
        out = []
        for rank, text in enumerate(state.texts[-2:]):
            forms = _distinct(
                "\n".join(indented(bounded_user_text(text, limit)))
                for limit in (4000, 1200, 400, 160)
            )
            out.append(Item(0, 1e9 + rank, forms))
        return out

    def parse(self, state: NarrativeState, item: str) -> None:
        if item.strip():
            state.texts.append(item.strip())


def default_sections(user_chars: int = 1200) -> tuple[Section[Any], ...]:
    """Every section, in the order a digest shows them."""
    return (
        Narrative(),
        UserWords(user_chars),
        Values(),
        Files(),
        Errors(),
        Tests(),
        Decisions(),
        Todos(),
        Commands(),
        Answers(),
        Notes(),
        Subjects(),
        Images(),
        CodeNames(),
        Identifiers(),
        LastWords(),
    )
