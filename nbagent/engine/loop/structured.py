"""Structured output: the final answer as validated data, through a forced ``final_answer`` tool call.

``OutputSpec.of(schema)`` takes a pydantic model (or any type pydantic can validate, e.g.
``list[Item]``) or a JSON schema dict. For one run the loop offers a ``final_answer`` tool whose
input schema is that schema (wrapped in ``{"result": ...}`` when it is not an object, as tool
inputs must be objects), and tells the model to end by calling it. The answer is validated; an
invalid one is sent back with the validation error once, and a second failure ends the run with
:class:`StructuredOutputError`. A model that ends its turn without calling the tool is asked once
to call it (that counts as the retry).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pydantic

from ..contracts.errors import NbAgentError
from ..contracts.tool_api import ToolContext, ToolInputError, ToolOutput

FINAL_ANSWER_TOOL = "final_answer"
MAX_OUTPUT_ATTEMPTS = 2
INSTRUCTION = (f"When you have the answer, end by calling the {FINAL_ANSWER_TOOL} tool exactly once with it "
               "as structured data matching its input schema; text alone is not an answer.")
NUDGE = (f"You ended without calling {FINAL_ANSWER_TOOL}. Call {FINAL_ANSWER_TOOL} now with the answer "
         "as data matching its input schema.")
_WRAP_KEY = "result"


class StructuredOutputError(NbAgentError):
    """The model's final answer did not match the schema (after the one retry), or never came."""


@dataclass(frozen=True)
class OutputSpec:
    """What the final answer must look like: a JSON schema, and the pydantic type to build (if any)."""

    schema: dict[str, Any]
    adapter: pydantic.TypeAdapter[Any] | None = None

    @classmethod
    def of(cls, schema: Any) -> "OutputSpec":
        """From a pydantic model / type, a JSON schema dict, or an :class:`OutputSpec`."""
        if isinstance(schema, OutputSpec):
            return schema
        if isinstance(schema, dict):
            _validator_for(schema).check_schema(schema)
            return cls(schema=copy.deepcopy(schema))
        try:
            adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(schema)
            return cls(schema=adapter.json_schema(), adapter=adapter)
        except (pydantic.PydanticSchemaGenerationError, TypeError) as exc:
            raise TypeError(f"output must be a pydantic model, a type pydantic can validate, or a JSON "
                            f"schema dict; got {schema!r} ({exc})") from None

    @property
    def wrapped(self) -> bool:
        return self.schema.get("type") != "object"

    def tool_schema(self) -> dict[str, Any]:
        """The ``input_schema`` of the ``final_answer`` tool."""
        schema = {k: v for k, v in self.schema.items() if k != "title"}
        if not self.wrapped:
            return schema
        defs = schema.pop("$defs", None)
        wrapper: dict[str, Any] = {"type": "object", "properties": {_WRAP_KEY: schema}, "required": [_WRAP_KEY]}
        return {**wrapper, "$defs": defs} if defs else wrapper

    def check(self, tool_input: Any) -> tuple[Any, Any]:
        """``(value, data)``: the validated answer (a pydantic object for a pydantic type) and its
        JSON-ready form; raises :class:`StructuredOutputError` naming every problem."""
        if not isinstance(tool_input, dict):
            raise StructuredOutputError(f"expected a JSON object, got {type(tool_input).__name__}")
        data = tool_input.get(_WRAP_KEY) if self.wrapped else tool_input
        if self.adapter is not None:
            try:
                value = self.adapter.validate_python(data)
            except pydantic.ValidationError as exc:
                problems = [f"{'.'.join(str(x) for x in e['loc']) or '(answer)'}: {e['msg']}" for e in exc.errors()]
                raise StructuredOutputError("; ".join(problems)) from None
            return value, self.adapter.dump_python(value, mode="json")
        validator = _validator_for(self.schema)(self.schema)
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            raise StructuredOutputError("; ".join(
                f"{'.'.join(str(p) for p in e.absolute_path) or '(answer)'}: {e.message}" for e in errors))
        return data, data

    def parse(self, data: Any) -> Any:
        """The value for JSON-ready ``data`` (e.g. ``Done.output``): a pydantic object or the data."""
        return self.adapter.validate_python(data) if self.adapter is not None else data


@dataclass
class StructuredRun:
    """One run's structured answer: attempts so far, and the result once there is one."""

    spec: OutputSpec
    attempts: int = 0
    value: Any = None
    data: Any = None
    error: str | None = None
    answered: bool = False
    _tool: "FinalAnswerTool | None" = None

    @property
    def finished(self) -> bool:
        """Whether the run should end now (a valid answer, or no attempts left)."""
        return self.answered or self.error is not None

    def fail_attempt(self, message: str) -> str:
        """Count a failed attempt; returns what the model is told (or records the final error)."""
        self.attempts += 1
        if self.attempts >= MAX_OUTPUT_ATTEMPTS:
            self.error = f"the final answer did not match the schema after {self.attempts} attempts: {message}"
        return message

    @property
    def tool(self) -> "FinalAnswerTool":
        """The run's ``final_answer`` tool (one object per run, so its definition is built once)."""
        if self._tool is None:
            self._tool = FinalAnswerTool(self)
        return self._tool


class FinalAnswerTool:
    """The ``final_answer`` tool offered for a structured run (read-only: it never asks)."""

    name = FINAL_ANSWER_TOOL
    description = "Give the final answer as structured data. Call it once, at the end."
    read_only = True

    def __init__(self, structured: StructuredRun) -> None:
        self.structured = structured

    def schema(self) -> dict[str, Any]:
        return self.structured.spec.tool_schema()

    def validate(self, raw_input: Any) -> dict[str, Any]:
        """Check the answer against the schema; an invalid one counts as a failed attempt."""
        run = self.structured
        try:
            run.value, run.data = run.spec.check(raw_input)
        except StructuredOutputError as exc:
            told = run.fail_attempt(str(exc))
            raise ToolInputError(f"The final answer does not match the schema: {told}. "
                                 f"Call {FINAL_ANSWER_TOOL} again with corrected data.") from None
        run.answered = True
        return dict(raw_input)

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content="Final answer recorded.")


def _validator_for(schema: dict[str, Any]) -> Any:
    # Imported on first use: jsonschema's import costs about a second (its format checkers),
    # which %load_ext and the kernel's start must not pay for a feature most prompts never use.
    import jsonschema

    return jsonschema.validators.validator_for(schema)
