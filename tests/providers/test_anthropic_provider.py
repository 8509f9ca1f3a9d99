"""``AnthropicProvider.stream``: every SDK or transport failure leaves it as an ``ApiError`` chained
from the SDK's error; cancellation passes through; one SDK client per event loop."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
from collections.abc import AsyncGenerator
from typing import Any

import anthropic
import httpx2
import pytest

from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.contracts.errors import ApiError, ErrorKind
from nbagent.engine.contracts.events import TextDelta
from nbagent.engine.contracts.provider import Chunk, MessageComplete, ModelRequest, StreamStarted
from nbagent.providers.anthropic import (
    AnthropicProvider,
    anthropic_provider,
    simulated_provider,
)
from nbagent.providers.simulated import Fault, LoopbackServer, SimulatedAPI, text_reply

from ._sdk import transport_error

MODEL = "claude-sonnet-5-5"
REQUEST = ModelRequest(model=MODEL, messages=[{"role": "user", "content": "hi"}], system="Be brief.", tools=(),
                       max_tokens=200)
LONG = "a reply with quite a few words in it, so that the stream has several text deltas to send"
KEY = "sk-ant-api03-provider-test-SECRET-5e2f"
# A break after text has arrived: message_start, ping, the model's unasked thinking block with its
# text omitted (start, signature_delta, stop: no chunk), the text block's start, two text deltas.
MID = 8


async def collect(provider: AnthropicProvider, request: ModelRequest = REQUEST) -> list[Chunk]:
    return [chunk async for chunk in provider.stream(request)]


async def fail(provider: AnthropicProvider) -> tuple[ApiError, list[Chunk]]:
    """The ApiError a stream raised, and the chunks it yielded before."""
    seen: list[Chunk] = []
    with pytest.raises(ApiError) as caught:
        async for chunk in provider.stream(REQUEST):
            seen.append(chunk)
    return caught.value, seen


def faulty(fault: Fault) -> AnthropicProvider:
    return simulated_provider(SimulatedAPI([text_reply(LONG)] * 2, faults={1: fault}))


# -- errors ----------------------------------------------------------------------------------------


async def test_a_rate_limit_carries_status_retry_after_and_request_id() -> None:
    provider = faulty(Fault.rate_limit(retry_after=7))
    err, seen = await fail(provider)
    assert (err.kind, err.status, err.retry_after_s) == (ErrorKind.RATE_LIMIT, 429, 7.0)
    assert err.request_id == "req_sim_000001" and seen == []
    assert isinstance(err.__cause__, anthropic.RateLimitError)
    assert isinstance((await collect(provider))[-1], MessageComplete)  # the next request goes through


async def test_a_long_answer_s_rate_limits_count_from_its_head_not_its_end() -> None:
    from nbagent.providers.simulated import RateLimitSettings

    api = SimulatedAPI([text_reply(LONG)], rate_limits=RateLimitSettings(requests_per_minute=60),
                       first_token_latency=0.8)  # the head at once, the text 0.8 s later
    complete = (await collect(simulated_provider(api)))[-1]
    assert isinstance(complete, MessageComplete) and complete.rate_limits is not None
    requests = complete.rate_limits.buckets["requests"]
    assert requests.remaining == 59 and requests.reset_s > 0.6  # 1 s from the head (0.2 s read at the end)
    assert complete.rate_limits.age_s >= 0.7  # handed over at the end: this long after the head


async def test_the_rate_limits_are_handed_to_the_pacer_at_the_head_before_the_stream() -> None:
    from nbagent.providers.simulated import RateLimitSettings

    seen: list[str] = []
    api = SimulatedAPI([text_reply(LONG)], rate_limits=RateLimitSettings(requests_per_minute=60))
    request = dataclasses.replace(
        REQUEST, on_rate_limits=lambda limits: seen.append(f"head {limits.buckets['requests'].remaining}"))
    async for chunk in simulated_provider(api).stream(request):
        seen.append(type(chunk).__name__)
    assert seen[0] == "head 59" and seen.count("head 59") == 1 and seen[-1] == "MessageComplete"


async def test_an_overloaded_529() -> None:
    err, _ = await fail(faulty(Fault.overloaded()))
    assert (err.kind, err.status, err.retry_after_s) == (ErrorKind.OVERLOADED, 529, None)
    assert isinstance(err.__cause__, anthropic.OverloadedError)


async def test_an_sse_error_frame_mid_stream() -> None:
    err, seen = await fail(faulty(Fault.sse_error(after_events=MID)))
    assert any(isinstance(c, TextDelta) for c in seen)  # it broke after text had arrived
    assert (err.kind, err.status) == (ErrorKind.OVERLOADED, 200)
    assert type(err.__cause__) is anthropic.APIStatusError
    err, _ = await fail(faulty(Fault.sse_error(after_events=MID, error_type="api_error")))
    assert err.kind is ErrorKind.SERVER


async def test_a_dropped_connection_mid_stream() -> None:
    err, seen = await fail(faulty(Fault.drop(after_events=MID)))
    assert any(isinstance(c, TextDelta) for c in seen)
    assert (err.kind, err.status) == (ErrorKind.CONNECTION, None)
    assert isinstance(transport_error(err.__cause__), httpx2.TransportError)


async def test_a_dropped_connection_over_loopback() -> None:
    api = SimulatedAPI([text_reply(LONG)] * 2, faults={1: Fault.drop(after_events=MID)})
    with LoopbackServer(api) as server:
        provider = anthropic_provider(KEY, base_url=server.base_url)
        err, seen = await fail(provider)
        assert err.kind is ErrorKind.CONNECTION and seen
        assert isinstance(transport_error(err.__cause__), httpx2.TransportError)
        assert isinstance((await collect(provider))[-1], MessageComplete)


async def test_refused_stalled_and_too_long_requests_before_the_stream() -> None:
    err, _ = await fail(faulty(Fault.connection_refused()))
    assert err.kind is ErrorKind.CONNECTION and isinstance(err.__cause__, anthropic.APIConnectionError)
    stalled = simulated_provider(SimulatedAPI([text_reply("late")], faults={1: Fault.stall(5)}))
    with pytest.raises(ApiError) as caught:
        await collect(stalled, ModelRequest(**{**REQUEST.__dict__, "timeout_s": 0.05}))
    assert caught.value.kind is ErrorKind.TIMEOUT
    err, _ = await fail(faulty(Fault.prompt_too_long()))
    assert (err.kind, err.status) == (ErrorKind.CONTEXT_WINDOW_EXCEEDED, 400)
    assert err.message.startswith("prompt is too long: ")


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


MESSAGE_START = {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": [], "stop_reason": None,
    "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}}
END_TURN = sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2}}, {"type": "message_stop"})
PARTIAL = sse(
    MESSAGE_START,
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "half"}},
)


def byte_level(body: bytes) -> AnthropicProvider:
    """A provider whose clients get ``body`` as a 200 event stream from an independent fake."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    def client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="sk-fake", base_url="http://fake.invalid", max_retries=0,
                                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    return AnthropicProvider(client)


