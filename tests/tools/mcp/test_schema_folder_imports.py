"""The MCP SDK (imported with the first server to run) and ``jsonschema`` (an MCP tool's input check,
on the MCP thread) never take their optional modules from the notebook's folder (review of attacker pass 19)."""

from __future__ import annotations

from pathlib import Path

from tests.engine.loop.test_structured_folder_imports import CODE, run_in_received_folder


def test_an_mcp_input_check_imports_nothing_from_the_notebooks_folder(tmp_path: Path) -> None:
    done, marker = run_in_received_folder(tmp_path, CODE["an MCP tool's input schema"])
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-2000:]
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"


FIRST_MCP_PROMPT = """
from nbagent.notebook import warmup
warmup.import_all()  # what the kernel imports before the first prompt (never from the folder)
from pathlib import Path
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.tools.mcp.test_agent import demo_entry, make_agent
api = SimulatedAPI([tool_reply('mcp__demo__add', {'a': 1, 'b': 1}), text_reply('done')])
agent = make_agent(api, Path.cwd(), mcp_servers={'demo': demo_entry()}, allow=['mcp__demo__add'])
print(agent.run_sync('add').events[-1].reason)
"""


def test_the_first_prompt_with_an_mcp_server_imports_nothing_of_the_sdk_from_the_notebooks_folder(tmp_path: Path) -> None:
    done, marker = run_in_received_folder(tmp_path, FIRST_MCP_PROMPT, planted=("a2wsgi", "watchfiles"))
    assert done.returncode == 0 and done.stdout.strip() == "end_turn", done.stderr[-2000:]
    assert not marker.exists(), f"the notebook's folder ran: {marker.read_text()}"
