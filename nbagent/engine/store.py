"""The task folder on disk: four JSON files, each written atomically, a lock, and the snapshot they load into.

``api_conversation_history.json`` (the messages), ``ui_messages.json`` (the event log without
stream deltas), ``context_history.json`` (the context manager's updates) and ``session.json``
(range, model, totals, per-request records, turn marks, what undoes each compaction; never the
API key). The
:class:`~nbagent.engine.session.Session` is the only writer; ``nbagent.lock`` (the writer's pid)
keeps a second Agent, in this process or another, from writing the same folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .context.updates import ContextHistoryUpdates, load_updates, save_updates
from .cost import Usage
from .errors import CorruptFileError, NbAgentError
from .events import Event, RequestRecord, Totals, event_from_dict, event_to_dict
from .messages import history_problems
from .persist import atomic_write_json, atomic_write_text, dumps_line, read_json
from .task_files import check_history, check_meta

HISTORY_FILE = "api_conversation_history.json"
UI_FILE = "ui_messages.json"
CONTEXT_FILE = "context_history.json"
SESSION_FILE = "session.json"
LOCK_FILE = "nbagent.lock"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class TurnMark:
    """Where the session stood at the end of a turn: what rollback restores."""

    turn: int
    history_len: int
    deleted_range: tuple[int, int] | None
    ts: int
    records_len: int
    previous_usage: dict[str, int] | None = None
    last_blocks: int | None = None
    """Blocks of the last message then (a later prompt may be merged into it; rollback trims it)."""


@dataclass
class SessionSnapshot:
    """Everything loaded from a task folder."""

    history: list[dict[str, Any]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    model: str | None = None
    deleted_range: tuple[int, int] | None = None
    records: list[RequestRecord] = field(default_factory=list)
    marks: list[TurnMark] = field(default_factory=list)
    last_ts: int = 0
    previous_usage: dict[str, int] | None = None
    updates: ContextHistoryUpdates = field(default_factory=ContextHistoryUpdates)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    """What rollback needs to undo each compaction (parsed by the session: RollbackPoint)."""


def totals_from_records(records: list[RequestRecord], *, truncations: int = 0) -> Totals:
    """Session totals as the sum of per-request figures."""
    usage = Usage()
    cost = 0.0
    unpriced = 0
    for r in records:
        usage = usage + r.usage
        if r.cost_usd is None:
            unpriced += 1
        else:
            cost += r.cost_usd
    return Totals(
        requests=len(records), turns=len({r.turn for r in records}), usage=usage, cost_usd=cost,
        retries=sum(r.retries for r in records), truncations=truncations, unpriced_requests=unpriced,
    )


def _record_from_dict(d: dict[str, Any]) -> RequestRecord:
    d = dict(d)
    d["usage"] = Usage(**d["usage"])
    rng = d.get("deleted_range")
    d["deleted_range"] = None if rng is None else (int(rng[0]), int(rng[1]))
    return RequestRecord(**d)


class SessionStore:
    """Reads and writes one task folder."""

    def __init__(self, task_dir: str | Path) -> None:
        self.task_dir = Path(task_dir)
        # Records, marks and events are frozen: each is turned into a dict once, not on every save.
        self._dicts: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._events_written: tuple[int, Any] | None = None  # (count, last event) in the event log

    def _as_dict(self, obj: Any) -> dict[str, Any]:
        hit = self._dicts.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        d = event_to_dict(obj) if hasattr(obj, "kind") else dataclasses.asdict(obj)
        self._dicts[id(obj)] = (obj, d)
        return d

    def remove_stale_temp_files(self) -> None:
        """Delete temp files of atomic writes a killed process left (``.<file>.*.tmp``); call it
        only while holding the folder's lock, when no write of ours is in progress."""
        for name in (HISTORY_FILE, UI_FILE, CONTEXT_FILE, SESSION_FILE):
            for tmp in self.task_dir.glob(f".{name}.*.tmp"):
                try:
                    tmp.unlink()
                except OSError:
                    pass

    def save_context(self, updates: ContextHistoryUpdates) -> None:
        save_updates(updates, self.task_dir)

    def save_history(self, history: list[dict[str, Any]]) -> None:
        atomic_write_json(self.task_dir / HISTORY_FILE, history)

    def save_events(self, events: list[Event]) -> None:
        """The event log grows only at its end: append what is new (one line per event) instead of
        rewriting the whole file on every save (a large tool output would be rewritten each time).
        The first save of a store, or any other change, rewrites it atomically."""
        path = self.task_dir / UI_FILE
        done = self._events_written
        if done is not None and 0 < done[0] <= len(events) and events[done[0] - 1] is done[1]:
            if done[0] < len(events):
                _append_lines(path, [dumps_line(self._as_dict(e)) for e in events[done[0]:]])
        else:
            atomic_write_json(path, [self._as_dict(e) for e in events])
        self._events_written = (len(events), events[-1]) if events else None

    def save_meta(
        self, *, model: str, deleted_range: tuple[int, int] | None, records: list[RequestRecord],
        marks: list[TurnMark], last_ts: int, previous_usage: dict[str, int] | None,
        compactions: list[dict[str, Any]] | None = None,
    ) -> None:
        totals = totals_from_records(records)
        extra = {"compactions": compactions} if compactions else {}
        atomic_write_json(self.task_dir / SESSION_FILE, {
            "version": FORMAT_VERSION,
            "model": model,
            "deleted_range": list(deleted_range) if deleted_range else None,
            "totals": dataclasses.asdict(totals),
            "records": [self._as_dict(r) for r in records],
            "marks": [self._as_dict(m) for m in marks],
            "last_ts": last_ts,
            "previous_usage": previous_usage,
            **extra,
        })

    def load(self) -> SessionSnapshot:
        """Load the folder; a corrupt file raises :class:`CorruptFileError` naming it (untouched).

        ``context_history.json`` is checked too (the context manager reads it on resume).
        """
        if not self.task_dir.is_dir():
            raise FileNotFoundError(f"no session folder at {self.task_dir}")
        history = _load_history(self.task_dir / HISTORY_FILE)
        events = _load_events(self.task_dir / UI_FILE)
        updates = load_updates(self.task_dir)  # raises CorruptFileError naming context_history.json
        meta_path = self.task_dir / SESSION_FILE
        meta = read_json(meta_path, default={})
        if not isinstance(meta, dict):
            raise CorruptFileError(meta_path, "expected a JSON object")
        check_meta(meta_path, meta)
        try:
            records = [_record_from_dict(r) for r in meta.get("records", [])]
            marks = [
                TurnMark(**{**m, "deleted_range": tuple(m["deleted_range"]) if m.get("deleted_range") else None})
                for m in meta.get("marks", [])
            ]
            rng = meta.get("deleted_range")
            deleted_range = (int(rng[0]), int(rng[1])) if rng else None
            last_ts = int(meta.get("last_ts", 0))
            previous_usage = meta.get("previous_usage")
            if previous_usage is not None:
                previous_usage = {str(k): int(v) for k, v in dict(previous_usage).items()}
            compactions = meta.get("compactions", [])
            if not isinstance(compactions, list):
                raise TypeError("compactions is not a list")
            model = meta.get("model")
            if model is not None and not isinstance(model, str):
                raise TypeError("model is not a string")
        except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
            raise CorruptFileError(meta_path, f"bad session data: {exc}") from None
        # Files are written one by one; after a crash between writes, keep the range within history.
        if deleted_range and deleted_range[1] >= len(history):
            deleted_range = (2, max(1, len(history) - 1)) if len(history) > 2 else None
        # session.json is written before the history: turn marks beyond the history are dropped,
        # except those of turns before a compaction (they describe the history it replaced).
        compacted_turns = {t for c in compactions if isinstance(c, dict) for t in c.get("turns", ())}
        marks = [m for m in marks if m.history_len <= len(history) or m.turn in compacted_turns]
        return SessionSnapshot(
            history=history, events=events, model=model, deleted_range=deleted_range,
            records=records, marks=marks, last_ts=last_ts, previous_usage=previous_usage, updates=updates,
            compactions=compactions,
        )


