"""The simulated API's server-side context management, through the real SDK and nbagent's provider:
cleared tool results with ``applied_edits``, a server compaction whose block goes back verbatim
(the next request succeeds only with it and its beta header), and the 400s."""

from __future__ import annotations

from collections.abc import Mapping

import anthropic
import pytest

from nbagent.engine.api_facts.context_edit_types import ClearToolUsesEditParam, ContextManagementParam
from nbagent.engine.contracts.errors import ApiError
from nbagent.engine.contracts.messages import Message
from nbagent.engine.contracts.provider import MessageComplete, ModelRequest
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import Reply, RequestBody, SimulatedAPI, text_reply

from ._messages import list_content

MODEL = "claude-sonnet-5-5"
BIG = "row " * 3000  # about 3k tokens


def conversation(results: int) -> list[Message]:
    messages: list[Message] = [{"role": "user", "content": "analyse sales.csv"}]
    for i in range(results):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "python", "input": {"code": f"print({i})"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"fact {i}: " + BIG}]})
    list_content(messages[-1]).append({"type": "text", "text": "go on"})
    return messages


async def send(api: SimulatedAPI, messages: list[Message], edits: ContextManagementParam | None,
               model: str = MODEL) -> MessageComplete:
    request = ModelRequest(model=model, messages=messages, system=None, tools=(), max_tokens=500,
                           context_management=edits)
    chunks = [c async for c in simulated_provider(api).stream(request)]
    assert isinstance(chunks[-1], MessageComplete)
    return chunks[-1]


def count(edit: Mapping[str, object], key: str) -> int:
    """A count of an applied edit (``applied_edits`` holds them as received)."""
    value = edit[key]
    assert isinstance(value, int), edit
    return value


CLEAR_EDIT: ClearToolUsesEditParam = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 10_000},
                                      "keep": {"type": "tool_uses", "value": 2}}
CLEAR: ContextManagementParam = {"edits": [CLEAR_EDIT]}
COMPACT: ContextManagementParam = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}]}


async def test_clearing_tool_uses_reports_what_it_cleared_and_the_model_sees_less() -> None:
    api = SimulatedAPI(responder=[text_reply("ok"), text_reply("ok")], thinks_by_default=False)
    plain = await send(api, conversation(8), None)
    done = await send(api, conversation(8), CLEAR)
    assert [e["type"] for e in done.applied_edits] == ["clear_tool_uses_20250919"]
    assert done.applied_edits[0]["cleared_tool_uses"] == 6
    assert done.usage.prompt_tokens < plain.usage.prompt_tokens - count(done.applied_edits[0], "cleared_input_tokens") // 2
    assert api.requests[-1].headers["anthropic-beta"] == "context-management-2025-06-27"


async def test_a_server_compaction_block_goes_back_verbatim_and_the_next_request_succeeds() -> None:
    api = SimulatedAPI(responder=[text_reply("compacted"), text_reply("still here")], thinks_by_default=False)
    history = conversation(20)
    first = await send(api, history, COMPACT)
    block = list_content(first.message)[0]
    assert block["type"] == "compaction" and isinstance(block["content"], str) and block["content"].startswith("Summary")
    assert first.compaction_usage is not None and first.compaction_usage.input_tokens >= 50_000
    # Without the edit, the block alone needs the compact beta header: the provider adds it.
    second = await send(api, [*history, first.message, {"role": "user", "content": "and now?"}], None)
    last = list_content(second.message)[-1]
    assert last["type"] == "text" and last["text"] == "still here"
    assert second.usage.prompt_tokens < 5_000  # the server reads from the compaction on
    assert api.requests[-1].headers["anthropic-beta"] == "compact-2026-01-12"


async def test_a_changed_compaction_block_is_refused() -> None:
    api = SimulatedAPI(responder=[text_reply("x")], thinks_by_default=False)
    forged: Message = {"role": "assistant", "content": [{"type": "compaction", "content": "all good", "signature": "nope"}]}
    with pytest.raises(Exception, match="compaction_content_mismatch"):
        await send(api, [{"role": "user", "content": "a"}, forged, {"role": "user", "content": "b"}], None)


