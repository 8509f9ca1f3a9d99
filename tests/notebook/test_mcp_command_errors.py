"""``%agent mcp`` on a ``.mcp.json`` with a typo: it says what is wrong (not "not a readable
mcpServers object"), and ``trust`` refuses the file (trusted, it failed every ``%%agent`` cell of
every new session with "is not valid JSON")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nbagent.tools.mcp.trust import is_trusted

from .test_magics_inprocess import fails, ip, run  # noqa: F401  (fixture)

BROKEN = '{"mcpServers": {"x": {"command": "a-command", "args": []}'  # the closing brace is missing


def test_a_mcp_json_with_a_typo_is_named_as_such_and_never_trusted(ip: Any, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / ".mcp.json").write_text(BROKEN)
    shown = run(ip, "%agent mcp")
    assert "not trusted" in shown and "is not valid JSON: Expecting ',' delimiter at line 1, column" in shown
    assert "not a readable mcpServers object" not in shown
    refused = fails(ip, "%agent mcp trust")
    assert refused.startswith("not trusted: ") and "is not valid JSON" in refused and refused.endswith(
        "Fix the file, then %agent mcp trust.")
    assert not is_trusted(tmp_path)


def test_a_valid_mcp_json_is_shown_server_by_server_and_trusted(ip: Any, tmp_path: Path) -> None:  # noqa: F811
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "a-command", "args": ["-v"]}}}))
    assert '"x": {"command": "a-command", "args": ["-v"]}' in run(ip, "%agent mcp")
    assert "trusted" in run(ip, "%agent mcp trust") and is_trusted(tmp_path)
