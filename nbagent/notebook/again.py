"""``%agent fix`` and ``%agent retry``: ask again about what failed.

``fix`` sends the last failed cell and its traceback as a new prompt; ``retry`` rolls the failed
turn back and sends its prompt again (in a kernel replaying a recorded notebook, it replays the
retried turn instead: see :func:`.document.command_replay.replayed_retry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from . import command_args, commands
from .fix_prompt import FIX_PROMPT

if TYPE_CHECKING:
    from ..engine.contracts.events import Done
    from .magics_api import MagicsApi


async def fix(magics: "MagicsApi", options: str) -> "Done | None":
    """``%agent fix [--insert-code]``: explain and fix the last failed cell (its traceback is sent)."""
    if command_args.parse(commands.fix, options) is None:  # --help
        return None
    if magics.last_error.text is None:
        from .document.command_replay import recorded_fix

        if recorded_fix(magics):  # fixed or deleted since it was asked about: shown as recorded
            return None
        raise UsageError("No failed cell to fix: %agent fix works on the last cell that raised an error.")
    prompt = FIX_PROMPT.format(cell=magics.last_error.cell, error=magics.last_error.text)
    return await magics.run_prompt(options, prompt)


async def retry(magics: "MagicsApi", line: str) -> None:
    """``%agent retry``: run the last prompt again from where its failed turn began."""
    if command_args.parse(commands.retry, line) is None:  # --help
        return
    from .document.command_replay import replayed_retry

    if await replayed_retry(magics):  # Run All of a recorded notebook: shown, never sent
        return
    sess = magics.current
    if sess is None or not sess.last_prompt:
        raise UsageError("Nothing to retry: no prompt has run in this session.")
    outcome = sess.last_outcome
    if outcome not in ("error", "aborted", "interrupted"):
        # Sending an answered prompt again would bill it again for nothing the user asked for.
        how = {"end_turn": "was answered", "refusal": "was refused by the model"}.get(
            str(outcome), f"stopped at a limit ({outcome})")
        raise UsageError(f"Nothing to retry: the last prompt {how}; %agent retry re-sends a failed, "
                         "cancelled or interrupted prompt. To ask again, run its cell again.")
    if sess.turn > 0:
        from ..engine.loop.rollback import rollback
        from .document.cell_run import rolled_back

        rollback(sess.agent.engine, sess.turn - 1)
        rolled_back(magics, sess, sess.turn, undone=False)
    # Recorded with the failed cell's own options: the retry's record stands for that cell's turn
    # (headless, a replay of the cell finds it), and one naming none dropped what the cell allowed.
    sess.retrying = True
    try:
        await magics.run_prompt("", sess.last_prompt)
    finally:  # not left set where the retry failed before it ran: the next cell gives its own
        sess.retrying = False


__all__ = ["fix", "retry"]
