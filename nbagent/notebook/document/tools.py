"""Notebook tools for the model: ``notebook_read``, ``notebook_edit``, ``notebook_run``.

They act on the live document through the bridge (never on the ``.ipynb`` on disk), behind the
same permissions, modes and hooks as every tool (reading runs without asking). Offered only while a
front-end with the extension is connected: :class:`NotebookTools` is a tool source whose list is
empty otherwise, so a request never names a tool that cannot work.

Read-before-edit (as Claude Code's ``NotebookEdit``): replacing, deleting or moving a cell is
refused unless the model read that cell, and refused again if it changed since (the user typed in
it, or a run replaced it): the model edits what it has seen, never a cell it guesses at.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Callable, Literal, Mapping, Sequence, cast

import pydantic

from ...engine.contracts.events import CallPreview
from ...engine.contracts.tool_api import ToolContext, ToolExecutionError, ToolLike, ToolOutput
from ...tools.base import BuiltinTool, ToolInput, wait_or_abort
from ...tools.python import format_execution
from ..user_code_interrupt import interrupt_after
from .bridge import Bridge, BridgeError, BridgeUnavailable, executing_cell_id
from .bridge_types import BridgeResult, CellJSON, OutputJSON, RequestArgs
from .cells import MARK, cell_for_model, literal_secrets, outputs_of, ran_as, source_hash
from .edit_rules import asks_each_time, made_here, replaced_mark
from .images import bounded_image, without_secret_figures
from .preview import cell_source as _source
from .preview import edit_preview, run_preview
from .read_outputs import record_read, record_replaced
from .removal import MADE_KINDS, ORIGIN, Expect, Removal, matches, remove

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ...engine.contracts.json_types import JSONObject
    from ...engine.contracts.message_types import ImageBlockParam
    from .inputs import CellLog

READ_CHARS = 24_000
"""Most characters one notebook_read returns (about 6k tokens); more is paged."""
CELL_OUTPUT_CHARS = 2_000
MAX_IMAGES = 4
DEFAULT_RUN_TIMEOUT_S = 120


class NotebookReadInput(ToolInput):
    start: int = pydantic.Field(0, ge=0, description="Index of the first cell to read.")
    count: int = pydantic.Field(30, ge=1, le=100, description="Most cells to read.")


class NotebookEditInput(ToolInput):
    action: Literal["insert", "replace", "delete", "move"]
    cell_id: str | None = pydantic.Field(None, description="The cell to replace, delete or move; for insert, "
                                                           "the cell to insert after.")
    index: int | None = pydantic.Field(None, ge=0, description="insert: position when no cell_id; move: new position.")
    source: str | None = pydantic.Field(None, description="insert/replace: the cell's new source.")
    cell_type: Literal["code", "markdown"] = "code"

    @pydantic.model_validator(mode="after")
    def _complete(self) -> "NotebookEditInput":
        # Checked with the input, before anyone is asked: a card for a move without its index
        # asked the user about a call that could only fail once allowed.
        if (why := edit_input_problem(self.action, self.cell_id, self.index, self.source)) is not None:
            raise ValueError(why)
        return self


def edit_input_problem(action: str, cell_id: str | None, index: int | None, source: str | None) -> str | None:
    """What a ``notebook_edit`` lacks for its action (None: nothing), in words the caller can act on."""
    if action in ("insert", "replace") and source is None:
        return f"notebook_edit {action} needs source."
    if action != "insert" and not cell_id:
        return f"notebook_edit {action} needs cell_id."
    if action == "move" and index is None:
        return "notebook_edit move needs index (the cell's new position)."
    return None


#: The cells ``notebook_edit`` deletes: code cells nbagent's agent made (the front-end checks again
#: that nobody edited or ran them since). The user's cells, and those MCP clients wrote, are the user's.
DELETABLE: Expect = {"origin": ORIGIN, "kinds": list(MADE_KINDS)}


def deletable(cell: CellJSON) -> bool:
    """Whether ``cell`` as read is one ``notebook_edit`` may delete (see :data:`DELETABLE`)."""
    return matches(cell, DELETABLE)


def not_deleted(cell_id: str, why: str) -> str:
    """What the model is told of a delete ``notebook_edit`` refuses."""
    return (f"Cell {cell_id} was not deleted ({why}): notebook_edit deletes only code cells the agent made in "
            "this session that nobody changed since. Ask the user to delete it.")


class NotebookRunInput(ToolInput):
    cell_id: str = pydantic.Field(min_length=1)
    timeout_s: int = pydantic.Field(DEFAULT_RUN_TIMEOUT_S, ge=1, le=3600,
                                    description="Interrupt the cell after this many seconds.")


class _Shared:
    """What the three tools share: the bridge, the hashes of the cells the model read, the mark."""

    def __init__(self, bridge: Bridge, session_name: Callable[[], str], log: CellLog | None = None) -> None:
        self.bridge = bridge
        self.session_name = session_name
        self.log = log
        """The kernel's cell log, told what ``notebook_run`` ran and ``notebook_edit`` wrote (no hook sees them)."""
        self.seen: dict[str, str] = {}
        self.made: dict[str, bool] = {}
        """Cell id → whether the cell, as the model last read or wrote it, is one the agent made here."""
        self.shown_runs: dict[str, str] = {}
        """tool_use_id → hash of the source a ``notebook_run`` question showed: the run refuses other code."""

    async def cells(self) -> list[CellJSON]:
        try:
            result = await self.bridge.request("read")
        except (BridgeUnavailable, BridgeError) as exc:
            raise ToolExecutionError(str(exc)) from None
        return [c for c in result.get("cells", []) if isinstance(c, dict)]

    async def call(self, op: str, **args: Unpack[RequestArgs]) -> BridgeResult:
        try:
            return await self.bridge.request(op, **args)
        except (BridgeUnavailable, BridgeError) as exc:
            raise ToolExecutionError(str(exc)) from None

    def mark(self, ctx: ToolContext, kind: str = "edit") -> JSONObject:
        """``"new"`` for a cell the model inserted (nbagent's), ``"edit"`` for a user's cell it changed
        (still the user's: never removed by nbagent)."""
        return {"origin": ORIGIN, "session": self.session_name(), "turn": ctx.turn, "tool_use_id": ctx.tool_use_id,
                "kind": kind}

    async def read_cell(self, cell_id: str) -> tuple[int, CellJSON]:
        for index, cell in enumerate(await self.cells()):
            if cell.get("id") == cell_id:
                return index, cell
        raise ToolExecutionError(f"No cell with id {cell_id!r} in the notebook: read it again with notebook_read.")


