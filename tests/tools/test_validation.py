"""Input validation is pydantic's: field-named ToolInputErrors, and nothing else, for any input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagent.engine.contracts.tool_api import Tool, ToolInputError
from nbagent.tools import builtin_tools

TOOLS = builtin_tools(shell=True)


def property_names(tool: Tool) -> list[str]:
    props = tool.schema().get("properties", {})
    assert isinstance(props, dict)
    return list(props)


FIELDS = sorted({k for t in TOOLS for k in property_names(t)} | {"extra"})

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
# Mostly objects with the tools' own keys, so validation gets past "expected an object".
tool_like_inputs = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=5)


@pytest.mark.parametrize(
    ("name", "raw", "fields"),
    [
        ("read_file", {}, ["path: Field required"]),
        ("read_file", {"path": "a", "offset": 0}, ["offset: Input should be greater than or equal to 1"]),
        ("read_file", {"path": 3, "limit": "many"}, ["path: Input should be a valid string", "limit:"]),
        ("write_file", {"path": "a"}, ["content: Field required"]),
        ("edit_file", {"path": "a", "old": "", "new": "x"}, ["old: String should have at least 1 character"]),
        ("edit_file", {"path": "a", "old": "x", "new": "y", "replace_all": "perhaps"}, ["replace_all:"]),
        ("list_files", {"pattern": "*", "recursive": True}, ["recursive: Extra inputs are not permitted"]),
        ("shell", {"command": "ls", "timeout_s": -1}, ["timeout_s: Input should be greater than 0"]),
        ("shell", {"command": "ls", "timeout_s": 10_000}, ["timeout_s: Input should be less than or equal to 600"]),
        ("python", {"code": ["print(1)"]}, ["code: Input should be a valid string"]),
    ],
)
def test_errors_name_the_fields(name: str, raw: dict[str, Any], fields: list[str]) -> None:
    tool = next(t for t in TOOLS if t.name == name)
    with pytest.raises(ToolInputError) as err:
        tool.validate(raw)
    msg = str(err.value)
    assert msg.startswith(f"Invalid input for tool {name!r}: ")
    for f in fields:
        assert f in msg


def test_non_objects_are_refused() -> None:
    for tool in TOOLS:
        with pytest.raises(ToolInputError, match="expected a JSON object, got list"):
            tool.validate([1])


def test_valid_inputs_get_defaults() -> None:
    by_name = {t.name: t for t in TOOLS}
    assert by_name["read_file"].validate({"path": "a"}) == {"path": "a", "offset": None, "limit": None}
    assert by_name["list_files"].validate({}) == {"pattern": "**/*", "path": None}
    assert by_name["edit_file"].validate({"path": "a", "old": "x", "new": "y"})["replace_all"] is False


async def test_run_refuses_bad_input_too(tmp_path: Any) -> None:
    from nbagent.engine.contracts.tool_api import ToolContext

    for tool in TOOLS:
        out = await tool.run({"bogus": 1}, ToolContext(cwd=tmp_path))
        assert out.is_error and "Invalid input" in out.content, tool.name


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=json_values | tool_like_inputs)
def test_random_inputs_only_raise_tool_input_error(tool: Any, raw: Any) -> None:
    try:
        validated = tool.validate(raw)
    except ToolInputError as exc:
        assert str(exc).startswith(f"Invalid input for tool {tool.name!r}")
    else:
        assert isinstance(validated, dict)
        assert tool.validate(validated) == validated  # validation is idempotent
