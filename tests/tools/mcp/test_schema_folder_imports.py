"""An MCP tool's input check imports ``jsonschema`` (on the MCP thread, unmarked) never taking its
optional modules from the notebook's folder (review of attacker pass 19)."""

from __future__ import annotations

from pathlib import Path

from tests.engine.loop.test_structured_folder_imports import CODE, run_in_received_folder


def test_an_mcp_input_check_imports_nothing_from_the_notebooks_folder(tmp_path: Path) -> None:
    done, marker = run_in_received_folder(tmp_path, CODE["an MCP tool's input schema"])
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-2000:]
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"
