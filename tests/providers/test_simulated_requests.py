"""Requests: validation, the context window, scripts, the function hook, recording, the demo brain."""

from __future__ import annotations

import json
import re
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam, ToolParam

from nbagent.engine.contracts.errors import ErrorKind
from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.messages import Message
from nbagent.providers.anthropic_errors import to_api_error
from nbagent.providers.simulated import (
    DemoBrain,
    Reply,
    ScriptedResponder,
    SimulatedAPI,
    TextBlock,
    error_reply,
    text_reply,
    tool_reply,
)
from nbagent.providers.simulated.app import BASE_URL
from nbagent.providers.simulated.script import SCRIPT_EXHAUSTED

from ._sdk import text_of, tool_use

MODEL = "claude-sonnet-5-5"
USER: list[MessageParam] = [{"role": "user", "content": "hi"}]
PYTHON: ToolParam = {"name": "python", "description": "Run Python in the kernel.",
          "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}
READ_FILE: ToolParam = {"name": "read_file", "description": "Read a file.",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


async def post(api: SimulatedAPI, body: dict, path: str = "/v1/messages", key: str | None = "sk-test") -> httpx2.Response:
    headers = {"x-api-key": key} if key else {}
    async with httpx2.AsyncClient(transport=api.transport(), base_url=BASE_URL) as http:
        return await http.post(path, json=body, headers=headers)


# -- the context window -----------------------------------------------------------------------------


async def test_a_request_over_the_window_gets_the_exact_400() -> None:
    api = SimulatedAPI([text_reply("never sent")], context_window=500)
    client = api.async_client()
    messages: list[MessageParam] = [{"role": "user", "content": "tell me about the data " * 200}]
    counted = (await client.messages.count_tokens(model=MODEL, messages=messages)).input_tokens
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model=MODEL, max_tokens=100, messages=messages)
    assert caught.value.type == "invalid_request_error"
    assert caught.value.api_message == f"prompt is too long: {counted} tokens > 500 maximum"
    assert to_api_error(caught.value).kind is ErrorKind.CONTEXT_WINDOW_EXCEEDED
    assert api.requests[-1].reply is None  # the responder was never asked


async def test_the_window_defaults_to_the_models_own() -> None:
    api = SimulatedAPI()
    assert api.window_for("claude-sonnet-4-5") == 200_000
    assert api.window_for("claude-opus-5-5") == 1_000_000
    assert api.window_for("claude-something-new") == 128_000
    assert SimulatedAPI(context_window=1234).window_for("claude-opus-5-5") == 1234


# -- validation --------------------------------------------------------------------------------------

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "python", "input": {"code": "1"}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"max_tokens": 10, "messages": USER}, "model: Field required"),
        ({"model": MODEL, "messages": USER}, "max_tokens: Field required"),
        ({"model": MODEL, "max_tokens": 10}, "messages: Field required"),
        ({"model": MODEL, "max_tokens": 10, "messages": []}, "at least one message is required"),
        ({"model": MODEL, "max_tokens": 10, "messages": [{"role": "assistant", "content": "hi"}]},
         'first message must use the "user" role'),
        ({"model": MODEL, "max_tokens": 10, "messages": [{"role": "system", "content": "x"}]}, "top-level `system`"),
        ({"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]},
         "text content blocks must be non-empty"),
        ({"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "   "}]},
         "non-whitespace text"),
        ({"model": MODEL, "max_tokens": 10, "messages": [
            {"role": "user", "content": "go"}, {"role": "assistant", "content": [TOOL_USE]},
            {"role": "user", "content": "and?"}]},
         "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"),
        ({"model": MODEL, "max_tokens": 10, "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}]},
         "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"),
        ({"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": ""},
                                                         {"role": "user", "content": "b"}]},
         "all messages must have non-empty content"),
        ({"model": MODEL, "max_tokens": 999_999, "messages": USER}, "maximum allowed number of output tokens"),
        ({"model": MODEL, "max_tokens": 1500, "messages": USER, "thinking": {"type": "enabled", "budget_tokens": 2000}},
         "`max_tokens` must be greater than `thinking.budget_tokens`"),
        ({"model": MODEL, "max_tokens": 5000, "messages": USER, "thinking": {"type": "enabled", "budget_tokens": 10}},
         "budget_tokens: Input should be greater than or equal to 1024"),
    ],
)
async def test_invalid_requests_get_a_helpful_400(body: dict, message: str) -> None:
    response = await post(SimulatedAPI([text_reply("x")]), body)
    assert response.status_code == 400
    payload = response.json()
    assert payload["type"] == "error" and payload["error"]["type"] == "invalid_request_error"
    assert message in payload["error"]["message"]
    assert payload["request_id"] == response.headers["request-id"]


