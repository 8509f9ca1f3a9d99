"""The MCP tools a client sees, as the ``mcp`` SDK's ``MCPServer`` serves them over Streamable HTTP.

Each tool function runs on the server's thread: it names the client (:mod:`.clients`), hands the
work to the kernel's loop (:mod:`.kernel_loop`) and turns nbagent's tool output into MCP content
(text with the configured secrets redacted as they are at the call, images as images). A refusal or a failed call is a tool
error (``isError``) with a message the client's model can act on, never an exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Awaitable, Callable, Literal, Mapping, Sequence

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ContentBlock, ImageContent, TextContent, ToolAnnotations
from pydantic import Field

from ...engine.contracts.config import DEFAULT_TOOL_OUTPUT_LIMIT
from ...engine.contracts.tool_api import ToolExecutionError, ToolOutput, truncate_middle
from ...engine.loop.sanitize import Sanitizer
from ..document.tools import DEFAULT_RUN_TIMEOUT_S
from .clients import Client, Clients, identify
from .gate import CallRefused
from .kernel_loop import KernelLoop
from .operations import Operations

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...engine.contracts.json_types import JSONObject

INSTRUCTIONS = (
    "Tools on a live Jupyter notebook and its kernel, served by nbagent inside the notebook. Read with "
    "notebook_read before editing: an edit of a cell you did not read, or that changed since, is refused. "
    "Every edit and every run asks the user in the notebook (Allow / Deny); a denied call returns an error "
    "that says so: do not retry it unchanged.")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def _content(out: ToolOutput, sanitizer: Sanitizer, limit: int) -> list[ContentBlock]:
    """The result's blocks as MCP content: each text redacted, then cut to ``limit`` characters as
    nbagent's loop cuts its model's tool results (a run printing 10 MB sent the client 2 MB, the
    capture limit, more than any client's context holds)."""
    blocks: Sequence[Mapping[str, object]] = [{"type": "text", "text": out.content}] \
        if isinstance(out.content, str) else out.content
    content: list[ContentBlock] = []
    for block in blocks:
        match block:
            case {"type": "image", "source": dict() as source}:
                content.append(ImageContent(data=str(source.get("data", "")),
                                            mime_type=str(source.get("media_type", ""))))
            case {"type": "text"}:
                content.append(TextContent(text=truncate_middle(sanitizer.redact(str(block.get("text", ""))), limit)))
    return content


def _error(message: str, sanitizer: Sanitizer) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=sanitizer.redact(message))], is_error=True)


UNREDACTABLE = ("nbagent could not read the kernel's credential variables to redact this reply (a cell was "
                "changing them), so it is not sent: call again.")


class ToolCalls:
    """The glue between the SDK's tool functions and :class:`Operations` (server thread).

    ``sanitizer`` is asked at each reply, not once: a secret set after the server started (a key
    put in ``os.environ``, a new session's ``api_key`` or wider ``secret_env``) is redacted too."""

    def __init__(self, ops: Operations, clients: Clients, kernel: KernelLoop, sanitizer: Callable[[], Sanitizer],
                 output_limit: Callable[[], int] = lambda: DEFAULT_TOOL_OUTPUT_LIMIT) -> None:
        self.ops, self.clients, self.kernel, self.sanitizer = ops, clients, kernel, sanitizer
        self.output_limit = output_limit  # the session's tool_output_limit, as its model's results get

    async def call(self, ctx: Context, work: Callable[[Client], Awaitable[ToolOutput | str]]) -> CallToolResult:
        failed: str | None = None
        try:
            client = self.clients.admit(identify(ctx))
            out = await self.kernel.run(lambda: work(client))
        except (CallRefused, ToolExecutionError) as exc:
            failed = str(exc)
        except Exception as exc:  # noqa: BLE001 - the kernel's loop gone, or a failure of ours: said, redacted
            failed = f"nbagent could not complete the call ({type(exc).__name__}: {exc})."
        try:
            sanitizer = self.sanitizer()
        except Exception:  # noqa: BLE001 - the secrets could not be read: nothing is sent unredacted
            return CallToolResult(content=[TextContent(text=UNREDACTABLE)], is_error=True)
        if failed is not None:
            return _error(failed, sanitizer)
        if isinstance(out, str):
            out = ToolOutput(out)
        return CallToolResult(content=_content(out, sanitizer, self.output_limit()), is_error=out.is_error)

    def now(self, ctx: Context, work: Callable[[Client], str]) -> CallToolResult:
        """For a call that must not wait for the kernel's loop (interrupt: the loop is busy)."""
        try:
            text = work(self.clients.admit(identify(ctx)))
        except CallRefused as exc:
            return _error(str(exc), self.sanitizer())
        return CallToolResult(content=[TextContent(text=self.sanitizer().redact(text))])