class _NotebookTool(BuiltinTool):
    """A tool on the live notebook: the three share the bridge and what the model read."""

    def __init__(self, shared: _Shared) -> None:
        self.shared = shared


class NotebookRead(_NotebookTool):
    """Read the notebook's cells with their outputs (paged, bounded)."""

    name = "notebook_read"
    description = ("Read the open notebook's cells (source and outputs, images included), in pages. Each cell "
                   "shows its index and id; use the id with notebook_edit and notebook_run.")
    read_only = True
    Input = NotebookReadInput

    async def call(self, params: NotebookReadInput, ctx: ToolContext) -> ToolOutput:
        cells = await self.shared.cells()
        if params.start >= len(cells) > 0:  # "showing 99–98" and nothing else said no cell is there
            raise ToolExecutionError(f"start={params.start} is past the notebook's last cell (it has {len(cells)} "
                                     f"cells, indexes 0–{len(cells) - 1}): read with a smaller start.")
        texts: list[str] = []
        images: list[ImageBlockParam] = []
        used, end = 0, params.start
        secrets = literal_secrets(cells)  # a literal in one cell, printed by another
        for index in range(params.start, min(len(cells), params.start + params.count)):
            text, cell_images = cell_for_model(index, cells[index], CELL_OUTPUT_CHARS, ctx.redact, secrets)
            cell_images, left_out = without_secret_figures(cell_images, ctx.redact)
            text += "".join(f"\n{note}" for note in left_out)
            if texts and used + len(text) > READ_CHARS:
                break
            # Off the loop: downscaling a large image takes a second or two.
            kept, notes = (await asyncio.to_thread(_bounded_images, cell_images, MAX_IMAGES - len(images))
                           if cell_images else ([], []))
            text += "".join(f"\n{note}" for note in notes)
            texts.append(text)
            images.extend(kept)
            used, end = used + len(text), index + 1
            if isinstance(cell_id := cells[index].get("id"), str):
                self.shared.seen[cell_id] = source_hash(_source(cells[index]))
                self.shared.made[cell_id] = made_here(cells[index], self.shared.session_name(),
                                                      known=self.shared.made.get(cell_id, False))
        # What the model was shown of the cells' outputs is an input of its answer (a replay compares it).
        record_read(cells[params.start:end], executing_cell_id(), ctx.redact, secrets)
        more = f"\n\n(cells {end}–{len(cells) - 1} not shown: read again with start={end})" if end < len(cells) else ""
        head = f"Notebook {self.shared.bridge.path or ''}: {len(cells)} cells; showing {params.start}–{end - 1}.\n\n"
        text = head + "\n\n".join(texts) + more
        return ToolOutput([{"type": "text", "text": text}, *(_json_block(image) for image in images)] if images else text)


