"""The task folder on disk: eight JSON files, a lock, and the snapshot they load into.

``api_conversation_history.json`` (the messages), ``ui_messages.json`` (the event log without
stream deltas), ``requests.json`` (one record per API request: usage, cost, timing),
``turn_marks.json`` (where each turn ended: what rollback restores), ``compactions.json`` (what
undoes each compaction, once there is one) and ``sent_requests.json`` (what each request sent, as
a reference into the history: ``%agent saw`` after a resume) grow by appending (:class:`AppendLog`),
so a request or a turn writes what it added, not the whole conversation.
``context_history.json`` (the context manager's updates) and ``session.json`` (model, range,
"Allow always" grants, and the totals as of ``records_len`` requests; never the API key) are small
and rewritten atomically when what they hold changes, which is not on every request nor every
turn: the figures that follow each request (previous usage, last timestamp, money spent) are
taken from the request and turn-mark logs where they are newer. The
:class:`~nbagent.engine.state.session.Session` is the only writer; ``nbagent.lock`` (an ``flock`` held
for the session's life, see :mod:`~nbagent.engine.disk.task_lock`) keeps a second Agent, in this process
or another, from writing the same folder. Files are opened as :mod:`~nbagent.engine.disk.safe_open` says.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import Mapping, Sequence

from ..context.updates import ContextHistoryUpdates, updates_text
from ..contracts.events import Event, RequestRecord, Totals
from ..contracts.messages import Message
from ..disk.append_log import AppendLog
from ..disk.persist import atomic_write_files, atomic_write_text, dumps_by_line, dumps_line
from ..disk.task_lock import LOCK_FILE, FolderLock, TaskFolderLockedError
from .compactions import RollbackPoint, point_line
from .folder_load import SessionSnapshot, load_folder
from .grants import signed_grants
from .sent import SavedSent
from .task_files import (
    COMPACTIONS_FILE,
    CONTEXT_FILE,
    FORMAT_VERSION,
    HISTORY_FILE,
    MARKS_FILE,
    NOTES_FILE,
    REQUESTS_FILE,
    SENT_FILE,
    SESSION_FILE,
    UI_FILE,
    TurnMark,
)
from .totals import Spent

__all__ = [  # kept importable from here
    "COMPACTIONS_FILE", "CONTEXT_FILE", "FORMAT_VERSION", "HISTORY_FILE", "LOCK_FILE", "MARKS_FILE", "NOTES_FILE",
    "REQUESTS_FILE", "SENT_FILE", "SESSION_FILE", "UI_FILE", "FolderLock", "SessionSnapshot", "TaskFolderLockedError",
    "TurnMark"]

HISTORY_SYNC_INTERVAL_S = 1.0
"""A request syncs the history when the last sync is this old (every request at API speed, where
one takes seconds): requests that follow faster share the next sync, so the disk's wait stays a
negligible share of a run however fast its requests come."""


@dataclass(frozen=True)
class SavedMeta:
    """What ``session.json`` holds (see :meth:`SessionStore.save_meta`)."""

    model: str
    deleted_range: tuple[int, int] | None
    totals: Totals
    records_len: int
    last_ts: int
    previous_usage: dict[str, int] | None
    spent: Spent
    allowed_always: list[str]
    """Sorted."""
    history_digest: str = ""
    """Of the history as written (see :class:`~nbagent.engine.state.grants.HistoryDigest`): what
    the grants are signed with; "" when there is none."""

    @property
    def stable(self) -> tuple[object, ...]:
        """What no log gives: a change of it is what makes a turn's end rewrite the file."""
        # spent.requests beyond the records: a request stopped mid-answer was billed (no log has it)
        # The history's digest while a grant is held: the grant's signature covers it (see grants.py)
        return (self.model, self.deleted_range, self.allowed_always, self.spent.requests - self.records_len,
                self.history_digest if self.allowed_always else "")


@dataclass(frozen=True)
class SavedLogs:
    """What the six logs hold (see :meth:`SessionStore.write_all`)."""

    history: Sequence[Message]
    events: Sequence[Event]
    records: Sequence[RequestRecord]
    sent: Sequence[SavedSent]
    compactions: Sequence[RollbackPoint]
    marks: Sequence[TurnMark]


