"""Pictures and text for the context-policy explorer: one chart with a line per policy, each
policy's strip at a request, and the recall probe's grid (planted facts × requests).

Pure strings, no widgets (the live view and the static HTML / text fallbacks share them). Text is
drawn in the theme's text colours (:mod:`~nbagent.display.theme`: readable in light and dark
themes); the fixed colours are only fills and lines, each named by text beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..display import theme
from ..display.charts import nice_max
from ..display.format import fmt_tokens_short
from ..display.html import esc, svg_figure
from ..display.tables import panel_table
from .policies import STRIP, PolicyRecord, PolicyResult, comparison_df, recall_df

LINE_COLOURS = ("#1f6fb2", "#c0392b", "#8e44ad", "#2e7d32", "#d35400", "#16a085")
"""One line colour per policy, in order (a key drawn beside each name, never text colour)."""
STRIP_COLOURS = {"P": "#2e7d32", "K": "#5b9bd5", "m": "#f0ad4e", "r": "#8d6e63", "o": "#ef9a9a", ".": "#d5d5d5", "s": "#b39ddb",
                 "e": "#e67e22", "c": "#7e57c2"}
"""One fill per :data:`~.policies.STRIP` character: the server's clearing (``e``) near the client's masking,
the server's compaction (``c``) near the client's summary."""
RECALL_COLOURS = {"seen": "#2e7d32", "lost": "#c0392b", "not yet": "#d5d5d5"}
PER_ROW = 100  # strip cells per row


def _key(colour: str, round_: bool = False) -> str:
    radius = "border-radius:50%;" if round_ else ""
    return (f'<span style="display:inline-block;width:10px;height:10px;{radius}background:{colour};'
            f'margin-right:3px"></span>')


def colour_of(index: int) -> str:
    """The line colour of the ``index``-th policy."""
    return LINE_COLOURS[index % len(LINE_COLOURS)]


def lines_svg(results: Sequence[PolicyResult], values: str, *, title: str, width: int = 640, height: int = 220,
              marker: int | None = None, window: bool = False) -> str:
    """A line per policy of ``values`` per request: ``"tokens"`` (tokens sent) or ``"usd"``
    (cumulative dollars); ``window`` draws the context window; ``marker`` a dotted line."""
    left, right, top, bottom = 52, 10, 18, 22
    pw, ph = width - left - right, height - top - bottom
    series: list[list[float]] = []
    for r in results:
        if values == "tokens":
            series.append([float(rec.tokens_sent) for rec in r.records])
        else:
            total, acc = 0.0, []
            for rec in r.records:
                total += rec.usd
                acc.append(total)
            series.append(acc)
    n = max((len(s) for s in series), default=0)
    top_value = max([max(s, default=0.0) for s in series] + [float(results[0].window) if window and results else 0.0])
    y_max = nice_max(top_value)

    def x(i: int) -> float:
        return left + (pw * i / (n - 1) if n > 1 else pw / 2)

    def y(v: float) -> float:
        return top + ph - ph * min(v, y_max) / y_max

    label = (lambda v: fmt_tokens_short(v)) if values == "tokens" else (lambda v: f"${v:.3g}")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'font-family="sans-serif" font-size="10"><rect width="{width}" height="{height}" style="fill:{theme.PAGE}"/>']
    for k in range(5):
        v = y_max * k / 4
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" stroke="#999" stroke-opacity="0.3"/>'
                     f'<text x="{left - 4}" y="{y(v) + 3:.1f}" text-anchor="end" style="fill:{theme.MUTED}">{label(v)}</text>')
    if window and results:
        w = results[0].window
        parts.append(f'<line x1="{left}" y1="{y(w):.1f}" x2="{left + pw}" y2="{y(w):.1f}" stroke="#c0392b" '
                     f'stroke-dasharray="4,3"/><text x="{left + pw}" y="{y(w) - 2:.1f}" text-anchor="end" '
                     f'style="fill:{theme.ERROR}">window {w:,}</text>')
    for i, s in enumerate(series):
        points = " ".join(f"{x(j):.1f},{y(v):.1f}" for j, v in enumerate(s))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour_of(i)}" stroke-width="1.5">'
                     f'<title>{esc(results[i].label)}</title></polyline>')
    if marker is not None and 1 <= marker <= n:
        parts.append(f'<line x1="{x(marker - 1):.1f}" y1="{top}" x2="{x(marker - 1):.1f}" y2="{top + ph}" '
                     f'stroke="#777" stroke-dasharray="2,2"/>')
    parts.append(f'<text x="{left}" y="{top - 5}" style="fill:{theme.TEXT}">{esc(title)}</text>'
                 f'<text x="{left}" y="{height - 6}" style="fill:{theme.MUTED}">request 1</text>'
                 f'<text x="{left + pw}" y="{height - 6}" text-anchor="end" style="fill:{theme.MUTED}">{n}</text></svg>')
    return svg_figure("".join(parts))


def policy_legend_html(results: Sequence[PolicyResult]) -> str:
    """Which line is which policy."""
    items = "".join(f'<span style="margin-right:12px">{_key(colour_of(i))}{esc(r.label)}</span>'
                    for i, r in enumerate(results))
    return f'<div style="font-size:11px;color:{theme.TEXT}">{items}</div>'


def strip_legend_html() -> str:
    """The strip's colour legend (with the text characters)."""
    items = "".join(f'<span style="margin-right:10px">{_key(STRIP_COLOURS[c])}{esc(text)} ({esc(c)})</span>'
                    for c, text in STRIP.items())
    return f'<div style="font-size:11px;color:{theme.TEXT}">{items}</div>'


