"""A small JSON document that the processes of one user update in turn, and where it lives.

The kernels of one machine that use one key share its rate limits; they share what they know of
them through a file per key (:mod:`nbagent.engine.loop.shared_budget`). Each update opens the file,
takes an exclusive ``flock``, reads, changes and writes it, and lets go: two processes never
interleave their changes. The file is a cache, not a record: it is not fsynced, and a file that a
crash left unreadable reads as empty (the next answer's headers fill it again).

The folder is the user's own (mode 0700, checked): a file another user could write would let them
delay this user's requests, so a folder that is not the user's alone is not used at all.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Callable, TypeVar

from .json_depth import loads_within
from .safe_open import open_regular

PACING_DIR_ENV = "NBAGENT_PACING_DIR"
"""Where the per-key files are kept; unset: ``$XDG_RUNTIME_DIR/nbagent-pacing``, else the temporary
folder's ``nbagent-pacing-<uid>``. Tests and the class bench set it (a folder per student stands for
students on separate machines)."""
STALE_S = 86_400.0
"""A key's file unused for this long (a day) is removed when a process first opens the folder: tests and
benches make one per loopback server."""
MAX_BYTES = 256 * 1024
"""A file larger than this is not read (it is not one nbagent wrote): it reads as empty."""

T = TypeVar("T")
Change = Callable[[object], tuple[object, T]]
"""Takes the parsed document (None when missing or unreadable), returns (the new document, a result)."""


class UnsafePacingDirError(OSError):
    """The pacing folder is not this user's alone (another owner, or others may write it)."""


def pacing_dir() -> Path:
    """The folder of the per-key files (see :data:`PACING_DIR_ENV`), created 0700 and checked to be
    the user's alone; :class:`UnsafePacingDirError` otherwise."""
    configured = os.environ.get(PACING_DIR_ENV)
    if configured:
        folder = Path(configured)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        folder = Path(os.environ["XDG_RUNTIME_DIR"]) / "nbagent-pacing"
    else:
        folder = Path(tempfile.gettempdir()) / f"nbagent-pacing-{os.getuid()}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.stat(folder, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise UnsafePacingDirError(f"{folder} is not this user's own folder: rate limits are not shared through it")
    if folder not in _PRUNED:
        _PRUNED.add(folder)
        _remove_stale(folder)
    return folder


_PRUNED: set[Path] = set()


def _remove_stale(folder: Path) -> None:
    cutoff = time.time() - STALE_S
    for path in folder.glob("*.json"):
        try:
            if path.lstat().st_mtime < cutoff:
                path.unlink()
        except OSError:  # another process removed it first
            continue


class SharedFile:
    """One JSON document updated under an exclusive lock (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def update(self, change: Change[T]) -> T:
        """Read the document, apply ``change``, write what it returns; all under the lock."""
        fd = open_regular(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            document, result = change(_parsed(_read_all(fd)))
            data = json.dumps(document, separators=(",", ":")).encode()
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            return result
        finally:
            os.close(fd)  # also lets go of the lock


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return b"" if size > MAX_BYTES else os.pread(fd, size, 0)


def _parsed(data: bytes) -> object:
    try:
        return loads_within(data) if data else None
    except ValueError:  # a write cut short by a crash, or not ours (nested past the bound too): start again
        return None


__all__ = ["PACING_DIR_ENV", "SharedFile", "UnsafePacingDirError", "pacing_dir"]
