"""Tools an agent can call: Python callables with a JSON schema read from their type hints.

    @tool
    def read_file(path: str, max_chars: int = 100_000) -> str:
        \"\"\"Read a UTF-8 text file.

        Args:
            path: the file to read, relative to the working directory.
        \"\"\"

The schema comes from the signature (pydantic validates the arguments the model sends
against it), the description from the docstring's first paragraph, and each parameter's
description from its `Args:` entry. A tool's result is its return value as text (`str` as
it is, anything else as JSON); an exception becomes an error result the model can read.

Built-ins: `read_file`, `list_directory` and `recall` (bound to a session log). A workflow's
`tools:` names them, or imports `package.module:function`.

This module must never call a model.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from compaction.exceptions import ConfigError
from compaction.providers.base import ToolSpec
from compaction.recall import MAX_CHARS as MAX_RECALL_CHARS
from compaction.recall import SPEC as RECALL
from compaction.recall import answer_call

if TYPE_CHECKING:
    from compaction.log import SessionLog

__all__ = [
    "BUILTIN_TOOLS",
    "Tool",
    "ToolOutcome",
    "list_directory",
    "read_file",
    "recall_tool",
    "resolve_tools",
    "tool",
]

# The most characters of one tool result handed back to the model; the rest is cut with a
# note (the log keeps what the model saw).
MAX_RESULT_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced: the text the model reads, and whether it failed."""

    text: str
    is_error: bool = False


@dataclass(frozen=True)
class Tool:
    """A callable the model may call, with its name, description and argument schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    arguments_model: type[BaseModel] = field(repr=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def run(self, arguments: str | Mapping[str, Any]) -> ToolOutcome:
        """Call the tool with the model's arguments (raw JSON text or a mapping). Invalid
        arguments and exceptions come back as error outcomes, never raised."""
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as e:
                return ToolOutcome(f"invalid arguments for {self.name}: not JSON ({e})", True)
        else:
            parsed = dict(arguments)
        if not isinstance(parsed, dict):
            return ToolOutcome(
                f"invalid arguments for {self.name}: expected a JSON object, got "
                f"{type(parsed).__name__}",
                True,
            )
        try:
            validated = self.arguments_model.model_validate(parsed)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in e.errors()
            )
            return ToolOutcome(f"invalid arguments for {self.name}: {problems}", True)
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        try:
            value = self.function(**kwargs)
        except Exception as e:  # the model reads what went wrong and may try again
            return ToolOutcome(f"{type(e).__name__}: {e}", True)
        return ToolOutcome(_as_text(value))


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a `Tool` of a function: `@tool`, or `@tool(name=…, description=…)`."""

    def build(fn: Callable[..., Any]) -> Tool:
        return make_tool(fn, name=name, description=description)

    return build(function) if function is not None else build


def make_tool(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> Tool:
    if isinstance(fn, Tool):
        return fn
    tool_name = name or fn.__name__
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool_name):
        raise ConfigError(
            f"tool name {tool_name!r} must be 1–64 letters, digits, '_' or '-'",
            location="tools",
        )
    summary, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
    try:
        hints = get_type_hints(fn)
    except Exception as e:
        raise ConfigError(f"cannot read the type hints of {tool_name}: {e}") from e
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, _field(default, arg_docs.get(param.name)))
    model = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema = _clean_schema(model.model_json_schema())
    return Tool(
        name=tool_name,
        description=description if description is not None else summary,
        parameters=schema,
        function=fn,
        arguments_model=model,
    )


def _field(default: Any, doc: str | None) -> Any:
    from pydantic import Field

    return Field(default=default, description=doc) if doc else Field(default=default)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and `name: text` entries under an `Args:` heading."""
    paragraphs = doc.strip().split("\n\n")
    summary = " ".join(paragraphs[0].split()) if paragraphs and paragraphs[0] else ""
    args: dict[str, str] = {}
    in_args = False
    current = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            continue
        if not in_args:
            continue
        if not stripped:
            continue
        if not line.startswith(" "):  # the next section (Returns:, Raises:, …)
            in_args = False
            continue
        match = re.match(r"^\s*(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current:
            args[current] = f"{args[current]} {stripped}".strip()
    return summary, args


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic's schema without the titles models add nothing with."""

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: clean(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))
            }
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    cleaned: dict[str, Any] = clean(schema)
    cleaned.setdefault("properties", {})
    cleaned["additionalProperties"] = False
    return cleaned


