"""The agent view's header: model, provider, the context gauge and what the session spent."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ...display.format import fmt_tokens, fmt_total_cost, fmt_usd
from ...display.html import esc
from .render import STYLE


class Header:
    """Model, provider, the context gauge (last request's tokens / max allowed / window) and cost."""

    def __init__(self, model: str, provider: str, context_window: int | None, max_allowed: float | None,
                 cost: float, permission_mode: str = "default", context_policy: str = "",
                 recorded_spend: float = 0.0, unpriced: int = 0) -> None:
        self.model, self.provider, self.cost = model, provider, cost
        self.recorded_spend = recorded_spend  # of ``cost``: spent when a loaded record's turns ran
        # Requests of the session without a price (its earlier prompts' and this run's): the cost is then
        # a lower bound, or unknown. Counting this run's only, the next prompt's header read "$0.0000".
        self.unpriced = unpriced
        self.context_policy = context_policy  # the context policy in force ('' when not told)
        self.permission_mode = permission_mode
        self.context_window, self.max_allowed = context_window, max_allowed
        self.context_tokens: int | None = None
        self.estimated = False  # a tiktoken estimate before the request, not the API's usage
        self._title = w.HTML()
        # A narrow notebook wraps the row rather than squeezing each part into a column of its own:
        # the model id broke at its hyphens and the gauge shrank to a few pixels.
        self.gauge = w.IntProgress(min=0, max=max(int(context_window or 1), 1), value=0,
                                   layout=w.Layout(width="30%", min_width="120px"))
        self._label = w.HTML()
        self._cost = w.HTML()
        self.widget = w.HBox([self._title, self.gauge, self._label, self._cost],
                             layout=w.Layout(align_items="center", grid_gap="0 8px", flex_flow="row wrap"))
        self.render()

    def update(self, **changes: Any) -> None:
        for name, value in changes.items():
            setattr(self, name, value)
        self.render()

    def gauge_text(self) -> str:
        tokens = "—" if self.context_tokens is None else ("~" if self.estimated else "") + fmt_tokens(self.context_tokens)
        text = f"context {tokens} / {fmt_tokens(self.max_allowed)} max / {fmt_tokens(self.context_window)} window"
        if self.context_tokens is not None and self.max_allowed:
            text += f" ({100 * self.context_tokens / self.max_allowed:.1f}% of max)"
        return text

    def render(self) -> None:
        policy = f" · context {esc(self.context_policy)}" if self.context_policy else ""
        self._title.value = (f"{self._model_name()} <span style='{STYLE['muted']}'>{esc(self.provider)}"
                             f"{policy}</span>" + self._mode_badge())
        if self.context_window:
            self.gauge.max = int(self.context_window)
        self.gauge.value = min(int(self.context_tokens or 0), self.gauge.max)
        ratio = (self.context_tokens or 0) / self.max_allowed if self.max_allowed else 0.0
        self.gauge.bar_style = "danger" if ratio >= 1 else "warning" if ratio >= 0.8 else "success"
        self._label.value = f"<span style='{STYLE['muted']}'>{esc(self.gauge_text())}</span>"
        # "spent", as the done line and %agent cost name it: rolled-back requests included, unlike
        # the "cumulative cost (session)" of %agent history, which sums the current history's rows.
        self._cost.value = (f"session spent <b>{esc(self.cost_text())}</b>"
                            f"<span style='{STYLE['muted']}'>{esc(self.recorded_note())}</span>")

    def _model_name(self) -> str:
        """The model id in bold, on one line (it is copied into ``--model``); an id longer than a
        narrow notebook's row (an ARN) breaks where it must rather than running out of sight."""
        model = self.model or "?"
        wrap = "white-space:nowrap" if len(model) <= MODEL_ON_ONE_LINE else "overflow-wrap:anywhere"
        return f"<b style='{wrap}'>{esc(model)}</b>"

    def _mode_badge(self) -> str:
        """Bypass is shown in red on every run: every tool then runs without asking."""
        if self.permission_mode == "bypass":
            return (f" <b style='{STYLE['error']};border:1px solid currentColor;border-radius:3px;padding:0 4px'>"
                    "BYPASS: every tool runs without asking</b>")
        if self.permission_mode != "default":
            return f" <span style='{STYLE['warn']}'>{esc(MODE_LABELS.get(self.permission_mode, self.permission_mode))}</span>"
        return ""

    def plain(self) -> str:
        mode = "" if self.permission_mode == "default" else f" · {MODE_LABELS.get(self.permission_mode, '')}"
        policy = f" · context {self.context_policy}" if self.context_policy else ""
        return (f"nbagent · {self.model or '?'} · {self.provider}{policy}{mode} · {self.gauge_text()} · "
                f"session spent {self.cost_text()}{self.recorded_note()}")

    def cost_text(self) -> str:
        """What the session spent; with requests nobody could price, never a plain $0.0000."""
        if not self.unpriced:
            return fmt_usd(self.cost)
        return fmt_total_cost(self.cost, self.unpriced, self.unpriced + (1 if self.cost else 0))


    def recorded_note(self) -> str:
        """What of the session's cost was spent before this kernel, when its replayed turns were
        recorded: the first live turn after a Restart & Run All showed the whole record's spend as
        the session's, with no word of where it came from."""
        if not self.recorded_spend:
            return ""
        return f" ({fmt_usd(self.recorded_spend)} of it spent before this kernel, when the record's turns ran)"


MODEL_ON_ONE_LINE = 40  # characters: about 300 pixels, what the narrowest notebook's row holds

MODE_LABELS = {"accept_edits": "accept edits", "plan": "plan mode (read-only tools)",
               "bypass": "BYPASS: every tool runs without asking"}


__all__ = ["Header"]
