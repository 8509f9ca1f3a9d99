"""The two questions an agent run can ask the user in its view: may this tool call run, and
should a failed request be retried. Each waits for a click (:mod:`..waiting`) and never waits on a
prompt nobody can see: a cell that left the notebook, or a page reloaded while it waited, answers
for the user (denied, cancelled) and says so; a denial for that reason also ends the turn
(:attr:`Deny.ends_turn`), so the model is not sent more requests nobody sees, nor asks again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal, Mapping, Protocol

from ...engine.contracts import events as ev
from ...engine.contracts.permissions import Allow, Deny, PermissionRequest
from .. import waiting
from ..outcome import LEFT_STOP, UNSEEN_STOP
from .prompts import PermissionPrompt
from .retry import FailurePrompt
from .tools import ToolCard

UNSEEN_PROMPT = ("Denied without asking, and the run stopped here: nobody could see Allow / Deny (a run with no "
                 "notebook page, as nbconvert, nbclient, papermill or plain IPython; a page reloaded or closed; or this "
                 "cell deleted while it was queued). To let a tool run without asking, allow it up front: %%agent "
                 "--allow python (and --live where the cell replays this answer as recorded, after a kernel restart).")
LOST_PROMPT = ("Denied, and the run stopped here: the page showing Allow / Deny was reloaded or closed (or the cell's "
               f"outputs cleared, or no page answered for {waiting.NO_PAGE_S:g} s: closed, asleep or disconnected) "
               "while it waited, so nobody could answer it. Run the agent cell again to be asked again (after a "
               "kernel restart, with --live: a replay shows this answer as recorded).")


def left_stop(tool_name: str) -> str:
    """The line a run ends with when its cell left the page (deleted while queued, run again while it
    ran, the page reloaded): the turn ends, the cell does not fail (:data:`LEFT_STOP`), the user's
    queue goes on."""
    return (f"{LEFT_STOP} ({tool_name}: deleted, run again while it ran, or its page reloaded); the call was "
            "denied and the model was not asked again. Run the cell again to be asked.")


def _stop(view: "AskingView", tool_name: str, lost: bool) -> str:
    left = getattr(view.cell_shown, waiting.LEFT_PAGE, False) is True
    return left_stop(tool_name) if left else unseen_stop(tool_name, lost)


def unseen_stop(tool_name: str, lost: bool) -> str:
    """The one line a run ends with when nobody could answer its ``tool_name`` prompt: why, and
    what to do (ask where a page shows the prompt, or allow the tool up front). The run is recorded:
    the cell run again after a restart, or headless again, replays this stop (the line then shows
    again), so the way out names ``--live`` too; without it, ``--allow`` added as told failed alike."""
    why = ("the page showing it was reloaded or closed, or the cell's outputs cleared, while it waited" if lost
           else "no notebook page shows this cell: nbconvert, nbclient, papermill or plain IPython ran it, "
                "or it was deleted while queued")
    return (f"{UNSEEN_STOP} ({tool_name}: {why}); the call was denied and the model was not asked again. Run the "
            f"cell in an open notebook page to answer Allow / Deny there, or allow the tool up front: "
            f"%%agent --allow {tool_name}, with --live where the cell replays this recorded stop (a kernel restart, "
            "another headless run): a replay runs nothing and fails the same way")


class AskingView(Protocol):
    """What the questions need of the run's view (``AgentView``)."""

    cell_shown: Callable[[], Awaitable[bool]] | None
    abort: asyncio.Event | None
    prompts_shown: list[PermissionPrompt]
    failures_shown: list[FailurePrompt]

    def handle(self, event: ev.Event) -> None: ...
    def card(self, tool_use_id: str, name: str) -> ToolCard: ...
    def start_tool(self, card: ToolCard) -> None: ...
    def show_failure(self, event: ev.ApiRequestFailed) -> FailurePrompt: ...


async def ask_permission(view: AskingView, tool_name: str, tool_input: Mapping[str, object],
                         request: PermissionRequest | None = None) -> Allow | Deny:
    """Show a permission prompt for a tool call and wait for the user's answer.

    A ``can_use_tool`` callback. An abort (the view's ``abort`` event) before a decision
    denies the call; a kernel interrupt (``CancelledError``) propagates after the prompt is
    closed.
    """
    tool_use_id = getattr(request, "tool_use_id", "") or f"ask-{len(view.prompts_shown)}"
    if view.cell_shown is not None and not await view.cell_shown():
        # A cell deleted while queued still runs: a prompt in it would wait for a click that cannot come.
        view.handle(ev.Notice(level="warning", message=UNSEEN_PROMPT))
        view.card(tool_use_id, tool_name).set_status("denied")
        return Deny(UNSEEN_PROMPT, ends_turn=_stop(view, tool_name, lost=False))
    prompt = PermissionPrompt(tool_name, tool_input, getattr(request, "reason_asked", ""))
    card = view.card(tool_use_id, tool_name)
    if card.input != tool_input:  # a pre_tool_use hook's rewrite: the user decides on what runs
        card.set_input(tool_input)
    card.attach_prompt(prompt)
    view.prompts_shown.append(prompt)
    settled = False
    try:
        outcome = await waiting.wait_for_decision(prompt.decision, abort=view.abort, shown=view.cell_shown)
        prompt.settle(outcome)
        settled = True
        card.set_status("allowed" if isinstance(outcome, Allow) else "denied")
        if isinstance(outcome, Allow):
            view.start_tool(card)  # its time starts now: the wait for the click is not the tool's
        return outcome
    except waiting.WaitAborted:
        prompt.settle(None, "aborted")
        settled = True
        card.set_status("aborted")
        return Deny("The run was aborted before the user decided.")
    except waiting.WaitUnseen:
        denied = Deny(LOST_PROMPT, ends_turn=_stop(view, tool_name, lost=True))
        prompt.settle(denied)
        settled = True
        card.set_status("denied")
        view.handle(ev.Notice(level="warning", message=LOST_PROMPT))
        return denied
    finally:
        if not settled:  # interrupted: close the prompt, let the CancelledError go on
            prompt.settle(None, "interrupted")
            card.set_status("interrupted")

async def ask_api_failure(view: AskingView, event: ev.ApiRequestFailed) -> Literal["retry", "cancel"]:
    """Offer **Retry** / **Cancel** (and *Start new session*) for a failed request.

    An ``on_api_failure`` callback; *Start new session* answers ``"cancel"`` and calls the
    view's ``on_new_session``.
    """
    if view.cell_shown is not None and not await view.cell_shown():
        return "cancel"  # nobody can see Retry / Cancel: cancel rather than wait for ever
    prompt = next((f for f in reversed(view.failures_shown) if f.event is event and f.outcome is None), None)
    if prompt is None:
        prompt = view.show_failure(event)
    prompt.ask()
    choice = "interrupted"
    try:
        choice = await waiting.wait_for_decision(prompt.decision, abort=view.abort, shown=view.cell_shown)
    except (waiting.WaitAborted, waiting.WaitUnseen):  # unseen: nobody can click Retry any more
        choice = "cancel"
    finally:
        prompt.settle(choice)
    return "retry" if choice == "retry" else "cancel"


__all__ = ["LOST_PROMPT", "UNSEEN_PROMPT", "AskingView", "left_stop", "unseen_stop", "ask_api_failure", "ask_permission"]