def _image(data: str) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


_WIDE_PNG = "iVBORw0KGgoAAAANSUhEUgAAI1AAAABkCAIAAAA="  # a PNG's header: 9,040 × 100 px
_SMALL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAyAAAABkCAIAAAA="  # 800 × 100 px


@pytest.mark.parametrize(("content", "message"), [
    ([_image("A" * (5 * 1024 * 1024 + 4)), {"type": "text", "text": "what is this?"}],
     "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes"),
    ([_image(_WIDE_PNG)], "image dimensions exceed max allowed size: 8000 pixels"),
    ([{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": _SMALL_PNG}}],
     "Image does not match the provided media type image/jpeg"),  # a PNG labelled JPEG (atk23)
])
async def test_an_image_over_the_apis_limits_gets_its_400(content: list, message: str) -> None:
    """As the API: a 400 naming the block (the simulated API took any size, so a client that let
    one into its history saw no failure offline, and every request after it fails online)."""
    response = await post(SimulatedAPI([text_reply("x")]), {"model": MODEL, "max_tokens": 10,
                                                             "messages": [{"role": "user", "content": content}]})
    assert response.status_code == 400 and message in response.json()["error"]["message"]
    body = {"model": MODEL, "max_tokens": 10, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]}]}
    response = await post(SimulatedAPI([text_reply("x")]), body)
    assert response.status_code == 400 and "messages.2.content.0.content.0.image" in response.json()["error"]["message"]


async def test_valid_tool_round_trip_and_merged_consecutive_messages_are_accepted() -> None:
    body = {"model": MODEL, "max_tokens": 10, "messages": [
        {"role": "user", "content": "go"}, {"role": "user", "content": "now"},  # merged, as the API does
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, TOOL_USE]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"}]}]}
    response = await post(SimulatedAPI([text_reply("done")], thinks_by_default=False), body)
    assert response.status_code == 200, response.text
    assert response.json()["content"] == [{"type": "text", "text": "done"}]


async def test_thinking_must_come_back_with_its_signature_and_unchanged() -> None:
    api = SimulatedAPI(lambda request: tool_reply("python", {"code": "1"}) if len(request["messages"]) == 1
                       else text_reply("done"))
    first = (await post(api, {"model": MODEL, "max_tokens": 50, "messages": USER, "tools": [PYTHON]})).json()
    thinking, use = first["content"]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "" and thinking["signature"]

    def follow_up(*blocks: dict) -> dict:
        return {"model": MODEL, "max_tokens": 50, "tools": [PYTHON], "messages": [
            *USER, {"role": "assistant", "content": [*blocks, use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "1"}]}]}

    for block, error in [
        ({"type": "thinking", "thinking": ""}, "messages.1.content.0.thinking.signature: Field required"),
        ({**thinking, "signature": ""}, "messages.1.content.0.thinking.signature: Field required"),
        ({**thinking, "thinking": "made up"}, "messages.1.content.0: Invalid `signature` in `thinking` block"),
        ({"type": "redacted_thinking"}, "messages.1.content.0.redacted_thinking.data: Field required"),
    ]:
        response = await post(api, follow_up(block))
        assert response.status_code == 400 and response.json()["error"]["message"] == error
    accepted = await post(api, follow_up(thinking))  # byte-identical, as it was sent
    assert accepted.status_code == 200, accepted.text
    assert [b["type"] for b in accepted.json()["content"]] == ["thinking", "text"]
    # A signature this API never issued (a history from elsewhere) is only checked for presence.
    foreign = await post(api, follow_up({"type": "thinking", "thinking": "earlier", "signature": "c2lnbmVk"}))
    assert foreign.status_code == 200, foreign.text


