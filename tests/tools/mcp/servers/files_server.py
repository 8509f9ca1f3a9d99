"""An MCP server reading files, as the reference filesystem server's ``read_text_file`` does (stdio)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("files")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_text_file(path: str) -> str:
    """A file's text."""
    with open(path, encoding="utf-8") as f:
        return f.read()


if __name__ == "__main__":
    server.run()
