"""``AgentView``: renders the engine's event stream with stock ipywidgets (no custom JS).

``view.handle(event)`` is the single entry point for events; ``ask_permission`` and
``ask_api_failure`` are the two questions the loop can ask the user. Widgets change only from the
event loop that runs the agent (``handle``, the two ``ask_*`` coroutines and the retry countdown
task); click handlers only resolve decisions or call the thread-safe callbacks the view was given.

Every output also has text/plain and static HTML faces: ``transcript()`` / ``static_html()``, and
``finish()`` puts both into the view's display output (next to the widget view), so nbconvert,
GitHub and terminals show a readable transcript.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Literal

import ipywidgets as w

from ..engine import events as ev
from ..engine.events import Event, TurnRecord
from ..engine.permissions import Allow, Deny
from . import waiting
from .view_parts import Line, TableBlock, TextBlock, ThinkingBlock, ToolCard
from .view_prompts import FailurePrompt, PermissionPrompt, RetryStatus
from .view_render import STYLE, error_line, esc, fmt_tokens, fmt_usd, truncation_line

STREAM_KINDS = frozenset({"text_delta", "thinking_delta", "tool_use_delta"})
MIN_INTERVAL = 0.05  # at most 20 stream updates per second


class AgentView:
    """The live view of one agent run (one ``%%agent`` cell)."""

    def __init__(
        self,
        *,
        model: str = "",
        provider: str = "simulated",
        context_window: int | None = None,
        max_allowed: float | None = None,
        session_cost: float = 0.0,
        on_retry_now: Callable[[], Any] | None = None,
        on_cancel: Callable[[], Any] | None = None,
        on_new_session: Callable[[], Any] | None = None,
        abort: asyncio.Event | None = None,
        show_table: bool = True,
        min_interval: float = MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model, self.provider = model, provider
        self.context_window, self.max_allowed = context_window, max_allowed
        self.context_tokens: int | None = None
        self.context_estimated = False
        self.session_cost = session_cost
        self.on_retry_now, self.on_cancel, self.on_new_session = on_retry_now, on_cancel, on_new_session
        self.abort, self.show_table = abort, show_table
        self.min_interval, self.clock = min_interval, clock
        self.records: list[TurnRecord] = []
        self.parts: list[Any] = []
        self.stream_updates = 0  # widget pushes of streamed content (≤ 1 per min_interval)
        self.done: ev.Done | None = None
        self.finished = False
        self._stream: dict[tuple[str, int], TextBlock | ThinkingBlock] = {}
        self._request_parts: list[Any] = []
        self._cards: dict[str, ToolCard] = {}
        self._dirty: list[Any] = []
        self._last_push = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._prompts: list[PermissionPrompt] = []
        self._failures: list[FailurePrompt] = []
        self._retries: list[RetryStatus] = []
        self._ticker: asyncio.Task[None] | None = None
        self._handle: Any = None
        self._title = w.HTML()
        self.gauge = w.IntProgress(min=0, max=max(int(context_window or 1), 1), value=0,
                                   layout=w.Layout(width="30%"))
        self._gauge_label = w.HTML()
        self._cost = w.HTML()
        self.header = w.HBox([self._title, self.gauge, self._gauge_label, self._cost],
                             layout=w.Layout(align_items="center", grid_gap="8px"))
        self.body = w.VBox()
        self.widget = w.VBox([self.header, self.body])
        self._render_header()

    # --- the public surface -------------------------------------------------------------------

    @property
    def permission(self) -> PermissionPrompt:
        """The latest permission prompt (``view.permission.allow()`` etc.)."""
        if not self._prompts:
            raise LookupError("no permission prompt has been shown yet")
        return self._prompts[-1]

    @property
    def failure(self) -> FailurePrompt:
        """The latest failed-request card (``view.failure.retry()`` / ``.cancel()``)."""
        if not self._failures:
            raise LookupError("no request has failed yet")
        return self._failures[-1]

    @property
    def retry_status(self) -> RetryStatus:
        """The latest retry countdown (``view.retry_status.retry_now()`` / ``.cancel()``)."""
        if not self._retries:
            raise LookupError("no retry has been scheduled yet")
        return self._retries[-1]

    def handle(self, event: Event) -> None:
        """Render one engine event (call from the agent coroutine)."""
        kind = event.kind
        if kind not in STREAM_KINDS:
            self.flush()
        if kind != "retry_scheduled" and kind != "notice":
            self._end_retry("cancelled" if kind == "done" and event.reason == "aborted" else "retrying")  # type: ignore[union-attr]
        getattr(self, "_on_" + kind)(event)

    async def ask_permission(self, tool_name: str, tool_input: Any, request: Any = None) -> Allow | Deny:
        """Show a permission prompt for a tool call and wait for the user's answer.

        A ``can_use_tool`` callback. An abort (the view's ``abort`` event) before a decision
        denies the call; a kernel interrupt (``CancelledError``) propagates after the prompt is
        closed.
        """
        tool_use_id = getattr(request, "tool_use_id", "") or f"ask-{len(self._prompts)}"
        prompt = PermissionPrompt(tool_name, tool_input, getattr(request, "reason_asked", ""))
        card = self._card(tool_use_id, tool_name)
        if card.input is None:
            card.set_input(tool_input)
        card.attach_prompt(prompt)
        self._prompts.append(prompt)
        settled = False
        try:
            outcome = await waiting.wait_for_decision(prompt.decision, abort=self.abort)
            prompt.settle(outcome)
            settled = True
            card.set_status("allowed" if isinstance(outcome, Allow) else "denied")
            return outcome
        except waiting.WaitAborted:
            prompt.settle(None, "aborted")
            settled = True
            card.set_status("aborted")
            return Deny("The run was aborted before the user decided.")
        finally:
            if not settled:  # interrupted: close the prompt, let the CancelledError go on
                prompt.settle(None, "interrupted")
                card.set_status("interrupted")

    async def ask_api_failure(self, event: ev.ApiRequestFailed) -> Literal["retry", "cancel"]:
        """Offer **Retry** / **Cancel** (and *Start new session*) for a failed request.

        An ``on_api_failure`` callback; *Start new session* answers ``"cancel"`` and calls the
        view's ``on_new_session``.
        """
        prompt = next((f for f in reversed(self._failures) if f.event is event and f.outcome is None), None)
        if prompt is None:
            prompt = self._new_failure(event)
        prompt.ask()
        choice = "interrupted"
        try:
            choice = await waiting.wait_for_decision(prompt.decision, abort=self.abort)
        except waiting.WaitAborted:
            choice = "cancel"
        finally:
            prompt.settle(choice)
        return "retry" if choice == "retry" else "cancel"

    def flush(self) -> None:
        """Send pending stream updates now (the last update is never dropped)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._dirty:
            for part in self._dirty:
                if isinstance(part, ToolCard):
                    part.push_partial()
                else:
                    part.push()
            self._dirty.clear()
            self.stream_updates += 1
            self._last_push = self.clock()

    def tick(self) -> None:
        """Refresh the retry countdown (the view's ticker task calls this every 0.2 s)."""
        if self._retries:
            self._retries[-1].tick()

    def transcript(self) -> str:
        """The run as plain text (what terminals and nbconvert's text exporters show)."""
        return "\n".join([self._header_plain(), *(p.plain() for p in self.parts)])

    def static_html(self) -> str:
        """The run as static HTML (no widgets needed)."""
        body = "".join(p.html() for p in self.parts)
        return (f'<div class="nbagent-transcript" style="font-family:sans-serif">'
                f'<div style="{STYLE["muted"]}">{esc(self._header_plain())}</div>{body}</div>')

    def display(self) -> Any:
        """Display the live view (with fallbacks) and remember the handle for :meth:`finish`."""
        from IPython.display import display

        self._handle = display(self, display_id=True)
        return self._handle

    def finish(self) -> dict[str, str]:
        """Flush, close the run and publish the final fallbacks; returns the plain/HTML bundle.

        If the view was shown with :meth:`display`, its output is updated in place (widget view +
        text/plain transcript + static HTML), so live front-ends keep the widgets and static
        renderers get the transcript; otherwise a ``display_data`` with the two is published.
        """
        self.flush()
        self._end_retry("stopped")
        bundle = {"text/plain": self.transcript(), "text/html": self.static_html()}
        if self.finished:
            return bundle
        self.finished = True
        from IPython import get_ipython

        if get_ipython() is None:  # plain Python: nothing to publish to; the bundle is returned
            return bundle
        if self._handle is not None:
            self._handle.update(self)
        else:
            from IPython.display import display

            display(bundle, raw=True)
        return bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = self.transcript()
        data["text/html"] = self.static_html()
        return data

    # --- header ---------------------------------------------------------------------------------

    def _header_plain(self) -> str:
        return f"nbagent · {self.model or '?'} · {self.provider} · {self._gauge_text()} · cost {fmt_usd(self.session_cost)}"

    def _gauge_text(self) -> str:
        tokens = "—" if self.context_tokens is None else ("~" if self.context_estimated else "") + fmt_tokens(self.context_tokens)
        text = f"context {tokens} / {fmt_tokens(self.max_allowed)} max / {fmt_tokens(self.context_window)} window"
        if self.context_tokens is not None and self.max_allowed:
            text += f" ({100 * self.context_tokens / self.max_allowed:.1f}% of max)"
        return text

    def _render_header(self) -> None:
        self._title.value = f"<b>{esc(self.model or '?')}</b> <span style='{STYLE['muted']}'>{esc(self.provider)}</span>"
        if self.context_window:
            self.gauge.max = int(self.context_window)
        self.gauge.value = min(int(self.context_tokens or 0), self.gauge.max)
        ratio = (self.context_tokens or 0) / self.max_allowed if self.max_allowed else 0.0
        self.gauge.bar_style = "danger" if ratio >= 1 else "warning" if ratio >= 0.8 else "success"
        self._gauge_label.value = f"<span style='{STYLE['muted']}'>{esc(self._gauge_text())}</span>"
        self._cost.value = f"<b>{esc(fmt_usd(self.session_cost))}</b>"

    # --- parts ------------------------------------------------------------------------------------

    def _add(self, part: Any) -> Any:
        self.parts.append(part)
        self.body.children = (*self.body.children, part.widget)
        return part

    def _line(self, text: str, icon: str = "ℹ", style: str = STYLE["muted"]) -> None:
        self._add(Line(text, icon=icon, style=style))

    def _card(self, tool_use_id: str, name: str) -> ToolCard:
        card = self._cards.get(tool_use_id)
        if card is None:
            card = self._cards[tool_use_id] = self._add(ToolCard(tool_use_id, name))
            self._request_parts.append(card)
        return card

    def _stream_part(self, kind: str, index: int) -> TextBlock | ThinkingBlock:
        part = self._stream.get((kind, index))
        if part is None:
            part = self._add(TextBlock() if kind == "text" else ThinkingBlock())
            self._stream[(kind, index)] = part
            self._request_parts.append(part)
        return part

    def _close_request(self) -> None:
        self.flush()
        self._stream.clear()
        self._request_parts = []

    def _mark_dirty(self, part: Any) -> None:
        if part not in self._dirty:
            self._dirty.append(part)
        wait = self.min_interval - (self.clock() - self._last_push)
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            try:  # the trailing update, in case the stream pauses (same loop: same thread)
                self._timer = asyncio.get_running_loop().call_later(wait, self.flush)
            except RuntimeError:
                pass  # no loop: the next non-stream event or finish() flushes

    def _new_failure(self, event: ev.ApiRequestFailed) -> FailurePrompt:
        prompt = self._add(FailurePrompt(event, self.on_new_session))
        self._failures.append(prompt)
        return prompt

    def _end_retry(self, outcome: str) -> None:
        if self._retries and self._retries[-1].outcome is None:
            status = self._retries[-1]
            status.end("cancelled" if status.pressed == "cancel" else outcome)
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    async def _tick_forever(self, status: RetryStatus) -> None:
        while status.outcome is None:
            status.tick()
            await asyncio.sleep(0.2)

    # --- one method per event kind ---------------------------------------------------------------

    def _on_text_delta(self, e: ev.TextDelta) -> None:
        part = self._stream_part("text", e.index)
        part.append(e.text)
        self._mark_dirty(part)

    def _on_thinking_delta(self, e: ev.ThinkingDelta) -> None:
        part = self._stream_part("thinking", e.index)
        part.append(e.text)
        self._mark_dirty(part)

    def _on_tool_use_delta(self, e: ev.ToolUseDelta) -> None:
        card = self._card(e.tool_use_id, e.name)
        card.add_partial(e.partial_json)
        self._mark_dirty(card)

    def _on_tool_use(self, e: ev.ToolUse) -> None:
        self._card(e.tool_use_id, e.name).set_input(e.input)

    def _on_permission_asked(self, e: ev.PermissionAsked) -> None:
        card = self._card(e.tool_use_id, e.name)
        if card.input is None:
            card.set_input(e.input)
        card.set_status("asking for permission")

    def _on_permission_denied(self, e: ev.PermissionDenied) -> None:
        card = self._card(e.tool_use_id, e.name)
        if card.input is None:
            card.set_input(e.input)
        card.deny(e.reason)

    def _on_tool_result(self, e: ev.ToolResult) -> None:
        card = self._card(e.tool_use_id, e.name)
        card.set_result(e.display if e.display is not None else e.content, e.is_error, e.duration_s)

    def _on_api_request_started(self, e: ev.ApiRequestStarted) -> None:
        self._close_request()
        if e.model:
            self.model = e.model
        if e.estimated_input_tokens:
            self.context_tokens, self.context_estimated = e.estimated_input_tokens, True
        self._render_header()

    def _on_retry_scheduled(self, e: ev.RetryScheduled) -> None:
        self._end_retry("retrying")
        status = self._add(RetryStatus(e, self.on_retry_now, self.on_cancel, clock=self.clock))
        self._retries.append(status)
        try:
            self._ticker = asyncio.get_running_loop().create_task(self._tick_forever(status))
        except RuntimeError:
            self._ticker = None

    def _on_stream_interrupted(self, e: ev.StreamInterrupted) -> None:
        streamed = [p for p in self._request_parts if isinstance(p, (TextBlock, ThinkingBlock))]
        if not streamed and e.partial_text:
            block = self._stream_part("text", 0)
            block.append(e.partial_text)
            streamed = [block]
        note = error_line(e.error_kind, None, e.message) if e.error_kind or e.message else ""
        for part in streamed:
            part.interrupt(note)
        for part in self._request_parts:
            if isinstance(part, ToolCard) and part.input is None:
                part.set_status("interrupted")
        if not streamed:
            self._line(f"stream interrupted — {note}", icon="⚠", style=STYLE["interrupted"])
        self._close_request()

    def _on_api_request_failed(self, e: ev.ApiRequestFailed) -> None:
        self._new_failure(e)

    def _on_context_truncated(self, e: ev.ContextTruncated) -> None:
        if e.max_allowed:
            self.max_allowed = e.max_allowed
        self._line(truncation_line(e.deleted_range, e.keep, e.previous_tokens, e.max_allowed,
                                   e.file_read_saving, e.reason), icon="✂", style=STYLE["warn"])
        self._render_header()

    def _on_model_fallback(self, e: ev.ModelFallback) -> None:
        self.model = e.to_model
        self._line(f"model fallback: {e.from_model} → {e.to_model} ({e.reason})", icon="↪", style=STYLE["warn"])
        self._render_header()

    def _on_notice(self, e: ev.Notice) -> None:
        if e.level == "warning":
            self._line(e.message, icon="⚠", style=STYLE["warn"])
        else:
            self._line(e.message)

    def _on_turn_completed(self, e: ev.TurnCompleted) -> None:
        self._close_request()
        r = e.record
        if r is None:
            return
        self.records.append(r)
        self.model = r.model or self.model
        self.context_tokens, self.context_estimated = r.context_tokens, False
        self.max_allowed, self.context_window = r.max_allowed or self.max_allowed, r.context_window or self.context_window
        self.session_cost += r.cost_usd or 0.0
        self._render_header()

    def _on_done(self, e: ev.Done) -> None:
        self._close_request()
        self.done = e
        self.session_cost = e.totals.cost_usd or self.session_cost
        self._render_header()
        t = e.totals
        text = f"done: {e.reason} — {t.requests} request(s), {t.retries} retries, session cost {fmt_usd(t.cost_usd)}"
        if e.error:
            text += f" — {e.error}"
        ok = e.reason == "end_turn"
        self._line(text, icon="■", style=STYLE["muted"] if ok else STYLE["error"])
        if self.show_table and self.records:
            from .tables import turns_df

            self._add(TableBlock(turns_df(self.records), "API requests of this run"))


__all__ = ["AgentView"]
