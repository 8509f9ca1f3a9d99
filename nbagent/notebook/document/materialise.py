"""Materialised code: each ``python`` call that ran becomes a real code cell below the agent cell.

The cell holds the source exactly as run and its outputs, with metadata
``{"nbagent": {"origin", "session", "turn", "tool_use_id", "kind": "code", "agent_cell"}}`` (``kind``
tells these cells from the agent cell, ``"agent"``, from a cell the model inserted with notebook_edit,
``"new"``, and from a user's cell it changed, ``"edit"``; ``origin`` is this kernel's, see
:mod:`.removal`), so the document shows the agent's work and
Restart & Run All rebuilds the kernel's state from it. A call the user denied never ran, so it
never becomes a cell. Where no front-end answers, the last code goes into one
``set_next_input`` cell (front-ends that take the payload insert it) with a one-line notice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Protocol

from ...engine.contracts import events as ev
from ...engine.loop.sanitize import Sanitizer
from .bridge import Bridge, BridgeError, BridgeUnavailable
from .bridge_types import BridgeResult, CellJSON, OutputJSON
from .cells import MARK, code_cell, outputs_of
from .removal import ORIGIN, Expect, Removal, mark_of, matches, remove, turn_cells_after

if TYPE_CHECKING:
    from ...engine.contracts.json_types import JSONObject
    from ..executor import ExecutionRecord, ShellExecutor

NO_BRIDGE_NOTICE = ("ⓘ no notebook bridge answers here (nbclient, VS Code, Colab, classic Notebook): the agent's "
                    "last code goes into one new cell where the front-end supports it.")
SILENT_PAGE_NOTICE = ("ⓘ no notebook bridge answers here: the notebook sent this cell's id, as JupyterLab and "
                      "Notebook 7 do, but its page did not answer the kernel (is nbagent installed where the "
                      "Jupyter server runs?): the agent's last code goes into one new cell.")
"""Where the front-end sent a cell id: naming nbclient or VS Code there would be untrue."""
NOT_IN_NOTEBOOK_NOTICE = ("ⓘ this cell is not in the notebook (a console on the notebook's kernel, or a cell "
                          "deleted while it ran): the agent's last code goes into one new cell here.")
"""Where the notebook's page answers but has no such cell: the page is there, nbagent is installed."""


class _NextInput(Protocol):
    """What the fallback uses of IPython's shell."""

    def set_next_input(self, text: str, replace: bool = False) -> None: ...


