"""``Session.save(dir)``: a copy of the session's task folder, never over someone else's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ..contracts.errors import TaskFolderError
from ..disk.persist import atomic_write_bytes
from ..disk.safe_open import read_regular
from ..disk.task_lock import FolderLock
from .store import HISTORY_FILE, NOTES_FILE, SESSION_FILE, SessionStore


def save_copy(task_dir: Path, write_all: Callable[[SessionStore], None], source: Path | None = None) -> Path:
    """Write a copy into ``task_dir`` with ``write_all`` (and the agent's notes file from the
    ``source`` folder, which is the agent's, not the session's state). Refused before anything is written into a
    folder another live Agent writes (:class:`~nbagent.engine.disk.task_lock.TaskFolderLockedError`) or
    one holding another saved session, which the copy would replace (:class:`TaskFolderError`)."""
    lock = FolderLock(task_dir)
    lock.acquire()  # held while the copy is written: no Agent starts writing there meanwhile
    store = SessionStore(task_dir)
    try:
        if any(os.path.lexists(task_dir / name) for name in (HISTORY_FILE, SESSION_FILE)):
            raise TaskFolderError(task_dir, f"{task_dir} already holds a saved session, which saving this one there "
                                            "would replace: choose a new or empty folder (or move that session "
                                            "aside first).")
        write_all(store)
        notes = read_regular(source / NOTES_FILE) if source is not None else None
        if notes is not None:  # else a resumed copy would start without what the agent noted
            atomic_write_bytes(store.task_dir / NOTES_FILE, notes)
        store.sync()
    finally:
        store.close()  # a copy's logs: nothing more is appended to them
        lock.release()
    return store.task_dir


def same_folder(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one folder (by inode when both exist, else by resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return a.resolve() == b.resolve()
