"""The task folder on disk: seven JSON files, a lock, and the snapshot they load into.

``api_conversation_history.json`` (the messages), ``ui_messages.json`` (the event log without
stream deltas), ``requests.json`` (one record per API request: usage, cost, timing) and
``compactions.json`` (what undoes each compaction, once there is one) and ``sent_requests.json``
(what each request sent, as a reference into the history: ``%agent saw`` after a resume) grow by appending
(:class:`AppendLog`), so a request writes what it added, not the whole conversation;
``context_history.json`` (the context manager's updates) and ``session.json`` (range, model, totals,
turn marks; never the API key) are small and rewritten atomically when they change, which is not
on every request. The
:class:`~nbagent.engine.state.session.Session` is the only writer; ``nbagent.lock`` (an ``flock`` held
for the session's life, see :mod:`~nbagent.engine.disk.task_lock`) keeps a second Agent, in this process
or another, from writing the same folder. Files are opened as :mod:`~nbagent.engine.disk.safe_open` says.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from ..context.updates import ContextHistoryUpdates, load_updates, save_updates
from ..contracts.errors import CorruptFileError
from ..contracts.events import Event, RequestRecord, Totals
from ..contracts.messages import Message, history_problems
from ..disk.append_log import AppendLog, Reformatted, read_log
from ..disk.persist import atomic_write_json, dumps_line, read_json
from ..disk.task_lock import LOCK_FILE, FolderLock, TaskFolderLockedError
from .compactions import RollbackPoint
from .grants import signed_grants, trusted_grants
from .sent import SavedSent, matching_records
from .task_files import SessionMeta, TurnMark, check_events, check_history, check_meta, check_records, check_sent
from .totals import Spent

__all__ = ["LOCK_FILE", "FolderLock", "TaskFolderLockedError", "TurnMark"]  # kept importable from here

HISTORY_FILE = "api_conversation_history.json"
UI_FILE = "ui_messages.json"
CONTEXT_FILE = "context_history.json"
SESSION_FILE = "session.json"
REQUESTS_FILE = "requests.json"
COMPACTIONS_FILE = "compactions.json"
SENT_FILE = "sent_requests.json"
NOTES_FILE = "notes.md"  # the agent's notes (engine/loop/notes.py): its file, not the session's state
FORMAT_VERSION = 1
HISTORY_SYNC_INTERVAL_S = 1.0
"""A request syncs the history when the last sync is this old (every request at API speed, where
one takes seconds): requests that follow faster share the next sync, so the disk's wait stays a
negligible share of a run however fast its requests come."""
_Loaded = TypeVar("_Loaded")


@dataclass
class SessionSnapshot:
    """Everything loaded from a task folder."""

    history: list[Message] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    model: str | None = None
    deleted_range: tuple[int, int] | None = None
    records: list[RequestRecord] = field(default_factory=list)
    marks: list[TurnMark] = field(default_factory=list)
    last_ts: int = 0
    previous_usage: dict[str, int] | None = None
    updates: ContextHistoryUpdates = field(default_factory=ContextHistoryUpdates)
    compactions: list[object] = field(default_factory=list)
    """What rollback needs to undo each compaction (parsed by the session: RollbackPoint)."""
    compactions_file: str = COMPACTIONS_FILE
    """The file the compactions came from (``session.json`` in folders of earlier versions)."""
    whole_logs: frozenset[str] = frozenset()
    """The logs read whole, in this version's layout: the session appends to them as they are."""
    notices: list[str] = field(default_factory=list)
    """What loading repaired (a torn last line dropped), to be told to the user once."""
    spent: Spent | None = None
    """What ``session.json`` says was billed up to ``records_len`` records (None: an earlier version)."""
    records_len: int | None = None
    reformatted: frozenset[str] = frozenset()
    """Logs whose items loaded but not in the form appends need: the session rewrites them on load."""
    allowed_always: tuple[str, ...] = ()
    """Tools the user allowed "always" in the session (none in folders of earlier versions)."""
    sent: list[SavedSent] = field(default_factory=list)
    """What each request sent (none for requests made by earlier versions, which did not save it)."""


