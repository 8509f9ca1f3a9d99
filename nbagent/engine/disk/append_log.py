"""A JSON list file that grows by appending: the task folder's history, request, event and compaction logs.

The file stays one JSON document (``[``, one item a line, ``]``), so any JSON reader opens it; an
append replaces the closing bracket by the new lines and a new bracket. A crash in the middle of an
append can only leave the last line torn, which :func:`read_log` drops (and says so).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from ..contracts.errors import CorruptFileError, OverfullFileError, TaskFolderError
from ..contracts.json_types import JSONValue
from .json_depth import MAX_FILE_DEPTH, NestedTooDeepError, loads_within
from .persist import atomic_write_text, read_json
from .safe_open import open_regular, read_regular

_Item = TypeVar("_Item")


class AppendLog:
    """A JSON list on disk, one item a line (``[\n...\n]``: still one JSON document), kept in step
    with a list that mostly grows at its end.

    :meth:`save` appends the items added since the last save; when the list changed any other way
    (or on the first save) it rewrites the file atomically. Appends reach the OS at once, so a
    killed process loses nothing; a crash of the machine may leave the last line torn, which the
    loader drops. :meth:`sync` makes appends durable. The file stays open between appends (opening
    it for each one cost more than the write); :meth:`close` closes it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._written: list[object] | None = None  # the items now in the file (the same objects)
        self._unsynced = False
        self._fd: int | None = None  # open for appends, positioned by _end
        self._end = 0  # where the closing "\n]" starts
        self._opened: tuple[int, int] = (0, 0)  # the open file's st_dev, st_ino (what the path must still name)

    def prime(self, items: Sequence[object]) -> None:
        """The file holds exactly ``items`` (just loaded whole): the next save appends to it."""
        self._written = list(items)

    def forget(self) -> None:
        """Nothing is known of the file any more: the next :meth:`save` rewrites it whole."""
        self.close()
        self._written = None

    def save(self, items: list[_Item], line: Callable[[_Item], str]) -> None:
        done, self._written = self._written, None  # a failed write leaves the file unknown: rewrite next
        if not items and not done and (done is not None or not self.path.exists()):
            self._written = []  # nothing to keep, and the file (if any) already says so
            return
        # A list compare (identity, else equality, per element at C speed): an item replaced by a
        # different one is seen; items are replaced, never changed in place. A log that has no item
        # yet is appended to when its file is there ("[]", see SessionStore.start), else written.
        if done is not None and len(done) <= len(items) and items[:len(done)] == done and (done or self._opens()):
            if len(done) < len(items):
                self._append([line(x) for x in items[len(done):]])
                self._unsynced = True
        else:
            text = self.text(items, line)
            self.close()  # the rewrite replaces the file: appends go to the new one
            atomic_write_text(self.path, text)
            self._unsynced = False
        self._written = list(items)

    @staticmethod
    def text(items: Sequence[_Item], line: Callable[[_Item], str]) -> str:
        """The whole file holding ``items``, for a caller writing several files at once."""
        return "[\n" + ",\n".join(line(x) for x in items) + "\n]" if items else "[]"

    def written(self, items: Sequence[object]) -> None:
        """The caller just wrote the file whole and durably (:meth:`text`): it holds ``items``."""
        self.close()
        self._written, self._unsynced = list(items), False

    def _append(self, lines: list[str]) -> None:
        """Replace the closing bracket by ``lines`` and a new bracket; a crash mid-append leaves
        a torn last line, which :func:`read_log` drops."""
        try:
            if self._fd is None:
                self._open()
            else:
                self._check_same_file()
            assert self._fd is not None
            data = ((",\n" if self._end > 1 else "\n") + ",\n".join(lines) + "\n]").encode("utf-8")
            if os.pwrite(self._fd, data, self._end) != len(data):
                raise OSError(errno.ENOSPC, f"{self.path}: the append was cut short")
            self._end += len(data) - 2
        except BaseException:
            self.close()  # the file's end is unknown now: the next save rewrites it
            raise

    def _open(self) -> None:
        fd = open_regular(self.path, os.O_RDWR)  # never a symlink: appends stay inside the folder
        try:
            st = os.fstat(fd)
            size, self._opened = st.st_size, (st.st_dev, st.st_ino)
            end = os.pread(fd, 2, size - 2) if size >= 2 else b""
            if end != b"\n]" and not (size == 2 and end == b"[]"):
                raise ValueError(f"{self.path} does not end as nbagent writes it; not appended to")
        except BaseException:
            os.close(fd)
            raise
        self._fd, self._end = fd, size - 2 if end == b"\n]" else 1  # "[]": the first item goes after "["

    def _opens(self) -> bool:
        """Whether the file of a log with no item yet is there, as ``[]``, to append to (kept open)."""
        if self._fd is None:
            try:
                self._open()
            except (FileNotFoundError, ValueError):
                return False  # not made yet (or not ours): written whole
        if self._end != 1:  # items this log does not know of: written whole, as any other change
            self.close()
            return False
        return True

    def _check_same_file(self) -> None:
        """The open file is still the one at :attr:`path`: appends to a file deleted or replaced by
        another program would be lost without a word."""
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is None or (now.st_dev, now.st_ino) != self._opened:
            raise TaskFolderError(self.path, f"{self.path} was {'deleted' if now is None else 'replaced'} by another "
                                             "program while this session appended to it; it is written whole again")

    def sync(self) -> None:
        """Make the appends durable: ``fdatasync`` (the data and the file's new size, not its
        timestamps: what a reader needs, at about two thirds of an fsync's cost) where there is one."""
        if not self._unsynced:
            return
        fd = self._fd if self._fd is not None else open_regular(self.path, os.O_RDONLY)
        try:
            getattr(os, "fdatasync", os.fsync)(fd)
        finally:
            if fd != self._fd:
                os.close(fd)
        self._unsynced = False

    def close(self) -> None:
        """Close the file if it is open (the next append opens it again)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


_ITEM_DEPTH = MAX_FILE_DEPTH - 1
"""An item's nesting inside the log's list: the whole file within :data:`MAX_FILE_DEPTH`, as read_json reads it."""


def _torn_log(path: Path) -> list[JSONValue] | None:
    """The items of a log whose last append was cut short by a crash, or None if it is not that."""
    try:
        raw = read_regular(path)
        lines = raw.decode("utf-8").split("\n") if raw is not None else []
    except (CorruptFileError, UnicodeDecodeError):
        return None
    if len(lines) < 2 or lines[0] != "[":
        return None
    items: list[JSONValue] = []
    for i, line in enumerate(lines[1:], start=1):
        try:
            items.append(loads_within(line.rstrip(","), _ITEM_DEPTH))
        except NestedTooDeepError as exc:  # as read_json refuses for a whole file
            raise CorruptFileError(path, str(exc)) from None
        except ValueError:  # not JSON, or an integer too long to convert
            if i < len(lines) - 1:
                return None  # only the last line may be torn
            if line.endswith(",]"):  # the append's first byte replaced the line break: item whole
                with contextlib.suppress(ValueError):
                    items.append(loads_within(line[:-2], _ITEM_DEPTH))
            return items
    return items  # cut at the end of a line: every item there is whole


class Reformatted(str):
    """The notice of a log whose items loaded but whose form is not :class:`AppendLog`'s: the
    loader tells it from a torn log's notice by type, and rewrites the file at once."""


