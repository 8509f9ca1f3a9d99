"""``Session``: the one owner of a conversation's state, and its only writer to disk.

History, the hidden range, the previous request's usage, timestamps, per-request records, the
event log, turn marks, the requests as sent, the context manager's updates and the file-state
cache all live here. The loop changes them only through the methods below, and each method saves
exactly the files its change touched (through :class:`~nbagent.engine.state.store.SessionStore`), so
a rollback, a resume or a save touches one object. Its rollback methods (``rollback``,
``withdraw_turn``, ``notes_before``) are in session_rollback.py, its file writes in session_files.py.
"""

from __future__ import annotations

import time
import weakref
from pathlib import Path
from typing import Iterable, Sequence

from ..context import ContextManager, RequestUsage
from ..context.file_state import FileStateCache
from ..context.request import build_request
from ..context.updates import ContextHistoryUpdates
from ..contracts.errors import CorruptFileError
from ..contracts.events import STREAM_DELTAS, ContextTruncated, Event, RequestRecord, Totals
from ..contracts.messages import ContentBlock, Message, ToolResultBlockParam, blocks, error_result, tool_uses
from ..disk.task_lock import FolderLock
from .compactions import RollbackPoint, as_of_request, compacted, point_line
from .grants import HistoryDigest, UpdatesDigest
from .sent import SavedSent, SentRequest, SharedValues, from_saved, to_saved
from .session_rollback import SessionRollback
from .store import COMPACTIONS_FILE, HISTORY_FILE, MARKS_FILE, REQUESTS_FILE, SENT_FILE, UI_FILE, SessionStore, TurnMark
from .task_copy import same_folder, save_copy
from .totals import RunningTotals, Spent
from .turn_notes import notes_to_keep

NOT_RUN_AT_END = "Not run: the session ended before this tool call ran."


