"""builtin_tools / tool_by_name, the definitions sent to the model, and the import rule."""

from __future__ import annotations

import ast
from pathlib import Path

import nbagent.engine
from nbagent.engine.contracts.tool_api import Tool, ToolLike
from nbagent.tools import Python, Shell, builtin_tools, tool_by_name


def test_builtin_tools() -> None:
    names = [t.name for t in builtin_tools()]
    assert names == ["python", "read_file", "write_file", "edit_file", "list_files"]
    assert [t.name for t in builtin_tools(shell=True)][-1] == "shell"
    for t in builtin_tools(shell=True):
        assert isinstance(t, Tool) and isinstance(t, ToolLike)
        d = t.definition()
        schema = d["input_schema"]
        assert d["name"] == t.name and d["description"] and isinstance(schema, dict) and schema["type"] == "object"
        assert schema["additionalProperties"] is False
    read_only = {t.name for t in builtin_tools(shell=True) if t.read_only}
    assert read_only == {"read_file", "list_files"}


def test_fresh_instances() -> None:
    a, b = builtin_tools(), builtin_tools()
    assert a[0] is not b[0]  # a python tool's fallback namespace is per instance


def test_tool_by_name() -> None:
    assert isinstance(tool_by_name("shell"), Shell)
    tools = builtin_tools()
    assert tool_by_name("python", tools) is tools[0] and isinstance(tools[0], Python)
    assert tool_by_name("shell", tools) is None
    assert tool_by_name("nope") is None


def test_engine_never_imports_tools_or_front_ends() -> None:
    forbidden = ("nbagent.tools", "IPython", "ipywidgets", "pandas")
    for path in Path(nbagent.engine.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
                if node.level and node.module and node.module.startswith("tools"):
                    names = ["nbagent.tools"]
            else:
                continue
            for name in names:
                assert not name.startswith(forbidden), f"{path.name} imports {name}"
