"""The demo brain answers structured-output requests: it ends (after any tool work) with the prompt's
schema filled deterministically from the numbers and words of the conversation, as JSON text."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import pydantic
import pytest

from nbagent import Agent
from nbagent.engine.contracts.events import Done, TextDelta, ToolUse
from nbagent.engine.loop.structured import StructuredOutputError
from nbagent.providers.simulated import SimulatedAPI
from nbagent.providers.simulated.answer import fill_schema, numbers_in, strings_in_prompt


class City(pydantic.BaseModel):
    name: str
    population: int


class Country(pydantic.BaseModel):
    name: str
    capital: City
    languages: list[str]


class Row(pydantic.BaseModel):
    label: str
    x: float


class Checked(pydantic.BaseModel):
    kind: Literal["fact", "guess"]
    sure: bool
    note: Optional[str] = None


def demo_agent(tmp_path: Path, allow: list[str] | None = None) -> Agent:
    """An Agent on the demo brain; ``allow`` is passed on only when given (else the default holds)."""
    if allow is None:
        return Agent(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path)
    return Agent(provider="simulated", simulated_options={"api": SimulatedAPI()}, cwd=tmp_path, allow=allow)


async def test_the_brain_answers_a_flat_schema_from_the_prompt(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path)
    events = [e async for e in agent.run("Paris has 2100000 people", output=City)]
    done = events[-1]
    assert isinstance(done, Done) and done.reason == "end_turn", done
    assert agent.last_output == City(name="Paris", population=2100000)
    assert [e for e in events if isinstance(e, ToolUse)] == []  # the loop's instruction is not the prompt
    assert "simulated" in "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_the_brain_answers_a_nested_schema(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path)
    country = await agent.ask("'France': its capital 'Paris' has 2,100,000 people; they speak 'French'.", output=Country)
    assert country == Country(name="France", capital=City(name="Paris", population=2100000), languages=["French"])


async def test_the_brain_answers_a_list_of_objects(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path)
    rows = await agent.ask("Two rows: 'a' at 1.5 and 'b' at 2", output=list[Row])
    assert rows == [Row(label="a", x=1.5), Row(label="b", x=2)]
    schema = {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    assert await demo_agent(tmp_path / "json").ask("counts 3, 4 and 5", output=schema) == [{"n": 3}, {"n": 4}, {"n": 5}]


async def test_the_brain_does_its_tool_work_first_and_answers_with_the_result(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path, allow=["python"])
    schema = {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
    events = [e async for e in agent.run("what is 17 * 23", output=schema)]
    assert [e.name for e in events if isinstance(e, ToolUse)] == ["python"]
    assert agent.last_output == {"value": 391}  # tool results come before the prompt's numbers


async def test_a_schema_the_brain_cannot_satisfy_fails_after_the_retry(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 10}}, "required": ["n"]}
    with pytest.raises(StructuredOutputError, match="after 2 attempts"):
        await demo_agent(tmp_path).ask("n is 3", output=schema)


def test_enums_booleans_optionals_and_running_out_of_facts() -> None:
    assert fill_schema(Checked.model_json_schema(), "nothing here") == {
        "kind": "fact", "sure": False, "note": "simulated note"}
    assert fill_schema({"type": "object", "properties": {"n": {"type": "number"}}}, "none") == {"n": 0}


def test_facts_are_read_in_order_and_sentence_openers_are_not_names() -> None:
    assert numbers_in("-3 and 2,100,000 or 3.14, x1 on 2024-01-05.") == [-3, 2100000, 3.14, 2024]
    assert strings_in_prompt("What is the capital of France? Then New York") == ["France", "New York"]
    assert strings_in_prompt("Two rows: 'a' and \"Big Ben\" for New York") == ["a", "Big Ben"]
