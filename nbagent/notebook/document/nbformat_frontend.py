"""The bridge's front-end end, over an nbformat notebook: what lets an unattended run (``make
demo``, ``python -m nbagent.notebook.autorun``, the teaching-notebook tests) get the agent's cells
and the notebook tools, as JupyterLab does.

:class:`NotebookDocument` answers the protocol of docs/bridge-protocol.md on the notebook being
executed: ``read``, ``insert``, ``replace``, ``delete``, ``move``, ``find`` (protocol 2). Like the
browser extension it never marks a cell trusted (``insert`` drops ``metadata.trusted``; ``replace``
touches only the ``nbagent`` metadata key), stamps what nbagent made (``made``: the cell's id, the
source's sha256 and the execution count, computed here, never taken from a request), and removes a
cell only where the browser extension's guard would (``frontend/src/guard.ts``): a code cell
carrying the expected mark, not a copy, unedited and not run again since, not protected, not
running and not queued. The run
executes the cells that were there when it started (as Run All in JupyterLab runs the cells it
queued), never the ones inserted.
"""

from __future__ import annotations

import copy
import hashlib
import uuid
from typing import TYPE_CHECKING, Mapping, Protocol, TypeVar, cast

from .bridge import PROTOCOL_VERSION
from .bridge_types import BridgeReply, BridgeResult, CellJSON, Hello, KeptCell
from .cell_view import shown_of
from .cells import MARK

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject, JSONValue

T = TypeVar("T")


class MakeNode(Protocol):
    """Turns JSON into the notebook's own type (``nbformat.from_dict``: a dict becomes a dict subclass)."""

    def __call__(self, value: T, /) -> T: ...

FRONTEND_NAME = "nbclient"
CELL_TYPES = ("code", "markdown", "raw")


