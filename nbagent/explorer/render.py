"""Pictures and text for the truncation explorer: message strips, token charts, request views.

Pure strings, no widgets: the live explorer and its static HTML / text fallbacks (nbconvert,
GitHub, terminals) are built from the same functions. Charts are hand-written SVG (matplotlib is
not a dependency); every strip also has a one-character-per-message text form, which survives
renderers that drop SVG or inline styles.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..display import theme
from ..display.charts import nice_max
from ..display.format import fmt_range, fmt_tokens_short, is_hidden
from ..display.html import clip, esc, svg_figure
from ..display.tables import html_table, panel_table
from ..engine.context import (
    CONTINUE_NOTICE,
    DUPLICATE_FILE_READ_NOTICE,
    ORPHANED_RESULTS_NOTICE,
    RESULT_MISSING,
    TRUNCATION_NOTICE,
)
from ..engine.context.window import start_of_rest
from ..engine.contracts.messages import content_blocks, tool_result_text
from .simulate import RequestRecord, SimulationResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

# Message status → (colour, strip character, legend text).
STATUS: dict[str, tuple[str, str, str]] = {
    "first pair": ("#2e7d32", "P", "first pair (never hidden)"),
    "hidden": ("#d5d5d5", ".", "hidden by the range"),
    "summarised": ("#b39ddb", "s", "hidden, replaced by a summary"),
    "replaced read": ("#f0ad4e", "r", "file read replaced by a notice"),
    "results omitted": ("#ef9a9a", "o", "sent without its tool results (their calls hidden)"),
    "kept": ("#5b9bd5", "K", "kept (sent)"),
}
NOTICES: tuple[tuple[str, str], ...] = (
    (TRUNCATION_NOTICE, "truncation notice"),
    (DUPLICATE_FILE_READ_NOTICE, "duplicate-read notice"),
    (CONTINUE_NOTICE, "continue notice"),
    (ORPHANED_RESULTS_NOTICE, "orphaned-results notice"),
)
_NOTICE_STYLE = f"background:{theme.NOTICE_PANEL};border-left:3px solid {theme.NOTICE_EDGE};padding:2px 4px"
PER_ROW = 50  # strip cells per row: long histories wrap instead of shrinking below a pixel


def strip_statuses(record: RequestRecord) -> list[str]:
    """The status of every history message at ``record``'s request (see :data:`STATUS`)."""
    hidden_as = "summarised" if record.summary is not None else "hidden"
    out: list[str] = []
    for i in range(record.history_len):
        if i < 2:
            out.append("first pair")
        elif is_hidden(i, record.deleted_range):
            out.append(hidden_as)
        elif i == record.results_omitted:
            out.append("results omitted")
        elif i in record.replaced_reads:
            out.append("replaced read")
        else:
            out.append("kept")
    return out


def strip_counts(record: RequestRecord) -> dict[str, int]:
    """How many strip cells have each status (every key of :data:`STATUS`, zeros included)."""
    counts = dict.fromkeys(STATUS, 0)
    for s in strip_statuses(record):
        counts[s] += 1
    return counts


def strip_text(record: RequestRecord, width: int = PER_ROW * 2) -> str:
    """The strip as characters (P first pair, . hidden, s summarised, r replaced read, o results
    omitted, K kept),
    wrapped every ``width`` messages."""
    chars = "".join(STATUS[s][1] for s in strip_statuses(record))
    return "\n".join(chars[i:i + width] for i in range(0, len(chars), width)) or "(empty)"


