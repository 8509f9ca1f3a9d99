"""Structured output: the schema sent in the prompt, the model's final text taken as JSON, validated,
retried once with the problems, and returned as data (flat, nested and list-of-objects schemas;
pydantic and JSON schema); the request's tools stay the same, so the cached prefix stays."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.loop.structured import RETRY, OutputSpec, StructuredOutputError, json_in, schema_in_instruction
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.loop.test_query_support import make_engine, messages_requests, run


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
    return text_reply(json.dumps(data))


def schema_sent(body: dict[str, Any]) -> dict[str, Any] | None:
    """The output schema the latest prompt of a request body carries."""
    found = [schema_in_instruction(b.get("text", "")) for m in body["messages"] if m["role"] == "user"
             for b in m["content"] if b["type"] == "text"]
    return next((s for s in reversed(found) if s is not None), None)


async def test_flat_pydantic_schema_returns_the_object(tmp_path: Path) -> None:
    api = SimulatedAPI([final({"name": "Lyon", "population": 522000})])
    agent = agent_on(api, tmp_path)
    city = await agent.ask("Largest city after Paris?", output=City)
    assert city == City(name="Lyon", population=522000)
    body = messages_requests(api)[0].body
    assert schema_sent(body) == City.model_json_schema()  # in the prompt's message, not in the tools
    assert "final_answer" not in str(body.get("tools"))
    assert len(messages_requests(api)) == 1  # a valid answer ends the run: no request after it
    assert history_problems(agent.history) == []


async def test_nested_schema_and_done_carries_the_data(tmp_path: Path) -> None:
    data = {"name": "France", "capital": {"name": "Paris", "population": 2100000}, "languages": ["fr"]}
    agent = agent_on(SimulatedAPI([tool_reply("python", {"code": "print(1)"}), final(data)]), tmp_path)
    events = [e async for e in agent.run("Describe France", output=Country)]
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "end_turn" and done.output == data
    assert agent.last_output == Country.model_validate(data)


async def test_list_of_objects_json_schema_is_sent_whole_and_its_answer_returned(tmp_path: Path) -> None:
    rows = [{"x": 1.5, "label": "a"}, {"x": 2, "label": "b"}]
    api = SimulatedAPI([text_reply(f"Here they are:\n```json\n{json.dumps(rows, indent=2)}\n```")])
    agent = agent_on(api, tmp_path)
    assert await agent.ask("Two rows please", output=ROWS_SCHEMA) == rows  # one fenced block is fine
    assert schema_sent(messages_requests(api)[0].body) == ROWS_SCHEMA


def test_list_of_pydantic_objects_keeps_defs_at_the_root() -> None:
    spec = OutputSpec.of(list[City])
    schema = schema_in_instruction(spec.instruction())
    assert schema is not None and schema["items"] == {"$ref": "#/$defs/City"}
    assert isinstance(schema["$defs"], dict) and "City" in schema["$defs"]
    assert spec.answer_of('[{"name": "A", "population": 1}]')[0] == [City(name="A", population=1)]


@pytest.mark.parametrize(("text", "problem"), [
    ("Lyon, about half a million", r"not one JSON value \(Expecting value at line 1 column 1\)"),
    ('{"name": "Lyon"} and that is all', r"not one JSON value \(Extra data at line 1 column 18\)"),
    ("```json\n1\n```\n```json\n2\n```", "has 2 code blocks; give exactly one JSON value"),
    ("  \n", "the answer is empty"),
    ("[" * 100_000, "nested too deeply|not one JSON value"),
])
@pytest.mark.usefixtures("collections_keep_stack_left")
def test_text_that_is_not_one_json_value_says_what_is_wanted(text: str, problem: str) -> None:
    with pytest.raises(StructuredOutputError, match=problem):
        json_in(text)


def test_validation_is_strict_for_json_schemas_and_names_each_problem() -> None:
    spec = OutputSpec.of(ROWS_SCHEMA)
    with pytest.raises(StructuredOutputError, match="0.x: 'one' is not of type 'number'; 1: 'label' is a required"):
        spec.answer_of('[{"x": "one", "label": "a"}, {"x": 2}]')


async def test_an_invalid_answer_is_retried_once_with_the_validation_error(tmp_path: Path) -> None:
    api = SimulatedAPI([final({"name": "Lyon", "population": "many"}), final({"name": "Lyon", "population": 5})])
    agent = agent_on(api, tmp_path)
    assert await agent.ask("city?", output=City) == City(name="Lyon", population=5)
    told = messages_requests(api)[1].body["messages"][-1]["content"][0]["text"]
    assert told.startswith(RETRY) and "population: Input should be a valid integer" in told
    assert "Reply with the corrected answer alone" in told
    assert schema_sent(messages_requests(api)[1].body) == City.model_json_schema()  # still in the prompt
    assert history_problems(agent.history) == []


async def test_a_second_invalid_answer_is_a_clear_exception(tmp_path: Path) -> None:
    api = SimulatedAPI([final({"name": "Lyon"}), final({"population": 3}), text_reply("never sent")])
    agent = agent_on(api, tmp_path)
    with pytest.raises(StructuredOutputError, match="did not match the schema after 2 attempts: name: Field required"):
        await agent.ask("city?", output=City)
    assert len(messages_requests(api)) == 2
    assert agent.last_output is None and history_problems(agent.history) == []


async def test_a_model_that_answers_in_prose_is_asked_once_for_json(tmp_path: Path) -> None:
    api = SimulatedAPI([text_reply("Lyon, about half a million"), final({"name": "Lyon", "population": 1})])
    agent = agent_on(api, tmp_path)
    assert await agent.ask("city?", output=City) == City(name="Lyon", population=1)
    assert "not one JSON value" in messages_requests(api)[1].body["messages"][-1]["content"][-1]["text"]

    api = SimulatedAPI([text_reply("Lyon"), text_reply("Still Lyon")])
    with pytest.raises(StructuredOutputError, match="after 2 attempts: the answer is not one JSON value"):
        await agent_on(api, tmp_path / "b").ask("city?", output=City)


def test_bad_schemas_are_refused_up_front() -> None:
    with pytest.raises(TypeError, match="output must be a pydantic model"):
        OutputSpec.of(object())
    with pytest.raises(Exception, match="is not valid under any of the given schemas|is not of type"):
        OutputSpec.of({"type": 12})


@dataclasses.dataclass
class _Login:
    user: str
    password: str


@pytest.mark.parametrize("value", ["sk-ant-api03-" + "K" * 40, ["ana", "Kv7-pass-" + "K" * 12],
                                   _Login("ana", "Kv7-pass-" + "K" * 12)], ids=["str", "list", "dataclass"])
def test_a_value_given_as_the_schema_is_refused_by_its_type_without_its_text(value: object) -> None:
    """``%%agent --schema token`` naming the wrong variable: the error quoted the value (pydantic reads
    a string as a forward reference, ``TypeAdapter[sk-ant-…] is not fully defined``), so the key went into
    the cell's error output and the saved notebook (attacker pass 19)."""
    with pytest.raises(TypeError, match="output must be a pydantic model") as caught:
        OutputSpec.of(value)
    assert "KKKKKKKK" not in str(caught.value) and type(value).__name__ in str(caught.value)


