"""What every family shares: a session being written, the facts planted in it, filler.

A family is a `Voice` — how one agent's tools look (names, argument names, result formats)
and how its user and assistant talk — driven through one `story`: a task with files read,
edited, created and deleted, commands, a to-do list whose items get done, an error hit and
fixed and one still open, test runs whose result changes, values the user sets and then
changes ("make it 30 minutes instead of 10 minutes"), a plan the assistant reverses ("scrap
X … switching to Y"), a question the assistant answers with a value ("It is dd72245"), and a
last message (a voice may tell the story's second-thoughts variant instead, see `story`).
Facts are stated without cue words. Between the events, filler the agent reads
(source files, logs, listings) brings the session to its size.

Facts are checked as the ruler checks them (`compaction.eval.probes`): every probe string must
occur in the session, and no probe or stale string may occur in filler.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from compaction.dialects import OPENAI
from compaction.eval.probes import REQUIRED_CATEGORIES, Depth, Fact, FactCategory, text_of_message
from compaction.eval.sessions import EvalSession
from compaction.messages import Message, ToolResultPart

#: Characters per token of the filler and events (code, logs, prose), measured with
#: cl100k_base on these families' sessions.
CHARS_PER_TOKEN = 3.4


class ProbeLeakError(AssertionError):
    """A probe or stale string showed up where it was not planted (a generator bug)."""


@dataclass
class Planted:
    id: str
    category: FactCategory
    text: str
    probe: tuple[str, ...]
    stale: tuple[str, ...] = ()
    required: bool = True


@dataclass
class Session:
    """Messages (OpenAI Chat Completions) being written, facts planted, filler marked."""

    rng: random.Random
    system: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    facts: list[Planted] = field(default_factory=list)
    filler_at: set[int] = field(default_factory=set)
    _calls: int = 0

    def fact(
        self,
        category: FactCategory,
        text: str,
        probe: Sequence[str],
        *,
        stale: Sequence[str] = (),
        required: bool = True,
    ) -> Planted:
        planted = Planted(
            id=f"{category}-{sum(f.category == category for f in self.facts) + 1}",
            category=category,
            text=text,
            probe=tuple(probe),
            stale=tuple(stale),
            required=required,
        )
        self.facts.append(planted)
        return planted

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        result: str,
        *,
        text: str = "",
        filler: bool = False,
    ) -> None:
        """One assistant tool call and its result."""
        self._calls += 1
        call_id = f"call_{self._calls:03d}_{self.rng.randrange(16**6):06x}"
        self.messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                ],
            }
        )
        if filler:
            self.filler_at.add(len(self.messages) - 1)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        if filler:
            self.filler_at.add(len(self.messages) - 1)

    @property
    def chars(self) -> int:
        return sum(len(json.dumps(m)) for m in self.messages)


# --- the voice of one agent ------------------------------------------------------------------


class Voice:
    """One agent's tools and wording. Subclasses render each action in their own shape."""

    family: ClassVar[str] = "base"
    system_prompt: ClassVar[str] = ""
    src: ClassVar[str] = "src"
    ext: ClassVar[str] = "py"
    #: Three command lines (`{module}` filled in) the story runs as facts.
    commands: ClassVar[list[str]] = []
    #: Wording: key → phrasings, one drawn per use (`phrase`).
    phrases: ClassVar[dict[str, list[str]]] = {}
    #: The voice's own (setting, first value, later value, …) table; empty: the story's.
    settings: ClassVar[tuple[tuple[str, ...], ...]] = ()
    #: The voice's own (abandoned plan, its replacement, why, …) table; empty: the story's.
    plans: ClassVar[tuple[tuple[str, ...], ...]] = ()
    #: Tell the story's second-thoughts variant (`story`): a value changed twice, a plan
    #: revised twice, a second answer with a value to keep, a to-do added and one cancelled.
    #: It needs four-value `settings`, five-part `plans` and the variant's phrasings.
    second_thoughts: ClassVar[bool] = False

    def __init__(self, session: Session) -> None:
        self.s = session
        self.rng = session.rng

    @classmethod
    def file_name(cls, stem: str) -> str:
        """The name of the source file the story calls `stem` (`ledger_invoice`): by default
        the stem itself; a language whose files are named otherwise (Java's `LedgerInvoice`)
        says so here."""
        return f"{stem}.{cls.ext}"

    # tools
    def shell(self, command: str, output: str, *, exit_code: int = 0, filler: bool = False) -> None:
        raise NotImplementedError

    def read(self, path: str, content: str, *, filler: bool = False) -> None:
        raise NotImplementedError

    def edit(self, path: str, old: str, new: str) -> None:
        raise NotImplementedError

    def create(self, path: str, content: str) -> None:
        raise NotImplementedError

    def delete(self, path: str) -> None:
        self.shell(f"rm {path}", "")

    def move(self, source: str, destination: str) -> None:
        self.shell(f"mv {source} {destination}", "")

    def search(self, pattern: str, root: str, hits: Sequence[str], *, filler: bool = False) -> None:
        """A text search under `root`; `hits` are `path:line: text` lines."""
        self.shell(f"grep -rn {pattern} {root}", "\n".join(hits), filler=filler)

    def list_files(self, root: str, paths: Sequence[str], *, filler: bool = False) -> None:
        self.shell(f"ls -la {root}", listing(self.rng, paths), filler=filler)

    def todos(self, items: Sequence[tuple[str, str]]) -> None:
        """Write the to-do list: (text, status) with status pending / in_progress / completed
        (and cancelled, in the second-thoughts variant)."""
        raise NotImplementedError

    def user(self, text: str) -> None:
        """A message of the user's, as the agent records it (by default: as it was typed)."""
        self.s.user(text)

    def say(self, text: str) -> None:
        """Words of the assistant's to the user, as the agent records them (by default: a
        plain assistant message; an agent that answers only through a tool says so here)."""
        self.s.say(text)

    def finish(self, text: str) -> None:
        self.say(text)

    # wording: one phrasing is drawn per use
    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(list(options))

    def phrase(self, which: str, /, **values: str) -> str:
        return self.pick(self.phrases[which]).format(**values)

    # what the story's commands print
    @classmethod
    def test_id(cls, module: str, name: str) -> str:
        raise NotImplementedError

    def command_output(self, k: int) -> str:
        raise NotImplementedError

    def build_error(self, module: str) -> tuple[str, str, str]:
        """(the failing build's output, the probe naming its error, the build command)."""
        raise NotImplementedError

    def build_ok(self) -> str:
        raise NotImplementedError

    def measurement(self, figure: str) -> tuple[str, str]:
        """(a command's output that reports `figure`, the command): the variant only."""
        raise NotImplementedError

    def test_command(self) -> str:
        raise NotImplementedError

    def test_counts(self, failed: int, passed: int) -> str:
        """The counts of a test summary, as they appear in `test_output` (the probe)."""
        raise NotImplementedError

    def test_output(self, failing: Sequence[str], failed: int, passed: int) -> str:
        raise NotImplementedError