class SessionStore:
    """Reads and writes one task folder."""

    def __init__(self, task_dir: str | Path) -> None:
        self.task_dir = Path(task_dir)
        self._history = AppendLog(self.task_dir / HISTORY_FILE)
        self._events = AppendLog(self.task_dir / UI_FILE)
        self._records = AppendLog(self.task_dir / REQUESTS_FILE)
        self._compactions = AppendLog(self.task_dir / COMPACTIONS_FILE)
        self._sent = AppendLog(self.task_dir / SENT_FILE)
        self._history_synced_at = float("-inf")  # monotonic() of the history's last sync

    def remove_stale_temp_files(self) -> None:
        """Delete temp files of atomic writes a killed process left (``.<file>.*.tmp``); call it
        only while holding the folder's lock, when no write of ours is in progress."""
        for name in (HISTORY_FILE, UI_FILE, CONTEXT_FILE, SESSION_FILE, REQUESTS_FILE, COMPACTIONS_FILE,
                     SENT_FILE):
            for tmp in self.task_dir.glob(f".{name}.*.tmp"):
                try:
                    tmp.unlink()
                except OSError:
                    pass

    def save_context(self, updates: ContextHistoryUpdates) -> None:
        save_updates(updates, self.task_dir)

    def save_history(self, history: list[Message]) -> None:
        """Append the new messages (not synced to disk: see :meth:`sync`); any other change to the
        history (a merged prompt, a rollback, a compaction) rewrites the file atomically."""
        self._history.save(history, dumps_line)

    def save_events(self, events: list[Event]) -> None:
        """Append the new events, as :meth:`save_history` does messages."""
        self._events.save(events, dumps_line)

    def save_records(self, records: list[RequestRecord]) -> None:
        """Append the new request records, as :meth:`save_history` does messages."""
        self._records.save(records, dumps_line)

    def save_sent(self, sent: list[SavedSent]) -> None:
        """Append what the new requests sent, as :meth:`save_records` does records (written with
        them, synced with them: no sync of its own per request)."""
        self._sent.save(sent, dumps_line)

    def prime(self, logs: Mapping[str, Sequence[object]]) -> None:
        """The named log files hold exactly these items (just loaded whole): appends go on from there."""
        by_name = {HISTORY_FILE: self._history, UI_FILE: self._events, REQUESTS_FILE: self._records,
                   COMPACTIONS_FILE: self._compactions, SENT_FILE: self._sent}
        for name, items in logs.items():
            by_name[name].prime(items)

    def save_compactions(self, points: list[RollbackPoint]) -> None:
        """Append what undoes a new compaction (one line each, written once: it holds the messages
        the compaction replaced); a rollback that used points up rewrites the file."""
        self._compactions.save(points, lambda p: dumps_line(p.to_json()))

    def sync(self) -> None:
        """Make the appends so far durable: one ``fdatasync`` per file appended to since the last
        sync. The loop syncs everything at the end of a run (see also :meth:`sync_history_if_due`)."""
        self._sync_history()
        self._records.sync()
        self._sent.sync()
        self._events.sync()

    def sync_history_if_due(self) -> None:
        """Sync the history if its last sync is :data:`HISTORY_SYNC_INTERVAL_S` old or more (after
        each request). The appends reach the OS at once either way, so a killed process loses
        nothing; a power cut loses what came after the last sync, which is never more than a second
        older than the newest request's end (the end of a run syncs everything)."""
        if monotonic() - self._history_synced_at >= HISTORY_SYNC_INTERVAL_S:
            self._sync_history()

    def _sync_history(self) -> None:
        self._history.sync()
        self._history_synced_at = monotonic()

    def forget_files(self) -> None:
        """The files on disk are gone (a deleted folder): the next save of each log writes it whole."""
        for log in (self._history, self._events, self._records, self._compactions, self._sent):
            log.forget()

    def close(self) -> None:
        """Close the log files kept open for appends (idempotent; the next append opens again)."""
        for log in (self._history, self._events, self._records, self._compactions, self._sent):
            log.close()

    def save_meta(
        self, *, model: str, deleted_range: tuple[int, int] | None, totals: Totals, records_len: int,
        marks: list[TurnMark], last_ts: int, previous_usage: dict[str, int] | None, spent: Spent,
        allowed_always: Iterable[str] = (),
    ) -> None:
        """Rewrite ``session.json``; ``records_len`` is how many request records it describes (the
        request log may have grown since: load takes the newer figures from there)."""
        atomic_write_json(self.task_dir / SESSION_FILE, {
            "version": FORMAT_VERSION,
            "model": model,
            "deleted_range": list(deleted_range) if deleted_range else None,
            "totals": dataclasses.asdict(totals),
            "records_len": records_len,
            "marks": marks,  # frozen dataclasses: written by dumps_line's default
            "last_ts": last_ts,
            "previous_usage": previous_usage,
            "spent": dataclasses.asdict(spent),  # as of records_len (load adds the newer records)
            **signed_grants(self.task_dir, allowed_always),
        })

    def load(self) -> SessionSnapshot:
        """Load the folder; a corrupt file raises :class:`CorruptFileError` naming it (untouched).

        ``context_history.json`` is checked too (the context manager reads it on resume).
        """
        if not self.task_dir.is_dir():
            raise FileNotFoundError(f"no session folder at {self.task_dir}")
        notices: list[str] = []
        whole: set[str] = set()  # logs read whole: the session appends to them as they are
        reformatted: set[str] = set()

        def log(name: str, load: Callable[[Path, list[str]], _Loaded]) -> _Loaded:
            before = len(notices)
            items = load(self.task_dir / name, notices)
            if len(notices) == before:
                whole.add(name)
            elif isinstance(notices[-1], Reformatted):
                reformatted.add(name)
            return items

        history = log(HISTORY_FILE, _load_history)
        events = log(UI_FILE, _load_events)
        updates = load_updates(self.task_dir)  # raises CorruptFileError naming context_history.json
        meta_path = self.task_dir / SESSION_FILE
        meta = read_json(meta_path, default={})
        if not isinstance(meta, dict):
            raise CorruptFileError(meta_path, "expected a JSON object")
        checked = check_meta(meta_path, meta)
        # Folders written before the request and compaction logs kept both in session.json.
        records = checked.records if checked.records is not None else log(REQUESTS_FILE, _load_records)
        compactions = checked.compactions if checked.compactions is not None else log(COMPACTIONS_FILE, read_log)
        if not isinstance(compactions, list):
            raise CorruptFileError(meta_path, "bad session data: compactions is not a list")
        snap = _snapshot(checked, history, records, compactions)
        snap.allowed_always = trusted_grants(self.task_dir, checked, notices)
        saved_sent = log(SENT_FILE, _load_sent)
        snap.sent = matching_records(saved_sent, snap.records)
        if len(snap.sent) < len(saved_sent):  # lines of rolled-back requests dropped: the file must say so
            whole.discard(SENT_FILE)
        snap.events, snap.updates, snap.notices = events, updates, notices
        if "compactions" in meta:
            snap.compactions_file = SESSION_FILE
        if len(snap.compactions) < len(compactions):  # a stale point was dropped: the file must say so
            whole.discard(COMPACTIONS_FILE)
        snap.whole_logs, snap.reformatted = frozenset(whole), frozenset(reformatted)
        return snap


