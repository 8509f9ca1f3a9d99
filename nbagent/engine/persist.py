"""Atomic JSON files: write to a temp file in the same folder, fsync, rename.

A reader (or a process killed mid-write) sees either the old file or the new one, never half.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import CorruptFileError


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` atomically (same-folder temp file, fsync, ``os.replace``)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    # fsync the folder so the rename itself survives a crash (not possible on every OS).
    try:
        dfd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> None:
    """Serialise ``data`` as JSON and write it atomically."""
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1, default=str))


def read_json(path: str | os.PathLike[str], default: Any = None) -> Any:
    """Load JSON; a missing file gives ``default``; an unreadable one raises :class:`CorruptFileError`
    naming the file and leaves it untouched."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFileError(p, str(exc)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(p, f"invalid JSON: {exc}") from None
