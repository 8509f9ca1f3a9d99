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


def dumps_by_line(data: Any) -> str:
    """JSON with one top-level list item (or object member) per line, the rest compact.

    As readable as a diff needs, and written by the C encoder: ``indent=`` would switch ``json``
    to its pure-Python encoder, several times slower on a long conversation saved every request.
    """
    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)

    if isinstance(data, list):
        return "[\n" + ",\n".join(one(v) for v in data) + "\n]" if data else "[]"
    if isinstance(data, dict):
        if not data:
            return "{}"
        return "{\n" + ",\n".join(f"{one(str(k))}:{one(v)}" for k, v in data.items()) + "\n}"
    return one(data)


def atomic_write_json(path: str | os.PathLike[str], data: Any) -> None:
    """Serialise ``data`` as JSON (see :func:`dumps_by_line`) and write it atomically."""
    atomic_write_text(path, dumps_by_line(data))


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
