"""Agent workflow configuration: the YAML file that declares the agents the runtime runs.

A workflow file has top-level defaults and an `agents` list. Each agent's effective settings
are the library defaults, overlaid by the top-level defaults, by what legacy `transforms` or
a `summarizer` imply, and by what the agent sets itself — field by field, `compact` key by
key (nested mappings deeply, lists replaced whole). Every effective value remembers where it
came from (`AgentConfig.sources`), so `compaction config show` can say why a value is what it
is.

    workflow = load_workflow("agents.yaml")
    coder = workflow.agent("coder")
    coder.compact.token_threshold, coder.sources["compact.token_threshold"]   # 60000, "agent"

The older Forge form `transforms: [{assistant: {agent_id, token_limit, ...}}]` is still read:
it warns (`LegacyTransformsWarning` and the `compaction` logger) and is mapped onto `compact`.

This module must never import a user's tools, read environment variables or call a provider:
it only reads and validates the file it is given; the runtime acts on the result.
"""

from __future__ import annotations

import difflib
import logging
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from compaction.config import CompactionConfig, PinRules
from compaction.exceptions import ConfigError
from compaction.tools import BUILTIN_TOOLS as CALLABLE_BUILTINS

logger = logging.getLogger("compaction")

BUILTIN_TOOLS: frozenset[str] = frozenset({*CALLABLE_BUILTINS, "recall"})
"""Tools the runtime provides by name; any other tool is an import path `module:function`."""

Source = Literal["agent", "defaults", "transforms", "summarizer", "built-in"]
"""Where an effective value came from: set on the agent, set at top level, implied by legacy
`transforms`, taken from the summarizer agent (its model becomes `compact.model`), or the
library default."""

SOURCES: tuple[Source, ...] = ("agent", "defaults", "transforms", "summarizer", "built-in")

#: Keys an agent may set and the top level may default.
AGENT_KEYS = (
    "model",
    "provider",
    "base_url",
    "api_key_env",
    "system_prompt",
    "tools",
    "max_turns",
    "max_output_tokens",
    "temperature",
    "stream",
    "compact",
)
TOP_LEVEL_KEYS = (*AGENT_KEYS, "store", "agents")
AGENT_ONLY_KEYS = ("id", "description", "summarizer", "transforms")

_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STORE_SCHEMES = ("sqlite", "postgres", "postgresql")


class LegacyTransformsWarning(DeprecationWarning):
    """An agent uses the deprecated `transforms:` setting; it was mapped onto `compact`."""


class AgentConfig(BaseModel):
    """One agent's effective settings. Construct it directly or get it from a workflow file.

    `compact.model` is the compaction model; when `summarizer` names another agent, that
    agent's provider, `base_url` and `api_key_env` serve it (`WorkflowConfig.summarizer_for`),
    otherwise this agent's own do.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, strict=True)
    description: str | None = None
    model: str = Field(min_length=1, strict=True)
    provider: Literal["openai", "anthropic"] = "openai"
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key."
    )
    system_prompt: str | None = None
    tools: tuple[str, ...] = Field(
        default=(), description="Built-in tool names or import paths `package.module:function`."
    )
    max_turns: int = Field(
        default=20, gt=0, strict=True, description="Model calls allowed per user event."
    )
    max_output_tokens: int | None = Field(default=None, gt=0, strict=True)
    stream: bool = Field(
        default=True,
        strict=True,
        description="Stream the model's answers (turn off for servers that cannot stream "
        "tool calls, such as llama-cpp-python's function-calling formats).",
    )
    temperature: float | None = Field(default=None, ge=0, le=2, strict=True)
    summarizer: str | None = Field(
        default=None,
        min_length=1,
        description="Id of the agent whose model, provider and endpoint write the summaries.",
    )
    compact: CompactionConfig = Field(default_factory=CompactionConfig)

    _sources: dict[str, Source] = PrivateAttr(default_factory=dict)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"expected an http:// or https:// URL, got {url!r}")
        return url

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, name: str | None) -> str | None:
        if name is not None and not _ENV_NAME.match(name):
            raise ValueError(
                "expected the name of an environment variable (e.g. OPENAI_API_KEY), "
                "not the key itself"
            )
        return name

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, tools: tuple[str, ...]) -> tuple[str, ...]:
        seen: set[str] = set()
        for tool in tools:
            if tool in seen:
                raise ValueError(f"tool {tool!r} is listed twice")
            seen.add(tool)
            if tool not in BUILTIN_TOOLS and not _IMPORT_PATH.match(tool):
                raise ValueError(
                    f"unknown tool {tool!r}: expected a built-in tool "
                    f"({', '.join(sorted(BUILTIN_TOOLS))}) or an import path "
                    "`package.module:function`"
                )
        return tools

    @property
    def sources(self) -> Mapping[str, Source]:
        """Where each effective value came from, by dotted key path (`compact.pin.patterns`).

        Lists are one value (`tools`, `compact.strategies`). For an agent built in Python,
        what the constructor was given is `agent` and the rest `built-in`."""
        if not self._sources:
            self._sources.update(_sources_from_fields_set(self))
        return MappingProxyType(self._sources)

    def source_of(self, key: str) -> Source:
        """The source of one dotted key path; a mapping's source when all its values agree."""
        sources = self.sources
        if key in sources:
            return sources[key]
        below = {s for k, s in sources.items() if k.startswith(key + ".")}
        if len(below) == 1:
            return below.pop()
        raise KeyError(key)

    def effective(self) -> dict[str, Any]:
        """The effective settings as plain JSON-compatible data (strategies in full)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "config") -> AgentConfig:
        """Validate one agent's mapping alone (no defaults, no other agents)."""
        return _resolve({"agents": [data]}, source, None, within=("agents", 0)).agents[0]


