"""How a ``%%agent`` cell ends: ``ok``, ``error`` with one readable line, or ``KeyboardInterrupt``.

Run All, nbclient and papermill stop at a cell whose execute reply is ``error``; so a run that
failed (``Done("error")``), could not start, or was interrupted must fail its cell. IPython prints
an exception with a ``_render_traceback_`` method as the lines that method returns, so these
errors show as one line instead of frames through nbagent, the SDK, httpx and asyncio.
"""

from __future__ import annotations

from typing import Protocol

from ..engine.contracts.errors import NbAgentError


class Ending(Protocol):
    """How a run ended: a ``Done`` event, or a replayed turn's saved outcome."""

    @property
    def reason(self) -> str: ...

    @property
    def error(self) -> str | None: ...

UNSEEN_STOP = "stopped at a permission prompt nobody could see"
LEFT_STOP = "stopped at a permission prompt in a cell that left the page"
"""How a run's error line begins when its cell was deleted while queued, run again while it ran, or
its page reloaded:
the turn ended there, but the cell does not fail: a failure would abort the kernel's queue (Run All's
cells below it, or that new run) with the reason in a cell nobody sees."""
"""How a run's error line begins when a prompt no page showed ended the turn (the line then says
what to do itself: :func:`nbagent.notebook.view.questions.unseen_stop`)."""

INTERRUPTED_LINE = "■ interrupted — history kept; the next %%agent continues"


class AgentCellError(NbAgentError):
    """A ``%%agent`` cell whose run failed or could not start (the cell ends with ``error``)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class AgentRunFailed(AgentCellError):
    """The run ended with ``Done("error")``: the message says why and what to try next."""


class AgentRunRefused(AgentCellError):
    """The run could not start (no API key, another run in progress, …)."""


class AgentRunCancelled(AgentCellError):
    """The user clicked Cancel (a retry's countdown): the run ended as they asked, not as an
    interrupt; the cell still fails, so Run All stops there."""


CANCELLED_MESSAGE = ("the run was cancelled (Cancel during a retry wait); the history is kept: "
                     "run %agent retry to send the prompt again, or run the cell again")


class AgentInterrupted(KeyboardInterrupt):
    """The run was interrupted (■, or Cancel): history is kept and the next prompt continues it.

    A ``KeyboardInterrupt`` so the cell ends the way an interrupted cell does and Run All stops.
    """

    def __init__(self, message: str = INTERRUPTED_LINE) -> None:
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


# ipykernel reports ``type(exc).__name__`` as the reply's ``ename``: front-ends and nbclient know
# "KeyboardInterrupt" as an interrupted cell, so the class answers to that name.
AgentInterrupted.__name__ = "KeyboardInterrupt"


FAILING_REASONS = ("error", "aborted")
"""The ends of a run that fail its cell; ``end_turn`` and the limits end it normally."""


def check_done(done: Ending | None, *, cancelled: bool = False, model: str | None = None) -> None:
    """Raise for a run that must fail its cell; return quietly for one that ended normally.

    ``end_turn`` and the limits (``max_requests``, ``budget``) are normal ends: the run did what
    it was allowed to. ``error`` fails the cell; ``aborted`` ends it as a cancelled run when the
    user clicked Cancel (``cancelled``), else (■, an interrupt the engine saw first) like an interrupt.
    ``model``: the session's model, named when the endpoint did not find it (``--model`` sticks).
    """
    if done is None or not fails(done):
        return
    if done.reason == "error":
        detail = done.error or "the request failed"
        if model and detail.startswith("not_found") and model in detail:
            # --model holds for later prompts: a retry, or the cell run again, asks for it again.
            raise AgentRunFailed(f"the agent run failed: {detail}. The session's model is {model!r} (a cell's "
                                 "--model holds for the later prompts too): run the cell with --model set to a "
                                 "model id that exists; %agent retry or the cell run as it is would ask for it "
                                 "again.")
        if detail.startswith(UNSEEN_STOP):  # the line already says what to do
            raise AgentRunFailed(f"the agent run {detail}")
        raise AgentRunFailed(f"the agent run failed: {detail}. Fix the cause and run %agent retry, "
                             "or run the cell again.")
    if cancelled:
        raise AgentRunCancelled(CANCELLED_MESSAGE)
    raise AgentInterrupted()  # aborted by ■, or an interrupt the engine saw first


def fails(done: Ending | None) -> bool:
    """Whether :func:`check_done` fails the cell for this ending (a failure, a cancel, an abort)."""
    if done is not None and done.reason == "error" and (done.error or "").startswith(LEFT_STOP):
        return False
    return done is not None and done.reason in FAILING_REASONS


def refused(exc: NbAgentError) -> AgentRunRefused:
    """A refusal to start, as one line (``raise refused(exc) from None``)."""
    return AgentRunRefused(str(exc))


__all__ = ["INTERRUPTED_LINE", "LEFT_STOP", "UNSEEN_STOP",
           "AgentCellError", "AgentInterrupted", "AgentRunCancelled", "AgentRunFailed",
           "AgentRunRefused",
           "check_done", "fails", "refused"]
