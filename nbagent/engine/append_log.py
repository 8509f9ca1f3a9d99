"""A JSON list file that grows by appending: the task folder's history, request, event and compaction logs.

The file stays one JSON document (``[``, one item a line, ``]``), so any JSON reader opens it; an
append replaces the closing bracket by the new lines and a new bracket. A crash in the middle of an
append can only leave the last line torn, which :func:`read_log` drops (and says so).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from .errors import CorruptFileError
from .persist import MAX_FILE_DEPTH, atomic_write_text, depth_exceeds, read_json


class AppendLog:
    """A JSON list on disk, one item a line (``[\n...\n]``: still one JSON document), kept in step
    with a list that mostly grows at its end.

    :meth:`save` appends the items added since the last save; when the list changed any other way
    (or on the first save) it rewrites the file atomically. Appends reach the OS at once, so a
    killed process loses nothing; a crash of the machine may leave the last line torn, which the
    loader drops. :meth:`sync` makes appends durable.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._written: list[Any] | None = None  # the items now in the file (the same objects)
        self._unsynced = False

    def prime(self, items: list[Any]) -> None:
        """The file holds exactly ``items`` (just loaded whole): the next save appends to it."""
        self._written = list(items)

    def save(self, items: list[Any], line: Callable[[Any], str]) -> None:
        done, self._written = self._written, None  # a failed write leaves the file unknown: rewrite next
        if not items and not done and (done is not None or not self.path.exists()):
            self._written = []  # nothing to keep, and the file (if any) already says so
            return
        # A list compare (identity, else equality, per element at C speed): an item replaced by a
        # different one is seen; items are replaced, never changed in place.
        if done is not None and 0 < len(done) <= len(items) and items[:len(done)] == done:
            if len(done) < len(items):
                append_lines(self.path, [line(x) for x in items[len(done):]])
                self._unsynced = True
        else:
            lines = [line(x) for x in items]
            atomic_write_text(self.path, "[\n" + ",\n".join(lines) + "\n]" if lines else "[]")
            self._unsynced = False
        self._written = list(items)

    def sync(self) -> None:
        """Make the appends durable: ``fdatasync`` (the data and the file's new size, not its
        timestamps: what a reader needs, at about two thirds of an fsync's cost) where there is one."""
        if self._unsynced:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                getattr(os, "fdatasync", os.fsync)(fd)
            finally:
                os.close(fd)
            self._unsynced = False


def append_lines(path: Path, lines: list[str]) -> None:
    """Append JSON lines to a log written by :class:`AppendLog` (``[\n...\n]``), keeping it valid;
    a crash mid-append leaves a torn last line, which :func:`read_log` drops."""
    with open(path, "r+b") as f:
        f.seek(-2, os.SEEK_END)
        if f.read(2) != b"\n]":
            raise ValueError(f"{path} does not end as nbagent writes it; not appended to")
        f.seek(-2, os.SEEK_END)
        f.write((",\n" + ",\n".join(lines) + "\n]").encode("utf-8"))


def _torn_log(path: Path) -> list[Any] | None:
    """The items of a log whose last append was cut short by a crash, or None if it is not that."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) < 2 or lines[0] != "[":
        return None
    items = []
    for i, line in enumerate(lines[1:], start=1):
        try:
            items.append(json.loads(line.rstrip(",")))
        except (json.JSONDecodeError, RecursionError):
            if i < len(lines) - 1:
                return None  # only the last line may be torn
            if line.endswith(",]"):  # the append's first byte replaced the line break: item whole
                with contextlib.suppress(json.JSONDecodeError, RecursionError):
                    items.append(json.loads(line[:-2]))
            return items
    return items  # cut at the end of a line: every item there is whole


def read_log(path: Path, notices: list[str] | None = None) -> Any:
    """An :class:`AppendLog` file's JSON; a torn last append (a crash mid-write) is dropped and
    said in ``notices``."""
    try:
        return read_json(path, default=[])
    except CorruptFileError:
        items = _torn_log(path)
        if items is None:
            raise
        if depth_exceeds(items, MAX_FILE_DEPTH):  # as read_json refuses for a whole file
            raise CorruptFileError(path, f"JSON nested deeper than {MAX_FILE_DEPTH} levels") from None
        if notices is not None:
            notices.append(f"{path.name} ended in a line cut short (a crash while it was written): "
                           f"the {len(items)} complete entries before it were loaded.")
        return items
