"""Structured output: a forced final_answer tool call, validated, retried once with the error, and
returned as data (flat, nested and list-of-objects schemas; pydantic and JSON schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.loop.structured import FINAL_ANSWER_TOOL, INSTRUCTION, NUDGE, OutputSpec, StructuredOutputError
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import messages_requests


class City(pydantic.BaseModel):
    name: str
    population: int


class Country(pydantic.BaseModel):
    name: str
    capital: City
    languages: list[str]


ROWS_SCHEMA = {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"},
                                                                          "label": {"type": "string"}},
                                          "required": ["x", "label"]}}


def agent_on(api: SimulatedAPI, tmp_path: Path) -> Agent:
    return Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, allow=["python"])


def final(data: Any) -> Any:
    return tool_reply(FINAL_ANSWER_TOOL, data)


async def test_flat_pydantic_schema_returns_the_object(tmp_path: Path) -> None:
    api = SimulatedAPI([final({"name": "Lyon", "population": 522000})])
    agent = agent_on(api, tmp_path)
    city = await agent.ask("Largest city after Paris?", output=City)
    assert city == City(name="Lyon", population=522000)
    body = messages_requests(api)[0].body
    (tool,) = [t for t in body["tools"] if t["name"] == FINAL_ANSWER_TOOL]
    assert tool["input_schema"]["required"] == ["name", "population"]
    assert INSTRUCTION in str(body["messages"][-1]["content"])
    assert len(messages_requests(api)) == 1  # a valid answer ends the run: no request after it
    assert history_problems(agent.history) == []


async def test_nested_schema_and_done_carries_the_data(tmp_path: Path) -> None:
    data = {"name": "France", "capital": {"name": "Paris", "population": 2100000}, "languages": ["fr"]}
    agent = agent_on(SimulatedAPI([tool_reply("python", {"code": "print(1)"}), final(data)]), tmp_path)
    events = [e async for e in agent.run("Describe France", output=Country)]
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "end_turn" and done.output == data
    assert agent.last_output == Country.model_validate(data)


async def test_list_of_objects_json_schema_is_wrapped_and_unwrapped(tmp_path: Path) -> None:
    rows = [{"x": 1.5, "label": "a"}, {"x": 2, "label": "b"}]
    api = SimulatedAPI([final({"result": rows})])
    agent = agent_on(api, tmp_path)
    assert await agent.ask("Two rows please", output=ROWS_SCHEMA) == rows
    (tool,) = [t for t in messages_requests(api)[0].body["tools"] if t["name"] == FINAL_ANSWER_TOOL]
    assert tool["input_schema"] == {"type": "object", "properties": {"result": ROWS_SCHEMA}, "required": ["result"]}


async def test_list_of_pydantic_objects_keeps_defs_at_the_root(tmp_path: Path) -> None:
    spec = OutputSpec.of(list[City])
    schema = spec.tool_schema()
    assert schema["properties"]["result"]["items"] == {"$ref": "#/$defs/City"} and "City" in schema["$defs"]
    assert spec.check({"result": [{"name": "A", "population": 1}]})[0] == [City(name="A", population=1)]


async def test_an_invalid_answer_is_retried_once_with_the_validation_error(tmp_path: Path) -> None:
    api = SimulatedAPI([final({"name": "Lyon", "population": "many"}), final({"name": "Lyon", "population": 5})])
    agent = agent_on(api, tmp_path)
    assert await agent.ask("city?", output=City) == City(name="Lyon", population=5)
    second = messages_requests(api)[1].body["messages"][-1]["content"][0]
    assert second["is_error"] and "population: Input should be a valid integer" in second["content"]
    assert history_problems(agent.history) == []


async def test_a_second_invalid_answer_is_a_clear_exception(tmp_path: Path) -> None:
    api = SimulatedAPI([final({"name": "Lyon"}), final({"population": 3}), text_reply("never sent")])
    agent = agent_on(api, tmp_path)
    with pytest.raises(StructuredOutputError, match="did not match the schema after 2 attempts: name: Field required"):
        await agent.ask("city?", output=City)
    assert len(messages_requests(api)) == 2
    assert agent.last_output is None and history_problems(agent.history) == []


async def test_a_model_that_answers_in_text_is_asked_once_for_the_tool(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("Lyon, about half a million"), final({"name": "Lyon", "population": 1})])
    agent = agent_on(api, tmp_path)
    assert await agent.ask("city?", output=City) == City(name="Lyon", population=1)
    assert messages_requests(api)[1].body["messages"][-1]["content"][-1]["text"] == NUDGE

    api = SimulatedAPI([text_reply("Lyon"), text_reply("Still Lyon")])
    with pytest.raises(StructuredOutputError, match="without calling final_answer"):
        await agent_on(api, tmp_path / "b").ask("city?", output=City)


def test_bad_schemas_are_refused_up_front() -> None:
    with pytest.raises(TypeError, match="output must be a pydantic model"):
        OutputSpec.of(object())
    with pytest.raises(Exception, match="is not valid under any of the given schemas|is not of type"):
        OutputSpec.of({"type": 12})


async def test_without_output_last_output_is_the_final_text(tmp_path: Path) -> None:
    agent = agent_on(SimulatedAPI([text_reply("plain answer")]), tmp_path)
    assert await agent.ask("hi") == "plain answer" and agent.last_output == "plain answer"