@pytest.mark.parametrize(("model", "status"), [("gpt-4o", 404), ("claude-made-up-9", 200), ("claude-haiku-4-5", 200),
                                               ("claude-sonnet-4-5-20250929", 200)])
async def test_models_unknown_to_the_registry_must_at_least_be_claude(model: str, status: int) -> None:
    response = await post(SimulatedAPI([text_reply("x")]), {"model": model, "max_tokens": 10, "messages": USER})
    assert response.status_code == status
    if status == 404:
        assert response.json()["error"] == {"type": "not_found_error", "message": f"model: {model}"}


async def test_a_missing_api_key_is_a_401_and_a_wrong_path_a_404() -> None:
    api = SimulatedAPI([text_reply("x")])
    assert (await post(api, {"model": MODEL, "max_tokens": 5, "messages": USER}, key=None)).status_code == 401
    assert (await post(api, {}, path="/v1/complete")).json()["error"]["type"] == "not_found_error"


# -- scripts, the function hook, recording -------------------------------------------------------------


async def test_scripted_replies_are_consumed_in_order_then_say_the_script_is_exhausted() -> None:
    api = SimulatedAPI([text_reply("one"), tool_reply("python", {"code": "2"}, id="toolu_fixed")],
                       thinks_by_default=False)
    client = api.async_client()
    first = await client.messages.create(model=MODEL, max_tokens=50, messages=USER)
    second = await client.messages.create(model=MODEL, max_tokens=50, messages=USER, tools=[PYTHON])
    third = await client.messages.create(model=MODEL, max_tokens=50, messages=USER)
    assert text_of(first.content[0]) == "one"
    assert tool_use(second.content[0]).id == "toolu_fixed" and second.stop_reason == "tool_use"
    assert text_of(third.content[0]) == SCRIPT_EXHAUSTED
    assert isinstance(api.responder, ScriptedResponder) and api.responder.exhausted == 1
    assert api.requests[2].reply == text_reply(SCRIPT_EXHAUSTED)  # the exhausted answer is recorded


async def test_the_function_hook_sees_the_request_and_may_be_async() -> None:
    seen: list[dict] = []

    async def respond(request: dict) -> Reply:
        seen.append(request)
        return text_reply(f"{len(request['messages'])} message(s), tools: {[t['name'] for t in request.get('tools', [])]}")

    client = SimulatedAPI(respond, thinks_by_default=False).async_client()
    message = await client.messages.create(model=MODEL, max_tokens=50, messages=USER, tools=[PYTHON])
    assert text_of(message.content[0]) == "1 message(s), tools: ['python']"
    assert seen[0]["model"] == MODEL and seen[0]["messages"] == USER


async def test_an_error_reply_is_the_api_error_with_its_headers() -> None:
    client = SimulatedAPI([error_reply(429, "rate_limit_error", "slow down", retry_after=12)]).async_client()
    with pytest.raises(anthropic.RateLimitError) as caught:
        await client.messages.create(model=MODEL, max_tokens=50, messages=USER)
    assert caught.value.api_message == "slow down"
    assert to_api_error(caught.value).retry_after_s == 12.0


