"""The file tools: ``read_file``, ``write_file`` and ``edit_file`` (exact string replace).

All three resolve paths through :mod:`nbagent.tools.paths` and consult the session's
``FileStateCache`` (``ctx.file_state``, optional): a re-read of unchanged lines is answered with a
short note, and a write over a file the user changed since it was read is refused. Writes are
atomic (temp file + fsync + ``os.replace``).
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Optional

import pydantic

from nbagent.engine.context.file_state import FileStateCache, LineSpan
from nbagent.engine.contracts.tool_api import ToolContext, ToolExecutionError, ToolOutput
from nbagent.engine.disk.persist import atomic_write_bytes

from .base import BuiltinTool, ToolInput, wait_or_abort
from .file_secrets import without_named_secrets
from .paths import display_path, resolve_path

# Reading more than this into memory to show the model makes no sense; point at the python tool.
MAX_READ_BYTES = 20 * 1024 * 1024
_BINARY_SNIFF = 8192


def _cache(ctx: ToolContext) -> FileStateCache | None:
    fs = ctx.file_state
    return fs if isinstance(fs, FileStateCache) else None


def _read_regular(path: Path, label: str) -> bytes:
    """The bytes of a regular file; a FIFO, device or socket is refused before anything blocks on it.

    Opened non-blocking and checked with ``fstat`` on the open descriptor, so a file swapped for a
    FIFO after a check cannot hang the read (runs in a worker thread: the event loop never waits).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ToolExecutionError(f"{label} is not a regular file ({_kind(mode)}); not read.")
        size = os.fstat(fd).st_size
        if size > MAX_READ_BYTES:
            raise ToolExecutionError(
                f"{label} is {size:,} bytes, too large to read here; use the python tool to inspect it.")
        return f.read(MAX_READ_BYTES + 1)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a plain file"


def _count_lines(text: str) -> int:
    return len(text.splitlines())


class ReadFileInput(ToolInput):
    path: str = pydantic.Field(min_length=1, description="File to read, relative to the working directory.")
    offset: Optional[int] = pydantic.Field(
        default=None, ge=1, description="First line to read (1-based). Default: the first line."
    )
    limit: Optional[int] = pydantic.Field(default=None, ge=1, description="How many lines to read. Default: all.")


