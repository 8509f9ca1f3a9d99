"""Cache breakpoints of a request: the last message, and where the previous request ended (so its
cached prefix is found however many blocks the latest reply and its tool results added)."""

from __future__ import annotations

from typing import Any

from nbagent.providers.anthropic import _with_cache_breakpoint_last


def marked(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages)
            if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"])]


def conversation(calls: int) -> list[dict[str, Any]]:
    uses = [{"type": "tool_use", "id": f"t{k}", "name": "run", "input": {}} for k in range(calls)]
    results = [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok"} for k in range(calls)]
    return [{"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": uses}, {"role": "user", "content": results}]


def test_the_last_message_and_the_end_of_the_previous_request_carry_breakpoints() -> None:
    messages = conversation(12)  # 24 blocks after the previous request's end: beyond the lookback
    out = _with_cache_breakpoint_last(messages)
    assert marked(out) == [0, 2]
    assert out[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert out[2]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_the_inputs_are_not_changed() -> None:
    messages = conversation(3)
    _with_cache_breakpoint_last(messages)
    assert marked(messages) == []


def test_a_first_request_has_one_breakpoint_and_string_content_is_converted() -> None:
    out = _with_cache_breakpoint_last([{"role": "user", "content": "hi"}])
    assert out == [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]


def test_a_thinking_block_last_gets_no_breakpoint() -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]},
                {"role": "user", "content": "next"}]
    messages[0]["content"] = [{"type": "text", "text": "q"}]
    out = _with_cache_breakpoint_last(messages)
    assert marked(out) == [0, 2]
    out = _with_cache_breakpoint_last(messages[:2])
    assert marked(out) == []
