"""The interactive pieces of the agent view: the permission prompt, the retry countdown and the
failed-request card.

Threading rule: click handlers (which may run on the shell-channel thread or a subshell) and the
programmatic gestures (``allow()``, ``retry_now()``, …) only resolve a
:class:`~nbagent.notebook.waiting.Decision`, call a thread-safe callback, or set a flag. Widgets
change in ``settle``/``tick``/``end``/``ask``, which the view calls from the agent's event loop.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import ipywidgets as w

from ..engine.permissions import Allow, Deny
from . import waiting
from .view_render import STYLE, esc

DEFAULT_DENY_REASON = "The user denied this tool call."


class PermissionPrompt:
    """Allow / Allow always (this session) / Deny (+ reason), resolved once from any thread."""

    def __init__(self, tool_name: str, tool_input: Any, reason_asked: str = "") -> None:
        self.tool_name = tool_name
        self.decision: waiting.Decision[Allow | Deny] = waiting.Decision()
        self.outcome: Allow | Deny | None = None
        ask = f"Allow <b>{esc(tool_name)}</b> to run?"
        if reason_asked:
            ask += f' <span style="{STYLE["muted"]}">({esc(reason_asked)})</span>'
        self._question = w.HTML(ask)
        self.allow_button = w.Button(description="Allow", button_style="success", icon="check")
        self.always_button = w.Button(description="Allow always (this session)", button_style="info",
                                      layout=w.Layout(width="auto"))
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times")
        self.reason = w.Text(placeholder="reason for denying (optional, sent to the model)",
                             layout=w.Layout(width="50%"))
        self._status = w.HTML()
        self.allow_button.on_click(lambda _b: self.allow())
        self.always_button.on_click(lambda _b: self.allow_always())
        self.deny_button.on_click(lambda _b: self.deny())
        self.widget = w.VBox([
            self._question,
            w.HBox([self.allow_button, self.always_button, self.deny_button, self.reason]),
            self._status,
        ])
        # The kernel's fast path resolves these clicks on the shell-channel thread.
        waiting.register_button(self.allow_button.model_id, self.decision, Allow())
        waiting.register_button(self.always_button.model_id, self.decision, Allow(always=True))
        waiting.register_button(self.deny_button.model_id, self.decision, self._deny_value, factory=True)
        waiting.register_text(self.reason.model_id)

    # Gestures, callable from any thread (like Button.click()).
    def allow(self) -> bool:
        """Allow this call; ``False`` if already decided."""
        return self.decision.resolve(Allow())

    def allow_always(self) -> bool:
        """Allow this tool for the rest of the session; ``False`` if already decided."""
        return self.decision.resolve(Allow(always=True))

    def deny(self, reason: str | None = None) -> bool:
        """Deny this call (``reason`` defaults to the reason field); ``False`` if already decided."""
        return self.decision.resolve(Deny(reason) if reason else self._deny_value())

    def _deny_value(self) -> Deny:
        typed = waiting.observed_text(self.reason.model_id) or self.reason.value
        return Deny(typed.strip() or DEFAULT_DENY_REASON)

    @property
    def pending(self) -> bool:
        return not self.decision.resolved

    def settle(self, outcome: Allow | Deny | None, note: str = "") -> None:
        """Show the outcome and disable the controls (agent coroutine only)."""
        self.outcome = outcome
        waiting.unregister_decision(self.decision)
        waiting.unregister_text(self.reason.model_id)
        for control in (self.allow_button, self.always_button, self.deny_button, self.reason):
            control.disabled = True
        self._status.value = f'<div style="{self._style()}">{esc(self.outcome_text(note))}</div>'

    def _style(self) -> str:
        return STYLE["ok"] if isinstance(self.outcome, Allow) else STYLE["error"]

    def outcome_text(self, note: str = "") -> str:
        o = self.outcome
        if isinstance(o, Allow):
            return "✓ allowed always (this session)" if o.always else "✓ allowed"
        if isinstance(o, Deny):
            return f"✗ denied: {o.reason}"
        return f"✗ no decision ({note or 'aborted'})"

    def plain(self) -> str:
        if self.outcome is None and self.pending:
            return f"? permission asked: {self.tool_name}"
        return f"permission: {self.outcome_text()}"

    def html(self) -> str:
        return f'<div style="{self._style()}">{esc(self.plain())}</div>'


class RetryStatus:
    """An automatic retry's countdown with **Retry now** and **Cancel**."""

    def __init__(self, event: Any, on_retry_now: Callable[[], Any] | None, on_cancel: Callable[[], Any] | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.event, self.clock = event, clock
        self._on_retry_now, self._on_cancel = on_retry_now, on_cancel
        self.started = clock()
        self.pressed: str | None = None  # set by click handlers; shown by tick()
        self.outcome: str | None = None
        self._label = w.HTML()
        self.progress = w.FloatProgress(min=0.0, max=max(event.delay_s, 0.001), value=event.delay_s,
                                        bar_style="warning", layout=w.Layout(width="40%"))
        self.retry_button = w.Button(description="Retry now", icon="redo")
        self.cancel_button = w.Button(description="Cancel", button_style="danger")
        self.retry_button.on_click(lambda _b: self.retry_now())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.widget = w.VBox([self._label, w.HBox([self.progress, self.retry_button, self.cancel_button])])
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
        code = f" ({e.status})" if e.status is not None else ""
        return f"⟳ {e.error_kind}{code}: {e.message} — retry {e.attempt}/{e.max_attempts}"

    def tick(self) -> None:
        """Refresh the countdown (agent loop only)."""
        if self.outcome is not None:
            return
        left = self.remaining()
        self.progress.value = left
        extra = f" — {self.pressed}…" if self.pressed else f" in {left:.1f} s"
        self._label.value = f'<div style="{STYLE["warn"]}">{esc(self.headline() + extra)}</div>'
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
        self._label.value = f'<div style="{STYLE["warn"]}">{esc(self.headline())} — {esc(outcome)}</div>'

    def plain(self) -> str:
        return f"{self.headline()} (waited up to {self.event.delay_s:g} s; {self.outcome or self.pressed or 'waiting'})"

    def html(self) -> str:
        return f'<div style="{STYLE["warn"]}">{esc(self.plain())}</div>'


class FailurePrompt:
    """A failed request: the error, and **Retry** / **Cancel** (/ *Start new session*)."""

    def __init__(self, event: Any, on_new_session: Callable[[], Any] | None = None) -> None:
        self.event = event
        self.decision: waiting.Decision[str] = waiting.Decision()
        self.outcome: str | None = None
        self._on_new_session = on_new_session
        code = f" ({event.status})" if event.status is not None else ""
        self.headline = f"✗ request failed after {event.attempts} attempt(s): {event.error_kind}{code}: {event.message}"
        if event.request_id:
            self.headline += f" [request id {event.request_id}]"
        self._label = w.HTML(f'<div style="{STYLE["error"]}">{esc(self.headline)}</div>')
        self._buttons = w.HBox()
        self._status = w.HTML()
        self.retry_button = w.Button(description="Retry", icon="redo", button_style="warning")
        self.cancel_button = w.Button(description="Cancel", button_style="danger")
        self.new_session_button = w.Button(description="Start new session", layout=w.Layout(width="auto"))
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


__all__ = ["PermissionPrompt", "RetryStatus", "FailurePrompt", "DEFAULT_DENY_REASON"]