def _load_history(path: Path) -> list[dict[str, Any]]:
    history = read_json(path, default=[])
    if not isinstance(history, list) or not all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant")
        and isinstance(m.get("content"), (str, list)) for m in history
    ):
        raise CorruptFileError(path, "expected a list of messages")
    check_history(path, history)
    try:
        problems = history_problems(history, allow_trailing_tool_use=True) if history else []
    except Exception as exc:  # noqa: BLE001 - malformed blocks: the file is corrupt, not the loader
        raise CorruptFileError(path, f"invalid conversation: {type(exc).__name__}: {exc}") from None
    if problems:
        raise CorruptFileError(path, "invalid conversation: " + problems[0])
    return history


def _append_lines(path: Path, lines: list[str]) -> None:
    """Append JSON lines to a log written by :func:`dumps_by_line` (``[\n...\n]``), keeping it valid;
    a crash mid-append leaves a torn last line, which :func:`_load_events` drops."""
    with open(path, "r+b") as f:
        f.seek(-2, os.SEEK_END)
        if f.read(2) != b"\n]":
            raise ValueError(f"{path} does not end as nbagent writes it; not appended to")
        f.seek(-2, os.SEEK_END)
        f.write((",\n" + ",\n".join(lines) + "\n]").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def _torn_log(path: Path) -> list[Any] | None:
    """The events of a log whose last append was cut short by a crash, or None if it is not that."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) < 3 or lines[0] != "[":
        return None
    events = []
    for i, line in enumerate(lines[1:], start=1):
        try:
            events.append(json.loads(line.rstrip(",")))
        except (json.JSONDecodeError, RecursionError):
            return events if i == len(lines) - 1 else None  # only the last line may be torn
    return None


def _load_events(path: Path) -> list[Event]:
    try:
        raw_events = read_json(path, default=[])
    except CorruptFileError:
        raw_events = _torn_log(path)
        if raw_events is None:
            raise
    if not isinstance(raw_events, list):
        raise CorruptFileError(path, "expected a list of events")
    try:
        return [event_from_dict(e) for e in raw_events]
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise CorruptFileError(path, f"bad event: {exc}") from None


class TaskFolderLockedError(NbAgentError):
    """Another live Agent (this process or another) writes this task folder."""

    def __init__(self, task_dir: Path, pid: int, here: bool) -> None:
        self.task_dir, self.pid = task_dir, pid
        who = "another Agent in this process" if here else f"process {pid}"
        super().__init__(
            f"{task_dir} is in use by {who} (lock file {LOCK_FILE}). A task folder has one writer: "
            "close that session first (agent.close() / %agent reset), or use another folder.")


_HELD: set[Path] = set()  # folders locked by this process's live sessions


class FolderLock:
    """The writer's lock on a task folder: ``nbagent.lock`` holding its pid.

    :meth:`acquire` takes a free folder, takes over a lock whose process is gone (returning a
    notice), and raises :class:`TaskFolderLockedError` for a live writer.
    """

    def __init__(self, task_dir: str | Path) -> None:
        self.task_dir = Path(task_dir).resolve()
        self.path = self.task_dir / LOCK_FILE
        self.held = False

    def acquire(self) -> str | None:
        """Lock the folder (creating it); returns a notice when a stale lock was taken over."""
        if self.task_dir in _HELD:
            raise TaskFolderLockedError(self.task_dir, os.getpid(), here=True)
        self.task_dir.mkdir(parents=True, exist_ok=True)
        notice = None
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _lock_owner(self.path)
            if owner is not None and owner != os.getpid() and _alive(owner):
                raise TaskFolderLockedError(self.task_dir, owner, here=False) from None
            notice = (f"{self.task_dir}: took over the lock left by process {owner}, which is no longer running."
                      if owner is not None else f"{self.task_dir}: replaced an unreadable lock file.")
            atomic_write_text(self.path, str(os.getpid()))
            if _lock_owner(self.path) != os.getpid():  # another process took it over at the same moment
                raise TaskFolderLockedError(self.task_dir, _lock_owner(self.path) or -1, here=False) from None
        else:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(str(os.getpid()))
        _HELD.add(self.task_dir)
        self.held = True
        return notice

    def release(self) -> None:
        """Give the folder up (idempotent); the lock file goes if it is still ours."""
        if not self.held:
            return
        self.held = False
        _HELD.discard(self.task_dir)
        if _lock_owner(self.path) == os.getpid():
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass


def _lock_owner(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