class Session(SessionRollback):
    """One conversation's state; persisted to ``task_dir`` when given (which it then locks).

    ``Session()`` is in memory; ``Session(task_dir)`` starts a new folder (or continues writing an
    empty one); :meth:`load` continues a saved folder.
    """

    def __init__(self, task_dir: str | Path | None = None, *, model: str = "") -> None:
        self.model = model
        self.history: list[Message] = []
        self.deleted_range: tuple[int, int] | None = None
        self.previous_usage: RequestUsage | None = None
        self.last_ts = 0
        self.records: list[RequestRecord] = []
        self.events: list[Event] = []
        self.marks: list[TurnMark] = []
        self.sent: list[SentRequest] = []
        self.sent_saved: list[SavedSent] = []  # ``sent`` as sent_requests.json holds it (kept in step)
        self.turn = 0
        self.truncations = 0
        self.context = ContextManager()
        self.file_state = FileStateCache()
        self.notices: list[str] = []  # said once by the loop (e.g. a stale lock taken over)
        self.context_notices: set[str] = set()  # models already told they refuse the policy's server layers
        self.compactions: list[RollbackPoint] = []  # what rollback restores (saved in compactions.json)
        # "Allow always" answers (saved in session.json): a fact of the session, so a rollback keeps them.
        self.allowed_always: set[str] = set()
        self._totals = RunningTotals()
        # What rollbacks took out of ``records``: billed all the same, so it stays in what was spent.
        self.dropped = Spent()
        self._ids: tuple[int, Message | None, set[str]] | None = None  # (history length, last message, ids)
        # Shared by every SentRequest (a bound method, a tool list or a system prompt per request
        # would be kept 10,000 times in a long session).
        self._rebuild = self._rebuild_sent
        self._shared = SharedValues()
        self.save_failures: list[str] = []  # failed writes since the loop last looked (it reports them)
        self.unsaved = False  # a write failed, or the folder was loaded in another layout: the next writes all
        self._history_digest = HistoryDigest()  # what "Allow always" is signed with (see grants.py)
        self._compactions_digest = HistoryDigest(point_line)  # as compactions.json writes each point
        self._updates_digest, self._marks_digest = UpdatesDigest(), HistoryDigest()
        self._marks_in_meta = False  # session.json holds the marks (version 1): the next save of them moves them
        self._undo_prompt: tuple[int, int | None] | None = None
        self._turn_notes: str | None = None  # the notes file as the running turn began (None: none)
        self._store: SessionStore | None = None
        self._lock: FolderLock | None = None
        if task_dir is not None:
            self._attach(Path(task_dir))

    def __repr__(self) -> str:
        where = self._store.task_dir if self._store else "in memory"
        return f"Session({where}, {len(self.history)} messages, {self.turn} turns)"

    @property
    def task_dir(self) -> Path | None:
        return self._store.task_dir if self._store else None

    @property
    def totals(self) -> Totals:
        return self._totals.of(self.records, self.truncations, self.dropped)

    @property
    def spent(self) -> Spent:
        """Every request billed in this session, rolled-back ones included (what budgets count)."""
        return self._totals.spent(self.records, self.dropped)

    def bill(self, spent: Spent) -> None:
        """Keep ``spent`` as billed though no record holds it (a request stopped after its answer
        began): with what rollbacks took out of the records, saved in session.json at the turn's end."""
        self.dropped = self.dropped + spent

    def sent_request(self, *, request: int, turn: int, model: str, system: str, tools: tuple[str, ...],
                     ts: int) -> SentRequest:
        """A :class:`SentRequest` for the request about to be recorded (the history as it is now)."""
        last_blocks = len(blocks(self.history[-1])) if self.history else 0
        system, tools = self._shared.share(system, tools)
        return SentRequest(request, turn, model, system, tools, len(self.history), last_blocks,
                           self.deleted_range, ts, self._rebuild)

    def _rebuild_sent(self, sent: SentRequest) -> list[Message]:
        # Compactions made after the request changed the history it indexes: undone on a copy.
        whole, then = as_of_request(self.compactions, sent.request, self.history)
        updates = self.context.updates if then is None else ContextHistoryUpdates.from_json(then)
        history = list(whole[:sent.history_len])
        if history and len(blocks(history[-1])) > sent.last_blocks:
            history[-1] = {**history[-1], "content": blocks(history[-1])[:sent.last_blocks]}
        return build_request(history, sent.deleted_range, updates.as_of(sent.ts))

    # ----- opening and closing --------------------------------------------------------------
    def _attach(self, task_dir: Path) -> None:
        lock = FolderLock(task_dir)
        notice = lock.acquire()
        if notice:
            self.notices.append(notice)
        self._lock = lock
        self._store = SessionStore(task_dir)
        self._store.remove_stale_temp_files()  # left by a process killed mid-write; ours now
        weakref.finalize(self, lock.release)  # a dropped session frees its folder
        weakref.finalize(self, self._store.close)  # and the log files it kept open

    @classmethod
    def load(cls, task_dir: str | Path) -> "Session":
        """Continue the session saved in ``task_dir`` (locking it).

        A corrupt file raises :class:`~nbagent.engine.contracts.errors.CorruptFileError` naming it; a folder
        another live Agent writes raises :class:`~nbagent.engine.state.store.TaskFolderLockedError`.
        Nothing on disk changes then. A session killed between a tool call and its result is
        repaired (the call answered "not run") before it continues.
        """
        snap = SessionStore(task_dir).load()
        try:
            points = [RollbackPoint.from_json(c) for c in snap.compactions]
        except ValueError as exc:
            raise CorruptFileError(Path(task_dir) / snap.compactions_file, f"bad session data: {exc}") from None
        session = cls(task_dir, model=snap.model or "")
        session.history.extend(snap.history)
        session.context.replace_updates(snap.updates)
        session.deleted_range = snap.deleted_range
        session.last_ts = snap.last_ts
        session.previous_usage = RequestUsage(**snap.previous_usage) if snap.previous_usage else None
        session.records, session.events, session.marks = snap.records, snap.events, snap.marks
        if snap.spent is not None:  # beyond what the kept records add up to: rolled-back requests
            described = len(snap.records) if snap.records_len is None else min(snap.records_len, len(snap.records))
            session.dropped = snap.spent.less(Spent.of(snap.records[:described]))
        session.truncations = sum(isinstance(e, ContextTruncated) for e in snap.events)
        session.compactions = points
        session.allowed_always = set(snap.allowed_always)
        session.sent, session.sent_saved = from_saved(snap.sent, session._rebuild, session._shared), snap.sent
        session.notices.extend(snap.notices)
        session.turn = max([m.turn for m in snap.marks] + [r.turn for r in snap.records] + [0])
        session._marks_in_meta = snap.marks_in_meta
        session._resume_writing(snap.whole_logs)
        if snap.reformatted:  # repaired now (all files, atomically), not left to fail the first append
            session._write(lambda st: None)
        last = session.history[-1] if session.history else None
        if last is not None and last["role"] == "assistant" and tool_uses(last):
            session.append_results([error_result(u["id"], NOT_RUN_AT_END) for u in tool_uses(last)])
        return session

    def _resume_writing(self, whole_logs: frozenset[str]) -> None:
        """After a load: append to the logs that were read whole; anything else (a torn log, a
        folder of an earlier version) makes the next write a whole one."""
        if self._store is None:
            return
        logs: dict[str, Sequence[object]] = {HISTORY_FILE: self.history, UI_FILE: self.events, REQUESTS_FILE: self.records,
                                             COMPACTIONS_FILE: self.compactions, SENT_FILE: self.sent_saved}
        if not self._marks_in_meta:  # else the marks log is written whole with the first change of the marks
            logs[MARKS_FILE] = self.marks
        self._store.prime({name: items for name, items in logs.items() if name in whole_logs})
        if set(logs) - whole_logs:
            self.unsaved = True

    def close(self) -> None:
        """Make what was written durable, stop writing and release the folder's lock (idempotent)."""
        if self._lock is not None and self._lock.held:
            self._write(lambda st: st.sync())
        if self._store is not None:
            self._store.close()
        if self._lock is not None:
            self._lock.release()

    def save(self, task_dir: str | Path | None = None) -> Path:
        """Write all files: to the session's folder, or a copy into ``task_dir``.

        A copy does not change where the session goes on writing; it is refused (before anything is
        written) into a folder another live Agent writes (:class:`TaskFolderLockedError`) or one
        holding another saved session (:class:`TaskFolderError`: that session would be replaced).
        A failure (an unwritable path) raises and leaves the session as it was.
        """
        if task_dir is not None and not (self._store is not None and same_folder(Path(task_dir), self._store.task_dir)):
            return save_copy(Path(task_dir), self._write_all, self._store.task_dir if self._store else None)
        store = self._store
        if store is None:
            raise ValueError("this session is in memory: give a folder to save it to")
        self._check_folder()
        self._write_all(store)
        store.sync()
        self.unsaved = False
        return store.task_dir

    # ----- changes made by the loop (each saves what it changed) ----------------------------
    def next_ts(self) -> int:
        """Strictly increasing millisecond timestamps, so rollback by timestamp is unambiguous."""
        self.last_ts = max(int(time.time() * 1000), self.last_ts + 1)
        return self.last_ts

    def begin_turn(self, prompt_blocks: list[ContentBlock], *, notes: str | None = None) -> int:
        """Start a turn with the user's prompt; returns its number. ``notes``: the agent's notes file
        as the turn begins (None: the session has none), kept in the turn's mark for rollback."""
        self.turn += 1
        self._turn_notes = notes
        if self.turn == 1 and not self.history:  # a new session: every file made at once
            self._write(self._write_all)
        last = self.history[-1] if self.history else None
        self._undo_prompt = (len(self.history), len(blocks(last)) if last is not None else None)
        if self.history and self.history[-1]["role"] == "user":
            # Keep roles alternating (e.g. after a failed request): extend the waiting user message
            # (a new object: the turn mark remembers how many blocks it had, for rollback).
            self.history[-1] = {"role": "user", "content": blocks(self.history[-1]) + prompt_blocks}
        else:
            self.history.append({"role": "user", "content": prompt_blocks})
        self._save_history()
        return self.turn

    def allow_always(self, tool_name: str) -> None:
        """Keep an "Allow always" answer in the task folder, so a resumed session does not ask again."""
        if tool_name not in self.allowed_always:
            self.allowed_always.add(tool_name)
            self._write(self._save_meta)

    def withdraw_prompt(self) -> bool:
        """Take the prompt :meth:`begin_turn` added back out of history (it can never be sent: the
        next, smaller prompt must not be merged into it). Only before any reply of its turn."""
        if self._undo_prompt is None:
            return False
        length, last_blocks = self._undo_prompt
        self._undo_prompt = None
        if len(self.history) == length + 1:
            del self.history[length:]
        elif len(self.history) == length and last_blocks is not None:
            self.history[-1] = {**self.history[-1], "content": blocks(self.history[-1])[:last_blocks]}
        else:
            return False
        self._save_history()
        return True

    def tool_use_ids(self) -> set[str]:
        """Every ``tool_use`` id in the history. Kept as the history grows (one walk per new
        message, not per request: a long session checks a reply's ids against 10,000 messages)."""
        n, cache = len(self.history), self._ids
        fresh = cache is None or cache[0] > n or (cache[0] > 0 and self.history[cache[0] - 1] is not cache[1])
        ids, start = (set(), 0) if fresh or cache is None else (cache[2], cache[0])
        for message in self.history[start:]:
            if message.get("role") == "assistant":
                ids.update(str(b.get("id")) for b in tool_uses(message))
        self._ids = (n, self.history[-1] if n else None, ids)
        return ids

    def close_unanswered(self, why: str) -> bool:
        """A prompt that got no reply at all is closed by a marked assistant message saying why,
        so it stays its own turn: the next prompt is never merged into it (the API needs roles
        to alternate). False when the prompt was answered."""
        if self._undo_prompt is None or not self.history or self.history[-1]["role"] != "user":
            return False
        self._undo_prompt = None
        self.history.append({"role": "assistant", "content": [{"type": "text", "text": f"[No reply: {why}]"}]})
        self._save_history()
        return True

    def context_changed(self, deleted_range: tuple[int, int] | None, *, truncated: bool) -> None:
        """The context manager changed what the model sees: a new range and/or new updates."""
        self.deleted_range = deleted_range
        if truncated:
            self.truncations += 1
            self.file_state.invalidate_reads()  # hidden reads are gone: "unchanged since" would lie
        self._write(self._save_context_and_meta)

    def complete_request(self, message: Message, record: RequestRecord, usage: RequestUsage,
                         sent: SentRequest) -> None:
        """A request finished: its assistant message, its record and what was sent."""
        self.history.append(message)
        self.previous_usage = usage
        self.records.append(record)
        self.sent_saved.append(to_saved(sent, self.sent[-1] if self.sent else None))
        self.sent.append(sent)
        self._undo_prompt = None  # the prompt was answered: it stays
        # The record first: after a killed process the request log may lead the history, never lag it.
        # session.json is not rewritten: load takes the previous usage from the newest record. One
        # write (one check of the folder's lock), at most one fdatasync per request.
        self._write(self._save_completed_request)

    def append_results(self, results: Sequence[ContentBlock]) -> None:
        """The ``tool_result`` blocks answering the last assistant message."""
        if results:
            self.history.append({"role": "user", "content": list(results)})
            self._save_history()

    def answer_dangling(self, answered: Iterable[ToolResultBlockParam], not_run: str) -> None:
        """If the last message calls tools, answer each call: its result if it ran, else ``not_run``."""
        last = self.history[-1] if self.history else None
        if last is None or last.get("role") != "assistant" or not tool_uses(last):
            return
        by_id = {b.get("tool_use_id"): b for b in answered}
        self.append_results([by_id.get(u.get("id")) or error_result(u.get("id", ""), not_run)
                             for u in tool_uses(last)])

    def log(self, event: Event) -> Event:
        """Keep ``event`` in the event log (stream deltas are not kept)."""
        if not isinstance(event, STREAM_DELTAS):
            self.events.append(event)
        return event

    def end_turn(self, turn: int) -> None:
        """Mark where the session stands at the end of ``turn`` (what rollback restores) and save."""
        last_blocks = len(blocks(self.history[-1])) if self.history else None
        self.marks = [m for m in self.marks if m.turn < turn]
        notes = notes_to_keep(self.marks, self._turn_notes)  # only notes that changed: see turn_notes
        self.marks.append(TurnMark(turn=turn, history_len=len(self.history), deleted_range=self.deleted_range,
                                   ts=self.last_ts, records_len=len(self.records), previous_usage=self.previous_usage,
                                   last_blocks=last_blocks, notes=notes))
        self._write(self._save_turn_end)

    def save_events(self) -> None:
        """Save the event log and make every append so far durable (the end of a run)."""
        self._write(self._save_events_and_sync)

    def compact(self, end: int, summary: str, record: RequestRecord) -> None:
        """Replace ``history[2:end+1]`` by one message (``summary`` and message ``end``, see
        :func:`~nbagent.engine.state.compactions.compacted`), record the summary request; the state before
        is kept so that a rollback across it restores it."""
        self.compactions.append(RollbackPoint(turns=tuple(m.turn for m in self.marks),
                                              replaced=tuple(self.history[2:end + 1]),
                                              updates=self.context.updates.to_json(), records=len(self.records)))
        self.history[:] = compacted(self.history, end, summary)
        self.deleted_range, self.previous_usage = None, None
        self.context.replace_updates(type(self.context.updates)())
        self.records.append(record)
        self.file_state.invalidate_reads()
        # The point before the history it undoes (load drops a point the history does not reflect).
        self._write(lambda st: st.save_compactions(self.compactions))
        self._save_history()
        self._write(self._save_context_and_meta)