# --- words the story uses --------------------------------------------------------------------

_WORDS = (
    "ledger",
    "invoice",
    "shipment",
    "courier",
    "parcel",
    "tariff",
    "route",
    "depot",
    "manifest",
    "carrier",
    "customer",
    "account",
    "region",
    "quota",
    "billing",
    "report",
    "export",
    "import",
    "batch",
    "cursor",
    "window",
    "session",
    "token",
    "profile",
    "payload",
    "schema",
    "record",
    "entry",
    "cache",
    "index",
    "filter",
)  # fmt: skip


def ident(rng: random.Random, n: int = 2) -> str:
    return "_".join(rng.sample(_WORDS, n))


def hexid(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def camel(snake: str) -> str:
    """`ledger_invoice` → `LedgerInvoice`."""
    return "".join(part.title() for part in snake.split("_"))


def lower_camel(snake: str) -> str:
    """`orders_batches` → `ordersBatches`."""
    word = camel(snake)
    return word[:1].lower() + word[1:]


#: A line of the story's own code (`throttle_limit = 4`, `outbox_send(batch, tenant_id)`):
#: its module, the value a limit is set to (None for a send), whether a send passes the tenant.
STORY_LINE = re.compile(r"^([a-z]+)_(limit = (\S+)|send\(batch(, tenant_id)?\))$")


def token(rng: random.Random, n: int = 4) -> str:
    return "".join(rng.choice(string.ascii_uppercase) for _ in range(n))


# --- filler -----------------------------------------------------------------------------------


def code_file(rng: random.Random, lang: str, lines: int) -> str:
    """A plausible source file of about `lines` lines, made of filler words only."""
    out: list[str] = []
    while len(out) < lines:
        name = ident(rng)
        a, b = rng.sample(_WORDS, 2)
        if lang == "py":
            out += [
                f"def {name}({a}, {b}=None):",
                f'    """Return the {a} for {b}."""',
                f"    if {b} is None:",
                f"        {b} = load_{a}()",
                f"    result = [x for x in {a} if x.{b}_id == {b}.id]",
                f"    return sorted(result, key=lambda x: x.{rng.choice(_WORDS)})",
                "",
            ]
        elif lang == "rs":
            out += [
                f"pub fn {name}({a}: &{a.title()}, {b}: Option<&str>) -> Result<Vec<String>> {{",
                f'    let {b} = {b}.unwrap_or("{rng.choice(_WORDS)}");',
                f"    let items = {a}.iter().filter(|x| x.{b} == {b}).collect::<Vec<_>>();",
                "    Ok(items.into_iter().map(|x| x.to_string()).collect())",
                "}",
                "",
            ]
        elif lang == "go":
            out += [
                f"func {camel(name)}({a} *{a.title()}, {b} string) ([]string, error) {{",
                f'\tif {b} == "" {{',
                f'\t\t{b} = "{rng.choice(_WORDS)}"',
                "\t}",
                f"\titems := filter{a.title()}({a}, {b})",
                "\treturn items, nil",
                "}",
                "",
            ]
        elif lang == "kt":
            fun = lower_camel(name)
            out += [
                f"fun {fun}({a}: {a.title()}, {b}: String? = null): List<String> {{",
                f'    val key = {b} ?: "{rng.choice(_WORDS)}"',
                f"    return {a}.items.filter {{ it.{b} == key }}.map {{ it.id }}",
                "}",
                "",
            ]
        elif lang == "ex":
            out += [
                f"  def {name}({a}, {b} \\\\ nil) do",
                f"    {b} = {b} || load_{a}()",
                f"    {a}",
                f"    |> Enum.filter(&(&1.{b}_id == {b}.id))",
                f"    |> Enum.sort_by(& &1.{rng.choice(_WORDS)})",
                "  end",
                "",
            ]
        elif lang == "rb":
            out += [
                f"def {name}({a}, {b} = nil)",
                f"  {b} ||= load_{a}",
                f"  {a}.select {{ |x| x.{b}_id == {b}.id }}.sort_by(&:{rng.choice(_WORDS)})",
                "end",
                "",
            ]
        elif lang == "cs":
            out += [
                f"public IReadOnlyList<string> {camel(name)}({a.title()} {a}, string? {b} = null)",
                "{",
                f'    {b} ??= "{rng.choice(_WORDS)}";',
                f"    return {a}.Items.Where(x => x.{b.title()} == {b})"
                ".Select(x => x.Id).ToList();",
                "}",
                "",
            ]
        elif lang == "java":
            method = camel(name)[:1].lower() + camel(name)[1:]
            out += [
                f"    public List<String> {method}({a.title()} {a}, String {b}) {{",
                f"        if ({b} == null) {{",
                f'            {b} = "{rng.choice(_WORDS)}";',
                "        }",
                f"        return {a}.items().stream().filter(x -> {b}.equals(x.{b}()))"
                ".map(x -> x.id()).toList();",
                "    }",
                "",
            ]
        elif lang == "php":
            method = camel(name)[:1].lower() + camel(name)[1:]
            out += [
                f"    public function {method}({a.title()} ${a}, ?string ${b} = null): array",
                "    {",
                f"        ${b} ??= '{rng.choice(_WORDS)}';",
                f"        return array_values(array_filter(${a}->items, "
                f"fn ($x) => $x->{b} === ${b}));",
                "    }",
                "",
            ]
        elif lang == "cpp":
            # `export` is a C++ keyword: as a name it takes a trailing underscore.
            a, b, field = (w + "_" if w == "export" else w for w in (a, b, rng.choice(_WORDS)))
            out += [
                f"std::vector<std::string> {name}(const {camel(a)}& {a}, std::string_view {b}) {{",
                "    std::vector<std::string> found;",
                f"    for (const auto& item : {a}.items()) {{",
                f"        if (item.{b} == {b}) found.push_back(item.{field});",
                "    }",
                "    return found;",
                "}",
                "",
            ]
        elif lang == "swift":
            method = camel(name)[:1].lower() + camel(name)[1:]
            out += [
                f"    func {method}(_ {a}: {a.title()}, {b}: String? = nil) -> [String] {{",
                f'        let key = {b} ?? "{rng.choice(_WORDS)}"',
                f"        return {a}.items.filter {{ $0.{b} == key }}.map(\\.id)",
                "    }",
                "",
            ]
        elif lang == "dart":
            method = camel(name)[:1].lower() + camel(name)[1:]
            out += [
                f"  List<String> {method}({a.title()} {a}, {{String? {b}}}) {{",
                f"    final key = {b} ?? '{rng.choice(_WORDS)}';",
                f"    return {a}.items.where((x) => x.{b} == key).map((x) => x.id).toList();",
                "  }",
                "",
            ]
        elif lang == "zig":
            # `export` is a Zig keyword: as a name it takes a trailing underscore.
            a, b, field = (w + "_" if w == "export" else w for w in (a, b, rng.choice(_WORDS)))
            fun = lower_camel(name)
            out += [
                f"pub fn {fun}({a}: *const {camel(a)}, {b}: ?[]const u8) ![]const u8 {{",
                f'    const key = {b} orelse "{field}";',
                f"    for ({a}.items) |item| {{",
                f"        if (std.mem.eql(u8, item.{b}, key)) return item.id;",
                "    }",
                "    return error.NotFound;",
                "}",
                "",
            ]
        elif lang == "hs":
            # `import` is a Haskell keyword: as a name it takes a prime.
            a, b = (w + "'" if w == "import" else w for w in (a, b))
            fun = lower_camel(name)
            out += [
                f"{fun} :: {a.title()} -> Maybe Text -> [Text]",
                f"{fun} {a} {b} =",
                f'  let key = fromMaybe "{rng.choice(_WORDS)}" {b}',
                f"   in map {b}Id (filter ((== key) . {b}Key) ({a}Items {a}))",
                "",
            ]
        elif lang == "ml":
            # No filler word is an OCaml keyword; a record's type is its module's `t`.
            out += [
                f"let {name} ({a} : {a.title()}.t) ?{b} () =",
                f'  let {b} = Option.value {b} ~default:"{rng.choice(_WORDS)}" in',
                f"  {a}.items",
                f"  |> List.filter (fun x -> String.equal x.{b} {b})",
                "  |> List.map (fun x -> x.id)",
                "",
            ]
        elif lang == "scala":
            # `export` and `import` are Scala 3 keywords: as names they take an underscore.
            a, b = (w + "_" if w in ("export", "import") else w for w in (a, b))
            fun = lower_camel(name)
            out += [
                f"  def {fun}({a}: {camel(a.rstrip('_'))}, {b}: Option[String] = None): "
                "List[String] =",
                f'    val key = {b}.getOrElse("{rng.choice(_WORDS)}")',
                f"    {a}.items.filter(_.{b} == key).map(_.id)",
                "",
            ]
        elif lang == "R":
            out += [
                f"{name} <- function({a}, {b} = NULL) {{",
                f"  if (is.null({b})) {b} <- load_{a}()",
                f"  found <- Filter(function(x) identical(x${b}_id, {b}$id), {a})",
                f"  found[order(vapply(found, function(x) x${rng.choice(_WORDS)}, numeric(1)))]",
                "}",
                "",
            ]
        elif lang == "pm":
            # Perl 5.36 subroutine signatures; no filler word is a Perl keyword or builtin
            # that would break a sub name joined from two of them.
            out += [
                f"sub {name} (${a}, ${b} = undef) {{",
                f"    ${b} //= load_{a}();",
                f"    my @found = grep {{ $_->{{{b}_id}} eq ${b}->{{id}} }} @{{${a}}};",
                f"    return [ sort {{ $a->{{{rng.choice(_WORDS)}}} cmp $b->{{id}} }} @found ];",
                "}",
                "",
            ]
        elif lang == "jl":
            out += [
                f"function {name}({a}, {b}=nothing)",
                f"    {b} === nothing && ({b} = load_{a}())",
                f"    found = filter(x -> x.{b}_id == {b}.id, {a})",
                f"    return sort(found; by = x -> x.{rng.choice(_WORDS)})",
                "end",
                "",
            ]
        elif lang == "lua":
            # No filler word is a Lua keyword; a module's functions are locals it exports.
            out += [
                f"local function {name}({a}, {b})",
                f"  {b} = {b} or load_{a}()",
                "  local found = {}",
                f"  for _, x in ipairs({a}) do",
                f"    if x.{b}_id == {b}.id then found[#found + 1] = x end",
                "  end",
                f"  table.sort(found, function(p, q) return p.{rng.choice(_WORDS)} < q.id end)",
                "  return found",
                "end",
                "",
            ]
        elif lang == "nim":
            # `export` and `import` are Nim keywords; Nim names are camelCase (and may not
            # end in an underscore), so they become participles.
            a, b, field = ({"export": "exported", "import": "imported"}.get(w, w)
                           for w in (a, b, rng.choice(_WORDS)))  # fmt: skip
            out += [
                f'proc {lower_camel(name)}*({a}: {camel(a)}; {b} = ""): seq[string] =',
                f"  ## The ids of the {a} items whose {b} matches.",
                f'  let key = if {b}.len == 0: "{field}" else: {b}',
                f"  for item in {a}.items:",
                f"    if item.{b} == key: result.add item.id",
                "",
            ]
        elif lang == "cr":
            # Crystal: typed parameters (`name : Type`), nilable defaults; no filler word is
            # a Crystal keyword.
            out += [
                f"def {name}({a} : {a.title()}, {b} : String? = nil) : Array(String)",
                f'  key = {b} || "{rng.choice(_WORDS)}"',
                f"  {a}.items.select {{ |x| x.{b} == key }}.map(&.id)",
                "end",
                "",
            ]
        elif lang == "erl":
            # No filler word is an Erlang reserved word; variables are capitalised.
            fun = name
            out += [
                f"{fun}({a.title()}, {b.title()}) ->",
                f"    Found = [X || X <- {a.title()}, X#{a}.{b}_id =:= {b.title()}#{b}.id],",
                f"    lists:sort(fun(P, Q) -> P#{a}.{rng.choice(_WORDS)} =< Q#{a}.id end, Found).",
                "",
            ]
        elif lang == "elm":
            # `import` is an Elm keyword: as a name it becomes a participle.
            a, b = ("imported" if w == "import" else w for w in (a, b))
            fun = lower_camel(name)
            out += [
                f"{fun} : {camel(a)} -> Maybe String -> List String",
                f"{fun} {a} {b} =",
                "    let",
                "        key =",
                f'            Maybe.withDefault "{rng.choice(_WORDS)}" {b}',
                "    in",
                f"    List.map .id (List.filter (\\x -> x.{b} == key) {a}.items)",
                "",
            ]
        else:
            out += [
                f"export function {name.replace('_', '')}({a}: {a.title()}, {b}?: string) {{",
                f"  const found = {a}.items.filter((x) => x.{b} === {b});",
                f"  if (!found.length) return {{ {rng.choice(_WORDS)}: null }};",
                f"  return found.map((x) => ({{ id: x.id, {b}: x.{b} }}));",
                "}",
                "",
            ]
    return "\n".join(out[:lines])


def log_lines(rng: random.Random, lines: int) -> str:
    levels = ("INFO", "DEBUG", "INFO", "WARN")
    out = []
    for _ in range(lines):
        out.append(
            f"2026-11-{rng.randint(10, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            f":{rng.randint(0, 59):02d}Z {rng.choice(levels)} {ident(rng)} "
            f"{rng.choice(_WORDS)}={rng.randint(1, 9999)} took {rng.randint(1, 900)}ms"
        )
    return "\n".join(out)


def listing(rng: random.Random, paths: Sequence[str]) -> str:
    return "\n".join(
        f"-rw-r--r--  1 dev  staff  {rng.randint(200, 40000):>6} Nov {rng.randint(1, 30):>2} "
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {p}"
        for p in paths
    )


# --- building the session ---------------------------------------------------------------------


def finish_session(session: Session, *, family: str, seed: int) -> EvalSession:
    """The written session as an EvalSession: facts checked (every probe occurs, nothing in
    filler), planted_in and depth computed from where the probes occur."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": session.system}]
    messages += session.messages
    conversation = OPENAI.decode({"model": "gpt-4o", "messages": messages})
    # The text the ruler reads (`probes.text_of_message`): tool arguments as their JSON.
    plain = [text_of_message(m).casefold() for m in messages]
    sizes = [len(t) for t in plain]
    total = max(1, sum(sizes))
    facts = []
    for planted in session.facts:
        needles = [p.casefold() for p in planted.probe]
        where = tuple(i for i, t in enumerate(plain) if all(n in t for n in needles))
        if not where:
            raise ProbeLeakError(f"{family} seed {seed}: {planted.id} probe {planted.probe} absent")
        for i in session.filler_at:
            for needle in (*needles, *(s.casefold() for s in planted.stale)):
                if needle in plain[i + 1]:
                    raise ProbeLeakError(f"{family} seed {seed}: {needle!r} in filler message")
        position = sum(sizes[: where[0]]) / total
        depth: Depth = "early" if position < 1 / 3 else "middle" if position < 2 / 3 else "late"
        facts.append(
            Fact(
                id=planted.id,
                category=planted.category,
                text=planted.text,
                probe=planted.probe,
                depth=depth,
                cued=False,
                critical=planted.required and planted.category in REQUIRED_CATEGORIES,
                stale=planted.stale,
                required=planted.required,
                planted_in=where,
            )
        )
    return EvalSession(
        name=f"{family} seed {seed}",
        conversation=conversation,
        facts=tuple(facts),
        source="generated",
        tags={"source": family, "family": family, "seed": str(seed)},
    )


def flag_errors(session: EvalSession, errors: set[str]) -> EvalSession:
    """`session` with the results of the calls `errors` names marked as errors, as an agent
    that flags a failed or refused tool call sends them (`is_error`)."""

    def flagged(message: Message) -> Message:
        if not any(r.tool_call_id in errors for r in message.tool_results):
            return message
        parts = tuple(
            replace(p, is_error=True)
            if isinstance(p, ToolResultPart) and p.tool_call_id in errors
            else p
            for p in message.parts
        )
        return replace(message, parts=parts)

    conversation = session.conversation.with_messages(
        flagged(m) for m in session.conversation.messages
    )
    return replace(session, conversation=conversation)


Writer = Callable[[int, int], EvalSession]


def filled_groups(
    groups: dict[str, list[str]], others: Sequence[str], total: int, names: Sequence[str]
) -> list[tuple[str, list[str]]]:
    """A test run's groups (suites, spec modules): `groups` with the tests named in them,
    then the `others`, empty, all filled in turn from `names` until they hold `total` tests."""
    for other in others:
        groups[other] = []
    order = list(groups)
    k = 0
    while sum(len(t) for t in groups.values()) < total:
        groups[order[k % len(order)]].append(names[k % len(names)])
        k += 1
    return [(group, groups[group]) for group in order]
