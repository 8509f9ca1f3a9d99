"""Plain-text rendering of engine events, for terminals and scripts (``python -m nbagent.demo``)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .display.format import fmt_total_cost, status_text, terminal_text, truncation_line
from .engine.api_facts.cost import Usage
from .engine.contracts import events as ev


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _request_trouble(event: ev.RetryScheduled | ev.RateLimitWait | ev.StreamInterrupted | ev.ApiRequestFailed) -> str:
    """A wait, a retry or a failure of a request, as one line."""
    if isinstance(event, ev.RetryScheduled):
        retry = f"retry {event.attempt}/{event.max_attempts} in {event.delay_s:g} s"
        return f"\n  ↻ {event.error_kind}{status_text(event.status)}: {event.message} — {retry}\n"
    if isinstance(event, ev.RateLimitWait):
        return f"\n  ⏳ {event.headline}\n"
    if isinstance(event, ev.StreamInterrupted):
        return f"\n  ⚡ stream interrupted ({event.error_kind}); partial output discarded\n"
    return f"\n  ✗ request failed: {event.error_kind}: {event.message}\n"


def format_event(event: ev.Event) -> str | None:
    """One event as terminal text (None for events that print nothing by themselves), its control
    characters marked (:func:`terminal_text`)."""
    text = _format_event(event)
    return terminal_text(text) if text is not None else None


def _format_event(event: ev.Event) -> str | None:
    if isinstance(event, (ev.TextDelta, ev.ThinkingDelta)):
        # A reply's ``\r\n`` split between two deltas: the ``\n`` starts the next one. Marked, the
        # ``\r`` showed ``⟦U+000D⟧`` at the line's end; dropped, a lone one acts on nothing either.
        return event.text[:-1] if event.text.endswith("\r") else event.text
    if isinstance(event, ev.ToolUse):
        return f"\n  ▶ {event.name} {_short(event.input)}\n"
    if isinstance(event, ev.PermissionAsked):
        return f"  ? permission asked for {event.name}\n"
    if isinstance(event, ev.PermissionDenied):
        return f"  ✗ denied {event.name}: {event.reason}\n"
    if isinstance(event, ev.ToolResult):
        mark = "✗" if event.is_error else "✓"
        return f"  {mark} {event.name} → {_short(event.content)}\n"
    if isinstance(event, (ev.RetryScheduled, ev.RateLimitWait, ev.StreamInterrupted, ev.ApiRequestFailed)):
        return _request_trouble(event)
    if isinstance(event, ev.ContextTruncated):
        return "\n  ✂ " + truncation_line(event.deleted_range, event.keep, event.previous_tokens, event.max_allowed,
                                        event.file_read_saving, event.reason) + "\n"
    if isinstance(event, ev.ModelFallback):
        return f"\n  ⇄ model {event.from_model} → {event.to_model} ({event.reason})\n"
    if isinstance(event, ev.Notice):
        return f"[{event.level}] {event.message}\n"
    if isinstance(event, ev.RequestCompleted) and event.record is not None:
        r = event.record
        cost = "n/a" if r.cost_usd is None else f"${r.cost_usd:.4f}"
        return f"\n  · request {r.request}: {_tokens(r.usage)}, {cost}, stop={r.stop_reason}\n"
    if isinstance(event, ev.Done):
        t = event.totals
        extra = f" ({event.error or event.stopped})" if event.error or event.stopped else ""
        # Every spent request without prices (a cut-off attempt's, a rolled-back one's): the history's
        # count alone read "≥ $0.0000" of an unknown spend. The max: a Done saved before the field.
        unpriced = max(t.spent_unpriced_requests, t.unpriced_requests)
        return f"\n■ done: {event.reason}{extra} — session spent " \
               f"{fmt_total_cost(t.spent_usd, unpriced, t.spent_requests)} in {t.spent_requests} requests\n"
    if isinstance(event, ev.ServerToolResult):
        found = f"{len(event.sources)} source(s)" if event.error is None else f"failed: {event.error}"
        return f"\n  ◆ {event.name} (run by the API) {_short(event.input)} → {found}\n" + \
            "".join(f"    {s}\n" for s in event.sources[:10])
    return None


def _tokens(usage: Usage) -> str:
    """``991 in / 18 out``, with the cache's parts of the prompt where there are any: the API's
    ``input_tokens`` leaves them out, and "0 in / 21 out, $0.0029" (the demo's second request, a
    1,062-token cache write) read as a price for 21 tokens."""
    parts = [f"{usage.input_tokens:,} in"]
    if usage.cache_creation_input_tokens:
        parts.append(f"{usage.cache_creation_input_tokens:,} cache write")
    if usage.cache_read_input_tokens:
        parts.append(f"{usage.cache_read_input_tokens:,} cache read")
    return f"{' + '.join(parts)} / {usage.output_tokens:,} out"


def print_event(event: ev.Event, file: TextIO | None = None) -> None:
    """Write :func:`format_event` output, flushing so streaming is visible."""
    text = format_event(event)
    if text:
        out = file or sys.stdout
        out.write(text)
        out.flush()
