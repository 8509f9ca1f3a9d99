"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of each."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _current_umask() -> int:
    # Linux reports the umask without changing it; elsewhere set-and-restore is the only way
    # (briefly racy with other threads creating files, hence the preference).
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync, then ``os.replace``.

    Parent directories are created. An existing file keeps its permission bits (a temp file is
    created 0600, which would otherwise make every edited file private); a new one gets the
    usual ``0666 & ~umask``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable; not possible on every platform/filesystem
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


__all__ = ["atomic_write_bytes"]
