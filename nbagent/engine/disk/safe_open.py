"""Opening a task folder's files so that a crafted folder cannot hang, exhaust memory or redirect writes.

A task folder may come from elsewhere (copied, unpacked, written by a model with file tools): a FIFO
would block ``open`` forever, a symlink to ``/dev/zero`` would be read until memory runs out, a log
symlinked out of the folder would be appended to outside it. So every file in it is opened with
``O_NOFOLLOW`` (a symlink is refused, never followed) and ``O_NONBLOCK`` (a FIFO cannot hang the
open), accepted only when ``fstat`` says it is a regular file, and read only up to
:data:`MAX_TASK_FILE_BYTES`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..contracts.errors import CorruptFileError, TaskFolderError

MAX_TASK_FILE_BYTES = 256 * 1024 * 1024
"""The largest file a task folder may hold (a 10,000-message session's history is a few tens of MB)."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """An fd of ``path`` opened with ``flags``, if it is a regular file (not a symlink, FIFO,
    device or folder); else :class:`TaskFolderError` naming it. ``FileNotFoundError`` as ``os.open``."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if os.path.islink(path):
            raise _not_regular(path, "a symbolic link") from None
        if isinstance(exc, IsADirectoryError):
            raise _not_regular(path, "a folder") from None
        raise
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            raise _not_regular(path, _kind(kind))
        os.set_blocking(fd, True)  # a regular file: O_NONBLOCK only guarded the open
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path) -> bytes | None:
    """The bytes of a task file (None if it does not exist); a file that is not a regular one or
    is larger than :data:`MAX_TASK_FILE_BYTES` raises :class:`CorruptFileError` naming it."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except NotRegularFileError as exc:
        raise CorruptFileError(path, exc.reason) from None
    except OSError as exc:
        raise CorruptFileError(path, str(exc)) from None
    try:
        size = os.fstat(fd).st_size
        if size > MAX_TASK_FILE_BYTES:
            raise _too_big(path)
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):  # read to the end, never past the cap (the file may grow)
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_TASK_FILE_BYTES:
                raise _too_big(path)
        return b"".join(chunks)
    except OSError as exc:
        raise CorruptFileError(path, str(exc)) from None
    finally:
        os.close(fd)


def read_capped(path: Path, cap: int) -> bytes | None:
    """At most ``cap`` bytes of ``path`` if it is a regular file (links followed), else None: for a
    small settings file of a folder that may have been received (``.nbagentignore``). Opened
    without blocking and checked on the descriptor, so a FIFO in its place cannot hang the kernel."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while total < cap and (chunk := os.read(fd, min(1 << 20, cap - total))):
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _too_big(path: Path) -> CorruptFileError:
    return CorruptFileError(path, f"larger than the {MAX_TASK_FILE_BYTES:,} bytes a task file may hold "
                                  "(MAX_TASK_FILE_BYTES in nbagent.engine.disk.safe_open)")


class NotRegularFileError(TaskFolderError):
    """A task folder's file is a symlink, FIFO, device or folder: refused, never followed or read."""

    def __init__(self, path: Path, what: str) -> None:
        self.reason = (f"{what}, not a regular file: nbagent opens only regular files in a task folder and "
                       "never follows links there; replace it by the file itself")
        super().__init__(path, f"{path} is {self.reason}.")


def _not_regular(path: Path, what: str) -> NotRegularFileError:
    return NotRegularFileError(path, what)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"