def strip_svg(result: SimulationResult, record: RequestRecord, width: int = 300) -> str:
    """SVG strip: one cell per history message, wrapping every :data:`PER_ROW` messages; hover a
    cell for its index, role and status."""
    statuses = strip_statuses(record)
    n = len(statuses)
    per_row = min(PER_ROW, max(n, 1))
    cell = max(min(width / per_row, 14.0), 2.0)
    rows = (n + per_row - 1) // per_row or 1
    gap = 3
    h = rows * (cell + gap) + 14
    c = strip_counts(record)
    caption = (f"request {record.request}: {n} messages, {c['hidden'] + c['summarised']} hidden, "
               f"replaced reads: {c['replaced read']}")
    # Wide enough for the caption too (about 6 px a character at 10 px): the SVG clips what it
    # does not fit, and a short history's strip is narrower than its caption.
    w = max(per_row * cell, 6.0 * len(caption))
    # max-width: a long caption scales down with the strip in a narrow panel instead of widening it.
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
             f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="sans-serif" font-size="10" '
             f'style="max-width:100%;height:auto">']
    for i, status in enumerate(statuses):
        x = (i % per_row) * cell
        y = (i // per_row) * (cell + gap)
        role = result.history[i].get("role", "?") if i < len(result.history) else "?"
        parts.append(f'<rect x="{x:.2f}" y="{y:.1f}" width="{max(cell - 0.6, 0.8):.2f}" height="{cell:.1f}" '
                     f'fill="{STATUS[status][0]}"><title>#{i} {role}: {status}</title></rect>')
    parts.append(f'<text x="0" y="{h - 3:.1f}" style="fill:{theme.TEXT}">{esc(caption)}</text></svg>')
    return svg_figure("".join(parts))


def legend_html() -> str:
    """The strip's colour legend."""
    items = "".join(
        f'<span style="display:inline-block;margin-right:10px"><span style="display:inline-block;width:10px;'
        f'height:10px;background:{colour};margin-right:3px"></span>{esc(text)} ({char})</span>'
        for colour, char, text in STATUS.values())
    return f'<div style="font-size:11px;color:{theme.TEXT}">{items}</div>'


def legend_text() -> str:
    """The strip's character legend."""
    return "  ".join(f"{char} {text}" for _, char, text in STATUS.values())


@dataclass(frozen=True)
class _Plot:
    """Where the chart's plot area lies, and how a request index and a token count map into it."""

    left: float
    top: float
    width: float
    height: float
    n: int
    y_max: float

    def x(self, i: int) -> float:
        return self.left + (self.width * i / (self.n - 1) if self.n > 1 else self.width / 2)

    def y(self, v: float) -> float:
        return self.top + self.height - self.height * min(v, self.y_max) / self.y_max

    def label_y(self, v: float) -> float:
        # Above its line, unless that would run into the title line at the top: then below it.
        return self.y(v) - 2 if self.y(v) - 2 > self.top + 10 else self.y(v) + 10


def tokens_chart_svg(result: SimulationResult, *, width: int = 300, height: int = 150, marker: int | None = None) -> str:
    """Tokens sent per request (blue line), the part read from the cache (shaded), the window
    (red) and max allowed (dashed). Dots: orange where truncation fired, green where the file-read
    pass replaced reads instead, red for requests larger than the window. ``marker`` is a dotted
    line at the chosen request."""
    left, right, top, bottom = 44, 8, 14, 24
    recs = result.records
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">',
             f'<rect width="{width}" height="{height}" style="fill:{theme.PAGE}"/>']
    if not recs:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" '
                     f'style="fill:{theme.MUTED}">no requests</text></svg>')
        return svg_figure("".join(parts))
    n = len(recs)
    plot = _Plot(left, top, width - left - right, height - top - bottom, n,
                 nice_max(max(max(r.tokens_sent for r in recs), result.window.context_window)))
    x, y = plot.x, plot.y
    parts += _chart_grid(plot)
    area = " ".join(f"{x(i):.1f},{y(r.cache_read_tokens):.1f}" for i, r in enumerate(recs))
    parts.append(f'<polygon points="{x(0):.1f},{y(0):.1f} {area} {x(n - 1):.1f},{y(0):.1f}" style="fill:{theme.CACHE_SHADE}"/>')
    parts += _chart_limits(plot, result.window.context_window, result.window.max_allowed_size)
    line = " ".join(f"{x(i):.1f},{y(r.tokens_sent):.1f}" for i, r in enumerate(recs))
    parts.append(f'<polyline points="{line}" fill="none" stroke="#1f6fb2" stroke-width="1.5"/>')
    parts += _chart_dots(plot, recs)
    if marker is not None and 1 <= marker <= n:
        parts.append(f'<line x1="{x(marker - 1):.1f}" y1="{top}" x2="{x(marker - 1):.1f}" y2="{top + plot.height}" '
                     f'stroke="#333" stroke-dasharray="2,2"/>')
    parts.append(f'<text x="{left}" y="{height - 6}" style="fill:{theme.TEXT}">request 1</text>'
                 f'<text x="{left + plot.width}" y="{height - 6}" text-anchor="end" style="fill:{theme.TEXT}">{n}</text>'
                 f'<text x="{left}" y="{top - 4}" style="fill:{theme.INFO}">tokens sent (shaded: cache read)</text></svg>')
    return svg_figure("".join(parts))


