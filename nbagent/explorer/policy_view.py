"""The context-policy explorer (``nbagent.explore_policies()``): policies side by side on one
session, with a request slider; static HTML and text fallbacks for renderers without widgets.

Everything shown comes from :mod:`.policies` (the replay through the engine's own layers) and is
drawn by :mod:`.policy_render`::

    ex = nbagent.explore_policies()                       # the 300-request data-analysis session
    ex.comparison()                                       # dollars, cache hits, facts kept (pandas)
    ex.results[0].table()                                 # one row per request
    nbagent.explore_policies(session=nbagent.session(), facts=["the key number"])  # a live session
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..display import theme
from ..display.html import esc
from .datasession import AnalysisShape, data_analysis_session, planted_facts
from .live import LiveSession, live_source
from .policies import DEFAULT_POLICIES, PolicyResult, compare_policies, comparison_df, recall_df
from .policy_render import charts_html, comparison_html, comparison_text, panels_html, tables_html

if TYPE_CHECKING:  # pragma: no cover
    import ipywidgets as W
    import pandas as pd

DEFAULT_WINDOW = 200_000


class PolicyExplorer:
    """Context policies compared on one session (see the module docstring).

    ``results`` holds a :class:`~.policies.PolicyResult` per policy, in the order given;
    ``request`` is the request the strips show (default: the last)."""

    def __init__(self, session: LiveSession | None = None, *, history: Sequence[Mapping[str, object]] | None = None,
                 policies: Sequence[str] = DEFAULT_POLICIES, window: int | None = None,
                 facts: Sequence[str] | None = None, request: int | None = None, **options: Any) -> None:
        """``session``: a live session to replay; ``history``: messages to replay instead; neither:
        :func:`~.datasession.data_analysis_session` (keywords that are :class:`~.datasession.AnalysisShape`
        fields shape it); ``facts``: the strings the recall probe looks for (default: the planted
        ones of the synthetic session, none otherwise); other keywords go to
        :func:`~.policies.simulate_policy` (``model``, ``max_tokens``, …)."""
        shape_fields = {k: options.pop(k) for k in list(options) if k in AnalysisShape.__dataclass_fields__}
        if session is not None and history is not None:
            raise TypeError("give a session or a history, not both")
        if shape_fields and (session is not None or history is not None):
            raise TypeError(f"{', '.join(shape_fields)} shape the synthetic session only")
        if session is not None:
            live = live_source(session)
            history, window = live.history, window or live.window
            options.setdefault("system", live.system)
            options.setdefault("extra_tokens", live.extra_tokens)
            self.source = f"live session ({live.provider}): {len(live.history)} messages"
        elif history is None:
            shape = AnalysisShape(**shape_fields)
            history, facts = data_analysis_session(shape), planted_facts(shape) if facts is None else facts
            self.source = (f"data-analysis session: {shape.requests} requests, {shape.large_results} data loads of "
                           f"~{shape.large_tokens:,} tokens, {shape.planted} facts planted in the first loads")
        else:
            self.source = f"{len(history)} messages"
        self.window = int(window or DEFAULT_WINDOW)
        self.history = tuple(history)
        self.results: list[PolicyResult] = compare_policies(self.history, policies, self.window,
                                                            facts=tuple(facts or ()), **options)
        self.request = self._clamp(request if request is not None else self.requests)
        self._widget: W.VBox | None = None

    @property
    def requests(self) -> int:
        """How many requests the replay has."""
        return max((len(r.records) for r in self.results), default=0)

    def _clamp(self, request: int) -> int:
        return min(max(int(request), 1), max(self.requests, 1))

    def comparison(self) -> pd.DataFrame:
        """One row per policy (pandas): dollars, ratio to the first, cache hits, layers, facts."""
        return comparison_df(self.results)

    def recall(self) -> pd.DataFrame:
        """Per planted fact, the request at which each policy stopped showing it (pandas)."""
        return recall_df(self.results)

    def describe(self) -> str:
        """One line: the source, window and model."""
        model = self.results[0].model if self.results else "?"
        return (f"{self.source}; window {self.window:,}; {model} prices; {len(self.results)} policies × "
                f"{self.requests} requests (tokens are tiktoken estimates, cache per the documented rules)")

    def to_html(self, request: int | None = None) -> str:
        """Static HTML of the whole comparison at ``request`` (default: the selected one)."""
        req = self._clamp(request if request is not None else self.request)
        return (f'<div class="nbagent-policy-explorer" style="font-family:sans-serif;color:{theme.TEXT}">'
                f'<div style="color:{theme.MUTED}">{esc(self.describe())}</div>'
                f'{comparison_html(self.results, req)}</div>')

    def to_text(self, request: int | None = None) -> str:
        """Plain text of the comparison at ``request``."""
        req = self._clamp(request if request is not None else self.request)
        return f"Context policies compared — {self.describe()}\n\n{comparison_text(self.results, req)}"

    def __repr__(self) -> str:
        return f"<nbagent context-policy explorer: {self.describe()}>"

    @property
    def widget(self) -> W.VBox:
        """The ipywidgets view: the comparison, and a request slider that moves the strips."""
        if self._widget is None:
            import ipywidgets as W

            self._slider = W.IntSlider(value=self.request, min=1, max=max(self.requests, 1), description="request",
                                       continuous_update=False)
            self._charts, self._panels = W.HTML(), W.HTML()
            self._slider.observe(lambda change: self.show(change["new"]), names="value")
            head = (f'<div style="font-family:sans-serif;color:{theme.TEXT}"><div style="color:{theme.MUTED}">'
                    f'{esc(self.describe())}</div>{tables_html(self.results)}</div>')
            self._widget = W.VBox([W.HTML(head), self._slider, self._charts, self._panels])
            self.show(self.request)
        return self._widget

    def show(self, request: int) -> "PolicyExplorer":
        """Move the strips and the charts' marker to ``request``."""
        self.request = self._clamp(request)
        if self._widget is not None:
            if self._slider.value != self.request:
                self._slider.value = self.request
            self._charts.value = charts_html(self.results, self.request)
            self._panels.value = panels_html(self.results, self.request)
        return self

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, object]:
        try:
            data = dict(self.widget._repr_mimebundle_() or {})
        except ImportError:  # no ipywidgets: the static forms only
            data = {}
        data["text/plain"] = self.to_text()
        data["text/html"] = self.to_html()
        return data


def explore_policies(session: LiveSession | None = None, **kwargs: Any) -> PolicyExplorer:
    """Compare context policies on one session (see :class:`PolicyExplorer` for the keywords)."""
    return PolicyExplorer(session, **kwargs)


__all__ = ["PolicyExplorer", "explore_policies"]
