"""What an agent cell does, as :meth:`~.link.DocumentLink.plan` decides it: replay a recorded
turn, say that a turn was undone, or ask the model (and why, for the line it says first)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..outcome import fails
from .embedded import NotebookRecord
from .replay import ReplayIndex
from .shown import Shown

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject


@dataclass(frozen=True)
class Replay:
    """Show ``turn`` of the recorded ``session``."""

    session: str
    turn: int
    shown: Shown | None = field(default=None, compare=False)
    """The turn's signed transcript (:class:`~.shown.Shown`), once loaded; None: rebuild it."""
    changed: str | None = field(default=None, compare=False)
    """The line naming what changed since the turn was recorded (the ``warn`` policy)."""
    notebook: NotebookRecord | None = field(default=None, compare=False)
    """The turn as the agent cell's own metadata carries it (no ``.nbagent/`` record here)."""
    retried: bool = field(default=False, compare=False)
    """The cell's own record is of a turn ``%agent retry`` redid in another cell: a failure it
    shows was followed by the retry's answer below, so it does not fail the cell again."""
    prompt: str = field(default="", compare=False)
    """The replaying cell's prompt: the folder's transcript must be signed for it."""
    unfinished: int | None = field(default=None, compare=False)
    """The cell's last run (this turn number) did not finish and recorded nothing, but later cells'
    recorded answers followed this turn: it is shown, saying so, rather than asked again (asking
    would make every agent cell below ask the model too, answers the record still holds)."""


@dataclass(frozen=True)
class ReplayedTurn:
    """The turn a replaying kernel showed last, and the prompt of the cell that showed it."""

    prompt: str
    turn: int
    failed: bool


@dataclass(frozen=True)
class Undone:
    """The cell's own record names a turn ``%agent rollback`` undid (the folder's turn of that
    number is another prompt's, or gone): neither shown nor asked again, as the user left it; the
    replay goes on with the next cells (``--live`` asks again)."""

    turn: int
    retried: bool = False
    """Not undone but unfinished (interrupted, cut short) and redone below by ``%agent retry``,
    whose cell replays the answer: this one says so, and neither fails nor asks."""
    in_history: bool = False
    """Undone by the cell's mark alone (not signed) while the session's record still holds the turn:
    no rollback is recorded there, so the answer may still be in the history a live prompt sends."""


@dataclass(frozen=True)
class Live:
    """Ask the model. ``resume``: first continue the recorded session of that name (a replay was
    shown from it); ``fork_at``: from a copy of it rolled back to that turn (this prompt differs
    from the recorded one, or ``--live`` was given, before the record's end; or the record is
    another notebook's, which is never written)."""

    resume: str | None = None
    fork_at: int | None = None
    no_record: bool = False
    """This cell might have been recorded but no record is reachable here: say so before asking."""
    records_here: bool = False
    """Headless, ``no_record``: the folder has records (an edited first cell's prompt begins none of
    them), so the line must not say there is no record beside the notebook."""
    without_session: bool = False
    """Headless, ``no_record``: a record begins with this prompt but its session folder was deleted."""
    unfinished_here: str | None = None
    """Headless, ``no_record``: the folder's session whose run of this prompt did not finish (a cell
    timeout, an interrupt, the kernel killed): the line says so, not "a new or edited cell"."""
    unwritten_here: str | None = None
    """Headless, ``no_record``: the folder's newest session that wrote nothing before its kernel was killed
    (which prompt it ran is unknown): the line says so, not "a new or edited cell"."""
    ambiguous: tuple[str | None, ...] = ()
    """Headless: the notebooks whose records of this prompt it cannot tell apart (none replayed)."""
    gone: tuple[str, ...] = ()
    """Headless, ``no_record``: the notebooks, no longer in the folder, whose records begin with this
    prompt (the notebook was renamed since, say): the line names them."""
    other: tuple[str, int] | None = None
    """The record the cell's metadata carries but that is not for it, and why: ``("edited", turn)``
    (the prompt changed since) or ``("copied", turn)`` (another cell's: this cell is a copy)."""
    carried: tuple[str, int] | None = None
    """The cell's own record of this very prompt (session, turn), not replayed because a turn already
    ran live in this kernel, or ``--live`` asked: where the session going on is another, the cell
    says why it asks."""
    live: bool = False
    """``--live`` (or the ``live`` replay policy) asked the model."""
    new_question: bool = False
    """Headless, in a kernel that asked the model already: the folder has an answer for this cell's
    prompt, which a run without cell ids takes as a new question (not replayed): say so."""
    own_session: int = 0
    """The turns the active session, made and asked by the notebook's own code in this kernel
    (``magics.new_session()`` then ``s.agent.run_sync(...)``, as notebook 05 does), has: the cell
    continues it live, never a record (which would replace it), and says so."""
    stale: int | None = None
    """The turn the cell's own record names, recorded before a turn this replay showed above it (a
    cell above was edited and run again since): out of date, so asked again, and said so."""
    notebook_only: int = 0
    """The turns this kernel replayed from the agent cells' own records only (a notebook received
    without its ``.nbagent/`` folder): no conversation is behind them, so this prompt starts a new
    one, which the model answers without them: say so."""
    unfinished: tuple[int, int] | None = None
    """(the cell's last run, the recorded turn it was run again after): that run did not finish (■,
    Kernel > Interrupt, or a restart while Allow waited) and recorded nothing, so the answer it was
    replacing is not shown as current (the notebook had already dropped it and its cells): say so."""
    past_record: bool = False
    """Headless, in a kernel that was replaying: the record has no next turn with this prompt (a
    new or edited cell, or a turn undone with ``%agent rollback``, which a run without cell ids
    cannot tell apart): say so before asking, never a silent live request."""