class WorkflowConfig(BaseModel):
    """The agents of a workflow file, resolved, and where the session store is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: tuple[AgentConfig, ...] = Field(min_length=1)
    store: str | None = Field(
        default=None, description="Path or sqlite URL of the session store, as written."
    )
    source: str | None = Field(default=None, description="The file it was read from.")

    @field_validator("store")
    @classmethod
    def _store_location(cls, store: str | None) -> str | None:
        if store is None:
            return None
        if not store.strip():
            raise ValueError('expected a file path or a sqlite:/// or postgresql:// URL, got ""')
        scheme, sep, _ = store.partition("://")
        if sep and scheme not in _STORE_SCHEMES:
            raise ValueError(
                f"expected a file path or a sqlite:/// or postgresql:// URL, got {store!r}"
            )
        return store

    @model_validator(mode="after")
    def _consistent(self) -> WorkflowConfig:
        ids = [a.id for a in self.agents]
        for agent_id in ids:
            if ids.count(agent_id) > 1:
                raise ValueError(f"duplicate agent id {agent_id!r}")
        for agent in self.agents:
            if agent.summarizer is not None and agent.summarizer not in ids:
                raise ValueError(
                    f"agent {agent.id!r}: unknown summarizer {agent.summarizer!r} "
                    f"(known: {', '.join(ids)})"
                )
        return self

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(a.id for a in self.agents)

    @property
    def store_source(self) -> Source:
        return "defaults" if self.store is not None else "built-in"

    def agent(self, agent_id: str) -> AgentConfig:
        """The agent with this id; a `ConfigError` naming the known ids otherwise."""
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        raise ConfigError(
            f"unknown agent {agent_id!r} (known: {', '.join(self.ids)})",
            location=self.source,
        )

    def summarizer_for(self, agent: str | AgentConfig) -> AgentConfig | None:
        """The agent whose provider, `base_url` and `api_key_env` serve `agent`'s compaction
        model (`agent.compact.model`), or None when `agent` names no summarizer."""
        config = self.agent(agent) if isinstance(agent, str) else agent
        return self.agent(config.summarizer) if config.summarizer else None

    def to_dict(self) -> dict[str, Any]:
        """Machine-readable form: every agent's effective settings and their sources."""
        return {
            "file": self.source,
            "store": {"value": self.store, "source": self.store_source},
            "agents": [
                {"id": a.id, "config": a.effective(), "sources": dict(a.sources)}
                for a in self.agents
            ],
        }

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "config") -> WorkflowConfig:
        """Resolve a workflow mapping. Errors are `ConfigError`s naming `source` and the key
        path (`agents[1].compact.keep_recent_n`)."""
        return _resolve(data, source, None)

    @classmethod
    def from_yaml(cls, path: str | Path) -> WorkflowConfig:
        return load_workflow(path)


