"""A front-end for the bridge protocol in Python, for tests without a browser: a list of cells
that answers each request the way docs/notebook-bridge.md says (the real extension is tested in
JupyterLab and Notebook 7 by tests/e2e)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from nbagent.notebook.document.bridge import Bridge


class FakeFrontEnd:
    def __init__(self, cells: list[dict[str, Any]] | None = None) -> None:
        self._ids = itertools.count(1)
        self.cells = [self._with_id(c) for c in (cells or [])]
        self.requests: list[dict[str, Any]] = []
        self.answer = True  # False: a front-end that went away

    def _with_id(self, cell: dict[str, Any]) -> dict[str, Any]:
        cell = copy.deepcopy(cell)
        cell.setdefault("id", f"c{next(self._ids)}")
        cell.setdefault("metadata", {})
        if cell.get("cell_type", "code") == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
        return cell

    def connect(self, bridge: Bridge, path: str = "analysis.ipynb") -> Bridge:
        front = self

        class Comm:
            comm_id = "fake-comm"

            def send(self, data: dict[str, Any]) -> None:
                front.requests.append(data)
                if front.answer:
                    bridge._on_data(front.reply(data))

            def close(self) -> None:
                pass

        bridge._comm = Comm()
        bridge._on_data({"type": "hello", "version": 1, "frontend": "jupyterlab", "path": path})
        return bridge

    def _index(self, cell_id: Any) -> int:
        for i, c in enumerate(self.cells):
            if c["id"] == cell_id:
                return i
        raise KeyError(f"no cell with id {cell_id}")

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            result = getattr(self, "op_" + request["op"])(request)
        except (KeyError, AttributeError) as exc:
            return {"type": "reply", "id": request["id"], "ok": False, "error": str(exc)}
        return {"type": "reply", "id": request["id"], "ok": True, "result": result}

    def op_read(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"path": "analysis.ipynb", "cells": copy.deepcopy(self.cells)}

    def op_insert(self, r: dict[str, Any]) -> dict[str, Any]:
        cell = self._with_id(r["cell"])
        at = self._index(r["after_id"]) + 1 if r.get("after_id") else r.get("index")
        at = len(self.cells) if at is None else at
        self.cells.insert(at, cell)
        return {"id": cell["id"], "index": at}

    def op_replace(self, r: dict[str, Any]) -> dict[str, Any]:
        cell = self.cells[self._index(r["cell_id"])]
        for key in ("source", "outputs", "execution_count", "cell_type"):
            if key in r:
                cell[key] = r[key]
        if "metadata" in r:  # nbagent's key only, as the extension does
            if r["metadata"].get("nbagent") is None:
                cell["metadata"].pop("nbagent", None)
            else:
                cell["metadata"]["nbagent"] = r["metadata"]["nbagent"]
        return {"id": cell["id"]}

    def op_delete(self, r: dict[str, Any]) -> dict[str, Any]:
        before = len(self.cells)
        self.cells = [c for c in self.cells if c["id"] not in r["ids"]]
        return {"deleted": before - len(self.cells)}

    def op_move(self, r: dict[str, Any]) -> dict[str, Any]:
        cell = self.cells.pop(self._index(r["cell_id"]))
        self.cells.insert(r["index"], cell)
        return {"index": self._index(r["cell_id"])}

    def sources(self) -> list[str]:
        return [c["source"] for c in self.cells]
