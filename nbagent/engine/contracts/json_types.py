"""The shape of any JSON value, for data whose schema nbagent does not own.

Use these where a value really is arbitrary JSON (a tool's input schema, an MCP result, a saved
record read back before validation). Unlike `Any`, they make the reader narrow a value
(`isinstance(v, dict)`) before using it. Where the API or nbagent defines the shape, use that
shape's TypedDict instead (`message_types.py`). pydantic cannot build a schema from this
implicitly recursive alias (it recurses without end): a field pydantic validates keeps `object`
(as `Done.output` does) and is narrowed where it is read.
"""

from __future__ import annotations

from typing import TypeAlias, Union

JSONScalar: TypeAlias = Union[str, int, float, bool, None]
JSONValue: TypeAlias = Union[JSONScalar, list["JSONValue"], dict[str, "JSONValue"]]
JSONObject: TypeAlias = dict[str, JSONValue]
JSONArray: TypeAlias = list[JSONValue]

__all__ = ["JSONArray", "JSONObject", "JSONScalar", "JSONValue"]
