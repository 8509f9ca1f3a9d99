"""A small MCP server for nbagent's tests (the ``mcp`` SDK's MCPServer, formerly FastMCP).

``python demo_server.py`` serves stdio; ``python demo_server.py http PORT`` serves streamable HTTP
on 127.0.0.1:PORT at ``/mcp``.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def pid() -> int:
    """The server's process id (tests kill it with this)."""
    return os.getpid()


@server.tool()
def write_note(path: str, text: str, mode: str = "w") -> str:
    """Write ``text`` to ``path`` (not read-only: the agent asks before running it)."""
    with open(path, mode, encoding="utf-8") as f:
        f.write(text)
    return f"wrote {len(text)} characters to {path}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def sleep(seconds: float) -> str:
    """Sleep, then say so (tests abort it)."""
    await anyio.sleep(seconds)
    return f"slept {seconds} s"


@server.tool()
def fail(message: str) -> str:
    """Always fails with ``message``."""
    raise ValueError(message)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
