"""MCP tools as ToolLike objects, and their results as ToolOutput (no server needed)."""

from __future__ import annotations

import gc
import sys
from typing import Any

import mcp.types as mcp_types

from nbagent.engine.contracts.tool_api import ToolLike, ToolSource
from nbagent.tools.mcp.config import StdioServer
from nbagent.tools.mcp.manager import McpManager
from nbagent.tools.mcp.results import describe_error, to_tool_output

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup

PNG = "iVBORw0KGgo="


def result(*content: Any, structured: Any = None, is_error: bool = False) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=list(content), structured_content=structured, is_error=is_error)


def test_text_is_joined_and_errors_stay_errors() -> None:
    out = to_tool_output(result(mcp_types.TextContent(type="text", text="a"),
                                mcp_types.TextContent(type="text", text="b"), is_error=True))
    assert out.content == "a\nb" and out.is_error


def test_images_are_kept_as_image_blocks_other_media_described() -> None:
    out = to_tool_output(result(mcp_types.TextContent(type="text", text="plot:"),
                                mcp_types.ImageContent(type="image", data=PNG, mime_type="image/png"),
                                mcp_types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav")))
    assert isinstance(out.content, list)
    assert out.content[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    audio = out.content[2]["text"]
    assert isinstance(audio, str) and audio.startswith("[audio (audio/wav)")


def test_structured_only_results_become_json_and_empty_ones_say_so() -> None:
    assert to_tool_output(result(structured={"n": 1})).content == '{"n": 1}'
    assert to_tool_output(result()).content == "(no output)"


def test_long_text_is_left_whole_for_the_loop_to_cut_once() -> None:
    out = to_tool_output(result(mcp_types.TextContent(type="text", text="x" * 5000)))
    assert out.content == "x" * 5000


def test_describe_error_unwraps_exception_groups() -> None:
    group = ExceptionGroup("unhandled errors in a TaskGroup", [ConnectionError("refused")])
    assert describe_error(group) == "ConnectionError: refused"
    assert describe_error(FileNotFoundError(2, "No such file", "srv")) == "command not found: srv"


def manager_with(tool: mcp_types.Tool) -> tuple[McpManager, Any]:
    manager = McpManager([StdioServer(name="files", command="unused")])
    conn = manager._connections[0]  # a connection that is "connected" without a server
    from nbagent.tools.mcp.connection import McpTool

    conn.tools = (McpTool(conn, tool),)
    conn.state = "connected"
    return manager, conn.tools[0]


async def test_mcp_tools_are_tool_like_and_read_only_only_when_annotated() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    _, plain = manager_with(mcp_types.Tool(name="read", description="Read a file.", input_schema=schema))
    _, marked = manager_with(mcp_types.Tool(name="read", input_schema=schema,
                                            annotations=mcp_types.ToolAnnotations(read_only_hint=True)))
    assert isinstance(plain, ToolLike)
    assert plain.name == "mcp__files__read" and plain.description == "Read a file."
    assert plain.read_only is False and marked.read_only is True
    assert plain.schema() == schema and plain.validate({"path": "a"}) == {"path": "a"}


async def test_a_schema_nbagent_cannot_check_is_reported_once() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "(unclosed"}}}
    manager, tool = manager_with(mcp_types.Tool(name="search", input_schema=schema))
    assert tool.validate({"q": 5}) == {"q": 5}  # passed through: the server checks it
    first, second = await manager._wait(), await manager._wait()
    assert len(first) == 1 and second == []
    assert "mcp__files__search (invalid schema: properties.q.pattern" in first[0] and "unchecked" in first[0]
    assert "mcp__files__search (invalid schema" in (manager.statuses()[0].unchecked or "")
    assert [t.name for t in manager.tools()] == ["mcp__files__search"]


async def test_the_manager_is_a_tool_source_and_closes_with_its_owner() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    manager, tool = manager_with(mcp_types.Tool(name="read", input_schema=schema))
    assert isinstance(manager, ToolSource) and not hasattr(manager, "attach")
    assert await manager.ready() == []  # not started: nothing to wait for
    assert list(manager.tools()) == [tool]

    class Owner:
        pass

    owner = Owner()
    manager.close_with(owner)
    assert not manager._closed
    del owner
    gc.collect()
    assert manager._closed
