"""Hand-written SVG charts (matplotlib is not a dependency of nbagent): the context/cost plot of
``%agent history --plot`` and the axis rounding the truncation explorer's charts share.

Pure strings; IPython is imported only by :func:`plot_context_and_cost`, when it is called.
"""

from __future__ import annotations

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


def context_cost_svg(records: Sequence[RequestRecord], *, width: int = 560, height: int = 240) -> str:
    """SVG text: context tokens per request (bars; dashed line = max allowed) and cumulative
    cost (line, right axis)."""
    left, right, top, bottom = 56, 60, 24, 34
    pw, ph = width - left - right, height - top - bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
    ]
    if not records:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" fill="#666">no requests yet</text></svg>')
        return "".join(parts)
    costs: list[float] = []
    total = 0.0
    for r in records:
        total += r.cost_usd or 0.0
        costs.append(total)
    # A request without a price is no $0 step of the line: the chart says the line leaves it out,
    # and draws no line (nor a dollar axis) when no request had a price.
    unpriced = sum(r.cost_usd is None for r in records)
    priced = unpriced < len(records)
    max_allowed = max((r.max_allowed for r in records), default=0.0)
    y_max = nice_max(max(max(r.context_tokens for r in records), max_allowed))
    c_max = nice_max(max(costs)) if max(costs) > 0 else 1.0
    n = len(records)
    slot = pw / n
    bar = max(min(slot * 0.7, 40.0), 1.0)

    def y_of(v: float) -> float:
        return top + ph - ph * v / y_max

    def yc_of(v: float) -> float:
        return top + ph - ph * v / c_max

    for k in range(5):  # grid and both axes' labels
        frac = k / 4
        y = top + ph - ph * frac
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        label = fmt_tokens_short(y_max * frac)
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#1f6fb2">{label}</text>')
        if priced:
            parts.append(f'<text x="{left + pw + 6}" y="{y + 4:.1f}" fill="#c0392b">${c_max * frac:.3g}</text>')
    for i, r in enumerate(records):
        x = left + slot * i + (slot - bar) / 2
        y = y_of(r.context_tokens)
        fill = "#f0ad4e" if live_range(r.deleted_range) else "#5b9bd5"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{top + ph - y:.1f}" fill="{fill}">'
            f'<title>request {r.request}: {r.context_tokens:,} tokens</title></rect>'
        )
    if max_allowed:
        ym = y_of(max_allowed)
        parts.append(f'<line x1="{left}" y1="{ym:.1f}" x2="{left + pw}" y2="{ym:.1f}" stroke="#1f6fb2" stroke-dasharray="5,4"/>')
        # Above the line, unless it would run into the legend line at the top: then below it.
        label_y = ym - 4 if ym - 4 > top + 6 else ym + 13
        parts.append(f'<text x="{left + 4}" y="{label_y:.1f}" fill="#1f6fb2">max allowed {max_allowed:,.0f}</text>')
    if priced:
        points = " ".join(f"{left + slot * i + slot / 2:.1f},{yc_of(c):.1f}" for i, c in enumerate(costs))
        parts.append(f'<polyline points="{points}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    step = max(1, n // 12)
    for i in range(0, n, step):
        x = left + slot * i + slot / 2
        parts.append(f'<text x="{x:.1f}" y="{top + ph + 14}" text-anchor="middle" fill="#444">{records[i].request}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{height - 4}" text-anchor="middle" fill="#444">API request</text>')
    parts.append(f'<text x="{left}" y="{top - 8}" fill="#1f6fb2">context tokens (orange: after truncation)</text>')
    cost_label = "cumulative cost (USD)" if not unpriced else \
        "cumulative cost (USD) *" if priced else "cost unknown: no request had a price"
    parts.append(f'<text x="{left + pw}" y="{top - 8}" text-anchor="end" fill="#c0392b">{cost_label}</text>')
    if unpriced and priced:
        parts.append(f'<text x="{left + pw + right}" y="{height - 4}" text-anchor="end" fill="#c0392b">'
                     f'* priced requests only: {unpriced} without prices</text>')
    parts.append("</svg>")
    return "".join(parts)


def plot_context_and_cost(records: Sequence[RequestRecord]) -> "SVG":
    """Context tokens and cumulative cost per request, as an IPython ``SVG`` display object."""
    from IPython.display import SVG

    return SVG(data=context_cost_svg(records))
