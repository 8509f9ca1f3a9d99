"""How the agent view renders each engine event: one ``_on_<kind>`` function per event kind.

Functions of the :class:`~nbagent.notebook.view.agent_view.AgentView` (which owns the widgets,
the questions it asks and its life cycle), seen through :class:`~.run_view.RunView`; ``AgentView.handle``
dispatches through ``HANDLERS``.
They use the view's public methods and attributes only (``view.body`` holds the run's parts; a
test checks that no handler reaches a ``view._`` member), and every kind of the engine's ``Event``
union has one (a test checks that too).
"""

from __future__ import annotations

from typing import Any, Callable

from ...display.format import fmt_total_cost, truncation_line
from ...engine.contracts import events as ev
from .render import STYLE, error_line
from .run_view import RunView
from .text import TableBlock, TextBlock, ThinkingBlock
from .tools import ToolCard


def _on_text_delta(view: RunView, e: ev.TextDelta) -> None:
    part = view.body.stream_part("text", e.index)
    part.append(e.text)
    view.body.mark_dirty(part)


def _on_thinking_delta(view: RunView, e: ev.ThinkingDelta) -> None:
    part = view.body.stream_part("thinking", e.index)
    part.append(e.text)
    view.body.mark_dirty(part)


def _on_tool_use_delta(view: RunView, e: ev.ToolUseDelta) -> None:
    card = view.card(e.tool_use_id, e.name)
    card.add_partial(e.partial_json)
    view.body.mark_dirty(card)


def _on_tool_use(view: RunView, e: ev.ToolUse) -> None:
    view.card(e.tool_use_id, e.name).set_input(e.input)


def _on_permission_asked(view: RunView, e: ev.PermissionAsked) -> None:
    view.activity.stop()
    card = view.card(e.tool_use_id, e.name)
    card.started = None
    if card.input != e.input:  # none streamed, or a pre_tool_use hook rewrote it: the input that runs is shown
        card.set_input(e.input)
    if e.preview is not None:
        card.set_preview(e.preview)
    card.set_status("asking for permission")


def _on_permission_denied(view: RunView, e: ev.PermissionDenied) -> None:
    card = view.card(e.tool_use_id, e.name)
    if card.input is None:
        card.set_input(e.input)
    card.deny(e.reason)


def _on_tool_result(view: RunView, e: ev.ToolResult) -> None:
    card = view.card(e.tool_use_id, e.name)
    # The engine's duration (the run alone, not the permission wait): the recorded figure, so a
    # replayed card reads as the live one did.
    card.set_result(e.display if e.display is not None else e.content, e.is_error, e.duration_s)
    view.start_next_tool()


def _on_server_tool_result(view: RunView, e: ev.ServerToolResult) -> None:
    """A tool the API ran itself: its card (made by the streamed input) gets the sources."""
    card = view.card(e.tool_use_id, e.name)
    if card.input is None:
        card.set_input(e.input)
    text = "\n".join(e.sources) if e.error is None else f"{e.name} failed: {e.error}"
    card.set_result(text or "(no sources)", e.error is not None, 0.0)
    card.set_status("run by the API" if e.error is None else f"failed: {e.error}")


def _on_api_request_started(view: RunView, e: ev.ApiRequestStarted) -> None:
    view.begin_request()
    if e.model:
        view.header.update(model=e.model)
    if e.estimated_input_tokens:
        view.header.update(context_tokens=e.estimated_input_tokens, estimated=True)


def _on_retry_scheduled(view: RunView, e: ev.RetryScheduled) -> None:
    view.activity.stop()  # the countdown says what is happening now
    view.schedule_retry(e)


def _on_rate_limit_wait(view: RunView, e: ev.RateLimitWait) -> None:
    view.activity.stop()  # the same countdown as a retry's, worded as a wait, not a failure
    view.schedule_retry(e)


def _on_stream_interrupted(view: RunView, e: ev.StreamInterrupted) -> None:
    view.activity.stop()
    streamed = [p for p in view.body.request_parts if isinstance(p, (TextBlock, ThinkingBlock))]
    if not streamed and e.partial_text:
        block = view.body.stream_part("text", 0)
        block.append(e.partial_text)
        streamed = [block]
    note = error_line(e.error_kind, None, e.message) if e.error_kind or e.message else ""
    for part in streamed:
        part.interrupt(note)
    for card in view.body.request_parts:
        if isinstance(card, ToolCard) and card.input is None:
            card.set_status("interrupted")
    if not streamed:
        view.body.line(f"stream interrupted — {note}", icon="⚠", style=STYLE["interrupted"])
    view.body.close_request()


