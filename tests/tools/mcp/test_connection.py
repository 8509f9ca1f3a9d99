"""A hostile MCP server cannot hang a run: every call is bounded by ``mcp_call_timeout_s``, and a
catastrophic regex in a tool's schema is checked off the event loop, so an abort is heard at once."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from nbagent.engine.contracts.events import Done, ToolResult
from nbagent.engine.loop.tool_runner import NOT_RUN
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply

from .test_agent import SERVERS, make_agent

HOSTILE = str(SERVERS / "hostile_server.py")


def hostile(*args: str) -> dict[str, Any]:
    return {"h": {"command": sys.executable, "args": [HOSTILE, *args]}}


@pytest.mark.parametrize("mode", ["silent", "badjson", "wrongid"])
async def test_an_unanswered_or_garbled_call_ends_as_an_error_result(tmp_path: Path, mode: str) -> None:
    api = SimulatedAPI([tool_reply("mcp__h__echo", {"s": "x"}), text_reply("gave up")])
    agent = make_agent(api, tmp_path, mcp_servers=hostile(mode), allow=["mcp__h__echo"], mcp_call_timeout_s=0.5)
    try:
        events = [e async for e in agent.run("call it")]
    finally:
        await agent.aclose()
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and "'h'" in result.content
    if mode != "badjson":  # a line that is not JSON may also end the connection: an error either way
        assert "did not answer 'echo' within 0.5 s" in result.content
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"


async def test_a_catastrophic_schema_regex_does_not_block_the_loop(tmp_path: Path) -> None:
    api = SimulatedAPI([tool_reply("mcp__h__echo", {"s": "a" * 24 + "!"}), text_reply("never")])
    agent = make_agent(api, tmp_path, mcp_servers=hostile("regex"), allow=["mcp__h__echo"])
    try:
        events: list[Any] = []
        async for e in agent.run("call it"):
            events.append(e)
            if e.kind == "tool_use":
                # Runs only if the loop is free while the input is checked: on the loop, the check
                # would finish first and answer "invalid input".
                asyncio.get_running_loop().call_soon(agent.abort)
    finally:
        await agent.aclose()
    assert [e for e in events if isinstance(e, ToolResult)] == []  # not "invalid input": the abort came first
    assert isinstance(events[-1], Done) and events[-1].reason == "aborted"
    last = agent.history[-1]["content"]
    assert isinstance(last, list)
    answer = last[0]
    assert answer["type"] == "tool_result" and answer["content"] == NOT_RUN
