"""MCP tool servers: connect in the background, offer their tools, wait for them a bounded time.

``McpManager`` connects to the configured servers (stdio or streamable HTTP, see
:mod:`nbagent.tools.mcp.config`), one long-lived task per server
(:class:`~nbagent.tools.mcp.connection.ServerConnection`). Those tasks live in the manager's own
event loop on a daemon thread, started with the session: the agent's loop is not a stable home,
because a notebook may run each cell in a fresh ``asyncio.run`` (on a worker thread) and a script
may call ``asyncio.run`` per prompt; every new loop would otherwise restart the servers, and a
loop that ends would kill them. Calls and waits cross over with ``run_coroutine_threadsafe``.

The manager is the loop's :class:`~nbagent.engine.contracts.tool_api.ToolSource` for these servers:

- ``ready()`` before each request: waits at most ``wait_timeout`` (10 s) for servers still
  connecting, once per server; it returns warnings (a server still connecting, one that failed to
  start, one that stopped mid-session — each reported once) and never raises;
- ``tools()``: the tools of the connected servers, named ``mcp__SERVER__TOOL``.

The manager bounds its own wait (and says which server was late); an outer bound a caller puts
around ``ready()`` (the engine's ``tool_wait_s``) is only a safety net and should be longer than
``wait_timeout``. ``close_with(owner)`` ties the servers' life to an owner (the agent): when it
is garbage-collected, the manager closes.

A call to a server that is gone answers an ``is_error`` result. ``await manager.aclose()`` (or
``close()``, also run at interpreter exit) ends every connection; stdio servers are stopped by the
SDK (stdin closed, then SIGTERM/SIGKILL of the process group), so none outlives the session.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import logging
import sys
import threading
import weakref
from pathlib import Path
from typing import Coroutine, Sequence, TypeVar

from nbagent.engine.contracts.config import DEFAULT_MCP_CALL_TIMEOUT_S
from nbagent.engine.contracts.tool_api import ToolOutput
from nbagent.engine.loop.sanitize import Sanitizer, secret_values

from .config import DEFAULT_WAIT_TIMEOUT, ServerConfig
from .connection import McpTool, ServerConnection, ServerState, ServerStatus

log = logging.getLogger("nbagent.mcp")

DEFAULT_MAX_MCP_TOOLS = 200
"""Most MCP tools offered: their definitions go into every request, and thousands of them make
every request too large (with an error that does not say why); the rest are left out, with a notice."""
DEFAULT_CONNECT_TIMEOUT = 60.0
"""Seconds a server may take for its handshake before it counts as failed (its process is stopped)."""
T = TypeVar("T")
_LIVE: "weakref.WeakSet[McpManager]" = weakref.WeakSet()
# Manager threads told to stop without waiting (``Agent.close()``): still stopping their servers.
# Joined at exit, or the daemon thread dies with the process and a server outlives it.
_STOPPING: dict[threading.Thread, float] = {}


class McpClosedError(RuntimeError):
    """The manager was closed; its servers are gone."""


class McpManager:
    """The session's MCP servers: background connections, their tools, the bounded wait.

    ``start()`` (done by :func:`~nbagent.tools.mcp.build.build_mcp_manager`) begins connecting
    at once, whether or not an event loop is running in the caller; a manager built with
    ``start=False`` (a replayed session) starts with the first request (:meth:`ready`).
    """

    def __init__(self, servers: Sequence[ServerConfig], *, cwd: Path | None = None,
                 wait_timeout: float = DEFAULT_WAIT_TIMEOUT, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 call_timeout: float = DEFAULT_MCP_CALL_TIMEOUT_S, close_timeout: float = 10.0,
                 max_tools: int = DEFAULT_MAX_MCP_TOOLS,
                 secrets: Sequence[str] = (), start_with_first_request: bool = False) -> None:
        self.start_with_first_request = start_with_first_request
        """Not started yet, :meth:`ready` starts it (a replayed session: see ``build_mcp_manager``)."""
        self.wait_timeout = wait_timeout
        """Longest wait before a request for servers still connecting (once per server)."""
        self.close_timeout = close_timeout
        self.max_tools = max_tools
        """Most MCP tools offered to the model (every definition goes into every request)."""
        self._cap_reported = False
        cwd = (cwd or Path.cwd()).resolve()
        # ``${VAR}`` in the config puts secrets into command lines and URLs, and from there into
        # errors ("command not found: sk-…", a server's stderr echoing its --token): every status,
        # warning and error is redacted, of the configured secrets and of every ``${VAR}``'s value.
        from_config = (value for server in servers for value in getattr(server, "expanded", ()))
        redact = Sanitizer(secret_values((), (*secrets, *from_config))).text
        self._connections = [ServerConnection(s, cwd, connect_timeout, call_timeout, self._call_bridge,
                                              redact=lambda text: redact(text)[0])
                             for s in servers]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"McpManager({', '.join(f'{c.config.name}={c.state}' for c in self._connections)})"

    # ----- the manager's loop ---------------------------------------------------------------
    def start(self) -> None:
        """Start the manager's loop thread and begin connecting to every server (idempotent)."""
        if self._thread is not None or self._closed:
            return
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(loop)
            for c in self._connections:
                loop.call_soon(c.start)
            loop.call_soon(ready.set)
            try:
                loop.run_forever()
            finally:
                _finish_loop(loop)

        self._loop = loop
        self._thread = threading.Thread(target=main, name="nbagent-mcp", daemon=True)
        self._thread.start()
        ready.wait()
        _LIVE.add(self)
        _warm_imports()

    async def _in_loop(self, coro: Coroutine[object, None, T]) -> T:
        """Run ``coro`` in the manager's loop; await it from the caller's (cancelling it there
        if the caller is cancelled, e.g. by an abort)."""
        loop = self._loop
        if loop is None or self._closed or loop.is_closed():
            coro.close()
            raise McpClosedError("the MCP servers of this session are closed")
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # the loop closed in between
            coro.close()
            raise McpClosedError("the MCP servers of this session are closed") from None
        return await asyncio.wrap_future(future)

    async def _call_bridge(self, coro: Coroutine[object, None, ToolOutput]) -> ToolOutput:
        try:
            return await self._in_loop(coro)
        except McpClosedError as exc:
            return ToolOutput(f"Not run: {exc}.", is_error=True)

    # ----- the ToolSource protocol ----------------------------------------------------------
    async def ready(self) -> list[str]:
        """Wait at most ``wait_timeout`` for servers still connecting; return warnings to show.

        Each connection is waited for once: a server that misses the wait is skipped (its tools
        appear in a later request if it connects). Never raises, except on cancellation.
        """
        if self._thread is None and self.start_with_first_request:
            self.start()  # a replayed session's servers start with its first live request
        if self._thread is None or self._closed:
            return []
        try:
            return await self._in_loop(self._wait())
        except asyncio.CancelledError:
            raise
        except McpClosedError:
            return []
        except Exception as exc:  # noqa: BLE001 - a request must never fail because of a tool server
            log.exception("MCP wait failed")
            return [f"MCP servers could not be checked ({type(exc).__name__}: {exc}); this request goes without them"]

    async def _wait(self) -> list[str]:
        pending = [c for c in self._connections if c.state == "connecting" and not c.waited]
        for c in pending:
            c.waited = True  # set first: a wait cut short from outside is not repeated next request
        if pending:
            waiters = [asyncio.ensure_future(c.ready.wait()) for c in pending]
            try:
                await asyncio.wait(waiters, timeout=self.wait_timeout)
            finally:
                for w in waiters:
                    w.cancel()
        warnings: list[str] = self._cap_warning()
        for c in self._connections:
            name = c.config.name
            if c.state == "connecting" and c in pending:
                warnings.append(f"MCP server {name} is still connecting after {self.wait_timeout:g} s; "
                                f"this request goes without its tools")
            elif c.state in ("failed", "stopped") and not c.reported:
                c.reported = True
                verb = "could not be started" if c.state == "failed" else "stopped; its tools are removed"
                warnings.append(f"MCP server {name} {verb}: {c.error}")
            elif c.state == "connected" and not c.unchecked_reported:
                c.unchecked_reported = True
                unchecked = c.status().unchecked
                if unchecked:
                    warnings.append(f"MCP server {name}: nbagent cannot check the inputs of {unchecked}; "
                                    f"they go to the server unchecked")
        return warnings

    def _offered(self) -> list[McpTool]:
        out: list[McpTool] = []
        for c in self._connections:
            # A server that stopped keeps its tools until the stop is reported (the next
            # ready()): a call the model already planned then gets "server X stopped"
            # rather than "unknown tool".
            if c.state == "connected" or (c.state == "stopped" and not c.reported):
                out.extend(c.tools)
        return out

    def tools(self) -> list[McpTool]:
        """The tools offered now: those of the connected servers, at most ``max_tools``."""
        return self._offered()[:self.max_tools]

    def _cap_warning(self) -> list[str]:
        total = len(self._offered())
        if total <= self.max_tools or self._cap_reported:
            return []
        self._cap_reported = True
        return [f"MCP servers offer {total:,} tools; only the first {self.max_tools:,} are offered to the model "
                f"(each definition is sent with every request). Configure fewer MCP tools or servers."]

    # ----- state ----------------------------------------------------------------------------
    @property
    def servers(self) -> tuple[str, ...]:
        """The configured server names."""
        return tuple(c.config.name for c in self._connections)

    @property
    def credentials(self) -> tuple[str, ...]:
        """The credentials the servers' ``${VAR}`` took from the environment (a header's, a
        ``TOKEN`` in ``env``): the Agent redacts them from everything the model reads."""
        return tuple(value for c in self._connections for value in getattr(c.config, "credentials", ()))

    def state(self, server: str) -> ServerState:
        """One server's state: pending, connecting, connected, failed, stopped or closed."""
        return next(c.state for c in self._connections if c.config.name == server)

    def statuses(self) -> tuple[ServerStatus, ...]:
        """Every server's state, tools and last error."""
        return tuple(c.status() for c in self._connections)

    def status_lines(self) -> list[str]:
        """One line per server (``Agent.mcp_status``)."""
        return [s.line() for s in self.statuses()]

    # ----- shutdown -------------------------------------------------------------------------
    def close_with(self, owner: object) -> None:
        """Close (without waiting) when ``owner`` (the agent) is garbage-collected, so a dropped
        session does not leave servers running."""
        # Not at exit: then the waiting close() of _close_all_at_exit does it properly.
        weakref.finalize(owner, self.close, False).atexit = False

    async def _close_connections(self) -> None:
        tasks = []
        for c in self._connections:
            c.stopping = True
            c.wake.set()
            if c.task is not None and not c.task.done():
                if c.state == "connecting":
                    c.task.cancel()  # a handshake in progress is abandoned
                tasks.append(c.task)
            elif c.state == "pending":
                c.state = "closed"
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=self.close_timeout)
            for t in late:
                t.cancel()
            if late:
                await asyncio.wait(late, timeout=self.close_timeout)

    def _stop_loop(self) -> threading.Thread | None:
        loop, thread = self._loop, self._thread
        self._closed = True
        _LIVE.discard(self)
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        for done in [t for t in _STOPPING if not t.is_alive()]:
            del _STOPPING[done]
        if thread is not None and thread.is_alive():
            _STOPPING[thread] = self.close_timeout + 5
        return thread

    async def aclose(self) -> None:
        """Close every connection, stop every stdio server and the manager's thread; idempotent."""
        if self._closed:
            return
        try:
            await self._in_loop(self._close_connections())
        except McpClosedError:
            pass
        thread = self._stop_loop()
        if thread is not None and thread is not threading.current_thread():
            await asyncio.get_running_loop().run_in_executor(None, thread.join, self.close_timeout)

    def close(self, wait: bool = True) -> None:
        """Blocking :meth:`aclose`, for code without a loop (and interpreter exit).

        ``wait=False`` only tells the manager's loop to stop: ending cancels each connection,
        whose shutdown (shielded in the SDK) still stops its server, on the manager's thread.
        """
        if self._closed:
            return
        loop = self._loop
        same_thread = self._thread is threading.current_thread()
        if wait and loop is not None and not loop.is_closed() and not same_thread:
            try:
                asyncio.run_coroutine_threadsafe(self._close_connections(), loop).result(self.close_timeout + 5)
            except Exception:  # noqa: BLE001 - closing is best effort; the loop's end cancels the rest
                log.debug("MCP close did not finish cleanly", exc_info=True)
        thread = self._stop_loop()
        if wait and thread is not None and not same_thread:
            thread.join(self.close_timeout)


