"""One MCP server connection: its long-lived task, its tools, calls to them, its state.

Runs inside the manager's event loop (see :mod:`nbagent.tools.mcp.manager`). The ``mcp`` SDK's client
context managers hold anyio cancel scopes, which must be entered and exited in the same task, so
:meth:`ServerConnection.serve` opens the client, lists the tools and closes the client in one task;
tool calls only send requests through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import io
import logging
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import AsyncIterator, Awaitable, Callable, Coroutine, Literal, TextIO

import anyio
import httpx2
import mcp.types as mcp_types
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client._transport import ReadStream, TransportStreams
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import ToolContext, ToolOutput
from nbagent.engine.contracts.waits import within_task

from .config import HttpServer, ServerConfig, StdioServer, mcp_tool_name
from .results import describe_error, to_tool_output, without_file_secrets
from .schema import InputCheck, input_check

log = logging.getLogger("nbagent.mcp")

_TRANSPORT_ERRORS = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream,
                     httpx2.TransportError)
ServerState = Literal["pending", "connecting", "connected", "failed", "stopped", "closed"]
Bridge = Callable[[Coroutine[object, None, ToolOutput]], Awaitable[ToolOutput]]
_Received = SessionMessage | Exception
_STDERR_TAIL = 600


@dataclass(frozen=True)
class ServerStatus:
    """One server's state as ``%agent status`` shows it."""

    name: str
    transport: str
    target: str
    """The command line or URL (never env values or headers)."""
    state: ServerState
    tools: tuple[str, ...] = ()
    """The names the model sees (``mcp__SERVER__TOOL``)."""
    error: str | None = None
    unchecked: str | None = None
    """Tools whose input schema nbagent cannot use, with why (their inputs go to the server unchecked)."""

    def line(self) -> str:
        """One line: name, state, tools."""
        head = f"{self.name} ({self.transport}: {self.target}) {self.state}"
        if self.state == "connected":
            head += f", {len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
            if self.tools:
                head += ": " + ", ".join(self.tools)
        if self.error:
            head += f" — {self.error}"
        return head


class McpTool:
    """One tool of an MCP server, as the loop's :class:`~nbagent.engine.contracts.tool_api.ToolLike`.

    ``read_only`` is True only when the server annotates the tool ``readOnlyHint: true``; every
    other tool goes through the permission prompt (the default policy: ask).
    """

    def __init__(self, connection: "ServerConnection", tool: mcp_types.Tool) -> None:
        self.server = connection.config.name
        self.remote_name = tool.name
        self.name = mcp_tool_name(self.server, tool.name)
        self.description = tool.description or tool.title or f"The {tool.name!r} tool of MCP server {self.server!r}."
        self.read_only = bool(tool.annotations is not None and tool.annotations.read_only_hint is True)
        self._schema = dict(tool.input_schema or {"type": "object"})
        self.checker: InputCheck = input_check(self._schema)
        self._connection = connection

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, read_only={self.read_only})"

    def schema(self) -> JSONObject:
        """The server's JSON schema, as sent to the model."""
        return dict(self._schema)

    validates_slowly = True
    """The server's schema may hold any regex (``^(a+)+$``): the loop validates in a worker thread,
    so a catastrophic pattern cannot block the event loop (and with it the abort)."""

    def validate(self, raw_input: object) -> JSONObject:
        """Check the input against the server's schema (``jsonschema``), or raise ``ToolInputError``."""
        return self.checker.validate(self.name, raw_input)

    async def run(self, tool_input: JSONObject, ctx: ToolContext) -> ToolOutput:
        """Call the tool on its server; failures come back as ``is_error`` outputs, never raised."""
        conn = self._connection
        return without_file_secrets(await conn.bridge(conn.call(self, tool_input)), tool_input)


