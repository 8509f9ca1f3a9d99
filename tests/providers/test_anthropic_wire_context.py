"""Server-side context management through ``AnthropicProvider``, against an independent byte-level
fake of the Messages API (hand-written SSE as Anthropic documents it, cut into 61-byte chunks, not
the simulator): the ``compaction`` block and its delta, ``applied_edits`` of the final
``message_delta``, compaction iterations in ``usage``, and the beta headers and fields a request
carries."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2

from nbagent.engine.api_facts.context_edit_types import ContextManagementParam
from nbagent.engine.api_facts.context_edits import COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA
from nbagent.engine.api_facts.cost import Usage
from nbagent.engine.contracts.context_policy import ContextPolicy
from nbagent.engine.contracts.provider import MessageComplete, ModelRequest
from nbagent.providers.anthropic import AnthropicProvider

from .test_anthropic_wire import MODEL, REQUEST, _Chunked, stream

SUMMARY = "The user loaded sales.csv (1,204 rows); revenue peaks in March."
COMPACTION_START = {"type": "compaction", "signature": "sig_compaction_1"}
COMPACTION_DELTA = {"type": "compaction_delta", "content": SUMMARY, "encrypted_content": "enc_1"}
APPLIED = [{"type": "clear_tool_uses_20250919", "cleared_input_tokens": 41_000, "cleared_tool_uses": 8},
           {"type": "clear_thinking_20251015", "cleared_input_tokens": 1_200, "cleared_thinking_turns": 2}]
ITERATIONS = [
    {"type": "compaction", "input_tokens": 151_000, "output_tokens": 900, "cache_read_input_tokens": 0,
     "cache_creation_input_tokens": 0},
    {"type": "message", "input_tokens": 1_400, "output_tokens": 30, "cache_read_input_tokens": 0,
     "cache_creation_input_tokens": 0},
]


def with_context_management(body: bytes, applied: list[dict[str, Any]]) -> bytes:
    """``body`` whose ``message_delta`` also carries ``context_management.applied_edits``."""
    frames = body.decode().split("\n\n")
    out = []
    for frame in frames:
        if frame.startswith("event: message_delta"):
            head, data = frame.split("\ndata: ", 1)
            event = json.loads(data)
            event["context_management"] = {"applied_edits": applied}
            frame = f"{head}\ndata: {json.dumps(event)}"
        out.append(frame)
    return "\n\n".join(out).encode()


class Fake:
    """Answers every request with ``body`` and keeps each request's URL, headers and JSON."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    def provider(self) -> AnthropicProvider:
        def handler(request: httpx2.Request) -> httpx2.Response:
            self.requests.append((str(request.url), dict(request.headers), json.loads(request.content)))
            return httpx2.Response(200, headers={"content-type": "text/event-stream", "request-id": "req_wire"},
                                   stream=_Chunked(self.body))

        def client() -> anthropic.AsyncAnthropic:
            return anthropic.AsyncAnthropic(api_key="sk-fake", base_url="http://fake.invalid", max_retries=0,
                                            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

        return AnthropicProvider(client)

    async def complete(self, request: ModelRequest = REQUEST) -> MessageComplete:
        chunks = [c async for c in self.provider().stream(request)]
        assert isinstance(chunks[-1], MessageComplete)
        return chunks[-1]


COMPACTED = stream([[COMPACTION_START, COMPACTION_DELTA],
                    [{"type": "text", "text": ""}, {"type": "text_delta", "text": "March it is."}]],
                   "end_turn", usage={"input_tokens": 1_400, "iterations": ITERATIONS})


async def test_a_compaction_block_is_assembled_whole_with_its_summary_and_signature() -> None:
    done = await Fake(COMPACTED).complete()
    assert done.message["content"][0] == {"type": "compaction", "signature": "sig_compaction_1",
                                          "content": SUMMARY, "encrypted_content": "enc_1"}
    assert done.message["content"][1] == {"type": "text", "text": "March it is."}


async def test_compaction_iterations_are_billed_apart_from_the_context_size() -> None:
    done = await Fake(COMPACTED).complete()
    assert done.usage.input_tokens == 1_400  # what the model saw: the context after compaction
    assert done.compaction_usage == Usage(input_tokens=151_000, output_tokens=900)


async def test_the_block_goes_back_verbatim_with_the_compaction_beta_header() -> None:
    reply = (await Fake(COMPACTED).complete()).message
    fake = Fake(stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"}]], "end_turn"))
    follow = ModelRequest(model=MODEL, system=None, tools=(), max_tokens=200, messages=[
        {"role": "user", "content": "hi"}, reply, {"role": "user", "content": "and April?"}])
    await fake.complete(follow)
    _, headers, body = fake.requests[0]
    assert COMPACTION_BETA in headers["anthropic-beta"].split(",")
    sent = body["messages"][1]["content"][0]
    assert {k: v for k, v in sent.items() if k != "cache_control"} == reply["content"][0]


async def test_a_request_without_betas_uses_the_plain_endpoint_and_no_beta_header() -> None:
    fake = Fake(stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"}]], "end_turn"))
    await fake.complete()
    _, headers, body = fake.requests[0]
    assert "anthropic-beta" not in headers and "context_management" not in body


async def test_context_edits_are_sent_with_their_header_and_applied_edits_are_read_back() -> None:
    body = with_context_management(
        stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"}]], "end_turn"), APPLIED)
    fake = Fake(body)
    edits: ContextManagementParam = {"edits": [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
        {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 30_000},
         "keep": {"type": "tool_uses", "value": 3},
         "clear_at_least": {"type": "input_tokens", "value": 10_000}, "exclude_tools": ["python"]}]}
    done = await fake.complete(ModelRequest(model=MODEL, messages=REQUEST.messages, system=None, tools=(),
                                            max_tokens=200, context_management=edits))
    _, headers, sent = fake.requests[0]
    assert headers["anthropic-beta"] == CONTEXT_MANAGEMENT_BETA
    assert sent["context_management"] == edits
    assert done.applied_edits == tuple(APPLIED)


async def test_the_mask_layers_anchors_go_out_as_one_hour_breakpoints_and_one_hour_writes_are_read_back() -> None:
    usage = {"cache_creation_input_tokens": 9_000, "cache_read_input_tokens": 30_000,
             "cache_creation": {"ephemeral_5m_input_tokens": 7_000, "ephemeral_1h_input_tokens": 2_000}}
    fake = Fake(stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"}]], "end_turn", usage=usage))
    messages: list[Any] = [{"role": "user", "content": "go"}]
    for k in range(6):
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "run", "input": {}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok"}]}]
    request = ModelRequest(model=MODEL, system="sys", tools=(), max_tokens=200, messages=messages, cache_anchors=(3, 7))
    done = await fake.complete(request)
    _, headers, body = fake.requests[0]
    marks = {i: m["content"][-1]["cache_control"] for i, m in enumerate(body["messages"])
             if isinstance(m["content"], list) and "cache_control" in m["content"][-1]}
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    assert marks == {3: one_hour, 7: one_hour, 12: {"type": "ephemeral"}}
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": one_hour}]
    assert "anthropic-beta" not in headers  # the one-hour TTL needs no beta header
    assert done.usage.cache_creation_1h == 2_000 and done.usage.cache_creation_input_tokens == 9_000


async def test_the_edit_layers_clear_tool_inputs_is_on_the_wire_as_the_policy_built_it() -> None:
    for spec, expected in (("edit:inputs=1", True), ("edit:inputs=python,read_file", ["python", "read_file"])):
        fake = Fake(stream([[{"type": "text", "text": ""}, {"type": "text_delta", "text": "ok"}]], "end_turn"))
        edits = ContextPolicy.parse(spec).server_edits(thinks=False)
        await fake.complete(ModelRequest(model=MODEL, messages=REQUEST.messages, system=None, tools=(),
                                         max_tokens=200, context_management=edits))
        _, headers, sent = fake.requests[0]
        assert headers["anthropic-beta"] == CONTEXT_MANAGEMENT_BETA
        assert sent["context_management"]["edits"][0]["clear_tool_inputs"] == expected
        assert sent["context_management"] == edits
