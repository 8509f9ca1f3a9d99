"""The notebook bridge's wire shapes, defined once (docs/bridge-protocol.md; the front-end's side is
``frontend/src/ops.ts``, and :mod:`.nbformat_frontend` answers the same protocol unattended).

Cells and outputs are nbformat 4.5 JSON with the fields nbagent reads or writes. Whatever comes back
from a front-end is still untrusted: these types say which keys it may hold, and readers check each
value (``isinstance``) before using it, as a received notebook may hold anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject


class OutputJSON(TypedDict, total=False):
    """One nbformat output (stream, display_data, execute_result or error)."""

    output_type: str
    name: str
    text: str | list[str]
    data: dict[str, str]
    metadata: JSONObject
    execution_count: int | None
    ename: str
    evalue: str
    traceback: list[str]


class CellJSON(TypedDict, total=False):
    """One nbformat cell: what ``read`` returns for each cell and what ``insert`` takes.
    ``metadata["nbagent"]`` is nbagent's mark (:data:`.cells.MARK`)."""

    id: str
    cell_type: str
    source: str | list[str]
    metadata: JSONObject
    outputs: list[OutputJSON]
    execution_count: int | None


class Expect(TypedDict, total=False):
    """What every cell a ``delete`` asks for must carry (the front-end checks each field given)."""

    origin: str
    session: str
    agent_cell: str
    turns: list[int]
    after_turn: int
    kinds: list[str]


class RequestArgs(TypedDict, total=False):
    """A request's arguments, beside the envelope's ``type``, ``id`` and ``op``: per op,
    ``insert``: cell, after_id | index; ``replace``: cell_id and any of source, cell_type, outputs,
    execution_count, metadata (only its ``nbagent`` key is written); ``delete``: ids, expect,
    protect; ``move``: cell_id, index; ``find``: cell_id; ``read``: lean (no outputs, attachments nor signed records)."""

    cell_id: str
    cell: CellJSON
    after_id: str | None
    index: int | None
    source: str
    cell_type: str
    outputs: list[OutputJSON]
    execution_count: int | None
    metadata: JSONObject
    ids: list[str]
    expect: Expect
    protect: list[str]
    lean: bool


class BridgeRequest(RequestArgs, total=False):
    """A request as sent on the comm: ``{"type": "request", "id", "op", **args}``."""

    type: Literal["request"]
    id: int
    op: str
    client: str
    """The session of the page the request is for (the one running the cell); absent: every page."""


class KeptCell(TypedDict):
    """A cell a ``delete`` left in place, and the front-end's reason code (:data:`.removal.REASONS`)."""

    id: str
    reason: str


class BridgeResult(TypedDict, total=False):
    """A reply's ``result``, per op: ``read``: path, cells; ``insert``: id, index; ``replace``: id;
    ``delete``: deleted, removed, kept; ``move``: index; ``find``: index (-1: gone), running, and for
    a cell there what the page shows of it (an older front-end leaves these out): outputs (their
    count), widgets (the model ids its outputs view), outputs_hidden, in_collapsed_section."""

    path: str
    cells: list[CellJSON]
    id: str
    index: int
    deleted: int
    removed: list[str]
    kept: list[KeptCell]
    running: bool
    outputs: int
    widgets: list[str]
    outputs_hidden: bool
    in_collapsed_section: bool


class BridgeReply(TypedDict, total=False):
    """The one reply each request gets: ``ok`` and ``result``, or ``ok`` false and ``error``."""

    type: Literal["reply"]
    id: int
    ok: bool
    error: str
    result: BridgeResult


class Hello(TypedDict, total=False):
    """What a front-end says when the comm opens (``version``: the protocol it speaks)."""

    type: Literal["hello"]
    version: int
    frontend: str
    path: str


__all__ = ["BridgeReply", "BridgeRequest", "BridgeResult", "CellJSON", "Expect", "Hello", "KeptCell",
           "OutputJSON", "RequestArgs"]