# Every argument described in the schema a client's model reads: timeout_s, code and cell_id had
# none (what happens at the limit, where the code runs, where a cell id comes from were guesses).
CELL_ID = "The id of a code cell, as notebook_read shows it (id=...)."
CODE = "Python (IPython syntax: magics, !commands) run in the kernel's namespace; a trailing expression's value is returned."
TIMEOUT = ("Seconds the code may run; then it is interrupted (KeyboardInterrupt) and the result says it timed out. "
           "A call also waits, uncounted, for the user's click and for a running cell to end.")
ACTION = ("insert (needs source; after cell_id, or at index), replace (cell_id, source), delete (cell_id) or "
          "move (cell_id, index). Replace, delete and move need the cell read first with notebook_read.")


def build_server(calls: ToolCalls, shell: InteractiveShell) -> MCPServer:
    """The ``MCPServer`` with nbagent's notebook tools."""
    ops = calls.ops
    server: MCPServer = MCPServer("nbagent", instructions=INSTRUCTIONS, log_level="WARNING")

    async def notebook_read(ctx: Context,
                            start: Annotated[int, Field(ge=0, description="Index of the first cell.")] = 0,
                            count: Annotated[int, Field(ge=1, le=100, description="Most cells to read.")] = 30,
                            outputs: Annotated[bool, Field(description="Include outputs (images as images); "
                                                                       "false: sources only.")] = True,
                            ) -> CallToolResult:
        """Read the live notebook's cells in pages: index, id, type, source and (unless outputs=false) outputs."""
        return await calls.call(ctx, lambda c: ops.read(c, start, count, outputs))

    async def notebook_edit(ctx: Context, action: Annotated[Literal["insert", "replace", "delete", "move"],
                                                            Field(description=ACTION)],
                            cell_id: Annotated[str | None, Field(description="The cell to replace, delete or move; "
                                                                             "for insert, the cell to insert after.")] = None,
                            index: Annotated[int | None, Field(ge=0, description="insert: position when no cell_id; "
                                                                                 "move: the new position.")] = None,
                            source: Annotated[str | None, Field(description="insert/replace: the source.")] = None,
                            cell_type: Annotated[Literal["code", "markdown"],
                                                 Field(description="insert/replace: the cell's type.")] = "code",
                            ) -> CallToolResult:
        """Insert, replace, delete or move one cell (asks the user in the notebook first). delete removes
        only code cells nbagent's own agent made; the user's cells, and those you insert, are the user's to delete."""
        args: JSONObject = {"action": action, "cell_id": cell_id, "index": index, "source": source, "cell_type": cell_type}
        return await calls.call(ctx, lambda c: ops.edit(c, args))

    async def notebook_run(ctx: Context, cell_id: Annotated[str, Field(description=CELL_ID)],
                           timeout_s: Annotated[int, Field(ge=1, le=3600, description=TIMEOUT)] = DEFAULT_RUN_TIMEOUT_S,
                           ) -> CallToolResult:
        """Run a code cell in the live kernel (asks first); its outputs land in the cell."""
        return await calls.call(ctx, lambda c: ops.run_cell(c, cell_id, timeout_s))

    async def run_code(ctx: Context, code: Annotated[str, Field(min_length=1, description=CODE)],
                       timeout_s: Annotated[int, Field(ge=1, le=3600, description=TIMEOUT)] = DEFAULT_RUN_TIMEOUT_S,
                       ) -> CallToolResult:
        """Run Python code in the live kernel's namespace (asks first); returns output, value and errors."""
        return await calls.call(ctx, lambda c: ops.run_code(c, code, timeout_s))

    async def list_variables(ctx: Context, names: Annotated[list[str] | None, Field(
            description="Variables to describe in full (a DataFrame: every column's dtype, missing count, "
                        "levels, sample rows); the others get one line.")] = None) -> CallToolResult:
        """The kernel's user variables, as nbagent's own model sees them: name, type and shape, in full
        for the ones named (or the ones recent cells use), within nbagent's kernel-context budget."""

        async def work(client: Client) -> str:
            return ops.variables(client, shell, names or [])

        return await calls.call(ctx, work)

    def interrupt(ctx: Context) -> CallToolResult:
        """Interrupt code this server's clients started (the user's own cells are never interrupted)."""
        return calls.now(ctx, ops.interrupt)

    for fn, notes in ((notebook_read, READ_ONLY), (list_variables, READ_ONLY), (notebook_edit, WRITES),
                      (notebook_run, WRITES), (run_code, WRITES), (interrupt, None)):
        server.add_tool(fn, annotations=notes, structured_output=False)
    return server
