"""MCP input schemas become pydantic models; unsupported ones fall back to "any object"."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.tool_api import ToolInputError
from nbagent.tools.mcp.schema import model_for_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "times": {"type": "integer", "default": 1, "minimum": 1},
        "ratio": {"type": "number"},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "mode": {"enum": ["fast", "slow"]},
        "from": {"type": ["string", "null"]},
        "model_config": {"type": "boolean"},
        "item": {"$ref": "#/$defs/Item"},
        "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        "note": {"type": "string", "nullable": True},
    },
    "required": ["text"],
    "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                       "additionalProperties": False}},
}


def check(raw: Any) -> dict[str, Any]:
    converted = model_for_schema(SCHEMA, "demo")
    assert converted.model is not None, converted.unsupported
    return converted.validate("mcp__x__demo", raw)


def test_valid_input_passes_unchanged_without_filled_in_defaults() -> None:
    raw = {"text": "hi", "ratio": 2, "tags": None, "mode": "fast", "from": "x", "model_config": True,
           "item": {"n": 3}, "meta": {"a": 1}, "note": None, "extra": [1]}
    assert check(raw) == raw
    assert check({"text": "hi"}) == {"text": "hi"}  # no "times": 1, no nulls for omitted fields
    assert isinstance(check({"text": "x", "ratio": 2})["ratio"], int)  # a number stays as sent


@pytest.mark.parametrize("raw, where", [
    ({}, "text: Field required"),
    ({"text": 3}, "text: Input should be a valid string"),
    ({"text": ""}, "text: String should have at least 1 character"),
    ({"text": "x", "times": True}, "times: Input should be a valid integer"),
    ({"text": "x", "times": "2"}, "times: Input should be a valid integer"),
    ({"text": "x", "times": 0}, "times: Input should be greater than or equal to 1"),
    ({"text": "x", "mode": "medium"}, "mode: Input should be 'fast' or 'slow'"),
    ({"text": "x", "tags": ["a", 1]}, "tags"),
    ({"text": "x", "item": {"n": 1, "m": 2}}, "item.m: Extra inputs are not permitted"),
    ({"text": "x", "item": {}}, "item.n: Field required"),
    ({"text": "x", "meta": {"a": "b"}}, "meta.a"),
    ({"text": "x", "times": None}, "times"),
])
def test_invalid_input_is_a_tool_input_error_naming_the_field(raw: dict[str, Any], where: str) -> None:
    with pytest.raises(ToolInputError) as info:
        check(raw)
    assert "mcp__x__demo" in str(info.value) and where in str(info.value)


def test_a_non_object_input_is_refused() -> None:
    with pytest.raises(ToolInputError, match="expected a JSON object"):
        check(["text"])


@pytest.mark.parametrize("prop, feature", [
    ({"allOf": [{"type": "string"}, {"minLength": 2}]}, "allOf"),
    ({"not": {"type": "string"}}, "not"),
    ({"$ref": "#/$defs/Node"}, "recursive"),
    ({"$ref": "https://example.invalid/schema"}, "non-local"),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, "prefixItems"),
    ({"enum": [1.5, 2.5]}, "enum"),
])
def test_unsupported_features_fall_back_to_any_object(prop: dict[str, Any], feature: str) -> None:
    schema = {"type": "object", "properties": {"a": prop},
              "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}}
    converted = model_for_schema(schema, "t")
    assert converted.model is None and feature in (converted.unsupported or "")
    assert converted.validate("t", {"a": object(), "b": 1})["b"] == 1  # anything goes to the server
    with pytest.raises(ToolInputError):
        converted.validate("t", "not an object")


def test_single_allof_and_oneof_are_understood() -> None:
    schema = {"type": "object", "properties": {
        "a": {"allOf": [{"$ref": "#/$defs/Kind"}], "description": "pydantic writes refs like this"},
        "b": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    }, "$defs": {"Kind": {"enum": ["x", "y"]}}}
    converted = model_for_schema(schema, "t")
    assert converted.model is not None
    assert converted.validate("t", {"a": "x", "b": 2}) == {"a": "x", "b": 2}
    with pytest.raises(ToolInputError, match="a: Input should be 'x' or 'y'"):
        converted.validate("t", {"a": "z"})
