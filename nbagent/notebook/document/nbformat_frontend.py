"""The bridge's front-end end, over an nbformat notebook: what lets an unattended run (``make
demo``, ``python -m nbagent.notebook.autorun``, the teaching-notebook tests) get the agent's cells
and the notebook tools, as JupyterLab does.

:class:`NotebookDocument` answers the protocol of docs/bridge-protocol.md on the notebook being
executed: ``read``, ``insert``, ``replace``, ``delete``, ``move``. Like the browser extension it
never marks a cell trusted (``insert`` drops ``metadata.trusted``; ``replace`` touches only the
``nbagent`` metadata key), and, the notebook being the user's, it never deletes the cell that is
running or a cell without nbagent's metadata mark. The run executes the cells that were there
when it started (as Run All in JupyterLab runs the cells it queued), never the ones inserted.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any, Callable

from .bridge import PROTOCOL_VERSION
from .cells import MARK

FRONTEND_NAME = "nbclient"


class NotebookDocument:
    """One notebook's cells as the bridge sees them.

    The ops change :attr:`cells`, a list of the notebook's own cell objects; :meth:`sync` copies
    that order into the run's list between cells, because nbclient writes a cell back to the index
    it started at once it ends (a cell removed above the running one must not shift it meanwhile).
    """

    def __init__(self, cells: list[Any], path: str, make_node: Callable[[Any], Any] = copy.deepcopy) -> None:
        self.run_cells = cells
        self.cells = list(cells)
        self.path = path
        self.make_node = make_node
        """Turns JSON into the notebook's own type (``nbformat.from_dict``), so it writes as usual."""
        self.running: str | None = None
        """The id of the cell being executed (the agent cell asking), never deleted."""
        for cell in cells:
            if not cell.get("id"):
                cell["id"] = uuid.uuid4().hex[:8]

    def sync(self) -> None:
        """The run's list becomes the document's order (call when no cell is running)."""
        self.run_cells[:] = self.cells

    def hello(self) -> dict[str, Any]:
        return {"type": "hello", "version": PROTOCOL_VERSION, "frontend": FRONTEND_NAME, "path": self.path}

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request (every request gets exactly one)."""
        args = {**(request.get("args") or {}), **{k: v for k, v in request.items() if k not in ("type", "id", "op", "args")}}
        op = getattr(self, f"_op_{request.get('op')}", None)
        if op is None:
            return {"type": "reply", "id": request.get("id"), "ok": False, "error": f"unknown op {request.get('op')!r}"}
        try:
            result = op(**args)
        except (KeyError, ValueError, TypeError) as exc:
            return {"type": "reply", "id": request.get("id"), "ok": False, "error": str(exc).strip("'\"")}
        return {"type": "reply", "id": request.get("id"), "ok": True, "result": result}

    def _index(self, cell_id: Any) -> int:
        for i, cell in enumerate(self.cells):
            if cell.get("id") == cell_id:
                return i
        raise KeyError(f"no cell with id {cell_id}")

    def _op_read(self) -> dict[str, Any]:
        return {"path": self.path, "cells": [copy.deepcopy(dict(c)) for c in self.cells]}

    def _op_insert(self, cell: dict[str, Any], after_id: str | None = None, index: int | None = None) -> dict[str, Any]:
        new = copy.deepcopy(dict(cell))
        new["id"] = uuid.uuid4().hex[:8]
        new["metadata"] = {k: v for k, v in (new.get("metadata") or {}).items() if k != "trusted"}
        if new.get("cell_type", "code") == "code":
            new.setdefault("outputs", [])
            new.setdefault("execution_count", None)
        at = self._index(after_id) + 1 if after_id else len(self.cells) if index is None else min(index, len(self.cells))
        self.cells.insert(at, self.make_node(new))
        return {"id": new["id"], "index": at}

    def _op_replace(self, cell_id: str, **changes: Any) -> dict[str, Any]:
        cell = self.cells[self._index(cell_id)]
        for key in ("source", "outputs", "execution_count", "cell_type"):
            if key in changes:
                cell[key] = self.make_node(copy.deepcopy(changes[key]))
        if "metadata" in changes:
            mark = (changes["metadata"] or {}).get(MARK)
            cell.setdefault("metadata", {})
            if mark is None:
                cell["metadata"].pop(MARK, None)
            else:
                cell["metadata"][MARK] = self.make_node(copy.deepcopy(mark))
        return {"id": cell_id}

    def _op_delete(self, ids: list[str]) -> dict[str, Any]:
        doomed = {i for i in ids if i != self.running}
        keep = [c for c in self.cells if c.get("id") not in doomed or not (c.get("metadata") or {}).get(MARK)]
        deleted = len(self.cells) - len(keep)
        self.cells[:] = keep
        return {"deleted": deleted}

    def _op_move(self, cell_id: str, index: int) -> dict[str, Any]:
        cell = self.cells.pop(self._index(cell_id))
        at = max(0, min(int(index), len(self.cells)))
        self.cells.insert(at, cell)
        return {"index": at}


__all__ = ["FRONTEND_NAME", "NotebookDocument"]