class Materialiser:
    """Turns one run's executed ``python`` calls into cells, as the events arrive."""

    def __init__(self, bridge: Bridge, executor: ShellExecutor | None, *, session: str, turn: Callable[[], int],
                 agent_cell_id: str | None, redact: Callable[[list[OutputJSON]], list[OutputJSON]] = Sanitizer().strings) -> None:
        self.bridge, self.executor = bridge, executor
        self.redact = redact
        """Cleans the outputs as the tool card shows them (the session's secrets; by default key shapes)."""
        self.session, self.turn = session, turn
        self.agent_cell_id = agent_cell_id
        self.live = bridge.connected and agent_cell_id is not None
        self.after_id = agent_cell_id
        self.elsewhere = False
        """The page answered without this agent cell: a console on the notebook's kernel, say."""
        self.inserted: list[str] = []
        self.codes: list[str] = []
        self.made: dict[str, str] = {}
        """Tool call id → the code of the cell made for it (in this notebook, through its page)."""
        self.removal = Removal()
        self.moved = 0
        self.apart = 0
        """Removed cells of earlier runs below this agent cell, past cells of the user's (not moved)."""
        """Cells of the earlier run that went from where the user had moved them (still nbagent's)."""
        self.older = 0
        """Cells this agent cell made in an earlier kernel: not this kernel's to remove, so they stay."""
        self.copied = 0
        """Copies of another agent cell's code cells below this one (pasted with a copy of that agent
        cell, or duplicated): the user's, so they stay, and Run All runs them after this run's cells."""
        self._marked_turn: int | None = None
        self._authors: JSONObject = {}
        """What the notebook's author put in the agent cell's mark (``click``): kept when it is marked."""
        self._calls: dict[str, tuple[str, ExecutionRecord | None]] = {}

    async def begin(self) -> None:
        """Replace this agent cell's earlier cells: an agent cell run again (live) owns only the
        cells of its latest run. Only the cells this kernel made for this agent cell are asked
        for, and the front-end keeps any the user edited, ran again, or that is running or queued
        (:mod:`.removal`); cells it made in an earlier kernel stay, and are counted for the notice."""
        if not self.live:
            return
        try:
            cells = (await self.bridge.request("read")).get("cells", [])
            at = next((i for i, c in enumerate(cells) if c.get("id") == self.agent_cell_id), None)
            if at is None:
                self.live, self.elsewhere = False, True
                return
            self._authors = _authors_keys(cells[at])
            self.older = sum(1 for c in cells if _made_by(c, self.agent_cell_id, other_kernel=True))
            section = _section_below(cells, at)
            self.copied = sum(1 for c in cells if str(c.get("id")) in section and _copied_along(c, self.agent_cell_id))
            expect = _earlier_runs(cells[at])
            if expect is not None:
                ids = [str(c.get("id")) for c in cells if matches(c, expect)]
                self.removal = await remove(self.bridge, ids, expect, protect=[self.agent_cell_id])
                below = _block_below(cells, at, set(ids))
                self.moved = sum(1 for i in self.removal.removed if i not in below and i not in section)
                self.apart = sum(1 for i in self.removal.removed if i not in below and i in section)
        except (BridgeUnavailable, BridgeError):
            self.live = False

    def notice(self) -> str | None:
        """What the re-run did to the earlier run's cells beyond replacing them below the agent
        cell: cells kept (the user's now, or still running), cells removed from where the user
        had moved them, cells of an earlier kernel left in place. None when there is nothing to say."""
        lines = []
        queued = sum(1 for _i, r in self.removal.kept if r == "running")
        others = Removal(kept=[k for k in self.removal.kept if k[1] != "running"])
        reasons = others.kept_reasons()
        if reasons:
            kept = sum(1 for _i, r in others.kept if r != "missing")
            lines.append(f"ⓘ {kept} cell(s) of this cell's earlier run kept in the notebook ({', '.join(reasons)}).")
        if queued:
            # Run All queued them below: nbagent never removes a queued cell, so they stay and run again.
            lines.append(f"ⓘ {queued} cell(s) of this cell's earlier run stay: Run All (or a run of selected cells) "
                         "has them queued, so they run again after this cell's new ones. Delete them once that run "
                         "ends; or use Restart & Run All, which replays the recorded turns without asking the "
                         "model again.")
        if self.apart:
            lines.append(f"ⓘ {self.apart} cell(s) of this cell's earlier runs removed from below cells of yours among "
                         "them (still the agent's: copy one, or edit it, to keep it).")
        if self.moved:
            lines.append(f"ⓘ {self.moved} cell(s) of this cell's earlier runs removed from elsewhere in the notebook "
                         "(moved there, or brought back by Undo: still the agent's; copy one, or edit it, to keep it).")
        if self.older:
            lines.append(f"ⓘ {self.older} cell(s) this cell made in an earlier kernel (before a restart, or in the "
                         "notebook this one was copied from) stay in the notebook (nbagent removes only cells it "
                         "made in this kernel): delete them if this run replaces them, or Run All will run them "
                         "too.")
        if self.copied:
            lines.append(f"ⓘ {self.copied} cell(s) below this one are copies of another agent cell's code (pasted "
                         "with a copy of that cell, or duplicated): they are yours, so they stay. Delete them if "
                         "this run's cells replace them, or Run All will run them too.")
        return "\n".join(lines) or None

    async def handle(self, event: object) -> None:
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

    def _latest(self) -> ExecutionRecord | None:
        history = self.executor.history if self.executor is not None else ()
        return history[-1] if history else None

    def _ran(self, code: str, before: ExecutionRecord | None) -> ExecutionRecord | None:
        """The execution of this call, or None when it did not run (denied, refused)."""
        record = self._latest()
        return record if record is not None and record is not before and record.code == code else None

    async def _insert(self, record: ExecutionRecord, tool_use_id: str) -> None:
        self.codes.append(record.code)
        if not self.live:
            return
        turn = self.turn()
        if self._marked_turn != turn:
            await self.mark_agent_cell(turn)  # before its cells: an interrupted run's cells are found again
        mark: JSONObject = {"origin": ORIGIN, "session": self.session, "turn": turn, "tool_use_id": tool_use_id,
                "kind": "code", "agent_cell": self.agent_cell_id}
        try:
            cell = code_cell(record.code, self.redact(outputs_of(record)), mark, getattr(record, "execution_count", None))
            if any(o.get("output_type") == "error" for o in cell["outputs"]):
                # The agent's attempt that raised (it then tried again): Jupyter's own tag lets Run All,
                # nbclient and papermill run it and go on, as the turn did, instead of stopping there.
                cell["metadata"]["tags"] = [RAISES]
            result = await self._insert_below(cell)
        except (BridgeUnavailable, BridgeError):
            self.live = False
            return
        self.after_id = str(result.get("id"))
        self.inserted.append(self.after_id)
        self.made[tool_use_id] = record.code

    async def _insert_below(self, cell: CellJSON) -> BridgeResult:
        """Insert the cell below the turn's last cell still in the notebook, else below the agent cell:
        the user may have taken one away while the turn ran (Undo, delete). The page answers a missing
        anchor with a refusal; only the agent cell's own refusal ends the turn's cells (it was deleted
        while it ran: the fallback then says so)."""
        for anchor in [*reversed(self.inserted), self.agent_cell_id]:
            try:
                return await self.bridge.request("insert", cell=cell, after_id=anchor)
            except BridgeError as exc:
                # Only the page's refusal of a missing anchor means a cell went; any other failure
                # keeps its own notice (the page did not do it), not "not in the notebook".
                if _MISSING_ANCHOR not in str(exc):
                    raise
                if anchor == self.agent_cell_id:
                    self.elsewhere = True
                    raise
        raise BridgeError("no cell to insert below")  # unreachable: the agent cell is the last anchor

    async def mark_agent_cell(self, turn: int, record: JSONObject | None = None) -> None:
        """Tag the agent cell with its session and turn (what rollback and a reader go by), and the
        turn's signed record (see :mod:`.embedded`)."""
        # With cells off the cell is still tagged when it has a record to carry (replay needs it).
        if self.agent_cell_id is not None and (self.live or (record is not None and self.bridge.connected)):
            self._marked_turn = turn
            mark: JSONObject = {**self._authors, "origin": ORIGIN, "session": self.session, "turn": turn, "kind": "agent"}
            if record is not None:
                mark["record"] = record
            try:
                await self.bridge.request("replace", cell_id=self.agent_cell_id, metadata={MARK: mark})
            except (BridgeUnavailable, BridgeError):
                pass

    def fallback(self, shell: _NextInput | None) -> str | None:
        """Without a bridge: the last code as the next input; returns the notice to show."""
        if self.live or not self.codes or shell is None:
            return None
        shell.set_next_input(self.codes[-1], replace=False)
        if self.elsewhere:
            return NOT_IN_NOTEBOOK_NOTICE
        return NO_BRIDGE_NOTICE if self.agent_cell_id is None else SILENT_PAGE_NOTICE