# --- which recorded turn a cell's own record stands for (used by link.DocumentLink.plan) ---------------


def latest_turn(carried: NotebookRecord | None, index: ReplayIndex, turn: int, prompt: str, cell_id: str | None,
                *, one_prompt: bool = False) -> int:
    """The turn to replay for a cell whose next recorded turn is ``turn``: a later turn of the same
    record when the cell's own metadata names one (the cell was run again: the notebook shows that
    answer, and the one it replaced must not come back as current). Where the cell carries no
    record (cleared from its metadata), the latest turn this very cell asked with this prompt: the
    one the notebook showed, never the answer (and the options, a tool since taken off the line)
    it replaced. Headless (no id, no metadata), for a cell that asks one prompt a run
    (``one_prompt``: an agent cell), :func:`rerun_turn`."""
    if carried is None and cell_id is None and one_prompt:
        return rerun_turn(index, turn, prompt)
    if carried is None and cell_id is not None:
        return max((t.turn for t in index.turns if t.turn > turn and t.asked_by(prompt, cell_id, strict=True)),
                   default=turn)
    if carried is None or not carried.mine or carried.session != index.session or carried.turn <= turn:
        return turn
    asked = any(t.turn == carried.turn and t.asked_by(prompt, cell_id) for t in index.turns)
    return carried.turn if asked else turn


def unfinished_rerun(metadata: "JSONObject", index: ReplayIndex, turn: int, carried: NotebookRecord | None,
                     cell_id: str | None) -> tuple[int, int] | None:
    """``(its last run's turn, turn)`` where the cell that would replay ``turn`` was run again after
    it and that run did not finish: the cell's mark (which the front-end sends with its metadata)
    names a later turn of the same record, which the record does not hold and no record in the
    cell stands for. Replaying ``turn`` then brought back as current the answer the run replaced
    (its code cells already gone), with no word that the last run was stopped (newcomer pass 20)."""
    mark = metadata.get("nbagent")
    # ``undone``: ``%agent rollback`` to ``turn`` or before undid that stopped run: the user kept this answer.
    if carried is not None or cell_id is None or not isinstance(mark, dict) or mark.get("kind") != "agent" \
            or mark.get("session") != index.session or mark.get("undone") is True:
        return None
    later = mark.get("turn")
    if not isinstance(later, int) or isinstance(later, bool) or later <= turn \
            or any(t.turn == later for t in index.turns):
        return None
    return later, turn


def followed(index: ReplayIndex, turn: int) -> bool:
    """Whether the record holds a turn after ``turn``: a later agent cell answered after it (its
    conversation), so asking ``turn``'s cell again would make that cell, and each below, ask too."""
    return any(t.turn > turn for t in index.turns)


def rerun_turn(index: ReplayIndex, turn: int, prompt: str) -> int:
    """The latest turn from ``turn`` on that the cell which asked ``turn`` asked again with ``prompt``
    (the index keeps each turn's cell id): the cell was run again, and the notebook shows only its
    last answer, as JupyterLab's replay of the cell's own record does. A run without cell ids
    (nbclient, papermill) replayed the first, the answer the re-run replaced, as current."""
    this = next((t for t in index.turns if t.turn == turn), None)
    if this is None or this.cell_id is None or not this.asks(prompt):
        return turn
    return max((t.turn for t in index.turns if t.turn > turn and t.asked_by(prompt, this.cell_id, strict=True)),
               default=turn)


def is_kept(carried: NotebookRecord, index: ReplayIndex, prompt: str, cell_id: str | None) -> bool:
    """Whether the folder's record still holds the carried turn. The turn's number is not enough:
    after ``%agent rollback`` the next prompt reuses it. So the record's turn of that number must
    have been asked with this prompt, by this cell where both ids are known; or by the ``%agent
    retry`` cell that redid it (a retry records its own cell, and redoes only a failed turn)."""
    failed = fails(Shown(carried.bundle, carried.reason, carried.error, carried.inputs))
    return any(t.turn == carried.turn and (t.asked_by(prompt, cell_id) or (failed and t.asks(prompt)))
               for t in index.turns)


def is_retried(carried: NotebookRecord, index: ReplayIndex | None, prompt: str, cell_id: str | None) -> bool:
    """Whether ``%agent retry`` redid the carried turn: the record's turn of that number has the
    same prompt but was asked by another cell (a retry records the cell it ran in, and the folder
    keeps the retry's turn; without cell ids the two cannot be told apart)."""
    if index is None or cell_id is None:
        return False
    return any(t.turn == carried.turn and t.asks(prompt) and t.cell_id not in (None, cell_id)
               for t in index.turns)


def retried_unrecorded(mark: object, index: ReplayIndex | None, prompt: str, cell_id: str | None) -> int | None:
    """The turn an agent cell's mark names (``kind`` agent, no record: its run did not finish, as
    an interrupted one) when the folder's record holds that turn with this prompt asked by another
    cell: ``%agent retry`` redid it there. None otherwise."""
    if not isinstance(mark, dict) or mark.get("kind") != "agent" or "record" in mark or mark.get("undone") is True:
        return None
    turn = mark.get("turn")
    if index is None or cell_id is None or not isinstance(turn, int) or mark.get("session") != index.session:
        return None
    retried = any(t.turn == turn and t.asks(prompt) and t.cell_id not in (None, cell_id) for t in index.turns)
    return turn if retried else None


__all__ = ["Live", "Replay", "ReplayedTurn", "Undone", "followed", "is_kept", "is_retried", "latest_turn", "rerun_turn",
           "retried_unrecorded", "unfinished_rerun"]
