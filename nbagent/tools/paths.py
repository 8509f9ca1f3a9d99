"""The one place tool path arguments are turned into real paths and checked against the sandbox.

A path is resolved against ``ctx.cwd`` with symlinks and ``..`` resolved, *then* checked: it must be
inside the (resolved) cwd or inside one of ``ctx.allowed_paths``. Checking the resolved path is what
stops ``../x`` and a symlink inside cwd that points outside it.
"""

from __future__ import annotations

from pathlib import Path

from nbagent.engine.contracts.protected import resolve_tool_path
from nbagent.engine.contracts.tool_api import ToolContext, ToolExecutionError


class PathRefusedError(ToolExecutionError):
    """A path argument points outside the places the tools may touch (or cannot be resolved)."""


def _roots(ctx: ToolContext) -> list[Path]:
    return [Path(ctx.cwd).resolve(), *(Path(p).expanduser().resolve() for p in ctx.allowed_paths)]


def is_allowed(path: Path, ctx: ToolContext) -> bool:
    """Whether an already-resolved ``path`` is inside cwd or an allowed path."""
    return any(path == root or path.is_relative_to(root) for root in _roots(ctx))


def resolve_path(raw: str, ctx: ToolContext) -> Path:
    """The absolute real path for a tool's path argument, or :class:`PathRefusedError` with a
    message the model can act on."""
    if "\x00" in raw:
        raise PathRefusedError(f"Path {raw!r} contains a NUL character.")
    try:  # the one resolution the permission check and the hooks saw too
        real = resolve_tool_path(raw, Path(ctx.cwd))
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        raise PathRefusedError(f"Path {raw!r} cannot be resolved: {exc}") from None
    if is_allowed(real, ctx):
        return real
    cwd = Path(ctx.cwd).resolve()
    raise PathRefusedError(
        f"Path {raw!r} resolves to {real}, which is outside the working directory {cwd}. "
        "Paths outside it are refused unless the user allows them (allowed_paths)."
    )


def display_path(path: Path, ctx: ToolContext) -> str:
    """``path`` relative to cwd when inside it (shorter, and what the model passes back), else absolute."""
    cwd = Path(ctx.cwd).resolve()
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else "."


__all__ = ["PathRefusedError", "resolve_path", "display_path", "is_allowed"]
