"""The contract between the loop and a tool: schema, validation, context, output.

Tools live in ``nbagent.tools`` (and MCP servers); the engine only knows this interface. Input
validation is pydantic's: a tool declares a pydantic model, and its JSON schema is what the model
sees, so the schema and the check cannot drift apart.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol, Sequence, TypeAlias, runtime_checkable

import pydantic

from .config import DEFAULT_TOOL_CAPTURE_LIMIT, DEFAULT_TOOL_OUTPUT_LIMIT
from .errors import NbAgentError
from .events import CallPreview
from .json_types import JSONObject, JSONValue
from .messages import is_text

MCP_TOOL_PREFIX = "mcp__"
"""How the name of an MCP server's tool starts (``mcp__SERVER__TOOL``): such tools come and go with
their server's connection."""

ToolInput: TypeAlias = "dict[str, JSONValue]"
"""A tool call's input once validated: the JSON object its schema allows (what ``run`` gets)."""


class ToolInputError(NbAgentError):
    """The model's input for a tool does not match its schema; the message is sent to the model."""


class ToolExecutionError(NbAgentError):
    """A tool failed in a way the model should hear about (sent as an ``is_error`` result)."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: ``content`` goes to the model, ``display`` (if any) to the notebook.
    List content holds a tool result's blocks (text, image, document: ``ToolResultContent``'s shapes)."""

    content: str | list[JSONObject]
    is_error: bool = False
    display: str | None = None


@dataclass
class ToolContext:
    """What a running tool may use: where it is, what it may touch, and how to notice an abort."""

    cwd: Path
    turn: int = 0
    abort: asyncio.Event | None = None
    file_state: Any = None  # engine.file_state.FileStateCache
    allowed_paths: tuple[Path, ...] = ()
    executor: Any = None  # the python tool's executor (tools.python.Executor)
    shell_enabled: bool = False
    # Content longer than this is cut in the middle (:func:`truncate_middle`); the full text
    # goes to ToolOutput.display so the notebook can still show it.
    max_output_chars: int = DEFAULT_TOOL_OUTPUT_LIMIT
    tool_use_id: str = ""
    env: Mapping[str, str] | None = None
    """Environment for processes a tool starts (secrets removed); None: the process's own."""
    capture_limit: int = DEFAULT_TOOL_CAPTURE_LIMIT
    """Most characters of output a tool should capture (the loop cuts anything longer anyway)."""
    redact: Callable[[str], str] | None = None
    """The loop's redaction of secrets (None: none known). A tool that cuts text it shows (a cell's
    output) redacts it first: a secret cut in two would no longer match its value."""