async def test_every_request_is_recorded_without_the_api_key() -> None:
    api = SimulatedAPI(lambda request: text_reply("ok"), context_window=100)
    client = api.async_client(api_key="sk-secret")
    await client.messages.count_tokens(model=MODEL, messages=USER)
    await client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    with pytest.raises(anthropic.BadRequestError):
        await client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x " * 300}])
    assert [r.number for r in api.requests] == [1, 2, 3]
    assert [r.path for r in api.requests] == ["/v1/messages/count_tokens", "/v1/messages", "/v1/messages"]
    assert api.requests[1].body["messages"] == USER and api.requests[1].reply == text_reply("ok")
    for r in api.requests:
        assert "x-api-key" not in r.headers and "authorization" not in r.headers
        assert "sk-secret" not in repr(r)
        assert r.headers["anthropic-version"]


# -- the demo brain ----------------------------------------------------------------------------------


async def run_agent(client: anthropic.AsyncAnthropic, prompt: str, results: dict[str, str],
                    tools: list[ToolParam]) -> list[Any]:
    """Drive the brain like the agent loop does: answer each tool call from ``results``."""
    messages: list[MessageParam] = [{"role": "user", "content": prompt}]
    replies = []
    for _ in range(6):
        async with client.messages.stream(model=MODEL, max_tokens=500, messages=messages, tools=tools) as stream:
            reply = await stream.get_final_message()
        replies.append(reply)
        if reply.stop_reason != "tool_use":
            return replies
        messages.append(reply.to_param())
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id,
             "content": results.get(str(b.input.get("code", b.input.get("path"))), "42")}
            for b in reply.content if b.type == "tool_use"]})
    raise AssertionError("the brain did not finish")


def calls(replies: list[Any]) -> list[tuple[str, dict]]:
    return [(b.name, b.input) for r in replies for b in r.content if b.type == "tool_use"]


def text(reply: Any) -> str:
    """The reply's text (claude-sonnet-5-5 thinks first; ``run_agent`` passes its thinking back)."""
    assert reply.content[0].type == "thinking" and reply.content[0].signature
    return "".join(b.text for b in reply.content if b.type == "text")


async def test_brain_computes_arithmetic_with_python_then_summarises() -> None:
    replies = await run_agent(SimulatedAPI().async_client(), "what is 17 * 23", {"17 * 23": "[result]\n391"}, [PYTHON])
    assert calls(replies) == [("python", {"code": "17 * 23"})]
    assert replies[-1].stop_reason == "end_turn"
    assert "391" in text(replies[-1]) and "(simulated model)" in text(replies[-1])


async def test_brain_looks_then_computes_over_several_turns() -> None:
    dtypes = "[result]\nregion         str\nrevenue    float64\ndtype: object"
    replies = await run_agent(SimulatedAPI().async_client(), "What is the mean revenue in `sales`?",
                              {"sales.dtypes": dtypes, 'sales["revenue"].mean()': "[result]\nnp.float64(99.875)"}, [PYTHON])
    assert calls(replies) == [("python", {"code": "sales.dtypes"}), ("python", {"code": 'sales["revenue"].mean()'})]
    assert len(replies) == 3 and "the mean revenue of `sales` is 99.88" in text(replies[-1])
    replies = await run_agent(SimulatedAPI().async_client(), "What is the mean of `xs`?", {}, [PYTHON])
    assert calls(replies)[1] == ("python", {"code": "sum(xs) / len(xs)"})  # "42" is no DataFrame's dtypes


async def test_brain_reads_the_files_it_is_pointed_at() -> None:
    replies = await run_agent(SimulatedAPI().async_client(), "Summarise data.csv please",
                              {"data.csv": "a,b\n1,2"}, [PYTHON, READ_FILE])
    assert calls(replies) == [("read_file", {"path": "data.csv"})]
    assert "a,b" in text(replies[-1])


async def test_brain_without_a_matching_rule_explains_that_it_is_simulated() -> None:
    replies = await run_agent(SimulatedAPI().async_client(), "Write me a poem about autumn.", {}, [PYTHON])
    assert len(replies) == 1 and replies[0].stop_reason == "end_turn"
    said = text(replies[0])
    assert "(simulated model)" in said and "not a real language model" in said and "poem about autumn" in said


