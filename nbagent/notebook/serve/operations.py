"""What a client's calls do, on the kernel's loop: nbagent's own notebook and python tools, behind
the serve gate, each call recorded.

The notebook tools (:mod:`nbagent.notebook.document.tools`) are reused as they are: one
:class:`ClientNotebook` per client holds what that client read, so read-before-edit holds per
client (a client edits what it has seen, never what another client or the user changed since),
and cells it inserts or replaces carry ``metadata.nbagent = {"kind": "external", "client": …}``
instead of an agent turn: ``%agent rollback`` and a re-run never delete them as nbagent's own.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

from ...engine.contracts.config import DEFAULT_KERNEL_CONTEXT_TOKENS
from ...engine.contracts.tool_api import ToolContext, ToolExecutionError, ToolOutput
from ...tools.python import Python
from ..document.bridge import Bridge, BridgeError, BridgeUnavailable
from ..document.bridge_types import CellJSON
from ..document.cells import source_hash
from ..document.preview import edit_preview, run_preview
from ..document.tools import (
    NotebookEdit,
    NotebookRead,
    NotebookRun,
    _Shared,
    _source,
    deletable,
    edit_input_problem,
)
from ..executor import ShellExecutor
from ..user_code_interrupt import interrupt_after, interrupt_user_code
from .clients import Client
from .gate import Allowed, CallRefused, Request, ServeGate, too_long
from .record import ActionLog, ExternalAction, now, shown_names

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...engine.contracts.json_types import JSONObject

EXTERNAL = "external"
"""``metadata.nbagent.kind`` of a cell an external client inserted or replaced."""
ALIVE_TIMEOUT_S = 3.0
PROBE_OP = "ping"
#: How a client gets the variables ``list_variables`` left out (it has no ``python`` tool).
CLIENT_ASKS = "ask list_variables (names=[...]) or run_code"
RECONNECT_WAIT_S = 1.0


class ClientNotebook(_Shared):
    """The notebook tools' shared state for one client: its reads, and its mark on cells."""

    def __init__(self, the_bridge: Bridge, client: str, seen: dict[str, str] | None = None,
                 brief: bool = False) -> None:
        super().__init__(the_bridge, lambda: "")
        self.client = client
        self.brief = brief
        if seen is not None:
            self.seen = seen  # a brief read shares the client's reads

    def mark(self, ctx: ToolContext, kind: str = "edit") -> JSONObject:
        """Every cell a client writes is marked external, whatever the kind: never nbagent's own
        (no origin), so no re-run or rollback removes it."""
        return {"kind": EXTERNAL, "client": self.client, "at": now()}

    async def cells(self) -> list[CellJSON]:
        cells = await super().cells()
        if self.brief:  # sources only: a quick look at a long notebook
            return [_without_outputs(c) for c in cells]
        return cells


def _without_outputs(cell: CellJSON) -> CellJSON:
    short = cell.copy()
    short.pop("outputs", None)
    return short


def _at_first_use(make: Callable[[], Callable[[str], str]]) -> Callable[[str], str]:
    """A redaction whose secrets are read when it is first used: after the call's code ran
    (``notebook_run`` writes the outputs of a cell that may have made a credential variable, as the
    agent's own loop does: :func:`nbagent.engine.loop.tool_runner.run_tool_call`)."""
    made: list[Callable[[str], str]] = []

    def redact(text: str) -> str:
        if not made:
            made.append(make())
        return made[0](text)
    return redact


