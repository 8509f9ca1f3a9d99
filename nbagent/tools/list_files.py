"""``list_files``: glob a directory tree, skipping what ``.nbagentignore`` and common junk hide.

The walk is our own (``os.walk`` with pruning) rather than ``Path.glob``: glob would descend into
``.git`` or ``.venv`` before we could filter them out, which on a real project is most of the time
spent. Patterns follow ``pathlib`` glob rules: ``*``, ``?``, ``[...]`` within one path segment,
``**`` for any number of directories; hidden files match ``*``.
"""

from __future__ import annotations

import asyncio
import functools
import os
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Optional

import pydantic

from nbagent.engine.contracts.tool_api import ToolContext, ToolExecutionError, ToolOutput

from .base import BuiltinTool, ToolInput, wait_or_abort
from .ignore import IgnoreRules
from .paths import display_path, resolve_path

MAX_ENTRIES = 500


def _segments_match(pattern: tuple[str, ...], segments: tuple[str, ...]) -> bool:
    """Glob match of path segments; ``**`` matches zero or more segments."""

    @functools.lru_cache(maxsize=None)  # memoised: "**/**/**" patterns would otherwise explode
    def match(i: int, j: int) -> bool:
        if i == len(pattern):
            return j == len(segments)
        if pattern[i] == "**":
            return any(match(i + 1, k) for k in range(j, len(segments) + 1))
        return j < len(segments) and fnmatchcase(segments[j], pattern[i]) and match(i + 1, j + 1)

    return match(0, 0)


def _split_pattern(pattern: str) -> tuple[str, ...]:
    if pattern.startswith("/") or os.path.isabs(pattern):
        raise ToolExecutionError("pattern must be relative; choose the directory with `path`.")
    parts = tuple(p for p in pattern.replace("\\", "/").split("/") if p not in ("", "."))
    if ".." in parts:
        raise ToolExecutionError("pattern must not contain '..'; choose the directory with `path`.")
    return parts


def _walk(base: Path, cwd: Path, pattern: tuple[str, ...], rules: IgnoreRules, ctx: ToolContext) -> list[str]:
    """Matching entries under ``base`` as display paths (directories end with ``/``), sorted."""
    max_depth = None if "**" in pattern else len(pattern)
    found: list[str] = []

    def ignore_key(p: Path) -> str:
        try:  # rules are relative to the ignore file's directory (cwd)
            return p.relative_to(cwd).as_posix()
        except ValueError:
            return p.name

    # followlinks=False: a symlinked directory is listed by name but never walked, so the walk
    # cannot leave the sandbox or loop.
    for root, dirnames, filenames in os.walk(base, followlinks=False):
        root_path = Path(root)
        rel_root = root_path.relative_to(base).parts
        keep_dirs = []
        for d in sorted(dirnames):
            p = root_path / d
            if rules.ignored(ignore_key(p), is_dir=True):
                continue
            keep_dirs.append(d)
            segs = (*rel_root, d)
            if _segments_match(pattern, segs):
                found.append(display_path(p, ctx) + "/")
        # Prune: ignored directories, and depth the pattern cannot reach.
        dirnames[:] = [] if max_depth is not None and len(rel_root) + 1 >= max_depth else keep_dirs
        for f in filenames:
            p = root_path / f
            if rules.ignored(ignore_key(p), is_dir=False):
                continue
            if _segments_match(pattern, (*rel_root, f)):
                found.append(display_path(p, ctx))
    found.sort()
    return found


class ListFilesInput(ToolInput):
    pattern: str = pydantic.Field(
        default="**/*", min_length=1,
        description="Glob pattern relative to `path`, e.g. '*.py' (top level) or '**/*.py' (recursive).",
    )
    path: Optional[str] = pydantic.Field(
        default=None, min_length=1, description="Directory to search. Default: the working directory."
    )


class ListFiles(BuiltinTool):
    """List files and directories matching a glob pattern."""

    name = "list_files"
    description = (
        "List files matching a glob pattern (default '**/*': everything, recursively) under a "
        "directory of the working directory. Directories end with '/'. Skips .git, .venv, "
        "__pycache__ and what .nbagentignore lists. Paths are relative to the working directory."
    )
    read_only = True
    resolves_path = True
    Input = ListFilesInput
    max_entries: int = MAX_ENTRIES

    async def call(self, params: ListFilesInput, ctx: ToolContext) -> ToolOutput:
        base = resolve_path(params.path or ".", ctx)
        label = display_path(base, ctx)
        if not base.is_dir():
            raise ToolExecutionError(f"{label} is not a directory.")
        pattern = _split_pattern(params.pattern)
        cwd = Path(ctx.cwd).resolve()  # noqa: ASYNC240 - cheap; the walk itself runs on a worker thread
        rules = IgnoreRules.load(cwd)
        # The walk is blocking I/O: keep the event loop (and the abort) responsive.
        found = await wait_or_abort(asyncio.to_thread(_walk, base, cwd, pattern, rules, ctx), ctx.abort)
        if not found:
            return ToolOutput(f"No entries match {params.pattern!r} in {label}.")
        shown = found[: self.max_entries]
        text = "\n".join(shown)
        if len(found) > len(shown):
            text += (
                f"\n[showing {len(shown):,} of {len(found):,} entries; narrow the pattern or path to see the rest]"
            )
        return ToolOutput(text)


__all__ = ["ListFiles", "ListFilesInput", "MAX_ENTRIES"]
