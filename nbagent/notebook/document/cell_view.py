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
_HEADING = re.compile(r"^(#{1,6})\s", re.MULTILINE)


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
    heading of its level or higher (a cell's level is its first ``#`` heading's)."""
    open_sections: list[tuple[int, bool]] = []  # (level, collapsed) of the headings still enclosing
    for cell in above:
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        heading = _HEADING.search("".join(source) if isinstance(source, list) else str(source))
        if heading is None:
            continue
        level = len(heading.group(1))
        open_sections = [s for s in open_sections if s[0] < level]
        meta = cell.get("metadata")
        open_sections.append((level, isinstance(meta, dict) and meta.get("jp-MarkdownHeadingCollapsed") is True))
    return any(collapsed for _level, collapsed in open_sections)


__all__ = ["MAX_WIDGETS", "WIDGET_VIEW", "shown_of", "under_collapsed_heading"]
