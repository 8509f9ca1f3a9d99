"""Materialised code: each ``python`` call that ran becomes a real code cell below the agent cell.

The cell holds the source exactly as run and its outputs, with metadata
``{"nbagent": {"session", "turn", "tool_use_id", "kind": "code"}}`` (``kind`` tells these cells
from the agent cell, ``"agent"``, and from a cell the model changed with notebook_edit, ``"edit"``),
so the document shows the agent's work and
Restart & Run All rebuilds the kernel's state from it. A call the user denied never ran, so it
never becomes a cell. Where no front-end answers, the last code goes into one
``set_next_input`` cell (front-ends that take the payload insert it) with a one-line notice.
"""

from __future__ import annotations

from typing import Any, Callable

from ...engine.contracts import events as ev
from ...engine.loop.sanitize import Sanitizer
from .bridge import Bridge, BridgeError, BridgeUnavailable
from .cells import MARK, code_cell, outputs_of

NO_BRIDGE_NOTICE = ("ⓘ no notebook bridge answers here (nbclient, VS Code, Colab, classic Notebook): the agent's "
                    "last code goes into one new cell where the front-end supports it.")


class Materialiser:
    """Turns one run's executed ``python`` calls into cells, as the events arrive."""

    def __init__(self, bridge: Bridge, executor: Any, *, session: str, turn: Callable[[], int],
                 agent_cell_id: str | None, redact: Callable[[Any], Any] = Sanitizer().strings) -> None:
        self.bridge, self.executor = bridge, executor
        self.redact = redact
        """Cleans the outputs as the tool card shows them (the session's secrets; by default key shapes)."""
        self.session, self.turn = session, turn
        self.agent_cell_id = agent_cell_id
        self.live = bridge.connected and agent_cell_id is not None
        self.after_id = agent_cell_id
        self.inserted: list[str] = []
        self.codes: list[str] = []
        self._calls: dict[str, tuple[str, Any]] = {}

    async def begin(self) -> None:
        """Replace this agent cell's earlier cells: an agent cell run again (live) owns only the
        cells of its latest turn."""
        if not self.live:
            return
        try:
            cells = (await self.bridge.request("read")).get("cells", [])
            ids = [c.get("id") for c in cells]
            if self.agent_cell_id not in ids:
                self.live = False
                return
            below: list[str] = []
            for cell in cells[ids.index(self.agent_cell_id) + 1:]:
                if not _materialised(cell):
                    break
                below.append(str(cell.get("id")))
            if below:
                await self.bridge.request("delete", ids=below)
        except (BridgeUnavailable, BridgeError):
            self.live = False

    async def handle(self, event: Any) -> None:
        """Note a ``python`` call when it is made; insert its cell once it ran."""
        if isinstance(event, ev.ToolUse) and event.name == "python":
            code = event.input.get("code") if isinstance(event.input, dict) else None
            if isinstance(code, str):
                self._calls[event.tool_use_id] = (code, self._latest())
        elif isinstance(event, ev.ToolResult) and event.tool_use_id in self._calls:
            code, before = self._calls.pop(event.tool_use_id)
            record = self._ran(code, before)
            if record is not None:
                await self._insert(record, event.tool_use_id)

    def _latest(self) -> Any:
        history = self.executor.history if self.executor is not None else ()
        return history[-1] if history else None

    def _ran(self, code: str, before: Any) -> Any:
        """The execution of this call, or None when it did not run (denied, refused)."""
        record = self._latest()
        return record if record is not None and record is not before and record.code == code else None

    async def _insert(self, record: Any, tool_use_id: str) -> None:
        self.codes.append(record.code)
        if not self.live:
            return
        mark = {"session": self.session, "turn": self.turn(), "tool_use_id": tool_use_id, "kind": "code"}
        try:
            result = await self.bridge.request("insert", cell=code_cell(record.code, self.redact(outputs_of(record)), mark),
                                               after_id=self.after_id)
        except (BridgeUnavailable, BridgeError):
            self.live = False
            return
        self.after_id = str(result.get("id"))
        self.inserted.append(self.after_id)

    async def mark_agent_cell(self, turn: int) -> None:
        """Tag the agent cell with its session and turn (what rollback and a reader go by)."""
        if self.live and self.agent_cell_id is not None:
            try:
                await self.bridge.request("replace", cell_id=self.agent_cell_id,
                                          metadata={MARK: {"session": self.session, "turn": turn, "kind": "agent"}})
            except (BridgeUnavailable, BridgeError):
                pass

    def fallback(self, shell: Any) -> str | None:
        """Without a bridge: the last code as the next input; returns the notice to show."""
        if self.live or not self.codes or shell is None:
            return None
        shell.set_next_input(self.codes[-1], replace=False)
        return NO_BRIDGE_NOTICE


def _materialised(cell: dict[str, Any]) -> bool:
    """A cell nbagent made from a python call (not an agent cell, not a user cell the model edited)."""
    mark = (cell.get("metadata") or {}).get(MARK)
    return isinstance(mark, dict) and mark.get("kind") == "code"


def _turn(cell: dict[str, Any]) -> int:
    turn = cell["metadata"][MARK].get("turn")
    return turn if isinstance(turn, int) else 0


def remove_turn_cells(bridge: Bridge, session: str, after_turn: int) -> int:
    """Delete the cells of ``session``'s turns after ``after_turn`` (``%agent rollback``); returns
    how many went. Nothing happens (0) where no front-end answers."""
    if not bridge.connected:
        return 0
    try:
        cells = bridge.request_sync("read").get("cells", [])
        ids = [str(c.get("id")) for c in cells if _materialised(c)
               and c["metadata"][MARK].get("session") == session and _turn(c) > after_turn]
        if ids:
            bridge.request_sync("delete", ids=ids)
        return len(ids)
    except (BridgeUnavailable, BridgeError):
        return 0
