"""Rollback: return a session to the end of an earlier turn. :func:`rollback` is the one entry point.

:meth:`Agent.rollback <nbagent.agent.Agent.rollback>`, ``nbagent.session().rollback``, ``%agent rollback``,
``%agent retry`` and the notebook's fork of an edited record call it directly. It refuses while a run
is in progress, writes back the agent's notes file as it stood before the later turns ran (see
:mod:`.notes`), makes the state change (:meth:`Session.rollback
<nbagent.engine.state.session_rollback.SessionRollback.rollback>`) and has the next prompt tell the model
the kernel's facts again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .turn import RunInProgressError

if TYPE_CHECKING:
    from .query import QueryEngine


def rollback(engine: QueryEngine, turn: int) -> None:
    """Return ``engine``'s session to the end of ``turn`` (0 empties it; not while a run is in progress),
    the agent's notes file included. What was spent is not lowered: the requests rolled back were billed.
    Raises :class:`RunInProgressError` during a run and ``ValueError`` for a turn there is no rolling
    back to (then nothing changes)."""
    if engine._running_prompt is not None:
        raise RunInProgressError(engine._running_prompt)
    notes = engine.session.notes_before(turn)  # checks the turn first: a bad one changes nothing
    if notes is not None:  # written first: if it fails, nothing is rolled back
        engine._notes.restore(notes)
    engine.session.rollback(turn)
    engine._facts.forget()  # what the model was told may be gone: the next prompt tells it all


__all__ = ["rollback"]