def _snapshot(meta: SessionMeta, history: list[Message], records: list[RequestRecord],
              compactions: Sequence[object]) -> SessionSnapshot:
    """The session.json fields, checked against the logs (a crash between writes is repaired)."""
    last_ts, previous_usage = meta.last_ts, meta.previous_usage
    described = meta.records_len
    if described is not None and len(records) > described:
        # Requests completed after session.json was last written: the newest is "previous".
        last = records[-1]
        previous_usage = {"ts": last.ts, **{k: int(v) for k, v in dataclasses.asdict(last.usage).items()
                                            if k in _PREVIOUS_USAGE_FIELDS}}
        last_ts = max(last_ts, last.ts)
    # Files are written one by one; after a crash between writes, keep the range within history.
    deleted_range = meta.deleted_range
    if deleted_range and deleted_range[1] >= len(history):
        deleted_range = (2, max(1, len(history) - 1)) if len(history) > 2 else None
    points = _applied(compactions, history)
    # Turn marks beyond the history are dropped (session.json may lead it after a crash), except
    # those of turns before a compaction (they describe the history it replaced).
    compacted_turns = {t for c in points if isinstance(c, dict) for t in _turns(c)}
    marks = [m for m in meta.marks if m.history_len <= len(history) or m.turn in compacted_turns]
    return SessionSnapshot(
        history=history, model=meta.model, deleted_range=deleted_range, records=list(records), marks=marks,
        last_ts=last_ts, previous_usage=previous_usage, compactions=points, spent=meta.spent, records_len=described,
    )


