"""The record of what external clients did: one entry per call, in the session's task folder.

Each entry says which client, which tool, what it did, when, who allowed it and how it ended. The
entries go to ``external_actions.json`` in the task folder of the session current at the time (an
append-only JSON list, like the folder's other logs), or stay in memory when the session has no
folder (or no session exists yet). ``%agent history`` shows them under the requests table.

They are never part of the conversation's history (the model did not make them) and never enter
the replay index: Run All replays nothing of them. The cells a client inserted are plain cells of
the notebook, with ``metadata.nbagent.kind == "external"`` naming the client: they run as code.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ...engine.contracts.errors import NbAgentError
from ...engine.disk.append_log import AppendLog, read_log

if TYPE_CHECKING:
    import pandas as pd

FILE_NAME = "external_actions.json"
NAMES_SHOWN = 20
"""At most this many names a client gave are written in an entry's ``what`` (then "and N more")."""
NAME_CHARS = 80
"""... each cut to this many characters."""


def shown_names(names: list[str]) -> str:
    """Names a client gave, as the record shows them: bounded (:data:`NAMES_SHOWN` names of
    :data:`NAME_CHARS` characters; a client could send megabytes per call, and the log lives in
    the task folder) and escaped (a newline, a terminal escape or a direction mark shown as
    ``⟦U+202E⟧``, as the cards show them: ``%agent history`` prints them)."""
    from ..view.render import marked_line

    listed = ", ".join(marked_line(n, NAME_CHARS) for n in names[:NAMES_SHOWN])
    return listed + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


@dataclass(frozen=True)
class ExternalAction:
    """One call of an external (MCP) client."""

    at: str
    """When the call arrived (UTC, ISO 8601, seconds)."""
    client: str
    tool: str
    what: str
    allowed_by: str
    """Who allowed it ("the user (Allow)", "not asked (read-only)", …) or "refused"."""
    outcome: str
    """"ok", "error: …", "refused: …"."""


LOADED_CHARS = 2_000
"""Most characters of one field of a row read back from a task folder (a live row's names: 20 of 80)."""


def _loaded(value: object) -> str:
    from ..view.render import marked_line

    return marked_line(value, LOADED_CHARS)


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class ActionLog:
    """External actions of one kernel, each saved with the session current when it happened."""

    def __init__(self, task_dir: Callable[[], Path | None]) -> None:
        self._task_dir = task_dir
        self._lock = threading.Lock()
        self._memory: list[ExternalAction] = []
        self._files: dict[Path, tuple[AppendLog, list[object]]] = {}

    def add(self, action: ExternalAction) -> None:
        """Record ``action`` (kernel loop; a write that fails keeps it in memory, never raises)."""
        folder = self._task_dir()
        with self._lock:
            if folder is None:
                self._memory.append(action)
                return
            try:
                log, items = self._file(folder)
                items.append(dataclasses.asdict(action))
                log.save(items, lambda item: json.dumps(item, ensure_ascii=False))
            except (OSError, NbAgentError):  # an unreadable folder: the entry is kept, in memory
                self._memory.append(action)

    def _file(self, folder: Path) -> tuple[AppendLog, list[object]]:
        entry = self._files.get(folder)
        if entry is None:
            path = folder / FILE_NAME
            notices: list[str] = []
            loaded = read_log(path, notices) if path.exists() else []  # CorruptFileError: caller keeps it in memory
            items: list[object] = list(loaded) if isinstance(loaded, list) else []
            log = AppendLog(path)
            if not notices:  # a torn or reformatted file is rewritten whole by the first save
                log.prime(items)
            entry = self._files[folder] = (log, items)
        return entry

    def entries(self) -> list[ExternalAction]:
        """The current session's entries (its folder's, then any kept in memory), oldest first."""
        folder = self._task_dir()
        with self._lock:
            try:
                saved: list[object] = list(self._file(folder)[1]) if folder is not None else []
            except (OSError, NbAgentError):
                saved = []
            memory = list(self._memory)
        names = {f.name for f in dataclasses.fields(ExternalAction)}
        # The folder may be received (a repository's .nbagent/ sessions): its rows are escaped and
        # bounded as a live row's client-given parts are, since %agent history prints them.
        loaded = [ExternalAction(**{k: _loaded(v) for k, v in item.items() if k in names})
                  for item in saved if isinstance(item, dict) and names <= item.keys()]
        return loaded + memory

    def close(self) -> None:
        with self._lock:
            for log, _items in self._files.values():
                log.close()
            self._files.clear()


def frame(entries: list[ExternalAction]) -> pd.DataFrame:
    """The entries as a table (pandas) for ``%agent history``."""
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(e) for e in entries],
                        columns=[f.name for f in dataclasses.fields(ExternalAction)])
