"""How a :class:`~nbagent.engine.state.session.Session` writes its task folder: which files each kind
of change rewrites or appends, in which order (so that a process killed between two writes leaves
a folder that loads), and how a failed write is kept for the loop to report.

A mixin so that the session's state changes (session.py) and its file writes read apart.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from ..contracts.messages import Message
from ..disk.task_lock import FolderLock
from .grants import HistoryDigest, UpdatesDigest, conversation_digest, notes_digest
from .store import SavedLogs, SavedMeta, SessionStore

if TYPE_CHECKING:
    from ..context import ContextManager, RequestUsage
    from ..contracts.events import Event, RequestRecord, Totals
    from .compactions import RollbackPoint
    from .sent import SavedSent
    from .store import TurnMark
    from .totals import Spent


class SessionFiles:
    """The write half of :class:`~nbagent.engine.state.session.Session` (which sets these attributes)."""

    model: str
    history: list[Message]
    deleted_range: tuple[int, int] | None
    previous_usage: RequestUsage | None
    last_ts: int
    records: list[RequestRecord]
    events: list[Event]
    marks: list[TurnMark]
    context: ContextManager
    compactions: list[RollbackPoint]
    sent_saved: list[SavedSent]
    allowed_always: set[str]
    notices: list[str]
    save_failures: list[str]
    unsaved: bool
    _marks_in_meta: bool
    _store: SessionStore | None
    _lock: FolderLock | None
    _history_digest: HistoryDigest
    _compactions_digest: HistoryDigest
    _updates_digest: UpdatesDigest
    _marks_digest: HistoryDigest

    @property
    def totals(self) -> Totals:
        raise NotImplementedError

    @property
    def spent(self) -> Spent:
        raise NotImplementedError

    def _write_all(self, store: SessionStore) -> None:
        # Records, compaction points, turn marks and session.json before the history: after a
        # process is killed between two renames they may lead the history (load trims marks beyond
        # it and drops a point the history does not reflect), never lag it (a reply's cost lost). The
        # logs before session.json: an earlier version's session.json holds records, points and marks it drops.
        store.write_all(self.context.updates, self._meta(), SavedLogs(
            history=self.history, events=self.events, records=self.records, sent=self.sent_saved,
            compactions=self.compactions, marks=self.marks))
        self._marks_in_meta = False

    # ----- the files ------------------------------------------------------------------------
    def _save_history(self) -> None:
        self._write(lambda st: st.save_history(self.history))

    def _save_history_and_meta(self, store: SessionStore) -> None:
        store.save_history(self.history)
        self._save_meta(store)

    def _save_request(self, store: SessionStore) -> None:
        # Appended, not synced: what a request sent is synced with the records (see SessionStore.sync).
        store.save_records(self.records)
        store.save_sent(self.sent_saved)

    def _save_completed_request(self, store: SessionStore) -> None:
        self._save_request(store)  # the record first: the request log may lead the history, never lag it
        store.save_history(self.history)
        store.sync_history_if_due()

    def _save_context_and_meta(self, store: SessionStore) -> None:
        self._save_context_then_meta(store)
        store.save_records(self.records)
        store.save_compactions(self.compactions)

    def _save_turn_end(self, store: SessionStore) -> None:
        # The mark is appended, and synced with the history it points into at the run's end (see
        # SessionStore.sync): one wait for the disk per run, where the rewrite of session.json it
        # replaces added a second. session.json only when the model, range or grants changed, or while
        # a grant is held (its signature covers the history: see grants.py).
        store.save_marks(self.marks)
        self._save_meta(store, when_changed=not self._marks_in_meta)
        store.save_events(self.events)

    def _save_events_and_sync(self, store: SessionStore) -> None:
        store.save_events(self.events)
        store.sync()

    def _save_after_rollback(self, store: SessionStore) -> None:
        # The history first: until it is rewritten, the folder is the session before the rollback.
        store.save_history(self.history)
        store.save_compactions(self.compactions)
        store.save_records(self.records)
        store.save_sent(self.sent_saved)
        self._save_context_then_meta(store)

    def _write(self, change: Callable[[SessionStore], object]) -> None:
        """Save a change; a failure (disk full, a permission) is kept for the loop to report, the
        state stays in memory, and the next write saves everything again."""
        if self._store is None:
            return
        try:
            self._check_folder()
            if self.unsaved:
                self._write_all(self._store)  # then the change (a sync, say) still happens
            change(self._store)
        except (OSError, ValueError, TypeError, RecursionError) as exc:  # UnicodeError is a ValueError
            self.unsaved = True
            self.save_failures.append(f"could not save the session to {self._store.task_dir}: "
                                      f"{type(exc).__name__}: {exc}")
        else:
            self.unsaved = False

    def _check_folder(self) -> None:
        """Before a write: the folder is still the one locked (see :meth:`FolderLock.check`). A
        deleted one was re-created: everything is written again, and the user told."""
        if self._lock is None or self._store is None:
            return
        notice = self._lock.check()
        if notice:
            self.notices.append(notice)
            self._store.forget_files()
            self.unsaved = True

    def _save_meta(self, store: SessionStore, *, when_changed: bool = False) -> None:
        # The marks log first: written whole when session.json still holds the marks (a folder of
        # version 1), which the rewrite below drops; else nothing new (end_turn appended the mark).
        store.save_marks(self.marks)
        store.save_meta(self._meta(), when_changed=when_changed)
        self._marks_in_meta = False

    def _save_context_then_meta(self, store: SessionStore) -> None:
        store.save_marks(self.marks)  # before session.json, as in _save_meta
        store.save_context_and_meta(self.context.updates, self._meta())  # one wait for the disk
        self._marks_in_meta = False

    def _meta(self) -> SavedMeta:
        pu = dataclasses.asdict(self.previous_usage) if self.previous_usage else None
        return SavedMeta(model=self.model, deleted_range=self.deleted_range, totals=self.totals,
                         records_len=len(self.records), last_ts=self.last_ts, previous_usage=pu, spent=self.spent,
                         allowed_always=sorted(self.allowed_always),
                         history_digest=self._conversation_digest() if self.allowed_always else "")

    def _conversation_digest(self) -> str:
        """What the grants are signed with (see :func:`~.grants.conversation_digest`)."""
        return conversation_digest(self._history_digest.of(self.history), self._updates_digest.of(self.context.updates),
                                   self.deleted_range, self._compactions_digest.of(self.compactions),
                                   notes_digest(self._store.task_dir if self._store else None,
                                                self._marks_digest.of(self.marks)))