def last_text(reply: Reply) -> str:
    """The text of the reply's last block, which the test expects to be a text block."""
    last = reply.content[-1]
    assert isinstance(last, TextBlock), last
    return last.text


def as_json(tool: ToolParam) -> JSONObject:
    """A tool definition as the API receives it: parsed JSON."""
    parsed = json.loads(json.dumps(tool))
    assert isinstance(parsed, dict)
    return parsed


def test_brain_only_uses_tools_it_is_offered() -> None:
    reply = DemoBrain()({"messages": [{"role": "user", "content": "what is 2 + 2 in `df`? read notes.txt"}]})
    assert not any(b.__class__.__name__ == "ToolUseBlock" for b in reply.content)
    assert re.search(r"Tools offered: none", last_text(reply))


async def test_settings_can_be_changed_on_a_live_api() -> None:
    # The notebook demo switches faults and pacing on an API that is already in use.
    from nbagent.providers.simulated import Fault

    api = SimulatedAPI(lambda request: text_reply("ok"))
    client = api.async_client()
    await client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    api.faults = {2: Fault.overloaded()}
    with pytest.raises(anthropic.OverloadedError):
        await client.messages.create(model=MODEL, max_tokens=10, messages=USER)
    api.context_window = 3
    with pytest.raises(anthropic.BadRequestError, match="> 3 maximum"):
        await client.messages.create(model=MODEL, max_tokens=10, messages=USER)


async def test_a_responder_that_raises_is_a_readable_500() -> None:
    def broken(request: dict) -> Reply:
        raise KeyError("oops")

    with pytest.raises(anthropic.InternalServerError, match=r"the responder raised KeyError: 'oops'"):
        await SimulatedAPI(broken).async_client().messages.create(model=MODEL, max_tokens=10, messages=USER)


async def test_the_request_log_keeps_the_newest_requests_and_counts_all() -> None:
    api = SimulatedAPI([text_reply(f"r{i}") for i in range(5)], request_log=2)
    client = api.async_client()
    for i in range(5):
        await client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": f"q{i}"}])
    await client.close()
    assert api.request_count == 5 and [r.number for r in api.requests] == [4, 5]
    assert api.requests[-1].reply == text_reply("r4")
    unbounded = SimulatedAPI(request_log=None)
    assert unbounded.requests.maxlen is None


def test_brain_does_not_read_a_compaction_summary_or_kernel_facts_as_the_prompt() -> None:
    from nbagent.engine.state.compactions import summary_text

    prompt: Message = {"role": "user", "content": [{"type": "text", "text": summary_text("- user 2: what is 2 + 2")},
                                          {"type": "text", "text": "<kernel-state>\n- `df`: 3 * 4\n</kernel-state>"},
                                          {"type": "text", "text": "Write a haiku."}]}
    reply = DemoBrain()({"messages": [{"role": "user", "content": "task"}, {"role": "assistant", "content": "ok"},
                                      prompt], "tools": [as_json(PYTHON)]})
    assert not any(b.__class__.__name__ == "ToolUseBlock" for b in reply.content)
    assert 'understood your message as: "Write a haiku."' in last_text(reply)


async def test_a_request_of_more_than_twenty_images_takes_two_thousand_px_a_side() -> None:
    """As the API: past 20 images in a request, one over 2,000 px a side is a 400 (atk23)."""
    wide = "iVBORw0KGgoAAAANSUhEUgAAB9EAAABkCAIAAAA="  # a PNG's header: 2,001 × 100 px
    for count, status in ((20, 200), (21, 400)):
        content = [_image(wide)] * count + [{"type": "text", "text": "what are these?"}]
        response = await post(SimulatedAPI([text_reply("x")]), {"model": MODEL, "max_tokens": 10,
                                                                 "messages": [{"role": "user", "content": content}]})
        assert response.status_code == status, response.text
    assert "many-image requests: 2000 pixels" in response.json()["error"]["message"]
