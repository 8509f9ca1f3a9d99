"""The tools' schemas a client's model reads: every argument says what it is (``timeout_s``,
``code``, ``cell_id`` and ``action`` had no description: what happens at the limit, or which
fields an action needs, were the client's guess)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from IPython.core.interactiveshell import InteractiveShell

from nbagent.notebook.serve.app import ToolCalls, build_server


async def test_every_argument_of_every_tool_is_described() -> None:
    calls = cast(ToolCalls, SimpleNamespace(ops=None))  # only the tools' signatures are read
    server = build_server(calls, InteractiveShell.instance())
    tools = await server.list_tools()
    undescribed = [f"{tool.name}.{name}" for tool in tools
                   for name, prop in cast(dict[str, Any], tool.input_schema.get("properties", {})).items()
                   if not prop.get("description")]
    assert undescribed == []
    run_code = next(tool for tool in tools if tool.name == "run_code")
    assert "interrupted" in run_code.input_schema["properties"]["timeout_s"]["description"]
