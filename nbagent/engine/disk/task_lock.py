"""The writer's lock on a task folder, and the folder's identity while the session writes it.

The lock is an ``flock`` on ``nbagent.lock``, held on an open file for the session's life: taking
it is one atomic step (two processes can never both hold it), and the kernel drops it when its
process dies, so a dead writer's lock is free at once. The file also holds the writer's pid, only
to name it in the error a second writer gets (a pid that is unreadable, huge, or a live unrelated
process's locks nothing). Before each write the session checks, with :meth:`FolderLock.check`,
that the folder and the lock file are still the ones it locked (``st_dev``/``st_ino``).
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from ..contracts.errors import NbAgentError, TaskFolderError
from .safe_open import open_regular

LOCK_FILE = "nbagent.lock"

_HELD: set[Path] = set()  # folders locked by this process's live sessions


class TaskFolderLockedError(NbAgentError):
    """Another live Agent (this process or another) writes this task folder."""

    def __init__(self, task_dir: Path, pid: int | None, here: bool) -> None:
        self.task_dir, self.pid = task_dir, pid
        if here:
            where = ("another Agent in this process", "close that session first (agent.close() / %agent reset)")
        else:
            # In a notebook the other writer is a kernel: the same notebook open under another Jupyter
            # server, or a script. %agent reset in this kernel would only start a new conversation here.
            where = (f"process {pid}" if pid else "another process",
                     "close the session there first (shut that kernel down, or agent.close() / %agent reset in it: "
                     "the same notebook open under another Jupyter server, say)")
        super().__init__(f"{task_dir} is in use by {where[0]} (lock file {LOCK_FILE}). A task folder has one writer: "
                         f"{where[1]}, or use another folder.")


class TaskFolderUnwritableError(TaskFolderError):
    """The task folder or its lock file could not be created (a full disk, a permission)."""

    def __init__(self, task_dir: Path, exc: OSError) -> None:
        super().__init__(task_dir, f"cannot write the task folder {task_dir}: {exc.strerror or exc}. "
                                   "Free space or fix its permissions, or give another task_dir.")
        self.errno = exc.errno


class TaskFolderReplacedError(TaskFolderError):
    """Another folder now stands where this session's task folder was: nothing is written there."""

    def __init__(self, task_dir: Path) -> None:
        super().__init__(task_dir, f"{task_dir} was replaced by another folder while this session wrote it; "
                                   "nothing is written there, so as not to overwrite it. The conversation is kept "
                                   "in memory: agent.save('a new folder') keeps a copy.")


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class FolderLock:
    """The writer's lock on a task folder (see the module docstring).

    :meth:`acquire` takes a free folder (returning a notice when a dead writer's lock file was
    left) and raises :class:`TaskFolderLockedError` for a live writer.
    """

    def __init__(self, task_dir: str | Path) -> None:
        self.task_dir = Path(task_dir).resolve()
        self.path = self.task_dir / LOCK_FILE
        self._fd: int | None = None
        self._folder: tuple[int, int] | None = None  # the locked folder's st_dev, st_ino
        self._locked: tuple[int, int] | None = None  # the lock file's, read once: checked before every write

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> str | None:
        """Lock the folder (creating it); returns a notice when a dead writer's lock was left."""
        if self.task_dir in _HELD:
            raise TaskFolderLockedError(self.task_dir, os.getpid(), here=True)
        notice = self._lock()
        _HELD.add(self.task_dir)
        return notice

    def _lock(self) -> str | None:
        try:
            self.task_dir.mkdir(parents=True, exist_ok=True)
            while True:
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT)
                if self._flock(fd):
                    break
        except TaskFolderError:
            raise
        except OSError as exc:
            raise TaskFolderUnwritableError(self.task_dir, exc) from None
        try:
            left = os.pread(fd, 64, 0).strip()
            os.ftruncate(fd, 0)
            if os.pwrite(fd, str(os.getpid()).encode("ascii"), 0) <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self._folder, locked = _identity(os.stat(self.task_dir)), _identity(os.fstat(fd))
        except OSError as exc:
            os.close(fd)
            raise TaskFolderUnwritableError(self.task_dir, exc) from None
        self._fd, self._locked = fd, locked
        owner = _pid(left)
        if not left or owner == os.getpid():
            return None
        # Said plainly: a colleague's folder copied while their kernel held it carries their pid.
        return (f"{self.task_dir}: took over the lock left by process {owner}, which is no longer running "
                "here (a writer that stopped without releasing it, or a folder copied while it was in use)."
                if owner is not None else f"{self.task_dir}: replaced an unreadable lock file.")

    def _flock(self, fd: int) -> bool:
        """Lock ``fd``; False (closed) if the file it opened is no longer the lock file: its holder
        unlinked it as it released it, and a lock on an unlinked file keeps no one out."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            now = os.stat(self.path, follow_symlinks=False)
            if _identity(now) == _identity(os.fstat(fd)):
                return True
        except BlockingIOError:
            pid = _pid(os.pread(fd, 64, 0).strip())
            os.close(fd)
            raise TaskFolderLockedError(self.task_dir, pid, here=False) from None
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return False

    def check(self) -> str | None:
        """Before a write: the folder and its lock file are still the ones locked. A deleted folder
        (or lock file) is locked again, which re-creates it; the notice returned says so, and the
        caller writes everything again. Another folder in its place raises
        :class:`TaskFolderReplacedError`; a closed lock, :class:`TaskFolderError`."""
        if self._fd is None:
            raise TaskFolderError(self.task_dir, f"this session was closed and no longer writes {self.task_dir}: "
                                                 "Agent.resume() it to continue writing there.")
        try:
            folder = _identity(os.stat(self.task_dir))
        except FileNotFoundError:
            folder = None
        if folder is not None and folder != self._folder:
            raise TaskFolderReplacedError(self.task_dir)
        if folder is not None and self._lock_file_intact():
            return None
        old, self._fd = self._fd, None
        try:
            self._lock()
        except TaskFolderLockedError as exc:  # someone else re-created and locked it meanwhile
            _HELD.discard(self.task_dir)
            raise TaskFolderError(self.task_dir, str(exc)) from None
        except BaseException:
            _HELD.discard(self.task_dir)
            raise
        finally:
            os.close(old)
        what = "the task folder" if folder is None else "its lock file"
        return (f"{self.task_dir}: {what} was deleted by another program while this session was open; "
                "it was written again whole from memory.")

    def _lock_file_intact(self) -> bool:
        assert self._fd is not None
        try:
            return _identity(os.stat(self.path, follow_symlinks=False)) == self._locked
        except FileNotFoundError:
            return False

    def release(self) -> None:
        """Give the folder up (idempotent); the lock file goes if it is still ours."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        _HELD.discard(self.task_dir)
        try:
            if _identity(os.stat(self.path, follow_symlinks=False)) == _identity(os.fstat(fd)):
                os.unlink(self.path)  # while still locked: whoever opened it before sees it is gone
        except OSError:
            pass
        finally:
            os.close(fd)


def left_by_a_dead_writer(task_dir: Path) -> bool:
    """Whether ``task_dir`` holds a lock file no live writer holds: its writer stopped without releasing
    it (its kernel killed), as a writer that closes removes its lock file. A shared lock is taken and
    dropped at once to tell: it is refused while a writer holds its own."""
    folder = task_dir.resolve()
    if folder in _HELD:
        return False
    try:
        fd = open_regular(folder / LOCK_FILE, os.O_RDONLY)
    except (OSError, TaskFolderError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _pid(text: bytes) -> int | None:
    """The pid a lock file names, if it names one (only for messages: the flock is the lock)."""
    return int(text) if text.isdigit() and len(text) <= 10 else None