_MISSING_ANCHOR = "no cell with id"  # the page's refusal of an id it does not hold (ops.ts requireIndex)

_KERNEL_KEYS = frozenset({"origin", "session", "turn", "kind", "record", "agent_cell", "made", "tool_use_id", "undone"})


def _authors_keys(cell: CellJSON) -> JSONObject:
    """The keys of a cell's ``nbagent`` metadata that nbagent does not write (03's ``"click":
    ["Cancel"]``, the answers an unattended run gives): marking the agent cell keeps them."""
    metadata = cell.get("metadata")
    mark = metadata.get(MARK) if isinstance(metadata, dict) else None
    return {k: v for k, v in mark.items() if k not in _KERNEL_KEYS} if isinstance(mark, dict) else {}


RAISES = "raises-exception"
"""The tag JupyterLab, Notebook 7, nbclient, papermill and ``nbconvert --execute`` read as "this cell
is expected to raise": the execution goes on after it (``stop_on_error`` off, ``allow_error``)."""


def _made_by(cell: CellJSON, agent_cell_id: str | None, *, other_kernel: bool) -> bool:
    """A code cell whose mark says it was made (materialised) for the agent cell ``agent_cell_id``
    (``other_kernel``: by a kernel other than this one, as before a restart)."""
    mark = mark_of(cell)
    if mark is None or cell.get("cell_type", "code") != "code" or mark.get("kind") != "code":
        return False
    return mark.get("agent_cell") == agent_cell_id and (mark.get("origin") != ORIGIN) == other_kernel


