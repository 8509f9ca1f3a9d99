"""``%agent mcp [trust]``: the working folder's ``.mcp.json``, as written, and whether you trust it.

A project's servers start only once you trust its ``.mcp.json`` (:mod:`nbagent.tools.mcp.trust`):
this command shows what each server would run or connect to, so that you read it before you say so.
"""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

if TYPE_CHECKING:
    from .magics_api import MagicsApi

SHOWN_FIELDS = ("type", "command", "args", "cwd", "url", "disabled")
"""What each server is shown with: ``env`` and ``headers`` by their names only (their values are
``${VAR}`` references at best, secrets at worst)."""


def _unreadable(path: Path) -> str | None:
    """What is wrong with the file as JSON (not valid JSON, where; not an ``mcpServers`` object), or None."""
    from ..tools.mcp.config import McpConfigError, read_mcp_json

    try:
        read_mcp_json(path)
    except McpConfigError as exc:
        return str(exc)
    return None


def _entries(path: Path) -> list[str]:
    """One line per server, as the file writes it (``${VAR}`` not expanded), escaped to ASCII so
    that no character the page would hide (a right-to-left mark, a form feed) goes unseen."""
    from ..tools.mcp.config import read_mcp_json

    problem = _unreadable(path)
    if problem is not None:
        return [f"  (nothing would start, and every %%agent cell would fail once trusted: {problem})"]
    servers = read_mcp_json(path)
    lines = []
    for name, entry in servers.items():
        shown = {k: entry[k] for k in SHOWN_FIELDS if k in entry} if isinstance(entry, dict) else entry
        for hidden in ("env", "headers"):
            if isinstance(entry, dict) and isinstance(entry.get(hidden), dict):
                shown[hidden] = sorted(entry[hidden])  # type: ignore[index]
        lines.append(f"  {json.dumps(name)}: {json.dumps(shown)}")
    return lines or ["  (no servers)"]


@magic_arguments(name="agent mcp")
@argument("action", nargs="?", choices=("trust",), metavar="trust",
          help="Trust this folder's .mcp.json as it is now: new sessions start its servers.")
def mcp(magics: "MagicsApi", args: Namespace) -> None:
    """Show the servers of the working folder's .mcp.json and whether you trust it (a received
    folder's servers never start until you do); ``trust`` trusts the file as it is now."""
    from ..tools.mcp.config import MCP_JSON
    from ..tools.mcp.trust import is_trusted, trust_mcp_json

    path = Path.cwd() / MCP_JSON
    if not path.is_file():
        print(f"nbagent: no {MCP_JSON} in {Path.cwd()}.")
        return
    if args.action == "trust":
        problem = _unreadable(path)
        if problem is not None:  # trusted, it would fail every %%agent cell of every new session
            raise UsageError(f"not trusted: {problem}. Fix the file, then %agent mcp trust.")
        trust_mcp_json(path)
        running = magics.current is not None
        print(f"nbagent: trusted {path} as it is now: new sessions start its servers"
              + ("; %agent reset starts one now." if running else "."))
        return
    state = "trusted (as it is now): new sessions start its servers" if is_trusted(path) else \
        "not trusted: its servers do not start (read them, then %agent mcp trust)"
    print("\n".join([f"nbagent: {path}: {state}", *_entries(path)]))


__all__ = ["mcp"]
