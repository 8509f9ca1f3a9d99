"""What the view shows while nothing streams: the wait for the first token and a running tool.

A stalled request or a long tool call used to leave the cell showing only its header. The
:class:`Activity` line says what the run is waiting for and for how long, with **Stop**; the
view's ticker refreshes it (and the running tool card) from the agent's loop.
"""

from __future__ import annotations

import time
from typing import Callable

import ipywidgets as w

from ...display.html import esc
from .. import waiting
from .prompts import whole
from .render import STYLE

TICK_S = 0.5


class Activity:
    """One line: "waiting for the first token (12 s)" / "running python (4 s)", and Stop (aborts the run)."""

    def __init__(self, on_cancel: Callable[[], object] | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.what: str | None = None
        self.since = 0.0
        self._on_cancel = on_cancel
        self._label = w.HTML()
        # As wide as its label: beside a long "waiting for the first token (12 s)" it read "St…".
        self.cancel_button = w.Button(description="Stop", button_style="warning", icon="stop", layout=whole())
        self.cancel_button.on_click(lambda _b: self.cancel())
        # The nbagent kernel's fast path: Stop acts even while the model's code blocks the main thread.
        waiting.register_action(self.cancel_button.model_id, self.cancel)
        self.widget = w.HBox([self._label, self.cancel_button], layout=w.Layout(align_items="center"))
        self.widget.layout.display = "none"
        self.cancel_button.disabled = True

    def start(self, what: str) -> None:
        """Show ``what`` with a clock starting now (agent loop only)."""
        if self.what != what:
            self.what, self.since = what, self.clock()
        self.widget.layout.display = "flex"
        self.cancel_button.disabled = self._on_cancel is None
        self.tick()

    def stop(self) -> None:
        """Hide the line (something is visibly happening again, or the run ended)."""
        self.what = None
        self.widget.layout.display = "none"
        self.cancel_button.disabled = True  # hidden: not a Cancel anyone (or any driver) can press

    def elapsed(self) -> float:
        return self.clock() - self.since

    def text(self) -> str:
        return f"{self.what} ({self.elapsed():.0f} s)" if self.what else ""

    def tick(self) -> None:
        if self.what is not None:
            self._label.value = f'<span style="{STYLE["muted"]}">⏳ {esc(self.text())}</span>'

    def close(self) -> None:
        """The run is over: hide the line and drop both routes of Stop (the fast path's, and the
        button's own: a click the front-end sent before it saw the button disabled still arrives,
        and the session's Stop would end the run of the cell after this one)."""
        self.stop()
        self._on_cancel = None
        waiting.unregister_action(self.cancel_button.model_id)

    def cancel(self) -> None:
        """Abort the run (thread-safe: it only calls the abort callback)."""
        if self._on_cancel is not None:
            self._on_cancel()


__all__ = ["Activity", "TICK_S"]
