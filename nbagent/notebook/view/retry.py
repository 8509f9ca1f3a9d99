"""The agent view's retry pieces: an automatic retry's countdown (**Retry now** / **Cancel**) and
the failed-request card (**Retry** / **Cancel** / *Start new session*).

Threading rule (as in :mod:`.prompts`): click handlers and the programmatic gestures only resolve a
:class:`~nbagent.notebook.waiting.Decision`, call a thread-safe callback or set a flag; widgets
change in ``tick``/``end``/``ask``/``settle``, which the view calls from the agent's event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import ipywidgets as w

from ...display.format import status_text
from ...display.html import esc
from ...engine.contracts import events as ev
from .. import waiting
from .prompts import whole, wrapping_row
from .render import STYLE


class RetryStatus:
    """An automatic retry's countdown with **Retry now** and **Cancel**; for a
    :class:`~nbagent.engine.contracts.events.RateLimitWait`, the wait for the shared rate limit
    ("waiting for the shared rate limit (12 s)"), worded as a wait, not as a failure, with
    **Send now** and **Cancel**."""

    def __init__(self, event: ev.RetryScheduled | ev.RateLimitWait, on_retry_now: Callable[[], object] | None,
                 on_cancel: Callable[[], object] | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.event, self.clock = event, clock
        self._on_retry_now, self._on_cancel = on_retry_now, on_cancel
        self.started = clock()
        self.pressed: str | None = None  # set by click handlers; shown by tick()
        self.outcome: str | None = None
        self._label = w.HTML()
        self.progress = w.FloatProgress(min=0.0, max=max(event.delay_s, 0.001), value=event.delay_s,
                                        bar_style="warning", layout=w.Layout(width="40%"))
        self.is_rate_wait = getattr(event, "kind", "") == "rate_limit_wait"
        self._style = STYLE["muted"] if self.is_rate_wait else STYLE["warn"]
        self.retry_button = w.Button(description="Send now" if self.is_rate_wait else "Retry now", icon="redo",
                                     layout=whole())
        self.cancel_button = w.Button(description="Cancel", button_style="danger", layout=whole())
        self.retry_button.on_click(lambda _b: self.retry_now())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.widget = w.VBox([self._label, w.HBox([self.progress, self.retry_button, self.cancel_button],
                                                               layout=wrapping_row())])
        self.tick()

    def retry_now(self) -> None:
        """Skip the rest of the wait (thread-safe)."""
        if self.pressed is None and self.outcome is None:
            self.pressed = "retry now"
            if self._on_retry_now is not None:
                self._on_retry_now()

    def cancel(self) -> None:
        """Abort the run (thread-safe)."""
        if self.pressed is None and self.outcome is None:
            self.pressed = "cancel"
            if self._on_cancel is not None:
                self._on_cancel()

    def remaining(self) -> float:
        return max(self.event.delay_s - (self.clock() - self.started), 0.0)

    def headline(self) -> str:
        e = self.event
        if isinstance(e, ev.RateLimitWait):  # is_rate_wait
            return f"⏳ {e.headline}"
        return f"⟳ {e.error_kind}{status_text(e.status)}: {e.message} — retry {e.attempt}/{e.max_attempts}"

    def tick(self) -> None:
        """Refresh the countdown (agent loop only)."""
        if self.outcome is not None:
            return
        left = self.remaining()
        self.progress.value = left
        extra = f" — {self.pressed}…" if self.pressed else f" — {'sending' if self.is_rate_wait else 'retry'} in {left:.1f} s"
        self._label.value = f'<div style="{self._style}">{esc(self.headline() + extra)}</div>'
        if self.pressed:
            self.retry_button.disabled = self.cancel_button.disabled = True

    async def run_ticker(self, every: float = 0.2) -> None:
        """Refresh the countdown until the wait ends (a task on the agent's loop)."""
        while self.outcome is None:
            self.tick()
            await asyncio.sleep(every)

    def end(self, outcome: str) -> None:
        """The wait is over (``retrying`` / ``cancelled``): freeze the card."""
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.progress.value = 0.0
        self.retry_button.disabled = self.cancel_button.disabled = True
        self._label.value = f'<div style="{self._style}">{esc(self.headline())} — {esc(outcome)}</div>'

    def plain(self) -> str:
        # Tenths, as the countdown and the turn table's wait column read: the jittered delay printed
        # with ``:g`` read "waited up to 1.81857 s" in every retried cell of a lesson.
        return f"{self.headline()} (waited up to {self.event.delay_s:.1f} s; {self.outcome or self.pressed or 'waiting'})"

    def html(self) -> str:
        return f'<div style="{self._style}">{esc(self.plain())}</div>'


CANCEL_FAILED_TOOLTIP = "Cancel the run: the request failed"
"""The failed-request card's **Cancel** tooltip (``autorun`` presses it by this name when nobody watches)."""


class FailurePrompt:
    """A failed request: the error, and **Retry** / **Cancel** (/ *Start new session*)."""

    def __init__(self, event: ev.ApiRequestFailed, on_new_session: Callable[[], object] | None = None) -> None:
        self.event = event
        self.decision: waiting.Decision[str] = waiting.Decision()
        self.outcome: str | None = None
        self._on_new_session = on_new_session
        self.headline = (f"✗ request failed after {event.attempts} attempt(s): {event.error_kind}"
                         f"{status_text(event.status)}: {event.message}")
        if event.request_id:
            self.headline += f" [request id {event.request_id}]"
        self._label = w.HTML(f'<div style="{STYLE["error"]}">{esc(self.headline)}</div>')
        self._buttons = w.HBox(layout=wrapping_row())  # Retry / Cancel keep their labels in a narrow notebook
        self._status = w.HTML()
        self.retry_button = w.Button(description="Retry", icon="redo", button_style="warning", layout=whole())
        # Its tooltip tells it from the retry countdown's Cancel, for an unattended run to press
        # (``autorun.CANCEL_FAILED``): pressing that one would end an automatic retry that may succeed.
        self.cancel_button = w.Button(description="Cancel", button_style="danger", tooltip=CANCEL_FAILED_TOOLTIP,
                                       layout=whole())
        self.new_session_button = w.Button(description="Start new session", layout=whole())
        self.retry_button.on_click(lambda _b: self.retry())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.new_session_button.on_click(lambda _b: self.new_session())
        self.widget = w.VBox([self._label, self._buttons, self._status])
        self.asking = False

    def ask(self) -> None:
        """Show the buttons and route their clicks (agent coroutine)."""
        self.asking = True
        buttons = [self.retry_button, self.cancel_button]
        if not self.event.can_shorten:
            buttons.append(self.new_session_button)
            self._status.value = (f'<div style="{STYLE["muted"]}">The conversation cannot be shortened further; '
                                  "a new session starts from an empty history.</div>")
        self._buttons.children = tuple(buttons)
        waiting.register_button(self.retry_button.model_id, self.decision, "retry")
        waiting.register_button(self.cancel_button.model_id, self.decision, "cancel")
        waiting.register_button(self.new_session_button.model_id, self.decision, "new session")

    def retry(self) -> bool:
        """Try the request again (thread-safe); ``False`` if already decided."""
        return self.decision.resolve("retry")

    def cancel(self) -> bool:
        """End the turn with the error (thread-safe); ``False`` if already decided."""
        return self.decision.resolve("cancel")

    def new_session(self) -> bool:
        """Cancel, then ask for a fresh session (thread-safe); ``False`` if already decided."""
        return self.decision.resolve("new session")

    def settle(self, outcome: str) -> None:
        """Show the choice and disable the buttons (agent coroutine)."""
        self.outcome = outcome
        waiting.unregister_decision(self.decision)
        for b in (self.retry_button, self.cancel_button, self.new_session_button):
            b.disabled = True
        if outcome == "new session" and self._on_new_session is not None:
            self._on_new_session()
        self._status.value = f'<div style="{STYLE["muted"]}">→ {esc(outcome)}</div>'

    def plain(self) -> str:
        return self.headline + (f"\n  → {self.outcome}" if self.outcome else "")

    def html(self) -> str:
        return f'<div style="{STYLE["error"]}">{esc(self.headline)}</div>' + (
            f'<div style="{STYLE["muted"]}">→ {esc(self.outcome)}</div>' if self.outcome else "")


__all__ = ["FailurePrompt", "RetryStatus"]