def strip_legend_text() -> str:
    """The strip's character legend."""
    return "  ".join(f"{c} {text}" for c, text in STRIP.items())


def strip_svg(record: PolicyRecord, width: int = 600) -> str:
    """The strip at ``record``: a cell per history message, :data:`PER_ROW` to a row."""
    n = len(record.strip)
    per_row = min(PER_ROW, max(n, 1))
    cell = max(min(width / per_row, 12.0), 2.0)
    rows = (n + per_row - 1) // per_row or 1
    h = rows * (cell + 2)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{per_row * cell:.0f}" height="{h:.0f}">']
    for i, c in enumerate(record.strip):
        parts.append(f'<rect x="{(i % per_row) * cell:.1f}" y="{(i // per_row) * (cell + 2):.1f}" '
                     f'width="{max(cell - 0.6, 0.8):.1f}" height="{cell:.1f}" fill="{STRIP_COLOURS[c]}">'
                     f'<title>#{i}: {esc(STRIP[c])}</title></rect>')
    return svg_figure("".join(parts) + "</svg>")


def strip_caption(record: PolicyRecord) -> str:
    """What the strip shows at ``record``, counted."""
    counts = {c: record.strip.count(c) for c in STRIP}
    shown = ", ".join(f"{counts[c]} {STRIP[c].split(' (')[0]}" for c in STRIP if counts[c] and c != "P")
    return f"request {record.request}: {record.history_len} messages; {shown}; ~{record.tokens_sent:,} tokens sent"


def recall_svg(result: PolicyResult, width: int = 600) -> str:
    """The recall probe of one policy: a row per planted fact, a column per request; green while
    the request shows the fact, red once it stopped, grey before it appeared."""
    n, facts = len(result.records), len(result.facts)
    if not n or not facts:
        return ""
    cell_w, cell_h, left = max(width / n, 0.5), 8, 48
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + n * cell_w:.0f}" height="{facts * (cell_h + 1)}" '
             f'font-family="sans-serif" font-size="8">']
    for k, fact in enumerate(result.facts):
        y = k * (cell_h + 1)
        parts.append(f'<text x="{left - 3}" y="{y + cell_h - 1}" text-anchor="end" style="fill:{theme.TEXT}">'
                     f'{esc(fact.split(":")[0])}</text>')
        seen, start, state = False, 0, None
        for j, r in enumerate([*result.records, None]):
            now = None if r is None else ("seen" if r.facts_seen[k] else "lost" if seen else "not yet")
            seen = seen or now == "seen"
            if now != state:  # one rectangle per run of equal cells
                if state is not None:
                    parts.append(f'<rect x="{left + start * cell_w:.1f}" y="{y}" width="{(j - start) * cell_w:.1f}" '
                                 f'height="{cell_h}" fill="{RECALL_COLOURS[state]}"><title>{esc(fact)}: {state}, '
                                 f'requests {start + 1}-{j}</title></rect>')
                start, state = j, now
    return svg_figure("".join(parts) + "</svg>")