class ReadFile(BuiltinTool):
    """Read a text file, whole or a range of lines, with a one-line header."""

    name = "read_file"
    description = (
        "Read a UTF-8 text file in the working directory. Returns a header line (path and line "
        "range) followed by the file's text. Use offset/limit (1-based lines) for large files. "
        "Re-reading an unchanged file returns a short note pointing at the earlier read."
    )
    read_only = True
    resolves_path = True
    Input = ReadFileInput

    async def call(self, params: ReadFileInput, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(params.path, ctx)
        label = display_path(path, ctx)
        if path.is_dir():
            raise ToolExecutionError(f"{label} is a directory; use list_files to see what it contains.")
        first = params.offset or 1
        wanted: LineSpan = (first, first + params.limit - 1 if params.limit else None)
        fs = _cache(ctx)
        data = await wait_or_abort(asyncio.to_thread(_read_regular, path, label), ctx.abort)
        if b"\x00" in data[:_BINARY_SNIFF]:
            raise ToolExecutionError(
                f"{label} looks like a binary file ({len(data):,} bytes); not shown. "
                "Use the python tool to inspect it."
            )
        lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
        total = len(lines)
        if total == 0:
            if fs is not None:
                fs.record(path, ctx.turn, data=data, lines=wanted)
            return ToolOutput(f"File {label} is empty (0 lines).")
        if first > total:
            raise ToolExecutionError(f"offset {first} is past the end of {label}, which has {total} lines.")
        if fs is not None:
            # Asked only now: the point is saving the model's context, not disk reads, and a
            # bad offset must be reported as such rather than as "unchanged".
            note = fs.check_read(path, ctx.turn, lines=wanted, label=label)
            if note is not None:
                return ToolOutput(note)
        last = total if wanted[1] is None else min(wanted[1], total)
        # A password the file names (settings.ini's ``password = …``) is hidden as in a printed output.
        body = without_named_secrets(path, "".join(lines[first - 1: last]))
        if first == 1 and last == total:
            header = f"File {label} ({total} lines):\n"
        else:
            header = f"File {label}, lines {first}-{last} of {total}:\n"
        content = header + body
        if fs is not None:
            # A read cut short by the output limit did not show the model everything: it must not
            # be answered with "unchanged" later.
            seen: LineSpan | None = (first, None if last == total else last)
            if len(content) > ctx.max_output_chars:
                seen = None
            fs.record(path, ctx.turn, data=data, lines=seen)
        return ToolOutput(content)


class WriteFileInput(ToolInput):
    path: str = pydantic.Field(min_length=1, description="File to write, relative to the working directory.")
    content: str = pydantic.Field(description="The complete new content of the file.")


class WriteFile(BuiltinTool):
    """Create or overwrite a file atomically; refuses if the user changed it since it was read."""

    name = "write_file"
    description = (
        "Create or overwrite a text file (UTF-8) in the working directory with the given content; "
        "parent directories are created. Refused if the file changed on disk since you read it: "
        "read it again first. Prefer edit_file for small changes to existing files."
    )
    read_only = False
    resolves_path = True
    edits_files = True
    Input = WriteFileInput

    async def call(self, params: WriteFileInput, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(params.path, ctx)
        label = display_path(path, ctx)
        if path.is_dir():
            raise ToolExecutionError(f"{label} is a directory; give a file path.")
        try:
            data = params.content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolExecutionError(f"content is not valid Unicode text ({exc.reason}); nothing written.") from None
        fs = _cache(ctx)
        if fs is not None:
            fs.check_write(path, label=label)
        existed = path.exists()
        atomic_write_bytes(path, data)
        if fs is not None:
            fs.record(path, ctx.turn, data=data, source="write")
        verb = "Overwrote" if existed else "Created"
        return ToolOutput(f"{verb} {label} ({_count_lines(params.content)} lines, {len(data):,} bytes).")


class EditFileInput(ToolInput):
    path: str = pydantic.Field(min_length=1, description="File to edit, relative to the working directory.")
    old: str = pydantic.Field(min_length=1, description="Exact text to replace, including whitespace and indentation.")
    new: str = pydantic.Field(description="Replacement text.")
    replace_all: bool = pydantic.Field(
        default=False, description="Replace every occurrence. Default: old must occur exactly once."
    )


class EditFile(BuiltinTool):
    """Exact string replacement in a file, written atomically."""

    name = "edit_file"
    description = (
        "Replace exact text in an existing file. `old` must match the file exactly (whitespace "
        "and indentation included) and occur exactly once, unless replace_all is true. Refused if "
        "the file changed on disk since you read it."
    )
    read_only = False
    resolves_path = True
    edits_files = True
    Input = EditFileInput

    async def call(self, params: EditFileInput, ctx: ToolContext) -> ToolOutput:
        path = resolve_path(params.path, ctx)
        label = display_path(path, ctx)
        if not path.exists():
            raise ToolExecutionError(f"{label} does not exist; use write_file to create it.")
        if path.is_dir():
            raise ToolExecutionError(f"{label} is a directory; give a file path.")
        if params.old == params.new:
            raise ToolExecutionError("old and new are identical; nothing to change.")
        fs = _cache(ctx)
        if fs is not None:
            fs.check_write(path, label=label)
        # surrogateescape keeps bytes that are not UTF-8 exactly as they were.
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        count = text.count(params.old)
        if count == 0:
            hint = ""
            if "\r\n" in text and "\n" in params.old and "\r\n" not in params.old:
                hint = " The file uses CRLF line endings; include \\r\\n in old."
            raise ToolExecutionError(
                f"old text not found in {label}. It must match exactly, including whitespace and "
                f"indentation; read the file again to copy it.{hint}"
            )
        if count > 1 and not params.replace_all:
            raise ToolExecutionError(
                f"old text occurs {count} times in {label}; include more surrounding text to make it "
                "unique, or set replace_all to true."
            )
        line = text.count("\n", 0, text.index(params.old)) + 1
        new_text = text.replace(params.old, params.new) if params.replace_all else text.replace(params.old, params.new, 1)
        try:
            data = new_text.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError as exc:
            raise ToolExecutionError(f"new is not valid Unicode text ({exc.reason}); nothing written.") from None
        atomic_write_bytes(path, data)
        if fs is not None:
            fs.record(path, ctx.turn, data=data, source="write")
        what = f"{count} occurrences" if count > 1 else f"1 occurrence at line {line}"
        return ToolOutput(f"Edited {label}: replaced {what}.")


__all__ = ["ReadFile", "WriteFile", "EditFile", "ReadFileInput", "WriteFileInput", "EditFileInput"]