def _on_api_request_failed(view: RunView, e: ev.ApiRequestFailed) -> None:
    view.activity.stop()
    view.show_failure(e)


def _on_context_truncated(view: RunView, e: ev.ContextTruncated) -> None:
    if e.max_allowed:
        view.header.update(max_allowed=e.max_allowed)
    view.body.line(truncation_line(e.deleted_range, e.keep, e.previous_tokens, e.max_allowed,
                               e.file_read_saving, e.reason), icon="✂", style=STYLE["warn"])


def _on_model_fallback(view: RunView, e: ev.ModelFallback) -> None:
    view.header.update(model=e.to_model)
    view.body.line(f"model fallback: {e.from_model} → {e.to_model} ({e.reason})", icon="↪", style=STYLE["warn"])


def _on_notice(view: RunView, e: ev.Notice) -> None:
    if e.level == "warning":
        view.body.line(e.message, icon="⚠", style=STYLE["warn"])
    else:
        view.body.line(e.message)


def _on_request_completed(view: RunView, e: ev.RequestCompleted) -> None:
    view.run_tools_of_request()
    r = e.record
    if r is None:
        return
    view.records.append(r)
    h = view.header
    h.update(model=r.model or h.model, context_tokens=r.context_tokens, estimated=False,
             max_allowed=r.max_allowed or h.max_allowed, context_window=r.context_window or h.context_window,
             cost=h.cost + (r.cost_usd or 0.0), unpriced=h.unpriced + (r.cost_usd is None))


def _on_done(view: RunView, e: ev.Done) -> None:
    if e.reason == "aborted" and not view.cancelled:
        # ■ or Stop, whichever kernel saw it first: one ending, the short one (running tools
        # marked interrupted, one line with the spend so far; the cell's error line says the rest).
        view.interrupted(e.totals.spent_usd or None, e.totals.spent_unpriced_requests)
        view.done = e
        return
    view.body.close_request()
    view.activity.stop()
    view.done = e
    t = e.totals
    # The header counted the unpriced requests it saw answered; the totals count every one spent,
    # a cut-off attempt's too (a model without prices read "≥ $0.0000" without it).
    unpriced = max(t.spent_unpriced_requests, view.header.unpriced)
    view.header.update(cost=t.spent_usd or view.header.cost, unpriced=unpriced)
    cost = fmt_total_cost(t.spent_usd, unpriced, t.spent_requests)
    # This run's own figures (the table below lists the same requests), then the session's spend.
    run_retries = sum(r.retries for r in view.records)
    answered = len(view.records)
    # A failed or cancelled request has no record, but it was sent (and may be retried): say so.
    counts = f"this run {answered} request(s)" if view.attempted <= answered else \
        f"this run {view.attempted} request(s) attempted, {answered} answered"
    head = "cancelled" if view.cancelled and e.reason == "aborted" else f"done: {e.reason}"
    text = f"{head} — {counts}, {run_retries} retries; session spent {cost}{view.header.recorded_note()}"
    for why in (e.stopped, e.error):
        if why:
            text += f" — {why}"
    ok = e.reason == "end_turn"
    view.body.line(text, icon="■", style=STYLE["muted"] if ok else STYLE["error"])
    if view.show_table and view.records:
        from ...display.tables import RUN_COST, for_display, turns_df

        view.body.add(TableBlock(for_display(turns_df(view.records, RUN_COST)), "API requests of this run"))


HANDLERS: dict[str, Callable[[RunView, Any], None]] = {
    "text_delta": _on_text_delta,
    "thinking_delta": _on_thinking_delta,
    "tool_use_delta": _on_tool_use_delta,
    "tool_use": _on_tool_use,
    "permission_asked": _on_permission_asked,
    "permission_denied": _on_permission_denied,
    "tool_result": _on_tool_result,
    "server_tool_result": _on_server_tool_result,
    "api_request_started": _on_api_request_started,
    "retry_scheduled": _on_retry_scheduled,
    "rate_limit_wait": _on_rate_limit_wait,
    "stream_interrupted": _on_stream_interrupted,
    "api_request_failed": _on_api_request_failed,
    "context_truncated": _on_context_truncated,
    "model_fallback": _on_model_fallback,
    "notice": _on_notice,
    "request_completed": _on_request_completed,
    "done": _on_done,
}

__all__ = ["HANDLERS"]