def recall_legend_html() -> str:
    """The recall grid's legend."""
    items = "".join(f'<span style="margin-right:10px">{_key(c)}{esc(t)}</span>' for t, c in RECALL_COLOURS.items())
    return (f'<div style="font-size:11px;color:{theme.TEXT}">recall probe (a row per planted fact, a column per '
            f'request): {items}</div>')


def policy_column_html(index: int, result: PolicyResult, request: int) -> str:
    """One policy's static panel: name, totals, strip and recall grid at ``request``."""
    record = result.record(request)
    head = (f"${result.usd:.2f} · cache hits {100 * result.cache_hit_share:.0f}% · "
            f"{sum(record.facts_seen)}/{len(result.facts)} facts shown at request {record.request}")
    return (f'<div style="border:1px solid {theme.BORDER};border-radius:4px;padding:6px;margin:4px 0;color:{theme.TEXT}">'
            f'<div>{_key(colour_of(index))}<b>{esc(result.label)}</b> '
            f'<span style="color:{theme.MUTED}">{esc(head)}</span></div>'
            f'<div style="color:{theme.MUTED};font-size:11px">{esc(strip_caption(record))}</div>'
            f'{strip_svg(record)}{recall_svg(result)}</div>')


def tables_html(results: Sequence[PolicyResult]) -> str:
    """The comparison table and the recall table."""
    return (f'{panel_table(comparison_df(results))}'
            f'<div style="color:{theme.TEXT};font-size:12px;margin-top:6px">first request that no longer shows each '
            f'planted fact (blank: still shown at the end)</div>{panel_table(recall_df(results))}')


def charts_html(results: Sequence[PolicyResult], request: int) -> str:
    """Tokens sent and cumulative dollars, a line per policy, marked at ``request``."""
    return (f'{policy_legend_html(results)}'
            f'{lines_svg(results, "tokens", title="tokens sent per request", marker=request, window=True)}'
            f'{lines_svg(results, "usd", title="cumulative dollars", marker=request)}')


def panels_html(results: Sequence[PolicyResult], request: int) -> str:
    """The legends and a panel per policy (strip and recall grid) at ``request``."""
    panels = "".join(policy_column_html(i, r, request) for i, r in enumerate(results))
    return f'{strip_legend_html()}{recall_legend_html()}{panels}'


def comparison_html(results: Sequence[PolicyResult], request: int) -> str:
    """The whole static comparison: tables, both charts and a panel per policy."""
    return tables_html(results) + charts_html(results, request) + panels_html(results, request)


def comparison_text(results: Sequence[PolicyResult], request: int) -> str:
    """The comparison as plain text: totals, recall table, and each policy's strip at ``request``."""
    out = [comparison_df(results).to_string(index=False), "",
           "first request that no longer shows each planted fact (blank: still shown at the end):",
           recall_df(results).to_string(index=False), "", f"strip: {strip_legend_text()}"]
    for r in results:
        record = r.record(request)
        chars = record.strip
        out += ["", f"== {r.label} == {strip_caption(record)}",
                *(chars[i:i + PER_ROW] for i in range(0, len(chars), PER_ROW))]
    return "\n".join(out)


__all__ = ["charts_html", "comparison_html", "comparison_text", "lines_svg", "panels_html", "policy_column_html",
           "recall_svg", "strip_svg", "tables_html"]
