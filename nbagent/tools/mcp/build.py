"""The MCP manager for the configured servers, made and started in one call (:func:`build_mcp_manager`).

Apart from :mod:`.config`, which the manager and the connections import: the ``mcp`` SDK loads
here only when there is a server to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ...engine.loop.sanitize import SecretValues
from .config import DEFAULT_WAIT_TIMEOUT, resolve_servers
from .trust import ProjectMcpJson, project_mcp_json

if TYPE_CHECKING:
    from .manager import McpManager


def build_mcp_manager(explicit: Mapping[str, Any] | None, cwd: Path, *, wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
                      read_mcp_json: bool = True, start: bool = True, project: ProjectMcpJson | None = None,
                      **options: Any) -> "McpManager | None":
    """An :class:`~nbagent.tools.mcp.manager.McpManager` for the configured servers, or None when no
    server is configured. Started now, unless ``start`` is False: then with the first request (a
    replay shows a record and runs nothing, not even a server of a received ``.mcp.json``). The
    folder's ``.mcp.json`` is read only where the user trusts it as it is now (:mod:`.trust`);
    ``project``: that check, made already by the caller."""
    # The bytes that were checked are the ones parsed: a file swapped between the check and a
    # second read (a sync, another process) would start servers nobody trusted.
    content = None
    if read_mcp_json:
        content = (project if project is not None else project_mcp_json(cwd)).trusted
    servers = resolve_servers(explicit, cwd, read_mcp_json=content is not None, mcp_json=content,
                              secrets=SecretValues(options.get("secrets", ())))
    if not servers:
        return None
    from ...engine.disk.own_imports import installed_only

    # Imports the mcp SDK: only when there is a server to run. Its chain tries optional modules
    # (uvicorn's ``a2wsgi``, ``watchfiles``): a received folder's ran at the first prompt with a
    # server configured (review of attacker pass 19), so never from the notebook's folder.
    with installed_only():
        from .manager import McpManager

    manager = McpManager(servers, cwd=cwd, wait_timeout=wait_timeout, start_with_first_request=not start, **options)
    if start:
        manager.start()
    return manager


__all__ = ["build_mcp_manager"]
