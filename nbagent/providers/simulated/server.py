"""Serving the simulated API: in-process to ``httpx2`` and on loopback over HTTP/1.1.

Both fronts turn the app's transport-level fault signals into what a real network does to a client:

============================  ==================================  =====================================
signal                        in-process transport                loopback server
============================  ==================================  =====================================
ConnectionRefusedSignal       ``httpx2.ConnectError``             connection closed before any response
ReadTimeoutSignal             ``httpx2.ReadTimeout``              (not raised: the client's own timer fires)
ConnectionDroppedSignal       ``httpx2.ReadError`` from the body  connection aborted mid chunked body
============================  ==================================  =====================================

(The SDK passes a body's read error on bare up to anthropic 2.16; from 2.17 it raises an
``APIConnectionError`` caused by it. Both are a connection failure to the engine.)

The loopback server is a small stdlib asyncio HTTP/1.1 server bound to 127.0.0.1 only; bodies are
sent with chunked transfer encoding so that a dropped stream is detectable by the client (a
close-delimited body would just look finished).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from http import HTTPStatus
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

import httpx2

from ...engine.api_facts.request_size import MAX_REQUEST_BYTES
from .responses import ConnectionDroppedSignal, ConnectionRefusedSignal, ReadTimeoutSignal, RequestHandler

LOOPBACK = "127.0.0.1"
_MAX_BODY = MAX_REQUEST_BYTES  # the Messages API answers a larger one 413
READ_TIMEOUT_S = 30.0
"""How long a started request (headers and body) may take to arrive: a client that sends half a
request and stops must not hold a connection and its buffers forever."""


class BodyTooLarge(ValueError):
    """A request body over the server's limit (declared, or counted while reading chunks)."""


class _Body(httpx2.AsyncByteStream):
    """The app's body as an httpx2 stream; a dropped connection surfaces as a raw ``ReadError``."""

    def __init__(self, body: AsyncIterator[bytes], request: httpx2.Request) -> None:
        self._body = body
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._body:
                yield chunk
        except ConnectionDroppedSignal:
            raise httpx2.ReadError("connection dropped mid-stream (simulated fault)", request=self._request) from None

    async def aclose(self) -> None:
        aclose = getattr(self._body, "aclose", None)
        if aclose is not None:
            await aclose()


class SimulatedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that hands every request to a :class:`~.app.SimulatedAPI` in-process."""

    def __init__(self, api: RequestHandler) -> None:
        self.api = api

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        read_timeout = (request.extensions.get("timeout") or {}).get("read")
        try:
            response = await self.api.handle(request.method, request.url.path, dict(request.headers), body,
                                             read_timeout=read_timeout)
        except ConnectionRefusedSignal:
            raise httpx2.ConnectError("[Errno 111] Connection refused (simulated fault)", request=request) from None
        except ReadTimeoutSignal:
            raise httpx2.ReadTimeout("timed out waiting for the first byte (simulated stall)", request=request) from None
        return httpx2.Response(response.status, headers=list(response.headers),
                               stream=_Body(response.body, request), request=request)


# -- loopback HTTP/1.1 ---------------------------------------------------------------------------


def _reason(status: int) -> str:
    if status == 529:
        return "Overloaded"  # not in HTTPStatus, but what the API sends
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str], limit: int = _MAX_BODY) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts: list[bytes] = []
        total = 0
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return b"".join(parts)
            total += size
            if size < 0 or total > limit:  # counted before the chunk is read, not after 300 MiB arrived
                raise BodyTooLarge(f"request body larger than {limit} bytes")
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0") or 0)
    if length > limit or length < 0:
        raise BodyTooLarge(f"request body larger than {limit} bytes")
    return await reader.readexactly(length) if length else b""


async def _read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        limit: int) -> tuple[dict[str, str], bytes]:
    """The headers and body of a request whose first line was read."""
    headers: dict[str, str] = {}
    while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
        key, _, value = raw.decode("latin-1").partition(":")
        headers[key.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # curl waits for this before a big body
    return headers, await _read_body(reader, headers, limit)


def _too_large(writer: asyncio.StreamWriter, exc: BodyTooLarge) -> None:
    """Answer 413 as the API does, and close (the rest of the body is never read)."""
    body = json.dumps({"type": "error", "error": {"type": "request_too_large", "message": str(exc)}}).encode()
    writer.write(b"HTTP/1.1 413 Request Entity Too Large\r\ncontent-type: application/json\r\n"
                 b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))


LINGER_BYTES = 1 << 20  # what is read and dropped after a 413, at most ...
LINGER_S = 1.0  # ... and for how long


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Close after a 413 the way HTTP servers do: stop writing, then read and drop what the client
    is still sending (bounded). Closing with unread bytes makes the kernel send a reset, which
    can reach the client before it read the 413, so the client saw an empty answer under load."""
    if writer.can_write_eof():
        writer.write_eof()
    deadline = asyncio.get_running_loop().time() + LINGER_S
    dropped = 0
    try:
        while dropped < LINGER_BYTES:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            data = await asyncio.wait_for(reader.read(65_536), left)
            if not data:
                return
            dropped += len(data)
    except (asyncio.TimeoutError, ConnectionError):
        return