def _copied_along(cell: CellJSON, agent_cell_id: str | None) -> bool:
    """A copy of a code cell made for another agent cell: its mark names another agent cell, and it
    is not the cell nbagent made (its id is not the one the front-end stored) or another kernel made
    it. A cell this kernel made for another agent cell and the user only moved here is not one: that
    agent cell's re-run or a rollback still removes it."""
    mark = mark_of(cell)
    if mark is None or cell.get("cell_type", "code") != "code" or mark.get("kind") != "code":
        return False
    if not isinstance(mark.get("agent_cell"), str) or mark.get("agent_cell") == agent_cell_id:
        return False
    made = mark.get("made")
    copy = isinstance(made, dict) and made.get("cell_id") not in (None, cell.get("id"))
    return copy or mark.get("origin") != ORIGIN


def _block_below(cells: list[CellJSON], at: int, ids: set[str]) -> set[str]:
    """The asked-for cells right below the agent cell at ``at``, where a run puts them."""
    block: set[str] = set()
    for cell in cells[at + 1:]:
        if str(cell.get("id")) not in ids:
            break
        block.add(str(cell.get("id")))
    return block


def _section_below(cells: list[CellJSON], at: int) -> set[str]:
    """The ids of the cells below the agent cell at ``at`` up to the next agent cell: where its runs'
    cells still are when the user only put cells of their own among them (not moved away)."""
    section: set[str] = set()
    for cell in cells[at + 1:]:
        mark = mark_of(cell)
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if (mark is not None and mark.get("kind") == "agent") or text.lstrip().startswith("%%agent"):
            break
        section.add(str(cell.get("id")))
    return section


def _earlier_runs(agent: CellJSON) -> Expect | None:
    """What the agent cell's earlier runs made, from its mark: None when this kernel did not run it
    (a received notebook, a run before a restart: those cells are not ours to remove). Every
    earlier run of this kernel, not only the turn its mark names: an Undo after a re-run brings
    back the run before, under the mark of the run it undid."""
    mark = mark_of(agent)
    if mark is None or mark.get("origin") != ORIGIN or mark.get("kind") != "agent":
        return None
    if not isinstance(mark.get("turn"), int) or not isinstance(mark.get("session"), str):
        return None
    return {"origin": ORIGIN, "agent_cell": str(agent.get("id")), "kinds": ["code"]}


def remove_turn_cells(bridge: Bridge, session: str, after_turn: int, protect: str | None = None,
                      undone_in: Collection[str] = (), redact: Callable[[str], str] = str) -> Removal:
    """Remove the cells ``session`` made in this kernel in turns after ``after_turn`` (``%agent
    rollback``), never ``protect`` (the cell running the rollback); says what really went. The
    agent cells of those turns in ``undone_in``'s sessions say they were undone. ``redact``: the
    session's secrets, for the user's cells the message names."""
    return turn_cells_after(bridge, session, after_turn, protect, undone_in, redact)