_warming = threading.Lock()


def _warm_imports() -> None:
    """Import ``jsonschema`` on a side thread while the servers start.

    The input checks of the tools need it as soon as a server lists them (and the SDK at the first
    call of a tool that has an output schema); in some installs that import takes seconds
    (``rfc3987-syntax`` builds parsers at import): a head start while the handshakes run. Once per
    process.
    """
    if "jsonschema" in sys.modules or not _warming.acquire(blocking=False):
        return

    def work() -> None:
        from ...engine.disk.own_imports import installed_only  # its optional dependencies: not from the folder

        try:
            with installed_only():
                importlib.import_module("jsonschema")
        except Exception:  # only a head start; a real problem shows where it is used
            log.debug("jsonschema could not be imported", exc_info=True)

    threading.Thread(target=work, name="nbagent-mcp-warm", daemon=True).start()


def _finish_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left (each connection's shutdown still stops its server), then close."""
    try:
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


@atexit.register
def _close_all_at_exit() -> None:
    for manager in list(_LIVE):
        manager.close()
    for thread, timeout in list(_STOPPING.items()):
        if thread is not threading.current_thread():
            thread.join(timeout)


__all__ = ["McpManager", "McpTool", "McpClosedError", "ServerStatus", "ServerState", "DEFAULT_CONNECT_TIMEOUT"]
