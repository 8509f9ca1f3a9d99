"""A tool's preview reaches the permission question: ``PermissionAsked.preview`` holds what the call
changes (secrets redacted, bounded), only when the user is asked; a failing preview still asks; the
event round-trips through the saved event log."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pydantic

from nbagent.engine.contracts.abort import AbortGuard
from nbagent.engine.contracts.events import CallPreview, PermissionAsked, ToolResult, event_to_dict, events_from_json
from nbagent.engine.contracts.messages import ToolUseBlockParam
from nbagent.engine.contracts.permissions import Allow, PermissionGate
from nbagent.engine.contracts.tool_api import Tool, ToolContext, ToolOutput
from nbagent.engine.loop.sanitize import Sanitizer
from nbagent.engine.loop.tool_runner import ToolAnswer, run_tool_call

SECRET = "sk-ant-api03-previewsecret0123456789"


class Replace(Tool):
    """Replaces a pretend document's text; previews the change (or fails to, when told)."""

    name = "replace"
    description = "Replace the text."
    read_only = False

    class Input(pydantic.BaseModel):
        text: str

    def __init__(self, current: str, fail: bool = False) -> None:
        self.current, self.fail = current, fail
        self.previewed: list[str] = []

    async def preview(self, tool_input: dict[str, Any], ctx: ToolContext) -> CallPreview:
        self.previewed.append(ctx.tool_use_id)
        if self.fail:
            raise RuntimeError("the document went away")
        return CallPreview(f"replace the text ({SECRET})", self.current, tool_input["text"])

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.current = tool_input["text"]
        return ToolOutput("replaced")


async def _call(tool: Replace, gate: PermissionGate, limit: int = 2_000_000) -> list[Any]:
    guard = AbortGuard(asyncio.Event())
    guard.start()
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_p", "name": tool.name, "input": {"text": "new"}}
    try:
        return [e async for e in run_tool_call(
            use, tools={tool.name: tool}, gate=gate, guard=guard,
            make_context=lambda uid: ToolContext(cwd=Path("."), tool_use_id=uid),
            turn=1, output_limit=30_000, sanitizer=Sanitizer(secrets=(SECRET,)), capture_limit=limit)
            if not isinstance(e, ToolAnswer)]
    finally:
        guard.stop()


def _asking_gate() -> PermissionGate:
    async def allow(name: str, tool_input: dict, request: Any) -> Allow:
        return Allow()
    return PermissionGate(allow)


async def test_the_question_carries_the_preview_with_secrets_redacted() -> None:
    tool = Replace(f"old text with {SECRET}")
    events = await _call(tool, _asking_gate())
    (asked,) = [e for e in events if isinstance(e, PermissionAsked)]
    assert asked.preview == CallPreview("replace the text ([redacted])", "old text with [redacted]", "new")
    assert tool.previewed == ["toolu_p"] and tool.current == "new"
    # The event log keeps it: a replayed card shows the same diff.
    assert events_from_json([event_to_dict(asked)]) == [asked]


async def test_a_long_preview_is_bounded_like_a_result() -> None:
    events = await _call(Replace("x" * 5_000), _asking_gate(), limit=1_000)
    (asked,) = [e for e in events if isinstance(e, PermissionAsked)]
    assert asked.preview is not None and len(asked.preview.before or "") <= 1_000
    assert "characters omitted" in (asked.preview.before or "")


async def test_a_failing_preview_still_asks_with_the_input_alone() -> None:
    tool = Replace("old", fail=True)
    events = await _call(tool, _asking_gate())
    (asked,) = [e for e in events if isinstance(e, PermissionAsked)]
    assert asked.preview is None and asked.input == {"text": "new"}
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["replaced"]


async def test_no_preview_is_made_when_no_one_is_asked() -> None:
    tool = Replace("old")
    gate = _asking_gate()
    gate.allow_always("replace")
    events = await _call(tool, gate)
    assert tool.previewed == [] and not any(isinstance(e, PermissionAsked) for e in events)


async def test_a_tool_input_kept_unparsed_for_its_depth_says_so_not_that_output_was_cut() -> None:
    # The provider keeps an input nested past the parser's bound as text (``_unparsed_input``), as it
    # keeps one cut by max_tokens: the model is told which it was.
    guard = AbortGuard(asyncio.Event())
    guard.start()
    tool = Replace("old")
    deep = "[" * 5_000 + "]" * 5_000
    use: ToolUseBlockParam = {"type": "tool_use", "id": "toolu_d", "name": tool.name, "input": {"_unparsed_input": deep}}
    try:
        events = [e async for e in run_tool_call(
            use, tools={tool.name: tool}, gate=_asking_gate(), guard=guard,
            make_context=lambda uid: ToolContext(cwd=Path("."), tool_use_id=uid), turn=1, output_limit=30_000)]
    finally:
        guard.stop()

    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.is_error and "nested deeper than" in result.content and "max_tokens" not in result.content
    assert tool.current == "old"