def as_written(path: Path, items: int) -> bool:
    """Whether the file is in the form :class:`AppendLog` writes (``[``, one item a line, ``]``),
    judged by its bytes: a JSON item holds no raw line break, so ``items + 1`` of them is that form."""
    raw = read_regular(path)
    if raw is None or raw == b"[]":
        return True
    return raw.startswith(b"[\n") and raw.endswith(b"\n]") and raw.count(b"\n") == items + 1


def read_log(path: Path, notices: list[str] | None = None) -> JSONValue:
    """An :class:`AppendLog` file's JSON; a torn last append (a crash mid-write) is dropped and
    said in ``notices``, and so is a file reformatted by an editor or ``jq`` (its items load; it must
    be rewritten whole before anything is appended to it)."""
    try:
        items: JSONValue = read_json(path, default=[])
    except OverfullFileError:
        raise  # refused unparsed: read line by line it would cost what it was refused for
    except CorruptFileError:
        items = _torn_log(path)
        if items is None:
            raise
        if notices is not None:
            notices.append(f"{path.name} ended in a line cut short (a crash while it was written): "
                           f"the {len(items)} complete entries before it were loaded.")
        return items
    # An append needs the file to end as nbagent writes it; a reformatted one would load and then
    # fail every save, so it is reported here and the session rewrites it on load.
    if isinstance(items, list) and notices is not None and not as_written(path, len(items)):
        notices.append(Reformatted(f"{path.name} was not in the form nbagent writes (reformatted by an editor or a "
                                   f"tool?): its {len(items)} entries were loaded and the file is rewritten in that form."))
    return items
