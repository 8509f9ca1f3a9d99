"""Cache breakpoints of a request: the last message, and where the previous request ended (so its
cached prefix is found however many blocks the latest reply and its tool results added), and the
mask layer's one-hour anchors (within the API's four breakpoints and its TTL order)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from nbagent.engine.api_facts.caching import count_breakpoints, ttl_order_error
from nbagent.engine.contracts.errors import ApiError, ErrorKind
from nbagent.engine.contracts.messages import ContentBlock, Message
from nbagent.engine.contracts.provider import ModelRequest
from nbagent.providers.anthropic_errors import refused_feature
from nbagent.providers.anthropic_request import RequestKwargs, features_sent, request_kwargs, with_cache_breakpoints


def marked(messages: Sequence[Mapping[str, object]]) -> list[int]:
    return [i for i, m in enumerate(messages)
            if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"])]


def last_block(message: Mapping[str, object]) -> Mapping[str, object]:
    """The last block of a message the provider built (its list content, as JSON)."""
    content = message["content"]
    assert isinstance(content, list) and isinstance(content[-1], dict), message
    return content[-1]


def conversation(calls: int) -> list[Message]:
    uses: list[ContentBlock] = [{"type": "tool_use", "id": f"t{k}", "name": "run", "input": {}} for k in range(calls)]
    results: list[ContentBlock] = [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok"} for k in range(calls)]
    return [{"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": uses}, {"role": "user", "content": results}]


def test_the_last_message_and_the_end_of_the_previous_request_carry_breakpoints() -> None:
    messages = conversation(12)  # 24 blocks after the previous request's end: beyond the lookback
    out = with_cache_breakpoints(messages)
    assert marked(out) == [0, 2]
    assert last_block(out[0])["cache_control"] == {"type": "ephemeral"}
    assert last_block(out[2])["cache_control"] == {"type": "ephemeral"}


def test_the_inputs_are_not_changed() -> None:
    messages = conversation(3)
    with_cache_breakpoints(messages)
    assert marked(messages) == []


def test_a_first_request_has_one_breakpoint_and_string_content_is_converted() -> None:
    out = with_cache_breakpoints([{"role": "user", "content": "hi"}])
    assert out == [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]


def test_a_thinking_block_last_gets_no_breakpoint() -> None:
    # As the provider takes it (JSON): the thinking block has no signature, which does not matter here.
    messages: list[Mapping[str, object]] = [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]},
        {"role": "user", "content": "next"}]
    out = with_cache_breakpoints(messages)
    assert marked(out) == [0, 2]
    out = with_cache_breakpoints(messages[:2])
    assert marked(out) == []


def long_conversation(pairs: int) -> list[Message]:
    out: list[Message] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for k in range(pairs):
        out.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{k}", "name": "run", "input": {}}]})
        out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok"}]})
    return out


def ttls(messages: Sequence[Mapping[str, object]]) -> dict[int, object]:
    return {i: ttl_of(last_block(m)["cache_control"]) for i, m in enumerate(messages)
            if isinstance(m["content"], list) and "cache_control" in last_block(m)}


def ttl_of(mark: object) -> object:
    assert isinstance(mark, dict), mark
    return mark.get("ttl", "5m")


def system_mark(kwargs: RequestKwargs) -> object:
    """The ``cache_control`` of the last block of the request's system prompt (a list of blocks)."""
    system = kwargs["system"]
    assert not isinstance(system, str), system
    return system[-1]["cache_control"]


def body(anchors: tuple[int, ...], pairs: int = 8, without: frozenset[str] = frozenset()) -> RequestKwargs:
    request = ModelRequest(model="claude-sonnet-5-5", messages=long_conversation(pairs), system="sys", tools=[],
                           max_tokens=100, cache_anchors=anchors, without=without)
    return request_kwargs(request)


def test_one_anchor_is_a_one_hour_breakpoint_and_the_system_prompt_follows_its_ttl() -> None:
    kwargs = body((3,))
    assert ttls(kwargs["messages"]) == {3: "1h", 14: "5m", 16: "5m"}
    assert system_mark(kwargs) == {"type": "ephemeral", "ttl": "1h"}
    assert count_breakpoints(kwargs) == 4 and ttl_order_error(kwargs) is None


def test_two_anchors_after_a_masking_replace_the_previous_requests_end_within_four_breakpoints() -> None:
    kwargs = body((3, 9))
    assert ttls(kwargs["messages"]) == {3: "1h", 9: "1h", 16: "5m"}
    assert count_breakpoints(kwargs) == 4 and ttl_order_error(kwargs) is None


@pytest.mark.parametrize("anchors", [(14,), (15,), (16,), (99,), (-1,)])
def test_anchors_among_the_last_three_messages_or_outside_are_left_out(anchors: tuple[int, ...]) -> None:
    kwargs = body(anchors)
    assert ttls(kwargs["messages"]) == {14: "5m", 16: "5m"}
    assert system_mark(kwargs) == {"type": "ephemeral"}


def test_an_endpoint_that_refused_caching_gets_no_anchor() -> None:
    kwargs = body((3,), without=frozenset({"cache_control"}))
    assert ttls(kwargs["messages"]) == {} and kwargs["system"] == "sys"


def test_a_refused_ttl_names_the_one_hour_cache_not_caching_as_a_whole() -> None:
    request = ModelRequest(model="m", messages=long_conversation(8), system="s", tools=[], max_tokens=1,
                           cache_anchors=(3,))
    sent = features_sent(request_kwargs(request), request)
    assert {"cache_ttl", "cache_control"} <= sent
    error = ApiError(ErrorKind.INVALID_REQUEST, "cache_control.ttl: Input should be '5m'", status=400)
    assert refused_feature(error, sent) == "cache_ttl"
    plain = ModelRequest(model="m", messages=long_conversation(8), system="s", tools=[], max_tokens=1)
    assert "cache_ttl" not in features_sent(request_kwargs(plain), plain)


def test_more_anchors_than_two_keep_the_newest_two_within_four_breakpoints() -> None:
    kwargs = body((1, 3, 5))
    assert ttls(kwargs["messages"]) == {3: "1h", 5: "1h", 16: "5m"}
    assert count_breakpoints(kwargs) == 4 and ttl_order_error(kwargs) is None