async def test_a_stream_closed_before_message_stop_is_a_connection_error() -> None:
    err, seen = await fail(byte_level(PARTIAL))
    assert [c.text for c in seen if isinstance(c, TextDelta)] == ["half"]
    assert (err.kind, err.message, err.status) == (ErrorKind.CONNECTION, "the stream ended before message_stop", None)
    assert err.__cause__ is None  # nothing fabricated: no transport error happened
    # The whole stream is fine.
    done = sse({"type": "content_block_stop", "index": 0}) + END_TURN
    chunks = await collect(byte_level(PARTIAL + done))
    assert isinstance(chunks[-1], MessageComplete) and chunks[-1].message["content"] == [{"type": "text", "text": "half"}]


def test_an_assembled_stream_without_message_stop_is_a_connection_error() -> None:
    from nbagent.providers.anthropic_stream import StreamAssembler

    assembler = StreamAssembler(MODEL)
    chunks = [assembler.feed(event) for event in (
        anthropic.types.RawMessageStartEvent.model_validate({"type": "message_start", "message": {
            "id": "m1", "type": "message", "role": "assistant", "model": MODEL, "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 0}}}),
        anthropic.types.RawContentBlockStartEvent.model_validate(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        anthropic.types.RawContentBlockDeltaEvent.model_validate(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "half"}}),
    )]
    # message_start: the input usage it reports (what an interrupted answer was billed for at least)
    assert chunks == [StreamStarted(Usage(input_tokens=3)), None, TextDelta(text="half", index=0)]
    with pytest.raises(ApiError) as caught:
        assembler.complete()
    assert caught.value.kind is ErrorKind.CONNECTION


async def test_cancellation_passes_through_untouched() -> None:
    provider = simulated_provider(SimulatedAPI([text_reply("late")], faults={1: Fault.stall(30)}))
    task = asyncio.ensure_future(collect(provider))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_closing_the_stream_early_raises_nothing() -> None:
    provider = simulated_provider(SimulatedAPI([text_reply(LONG)] * 2))
    stream = provider.stream(REQUEST)
    assert isinstance(stream, AsyncGenerator)  # an async generator: closable
    assert isinstance(await stream.__anext__(), StreamStarted)
    assert isinstance(await stream.__anext__(), TextDelta)
    await stream.aclose()  # GeneratorExit inside: not turned into an ApiError
    assert isinstance((await collect(provider))[-1], MessageComplete)


# -- one client per event loop ---------------------------------------------------------------------


def test_the_provider_takes_a_factory_and_shows_no_key() -> None:
    with pytest.raises(TypeError):
        AnthropicProvider(anthropic.AsyncAnthropic(api_key=KEY))  # type: ignore[arg-type]  # deliberately a client, not a factory
    provider = anthropic_provider(KEY, base_url="http://127.0.0.1:9")
    assert KEY not in repr(provider) and KEY not in str(provider)
    assert all(KEY not in repr(v) for v in vars(provider).values())


def run_five_times(provider: AnthropicProvider) -> tuple[list[BaseException], list[anthropic.AsyncAnthropic]]:
    """Five ``asyncio.run`` calls (as five ``Agent.run_sync`` calls), each streaming one request."""
    errors: list[BaseException] = []
    clients: list[anthropic.AsyncAnthropic] = []
    loop_errors: list[dict[str, Any]] = []

    async def one() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: loop_errors.append(context))
        clients.append(await provider.client())
        chunks = await collect(provider)
        assert isinstance(chunks[-1], MessageComplete)
        assert await provider.client() is clients[-1]  # the same client within a loop
        gc.collect()  # a client of an earlier loop must not try to close itself on this one

    for _ in range(5):
        try:
            asyncio.run(one())
        except Exception as exc:  # noqa: BLE001 -- counted, not raised: the test reports how many runs failed
            errors.append(exc)
    assert loop_errors == []
    return errors, clients


def test_five_asyncio_runs_over_loopback_each_succeed_first_time() -> None:
    # Regression: one client (and its pooled keep-alive connection) was shared across the loops
    # that each run_sync creates, so every other run failed its first attempt with a connection error.
    with LoopbackServer(SimulatedAPI(lambda request: text_reply("hello"))) as server:
        provider = anthropic_provider(KEY, base_url=server.base_url)
        errors, clients = run_five_times(provider)
        assert errors == []
        assert isinstance(server.api, SimulatedAPI) and len(server.api.requests) == 5  # one attempt each
        assert len({id(c) for c in clients}) == 5  # a new client for every loop
        assert all(c.is_closed() for c in clients)  # each closed on its own loop when that loop shut down


def test_five_asyncio_runs_in_process_each_succeed_first_time() -> None:
    api = SimulatedAPI(lambda request: text_reply("hello"))
    provider = simulated_provider(api)
    errors, clients = run_five_times(provider)
    assert errors == []
    assert len(api.requests) == 5
    assert len({id(c) for c in clients}) == 5
    assert all(c.is_closed() for c in clients)  # each closed on its own loop when that loop shut down


@pytest.mark.parametrize("raw", [
    {"input_tokens": 1, "output_tokens": 2},
    {"input_tokens": 1, "output_tokens": 2, "service_tier": "standard",
     "cache_creation": {"ephemeral_1h_input_tokens": 3, "ephemeral_5m_input_tokens": 0},
     "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 0}},
], ids=["flat", "nested"])
def test_usage_is_dumped_as_model_dump_would(raw: dict[str, Any]) -> None:
    from nbagent.providers.anthropic_stream import _dump

    usage = anthropic.types.Usage.model_validate(raw)
    dumped = _dump(usage)
    assert dumped == usage.model_dump(exclude_none=True, mode="json")
    assert list(dumped) == list(usage.model_dump(exclude_none=True, mode="json"))


@pytest.mark.parametrize("raw", [
    {"type": "text", "text": ""},
    {"type": "thinking", "thinking": "", "signature": ""},
    {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {}},
    {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"text": "whole input at start"}},
    {"type": "text", "text": "", "citations": [{"type": "char_location", "cited_text": "x", "document_index": 0,
                                                "document_title": None, "start_char_index": 0, "end_char_index": 1}]},
    {"type": "text", "text": "", "a_field_this_sdk_does_not_know": {"kept": [1, 2]}},
], ids=["text", "thinking", "tool-use", "tool-use-with-input", "citations", "unknown-field"])
def test_block_starts_are_dumped_as_model_dump_would(raw: dict[str, Any]) -> None:
    """The fast path for flat models gives exactly what the SDK's model_dump gives, and anything
    it does not cover (non-empty containers, unknown fields) still goes through model_dump."""
    from nbagent.providers.anthropic_stream import _dump

    kinds: dict[str, type[anthropic.types.TextBlock | anthropic.types.ThinkingBlock | anthropic.types.ToolUseBlock]] = {
        "text": anthropic.types.TextBlock, "thinking": anthropic.types.ThinkingBlock, "tool_use": anthropic.types.ToolUseBlock}
    model = kinds[raw["type"]].model_validate(raw)
    dumped = _dump(model)
    assert dumped == model.model_dump(exclude_none=True, mode="json")
    if isinstance(raw.get("input"), dict):
        assert isinstance(model, anthropic.types.ToolUseBlock)
        assert dumped["input"] is not model.input  # the assembler fills it: never the SDK's own dict


def _delta(index: int, **delta: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


_TEXT = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
_THINKING = {"type": "content_block_start", "index": 0,
             "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
_STOP = {"type": "content_block_stop", "index": 0}
BROKEN_STREAMS = {
    "text for a thinking block": (
        [_THINKING, _delta(0, type="text_delta", text="oops"), _STOP],
        "the stream sent text for a thinking block (block 0)"),
    "text for a block never started": (
        [_THINKING, _delta(5, type="text_delta", text="oops"), _STOP],
        "the stream sent a delta for block 5, which it never started"),
    "tool input for a text block": (
        [_TEXT, _delta(0, type="input_json_delta", partial_json="{}"), _STOP],
        "the stream sent tool input for block 0, which takes none"),
    "tool input for a block never started": (
        [_TEXT, _delta(4, type="input_json_delta", partial_json="{}"), _STOP],
        "the stream sent a delta for block 4, which it never started"),
    "a stop for a block never started": (
        [_TEXT, _STOP, {"type": "content_block_stop", "index": 3}],
        "the stream stopped block 3, which it never started"),
}


@pytest.mark.parametrize(("events", "message"), BROKEN_STREAMS.values(), ids=list(BROKEN_STREAMS))
async def test_a_broken_stream_is_a_connection_error_never_a_malformed_block(events: list[dict[str, Any]],
                                                                             message: str) -> None:
    """A block that would not be valid to send back (thinking with a "text" field, text with an
    input) or a stream that speaks of blocks it never started never reaches history: it is a
    connection error, retried like a stream cut short (never a KeyError or an incomplete message)."""
    err, seen = await fail(byte_level(sse(MESSAGE_START, *events) + END_TURN))
    assert not any(isinstance(c, MessageComplete) for c in seen)
    assert (err.kind, err.message) == (ErrorKind.CONNECTION, message)


async def test_a_block_started_again_at_its_index_replaces_the_first_whole() -> None:
    """A proxy that restarts an index without a stop: nothing streamed into the first block (tool
    input, text) leaks into the second, which is assembled as if it came alone."""
    body = sse(
        MESSAGE_START,
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "run", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a"'}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_stop", "index": 0}) + END_TURN
    complete = (await collect(byte_level(body)))[-1]
    assert isinstance(complete, MessageComplete)
    assert complete.message["content"] == [{"type": "thinking", "thinking": "hm", "signature": "sig"}]


async def test_text_streamed_after_its_block_stopped_is_kept_in_order() -> None:
    body = PARTIAL + sse(
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " and more"}}) + END_TURN
    chunks = await collect(byte_level(body))
    assert isinstance(chunks[-1], MessageComplete)
    assert chunks[-1].message["content"] == [{"type": "text", "text": "half and more"}]
