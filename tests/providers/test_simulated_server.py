"""The simulated API on loopback, with the real SDK over real sockets; and the network guard."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam
from pytest_socket import SocketConnectBlockedError

from nbagent.engine.contracts.errors import ErrorKind
from nbagent.providers.anthropic_errors import to_api_error
from nbagent.providers.simulated import (
    Fault,
    LoopbackServer,
    SimulatedAPI,
    text_reply,
    tool_reply,
)

from ._sdk import text_of, tool_use, transport_error

MODEL = "claude-sonnet-5-5"
USER: list[MessageParam] = [{"role": "user", "content": "hi"}]
REPO = Path(__file__).resolve().parents[2]


def sdk(base_url: str, timeout: float | httpx2.Timeout | anthropic.NotGiven = anthropic.NOT_GIVEN) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="sk-loopback", base_url=base_url, max_retries=0, timeout=timeout)


async def test_the_real_sdk_streams_over_loopback() -> None:
    replies = [tool_reply("python", {"code": "print('over the wire')"}, text="Running."), text_reply("Done.")]
    with LoopbackServer(SimulatedAPI(replies)) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        async with sdk(server.base_url) as client:
            async with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
                first = await stream.get_final_message()
            second = await client.messages.create(model=MODEL, max_tokens=100, messages=USER)
            counted = await client.messages.count_tokens(model=MODEL, messages=USER)
    # claude-sonnet-5-5 thinks unasked (thinking omitted): each reply opens with its thinking block.
    assert [b.type for b in first.content] == ["thinking", "text", "tool_use"]
    assert first.stop_reason == "tool_use" and tool_use(first.content[2]).input == {"code": "print('over the wire')"}
    assert [b.type for b in second.content] == ["thinking", "text"] and text_of(second.content[1]) == "Done."
    assert counted.input_tokens == second.usage.input_tokens
    assert isinstance(server.api, SimulatedAPI)
    assert [r.path for r in server.api.requests] == ["/v1/messages", "/v1/messages", "/v1/messages/count_tokens"]


@pytest.mark.parametrize(
    ("fault", "exc_type", "kind"),
    [
        (Fault.rate_limit(retry_after=5), anthropic.RateLimitError, ErrorKind.RATE_LIMIT),
        (Fault.sse_error(), anthropic.APIStatusError, ErrorKind.OVERLOADED),
        (Fault.connection_refused(), anthropic.APIConnectionError, ErrorKind.CONNECTION),
        # Over a real socket a dropped chunked stream is an incomplete body, not a ReadError.
        (Fault.drop(after_events=4), httpx2.RemoteProtocolError, ErrorKind.CONNECTION),
    ],
)
async def test_faults_over_loopback(fault: Fault, exc_type: type, kind: ErrorKind) -> None:
    with LoopbackServer(SimulatedAPI([text_reply("a reply with several words in it")] * 2, faults={1: fault})) as server:
        async with sdk(server.base_url) as client:
            with pytest.raises(BaseException) as caught:
                async with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
                    await stream.get_final_message()
            raised = transport_error(caught.value) if issubclass(exc_type, httpx2.TransportError) else caught.value
            assert type(raised) is exc_type, repr(caught.value)
            assert to_api_error(caught.value).kind is kind
            # The connection pool recovers: the next request works.
            assert (await client.messages.create(model=MODEL, max_tokens=100, messages=USER)).content


async def test_a_stall_over_loopback_hits_the_clients_own_timeout() -> None:
    with LoopbackServer(SimulatedAPI([text_reply("late")], faults={1: Fault.stall(0.6)})) as server:
        async with sdk(server.base_url, timeout=httpx2.Timeout(0.2)) as client:
            with pytest.raises(anthropic.APITimeoutError) as caught:
                await client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    assert to_api_error(caught.value).kind is ErrorKind.TIMEOUT


async def test_python_dash_m_serves_on_loopback() -> None:
    with subprocess.Popen(  # noqa: ASYNC220 (a separate server process; only its start-up line is read)
        [sys.executable, "-m", "nbagent.providers.simulated", "--port", "0", "--window", "300", "--faults", "2=overloaded"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stderr is not None
            line = proc.stdout.readline()
            assert "not a real model" in line, proc.stderr.read() if proc.poll() is not None else line
            base_url = line.strip().rsplit(" ", 1)[-1]
            assert base_url.startswith("http://127.0.0.1:")
            async with sdk(base_url) as client:
                message = await client.messages.create(model=MODEL, max_tokens=100, messages=USER)
                text = next(b.text for b in message.content if b.type == "text")
                assert "(simulated model)" in text
                with pytest.raises(anthropic.OverloadedError):
                    await client.messages.create(model=MODEL, max_tokens=100, messages=USER)
                with pytest.raises(anthropic.BadRequestError, match=r"prompt is too long: \d+ tokens > 300 maximum"):
                    await client.messages.create(model=MODEL, max_tokens=10,
                                                 messages=[{"role": "user", "content": "x " * 400}])
        finally:
            proc.send_signal(signal.SIGINT)  # the server's own Ctrl-C path: it shuts down cleanly
            try:
                assert proc.wait(timeout=5) == 0
            except subprocess.TimeoutExpired:
                proc.kill()
                raise


@pytest.mark.filterwarnings("ignore:A test tried to use socket:UserWarning")  # the block says so itself
def test_the_network_guard_blocks_non_loopback_connects() -> None:
    with pytest.raises(SocketConnectBlockedError):
        socket.create_connection(("192.0.2.1", 443), timeout=0.1)  # TEST-NET-1: never routable anyway
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(SocketConnectBlockedError):
            s.connect(("198.51.100.7", 80))
    finally:
        s.close()
    a, b = socket.socketpair()  # unix sockets stay allowed (asyncio's self-pipe, kernels' IPC)
    a.close()
    b.close()


def test_the_server_binds_loopback_only() -> None:
    with LoopbackServer(SimulatedAPI()) as server:
        assert server.address[0] == "127.0.0.1"
        probe = socket.create_connection(("127.0.0.1", server.port), timeout=1)
        probe.close()
        assert server.base_url == f"http://127.0.0.1:{server.port}"
