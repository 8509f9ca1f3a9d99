"""What a page shows of one cell, read off its nbformat JSON: the fields a ``find`` reply adds
(docs/bridge-protocol.md), as ``frontend/src/ops.ts`` reads them off the notebook's model. The
unattended front-end (:mod:`.nbformat_frontend`) answers with them; the kernel reads them where it
must know a prompt or a panel is seen (the ``%agent serve`` cell's cards), without reading every
cell's outputs (a notebook's images are most of its bytes)."""

from __future__ import annotations

import re
from typing import Sequence

from .bridge_types import BridgeResult, CellJSON

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MAX_WIDGETS = 20
"""At most this many widget ids are listed: a panel is one, a cell of hundreds is no panel."""


def shown_of(cells: Sequence[CellJSON], index: int) -> BridgeResult:
    """How many outputs the cell at ``index`` has and the widgets they view, whether its outputs
    are hidden (collapsed), and whether a collapsed Markdown heading above it hides the cell."""
    cell = cells[index]
    found: object = cell.get("outputs") if cell.get("cell_type", "code") == "code" else None
    outputs: list[object] = found if isinstance(found, list) else []
    widgets = [model for model in map(_widget_of, outputs) if model is not None]
    meta = cell.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    jupyter = meta.get("jupyter")
    hidden = meta.get("collapsed") is True or isinstance(jupyter, dict) and jupyter.get("outputs_hidden") is True
    return {"outputs": len(outputs), "widgets": widgets[:MAX_WIDGETS], "outputs_hidden": hidden,
            "in_collapsed_section": under_collapsed_heading(cells[:index])}


def _widget_of(output: object) -> str | None:
    """The model id of the widget an output views, if it is a widget's view."""
    data = output.get("data") if isinstance(output, dict) else None
    view = data.get(WIDGET_VIEW) if isinstance(data, dict) else None
    model = view.get("model_id") if isinstance(view, dict) else None
    return model if isinstance(model, str) else None


def under_collapsed_heading(above: Sequence[CellJSON]) -> bool:
    """Whether a cell after ``above`` is hidden under a collapsed Markdown heading: JupyterLab keeps
    ``jp-MarkdownHeadingCollapsed`` on the heading's cell, which hides every cell up to the next
    cell whose level is the same or higher (a Markdown cell's level is its highest heading's)."""
    open_sections: list[tuple[int, bool]] = []  # (level, collapsed) of the headings still enclosing
    for cell in above:
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        level = heading_level("".join(source) if isinstance(source, list) else str(source))
        if level is None:
            continue
        open_sections = [s for s in open_sections if s[0] < level]
        meta = cell.get("metadata")
        open_sections.append((level, isinstance(meta, dict) and meta.get("jp-MarkdownHeadingCollapsed") is True))
    return any(collapsed for _level, collapsed in open_sections)


_LINE_ENDS = re.compile(r"\r\n|\r|\n")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HTML = re.compile(r"<h([1-6])[\s>/]", re.IGNORECASE)


def heading_level(markdown: str) -> int | None:
    """The level of a Markdown cell's highest heading (1 is highest), as JupyterLab's Markdown
    parser finds them: ``#`` headings indented up to 3 spaces, underlined ones (``===`` for 1,
    ``---`` for 2, under a line of text), HTML ``<h1>``–``<h6>``; none inside a fenced code block.
    None: the cell is no heading (it neither starts nor ends a section)."""
    levels: list[int] = []
    fence: str | None = None  # the open code fence's marker
    text_above = False  # the line above is a paragraph's: a ``---`` under it underlines a heading
    for line in _LINE_ENDS.split(markdown):  # not splitlines(): JupyterLab ends lines at \r and \n only
        opening = _FENCE.match(line)
        if opening and opening.group(1)[0] == "`" and "`" in line[opening.end():]:
            opening = None  # a backtick fence's info string holds no backtick: this line is text
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line[opening.end():].strip():
                fence = None
            continue
        if opening:
            fence, text_above = opening.group(1), False
            continue
        level = _line_level(line, text_above)
        if level is not None:
            levels.append(level)
        text_above = level is None and bool(line.strip())
    return min(levels) if levels else None


def _line_level(line: str, text_above: bool) -> int | None:
    """The level of the heading ``line`` makes (outside a code fence), if it makes one."""
    if atx := _ATX.match(line):
        return len(atx.group(1))
    if text_above and (underline := _SETEXT.match(line)):
        return 1 if underline.group(1)[0] == "=" else 2
    html = _HTML.search(line)
    return int(html.group(1)) if html else None


__all__ = ["MAX_WIDGETS", "WIDGET_VIEW", "heading_level", "shown_of", "under_collapsed_heading"]
