"""What a user spent today, across sessions and kernels: the per-day budget's ledger.

One small JSON file per user and day (``spend-USER-YYYY-MM-DD.json`` under the policy's
``ledger_dir``; USER is the operating system's account of the process, not ``$USER``), updated
under an exclusive ``flock`` by every kernel of that user, written atomically. Money spent is never un-spent: entries only grow.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import getpass
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


def os_user() -> str:
    """Who runs the kernel, as the operating system says: the name of ``os.getuid()`` (its number
    when the account has no name, as in some containers). Not ``$USER``/``$LOGNAME``, which a cell
    can set to start a fresh day's budget; ``getpass`` only where there are no uids (Windows)."""
    if not hasattr(os, "getuid"):
        return getpass.getuser()
    import pwd

    uid = os.getuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


class DailyLedger:
    """The spend of ``user`` on the day ``today()`` returns, kept in ``folder``."""

    def __init__(self, folder: str | Path, user: str | None = None,
                 today: Callable[[], _dt.date] = _dt.date.today) -> None:
        self.folder = Path(folder).expanduser()
        self.user = re.sub(r"[^A-Za-z0-9_.-]", "_", user or os_user())
        self.today = today

    @property
    def path(self) -> Path:
        return self.folder / f"spend-{self.user}-{self.today().isoformat()}.json"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / f".lock-{self.user}", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def spent(self) -> float:
        """What was spent today (0 when nothing was, or the file is unreadable: it only grows)."""
        try:
            value = json.loads(self.path.read_text(encoding="utf-8")).get("spent_usd", 0.0)
        except (OSError, ValueError, AttributeError):
            return 0.0
        return float(value) if isinstance(value, (int, float)) and value >= 0 else 0.0

    def add(self, usd: float) -> float:
        """Add ``usd`` to today's spend; returns the new total."""
        if not usd > 0:
            return self.spent()
        from ..engine.disk.persist import atomic_write_text  # not at import: the kernel's start loads this package

        with self._locked():
            total = self.spent() + usd
            atomic_write_text(self.path, json.dumps({"user": self.user, "day": self.today().isoformat(),
                                                     "spent_usd": round(total, 6)}))
        return total
