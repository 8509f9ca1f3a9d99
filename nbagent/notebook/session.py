"""The notebook's agent session: one :class:`~nbagent.agent.Agent` plus what the magics show of it.

``nbagent.session()`` returns the active one: ``turns_df()``, ``truncation_df()``, ``messages_df()``,
``cost``, ``rollback(turn)``, ``events``, ``saw(turn)``.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .kernel_context.cells import is_agent_cell, is_agent_command

if TYPE_CHECKING:
    # Annotations only: the kernel builds LastError at start (``%load_ext``), before any prompt
    # needs the engine; its loop, state and pydantic models load with the first session.
    import pandas as pd
    from IPython.core.interactiveshell import ExecutionResult, InteractiveShell

    from ..agent import Agent
    from ..engine.contracts.events import Event, RequestRecord, Totals
    from ..engine.contracts.json_types import JSONObject
    from ..engine.state.sent import SentRequest
    from .executor import ShellExecutor
    from .kernel_context import KernelContext
    from .kernel_context.figures import DisplayedImages
    from .view import AgentView


def kernel_facts_from(shell: "InteractiveShell", errors: "LastError | None" = None,
                      images: "DisplayedImages | None" = None) -> "KernelContext":
    """A ``kernel_facts`` callable (:class:`~nbagent.notebook.kernel_context.KernelContext`): user
    variables ranked by the prompt and described within a token budget, recent cell inputs, the
    last error (from ``errors``, one watcher per shell), recent outputs and the images the prompt
    is about (from ``images``, a :class:`~nbagent.notebook.kernel_context.figures.DisplayedImages`)."""
    from .kernel_context import KernelContext

    return KernelContext(shell, errors if errors is not None else LastError(shell), images)


class LastError:
    """The last cell that raised, as the model is told about it (agent cells and ``%agent`` commands
    are not user errors: a second ``%agent fix`` would ask the model to fix the first one's "No
    failed cell to fix", and every prompt would report it as the user's last error).

    Registered once per shell as a ``post_run_cell`` hook."""

    def __init__(self, shell: "InteractiveShell | None") -> None:
        self.text: str | None = None
        self.cell: int | None = None
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("post_run_cell", self._after_cell)

    def _after_cell(self, result: "ExecutionResult") -> None:
        error = getattr(result, "error_in_exec", None)
        source = str(getattr(getattr(result, "info", None), "raw_cell", "") or "")
        if error is None or is_agent_cell(source) or is_agent_command(source) or isinstance(error, KeyboardInterrupt):
            return
        frames = "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=-3))
        self.cell = getattr(result, "execution_count", None)
        source = source.strip()
        # Cut with a marker right at the cut: a secret's start cut there is recognised and redacted
        # when the facts cross the boundary (the lines after it would hide a bare cut).
        source = source[:1_000] + "…" if len(source) > 1_000 else source
        self.text = f"In[{self.cell}] raised {type(error).__name__}: {error}\n{source}\n{frames}"


class NotebookSession:
    """One conversation in a notebook (``%%agent`` cells continue it; ``--new`` starts another).

    A thin reader over its :class:`~nbagent.agent.Agent`: everything it shows comes from the
    Agent's public API.
    """

    def __init__(self, agent: Agent, *, executor: "ShellExecutor | None" = None, recorded_spend: float = 0.0) -> None:
        self.agent = agent
        self.executor = executor
        self.recorded_spend = recorded_spend
        """What a loaded record had spent before this kernel (a replayed conversation going on live):
        part of the session's spend, said where that is shown (it was not spent here)."""
        self.last_prompt: str | None = None
        self.last_options: JSONObject = {}
        """The session options the last prompt's cell gave (its record signs them; ``%agent retry``
        records them again: the retry's record stands for that cell's turn)."""
        self.retrying: bool = False
        """Set by ``%agent retry`` for the prompt it sends again (its line gives no options)."""
        self.last_outcome: str | None = None
        """How the last prompt's run ended: its ``Done.reason``, or ``interrupted`` (no Done)."""
        self.view: "AgentView | None" = None
        """The view of the latest prompt (earlier ones are static output by then)."""

    # --- what users ask of a session -----------------------------------------------------------
    @property
    def events(self) -> Sequence[Event]:
        """Every non-delta event of the session, in order."""
        return self.agent.events

    @property
    def records(self) -> Sequence[RequestRecord]:
        return self.agent.records

    @property
    def turn(self) -> int:
        return self.agent.turn

    @property
    def cost(self) -> float | None:
        """What the session has spent in USD: every request billed, rolled-back ones included
        (``totals.cost_usd`` is what the requests of the current history cost); None once a request
        had no price (a local or gateway model), as ``RunResult.cost``: ``spent_usd`` alone read
        ``0.0`` for a session on a local model."""
        if self.agent.session.spent.unpriced_requests:
            return None
        return self.agent.totals.spent_usd

    @property
    def totals(self) -> "Totals":
        return self.agent.totals

    def turns_df(self) -> "pd.DataFrame":
        """One row per API request: tokens, cost, context size, deleted range, retries."""
        from ..display.tables import turns_df
        from .kernel_context.told import request_image_tokens

        return turns_df(self.agent.records, image_tokens=request_image_tokens(self.agent.sent))

    def truncation_df(self) -> "pd.DataFrame":
        """The requests where the context manager changed what the model sees."""
        from ..display.tables import truncation_df

        return truncation_df(self.agent.records)

    def messages_df(self) -> "pd.DataFrame":
        """One row per history message: role, size, and whether the model still sees it."""
        from ..display.tables import messages_df, server_cleared_tool_uses
        from ..engine.contracts.context_policy import ContextPolicy

        # What a request sends now: masked results and replaced reads as their placeholders, not "kept".
        context = self.agent.engine.session.context
        policy = self.agent.config.context
        never = policy.options.exclude if isinstance(policy, ContextPolicy) else ()
        records = self.agent.records
        return messages_df(self.agent.history, self.agent.deleted_range, context.replaced_reads(), context.updates,
                           server_cleared=server_cleared_tool_uses(records[-1] if records else None),
                           never_cleared=never)

    def stop(self) -> None:
        """Stop the run in progress, as ■ would (thread-safe): abort it, and interrupt the model's
        code if it runs on the kernel's main thread now (it blocks the loop that would see the abort)."""
        from .executor import interrupt_user_code

        self.agent.abort()
        if self.executor is not None:
            interrupt_user_code()

    def rollback(self, turn: int) -> None:
        """Return to the end of ``turn`` (history, range, records and what the model saw): the
        one rollback, :func:`~nbagent.engine.loop.rollback.rollback`."""
        from ..engine.loop.rollback import rollback

        rollback(self.agent.engine, turn)

    def saw(self, turn: int | None = None) -> list[SentRequest]:
        """The exact requests sent during ``turn`` (default: the latest turn)."""
        sent = self.agent.sent
        if not sent:
            return []
        turn = sent[-1].turn if turn is None else turn
        return [s for s in sent if s.turn == turn]

    def described_variables(self, turn: int | None = None) -> list[str]:
        """The names of the variables the model had been told about when ``turn`` (default: the
        latest) was sent (see :func:`~nbagent.notebook.kernel_context.told.described_variables`)."""
        from .kernel_context.told import described_variables

        return described_variables(self, turn)

    def unsaved_requests(self, turn: int | None = None) -> list[int]:
        """Requests of ``turn`` (default: the latest turn that made one) whose content :meth:`saw`
        cannot show: made by an earlier nbagent version, which did not save it in the task folder.
        (The summary requests of a compaction are not the agent's: they are not counted.)"""
        from ..engine.loop.compaction import COMPACT_KEEP

        records = [r for r in self.agent.records if r.keep != COMPACT_KEEP]
        if not records:
            return []
        turn = records[-1].turn if turn is None else turn
        shown = {s.request for s in self.agent.sent}
        return [r.request for r in records if r.turn == turn and r.request not in shown]

    def save(self, path: str | Path) -> Path:
        """Write a copy of the session's task folder to ``path`` (atomically, file by file)."""
        return self.agent.save(path)

    def __repr__(self) -> str:
        from ..display.format import fmt_total_cost

        t = self.agent.totals  # requests without a price: "unknown" or "≥ $x", never a plain $0.0000
        unpriced = self.agent.session.spent.unpriced_requests  # rolled-back ones too, as spent_usd
        return (f"<nbagent session: {self.agent.config.model} via {self.agent.provider.name}, "
                f"{self.agent.turn} turns, {t.requests} requests, "
                f"{fmt_total_cost(t.spent_usd, unpriced, t.spent_requests)} spent>")
