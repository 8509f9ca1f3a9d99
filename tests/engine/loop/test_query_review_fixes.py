"""Regressions found in review: blank text blocks, empty prompts, abort events across event loops,
and windows from a user's model table (a stream closed before message_stop: tests/providers)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent.engine.api_facts.models import ModelInfo, PriceTier
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.engine.loop.query import QueryEngine
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine


class Echo(Tool):
    name = "echo"
    description = "echo"
    read_only = True

    class Input(pydantic.BaseModel):
        text: str = ""

    async def run(self, tool_input, ctx):
        return ToolOutput(content=tool_input["text"] or "(empty)")


class Sleepy(Tool):
    name = "sleepy"
    description = "aborts its own run (as the Stop button would), then sleeps"
    read_only = True
    engine: Any = None

    class Input(pydantic.BaseModel):
        pass

    async def run(self, tool_input, ctx):
        self.engine.abort()
        await asyncio.sleep(3)
        return ToolOutput(content="slept")


def engine(api, tmp_path: Path, **kw) -> QueryEngine:
    return make_engine(api, tmp_path, task=None, custom_system_prompt=None, **kw)


async def run(eng, prompt):
    return [e async for e in eng.submit_message(prompt)]


async def test_whitespace_text_before_a_tool_call_does_not_poison_the_session(tmp_path):
    api = SimulatedAPI(lambda req: (tool_reply("echo", {"text": "x"}, text="\n\n")
                                    if len(req["messages"]) == 1 else text_reply("done")))
    eng = engine(api, tmp_path, tools=[Echo()])
    assert (await run(eng, "go"))[-1].reason == "end_turn"
    assert (await run(eng, "again"))[-1].reason == "end_turn"
    assert history_problems(eng.session.history) == []
    assert all(str(b.get("text", "x")).strip() for m in eng.session.history if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "text")


async def test_an_empty_prompt_is_refused_before_anything_changes(tmp_path):
    eng = engine(SimulatedAPI([text_reply("hi")]), tmp_path)
    with pytest.raises(ValueError, match="empty"):
        await run(eng, "   ")
    assert eng.session.history == [] and eng.session.turn == 0
    assert (await run(eng, "hello"))[-1].reason == "end_turn"


def test_abort_keeps_working_across_event_loops(tmp_path):
    tool = Sleepy()
    def reply(req):  # a new prompt (text last) asks for the tool; a tool result gets a text answer
        last = req["messages"][-1]["content"]
        return tool_reply("sleepy", {}) if isinstance(last, str) or last[-1].get("type") == "text" else text_reply("ok")

    api = SimulatedAPI(reply)
    eng = engine(api, tmp_path, tools=[tool])
    tool.engine = eng
    for _ in range(2):  # two asyncio.run calls: two event loops
        t0 = time.monotonic()
        events = asyncio.run(run(eng, "sleep please"))
        assert events[-1].reason == "aborted" and time.monotonic() - t0 < 1.5
        assert history_problems(eng.session.history) == []


def test_a_user_model_table_sets_the_window(tmp_path):
    custom = ModelInfo("acme-large", 50_000, 4_096, PriceTier(1, 1, 1, 0.1, 2))
    eng = engine(SimulatedAPI([text_reply("hi")]), tmp_path, model="acme-large", prices={"acme-large": custom})
    assert eng.context_window == 50_000
