"""Rollback of a :class:`~nbagent.engine.state.session.Session`: returning to the end of an earlier
turn (:meth:`~SessionRollback.rollback`), taking a refused turn back out of the history
(:meth:`~SessionRollback.withdraw_turn`), undoing the compactions made since, and the notes file a
rollback writes back (:meth:`~SessionRollback.notes_before`).

A mixin (moved out of session.py) so that going back in a session reads apart from going forward;
:class:`Session` sets the attributes declared here, and its file writes are
:class:`~nbagent.engine.state.session_files.SessionFiles`'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context.updates import ContextHistoryUpdates
from ..contracts.messages import Message
from .session_files import SessionFiles
from .store import TurnMark
from .totals import Spent
from .turn_notes import notes_before

if TYPE_CHECKING:
    from ..context.file_state import FileStateCache
    from .sent import SentRequest


class SessionRollback(SessionFiles):
    """The rollback half of :class:`~nbagent.engine.state.session.Session` (which sets these attributes)."""

    sent: list[SentRequest]
    turn: int
    file_state: FileStateCache
    dropped: Spent
    _undo_prompt: tuple[int, int | None] | None

    def withdraw_turn(self, turn: int) -> list[Message]:
        """Take ``turn``'s messages out of the history sent to the model (a refused exchange);
        records, costs and events keep them. Returns what was taken out."""
        start = self._mark(turn - 1) if any(m.turn == turn - 1 for m in self.marks) or turn == 1 else None
        if start is None:
            return []
        # A compaction since then (mid-turn, say) moved the messages the mark counts: undone first.
        undone = self._undo_compactions(turn - 1)
        taken = self.history[start.history_len:]
        del self.history[start.history_len:]
        if self.history and start.last_blocks is not None:
            last = self.history[-1]  # this turn's prompt may have been merged into a waiting message
            if isinstance(last.get("content"), list) and len(last["content"]) > start.last_blocks:
                taken.insert(0, {**last, "content": last["content"][start.last_blocks:]})
                self.history[-1] = {**last, "content": last["content"][:start.last_blocks]}
        if undone or (self.deleted_range is not None and self.deleted_range[1] >= len(self.history) - 1):
            self.deleted_range = start.deleted_range
        # Masks and truncation notices made during the turn point at (message, block) places the
        # next turn's messages will take: they go with the turn.
        self.context.truncate_context_history(start.ts)
        self._write(self._save_after_rollback)
        return taken

    def _undo_compactions(self, turn: int) -> bool:
        """Before rolling back to ``turn``: undo every compaction made after it (the latest first),
        restoring the history and the context manager's updates of the first one. Whether any was."""
        for i, point in enumerate(self.compactions):
            if turn in point.turns or turn == 0:
                for later in reversed(self.compactions[i:]):
                    self.history[:] = later.restore(self.history)
                self.context.replace_updates(ContextHistoryUpdates.from_json(point.updates))
                del self.compactions[i:]
                return True
        return False

    def rollback(self, turn: int) -> None:
        """Return to the end of ``turn``: history, range, records, and what the model saw (the
        context manager's updates newer than that turn are dropped; a compaction after it is
        undone). ``0`` empties it. What was spent is not: the requests taken out of the records
        were billed, so they stay in :attr:`spent` (kept in ``dropped``, saved in session.json).
        The state change only: callers go through :func:`nbagent.engine.loop.rollback.rollback`, which refuses during
        a run and makes the next prompt tell the model the kernel's facts again."""
        mark = self._mark(turn)
        self._undo_compactions(turn)
        del self.history[mark.history_len:]
        if self.history and mark.last_blocks is not None:
            # A later prompt may have been merged into the turn's last (user) message: undo that.
            last = self.history[-1]
            if isinstance(last.get("content"), list) and len(last["content"]) > mark.last_blocks:
                self.history[-1] = {**last, "content": last["content"][:mark.last_blocks]}
        self.deleted_range = mark.deleted_range
        self.previous_usage = mark.previous_usage
        self.dropped = self.dropped + Spent.of(self.records[mark.records_len:])  # billed: never un-spent
        self.last_ts = max(self.last_ts, mark.ts)
        self.context.truncate_context_history(mark.ts)
        del self.records[mark.records_len:]
        self.sent = [s for s in self.sent if s.request <= mark.records_len]
        self.sent_saved = [s for s in self.sent_saved if s.request <= mark.records_len]  # the file follows
        self.marks = [m for m in self.marks if m.turn <= turn]
        self.turn = turn
        self.file_state.invalidate_reads()
        self._undo_prompt = None
        self._write(self._save_after_rollback)

    def notes_before(self, turn: int) -> str | None:
        """The agent's notes file as it stood before the turns after ``turn`` ran: what
        :func:`nbagent.engine.loop.rollback.rollback` writes back before rolling back to ``turn``. None when there
        is nothing to restore (no later turn ran with the notes on, or its mark was never written:
        a process killed during it). Raises ``ValueError`` for a turn there is no rolling back to."""
        self._mark(turn)
        return notes_before(self.marks, turn)

    def _mark(self, turn: int) -> TurnMark:
        if turn == 0:
            return TurnMark(turn=0, history_len=0, deleted_range=None, ts=0, records_len=0)
        found = [m for m in self.marks if m.turn == turn]
        if not found:
            known = ", ".join(str(m.turn) for m in self.marks) or "none"
            raise ValueError(f"no turn {turn} to roll back to (turns: {known})")
        return found[0]


__all__ = ["SessionRollback"]
