"""A tool the permission tests decide about but never run (a :class:`ToolLike` by its fields)."""

from __future__ import annotations

from dataclasses import dataclass

from nbagent.engine.contracts.json_types import JSONObject
from nbagent.engine.contracts.tool_api import ToolContext, ToolInput, ToolOutput


@dataclass
class FakeTool:
    """What the gate reads of a tool: its name, whether it only reads, whether it edits files."""

    name: str
    read_only: bool = False
    edits_files: bool = False
    description: str = ""

    def schema(self) -> JSONObject:
        return {"type": "object"}

    def validate(self, raw_input: object) -> ToolInput:
        raise AssertionError("a permission decision never validates input")

    async def run(self, tool_input: ToolInput, ctx: ToolContext) -> ToolOutput:
        raise AssertionError("a permission decision never runs the tool")
