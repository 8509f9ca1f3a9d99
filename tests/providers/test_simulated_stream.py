"""The simulated API's wire format, through the real AsyncAnthropic SDK (no mocks of the SDK)."""

from __future__ import annotations

import json
from typing import Any, TypedDict

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam, TextBlockParam, ToolParam

from nbagent.providers.simulated import Reply, SimulatedAPI, TextBlock, ThinkingBlock, text_reply, tool_reply
from nbagent.providers.simulated.app import BASE_URL

MODEL = "claude-sonnet-5-5"
USER: list[MessageParam] = [{"role": "user", "content": "hello"}]
TOOLS: list[ToolParam] = [{"name": "python", "description": "Run Python code.",
          "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}]
LONG_INPUT = {"code": "import pandas as pd\ndf = pd.read_csv('data.csv')\nprint(df.describe())", "timeout": 30,
              "tags": ["inspect", "ünïcode ✓"], "nested": {"a": [1, 2.5, None, True]}}


def accumulate(events: list[Any]) -> dict:
    """A plain consumer of raw SDK stream events (what a provider does), to a message dict."""
    message: dict = {}
    partial: dict[int, str] = {}
    for e in events:
        if e.type == "message_start":
            message = e.message.model_dump()
        elif e.type == "content_block_start":
            message["content"].append(e.content_block.model_dump())
        elif e.type == "content_block_delta":
            block, d = message["content"][e.index], e.delta
            if d.type == "text_delta":
                block["text"] += d.text
            elif d.type == "thinking_delta":
                block["thinking"] += d.thinking
            elif d.type == "signature_delta":
                block["signature"] = d.signature
            elif d.type == "input_json_delta":
                partial[e.index] = partial.get(e.index, "") + d.partial_json
        elif e.type == "content_block_stop" and e.index in partial:
            message["content"][e.index]["input"] = json.loads(partial[e.index])
        elif e.type == "message_delta":
            message["stop_reason"] = e.delta.stop_reason
            message["stop_sequence"] = e.delta.stop_sequence
            message["usage"].update({k: v for k, v in e.usage.model_dump().items() if v is not None})
    return message


async def three_ways(replies: list[Reply], *, thinks_by_default: bool = False,
                     **params: Any) -> tuple[Any, dict, Any, list[Any]]:
    """The same script answered non-streamed, as raw stream events, and through messages.stream().

    Each call gets a fresh API with the same script, so ids (counters) are identical too. The
    default model's unasked thinking is off unless ``thinks_by_default``: most tests here are about
    text and tool blocks.
    """
    params = {"model": MODEL, "max_tokens": 2000, "messages": USER, **params}

    def client() -> Any:
        return SimulatedAPI(list(replies), thinks_by_default=thinks_by_default).async_client()

    plain = await client().messages.create(**params)
    raw = await client().messages.create(stream=True, **params)
    events = [e async for e in raw]
    async with client().messages.stream(**params) as stream:
        final = await stream.get_final_message()
    return plain, accumulate(events), final, events


async def test_text_reply_streams_into_the_same_message() -> None:
    plain, raw, final, events = await three_ways([text_reply("Hello from the simulated model, in a few pieces.")])
    assert plain.content[0].text == "Hello from the simulated model, in a few pieces."
    assert plain.stop_reason == "end_turn"
    assert plain.id.startswith("msg_sim_")
    assert final.model_dump() == plain.model_dump()
    assert raw == plain.model_dump()
    assert sum(1 for e in events if e.type == "content_block_delta") >= 3


async def test_tool_use_json_arrives_in_several_fragments() -> None:
    reply = tool_reply("python", LONG_INPUT, text="Let me look.")
    plain, raw, final, events = await three_ways([reply], tools=TOOLS)
    assert plain.stop_reason == "tool_use"
    block = plain.content[1]
    assert block.type == "tool_use" and block.name == "python" and block.input == LONG_INPUT
    assert block.id.startswith("toolu_sim_")
    fragments = [e.delta.partial_json for e in events
                 if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
    assert fragments[0] == ""  # the API opens a tool's input with an empty fragment
    assert len([f for f in fragments if f]) >= 3
    assert final.model_dump() == plain.model_dump()
    assert raw == plain.model_dump()


async def test_several_tool_calls_in_one_reply() -> None:
    reply = tool_reply([("python", {"code": "1"}), ("python", {"code": "2"})])
    plain, raw, final, _ = await three_ways([reply], tools=TOOLS)
    assert [b.input["code"] for b in plain.content] == ["1", "2"]
    assert len({b.id for b in plain.content}) == 2
    assert final.model_dump() == plain.model_dump() == raw


THOUGHT = Reply((ThinkingBlock("Weighing the options step by step."), TextBlock("Done.")))


def block_events(events: list[Any], index: int) -> list[tuple[str, str | None]]:
    """``(event type, delta type)`` of the stream events of content block ``index``."""
    return [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in events
            if e.type.startswith("content_block") and e.index == index]


@pytest.mark.parametrize("reply", [text_reply("Done."), THOUGHT], ids=["no scripted thinking", "scripted thinking"])
async def test_a_5x_model_thinks_unasked_with_the_thinking_omitted(reply: Reply) -> None:
    # claude-sonnet-5-5 thinks adaptively by default; without `display: "summarized"` the API sends
    # the thinking block with empty text and its signature (adaptive thinking, display omitted).
    plain, raw, final, events = await three_ways([reply], thinks_by_default=True)
    assert [b.type for b in plain.content] == ["thinking", "text"]
    assert plain.content[0].thinking == "" and plain.content[0].signature
    assert plain.content[1].text == "Done."
    # Streamed: block start (empty thinking, empty signature), the signature, block stop. No thinking_delta.
    assert block_events(events, 0) == [("content_block_start", None), ("content_block_delta", "signature_delta"),
                                       ("content_block_stop", None)]
    start = next(e for e in events if e.type == "content_block_start" and e.index == 0)
    assert start.content_block.model_dump() == {"type": "thinking", "thinking": "", "signature": ""}
    signature = next(e.delta.signature for e in events if e.type == "content_block_delta" and e.index == 0)
    assert signature == plain.content[0].signature
    assert final.model_dump() == plain.model_dump() == raw
    # Explicit adaptive thinking is the same; asking for a summary shows the thinking text.
    adaptive, _, _, _ = await three_ways([reply], thinks_by_default=True, thinking={"type": "adaptive"})
    assert adaptive.model_dump() == plain.model_dump()
    shown, _, _, events = await three_ways([reply], thinks_by_default=True,
                                           thinking={"type": "adaptive", "display": "summarized"})
    assert shown.content[0].thinking and shown.content[0].signature
    assert ("content_block_delta", "thinking_delta") in block_events(events, 0)


async def test_a_model_that_does_not_think_by_default_thinks_only_when_asked() -> None:
    haiku = "claude-haiku-4-5"  # takes thinking budgets; never thinks unasked
    without, _, _, events = await three_ways([THOUGHT], thinks_by_default=True, model=haiku)
    assert [b.type for b in without.content] == ["text"]
    assert not any(e.type == "content_block_delta" and e.delta.type in ("thinking_delta", "signature_delta")
                   for e in events)
    thinking = {"type": "enabled", "budget_tokens": 1024}
    plain, raw, final, events = await three_ways([THOUGHT], thinks_by_default=True, thinking=thinking, model=haiku)
    assert [b.type for b in plain.content] == ["thinking", "text"]
    assert plain.content[0].thinking == "Weighing the options step by step."
    assert plain.content[0].signature
    kinds = {e.delta.type for e in events if e.type == "content_block_delta"}
    assert {"thinking_delta", "signature_delta", "text_delta"} <= kinds
    assert final.model_dump() == plain.model_dump() == raw
    # A reply without scripted thinking still gets an (honest) thinking block when thinking is on.
    adaptive, _, _, _ = await three_ways([text_reply("ok")], thinking={"type": "adaptive"}, model="claude-sonnet-4-6")
    assert adaptive.content[0].type == "thinking" and "simulated" in adaptive.content[0].thinking


async def test_unasked_thinking_can_be_switched_off_for_wire_format_tests() -> None:
    off, _, _, _ = await three_ways([THOUGHT], thinks_by_default=False)
    assert [b.type for b in off.content] == ["text"]


@pytest.mark.parametrize(
    ("reply", "params", "stop_reason"),
    [
        (text_reply("short"), {}, "end_turn"),
        (tool_reply("python", {"code": "1"}), {"tools": TOOLS}, "tool_use"),
        (text_reply("word " * 200), {"max_tokens": 10}, "max_tokens"),
        (text_reply("first part END second part"), {"stop_sequences": ["END"]}, "stop_sequence"),
        (text_reply("anything", stop_reason="refusal"), {}, "refusal"),
    ],
)
async def test_stop_reasons(reply: Reply, params: dict, stop_reason: str) -> None:
    plain, raw, final, _ = await three_ways([reply], **params)
    assert plain.stop_reason == final.stop_reason == raw["stop_reason"] == stop_reason
    assert final.model_dump() == plain.model_dump()
    if stop_reason == "max_tokens":
        assert plain.usage.output_tokens == 10
    if stop_reason == "stop_sequence":
        assert plain.stop_sequence == "END" and plain.content[0].text == "first part "


async def test_output_reaching_the_window_stops_with_model_context_window_exceeded() -> None:
    api = SimulatedAPI([text_reply("word " * 500)], context_window=200)
    message = await api.async_client().messages.create(model=MODEL, max_tokens=1000, messages=USER)
    assert message.stop_reason == "model_context_window_exceeded"
    assert message.usage.input_tokens + message.usage.output_tokens == 200


async def test_usage_with_cache_parses_the_same_streamed_and_not() -> None:
    system: list[TextBlockParam] = [{"type": "text", "text": "You are a careful analyst. " * 300,
                                     "cache_control": {"type": "ephemeral"}}]
    replies = [text_reply("first"), text_reply("second")]

    async def both(stream: bool) -> list[Any]:
        client = SimulatedAPI(list(replies)).async_client()
        out: list[anthropic.types.Message] = []
        for _ in range(2):
            if stream:
                async with client.messages.stream(model=MODEL, max_tokens=100, system=system, messages=USER) as s:
                    out.append(await s.get_final_message())
            else:
                out.append(await client.messages.create(model=MODEL, max_tokens=100, system=system, messages=USER))
        return out

    plain, streamed = await both(False), await both(True)
    assert [m.model_dump() for m in plain] == [m.model_dump() for m in streamed]
    first, second = plain
    assert first.usage.cache_creation_input_tokens > 1024 and first.usage.cache_read_input_tokens == 0
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == first.usage.input_tokens  # the uncached tail: the user message


class CountedParams(TypedDict):
    """What a request and its token count share."""

    model: str
    messages: list[MessageParam]
    system: str
    tools: list[ToolParam]


async def test_count_tokens_matches_the_usage_of_an_uncached_request() -> None:
    client = SimulatedAPI([text_reply("ok")]).async_client()
    params: CountedParams = {"model": MODEL, "messages": USER, "system": "Be brief.", "tools": TOOLS}
    counted = await client.messages.count_tokens(**params)
    message = await client.messages.create(max_tokens=50, **params)
    assert counted.input_tokens == message.usage.input_tokens > 0


async def test_raw_sse_frames_follow_the_documented_sequence() -> None:
    api = SimulatedAPI([tool_reply("python", {"code": "print(1)"}, text="Running it.")])
    body = {"model": MODEL, "max_tokens": 100, "messages": USER, "tools": TOOLS, "stream": True}
    async with httpx2.AsyncClient(transport=api.transport(), base_url=BASE_URL) as http:
        response = await http.post("/v1/messages", json=body, headers={"x-api-key": "k"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["request-id"].startswith("req_sim_")
    frames = response.text.split("\n\n")
    assert frames[-1] == ""
    names, payloads = [], []
    for frame in frames[:-1]:
        event_line, data_line = frame.split("\n")
        name = event_line.removeprefix("event: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name
        names.append(name)
        payloads.append(data)
    assert names[0] == "message_start" and names[1] == "ping"
    assert names[-2:] == ["message_delta", "message_stop"]
    blocks = [n for n in names if n.startswith("content_block")]
    assert blocks[0] == "content_block_start" and blocks[-1] == "content_block_stop"
    # The model's unasked thinking (display omitted), then the text, then the tool call.
    assert names.count("content_block_start") == names.count("content_block_stop") == 3
    thinking = payloads[2:5]
    assert thinking[0] == {"type": "content_block_start", "index": 0,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
    assert thinking[1]["delta"]["type"] == "signature_delta" and thinking[1]["delta"]["signature"]
    assert thinking[2] == {"type": "content_block_stop", "index": 0}
    assert payloads[5]["content_block"]["type"] == "text"
    start = json.loads(frames[0].split("\n")[1][6:])["message"]
    assert start["stop_reason"] is None and start["content"] == []
    assert set(start["usage"]) >= {"input_tokens", "output_tokens", "cache_creation_input_tokens",
                                   "cache_read_input_tokens", "cache_creation"}


async def test_pacing_uses_the_injected_sleep() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    api = SimulatedAPI([text_reply("one two three four five six seven eight nine ten")], sleep=sleep,
                       tokens_per_second=10.0, first_token_latency=0.5)
    async with api.async_client().messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        message = await stream.get_final_message()
    assert slept[0] == 0.5
    assert sum(slept[1:]) == pytest.approx(message.usage.output_tokens / 10.0)
