"""A read-only tool's read of a file that holds credentials asks whatever argument names the file: an
MCP server's tool marked ``readOnlyHint`` takes ``paths`` (the filesystem server's
``read_multiple_files``) or ``file_path``, and only ``path`` was checked (attacker pass 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest

from nbagent.engine.contracts.tool_api import Tool, ToolContext, ToolOutput
from nbagent.providers.simulated import SimulatedAPI, text_reply, tool_reply
from tests.engine.contracts.test_credentials import SECRET, home, plant  # noqa: F401 - the fixture
from tests.engine.contracts.test_protected import User
from tests.engine.loop.test_query_support import make_engine, messages_requests, run


class ReadMany(Tool):
    """What ``mcp__fs__read_multiple_files`` does: reads each file it is given, read-only."""

    name = "read_multiple_files"
    description = "Read several files."
    read_only = True

    class Input(pydantic.BaseModel):
        paths: list[str] = []
        file_path: str | None = None

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        names = [*tool_input.get("paths", []), *([tool_input["file_path"]] if tool_input.get("file_path") else [])]
        return ToolOutput("\n".join((ctx.cwd / p).read_text() for p in names))


@pytest.mark.parametrize("arguments", [{"paths": ["notes.txt", ".ssh/id_ed25519"]}, {"file_path": ".aws/credentials"}])
async def test_a_credential_file_named_by_another_argument_asks(home: Path, arguments: dict[str, Any]) -> None:  # noqa: F811
    plant(home, ".ssh/id_ed25519")
    plant(home, ".aws/credentials")
    (home / "notes.txt").write_text("notes")
    api = SimulatedAPI([tool_reply("read_multiple_files", arguments), text_reply("ok")])
    user = User()
    await run(make_engine(api, home, tools=[ReadMany()], can_use_tool=user), "read them")
    assert len(user.requests) == 1 and "holds" in user.requests[0].reason_asked
    assert SECRET not in json.dumps([r.body for r in messages_requests(api)])