def load_workflow(path: str | Path) -> WorkflowConfig:
    """Read and resolve a workflow YAML file. Errors name the file, the line when known, the
    key path and what was expected."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", location=name) from None
    except UnicodeDecodeError:
        raise ConfigError("cannot read: not UTF-8 text", location=name) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        raise ConfigError(_yaml_problem(e), location=_yaml_location(name, e)) from None
    finally:
        loader.dispose()
    if node is not None:
        _reject_duplicate_keys(node, (), name)
    return _resolve(data, name, node)


# Resolution -----------------------------------------------------------------------------------

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class _Problem:
    path: Path_
    message: str


class _Problems(Exception):
    def __init__(self, problems: list[_Problem]) -> None:
        self.problems = problems
        super().__init__(problems)


@dataclass(frozen=True)
class _Legacy:
    """The one assistant transform of an agent, validated."""

    path: Path_  # where agent_id/token_limit live
    agent_id: str
    token_limit: int


def _resolve(
    data: Any, source: str, node: yaml.Node | None, *, within: Path_ = ()
) -> WorkflowConfig:
    """Resolve, turning problems into one `ConfigError`; paths are shown relative to
    `within` (an agent validated alone)."""
    try:
        return _resolve_or_raise(data, source)
    except _Problems as e:
        first = e.problems[0].path
        line = _line_of(node, first) if node is not None else None
        location = f"{source}:{line}" if line is not None else source
        paths = [
            p.path[len(within) :] if p.path[: len(within)] == within else p.path for p in e.problems
        ]
        text = "; ".join(
            f"{_show(path)}: {p.message}" if path else p.message
            for path, p in zip(paths, e.problems, strict=True)
        )
        raise ConfigError(text, location=location) from None


def _fail(path: Path_, message: str) -> _Problems:
    return _Problems([_Problem(path, message)])


def _resolve_or_raise(data: Any, source: str) -> WorkflowConfig:
    if data is None:
        raise _fail((), "expected a mapping with an `agents` list, got an empty file")
    if not isinstance(data, dict):
        raise _fail((), f"expected a mapping with an `agents` list, got {_kind(data)}")
    _check_keys(data, TOP_LEVEL_KEYS, ())
    defaults = {k: v for k, v in data.items() if k in AGENT_KEYS}
    if "compact" in defaults:
        defaults["compact"] = _mapping_or_empty(defaults["compact"], ("compact",))
    if "agents" not in data:
        raise _fail(("agents",), "required: a list of agents, each with an `id`")
    raw_agents = data["agents"]
    if not isinstance(raw_agents, list) or not raw_agents:
        got = "an empty list" if raw_agents == [] else _kind(raw_agents)
        raise _fail(("agents",), f"expected a non-empty list of agents, got {got}")

    ids: dict[str, int] = {}
    for i, raw in enumerate(raw_agents):
        where: Path_ = ("agents", i)
        if not isinstance(raw, dict):
            raise _fail(where, f"expected a mapping with an `id`, got {_kind(raw)}")
        _check_keys(raw, (*AGENT_ONLY_KEYS, *AGENT_KEYS), where)
        agent_id = raw.get("id")
        if not isinstance(agent_id, str) or not agent_id.strip():
            got = "nothing" if agent_id is None else repr(agent_id)
            raise _fail((*where, "id"), f"required: a non-empty string, got {got}")
        if agent_id in ids:
            raise _fail(
                (*where, "id"), f"duplicate agent id {agent_id!r} (also agents[{ids[agent_id]}])"
            )
        ids[agent_id] = i

    agents = tuple(
        _resolve_agent(i, raw, defaults, raw_agents, ids, source)
        for i, raw in enumerate(raw_agents)
    )
    store = data.get("store")
    try:
        return WorkflowConfig(agents=agents, store=store, source=source)
    except ValidationError as e:
        raise _Problems([_Problem(("store",), _message(item)) for item in e.errors()]) from None


def _resolve_agent(
    index: int,
    raw: dict[str, Any],
    defaults: dict[str, Any],
    raw_agents: list[dict[str, Any]],
    ids: dict[str, int],
    source: str,
) -> AgentConfig:
    where: Path_ = ("agents", index)
    agent_id: str = raw["id"]
    own = {k: v for k, v in raw.items() if k != "transforms"}
    if "compact" in own:
        own["compact"] = _mapping_or_empty(own["compact"], (*where, "compact"))
    legacy = _parse_transforms(raw.get("transforms"), (*where, "transforms"), source, agent_id)

    summarizer = own.get("summarizer")
    if summarizer is not None and (not isinstance(summarizer, str) or summarizer not in ids):
        raise _fail(
            (*where, "summarizer"),
            f"unknown agent {summarizer!r}: expected one of {', '.join(map(repr, ids))}",
        )
    if legacy is not None and legacy.agent_id not in ids:
        raise _fail(
            (*legacy.path, "agent_id"),
            f"unknown agent {legacy.agent_id!r}: expected one of {', '.join(map(repr, ids))}",
        )

    layers: list[tuple[Source, dict[str, Any]]] = [("defaults", defaults)]
    if legacy is not None:
        layers.append(
            (
                "transforms",
                {
                    "summarizer": legacy.agent_id,
                    "compact": {
                        "token_threshold": legacy.token_limit,
                        "strategies": [{"kind": "sequence"}],
                    },
                },
            )
        )
    writer = summarizer if summarizer is not None else (legacy.agent_id if legacy else None)
    writer_model = None
    if writer is not None:
        other = raw_agents[ids[writer]]
        writer_model = other.get("model", defaults.get("model"))
        if isinstance(writer_model, str):
            origin: Source = "summarizer" if summarizer is not None else "transforms"
            layers.append((origin, {"compact": {"model": writer_model}}))
    layers.append(("agent", own))
    merged, sources = _merge(layers)

    if legacy is not None:
        model = writer_model if isinstance(writer_model, str) else None
        _warn_legacy(source, index, agent_id, legacy, model, own, summarizer)

    try:
        config = AgentConfig.model_validate(merged)
    except ValidationError as e:
        raise _Problems(
            [_problem_from(item, index, merged, sources, legacy) for item in e.errors()]
        ) from None
    config._sources.update(_effective_sources(config, sources))
    return config


def _merge(
    layers: list[tuple[Source, dict[str, Any]]],
) -> tuple[dict[str, Any], dict[Path_, Source]]:
    """Overlay the layers in order: mappings merge key by key, anything else (lists too) is
    replaced whole. Returns the merged mapping and the source of every leaf."""
    merged: dict[str, Any] = {}
    sources: dict[Path_, Source] = {}
    for name, layer in layers:
        _merge_into(merged, layer, (), name, sources)
    return merged, sources


def _merge_into(
    target: dict[str, Any],
    layer: Mapping[str, Any],
    prefix: Path_,
    name: Source,
    sources: dict[Path_, Source],
) -> None:
    for key, value in layer.items():
        path = (*prefix, key)
        if isinstance(value, dict) and value:
            if not isinstance(target.get(key), dict):
                _forget(sources, path)
                target[key] = {}
            _merge_into(target[key], value, path, name, sources)
        else:
            _forget(sources, path)
            target[key] = dict(value) if isinstance(value, dict) else value
            sources[path] = name


def _forget(sources: dict[Path_, Source], path: Path_) -> None:
    for known in [k for k in sources if k[: len(path)] == path]:
        del sources[known]


def _lookup(sources: Mapping[Path_, Source], path: Path_) -> Source:
    for end in range(len(path), 0, -1):
        found = sources.get(path[:end])
        if found is not None:
            return found
    return "built-in"


def _effective_sources(config: AgentConfig, tracked: Mapping[Path_, Source]) -> dict[str, Source]:
    return {
        ".".join(map(str, path)): _lookup(tracked, path)
        for path in _leaves(config.model_dump(mode="json"), ())
    }


def _leaves(value: Any, prefix: Path_) -> Iterator[Path_]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*prefix, key))
    elif prefix:
        yield prefix


def _sources_from_fields_set(model: BaseModel) -> dict[str, Source]:
    """Sources of a model built in Python: what its constructor was given is `agent`."""
    tracked: dict[Path_, Source] = {}

    def walk(value: BaseModel, prefix: Path_) -> None:
        for name in value.model_fields_set:
            item = getattr(value, name)
            if isinstance(item, BaseModel):
                walk(item, (*prefix, name))
            else:
                tracked[(*prefix, name)] = "agent"

    walk(model, ())
    return {
        ".".join(map(str, path)): _lookup(tracked, path)
        for path in _leaves(model.model_dump(mode="json"), ())
    }


# Legacy transforms ----------------------------------------------------------------------------

_TRANSFORM_KEYS = ("agent_id", "token_limit", "input", "output")


def _parse_transforms(value: Any, where: Path_, source: str, agent_id: str) -> _Legacy | None:
    """The agent's assistant transform, validated; None when there is none."""
    if value is None or value == []:
        if value == []:
            _warn(
                f"{source}: agents[{where[1]}] ({agent_id}): `transforms` is deprecated and "
                "empty here: remove it"
            )
        return None
    if not isinstance(value, list):
        raise _fail(where, f"expected a list of transforms, got {_kind(value)}")
    found: _Legacy | None = None
    for j, item in enumerate(value):
        path: Path_ = (*where, j)
        if isinstance(item, dict) and "type" in item:
            kind, body, body_path = (
                item["type"],
                {k: v for k, v in item.items() if k != "type"},
                path,
            )
        elif isinstance(item, dict) and len(item) == 1:
            kind, body = next(iter(item.items()))
            body_path = (*path, kind)
            if body is None:
                body = {}
        else:
            raise _fail(
                path,
                "expected `{assistant: {agent_id: ..., token_limit: ...}}` or "
                f"`{{type: assistant, ...}}`, got {_kind(item)}",
            )
        if kind != "assistant":
            raise _fail(
                path,
                f"unsupported transform {kind!r}: only `assistant` transforms can be read "
                "(migrate to `compact`, see the README)",
            )
        if not isinstance(body, dict):
            raise _fail(body_path, f"expected a mapping, got {_kind(body)}")
        _check_keys(body, _TRANSFORM_KEYS, body_path)
        target = body.get("agent_id")
        if not isinstance(target, str) or not target:
            raise _fail((*body_path, "agent_id"), "required: the id of the summarizing agent")
        limit = body.get("token_limit")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
            got = "nothing" if limit is None else repr(limit)
            raise _fail((*body_path, "token_limit"), f"required: a positive integer, got {got}")
        for key in ("input", "output"):
            if body.get(key, "context") != "context":
                raise _fail(
                    (*body_path, key),
                    f"only `context` is supported, got {body[key]!r}",
                )
        if found is not None:
            raise _fail(path, "only one assistant transform per agent is supported")
        found = _Legacy(body_path, target, limit)
    return found


