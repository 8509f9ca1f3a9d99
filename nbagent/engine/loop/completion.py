"""The end of one API request: its record, what was sent, and the cleaned reply into the session."""

from __future__ import annotations

import dataclasses
from typing import Mapping

from ..api_facts.context_edits import cleared_tokens
from ..api_facts.cost import Usage, cost_of
from ..api_facts.models import ModelInfo
from ..context import RequestUsage, get_context_window_info
from ..contracts.events import ContextAction, Notice, RequestRecord
from ..contracts.messages import blocks, clean_assistant, is_compaction
from ..contracts.provider import MessageComplete
from ..state.session import Session
from ..state.totals import Spent
from .request import RequestOutcome
from .request_run import RequestRun
from .sanitize import Sanitizer, clean_reply, replaced_notice
from .turn import TurnState


def record_completed_request(session: Session, run: RequestRun, outcome: RequestOutcome, state: TurnState,
                             sanitizer: Sanitizer) -> tuple[RequestRecord, Notice | None]:
    """Record a completed request in ``session``: its :class:`RequestRecord`, what the model saw
    and the reply, cleaned at the boundary (tool calls that must not run go to ``state.refused``).
    Returns the record and a notice when the reply had characters replaced."""
    c, turn = outcome.complete, state.turn
    u = c.usage
    info = get_context_window_info(run.context_window)
    record = RequestRecord(
        turn=turn, request=len(session.records) + 1, model=c.model or outcome.model, usage=u,
        cost_usd=_cost(c, outcome.model, run.config.prices), context_tokens=u.prompt_tokens,
        max_allowed=info.max_allowed_size, context_window=info.context_window,
        deleted_range=session.deleted_range,
        keep=outcome.truncation.keep if outcome.truncation else outcome.context.keep,
        trigger_tokens=outcome.truncation.previous_tokens if outcome.truncation else None,
        file_read_saving=outcome.context.file_read_saving, retries=outcome.retries,
        stop_reason=c.stop_reason, duration_s=outcome.duration_s, ts=outcome.ts,
        estimated_input_tokens=outcome.estimated_input_tokens, without=tuple(sorted(run.without)),
        rate_limit_wait_s=round(outcome.rate_limit_wait_s, 3),
        context_actions=(*outcome.actions, *server_actions(c)), compaction_usage=c.compaction_usage,
        unanswered_usage=outcome.unanswered,
    )
    if outcome.unanswered is not None:
        record = _with_unanswered(session, record, outcome.unanswered, run.config.prices)
    sent = session.sent_request(request=record.request, turn=turn, model=outcome.model, system=outcome.system,
                                tools=tuple(str(t["name"]) for t in outcome.tools), ts=outcome.ts)
    reply = clean_reply(clean_assistant(c.message), sanitizer, session.tool_use_ids())
    state.refused = reply.refused
    session.complete_request(reply.message, record, RequestUsage.from_usage(outcome.ts, u), sent)
    notice = Notice(level="warning", message=replaced_notice(reply.replaced, "the model's reply")) \
        if reply.replaced else None
    return record, notice


def _cost(c: MessageComplete, model: str, prices: Mapping[str, ModelInfo] | None) -> float | None:
    """The request's price: its usage plus the server's compaction iterations (billed apart)."""
    cost = cost_of(c.usage, model, prices)
    if c.compaction_usage is None or cost is None:
        return cost
    extra = cost_of(c.compaction_usage, model, prices)
    return None if extra is None else cost + extra


def _with_unanswered(session: Session, record: RequestRecord, billed: Usage,
                     prices: Mapping[str, ModelInfo] | None) -> RequestRecord:
    """``record`` with what its cut-off attempts were billed in its cost, taken out of what the
    session kept for them (``Session.bill``): the row adds up to the money spent, counted once. The
    attempts stay counted as requests sent (``spent_requests``), as the run's "attempted" says."""
    moved = Spent.unfinished(billed, record.model, prices)
    session.dropped = session.dropped.less(dataclasses.replace(moved, requests=0, unpriced_requests=0))
    extra = cost_of(billed, record.model, prices)
    cost = None if record.cost_usd is None or extra is None else record.cost_usd + extra
    return dataclasses.replace(record, cost_usd=cost)


def server_actions(c: MessageComplete) -> tuple[ContextAction, ...]:
    """What the server's layers did, as the reply reports it: cleared edits and a compaction block."""
    actions = [ContextAction(layer="server_edit", tokens_removed=cleared_tokens((e,)),
                             detail=_edit_detail(e), reported=True) for e in c.applied_edits]
    if any(is_compaction(b) for b in blocks(c.message)):
        summarised = c.compaction_usage.input_tokens if c.compaction_usage is not None else 0
        actions.append(ContextAction(layer="server_compaction", tokens_removed=summarised,
                                     detail="the server summarised the conversation", reported=True))
    return tuple(actions)


def _edit_detail(edit: Mapping[str, object]) -> str:
    counts = {k: v for k, v in edit.items() if k.startswith("cleared_") and k != "cleared_input_tokens"}
    return f"{edit.get('type', '?')}: " + ", ".join(f"{k.removeprefix('cleared_')} {v}" for k, v in counts.items())


__all__ = ["record_completed_request", "server_actions"]