def _bounded_images(blocks: list[ImageBlockParam], room: int) -> tuple[list[ImageBlockParam], list[str]]:
    """A cell's images as they may be sent (bounded, at most ``room`` of them) and the notes that
    say what was downscaled or left out."""
    kept: list[ImageBlockParam] = []
    notes: list[str] = []
    for position, block in enumerate(blocks):
        if len(kept) >= room:
            notes.append(f"[{len(blocks) - position} more image(s) of this cell not sent: at most "
                         f"{MAX_IMAGES} per notebook_read; read this cell alone to see them]")
            break
        bounded, note = bounded_image(block)
        if bounded is not None:
            kept.append(bounded)
        if note:
            notes.append(note)
    return kept, notes


class NotebookEdit(_NotebookTool):
    """Insert, replace, delete or move one cell of the live notebook."""

    name = "notebook_edit"
    description = ("Change the open notebook: insert a cell (after cell_id, or at index), or replace, delete or "
                   "move a cell you read with notebook_read. A cell changed since you read it must be read again. "
                   "delete removes only code cells you made in this session that nobody changed since; the "
                   "user's cells are the user's to delete.")
    read_only = False
    Input = NotebookEditInput

    async def call(self, params: NotebookEditInput, ctx: ToolContext) -> ToolOutput:
        if params.action == "insert":
            return await self._insert(params, ctx)
        if not params.cell_id:
            raise ToolExecutionError(f"notebook_edit {params.action} needs cell_id.")
        cell = await self._check_unchanged(params.cell_id)
        if params.action == "replace":
            if params.source is None:
                raise ToolExecutionError("notebook_edit replace needs source.")
            mark = replaced_mark(cell, self.shared.mark(ctx), own=self.shared.made.get(params.cell_id, False))
            result = await self.shared.call("replace", cell_id=params.cell_id, source=params.source,
                                            cell_type=params.cell_type, metadata={MARK: mark})
            new_id = str(result.get("id") or params.cell_id)
            self.shared.seen[new_id] = source_hash(params.source)
            # The agent's own cell stays its own (a fix loop rewrites it again under the allowance);
            # the user's cell stays the user's, though its mark now says the agent edited it.
            self.shared.made[new_id] = self.shared.made.get(params.cell_id, False)
            if self.shared.log is not None:
                self.shared.log.agent_edited(new_id, params.source)
            record_replaced(params.cell_id)
            return ToolOutput(f"Replaced cell {new_id}.")
        if params.action == "delete":
            return await self._delete(params.cell_id)
        if params.index is None:
            raise ToolExecutionError("notebook_edit move needs index (the cell's new position).")
        result = await self.shared.call("move", cell_id=params.cell_id, index=params.index)
        return ToolOutput(f"Moved cell {params.cell_id} to index {result.get('index', params.index)}.")

    def always_asks(self, tool_input: Mapping[str, object]) -> str | None:
        """Why this edit asks even when notebook_edit is allowed (see :mod:`.edit_rules`)."""
        return asks_each_time(tool_input, self.shared.made)

    async def preview(self, tool_input: Mapping[str, object], ctx: ToolContext) -> CallPreview:
        """The cell as it is and as it will be, for the permission question (see :mod:`.preview`)."""
        seen = self.shared.seen
        cells = await self.shared.cells()
        shown = edit_preview(cells, tool_input, lambda cell_id, source: seen.get(cell_id) == source_hash(source))
        cell_id = tool_input.get("cell_id")
        kept = next((c for c in cells if c.get("id") == cell_id and not deletable(c)), None)
        if tool_input.get("action") == "delete" and kept is not None:  # asked, it was refused after Allow
            return dataclasses.replace(shown, refusal=not_deleted(str(cell_id), "not a cell the agent made in this session"))
        return shown

    async def _insert(self, params: NotebookEditInput, ctx: ToolContext) -> ToolOutput:
        if params.source is None:
            raise ToolExecutionError("notebook_edit insert needs source.")
        mark = self.shared.mark(ctx, "new")
        cell: CellJSON = {"cell_type": params.cell_type, "source": params.source, "metadata": {MARK: mark}}
        if params.cell_type == "code":
            cell.update({"outputs": [], "execution_count": None})
        result = await self.shared.call("insert", cell=cell, after_id=params.cell_id, index=params.index)
        new_id = str(result.get("id"))
        self.shared.seen[new_id] = source_hash(params.source)
        self.shared.made[new_id] = True
        record_replaced(new_id)  # the turn's work, as a cell it replaced or ran: read later, no input of its answer
        return ToolOutput(f"Inserted {params.cell_type} cell {new_id} at index {result.get('index')}.")

    async def _delete(self, cell_id: str) -> ToolOutput:
        """Only a code cell nbagent made in this kernel (materialised, or inserted by the model), that
        nobody edited or ran since and that is not running: the user's cells are the user's to delete."""
        _index, cell = await self.shared.read_cell(cell_id)
        removal = Removal(kept=[(cell_id, "not-nbagent" if cell.get("cell_type", "code") == "code" else "not-code")])
        if deletable(cell):
            try:
                removal = await remove(self.shared.bridge, [cell_id], DELETABLE, protect=[executing_cell_id()])
            except (BridgeUnavailable, BridgeError) as exc:
                raise ToolExecutionError(str(exc)) from None
        if removal.count:
            self.shared.seen.pop(cell_id, None)
            return ToolOutput(f"Deleted cell {cell_id}.")
        why = ", ".join(removal.kept_reasons()) or "not a cell the agent made in this session"
        raise ToolExecutionError(not_deleted(cell_id, why))

    async def _check_unchanged(self, cell_id: str) -> CellJSON:
        if cell_id not in self.shared.seen:
            raise ToolExecutionError(f"Cell {cell_id} has not been read: read it with notebook_read before changing it.")
        _index, cell = await self.shared.read_cell(cell_id)
        if source_hash(_source(cell)) != self.shared.seen[cell_id]:
            self.shared.seen.pop(cell_id, None)
            raise ToolExecutionError(f"Cell {cell_id} changed since you last read it (edited by the user or replaced "
                                     "by a run): read it again with notebook_read, then edit what it holds now.")
        return cell