class SessionStore:
    """Reads and writes one task folder."""

    def __init__(self, task_dir: str | Path) -> None:
        self.task_dir = Path(task_dir)
        self._history = AppendLog(self.task_dir / HISTORY_FILE)
        self._events = AppendLog(self.task_dir / UI_FILE)
        self._records = AppendLog(self.task_dir / REQUESTS_FILE)
        self._compactions = AppendLog(self.task_dir / COMPACTIONS_FILE)
        self._sent = AppendLog(self.task_dir / SENT_FILE)
        self._marks = AppendLog(self.task_dir / MARKS_FILE)
        self._meta_written: tuple[object, ...] | None = None  # what session.json holds that no log gives
        self._history_synced_at = float("-inf")  # monotonic() of the history's last sync

    def remove_stale_temp_files(self) -> None:
        """Delete temp files of atomic writes a killed process left (``.<file>.*.tmp``); call it
        only while holding the folder's lock, when no write of ours is in progress."""
        for name in (HISTORY_FILE, UI_FILE, CONTEXT_FILE, SESSION_FILE, REQUESTS_FILE, COMPACTIONS_FILE,
                     SENT_FILE, MARKS_FILE):
            for tmp in self.task_dir.glob(f".{name}.*.tmp"):
                try:
                    tmp.unlink()
                except OSError:
                    pass

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

    def save_marks(self, marks: list[TurnMark]) -> None:
        """Append the new turn marks (one line each; a rollback that dropped marks rewrites the file)."""
        self._marks.save(marks, dumps_line)

    def prime(self, logs: Mapping[str, Sequence[object]]) -> None:
        """The named log files hold exactly these items (just loaded whole): appends go on from there."""
        by_name = {HISTORY_FILE: self._history, UI_FILE: self._events, REQUESTS_FILE: self._records,
                   COMPACTIONS_FILE: self._compactions, SENT_FILE: self._sent, MARKS_FILE: self._marks}
        for name, items in logs.items():
            by_name[name].prime(items)

    def save_compactions(self, points: list[RollbackPoint]) -> None:
        """Append what undoes a new compaction (one line each, written once: it holds the messages
        the compaction replaced); a rollback that used points up rewrites the file."""
        self._compactions.save(points, point_line)

    def sync(self) -> None:
        """Make the appends so far durable: one ``fdatasync`` per file appended to since the last
        sync. The loop syncs everything at the end of a run (see also :meth:`sync_history_if_due`),
        the turn's mark included: made durable on its own at the turn's end, a few statements
        earlier, it would cost the run a second wait for the disk (the process sleeps, and its
        caches are cold when it wakes: most of a sync's CPU cost here), and a mark is of use only
        with the history it points into, which is synced here too (load trims a mark beyond it)."""
        self._sync_history()
        self._records.sync()
        self._sent.sync()
        self._marks.sync()
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
        """The files on disk are gone (a deleted folder): the next save of each file writes it whole."""
        for log in self._logs():
            log.forget()
        self._meta_written = None

    def close(self) -> None:
        """Close the log files kept open for appends (idempotent; the next append opens again)."""
        for log in self._logs():
            log.close()

    def _logs(self) -> tuple[AppendLog, ...]:
        return self._history, self._events, self._records, self._compactions, self._sent, self._marks

    def write_all(self, updates: ContextHistoryUpdates, meta: SavedMeta, logs: SavedLogs) -> None:
        """Write every file whole with one wait for the disk (:func:`atomic_write_files`): a new
        session's first write (its empty logs are appended to from then on), and any write after
        a failed one. Renamed in the order that keeps a folder loadable after a kill between two
        (see SessionFiles._write_all); ``compactions.json`` is made once there is one."""
        text = AppendLog.text
        files = {CONTEXT_FILE: updates_text(updates), REQUESTS_FILE: text(logs.records, dumps_line),
                 SENT_FILE: text(logs.sent, dumps_line), COMPACTIONS_FILE: text(logs.compactions, point_line),
                 MARKS_FILE: text(logs.marks, dumps_line), SESSION_FILE: self._meta_text(meta),
                 HISTORY_FILE: text(logs.history, dumps_line), UI_FILE: text(logs.events, dumps_line)}
        written: dict[str, tuple[AppendLog, Sequence[object]]] = {
            REQUESTS_FILE: (self._records, logs.records), SENT_FILE: (self._sent, logs.sent),
            COMPACTIONS_FILE: (self._compactions, logs.compactions), MARKS_FILE: (self._marks, logs.marks),
            HISTORY_FILE: (self._history, logs.history), UI_FILE: (self._events, logs.events)}
        if not logs.compactions and not (self.task_dir / COMPACTIONS_FILE).exists():
            del files[COMPACTIONS_FILE], written[COMPACTIONS_FILE]
        for log, _ in written.values():
            log.close()  # the files are replaced: appends go to the new ones
        atomic_write_files(self.task_dir, {name: data.encode("utf-8") for name, data in files.items()})
        for log, items in written.values():
            log.written(items)
        self._meta_written = meta.stable
        self._history_synced_at = monotonic()  # just made durable

    def save_context_and_meta(self, updates: ContextHistoryUpdates, meta: SavedMeta) -> None:
        """Rewrite ``context_history.json`` then ``session.json``, with one wait for the disk."""
        atomic_write_files(self.task_dir, {CONTEXT_FILE: updates_text(updates).encode("utf-8"),
                                           SESSION_FILE: self._meta_text(meta).encode("utf-8")})
        self._meta_written = meta.stable

    def save_meta(self, meta: SavedMeta, *, when_changed: bool = False) -> None:
        """Rewrite ``session.json``; ``meta.records_len`` is how many request records it describes
        (the request log may have grown since: load takes the newer figures from there). With
        ``when_changed``, only when the model, range or grants differ from what it was last written
        with (the rest follows the logs; a store that has not written it yet always writes)."""
        if when_changed and meta.stable == self._meta_written:
            return
        atomic_write_text(self.task_dir / SESSION_FILE, self._meta_text(meta))
        self._meta_written = meta.stable

    def _meta_text(self, meta: SavedMeta) -> str:
        return dumps_by_line({
            "version": FORMAT_VERSION,
            "model": meta.model,
            "deleted_range": list(meta.deleted_range) if meta.deleted_range else None,
            "totals": dataclasses.asdict(meta.totals),  # as of records_len, like the figures below
            "records_len": meta.records_len,
            "last_ts": meta.last_ts,
            "previous_usage": meta.previous_usage,
            "spent": dataclasses.asdict(meta.spent),  # as of records_len (load adds the newer records)
            **signed_grants(self.task_dir, meta.allowed_always, meta.history_digest),
        })

    def load(self) -> SessionSnapshot:
        """Load the folder; a corrupt file raises :class:`CorruptFileError` naming it (untouched).

        ``context_history.json`` is checked too (the context manager reads it on resume).
        """
        return load_folder(self.task_dir)