def _warn_legacy(
    source: str,
    index: int,
    agent_id: str,
    legacy: _Legacy,
    model: str | None,
    own: Mapping[str, Any],
    summarizer: Any,
) -> None:
    mapped = [f"token_threshold: {legacy.token_limit}"]
    if model is not None:
        mapped.append(f"model: {model}")
    mapped.append("strategies: [sequence]")
    message = (
        f"{source}: agents[{index}] ({agent_id}): `transforms` is deprecated; read as "
        f"`compact: {{{', '.join(mapped)}}}` and `summarizer: {legacy.agent_id}`. "
        "Write those on the agent instead (README: 'Migrating from transforms')"
    )
    explicit = own.get("compact")
    if isinstance(explicit, dict) and explicit:
        both = sorted(set(explicit) & {"token_threshold", "model", "strategies"})
        message += "; the agent's own `compact` values win" + (
            f" ({', '.join(both)})" if both else ""
        )
    if summarizer is not None and summarizer != legacy.agent_id:
        message += f"; its own `summarizer: {summarizer}` wins"
    _warn(message)


def _warn(message: str) -> None:
    # Attribute the warning to the caller of this module, so filters by module work.
    level, frame = 1, sys._getframe(1)
    while frame.f_globals.get("__name__") == __name__ and frame.f_back is not None:
        level, frame = level + 1, frame.f_back
    warnings.warn(message, LegacyTransformsWarning, stacklevel=level)
    logger.warning(message)