def _turns(point: dict[str, object]) -> list[object]:
    """A saved compaction point's turns (checked when the session parses the point)."""
    turns = point.get("turns", ())
    return list(turns) if isinstance(turns, (list, tuple)) else []


def _applied(points: Sequence[object], history: list[Message]) -> list[object]:
    """The compaction points the history reflects. A point is written before the history it
    compacts, and a rollback restores the history before it drops the point: after a crash in
    between, the newest point may describe a compaction the history does not have (its replaced
    messages are still in place), and applying it on a rollback would corrupt the history."""
    points = list(points)
    while points and isinstance(points[-1], dict):
        replaced = points[-1].get("replaced")
        if not isinstance(replaced, list) or not replaced:
            break  # not a point nbagent wrote: the session's own check names the file
        # A compacted history has its summary at index 2; without the compaction (not done yet, or
        # undone by a rollback that may also have cut the history shorter) the first replaced
        # message is there, or the history is too short to hold one.
        if len(history) > 2 and history[2] != replaced[0]:
            break
        points.pop()
    return points


_PREVIOUS_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _load_records(path: Path, notices: list[str]) -> list[RequestRecord]:
    records = read_log(path, notices)
    if not isinstance(records, list):
        raise CorruptFileError(path, "expected a list of request records")
    return check_records(path, records)


def _load_sent(path: Path, notices: list[str]) -> list[SavedSent]:
    lines = read_log(path, notices)
    if not isinstance(lines, list):
        raise CorruptFileError(path, "expected a list of sent requests")
    return check_sent(path, lines)


def _load_history(path: Path, notices: list[str]) -> list[Message]:
    history = read_log(path, notices)
    if not isinstance(history, list) or not all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant")
        and isinstance(m.get("content"), (str, list)) for m in history
    ):
        raise CorruptFileError(path, "expected a list of messages")
    messages = check_history(path, history)
    try:
        problems = history_problems(messages, allow_trailing_tool_use=True) if messages else []
    except Exception as exc:  # noqa: BLE001 - malformed blocks: the file is corrupt, not the loader
        raise CorruptFileError(path, f"invalid conversation: {type(exc).__name__}: {exc}") from None
    if problems:
        raise CorruptFileError(path, "invalid conversation: " + problems[0])
    return messages


def _load_events(path: Path, notices: list[str]) -> list[Event]:
    raw_events = read_log(path, notices)
    if not isinstance(raw_events, list):
        raise CorruptFileError(path, "expected a list of events")
    return check_events(path, raw_events)