class _EofWatch:
    """A transport's read stream that reports its end: for stdio, that is the server exiting."""

    def __init__(self, inner: ReadStream[_Received], on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    def __getattr__(self, name: str) -> object:  # e.g. ``last_context``, read by the dispatcher
        return getattr(self._inner, name)

    async def receive(self) -> _Received:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise

    def __aiter__(self) -> "_EofWatch":
        return self

    async def __anext__(self) -> _Received:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_EofWatch":
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> None:
        await self.aclose()


class ServerConnection:
    """The mutable state of one server; its :meth:`serve` task owns the SDK client.

    Only the manager's loop changes this state; other threads only read it (``tools``, status).
    ``bridge`` runs a call coroutine in that loop and awaits it from the caller's loop.
    """

    def __init__(self, config: ServerConfig, cwd: Path, connect_timeout: float, call_timeout: float,
                 bridge: Bridge, redact: Callable[[str], str] = str) -> None:
        self.config = config
        self.redact = redact
        """Replaces configured secrets in what is shown: errors, the command line, status."""
        self.bridge = bridge
        self.cwd = cwd
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.state: ServerState = "pending"
        self.error: str | None = None
        self.tools: tuple[McpTool, ...] = ()
        self.client: Client | None = None
        self.task: asyncio.Task[None] | None = None
        self.waited = False  # the bounded wait happened once for this connection
        self.reported = False  # its failure or stop was reported once
        self.unchecked_reported = False
        self.ready = asyncio.Event()  # set when it leaves "connecting"
        self.wake = asyncio.Event()  # set to make serve() leave its connection
        self.stopping = False
        self.errlog: TextIO | None = None

    # -- lifecycle (inside the serve task) ------------------------------------------------------
    def start(self) -> None:
        """Begin connecting (call inside the manager's loop)."""
        self.state, self.error, self.tools, self.waited, self.reported = "connecting", None, (), False, False
        self.ready, self.wake, self.stopping = asyncio.Event(), asyncio.Event(), False
        self.task = asyncio.get_running_loop().create_task(self.serve(), name=f"mcp:{self.config.name}")

    async def serve(self) -> None:
        """Connect, list the tools, then hold the connection until woken (stop or end of stream)."""
        try:
            # The handshake's deadline lives in a scope that encloses the whole connection, so the
            # SDK's own scopes nest properly inside it; it is lifted once connected.
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                async with contextlib.AsyncExitStack() as stack:
                    transport = await self._transport(stack)
                    info = mcp_types.Implementation(name="nbagent", version=_version())
                    client = await stack.enter_async_context(Client(transport, cache=None, client_info=info))
                    listed = await _list_tools(client)
                    scope.deadline = math.inf
                    self.client = client
                    self.tools = tuple(McpTool(self, t) for t in listed)
                    self.state = "connected"
                    self.ready.set()
                    log.info("MCP server %r connected with %d tools", self.config.name, len(self.tools))
                    await self.wake.wait()
            if scope.cancelled_caught and self.state == "connecting":
                self._end("failed", f"no answer to the handshake within {self.connect_timeout:g} s")
        except asyncio.CancelledError:
            self._end("closed", None)
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the server or transport did, never crash the loop
            self._end("failed" if self.state == "connecting" else "stopped", describe_error(exc))
        finally:
            self.client = None
            if self.state in ("connecting", "connected"):
                self._end("closed" if self.stopping else "stopped", self.error or "the connection closed")
            if self.errlog is not None:
                self.errlog.close()
                self.errlog = None
            self.ready.set()

    async def _transport(self, stack: contextlib.AsyncExitStack[bool | None]) -> Transport:
        cfg = self.config
        if isinstance(cfg, StdioServer):
            # A file of our own for the server's stderr: Jupyter's sys.stderr has no file descriptor,
            # and its last lines explain a server that fails.
            self.errlog = io.TextIOWrapper(tempfile.TemporaryFile(), encoding="utf-8")  # only its fd is used
            params = StdioServerParameters(command=cfg.command, args=list(cfg.args), env=dict(cfg.env) or None,
                                           cwd=str(cfg.cwd or self.cwd))
            return _watched(stdio_client(params, errlog=self.errlog), self._on_eof)
        assert isinstance(cfg, HttpServer)
        http = await stack.enter_async_context(httpx2.AsyncClient(
            headers=dict(cfg.headers), timeout=httpx2.Timeout(30.0, read=300.0)))
        return _watched(streamable_http_client(cfg.url, http_client=http), self._on_eof)

    def _on_eof(self) -> None:
        if not self.stopping and self.state == "connected":
            stdio = isinstance(self.config, StdioServer)
            self._end("stopped", "its process exited" if stdio else "the server closed the connection")
        self.wake.set()

    def _end(self, state: ServerState, error: str | None) -> None:
        if self.state in ("failed", "stopped", "closed"):
            return  # the first account of what happened is the one reported
        if state == "failed" and error:
            # Why a server would not start is usually on its stderr. (Not added for a stop later on:
            # the tail would be whatever it logged last, often an unrelated tool error.)
            error += self._stderr_tail()
        self.state, self.error = state, self.redact(error) if error else error
        if state == "failed":
            self.tools = ()
        self.ready.set()
        self.wake.set()
        if state != "closed":
            # info, not warning: the user hears about it as a Notice; a warning would also reach
            # logging's last-resort handler, i.e. the notebook's stderr.
            log.info("MCP server %r %s: %s", self.config.name, state, self.error)  # redacted: logs reach outputs

    def _stderr_tail(self) -> str:
        if self.errlog is None:
            return ""
        try:
            # pread: the server shares this file offset; seeking would make it overwrite its log.
            fd = self.errlog.fileno()
            size = os.fstat(fd).st_size
            tail = os.pread(fd, _STDERR_TAIL, max(0, size - _STDERR_TAIL)).decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        lines = tail.splitlines()[-4:]
        return f" (stderr: …{' | '.join(line.strip() for line in lines)})" if lines else ""

    # -- calls (run in the manager's loop through ``bridge``) -------------------------------------
    async def call(self, tool: McpTool, arguments: JSONObject) -> ToolOutput:
        client = self.client
        if self.state != "connected" or client is None:
            why = f": {self.error}" if self.error else ""
            return ToolOutput(f"MCP server {self.config.name!r} is not available ({self.state}{why}); "
                              f"{tool.remote_name!r} was not run.", is_error=True)
        try:
            # Our own bound around the whole call: an unanswered call, a malformed reply or a reply
            # with another id would otherwise wait until the user aborts.
            result = await within_task(client.call_tool(tool.remote_name, arguments), self.call_timeout)
        except asyncio.TimeoutError:
            return ToolOutput(f"MCP server {self.config.name!r} did not answer {tool.remote_name!r} within "
                              f"{self.call_timeout:g} s (mcp_call_timeout_s); the call was abandoned.", is_error=True)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self._end("stopped", "the connection closed during a tool call")
                return self._lost(tool)
            return ToolOutput(f"MCP server {self.config.name!r} refused {tool.remote_name!r}: {exc}", is_error=True)
        except _TRANSPORT_ERRORS as exc:  # the server is unreachable
            self._end("stopped", describe_error(exc))
            return self._lost(tool)
        except Exception as exc:  # noqa: BLE001 - e.g. a result that breaks its own output schema
            return ToolOutput(f"MCP server {self.config.name!r}: {tool.remote_name!r} failed: {describe_error(exc)}",
                              is_error=True)
        return to_tool_output(result)

    def _lost(self, tool: McpTool) -> ToolOutput:
        return ToolOutput(f"MCP server {self.config.name!r} stopped ({self.error}); {tool.remote_name!r} did not "
                          f"complete and the server's tools are no longer available.", is_error=True)

    def status(self) -> ServerStatus:
        """A snapshot of the state for ``%agent status``."""
        unchecked = [f"{t.name} ({t.checker.unchecked})" for t in self.tools if t.checker.validator is None]
        return ServerStatus(self.config.name, self.config.transport, self.redact(self.config.describe()), self.state,
                            tuple(t.name for t in self.tools) if self.state == "connected" else (),
                            self.error, self.redact("; ".join(unchecked)) or None)


@contextlib.asynccontextmanager
async def _watched(transport: Transport, on_eof: Callable[[], None]) -> AsyncIterator[TransportStreams]:
    async with transport as (read_stream, write_stream):
        yield _EofWatch(read_stream, on_eof), write_stream


async def _list_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end must not hang the connection
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _version() -> str:
    # From the package metadata, not ``nbagent.__version__``: tools import nothing above them.
    try:
        return importlib.metadata.version("nbagent")
    except importlib.metadata.PackageNotFoundError:
        return "0"


__all__ = ["ServerConnection", "ServerState", "ServerStatus", "McpTool"]