class Operations:
    """The server's calls, each run on the kernel's loop by the MCP layer."""

    def __init__(self, the_bridge: Bridge, gate: ServeGate, log: ActionLog, shell: InteractiveShell,
                 cwd: Callable[[], Path] = Path.cwd, redactor: Callable[[], Callable[[str], str]] | None = None,
                 context_tokens: Callable[[], int] = lambda: DEFAULT_KERNEL_CONTEXT_TOKENS) -> None:
        self.bridge = the_bridge
        self.gate = gate
        self.context_tokens = context_tokens  # the user's kernel_context_tokens, as a prompt gets it
        self.log = log
        self.executor = ShellExecutor(shell)
        self.cwd = cwd
        # Makes one call's redaction (what a tool redacts before it cuts; the reply is redacted again
        # whole): the secrets are read once a call, not once a cell of a page (each read walks the namespace).
        self.redactor = redactor
        self._ids = itertools.count(1)
        self.running: Client | None = None  # the client whose code runs now (only it may interrupt it)

    def _notebook(self, client: Client) -> ClientNotebook:
        if not isinstance(client.state, ClientNotebook):  # None until the client's first call
            client.state = ClientNotebook(self.bridge, client.name)
        return client.state

    def _ctx(self, client: Client) -> ToolContext:
        return ToolContext(cwd=self.cwd(), tool_use_id=f"mcp-{next(self._ids)}", executor=self.executor,
                           redact=_at_first_use(self.redactor) if self.redactor is not None else None)

    async def alive(self) -> bool:
        """Whether a notebook front-end answers now (a closed notebook does not)."""
        if not self.bridge.connected and not await self._reconnect():
            return False
        try:
            # An op the protocol does not define: every request gets one reply, an unknown op an
            # error, so this probes the front-end without sending it the document (a read would).
            await self.bridge.request(PROBE_OP, timeout=ALIVE_TIMEOUT_S, retry=False)
        except BridgeUnavailable:
            return False
        except BridgeError:
            pass  # "unknown op": the front-end answered, so the notebook is open
        return True

    async def _reconnect(self) -> bool:
        """A notebook opened again after it closed (or after a probe went unanswered): open a new
        comm and give the front-end a moment to say hello (it answers on the kernel's loop, which
        must not be blocked for it)."""
        if not self.bridge.open():
            return False
        deadline = time.monotonic() + RECONNECT_WAIT_S
        # The bridge signals its hello on a threading.Event (set from the shell thread or this
        # loop); a short poll keeps this loop free to deliver it.
        while not self.bridge.connected and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        return bool(self.bridge.connected)

    def _record(self, client: Client, tool: str, what: str, allowed_by: str, out: ToolOutput | None,
                refused: str | None = None) -> None:
        # The record is saved in the task folder and printed by ``%agent history``: redacted whole
        # (the tool's output is not: the reply is redacted after), before its last line is cut.
        clean = self.redactor() if self.redactor is not None else (lambda text: text)
        if refused is not None:
            outcome = f"refused: {clean(refused)}"
        elif out is not None and out.is_error:
            line = _error_line(out)
            outcome = "error: " + clean(line)[:200] if line else "error"
        else:
            outcome = "ok"
        self.log.add(ExternalAction(at=now(), client=client.name, tool=tool, what=what, allowed_by=allowed_by,
                                    outcome=outcome))

    def _unshowable(self, field: str, text: object) -> str | None:
        """Why a client's own ``code`` or ``source`` is refused before asking: the card shows it
        redacted, and part of it reads as a secret (a key's value, or a key's shape: ``"Bearer …"``
        takes any run of letters, digits and ``./+-_~``, a host, a path or a base64 payload). What
        runs is the client's text as written, so the user would allow what the card hides:
        ``exec(b64decode("Bearer [redacted]"[7:]))``. nbagent's own model cannot do this: its tool
        inputs are redacted before they run, so they run as its card shows them."""
        if self.redactor is None or not isinstance(text, str) or self.redactor()(text) == text:
            return None
        return (f"The {field} holds text that reads as a secret (a key, or the shape of one such as 'Bearer …'), "
                "which the user's card would show as [redacted] while it runs as written: not asked, not run. "
                "Send it without that text (code can read a credential from the environment or a file).")

    async def _gated(self, client: Client, request: Request,
                     act: Callable[[Allowed], Awaitable[ToolOutput]]) -> ToolOutput:
        try:
            allowed = await self.gate.check(request)
        except CallRefused as exc:
            self._record(client, request.tool, request.summary, "refused", None, str(exc))
            raise
        try:
            out: ToolOutput = await act(allowed)
        except CallRefused as exc:  # allowed, then refused: the cell changed while the user was asked
            self._record(client, request.tool, request.summary, allowed.by, None, str(exc))
            self._not_done(allowed, "✗ then not done: ", str(exc))
            raise
        self._record(client, request.tool, request.summary, allowed.by, out)
        if out.is_error:  # a run's code ran up to its error (what it did stays done); an edit is whole or nothing
            how = "✗ then failed: " if request.tool in RAN_WHEN_FAILED else "✗ then not done: "
            self._not_done(allowed, how, _error_line(out) or "the call failed")
        return out

    def _not_done(self, allowed: Allowed, how: str, why: str) -> None:
        if allowed.card is not None:
            clean = self.redactor() if self.redactor is not None else (lambda text: text)
            self.gate.panel.not_done(allowed.card, how + clean(why)[:300])

    # --- reading ------------------------------------------------------------------------------
    async def read(self, client: Client, start: int, count: int, outputs: bool) -> ToolOutput:
        shared = self._notebook(client)
        what = f"read cells from {start} ({'with outputs' if outputs else 'sources only'})"
        if not self.gate.allowed_by_admin("notebook_read"):  # as for nbagent's model: nothing asks, nothing is read
            why = "notebook_read is not in the admin policy's allowed_tools: not read."
            self._record(client, "notebook_read", what, "refused", None, why)
            return ToolOutput(why, is_error=True)
        try:  # the user's deny list and pre_tool_use hook hold for reads as for nbagent's model
            await self.gate.by_rules("notebook_read", {"start": start, "count": count})
        except CallRefused as exc:
            self._record(client, "notebook_read", what, "refused", None, str(exc))
            return ToolOutput(str(exc), is_error=True)
        view = ClientNotebook(self.bridge, client.name, seen=shared.seen, brief=not outputs)
        out = await NotebookRead(view).run({"start": start, "count": count}, self._ctx(client))
        self._record(client, "notebook_read", what, "not asked (read-only)", out)
        return out

    def variables(self, client: Client, shell: InteractiveShell, names: list[str]) -> str:
        """The kernel context nbagent's own model gets (the schema builder, its budget and its
        "left out" line), with ``names`` described in full as if a prompt named them."""
        from ...engine.loop.facts import FactsFocus
        from ..kernel_context import KernelContext

        # Variables only, in the budget a prompt's kernel context has (the recent cells, which the
        # client does not get, took up to half of it), and the client's own way to get the rest.
        focus = FactsFocus(prompt=" ".join(f"`{n}`" for n in names), token_budget=self.context_tokens())
        # No last-error watcher: variables only need none, and kernel_facts_from's registers a
        # post_run_cell hook on the shell at each call, never removed (every cell then ran them all).
        state = KernelContext(shell).variables_only(focus, ask=CLIENT_ASKS)
        lines = [f"{v.name}: {v.type}" + (f" ({v.summary})" if v.summary else "") + (f"\n{v.detail}" if v.detail else "")
                 for v in state.variables]
        if state.left_out:
            lines.append(state.left_out)
        unknown = [n for n in names if n not in shell.user_ns]  # a typo is said, not silently left out
        if unknown:
            lines.append(f"Not in the kernel's namespace: {shown_names(unknown)}.")
        what = "list variables" + (f" ({shown_names(names)} in full)" if names else "")
        self.log.add(ExternalAction(at=now(), client=client.name, tool="list_variables", what=what,
                                    allowed_by="not asked (read-only)", outcome="ok"))
        return "\n".join(lines) or "(no user variables)"

    # --- writing and running ------------------------------------------------------------------
    async def edit(self, client: Client, args: JSONObject) -> ToolOutput:
        shared = self._notebook(client)
        action, given = args["action"], args.get("cell_id")
        cell_id = given if isinstance(given, str) else None  # the SDK validated it: a str or None
        detail = str(args.get("source") or "")
        source, index = args.get("source"), args.get("index")
        if (why := edit_input_problem(str(action), cell_id, index if isinstance(index, int) else None,
                                      source if isinstance(source, str) else None)) is not None:
            # No card for a call that cannot succeed: the user would allow it only to see it fail.
            self._record(client, "notebook_edit", f"{action} a cell", "refused", None, why)
            return ToolOutput(why, is_error=True)
        if (why := too_long("source", detail) or self._unshowable("source", source)) is not None:
            self._record(client, "notebook_edit", f"{action} a cell ({len(detail):,} characters)", "refused", None, why)
            return ToolOutput(why, is_error=True)
        if action != "insert" and cell_id:
            if cell_id not in shared.seen:  # refused before asking: the user is not asked about a guess
                # Not a cell's id: any string the client sent (up to the SDK's 4 MiB body), so the
                # record (task folder, %agent history) holds it bounded and escaped, as it does names.
                shown = shown_names([cell_id])
                why = f"Cell {shown} has not been read: read it with notebook_read before changing it."
                self._record(client, "notebook_edit", f"{action} cell {shown}", "refused", None, why)
                return ToolOutput(why, is_error=True)
            if action != "replace":
                cell = (await shared.read_cell(cell_id))[1]
                detail = _source(cell)
                if action == "delete" and not deletable(cell):  # it would be refused once allowed
                    why = (f"Cell {cell_id} is not deleted: notebook_edit deletes only code cells nbagent's agent made; "
                           "the user's cells and those clients insert are the user's to delete. Ask the user to "
                           "delete it, or replace it.")
                    self._record(client, "notebook_edit", f"delete cell {cell_id}", "refused", None, why)
                    return ToolOutput(why, is_error=True)
        cells = await shared.cells()
        if action == "insert" and cell_id and not any(c.get("id") == cell_id for c in cells):
            # Refused before asking too: the id would be shown in the card as the client wrote it.
            why = f"No cell with id {cell_id!r} in the notebook: read it with notebook_read and insert after a cell it lists."
            self._record(client, "notebook_edit", "insert a cell", "refused", None, why)
            return ToolOutput(why, is_error=True)
        # Which cell, as it is and as it will be (nbagent's own cards show the same): cell ids are
        # not shown in the notebook, so "replace cell 3f2a…" alone would not say which of the user's
        # cells it overwrites, nor a move where to.
        preview = edit_preview(cells, args, lambda cid, source: shared.seen.get(cid) == source_hash(source))
        where = f" {cell_id}" if cell_id else ""
        if action == "insert":
            index = args.get("index")
            where = f" after {cell_id}" if cell_id else " at the end" if index is None else f" at index {index}"
        summary = f"{action} a {args.get('cell_type', 'code')} cell{where}" if action == "insert" else f"{action} cell{where}"
        request = Request(client.name, "notebook_edit", summary, detail, client.key, preview,
                          input={k: v for k, v in args.items() if v is not None},
                          always_asks=NotebookEdit(shared).always_asks(args))

        async def act(_allowed: Allowed) -> ToolOutput:
            return await NotebookEdit(shared).run(args, self._ctx(client))

        return await self._gated(client, request, act)

    async def run_cell(self, client: Client, cell_id: str, timeout_s: int) -> ToolOutput:
        shared = self._notebook(client)
        # Which cell, as nbagent's own card says it (its place and type: ids are not shown in
        # JupyterLab), and the source that will run.
        preview = run_preview(await shared.cells(), cell_id)
        if preview.before is None:  # refused before asking: no such cell, or not a code cell
            await shared.read_cell(cell_id)  # raises "no cell with id …"
            raise ToolExecutionError(f"Cell {cell_id} is not a code cell: only code cells run. Not run.")
        shown = preview.before
        request = Request(client.name, "notebook_run", f"run cell {cell_id}", shown, client.key, preview,
                          input={"cell_id": cell_id, "timeout_s": timeout_s})

        async def act(_allowed: Allowed) -> ToolOutput:
            _i, now_cell = await shared.read_cell(cell_id)
            if source_hash(_source(now_cell)) != source_hash(shown):  # edited while the user was asked
                raise CallRefused(f"Cell {cell_id} changed while the user was asked: not run. Ask again.")
            # The run reads the cell once more to run it, and the loop serves other calls (another
            # client's edit, this one's allowed always) while it awaits: what it runs is compared with
            # what the card showed there, where it is read, not only here.
            ctx = self._ctx(client)
            shared.shown_runs[ctx.tool_use_id] = source_hash(shown)
            try:
                return await self._running(client, NotebookRun(shared).run({"cell_id": cell_id, "timeout_s": timeout_s},
                                                                           ctx))
            finally:
                shared.shown_runs.pop(ctx.tool_use_id, None)

        return await self._gated(client, request, act)

    async def run_code(self, client: Client, code: str, timeout_s: int) -> ToolOutput:
        if (why := too_long("code", code) or self._unshowable("code", code)) is not None:  # before the card shows it
            self._record(client, "python", f"run code ({len(code):,} characters)", "refused", None, why)
            return ToolOutput(why, is_error=True)
        request = Request(client.name, "python", "run code in the kernel", code, client.key, input={"code": code})

        async def act(_allowed: Allowed) -> ToolOutput:
            with interrupt_after(timeout_s, self.executor) as limit:
                out = await self._running(client, Python().run({"code": code}, self._ctx(client)))
            return limit.noted(out)  # its images bounded by the python tool (ShellExecutor.bounded_images)

        return await self._gated(client, request, act)

    async def _running(self, client: Client, work: Awaitable[ToolOutput]) -> ToolOutput:
        self.running = client
        try:
            return await work
        finally:
            self.running = None

    def interrupt(self, client: Client) -> str:
        """Interrupt the code this client's run is executing (server thread: the kernel's is busy).
        The user's own cells, nbagent's agent and another client's run are never interrupted from
        outside: one agent on the notebook cannot stop another's work (the user's ■ can)."""
        running = self.running
        name = running.name if running is not None else "nothing"
        others = running is not None and running.key != client.key
        done = running is not None and not others and interrupt_user_code(only_code=True, owner=self.executor)
        self.log.add(ExternalAction(at=now(), client=client.name, tool="interrupt", what=f"interrupt ({name} running)",
                                    allowed_by="not asked",
                                    outcome="ok" if done else "refused" if others else "nothing to interrupt"))
        if done:
            return f"Interrupted the code {name} started."
        if others:
            return (f"Not interrupted: the code running was started by another client ({name}); "
                    "a client interrupts only its own runs (the user can stop any with ■).")
        return "Nothing you started is running: nothing interrupted (the user's own cells are never interrupted)."


RAN_WHEN_FAILED = frozenset({"python", "notebook_run"})  # run_code asks as the python tool
"""Tools whose error result comes from code that ran: the card says it failed, not that it was not done."""


def _error_line(out: ToolOutput) -> str:
    """What an error result says, in a line: a traceback's last line names it."""
    text = out.content if isinstance(out.content, str) else str(out.content[0].get("text", "")) if out.content else ""
    lines = [line for line in text.splitlines() if line.strip() and line.strip() != "[error]"]
    return lines[-1] if lines else ""
