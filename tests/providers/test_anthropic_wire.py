"""``AnthropicProvider`` against an independent byte-level fake of the Messages API (not the
simulator): SSE written by hand as Anthropic documents it, cut into 61-byte chunks, served to the
real SDK client. One case per stream shape the issue-11 review found mishandled."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from nbagent.engine.contracts.provider import MessageComplete, ModelRequest
from nbagent.providers.anthropic import AnthropicProvider

from ._messages import list_content

MODEL = "claude-sonnet-5-5"
REQUEST = ModelRequest(model=MODEL, messages=[{"role": "user", "content": "hi"}], system=None, tools=(),
                       max_tokens=200)
CHUNK = 61


def frame(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def stream(blocks: list[list[dict[str, Any]]], stop_reason: str, usage: dict[str, Any] | None = None,
           stop_details: dict[str, Any] | None = None) -> bytes:
    """message_start, then each block's events (start, deltas, stop), message_delta, message_stop."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_wire", "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 1}}},
        {"type": "ping"}]
    for i, (start, *deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": i, "content_block": start})
        events += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": i})
    delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
    if stop_details is not None:
        delta["stop_details"] = stop_details
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 30, **(usage or {})}})
    events.append({"type": "message_stop"})
    return b"".join(frame(e) for e in events)


class _Chunked(httpx2.AsyncByteStream):
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i in range(0, len(self.body), CHUNK):
            yield self.body[i:i + CHUNK]


def wire(body: bytes) -> AnthropicProvider:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream", "request-id": "req_wire"},
                               stream=_Chunked(body))

    def client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="sk-fake", base_url="http://fake.invalid", max_retries=0,
                                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    return AnthropicProvider(client)


async def complete(body: bytes) -> MessageComplete:
    chunks = [c async for c in wire(body).stream(REQUEST)]
    last = chunks[-1]
    assert isinstance(last, MessageComplete)
    return last


CITATION = {"type": "web_search_result_location", "url": "https://example.org/a", "title": "A",
            "encrypted_index": "idx", "cited_text": "nbagent runs agents"}


async def test_server_tool_use_results_and_citations_are_assembled_and_searches_counted() -> None:
    body = stream([
        [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
         {"type": "input_json_delta", "partial_json": ""}, {"type": "input_json_delta", "partial_json": '{"query": '},
         {"type": "input_json_delta", "partial_json": '"nbagent"}'}],
        [{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
          "content": [{"type": "web_search_result", "url": "https://example.org/a", "title": "A",
                       "encrypted_content": "enc", "page_age": "1 day"}]}],
        [{"type": "text", "text": ""}, {"type": "text_delta", "text": "It runs agents."},
         {"type": "citations_delta", "citation": CITATION}],
    ], "end_turn", usage={"server_tool_use": {"web_search_requests": 1}})
    done = await complete(body)
    content = list_content(done.message)
    assert [b["type"] for b in content] == ["server_tool_use", "web_search_tool_result", "text"]
    use, result, text = content
    assert use["type"] == "server_tool_use" and use["input"] == {"query": "nbagent"}
    assert result["type"] == "web_search_tool_result" and isinstance(result["content"], list)
    hit = result["content"][0]
    assert isinstance(hit, dict) and hit["url"] == "https://example.org/a"
    assert text == {"type": "text", "text": "It runs agents.", "citations": [CITATION]}
    assert done.usage.web_search_requests == 1


async def test_tool_input_given_whole_at_block_start_is_kept() -> None:
    body = stream([[{"type": "tool_use", "id": "toolu_1", "name": "python", "input": {"code": "1+1"}}]], "tool_use")
    use = list_content((await complete(body)).message)[0]
    assert use["type"] == "tool_use" and use["input"] == {"code": "1+1"}


async def test_a_refusal_keeps_its_stop_details() -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "Declined: could enable cyber harm."}
    body = stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "Hel"}]], "refusal",
                  stop_details=details)
    done = await complete(body)
    assert done.stop_reason == "refusal" and done.stop_details == details


async def test_a_context_window_exceeded_stop_is_a_complete_billed_message() -> None:
    body = stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "cut"}]],
                  "model_context_window_exceeded", usage={"output_tokens": 64_000, "input_tokens": 120_000})
    done = await complete(body)
    assert done.stop_reason == "model_context_window_exceeded"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (120_000, 64_000)


async def test_thinking_redacted_thinking_and_unknown_blocks_are_kept_as_received() -> None:
    body = stream([
        [{"type": "thinking", "thinking": "", "signature": ""}, {"type": "thinking_delta", "thinking": "hm"},
         {"type": "signature_delta", "signature": "c2ln"}],
        [{"type": "redacted_thinking", "data": "opaque"}],
        [{"type": "future_block", "payload": {"x": 1}}],
    ], "end_turn")
    content = list_content((await complete(body)).message)
    assert content[0] == {"type": "thinking", "thinking": "hm", "signature": "c2ln"}
    assert content[1] == {"type": "redacted_thinking", "data": "opaque"}
    assert content[2] == {"type": "future_block", "payload": {"x": 1}}


async def test_pause_turn_is_a_complete_message_with_its_server_tool_call() -> None:
    body = stream([[{"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {}},
                    {"type": "input_json_delta", "partial_json": '{"query": "x"}'}]], "pause_turn")
    done = await complete(body)
    use = list_content(done.message)[0]
    assert done.stop_reason == "pause_turn" and use["type"] == "server_tool_use" and use["input"] == {"query": "x"}


RATE_HEADERS = {
    "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
    "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z",
    "anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "12000",
    "anthropic-ratelimit-input-tokens-reset": "2099-01-01T00:00:00Z",
}


def answering(status: int, body: bytes, headers: dict[str, str]) -> AnthropicProvider:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, headers=headers, stream=_Chunked(body))

    def client() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="sk-fake", base_url="http://fake.invalid", max_retries=0,
                                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    return AnthropicProvider(client)


async def test_the_rate_limit_headers_of_an_answer_reach_the_engine() -> None:
    body = stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "hi"}]], "end_turn")
    provider = answering(200, body, {"content-type": "text/event-stream", **RATE_HEADERS})
    done = [c async for c in provider.stream(REQUEST)][-1]
    assert isinstance(done, MessageComplete) and done.rate_limits is not None
    requests = done.rate_limits.buckets["requests"]
    assert (requests.limit, requests.remaining) == (50, 0) and requests.reset_s > 1e6
    assert done.rate_limits.buckets["input-tokens"].remaining == 12000


async def test_a_429_carries_retry_after_and_the_buckets() -> None:
    from nbagent.engine.contracts.errors import ApiError, ErrorKind

    error = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request "
                        "tokens has exceeded your per-minute rate limit"}}).encode()
    provider = answering(429, error, {"content-type": "application/json", "retry-after": "12", **RATE_HEADERS})
    try:
        [c async for c in provider.stream(REQUEST)]
    except ApiError as exc:
        assert exc.kind is ErrorKind.RATE_LIMIT and exc.retry_after_s == 12.0
        assert exc.rate_limits is not None and exc.rate_limits.buckets["requests"].remaining == 0
    else:
        raise AssertionError("a 429 must raise")
