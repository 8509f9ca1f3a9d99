"""Structured output: the final answer as validated data, written by the model as JSON text.

``OutputSpec.of(schema)`` takes a pydantic model (or any type pydantic can validate, e.g.
``list[Item]``) or a JSON schema dict. A structured run sends the wanted schema in its prompt's
message (:meth:`OutputSpec.instruction`) and takes the text the model ends its turn with as the
answer: one JSON value, the whole text or one fenced code block. The answer is validated here,
strictly; an invalid one is sent back with the problems once (:data:`RETRY`), and a second failure
ends the run with :class:`StructuredOutputError`.

Why not a ``final_answer`` tool whose input schema is the wanted one (as before): tools lead the
prompt cache's prefix (tools → system → messages), so a tool offered for one run changed the
prefix and the next request wrote the whole cached conversation again (15-16k tokens). A
``final_answer`` tool offered by every request would keep the prefix but cost every request of
every session its definition; the schema in the prompt costs only the runs that ask for it.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Protocol, Sequence, cast

import pydantic

from ..contracts.errors import NbAgentError
from ..contracts.json_types import JSONObject, JSONValue
from ..disk.json_depth import NestedTooDeepError, loads_within

if TYPE_CHECKING:
    from typing_extensions import TypeForm

MAX_OUTPUT_ATTEMPTS = 2
# The schema follows this text in the prompt's message (see OutputSpec.instruction / schema_in_instruction).
INSTRUCTION = ("This prompt asks for a structured answer. When you have it, end your turn with the answer "
               "alone: one JSON value matching the schema below, with no other text (one ```json block is "
               "fine). Schema:")
RETRY = "Your final answer was not accepted: "
_RETRY_TAIL = (". Reply with the corrected answer alone: one JSON value matching the schema given with the "
               "prompt, with no other text.")
# A fenced code block, ```json or plain ```: its body is the answer when the text has exactly one.
_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL | re.IGNORECASE)


class _SchemaError(Protocol):
    """What is used of a ``jsonschema`` validation error."""

    @property
    def absolute_path(self) -> Sequence[str | int]: ...

    @property
    def message(self) -> str: ...


class _SchemaValidator(Protocol):
    """What is used of a ``jsonschema`` validator."""

    def iter_errors(self, instance: JSONValue) -> Iterable[_SchemaError]: ...


class _ValidatorClass(Protocol):
    """What is used of a ``jsonschema`` validator class (jsonschema ships no type information)."""

    def __call__(self, schema: JSONObject) -> _SchemaValidator: ...

    def check_schema(self, schema: JSONObject) -> None: ...


class StructuredOutputError(NbAgentError):
    """The model's final answer did not match the schema (after the one retry), or never came."""


def _is_type_form(schema: object) -> bool:
    """A class, ``None`` or a typing construct (``list[City]``, ``int | None``, ``Annotated[…]``): what
    pydantic validates, and written as code; any other object is a value, data."""
    return schema is None or isinstance(schema, type) or type(schema).__module__ in ("typing", "typing_extensions", "types")


