"""Content blocks are told apart by one reading of their ``type`` (``block_type``) and the TypeGuards
built on it; anything that is not a block-shaped mapping is none of them, and a prompt item that is
not a block is refused before it can enter the history."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from nbagent.engine.contracts.messages import (
    ServerToolUseBlockParam,
    WebFetchToolResultBlockParam,
    block_text,
    block_type,
    content_blocks,
    is_compaction,
    is_content_block,
    is_server_tool_result,
    is_text,
    is_tool_result,
    is_tool_use,
    prompt_blocks,
    server_tool_calls,
)


@pytest.mark.parametrize("value", [None, "text", 3, ["type", "text"], {"text": "no type"}, {"type": 5}])
def test_what_is_not_a_block_has_no_type_and_passes_no_guard(value: object) -> None:
    assert block_type(value) is None and not is_content_block(value)
    assert not any(guard(value) for guard in (is_text, is_tool_use, is_tool_result, is_compaction,
                                               is_server_tool_result))


def test_each_guard_answers_its_own_kind_only_for_any_mapping() -> None:
    use = OrderedDict(type="tool_use", id="t1", name="python", input={})  # a Mapping that is not a plain dict
    assert block_type(use) == "tool_use" and is_tool_use(use) and not is_tool_result(use)
    assert is_tool_result({"type": "tool_result", "tool_use_id": "t1"})
    assert is_compaction({"type": "compaction", "content": "s"}) and not is_text({"type": "compaction"})


def test_a_server_tool_result_is_any_server_kind_and_never_a_client_tool_result() -> None:
    assert is_server_tool_result({"type": "web_search_tool_result", "tool_use_id": "s1", "content": []})
    assert is_server_tool_result({"type": "code_execution_tool_result", "tool_use_id": "s2", "content": {}})
    assert not is_server_tool_result({"type": "tool_result", "tool_use_id": "t1"})


def test_server_tool_calls_pair_each_call_with_its_result() -> None:
    call: ServerToolUseBlockParam = {"type": "server_tool_use", "id": "s1", "name": "web_search",
                                     "input": {"query": "q"}}
    result: WebFetchToolResultBlockParam = {"type": "web_fetch_tool_result", "tool_use_id": "s1",
                                            "content": {"url": "https://x"}}
    lone: ServerToolUseBlockParam = {"type": "server_tool_use", "id": "s2", "name": "web_fetch", "input": {}}
    assert server_tool_calls({"role": "assistant", "content": [call, result, lone]}) == [(call, result), (lone, None)]


def test_a_prompt_item_that_is_not_a_block_is_refused_with_what_it_was() -> None:
    with pytest.raises(ValueError, match="must be a dict with a 'type'"):
        prompt_blocks([{"type": "text", "text": "hi"}, {"text": "no type"}])
    assert prompt_blocks([{"type": "text", "text": " "}, {"type": "text", "text": "hi"}]) == [
        {"type": "text", "text": "hi"}]


def test_block_text_reads_each_kind_and_skips_images_inside_tool_results() -> None:
    result = {"type": "tool_result", "tool_use_id": "t", "content": [
        {"type": "text", "text": "out"}, {"type": "image", "source": {}}]}
    assert block_text(result) == "out"
    assert block_text({"type": "tool_result", "tool_use_id": "t", "content": None}) == ""
    assert block_text({"type": "thinking", "thinking": "hm", "signature": "s"}) == "hm"
    assert content_blocks({"role": "user", "content": ""}) == [{"type": "text", "text": ""}]
    assert content_blocks({"role": "user", "content": None}) == []