@runtime_checkable
class ToolLike(Protocol):
    """Anything the loop can offer to the model and run."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def read_only(self) -> bool: ...

    def schema(self) -> JSONObject: ...

    def validate(self, raw_input: object) -> ToolInput: ...

    async def run(self, tool_input: ToolInput, ctx: ToolContext) -> ToolOutput: ...


@runtime_checkable
class PreviewsCalls(Protocol):
    """A tool that can show what a call will change before the user decides (the notebook tools:
    the cell as it is and as it will be). The loop calls ``preview`` only when it asks the user, and
    puts the result (secrets redacted) in :class:`~.events.PermissionAsked`; a preview that fails or
    returns None leaves the question with the input alone."""

    async def preview(self, tool_input: ToolInput, ctx: ToolContext) -> CallPreview | None: ...


@runtime_checkable
class ToolSource(Protocol):
    """Where the loop gets its tools from before each request (built-ins, an MCP manager).

    ``ready()`` waits (boundedly, by itself) for tools still arriving and returns warnings to show;
    it must not raise. ``tools()`` lists what is offered now.
    """

    async def ready(self) -> list[str]: ...

    def tools(self) -> Sequence[ToolLike]: ...


class StaticTools:
    """A fixed list of tools as a :class:`ToolSource` (the built-ins, a script's own tools)."""

    def __init__(self, tools: Iterable[ToolLike] = ()) -> None:
        self._tools = tuple(tools)

    def __repr__(self) -> str:
        return f"StaticTools({[t.name for t in self._tools]})"

    async def ready(self) -> list[str]:
        return []

    def tools(self) -> Sequence[ToolLike]:
        return self._tools


class Tool:
    """Base class for built-in tools: set ``name``, ``description``, ``Input`` and ``read_only``,
    and implement :meth:`run`."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    read_only: ClassVar[bool] = False
    edits_files: ClassVar[bool] = False
    """Whether the tool only writes the file named by its ``path`` input (``accept_edits`` mode)."""
    resolves_path: ClassVar[bool] = False
    """Whether ``path`` names a file or folder relative to cwd: the loop then resolves it once
    (``~``, ``..``, symlinks) and hooks, the permission check and the tool all get the real path."""
    Input: ClassVar[type[pydantic.BaseModel]]

    def schema(self) -> JSONObject:
        """The JSON schema sent to the model as ``input_schema``."""
        s = self.Input.model_json_schema()
        s.pop("title", None)
        for prop in s.get("properties", {}).values():
            prop.pop("title", None)
        return s

    def definition(self) -> JSONObject:
        """The tool as the Messages API's ``tools`` list expects it."""
        return {"name": self.name, "description": self.description, "input_schema": self.schema()}

    def validate(self, raw_input: object) -> ToolInput:
        """Validated input, or :class:`ToolInputError` with a message the model can act on."""
        return validate_with_model(self.name, self.Input, raw_input)

    async def run(self, tool_input: ToolInput, ctx: ToolContext) -> ToolOutput:  # pragma: no cover
        raise NotImplementedError


def validate_with_model(tool_name: str, model: type[pydantic.BaseModel], raw_input: object) -> ToolInput:
    """Validate ``raw_input`` against ``model``; errors name each bad field and what was expected."""
    if not isinstance(raw_input, dict):
        raise ToolInputError(
            f"Invalid input for tool {tool_name!r}: expected a JSON object, got {type(raw_input).__name__}."
        )
    try:
        return model.model_validate(raw_input).model_dump(exclude_unset=False)
    except pydantic.ValidationError as exc:
        parts = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err.get("loc", ())) or "(input)"
            parts.append(f"{loc}: {err.get('msg')}")
        raise ToolInputError(f"Invalid input for tool {tool_name!r}: " + "; ".join(parts)) from None


# Snap cuts to a line break when one is this close (as a share of the kept part): whole lines
# read better, and the cost is a few characters.
_SNAP_SHARE = 0.1


def _marker(omitted: int) -> str:
    return f"\n... [{omitted:,} characters omitted] ...\n"


def truncate_middle(text: str, limit: int = DEFAULT_TOOL_OUTPUT_LIMIT) -> str:
    """``text`` unchanged if it has at most ``limit`` characters, else its head and tail joined by
    a marker ``\\n... [12,345 characters omitted] ...\\n``. The result never exceeds ``limit``
    characters unless ``limit`` is smaller than the marker itself (then it is the marker alone)."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    budget = limit - len(_marker(len(text)))  # the widest marker this text can need
    if budget <= 0:
        return _marker(len(text))
    head_len = (budget + 1) // 2
    tail_len = budget - head_len
    head = text[:head_len]
    tail = text[len(text) - tail_len:] if tail_len else ""
    nl = head.rfind("\n")
    if nl >= 0 and head_len - nl <= max(1, int(head_len * _SNAP_SHARE)):
        head = head[: nl]
    nl = tail.find("\n")
    if tail and nl >= 0 and nl < max(1, int(tail_len * _SNAP_SHARE)):
        tail = tail[nl + 1:]
    return head + _marker(len(text) - len(head) - len(tail)) + tail


def limit_output(output: ToolOutput, limit: int = DEFAULT_TOOL_OUTPUT_LIMIT) -> ToolOutput:
    """``output`` with its text cut by :func:`truncate_middle` to ``limit`` characters; the full
    text goes to ``display`` (unless the tool set one). Text blocks of list content are cut one by
    one. The loop applies this once to every tool result."""
    content = output.content
    if isinstance(content, str):
        if len(content) <= limit:
            return output
        display = output.display if output.display is not None else content
        return dataclasses.replace(output, content=truncate_middle(content, limit), display=display)
    blocks: list[JSONObject] = []
    for block in content:
        text = block.get("text") if is_text(block) else None
        blocks.append({**block, "text": truncate_middle(text, limit)} if isinstance(text, str) and len(text) > limit
                      else block)
    if all(a is b for a, b in zip(blocks, content, strict=True)):
        return output
    full = "\n".join(b["text"] for b in content if is_text(b) and isinstance(b.get("text"), str))
    return dataclasses.replace(output, content=blocks, display=output.display if output.display is not None else full)
