"""Hostile servers through the real SDK (issue 22): an endless stream, a connection kept open after
``message_stop``, a huge error body. An independent byte-level fake (frames written by hand, as in
test_anthropic_wire) that produces its body lazily and counts what the client pulled."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import pytest

from nbagent.engine.contracts.errors import ApiError, ErrorKind
from nbagent.engine.contracts.events import TextDelta
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.provider import MessageComplete, StreamStarted
from nbagent.providers.anthropic import AnthropicProvider
from nbagent.providers.anthropic_errors import MAX_ERROR_BODY_BYTES
from nbagent.providers.anthropic_stream import AFTER_STOP_S, reply_char_limit

from ._messages import list_content
from .test_anthropic_wire import MODEL, REQUEST, frame, stream

START: list[JSONObject] = [{"type": "message_start", "message": {
    "id": "msg_x", "type": "message", "role": "assistant", "model": MODEL, "content": [],
    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]


class _Lazy(httpx2.AsyncByteStream):
    """A body made chunk by chunk as the client asks; ``pulled`` counts the bytes handed out."""

    def __init__(self, chunks: Callable[[], AsyncIterator[bytes]]) -> None:
        self.chunks, self.pulled, self.closed = chunks, 0, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.chunks():
            self.pulled += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


def _first_text(complete: MessageComplete) -> str:
    block = list_content(complete.message)[0]
    assert block["type"] == "text"
    return block["text"]


def provider(status: int, body: _Lazy) -> AnthropicProvider:
    def handler(request: httpx2.Request) -> httpx2.Response:
        kind = "text/event-stream" if status == 200 else "application/json"
        return httpx2.Response(status, headers={"content-type": kind}, stream=body)

    def client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="sk-fake", base_url="http://fake.invalid", max_retries=0,
                                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    return AnthropicProvider(client)


async def test_an_endless_text_stream_ends_as_a_broken_stream_at_what_max_tokens_allows() -> None:
    async def endless() -> AsyncIterator[bytes]:
        yield b"".join(frame(e) for e in START)
        delta = frame({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * 1000}})
        while True:
            yield delta

    body = _Lazy(endless)
    shown = 0
    with pytest.raises(ApiError) as info:
        async for chunk in provider(200, body).stream(REQUEST):
            if isinstance(chunk, StreamStarted):
                continue
            assert isinstance(chunk, TextDelta)
            shown += len(chunk.text)
    limit = reply_char_limit(REQUEST.max_tokens)
    assert info.value.kind is ErrorKind.CONNECTION  # retried like any broken stream
    assert "max_tokens=200" in info.value.message
    assert shown <= limit
    assert body.pulled < 2 * limit  # the client stopped reading, it did not buffer the rest


async def test_endless_thinking_and_tool_input_are_bounded_too() -> None:
    cases: list[tuple[JSONObject, JSONObject]] = [
        ({"type": "thinking", "thinking": "", "signature": ""}, {"type": "thinking_delta", "thinking": "y" * 500}),
        ({"type": "tool_use", "id": "toolu_1", "name": "python", "input": {}},
         {"type": "input_json_delta", "partial_json": "z" * 500})]
    for start, delta in cases:
        async def endless(start: JSONObject = start, delta: JSONObject = delta) -> AsyncIterator[bytes]:
            yield frame(START[0]) + frame({"type": "content_block_start", "index": 0, "content_block": start})
            while True:
                yield frame({"type": "content_block_delta", "index": 0, "delta": delta})

        body = _Lazy(endless)
        with pytest.raises(ApiError, match="max_tokens"):
            async for _ in provider(200, body).stream(REQUEST):
                pass
        assert body.pulled < 3 * reply_char_limit(REQUEST.max_tokens)


async def test_a_reply_within_max_tokens_is_untouched() -> None:
    text = "w" * (REQUEST.max_tokens * 4)  # about what 200 tokens of text are

    async def once() -> AsyncIterator[bytes]:
        yield stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": text}]], "end_turn")

    chunks = [c async for c in provider(200, _Lazy(once)).stream(REQUEST)]
    assert isinstance(chunks[-1], MessageComplete)
    block = list_content(chunks[-1].message)[0]
    assert block["type"] == "text" and block["text"] == text


async def test_a_server_keeping_the_connection_open_after_message_stop_does_not_hang_the_run() -> None:
    never = asyncio.Event()

    async def open_after_stop() -> AsyncIterator[bytes]:
        yield stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "done"}]], "end_turn")
        await never.wait()  # a server that keeps the connection open: asking for more waits forever
        yield b""

    body = _Lazy(open_after_stop)
    started = time.monotonic()
    chunks = [c async for c in provider(200, body).stream(REQUEST)]
    assert isinstance(chunks[-1], MessageComplete) and chunks[-1].stop_reason == "end_turn"
    assert time.monotonic() - started < AFTER_STOP_S + 5  # the wait for the stream's end is bounded
    assert body.closed  # the response was closed, not left open


async def test_a_server_streaming_on_after_message_stop_is_not_read_for_long() -> None:
    async def chatty_after_stop() -> AsyncIterator[bytes]:
        yield stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "done"}]], "end_turn")
        while True:  # comments forever, each after a turn of the event loop
            await asyncio.sleep(0)
            yield b": keep-alive comment\n\n"

    body = _Lazy(chatty_after_stop)
    chunks = [c async for c in provider(200, body).stream(REQUEST)]
    assert isinstance(chunks[-1], MessageComplete) and _first_text(chunks[-1]) == "done"
    assert body.closed


async def test_events_after_message_stop_are_read_once_and_change_nothing() -> None:
    after = frame({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "late"}})
    sent_after: list[int] = []

    async def flood_after_stop() -> AsyncIterator[bytes]:
        yield stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "done"}]], "end_turn")
        while True:  # events at once, forever: only a bound on what is read ends this
            sent_after.append(1)
            yield after

    body = _Lazy(flood_after_stop)
    chunks = [c async for c in provider(200, body).stream(REQUEST)]
    assert isinstance(chunks[-1], MessageComplete) and _first_text(chunks[-1]) == "done"
    assert not any(isinstance(c, TextDelta) and c.text == "late" for c in chunks)
    assert len(sent_after) <= 2 and body.closed


async def test_a_stream_read_to_its_end_leaves_no_generator_for_the_garbage_collector() -> None:
    """The SDK's generators over a stream finish with it. Left unfinished at ``message_stop``,
    each cost the event loop a thread-safe wake-up and a task to close it, on every request."""
    async def whole() -> AsyncIterator[bytes]:
        yield stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "done"}]], "end_turn")

    firstiter, finalizer = sys.get_asyncgen_hooks()
    finalized: list[str] = []

    def counted(generator: Any) -> None:
        finalized.append(generator.ag_code.co_name)
        if finalizer is not None:
            finalizer(generator)

    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=counted)
    sdk = provider(200, _Lazy(whole))  # held: its client's closer is suspended for the loop's lifetime
    try:
        chunks = [c async for c in sdk.stream(REQUEST)]
        gc.collect()
    finally:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
    assert isinstance(chunks[-1], MessageComplete)
    assert finalized == []


async def test_a_huge_error_body_is_read_only_up_to_its_bound() -> None:
    chunk = b" " * 65536

    async def huge() -> AsyncIterator[bytes]:
        yield b'{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}'
        for _ in range(100 * 16):  # 100 MiB of padding, made lazily
            yield chunk

    body = _Lazy(huge)
    with pytest.raises(ApiError) as info:
        async for _ in provider(401, body).stream(REQUEST):
            pass
    assert info.value.kind is ErrorKind.AUTH and info.value.status == 401
    assert body.pulled <= MAX_ERROR_BODY_BYTES + len(chunk)
    assert len(info.value.message) <= 300


async def test_through_the_loop_an_endless_stream_is_retried_then_fails_with_a_valid_history(tmp_path: Any) -> None:
    from nbagent.engine.contracts.events import ApiRequestFailed, Done, RetryScheduled, StreamInterrupted
    from nbagent.engine.contracts.messages import history_problems
    from nbagent.providers.simulated import SimulatedAPI
    from tests.engine.loop.test_query_support import make_engine, run

    async def endless() -> AsyncIterator[bytes]:
        yield b"".join(frame(e) for e in START)
        while True:
            yield frame({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * 999}})

    bodies: list[_Lazy] = []

    def body() -> _Lazy:
        bodies.append(_Lazy(endless))
        return bodies[-1]

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body())

    def client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="sk-fake", base_url="http://fake.invalid", max_retries=0,
                                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    engine = make_engine(SimulatedAPI(), tmp_path, provider=AnthropicProvider(client), max_tokens=1000)
    events = await run(engine, "hi")
    assert [e.error_kind for e in events if isinstance(e, RetryScheduled)] == ["connection"] * 3
    assert sum(isinstance(e, StreamInterrupted) for e in events) == 4
    assert any(isinstance(e, ApiRequestFailed) and "max_tokens=1,000" in e.message for e in events)
    assert isinstance(events[-1], Done) and events[-1].reason == "error"
    assert len(bodies) == 4 and all(b.pulled < 2 * reply_char_limit(1000) for b in bodies)
    assert history_problems(engine.session.history) == []
