"""The MCP bridge: the tools of MCP servers as one :class:`~nbagent.engine.contracts.tool_api.ToolSource`.

- :mod:`.config`: the ``mcpServers`` JSON (``.mcp.json``, ``Agent(mcp_servers=...)``) as frozen
  records; :mod:`.build`: :func:`build_mcp_manager`; :mod:`.trust`: which ``.mcp.json`` files the
  user trusts to start their servers;
- :mod:`.manager`: :class:`McpManager`, the ``ToolSource`` (``ready()``, ``tools()``) that owns the
  connections on its own event-loop thread;
- :mod:`.connection`: one server's connection task and its tools (:class:`McpTool`);
- :mod:`.schema`: checking a tool's input against the server's ``inputSchema`` (``jsonschema``);
- :mod:`.results`: what a call gives back, as a ``ToolOutput``.

Importing this package does not import the ``mcp`` SDK or ``jsonschema`` (about a second each):
the names from :mod:`.manager`, :mod:`.connection` and :mod:`.schema` load on first use, and
:func:`build_mcp_manager` imports them only when a server is configured.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .build import build_mcp_manager
from .config import (
    DEFAULT_WAIT_TIMEOUT,
    MCP_JSON,
    HttpServer,
    McpConfigError,
    ServerConfig,
    StdioServer,
    load_mcp_json,
    mcp_tool_name,
    parse_server,
    parse_servers,
    resolve_servers,
)
from .trust import (
    TRUST_FILE_ENV,
    ProjectMcpJson,
    is_trusted,
    project_mcp_json,
    trust_mcp_json,
    trusted_mcp_json,
    untrusted_mcp_json,
)

if TYPE_CHECKING:
    from .connection import McpTool, ServerState, ServerStatus
    from .manager import DEFAULT_CONNECT_TIMEOUT, McpClosedError, McpManager
    from .schema import InputCheck, input_check

_LAZY = {
    "McpManager": "manager", "McpClosedError": "manager", "DEFAULT_CONNECT_TIMEOUT": "manager",
    "McpTool": "connection", "ServerStatus": "connection", "ServerState": "connection",
    "InputCheck": "schema", "input_check": "schema",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ...engine.disk.own_imports import installed_only

    with installed_only():  # the mcp SDK's optional modules never from the notebook's folder (see build.py)
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_WAIT_TIMEOUT",
    "MCP_JSON",
    "HttpServer",
    "InputCheck",
    "McpClosedError",
    "McpConfigError",
    "McpManager",
    "McpTool",
    "ProjectMcpJson",
    "ServerConfig",
    "ServerState",
    "ServerStatus",
    "StdioServer",
    "TRUST_FILE_ENV",
    "build_mcp_manager",
    "input_check",
    "is_trusted",
    "load_mcp_json",
    "mcp_tool_name",
    "parse_server",
    "parse_servers",
    "project_mcp_json",
    "resolve_servers",
    "trust_mcp_json",
    "trusted_mcp_json",
    "untrusted_mcp_json",
]