class NotebookRun(_NotebookTool):
    """Run one code cell in the kernel; its outputs land in the document."""

    name = "notebook_run"
    description = ("Run a code cell of the open notebook by id in the live kernel (like the python tool, "
                   "with the cell's own source); its outputs replace the cell's outputs in the notebook.")
    read_only = False
    runs_in_kernel = True  # a cell it runs may make credential variables (see the python tool)
    Input = NotebookRunInput

    async def preview(self, tool_input: Mapping[str, object], ctx: ToolContext) -> CallPreview:
        """The source that will run, for the permission question; the run then refuses other code."""
        shown = run_preview(await self.shared.cells(), str(tool_input.get("cell_id")))
        if shown.after is not None:
            self.shared.shown_runs[ctx.tool_use_id] = source_hash(shown.after)
        return shown

    async def call(self, params: NotebookRunInput, ctx: ToolContext) -> ToolOutput:
        _index, cell = await self.shared.read_cell(params.cell_id)
        if cell.get("cell_type") != "code":
            raise ToolExecutionError(f"Cell {params.cell_id} is a {cell.get('cell_type')} cell: only code cells run.")
        if ctx.executor is None:
            raise ToolExecutionError("No kernel executor: notebook_run works inside a notebook only.")
        source = _source(cell)
        shown = self.shared.shown_runs.pop(ctx.tool_use_id, None)
        if shown is not None and shown != source_hash(source):
            raise ToolExecutionError(f"Cell {params.cell_id} changed after the user was asked to allow running it: "
                                     "not run. Call notebook_run again to ask about what it holds now.")
        with interrupt_after(params.timeout_s, ctx.executor) as limit:
            result = await wait_or_abort(ctx.executor.execute(source, cwd=ctx.cwd), ctx.abort)
        record = ctx.executor.history[-1]
        # The cell ran, under the kernel's count of this agent cell's run (not "[ ]" beside outputs).
        count = record.execution_count
        # Written into the document by nbagent, so saved with the notebook: redacted, as a
        # materialised cell's outputs are (the model, or a client, may have made the cell print a key).
        outputs = _redacted(outputs_of(record), ctx.redact)
        await self.shared.call("replace", cell_id=params.cell_id, outputs=ran_as(outputs, count), execution_count=count)
        self.shared.seen[params.cell_id] = source_hash(source)
        if self.shared.log is not None:
            self.shared.log.agent_ran(params.cell_id, source)
        # The turn ran this cell itself: its outputs are the turn's work, written in nbagent's own form
        # (redacted, displays merged), which a kernel's Run All never gives again: not compared.
        record_replaced(params.cell_id)
        return limit.noted(ToolOutput(f"Ran cell {params.cell_id}:\n{format_execution(result)}",
                                      is_error=result.error is not None))


def _redacted(outputs: list[OutputJSON], redact: Callable[[str], str] | None) -> list[OutputJSON]:
    """``outputs`` with every string in them (stream text, each mime's data, an error's lines) redacted."""
    if redact is None:
        return outputs

    def walk(value: object) -> object:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return cast("list[OutputJSON]", walk(outputs))


class NotebookTools:
    """A tool source: the three notebook tools while a front-end answers, none otherwise."""

    def __init__(self, bridge: Bridge, session_name: Callable[[], str], log: CellLog | None = None) -> None:
        self.shared = _Shared(bridge, session_name, log)
        self._tools: list[ToolLike] = [NotebookRead(self.shared), NotebookEdit(self.shared), NotebookRun(self.shared)]

    def __repr__(self) -> str:
        return f"<NotebookTools connected={self.shared.bridge.connected}>"

    async def ready(self) -> list[str]:
        return []

    def tools(self) -> Sequence[ToolLike]:
        return self._tools if self.shared.bridge.connected else []


def _json_block(image: ImageBlockParam) -> JSONObject:
    """An image block as a tool result's JSON block (bounded_image built it: plain JSON values)."""
    return cast("JSONObject", dict(image))
