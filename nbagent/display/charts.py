"""Hand-written SVG charts (matplotlib is not a dependency of nbagent): the context/cost plot of
``%agent history --plot`` and the axis rounding the truncation explorer's charts share.

Pure strings; IPython is imported only by :func:`plot_context_and_cost`, when it is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Sequence

from ..engine.contracts.events import RequestRecord
from .format import fmt_tokens_short, live_range

if TYPE_CHECKING:  # pragma: no cover
    from IPython.display import SVG


def nice_max(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 2.5 or 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    import math

    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * exp:
            return step * exp
    return 10 * exp  # pragma: no cover


@dataclass(frozen=True)
class _Frame:
    """The plot area of :func:`context_cost_svg` and its two axes' maxima."""

    left: int
    top: int
    width: int
    height: int
    slot: float  # the width each request gets
    y_max: float  # tokens
    c_max: float  # dollars

    def y_of(self, tokens: float) -> float:
        return self.top + self.height - self.height * tokens / self.y_max

    def yc_of(self, dollars: float) -> float:
        return self.top + self.height - self.height * dollars / self.c_max


def context_cost_svg(records: Sequence[RequestRecord], *, width: int = 560, height: int = 240) -> str:
    """SVG text: context tokens per request (bars; dashed line = max allowed) and cumulative
    cost (line, right axis)."""
    left, right, top, bottom = 56, 60, 24, 34
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    if not records:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" fill="#666">no requests yet</text></svg>')
        return "".join(parts)
    costs = list(accumulate(r.cost_usd or 0.0 for r in records))
    # A request without a price is no $0 step of the line: the chart says the line leaves it out,
    # and draws no line (nor a dollar axis) when no request had a price.
    unpriced = sum(r.cost_usd is None for r in records)
    priced = unpriced < len(records)
    max_allowed = max((r.max_allowed for r in records), default=0.0)
    pw = width - left - right
    frame = _Frame(left=left, top=top, width=pw, height=height - top - bottom, slot=pw / len(records),
                   y_max=nice_max(max(max(r.context_tokens for r in records), max_allowed)),
                   c_max=nice_max(max(costs)) if max(costs) > 0 else 1.0)
    parts += _grid(frame, priced)
    parts += _context_bars(frame, records, max_allowed)
    if priced:
        points = " ".join(f"{left + frame.slot * i + frame.slot / 2:.1f},{frame.yc_of(c):.1f}" for i, c in enumerate(costs))
        parts.append(f'<polyline points="{points}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    parts += _labels(frame, records, unpriced, right=right, height=height)
    parts.append("</svg>")
    return "".join(parts)


def _grid(frame: _Frame, priced: bool) -> list[str]:
    """The grid and both axes' labels (the dollar axis only where a request had a price)."""
    parts = []
    right_edge = frame.left + frame.width
    for k in range(5):
        frac = k / 4
        y = frame.top + frame.height - frame.height * frac
        parts.append(f'<line x1="{frame.left}" y1="{y:.1f}" x2="{right_edge}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        label = fmt_tokens_short(frame.y_max * frac)
        parts.append(f'<text x="{frame.left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#1f6fb2">{label}</text>')
        if priced:
            parts.append(f'<text x="{right_edge + 6}" y="{y + 4:.1f}" fill="#c0392b">${frame.c_max * frac:.3g}</text>')
    return parts


def _context_bars(frame: _Frame, records: Sequence[RequestRecord], max_allowed: float) -> list[str]:
    """A bar per request (orange after a truncation) and the dashed "max allowed" line."""
    parts = []
    bar = max(min(frame.slot * 0.7, 40.0), 1.0)
    bottom = frame.top + frame.height
    for i, r in enumerate(records):
        x = frame.left + frame.slot * i + (frame.slot - bar) / 2
        y = frame.y_of(r.context_tokens)
        fill = "#f0ad4e" if live_range(r.deleted_range) else "#5b9bd5"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{bottom - y:.1f}" fill="{fill}">'
            f'<title>request {r.request}: {r.context_tokens:,} tokens</title></rect>'
        )
    if max_allowed:
        ym = frame.y_of(max_allowed)
        parts.append(f'<line x1="{frame.left}" y1="{ym:.1f}" x2="{frame.left + frame.width}" y2="{ym:.1f}" '
                     f'stroke="#1f6fb2" stroke-dasharray="5,4"/>')
        # Above the line, unless it would run into the legend line at the top: then below it.
        label_y = ym - 4 if ym - 4 > frame.top + 6 else ym + 13
        parts.append(f'<text x="{frame.left + 4}" y="{label_y:.1f}" fill="#1f6fb2">max allowed {max_allowed:,.0f}</text>')
    return parts


def _labels(frame: _Frame, records: Sequence[RequestRecord], unpriced: int, *, right: int, height: int) -> list[str]:
    """The request numbers under the bars, the axis titles and the legend of unpriced requests."""
    left, top, pw = frame.left, frame.top, frame.width
    n = len(records)
    parts = [f'<text x="{left + frame.slot * i + frame.slot / 2:.1f}" y="{top + frame.height + 14}" '
             f'text-anchor="middle" fill="#444">{records[i].request}</text>' for i in range(0, n, max(1, n // 12))]
    parts.append(f'<text x="{left + pw / 2}" y="{height - 4}" text-anchor="middle" fill="#444">API request</text>')
    parts.append(f'<text x="{left}" y="{top - 8}" fill="#1f6fb2">context tokens (orange: after truncation)</text>')
    priced = unpriced < n  # some request had a price
    cost_label = "cumulative cost (USD)" if not unpriced else \
        "cumulative cost (USD) *" if priced else "cost unknown: no request had a price"
    parts.append(f'<text x="{left + pw}" y="{top - 8}" text-anchor="end" fill="#c0392b">{cost_label}</text>')
    if unpriced and priced:
        parts.append(f'<text x="{left + pw + right}" y="{height - 4}" text-anchor="end" fill="#c0392b">'
                     f'* priced requests only: {unpriced} without prices</text>')
    return parts


def plot_context_and_cost(records: Sequence[RequestRecord]) -> "SVG":
    """Context tokens and cumulative cost per request, as an IPython ``SVG`` display object."""
    from IPython.display import SVG

    return SVG(data=context_cost_svg(records))
