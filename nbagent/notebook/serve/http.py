"""The HTTP side of ``%agent serve``: the MCP SDK's Streamable HTTP app behind a bearer token, run
by uvicorn on its own thread and its own asyncio loop, on 127.0.0.1 and a port the OS picks.

Why a thread of its own: the kernel's main thread runs the user's cells; a server on it would stop
answering (and time clients out) whenever a cell runs. Everything a tool does in the kernel is
handed to the kernel's loop instead (:mod:`.kernel_loop`), so no user code ever runs here.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import socket
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # starlette comes with mcp; only its ASGI types are used
    from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = "127.0.0.1"
PATH = "/mcp"
START_TIMEOUT_S = 10.0

def new_token() -> str:
    """A bearer token: 32 random bytes, URL-safe (what a client pastes into a header)."""
    return secrets.token_urlsafe(32)


class BearerGuard:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets a bare 401.

    The token is compared in constant time (``hmac.compare_digest``); the 401 has no body and no
    header that says why, so a wrong guess learns nothing. The lifespan passes through (the SDK's
    session manager starts there).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["type"] == "websocket":  # not MCP: refused before anything reads it
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        given = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                given = value
                break
        return hmac.compare_digest(given, self._expected)


class HttpServer:
    """uvicorn serving ``app`` on ``127.0.0.1:<port>`` from a daemon thread; :meth:`stop` ends it."""

    def __init__(self, app: ASGIApp) -> None:
        import uvicorn

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((LOOPBACK, 0))  # port 0: the OS picks a free one, nothing guesses it
        self.port: int = self._sock.getsockname()[1]
        started = threading.Event()
        self._started = started

        class _Server(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets=sockets)
                started.set()

        # access_log off: a request line is not the notebook's business (and would print into it).
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        self._server = _Server(config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"nbagent-serve:{self.port}", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}{PATH}"

    def start(self) -> None:
        """Start serving; raises ``RuntimeError`` when uvicorn did not start within START_TIMEOUT_S."""
        self._thread.start()
        if not self._started.wait(START_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"the MCP server did not start within {START_TIMEOUT_S:g} s"
                               + (f": {self.error}" if self.error else ""))

    def _run(self) -> None:
        from ...engine.disk.own_imports import installed_only

        loop = asyncio.new_event_loop()
        self.loop = loop
        try:
            # Only uvicorn and the MCP SDK run on this thread (clients' code runs on the kernel's loop):
            # what they import as they serve (uvicorn's ``httptools``) never comes from the notebook's folder.
            with installed_only():
                loop.run_until_complete(self._server.serve(sockets=[self._sock]))
        except BaseException as exc:  # noqa: BLE001 - reported by start()/status, never raised in a thread
            self.error = exc
        finally:
            loop.close()
            self._sock.close()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask uvicorn to exit and wait for its thread (bounded); idempotent."""
        self._server.should_exit = True
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        if not self._thread.is_alive():
            self._sock.close()
