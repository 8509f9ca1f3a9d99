"""What a notebook's earlier kernels spent in sessions that a restart cut short before any turn finished.

A restart (or a kernel that died) in the middle of a prompt leaves its session's folder with the
requests it was billed for, and no turn to replay: the next run of the cell asks again, in a new
session, whose totals start at $0. Money spent stays spent, so ``%agent cost`` and ``%agent status``
add those sessions' spend. Which sessions are this notebook's: those whose replay index
(``.nbagent/replay/<session>.json``, written with no turn before a live turn's first request, see
``RecordKeeper.linking``) names this notebook, signed with this user's key: a folder received with
the notebook (a classmate's repository with its ``.nbagent/``, a shared drive) holds their cut-short
sessions of a notebook of that name, their money, not the user's. Another notebook of the folder
names itself; a copy (Save As, Duplicate) has its own name, so neither counts them. This kernel's own sessions (a
``%agent reset`` after ■) are left out: the process id is in the session's name; so is a session
another live kernel of the notebook is still running (it holds the folder's lock).
"""

from __future__ import annotations

import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.contracts.errors import CorruptFileError, TaskFolderError
from ...engine.disk.safe_open import open_regular
from ...engine.disk.task_lock import LOCK_FILE
from ...engine.disk.user_key import sign, signed_by_user
from ...engine.state.task_files import REQUESTS_FILE
from .replay import INDEX, RECORD_DIR, load_index, sessions_dir

if TYPE_CHECKING:
    from ...engine.state.totals import Spent


_PURPOSE = "nbagent linked session v1"


def link_signature(session: str, notebook: str) -> str | None:
    """This user's signature for the index ``RecordKeeper.linking`` writes: ``session`` is
    ``notebook``'s, begun by this user (None: the key is unusable)."""
    return sign(_PURPOSE, session, notebook)


def _made_here(session: str) -> bool:
    """Whether this process made ``session`` (named time, pid, count: ``replay.new_session_dir``)."""
    parts = session.split("-")
    return len(parts) == 4 and parts[2] == str(os.getpid())


def _running(task: Path) -> bool:
    """Whether another live process holds ``task``'s writer lock (an ``flock``, see
    :mod:`~nbagent.engine.disk.task_lock`): the same notebook's other kernel, its prompt still running,
    is not cut short. Asked of the lock, not of the pid its file names: a dead kernel's file names a
    pid that a live, unrelated process may have now (a reboot, pids wrapping), which read as "still
    running" and left the cut-short session's money out of ``%agent cost`` without a word. The shared
    probe is released at once; it keeps out only a writer taking the lock in that instant."""
    try:
        fd = open_regular(task / LOCK_FILE, os.O_RDONLY)
    except (OSError, TaskFolderError):  # no lock file, or not a regular one: nobody holds it
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True  # held: a live writer
    except OSError:
        return False  # a file system without flock: counted, as before
    finally:
        os.close(fd)  # closing it releases the probe
    return False


def _no_turn_sessions(root: Path, notebook: str, current: str | None) -> tuple[list[tuple[Path, bool]], list[str]]:
    """The folders of ``notebook``'s sessions, made by other kernels, in which no turn finished, each
    with whether this user's key signed its index for that session and notebook; and the index files
    that could not be read (each read once: a received folder may hold many, or large, ones)."""
    folder = root / RECORD_DIR / INDEX
    if not folder.is_dir():
        return [], []
    found, damaged = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            index = load_index(root, path.stem)
        except CorruptFileError as exc:  # not JSON, a FIFO, too large: no link to read; said, not skipped silently
            damaged.append(f"{path.relative_to(root)} ({exc.reason})")
            continue
        if index is None or index.turns or index.notebook != notebook or index.session == current \
                or _made_here(index.session):
            continue
        task = sessions_dir(root) / index.session
        if task.is_dir() and not _running(task):
            found.append((task, signed_by_user(index.linked, _PURPOSE, index.session, notebook)))
    return found, damaged


@dataclass(frozen=True)
class Earlier:
    """What ``%agent cost`` / ``%agent status`` say of this notebook's cut-short earlier sessions,
    from one reading of the folder's replay indexes."""

    spent: Spent | None = None
    """What the signed ones spent (None: none spent anything)."""
    not_signed: int = 0
    """How many billed ones were left out, their link not signed by this user's key."""
    unreadable: tuple[str, ...] = ()
    """The replay index files left out because they could not be read, each with why."""


def earlier(root: Path, notebook: str, current: str | None) -> Earlier:
    """:func:`cut_short_spend`, :func:`not_signed` and the unreadable indexes, in one scan."""
    from ...engine.state.totals import Spent

    found, damaged = _no_turn_sessions(root, notebook, current)
    total, unsigned = Spent(), 0
    for task, signed in found:
        if not signed:  # counted, never loaded: see _may_be_billed
            unsigned += _may_be_billed(task)
        elif (billed := _billed(task)) is not None:
            total = total + billed
    return Earlier(total if total.requests else None, unsigned, tuple(damaged))


def cut_short(root: Path, notebook: str, current: str | None) -> list[Path]:
    """The folders of ``notebook``'s sessions, made by other kernels, in which no turn finished."""
    return [task for task, signed in _no_turn_sessions(root, notebook, current)[0] if signed]


def _billed(task: Path) -> Spent | None:
    """What ``task``'s records say it was billed (None: unreadable, or no request of it is left)."""
    from ...classroom import _folder_figures
    from ...engine.state.totals import Spent

    figures = _folder_figures(task)
    # Only where a request of it is still in its records: the one a restart cut short. A session
    # rolled back to its start, or a copy forked at turn 0 from a record it only replayed (a
    # Duplicate's rollback), holds none; its money is the record's, counted where that replays.
    if figures is None or not figures["requests"] or not figures["prompts"]:
        return None
    return Spent(requests=figures["requests"], cost_usd=figures["cost_usd"], budget_usd=figures["budget_usd"],
                 unpriced_requests=figures["unpriced_requests"])


def _may_be_billed(task: Path) -> bool:
    """Whether a session whose link this user's key did not sign holds a request, told from its
    records file's size alone. It adds no money (only the count said as "not added"), and its folder
    may be a received one's, each file up to 256 MB: loaded whole, a few compressed megabytes of a
    zip made every ``%agent cost`` / ``status`` read and parse gigabytes (3 sessions of 30 MB, 10 s)."""
    try:
        st = os.lstat(task / REQUESTS_FILE)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > _NO_RECORDS


_NO_RECORDS = len("[\n]\n")
"""The size of a records file that holds none (a session rolled back to its start)."""


def not_signed(root: Path, notebook: str, current: str | None) -> int:
    """How many sessions :func:`cut_short_spend` would have added but for its index's signature:
    linked before nbagent signed the link (an upgrade), or by someone else (a received folder), or
    where this user's key could not sign. Said, so that an upgrade does not silently read as $0."""
    return earlier(root, notebook, current).not_signed


def cut_short_spend(root: Path, notebook: str, current: str | None) -> Spent | None:
    """What :func:`cut_short`'s sessions spent (None: none spent anything). A folder that cannot be
    read counts nothing (as ``class_summary``'s ``unreadable``), nor one whose records hold no request."""
    return earlier(root, notebook, current).spent


__all__ = ["Earlier", "cut_short", "cut_short_spend", "earlier", "link_signature", "not_signed"]
