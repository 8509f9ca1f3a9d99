"""The agent's notes file in the turn marks: what a rollback writes back.

Each turn's mark keeps ``notes.md`` as the turn began, only when it changed since the last mark
that kept it (notes may be 100,000 characters, and a copy per turn would grow ``turn_marks.json``
and the memory of a long session by that much), so the notes as any turn began are the newest
text kept up to its mark.
"""

from __future__ import annotations

from typing import Sequence

from .store import TurnMark


def kept_notes(marks: Sequence[TurnMark]) -> str | None:
    """The notes as the last of ``marks`` began: the newest text kept (see :attr:`TurnMark.notes`)."""
    return next((m.notes for m in reversed(marks) if m.notes is not None), None)


def notes_to_keep(marks: Sequence[TurnMark], notes: str | None) -> str | None:
    """What the next mark keeps of ``notes`` (as its turn began): None when the earlier marks
    already give that text."""
    return notes if notes != kept_notes(marks) else None


def notes_before(marks: Sequence[TurnMark], turn: int) -> str | None:
    """The notes as they stood before the turns after ``turn`` ran (as turn ``turn + 1`` began);
    None when there is nothing to restore: no later turn kept notes, or turn ``turn + 1`` left no
    mark (a process killed during it)."""
    following = [m for m in marks if m.turn > turn]
    if not following or following[0].turn != turn + 1:
        return None
    kept = kept_notes([m for m in marks if m.turn <= turn + 1])
    if kept is None and any(m.notes is not None for m in following):
        return ""  # the notes began after ``turn``: going back empties them
    return kept


__all__ = ["kept_notes", "notes_before", "notes_to_keep"]
