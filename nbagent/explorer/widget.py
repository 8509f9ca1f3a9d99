"""The truncation explorer (``%agent explore``, ``nbagent.explore()``): watch context strategies side
by side on a synthetic conversation or on the live session's history.

Everything shown comes from :mod:`.simulate`, which replays the conversation request by request
through the engine's own context functions; this module only holds the controls and lays out the
pictures from :mod:`.render` (the live session is read by :mod:`.live`). :class:`Explorer` is an ipywidgets view whose
``_repr_mimebundle_`` also carries text/plain and static HTML (tables, strips, charts), so an
executed notebook shows the results where widgets do not render (GitHub, nbconvert)::

    ex = nbagent.explore(window=8_000)            # synthetic conversation, all strategies
    ex.results["cline"].table()                   # one row per request (pandas)
    nbagent.explore(session=nbagent.session())    # replay the live session's history
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..display import theme
from ..display.format import fmt_range
from ..display.html import esc
from ..display.tables import html_table, panel_table
from .live import LiveSession, live_source
from .render import (
    STRIP_TEXT,
    chart_html,
    legend_html,
    legend_text,
    request_html,
    request_text,
    strategy_html,
    strip_svg,
    strip_text,
    summary_df,
    table_html,
)
from .simulate import (
    STRATEGIES,
    STRATEGY_LABELS,
    SimulateOptions,
    SimulationResult,
    Strategy,
    Summarize,
    simulate_all,
)
from .synth import ConversationShape, synthetic_history

if TYPE_CHECKING:  # pragma: no cover
    import ipywidgets as W
    import pandas as pd

    from ..engine.contracts.messages import Message

__all__ = ["DEFAULT_WINDOW", "WINDOW_CHOICES", "Explorer", "explore"]

WINDOW_CHOICES: tuple[tuple[str, int], ...] = (
    ("4,000 (demo)", 4_000), ("8,000 (demo)", 8_000), ("64k", 64_000), ("128k", 128_000),
    ("200k", 200_000), ("1M", 1_000_000), ("custom", 0),
)
DEFAULT_WINDOW = 8_000  # small enough that the default conversation truncates several times


class Explorer:
    """The truncation explorer: controls, and per strategy a strip, a chart, a table and the request
    the model would see (see the module docstring).

    ``results`` maps each strategy to its :class:`~.simulate.SimulationResult`; ``request`` is
    the request shown in the strips and request views. Programmatic changes go through
    :meth:`update` (the same path as the controls).
    """

    def __init__(
        self,
        session: LiveSession | None = None,
        *,
        window: int | None = None,
        shape: ConversationShape | None = None,
        strategies: Sequence[Strategy] = STRATEGIES,
        summarize: Summarize | None = None,
        use_session: bool | None = None,
        request: int | None = None,
        **shape_fields: Any,
    ) -> None:
        """``session``: a live session to replay (optional); ``window``: the context window
        (default: the session's, else 8,000); ``shape``: the synthetic conversation;
        ``strategies``: any of :data:`~.simulate.STRATEGIES`; ``summarize(messages) -> str``:
        auto-condense's summariser (default: a placeholder naming how many messages it replaces);
        ``use_session``: start on the session's history (default: yes, when it has any);
        ``request``: the request shown first (default: the last). Any other keyword is a
        :class:`ConversationShape` field (``requests=40``, ``user_tokens=500``, …)."""
        for s in strategies:
            if s not in STRATEGIES:
                raise ValueError(f"unknown strategy {s!r}; one of {', '.join(STRATEGIES)}")
        self.live = live_source(session) if session is not None else None
        usable = self.live is not None and len(self.live.history) > 0
        self.use_session = usable if use_session is None else bool(use_session and usable)
        self.window = int(window or (self.live.window if self.live and self.use_session else DEFAULT_WINDOW))
        unknown = set(shape_fields) - set(ConversationShape.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        self.shape = replace(shape or ConversationShape(), **shape_fields)
        self.strategies: tuple[Strategy, ...] = tuple(s for s in STRATEGIES if s in strategies)
        self.summarize = summarize  # None: the honest placeholder (also for a simulated provider)
        self.results: dict[Strategy, SimulationResult] = {}
        self._history: tuple[Message, ...] = ()
        self.seconds = 0.0
        self.request = 0
        self._syncing = False
        self._compute()
        self.request = self._clamp(request if request is not None else self.requests)
        self._build_widgets()

    # --- the model ------------------------------------------------------------------------------

    @property
    def history(self) -> Sequence[Message]:
        """The conversation being replayed (the live history, or the synthetic one)."""
        return self._history

    @property
    def requests(self) -> int:
        """How many requests the replay has."""
        return max((len(r.records) for r in self.results.values()), default=0)

    def _clamp(self, request: int) -> int:
        return min(max(int(request), 1), max(self.requests, 1))

    def _compute(self) -> None:
        started = time.perf_counter()
        if self.use_session and self.live is not None:
            history: Sequence[Message] = self.live.history
            options: SimulateOptions = {"system": self.live.system, "extra_tokens": self.live.extra_tokens}
        else:
            history, options = synthetic_history(self.shape), {}
        options["summarize"] = self.summarize
        self._history = tuple(history)
        self.results = simulate_all(history, self.window, self.strategies, **options)
        self.seconds = time.perf_counter() - started

    def update(self, **changes: Any) -> "Explorer":
        """Change settings and recompute: ``window``, ``strategies``, ``use_session``, ``request``,
        or any :class:`ConversationShape` field (``requests``, ``user_tokens``, …)."""
        request = changes.pop("request", None)
        shape_fields = {k: changes.pop(k) for k in list(changes) if k in ConversationShape.__dataclass_fields__}
        if shape_fields:
            self.shape = replace(self.shape, **shape_fields)
        if "window" in changes:
            self.window = int(changes.pop("window"))
        if "strategies" in changes:
            wanted = changes.pop("strategies")
            self.strategies = tuple(s for s in STRATEGIES if s in wanted)
        if "use_session" in changes:
            self.use_session = bool(changes.pop("use_session")) and self.live is not None and bool(self.live.history)
        if changes:
            raise TypeError(f"unknown settings: {', '.join(changes)}")
        self._compute()
        self.request = self._clamp(request if request is not None else self.requests)
        self._sync_controls()
        self._render()
        return self

    def tables(self) -> dict[Strategy, pd.DataFrame]:
        """Each strategy's per-request table (pandas)."""
        return {s: r.table() for s, r in self.results.items()}

    # --- static output ----------------------------------------------------------------------------

    def describe(self) -> str:
        """One line: the source, window and how long the replay took."""
        if self.use_session and self.live is not None:
            source = f"live session ({self.live.provider}): {len(self.live.history)} messages"
        else:
            s = self.shape
            source = (f"synthetic: {s.requests} requests, user {s.user_tokens} / assistant {s.assistant_tokens} / "
                      f"file {s.file_tokens} tokens, "
                      f"tool calls {'on' if s.tool_calls else 'off'}, repeated reads {'on' if s.repeated_reads else 'off'}")
        first = next(iter(self.results.values()), None)
        limit = f", max allowed {first.window.max_allowed_size:,.0f}" if first else ""
        return (f"{source}; window {self.window:,}{limit}; {len(self.results)} strategies × {self.requests} "
                f"requests replayed in {self.seconds:.2f} s (token counts are tiktoken estimates)")

    def _actual_line(self) -> str:
        if not (self.use_session and self.live is not None):
            return ""
        if not self.live.actual:
            return "The session itself hid nothing so far."
        parts = [f"request {req}: {fmt_range(rng, 'nothing')}" + (f" (keep {keep})" if keep else "")
                 for req, rng, keep in self.live.actual]
        return "The session itself (API usage) hid: " + "; ".join(parts)

    def to_html(self, request: int | None = None) -> str:
        """Static HTML: settings, the comparison table, and per strategy the strip, chart, table and
        the request the model sees at ``request`` (default: the selected one)."""
        req = self._clamp(request if request is not None else self.request)
        columns = "".join(strategy_html(r, req) for r in self.results.values())
        actual = self._actual_line()
        return (f'<div class="nbagent-explorer" style="font-family:sans-serif">'
                f'<div style="color:{theme.MUTED}">{esc(self.describe())}</div>'
                + (f'<div style="color:{theme.MUTED}">{esc(actual)}</div>' if actual else "")
                + f'{html_table(summary_df(list(self.results.values())))}{legend_html()}'
                f'<div style="display:flex;flex-wrap:wrap;gap:8px">{columns}</div></div>')

    def to_text(self, request: int | None = None, *, show_request: bool = False) -> str:
        """Plain text: settings, comparison table, and per strategy the strip (one character per
        message) and the per-request table; with ``show_request``, the request at ``request``."""
        req = self._clamp(request if request is not None else self.request)
        out = [f"Truncation explorer — {self.describe()}"]
        if self._actual_line():
            out.append(self._actual_line())
        out += ["", summary_df(list(self.results.values())).to_string(index=False), "", f"strip: {legend_text()}"]
        for result in self.results.values():
            record = result.record(req)
            out += ["", f"== {result.label} ==", f"strip at request {record.request}:", strip_text(record), "",
                    result.table().to_string(index=False)]
            if show_request:
                out += ["", request_text(record)]
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<nbagent truncation explorer: {self.describe()}>"

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, object]:
        data = dict(self.widget._repr_mimebundle_() or {})
        data["text/plain"] = self.to_text()
        data["text/html"] = self.to_html()
        return data

    # --- widgets ----------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        import ipywidgets as W

        choices = list(WINDOW_CHOICES)
        if self.live is not None and self.live.window not in {v for _, v in choices}:
            choices.insert(0, (f"session: {self.live.window:,}", self.live.window))
        known = {v for _, v in choices}
        self.w_window = W.Dropdown(options=choices, value=self.window if self.window in known else 0,
                                   description="window")
        self.w_custom = W.BoundedIntText(value=self.window, min=500, max=10_000_000, step=1_000,
                                         description="custom", disabled=self.window in known)
        self.w_source = W.ToggleButtons(options=[("synthetic", False), ("live session", True)],
                                        value=self.use_session, disabled=self.live is None or not self.live.history)
        s = self.shape
        self.w_requests = W.IntSlider(value=s.requests, min=1, max=400, description="requests", continuous_update=False)
        self.w_user = W.BoundedIntText(value=s.user_tokens, min=1, max=200_000, description="user tokens")
        self.w_assistant = W.BoundedIntText(value=s.assistant_tokens, min=1, max=200_000, description="assistant")
        self.w_file = W.BoundedIntText(value=s.file_tokens, min=1, max=200_000, description="file reads")
        self.w_tools = W.Checkbox(value=s.tool_calls, description="tool calls")
        self.w_reads = W.Checkbox(value=s.repeated_reads, description="repeated file reads")
        self.w_strategies = {st: W.Checkbox(value=st in self.strategies, description=STRATEGY_LABELS[st], indent=False)
                             for st in STRATEGIES}
        self.w_request = W.IntSlider(value=self.request, min=1, max=max(self.requests, 1), description="request")
        self.w_status = W.HTML()
        self.w_summary = W.HTML()
        self.w_columns = W.GridBox(layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(320px, 1fr))",
                                                   grid_gap="8px"))
        self._columns: dict[Strategy, dict[str, W.HTML]] = {}
        for w in (self.w_window, self.w_custom, self.w_source, self.w_requests, self.w_user, self.w_assistant,
                  self.w_file, self.w_tools, self.w_reads, *self.w_strategies.values()):
            w.observe(self._on_control, names="value")
        self.w_request.observe(self._on_request, names="value")
        self.widget = W.VBox([
            W.HBox([self.w_window, self.w_custom, self.w_source]),
            W.HBox([self.w_requests, self.w_user, self.w_assistant, self.w_file]),
            W.HBox([self.w_tools, self.w_reads]),
            W.HBox(list(self.w_strategies.values())),
            self.w_status, self.w_summary, W.HTML(legend_html()), self.w_request, self.w_columns,
        ])
        self._sync_controls()
        self._render()

    def _on_control(self, change: Mapping[str, object]) -> None:
        if self._syncing:
            return
        picked = self.w_window.value
        self.w_custom.disabled = picked != 0
        window = picked or self.w_custom.value
        if change.get("owner") is self.w_source and change.get("new") and self.live is not None:
            window = self.live.window  # switching to the session: start from its own window
        changes: dict[str, object] = {
            "window": window, "use_session": self.w_source.value,
            "strategies": [st for st, box in self.w_strategies.items() if box.value],
            "requests": self.w_requests.value, "user_tokens": self.w_user.value,
            "assistant_tokens": self.w_assistant.value, "file_tokens": self.w_file.value, "tool_calls": self.w_tools.value,
            "repeated_reads": self.w_reads.value,
        }
        # Keep the chosen request where it was (clamped), unless it was the last one: then follow.
        if self.request < self.requests:
            changes["request"] = self.request
        self.update(**changes)

    def _on_request(self, change: Mapping[str, object]) -> None:
        new = change["new"]
        if not self._syncing and isinstance(new, int):  # the slider's value
            self.request = self._clamp(new)
            self._render_request()

    def _sync_controls(self) -> None:
        if not hasattr(self, "widget"):
            return
        self._syncing = True  # programmatic changes must not trigger another recompute
        try:
            for box in (self.w_requests, self.w_user, self.w_assistant, self.w_file, self.w_tools, self.w_reads):
                box.disabled = self.use_session  # the live history has its own shape
            if (self.w_window.value or self.w_custom.value) != self.window:  # changed by code, not the controls
                known = {v for _, v in self.w_window.options}
                self.w_window.value = self.window if self.window in known else 0
                self.w_custom.value = self.window
            self.w_custom.disabled = self.w_window.value != 0
            self.w_source.value = self.use_session
            self.w_request.max = max(self.requests, 1)
            self.w_request.value = self.request
        finally:
            self._syncing = False

    def _render(self) -> None:
        if not hasattr(self, "widget"):
            return
        import ipywidgets as W

        actual = self._actual_line()
        more = "<br>" + esc(actual) if actual else ""
        self.w_status.value = f'<span style="color:{theme.MUTED}">{esc(self.describe())}{more}</span>'
        self.w_summary.value = panel_table(summary_df(list(self.results.values())))
        self._columns = {}
        children = []
        for strategy, result in self.results.items():
            parts = {"title": W.HTML(f"<b>{esc(result.label)}</b>"), "strip": W.HTML(), "chart": W.HTML(),
                     "table": W.HTML(table_html(result)), "request": W.HTML()}
            self._columns[strategy] = parts
            children.append(W.VBox(list(parts.values()), layout=W.Layout(border=f"1px solid {theme.BORDER}", padding="4px")))
        self.w_columns.children = children
        self._render_request()

    def _render_request(self) -> None:
        for strategy, parts in self._columns.items():
            result = self.results[strategy]
            record = result.record(self.request)
            parts["strip"].value = (f'<div style="contain:inline-size">{strip_svg(result, record)}'
                                    f'<pre style="{STRIP_TEXT}">{esc(strip_text(record))}</pre></div>')
            parts["chart"].value = chart_html(result, marker=record.request)
            # contain: the request's longest line scrolls in its box, it does not widen the panel.
            parts["request"].value = (f'<div style="max-height:360px;overflow:auto;contain:inline-size">'
                                      f'{request_html(record)}</div>')


def explore(session: LiveSession | None = None, **kwargs: Any) -> Explorer:
    """Open the truncation explorer; with a ``session`` it starts on that session's history and
    window (see :class:`Explorer` for the keyword arguments)."""
    return Explorer(session, **kwargs)