def _chart_grid(plot: _Plot) -> list[str]:
    """Five horizontal grid lines, each labelled with its token count."""
    parts = []
    for k in range(5):
        v, right = plot.y_max * k / 4, plot.left + plot.width
        parts.append(f'<line x1="{plot.left}" y1="{plot.y(v):.1f}" x2="{right}" y2="{plot.y(v):.1f}" stroke="#eee"/>'
                     f'<text x="{plot.left - 4}" y="{plot.y(v) + 3:.1f}" text-anchor="end" '
                     f'style="fill:{theme.MUTED}">{fmt_tokens_short(v)}</text>')
    return parts


def _chart_limits(plot: _Plot, window: float, max_allowed: float) -> list[str]:
    """The window (solid red) and the largest request the context manager allows (dashed)."""
    right = plot.left + plot.width
    return [f'<line x1="{plot.left}" y1="{plot.y(value):.1f}" x2="{right}" y2="{plot.y(value):.1f}" {style}/>'
            f'<text x="{lx}" y="{plot.label_y(value):.1f}" text-anchor="{anchor}" style="fill:{theme.ERROR}">{label}</text>'
            for value, style, label, anchor, lx in (
                (window, 'stroke="#c0392b"', "window", "end", right),
                (max_allowed, 'stroke="#c0392b" stroke-dasharray="4,3"', "max allowed", "start", plot.left + 2))]


def _chart_dots(plot: _Plot, recs: Sequence[RequestRecord]) -> list[str]:
    """A dot at each request the context manager acted on, its tooltip saying what it did."""
    parts = []
    for i, r in enumerate(recs):
        # Orange: truncation fired; green: the file-read pass replaced reads instead; red: the
        # request is larger than the window (the API would reject it).
        colour = ("#c0392b" if r.over_window else "#f0ad4e" if r.keep is not None
                  else "#2e7d32" if r.newly_replaced else None)
        if colour is None:
            continue
        what = ("over the window" if r.over_window else f"keep {r.keep}" if r.keep is not None
                else f"{len(r.newly_replaced)} file reads replaced, nothing hidden")
        parts.append(f'<circle cx="{plot.x(i):.1f}" cy="{plot.y(r.tokens_sent):.1f}" r="{2 if r.over_window else 3}" '
                     f'fill="{colour}"><title>request {r.request}: {what}, range '
                     f'{fmt_range(r.deleted_range, "none")}</title></circle>')
    return parts


def _dot(colour: str) -> str:
    # A drawn dot, not a "●" character: it is a colour key (the chart's own dot colours), not text
    # that must read at 4.5:1; the words beside it say what it means.
    return (f'<span style="display:inline-block;width:8px;height:8px;border-radius:50%;'
            f'background:{colour};margin-right:3px"></span>')


DOTS_LEGEND = (f'<div style="font-size:11px;color:{theme.MUTED}">dots: '
               f'{_dot("#f0ad4e")}truncation fired · {_dot("#2e7d32")}file reads replaced, nothing hidden · '
               f'{_dot("#c0392b")}request larger than the window; hover a dot for its range</div>')


MESSAGE_TEXT = "white-space:pre-wrap;overflow-wrap:anywhere;margin:0"
STRIP_TEXT = "font-size:10px;margin:0;white-space:pre-wrap;word-break:break-all"
"""The strip as text (a character per message): it wraps at the panel's edge, never widens the panel."""


def chart_html(result: SimulationResult, marker: int | None = None) -> str:
    """The tokens chart with the legend of its dots."""
    return tokens_chart_svg(result, marker=marker) + DOTS_LEGEND


def display_table(result: SimulationResult) -> pd.DataFrame:
    """:meth:`SimulationResult.table` with the cache-read share as a percentage string."""
    df = result.table()
    df["cache-read share"] = [f"{v:.0%}" for v in df["cache-read share"]]
    return df


def table_html(result: SimulationResult, max_height: int | None = 320) -> str:
    """The per-request table as static HTML (scrolling when ``max_height`` is given)."""
    if max_height is None:
        return html_table(display_table(result))
    return panel_table(display_table(result), max_height, "font-size:11px")


# --- what the model would see --------------------------------------------------------------------

def history_indices(record: RequestRecord) -> list[int | None]:
    """History index of each sent message (None when the request does not map one to one)."""
    rest = start_of_rest(record.deleted_range)
    n = record.messages_sent
    if n != min(record.history_len, 2) + max(record.history_len - max(rest, 2), 0):
        return [None] * n
    return [p if p < 2 else rest + p - 2 for p in range(n)]


def _notice_of(text: str, summary: str | None) -> str | None:
    if summary is not None and text == summary:
        return "summary"
    for notice, label in NOTICES:
        if notice in text:
            return label
    return "missing result" if text == RESULT_MISSING else None