# Errors ----------------------------------------------------------------------------------------


def _check_keys(data: Mapping[Any, Any], allowed: tuple[str, ...], where: Path_) -> None:
    for key in data:
        if key in allowed:
            continue
        name = str(key)
        close = difflib.get_close_matches(name, allowed, n=1)
        hint = f"did you mean `{close[0]}`?" if close else f"expected one of: {', '.join(allowed)}"
        raise _fail((*where, name), f"unknown key ({hint})")


def _mapping_or_empty(value: Any, where: Path_) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(where, f"expected a mapping of compaction settings, got {_kind(value)}")
    return value


def _problem_from(
    item: Any,
    index: int,
    merged: Mapping[str, Any],
    sources: Mapping[Path_, Source],
    legacy: _Legacy | None,
) -> _Problem:
    """Place a validation error where the offending value was written: on the agent, at top
    level, or in its legacy transform."""
    loc = _drop_union_tags(tuple(item["loc"]), merged)
    origin = _lookup(sources, loc)
    agent: Path_ = ("agents", index)
    if item["type"] == "missing" and loc == ("model",):
        return _Problem((*agent, "model"), "required: set it on the agent or at top level")
    message = _message(item, loc)
    if origin == "defaults":
        return _Problem(loc, message)
    if origin == "transforms" and legacy is not None:
        if loc == ("compact", "token_threshold"):
            return _Problem((*legacy.path, "token_limit"), message)
        return _Problem(legacy.path, f"{_show(loc)}: {message}")
    if origin == "summarizer":
        return _Problem((*agent, "summarizer"), f"{_show(loc)}: {message}")
    return _Problem((*agent, *loc), message)


