"""A model's tool input nested deeper than Python's JSON reader follows (attacker pass 10).

The model is untrusted: a prompt injection can make it write ``[[[[…`` (5,000 levels, well within
what ``max_tokens`` lets it stream) as a tool call's input. ``json.loads`` raises RecursionError, not
a JSONDecodeError, and the reply was lost as an unexpected failure instead of being kept, as an
unfinished input is, under ``_unparsed_input`` for the tool's schema to refuse."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from nbagent.engine.contracts.provider import MessageComplete
from nbagent.providers.anthropic_stream import parse_tool_input

from ._messages import list_content
from .test_anthropic_wire import REQUEST, stream
from .test_stream_bounds import _Lazy, provider

DEEP = "[" * 5_000


@pytest.mark.usefixtures("collections_keep_stack_left")
def test_a_tool_input_nested_too_deep_is_kept_unparsed() -> None:
    assert parse_tool_input(DEEP) == {"_unparsed_input": DEEP}


@pytest.mark.usefixtures("collections_keep_stack_left")
async def test_a_streamed_tool_call_nested_too_deep_completes_the_reply() -> None:
    async def once() -> AsyncIterator[bytes]:
        yield stream([[{"type": "tool_use", "id": "toolu_1", "name": "python", "input": {}},
                       {"type": "input_json_delta", "partial_json": DEEP}]], "tool_use")

    done = [chunk async for chunk in provider(200, _Lazy(once)).stream(REQUEST) if isinstance(chunk, MessageComplete)]
    block = list_content(done[-1].message)[0]
    assert block["type"] == "tool_use" and block["input"] == {"_unparsed_input": DEEP}