@dataclass(frozen=True)
class OutputSpec:
    """What the final answer must look like: a JSON schema, and the pydantic type to build (if any)."""

    schema: JSONObject
    adapter: pydantic.TypeAdapter[object] | None = None

    @classmethod
    def of(cls, schema: object) -> "OutputSpec":
        """From a pydantic model / type, a JSON schema dict, or an :class:`OutputSpec`."""
        if isinstance(schema, OutputSpec):
            return schema
        if isinstance(schema, dict):
            _validator_for(schema).check_schema(schema)
            return cls(schema=copy.deepcopy(schema))
        if not _is_type_form(schema):
            # A value, not a type (``%%agent --schema token`` naming the wrong variable): named by its type
            # only. Its repr, and pydantic's message quoting it (a string is read as a forward reference),
            # put the variable's key or password into the cell's error output and the saved notebook.
            raise TypeError(f"output must be a pydantic model, a type pydantic can validate, or a JSON schema "
                            f"dict; got a {type(schema).__name__} value (not shown: it is data, not a type)")
        try:
            # Any type form goes in: pydantic refuses what it cannot validate (caught below).
            adapter: pydantic.TypeAdapter[object] = pydantic.TypeAdapter(cast("TypeForm[object]", schema))
            return cls(schema=adapter.json_schema(), adapter=adapter)
        except (pydantic.PydanticSchemaGenerationError, TypeError) as exc:
            raise TypeError(f"output must be a pydantic model, a type pydantic can validate, or a JSON "
                            f"schema dict; got {schema!r} ({exc})") from None

    def instruction(self) -> str:
        """The text block a structured prompt carries: what to do, then the schema as JSON."""
        return f"{INSTRUCTION}\n{json.dumps(self.schema, ensure_ascii=False)}"

    def answer_of(self, text: str) -> tuple[object, JSONValue]:
        """``(value, data)`` of the text a model ended its turn with: the validated answer (a pydantic
        object for a pydantic type) and its JSON-ready form; raises :class:`StructuredOutputError`
        naming every problem."""
        return self.validate(json_in(text))

    def validate(self, data: JSONValue) -> tuple[object, JSONValue]:
        """``(value, data)`` for a candidate answer (parsed JSON); raises :class:`StructuredOutputError`."""
        if self.adapter is not None:
            try:
                value = self.adapter.validate_python(data)
            except pydantic.ValidationError as exc:
                problems = [f"{'.'.join(str(x) for x in e['loc']) or '(answer)'}: {e['msg']}" for e in exc.errors()]
                raise StructuredOutputError("; ".join(problems)) from None
            dumped: JSONValue = self.adapter.dump_python(value, mode="json")
            return value, dumped
        validator = _validator_for(self.schema)(self.schema)
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            raise StructuredOutputError("; ".join(
                f"{'.'.join(str(p) for p in e.absolute_path) or '(answer)'}: {e.message}" for e in errors))
        return data, data

    def parse(self, data: object) -> object:
        """The value for JSON-ready ``data`` (e.g. ``Done.output``): a pydantic object or the data."""
        return self.adapter.validate_python(data) if self.adapter is not None else data


def json_in(text: str) -> JSONValue:
    """The one JSON value ``text`` is (or its one fenced code block holds); raises
    :class:`StructuredOutputError` saying what is wrong and what is wanted."""
    blocks = _FENCE.findall(text)
    if len(blocks) > 1:
        raise StructuredOutputError(f"the answer has {len(blocks)} code blocks; give exactly one JSON value")
    candidate = (blocks[0] if blocks else text).strip()
    if not candidate:
        raise StructuredOutputError("the answer is empty; give one JSON value")
    try:
        value: JSONValue = loads_within(candidate)
    except NestedTooDeepError:
        raise StructuredOutputError("the answer's JSON is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise StructuredOutputError(f"the answer is not one JSON value ({exc.msg} at line {exc.lineno} "
                                    f"column {exc.colno})") from None
    return value


def retry_message(problem: str) -> str:
    """What a structured run tells the model whose answer was not accepted (it starts with :data:`RETRY`)."""
    return f"{RETRY}{problem}{_RETRY_TAIL}"


def schema_in_instruction(text: str) -> JSONObject | None:
    """The schema of a prompt's :meth:`OutputSpec.instruction` block, or None for any other text."""
    if not text.startswith(INSTRUCTION + "\n"):
        return None
    try:
        schema: JSONValue = json.loads(text[len(INSTRUCTION) + 1:])
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


@dataclass
class StructuredRun:
    """One run's structured answer: attempts so far, and the result once there is one."""

    spec: OutputSpec
    attempts: int = 0
    value: object = None
    data: JSONValue = None
    error: str | None = None
    answered: bool = False

    @property
    def finished(self) -> bool:
        """Whether the run should end now (a valid answer, or no attempts left)."""
        return self.answered or self.error is not None

    def take(self, text: str) -> str | None:
        """Take ``text`` (the model's final text) as the answer: None when it is valid, else what the
        model is told (:func:`retry_message`), or None with :attr:`error` set when no attempt is left."""
        try:
            self.value, self.data = self.spec.answer_of(text)
        except StructuredOutputError as exc:
            self.attempts += 1
            if self.attempts >= MAX_OUTPUT_ATTEMPTS:
                self.error = f"the final answer did not match the schema after {self.attempts} attempts: {exc}"
                return None
            return retry_message(str(exc))
        self.answered = True
        return None


def _validator_for(schema: JSONObject) -> _ValidatorClass:
    # Imported on first use: jsonschema's import costs about a second (its format checkers),
    # which %load_ext and the kernel's start must not pay for a feature most prompts never use.
    # Its format checkers try ``rfc3987`` (and lark ``interegular``, ``atomicwrites``): where they are
    # not installed, a received folder's ``rfc3987.py`` ran at a dict schema's first prompt there
    # (review of attacker pass 19), so never from the notebook's folder (see engine.disk.own_imports).
    from ..disk.own_imports import installed_only

    with installed_only():
        import jsonschema

    validator: _ValidatorClass = jsonschema.validators.validator_for(schema)
    return validator