_KNOWN_KEYS: dict[Path_, list[str]] = {
    ("compact",): list(CompactionConfig.model_fields),
    ("compact", "pin"): list(PinRules.model_fields),
}


def _drop_union_tags(loc: Path_, data: Any) -> Path_:
    """Pydantic puts a discriminated union's tag into the location (`strategies.0.mask.x`);
    the user wrote `strategies[0].x`."""
    kept: list[str | int] = []
    node = data
    skip_next = False
    for i, part in enumerate(loc):
        if skip_next:
            skip_next = False
            continue
        kept.append(part)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            tag = loc[i + 1] if i + 1 < len(loc) else None
            if isinstance(node, dict) and node.get("kind") == tag and tag not in node:
                skip_next = True
        else:
            node = None
    return tuple(kept)


def _message(item: Any, loc: Path_ = ()) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        known = _KNOWN_KEYS.get(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1) if known and loc else []
        return f"unknown key (did you mean `{close[0]}`?)" if close else "unknown key"
    if kind == "missing":
        return "required"
    msg: str = item["msg"].removeprefix("Value error, ")
    msg = msg.replace("a valid tuple", "a list")
    if kind.endswith("_type") or kind in ("literal_error", "model_type", "dict_type"):
        value = item.get("input")
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
        msg += (
            f", got {_kind(value)} {shown}"
            if not isinstance(value, dict | list)
            else (f", got {_kind(value)}")
        )
    return msg


def _show(path: Path_) -> str:
    """`agents[1].compact.keep_recent_n`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _kind(value: Any) -> str:
    names = {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "nothing",
    }
    return names.get(type(value), type(value).__name__)


# YAML ----------------------------------------------------------------------------------------


def _yaml_problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError):
        parts = [p for p in (error.context, error.problem) if p]
        return "not valid YAML: " + ", ".join(parts)
    return f"not valid YAML: {error}"


def _yaml_location(name: str, error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return name
    return f"{name}:{mark.line + 1}:{mark.column + 1}"


def _reject_duplicate_keys(node: yaml.Node, path: Path_, name: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                raise ConfigError(
                    f"{_show((*path, key))}: key appears twice",
                    location=f"{name}:{key_node.start_mark.line + 1}",
                )
            seen.add(key)
            _reject_duplicate_keys(value_node, (*path, key), name)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _reject_duplicate_keys(item, (*path, i), name)


def _line_of(node: yaml.Node, path: Path_) -> int | None:
    """The line of the deepest part of `path` present in the file."""
    line: int = node.start_mark.line + 1
    for part in path:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if str(key_node.value) == str(part):
                    child, line = value_node, key_node.start_mark.line + 1
                    break
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


__all__ = [
    "BUILTIN_TOOLS",
    "SOURCES",
    "AgentConfig",
    "LegacyTransformsWarning",
    "Source",
    "WorkflowConfig",
    "load_workflow",
]