def test_type_forms_are_still_schemas() -> None:
    for form in (City, list[City], int | None, Annotated[int, pydantic.Field(ge=0)], Literal["a", "b"], None):
        assert OutputSpec.of(form).schema is not None


async def test_without_output_last_output_is_the_final_text(tmp_path: Path) -> None:
    agent = agent_on(SimulatedAPI([text_reply("plain answer")]), tmp_path)
    assert await agent.ask("hi") == "plain answer" and agent.last_output == "plain answer"


async def test_a_structured_prompt_keeps_the_cached_prefix(tmp_path: Path) -> None:
    """A final_answer tool used to carry the schema, so a structured prompt changed the tools (the
    head of the cached prefix) and its requests wrote the whole conversation again."""
    long_system = "You are a careful assistant. " + " ".join(f"rule{i}." for i in range(1_500))
    replies = [text_reply("first"), final({"name": "Lyon"}), final({"name": "Lyon", "population": 5}),
               text_reply("plain")]
    api = SimulatedAPI(replies)
    engine = make_engine(api, tmp_path, custom_system_prompt=long_system)
    await run(engine, "hello")
    events = [e async for e in engine.submit_message("Largest city after Paris?", output=City)]
    assert isinstance(events[-1], Done) and events[-1].output == {"name": "Lyon", "population": 5}
    await run(engine, "and now in text")
    usages = [r.usage for r in engine.session.records]
    bodies = [r.body for r in messages_requests(api)]
    assert len(usages) == len(bodies) == 4  # hello; the answer, its retry; the plain prompt
    assert usages[0].cache_creation_input_tokens > 1_024  # the prefix was cached by the first request
    assert all(b.get("tools") == bodies[0].get("tools") and b["system"] == bodies[0]["system"] for b in bodies)
    for usage, before, body in zip(usages[1:], bodies[:-1], bodies[1:], strict=True):
        assert usage.cache_read_input_tokens >= usages[0].cache_creation_input_tokens  # read, not rewritten
        # What a request writes is at most what its turn adds (the schema block included).
        added = engine.counter.count_messages(body["messages"][len(before["messages"]):])
        assert 0 < usage.cache_creation_input_tokens <= added
