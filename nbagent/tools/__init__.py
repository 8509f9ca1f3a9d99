"""nbagent's built-in tools: python, read_file, write_file, edit_file, list_files, shell.

Each is a :class:`~nbagent.engine.contracts.tool_api.Tool` with a pydantic ``Input`` model (schema and
validation in one place). Tools import the engine; the engine never imports tools.
"""

from __future__ import annotations

from typing import Iterable

from nbagent.engine.contracts.tool_api import Tool, ToolLike

from .base import BuiltinTool, ToolAborted, ToolInput
from .executor import ExecutionResult, Executor, NamespaceExecutor
from .files import EditFile, ReadFile, WriteFile
from .list_files import ListFiles
from .paths import PathRefusedError, display_path, resolve_path
from .python import Python
from .shell import Shell

BUILTIN_TOOL_CLASSES: tuple[type[BuiltinTool], ...] = (Python, ReadFile, WriteFile, EditFile, ListFiles, Shell)


def builtin_tools(shell: bool = False) -> list[Tool]:
    """Fresh instances of the built-in tools; ``shell`` adds the shell tool (which still only runs
    when the session's ``ToolContext.shell_enabled`` is true)."""
    return [cls() for cls in BUILTIN_TOOL_CLASSES if shell or cls is not Shell]


def tool_by_name(name: str, tools: Iterable[ToolLike] | None = None) -> ToolLike | None:
    """The tool called ``name`` in ``tools`` (default: a fresh built-in, shell included), or None."""
    candidates: Iterable[ToolLike] = builtin_tools(shell=True) if tools is None else tools
    return next((t for t in candidates if t.name == name), None)


__all__ = [
    "builtin_tools", "tool_by_name", "BUILTIN_TOOL_CLASSES",
    "BuiltinTool", "ToolInput", "ToolAborted",
    "Python", "ReadFile", "WriteFile", "EditFile", "ListFiles", "Shell",
    "Executor", "ExecutionResult", "NamespaceExecutor",
    "resolve_path", "display_path", "PathRefusedError",
]