def _block_parts(block: object, limit: int) -> tuple[str, str]:
    """(label, text) of one content block."""
    if not isinstance(block, Mapping):
        return "?", str(block)
    match block:
        case {"type": "text"}:
            return "text", str(block.get("text", ""))
        case {"type": "tool_use"}:
            args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True, default=str)
            return f"tool_use {block.get('name', '')}", clip(args, limit)
        case {"type": "tool_result"}:
            return "tool_result", tool_result_text(block, "\n")
        case {"type": "thinking"}:
            return "thinking", str(block.get("thinking") or "[text omitted by the API]")
        case {"type": "image"}:
            return "image", "[image]"
        case {"type": kind}:
            return str(kind), json.dumps(block, default=str)[:limit]
        case _:
            return "None", json.dumps(block, default=str)[:limit]


def request_html(record: RequestRecord, *, limit: int = 600) -> str:
    """The exact request at ``record``: each message's role and blocks; notices and the summary
    highlighted; long texts cut in the middle to about ``limit`` characters (marked)."""
    head = (f"request {record.request}: {record.messages_sent} messages, ~{record.tokens_sent:,} tokens, "
            f"range {fmt_range(record.deleted_range, 'none')}")
    rows = [f'<div style="font-weight:bold;margin-bottom:4px">{esc(head)}</div>']
    for pos, (message, index) in enumerate(zip(record.sent, history_indices(record), strict=False)):
        role = str(message.get("role", "?"))
        where = f"#{pos}" + (f" (history {index})" if index is not None else "")
        colour = theme.USER_PANEL if role == "user" else theme.ASSISTANT_PANEL
        blocks = []
        for block in content_blocks(message):
            label, text = _block_parts(block, limit)
            notice = _notice_of(text, record.summary)
            style = _NOTICE_STYLE if notice else ""
            tag = f' <b style="color:{theme.WARN}">[{esc(notice)}]</b>' if notice else ""
            blocks.append(f'<div style="{style}"><span style="color:{theme.MUTED}">{esc(label)}</span>{tag}'
                          f'<pre style="{MESSAGE_TEXT}">{esc(clip(text, limit))}</pre></div>')
        rows.append(f'<div style="background:{colour};color:{theme.TEXT};margin:2px 0;padding:2px 4px;border-radius:3px">'
                    f'<b>{esc(role)}</b> <span style="color:{theme.MUTED}">{esc(where)}</span>{"".join(blocks)}</div>')
    return f'<div style="font-size:11px">{"".join(rows)}</div>'


def request_text(record: RequestRecord, *, limit: int = 300) -> str:
    """The exact request at ``record`` as plain text (notices marked with ``>>``)."""
    lines = [f"request {record.request}: {record.messages_sent} messages, ~{record.tokens_sent:,} tokens, "
             f"range {fmt_range(record.deleted_range, 'none')}"]
    for pos, (message, index) in enumerate(zip(record.sent, history_indices(record), strict=False)):
        where = f"#{pos}" + (f" (history {index})" if index is not None else "")
        lines.append(f"{message.get('role', '?')} {where}")
        for block in content_blocks(message):
            label, text = _block_parts(block, limit)
            notice = _notice_of(text, record.summary)
            mark = f">> [{notice}] " if notice else "   "
            lines.append(f"  {mark}{label}: {clip(text, limit)}".replace("\n", "\n      "))
    return "\n".join(lines)


def strategy_html(result: SimulationResult, request: int, *, limit: int = 300, table_height: int | None = 320) -> str:
    """One strategy's static column: strip, chart, table and the request at ``request``."""
    record = result.record(request)
    return (f'<div style="flex:1 1 320px;min-width:300px;border:1px solid {theme.BORDER};border-radius:4px;padding:6px">'
            f'<h4 style="margin:0 0 4px 0">{esc(result.label)}</h4>'
            f'{strip_svg(result, record)}<pre style="{STRIP_TEXT};margin:2px 0">{esc(strip_text(record))}</pre>'
            f'{chart_html(result, marker=record.request)}{table_html(result, table_height)}'
            f'<details><summary>what the model sees at request {record.request}</summary>'
            f'{request_html(record, limit=limit)}</details></div>')


def summary_df(results: Sequence[SimulationResult]) -> pd.DataFrame:
    """One row per strategy: truncations, hidden messages, peak and total tokens, cache reads."""
    import pandas as pd

    df = pd.DataFrame([r.summary_row() for r in results])
    if len(df):
        df["cache-read share"] = [f"{v:.0%}" for v in df["cache-read share"]]
    return df
