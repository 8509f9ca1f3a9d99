"""MCP inputs are checked with jsonschema against the server's schema; a schema nbagent cannot use
lets inputs through unchecked, with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.contracts.tool_api import ToolInputError
from nbagent.tools.mcp.schema import MAX_ERRORS, MAX_PART, InputCheck, input_check

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
    },
    "required": ["text"],
    "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                       "additionalProperties": False}},
}


def checked(schema: Any) -> InputCheck:
    check = input_check(schema)
    assert check.validator is not None, check.unchecked
    return check


def check(raw: Any, schema: Any = SCHEMA) -> dict[str, Any]:
    return checked(schema).validate("mcp__x__demo", raw)


def error(raw: Any, schema: Any = SCHEMA) -> str:
    with pytest.raises(ToolInputError) as info:
        check(raw, schema)
    message = str(info.value)
    assert message.startswith("Invalid input for tool 'mcp__x__demo': ")
    return message


def test_valid_input_passes_unchanged_without_filled_in_defaults() -> None:
    raw = {"text": "hi", "ratio": 2, "tags": None, "mode": "fast", "from": "x", "model_config": True,
           "item": {"n": 3}, "meta": {"a": 1}, "extra": [1]}
    assert check(raw) == raw
    assert check({"text": "hi"}) == {"text": "hi"}  # no "times": 1, no nulls for omitted fields
    assert isinstance(check({"text": "x", "ratio": 2})["ratio"], int)  # a number stays as sent


@pytest.mark.parametrize("raw, where", [
    ({}, "(input): 'text' is a required property"),
    ({"text": 3}, "text: 3 is not of type 'string'"),
    ({"text": ""}, "text: '' should be non-empty"),
    ({"text": "x", "times": True}, "times: True is not of type 'integer'"),
    ({"text": "x", "times": "2"}, "times: '2' is not of type 'integer'"),
    ({"text": "x", "times": 0}, "times: 0 is less than the minimum of 1"),
    ({"text": "x", "mode": "medium"}, "mode: 'medium' is not one of ['fast', 'slow']"),
    ({"text": "x", "tags": ["a", 1]}, "tags.1: 1 is not of type 'string'"),
    ({"text": "x", "item": {"n": 1, "m": 2}}, "item: Additional properties are not allowed ('m' was unexpected)"),
    ({"text": "x", "item": {}}, "item: 'n' is a required property"),
    ({"text": "x", "meta": {"a": "b"}}, "meta.a: 'b' is not of type 'integer'"),
    ({"text": "x", "times": None}, "times: None is not of type 'integer'"),
])
def test_invalid_input_is_a_tool_input_error_naming_the_field(raw: dict[str, Any], where: str) -> None:
    assert where in error(raw)


def test_every_problem_is_listed_in_path_order() -> None:
    message = error({"text": 3, "times": "x", "mode": "no"})
    assert message == ("Invalid input for tool 'mcp__x__demo': mode: 'no' is not one of ['fast', 'slow']; "
                       "text: 3 is not of type 'string'; times: 'x' is not of type 'integer'")


def test_many_problems_and_long_values_are_cut() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    message = error({f"k{i:02}": "v" for i in range(MAX_ERRORS + 3)}, schema)
    assert message.count("is not of type 'integer'") == MAX_ERRORS and message.endswith("; and 3 more")
    message = error({"k": "v" * 10_000}, schema)
    assert len(message) < MAX_PART + 100 and message.endswith("is not of type 'integer'") and " … " in message


def test_a_non_object_input_is_refused() -> None:
    with pytest.raises(ToolInputError, match="expected a JSON object"):
        check(["text"])
    with pytest.raises(ToolInputError, match="expected a JSON object"):
        InputCheck(None, "no schema").validate("t", "text")


def test_allof_needs_every_part() -> None:
    schema = {"type": "object", "properties": {"q": {"allOf": [{"type": "string"}, {"minLength": 2}]}}}
    assert check({"q": "ab"}, schema) == {"q": "ab"}
    assert "q: 'a' is too short" in error({"q": "a"}, schema)
    assert "q: 5 is not of type 'string'" in error({"q": 5}, schema)


def test_not_refuses_what_it_names() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "not": {"enum": ["root", "admin"]}}}}
    assert check({"name": "ann"}, schema) == {"name": "ann"}
    assert "name: 'root' should not be valid under" in error({"name": "root"}, schema)


def test_if_then_else_applies_the_branch_that_matches() -> None:
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": ["file", "url"]}, "path": {"type": "string"}, "url": {"type": "string"}},
        "required": ["kind"],
        "if": {"properties": {"kind": {"const": "file"}}},
        "then": {"required": ["path"]},
        "else": {"required": ["url"]},
    }
    assert check({"kind": "file", "path": "a.txt"}, schema) == {"kind": "file", "path": "a.txt"}
    assert check({"kind": "url", "url": "http://x"}, schema) == {"kind": "url", "url": "http://x"}
    assert "(input): 'path' is a required property" in error({"kind": "file", "url": "http://x"}, schema)
    assert "(input): 'url' is a required property" in error({"kind": "url"}, schema)


def test_any_of_and_one_of_say_what_each_alternative_wanted() -> None:
    schema = {"type": "object", "properties": {
        "a": {"allOf": [{"$ref": "#/$defs/Kind"}], "description": "pydantic writes refs like this"},
        "b": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    }, "$defs": {"Kind": {"enum": ["x", "y"]}}}
    assert check({"a": "x", "b": 2}, schema) == {"a": "x", "b": 2}
    assert "a: 'z' is not one of ['x', 'y']" in error({"a": "z"}, schema)
    message = error({"b": 1.5}, schema)
    assert ("b: 1.5 is not valid under any of the given schemas (b: 1.5 is not of type 'integer'; "
            "or b: 1.5 is not of type 'string')") in message


def test_recursive_refs_and_the_schemas_own_draft_are_understood() -> None:
    schema = {"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
              "$defs": {"Node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                                   "next": {"$ref": "#/$defs/Node"}}}}}
    assert "node.next.next.v: 'q' is not of type 'integer'" in error({"node": {"next": {"next": {"v": "q"}}}}, schema)
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "exclusiveMaximum": 3}}}
    assert type(checked(draft7).validator).__name__ == "Draft7Validator"
    assert "n: 3 is greater than or equal to the maximum of 3" in error({"n": 3}, draft7)
    unknown = {"$schema": "https://example.invalid/my-dialect", "type": "object"}
    assert type(checked(unknown).validator).__name__ == "Draft202012Validator"


@pytest.mark.parametrize("schema, reason", [
    ({"type": "object", "properties": {"a": {"type": "strng"}}}, "invalid schema: properties.a.type"),
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}, "is not a 'regex'"),
    ({"type": "object", "required": "a"}, "invalid schema: required: 'a' is not of type 'array'"),
    ({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/schema"}}}, "points outside"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}, "points nowhere"),
    ("not a schema", "not a JSON Schema"),
])
def test_a_schema_nbagent_cannot_use_lets_inputs_through(schema: Any, reason: str) -> None:
    check = input_check(schema)
    assert check.validator is None and reason in (check.unchecked or "")
    assert check.validate("t", {"a": object(), "b": 1})["b"] == 1  # anything goes to the server
    with pytest.raises(ToolInputError):
        check.validate("t", "not an object")


def test_ref_like_data_is_not_taken_for_a_reference() -> None:
    schema = {"type": "object", "properties": {
        "enum": {"type": "string"},  # a property may be called like a keyword
        "doc": {"const": {"$ref": "https://example.invalid/x"}},
        "opt": {"type": "object", "default": {"$ref": "nowhere"}},
    }}
    assert check({"enum": "e"}, schema) == {"enum": "e"}


def test_boolean_schemas() -> None:
    assert check({"a": 1}, True) == {"a": 1}
    assert "(input): False schema does not allow" in error({"a": 1}, False)


def test_a_catastrophic_pattern_is_cut_off_as_invalid_input() -> None:
    check = input_check({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|a)+$"}}})
    with pytest.raises(ToolInputError, match="could not be checked against the pattern"):
        check.validate("t", {"s": "a" * 64 + "!"})  # 2**64 steps: without a limit, the check never ends
    assert check.validate("t", {"s": "aaa"}) == {"s": "aaa"}
