"""What the file tools have read and written, so re-reads are cheap and writes never clobber user edits.

One :class:`FileStateCache` per session. File tools call it around their I/O:

* ``read_file``: ``check_read(path, turn, lines=...)`` first — a message instead of the content
  when the model already saw those lines of an unchanged file — then ``record(path, turn, ...)``
  with the bytes it returned;
* ``write_file`` / ``edit_file``: ``check_write(path)`` first — raises :class:`FileChangedError`
  if the file changed on disk since the session last read or wrote it (the user edited it
  meanwhile) — then ``record(path, turn, source="write", data=...)``.

"Changed" means the content changed (sha256), not merely the mtime: touching a file or saving it
unmodified in an editor does not count. The size is compared first so most changes are noticed
without hashing. Pure stdlib; paths are keyed by their real path (symlinks and ``..`` resolved).

The loop must call :meth:`FileStateCache.invalidate_reads` whenever the model can no longer see
earlier tool results (context truncation, rollback): "unchanged since the read at turn N" is only
useful while that read is in the model's context. Write protection survives it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from typing import Literal, Union

PathArg = Union[str, "os.PathLike[str]"]
LineSpan = tuple[int, Union[int, None]]
"""Lines the model saw: ``(first, last)``, 1-based and inclusive; ``last=None`` means to the end."""

WHOLE_FILE: LineSpan = (1, None)


class FileChangedError(Exception):
    """A write was refused: the file changed on disk since the session last read or wrote it."""

    def __init__(self, message: str, path: str, turn: int) -> None:
        super().__init__(message)
        self.path = path
        self.turn = turn


@dataclass(frozen=True)
class FileSnapshot:
    """The state of one file as the session last saw it.

    ``source`` says whether that was a read or a write by a tool; ``lines`` is what the model saw
    of the content (None after a write or edit, or a read whose output was cut short), and is the
    only thing that lets :meth:`FileStateCache.check_read` answer "unchanged".
    """

    path: str
    mtime_ns: int
    size: int
    sha256: str
    turn: int
    source: Literal["read", "write"] = "read"
    lines: LineSpan | None = WHOLE_FILE

    def covers(self, lines: LineSpan) -> bool:
        """Whether the model saw at least ``lines`` of the content in this snapshot."""
        if self.lines is None:
            return False
        first, last = self.lines
        want_first, want_last = lines
        if want_first < first:
            return False
        if last is None:
            return True
        return want_last is not None and want_last <= last


def _key(path: PathArg) -> str:
    return os.path.realpath(os.fspath(path))


def _sha256_of_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class FileStateCache:
    """Per-session memory of file reads and writes (see the module docstring for the protocol).

    ``require_read_before_write``: also refuse to overwrite an existing file the session never
    read or wrote (off by default: the spec only protects files that changed since a read).
    """

    def __init__(self, *, require_read_before_write: bool = False) -> None:
        self.require_read_before_write = require_read_before_write
        self._snapshots: dict[str, FileSnapshot] = {}

    def __len__(self) -> int:
        return len(self._snapshots)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, (str, os.PathLike)) and _key(path) in self._snapshots

    def get(self, path: PathArg) -> FileSnapshot | None:
        """The last snapshot of ``path``, or None if the session never read or wrote it."""
        return self._snapshots.get(_key(path))

    def record(
        self,
        path: PathArg,
        turn: int,
        *,
        data: bytes | None = None,
        source: Literal["read", "write"] = "read",
        lines: LineSpan | None = WHOLE_FILE,
    ) -> FileSnapshot:
        """Remember ``path`` as it is now, after a read or write at ``turn``.

        ``data`` is the exact bytes the tool read or wrote; pass it so the hash describes what the
        model saw even if the file changes a moment later (then the next check sees the change).
        Without it the file is hashed from disk. ``lines`` is ignored for writes (a write leaves
        nothing to point a later read at); after a read whose output was cut short pass ``None``.
        A read of the same unchanged content keeps the wider of the two spans.
        """
        key = _key(path)
        st = os.stat(key)
        digest = hashlib.sha256(data).hexdigest() if data is not None else _sha256_of_file(key)
        size = len(data) if data is not None else st.st_size
        seen = None if source == "write" else lines
        old = self._snapshots.get(key)
        if seen is not None and old is not None and old.sha256 == digest and old.covers(seen):
            # Re-reading part of what the model already saw must not narrow what it saw.
            snap = replace(old, mtime_ns=st.st_mtime_ns, size=size, turn=turn, source="read")
        else:
            snap = FileSnapshot(key, st.st_mtime_ns, size, digest, turn, source, seen)
        self._snapshots[key] = snap
        return snap

    def _unchanged(self, snap: FileSnapshot) -> bool:
        try:
            st = os.stat(snap.path)
        except OSError:
            return False
        if st.st_size != snap.size:
            return False
        try:
            return _sha256_of_file(snap.path) == snap.sha256
        except OSError:
            return False

    def check_read(
        self, path: PathArg, turn: int, *, lines: LineSpan = WHOLE_FILE, label: str | None = None
    ) -> str | None:
        """A short message to send instead of the content, or None when the tool must read the file.

        The message is returned only when the model already saw ``lines`` of this exact content in
        an earlier read (at a turn not after ``turn``: a snapshot from a later turn means a rollback
        happened and is not trusted). ``label`` is how the path is named in the message (default:
        the path as given).
        """
        snap = self._snapshots.get(_key(path))
        if snap is None or snap.source != "read" or snap.turn > turn or not snap.covers(lines):
            return None
        if not self._unchanged(snap):
            return None
        what = "" if lines == WHOLE_FILE else f" (lines {_span_text(lines)})"
        return (
            f"{label or os.fspath(path)}{what} is unchanged since the read at turn {snap.turn}; "
            "its content is in that earlier read_file result."
        )

    def check_write(self, path: PathArg, *, label: str | None = None) -> None:
        """Raise :class:`FileChangedError` if writing ``path`` would overwrite changes made on disk.

        Passes for files the session never saw (unless ``require_read_before_write`` and the file
        exists) and for files unchanged since the last read or write. ``label`` names the path in
        the message (default: the path as given).
        """
        key = _key(path)
        snap = self._snapshots.get(key)
        shown = label or os.fspath(path)
        if snap is None:
            if self.require_read_before_write and os.path.exists(key):
                raise FileChangedError(f"{shown} has not been read yet; read it before writing to it.", key, -1)
            return
        if self._unchanged(snap):
            return
        how = "read" if snap.source == "read" else "written"
        if not os.path.exists(key):
            raise FileChangedError(
                f"{shown} was deleted on disk since it was {how} at turn {snap.turn}; "
                "list or read it again before writing.", key, snap.turn,
            )
        raise FileChangedError(
            f"{shown} was modified on disk since it was {how} at turn {snap.turn} "
            "(probably by the user); read it again before writing.", key, snap.turn,
        )

    def invalidate_reads(self) -> None:
        """Stop answering "unchanged" for earlier reads (the model no longer sees them); keep write checks."""
        self._snapshots = {k: replace(s, lines=None) for k, s in self._snapshots.items()}

    def forget(self, path: PathArg) -> None:
        """Drop everything known about ``path``."""
        self._snapshots.pop(_key(path), None)

    def clear(self) -> None:
        """Drop everything (a new session)."""
        self._snapshots.clear()


def _span_text(lines: LineSpan) -> str:
    first, last = lines
    return f"{first}-end" if last is None else f"{first}-{last}"


__all__ = ["FileStateCache", "FileSnapshot", "FileChangedError", "LineSpan", "WHOLE_FILE"]