async def _serve_connection(api: RequestHandler, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                            connections: set[asyncio.StreamWriter],
                            limits: tuple[int, float] = (_MAX_BODY, READ_TIMEOUT_S)) -> None:
    """Serve requests on one keep-alive connection until the client closes it (or sends a request
    over ``limits[0]`` bytes, or takes longer than ``limits[1]`` seconds to send one it started)."""
    connections.add(writer)
    try:
        while True:
            line = await reader.readline()  # an idle keep-alive connection may wait here
            if not line.strip():
                return
            method, target, _ = line.decode("latin-1").split(" ", 2)
            try:
                headers, body = await asyncio.wait_for(_read_request(reader, writer, limits[0]), limits[1])
            except BodyTooLarge as exc:
                _too_large(writer, exc)
                await writer.drain()
                await _linger(reader, writer)
                return
            except asyncio.TimeoutError:
                return  # half a request, then silence: the connection is closed
            try:
                response = await api.handle(method, urlsplit(target).path, headers, body)
            except ConnectionRefusedSignal:
                # A listening socket cannot refuse; closing unanswered is the nearest a client sees.
                writer.transport.abort()
                return
            head = [f"HTTP/1.1 {response.status} {_reason(response.status)}"]
            head += [f"{k}: {v}" for k, v in response.headers]
            head += ["transfer-encoding: chunked", "", ""]
            writer.write("\r\n".join(head).encode("latin-1"))
            try:
                async for chunk in response.body:
                    writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    await writer.drain()
            except ConnectionDroppedSignal:
                writer.transport.abort()  # no terminating chunk: the client sees an incomplete body
                return
            finally:
                aclose = getattr(response.body, "aclose", None)
                if aclose is not None:
                    await aclose()  # a client that left mid-stream must not leave the generator open
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                return
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        return  # the client went away (e.g. after its own timeout) or sent nonsense
    finally:
        connections.discard(writer)
        with contextlib.suppress(Exception):
            writer.close()


async def start_server(api: RequestHandler, port: int = 0, connections: set[asyncio.StreamWriter] | None = None,
                       *, max_body: int = _MAX_BODY, read_timeout_s: float = READ_TIMEOUT_S) -> asyncio.Server:
    """Serve ``api`` on ``127.0.0.1:port`` (0 picks a free port) in the running event loop.

    Open connections are kept in ``connections`` (when given) so that a shutdown can close them:
    idle keep-alive connections would otherwise keep ``Server.wait_closed`` waiting.
    """
    live = connections if connections is not None else set()
    limits = (max_body, read_timeout_s)
    return await asyncio.start_server(lambda r, w: _serve_connection(api, r, w, live, limits), LOOPBACK, port)


async def close_server(server: asyncio.Server, connections: set[asyncio.StreamWriter]) -> None:
    """Stop accepting, abort open connections, and wait for the server to close."""
    loop = asyncio.get_running_loop()
    # Stop accepting first and let accepts already in flight finish: on CPython 3.11 a connection
    # accepted in the same loop turn as Server.close() fails an assertion and leaks its socket.
    for sock in server.sockets:
        with contextlib.suppress(NotImplementedError, ValueError, OSError):
            loop.remove_reader(sock.fileno())
    for _ in range(5):
        await asyncio.sleep(0)
    server.close()
    for writer in list(connections):
        writer.transport.abort()
    await server.wait_closed()
    for _ in range(5):  # sockets are closed in callbacks on the loop: let them run
        await asyncio.sleep(0)


class LoopbackServer:
    """The simulated API on loopback in a background thread, for scripts and tests::

        with LoopbackServer(SimulatedAPI()) as server:
            client = anthropic.AsyncAnthropic(api_key="x", base_url=server.base_url)
    """

    def __init__(self, api: RequestHandler, port: int = 0, *, max_body: int = _MAX_BODY,
                 read_timeout_s: float = READ_TIMEOUT_S) -> None:
        self.api = api
        self.port = port
        self.max_body, self.read_timeout_s = max_body, read_timeout_s
        self.address: tuple[Any, ...] = ()  # the bound socket address, once started
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> LoopbackServer:
        """Start serving; returns once the port is bound."""
        ready = threading.Event()
        errors: list[BaseException] = []

        async def main() -> None:
            self._stop = asyncio.Event()
            connections: set[asyncio.StreamWriter] = set()
            try:
                server = await start_server(self.api, self.port, connections, max_body=self.max_body,
                                            read_timeout_s=self.read_timeout_s)
            except BaseException as exc:  # reported to the starting thread
                errors.append(exc)
                ready.set()
                return
            self.address = server.sockets[0].getsockname()
            self.port = self.address[1]
            ready.set()
            await self._stop.wait()
            await close_server(server, connections)

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(main())
                # Handlers still inside the app (e.g. sleeping through a stall) are cancelled.
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                    loop.run_until_complete(asyncio.sleep(0))  # their transports' close callbacks
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="nbagent-simulated-api", daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
