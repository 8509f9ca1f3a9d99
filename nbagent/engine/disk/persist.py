"""Atomic JSON files: write to a temp file in the same folder, fsync, rename.

A reader (or a process killed mid-write) sees either the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Mapping

from ..contracts.errors import CorruptFileError, OverfullFileError
from .json_depth import MAX_FILE_DEPTH, NestedTooDeepError, TooManyValuesError, check_within
from .safe_open import read_regular


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


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync, then ``os.replace``.

    Parent directories are created; a new file's directory entry is fsynced too. An existing file
    keeps its permission bits (a temp file is created 0600, which would otherwise make every edited
    file private); a new one gets the usual ``0666 & ~umask``.
    """
    path = Path(path)
    atomic_write_files(path.parent, {path.name: data})


def atomic_write_files(folder: str | os.PathLike[str], files: Mapping[str, bytes]) -> None:
    """Write each of ``files`` (name: bytes) into ``folder`` as :func:`atomic_write_bytes` writes
    one, with one wait for the disk for them all: every temp file is written and fsynced, then all
    are renamed, then the folder is fsynced once if a file is new (a wait per file cost a new
    session's folder seven, most of its CPU: the process sleeps, and wakes with cold caches). A
    failure leaves each file as it was or whole and new, and no temp file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[str, Path]] = []
    new = False
    try:
        for name, data in files.items():
            try:
                mode = stat.S_IMODE(os.stat(folder / name).st_mode)
            except FileNotFoundError:
                mode, new = 0o666 & ~_current_umask(), True
            temps.append((_written_temp(folder, name, data, mode), folder / name))
        for tmp, path in temps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    if new:  # a replaced file shows its old or its new version after a power cut, both whole: a
        _fsync_folder(folder)  # rename over it need not be forced to disk (one fsync per write, not two)


def _written_temp(folder: Path, name: str, data: bytes, mode: int) -> str:
    """A temp file beside ``name`` holding ``data``, durable, with ``mode``; its path."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def _fsync_folder(folder: Path) -> None:
    """Make new names in ``folder`` durable; not possible on every platform/filesystem."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_line(value: object) -> str:
    """One value as compact JSON on one line (newlines in strings are escaped). Dataclass
    instances (events, records) are written as objects of their fields, as ``dataclasses.asdict``
    would, but by the C encoder: a recursive conversion per event was most of a request's save."""
    return _LINE_ENCODER.encode(value)


_FIELDS: dict[type, tuple[tuple[str, ...], dict[str, object]]] = {}
OMIT_WHEN_DEFAULT = "__omit_when_default__"
"""A dataclass attribute naming fields written only when they differ from their default: fields a
newer version added, so that a folder of an earlier version is written back byte for byte."""


def _json_default(value: object) -> object:
    cls = type(value)
    if hasattr(cls, "__dataclass_fields__"):
        entry = _FIELDS.get(cls)
        if entry is None:
            omit = set(getattr(cls, OMIT_WHEN_DEFAULT, ()))
            fields = dataclasses.fields(value) if dataclasses.is_dataclass(value) else ()  # once per class
            entry = _FIELDS[cls] = (tuple(f.name for f in fields),
                                    {f.name: _default(f) for f in fields if f.name in omit})
        names, defaults = entry
        if not defaults:
            return {name: getattr(value, name) for name in names}
        return {name: v for name in names
                if not ((v := getattr(value, name)) == defaults.get(name, _NO_DEFAULT))}
    return str(value)


_NO_DEFAULT = object()


def _default(f: dataclasses.Field[object]) -> object:
    """A field's default value (its factory's product); a field with neither always differs."""
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else _NO_DEFAULT


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_json_default)
"""Made once: ``json.dumps`` with options builds a new encoder on every call."""


def dumps_by_line(data: object) -> str:
    """JSON with one top-level list item (or object member) per line, the rest compact.

    As readable as a diff needs, and written by the C encoder: ``indent=`` would switch ``json``
    to its pure-Python encoder, several times slower on a long conversation saved every request.
    """
    one = dumps_line
    if isinstance(data, list):
        return "[\n" + ",\n".join(one(v) for v in data) + "\n]" if data else "[]"
    if isinstance(data, dict):
        if not data:
            return "{}"
        return "{\n" + ",\n".join(f"{one(str(k))}:{one(v)}" for k, v in data.items()) + "\n}"
    return one(data)


def atomic_write_json(path: str | os.PathLike[str], data: object) -> None:
    """Serialise ``data`` as JSON (see :func:`dumps_by_line`) and write it atomically."""
    atomic_write_text(path, dumps_by_line(data))


MAX_TASK_FILE_CONTAINERS = 4_000_000
"""The most JSON arrays and objects a task file read may hold. nbagent's own files reach millions: a
session whose tool calls carry arrays of points (a plotting or data tool, 8,000 pairs a call, $1 a
turn) wrote 1,040,000 into a 10 MB history in 130 turns, and the 1,000,000 first set here refused its
resume. A received file of ``[],`` repeated holds up to 85 million in the 256 MB a task file may
have (minutes and GBs to parse); at this bound it parses in ~2.4 s and ~320 MB. Refused unparsed,
named as unreadable."""


def read_json(path: str | os.PathLike[str], default: Any = None, *, containers: int | None = None) -> Any:
    """Load a task folder's JSON file; a missing file gives ``default``; an unreadable one (not
    JSON, not a regular file, over :data:`~nbagent.engine.disk.safe_open.MAX_TASK_FILE_BYTES`) raises
    :class:`CorruptFileError` naming the file and leaves it untouched; one of more than ``containers``
    arrays and objects (None: :data:`MAX_TASK_FILE_CONTAINERS`) raises :class:`OverfullFileError` (a
    CorruptFileError) before it is parsed."""
    p = Path(path)
    raw = read_regular(p)  # a regular file, capped: a crafted folder cannot hang or exhaust memory
    if raw is None:
        return default
    limit = MAX_TASK_FILE_CONTAINERS if containers is None else containers
    try:
        # Counted in the UTF-8 bytes, strings taken out once for both bounds: a bomb is never decoded,
        # and a file whose strings hold millions of brackets is not scanned twice.
        check_within(raw, MAX_FILE_DEPTH, containers=limit)
    except TooManyValuesError as exc:
        raise OverfullFileError(p, f"{exc}, more than nbagent parses from one file: seconds and GBs") from None
    except NestedTooDeepError as exc:
        raise CorruptFileError(p, str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(p, str(exc)) from None
    try:
        return json.loads(text)
    except ValueError as exc:  # not JSON; or an integer of more digits than Python converts
        raise CorruptFileError(p, f"invalid JSON: {exc}") from None