class NotebookDocument:
    """One notebook's cells as the bridge sees them.

    The ops change :attr:`cells`, a list of the notebook's own cell objects; :meth:`sync` copies
    that order into the run's list between cells, because nbclient writes a cell back to the index
    it started at once it ends (a cell removed above the running one must not shift it meanwhile).
    """

    def __init__(self, cells: list[JSONObject], path: str, make_node: MakeNode = copy.deepcopy) -> None:
        self.run_cells = cells
        self.cells = list(cells)
        self.path = path
        self.make_node = make_node
        """Turns JSON into the notebook's own type (``nbformat.from_dict``), so it writes as usual."""
        self.running: str | None = None
        """The id of the cell being executed (the agent cell asking), never deleted."""
        self.queued: set[str] = set()
        """Ids of the cells the run will still execute (Run All's queue): never deleted either."""
        for cell in cells:
            if not cell.get("id"):
                cell["id"] = uuid.uuid4().hex[:8]

    def sync(self) -> None:
        """The run's list becomes the document's order (call when no cell is running)."""
        self.run_cells[:] = self.cells

    def hello(self) -> Hello:
        return {"type": "hello", "version": PROTOCOL_VERSION, "frontend": FRONTEND_NAME, "path": self.path}

    def answer(self, request: Mapping[str, object]) -> BridgeReply:
        """The reply to one request (every request gets exactly one)."""
        nested = request.get("args")
        args = {**(nested if isinstance(nested, dict) else {}),
                **{k: v for k, v in request.items() if k not in ("type", "id", "op", "args", "client")}}
        given = request.get("id")
        reply: BridgeReply = {"type": "reply", "id": given} if isinstance(given, int) else {"type": "reply"}
        op = getattr(self, f"_op_{request.get('op')}", None)
        if op is None:
            return {**reply, "ok": False, "error": f"unknown op {request.get('op')!r}"}
        try:
            result: BridgeResult = op(**args)
        except (KeyError, ValueError, TypeError) as exc:
            return {**reply, "ok": False, "error": str(exc).strip("'\"")}
        return {**reply, "ok": True, "result": result}

    def _index(self, cell_id: object) -> int:
        for i, cell in enumerate(self.cells):
            if cell.get("id") == cell_id:
                return i
        raise KeyError(f"no cell with id {cell_id}")

    def _op_read(self) -> BridgeResult:
        # nbformat validated these cells when it read the notebook, and the ops keep their shape.
        return {"path": self.path, "cells": [cast("CellJSON", copy.deepcopy(dict(c))) for c in self.cells]}

    def _op_insert(self, cell: JSONObject, after_id: str | None = None, index: int | None = None) -> BridgeResult:
        new = copy.deepcopy(dict(cell))
        new["id"] = new_id = uuid.uuid4().hex[:8]
        given = new.get("metadata")
        metadata: JSONObject = {k: v for k, v in given.items() if k != "trusted"} if isinstance(given, dict) else {}
        new["metadata"] = metadata
        if new.get("cell_type", "code") == "code":
            new.setdefault("outputs", [])
            new.setdefault("execution_count", None)
        mark = metadata.get(MARK)
        if isinstance(mark, dict):
            metadata[MARK] = {**mark, "made": {"cell_id": new_id, **_made(new, source=True, count=True)}}
        at = self._index(after_id) + 1 if after_id else len(self.cells) if index is None else min(index, len(self.cells))
        self.cells.insert(at, self.make_node(new))
        return {"id": new_id, "index": at}

    def _op_replace(self, cell_id: str, **changes: JSONValue) -> BridgeResult:
        cell = self.cells[self._index(cell_id)]
        before = dict(_mark(cell) or {}).get("made")
        kind = changes.get("cell_type", cell.get("cell_type", "code"))
        if kind not in CELL_TYPES:
            raise ValueError(f"cell_type must be one of {', '.join(CELL_TYPES)}")
        if kind != "code" and ("outputs" in changes or "execution_count" in changes):
            # As the browser extension refuses it: nbformat refuses a notebook with such a cell.
            raise ValueError(f"cell {cell_id} is a {kind} cell: only code cells have outputs")
        if kind != cell.get("cell_type", "code"):
            # Another type, as the browser extension rebuilds the cell (its type, text and metadata): a
            # code cell has outputs and a count (none yet) and no attachments, a Markdown or raw cell no
            # outputs (nbformat refuses the notebook otherwise).
            for key in ("outputs", "execution_count", "attachments"):
                cell.pop(key, None)
            if changes["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = self.make_node([]), None
        for key in ("source", "outputs", "execution_count", "cell_type"):
            if key in changes:
                cell[key] = self.make_node(copy.deepcopy(changes[key]))
        if "metadata" in changes:
            given = changes["metadata"]
            mark = given.get(MARK) if isinstance(given, dict) else None
            metadata = self._metadata(cell)
            if mark is None:
                metadata.pop(MARK, None)
            else:
                metadata[MARK] = self.make_node(copy.deepcopy(mark))
        mark = _mark(cell)
        if mark is not None:  # ``made`` is this front-end's: kept, updated for what the replace wrote
            made: JSONObject = {**(before if isinstance(before, dict) else {}),
                                **_made(cell, source="source" in changes, count="execution_count" in changes)}
            self._metadata(cell)[MARK] = self.make_node({**{k: v for k, v in mark.items() if k != "made"},
                                                     **({"made": made} if made else {})})
        return {"id": cell_id}

    def _metadata(self, cell: JSONObject) -> JSONObject:
        """The cell's metadata, made (in the notebook's own type) where it has none."""
        metadata = cell.get("metadata")
        if not isinstance(metadata, dict):
            metadata = cell["metadata"] = self.make_node({})
        return metadata

    def _op_delete(self, ids: list[str], expect: JSONObject, protect: list[str] | None = None) -> BridgeResult:
        if not isinstance(expect, dict) or not expect.get("origin"):
            raise ValueError("delete needs expect.origin (bridge protocol 2)")
        removed: list[str] = []
        kept: list[KeptCell] = []
        for cell_id in dict.fromkeys(ids):  # each looked up as it goes
            at = next((i for i, c in enumerate(self.cells) if c.get("id") == cell_id), None)
            reason = "missing" if at is None else self._why_kept(self.cells[at], expect, set(protect or ()))
            if reason is not None or at is None:
                kept.append({"id": cell_id, "reason": reason or "missing"})
                continue
            del self.cells[at]
            removed.append(cell_id)
        return {"deleted": len(removed), "removed": removed, "kept": kept}

    def _why_kept(self, cell: JSONObject, expect: JSONObject, protect: set[str]) -> str | None:
        """The browser guard's reasons (guard.ts ``whyKept``), in the same order."""
        cell_id = cell.get("id")
        if cell_id in protect:
            return "protected"
        if cell.get("cell_type", "code") != "code":
            return "not-code"
        if cell_id == self.running or cell_id in self.queued:
            return "running"
        mark = _mark(cell)
        if mark is None or mark.get("origin") != expect["origin"]:
            return "not-nbagent" if mark is None else "other-origin"
        for key in ("session", "agent_cell"):
            if key in expect and mark.get(key) != expect[key]:
                return f"other-{key.replace('_', '-')}"
        kinds, turns, after = expect.get("kinds", ["code"]), expect.get("turns"), expect.get("after_turn")
        if not isinstance(kinds, list) or mark.get("kind") not in kinds:
            return "other-kind"
        turn = mark.get("turn")
        if ("turns" in expect and not (isinstance(turns, list) and turn in turns)) or ("after_turn" in expect and not (
                isinstance(turn, int) and isinstance(after, int) and turn > after)):
            return "other-turn"
        made = mark.get("made")
        if not isinstance(made, dict):
            return "edited"
        if made.get("cell_id") != cell_id:  # a copy: same metadata, another id
            return "copied"
        if made.get("source_sha256") != _sha256(cell.get("source", "")):
            return "edited"
        count = cell.get("execution_count")
        return "re-run" if count is not None and count != made.get("execution_count") else None

    def _op_find(self, cell_id: str) -> BridgeResult:
        at = next((i for i, c in enumerate(self.cells) if c.get("id") == cell_id), -1)
        found: BridgeResult = {"index": at, "running": at >= 0 and (cell_id == self.running or cell_id in self.queued)}
        return {**found, **shown_of(cast("list[CellJSON]", self.cells), at)} if at >= 0 else found

    def _op_move(self, cell_id: str, index: int) -> BridgeResult:
        cell = self.cells.pop(self._index(cell_id))
        at = max(0, min(int(index), len(self.cells)))
        self.cells.insert(at, cell)
        return {"index": at}


def _mark(cell: JSONObject) -> JSONObject | None:
    metadata = cell.get("metadata")
    mark = metadata.get(MARK) if isinstance(metadata, dict) else None
    return mark if isinstance(mark, dict) else None


def _sha256(source: object) -> str:
    return hashlib.sha256(("".join(source) if isinstance(source, list) else str(source)).encode()).hexdigest()


def _made(cell: JSONObject, *, source: bool, count: bool) -> JSONObject:
    """The stamps of what nbagent wrote: the source's hash, the execution count."""
    made: JSONObject = {}
    if source:
        made["source_sha256"] = _sha256(cell.get("source", ""))
    if count and cell.get("cell_type", "code") == "code":
        made["execution_count"] = cell.get("execution_count")
    return made


__all__ = ["FRONTEND_NAME", "NotebookDocument"]
