"""Issue 22: the loopback simulated server enforces its body limit on chunked bodies too (counted
before a chunk is read, answered with the API's 413), and closes a connection whose request
stops half-way instead of waiting for it forever."""

from __future__ import annotations

import asyncio
import json

from nbagent.providers.simulated import SimulatedAPI
from nbagent.providers.simulated.server import LOOPBACK, LoopbackServer

HANG_BREAKER_S = 60.0
"""Not a speed bound: a server that never answers fails the test after this instead of hanging it."""

HEAD = (b"POST /v1/messages HTTP/1.1\r\nhost: localhost\r\nx-api-key: k\r\n"
        b"content-type: application/json\r\n")


async def answer(server: LoopbackServer, request: bytes, body_chunks: list[bytes]) -> tuple[bytes, int]:
    """What the server answers (until it closes), and how many of ``body_chunks`` it let us send."""
    reader, writer = await asyncio.open_connection(LOOPBACK, server.port)
    sent = 0
    try:
        writer.write(request)
        for chunk in body_chunks:
            if reader.at_eof() or writer.is_closing():
                break
            writer.write(chunk)
            await writer.drain()
            sent += 1
    except ConnectionError:
        pass
    try:
        data = await asyncio.wait_for(reader.read(), HANG_BREAKER_S)
    except ConnectionError:
        data = b""
    writer.close()
    return data, sent


async def test_a_chunked_body_over_the_limit_is_refused_with_413() -> None:
    chunk = b"x" * 1024
    with LoopbackServer(SimulatedAPI(), max_body=8 * 1024) as server:
        data, _ = await answer(server, HEAD + b"transfer-encoding: chunked\r\n\r\n",
                               [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 64 + [b"0\r\n\r\n"])
    assert data.startswith(b"HTTP/1.1 413")
    assert json.loads(data.split(b"\r\n\r\n", 1)[1])["error"]["type"] == "request_too_large"


async def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    with LoopbackServer(SimulatedAPI(), max_body=8 * 1024) as server:
        data, _ = await answer(server, HEAD + b"content-length: 300000000\r\n\r\n", [])
    assert data.startswith(b"HTTP/1.1 413")


async def test_a_half_sent_request_is_closed_after_the_read_timeout() -> None:
    with LoopbackServer(SimulatedAPI(), read_timeout_s=0.2) as server:
        data, _ = await answer(server, HEAD + b"content-length: 100\r\n\r\n{\"model\": ", [])
    assert data == b""  # closed without an answer (not a hang: the breaker would give the same, later)
