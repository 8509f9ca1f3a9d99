"""A tool call's preview (:class:`~nbagent.engine.contracts.events.CallPreview`) as text and HTML:
the change the user is asked to allow, e.g. a notebook cell as it is and as it will be.

A unified diff (one column: it fits a narrow panel and reads the same in a terminal), whole for a
cell-sized text, unchanged runs longer than ``2 * CONTEXT`` lines folded to one line. Every
character is escaped and hidden characters are shown (as in the python tool's card); removed and
added lines sit on panels tinted from the theme's own error and success colours with the theme's
text colour, so they read in JupyterLab Light and Dark, and each line carries its ``-`` / ``+``
mark too (colour is never the only sign).
"""

from __future__ import annotations

import difflib
from typing import Literal, NamedTuple, Sequence

from ...display import theme
from ...display.html import esc
from ...engine.contracts.events import CallPreview
from .render import INPUT_BOX_HEIGHT, STYLE, highlight_revealed, layout_warning, reveal_hidden

CONTEXT = 3
"""Unchanged lines kept around each change; longer unchanged runs are folded."""
MATCHED_LINES = 5_000
"""Above this many lines in all, the texts are not matched line by line (difflib is quadratic in
the worst case): the old text is shown removed and the new one added."""
REMOVED_PANEL = theme.tint("--jp-error-color1", "#d32f2f", 16)
ADDED_PANEL = theme.tint("--jp-success-color1", "#388e3c", 16)


class Row(NamedTuple):
    """One line of the diff: ``tag`` is ``=`` (unchanged), ``-``, ``+`` or ``…`` (folded lines)."""

    tag: Literal["=", "-", "+", "…"]
    old: int | None
    new: int | None
    text: str


def _lines(text: str | None) -> list[str]:
    return [] if text is None else text.split("\n")


def _opcodes(a: list[str], b: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    if len(a) + len(b) > MATCHED_LINES:
        return [("replace", 0, len(a), 0, len(b))]
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def diff_rows(before: str | None, after: str | None, context: int = CONTEXT) -> list[Row]:
    """The rows of a unified diff from ``before`` to ``after`` (None: no text), numbered from 1."""
    a, b = _lines(before), _lines(after)
    rows: list[Row] = []
    codes = _opcodes(a, b)
    for n, (op, i1, i2, j1, j2) in enumerate(codes):
        if op == "equal":
            keep_head = 0 if n == 0 else context
            keep_tail = 0 if n == len(codes) - 1 else context
            if i2 - i1 > keep_head + keep_tail + 1:
                rows += [Row("=", i1 + k + 1, j1 + k + 1, a[i1 + k]) for k in range(keep_head)]
                rows.append(Row("…", None, None, f"{i2 - i1 - keep_head - keep_tail} unchanged line(s)"))
                rows += [Row("=", i2 - k, j2 - k, a[i2 - k - 1]) for k in reversed(range(keep_tail))]
            else:
                rows += [Row("=", i1 + k + 1, j1 + k + 1, a[i1 + k]) for k in range(i2 - i1)]
            continue
        rows += [Row("-", i + 1, None, a[i]) for i in range(i1, i2)]
        rows += [Row("+", None, j + 1, b[j]) for j in range(j1, j2)]
    return rows


def _counts(preview: CallPreview) -> str:
    """``2 lines removed, 3 added; ⚠ 1 invisible …`` (what the user should know before reading)."""
    rows = diff_rows(preview.before, preview.after) if preview.before != preview.after else []
    removed, added = sum(r.tag == "-" for r in rows), sum(r.tag == "+" for r in rows)
    text = "\n".join(t for t in (preview.before, preview.after) if t is not None)
    lines = len(_lines(preview.before))
    summary = f"{removed} line(s) removed, {added} added" if rows else f"{lines} line(s), unchanged by this call"
    hidden = reveal_hidden(text)[1]
    if hidden:
        summary += (f"; ⚠ {hidden} invisible or direction-changing character(s), shown as ⟦U+…⟧: "
                    "the code may not do what it appears to")
    # Code only: a Markdown cell's paragraph is one long line as a rule (and runs nothing).
    code = preview.after if preview.language != "markdown" else None
    return summary + (layout_warning(code) if code is not None else "")


def preview_plain(preview: CallPreview) -> str:
    """The preview as plain text: the summary, then ``- `` / ``+ `` lines (or the code as it is)."""
    lines = [reveal_hidden(preview.summary)[0]]  # it may hold an id the model or a client gave
    if preview.before is not None and preview.before == preview.after:
        lines += ["  " + line for line in reveal_hidden(preview.before)[0].split("\n")]
    elif preview.before is not None or preview.after is not None:
        marks = {"=": "  ", "-": "- ", "+": "+ ", "…": "  … "}
        lines += [marks[r.tag] + reveal_hidden(r.text)[0] for r in diff_rows(preview.before, preview.after)]
    if preview.before is not None or preview.after is not None:
        lines.append(f"({_counts(preview)})")
    return "\n".join(lines)


_CELL = "padding:0 6px;vertical-align:top"
_GUTTER = f"{_CELL};text-align:right;user-select:none;border-right:1px solid {theme.BORDER}"
_PANELS = {"-": REMOVED_PANEL, "+": ADDED_PANEL, "=": theme.PAGE, "…": theme.PAGE}


def _row_html(row: Row) -> str:
    if row.tag == "…":
        return (f'<tr class="nbagent-diff-fold"><td colspan="4" style="{_CELL};{STYLE["muted"]};font-style:italic">'
                f"⋯ {esc(row.text)}</td></tr>")
    old, new = ("" if n is None else str(n) for n in (row.old, row.new))
    mark = {"=": " ", "-": "−", "+": "+"}[row.tag]
    kind = {"=": "same", "-": "removed", "+": "added"}[row.tag]
    marked, _ = reveal_hidden(row.text)
    return (f'<tr class="nbagent-diff-{kind}" style="background:{_PANELS[row.tag]};color:{theme.TEXT}">'
            f'<td style="{_GUTTER}">{old}</td><td style="{_GUTTER}">{new}</td><td style="{_CELL};user-select:none">{mark}</td>'
            f'<td style="{_CELL};white-space:pre-wrap;word-break:break-word;width:100%">{esc(marked)}</td></tr>')


def _diff_html(preview: CallPreview) -> str:
    rows = "".join(_row_html(r) for r in diff_rows(preview.before, preview.after))
    return (f'<table class="nbagent-diff" style="border-collapse:collapse;width:100%;margin:2px 0;'
            f'font-family:var(--jp-code-font-family, monospace);font-size:var(--jp-code-font-size, 13px);'
            f'border:1px solid {theme.BORDER}">{rows}</table>')


def preview_html(preview: CallPreview) -> str:
    """The preview as HTML that runs nothing: the summary, the diff (or the code that will run) in a
    box that scrolls when long, and a line with what changes and any hidden characters."""
    head = f'<div class="nbagent-preview-summary" style="font-weight:bold">{esc(reveal_hidden(preview.summary)[0])}</div>'
    if preview.before is None and preview.after is None:
        return head
    if preview.before == preview.after:
        body = highlight_revealed(preview.before or "", preview.language)
    else:
        body = _diff_html(preview)
    counts = _counts(preview)
    style = STYLE["warn"] if "⚠" in counts else STYLE["muted"]
    return (f'<div class="nbagent-preview">{head}<div style="max-height:{INPUT_BOX_HEIGHT};overflow:auto">{body}</div>'
            f'<div style="{style};font-size:smaller">{esc(counts)}</div></div>')


__all__ = ["Row", "diff_rows", "preview_html", "preview_plain"]
