"""A front-end for the bridge protocol in Python, for tests without a browser: a list of cells
that answers each request the way docs/bridge-protocol.md says (the real extension's operations
are unit-tested against a real YNotebook in frontend/test/, and in JupyterLab and Notebook 7 by
tests/e2e). ``delete`` applies the same guard as frontend/src/guard.ts, so the kernel's tests see
the cells a real front-end would keep; ``version=1`` plays an old extension."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from typing import Any

from nbagent.engine.contracts.json_types import JSONObject
from nbagent.notebook.document.bridge import Bridge
from nbagent.notebook.document.cell_view import shown_of


class FakeFrontEnd:
    def __init__(self, cells: list[dict[str, Any]] | None = None, version: int = 2) -> None:
        self.version = version
        self.running: set[str] = set()  # ids of cells running or queued ([*])
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
        bridge._on_data({"type": "hello", "version": self.version, "frontend": "jupyterlab", "path": path})
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
        cells = _delivered(self.cells)
        if r.get("lean") is True:  # as ops.ts: no outputs, attachments nor signed record
            cells = [_lean(c) for c in cells]
        return {"path": "analysis.ipynb", "cells": cells}

    def op_insert(self, r: dict[str, Any]) -> dict[str, Any]:
        cell = self._with_id(r["cell"])
        mark = cell["metadata"].get("nbagent")
        if isinstance(mark, dict) and self.version >= 2:
            made: JSONObject = {"cell_id": cell["id"], "source_sha256": _hash(cell["source"])}  # as stampNew
            if cell.get("cell_type", "code") == "code":
                made["execution_count"] = cell.get("execution_count")
            cell["metadata"]["nbagent"] = {**mark, "made": made}
        at = self._index(r["after_id"]) + 1 if r.get("after_id") else r.get("index")
        at = len(self.cells) if at is None else at
        self.cells.insert(at, cell)
        return {"id": cell["id"], "index": at}

    def op_replace(self, r: dict[str, Any]) -> dict[str, Any]:
        cell = self.cells[self._index(r["cell_id"])]
        before = (cell["metadata"].get("nbagent") or {}).get("made")
        for key in ("source", "outputs", "execution_count", "cell_type"):
            if key in r:
                cell[key] = r[key]
        if "metadata" in r:  # nbagent's key only, as the extension does
            if r["metadata"].get("nbagent") is None:
                cell["metadata"].pop("nbagent", None)
            else:
                cell["metadata"]["nbagent"] = dict(r["metadata"]["nbagent"])
        mark = cell["metadata"].get("nbagent")
        if isinstance(mark, dict) and self.version >= 2:
            made = dict(before or {})
            if "source" in r:
                made["source_sha256"] = _hash(cell["source"])
            if "execution_count" in r:
                made["execution_count"] = cell.get("execution_count")
            mark.pop("made", None)
            if made:
                mark["made"] = made
        return {"id": cell["id"]}

    def op_delete(self, r: dict[str, Any]) -> dict[str, Any]:
        if self.version < 2:  # the old extension: deletes whatever it is sent
            before = len(self.cells)
            self.cells = [c for c in self.cells if c["id"] not in r["ids"]]
            return {"deleted": before - len(self.cells)}
        expect = r.get("expect")
        if not isinstance(expect, dict) or not expect.get("origin"):
            raise KeyError("delete needs expect.origin")
        removed, kept = [], []
        for cell_id in dict.fromkeys(r["ids"]):
            cell = next((c for c in self.cells if c["id"] == cell_id), None)
            reason = "missing" if cell is None else self._why_kept(cell, expect, set(r.get("protect") or []))
            if reason is None:
                assert cell is not None  # a missing cell has its reason
                self.cells.remove(cell)
                removed.append(cell_id)
            else:
                kept.append({"id": cell_id, "reason": reason})
        return {"deleted": len(removed), "removed": removed, "kept": kept}

    def _why_kept(self, cell: dict[str, Any], expect: dict[str, Any], protect: set[str]) -> str | None:
        mark = cell["metadata"].get("nbagent")
        if cell["id"] in protect:
            return "protected"
        if cell.get("cell_type", "code") != "code":
            return "not-code"
        if cell["id"] in self.running:
            return "running"
        if not isinstance(mark, dict):
            return "not-nbagent"
        for key, reason in (("origin", "other-origin"), ("session", "other-session"),
                            ("agent_cell", "other-agent-cell")):
            if key in expect and mark.get(key) != expect[key]:
                return reason
        if mark.get("kind") not in expect.get("kinds", ["code"]):
            return "other-kind"
        if "turns" in expect and mark.get("turn") not in expect["turns"]:
            return "other-turn"
        if "after_turn" in expect and not (isinstance(mark.get("turn"), int) and mark["turn"] > expect["after_turn"]):
            return "other-turn"
        made = mark.get("made") or {}
        if made.get("source_sha256") != _hash(cell["source"]):
            return "edited"
        if cell.get("execution_count") is not None and cell["execution_count"] != made.get("execution_count"):
            return "re-run"
        return None

    def op_find(self, r: dict[str, Any]) -> dict[str, Any]:
        index = next((i for i, c in enumerate(self.cells) if c["id"] == r["cell_id"]), -1)
        found = {"index": index, "running": r["cell_id"] in self.running}
        return {**found, **shown_of(self.cells, index)} if index >= 0 else found  # type: ignore[arg-type]

    def op_move(self, r: dict[str, Any]) -> dict[str, Any]:
        cell = self.cells.pop(self._index(r["cell_id"]))
        self.cells.insert(r["index"], cell)
        return {"index": self._index(r["cell_id"])}

    def sources(self) -> list[str]:
        return [c["source"] for c in self.cells]


def _lean(cell: dict[str, Any]) -> dict[str, Any]:
    metadata = dict(cell.get("metadata") or {})
    if isinstance(metadata.get("nbagent"), dict):
        metadata["nbagent"] = {k: v for k, v in metadata["nbagent"].items() if k != "record"}
    return {"id": cell["id"], "cell_type": cell.get("cell_type", "code"), "source": cell.get("source", ""),
            "metadata": metadata}


def _hash(source: Any) -> str:
    return hashlib.sha256(("".join(source) if isinstance(source, list) else str(source)).encode()).hexdigest()


def dumps(cell: dict[str, Any]) -> str:
    """A cell as bytes to compare: "byte-identical" is equal JSON."""
    return json.dumps(cell, sort_keys=True)


def _delivered(value: Any) -> Any:
    """A copy of ``value`` as the comm's JSON delivers it, made without recursion: a received
    notebook's metadata may nest as deep as the kernel's message parser follows (it parses at the
    message loop's shallow stack), which a recursive copy here, deep in the kernel's stack, would not."""
    holder: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(value, holder, 0)]
    while todo:
        item, into, key = todo.pop()
        if isinstance(item, dict):
            made: Any = dict.fromkeys(item)  # keys in their order; values filled in below
            todo.extend((v, made, k) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            made = [None] * len(item)
            todo.extend((v, made, i) for i, v in enumerate(item))
        else:
            made = item
        into[key] = made
    return holder[0]
