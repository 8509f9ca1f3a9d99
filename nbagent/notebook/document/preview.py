"""What a notebook tool call will change, for its permission question (the tools' ``preview``).

The user decides on the cell as it is and as it will be, read from the live document when the
question is asked: ``notebook_edit`` shows a diff (a new cell as added lines, a deleted one as
removed lines), ``notebook_run`` the source that will run. Pure functions of the document's cells,
so the tools (:mod:`.tools`) only fetch the cells and remember what was shown.
"""

from __future__ import annotations

from typing import Callable, Mapping

from ...engine.contracts.events import CallPreview
from .bridge_types import CellJSON
from .fetches import fetch_warning


def cell_source(cell: CellJSON) -> str:
    """A cell's source as one string (nbformat allows a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _find(cells: list[CellJSON], cell_id: object) -> tuple[int, CellJSON] | None:
    for index, cell in enumerate(cells):
        if cell_id is not None and cell.get("id") == cell_id:
            return index, cell
    return None


def _language(cell_type: object) -> str:
    return "markdown" if cell_type == "markdown" else "python"


def _where(index: int, cell: CellJSON) -> str:
    return f"cell {index} (id {cell.get('id')}, {cell.get('cell_type', 'code')})"


def _insert_place(cells: list[CellJSON], after_id: object, index: object) -> str:
    if after_id:
        found = _find(cells, after_id)
        return f"after {_where(*found)}" if found else f"after cell {after_id}, which is not in the notebook (it will fail)"
    if not isinstance(index, int) or index >= len(cells):
        return "at the end of the notebook"
    return f"at index {index}"


def edit_preview(cells: list[CellJSON], tool_input: Mapping[str, object],
                 unchanged: Callable[[str, str], bool]) -> CallPreview:
    """The ``notebook_edit`` call ``tool_input`` against the document's ``cells``.

    ``unchanged(cell_id, source)`` says whether the cell still holds what the model read: the
    summary warns when the edit will be refused because it does not.
    """
    action, cell_id = tool_input.get("action"), tool_input.get("cell_id")
    given, cell_type = tool_input.get("source"), tool_input.get("cell_type") or "code"
    source = given if isinstance(given, str) else None
    fetches = fetch_warning(source) if cell_type == "markdown" and source and action in ("insert", "replace") else ""
    if action == "insert":
        place = _insert_place(cells, cell_id, tool_input.get("index"))
        return CallPreview(f"insert a new {cell_type} cell {place}{fetches}", None, source, _language(cell_type))
    found = _find(cells, cell_id)
    if found is None:
        return CallPreview(f"{action} cell {cell_id}: no such cell in the notebook (the edit will fail)",
                           None, source if action == "replace" else None, _language(cell_type))
    index, cell = found
    current = cell_source(cell)
    stale = "" if unchanged(str(cell_id), current) else \
        " — the cell is not what the model last read, so this edit will be refused"
    if action == "replace":
        kind = cell.get("cell_type", "code")
        change = f", {kind} → {cell_type}" if kind != cell_type else ""
        return CallPreview(f"replace {_where(index, cell)}{change}{stale}{fetches}", current, source or "",
                           _language(cell_type))
    if action == "delete":
        return CallPreview(f"delete {_where(index, cell)}{stale}", current, None, _language(cell.get("cell_type")))
    to = tool_input.get("index")
    return CallPreview(f"move {_where(index, cell)} to index {to}{stale}", current, current,
                       _language(cell.get("cell_type")))


def run_preview(cells: list[CellJSON], cell_id: str) -> CallPreview:
    """The ``notebook_run`` of ``cell_id``: the source that will run (as it is now)."""
    found = _find(cells, cell_id)
    if found is None:
        return CallPreview(f"run cell {cell_id}: no such cell in the notebook (the run will fail)")
    index, cell = found
    if cell.get("cell_type") != "code":
        return CallPreview(f"run {_where(index, cell)}: only code cells run (the run will fail)")
    source = cell_source(cell)
    return CallPreview(f"run {_where(index, cell)} in the kernel", source, source)


__all__ = ["cell_source", "edit_preview", "run_preview"]