def _as_text(value: Any) -> str:
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    if len(text) > MAX_RESULT_CHARS:
        cut = len(text) - MAX_RESULT_CHARS
        text = f"{text[:MAX_RESULT_CHARS]}\n[… {cut} more characters not shown]"
    return text


# -- built-ins -----------------------------------------------------------------------------


@tool
def read_file(path: str, offset: int = 0, max_chars: int = 100_000) -> str:
    """Read a UTF-8 text file and return its content.

    Args:
        path: the file to read, absolute or relative to the working directory.
        offset: the first character to return.
        max_chars: the most characters to return.
    """
    text = Path(path).expanduser().read_text(encoding="utf-8", errors="replace")
    chunk = text[offset : offset + max_chars]
    rest = len(text) - offset - len(chunk)
    return chunk + (f"\n[… {rest} more characters; read again with offset]" if rest > 0 else "")


@tool
def list_directory(path: str = ".") -> str:
    """List a directory: one entry per line, directories with a trailing slash.

    Args:
        path: the directory to list, absolute or relative to the working directory.
    """
    entries = sorted(os.scandir(Path(path).expanduser()), key=lambda e: e.name)
    return "\n".join(e.name + ("/" if e.is_dir() else "") for e in entries)


def recall_tool(log: SessionLog, *, limit: int = 5, max_chars: int = MAX_RECALL_CHARS) -> Tool:
    """The `recall` tool bound to a session log, declared and answered as every recall tool
    is (`compaction.recall`): a query that is an archive handle (`m-…`, as placeholders show
    it) gets that original whole, words get the matching lines of the best `limit` originals,
    each under its handle; `max_chars` bounds the answer."""

    def recall(query: str) -> str:
        return answer_call(
            lambda q: log.recall(q, limit=limit), {"query": query}, max_chars=max_chars
        )

    made = make_tool(recall, name=RECALL.name, description=RECALL.description)
    # The declaration is the shared one, word for word (the proxy's tool declares the same);
    # the arguments model made from the signature validates exactly that one string.
    return dataclasses.replace(made, parameters=RECALL.parameters)


BUILTIN_TOOLS: Mapping[str, Tool] = {t.name: t for t in (read_file, list_directory)}


def resolve_tools(
    names: Sequence[str | Tool | Callable[..., Any]], *, log: SessionLog | None = None
) -> list[Tool]:
    """Tools from a workflow's `tools:` entries: a built-in name (`read_file`,
    `list_directory`, `recall`), an import path `package.module:function`, or a callable."""
    tools: list[Tool] = []
    for i, entry in enumerate(names):
        if not isinstance(entry, str):
            tools.append(make_tool(entry))
        elif entry == "recall":
            if log is None:
                raise ConfigError("the recall tool needs a session log", location=f"tools[{i}]")
            tools.append(recall_tool(log))
        elif entry in BUILTIN_TOOLS:
            tools.append(BUILTIN_TOOLS[entry])
        elif ":" in entry:
            tools.append(make_tool(_import(entry, f"tools[{i}]")))
        else:
            known = ", ".join([*BUILTIN_TOOLS, "recall"])
            raise ConfigError(
                f"unknown tool {entry!r}: a built-in ({known}) or package.module:function",
                location=f"tools[{i}]",
            )
    seen: set[str] = set()
    for t in tools:
        if t.name in seen:
            raise ConfigError(f"two tools are named {t.name!r}", location="tools")
        seen.add(t.name)
    return tools


def _import(spec: str, where: str) -> Callable[..., Any]:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(
            f"cannot import {module_name!r} for tool {spec!r}: {e}", location=where
        ) from e
    value = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"{module_name!r} has no {attr!r} (tool {spec!r})", location=where)
        value = getattr(value, part)
    if not callable(value):
        raise ConfigError(f"tool {spec!r} is not callable", location=where)
    return value