async def test_the_beta_header_is_required_for_a_compaction_block() -> None:
    api = SimulatedAPI(responder=[text_reply("x")], thinks_by_default=False)
    client = api.async_client()
    block = {"type": "compaction", "content": "s", "signature": "x"}
    with pytest.raises(anthropic.BadRequestError, match="compact-2026-01-12"):
        await client.messages.create(model=MODEL, max_tokens=10, messages=[
            {"role": "user", "content": "a"},
            # Deliberately a beta block, which the non-beta SDK's types lack (its missing header is tested):
            {"role": "assistant", "content": [block]},  # type: ignore[misc, list-item]
            {"role": "user", "content": "b"}])


async def test_a_model_without_server_compaction_answers_400() -> None:
    api = SimulatedAPI(responder=[text_reply("x")], thinks_by_default=False)
    with pytest.raises(Exception, match="not supported for model claude-sonnet-4-5"):
        await send(api, conversation(1), COMPACT, model="claude-sonnet-4-5")


def seen_by_model(api: SimulatedAPI) -> list[Message]:
    """The responder of ``api`` keeps the messages the model saw after the server's edits."""
    seen: list[Message] = []

    def reply(body: RequestBody) -> Reply:
        seen[:] = body["messages"]
        return text_reply("ok")

    api.responder = reply
    return seen


def inputs_seen(messages: list[Message]) -> list[object]:
    return [b["input"] for m in messages if m["role"] == "assistant" for b in list_content(m) if b["type"] == "tool_use"]


def tool_use_id(message: Message) -> str:
    """The id of the message's first block, which the test expects to be a tool call."""
    first = list_content(message)[0]
    assert first["type"] == "tool_use", first
    return first["id"]


def with_inputs(which: bool | list[str] | None) -> ContextManagementParam:
    return {"edits": [{**CLEAR_EDIT, "clear_tool_inputs": which}]}


async def test_clear_tool_inputs_also_clears_the_cleared_tool_uses_inputs() -> None:
    api = SimulatedAPI(responder=[text_reply("ok")], thinks_by_default=False)
    seen = seen_by_model(api)
    results_only = await send(api, conversation(8), CLEAR)
    assert inputs_seen(seen) == [{"code": f"print({i})"} for i in range(8)]  # the default keeps the calls whole
    done = await send(api, conversation(8), with_inputs(True))
    assert inputs_seen(seen) == [{}] * 6 + [{"code": "print(6)"}, {"code": "print(7)"}]  # the kept 2 stay whole
    assert [tool_use_id(m) for m in seen if m["role"] == "assistant"] == [f"toolu_{i}" for i in range(8)]
    assert done.applied_edits[0]["cleared_tool_uses"] == 6
    assert count(done.applied_edits[0], "cleared_input_tokens") > count(results_only.applied_edits[0], "cleared_input_tokens")


async def test_clear_tool_inputs_with_names_clears_only_those_tools_inputs() -> None:
    api = SimulatedAPI(responder=[text_reply("ok")], thinks_by_default=False)
    seen = seen_by_model(api)
    await send(api, conversation(8), with_inputs(["read_file"]))
    assert inputs_seen(seen) == [{"code": f"print({i})"} for i in range(8)]  # python's inputs are not listed
    await send(api, conversation(8), with_inputs(["python"]))
    assert inputs_seen(seen)[:6] == [{}] * 6


async def test_a_clear_tool_inputs_that_is_no_bool_or_list_is_refused() -> None:
    api = SimulatedAPI(responder=[text_reply("ok")], thinks_by_default=False)
    with pytest.raises(ApiError, match="clear_tool_inputs: Input should be a valid boolean") as caught:
        await send(api, conversation(2), with_inputs("python"))  # type: ignore[arg-type]  # deliberately wrong: a str is refused
    assert caught.value.status == 400
