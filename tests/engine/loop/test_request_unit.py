"""``attempt_api_request`` details: the bounded wait for tool servers, and stop reasons that end a
turn in a particular way (refusal, a context window exceeded mid-answer), extended thinking."""

from __future__ import annotations

import asyncio
from typing import Any

from nbagent.engine.api_facts.tokens import TokenCounter
from nbagent.engine.contracts.abort import AbortGuard, RunControl
from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.events import Notice, ThinkingDelta
from nbagent.engine.contracts.permissions import cancel_on_failure
from nbagent.engine.loop.request import TOOL_WAIT_MARGIN_S, Prepared, RequestOutcome, attempt_api_request
from nbagent.engine.loop.request_run import RequestRun
from nbagent.engine.state.session import Session
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop._blocks import content_list
from tests.engine.loop.test_query_support import (
    MODEL,
    Add,
    Echo,
    FunctionSource,
    kinds,
    make_engine,
    messages_requests,
    run,
)


async def one_request(api: SimulatedAPI, wait_for_tools: Any = None, **settings: Any) -> list[Any]:
    session = Session()
    session.history.append({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    control = RunControl()
    control.bind()
    guard = AbortGuard(control.abort_event)
    guard.start()
    try:
        run = RequestRun(config=SessionConfig(model=MODEL, **settings), provider=simulated_provider(api),
                         session=session, guard=guard, control=control, counter=TokenCounter(),
                         ask_failure=cancel_on_failure, sleep=asyncio.sleep,
                         sources=[FunctionSource(wait_for_tools)] if wait_for_tools else [], context_window=200_000)
        return [item async for item in attempt_api_request(
            run, model=MODEL, prepare=lambda: Prepared("s", []), turn=1, request_no=1)]
    finally:
        guard.stop()


async def test_a_tool_server_that_never_connects_is_waited_for_a_bounded_time() -> None:
    async def never() -> list[str]:
        await asyncio.Event().wait()
        return []

    items = await one_request(SimulatedAPI([text_reply("ok")]), wait_for_tools=never, tool_wait_s=0.05)
    assert isinstance(items[0], Notice) and items[0].level == "warning"
    assert f"still connecting after {0.05 + TOOL_WAIT_MARGIN_S:g} s" in items[0].message
    assert isinstance(items[-1], RequestOutcome)


async def test_a_failing_tool_server_is_a_warning_not_a_failed_request() -> None:
    async def broken() -> list[str]:
        raise ConnectionError("mcp server exited")

    items = await one_request(SimulatedAPI([text_reply("ok")]), wait_for_tools=broken)
    assert "mcp server exited" in items[0].message and isinstance(items[-1], RequestOutcome)


async def test_tool_server_warnings_are_shown_before_the_request(tmp_path: Any) -> None:
    async def warnings() -> list[str]:
        return ["server 'db' failed to start; its tools are not offered"]

    engine = make_engine(SimulatedAPI([text_reply("ok")]), tmp_path, wait_for_tools=warnings)
    ev = await run(engine, "hello")
    assert kinds(ev) == ["notice", "api_request_started", "request_completed", "done"]
    assert ev[0] == Notice(level="warning", message="server 'db' failed to start; its tools are not offered")


async def test_thinking_streams_and_is_kept_with_its_signature(tmp_path: Any) -> None:
    api = SimulatedAPI([text_reply("Answer one.", thinking="Let me think about it."), text_reply("Answer two.")])
    engine = make_engine(api, tmp_path, model="claude-haiku-4-5", thinking_budget=2_048)  # a budget model
    ev = await run(engine, "think")
    assert "".join(e.text for e in ev if isinstance(e, ThinkingDelta)) == "Let me think about it."
    block = content_list(engine.session.history[1])[0]
    assert block["type"] == "thinking" and block["thinking"] == "Let me think about it." and block["signature"]
    await run(engine, "again")
    sent = messages_requests(api)[1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2_048}
    assert sent["messages"][1]["content"][0] == block


async def test_tools_of_servers_that_connect_during_the_wait_are_offered_at_once(tmp_path: Any) -> None:
    connected: list[Any] = []

    async def wait() -> list[str]:
        await asyncio.sleep(0)
        connected.append(Echo())  # the server came up while the request waited for it
        return []

    api = SimulatedAPI([tool_reply("echo", {"text": "from the new server"}), text_reply("ok")])
    engine = make_engine(api, tmp_path, tools=[Add()], wait_for_tools=wait, dynamic_tools=lambda: connected)
    ev = await run(engine, "use the new tool")
    assert [t["name"] for t in messages_requests(api)[0].body["tools"]] == ["add", "echo"]
    assert [e.content for e in ev if e.kind == "tool_result"] == ["from the new server"]
    assert engine.session.sent[0].tools == ("add", "echo")
